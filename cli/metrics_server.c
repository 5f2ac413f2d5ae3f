/* A small HTTP/1.1 server on one poll() thread: see metrics_server.h. */
#define _GNU_SOURCE
#include "metrics_server.h"

#include "work_text.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HEAD_MAX 8192 /* request line and headers */
#define CONN_MS 5000  /* a connection's whole life */
#define ACCEPTS_PER_ROUND 32
#define DRAIN_MS 1000 /* reading what follows a response, at most */

enum { READING, WRITING, DRAINING };

typedef struct conn {
    int fd; /* -1: free */
    int state;
    int64_t accepted_ms, deadline_ms;
    size_t in_len;
    char *out;
    size_t out_len, out_off;
    char in[HEAD_MAX];
} conn;

struct metrics_server {
    int listen_fd;
    int wake[2]; /* a byte on wake[1] stops the thread */
    pthread_t thread;
    metrics_route route;
    void *userdata;
    char url[128];
    conn *conns; /* METRICS_MAX_CONNS */
    size_t nconns;
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void conn_close(metrics_server *s, conn *c)
{
    if (c->fd < 0) return;
    close(c->fd);
    free(c->out);
    c->fd = -1;
    c->out = NULL;
    s->nconns--;
}

static const char *reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 431:
        return "Request Header Fields Too Large";
    case 503:
        return "Service Unavailable";
    default:
        return "Error";
    }
}

/* Puts the response in c->out and switches the connection to writing. */
static void respond(conn *c, int head_only, metrics_reply *r)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Cache-Control: no-store\r\n%sConnection: close\r\n\r\n",
                     r->status, reason(r->status),
                     r->content_type ? r->content_type : "text/plain; charset=utf-8", r->len,
                     r->status == 405 ? "Allow: GET, HEAD\r\n" : "");
    size_t body = head_only || !r->body ? 0 : r->len;
    c->out = malloc((size_t)n + body);
    if (c->out) {
        memcpy(c->out, head, (size_t)n);
        if (body) memcpy(c->out + n, r->body, body);
        c->out_len = (size_t)n + body;
    }
    free(r->body);
    c->out_off = 0;
    c->state = WRITING;
}

static void respond_text(conn *c, int status, const char *text)
{
    metrics_reply r = {status, NULL, strdup(text), strlen(text)};
    respond(c, 0, &r);
}

/* A complete request head is in c->in: answer it. */
static void handle_request(metrics_server *s, conn *c)
{
    char *line_end = memchr(c->in, '\n', c->in_len);
    *line_end = '\0';
    if (line_end > c->in && line_end[-1] == '\r') line_end[-1] = '\0';
    char *method = c->in, *sp1 = strchr(method, ' ');
    char *target = sp1 ? sp1 + 1 : NULL, *sp2 = target ? strchr(target, ' ') : NULL;
    if (!sp1 || !sp2 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0 || *target != '/') {
        respond_text(c, 400, "bad request\n");
        return;
    }
    *sp1 = *sp2 = '\0';
    int head_only = strcmp(method, "HEAD") == 0;
    if (!head_only && strcmp(method, "GET") != 0) {
        respond_text(c, 405, "only GET and HEAD\n");
        return;
    }
    target[strcspn(target, "?#")] = '\0';
    metrics_reply r = {404, NULL, NULL, 0};
    s->route(s->userdata, target, &r);
    respond(c, head_only, &r);
}

/* After the response: what the client still sends is read and dropped until it closes
 * (or DRAIN_MS pass), since closing with unread bytes would reset the connection and
 * could destroy the response before the client read it (a 431, a pipelined request). */
static void drain(metrics_server *s, conn *c)
{
    char scratch[4096];
    for (;;) {
        ssize_t n = recv(c->fd, scratch, sizeof scratch, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        conn_close(s, c); /* end of file, or an error */
        return;
    }
}

static void on_readable(metrics_server *s, conn *c)
{
    if (c->state == DRAINING) {
        drain(s, c);
        return;
    }
    ssize_t n;
    do
        n = recv(c->fd, c->in + c->in_len, HEAD_MAX - c->in_len, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
        conn_close(s, c);
        return;
    }
    size_t before = c->in_len;
    c->in_len += (size_t)n;
    /* The head ends at an empty line; look from a little before the new bytes. */
    size_t from = before > 3 ? before - 3 : 0;
    for (size_t i = from; i < c->in_len; i++) {
        if (c->in[i] != '\n') continue;
        if ((i >= 1 && c->in[i - 1] == '\n') ||
            (i >= 3 && c->in[i - 1] == '\r' && c->in[i - 2] == '\n' && c->in[i - 3] == '\r')) {
            handle_request(s, c);
            return;
        }
    }
    if (c->in_len == HEAD_MAX) respond_text(c, 431, "request head too large\n");
}

static void on_writable(metrics_server *s, conn *c)
{
    if (!c->out) { /* out of memory for the response */
        conn_close(s, c);
        return;
    }
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) break;
        c->out_off += (size_t)n;
    }
    shutdown(c->fd, SHUT_WR);
    c->state = DRAINING;
    free(c->out);
    c->out = NULL;
    int64_t until = mono_ms() + DRAIN_MS;
    if (until < c->deadline_ms) c->deadline_ms = until;
}

/* A free slot; when every one is taken, the oldest connection not being answered
 * (still sending its request, or done) is closed for it (NULL when all are). */
static conn *free_slot(metrics_server *s)
{
    conn *oldest = NULL;
    for (size_t i = 0; i < METRICS_MAX_CONNS; i++) {
        conn *c = &s->conns[i];
        if (c->fd < 0) return c;
        if (c->state != WRITING && (!oldest || c->accepted_ms < oldest->accepted_ms)) oldest = c;
    }
    if (oldest) conn_close(s, oldest);
    return oldest;
}

static void accept_some(metrics_server *s, int64_t now)
{
    for (int k = 0; k < ACCEPTS_PER_ROUND; k++) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return; /* EAGAIN, or a transient error (ECONNABORTED, EMFILE) */
        conn *c = free_slot(s);
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        c->state = READING;
        c->in_len = 0;
        c->out = NULL;
        c->out_len = c->out_off = 0;
        c->accepted_ms = now;
        c->deadline_ms = now + CONN_MS;
        s->nconns++;
    }
}

static void *serve(void *arg)
{
    metrics_server *s = arg;
    struct pollfd p[2 + METRICS_MAX_CONNS];
    conn *polled[METRICS_MAX_CONNS];
    for (;;) {
        int64_t now = mono_ms(), wait = 1000;
        p[0] = (struct pollfd){s->wake[0], POLLIN, 0};
        p[1] = (struct pollfd){s->listen_fd, POLLIN, 0};
        size_t np = 2, nc = 0;
        for (size_t i = 0; i < METRICS_MAX_CONNS; i++) {
            conn *c = &s->conns[i];
            if (c->fd < 0) continue;
            if (c->deadline_ms - now < wait) wait = c->deadline_ms - now;
            p[np++] = (struct pollfd){c->fd, (short)(c->state == WRITING ? POLLOUT : POLLIN), 0};
            polled[nc++] = c;
        }
        if (poll(p, np, (int)(wait > 0 ? wait : 0)) < 0 && errno != EINTR) break;
        if (p[0].revents) break;
        now = mono_ms();
        for (size_t i = 0; i < nc; i++) {
            conn *c = polled[i];
            short ev = p[2 + i].revents;
            if (c->fd >= 0 && ev & (POLLOUT | POLLERR | POLLHUP) && c->state == WRITING)
                on_writable(s, c);
            else if (c->fd >= 0 && ev & (POLLIN | POLLERR | POLLHUP))
                on_readable(s, c);
            if (c->fd >= 0 && now >= c->deadline_ms) conn_close(s, c);
        }
        if (p[1].revents & POLLIN) accept_some(s, now);
    }
    return NULL;
}

/* Binds the first address of host:port that takes it; fills url. -1 with err. */
static int bind_listen(metrics_server *s, const char *addr, char *err, size_t err_size)
{
    char host[256], port[8];
    if (work_listen_split(addr, host, sizeof host, port, sizeof port) != 0) {
        snprintf(err, err_size, "\"%s\" is not PORT, HOST:PORT or [V6]:PORT", addr);
        return -1;
    }
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0) {
        snprintf(err, err_size, "%s: %s", host, gai_strerror(gai));
        return -1;
    }
    int fd = -1, last_errno = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 128) != 0) {
            last_errno = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(err, err_size, "cannot listen on %s: %s", addr, strerror(last_errno));
        return -1;
    }
    struct sockaddr_storage ss = {0}; /* (AF_UNSPEC should getsockname fail) */
    socklen_t sl = sizeof ss;
    char numeric[INET6_ADDRSTRLEN + 2] = "", bound_port[8] = "";
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        getnameinfo((struct sockaddr *)&ss, sl, numeric, sizeof numeric, bound_port,
                    sizeof bound_port, NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(s->url, sizeof s->url, ss.ss_family == AF_INET6 ? "http://[%s]:%s" : "http://%s:%s",
             numeric, bound_port);
    s->listen_fd = fd;
    return 0;
}

metrics_server *metrics_server_start(const char *addr, metrics_route route, void *userdata,
                                     char *err, size_t err_size)
{
    metrics_server *s = calloc(1, sizeof *s);
    if (s) s->conns = calloc(METRICS_MAX_CONNS, sizeof *s->conns);
    if (!s || !s->conns) {
        if (s) free(s);
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    s->route = route;
    s->userdata = userdata;
    s->listen_fd = -1;
    s->wake[0] = s->wake[1] = -1;
    for (size_t i = 0; i < METRICS_MAX_CONNS; i++)
        s->conns[i].fd = -1;
    if (bind_listen(s, addr, err, err_size) != 0) goto fail;
    if (pipe2(s->wake, O_CLOEXEC) != 0) {
        snprintf(err, err_size, "cannot create a pipe: %s", strerror(errno));
        goto fail;
    }
    int rc = pthread_create(&s->thread, NULL, serve, s);
    if (rc != 0) {
        snprintf(err, err_size, "cannot start a thread: %s", strerror(rc));
        goto fail;
    }
    return s;
fail:
    if (s->listen_fd >= 0) close(s->listen_fd);
    if (s->wake[0] >= 0) close(s->wake[0]), close(s->wake[1]);
    free(s->conns);
    free(s);
    return NULL;
}

const char *metrics_server_url(const metrics_server *s)
{
    return s->url;
}

void metrics_server_stop(metrics_server *s)
{
    if (!s) return;
    while (write(s->wake[1], "x", 1) < 0 && errno == EINTR) {
    }
    pthread_join(s->thread, NULL);
    for (size_t i = 0; i < METRICS_MAX_CONNS; i++)
        conn_close(s, &s->conns[i]);
    close(s->listen_fd);
    close(s->wake[0]);
    close(s->wake[1]);
    free(s->conns);
    free(s);
}
