/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "iw_test.h"

#include <ctype.h>

int iw_test_failed_checks;

int iw_test_run(const char *suite, const iw_test_case *cases, size_t n, int argc, char **argv) {
    size_t passed = 0, failed = 0;
    const char *only = argc > 1 ? argv[1] : NULL; /* run one case by name */
    for (size_t i = 0; i < n; i++) {
        if (only && strcmp(only, cases[i].name) != 0)
            continue;
        int before = iw_test_failed_checks;
        cases[i].fn();
        if (iw_test_failed_checks == before) {
            passed++;
            printf("ok   %s/%s\n", suite, cases[i].name);
        } else {
            failed++;
            printf("FAIL %s/%s\n", suite, cases[i].name);
        }
    }
    if (only && passed + failed == 0) {
        fprintf(stderr, "no case named %s in suite %s\n", only, suite);
        return 2;
    }
    printf("%s: %zu passed, %zu failed\n", suite, passed, failed);
    return failed ? 1 : 0;
}

size_t iw_test_unhex(uint8_t *out, size_t cap, const char *hex) {
    size_t n = 0;
    int hi = -1;
    for (; *hex; hex++) {
        int c = (unsigned char)*hex, v;
        if (isspace(c) || c == '|')
            continue;
        if (c >= '0' && c <= '9')
            v = c - '0';
        else if (c >= 'a' && c <= 'f')
            v = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v = c - 'A' + 10;
        else
            abort(); /* a typo in a test vector is a test bug */
        if (hi < 0) {
            hi = v;
        } else {
            if (n >= cap)
                abort();
            out[n++] = (uint8_t)(hi << 4 | v);
            hi = -1;
        }
    }
    if (hi >= 0)
        abort();
    return n;
}
