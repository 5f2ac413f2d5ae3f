/* bench_pool's pieces that its sharded run (bench_pool_shards.c, `bench_pool --shards S`)
 * uses: the benchmark's own connection, the no-op jobs and their counters. One program:
 * nothing here is thread-safe beyond what bench_pool.c's comments say. */
#ifndef CWORK_BENCH_POOL_H
#define CWORK_BENCH_POOL_H

#include "cwork.h"

#include <hiredis/hiredis.h>

typedef struct raw_conn raw_conn;

/* A connection of its own to the server, or in a Cluster to the master of ns (NULL:
 * no namespace); exits on error. */
raw_conn *bp_dial(const char *url, const char *ns);
void bp_close(raw_conn *raw);
/* A command's reply (free with freeReplyObject), or NULL. */
redisReply *bp_command(raw_conn *raw, int argc, const char **argv);
/* The server's CPU seconds so far (INFO cpu). */
double bp_redis_cpu(raw_conn *raw);
/* Deletes every key of ns on raw's server. */
void bp_drop(raw_conn *raw, const char *ns);

/* Enqueues jobs no-op jobs over `queues` queues (job0, job1, …), in bulk. */
void bp_enqueue_noops(cwork_enqueuer *enq, long jobs, int queues);
/* Registers their handler on p for `queues` queues, with the --tune settings. */
void bp_register_noops(cwork_pool *p, int queues);
/* The no-op handlers' count of starts, reset to 0, and the time from the first start
 * to the last since then (seconds). */
void bp_reset_starts(void);
long bp_starts(void);
double bp_run_seconds(void);

/* bench_pool_shards.c: the --shards run; the process's exit status. */
int bp_sharded_run(const char *url, unsigned shards, long jobs, int queues, unsigned concurrency);

#endif
