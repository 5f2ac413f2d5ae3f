/* The dispatcher's decisions (src/pool/dispatch_policy.c) as tables of shard states and
 * clock readings: no threads, no Redis. Each case starts from a fresh state and the
 * default tunables; times are microseconds on a fake monotonic clock. */
#include "dispatch_policy.h"
#include "testlib.h"

static cw_pool_tuning tu_;

/* A shard of 10 executors, 3 job types, at time 1 s, nothing in flight, all asleep. */
static cw_dispatch_view idle_view(void)
{
    return (cw_dispatch_view){.now_us = 1000000, .ntypes = 3, .nexecutors = 10, .sleeping = 10};
}

static cw_decision decide(cw_dispatch_state *st, cw_dispatch_view v)
{
    return cw_dispatch_decide(st, &v, &tu_);
}

static void after(cw_dispatch_state *st, cw_round_trip_result r, int64_t now_us)
{
    cw_dispatch_after(st, &r, now_us, &tu_, 100);
}

static void idle_shard_fetches_for_every_free_executor(void)
{
    cw_dispatch_state st = {0};
    cw_decision d = decide(&st, idle_view());
    CHECK_INT(d.what, CW_DO_ROUND_TRIP);
    CHECK_INT(d.fetch, 10);
    CHECK(!d.commit);
    CHECK_INT(d.wake, 0);
}

static void fetch_is_capped_and_counts_only_free_executors(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    v.nexecutors = 5000, v.sleeping = 4000, v.in_flight = 1000, v.done = 0;
    CHECK_INT(decide(&st, v).fetch, 1000); /* 4000 free, max_fetch 1000 */
    v.in_flight = 4999;                    /* running */
    CHECK_INT(decide(&st, v).fetch, 1);
    v.in_flight = 4999, v.done = 3; /* three of them finished: commit them, fetch four */
    cw_decision d = decide(&st, v);
    CHECK(d.commit);
    CHECK_INT(d.fetch, 4);
    v.ntypes = 0; /* nothing registered: commit only */
    CHECK_INT(decide(&st, v).fetch, 0);
}

/* A sharded namespace's pool: the shared budget caps the fetch; with none left the
 * dispatcher says so (budget_short), commits what is done, and otherwise waits to be
 * woken, looking again after budget_recheck_us at the latest. */
static void the_shared_budget_caps_the_fetch(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    v.budgeted = true, v.budget = 3;
    cw_decision d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_ROUND_TRIP);
    CHECK_INT(d.fetch, 3);
    CHECK(!d.budget_short);
    v.budget = 0;
    d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_WAIT);
    CHECK(d.budget_short);
    CHECK_INT(d.until_us, v.now_us + tu_.budget_recheck_us);
    v.in_flight = 4, v.done = 2; /* finished jobs are committed, nothing fetched */
    d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_ROUND_TRIP);
    CHECK(d.commit && d.budget_short);
    CHECK_INT(d.fetch, 0);
    v.budget = 1000; /* more budget than free executors: the executors count */
    v.in_flight = 7, v.done = 0;
    CHECK_INT(decide(&st, v).fetch, 3);
    v.budgeted = false, v.budget = 0; /* any other pool: no budget at all */
    CHECK_INT(decide(&st, v).fetch, 3);
    /* During a backoff the budget is not what holds the fetch back. */
    after(&st, (cw_round_trip_result){.ok = true, .complete = true, .fetch = 3}, v.now_us);
    v.budgeted = true, v.in_flight = 0;
    d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_WAIT);
    CHECK(!d.budget_short);
}

/* Rule 4's fetch ahead: while the queues have a backlog (the last fetch got all it asked
 * for), a fetch also takes what the executors finish during ahead_round_trips round
 * trips, at most ahead_max; and finishing executors ask for a refill while the jobs
 * fetched ahead last (refill_at), not once they are gone. */
static void a_backlog_is_fetched_ahead_for_a_few_round_trips(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    v.handler_avg_us = 1000, v.round_trip_us = 250, v.finished = 10;
    CHECK_INT(decide(&st, v).fetch, 10); /* no backlog known yet: the free executors */
    after(&st, (cw_round_trip_result){.ok = true, .complete = true, .fetch = 10, .got = 10},
          v.now_us);
    CHECK(st.backlog);
    /* Ten running, one done: 10 × 4 × 250 µs / 1 ms = 10 ahead, 20 seats, 9 taken. */
    v.in_flight = 10, v.done = 1, v.sleeping = 0;
    cw_decision d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_ROUND_TRIP);
    CHECK(d.commit);
    CHECK_INT(d.fetch, 11);
    CHECK_INT(d.refill_at, 10);
    CHECK_INT(cw_fetch_ahead(&st, &v, &tu_), 10);
    /* Twenty held (ten ready): nothing more until one finishes. */
    v.in_flight = 20, v.ready = 10, v.done = 0, v.ready_since_us = v.now_us;
    CHECK_INT(decide(&st, v).what, CW_DO_WAIT);
    /* Executors held by long runs count for nothing ahead; all of them: none. */
    v.running_long = 5;
    CHECK_INT(cw_fetch_ahead(&st, &v, &tu_), 5);
    v.running_long = 10;
    CHECK_INT(cw_fetch_ahead(&st, &v, &tu_), 0);
    v.running_long = 0;
    CHECK_INT(cw_long_run_us(1000, 250, &tu_), 8000);
    CHECK_INT(cw_long_run_us(0, 250, &tu_), 2000);
    CHECK_INT(cw_long_run_us(0, 0, &tu_), 8);
    /* Not timed yet (round trip, or fewer handlers finished than executors), stopping,
     * or ahead_max 0: none ahead. */
    v.round_trip_us = 0;
    CHECK_INT(cw_fetch_ahead(&st, &v, &tu_), 0);
    v.round_trip_us = 250, v.finished = 9;
    CHECK_INT(cw_fetch_ahead(&st, &v, &tu_), 0);
    v.finished = 10;
    v.round_trip_us = 250, v.stopping = true;
    CHECK_INT(cw_fetch_ahead(&st, &v, &tu_), 0);
    v.stopping = false, tu_.ahead_max = 0;
    CHECK_INT(cw_fetch_ahead(&st, &v, &tu_), 0);
    cw_pool_tuning_init(&tu_);
    /* No-op handlers: capped at ahead_max; a batch of them is gathered (refill at 0). */
    v.handler_avg_us = 0, v.in_flight = 0, v.ready = 0, v.sleeping = 10;
    d = decide(&st, v);
    CHECK_INT(d.fetch, 10 + tu_.ahead_max);
    CHECK_INT(d.refill_at, 0);
    /* 100 ms handlers: a 250 µs round trip is 0.1 jobs: none ahead, refill at 0. */
    v.handler_avg_us = 100000, v.in_flight = 10, v.done = 1, v.sleeping = 0;
    d = decide(&st, v);
    CHECK_INT(d.fetch, 1);
    CHECK_INT(d.refill_at, 0);
    /* The shared budget of a sharded namespace's pool still caps it. */
    v.handler_avg_us = 1000, v.budgeted = true, v.budget = 3;
    CHECK_INT(decide(&st, v).fetch, 3);
    v.budgeted = false;
    /* A fetch that came back short (the queues ran dry, a limit held): no backlog. */
    after(&st, (cw_round_trip_result){.ok = true, .complete = true, .fetch = 11, .got = 4},
          v.now_us);
    CHECK(!st.backlog);
    CHECK_INT(decide(&st, v).fetch, 1);
    /* A commit-only round trip leaves it as it was; a failed fetch ends it. */
    st.backlog = true;
    after(&st, (cw_round_trip_result){.ok = true, .committed = true}, v.now_us);
    CHECK(st.backlog);
    after(&st, (cw_round_trip_result){.ok = false, .fetch = 5}, v.now_us);
    CHECK(!st.backlog);
}

/* Every executor held by a run, and jobs fetched ahead waiting: after cw_long_run_us
 * they go back to their queues; until then the dispatcher looks again at that time. */
static void jobs_fetched_ahead_go_back_when_every_executor_is_held(void)
{
    cw_dispatch_state st = {.backlog = true};
    cw_dispatch_view v = idle_view();
    v.handler_avg_us = 1000, v.round_trip_us = 250, v.sleeping = 0, v.finished = 100;
    /* Ten running, ten fetched ahead (10 × 4 × 250 µs / 1 ms): nothing more to fetch. */
    v.in_flight = 20, v.ready = 10, v.ready_since_us = v.now_us - 100, v.returnable = 10;
    cw_decision d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_WAIT);
    CHECK_INT(d.until_us, v.ready_since_us + 8000);
    v.now_us = v.ready_since_us + 8000;
    CHECK_INT(decide(&st, v).what, CW_DO_GIVE_BACK);
    /* Not when none may go back (unique, cancelled, kept), nor before a pending
     * reclaim; at once when the pool stops. */
    v.returnable = 0;
    CHECK(decide(&st, v).what != CW_DO_GIVE_BACK);
    v.returnable = 10, st.reclaim = true;
    CHECK_INT(decide(&st, v).what, CW_DO_RECLAIM);
    st.reclaim = false, v.now_us = v.ready_since_us + 10, v.stopping = true;
    CHECK_INT(decide(&st, v).what, CW_DO_GIVE_BACK);
    v.stopping = false, st.no_more_tasks = false, v.now_us = v.ready_since_us + 8000;
    /* Given back: no more ahead until a fetch finds a backlog again. */
    after(&st, (cw_round_trip_result){.ok = true, .gave_back = true}, v.now_us);
    CHECK(!st.backlog && !st.reclaim);
    CHECK_INT(st.backoff, CW_BACKOFF_NONE);
    /* Failed before sending anything: a backoff, no reclaim. */
    after(&st, (cw_round_trip_result){.ok = false, .gave_back = true}, v.now_us);
    CHECK(!st.reclaim);
    CHECK_INT(st.backoff, CW_BACKOFF_ERROR);
    st.backoff = CW_BACKOFF_NONE, st.commit_error_ms = 0;
    /* Failed with jobs sent: what moved is unknown — a reclaim, after an error backoff. */
    after(&st, (cw_round_trip_result){.ok = false, .gave_back = true, .got = 10}, v.now_us);
    CHECK(st.reclaim);
    CHECK_INT(st.backoff, CW_BACKOFF_ERROR);
    CHECK_INT(st.backoff_until_us, v.now_us + tu_.commit_error_first_ms * 1000);
}

static void no_types_and_nothing_done_waits_without_limit(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    v.ntypes = 0;
    cw_decision d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_WAIT);
    CHECK_INT(d.until_us, 0);
}

/* The fault of issue 9: a backlog delivered to one executor while the estimate says
 * handlers are quick. The tasks wait at most wake_after_us for the others. */
static void ready_tasks_wake_sleeping_executors_after_wake_after(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    v.in_flight = 10, v.ready = 9, v.sleeping = 9, v.ready_since_us = v.now_us;
    v.handler_avg_us = 25; /* "fast" (3 executors for 9 tasks), but not spun for */
    cw_decision d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_WAIT); /* every executor is taken: nothing to fetch */
    CHECK_INT(d.wake, 0);
    CHECK_INT(d.until_us, v.ready_since_us + tu_.wake_after_us);
    v.now_us += tu_.wake_after_us - 1;
    CHECK_INT(decide(&st, v).wake, 0);
    v.now_us += 1;
    d = decide(&st, v);
    CHECK_INT(d.wake, 9);
    v.sleeping = 4; /* fewer asleep than tasks: all of them */
    CHECK_INT(decide(&st, v).wake, 4);
}

static void round_trip_never_starts_while_tasks_wait_for_sleepers(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    v.in_flight = 6, v.done = 3, v.ready = 2, v.sleeping = 8, v.ready_since_us = v.now_us;
    v.handler_avg_us = 1;
    st.gather_until_us = v.now_us - 1; /* gathered long enough */
    cw_decision d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_ROUND_TRIP);
    CHECK(d.commit);
    CHECK_INT(d.fetch, 7); /* 10 − (6 − 3) */
    CHECK_INT(d.wake, 2);
}

static void a_draining_batch_is_gathered_up_to_gather_max(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    /* Fast handlers: two executors run a batch of eight; two done, four ready. */
    v.in_flight = 8, v.done = 2, v.ready = 4, v.sleeping = 8, v.handler_avg_us = 2;
    v.ready_since_us = v.now_us - 10;
    cw_decision d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_WAIT);
    CHECK_INT(d.until_us, v.ready_since_us + tu_.wake_after_us); /* earlier than gather */
    /* The batch drained: commit and fetch for everyone. */
    v.now_us += 50, v.done = 8, v.ready = 0;
    d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_ROUND_TRIP);
    CHECK_INT(d.fetch, 10);
    CHECK_INT(st.gather_until_us, 0);
    /* Not drained within gather_max_us: go ahead with what there is. */
    v.done = 2, v.ready = 4, v.sleeping = 0, v.ready_since_us = v.now_us;
    d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_WAIT);
    CHECK_INT(d.until_us, v.now_us + tu_.gather_max_us); /* no sleepers: no wake deadline */
    v.now_us += tu_.gather_max_us;
    d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_ROUND_TRIP);
    CHECK_INT(d.fetch, 4);
}

static void a_batch_of_long_jobs_is_not_gathered(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    /* 1 ms handlers: 8 fetched, woken and not yet taken; two done, two free. */
    v.in_flight = 8, v.done = 2, v.ready = 6, v.sleeping = 2, v.handler_avg_us = 1000;
    v.ready_since_us = v.now_us - 20;
    cw_decision d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_ROUND_TRIP);
    CHECK_INT(d.fetch, 4);
    CHECK_INT(d.wake, 2);
}

static void short_handlers_are_spun_for_once(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    v.in_flight = 10, v.ready = 0, v.sleeping = 0, v.handler_avg_us = 5;
    cw_decision d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_SPIN);
    CHECK_INT(d.busy, 10);
    CHECK_INT(d.until_us, v.now_us + tu_.spin_wake_us + 2 * 1 * 5);
    d = decide(&st, v); /* spun already: sleep until signalled */
    CHECK_INT(d.what, CW_DO_WAIT);
    CHECK_INT(d.until_us, 0);
    v.done = 10; /* a round trip ends the spin's once */
    CHECK_INT(decide(&st, v).what, CW_DO_ROUND_TRIP);
    CHECK(!st.spun);
    v.done = 0, v.ready = 500, v.in_flight = 510, v.handler_avg_us = 10; /* budget capped */
    v.ready_since_us = v.now_us;
    d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_SPIN);
    CHECK_INT(d.until_us, v.now_us + tu_.spin_max_us);
}

static void long_handlers_are_never_waited_for(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    v.in_flight = 10, v.sleeping = 0, v.handler_avg_us = 1000;
    cw_decision d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_WAIT);
    CHECK_INT(d.until_us, 0);
    v.done = 1; /* one finished: commit it and fetch one at once */
    d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_ROUND_TRIP);
    CHECK(d.commit);
    CHECK_INT(d.fetch, 1);
}

static void idle_backoff_grows_to_the_cap_and_a_wakeup_ends_it(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    int64_t want[] = {1, 10, 100, 100};
    for (int i = 0; i < 4; i++) {
        after(&st, (cw_round_trip_result){.ok = true, .complete = true, .fetch = 10}, v.now_us);
        cw_decision d = decide(&st, v);
        CHECK_INT(d.what, CW_DO_WAIT);
        CHECK_INT(d.until_us, v.now_us + want[i] * 1000);
        v.now_us = d.until_us;
        CHECK_INT(decide(&st, v).what, CW_DO_ROUND_TRIP);
    }
    after(&st, (cw_round_trip_result){.ok = true, .complete = true, .fetch = 10}, v.now_us);
    v.wakeup = true;
    cw_decision d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_ROUND_TRIP);
    CHECK_INT(st.idle_ms, 0);
    /* Jobs found: no backoff at all. */
    after(&st, (cw_round_trip_result){.ok = true, .complete = true, .fetch = 10, .got = 3},
          v.now_us);
    v.wakeup = false, v.in_flight = 3;
    CHECK_INT(decide(&st, v).what, CW_DO_ROUND_TRIP);
}

/* A held-back rate-limited type (PROTOCOL §20): the idle backoff ends when it may start,
 * never later than the backoff would, and its jobs are fetched then. */
static void a_held_back_rate_limit_ends_the_idle_backoff_then(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    st.idle_ms = 10; /* the next empty fetch backs off 100 ms */
    after(&st,
          (cw_round_trip_result){.ok = true, .complete = true, .fetch = 10, .rate_wait_us = 35000},
          v.now_us);
    cw_decision d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_WAIT);
    CHECK_INT(d.until_us, v.now_us + 34000); /* 1 ms early: a wake-up is only ever late */
    v.now_us = d.until_us;
    CHECK_INT(decide(&st, v).what, CW_DO_ROUND_TRIP);
    /* A short wait is kept whole. */
    st.idle_ms = 10;
    after(&st,
          (cw_round_trip_result){.ok = true, .complete = true, .fetch = 10, .rate_wait_us = 1500},
          v.now_us);
    CHECK_INT(decide(&st, v).until_us, v.now_us + 1500);
    /* A wait longer than the backoff step changes nothing. */
    st.idle_ms = 0;
    after(&st,
          (cw_round_trip_result){.ok = true, .complete = true, .fetch = 10, .rate_wait_us = 5000},
          v.now_us);
    CHECK_INT(decide(&st, v).until_us, v.now_us + 1000);
}

static void finished_jobs_are_committed_during_an_idle_backoff(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    after(&st, (cw_round_trip_result){.ok = true, .complete = true, .fetch = 9}, v.now_us);
    v.in_flight = 1, v.done = 1;
    cw_decision d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_ROUND_TRIP);
    CHECK(d.commit);
    CHECK_INT(d.fetch, 0);
}

static void failing_commits_back_off_and_hold_the_commit(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    v.in_flight = 1, v.done = 1;
    int64_t want[] = {10, 100, 1000, 5000, 5000};
    for (int i = 0; i < 5; i++) {
        after(&st, (cw_round_trip_result){.committed = true, .fetch = 9}, v.now_us);
        CHECK(st.commit_failing);
        cw_decision d = decide(&st, v);
        CHECK_INT(d.what, CW_DO_WAIT); /* done tasks wait: commits are what fails */
        CHECK_INT(d.until_us, v.now_us + want[i] * 1000);
        v.wakeup = true; /* a wake-up does not end an error backoff */
        CHECK_INT(decide(&st, v).what, CW_DO_WAIT);
        v.wakeup = false;
        v.now_us = d.until_us;
    }
    /* The lost fetch of those calls is reclaimed first, then the commit goes through. */
    CHECK(st.reclaim);
    CHECK_INT(decide(&st, v).what, CW_DO_RECLAIM);
    after(&st, (cw_round_trip_result){.ok = true, .complete = true, .reclaimed = true}, v.now_us);
    CHECK(!st.reclaim);
    cw_decision d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_ROUND_TRIP);
    after(&st, (cw_round_trip_result){.ok = true, .complete = true, .committed = true, .fetch = 10},
          v.now_us);
    CHECK(!st.commit_failing);
    CHECK_INT(st.commit_error_ms, 0);
}

static void failing_fetches_back_off_doubling_to_a_second(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    int64_t want[] = {10, 20, 40, 80, 160, 320, 640, 1000, 1000};
    for (int i = 0; i < 9; i++) {
        after(&st, (cw_round_trip_result){.fetch = 10}, v.now_us);
        CHECK(st.reclaim); /* what the lost call moved is unknown */
        cw_decision d = decide(&st, v);
        CHECK_INT(d.what, CW_DO_WAIT);
        CHECK_INT(d.until_us, v.now_us + want[i] * 1000);
        v.now_us = d.until_us;
        d = decide(&st, v);
        CHECK_INT(d.what, CW_DO_RECLAIM);
        st.reclaim = false; /* as if the reclaim went through; the next fetch fails */
    }
}

static void an_incomplete_reply_is_reclaimed(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    after(&st, (cw_round_trip_result){.ok = true, .fetch = 10, .got = 9}, v.now_us);
    CHECK(st.reclaim);
    v.in_flight = 9;
    CHECK_INT(decide(&st, v).what, CW_DO_RECLAIM);
    after(&st, (cw_round_trip_result){.ok = true, .reclaimed = true}, v.now_us);
    CHECK(st.reclaim); /* incomplete again: look again */
    after(&st, (cw_round_trip_result){.ok = true, .complete = true, .reclaimed = true, .got = 1},
          v.now_us);
    CHECK(!st.reclaim);
    CHECK_INT(st.backoff, CW_BACKOFF_NONE);
}

static void stop_commits_what_runs_and_exits_when_nothing_is_in_flight(void)
{
    cw_dispatch_state st = {0};
    cw_dispatch_view v = idle_view();
    v.stopping = true, v.in_flight = 3, v.sleeping = 7;
    cw_decision d = decide(&st, v);
    CHECK(d.announce_no_more);
    CHECK_INT(d.what, CW_DO_WAIT);
    CHECK(!decide(&st, v).announce_no_more); /* once */
    v.done = 2;
    d = decide(&st, v);
    CHECK_INT(d.what, CW_DO_ROUND_TRIP);
    CHECK_INT(d.fetch, 0);
    v.in_flight = 0, v.done = 0;
    CHECK_INT(decide(&st, v).what, CW_DO_EXIT);
}

static void stop_waits_for_a_pending_reclaim(void)
{
    cw_dispatch_state st = {.reclaim = true};
    cw_dispatch_view v = idle_view();
    v.stopping = true;
    cw_decision d = decide(&st, v);
    CHECK(!d.announce_no_more); /* a reclaim may still deliver tasks */
    CHECK_INT(d.what, CW_DO_RECLAIM);
    after(&st, (cw_round_trip_result){.ok = true, .complete = true, .reclaimed = true}, v.now_us);
    d = decide(&st, v);
    CHECK(d.announce_no_more);
    CHECK_INT(d.what, CW_DO_EXIT);
}

static void wake_count_follows_the_estimate_until_tasks_wait_too_long(void)
{
    struct {
        size_t ready, sleeping;
        int64_t avg, waited;
        size_t want;
    } rows[] = {
        {0, 10, 0, 0, 0},
        {10, 0, 1000, 0, 0},
        {10, 10, 0, 0, 1},
        {10, 10, 1, 0, 1},
        {10, 10, 50, 0, 6},
        {10, 10, 100, 0, 10},
        {10, 10, 1000000, 0, 10},
        {10, 3, 1000, 0, 3},
        {10, 10, 1, 299, 1},
        {10, 10, 1, 300, 10},
        {1000, 9, INT64_MAX / 2, 0, 9},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t got =
            cw_wake_count(rows[i].ready, rows[i].sleeping, rows[i].avg, rows[i].waited, &tu_);
        if (got != rows[i].want)
            tl_fail(__FILE__, __LINE__, "row %zu: %zu executors woken, want %zu", i, got,
                    rows[i].want);
    }
}

int main(void)
{
    cw_pool_tuning_init(&tu_);
    RUN(idle_shard_fetches_for_every_free_executor);
    RUN(fetch_is_capped_and_counts_only_free_executors);
    RUN(the_shared_budget_caps_the_fetch);
    RUN(a_backlog_is_fetched_ahead_for_a_few_round_trips);
    RUN(jobs_fetched_ahead_go_back_when_every_executor_is_held);
    RUN(no_types_and_nothing_done_waits_without_limit);
    RUN(ready_tasks_wake_sleeping_executors_after_wake_after);
    RUN(round_trip_never_starts_while_tasks_wait_for_sleepers);
    RUN(a_draining_batch_is_gathered_up_to_gather_max);
    RUN(a_batch_of_long_jobs_is_not_gathered);
    RUN(short_handlers_are_spun_for_once);
    RUN(long_handlers_are_never_waited_for);
    RUN(idle_backoff_grows_to_the_cap_and_a_wakeup_ends_it);
    RUN(a_held_back_rate_limit_ends_the_idle_backoff_then);
    RUN(finished_jobs_are_committed_during_an_idle_backoff);
    RUN(failing_commits_back_off_and_hold_the_commit);
    RUN(failing_fetches_back_off_doubling_to_a_second);
    RUN(an_incomplete_reply_is_reclaimed);
    RUN(stop_commits_what_runs_and_exits_when_nothing_is_in_flight);
    RUN(stop_waits_for_a_pending_reclaim);
    RUN(wake_count_follows_the_estimate_until_tasks_wait_too_long);
    return tl_finish();
}
