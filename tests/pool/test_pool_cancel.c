/* Cancelling running jobs of a C pool (PROTOCOL §21), against a real Redis: a handler
 * that polls cwork_job_cancelled, and one that waits on cwork_job_stop_fd, see the
 * cancel and return; whatever they return the job lands in dead with err "cancelled"
 * (never retry, whatever its type's options), the mark is gone and the counts are exact;
 * cancels racing completions end each job one way only. Whole namespace checked. */
#include "pool_testutil.h"

#include <poll.h>
#include <stdatomic.h>
#include <string.h>

static atomic_int started_, saw_cancel_;
static _Atomic cwork_stop_reason reason_seen_;

#define JOB(id) "{\"name\":\"long\",\"id\":\"" id "\",\"t\":1700000000,\"args\":{\"n\":1}}"

/* Runs until asked to stop (30 s at most), then returns success: the cancel decides. */
static int polling_handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&started_, 1);
    for (long long end = tl_now_ms() + 30000; tl_now_ms() < end; tl_sleep_ms(1))
        if (cwork_job_cancelled(job)) {
            atomic_store(&reason_seen_, cwork_job_stop_reason(job));
            atomic_fetch_add(&saw_cancel_, 1);
            break;
        }
    return 0;
}

/* Waits on the stop fd (30 s at most), then fails: the cancel still decides. */
static int waiting_handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    int fd = cwork_job_stop_fd(job);
    atomic_fetch_add(&started_, 1);
    struct pollfd p = {fd, POLLIN, 0};
    if (fd >= 0 && poll(&p, 1, 30000) == 1) {
        atomic_store(&reason_seen_, cwork_job_stop_reason(job));
        atomic_fetch_add(&saw_cancel_, 1);
    }
    return cwork_job_fail(job, "interrupted");
}

static void wait_started(int n)
{
    for (long long end = tl_now_ms() + 10000; tl_now_ms() < end; tl_sleep_ms(5))
        if (atomic_load(&started_) >= n) return;
    tl_fail(__FILE__, __LINE__, "the handler did not start");
}

/* The dead set's one member, checked as the cancelled job (Go's bytes); returns its bytes
 * with the score, as a dump line's value. */
static void check_cancelled_dead(int line, const char *id, char *out, size_t size)
{
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1 WITHSCORES", ns_);
    out[0] = '\0';
    if (r->elements != 2) {
        tl_fail(__FILE__, line, "dead holds %zu members, expected 1", r->elements / 2);
    } else {
        long long at = atoll(r->element[1]->str);
        char want[512];
        snprintf(want, sizeof want,
                 "{\"name\":\"long\",\"id\":\"%s\",\"t\":1700000000,\"args\":{\"n\":1},"
                 "\"fails\":1,\"err\":\"cancelled\",\"failed_at\":%lld}",
                 id, at);
        if (strcmp(r->element[0]->str, want) != 0)
            tl_fail(__FILE__, line, "dead member\n   got: %s\n  want: %s", r->element[0]->str,
                    want);
        snprintf(out, size, "%s=%s", r->element[0]->str, r->element[1]->str);
    }
    freeReplyObject(r);
}

static void run_cancel_case(const char *tag, cwork_handler handler, uint64_t want_succeeded)
{
    cwork_pool *p = new_pool(tag, 2);
    atomic_store(&started_, 0), atomic_store(&saw_cancel_, 0);
    atomic_store(&reason_seen_, CWORK_STOP_NONE);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.skip_dead = true; /* the fork's SkipDead would drop a failure: a cancel is not one */
    CHECK_INT(cwork_pool_register(p, "long", handler, &jo, NULL), 0);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    push_raw("long", JOB("c1"));
    wait_started(1);
    cwork_client *cl = cwork_client_new(redis_, ns_, NULL);
    cwork_cancel_result res;
    long long t0 = tl_now_ms();
    CHECK_INT(cwork_client_cancel(cl, "c1", &res, &err), 0);
    CHECK_INT(res.place, CWORK_PLACE_IN_PROGRESS);
    CHECK_STR(res.pool_id, cwork_pool_id(p));
    for (long long end = tl_now_ms() + 10000; tl_now_ms() < end; tl_sleep_ms(2))
        if (atomic_load(&saw_cancel_)) break;
    CHECK_INT(atomic_load(&saw_cancel_), 1);
    CHECK_INT(atomic_load(&reason_seen_), CWORK_STOP_CANCELLED);
    fprintf(stderr, "  (%s: the handler saw the cancel %lld ms after it was sent)\n", tag,
            tl_now_ms() - t0);
    CHECK_INT(wait_for_int(1, 10000, "ZCARD %s:dead%s", ""), 1);
    /* The pool runs on: a later job of the type succeeds (after its own cancel check). */
    push_raw("long", JOB("c2"));
    wait_started(2);
    CHECK_INT(cwork_client_cancel(cl, "c2", NULL, &err), 0); /* ends it, also to dead */
    CHECK_INT(wait_for_int(2, 10000, "ZCARD %s:dead%s", ""), 2);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    cwork_pool_stats st;
    cwork_pool_get_stats(p, &st);
    CHECK_INT(st.succeeded, want_succeeded);
    CHECK_INT(st.failed, 2);
    CHECK_INT(st.dead, 2);
    CHECK_INT(st.retried, 0);
    /* c2 first out of the way, to check c1's bytes alone */
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    for (size_t i = 0; i < r->elements; i++)
        if (strstr(r->element[i]->str, "\"id\":\"c2\""))
            freeReplyObject(tl_cmd(rc_, "ZREM %s:dead %s", ns_, r->element[i]->str));
    freeReplyObject(r);
    char dead[600], want[2048];
    check_cancelled_dead(__LINE__, "c1", dead, sizeof dead);
    tl_take_stat_days(rc_, ns_, 2, 2);
    CHECK_INT(take_failure_histories(), 2); /* c1's and c2's "cancelled" */
    snprintf(want, sizeof want,
             "%s:dead zset %s\n"
             "%s:jobs:long:lock string 0\n"
             "%s:jobs:long:max_concurrency string 0\n"
             "%s:known_jobs set long\n",
             ns_, dead, ns_, ns_, ns_);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want); /* no mark left, nothing in retry or in progress */
    free(dump);
    cwork_client_free(cl);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static void a_handler_that_polls_sees_the_cancel_and_the_job_goes_to_dead(void)
{
    run_cancel_case("cancel-poll", polling_handler, 0);
}

static void a_handler_waiting_on_the_stop_fd_wakes_and_its_failure_is_not_retried(void)
{
    run_cancel_case("cancel-fd", waiting_handler, 0);
}

/* ---------------------------------------------------------------- racing completion */

#define RACE_JOBS 40
static atomic_int ran_[RACE_JOBS];

static int quick_handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    int i = atoi(cwork_job_id(job) + 1);
    if (i >= 0 && i < RACE_JOBS) atomic_fetch_add(&ran_[i], 1);
    tl_sleep_ms(i % 3); /* 0–2 ms: some finish before the cancel, some after */
    return 0;
}

/* Waits until the pool listens on its cancel channel (PROTOCOL §21): its subscriber
 * connects after cwork_pool_start returns, and a cancel of a running job sent before that
 * reaches no one (CWORK_EUNSUPPORTED, as for a Go pool) — a start-up race, not the one
 * this case is about. */
static void wait_listening(const cwork_pool *p)
{
    long long subscribers = 0;
    for (long long end = tl_now_ms() + 10000; tl_now_ms() < end; tl_sleep_ms(5)) {
        redisReply *r = tl_cmd(rc_, "PUBSUB NUMSUB %s:cwork:cancel:%s", ns_, cwork_pool_id(p));
        subscribers = r->type == REDIS_REPLY_ARRAY && r->elements == 2 ? r->element[1]->integer : 0;
        freeReplyObject(r);
        if (subscribers > 0) break;
    }
    CHECK(subscribers > 0);
}

static void cancels_racing_completions_end_each_job_one_way(void)
{
    cwork_pool *p = new_pool("cancel-race", 4);
    CHECK_INT(cwork_pool_register(p, "long", quick_handler, NULL, NULL), 0);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    wait_listening(p);
    cwork_client *cl = cwork_client_new(redis_, ns_, NULL);
    int cancelled = 0, queued_cancels = 0, not_found = 0;
    int was_queued[RACE_JOBS] = {0};
    for (int i = 0; i < RACE_JOBS; i++) {
        atomic_store(&ran_[i], 0);
        char job[128], id[16];
        snprintf(id, sizeof id, "r%d", i);
        snprintf(job, sizeof job, "{\"name\":\"long\",\"id\":\"%s\",\"t\":1,\"args\":{}}", id);
        push_raw("long", job);
        tl_sleep_ms(i % 4); /* 0–3 ms: waiting, running or finished when cancelled */
        cwork_cancel_result res;
        int rc = cwork_client_cancel(cl, id, &res, &err);
        if (rc == 0) {
            cancelled++;
            if (res.place == CWORK_PLACE_QUEUE) queued_cancels++, was_queued[i] = 1;
        } else {
            CHECK_INT(rc, CWORK_ENOTFOUND); /* it had finished */
            not_found++;
        }
    }
    for (long long end = tl_now_ms() + 10000; tl_now_ms() < end; tl_sleep_ms(10)) {
        cwork_pool_stats st;
        cwork_pool_get_stats(p, &st);
        if (st.succeeded + st.failed + (uint64_t)queued_cancels >= RACE_JOBS) break;
    }
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    cwork_pool_stats st;
    cwork_pool_get_stats(p, &st);
    fprintf(stderr, "  (%d cancelled, %d of them waiting; %d finished first)\n", cancelled,
            queued_cancels, not_found);
    /* Every job ended once: succeeded, or dead as cancelled — never both. */
    CHECK_INT(wait_for_int(cancelled, 1000, "ZCARD %s:dead%s", ""), cancelled);
    CHECK_INT(st.succeeded, (uint64_t)not_found);
    CHECK_INT(st.failed, (uint64_t)(cancelled - queued_cancels));
    CHECK_INT(st.retried, 0);
    for (int i = 0; i < RACE_JOBS; i++)
        if (was_queued[i]) CHECK_INT(atomic_load(&ran_[i]), 0);
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    for (size_t i = 0; i < r->elements; i++)
        CHECK(strstr(r->element[i]->str, "\"err\":\"cancelled\"") != NULL);
    freeReplyObject(r);
    freeReplyObject(tl_cmd(rc_, "DEL %s:dead", ns_));
    tl_take_stat_days(rc_, ns_, (long long)(RACE_JOBS - queued_cancels),
                      (long long)(cancelled - queued_cancels));
    /* a history for each job its pool committed as cancelled (the cancel script moves
     * a waiting one to dead itself, without one) */
    CHECK(take_failure_histories() <= cancelled - queued_cancels);
    /* The lock key is written by the first fetch; on a slow machine (TSan, -j8) the cancels
     * can take every job from the queue before the pool fetched one, and then there is none. */
    char want[512], lock_line[160] = "";
    if (queued_cancels < RACE_JOBS)
        snprintf(lock_line, sizeof lock_line, "%s:jobs:long:lock string 0\n", ns_);
    snprintf(want, sizeof want,
             "%s%s:jobs:long:max_concurrency string 0\n"
             "%s:known_jobs set long\n",
             lock_line, ns_, ns_);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    cwork_client_free(cl);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static void outside_a_pool_nothing_is_stopped(void)
{
    const char *bytes = JOB("x");
    cwork_job *j = NULL;
    CHECK_INT(cwork_job_decode(bytes, strlen(bytes), &j, NULL), 0);
    CHECK_INT(cwork_job_stop_reason(j), CWORK_STOP_NONE);
    CHECK(!cwork_job_cancelled(j));
    CHECK_INT(cwork_job_stop_fd(j), -1);
    CHECK_INT(cwork_job_stop_reason(NULL), CWORK_STOP_NONE);
    cwork_job_free(j);
}

int main(void)
{
    pool_test_setup();
    RUN(a_handler_that_polls_sees_the_cancel_and_the_job_goes_to_dead);
    RUN(a_handler_waiting_on_the_stop_fd_wakes_and_its_failure_is_not_retried);
    RUN(cancels_racing_completions_end_each_job_one_way);
    RUN(outside_a_pool_nothing_is_stopped);
    pool_test_teardown();
    return tl_finish();
}
