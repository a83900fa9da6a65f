/* SPDX-License-Identifier: GPL-2.0-or-later */
/* perftest's communication-QP messages (pt_wire.h). */
#include <iwarp/wire.h>
#include "pt_wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Client and server run the same steps; per test they differ only after
 * the third handshake (captures of perftest 6.06 over siw, -n and -D):
 *   write_bw, read_bw: TEST, SYNC, five report fields, SYNC
 *   send_bw:           SYNC (receives posted), TEST, SYNC
 *   read_lat, send_lat: SYNC, TEST, SYNC
 *   write_lat:         SYNC, TEST (each side stops after its last pong) */
#define PT_PROLOGUE                                                                                \
    PT_STEP_VERSION, PT_STEP_CYCLE_BUFFER, PT_STEP_CACHE_LINE, PT_STEP_MTU, PT_STEP_SYNC,          \
        PT_STEP_CONNECT, PT_STEP_SYNC, PT_STEP_DEST, PT_STEP_SYNC, PT_STEP_SYNC

static const pt_step script_rdma_bw[] = {
    PT_PROLOGUE,          PT_STEP_TEST,        PT_STEP_SYNC,       PT_STEP_REPORT_SIZE,
    PT_STEP_REPORT_ITERS, PT_STEP_REPORT_PEAK, PT_STEP_REPORT_AVG, PT_STEP_REPORT_RATE,
    PT_STEP_SYNC,         PT_STEP_END};
static const pt_step script_synced[] = {PT_PROLOGUE, PT_STEP_SYNC, PT_STEP_TEST, PT_STEP_SYNC,
                                        PT_STEP_END};
static const pt_step script_write_lat[] = {PT_PROLOGUE, PT_STEP_SYNC, PT_STEP_TEST, PT_STEP_END};

const pt_step *pt_script(pt_test test, bool lat) {
    if (lat)
        return test == PT_WRITE ? script_write_lat : script_synced;
    return test == PT_SEND ? script_synced : script_rdma_bw;
}

size_t pt_step_len(pt_step s) {
    switch (s) {
    case PT_STEP_VERSION:
        return PT_VERSION_LEN;
    case PT_STEP_CYCLE_BUFFER:
    case PT_STEP_CACHE_LINE:
        return PT_INT_LEN;
    case PT_STEP_MTU:
        return PT_MTU_LEN;
    case PT_STEP_SYNC:
    case PT_STEP_DEST:
        return PT_DEST_LEN;
    case PT_STEP_REPORT_SIZE:
    case PT_STEP_REPORT_ITERS:
    case PT_STEP_REPORT_PEAK:
    case PT_STEP_REPORT_AVG:
    case PT_STEP_REPORT_RATE:
        return PT_U64_LEN;
    default:
        return 0;
    }
}

const char *pt_step_name(pt_step s) {
    static const char *const n[] = {"end",
                                    "version",
                                    "cycle buffer",
                                    "cache line size",
                                    "MTU",
                                    "sync",
                                    "data QP connect",
                                    "destination",
                                    "test",
                                    "report: size",
                                    "report: iterations",
                                    "report: BW peak",
                                    "report: BW average",
                                    "report: message rate"};
    return (unsigned)s < sizeof n / sizeof n[0] ? n[s] : "?";
}

__attribute__((format(printf, 3, 4))) static int bad(char *why, size_t whylen, const char *fmt,
                                                     ...) {
    if (why && whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return PT_EBAD;
}

static int check_len(size_t len, size_t want, char *why, size_t whylen) {
    if (len != want)
        return bad(why, whylen, "expected %zu octets, got %zu", want, len);
    return PT_OK;
}

/* ---- pingpong_dest ---- */

/* Offsets in the 56 octets; 20..23 is padding before the 8-aligned vaddr. */
enum {
    D_LID = 0,
    D_OUT_READS = 4,
    D_QPN = 8,
    D_PSN = 12,
    D_RKEY = 16,
    D_VADDR = 24,
    D_GID = 32,
    D_SRQN = 48,
    D_GID_INDEX = 52
};

void pt_dest_encode(uint8_t out[PT_DEST_LEN], const pt_dest *d) {
    memset(out, 0, PT_DEST_LEN);
    iw_put_u32(out + D_LID, d->lid);
    iw_put_u32(out + D_OUT_READS, d->out_reads);
    iw_put_u32(out + D_QPN, d->qpn);
    iw_put_u32(out + D_PSN, d->psn);
    iw_put_u32(out + D_RKEY, d->rkey);
    iw_put_u64(out + D_VADDR, d->vaddr);
    memcpy(out + D_GID, d->gid, sizeof d->gid);
    iw_put_u32(out + D_SRQN, d->srqn);
    iw_put_u32(out + D_GID_INDEX, d->gid_index);
}

int pt_dest_decode(pt_dest *d, const uint8_t *in, size_t len, char *why, size_t whylen) {
    if (check_len(len, PT_DEST_LEN, why, whylen) < 0)
        return PT_EBAD;
    d->lid = iw_get_u32(in + D_LID);
    d->out_reads = iw_get_u32(in + D_OUT_READS);
    d->qpn = iw_get_u32(in + D_QPN);
    d->psn = iw_get_u32(in + D_PSN);
    d->rkey = iw_get_u32(in + D_RKEY);
    d->vaddr = iw_get_u64(in + D_VADDR);
    memcpy(d->gid, in + D_GID, sizeof d->gid);
    d->srqn = iw_get_u32(in + D_SRQN);
    d->gid_index = iw_get_u32(in + D_GID_INDEX);
    return PT_OK;
}

bool pt_dest_same(const pt_dest *a, const pt_dest *b) {
    return a->lid == b->lid && a->out_reads == b->out_reads && a->qpn == b->qpn &&
           a->psn == b->psn && a->rkey == b->rkey && a->vaddr == b->vaddr &&
           !memcmp(a->gid, b->gid, sizeof a->gid) && a->srqn == b->srqn &&
           a->gid_index == b->gid_index;
}

/* ---- version ---- */

void pt_version_encode(uint8_t out[PT_VERSION_LEN], const char *version) {
    memset(out, 0, PT_VERSION_LEN);
    size_t n = strlen(version);
    memcpy(out, version, n < PT_VERSION_LEN - 1 ? n : PT_VERSION_LEN - 1);
}

int pt_version_decode(char out[PT_VERSION_LEN], const uint8_t *in, size_t len, char *why,
                      size_t whylen) {
    out[0] = '\0';
    if (check_len(len, PT_VERSION_LEN, why, whylen) < 0)
        return PT_EBAD;
    const uint8_t *nul = memchr(in, 0, PT_VERSION_LEN);
    if (!nul)
        return bad(why, whylen, "version string is not NUL-terminated");
    size_t n = (size_t)(nul - in), dots = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i] == '.')
            dots++;
        else if (in[i] < '0' || in[i] > '9')
            return bad(why, whylen,
                       "version string has a character 0x%02x at %zu, not a digit "
                       "or '.'",
                       in[i], i);
    }
    if (!n || dots != 1 || in[0] == '.' || in[n - 1] == '.')
        return bad(why, whylen, "version string '%.*s' is not MAJOR.MINOR", (int)n,
                   (const char *)in);
    memcpy(out, in, n);
    out[n] = '\0';
    /* perftest compares versions as floats (atof(rem_version) >= 5.60). */
    if (strtod(out, NULL) < 5.60) {
        bad(why, whylen,
            "perftest version %s is older than 5.60, whose exchange "
            "iwarp-perf does not speak",
            out);
        out[0] = '\0';
        return PT_EBAD;
    }
    return PT_OK;
}

/* ---- check_sys_data, check_mtu ---- */

void pt_int_encode(uint8_t out[PT_INT_LEN], int32_t v) { iw_put_u32(out, (uint32_t)v); }

int pt_int_decode(int32_t *v, const uint8_t *in, size_t len, int32_t lo, int32_t hi, char *why,
                  size_t whylen) {
    if (check_len(len, PT_INT_LEN, why, whylen) < 0)
        return PT_EBAD;
    int32_t x = (int32_t)iw_get_u32(in);
    if (x < lo || x > hi || (x & (x - 1)))
        return bad(why, whylen, "%ld is not a power of two from %ld to %ld", (long)x, (long)lo,
                   (long)hi);
    *v = x;
    return PT_OK;
}

void pt_mtu_encode(uint8_t out[PT_MTU_LEN], int mtu_enum) {
    out[0] = (uint8_t)('0' + (mtu_enum >= 0 && mtu_enum <= 9 ? mtu_enum : 0));
    out[1] = 0;
}

int pt_mtu_decode(int *mtu_enum, const uint8_t *in, size_t len, char *why, size_t whylen) {
    if (check_len(len, PT_MTU_LEN, why, whylen) < 0)
        return PT_EBAD;
    bool d0 = in[0] >= '0' && in[0] <= '9', d1 = in[1] >= '0' && in[1] <= '9';
    if (!d0 || (in[1] && !d1))
        return bad(why, whylen, "MTU field %02x %02x is not a decimal number", in[0], in[1]);
    *mtu_enum = d1 ? (in[0] - '0') * 10 + (in[1] - '0') : in[0] - '0';
    return PT_OK;
}

/* ---- report fields ---- */

void pt_u64_encode(uint8_t out[PT_U64_LEN], uint64_t v) { iw_put_u64(out, v); }

int pt_u64_decode(uint64_t *v, const uint8_t *in, size_t len, char *why, size_t whylen) {
    if (check_len(len, PT_U64_LEN, why, whylen) < 0)
        return PT_EBAD;
    *v = iw_get_u64(in);
    return PT_OK;
}

/* hton_double: the IEEE 754 bits, big-endian. */
void pt_double_encode(uint8_t out[PT_U64_LEN], double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    iw_put_u64(out, bits);
}

int pt_double_decode(double *v, const uint8_t *in, size_t len, char *why, size_t whylen) {
    uint64_t bits;
    if (pt_u64_decode(&bits, in, len, why, whylen) < 0)
        return PT_EBAD;
    memcpy(v, &bits, sizeof *v);
    return PT_OK;
}

/* ---- send_bw credits, address cycling ---- */

void pt_credit_encode(uint8_t out[PT_CREDIT_LEN], uint32_t count) {
    out[0] = (uint8_t)count, out[1] = (uint8_t)(count >> 8), out[2] = (uint8_t)(count >> 16),
    out[3] = (uint8_t)(count >> 24);
}

uint32_t pt_credit_decode(const uint8_t in[PT_CREDIT_LEN]) {
    return (uint32_t)in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16 | (uint32_t)in[3] << 24;
}

uint64_t pt_cycle_offset(uint64_t i, uint32_t size, uint32_t cache_line, uint32_t cycle_buffer) {
    uint64_t line = cache_line ? cache_line : 1;
    uint64_t inc = ((uint64_t)size + line - 1) / line * line; /* INC(size, cache_line) */
    if (!inc || size > cycle_buffer / 2)
        return 0;
    uint64_t slots = cycle_buffer / inc;
    return (i % slots) * inc;
}

uint64_t pt_buffer_len(uint32_t size, uint32_t cycle_buffer) {
    return size > cycle_buffer ? size : cycle_buffer;
}
