/* What does a port speak? Asked only after a plain connection was closed or reset before
 * any reply (redis_net.c): Redis 7's TLS port does that to a plain client, so does a
 * server that was killed with our request unread, and so do HTTP servers that drop a
 * request line they cannot parse. A fresh connection sends a minimal TLS 1.2
 * ClientHello; a TLS server answers with a record (a handshake, or an alert when it
 * dislikes the offer), whose first byte is 0x16 or 0x15, an HTTP server that answers
 * garbage answers it with a status line, while a Redis plain port waits for the end of
 * an inline command and a dead server refuses to connect. When the hello gets no
 * answer, a second connection asks with an HTTP HEAD request, which only an HTTP server
 * answers with "HTTP/". */
#include "redis_net.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

/* The ClientHello: record header, handshake header, version 1.2, 32 zero bytes of
 * random, no session id, two cipher suites, no compression, no extensions. */
static const unsigned char client_hello[] = {
    0x16, 0x03, 0x01, 0x00, 49,                        /* handshake record, 49 bytes */
    0x01, 0x00, 0x00, 45,                              /* ClientHello, 45 bytes */
    0x03, 0x03,                                        /* TLS 1.2 */
    0,    0,    0,    0,    0,    0,    0, 0, 0, 0, 0, /* random (32) */
    0,    0,    0,    0,    0,    0,    0, 0, 0, 0, 0, /* */
    0,    0,    0,    0,    0,    0,    0, 0, 0, 0,    /* */
    0x00,                                              /* session id length */
    0x00, 0x04, 0xc0, 0x2f, 0x13, 0x01,                /* cipher suites */
    0x01, 0x00,                                        /* compression: null */
    0x00, 0x00,                                        /* extensions length */
};

int cw_net_looks_http(const char *p, size_t len)
{
    static const char status[] = "HTTP/";
    if (len == 0) return 0;
    if (p[0] == '<') return 1;
    size_t n = len < sizeof status - 1 ? len : sizeof status - 1;
    return memcmp(p, status, n) == 0;
}

/* Connects to n's peer, sends hello and reads the first bytes of the answer into buf
 * before the deadline: how many (0 when refused, closed or silent). */
static size_t ask(const cw_net *n, const void *hello, size_t hello_len, int64_t deadline, char *buf,
                  size_t size)
{
    int fd = socket(n->peer.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return 0;
    ssize_t got = 0;
    if (connect(fd, (const struct sockaddr *)&n->peer, n->peer_len) != 0 && errno != EINPROGRESS)
        goto done; /* refused: the server is gone, whatever it spoke */
    if (cw_net_wait(fd, POLLOUT, deadline) <= 0) goto done;
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0) goto done;
    if (send(fd, hello, hello_len, MSG_NOSIGNAL) != (ssize_t)hello_len) goto done;
    if (cw_net_wait(fd, POLLIN, deadline) <= 0) goto done;
    got = recv(fd, buf, size, 0);
done:
    close(fd);
    return got > 0 ? (size_t)got : 0;
}

int cw_net_peer_answers_http(const cw_net *n, int timeout_ms)
{
    static const char head[] =
        "HEAD / HTTP/1.0\r\n\r\n"; /* no Host: Redis takes that for an attack */
    char buf[8];
    if (n->peer_len == 0) return 0;
    size_t got = ask(n, head, sizeof head - 1, cw_net_deadline(timeout_ms), buf, sizeof buf);
    return got >= 5 && cw_net_looks_http(buf, got);
}

cw_peer_kind cw_net_peer_kind(const cw_net *n, int timeout_ms)
{
    if (n->peer_len == 0) return CW_PEER_UNKNOWN;
    /* Half the time for the hello: an HTTP server that waits for the end of a request
     * line never answers it, and the HEAD request needs the rest. */
    char buf[8];
    size_t got =
        ask(n, client_hello, sizeof client_hello, cw_net_deadline(timeout_ms / 2), buf, sizeof buf);
    if (got && (buf[0] == 0x15 || buf[0] == 0x16)) return CW_PEER_TLS;
    if (got) return cw_net_looks_http(buf, got) ? CW_PEER_HTTP : CW_PEER_UNKNOWN;
    return cw_net_peer_answers_http(n, timeout_ms - timeout_ms / 2) ? CW_PEER_HTTP
                                                                    : CW_PEER_UNKNOWN;
}
