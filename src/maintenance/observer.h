/* What each executor is running, published to <p>worker:<worker id> for web UIs
 * (PROTOCOL §7). Executors report started/done/check-in in memory (cheap, no Redis); the
 * maintenance thread flushes changed workers once a second in one pipelined round trip:
 * HMSET job_name job_id started_at args [checkin checkin_at] + EXPIRE 86400 for a busy
 * worker, DEL for an idle one. Unlike Go, a new job's hash never carries the previous
 * job's check-in (PROTOCOL §16.9): a started observation rewrites the whole hash. */
#ifndef CWORK_OBSERVER_H
#define CWORK_OBSERVER_H

#include "job.h"
#include "keys.h"
#include "redis.h"

#define CW_OBSERVER_FLUSH_MS 1000
#define CW_OBSERVATION_TTL 86400

typedef struct cw_observer cw_observer;

/* One slot per worker id (copied). NULL when out of memory. */
cw_observer *cw_observer_new(cwork_redis *redis, const cw_keys *keys, const char *const *worker_ids,
                             size_t nworkers);
void cw_observer_free(cw_observer *obs);

/* Thread-safe; called by executors. started copies name, id and the args' Go JSON
 * (empty when args are absent or empty, as Go writes it). */
void cw_observer_started(cw_observer *obs, size_t worker, const cwork_job *job, int64_t now);
void cw_observer_done(cw_observer *obs, size_t worker);
/* A check-in for job_id: ignored (and logged as "observer.checkin_mismatch") when that
 * worker is not running that job. */
void cw_observer_checkin(cw_observer *obs, size_t worker, const char *job_id, const char *message,
                         int64_t now);

/* Writes every worker whose state changed since its last write (all of them with
 * force), in one pipelined round trip; errors logged as "observer.write" and returned
 * (the slots stay dirty and are written on the next flush). */
int cw_observer_flush(cw_observer *obs, int force, cwork_error *err);

#endif
