/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Records to iw_shadow: see iwd_shadow.h. */
#include "iwd_shadow.h"

#include <string.h>

void iwd_sh_in_from_rec(iwd_sh_in *in, const iwd_rec *r, bool *framed) {
    const iw_frame *fr = r->fr;
    memset(in, 0, sizeof *in);
    switch (fr->type) {
    case IW_FRAME_MPA_REQUEST:
    case IW_FRAME_MPA_REPLY:
        if (!fr->rr_ok)
            return;
        in->kind = IWD_SH_MPA;
        in->u.rr = fr->rr;
        in->u.rr.pd = NULL;
        in->u.rr.ulp_pd = NULL;
        /* RFC 5044 §7.1.2: an accepted frame with no close verdict, other
         * than a rejecting Reply (rule 3: MPA exits), starts Full Operation. */
        if (fr->verdict.kind == IW_VERDICT_OK && !(fr->rr.type == IW_MPA_REPLY && fr->rr.r))
            *framed = true;
        return;
    case IW_FRAME_FPDU:
        in->kind = IWD_SH_FPDU;
        in->pre = r->verdict; /* the CRC/marker verdict, else iw_rdmap_decode's */
        in->ulpdu_len = fr->fpdu.ulpdu_len;
        in->has_m = r->msg && r->ddp_ok;
        if (in->has_m) {
            in->u.m = *r->msg;
            in->u.m.payload = NULL;
            if (in->u.m.opcode == IW_OP_TERMINATE)
                in->u.m.u.term.ddp_raw = NULL;
        }
        *framed = true;
        return;
    case IW_FRAME_LOST:
        /* A rejected startup: MPA exited, the shadow knows it from the Reply. */
        if (fr->lost_why != IW_CLOSE_MPA_REJECTED)
            iwd_sh_in_lost(in, *framed);
        return;
    default:
        return;
    }
}

void iwd_sh_in_lost(iwd_sh_in *in, bool framed) {
    memset(in, 0, sizeof *in);
    in->kind = framed ? IWD_SH_LOST : IWD_SH_NONE;
}

int iwd_sh_feed(iw_shadow *sh, unsigned dir, const iwd_sh_in *in, uint64_t id,
                iw_shadow_result *res) {
    switch (in->kind) {
    case IWD_SH_MPA: {
        int rc = iw_shadow_mpa(sh, dir, &in->u.rr, id, res);
        res->judged = true; /* `judged` speaks of FPDUs (shadow.h) */
        return rc;
    }
    case IWD_SH_FPDU:
        return iw_shadow_fpdu(sh, dir, in->has_m ? &in->u.m : NULL, in->ulpdu_len, &in->pre, id,
                              res);
    case IWD_SH_LOST:
        return iw_shadow_lost(sh, dir);
    default:
        return 0;
    }
}

iw_verdict iwd_sh_verdict(const iw_verdict *stateless, const iw_shadow_result *res) {
    if (stateless->kind != IW_VERDICT_OK || !res)
        return *stateless;
    return res->verdict;
}

bool iwd_sh_says(const iw_shadow_result *res) {
    return res && (res->verdict.kind != IW_VERDICT_OK || res->notes || res->has_ref || res->rtr ||
                   !res->judged);
}
