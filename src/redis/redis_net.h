/* The transport under every Redis connection: one socket cwork owns (TCP or a unix
 * socket, optionally TLS through OpenSSL), with hiredis kept only for what it is good
 * at, its reply reader (and its formatter for printf-style commands and for commands a
 * cluster may send again; argument vectors are encoded here, straight into the output
 * buffer).
 *
 * Why own the socket: Debian 12's hiredis 0.14 has no TLS, opens sockets without
 * close-on-exec and writes with write(), which raises SIGPIPE when Redis has gone away.
 * Here sockets are created with SOCK_CLOEXEC (no window for a fork+exec in another
 * thread to inherit them), every write is send(MSG_NOSIGNAL) (TLS included, through a
 * BIO of our own), and each reply has a deadline instead of per-syscall timeouts.
 *
 * A cw_net is used by one thread at a time (its connection is checked out). */
#ifndef CWORK_REDIS_NET_H
#define CWORK_REDIS_NET_H

#include "util.h"

#include <hiredis/hiredis.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

/* Kinds of failure, sticky in cw_net.err once set (the connection is then unusable). */
enum {
    CW_NET_OK = 0,
    CW_NET_EIO,      /* connect, read or write failed, or the server closed the socket */
    CW_NET_ETIMEOUT, /* no reply (or no progress writing) before the deadline */
    CW_NET_EPROTO,   /* the server sent something that is not RESP */
    CW_NET_ENOMEM,
    CW_NET_ETLS,     /* the TLS handshake or a TLS record failed */
    CW_NET_ENOTREDIS /* the server answered, but as another kind of server (HTTP) */
};

typedef struct cw_net {
    int fd;                       /* -1 when not connected */
    SSL *ssl;                     /* NULL for plain connections */
    redisReader *reader;          /* replies read but not yet handed out */
    cw_buf out;                   /* formatted commands not yet written */
    size_t out_sent;              /* bytes of out already written */
    int timeout_ms;               /* per reply (and per flush); 0 = wait forever */
    int received;                 /* anything was read yet (a TLS answer to a plain hello?) */
    int tls_cert_requested;       /* the TLS server asked for a client certificate */
    struct sockaddr_storage peer; /* the TCP address dialled (peer_len 0: a unix socket), */
    socklen_t peer_len;           /* for cw_net_peer_kind */
    int err;                      /* CW_NET_…; non-zero: broken for good */
    char errstr[160];             /* what err means, for messages (never a secret) */
} cw_net;

/* What n's TCP peer speaks, asked when a plain connection is closed or reset before it
 * read anything: both what a TLS port does to a plain client and what a server killed
 * mid-request does, and what some HTTP servers do to a Redis command. A new connection
 * sends a TLS ClientHello: a TLS record (handshake or alert) first is TLS, an HTTP
 * status line (or an HTML page) is HTTP; closed or silent within half the time, a second
 * one sends an HTTP HEAD request and an HTTP status line back is HTTP. Within timeout_ms in all
 * (redis_net_probe.c). CW_PEER_UNKNOWN also for a unix socket or a peer gone. */
typedef enum cw_peer_kind { CW_PEER_UNKNOWN, CW_PEER_TLS, CW_PEER_HTTP } cw_peer_kind;
cw_peer_kind cw_net_peer_kind(const cw_net *n, int timeout_ms);

/* Whether n's TCP peer answers an HTTP HEAD request with an HTTP status line within
 * timeout_ms: asked when a TLS handshake found no TLS server (redis_tls.c). 1 or 0. */
int cw_net_peer_answers_http(const cw_net *n, int timeout_ms);

/* Whether the first bytes a server sent (len of them, at least 1) start an HTTP answer:
 * "HTTP/" (as far as len goes) or "<" (the HTML page an HTTP/0.9-style answer is). No
 * Redis reply starts with either. */
int cw_net_looks_http(const char *p, size_t len);

/* The message of a peer that answered like an HTTP server (cwork's CLI matches its
 * words to print its hint). */
#define CW_NET_HTTP_MESSAGE "the port answered like an HTTP server, not Redis"

/* Every cw_net starts here (fd -1, no buffers), so cw_net_close is always safe. */
void cw_net_init(cw_net *n);

/* Connects to host:port (every address host resolves to, in order) within connect_ms,
 * then sets TCP_NODELAY and keepalive. 0, or -1 with err/errstr set. */
int cw_net_dial_tcp(cw_net *n, const char *host, int port, int connect_ms);
/* Connects to the unix socket at path within connect_ms. 0 or -1. */
int cw_net_dial_unix(cw_net *n, const char *path, int connect_ms);

/* Appends a command, encoded as RESP (lens NULL: every argument is NUL-terminated), to
 * the output buffer; nothing is written until the next read. 0, or -1 (CW_NET_ENOMEM) with err set.
 */
int cw_net_append_argv(cw_net *n, int argc, const char **argv, const size_t *lens);
/* Appends an already formatted command (RESP bytes). */
int cw_net_append_raw(cw_net *n, const char *cmd, size_t len);

/* The next reply: one already read if there is one, else writes what is buffered and
 * reads until a whole reply has arrived or timeout_ms passed. The reply is hiredis'
 * (freeReplyObject). 0, or -1 with err set. */
int cw_net_read_reply(cw_net *n, void **reply);
/* A reply already read from the socket, without any I/O: *reply NULL when there is
 * none. After every read nothing is left inside OpenSSL, so "no buffered reply and
 * poll() says the socket is not readable" means there is nothing to read. 0 or -1. */
int cw_net_buffered_reply(cw_net *n, void **reply);

/* For an idle connection: 1 when nothing arrived on it (it can be reused), 0 when the
 * server closed it or sent something unasked. Never blocks. */
int cw_net_idle_ok(cw_net *n);

/* Moves src's connection into dst (which must be closed or fresh); src is left fresh. */
void cw_net_move(cw_net *dst, cw_net *src);

/* Closes the socket (a TLS close_notify first when the connection is healthy) and
 * frees the buffers; n is back to cw_net_init's state. */
void cw_net_close(cw_net *n);

/* ---- internal to the transport (redis_net.c and redis_tls.c; in redis_net_wait.c) */

/* Sets err and errstr; returns -1. */
int cw_net_fail(cw_net *n, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Waits until fd is ready for events (POLLIN/POLLOUT) or the monotonic deadline (ms,
 * 0 = none) passes: 1 ready, 0 timed out, -1 poll failed. */
int cw_net_wait(int fd, short events, int64_t deadline);
/* A deadline ms from now, or 0 (none) when ms is 0. */
int64_t cw_net_deadline(int ms);

#endif
