/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The JSON reader's typed accessors (util/iw_json.c), above all the one hex
 * number parser every agent-protocol program uses: "0x" and hex digits,
 * nothing else, at most 64 bits. */
#include <string.h>

#include "iw_agent.h"
#include "iw_json.h"
#include "iw_test.h"

/* iw_json_u64 on {"v": <json>}: 0 and *out, or -1 and err. */
static int u64_of(const char *json, uint64_t max, uint64_t *out, char *err, size_t errlen) {
    char text[256];
    snprintf(text, sizeof text, "{\"v\":%s}", json);
    iw_json_doc d;
    if (iw_json_parse(&d, text, strlen(text)) < 0) {
        snprintf(err, errlen, "parse: %.100s", d.err);
        iw_json_free(&d);
        return -2;
    }
    *out = 0xDEAD;
    int rc = iw_json_u64(&d, &d.nodes[0], "v", true, max, out, err, errlen);
    iw_json_free(&d);
    return rc;
}

IW_TEST(hex_accepts_prefix_and_digits) {
    static const struct {
        const char *json;
        uint64_t want;
    } ok[] = {
        {"\"0x10\"", 16},
        {"\"0X10\"", 16},
        {"\"0x0\"", 0},
        {"\"0xABCdef\"", 0xABCDEF},
        {"\"0xffffffffffffffff\"", UINT64_MAX},
        {"\"0xFFFFFFFFFFFFFFFF\"", UINT64_MAX},
        /* Leading zeros carry no bits: not an overflow. */
        {"\"0x00000000000000000000000000000001\"", 1},
        {"\"0x0000000080000000\"", 0x80000000u},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        uint64_t v;
        char err[160] = "";
        int rc = u64_of(ok[i].json, UINT64_MAX, &v, err, sizeof err);
        if (rc != 0 || v != ok[i].want)
            fprintf(stderr, "  %s: rc %d v 0x%llx (%s)\n", ok[i].json, rc, (unsigned long long)v,
                    err);
        CHECK_EQ(rc, 0);
        CHECK(v == ok[i].want);
    }
}

IW_TEST(hex_refuses_everything_else) {
    /* strtoull would skip the space, take the sign, or stop early. */
    static const char *bad[] = {
        "\"0x 10\"",
        "\"0x+40\"",
        "\"0x-1\"",
        "\"0x\"",
        "\"0x1 \"",
        "\" 0x1\"",
        "\"0x1g\"",
        "\"0x0x1\"",
        "\"0x\\t1\"",
        "\"0x1\\u0000\"",
        "\"x10\"",
        "\"10\"",
        "\"0xg\"",
        "\"0x1.0\"",
        "\"0x1e3 \"",
        "\"+0x1\"",
        "\"0x\\n1\"",
        "\"0x1\\n\"",
        /* 2^64 and beyond */
        "\"0x10000000000000000\"",
        "\"0xffffffffffffffff0\"",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t v;
        char err[160] = "";
        int rc = u64_of(bad[i], UINT64_MAX, &v, err, sizeof err);
        if (rc != -1)
            fprintf(stderr, "  %s: accepted as 0x%llx\n", bad[i], (unsigned long long)v);
        CHECK_EQ(rc, -1);
        CHECK(v == 0xDEAD); /* untouched */
        CHECK(strstr(err, "field 'v'") != NULL);
    }
}

IW_TEST(hex_error_names_the_problem) {
    uint64_t v;
    char err[160] = "";
    CHECK_EQ(u64_of("\"0x 10\"", UINT64_MAX, &v, err, sizeof err), -1);
    CHECK(strcmp(err, "field 'v' is not a valid hex number") == 0);
    CHECK_EQ(u64_of("\"0x100\"", 0xFF, &v, err, sizeof err), -1);
    CHECK(strcmp(err, "field 'v' is out of range") == 0);
    CHECK_EQ(u64_of("\"0xff\"", 0xFF, &v, err, sizeof err), 0);
    CHECK_EQ(v, 0xFF);
}

IW_TEST(numbers) {
    uint64_t v;
    char err[160] = "";
    CHECK_EQ(u64_of("5", 10, &v, err, sizeof err), 0);
    CHECK_EQ(v, 5);
    CHECK_EQ(u64_of("11", 10, &v, err, sizeof err), -1);
    CHECK_EQ(u64_of("-1", 10, &v, err, sizeof err), -1);
    CHECK(strstr(err, "non-negative integer") != NULL);
    CHECK_EQ(u64_of("1.5", 10, &v, err, sizeof err), -1);
    CHECK_EQ(u64_of("true", 10, &v, err, sizeof err), -1);
    CHECK(strstr(err, "must be a number or a \"0x...\" string") != NULL);
}

/* The agent protocol takes STags through the same parser. */
IW_TEST(agent_request_hex_fields) {
    static const char *bad[] = {
        "{\"op\":\"dereg_mr\",\"stag\":\"0x 10\"}", "{\"op\":\"dereg_mr\",\"stag\":\"0x+40\"}",
        "{\"op\":\"dereg_mr\",\"stag\":\"0x100000000\"}", /* over 32 bits */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        iw_agent_req r;
        char err[200] = "";
        CHECK_EQ(iw_agent_parse(&r, bad[i], strlen(bad[i]), err, sizeof err), -1);
        CHECK(strstr(err, "'stag'") != NULL);
        iw_agent_req_free(&r);
    }
    iw_agent_req r;
    char err[200] = "";
    const char *good = "{\"op\":\"dereg_mr\",\"stag\":\"0x00ABcd12\"}";
    CHECK_EQ(iw_agent_parse(&r, good, strlen(good), err, sizeof err), 0);
    CHECK_EQ(r.stag, 0xABCD12);
    iw_agent_req_free(&r);
}

IW_TEST_MAIN("json", IW_CASE(hex_accepts_prefix_and_digits), IW_CASE(hex_refuses_everything_else),
             IW_CASE(hex_error_names_the_problem), IW_CASE(numbers),
             IW_CASE(agent_request_hex_fields))
