/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The end of a stream (iw_term.c). */
#ifndef IW_TERM_H
#define IW_TERM_H

#include "iw_conn_int.h"

/* Queue the Terminate for the first error (RFC 5040 §7.1 rule 4), stop
 * receiving, flush the work requests. ddp_hdr/rreq: the headers it copies
 * when with_hdr (Fig. 10). */
int iw_term_fail(iw_conn *c, uint16_t triple, const char *rfc, const uint8_t *ddp_hdr,
                 size_t ddp_len, uint16_t seg_len, const uint8_t *rreq, bool with_hdr);
/* The stream is closed for why: nothing more in or out, work flushed,
 * IW_EV_CLOSED once. */
int iw_term_close(iw_conn *c, iw_close_reason why);

#endif
