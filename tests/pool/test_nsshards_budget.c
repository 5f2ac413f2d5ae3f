/* The shared executor budget of a sharded namespace's pool (src/pool/pool_nsshards_budget.c)
 * as a table of steps on two seats of a budget of 4, with a fake clock: no threads, no
 * Redis. A lone backlog takes everything; a second shard that asks gets its equal share
 * as the first one's jobs finish (the first cannot take them back); a round trip stuck
 * past CW_BUDGET_STALL_US stops counting; a failed fetch stops asking; leaving gives
 * everything back. The inner pools' executor counts are bounded. */
#include "pool_nsshards_budget.h"
#include "testlib.h"

typedef struct fake {
    cw_shard shard;
    cwork_pool pool;
    cw_budget_seat *seat;
} fake;

static void seat_up(cw_nsshards_budget *b, fake *f)
{
    memset(f, 0, sizeof *f);
    cw_mutex_init(&f->shard.mu);
    f->pool.shards = &f->shard;
    f->pool.nshards = 1;
    CHECK_INT(cw_nsshards_budget_join(b, &f->pool, NULL), 0);
    f->seat = &f->pool.seats[0];
    cw_mutex_lock(&f->shard.mu); /* the dispatcher's calls are made under it */
}

/* Syncs f's seat to `taken` jobs at time now: returns the room; *wake as told. */
static size_t sync_at(fake *f, size_t taken, int64_t now, bool *wake)
{
    bool w = false;
    size_t room = cw_budget_sync(f->seat, taken, now, &w);
    if (wake) *wake = w;
    return room;
}

static void shares_and_stalls(void)
{
    cw_nsshards_budget *b = cw_nsshards_budget_new(4);
    fake a, c;
    seat_up(b, &a);
    seat_up(b, &c);
    int64_t t = 1000000;
    bool wake = false;
    /* A alone with a backlog: all 4. */
    CHECK_INT(sync_at(&a, 0, t, NULL), 4);
    CHECK_INT(cw_budget_reserve(a.seat, 4, t), 4);
    cw_budget_after(a.seat, 4, 4, true); /* full: it asks */
    CHECK_INT(sync_at(&a, 4, t, NULL), 0);
    /* C gets jobs: nothing free, it is held back and asks. */
    CHECK_INT(sync_at(&c, 0, t, NULL), 0);
    CHECK(!cw_budget_held_back(c.seat, t));
    /* One of A's jobs finishes: C is to be woken; A (3 held, share 2) may not refill. */
    CHECK_INT(sync_at(&a, 3, t, &wake), 0);
    CHECK(wake);
    CHECK_INT(sync_at(&c, 0, t, NULL), 1);
    CHECK_INT(cw_budget_reserve(c.seat, 4, t), 1);
    cw_budget_after(c.seat, 1, 1, true);
    CHECK_INT(sync_at(&a, 2, t, NULL), 0); /* another finishes: still at its share */
    CHECK_INT(sync_at(&c, 1, t, NULL), 1);
    CHECK_INT(cw_budget_reserve(c.seat, 1, t), 1);
    cw_budget_after(c.seat, 1, 1, true);
    CHECK_INT(sync_at(&c, 2, t, NULL), 0); /* 2 and 2: equal shares */
    size_t used = 0, peak = 0;
    cw_nsshards_budget_usage(b, &used, &peak);
    CHECK_INT(used, 4);
    CHECK_INT(peak, 4);
    /* C's jobs finish and it fetches again, but its round trip does not come back. */
    CHECK_INT(sync_at(&c, 0, t, NULL), 2);
    CHECK_INT(cw_budget_reserve(c.seat, 1, t), 1);
    CHECK_INT(sync_at(&a, 0, t, NULL), 2); /* A's jobs finish: its share */
    CHECK_INT(cw_budget_reserve(a.seat, 2, t), 2);
    CHECK_INT(sync_at(&a, 2, t + CW_BUDGET_STALL_US, NULL), 0);     /* not yet stuck */
    CHECK_INT(sync_at(&a, 2, t + CW_BUDGET_STALL_US + 1, NULL), 1); /* all but C's 1 */
    /* C's round trip fails: its reservation goes back and it stops asking. */
    cw_budget_after(c.seat, 1, 0, false);
    CHECK_INT(sync_at(&c, 0, t, &wake), 2);
    CHECK_INT(sync_at(&a, 2, t, NULL), 2); /* A alone asks: all 4 */
    /* Leaving gives everything back. */
    cw_budget_leave(a.seat, &wake);
    cw_budget_leave(c.seat, &wake);
    cw_nsshards_budget_usage(b, &used, &peak);
    CHECK_INT(used, 0);
    cw_mutex_unlock(&a.shard.mu);
    cw_mutex_unlock(&c.shard.mu);
    cw_mutex_destroy(&a.shard.mu);
    cw_mutex_destroy(&c.shard.mu);
    cw_nsshards_budget_free(b);
}

/* Jobs a reclaim took up run even over the budget; the seat holds them by force. */
static void reclaimed_jobs_are_forced(void)
{
    cw_nsshards_budget *b = cw_nsshards_budget_new(2);
    fake a;
    seat_up(b, &a);
    CHECK_INT(sync_at(&a, 3, 1, NULL), 0);
    size_t used = 0, peak = 0;
    cw_nsshards_budget_usage(b, &used, &peak);
    CHECK_INT(used, 3);
    CHECK_INT(sync_at(&a, 1, 1, NULL), 1);
    bool wake;
    cw_budget_leave(a.seat, &wake);
    cw_mutex_unlock(&a.shard.mu);
    cw_mutex_destroy(&a.shard.mu);
    cw_nsshards_budget_free(b);
}

static void executor_threads_are_bounded(void)
{
    CHECK_INT(cw_nsshards_executors(40, 1), 40);
    CHECK_INT(cw_nsshards_executors(40, 4), 40);      /* S ≤ 4: every shard can run N */
    CHECK_INT(cw_nsshards_executors(160, 16), 64);    /* 1024 / 16 */
    CHECK_INT(cw_nsshards_executors(640, 64), 40);    /* 4 · ⌈640/64⌉ */
    CHECK_INT(cw_nsshards_executors(8000, 16), 2000); /* 4 · 500 */
    CHECK_INT(cw_nsshards_executors(3, 3), 3);
}

int main(void)
{
    RUN(shares_and_stalls);
    RUN(reclaimed_jobs_are_forced);
    RUN(executor_threads_are_bounded);
    return tl_finish();
}
