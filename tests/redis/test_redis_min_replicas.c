/* min_replicas=N: an enqueue is acknowledged only once N replicas have it (WAIT), and
 * says so when they don't; a pool's commits wait for N replicas too (a pipelined WAIT
 * in the same round trip) and warn, without stalling, when they don't come. Against a
 * real master and replica started here. */
#include "redis.h"
#include "transport_testutil.h"

static tl_server master;
static tt_proc replica;

static int start_replica(int port)
{
    char port_s[16], of[64];
    snprintf(port_s, sizeof port_s, "%d", port);
    snprintf(of, sizeof of, "127.0.0.1 %d", master.port);
    const char *argv[] = {"redis-server", "--port",      port_s, "--bind",
                          "127.0.0.1",    "--save",      "",     "--appendonly",
                          "no",           "--replicaof", of,     NULL};
    if (tt_spawn(&replica, port, NULL, argv) != 0) return -1;
    /* Connected and in sync before the test relies on it. */
    redisContext *c = redisConnect("127.0.0.1", master.port);
    for (int i = 0; i < 200; i++) {
        redisReply *r = tl_cmd(c, "WAIT 1 100");
        long long n = r->integer;
        freeReplyObject(r);
        if (n >= 1) {
            redisFree(c);
            return 0;
        }
    }
    redisFree(c);
    return -1;
}

static cwork_enqueuer *enqueuer(cwork_redis **r, const char *query, char *ns, size_t size)
{
    char url[160];
    snprintf(url, sizeof url, "%s?%s", master.url, query);
    cwork_error err = {0};
    *r = cwork_redis_new(url, NULL, &err);
    if (!*r) {
        tl_fail(__FILE__, __LINE__, "cwork_redis_new: %s", err.message);
        return NULL;
    }
    tl_unique_ns("minrep", ns, size);
    return cwork_enqueuer_new(*r, ns, &err);
}

static void acknowledged_by_a_replica(void)
{
    int port = tt_free_port();
    if (start_replica(port) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a replica");
        return;
    }
    cwork_redis *r;
    char ns[64];
    cwork_enqueuer *enq =
        enqueuer(&r, "min_replicas=1&min_replicas_timeout_ms=2000", ns, sizeof ns);
    cwork_error err = {0};
    for (int i = 0; enq && i < 50; i++)
        if (cwork_enqueue(enq, "rep_job", NULL, NULL, &err) != 0)
            tl_fail(__FILE__, __LINE__, "enqueue %d: %s", i, err.message);
    cwork_batch *b = enq ? cwork_batch_new(enq) : NULL;
    for (int i = 0; b && i < 50; i++)
        cwork_batch_add(b, "rep_job", NULL, 0, 0, NULL);
    if (b && cwork_enqueue_batch(b, &err) != 0)
        tl_fail(__FILE__, __LINE__, "batch: %s", err.message);
    cwork_batch_free(b);

    /* Every acknowledged job is on the replica already, without waiting for it. */
    redisContext *rc = redisConnect("127.0.0.1", port);
    redisReply *n = tl_cmd(rc, "LLEN %s:jobs:rep_job", ns);
    CHECK_INT(n->integer, 100);
    freeReplyObject(n);
    redisFree(rc);

    /* Without its replica the master still takes the job, but the enqueue says that no
     * replica has it, after the timeout. */
    tt_kill(&replica, SIGKILL);
    cwork_enqueuer_free(enq);
    cwork_redis_free(r);
    enq = enqueuer(&r, "min_replicas=1&min_replicas_timeout_ms=300", ns, sizeof ns);
    long long t0 = tl_now_ms();
    int rcode = enq ? cwork_enqueue(enq, "rep_job", NULL, NULL, &err) : -1;
    long long took = tl_now_ms() - t0;
    CHECK_INT(rcode, CWORK_EREDIS);
    CHECK(strstr(err.message, "only 0 of 1 replicas") != NULL);
    CHECK(took >= 250 && took < 5000);
    redisContext *mc = redisConnect("127.0.0.1", master.port);
    n = tl_cmd(mc, "LLEN %s:jobs:rep_job", ns);
    CHECK_INT(n->integer, 1);
    freeReplyObject(n);
    tl_ns_delete(mc, ns);
    redisFree(mc);
    cwork_enqueuer_free(enq);
    cwork_redis_free(r);
}

static long long llen_on(int port, const char *key)
{
    redisContext *c = redisConnect("127.0.0.1", port);
    redisReply *n = tl_cmd(c, "LLEN %s", key);
    long long v = n->integer;
    freeReplyObject(n);
    redisFree(c);
    return v;
}

static int noop_job(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    return 0;
}

/* Runs `jobs` no-op jobs in a pool on r; then, the moment the pool has counted them all
 * committed, returns what the replica's in-progress list holds (a commit is counted
 * only once its round trip, WAIT included, is over), or 0 when ask_replica is 0. */
static long long pool_run(cwork_redis *r, const char *ns, int jobs, int ask_replica, long long *ms)
{
    cwork_error err = {0};
    cwork_redis *er = cwork_redis_new(master.url, NULL, &err);
    cwork_enqueuer *enq = cwork_enqueuer_new(er, ns, &err);
    for (int i = 0; i < jobs; i++)
        if (cwork_enqueue(enq, "rep_job", NULL, NULL, &err) != 0)
            tl_fail(__FILE__, __LINE__, "enqueue: %s", err.message);
    cwork_enqueuer_free(enq);
    cwork_redis_free(er);
    cwork_pool_options po;
    cwork_pool_options_init(&po);
    po.concurrency = 4;
    cwork_pool *pool = cwork_pool_new(r, ns, &po, &err);
    if (!pool || cwork_pool_register(pool, "rep_job", noop_job, NULL, &err) != 0 ||
        cwork_pool_start(pool, &err) != 0) {
        tl_fail(__FILE__, __LINE__, "pool: %s", err.message);
        cwork_pool_free(pool);
        return -1;
    }
    long long t0 = tl_now_ms();
    cwork_pool_stats st = {0};
    for (int i = 0; i < 3000 && st.succeeded < (uint64_t)jobs; i++) {
        cwork_pool_get_stats(pool, &st);
        if (st.succeeded < (uint64_t)jobs) tl_sleep_ms(5);
    }
    *ms = tl_now_ms() - t0;
    char key[160];
    snprintf(key, sizeof key, "%s:jobs:rep_job:%s:inprogress", ns, cwork_pool_id(pool));
    long long left = ask_replica ? llen_on(replica.port, key) : 0;
    CHECK_INT(st.succeeded, (uint64_t)jobs);
    CHECK_INT(cwork_pool_stop(pool, 10000, &err), 0);
    cwork_pool_free(pool);
    return left;
}

static void pool_commits_wait_for_replicas(void)
{
    if (start_replica(tt_free_port()) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a replica");
        return;
    }
    char url[160], ns[64];
    snprintf(url, sizeof url, "%s?min_replicas=1&min_replicas_timeout_ms=300", master.url);
    cwork_error err = {0};
    cwork_redis *r = cwork_redis_new(url, NULL, &err);
    if (!r) {
        tl_fail(__FILE__, __LINE__, "cwork_redis_new: %s", err.message);
        return;
    }
    /* A replica that acknowledges: every commit counted is on the replica already. */
    tl_unique_ns("minrep-pool", ns, sizeof ns);
    tl_capture_logs();
    long long ms = 0;
    for (int round = 0; round < 3; round++)
        CHECK_INT(pool_run(r, ns, 50, 1, &ms), 0);
    CHECK_INT(tl_count_logs("redis.min_replicas"), 0);

    /* A replica that stopped answering: each commit waits out the timeout, says so (once
     * a second at most), and the pool goes on. */
    kill(replica.pid, SIGSTOP);
    tl_capture_logs();
    pool_run(r, ns, 20, 0, &ms);
    const tl_log *w = tl_find_log("redis.min_replicas");
    CHECK(w != NULL);
    if (w && !strstr(w->fields, "only 0 of 1 replicas"))
        tl_fail(__FILE__, __LINE__, "warning: %s", w->fields);
    CHECK(ms >= 250); /* it did wait */
    CHECK(tl_count_logs("redis.min_replicas") <= 1 + ms / 1000);
    cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
    kill(replica.pid, SIGCONT);
    tt_kill(&replica, SIGKILL);
    redisContext *mc = redisConnect("127.0.0.1", master.port);
    tl_ns_delete(mc, ns);
    redisFree(mc);
    cwork_redis_free(r);
}

/* Without the parameter nothing waits, replica or not. */
static void off_by_default(void)
{
    cwork_redis *r;
    char ns[64];
    cwork_enqueuer *enq = enqueuer(&r, "", ns, sizeof ns);
    cwork_error err = {0};
    CHECK(enq && cwork_enqueue(enq, "rep_job", NULL, NULL, &err) == 0);
    redisContext *mc = redisConnect("127.0.0.1", master.port);
    tl_ns_delete(mc, ns);
    redisFree(mc);
    cwork_enqueuer_free(enq);
    cwork_redis_free(r);
}

int main(void)
{
    if (tl_server_start(&master, 0) != 0) {
        fprintf(stderr, "cannot start a private redis-server\n");
        return 1;
    }
    RUN(acknowledged_by_a_replica);
    RUN(off_by_default);
    RUN(pool_commits_wait_for_replicas);
    tt_kill(&replica, SIGKILL);
    tl_server_destroy(&master);
    return tl_finish();
}
