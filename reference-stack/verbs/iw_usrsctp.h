/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One DDP-over-SCTP endpoint on libusrsctp, as the verbs binding's SCTP
 * transport and the conformance runner's raw SCTP peer both open it: the
 * socket options RFC 5043 asks of the association, the abort that frees it
 * at once, and the wait for usrsctp_finish. Compiled into both (an object
 * library), so the two cannot drift. Needs <usrsctp.h> with INET/INET6. */
#ifndef IW_USRSCTP_H
#define IW_USRSCTP_H

#include <stdint.h>

struct socket;

/* The fixed path MTU of SCTP over UDP here (RFC 6951 §5: the UDP header
 * counts against it): a 1500-octet path less the IP (20, or 40 for IPv6)
 * and UDP (8) headers. No PMTU discovery, so each DDP segment is one DATA
 * chunk in one datagram. */
#define IW_USRSCTP_PATH_MTU(family) (1500 - ((family) == AF_INET6 ? 40 : 20) - 8)

/* Non-blocking; the DDP Adaptation Layer Indication in our INIT or
 * INIT-ACK (RFC 5043 §5.1, §11.1); SCTP_RCVINFO with each message; no
 * bundling delay (§11.2); the path MTU above; and the notifications of
 * association change, adaptation indication, sender dry and shutdown.
 * 0, or -1 with errno. */
int iw_usrsctp_ddp_setup(struct socket *so, int family);

/* SO_LINGER 0 and close: an ABORT now, and usrsctp frees the association
 * at once rather than on its timers (RFC 4960 §9.1). */
void iw_usrsctp_abort_close(struct socket *so);

/* usrsctp_finish, which refuses while endpoints are still being freed
 * (its timers finish them): retried up to `tries` times, running the
 * timers for tick_ms between. 0 once finished, -1 if it never was. */
int iw_usrsctp_finish(unsigned tries, uint32_t tick_ms);

#endif
