/* Server-side surprises a pool and an enqueuer must shrug off, each on a private
 * redis-server: scripts flushed under a running pool (SCRIPT FLUSH, a restart behind a
 * proxy), and an ACL that refuses PUBLISH (the wake-up is optional; the job is not). */
#include "cwork.h"
#include "testlib.h"

#include <stdatomic.h>
#include <stdlib.h>

static atomic_int runs_;

static int count(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    atomic_fetch_add(&runs_, 1);
    return 0;
}

static int wait_runs(int want)
{
    for (int i = 0; i < 500 && atomic_load(&runs_) < want; i++)
        tl_sleep_ms(10);
    return atomic_load(&runs_);
}

static void pool_keeps_working_after_script_flush(void)
{
    tl_server s;
    if (tl_server_start(&s, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    const char *url = s.url;
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", s.port, tv);
    cwork_redis *redis = cwork_redis_new(url, NULL, NULL);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, "flush", NULL);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 20; /* two dispatchers */
    cwork_pool *p = cwork_pool_new(redis, "flush", &o, NULL);
    cwork_pool_register(p, "j", count, NULL, NULL);
    atomic_store(&runs_, 0);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    CHECK_INT(cwork_enqueue(enq, "j", NULL, NULL, NULL), 0);
    CHECK_INT(wait_runs(1), 1);
    for (int round = 0; round < 3; round++) {
        freeReplyObject(tl_cmd(c, "SCRIPT FLUSH"));
        CHECK_INT(cwork_enqueue(enq, "j", NULL, NULL, NULL), 0);
        CHECK_INT(cwork_enqueue_unique(enq, "j", NULL, NULL, NULL), 0); /* a script too */
        CHECK_INT(wait_runs(3 + 2 * round), 3 + 2 * round);
    }
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    redisReply *r = tl_cmd(c, "EXISTS flush:jobs:j");
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    cwork_pool_free(p);
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
    redisFree(c);
    tl_server_destroy(&s);
}

static void enqueue_succeeds_when_publish_is_refused(void)
{
    tl_server s;
    if (tl_server_start(&s, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", s.port, tv);
    freeReplyObject(tl_cmd(c, "ACL SETUSER nopub on >pw ~* &* +@all -publish"));
    char url[96];
    snprintf(url, sizeof url, "redis://nopub:pw@127.0.0.1:%d", s.port);
    cwork_redis *redis = cwork_redis_new(url, NULL, NULL);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, "nopub", NULL);
    cwork_error err = {0};
    CHECK_INT(cwork_enqueue(enq, "j", NULL, NULL, &err), 0); /* with SADD (MULTI) */
    CHECK_INT(cwork_enqueue(enq, "j", NULL, NULL, &err), 0); /* cached: plain LPUSH */
    CHECK_INT(cwork_enqueue_unique(enq, "u", NULL, NULL, &err), 0);
    cwork_batch *b = cwork_batch_new(enq);
    cwork_batch_add(b, "j", NULL, 0, 0, NULL);
    CHECK_INT(cwork_enqueue_batch(b, &err), 0);
    cwork_batch_free(b);
    redisReply *r = tl_cmd(c, "LLEN nopub:jobs:j");
    CHECK_INT(r->integer, 3);
    freeReplyObject(r);
    r = tl_cmd(c, "LLEN nopub:jobs:u");
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
    redisFree(c);
    tl_server_destroy(&s);
}

/* A pool frozen past the dead time while a job ran: a reaper gives the job back to its
 * queue (as reaper_requeue.lua does: out of in-progress, lock and lock_info down by one)
 * and it runs again. When the first run finishes, its commit finds nothing to remove:
 * that run is not counted as processed (the second is), and the pool says why. */
static atomic_int release_;

static int first_run_waits(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    if (atomic_fetch_add(&runs_, 1) == 0)
        while (!atomic_load(&release_))
            tl_sleep_ms(5);
    return 0;
}

static void a_job_a_reaper_took_back_is_not_counted_twice(void)
{
    char ns[64];
    tl_unique_ns("taken", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    cwork_redis *redis = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, ns, NULL);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 2;
    cwork_pool *p = cwork_pool_new(redis, ns, &o, NULL);
    cwork_pool_register(p, "j", first_run_waits, NULL, NULL);
    atomic_store(&runs_, 0);
    atomic_store(&release_, 0);
    tl_capture_logs();
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    CHECK_INT(cwork_enqueue(enq, "j", NULL, NULL, NULL), 0);
    CHECK_INT(wait_runs(1), 1);

    char inprogress[160];
    snprintf(inprogress, sizeof inprogress, "%s:jobs:j:%s:inprogress", ns, cwork_pool_id(p));
    redisReply *r = tl_cmd(c, "RPOPLPUSH %s %s:jobs:j", inprogress, ns);
    CHECK(r->type == REDIS_REPLY_STRING);
    freeReplyObject(r);
    tl_do(c, "DECR %s:jobs:j:lock", ns);
    tl_do(c, "HINCRBY %s:jobs:j:lock_info %s -1", ns, cwork_pool_id(p));
    CHECK_INT(wait_runs(2), 2); /* run again by the other executor */
    atomic_store(&release_, 1);
    cwork_pool_stats st = {0};
    for (int i = 0; i < 500 && (cwork_pool_get_stats(p, &st), st.in_flight); i++)
        tl_sleep_ms(10);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    cwork_pool_get_stats(p, &st);
    CHECK_INT((long long)st.fetched, 2);
    CHECK_INT((long long)st.succeeded, 1);
    CHECK_INT(tl_count_logs("worker.commit.taken_back"), 1);
    tl_take_stat_days(c, ns, 1, 0);
    char *dump = tl_ns_dump(c, ns);
    char want[512]; /* a clean stop leaves no lock_info field of its own */
    snprintf(want, sizeof want,
             "%s:jobs:j:lock string 0\n"
             "%s:jobs:j:max_concurrency string 0\n"
             "%s:known_jobs set j\n",
             ns, ns, ns);
    CHECK_STR(dump, want);
    free(dump);
    cwork_pool_free(p);
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
    tl_ns_delete(c, ns);
    redisFree(c);
}

/* A commit whose LREM fails (the in-progress list damaged while the job ran: a string
 * now) did not meet a reaper: the pool says the commit could not write, names the key
 * and Redis' error, and does not claim a reaper gave the job back. */
static void a_commit_that_cannot_write_says_so(void)
{
    char ns[64];
    tl_unique_ns("unwritten", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    cwork_redis *redis = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, ns, NULL);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 1;
    cwork_pool *p = cwork_pool_new(redis, ns, &o, NULL);
    cwork_pool_register(p, "j", first_run_waits, NULL, NULL);
    atomic_store(&runs_, 0);
    atomic_store(&release_, 0);
    tl_capture_logs();
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    CHECK_INT(cwork_enqueue(enq, "j", NULL, NULL, NULL), 0);
    CHECK_INT(wait_runs(1), 1);
    char inprogress[160];
    snprintf(inprogress, sizeof inprogress, "%s:jobs:j:%s:inprogress", ns, cwork_pool_id(p));
    tl_do(c, "RENAME %s %s:kept", inprogress, ns);
    tl_do(c, "SET %s damaged", inprogress);
    atomic_store(&release_, 1);
    for (int i = 0; i < 1000 && !tl_find_log("worker.commit.not_written"); i++)
        tl_sleep_ms(10);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    cwork_pool_stats st = {0};
    cwork_pool_get_stats(p, &st);
    CHECK_INT((long long)st.succeeded, 0);
    CHECK_INT(tl_count_logs("worker.commit.taken_back"), 0);
    const tl_log *l = tl_find_log("worker.commit.not_written");
    CHECK(l != NULL);
    if (l && (!strstr(l->fields, inprogress) || !strstr(l->fields, "WRONGTYPE")))
        tl_fail(__FILE__, __LINE__, "fields: %s", l->fields);
    cwork_pool_free(p);
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
    tl_ns_delete(c, ns);
    redisFree(c);
}

int main(void)
{
    RUN(pool_keeps_working_after_script_flush);
    RUN(a_job_a_reaper_took_back_is_not_counted_twice);
    RUN(a_commit_that_cannot_write_says_so);
    RUN(enqueue_succeeds_when_publish_is_refused);
    return tl_finish();
}
