/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Storage over iWARP scenarios for iwk-pcapgen (included by iwk-pcapgen.c,
 * whose stream and connection helpers it uses).
 *
 * Each capture is one ULP on its standard port, MPA Rev 2 without CRC or
 * markers (as siw runs), the ULP's connection-manager private data in the
 * MPA Request/Reply (on iWARP, rdma_cm carries it there), and DDP segments
 * cut at a 1400-octet MULPDU so that bulk data spans several segments:
 *   storage-nfsv3-rdma.pcap   NFSv3 over RPC-over-RDMA v1 (RFC 8166, RFC 8267), port 20049
 *   storage-nfsv41-rdma.pcap  NFSv4.1 COMPOUNDs over RPC-over-RDMA v1, port 20049
 *   storage-nvmeof-rdma.pcap  NVMe over Fabrics, RDMA transport, port 4420
 *   storage-iser.pcap         iSER (RFC 7145), port 3260
 * The ULP encodings are written from the specifications (field comments
 * cite them); they are test data, not a second decoder. */

#define SEG_PAYLOAD 1400 /* DDP payload per segment (MULPDU less headers) */

/* Growable big-endian / little-endian byte builder. */
typedef struct {
    uint8_t b[16384];
    size_t n;
} xbuf;

static void xb_u8(xbuf *x, uint8_t v) {
    if (x->n + 1 > sizeof x->b)
        die("xbuf full");
    x->b[x->n++] = v;
}
static void xb_be32(xbuf *x, uint32_t v) {
    for (int i = 3; i >= 0; i--)
        xb_u8(x, (uint8_t)(v >> (8 * i)));
}
static void xb_be64(xbuf *x, uint64_t v) {
    xb_be32(x, (uint32_t)(v >> 32));
    xb_be32(x, (uint32_t)v);
}
static void xb_le16(xbuf *x, uint16_t v) {
    xb_u8(x, (uint8_t)v);
    xb_u8(x, (uint8_t)(v >> 8));
}
static void xb_le32(xbuf *x, uint32_t v) {
    xb_le16(x, (uint16_t)v);
    xb_le16(x, (uint16_t)(v >> 16));
}
static void xb_le64(xbuf *x, uint64_t v) {
    xb_le32(x, (uint32_t)v);
    xb_le32(x, (uint32_t)(v >> 32));
}
static void xb_bytes(xbuf *x, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        xb_u8(x, p[i]);
}
static void xb_zero(xbuf *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        xb_u8(x, 0);
}
/* XDR opaque<>: length, bytes, pad to 4 (RFC 4506 §4.10). */
static void xb_opaque(xbuf *x, const uint8_t *p, size_t n) {
    xb_be32(x, (uint32_t)n);
    xb_bytes(x, p, n);
    xb_zero(x, (4 - (n & 3)) & 3);
}
/* A Send message in DDP segments of at most SEG_PAYLOAD octets. */
static void s_send(stream *s, uint32_t *msn, const uint8_t *p, size_t n) {
    uint32_t m_sn = (*msn)++;
    size_t off = 0;
    do {
        size_t k = n - off > SEG_PAYLOAD ? SEG_PAYLOAD : n - off;
        iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND, 0, m_sn, (uint32_t)off, off + k == n);
        s_msg(s, &m, p + off, k);
        off += k;
    } while (off < n);
}

/* Send with Invalidate (RFC 5040 §5.3), one segment. */
static void s_send_inv(stream *s, uint32_t *msn, uint32_t inv_stag, const uint8_t *p, size_t n) {
    iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_SEND_INV, 0, (*msn)++, 0, true);
    m.ddp.rsvd_ulp2 = inv_stag;
    s_msg(s, &m, p, n);
}

/* A tagged message (RDMA Write or Read Response) in segments. */
static void s_tagged(stream *s, unsigned op, uint32_t stag, uint64_t to, const uint8_t *p,
                     size_t n) {
    size_t off = 0;
    do {
        size_t k = n - off > SEG_PAYLOAD ? SEG_PAYLOAD : n - off;
        iw_rdmap_msg m = iw_rdmap_msg_tagged(op, stag, to + off, off + k == n);
        s_msg(s, &m, p + off, k);
        off += k;
    } while (off < n);
}

static void s_read_req(stream *s, uint32_t *msn_q1, uint32_t sink_stag, uint64_t sink_to,
                       uint32_t size, uint32_t src_stag, uint64_t src_to) {
    iw_rdmap_msg m = iw_rdmap_msg_untagged(IW_OP_READ_REQ, 1, (*msn_q1)++, 0, true);
    m.u.read_req.sink_stag = sink_stag;
    m.u.read_req.sink_to = sink_to;
    m.u.read_req.read_size = size;
    m.u.read_req.src_stag = src_stag;
    m.u.read_req.src_to = src_to;
    s_msg(s, &m, NULL, 0);
}

/* MPA Rev 2 startup with ULP private data after the RFC 6581 enhanced data
 * (siw: client-server, IRD/ORD as the consumer asks, no CRC, no markers). */
static void storage_startup(conn *k, stream *s0, stream *s1, const uint8_t *req_pd, size_t req_len,
                            const uint8_t *rep_pd, size_t rep_len) {
    iw_mpa_rr req = rr_v2(IW_MPA_REQUEST, false, false, false, false, false, false, 16, 16);
    iw_mpa_rr rep = rr_v2(IW_MPA_REPLY, false, false, false, false, false, false, 16, 16);
    req.ulp_pd = req_pd;
    req.ulp_pd_len = (uint16_t)req_len;
    rep.ulp_pd = rep_pd;
    rep.ulp_pd_len = (uint16_t)rep_len;
    startup(k, s0, s1, &req, &rep);
}

static void flush_both(conn *k, stream *s, int side) { flush(k, side, s, 1448); }

/* ---------------- NFSv3 over RPC-over-RDMA v1 ---------------- */

#define RPC_CALL 0
#define RPC_REPLY 1
#define NFS_PROG 100003u
#define RDMA_MSG 0 /* RFC 8166 §4.2.4 rdma_proc */

/* RPC-over-RDMA v1 header (RFC 8166 §4.2.1): xid, vers 1, credits, proc,
 * then read list, write list, reply chunk. Lists are given pre-encoded. */
static void rpcrdma_hdr(xbuf *x, uint32_t xid, uint32_t credits, const xbuf *lists) {
    xb_be32(x, xid);
    xb_be32(x, 1);
    xb_be32(x, credits);
    xb_be32(x, RDMA_MSG);
    if (lists)
        xb_bytes(x, lists->b, lists->n);
    else {
        xb_be32(x, 0); /* no read list */
        xb_be32(x, 0); /* no write list */
        xb_be32(x, 0); /* no reply chunk */
    }
}

/* RPC call header (RFC 5531 §9) with AUTH_UNIX credentials. */
static void rpc_call_v(xbuf *x, uint32_t xid, uint32_t vers, uint32_t proc) {
    xb_be32(x, xid);
    xb_be32(x, RPC_CALL);
    xb_be32(x, 2);
    xb_be32(x, NFS_PROG);
    xb_be32(x, vers);
    xb_be32(x, proc);
    /* AUTH_UNIX (flavor 1): stamp, machine name "siw", uid 0, gid 0, no gids */
    xbuf c = {.n = 0};
    xb_be32(&c, 0x5f000001);
    xb_opaque(&c, (const uint8_t *)"siw", 3);
    xb_be32(&c, 0);
    xb_be32(&c, 0);
    xb_be32(&c, 0);
    xb_be32(x, 1);
    xb_opaque(x, c.b, c.n);
    xb_be32(x, 0); /* verifier AUTH_NONE */
    xb_be32(x, 0);
}

static void rpc_call(xbuf *x, uint32_t xid, uint32_t proc) { rpc_call_v(x, xid, 3, proc); }

static void rpc_reply_ok(xbuf *x, uint32_t xid) {
    xb_be32(x, xid);
    xb_be32(x, RPC_REPLY);
    xb_be32(x, 0); /* MSG_ACCEPTED */
    xb_be32(x, 0); /* verifier AUTH_NONE */
    xb_be32(x, 0);
    xb_be32(x, 0); /* SUCCESS */
}

static const uint8_t nfs_fh[28] = {0x01, 0x00, 0x07, 0x01, 0x8c, 0x2d, 0x5e, 0x11, 0x00, 0x00,
                                   0x00, 0x00, 0x3b, 0x9a, 0x41, 0x7c, 0x21, 0x00, 0x00, 0x00,
                                   0x00, 0x00, 0x00, 0x00, 0xa6, 0x3e, 0x1c, 0x02};

/* fattr3 (RFC 1813 §2.6) of a 1 MiB regular file. */
static void nfs_fattr3(xbuf *x) {
    xb_be32(x, 1);        /* NF3REG */
    xb_be32(x, 0644);     /* mode */
    xb_be32(x, 1);        /* nlink */
    xb_be32(x, 0);        /* uid */
    xb_be32(x, 0);        /* gid */
    xb_be64(x, 1u << 20); /* size */
    xb_be64(x, 1u << 20); /* used */
    xb_be64(x, 0);        /* rdev */
    xb_be64(x, 0x1c2);    /* fsid */
    xb_be64(x, 0x23e1c);  /* fileid */
    for (int i = 0; i < 3; i++) {
        xb_be32(x, 1700000000u);
        xb_be32(x, 0);
    }
}

static void gen_storage_nfs(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "storage-nfsv3-rdma.pcap");
    conn k = conn_new(c, 40, 58040, 20049, 0x4E465300u, 0x53525600u);
    stream s0 = stream_new(), s1 = stream_new();
    /* RPC-over-RDMA CM private data (RFC 8797 §5.1): magic, version 1,
     * flags (remote invalidation), inline sizes in 1 KiB units minus one. */
    const uint8_t cm_pd[8] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03};
    storage_startup(&k, &s0, &s1, cm_pd, sizeof cm_pd, cm_pd, sizeof cm_pd);
    uint32_t msn0 = 1, msn1 = 1, rq1 = 1;
    uint8_t data[4096];
    fill(data, sizeof data, 0x31);

    /* 1. NULL (RFC 1813 §3.3.0). */
    xbuf x = {.n = 0};
    rpcrdma_hdr(&x, 0x1001, 128, NULL);
    rpc_call(&x, 0x1001, 0);
    s_send(&s0, &msn0, x.b, x.n);
    flush_both(&k, &s0, 0);
    x.n = 0;
    rpcrdma_hdr(&x, 0x1001, 128, NULL);
    rpc_reply_ok(&x, 0x1001);
    s_send(&s1, &msn1, x.b, x.n);
    flush_both(&k, &s1, 1);

    /* 2. GETATTR (§3.3.1): metadata, inline both ways. */
    x.n = 0;
    rpcrdma_hdr(&x, 0x1002, 128, NULL);
    rpc_call(&x, 0x1002, 1);
    xb_opaque(&x, nfs_fh, sizeof nfs_fh);
    s_send(&s0, &msn0, x.b, x.n);
    flush_both(&k, &s0, 0);
    x.n = 0;
    rpcrdma_hdr(&x, 0x1002, 128, NULL);
    rpc_reply_ok(&x, 0x1002);
    xb_be32(&x, 0); /* NFS3_OK */
    nfs_fattr3(&x);
    s_send(&s1, &msn1, x.b, x.n);
    flush_both(&k, &s1, 1);

    /* 3. READ of 4096 octets with a Write chunk (RFC 8267 §4.1: READ data
     * is DDP-eligible): the call offers one segment, the server places the
     * data with RDMA Writes (1400 + 1400 + 1296), then replies with the
     * chunk's actual length and the reduced READ3resok (the opaque data's
     * length stays in the Payload stream, its octets go by RDMA). */
    const uint32_t w_stag = 0x000a1b01;
    const uint64_t w_to = 0xffff8881057c0000ull;
    xbuf l = {.n = 0};
    xb_be32(&l, 0); /* no read list */
    xb_be32(&l, 1); /* write list: one chunk */
    xb_be32(&l, 1); /* one segment */
    xb_be32(&l, w_stag);
    xb_be32(&l, 4096);
    xb_be64(&l, w_to);
    xb_be32(&l, 0); /* end of write list */
    xb_be32(&l, 0); /* no reply chunk */
    x.n = 0;
    rpcrdma_hdr(&x, 0x1003, 128, &l);
    rpc_call(&x, 0x1003, 6);
    xb_opaque(&x, nfs_fh, sizeof nfs_fh);
    xb_be64(&x, 0);    /* offset */
    xb_be32(&x, 4096); /* count */
    s_send(&s0, &msn0, x.b, x.n);
    flush_both(&k, &s0, 0);
    s_tagged(&s1, IW_OP_WRITE, w_stag, w_to, data, sizeof data);
    x.n = 0;
    rpcrdma_hdr(&x, 0x1003, 128, &l); /* same shape: the chunk, length 4096 */
    rpc_reply_ok(&x, 0x1003);
    xb_be32(&x, 0); /* NFS3_OK */
    xb_be32(&x, 1); /* post_op_attr follows */
    nfs_fattr3(&x);
    xb_be32(&x, 4096); /* count */
    xb_be32(&x, 0);    /* eof */
    xb_be32(&x, 4096); /* data<>: length; the octets went in the chunk */
    s_send(&s1, &msn1, x.b, x.n);
    flush_both(&k, &s1, 1);

    /* 4. WRITE of 3000 octets inline: one Send of 3 DDP segments. */
    x.n = 0;
    rpcrdma_hdr(&x, 0x1004, 128, NULL);
    rpc_call(&x, 0x1004, 7);
    xb_opaque(&x, nfs_fh, sizeof nfs_fh);
    xb_be64(&x, 8192); /* offset */
    xb_be32(&x, 3000); /* count */
    xb_be32(&x, 2);    /* FILE_SYNC */
    xb_opaque(&x, data, 3000);
    s_send(&s0, &msn0, x.b, x.n);
    flush_both(&k, &s0, 0);
    x.n = 0;
    rpcrdma_hdr(&x, 0x1004, 128, NULL);
    rpc_reply_ok(&x, 0x1004);
    xb_be32(&x, 0); /* NFS3_OK */
    xb_be32(&x, 0); /* wcc: no pre-op attrs */
    xb_be32(&x, 1); /* post-op attrs */
    nfs_fattr3(&x);
    xb_be32(&x, 3000);            /* count */
    xb_be32(&x, 2);               /* committed FILE_SYNC */
    xb_be64(&x, 0x7665726631ull); /* writeverf3 */
    s_send(&s1, &msn1, x.b, x.n);
    flush_both(&k, &s1, 1);

    /* 5. WRITE of 4096 octets with a Read chunk (RFC 8267 §4.2): the data
     * item is reduced; the read segment's position is its XDR position in
     * the RPC message (RFC 8166 §3.5.3). The server pulls it with an RDMA
     * Read, then replies. */
    const uint32_t r_stag = 0x000a1b02;
    const uint64_t r_to = 0xffff8881057d0000ull;
    xbuf rpc = {.n = 0};
    rpc_call(&rpc, 0x1005, 7);
    xb_opaque(&rpc, nfs_fh, sizeof nfs_fh);
    xb_be64(&rpc, 16384); /* offset */
    xb_be32(&rpc, 4096);  /* count */
    xb_be32(&rpc, 0);     /* UNSTABLE */
    xb_be32(&rpc, 4096);  /* data<>: length */
    uint32_t pos = (uint32_t)rpc.n;
    l.n = 0;
    xb_be32(&l, 1); /* read list: one segment */
    xb_be32(&l, pos);
    xb_be32(&l, r_stag);
    xb_be32(&l, 4096);
    xb_be64(&l, r_to);
    xb_be32(&l, 0); /* end of read list */
    xb_be32(&l, 0); /* no write list */
    xb_be32(&l, 0); /* no reply chunk */
    x.n = 0;
    rpcrdma_hdr(&x, 0x1005, 128, &l);
    xb_bytes(&x, rpc.b, rpc.n);
    s_send(&s0, &msn0, x.b, x.n);
    flush_both(&k, &s0, 0);
    const uint32_t sink = 0x000c0d01;
    const uint64_t sink_to = 0xffff888104400000ull;
    s_read_req(&s1, &rq1, sink, sink_to, 4096, r_stag, r_to);
    flush_both(&k, &s1, 1);
    s_tagged(&s0, IW_OP_READ_RESP, sink, sink_to, data, sizeof data);
    flush_both(&k, &s0, 0);
    x.n = 0;
    rpcrdma_hdr(&x, 0x1005, 128, NULL);
    rpc_reply_ok(&x, 0x1005);
    xb_be32(&x, 0); /* NFS3_OK */
    xb_be32(&x, 0);
    xb_be32(&x, 1);
    nfs_fattr3(&x);
    xb_be32(&x, 4096);
    xb_be32(&x, 0); /* UNSTABLE */
    xb_be64(&x, 0x7665726631ull);
    s_send(&s1, &msn1, x.b, x.n);
    flush_both(&k, &s1, 1);

    tcp_close(&k);
    free(s0.buf);
    free(s1.buf);
    cap_close(c);
}

/* ---------------- NFSv4.1 over RPC-over-RDMA v1 ---------------- */

/* RPC call header for NFSv4 COMPOUND (RFC 8881 §16.2) with AUTH_UNIX. */
static void rpc_call4(xbuf *x, uint32_t xid, uint32_t proc) { rpc_call_v(x, xid, 4, proc); }

static const uint8_t v4_session[16] = {0x5f, 0x3a, 0x01, 0x00, 0x11, 0x22, 0x33, 0x44,
                                       0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00};
static const uint8_t v4_stateid[16] = {0,    0,    0,    1,    0x5f, 0x3a, 0x01, 0x00,
                                       0xaa, 0xbb, 0xcc, 0x01, 0,    0,    0,    2};

/* COMPOUND4args head, then SEQUENCE and PUTFH (RFC 8881 §18.46, §18.19). */
static void v4_args_head(xbuf *x, uint32_t nops, uint32_t seqid) {
    xb_be32(x, 0); /* tag: empty */
    xb_be32(x, 1); /* minorversion */
    xb_be32(x, nops);
    xb_be32(x, 53); /* SEQUENCE */
    xb_bytes(x, v4_session, 16);
    xb_be32(x, seqid);
    xb_be32(x, 0);  /* slotid */
    xb_be32(x, 31); /* highest_slotid */
    xb_be32(x, 0);  /* cachethis */
    xb_be32(x, 22); /* PUTFH */
    xb_opaque(x, nfs_fh, sizeof nfs_fh);
}

/* COMPOUND4res head with SEQUENCE and PUTFH results, all NFS4_OK. */
static void v4_res_head(xbuf *x, uint32_t nops, uint32_t seqid) {
    xb_be32(x, 0); /* NFS4_OK */
    xb_be32(x, 0); /* tag */
    xb_be32(x, nops);
    xb_be32(x, 53);
    xb_be32(x, 0);
    xb_bytes(x, v4_session, 16);
    xb_be32(x, seqid);
    xb_be32(x, 0);
    xb_be32(x, 31);
    xb_be32(x, 31);
    xb_be32(x, 0); /* status flags */
    xb_be32(x, 22);
    xb_be32(x, 0);
}

static void gen_storage_nfs41(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "storage-nfsv41-rdma.pcap");
    conn k = conn_new(c, 44, 58044, 20049, 0x4E463400u, 0x53523400u);
    stream s0 = stream_new(), s1 = stream_new();
    const uint8_t cm_pd[8] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03};
    storage_startup(&k, &s0, &s1, cm_pd, sizeof cm_pd, cm_pd, sizeof cm_pd);
    uint32_t msn0 = 1, msn1 = 1, rq1 = 1;
    uint8_t data[4096];
    fill(data, sizeof data, 0x41);

    /* 1. SEQUENCE, PUTFH, GETATTR (type, size). */
    xbuf x = {.n = 0};
    rpcrdma_hdr(&x, 0x2001, 128, NULL);
    rpc_call4(&x, 0x2001, 1);
    v4_args_head(&x, 3, 1);
    xb_be32(&x, 9);                     /* GETATTR */
    xb_be32(&x, 1);                     /* bitmap4: one word */
    xb_be32(&x, (1u << 1) | (1u << 4)); /* FATTR4_TYPE, FATTR4_SIZE */
    s_send(&s0, &msn0, x.b, x.n);
    flush_both(&k, &s0, 0);
    x.n = 0;
    rpcrdma_hdr(&x, 0x2001, 128, NULL);
    rpc_reply_ok(&x, 0x2001);
    v4_res_head(&x, 3, 1);
    xb_be32(&x, 9);
    xb_be32(&x, 0);
    xb_be32(&x, 1);
    xb_be32(&x, (1u << 1) | (1u << 4));
    xb_be32(&x, 12); /* attrlist4 */
    xb_be32(&x, 1);  /* NF4REG */
    xb_be64(&x, 1u << 20);
    s_send(&s1, &msn1, x.b, x.n);
    flush_both(&k, &s1, 1);

    /* 2. SEQUENCE, PUTFH, READ of 4096 by write chunk (RFC 8267 §6.1):
     * RDMA Writes, then the reply with the reduced READ4resok. */
    const uint32_t w_stag = 0x000a4101;
    const uint64_t w_to = 0xffff888105900000ull;
    xbuf l = {.n = 0};
    xb_be32(&l, 0);
    xb_be32(&l, 1);
    xb_be32(&l, 1);
    xb_be32(&l, w_stag);
    xb_be32(&l, 4096);
    xb_be64(&l, w_to);
    xb_be32(&l, 0);
    xb_be32(&l, 0);
    x.n = 0;
    rpcrdma_hdr(&x, 0x2002, 128, &l);
    rpc_call4(&x, 0x2002, 1);
    v4_args_head(&x, 3, 2);
    xb_be32(&x, 25); /* READ */
    xb_bytes(&x, v4_stateid, 16);
    xb_be64(&x, 0);
    xb_be32(&x, 4096);
    s_send(&s0, &msn0, x.b, x.n);
    flush_both(&k, &s0, 0);
    s_tagged(&s1, IW_OP_WRITE, w_stag, w_to, data, sizeof data);
    x.n = 0;
    rpcrdma_hdr(&x, 0x2002, 128, &l);
    rpc_reply_ok(&x, 0x2002);
    v4_res_head(&x, 3, 2);
    xb_be32(&x, 25);
    xb_be32(&x, 0);
    xb_be32(&x, 0);    /* eof */
    xb_be32(&x, 4096); /* data<>: length; the octets went in the chunk */
    s_send(&s1, &msn1, x.b, x.n);
    flush_both(&k, &s1, 1);

    /* 3. SEQUENCE, PUTFH, WRITE of 4096 by read chunk. */
    const uint32_t r_stag = 0x000a4102;
    const uint64_t r_to = 0xffff888105a00000ull;
    xbuf rpc = {.n = 0};
    rpc_call4(&rpc, 0x2003, 1);
    v4_args_head(&rpc, 3, 3);
    xb_be32(&rpc, 38); /* WRITE */
    xb_bytes(&rpc, v4_stateid, 16);
    xb_be64(&rpc, 4096);
    xb_be32(&rpc, 0);    /* UNSTABLE4 */
    xb_be32(&rpc, 4096); /* data<>: length */
    uint32_t pos = (uint32_t)rpc.n;
    l.n = 0;
    xb_be32(&l, 1);
    xb_be32(&l, pos);
    xb_be32(&l, r_stag);
    xb_be32(&l, 4096);
    xb_be64(&l, r_to);
    xb_be32(&l, 0);
    xb_be32(&l, 0);
    xb_be32(&l, 0);
    x.n = 0;
    rpcrdma_hdr(&x, 0x2003, 128, &l);
    xb_bytes(&x, rpc.b, rpc.n);
    s_send(&s0, &msn0, x.b, x.n);
    flush_both(&k, &s0, 0);
    const uint32_t sink = 0x000c4101;
    const uint64_t sink_to = 0xffff888104800000ull;
    s_read_req(&s1, &rq1, sink, sink_to, 4096, r_stag, r_to);
    flush_both(&k, &s1, 1);
    s_tagged(&s0, IW_OP_READ_RESP, sink, sink_to, data, sizeof data);
    flush_both(&k, &s0, 0);
    x.n = 0;
    rpcrdma_hdr(&x, 0x2003, 128, NULL);
    rpc_reply_ok(&x, 0x2003);
    v4_res_head(&x, 3, 3);
    xb_be32(&x, 38);
    xb_be32(&x, 0);
    xb_be32(&x, 4096); /* count */
    xb_be32(&x, 0);    /* UNSTABLE4 */
    xb_be64(&x, 0x7665726634ull);
    s_send(&s1, &msn1, x.b, x.n);
    flush_both(&k, &s1, 1);

    tcp_close(&k);
    free(s0.buf);
    free(s1.buf);
    cap_close(c);
}

/* ---------------- NVMe over Fabrics, RDMA transport ---------------- */

/* Submission Queue Entry (NVMe Base 2.0 §4.2; Fabrics 1.1 §2.1): opcode,
 * flags (PSDT 10b: SGLs), CID, NSID, SGL1 at octet 24, CDW10.. at 40. */
typedef struct {
    uint8_t opc, fctype;
    uint16_t cid;
    uint32_t nsid;
    uint8_t sgl[16];
    uint32_t cdw[6]; /* CDW10..CDW15 */
} sqe_t;

static void sgl_keyed(uint8_t *d, uint64_t addr, uint32_t len, uint32_t key, bool inv) {
    /* Keyed SGL Data Block (Fabrics 1.1 §2.3.1.2; Base 2.0 Figure 118):
     * address (8), length (3), key (4), type 4 / subtype 0 or F (invalidate). */
    for (int i = 0; i < 8; i++)
        d[i] = (uint8_t)(addr >> (8 * i));
    d[8] = (uint8_t)len;
    d[9] = (uint8_t)(len >> 8);
    d[10] = (uint8_t)(len >> 16);
    for (int i = 0; i < 4; i++)
        d[11 + i] = (uint8_t)(key >> (8 * i));
    d[15] = (uint8_t)(0x40 | (inv ? 0x0F : 0x00));
}

static void sgl_incapsule(uint8_t *d, uint32_t len) {
    /* SGL Data Block, subtype Offset: in-capsule data at offset 0. */
    memset(d, 0, 16);
    d[8] = (uint8_t)len;
    d[9] = (uint8_t)(len >> 8);
    d[10] = (uint8_t)(len >> 16);
    d[11] = (uint8_t)(len >> 24);
    d[15] = 0x01;
}

static void xb_sqe(xbuf *x, const sqe_t *q) {
    xb_u8(x, q->opc);
    xb_u8(x, 0x40); /* PSDT = 01b: SGL, metadata contiguous (Fabrics: SGLs only) */
    xb_le16(x, q->cid);
    if (q->opc == 0x7f) {
        /* Fabrics command: fctype at octet 4, reserved to 24. */
        xb_u8(x, q->fctype);
        xb_zero(x, 19);
    } else {
        xb_le32(x, q->nsid);
        xb_zero(x, 16); /* CDW2-3, MPTR */
    }
    xb_bytes(x, q->sgl, 16);
    for (int i = 0; i < 6; i++)
        xb_le32(x, q->cdw[i]);
}

/* Completion Queue Entry (Base 2.0 §4.6): DW0, DW1, SQHD, SQID, CID, status. */
static void xb_cqe(xbuf *x, uint64_t dw01, uint16_t sqhd, uint16_t sqid, uint16_t cid,
                   uint16_t status) {
    xb_le64(x, dw01);
    xb_le16(x, sqhd);
    xb_le16(x, sqid);
    xb_le16(x, cid);
    xb_le16(x, (uint16_t)(status << 1)); /* phase tag 0 */
}

static void nvme_connect_data(xbuf *x, uint16_t cntlid) {
    /* Connect command data (Fabrics 1.1 Figure 20): HOSTID, CNTLID,
     * SUBNQN at 256, HOSTNQN at 512, 1024 octets. */
    size_t base = x->n;
    for (int i = 0; i < 16; i++)
        xb_u8(x, (uint8_t)(0x10 + i));
    xb_le16(x, cntlid);
    xb_zero(x, 256 - 18);
    const char *sub = "nqn.2026-11.org.iwarpkit:subsys1";
    const char *host = "nqn.2014-08.org.nvmexpress:uuid:10111213-1415-1617-1819-1a1b1c1d1e1f";
    xb_bytes(x, (const uint8_t *)sub, strlen(sub));
    xb_zero(x, 256 - strlen(sub));
    xb_bytes(x, (const uint8_t *)host, strlen(host));
    xb_zero(x, 1024 - (x->n - base));
}

static void nvme_send_cmd(stream *s, uint32_t *msn, const sqe_t *q, const xbuf *incap) {
    xbuf x = {.n = 0};
    xb_sqe(&x, q);
    if (incap)
        xb_bytes(&x, incap->b, incap->n);
    s_send(s, msn, x.b, x.n);
}

static void nvme_send_cqe(stream *s, uint32_t *msn, uint64_t dw01, uint16_t sqhd, uint16_t sqid,
                          uint16_t cid, uint16_t status, uint32_t inv) {
    xbuf x = {.n = 0};
    xb_cqe(&x, dw01, sqhd, sqid, cid, status);
    if (inv)
        s_send_inv(s, msn, inv, x.b, x.n);
    else
        s_send(s, msn, x.b, x.n);
}

static void nvme_connect(conn *k, stream *s0, stream *s1, uint32_t *m0, uint32_t *m1, uint16_t qid,
                         uint16_t cid, uint16_t cntlid_req, uint16_t cntlid) {
    sqe_t q;
    memset(&q, 0, sizeof q);
    q.opc = 0x7f;
    q.fctype = 0x01; /* Connect */
    q.cid = cid;
    sgl_incapsule(q.sgl, 1024);
    q.cdw[0] = (uint32_t)qid << 16; /* RECFMT 0, QID */
    q.cdw[1] = qid ? 127 : 31;      /* SQSIZE (0's based) */
    q.cdw[2] = 0;                   /* CATTR */
    q.cdw[3] = qid ? 0 : 15000;     /* KATO (admin queue) */
    xbuf d = {.n = 0};
    nvme_connect_data(&d, cntlid_req);
    nvme_send_cmd(s0, m0, &q, &d);
    flush_both(k, s0, 0);
    nvme_send_cqe(s1, m1, cntlid, 1, qid, cid, 0, 0);
    flush_both(k, s1, 1);
}

static void nvme_startup(conn *k, stream *s0, stream *s1, uint16_t qid, uint16_t sqsize) {
    /* RDMA_CM_REQUEST / RDMA_CM_ACCEPT private data (Fabrics 1.1 §7.3.1.x,
     * Figures 49 and 50), little endian. */
    xbuf req = {.n = 0}, rep = {.n = 0};
    xb_le16(&req, 0);                      /* RECFMT */
    xb_le16(&req, qid);                    /* QID */
    xb_le16(&req, sqsize);                 /* HRQSIZE */
    xb_le16(&req, (uint16_t)(sqsize - 1)); /* HSQSIZE (0's based) */
    xb_le16(&req, 0xffff);                 /* CNTLID (dynamic) */
    xb_zero(&req, 22);
    xb_le16(&rep, 0);      /* RECFMT */
    xb_le16(&rep, sqsize); /* CRQSIZE */
    xb_zero(&rep, 28);
    storage_startup(k, s0, s1, req.b, req.n, rep.b, rep.n);
}

static void gen_storage_nvme(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "storage-nvmeof-rdma.pcap");
    uint8_t data[4096];
    fill(data, sizeof data, 0x4e);

    /* Admin queue. */
    conn a = conn_new(c, 41, 58041, 4420, 0x4E564D00u, 0x54475400u);
    stream a0 = stream_new(), a1 = stream_new();
    nvme_startup(&a, &a0, &a1, 0, 32);
    uint32_t am0 = 1, am1 = 1;
    nvme_connect(&a, &a0, &a1, &am0, &am1, 0, 0x0000, 0xffff, 1);

    sqe_t q;
    /* Property Get CAP (Fabrics 1.1 §3.4, offset 0, 8 octets). */
    memset(&q, 0, sizeof q);
    q.opc = 0x7f;
    q.fctype = 0x04;
    q.cid = 0x0001;
    q.cdw[0] = 1; /* ATTRIB: 8-octet property */
    q.cdw[1] = 0; /* OFST: CAP */
    nvme_send_cmd(&a0, &am0, &q, NULL);
    flush_both(&a, &a0, 0);
    nvme_send_cqe(&a1, &am1, 0x0000004020ff007full, 2, 0, 0x0001, 0, 0);
    flush_both(&a, &a1, 1);

    /* Property Set CC.EN = 1 (offset 0x14, 4 octets). */
    memset(&q, 0, sizeof q);
    q.opc = 0x7f;
    q.fctype = 0x00;
    q.cid = 0x0002;
    q.cdw[0] = 0;
    q.cdw[1] = 0x14;
    q.cdw[2] = 0x00460001; /* VALUE: IOCQES 4, IOSQES 6, EN */
    nvme_send_cmd(&a0, &am0, &q, NULL);
    flush_both(&a, &a0, 0);
    nvme_send_cqe(&a1, &am1, 0, 3, 0, 0x0002, 0, 0);
    flush_both(&a, &a1, 1);

    /* Property Get CSTS (offset 0x1c, 4 octets). */
    memset(&q, 0, sizeof q);
    q.opc = 0x7f;
    q.fctype = 0x04;
    q.cid = 0x0003;
    q.cdw[1] = 0x1c;
    nvme_send_cmd(&a0, &am0, &q, NULL);
    flush_both(&a, &a0, 0);
    nvme_send_cqe(&a1, &am1, 1, 4, 0, 0x0003, 0, 0);
    flush_both(&a, &a1, 1);

    /* Identify Controller (CNS 1): 4096 octets by RDMA Write to the keyed
     * SGL's STag, then the CQE by Send with Invalidate of that STag. */
    const uint32_t id_key = 0x00b0c101;
    const uint64_t id_addr = 0x1ff4d0000ull;
    memset(&q, 0, sizeof q);
    q.opc = 0x06;
    q.cid = 0x0004;
    sgl_keyed(q.sgl, id_addr, 4096, id_key, true);
    q.cdw[0] = 1; /* CNS: Identify Controller */
    nvme_send_cmd(&a0, &am0, &q, NULL);
    flush_both(&a, &a0, 0);
    uint8_t idc[4096];
    memset(idc, 0, sizeof idc);
    idc[0] = 0x86; /* VID */
    idc[1] = 0x80;
    memcpy(idc + 4, "iwarpkit0001        ", 20);
    memcpy(idc + 24, "Linux nvmet over siw                    ", 40);
    memcpy(idc + 64, "6.1.0   ", 8);
    s_tagged(&a1, IW_OP_WRITE, id_key, id_addr, idc, sizeof idc);
    nvme_send_cqe(&a1, &am1, 0, 5, 0, 0x0004, 0, id_key);
    flush_both(&a, &a1, 1);

    /* I/O queue 1 on its own connection. */
    conn io = conn_new(c, 42, 58042, 4420, 0x4E564D10u, 0x54475410u);
    stream i0 = stream_new(), i1 = stream_new();
    nvme_startup(&io, &i0, &i1, 1, 128);
    uint32_t im0 = 1, im1 = 1, irq = 1;
    nvme_connect(&io, &i0, &i1, &im0, &im1, 1, 0x0000, 1, 1);

    /* Read 8 blocks of 512 (NLB 7) at LBA 0: RDMA Write to the host. */
    const uint32_t rd_key = 0x00b0c102;
    const uint64_t rd_addr = 0x1ff4e0000ull;
    memset(&q, 0, sizeof q);
    q.opc = 0x02;
    q.cid = 0x0011;
    q.nsid = 1;
    sgl_keyed(q.sgl, rd_addr, 4096, rd_key, true);
    q.cdw[0] = 0; /* SLBA low */
    q.cdw[2] = 7; /* NLB (0's based) */
    nvme_send_cmd(&i0, &im0, &q, NULL);
    flush_both(&io, &i0, 0);
    s_tagged(&i1, IW_OP_WRITE, rd_key, rd_addr, data, sizeof data);
    nvme_send_cqe(&i1, &im1, 0, 1, 1, 0x0011, 0, rd_key);
    flush_both(&io, &i1, 1);

    /* Write 8 blocks at LBA 8: the target pulls the data with an RDMA Read
     * from the host's keyed SGL. */
    const uint32_t wr_key = 0x00b0c103;
    const uint64_t wr_addr = 0x1ff4f0000ull;
    memset(&q, 0, sizeof q);
    q.opc = 0x01;
    q.cid = 0x0012;
    q.nsid = 1;
    sgl_keyed(q.sgl, wr_addr, 4096, wr_key, false);
    q.cdw[0] = 8;
    q.cdw[2] = 7;
    nvme_send_cmd(&i0, &im0, &q, NULL);
    flush_both(&io, &i0, 0);
    const uint32_t t_sink = 0x00e0f001;
    const uint64_t t_sink_to = 0xffff888106000000ull;
    s_read_req(&i1, &irq, t_sink, t_sink_to, 4096, wr_key, wr_addr);
    flush_both(&io, &i1, 1);
    s_tagged(&i0, IW_OP_READ_RESP, t_sink, t_sink_to, data, sizeof data);
    flush_both(&io, &i0, 0);
    nvme_send_cqe(&i1, &im1, 0, 2, 1, 0x0012, 0, 0);
    flush_both(&io, &i1, 1);

    /* Flush (no data), then a Read past the end: an error status. */
    memset(&q, 0, sizeof q);
    q.opc = 0x00;
    q.cid = 0x0013;
    q.nsid = 1;
    nvme_send_cmd(&i0, &im0, &q, NULL);
    flush_both(&io, &i0, 0);
    nvme_send_cqe(&i1, &im1, 0, 3, 1, 0x0013, 0, 0);
    flush_both(&io, &i1, 1);

    /* Disconnect the I/O queue (Fabrics 1.1 §3.6), then close both. */
    memset(&q, 0, sizeof q);
    q.opc = 0x7f;
    q.fctype = 0x08;
    q.cid = 0x0014;
    nvme_send_cmd(&i0, &im0, &q, NULL);
    flush_both(&io, &i0, 0);
    nvme_send_cqe(&i1, &im1, 0, 4, 1, 0x0014, 0, 0);
    flush_both(&io, &i1, 1);
    tcp_close(&io);
    tcp_close(&a);
    free(a0.buf);
    free(a1.buf);
    free(i0.buf);
    free(i1.buf);
    cap_close(c);
}

/* ---------------- iSER ---------------- */

/* iSER header for an iSCSI control-type PDU (RFC 7145 §9.2). */
static void xb_iser(xbuf *x, bool wsv, uint32_t wstag, uint64_t wbo, bool rsv, uint32_t rstag,
                    uint64_t rbo) {
    xb_u8(x, (uint8_t)(0x10 | (wsv ? 0x08 : 0) | (rsv ? 0x04 : 0)));
    xb_zero(x, 3);
    xb_be32(x, wsv ? wstag : 0);
    xb_be64(x, wsv ? wbo : 0);
    xb_be32(x, rsv ? rstag : 0);
    xb_be64(x, rsv ? rbo : 0);
}

/* iSCSI Basic Header Segment (RFC 7143 §11.2.1) and data, padded to 4. */
static void xb_bhs(xbuf *x, const uint8_t bhs[48], const uint8_t *data, uint32_t dlen) {
    uint8_t b[48];
    memcpy(b, bhs, 48);
    b[5] = (uint8_t)(dlen >> 16);
    b[6] = (uint8_t)(dlen >> 8);
    b[7] = (uint8_t)dlen;
    xb_bytes(x, b, 48);
    if (dlen) {
        xb_bytes(x, data, dlen);
        xb_zero(x, (4 - (dlen & 3)) & 3);
    }
}

static void be32_at(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void iser_pdu(stream *s, uint32_t *msn, const xbuf *pdu, bool wsv, uint32_t wstag,
                     uint64_t wbo, bool rsv, uint32_t rstag, uint64_t rbo) {
    xbuf x = {.n = 0};
    xb_iser(&x, wsv, wstag, wbo, rsv, rstag, rbo);
    xb_bytes(&x, pdu->b, pdu->n);
    s_send(s, msn, x.b, x.n);
}

static void gen_storage_iser(const char *dir) {
    iw_pcapw_file *c = cap_open(dir, "storage-iser.pcap");
    conn k = conn_new(c, 43, 58043, 3260, 0x49534500u, 0x54475200u);
    stream s0 = stream_new(), s1 = stream_new();
    /* iSER CM private data as Linux sends it (struct iser_cm_hdr: flags, 3
     * reserved): ib_iser's with no flag, isert's with ZBVA not used. */
    const uint8_t cm_req[4] = {0x00, 0, 0, 0};
    const uint8_t cm_rep[4] = {0x80, 0, 0, 0};
    storage_startup(&k, &s0, &s1, cm_req, sizeof cm_req, cm_rep, sizeof cm_rep);
    uint32_t m0 = 1, m1 = 1, rq = 1;
    uint8_t data[4096];
    fill(data, sizeof data, 0x69);

    /* Login (RFC 7143 §11.12): leading login, operational stage, with the
     * iSER keys (RFC 7145 §6.3), straight to full feature phase. */
    const char *keys = "InitiatorName=iqn.2004-10.com.ubuntu:01:siw\0"
                       "TargetName=iqn.2026-11.org.iwarpkit:tgt1\0"
                       "SessionType=Normal\0RDMAExtensions=Yes\0"
                       "InitiatorRecvDataSegmentLength=262144\0"
                       "TargetRecvDataSegmentLength=8192\0MaxOutstandingUnexpectedPDUs=0\0"
                       "HeaderDigest=None\0DataDigest=None\0";
    size_t klen = 0;
    while (keys[klen] || keys[klen + 1])
        klen++;
    klen += 2;
    uint8_t bhs[48];
    memset(bhs, 0, sizeof bhs);
    bhs[0] = 0x43;                                  /* I, Login Request */
    bhs[1] = 0x87;                                  /* T, CSG 1, NSG 3 */
    memcpy(bhs + 8, "\x40\x00\x01\x37\x00\x00", 6); /* ISID */
    be32_at(bhs + 16, 0);                           /* ITT */
    be32_at(bhs + 24, 1);                           /* CmdSN */
    xbuf p = {.n = 0};
    xb_bhs(&p, bhs, (const uint8_t *)keys, (uint32_t)klen);
    iser_pdu(&s0, &m0, &p, false, 0, 0, false, 0, 0);
    flush_both(&k, &s0, 0);
    const char *rkeys = "TargetPortalGroupTag=1\0RDMAExtensions=Yes\0HeaderDigest=None\0"
                        "DataDigest=None\0MaxOutstandingUnexpectedPDUs=0\0";
    size_t rlen = 0;
    while (rkeys[rlen] || rkeys[rlen + 1])
        rlen++;
    rlen += 2;
    memset(bhs, 0, sizeof bhs);
    bhs[0] = 0x23; /* Login Response */
    bhs[1] = 0x87;
    memcpy(bhs + 8, "\x40\x00\x01\x37\x00\x00", 6);
    bhs[14] = 0x00; /* TSIH 1 */
    bhs[15] = 0x01;
    be32_at(bhs + 16, 0);
    be32_at(bhs + 24, 0);  /* StatSN */
    be32_at(bhs + 28, 1);  /* ExpCmdSN */
    be32_at(bhs + 32, 64); /* MaxCmdSN */
    p.n = 0;
    xb_bhs(&p, bhs, (const uint8_t *)rkeys, (uint32_t)rlen);
    iser_pdu(&s1, &m1, &p, false, 0, 0, false, 0, 0);
    flush_both(&k, &s1, 1);

    /* SCSI READ(10) of 8 blocks of 512 (RFC 7145 §9.5.2): the target puts
     * the data in the Read STag with RDMA Writes, then the SCSI Response. */
    const uint32_t rstag = 0x00d1e201;
    const uint64_t rbo = 0xffff888107200000ull;
    memset(bhs, 0, sizeof bhs);
    bhs[0] = 0x01;           /* SCSI Command */
    bhs[1] = 0xc1;           /* F, R, ATTR simple */
    bhs[9] = 0x01;           /* LUN 1 */
    be32_at(bhs + 16, 0x10); /* ITT */
    be32_at(bhs + 20, 4096); /* EDTL */
    be32_at(bhs + 24, 1);    /* CmdSN */
    be32_at(bhs + 28, 1);    /* ExpStatSN */
    bhs[32] = 0x28;          /* READ(10) */
    be32_at(bhs + 34, 0);    /* LBA */
    bhs[39] = 8;             /* transfer length */
    p.n = 0;
    xb_bhs(&p, bhs, NULL, 0);
    iser_pdu(&s0, &m0, &p, false, 0, 0, true, rstag, rbo);
    flush_both(&k, &s0, 0);
    s_tagged(&s1, IW_OP_WRITE, rstag, rbo, data, sizeof data);
    memset(bhs, 0, sizeof bhs);
    bhs[0] = 0x21; /* SCSI Response */
    bhs[1] = 0x80;
    be32_at(bhs + 16, 0x10);
    be32_at(bhs + 24, 1); /* StatSN */
    be32_at(bhs + 28, 2); /* ExpCmdSN */
    be32_at(bhs + 32, 65);
    p.n = 0;
    xb_bhs(&p, bhs, NULL, 0);
    iser_pdu(&s1, &m1, &p, false, 0, 0, false, 0, 0);
    flush_both(&k, &s1, 1);

    /* SCSI WRITE(10) of 8 blocks (§9.5.1): the target pulls the data from
     * the Write STag with an RDMA Read. */
    const uint32_t wstag = 0x00d1e202;
    const uint64_t wbo = 0xffff888107300000ull;
    memset(bhs, 0, sizeof bhs);
    bhs[0] = 0x01;
    bhs[1] = 0xa1; /* F, W */
    bhs[9] = 0x01;
    be32_at(bhs + 16, 0x11);
    be32_at(bhs + 20, 4096);
    be32_at(bhs + 24, 2);
    be32_at(bhs + 28, 2);
    bhs[32] = 0x2a; /* WRITE(10) */
    be32_at(bhs + 34, 8);
    bhs[39] = 8;
    p.n = 0;
    xb_bhs(&p, bhs, NULL, 0);
    iser_pdu(&s0, &m0, &p, true, wstag, wbo, false, 0, 0);
    flush_both(&k, &s0, 0);
    const uint32_t t_sink = 0x00f0a001;
    const uint64_t t_sink_to = 0xffff888108000000ull;
    s_read_req(&s1, &rq, t_sink, t_sink_to, 4096, wstag, wbo);
    flush_both(&k, &s1, 1);
    s_tagged(&s0, IW_OP_READ_RESP, t_sink, t_sink_to, data, sizeof data);
    flush_both(&k, &s0, 0);
    memset(bhs, 0, sizeof bhs);
    bhs[0] = 0x21;
    bhs[1] = 0x80;
    be32_at(bhs + 16, 0x11);
    be32_at(bhs + 24, 2);
    be32_at(bhs + 28, 3);
    be32_at(bhs + 32, 66);
    p.n = 0;
    xb_bhs(&p, bhs, NULL, 0);
    iser_pdu(&s1, &m1, &p, false, 0, 0, false, 0, 0);
    flush_both(&k, &s1, 1);

    /* Logout (RFC 7143 §11.14). */
    memset(bhs, 0, sizeof bhs);
    bhs[0] = 0x46;
    bhs[1] = 0x80; /* close the session */
    be32_at(bhs + 16, 0x12);
    be32_at(bhs + 24, 3);
    be32_at(bhs + 28, 3);
    p.n = 0;
    xb_bhs(&p, bhs, NULL, 0);
    iser_pdu(&s0, &m0, &p, false, 0, 0, false, 0, 0);
    flush_both(&k, &s0, 0);
    memset(bhs, 0, sizeof bhs);
    bhs[0] = 0x26;
    bhs[1] = 0x80;
    be32_at(bhs + 16, 0x12);
    be32_at(bhs + 24, 3);
    be32_at(bhs + 28, 4);
    be32_at(bhs + 32, 67);
    p.n = 0;
    xb_bhs(&p, bhs, NULL, 0);
    iser_pdu(&s1, &m1, &p, false, 0, 0, false, 0, 0);
    flush_both(&k, &s1, 1);

    tcp_close(&k);
    free(s0.buf);
    free(s1.buf);
    cap_close(c);
}

static void gen_storage(const char *dir) {
    gen_storage_nfs(dir);
    gen_storage_nfs41(dir);
    gen_storage_nvme(dir);
    gen_storage_iser(dir);
}
