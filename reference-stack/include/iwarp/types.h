/* Basic types shared by every libiwarp module. */
#ifndef IWARP_TYPES_H
#define IWARP_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Signed size: bytes consumed/written (>= 0) or a negative IW_ERR_* value.
 * Defined once, up front, so no API ever needs a "...2" twin for ssize_t. */
typedef ptrdiff_t iw_ssize;

/* One piece of a gather/scatter list (layout of struct iovec). */
typedef struct iw_iovec {
    void *base;
    size_t len;
} iw_iovec;

/* Caller-supplied time in nanoseconds; the library never reads a clock. */
typedef uint64_t iw_tstamp;

#endif
