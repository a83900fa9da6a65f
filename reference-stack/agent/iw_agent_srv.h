/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The server side shared by the agent-protocol programs (iwarp-target,
 * iwarp-agent): the listen socket, one runner at a time, its line buffer
 * (IW_AGENT_LINE_MAX, over-long lines refused), request dispatch, the event
 * queue and the deferred poll; plus JSON text in memory and guarded
 * regions. No global state: everything lives in an iw_agent_srv. The
 * caller owns the event loop (epoll or otherwise). */
#ifndef IW_AGENT_SRV_H
#define IW_AGENT_SRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iw_agent.h"
#include "iw_jsonw.h"

/* ---- a JSON text built in memory with the shared writer ---- */

typedef struct iw_jbuf {
    iw_jw j;
    FILE *f;
    char *buf;
    size_t len;
} iw_jbuf;

bool iw_jbuf_open(iw_jbuf *b);
/* The text so far (valid until the next write). */
const char *iw_jbuf_text(iw_jbuf *b);
void iw_jbuf_free(iw_jbuf *b);

/* ---- guarded regions: guard | buf | guard ---- */

#define IW_AGENT_GUARD_LEN 64 /* octets of pattern before and after every region */
#define IW_AGENT_GUARD_BYTE 0xA5

/* len + 2 guards; buf (= mem + IW_AGENT_GUARD_LEN) is set to fill (< 0:
 * zero), the guards to the pattern. NULL when out of memory; free() it. */
uint8_t *iw_agent_guard_alloc(uint64_t len, int fill);
bool iw_agent_guard_intact(const uint8_t *mem, uint64_t len);
/* read_mr, write_mr and guard on the region mem (len octets between the
 * guards): NULL, or why it failed. */
const char *iw_agent_region_io(const iw_agent_req *r, uint8_t *mem, uint64_t len, iw_jw *o);

/* ---- hello ---- */

/* "impl", "version", and opens the "caps" object. */
void iw_agent_hello_begin(iw_jw *o, const char *impl);
/* Opens caps.extensions with the extensions every agent has. */
void iw_agent_hello_extensions_begin(iw_jw *o);

uint64_t iw_agent_now_ms(void);

/* A numeric IPv4/IPv6 address (no name lookup). 0, or -1. */
struct sockaddr_storage;
int iw_agent_sockaddr(const char *host, uint16_t port, struct sockaddr_storage *ss);
/* A listening TCP socket: the fd, -2 when host is not a numeric address,
 * -1 with errno when it cannot listen. */
int iw_agent_listen_fd(const char *host, uint16_t port);

/* ---- the server ---- */

/* Bounds per runner (docs/agent-protocol.md, "Limits"). */
#define IW_AGENT_SRV_IN_CAP (IW_AGENT_LINE_MAX + 65536) /* input buffer */
/* Requests are read and handled only while fewer response octets than
 * this wait to be sent: a runner that does not read stops being served
 * instead of growing the agent's memory. */
#define IW_AGENT_SRV_OUT_SOFT (1u << 20)
/* A runner whose pending responses move not one octet for this long has
 * stopped reading: it is dropped and its session ends. */
#define IW_AGENT_SRV_STALL_MS 10000
/* Unpolled events kept (JSON text octets): a poll response stays well
 * under the runner's 64 MiB line limit. Later events are counted, not
 * kept, and the next poll ends with an "error" event saying how many. */
#define IW_AGENT_SRV_EVENTS_MAX (32u << 20)
/* Request lines handled per iw_agent_srv_service call, so the caller's
 * other sockets (the RDMA peer) are served between batches. */
#define IW_AGENT_SRV_LINES_PER_CALL 64
/* After accept fails for want of descriptors or memory, the listener is
 * left alone this long (level-triggered epoll would spin otherwise). */
#define IW_AGENT_SRV_ACCEPT_BACKOFF_MS 100

/* One request (not poll, which the server defers itself): o is the open
 * response object, already holding "ok":true. Returns NULL (respond with
 * o) or the error to answer instead. r may be taken from (r->data). */
typedef const char *(*iw_agent_srv_fn)(void *ctx, iw_agent_req *r, const char *line, size_t len,
                                       iw_jw *o);

typedef struct iw_agent_srv {
    int lfd;    /* the agent listener (the caller's, closed by iw_agent_srv_free) */
    int client; /* the runner (non-blocking), -1 without */
    /* The caller's epoll set, kept in step by the server (iw_agent_srv_use_epoll). */
    int ep;
    uint32_t tag_listen, tag_client; /* epoll_event.data.u32 of each */
    bool listen_armed;
    bool client_in_ep;
    uint32_t client_armed;    /* events registered for the runner */
    uint64_t accept_retry_ms; /* accept backed off until then (0: not) */
    char *in;                 /* buffered input: IW_AGENT_SRV_IN_CAP */
    size_t in_len;
    bool in_discard; /* skipping an over-long line */
    bool more_lines; /* complete lines wait for the next service call */
    bool in_eof;     /* the runner sent FIN: answer what it asked, then end */
    bool rdhup;      /* FIN seen by epoll (data may still be queued before it) */
    bool failed;     /* the connection failed or the runner stopped reading */
    char *out;       /* responses not yet sent: out[out_off, out_len) */
    size_t out_off, out_len, out_cap;
    uint64_t out_moved_ms; /* when the pending responses last moved */
    bool nodelay;          /* TCP_NODELAY on the runner's connection */
    bool verbose;          /* log each request to stderr */
    const char *name;      /* program name for the log */
    char **events;         /* queued event objects (JSON text) */
    size_t n_events, cap_events;
    size_t event_bytes;      /* their text, counted against IW_AGENT_SRV_EVENTS_MAX */
    uint64_t events_dropped; /* since the last poll */
    bool poll_pending;
    uint64_t poll_deadline;
    iw_agent_srv_fn handler;
    void *ctx;
} iw_agent_srv;

/* 0, or -1 when out of memory. lfd, client and ep start at -1. */
int iw_agent_srv_init(iw_agent_srv *s, const char *name, iw_agent_srv_fn fn, void *ctx);
/* Closes the client and the listener, frees everything. */
void iw_agent_srv_free(iw_agent_srv *s);
/* Register the listener in ep (data.u32 = tag_listen); from then on the
 * server adds, changes and removes its two fds there itself, the runner's
 * with data.u32 = tag_client. */
int iw_agent_srv_use_epoll(iw_agent_srv *s, int ep, uint32_t tag_listen, uint32_t tag_client);

/* The listener is readable: accept one connection. A second runner is
 * told so and closed. Out of descriptors: the listener rests for
 * IW_AGENT_SRV_ACCEPT_BACKOFF_MS. Returns the new client fd, or -1. */
int iw_agent_srv_accept(iw_agent_srv *s);
/* The runner hung up (EOF or a reset waiting to be read): the caller ends
 * its session before judging a new connection, so a runner that has just
 * left never makes the next one look like a second runner. */
bool iw_agent_srv_client_gone(const iw_agent_srv *s);
/* epoll reported events on the runner's connection: read (requests are
 * handled in iw_agent_srv_service), send what is pending, note a FIN. */
void iw_agent_srv_on_client(iw_agent_srv *s, uint32_t events);
/* Once per loop iteration, after the caller has queued its events: answer
 * a poll that is due, handle buffered requests in order (never past a
 * pending poll), send, drop a runner that stopped reading, and bring the
 * epoll interest up to date. true: the session is over (the runner left
 * and got every answer, or failed): the caller tears it down and calls
 * iw_agent_srv_drop_client. */
bool iw_agent_srv_service(iw_agent_srv *s);
/* Close the runner's connection and forget its input, output and poll. */
void iw_agent_srv_drop_client(iw_agent_srv *s);
/* Octets of responses waiting to be sent. */
size_t iw_agent_srv_out_pending(const iw_agent_srv *s);

/* Responses: one line each. respond adds the newline to o. */
void iw_agent_srv_respond(iw_agent_srv *s, iw_jbuf *o);
void iw_agent_srv_respond_oom(iw_agent_srv *s);
void iw_agent_srv_respond_error(iw_agent_srv *s, const char *msg);
/* {"ok":true,"events":[...]}: every queued event; the poll is answered. */
void iw_agent_srv_respond_poll(iw_agent_srv *s);

/* Queue an event (a JSON object's text); counted in events_dropped when
 * the queue is full or memory is short. */
void iw_agent_srv_event_push(iw_agent_srv *s, const char *text);
/* Forget the queued events and any pending poll (a session reset). */
void iw_agent_srv_events_clear(iw_agent_srv *s);
/* A pending poll that is due now: events, the deadline, or a runner that
 * sends no more (it gets the events so far at once). */
bool iw_agent_srv_poll_due(const iw_agent_srv *s);
/* How long the event loop may wait: tick_ms, less when a poll falls due,
 * 0 while requests are buffered and can be handled. */
int iw_agent_srv_wait_ms(const iw_agent_srv *s, int tick_ms);

#endif
