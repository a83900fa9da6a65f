/* SPDX-License-Identifier: GPL-2.0-or-later */
/* DDP over SCTP chunk payloads. The octets below are written from the
 * figures of RFC 5043 §5.1-§5.2.3 and RFC 6581 §7/§9, not from the codec. */
#include <iwarp/sctp.h>

#include <string.h>

#include "iw_test.h"

IW_TEST(registry) {
    /* RFC 6580 §3.5 and RFC 6581 §7. */
    CHECK(strcmp(iw_sctp_fc_str(0x0001), "DDP Stream Session Initiate") == 0);
    CHECK(strcmp(iw_sctp_fc_str(0x0004), "DDP Stream Session Terminate") == 0);
    CHECK(strcmp(iw_sctp_fc_str(0x0007), "Enhanced DDP Stream Session Reject") == 0);
    CHECK(strcmp(iw_sctp_fc_str(0xFFFF), "Reserved (Experimental)") == 0);
    CHECK(strcmp(iw_sctp_fc_rfc(0x0006), "RFC 6581 §7") == 0);
    CHECK(iw_sctp_fc_str(0x0000) == NULL);
    CHECK(iw_sctp_fc_str(0x0008) == NULL);
    CHECK(iw_sctp_fc_rfc(0x1234) == NULL);
    CHECK(iw_sctp_fc_enhanced(5) && iw_sctp_fc_enhanced(6) && iw_sctp_fc_enhanced(7));
    CHECK(!iw_sctp_fc_enhanced(1) && !iw_sctp_fc_enhanced(4) && !iw_sctp_fc_enhanced(0xFFFF));
    for (int p = IW_SCTP_PROBLEM_SEG_SHORT; p <= IW_SCTP_PROBLEM_ADAPT_BAD_LEN; p++) {
        CHECK(strncmp(iw_sctp_problem_rfc((iw_sctp_problem)p), "RFC ", 4) == 0);
        CHECK(strlen(iw_sctp_problem_str((iw_sctp_problem)p)) > 10);
    }
    CHECK(iw_sctp_problem_rfc(IW_SCTP_PROBLEM_NONE) == NULL);
    CHECK(strcmp(iw_sctp_problem_str((iw_sctp_problem)999), "unknown problem") == 0);
}

IW_TEST(segment_chunk) {
    /* §5.2.2: DDP-SSN 0x0102, then an untagged DDP header's first octets. */
    const uint8_t wire[] = {0x01, 0x02, 0x41, 0x43, 0x00, 0x00};
    iw_sctp_seg s;
    iw_sctp_problem why;
    CHECK_EQ(iw_sctp_seg_decode(&s, wire, sizeof wire, &why), sizeof wire);
    CHECK_EQ(s.ssn, 0x0102);
    CHECK(s.ddp == wire + 2);
    CHECK_EQ(s.ddp_len, 4);
    CHECK_EQ(why, IW_SCTP_PROBLEM_NONE);
    /* An empty DDP segment decodes (the DDP codec judges it). */
    CHECK_EQ(iw_sctp_seg_decode(&s, wire, 2, &why), 2);
    CHECK_EQ(s.ddp_len, 0);
    for (size_t n = 0; n < 2; n++) {
        CHECK_EQ(iw_sctp_seg_decode(&s, wire, n, &why), IW_ERR_PROTO);
        CHECK_EQ(why, IW_SCTP_PROBLEM_SEG_SHORT);
    }
    uint8_t out[8];
    const uint8_t hdr[] = {0x41, 0x43}, pay[] = {0x00, 0x00};
    CHECK_EQ(iw_sctp_seg_encode(out, sizeof out, 0x0102, hdr, 2, pay, 2), 6);
    CHECK(memcmp(out, wire, 6) == 0);
    CHECK_EQ(iw_sctp_seg_encode(out, 5, 0x0102, hdr, 2, pay, 2), IW_ERR_NOBUF);
    CHECK_EQ(iw_sctp_seg_encode(out, 1, 0, NULL, 0, NULL, 0), IW_ERR_NOBUF);
    CHECK_EQ(iw_sctp_seg_encode(out, sizeof out, 0, NULL, 2, NULL, 0), IW_ERR_INVALID_ARG);
}

IW_TEST(control_plain) {
    /* §5.2.3: DDP-SSN 0, Initiate, 3 octets of Private Data. */
    const uint8_t init[] = {0x00, 0x00, 0x00, 0x01, 'a', 'b', 'c'};
    iw_sctp_ctrl c;
    iw_sctp_problem why;
    CHECK_EQ(iw_sctp_ctrl_decode(&c, init, sizeof init, &why), sizeof init);
    CHECK_EQ(c.fc, IW_SCTP_FC_INITIATE);
    CHECK_EQ(c.pd_len, 3);
    CHECK(c.ulp_pd == init + 4 && c.ulp_pd_len == 3);
    CHECK(!c.enhanced);
    /* Zero-length Private Data is allowed (§5.2.3 "MAY be of zero length"). */
    const uint8_t acc[] = {0x00, 0x01, 0x00, 0x02};
    CHECK_EQ(iw_sctp_ctrl_decode(&c, acc, sizeof acc, &why), 4);
    CHECK_EQ(c.ssn, 1);
    CHECK_EQ(c.fc, IW_SCTP_FC_ACCEPT);
    CHECK(c.pd == NULL && c.pd_len == 0 && c.ulp_pd == NULL);
    /* Terminate: no Private Data, MUST NOT carry any. */
    const uint8_t term[] = {0x00, 0x07, 0x00, 0x04, 0xEE};
    CHECK_EQ(iw_sctp_ctrl_decode(&c, term, 4, &why), 4);
    CHECK_EQ(iw_sctp_ctrl_decode(&c, term, 5, &why), IW_ERR_PROTO);
    CHECK_EQ(why, IW_SCTP_PROBLEM_TERM_WITH_PD);
    CHECK_EQ(c.fc, IW_SCTP_FC_TERMINATE); /* filled for display */
    /* Truncated below the header. */
    for (size_t n = 0; n < 4; n++) {
        CHECK_EQ(iw_sctp_ctrl_decode(&c, init, n, &why), IW_ERR_PROTO);
        CHECK_EQ(why, IW_SCTP_PROBLEM_CTRL_SHORT);
    }
    /* Unassigned codes: 0, 8 and 0x8000. */
    const uint16_t bad[] = {0x0000, 0x0008, 0x8000};
    for (size_t i = 0; i < 3; i++) {
        uint8_t b[4] = {0, 0, (uint8_t)(bad[i] >> 8), (uint8_t)bad[i]};
        CHECK_EQ(iw_sctp_ctrl_decode(&c, b, 4, &why), IW_ERR_PROTO);
        CHECK_EQ(why, IW_SCTP_PROBLEM_FC_UNASSIGNED);
        CHECK_EQ(c.fc, bad[i]);
    }
    /* Experimental: decoded, its Private Data not judged. */
    uint8_t x[4 + 600] = {0, 0, 0xFF, 0xFF};
    CHECK_EQ(iw_sctp_ctrl_decode(&c, x, sizeof x, &why), sizeof x);
}

IW_TEST(control_pd_limit) {
    static uint8_t b[4 + 513];
    memset(b, 0x5A, sizeof b);
    b[0] = b[1] = 0;
    b[2] = 0;
    b[3] = 3; /* Reject */
    iw_sctp_ctrl c;
    iw_sctp_problem why;
    CHECK_EQ(iw_sctp_ctrl_decode(&c, b, 4 + 512, &why), 4 + 512);
    CHECK_EQ(c.ulp_pd_len, 512);
    CHECK_EQ(iw_sctp_ctrl_decode(&c, b, 4 + 513, &why), IW_ERR_PROTO);
    CHECK_EQ(why, IW_SCTP_PROBLEM_PD_TOO_LONG);
    /* The enhanced data counts toward the 512 (RFC 6581 §7). */
    b[3] = 6;
    b[4] = 0x00; /* IRD 1, ORD 1: no flags */
    b[5] = 0x01;
    b[6] = 0x00;
    b[7] = 0x01;
    CHECK_EQ(iw_sctp_ctrl_decode(&c, b, 4 + 512, &why), 4 + 512);
    CHECK_EQ(c.ulp_pd_len, 508);
    CHECK_EQ(iw_sctp_ctrl_decode(&c, b, 4 + 513, &why), IW_ERR_PROTO);
    CHECK_EQ(why, IW_SCTP_PROBLEM_PD_TOO_LONG);
}

IW_TEST(control_enhanced) {
    /* RFC 6581 §7 with §9's layout: A=1 (p2p), B=0, IRD 0x10; C=1, D=0,
     * ORD 0x3FFF (no negotiation); then ULP Private Data "hi". */
    const uint8_t w[] = {0x00, 0x00, 0x00, 0x05, 0x80, 0x10, 0xBF, 0xFF, 'h', 'i'};
    iw_sctp_ctrl c;
    iw_sctp_problem why;
    CHECK_EQ(iw_sctp_ctrl_decode(&c, w, sizeof w, &why), sizeof w);
    CHECK(c.enhanced);
    CHECK(c.v2.p2p && !c.v2.rtr_send && c.v2.rtr_write && !c.v2.rtr_read);
    CHECK_EQ(c.v2.ird, 0x10);
    CHECK_EQ(c.v2.ord, IW_MPA_V2_NO_NEG);
    CHECK_EQ(c.pd_len, 6);
    CHECK(c.ulp_pd == w + 8 && c.ulp_pd_len == 2);
    CHECK_EQ(c.notes, 0);
    /* Shorter than the enhanced data: every length from 0 to 3. */
    for (size_t n = 4; n < 8; n++) {
        CHECK_EQ(iw_sctp_ctrl_decode(&c, w, n, &why), IW_ERR_PROTO);
        CHECK_EQ(why, IW_SCTP_PROBLEM_ENH_PD_SHORT);
    }
    /* RTR bits without p2p: noted (RFC 6581 §9), as for an MPA frame. */
    const uint8_t n[] = {0x00, 0x00, 0x00, 0x06, 0x40, 0x01, 0x00, 0x01};
    CHECK_EQ(iw_sctp_ctrl_decode(&c, n, sizeof n, &why), sizeof n);
    CHECK(c.notes & IW_NOTE(MPA_V2_RTR_WITHOUT_P2P));
    /* Enhanced Reject carries it too. */
    const uint8_t r[] = {0x12, 0x34, 0x00, 0x07, 0x80, 0x00, 0x40, 0x00};
    CHECK_EQ(iw_sctp_ctrl_decode(&c, r, sizeof r, &why), sizeof r);
    CHECK_EQ(c.ssn, 0x1234);
    CHECK(c.enhanced && c.v2.p2p && c.v2.rtr_read && c.ulp_pd_len == 0 && c.ulp_pd == NULL);
}

IW_TEST(control_encode) {
    uint8_t out[600];
    const uint8_t pd[] = {'h', 'i'};
    iw_sctp_ctrl c;
    memset(&c, 0, sizeof c);
    c.fc = IW_SCTP_FC_ENH_INITIATE;
    c.v2.p2p = true;
    c.v2.rtr_write = true;
    c.v2.ird = 0x10;
    c.v2.ord = IW_MPA_V2_NO_NEG;
    c.ulp_pd = pd;
    c.ulp_pd_len = 2;
    const uint8_t want[] = {0x00, 0x00, 0x00, 0x05, 0x80, 0x10, 0xBF, 0xFF, 'h', 'i'};
    CHECK_EQ(iw_sctp_ctrl_encode(out, sizeof out, &c), sizeof want);
    CHECK(memcmp(out, want, sizeof want) == 0);
    CHECK_EQ(iw_sctp_ctrl_encode(out, sizeof want - 1, &c), IW_ERR_NOBUF);
    c.v2.ird = 0x4000;
    CHECK_EQ(iw_sctp_ctrl_encode(out, sizeof out, &c), IW_ERR_INVALID_ARG);
    /* Terminate with Private Data; Private Data over 512 with the enhanced data. */
    memset(&c, 0, sizeof c);
    c.fc = IW_SCTP_FC_TERMINATE;
    c.ulp_pd = pd;
    c.ulp_pd_len = 1;
    CHECK_EQ(iw_sctp_ctrl_encode(out, sizeof out, &c), IW_ERR_INVALID_ARG);
    c.ulp_pd_len = 0;
    CHECK_EQ(iw_sctp_ctrl_encode(out, sizeof out, &c), 4);
    static const uint8_t big[512];
    c.fc = IW_SCTP_FC_ENH_ACCEPT;
    c.ulp_pd = big;
    c.ulp_pd_len = 509;
    CHECK_EQ(iw_sctp_ctrl_encode(out, sizeof out, &c), IW_ERR_INVALID_ARG);
    c.ulp_pd_len = 508;
    CHECK_EQ(iw_sctp_ctrl_encode(out, sizeof out, &c), 516);
    c.ulp_pd = NULL;
    CHECK_EQ(iw_sctp_ctrl_encode(out, sizeof out, &c), IW_ERR_INVALID_ARG);
}

IW_TEST(control_round_trip) {
    /* Every function code, Private Data lengths around the limits. */
    static uint8_t pd[512], out[600];
    for (size_t i = 0; i < sizeof pd; i++)
        pd[i] = (uint8_t)(i * 7 + 1);
    const uint16_t fcs[] = {1, 2, 3, 4, 5, 6, 7};
    const uint16_t lens[] = {0, 1, 3, 4, 508, 512};
    for (size_t f = 0; f < sizeof fcs / sizeof fcs[0]; f++) {
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
            iw_sctp_ctrl c, d;
            memset(&c, 0, sizeof c);
            c.ssn = (uint16_t)(f * 100 + l);
            c.fc = fcs[f];
            c.v2.ird = (uint16_t)(l + 1);
            c.v2.ord = (uint16_t)(f + 1);
            c.ulp_pd = pd;
            c.ulp_pd_len = lens[l];
            iw_ssize n = iw_sctp_ctrl_encode(out, sizeof out, &c);
            bool legal = !(c.fc == 4 && lens[l]) &&
                         lens[l] + (iw_sctp_fc_enhanced(c.fc) ? 4u : 0u) <= IW_SCTP_PD_MAX;
            if (!legal) {
                CHECK_EQ(n, IW_ERR_INVALID_ARG);
                continue;
            }
            CHECK(n > 0);
            iw_sctp_problem why;
            CHECK_EQ(iw_sctp_ctrl_decode(&d, out, (size_t)n, &why), n);
            CHECK_EQ(d.ssn, c.ssn);
            CHECK_EQ(d.fc, c.fc);
            CHECK_EQ(d.ulp_pd_len, lens[l]);
            CHECK(lens[l] == 0 || memcmp(d.ulp_pd, pd, lens[l]) == 0);
            CHECK_EQ(d.enhanced, iw_sctp_fc_enhanced(c.fc));
            if (d.enhanced) {
                CHECK_EQ(d.v2.ird, c.v2.ird);
                CHECK_EQ(d.v2.ord, c.v2.ord);
            }
        }
    }
}

IW_TEST(adaptation_indication) {
    /* §5.1: Type 0xC006, Length 8, DDP = 0x00000001. */
    const uint8_t w[] = {0xC0, 0x06, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01};
    uint32_t ind;
    iw_sctp_problem why;
    CHECK_EQ(iw_sctp_adapt_decode(&ind, w, sizeof w, &why), 8);
    CHECK_EQ(ind, IW_SCTP_ADAPT_DDP);
    for (size_t n = 0; n < 4; n++)
        CHECK_EQ(iw_sctp_adapt_decode(&ind, w, n, &why), IW_ERR_NEED_MORE);
    for (size_t n = 4; n < 8; n++)
        CHECK_EQ(iw_sctp_adapt_decode(&ind, w, n, &why), IW_ERR_NEED_MORE);
    const uint8_t t[] = {0xC0, 0x07, 0x00, 0x08, 0, 0, 0, 1};
    CHECK_EQ(iw_sctp_adapt_decode(&ind, t, sizeof t, &why), IW_ERR_PROTO);
    CHECK_EQ(why, IW_SCTP_PROBLEM_ADAPT_BAD_TYPE);
    const uint8_t l[] = {0xC0, 0x06, 0x00, 0x0C, 0, 0, 0, 1, 0, 0, 0, 0};
    CHECK_EQ(iw_sctp_adapt_decode(&ind, l, sizeof l, &why), IW_ERR_PROTO);
    CHECK_EQ(why, IW_SCTP_PROBLEM_ADAPT_BAD_LEN);
    uint8_t out[8];
    CHECK_EQ(iw_sctp_adapt_encode(out, sizeof out, IW_SCTP_ADAPT_DDP), 8);
    CHECK(memcmp(out, w, 8) == 0);
    CHECK_EQ(iw_sctp_adapt_encode(out, 7, IW_SCTP_ADAPT_DDP), IW_ERR_NOBUF);
}

IW_TEST(control_as_mpa) {
    /* RFC 6581 §7: each code's MPA frame, which re-encodes and decodes as
     * that frame (what the engine adapter feeds the engine). */
    static const struct {
        uint16_t fc;
        bool ok, request, r;
    } want[] = {
        {IW_SCTP_FC_INITIATE, true, true, false},
        {IW_SCTP_FC_ACCEPT, true, false, false},
        {IW_SCTP_FC_REJECT, true, false, true},
        {IW_SCTP_FC_ENH_INITIATE, true, true, false},
        {IW_SCTP_FC_ENH_ACCEPT, true, false, false},
        {IW_SCTP_FC_ENH_REJECT, true, false, true},
        {IW_SCTP_FC_TERMINATE, false, false, false},
        {IW_SCTP_FC_EXPERIMENTAL, false, false, false},
        {0x0042, false, false, false},
    };
    const uint8_t pd[] = {'h', 'i'};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        iw_sctp_ctrl c;
        memset(&c, 0, sizeof c);
        c.fc = want[i].fc;
        c.enhanced = iw_sctp_fc_enhanced(c.fc);
        c.v2.ird = 5;
        c.v2.ord = 6;
        c.ulp_pd = pd;
        c.ulp_pd_len = sizeof pd;
        c.pd = pd;
        c.pd_len = sizeof pd;
        iw_mpa_rr rr;
        CHECK_EQ(iw_sctp_ctrl_as_mpa(&c, &rr), want[i].ok);
        if (!want[i].ok)
            continue;
        CHECK_EQ(rr.type, want[i].request ? IW_MPA_REQUEST : IW_MPA_REPLY);
        CHECK_EQ(rr.r, want[i].r);
        CHECK(!rr.m && !rr.c);
        CHECK_EQ(rr.rev, c.enhanced ? IW_MPA_REV2 : IW_MPA_REV1);
        CHECK_EQ(rr.enhanced, c.enhanced);
        uint8_t f[IW_MPA_RR_HDR_LEN + 16];
        iw_ssize n = iw_mpa_rr_encode(f, sizeof f, &rr);
        CHECK(n > 0);
        iw_mpa_rr back;
        iw_verdict v;
        CHECK_EQ(iw_mpa_rr_decode(&back, f, (size_t)n, &v), n);
        CHECK_EQ(back.type, rr.type);
        CHECK_EQ(back.r, want[i].r);
        CHECK_EQ(back.enhanced, c.enhanced);
        if (c.enhanced)
            CHECK(back.v2.ird == 5 && back.v2.ord == 6);
        CHECK(back.ulp_pd_len == 2 && memcmp(back.ulp_pd, "hi", 2) == 0);
        /* ... and back to the same Function Code (iw_sctp_ctrl_from_mpa),
         * for the decoded frame and for a frame built with S=1 only. */
        iw_sctp_ctrl again;
        iw_sctp_ctrl_from_mpa(&back, 7, &again);
        CHECK(again.fc == c.fc && again.ssn == 7 && again.ulp_pd_len == 2);
        if (c.enhanced)
            CHECK(again.v2.ird == 5 && again.v2.ord == 6);
        rr.enhanced = false;
        iw_sctp_ctrl_from_mpa(&rr, 0, &again);
        CHECK_EQ(again.fc, c.fc);
    }
}

IW_TEST_MAIN("iw_sctp", IW_CASE(registry), IW_CASE(segment_chunk), IW_CASE(control_plain),
             IW_CASE(control_pd_limit), IW_CASE(control_enhanced), IW_CASE(control_encode),
             IW_CASE(control_round_trip), IW_CASE(adaptation_indication), IW_CASE(control_as_mpa))
