/* The dispatcher's decisions as pure functions (see dispatch_policy.h for the rules). */
#include "dispatch_policy.h"

/* How much earlier than a rate limit's wait a dispatcher looks again (µs). */
#define CW_RATE_WAKE_EARLY_US 1000

void cw_pool_tuning_init(cw_pool_tuning *t)
{
    *t = (cw_pool_tuning){
        .shard_executors = 10,
        .max_shards = 4,
        .max_fetch = 1000,
        .ahead_max = 90,
        .ahead_round_trips = 4,
        .long_run_factor = 8,
        .wake_target_us = 100,
        .wake_after_us = 300,
        .gather_max_us = 1000,
        .gather_handler_us = 100,
        .spin_max_us = 100,
        .spin_handler_us = 20,
        .spin_wake_us = 60,
        .idle_backoff_first_ms = 1,
        .idle_backoff_factor = 10,
        .fetch_error_first_ms = 10,
        .fetch_error_max_ms = 1000,
        .commit_error_first_ms = 10,
        .commit_error_max_ms = 5000,
        .budget_recheck_us = 10000,
    };
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* The earlier of two deadlines, 0 meaning none. */
static int64_t earlier(int64_t a, int64_t b)
{
    if (!a) return b;
    if (!b) return a;
    return a < b ? a : b;
}

size_t cw_wake_count(size_t ready, size_t sleeping, int64_t handler_avg_us, int64_t waited_us,
                     const cw_pool_tuning *tu)
{
    if (!ready || !sleeping) return 0;
    size_t want = ready;
    if (waited_us < tu->wake_after_us && tu->wake_target_us > 0) {
        /* Enough executors that each has about wake_target_us of work. */
        int64_t avg = handler_avg_us > 0 ? handler_avg_us : 0;
        if (avg < INT64_MAX / (int64_t)(ready + 1)) {
            uint64_t enough = 1 + (uint64_t)((int64_t)ready * avg / tu->wake_target_us);
            if (enough < want) want = (size_t)enough;
        }
    }
    return min_size(want, sleeping);
}

size_t cw_fetch_ahead(const cw_dispatch_state *st, const cw_dispatch_view *v,
                      const cw_pool_tuning *tu)
{
    if (!st->backlog || v->stopping || !tu->ahead_max || v->round_trip_us <= 0) return 0;
    if (v->running_long >= v->nexecutors || v->finished < v->nexecutors) return 0;
    uint64_t executors = v->nexecutors - v->running_long;
    uint64_t avg = v->handler_avg_us > 1 ? (uint64_t)v->handler_avg_us : 1;
    if (executors > UINT16_MAX || (uint64_t)v->round_trip_us > UINT32_MAX ||
        tu->ahead_round_trips > UINT8_MAX)
        return tu->ahead_max; /* a product past 2^56 (absurd tunables): the cap answers */
    uint64_t rt = (uint64_t)v->round_trip_us * tu->ahead_round_trips;
    uint64_t n = (executors * rt + avg / 2) / avg;
    return n < tu->ahead_max ? (size_t)n : tu->ahead_max;
}

int64_t cw_long_run_us(int64_t handler_avg_us, int64_t round_trip_us, const cw_pool_tuning *tu)
{
    int64_t base = handler_avg_us > round_trip_us ? handler_avg_us : round_trip_us;
    int64_t factor = tu->long_run_factor ? (int64_t)tu->long_run_factor : 1;
    if (base < 1) base = 1;
    return base > INT64_MAX / factor ? INT64_MAX : factor * base;
}

static cw_decision wait_until(cw_decision d, int64_t until_us)
{
    d.what = CW_DO_WAIT;
    d.until_us = until_us;
    return d;
}

cw_decision cw_dispatch_decide(cw_dispatch_state *st, const cw_dispatch_view *v,
                               const cw_pool_tuning *tu)
{
    cw_decision d = {0};

    /* 1. Stopping. With no fetch of unknown outcome, nothing new can reach the
     * executors: they may leave once ready is empty. */
    if (v->stopping && !st->reclaim && !st->no_more_tasks) {
        st->no_more_tasks = true;
        d.announce_no_more = true;
    }
    if (v->stopping && v->in_flight == 0 && !st->reclaim) {
        d.what = CW_DO_EXIT;
        return d;
    }

    /* A wake-up ends an idle backoff (not one for failures: Redis is not better for it). */
    if (v->wakeup && st->backoff != CW_BACKOFF_ERROR) {
        st->idle_ms = 0;
        if (st->backoff == CW_BACKOFF_IDLE) st->backoff = CW_BACKOFF_NONE;
    }
    if (st->backoff != CW_BACKOFF_NONE && v->now_us >= st->backoff_until_us)
        st->backoff = CW_BACKOFF_NONE;

    /* 2. Ready tasks and sleeping executors: wake them once the tasks waited too long,
     * else look again when they will have. */
    int64_t wake_deadline = 0;
    size_t wake_all = min_size(v->ready, v->sleeping);
    if (wake_all) {
        int64_t waited = v->now_us - v->ready_since_us;
        if (waited >= tu->wake_after_us)
            d.wake = wake_all;
        else
            wake_deadline = v->ready_since_us + tu->wake_after_us;
    }

    /* 4. Jobs fetched ahead that wait behind runs far longer than the average go back
     * to their queues, at once when the pool stops; until then, look again when they
     * will have waited that long. */
    size_t held = v->done + v->ready;
    size_t running = v->in_flight > held ? v->in_flight - held : 0;
    if (v->returnable > 0 && running >= v->nexecutors && !st->reclaim &&
        st->backoff != CW_BACKOFF_ERROR) {
        int64_t long_us = cw_long_run_us(v->handler_avg_us, v->round_trip_us, tu);
        int64_t back_at =
            v->ready_since_us > INT64_MAX - long_us ? INT64_MAX : v->ready_since_us + long_us;
        if (v->stopping || v->now_us >= back_at) {
            d.what = CW_DO_GIVE_BACK;
            return d;
        }
        wake_deadline = earlier(wake_deadline, back_at);
    }

    size_t taken = v->in_flight - v->done; /* running, or promised a ready task */
    size_t ahead = cw_fetch_ahead(st, v, tu);
    size_t seats = v->nexecutors + ahead;
    size_t free_executors = seats > taken ? seats - taken : 0;
    bool short_handlers = v->handler_avg_us < tu->gather_handler_us;
    /* Refill the jobs fetched ahead while they last; a batch of short ones is fetched
     * again when it is drained (5). */
    d.refill_at = short_handlers ? 0 : ahead;
    bool can_fetch = !v->stopping && free_executors > 0 && v->ntypes > 0 && !st->reclaim;
    /* 4. The shared budget of a sharded namespace's pool. */
    if (v->budgeted && v->budget < free_executors) {
        free_executors = v->budget;
        if (can_fetch && free_executors == 0 && st->backoff == CW_BACKOFF_NONE) {
            can_fetch = false;
            d.budget_short = true;
            wake_deadline = earlier(wake_deadline, v->now_us + tu->budget_recheck_us);
        }
    }

    /* 3. Backoff: commit finished jobs at once (unless commits are what fails), fetch
     * nothing until it ends. */
    if (st->backoff != CW_BACKOFF_NONE) {
        if (v->done == 0 || st->commit_failing)
            return wait_until(d, earlier(st->backoff_until_us, wake_deadline));
        can_fetch = false;
    } else if (st->reclaim) {
        st->spun = false;
        st->gather_until_us = 0;
        d.what = CW_DO_RECLAIM;
        d.wake = wake_all; /* about to block on Redis */
        return d;
    }

    /* 5. Gather: a batch of short jobs is still being drained; fetch for the free
     * executors when it is (or after gather_max_us), not a few jobs now. (Nobody
     * signals the drain of a batch of long jobs: their executors are all woken.) */
    if (can_fetch && v->ready > 0 && short_handlers) {
        if (!st->gather_until_us) st->gather_until_us = v->now_us + tu->gather_max_us;
        if (v->now_us < st->gather_until_us)
            return wait_until(d, earlier(st->gather_until_us, wake_deadline));
    }

    bool commit = v->done > 0;
    if (!commit && !can_fetch) {
        /* Every executor is busy (or promised a task) and nothing is done: for short
         * handlers, spin once for the batch rather than sleep and be woken. */
        size_t busy = taken;
        if (!st->spun && busy > 0 && v->handler_avg_us < tu->spin_handler_us && !v->stopping) {
            st->spun = true;
            int64_t budget = tu->spin_wake_us + 2 * (int64_t)(v->ready + 1) * v->handler_avg_us;
            if (budget > tu->spin_max_us) budget = tu->spin_max_us;
            d.what = CW_DO_SPIN;
            d.until_us = v->now_us + budget;
            d.busy = busy;
            return d;
        }
        return wait_until(d, wake_deadline);
    }

    /* 4. A round trip: commits, and a fetch for the free executors (and ahead). */
    st->spun = false;
    st->gather_until_us = 0;
    d.what = CW_DO_ROUND_TRIP;
    d.commit = commit;
    d.fetch = can_fetch ? min_size(free_executors, tu->max_fetch) : 0;
    d.wake = wake_all; /* never block on Redis while tasks wait for sleeping executors */
    return d;
}

static void back_off(cw_dispatch_state *st, cw_backoff_kind kind, int64_t ms, int64_t now_us)
{
    st->backoff = kind;
    st->backoff_until_us = now_us + ms * 1000;
}

static int64_t grow(int64_t step, int64_t first, int64_t factor, int64_t max)
{
    int64_t next = step ? step * factor : first;
    return next > max ? max : next;
}

void cw_dispatch_after(cw_dispatch_state *st, const cw_round_trip_result *r, int64_t now_us,
                       const cw_pool_tuning *tu, int64_t idle_max_ms)
{
    if (r->fetch || r->reclaimed) /* only a clean reply tells what a fetch moved */
        st->reclaim = !(r->ok && r->complete);
    if (r->fetch) st->backlog = r->ok && r->got >= r->fetch;
    if (r->gave_back) {
        st->backlog = false;                /* not ahead again until a fetch finds a backlog */
        st->reclaim = !r->ok && r->got > 0; /* jobs sent, outcome unknown: a reclaim */
        if (!r->ok) {                       /* after a failure's backoff */
            st->commit_error_ms =
                grow(st->commit_error_ms, tu->commit_error_first_ms, 10, tu->commit_error_max_ms);
            back_off(st, CW_BACKOFF_ERROR, st->commit_error_ms, now_us);
        }
        return;
    }
    if (r->ok && r->committed) {
        st->commit_error_ms = 0;
        st->commit_failing = false;
    }
    if (!r->ok && (r->committed || r->reclaimed || !r->fetch)) {
        /* Commits (or a reclaim) are retried with capped backoff; nothing new is
         * fetched meanwhile. */
        st->commit_failing = r->committed;
        st->commit_error_ms =
            grow(st->commit_error_ms, tu->commit_error_first_ms, 10, tu->commit_error_max_ms);
        back_off(st, CW_BACKOFF_ERROR, st->commit_error_ms, now_us);
        return;
    }
    if (r->reclaimed || !r->fetch) return;
    if (!r->ok) {
        st->fetch_error_ms =
            grow(st->fetch_error_ms, tu->fetch_error_first_ms, 2, tu->fetch_error_max_ms);
        back_off(st, CW_BACKOFF_ERROR, st->fetch_error_ms, now_us);
    } else if (r->got) {
        st->idle_ms = st->fetch_error_ms = 0;
        st->backoff = CW_BACKOFF_NONE;
    } else {
        st->fetch_error_ms = 0;
        int64_t max = idle_max_ms > 0 ? idle_max_ms : 1;
        st->idle_ms = grow(st->idle_ms, tu->idle_backoff_first_ms, tu->idle_backoff_factor, max);
        back_off(st, CW_BACKOFF_IDLE, st->idle_ms, now_us);
        /* A held-back rate-limited type starts as soon as its limit allows: a little
         * early when the wait is long (the wait was measured before the reply came back,
         * and a wake-up is late, never early), so that the call reaches Redis about on
         * time; one arriving early is told the rest. Lateness would delay every later
         * start of the type (PROTOCOL §20.2). */
        int64_t wait = r->rate_wait_us;
        if (wait > 2 * CW_RATE_WAKE_EARLY_US) wait -= CW_RATE_WAKE_EARLY_US;
        if (wait > 0 && now_us + wait < st->backoff_until_us) st->backoff_until_us = now_us + wait;
    }
}
