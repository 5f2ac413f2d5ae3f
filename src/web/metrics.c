/* A snapshot of a namespace (queues with their pause state, the sizes of the retry,
 * scheduled and dead sets, busy workers, pools) and its two renderings: /metrics in the
 * Prometheus text format (version 0.0.4) and /summary as JSON for the UI. */
#include "web.h"
#include "client.h"
#include "log.h"

#include "redis.h"
#include "utf8.h"

#include <string.h>

/* ZCARD of the three sets in one round trip. */
static int set_sizes(cwork_web *web, web_snapshot *s, cwork_error *err)
{
    cw_buf keys[3];
    void (*key_fn[3])(const cw_keys *, cw_buf *) = {cw_key_retry, cw_key_scheduled, cw_key_dead};
    int64_t *dst[3] = {&s->retry, &s->scheduled, &s->dead};
    int rc = 0;
    for (int i = 0; i < 3; i++) {
        cw_buf_init(&keys[i]);
        key_fn[i](&web->keys, &keys[i]);
        if (keys[i].oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    cw_conn *c = NULL;
    if (rc == 0) rc = cw_redis_checkout(web->redis, &c, err);
    for (int i = 0; rc == 0 && i < 3; i++) {
        const char *argv[2] = {"ZCARD", keys[i].data};
        size_t lens[2] = {5, keys[i].len};
        rc = cw_conn_append(c, 2, argv, lens, err);
    }
    for (int i = 0; rc == 0 && i < 3; i++) {
        redisReply *r = NULL;
        rc = cw_conn_read(c, &r, err);
        if (rc == 0 && cw_damage_reply(&r, keys[i].data, keys[i].len)) continue; /* counts 0 */
        if (rc == 0 && cw_reply_error(r))
            rc = cw_error(err, CWORK_EREDIS, "ZCARD: %s", cw_reply_error(r));
        else if (rc == 0)
            rc = cw_reply_int(r, dst[i], "ZCARD", err);
        cw_reply_free(r);
    }
    if (rc == 0) cw_damage_resolve(c, &web->keys);
    if (c) cw_redis_checkin(web->redis, c);
    for (int i = 0; i < 3; i++)
        cw_buf_free(&keys[i]);
    return rc;
}

/* The three sets' sizes of a sharded namespace (PROTOCOL §27): the merged lists' totals
 * (each a ZCARD per shard, with a one-job page read beside it). */
static int merged_sizes(cwork_web *web, web_snapshot *s, cwork_error *err)
{
    static const cwork_job_set sets[3] = {CWORK_SET_RETRY, CWORK_SET_SCHEDULED, CWORK_SET_DEAD};
    int64_t *dst[3] = {&s->retry, &s->scheduled, &s->dead};
    int rc = 0;
    for (int i = 0; rc == 0 && i < 3; i++) {
        cwork_list_query q = {1, 1, NULL, false};
        cwork_listed_job *jobs = NULL;
        size_t n = 0;
        rc = cwork_client_list_page(web->client, sets[i], &q, &jobs, &n, dst[i], err);
        cwork_listed_jobs_free(jobs, n);
    }
    return rc;
}

/* A malformed pool or worker record (CWORK_EPROTO) is logged and skipped. */
static int best_effort(int rc, cwork_error *err)
{
    if (rc != CWORK_EPROTO) return rc;
    cw_log(CWORK_LOG_WARN, "web.snapshot", "error", err ? err->message : "", NULL);
    return 0;
}

int cw_web_snapshot_take(cwork_web *web, web_snapshot *s, cwork_error *err)
{
    memset(s, 0, sizeof *s);
    s->now = cw_now();
    int rc = cwork_client_queues(web->client, &s->queues, &s->n_queues, err);
    unsigned shards = 1;
    if (rc == 0) rc = cwork_client_shards(web->client, &shards, err);
    if (rc == 0) rc = shards > 1 ? merged_sizes(web, s, err) : set_sizes(web, s, err);
    /* Pools and workers are best-effort: one malformed heartbeat or worker hash (a
     * field that is not a number) must not take the queues and the dead set — what an
     * operator comes to repair — out of the UI and /metrics. Only Redis errors fail. */
    cwork_worker_observation *workers = NULL;
    size_t n_workers = 0;
    if (rc == 0)
        rc = best_effort(cwork_client_workers(web->client, &workers, &n_workers, err), err);
    for (size_t i = 0; rc == 0 && i < n_workers; i++)
        s->busy_workers += workers[i].is_busy;
    cwork_worker_observations_free(workers, n_workers);
    cwork_pool_heartbeat *pools = NULL;
    size_t n_pools = 0;
    if (rc == 0) rc = best_effort(cwork_client_pools(web->client, &pools, &n_pools, err), err);
    for (size_t i = 0; rc == 0 && i < n_pools; i++) {
        if (s->now - pools[i].heartbeat_at <= WEB_POOL_DEAD_S) {
            s->pools_live++;
            s->workers_live += pools[i].concurrency;
        } else {
            s->pools_stale++;
        }
    }
    cwork_pool_heartbeats_free(pools, n_pools);
    if (rc != 0) cw_web_snapshot_clear(s);
    return rc;
}

void cw_web_snapshot_clear(web_snapshot *s)
{
    cwork_queue_infos_free(s->queues, s->n_queues);
    s->queues = NULL;
    s->n_queues = 0;
}

/* ---------------------------------------------------------------- /metrics */

static void family(cw_buf *b, const char *name, const char *type, const char *help)
{
    cw_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: UTF-8 (invalid bytes become U+FFFD) with \\, \" and \n escaped. */
static void label_value(cw_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s);
    cw_buf_putc(b, '"');
    for (size_t i = 0; i < len;) {
        if (p[i] == '\\' || p[i] == '"') {
            cw_buf_putc(b, '\\');
            cw_buf_putc(b, (char)p[i++]);
        } else if (p[i] == '\n') {
            cw_buf_puts(b, "\\n");
            i++;
        } else if (p[i] < 0x80) {
            cw_buf_putc(b, (char)p[i++]);
        } else {
            size_t n = cw_utf8_decode(p + i, len - i, NULL);
            if (n == 0) {
                cw_buf_puts(b, "\xef\xbf\xbd");
                i++;
            } else {
                cw_buf_append(b, p + i, n);
                i += n;
            }
        }
    }
    cw_buf_putc(b, '"');
}

static void sample(cw_buf *b, const char *name, const char *label, const char *value, int64_t v)
{
    cw_buf_puts(b, name);
    if (label) {
        cw_buf_printf(b, "{%s=", label);
        label_value(b, value);
        cw_buf_putc(b, '}');
    }
    cw_buf_putc(b, ' ');
    cw_buf_put_int64(b, v);
    cw_buf_putc(b, '\n');
}

static void per_queue(cw_buf *b, const web_snapshot *s, const char *name, const char *help,
                      int what)
{
    family(b, name, "gauge", help);
    for (size_t i = 0; i < s->n_queues; i++) {
        const cwork_queue_info *q = &s->queues[i];
        int64_t v = what == 0 ? q->count : what == 1 ? q->latency : q->paused;
        sample(b, name, "job_name", q->job_name, v);
    }
}

static void render_snapshot(cw_buf *b, const web_snapshot *s)
{
    per_queue(b, s, "cwork_queue_jobs", "Jobs waiting in the queue of a job name.", 0);
    per_queue(b, s, "cwork_queue_latency_seconds",
              "Seconds since the next job of a queue to run was put there (0 when empty).", 1);
    per_queue(b, s, "cwork_queue_paused", "1 when a job name is paused, else 0.", 2);
    family(b, "cwork_retry_jobs", "gauge", "Failed jobs waiting for their retry.");
    sample(b, "cwork_retry_jobs", NULL, NULL, s->retry);
    family(b, "cwork_scheduled_jobs", "gauge", "Jobs scheduled to run later.");
    sample(b, "cwork_scheduled_jobs", NULL, NULL, s->scheduled);
    family(b, "cwork_dead_jobs", "gauge", "Jobs in the dead set.");
    sample(b, "cwork_dead_jobs", NULL, NULL, s->dead);
    family(b, "cwork_busy_workers", "gauge", "Workers running a job.");
    sample(b, "cwork_busy_workers", NULL, NULL, (int64_t)s->busy_workers);
    family(b, "cwork_worker_pools", "gauge",
           "Worker pools by heartbeat (live: a beat within the last 10 s).");
    sample(b, "cwork_worker_pools", "state", "live", (int64_t)s->pools_live);
    sample(b, "cwork_worker_pools", "state", "stale", (int64_t)s->pools_stale);
    family(b, "cwork_workers", "gauge", "Workers (concurrency) of the live pools.");
    sample(b, "cwork_workers", NULL, NULL, (int64_t)s->workers_live);
}

static void render_pool(cw_buf *b, cwork_pool *pool)
{
    cwork_pool_stats st;
    cwork_pool_get_stats(pool, &st);
    const char *id = cwork_pool_id(pool);
    family(b, "cwork_pool_jobs_processed_total", "counter",
           "Jobs this process's pool finished, succeeded or failed.");
    sample(b, "cwork_pool_jobs_processed_total", "pool_id", id,
           (int64_t)(st.succeeded + st.failed));
    family(b, "cwork_pool_jobs_failed_total", "counter",
           "Jobs of this process's pool whose handler failed.");
    sample(b, "cwork_pool_jobs_failed_total", "pool_id", id, (int64_t)st.failed);
    family(b, "cwork_pool_jobs_in_flight", "gauge",
           "Jobs this process's pool fetched and has not finished yet.");
    sample(b, "cwork_pool_jobs_in_flight", "pool_id", id, (int64_t)st.in_flight);
}

void cw_web_route_metrics(const web_request *req, web_response *res)
{
    web_snapshot s;
    cwork_error err = {0};
    int rc = cw_web_snapshot_take(req->web, &s, &err);
    cw_buf b;
    cw_buf_init(&b);
    /* A scrape answers even when Redis does not: cwork_up says so, and the counters
     * of this process's pool are still worth having. */
    family(&b, "cwork_up", "gauge", "1 when Redis answered the queries behind this page.");
    sample(&b, "cwork_up", NULL, NULL, rc == 0);
    if (rc == 0) render_snapshot(&b, &s);
    if (req->web->pool) render_pool(&b, req->web->pool);
    cw_web_snapshot_clear(&s);
    size_t len = 0;
    char *body = cw_buf_take(&b, &len);
    if (!body) {
        cw_web_error(res, 500, "out of memory");
        return;
    }
    res->status = 200;
    res->content_type = "text/plain; version=0.0.4; charset=utf-8";
    res->body = body;
    res->len = len;
}

/* ---------------------------------------------------------------- /summary */

void cw_web_route_summary(const web_request *req, web_response *res)
{
    web_snapshot s;
    cwork_error err = {0};
    int rc = cw_web_snapshot_take(req->web, &s, &err);
    if (rc != 0) {
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_buf c; /* compact first, then indented like the other bodies */
    cw_buf_init(&c);
    cw_buf_puts(&c, "{\"namespace\":");
    cw_gj_encode_string(&c, req->web->ns, strlen(req->web->ns));
    cw_buf_puts(&c, ",\"version\":");
    cw_gj_encode_string(&c, cwork_version(), strlen(cwork_version()));
    cw_buf_puts(&c, ",\"now\":");
    cw_buf_put_int64(&c, s.now);
    cw_buf_puts(&c, ",\"queues\":[");
    for (size_t i = 0; i < s.n_queues; i++) {
        const cwork_queue_info *q = &s.queues[i];
        cw_buf_puts(&c, i ? ",{\"job_name\":" : "{\"job_name\":");
        cw_gj_encode_string(&c, q->job_name, strlen(q->job_name));
        cw_buf_printf(&c, ",\"count\":%lld,\"latency\":%lld,\"paused\":%s}", (long long)q->count,
                      (long long)q->latency, q->paused ? "true" : "false");
    }
    cw_buf_printf(&c,
                  "],\"retry\":%lld,\"scheduled\":%lld,\"dead\":%lld,\"busy_workers\":%zu,"
                  "\"live_pools\":%zu,\"stale_pools\":%zu,\"workers\":%llu",
                  (long long)s.retry, (long long)s.scheduled, (long long)s.dead, s.busy_workers,
                  s.pools_live, s.pools_stale, (unsigned long long)s.workers_live);
    /* What the UI needs to know of the server: the namespaces it may switch to (the
     * first is the default), whether it may change anything. */
    const cwork_web *web = req->web;
    cw_buf_puts(&c, ",\"namespaces\":[");
    for (size_t i = 0; i < web->n_views; i++) {
        if (i) cw_buf_putc(&c, ',');
        cw_gj_encode_string(&c, web->views[i]->ns, strlen(web->views[i]->ns));
    }
    cw_buf_printf(&c, "],\"read_only\":%s}", req->web->read_only ? "true" : "false");
    cw_web_snapshot_clear(&s);
    cw_buf b;
    cw_buf_init(&b);
    int oom = c.oom;
    if (!oom) cw_web_json_indent(&b, c.data, c.len, 0);
    cw_buf_free(&c);
    char *body = NULL;
    size_t len = 0;
    rc = cw_buf_give(&b, oom ? CWORK_ENOMEM : 0, &body, &len, &err);
    if (rc != 0)
        cw_web_error(res, 500, "out of memory");
    else
        cw_web_ok_json(res, body, len);
}
