/* A Redis Cluster failover at load (issue 20; README "Faults and bad input"): three
 * masters and three replicas started here on 127.0.0.1 (`redis-cli --cluster create
 * --cluster-replicas 1`, cluster-node-timeout 2000), the master of the namespace's slot
 * given a second replica, so that min_replicas=1 still finds one once the first was
 * promoted; three `cwork work` pools and the fault suite's generator connected only
 * through redis+cluster://…?min_replicas=1; that master SIGKILLed while jobs flow.
 * Judged by the history checker (fault_ha.c); prints the pause. Skipped (77) where
 * redis-cli or cluster support is missing. */
#include "fault_ha.h"
#include "transport_testutil.h"

#define NODES 6
#define NODE_TIMEOUT_MS 2000

typedef struct cluster_topo {
    char dir[64];
    tt_proc node[NODES + 1]; /* the last: the namespace master's second replica */
    char url[512];
    int slot; /* the namespace's */
} cluster_topo;

static int start_node(cluster_topo *c, int i)
{
    char timeout[16];
    snprintf(timeout, sizeof timeout, "%d", NODE_TIMEOUT_MS);
    /* (no replica migration: the second replica stays with the namespace's master) */
    const char *const extra[] = {"--cluster-node-timeout",
                                 timeout,
                                 "--cluster-allow-replica-migration",
                                 "no",
                                 "--maxmemory-policy",
                                 "noeviction",
                                 NULL};
    return tt_spawn_cluster_node(&c->node[i], c->dir, extra);
}

/* The port of the master serving slot, as the first live node says; 0 if unknown. */
static int master_of(cluster_topo *c, int slot)
{
    for (int i = 0; i < NODES + 1; i++) {
        if (c->node[i].pid <= 0) continue;
        int port = slot < 0 ? 0 : tt_cluster_master_of(c->node[i].port, (unsigned)slot);
        if (port) return port;
    }
    return 0;
}

static void topo_stop(cluster_topo *c)
{
    for (int i = 0; i < NODES + 1; i++)
        tt_kill(&c->node[i], SIGKILL);
    tt_rmdir(c->dir);
}

/* 1: redis-cli could not make a cluster of the nodes (no cluster support). */
static int topo_start(cluster_topo *c, const char *ns, int *unsupported)
{
    *unsupported = 0;
    if (tt_tmpdir(c->dir, sizeof c->dir, "fault-cluster") != 0) return -1;
    char nodes[256] = "";
    size_t len = 0;
    for (int i = 0; i < NODES; i++) {
        if (start_node(c, i) != 0) return -1;
        len += (size_t)snprintf(nodes + len, sizeof nodes - len, " 127.0.0.1:%d", c->node[i].port);
    }
    if (tt_sh("redis-cli --cluster create%s --cluster-replicas 1 --cluster-yes >%s/create.log 2>&1",
              nodes, c->dir) != 0) {
        *unsupported = 1;
        return -1;
    }
    int ready = 0;
    for (int k = 0; k < 300 && !ready; k++) {
        ready = 1;
        for (int i = 0; i < NODES && ready; i++)
            ready = tt_cluster_ready(c->node[i].port);
        if (!ready) tl_sleep_ms(100);
    }
    redisReply *s = tt_node_cmd(c->node[0].port, "CLUSTER KEYSLOT %s", ns);
    c->slot = s && s->type == REDIS_REPLY_INTEGER ? (int)s->integer : -1;
    if (s) freeReplyObject(s);
    int master = master_of(c, c->slot);
    redisReply *id = master ? tt_node_cmd(master, "CLUSTER MYID") : NULL;
    int ok = ready && id && id->type == REDIS_REPLY_STRING && start_node(c, NODES) == 0 &&
             tt_sh("redis-cli --cluster add-node 127.0.0.1:%d 127.0.0.1:%d --cluster-slave "
                   "--cluster-master-id %s >>%s/create.log 2>&1",
                   c->node[NODES].port, master, id->str, c->dir) == 0;
    if (id) freeReplyObject(id);
    int synced = 0;
    for (int k = 0; ok && k < 300 && !synced; k++) {
        redisReply *w = tt_node_cmd(master, "WAIT 2 100");
        synced = w && w->type == REDIS_REPLY_INTEGER && w->integer >= 2;
        if (w) freeReplyObject(w);
        if (!synced) tl_sleep_ms(50);
    }
    snprintf(
        c->url, sizeof c->url,
        "redis+cluster://127.0.0.1:%d,127.0.0.1:%d?min_replicas=1&min_replicas_timeout_ms=2000",
        c->node[0].port, c->node[1].port);
    return synced ? 0 : -1;
}

static int ctl_port(world *w)
{
    cluster_topo *c = w->topo;
    return master_of(c, c->slot);
}

static int killed_port;

static int kill_master(world *w)
{
    cluster_topo *c = w->topo;
    int port = master_of(c, c->slot);
    for (int i = 0; i < NODES + 1; i++)
        if (c->node[i].port == port) tt_kill(&c->node[i], SIGKILL);
    killed_port = port;
    return port;
}

/* The cluster names another master for the slot, and it serves it. */
static int promoted(world *w)
{
    cluster_topo *c = w->topo;
    int port = master_of(c, c->slot);
    if (!port || port == killed_port) return 0;
    redisReply *r = tt_node_cmd(port, "ROLE");
    int master = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
                 r->element[0]->type == REDIS_REPLY_STRING && !strcmp(r->element[0]->str, "master");
    if (r) freeReplyObject(r);
    return master;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!tl_on_path("redis-cli") || !tl_on_path("redis-server")) {
        printf("fault cluster: SKIPPED: redis-server and redis-cli are needed on the PATH\n");
        return HA_SKIP;
    }
    static cluster_topo topo;
    static world w;
    if (fw_init_external(&w) != 0) return 1;
    /* Every key of a namespace in one slot: its name is a hash tag. */
    char base[sizeof w.ns];
    memcpy(base, w.ns, sizeof base);
    snprintf(w.ns, sizeof w.ns, "{%.*s}", (int)sizeof w.ns - 3, base);
    int unsupported = 0;
    if (topo_start(&topo, w.ns, &unsupported) != 0) {
        printf("fault cluster: %s: cannot start a cluster of three masters and three replicas "
               "(redis-cli --cluster said:)\n",
               unsupported ? "SKIPPED" : "FAILED");
        tt_sh("cat '%s/create.log'", topo.dir);
        topo_stop(&topo);
        fw_destroy(&w, 0);
        return unsupported ? HA_SKIP : 1;
    }
    w.url = topo.url;
    w.topo = &topo;
    w.ctl_port = ctl_port;
    printf("fault cluster: %s, namespace %s (slot %d), files in %s\n", topo.url, w.ns, topo.slot,
           w.dir);
    static const ha_topology cluster = {"Cluster", NODE_TIMEOUT_MS, kill_master, promoted};
    int failures = ha_run(&w, &cluster);
    fw_destroy(&w, failures > 0);
    topo_stop(&topo);
    if (failures) printf("%d check(s) failed; the pools' output is kept in %s\n", failures, w.dir);
    return failures ? 1 : 0;
}
