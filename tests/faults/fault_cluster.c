/* A Redis Cluster failover at load (issue 20; README "Faults and bad input"): three
 * masters and three replicas started here on 127.0.0.1 (`redis-cli --cluster create
 * --cluster-replicas 1`, cluster-node-timeout 2000), the master of the namespace's slot
 * given a second replica, so that min_replicas=1 still finds one once the first was
 * promoted; three `cwork work` pools and the fault suite's generator connected only
 * through redis+cluster://…?min_replicas=1; that master SIGKILLed while jobs flow.
 * Judged by the history checker (fault_ha.c); prints the pause. Skipped (77) where
 * redis-cli or cluster support is missing. */
#include "cluster_topo.h"
#include "fault_ha.h"
#include "transport_testutil.h"

typedef struct ns_topo {
    cluster_topo c;
    char url[512];
    int slot; /* the namespace's */
} ns_topo;

static int ctl_port(world *w)
{
    ns_topo *t = w->topo;
    return ct_master_of(&t->c, t->slot);
}

static int kill_master(world *w)
{
    ns_topo *t = w->topo;
    return ct_kill_master(&t->c, t->slot);
}

/* The cluster names another master for the slot, and it serves it. */
static int promoted(world *w)
{
    ns_topo *t = w->topo;
    return ct_promoted(&t->c, t->slot);
}

/* 0, -1, or 1 when redis-cli could not make a cluster (no cluster support). */
static int topo_start(ns_topo *t, const char *ns)
{
    int rc = ct_start(&t->c, "fault-cluster", 1);
    if (rc != 0) return rc;
    t->slot = ct_keyslot(&t->c, ns);
    snprintf(
        t->url, sizeof t->url,
        "redis+cluster://127.0.0.1:%d,127.0.0.1:%d?min_replicas=1&min_replicas_timeout_ms=2000",
        t->c.node_port[0], t->c.node_port[1]);
    return ct_add_replica(&t->c, t->slot);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!tl_on_path("redis-cli") || !tl_on_path("redis-server")) {
        printf("fault cluster: SKIPPED: redis-server and redis-cli are needed on the PATH\n");
        return HA_SKIP;
    }
    static ns_topo topo;
    static world w;
    if (fw_init_external(&w) != 0) return 1;
    /* Every key of a namespace in one slot: its name is a hash tag. */
    char base[sizeof w.ns];
    memcpy(base, w.ns, sizeof base);
    snprintf(w.ns, sizeof w.ns, "{%.*s}", (int)sizeof w.ns - 3, base);
    int rc = topo_start(&topo, w.ns);
    int unsupported = rc == 1;
    if (rc != 0) {
        printf("fault cluster: %s: cannot start a cluster of three masters and three replicas "
               "(redis-cli --cluster said:)\n",
               unsupported ? "SKIPPED" : "FAILED");
        tt_sh("cat '%s/create.log'", topo.c.dir);
        ct_stop(&topo.c);
        fw_destroy(&w, 0);
        return unsupported ? HA_SKIP : 1;
    }
    w.url = topo.url;
    w.topo = &topo;
    w.ctl_port = ctl_port;
    printf("fault cluster: %s, namespace %s (slot %d), files in %s\n", topo.url, w.ns, topo.slot,
           w.dir);
    static const ha_topology cluster = {"Cluster", CT_NODE_TIMEOUT_MS, kill_master, promoted};
    int failures = ha_run(&w, &cluster);
    fw_destroy(&w, failures > 0);
    ct_stop(&topo.c);
    if (failures) printf("%d check(s) failed; the pools' output is kept in %s\n", failures, w.dir);
    return failures ? 1 : 0;
}
