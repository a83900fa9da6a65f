/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gen_samples: builds the sample streams in reference-stack/tools/samples/
 * with libiwarp's ENCODERS, so the samples and the decoder can only agree
 * if the codecs are symmetric. A ctest regenerates them and compares byte
 * for byte with the committed files.
 *
 *   gen_samples OUTDIR [--bin]
 *
 * writes OUTDIR/mpa-v2-markers-crc.hex, OUTDIR/mpa-v1-reply-nocrc.bin and
 * OUTDIR/violations.hex (hex files in xxd's layout, so the ASCII shows);
 * --bin also writes the binary of each .hex sample, for the tests. */
#include <iwarp/iwarp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct stream {
    uint8_t buf[16384];
    size_t len;
    uint32_t pos;   /* grid position of the next FPDU (RFC 5044 §4.3) */
    unsigned flags; /* IW_MPA_MARKERS | IW_MPA_CRC */
} stream;

static void die(const char *what) {
    fprintf(stderr, "gen_samples: %s\n", what);
    exit(1);
}

static void put_rr(stream *s, const iw_mpa_rr *rr) {
    iw_ssize n = iw_mpa_rr_encode(s->buf + s->len, sizeof s->buf - s->len, rr);
    if (n < 0)
        die("iw_mpa_rr_encode failed");
    s->len += (size_t)n;
    s->pos = 0; /* the grid starts at the first octet of Full Operation */
}

/* One FPDU carrying m's headers and `payload` (which may go beyond what the
 * opcode allows: the violations sample needs that). Returns its wire offset. */
static size_t put_msg(stream *s, const iw_rdmap_msg *m, const void *payload, size_t paylen) {
    uint8_t hdr[128];
    iw_ssize hl = iw_rdmap_encode_hdr(hdr, sizeof hdr, m);
    if (hl < 0)
        die("iw_rdmap_encode_hdr failed");
    size_t at = s->len;
    iw_ssize n = iw_mpa_fpdu_encode(s->buf + s->len, sizeof s->buf - s->len, s->pos, s->flags, hdr,
                                    (size_t)hl, payload, paylen);
    if (n < 0)
        die("iw_mpa_fpdu_encode failed");
    s->len += (size_t)n;
    s->pos += (uint32_t)n;
    return at;
}

static iw_rdmap_msg untagged(unsigned op, uint32_t qn, uint32_t msn) {
    return iw_rdmap_msg_untagged(op, qn, msn, 0, true);
}

static iw_rdmap_msg tagged(unsigned op, uint32_t stag, uint64_t to) {
    return iw_rdmap_msg_tagged(op, stag, to, true);
}

static void pattern(uint8_t *p, size_t n, uint8_t seed) {
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + i * 7);
}

/* ---- output ---- */

static FILE *open_out(const char *dir, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(1);
    }
    return f;
}

static void close_out(FILE *f) {
    if (fclose(f) != 0)
        die("write failed");
}

static void write_bin(const char *dir, const char *name, const stream *s) {
    FILE *f = open_out(dir, name);
    fwrite(s->buf, 1, s->len, f);
    close_out(f);
}

/* xxd's default layout: "%08x: ", 16 octets in groups of two, a space,
 * then the ASCII column (0x20-0x7E as is, else '.'). */
static void write_xxd(const char *dir, const char *name, const char *comment, const stream *s) {
    FILE *f = open_out(dir, name);
    fputs(comment, f);
    for (size_t off = 0; off < s->len; off += 16) {
        size_t n = s->len - off < 16 ? s->len - off : 16;
        char hexcol[41];
        memset(hexcol, ' ', 40);
        hexcol[40] = '\0';
        for (size_t i = 0; i < n; i++) {
            char two[3];
            snprintf(two, sizeof two, "%02x", s->buf[off + i]);
            memcpy(hexcol + (i / 2) * 5 + (i % 2) * 2, two, 2);
        }
        fprintf(f, "%08zx: %s ", off, hexcol);
        for (size_t i = 0; i < n; i++) {
            uint8_t c = s->buf[off + i];
            fputc(c >= 0x20 && c < 0x7F ? c : '.', f);
        }
        fputc('\n', f);
    }
    close_out(f);
}

/* ---- sample 1: MPA v2 Request, markers and CRC, every opcode ---- */

static void sample_v2(stream *s) {
    memset(s, 0, sizeof *s);
    static const char pd[] = "iwarpkit";
    iw_mpa_rr rr;
    memset(&rr, 0, sizeof rr);
    rr.type = IW_MPA_REQUEST;
    rr.m = true; /* the initiator wants markers from the responder too */
    rr.c = true;
    rr.s = true;
    rr.rev = IW_MPA_REV2;
    rr.v2.p2p = true;
    rr.v2.rtr_send = true;
    rr.v2.rtr_read = true;
    rr.v2.ird = 16;
    rr.v2.ord = 16;
    rr.ulp_pd = (const uint8_t *)pd;
    rr.ulp_pd_len = sizeof pd - 1;
    put_rr(s, &rr);
    s->flags = IW_MPA_MARKERS | IW_MPA_CRC;

    uint8_t big[2048];
    iw_rdmap_msg m;

    /* RFC 6581 §9.2: the RTR, a zero-length Send, comes first. */
    m = untagged(IW_OP_SEND, IW_QN_SEND, 1);
    put_msg(s, &m, NULL, 0);

    pattern(big, 600, 0x10); /* > 512: a marker falls inside the ULPDU */
    m = tagged(IW_OP_WRITE, 0x1a2b3c01, 0x00007f0000001000ull);
    put_msg(s, &m, big, 600);

    m = untagged(IW_OP_READ_REQ, IW_QN_READ_REQ, 1);
    m.u.read_req.sink_stag = 0x1a2b3c02;
    m.u.read_req.sink_to = 0x00007f0000200000ull;
    m.u.read_req.read_size = 1000;
    m.u.read_req.src_stag = 0x0000be01;
    m.u.read_req.src_to = 0x0000000000400000ull;
    put_msg(s, &m, NULL, 0);

    pattern(big, 1000, 0x80); /* two markers inside */
    m = tagged(IW_OP_READ_RESP, 0x00005a01, 0x0000000000800000ull);
    put_msg(s, &m, big, 1000);

    static const char hello[] = "Hello, iWARP!";
    m = untagged(IW_OP_SEND, IW_QN_SEND, 2);
    put_msg(s, &m, hello, sizeof hello - 1);

    static const char bye[] = "bye, STag 0x1a2b3c01";
    m = untagged(IW_OP_SEND_INV, IW_QN_SEND, 3);
    m.ddp.rsvd_ulp2 = 0x1a2b3c01; /* RFC 5040 §4.3: the STag to invalidate */
    put_msg(s, &m, bye, sizeof bye - 1);

    /* Send SE sized so the next FPDU starts exactly on the marker grid:
     * its leading marker then belongs to it (RFC 5044 §4.2). */
    m = untagged(IW_OP_SEND_SE, IW_QN_SEND, 4);
    size_t n = 600;
    while ((s->pos + iw_mpa_fpdu_wire_len(IW_DDP_UNTAGGED_HDR_LEN + n, s->pos, true)) %
               IW_MPA_MARKER_INTERVAL !=
           0)
        n++;
    pattern(big, n, 0x33);
    put_msg(s, &m, big, n);
    if (s->pos % IW_MPA_MARKER_INTERVAL != 0)
        die("grid alignment failed");

    static const char done[] = "done";
    m = untagged(IW_OP_SEND_SE_INV, IW_QN_SEND, 5);
    m.ddp.rsvd_ulp2 = 0x1a2b3c02;
    put_msg(s, &m, done, sizeof done - 1);

    static const uint8_t imm1[8] = {0xca, 0xfe, 0xba, 0xbe, 0xde, 0xad, 0xbe, 0xef};
    m = untagged(IW_OP_IMM, IW_QN_SEND, 6);
    memcpy(m.u.imm, imm1, sizeof imm1);
    put_msg(s, &m, NULL, 0);

    static const uint8_t imm2[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    m = untagged(IW_OP_IMM_SE, IW_QN_SEND, 7);
    memcpy(m.u.imm, imm2, sizeof imm2);
    put_msg(s, &m, NULL, 0);

    /* RFC 7306 §5.2.1: FetchAdd sends Compare Data 0 and Compare Mask all
     * ones; Atomic Requests share QN 1 with Read Requests. */
    m = untagged(IW_OP_ATOMIC_REQ, IW_QN_READ_REQ, 2);
    m.u.atomic_req.aopcode = IW_ATOMIC_FETCH_ADD;
    m.u.atomic_req.req_id = 1;
    m.u.atomic_req.stag = 0x1a2b3c03;
    m.u.atomic_req.to = 0x00007f0000300000ull;
    m.u.atomic_req.add_swap = 1;
    m.u.atomic_req.add_swap_mask = 0;
    m.u.atomic_req.compare = 0;
    m.u.atomic_req.compare_mask = ~0ull;
    put_msg(s, &m, NULL, 0);

    m = untagged(IW_OP_ATOMIC_REQ, IW_QN_READ_REQ, 3);
    m.u.atomic_req.aopcode = IW_ATOMIC_CMP_SWAP;
    m.u.atomic_req.req_id = 2;
    m.u.atomic_req.stag = 0x1a2b3c03;
    m.u.atomic_req.to = 0x00007f0000300008ull;
    m.u.atomic_req.add_swap = 0x1122334455667788ull;
    m.u.atomic_req.add_swap_mask = ~0ull;
    m.u.atomic_req.compare = 0;
    m.u.atomic_req.compare_mask = ~0ull;
    put_msg(s, &m, NULL, 0);

    m = untagged(IW_OP_ATOMIC_RESP, IW_QN_ATOMIC_RESP, 1);
    m.u.atomic_resp.req_id = 7;
    m.u.atomic_resp.orig = 0x41;
    put_msg(s, &m, NULL, 0);

    /* Terminate for a Send (QN 0, MSN 9, 100 octets) that found no posted
     * buffer: DDP 1/2/0x02, with the DDP Segment Length and the copied
     * untagged header (RFC 5040 §4.8, §7.1 rule 2). */
    iw_rdmap_msg bad = untagged(IW_OP_SEND, IW_QN_SEND, 9);
    uint8_t bad_hdr[IW_DDP_UNTAGGED_HDR_LEN];
    if (iw_rdmap_encode_hdr(bad_hdr, sizeof bad_hdr, &bad) != IW_DDP_UNTAGGED_HDR_LEN)
        die("encode copied header");
    m = untagged(IW_OP_TERMINATE, IW_QN_TERMINATE, 1);
    m.u.term.layer = (uint8_t)iw_term_layer(IW_TERM_DDP_UT_NO_BUFFER);
    m.u.term.etype = (uint8_t)iw_term_etype(IW_TERM_DDP_UT_NO_BUFFER);
    m.u.term.ecode = (uint8_t)iw_term_ecode(IW_TERM_DDP_UT_NO_BUFFER);
    m.u.term.m = true;
    m.u.term.d = true;
    m.u.term.ddp_seg_len = IW_DDP_UNTAGGED_HDR_LEN + 100;
    m.u.term.ddp_raw = bad_hdr;
    m.u.term.ddp_raw_len = sizeof bad_hdr;
    put_msg(s, &m, NULL, 0);
}

/* ---- sample 2: MPA v1 Reply, no markers, no CRC ---- */

static void sample_v1(stream *s) {
    memset(s, 0, sizeof *s);
    static const char pd[] = "accept";
    iw_mpa_rr rr;
    memset(&rr, 0, sizeof rr);
    rr.type = IW_MPA_REPLY;
    rr.rev = IW_MPA_REV1;
    rr.ulp_pd = (const uint8_t *)pd;
    rr.ulp_pd_len = sizeof pd - 1;
    put_rr(s, &rr);
    s->flags = 0; /* M=0 and C=0 both ways: the CRC field is sent as zero */

    iw_rdmap_msg m;
    static const char ready[] = "ready";
    m = untagged(IW_OP_SEND, IW_QN_SEND, 1);
    put_msg(s, &m, ready, sizeof ready - 1);

    /* Hex-looking text and a run of zeros: the hex-dump dialect tests use
     * this file, and hexdump/od squeeze repeated lines into '*'. */
    uint8_t wr[100];
    static const char txt[] = "cafe babe dead beef 0123456789abcdef";
    memset(wr, 0, sizeof wr);
    memcpy(wr, txt, sizeof txt - 1);
    m = tagged(IW_OP_WRITE, 0x00a1b2c3, 0x10000);
    put_msg(s, &m, wr, sizeof wr);

    uint8_t rd[64];
    static const char cols[] = "AB CD EF 01 23 45 67 89 ab cd ef";
    memset(rd, ' ', sizeof rd);
    memcpy(rd + 2, cols, sizeof cols - 1);
    m = tagged(IW_OP_READ_RESP, 0x00d4e5f6, 0x20000);
    put_msg(s, &m, rd, sizeof rd);

    static const char done[] = "done";
    m = untagged(IW_OP_SEND_SE, IW_QN_SEND, 2);
    put_msg(s, &m, done, sizeof done - 1);

    /* A zero-length RDMA Read (RFC 5040 §5.2.1: not validated). */
    m = untagged(IW_OP_READ_REQ, IW_QN_READ_REQ, 1);
    m.u.read_req.sink_stag = 0x00a1b2c4;
    m.u.read_req.src_stag = 0x00c0ffee;
    put_msg(s, &m, NULL, 0);
}

/* ---- sample 3: stateless violations, then a CRC error ---- */

static void sample_violations(stream *s) {
    memset(s, 0, sizeof *s);
    iw_mpa_rr rr;
    memset(&rr, 0, sizeof rr);
    rr.type = IW_MPA_REQUEST;
    rr.c = true;
    rr.rev = IW_MPA_REV1;
    put_rr(s, &rr);
    s->flags = IW_MPA_CRC;

    static const char ok[] = "ok";
    iw_rdmap_msg m = untagged(IW_OP_SEND, IW_QN_SEND, 1);
    put_msg(s, &m, ok, 2);

    /* Ignored on receive, reported as notes (RFC 5041 §4.1, RFC 5040 §4.1,
     * §4.3). */
    m = untagged(IW_OP_SEND, IW_QN_SEND, 2);
    m.ddp.rsvd = 0x5;
    m.rsv = 1;
    m.ddp.rsvd_ulp2 = 0xdeadbeef;
    put_msg(s, &m, ok, 2);

    /* RFC 5041 §4.1: DV must be 1. */
    m = untagged(IW_OP_SEND, IW_QN_SEND, 3);
    m.ddp.dv = 0;
    put_msg(s, &m, ok, 2);

    m = tagged(IW_OP_WRITE, 0x1000, 0x2000);
    m.ddp.dv = 2;
    put_msg(s, &m, ok, 2);

    /* RFC 5040 §4.1: RV must be 1. */
    m = untagged(IW_OP_SEND, IW_QN_SEND, 4);
    m.rv = 0;
    put_msg(s, &m, ok, 2);

    /* Reserved opcode 0xC. */
    m = untagged(0xC, IW_QN_SEND, 5);
    put_msg(s, &m, ok, 2);

    /* A Send on the Read Request queue (RFC 5040 §4.2 Fig. 5). */
    m = untagged(IW_OP_SEND, IW_QN_READ_REQ, 6);
    put_msg(s, &m, ok, 2);

    /* QN 5 is not one of RDMAP's queues (RFC 5040 §3.1, RFC 7306 §4). */
    m = untagged(IW_OP_SEND, 5, 7);
    put_msg(s, &m, ok, 2);

    /* Immediate Data with 12 octets instead of 8 (RFC 7306 §6.3). */
    m = untagged(IW_OP_IMM, IW_QN_SEND, 8);
    memset(m.u.imm, 0x49, sizeof m.u.imm);
    put_msg(s, &m, "MORE", 4);

    /* AOpCode 1 is Reserved (RFC 7306 §5.2.1). */
    m = untagged(IW_OP_ATOMIC_REQ, IW_QN_READ_REQ, 1);
    m.u.atomic_req.aopcode = 1;
    m.u.atomic_req.stag = 0x1a2b3c03;
    m.u.atomic_req.to = 0x1000;
    put_msg(s, &m, NULL, 0);

    /* A Read Request with 4 octets after its 28-octet header. */
    m = untagged(IW_OP_READ_REQ, IW_QN_READ_REQ, 2);
    m.u.read_req.read_size = 16;
    put_msg(s, &m, "XTRA", 4);

    /* A Terminate with an unregistered triple and a non-zero octet after
     * its fields: legal to receive, reported as notes. */
    m = untagged(IW_OP_TERMINATE, IW_QN_TERMINATE, 1);
    m.u.term.layer = 0x2;
    m.u.term.etype = 0x0;
    m.u.term.ecode = 0x42;
    put_msg(s, &m, "\x01\x00\x00\x00", 4);

    /* A Send whose payload was corrupted after its CRC was computed. */
    static const char hello[] = "Hello, CRC";
    m = untagged(IW_OP_SEND, IW_QN_SEND, 9);
    size_t at = put_msg(s, &m, hello, sizeof hello - 1);
    s->buf[at + 2 + IW_DDP_UNTAGGED_HDR_LEN] ^= 0x20; /* 'H' -> 'h' */

    /* After a CRC error nothing locates the next FPDU (RFC 5044 §6): these
     * octets are reported as framing_lost. */
    m = untagged(IW_OP_SEND, IW_QN_SEND, 10);
    put_msg(s, &m, ok, 2);
    m = untagged(IW_OP_SEND, IW_QN_SEND, 11);
    put_msg(s, &m, ok, 2);
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--bin") != 0)) {
        fprintf(stderr, "usage: gen_samples OUTDIR [--bin]\n");
        return 2;
    }
    const char *dir = argv[1];
    bool bin = argc == 3;
    stream *s = malloc(sizeof *s);
    if (!s)
        die("out of memory");

    sample_v2(s);
    write_xxd(dir, "mpa-v2-markers-crc.hex",
              "# One direction (initiator -> responder) of an iWARP stream: MPA v2 Request\n"
              "# (S=1, p2p, RTR send+read, IRD/ORD 16), then FPDUs with markers and CRC\n"
              "# for every RDMAP opcode 0x0-0xB. Generated by tools/tests/gen_samples.c.\n"
              "# Decode: iwarp-decode --hex mpa-v2-markers-crc.hex\n",
              s);
    if (bin)
        write_bin(dir, "mpa-v2-markers-crc.bin", s);

    sample_v1(s);
    write_bin(dir, "mpa-v1-reply-nocrc.bin", s);

    sample_violations(s);
    write_xxd(dir, "violations.hex",
              "# An MPA v1 Request (C=1, no markers), then FPDUs with stateless\n"
              "# violations, and a CRC error followed by octets nothing can frame.\n"
              "# Generated by tools/tests/gen_samples.c.\n"
              "# Decode: iwarp-decode --hex violations.hex\n",
              s);
    if (bin)
        write_bin(dir, "violations.bin", s);
    free(s);
    return 0;
}
