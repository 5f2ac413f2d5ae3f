/* A Redis Cluster of three masters and no replicas, started by a test for itself (the
 * sharded-namespace tests: test_enqueue_sharded_cluster, test_enqueue_grow_cluster,
 * test_web_shards_cluster, test_pool_nsshards_stall). Its nodes come from
 * tt_spawn_cluster_node (transport_testutil.h): each on a port pair found free from a
 * random start and proved to be its own process once up, so that tests started together
 * by `ctest -j8` never build a cluster of each other's nodes. The failover tests, which
 * need replicas, have tests/faults/cluster_topo.h. */
#ifndef CWORK_CLUSTER_TESTUTIL_H
#define CWORK_CLUSTER_TESTUTIL_H

#include "redis_cluster.h"
#include "sharding.h"
#include "transport_testutil.h"

#define TC_MASTERS 3 /* redis-cli --cluster create wants three masters at least */

typedef struct tc_cluster {
    char dir[64];
    tt_proc node[TC_MASTERS];
    char url[256]; /* redis+cluster:// of the first node */
} tc_cluster;

/* Kills every node (one stopped by SIGSTOP too) and removes the directory. */
__attribute__((unused)) static void tc_stop(tc_cluster *c)
{
    for (int i = 0; i < TC_MASTERS; i++) {
        if (c->node[i].pid > 0) kill(c->node[i].pid, SIGCONT);
        tt_kill(&c->node[i], SIGKILL);
    }
    tt_rmdir(c->dir);
}

/* Every node says the cluster is ok. */
__attribute__((unused)) static int tc_ok(tc_cluster *c)
{
    for (int i = 0; i < TC_MASTERS; i++) {
        redisReply *info = tt_node_cmd(c->node[i].port, "CLUSTER INFO");
        int ok = info && info->type == REDIS_REPLY_STRING && strstr(info->str, "cluster_state:ok");
        if (info) freeReplyObject(info);
        if (!ok) return 0;
    }
    return 1;
}

/* Starts the nodes in /tmp/cwork-<tag>-XXXXXX, makes them one cluster (redis-cli's output
 * in <dir>/create.log) and waits up to 30 s for every node to say it is ok. 0, or -1
 * with a line on stderr (the caller still calls tc_stop). */
__attribute__((unused)) static int tc_start(tc_cluster *c, const char *tag)
{
    memset(c, 0, sizeof *c);
    if (!tl_on_path("redis-cli") || !tl_on_path("redis-server")) {
        fprintf(stderr, "redis-server and redis-cli are needed\n");
        return -1;
    }
    if (tt_tmpdir(c->dir, sizeof c->dir, tag) != 0) return -1;
    char nodes[256] = "";
    size_t len = 0;
    for (int i = 0; i < TC_MASTERS; i++) {
        if (tt_spawn_cluster_node(&c->node[i], c->dir, NULL) != 0) {
            fprintf(stderr, "cannot start a cluster node in %s\n", c->dir);
            return -1;
        }
        len += (size_t)snprintf(nodes + len, sizeof nodes - len, " 127.0.0.1:%d", c->node[i].port);
    }
    if (tt_sh("redis-cli --cluster create%s --cluster-replicas 0 --cluster-yes >%s/create.log 2>&1",
              nodes, c->dir) != 0) {
        fprintf(stderr, "redis-cli --cluster create failed: see %s/create.log\n", c->dir);
        return -1;
    }
    int ready = 0;
    for (int k = 0; k < 300 && !(ready = tc_ok(c)); k++)
        tl_sleep_ms(100);
    snprintf(c->url, sizeof c->url, "redis+cluster://127.0.0.1:%d", c->node[0].port);
    if (!ready) fprintf(stderr, "the cluster in %s never said it was ok\n", c->dir);
    return ready ? 0 : -1;
}

/* Shard i's namespace of ns in name (cw_sharding_ns), and the port of its master. */
__attribute__((unused)) static int tc_shard_master(tc_cluster *c, const char *ns, unsigned i,
                                                   char *name, size_t size)
{
    if (cw_sharding_ns(ns, i, name, size, NULL) != 0) return 0;
    return tt_cluster_master_of(c->node[0].port, cw_cluster_key_slot(name, strlen(name)));
}

/* The index in c->node of the node on port, or -1. */
__attribute__((unused)) static int tc_node_index(tc_cluster *c, int port)
{
    for (int i = 0; i < TC_MASTERS; i++)
        if (c->node[i].port == port) return i;
    return -1;
}

#endif
