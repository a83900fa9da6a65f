/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The default allocator: the C library's. */
#include <iwarp/mem.h>

#include <stdlib.h>

static void *mem_malloc(size_t size, void *user) {
    (void)user;
    return malloc(size);
}
static void mem_free(void *ptr, void *user) {
    (void)user;
    free(ptr);
}
static void *mem_calloc(size_t n, size_t size, void *user) {
    (void)user;
    return calloc(n, size);
}
static void *mem_realloc(void *ptr, size_t size, void *user) {
    (void)user;
    return realloc(ptr, size);
}

static const iw_mem mem_default = {NULL, mem_malloc, mem_free, mem_calloc, mem_realloc};

const iw_mem *iw_mem_default(void) { return &mem_default; }
