/* The executor budget of a pool on a sharded namespace (docs/POOL.md "The shared
 * budget"): at most N jobs (the outer pool's concurrency) are fetched and not yet done
 * over all its inner pools, and the N are shared equally between the dispatchers whose
 * queues have a backlog, so that one shard with jobs gets all of them and several share.
 *
 * Every dispatcher of every inner pool has a seat. A seat holds one unit per job its
 * dispatcher fetched that has not finished (ready or running), plus the reservation of
 * the round trip it has in flight. The dispatcher syncs its seat at the top of each
 * step (units of finished jobs, and what a fetch did not get, go back), asks how many
 * it may fetch (cw_dispatch_view.budget), reserves that before the round trip, and says
 * afterwards whether the fetch was full (a backlog). An unsharded pool has no seats:
 * its dispatchers never call any of this.
 *
 * Fairness: with D seats asking (their last fetch was full, or the budget held them
 * back), each may hold ⌊N / D⌋ (at least 1) — the shares fit in N together, so a seat
 * below its share only waits for seats above it to finish jobs, which they cannot
 * replace. A seat whose round trip has been out longer than stall_us (its master is
 * slow or gone) is not counted as asking; it keeps only what it holds.
 *
 * Locks: the budget's mu is a leaf, taken under a dispatcher's shard mu. Waking held
 * back seats (cw_budget_wake) locks their shard mu: the caller holds no shard lock. */
#ifndef CWORK_POOL_NSSHARDS_BUDGET_H
#define CWORK_POOL_NSSHARDS_BUDGET_H

#include "pool.h"

/* A round trip out longer than this no longer counts as asking (µs). */
#define CW_BUDGET_STALL_US 50000
/* Executor threads per inner pool: min(N, max(4·⌈N/S⌉, ⌊CW_NSSHARD_THREADS / S⌋)), so
 * that one shard can run far more than its split while the threads of all S inner
 * pools stay under max(4·(N + S), CW_NSSHARD_THREADS) (docs/POOL.md). */
#define CW_NSSHARD_THREADS 1024

typedef struct cw_nsshards_budget cw_nsshards_budget;

/* One dispatcher's seat (guarded by the budget's mu; only its dispatcher changes held). */
struct cw_budget_seat {
    cw_nsshards_budget *budget;
    cw_shard *shard;
    size_t held;           /* jobs fetched and not finished, and a round trip's reservation */
    bool asking;           /* its last fetch was full, or the budget held it back */
    bool held_back;        /* it waits for units: wake it when some come back */
    bool owes_wake;        /* it stopped asking: the held-back ones may have more now */
    int64_t trip_since_us; /* a round trip with a reservation is out since (0: none) */
};

/* A budget of total units; NULL when out of memory. */
cw_nsshards_budget *cw_nsshards_budget_new(size_t total);
/* Frees it and its seats (every dispatcher seated in it has exited). */
void cw_nsshards_budget_free(cw_nsshards_budget *b);
/* Seats every dispatcher of inner pool q (made, not started; its dispatcher layout is
 * final: q->seats[i] is shard i's): an inner pool made later (a grow) joins the same
 * way, before its start. 0 or CWORK_ENOMEM. */
int cw_nsshards_budget_join(cw_nsshards_budget *b, cwork_pool *q, cwork_error *err);
/* The executors an inner pool gets, of concurrency n over s shards (see above). */
unsigned cw_nsshards_executors(unsigned n, unsigned s);
/* Units held over all seats, and the most ever held at once (tests). */
void cw_nsshards_budget_usage(cw_nsshards_budget *b, size_t *used, size_t *peak);

/* The dispatcher side (the caller holds the seat's shard mu). */

/* Brings the seat's units to `taken` (the shard's jobs fetched and not finished):
 * returns the surplus to the budget. Returns how many more jobs the seat may fetch now;
 * *wake_others is set when seats held back should be woken (cw_budget_wake). */
size_t cw_budget_sync(cw_budget_seat *s, size_t taken, int64_t now_us, bool *wake_others);
/* Reserves up to want units for a round trip about to start; returns how many it got
 * (others may have taken units since the sync). */
size_t cw_budget_reserve(cw_budget_seat *s, size_t want, int64_t now_us);
/* After the round trip: whether its fetch of `fetch` jobs got them all (a backlog). */
void cw_budget_after(cw_budget_seat *s, size_t fetch, size_t got, bool ok);
/* The policy could fetch but for the budget: the seat asks and waits to be woken.
 * Returns true when units are there after all (look again instead of waiting). */
bool cw_budget_held_back(cw_budget_seat *s, int64_t now_us);
/* The dispatcher exits: the seat holds nothing and asks for nothing. */
void cw_budget_leave(cw_budget_seat *s, bool *wake_others);

/* Wakes the dispatchers of the held-back seats other than s (the caller holds no shard
 * lock). */
void cw_budget_wake(cw_budget_seat *s);

#endif
