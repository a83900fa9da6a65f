/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pcap synthesis: see iwc_pcap.h. The packets come from the shared writer
 * (reference-stack/util/iw_pcapw.h). */
#include "iwc_pcap.h"

#include <iw_pcapw.h>
#include <stdio.h>
#include <string.h>

#define SEG_MAX 1448 /* payload per synthesized TCP segment (a typical MSS) */

int iwc_pcap_write(const char *path, const iwc_capture *cap, char *err, size_t errlen) {
    iw_pcapw_file *f = iw_pcapw_open(path, err, errlen);
    if (!f)
        return -1;
    if (cap->used) {
        /* Side 0 is the runner, side 1 the IUT. */
        iw_pcapw_conn k;
        iw_pcapw_conn_init(&k, 4, 0x10000000u, 0x20000000u);
        memcpy(k.ip[0], cap->ip[0], 4);
        memcpy(k.ip[1], cap->ip[1], 4);
        k.port[0] = cap->port[0];
        k.port[1] = cap->port[1];
        k.opts = IW_PCAPW_IPID_COUNT | IW_PCAPW_PSH_LAST;
        iw_pcapw_attach(&k, f);
        iw_pcapw_set_time(f, cap->t_start);
        if (!cap->sctp)
            iw_pcapw_handshake(&k, cap->runner_is_client ? 0 : 1);
        for (size_t i = 0; i < cap->n; i++) {
            const iwc_chunk *c = &cap->chunks[i];
            int from = c->dir == 0 ? 0 : 1;
            iw_pcapw_set_time(f, c->t_us);
            if (cap->sctp) /* each chunk is one SCTP packet as it went in UDP */
                iw_pcapw_udp(&k, from, cap->stream[c->dir].p + c->off, c->len);
            else if (c->kind == IWC_CHUNK_FIN)
                iw_pcapw_seg(&k, from, IW_TH_FIN | IW_TH_ACK, NULL, 0);
            else if (c->kind == IWC_CHUNK_RST)
                iw_pcapw_seg(&k, from, IW_TH_RST | IW_TH_ACK, NULL, 0);
            else
                iw_pcapw_send(&k, from, cap->stream[c->dir].p + c->off, c->len, SEG_MAX);
        }
    }
    if (iw_pcapw_file_close(f) != 0) {
        snprintf(err, errlen, "%s: write error", path);
        return -1;
    }
    return 0;
}
