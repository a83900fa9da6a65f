/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The runner's raw SCTP peer (DDP over SCTP, RFC 5043): one association
 * over UDP encapsulation (RFC 6951) with libusrsctp, single-threaded.
 *
 * Raw means the runner decides every DATA chunk: its PPID, stream, order
 * flag and payload (a DDP-SSN that breaks the rules, a Session Control
 * message with an unassigned function code); nothing here knows RFC 5043's
 * session rules, which the runner judges. What is SCTP's own (the
 * association, the DDP Adaptation Layer Indication in INIT / INIT-ACK,
 * RFC 5043 §5.1) is done here, as the verbs binding does for its QPs.
 *
 * Every SCTP packet either way goes to the pkt hook (the case's capture
 * writes them as UDP datagrams), every DATA message received to the msg
 * hook. usrsctp's state is process-wide: one link exists at a time. */
#ifndef IWC_SCTP_H
#define IWC_SCTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct iwc_sctp iwc_sctp;

typedef struct iwc_sctp_hooks {
    void (*pkt)(void *ctx, int dir, const uint8_t *p, size_t n); /* dir 0: ours, 1: the IUT's */
    void (*msg)(void *ctx, uint32_t ppid, uint16_t sid, const uint8_t *p, size_t n);
    void *ctx;
} iwc_sctp_hooks;

typedef enum iwc_sctp_state {
    IWC_SCTP_WAITING = 0, /* no association yet */
    IWC_SCTP_UP,          /* established */
    IWC_SCTP_SHUT,        /* ended with SHUTDOWN (either side) */
    IWC_SCTP_ABORTED      /* ended with ABORT, or lost */
} iwc_sctp_state;

/* The runner connects (listen false) to host:port, or listens on
 * host:port (0: any) for the IUT to connect. The SCTP port is the UDP
 * port on either side. Returns 0, or -1 with err set. */
int iwc_sctp_open(iwc_sctp **out, const char *host, uint16_t port, bool listen,
                  const iwc_sctp_hooks *h, char *err, size_t errlen);
void iwc_sctp_close(iwc_sctp *s); /* ABORTs what is left; NULL is fine */

int iwc_sctp_fd(const iwc_sctp *s); /* the UDP socket, for poll */
uint16_t iwc_sctp_port(const iwc_sctp *s);
/* The peer's UDP address and ours (IPv4 in the first 4 octets; false if not IPv4). */
bool iwc_sctp_addrs(const iwc_sctp *s, uint8_t ip[2][4], uint16_t port[2]);

/* Waits up to wait_ms for datagrams, runs usrsctp's timers, and hands on
 * what arrived. */
void iwc_sctp_service(iwc_sctp *s, int wait_ms);

/* One message. 0 sent, 1 no room now (try after a service), -1 the
 * association is gone or refused it. */
int iwc_sctp_send(iwc_sctp *s, uint32_t ppid, uint16_t sid, bool unordered, const uint8_t *p,
                  size_t n);

iwc_sctp_state iwc_sctp_get_state(const iwc_sctp *s);
/* The peer's Adaptation Layer Indication: false when it sent none. */
bool iwc_sctp_adaptation(const iwc_sctp *s, uint32_t *ind);

void iwc_sctp_shutdown(iwc_sctp *s); /* SCTP's graceful SHUTDOWN: our side is done */
void iwc_sctp_abort(iwc_sctp *s);    /* an ABORT now */

#endif
