/* The scheduled and retry requeuers (PROTOCOL §8): due jobs move from the zsets into their
 * queues. Run by the pool's maintenance thread every second. */
#ifndef CWORK_REQUEUER_H
#define CWORK_REQUEUER_H

#include "keys.h"
#include "redis.h"

#define CW_REQUEUE_PERIOD_MS 1000
#define CW_REQUEUE_BATCH 100 /* jobs per script call */

/* Moves every due job of the scheduled and the retry set. known_names are the pool's
 * registered names; the names in known_jobs are added to them. *moved receives the
 * number of jobs put into queues. A damaged key loses no job: one whose queue is not a
 * list goes to dead with the reason, one that can go nowhere stays and is stepped over.
 * Every error is logged with its message as "requeuer.process" (err may be NULL) and
 * the first is returned, after both sets were processed; jobs sent to dead are logged
 * as "requeuer.process.dead" with the reason and a count. flavor decides what happens to a
 * periodic instance due past its deadline d: the fork's requeuer discards it, upstream's
 * (which has no d) requeues it; either is logged as "requeuer.past_deadline". */
int cw_requeue_due(cwork_redis *redis, const cw_keys *keys, cwork_go_flavor flavor,
                   const char *const *known_names, size_t nknown, size_t *moved, cwork_error *err);

#endif
