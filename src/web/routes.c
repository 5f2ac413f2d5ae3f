/* The routes of the web server. workwebui's (PROTOCOL §12.1) keep their paths, methods and
 * bodies (built by the client's *_json functions); bad parameters answer 400 and a
 * missing job 404 with a JSON error instead of Go's unescaped 500s (PROTOCOL §16.14).
 * cwork adds:
 *
 *   GET  /retry_jobs, /scheduled_jobs, /dead_jobs ?name=N   only jobs of name N
 *        ?per_page=S (1–1000, Go's 20) ?order=newest (highest score first; Go: oldest)
 *        ?periodic=hide (without the instances of periodic jobs)
 *   POST /retry_all_dead_jobs?name=N, /delete_all_dead_jobs?name=N
 *   POST /delete_retry_job/<retry_at>/<id>, /delete_scheduled_job/<run_at>/<id>
 *   POST /pause/<name>, /unpause/<name>
 *   GET  /job/<id>        {"place": "dead", "at": S, "job": {...}}
 *   GET  /result/<id>     {"id": "…", "result": "…"}: the job's result (PROTOCOL §22),
 *                         as text (invalid UTF-8 as U+FFFD); 404 when there is none
 *   GET  /summary         what the UI polls: queues with their pause state, set sizes
 *   GET  /metrics         Prometheus text format
 *   and the UI's own routes (routes_ui.c).
 *
 * Every route answers for the namespace of ?ns= (one of those the server was started
 * with; the first by default). The keys of the wrong type an answer's reads met are in
 * its X-Cwork-Damaged header and, for an object body, its "damaged" member (damage.c). Under a base
 * path, paths are also answered with it in front; POST routes answer 403 on a read-only server.
 *
 * A trailing parameter (<id>, <name>) is the rest of the path, percent-decoded: ids
 * with '/' (periodic ids of "*\/5" specs) work encoded or not, and an empty one is the
 * empty id. It can also be given as a query parameter instead (?id=, ?name= for pause)
 * — which the UI does: browsers and curl rewrite paths ending in "." or ".." (encoded
 * or not) before sending them. <at> is whole Unix seconds, negative ones too (a listed
 * member's odd score). Changes are POST only, and a POST from a page of another origin
 * is refused (403). */
#include "web.h"

#include "web_assets.h"

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

typedef enum route_params {
    PARAMS_NONE,   /* /name */
    PARAMS_REST,   /* /name/<rest> */
    PARAMS_AT_REST /* /name/<at>/<rest> */
} route_params;

typedef struct route_args {
    int64_t at;
    char *rest; /* decoded */
} route_args;

typedef void (*route_fn)(const web_request *req, const route_args *a, web_response *res);

typedef struct route {
    const char *name; /* the first path segment */
    int post;         /* 1: POST; 0: GET (and HEAD) */
    route_params params;
    route_fn fn;
    const char *query; /* the query parameter that may give <rest> instead of the path */
} route;

static const char status_ok[] = "{\n\t\"status\": \"ok\"\n}";

static void ok_status(web_response *res)
{
    res->status = 200;
    res->content_type = WEB_JSON_TYPE;
    res->body = (char *)status_ok;
    res->len = sizeof status_ok - 1;
    res->body_static = 1;
}

/* ---------------------------------------------------------------- parameters */

/* ?page=: absent or empty is 1; else an unsigned decimal (0 counts as 1, as Go). */
static int page_param(const web_request *req, web_response *res, unsigned *page)
{
    char *v = NULL;
    int rc = cw_web_query(req, "page", &v);
    uint64_t n = 1;
    if (rc == 0 && v && v[0] && cw_web_parse_uint(v, strlen(v), 100000000, &n) != 0) rc = -1;
    cw_free(v);
    if (rc != 0) {
        cw_web_error(res, 400, "page must be a whole number from 1 to 100000000");
        return -1;
    }
    *page = (unsigned)(n ? n : 1);
    return 0;
}

/* ?name=: NULL when absent or empty. */
static int name_param(const web_request *req, web_response *res, char **name)
{
    int rc = cw_web_query(req, "name", name);
    if (rc != 0) {
        cw_web_error(res, 400, "name is not a valid percent-encoded value");
        return -1;
    }
    if (*name && !**name) {
        cw_free(*name);
        *name = NULL;
    }
    return 0;
}

/* ---------------------------------------------------------------- Go's routes */

static void route_queues(const web_request *req, const route_args *a, web_response *res)
{
    cwork_error err = {0};
    char *body = NULL;
    size_t len = 0;
    int rc = cwork_client_queues_json(req->web->client, &body, &len, &err);
    if (rc != 0)
        cw_web_client_error(res, rc, &err);
    else
        cw_web_ok_json(res, body, len);
}

static void route_worker_pools(const web_request *req, const route_args *a, web_response *res)
{
    cwork_error err = {0};
    char *body = NULL;
    size_t len = 0;
    int rc = cwork_client_pools_json(req->web->client, &body, &len, &err);
    if (rc != 0)
        cw_web_client_error(res, rc, &err);
    else
        cw_web_ok_json(res, body, len);
}

static void route_busy_workers(const web_request *req, const route_args *a, web_response *res)
{
    cwork_error err = {0};
    char *body = NULL;
    size_t len = 0;
    int rc = cwork_client_busy_workers_json(req->web->client, &body, &len, &err);
    /* Go answers null for none (a nil slice); every other list route answers [] when
     * empty, and [] is what a list reader (Go's decoder included) takes without a case
     * of its own. The library function keeps Go's bytes. */
    if (rc == 0 && len == 4 && memcmp(body, "null", 4) == 0) {
        memcpy(body, "[]", 3);
        len = 2;
    }
    if (rc != 0)
        cw_web_client_error(res, rc, &err);
    else
        cw_web_ok_json(res, body, len);
}

static void list_set(const web_request *req, cwork_job_set set, web_response *res)
{
    unsigned page, per_page;
    bool newest_first, skip_periodic;
    char *name = NULL;
    if (page_param(req, res, &page) != 0 ||
        cw_web_list_options(req, res, &per_page, &newest_first) != 0 ||
        cw_web_periodic_param(req, res, &skip_periodic) != 0 || name_param(req, res, &name) != 0)
        return;
    cwork_error err = {0};
    char *body = NULL;
    size_t len = 0;
    cwork_list_query q = {page, per_page, name, newest_first};
    int rc = cwork_client_list_filtered_json(req->web->client, set, &q,
                                             skip_periodic ? CWORK_LIST_SKIP_PERIODIC : 0u, &body,
                                             &len, &err);
    cw_free(name);
    if (rc != 0)
        cw_web_client_error(res, rc, &err);
    else
        cw_web_ok_json(res, body, len);
}

static void route_retry_jobs(const web_request *req, const route_args *a, web_response *res)
{
    list_set(req, CWORK_SET_RETRY, res);
}

static void route_scheduled_jobs(const web_request *req, const route_args *a, web_response *res)
{
    list_set(req, CWORK_SET_SCHEDULED, res);
}

static void route_dead_jobs(const web_request *req, const route_args *a, web_response *res)
{
    list_set(req, CWORK_SET_DEAD, res);
}

static void delete_one(const web_request *req, cwork_job_set set, const route_args *a,
                       web_response *res)
{
    cwork_error err = {0};
    int rc = cwork_client_delete(req->web->client, set, a->at, a->rest, &err);
    if (rc != 0)
        cw_web_client_error(res, rc, &err);
    else
        ok_status(res);
}

static void route_delete_dead_job(const web_request *req, const route_args *a, web_response *res)
{
    delete_one(req, CWORK_SET_DEAD, a, res);
}

static void route_delete_retry_job(const web_request *req, const route_args *a, web_response *res)
{
    delete_one(req, CWORK_SET_RETRY, a, res);
}

static void route_delete_scheduled_job(const web_request *req, const route_args *a,
                                       web_response *res)
{
    delete_one(req, CWORK_SET_SCHEDULED, a, res);
}

static void route_retry_dead_job(const web_request *req, const route_args *a, web_response *res)
{
    cwork_error err = {0};
    int rc = cwork_client_retry_dead(req->web->client, a->at, a->rest, &err);
    if (rc != 0)
        cw_web_client_error(res, rc, &err);
    else
        ok_status(res);
}

/* A client call over every dead job (or those of one name), answered as Go's are. */
static void dead_set_action(const web_request *req, web_response *res,
                            int (*call)(cwork_client *, const char *, int64_t *, cwork_error *))
{
    char *name = NULL;
    if (name_param(req, res, &name) != 0) return;
    cwork_error err = {0};
    int64_t count = 0;
    int rc = call(req->web->client, name, &count, &err);
    cw_free(name);
    if (rc != 0)
        cw_web_client_error(res, rc, &err);
    else
        ok_status(res);
}

static void route_retry_all_dead(const web_request *req, const route_args *a, web_response *res)
{
    (void)a;
    dead_set_action(req, res, cwork_client_retry_all_dead);
}

static void route_delete_all_dead(const web_request *req, const route_args *a, web_response *res)
{
    (void)a;
    dead_set_action(req, res, cwork_client_delete_all_dead);
}

/* ---------------------------------------------------------------- cwork's routes */

static void route_pause(const web_request *req, const route_args *a, web_response *res)
{
    cwork_error err = {0};
    int rc = cwork_client_pause(req->web->client, a->rest, &err);
    if (rc != 0)
        cw_web_client_error(res, rc, &err);
    else
        ok_status(res);
}

static void route_unpause(const web_request *req, const route_args *a, web_response *res)
{
    cwork_error err = {0};
    int rc = cwork_client_unpause(req->web->client, a->rest, &err);
    if (rc != 0)
        cw_web_client_error(res, rc, &err);
    else
        ok_status(res);
}

/* The story's string member: ,\n\t"name": "value" */
static void story_string(cw_buf *b, const char *name, const char *value)
{
    cw_buf_puts(b, ",\n\t\"");
    cw_buf_puts(b, name);
    cw_buf_puts(b, "\": ");
    cw_gj_encode_string(b, value, strlen(value));
}

static void story_int(cw_buf *b, const char *name, int64_t value)
{
    cw_buf_puts(b, ",\n\t\"");
    cw_buf_puts(b, name);
    cw_buf_puts(b, "\": ");
    cw_buf_put_int64(b, value);
}

/* The failures kept and the time in each state (cwork_client_job_story). */
static void story_lists(cw_buf *b, const cwork_job_story *st)
{
    cw_buf_puts(b, ",\n\t\"failures\": [");
    for (size_t i = 0; i < st->n_failures; i++) {
        const cwork_job_failure *f = &st->failures[i];
        cw_buf_puts(b, i ? ",\n\t\t{\"failed_at\": " : "\n\t\t{\"failed_at\": ");
        cw_buf_put_int64(b, f->failed_at);
        cw_buf_puts(b, ", \"fails\": ");
        cw_buf_put_int64(b, f->fails);
        cw_buf_puts(b, ", \"enqueued_at\": ");
        cw_buf_put_int64(b, f->enqueued_at);
        cw_buf_puts(b, ", \"ran_at_ms\": ");
        cw_buf_put_int64(b, f->ran_at_ms);
        cw_buf_puts(b, ", \"took_us\": ");
        cw_buf_put_int64(b, f->took_us);
        cw_buf_puts(b, ", \"retry_at\": ");
        cw_buf_put_int64(b, f->retry_at);
        cw_buf_puts(b, ", \"err\": ");
        cw_gj_encode_string(b, f->err, strlen(f->err));
        cw_buf_putc(b, '}');
    }
    cw_buf_puts(b, st->n_failures ? "\n\t],\n\t\"phases\": [" : "],\n\t\"phases\": [");
    for (size_t i = 0; i < st->n_phases; i++) {
        cw_buf_puts(b, i ? ",\n\t\t{\"state\": \"" : "\n\t\t{\"state\": \"");
        cw_buf_puts(b, st->phases[i].state);
        cw_buf_puts(b, "\", \"from\": ");
        cw_buf_put_int64(b, st->phases[i].from);
        cw_buf_puts(b, ", \"until\": ");
        cw_buf_put_int64(b, st->phases[i].until);
        cw_buf_putc(b, '}');
    }
    cw_buf_puts(b, st->n_phases ? "\n\t]" : "]");
}

/* GET /job?id=: the job's whole story (cwork_client_job_story), the job as stored under
 * "job". */
static void route_job(const web_request *req, const route_args *a, web_response *res)
{
    cwork_error err = {0};
    cwork_job_story st;
    int rc = cwork_client_job_story(req->web->client, a->rest, &st, &err);
    if (rc == CWORK_ENOTFOUND) {
        cw_web_error(res, 404, "no job with this id");
        return;
    }
    if (rc != 0) {
        cw_web_client_error(res, rc, &err);
        return;
    }
    char *job = NULL;
    size_t job_len = 0;
    rc = cwork_job_encode_flavor(st.job, req->web->flavor, &job, &job_len, &err);
    if (rc == 0) {
        cw_buf b;
        cw_buf_init(&b);
        cw_buf_puts(&b, "{\n\t\"place\": \"");
        cw_buf_puts(&b, cwork_job_place_name(st.place));
        cw_buf_puts(&b, "\",\n\t\"at\": ");
        cw_buf_put_int64(&b, st.at);
        story_int(&b, "now", st.now);
        story_int(&b, "first_enqueued_at", st.first_enqueued_at);
        story_int(&b, "last_requeued_at", st.last_requeued_at);
        story_string(&b, "pool", st.pool_id);
        story_string(&b, "pool_host", st.pool_host);
        story_int(&b, "pool_pid", st.pool_pid);
        story_string(&b, "worker", st.worker_id);
        story_int(&b, "started_at", st.started_at);
        story_string(&b, "checkin", st.checkin);
        story_int(&b, "checkin_at", st.checkin_at);
        story_lists(&b, &st);
        cw_buf_puts(&b, ",\n\t\"job\": ");
        cw_web_json_indent(&b, job, job_len, 1);
        cw_buf_puts(&b, "\n}");
        char *body = NULL;
        size_t len = 0;
        rc = cw_buf_give(&b, 0, &body, &len, &err);
        if (rc == 0) cw_web_ok_json(res, body, len);
    }
    cwork_free(job);
    cwork_job_story_free(&st);
    if (rc != 0) cw_web_client_error(res, rc, &err);
}

static void route_result(const web_request *req, const route_args *a, web_response *res)
{
    cwork_error err = {0};
    char *result = NULL;
    size_t len = 0;
    int rc = cwork_client_result(req->web->client, a->rest, 0, &result, &len, &err);
    if (rc == CWORK_ENOTFOUND) {
        cw_web_error(res, 404, "no result for this id");
        return;
    }
    if (rc != 0) {
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_puts(&b, "{\n\t\"id\": ");
    cw_gj_encode_string(&b, a->rest, strlen(a->rest));
    cw_buf_puts(&b, ",\n\t\"result\": ");
    cw_gj_encode_string(&b, result, len);
    cw_buf_puts(&b, "\n}");
    cwork_free(result);
    char *body = NULL;
    size_t body_len = 0;
    rc = cw_buf_give(&b, 0, &body, &body_len, &err);
    if (rc == 0)
        cw_web_ok_json(res, body, body_len);
    else
        cw_web_client_error(res, rc, &err);
}

static void route_metrics(const web_request *req, const route_args *a, web_response *res)
{
    cw_web_route_metrics(req, res);
}

static void route_summary(const web_request *req, const route_args *a, web_response *res)
{
    cw_web_route_summary(req, res);
}

static const route routes[] = {
    {"queues", 0, PARAMS_NONE, route_queues, NULL},
    {"worker_pools", 0, PARAMS_NONE, route_worker_pools, NULL},
    {"busy_workers", 0, PARAMS_NONE, route_busy_workers, NULL},
    {"retry_jobs", 0, PARAMS_NONE, route_retry_jobs, NULL},
    {"scheduled_jobs", 0, PARAMS_NONE, route_scheduled_jobs, NULL},
    {"dead_jobs", 0, PARAMS_NONE, route_dead_jobs, NULL},
    {"delete_dead_job", 1, PARAMS_AT_REST, route_delete_dead_job, "id"},
    {"retry_dead_job", 1, PARAMS_AT_REST, route_retry_dead_job, "id"},
    {"delete_all_dead_jobs", 1, PARAMS_NONE, route_delete_all_dead, NULL},
    {"retry_all_dead_jobs", 1, PARAMS_NONE, route_retry_all_dead, NULL},
    {"delete_retry_job", 1, PARAMS_AT_REST, route_delete_retry_job, "id"},
    {"delete_scheduled_job", 1, PARAMS_AT_REST, route_delete_scheduled_job, "id"},
    {"pause", 1, PARAMS_REST, route_pause, "name"},
    {"unpause", 1, PARAMS_REST, route_unpause, "name"},
    {"job", 0, PARAMS_REST, route_job, "id"},
    {"result", 0, PARAMS_REST, route_result, "id"},
    {"summary", 0, PARAMS_NONE, route_summary, NULL},
    {"metrics", 0, PARAMS_NONE, route_metrics, NULL},
};

/* ---------------------------------------------------------------- matching */

static const cw_web_asset *find_asset(const char *path)
{
    if (strcmp(path, "/") == 0)
        path = "/index.html";
    else if (strcmp(path, "/work.js") == 0) /* the Go UI's script path */
        path = "/app.js";
    for (size_t i = 0; i < cw_web_assets_count; i++)
        if (strcmp(cw_web_assets[i].path, path) == 0) return &cw_web_assets[i];
    return NULL;
}

static void serve_asset(const web_request *req, const cw_web_asset *asset, web_response *res)
{
    res->etag = asset->etag;
    res->content_type = asset->content_type;
    res->body_static = 1;
    const char *inm = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, "If-None-Match");
    if (inm && strstr(inm, asset->etag)) {
        res->status = 304;
        return;
    }
    res->status = 200;
    res->body = (char *)asset->data;
    res->len = asset->len;
}

/* <at>: whole Unix seconds with an optional '-'. 0 or -1. */
static int parse_at(const char *s, size_t len, int64_t *out)
{
    int neg = len > 0 && s[0] == '-';
    uint64_t v;
    if (cw_web_parse_uint(s + neg, len - (size_t)neg, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX,
                          &v) != 0)
        return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* Parses the parameters after "/<name>" (tail starts after the name). 1 when the path
 * has the route's shape, 0 when not (404), -1 when it has but a value is bad (res
 * filled with 400). */
static int match_params(const route *r, const web_request *req, const char *tail, route_args *a,
                        web_response *res)
{
    if (r->params == PARAMS_NONE) return *tail == '\0';
    int rc;
    if (r->params == PARAMS_AT_REST) {
        if (*tail != '/' || tail[1] == '\0') return 0;
        tail++;
        const char *slash = strchr(tail, '/');
        size_t len = slash ? (size_t)(slash - tail) : strlen(tail);
        if (parse_at(tail, len, &a->at) != 0) {
            cw_web_error(res, 400, "the time in the path must be whole Unix seconds");
            return -1;
        }
        tail += len;
    }
    if (*tail == '/') {
        rc = cw_web_percent_decode(tail + 1, strlen(tail + 1), &a->rest);
    } else if (*tail == '\0') {
        rc = cw_web_query(req, r->query, &a->rest);
        if (rc == 0 && !a->rest) return 0; /* neither in the path nor in the query */
    } else {
        return 0;
    }
    if (rc == CWORK_ENOMEM) {
        cw_web_error(res, 500, "out of memory");
        return -1;
    }
    if (rc != 0) {
        cw_web_error(res, 400, "the %s is not validly percent-encoded", *tail ? "path" : "query");
        return -1;
    }
    if (r->params == PARAMS_REST && !a->rest[0] && strcmp(r->query, "name") == 0) {
        cw_web_error(res, 400, "the job name is empty");
        return -1;
    }
    return 1;
}

cwork_web *cw_web_pick_view(const web_request *req, web_response *res)
{
    char *ns = NULL;
    if (cw_web_query(req, "ns", &ns) != 0) {
        cw_web_error(res, 400, "ns is not a valid percent-encoded value");
        return NULL;
    }
    cwork_web *web = req->web, *view = ns && *ns ? NULL : web;
    for (size_t i = 0; !view && i < web->n_views; i++)
        if (strcmp(web->views[i]->ns, ns) == 0) view = web->views[i];
    if (!view) cw_web_error(res, 404, "this server does not serve namespace %s", ns);
    cw_free(ns);
    return view;
}

/* Under a base path, the part of path after it ("/jobs/dead_jobs" → "/dead_jobs"); other
 * paths as they are (a proxy that strips the prefix). NULL when path is the base path
 * itself without its '/' (res: a redirect to it with one). */
static const char *strip_base(const cwork_web *web, const char *path, web_response *res)
{
    size_t n = web->base_path ? strlen(web->base_path) : 0;
    if (!n || strncmp(path, web->base_path, n) != 0 || (path[n] != '/' && path[n] != '\0'))
        return path;
    if (path[n] == '/') return path + n;
    cw_web_error(res, 308, "moved to %s/", web->base_path);
    res->location = web->base_redirect;
    return NULL;
}

static void dispatch(const web_request *req, web_response *res);

void cw_web_route(const web_request *request, web_response *res)
{
    web_request routed = *request;
    if (!(routed.path = strip_base(request->web, request->path, res))) return;
    if (!(routed.web = cw_web_pick_view(request, res))) return;
    cwork_web shard;
    int sharded = cw_web_shard_view(&routed, &shard, res);
    if (sharded < 0) return;
    if (sharded) routed.web = &shard;
    dispatch(&routed, res);
    if (sharded) cw_web_shard_view_clear(&shard);
}

/* The route (or asset) of req's path, on req->web: the namespace's view, or a shard's. */
static void dispatch(const web_request *req, web_response *res)
{
    const char *path = req->path;
    int get = req->method == WEB_GET || req->method == WEB_HEAD;
    const cw_web_asset *asset = find_asset(path);
    const char *seg = path + 1;
    size_t seg_len = strcspn(seg, "/");
    const route *r = NULL;
    for (size_t i = 0; !asset && i < sizeof routes / sizeof routes[0]; i++)
        if (strlen(routes[i].name) == seg_len && memcmp(routes[i].name, seg, seg_len) == 0)
            r = &routes[i];
    if (!asset && !r) {
        if (!cw_web_ui_route(req, res)) cw_web_error(res, 404, "not found");
        return;
    }
    const char *allow = asset || !r->post ? "GET, HEAD, OPTIONS" : "POST, OPTIONS";
    route_args a = {0, NULL};
    int shape = asset ? 1 : match_params(r, req, seg + seg_len, &a, res);
    if (shape == 0) {
        cw_web_error(res, 404, "not found");
    } else if (shape > 0 && req->method == WEB_OPTIONS) {
        res->status = 204;
        res->allow = allow;
    } else if (shape > 0 && !(asset || !r->post ? get : req->method == WEB_POST)) {
        cw_web_error(res, 405, "method not allowed; allowed: %s", allow);
        res->allow = allow;
    } else if (shape > 0 && asset) {
        serve_asset(req, asset, res);
    } else if (shape > 0 && r->post && !cw_web_post_allowed(req)) {
        cw_web_error(res, 403, "cross-origin request refused");
    } else if (shape > 0 && r->post && req->web->read_only) {
        cw_web_error(res, 403, "this server is read-only (cwork web --read-only)");
    } else if (shape > 0) {
        r->fn(req, &a, res);
    }
    cw_free(a.rest);
}
