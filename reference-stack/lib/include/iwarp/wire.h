/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Byte order lives here and nowhere else: network order (big-endian) loads
 * and stores of iWARP header fields, for the library and for programs that
 * build or read such fields themselves (iwarp-decode, iwarp-perf). The CRC
 * field's LSB-first order is in <iwarp/crc32c.h>. Inline only: no symbols. */
#ifndef IWARP_WIRE_H
#define IWARP_WIRE_H

#include <stdint.h>

static inline uint16_t iw_get_u16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t iw_get_u32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t iw_get_u64(const uint8_t *p) {
    return (uint64_t)iw_get_u32(p) << 32 | iw_get_u32(p + 4);
}
static inline void iw_put_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void iw_put_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline void iw_put_u64(uint8_t *p, uint64_t v) {
    iw_put_u32(p, (uint32_t)(v >> 32));
    iw_put_u32(p + 4, (uint32_t)v);
}

#endif
