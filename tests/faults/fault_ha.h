/* A failover of the namespace's master at load (issue 20; README "Faults and bad
 * input"), shared by fault_sentinel.c and fault_cluster.c: the fault suite's world
 * (pools of `cwork work`, the generator, the history checker) against a replicated
 * Redis the test started, reached only through its URL (w->url, with min_replicas=1),
 * and the master SIGKILLed while jobs flow. */
#ifndef CWORK_FAULT_HA_H
#define CWORK_FAULT_HA_H

#include "faults.h"

#define HA_POOLS 3
#define HA_SKIP 77
/* Runs per pool before the kill, and of jobs enqueued after it (each pool at least a
 * fifth of that): the load. The generator enqueues up to a hundred jobs a second, each
 * waiting for a replica. */
#define HA_LOAD_RUNS 60

typedef struct ha_topology {
    const char *what;             /* "Sentinel", "Cluster" (for the output) */
    long detect_ms;               /* the failure detection configured: down-after-milliseconds or
                                     cluster-node-timeout; every wait for the failover derives from it */
    int (*kill_master)(world *w); /* SIGKILLs the namespace's master; its port, or -1 */
    int (*promoted)(world *w);    /* 1 once another node is the namespace's master */
} ha_topology;

/* Starts the pools and the generator, waits for jobs to flow through every pool, kills
 * the master, waits for the promotion and for every pool to run jobs enqueued after
 * it, drains, and judges the history: no acknowledged job lost, nothing run whose
 * enqueue said nothing was written, every duplicate explained (a run in flight at the
 * failover, or stopped by a lost lease), max concurrency of "limited" never exceeded,
 * the lock counters back to 0. Prints the figures (the pause). Returns the number of
 * failed checks. */
int ha_run(world *w, const ha_topology *t);

#endif
