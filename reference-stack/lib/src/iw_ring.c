/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A growable FIFO of fixed-size items: the engine's queues. */
#include <string.h>

#include "iw_ring.h"

void *iw_ring_at(const iw_ring *r, uint32_t i) {
    return r->items + (size_t)((r->head + i) % r->cap) * r->item_size;
}

void *iw_ring_push(iw_ring *r, const iw_mem *mem) {
    if (r->count == r->cap) {
        uint32_t ncap = r->cap ? r->cap * 2 : 16;
        uint8_t *n = mem->malloc((size_t)ncap * r->item_size, mem->user);
        if (!n)
            return NULL;
        for (uint32_t i = 0; i < r->count; i++)
            memcpy(n + (size_t)i * r->item_size, iw_ring_at(r, i), r->item_size);
        mem->free(r->items, mem->user);
        r->items = n;
        r->cap = ncap;
        r->head = 0;
    }
    void *p = r->items + (size_t)((r->head + r->count) % r->cap) * r->item_size;
    r->count++;
    memset(p, 0, r->item_size);
    return p;
}

void iw_ring_pop(iw_ring *r) {
    if (!r->count)
        return;
    r->head = (r->head + 1) % r->cap;
    r->count--;
}

void iw_ring_free(iw_ring *r, const iw_mem *mem) {
    mem->free(r->items, mem->user);
    r->items = NULL;
    r->cap = r->count = r->head = 0;
}
