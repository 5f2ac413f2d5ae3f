/* The web UI's own routes (cwork's, not workwebui's): what the dashboard, the queue
 * view, the periodic schedules and the bulk actions of the lists need. Parameters are
 * query parameters (never path segments: browsers rewrite "." and ".." in paths), the
 * list of jobs of a bulk action is the POST body:
 *
 *   GET  /dashboard?days=30&sample=1000  daily counts, one row per job name, the pool's
 *                                        counters when the server runs in a pool
 *   GET  /queue_jobs?name=N&page=P&per_page=S  a queue's waiting jobs, next to run first
 *   GET  /periodic                       the periodic schedules, soonest first
 *   POST /apply?set=S&action=A           body [{"at": T, "id": "…"}, …] (at most 1000):
 *                                        delete (any set), retry (dead), run_now (retry,
 *                                        scheduled) each listed job; {"done", "unchanged",
 *                                        "message"}
 *   POST /delete_all?set=S[&name=N]      {"count"}
 *   POST /run_all?set=S[&name=N]         retry or scheduled: {"count", "stayed"}
 *   POST /retry_all[?name=N]             the dead jobs back to their queues: {"count"}
 *   POST /clear_queue?name=N             {"count"}
 *   POST /delete_waiting?name=N          body [{"place": P, "id": "…"}, …] (at most 1000):
 *                                        the listed jobs waiting in queue N (place: as
 *                                        listed by /queue_jobs, 0 the next to run, -1
 *                                        unknown); {"done", "unchanged", "message"}
 *   POST /kill_all?set=S[&name=N]        retry or scheduled: every job to dead (PROTOCOL §24):
 *                                        {"count"} (one job: /apply's action kill)
 *   GET  /search?set=S&q=TEXT&page=P&per_page=S[&max_scan=M]  the jobs of a set whose
 *                                        args or err hold TEXT, newest first, from a scan
 *                                        of the newest M (default 10000) members: {"count":
 *                                        matches, "jobs": [as /retry_jobs], "scanned",
 *                                        "total", "bounded"}
 *   POST /cancel?id=ID                   cancels the job (PROTOCOL §21): {"place": where it
 *                                        was, "pool": the pool running it or ""}; 404 no
 *                                        such job (or dead already), 409 it runs in a pool
 *                                        that cannot be told (a Go pool)
 *
 * Bad parameters answer 400 with a JSON error, changes on a read-only server 403. */
#include "web.h"

#include "gojson.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SELECTED 1000

/* ---------------------------------------------------------------- parameters */

/* ?key= as a whole number in [min, max], dflt when absent or empty. 0, or -1 (res: 400). */
static int uint_param(const web_request *req, web_response *res, const char *key, uint64_t min,
                      uint64_t max, uint64_t dflt, uint64_t *out)
{
    char *v = NULL;
    int rc = cw_web_query(req, key, &v);
    uint64_t n = dflt;
    if (rc == 0 && v && v[0] && (cw_web_parse_uint(v, strlen(v), max, &n) != 0 || n < min)) rc = -1;
    cw_free(v);
    if (rc != 0) {
        cw_web_error(res, 400, "%s must be a whole number from %llu to %llu", key,
                     (unsigned long long)min, (unsigned long long)max);
        return -1;
    }
    *out = n;
    return 0;
}

/* ?key= as text: NULL when absent or empty; required makes absence a 400. 0 or -1. */
static int text_param(const web_request *req, web_response *res, const char *key, int required,
                      char **out)
{
    *out = NULL;
    if (cw_web_query(req, key, out) != 0) {
        cw_web_error(res, 400, "%s is not a valid percent-encoded value", key);
        return -1;
    }
    if (*out && !**out) {
        cw_free(*out);
        *out = NULL;
    }
    if (!*out && required) {
        cw_web_error(res, 400, "%s is required", key);
        return -1;
    }
    return 0;
}

/* ?set=retry|scheduled|dead. 0 or -1. */
static int set_param(const web_request *req, web_response *res, cwork_job_set *set)
{
    char *v = NULL;
    if (text_param(req, res, "set", 1, &v) != 0) return -1;
    int rc = 0;
    if (!strcmp(v, "retry"))
        *set = CWORK_SET_RETRY;
    else if (!strcmp(v, "scheduled"))
        *set = CWORK_SET_SCHEDULED;
    else if (!strcmp(v, "dead"))
        *set = CWORK_SET_DEAD;
    else
        rc = -1;
    cw_free(v);
    if (rc) cw_web_error(res, 400, "set must be retry, scheduled or dead");
    return rc;
}

int cw_web_list_options(const web_request *req, web_response *res, unsigned *per_page,
                        bool *newest_first)
{
    uint64_t n;
    if (uint_param(req, res, "per_page", 1, 1000, CWORK_PAGE_SIZE, &n) != 0) return -1;
    *per_page = (unsigned)n;
    char *order = NULL;
    if (text_param(req, res, "order", 0, &order) != 0) return -1;
    int rc = 0;
    *newest_first = order && !strcmp(order, "newest");
    if (order && !*newest_first && strcmp(order, "oldest") != 0) rc = -1;
    cw_free(order);
    if (rc) cw_web_error(res, 400, "order must be newest or oldest");
    return rc;
}

int cw_web_periodic_param(const web_request *req, web_response *res, bool *skip_periodic)
{
    char *v = NULL;
    if (text_param(req, res, "periodic", 0, &v) != 0) return -1;
    int rc = 0;
    *skip_periodic = v && !strcmp(v, "hide");
    if (v && !*skip_periodic && strcmp(v, "show") != 0) rc = -1;
    cw_free(v);
    if (rc) cw_web_error(res, 400, "periodic must be show or hide");
    return rc;
}

static void put_str(cw_buf *b, const char *key, const char *v)
{
    cw_buf_printf(b, "\"%s\":", key);
    if (v)
        cw_gj_encode_string(b, v, strlen(v));
    else
        cw_buf_puts(b, "null");
}

/* ---------------------------------------------------------------- reading */

static void put_pool(cw_buf *b, cwork_pool *pool)
{
    if (!pool) {
        cw_buf_puts(b, "null");
        return;
    }
    cwork_pool_stats st;
    cwork_pool_get_stats(pool, &st);
    cw_buf_putc(b, '{');
    put_str(b, "id", cwork_pool_id(pool));
    cw_buf_printf(b, ",\"processed\":%llu,\"failed\":%llu,\"in_flight\":%llu}",
                  (unsigned long long)st.succeeded + st.failed, (unsigned long long)st.failed,
                  (unsigned long long)st.in_flight);
}

static void route_dashboard(const web_request *req, web_response *res)
{
    uint64_t days, sample;
    if (uint_param(req, res, "days", 1, 366, 30, &days) != 0 ||
        uint_param(req, res, "sample", 1, 100000, 1000, &sample) != 0)
        return;
    cwork_error err = {0};
    cwork_day_stats *d = NULL;
    size_t nd = 0;
    cwork_job_types t = {0};
    int rc = cwork_client_daily_stats(req->web->client, (unsigned)days, &d, &nd, &err);
    if (rc == 0) rc = cwork_client_job_types(req->web->client, (size_t)sample, &t, &err);
    if (rc != 0) {
        cwork_free(d);
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_printf(&b, "{\"now\":%lld,\"days\":[", (long long)cw_now());
    for (size_t i = 0; i < nd; i++)
        cw_buf_printf(&b, "%s{\"date\":\"%s\",\"processed\":%lld,\"failed\":%lld}", i ? "," : "",
                      d[i].date, (long long)d[i].processed, (long long)d[i].failed);
    cw_buf_printf(&b,
                  "],\"retry_total\":%lld,\"retry_read\":%lld,\"dead_total\":%lld,"
                  "\"dead_read\":%lld,\"types\":[",
                  (long long)t.retry_total, (long long)t.retry_read, (long long)t.dead_total,
                  (long long)t.dead_read);
    for (size_t i = 0; i < t.n; i++) {
        const cwork_job_type_stats *r = &t.types[i];
        cw_buf_puts(&b, i ? ",{" : "{");
        put_str(&b, "job_name", r->job_name);
        cw_buf_printf(&b,
                      ",\"known\":%s,\"paused\":%s,\"waiting\":%lld,\"latency\":%lld,"
                      "\"running\":%lld,\"retry\":%lld,\"dead\":%lld,",
                      r->known ? "true" : "false", r->paused ? "true" : "false",
                      (long long)r->waiting, (long long)r->latency, (long long)r->running,
                      (long long)r->retry, (long long)r->dead);
        put_str(&b, "last_error", r->last_error);
        cw_buf_printf(&b, ",\"last_failed_at\":%lld}", (long long)r->last_failed_at);
    }
    cw_buf_puts(&b, "],\"pool\":");
    put_pool(&b, req->web->pool);
    cw_buf_putc(&b, '}');
    cwork_free(d);
    cwork_job_types_free(&t);
    cw_web_ok_indented(res, &b);
}

static void route_queue_jobs(const web_request *req, web_response *res)
{
    char *name = NULL;
    uint64_t page, per_page;
    if (text_param(req, res, "name", 1, &name) != 0) return;
    if (uint_param(req, res, "page", 0, 100000000, 1, &page) != 0 ||
        uint_param(req, res, "per_page", 1, 1000, CWORK_PAGE_SIZE, &per_page) != 0) {
        cw_free(name);
        return;
    }
    cwork_error err = {0};
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    int64_t total = 0;
    int rc = cwork_client_queue_jobs(req->web->client, name, (unsigned)page, (unsigned)per_page,
                                     &jobs, &n, &total, &err);
    cw_free(name);
    if (rc != 0) {
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_printf(&b, "{\"count\":%lld,\"jobs\":[", (long long)total);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char *job = NULL;
        size_t len = 0;
        rc = cwork_job_encode_flavor(jobs[i].job, req->web->flavor, &job, &len, &err);
        if (rc == 0) {
            if (i) cw_buf_putc(&b, ',');
            cw_buf_append(&b, job, len);
        }
        cwork_free(job);
    }
    cw_buf_puts(&b, "]}");
    cwork_listed_jobs_free(jobs, n);
    if (rc != 0) {
        cw_buf_free(&b);
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_web_ok_indented(res, &b);
}

static void route_periodic(const web_request *req, web_response *res)
{
    cwork_error err = {0};
    cwork_periodic_schedule *s = NULL;
    size_t n = 0;
    int rc = cwork_client_periodic_schedules(req->web->client, &s, &n, &err);
    if (rc != 0) {
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_putc(&b, '[');
    for (size_t i = 0; i < n; i++) {
        cw_buf_puts(&b, i ? ",{" : "{");
        put_str(&b, "job_name", s[i].job_name);
        cw_buf_putc(&b, ',');
        put_str(&b, "spec", s[i].spec);
        cw_buf_printf(&b, ",\"next_at\":%lld,\"seen_at\":%lld}", (long long)s[i].next_at,
                      (long long)s[i].seen_at);
    }
    cw_buf_putc(&b, ']');
    cwork_periodic_schedules_free(s, n);
    cw_web_ok_indented(res, &b);
}

/* ---------------------------------------------------------------- changing */

/* The body of /apply and /delete_waiting: [{"<num>": N, "id": "…"}, …], num "at" (whole
 * seconds) or "place" (as /queue_jobs lists it). (*refs)[i].at receives the number, .id
 * borrows from *doc (free both). 0, or -1 (res: 400 or 500). */
static int parse_selection(const web_request *req, web_response *res, const char *num,
                           gj_value **doc, cwork_job_ref **refs, size_t *n)
{
    *doc = NULL;
    *refs = NULL;
    *n = 0;
    cwork_error e = {0};
    if (!req->body || cw_gj_parse(req->body, req->body_len, doc, &e) != 0 ||
        (*doc)->type != GJ_ARRAY) {
        cw_web_error(res, 400, "the body must be a JSON array of {\"%s\": %s, \"id\": \"…\"}", num,
                     strcmp(num, "at") == 0 ? "seconds" : "a place");
        return -1;
    }
    size_t len = (*doc)->as.arr.len;
    if (len > MAX_SELECTED) {
        cw_web_error(res, 400, "at most %d jobs at once", MAX_SELECTED);
        return -1;
    }
    if (len && !(*refs = cw_calloc(len, sizeof **refs))) {
        cw_web_error(res, 500, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        const gj_value *item = (*doc)->as.arr.items[i];
        const gj_value *at =
            item->type == GJ_OBJECT ? cw_gj_object_get(item, num, strlen(num)) : NULL;
        const gj_value *id = item->type == GJ_OBJECT ? cw_gj_object_get(item, "id", 2) : NULL;
        /* whole seconds within ±2^53: what a JSON number carries exactly */
        if (!at || at->type != GJ_FLOAT || !(at->as.f <= 9007199254740992.0) ||
            !(at->as.f >= -9007199254740992.0) || at->as.f != (double)(int64_t)at->as.f || !id ||
            id->type != GJ_STRING || memchr(id->as.s.ptr, '\0', id->as.s.len)) {
            cw_web_error(res, 400, "job %zu: each job must be {\"%s\": %s, \"id\": a string}", i,
                         num, strcmp(num, "at") == 0 ? "whole seconds" : "a whole number");
            return -1;
        }
        (*refs)[i].at = (int64_t)at->as.f;
        (*refs)[i].id = id->as.s.ptr;
    }
    *n = len;
    return 0;
}

/* {"done", "unchanged", "message"}: what a change of selected jobs did; rc its result. */
static void reply_selection(web_response *res, int rc, size_t done, size_t unchanged,
                            const cwork_error *err)
{
    if (rc != 0 && rc != CWORK_ENOTFOUND) {
        cw_web_client_error(res, rc, err);
        return;
    }
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_printf(&b, "{\"done\":%zu,\"unchanged\":%zu,", done, unchanged);
    put_str(&b, "message", rc ? err->message : "");
    cw_buf_putc(&b, '}');
    cw_web_ok_indented(res, &b);
}

static void route_apply(const web_request *req, web_response *res)
{
    cwork_job_set set;
    char *action = NULL;
    if (set_param(req, res, &set) != 0 || text_param(req, res, "action", 1, &action) != 0) return;
    cwork_job_action act = !strcmp(action, "delete")    ? CWORK_ACTION_DELETE
                           : !strcmp(action, "retry")   ? CWORK_ACTION_RETRY
                           : !strcmp(action, "run_now") ? CWORK_ACTION_RUN_NOW
                           : !strcmp(action, "kill")    ? CWORK_ACTION_KILL
                                                        : (cwork_job_action)0;
    cw_free(action);
    if (!act) {
        cw_web_error(res, 400, "action must be delete, retry, run_now or kill");
        return;
    }
    gj_value *doc = NULL;
    cwork_job_ref *refs = NULL;
    size_t n = 0;
    if (parse_selection(req, res, "at", &doc, &refs, &n) == 0) {
        cwork_error err = {0};
        size_t done = 0, unchanged = 0;
        int rc = cwork_client_apply(req->web->client, set, act, refs, n, &done, &unchanged, &err);
        reply_selection(res, rc, done, unchanged, &err);
    }
    cw_free(refs);
    cw_gj_free(doc);
}

static void route_delete_waiting(const web_request *req, web_response *res)
{
    char *name = NULL;
    if (text_param(req, res, "name", 1, &name) != 0) return;
    gj_value *doc = NULL;
    cwork_job_ref *refs = NULL;
    cwork_waiting_ref *jobs = NULL;
    size_t n = 0;
    if (parse_selection(req, res, "place", &doc, &refs, &n) == 0) {
        if (n && !(jobs = cw_calloc(n, sizeof *jobs))) {
            cw_web_error(res, 500, "out of memory");
        } else {
            for (size_t i = 0; i < n; i++)
                jobs[i] = (cwork_waiting_ref){refs[i].id, refs[i].at < 0 ? -1 : refs[i].at};
            cwork_error err = {0};
            size_t done = 0, unchanged = 0;
            int rc = cwork_client_delete_waiting(req->web->client, name, jobs, n, &done, &unchanged,
                                                 &err);
            reply_selection(res, rc, done, unchanged, &err);
        }
    }
    cw_free(jobs);
    cw_free(refs);
    cw_gj_free(doc);
    cw_free(name);
}

static void reply_count(web_response *res, int64_t count, const int64_t *stayed)
{
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_printf(&b, "{\"count\":%lld", (long long)count);
    if (stayed) cw_buf_printf(&b, ",\"stayed\":%lld", (long long)*stayed);
    cw_buf_putc(&b, '}');
    cw_web_ok_indented(res, &b);
}

/* A whole-set action of the client (delete all, kill all): the set and an optional name
 * from the query, the count as the reply. */
typedef int (*set_action)(cwork_client *client, cwork_job_set set, const char *name, int64_t *count,
                          cwork_error *err);

static void apply_to_set(const web_request *req, web_response *res, set_action action)
{
    cwork_job_set set;
    char *name = NULL;
    if (set_param(req, res, &set) != 0 || text_param(req, res, "name", 0, &name) != 0) return;
    cwork_error err = {0};
    int64_t count = 0;
    int rc = action(req->web->client, set, name, &count, &err);
    cw_free(name);
    if (rc != 0)
        cw_web_client_error(res, rc, &err);
    else
        reply_count(res, count, NULL);
}

static void route_delete_all(const web_request *req, web_response *res)
{
    apply_to_set(req, res, cwork_client_delete_all);
}

static void route_run_all(const web_request *req, web_response *res)
{
    cwork_job_set set;
    char *name = NULL;
    if (set_param(req, res, &set) != 0 || text_param(req, res, "name", 0, &name) != 0) return;
    cwork_error err = {0};
    int64_t count = 0, stayed = 0;
    int rc = cwork_client_run_all_now(req->web->client, set, name, &count, &stayed, &err);
    cw_free(name);
    if (rc != 0)
        cw_web_client_error(res, rc, &err);
    else
        reply_count(res, count, &stayed);
}

/* A client call over everything under one name (the name may be required), answered
 * with the count it moved. */
typedef int (*named_count_call)(cwork_client *, const char *, int64_t *, cwork_error *);

static void named_count_action(const web_request *req, web_response *res, int name_required,
                               named_count_call call)
{
    char *name = NULL;
    if (text_param(req, res, "name", name_required, &name) != 0) return;
    cwork_error err = {0};
    int64_t count = 0;
    int rc = call(req->web->client, name, &count, &err);
    cw_free(name);
    if (rc != 0)
        cw_web_client_error(res, rc, &err);
    else
        reply_count(res, count, NULL);
}

static void route_retry_all(const web_request *req, web_response *res)
{
    named_count_action(req, res, 0, cwork_client_retry_all_dead);
}

static void route_clear_queue(const web_request *req, web_response *res)
{
    named_count_action(req, res, 1, cwork_client_clear_queue);
}

static void route_cancel(const web_request *req, web_response *res)
{
    char *id = NULL;
    if (text_param(req, res, "id", 1, &id) != 0) return;
    cwork_error err = {0};
    cwork_cancel_result out;
    int rc = cwork_client_cancel(req->web->client, id, &out, &err);
    cw_free(id);
    if (rc == CWORK_EUNSUPPORTED) {
        cw_web_error(res, 409, "%s", err.message);
        return;
    }
    if (rc != 0) {
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_putc(&b, '{');
    put_str(&b, "place", cwork_job_place_name(out.place));
    cw_buf_putc(&b, ',');
    put_str(&b, "pool", out.pool_id);
    cw_buf_putc(&b, '}');
    cw_web_ok_indented(res, &b);
}

/* ---------------------------------------------------------------- beyond Go's features */

/* GET /rate_limits: [{"job_name", "limit" ("100/1s", or the stored text when it is not
 * a valid limit), "valid", "limited_now", "next_in_us"}], by job name (PROTOCOL §20). */
static void route_rate_limits(const web_request *req, web_response *res)
{
    cwork_error err = {0};
    cwork_rate_limit_info *l = NULL;
    size_t n = 0;
    int rc = cwork_client_rate_limits(req->web->client, &l, &n, &err);
    if (rc != 0) {
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_putc(&b, '[');
    for (size_t i = 0; i < n; i++) {
        cw_buf_puts(&b, i ? ",{" : "{");
        put_str(&b, "job_name", l[i].job_name);
        cw_buf_putc(&b, ',');
        put_str(&b, "limit", l[i].text);
        cw_buf_printf(&b, ",\"valid\":%s,\"limited_now\":%s,\"next_in_us\":%lld}",
                      l[i].count ? "true" : "false", l[i].limited_now ? "true" : "false",
                      (long long)l[i].next_in_us);
    }
    cw_buf_putc(&b, ']');
    cwork_rate_limit_infos_free(l, n);
    cw_web_ok_indented(res, &b);
}

/* POST /rate_limit?name=N&limit=100/1s (or limit=off): sets or removes a type's limit
 * for every cwork pool of the namespace, as `cwork limit` does. */
static void route_set_rate_limit(const web_request *req, web_response *res)
{
    char *name = NULL, *limit = NULL;
    if (text_param(req, res, "name", 1, &name) != 0) return;
    if (text_param(req, res, "limit", 1, &limit) != 0) {
        cw_free(name);
        return;
    }
    cwork_error err = {0};
    unsigned count = 0;
    int64_t window_ms = 0;
    int rc =
        strcmp(limit, "off") == 0 ? 0 : cwork_rate_limit_parse(limit, &count, &window_ms, &err);
    if (rc == 0) rc = cwork_client_set_rate_limit(req->web->client, name, count, window_ms, &err);
    cw_free(name);
    cw_free(limit);
    if (rc != 0) {
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_puts(&b, "{\"status\":\"ok\"}");
    cw_web_ok_indented(res, &b);
}

static const char *batch_callback_state(cwork_batch_callback_state s)
{
    return s == CWORK_BATCH_CALLBACK_ENQUEUED  ? "enqueued"
           : s == CWORK_BATCH_CALLBACK_SKIPPED ? "skipped"
                                               : "waiting";
}

/* GET /batch?id=ID: a tracked batch's counts and its callback (PROTOCOL §23), as
 * `cwork batch --json` prints them; 404 for no such batch (or one expired). A damaged
 * :jobs hash is named in "damaged" (the counts stop); a damaged batch key fails. */
static void route_batch(const web_request *req, web_response *res)
{
    char *id = NULL;
    if (text_param(req, res, "id", 1, &id) != 0) return;
    cwork_error err = {0};
    cwork_batch_info bi;
    int rc = cwork_client_batch(req->web->client, id, &bi, &err);
    if (rc == CWORK_ETYPE) { /* the batch key is damaged: X-Cwork-Damaged names it too */
        cw_free(id);
        cw_web_error(res, 409, "%s", err.message);
        return;
    }
    if (rc != 0) {
        cw_free(id);
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_putc(&b, '{');
    put_str(&b, "id", id);
    cw_free(id);
    cw_buf_printf(&b,
                  ",\"total\":%lld,\"pending\":%lld,\"succeeded\":%lld,\"retrying\":%lld,"
                  "\"dead\":%lld,\"sealed\":%s,",
                  (long long)bi.total, (long long)bi.pending, (long long)bi.succeeded,
                  (long long)bi.retrying, (long long)bi.dead, bi.sealed ? "true" : "false");
    put_str(&b, "when", bi.when == CWORK_BATCH_ON_COMPLETE ? "on_complete" : "on_success");
    cw_buf_putc(&b, ',');
    put_str(&b, "callback", bi.callback);
    cw_buf_putc(&b, ',');
    put_str(&b, "callback_state", batch_callback_state(bi.callback_state));
    cw_buf_printf(&b, ",\"created_at\":%lld,\"completed_at\":%lld,\"ttl\":%lld}",
                  (long long)bi.created_at, (long long)bi.completed_at, (long long)bi.ttl);
    cw_web_ok_indented(res, &b);
}

/* GET /succeeded?name=N&limit=L: the succeeded jobs types keep (PROTOCOL §22), newest
 * first: [{"name","id","finished_at_ms","ran_at_ms","took_us","job","result"}] with the
 * job's bytes as a JSON string and the result (a string) or null. */
static void route_succeeded(const web_request *req, web_response *res)
{
    char *name = NULL, *limit_text = NULL;
    if (text_param(req, res, "name", 0, &name) != 0) return;
    if (text_param(req, res, "limit", 0, &limit_text) != 0) {
        cw_free(name);
        return;
    }
    uint64_t limit = 100;
    if (limit_text &&
        (cw_web_parse_uint(limit_text, strlen(limit_text), 10000, &limit) != 0 || limit == 0)) {
        cw_free(name);
        cw_free(limit_text);
        cw_web_error(res, 400, "limit must be a whole number from 1 to 10000");
        return;
    }
    cw_free(limit_text);
    cwork_error err = {0};
    cwork_succeeded_job *jobs = NULL;
    size_t n = 0;
    int rc = cwork_client_succeeded(req->web->client, name, (size_t)limit, &jobs, &n, &err);
    cw_free(name);
    if (rc != 0) {
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_putc(&b, '[');
    for (size_t i = 0; i < n; i++) {
        cw_buf_puts(&b, i ? ",{" : "{");
        put_str(&b, "name", jobs[i].name);
        cw_buf_putc(&b, ',');
        put_str(&b, "id", jobs[i].id);
        cw_buf_printf(&b, ",\"finished_at_ms\":%lld,\"ran_at_ms\":%lld,\"took_us\":%lld,",
                      (long long)jobs[i].finished_at_ms, (long long)jobs[i].ran_at_ms,
                      (long long)jobs[i].took_us);
        cw_buf_puts(&b, "\"job\":");
        cw_gj_encode_string(&b, jobs[i].job, jobs[i].job_len);
        cw_buf_puts(&b, ",\"result\":");
        if (jobs[i].result)
            cw_gj_encode_string(&b, jobs[i].result, jobs[i].result_len);
        else
            cw_buf_puts(&b, "null");
        cw_buf_putc(&b, '}');
    }
    cw_buf_putc(&b, ']');
    cwork_succeeded_jobs_free(jobs, n);
    cw_web_ok_indented(res, &b);
}

/* ---------------------------------------------------------------- kill all, search */

static void route_kill_all(const web_request *req, web_response *res)
{
    apply_to_set(req, res, cwork_client_kill_all);
}

/* The rows as /retry_jobs, /scheduled_jobs and /dead_jobs give them, so that the UI's
 * lists show a search's page as any other. */
static void route_search(const web_request *req, web_response *res)
{
    cwork_job_set set;
    char *text = NULL;
    uint64_t page, per_page, max_scan;
    if (set_param(req, res, &set) != 0 || text_param(req, res, "q", 1, &text) != 0) return;
    if (uint_param(req, res, "page", 0, 100000000, 1, &page) != 0 ||
        uint_param(req, res, "per_page", 1, 1000, CWORK_PAGE_SIZE, &per_page) != 0 ||
        uint_param(req, res, "max_scan", 1, CWORK_SEARCH_MAX_SCAN_MAX, CWORK_SEARCH_MAX_SCAN,
                   &max_scan) != 0) {
        cw_free(text);
        return;
    }
    cwork_search_query q = {text, (unsigned)page, (unsigned)per_page, (size_t)max_scan};
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    cwork_search_info info;
    cwork_error err = {0};
    int rc = cwork_client_search(req->web->client, set, &q, &jobs, &n, &info, &err);
    cw_free(text);
    if (rc != 0) {
        cw_web_client_error(res, rc, &err);
        return;
    }
    const char *at_key = set == CWORK_SET_RETRY       ? "retry_at"
                         : set == CWORK_SET_SCHEDULED ? "run_at"
                                                      : "died_at";
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_printf(&b, "{\"bounded\":%s,\"count\":%lld,\"jobs\":[", info.bounded ? "true" : "false",
                  (long long)info.matches);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char *job = NULL;
        size_t len = 0;
        rc = cwork_job_encode_flavor(jobs[i].job, req->web->flavor, &job, &len, &err);
        if (rc == 0 && len > 1) {
            cw_buf_printf(&b, "%s{\"%s\":%lld,", i ? "," : "", at_key, (long long)jobs[i].at);
            cw_buf_append(&b, job + 1, len - 1); /* the job's fields and its '}' */
        }
        cwork_free(job);
    }
    cw_buf_printf(&b, "],\"scanned\":%lld,\"total\":%lld}", (long long)info.scanned,
                  (long long)info.total);
    cwork_listed_jobs_free(jobs, n);
    if (rc != 0) {
        cw_buf_free(&b);
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_web_ok_indented(res, &b);
}

/* ---------------------------------------------------------------- dispatch */

typedef struct ui_route {
    const char *path;
    int post;
    void (*fn)(const web_request *req, web_response *res);
} ui_route;

static const ui_route ui_routes[] = {
    {"/dashboard", 0, route_dashboard},
    {"/queue_jobs", 0, route_queue_jobs},
    {"/periodic", 0, route_periodic},
    {"/apply", 1, route_apply},
    {"/delete_all", 1, route_delete_all},
    {"/run_all", 1, route_run_all},
    {"/retry_all", 1, route_retry_all},
    {"/clear_queue", 1, route_clear_queue},
    {"/delete_waiting", 1, route_delete_waiting},
    {"/cancel", 1, route_cancel},
    {"/kill_all", 1, route_kill_all},
    {"/search", 0, route_search},
    {"/rate_limits", 0, route_rate_limits},
    {"/rate_limit", 1, route_set_rate_limit},
    {"/batch", 0, route_batch},
    {"/succeeded", 0, route_succeeded},
    {"/doctor", 0, cw_web_route_doctor},
    {"/doctor_repair", 1, cw_web_route_doctor_repair},
    {"/throughput", 0, cw_web_route_throughput},
    {"/redis_info", 0, cw_web_route_redis_info},
    {"/shards", 0, cw_web_route_shards},
};

int cw_web_ui_route(const web_request *req, web_response *res)
{
    const ui_route *r = NULL;
    for (size_t i = 0; !r && i < sizeof ui_routes / sizeof ui_routes[0]; i++)
        if (strcmp(ui_routes[i].path, req->path) == 0) r = &ui_routes[i];
    if (!r) return 0;
    const char *allow = r->post ? "POST, OPTIONS" : "GET, HEAD, OPTIONS";
    int get = req->method == WEB_GET || req->method == WEB_HEAD;
    if (req->method == WEB_OPTIONS) {
        res->status = 204;
        res->allow = allow;
    } else if (r->post ? req->method != WEB_POST : !get) {
        cw_web_error(res, 405, "method not allowed; allowed: %s", allow);
        res->allow = allow;
    } else if (r->post && !cw_web_post_allowed(req)) {
        cw_web_error(res, 403, "cross-origin request refused");
    } else if (r->post && req->web->read_only) {
        cw_web_error(res, 403, "this server is read-only (cwork web --read-only)");
    } else {
        r->fn(req, res);
    }
    return 1;
}
