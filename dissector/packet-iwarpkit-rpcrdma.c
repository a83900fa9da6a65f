/* SPDX-License-Identifier: GPL-2.0-or-later */
/* packet-iwarpkit-rpcrdma.c
 * RPC-over-RDMA v1 (RFC 8166) and its NFS binding (RFC 8267) on iWARP:
 * what the plugin adds to Wireshark's own rpcordma/RPC/NFS dissectors.
 * Part of the iwarpkit Wireshark plugin.
 *
 * Wireshark's rpcordma dissector decodes the transport header, hands the
 * RPC message to RPC and NFS, and itself rebuilds read chunks from the Read
 * Responses it is offered (which works once every tagged segment is offered
 * exactly once, with its own STag and TO; packet-iwarpkit-rdmap.c does
 * that). What the plugin adds:
 *   - the connection's RFC 8797 CM private data (carried in the MPA
 *     Request/Reply) is decoded;
 *   - each call becomes a storage command (key: direction and XID) named
 *     by its NFS operation (NFSv3 procedure; NFSv4 the first operation of
 *     the COMPOUND other than SEQUENCE, GETATTR and the file handle
 *     operations), linked
 *     to the RDMA Writes / Reads that move its chunks (by the chunk
 *     segments' handles, i.e. STags, RFC 8166 §3.4.3) and to its reply;
 *   - replies are rebuilt from their write chunks. On the first pass (all
 *     of tshark's default single pass, and the GUI's packet list)
 *     rpcordma 4.0 hands the reduced reply of an NFS READ to NFS, which
 *     reads past its end and marks it Malformed; only a second pass shows
 *     the data. The plugin keeps the octets of the RDMA Writes to every
 *     write-chunk segment a call advertises and, when all of a reply's
 *     write-chunk data is in the capture, offers rpcordma the reply as its
 *     sender had it before reduction (RFC 8166 §3.4.1): each chunk's data
 *     back after the reduced data item's length word, XDR-padded, and an
 *     empty write list. The write list as sent is shown above it.
 *
 * Limitations: write-chunk data goes back after the last 4-octet word of
 * the reduced stream (before the next chunk's point) that equals the
 * chunk's length: the data item's own length for the DDP-eligible results
 * of RFC 8267 (READ, READLINK) when nothing after the item repeats that
 * value, which holds for NFSv3 and for the compounds Linux sends; if no
 * such word is found the reply goes up reduced, as stock. Segments over
 * 16 MiB are not kept. A call whose RPC message itself travels in a
 * position-zero read chunk (RDMA_NOMSG) is named "RPC call (in read
 * chunk)". */
#include <string.h>

#include "packet-iwarpkit-storage.h"

#include <epan/prefs.h>
#include <epan/proto_data.h>

static int proto_iwk_rpcrdma = -1;
static int hf_cm = -1;
static int hf_cm_magic = -1;
static int hf_cm_version = -1;
static int hf_cm_flags = -1;
static int hf_cm_inv = -1;
static int hf_cm_send = -1;
static int hf_cm_recv = -1;
static int hf_rebuilt_len = -1;
static int hf_rebuilt_first = -1;
static int hf_rebuilt_last = -1;
static int hf_write_list = -1;
static gint ett_cm = -1;
static gint ett_rebuilt = -1;
static gboolean pref_rebuild = TRUE;

#define RPCRDMA_CM_MAGIC 0xf6ab0e18u /* RFC 8797 §5.1 */
#define RDMA_MSG 0                   /* RFC 8166 §4.2.4 */
#define RDMA_NOMSG 1
#define RDMA_MSGP 2 /* RFC 5666 only; still decoded */
#define MAX_SEGS 16
#define MAX_WCHUNKS 4
#define CHUNK_KEEP_MAX (16u << 20) /* octets of one segment kept for a rebuild */

typedef struct {
    guint32 handle, length;
    guint64 offset;
} rr_seg;

/* The transport header (RFC 8166 §4.2.1), as far as the plugin needs it. */
typedef struct {
    guint32 xid, vers, credits, proc;
    guint n_read;
    rr_seg read[MAX_SEGS];
    guint n_wchunks;
    guint wseg_n[MAX_WCHUNKS];
    rr_seg wseg[MAX_WCHUNKS][MAX_SEGS];
    guint n_reply;
    rr_seg reply[MAX_SEGS];
    guint wl_start, wl_end; /* the write list's octets in the header */
    gboolean capped;        /* more chunks or segments than kept above */
    guint hdr_len;
} rr_hdr;

/* Captured data of one write-chunk segment (first pass). */
typedef struct {
    guint64 base;
    guint32 len;
    guint8 *data;
    guint32 filled;
    guint32 first_frame, last_frame;
} chunk_buf;

/* A reply offered with its write-chunk data back in the Payload stream. */
typedef struct {
    guint8 *buf;
    guint len;
    guint32 data_len;
    guint32 first_frame, last_frame;
} rebuilt_t;

/* ---------------- header reading (bounded, no exceptions) ---------------- */

typedef struct {
    tvbuff_t *tvb;
    guint off, end;
    gboolean bad;
} rd;

static guint32 rd32(rd *r) {
    if (r->bad || r->end - r->off < 4) {
        r->bad = TRUE;
        return 0;
    }
    guint32 v = tvb_get_ntohl(r->tvb, r->off);
    r->off += 4;
    return v;
}

/* Skip an XDR opaque's octets (padded to 4, RFC 4506 §4.10). */
static void rd_skip(rd *r, guint32 n) {
    guint64 pad = ((guint64)n + 3) & ~(guint64)3;
    if (r->bad || pad > r->end - r->off) {
        r->bad = TRUE;
        return;
    }
    r->off += (guint)pad;
}

static guint64 rd64(rd *r) {
    guint64 hi = rd32(r);
    return (hi << 32) | rd32(r);
}

static void rd_seg(rd *r, rr_seg *s) {
    s->handle = rd32(r);
    s->length = rd32(r);
    s->offset = rd64(r);
}

static gboolean parse_hdr(tvbuff_t *tvb, rr_hdr *h) {
    rd r = {tvb, 0, tvb_captured_length(tvb), FALSE};
    memset(h, 0, sizeof *h);
    h->xid = rd32(&r);
    h->vers = rd32(&r);
    h->credits = rd32(&r);
    h->proc = rd32(&r);
    if (r.bad || h->vers != 1 || h->proc > 4)
        return FALSE;
    /* Read list: a list of (position, segment) (§4.2.1.2). */
    while (rd32(&r)) {
        rr_seg s;
        guint32 pos = rd32(&r);
        (void)pos;
        rd_seg(&r, &s);
        if (r.bad)
            return FALSE;
        if (h->n_read < MAX_SEGS)
            h->read[h->n_read++] = s;
    }
    /* Write list: a list of chunks, each a counted array of segments. */
    h->wl_start = r.off;
    while (rd32(&r)) {
        guint32 n = rd32(&r);
        if (r.bad || n > (r.end - r.off) / 16)
            return FALSE;
        guint c = h->n_wchunks;
        for (guint32 i = 0; i < n; i++) {
            rr_seg s;
            rd_seg(&r, &s);
            if (c < MAX_WCHUNKS && h->wseg_n[c] < MAX_SEGS)
                h->wseg[c][h->wseg_n[c]++] = s;
            else
                h->capped = TRUE;
        }
        if (c < MAX_WCHUNKS)
            h->n_wchunks++;
    }
    h->wl_end = r.off;
    /* Reply chunk: optional counted array of segments. */
    if (rd32(&r)) {
        guint32 n = rd32(&r);
        if (r.bad || n > (r.end - r.off) / 16)
            return FALSE;
        for (guint32 i = 0; i < n; i++) {
            rr_seg s;
            rd_seg(&r, &s);
            if (h->n_reply < MAX_SEGS)
                h->reply[h->n_reply++] = s;
        }
    }
    if (h->proc == RDMA_MSGP) {
        rd32(&r); /* align */
        rd32(&r); /* threshold */
    }
    if (r.bad)
        return FALSE;
    h->hdr_len = r.off;
    return TRUE;
}

/* ---------------- NFS operation names ---------------- */

static const value_string nfs3_procs[] = {
    {0, "NULL"},      {1, "GETATTR"},      {2, "SETATTR"},  {3, "LOOKUP"},
    {4, "ACCESS"},    {5, "READLINK"},     {6, "READ"},     {7, "WRITE"},
    {8, "CREATE"},    {9, "MKDIR"},        {10, "SYMLINK"}, {11, "MKNOD"},
    {12, "REMOVE"},   {13, "RMDIR"},       {14, "RENAME"},  {15, "LINK"},
    {16, "READDIR"},  {17, "READDIRPLUS"}, {18, "FSSTAT"},  {19, "FSINFO"},
    {20, "PATHCONF"}, {21, "COMMIT"},      {0, NULL}};

static const value_string nfs4_ops[] = {{3, "ACCESS"},
                                        {4, "CLOSE"},
                                        {5, "COMMIT"},
                                        {6, "CREATE"},
                                        {7, "DELEGPURGE"},
                                        {8, "DELEGRETURN"},
                                        {9, "GETATTR"},
                                        {10, "GETFH"},
                                        {11, "LINK"},
                                        {12, "LOCK"},
                                        {13, "LOCKT"},
                                        {14, "LOCKU"},
                                        {15, "LOOKUP"},
                                        {16, "LOOKUPP"},
                                        {17, "NVERIFY"},
                                        {18, "OPEN"},
                                        {19, "OPENATTR"},
                                        {20, "OPEN_CONFIRM"},
                                        {21, "OPEN_DOWNGRADE"},
                                        {22, "PUTFH"},
                                        {23, "PUTPUBFH"},
                                        {24, "PUTROOTFH"},
                                        {25, "READ"},
                                        {26, "READDIR"},
                                        {27, "READLINK"},
                                        {28, "REMOVE"},
                                        {29, "RENAME"},
                                        {30, "RENEW"},
                                        {31, "RESTOREFH"},
                                        {32, "SAVEFH"},
                                        {33, "SECINFO"},
                                        {34, "SETATTR"},
                                        {35, "SETCLIENTID"},
                                        {36, "SETCLIENTID_CONFIRM"},
                                        {37, "VERIFY"},
                                        {38, "WRITE"},
                                        {39, "RELEASE_LOCKOWNER"},
                                        {40, "BACKCHANNEL_CTL"},
                                        {41, "BIND_CONN_TO_SESSION"},
                                        {42, "EXCHANGE_ID"},
                                        {43, "CREATE_SESSION"},
                                        {44, "DESTROY_SESSION"},
                                        {45, "FREE_STATEID"},
                                        {46, "GET_DIR_DELEGATION"},
                                        {47, "GETDEVICEINFO"},
                                        {48, "GETDEVICELIST"},
                                        {49, "LAYOUTCOMMIT"},
                                        {50, "LAYOUTGET"},
                                        {51, "LAYOUTRETURN"},
                                        {52, "SECINFO_NO_NAME"},
                                        {53, "SEQUENCE"},
                                        {54, "SET_SSV"},
                                        {55, "TEST_STATEID"},
                                        {56, "WANT_DELEGATION"},
                                        {57, "DESTROY_CLIENTID"},
                                        {58, "RECLAIM_COMPLETE"},
                                        {59, "ALLOCATE"},
                                        {60, "COPY"},
                                        {61, "COPY_NOTIFY"},
                                        {62, "DEALLOCATE"},
                                        {63, "IO_ADVISE"},
                                        {64, "LAYOUTERROR"},
                                        {65, "LAYOUTSTATS"},
                                        {66, "OFFLOAD_CANCEL"},
                                        {67, "OFFLOAD_STATUS"},
                                        {68, "READ_PLUS"},
                                        {69, "SEEK"},
                                        {70, "WRITE_SAME"},
                                        {71, "CLONE"},
                                        {0, NULL}};

/* The operation a COMPOUND is about: the first one that is not SEQUENCE,
 * a file handle operation or GETATTR (RFC 8881 §18: their arguments have a
 * size the reader knows); Linux puts GETATTR before CLOSE, for one. A
 * compound of only those is named by its first GETATTR/GETFH, if any. */
static guint32 nfs4_main_op(rd *r) {
    rd_skip(r, rd32(r)); /* tag */
    rd32(r);             /* minorversion */
    guint32 n = rd32(r);
    guint32 fallback = 0;
    for (guint32 i = 0; i < n && !r->bad; i++) {
        guint32 op = rd32(r);
        if (op == 53) { /* SEQUENCE: sessionid, seqid, slotid, highest, cachethis */
            rd_skip(r, 32);
        } else if (op == 22) { /* PUTFH: nfs_fh4 */
            rd_skip(r, rd32(r));
        } else if (op == 9) { /* GETATTR: bitmap4 */
            guint32 nw = rd32(r);
            rd_skip(r, nw > G_MAXUINT32 / 4 ? G_MAXUINT32 : nw * 4);
            fallback = fallback ? fallback : op;
        } else if (op == 10 || op == 31 || op == 32) { /* GETFH, RESTOREFH, SAVEFH */
            fallback = fallback ? fallback : op;
        } else if (op != 23 && op != 24) { /* PUTPUBFH, PUTROOTFH: no args */
            return r->bad ? fallback : op;
        }
    }
    return fallback;
}

/* Name of an RPC call (file scope string), from the RPC message at off. */
static const char *call_name(tvbuff_t *tvb, guint off, guint end) {
    rd r = {tvb, off, end, FALSE};
    rd32(&r); /* xid */
    rd32(&r); /* CALL */
    rd32(&r); /* rpcvers */
    guint32 prog = rd32(&r), vers = rd32(&r), proc = rd32(&r);
    for (int i = 0; i < 2; i++) { /* credentials, verifier */
        rd32(&r);
        rd_skip(&r, rd32(&r));
    }
    if (r.bad)
        return "RPC call";
    if (prog == 100003 && vers == 3)
        return wmem_strdup_printf(wmem_file_scope(), "NFSv3 %s",
                                  val_to_str_const(proc, nfs3_procs, "unknown procedure"));
    if (prog == 100003 && vers == 4) {
        if (proc == 0)
            return "NFSv4 NULL";
        rd m = r;
        rd_skip(&m, rd32(&m));
        guint32 minor = rd32(&m);
        guint32 op = nfs4_main_op(&r);
        return wmem_strdup_printf(wmem_file_scope(), "NFSv4.%u %s", minor,
                                  op ? val_to_str_const(op, nfs4_ops, "unknown op") : "COMPOUND");
    }
    return wmem_strdup_printf(wmem_file_scope(), "RPC %u v%u proc %u", prog, vers, proc);
}

/* Reply status: accept_stat, then the NFS status that opens the results. */
static guint32 reply_status(tvbuff_t *tvb, guint off, guint end, const char **str) {
    rd r = {tvb, off, end, FALSE};
    rd32(&r);
    rd32(&r);
    guint32 stat = rd32(&r);
    if (r.bad || stat != 0) {
        *str = "RPC denied";
        return 0x10000 | stat;
    }
    rd32(&r);
    rd_skip(&r, rd32(&r)); /* verifier */
    guint32 acc = rd32(&r);
    if (r.bad) {
        *str = "?";
        return 0;
    }
    if (acc != 0) {
        *str = "RPC not accepted";
        return 0x20000 | acc;
    }
    guint32 nfs = r.end - r.off >= 4 ? rd32(&r) : 0;
    *str = nfs == 0 ? "OK" : "NFS error";
    return nfs;
}

/* ---------------- write chunks ---------------- */

/* The call advertises a write-chunk segment: keep what is written to it. */
static void keep_chunk(iwk_stor *st, const rr_seg *s) {
    if (!s->length || s->length > CHUNK_KEEP_MAX)
        return;
    chunk_buf *cb = wmem_new0(wmem_file_scope(), chunk_buf);
    cb->base = s->offset;
    cb->len = s->length;
    cb->data = (guint8 *)wmem_alloc0(wmem_file_scope(), s->length);
    wmem_map_insert(st->chunks, GUINT_TO_POINTER(s->handle), cb);
}

void iwk_rpcrdma_tagged(iwk_ulp_ctx *u, tvbuff_t *tvb) {
    if (!u->first_pass || u->m->opcode != IW_OP_WRITE)
        return;
    chunk_buf *cb = (chunk_buf *)wmem_map_lookup(u->st->chunks, GUINT_TO_POINTER(u->m->ddp.stag));
    guint n = tvb_captured_length(tvb);
    if (!cb || u->m->ddp.to < cb->base || u->m->ddp.to - cb->base > cb->len ||
        n > cb->len - (u->m->ddp.to - cb->base))
        return;
    tvb_memcpy(tvb, cb->data + (u->m->ddp.to - cb->base), 0, n);
    cb->filled += n;
    if (!cb->first_frame)
        cb->first_frame = u->pinfo->num;
    cb->last_frame = u->pinfo->num;
}

static guint32 chunk_len(const rr_hdr *h, guint c) {
    guint32 n = 0;
    for (guint i = 0; i < h->wseg_n[c]; i++)
        n += h->wseg[c][i].length;
    return n;
}

/* The reply as its sender had it before reduction: each write chunk's data
 * (the length the reply's segments give, RFC 8166 §3.4.6) back after the
 * reduced data item's length word, XDR-padded (RFC 4506 §4.10), and the
 * write list, now empty, said so. NULL unless every octet was captured. */
static rebuilt_t *rebuild(iwk_ulp_ctx *u, tvbuff_t *tvb, const rr_hdr *h) {
    guint total = tvb_captured_length(tvb);
    if (h->capped || !h->n_wchunks)
        return NULL;
    guint64 extra = 0;
    rebuilt_t *rb = wmem_new0(wmem_file_scope(), rebuilt_t);
    for (guint c = 0; c < h->n_wchunks; c++) {
        for (guint i = 0; i < h->wseg_n[c]; i++) {
            const rr_seg *s = &h->wseg[c][i];
            chunk_buf *cb =
                (chunk_buf *)wmem_map_lookup(u->st->chunks, GUINT_TO_POINTER(s->handle));
            if (!cb || s->length > cb->len || cb->filled < s->length)
                return NULL;
            if (!s->length)
                continue;
            if (!rb->first_frame || cb->first_frame < rb->first_frame)
                rb->first_frame = cb->first_frame;
            if (cb->last_frame > rb->last_frame)
                rb->last_frame = cb->last_frame;
        }
        extra += chunk_len(h, c) + 3u;
    }
    /* Insertion points, last chunk first: after the last word before the
     * previous point that equals the chunk's length. */
    guint pos[MAX_WCHUNKS];
    guint limit = total;
    for (guint c = h->n_wchunks; c-- > 0;) {
        guint32 clen = chunk_len(h, c);
        guint p = 0;
        guint o = h->hdr_len + ((limit - h->hdr_len) & ~3u);
        for (; o >= h->hdr_len + 4; o -= 4) {
            if (tvb_get_ntohl(tvb, o - 4) == clen) {
                p = o;
                break;
            }
        }
        if (!p)
            return NULL;
        pos[c] = p;
        limit = p - 4;
    }
    gsize size = total + (gsize)extra;
    guint8 *buf = (guint8 *)wmem_alloc(wmem_file_scope(), size);
    guint o = 0, from = 0;
    /* Header with an empty write list. */
    tvb_memcpy(tvb, buf, 0, h->wl_start);
    o = h->wl_start;
    memset(buf + o, 0, 4);
    o += 4;
    from = h->wl_end;
    for (guint c = 0; c < h->n_wchunks; c++) {
        tvb_memcpy(tvb, buf + o, from, pos[c] - from);
        o += pos[c] - from;
        from = pos[c];
        guint32 clen = 0;
        for (guint i = 0; i < h->wseg_n[c]; i++) {
            const rr_seg *s = &h->wseg[c][i];
            chunk_buf *cb =
                (chunk_buf *)wmem_map_lookup(u->st->chunks, GUINT_TO_POINTER(s->handle));
            if (s->length)
                memcpy(buf + o, cb->data, s->length);
            o += s->length;
            clen += s->length;
        }
        for (guint32 pad = (4 - (clen & 3)) & 3; pad; pad--)
            buf[o++] = 0;
        rb->data_len += clen;
    }
    tvb_memcpy(tvb, buf + o, from, total - from);
    o += total - from;
    rb->buf = buf;
    rb->len = o;
    return rb;
}

/* The reply's own write list, as on the wire (rpcordma sees the rebuilt
 * message, whose write list is empty). */
static void show_rebuilt(iwk_ulp_ctx *u, tvbuff_t *tvb, const rebuilt_t *rb) {
    proto_item *ti = proto_tree_add_item(u->tree, proto_iwk_rpcrdma, tvb, 0, -1, ENC_NA);
    proto_item_append_text(ti,
                           ": reply rebuilt with its write-chunk data (%u octets from the "
                           "RDMA Writes in frames %u-%u); RPC-over-RDMA below decodes the "
                           "rebuilt message",
                           rb->data_len, rb->first_frame, rb->last_frame);
    proto_tree *t = proto_item_add_subtree(ti, ett_rebuilt);
    proto_item *pi = proto_tree_add_uint(t, hf_rebuilt_len, tvb, 0, 0, rb->data_len);
    proto_item_set_generated(pi);
    pi = proto_tree_add_uint(t, hf_rebuilt_first, tvb, 0, 0, rb->first_frame);
    proto_item_set_generated(pi);
    pi = proto_tree_add_uint(t, hf_rebuilt_last, tvb, 0, 0, rb->last_frame);
    proto_item_set_generated(pi);
    rr_hdr h;
    if (parse_hdr(tvb, &h) && h.wl_end > h.wl_start)
        proto_tree_add_item(t, hf_write_list, tvb, h.wl_start, h.wl_end - h.wl_start, ENC_NA);
    tvbuff_t *up = tvb_new_child_real_data(tvb, rb->buf, rb->len, rb->len);
    add_new_data_source(u->pinfo, up, "RPC-over-RDMA reply with write-chunk data");
    iwk_rdmap_call_heur(up, u->pinfo, u->tree, u->info);
}

/* ---------------- one Send ---------------- */

void iwk_rpcrdma_send(iwk_ulp_ctx *u, tvbuff_t *tvb) {
    rr_hdr h;
    if (u->first_pass && parse_hdr(tvb, &h)) {
        guint end = tvb_captured_length(tvb);
        gboolean has_msg = (h.proc == RDMA_MSG || h.proc == RDMA_MSGP) && end - h.hdr_len >= 8;
        guint32 mtype = has_msg ? tvb_get_ntohl(tvb, h.hdr_len + 4) : 2;
        guint64 d = (guint)u->fctx->d;
        iwk_cmd *cmd = NULL;
        if ((h.proc == RDMA_NOMSG && h.n_read) || (has_msg && mtype == 0)) {
            cmd =
                iwk_cmd_start(u, (d << 32) | h.xid,
                              has_msg ? call_name(tvb, h.hdr_len, end) : "RPC call (in read chunk)",
                              wmem_strdup_printf(u->pinfo->pool, "XID 0x%08x", h.xid));
            /* Every chunk segment's handle is an STag the peer's RDMA
             * Reads (read list) or Writes (write list, reply chunk) use. */
            for (guint i = 0; i < h.n_read; i++)
                iwk_cmd_stag(u, cmd, h.read[i].handle);
            for (guint c = 0; c < h.n_wchunks; c++)
                for (guint i = 0; i < h.wseg_n[c]; i++) {
                    iwk_cmd_stag(u, cmd, h.wseg[c][i].handle);
                    if (pref_rebuild)
                        keep_chunk(u->st, &h.wseg[c][i]);
                }
            for (guint i = 0; i < h.n_reply; i++)
                iwk_cmd_stag(u, cmd, h.reply[i].handle);
            iwk_link_message(u, tvb, cmd, IWK_ROLE_CMD);
        } else if ((has_msg && mtype == 1) || h.proc == RDMA_NOMSG) {
            const char *str = "OK";
            guint32 status = has_msg ? reply_status(tvb, h.hdr_len, end, &str) : 0;
            cmd = iwk_cmd_complete(u, ((d ^ 1) << 32) | h.xid, has_msg, status, str);
            iwk_link_message(u, tvb, cmd, IWK_ROLE_RSP);
            if (pref_rebuild && has_msg && mtype == 1 && h.n_wchunks) {
                rebuilt_t *rb = rebuild(u, tvb, &h);
                if (rb)
                    p_add_proto_data(wmem_file_scope(), u->pinfo, proto_iwk_rpcrdma, u->fctx->seq,
                                     rb);
            }
        }
    } else if (!u->first_pass) {
        iwk_link_message(u, tvb, NULL, 0);
    }
    rebuilt_t *rb =
        (rebuilt_t *)p_get_proto_data(wmem_file_scope(), u->pinfo, proto_iwk_rpcrdma, u->fctx->seq);
    if (rb)
        show_rebuilt(u, tvb, rb);
    else
        iwk_rdmap_call_heur(tvb, u->pinfo, u->tree, u->info);
}

/* RFC 8797 §5.1: RPC-over-RDMA connection private data. */
gboolean iwk_rpcrdma_pd(tvbuff_t *tvb, guint off, guint len, proto_tree *tree) {
    if (len < 8 || tvb_get_ntohl(tvb, off) != RPCRDMA_CM_MAGIC)
        return FALSE;
    proto_item *ti = proto_tree_add_item(tree, hf_cm, tvb, off, 8, ENC_NA);
    proto_tree *t = proto_item_add_subtree(ti, ett_cm);
    proto_tree_add_item(t, hf_cm_magic, tvb, off, 4, ENC_BIG_ENDIAN);
    proto_tree_add_item(t, hf_cm_version, tvb, off + 4, 1, ENC_NA);
    proto_item *fi = proto_tree_add_item(t, hf_cm_flags, tvb, off + 5, 1, ENC_NA);
    proto_tree_add_item(proto_item_add_subtree(fi, ett_cm), hf_cm_inv, tvb, off + 5, 1, ENC_NA);
    /* Inline thresholds: (octets / 1024) - 1 on the wire. */
    proto_tree_add_uint(t, hf_cm_send, tvb, off + 6, 1, (tvb_get_guint8(tvb, off + 6) + 1u) * 1024);
    proto_tree_add_uint(t, hf_cm_recv, tvb, off + 7, 1, (tvb_get_guint8(tvb, off + 7) + 1u) * 1024);
    proto_item_append_text(ti, ": version %u, inline send %u / receive %u octets",
                           tvb_get_guint8(tvb, off + 4), (tvb_get_guint8(tvb, off + 6) + 1u) * 1024,
                           (tvb_get_guint8(tvb, off + 7) + 1u) * 1024);
    return TRUE;
}

void proto_register_iwk_rpcrdma(void) {
    static hf_register_info hf[] = {
        {&hf_cm,
         {"RPC-over-RDMA CM private data", "iwk_rpcrdma.cm", FT_NONE, BASE_NONE, NULL, 0,
          "RFC 8797 §5.1, in the MPA Request/Reply", HFILL}},
        {&hf_cm_magic,
         {"Magic", "iwk_rpcrdma.cm.magic", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_cm_version,
         {"Version", "iwk_rpcrdma.cm.version", FT_UINT8, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_cm_flags, {"Flags", "iwk_rpcrdma.cm.flags", FT_UINT8, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_cm_inv,
         {"Remote Invalidation", "iwk_rpcrdma.cm.remote_invalidation", FT_BOOLEAN, 8, NULL, 0x01,
          NULL, HFILL}},
        {&hf_cm_send,
         {"Send size", "iwk_rpcrdma.cm.send_size", FT_UINT32, BASE_DEC | BASE_UNIT_STRING,
          &units_byte_bytes, 0, NULL, HFILL}},
        {&hf_cm_recv,
         {"Receive size", "iwk_rpcrdma.cm.recv_size", FT_UINT32, BASE_DEC | BASE_UNIT_STRING,
          &units_byte_bytes, 0, NULL, HFILL}},
        {&hf_rebuilt_len,
         {"Write-chunk data put back", "iwk_rpcrdma.rebuilt.length", FT_UINT32,
          BASE_DEC | BASE_UNIT_STRING, &units_byte_bytes, 0, NULL, HFILL}},
        {&hf_rebuilt_first,
         {"From RDMA Write in", "iwk_rpcrdma.rebuilt.first", FT_FRAMENUM, BASE_NONE, NULL, 0, NULL,
          HFILL}},
        {&hf_rebuilt_last,
         {"To RDMA Write in", "iwk_rpcrdma.rebuilt.last", FT_FRAMENUM, BASE_NONE, NULL, 0, NULL,
          HFILL}},
        {&hf_write_list,
         {"Write list on the wire", "iwk_rpcrdma.write_list", FT_BYTES, BASE_NONE, NULL, 0,
          "The reply's write list as sent (the rebuilt message carries an empty one)", HFILL}},
    };
    static gint *ett[] = {&ett_cm, &ett_rebuilt};
    proto_iwk_rpcrdma =
        proto_register_protocol("RPC-over-RDMA chunks (iwarpkit)", "iWARP-RPCoRDMA", "iwk_rpcrdma");
    proto_register_field_array(proto_iwk_rpcrdma, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    module_t *mod = prefs_register_protocol(proto_iwk_rpcrdma, NULL);
    prefs_register_bool_preference(
        mod, "rebuild_write_chunks", "Rebuild replies from their write chunks",
        "Offer RPC-over-RDMA a reply with its write-chunk data (from the RDMA Writes in the "
        "capture) back in the Payload stream, so that NFS READ data decodes in one pass",
        &pref_rebuild);
}
