/* The pool under handlers that take real time: no fetched job waits while an executor
 * is idle. Each case runs a pool on a backlog or a mix and records, per job, when its
 * handler started and ended, and how many handlers ran at once:
 *   - a cold pool on a backlog of slow jobs runs them all at once;
 *   - a pool warmed up by thousands of no-op jobs does too (its estimate of handler
 *     time says "fast" when the slow ones arrive);
 *   - fast jobs fetched together with slow ones are not held behind them;
 *   - a pool of several shards runs as many slow jobs at once as it has executors;
 *   - `cwork work` runs a backlog of `sleep` commands at once.
 * Bounds are generous (sanitizers, two loaded cores): the faults they catch are whole
 * handler durations late, not milliseconds. */
#define _GNU_SOURCE
#include "pool_testutil.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_JOBS 4000

/* What the handlers saw: start and end times by job number (the "n" arg). */
static _Atomic long long start_ms_[MAX_JOBS], end_ms_[MAX_JOBS];
static atomic_int running_, max_running_, done_;

static void reset_record(void)
{
    for (int i = 0; i < MAX_JOBS; i++)
        atomic_store(&start_ms_[i], 0), atomic_store(&end_ms_[i], 0);
    atomic_store(&running_, 0);
    atomic_store(&max_running_, 0);
    atomic_store(&done_, 0);
}

/* Sleeps for the job's "ms" arg and records its run under its "n" arg. */
static int timed_handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    long long n = cwork_job_arg_int64(job, "n"), ms = cwork_job_arg_int64(job, "ms");
    if (cwork_job_arg_error(job) || n < 0 || n >= MAX_JOBS) return cwork_job_fail(job, "bad args");
    atomic_store(&start_ms_[n], tl_now_ms());
    int now = atomic_fetch_add(&running_, 1) + 1;
    for (int m = atomic_load(&max_running_); now > m;)
        if (atomic_compare_exchange_weak(&max_running_, &m, now)) break;
    if (ms > 0) tl_sleep_ms(ms);
    atomic_fetch_sub(&running_, 1);
    atomic_store(&end_ms_[n], tl_now_ms());
    atomic_fetch_add(&done_, 1);
    return 0;
}

/* Pushes jobs first..first+count-1 of type name, sleeping ms each, in one pipeline;
 * they come out of the queue in that order. */
static void push_jobs(const char *name, int first, int count, int ms)
{
    for (int i = first; i < first + count; i++)
        redisAppendCommand(rc_,
                           "LPUSH %s:jobs:%s {\"name\":\"%s\",\"id\":\"job%d\",\"t\":1,"
                           "\"args\":{\"ms\":%d,\"n\":%d}}",
                           ns_, name, name, i, ms, i);
    for (int i = 0; i < count; i++) {
        redisReply *r = NULL;
        if (redisGetReply(rc_, (void **)&r) != REDIS_OK) {
            fprintf(stderr, "redis I/O error\n");
            exit(1);
        }
        freeReplyObject(r);
    }
}

static void wait_done(int want, long ms)
{
    long long end = tl_now_ms() + ms;
    while (atomic_load(&done_) < want && tl_now_ms() < end)
        tl_sleep_ms(5);
    CHECK_INT(atomic_load(&done_), want);
}

/* Latest minus earliest start of jobs first..first+count-1. */
static long long start_spread(int first, int count)
{
    long long lo = 0, hi = 0;
    for (int i = first; i < first + count; i++) {
        long long s = atomic_load(&start_ms_[i]);
        if (!lo || s < lo) lo = s;
        if (s > hi) hi = s;
    }
    return hi - lo;
}

static cwork_pool *started_pool(const char *tag, unsigned concurrency)
{
    cwork_pool *p = new_pool(tag, concurrency);
    CHECK_INT(cwork_pool_register(p, "timed", timed_handler, NULL, NULL), 0);
    return p;
}

static void start(cwork_pool *p)
{
    cwork_error err = {0};
    if (cwork_pool_start(p, &err) != 0) tl_fail(__FILE__, __LINE__, "start: %s", err.message);
}

/* Stops the pool and checks that it left only the type's counters behind, and n jobs
 * processed in the daily stats. */
static void stop_and_check(cwork_pool *p, int n)
{
    stop_and_check_clean(p, "timed", n);
}

static void cold_pool_runs_a_backlog_of_slow_jobs_at_once(void)
{
    reset_record();
    cwork_pool *p = started_pool("cold", 8);
    push_jobs("timed", 0, 8, 1000);
    start(p);
    wait_done(8, 20000);
    CHECK_INT(atomic_load(&max_running_), 8);
    long long spread = start_spread(0, 8);
    if (spread > 500) tl_fail(__FILE__, __LINE__, "8 slow jobs started over %lld ms", spread);
    stop_and_check(p, 8);
}

static void warm_pool_runs_slow_jobs_at_once(void)
{
    reset_record();
    cwork_pool *p = started_pool("warm", 10);
    start(p);
    push_jobs("timed", 0, 3000, 0); /* the pool learns that handlers are quick */
    wait_done(3000, 60000);
    atomic_store(&max_running_, 0);
    push_jobs("timed", 3000, 10, 1000);
    wait_done(3010, 20000);
    CHECK_INT(atomic_load(&max_running_), 10);
    long long spread = start_spread(3000, 10);
    if (spread > 500) tl_fail(__FILE__, __LINE__, "10 slow jobs started over %lld ms", spread);
    stop_and_check(p, 3010);
}

static void fast_jobs_are_not_held_behind_slow_ones(void)
{
    reset_record();
    cwork_pool *p = started_pool("mixed", 8);
    push_jobs("timed", 0, 3, 3000); /* out first: the first batch holds all three */
    push_jobs("timed", 3, 300, 1);
    start(p);
    wait_done(303, 30000);
    /* 300 × 1 ms on the five other executors takes well under a second; before, they
     * waited behind the slow ones (the last started 20 s after the first). */
    long long first_slow_end = 0, last_fast_end = 0;
    for (int i = 0; i < 3; i++) {
        long long e = atomic_load(&end_ms_[i]);
        if (!first_slow_end || e < first_slow_end) first_slow_end = e;
    }
    for (int i = 3; i < 303; i++)
        if (atomic_load(&end_ms_[i]) > last_fast_end) last_fast_end = atomic_load(&end_ms_[i]);
    if (last_fast_end > first_slow_end)
        tl_fail(__FILE__, __LINE__, "the last fast job ended %lld ms after the first slow one",
                last_fast_end - first_slow_end);
    if (start_spread(0, 3) > 500)
        tl_fail(__FILE__, __LINE__, "the slow jobs started over %lld ms", start_spread(0, 3));
    stop_and_check(p, 303);
}

static void several_shards_run_slow_jobs_at_once(void)
{
    reset_record();
    cwork_pool *p = started_pool("shards", 40); /* four dispatchers of ten executors */
    push_jobs("timed", 0, 40, 1500);
    start(p);
    wait_done(40, 30000);
    CHECK_INT(atomic_load(&max_running_), 40);
    long long spread = start_spread(0, 40);
    if (spread > 800) tl_fail(__FILE__, __LINE__, "40 slow jobs started over %lld ms", spread);
    stop_and_check(p, 40);
}

/* `cwork work --concurrency 8` on 8 waiting jobs whose command records its start and
 * then waits (up to 30 s) until all eight have started: all eight run together, every
 * start before the first end (before the fix: one after the other, 2 s apart). A pool
 * that ran them one by one would end the first only after its 30 s, however loaded
 * the machine: the verdict does not depend on how fast the commands are forked. */
static void cwork_work_runs_a_backlog_at_once(void)
{
    const char *cli = getenv("CWORK_CLI");
    if (!cli) tl_fail(__FILE__, __LINE__, "CWORK_CLI is not set (ctest sets it)");
    tl_unique_ns("work", ns_, sizeof ns_);
    char dir[] = "/tmp/cwt-workloads-XXXXXX";
    if (!mkdtemp(dir)) tl_fail(__FILE__, __LINE__, "mkdtemp");
    for (int i = 0; i < 8; i++)
        tl_do(rc_, "LPUSH %s:jobs:s {\"name\":\"s\",\"id\":\"j%d\",\"t\":1,\"args\":{}}", ns_, i);
    char job[768];
    snprintf(job, sizeof job,
             "s=date +%%s%%N >> %s/starts; i=0; "
             "while [ $(wc -l < %s/starts) -lt 8 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); "
             "done; date +%%s%%N >> %s/ends",
             dir, dir, dir);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0), dup2(null, 1), dup2(null, 2);
        execl(cli, cli, "work", "--redis", tl_redis_url(), "--ns", ns_, "--concurrency", "8",
              "--no-progress", "--job", job, (char *)NULL);
        _exit(127);
    }
    char ends[256], starts[256];
    snprintf(ends, sizeof ends, "%s/ends", dir);
    snprintf(starts, sizeof starts, "%s/starts", dir);
    long long first_end = 0, last_start = 0;
    int nstarts = 0, nends = 0;
    for (long long end = tl_now_ms() + 120000; tl_now_ms() < end && nends < 8; tl_sleep_ms(50)) {
        char *e = tl_read_file(ends, NULL);
        nends = 0;
        for (char *line = e; line && *line; nends++) {
            long long ms = strtoll(line, &line, 10) / 1000000;
            first_end = !first_end || ms < first_end ? ms : first_end;
            while (*line == '\n')
                line++;
        }
        free(e);
    }
    CHECK_INT(nends, 8);
    char *s = tl_read_file(starts, NULL);
    for (char *line = s; line && *line; nstarts++) {
        long long ms = strtoll(line, &line, 10) / 1000000;
        last_start = ms > last_start ? ms : last_start;
        while (*line == '\n')
            line++;
    }
    free(s);
    CHECK_INT(nstarts, 8);
    if (last_start >= first_end)
        tl_fail(__FILE__, __LINE__, "the last command started %lld ms after the first ended",
                last_start - first_end);
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
    CHECK_INT(wait_for_int(0, 1000, "LLEN %s:jobs:%s", "s"), 0);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    RUN(cold_pool_runs_a_backlog_of_slow_jobs_at_once);
    RUN(warm_pool_runs_slow_jobs_at_once);
    RUN(fast_jobs_are_not_held_behind_slow_ones);
    RUN(several_shards_run_slow_jobs_at_once);
    RUN(cwork_work_runs_a_backlog_at_once);
    pool_test_teardown();
    return tl_finish();
}
