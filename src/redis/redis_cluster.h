/* redis+cluster://: every command goes to the master serving the namespace's slot.
 *
 * cwork's scripts touch several keys of one namespace at once, so in a cluster every
 * key of a namespace must hash to one slot: the namespace must carry a hash tag
 * ({myapp}, or myapp{1}); others are refused when an enqueuer, pool, client or web
 * server is created (cw_redis_use_namespace). A pool's connections then all go to the
 * master of that slot, found with CLUSTER SLOTS asked of the seed nodes (and of every
 * node seen since, so that the seeds may go away). Redirections are followed: MOVED
 * moves the connection to the named node and updates the map, ASK sends the command
 * once to the importing node after ASKING, TRYAGAIN (a slot half migrated) waits a
 * little and retries; a node that cannot be reached, CLUSTERDOWN or a failover make
 * the next dial ask for the map again. Pipelined replies are not retried (the caller
 * sees the error reply); the connection is then closed at checkin so that the next one
 * goes to the right node. */
#ifndef CWORK_REDIS_CLUSTER_H
#define CWORK_REDIS_CLUSTER_H

#include "redis_impl.h"

#include <stdint.h>

#define CW_CLUSTER_SLOTS 16384

/* The hash slot of a key, with Redis' hash-tag rule ({…}: the part between the first
 * '{' and the next '}', when not empty). Pure. */
unsigned cw_cluster_key_slot(const char *key, size_t len);
/* 1 when every key of namespace ns ("<ns>:…") hashes to one slot whatever follows the
 * prefix: the hash tag lies within ns. Pure. */
int cw_cluster_ns_has_tag(const char *ns);

/* Sets up r->cluster (kind CW_REDIS_CLUSTER) and r->redirect, which follows MOVED, ASK
 * and TRYAGAIN (a few hops at most) and learns from redirections met in pipelines.
 * 0 or CWORK_ENOMEM. */
int cw_cluster_new(cwork_redis *r, cwork_error *err);
void cw_cluster_free(cwork_redis *r);
/* redis.c's dial for a cluster URL: a connection to the master of the namespace's slot. */
int cw_cluster_dial(cwork_redis *r, int probe, cw_conn **out, int *transient, cwork_error *err);
/* Binds the pool to namespace ns (see cw_redis_use_namespace). */
int cw_cluster_bind(cwork_redis *r, const char *ns, cwork_error *err);

#endif
