/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine over SCTP (iw_sctp_conn, reference-stack/lib/src/iw_sctp_conn.c)
 * receiving arbitrary DATA chunk payloads, as active or passive side.
 *
 * Input: [cfg] then records [sel][len:2][len octets] until the input ends
 * (a record's length is cut to what is left).
 *   cfg bit 0: active side (it sends the Initiate), else passive; bit 1:
 *     RFC 5044 frames (plain codes), else RFC 6581 (enhanced); bit 2: p2p;
 *     bit 3: the passive side rejects; bits 4-5: DDP-SSN window 4 << v;
 *     bit 6: a Send, a Write and a Read posted once started; bit 7: SCTP
 *     acks nothing (else every message is acked as it is taken).
 *   sel bits 0-1: PPID 16, 17, sel itself (not a DDP PPID), 16; bit 2:
 *     the first two octets become the DDP-SSN due (so the chunk reaches
 *     the session rules); bit 3: the output is not drained after it.
 * Invariants:
 *  - no crash, UB or leak; iw_sctp_conn_recv returns 0 or IW_ERR_PROTO,
 *    and IW_ERR_PROTO names a problem with an RFC section;
 *  - what goes out is RFC 5043's: PPID 16 or 17 on the stream's
 *    identifier, DDP-SSNs from 0 with no gaps (§6.1), Session Control that
 *    decodes, the side's opening message first (Initiate, or Accept /
 *    Reject), at most one Terminate and nothing after it (§6.2), nothing
 *    after a Reject (§6.3), DDP segments no longer than the maximum (§9);
 *  - no octet outside the registered region and the posted buffer changes. */
#include <iwarp/sctp_conn.h>
#include <iwarp/wire.h>

#include "fuzz.h"

#define MAX_SEG IW_SCTP_MAX_SEG_MIN
#define GUARD 64
#define REGION 2048

typedef struct out_state {
    uint16_t sid;
    uint16_t next_ssn;
    bool active;
    bool ended; /* a Terminate or a Reject went out */
} out_state;

static int on_event(iw_conn *c, const iw_event *ev, void *user) {
    (void)c;
    (void)ev;
    (void)user;
    return 0;
}

static void check_out(iw_sctp_conn *sc, out_state *o, bool ack) {
    iw_sctp_msg m;
    int rc;
    while ((rc = iw_sctp_conn_next(sc, &m, 1)) == 1) {
        FUZZ_CHECK(!o->ended);
        FUZZ_CHECK(m.sid == o->sid);
        FUZZ_CHECK(m.len >= IW_SCTP_SSN_LEN);
        FUZZ_CHECK(iw_get_u16(m.data) == o->next_ssn);
        bool first = o->next_ssn == 0;
        o->next_ssn++;
        if (m.ppid == IW_SCTP_PPID_DDP_SEGMENT) {
            FUZZ_CHECK(!first);
            FUZZ_CHECK(m.len - IW_SCTP_SSN_LEN <= MAX_SEG);
        } else {
            FUZZ_CHECK(m.ppid == IW_SCTP_PPID_DDP_CONTROL);
            iw_sctp_ctrl c;
            iw_sctp_problem why;
            FUZZ_CHECK(iw_sctp_ctrl_decode(&c, m.data, m.len, &why) == (iw_ssize)m.len);
            bool opens = c.fc == IW_SCTP_FC_INITIATE || c.fc == IW_SCTP_FC_ENH_INITIATE;
            bool answers = c.fc == IW_SCTP_FC_ACCEPT || c.fc == IW_SCTP_FC_ENH_ACCEPT ||
                           c.fc == IW_SCTP_FC_REJECT || c.fc == IW_SCTP_FC_ENH_REJECT;
            if (first)
                FUZZ_CHECK(o->active ? opens : (answers || c.fc == IW_SCTP_FC_TERMINATE));
            else
                FUZZ_CHECK(c.fc == IW_SCTP_FC_TERMINATE);
            if (c.fc == IW_SCTP_FC_TERMINATE || c.fc == IW_SCTP_FC_REJECT ||
                c.fc == IW_SCTP_FC_ENH_REJECT)
                o->ended = true;
        }
        if (ack)
            FUZZ_CHECK(iw_sctp_conn_tx_acked(sc, (uint16_t)(o->next_ssn - 1)) == 0);
    }
    FUZZ_CHECK(rc == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    uint8_t cfg = fuzz_u8(&in);
    iw_role role = (cfg & 1) ? IW_ROLE_INITIATOR : IW_ROLE_RESPONDER;
    iw_sctp_conn_settings s;
    iw_sctp_conn_settings_default(&s, role);
    s.conn.mpa_rev = (cfg & 2) ? 1 : 2;
    s.conn.p2p = (cfg & 4) && s.conn.mpa_rev == 2;
    s.conn.reject = (cfg & 8) != 0;
    s.conn.mpa_timeout = 0;
    s.window = 4u << ((cfg >> 4) & 3);
    s.max_seg = MAX_SEG;
    s.sid = 7;
    bool ack = !(cfg & 0x80);

    static uint8_t mem[GUARD + REGION + GUARD], rbuf[GUARD + 256 + GUARD], src[REGION];
    memset(mem, 0xA5, sizeof mem);
    memset(rbuf, 0x5A, sizeof rbuf);
    iw_rnic *rnic;
    uint32_t pd, stag;
    FUZZ_CHECK(iw_rnic_new(&rnic, NULL) == 0);
    FUZZ_CHECK(iw_pd_alloc(rnic, &pd) == 0);
    FUZZ_CHECK(iw_mr_reg(rnic, pd, mem + GUARD, REGION, 0,
                         IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_WRITE | IW_ACCESS_REMOTE_READ,
                         &stag) == 0);
    const iw_callbacks cb = {IW_CALLBACKS_V1, on_event};
    iw_sctp_conn *sc;
    FUZZ_CHECK(iw_sctp_conn_new(&sc, rnic, pd, &s, &cb, NULL) == 0);
    FUZZ_CHECK(iw_sctp_conn_start(sc, 1) == 0);
    iw_conn *e = iw_sctp_conn_engine(sc);
    FUZZ_CHECK(iw_conn_post_recv(e, 1, rbuf + GUARD, 256) == 0);
    if (cfg & 0x40) {
        iw_send_wr w = {.op = IW_WR_SEND, .wr_id = 1, .data = src, .len = 100};
        FUZZ_CHECK(iw_conn_post_send(e, &w) == 0);
        w = (iw_send_wr){.op = IW_WR_WRITE,
                         .wr_id = 2,
                         .data = src,
                         .len = 1500,
                         .remote_stag = 0x100,
                         .remote_to = 0};
        FUZZ_CHECK(iw_conn_post_send(e, &w) == 0);
        w = (iw_send_wr){.op = IW_WR_READ,
                         .wr_id = 3,
                         .len = 600,
                         .remote_stag = 0x100,
                         .local_stag = stag,
                         .local_to = 0};
        FUZZ_CHECK(iw_conn_post_send(e, &w) == 0);
    }
    out_state o = {.sid = 7, .active = role == IW_ROLE_INITIATOR};
    check_out(sc, &o, ack);
    uint16_t due = 0;
    while (in.n) {
        uint8_t sel = fuzz_u8(&in);
        size_t len = fuzz_u16(&in);
        if (len > in.n)
            len = in.n;
        uint8_t *chunk = fuzz_dup(in.p, len);
        in.p += len;
        in.n -= len;
        uint32_t ppid = (sel & 3) == 1   ? IW_SCTP_PPID_DDP_CONTROL
                        : (sel & 3) == 2 ? sel
                                         : IW_SCTP_PPID_DDP_SEGMENT;
        if ((sel & 4) && len >= 2)
            iw_put_u16(chunk, due);
        int rc = iw_sctp_conn_recv(sc, ppid, chunk, len, 1);
        FUZZ_CHECK(rc == 0 || rc == IW_ERR_PROTO);
        if (rc == IW_ERR_PROTO) {
            iw_sctp_sess_problem p = iw_sctp_conn_problem(sc, NULL);
            FUZZ_CHECK(p != IW_SCTP_SESS_PROBLEM_NONE && iw_sctp_sess_problem_rfc(p) != NULL);
        }
        if (rc == 0 && len >= 2 && iw_get_u16(chunk) == due)
            due++;
        free(chunk);
        if (!(sel & 8))
            check_out(sc, &o, ack);
    }
    check_out(sc, &o, ack);
    for (size_t i = 0; i < GUARD; i++) {
        FUZZ_CHECK(mem[i] == 0xA5 && mem[GUARD + REGION + i] == 0xA5);
        FUZZ_CHECK(rbuf[i] == 0x5A && rbuf[GUARD + 256 + i] == 0x5A);
    }
    iw_sctp_conn_del(sc);
    iw_rnic_del(rnic);
    return 0;
}
