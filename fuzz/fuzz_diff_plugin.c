/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Differential: the engine's verdicts against the Wireshark plugin's decode
 * of the same bytes, frame by frame.
 *
 * fz_diff_run (fuzz_diff_core.c, the whole of fuzz_diff) runs the input:
 * the engine, as an MPA responder, is fed the peer's stream one FPDU at a
 * time and its verdicts are checked against the codecs' and the shadow's.
 * Its trace then becomes a capture of that TCP connection, in the order the
 * engine met it: handshake, the peer's MPA Request, the engine's Reply, and
 * for each FPDU the peer's segment(s), then what the engine wrote in answer.
 * The plugin dissects it under epan as tshark -2 does (fuzz_epan.c; TCP and
 * MPA reassembly on, CRCs checked), and the harness reads the second pass's
 * tree: per direction, one record per iwk_mpa item (one MPA PDU), holding
 * the RFC 6580 triples of its Terminate verdicts (the expert items
 * iwk_rdmap.must_terminate.<name> and iwk_mpa.must_terminate.<name>, named after IW_TERM_LIST,
 * docs/wireshark-plugin.md), close verdicts (iwk_mpa.close.<name>), what a
 * stateful verdict assumes (iwk_rdmap.shadow.assumes) and, for a Terminate
 * message, the triple it carries (iwk_rdmap.term.triple).
 *
 * Input: fuzz_diff's (fuzz_diff_core.h), and two setup bits it leaves
 * alone: bit 6, each peer FPDU goes as two TCP segments (cut in the middle;
 * the plugin reassembles it); bit 7, the TCP heuristic finds the stream
 * (else Decode As).
 *
 * The rule checked: the plugin says what the engine did, as far as a
 * capture can show it (docs/fuzzing.md, "fuzz_diff's precedence rule"):
 *  - the startup frames get no verdict, and the plugin frames the peer's
 *    stream as the deframer did: one FPDU per step, of the same wire length,
 *    as long as the engine's stream lasts;
 *  - an FPDU gets at most one Terminate verdict: an RNIC sends one;
 *  - a frame the codecs reject: exactly the engine's Terminate triple (which
 *    is the codecs', fuzz_diff_core.c checks that), or for a deferred codec
 *    verdict (misaligned Atomic Request) the codecs' triple;
 *  - a codec-clean frame the engine terminated: the engine's triple, or
 *    none when the reason is state a capture cannot show (registrations,
 *    posted buffers: fz_diff_shadow_must_see is false and the library's own
 *    shadow is silent too), or, under the shadow's caveat
 *    (iwk_rdmap.shadow.assumes: a receive buffer), the shadow's triple when
 *    the engine met an untagged buffer check first (RFC 5041 §7.1, 1/2/2 -
 *    1/2/5);
 *  - a frame the engine accepted (or a peer Terminate it took): none;
 *  - on a codec-clean frame the plugin's verdict is the library shadow's,
 *    triple and assumption: the plugin feeds its shadow from its own
 *    framing, so this checks that glue;
 *  - the engine's own frames get no verdict, and its Terminate (if any)
 *    decodes to the triple the engine sent.
 * Frames after the end of the engine's stream are judged by nobody.
 *
 * FUZZ_VERBOSE=1 prints the records; FUZZ_PLUGIN_PCAP=file writes the
 * capture (fuzz_epan.h). */
#include <epan/proto.h>

#include "fuzz_diff_core.h"
#include "fuzz_epan.h"

#define NTERM 4 /* verdicts kept per record; more is a failure anyway */

/* What the plugin showed for one MPA PDU. */
typedef struct {
    bool rr, fpdu;     /* a startup frame (iwk_mpa.type) / an FPDU (iwk_mpa.fpdu) */
    unsigned wire_len; /* the FPDU's wire octets */
    unsigned nterm;    /* Terminate verdicts */
    uint16_t term[NTERM];
    bool unregistered; /* iwk_rdmap.must_terminate.unregistered */
    unsigned nclose;   /* iwk_mpa.close.* */
    bool assume_buf;   /* iwk_rdmap.shadow.assumes: the receive buffer */
    bool has_term_msg; /* a Terminate message, carrying term_msg */
    uint16_t term_msg;
} pl_pdu;

typedef struct {
    pl_pdu *v;
    size_t n, cap;
} pl_dir;

typedef struct {
    const int *dirs; /* direction of each capture frame */
    pl_dir dir[2];   /* 0: the peer's (client), 1: the engine's */
    int frame_dir;   /* the current frame's */
    pl_pdu *cur;     /* record being filled (in the current frame) */
} pl_walk;

/* The expert items' names come from the triple list: iwk_<proto>.must_terminate.<name>
 * in lower case (docs/wireshark-plugin.md). */
static const struct {
    const char *name;
    uint16_t triple;
} term_names[] = {
#define IW_X_(name, l, e, c, rfc, text) {#name, IW_TERM_TRIPLE(l, e, c)},
    IW_TERM_LIST(IW_X_)
#undef IW_X_
};

static int hf_proto_mpa = -1;
static const char *recv_buf_phrase;

static void collect(proto_node *node, gpointer data) {
    pl_walk *w = data;
    field_info *fi = PNODE_FINFO(node);
    if (fi && fi->hfinfo) {
        const char *ab = fi->hfinfo->abbrev;
        pl_pdu *r = w->cur;
        const char *t = NULL;
        if (strncmp(ab, "iwk_rdmap.must_terminate.", 25) == 0)
            t = ab + 25;
        else if (strncmp(ab, "iwk_mpa.must_terminate.", 23) == 0)
            t = ab + 23;
        if (t) {
            for (size_t i = 0; i < sizeof term_names / sizeof term_names[0]; i++) {
                if (g_ascii_strcasecmp(t, term_names[i].name) != 0)
                    continue;
                if (r->nterm < NTERM)
                    r->term[r->nterm] = term_names[i].triple;
                r->nterm++;
            }
        }
        if (strcmp(ab, "iwk_rdmap.must_terminate.unregistered") == 0)
            r->unregistered = true;
        if (strncmp(ab, "iwk_mpa.close.", 14) == 0)
            r->nclose++;
        if (strcmp(ab, "iwk_mpa.type") == 0)
            r->rr = true;
        if (strcmp(ab, "iwk_mpa.fpdu") == 0) {
            r->fpdu = true;
            r->wire_len = (unsigned)fi->length;
        }
        if (strcmp(ab, "iwk_rdmap.term.triple") == 0) {
            r->has_term_msg = true;
            r->term_msg = (uint16_t)fvalue_get_uinteger(&fi->value);
        }
        if (strcmp(ab, "iwk_rdmap.shadow.assumes") == 0 &&
            strcmp(fvalue_get_string(&fi->value), recv_buf_phrase) == 0)
            r->assume_buf = true;
    }
    proto_tree_children_foreach(node, collect, data);
}

/* Top-level items of one frame: each iwk_mpa item starts a record, and the
 * items after it (iwk_ddp, iwk_rdmap, a ULP's) belong to it. */
static void top_item(proto_node *node, gpointer data) {
    pl_walk *w = data;
    field_info *fi = PNODE_FINFO(node);
    if (fi && fi->hfinfo && fi->hfinfo->id == hf_proto_mpa) {
        pl_dir *d = &w->dir[w->frame_dir];
        if (d->n == d->cap) {
            d->cap = d->cap ? 2 * d->cap : 32;
            d->v = realloc(d->v, d->cap * sizeof *d->v);
            FUZZ_CHECK(d->v != NULL);
        }
        w->cur = &d->v[d->n++];
        memset(w->cur, 0, sizeof *w->cur);
    }
    if (w->cur)
        collect(node, data);
}

static void on_frame(size_t frame, proto_tree *tree, void *user) {
    pl_walk *w = user;
    w->frame_dir = w->dirs[frame];
    w->cur = NULL;
    proto_tree_children_foreach(tree, top_item, w);
}

/* The capture, each frame's direction noted. */
typedef struct {
    fz_capture cap;
    int *dir;    /* per frame */
    size_t ndir; /* frames whose direction is noted (the handshake's count as 0) */
} pl_capture;

static void pl_send(pl_capture *c, int dir, const uint8_t *p, size_t n) {
    if (n)
        fz_capture_send(&c->cap, dir, p, n);
    c->dir = realloc(c->dir, (c->cap.n ? c->cap.n : 1) * sizeof *c->dir);
    FUZZ_CHECK(c->dir != NULL);
    for (; c->ndir < c->cap.n; c->ndir++)
        c->dir[c->ndir] = dir;
}

static void print_pdu(const char *who, size_t i, const pl_pdu *r) {
    fprintf(stderr, "  %s %zu: %s%s wire %u, %u verdict(s)", who, i, r->rr ? "startup" : "",
            r->fpdu ? "FPDU" : "", r->wire_len, r->nterm);
    for (unsigned k = 0; k < r->nterm && k < NTERM; k++)
        fprintf(stderr, " %04x", r->term[k]);
    fprintf(stderr, "%s%s%s", r->assume_buf ? " (assumes a buffer)" : "",
            r->nclose ? ", close" : "", r->unregistered ? ", unregistered" : "");
    if (r->has_term_msg)
        fprintf(stderr, ", Terminate message %04x", r->term_msg);
    fputc('\n', stderr);
}

static bool pl_has(const pl_pdu *r, uint16_t triple) {
    return r->nterm == 1 && r->term[0] == triple;
}

/* One judged step against the plugin's record of its FPDU. */
static void check_step(size_t i, const fz_diff_step *s, const pl_pdu *r, bool enhanced) {
    bool codec_bad = s->codec.kind != IW_VERDICT_OK;
    const iw_shadow_result *sh = &s->shadow;
    bool ok;
    if (codec_bad) {
        /* A deferred codec verdict is what the plugin shows, whichever
         * Terminate the engine's state made it send first. */
        ok = s->term_sent && pl_has(r, s->codec_deferred ? s->codec.term : s->term.triple);
    } else if (s->term_sent) {
        uint16_t e = s->term.triple;
        ok = pl_has(r, e) ||
             (r->nterm == 0 && !fz_diff_shadow_must_see(s->opcode, e, enhanced) &&
              sh->verdict.kind == IW_VERDICT_OK) ||
             (r->nterm == 1 && r->assume_buf && fz_diff_recv_buf_triple(e));
    } else {
        ok = r->nterm == 0;
    }
    /* On a codec-clean frame, the plugin shows the library shadow's verdict. */
    if (ok && !codec_bad)
        ok = sh->verdict.kind == IW_VERDICT_TERM
                 ? pl_has(r, sh->verdict.term) &&
                       r->assume_buf == ((sh->assume & IW_SHADOW_ASSUME_RECV_BUF) != 0)
                 : r->nterm == 0;
    if (!ok) {
        fprintf(stderr,
                "frame %zu (opcode %u, %zu wire octets): codec %04x, shadow %04x, engine %s "
                "%04x; the plugin:\n",
                i, s->opcode, s->in_len, codec_bad ? s->codec.term : 0,
                sh->verdict.kind == IW_VERDICT_TERM ? sh->verdict.term : 0,
                s->term_sent       ? "sent"
                : s->term_received ? "received"
                                   : "-",
                s->term_sent ? s->term.triple : 0);
        print_pdu("peer FPDU", i, r);
    }
    FUZZ_CHECK(ok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_diff_trace t;
    fz_diff_run(data, size, &t);
    uint8_t setup = size > 1 ? data[1] : 0;

    fz_epan_init();
    if (hf_proto_mpa < 0) {
        hf_proto_mpa = proto_get_id_by_filter_name("iwk_mpa");
        FUZZ_CHECK(hf_proto_mpa >= 0);
        recv_buf_phrase = iw_shadow_assume_str(IW_SHADOW_ASSUME_RECV_BUF);
        FUZZ_CHECK(recv_buf_phrase != NULL);
    }
    fz_epan_prefs(FZ_EPAN_TCP_DESEGMENT | FZ_EPAN_MPA_DESEGMENT | FZ_EPAN_CHECK_CRC);

    /* The connection in the order the engine met it. */
    pl_capture c = {0};
    fz_capture_open(&c.cap, !(setup & 0x80), true);
    pl_send(&c, 0, t.in.p, t.in_startup);
    pl_send(&c, 1, t.out.p, t.out_startup);
    for (size_t i = 0; i < t.n; i++) {
        const fz_diff_step *s = &t.v[i];
        size_t cut = (setup & 0x40) ? s->in_len / 2 : 0;
        pl_send(&c, 0, t.in.p + s->in_off, cut);
        pl_send(&c, 0, t.in.p + s->in_off + cut, s->in_len - cut);
        pl_send(&c, 1, t.out.p + s->out_off, s->out_len);
    }
    pl_walk w = {c.dir, {{0}}, 0, NULL};
    fz_epan_dissect(&c.cap, on_frame, &w);

    const pl_dir *peer = &w.dir[0], *eng = &w.dir[1];
    if (getenv("FUZZ_VERBOSE")) {
        for (size_t i = 0; i < peer->n; i++)
            print_pdu("peer", i, &peer->v[i]);
        for (size_t i = 0; i < eng->n; i++)
            print_pdu("engine", i, &eng->v[i]);
    }
    /* The startup: a Request and a Reply, accepted. */
    FUZZ_CHECK(peer->n >= 1 && peer->v[0].rr && peer->v[0].nterm == 0 && !peer->v[0].nclose);
    FUZZ_CHECK(eng->n >= 1 && eng->v[0].rr && eng->v[0].nterm == 0 && !eng->v[0].nclose);
    /* The peer's FPDUs, while the engine's stream lasts. */
    for (size_t i = 0; i < t.n && t.v[i].judged; i++) {
        const fz_diff_step *s = &t.v[i];
        if (peer->n < i + 2)
            fprintf(stderr, "frame %zu: the plugin found no PDU\n", i);
        FUZZ_CHECK(peer->n >= i + 2);
        const pl_pdu *r = &peer->v[i + 1];
        if (!r->fpdu || r->wire_len != s->in_len)
            print_pdu("peer FPDU", i, r);
        FUZZ_CHECK(r->fpdu && r->wire_len == s->in_len);
        FUZZ_CHECK(!r->unregistered && !r->nclose);
        check_step(i, s, r, t.enhanced);
    }
    /* The engine's frames: nothing wrong but what the core excused (the
     * plugin says exactly that), and its Terminate says what it sent. */
    const fz_diff_step *end = NULL;
    for (size_t i = 0; i < t.n; i++)
        if (t.v[i].term_sent)
            end = &t.v[i];
    size_t term_msgs = 0;
    for (size_t i = 1; i < eng->n; i++) {
        const pl_pdu *r = &eng->v[i];
        uint16_t ex = i - 1 < t.eng_fpdus ? t.eng_excused[i - 1] : 0;
        if (r->nterm != (ex != 0) || r->nclose || r->unregistered)
            print_pdu("engine", i, r);
        FUZZ_CHECK(r->fpdu && r->nterm == (ex != 0) && !r->nclose && !r->unregistered);
        FUZZ_CHECK(!ex || r->term[0] == ex);
        if (r->has_term_msg) {
            term_msgs++;
            FUZZ_CHECK(end && r->term_msg == end->term.triple);
        }
    }
    FUZZ_CHECK(term_msgs == (end ? 1u : 0u));

    free(w.dir[0].v);
    free(w.dir[1].v);
    free(c.dir);
    fz_capture_free(&c.cap);
    fz_diff_trace_free(&t);
    return 0;
}
