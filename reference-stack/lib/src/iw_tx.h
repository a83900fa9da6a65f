/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Transmit (iw_tx.c). */
#ifndef IW_TX_H
#define IW_TX_H

#include "iw_conn_int.h"

bool iw_tx_pending(const iw_conn *c);
int iw_tx_build(iw_conn *c); /* prepare the next FPDU / frame if idle */

#endif
