/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CRC32c (Castagnoli) for MPA: RFC 5044 §4.4 takes the CRC "in the manner
 * described in" iSCSI, RFC 3720 §12.1: generator 0x11EDC6F41, bits taken
 * least significant first (reflected), register preset to ones and the
 * result complemented. In reflected form that is the common CRC-32C with
 * polynomial 0x82F63B78; see crc32c.h for the streaming contract.
 *
 * Paths, chosen per call from the CPU's features (read from the compiler
 * runtime's CPU model: nothing of ours is written, no table is built):
 *   vpclmul-avx512-hybrid  (AMD) 512-bit carry-less folding interleaved with
 *                   8 crc32 streams, >= 2 KiB; below that as vpclmul-avx512.
 *   vpclmul-avx512  4x512-bit carry-less folding (the PCLMULQDQ method of
 *                   Intel's "Fast CRC Computation for Generic Polynomials
 *                   Using PCLMULQDQ"), finished with the crc32 instruction.
 *   sse42-3way      crc32 instruction on three independent streams (hides
 *                   its 3-cycle latency), recombined with PCLMULQDQ.
 *   sse42           crc32 instruction, one stream (no PCLMULQDQ).
 *   sw              portable slicing-by-8 with compile-time tables.
 * Under 64 bytes every x86 path is the one-stream crc32 loop. The x86 code
 * is compiled with target attributes, so the library needs no -msse4.2 and
 * still runs on any x86-64. */
#include <iwarp/crc32c.h>

#include <string.h>

/* ---- Portable slicing-by-8 -------------------------------------------- */

/* CRC32C_Fn = x^(31+n) mod P in the reflected register, i.e. the register
 * that the single bit 1 becomes after n zero bits. Table k holds the CRC of
 * byte i followed by k zero bytes; it is linear in i, so each entry is the
 * XOR of the basis values of i's set bits: bit b of i needs 8(k+1)-b steps.
 * (Generated once with a bitwise x^n mod P; every table is re-checked by
 * the unit tests against the RFC 3720 vectors and a bit-at-a-time CRC.) */
#define CRC32C_F1 0x82F63B78u
#define CRC32C_F2 0x417B1DBCu
#define CRC32C_F3 0x20BD8EDEu
#define CRC32C_F4 0x105EC76Fu
#define CRC32C_F5 0x8AD958CFu
#define CRC32C_F6 0xC79A971Fu
#define CRC32C_F7 0xE13B70F7u
#define CRC32C_F8 0xF26B8303u
#define CRC32C_F9 0xFBC3FAF9u
#define CRC32C_F10 0xFF17C604u
#define CRC32C_F11 0x7F8BE302u
#define CRC32C_F12 0x3FC5F181u
#define CRC32C_F13 0x9D14C3B8u
#define CRC32C_F14 0x4E8A61DCu
#define CRC32C_F15 0x274530EEu
#define CRC32C_F16 0x13A29877u
#define CRC32C_F17 0x8B277743u
#define CRC32C_F18 0xC76580D9u
#define CRC32C_F19 0xE144FB14u
#define CRC32C_F20 0x70A27D8Au
#define CRC32C_F21 0x38513EC5u
#define CRC32C_F22 0x9EDEA41Au
#define CRC32C_F23 0x4F6F520Du
#define CRC32C_F24 0xA541927Eu
#define CRC32C_F25 0x52A0C93Fu
#define CRC32C_F26 0xABA65FE7u
#define CRC32C_F27 0xD725148Bu
#define CRC32C_F28 0xE964B13Du
#define CRC32C_F29 0xF64463E6u
#define CRC32C_F30 0x7B2231F3u
#define CRC32C_F31 0xBF672381u
#define CRC32C_F32 0xDD45AAB8u
#define CRC32C_F33 0x6EA2D55Cu
#define CRC32C_F34 0x37516AAEu
#define CRC32C_F35 0x1BA8B557u
#define CRC32C_F36 0x8F2261D3u
#define CRC32C_F37 0xC5670B91u
#define CRC32C_F38 0xE045BEB0u
#define CRC32C_F39 0x7022DF58u
#define CRC32C_F40 0x38116FACu
#define CRC32C_F41 0x1C08B7D6u
#define CRC32C_F42 0x0E045BEBu
#define CRC32C_F43 0x85F4168Du
#define CRC32C_F44 0xC00C303Eu
#define CRC32C_F45 0x6006181Fu
#define CRC32C_F46 0xB2F53777u
#define CRC32C_F47 0xDB8CA0C3u
#define CRC32C_F48 0xEF306B19u
#define CRC32C_F49 0xF56E0EF4u
#define CRC32C_F50 0x7AB7077Au
#define CRC32C_F51 0x3D5B83BDu
#define CRC32C_F52 0x9C5BFAA6u
#define CRC32C_F53 0x4E2DFD53u
#define CRC32C_F54 0xA5E0C5D1u
#define CRC32C_F55 0xD0065990u
#define CRC32C_F56 0x68032CC8u
#define CRC32C_F57 0x34019664u
#define CRC32C_F58 0x1A00CB32u
#define CRC32C_F59 0x0D006599u
#define CRC32C_F60 0x847609B4u
#define CRC32C_F61 0x423B04DAu
#define CRC32C_F62 0x211D826Du
#define CRC32C_F63 0x9278FA4Eu
#define CRC32C_F64 0x493C7D27u

/* Basis of table k: entry for bit b (b = 0..7) is F(8(k+1)-b). */
#define CRC32C_BASIS0                                                                              \
    CRC32C_F8, CRC32C_F7, CRC32C_F6, CRC32C_F5, CRC32C_F4, CRC32C_F3, CRC32C_F2, CRC32C_F1
#define CRC32C_BASIS1                                                                              \
    CRC32C_F16, CRC32C_F15, CRC32C_F14, CRC32C_F13, CRC32C_F12, CRC32C_F11, CRC32C_F10, CRC32C_F9
#define CRC32C_BASIS2                                                                              \
    CRC32C_F24, CRC32C_F23, CRC32C_F22, CRC32C_F21, CRC32C_F20, CRC32C_F19, CRC32C_F18, CRC32C_F17
#define CRC32C_BASIS3                                                                              \
    CRC32C_F32, CRC32C_F31, CRC32C_F30, CRC32C_F29, CRC32C_F28, CRC32C_F27, CRC32C_F26, CRC32C_F25
#define CRC32C_BASIS4                                                                              \
    CRC32C_F40, CRC32C_F39, CRC32C_F38, CRC32C_F37, CRC32C_F36, CRC32C_F35, CRC32C_F34, CRC32C_F33
#define CRC32C_BASIS5                                                                              \
    CRC32C_F48, CRC32C_F47, CRC32C_F46, CRC32C_F45, CRC32C_F44, CRC32C_F43, CRC32C_F42, CRC32C_F41
#define CRC32C_BASIS6                                                                              \
    CRC32C_F56, CRC32C_F55, CRC32C_F54, CRC32C_F53, CRC32C_F52, CRC32C_F51, CRC32C_F50, CRC32C_F49
#define CRC32C_BASIS7                                                                              \
    CRC32C_F64, CRC32C_F63, CRC32C_F62, CRC32C_F61, CRC32C_F60, CRC32C_F59, CRC32C_F58, CRC32C_F57

#define CRC32C_E(i, b0, b1, b2, b3, b4, b5, b6, b7)                                                \
    ((((i) >> 0 & 1u) * (b0)) ^ (((i) >> 1 & 1u) * (b1)) ^ (((i) >> 2 & 1u) * (b2)) ^              \
     (((i) >> 3 & 1u) * (b3)) ^ (((i) >> 4 & 1u) * (b4)) ^ (((i) >> 5 & 1u) * (b5)) ^              \
     (((i) >> 6 & 1u) * (b6)) ^ (((i) >> 7 & 1u) * (b7)))
#define CRC32C_R4(n, ...)                                                                          \
    CRC32C_E((n), __VA_ARGS__), CRC32C_E((n) + 1u, __VA_ARGS__), CRC32C_E((n) + 2u, __VA_ARGS__),  \
        CRC32C_E((n) + 3u, __VA_ARGS__)
#define CRC32C_R16(n, ...)                                                                         \
    CRC32C_R4((n), __VA_ARGS__), CRC32C_R4((n) + 4u, __VA_ARGS__),                                 \
        CRC32C_R4((n) + 8u, __VA_ARGS__), CRC32C_R4((n) + 12u, __VA_ARGS__)
#define CRC32C_R64(n, ...)                                                                         \
    CRC32C_R16((n), __VA_ARGS__), CRC32C_R16((n) + 16u, __VA_ARGS__),                              \
        CRC32C_R16((n) + 32u, __VA_ARGS__), CRC32C_R16((n) + 48u, __VA_ARGS__)
#define CRC32C_R256(...)                                                                           \
    {                                                                                              \
        CRC32C_R64(0u, __VA_ARGS__), CRC32C_R64(64u, __VA_ARGS__), CRC32C_R64(128u, __VA_ARGS__),  \
            CRC32C_R64(192u, __VA_ARGS__)                                                          \
    }

static const uint32_t crc32c_table[8][256] = {
    CRC32C_R256(CRC32C_BASIS0), CRC32C_R256(CRC32C_BASIS1), CRC32C_R256(CRC32C_BASIS2),
    CRC32C_R256(CRC32C_BASIS3), CRC32C_R256(CRC32C_BASIS4), CRC32C_R256(CRC32C_BASIS5),
    CRC32C_R256(CRC32C_BASIS6), CRC32C_R256(CRC32C_BASIS7),
};

/* Little-endian loads built from bytes: right on any host byte order and
 * alignment; compilers turn them into one load where that is allowed. */
static inline uint32_t crc32c_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t iw_crc32c_update_sw(uint32_t state, const void *buf, size_t len) {
    const uint8_t *p = buf;
    uint32_t c = state;
    if (len == 0)
        return c;
    /* Slicing-by-8: the register covers the first 4 of 8 bytes; the other
     * 4 only need their own "followed by k zero bytes" contribution. */
    for (; len >= 8; p += 8, len -= 8) {
        uint32_t lo = c ^ crc32c_le32(p), hi = crc32c_le32(p + 4);
        c = crc32c_table[7][lo & 0xFF] ^ crc32c_table[6][lo >> 8 & 0xFF] ^
            crc32c_table[5][lo >> 16 & 0xFF] ^ crc32c_table[4][lo >> 24] ^
            crc32c_table[3][hi & 0xFF] ^ crc32c_table[2][hi >> 8 & 0xFF] ^
            crc32c_table[1][hi >> 16 & 0xFF] ^ crc32c_table[0][hi >> 24];
    }
    for (; len; p++, len--)
        c = c >> 8 ^ crc32c_table[0][(c ^ *p) & 0xFF];
    return c;
}

/* ---- x86-64 hardware paths --------------------------------------------- */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CRC32C_X86 1
#include <immintrin.h>

#define CRC32C_TGT_SSE42 __attribute__((target("sse4.2")))
#define CRC32C_TGT_CLMUL __attribute__((target("sse4.2,pclmul")))
#define CRC32C_TGT_AVX512 __attribute__((target("sse4.2,pclmul,avx2,avx512f,vpclmulqdq")))

/* __builtin_cpu_supports reads the CPU model that the compiler runtime
 * (libgcc / compiler-rt) fills in from a priority-101 constructor, so it is
 * ready before ordinary constructors and main; it only reports AVX/AVX-512
 * features whose register state the OS saves (XCR0). A couple of loads and
 * tests per call, no state of ours. */
static inline bool crc32c_have_sse42(void) { return __builtin_cpu_supports("sse4.2"); }
static inline bool crc32c_have_clmul(void) {
    return __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul");
}
static inline bool crc32c_have_avx512(void) {
    return __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul") &&
           __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("vpclmulqdq");
}
/* The hybrid pays off where crc32 keeps pace with the zmm multiplier: on
 * the AMD Zen 5 it was tuned on, two crc32 per cycle against one 512-bit
 * PCLMULQDQ per two cycles (measured). Intel documents one of each per cycle,
 * so there the crc32 half would be the bottleneck and pure folding (the
 * layout ISA-L uses) is kept; not measured here, no Intel CPU available. */
static inline bool crc32c_prefer_hybrid(void) { return __builtin_cpu_is("amd"); }

/* x86 is little-endian; memcpy keeps unaligned loads defined behaviour. */
static inline uint64_t crc32c_ld64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline uint32_t crc32c_ld32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline uint16_t crc32c_ld16(const uint8_t *p) {
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The crc32 instruction is exactly this CRC's register update (reflected,
 * no pre/post inversion), 8 bytes per step. */
CRC32C_TGT_SSE42 static inline uint32_t crc32c_sse42_1way(uint32_t crc, const uint8_t *p,
                                                          size_t len) {
    uint64_t c = crc;
    for (; len >= 8; p += 8, len -= 8)
        c = _mm_crc32_u64(c, crc32c_ld64(p));
    crc = (uint32_t)c;
    if (len & 4) {
        crc = _mm_crc32_u32(crc, crc32c_ld32(p));
        p += 4;
    }
    if (len & 2) {
        crc = _mm_crc32_u16(crc, crc32c_ld16(p));
        p += 2;
    }
    if (len & 1)
        crc = _mm_crc32_u8(crc, *p);
    return crc;
}

CRC32C_TGT_SSE42 static uint32_t crc32c_sse42(uint32_t crc, const uint8_t *p, size_t len) {
    return crc32c_sse42_1way(crc, p, len);
}

/* Shift constants: K(n) = x^n mod P, reflected. Multiplying a 32-bit
 * register r by K(8*nbytes - 33) with PCLMULQDQ and feeding the low 64 bits
 * to crc32 yields r * x^(8*nbytes) mod P, i.e. r advanced over nbytes of
 * zeros (the -33 undoes the x^32 of crc32 and the x^1 of a reflected clmul).
 * Each pair is {K(8*blk - 33), K(16*blk - 33)} for one block size. */
typedef struct {
    size_t blk;
    uint32_t k1, k2;
} crc32c_3way_step;

static const crc32c_3way_step crc32c_3way_steps[] = {
    {4096, 0x82f89c77u, 0x54a86326u},
    {512, 0xdd7e3b0cu, 0x170076fau},
    {64, 0x9e4addf8u, 0x0d3b6092u},
};

/* Three streams of blk bytes each: a starts from crc, b and c from 0, and
 * CRC(a|b|c) = a*x^(16 blk) ^ b*x^(8 blk) ^ c. The two shifts share one
 * xmm multiply pair and are folded into c's last crc32 step (crc32 is
 * linear: crc32(c, d ^ q) = crc32(c, d) ^ crc32(0, q)). */
CRC32C_TGT_CLMUL static inline uint32_t crc32c_3way_block(uint32_t crc, const uint8_t *p,
                                                          size_t blk, uint32_t k1, uint32_t k2) {
    uint64_t a = crc, b = 0, c = 0;
    const uint8_t *pb = p + blk, *pc = p + 2 * blk;
    size_t i;
    for (i = 0; i < blk - 8; i += 8) {
        a = _mm_crc32_u64(a, crc32c_ld64(p + i));
        b = _mm_crc32_u64(b, crc32c_ld64(pb + i));
        c = _mm_crc32_u64(c, crc32c_ld64(pc + i));
    }
    a = _mm_crc32_u64(a, crc32c_ld64(p + i));
    b = _mm_crc32_u64(b, crc32c_ld64(pb + i));
    __m128i ab = _mm_set_epi64x((long long)b, (long long)a);
    __m128i k = _mm_set_epi64x((long long)k1, (long long)k2);
    __m128i q = _mm_xor_si128(_mm_clmulepi64_si128(ab, k, 0x00), _mm_clmulepi64_si128(ab, k, 0x11));
    uint64_t last = crc32c_ld64(pc + i) ^ (uint64_t)_mm_cvtsi128_si64(q);
    return (uint32_t)_mm_crc32_u64(c, last);
}

CRC32C_TGT_CLMUL static uint32_t crc32c_sse42_3way(uint32_t crc, const uint8_t *p, size_t len) {
    for (size_t s = 0; s < sizeof crc32c_3way_steps / sizeof crc32c_3way_steps[0]; s++) {
        const crc32c_3way_step *st = &crc32c_3way_steps[s];
        for (; len >= 3 * st->blk; p += 3 * st->blk, len -= 3 * st->blk)
            crc = crc32c_3way_block(crc, p, st->blk, st->k1, st->k2);
    }
    return crc32c_sse42_1way(crc, p, len);
}

/* Folding. A 128-bit lane holds 16 message bytes; as a polynomial it is
 * H*x^64 + L with H its first 8 bytes (bit-reflected). Moving it D bits
 * further down the message (lane * x^D) and reducing mod P gives
 * H*K(D+31) ^ L*K(D-33): two 64x32 carry-less products whose 96-bit sum can
 * be XORed into the lane D bits later. Constants per lane: {K(D+31), K(D-33)}
 * so that imm 0x00 multiplies H and imm 0x11 multiplies L. */
#define CRC32C_FOLD_K(hi, lo) _mm_set_epi64x((long long)(lo), (long long)(hi))

CRC32C_TGT_AVX512 static inline __m512i crc32c_fold_512(__m512i x, __m512i k, __m512i next) {
    return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                     _mm512_clmulepi64_epi128(x, k, 0x11), next, 0x96);
}

CRC32C_TGT_AVX512 static inline __m512i crc32c_fold_ld512(const uint8_t *p) {
    return _mm512_loadu_si512((const void *)p);
}

/* Lanes 0..2 of x move 48, 32 and 16 bytes down onto lane 3 (lane 3 stays),
 * then lane * x^32 mod P is crc32 of its two quadwords from a zero register.
 * extra (< 2^64) is added as extra * x^32 for free: crc32 is linear, so
 * crc32(c, hi ^ extra) = crc32(c, hi) ^ crc32(0, extra). */
CRC32C_TGT_AVX512 static inline uint32_t crc32c_fold_lanes(__m512i x, uint64_t extra) {
    const __m512i kl = _mm512_set_epi64(0, 0, 0x493c7d27, 0xf20c0dfe, 0xba4fc28e, 0x3da6d0cb,
                                        0xddc0152b, 0x1c291d04);
    __m512i y = crc32c_fold_512(x, kl, _mm512_maskz_mov_epi64(0xC0, x));
    __m256i y2 = _mm256_xor_si256(_mm512_castsi512_si256(y), _mm512_extracti64x4_epi64(y, 1));
    __m128i y1 = _mm_xor_si128(_mm256_castsi256_si128(y2), _mm256_extracti128_si256(y2, 1));
    uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(y1));
    return (uint32_t)_mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(y1, 1) ^ extra);
}

/* Four zmm accumulators (256 bytes) folded 256 bytes further, then merged. */
#define CRC32C_K256 _mm512_broadcast_i32x4(CRC32C_FOLD_K(0xdcb17aa4u, 0xb9e02b86u))
#define CRC32C_K128 _mm512_broadcast_i32x4(CRC32C_FOLD_K(0x6992cea2u, 0x0d3b6092u))
#define CRC32C_K64 _mm512_broadcast_i32x4(CRC32C_FOLD_K(0x740eef02u, 0x9e4addf8u))

CRC32C_TGT_AVX512 static inline __m512i crc32c_fold_merge4(__m512i x0, __m512i x1, __m512i x2,
                                                           __m512i x3) {
    x2 = crc32c_fold_512(x0, CRC32C_K128, x2);
    x3 = crc32c_fold_512(x1, CRC32C_K128, x3);
    return crc32c_fold_512(x2, CRC32C_K64, x3);
}

/* len >= 64. Pure folding: four accumulators keep the multiplier busy despite
 * its latency; one accumulator for the last < 256 bytes; crc32 for the tail. */
CRC32C_TGT_AVX512 static uint32_t crc32c_fold_vec(uint32_t crc, const uint8_t *p, size_t len) {
    __m512i x3;
    /* The incoming register is XORed into the first 4 message bytes. */
    const __m512i init = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (int)crc);
    if (len >= 256) {
        __m512i x0 = _mm512_xor_si512(crc32c_fold_ld512(p), init);
        __m512i x1 = crc32c_fold_ld512(p + 64);
        __m512i x2 = crc32c_fold_ld512(p + 128);
        x3 = crc32c_fold_ld512(p + 192);
        for (p += 256, len -= 256; len >= 256; p += 256, len -= 256) {
            x0 = crc32c_fold_512(x0, CRC32C_K256, crc32c_fold_ld512(p));
            x1 = crc32c_fold_512(x1, CRC32C_K256, crc32c_fold_ld512(p + 64));
            x2 = crc32c_fold_512(x2, CRC32C_K256, crc32c_fold_ld512(p + 128));
            x3 = crc32c_fold_512(x3, CRC32C_K256, crc32c_fold_ld512(p + 192));
        }
        x3 = crc32c_fold_merge4(x0, x1, x2, x3);
    } else {
        x3 = _mm512_xor_si512(crc32c_fold_ld512(p), init);
        p += 64;
        len -= 64;
    }
    for (; len >= 64; p += 64, len -= 64)
        x3 = crc32c_fold_512(x3, CRC32C_K64, crc32c_fold_ld512(p));
    return crc32c_sse42_1way(crc32c_fold_lanes(x3, 0), p, len);
}

/* Hybrid chunk for CPUs whose crc32 unit keeps pace with their zmm
 * carry-less multiplier (see crc32c_prefer_hybrid), where folding alone
 * leaves half the machine idle: about 1.6-1.8x the pure folding speed here.
 * A chunk of 512*N bytes is 8 scalar streams of 32*N bytes (crc32; 8 streams
 * hide its latency) followed by a vector region of 256*N bytes (folded as
 * above); each iteration advances all of them. All start from register 0
 * and are recombined by linearity:
 *   reg(prev, chunk) = prev*x^(8*512N) ^ sum_j s_j*x^(8*(15-j)*32N) ^ vec
 * i.e. nine K(8*bytes - 33) multiplies (eight in one zmm pair) whose sum
 * joins the vector's final crc32 step. The vector region comes last so that
 * the shifts run while the vector is still being reduced, and the incoming
 * register only enters at the end, so successive chunks overlap. */
typedef struct {
    uint32_t k_prev; /* K(8*512N - 33) */
    uint64_t k[8];   /* s_j: K(8*(15-j)*32N - 33) */
} crc32c_hybrid_consts;

/* clang-format off */
static const crc32c_hybrid_consts crc32c_hybrid_n128 = {   /* 64 KiB chunks */
    0xc5013a36u, {0x8f619e7d, 0x21c03eff, 0x139f7c52, 0x51e9168b,
                  0x84c8538e, 0xc71795dd, 0xa400fc17, 0x5ae703ab}};
static const crc32c_hybrid_consts crc32c_hybrid_n32 = {    /* 16 KiB */
    0x1dc403ccu, {0x278840ed, 0x1994f83a, 0xba687f9f, 0xc1f19ee1,
                  0x2deb01bb, 0xe2f1a204, 0x6bde96db, 0x54a86326}};
static const crc32c_hybrid_consts crc32c_hybrid_n8 = {     /* 4 KiB */
    0x82f89c77u, {0x23d5e7e5, 0x96a1f19b, 0x5f0e0438, 0x359674f7,
                  0x8515c07f, 0x22c3799f, 0xbedc6ba1, 0xa51b6135}};
static const crc32c_hybrid_consts crc32c_hybrid_n4 = {     /* 2 KiB */
    0xa51b6135u, {0xf48642e9, 0xaa7c7ad5, 0x363bd6b3, 0x9ef68d35,
                  0xd813b325, 0xdd66cbbb, 0x86d8e4d2, 0x170076fa}};
/* clang-format on */

/* 32 bytes of one scalar stream. */
CRC32C_TGT_SSE42 static inline uint64_t crc32c_stream32(uint64_t c, const uint8_t *q) {
    c = _mm_crc32_u64(c, crc32c_ld64(q));
    c = _mm_crc32_u64(c, crc32c_ld64(q + 8));
    c = _mm_crc32_u64(c, crc32c_ld64(q + 16));
    return _mm_crc32_u64(c, crc32c_ld64(q + 24));
}

/* Always inlined with a constant n, so each chunk size gets its own loop in
 * which all streams are one base register plus constant displacements
 * (otherwise gcc runs out of registers and spills the stream states). */
CRC32C_TGT_AVX512 __attribute__((always_inline)) static inline uint32_t
crc32c_fold_hybrid_chunk(uint32_t prev, const uint8_t *p, size_t n, const crc32c_hybrid_consts *g) {
    const size_t sl = 32 * n;
    const uint8_t *v = p + 256 * n;
    uint64_t c0 = crc32c_stream32(0, p), c1 = crc32c_stream32(0, p + sl);
    uint64_t c2 = crc32c_stream32(0, p + 2 * sl), c3 = crc32c_stream32(0, p + 3 * sl);
    uint64_t c4 = crc32c_stream32(0, p + 4 * sl), c5 = crc32c_stream32(0, p + 5 * sl);
    uint64_t c6 = crc32c_stream32(0, p + 6 * sl), c7 = crc32c_stream32(0, p + 7 * sl);
    __m512i x0 = crc32c_fold_ld512(v), x1 = crc32c_fold_ld512(v + 64);
    __m512i x2 = crc32c_fold_ld512(v + 128), x3 = crc32c_fold_ld512(v + 192);
    for (size_t i = 1; i < n; i++) {
        const uint8_t *q = p + 32 * i, *w = v + 256 * i;
        c0 = crc32c_stream32(c0, q);
        c1 = crc32c_stream32(c1, q + sl);
        c2 = crc32c_stream32(c2, q + 2 * sl);
        c3 = crc32c_stream32(c3, q + 3 * sl);
        c4 = crc32c_stream32(c4, q + 4 * sl);
        c5 = crc32c_stream32(c5, q + 5 * sl);
        c6 = crc32c_stream32(c6, q + 6 * sl);
        c7 = crc32c_stream32(c7, q + 7 * sl);
        x0 = crc32c_fold_512(x0, CRC32C_K256, crc32c_fold_ld512(w));
        x1 = crc32c_fold_512(x1, CRC32C_K256, crc32c_fold_ld512(w + 64));
        x2 = crc32c_fold_512(x2, CRC32C_K256, crc32c_fold_ld512(w + 128));
        x3 = crc32c_fold_512(x3, CRC32C_K256, crc32c_fold_ld512(w + 192));
    }
    /* Quadword j of t pairs with k[j]; imm 0x00/0x11 take both halves. */
    __m512i t = _mm512_set_epi64((long long)c7, (long long)c6, (long long)c5, (long long)c4,
                                 (long long)c3, (long long)c2, (long long)c1, (long long)c0);
    __m512i k = _mm512_loadu_si512((const void *)g->k);
    __m512i m = _mm512_xor_si512(_mm512_clmulepi64_epi128(t, k, 0x00),
                                 _mm512_clmulepi64_epi128(t, k, 0x11));
    __m256i m2 = _mm256_xor_si256(_mm512_castsi512_si256(m), _mm512_extracti64x4_epi64(m, 1));
    __m128i m1 = _mm_xor_si128(_mm256_castsi256_si128(m2), _mm256_extracti128_si256(m2, 1));
    m1 = _mm_xor_si128(m1, _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)prev),
                                                _mm_cvtsi32_si128((int)g->k_prev), 0x00));
    /* All products are < 2^64 (32x32 bits): only the low quadword is set. */
    return crc32c_fold_lanes(crc32c_fold_merge4(x0, x1, x2, x3), (uint64_t)_mm_cvtsi128_si64(m1));
}

CRC32C_TGT_AVX512 static uint32_t crc32c_fold_hybrid(uint32_t crc, const uint8_t *p, size_t len) {
#define CRC32C_HYBRID_RUN(n, consts)                                                               \
    for (; len >= 512 * (size_t)(n); p += 512 * (size_t)(n), len -= 512 * (size_t)(n))             \
        crc = crc32c_fold_hybrid_chunk(crc, p, (n), &(consts));
    CRC32C_HYBRID_RUN(128, crc32c_hybrid_n128)
    CRC32C_HYBRID_RUN(32, crc32c_hybrid_n32)
    CRC32C_HYBRID_RUN(8, crc32c_hybrid_n8)
    CRC32C_HYBRID_RUN(4, crc32c_hybrid_n4)
#undef CRC32C_HYBRID_RUN
    return len >= 64 ? crc32c_fold_vec(crc, p, len) : crc32c_sse42_1way(crc, p, len);
}

/* Below 64 bytes the 1-way crc32 loop is as fast as setting up the folding;
 * the hybrid needs at least its smallest chunk (2 KiB). */
#define CRC32C_AVX512_MIN 64
#define CRC32C_HYBRID_MIN 2048
#define CRC32C_3WAY_MIN 192
#endif /* x86-64 */

uint32_t iw_crc32c_update(uint32_t state, const void *buf, size_t len) {
    if (len == 0)
        return state;
#ifdef CRC32C_X86
    const uint8_t *p = buf;
    if (len >= CRC32C_AVX512_MIN && crc32c_have_avx512()) {
        if (len >= CRC32C_HYBRID_MIN && crc32c_prefer_hybrid())
            return crc32c_fold_hybrid(state, p, len);
        return crc32c_fold_vec(state, p, len);
    }
    if (crc32c_have_sse42()) {
        if (len >= CRC32C_3WAY_MIN && crc32c_have_clmul())
            return crc32c_sse42_3way(state, p, len);
        return crc32c_sse42(state, p, len);
    }
#endif
    return iw_crc32c_update_sw(state, buf, len);
}

const char *iw_crc32c_impl(void) {
#ifdef CRC32C_X86
    if (crc32c_have_avx512())
        return crc32c_prefer_hybrid() ? "vpclmul-avx512-hybrid" : "vpclmul-avx512";
    if (crc32c_have_clmul())
        return "sse42-3way";
    if (crc32c_have_sse42())
        return "sse42";
#endif
    return "sw";
}

bool iw_crc32c_update_with(const char *impl, uint32_t *state, const void *buf, size_t len) {
    if (!impl || !state)
        return false;
    if (strcmp(impl, "sw") == 0) {
        *state = iw_crc32c_update_sw(*state, buf, len);
        return true;
    }
#ifdef CRC32C_X86
    const uint8_t *p = buf;
    uint32_t (*fn)(uint32_t, const uint8_t *, size_t) = NULL;
    size_t min = 1; /* below this length the path hands over to plain crc32 */
    if (strcmp(impl, "vpclmul-avx512-hybrid") == 0 && crc32c_have_avx512()) {
        fn = crc32c_fold_hybrid;
        min = 64;
    } else if (strcmp(impl, "vpclmul-avx512") == 0 && crc32c_have_avx512()) {
        fn = crc32c_fold_vec;
        min = 64;
    } else if (strcmp(impl, "sse42-3way") == 0 && crc32c_have_clmul()) {
        fn = crc32c_sse42_3way;
    } else if (strcmp(impl, "sse42") == 0 && crc32c_have_sse42()) {
        fn = crc32c_sse42;
    }
    if (fn) {
        if (len >= min)
            *state = fn(*state, p, len);
        else if (len)
            *state = crc32c_sse42(*state, p, len);
        return true;
    }
#endif
    return false;
}
