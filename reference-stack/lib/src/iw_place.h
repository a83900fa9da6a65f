/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Data-sink validation (RFC 5041 §7.1, RFC 5040 §7.2, RFC 7306 §8.2): pure
 * functions over the STag table. Each returns the place to write, or the
 * triple the RFC names, raised at the check that failed. */
#ifndef IW_PLACE_H
#define IW_PLACE_H

#include "iw_rnic.h"

typedef struct iw_place {
    bool ok;
    uint16_t term;   /* !ok: the triple */
    const char *rfc; /* !ok: the rule */
    uint8_t *dst;    /* ok: first octet to place (NULL for zero length) */
    iw_mr *mr;
} iw_place;

/* Tagged DDP segment (RDMA Write, Read Response) of len octets at stag/to.
 * `need` is the access right placement requires. Zero-length segments are
 * not checked (RFC 5041 §5.2, §7.1). */
iw_place iw_place_tagged(const iw_rnic *rnic, uint32_t pd, uint32_t stag, uint64_t to, uint64_t len,
                         unsigned need);

/* Data Source of a non-zero-length RDMA Read Request (RFC 5040 §7.2 4a-e). */
iw_place iw_place_read_src(const iw_rnic *rnic, uint32_t pd, uint32_t stag, uint64_t to,
                           uint32_t size);

/* A Read Response segment of len octets at stag/to against the sink its
 * Read Request named (RFC 5040 §5.2.2: it lands only there; §5.5 rule 20:
 * the oldest outstanding Read). The checks in RFC 5041 §7.1's order, as
 * iw_place_tagged makes them: the STag, then TO wrap before the bounds.
 * Pure: the engine and iw_shadow both judge with it. len 0 is not checked
 * (RFC 5041 §5.2). */
iw_place iw_place_read_resp(uint32_t stag, uint64_t to, uint64_t len, uint32_t sink_stag,
                            uint64_t sink_to, uint32_t size);

/* Local source of a Send or Write named by STag: a valid region of the
 * stream's PD with the octets in bounds (RFC 5042 §5); reading local memory
 * needs no access right. !ok carries the RDMAP triple of what failed. */
iw_place iw_place_local_src(const iw_rnic *rnic, uint32_t pd, uint32_t stag, uint64_t to,
                            uint32_t len);

/* Target of an Atomic Request (RFC 7306 §5.1, §8.2): 8 octets, remote
 * atomic access, 64-bit aligned Tagged Offset. */
iw_place iw_place_atomic(const iw_rnic *rnic, uint32_t pd, uint32_t stag, uint64_t to);

/* Invalidate STag of a Send with Invalidate (RFC 5040 §5.3, §7.2 4-5). */
iw_place iw_place_invalidate(const iw_rnic *rnic, uint32_t pd, uint32_t stag);

/* Untagged QN 0 message: MSN against the posted window [base, base+posted)
 * (RFC 5041 §7.1 untagged (2), (5)); MO and length against the buffer (3),
 * (4). Returns ok with dst = buf + mo. */
iw_place iw_place_untagged_msn(uint32_t msn, uint32_t base, uint32_t posted);
iw_place iw_place_untagged_mo(uint8_t *buf, uint32_t buflen, uint32_t mo, uint32_t len);

#endif
