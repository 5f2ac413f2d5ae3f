/* The web server: libmicrohttpd with a small pool of threads, each an epoll event
 * loop, so that idle and slow clients cost a socket, not a thread (with a thread per
 * connection, 64 idle connects made the UI unreachable); a connection limit from the
 * process's file limit, a per-address limit, and a short inactivity timeout that drops
 * stalled (slowloris) requests. A listening socket of our own (so that port 0 and
 * errors are ours to report), basic auth, refusal to serve beyond loopback without it
 * unless told to, the host check against DNS rebinding, the origin check of changes,
 * security headers on every answer, and a graceful stop that lets requests in flight
 * finish. */
#include "web.h"

#include "flavor.h"
#include "log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WEB_DEFAULT_LISTEN "127.0.0.1:5040"
#define WEB_THREADS 4             /* event loops; a handler blocks its loop while Redis answers */
#define WEB_MAX_CONNECTIONS 10000 /* lowered to what the file limit allows */
#define WEB_FDS_KEPT 256          /* descriptors left for Redis, logs, the application */
#define WEB_PER_IP_CONNECTIONS 64 /* a browser opens 6; a proxy in front counts as one */
#define WEB_IDLE_TIMEOUT_S                                                                         \
    10                                    /* no byte for this long: a stalled request, or an idle  \
                                             keep-alive connection, is closed */
#define WEB_CONNECTION_MEMORY (32 * 1024) /* request line and headers must fit */
#define WEB_STOP_GRACE_MS 10000

/* What a browser may do with our pages: scripts and styles from this server only, no
 * inline script, no framing, requests only back to this server. */
#define WEB_CSP                                                                                    \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "              \
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

void cwork_web_options_init(cwork_web_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->listen = WEB_DEFAULT_LISTEN;
}

static enum MHD_Result send_response(struct MHD_Connection *conn, web_response *res)
{
    static const char empty[] = "";
    struct MHD_Response *r;
    if (res->body_static || !res->body || res->len == 0) {
        r = MHD_create_response_from_buffer(res->len, res->body ? (void *)res->body : (void *)empty,
                                            MHD_RESPMEM_PERSISTENT);
        if (!res->body_static) cw_free(res->body);
    } else {
        r = MHD_create_response_from_buffer_with_free_callback(res->len, res->body, cw_free);
        if (!r) cw_free(res->body);
    }
    res->body = NULL;
    if (!r) {
        cw_free(res->damaged);
        res->damaged = NULL;
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type",
                            res->content_type ? res->content_type : WEB_JSON_TYPE);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Content-Security-Policy", WEB_CSP);
    MHD_add_response_header(r, "Referrer-Policy", "same-origin");
    MHD_add_response_header(r, "Cache-Control", res->etag ? "no-cache" : "no-store");
    if (res->etag) MHD_add_response_header(r, "ETag", res->etag);
    if (res->allow) MHD_add_response_header(r, "Allow", res->allow);
    if (res->www_authenticate)
        MHD_add_response_header(r, "WWW-Authenticate", "Basic realm=\"cwork\", charset=\"UTF-8\"");
    if (res->location) MHD_add_response_header(r, "Location", res->location);
    if (res->damaged) MHD_add_response_header(r, "X-Cwork-Damaged", res->damaged);
    cw_free(res->damaged);
    res->damaged = NULL;
    enum MHD_Result ok = MHD_queue_response(conn, res->status, r);
    MHD_destroy_response(r);
    return ok;
}

/* ---------------------------------------------------------------- checks */

static web_method method_of(const char *m)
{
    if (strcmp(m, "GET") == 0) return WEB_GET;
    if (strcmp(m, "HEAD") == 0) return WEB_HEAD;
    if (strcmp(m, "POST") == 0) return WEB_POST;
    if (strcmp(m, "OPTIONS") == 0) return WEB_OPTIONS;
    return WEB_OTHER;
}

static void handle(cwork_web *web, struct MHD_Connection *conn, const char *url, const char *method,
                   const cw_buf *body, size_t target_len, web_response *res)
{
    web_request req = {web, conn, method_of(method), url, body->len ? body->data : NULL, body->len};
    if (target_len > WEB_MAX_URL) {
        cw_web_error(res, 414, "request target longer than %d bytes", WEB_MAX_URL);
        return;
    }
    /* A page of another site whose name was re-pointed at 127.0.0.1 (DNS rebinding)
     * reaches a loopback server with its own name in Host: refuse it. */
    const char *host = cw_web_header(conn, "Host");
    if (web->loopback && host && !cw_web_host_is_loopback(host)) {
        cw_web_error(res, 403, "host not allowed: this server listens on loopback only");
        return;
    }
    if (web->auth && !cw_web_basic_auth_ok(cw_web_header(conn, "Authorization"), web->auth)) {
        cw_web_error(res, 401, "authentication required");
        res->www_authenticate = 1;
        return;
    }
    if (url[0] != '/') {
        cw_web_error(res, 400, "request target must be a path");
        return;
    }
    cwork_client_damage_clear(); /* this thread's list: what this request meets */
    cw_web_route(&req, res);
    cw_web_add_damage(res);
}

/* Per request, from its request line on: the length of the whole target (path and
 * query), how much body arrived (a big one is refused), what of it is kept (the bulk
 * routes read a list of jobs) and whether an answer went out already. */
typedef struct web_call {
    size_t target_len;
    size_t body_bytes;
    cw_buf body;
    int started; /* the handler has seen the headers */
    int answered;
} web_call;

/* Called by libmicrohttpd with the request line's target, query included, before the
 * headers: its return value is the request's context (*req_cls) from then on, and
 * on_completed is called for it whatever happens next. */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *conn)
{
    cwork_web *web = cls;
    web_call *call = cw_calloc(1, sizeof *call);
    if (!call) return NULL; /* on_request then refuses the request */
    call->target_len = strlen(uri);
    cw_mutex_lock(&web->mu);
    web->inflight++;
    cw_mutex_unlock(&web->mu);
    return call;
}

#define WEB_MAX_BODY (64 * 1024)

/* libmicrohttpd calls this once when the headers are in, then once per piece of body,
 * then once more with no data: the answer is given then, which keeps the connection
 * alive for the next request (an answer given earlier closes it). */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    cwork_web *web = cls;
    web_call *call = *req_cls;
    web_response res = {0};
    if (!call) return MHD_NO; /* out of memory at the request line */
    if (!call->started) {
        call->started = 1;
        /* A big body announced is refused before it is read (an early answer, after
         * which the connection closes); one sent without a length is cut off below. */
        const char *cl = cw_web_header(conn, "Content-Length");
        uint64_t n = 0;
        if (!cl || (cw_web_parse_uint(cl, strlen(cl), UINT64_MAX, &n) == 0 && n <= WEB_MAX_BODY))
            return MHD_YES;
        cw_web_error(&res, 413, "request body larger than %d bytes", WEB_MAX_BODY);
    } else if (call->answered || *upload_data_size > 0) {
        call->body_bytes += *upload_data_size;
        if (!call->answered && call->body_bytes <= WEB_MAX_BODY)
            cw_buf_append(&call->body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return call->answered || call->body_bytes <= WEB_MAX_BODY ? MHD_YES : MHD_NO;
    } else if (call->body.oom) {
        cw_web_error(&res, 500, "out of memory");
    } else {
        handle(web, conn, url, method, &call->body, call->target_len, &res);
    }
    call->answered = 1;
    if (cw_log_enabled(CWORK_LOG_DEBUG)) {
        char status[16];
        snprintf(status, sizeof status, "%u", res.status);
        cw_log(CWORK_LOG_DEBUG, "web.request", "method", method, "path", url, "status", status,
               NULL);
    }
    return send_response(conn, &res);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    cwork_web *web = cls;
    web_call *call = *req_cls;
    if (!call) return;
    *req_cls = NULL;
    cw_buf_free(&call->body);
    cw_free(call);
    cw_mutex_lock(&web->mu);
    CW_ASSERT(web->inflight > 0);
    if (--web->inflight == 0) pthread_cond_broadcast(&web->idle);
    cw_mutex_unlock(&web->mu);
}

/* No decoding by libmicrohttpd: routes decode each path segment themselves, so that
 * "%2F" inside an id does not split it. Query values come through raw as well. */
static size_t keep_escaped(void *cls, struct MHD_Connection *conn, char *s)
{
    return strlen(s);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    if (!cw_log_enabled(CWORK_LOG_DEBUG)) return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && msg[n - 1] == '\n')
        msg[--n] = '\0';
    cw_log(CWORK_LOG_DEBUG, "web.http", "message", msg, NULL);
}

/* ---------------------------------------------------------------- listening socket */

/* Parses "HOST:PORT", "[V6]:PORT" or ":PORT" (every interface, as Go's ":5040"). */
static int parse_listen(const char *addr, char *host, size_t hcap, char *port, size_t pcap,
                        cwork_error *err)
{
    const char *colon = strrchr(addr, ':');
    if (!colon) return cw_error(err, CWORK_EINVAL, "listen address \"%s\" must be HOST:PORT", addr);
    const char *h = addr;
    size_t hlen = (size_t)(colon - addr);
    if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    size_t plen = strlen(colon + 1);
    if (hlen >= hcap || plen == 0 || plen >= pcap || strspn(colon + 1, "0123456789") != plen ||
        strtol(colon + 1, NULL, 10) > 65535)
        return cw_error(err, CWORK_EINVAL, "listen address \"%s\" must be HOST:PORT", addr);
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    memcpy(port, colon + 1, plen + 1);
    if (host[0] == '\0') snprintf(host, hcap, "0.0.0.0");
    return 0;
}

static int open_listener(cwork_web *web, const char *addr, cwork_error *err)
{
    char host[256], port[8];
    int rc = parse_listen(addr, host, sizeof host, port, sizeof port, err);
    if (rc != 0) return rc;
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host, port, &hints, &ai);
    if (gai != 0)
        return cw_error(err, CWORK_EINVAL, "listen address \"%s\": %s", addr, gai_strerror(gai));
    int fd = -1, saved = 0;
    for (struct addrinfo *p = ai; p && fd < 0; p = p->ai_next) {
        fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, p->ai_addr, p->ai_addrlen) != 0 || listen(fd, 128) != 0) {
            saved = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0)
        return cw_error(err, CWORK_EINVAL, "cannot listen on %s: %s", addr, strerror(saved));
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char ip[INET6_ADDRSTRLEN] = "?";
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            web->port = ntohs(a->sin_port);
            web->loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
            inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
            snprintf(web->bound, sizeof web->bound, "%s:%d", ip, web->port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            web->port = ntohs(a->sin6_port);
            web->loopback =
                IN6_IS_ADDR_LOOPBACK(&a->sin6_addr) ||
                (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && a->sin6_addr.s6_addr[12] == 127);
            inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
            snprintf(web->bound, sizeof web->bound, "[%s]:%d", ip, web->port);
        }
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    web->listen_fd = fd;
    return 0;
}

/* ---------------------------------------------------------------- start and stop */

/* As many connections as the file limit allows beside everything else the process
 * keeps open, at most WEB_MAX_CONNECTIONS (a process that wants more raises its limit
 * first; cwork web raises its soft limit to the hard one). */
static unsigned web_connection_limit(void)
{
    struct rlimit rl;
    rlim_t n = WEB_MAX_CONNECTIONS;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        n = rl.rlim_cur > WEB_FDS_KEPT + 64 ? rl.rlim_cur - WEB_FDS_KEPT : 64;
    return (unsigned)(n < WEB_MAX_CONNECTIONS ? n : WEB_MAX_CONNECTIONS);
}

static void web_free(cwork_web *web)
{
    if (web->is_view) { /* a view owns only these */
        cwork_client_free(web->client);
        cw_keys_clear(&web->keys);
        cw_free(web->ns);
        cw_free(web);
        return;
    }
    for (size_t i = 1; i < web->n_views; i++)
        web_free(web->views[i]);
    cw_free(web->views);
    cw_free(web->base_path);
    cw_free(web->base_redirect);
    if (web->listen_fd >= 0) close(web->listen_fd);
    cwork_client_free(web->client);
    cw_keys_clear(&web->keys);
    cw_free(web->ns);
    if (web->auth) {
        memset(web->auth, 0, strlen(web->auth));
        cw_free(web->auth);
    }
    pthread_cond_destroy(&web->idle);
    cw_mutex_destroy(&web->mu);
    cw_free(web);
}

#define WEB_MAX_NAMESPACES 64

/* A base path as given ("/jobs" or "/jobs/") in the form kept ("/jobs"); NULL for none
 * ("" or "/"). 0, or CWORK_EINVAL / CWORK_ENOMEM. */
static int copy_base_path(const char *in, char **out, cwork_error *err)
{
    *out = NULL;
    if (!in || !*in || strcmp(in, "/") == 0) return 0;
    size_t n = strlen(in);
    while (n > 1 && in[n - 1] == '/')
        n--;
    if (in[0] != '/' || strpbrk(in, "?#%\\ \t\r\n") || strstr(in, "..") || strstr(in, "//") ||
        n > 200)
        return cw_error(err, CWORK_EINVAL,
                        "base path \"%s\" must be a path like /jobs (no '?', '#', '%%', "
                        "spaces, \"..\" or \"//\")",
                        in);
    if (!(*out = cw_strndup(in, n))) return cw_error(err, CWORK_ENOMEM, "out of memory");
    return 0;
}

/* "/a/jobs" → "jobs/": the relative Location that takes "/a/jobs" to "/a/jobs/". */
static char *base_redirect(const char *base)
{
    const char *last = strrchr(base, '/') + 1;
    size_t n = strlen(last);
    char *r = cw_malloc(n + 2);
    if (r) {
        memcpy(r, last, n);
        memcpy(r + n, "/", 2);
    }
    return r;
}

/* The views of the namespaces after the first (see web.h): copies of web with a client,
 * keys and name of their own. */
static int add_views(cwork_web *web, const cwork_web_options *opts, cwork_error *err)
{
    if (opts->n_namespaces > WEB_MAX_NAMESPACES || (opts->n_namespaces && !opts->namespaces))
        return cw_error(err, CWORK_EINVAL, "at most %d namespaces", WEB_MAX_NAMESPACES);
    web->views = cw_calloc(1 + opts->n_namespaces, sizeof *web->views);
    if (!web->views) return cw_error(err, CWORK_ENOMEM, "out of memory");
    web->views[0] = web;
    web->n_views = 1;
    for (size_t i = 0; i < opts->n_namespaces; i++) {
        const char *ns = opts->namespaces[i];
        int dup = !ns;
        for (size_t j = 0; !dup && j < web->n_views; j++)
            dup = strcmp(web->views[j]->ns, ns) == 0;
        if (dup) continue; /* NULL or listed twice */
        cwork_web *v = cw_malloc(sizeof *v);
        if (!v) return cw_error(err, CWORK_ENOMEM, "out of memory");
        *v = *web;
        v->is_view = 1;
        v->views = NULL;
        v->n_views = 0;
        v->pool = NULL; /* the pool works in the first namespace */
        v->client = NULL;
        v->keys.prefix = NULL;
        v->ns = cw_strdup(ns);
        if (!v->ns || cw_keys_init(&v->keys, ns) != 0) {
            web_free(v);
            return cw_error(err, CWORK_ENOMEM, "out of memory");
        }
        cwork_error e = {0};
        if (!(v->client = cwork_client_new(web->redis, ns, &e))) {
            web_free(v);
            if (err) *err = e;
            return e.code ? e.code : CWORK_ENOMEM;
        }
        cwork_client_set_go_flavor(v->client, web->flavor);
        web->views[web->n_views++] = v;
    }
    for (size_t i = 1; i < web->n_views; i++) { /* borrowed: every view knows them all */
        web->views[i]->views = web->views;
        web->views[i]->n_views = web->n_views;
    }
    return 0;
}

cwork_web *cwork_web_start(cwork_redis *redis, const char *ns, const cwork_web_options *opts,
                           cwork_error *err)
{
    cwork_web_options defaults;
    if (!opts) {
        cwork_web_options_init(&defaults);
        opts = &defaults;
    }
    if (!redis || !ns) {
        cw_error(err, CWORK_EINVAL, "cwork_web_start needs a Redis pool and a namespace");
        return NULL;
    }
    if (cw_go_flavor_check(opts->go_flavor, "cwork_web_start", err) != 0) return NULL;
    const char *auth = opts->auth;
    if (auth && *auth && !strchr(auth, ':')) {
        cw_error(err, CWORK_EINVAL, "web auth must be USER:PASSWORD");
        return NULL;
    }
    cwork_web *web = cw_calloc(1, sizeof *web);
    if (!web) {
        cw_error(err, CWORK_ENOMEM, "out of memory");
        return NULL;
    }
    web->listen_fd = -1;
    web->redis = redis;
    web->pool = opts->pool;
    cw_mutex_init(&web->mu);
    pthread_cond_init(&web->idle, NULL);
    web->ns = cw_strdup(ns);
    web->auth = auth && *auth ? cw_strdup(auth) : NULL;
    if (!web->ns || (auth && *auth && !web->auth) || cw_keys_init(&web->keys, ns) != 0) {
        cw_error(err, CWORK_ENOMEM, "out of memory");
        web_free(web);
        return NULL;
    }
    web->flavor = opts->go_flavor;
    web->read_only = opts->read_only;
    web->client = cwork_client_new(redis, ns, err);
    if (web->client) cwork_client_set_go_flavor(web->client, web->flavor);
    if (!web->client || copy_base_path(opts->base_path, &web->base_path, err) != 0 ||
        (web->base_path && !(web->base_redirect = base_redirect(web->base_path)) &&
         cw_error(err, CWORK_ENOMEM, "out of memory")) ||
        add_views(web, opts, err) != 0 ||
        open_listener(web, opts->listen ? opts->listen : WEB_DEFAULT_LISTEN, err) != 0) {
        web_free(web);
        return NULL;
    }
    for (size_t i = 1; i < web->n_views; i++) { /* what open_listener found out */
        web->views[i]->port = web->port;
        web->views[i]->loopback = web->loopback;
        memcpy(web->views[i]->bound, web->bound, sizeof web->bound);
    }
    /* Beyond loopback without a password, any page of any site a browser on the network
     * opens can drive this server (its Host check only protects loopback against DNS
     * rebinding): only when asked for. */
    if (!web->loopback && !web->auth && !opts->insecure) {
        cw_error(err, CWORK_EINVAL,
                 "refusing to serve %s beyond loopback without a password: give auth "
                 "(user:password), listen on 127.0.0.1, or accept the risk with insecure",
                 web->bound);
        web_free(web);
        return NULL;
    }
    /* libmicrohttpd's threads inherit this mask: no application signal handler runs on
     * them (cw_thread_create's rule for library threads). */
    sigset_t old;
    cw_block_async_signals(&old);
    unsigned flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    web->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, web, MHD_OPTION_LISTEN_SOCKET, web->listen_fd,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)WEB_THREADS, MHD_OPTION_URI_LOG_CALLBACK,
        on_request_line, web, MHD_OPTION_NOTIFY_COMPLETED, on_completed, web,
        MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped, NULL, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        MHD_OPTION_CONNECTION_LIMIT, web_connection_limit(), MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned)WEB_PER_IP_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)WEB_IDLE_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)WEB_CONNECTION_MEMORY, MHD_OPTION_END);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!web->daemon) {
        cw_error(err, CWORK_EINVAL, "cannot start the HTTP server on %s", web->bound);
        web_free(web);
        return NULL;
    }
    cw_log(CWORK_LOG_INFO, "web.start", "listen", web->bound, "namespace", ns, NULL);
    if (!web->loopback && !web->auth)
        cw_log(CWORK_LOG_WARN, "web.no_auth", "listen", web->bound, "message",
               "insecure: the web UI is reachable beyond this machine without a password; "
               "give it auth (user:password) or listen on 127.0.0.1",
               NULL);
    return web;
}

int cwork_web_port(const cwork_web *web)
{
    return web ? web->port : -1;
}

void cwork_web_free(cwork_web *web)
{
    if (!web) return;
    /* Stop accepting, let the requests in flight finish (bounded), then stop. */
    MHD_socket fd = MHD_quiesce_daemon(web->daemon);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += WEB_STOP_GRACE_MS / 1000;
    cw_mutex_lock(&web->mu);
    while (web->inflight > 0)
        if (cw_cond_timedwait(&web->idle, &web->mu, &deadline) == ETIMEDOUT) break;
    cw_mutex_unlock(&web->mu);
    MHD_stop_daemon(web->daemon);
    if (fd == MHD_INVALID_SOCKET) web->listen_fd = -1; /* closed by MHD_stop_daemon */
    cw_log(CWORK_LOG_INFO, "web.stop", "listen", web->bound, NULL);
    web_free(web);
}
