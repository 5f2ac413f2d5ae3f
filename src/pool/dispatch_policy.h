/* What a pool's dispatcher does next, decided by pure functions of its shard's state
 * and a clock: no threads, no Redis, so that every case can be tested with a table.
 *
 * A shard is one dispatcher (one Redis connection) and its executors. The dispatcher
 * loops: it takes a snapshot of the shard under the shard's lock (cw_dispatch_view),
 * asks cw_dispatch_decide what to do, does it, and after a round trip or a reclaim
 * tells the policy how it went (cw_dispatch_after). The policy keeps its memory across
 * steps in cw_dispatch_state, which only the dispatcher thread touches.
 *
 * The rules, in order of precedence:
 *   1. Stopping: fetch nothing more; commit what finishes; exit when nothing is in
 *      flight (and no fetch's outcome is unknown).
 *   2. No fetched job waits for an executor while one sleeps: executors are woken for
 *      ready tasks at delivery (cw_wake_count), and any task still waiting after
 *      wake_after_us — because the handlers turned out slower than estimated — gets
 *      every sleeping executor it needs. A round trip never starts while ready tasks
 *      and sleeping executors are both there.
 *   3. Backoff (idle, failing fetches, failing commits) delays fetches; finished jobs
 *      are still committed at once unless commits are what is failing.
 *   4. A fetch takes at most as many jobs as executors are free (not running, not
 *      promised a ready task), plus — while the queues have a backlog (the last fetch
 *      got all it asked for) — as many as its executors finish during a few round trips
 *      (cw_fetch_ahead, at most ahead_max), which their executors usually start within
 *      those round trips. When every executor is held by a run and the oldest ready
 *      task has waited cw_long_run_us (or at once when the pool stops), the ready tasks
 *      that may go back (v->returnable: not unique, not cancelled, not kept by an
 *      earlier give-back) go back to their queues, where another pool can run them
 *      (give_back.c), and nothing is fetched ahead until a fetch finds a backlog again.
 *      In a sharded namespace's pool, nor more than the shared budget allows
 *      (v->budget); a dispatcher held back by it waits to be woken (or
 *      budget_recheck_us).
 *   5. Batching for short handlers: while a fetched batch is still being drained, wait
 *      (up to gather_max_us) instead of fetching a few more jobs, and when only busy
 *      executors remain, spin briefly for their finish; a round trip costs Redis far
 *      more than a job does. Longer handlers are never waited for: a free executor
 *      gets its job in the next round trip. */
#ifndef CWORK_DISPATCH_POLICY_H
#define CWORK_DISPATCH_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every scheduling tunable of a pool, with its default (cw_pool_tuning_init). The
 * defaults were measured on a 2-core VM with Redis 7.0 (bench/pool/bench_pool.c, README). */
typedef struct cw_pool_tuning {
    /* Executors per dispatcher: each dispatcher's cycle (round trip, then its executors
     * run the batch) is serial, and several overlap where one cannot (2 × 10 executors
     * process ~35% more no-op jobs/s than 1 × 20, for ~25% more Redis CPU per job). */
    unsigned shard_executors; /* 10 */
    unsigned max_shards;      /* 4 */
    size_t max_fetch;         /* jobs per round trip, at most: 1000 */
    /* Jobs fetched ahead of the free executors while the queues have a backlog, at most
     * (rule 4). Each cycle call costs Redis a fixed part several times a job's, so that
     * short jobs cost it less the more each call carries; and an executor that finishes
     * finds its next job ready instead of waiting for a round trip. 0: never ahead. */
    size_t ahead_max; /* 90 */
    /* How long the jobs fetched ahead are to last, in round trips (the exchange's
     * moving average): a refill takes the dispatcher's wake-up as well as the exchange,
     * and an exchange's time varies with Redis' load. 1 ms handlers at concurrency 20
     * kept their executors busy 0.81 of the time with 1, 0.92 with 2, 0.99 with 4
     * (bench_pool, 2-core VM). */
    unsigned ahead_round_trips; /* 4 */
    /* A run longer than this many times the longer of the handlers' average and a round
     * trip holds its executor: it counts for nothing ahead, and when every executor is so
     * held, jobs fetched ahead go back to their queues (cw_long_run_us). */
    unsigned long_run_factor; /* 8 */
    /* Waking an executor costs a futex call and a context switch: for a batch of short
     * handlers, one executor running several in a row is faster. At delivery, enough
     * executors are woken that each has about wake_target_us of (estimated) work. */
    int64_t wake_target_us; /* 100 */
    /* A ready task never waits longer than this for an executor while one sleeps. */
    int64_t wake_after_us;     /* 300 */
    int64_t gather_max_us;     /* longest wait for a batch to drain: 1000 */
    int64_t gather_handler_us; /* gather only for handlers shorter on average: 100 */
    int64_t spin_max_us;       /* longest spin for a batch's finishers: 100 */
    int64_t spin_handler_us;   /* spin only for handlers shorter on average: 20 */
    int64_t spin_wake_us;      /* an executor's wake-up, expected by a spin: 60 */
    /* Idle backoff: first, then ×idle_backoff_factor up to the pool's
     * idle_backoff_max_ms option (a wake-up ends it). */
    int64_t idle_backoff_first_ms; /* 1 */
    int64_t idle_backoff_factor;   /* 10 */
    int64_t fetch_error_first_ms;  /* 10, doubling */
    int64_t fetch_error_max_ms;    /* 1000 */
    int64_t commit_error_first_ms; /* 10, ×10 */
    int64_t commit_error_max_ms;   /* 5000 */
    /* A dispatcher the shared budget of a sharded namespace's pool holds back looks again
     * this often even unwoken: a seat stuck in a round trip stops counting as asking
     * after CW_BUDGET_STALL_US, and nobody signals that (pool_nsshards_budget.h). */
    int64_t budget_recheck_us; /* 10000 */
} cw_pool_tuning;

void cw_pool_tuning_init(cw_pool_tuning *t);

/* A snapshot of a shard, taken under its lock. */
typedef struct cw_dispatch_view {
    int64_t now_us; /* monotonic clock */
    bool stopping;
    bool wakeup;   /* a wake-up (enqueue, requeue, drain) since the last look */
    size_t ntypes; /* registered job types */
    size_t nexecutors;
    size_t in_flight;       /* fetched and not yet committed: ready + running + done */
    size_t ready;           /* waiting for an executor */
    size_t done;            /* finished, not yet committed */
    size_t sleeping;        /* executors asleep with no wake-up on its way */
    int64_t ready_since_us; /* when the oldest ready task was delivered (ready > 0) */
    int64_t handler_avg_us; /* moving average of handler run time */
    int64_t round_trip_us;  /* moving average of a round trip's exchange (0: none yet) */
    size_t finished;        /* handlers the shard has run to the end, ever */
    /* With every executor running: 1 when a ready task may go back to its queue (not
     * unique, not cancelled, not kept by an earlier give-back); else 0. */
    size_t returnable;
    /* Executors running one job for longer than cw_long_run_us: they finish nothing
     * soon, so jobs fetched ahead count on the others only. */
    size_t running_long;
    /* A sharded namespace's pool: the shared budget lets it fetch `budget` jobs now
     * (pool_nsshards_budget.h). Any other pool: budgeted is false. */
    bool budgeted;
    size_t budget;
} cw_dispatch_view;

typedef enum cw_backoff_kind { CW_BACKOFF_NONE, CW_BACKOFF_IDLE, CW_BACKOFF_ERROR } cw_backoff_kind;

/* The dispatcher's memory between decisions (zeroed at start). */
typedef struct cw_dispatch_state {
    bool reclaim;            /* a fetch's outcome is unknown: look at in-progress */
    bool no_more_tasks;      /* announced to the executors (stopping) */
    bool commit_failing;     /* the last commit failed */
    cw_backoff_kind backoff; /* why fetches wait until backoff_until_us */
    int64_t backoff_until_us;
    int64_t idle_ms, fetch_error_ms, commit_error_ms; /* current backoff steps */
    int64_t gather_until_us;                          /* 0: not gathering */
    bool spun;                                        /* spun once since the last round trip */
    bool backlog; /* the last fetch got every job it asked for: the queues have more */
} cw_dispatch_state;

typedef enum cw_dispatch_do {
    CW_DO_EXIT,       /* stopping and nothing in flight: the dispatcher ends */
    CW_DO_WAIT,       /* sleep until signalled or until_us (0: no limit) */
    CW_DO_SPIN,       /* poll (yielding) for `busy` finishers until until_us */
    CW_DO_RECLAIM,    /* take up in-progress entries no task accounts for */
    CW_DO_ROUND_TRIP, /* commit the done tasks (commit) and fetch `fetch` jobs */
    CW_DO_GIVE_BACK,  /* give the ready tasks back to their queues (rule 4) */
} cw_dispatch_do;

typedef struct cw_decision {
    cw_dispatch_do what;
    int64_t until_us;
    size_t fetch;          /* round trip: jobs to fetch (0: commit only) */
    bool commit;           /* round trip: commit the done tasks */
    size_t busy;           /* spin: finishers to wait for */
    size_t wake;           /* executors to wake before doing it */
    bool announce_no_more; /* tell executors nothing more will come (stopping) */
    bool budget_short;     /* it would fetch but for the budget (budgeted, budget 0) */
    /* Executors that finish while the dispatcher waits signal it once the ready tasks
     * are this few (0: once they are drained): the jobs fetched ahead are refilled while
     * they last, a batch of short ones is committed when it is drained. */
    size_t refill_at;
} cw_decision;

/* The next step for a shard in view v. Updates st's memory of gathering, spinning,
 * backoff expiry and stop announcements. */
cw_decision cw_dispatch_decide(cw_dispatch_state *st, const cw_dispatch_view *v,
                               const cw_pool_tuning *tu);

/* How a round trip (or a reclaim) went. */
typedef struct cw_round_trip_result {
    bool ok;        /* the reply was read and well-formed */
    bool complete;  /* ok, and every job it moved is accounted for */
    bool committed; /* it carried commits */
    bool reclaimed; /* it was a reclaim */
    bool gave_back; /* it was a give-back (ok: the ready tasks went back or stay) */
    size_t fetch;   /* jobs asked for */
    size_t got;     /* jobs fetched (or reclaimed) */
    /* A rate-limited type was held back and may start in this many µs (0: none): an
     * idle backoff ends then (PROTOCOL §20). */
    int64_t rate_wait_us;
} cw_round_trip_result;

/* Updates the backoffs and the reclaim flag after a round trip or reclaim. idle_max_ms
 * is the pool's idle_backoff_max_ms option. */
void cw_dispatch_after(cw_dispatch_state *st, const cw_round_trip_result *r, int64_t now_us,
                       const cw_pool_tuning *tu, int64_t idle_max_ms);

/* Jobs a fetch may take beyond the free executors now (rule 4): as many as the
 * executors not running a long job (running_long) finish during ahead_round_trips round
 * trips (executors × round trips × round_trip_us / handler_avg_us, rounded), at most
 * ahead_max; none without a backlog, while stopping, before a round trip has been
 * timed, or before the handlers have been (as many finished as there are executors: a
 * new pool's average of 0 would say "no-op" of a backlog of hour-long jobs). */
size_t cw_fetch_ahead(const cw_dispatch_state *st, const cw_dispatch_view *v,
                      const cw_pool_tuning *tu);

/* How long a job runs before its executor no longer counts for fetching ahead:
 * long_run_factor times the longer of the handlers' average and a round trip (at least
 * 1 µs). Handlers that are mostly short and sometimes long (99 % 1 ms, 1 % 1 s) would
 * otherwise have jobs fetched ahead for executors held by the long ones. */
int64_t cw_long_run_us(int64_t handler_avg_us, int64_t round_trip_us, const cw_pool_tuning *tu);

/* Executors to wake for `ready` tasks that have waited `waited_us`, with `sleeping`
 * executors asleep: one per task when handlers are slow or the tasks waited
 * wake_after_us, fewer when the estimate says one executor runs several in
 * wake_target_us; never more than sleep, never none while tasks wait. */
size_t cw_wake_count(size_t ready, size_t sleeping, int64_t handler_avg_us, int64_t waited_us,
                     const cw_pool_tuning *tu);

#endif
