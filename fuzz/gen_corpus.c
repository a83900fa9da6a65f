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

#define GEN_CHECK FUZZ_CHECK

static const char *root;
static size_t written;

/* Growable byte buffer. */
typedef struct {
    uint8_t *p;
    size_t n, cap;
} bytes;

static void b_reserve(bytes *b, size_t more) {
    if (b->n + more <= b->cap) return;
    while (b->cap < b->n + more)
        b->cap = b->cap ? 2 * b->cap : 1024;
    b->p = realloc(b->p, b->cap);
    GEN_CHECK(b->p != NULL);
}
static void b_put(bytes *b, const void *p, size_t n) {
    b_reserve(b, n);
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
}
static void b_u8(bytes *b, uint8_t v) {
    b_put(b, &v, 1);
}
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
    iw_rdmap_msg m = {.rv = IW_RDMAP_VERSION, .opcode = (uint8_t)opcode};
    m.ddp.tagged = tagged;
    m.ddp.last = true;
    m.ddp.dv = IW_DDP_VERSION;
    if (tagged) {
        m.ddp.stag = 0x1234abcd;
        m.ddp.to = 0x0000100000000040ull;
    } else {
        m.ddp.qn = qn;
        m.ddp.msn = 1;
    }
    return m;
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
    if (r) t.rreq = read_req_of();
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
    if (tn) memcpy(out + n, tail, tn);
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
    printf("wrote %zu seeds under %s\n", written, root);
    return 0;
}
