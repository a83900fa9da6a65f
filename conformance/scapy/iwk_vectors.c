/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwk_vectors: libiwarp's encoders as test vectors for the Scapy layers.
 *
 * Prints one JSON object per line: the parameters of a message and the
 * octets libiwarp encodes for it ("hex"). conformance/scapy/tests builds
 * the same message with Scapy from the parameters and asserts identical
 * octets, then dissects libiwarp's octets with Scapy and checks the fields.
 *
 *   kind "mpa_rr": iw_mpa_rr_encode (RFC 5044 §7.1.1, RFC 6581 §6, §9)
 *   kind "rdmap":  iw_rdmap_encode, one DDP segment (RFC 5040, 5041, 7306)
 *   kind "fpdu":   iw_rdmap_encode_hdr + iw_mpa_fpdu_encode at a marker
 *                  grid position, markers and CRC on or off (RFC 5044 §4)
 *   kind "stream": several FPDUs back to back from a grid position, each
 *                  encoded where the previous one ended
 *   kind "crc":    iw_crc32c over some octets (RFC 3720 B.4 and more)
 *   kind "term":   the RFC 6580 registry as libiwarp has it (IW_TERM_LIST)
 *
 * 64-bit values are hex strings; everything else is a JSON number or bool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/iwarp.h>

#define BUF_MAX (IW_MPA_FPDU_WIRE_MAX + 64)

static uint8_t g_out[BUF_MAX];
static uint8_t g_seg[BUF_MAX];
static uint8_t g_payload[BUF_MAX];

static void die(const char *what, long rc) {
    fprintf(stderr, "iwk_vectors: %s failed (%ld)\n", what, rc);
    exit(1);
}

/* ---- JSON pieces ---- */

static void put_hex(const uint8_t *p, size_t n) {
    putchar('"');
    for (size_t i = 0; i < n; i++)
        printf("%02x", p[i]);
    putchar('"');
}

static void put_u64(uint64_t v) { printf("\"0x%llx\"", (unsigned long long)v); }

static const char *jbool(bool b) { return b ? "true" : "false"; }

static void put_ddp(const iw_ddp_hdr *h) {
    printf("{\"tagged\":%s,\"last\":%s,\"rsvd\":%u,\"dv\":%u,\"rsvd_ulp\":%u", jbool(h->tagged),
           jbool(h->last), h->rsvd, h->dv, h->rsvd_ulp);
    if (h->tagged) {
        printf(",\"stag\":");
        put_u64(h->stag);
        printf(",\"to\":");
        put_u64(h->to);
    } else {
        printf(",\"inv_stag\":");
        put_u64(h->rsvd_ulp2);
        printf(",\"qn\":%u,\"msn\":%u,\"mo\":%u", h->qn, h->msn, h->mo);
    }
    putchar('}');
}

static void put_read_req(const iw_rdmap_read_req *r) {
    printf("{\"sink_stag\":");
    put_u64(r->sink_stag);
    printf(",\"sink_to\":");
    put_u64(r->sink_to);
    printf(",\"read_size\":%u,\"src_stag\":", r->read_size);
    put_u64(r->src_stag);
    printf(",\"src_to\":");
    put_u64(r->src_to);
    putchar('}');
}

/* The message: DDP header fields, RDMAP control, the opcode's header. */
static void put_msg(const iw_rdmap_msg *m) {
    printf("{\"ddp\":");
    put_ddp(&m->ddp);
    printf(",\"rv\":%u,\"rsv\":%u,\"opcode\":%u,\"payload\":", m->rv, m->rsv, m->opcode);
    put_hex(m->payload, m->payload_len);
    switch (m->opcode) {
    case IW_OP_READ_REQ:
        printf(",\"read_req\":");
        put_read_req(&m->u.read_req);
        break;
    case IW_OP_TERMINATE: {
        const iw_rdmap_term *t = &m->u.term;
        printf(",\"term\":{\"layer\":%u,\"etype\":%u,\"ecode\":%u,\"m\":%s,\"d\":%s,\"r\":%s,"
               "\"rsvd\":%u,\"ddp_seg_len\":%u",
               t->layer, t->etype, t->ecode, jbool(t->m), jbool(t->d), jbool(t->r), t->rsvd,
               t->ddp_seg_len);
        if (t->d) {
            printf(",\"ddp\":");
            put_ddp(&t->ddp);
        }
        if (t->r) {
            printf(",\"rreq\":");
            put_read_req(&t->rreq);
        }
        putchar('}');
        break;
    }
    case IW_OP_IMM:
    case IW_OP_IMM_SE:
        printf(",\"imm\":");
        put_hex(m->u.imm, sizeof m->u.imm);
        break;
    case IW_OP_ATOMIC_REQ: {
        const iw_rdmap_atomic_req *a = &m->u.atomic_req;
        printf(",\"atomic_req\":{\"rsvd\":%u,\"aopcode\":%u,\"req_id\":%u,\"stag\":", a->rsvd,
               a->aopcode, a->req_id);
        put_u64(a->stag);
        printf(",\"to\":");
        put_u64(a->to);
        printf(",\"add_swap\":");
        put_u64(a->add_swap);
        printf(",\"add_swap_mask\":");
        put_u64(a->add_swap_mask);
        printf(",\"compare\":");
        put_u64(a->compare);
        printf(",\"compare_mask\":");
        put_u64(a->compare_mask);
        putchar('}');
        break;
    }
    case IW_OP_ATOMIC_RESP:
        printf(",\"atomic_resp\":{\"req_id\":%u,\"orig\":", m->u.atomic_resp.req_id);
        put_u64(m->u.atomic_resp.orig);
        putchar('}');
        break;
    default:
        break;
    }
    putchar('}');
}

/* ---- message builders ---- */

static iw_ddp_hdr tagged(bool last, uint32_t stag, uint64_t to) {
    iw_ddp_hdr h = {.tagged = true, .last = last, .dv = IW_DDP_VERSION, .stag = stag, .to = to};
    return h;
}

static iw_ddp_hdr untagged(bool last, uint32_t qn, uint32_t msn, uint32_t mo) {
    iw_ddp_hdr h = {.last = last, .dv = IW_DDP_VERSION, .qn = qn, .msn = msn, .mo = mo};
    return h;
}

static iw_rdmap_msg msg(iw_ddp_hdr h, unsigned opcode, size_t paylen) {
    iw_rdmap_msg m;
    memset(&m, 0, sizeof m);
    m.ddp = h;
    m.ddp.rsvd_ulp = iw_rdmap_ctrl(opcode);
    m.rv = IW_RDMAP_VERSION;
    m.opcode = (uint8_t)opcode;
    m.payload = paylen ? g_payload : NULL;
    m.payload_len = paylen;
    return m;
}

/* The copied DDP header of a Terminate: encoded from t->ddp into a buffer
 * that lives as long as the program (each Terminate gets its own). */
static void term_copy(iw_rdmap_term *t, iw_ddp_hdr h, uint8_t rsvd_ulp) {
    static uint8_t raw[64][IW_DDP_UNTAGGED_HDR_LEN];
    static size_t used;
    if (used == sizeof raw / sizeof raw[0])
        die("term_copy slots", 0);
    h.rsvd_ulp = rsvd_ulp;
    iw_ssize n = iw_ddp_encode_hdr(raw[used], sizeof raw[used], &h);
    if (n < 0)
        die("iw_ddp_encode_hdr", n);
    t->d = true;
    t->ddp = h;
    t->ddp_raw = raw[used++];
    t->ddp_raw_len = (size_t)n;
}

/* ---- emitters ---- */

static void emit_rdmap(const char *id, const iw_rdmap_msg *m) {
    iw_ssize n = iw_rdmap_encode(g_out, sizeof g_out, m);
    if (n < 0)
        die(id, n);
    printf("{\"id\":\"%s\",\"kind\":\"rdmap\",\"msg\":", id);
    put_msg(m);
    printf(",\"hex\":");
    put_hex(g_out, (size_t)n);
    printf("}\n");
}

/* m NULL: an empty ULPDU. */
static void emit_fpdu(const char *id, uint32_t pos, unsigned flags, const iw_rdmap_msg *m) {
    iw_ssize hl = 0;
    if (m) {
        hl = iw_rdmap_encode_hdr(g_seg, sizeof g_seg, m);
        if (hl < 0)
            die(id, hl);
    }
    iw_ssize n = iw_mpa_fpdu_encode(g_out, sizeof g_out, pos, flags, g_seg, (size_t)hl,
                                    m ? m->payload : NULL, m ? m->payload_len : 0);
    if (n < 0)
        die(id, n);
    printf("{\"id\":\"%s@%#x%s%s\",\"kind\":\"fpdu\",\"pos\":%u,\"markers\":%s,\"crc\":%s,"
           "\"msg\":",
           id, pos, (flags & IW_MPA_MARKERS) ? "+markers" : "", (flags & IW_MPA_CRC) ? "+crc" : "",
           pos, jbool(flags & IW_MPA_MARKERS), jbool(flags & IW_MPA_CRC));
    if (m)
        put_msg(m);
    else
        printf("null");
    printf(",\"hex\":");
    put_hex(g_out, (size_t)n);
    printf("}\n");
}

static void emit_rr(const char *id, const iw_mpa_rr *rr) {
    iw_ssize n = iw_mpa_rr_encode(g_out, sizeof g_out, rr);
    if (n < 0)
        die(id, n);
    printf("{\"id\":\"%s\",\"kind\":\"mpa_rr\",\"type\":\"%s\",\"m\":%s,\"c\":%s,\"r\":%s,"
           "\"s\":%s,\"res\":%u,\"rev\":%u",
           id, rr->type == IW_MPA_REQUEST ? "request" : "reply", jbool(rr->m), jbool(rr->c),
           jbool(rr->r), jbool(rr->s), rr->res, rr->rev);
    printf(",\"v2\":{\"p2p\":%s,\"rtr_send\":%s,\"rtr_write\":%s,\"rtr_read\":%s,\"ird\":%u,"
           "\"ord\":%u}",
           jbool(rr->v2.p2p), jbool(rr->v2.rtr_send), jbool(rr->v2.rtr_write),
           jbool(rr->v2.rtr_read), rr->v2.ird, rr->v2.ord);
    printf(",\"ulp_pd\":");
    put_hex(rr->ulp_pd, rr->ulp_pd_len);
    printf(",\"hex\":");
    put_hex(g_out, (size_t)n);
    printf("}\n");
}

static void emit_crc(const char *id, const uint8_t *p, size_t n) {
    printf("{\"id\":\"%s\",\"kind\":\"crc\",\"data\":", id);
    put_hex(p, n);
    printf(",\"crc\":%u}\n", iw_crc32c(p, n));
}

/* ---- the vectors ---- */

static void fill_payload(size_t n, uint32_t seed) {
    uint32_t x = seed ? seed : 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13; /* xorshift32 */
        x ^= x >> 17;
        x ^= x << 5;
        g_payload[i] = (uint8_t)x;
    }
}

static void vectors_mpa_rr(void) {
    static const uint8_t pd512[512] = {[0] = 'p', [511] = 'd'};
    static const uint8_t hello[] = "hello iwarp";
    iw_mpa_rr rr;

    memset(&rr, 0, sizeof rr);
    rr.type = IW_MPA_REQUEST, rr.c = true, rr.rev = IW_MPA_REV1;
    emit_rr("rr/v1-request", &rr);
    rr.m = true, rr.ulp_pd = hello, rr.ulp_pd_len = 11;
    emit_rr("rr/v1-request-markers-pd", &rr);
    rr.type = IW_MPA_REPLY, rr.m = false, rr.c = false, rr.r = true;
    emit_rr("rr/v1-reply-reject", &rr);
    rr.type = IW_MPA_REPLY, rr.r = false, rr.c = true, rr.ulp_pd = pd512, rr.ulp_pd_len = 512;
    emit_rr("rr/v1-reply-pd512", &rr);

    memset(&rr, 0, sizeof rr);
    rr.type = IW_MPA_REQUEST, rr.c = true, rr.s = true, rr.rev = IW_MPA_REV2;
    rr.v2.ird = 16, rr.v2.ord = 16;
    emit_rr("rr/v2-request-cs", &rr);
    rr.v2.p2p = true, rr.v2.rtr_read = true, rr.ulp_pd = hello, rr.ulp_pd_len = 5;
    emit_rr("rr/v2-request-p2p-read", &rr);
    rr.type = IW_MPA_REPLY, rr.m = true;
    rr.v2 = (iw_mpa_v2){true, true, true, true, IW_MPA_V2_NO_NEG, IW_MPA_V2_NO_NEG};
    emit_rr("rr/v2-reply-all-rtr-noneg", &rr);
    rr.v2 = (iw_mpa_v2){true, false, true, false, 0x1234, 0x2ABC};
    rr.ulp_pd = pd512, rr.ulp_pd_len = 508;
    emit_rr("rr/v2-reply-pd508", &rr);
    rr.s = false, rr.ulp_pd = hello, rr.ulp_pd_len = 3;
    emit_rr("rr/v2-rev2-no-s", &rr);
    /* Crafted: reserved bits set, R in a Request, RDMAC Rev 0, Rev 1 with S. */
    memset(&rr, 0, sizeof rr);
    rr.type = IW_MPA_REQUEST, rr.r = true, rr.res = 0x0F, rr.rev = IW_MPA_REV1;
    emit_rr("rr/crafted-res-r-in-request", &rr);
    rr.res = 0, rr.r = false, rr.m = true, rr.c = true, rr.rev = 0;
    emit_rr("rr/crafted-rev0", &rr);
    rr.rev = IW_MPA_REV1, rr.s = true, rr.v2.p2p = true, rr.v2.rtr_send = true;
    rr.v2.ird = 1, rr.v2.ord = 2;
    emit_rr("rr/crafted-rev1-with-s", &rr);
}

/* One instance of every opcode (0x0-0xB) and the Terminate variants; the
 * same list feeds the FPDU vectors. Returns the count. */
static size_t build_msgs(iw_rdmap_msg *out, const char **ids) {
    size_t n = 0;
    iw_rdmap_msg m;
    iw_rdmap_term *t;
#define ADD(name)                                                                                  \
    do {                                                                                           \
        ids[n] = name;                                                                             \
        out[n++] = m;                                                                              \
    } while (0)

    m = msg(tagged(true, 0x12345678, 0x0123456789ABCDEFull), IW_OP_WRITE, 11);
    ADD("write");
    m = msg(tagged(true, 0, 0), IW_OP_WRITE, 0);
    ADD("write-zero-length-rtr");
    m = msg(tagged(false, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFFull), IW_OP_WRITE, 1);
    ADD("write-not-last-max");
    m = msg(untagged(true, IW_QN_READ_REQ, 7, 0), IW_OP_READ_REQ, 0);
    m.u.read_req = (iw_rdmap_read_req){0xAABBCCDD, 0x1000, 4096, 0x11223344, 0xFFFFFFFFFFFFF000ull};
    ADD("read-req");
    m = msg(untagged(true, IW_QN_READ_REQ, 1, 0), IW_OP_READ_REQ, 0);
    ADD("read-req-zero-rtr");
    m = msg(tagged(true, 0xAABBCCDD, 0x1000), IW_OP_READ_RESP, 32);
    ADD("read-resp");
    m = msg(untagged(true, IW_QN_SEND, 1, 0), IW_OP_SEND, 24);
    ADD("send");
    m = msg(untagged(true, IW_QN_SEND, 2, 0), IW_OP_SEND_INV, 5);
    m.ddp.rsvd_ulp2 = 0xDEADBEEF;
    ADD("send-inv");
    m = msg(untagged(true, IW_QN_SEND, 3, 0), IW_OP_SEND_SE, 7);
    ADD("send-se");
    m = msg(untagged(true, IW_QN_SEND, 0xFFFFFFFF, 0), IW_OP_SEND_SE_INV, 1);
    m.ddp.rsvd_ulp2 = 0x01020304;
    ADD("send-se-inv");
    m = msg(untagged(false, IW_QN_SEND, 9, 0), IW_OP_SEND, 13);
    ADD("send-first-segment");
    m = msg(untagged(true, IW_QN_SEND, 9, 1482), IW_OP_SEND, 9);
    ADD("send-last-segment");
    m = msg(untagged(true, IW_QN_SEND, 4, 0), IW_OP_SEND, 0);
    ADD("send-zero-length");

    /* Terminates (RFC 5040 §4.8): sub-fields as M/D/R say. */
    m = msg(untagged(true, IW_QN_TERMINATE, 1, 0), IW_OP_TERMINATE, 0);
    ADD("term-local-catastrophic");
    t = &m.u.term;
    t->layer = 1, t->etype = 1, t->ecode = 0, t->m = true, t->ddp_seg_len = 1040;
    term_copy(t, tagged(true, 0xBAD5BAD5, 0x10), iw_rdmap_ctrl(IW_OP_WRITE));
    ADD("term-ddp-tagged-copy");
    memset(t, 0, sizeof *t);
    t->layer = 1, t->etype = 2, t->ecode = 2, t->m = true, t->ddp_seg_len = 42;
    term_copy(t, untagged(true, IW_QN_SEND, 77, 0), iw_rdmap_ctrl(IW_OP_SEND));
    ADD("term-ddp-untagged-copy");
    memset(t, 0, sizeof *t);
    t->layer = 0, t->etype = 1, t->ecode = 0, t->m = true, t->ddp_seg_len = 46, t->r = true;
    term_copy(t, untagged(true, IW_QN_READ_REQ, 3, 0), iw_rdmap_ctrl(IW_OP_READ_REQ));
    t->rreq = (iw_rdmap_read_req){0x100, 0x2000, 0x300, 0xBADBAD, 0x4000};
    ADD("term-read-req-copy-r");
    memset(t, 0, sizeof *t);
    t->layer = 0, t->etype = 2, t->ecode = 6, t->m = true, t->ddp_seg_len = 14;
    ADD("term-m-only");
    memset(t, 0, sizeof *t);
    t->layer = 2, t->etype = 0, t->ecode = 2;
    ADD("term-mpa-crc");
    memset(t, 0, sizeof *t);
    t->layer = 0, t->etype = 1, t->ecode = 9, t->d = true, t->ddp_seg_len = 18;
    term_copy(t, untagged(true, IW_QN_SEND, 5, 0), iw_rdmap_ctrl(IW_OP_SEND_INV));
    ADD("term-d-without-m");
    memset(t, 0, sizeof *t);
    t->layer = 0, t->etype = 1, t->ecode = 2, t->r = true;
    t->rreq = (iw_rdmap_read_req){1, 2, 3, 4, 5};
    ADD("term-r-without-d");
    memset(t, 0, sizeof *t);
    t->layer = 0xF, t->etype = 0xE, t->ecode = 0xAB, t->rsvd = 0x1ABC, t->m = true,
    t->ddp_seg_len = 0xFFFF;
    term_copy(t, tagged(false, 7, 8), 0xFF);
    ADD("term-crafted-unregistered-rsvd");

    m = msg(untagged(true, IW_QN_SEND, 5, 0), IW_OP_IMM, 0);
    memcpy(m.u.imm, "\x01\x23\x45\x67\x89\xAB\xCD\xEF", 8);
    ADD("imm");
    m = msg(untagged(true, IW_QN_SEND, 6, 0), IW_OP_IMM_SE, 0);
    memcpy(m.u.imm, "IMMDATA!", 8);
    ADD("imm-se");
    m = msg(untagged(true, IW_QN_READ_REQ, 2, 0), IW_OP_ATOMIC_REQ, 0);
    m.u.atomic_req = (iw_rdmap_atomic_req){0, IW_ATOMIC_FETCH_ADD,  0x42, 0xCAFE, 0x8000, 5, 0,
                                           0, 0xFFFFFFFFFFFFFFFFull};
    ADD("atomic-fetch-add");
    m.u.atomic_req = (iw_rdmap_atomic_req){0,
                                           IW_ATOMIC_CMP_SWAP,
                                           0x43,
                                           0xCAFE,
                                           0x8008,
                                           0x1111111111111111ull,
                                           0xFFFF0000FFFF0000ull,
                                           0x2222222222222222ull,
                                           0x00000000FFFFFFFFull};
    ADD("atomic-cmp-swap");
    m.u.atomic_req = (iw_rdmap_atomic_req){0x0ABCDEF, 0x1, 0xFFFFFFFF, 1, 2, 3, 4, 5, 6};
    ADD("atomic-crafted-reserved");
    m = msg(untagged(true, IW_QN_ATOMIC_RESP, 2, 0), IW_OP_ATOMIC_RESP, 0);
    m.u.atomic_resp = (iw_rdmap_atomic_resp){0x42, 0xFEDCBA9876543210ull};
    ADD("atomic-resp");

    /* Crafted: version, reserved bits and queue out of spec. */
    m = msg(tagged(true, 1, 2), 0xF, 4);
    m.ddp.rsvd = 0xF, m.ddp.dv = 2, m.rv = 0, m.rsv = 3;
    ADD("crafted-tagged-reserved-bits");
    m = msg(untagged(false, 5, 0, 100), 0xC, 3);
    m.ddp.dv = 0, m.rv = 2, m.rsv = 1, m.ddp.rsvd_ulp2 = 0x99;
    ADD("crafted-untagged-qn5-opcode-c");
#undef ADD
    return n;
}

static void vectors_rdmap(void) {
    iw_rdmap_msg msgs[64];
    const char *ids[64];
    char id[128];
    size_t n = build_msgs(msgs, ids);
    for (size_t i = 0; i < n; i++) {
        snprintf(id, sizeof id, "rdmap/%s", ids[i]);
        emit_rdmap(id, &msgs[i]);
    }
}

static void vectors_fpdu(void) {
    static const uint32_t positions[] = {0,   4,    500,         508,         512,
                                         504, 1020, 0xFFFFFE00u, 0xFFFFFFF8u, 0xFFFFFFFCu};
    static const unsigned flag_sets[] = {0, IW_MPA_CRC, IW_MPA_MARKERS,
                                         IW_MPA_MARKERS | IW_MPA_CRC};
    iw_rdmap_msg msgs[64];
    const char *ids[64];
    char id[128];
    size_t n = build_msgs(msgs, ids);

    /* RFC 5044 Fig. 5 and Fig. 6 (wire-facts A.7). */
    iw_rdmap_msg fig = msg(untagged(true, IW_QN_SEND, 1, 0), IW_OP_SEND, 24);
    memset(g_payload, 0, 24);
    emit_fpdu("fpdu/rfc5044-fig5", 0, IW_MPA_MARKERS | IW_MPA_CRC, &fig);
    fig.ddp.msn = 2;
    emit_fpdu("fpdu/rfc5044-fig6", 0x1EC, IW_MPA_MARKERS | IW_MPA_CRC, &fig);

    fill_payload(sizeof g_payload, 0x5CA9);
    /* Every message at every position, markers and CRC on and off. */
    for (size_t i = 0; i < n; i++)
        for (size_t p = 0; p < sizeof positions / sizeof positions[0]; p++)
            for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++) {
                snprintf(id, sizeof id, "fpdu/%s", ids[i]);
                emit_fpdu(id, positions[p], flag_sets[f], &msgs[i]);
            }
    /* An empty ULPDU, and large ones crossing many markers. */
    for (size_t p = 0; p < sizeof positions / sizeof positions[0]; p++)
        emit_fpdu("fpdu/empty-ulpdu", positions[p], IW_MPA_MARKERS | IW_MPA_CRC, NULL);
    static const size_t big[] = {1500 - 14, 8000, IW_MPA_MULPDU_MAX - 14};
    for (size_t b = 0; b < sizeof big / sizeof big[0]; b++)
        for (size_t p = 0; p < sizeof positions / sizeof positions[0]; p += 3) {
            iw_rdmap_msg w = msg(tagged(true, 0x77, 0x1000), IW_OP_WRITE, big[b]);
            snprintf(id, sizeof id, "fpdu/write-%zu", big[b]);
            emit_fpdu(id, positions[p], IW_MPA_MARKERS | IW_MPA_CRC, &w);
        }
    /* Without markers the position does not matter, so odd ones are legal. */
    iw_rdmap_msg s = msg(untagged(true, IW_QN_SEND, 1, 0), IW_OP_SEND, 3);
    emit_fpdu("fpdu/send-odd-pos", 0x1FF, IW_MPA_CRC, &s);
}

/* All messages back to back: FPDUs that end on the grid, markers with
 * FPDUPTR 0 between FPDUs, markers right before a CRC. */
static void vectors_stream(void) {
    static uint8_t wire[1 << 16];
    static const uint32_t starts[] = {0, 4, 260, 508, 0xFFFFFE00u, 0xFFFFFFFCu};
    static const unsigned flag_sets[] = {IW_MPA_MARKERS | IW_MPA_CRC, IW_MPA_MARKERS, IW_MPA_CRC};
    iw_rdmap_msg msgs[64];
    const char *ids[64];
    size_t n = build_msgs(msgs, ids);
    fill_payload(sizeof g_payload, 0x57EA);
    for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++)
        for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++) {
            uint32_t pos = starts[s];
            size_t len = 0;
            printf("{\"id\":\"stream/all@%#x%s%s\",\"kind\":\"stream\",\"pos\":%u,"
                   "\"markers\":%s,\"crc\":%s,\"msgs\":[",
                   starts[s], (flag_sets[f] & IW_MPA_MARKERS) ? "+markers" : "",
                   (flag_sets[f] & IW_MPA_CRC) ? "+crc" : "", starts[s],
                   jbool(flag_sets[f] & IW_MPA_MARKERS), jbool(flag_sets[f] & IW_MPA_CRC));
            for (size_t i = 0; i < n; i++) {
                iw_ssize hl = iw_rdmap_encode_hdr(g_seg, sizeof g_seg, &msgs[i]);
                if (hl < 0)
                    die(ids[i], hl);
                iw_ssize w =
                    iw_mpa_fpdu_encode(wire + len, sizeof wire - len, pos, flag_sets[f], g_seg,
                                       (size_t)hl, msgs[i].payload, msgs[i].payload_len);
                if (w < 0)
                    die(ids[i], w);
                len += (size_t)w;
                pos += (uint32_t)w;
                if (i)
                    putchar(',');
                put_msg(&msgs[i]);
            }
            printf("],\"hex\":");
            put_hex(wire, len);
            printf("}\n");
        }
}

static void vectors_crc(void) {
    uint8_t buf[4200];
    char id[64];
    /* RFC 3720 B.4 */
    memset(buf, 0, 32);
    emit_crc("crc/rfc3720-zeros", buf, 32);
    memset(buf, 0xFF, 32);
    emit_crc("crc/rfc3720-ones", buf, 32);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)i;
    emit_crc("crc/rfc3720-incrementing", buf, 32);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)(31 - i);
    emit_crc("crc/rfc3720-decrementing", buf, 32);
    emit_crc("crc/check", (const uint8_t *)"123456789", 9);
    /* Every length around the SIMD paths' block sizes. */
    fill_payload(sizeof buf, 0xC0FFEE);
    memcpy(buf, g_payload, sizeof buf);
    static const size_t lens[] = {0,   1,   2,   3,    4,    5,    7,    8,    9,    15,   16,  17,
                                  31,  32,  33,  63,   64,   65,   127,  128,  129,  255,  256, 257,
                                  511, 512, 513, 1023, 1024, 1025, 2048, 4095, 4096, 4097, 4200};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        snprintf(id, sizeof id, "crc/len-%zu", lens[i]);
        emit_crc(id, buf, lens[i]);
    }
}

static void vectors_term_registry(void) {
#define IW_X_(name, l, e, c, rfc, text)                                                            \
    printf("{\"id\":\"term/%s\",\"kind\":\"term\",\"name\":\"%s\",\"layer\":%u,\"etype\":%u,"      \
           "\"code\":%u,\"text\":\"%s\"}\n",                                                       \
           #name, #name, l, e, c, text);
    IW_TERM_LIST(IW_X_)
#undef IW_X_
}

int main(void) {
    vectors_mpa_rr();
    vectors_rdmap();
    vectors_fpdu();
    vectors_stream();
    vectors_crc();
    vectors_term_registry();
    return fflush(stdout) == 0 ? 0 : 1;
}
