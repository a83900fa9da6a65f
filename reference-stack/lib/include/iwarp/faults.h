/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fault injection, for conformance testing only: switches that make the
 * engine deliberately NON-conformant, so the conformance suite can prove
 * each of its cases fails for the right reason (iwarp-target --fault).
 * Nothing else should include this header. A connection takes its faults
 * from iw_conn_settings.faults, read once by iw_conn_new. */
#ifndef IWARP_FAULTS_H
#define IWARP_FAULTS_H

#include <iwarp/types.h>

IW_BEGIN_DECLS

#define IW_FAULT_SKIP 0x0001u    /* drop a segment failing a skip triple's check, no Terminate */
#define IW_FAULT_MISCODE 0x0002u /* send miscode_triple's Terminate with code + 1 */
#define IW_FAULT_SWAP_NIBBLES 0x0004u    /* layer and etype swapped in every Terminate */
#define IW_FAULT_NO_HDR_COPY 0x0008u     /* D=0 and no copied DDP header */
#define IW_FAULT_BAD_SEG_LEN 0x0010u     /* DDP Segment Length + 1 */
#define IW_FAULT_SEND_AFTER_TERM 0x0020u /* one more FPDU after the Terminate */
#define IW_FAULT_PLACE_BEFORE_CHECK                                                                \
    0x0040u /* a rejected tagged segment's first octet lands first */
#define IW_FAULT_ACCEPT_BAD_CRC 0x0080u
#define IW_FAULT_ACCEPT_MPA_BAD_KEY 0x0100u
#define IW_FAULT_ACCEPT_MPA_BAD_REV 0x0200u
#define IW_FAULT_IRD_UNBOUNDED 0x0400u
#define IW_FAULT_NO_REMOTE_INVALIDATE 0x0800u
#define IW_FAULT_IGNORE_ACCESS 0x1000u /* tagged writes skip the access check (never bounds) */
/* DDP over SCTP: a chunk that fits no legal session sequence is dropped
 * instead of terminating the session (RFC 5043 §6.1 says MUST terminate). */
#define IW_FAULT_SCTP_LAX_SESSION 0x2000u

#define IW_FAULT_SKIP_MAX 8

typedef struct iw_faults {
    unsigned flags;
    uint16_t skip_triple[IW_FAULT_SKIP_MAX]; /* IW_FAULT_SKIP: these checks drop silently */
    unsigned n_skip;
    uint16_t miscode_triple;
} iw_faults;

/* Parse "skip:1/1/1,skip:2/0/2,swap-nibbles,..." into f. Every skip: item
 * adds a triple (up to IW_FAULT_SKIP_MAX); miscode: may be given once.
 * Returns 0, or -1 with what is wrong in err. */
int iw_faults_parse(iw_faults *f, const char *spec, char *err, size_t errlen);

/* True when f (may be NULL) skips the check that raises triple. */
bool iw_faults_skips(const iw_faults *f, uint16_t triple);

IW_END_DECLS
#endif
