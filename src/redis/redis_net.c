/* The transport: dialling (TCP, unix sockets), writing buffered commands and reading
 * replies with deadlines, over a non-blocking socket. TLS lives in redis_tls.c and
 * plugs in through cw_tls_read/cw_tls_write. */
#include "redis_net.h"
#include "redis_tls.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Keepalive as hiredis sets it: probes after 15 s idle, every 5 s, 3 of them. A dead
 * peer behind a silent network is noticed within ~30 s instead of hours. */
#define KEEPALIVE_IDLE_S 15
#define KEEPALIVE_INTERVAL_S 5
#define KEEPALIVE_COUNT 3
/* Read chunk; also the largest TLS record, so one SSL_read fits a whole record. */
#define READ_CHUNK 16384
/* An output buffer grown past this by a big pipeline is released after the flush. */
#define OUT_KEEP_BYTES (256 * 1024)

void cw_net_init(cw_net *n)
{
    memset(n, 0, sizeof *n);
    n->fd = -1;
    cw_buf_init(&n->out);
}

static int init_reader(cw_net *n)
{
    n->reader = redisReaderCreate();
    return n->reader ? 0 : cw_net_fail(n, CW_NET_ENOMEM, "out of memory");
}

/* ---------------------------------------------------------------- dialling */

static void set_int_opt(int fd, int level, int name, int value)
{
    /* Best effort: a kernel without one of these still gives a working connection. */
    (void)setsockopt(fd, level, name, &value, sizeof value);
}

/* Non-blocking connect to one address, finished within the deadline. 0, or an errno. */
static int connect_one(int fd, const struct sockaddr *sa, socklen_t len, int64_t deadline)
{
    if (connect(fd, sa, len) == 0) return 0;
    if (errno != EINPROGRESS && errno != EINTR) return errno;
    int ready = cw_net_wait(fd, POLLOUT, deadline);
    if (ready == 0) return ETIMEDOUT;
    if (ready < 0) return errno;
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0) return errno;
    return soerr;
}

static const char *connect_error_text(int e)
{
    return e == ETIMEDOUT ? "connection timed out" : strerror(e);
}

int cw_net_dial_tcp(cw_net *n, const char *host, int port, int connect_ms)
{
    cw_net_init(n);
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0)
        return cw_net_fail(n, CW_NET_EIO, "cannot resolve \"%s\": %s", host,
                           rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
    int64_t deadline = cw_net_deadline(connect_ms);
    int last = ECONNREFUSED;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd =
            socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            last = errno;
            continue;
        }
        last = connect_one(fd, ai->ai_addr, ai->ai_addrlen, deadline);
        if (last == 0) {
            n->fd = fd;
            if (ai->ai_addrlen <= sizeof n->peer) {
                memcpy(&n->peer, ai->ai_addr, ai->ai_addrlen);
                n->peer_len = (socklen_t)ai->ai_addrlen;
            }
            break;
        }
        close(fd);
        if (last == ETIMEDOUT) break; /* the time is spent for every other address too */
    }
    freeaddrinfo(res);
    if (n->fd < 0) return cw_net_fail(n, CW_NET_EIO, "%s", connect_error_text(last));
    set_int_opt(n->fd, IPPROTO_TCP, TCP_NODELAY, 1);
    set_int_opt(n->fd, SOL_SOCKET, SO_KEEPALIVE, 1);
    set_int_opt(n->fd, IPPROTO_TCP, TCP_KEEPIDLE, KEEPALIVE_IDLE_S);
    set_int_opt(n->fd, IPPROTO_TCP, TCP_KEEPINTVL, KEEPALIVE_INTERVAL_S);
    set_int_opt(n->fd, IPPROTO_TCP, TCP_KEEPCNT, KEEPALIVE_COUNT);
    return init_reader(n);
}

int cw_net_dial_unix(cw_net *n, const char *path, int connect_ms)
{
    cw_net_init(n);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return cw_net_fail(n, CW_NET_EIO, "socket path too long");
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return cw_net_fail(n, CW_NET_EIO, "socket: %s", strerror(errno));
    int64_t deadline = cw_net_deadline(connect_ms);
    int e;
    /* A unix socket connects at once or not at all; EAGAIN means a full backlog, which
     * is worth another try until the deadline. */
    while ((e = connect_one(fd, (struct sockaddr *)&sa, sizeof sa, deadline)) == EAGAIN) {
        if (cw_monotonic_ms() >= deadline) {
            e = ETIMEDOUT;
            break;
        }
        struct timespec ts = {0, 5 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (e != 0) {
        close(fd);
        return cw_net_fail(n, CW_NET_EIO, "%s", connect_error_text(e));
    }
    n->fd = fd;
    return init_reader(n);
}

/* ---------------------------------------------------------------- raw I/O */

/* >0: bytes moved; 0: not ready, wait for *want; -1: failed (err set). */
static ssize_t io_write(cw_net *n, const char *p, size_t len, short *want)
{
    if (n->ssl) return cw_tls_write(n, p, len, want);
    for (;;) {
        /* MSG_NOSIGNAL: a peer that went away gives EPIPE here, never SIGPIPE. */
        ssize_t w = send(n->fd, p, len, MSG_NOSIGNAL);
        if (w >= 0) return w;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            *want = POLLOUT;
            return 0;
        }
        return cw_net_fail(n, CW_NET_EIO, "%s", strerror(errno));
    }
}

static ssize_t io_read(cw_net *n, char *p, size_t len, short *want)
{
    if (n->ssl) return cw_tls_read(n, p, len, want);
    for (;;) {
        ssize_t r = recv(n->fd, p, len, 0);
        if (r > 0) return r;
        if (r == 0 || (errno == ECONNRESET && !n->received)) {
            /* A TLS server (Redis 7) resets a plain client without a word, and so do a
             * server killed while our first request was unread and some HTTP servers:
             * only asking the port what it speaks tells them apart. */
            const char *what = r == 0 ? "Server closed the connection" : strerror(errno);
            cw_peer_kind kind =
                n->received
                    ? CW_PEER_UNKNOWN
                    : cw_net_peer_kind(n, n->timeout_ms > 0 && n->timeout_ms < 2000 ? n->timeout_ms
                                                                                    : 2000);
            if (kind == CW_PEER_TLS)
                return cw_net_fail(n, CW_NET_ETLS, "%s: the server speaks TLS: use rediss://",
                                   what);
            if (kind == CW_PEER_HTTP)
                return cw_net_fail(n, CW_NET_ENOTREDIS, "%s: " CW_NET_HTTP_MESSAGE, what);
            return cw_net_fail(n, CW_NET_EIO, "%s%s", what, n->received ? "" : " before answering");
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            *want = POLLIN;
            return 0;
        }
        return cw_net_fail(n, CW_NET_EIO, "%s", strerror(errno));
    }
}

static int timed_out(cw_net *n, int ready)
{
    if (ready < 0) return cw_net_fail(n, CW_NET_EIO, "poll: %s", strerror(errno));
    return cw_net_fail(n, CW_NET_ETIMEOUT, "timed out waiting for Redis");
}

static int flush_out(cw_net *n, int64_t deadline)
{
    while (n->out_sent < n->out.len) {
        short want = 0;
        ssize_t w = io_write(n, n->out.data + n->out_sent, n->out.len - n->out_sent, &want);
        if (w < 0) return -1;
        if (w > 0) {
            n->out_sent += (size_t)w;
            continue;
        }
        int ready = cw_net_wait(n->fd, want, deadline);
        if (ready <= 0) return timed_out(n, ready);
    }
    if (n->out.cap > OUT_KEEP_BYTES) {
        cw_buf_free(&n->out);
        cw_buf_init(&n->out);
    }
    cw_buf_reset(&n->out);
    n->out_sent = 0;
    return 0;
}

static int reader_failed(cw_net *n)
{
    if (n->reader->err == REDIS_ERR_OOM) return cw_net_fail(n, CW_NET_ENOMEM, "out of memory");
    return cw_net_fail(n, CW_NET_EPROTO, "%s", n->reader->errstr);
}

/* Reads what the socket has (at least one byte, waiting up to the deadline) into the
 * reply reader. For TLS it also drains what OpenSSL holds but did not return yet, so
 * that the socket's readiness keeps telling the whole truth. wait_first: a command was
 * just sent, so its reply cannot be there yet: poll before the first read (one
 * system call less per round trip). */
static int fill(cw_net *n, int64_t deadline, int wait_first)
{
    char buf[READ_CHUNK];
    if (wait_first && !(n->ssl && cw_tls_pending(n))) {
        int ready = cw_net_wait(n->fd, POLLIN, deadline);
        if (ready <= 0) return timed_out(n, ready);
    }
    for (;;) {
        short want = 0;
        ssize_t r = io_read(n, buf, sizeof buf, &want);
        if (r < 0) return -1;
        if (r == 0) {
            int ready = cw_net_wait(n->fd, want, deadline);
            if (ready <= 0) return timed_out(n, ready);
            continue;
        }
        /* A TLS server answers a plain client with an alert or handshake record. */
        if (!n->ssl && !n->received && (buf[0] == 0x15 || buf[0] == 0x16))
            return cw_net_fail(n, CW_NET_ETLS, "the server speaks TLS: use rediss://");
        /* An HTTP server answers a Redis command with an error page (over TLS too). */
        if (!n->received && cw_net_looks_http(buf, (size_t)r))
            return cw_net_fail(n, CW_NET_ENOTREDIS, CW_NET_HTTP_MESSAGE);
        n->received = 1;
        if (redisReaderFeed(n->reader, buf, (size_t)r) != REDIS_OK) return reader_failed(n);
        if (!n->ssl || cw_tls_pending(n) == 0) return 0;
    }
}

/* ---------------------------------------------------------------- commands and replies */

int cw_net_append_raw(cw_net *n, const char *cmd, size_t len)
{
    if (n->err) return -1;
    cw_buf_append(&n->out, cmd, len);
    return n->out.oom ? cw_net_fail(n, CW_NET_ENOMEM, "out of memory") : 0;
}

/* RESP's header of a command or of one argument: '*' or '$', the count, CRLF. */
static void put_header(cw_buf *b, char kind, size_t count)
{
    cw_buf_putc(b, kind);
    cw_buf_put_uint64(b, count);
    cw_buf_append(b, "\r\n", 2);
}

/* Encoded straight into the output buffer, sized once: a batch's arguments (megabytes
 * of job JSON) are copied once, with no temporary command of their size in between. */
int cw_net_append_argv(cw_net *n, int argc, const char **argv, const size_t *lens)
{
    if (n->err) return -1;
    size_t need = 24; /* "*<count>\r\n" */
    for (int i = 0; i < argc; i++) {
        size_t len = lens ? lens[i] : strlen(argv[i]);
        if (len > SIZE_MAX / 4 || need > SIZE_MAX / 4) /* no size_t wrap below */
            return cw_net_fail(n, CW_NET_ENOMEM, "out of memory");
        need += 24 + len + 2;
    }
    if (cw_buf_reserve(&n->out, need) != 0) return cw_net_fail(n, CW_NET_ENOMEM, "out of memory");
    put_header(&n->out, '*', argc > 0 ? (size_t)argc : 0);
    for (int i = 0; i < argc; i++) {
        size_t len = lens ? lens[i] : strlen(argv[i]);
        put_header(&n->out, '$', len);
        cw_buf_append(&n->out, argv[i], len);
        cw_buf_append(&n->out, "\r\n", 2);
    }
    return 0;
}

int cw_net_buffered_reply(cw_net *n, void **reply)
{
    *reply = NULL;
    if (n->err) return -1;
    return redisReaderGetReply(n->reader, reply) == REDIS_OK ? 0 : reader_failed(n);
}

int cw_net_read_reply(cw_net *n, void **reply)
{
    if (cw_net_buffered_reply(n, reply) != 0) return -1;
    if (*reply) return 0;
    int64_t deadline = cw_net_deadline(n->timeout_ms);
    int sent = n->out.len > n->out_sent;
    if (flush_out(n, deadline) != 0) return -1;
    for (;;) {
        if (fill(n, deadline, sent) != 0) return -1;
        sent = 0;
        if (cw_net_buffered_reply(n, reply) != 0) return -1;
        if (*reply) return 0;
    }
}

int cw_net_idle_ok(cw_net *n)
{
    if (n->err || n->fd < 0 || n->out.len > n->out_sent) return 0;
    struct pollfd p = {.fd = n->fd, .events = POLLIN};
    int rc;
    while ((rc = poll(&p, 1, 0)) < 0 && errno == EINTR) {
    }
    if (rc == 0) return 1;
    /* TLS: a record that carries no data (a session ticket, a key update) makes the
     * socket readable too; only data or a close makes the connection unusable. */
    return n->ssl ? cw_tls_idle_ok(n) : 0;
}

void cw_net_move(cw_net *dst, cw_net *src)
{
    *dst = *src;
    if (dst->ssl) cw_tls_moved(dst);
    cw_net_init(src);
}

void cw_net_close(cw_net *n)
{
    if (n->ssl) cw_tls_close(n);
    if (n->fd >= 0) close(n->fd);
    if (n->reader) redisReaderFree(n->reader);
    cw_buf_free(&n->out);
    cw_net_init(n);
}
