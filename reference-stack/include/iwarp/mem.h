/* Caller-supplied allocator (nghttp2's nghttp2_mem). Every allocation in
 * libiwarp goes through one, so tests can inject failures. */
#ifndef IWARP_MEM_H
#define IWARP_MEM_H

#include <iwarp/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct iw_mem {
    void *user;
    void *(*malloc)(size_t size, void *user);
    void (*free)(void *ptr, void *user);
    void *(*calloc)(size_t n, size_t size, void *user);
    void *(*realloc)(void *ptr, size_t size, void *user);
} iw_mem;

/* The C library's allocator. */
const iw_mem *iw_mem_default(void);

#ifdef __cplusplus
}
#endif
#endif
