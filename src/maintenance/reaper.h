/* The dead pool reaper (PROTOCOL §9): gives back the jobs and concurrency slots of pools
 * that died without a clean stop, sharing reaper_lock and the rules with Go reapers.
 * Differences from Go (PROTOCOL §16.11): the stale-lock cleanup runs once and logs
 * negative locks; pass errors are logged; a pool without heartbeat also gets its
 * in-progress jobs requeued; every pass covers the names in known_jobs as well as the
 * pool's own; the lock counters are healed from the in-progress lists (negative and
 * non-numeric values included) and a damaged key stops only its own job name; the
 * reaper lock is a 5 s lease renewed while a cycle runs and naming its holder, not a
 * lock for the whole period (a killed reaper's lock stalls no one: reaper_lock.h);
 * and a cheap check every few seconds runs a cycle as soon as a pool's heartbeat goes
 * stale, so that a crashed pool's jobs are back within ~15 s. */
#ifndef CWORK_REAPER_H
#define CWORK_REAPER_H

#include "keys.h"
#include "redis.h"

#define CW_REAPER_DEAD_TIME 10       /* seconds without heartbeat: dead */
#define CW_REAPER_DEFAULT_PERIOD 300 /* full cycle every period + rand(0..29) s */
/* (the reaper lock is not held for the period, as Go's is, but as a short lease
 * renewed while a cycle runs: reaper_lock.h) */
#define CW_REAPER_FIRST_CYCLE 10        /* seconds after start */
#define CW_REAPER_DEFAULT_CHECK_MS 5000 /* the cheap dead-pool check */

typedef struct cw_reaper cw_reaper;

/* Everything is copied except redis and keys (borrowed for the reaper's life). */
cw_reaper *cw_reaper_new(cwork_redis *redis, const cw_keys *keys, const char *const *registered,
                         size_t nregistered, int64_t period_s, cwork_reaper_hook hook,
                         void *hook_userdata);
void cw_reaper_free(cw_reaper *r);

/* The pool the reaper runs in (its id, copied): named in the reaper lock's value, so
 * that another pool's log says who holds it. Optional; CWORK_EINVAL for an id longer
 * than 64 bytes or with a ':'. */
int cw_reaper_set_pool_id(cw_reaper *r, const char *pool_id);

/* One cycle: take reaper_lock (a lease, reaper_lock.h), call the hook, run the three
 * passes (the lease renewed as they go; they stop if it is lost), report, release the
 * lock. *ran is 0 when another process holds the lock (logged once per blocking).
 * Pass errors are logged and reported to the hook; the returned error is the lock's.
 * Not for concurrent calls on one cw_reaper (one maintenance thread calls it). */
int cw_reaper_cycle(cw_reaper *r, int *ran, cwork_error *err);

/* The cheap check, one round trip: *seen = 1 when a pool in worker_pools has no
 * heartbeat or one older than CW_REAPER_DEAD_TIME. */
int cw_reaper_check(cw_reaper *r, int *seen, cwork_error *err);

#endif
