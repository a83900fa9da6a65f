/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Events and completions (iw_cq.c). */
#ifndef IW_CQ_H
#define IW_CQ_H

#include "iw_conn_int.h"

/* Raise one event through the application's callback: IW_ERR_CALLBACK if
 * it failed. */
int iw_cq_emit(iw_conn *c, iw_event *ev);
/* Work request seq finished with st; reported by the next drain or flush. */
void iw_cq_mark_done(iw_conn *c, uint32_t seq, iw_wc_status st);
/* Work request seq finished; report it and every finished one behind it. */
int iw_cq_complete(iw_conn *c, uint32_t seq, iw_wc_status st, uint32_t len, uint64_t orig);
/* Complete everything still queued with st (RFC 5040 §5.4), in order;
 * IW_ERR_CALLBACK if a callback failed, after reporting all of it. */
int iw_cq_flush(iw_conn *c, iw_wc_status st);

#endif
