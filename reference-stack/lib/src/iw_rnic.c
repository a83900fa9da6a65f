/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Protection domains and the STag table (RFC 5040 §2.3: STag; RFC 5042 §5). */
#include <string.h>

#include "iw_rnic.h"

/* Index 0 is never handed out: STag 0 is what zero-length RTR Writes and
 * Read Requests carry (RFC 6581 §9), and must never name a region. */
#define MR_FIRST_INDEX 1u
#define MR_MAX_INDEX 0xFFFFFFu

int iw_rnic_new(iw_rnic **out, const iw_mem *mem) {
    if (!out)
        return IW_ERR_INVALID_ARG;
    if (!mem)
        mem = iw_mem_default();
    iw_rnic *r = mem->calloc(1, sizeof *r, mem->user);
    if (!r)
        return IW_ERR_NOMEM;
    r->mem = *mem;
    *out = r;
    return 0;
}

void iw_rnic_del(iw_rnic *r) {
    if (!r)
        return;
    r->mem.free(r->mrs, r->mem.user);
    r->mem.free(r->pds, r->mem.user);
    r->mem.free(r, r->mem.user);
}

int iw_pd_alloc(iw_rnic *r, uint32_t *pd) {
    uint32_t i;
    for (i = 1; i < r->n_pds; i++)
        if (!r->pds[i].used)
            break;
    if (i >= r->n_pds) {
        uint32_t n = r->n_pds ? r->n_pds * 2 : 8;
        iw_pd_ent *p = r->mem.realloc(r->pds, n * sizeof *p, r->mem.user);
        if (!p)
            return IW_ERR_NOMEM;
        memset(p + r->n_pds, 0, (n - r->n_pds) * sizeof *p);
        i = r->n_pds ? r->n_pds : 1; /* PD 0 is never valid */
        r->pds = p;
        r->n_pds = n;
    }
    r->pds[i].used = true;
    r->pds[i].refs = 0;
    *pd = i;
    return 0;
}

static bool rnic_pd_ok(const iw_rnic *r, uint32_t pd) {
    return pd != 0 && pd < r->n_pds && r->pds[pd].used;
}

int iw_pd_free(iw_rnic *r, uint32_t pd) {
    if (!rnic_pd_ok(r, pd) || r->pds[pd].refs)
        return IW_ERR_INVALID_ARG;
    r->pds[pd].used = false;
    return 0;
}

int iw_rnic_pd_ref(iw_rnic *r, uint32_t pd) {
    if (!rnic_pd_ok(r, pd))
        return IW_ERR_INVALID_ARG;
    r->pds[pd].refs++;
    return 0;
}

void iw_rnic_pd_unref(iw_rnic *r, uint32_t pd) {
    if (rnic_pd_ok(r, pd) && r->pds[pd].refs)
        r->pds[pd].refs--;
}

iw_mr *iw_rnic_mr(const iw_rnic *r, uint32_t stag) {
    uint32_t idx = IW_STAG_INDEX(stag);
    if (idx < MR_FIRST_INDEX || idx >= r->n_mrs)
        return NULL;
    iw_mr *mr = &r->mrs[idx];
    if (mr->state == MR_FREE || mr->key != IW_STAG_KEY(stag))
        return NULL;
    return mr;
}

int iw_mr_reg(iw_rnic *r, uint32_t pd, void *addr, uint64_t len, uint64_t base_to, unsigned access,
              uint32_t *stag) {
    const unsigned known = IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_READ | IW_ACCESS_REMOTE_WRITE |
                           IW_ACCESS_REMOTE_ATOMIC | IW_MR_NO_INVALIDATE;
    /* A region may not wrap the Tagged Offset space (RFC 5041 §7.1 (5)). */
    if (!rnic_pd_ok(r, pd) || (access & ~known) || !stag || (len && !addr) ||
        base_to + len < base_to)
        return IW_ERR_INVALID_ARG;
    uint32_t i;
    for (i = MR_FIRST_INDEX; i < r->n_mrs; i++)
        if (r->mrs[i].state == MR_FREE)
            break;
    if (i >= r->n_mrs) {
        if (r->n_mrs > MR_MAX_INDEX)
            return IW_ERR_NOMEM;
        uint32_t n = r->n_mrs ? r->n_mrs * 2 : 16;
        if (n > MR_MAX_INDEX + 1)
            n = MR_MAX_INDEX + 1;
        iw_mr *m = r->mem.realloc(r->mrs, (size_t)n * sizeof *m, r->mem.user);
        if (!m)
            return IW_ERR_NOMEM;
        memset(m + r->n_mrs, 0, (size_t)(n - r->n_mrs) * sizeof *m);
        i = r->n_mrs ? r->n_mrs : MR_FIRST_INDEX;
        r->mrs = m;
        r->n_mrs = n;
    }
    iw_mr *mr = &r->mrs[i];
    uint8_t key = (uint8_t)(mr->key + 1); /* a fresh key per reuse */
    *mr = (iw_mr){MR_VALID, key, pd, addr, len, base_to, access, ++r->gen};
    r->pds[pd].refs++;
    *stag = i << 8 | key;
    return 0;
}

int iw_mr_dereg(iw_rnic *r, uint32_t stag) {
    iw_mr *mr = iw_rnic_mr(r, stag);
    if (!mr)
        return IW_ERR_INVALID_ARG;
    iw_rnic_pd_unref(r, mr->pd);
    mr->state = MR_FREE; /* the key stays, so the next reuse differs */
    mr->gen = ++r->gen;  /* queued work can no longer reach the memory */
    return 0;
}

void iw_rnic_mr_invalidate(iw_rnic *r, iw_mr *mr) {
    mr->state = MR_INVALID;
    mr->gen = ++r->gen;
}

iw_mr_ref iw_rnic_mr_ref(const iw_rnic *r, const iw_mr *mr) {
    return (iw_mr_ref){(uint32_t)(mr - r->mrs), mr->gen};
}

bool iw_rnic_ref_live(const iw_rnic *r, iw_mr_ref ref) {
    if (ref.index == 0)
        return true;
    if (ref.index >= r->n_mrs)
        return false;
    const iw_mr *mr = &r->mrs[ref.index];
    return mr->state == MR_VALID && mr->gen == ref.gen;
}

int iw_mr_invalidate(iw_rnic *r, uint32_t stag) {
    iw_mr *mr = iw_rnic_mr(r, stag);
    if (!mr)
        return IW_ERR_INVALID_ARG;
    if (mr->access & IW_MR_NO_INVALIDATE)
        return IW_ERR_PROTO;
    iw_rnic_mr_invalidate(r, mr);
    return 0;
}

int iw_mr_query(const iw_rnic *r, uint32_t stag, iw_mr_info *out) {
    const iw_mr *mr = iw_rnic_mr(r, stag);
    if (!mr)
        return IW_ERR_INVALID_ARG;
    *out = (iw_mr_info){
        stag, mr->pd, mr->addr, mr->len, mr->base_to, mr->access, mr->state == MR_VALID};
    return 0;
}
