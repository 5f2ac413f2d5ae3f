/* The pool's heartbeat (PROTOCOL §6): SADD <p>worker_pools + HMSET <p>worker_pools:<pool>
 * with seven fields, every 2 s on a thread of its own with its own connection, so that
 * slow work elsewhere never delays a beat (a late beat lets reapers take our jobs). */
#ifndef CWORK_HEARTBEAT_H
#define CWORK_HEARTBEAT_H

#include "keys.h"
#include "redis.h"

/* Go beats every 5 s; cwork every 2 s, because its pools hold a lease on their jobs that
 * a beat renews (pool/lease.c): jobs are stopped 6.5 s after the last acknowledged
 * beat was sent, so a 2 s period lets Redis stall or refuse beats for 4.5 s (a failover,
 * a slow fork) before a healthy pool stops its jobs, where 5 s would allow only 1.5 s.
 * A beat is one pipelined round trip: the cost is nothing next to the jobs'. */
#define CW_HEARTBEAT_PERIOD_MS 2000
#define CW_HEARTBEAT_RETRY_MS 1000 /* after a failed beat */

typedef struct cw_heartbeat cw_heartbeat;

/* Copies everything it is given. job_names are the registered names (written sorted,
 * joined with ','), worker_ids likewise; concurrency is the number of executors.
 * NULL when out of memory. */
cw_heartbeat *cw_heartbeat_new(cwork_redis *redis, const cw_keys *keys, const char *pool_id,
                               const char *const *job_names, size_t njobs,
                               const char *const *worker_ids, size_t nworkers,
                               unsigned concurrency);

/* One beat now, synchronously (the pool beats before its first fetch, PROTOCOL §16.8).
 * Sets started_at on the first call. Returns its error without logging it. From the
 * first beat until stop or free the heartbeater keeps one connection of the pool for
 * itself (so a busy pool never delays a beat): free redis only after it. */
int cw_heartbeat_beat(cw_heartbeat *hb, cwork_error *err);

/* How many beats found this pool removed from worker_pools after an earlier beat had
 * put it there (a reaper judged it dead, or Redis lost its data); each is logged as a
 * warning, "heartbeat.reaped". */
unsigned cw_heartbeat_reaped(cw_heartbeat *hb);

/* The pool's lease (docs/PROTOCOL.md §6): monotonic ms (cw_clock_mono_ms) at which the
 * last beat that Redis acknowledged was sent; 0 before any. Never blocks (read while a
 * beat may hang on a cut connection). */
int64_t cw_heartbeat_acked_sent_ms(cw_heartbeat *hb);

/* Called on the heartbeat thread before and after each of its beats (not for
 * cw_heartbeat_beat's synchronous calls), with no lock of the heartbeat held. */
typedef enum { CW_HEARTBEAT_BEFORE_BEAT, CW_HEARTBEAT_AFTER_BEAT } cw_heartbeat_moment;
typedef void (*cw_heartbeat_hook)(void *userdata, cw_heartbeat_moment moment);
/* Before cw_heartbeat_start only. */
void cw_heartbeat_set_hook(cw_heartbeat *hb, cw_heartbeat_hook hook, void *userdata);

/* Starts the thread: a beat every CW_HEARTBEAT_PERIOD_MS (errors logged as "heartbeat",
 * and a failed beat tried again after CW_HEARTBEAT_RETRY_MS); it beats at once if
 * nothing has beaten yet. */
int cw_heartbeat_start(cw_heartbeat *hb, cwork_error *err);

/* Stops and joins the thread. With remove set: one pipelined round trip of SREM
 * <p>worker_pools, DEL <p>worker_pools:<pool>, and HDEL of this pool's field in the
 * lock_info hash of every job name (PROTOCOL §16.8); errors logged as
 * "remove_heartbeat" and returned. Without remove the traces stay for a reaper. */
int cw_heartbeat_stop(cw_heartbeat *hb, int remove, cwork_error *err);

void cw_heartbeat_free(cw_heartbeat *hb);

#endif
