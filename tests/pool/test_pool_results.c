/* Job results and kept successes (PROTOCOL §22) against a real Redis: a handler's
 * result is written by the commit of its successful run with the type's TTL and read
 * back by id (at once, and by a reader already waiting); a failed run writes none and a
 * retried job keeps its last successful run's; a job taken back before its commit
 * writes nothing; kept successes are trimmed by count and by age on the pool's clock;
 * types without either add no key. Every case checks the whole namespace. */
#include "clock_testutil.h"
#include "pool_testutil.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_int set_result_rc_ = 1; /* what cwork_job_set_result answered a too-big one */
static atomic_int release_;           /* the blocked job may finish */
static atomic_int blocked_;           /* the blocked job is running */
static atomic_llong finished_ms_;     /* when the last handler returned (test clock) */

/* By the id's first letter: r sets a result, n sets none, f fails its first run with a
 * result and succeeds the next with another, b waits for the test before setting one,
 * x tries a result over the limit. */
static int handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    const char *id = cwork_job_id(job);
    char text[128];
    int rc = 0;
    switch (id[0]) {
    case 'r':
        snprintf(text, sizeof text, "result of %s", id);
        CHECK_INT(cwork_job_set_result(job, "overwritten", 11), 0);
        CHECK_INT(cwork_job_set_result(job, text, strlen(text)), 0);
        break;
    case 'f':
        if (cwork_job_fails(job) == 0) {
            CHECK_INT(cwork_job_set_result(job, "first", 5), 0);
            rc = cwork_job_fail(job, "first run fails");
        } else {
            CHECK_INT(cwork_job_set_result(job, "second", 6), 0);
        }
        break;
    case 'b':
        atomic_store(&blocked_, 1);
        while (!atomic_load(&release_))
            tl_sleep_ms(1);
        CHECK_INT(cwork_job_set_result(job, "late", 4), 0);
        break;
    case 'x': {
        char *big = calloc(1, CWORK_RESULT_MAX_BYTES + 1);
        atomic_store(&set_result_rc_, cwork_job_set_result(job, big, CWORK_RESULT_MAX_BYTES + 1));
        free(big);
        CHECK_INT(cwork_job_set_result(job, NULL, 1), CWORK_EINVAL);
        CHECK_INT(cwork_job_set_result(job, NULL, 0), 0); /* an empty result is one */
        break;
    }
    default:
        break;
    }
    atomic_store(&finished_ms_, tl_now_ms());
    return rc;
}

/* An hour: the test moves the job back itself, before any requeuer would. */
static int64_t retry_later(const cwork_job *job, void *ud)
{
    (void)job, (void)ud;
    return 3600;
}

#define JOB(id) "{\"name\":\"report\",\"id\":\"" id "\",\"t\":1700000000,\"args\":{}}"

static cwork_pool *report_pool(const char *tag, int64_t ttl_ms, unsigned keep, int64_t keep_ms)
{
    cwork_pool *p = new_pool(tag, 2);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.result_ttl_ms = ttl_ms;
    jo.keep_succeeded = keep;
    jo.keep_succeeded_ms = keep_ms;
    jo.backoff = retry_later;
    cwork_error err = {0};
    CHECK_INT(cwork_pool_register(p, "report", handler, &jo, &err), 0);
    return p;
}

/* Waits (10 s at most) until the pool counted n finished jobs. */
static void wait_counted(cwork_pool *p, uint64_t n)
{
    cwork_pool_stats st = {0};
    for (long long end = tl_now_ms() + 10000; tl_now_ms() < end; tl_sleep_ms(2)) {
        cwork_pool_get_stats(p, &st);
        if (st.succeeded + st.failed >= n) break;
    }
    CHECK_INT(st.succeeded + st.failed, n);
}

static void stop(cwork_pool *p)
{
    cwork_error err = {0};
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
}

/* The value and the TTL (in ms) of a result key, then the key deleted so that the
 * namespace dump is exact. */
static char *take_result(const char *id, long long *pttl)
{
    redisReply *r = tl_cmd(rc_, "GET %s:cwork:result:%s", ns_, id);
    char *v = r->type == REDIS_REPLY_STRING ? strdup(r->str) : NULL;
    freeReplyObject(r);
    r = tl_cmd(rc_, "PTTL %s:cwork:result:%s", ns_, id);
    *pttl = r->integer;
    freeReplyObject(r);
    tl_do(rc_, "DEL %s:cwork:result:%s", ns_, id);
    return v;
}

/* What a stopped pool leaves of a type: its lock at 0, its limit, known_jobs. */
static void check_rest(const char *extra)
{
    char want[4096];
    snprintf(want, sizeof want,
             "%s%s:jobs:report:lock string 0\n"
             "%s:jobs:report:max_concurrency string 0\n"
             "%s:known_jobs set report\n",
             extra, ns_, ns_, ns_);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
}

static void result_written_with_ttl_and_read_back(void)
{
    const int64_t ttl = 3600 * 1000;
    cwork_pool *p = report_pool("results", ttl, 0, 0);
    push_raw("report", JOB("r1"));
    push_raw("report", JOB("n1"));
    push_raw("report", JOB("x1"));
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    wait_counted(p, 3);
    stop(p);
    CHECK_INT(atomic_load(&set_result_rc_), CWORK_EINVAL);

    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    char *out = NULL;
    size_t len = 0;
    CHECK_INT(cwork_client_result(c, "r1", 0, &out, &len, &err), 0);
    CHECK_STR(out, "result of r1");
    CHECK_INT(len, 12);
    cwork_free(out);
    CHECK_INT(cwork_client_result(c, "n1", 0, &out, &len, &err), CWORK_ENOTFOUND);
    CHECK(out == NULL);
    CHECK_INT(cwork_client_result(c, "x1", 0, &out, &len, &err), 0); /* the empty one */
    CHECK_INT(len, 0);
    cwork_free(out);
    CHECK_INT(cwork_client_result(c, "", 0, &out, &len, &err), CWORK_EINVAL);
    CHECK_INT(cwork_client_result(c, "r1", -1, &out, &len, &err), CWORK_EINVAL);
    cwork_client_free(c);

    long long pttl;
    char *v = take_result("r1", &pttl);
    CHECK_STR(v, "result of r1");
    free(v);
    /* Set by the commit a moment ago: at most the TTL, and not a minute less. */
    CHECK(pttl <= ttl && pttl > ttl - 60000);
    v = take_result("x1", &pttl);
    CHECK_STR(v, "");
    free(v);
    CHECK(pttl <= ttl && pttl > ttl - 60000);
    tl_take_stat_days(rc_, ns_, 3, 0);
    check_rest(""); /* no result for n1, nothing kept */
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static void default_ttl_is_a_day(void)
{
    cwork_pool *p = report_pool("results-ttl", 0, 0, 0);
    push_raw("report", JOB("r2"));
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    wait_counted(p, 1);
    stop(p);
    long long pttl;
    char *v = take_result("r2", &pttl);
    CHECK_STR(v, "result of r2");
    free(v);
    CHECK(pttl <= 86400000LL && pttl > 86400000LL - 60000);
    tl_take_stat_days(rc_, ns_, 1, 0);
    check_rest("");
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);

    /* A TTL out of range is refused, naming the option. */
    p = new_pool("results-bad", 1);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.result_ttl_ms = -1;
    CHECK_INT(cwork_pool_register(p, "report", handler, &jo, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "result_ttl_ms") != NULL);
    cwork_pool_free(p);
}

static void retried_job_keeps_its_last_result(void)
{
    cwork_pool *p = report_pool("results-retry", 0, 0, 0);
    /* An earlier result of the id stays through a failed run (a failure writes none). */
    tl_do(rc_, "SET %s:cwork:result:f1 earlier", ns_);
    push_raw("report", JOB("f1"));
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    wait_counted(p, 1);
    redisReply *r = tl_cmd(rc_, "GET %s:cwork:result:f1", ns_);
    CHECK_STR(r->str, "earlier");
    freeReplyObject(r);
    CHECK_INT(wait_for_int(1, 5000, "ZCARD %s:%s", "retry"), 1);
    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    int64_t moved = 0;
    CHECK_INT(cwork_client_run_all_now(c, CWORK_SET_RETRY, "report", &moved, NULL, &err), 0);
    CHECK_INT(moved, 1);
    wait_counted(p, 2);
    stop(p);
    char *out = NULL;
    size_t len = 0;
    CHECK_INT(cwork_client_result(c, "f1", 0, &out, &len, &err), 0);
    CHECK_STR(out, "second");
    cwork_free(out);
    cwork_client_free(c);
    long long pttl;
    free(take_result("f1", &pttl));
    CHECK(pttl > 86400000LL - 60000);
    tl_take_stat_days(rc_, ns_, 2, 1);
    check_rest("");
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static void taken_back_job_writes_nothing(void)
{
    cwork_pool *p = report_pool("results-reaped", 0, 5, 0);
    atomic_store(&release_, 0);
    atomic_store(&blocked_, 0);
    push_raw("report", JOB("b1"));
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    for (long long end = tl_now_ms() + 10000; !atomic_load(&blocked_) && tl_now_ms() < end;)
        tl_sleep_ms(1);
    CHECK(atomic_load(&blocked_));
    /* What a reaper does with a job of a pool it believes dead: back to its queue (which
     * is paused here, so that the job is not fetched again). */
    tl_do(rc_, "SET %s:jobs:report:paused 1", ns_);
    redisReply *r =
        tl_cmd(rc_, "LREM %s:jobs:report:%s:inprogress 1 %s", ns_, cwork_pool_id(p), JOB("b1"));
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);
    push_raw("report", JOB("b1"));
    atomic_store(&release_, 1);
    stop(p);
    cwork_pool_stats st;
    cwork_pool_get_stats(p, &st);
    CHECK_INT(st.succeeded, 0); /* it runs again elsewhere */
    /* No result, nothing kept; the job waits in its queue. The lock went down with the
     * fetch's +1 still on it: a reaper's release is what takes it back. */
    char want[1024];
    snprintf(want, sizeof want,
             "%s:jobs:report list " JOB("b1") "\n"
                                              "%s:jobs:report:lock string 1\n"
                                              "%s:jobs:report:max_concurrency string 0\n"
                                              "%s:jobs:report:paused string 1\n"
                                              "%s:known_jobs set report\n",
             ns_, ns_, ns_, ns_, ns_);
    tl_take_stat_days(rc_, ns_, 0, 0);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* The members of the kept set, as "id@score" in score order, each checked for form. */
static char *kept(void)
{
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:cwork:succeeded:report 0 -1 WITHSCORES", ns_);
    static char out[1024];
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const char *m = r->element[i]->str;
        long long ran_at = 0, took = -1;
        int used = 0;
        CHECK(sscanf(m, "{\"ran_at\":%lld,\"took_us\":%lld,\"job\":%n", &ran_at, &took, &used) ==
              2);
        CHECK(llabs(ran_at - (long long)time(NULL) * 1000) < 600000 && took >= 0 && used > 0);
        const char *job = m + used;
        const char *id = strstr(job, "\"id\":\"");
        CHECK(id != NULL);
        len += (size_t)snprintf(out + len, sizeof out - len, "%.2s@%s ", id + 6,
                                r->element[i + 1]->str);
        char whole[256]; /* the job's bytes as fetched, then the member's closing brace */
        snprintf(whole, sizeof whole,
                 "{\"name\":\"report\",\"id\":\"%.2s\",\"t\":1700000000,"
                 "\"args\":{}}}",
                 id + 6);
        CHECK_STR(job, whole);
    }
    freeReplyObject(r);
    return out;
}

/* Runs one job with the given id to its end and moves the pool's clock by step_ms. */
static void run_one(cwork_pool *p, const char *bytes, uint64_t n, int64_t step_ms)
{
    push_raw("report", bytes);
    wait_counted(p, n);
    cw_clock_advance_ms(step_ms);
}

static void kept_successes_trimmed_by_count(void)
{
    int64_t t0 = clock_start_manual();
    cwork_pool *p = report_pool("kept-count", 0, 3, 0);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    run_one(p, JOB("n1"), 1, 1000);
    run_one(p, JOB("n2"), 2, 1000);
    run_one(p, JOB("n3"), 3, 1000);
    char want[512];
    snprintf(want, sizeof want, "n1@%lld n2@%lld n3@%lld ", (long long)t0, (long long)t0 + 1000,
             (long long)t0 + 2000);
    CHECK_STR(kept(), want);
    run_one(p, JOB("r4"), 4, 1000);
    run_one(p, JOB("n5"), 5, 1000);
    /* Back on the system's clock before the stop: on the manual clock, the maintenance
     * thread can miss the stop's wake-up when it looks while the last commit is between
     * its count and its in_flight update, and would wait for a clock that stands. */
    cw_clock_system();
    stop(p);
    snprintf(want, sizeof want, "n3@%lld r4@%lld n5@%lld ", (long long)t0 + 2000,
             (long long)t0 + 3000, (long long)t0 + 4000);
    CHECK_STR(kept(), want);

    /* Listed newest first with the result of the one that has one. */
    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    cwork_succeeded_job *jobs = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_succeeded(c, NULL, 0, &jobs, &n, &err), 0);
    CHECK_INT(n, 3);
    CHECK_STR(jobs[0].id, "n5");
    CHECK_STR(jobs[1].id, "r4");
    CHECK_STR(jobs[1].name, "report");
    CHECK_STR(jobs[1].result, "result of r4");
    CHECK_STR(jobs[1].job, JOB("r4"));
    CHECK_INT(jobs[1].finished_at_ms, t0 + 3000);
    CHECK(jobs[0].result == NULL);
    CHECK_STR(jobs[2].id, "n3");
    cwork_succeeded_jobs_free(jobs, n);
    CHECK_INT(cwork_client_succeeded(c, "report", 2, &jobs, &n, &err), 0);
    CHECK_INT(n, 2);
    CHECK_STR(jobs[1].id, "r4");
    cwork_succeeded_jobs_free(jobs, n);
    CHECK_INT(cwork_client_succeeded(c, "other", 2, &jobs, &n, &err), 0);
    CHECK_INT(n, 0);
    cwork_client_free(c);

    tl_do(rc_, "DEL %s:cwork:succeeded:report", ns_);
    long long pttl;
    free(take_result("r4", &pttl));
    tl_take_stat_days(rc_, ns_, 5, 0);
    check_rest("");
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static void kept_successes_trimmed_by_age(void)
{
    const int64_t age = 10000;
    int64_t t0 = clock_start_manual();
    cwork_pool *p = report_pool("kept-age", 0, 100, age);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    run_one(p, JOB("n1"), 1, age);
    run_one(p, JOB("n2"), 2, 1); /* n1 is exactly `age` old: kept */
    char want[512];
    snprintf(want, sizeof want, "n1@%lld n2@%lld ", (long long)t0, (long long)t0 + age);
    CHECK_STR(kept(), want);
    run_one(p, JOB("n3"), 3, 0); /* now n1 is older than `age` */
    cw_clock_system();           /* (before the stop: see kept_successes_trimmed_by_count) */
    stop(p);
    snprintf(want, sizeof want, "n2@%lld n3@%lld ", (long long)t0 + age, (long long)t0 + age + 1);
    CHECK_STR(kept(), want);
    tl_do(rc_, "DEL %s:cwork:succeeded:report", ns_);
    tl_take_stat_days(rc_, ns_, 3, 0);
    check_rest("");
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

typedef struct waiter {
    cwork_client *c;
    const char *id;
    int64_t wait_ms;
    int rc;
    char *out;
    atomic_llong returned_ms;
} waiter;

static void *wait_main(void *arg)
{
    waiter *w = arg;
    size_t len = 0;
    cwork_error err = {0};
    w->rc = cwork_client_result(w->c, w->id, w->wait_ms, &w->out, &len, &err);
    atomic_store(&w->returned_ms, tl_now_ms());
    return NULL;
}

static void waiting_reader_returns_at_the_commit(void)
{
    cwork_pool *p = report_pool("results-wait", 0, 0, 0);
    cwork_error err = {0};
    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    CHECK_INT(cwork_pool_start(p, &err), 0);
    /* A reader waiting up to a minute, before the job exists. */
    waiter w = {c, "r3", 60000, -1, NULL, 0};
    pthread_t th;
    CHECK_INT(pthread_create(&th, NULL, wait_main, &w), 0);
    tl_sleep_ms(50); /* (either order is correct: this only makes the wait likely) */
    push_raw("report", JOB("r3"));
    pthread_join(th, NULL);
    CHECK_INT(w.rc, 0);
    CHECK_STR(w.out, "result of r3");
    cwork_free(w.out);
    /* From the handler's return (the commit follows it) to the reader's: far under the
     * minute it would wait, and under the reader's 5 s fallback GET — the message woke
     * it (typically well under a millisecond after the commit). */
    long long latency = atomic_load(&w.returned_ms) - atomic_load(&finished_ms_);
    fprintf(stderr, "result wait latency after the handler returned: %lld ms\n", latency);
    CHECK(latency >= 0 && latency < 4000);

    /* A job without a result: the wait runs out and says so. */
    waiter none = {c, "n9", 300, -1, NULL, 0};
    long long start = tl_now_ms();
    push_raw("report", JOB("n9"));
    wait_main(&none);
    CHECK_INT(none.rc, CWORK_ENOTFOUND);
    CHECK(atomic_load(&none.returned_ms) - start >= 300);
    wait_counted(p, 2);
    stop(p);
    cwork_client_free(c);
    long long pttl;
    free(take_result("r3", &pttl));
    tl_take_stat_days(rc_, ns_, 2, 0);
    check_rest("");
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    RUN(result_written_with_ttl_and_read_back);
    RUN(default_ttl_is_a_day);
    RUN(retried_job_keeps_its_last_result);
    RUN(taken_back_job_writes_nothing);
    RUN(kept_successes_trimmed_by_count);
    RUN(kept_successes_trimmed_by_age);
    RUN(waiting_reader_returns_at_the_commit);
    pool_test_teardown();
    return tl_finish();
}
