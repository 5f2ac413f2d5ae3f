/* Periodic jobs through a pool: instances are written ahead in Go's bytes, the requeuer
 * moves them when due, the handler runs, the watchdog counts the pickups; a pool without
 * periodic jobs never claims the scheduling window; bad specs are refused. */
#include "clock_testutil.h"
#include "periodic.h"
#include "pool_testutil.h"

#include <stdatomic.h>

static atomic_int ticks_;

static int tick(cwork_job *job, void *ctx)
{
    (void)ctx;
    static const char prefix[] = "periodic:tick:* * * * * *:";
    CHECK(strncmp(cwork_job_id(job), prefix, strlen(prefix)) == 0);
    atomic_fetch_add(&ticks_, 1);
    return 0;
}

/* Waits up to 5 s of real time for at least want ticks; returns the count. */
static int wait_ticks(int want)
{
    for (int i = 0; i < 1000 && atomic_load(&ticks_) < want; i++)
        tl_sleep_ms(5);
    return atomic_load(&ticks_);
}

/* On the manual clock (clock_testutil.h): the pool's maintenance thread and heartbeat
 * sleep on it, so each second of it brings exactly one instance due, without the test
 * waiting a real second. */
static void every_second_job_runs_and_is_counted(void)
{
    int64_t t0 = clock_start_manual() / 1000;
    cwork_pool *p = new_pool("periodic", 2);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_register(p, "tick", tick, NULL, NULL), 0);
    CHECK_INT(cwork_pool_periodically_enqueue(p, "* * * * * *", "tick", &err), 0);
    atomic_store(&ticks_, 0);
    CHECK_INT(cwork_pool_start(p, &err), 0);
    /* The first pass writes the fire times of the next 240 s at once: t0+1 … t0+239. */
    CHECK(wait_for_int(1, 2000, "EXISTS %s:last_periodic_enqueue%s", "") == 1);
    redisReply *r = tl_cmd(rc_, "ZCARD %s:scheduled", ns_);
    CHECK_INT(r->integer, CW_PERIODIC_HORIZON - 1);
    freeReplyObject(r);
    r = tl_cmd(rc_, "GET %s:last_periodic_enqueue", ns_);
    CHECK(r->type == REDIS_REPLY_STRING && atoll(r->str) == t0);
    freeReplyObject(r);
    r = tl_cmd(rc_, "ZRANGE %s:scheduled 0 0 WITHSCORES", ns_);
    CHECK(r->elements == 2);
    if (r->elements == 2) {
        char want[256];
        long long at = (long long)t0 + 1;
        snprintf(want, sizeof want,
                 "{\"name\":\"tick\",\"id\":\"periodic:tick:* * * * * *:%lld\",\"t\":%lld,"
                 "\"args\":null,\"d\":%lld}",
                 at, at, at + 1);
        CHECK_STR(r->element[0]->str, want);
        CHECK_INT(atoll(r->element[1]->str), at);
    }
    freeReplyObject(r);
    tl_sleep_ms(300);
    CHECK_INT(atomic_load(&ticks_), 0); /* nothing is due yet */
    for (int second = 1; second <= 3; second++) {
        CLOCK_ADVANCE(3, 1000); /* (the maintenance thread, the heartbeat, the lease guard) */
        CHECK_INT(wait_ticks(second), second);
    }
    tl_sleep_ms(300);
    CHECK_INT(atomic_load(&ticks_), 3); /* one per second, no more */
    /* The watchdog planned t0+2 at its first tick (t0+1) and saw it picked. */
    cwork_watchdog_stat *st = NULL;
    size_t n = 0;
    CHECK_INT(cwork_pool_watchdog_stats(p, &st, &n, &err), 0);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_STR(st[0].name, "tick");
        CHECK(st[0].processed >= 1);
        CHECK_INT(st[0].skipped, 0);
    }
    cwork_free(st);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    cwork_pool_free(p);
    cw_clock_system();
    tl_ns_delete(rc_, ns_);
}

static void pool_without_periodic_jobs_leaves_the_window_alone(void)
{
    cwork_pool *p = new_pool("noperiodic", 2);
    CHECK_INT(cwork_pool_register(p, "tick", tick, NULL, NULL), 0);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    tl_sleep_ms(300);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    redisReply *r = tl_cmd(rc_, "EXISTS %s:last_periodic_enqueue %s:scheduled", ns_, ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    cwork_watchdog_stat *st = (cwork_watchdog_stat *)1;
    size_t n = 9;
    CHECK_INT(cwork_pool_watchdog_stats(p, &st, &n, NULL), 0);
    CHECK(st == NULL && n == 0);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static void bad_specs_and_late_registration_are_refused(void)
{
    cwork_pool *p = new_pool("badspec", 1);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_periodically_enqueue(p, "0 0 0 30 2 *", "x", &err), CWORK_EINVAL);
    CHECK(err.message[0] != '\0');
    CHECK_INT(cwork_pool_periodically_enqueue(p, "61 * * * *", "x", NULL), CWORK_EINVAL);
    CHECK_INT(cwork_pool_periodically_enqueue(p, "@sometimes", "x", NULL), CWORK_EINVAL);
    CHECK_INT(cwork_pool_periodically_enqueue(p, "* * * * *", "bad,name", NULL), CWORK_EINVAL);
    CHECK_INT(cwork_pool_register(p, "x", tick, NULL, NULL), 0);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    CHECK_INT(cwork_pool_periodically_enqueue(p, "* * * * *", "x", NULL), CWORK_EINVAL);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    RUN(every_second_job_runs_and_is_counted);
    RUN(pool_without_periodic_jobs_leaves_the_window_alone);
    RUN(bad_specs_and_late_registration_are_refused);
    pool_test_teardown();
    return tl_finish();
}
