/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RNIC internals shared by the STag table (iw_rnic.c), the placement
 * checks (iw_place.c) and connections. */
#ifndef IW_RNIC_H
#define IW_RNIC_H

#include <iwarp/engine.h>

typedef enum { MR_FREE = 0, MR_VALID, MR_INVALID } iw_mr_state;

typedef struct iw_mr {
    iw_mr_state state;
    uint8_t key; /* low 8 bits of the STag; bumped on every reuse */
    uint32_t pd;
    uint8_t *addr;
    uint64_t len;
    uint64_t base_to;
    unsigned access;
    uint64_t gen; /* registration generation: see iw_mr_ref */
} iw_mr;

typedef struct iw_pd_ent {
    bool used;
    uint32_t refs; /* regions + connections */
} iw_pd_ent;

struct iw_rnic {
    iw_mem mem;
    iw_mr *mrs; /* index = STag >> 8 */
    uint32_t n_mrs;
    iw_pd_ent *pds;
    uint32_t n_pds;
    uint64_t gen; /* last generation handed out */
};

#define IW_STAG_INDEX(stag) ((stag) >> 8)
#define IW_STAG_KEY(stag) ((uint8_t)(stag))

/* The region an STag names, or NULL if the index is free or the key stale.
 * Invalidated regions are returned (state MR_INVALID) so callers can tell
 * "invalid" apart from "unknown" where the RFC does. */
iw_mr *iw_rnic_mr(const iw_rnic *rnic, uint32_t stag);

/* Queued work that will touch registered memory later (a Read Response's
 * source, a Send or Write named by a local STag, the rest of a tagged
 * segment being placed) holds the region's index and the generation it had
 * when the work was checked. Deregistration and invalidation start a new
 * generation, so after either returns the reference no longer resolves and
 * the engine never reads or writes that memory again (RFC 5042 §6.2.2,
 * §6.3.3). Index 0 names no region. */
typedef struct iw_mr_ref {
    uint32_t index;
    uint64_t gen;
} iw_mr_ref;

iw_mr_ref iw_rnic_mr_ref(const iw_rnic *rnic, const iw_mr *mr);
/* True while the region is still registered and valid with that generation
 * (always true for index 0). */
bool iw_rnic_ref_live(const iw_rnic *rnic, iw_mr_ref ref);
/* Invalidate (local or remote, RFC 5040 §5.3): the region stays registered. */
void iw_rnic_mr_invalidate(iw_rnic *rnic, iw_mr *mr);

int iw_rnic_pd_ref(iw_rnic *rnic, uint32_t pd);
void iw_rnic_pd_unref(iw_rnic *rnic, uint32_t pd);

#endif
