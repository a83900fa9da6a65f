/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One pcap per case: both directions of the runner's TCP connection to the
 * IUT, wrapped in synthesized Ethernet/IPv4/TCP headers with consistent
 * sequence and acknowledgement numbers (a handshake first, FIN/RST as they
 * happened), written with libpcap so Wireshark/tshark reassemble the
 * streams. */
#ifndef IWC_PCAP_H
#define IWC_PCAP_H

#include "iwc_run.h"

/* Returns 0, or -1 with err set. */
int iwc_pcap_write(const char *path, const iwc_capture *cap, char *err, size_t errlen);

#endif
