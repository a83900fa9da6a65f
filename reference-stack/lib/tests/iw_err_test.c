/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Error registry, close reasons, notes and library error codes.
 *
 * Every expected number and name below is copied by hand from the RFC texts
 * (RFC 6580 §3.1-3.3 registry contents, RFC 6581 §8 and §11 for MPA codes
 * 5-7), not from <iwarp/err.h>. */
#include <iwarp/err.h>

#include <limits.h>

#include "iw_test.h"

typedef struct {
    uint16_t value;   /* the enum constant under test */
    uint16_t want;    /* layer<<12 | etype<<8 | code, written from the RFC */
    const char *name; /* registry text */
    const char *rfc_prefix;
} term_row;

/* RFC 6580 §3.1 (RDMAP), §3.2 (DDP), §3.3 + RFC 6581 §11 (MPA). */
static const term_row term_rows[] = {
    /* 0x0/0x0/ALL: "ALL" types use code 0x00 for the constant */
    {IW_TERM_RDMAP_LOCAL_CATASTROPHIC, 0x0000, "RDMA Local Catastrophic Error", "RFC 5040"},
    {IW_TERM_RDMAP_INVALID_STAG, 0x0100, "Remote Protection Error / Invalid Steering Tag",
     "RFC 5040"},
    {IW_TERM_RDMAP_BASE_BOUNDS, 0x0101, "Remote Protection Error / Base or bounds violation",
     "RFC 5040"},
    {IW_TERM_RDMAP_ACCESS_RIGHTS, 0x0102, "Remote Protection Error / Access rights violation",
     "RFC 5040"},
    {IW_TERM_RDMAP_STAG_NOT_ASSOC, 0x0103,
     "Remote Protection Error / Steering Tag not associated with RDMAP Stream", "RFC 5040"},
    {IW_TERM_RDMAP_TO_WRAP, 0x0104, "Remote Protection Error / Tagged Offset wrap", "RFC 5040"},
    {IW_TERM_RDMAP_PROT_CANT_INVALIDATE, 0x0109,
     "Remote Protection Error / Steering Tag cannot be invalidated", "RFC 5040"},
    {IW_TERM_RDMAP_PROT_UNSPECIFIED, 0x01FF, "Remote Protection Error / Unspecified Error",
     "RFC 5040"},
    {IW_TERM_RDMAP_INVALID_VERSION, 0x0205, "Remote Operation Error / Invalid RDMAP version",
     "RFC 5040"},
    {IW_TERM_RDMAP_UNEXPECTED_OPCODE, 0x0206, "Remote Operation Error / Unexpected OpCode",
     "RFC 5040"},
    {IW_TERM_RDMAP_CATASTROPHIC_STREAM, 0x0207,
     "Remote Operation Error / Catastrophic error, localized to RDMAP Stream", "RFC 5040"},
    {IW_TERM_RDMAP_CATASTROPHIC_GLOBAL, 0x0208,
     "Remote Operation Error / Catastrophic error, global", "RFC 5040"},
    {IW_TERM_RDMAP_OP_CANT_INVALIDATE, 0x0209,
     "Remote Operation Error / Steering Tag cannot be Invalidated", "RFC 5040"},
    {IW_TERM_RDMAP_OP_UNSPECIFIED, 0x02FF, "Remote Operation Error / Unspecified Error",
     "RFC 5040"},
    /* RFC 6580 §3.2 */
    {IW_TERM_DDP_LOCAL_CATASTROPHIC, 0x1000, "DDP Local Catastrophic", "RFC 5041"},
    {IW_TERM_DDP_T_INVALID_STAG, 0x1100, "Tagged Buffer Error / Invalid Steering Tag", "RFC 5041"},
    {IW_TERM_DDP_T_BASE_BOUNDS, 0x1101, "Tagged Buffer Error / Base or bounds violation",
     "RFC 5041"},
    {IW_TERM_DDP_T_STAG_NOT_ASSOC, 0x1102,
     "Tagged Buffer Error / Steering Tag not associated with DDP Stream", "RFC 5041"},
    {IW_TERM_DDP_T_TO_WRAP, 0x1103, "Tagged Buffer Error / Tagged Offset wrap", "RFC 5041"},
    {IW_TERM_DDP_T_INVALID_VERSION, 0x1104, "Tagged Buffer Error / Invalid DDP version",
     "RFC 5041"},
    {IW_TERM_DDP_UT_INVALID_QN, 0x1201, "Untagged Buffer Error / Invalid Queue Number", "RFC 5041"},
    {IW_TERM_DDP_UT_NO_BUFFER, 0x1202,
     "Untagged Buffer Error / Invalid Message Sequence Number - no buffer available", "RFC 5041"},
    {IW_TERM_DDP_UT_MSN_RANGE, 0x1203,
     "Untagged Buffer Error / Invalid Message Sequence Number - Message Sequence Number range is "
     "not valid",
     "RFC 5041"},
    {IW_TERM_DDP_UT_INVALID_MO, 0x1204, "Untagged Buffer Error / Invalid Message Offset",
     "RFC 5041"},
    {IW_TERM_DDP_UT_TOO_LONG, 0x1205,
     "Untagged Buffer Error / DDP Message too long for available buffer", "RFC 5041"},
    {IW_TERM_DDP_UT_INVALID_VERSION, 0x1206, "Untagged Buffer Error / Invalid DDP version",
     "RFC 5041"},
    /* RFC 6580 §3.3 */
    {IW_TERM_LLP_CONN_LOST, 0x2001, "MPA Error / TCP connection closed, terminated, or lost",
     "RFC 5044"},
    {IW_TERM_LLP_MPA_CRC, 0x2002, "MPA Error / MPA CRC Error", "RFC 5044"},
    {IW_TERM_LLP_MPA_MARKER, 0x2003, "MPA Error / MPA Marker and ULPDU Length field mismatch",
     "RFC 5044"},
    {IW_TERM_LLP_MPA_INVALID_RR, 0x2004,
     "MPA Error / Invalid MPA Request Frame or MPA Response Frame", "RFC 5044"},
    /* RFC 6581 §8 (codes) and §11 (registry names added by IANA) */
    {IW_TERM_LLP_MPA_LOCAL_CATASTROPHIC, 0x2005, "MPA Error / Local catastrophic error",
     "RFC 6581"},
    {IW_TERM_LLP_MPA_INSUFFICIENT_IRD, 0x2006, "MPA Error / Insufficient IRD resources",
     "RFC 6581"},
    {IW_TERM_LLP_MPA_NO_MATCHING_RTR, 0x2007, "MPA Error / No matching RTR option", "RFC 6581"},
};
#define N_TERM (sizeof term_rows / sizeof term_rows[0])

/* Independent model of the registry (RFC 6580 §3): the numeric entries
 * above plus the two "ALL" types, 0x0/0x0 and 0x1/0x3. */
static bool model_registered(uint16_t t) {
    unsigned l = t >> 12, e = t >> 8 & 0xF;
    if ((l == 0 && e == 0) || (l == 1 && e == 3))
        return true;
    for (size_t i = 0; i < N_TERM; i++)
        if (term_rows[i].want == t)
            return true;
    return false;
}

/* Every constant equals its RFC 6580 triple. */
IW_TEST(term_values_match_registry) {
    for (size_t i = 0; i < N_TERM; i++) {
        CHECK_EQ(term_rows[i].value, term_rows[i].want);
        CHECK_EQ(iw_term_layer(term_rows[i].value), term_rows[i].want >> 12);
        CHECK_EQ(iw_term_etype(term_rows[i].value), term_rows[i].want >> 8 & 0xF);
        CHECK_EQ(iw_term_ecode(term_rows[i].value), term_rows[i].want & 0xFF);
    }
    /* A few spelled out, as the registry writes them. */
    CHECK_EQ(IW_TERM_DDP_UT_INVALID_MO, 0x1204);
    CHECK_EQ(IW_TERM_LLP_MPA_CRC, 0x2002);
    CHECK_EQ(IW_TERM_TRIPLE(0x1, 0x2, 0x04), 0x1204);
    CHECK_EQ(IW_TERM_TRIPLE(0x2, 0x0, 0x07), 0x2007);
    CHECK_EQ(IW_TERM_TRIPLE(0xF, 0xF, 0xFF), 0xFFFF);
    /* The list has exactly the entries above: no extra, none missing. */
    size_t n = 0;
#define IW_X_(name, l, e, c, rfc, text) n++;
    IW_TERM_LIST(IW_X_)
#undef IW_X_
    CHECK_EQ(n, N_TERM);
}

/* iw_term_str gives the registry text; iw_term_rfc the defining RFC. */
IW_TEST(term_names_match_registry) {
    for (size_t i = 0; i < N_TERM; i++) {
        const char *s = iw_term_str(term_rows[i].want);
        REQUIRE(s != NULL);
        if (strcmp(s, term_rows[i].name) != 0) {
            fprintf(stderr, "  triple 0x%04x: got \"%s\", registry says \"%s\"\n",
                    term_rows[i].want, s, term_rows[i].name);
            CHECK(strcmp(s, term_rows[i].name) == 0);
        }
        const char *r = iw_term_rfc(term_rows[i].want);
        CHECK(r != NULL &&
              strncmp(r, term_rows[i].rfc_prefix, strlen(term_rows[i].rfc_prefix)) == 0);
    }
    /* "ALL" types: every code maps to the type's name (RFC 6580 §3.1, §3.2). */
    for (unsigned c = 0; c < 256; c++) {
        CHECK(strcmp(iw_term_str((uint16_t)(0x0000 | c)), "RDMA Local Catastrophic Error") == 0);
        CHECK(strcmp(iw_term_str((uint16_t)(0x1300 | c)),
                     "Reserved for use by Lower Layer Protocol") == 0);
        CHECK(iw_term_rfc((uint16_t)(0x0000 | c)) != NULL);
        CHECK(iw_term_rfc((uint16_t)(0x1300 | c)) != NULL);
    }
}

/* Registered iff listed in RFC 6580 §3 / RFC 6581 §11, ALL types matching
 * any code. Checked over the whole 16-bit space against the model. */
IW_TEST(term_is_registered_whole_space) {
    unsigned mismatches = 0;
    for (uint32_t t = 0; t <= 0xFFFF; t++) {
        bool want = model_registered((uint16_t)t);
        bool got = iw_term_is_registered((uint16_t)t);
        if (want != got && mismatches++ < 5)
            fprintf(stderr, "  triple 0x%04x: registered=%d, registry says %d\n", t, got, want);
        const char *s = iw_term_str((uint16_t)t);
        CHECK(s != NULL && s[0] != '\0'); /* off-the-wire values get a name too */
        if (!want) {
            CHECK(strcmp(s, "Unassigned") == 0);
            CHECK(iw_term_rfc((uint16_t)t) == NULL);
        }
    }
    CHECK_EQ(mismatches, 0);
    /* Spot checks from the registry text. */
    CHECK(iw_term_is_registered(0x0000));
    CHECK(iw_term_is_registered(0x00AB)); /* 0x0/0x0/ALL */
    CHECK(iw_term_is_registered(0x00FF));
    CHECK(iw_term_is_registered(0x1300)); /* 0x1/0x3/ALL */
    CHECK(iw_term_is_registered(0x1342));
    CHECK(!iw_term_is_registered(0x0105)); /* 0x0/0x1/0x05 unassigned */
    CHECK(!iw_term_is_registered(0x0200)); /* Remote Operation has no 0x00 */
    CHECK(!iw_term_is_registered(0x1001)); /* DDP Local Catastrophic is 0x00 only */
    CHECK(!iw_term_is_registered(0x1200)); /* untagged codes start at 0x01 */
    CHECK(!iw_term_is_registered(0x1207));
    CHECK(!iw_term_is_registered(0x1400));
    CHECK(!iw_term_is_registered(0x2000)); /* MPA codes start at 0x01 */
    CHECK(!iw_term_is_registered(0x2008));
    CHECK(!iw_term_is_registered(0x2100));
    CHECK(!iw_term_is_registered(0x3000)); /* no layer 3 */
    CHECK(!iw_term_is_registered(0xFFFF));
}

/* Close reasons: every value in the list has an id (its enum suffix), a
 * distinct text and an RFC section; the MPA startup ones cite the rules of
 * RFC 5044 §7.1 / RFC 6581; out-of-range values do not crash. */
IW_TEST(close_reasons) {
    static const struct {
        iw_close_reason r;
        const char *id;
        const char *rfc_prefix;
    } all[] = {
#define IW_X_(name, rfc, text) {IW_CLOSE_##name, #name, "RFC "},
        IW_CLOSE_LIST(IW_X_)
#undef IW_X_
    };
    static const struct {
        iw_close_reason r;
        const char *id;
        const char *rfc_prefix;
    } rows[] = {
        {IW_CLOSE_MPA_BAD_KEY, "MPA_BAD_KEY", "RFC 5044 §7.1"},
        {IW_CLOSE_MPA_BAD_REV, "MPA_BAD_REV", "RFC 5044 §7.1.1"},
        {IW_CLOSE_MPA_PD_TOO_LONG, "MPA_PD_TOO_LONG", "RFC 5044 §7.1"},
        {IW_CLOSE_MPA_PD_MISMATCH, "MPA_PD_MISMATCH", "RFC 5044 §7.1"},
        {IW_CLOSE_MPA_V2_PD_SHORT, "MPA_V2_PD_SHORT", "RFC 6581"},
        {IW_CLOSE_MPA_INITIATOR_INITIATOR, "MPA_INITIATOR_INITIATOR", "RFC 5044 §7.1.2"},
        {IW_CLOSE_MPA_TIMEOUT, "MPA_TIMEOUT", "RFC 5044 §7.1.2"},
        {IW_CLOSE_MPA_REJECTED, "MPA_REJECTED", "RFC 5044 §7.1.2"},
        {IW_CLOSE_FRAMING_LOST, "FRAMING_LOST", "RFC 5044 §6"}, /* §6: valid CRC locates next */
        {IW_CLOSE_ULPDU_TOO_LONG, "ULPDU_TOO_LONG", "RFC 5044 §4.5"},
    };
    size_t n = sizeof all / sizeof all[0];
    CHECK_EQ(IW_CLOSE_NONE, 0);
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ(all[i].r, i + 1); /* values follow the list, after NONE */
        CHECK(strcmp(iw_close_id(all[i].r), all[i].id) == 0);
        const char *s = iw_close_str(all[i].r);
        CHECK(s != NULL && strlen(s) > 10 && strcmp(s, "unknown close reason") != 0);
        const char *r = iw_close_rfc(all[i].r);
        CHECK(r != NULL && strncmp(r, "RFC ", 4) == 0);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(iw_close_str(all[i].r), iw_close_str(all[j].r)) != 0);
    }
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        CHECK(strcmp(iw_close_id(rows[i].r), rows[i].id) == 0);
        const char *r = iw_close_rfc(rows[i].r);
        CHECK(r != NULL && strncmp(r, rows[i].rfc_prefix, strlen(rows[i].rfc_prefix)) == 0);
    }
    /* NONE is a value too, with no RFC behind it. */
    CHECK(iw_close_str(IW_CLOSE_NONE) != NULL);
    CHECK(iw_close_id(IW_CLOSE_NONE) != NULL);
    CHECK(iw_close_rfc(IW_CLOSE_NONE) == NULL);
    /* Out of range: sensible strings, no crash. */
    const int bad[] = {(int)n + 1, (int)n + 2, 1000, INT_MAX, -1, INT_MIN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        iw_close_reason r = (iw_close_reason)bad[i];
        CHECK(strcmp(iw_close_str(r), "unknown close reason") == 0);
        CHECK(strcmp(iw_close_id(r), "UNKNOWN") == 0);
        CHECK(iw_close_rfc(r) == NULL);
    }
}

/* Notes: every value has id (its enum suffix), text and RFC; bits are
 * distinct and fit the 32-bit notes words; out-of-range values do not crash. */
IW_TEST(notes) {
    static const char *const ids[] = {
#define IW_X_(name, rfc, text) #name,
        IW_NOTE_LIST(IW_X_)
#undef IW_X_
    };
    size_t n = sizeof ids / sizeof ids[0];
    CHECK_EQ(IW_NOTE_COUNT_, n);
    CHECK(IW_NOTE_COUNT_ <= 32);
    /* the notes the codecs raise (tested in their suites) are all there */
    static const char *const used[] = {
        "MPA_RES_BITS",      "MPA_R_IN_REQUEST", "MPA_S_WITH_REV1",        "MPA_V2_RTR_WITHOUT_P2P",
        "MPA_V2_P2P_NO_RTR", "FPDU_PAD_NONZERO", "MARKER_RES_NONZERO",     "MARKER_PTR_LOW_BITS",
        "DDP_RSVD_BITS",     "RDMAP_RSV_BITS",   "RDMAP_INV_STAG_NONZERO", "TERM_RSVD_BITS",
        "TERM_UNREGISTERED", "TERM_TRAILING",    "ATOMIC_RSVD_BITS",       "CONTROL_SEGMENTED",
    };
    for (size_t u = 0; u < sizeof used / sizeof used[0]; u++) {
        bool found = false;
        for (unsigned i = 0; i < IW_NOTE_COUNT_; i++)
            found |= strcmp(iw_note_id((iw_note)i), used[u]) == 0;
        CHECK(found);
    }
    uint32_t all = 0;
    for (unsigned i = 0; i < IW_NOTE_COUNT_; i++) {
        iw_note nt = (iw_note)i;
        const char *id = iw_note_id(nt), *s = iw_note_str(nt), *r = iw_note_rfc(nt);
        CHECK(id != NULL && s != NULL && r != NULL);
        if (i < n)
            CHECK(strcmp(id, ids[i]) == 0);
        CHECK(strlen(s) > 5 && strcmp(s, "unknown note") != 0);
        CHECK(strncmp(r, "RFC ", 4) == 0);
        for (unsigned j = 0; j < i; j++)
            CHECK(strcmp(id, iw_note_id((iw_note)j)) != 0);
        CHECK((all & (1u << i)) == 0);
        all |= 1u << i;
    }
    /* The IW_NOTE() masks are the enum bits. */
    CHECK_EQ(IW_NOTE(MPA_RES_BITS), 1u << IW_NOTE_BIT_MPA_RES_BITS);
    CHECK_EQ(IW_NOTE(CONTROL_SEGMENTED), 1u << IW_NOTE_BIT_CONTROL_SEGMENTED);
    CHECK(strncmp(iw_note_rfc(IW_NOTE_BIT_MARKER_PTR_LOW_BITS), "RFC 5044 §4.2", 13) == 0);
    CHECK(strncmp(iw_note_rfc(IW_NOTE_BIT_MPA_S_WITH_REV1), "RFC 6581", 8) == 0);
    CHECK(strncmp(iw_note_rfc(IW_NOTE_BIT_TERM_RSVD_BITS), "RFC 5040 §4.8", 13) == 0);
    const int bad[] = {
        (int)IW_NOTE_COUNT_, (int)IW_NOTE_COUNT_ + 1, 32, 1000, INT_MAX, -1, INT_MIN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        iw_note nt = (iw_note)bad[i];
        CHECK(strcmp(iw_note_str(nt), "unknown note") == 0);
        CHECK(strcmp(iw_note_id(nt), "UNKNOWN") == 0);
        CHECK(iw_note_rfc(nt) == NULL);
    }
}

/* Library return codes: fixed negative values, distinct messages, and an
 * "unknown" message for anything else. */
IW_TEST(strerror_all) {
    static const struct {
        int err, want;
    } codes[] = {
        {IW_ERR_NEED_MORE, -501}, {IW_ERR_NOBUF, -502}, {IW_ERR_INVALID_ARG, -503},
        {IW_ERR_PROTO, -504},     {IW_ERR_FATAL, -900}, {IW_ERR_NOMEM, -901},
        {IW_ERR_CALLBACK, -902},
    };
    size_t n = sizeof codes / sizeof codes[0];
    const char *unknown = iw_strerror(-1);
    CHECK(unknown != NULL && strcmp(unknown, "unknown error") == 0);
    CHECK(strcmp(iw_strerror(0), "success") == 0);
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ(codes[i].err, codes[i].want);
        const char *s = iw_strerror(codes[i].err);
        CHECK(s != NULL && s[0] != '\0');
        CHECK(strcmp(s, unknown) != 0);
        CHECK(strcmp(s, "success") != 0);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(s, iw_strerror(codes[j].err)) != 0);
    }
    const int other[] = {1, -2, -500, -505, -506, -899, -903, 0x2002, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        CHECK(strcmp(iw_strerror(other[i]), "unknown error") == 0);
    /* Fatal: IW_ERR_FATAL and below only; a failed callback and a failed
     * allocation leave the object unusable, so they are below the line. */
    CHECK(iw_err_is_fatal(IW_ERR_FATAL));
    CHECK(iw_err_is_fatal(IW_ERR_NOMEM));
    CHECK(iw_err_is_fatal(IW_ERR_CALLBACK));
    CHECK(iw_err_is_fatal(INT_MIN));
    CHECK(!iw_err_is_fatal(IW_ERR_NEED_MORE));
    CHECK(!iw_err_is_fatal(IW_ERR_INVALID_ARG));
    CHECK(!iw_err_is_fatal(IW_ERR_PROTO));
    CHECK(!iw_err_is_fatal(0));
}

/* Verdict constructors carry exactly what they are given. */
IW_TEST(verdict_helpers) {
    iw_verdict v = iw_verdict_ok();
    CHECK_EQ(v.kind, IW_VERDICT_OK);
    CHECK_EQ(v.term, 0);
    CHECK_EQ(v.close, IW_CLOSE_NONE);
    CHECK(v.rfc == NULL);
    v = iw_verdict_term(IW_TERM_LLP_MPA_CRC, "RFC 5044 §4.4");
    CHECK_EQ(v.kind, IW_VERDICT_TERM);
    CHECK_EQ(v.term, 0x2002);
    CHECK_EQ(v.close, IW_CLOSE_NONE);
    CHECK(strcmp(v.rfc, "RFC 5044 §4.4") == 0);
    v = iw_verdict_close(IW_CLOSE_MPA_BAD_KEY, "RFC 5044 §7.1.2");
    CHECK_EQ(v.kind, IW_VERDICT_CLOSE);
    CHECK_EQ(v.term, 0);
    CHECK_EQ(v.close, IW_CLOSE_MPA_BAD_KEY);
}

IW_TEST_MAIN("err", IW_CASE(term_values_match_registry), IW_CASE(term_names_match_registry),
             IW_CASE(term_is_registered_whole_space), IW_CASE(close_reasons), IW_CASE(notes),
             IW_CASE(strerror_all), IW_CASE(verdict_helpers))
