/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writes the seed corpora, fuzz/corpus/<target>/<name>, with the library's
 * own encoders: RFC 5044 Fig. 5/6 FPDUs, MPA v1/v2 frames, every RDMAP
 * opcode, Terminates with tagged and untagged copies, streams with markers
 * at varied positions, and a few deliberately broken frames (patched after
 * encoding) so each reject path has a seed. Files are named by content.
 *
 *   fuzz_gen_corpus DIR        (normally DIR = fuzz/corpus; see docs/fuzzing.md)
 *
 * Rerunning overwrites these seeds and leaves any other corpus file alone.
 * Every encoder call must succeed; RFC vectors are checked on the way. */
#include <iwarp/iwarp.h>

#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "iw_peer.h"

#define GEN_CHECK FUZZ_CHECK

static const char *root;
static size_t written;

/* Growable byte buffer. */
typedef struct {
    uint8_t *p;
    size_t n, cap;
} bytes;

static void b_reserve(bytes *b, size_t more) {
    if (b->n + more <= b->cap)
        return;
    while (b->cap < b->n + more)
        b->cap = b->cap ? 2 * b->cap : 1024;
    b->p = realloc(b->p, b->cap);
    GEN_CHECK(b->p != NULL);
}
static void b_put(bytes *b, const void *p, size_t n) {
    b_reserve(b, n);
    if (n)
        memcpy(b->p + b->n, p, n);
    b->n += n;
}
static void b_u8(bytes *b, uint8_t v) { b_put(b, &v, 1); }
static void b_be(bytes *b, uint64_t v, int octets) {
    for (int i = octets - 1; i >= 0; i--)
        b_u8(b, (uint8_t)(v >> (8 * i)));
}

static void save(const char *target, const char *name, const uint8_t *p, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, target);
    GEN_CHECK(mkdir(path, 0777) == 0 || errno == EEXIST);
    snprintf(path, sizeof path, "%s/%s/%s", root, target, name);
    FILE *f = fopen(path, "wb");
    GEN_CHECK(f != NULL);
    GEN_CHECK(fwrite(p, 1, n, f) == n || n == 0);
    GEN_CHECK(fclose(f) == 0);
    written++;
}

/* ---- MPA Request/Reply --------------------------------------------------- */

static const uint8_t ulp_pd[] = "iwarpkit private data";

static iw_mpa_rr rr_of(iw_mpa_rr_type type, uint8_t rev, bool m, bool c, bool r) {
    iw_mpa_rr rr = {.type = type, .rev = rev, .m = m, .c = c, .r = r};
    return rr;
}

static void v2_set(iw_mpa_rr *rr, bool p2p, bool send, bool write, bool read, uint16_t ird,
                   uint16_t ord) {
    rr->s = true;
    rr->v2 = (iw_mpa_v2){p2p, send, write, read, ird, ord};
}

static size_t rr_enc(uint8_t *out, const iw_mpa_rr *rr) {
    iw_ssize n = iw_mpa_rr_encode(out, IW_MPA_RR_HDR_LEN + IW_MPA_PD_MAX, rr);
    GEN_CHECK(n > 0);
    return (size_t)n;
}

static void rr_save(const char *name, const iw_mpa_rr *rr) {
    uint8_t f[IW_MPA_RR_HDR_LEN + IW_MPA_PD_MAX];
    save("fuzz_mpa_rr", name, f, rr_enc(f, rr));
}

static void gen_mpa_rr(void) {
    uint8_t f[IW_MPA_RR_HDR_LEN + IW_MPA_PD_MAX + 4], big[IW_MPA_PD_MAX];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)i;
    iw_mpa_rr rr = rr_of(IW_MPA_REQUEST, 1, false, true, false);
    rr.ulp_pd = ulp_pd;
    rr.ulp_pd_len = sizeof ulp_pd - 1;
    rr_save("mpa_req_v1_crc_pd", &rr);
    rr = rr_of(IW_MPA_REQUEST, 1, true, true, false);
    rr_save("mpa_req_v1_markers_crc", &rr);
    rr = rr_of(IW_MPA_REPLY, 1, false, true, false);
    rr_save("mpa_rep_v1_crc", &rr);
    rr = rr_of(IW_MPA_REPLY, 1, false, false, true);
    rr.ulp_pd = (const uint8_t *)"busy";
    rr.ulp_pd_len = 4;
    rr_save("mpa_rep_v1_reject_pd", &rr);
    rr = rr_of(IW_MPA_REQUEST, 1, false, false, false);
    rr.ulp_pd = big;
    rr.ulp_pd_len = IW_MPA_PD_MAX;
    rr_save("mpa_req_v1_pd512", &rr);
    rr = rr_of(IW_MPA_REQUEST, 1, false, false, true);
    rr_save("mpa_req_v1_r_bit", &rr);

    rr = rr_of(IW_MPA_REQUEST, 2, true, true, false);
    v2_set(&rr, true, false, false, true, 16, 16);
    rr.ulp_pd = ulp_pd;
    rr.ulp_pd_len = sizeof ulp_pd - 1;
    rr_save("mpa_req_v2_p2p", &rr);
    rr = rr_of(IW_MPA_REPLY, 2, true, true, false);
    v2_set(&rr, true, false, false, true, 8, 4);
    rr_save("mpa_rep_v2_p2p", &rr);
    rr = rr_of(IW_MPA_REQUEST, 2, false, true, false);
    v2_set(&rr, true, true, true, false, IW_MPA_V2_NO_NEG, IW_MPA_V2_NO_NEG);
    rr_save("mpa_req_v2_p2p_send_write_no_neg", &rr);
    rr = rr_of(IW_MPA_REQUEST, 2, false, false, false);
    v2_set(&rr, false, true, false, false, 1, 1);
    rr_save("mpa_req_v2_rtr_without_p2p", &rr);
    rr = rr_of(IW_MPA_REQUEST, 2, false, false, false);
    v2_set(&rr, true, false, false, false, 0, 0);
    rr_save("mpa_req_v2_p2p_no_rtr", &rr);
    rr = rr_of(IW_MPA_REQUEST, 2, false, false, false);
    v2_set(&rr, false, false, false, false, 0x3FFF, 0);
    rr.ulp_pd = big;
    rr.ulp_pd_len = IW_MPA_PD_MAX - IW_MPA_V2_DATA_LEN;
    rr_save("mpa_req_v2_pd512", &rr);
    rr = rr_of(IW_MPA_REQUEST, 2, true, false, false);
    rr.res = 0x0F;
    rr.ulp_pd = (const uint8_t *)"x";
    rr.ulp_pd_len = 1;
    rr_save("mpa_req_v2_no_s_res_bits", &rr);
    rr = rr_of(IW_MPA_REPLY, 2, false, true, true);
    v2_set(&rr, true, false, false, true, 0, 0);
    rr_save("mpa_rep_v2_reject_p2p", &rr);

    /* Rejected by the decoder: each a patch of a valid frame. */
    rr = rr_of(IW_MPA_REQUEST, 1, false, true, false);
    size_t n = rr_enc(f, &rr);
    f[17] = 0;
    save("fuzz_mpa_rr", "mpa_req_rev0", f, n);
    f[17] = 3;
    save("fuzz_mpa_rr", "mpa_req_rev3", f, n);
    f[17] = 1;
    f[15] = 'X';
    save("fuzz_mpa_rr", "mpa_bad_key", f, n);
    f[15] = 'e';
    save("fuzz_mpa_rr", "mpa_req_truncated_19", f, 19);
    rr.ulp_pd = big;
    rr.ulp_pd_len = IW_MPA_PD_MAX;
    n = rr_enc(f, &rr);
    f[18] = 0x02, f[19] = 0x01; /* PD_Length 513 */
    f[n++] = 0xEE;
    save("fuzz_mpa_rr", "mpa_req_pd513", f, n);
    rr = rr_of(IW_MPA_REQUEST, 2, false, false, false);
    rr.ulp_pd = (const uint8_t *)"ab";
    rr.ulp_pd_len = 2;
    n = rr_enc(f, &rr);
    f[16] |= 0x10; /* S=1 with 2 octets of PD: too short for the v2 data */
    save("fuzz_mpa_rr", "mpa_req_v2_s_pd_short", f, n);

    /* Regression (docs/fuzzing.md, bug 1): a Rev 1 frame with the S bit set.
     * The decoder keeps S in res (RFC 6581 §6: a Res bit under Rev 1), the
     * encoder wrote only res & 0x0F, so the frame did not re-encode. */
    rr = rr_of(IW_MPA_REPLY, 1, false, false, false);
    n = rr_enc(f, &rr);
    f[16] |= 0x10;
    save("fuzz_mpa_rr", "regress_mpa_rep_rev1_s_bit", f, n);
}

/* ---- DDP/RDMAP segments ---------------------------------------------------- */

static iw_rdmap_msg msg_of(unsigned opcode, bool tagged, uint32_t qn) {
    return tagged ? iw_rdmap_msg_tagged(opcode, 0x1234abcd, 0x0000100000000040ull, true)
                  : iw_rdmap_msg_untagged(opcode, qn, 1, 0, true);
}

static void seg_enc(bytes *b, const iw_rdmap_msg *m) {
    b_reserve(b, 4096);
    iw_ssize n = iw_rdmap_encode(b->p + b->n, b->cap - b->n, m);
    GEN_CHECK(n > 0);
    b->n += (size_t)n;
}

static void seg_save(const char *name, const iw_rdmap_msg *m) {
    bytes b = {0};
    seg_enc(&b, m);
    save("fuzz_ddp_rdmap", name, b.p, b.n);
    free(b.p);
}

static const uint8_t payload[] = "RDMA payload: sixty-four octets of data for the ULP to place...";

static iw_rdmap_read_req read_req_of(void) {
    iw_rdmap_read_req r = {0x11110001, 0x2000, 4096, 0x22220002, 0x3000};
    return r;
}

static iw_rdmap_term term_of(uint16_t triple, bool m, bool d, bool r, const uint8_t *raw,
                             size_t raw_len) {
    iw_rdmap_term t = {.layer = (uint8_t)iw_term_layer(triple),
                       .etype = (uint8_t)iw_term_etype(triple),
                       .ecode = (uint8_t)iw_term_ecode(triple),
                       .m = m,
                       .d = d,
                       .r = r,
                       .ddp_seg_len = 46};
    t.ddp_raw = raw;
    t.ddp_raw_len = raw_len;
    if (r)
        t.rreq = read_req_of();
    return t;
}

/* The DDP header of the segment a Terminate reports on (RFC 5040 §4.8). */
static size_t ddp_copy(uint8_t *out, bool tagged) {
    iw_ddp_hdr h = {.tagged = tagged,
                    .last = true,
                    .dv = IW_DDP_VERSION,
                    .rsvd_ulp = iw_rdmap_ctrl(tagged ? IW_OP_WRITE : IW_OP_READ_REQ),
                    .stag = 0x1234abcd,
                    .to = 0x1000,
                    .qn = IW_QN_READ_REQ,
                    .msn = 7,
                    .mo = 0x44};
    iw_ssize n = iw_ddp_encode_hdr(out, IW_DDP_UNTAGGED_HDR_LEN, &h);
    GEN_CHECK(n == (iw_ssize)iw_ddp_hdr_len(out[0]));
    return (size_t)n;
}

static void gen_ddp_rdmap(void) {
    iw_rdmap_msg m = msg_of(IW_OP_WRITE, true, 0);
    m.payload = payload, m.payload_len = sizeof payload - 1;
    seg_save("rdmap_write", &m);
    m.ddp.last = false;
    seg_save("rdmap_write_not_last", &m);
    m = msg_of(IW_OP_READ_RESP, true, 0);
    m.payload = payload, m.payload_len = 16;
    seg_save("rdmap_read_resp", &m);
    m = msg_of(IW_OP_READ_REQ, false, IW_QN_READ_REQ);
    m.u.read_req = read_req_of();
    seg_save("rdmap_read_req", &m);
    static const unsigned sends[] = {IW_OP_SEND, IW_OP_SEND_INV, IW_OP_SEND_SE, IW_OP_SEND_SE_INV};
    static const char *const send_names[] = {"rdmap_send", "rdmap_send_inv", "rdmap_send_se",
                                             "rdmap_send_se_inv"};
    for (size_t i = 0; i < 4; i++) {
        m = msg_of(sends[i], false, IW_QN_SEND);
        m.payload = payload, m.payload_len = 24;
        if (sends[i] == IW_OP_SEND_INV || sends[i] == IW_OP_SEND_SE_INV)
            m.ddp.rsvd_ulp2 = 0xfeed0001; /* Invalidate STag */
        seg_save(send_names[i], &m);
    }
    m = msg_of(IW_OP_SEND, false, IW_QN_SEND);
    seg_save("rdmap_send_empty", &m);
    m = msg_of(IW_OP_IMM, false, IW_QN_SEND);
    memcpy(m.u.imm, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
    seg_save("rdmap_imm", &m);
    m.opcode = IW_OP_IMM_SE;
    seg_save("rdmap_imm_se", &m);
    m = msg_of(IW_OP_ATOMIC_REQ, false, IW_QN_READ_REQ);
    m.u.atomic_req = (iw_rdmap_atomic_req){0, IW_ATOMIC_FETCH_ADD, 9, 0x5555, 0x100, 1, 0, 0, 0};
    seg_save("rdmap_atomic_fetch_add", &m);
    m.u.atomic_req.aopcode = IW_ATOMIC_CMP_SWAP;
    m.u.atomic_req.compare = 7, m.u.atomic_req.compare_mask = ~0ull;
    m.u.atomic_req.add_swap_mask = ~0ull;
    seg_save("rdmap_atomic_cmp_swap", &m);
    m.u.atomic_req.aopcode = 0x1; /* unsupported AOpCode */
    seg_save("rdmap_atomic_bad_aopcode", &m);
    m.u.atomic_req.aopcode = IW_ATOMIC_FETCH_ADD, m.u.atomic_req.rsvd = 0x0ABCDEF;
    seg_save("rdmap_atomic_rsvd_bits", &m);
    m = msg_of(IW_OP_ATOMIC_RESP, false, IW_QN_ATOMIC_RESP);
    m.u.atomic_resp = (iw_rdmap_atomic_resp){9, 0x1122334455667788ull};
    seg_save("rdmap_atomic_resp", &m);

    uint8_t raw_t[18], raw_u[18];
    size_t nt = ddp_copy(raw_t, true), nu = ddp_copy(raw_u, false);
    m = msg_of(IW_OP_TERMINATE, false, IW_QN_TERMINATE);
    m.u.term = term_of(IW_TERM_DDP_T_BASE_BOUNDS, true, true, false, raw_t, nt);
    seg_save("rdmap_terminate_tagged_copy", &m);
    m.u.term = term_of(IW_TERM_RDMAP_INVALID_STAG, true, true, true, raw_u, nu);
    seg_save("rdmap_terminate_untagged_copy_read_req", &m);
    m.u.term = term_of(IW_TERM_LLP_MPA_CRC, false, false, false, NULL, 0);
    seg_save("rdmap_terminate_llp_crc", &m);

    /* Control message split over segments (RFC 5041 §5.2): header kept as payload. */
    m = msg_of(IW_OP_READ_REQ, false, IW_QN_READ_REQ);
    bytes b = {0};
    m.u.read_req = read_req_of();
    seg_enc(&b, &m);
    b.p[0] &= (uint8_t)~IW_DDP_CTRL_L; /* first 16 octets, L = 0 */
    save("fuzz_ddp_rdmap", "rdmap_read_req_segmented_first", b.p, 18 + 16);
    b.p[0] |= IW_DDP_CTRL_L; /* the other 12, MO = 16 */
    b.p[17] = 16;
    memmove(b.p + 18, b.p + 18 + 16, 12);
    save("fuzz_ddp_rdmap", "rdmap_read_req_segmented_last", b.p, 18 + 12);

    /* Rejected: one field wrong each. */
    b.n = 0;
    m = msg_of(IW_OP_SEND, false, IW_QN_SEND);
    m.payload = payload, m.payload_len = 8;
    seg_enc(&b, &m);
    b.p[0] = (uint8_t)((b.p[0] & ~IW_DDP_CTRL_DV) | 2);
    save("fuzz_ddp_rdmap", "rdmap_send_bad_ddp_version", b.p, b.n);
    m.rv = 2;
    seg_save("rdmap_send_bad_rdmap_version", &m);
    m.rv = 1;
    m.ddp.qn = 4;
    seg_save("rdmap_send_bad_qn", &m);
    m.ddp.qn = 0;
    m.opcode = 0xC;
    seg_save("rdmap_opcode_reserved_c", &m);
    m.opcode = 0xF;
    seg_save("rdmap_opcode_reserved_f", &m);
    m = msg_of(IW_OP_WRITE, false, IW_QN_SEND);
    seg_save("rdmap_write_untagged", &m);
    m = msg_of(IW_OP_READ_REQ, false, IW_QN_READ_REQ);
    m.u.read_req = read_req_of();
    b.n = 0;
    seg_enc(&b, &m);
    save("fuzz_ddp_rdmap", "rdmap_read_req_short", b.p, b.n - 1);
    m = msg_of(IW_OP_IMM, false, IW_QN_SEND);
    m.payload = payload, m.payload_len = 1;
    seg_save("rdmap_imm_too_long", &m);
    m = msg_of(IW_OP_SEND, false, IW_QN_SEND);
    m.ddp.rsvd = 0xF, m.rsv = 3, m.payload = payload, m.payload_len = 3;
    seg_save("rdmap_send_reserved_bits", &m);
    save("fuzz_ddp_rdmap", "rdmap_ddp_truncated", b.p, 10);
    free(b.p);
}

/* ---- Terminate bodies ------------------------------------------------------ */

static void term_save(const char *name, const iw_rdmap_term *t, const uint8_t *tail, size_t tn) {
    uint8_t out[128];
    iw_ssize n = iw_rdmap_encode_term(out, sizeof out, t);
    GEN_CHECK(n > 0 && (size_t)n + tn <= sizeof out);
    if (tn)
        memcpy(out + n, tail, tn);
    save("fuzz_terminate", name, out, (size_t)n + tn);
}

static void gen_terminate(void) {
    uint8_t raw_t[18], raw_u[18], zeros[64] = {0};
    size_t nt = ddp_copy(raw_t, true), nu = ddp_copy(raw_u, false);
    iw_rdmap_term t = term_of(IW_TERM_DDP_UT_INVALID_MO, false, false, false, NULL, 0);
    term_save("term_ctrl_only_ddp_ut_invalid_mo", &t, NULL, 0);
    t = term_of(IW_TERM_LLP_MPA_CRC, true, false, false, NULL, 0);
    term_save("term_m_llp_crc", &t, NULL, 0);
    t = term_of(IW_TERM_DDP_T_INVALID_STAG, true, true, false, raw_t, nt);
    term_save("term_md_tagged_copy", &t, NULL, 0);
    t = term_of(IW_TERM_DDP_UT_INVALID_QN, true, true, false, raw_u, nu);
    term_save("term_md_untagged_copy", &t, NULL, 0);
    t = term_of(IW_TERM_RDMAP_ACCESS_RIGHTS, true, true, true, raw_u, nu);
    term_save("term_mdr_untagged_copy_read_req", &t, NULL, 0);
    t = term_of(IW_TERM_RDMAP_INVALID_STAG, false, false, true, NULL, 0);
    term_save("term_r_only_read_req", &t, NULL, 0);
    /* §7.1 senders may zero-fill the whole layout: tolerated trailing zeros. */
    t = term_of(IW_TERM_DDP_T_BASE_BOUNDS, true, true, false, raw_t, nt);
    term_save("term_md_tagged_copy_zero_fill", &t, zeros, 4 + 28);
    t = term_of(IW_TERM_RDMAP_CATASTROPHIC_GLOBAL, false, false, false, NULL, 0);
    term_save("term_trailing_nonzero", &t, (const uint8_t *)"junk", 4);
    t = term_of(IW_TERM_TRIPLE(0x3, 0xF, 0x99), false, false, false, NULL, 0);
    term_save("term_unregistered_triple", &t, NULL, 0);
    t = term_of(IW_TERM_TRIPLE(0x1, 0x3, 0x42), false, false, false, NULL, 0);
    term_save("term_ddp_llp_reserved_type", &t, NULL, 0);
    t = term_of(IW_TERM_DDP_LOCAL_CATASTROPHIC, false, false, false, NULL, 0);
    t.rsvd = 0x1FFF;
    term_save("term_rsvd_bits", &t, NULL, 0);
    t = term_of(IW_TERM_RDMAP_INVALID_STAG, true, true, true, raw_u, nu);
    uint8_t out[128];
    iw_ssize n = iw_rdmap_encode_term(out, sizeof out, &t);
    GEN_CHECK(n > 10);
    save("fuzz_terminate", "term_mdr_truncated", out, (size_t)n - 1);
    save("fuzz_terminate", "term_d_copy_truncated", out, 4 + 2 + 10);
    save("fuzz_terminate", "term_ctrl_truncated", out, 3);
}

/* ---- FPDUs ----------------------------------------------------------------- */

static size_t fpdu_enc(uint8_t *out, size_t cap, uint32_t pos, unsigned flags, const uint8_t *u,
                       size_t n) {
    iw_ssize w = iw_mpa_fpdu_encode(out, cap, pos, flags, u, n, NULL, 0);
    GEN_CHECK(w > 0);
    return (size_t)w;
}

/* fuzz_fpdu input: [flags][pos][wire]. */
static void fpdu_save(const char *name, unsigned flags, uint32_t pos, const uint8_t *wire,
                      size_t n) {
    bytes b = {0};
    b_u8(&b, (uint8_t)flags);
    b_be(&b, pos, 4);
    b_put(&b, wire, n);
    save("fuzz_fpdu", name, b.p, b.n);
    free(b.p);
}

/* RFC 5044 Fig. 5 / Fig. 6 ULPDU: a 42-octet untagged DDP segment. */
static size_t rfc_ulpdu(uint8_t *u, uint8_t msn) {
    memset(u, 0, 42);
    u[0] = 0x41, u[1] = 0x43, u[13] = msn;
    return 42;
}

static void gen_fpdu(void) {
    static uint8_t wire[IW_MPA_FPDU_WIRE_MAX], u[IW_MPA_ULPDU_MAX];
    const unsigned MC = IW_MPA_MARKERS | IW_MPA_CRC;
    size_t n = rfc_ulpdu(u, 1);
    size_t w = fpdu_enc(wire, sizeof wire, 0, MC, u, n);
    GEN_CHECK(w == 52 && memcmp(wire + 48, "\x52\x23\x99\x83", 4) == 0); /* Fig. 5 */
    fpdu_save("fpdu_rfc5044_fig5", MC, 0, wire, w);
    n = rfc_ulpdu(u, 2);
    w = fpdu_enc(wire, sizeof wire, 0x1ec, MC, u, n);
    GEN_CHECK(w == 52 && memcmp(wire + 48, "\x84\x92\x58\x98", 4) == 0); /* Fig. 6 */
    fpdu_save("fpdu_rfc5044_fig6_marker_inside", MC, 0x1ec, wire, w);

    for (size_t i = 0; i < sizeof u; i++)
        u[i] = (uint8_t)(i * 7 + 1);
    static const size_t lens[] = {0, 1, 2, 3, 17, 18, 1500};
    static const uint32_t poss[] = {0, 4, 0x1f8, 0x1fc, 0x200, 0xfffffe00u, 0xfffffffcu};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        for (unsigned flags = 0; flags < 4; flags++) {
            uint32_t pos = poss[(i + flags) % (sizeof poss / sizeof poss[0])];
            char name[96];
            snprintf(name, sizeof name, "fpdu_ulpdu%zu_%s_%s_pos_%x", lens[i],
                     flags & IW_MPA_MARKERS ? "markers" : "nomarkers",
                     flags & IW_MPA_CRC ? "crc" : "nocrc", (unsigned)pos);
            w = fpdu_enc(wire, sizeof wire, pos, flags, u, lens[i]);
            fpdu_save(name, flags, pos, wire, w);
        }
    }
    /* Many markers: a 4 KiB ULPDU from mid-grid. */
    w = fpdu_enc(wire, sizeof wire, 0x100, MC, u, 4096);
    fpdu_save("fpdu_ulpdu4096_markers_crc_pos_100", MC, 0x100, wire, w);

    /* Broken ones (without CRC so only the named defect shows). */
    n = rfc_ulpdu(u, 2);
    w = fpdu_enc(wire, sizeof wire, 0x1ec, IW_MPA_MARKERS, u, n);
    wire[0x200 - 0x1ec + 3] = 0x18; /* FPDUPTR 0x18 instead of 0x14 */
    fpdu_save("fpdu_marker_bad_ptr", IW_MPA_MARKERS, 0x1ec, wire, w);
    wire[0x200 - 0x1ec + 3] = 0x15; /* low bits set: ignored by the receiver */
    fpdu_save("fpdu_marker_ptr_low_bits", IW_MPA_MARKERS, 0x1ec, wire, w);
    wire[0x200 - 0x1ec + 3] = 0x14;
    wire[0x200 - 0x1ec] = 0x80;
    fpdu_save("fpdu_marker_res_nonzero", IW_MPA_MARKERS, 0x1ec, wire, w);
    w = fpdu_enc(wire, sizeof wire, 0, 0, u, 17); /* 17 + 2: one PAD octet */
    wire[19] = 0xFF;
    fpdu_save("fpdu_pad_nonzero", 0, 0, wire, w);
    w = fpdu_enc(wire, sizeof wire, 0, IW_MPA_CRC, u, 17);
    wire[w - 1] ^= 1;
    fpdu_save("fpdu_bad_crc", IW_MPA_CRC, 0, wire, w);
    w = fpdu_enc(wire, sizeof wire, 0, IW_MPA_CRC, u, 64);
    fpdu_save("fpdu_truncated", IW_MPA_CRC, 0, wire, w - 1);
}

/* ---- Deframer streams ------------------------------------------------------- */

/* A stream under construction: wire bytes plus the grid position. */
typedef struct {
    bytes b;
    uint32_t pos;
    unsigned flags;
} stream;

static void st_rr(stream *s, const iw_mpa_rr *rr) {
    b_reserve(&s->b, IW_MPA_RR_HDR_LEN + IW_MPA_PD_MAX);
    s->b.n += rr_enc(s->b.p + s->b.n, rr);
    s->pos = 0; /* §4.3: the grid starts at Full Operation */
}

static void st_fpdu(stream *s, const iw_rdmap_msg *m) {
    bytes seg = {0};
    seg_enc(&seg, m);
    b_reserve(&s->b, IW_MPA_FPDU_WIRE_MAX);
    size_t w = fpdu_enc(s->b.p + s->b.n, s->b.cap - s->b.n, s->pos, s->flags, seg.p, seg.n);
    s->b.n += w;
    s->pos += (uint32_t)w;
    free(seg.p);
}

/* A Send, a multi-marker Write, a Read Request and a Terminate. */
static void st_traffic(stream *s, size_t write_len) {
    static uint8_t big[8192];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i ^ (i >> 8));
    iw_rdmap_msg m = msg_of(IW_OP_SEND, false, IW_QN_SEND);
    m.payload = payload, m.payload_len = 20;
    st_fpdu(s, &m);
    m = msg_of(IW_OP_WRITE, true, 0);
    m.payload = big, m.payload_len = write_len;
    st_fpdu(s, &m);
    m = msg_of(IW_OP_READ_REQ, false, IW_QN_READ_REQ);
    m.u.read_req = read_req_of();
    st_fpdu(s, &m);
    uint8_t raw[18];
    size_t nr = ddp_copy(raw, true);
    m = msg_of(IW_OP_TERMINATE, false, IW_QN_TERMINATE);
    m.u.term = term_of(IW_TERM_DDP_T_BASE_BOUNDS, true, true, false, raw, nr);
    st_fpdu(s, &m);
}

/* fuzz_mpa_deframe input: [cfg][stream_pos][nsplit][chunks][stream]. */
static void df_save(const char *name, iw_df_start start, iw_df_mode markers, iw_df_mode crc,
                    uint32_t stream_pos, const uint16_t *chunks, size_t nchunks,
                    const bytes *stream_bytes) {
    bytes b = {0};
    b_u8(&b, (uint8_t)((start - IW_DF_START_REQUEST) | markers << 2 | crc << 4));
    b_be(&b, stream_pos, 4);
    b_u8(&b, (uint8_t)nchunks);
    for (size_t i = 0; i < nchunks; i++)
        b_be(&b, chunks[i], 2);
    b_put(&b, stream_bytes->p, stream_bytes->n);
    save("fuzz_mpa_deframe", name, b.p, b.n);
    free(b.p);
}

static void gen_deframe(void) {
    static const uint16_t odd[] = {1, 7, 300};
    static const uint16_t mss[] = {1460, 20};
    stream s = {0};

    /* Initiator's side, v2, markers and CRC: AUTO must find both. */
    iw_mpa_rr rr = rr_of(IW_MPA_REQUEST, 2, true, true, false);
    v2_set(&rr, true, false, false, true, 16, 16);
    s.flags = IW_MPA_MARKERS | IW_MPA_CRC;
    st_rr(&s, &rr);
    st_traffic(&s, 1200);
    df_save("stream_req_v2_markers_crc_auto", IW_DF_START_REQUEST, IW_DF_AUTO, IW_DF_AUTO, 0, odd,
            3, &s.b);
    df_save("stream_req_v2_markers_crc_bytewise", IW_DF_START_REQUEST, IW_DF_ON, IW_DF_ON, 0, NULL,
            0, &s.b);
    df_save("stream_req_v2_markers_crc_either", IW_DF_START_RR, IW_DF_AUTO, IW_DF_AUTO, 0, mss, 2,
            &s.b);
    s.b.n -= 10; /* ends inside the Terminate */
    df_save("stream_req_v2_incomplete", IW_DF_START_REQUEST, IW_DF_AUTO, IW_DF_AUTO, 0, odd, 3,
            &s.b);

    /* Responder's side, v1, CRC only. */
    s.b.n = 0;
    rr = rr_of(IW_MPA_REPLY, 1, false, true, false);
    s.flags = IW_MPA_CRC;
    st_rr(&s, &rr);
    st_traffic(&s, 3000);
    df_save("stream_rep_v1_crc", IW_DF_START_REPLY, IW_DF_AUTO, IW_DF_AUTO, 0, mss, 2, &s.b);
    df_save("stream_rep_v1_crc_as_request", IW_DF_START_REQUEST, IW_DF_AUTO, IW_DF_AUTO, 0, mss, 2,
            &s.b);
    s.b.p[s.b.n - 60] ^= 0x40; /* a bad CRC in the Read Request: framing lost */
    df_save("stream_rep_v1_bad_crc", IW_DF_START_REPLY, IW_DF_AUTO, IW_DF_ON, 0, odd, 3, &s.b);

    /* Neither markers nor CRC (as the SoftUiWarp capture). */
    s.b.n = 0;
    rr = rr_of(IW_MPA_REQUEST, 1, false, false, false);
    s.flags = 0;
    st_rr(&s, &rr);
    st_traffic(&s, 100);
    df_save("stream_req_v1_plain", IW_DF_START_REQUEST, IW_DF_AUTO, IW_DF_AUTO, 0, NULL, 0, &s.b);

    /* MPA exits: a reject, a bad revision, a bad key. */
    s.b.n = 0;
    rr = rr_of(IW_MPA_REPLY, 2, false, false, true);
    v2_set(&rr, false, false, false, false, 0, 0);
    st_rr(&s, &rr);
    b_put(&s.b, "ULP bytes after the reject", 26);
    df_save("stream_rep_v2_reject", IW_DF_START_REPLY, IW_DF_AUTO, IW_DF_AUTO, 0, odd, 3, &s.b);
    s.b.p[17] = 7;
    df_save("stream_rep_bad_rev", IW_DF_START_REPLY, IW_DF_AUTO, IW_DF_AUTO, 0, odd, 3, &s.b);
    s.b.p[3] = '?';
    df_save("stream_bad_key", IW_DF_START_RR, IW_DF_AUTO, IW_DF_AUTO, 0, odd, 3, &s.b);

    /* Mid-stream with markers at varied grid positions. */
    static const uint32_t starts[] = {0x1ec, 0x1fc, 0x200, 0x4, 0xfffffe00u};
    for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
        s.b.n = 0;
        s.pos = starts[i];
        s.flags = IW_MPA_MARKERS | IW_MPA_CRC;
        st_traffic(&s, 700 + 100 * i);
        char name[64];
        snprintf(name, sizeof name, "stream_fpdu_markers_crc_pos_%x", (unsigned)starts[i]);
        df_save(name, IW_DF_START_FPDU, IW_DF_ON, IW_DF_AUTO, starts[i], odd, i % 4, &s.b);
    }
    s.b.n = 0;
    s.pos = 0x1ec;
    s.flags = IW_MPA_MARKERS;
    st_traffic(&s, 40);
    s.b.p[0x200 - 0x1ec + 3] = 0x10; /* marker inside the first FPDU points wrong */
    df_save("stream_fpdu_marker_mismatch", IW_DF_START_FPDU, IW_DF_ON, IW_DF_OFF, 0x1ec, odd, 3,
            &s.b);

    /* Regression (docs/fuzzing.md, bug 2): a key wrong in its last octet,
     * fed one octet at a time. Whole, the deframer closes at once (bad key,
     * then LOST); split, the octet that topped up its buffer was never
     * judged and finish() reported an INCOMPLETE frame instead. */
    s.b.n = 0;
    b_put(&s.b, IW_MPA_KEY_REP, IW_MPA_KEY_LEN - 1);
    b_u8(&s.b, 'X');
    df_save("regress_bad_key_last_octet_bytewise", IW_DF_START_REPLY, IW_DF_AUTO, IW_DF_AUTO, 0,
            NULL, 0, &s.b);
    free(s.b.p);
}

/* ---- CRC32c ---------------------------------------------------------------- */

/* fuzz_crc32c input: [align][state][tile: 3][nsplit][splits: 3 each][data]. */
static void crc_save(const char *name, uint8_t align, uint32_t state, uint32_t tile,
                     const uint32_t *splits, size_t nsplit, const uint8_t *data, size_t n) {
    bytes b = {0};
    b_u8(&b, align);
    b_be(&b, state, 4);
    b_be(&b, tile, 3);
    b_u8(&b, (uint8_t)nsplit);
    for (size_t i = 0; i < nsplit; i++)
        b_be(&b, splits[i], 3);
    b_put(&b, data, n);
    save("fuzz_crc32c", name, b.p, b.n);
    free(b.p);
}

static void gen_crc32c(void) {
    uint8_t v[48];
    crc_save("crc_check_123456789", 0, IW_CRC32C_INIT, 0, NULL, 0, (const uint8_t *)"123456789", 9);
    memset(v, 0, 32);
    crc_save("crc_rfc3720_zeros32", 0, IW_CRC32C_INIT, 0, NULL, 0, v, 32);
    memset(v, 0xFF, 32);
    crc_save("crc_rfc3720_ones32", 1, IW_CRC32C_INIT, 0, NULL, 0, v, 32);
    for (int i = 0; i < 32; i++)
        v[i] = (uint8_t)i;
    crc_save("crc_rfc3720_incrementing32", 2, IW_CRC32C_INIT, 0, NULL, 0, v, 32);
    for (int i = 0; i < 32; i++)
        v[i] = (uint8_t)(31 - i);
    crc_save("crc_rfc3720_decrementing32", 3, IW_CRC32C_INIT, 0, NULL, 0, v, 32);
    /* RFC 5044 Fig. 5 CRC coverage: leading marker, header, ULPDU. */
    memset(v, 0, sizeof v);
    v[5] = 0x2a, v[6] = 0x41, v[7] = 0x43, v[19] = 1;
    GEN_CHECK(iw_crc32c(v, 48) == 0x83992352u);
    crc_save("crc_rfc5044_fig5_coverage", 0, IW_CRC32C_INIT, 0, NULL, 0, v, 48);

    /* Sizes at and around each path's thresholds, misaligned, with splits
     * that land on them too. */
    static const uint32_t sizes[] = {63,        64,   191,      192,       255,   256,
                                     2047,      2048, 4096 + 7, 16384 + 1, 65536, 3 * 65536 / 2,
                                     160 * 1024};
    uint32_t splits[4];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char name[64];
        uint8_t align = (uint8_t)(i * 7 % 64);
        snprintf(name, sizeof name, "crc_tiled_%u_align_%u", (unsigned)sizes[i], align);
        splits[0] = sizes[i] / 3, splits[1] = 64, splits[2] = 2048, splits[3] = sizes[i] - 1;
        static const uint8_t pat[] = "MPA FPDU pattern \x00\xff\x5a\xa5";
        crc_save(name, align, 0x12345678u * (uint32_t)i, sizes[i], splits, i % 5, pat,
                 sizeof pat - 1);
    }
}

/* ---- fuzz_place: steps against the engine's placement ------------------- */

/* 16-octet records (layout in fuzz/fuzz_place.c). */
#define PL(b, ...)                                                                                 \
    do {                                                                                           \
        const uint8_t r_[16] = {__VA_ARGS__};                                                      \
        b_put(b, r_, 16);                                                                          \
    } while (0)
#define PL_REG(b, slot, pdb, off, len, tomode, acc)                                                \
    PL(b, 0, (uint8_t)((slot) | (pdb) << 4), (uint8_t)((off) >> 8), (uint8_t)(off),                \
       (uint8_t)((len) >> 8), (uint8_t)(len), tomode, 0, 0, 0, 0, 0, 0, 0, 0, acc)
#define PL_RECV(b, slot, off, len)                                                                 \
    PL(b, 3, slot, (uint8_t)((off) >> 8), (uint8_t)(off), (uint8_t)((len) >> 8), (uint8_t)(len))
#define PL_SEG(b, op, f1, f2, idx, off, plen, how, x, r10, o0, o1, o2, o3, o4)                     \
    PL(b, 5, (uint8_t)((op) | (f1)), f2, idx, (uint8_t)((off) >> 8), (uint8_t)(off),               \
       (uint8_t)((plen) >> 8), (uint8_t)(plen), how, x, (uint8_t)(r10), o0, o1, o2, o3, o4)
#define PL_WRITE(b, idx, off, plen, how)                                                           \
    PL_SEG(b, IW_OP_WRITE, 0, 0, idx, off, plen, how, 0, 0, 0, 0, 0, 0, 0)
#define PL_SEND(b, op, plen, how) PL_SEG(b, op, 0, 0, 0, 0, plen, how, 0, 0, 0, 0, 0, 0, 0)
enum { PL_FLIP = 0x10, PL_NOTLAST = 0x20, PL_BADCRC = 0x40, PL_BADMARK = 0x80 };
enum { A_LW = 1, A_RR = 2, A_RW = 4, A_RA = 8, A_NOINV = 0x10, A_ALL = 15 };
enum { PL_CRC = 0x02, PL_MARKERS = 0x11, PL_HOLD = 0x80 };

static void pl_save(const char *name, uint8_t cfg, uint8_t emss, bytes *b) {
    bytes o = {0};
    b_u8(&o, cfg);
    b_u8(&o, emss);
    b_put(&o, b->p, b->n);
    save("fuzz_place", name, o.p, o.n);
    free(o.p);
    b->n = 0;
}

static void gen_place(void) {
    bytes b = {0};
    /* Tagged: a good Write, then each RFC 5041 §7.1 tagged check failing. */
    PL_REG(&b, 0, 0, 16, 600, 0, A_ALL);
    PL_WRITE(&b, 0, 32, 100, 0);
    PL_WRITE(&b, 0, 501, 100, 0x23); /* one past the end: base/bounds */
    pl_save("place_write_ok_then_bounds", PL_CRC, 20, &b);
    PL_REG(&b, 1, 0, 0, 896, 2, A_RW); /* TO just below 2^64 */
    PL_WRITE(&b, 0, 0, 896, 0x41);
    PL_SEG(&b, IW_OP_WRITE, 0, 0x08, 0, 10, 64, 0, 0, 0, 0, 0, 0, 0, 0); /* 2^64 - 11: wraps */
    pl_save("place_write_top_of_to_space_wrap", PL_CRC, 20, &b);
    PL_REG(&b, 2, 0, 100, 200, 0, A_RW);
    PL(&b, 1, 0); /* dereg: the STag goes stale */
    PL_WRITE(&b, 0, 0, 10, 0x05);
    pl_save("place_write_stale_stag", 0, 0, &b);
    PL_REG(&b, 2, 0, 100, 200, 0, A_RW);
    PL(&b, 2, 0); /* local invalidate */
    PL_WRITE(&b, 0, 0, 10, 0);
    pl_save("place_write_invalidated_stag", PL_CRC, 0, &b);
    PL_REG(&b, 3, 1, 0, 300, 0, A_ALL); /* the other PD */
    PL_WRITE(&b, 0, 0, 10, 0);
    pl_save("place_write_foreign_pd", PL_CRC, 0, &b);
    PL_REG(&b, 4, 0, 0, 300, 0, A_LW | A_RR);
    PL_WRITE(&b, 0, 0, 10, 0);
    pl_save("place_write_no_remote_write", PL_CRC, 0, &b);
    PL_REG(&b, 5, 0, 0, 300, 0, A_RW);
    PL_SEG(&b, IW_OP_WRITE, 0, 1, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0); /* key + 1 */
    PL_SEG(&b, IW_OP_WRITE, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);  /* zero length, STag 0 */
    pl_save("place_write_wrong_key", PL_CRC, 0, &b);
    PL_REG(&b, 5, 0, 0, 300, 0, A_RW);
    PL_SEG(&b, IW_OP_WRITE, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0); /* zero length: unchecked */
    PL_WRITE(&b, 0, 290, 10, 0x7f);
    pl_save("place_write_zero_length_unchecked", PL_CRC, 0, &b);
    /* Overlapping registrations, many small Writes cut in pieces. */
    PL_REG(&b, 6, 0, 0, 896, 0, A_RW);
    PL_REG(&b, 6, 0, 100, 200, 1, A_RW | A_NOINV);
    for (int i = 0; i < 6; i++)
        PL_WRITE(&b, (uint8_t)(i & 1), (uint16_t)(i * 17), (uint16_t)(20 + i * 5),
                 (uint8_t)(i * 19 + 1));
    pl_save("place_overlapping_regions_split", PL_CRC, 0, &b);

    /* Untagged QN 0: buffers, MSNs, MO, multi-segment messages. */
    PL_RECV(&b, 8, 0, 256);
    PL_RECV(&b, 8, 300, 256);
    PL_SEND(&b, IW_OP_SEND, 100, 0);
    PL_SEG(&b, IW_OP_SEND_SE, PL_NOTLAST, 0, 0, 0, 64, 3, 0, 0, 0, 0, 0, 0, 0);
    PL_SEG(&b, IW_OP_SEND_SE, 0, 0, 0, 0, 64, 9, 0, 0, 0, 0, 0, 0, 0);
    PL_SEND(&b, IW_OP_SEND, 1, 0); /* no buffer left */
    pl_save("place_send_two_messages_then_no_buffer", PL_CRC, 0, &b);
    PL_RECV(&b, 8, 0, 100);
    PL_SEND(&b, IW_OP_SEND, 101, 0); /* too long */
    pl_save("place_send_too_long", PL_CRC, 0, &b);
    PL_RECV(&b, 8, 0, 100);
    PL_SEG(&b, IW_OP_SEND, 0, 0x04, 0, 100, 1, 0, 0, 0, 0, 0, 0, 0, 0); /* MO 100: invalid */
    pl_save("place_send_invalid_mo", PL_CRC, 0, &b);
    PL_RECV(&b, 8, 0, 100);
    PL_RECV(&b, 9, 0, 100);
    PL_SEG(&b, IW_OP_SEND, 0, 0x10, 0, 0, 10, 0, 0, 1, 0, 0, 0, 0, 0); /* MSN 2 first */
    PL_SEND(&b, IW_OP_SEND, 10, 0);
    PL_SEG(&b, IW_OP_SEND, 0, 0x30, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0); /* an old MSN */
    pl_save("place_send_out_of_order_then_old_msn", PL_CRC, 0, &b);
    PL_RECV(&b, 8, 0, 100);
    PL_SEG(&b, IW_OP_IMM, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5);
    PL_RECV(&b, 8, 200, 100);
    PL_SEG(&b, IW_OP_IMM_SE, 0, 0, 0, 0, 0, 0, 0x08, 0, 1, 2, 3, 4, 5); /* truncated */
    pl_save("place_immediate_then_truncated", PL_CRC, 0, &b);
    PL_REG(&b, 0, 0, 0, 100, 0, A_RW);
    PL_REG(&b, 1, 0, 0, 100, 0, A_RW | A_NOINV);
    PL_RECV(&b, 8, 0, 100);
    PL_RECV(&b, 8, 100, 100);
    PL_SEG(&b, IW_OP_SEND_INV, 0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0);
    PL_WRITE(&b, 0, 0, 10, 0); /* its STag is gone */
    pl_save("place_send_inv_then_write", PL_CRC, 0, &b);
    PL_REG(&b, 0, 0, 0, 100, 0, A_RW | A_NOINV);
    PL_RECV(&b, 8, 0, 100);
    PL_SEG(&b, IW_OP_SEND_SE_INV, 0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0);
    pl_save("place_send_inv_cannot_invalidate", PL_CRC, 0, &b);

    /* QN 1: Read and Atomic Requests, their responses, the IRD. */
    PL_REG(&b, 0, 0, 0, 896, 0, A_ALL);
    PL_WRITE(&b, 0, 0, 300, 0);
    PL_SEG(&b, IW_OP_READ_REQ, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0, 2, 0); /* 256 from +16 */
    PL_SEG(&b, IW_OP_READ_REQ, 0, 0, 0, 0, 0, 0x11, 0, 0, 0, 0, 0, 0, 0);    /* zero length */
    PL_SEG(&b, IW_OP_READ_REQ, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0x00, 0, 0, 0); /* 4096: bounds */
    pl_save("place_read_requests", PL_CRC | 0x80, 4, &b);
    PL_REG(&b, 0, 0, 0, 896, 0, A_RW); /* no remote read */
    PL_SEG(&b, IW_OP_READ_REQ, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0);
    pl_save("place_read_request_access", PL_CRC | 0x20, 0, &b);
    PL_REG(&b, 0, 0, 0, 896, 0, A_ALL);
    PL_SEG(&b, IW_OP_READ_REQ, 0, 0, 0, 0, 0, PL_HOLD, 0, 0, 0, 16, 0, 0, 0);
    PL_SEG(&b, IW_OP_READ_REQ, 0, 0, 0, 0, 0, PL_HOLD, 0, 0, 0, 16, 0, 0, 0);
    PL_SEG(&b, IW_OP_READ_REQ, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0); /* IRD 2 exceeded */
    pl_save("place_read_requests_over_ird", PL_CRC | 0x40, 0, &b);
    PL_REG(&b, 0, 0, 64, 64, 0, A_RA);
    PL_SEG(&b, IW_OP_ATOMIC_REQ, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1);     /* FetchAdd */
    PL_SEG(&b, IW_OP_ATOMIC_REQ, 0, 0, 0, 8, 0, 0, 0, 0, 0x0d, 0, 0, 0, 2);  /* CmpSwap, match */
    PL_SEG(&b, IW_OP_ATOMIC_REQ, 0, 0, 0, 16, 0, 0, 0, 0, 0x05, 0, 0, 0, 3); /* CmpSwap masked */
    PL_SEG(&b, IW_OP_ATOMIC_REQ, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 4);     /* unaligned */
    pl_save("place_atomics", PL_CRC | 0xE0, 0, &b);
    PL_REG(&b, 0, 0, 64, 64, 0, A_RA);
    PL_SEG(&b, IW_OP_ATOMIC_REQ, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 1); /* AOpCode 1 */
    pl_save("place_atomic_bad_aopcode", PL_CRC | 0x20, 0, &b);
    PL_REG(&b, 0, 0, 0, 512, 0, A_LW); /* our Read's sink */
    PL_REG(&b, 1, 0, 0, 64, 0, A_RW);
    PL_WRITE(&b, 1, 0, 0, 0);                       /* a valid FPDU: now the responder may send */
    PL(&b, 4, 0, 0, 16, 1, 0x20, 0xAB, 0xCD, 0, 1); /* Read of 288 into the sink +16 */
    PL_SEG(&b, IW_OP_READ_RESP, PL_NOTLAST, 0, 0, 0, 200, 0, 0, 0, 0, 0, 0, 0, 0);
    PL_SEG(&b, IW_OP_READ_RESP, 0, 0, 0, 200, 88, 0x33, 0, 0, 0, 0, 0, 0, 0);
    PL_SEG(&b, IW_OP_READ_RESP, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0); /* none outstanding */
    pl_save("place_read_and_responses", PL_CRC, 0, &b);
    PL_SEG(&b, IW_OP_ATOMIC_RESP, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    pl_save("place_unexpected_atomic_response", PL_CRC, 0, &b);

    /* Terminates both ways; framing errors; stateless errors. */
    PL_RECV(&b, 8, 0, 100);
    PL_SEG(&b, IW_OP_TERMINATE, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x04, 3, 0, 0);
    PL_SEND(&b, IW_OP_SEND, 10, 0); /* dropped */
    pl_save("place_terminate_received", PL_CRC, 0, &b);
    for (int cut = 0; cut < 2; cut++) {
        /* A bad CRC read in pieces: verified first, nothing placed; with
         * cut_through (emss bit 7) all of it may land before the verdict. */
        PL_REG(&b, 0, 0, 0, 896, 0, A_RW);
        PL_RECV(&b, 8, 0, 100);
        PL_SEG(&b, IW_OP_WRITE, PL_BADCRC, 0, 0, 0, 500, 0x31, 0, 0, 0, 0, 0, 0, 0);
        PL_SEG(&b, IW_OP_SEND, PL_BADCRC, 0, 0, 0, 50, 0x05, 0, 0, 0, 0, 0, 0, 0);
        PL_WRITE(&b, 0, 0, 10, 0); /* nothing after the Terminate */
        pl_save(cut ? "place_bad_crc_cut_through" : "place_bad_crc_verified_first", PL_CRC,
                cut ? 0x80 : 0, &b);
    }
    PL_REG(&b, 0, 0, 0, 896, 0, A_RW);
    PL_RECV(&b, 8, 0, 100);
    PL_SEND(&b, IW_OP_SEND, 50, 0x09);
    PL_WRITE(&b, 0, 0, 700, 0x21);
    pl_save("place_cut_through_good_crc", PL_CRC | PL_MARKERS, 0x80, &b);
    PL_REG(&b, 0, 0, 0, 896, 0, A_RW);
    for (int i = 0; i < 4; i++)
        PL_WRITE(&b, 0, (uint16_t)(i * 100), 150, (uint8_t)(i * 5 + 2));
    PL_SEG(&b, IW_OP_WRITE, PL_BADMARK, 0, 0, 0, 600, 0x13, 0, 0, 0, 0, 0, 0, 0);
    pl_save("place_markers_then_bad_marker", PL_CRC | PL_MARKERS, 0, &b);
    PL_REG(&b, 0, 0, 0, 896, 0, A_RW);
    PL_WRITE(&b, 0, 0, 700, 0x55);
    PL_WRITE(&b, 0, 100, 600, 0x01);
    pl_save("place_markers_no_crc", PL_MARKERS, 0, &b);
    PL_SEG(&b, IW_OP_WRITE, 0, 0x40, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0);
    pl_save("place_bad_ddp_version", PL_CRC, 0, &b);
    PL_SEG(&b, IW_OP_SEND, 0, 0x80, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0);
    pl_save("place_bad_rdmap_version", PL_CRC, 0, &b);
    PL_SEG(&b, IW_OP_SEND, 0, 0, 0, 0, 10, 0, 1, 9, 0, 0, 0, 0, 0);
    pl_save("place_invalid_qn", PL_CRC, 0, &b);
    PL_SEG(&b, IW_OP_WRITE, PL_FLIP, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0);
    pl_save("place_write_untagged", PL_CRC, 0, &b);
    PL_SEG(&b, 0xC, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0);
    pl_save("place_reserved_opcode", PL_CRC, 0, &b);
    PL_SEG(&b, IW_OP_WRITE, 0, 0, 0, 0, 10, 0, 0x0c, 0, 0, 0, 0, 0, 0);
    pl_save("place_truncated_tagged_header", PL_CRC, 0, &b);
    PL_SEG(&b, IW_OP_READ_REQ, PL_NOTLAST, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    pl_save("place_read_request_segmented", PL_CRC, 0, &b);
    /* Rev 1 Request, no CRC anywhere, small MULPDU for the responses. */
    PL_REG(&b, 0, 0, 0, 896, 0, A_ALL);
    PL_WRITE(&b, 0, 0, 896, 0x7e);
    PL_SEG(&b, IW_OP_READ_REQ, 0, 0, 0, 0, 0, 0, 0, 0, 0x03, 0x80, 0, 0, 0);
    pl_save("place_rev1_nocrc_segmented_response", 0x08 | 0x20, 0, &b);
    /* Regression (found by this harness): the split run reads the leading
     * marker of the Write's FPDU alone (r8 = 0xf4: 4 octets by rx_iov,
     * then iw_conn_recv), and the engine answered a valid FPDU with an MPA
     * CRC Terminate. fuzz_conn_rx has the same case as
     * regress_leading_marker_read_alone_crc. */
    PL_REG(&b, 0, 0, 0, 100, 0, A_RW);
    PL_WRITE(&b, 0, 0, 2, 0xf4);
    pl_save("regress_leading_marker_read_alone_crc", PL_CRC | 0x01, 7, &b);
    free(b.p);
}

/* ---- fuzz_conn_rx: the engine fed a peer's whole stream ------------------ */

/* Header (fuzz/fuzz_conn_rx.c): cfg, rtr_emss, ird, ord, ird_max, fail_at,
 * work; then the chunk descriptors and the stream. */
enum { CR_INIT = 1, CR_REV1 = 2, CR_MARKERS = 4, CR_CRC = 8, CR_P2P = 16, CR_REJECT = 32 };
enum { CR_RECV3 = 3, CR_SEND = 8, CR_WRITE = 16, CR_READ = 32, CR_FADD = 64, CR_CLOSE = 128 };

static void cr_save(const char *name, const uint8_t hdr[7], const uint16_t *chunks, size_t nc,
                    const iw_peer *p) {
    bytes b = {0};
    b_put(&b, hdr, 7);
    b_u8(&b, (uint8_t)nc);
    for (size_t i = 0; i < nc; i++)
        b_be(&b, chunks[i], 2);
    b_put(&b, p->out.p, p->out.len);
    save("fuzz_conn_rx", name, b.p, b.n);
    free(b.p);
}

static void cr_peer(iw_peer *p, iw_mpa_rr_type t, uint8_t rev, bool m, bool c) {
    GEN_CHECK(iw_peer_init(p) == 0);
    iw_mpa_rr rr;
    iw_peer_rr_default(&rr, t);
    rr.rev = rev;
    rr.s = rev >= 2;
    rr.m = m;
    rr.c = c;
    GEN_CHECK(iw_peer_rr(p, &rr) == 0);
}

/* What a peer of the engine's responder sends after the startup: a Write,
 * Sends, a Read Request, an Atomic, Immediate Data, and the responses to
 * the engine's own Read (sink 0x301) and FetchAdd (wr_id 4). */
static void cr_traffic(iw_peer *p) {
    static uint8_t d[3000];
    for (size_t i = 0; i < sizeof d; i++)
        d[i] = (uint8_t)(i * 3 + 7);
    GEN_CHECK(iw_peer_write(p, 0x101, 0x1000, d, 64) == 0);
    GEN_CHECK(iw_peer_send(p, IW_OP_SEND, 0, d, 100) == 0);
    GEN_CHECK(iw_peer_send(p, IW_OP_SEND_SE, 0, d, 512) == 0);
    GEN_CHECK(iw_peer_read_req(p, 0x77000001, 0x5000, 600, 0x101, 0x1100) == 0);
    iw_rdmap_atomic_req a = {0, IW_ATOMIC_FETCH_ADD, 9, 0x201, 0x8000, 5, 0, 0, ~0ull};
    GEN_CHECK(iw_peer_atomic_req(p, &a) == 0);
    static const uint8_t imm[8] = "immdata!";
    GEN_CHECK(iw_peer_imm(p, true, imm) == 0);
    GEN_CHECK(iw_peer_read_resp(p, 0x301, 0x20000, d, 200) == 0);
    iw_rdmap_msg m;
    iw_peer_msg_init(p, &m, IW_OP_ATOMIC_RESP);
    m.u.atomic_resp = (iw_rdmap_atomic_resp){4, 0x1122334455667788ull};
    GEN_CHECK(iw_peer_msg(p, &m, NULL, 0, NULL) == 0);
    GEN_CHECK(iw_peer_write(p, 0x501, 0x40000, d, 1000) == 0);
}

static void gen_conn_rx(void) {
    static const uint16_t mss[] = {1460}, odd[] = {7, 0x4000 | 333, 0x8000 | 100, 0xC000 | 1};
    iw_peer p;
    uint8_t h[7] = {CR_CRC, 7, 16, 16, 0, 0, CR_RECV3 | CR_SEND | CR_WRITE | CR_READ | CR_FADD};

    /* Responder, Rev 2, CRC: everything accepted. */
    cr_peer(&p, IW_MPA_REQUEST, 2, false, true);
    iw_peer_full_operation(&p, false, true);
    cr_traffic(&p);
    cr_save("cr_responder_v2_crc_traffic", h, mss, 1, &p);
    cr_save("cr_responder_v2_crc_traffic_odd_reads", h, odd, 4, &p);
    h[5] = 1;
    cr_save("cr_callback_fails_at_1", h, mss, 1, &p);
    h[5] = 4;
    cr_save("cr_callback_fails_at_4", h, odd, 4, &p);
    h[5] = 0;
    /* ... then a Terminate from the peer, and the LLP's EOF or a close. */
    uint8_t raw[18];
    size_t nr = ddp_copy(raw, true);
    iw_rdmap_msg m;
    iw_peer_msg_init(&p, &m, IW_OP_TERMINATE);
    m.u.term = term_of(IW_TERM_DDP_T_BASE_BOUNDS, true, true, false, raw, nr);
    GEN_CHECK(iw_peer_msg(&p, &m, NULL, 0, NULL) == 0);
    h[6] |= CR_CLOSE;
    cr_save("cr_responder_terminate_received", h, odd, 4, &p);
    h[6] &= (uint8_t)~CR_CLOSE;
    iw_peer_free(&p);

    /* cut_through (ird_max bit 7), a bad CRC among good FPDUs. */
    cr_peer(&p, IW_MPA_REQUEST, 2, false, true);
    iw_peer_full_operation(&p, false, true);
    GEN_CHECK(iw_peer_write(&p, 0x101, 0x1000, "cut-through", 11) == 0);
    iw_peer_fpdu_opt badcrc = {.crc_xor = 0x80};
    iw_peer_msg_init(&p, &m, IW_OP_WRITE);
    m.ddp.stag = 0x101;
    m.ddp.to = 0x1100;
    GEN_CHECK(iw_peer_msg(&p, &m, "not placed unless cut-through", 29, &badcrc) == 0);
    h[4] = 0x80;
    cr_save("cr_cut_through_bad_crc", h, odd, 4, &p);
    h[4] = 0;
    iw_peer_free(&p);

    /* Markers both ways. */
    h[0] = CR_CRC | CR_MARKERS;
    cr_peer(&p, IW_MPA_REQUEST, 2, true, true);
    iw_peer_full_operation(&p, true, true);
    cr_traffic(&p);
    cr_save("cr_responder_markers_crc", h, odd, 4, &p);
    iw_peer_free(&p);

    /* Rev 1, no CRC anywhere, small EMSS for our segmentation. */
    h[0] = CR_REV1;
    h[1] = 7 | 1 << 3;
    cr_peer(&p, IW_MPA_REQUEST, 1, false, false);
    iw_peer_full_operation(&p, false, false);
    cr_traffic(&p);
    cr_save("cr_responder_v1_nocrc_small_emss", h, odd, 4, &p);
    iw_peer_free(&p);
    h[1] = 7;

    /* p2p responder: the first FPDU is the RTR (RFC 6581 §9): a zero-length
     * Write, or a zero-length Send that takes MSN 1. */
    h[0] = CR_CRC | CR_P2P;
    for (int send = 0; send < 2; send++) {
        GEN_CHECK(iw_peer_init(&p) == 0);
        iw_mpa_rr rr;
        iw_peer_rr_default(&rr, IW_MPA_REQUEST);
        rr.v2.p2p = true;
        rr.v2.rtr_write = !send;
        rr.v2.rtr_send = send;
        GEN_CHECK(iw_peer_rr(&p, &rr) == 0);
        iw_peer_full_operation(&p, false, true);
        if (send)
            GEN_CHECK(iw_peer_send(&p, IW_OP_SEND, 0, NULL, 0) == 0);
        else
            GEN_CHECK(iw_peer_write(&p, 0, 0, NULL, 0) == 0);
        cr_traffic(&p);
        cr_save(send ? "cr_p2p_responder_send_rtr" : "cr_p2p_responder_write_rtr", h, odd, 4, &p);
        iw_peer_free(&p);
    }

    /* Initiator: the stream is the peer's Reply and FPDUs. */
    h[0] = CR_INIT | CR_CRC;
    cr_peer(&p, IW_MPA_REPLY, 2, false, true);
    iw_peer_full_operation(&p, false, true);
    cr_traffic(&p);
    cr_save("cr_initiator_v2_crc", h, odd, 4, &p);
    iw_peer_free(&p);
    h[0] = CR_INIT | CR_CRC | CR_P2P;
    GEN_CHECK(iw_peer_init(&p) == 0);
    iw_mpa_rr rr;
    iw_peer_rr_default(&rr, IW_MPA_REPLY);
    rr.v2.p2p = true;
    rr.v2.rtr_read = true;
    rr.v2.ord = 64; /* over our IRD of 16, within ird_max: raised */
    GEN_CHECK(iw_peer_rr(&p, &rr) == 0);
    iw_peer_full_operation(&p, false, true);
    GEN_CHECK(iw_peer_read_resp(&p, 0, 0, NULL, 0) == 0); /* answers the Read RTR */
    cr_traffic(&p);
    cr_save("cr_initiator_p2p_read_rtr", h, odd, 4, &p);
    rr.r = true;
    iw_peer_free(&p);
    GEN_CHECK(iw_peer_init(&p) == 0);
    GEN_CHECK(iw_peer_rr(&p, &rr) == 0);
    GEN_CHECK(iw_peer_raw(&p, "ULP octets after the reject", 27) == 0);
    cr_save("cr_initiator_rejected", h, mss, 1, &p);
    iw_peer_free(&p);

    /* Responder rejects; a startup timeout; a bad key. */
    h[0] = CR_CRC | CR_REJECT;
    cr_peer(&p, IW_MPA_REQUEST, 2, false, true);
    cr_save("cr_responder_rejects", h, mss, 1, &p);
    h[0] = CR_CRC;
    static const uint16_t late[] = {10, 0x2000 | 100};
    cr_save("cr_mpa_timeout_mid_request", h, late, 2, &p);
    p.out.p[5] = 'X';
    cr_save("cr_bad_key", h, odd, 4, &p);
    p.out.p[5] = ' ';
    p.out.p[18] = 0x02; /* PD_Length 0x204 > 512: closed at 20 octets (RFC 5044 §7.1.1) */
    cr_save("cr_pd_length_over_512", h, odd, 4, &p);
    iw_peer_free(&p);

    /* Violations: each answered by one Terminate. */
    static const uint8_t d[16] = "0123456789abcdef";
    cr_peer(&p, IW_MPA_REQUEST, 2, false, true);
    iw_peer_full_operation(&p, false, true);
    GEN_CHECK(iw_peer_write(&p, 0x999, 0, d, 16) == 0);
    GEN_CHECK(iw_peer_write(&p, 0x101, 0x1000, d, 16) == 0);
    cr_save("cr_write_invalid_stag", h, odd, 4, &p);
    iw_peer_free(&p);
    cr_peer(&p, IW_MPA_REQUEST, 2, false, true);
    iw_peer_full_operation(&p, false, true);
    iw_peer_fpdu_opt bad = {.crc_xor = 0x1};
    iw_peer_msg_init(&p, &m, IW_OP_WRITE);
    m.ddp.stag = 0x101;
    m.ddp.to = 0x1000;
    GEN_CHECK(iw_peer_msg(&p, &m, d, 16, &bad) == 0);
    cr_save("cr_bad_crc", h, odd, 4, &p);
    iw_peer_free(&p);
    h[6] = 0; /* no receive buffers */
    cr_peer(&p, IW_MPA_REQUEST, 2, false, true);
    iw_peer_full_operation(&p, false, true);
    GEN_CHECK(iw_peer_send(&p, IW_OP_SEND_INV, 0x101, d, 16) == 0);
    cr_save("cr_send_without_buffer", h, mss, 1, &p);
    iw_peer_free(&p);

    /* Regression: with markers and CRC, an FPDU whose leading marker is
     * read by one iw_conn_recv and the rest by the next was rejected with
     * an MPA CRC error (the whole-FPDU fast path restarted the CRC without
     * the marker); read the other way it was accepted. */
    h[0] = CR_CRC | CR_MARKERS;
    h[6] = 0;
    static const uint16_t at_marker[] = {23, 3, 0x1000}; /* lengths are 1 + v */
    cr_peer(&p, IW_MPA_REQUEST, 2, false, true);
    iw_peer_full_operation(&p, true, true);
    GEN_CHECK(iw_peer_write(&p, 0x101, 0x1000, d, 2) == 0);
    GEN_CHECK(iw_peer_write(&p, 0x101, 0x1000, d, 16) == 0);
    cr_save("regress_leading_marker_read_alone_crc", h, at_marker, 3, &p);
    iw_peer_free(&p);

    /* Regression: a callback that fails on a flushed completion (here the
     * first of three receives flushed by the close a bad key causes) was
     * ignored: iw_conn_recv returned success, not IW_ERR_CALLBACK. */
    uint8_t hf[7] = {CR_CRC, 7, 16, 16, 0, 1, CR_RECV3};
    cr_peer(&p, IW_MPA_REQUEST, 2, false, true);
    p.out.p[15] = 'X';
    cr_save("regress_callback_fails_on_flushed_recv", hf, mss, 1, &p);
    iw_peer_free(&p);
    /* Regression: after a reject, work posted before the startup never
     * completed (no flush on that way into CLOSED). */
    hf[0] = CR_CRC | CR_REJECT;
    hf[5] = 0;
    hf[6] = CR_RECV3 | CR_SEND;
    cr_peer(&p, IW_MPA_REQUEST, 2, false, true);
    cr_save("regress_reject_leaves_posted_work", hf, mss, 1, &p);
    iw_peer_free(&p);
}

/* ---- fuzz_diff: one FPDU stream, engine against codecs ------------------ */

enum { DF_MARKERS = 1, DF_CRC = 2, DF_PEER_CRC = 4, DF_FRAMED = 8, DF_REV1 = 16 };

/* A framed record: [flags][len:2][ULPDU]. */
static void df_rec(bytes *b, uint8_t flags, const iw_rdmap_msg *m) {
    bytes seg = {0};
    seg_enc(&seg, m);
    b_u8(b, flags);
    b_be(b, seg.n, 2);
    b_put(b, seg.p, seg.n);
    free(seg.p);
}

/* fuzz_diff_plugin reads the same input (and two setup bits of its own):
 * every differential seed is both targets'. */
static void diff_save(const char *name, uint8_t cfg, uint8_t setup, const bytes *b) {
    bytes o = {0};
    b_u8(&o, cfg);
    b_u8(&o, setup);
    b_put(&o, b->p, b->n);
    save("fuzz_diff", name, o.p, o.n);
    save("fuzz_diff_plugin", name, o.p, o.n);
    free(o.p);
}

static void gen_diff(void) {
    bytes b = {0};
    iw_rdmap_msg m;
    static uint8_t bulk[600];
    for (size_t i = 0; i < sizeof bulk; i++)
        bulk[i] = (uint8_t)(i * 5 + 3);
    /* Accepted by both: a Write, a Send, a Read Request, an Atomic, then
     * Immediate Data; buffers posted by the setup byte. */
    m = msg_of(IW_OP_WRITE, true, 0);
    m.ddp.stag = 0x101, m.ddp.to = 0x1000, m.payload = payload, m.payload_len = 64;
    df_rec(&b, 0, &m);
    m = msg_of(IW_OP_SEND, false, IW_QN_SEND);
    m.payload = payload, m.payload_len = 32;
    df_rec(&b, 0, &m);
    m = msg_of(IW_OP_READ_REQ, false, IW_QN_READ_REQ);
    m.u.read_req = (iw_rdmap_read_req){0x7701, 0x5000, 100, 0x101, 0x1000};
    df_rec(&b, 0, &m);
    m = msg_of(IW_OP_ATOMIC_REQ, false, IW_QN_READ_REQ);
    m.ddp.msn = 2;
    m.u.atomic_req =
        (iw_rdmap_atomic_req){0, IW_ATOMIC_FETCH_ADD, 1, 0x201, 0x8000, 1, 0, 0, ~0ull};
    df_rec(&b, 0, &m);
    m = msg_of(IW_OP_IMM, false, IW_QN_SEND);
    m.ddp.msn = 2;
    memcpy(m.u.imm, "imm-data", 8);
    df_rec(&b, 0, &m);
    bytes good = {0};
    b_put(&good, b.p, b.n);
    diff_save("diff_accepted_crc", DF_CRC | DF_FRAMED | 0x40, 2, &b);
    diff_save("diff_accepted_markers_crc_iov", DF_MARKERS | DF_CRC | DF_FRAMED | 0x40, 2 | 8 | 16,
              &b);
    diff_save("diff_accepted_rev1_nocrc", DF_FRAMED | DF_REV1 | 0x40, 2, &b);
    diff_save("diff_accepted_cut_through", DF_CRC | DF_FRAMED | 0x40, 2 | 32, &b);
    diff_save("diff_stateful_no_ird", DF_CRC | DF_FRAMED, 2, &b); /* Read Request: 1/2/2 */
    diff_save("diff_stateful_no_buffer", DF_CRC | DF_FRAMED | 0x40, 0, &b); /* Send: 1/2/2 */

    /* Each stateless reject after a good Write. */
    struct {
        const char *name;
        unsigned op;
        bool tagged;
        uint32_t qn;
        uint8_t ctl_or, rv;
        size_t cut;
        uint8_t flags;
    } bad[] = {
        {"diff_bad_ddp_version_tagged", IW_OP_WRITE, true, 0, 0x02, 1, 0, 0},
        {"diff_bad_ddp_version_untagged", IW_OP_SEND, false, 0, 0x02, 1, 0, 0},
        {"diff_bad_qn", IW_OP_SEND, false, 7, 0, 1, 0, 0},
        {"diff_bad_rdmap_version", IW_OP_SEND, false, 0, 0, 3, 0, 0},
        {"diff_reserved_opcode", 0xD, false, 0, 0, 1, 0, 0},
        {"diff_send_on_qn1", IW_OP_SEND, false, 1, 0, 1, 0, 0},
        {"diff_short_ddp_header", IW_OP_SEND, false, 0, 0, 1, 10, 0},
        {"diff_short_read_request", IW_OP_READ_REQ, false, 1, 0, 1, 30, 0},
        {"diff_bad_crc", IW_OP_WRITE, true, 0, 0, 1, 0, 1},
        {"diff_bad_marker", IW_OP_WRITE, true, 0, 0, 1, 0, 2},
        {"diff_ulpdu_length_off", IW_OP_WRITE, true, 0, 0, 1, 0, 4},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        b.n = 0;
        m = msg_of(IW_OP_WRITE, true, 0);
        m.ddp.stag = 0x101, m.ddp.to = 0x1000, m.payload = bulk, m.payload_len = sizeof bulk;
        df_rec(&b, 0, &m);
        m = msg_of(bad[i].op, bad[i].tagged, bad[i].qn);
        m.ddp.dv = (uint8_t)(m.ddp.dv | bad[i].ctl_or);
        m.rv = bad[i].rv;
        m.ddp.stag = 0x101, m.ddp.to = 0x1000, m.payload = payload, m.payload_len = 40;
        if (bad[i].op == IW_OP_READ_REQ)
            m.u.read_req = read_req_of(), m.payload_len = 0;
        size_t at = b.n;
        df_rec(&b, bad[i].flags, &m);
        if (bad[i].cut) { /* cut the ULPDU short, fixing its record length */
            b.n = at + 3 + bad[i].cut;
            b.p[at + 1] = 0;
            b.p[at + 2] = (uint8_t)bad[i].cut;
        }
        df_rec(&b, 0, &m); /* never judged */
        diff_save(bad[i].name, DF_CRC | DF_MARKERS | DF_FRAMED | 0x20, 3, &b);
    }
    /* A control message split over two segments: the codec notes it, the
     * engine rejects it (Remote Operation / Unspecified). */
    b.n = 0;
    iw_ddp_hdr h = {.last = false,
                    .dv = IW_DDP_VERSION,
                    .rsvd_ulp = iw_rdmap_ctrl(IW_OP_IMM),
                    .qn = IW_QN_SEND,
                    .msn = 1};
    uint8_t seg[IW_DDP_UNTAGGED_HDR_LEN + 4];
    GEN_CHECK(iw_ddp_encode_hdr(seg, sizeof seg, &h) == IW_DDP_UNTAGGED_HDR_LEN);
    memcpy(seg + IW_DDP_UNTAGGED_HDR_LEN, "imm-", 4);
    b_u8(&b, 0);
    b_be(&b, sizeof seg, 2);
    b_put(&b, seg, sizeof seg);
    diff_save("diff_immediate_split_over_segments", DF_CRC | DF_FRAMED, 2, &b);

    /* Stateful verdicts the shadow can give from the stream alone. */
    struct {
        const char *name;
        unsigned op1, op2;
        uint32_t msn1, msn2;
    } st2[] = {
        {"diff_shadow_qn1_msn_out_of_order", IW_OP_READ_REQ, IW_OP_READ_REQ, 2, 1},
        {"diff_shadow_send_msn_replay", IW_OP_SEND, IW_OP_SEND, 1, 1},
        {"diff_shadow_write_after_send_inv", IW_OP_SEND_INV, IW_OP_WRITE, 1, 0},
        {"diff_shadow_invalidate_twice", IW_OP_SEND_INV, IW_OP_SEND_SE_INV, 1, 2},
        {"diff_shadow_terminate_msn", IW_OP_TERMINATE, IW_OP_SEND, 2, 1},
        {"diff_shadow_unexpected_read_response", IW_OP_READ_RESP, IW_OP_SEND, 0, 1},
        {"diff_shadow_unexpected_atomic_response", IW_OP_ATOMIC_RESP, IW_OP_SEND, 1, 1},
    };
    for (size_t i = 0; i < sizeof st2 / sizeof st2[0]; i++) {
        b.n = 0;
        unsigned ops[2] = {st2[i].op1, st2[i].op2};
        uint32_t msns[2] = {st2[i].msn1, st2[i].msn2};
        for (int k = 0; k < 2; k++) {
            bool tagged = ops[k] == IW_OP_WRITE || ops[k] == IW_OP_READ_RESP;
            uint32_t qn = ops[k] == IW_OP_READ_REQ      ? IW_QN_READ_REQ
                          : ops[k] == IW_OP_TERMINATE   ? IW_QN_TERMINATE
                          : ops[k] == IW_OP_ATOMIC_RESP ? IW_QN_ATOMIC_RESP
                                                        : IW_QN_SEND;
            m = msg_of(ops[k], tagged, qn);
            m.ddp.msn = msns[k];
            m.ddp.stag = 0x101, m.ddp.to = 0x1000;
            m.payload = payload, m.payload_len = 16;
            if (ops[k] == IW_OP_SEND_INV || ops[k] == IW_OP_SEND_SE_INV)
                m.ddp.rsvd_ulp2 = 0x101;
            if (ops[k] == IW_OP_READ_REQ) {
                m.u.read_req = (iw_rdmap_read_req){0x7701, 0x5000, 16, 0x101, 0x1000};
                m.payload_len = 0;
            }
            if (ops[k] == IW_OP_TERMINATE) {
                m.u.term = term_of(IW_TERM_RDMAP_OP_UNSPECIFIED, false, false, false, NULL, 0);
                m.payload_len = 0;
            }
            if (ops[k] == IW_OP_ATOMIC_RESP) {
                m.u.atomic_resp = (iw_rdmap_atomic_resp){7, 8};
                m.payload_len = 0;
            }
            df_rec(&b, 0, &m);
        }
        diff_save(st2[i].name, DF_CRC | DF_FRAMED | 0x40, 3, &b);
    }

    /* Raw streams: the good records framed by gen, then garbage. */
    stream st = {0};
    st.flags = IW_MPA_CRC;
    m = msg_of(IW_OP_WRITE, true, 0);
    m.ddp.stag = 0x101, m.ddp.to = 0x1000, m.payload = payload, m.payload_len = 64;
    st_fpdu(&st, &m);
    m = msg_of(IW_OP_SEND, false, IW_QN_SEND);
    m.payload = payload, m.payload_len = 32;
    st_fpdu(&st, &m);
    diff_save("diff_raw_crc", DF_CRC, 1, &st.b);
    b_put(&st.b, "\x00\x10garbage after the FPDUs", 25);
    diff_save("diff_raw_crc_then_garbage", DF_CRC, 1, &st.b);
    free(st.b.p);
    st = (stream){0};
    st.flags = IW_MPA_CRC | IW_MPA_MARKERS;
    st_traffic(&st, 1500);
    diff_save("diff_raw_markers_crc_traffic", DF_CRC | DF_MARKERS | 0x20, 1, &st.b);
    free(st.b.p);

    /* Regressions, fuzz_diff_plugin: an FPDU with a bad CRC got the CRC's
     * Terminate and also its ULPDU's DDP/RDMAP verdict (RFC 5044 §6: that
     * ULPDU never reaches DDP), and one with a bad CRC and a bad marker got
     * both MPA verdicts (§8: markers are judged where the CRC holds). The
     * engine sends the CRC's alone. Setup bit 6: each FPDU in two segments. */
    b.n = 0;
    m = msg_of(IW_OP_SEND, false, 5); /* bad QN too: 1/2/1 */
    m.ddp.dv = 2;                     /* and bad DDP version: 1/2/6 */
    m.payload = payload, m.payload_len = 40;
    df_rec(&b, 1, &m);
    diff_save("regress_plugin_crc_bad_ddp_verdict_too", DF_CRC | DF_FRAMED, 2 | 0x40, &b);
    b.n = 0;
    m = msg_of(IW_OP_WRITE, true, 0);
    m.ddp.stag = 0x101, m.ddp.to = 0x1000, m.payload = bulk, m.payload_len = sizeof bulk;
    df_rec(&b, 1 | 2, &m);
    diff_save("regress_plugin_crc_bad_marker_verdict_too", DF_CRC | DF_MARKERS | DF_FRAMED, 2, &b);
    free(good.p);
    free(b.p);
}

/* ---- fuzz_agent: request lines (docs/agent-protocol.md) ------------------ */

static void gen_agent(void) {
    static const struct {
        const char *name, *line;
    } lines[] = {
        {"agent_hello", "{\"op\":\"hello\"}"},
        {"agent_reset", "{\"op\":\"reset\"}"},
        {"agent_listen_mpa", "{\"op\":\"listen\",\"port\":0,\"mpa\":{\"rev\":2,\"crc\":true,"
                             "\"markers\":true,\"p2p\":true,\"rtr\":\"read\",\"ird\":16,\"ord\":16,"
                             "\"private_data_hex\":\"0102abcd\",\"reject\":false}}"},
        {"agent_connect", "{\"op\":\"connect\",\"host\":\"127.0.0.1\",\"port\":7401,"
                          "\"mpa\":{\"rev\":1,\"crc\":false,\"rtr\":\"send\",\"ird\":16383}}"},
        {"agent_reg_mr",
         "{\"op\":\"reg_mr\",\"len\":4096,\"access\":[\"local_write\","
         "\"remote_read\",\"remote_write\",\"remote_atomic\"],\"fill\":7,\"pd\":1}"},
        {"agent_dereg_mr", "{\"op\":\"dereg_mr\",\"stag\":\"0x00000101\"}"},
        {"agent_invalidate", "{\"op\":\"invalidate\",\"stag\":257}"},
        {"agent_read_mr",
         "{\"op\":\"read_mr\",\"stag\":\"0x00000101\",\"offset\":100,\"len\":3000}"},
        {"agent_write_mr", "{\"op\":\"write_mr\",\"stag\":\"0x101\",\"offset\":0,\"data_hex\":"
                           "\"00ff10Ab\"}"},
        {"agent_post_recv", "{\"op\":\"post_recv\",\"len\":64,\"count\":2}"},
        {"agent_send_inv", "{\"op\":\"post_send\",\"kind\":\"send_se_inv\",\"inv_stag\":"
                           "\"0x00000201\",\"data_hex\":\"68656c6c6f\"}"},
        {"agent_write_local", "{\"op\":\"post_send\",\"kind\":\"write\",\"remote_stag\":\"0x301\","
                              "\"remote_to\":\"0x7f0000001000\",\"stag\":\"0x101\",\"to\":"
                              "\"0x1000\",\"len\":512}"},
        {"agent_read", "{\"op\":\"post_send\",\"kind\":\"read\",\"remote_stag\":\"0x301\","
                       "\"remote_to\":\"0x0\",\"sink_stag\":\"0x101\",\"sink_to\":\"0x1000\","
                       "\"len\":4096}"},
        {"agent_fetch_add", "{\"op\":\"post_send\",\"kind\":\"fetch_add\",\"remote_stag\":"
                            "\"0x401\",\"remote_to\":\"0x8000\",\"add\":\"0xffffffffffffffff\","
                            "\"add_mask\":\"0x8000000080000000\"}"},
        {"agent_cmp_swap", "{\"op\":\"post_send\",\"kind\":\"cmp_swap\",\"remote_stag\":\"0x401\","
                           "\"remote_to\":\"0x8008\",\"compare\":5,\"swap\":6,"
                           "\"compare_mask\":\"0xff\",\"swap_mask\":\"0xff\"}"},
        {"agent_immediate", "{\"op\":\"post_send\",\"kind\":\"immediate_se\",\"data_hex\":"
                            "\"0011223344556677\"}"},
        {"agent_poll", "{\"op\":\"poll\",\"timeout_ms\":50}"},
        {"agent_close", " { \"op\" : \"close\" } "},
        {"agent_guard", "{\"op\":\"guard\",\"stag\":\"0x00000101\"}"},
        /* Rejected ones (iw_target_test.c's list and more). */
        {"agent_bad_unclosed", "{"},
        {"agent_bad_array", "[]"},
        {"agent_bad_op_type", "{\"op\":1}"},
        {"agent_bad_op", "{\"op\":\"fly\"}"},
        {"agent_bad_len", "{\"op\":\"reg_mr\",\"len\":-1}"},
        {"agent_bad_access", "{\"op\":\"reg_mr\",\"len\":16,\"access\":[\"root\"]}"},
        {"agent_bad_hex_stag", "{\"op\":\"read_mr\",\"stag\":\"0xzz\"}"},
        {"agent_bad_odd_hex", "{\"op\":\"write_mr\",\"stag\":1,\"offset\":0,\"data_hex\":\"abc\"}"},
        {"agent_bad_kind", "{\"op\":\"post_send\",\"kind\":\"teleport\"}"},
        {"agent_bad_rtr", "{\"op\":\"listen\",\"mpa\":{\"rtr\":\"fax\"}}"},
        {"agent_bad_escape", "\"\\uZZZZ\""},
        {"agent_deep",
         "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"},
        {"agent_unicode_escapes", "{\"op\":\"connect\",\"host\":\"\\u0068\\ud83d\\ude00\\n\","
                                  "\"port\":1e3}"},
        {"agent_numbers", "{\"op\":\"poll\",\"timeout_ms\":6.0e5,\"x\":[-0.5e-3,1E+2,true,null]}"},
        {"agent_nul_inside", "{\"op\":\"hello\"}\0trailing"},
        /* Regression: inv_stag was left uninitialised (stack garbage) for
         * every kind but send_inv/send_se_inv when the line left it out. */
        {"regress_post_send_without_inv_stag",
         "{\"op\":\"post_send\",\"kind\":\"send\",\"data_hex\":\"00\"}"},
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        size_t n = strlen(lines[i].line);
        if (strcmp(lines[i].name, "agent_nul_inside") == 0)
            n += 1 + strlen("trailing");
        save("fuzz_agent", lines[i].name, (const uint8_t *)lines[i].line, n);
    }
}

/* ---- DDP over SCTP chunk payloads (RFC 5043 §5, RFC 6581 §7) ---------- */

/* fuzz_sctp: a selector octet (0 segment, 1 control, 2 adaptation), then
 * the payload, made by the library's encoders where the chunk is legal. */
static void sctp_save(const char *name, uint8_t sel, const uint8_t *p, size_t n) {
    uint8_t f[1 + IW_SCTP_CTRL_HDR_LEN + IW_SCTP_PD_MAX + 8];
    GEN_CHECK(n + 1 <= sizeof f);
    f[0] = sel;
    memcpy(f + 1, p, n);
    save("fuzz_sctp", name, f, n + 1);
}

static void gen_sctp(void) {
    uint8_t b[IW_SCTP_CTRL_HDR_LEN + IW_SCTP_PD_MAX + 8], h[64];
    static const uint8_t pd[IW_SCTP_PD_MAX + 4];
    /* A Send's DDP segment in a DDP Segment Chunk, DDP-SSN 3. */
    iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, 1, 0, true);
    iw_ssize hl = iw_rdmap_encode_hdr(h, sizeof h, &m);
    GEN_CHECK(hl > 0);
    iw_ssize n = iw_sctp_seg_encode(b, sizeof b, 3, h, (size_t)hl, ulp_pd, sizeof ulp_pd - 1);
    GEN_CHECK(n > 0);
    sctp_save("seg_send", 0, b, (size_t)n);
    sctp_save("seg_ssn_only", 0, b, 2);
    sctp_save("seg_short", 0, b, 1);
    /* Every function code, with and without Private Data. */
    for (uint16_t fc = 1; fc <= 7; fc++) {
        iw_sctp_ctrl c = {.ssn = 0, .fc = fc};
        c.v2.ird = 4;
        c.v2.ord = 2;
        c.v2.p2p = fc == IW_SCTP_FC_ENH_INITIATE;
        c.v2.rtr_write = c.v2.p2p;
        char name[64];
        n = iw_sctp_ctrl_encode(b, sizeof b, &c);
        GEN_CHECK(n > 0);
        snprintf(name, sizeof name, "ctrl_fc%u_empty", (unsigned)fc);
        sctp_save(name, 1, b, (size_t)n);
        if (fc == IW_SCTP_FC_TERMINATE)
            continue;
        c.ulp_pd = ulp_pd;
        c.ulp_pd_len = sizeof ulp_pd - 1;
        n = iw_sctp_ctrl_encode(b, sizeof b, &c);
        GEN_CHECK(n > 0);
        snprintf(name, sizeof name, "ctrl_fc%u_pd", (unsigned)fc);
        sctp_save(name, 1, b, (size_t)n);
    }
    /* Rule breakers: Private Data of 513, a Terminate with Private Data,
     * an enhanced code without its data, an unassigned code, Experimental. */
    iw_sctp_ctrl c = {.fc = IW_SCTP_FC_REJECT, .ulp_pd = pd, .ulp_pd_len = IW_SCTP_PD_MAX};
    n = iw_sctp_ctrl_encode(b, sizeof b, &c);
    GEN_CHECK(n == IW_SCTP_CTRL_HDR_LEN + IW_SCTP_PD_MAX);
    b[n] = 0;
    sctp_save("ctrl_pd_513", 1, b, (size_t)n + 1);
    const uint8_t term_pd[] = {0, 0, 0, 4, 0xEE};
    sctp_save("ctrl_term_with_pd", 1, term_pd, sizeof term_pd);
    const uint8_t enh_short[] = {0, 0, 0, 5, 0x80};
    sctp_save("ctrl_enh_short", 1, enh_short, sizeof enh_short);
    const uint8_t unassigned[] = {0, 0, 0, 8};
    sctp_save("ctrl_fc_unassigned", 1, unassigned, sizeof unassigned);
    const uint8_t exper[] = {0, 9, 0xFF, 0xFF, 1, 2, 3};
    sctp_save("ctrl_experimental", 1, exper, sizeof exper);
    /* The Adaptation Layer Indication, and a wrong type and length. */
    n = iw_sctp_adapt_encode(b, sizeof b, IW_SCTP_ADAPT_DDP);
    GEN_CHECK(n == IW_SCTP_ADAPT_PARAM_LEN);
    sctp_save("adapt_ddp", 2, b, (size_t)n);
    b[1] = 0x07;
    sctp_save("adapt_bad_type", 2, b, (size_t)n);
    b[1] = 0x06;
    b[3] = 0x0C;
    sctp_save("adapt_bad_len", 2, b, (size_t)n);
}

/* ---- fuzz_sctp_conn: the engine over SCTP (RFC 5043 §6) ------------------ */

/* A record as fuzz_sctp_conn.c reads it: selector, length, chunk. */
static void sc_rec(bytes *b, uint8_t sel, const uint8_t *p, size_t n) {
    b_u8(b, sel);
    b_be(b, n, 2);
    b_put(b, p, n);
}
static void sc_ctrl(bytes *b, uint16_t ssn, uint16_t fc) {
    uint8_t c[IW_SCTP_CTRL_HDR_LEN + 32];
    iw_sctp_ctrl ctrl = {.ssn = ssn, .fc = fc, .ulp_pd = ulp_pd, .ulp_pd_len = 8};
    ctrl.v2.ird = ctrl.v2.ord = 2;
    if (fc == IW_SCTP_FC_TERMINATE)
        ctrl.ulp_pd_len = 0;
    iw_ssize n = iw_sctp_ctrl_encode(c, sizeof c, &ctrl);
    GEN_CHECK(n > 0);
    sc_rec(b, 1, c, (size_t)n);
}
/* A DDP Segment Chunk with a Send (msn) or, stag != 0, a Write to TO 0. */
static void sc_seg(bytes *b, uint16_t ssn, uint32_t msn, uint32_t stag, size_t pay) {
    uint8_t h[64], c[2 + 64 + 512];
    iw_rdmap_msg m = stag ? iw_rdmap_msg_tagged(IW_OP_WRITE, stag, 0, true)
                          : iw_rdmap_msg_untagged(IW_OP_SEND, 0, msn, 0, true);
    iw_ssize hl = iw_rdmap_encode_hdr(h, sizeof h, &m);
    GEN_CHECK(hl > 0 && pay <= 512);
    static const uint8_t zero[512];
    iw_ssize n = iw_sctp_seg_encode(c, sizeof c, ssn, h, (size_t)hl, zero, pay);
    GEN_CHECK(n > 0);
    sc_rec(b, 0, c, (size_t)n);
}

static void gen_sctp_conn(void) {
    static const char *const names[] = {"passive_enh", "passive_plain", "active_enh",
                                        "active_plain"};
    for (int k = 0; k < 4; k++) {
        bool active = k >= 2, plain = k & 1;
        bytes b = {0};
        b_u8(&b, (uint8_t)((active ? 1 : 0) | (plain ? 2 : 0) | 0x40));
        uint16_t fc = active ? (plain ? IW_SCTP_FC_ACCEPT : IW_SCTP_FC_ENH_ACCEPT)
                             : (plain ? IW_SCTP_FC_INITIATE : IW_SCTP_FC_ENH_INITIATE);
        sc_ctrl(&b, 0, fc);
        sc_seg(&b, 1, 1, 0, 40);      /* a Send */
        sc_seg(&b, 2, 0, 0x100, 300); /* a Write to an STag nobody registered */
        sc_ctrl(&b, 3, IW_SCTP_FC_TERMINATE);
        save("fuzz_sctp_conn", names[k], b.p, b.n);
        free(b.p);
    }
    /* Reordered: the Send chunks arrive last first, then the Initiate. */
    bytes b = {0};
    b_u8(&b, 0x20);
    for (uint16_t ssn = 5; ssn >= 1; ssn--)
        sc_seg(&b, ssn, ssn, 0, 8);
    sc_ctrl(&b, 0, IW_SCTP_FC_INITIATE);
    save("fuzz_sctp_conn", "passive_reordered", b.p, b.n);
    free(b.p);
    /* The passive side rejects; then a Reject to the active side. */
    b = (bytes){0};
    b_u8(&b, 0x08);
    sc_ctrl(&b, 0, IW_SCTP_FC_ENH_INITIATE);
    sc_seg(&b, 1, 1, 0, 8);
    save("fuzz_sctp_conn", "passive_rejects", b.p, b.n);
    free(b.p);
    b = (bytes){0};
    b_u8(&b, 0x01);
    sc_ctrl(&b, 0, IW_SCTP_FC_ENH_REJECT);
    sc_seg(&b, 1, 1, 0, 8);
    save("fuzz_sctp_conn", "active_rejected", b.p, b.n);
    free(b.p);
    /* Rule breakers: a segment first, a stale DDP-SSN, a short chunk. */
    b = (bytes){0};
    b_u8(&b, 0x00);
    sc_seg(&b, 0, 1, 0, 8);
    save("fuzz_sctp_conn", "passive_segment_first", b.p, b.n);
    free(b.p);
    b = (bytes){0};
    b_u8(&b, 0x02);
    sc_ctrl(&b, 0, IW_SCTP_FC_INITIATE);
    sc_seg(&b, 1, 1, 0, 8);
    sc_seg(&b, 1, 2, 0, 8);
    const uint8_t one = 0;
    sc_rec(&b, 0, &one, 1);
    save("fuzz_sctp_conn", "passive_stale_ssn", b.p, b.n);
    free(b.p);
}

/* ---- fuzz_revoke: registration changes under queued work ---------------- */

/* Records as fuzz_revoke.c lays them out. */
static void rv_reg(bytes *b, uint8_t slot, uint16_t len, uint8_t access) {
    b_u8(b, 0);
    b_u8(b, slot);
    b_be(b, len - 1, 2);
    b_u8(b, access);
}
static void rv_op_slot(bytes *b, uint8_t op, uint8_t slot) {
    b_u8(b, op);
    b_u8(b, slot);
}
static void rv_op3(bytes *b, uint8_t op, uint8_t slot, uint16_t off, uint16_t len) {
    rv_op_slot(b, op, slot);
    b_be(b, off, 2);
    b_be(b, len, 2);
}
static void rv_feed_all(bytes *b, bool iov) {
    b_u8(b, 5);
    b_be(b, 0xFFFF, 2);
    b_u8(b, iov);
}
static void rv_drain(bytes *b, uint16_t n) {
    b_u8(b, 6);
    b_be(b, n, 2);
}

static void gen_revoke(void) {
    const char *t = "fuzz_revoke";
    for (int cfg = 0; cfg < 4; cfg++) {
        /* cfg: cut_through and markers on/off, CRC on, EMSS 400 */
        uint8_t c = (uint8_t)((cfg & 1) | (cfg & 2 ? 0x06 : 0) | 0x08 | 0x30);
        char name[64];
        bytes b = {0};
        /* A response half sent at an FPDU boundary, its region withdrawn. */
        b_u8(&b, c);
        rv_reg(&b, 0, 16000, 0x01);
        rv_op3(&b, 3, 0, 0, 16000);
        rv_feed_all(&b, cfg & 1);
        rv_drain(&b, 2000);
        rv_op_slot(&b, 1, 0);
        snprintf(name, sizeof name, "read-resp-dereg-mid-%d", cfg);
        save(t, name, b.p, b.n);
        b.n = 0;
        /* Not started at all, behind another; then invalidated. */
        b_u8(&b, c);
        rv_reg(&b, 0, 12000, 0x01);
        rv_reg(&b, 1, 3000, 0x03);
        rv_op3(&b, 3, 0, 0, 12000);
        rv_op3(&b, 3, 1, 100, 2900);
        rv_feed_all(&b, false);
        rv_drain(&b, 900);
        rv_op_slot(&b, 2, 1);
        snprintf(name, sizeof name, "read-resp-queued-inval-%d", cfg);
        save(t, name, b.p, b.n);
        b.n = 0;
        /* Sends and Writes from regions, one region withdrawn while they wait. */
        b_u8(&b, c);
        rv_reg(&b, 2, 5000, 0x04);
        rv_reg(&b, 3, 700, 0x00);
        rv_op3(&b, 7, 2, 10, 4000);
        rv_op3(&b, 8, 3, 0, 700);
        b_u8(&b, 9);
        b_be(&b, 300, 2);
        rv_drain(&b, 150);
        rv_op_slot(&b, 1, 3);
        snprintf(name, sizeof name, "send-write-source-dereg-%d", cfg);
        save(t, name, b.p, b.n);
        b.n = 0;
        /* A Write half received when its region goes. */
        b_u8(&b, c);
        rv_reg(&b, 4, 8000, 0x02);
        rv_op3(&b, 4, 4, 64, 3000);
        b_u8(&b, 5);
        b_be(&b, 700, 2);
        b_u8(&b, (uint8_t)(cfg & 1));
        rv_op_slot(&b, 1, 4);
        rv_reg(&b, 4, 8000, 0x02); /* a new region, likely at the same place */
        rv_feed_all(&b, cfg & 1);
        snprintf(name, sizeof name, "write-split-dereg-%d", cfg);
        save(t, name, b.p, b.n);
        b.n = 0;
        /* The peer's receive path: buffers, Sends, then traffic after a Terminate. */
        b_u8(&b, c);
        b_u8(&b, 10);
        b_u8(&b, 11);
        b_be(&b, 1500, 2);
        rv_reg(&b, 5, 4096, 0x01);
        rv_op3(&b, 3, 5, 4000, 1000); /* beyond bounds: Terminate */
        rv_feed_all(&b, false);
        rv_drain(&b, 0xFFFF);
        snprintf(name, sizeof name, "recv-and-bad-read-%d", cfg);
        save(t, name, b.p, b.n);
        free(b.p);
    }
}

/* ---- Mid-stream synchronisation --------------------------------------------- */

/* fuzz_mpa_sync input: [mode][pos0: 4][ncands][ncands x cand: 2][data]. */
static void sync_save(const char *name, uint8_t mode, uint32_t pos0, const uint16_t *c, size_t nc,
                      const uint8_t *data, size_t n) {
    bytes b = {0};
    b_u8(&b, mode);
    b_be(&b, pos0, 4);
    b_u8(&b, (uint8_t)nc);
    for (size_t i = 0; i < nc; i++)
        b_be(&b, c[i], 2);
    b_put(&b, data, n);
    save("fuzz_mpa_sync", name, b.p, b.n);
    free(b.p);
}

/* Sends from stream position pos; returns the octets written. */
static size_t sync_stream(uint8_t *out, size_t cap, uint32_t pos, unsigned flags, unsigned count,
                          size_t pay0) {
    size_t len = 0;
    for (unsigned i = 0; i < count; i++) {
        uint8_t u[1400];
        size_t ul = pay0 + 37 * i;
        GEN_CHECK(ul <= sizeof u);
        memset(u, 0, ul);
        memcpy(u, payload, sizeof payload - 1 < ul ? sizeof payload - 1 : ul);
        iw_rdmap_msg m = msg_of(IW_OP_SEND, false, 0);
        m.ddp.msn = 1 + i;
        uint8_t h[64];
        iw_ssize hl = iw_rdmap_encode_hdr(h, sizeof h, &m);
        GEN_CHECK(hl > 0);
        iw_ssize w = iw_mpa_fpdu_encode(out + len, cap - len, pos, flags, h, (size_t)hl, u, ul);
        GEN_CHECK(w > 0);
        len += (size_t)w;
        pos += (uint32_t)w;
    }
    return len;
}

/* Streams whose segments do not start at FPDUs, where markers name them:
 * markers + CRC cut mid-FPDU (pcaps/cut-seqwrap-markers-crc.pcap), markers
 * without CRC in 1-octet segments (pcaps/cut-v1-markers-nocrc.pcap), and
 * garbage with a marker-shaped pattern every 512 octets. */
static void gen_sync(void) {
    static uint8_t st[12000];
    uint16_t c[32];
    const uint8_t final = 0x20, have_pos = 0x10;
    size_t n = sync_stream(st, sizeof st, 1460, IW_MPA_MARKERS | IW_MPA_CRC, 6, 1000);
    for (size_t i = 0; i < 4; i++)
        c[i] = (uint16_t)(i * 1460);
    sync_save("sync_markers_crc_cut", final, 0, c, 4, st + 660, n - 660);
    sync_save("sync_markers_crc_cut_live", 0, 0, c, 4, st + 660, n - 660);
    sync_save("sync_markers_crc_known_grid", final | have_pos | 2, 1460 + 660, c, 4, st + 660,
              n - 660);
    n = sync_stream(st, sizeof st, 0, IW_MPA_MARKERS, 4, 700);
    for (size_t i = 0; i < 32; i++)
        c[i] = (uint16_t)i;
    sync_save("sync_markers_nocrc_1octet", final, 0, c, 32, st, n);
    sync_save("sync_markers_nocrc_1octet_cut", final, 0, c, 32, st + 9, n - 14);
    sync_save("sync_markers_nocrc_crc_on", final | (2 << 2), 0, c, 4, st + 9, n - 9);
    /* Garbage: a marker (RESERVED 0, FPDUPTR 8) before a version-1 header
     * shape every 512 octets, the rest a fixed pseudo-random pattern. */
    uint32_t x = 7;
    for (size_t i = 0; i < 4096; i++) {
        x = x * 1103515245u + 12345u;
        st[i] = (uint8_t)(x >> 16);
    }
    for (size_t g = 64; g + 4 <= 4096; g += 512) {
        st[g] = st[g + 1] = st[g + 2] = 0;
        st[g + 3] = 8;
        st[g - 6] = 0x41;
        st[g - 5] = 0x43;
    }
    sync_save("sync_garbage_marker_shapes", final, 0, c, 32, st, 4096);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    root = argv[1];
    GEN_CHECK(mkdir(root, 0777) == 0 || errno == EEXIST);
    gen_mpa_rr();
    gen_ddp_rdmap();
    gen_terminate();
    gen_fpdu();
    gen_deframe();
    gen_crc32c();
    gen_place();
    gen_conn_rx();
    gen_diff();
    gen_agent();
    gen_revoke();
    gen_sctp();
    gen_sctp_conn();
    gen_sync();
    printf("wrote %zu seeds under %s\n", written, root);
    return 0;
}
