/* A small HTTP/1.1 server for `cwork work --metrics-listen`: GET and HEAD of a few
 * fixed paths, each answered by a callback, one response per connection.
 *
 * Why not libmicrohttpd, which the web UI uses: `cwork work` would then need the web
 * library (and its TLS stack) that an enqueue-and-work build can leave out, for two
 * routes whose requests are a line and a few headers. One thread serves every
 * connection with poll(): at most METRICS_MAX_CONNS at once (when full, the oldest
 * still sending its request is closed to make room, so idle sockets cannot lock a
 * scraper out), a request head of at most 8 KiB, 5 s per connection. The callback runs
 * on that thread and must not block (no Redis calls). */
#ifndef CWORK_CLI_METRICS_SERVER_H
#define CWORK_CLI_METRICS_SERVER_H

#include <stddef.h>

#define METRICS_MAX_CONNS 64

typedef struct metrics_reply {
    int status;               /* 200, 404, 503 … */
    const char *content_type; /* static */
    char *body;               /* malloc'd, taken by the server (NULL: empty) */
    size_t len;
} metrics_reply;

/* Fills *reply for path (the request target without its query). */
typedef void (*metrics_route)(void *userdata, const char *path, metrics_reply *reply);

typedef struct metrics_server metrics_server;

/* Listens on addr (work_listen_split's forms) and serves on a thread of its own
 * (created with the caller's signal mask). NULL with why in err on failure. */
metrics_server *metrics_server_start(const char *addr, metrics_route route, void *userdata,
                                     char *err, size_t err_size);
/* "http://HOST:PORT" as bound (the real port when addr asked for 0). */
const char *metrics_server_url(const metrics_server *s);
/* Stops the thread, closes every connection, frees. NULL is ignored. */
void metrics_server_stop(metrics_server *s);

#endif
