/* A worker_pools:<id> hash someone damaged (a pid that is not a number) does not make
 * the pool listings fail (Go's do, with "strconv.ParseInt…" naming no key): that pool
 * is listed as damaged, naming its key and field, and the others as usual — through
 * cwork_client_pools, the JSON the web UI serves (/worker_pools, /busy_workers) and
 * `cwork pools` / `cwork busy`. */
#include "cli_testutil.h"
#include "cwork.h"

static void a_damaged_pool_is_named_and_the_others_listed(void)
{
    char ns[64];
    tl_unique_ns("dmgpool", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    tl_do(c, "SADD %s:worker_pools aaaa bbbb", ns);
    tl_do(c,
          "HSET %s:worker_pools:aaaa heartbeat_at 100 started_at 90 job_names x concurrency 2 "
          "host h pid notanumber worker_ids w1",
          ns);
    tl_do(c,
          "HSET %s:worker_pools:bbbb heartbeat_at 100 started_at 90 job_names y concurrency 3 "
          "host h pid 42 worker_ids w2",
          ns);
    tl_do(c, "HSET %s:worker:w2 job_name y job_id j1 started_at 95 args {} checkin_at 96", ns);
    cwork_redis *r = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cwork_error err = {0};
    cwork_client *cl = cwork_client_new(r, ns, &err);
    cwork_pool_heartbeat *p = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_pools(cl, &p, &n, &err), 0);
    CHECK_INT(n, 2);
    char key[128];
    snprintf(key, sizeof key, "%s:worker_pools:aaaa field pid", ns);
    if (n == 2) {
        CHECK(p[0].damaged && strstr(p[0].damaged, key) && strstr(p[0].damaged, "notanumber"));
        CHECK_INT(p[0].concurrency, 2);
        CHECK(p[1].damaged == NULL);
        CHECK_INT(p[1].pid, 42);
    }
    cwork_pool_heartbeats_free(p, n);
    char *body = NULL;
    size_t len = 0;
    CHECK_INT(cwork_client_pools_json(cl, &body, &len, &err), 0);
    CHECK(body && strstr(body, "\"damaged\"") && strstr(body, key));
    cwork_free(body);
    body = NULL;
    CHECK_INT(cwork_client_busy_workers_json(cl, &body, &len, &err), 0);
    if (!body || !strstr(body, "\"j1\""))
        tl_fail(__FILE__, __LINE__, "busy: %s (%s)", body ? body : "NULL", err.message);
    cwork_free(body);
    cwork_client_free(cl);
    cwork_redis_free(r);

    CHECK_INT(cli_run_in_ns(ns, NULL, (const char *const[]){"pools", NULL}), 0);
    if (!strstr(cli_out_, "bbbb") || !strstr(cli_out_, "aaaa") || !strstr(cli_err_, key))
        tl_fail(__FILE__, __LINE__, "pools: %s / %s", cli_out_, cli_err_);
    CHECK_INT(cli_run_in_ns(ns, NULL, (const char *const[]){"busy", NULL}), 0);
    if (!strstr(cli_out_, "j1")) tl_fail(__FILE__, __LINE__, "busy: %s / %s", cli_out_, cli_err_);
    tl_ns_delete(c, ns);
    redisFree(c);
}

int main(void)
{
    RUN(a_damaged_pool_is_named_and_the_others_listed);
    return tl_finish();
}
