/* packet-iwarpkit-rpcrdma.c
 * RPC-over-RDMA v1 (RFC 8166) and its NFS binding (RFC 8267) on iWARP:
 * what the plugin adds to Wireshark's own rpcordma/RPC/NFS dissectors.
 * Part of the iwarpkit Wireshark plugin.
 *
 * Wireshark's rpcordma dissector decodes the transport header, hands the
 * RPC message to RPC and NFS, and itself rebuilds read chunks from the Read
 * Responses and write chunks from the RDMA Writes it is offered (which
 * works once every tagged segment is offered exactly once, with its own
 * STag and TO; packet-iwarpkit-rdmap.c does that). What the plugin adds:
 *   - the connection's RFC 8797 CM private data (carried in the MPA
 *     Request/Reply) is decoded;
 *   - each call becomes a storage command (key: direction and XID) named
 *     by its NFS operation (NFSv3 procedure; NFSv4 the first operation of
 *     the COMPOUND after SEQUENCE and the file handle operations), linked
 *     to the RDMA Writes / Reads that move its chunks (by the chunk
 *     segments' handles, i.e. STags, RFC 8166 §3.4.3) and to its reply.
 *
 * Limitations: a call whose RPC message itself travels in a position-zero
 * read chunk (RDMA_NOMSG) is named "RPC call (in read chunk)". */
#include <string.h>

#include "packet-iwarpkit-storage.h"


static int proto_iwk_rpcrdma = -1;
static int hf_cm = -1;
static int hf_cm_magic = -1;
static int hf_cm_version = -1;
static int hf_cm_flags = -1;
static int hf_cm_inv = -1;
static int hf_cm_send = -1;
static int hf_cm_recv = -1;
static gint ett_cm = -1;

#define RPCRDMA_CM_MAGIC 0xf6ab0e18u /* RFC 8797 §5.1 */
#define RDMA_MSG 0                   /* RFC 8166 §4.2.4 */
#define RDMA_NOMSG 1
#define RDMA_MSGP 2 /* RFC 5666 only; still decoded */
#define MAX_SEGS 16
#define MAX_WCHUNKS 4

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
    guint hdr_len;
} rr_hdr;

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
        }
        if (c < MAX_WCHUNKS)
            h->n_wchunks++;
    }
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
    {0, "NULL"},     {1, "GETATTR"},  {2, "SETATTR"},   {3, "LOOKUP"},       {4, "ACCESS"},
    {5, "READLINK"}, {6, "READ"},     {7, "WRITE"},     {8, "CREATE"},       {9, "MKDIR"},
    {10, "SYMLINK"}, {11, "MKNOD"},   {12, "REMOVE"},   {13, "RMDIR"},       {14, "RENAME"},
    {15, "LINK"},    {16, "READDIR"}, {17, "READDIRPLUS"}, {18, "FSSTAT"},   {19, "FSINFO"},
    {20, "PATHCONF"}, {21, "COMMIT"}, {0, NULL}};

static const value_string nfs4_ops[] = {
    {3, "ACCESS"},        {4, "CLOSE"},          {5, "COMMIT"},
    {6, "CREATE"},        {7, "DELEGPURGE"},     {8, "DELEGRETURN"},
    {9, "GETATTR"},       {10, "GETFH"},         {11, "LINK"},
    {12, "LOCK"},         {13, "LOCKT"},         {14, "LOCKU"},
    {15, "LOOKUP"},       {16, "LOOKUPP"},       {17, "NVERIFY"},
    {18, "OPEN"},         {19, "OPENATTR"},      {20, "OPEN_CONFIRM"},
    {21, "OPEN_DOWNGRADE"}, {22, "PUTFH"},       {23, "PUTPUBFH"},
    {24, "PUTROOTFH"},    {25, "READ"},          {26, "READDIR"},
    {27, "READLINK"},     {28, "REMOVE"},        {29, "RENAME"},
    {30, "RENEW"},        {31, "RESTOREFH"},     {32, "SAVEFH"},
    {33, "SECINFO"},      {34, "SETATTR"},       {35, "SETCLIENTID"},
    {36, "SETCLIENTID_CONFIRM"}, {37, "VERIFY"}, {38, "WRITE"},
    {39, "RELEASE_LOCKOWNER"}, {40, "BACKCHANNEL_CTL"}, {41, "BIND_CONN_TO_SESSION"},
    {42, "EXCHANGE_ID"},  {43, "CREATE_SESSION"}, {44, "DESTROY_SESSION"},
    {45, "FREE_STATEID"}, {46, "GET_DIR_DELEGATION"}, {47, "GETDEVICEINFO"},
    {48, "GETDEVICELIST"}, {49, "LAYOUTCOMMIT"}, {50, "LAYOUTGET"},
    {51, "LAYOUTRETURN"}, {52, "SECINFO_NO_NAME"}, {53, "SEQUENCE"},
    {54, "SET_SSV"},      {55, "TEST_STATEID"},  {56, "WANT_DELEGATION"},
    {57, "DESTROY_CLIENTID"}, {58, "RECLAIM_COMPLETE"}, {59, "ALLOCATE"},
    {60, "COPY"},         {61, "COPY_NOTIFY"},   {62, "DEALLOCATE"},
    {63, "IO_ADVISE"},    {64, "LAYOUTERROR"},   {65, "LAYOUTSTATS"},
    {66, "OFFLOAD_CANCEL"}, {67, "OFFLOAD_STATUS"}, {68, "READ_PLUS"},
    {69, "SEEK"},         {70, "WRITE_SAME"},    {71, "CLONE"},
    {0, NULL}};

/* The operation a COMPOUND is about: the first op after SEQUENCE and the
 * file handle ops, whose arguments have a known size (RFC 8881 §18). */
static guint32 nfs4_main_op(rd *r) {
    rd_skip(r, rd32(r)); /* tag */
    rd32(r);             /* minorversion */
    guint32 n = rd32(r);
    guint32 op = 0;
    for (guint32 i = 0; i < n && !r->bad; i++) {
        op = rd32(r);
        if (op == 53) { /* SEQUENCE: sessionid, seqid, slotid, highest, cachethis */
            rd_skip(r, 32);
        } else if (op == 22) { /* PUTFH: nfs_fh4 */
            rd_skip(r, rd32(r));
        } else if (op != 23 && op != 24) { /* PUTPUBFH, PUTROOTFH: no args */
            break;
        }
    }
    return r->bad ? 0 : op;
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
                                  op ? val_to_str_const(op, nfs4_ops, "unknown op")
                                     : "COMPOUND");
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
            cmd = iwk_cmd_start(u, (d << 32) | h.xid,
                                has_msg ? call_name(tvb, h.hdr_len, end)
                                        : "RPC call (in read chunk)",
                                wmem_strdup_printf(u->pinfo->pool, "XID 0x%08x", h.xid));
            /* Every chunk segment's handle is an STag the peer's RDMA
             * Reads (read list) or Writes (write list, reply chunk) use. */
            for (guint i = 0; i < h.n_read; i++)
                iwk_cmd_stag(u, cmd, h.read[i].handle);
            for (guint c = 0; c < h.n_wchunks; c++)
                for (guint i = 0; i < h.wseg_n[c]; i++)
                    iwk_cmd_stag(u, cmd, h.wseg[c][i].handle);
            for (guint i = 0; i < h.n_reply; i++)
                iwk_cmd_stag(u, cmd, h.reply[i].handle);
            iwk_link_message(u, tvb, cmd, IWK_ROLE_CMD);
        } else if ((has_msg && mtype == 1) || h.proc == RDMA_NOMSG) {
            const char *str = "OK";
            guint32 status = has_msg ? reply_status(tvb, h.hdr_len, end, &str) : 0;
            cmd = iwk_cmd_complete(u, ((d ^ 1) << 32) | h.xid, has_msg, status, str);
            iwk_link_message(u, tvb, cmd, IWK_ROLE_RSP);
        }
    } else if (!u->first_pass) {
        iwk_link_message(u, tvb, NULL, 0);
    }
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
        {&hf_cm_magic, {"Magic", "iwk_rpcrdma.cm.magic", FT_UINT32, BASE_HEX, NULL, 0, NULL,
                        HFILL}},
        {&hf_cm_version, {"Version", "iwk_rpcrdma.cm.version", FT_UINT8, BASE_DEC, NULL, 0, NULL,
                          HFILL}},
        {&hf_cm_flags, {"Flags", "iwk_rpcrdma.cm.flags", FT_UINT8, BASE_HEX, NULL, 0, NULL,
                        HFILL}},
        {&hf_cm_inv,
         {"Remote Invalidation", "iwk_rpcrdma.cm.remote_invalidation", FT_BOOLEAN, 8, NULL, 0x01,
          NULL, HFILL}},
        {&hf_cm_send,
         {"Send size", "iwk_rpcrdma.cm.send_size", FT_UINT32, BASE_DEC | BASE_UNIT_STRING,
          &units_byte_bytes, 0, NULL, HFILL}},
        {&hf_cm_recv,
         {"Receive size", "iwk_rpcrdma.cm.recv_size", FT_UINT32, BASE_DEC | BASE_UNIT_STRING,
          &units_byte_bytes, 0, NULL, HFILL}},
    };
    static gint *ett[] = {&ett_cm};
    proto_iwk_rpcrdma = proto_register_protocol("RPC-over-RDMA chunks (iwarpkit)",
                                                "iWARP-RPCoRDMA", "iwk_rpcrdma");
    proto_register_field_array(proto_iwk_rpcrdma, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
}
