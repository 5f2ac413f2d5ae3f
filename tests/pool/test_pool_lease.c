/* A pool's lease on its jobs (README "Leases"), on the manual clock (src/base/clock.h),
 * against a real Redis: while its heartbeat cannot be written (worker_pools damaged, so
 * every beat is refused), a running job is asked to stop with CWORK_STOP_LEASE_LOST
 * exactly at the stop point — after the beats that could still renew the lease, before
 * the lease ends — and is not committed although its handler returns success: it stays
 * in progress with its lock for whoever reaps. Once the heartbeat can be written again
 * the pool beats, takes the job up again and runs it to success. Whole namespace
 * checked. */
#include "clock_testutil.h"
#include "pool_testutil.h"

#include "pool.h" /* CW_LEASE_MS, CW_LEASE_STOP_AT_MS: the rule under test */

#include <stdatomic.h>
#include <string.h>

#define JOB "{\"name\":\"long\",\"id\":\"l1\",\"t\":1700000000,\"args\":{}}"
#define THREADS 3 /* sleeping on the manual clock: heartbeat, maintenance, lease guard */
/* While the pool is fenced its guard polls its tasks on the system's clock (lease.c), so
 * one thread fewer sleeps on the manual clock until the lease is renewed. */
#define THREADS_FENCED (THREADS - 1)

static atomic_int started_, stopped_, returned_;
static _Atomic cwork_stop_reason reason_;

/* The first run waits to be stopped (30 s of real time at most) and then claims success;
 * later runs succeed at once. */
static int handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    if (atomic_fetch_add(&started_, 1) == 0) {
        for (long long end = tl_now_ms() + 30000; tl_now_ms() < end; tl_sleep_ms(1))
            if (cwork_job_stop_reason(job) != CWORK_STOP_NONE) {
                atomic_store(&reason_, cwork_job_stop_reason(job));
                atomic_store(&stopped_, 1);
                break;
            }
    }
    atomic_fetch_add(&returned_, 1);
    return 0;
}

static void wait_atomic(atomic_int *v, int want, const char *what)
{
    for (long long end = tl_now_ms() + 10000; tl_now_ms() < end; tl_sleep_ms(2))
        if (atomic_load(v) >= want) return;
    tl_fail(__FILE__, __LINE__, "timed out waiting for %s", what);
}

/* Makes the pool unable to beat, runs its job to the lease's stop point, and checks it
 * was stopped and not committed. Returns the pool (started, fenced, its job stopped). */
static cwork_pool *fence_a_running_job(void)
{
    atomic_store(&started_, 0);
    atomic_store(&stopped_, 0);
    atomic_store(&returned_, 0);
    atomic_store(&reason_, CWORK_STOP_NONE);
    clock_start_manual();
    cwork_pool *p = new_pool("lease", 1);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.max_concurrency = 1;
    CHECK_INT(cwork_pool_register(p, "long", handler, &jo, NULL), 0);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    const char *id = cwork_pool_id(p);
    push_raw("long", JOB);
    wait_atomic(&started_, 1, "the job to start");

    /* Every beat from now on is refused (WRONGTYPE on SADD worker_pools). */
    freeReplyObject(tl_cmd(rc_, "DEL %s:worker_pools", ns_));
    freeReplyObject(tl_cmd(rc_, "SET %s:worker_pools damaged", ns_));
    /* Up to the stop point the beats (every 2 s, retried each second) could still renew the
     * lease: the job runs on. */
    int64_t at = 0;
    for (; at + 500 < CW_LEASE_STOP_AT_MS; at += 500) {
        CLOCK_ADVANCE(THREADS, 500);
        tl_sleep_ms(20);
        CHECK_INT(atomic_load(&stopped_), 0);
    }
    CHECK(at + 500 == CW_LEASE_STOP_AT_MS);
    CLOCK_ADVANCE(THREADS, 500);
    wait_atomic(&stopped_, 1, "the job to be asked to stop at the lease's stop point");
    CHECK_INT(atomic_load(&reason_), CWORK_STOP_LEASE_LOST);
    /* Stopped with room for the kill grace and scheduling before the lease ends. */
    CHECK(CW_LEASE_STOP_AT_MS + CWORK_LEASE_STOP_GRACE_MS < CW_LEASE_MS);
    wait_atomic(&returned_, 1, "the handler to return");

    /* Not committed although the handler returned 0: in progress, its lock held. */
    char key[256];
    snprintf(key, sizeof key, "LLEN %%s:jobs:long:%s:inprogress%%s", id);
    CHECK_INT(wait_for_int(1, 1000, key, ""), 1);
    tl_sleep_ms(200); /* (a commit would have come by now) */
    CHECK_INT(wait_for_int(1, 0, key, ""), 1);
    redisReply *r = tl_cmd(rc_, "GET %s:jobs:long:lock", ns_);
    CHECK_STR(r->str, "1");
    freeReplyObject(r);
    cwork_pool_stats st;
    cwork_pool_get_stats(p, &st);
    CHECK_INT(st.succeeded, 0);
    CHECK_INT(st.failed, 0);
    return p;
}

static void a_pool_that_cannot_beat_stops_its_job_before_the_lease_ends_and_commits_nothing(void)
{
    cwork_pool *p = fence_a_running_job();
    const char *id = cwork_pool_id(p);
    cwork_error err = {0};
    cwork_pool_stats st;
    char key[256];

    /* Redis takes the heartbeat again: the pool beats, takes the job up (no reaper came)
     * and runs it to success. */
    freeReplyObject(tl_cmd(rc_, "DEL %s:worker_pools", ns_));
    for (int i = 0; i < 100 && atomic_load(&returned_) < 2; i++) {
        CLOCK_ADVANCE(THREADS_FENCED, 100);
        tl_sleep_ms(20);
    }
    wait_atomic(&returned_, 2, "the job to run again once the lease is renewed");
    snprintf(key, sizeof key, "LLEN %%s:jobs:long:%s:inprogress%%s", id);
    CHECK_INT(wait_for_int(0, 10000, key, ""), 0);
    CHECK_INT(wait_for_int(1, 10000, "SISMEMBER %s:worker_pools %s", id), 1);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    cw_clock_system();
    cwork_pool_get_stats(p, &st);
    CHECK_INT(st.succeeded, 1);
    CHECK_INT(st.failed, 0);
    tl_take_stat_days(rc_, ns_, 1, 0);
    char want[1024];
    snprintf(want, sizeof want,
             "%s:jobs:long:lock string 0\n"
             "%s:jobs:long:max_concurrency string 1\n"
             "%s:known_jobs set long\n",
             ns_, ns_, ns_);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* Recovery is not one of the pool's timers: once Redis takes the heartbeat again, a fenced
 * pool beats and takes its job up again while the manual clock stands (its guard polls
 * on the system's clock; on the manual one it would wait for a test to move it). */
static void a_fenced_pool_recovers_while_the_clock_stands(void)
{
    cwork_pool *p = fence_a_running_job();
    freeReplyObject(tl_cmd(rc_, "DEL %s:worker_pools", ns_));
    wait_atomic(&returned_, 2, "the job to run again, the clock standing");
    char key[256];
    snprintf(key, sizeof key, "LLEN %%s:jobs:long:%s:inprogress%%s", cwork_pool_id(p));
    CHECK_INT(wait_for_int(0, 10000, key, ""), 0);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    cw_clock_system();
    cwork_pool_stats st;
    cwork_pool_get_stats(p, &st);
    CHECK_INT(st.succeeded, 1);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* Cancelled while its pool had lost its lease (the job was stopped, its entry left in
 * progress): once the lease is renewed the pool takes the entry up, sees the cancel
 * mark and sends it to dead as cancelled without running it again (reclaim.c). */
static void a_job_cancelled_while_fenced_is_not_run_again(void)
{
    cwork_pool *p = fence_a_running_job();
    const char *id = cwork_pool_id(p);
    /* The cancel as the cancel script leaves it (PROTOCOL §21.1): the mark, which the
     * pool did not hear of (its worker_pools is still damaged, so cwork_client_cancel
     * itself cannot look the job up here). */
    freeReplyObject(tl_cmd(rc_, "HSET %s:cwork:cancelled l1 1700000100", ns_));

    freeReplyObject(tl_cmd(rc_, "DEL %s:worker_pools", ns_));
    for (int i = 0; i < 200 && wait_for_int(1, 0, "ZCARD %s:dead%s", "") != 1; i++) {
        CLOCK_ADVANCE(THREADS_FENCED, 100);
        tl_sleep_ms(20);
    }
    CHECK_INT(wait_for_int(1, 0, "ZCARD %s:dead%s", ""), 1);
    CHECK_INT(atomic_load(&started_), 1); /* never run again */
    char key[256];
    snprintf(key, sizeof key, "LLEN %%s:jobs:long:%s:inprogress%%s", id);
    CHECK_INT(wait_for_int(0, 10000, key, ""), 0);
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    CHECK(r->elements == 1 && strstr(r->element[0]->str, "\"err\":\"cancelled\"") != NULL);
    freeReplyObject(r);
    CHECK_INT(wait_for_int(0, 10000, "EXISTS %s:cwork:cancelled%s", ""), 0); /* consumed */
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    cw_clock_system();
    cwork_pool_stats st;
    cwork_pool_get_stats(p, &st);
    CHECK_INT(st.succeeded, 0);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    RUN(a_pool_that_cannot_beat_stops_its_job_before_the_lease_ends_and_commits_nothing);
    RUN(a_fenced_pool_recovers_while_the_clock_stands);
    RUN(a_job_cancelled_while_fenced_is_not_run_again);
    pool_test_teardown();
    return tl_finish();
}
