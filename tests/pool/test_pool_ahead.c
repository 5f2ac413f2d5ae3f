/* Fetching ahead (docs/POOL.md rule 4, PROTOCOL §5.8) with handlers that take real time:
 *   - on a backlog a pool holds more jobs than it has executors, never more than
 *     executors + ahead_max, and runs every job exactly once;
 *   - when every executor is held by a handler far longer than the average, the jobs
 *     fetched ahead go back to the right end of their queue, the lock and lock_info
 *     count only the running ones, and nothing runs twice once they are released.
 * Bounds are generous (sanitizers, two loaded cores) and come from the tunables: no
 * verdict depends on how fast the machine is. */
#define _GNU_SOURCE
#include "dispatch_policy.h"
#include "pool.h"
#include "pool_testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define MAX_JOBS 4000

static atomic_int runs_[MAX_JOBS]; /* handler runs by job number (the "n" arg) */
static atomic_int done_;
static atomic_bool gate_open_;
static pthread_mutex_t log_mu_ = PTHREAD_MUTEX_INITIALIZER;
static char given_back_[64]; /* the jobs field of the last worker.give_back */

static atomic_int warns_; /* worker.give_back warnings: a write that failed */

static void logger(void *ud, cwork_log_level level, const char *msg, const cwork_log_field *f,
                   size_t n)
{
    (void)ud;
    if (strcmp(msg, "worker.give_back") != 0) return;
    if (level == CWORK_LOG_WARN) atomic_fetch_add(&warns_, 1);
    pthread_mutex_lock(&log_mu_);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(f[i].key, "jobs")) snprintf(given_back_, sizeof given_back_, "%s", f[i].value);
    pthread_mutex_unlock(&log_mu_);
}

static long given_back(void)
{
    pthread_mutex_lock(&log_mu_);
    long n = atol(given_back_);
    pthread_mutex_unlock(&log_mu_);
    return n;
}

/* Runs for the job's "us" arg, or until the gate opens when it is negative (60 s at most). */
static int handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    long long n = cwork_job_arg_int64(job, "n"), us = cwork_job_arg_int64(job, "us");
    if (cwork_job_arg_error(job) || n < 0 || n >= MAX_JOBS) return cwork_job_fail(job, "bad args");
    atomic_fetch_add(&runs_[n], 1);
    if (us < 0)
        for (int i = 0; i < 60000 && !atomic_load(&gate_open_); i++)
            tl_sleep_ms(1);
    else if (us > 0)
        nanosleep(&(struct timespec){0, (long)us * 1000}, NULL);
    atomic_fetch_add(&done_, 1);
    return 0;
}

static void reset(void)
{
    for (int i = 0; i < MAX_JOBS; i++)
        atomic_store(&runs_[i], 0);
    atomic_store(&done_, 0);
    atomic_store(&gate_open_, false);
    atomic_store(&warns_, 0);
    given_back_[0] = 0;
}

/* Jobs first..first+count-1 of type "t", running `us` each (the first `gated` until
 * the gate opens), in one LPUSH: they reach the queue at once and come out in that
 * order. */
static void push_jobs(int first, int count, int us, int gated)
{
    size_t n = (size_t)count + 2;
    const char **argv = calloc(n, sizeof *argv);
    size_t *lens = calloc(n, sizeof *lens);
    char key[128];
    snprintf(key, sizeof key, "%s:jobs:t", ns_);
    argv[0] = "LPUSH", argv[1] = key;
    for (int i = 0; i < count; i++) {
        char *job = malloc(160);
        snprintf(job, 160,
                 "{\"name\":\"t\",\"id\":\"job%d\",\"t\":1,\"args\":{\"n\":%d,\"us\":%d}}",
                 first + i, first + i, i < gated ? -1 : us);
        argv[2 + i] = job;
    }
    for (size_t i = 0; i < n; i++)
        lens[i] = strlen(argv[i]);
    redisReply *r = redisCommandArgv(rc_, (int)n, argv, lens);
    if (!r || r->type != REDIS_REPLY_INTEGER) tl_fail(__FILE__, __LINE__, "LPUSH failed");
    freeReplyObject(r);
    for (size_t i = 2; i < n; i++)
        free((char *)argv[i]);
    free(argv);
    free(lens);
}

static void wait_done(int want, long ms)
{
    for (long long end = tl_now_ms() + ms; atomic_load(&done_) < want && tl_now_ms() < end;)
        tl_sleep_ms(2);
    CHECK_INT(atomic_load(&done_), want);
}

static long long llen(const char *key)
{
    redisReply *r = tl_cmd(rc_, "LLEN %s", key);
    long long n = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    freeReplyObject(r);
    return n;
}

static cwork_pool *pool_with(unsigned concurrency, const cw_pool_tuning *t)
{
    cwork_pool *p = new_pool("ahead", concurrency);
    CHECK_INT(cw_pool_set_tuning(p, t), 0);
    CHECK_INT(cwork_pool_register(p, "t", handler, NULL, NULL), 0);
    cwork_error err = {0};
    if (cwork_pool_start(p, &err) != 0) tl_fail(__FILE__, __LINE__, "start: %s", err.message);
    return p;
}

/* Stops the pool: every job ran once, and only the type's counters are left. */
static void stop_and_check(cwork_pool *p, int n)
{
    for (int i = 0; i < n; i++)
        if (atomic_load(&runs_[i]) != 1)
            tl_fail(__FILE__, __LINE__, "job %d ran %d times", i, atomic_load(&runs_[i]));
    stop_and_check_clean(p, "t", n);
}

static void a_backlog_is_held_ahead_within_the_cap(void)
{
    reset();
    cw_pool_tuning t;
    cw_pool_tuning_init(&t);
    t.ahead_max = 6;
    cwork_pool *p = pool_with(4, &t); /* one dispatcher of four executors */
    char inprogress[160];
    snprintf(inprogress, sizeof inprogress, "%s:jobs:t:%s:inprogress", ns_, cwork_pool_id(p));
    enum { N = 3000 };
    push_jobs(0, N, 200, 0);
    /* While jobs wait, the pool's in-progress list: never more than 4 + 6 entries, and
     * more than 4 at some point (a 200 µs handler against a round trip of loopback and
     * a script: each executor finishes one or more during four round trips). */
    long long most = 0;
    for (long long end = tl_now_ms() + 120000;
         atomic_load(&done_) < N - 100 && tl_now_ms() < end;) {
        long long n = llen(inprogress);
        if (n > most) most = n;
    }
    if (most > 10) tl_fail(__FILE__, __LINE__, "%lld jobs held by 4 executors + 6 ahead", most);
    if (most <= 4) tl_fail(__FILE__, __LINE__, "never more than %lld held: nothing ahead", most);
    wait_done(N, 120000);
    stop_and_check(p, N);
}

static void jobs_fetched_ahead_go_back_when_every_executor_is_held(void)
{
    reset();
    cw_pool_tuning t;
    cw_pool_tuning_init(&t);
    t.ahead_max = 20;
    /* "Far longer" made 400 times the longer of the handlers' average and a round trip
     * (8 by default), so that the fetch ahead has surely happened by then. */
    t.long_run_factor = 400;
    cwork_pool *p = pool_with(2, &t);
    char inprogress[160], queue[128];
    snprintf(inprogress, sizeof inprogress, "%s:jobs:t:%s:inprogress", ns_, cwork_pool_id(p));
    snprintf(queue, sizeof queue, "%s:jobs:t", ns_);
    push_jobs(0, 300, 0, 0); /* the pool learns short handlers and its round trip */
    wait_done(300, 60000);
    cwork_set_logger(logger, NULL, CWORK_LOG_INFO);
    /* Two that hold both executors, then thirty short ones, at once: the fetch of the
     * two finds a backlog, the next takes short ones ahead, which cannot start. */
    push_jobs(300, 32, 0, 2);
    /* They go back: the queue holds the thirty again, in-progress only the two. */
    for (long long end = tl_now_ms() + 60000; !given_back() && tl_now_ms() < end;)
        tl_sleep_ms(5);
    long back = given_back();
    if (back < 1 || back > 20) tl_fail(__FILE__, __LINE__, "%ld jobs given back", back);
    CHECK_INT(wait_for_int(30, 10000, "LLEN %s:jobs:%s", "t"), 30);
    CHECK_INT(llen(inprogress), 2);
    redisReply *r = tl_cmd(rc_, "GET %s:jobs:t:lock", ns_);
    CHECK_STR(r->str, "2");
    freeReplyObject(r);
    r = tl_cmd(rc_, "HGET %s:jobs:t:lock_info %s", ns_, cwork_pool_id(p));
    CHECK_STR(r->str, "2");
    freeReplyObject(r);
    /* The next in line is the first short one (job302, at the queue's right end). */
    r = tl_cmd(rc_, "LINDEX %s -1", queue);
    CHECK(r->str && strstr(r->str, "\"id\":\"job302\""));
    freeReplyObject(r);
    for (int i = 302; i < 332; i++)
        CHECK_INT(atomic_load(&runs_[i]), 0);
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    atomic_store(&gate_open_, true);
    wait_done(332, 60000);
    stop_and_check(p, 332);
}

/* A pool of two executors held by two gated jobs, with short jobs 302–331 behind them
 * in the queue, some of them fetched ahead (polled for): "far longer" is
 * long_run_factor times a round trip, so that the test acts before any give-back. */
static cwork_pool *hold_ahead(unsigned long_run_factor, char *inprogress, size_t size)
{
    reset();
    cw_pool_tuning t;
    cw_pool_tuning_init(&t);
    t.ahead_max = 20;
    t.long_run_factor = long_run_factor;
    cwork_pool *p = pool_with(2, &t);
    snprintf(inprogress, size, "%s:jobs:t:%s:inprogress", ns_, cwork_pool_id(p));
    push_jobs(0, 300, 0, 0);
    wait_done(300, 60000);
    cwork_set_logger(logger, NULL, CWORK_LOG_INFO);
    push_jobs(300, 32, 0, 2);
    long long held = 0;
    for (long long end = tl_now_ms() + 60000; held <= 2 && tl_now_ms() < end; tl_sleep_ms(1))
        held = llen(inprogress);
    if (held <= 2) tl_fail(__FILE__, __LINE__, "nothing fetched ahead (%lld held)", held);
    return p;
}

/* The whole namespace after a run where job `id` was cancelled and the rest ran: 332
 * processed, one failed, that job in dead as cancelled; then only the type's counters. */
static void check_after_cancel(const char *id)
{
    char want_id[48];
    snprintf(want_id, sizeof want_id, "\"id\":\"%s\"", id);
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    CHECK(r->elements == 1 && strstr(r->element[0]->str, want_id) &&
          strstr(r->element[0]->str, "\"err\":\"cancelled\""));
    freeReplyObject(r);
    tl_do(rc_, "DEL %s:dead", ns_);
    tl_take_stat_days(rc_, ns_, 332, 1);
    CHECK_INT(take_failure_histories(), 1); /* its "cancelled" */
    char want[512];
    snprintf(want, sizeof want,
             "%s:jobs:t:lock string 0\n%s:jobs:t:max_concurrency string 0\n"
             "%s:known_jobs set t\n",
             ns_, ns_, ns_);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
}

/* A job held ahead and cancelled is never given back, never runs, and ends in dead —
 * whether the cancel reaches the pool before the give-back (the task is stopped) or
 * during it (the script sees the mark). */
static void a_cancelled_job_held_ahead_never_runs(void)
{
    char inprogress[160];
    cwork_pool *p = hold_ahead(4000, inprogress, sizeof inprogress);
    redisReply *r = tl_cmd(rc_, "LRANGE %s 0 -1", inprogress);
    char id[32] = "";
    for (size_t i = 0; i < r->elements && !id[0]; i++) /* a short one held ahead */
        if (!strstr(r->element[i]->str, "\"us\":-1")) {
            const char *at = strstr(r->element[i]->str, "\"id\":\"job");
            if (at) snprintf(id, sizeof id, "%.6s", at + 6);
        }
    freeReplyObject(r);
    CHECK(id[0] != 0);
    cwork_client *client = cwork_client_new(redis_, ns_, NULL);
    cwork_error err = {0};
    if (cwork_client_cancel(client, id, NULL, &err) != 0)
        tl_fail(__FILE__, __LINE__, "cancel %s: %s", id, err.message);
    cwork_client_free(client);
    for (long long end = tl_now_ms() + 60000; !given_back() && tl_now_ms() < end;)
        tl_sleep_ms(5);
    CHECK(given_back() > 0);
    r = tl_cmd(rc_, "LRANGE %s:jobs:t 0 -1", ns_);
    for (size_t i = 0; i < r->elements; i++)
        CHECK(!strstr(r->element[i]->str, id));
    freeReplyObject(r);
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    atomic_store(&gate_open_, true);
    wait_done(331, 60000);
    CHECK_INT(cwork_pool_stop(p, 10000, &err), 0);
    int n = atoi(id + 3);
    CHECK_INT(atomic_load(&runs_[n]), 0);
    for (int i = 0; i < 332; i++)
        if (i != n && atomic_load(&runs_[i]) != 1)
            tl_fail(__FILE__, __LINE__, "job %d ran %d times", i, atomic_load(&runs_[i]));
    cwork_pool_free(p);
    check_after_cancel(id);
    tl_ns_delete(rc_, ns_);
}

/* A job its queue cannot take (the queue key damaged while jobs are held ahead) stays
 * in progress and runs here: each is offered once, never again (a damaged key stays
 * damaged: no give-back loop), and every job runs exactly once. */
static void jobs_their_queue_cannot_take_run_here_once(void)
{
    char inprogress[160];
    cwork_pool *p = hold_ahead(400, inprogress, sizeof inprogress);
    tl_do(rc_, "DEL %s:jobs:t", ns_);
    tl_do(rc_, "SET %s:jobs:t damaged", ns_);
    for (long long end = tl_now_ms() + 60000; !atomic_load(&warns_) && tl_now_ms() < end;)
        tl_sleep_ms(5);
    int warned = atomic_load(&warns_);
    if (warned < 1 || warned > 20) tl_fail(__FILE__, __LINE__, "%d give-back errors", warned);
    /* Long enough for many more give-backs, were the kept jobs offered again: the long
     * run's time is 400 × the round trip (the pool's, read back from its own polls). */
    long long held = llen(inprogress);
    tl_sleep_ms(500);
    CHECK_INT(atomic_load(&warns_), warned);
    CHECK_INT(llen(inprogress), held);
    tl_do(rc_, "DEL %s:jobs:t", ns_); /* repaired: nothing was in it but this pool's */
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    atomic_store(&gate_open_, true);
    /* The kept ones and the two gated ones run here; the rest never left the queue
     * before it was damaged, and went with the repair. */
    wait_done(300 + (int)held, 60000);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_stop(p, 10000, &err), 0);
    for (int i = 0; i < 332; i++)
        if (atomic_load(&runs_[i]) > 1)
            tl_fail(__FILE__, __LINE__, "job %d ran %d times", i, atomic_load(&runs_[i]));
    cwork_pool_free(p);
    tl_take_stat_days(rc_, ns_, 300 + held, 0);
    char want[512];
    snprintf(want, sizeof want,
             "%s:jobs:t:lock string 0\n%s:jobs:t:max_concurrency string 0\n"
             "%s:known_jobs set t\n",
             ns_, ns_, ns_);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    tl_ns_delete(rc_, ns_);
}

static void *stop_thread(void *arg)
{
    cwork_error err = {0};
    return (void *)(intptr_t)cwork_pool_stop(arg, 60000, &err);
}

/* A stop gives the jobs held ahead back at once while every executor runs (it does not
 * start them, nor leave them to a reaper when the grace runs out). */
static void a_stop_gives_jobs_held_ahead_back_at_once(void)
{
    char inprogress[160];
    cwork_pool *p = hold_ahead(4000, inprogress, sizeof inprogress);
    pthread_t th;
    CHECK_INT(pthread_create(&th, NULL, stop_thread, p), 0);
    CHECK_INT(wait_for_int(30, 30000, "LLEN %s:jobs:%s", "t"), 30);
    CHECK_INT(llen(inprogress), 2);
    for (int i = 302; i < 332; i++)
        CHECK_INT(atomic_load(&runs_[i]), 0);
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    atomic_store(&gate_open_, true);
    void *rc = NULL;
    pthread_join(th, &rc);
    CHECK_INT((int)(intptr_t)rc, 0);
    cwork_pool_free(p);
    tl_take_stat_days(rc_, ns_, 302, 0);
    CHECK_INT(wait_for_int(30, 1000, "LLEN %s:jobs:%s", "t"), 30);
    tl_do(rc_, "DEL %s:jobs:t", ns_);
    char want[512];
    snprintf(want, sizeof want,
             "%s:jobs:t:lock string 0\n%s:jobs:t:max_concurrency string 0\n"
             "%s:known_jobs set t\n",
             ns_, ns_, ns_);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    RUN(a_backlog_is_held_ahead_within_the_cap);
    RUN(jobs_fetched_ahead_go_back_when_every_executor_is_held);
    RUN(a_cancelled_job_held_ahead_never_runs);
    RUN(jobs_their_queue_cannot_take_run_here_once);
    RUN(a_stop_gives_jobs_held_ahead_back_at_once);
    pool_test_teardown();
    return tl_finish();
}
