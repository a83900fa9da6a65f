/* libiwarp umbrella header. */
#ifndef IWARP_IWARP_H
#define IWARP_IWARP_H

#define IW_VERSION_MAJOR 0
#define IW_VERSION_MINOR 1
#define IW_VERSION_PATCH 0
#define IW_VERSION_STR "0.1.0"

#include <iwarp/types.h>
#include <iwarp/err.h>
#include <iwarp/crc32c.h>
#include <iwarp/mpa.h>
#include <iwarp/ddp.h>
#include <iwarp/rdmap.h>

#endif
