/* Enqueueing into a sharded namespace on a real Redis Cluster (three masters, started
 * here with redis-cli --cluster create): each shard's namespace lives in its own slot,
 * on the master of that slot, and every job is found there — plain jobs by id, unique
 * guards one per namespace, a batch split per shard — through one enqueuer whose
 * shards each have a redis clone of their own. */
#include "redis_cluster.h"
#include "sharding.h"
#include "transport_testutil.h"

#define MASTERS 3
#define S 4

typedef struct cluster {
    char dir[64];
    tt_proc node[MASTERS];
    char url[256];
} cluster;

static cluster cl;

static void cluster_stop(cluster *c)
{
    for (int i = 0; i < MASTERS; i++)
        tt_kill(&c->node[i], SIGKILL);
    tt_rmdir(c->dir);
}

/* Every node says the cluster is ok. */
static int cluster_ok(cluster *c)
{
    for (int i = 0; i < MASTERS; i++) {
        redisReply *info = tt_node_cmd(c->node[i].port, "CLUSTER INFO");
        int ok = info && info->type == REDIS_REPLY_STRING && strstr(info->str, "cluster_state:ok");
        if (info) freeReplyObject(info);
        if (!ok) return 0;
    }
    return 1;
}

static int cluster_start(cluster *c)
{
    memset(c, 0, sizeof *c);
    if (tt_tmpdir(c->dir, sizeof c->dir, "shardcl") != 0) return -1;
    char nodes[256] = "";
    size_t len = 0;
    for (int i = 0; i < MASTERS; i++) {
        if (tt_spawn_cluster_node(&c->node[i], c->dir, NULL) != 0) return -1;
        len += (size_t)snprintf(nodes + len, sizeof nodes - len, " 127.0.0.1:%d", c->node[i].port);
    }
    if (tt_sh("redis-cli --cluster create%s --cluster-replicas 0 --cluster-yes >%s/create.log 2>&1",
              nodes, c->dir) != 0)
        return -1;
    int ready = 0;
    for (int k = 0; k < 300 && !(ready = cluster_ok(c)); k++)
        tl_sleep_ms(100);
    snprintf(c->url, sizeof c->url, "redis+cluster://127.0.0.1:%d", c->node[0].port);
    return ready ? 0 : -1;
}

/* Shard i's namespace and the port of its master. */
static int shard_at(const char *ns, unsigned i, char *name, size_t size)
{
    cwork_error err = {0};
    CHECK_INT(cw_sharding_ns(ns, i, name, size, &err), 0);
    return tt_cluster_master_of(cl.node[0].port, cw_cluster_key_slot(name, strlen(name)));
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
    if (!tl_on_path("redis-cli") || !tl_on_path("redis-server")) {
        fprintf(stderr, "redis-server and redis-cli are needed\n");
        return 1;
    }
    if (cluster_start(&cl) != 0) {
        fprintf(stderr, "cannot start a Redis Cluster in %s\n", cl.dir);
        cluster_stop(&cl);
        return 1;
    }
    RUN(jobs_land_on_the_master_of_their_shard);
    cluster_stop(&cl);
    return tl_finish();
}
