/* A Redis Cluster for the failover tests (cluster_topo.h). */
#include "cluster_topo.h"

#include "transport_testutil.h"

static int start_node(cluster_topo *c, int i)
{
    char timeout[16];
    snprintf(timeout, sizeof timeout, "%d", CT_NODE_TIMEOUT_MS);
    /* (no replica migration: the second replica stays with its master) */
    const char *const extra[] = {"--cluster-node-timeout",
                                 timeout,
                                 "--cluster-allow-replica-migration",
                                 "no",
                                 "--maxmemory-policy",
                                 "noeviction",
                                 "--cluster-require-full-coverage",
                                 c->full_coverage ? "yes" : "no",
                                 NULL};
    tt_proc p = {0, 0};
    int rc = tt_spawn_cluster_node(&p, c->dir, extra);
    c->node_pid[i] = (int)p.pid;
    c->node_port[i] = p.port;
    return rc;
}

int ct_master_of(cluster_topo *c, int slot)
{
    for (int i = 0; i < CT_NODES + 1 && slot >= 0; i++) {
        if (c->node_pid[i] <= 0) continue;
        int port = tt_cluster_master_of(c->node_port[i], (unsigned)slot);
        if (port) return port;
    }
    return 0;
}

int ct_keyslot(cluster_topo *c, const char *key)
{
    redisReply *s = tt_node_cmd(c->node_port[0], "CLUSTER KEYSLOT %s", key);
    int slot = s && s->type == REDIS_REPLY_INTEGER ? (int)s->integer : -1;
    if (s) freeReplyObject(s);
    return slot;
}

void ct_stop(cluster_topo *c)
{
    for (int i = 0; i < CT_NODES + 1; i++) {
        tt_proc p = {(pid_t)c->node_pid[i], c->node_port[i]};
        tt_kill(&p, SIGKILL);
        c->node_pid[i] = 0;
    }
    tt_rmdir(c->dir);
}

int ct_start(cluster_topo *c, const char *tag, int full_coverage)
{
    memset(c, 0, sizeof *c);
    c->full_coverage = full_coverage;
    if (tt_tmpdir(c->dir, sizeof c->dir, tag) != 0) return -1;
    char nodes[256] = "";
    size_t len = 0;
    for (int i = 0; i < CT_NODES; i++) {
        if (start_node(c, i) != 0) return -1;
        len += (size_t)snprintf(nodes + len, sizeof nodes - len, " 127.0.0.1:%d", c->node_port[i]);
    }
    if (tt_sh("redis-cli --cluster create%s --cluster-replicas 1 --cluster-yes >%s/create.log 2>&1",
              nodes, c->dir) != 0)
        return 1;
    int ready = 0;
    for (int k = 0; k < 300 && !ready; k++) {
        ready = 1;
        for (int i = 0; i < CT_NODES && ready; i++)
            ready = tt_cluster_ready(c->node_port[i]);
        if (!ready) tl_sleep_ms(100);
    }
    return ready ? 0 : -1;
}

int ct_add_replica(cluster_topo *c, int slot)
{
    int master = ct_master_of(c, slot);
    redisReply *id = master ? tt_node_cmd(master, "CLUSTER MYID") : NULL;
    int ok = id && id->type == REDIS_REPLY_STRING && start_node(c, CT_NODES) == 0 &&
             tt_sh("redis-cli --cluster add-node 127.0.0.1:%d 127.0.0.1:%d --cluster-slave "
                   "--cluster-master-id %s >>%s/create.log 2>&1",
                   c->node_port[CT_NODES], master, id->str, c->dir) == 0;
    if (id) freeReplyObject(id);
    int synced = 0;
    for (int k = 0; ok && k < 300 && !synced; k++) {
        redisReply *w = tt_node_cmd(master, "WAIT 2 100");
        synced = w && w->type == REDIS_REPLY_INTEGER && w->integer >= 2;
        if (w) freeReplyObject(w);
        if (!synced) tl_sleep_ms(50);
    }
    return synced ? 0 : -1;
}

int ct_kill_master(cluster_topo *c, int slot)
{
    int port = ct_master_of(c, slot);
    for (int i = 0; i < CT_NODES + 1; i++)
        if (c->node_port[i] == port && c->node_pid[i] > 0) {
            tt_proc p = {(pid_t)c->node_pid[i], port};
            tt_kill(&p, SIGKILL);
            c->node_pid[i] = 0;
        }
    c->killed_port = port;
    return port;
}

int ct_promoted(cluster_topo *c, int slot)
{
    int port = ct_master_of(c, slot);
    if (!port || port == c->killed_port) return 0;
    redisReply *r = tt_node_cmd(port, "ROLE");
    int master = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
                 r->element[0]->type == REDIS_REPLY_STRING && !strcmp(r->element[0]->str, "master");
    if (r) freeReplyObject(r);
    return master;
}
