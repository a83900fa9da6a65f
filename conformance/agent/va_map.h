/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What iwarp-agent can and cannot make an RNIC do, in one pure module.
 *
 * Verbs (librdmacm + libibverbs) set IRD, ORD and the MPA private data of a
 * connection, and can reject one. Everything else MPA negotiates (revision,
 * markers, CRC, peer-to-peer and its RTR message) is decided by the RNIC's
 * driver: compiled in (siw), a module parameter (iw_cxgb4), or firmware.
 * This module knows, per driver, what that fixed behaviour is, so the agent
 * can report each requested MPA field as
 *   applied  - set through librdmacm,
 *   matched  - not settable, but the driver's fixed behaviour is what was asked,
 *   ignored  - not settable, and the driver does something else or nobody knows,
 * instead of pretending (docs/iwarp-agent.md). No I/O except reading the
 * iw_cxgb4 module parameters from a sysfs root the caller names. */
#ifndef VA_MAP_H
#define VA_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iw_agent.h"
#include "iw_jsonw.h"

typedef enum va_driver {
    VA_DRV_NONE = 0, /* no device */
    VA_DRV_SIW,
    VA_DRV_CXGB4,
    VA_DRV_IRDMA,
    VA_DRV_QEDR,
    VA_DRV_ERDMA,
    VA_DRV_OTHER
} va_driver;

enum {
    VA_CRC_UNKNOWN = -1,
    VA_CRC_OFF = 0,
    VA_CRC_ON = 1,
    VA_CRC_PEER = 2 /* on exactly when the peer asks */
};

/* IW rtr bits, as in iw_agent_mpa.rtr. */
#define VA_RTR_SEND 1
#define VA_RTR_WRITE 2
#define VA_RTR_READ 4

typedef struct va_profile {
    va_driver driver;
    const char *name;     /* "siw", "cxgb4", ... */
    char source[96];      /* where the facts come from */
    int rev;              /* MPA revision it initiates with; 0 unknown */
    int resp_revs;        /* bit set of revisions it answers as responder (bit r); 0 unknown */
    int markers;          /* it requests markers as initiator: 0/1, -1 unknown */
    bool rejects_markers; /* answers an M=1 Request with a reject */
    int crc;              /* VA_CRC_* */
    int p2p;              /* it requests peer-to-peer as initiator: 0/1, -1 unknown */
    int rtr;              /* RTR bits it proposes with p2p; 0 unknown */
    int pd_max;        /* private data octets it carries in a rev 2 (enhanced) frame; 0 unknown */
    bool inv_unseen;   /* receive completions never show IBV_WC_WITH_INV */
    bool no_local_inv; /* ibv_post_send refuses IBV_WR_LOCAL_INV */
} va_profile;

/* Fill p for a device. dev_name NULL: no device. sysfs_root is normally
 * "/sys" (tests point it at a fake tree). */
void va_profile_detect(va_profile *p, const char *dev_name, uint32_t vendor_id,
                       const char *sysfs_root);

typedef enum va_class { VA_APPLIED = 0, VA_MATCHED, VA_IGNORED } va_class;

typedef struct va_field {
    const char *name;
    va_class cls;
    char note[200];
} va_field;

#define VA_RDMA_MAX_PRIVATE_DATA 256 /* RDMA_MAX_PRIVATE_DATA: librdmacm's event buffers */
#define VA_PRIVATE_DATA_MAX 255      /* rdma_conn_param.private_data_len is a uint8_t */
#define VA_DEFAULT_IRD_ORD 16

typedef struct va_verdict {
    va_field f[12];
    unsigned n;
    int ird, ord;  /* to pass as responder_resources / initiator_depth */
    char err[200]; /* non-empty: the request cannot be carried out */
} va_verdict;

/* Classify every field present in m for a listen (passive) or connect
 * (active) on a device whose limits are max_ird (max_qp_rd_atom) and
 * max_ord (max_qp_init_rd_atom). Returns 0, or -1 with v->err set. */
int va_mpa_classify(const va_profile *p, const iw_agent_mpa *m, bool passive, unsigned max_ird,
                    unsigned max_ord, va_verdict *v);
/* The verdict in a response: "applied", "matched", "ignored" (arrays of
 * field names) and "notes" {field: why}. */
void va_verdict_json(const va_verdict *v, iw_jw *o);
/* Class of one field, or -1 when the request did not name it. */
int va_verdict_class(const va_verdict *v, const char *name);

/* hello caps: "mpa_rev", "markers", "crc" and the extension objects
 * "mpa_control" (who decides each knob) and "mpa_defaults". */
void va_profile_caps_json(const va_profile *p, iw_jw *o);

/* The "mpa" object of a connected event plus "mpa_source" {field:
 * "requested"|"driver"|"cm_event"|"unknown"}. Unknown values are written
 * as 0 / false, never guessed. */
void va_connected_json(const va_profile *p, bool passive, unsigned ird, unsigned ord,
                       unsigned peer_ird, unsigned peer_ord, iw_jw *o);

/* ibv_wc_status: its enum name ("IBV_WC_REM_ACCESS_ERR") and the agent's
 * status class ("ok", "flushed", "remote_error", "local_error"). */
const char *va_wc_status_name(int status);
const char *va_wc_status_class(int status);
/* ibv_event_type: its enum name, and whether it is an error worth an
 * "error" event (QP_FATAL, ...) rather than information (COMM_EST). */
const char *va_async_event_name(int type);
bool va_async_is_error(int type);

/* Agent access names (IW_AGENT_ACC_*) to IBV_ACCESS_* bits. verbs requires
 * LOCAL_WRITE with REMOTE_WRITE or REMOTE_ATOMIC; it is added, and
 * *added_local_write says so. */
unsigned va_access_to_ibv(unsigned acc, bool *added_local_write);

#endif
