/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The library's own version, from the same generated header the tools use. */
#include <iwarp/iwarp.h>

const char *iw_version(void) { return IW_VERSION_STR; }
