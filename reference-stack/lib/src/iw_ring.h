/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A growable FIFO of fixed-size items: the engine's queues (iw_ring.c). */
#ifndef IW_RING_H
#define IW_RING_H

#include <iwarp/mem.h>

typedef struct iw_ring {
    uint8_t *items;
    uint32_t item_size, cap, head, count;
} iw_ring;

void *iw_ring_at(const iw_ring *r, uint32_t i);    /* i-th from the head */
void *iw_ring_push(iw_ring *r, const iw_mem *mem); /* zeroed; NULL: no memory */
void iw_ring_pop(iw_ring *r);
void iw_ring_free(iw_ring *r, const iw_mem *mem);

#endif
