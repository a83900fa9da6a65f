/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "iw_usrsctp.h"

#include <iwarp/sctp.h>

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <usrsctp.h>

int iw_usrsctp_ddp_setup(struct socket *so, int family) {
    if (usrsctp_set_non_blocking(so, 1) < 0)
        return -1;
    struct sctp_setadaptation ad = {.ssb_adaptation_ind = IW_SCTP_ADAPT_DDP};
    int on = 1;
    if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_ADAPTATION_LAYER, &ad, sizeof ad) < 0 ||
        usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_RECVRCVINFO, &on, sizeof on) < 0 ||
        /* RFC 5043 §11.2: untagged messages SHOULD NOT wait for bundling. */
        usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_NODELAY, &on, sizeof on) < 0)
        return -1;
    struct sctp_paddrparams pp;
    memset(&pp, 0, sizeof pp);
    pp.spp_assoc_id = SCTP_FUTURE_ASSOC;
    pp.spp_pathmtu = IW_USRSCTP_PATH_MTU(family);
    pp.spp_flags = SPP_PMTUD_DISABLE;
    if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof pp) < 0)
        return -1;
    static const uint16_t events[] = {SCTP_ASSOC_CHANGE, SCTP_ADAPTATION_INDICATION,
                                      SCTP_SENDER_DRY_EVENT, SCTP_SHUTDOWN_EVENT};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
        struct sctp_event ev = {.se_assoc_id = SCTP_FUTURE_ASSOC, .se_type = events[i], .se_on = 1};
        if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof ev) < 0)
            return -1;
    }
    return 0;
}

void iw_usrsctp_abort_close(struct socket *so) {
    struct linger lg = {1, 0};
    usrsctp_setsockopt(so, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    usrsctp_close(so);
}

int iw_usrsctp_finish(unsigned tries, uint32_t tick_ms) {
    for (unsigned i = 0; i < tries; i++) {
        if (usrsctp_finish() == 0)
            return 0;
        usrsctp_handle_timers(tick_ms);
    }
    return usrsctp_finish() == 0 ? 0 : -1;
}
