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

/* One request (not poll, which the server defers itself): o is the open
 * response object, already holding "ok":true. Returns NULL (respond with
 * o) or the error to answer instead. r may be taken from (r->data). */
typedef const char *(*iw_agent_srv_fn)(void *ctx, iw_agent_req *r, const char *line, size_t len,
                                       iw_jw *o);

typedef struct iw_agent_srv {
    int lfd;    /* the agent listener (the caller's, closed by iw_agent_srv_free) */
    int client; /* the runner, -1 without */
    char *in;   /* buffered input: IW_AGENT_SRV_IN_CAP */
    size_t in_len;
    bool in_discard;       /* skipping an over-long line */
    bool hold_behind_poll; /* requests wait behind a pending poll, in order */
    bool nodelay;          /* TCP_NODELAY on the runner's connection */
    bool verbose;          /* log each request to stderr */
    const char *name;      /* program name for the log */
    char **events;         /* queued event objects (JSON text) */
    size_t n_events, cap_events;
    bool poll_pending;
    uint64_t poll_deadline;
    iw_agent_srv_fn handler;
    void *ctx;
} iw_agent_srv;

#define IW_AGENT_SRV_IN_CAP (IW_AGENT_LINE_MAX + 65536)

/* 0, or -1 when out of memory. lfd and client start at -1. */
int iw_agent_srv_init(iw_agent_srv *s, const char *name, iw_agent_srv_fn fn, void *ctx);
/* Closes the client and the listener, frees everything. */
void iw_agent_srv_free(iw_agent_srv *s);

/* Accept a connection on lfd. A second runner is told so and closed.
 * Returns the new client fd (for the caller's event loop), or -1. */
int iw_agent_srv_accept(iw_agent_srv *s);
/* Read what the runner sent and handle the complete lines. -1: the
 * runner closed (or the connection failed); 0 otherwise. */
int iw_agent_srv_read(iw_agent_srv *s);
/* Handle the complete lines buffered (unless held behind a poll). */
void iw_agent_srv_process(iw_agent_srv *s);
/* Close the runner's connection and forget its input. */
/* The runner hung up (EOF or a reset waiting to be read): the caller ends
 * its session before judging a new connection, so a runner that has just
 * left never makes the next one look like a second runner. */
bool iw_agent_srv_client_gone(const iw_agent_srv *s);
void iw_agent_srv_drop_client(iw_agent_srv *s);

/* Responses: one line each. respond adds the newline to o. */
void iw_agent_srv_respond(iw_agent_srv *s, iw_jbuf *o);
void iw_agent_srv_respond_oom(iw_agent_srv *s);
void iw_agent_srv_respond_error(iw_agent_srv *s, const char *msg);
/* {"ok":true,"events":[...]}: every queued event; the poll is answered. */
void iw_agent_srv_respond_poll(iw_agent_srv *s);

/* Queue an event (a JSON object's text); dropped when out of memory. */
void iw_agent_srv_event_push(iw_agent_srv *s, const char *text);
/* Forget the queued events and any pending poll (a session reset). */
void iw_agent_srv_events_clear(iw_agent_srv *s);
/* A pending poll that is due now: a runner, and events or the deadline. */
bool iw_agent_srv_poll_due(const iw_agent_srv *s);
/* How long the event loop may wait: tick_ms, less when a poll falls due. */
int iw_agent_srv_wait_ms(const iw_agent_srv *s, int tick_ms);

#endif
