/* SPDX-License-Identifier: GPL-2.0-or-later */
/* DDP headers and RDMAP messages, RFC 5041 §4, RFC 5040 §4, RFC 7306 §4-6
 * (iw_rdmap_decode, iw_rdmap_encode).
 *
 * Input: one DDP segment (an MPA ULPDU).
 * Invariants:
 *  - a rejected segment gets a Terminate triple from the RFC 6580 registry;
 *  - an accepted one re-encodes to its own bytes. The decoder keeps every
 *    header bit, reserved ones included, so exact equality holds except in
 *    two places, which are asserted precisely instead:
 *     * Terminate: octets after the fields its M/D/R bits announce are
 *       tolerated but not kept (RFC 5040 §4.8). The re-encoding is a prefix
 *       of the input, and the rest is zero unless TERM_TRAILING was noted;
 *     * a control message whose header is split over segments (MO != 0 or
 *       L = 0) is kept as payload (CONTROL_SEGMENTED) and has_hdr is false,
 *       but iw_rdmap_encode always writes the opcode's header from m->u:
 *       the output is DDP header + that (zeroed) header + the input's
 *       payload. */
#include <iwarp/rdmap.h>

#include "fuzz.h"

/* Length of the opcode's own header for fixed-size control messages. */
static size_t fixed_hdr_len(unsigned opcode) {
    switch (opcode) {
    case IW_OP_READ_REQ:
        return IW_RDMAP_READ_REQ_LEN;
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
        return IW_RDMAP_IMM_LEN;
    case IW_OP_ATOMIC_REQ:
        return IW_RDMAP_ATOMIC_REQ_LEN;
    case IW_OP_ATOMIC_RESP:
        return IW_RDMAP_ATOMIC_RESP_LEN;
    default:
        return 0;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    iw_rdmap_msg m, m2;
    iw_verdict v, v2;
    iw_ssize r = iw_rdmap_decode(&m, data, size, &v);
    FUZZ_CHECK(m.seg_len == size);
    FUZZ_CHECK(iw_rdmap_opcode_str(m.opcode) != NULL);
    if (r < 0) {
        FUZZ_CHECK(r == IW_ERR_PROTO && v.kind == IW_VERDICT_TERM && v.rfc != NULL);
        FUZZ_CHECK(iw_term_is_registered(v.term));
        return 0;
    }
    FUZZ_CHECK((size_t)r == size && v.kind == IW_VERDICT_OK);
    size_t hl = iw_ddp_hdr_len(data[0]);
    size_t oh = fixed_hdr_len(m.opcode);
    bool segmented = oh && !m.has_hdr;
    FUZZ_CHECK(segmented == ((m.notes & IW_NOTE(CONTROL_SEGMENTED)) != 0));
    if (m.opcode != IW_OP_TERMINATE && !oh)
        FUZZ_CHECK(m.payload_len == size - hl && (m.payload_len == 0 || m.payload == data + hl));

    /* Room for the segmented case, which grows by the opcode header. */
    size_t cap = size + IW_RDMAP_ATOMIC_REQ_LEN;
    uint8_t *out = malloc(cap);
    FUZZ_CHECK(out != NULL);
    iw_ssize w = iw_rdmap_encode(out, cap, &m);
    FUZZ_CHECK(w > 0 && (size_t)w <= cap);
    if (m.opcode == IW_OP_TERMINATE) {
        FUZZ_CHECK(m.has_hdr && m.payload_len == 0);
        FUZZ_CHECK((size_t)w <= size && memcmp(out, data, (size_t)w) == 0);
        bool trailing = false;
        for (size_t i = (size_t)w; i < size; i++)
            trailing |= data[i] != 0;
        FUZZ_CHECK(trailing == ((m.notes & IW_NOTE(TERM_TRAILING)) != 0));
        /* Without the trailing octets: the same message, the note gone. */
        FUZZ_CHECK(iw_rdmap_decode(&m2, out, (size_t)w, &v2) == w);
        FUZZ_CHECK(m2.notes == (m.notes & ~IW_NOTE(TERM_TRAILING)));
        const iw_rdmap_term *a = &m.u.term, *b = &m2.u.term;
        FUZZ_CHECK(a->layer == b->layer && a->etype == b->etype && a->ecode == b->ecode &&
                   a->m == b->m && a->d == b->d && a->r == b->r && a->rsvd == b->rsvd &&
                   a->ddp_seg_len == b->ddp_seg_len && a->ddp_raw_len == b->ddp_raw_len);
        FUZZ_CHECK(!a->d || memcmp(a->ddp_raw, b->ddp_raw, a->ddp_raw_len) == 0);
        FUZZ_CHECK(!a->r ||
                   (a->rreq.sink_stag == b->rreq.sink_stag && a->rreq.sink_to == b->rreq.sink_to &&
                    a->rreq.read_size == b->rreq.read_size &&
                    a->rreq.src_stag == b->rreq.src_stag && a->rreq.src_to == b->rreq.src_to));
    } else if (segmented) {
        FUZZ_CHECK((size_t)w == size + oh);
        FUZZ_CHECK(memcmp(out, data, hl) == 0);
        FUZZ_CHECK(memcmp(out + hl + oh, data + hl, size - hl) == 0);
    } else {
        FUZZ_CHECK((size_t)w == size && memcmp(out, data, size) == 0);
    }
    FUZZ_CHECK(iw_rdmap_encode_hdr(out, cap, &m) == w - (iw_ssize)m.payload_len);
    free(out);

    /* One octet short, in an exact-size block: refused, never overrun,
     * and nothing written (finding 3). */
    uint8_t *small = malloc((size_t)w - 1); /* w >= 14, a DDP header */
    FUZZ_CHECK(small != NULL);
    memset(small, 0xA5, (size_t)w - 1);
    FUZZ_CHECK(iw_rdmap_encode(small, (size_t)w - 1, &m) == IW_ERR_NOBUF);
    for (size_t i = 0; i + 1 < (size_t)w; i++)
        FUZZ_CHECK(small[i] == 0xA5);
    free(small);
    return 0;
}
