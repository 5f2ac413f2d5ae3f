/* What the transport's two halves (redis_net.c, redis_tls.c) both do: wait for a
 * socket until a deadline, and record the first failure of a connection. */
#include "redis_net.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>

int cw_net_fail(cw_net *n, int code, const char *fmt, ...)
{
    if (n->err) return -1; /* the first cause is the one worth reporting */
    n->err = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->errstr, sizeof n->errstr, fmt, ap);
    va_end(ap);
    return -1;
}

int64_t cw_net_deadline(int ms)
{
    return ms > 0 ? cw_monotonic_ms() + ms : 0;
}

int cw_net_wait(int fd, short events, int64_t deadline)
{
    for (;;) {
        int timeout = -1;
        if (deadline) {
            int64_t left = deadline - cw_monotonic_ms();
            if (left <= 0) return 0;
            timeout = left > INT_MAX ? INT_MAX : (int)left;
        }
        struct pollfd p = {.fd = fd, .events = events};
        int rc = poll(&p, 1, timeout);
        if (rc > 0) return 1; /* POLLERR/POLLHUP too: the next call reports the error */
        if (rc < 0 && errno != EINTR) return -1;
    }
}
