/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CRC32c, RFC 3720 §12.1 as MPA uses it (RFC 5044 §4.4).
 *
 * Input: [align][state: 4][length: 3][nsplit][nsplit x split: 3][data...]
 *   align % 64 is the buffer's offset from a 64-byte boundary; length 0
 *   means "data as is", otherwise the data is tiled to length % (MAX + 1)
 *   octets, so a few bytes of input reach every size threshold of the
 *   hardware paths (64, 192, 2 KiB and the 4/16/64 KiB hybrid chunks).
 *   Split offsets (big-endian, modulo length + 1) cut the buffer for the
 *   streaming form.
 * Invariants: iw_crc32c_update, every named path this CPU runs, and any
 * chaining of updates over the pieces all equal iw_crc32c_update_sw; a
 * codeword (data + its CRC, LSB first) leaves the RFC 3720 residue. */
#include <iwarp/crc32c.h>

#include "fuzz.h"

#define MAX_LEN (160u * 1024u)
#define MAX_SPLITS 8

static const char *const paths[] = {"vpclmul-avx512-hybrid", "vpclmul-avx512", "sse42-3way",
                                    "sse42", "sw"};

/* A heap block that ends exactly at buf + len, so ASan faults on any read
 * past the data; buf sits align octets after a 64-byte boundary. */
static uint8_t *alloc_at(size_t align, size_t len, uint8_t **buf) {
    void *block = NULL;
    FUZZ_CHECK(posix_memalign(&block, 64, align + len + !(align + len)) == 0);
    *buf = (uint8_t *)block + align;
    return block;
}

static int cmp_size(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    size_t align = fuzz_u8(&in) % 64;
    uint32_t state = fuzz_u32(&in);
    uint32_t tile = fuzz_u16(&in);
    tile = tile << 8 | fuzz_u8(&in);
    size_t nsplit = fuzz_u8(&in) % (MAX_SPLITS + 1);
    uint32_t raw_split[MAX_SPLITS];
    for (size_t i = 0; i < nsplit; i++) {
        raw_split[i] = fuzz_u16(&in);
        raw_split[i] = raw_split[i] << 8 | fuzz_u8(&in);
    }

    size_t len = in.n < MAX_LEN ? in.n : MAX_LEN;
    if (tile)
        len = in.n ? tile % (MAX_LEN + 1) : 0;
    uint8_t *buf, *block = alloc_at(align, len, &buf);
    /* Tile by doubling: the filled part is always whole copies of the data. */
    size_t filled = len < in.n ? len : in.n;
    if (filled)
        memcpy(buf, in.p, filled);
    for (; filled < len; filled *= 2)
        memcpy(buf + filled, buf, len - filled < filled ? len - filled : filled);

    uint32_t want = iw_crc32c_update_sw(state, buf, len);
    FUZZ_CHECK(iw_crc32c_update(state, buf, len) == want);
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        uint32_t s = state;
        if (iw_crc32c_update_with(paths[i], &s, buf, len))
            FUZZ_CHECK(s == want);
        else
            FUZZ_CHECK(s == state); /* unknown here: state left alone */
    }

    /* Streaming over the pieces, with both the automatic and sw paths. */
    size_t cut[MAX_SPLITS + 2];
    for (size_t i = 0; i < nsplit; i++)
        cut[i] = raw_split[i] % (len + 1);
    qsort(cut, nsplit, sizeof cut[0], cmp_size);
    cut[nsplit] = len;
    uint32_t hw = state, sw = state;
    size_t at = 0;
    for (size_t i = 0; i <= nsplit; i++) {
        hw = iw_crc32c_update(hw, buf + at, cut[i] - at);
        sw = iw_crc32c_update_sw(sw, buf + at, cut[i] - at);
        at = cut[i];
    }
    FUZZ_CHECK(hw == want && sw == want);

    /* RFC 3720 B.4 / wire-facts A.7: appending the CRC LSB first leaves the
     * register at 0xB798B438 whatever the data. */
    uint8_t *cw, *cw_block = alloc_at(align, len + 4, &cw);
    if (len)
        memcpy(cw, buf, len);
    iw_crc32c_put(cw + len, iw_crc32c(buf, len));
    FUZZ_CHECK(iw_crc32c_update(IW_CRC32C_INIT, cw, len + 4) == 0xB798B438u);
    FUZZ_CHECK(iw_crc32c_update_sw(IW_CRC32C_INIT, cw, len + 4) == 0xB798B438u);
    FUZZ_CHECK(iw_crc32c_impl() != NULL);
    free(cw_block);
    free(block);
    return 0;
}
