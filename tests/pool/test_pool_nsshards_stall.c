/* The shared budget of a pool on a sharded namespace (docs/POOL.md "The shared budget")
 * when one shard's master stops answering: on a real Redis Cluster of three masters (started
 * here), with the namespace's two shards on different masters, the master of shard 1 is
 * stopped (SIGSTOP) while both shards have a backlog; shard 0's jobs all run meanwhile,
 * and once the master is back every job of both shards has run exactly once. */
#include "cwork.h"
#include "cluster_testutil.h"

#include <stdatomic.h>

#define S 2
#define JOBS 100

static tc_cluster cl;
static atomic_int done_[S];
static atomic_int running_, max_running_;

/* A namespace whose two shards are on different masters. */
static void spread_ns(char *ns, size_t size)
{
    char base[64];
    tl_unique_ns("budst", base, sizeof base);
    for (int n = 0; n < 1000; n++) {
        snprintf(ns, size, "{%s-%d}", base, n);
        char name[96];
        if (tc_shard_master(&cl, ns, 0, name, sizeof name) !=
            tc_shard_master(&cl, ns, 1, name, sizeof name))
            return;
    }
    CHECK(!"no namespace spread over two masters");
}

/* {"s": shard}: 2 ms of work, counted by shard and by how many run at once. */
static int work(cwork_job *job, void *ctx)
{
    (void)ctx;
    int now = atomic_fetch_add(&running_, 1) + 1;
    int max = atomic_load(&max_running_);
    while (now > max && !atomic_compare_exchange_weak(&max_running_, &max, now)) {
    }
    tl_sleep_ms(2);
    long long s = cwork_job_arg_int64(job, "s");
    if (s >= 0 && s < S) atomic_fetch_add(&done_[s], 1);
    atomic_fetch_sub(&running_, 1);
    return 0;
}

/* Waits up to ms for done_[s] to reach want; returns it. */
static int wait_done(unsigned s, int want, long ms)
{
    for (long waited = 0; waited < ms && atomic_load(&done_[s]) < want; waited += 5)
        tl_sleep_ms(5);
    return atomic_load(&done_[s]);
}

static void stalled_master_stalls_only_its_shard(void)
{
    char ns[96], shard_ns[S][96];
    int port[S];
    spread_ns(ns, sizeof ns);
    for (unsigned s = 0; s < S; s++) {
        port[s] = tc_shard_master(&cl, ns, s, shard_ns[s], sizeof shard_ns[s]);
        for (int k = 0; k < JOBS; k++) {
            redisReply *r = tt_node_cmd(port[s],
                                        "LPUSH %s:jobs:work {\"name\":\"work\",\"id\":\"s%u-%d\","
                                        "\"t\":1700000000,\"args\":{\"s\":%u}}",
                                        shard_ns[s], s, k, s);
            CHECK(r && r->type == REDIS_REPLY_INTEGER);
            if (r) freeReplyObject(r);
        }
    }
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(cl.url, NULL, &err);
    CHECK(redis != NULL);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 4;
    o.shards = S;
    cwork_pool *p = cwork_pool_new(redis, ns, &o, &err);
    CHECK(p != NULL);
    CHECK_INT(cwork_pool_register(p, "work", work, NULL, &err), 0);
    CHECK_INT(cwork_pool_start(p, &err), 0);
    /* Both shards run, then shard 1's master stops answering. */
    CHECK(wait_done(0, 5, 20000) >= 5);
    CHECK(wait_done(1, 5, 20000) >= 5);
    int node1 = tc_node_index(&cl, port[1]);
    CHECK(node1 >= 0);
    kill(cl.node[node1].pid, SIGSTOP);
    int stopped_at = atomic_load(&done_[1]);
    /* Shard 0 still runs every one of its jobs. */
    CHECK_INT(wait_done(0, JOBS, 60000), JOBS);
    /* Shard 1 ran at most what its executors had already started. */
    CHECK(atomic_load(&done_[1]) <= stopped_at + 4);
    kill(cl.node[node1].pid, SIGCONT);
    CHECK_INT(cwork_pool_drain(p, 60000, &err), 0);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    CHECK_INT(atomic_load(&done_[0]), JOBS);
    CHECK_INT(atomic_load(&done_[1]), JOBS);
    CHECK(atomic_load(&max_running_) <= 4);
    for (unsigned s = 0; s < S; s++) {
        redisReply *r = tt_node_cmd(port[s], "LLEN %s:jobs:work", shard_ns[s]);
        CHECK(r && r->integer == 0);
        if (r) freeReplyObject(r);
    }
    cwork_pool_free(p);
    cwork_redis_free(redis);
}

int main(void)
{
    if (tc_start(&cl, "budgetcl") != 0) {
        tc_stop(&cl);
        return 1;
    }
    RUN(stalled_master_stalls_only_its_shard);
    tc_stop(&cl);
    return tl_finish();
}
