/* SPDX-License-Identifier: GPL-2.0-or-later */
/* perftest's exchange over its rdma_cm communication QP, as iwarp-perf
 * --perftest speaks it (docs/iwarp-perf.md, "Talking to perftest").
 *
 * With -R, perftest (ib_{write,read,send}_{bw,lat}) opens two iWARP
 * connections to the server's port: first a communication QP, then the data
 * QP the test runs on. Over the communication QP the two sides exchange
 * fixed-size untagged Sends, one at a time: the client sends and then waits
 * for the server's message of the same kind; the server receives first and
 * then answers. What the messages are, their sizes, byte orders and their
 * order per test were read from captures of perftest 4.5-0.17 (Debian 12's
 * perftest 4.5+0.17-1, version string "6.06") over Linux siw, and from
 * perftest's sources (perftest_communication.c: ctx_hand_shake,
 * rdma_write_keys, ctx_xchg_data, xchg_bw_reports, check_sys_data,
 * check_mtu; create_rdma_cm_connection).
 *
 * Pure functions: no I/O, no allocation. Decoders check the length first,
 * return PT_OK or PT_EBAD and say why in a caller's buffer, so a malformed
 * message from the peer becomes one clear line. */
#ifndef PT_WIRE_H
#define PT_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The version we announce: the protocol level we implement (perftest 6.06). */
#define PT_VERSION "6.06"
#define PT_VERSION_LEN 16 /* MAX_VERSION: NUL padded */
#define PT_DEST_LEN 56    /* struct pingpong_dest on x86-64 */
#define PT_INT_LEN 4      /* check_sys_data: cycle buffer, cache line size */
#define PT_MTU_LEN 2      /* check_mtu: "%d" of the ibv_mtu enum in char[2] */
#define PT_U64_LEN 8      /* xchg_bw_reports: one field per message */
#define PT_CREDIT_LEN 4   /* send_bw credit: a uint32_t in the writer's byte order */
#define PT_MSG_MAX 56     /* the largest message; perftest posts receives of this size */

/* perftest's defaults, for the values both sides must agree on. */
#define PT_CYCLE_BUFFER 4096 /* sysconf(_SC_PAGESIZE) */
#define PT_CACHE_LINE 64
#define PT_MTU_ENUM 3   /* IBV_MTU_1024, what siw reports */
#define PT_RX_DEPTH 512 /* DEF_RX_SEND */

enum { PT_OK = 0, PT_EBAD = -1 };

/* Network byte order comes from the library's iw_wire.h (iw_get_u32,
 * iw_put_u64, ...), here and in iwarp-perf's own control messages. */

typedef enum pt_test { PT_WRITE = 1, PT_READ, PT_SEND } pt_test;

/* struct pingpong_dest, 56 octets. rdma_write_keys converts the first five
 * 32-bit fields and vaddr to big-endian; four octets of alignment padding
 * (uninitialised in perftest) follow rkey; gid is raw; srqn and gid_index
 * are sent as perftest holds them (zero in every capture) and not read
 * back. */
typedef struct pt_dest {
    uint32_t lid, out_reads, qpn, psn, rkey;
    uint64_t vaddr;
    uint8_t gid[16];
    uint32_t srqn, gid_index;
} pt_dest;

/* The steps of one run. Message steps are a Send each way; CONNECT and
 * TEST carry no message. Every SYNC and DEST is perftest's ctx_hand_shake:
 * each side sends its pingpong_dest as it stands (all zero before DEST). */
typedef enum pt_step {
    PT_STEP_END = 0,
    PT_STEP_VERSION,      /* PT_VERSION_LEN */
    PT_STEP_CYCLE_BUFFER, /* PT_INT_LEN, big-endian; both use the larger */
    PT_STEP_CACHE_LINE,   /* PT_INT_LEN, big-endian; both use the larger */
    PT_STEP_MTU,          /* PT_MTU_LEN */
    PT_STEP_SYNC,         /* PT_DEST_LEN: a barrier */
    PT_STEP_CONNECT,      /* the client connects the data QP, the server accepts it */
    PT_STEP_DEST,         /* PT_DEST_LEN: the first handshake with real values */
    PT_STEP_TEST,         /* the measured operations on the data QP */
    PT_STEP_REPORT_SIZE,  /* PT_U64_LEN: message size */
    PT_STEP_REPORT_ITERS, /* PT_U64_LEN: iterations */
    PT_STEP_REPORT_PEAK,  /* PT_U64_LEN: BW peak, IEEE 754 double */
    PT_STEP_REPORT_AVG,   /* PT_U64_LEN: BW average, double */
    PT_STEP_REPORT_RATE   /* PT_U64_LEN: message rate, double */
} pt_step;

/* The steps of a test, PT_STEP_END terminated (static storage). */
const pt_step *pt_script(pt_test test, bool lat);
/* The message length of a step; 0 for CONNECT, TEST and END. */
size_t pt_step_len(pt_step s);
const char *pt_step_name(pt_step s);

void pt_dest_encode(uint8_t out[PT_DEST_LEN], const pt_dest *d);
int pt_dest_decode(pt_dest *d, const uint8_t *in, size_t len, char *why, size_t whylen);
/* The fields a later handshake must repeat unchanged. */
bool pt_dest_same(const pt_dest *a, const pt_dest *b);

void pt_version_encode(uint8_t out[PT_VERSION_LEN], const char *version);
/* A NUL-terminated "digits.digits" string of at most 15 characters, at
 * least 5.60: older perftest sends no cycle buffer and cache line size,
 * and the MTU and iteration fields have other sizes. */
int pt_version_decode(char out[PT_VERSION_LEN], const uint8_t *in, size_t len, char *why,
                      size_t whylen);

void pt_int_encode(uint8_t out[PT_INT_LEN], int32_t v);
/* A power of two within [lo, hi]. */
int pt_int_decode(int32_t *v, const uint8_t *in, size_t len, int32_t lo, int32_t hi, char *why,
                  size_t whylen);

void pt_mtu_encode(uint8_t out[PT_MTU_LEN], int mtu_enum);
/* One or two ASCII digits, NUL padded: the ibv_mtu enum (1..5 is 256..4096). */
int pt_mtu_decode(int *mtu_enum, const uint8_t *in, size_t len, char *why, size_t whylen);

void pt_u64_encode(uint8_t out[PT_U64_LEN], uint64_t v);
int pt_u64_decode(uint64_t *v, const uint8_t *in, size_t len, char *why, size_t whylen);
void pt_double_encode(uint8_t out[PT_U64_LEN], double v);
int pt_double_decode(double *v, const uint8_t *in, size_t len, char *why, size_t whylen);

/* The send_bw credit: the receiver's count of received messages, written
 * with an RDMA Write as a uint32_t in its own byte order; perftest runs on
 * little-endian hosts, so little-endian. */
void pt_credit_encode(uint8_t out[PT_CREDIT_LEN], uint32_t count);
uint32_t pt_credit_decode(const uint8_t in[PT_CREDIT_LEN]);

/* The next remote (and local) offset of a bandwidth run: perftest's
 * increase_rem_addr. Operation i (from 0) goes to base + pt_cycle_offset(i):
 * consecutive slots of size rounded up to the cache line, wrapping at the
 * cycle buffer; a size above half the cycle buffer always uses offset 0. */
uint64_t pt_cycle_offset(uint64_t i, uint32_t size, uint32_t cache_line, uint32_t cycle_buffer);
/* The octets a target must expose at its vaddr for that: max(size, cycle buffer). */
uint64_t pt_buffer_len(uint32_t size, uint32_t cycle_buffer);

#endif
