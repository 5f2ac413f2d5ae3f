/* Nothing is lost when Redis dies under a busy pool: a private redis-server with AOF
 * (appendfsync always) is killed with SIGKILL several times while batches are fetched
 * and committed, and restarted. Afterwards every job has run (at least once), and no
 * queue entry, in-progress entry, lock or lock_info field is left behind. Run with no-op
 * handlers (large batches, the dispatcher spinning for them) and with 1 ms handlers
 * (small batches, every executor woken for its job). */
#include "cwork.h"
#include "testlib.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define JOBS 4000
#define KILLS 4

static atomic_int ran_[JOBS];
static atomic_int total_;
static int sleep_ms_;

static int handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    if (sleep_ms_) tl_sleep_ms(sleep_ms_);
    int64_t i = cwork_job_arg_int64(job, "i");
    if (i >= 0 && i < JOBS) atomic_fetch_add(&ran_[i], 1);
    atomic_fetch_add(&total_, 1);
    return 0;
}

/* Counts what the pool reports, to prove the kills hit fetches and commits in flight. */
static atomic_int fetch_errors_, commit_errors_, reclaims_;

static void counting_logger(void *ud, cwork_log_level level, const char *msg,
                            const cwork_log_field *f, size_t n)
{
    (void)ud, (void)level, (void)f, (void)n;
    if (!strcmp(msg, "worker.fetch"))
        atomic_fetch_add(&fetch_errors_, 1);
    else if (!strcmp(msg, "worker.remove_job_from_in_progress.lrem"))
        atomic_fetch_add(&commit_errors_, 1);
    else if (!strcmp(msg, "worker.reclaim"))
        atomic_fetch_add(&reclaims_, 1);
}

static void crash_redis_under_a_busy_pool(int sleep_ms)
{
    sleep_ms_ = sleep_ms;
    for (int i = 0; i < JOBS; i++)
        atomic_store(&ran_[i], 0);
    atomic_store(&total_, 0);
    atomic_store(&fetch_errors_, 0);
    atomic_store(&commit_errors_, 0);
    atomic_store(&reclaims_, 0);
    cwork_set_logger(counting_logger, NULL, CWORK_LOG_DEBUG);
    tl_server s;
    if (tl_server_start(&s, 1) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    const char *url = s.url;
    cwork_redis_options ro;
    cwork_redis_options_init(&ro);
    ro.command_timeout_ms = 2000;
    ro.checkout_timeout_ms = 2000;
    cwork_redis *redis = cwork_redis_new(url, &ro, NULL);
    const char *ns = "durable";
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, ns, NULL);
    cwork_batch *b = cwork_batch_new(enq);
    cwork_args *args = cwork_args_new();
    for (int i = 0; i < JOBS; i++) {
        cwork_args_set_int64(args, "i", i);
        cwork_batch_add(b, i % 2 ? "even" : "odd", args, 0, 0, NULL);
    }
    CHECK_INT(cwork_enqueue_batch(b, NULL), 0);

    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 20;
    cwork_pool *p = cwork_pool_new(redis, ns, &o, NULL);
    cwork_pool_register(p, "odd", handler, NULL, NULL);
    cwork_pool_register(p, "even", handler, NULL, NULL);
    CHECK_INT(cwork_pool_start(p, NULL), 0);

    /* Kill Redis while the pool is busy, at spread-out points of the run. */
    for (int k = 1; k <= KILLS; k++) {
        int target = JOBS * k / (KILLS + 2);
        for (int w = 0; w < 3000 && atomic_load(&total_) < target; w++)
            tl_sleep_ms(1);
        tl_server_stop(&s, SIGKILL);
        tl_sleep_ms(200);
        if (tl_server_restart(&s, 1) != 0) {
            tl_fail(__FILE__, __LINE__, "redis-server did not restart");
            break;
        }
    }
    cwork_error err = {0};
    if (cwork_pool_drain(p, 60000, &err) != 0)
        tl_fail(__FILE__, __LINE__, "drain: %s", err.message);
    CHECK_INT(cwork_pool_stop(p, 10000, &err), 0);

    int missing = 0, twice = 0;
    for (int i = 0; i < JOBS; i++) {
        missing += atomic_load(&ran_[i]) == 0;
        twice += atomic_load(&ran_[i]) > 1;
    }
    printf("  %d jobs, %d runs, %d ran more than once (allowed: at least once), %d never\n", JOBS,
           atomic_load(&total_), twice, missing);
    printf("  fetch errors %d, commit errors %d, reclaims after lost fetch replies %d\n",
           atomic_load(&fetch_errors_), atomic_load(&commit_errors_), atomic_load(&reclaims_));
    CHECK_INT(missing, 0);
    CHECK(atomic_load(&fetch_errors_) + atomic_load(&commit_errors_) > 0);

    /* No trace left: only the locks at 0, max_concurrency and known_jobs. */
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", s.port, tv);
    tl_take_stat_days(c, "durable", atomic_load(&total_), 0);
    char *dump = tl_ns_dump(c, "durable:");
    CHECK_STR(dump, "durable:jobs:even:lock string 0\n"
                    "durable:jobs:even:max_concurrency string 0\n"
                    "durable:jobs:odd:lock string 0\n"
                    "durable:jobs:odd:max_concurrency string 0\n"
                    "durable:known_jobs set even | odd\n");
    free(dump);
    redisFree(c);
    cwork_pool_free(p);
    cwork_args_free(args);
    cwork_batch_free(b);
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
    tl_server_destroy(&s);
}

static void jobs_survive_redis_crashes_during_fetch_and_commit(void)
{
    crash_redis_under_a_busy_pool(0);
}

static void slow_jobs_survive_redis_crashes(void)
{
    crash_redis_under_a_busy_pool(1);
}

int main(void)
{
    RUN(jobs_survive_redis_crashes_during_fetch_and_commit);
    RUN(slow_jobs_survive_redis_crashes);
    return tl_finish();
}
