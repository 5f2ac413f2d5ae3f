/* Internal pieces of the web server (src/web/): the server object, the request as the
 * router sees it, the response a route fills, and the helpers they share.
 *
 * server.c  libmicrohttpd set-up, threads, auth, host and origin checks, responses
 * request.c percent-decoding, query parameters, basic auth, origins
 * routes.c  the route table and the JSON routes (PROTOCOL §12.1 plus cwork's own)
 * metrics.c the namespace snapshot behind /metrics and /summary */
#ifndef CW_WEB_INTERNAL_H
#define CW_WEB_INTERNAL_H

#include "cwork_web.h"
#include "keys.h"
#include "mutex.h"
#include "util.h"

#include <pthread.h>

struct MHD_Daemon;
struct MHD_Connection;

/* Longest request target (path and query) answered; longer ones get 414. */
#define WEB_MAX_URL 4096

struct cwork_web {
    cwork_redis *redis; /* borrowed */
    cwork_client *client;
    cw_keys keys;
    char *ns;
    cwork_pool *pool;       /* borrowed, optional */
    cwork_go_flavor flavor; /* of the JSON bodies of jobs */
    char *auth;             /* "user:password", or NULL for none */
    struct MHD_Daemon *daemon;
    int listen_fd;
    int port;
    int loopback;   /* bound to a loopback address */
    char bound[64]; /* "127.0.0.1:5040" or "[::1]:5040" */
    cw_mutex mu;
    pthread_cond_t idle; /* signalled when inflight drops to 0 */
    int inflight;        /* requests between their first handler call and completion */
    char *base_path;     /* "/jobs" (no trailing '/'), or NULL */
    char *base_redirect; /* "jobs/": where "/jobs" redirects (relative), or NULL */
    int read_only;
    /* Every namespace served, the first being the server's: views[i] is a copy of the
     * server whose client, keys and ns are those of namespace i (views[0] is the server
     * itself; the views borrow its array). Routes see the view of the request's ?ns= as
     * req->web. */
    cwork_web **views;
    size_t n_views;
    int is_view; /* a view: owns only its client, keys and ns */
};

typedef enum web_method { WEB_GET, WEB_HEAD, WEB_POST, WEB_OPTIONS, WEB_OTHER } web_method;

typedef struct web_request {
    cwork_web *web;
    struct MHD_Connection *conn;
    web_method method;
    const char *path; /* raw (still percent-encoded), without the query; starts with '/' */
    const char *body; /* the request body (POST), NUL-terminated, or NULL when none */
    size_t body_len;
} web_request;

typedef struct web_response {
    unsigned status;
    const char *content_type;
    char *body; /* cwork-allocated (freed with cw_free) unless body_static */
    size_t len;
    int body_static;      /* body points to static storage (embedded assets) */
    const char *allow;    /* Allow header: 405 and OPTIONS */
    const char *etag;     /* embedded assets */
    int www_authenticate; /* 401: ask for basic auth */
    const char *location; /* a redirect's Location (static or the server's) */
    char *damaged;        /* X-Cwork-Damaged: the damaged keys met, or NULL (cw_free'd) */
} web_response;

#define WEB_JSON_TYPE "application/json; charset=utf-8"

/* ---- responses (response.c) */

/* Adds the damaged keys the request's client calls met on this thread (damage.c): a
 * "damaged" member to a JSON object body, and res->damaged for every answer. */
void cw_web_add_damage(web_response *res);

/* 200 with a JSON body taken over from the caller (cw_free'd later). */
void cw_web_ok_json(web_response *res, char *body, size_t len);
/* 200 with the compact JSON in b indented (500 when memory ran out); frees b. */
void cw_web_ok_indented(web_response *res, cw_buf *b);
/* A JSON error {"error": "<message>"} with Go's escaping. */
void cw_web_error(web_response *res, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The error of a failed client call: 404 for CWORK_ENOTFOUND, 400 for CWORK_EINVAL,
 * 503 when Redis is unreachable or too slow, 500 otherwise. */
void cw_web_client_error(web_response *res, int rc, const cwork_error *err);
/* Whether a POST may change something: its Origin (or, without one, its Referer) names
 * this server's own host:port, or it sends neither (scripts). */
int cw_web_post_allowed(const web_request *req);
/* A request header's value, or NULL. */
const char *cw_web_header(struct MHD_Connection *conn, const char *name);

/* ---- request parsing (request.c) */

/* Decodes %XX escapes of s[0..len) into a fresh NUL-terminated string (cw_free).
 * 0; -1 for a malformed escape or an escaped NUL; CWORK_ENOMEM. */
int cw_web_percent_decode(const char *s, size_t len, char **out);
/* The decoded value of query parameter key (the first when repeated), or *out = NULL
 * when absent. 0, -1 for bad encoding, CWORK_ENOMEM. */
int cw_web_query(const web_request *req, const char *key, char **out);
/* A whole decimal number without sign, at most max. 0 or -1. */
int cw_web_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out);
/* Whether the Authorization header value carries basic credentials equal to expected
 * ("user:password"); the comparison takes the same time wherever they differ. */
int cw_web_basic_auth_ok(const char *header, const char *expected);
/* Whether the host of a Host header value (port ignored) is a loopback name. */
int cw_web_host_is_loopback(const char *host);
/* Whether origin (an Origin value or a Referer URL) names the authority `host` (a Host
 * header value). Default ports of the origin's scheme are ignored on both sides. */
int cw_web_origin_matches(const char *origin, const char *host);

/* ---- JSON helpers (response.c) */

/* Appends compact JSON text re-indented with tabs the way Go's MarshalIndent does,
 * as if nested `depth` levels deep. The text must be valid JSON. */
void cw_web_json_indent(cw_buf *out, const char *json, size_t len, int depth);

/* ---- routing (routes.c) */

/* Matches the request to a route and fills the response (404, 405, 403, or the
 * route's answer). */
void cw_web_route(const web_request *req, web_response *res);

/* ---- snapshot, /metrics and /summary (metrics.c) */

typedef struct web_snapshot {
    int64_t now;
    cwork_queue_info *queues;
    size_t n_queues;
    int64_t retry, scheduled, dead;
    size_t busy_workers;
    size_t pools_live, pools_stale; /* live: a heartbeat within WEB_POOL_DEAD_S */
    uint64_t workers_live;          /* concurrency summed over live pools */
} web_snapshot;

/* A pool whose heartbeat is older than this counts as stale (the reaper's dead time). */
#define WEB_POOL_DEAD_S 10

int cw_web_snapshot_take(cwork_web *web, web_snapshot *s, cwork_error *err);
void cw_web_snapshot_clear(web_snapshot *s);

void cw_web_route_metrics(const web_request *req, web_response *res);
void cw_web_route_summary(const web_request *req, web_response *res);

/* ---- the UI's own routes (routes_ui.c): dashboard, browsing, bulk changes */

/* Answers req when its path is one of the UI's routes (1), else 0 (res untouched).
 * Method checks, the origin check of changes and read-only are done here as for the
 * other routes. */
int cw_web_ui_route(const web_request *req, web_response *res);
/* The Doctor page's routes (routes_doctor.c): GET /doctor, POST /doctor_repair. */
void cw_web_route_doctor(const web_request *req, web_response *res);
void cw_web_route_doctor_repair(const web_request *req, web_response *res);
/* The dashboard's throughput graph and Redis panel (routes_dashboard.c): GET /throughput,
 * GET /redis_info. */
void cw_web_route_throughput(const web_request *req, web_response *res);
void cw_web_route_redis_info(const web_request *req, web_response *res);
/* The table of a sharded namespace's shards (routes_shards.c): GET /shards. */
void cw_web_route_shards(const web_request *req, web_response *res);
/* ?per_page= (1–1000, default 20) and ?order= (newest or oldest, default oldest) of the
 * list routes. 0, or -1 (res: 400). */
/* ?periodic=hide|show of a set's list (default show): hide leaves out the instances of
 * periodic jobs (CWORK_LIST_SKIP_PERIODIC). 0, or -1 with a 400 answered. */
int cw_web_periodic_param(const web_request *req, web_response *res, bool *skip_periodic);
int cw_web_list_options(const web_request *req, web_response *res, unsigned *per_page,
                        bool *newest_first);

/* ---- where a request goes (routes.c) */

/* The view (namespace) a request asks for with ?ns=, or NULL with res filled (400 for a
 * bad value, 404 for a namespace this server does not serve). */
cwork_web *cw_web_pick_view(const web_request *req, web_response *res);

/* ?shard=N (routes_shard_view.c): 0 when the request has none; 1 with *out the view of
 * shard N of req->web's namespace for this request (its client, keys and ns the
 * shard's; free with cw_web_shard_view_clear); -1 with res filled (400 for a number
 * out of range, naming the count; 503 when Redis fails). */
int cw_web_shard_view(const web_request *req, cwork_web *out, web_response *res);
void cw_web_shard_view_clear(cwork_web *view);

/* The server holding a shard (routes_shards_node.c): the peer address of one of its
 * client's connections into out ("" when none can be had). No round trip. */
void cw_web_shard_node(cwork_client *shard, char *out, size_t size);

#endif
