/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Mid-stream FPDU synchronisation: see <iwarp/mpa_sync.h>. */
#include <iwarp/mpa_sync.h>

#include <iwarp/ddp.h>
#include <iwarp/rdmap.h>
#include <stdint.h>

#include <string.h>

#define CHAIN_MAX 8      /* FPDUs followed per reading */
#define CHAIN_SPAN 2048  /* ... or octets, once WEAK_MIN FPDUs are in */
#define WEAK_MIN 4       /* FPDUs in a row for a reading without CRC */
#define WEAK_EXACT_MIN 2 /* ... or this many, ending exactly at the end of the data */
#define GRID IW_MPA_MARKER_INTERVAL

typedef enum { CH_BROKEN = 0, CH_SHORT, CH_LIMIT } ch_end;

typedef struct chain {
    unsigned n;     /* FPDUs in a row that pass */
    size_t span;    /* their wire octets */
    unsigned marks; /* markers inside them */
    unsigned crcs;  /* of the first WEAK_MIN, those whose CRC verifies */
    unsigned crcnz; /* ... and those whose CRC field is not zero */
    ch_end end;     /* why the chain stopped */
    bool exact;     /* CH_SHORT exactly at the end of the data */
} chain;

typedef struct reading {
    bool m;
    uint32_t pos;
    bool fixed;   /* the only reading the configuration allows: nothing to rule out */
    bool pending; /* the first FPDU's header is not all here yet */
    bool dead;    /* the first FPDU cannot be DDP/RDMAP version 1 */
    bool crc_off; /* CRCs are known to be off: their fields prove nothing */
    chain s, w;   /* strong (CRC) and weak (DDP/RDMAP sanity) chains */
} reading;

typedef enum { ST_FAIL = 0, ST_UNDECIDED, ST_DECISIVE, ST_MARKERLESS } st;

/* The k-th octet from c that is not part of a marker, or -1 past len. */
static int data_octet(const uint8_t *b, size_t len, size_t c, bool m, uint32_t pos, size_t k) {
    size_t i = c;
    uint32_t p = pos;
    for (;;) {
        if (m && (p & (GRID - 1)) == 0) {
            i += IW_MPA_MARKER_LEN;
            p += IW_MPA_MARKER_LEN;
        }
        if (i >= len)
            return -1;
        if (k == 0)
            return b[i];
        k--;
        i++;
        p++;
    }
}

static void walk(const uint8_t *b, size_t len, size_t c, reading *r, uint8_t *scratch) {
    bool s_alive = true, w_alive = true;
    size_t x = c;
    uint32_t px = r->pos;
    unsigned flags = (r->m ? IW_MPA_MARKERS : 0) | IW_MPA_CRC;
    memset(&r->s, 0, sizeof r->s);
    memset(&r->w, 0, sizeof r->w);
    for (unsigned k = 0; s_alive || w_alive; k++) {
        /* The span limit never cuts a chain short of what the weak rule
         * needs: four FPDUs of 700 octets must be able to count. */
        if (k >= CHAIN_MAX || (x - c >= CHAIN_SPAN && k >= WEAK_MIN)) {
            if (s_alive)
                r->s.end = CH_LIMIT;
            if (w_alive)
                r->w.end = CH_LIMIT;
            return;
        }
        size_t total = iw_mpa_fpdu_len(b + x, len - x, px, r->m);
        if (total == 0 || total > len - x) {
            if (s_alive) {
                r->s.end = CH_SHORT;
                r->s.exact = x == len;
            }
            if (w_alive) {
                r->w.end = CH_SHORT;
                r->w.exact = x == len;
            }
            return;
        }
        iw_mpa_fpdu f;
        iw_verdict v;
        iw_ssize rc =
            iw_mpa_fpdu_decode(&f, b + x, total, px, flags, scratch, IW_MPA_SYNC_SCRATCH, &v);
        bool decoded = (rc >= 0 || rc == IW_ERR_PROTO) && f.ulpdu;
        /* As evidence of the grid, a marker must also be as every sender
         * MUST write it (RESERVED 0, FPDUPTR 4-aligned, RFC 5044 §4.2),
         * though a receiver decodes it regardless. */
        bool mk =
            !r->m || (f.marker_ok &&
                      !(f.notes & (IW_NOTE(MARKER_PTR_LOW_BITS) | IW_NOTE(MARKER_RES_NONZERO))));
        bool ver1 = decoded && f.ulpdu_len >= 2 &&
                    (f.ulpdu[0] & IW_DDP_CTRL_DV) == IW_DDP_VERSION &&
                    (f.ulpdu[1] >> 6) == IW_RDMAP_VERSION;
        bool strong = decoded && mk && ver1 && f.crc == IW_CRC_GOOD;
        bool sane = false;
        if (w_alive && decoded && mk && f.ulpdu_len > 0) {
            iw_rdmap_msg msg;
            iw_verdict mv;
            sane = iw_rdmap_decode(&msg, f.ulpdu, f.ulpdu_len, &mv) >= 0;
        }
        if (s_alive) {
            if (strong) {
                r->s.n++;
                r->s.span += total;
                r->s.marks += f.n_markers;
            } else {
                r->s.end = CH_BROKEN;
                s_alive = false;
            }
        }
        if (w_alive) {
            if (sane) {
                if (k < WEAK_MIN) {
                    r->w.crcs += f.crc == IW_CRC_GOOD;
                    r->w.crcnz += f.crc_wire != 0;
                }
                r->w.n++;
                r->w.span += total;
                r->w.marks += f.n_markers;
            } else {
                r->w.end = CH_BROKEN;
                w_alive = false;
            }
        }
        x += total;
        px += (uint32_t)total;
    }
}

/* A reading without CRCs, where no CRC verified, can still be a stream
 * with CRCs whose first FPDUs were damaged (unless CRCs are known to be
 * off). What tells them apart is what senders without CRCs write in the
 * field: any value is allowed (RFC 5044 §4.1), but it is zero in practice,
 * and a damaged FPDU's is zero about once in 2^32. With a field that is
 * not zero, the reading must hold as far as a chain is followed
 * (CH_LIMIT) instead. */
static bool weak_unrefuted(const chain *ch, bool crc_off) {
    return crc_off || (!ch->crcs && (!ch->crcnz || ch->end == CH_LIMIT));
}

static st judge(const reading *r, const chain *ch, bool weak, bool final) {
    if (r->dead)
        return ST_FAIL;
    if (r->pending)
        return final ? ST_FAIL : ST_UNDECIDED;
    bool more = ch->end == CH_SHORT && !final; /* the chain may still grow */
    if (weak && ch->crcs && !r->crc_off)
        return ST_FAIL; /* a CRC verified: the reading without CRCs is refuted */
    if (ch->n == 0)
        return more ? ST_UNDECIDED : ST_FAIL;
    bool enough =
        !weak || ((ch->n >= WEAK_MIN || (final && ch->exact && ch->n >= WEAK_EXACT_MIN)) &&
                  weak_unrefuted(ch, r->crc_off));
    if (r->fixed) {
        /* A marker reading no marker confirmed yet: a broken chain speaks
         * against the grid position rather than for it. */
        bool ok = !r->m || ch->marks || ch->end != CH_BROKEN;
        return enough && ok ? ST_DECISIVE : more ? ST_UNDECIDED : ST_FAIL;
    }
    if (r->m) {
        if (ch->marks && enough)
            return ST_DECISIVE;
        if (more)
            return ST_UNDECIDED;
        /* No marker yet: only a chain that nothing contradicted. */
        return enough && ch->end != CH_BROKEN ? ST_MARKERLESS : ST_FAIL;
    }
    if (enough && (ch->span >= GRID || !more))
        return ST_DECISIVE;
    return more ? ST_UNDECIDED : ST_FAIL;
}

/* One pass (strong or weak) over the readings. */
static iw_mpa_sync_status decide(const reading *r, int n, bool weak, bool final, int *pick) {
    int best = -1, markerless = -1, off = -1;
    bool undecided = false;
    for (int i = 0; i < n; i++) {
        const chain *ch = weak ? &r[i].w : &r[i].s;
        st s = judge(&r[i], ch, weak, final);
        if (s == ST_UNDECIDED)
            undecided = true;
        if (s == ST_DECISIVE && r[i].m) {
            const chain *bc = best < 0 ? NULL : (weak ? &r[best].w : &r[best].s);
            if (!bc || ch->n > bc->n)
                best = i;
        }
        if (s == ST_DECISIVE && !r[i].m)
            off = i;
        if (s == ST_MARKERLESS && markerless < 0)
            markerless = i;
    }
    if (best >= 0) {
        *pick = best; /* a marker reading that holds: decisive */
        return IW_MPA_SYNC_FOUND;
    }
    if (undecided)
        return IW_MPA_SYNC_MORE;
    if (off >= 0) {
        *pick = off;
        return IW_MPA_SYNC_FOUND;
    }
    /* Markers forced on and no marker seen yet: any phase fits so far. */
    if (markerless >= 0 && final) {
        *pick = markerless;
        return IW_MPA_SYNC_FOUND;
    }
    return IW_MPA_SYNC_NONE;
}

static iw_mpa_sync_status probe_at(const uint8_t *b, size_t len, bool final, size_t c,
                                   const iw_mpa_sync_cfg *cfg, uint8_t *scratch,
                                   iw_mpa_sync_res *res) {
    reading r[1 + GRID / 4];
    int n = 0;
    memset(r, 0, sizeof r);
    if (cfg->markers != IW_DF_ON) {
        r[n].m = false;
        r[n].fixed = cfg->markers == IW_DF_OFF; /* no grid to rule out */
        r[n++].pos = cfg->have_pos ? cfg->pos0 + (uint32_t)c : 0;
    }
    if (cfg->markers != IW_DF_OFF) {
        if (cfg->have_pos) {
            uint32_t p = cfg->pos0 + (uint32_t)c;
            if ((p & 3) == 0) {
                /* Markers on at a known grid: every marker position is
                 * known, so a chain that crossed none is no less certain. */
                r[n].m = true;
                r[n].fixed = cfg->markers == IW_DF_ON;
                r[n++].pos = p;
            }
        } else {
            for (uint32_t p = 0; p < GRID; p += 4) {
                r[n].m = true;
                r[n++].pos = p;
            }
        }
    }
    for (int i = 0; i < n; i++) {
        r[i].crc_off = cfg->crc == IW_DF_OFF;
        /* Cheap filter: DDP Control and RDMAP Control follow ULPDU_Length
         * and must carry version 1 in any FPDU we synchronise on. */
        int ddp = data_octet(b, len, c, r[i].m, r[i].pos, 2);
        int rdmap = data_octet(b, len, c, r[i].m, r[i].pos, 3);
        if (ddp < 0 || rdmap < 0) {
            r[i].pending = true;
            continue;
        }
        if ((ddp & IW_DDP_CTRL_DV) != IW_DDP_VERSION || (rdmap >> 6) != IW_RDMAP_VERSION) {
            r[i].dead = true;
            continue;
        }
        walk(b, len, c, &r[i], scratch);
    }
    int pick = -1;
    bool weak = false;
    iw_mpa_sync_status s = decide(r, n, false, final, &pick);
    if (s == IW_MPA_SYNC_NONE && cfg->crc != IW_DF_ON) {
        weak = true;
        s = decide(r, n, true, final, &pick);
    }
    if (s == IW_MPA_SYNC_FOUND) {
        res->off = c;
        res->markers = r[pick].m;
        res->pos = r[pick].pos;
        res->crc = !weak;
        res->fpdus = weak ? r[pick].w.n : r[pick].s.n;
    }
    return s;
}

/* ---- Marker-pointed candidates (RFC 5044 §4.3, §5) ----
 *
 * A sender need not start TCP segments at FPDUs (receivers MUST NOT depend
 * on it, §5.1 and Appendix A.4), so segment starts may hold none. With
 * markers the stream itself says where FPDUs start: a marker at a grid
 * position points (FPDUPTR) back to the ULPDU_Length of the FPDU it lies
 * in. Every octet of buf is a grid position under exactly one phase, so
 * each octet is read as a marker once; a marker whose RESERVED is 0 and
 * whose FPDUPTR has its low bits 0 (both MUST on send, §4.2) names a
 * candidate whose grid position is then known. Such a candidate holds on
 * evidence that a random 4-octet match cannot give:
 *
 *   strong: its first FPDU's CRC verifies, DDP and RDMAP are version 1,
 *           and the FPDU chain (every marker in it pointing right)
 *           contains the marker that named it: about 2^-54 per octet.
 *   marker: (no CRC; not with crc ON) the chain of FPDUs that decode as
 *           DDP/RDMAP holds the naming marker and at least one more, all
 *           pointing right. The second marker is fixed to 32 bits by the
 *           first (RESERVED 0 and an FPDUPTR the chain dictates), the first
 *           gives 18 more and the header checks some 8: about 2^-58 per
 *           octet, as strong as a CRC reading.
 *
 * Both need the naming FPDU complete, so more octets cannot overturn them:
 * they are decisive for live callers too, and a marker-pointed FPDU is
 * taken even while an earlier segment start is still undecided. */

#define MCAND_BATCH 256 /* marker-pointed candidates judged per scan of buf */

typedef struct mcand {
    size_t c;     /* FPDU start (its leading marker, if any) */
    uint32_t pos; /* grid position of c */
    size_t g;     /* the marker that named it */
} mcand;

/* The FPDU start a marker at g (a grid position) names, if it is one. */
static bool marker_names(const uint8_t *b, size_t len, size_t g, size_t *c) {
    if (len - g < IW_MPA_MARKER_LEN)
        return false;
    uint16_t rsvd, ptr;
    iw_mpa_marker_decode(b + g, &rsvd, &ptr);
    if (rsvd != 0 || (ptr & 3u) != 0)
        return false;
    if (ptr > g)
        return false; /* its FPDU starts before buf */
    /* FPDUPTR 0: the marker falls between FPDUs and leads the next (§4.3).
     * A header right after a grid position has the marker there as its
     * first octets (a grid position is always a marker, and one inside the
     * previous FPDU would be followed by that FPDU's CRC, not a header). */
    if (ptr == 0)
        *c = g;
    else if ((ptr + IW_MPA_MARKER_LEN) % GRID == 0)
        *c = g - ptr - IW_MPA_MARKER_LEN;
    else
        *c = g - ptr;
    return true;
}

/* Keep the MCAND_BATCH candidates with the lowest c above `after` (sorted,
 * no duplicates). Returns how many are kept; *more when some were left. */
static size_t marker_scan(const uint8_t *b, size_t len, const iw_mpa_sync_cfg *cfg, size_t after,
                          bool any, mcand *out, bool *more) {
    size_t n = 0;
    *more = false;
    for (size_t g = 0; g + IW_MPA_MARKER_LEN <= len; g++) {
        if (cfg->have_pos && ((cfg->pos0 + (uint32_t)g) & (GRID - 1)) != 0)
            continue;
        size_t c;
        if (!marker_names(b, len, g, &c) || (any && c <= after))
            continue;
        uint32_t pos = (uint32_t)(0u - (uint32_t)(g - c)) & (GRID - 1); /* g is on the grid */
        if (cfg->have_pos)
            pos = cfg->pos0 + (uint32_t)c;
        /* Cheap filter: DDP and RDMAP version 1 (as in probe_at). */
        int ddp = data_octet(b, len, c, true, pos, 2);
        int rdmap = data_octet(b, len, c, true, pos, 3);
        if (ddp < 0 || rdmap < 0 || (ddp & IW_DDP_CTRL_DV) != IW_DDP_VERSION ||
            (rdmap >> 6) != IW_RDMAP_VERSION)
            continue;
        size_t i = n;
        while (i > 0 && out[i - 1].c > c)
            i--;
        if (i > 0 && out[i - 1].c == c)
            continue; /* another marker of the same FPDU */
        if (i == MCAND_BATCH) {
            *more = true;
            continue;
        }
        if (n == MCAND_BATCH) {
            n--;
            *more = true;
        }
        memmove(out + i + 1, out + i, (n - i) * sizeof *out);
        out[i] = (mcand){c, pos, g};
        n++;
    }
    return n;
}

/* Does the marker-pointed candidate hold (see above)? */
static bool marker_holds(const uint8_t *b, size_t len, const mcand *k, const iw_mpa_sync_cfg *cfg,
                         uint8_t *scratch, iw_mpa_sync_res *res) {
    reading r;
    memset(&r, 0, sizeof r);
    r.m = true;
    r.pos = k->pos;
    walk(b, len, k->c, &r, scratch);
    size_t need = k->g - k->c; /* the chain must reach past the naming marker */
    bool strong = r.s.n >= 1 && r.s.span > need;
    bool marked = cfg->crc != IW_DF_ON && r.w.n >= 1 && r.w.span > need && r.w.marks >= 2 &&
                  weak_unrefuted(&r.w, cfg->crc == IW_DF_OFF);
    if (!strong && !marked)
        return false;
    res->off = k->c;
    res->markers = true;
    res->pos = k->pos;
    res->crc = strong;
    res->fpdus = strong ? r.s.n : r.w.n;
    return true;
}

/* Does the chain of FPDUs from a (grid position pos, markers on) land
 * exactly on target, every FPDU whole, its markers right and its ULPDU a
 * DDP/RDMAP version 1 message, and with crc every CRC good? An earlier
 * start that lands on a boundary the markers proved is on the same chain:
 * its lengths had to add up to the octet. With CRCs on, an FPDU whose CRC
 * fails proves nothing (RFC 5044 §6): the answer must not begin with one. */
static bool chains_to(const uint8_t *b, size_t len, size_t a, uint32_t pos, size_t target, bool crc,
                      uint8_t *scratch) {
    size_t x = a;
    uint32_t px = pos;
    while (x < target) {
        size_t total = iw_mpa_fpdu_len(b + x, len - x, px, true);
        if (total == 0 || total > len - x || total > target - x)
            return false;
        iw_mpa_fpdu f;
        iw_verdict v;
        iw_ssize rc = iw_mpa_fpdu_decode(&f, b + x, total, px, IW_MPA_MARKERS | IW_MPA_CRC, scratch,
                                         IW_MPA_SYNC_SCRATCH, &v);
        if (!((rc >= 0 || rc == IW_ERR_PROTO) && f.ulpdu && f.marker_ok && f.ulpdu_len >= 2) ||
            (crc && f.crc != IW_CRC_GOOD))
            return false;
        iw_rdmap_msg msg;
        iw_verdict mv;
        if ((f.ulpdu[0] & IW_DDP_CTRL_DV) != IW_DDP_VERSION ||
            (f.ulpdu[1] >> 6) != IW_RDMAP_VERSION ||
            iw_rdmap_decode(&msg, f.ulpdu, f.ulpdu_len, &mv) < 0)
            return false;
        x += total;
        px += (uint32_t)total;
    }
    return x == target;
}

/* The earliest candidate before m->off (caller's from *first, then the
 * marker-pointed ones judged before it) that chains onto it. */
static void extend_back(const uint8_t *b, size_t len, const uint64_t *cands, size_t ncands,
                        size_t first, const mcand *k, size_t nk, uint8_t *scratch,
                        iw_mpa_sync_res *m) {
    size_t target = (size_t)m->off, best = target;
    for (size_t i = first; i < ncands && cands[i] < best; i++) {
        uint32_t pos = m->pos - (uint32_t)(target - (size_t)cands[i]);
        if ((pos & 3u) == 0 && chains_to(b, len, (size_t)cands[i], pos, target, m->crc, scratch))
            best = (size_t)cands[i];
    }
    for (size_t i = 0; i < nk && k[i].c < best; i++) {
        uint32_t pos = m->pos - (uint32_t)(target - k[i].c);
        if (chains_to(b, len, k[i].c, pos, target, m->crc, scratch))
            best = k[i].c;
    }
    if (best != target) {
        m->pos -= (uint32_t)(target - best);
        m->off = best;
    }
}

/* The earliest marker-pointed candidate before `limit` that holds, moved
 * back to the earliest caller candidate or earlier marker-pointed one
 * that chains onto it. */
static bool marker_probe(const uint8_t *b, size_t len, const iw_mpa_sync_cfg *cfg, size_t limit,
                         const uint64_t *cands, size_t ncands, size_t first, uint8_t *scratch,
                         iw_mpa_sync_res *res) {
    mcand k[MCAND_BATCH];
    size_t after = 0;
    bool any = false, more = true;
    while (more) {
        size_t n = marker_scan(b, len, cfg, after, any, k, &more);
        for (size_t i = 0; i < n; i++) {
            if (k[i].c >= limit)
                return false;
            if (marker_holds(b, len, &k[i], cfg, scratch, res)) {
                extend_back(b, len, cands, ncands, first, k, i, scratch, res);
                return true;
            }
        }
        if (n == 0)
            break;
        after = k[n - 1].c;
        any = true;
    }
    return false;
}

iw_mpa_sync_status iw_mpa_sync_probe(const uint8_t *buf, size_t len, bool final,
                                     const uint64_t *cands, size_t ncands, size_t *first,
                                     const iw_mpa_sync_cfg *cfg, uint8_t *scratch,
                                     iw_mpa_sync_res *res) {
    memset(res, 0, sizeof *res);
    iw_mpa_sync_status ans = final ? IW_MPA_SYNC_NONE : IW_MPA_SYNC_MORE;
    size_t limit = len; /* marker-pointed candidates must come before this */
    for (size_t i = *first; i < ncands; i++) {
        if (cands[i] >= len) {
            if (final)
                continue;
            ans = IW_MPA_SYNC_MORE;
            break;
        }
        iw_mpa_sync_status s = probe_at(buf, len, final, (size_t)cands[i], cfg, scratch, res);
        if (s == IW_MPA_SYNC_FOUND) {
            ans = s;
            limit = (size_t)res->off;
            break;
        }
        if (s == IW_MPA_SYNC_MORE) {
            ans = s; /* a marker-pointed FPDU may still decide */
            break;
        }
        /* Rejected for good: dead readings stay dead with more octets. */
        if (*first == i)
            *first = i + 1;
    }
    if (cfg->markers == IW_DF_OFF || !buf)
        return ans;
    iw_mpa_sync_res m;
    memset(&m, 0, sizeof m);
    if (marker_probe(buf, len, cfg, limit, cands, ncands, *first, scratch, &m)) {
        *res = m;
        return IW_MPA_SYNC_FOUND;
    }
    if (ans != IW_MPA_SYNC_FOUND)
        memset(res, 0, sizeof *res);
    return ans;
}

size_t iw_mpa_sync_boundary(const uint8_t *buf, size_t len, const iw_mpa_sync_res *res,
                            size_t target, uint32_t *pos) {
    if (!buf || !res || res->off > len)
        return SIZE_MAX;
    size_t x = (size_t)res->off;
    uint32_t px = res->pos;
    while (x < target) {
        size_t total = x < len ? iw_mpa_fpdu_len(buf + x, len - x, px, res->markers) : 0;
        if (total == 0)
            return SIZE_MAX;
        x += total;
        px += (uint32_t)total;
    }
    if (pos)
        *pos = px;
    return x;
}
