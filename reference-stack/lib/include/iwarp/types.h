/* SPDX-License-Identifier: GPL-2.0-or-later */
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

/* Around every public header's declarations: C linkage, and default
 * visibility. The libraries are built with hidden visibility, so the shared
 * objects export exactly what the public headers declare and nothing of
 * their internals. */
#ifdef __cplusplus
#define IW_EXTERN_C_BEGIN_ extern "C" {
#define IW_EXTERN_C_END_ }
#else
#define IW_EXTERN_C_BEGIN_
#define IW_EXTERN_C_END_
#endif
#if defined(__GNUC__) || defined(__clang__)
#define IW_BEGIN_DECLS IW_EXTERN_C_BEGIN_ _Pragma("GCC visibility push(default)")
#define IW_END_DECLS _Pragma("GCC visibility pop") IW_EXTERN_C_END_
#else
#define IW_BEGIN_DECLS IW_EXTERN_C_BEGIN_
#define IW_END_DECLS IW_EXTERN_C_END_
#endif

#endif
