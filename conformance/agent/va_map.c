/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RNIC profiles, MPA field verdicts and verbs names for iwarp-agent. */
#include "va_map.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

/* ---- profiles ---- */

/* One integer module parameter, or -1 when it cannot be read. */
static int read_param(const char *root, const char *module, const char *param) {
    char path[512];
    snprintf(path, sizeof path, "%s/module/%s/parameters/%s", root, module, param);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char buf[32] = {0};
    int v = -1;
    if (fgets(buf, sizeof buf, f)) {
        char *e;
        long l = strtol(buf, &e, 10);
        if (e != buf && l >= 0 && l < 65536)
            v = (int)l;
        else if (buf[0] == 'Y')
            v = 1;
        else if (buf[0] == 'N')
            v = 0;
    }
    fclose(f);
    return v;
}

static bool name_is(const char *dev, const char *prefix) {
    return dev && !strncmp(dev, prefix, strlen(prefix));
}

void va_profile_detect(va_profile *p, const char *dev, uint32_t vendor_id, const char *root) {
    memset(p, 0, sizeof *p);
    p->crc = VA_CRC_UNKNOWN;
    p->markers = -1;
    p->p2p = -1;
    if (!dev) {
        p->driver = VA_DRV_NONE;
        p->name = "none";
        snprintf(p->source, sizeof p->source, "no RDMA device");
        return;
    }
    if (vendor_id == 0x626d74 || name_is(dev, "siw")) {
        /* drivers/infiniband/sw/siw (Linux 5.3 .. 6.x): mpa_version = 2,
         * peer_to_peer = false and mpa_crc_required = false are compiled
         * in; siw_proc_mpareq() rejects an M=1 Request; a responder uses
         * CRC exactly when the initiator asked (RFC 5044: it must). */
        p->driver = VA_DRV_SIW;
        p->name = "siw";
        snprintf(p->source, sizeof p->source, "siw driver source (compiled-in settings)");
        p->rev = 2;
        p->resp_revs = (1 << 1) | (1 << 2);
        p->markers = 0;
        p->rejects_markers = true;
        p->crc = VA_CRC_PEER;
        p->p2p = 0;
        p->pd_max = VA_RDMA_MAX_PRIVATE_DATA - 4;
        /* Seen (docs/siw.md): a Send with Invalidate that siw placed and
         * whose STag it invalidated completes without IBV_WC_WITH_INV. */
        p->inv_unseen = true;
        /* Seen: ibv_post_send(IBV_WR_LOCAL_INV) returns -EINVAL. */
        p->no_local_inv = true;
        return;
    }
    if (vendor_id == 0x1425 || name_is(dev, "cxgb4")) {
        /* iw_cxgb4 reads its MPA settings from module parameters. */
        p->driver = VA_DRV_CXGB4;
        p->name = "cxgb4";
        int rev = read_param(root, "iw_cxgb4", "mpa_rev");
        int mk = read_param(root, "iw_cxgb4", "markers_enabled");
        int crc = read_param(root, "iw_cxgb4", "crc_enabled");
        int p2p = read_param(root, "iw_cxgb4", "peer2peer");
        int type = read_param(root, "iw_cxgb4", "p2p_type");
        bool all = rev >= 0 && mk >= 0 && crc >= 0 && p2p >= 0 && type >= 0;
        snprintf(p->source, sizeof p->source, "iw_cxgb4 module parameters%s",
                 all ? "" : " (some unreadable: unknown)");
        p->rev = rev == 1 || rev == 2 ? rev : 0;
        p->resp_revs = p->rev == 2 ? (1 << 1) | (1 << 2) : p->rev == 1 ? (1 << 1) : 0;
        p->markers = mk;
        p->crc = crc < 0 ? VA_CRC_UNKNOWN : crc ? VA_CRC_ON : VA_CRC_PEER;
        p->p2p = p2p;
        /* FW_RI_INIT_P2PTYPE_RDMA_WRITE = 0, FW_RI_INIT_P2PTYPE_READ_REQ = 1 */
        p->rtr = p2p == 1 && type >= 0 ? (type == 1 ? VA_RTR_READ : VA_RTR_WRITE) : 0;
        p->pd_max = VA_RDMA_MAX_PRIVATE_DATA - 4;
        return;
    }
    if (name_is(dev, "irdma") || name_is(dev, "i40iw")) {
        /* irdma/i40iw cm: IRDMA_CM_DEFAULT_MPA_VER 2, every Request and
         * Reply carries C=1, never M=1. Its RTR choice is firmware's. */
        p->driver = VA_DRV_IRDMA;
        p->name = "irdma";
        snprintf(p->source, sizeof p->source, "irdma driver source (fixed MPA frame flags)");
        p->rev = 2;
        p->markers = 0;
        p->crc = VA_CRC_ON;
        p->pd_max = VA_RDMA_MAX_PRIVATE_DATA - 4;
        return;
    }
    if (vendor_id == 0x1077 || name_is(dev, "qedr")) {
        p->driver = VA_DRV_QEDR;
        p->name = "qedr";
        snprintf(p->source, sizeof p->source, "qedr: MPA settings are firmware's (unknown)");
        return;
    }
    if (name_is(dev, "erdma")) {
        /* erdma speaks a private MPA revision (129) to erdma peers only. */
        p->driver = VA_DRV_ERDMA;
        p->name = "erdma";
        snprintf(p->source, sizeof p->source, "erdma: private MPA revision, not RFC 5044");
        p->markers = 0;
        p->rejects_markers = true;
        return;
    }
    p->driver = VA_DRV_OTHER;
    p->name = "unknown";
    snprintf(p->source, sizeof p->source, "unknown driver: MPA behaviour not known to the agent");
}

/* ---- verdicts ---- */

static va_field *vf_add(va_verdict *v, const char *name, va_class c, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static va_field *vf_add(va_verdict *v, const char *name, va_class c, const char *fmt, ...) {
    if (v->n >= sizeof v->f / sizeof *v->f)
        return NULL;
    va_field *f = &v->f[v->n++];
    f->name = name;
    f->cls = c;
    f->note[0] = 0;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->note, sizeof f->note, fmt, ap);
        va_end(ap);
    }
    return f;
}

static const char *rtr_name(int rtr) {
    return rtr & VA_RTR_WRITE  ? "write"
           : rtr & VA_RTR_READ ? "read"
           : rtr & VA_RTR_SEND ? "send"
                               : "?";
}

/* A knob the driver decides. have: the driver's fixed value (-1 unknown). */
static void knob(va_verdict *v, const va_profile *p, const char *field, int want, int have,
                 const char *why_fixed) {
    if (have < 0)
        vf_add(v, field, VA_IGNORED, "not settable through verbs; %s", p->source);
    else if (want == have)
        vf_add(v, field, VA_MATCHED, "not settable through verbs; %s", why_fixed);
    else
        vf_add(v, field, VA_IGNORED, "not settable through verbs; %s", why_fixed);
}

int va_mpa_classify(const va_profile *p, const iw_agent_mpa *m, bool passive, unsigned max_ird,
                    unsigned max_ord, va_verdict *v) {
    memset(v, 0, sizeof *v);
    /* IRD/ORD: rdma_conn_param.responder_resources / initiator_depth. */
    unsigned def_ird = max_ird < VA_DEFAULT_IRD_ORD ? max_ird : VA_DEFAULT_IRD_ORD;
    unsigned def_ord = max_ord < VA_DEFAULT_IRD_ORD ? max_ord : VA_DEFAULT_IRD_ORD;
    v->ird = (int)def_ird;
    v->ord = (int)def_ord;
    if (m->ird >= 0) {
        if ((unsigned)m->ird > max_ird) {
            v->ird = (int)max_ird;
            vf_add(v, "ird", VA_IGNORED,
                   "%d exceeds the device's max_qp_rd_atom %u; %u is used instead", m->ird, max_ird,
                   max_ird);
        } else {
            v->ird = m->ird;
            vf_add(v, "ird", VA_APPLIED, "rdma_conn_param.responder_resources = %d", m->ird);
        }
    }
    if (m->ord >= 0) {
        if ((unsigned)m->ord > max_ord) {
            v->ord = (int)max_ord;
            vf_add(v, "ord", VA_IGNORED,
                   "%d exceeds the device's max_qp_init_rd_atom %u; %u is used instead", m->ord,
                   max_ord, max_ord);
        } else {
            v->ord = m->ord;
            vf_add(v, "ord", VA_APPLIED, "rdma_conn_param.initiator_depth = %d", m->ord);
        }
    }
    if (m->private_data) {
        if (m->private_data_len > VA_PRIVATE_DATA_MAX) {
            snprintf(v->err, sizeof v->err,
                     "private data of %zu octets: librdmacm carries at most %d "
                     "(rdma_conn_param.private_data_len is 8 bits)",
                     m->private_data_len, VA_PRIVATE_DATA_MAX);
            return -1;
        }
        if (p->pd_max && m->private_data_len > (size_t)p->pd_max)
            vf_add(v, "private_data_hex", VA_APPLIED,
                   "rdma_conn_param.private_data; %s refuses more than %d octets in an "
                   "enhanced (rev 2) MPA frame, so the %s may fail",
                   p->name, p->pd_max, passive ? "accept" : "connect");
        else
            vf_add(v, "private_data_hex", VA_APPLIED, "rdma_conn_param.private_data");
    }
    if (m->reject) {
        if (passive)
            vf_add(v, "reject", VA_APPLIED, "rdma_reject() answers the Request with R=1");
        else
            vf_add(v, "reject", VA_IGNORED, "reject only applies to listen");
    }

    /* What only the driver decides. A responder follows the initiator for
     * revision, CRC and p2p, whatever the runner asked. */
    if (m->rev >= 0) {
        if (passive) {
            bool ok = p->resp_revs & (1 << m->rev);
            vf_add(v, "rev", VA_IGNORED,
                   "not settable through verbs; a responder answers with the initiator's "
                   "revision%s",
                   p->resp_revs ? (ok ? " (this driver answers rev 1 and 2)"
                                      : " (this driver does not answer this revision)")
                                : "");
        } else {
            char why[128];
            snprintf(why, sizeof why, "%s initiates with MPA rev %d", p->name, p->rev);
            knob(v, p, "rev", m->rev, p->rev ? p->rev : -1, why);
        }
    }
    if (m->markers >= 0) {
        char why[160];
        if (p->driver == VA_DRV_CXGB4)
            snprintf(why, sizeof why, "iw_cxgb4.markers_enabled=%d decides", p->markers);
        else
            snprintf(why, sizeof why, "%s never uses markers%s", p->name,
                     p->rejects_markers ? "; it rejects an MPA Request with M=1" : "");
        if (passive && m->markers == 0 && p->rejects_markers)
            vf_add(v, "markers", VA_MATCHED, "not settable through verbs; %s", why);
        else if (passive)
            vf_add(v, "markers", VA_IGNORED,
                   "not settable through verbs; a responder follows the initiator's M; %s", why);
        else
            knob(v, p, "markers", m->markers, p->markers, why);
    }
    if (m->crc >= 0) {
        const char *how = p->crc == VA_CRC_PEER ? "uses CRC exactly when the peer asks for it"
                          : p->crc == VA_CRC_ON ? "always asks for CRC"
                                                : "";
        char why[160];
        if (p->driver == VA_DRV_CXGB4)
            snprintf(why, sizeof why, "iw_cxgb4.crc_enabled decides: %s", how);
        else
            snprintf(why, sizeof why, "%s %s", p->name, how);
        if (p->crc == VA_CRC_UNKNOWN)
            knob(v, p, "crc", m->crc, -1, why);
        else if (p->crc == VA_CRC_ON)
            knob(v, p, "crc", m->crc, 1, why);
        else if (passive)
            vf_add(v, "crc", VA_IGNORED, "not settable through verbs; %s", why);
        else /* initiates with C=0 */
            knob(v, p, "crc", m->crc, 0, why);
    }
    if (m->p2p >= 0) {
        char why[160];
        if (p->driver == VA_DRV_CXGB4)
            snprintf(why, sizeof why, "iw_cxgb4.peer2peer=%d decides", p->p2p);
        else
            snprintf(why, sizeof why, "%s %s peer-to-peer mode", p->name,
                     p->p2p == 1 ? "always requests" : "never requests");
        if (passive)
            vf_add(v, "p2p", VA_IGNORED,
                   "not settable through verbs; a responder follows the initiator's P");
        else
            knob(v, p, "p2p", m->p2p, p->p2p, why);
    }
    if (m->rtr >= 0) {
        char why[160];
        if (p->rtr)
            snprintf(why, sizeof why, "%s proposes a zero-length %s", p->name, rtr_name(p->rtr));
        else
            snprintf(why, sizeof why, "%s: RTR message not known", p->name);
        if (passive)
            vf_add(v, "rtr", VA_IGNORED,
                   "not settable through verbs; the responder picks from the initiator's "
                   "proposal");
        else
            knob(v, p, "rtr", m->rtr, p->rtr ? p->rtr : -1, why);
    }
    return 0;
}

int va_verdict_class(const va_verdict *v, const char *name) {
    for (unsigned i = 0; i < v->n; i++)
        if (!strcmp(v->f[i].name, name))
            return (int)v->f[i].cls;
    return -1;
}

void va_verdict_json(const va_verdict *v, iw_jw *o) {
    static const char *const lists[] = {"applied", "matched", "ignored"};
    for (unsigned c = 0; c < 3; c++) {
        iw_jw_arr_begin(o, lists[c]);
        for (unsigned i = 0; i < v->n; i++)
            if (v->f[i].cls == (va_class)c)
                iw_jw_str(o, NULL, v->f[i].name);
        iw_jw_arr_end(o);
    }
    iw_jw_obj_begin(o, "notes");
    for (unsigned i = 0; i < v->n; i++)
        if (v->f[i].note[0])
            iw_jw_str(o, v->f[i].name, v->f[i].note);
    iw_jw_obj_end(o);
}

void va_profile_caps_json(const va_profile *p, iw_jw *o) {
    bool dev = p->driver != VA_DRV_NONE;
    iw_jw_arr_begin(o, "mpa_rev");
    if (p->rev)
        iw_jw_uint(o, NULL, (uint64_t)p->rev);
    iw_jw_arr_end(o);
    iw_jw_bool(o, "markers", p->markers == 1);
    iw_jw_bool(o, "crc", p->crc == VA_CRC_ON || p->crc == VA_CRC_PEER);
    /* Who decides each MPA knob on this device. */
    iw_jw_obj_begin(o, "mpa_control");
    const char *drv = !dev                                                   ? "none"
                      : p->driver == VA_DRV_CXGB4                            ? "module_param"
                      : p->driver == VA_DRV_SIW || p->driver == VA_DRV_IRDMA ? "driver"
                                                                             : "unknown";
    iw_jw_str(o, "rev", drv);
    iw_jw_str(o, "markers", drv);
    iw_jw_str(o, "crc", p->crc == VA_CRC_PEER ? "peer" : drv);
    iw_jw_str(o, "p2p", drv);
    iw_jw_str(o, "rtr", drv);
    const char *verbs = dev ? "verbs" : "none";
    iw_jw_str(o, "ird", verbs);
    iw_jw_str(o, "ord", verbs);
    iw_jw_str(o, "private_data", verbs);
    iw_jw_str(o, "reject", verbs);
    iw_jw_obj_end(o);
    iw_jw_obj_begin(o, "mpa_defaults");
    iw_jw_str(o, "source", p->source);
    iw_jw_uint(o, "rev", (uint64_t)p->rev);
    iw_jw_arr_begin(o, "responder_revs");
    for (int r = 1; r <= 2; r++)
        if (p->resp_revs & (1 << r))
            iw_jw_uint(o, NULL, (uint64_t)r);
    iw_jw_arr_end(o);
    if (p->markers >= 0)
        iw_jw_bool(o, "markers", p->markers == 1);
    else
        iw_jw_null(o, "markers");
    iw_jw_bool(o, "rejects_markers", p->rejects_markers);
    iw_jw_str(o, "crc",
              p->crc == VA_CRC_PEER  ? "peer"
              : p->crc == VA_CRC_ON  ? "on"
              : p->crc == VA_CRC_OFF ? "off"
                                     : "unknown");
    if (p->p2p >= 0)
        iw_jw_bool(o, "p2p", p->p2p == 1);
    else
        iw_jw_null(o, "p2p");
    if (p->rtr)
        iw_jw_str(o, "rtr", rtr_name(p->rtr));
    iw_jw_uint(o, "ird", VA_DEFAULT_IRD_ORD);
    iw_jw_uint(o, "ord", VA_DEFAULT_IRD_ORD);
    iw_jw_uint(o, "private_data_max", VA_PRIVATE_DATA_MAX);
    iw_jw_obj_end(o);
}

void va_connected_json(const va_profile *p, bool passive, unsigned ird, unsigned ord,
                       unsigned peer_ird, unsigned peer_ord, iw_jw *o) {
    /* Active side: what the driver initiates with is what a compliant
     * responder must accept (rev, markers off, p2p). The responder side
     * follows the initiator, whose Request verbs do not show. */
    bool rev_known = !passive && p->rev;
    bool mk_known = p->markers == 0 && (!passive || p->rejects_markers);
    bool crc_known = p->crc == VA_CRC_ON || p->crc == VA_CRC_OFF;
    bool p2p_known = !passive && p->p2p >= 0;
    iw_jw_obj_begin(o, "mpa");
    iw_jw_uint(o, "rev", rev_known ? (uint64_t)p->rev : 0);
    iw_jw_bool(o, "enhanced", rev_known && p->rev == 2);
    iw_jw_bool(o, "markers_tx", false);
    iw_jw_bool(o, "markers_rx", false);
    iw_jw_bool(o, "crc", crc_known && p->crc == VA_CRC_ON);
    iw_jw_bool(o, "p2p", p2p_known && p->p2p == 1);
    if (p2p_known && p->p2p == 1 && p->rtr)
        iw_jw_str(o, "rtr", rtr_name(p->rtr));
    iw_jw_uint(o, "ird", ird);
    iw_jw_uint(o, "ord", ord);
    iw_jw_uint(o, "peer_ird", peer_ird);
    iw_jw_uint(o, "peer_ord", peer_ord);
    iw_jw_uint(o, "mulpdu", 0);
    iw_jw_obj_end(o);
    iw_jw_obj_begin(o, "mpa_source");
    iw_jw_str(o, "rev", rev_known ? "driver" : "unknown");
    iw_jw_str(o, "enhanced", rev_known ? "driver" : "unknown");
    iw_jw_str(o, "markers_tx", mk_known ? "driver" : "unknown");
    iw_jw_str(o, "markers_rx", mk_known ? "driver" : "unknown");
    iw_jw_str(o, "crc", crc_known ? "driver" : "unknown");
    iw_jw_str(o, "p2p", p2p_known ? "driver" : "unknown");
    iw_jw_str(o, "ird", "requested");
    iw_jw_str(o, "ord", "requested");
    iw_jw_str(o, "peer_ird", "cm_event");
    iw_jw_str(o, "peer_ord", "cm_event");
    iw_jw_str(o, "mulpdu", "unknown");
    iw_jw_obj_end(o);
}

/* ---- names ---- */

const char *va_wc_status_name(int s) {
    switch (s) {
#define N_(x)                                                                                      \
    case x:                                                                                        \
        return #x;
        N_(IBV_WC_SUCCESS)
        N_(IBV_WC_LOC_LEN_ERR)
        N_(IBV_WC_LOC_QP_OP_ERR)
        N_(IBV_WC_LOC_EEC_OP_ERR)
        N_(IBV_WC_LOC_PROT_ERR)
        N_(IBV_WC_WR_FLUSH_ERR)
        N_(IBV_WC_MW_BIND_ERR)
        N_(IBV_WC_BAD_RESP_ERR)
        N_(IBV_WC_LOC_ACCESS_ERR)
        N_(IBV_WC_REM_INV_REQ_ERR)
        N_(IBV_WC_REM_ACCESS_ERR)
        N_(IBV_WC_REM_OP_ERR)
        N_(IBV_WC_RETRY_EXC_ERR)
        N_(IBV_WC_RNR_RETRY_EXC_ERR)
        N_(IBV_WC_LOC_RDD_VIOL_ERR)
        N_(IBV_WC_REM_INV_RD_REQ_ERR)
        N_(IBV_WC_REM_ABORT_ERR)
        N_(IBV_WC_INV_EECN_ERR)
        N_(IBV_WC_INV_EEC_STATE_ERR)
        N_(IBV_WC_FATAL_ERR)
        N_(IBV_WC_RESP_TIMEOUT_ERR)
        N_(IBV_WC_GENERAL_ERR)
        N_(IBV_WC_TM_ERR)
        N_(IBV_WC_TM_RNDV_INCOMPLETE)
#undef N_
    default:
        return "IBV_WC_UNKNOWN";
    }
}

const char *va_wc_status_class(int s) {
    switch (s) {
    case IBV_WC_SUCCESS:
        return "ok";
    case IBV_WC_WR_FLUSH_ERR:
        return "flushed";
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_INV_RD_REQ_ERR:
    case IBV_WC_REM_ABORT_ERR:
    case IBV_WC_BAD_RESP_ERR:
        return "remote_error";
    default:
        return "local_error";
    }
}

const char *va_async_event_name(int t) {
    switch (t) {
#define N_(x)                                                                                      \
    case x:                                                                                        \
        return #x;
        N_(IBV_EVENT_CQ_ERR)
        N_(IBV_EVENT_QP_FATAL)
        N_(IBV_EVENT_QP_REQ_ERR)
        N_(IBV_EVENT_QP_ACCESS_ERR)
        N_(IBV_EVENT_COMM_EST)
        N_(IBV_EVENT_SQ_DRAINED)
        N_(IBV_EVENT_PATH_MIG)
        N_(IBV_EVENT_PATH_MIG_ERR)
        N_(IBV_EVENT_DEVICE_FATAL)
        N_(IBV_EVENT_PORT_ACTIVE)
        N_(IBV_EVENT_PORT_ERR)
        N_(IBV_EVENT_LID_CHANGE)
        N_(IBV_EVENT_PKEY_CHANGE)
        N_(IBV_EVENT_SM_CHANGE)
        N_(IBV_EVENT_SRQ_ERR)
        N_(IBV_EVENT_SRQ_LIMIT_REACHED)
        N_(IBV_EVENT_QP_LAST_WQE_REACHED)
        N_(IBV_EVENT_CLIENT_REREGISTER)
        N_(IBV_EVENT_GID_CHANGE)
        N_(IBV_EVENT_WQ_FATAL)
#undef N_
    default:
        return "IBV_EVENT_UNKNOWN";
    }
}

bool va_async_is_error(int t) {
    switch (t) {
    case IBV_EVENT_CQ_ERR:
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_DEVICE_FATAL:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_WQ_FATAL:
        return true;
    default:
        return false;
    }
}

unsigned va_access_to_ibv(unsigned acc, bool *added_local_write) {
    unsigned f = 0;
    if (acc & IW_AGENT_ACC_LOCAL_WRITE)
        f |= IBV_ACCESS_LOCAL_WRITE;
    if (acc & IW_AGENT_ACC_REMOTE_READ)
        f |= IBV_ACCESS_REMOTE_READ;
    if (acc & IW_AGENT_ACC_REMOTE_WRITE)
        f |= IBV_ACCESS_REMOTE_WRITE;
    if (acc & IW_AGENT_ACC_REMOTE_ATOMIC)
        f |= IBV_ACCESS_REMOTE_ATOMIC;
    bool add =
        (f & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(f & IBV_ACCESS_LOCAL_WRITE);
    if (add)
        f |= IBV_ACCESS_LOCAL_WRITE;
    if (added_local_write)
        *added_local_write = add;
    return f;
}
