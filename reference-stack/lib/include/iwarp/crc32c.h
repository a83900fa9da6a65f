/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CRC32c (Castagnoli) as MPA uses it: RFC 5044 §4.4, defined by RFC 3720 §12.1.
 *
 * The value is the common CRC-32C (reflected, init and xorout 0xFFFFFFFF,
 * check("123456789") = 0xE3069283). On the wire MPA stores it least
 * significant byte first: use iw_crc32c_put()/iw_crc32c_get(), never a
 * big-endian store.
 *
 * The implementation is chosen at run time from the CPU's features (SSE4.2
 * crc32, PCLMULQDQ / VPCLMULQDQ folding) with a portable table fallback that
 * gives identical results. No global state is written. */
#ifndef IWARP_CRC32C_H
#define IWARP_CRC32C_H

#include <iwarp/types.h>

IW_BEGIN_DECLS

#define IW_CRC32C_INIT 0xFFFFFFFFu

/* Streaming form: state starts at IW_CRC32C_INIT; the CRC is ~state. */
uint32_t iw_crc32c_update(uint32_t state, const void *buf, size_t len);

/* One-shot CRC32c of buf. */
static inline uint32_t iw_crc32c(const void *buf, size_t len) {
    return ~iw_crc32c_update(IW_CRC32C_INIT, buf, len);
}

/* Portable table-driven path (slicing-by-8); same contract as iw_crc32c_update. */
uint32_t iw_crc32c_update_sw(uint32_t state, const void *buf, size_t len);

/* Name of the implementation iw_crc32c_update uses on this CPU. */
const char *iw_crc32c_impl(void);

/* Tests and benchmarks: update *state with the path named impl (a name
 * iw_crc32c_impl() can return: "vpclmul-avx512-hybrid", "vpclmul-avx512",
 * "sse42-3way", "sse42", "sw") instead of the automatic choice. Returns
 * false, leaving *state alone, if the name is unknown or this CPU cannot
 * run that path. */
bool iw_crc32c_update_with(const char *impl, uint32_t *state, const void *buf, size_t len);

/* Wire order: least significant byte first (RFC 5044 §4.4, RFC 3720 B.4). */
static inline void iw_crc32c_put(uint8_t out[4], uint32_t crc) {
    out[0] = (uint8_t)crc;
    out[1] = (uint8_t)(crc >> 8);
    out[2] = (uint8_t)(crc >> 16);
    out[3] = (uint8_t)(crc >> 24);
}
static inline uint32_t iw_crc32c_get(const uint8_t in[4]) {
    return (uint32_t)in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16 | (uint32_t)in[3] << 24;
}

IW_END_DECLS
#endif
