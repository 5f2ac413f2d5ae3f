/* Enqueueing into a sharded namespace on a real Redis Cluster (three masters, started
 * here with redis-cli --cluster create): each shard's namespace lives in its own slot,
 * on the master of that slot, and every job is found there — plain jobs by id, unique
 * guards one per namespace, a batch split per shard — through one enqueuer whose
 * shards each have a redis clone of their own. */
#include "cluster_testutil.h"

#define S 4

static tc_cluster cl;

/* Shard i's namespace and the port of its master. */
static int shard_at(const char *ns, unsigned i, char *name, size_t size)
{
    int port = tc_shard_master(&cl, ns, i, name, size);
    CHECK(port > 0);
    return port;
}

/* A tagged namespace whose S shards are not all on one master (which one each lands on
 * depends on the slots the cluster gave its masters). */
static void spread_ns(char *ns, size_t size)
{
    char base[64];
    tl_unique_ns("shcl", base, sizeof base);
    for (int n = 0; n < 1000; n++) {
        snprintf(ns, size, "{%s-%d}", base, n);
        char name[96];
        int first = shard_at(ns, 0, name, sizeof name), spread = 0;
        for (unsigned i = 1; i < S; i++)
            spread |= shard_at(ns, i, name, sizeof name) != first;
        if (spread) return;
    }
    CHECK(!"no namespace spread over two masters");
}

/* The elements of a list or zset on a node, as one string (each followed by '\n'). */
static char *members(int port, const char *cmd, const char *key)
{
    redisReply *r = tt_node_cmd(port, cmd, key);
    CHECK(r && r->type == REDIS_REPLY_ARRAY);
    size_t len = 1;
    for (size_t i = 0; r && i < r->elements; i++)
        len += r->element[i]->len + 1;
    char *out = calloc(1, len);
    for (size_t i = 0; r && i < r->elements; i++) {
        strcat(out, r->element[i]->str);
        strcat(out, "\n");
    }
    if (r) freeReplyObject(r);
    return out;
}

static void jobs_land_on_the_master_of_their_shard(void)
{
    cwork_error err = {0};
    cwork_redis *r = cwork_redis_new(cl.url, NULL, &err);
    CHECK(r != NULL);
    char ns[96];
    spread_ns(ns, sizeof ns);
    cwork_enqueuer *enq = cwork_enqueuer_new(r, ns, &err);
    CHECK(enq != NULL);
    CHECK_INT(cwork_enqueuer_set_shards(enq, S, &err), 0);
    /* a follower (declares nothing) on a redis of its own */
    cwork_redis *r2 = cwork_redis_new(cl.url, NULL, &err);
    cwork_enqueuer *follower = cwork_enqueuer_new(r2, ns, &err);

    enum { N = 40, U = 12, B = 12 };
    char ids[N + B][25];
    int count[S] = {0};
    for (int i = 0; i < N; i++) {
        cwork_job *job = NULL;
        CHECK_INT(cwork_enqueue(i % 2 ? follower : enq, "a", NULL, &job, &err), 0);
        snprintf(ids[i], sizeof ids[i], "%s", cwork_job_id(job));
        count[cw_sharding_of(ids[i], 24, S)]++;
        cwork_job_free(job);
    }
    int ucount[S] = {0};
    for (int i = 0; i < U; i++) {
        cwork_args *a = cwork_args_new();
        cwork_args_set_int64(a, "n", i);
        CHECK_INT(cwork_enqueue_unique(enq, "u", a, NULL, &err), 0);
        CHECK_INT(cwork_enqueue_unique(follower, "u", a, NULL, &err), CWORK_DUPLICATE);
        char route[32];
        snprintf(route, sizeof route, "u:{\"n\":%d}", i);
        ucount[cw_sharding_of(route, strlen(route), S)]++;
        cwork_args_free(a);
    }
    cwork_batch *b = cwork_batch_new(enq);
    for (int i = 0; i < B; i++)
        CHECK_INT(cwork_batch_add(b, "a", NULL, 0, 0, &err), 0);
    CHECK_INT(cwork_enqueue_batch(b, &err), 0);
    for (int i = 0; i < B; i++) {
        const char *id = NULL;
        CHECK_INT(cwork_batch_status(b, (size_t)i, &id), 0);
        snprintf(ids[N + i], sizeof ids[N + i], "%s", id);
        count[cw_sharding_of(id, 24, S)]++;
    }
    cwork_batch_free(b);

    /* each shard's jobs on its master: exactly the ids routed there */
    for (unsigned s = 0; s < S; s++) {
        char name[96], key[128];
        int port = shard_at(ns, s, name, sizeof name);
        CHECK(port > 0);
        snprintf(key, sizeof key, "%s:jobs:a", name);
        char *list = members(port, "LRANGE %s 0 -1", key);
        int found = 0;
        for (int i = 0; i < N + B; i++) {
            int here = strstr(list, ids[i]) != NULL;
            if (here && cw_sharding_of(ids[i], 24, S) != s)
                tl_fail(__FILE__, __LINE__, "job %s is in shard %u, not its own", ids[i], s);
            found += here;
        }
        CHECK_INT(found, count[s]);
        free(list);
        snprintf(key, sizeof key, "%s:jobs:u", name);
        redisReply *len = tt_node_cmd(port, "LLEN %s", key);
        CHECK(len && len->integer == ucount[s]);
        if (len) freeReplyObject(len);
        /* the shard's keys are all in its slot (the count of keys there: jobs:a, jobs:u,
         * known_jobs, the guards, and in shard 0 the record) */
        unsigned slot = cw_cluster_key_slot(name, strlen(name));
        redisReply *n = tt_node_cmd(port, "CLUSTER COUNTKEYSINSLOT %u", slot);
        long long want =
            (count[s] > 0) + (ucount[s] > 0) + (count[s] + ucount[s] > 0) + ucount[s] + (s == 0);
        CHECK(n && n->integer == want);
        if (n) freeReplyObject(n);
    }
    cwork_enqueuer_free(follower);
    cwork_enqueuer_free(enq);
    cwork_redis_free(r2);
    cwork_redis_free(r);
}

int main(void)
{
    if (tc_start(&cl, "shardcl") != 0) {
        tc_stop(&cl);
        return 1;
    }
    RUN(jobs_land_on_the_master_of_their_shard);
    tc_stop(&cl);
    return tl_finish();
}
