/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Caller-supplied allocator (nghttp2's nghttp2_mem). Every allocation in
 * libiwarp goes through one, so tests can inject failures. */
#ifndef IWARP_MEM_H
#define IWARP_MEM_H

#include <iwarp/types.h>

IW_BEGIN_DECLS

typedef struct iw_mem {
    void *user;
    void *(*malloc)(size_t size, void *user);
    void (*free)(void *ptr, void *user);
    void *(*calloc)(size_t n, size_t size, void *user);
    void *(*realloc)(void *ptr, size_t size, void *user);
} iw_mem;

/* The C library's allocator. */
const iw_mem *iw_mem_default(void);

IW_END_DECLS
#endif
