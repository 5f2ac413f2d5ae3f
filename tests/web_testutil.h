/* HTTP on a raw socket for the web server's tests: a request written by hand (method,
 * path, extra header lines, a body), the whole answer read back (status, headers, body).
 * No HTTP library: the tests see exactly the bytes the server sends. */
#ifndef CWORK_WEB_TESTUTIL_H
#define CWORK_WEB_TESTUTIL_H

#include "testlib.h"
#include "cwork_web.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct http_res {
    int status;
    char head[8192]; /* status line and headers */
    char body[262144];
    size_t len;
} http_res;

static int wt_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Case-insensitive strstr (strcasestr is a GNU extension). */
static const char *wt_find_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0) return hay;
    return NULL;
}

/* Set: wt_raw says nothing more after its bytes (shutdown SHUT_WR), as a client that
 * half-closes does. */
static __attribute__((unused)) int wt_half_close_;

/* Sends raw bytes, reads the whole answer (until the server closes or Content-Length
 * says). 0, or -1 when no HTTP answer came. */
static __attribute__((unused)) int wt_raw(int port, const char *raw, size_t rawlen, http_res *r)
{
    memset(r, 0, sizeof *r);
    int fd = wt_connect(port);
    if (fd < 0) return -1;
    if (rawlen && send(fd, raw, rawlen, MSG_NOSIGNAL) < 0) {
        close(fd);
        return -1;
    }
    if (wt_half_close_) shutdown(fd, SHUT_WR);
    size_t cap = sizeof r->head + sizeof r->body;
    char *buf = malloc(cap); /* per call: tests call this from several threads */
    size_t got = 0;
    ssize_t n;
    while (got < cap - 1 && (n = recv(fd, buf + got, cap - 1 - got, 0)) > 0) {
        got += (size_t)n;
        buf[got] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        const char *cl = end ? wt_find_ci(buf, "\r\nContent-Length: ") : NULL;
        if (end && cl && cl < end && got >= (size_t)(end + 4 - buf) + strtoul(cl + 18, NULL, 10))
            break;
    }
    close(fd);
    buf[got] = '\0';
    char *end = strstr(buf, "\r\n\r\n");
    if (!end || sscanf(buf, "HTTP/1.%*d %d", &r->status) != 1) {
        free(buf);
        return -1;
    }
    size_t hlen = (size_t)(end - buf) + 2;
    memcpy(r->head, buf, hlen < sizeof r->head ? hlen : sizeof r->head - 1);
    r->len = got - hlen - 2;
    memcpy(r->body, end + 4, r->len < sizeof r->body ? r->len : sizeof r->body - 1);
    free(buf);
    return 0;
}

/* METHOD path with Host, optional extra header lines ("Name: value\r\n"…) and an
 * optional body (sent with its Content-Length). */
static __attribute__((unused)) int wt_http(int port, const char *method, const char *path,
                                           const char *extra, const char *body, http_res *r)
{
    size_t blen = body ? strlen(body) : 0;
    size_t cap = strlen(path) + (extra ? strlen(extra) : 0) + blen + 256;
    char *req = malloc(cap);
    int n = snprintf(req, cap, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n%s",
                     method, path, port, extra ? extra : "");
    if (body)
        n += snprintf(req + n, cap - (size_t)n,
                      "Content-Type: application/json\r\nContent-Length: %zu\r\n", blen);
    n += snprintf(req + n, cap - (size_t)n, "\r\n%s", body ? body : "");
    int rc = wt_raw(port, req, (size_t)n, r);
    free(req);
    return rc;
}

/* A header's value (copied into a static buffer), or NULL. */
static __attribute__((unused)) const char *wt_header(const http_res *r, const char *name)
{
    static char val[1024];
    char pat[128];
    snprintf(pat, sizeof pat, "\r\n%s: ", name);
    const char *p = wt_find_ci(r->head, pat);
    if (!p) return NULL;
    p += strlen(pat);
    size_t n = strcspn(p, "\r\n");
    snprintf(val, sizeof val, "%.*s", (int)n, p);
    return val;
}

/* Whether a body is a JSON error as the server writes them: {"error": "…"}. */
static __attribute__((unused)) int wt_is_json_error(const http_res *r)
{
    return r->len > 12 && strncmp(r->body, "{\"error\": \"", 11) == 0 && r->body[r->len - 1] == '}';
}

#endif
