/* Unique guards on the worker side: which guard keys a fetched unique job holds, and
 * their release before the handler runs — flavour-blind, as upstream gocraft/work v0.5
 * and the Kuper-Tech fork each expect (README "Go flavours"). */
#ifndef CWORK_UNIQUE_GUARD_H
#define CWORK_UNIQUE_GUARD_H

#include "job.h"
#include "keys.h"
#include "redis.h"

struct cw_task_queue; /* pool.h */

/* cw_unique_guard_keys (keys.h) names the guard keys of a job. */

/* Called by the dispatcher on the jobs a fetch (or a reclaim) just moved to
 * in-progress, before they are delivered to executors. For every unique job, one script
 * reads and deletes its guard keys (all jobs in one round trip on c). A guard whose
 * value is not "1" holds the job upstream's EnqueueUniqueByKey last wrote: that job
 * replaces the task's job (args, id and all, as upstream's worker does), while the
 * task's raw bytes stay the placeholder's, which the commit removes from in-progress.
 * A value that is no valid job is logged ("worker.delete_unique_job.updated_job") and
 * the placeholder runs. Under the fork flavour a job with unique_key makes the pool
 * warn once (cw_go_flavor_warn_mixed).
 *
 * Returns 0, or the error of the round trip (already logged as
 * "worker.delete_unique_job.del"; the jobs then run as fetched and the guards stay until
 * their TTL). */
int cw_unique_guards_release(cwork_pool *p, cw_conn *c, struct cw_task_queue *fetched);

#endif
