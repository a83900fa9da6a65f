/* SPDX-License-Identifier: GPL-2.0-or-later */
/* FPDUs with markers: RFC 5044 §4.1 (format), §4.2-4.3 (markers), §4.4 (CRC).
 *
 * An FPDU is a run of "logical" octets (ULPDU_Length, ULPDU, PAD, CRC) laid
 * on the wire with a 4-octet marker at every stream position that is a
 * multiple of 512 relative to the grid. Everything below maps logical
 * offsets to wire offsets with one walk, so any start position works,
 * including ones off the 4-octet alignment that conformant senders keep. */
#include <iwarp/crc32c.h>
#include <iwarp/mpa.h>

#include <string.h>

#include <iwarp/wire.h>

/* Wire offset of logical octet l of an FPDU whose first wire octet is at
 * grid position pos. A marker due before an octet precedes it. */
static size_t markers_wire_off(uint32_t pos, size_t l, bool markers) {
    if (!markers)
        return l;
    size_t w = 0;
    for (;;) {
        unsigned gap = iw_mpa_marker_gap(pos + (uint32_t)w);
        if (gap == 0) {
            w += IW_MPA_MARKER_LEN;
            continue;
        }
        if (l < gap)
            return w + l;
        w += gap;
        l -= gap;
    }
}

/* Copy n logical octets starting at logical offset l into dst. */
static void markers_gather(const uint8_t *buf, uint32_t pos, bool markers, size_t l, size_t n,
                           uint8_t *dst) {
    while (n) {
        size_t w = markers_wire_off(pos, l, markers);
        size_t run = markers ? iw_mpa_marker_gap(pos + (uint32_t)w) : n;
        if (run > n)
            run = n;
        memcpy(dst, buf + w, run);
        dst += run;
        l += run;
        n -= run;
    }
}

static size_t fpdu_logical_len(size_t ulpdu_len) {
    return IW_MPA_HDR_LEN + ulpdu_len + iw_mpa_pad_len(ulpdu_len) + IW_MPA_CRC_LEN;
}

size_t iw_mpa_fpdu_wire_len(size_t ulpdu_len, uint32_t pos, bool markers) {
    return markers_wire_off(pos, fpdu_logical_len(ulpdu_len) - 1, markers) + 1;
}

size_t iw_mpa_fpdu_len(const uint8_t *buf, size_t len, uint32_t pos, bool markers) {
    size_t w1 = markers_wire_off(pos, 1, markers);
    if (len <= w1)
        return 0;
    uint8_t hdr[IW_MPA_HDR_LEN];
    markers_gather(buf, pos, markers, 0, IW_MPA_HDR_LEN, hdr);
    return iw_mpa_fpdu_wire_len(iw_get_u16(hdr), pos, markers);
}

/* Gather cursor: appends logical octets to an iov list, inserting markers
 * as they fall due. Framing octets are copied into `frame`; ULPDU octets
 * are referenced where they lie. A dry cursor (iov NULL) writes nothing,
 * neither iov nor frame, and only counts what a real one would use, with
 * the same addresses, so that the sizes are checked before the first
 * write. */
typedef struct {
    iw_iovec *iov; /* NULL: dry */
    int n, max;
    uint8_t *frame;
    size_t fused, fcap;
    size_t w;     /* wire octets laid out so far */
    uint32_t pos; /* grid position of the FPDU's first wire octet */
    bool markers;
    size_t hdr_off;     /* wire offset of ULPDU_Length */
    const uint8_t *end; /* just past the last piece */
    bool err;
} gather_t;

static void gather_piece(gather_t *g, const uint8_t *p, size_t n) {
    if (!n)
        return;
    g->w += n;
    /* Framing octets written back to back extend the previous piece. */
    if (g->n && g->end == p) {
        if (g->iov)
            g->iov[g->n - 1].len += n;
        g->end = p + n;
        return;
    }
    if (g->n == g->max) {
        g->err = true;
        return;
    }
    if (g->iov) {
        g->iov[g->n].base = (void *)(uintptr_t)p;
        g->iov[g->n].len = n;
    }
    g->n++;
    g->end = p + n;
}

static uint8_t *gather_frame(gather_t *g, size_t n) {
    if (g->fcap - g->fused < n) {
        g->err = true;
        return NULL;
    }
    uint8_t *p = g->frame + g->fused;
    g->fused += n;
    return p;
}

static void gather_markers_due(gather_t *g) {
    while (!g->err && g->markers && iw_mpa_marker_gap(g->pos + (uint32_t)g->w) == 0) {
        uint8_t *m = gather_frame(g, IW_MPA_MARKER_LEN);
        if (!m)
            return;
        /* §4.2: FPDUPTR points back to ULPDU_Length; 0 for a marker that
         * precedes the header (it then belongs to this FPDU). */
        uint16_t ptr = g->w < g->hdr_off ? 0 : (uint16_t)(g->w - g->hdr_off);
        if (g->iov) {
            iw_put_u16(m, 0);
            iw_put_u16(m + 2, ptr);
        }
        gather_piece(g, m, IW_MPA_MARKER_LEN);
    }
}

/* Append n logical octets from src (referenced) or, with copy, into frame. */
static void gather_bytes(gather_t *g, const uint8_t *src, size_t n, bool copy) {
    while (n && !g->err) {
        gather_markers_due(g);
        size_t run = g->markers ? iw_mpa_marker_gap(g->pos + (uint32_t)g->w) : n;
        if (run > n)
            run = n;
        const uint8_t *p = src;
        if (copy) {
            uint8_t *f = gather_frame(g, run);
            if (!f)
                return;
            if (g->iov && src)
                memcpy(f, src, run);
            else if (g->iov)
                memset(f, 0, run);
            p = f;
        }
        gather_piece(g, p, run);
        if (src)
            src += run;
        n -= run;
    }
}

/* The whole FPDU through the cursor: ULPDU_Length, ULPDU, PAD, CRC and the
 * markers among them. */
static void gather_fpdu(gather_t *g, unsigned flags, const uint8_t *hdr, size_t hdrlen,
                        const uint8_t *payload, size_t paylen) {
    size_t ulpdu_len = hdrlen + paylen;
    uint8_t len_be[IW_MPA_HDR_LEN];
    iw_put_u16(len_be, (uint16_t)ulpdu_len);
    gather_bytes(g, len_be, sizeof len_be, true);
    gather_bytes(g, hdr, hdrlen, false);
    gather_bytes(g, payload, paylen, false);
    gather_bytes(g, NULL, iw_mpa_pad_len(ulpdu_len), true); /* §4.1: PAD is zero */
    /* §4.4: a marker right after the PAD is covered by the CRC. */
    gather_markers_due(g);
    uint8_t crc[IW_MPA_CRC_LEN] = {0};
    if ((flags & IW_MPA_CRC) && g->iov && !g->err) {
        uint32_t st = IW_CRC32C_INIT;
        for (int i = 0; i < g->n; i++)
            st = iw_crc32c_update(st, g->iov[i].base, g->iov[i].len);
        iw_crc32c_put(crc, ~st);
    }
    gather_bytes(g, crc, sizeof crc, true);
}

int iw_mpa_fpdu_gather(iw_iovec *iov, int iovmax, uint8_t *frame, size_t framelen, uint32_t pos,
                       unsigned flags, const uint8_t *hdr, size_t hdrlen, const uint8_t *payload,
                       size_t paylen, size_t *wire_len) {
    bool markers = (flags & IW_MPA_MARKERS) != 0;
    size_t ulpdu_len = hdrlen + paylen;
    if (ulpdu_len < hdrlen || ulpdu_len > IW_MPA_ULPDU_MAX || (hdrlen && !hdr) ||
        (paylen && !payload) || iovmax < 0 || (iovmax && !iov))
        return IW_ERR_INVALID_ARG;
    /* With markers, FPDUs stay 4-aligned to the grid (§4.1, §4.3) and the
     * ULPDU within MULPDU's ceiling so every FPDUPTR fits 16 bits (§4.5). */
    if (markers && ((pos & 3) || ulpdu_len > IW_MPA_MULPDU_MAX))
        return IW_ERR_INVALID_ARG;

    /* A dry run first: iov and frame stay untouched unless both suffice. */
    gather_t g = {NULL,     0,    iovmax, frame,   0,
                  framelen, 0,    pos,    markers, markers_wire_off(pos, 0, markers),
                  NULL,     false};
    gather_fpdu(&g, flags, hdr, hdrlen, payload, paylen);
    if (g.err)
        return IW_ERR_NOBUF;
    int dry_n = g.n;
    g = (gather_t){iov,      0,    iovmax, frame,   0,
                   framelen, 0,    pos,    markers, markers_wire_off(pos, 0, markers),
                   NULL,     false};
    gather_fpdu(&g, flags, hdr, hdrlen, payload, paylen);
    /* Check the exact advance (ngtcp2 habit). */
    if (g.err || g.n != dry_n || g.w != iw_mpa_fpdu_wire_len(ulpdu_len, pos, markers))
        return IW_ERR_FATAL;
    *wire_len = g.w;
    return g.n;
}

iw_ssize iw_mpa_fpdu_encode(uint8_t *out, size_t outlen, uint32_t pos, unsigned flags,
                            const uint8_t *hdr, size_t hdrlen, const uint8_t *payload,
                            size_t paylen) {
    size_t ulpdu_len = hdrlen + paylen;
    if (ulpdu_len >= hdrlen && ulpdu_len <= IW_MPA_ULPDU_MAX &&
        outlen < iw_mpa_fpdu_wire_len(ulpdu_len, pos, (flags & IW_MPA_MARKERS) != 0))
        return IW_ERR_NOBUF;
    iw_iovec iov[IW_MPA_GATHER_IOV_MAX];
    uint8_t frame[IW_MPA_GATHER_FRAME_MAX];
    size_t total;
    int n = iw_mpa_fpdu_gather(iov, IW_MPA_GATHER_IOV_MAX, frame, sizeof frame, pos, flags, hdr,
                               hdrlen, payload, paylen, &total);
    if (n < 0)
        return n;
    size_t w = 0;
    for (int i = 0; i < n; i++) {
        memcpy(out + w, iov[i].base, iov[i].len);
        w += iov[i].len;
    }
    return (iw_ssize)total;
}

/* Check every marker inside the FPDU's wire span (§4.2, §8 code 3). */
static void fpdu_check_markers(iw_mpa_fpdu *f, const uint8_t *buf, uint32_t pos) {
    f->marker_ok = true;
    for (size_t w = iw_mpa_marker_gap(pos); w < f->wire_len; w += IW_MPA_MARKER_INTERVAL) {
        f->n_markers++;
        uint16_t res, raw;
        iw_mpa_marker_decode(buf + w, &res, &raw);
        if (res)
            f->notes |= IW_NOTE(MARKER_RES_NONZERO);
        /* §4.2: the receiver treats the two low bits of FPDUPTR as 0. */
        if (raw & 3)
            f->notes |= IW_NOTE(MARKER_PTR_LOW_BITS);
        uint16_t ptr = iw_mpa_marker_ptr(raw);
        size_t want = w < f->hdr_off ? 0 : w - f->hdr_off;
        if (ptr != want && f->marker_ok) {
            f->marker_ok = false;
            f->bad_marker_off = w;
            f->bad_marker_ptr = raw;
        }
    }
}

iw_ssize iw_mpa_fpdu_decode(iw_mpa_fpdu *f, const uint8_t *buf, size_t len, uint32_t pos,
                            unsigned flags, uint8_t *scratch, size_t scratchlen, iw_verdict *v) {
    bool markers = (flags & IW_MPA_MARKERS) != 0;
    memset(f, 0, sizeof *f);
    *v = iw_verdict_ok();
    size_t total = iw_mpa_fpdu_len(buf, len, pos, markers);
    if (total == 0 || len < total)
        return IW_ERR_NEED_MORE;

    uint8_t tmp[IW_MPA_CRC_LEN];
    markers_gather(buf, pos, markers, 0, IW_MPA_HDR_LEN, tmp);
    f->ulpdu_len = iw_get_u16(tmp);
    f->wire_len = total;
    f->hdr_off = markers_wire_off(pos, 0, markers);
    f->pad_len = iw_mpa_pad_len(f->ulpdu_len);
    f->marker_ok = true;

    /* ULPDU: zero-copy unless a marker falls inside it. */
    if (f->ulpdu_len) {
        size_t first = markers_wire_off(pos, IW_MPA_HDR_LEN, markers);
        size_t last = markers_wire_off(pos, IW_MPA_HDR_LEN + (size_t)f->ulpdu_len - 1, markers);
        if (last - first == (size_t)f->ulpdu_len - 1) {
            f->ulpdu = buf + first;
        } else {
            if (scratchlen < f->ulpdu_len)
                return IW_ERR_NOBUF;
            markers_gather(buf, pos, markers, IW_MPA_HDR_LEN, f->ulpdu_len, scratch);
            f->ulpdu = scratch;
        }
    }
    size_t pad_l = IW_MPA_HDR_LEN + (size_t)f->ulpdu_len;
    if (f->pad_len) {
        uint8_t pad[3];
        markers_gather(buf, pos, markers, pad_l, f->pad_len, pad);
        for (unsigned i = 0; i < f->pad_len; i++)
            if (pad[i])
                f->notes |= IW_NOTE(FPDU_PAD_NONZERO);
    }
    size_t crc_l = pad_l + f->pad_len;
    markers_gather(buf, pos, markers, crc_l, IW_MPA_CRC_LEN, tmp);
    f->crc_wire = iw_crc32c_get(tmp);
    /* §4.4: coverage runs from the FPDU's first wire octet (a leading
     * marker included) through the PAD and any marker before the CRC. */
    f->crc_calc = iw_crc32c(buf, markers_wire_off(pos, crc_l, markers));
    if (markers)
        fpdu_check_markers(f, buf, pos);

    if (flags & IW_MPA_CRC) {
        f->crc = f->crc_wire == f->crc_calc ? IW_CRC_GOOD : IW_CRC_BAD;
        if (f->crc == IW_CRC_BAD) {
            *v = iw_verdict_term(IW_TERM_LLP_MPA_CRC, "RFC 5044 §4.4, §8");
            return IW_ERR_PROTO;
        }
    }
    /* §8 code 3: judged only on an FPDU whose CRC holds (or is unused). */
    if (!f->marker_ok) {
        *v = iw_verdict_term(IW_TERM_LLP_MPA_MARKER, "RFC 5044 §4.2, §8");
        return IW_ERR_PROTO;
    }
    return (iw_ssize)total;
}
