/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MPA startup (iw_startup.c). */
#ifndef IW_STARTUP_H
#define IW_STARTUP_H

#include "iw_conn_int.h"

/* Enter MPA startup: an initiator queues its Request, a responder waits. */
int iw_startup_begin(iw_conn *c, iw_tstamp now);
/* The peer's startup frame so far is in mpa_in: judge it once complete. */
int iw_startup_rx(iw_conn *c);
/* A p2p responder's first FPDU (rtr_pending_rx): 0, or the triple to
 * terminate with when it is an RTR of a kind the Reply did not offer. */
uint16_t iw_startup_rtr_verdict(const iw_conn *c, const iw_rdmap_msg *m, size_t pay);

/* A message LLP (RFC 5043) lets either side send first (RFC 6581 §7):
 * an accepting responder may send at once, unless it waits for a p2p RTR. */
void iw_startup_any_side_first(iw_conn *c);

#endif
