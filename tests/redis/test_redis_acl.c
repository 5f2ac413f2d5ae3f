/* Least privilege: each role (enqueuer, pool, web server and admin client) works with a
 * Redis user limited to exactly the commands README.md documents for it, and a user
 * missing one gets an error naming it. The ACL lines are read from README.md itself, so
 * the documentation cannot drift from what is tested. Redis records every refusal in
 * ACL LOG (scripts' calls included): it must stay empty. */
#include "transport_testutil.h"

#include <time.h>

static tl_server srv;
static redisContext *admin;
static char acl_lines[3][2048]; /* enqueuer, pool, web */
static const char *role_names[3] = {"cwork-enqueuer", "cwork-pool", "cwork-web"};
enum { ENQUEUER, POOL, WEB };

/* The "ACL SETUSER cwork-…" lines of README.md. */
static int load_acl_lines(void)
{
    const char *src = getenv("CWORK_SOURCE_DIR");
    char path[512];
    snprintf(path, sizeof path, "%s/README.md", src ? src : ".");
    char *readme = tl_read_file(path, NULL);
    if (!readme) return -1;
    int found = 0;
    for (int i = 0; i < 3; i++) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "\nACL SETUSER %s ", role_names[i]);
        const char *p = strstr(readme, prefix);
        if (!p) continue;
        p++;
        size_t n = strcspn(p, "\n");
        if (n < sizeof acl_lines[i]) {
            memcpy(acl_lines[i], p, n);
            acl_lines[i][n] = '\0';
            found++;
        }
    }
    free(readme);
    return found == 3 ? 0 : -1;
}

/* Creates role's user from its README line for namespace ns, without the command
 * `drop` (e.g. "+lpush") when given. */
static void set_user(int role, const char *ns, const char *drop)
{
    char line[4096];
    snprintf(line, sizeof line, "%s", acl_lines[role]);
    const char *argv[256];
    int argc = 0;
    static char words[256][128];
    for (char *tok = strtok(line, " "); tok && argc < 256; tok = strtok(NULL, " ")) {
        if (drop && strcmp(tok, drop) == 0) continue;
        /* ~myapp:* &myapp:* → the test's namespace; >CHANGE-ME → the test's password */
        char *w = words[argc];
        const char *m = strstr(tok, "myapp");
        if (m)
            snprintf(w, 128, "%.*s%s%s", (int)(m - tok), tok, ns, m + 5);
        else if (strcmp(tok, ">CHANGE-ME") == 0)
            snprintf(w, 128, ">pw-%s", role_names[role]);
        else
            snprintf(w, 128, "%s", tok);
        argv[argc++] = w;
    }
    freeReplyObject(tl_cmd(admin, "ACL DELUSER %s", role_names[role]));
    redisReply *r = redisCommandArgv(admin, argc, argv, NULL);
    if (!r || r->type == REDIS_REPLY_ERROR)
        tl_fail(__FILE__, __LINE__, "ACL SETUSER %s: %s", role_names[role],
                r ? r->str : "I/O error");
    if (r) freeReplyObject(r);
}

static cwork_redis *as_user(int role)
{
    char url[160];
    snprintf(url, sizeof url, "redis://%s:pw-%s@127.0.0.1:%d", role_names[role], role_names[role],
             srv.port);
    cwork_error err = {0};
    cwork_redis *r = cwork_redis_new(url, NULL, &err);
    if (!r) tl_fail(__FILE__, __LINE__, "cwork_redis_new: %s", err.message);
    return r;
}

/* What ACL LOG recorded ("reason object; …"), then reset; "" when nothing was refused. */
static void acl_log(char *out, size_t size)
{
    redisReply *r = tl_cmd(admin, "ACL LOG");
    out[0] = '\0';
    size_t len = 0;
    for (size_t i = 0; i < r->elements; i++) {
        redisReply *e = r->element[i];
        const char *reason = "", *object = "", *user = "";
        for (size_t j = 0; j + 1 < e->elements; j += 2) {
            const char *k = e->element[j]->str;
            redisReply *v = e->element[j + 1];
            if (v->type != REDIS_REPLY_STRING) continue;
            if (!strcmp(k, "reason")) reason = v->str;
            if (!strcmp(k, "object")) object = v->str;
            if (!strcmp(k, "username")) user = v->str;
        }
        len += (size_t)snprintf(out + len, len < size ? size - len : 0, "%s %s %s; ", user, reason,
                                object);
        if (len >= size) break;
    }
    freeReplyObject(r);
    freeReplyObject(tl_cmd(admin, "ACL LOG RESET"));
}

#define CHECK_NO_REFUSALS()                                                                        \
    do {                                                                                           \
        char log_[2048];                                                                           \
        acl_log(log_, sizeof log_);                                                                \
        if (log_[0]) tl_fail(__FILE__, __LINE__, "refused by ACL: %s", log_);                      \
    } while (0)

/* ---------------------------------------------------------------- each role */

/* Every way to enqueue. */
static void enqueue_everything(cwork_redis *r, const char *ns)
{
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(r, ns, &err);
    cwork_args *args = cwork_args_new();
    cwork_args_set_string(args, "to", "a@b.c");
    CHECK_INT(cwork_redis_ping(r, &err), 0);
    CHECK_INT(cwork_enqueue(enq, "ok", args, NULL, &err), 0);
    CHECK_INT(cwork_enqueue_in(enq, "ok", 3600, args, NULL, &err), 0);
    CHECK_INT(cwork_enqueue_unique(enq, "ok", args, NULL, &err), 0);
    CHECK_INT(cwork_enqueue_unique(enq, "ok", args, NULL, &err), CWORK_DUPLICATE);
    cwork_args_set_int64(args, "later", 1);
    CHECK_INT(cwork_enqueue_unique_in(enq, "ok", 3600, args, NULL, &err), 0);
    cwork_batch *b = cwork_batch_new(enq);
    for (int i = 0; i < 5; i++) {
        cwork_args_set_int64(args, "i", i);
        cwork_batch_add(b, i < 3 ? "ok" : "fail", args, i == 1 ? 3600 : 0, i == 2, NULL);
    }
    if (cwork_enqueue_batch(b, &err) != 0) tl_fail(__FILE__, __LINE__, "batch: %s", err.message);
    cwork_batch_free(b);
    /* a tracked batch (PROTOCOL §23): opened, joined, sealed and read; a pool that runs
     * its job counts it and enqueues the callback (a "tick") */
    char id[25] = "";
    CHECK_INT(cwork_batch_open(enq, CWORK_BATCH_ON_COMPLETE, "tick", NULL, id, &err), 0);
    b = cwork_batch_new(enq);
    CHECK_INT(cwork_batch_join(b, id, &err), 0);
    CHECK_INT(cwork_batch_add(b, "ok", NULL, 0, 0, &err), 0);
    if (cwork_enqueue_batch(b, &err) != 0)
        tl_fail(__FILE__, __LINE__, "tracked batch: %s", err.message);
    cwork_batch_free(b);
    CHECK_INT(cwork_batch_seal(enq, id, &err), 0);
    cwork_batch_info info;
    CHECK_INT(cwork_batch_read(enq, id, &info, &err), 0);
    CHECK_INT(info.total, 1);
    cwork_args_free(args);
    cwork_enqueuer_free(enq);
}

static void enqueuer_with_its_acl(void)
{
    char ns[64];
    tl_unique_ns("acl-enq", ns, sizeof ns);
    set_user(ENQUEUER, ns, NULL);
    cwork_redis *r = as_user(ENQUEUER);
    enqueue_everything(r, ns);
    cwork_redis_free(r);
    CHECK_NO_REFUSALS();
    tl_ns_delete(admin, ns);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int ran_ok, ran_fail, ran_tick;

static int job_ok(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    pthread_mutex_lock(&mu);
    ran_ok++;
    pthread_mutex_unlock(&mu);
    return 0;
}

static int job_fail(cwork_job *job, void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&mu);
    ran_fail++;
    pthread_mutex_unlock(&mu);
    return cwork_job_fail(job, "failing on purpose");
}

static int job_tick(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    pthread_mutex_lock(&mu);
    ran_tick++;
    pthread_mutex_unlock(&mu);
    return 0;
}

static int counts_reached(void)
{
    pthread_mutex_lock(&mu);
    int done = ran_ok >= 5 && ran_fail >= 2 && ran_tick >= 1;
    pthread_mutex_unlock(&mu);
    return done;
}

/* A pool doing all it does: fetch, succeed, fail to dead, periodic jobs, reap a dead
 * pool's jobs, requeue a due retry, heartbeat, observe, wake-ups, stop. */
static void run_pool(cwork_redis *r, const char *ns)
{
    long long now = (long long)time(NULL);
    /* A pool that died ten minutes ago with a job in progress, and a retry now due. */
    freeReplyObject(tl_cmd(admin, "SADD %s:worker_pools deadbeefdeadbeefdeadbeef", ns));
    freeReplyObject(tl_cmd(admin,
                           "HSET %s:worker_pools:deadbeefdeadbeefdeadbeef heartbeat_at %lld "
                           "job_names ok",
                           ns, now - 600));
    freeReplyObject(tl_cmd(admin, "RPUSH %s:jobs:ok:deadbeefdeadbeefdeadbeef:inprogress %s", ns,
                           "{\"name\":\"ok\",\"id\":\"reaped0000000000000000\",\"t\":1700000000}"));
    freeReplyObject(tl_cmd(admin, "SET %s:jobs:ok:lock 1", ns));
    freeReplyObject(tl_cmd(admin, "HSET %s:jobs:ok:lock_info deadbeefdeadbeefdeadbeef 1", ns));
    freeReplyObject(tl_cmd(admin, "ZADD %s:retry %lld %s", ns, now - 1,
                           "{\"name\":\"ok\",\"id\":\"retried000000000000000\",\"t\":1700000000,"
                           "\"fails\":1,\"err\":\"x\",\"failed_at\":1700000001}"));
    pthread_mutex_lock(&mu);
    ran_ok = ran_fail = ran_tick = 0;
    pthread_mutex_unlock(&mu);

    cwork_pool_options po;
    cwork_pool_options_init(&po);
    po.concurrency = 4;
    po.dead_check_ms = 200;
    cwork_error err = {0};
    cwork_pool *pool = cwork_pool_new(r, ns, &po, &err);
    if (!pool) {
        tl_fail(__FILE__, __LINE__, "pool: %s", err.message);
        return;
    }
    cwork_job_options once;
    cwork_job_options_init(&once);
    once.max_fails = 1;
    cwork_job_options limited;
    cwork_job_options_init(&limited);
    limited.max_concurrency = 2;
    CHECK_INT(cwork_pool_register(pool, "ok", job_ok, &limited, &err), 0);
    CHECK_INT(cwork_pool_register(pool, "fail", job_fail, &once, &err), 0);
    CHECK_INT(cwork_pool_register(pool, "tick", job_tick, NULL, &err), 0);
    CHECK_INT(cwork_pool_periodically_enqueue(pool, "@every 1s", "tick", &err), 0);
    if (cwork_pool_start(pool, &err) != 0) tl_fail(__FILE__, __LINE__, "start: %s", err.message);
    for (int i = 0; i < 300 && !counts_reached(); i++)
        tl_sleep_ms(100);
    CHECK(counts_reached());
    CHECK_INT(cwork_pool_stop(pool, 10000, &err), 0);
    cwork_pool_free(pool);
}

static void pool_with_its_acl(void)
{
    char ns[64];
    tl_unique_ns("acl-pool", ns, sizeof ns);
    set_user(ENQUEUER, ns, NULL);
    set_user(POOL, ns, NULL);
    cwork_redis *enq = as_user(ENQUEUER);
    enqueue_everything(enq, ns);
    cwork_redis *r = as_user(POOL);
    run_pool(r, ns);
    cwork_redis_free(r);
    /* The reaped and the due retry jobs ran too: nothing of "ok" is left waiting. */
    redisReply *n = tl_cmd(admin, "LLEN %s:jobs:ok", ns);
    CHECK_INT(n->integer, 0);
    freeReplyObject(n);
    n = tl_cmd(admin, "ZCARD %s:dead", ns);
    CHECK_INT(n->integer, 2);
    freeReplyObject(n);
    cwork_redis_free(enq);
    CHECK_NO_REFUSALS();
    tl_ns_delete(admin, ns);
}

/* Every route of the web server, reads and actions, then the admin client's extras. */
static void web_with_its_acl(void)
{
    char ns[64];
    tl_unique_ns("acl-web", ns, sizeof ns);
    set_user(ENQUEUER, ns, NULL);
    set_user(POOL, ns, NULL);
    set_user(WEB, ns, NULL);
    cwork_redis *enq = as_user(ENQUEUER), *pr = as_user(POOL);
    enqueue_everything(enq, ns);
    run_pool(pr, ns); /* leaves dead jobs, scheduled jobs, a heartbeat-less namespace */
    cwork_redis *r = as_user(WEB);
    cwork_web_options wo;
    cwork_web_options_init(&wo);
    wo.listen = "127.0.0.1:0";
    cwork_error err = {0};
    cwork_web *web = cwork_web_start(r, ns, &wo, &err);
    if (!web) {
        tl_fail(__FILE__, __LINE__, "web: %s", err.message);
    } else {
        int port = cwork_web_port(web);
        const char *gets[] = {"/queues",
                              "/worker_pools",
                              "/busy_workers",
                              "/retry_jobs",
                              "/scheduled_jobs",
                              "/dead_jobs",
                              "/summary",
                              "/metrics",
                              "/job/reaped0000000000000000",
                              "/dead_jobs?name=fail",
                              "/dashboard",
                              "/queue_jobs?name=ok",
                              "/periodic",
                              "/retry_jobs?per_page=20&order=newest"};
        char body[8192];
        for (size_t i = 0; i < sizeof gets / sizeof gets[0]; i++) {
            int st = tt_http_get(port, gets[i], body, sizeof body);
            if (st != 200 && st != 404)
                tl_fail(__FILE__, __LINE__, "GET %s: %d %.200s", gets[i], st, body);
        }
        cwork_web_free(web);
    }
    cwork_client *cl = cwork_client_new(r, ns, &err);
    int64_t count = 0;
    CHECK_INT(cwork_client_pause(cl, "ok", &err), 0);
    CHECK_INT(cwork_client_unpause(cl, "ok", &err), 0);
    CHECK_INT(cwork_client_retry_all_dead(cl, "fail", &count, &err), 0);
    CHECK_INT(count, 2);
    /* Cancelling (PROTOCOL §21): a waiting job, and a running one of a pool that listens
     * on its cancel channel (the admin connection subscribes for it). */
    cwork_enqueuer *e = cwork_enqueuer_new(enq, ns, NULL);
    cwork_args *no_args = cwork_args_new();
    cwork_job *waiting = NULL;
    CHECK_INT(cwork_enqueue(e, "ok", no_args, &waiting, &err), 0);
    if (waiting) CHECK_INT(cwork_client_cancel(cl, cwork_job_id(waiting), NULL, &err), 0);
    cwork_job_free(waiting);
    cwork_args_free(no_args);
    cwork_enqueuer_free(e);
    tl_do(admin, "SADD %s:worker_pools 0123456789abcdef01234567", ns);
    tl_do(admin, "LPUSH %s:jobs:ok:0123456789abcdef01234567:inprogress %s", ns,
          "{\"name\":\"ok\",\"id\":\"running1\",\"t\":1}");
    redisContext *sub = redisConnect(admin->tcp.host, admin->tcp.port); /* its server */
    freeReplyObject(redisCommand(sub, "SUBSCRIBE %s:cwork:cancel:0123456789abcdef01234567", ns));
    CHECK_INT(cwork_client_cancel(cl, "running1", NULL, &err), 0);
    redisFree(sub);
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    int64_t total = 0;
    CHECK_INT(cwork_client_list(cl, CWORK_SET_SCHEDULED, 1, NULL, &jobs, &n, &total, &err), 0);
    for (size_t i = 0; i < n; i++)
        CHECK_INT(cwork_client_delete(cl, CWORK_SET_SCHEDULED, jobs[i].at,
                                      cwork_job_id(jobs[i].job), &err),
                  0);
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(cwork_client_trim_dead(cl, 0, 0, &count, &err), 0);
    CHECK_INT(cwork_client_delete_all_dead(cl, NULL, &count, &err), 0);
    /* The web UI's actions: run all now, clear a queue, delete all, a selection. */
    int64_t stayed = 0;
    CHECK_INT(cwork_client_run_all_now(cl, CWORK_SET_RETRY, NULL, &count, &stayed, &err), 0);
    CHECK_INT(cwork_client_clear_queue(cl, "ok", &count, &err), 0);
    CHECK_INT(cwork_client_delete_all(cl, CWORK_SET_SCHEDULED, NULL, &count, &err), 0);
    cwork_job_ref none = {0, "no-such-id"};
    size_t done = 0, unchanged = 0;
    CHECK_INT(cwork_client_apply(cl, CWORK_SET_RETRY, CWORK_ACTION_RUN_NOW, &none, 1, &done,
                                 &unchanged, &err),
              CWORK_ENOTFOUND);
    cwork_client_free(cl);
    cwork_redis_free(r);
    cwork_redis_free(pr);
    cwork_redis_free(enq);
    CHECK_NO_REFUSALS();
    tl_ns_delete(admin, ns);
}

/* ---------------------------------------------------------------- a command too few */

static void missing_permission_is_named(void)
{
    char ns[64];
    tl_unique_ns("acl-miss", ns, sizeof ns);
    cwork_error err = {0};

    set_user(ENQUEUER, ns, "+lpush");
    cwork_redis *r = as_user(ENQUEUER);
    cwork_enqueuer *enq = cwork_enqueuer_new(r, ns, &err);
    CHECK_INT(cwork_enqueue(enq, "ok", NULL, NULL, &err), CWORK_EREDIS);
    if (!strstr(err.message, "'lpush'")) tl_fail(__FILE__, __LINE__, "message: %s", err.message);
    cwork_enqueuer_free(enq);
    cwork_redis_free(r);

    /* Inside a script the refusal names the command the script called. */
    set_user(ENQUEUER, ns, "+zadd");
    r = as_user(ENQUEUER);
    enq = cwork_enqueuer_new(r, ns, &err);
    CHECK(cwork_enqueue_unique_in(enq, "ok", 60, NULL, NULL, &err) < 0);
    if (!strstr(err.message, "'zadd'")) tl_fail(__FILE__, __LINE__, "message: %s", err.message);
    cwork_enqueuer_free(enq);
    cwork_redis_free(r);

    set_user(WEB, ns, "+zcard");
    r = as_user(WEB);
    cwork_web_options wo;
    cwork_web_options_init(&wo);
    wo.listen = "127.0.0.1:0";
    cwork_web *web = cwork_web_start(r, ns, &wo, &err);
    if (web) {
        char body[4096];
        int st = tt_http_get(cwork_web_port(web), "/dead_jobs", body, sizeof body);
        CHECK(st >= 500);
        if (!strstr(body, "'zcard'")) tl_fail(__FILE__, __LINE__, "body: %s", body);
        cwork_web_free(web);
    }
    cwork_redis_free(r);
    freeReplyObject(tl_cmd(admin, "ACL LOG RESET"));
    tl_ns_delete(admin, ns);
}

int main(void)
{
    if (load_acl_lines() != 0) {
        fprintf(stderr, "README.md has no \"ACL SETUSER cwork-…\" line for each role\n");
        return 1;
    }
    if (tl_server_start(&srv, 0) != 0) {
        fprintf(stderr, "cannot start a private redis-server\n");
        return 1;
    }
    admin = redisConnect("127.0.0.1", srv.port);
    RUN(enqueuer_with_its_acl);
    RUN(pool_with_its_acl);
    RUN(web_with_its_acl);
    RUN(missing_permission_is_named);
    redisFree(admin);
    tl_server_destroy(&srv);
    return tl_finish();
}
