/* A Redis Cluster for the failover tests (fault_cluster.c, fault_cluster_shards.c):
 * three masters and three replicas started here on 127.0.0.1 (`redis-cli --cluster
 * create --cluster-replicas 1`, cluster-node-timeout CT_NODE_TIMEOUT_MS, no eviction),
 * one master given a second replica so that min_replicas=1 still finds one once the
 * first was promoted, and that master SIGKILLed. */
#ifndef CWORK_CLUSTER_TOPO_H
#define CWORK_CLUSTER_TOPO_H

#define CT_NODES 6
#define CT_NODE_TIMEOUT_MS 2000

typedef struct cluster_topo {
    char dir[64];
    int node_port[CT_NODES + 1]; /* the last: the second replica */
    int node_pid[CT_NODES + 1];  /* 0 once killed */
    int killed_port;
    int full_coverage; /* cluster-require-full-coverage */
} cluster_topo;

/* Starts the six nodes and makes the cluster, with cluster-require-full-coverage yes
 * (Redis' default: every node refuses commands while a slot has no master, so from the
 * failure's detection to the promotion) or no (the other slots go on); 0, -1, or 1 when
 * redis-cli could not make
 * a cluster of them (no cluster support: the caller skips); redis-cli's output is in
 * <dir>/create.log. */
int ct_start(cluster_topo *c, const char *tag, int full_coverage);
/* Gives the master of slot a second replica and waits until both replicas have its
 * data (WAIT 2). 0 or -1. */
int ct_add_replica(cluster_topo *c, int slot);
/* The port of the master serving slot, as the first live node says; 0 if unknown. */
int ct_master_of(cluster_topo *c, int slot);
/* The slot of key (CLUSTER KEYSLOT), or -1. */
int ct_keyslot(cluster_topo *c, const char *key);
/* SIGKILLs the master of slot (remembered as killed_port); its port. */
int ct_kill_master(cluster_topo *c, int slot);
/* 1 once another node than the killed one is the master of slot, and says so (ROLE). */
int ct_promoted(cluster_topo *c, int slot);
/* Kills every node and removes the directory. */
void ct_stop(cluster_topo *c);

#endif
