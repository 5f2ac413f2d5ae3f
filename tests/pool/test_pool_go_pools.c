/* A cwork pool warns about Go pools that defeat a feature it uses (PROTOCOL §20.5,
 * §22.5, §23.6): a Go pool (a heartbeat without cwork's `cwork` field) whose job_names
 * list a type whose jobs store results, a type that keeps its successes, or a type of
 * tracked batches. Each is logged once per Go pool and feature; another cwork pool, or a
 * Go pool of other types, is not reported. (The rate-limit warning is in
 * test_pool_rate_limit.) */
#include "pool_testutil.h"

#include <stdatomic.h>

static atomic_int ran_;

static int with_result(cwork_job *job, void *ctx)
{
    (void)ctx;
    cwork_job_set_result(job, "42", 2);
    atomic_fetch_add(&ran_, 1);
    return 0;
}

static int plain(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    atomic_fetch_add(&ran_, 1);
    return 0;
}

/* Waits until the pool has looked at the heartbeats often enough to warn: every fifth
 * read of the rate-limit setting, one read a second (CW_RATE_LIMIT_REFRESH_MS). */
static int wait_for_log(const char *message, int count)
{
    for (int i = 0; i < 400 && tl_count_logs(message) < count; i++)
        tl_sleep_ms(50);
    return tl_count_logs(message);
}

static void go_pools_running_result_kept_and_batch_types_are_reported(void)
{
    cwork_pool *p = new_pool("gop", 3);
    /* An hour ahead: the pool's own reaper never takes these fakes for dead, however
     * late its look at the heartbeats comes. */
    long long now = (long long)time(NULL) + 3600;
    /* Go pool a runs all three; b is another cwork pool; c is a Go pool of other types. */
    tl_do(rc_,
          "SADD %s:worker_pools aaaa1111aaaa1111aaaa1111 bbbb1111bbbb1111bbbb1111 "
          "cccc1111cccc1111cccc1111",
          ns_);
    tl_do(rc_,
          "HSET %s:worker_pools:aaaa1111aaaa1111aaaa1111 heartbeat_at %lld job_names "
          "bat,kept,other,res",
          ns_, now);
    tl_do(rc_,
          "HSET %s:worker_pools:bbbb1111bbbb1111bbbb1111 heartbeat_at %lld job_names "
          "bat,kept,res cwork 0.2.0",
          ns_, now);
    tl_do(rc_, "HSET %s:worker_pools:cccc1111cccc1111cccc1111 heartbeat_at %lld job_names other",
          ns_, now);

    cwork_job_options kept;
    cwork_job_options_init(&kept);
    kept.keep_succeeded = 10;
    CHECK_INT(cwork_pool_register(p, "res", with_result, NULL, NULL), 0);
    CHECK_INT(cwork_pool_register(p, "kept", plain, &kept, NULL), 0);
    CHECK_INT(cwork_pool_register(p, "bat", plain, NULL, NULL), 0);

    /* One job of each; the batch job is a tracked batch's member. */
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, NULL);
    CHECK_INT(cwork_enqueue(enq, "res", NULL, NULL, NULL), 0);
    char batch_id[25];
    CHECK_INT(cwork_batch_open(enq, CWORK_BATCH_ON_COMPLETE, "res", NULL, batch_id, NULL), 0);
    cwork_batch *b = cwork_batch_new(enq);
    CHECK_INT(cwork_batch_join(b, batch_id, NULL), 0);
    CHECK_INT(cwork_batch_add(b, "bat", NULL, 0, 0, NULL), 0);
    CHECK_INT(cwork_enqueue_batch(b, NULL), 0);
    CHECK_INT(cwork_batch_seal(enq, batch_id, NULL), 0);

    tl_capture_logs();
    atomic_store(&ran_, 0);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    /* res, bat, then the batch's callback (a res job) */
    for (int i = 0; i < 500 && atomic_load(&ran_) < 3; i++)
        tl_sleep_ms(10);
    CHECK_INT(atomic_load(&ran_), 3);

    CHECK_INT(wait_for_log("pool.results.go_pool", 1), 1);
    CHECK_INT(wait_for_log("pool.kept_succeeded.go_pool", 1), 1);
    CHECK_INT(wait_for_log("pool.batch.go_pool", 1), 1);
    const tl_log *l = tl_find_log("pool.results.go_pool");
    CHECK(l && strstr(l->fields, "pool_id=aaaa1111aaaa1111aaaa1111 job_name=res"));
    l = tl_find_log("pool.kept_succeeded.go_pool");
    CHECK(l && strstr(l->fields, "pool_id=aaaa1111aaaa1111aaaa1111 job_name=kept"));
    l = tl_find_log("pool.batch.go_pool");
    CHECK(l && strstr(l->fields, "pool_id=aaaa1111aaaa1111aaaa1111 job_name=bat"));
    /* About one more look at the heartbeats (each ~5 s): no warning repeats. (Under
     * load the look may come later; the check then holds all the more.) */
    tl_sleep_ms(5500);
    CHECK_INT(tl_count_logs("pool.results.go_pool"), 1);
    CHECK_INT(tl_count_logs("pool.kept_succeeded.go_pool"), 1);
    CHECK_INT(tl_count_logs("pool.batch.go_pool"), 1);
    CHECK_INT(tl_count_logs("pool.rate_limit.go_pool"), 0);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    /* (the pool's threads are gone: the record is read without its lock) */
    for (int i = 0; i < tl_nlogs; i++)
        if (strstr(tl_logs[i].message, "go_pool") &&
            (strstr(tl_logs[i].fields, "bbbb1111") || strstr(tl_logs[i].fields, "cccc1111")))
            tl_fail(__FILE__, __LINE__, "%s %s", tl_logs[i].message, tl_logs[i].fields);
    cwork_pool_free(p);
    cwork_batch_free(b);
    cwork_enqueuer_free(enq);
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    RUN(go_pools_running_result_kept_and_batch_types_are_reported);
    pool_test_teardown();
    return tl_finish();
}
