/* Giving back jobs fetched ahead that wait behind long handlers (give_back.c). */
#ifndef CWORK_GIVE_BACK_H
#define CWORK_GIVE_BACK_H

#include "pool.h"

/* Gives the tasks of `back` (fetched, not started, not unique, not stopped; each of a
 * registered type) back to their queues in one give_back.lua call on c. On success every
 * task leaves `back`: a job the queue could not take, or one an operator cancelled,
 * stays in this pool's in-progress list and its task is appended to `kept` (to run
 * here, or, cancelled, to be committed to dead without running), marked never to be
 * offered again; the others are freed — given back, or no longer in the in-progress
 * list (a reaper gave them back) — and *moved counts the first. On an error `back` is
 * left as it was and what the call did is unknown. The caller holds p->fetch_lock
 * shared, so that no reclaim runs while the tasks are in neither place. */
int cw_give_back(cwork_pool *p, cw_conn *c, cw_task_queue *back, cw_task_queue *kept, size_t *moved,
                 cwork_error *err);

#endif
