/* Does a port speak TLS? Asked only after a plain connection was closed or reset before
 * any reply (redis_net.c): Redis 7's TLS port does that to a plain client, and so does
 * a server that was killed with our request unread. A fresh connection sends a minimal
 * TLS 1.2 ClientHello; a TLS server answers with a record (a handshake, or an alert
 * when it dislikes the offer), whose first byte is 0x16 or 0x15, while a Redis plain
 * port waits for the end of an inline command and a dead server refuses to connect. */
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

int cw_net_peer_speaks_tls(const cw_net *n, int timeout_ms)
{
    if (n->peer_len == 0) return 0;
    int64_t deadline = cw_net_deadline(timeout_ms);
    int fd = socket(n->peer.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return 0;
    int tls = 0;
    if (connect(fd, (const struct sockaddr *)&n->peer, n->peer_len) != 0 && errno != EINPROGRESS)
        goto done; /* refused: the server is gone, whatever it spoke */
    if (cw_net_wait(fd, POLLOUT, deadline) <= 0) goto done;
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0) goto done;
    if (send(fd, client_hello, sizeof client_hello, MSG_NOSIGNAL) != (ssize_t)sizeof client_hello)
        goto done;
    if (cw_net_wait(fd, POLLIN, deadline) <= 0) goto done;
    unsigned char first = 0;
    tls = recv(fd, &first, 1, 0) == 1 && (first == 0x15 || first == 0x16);
done:
    close(fd);
    return tls;
}
