/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libiwarp umbrella header: the codecs (MPA, DDP, RDMAP, CRC32c, errors),
 * the sans-I/O engine (engine.h, mem.h) and the capture analysis
 * (shadow.h). Link with libiwarp (pkg-config iwarp, or CMake iwarp::iwarp).
 *
 * The verbs-like socket binding, <iwarp/verbs.h>, is a second library on
 * top (pkg-config iwarp-verbs, CMake iwarp::verbs) and is not included. */
#ifndef IWARP_IWARP_H
#define IWARP_IWARP_H

#include <iwarp/version.h>

#include <iwarp/types.h>
#include <iwarp/err.h>
#include <iwarp/mem.h>
#include <iwarp/crc32c.h>
#include <iwarp/mpa.h>
#include <iwarp/ddp.h>
#include <iwarp/rdmap.h>
#include <iwarp/engine.h>
#include <iwarp/shadow.h>
#include <iwarp/mpa_sync.h>
#include <iwarp/sctp.h>
#include <iwarp/sctp_conn.h>

IW_BEGIN_DECLS

/* The version of the library linked at run time ("MAJOR.MINOR.PATCH"),
 * which may differ from IW_VERSION_STR, the headers compiled against. */
const char *iw_version(void);

IW_END_DECLS
#endif
