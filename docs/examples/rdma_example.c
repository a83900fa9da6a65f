/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rdma_example: the verbs-like API end to end (docs/verbs-api.md).
 *
 * One process plays both peers over loopback: a responder QP accepts, an
 * initiator QP connects with MPA v2 (peer-to-peer, CRC, markers), and the
 * initiator then does a Send, an RDMA Write and an RDMA Read, checking every
 * byte. Exit status 0 when all of it worked.
 *
 *   rdma_example [--transport tcp|sctp]
 *
 * With --transport sctp the same calls run DDP directly over SCTP (RFC
 * 5043, user-space SCTP in UDP): the DDP Stream Session Initiate and
 * Accept replace the MPA exchange, and SCTP's CRC32c replaces MPA's CRC
 * and markers. Exit status 2 for a bad argument or a transport this build
 * does not have. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iwarp/verbs.h>

#define DIE(...)                                                                                   \
    do {                                                                                           \
        fprintf(stderr, "rdma_example: " __VA_ARGS__);                                             \
        fputc('\n', stderr);                                                                       \
        exit(1);                                                                                   \
    } while (0)

/* Wait for the next completion of a given type on cq, for up to 2 s. */
static iw_wc wait_for(iw_cq *cq, iw_event_type type) {
    iw_wc wc;
    for (int i = 0; i < 200; i++) {
        if (iw_cq_wait(cq, &wc, 1, 10) == 1) {
            if (wc.ev.status != IW_WC_SUCCESS)
                DIE("completion %d failed with status %d", wc.ev.type, wc.ev.status);
            if (wc.ev.type == type)
                return wc;
        }
    }
    DIE("timed out waiting for event %d", type);
}

int main(int argc, char **argv) {
    iw_transport tr = IW_TRANSPORT_TCP;
    if (argc == 3 && !strcmp(argv[1], "--transport")) {
        if (iw_transport_parse(argv[2], &tr)) {
            fprintf(stderr, "rdma_example: --transport takes tcp or sctp, not '%s'\n", argv[2]);
            return 2;
        }
        if (!iw_transport_available(tr)) {
            fprintf(stderr, "rdma_example: this build has no %s transport\n", argv[2]);
            return 2;
        }
    } else if (argc != 1) {
        fprintf(stderr, "usage: rdma_example [--transport tcp|sctp]\n");
        return 2;
    }

    /* 1. A device (engine + epoll) of the chosen transport, a protection
     *    domain and a CQ. */
    iw_dev *dev;
    uint32_t pd;
    iw_cq *cq;
    if (iw_dev_open_transport(&dev, tr) || iw_pd_alloc(iw_dev_rnic(dev), &pd) ||
        iw_cq_create(dev, 64, &cq))
        DIE("cannot open the device");

    /* 2. Memory: the responder exposes a 64 KiB region for remote read and
     *    write; the initiator a sink for the RDMA Read. */
    static uint8_t remote_buf[65536], sink[4096], recv_buf[256];
    uint32_t remote_stag, sink_stag;
    if (iw_mr_reg(iw_dev_rnic(dev), pd, remote_buf, sizeof remote_buf, (uintptr_t)remote_buf,
                  IW_ACCESS_REMOTE_READ | IW_ACCESS_REMOTE_WRITE, &remote_stag) ||
        iw_mr_reg(iw_dev_rnic(dev), pd, sink, sizeof sink, (uintptr_t)sink,
                  IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_WRITE, &sink_stag))
        DIE("cannot register memory");

    /* 3. Connection settings: MPA v2 peer-to-peer with an RTR, CRC, markers. */
    iw_conn_settings s;
    iw_conn_settings_default(&s, IW_ROLE_INITIATOR);
    s.p2p = true;
    s.markers = true;
    /* Zero copy with CRCs on: place payload as it arrives, before its
     * FPDU's CRC is known (see iw_conn_settings.cut_through). */
    s.cut_through = true;
    iw_qp *server, *client;
    iw_listener *l;
    if (iw_listen(dev, "127.0.0.1", 0, &l) || iw_qp_create(dev, pd, cq, &s, &server) ||
        iw_qp_create(dev, pd, cq, &s, &client))
        DIE("cannot create the queue pairs");
    if (iw_qp_connect(client, "127.0.0.1", iw_listener_port(l)))
        DIE("connect failed");
    int rc;
    while ((rc = iw_accept(l, server)) == IW_ERR_NEED_MORE)
        iw_dev_progress(dev, 10);
    if (rc)
        DIE("accept failed: %s", iw_strerror(rc));
    /* A receive buffer must be posted before the peer's Send arrives. */
    iw_qp_post_recv(server, 100, recv_buf, sizeof recv_buf);
    iw_wc c1 = wait_for(cq, IW_EV_CONNECTED);
    iw_wc c2 = wait_for(cq, IW_EV_CONNECTED);
    (void)c2;
    printf("connected over %s: MPA rev %u, CRC %s, markers %s, MULPDU %u\n", iw_transport_name(tr),
           c1.ev.info->mpa_rev, c1.ev.info->crc ? "on" : "off",
           c1.ev.info->markers_rx ? "on" : "off", c1.ev.info->mulpdu);

    /* 4. Send: lands in the posted buffer; both sides complete. */
    static const char msg[] = "hello over iWARP";
    iw_send_wr send = {.op = IW_WR_SEND, .wr_id = 1, .data = msg, .len = sizeof msg};
    iw_qp_post_send(client, &send);
    iw_wc r = wait_for(cq, IW_EV_RECV);
    if (r.ev.len != sizeof msg || memcmp(recv_buf, msg, sizeof msg))
        DIE("Send payload mismatch");
    printf("send: %u octets received with MSN %u\n", r.ev.len, r.ev.msn);

    /* 5. RDMA Write: 40000 octets at offset 1000 of the remote region. */
    static uint8_t src[40000];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 31 + 7);
    iw_send_wr wr = {.op = IW_WR_WRITE,
                     .wr_id = 2,
                     .data = src,
                     .len = sizeof src,
                     .remote_stag = remote_stag,
                     .remote_to = (uintptr_t)remote_buf + 1000};
    iw_qp_post_send(client, &wr);
    wait_for(cq, IW_EV_WRITE_DONE);

    /* 6. RDMA Read it back into the sink (the Read Response follows the
     *    Write in the same stream, so the data is there when it returns). */
    iw_send_wr rd = {.op = IW_WR_READ,
                     .wr_id = 3,
                     .len = sizeof sink,
                     .remote_stag = remote_stag,
                     .remote_to = (uintptr_t)remote_buf + 1000,
                     .local_stag = sink_stag,
                     .local_to = (uintptr_t)sink};
    iw_qp_post_send(client, &rd);
    wait_for(cq, IW_EV_READ_DONE);
    if (memcmp(remote_buf + 1000, src, sizeof src) || memcmp(sink, src, sizeof sink))
        DIE("RDMA Write/Read data mismatch");

    iw_conn_stats st;
    iw_qp_get_stats(server, &st);
    printf("write+read: %zu octets placed, %llu payload copies on receive\n", sizeof src,
           (unsigned long long)st.payload_copies);
    /* TCP: readv() put every payload octet at its final address. SCTP:
     * the engine placed it without a copy of its own (the one copy is out
     * of usrsctp's chunk, straight to the final address). */
    if (st.payload_copies != 0 || st.bytes_placed < sizeof src)
        DIE("payload was copied on receive");
    if (tr == IW_TRANSPORT_SCTP) {
        iw_sctp_conn_stats ss;
        if (iw_qp_sctp_stats(server, &ss))
            DIE("no SCTP counters");
        printf("sctp: %llu chunks received, %llu sent, %llu reordered\n",
               (unsigned long long)ss.chunks_rx, (unsigned long long)ss.chunks_tx,
               (unsigned long long)ss.reordered);
    }
    iw_dev_close(dev);
    puts("ok");
    return 0;
}
