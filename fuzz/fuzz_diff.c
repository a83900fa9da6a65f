/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Differential: the engine against the codecs and the shadow analysis on
 * one FPDU stream. The run, the rule it checks and the input format are
 * fuzz_diff_core.c's, shared with fuzz_diff_plugin (which also compares the
 * Wireshark plugin's decode); this harness is that run alone, with no
 * libwireshark, so it builds everywhere (OSS-Fuzz included). */
#include "fuzz_diff_core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_diff_trace t;
    fz_diff_run(data, size, &t);
    fz_diff_trace_free(&t);
    return 0;
}
