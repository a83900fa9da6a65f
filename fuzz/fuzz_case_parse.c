/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The conformance runner's two pure parsers a user feeds text to: case
 * scripts and expected-deviations files. Invariant: any input parses or is
 * refused with a message, without crashing or leaking. Seeds: the shipped
 * cases and deviations files. */
#include <stddef.h>
#include <stdint.h>

#include "iwc_case.h"
#include "iwc_dev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[256];
    iwc_case c;
    if (iwc_case_parse((const char *)data, size, &c, err, sizeof err) == 0)
        iwc_case_free(&c);
    iwc_devlist l;
    if (iwc_dev_parse((const char *)data, size, &l, err, sizeof err) == 0)
        iwc_dev_free(&l);
    return 0;
}
