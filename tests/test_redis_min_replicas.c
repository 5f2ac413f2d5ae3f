/* min_replicas=N: an enqueue is acknowledged only once N replicas have it (WAIT), and
 * says so when they don't, against a real master and replica started here. */
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
    tt_kill(&replica, SIGKILL);
    tl_server_destroy(&master);
    return tl_finish();
}
