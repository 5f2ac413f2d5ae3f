/* The worker pool against a real Redis, checked key by key (PROTOCOL §5.1, §5.4–§5.7,
 * §6, §16.5, §16.6, §16.8): jobs written with the bytes a Go enqueuer writes are
 * processed; failures go to retry with Go's backoff, to dead, or are dropped; stray and
 * malformed jobs; unique guards; pause; middleware and contexts; stop. */
#include "pool_testutil.h"

#include <pthread.h>
#include <stdatomic.h>

#define GO_JOB                                                                                     \
    "{\"name\":\"send_email\",\"id\":\"0123456789abcdef01234567\",\"t\":1700000000,"               \
    "\"args\":{\"address\":\"test@example.com\",\"customer_id\":4,\"subject\":\"hello world\"}}"

static atomic_int runs_;
static char seen_address_[128];
static long long seen_customer_;

static pthread_mutex_t seen_mu_ = PTHREAD_MUTEX_INITIALIZER;

static int record_handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&seen_mu_);
    snprintf(seen_address_, sizeof seen_address_, "%s", cwork_job_arg_string(job, "address"));
    seen_customer_ = cwork_job_arg_int64(job, "customer_id");
    pthread_mutex_unlock(&seen_mu_);
    atomic_fetch_add(&runs_, 1);
    return cwork_job_arg_error(job) ? cwork_job_fail(job, "%s", cwork_job_arg_error(job)) : 0;
}

static int failing_handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&runs_, 1);
    return cwork_job_fail(job, "smtp: 550 <rejected>");
}

static void run_until_drained(cwork_pool *p)
{
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    if (cwork_pool_drain(p, 10000, &err) != 0)
        tl_fail(__FILE__, __LINE__, "drain: %s", err.message);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
}

static void go_job_is_processed_and_leaves_go_state(void)
{
    cwork_pool *p = new_pool("pool", 4);
    atomic_store(&runs_, 0);
    CHECK_INT(cwork_pool_register(p, "send_email", record_handler, NULL, NULL), 0);
    push_raw("send_email", GO_JOB);
    run_until_drained(p);
    CHECK_INT(atomic_load(&runs_), 1);
    CHECK_STR(seen_address_, "test@example.com");
    CHECK_INT(seen_customer_, 4);
    cwork_pool_stats st;
    cwork_pool_get_stats(p, &st);
    CHECK_INT(st.fetched, 1);
    CHECK_INT(st.succeeded, 1);
    CHECK_INT(st.in_flight, 0);
    /* What remains is what a stopped Go pool leaves, minus its lock_info field. */
    char want[512];
    snprintf(want, sizeof want,
             "%s:jobs:send_email:lock string 0\n"
             "%s:jobs:send_email:max_concurrency string 0\n"
             "%s:known_jobs set send_email\n",
             ns_, ns_, ns_);
    tl_take_stat_days(rc_, ns_, 1, 0);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* Checks the one member of zset `which`: Go's canonical bytes with the failure
 * recorded, and a score between lo and hi seconds after failed_at. */
static void check_failed_member(const char *which, long long fails, long long lo, long long hi)
{
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:%s 0 -1 WITHSCORES", ns_, which);
    CHECK_INT(r->elements, 2);
    if (r->elements == 2) {
        cwork_job *j = NULL;
        CHECK_INT(cwork_job_decode(r->element[0]->str, r->element[0]->len, &j, NULL), 0);
        long long failed_at = cwork_job_failed_at(j);
        char want[512];
        snprintf(want, sizeof want,
                 "{\"name\":\"send_email\",\"id\":\"0123456789abcdef01234567\",\"t\":1700000000,"
                 "\"args\":{\"address\":\"test@example.com\",\"customer_id\":4,"
                 "\"subject\":\"hello world\"},\"fails\":%lld,"
                 "\"err\":\"smtp: 550 \\u003crejected\\u003e\",\"failed_at\":%lld}",
                 fails, failed_at);
        CHECK_STR(r->element[0]->str, want);
        long long score = atoll(r->element[1]->str);
        if (score < failed_at + lo || score > failed_at + hi)
            tl_fail(__FILE__, __LINE__, "score %lld not in failed_at+[%lld,%lld]", score, lo, hi);
        CHECK(llabs(failed_at - (long long)time(NULL)) <= 5);
        cwork_job_free(j);
    }
    freeReplyObject(r);
}

static void failure_goes_to_retry_with_go_backoff(void)
{
    cwork_pool *p = new_pool("retry", 2);
    CHECK_INT(cwork_pool_register(p, "send_email", failing_handler, NULL, NULL), 0);
    push_raw("send_email", GO_JOB);
    run_until_drained(p);
    /* First failure: 1⁴ + 15 + R × 2 with R in [0, 29]: 16..74 s. */
    check_failed_member("retry", 1, 16, 74);
    cwork_pool_stats st;
    cwork_pool_get_stats(p, &st);
    CHECK_INT(st.failed, 1);
    CHECK_INT(st.retried, 1);
    tl_take_stat_days(rc_, ns_, 1, 1); /* processed counts the failed job too */
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static int64_t fixed_backoff(const cwork_job *job, void *ud)
{
    (void)ud;
    return 1000 + cwork_job_fails(job);
}

static void custom_backoff_and_dead_after_max_fails(void)
{
    cwork_pool *p = new_pool("dead", 2);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.backoff = fixed_backoff;
    CHECK_INT(cwork_pool_register(p, "send_email", failing_handler, &jo, NULL), 0);
    /* A job that already failed twice: this third failure retries after 1003 s. */
    push_raw("send_email",
             "{\"name\":\"send_email\",\"id\":\"0123456789abcdef01234567\",\"t\":1700000000,"
             "\"args\":{\"address\":\"test@example.com\",\"customer_id\":4,\"subject\":\"hello "
             "world\"},\"fails\":2,\"err\":\"old\",\"failed_at\":1700000001}");
    run_until_drained(p);
    check_failed_member("retry", 3, 1003, 1003);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);

    /* max_fails 1: no retry, straight to dead with score now. */
    p = new_pool("dead1", 2);
    jo.max_fails = 1;
    CHECK_INT(cwork_pool_register(p, "send_email", failing_handler, &jo, NULL), 0);
    push_raw("send_email", GO_JOB);
    run_until_drained(p);
    check_failed_member("dead", 1, 0, 0);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static void skip_dead_drops_as_the_fork_and_upstream_do(void)
{
    /* Fork semantics: dropped on the first failure, even with retries left. */
    cwork_pool *p = new_pool("skip", 2);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.skip_dead = true;
    CHECK_INT(cwork_pool_register(p, "send_email", failing_handler, &jo, NULL), 0);
    push_raw("send_email", GO_JOB);
    run_until_drained(p);
    redisReply *r = tl_cmd(rc_, "EXISTS %s:retry %s:dead", ns_, ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);

    /* Upstream's meaning: retried while retries remain, then dropped instead of dead. */
    p = new_pool("skipup", 2);
    jo.skip_dead_after_retries = true;
    CHECK_INT(cwork_pool_register(p, "send_email", failing_handler, &jo, NULL), 0);
    push_raw("send_email", GO_JOB);
    push_raw("send_email",
             "{\"name\":\"send_email\",\"id\":\"x\",\"t\":1,\"args\":null,\"fails\":3}");
    run_until_drained(p);
    r = tl_cmd(rc_, "ZCARD %s:retry", ns_);
    CHECK_INT(r->integer, 1); /* the first job; the one at its 4th failure is gone */
    freeReplyObject(r);
    r = tl_cmd(rc_, "EXISTS %s:dead", ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static void stray_and_malformed_jobs_go_to_dead_and_release_their_lock(void)
{
    cwork_pool *p = new_pool("stray", 2);
    atomic_store(&runs_, 0);
    CHECK_INT(cwork_pool_register(p, "a", record_handler, NULL, NULL), 0);
    push_raw("a", "{\"name\":\"nobody\",\"id\":\"s1\",\"t\":5,\"args\":{}}");
    push_raw("a", "this is not json");
    run_until_drained(p);
    CHECK_INT(atomic_load(&runs_), 0);
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    CHECK_INT(r->elements, 2);
    int stray = 0, malformed = 0;
    for (size_t i = 0; i < r->elements; i++) {
        const char *m = r->element[i]->str;
        if (strstr(m, "\"id\":\"s1\"") && strstr(m, "\"err\":\"stray job: no handler\"") &&
            strstr(m, "\"fails\":1"))
            stray = 1;
        if (strstr(m, "\"name\":\"a\"") && strstr(m, "\"raw_job\":\"this is not json\"") &&
            strstr(m, "not a valid job"))
            malformed = 1;
    }
    CHECK(stray);
    CHECK(malformed);
    freeReplyObject(r);
    /* The lock of the queue the jobs came from (a) is back at 0 (PROTOCOL §16.5, §16.6). */
    r = tl_cmd(rc_, "GET %s:jobs:a:lock", ns_);
    CHECK_STR(r->str, "0");
    freeReplyObject(r);
    r = tl_cmd(rc_, "EXISTS %s:jobs:nobody:lock", ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static atomic_int guard_seen_;

static int unique_handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    /* The guard is gone before the handler runs (PROTOCOL §5.5 item 2). */
    redisContext *c = tl_redis_connect();
    redisReply *r = tl_cmd(c, "EXISTS %s:unique:u:{\"k\":1}\n", ns_);
    atomic_store(&guard_seen_, (int)r->integer);
    freeReplyObject(r);
    redisFree(c);
    (void)job;
    return 0;
}

static void unique_guard_is_deleted_before_the_handler(void)
{
    cwork_pool *p = new_pool("uniq", 2);
    CHECK_INT(cwork_pool_register(p, "u", unique_handler, NULL, NULL), 0);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, NULL);
    cwork_args *args = NULL;
    CHECK_INT(cwork_args_parse("{\"k\":1}", 7, &args, NULL), 0);
    CHECK_INT(cwork_enqueue_unique(enq, "u", args, NULL, NULL), CWORK_OK);
    atomic_store(&guard_seen_, -1);
    run_until_drained(p);
    CHECK_INT(atomic_load(&guard_seen_), 0);
    /* Once processed, the same job can be enqueued again. */
    CHECK_INT(cwork_enqueue_unique(enq, "u", args, NULL, NULL), CWORK_OK);
    cwork_args_free(args);
    cwork_enqueuer_free(enq);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static void paused_queue_is_not_fetched_and_others_are(void)
{
    cwork_pool *p = new_pool("pause", 2);
    atomic_store(&runs_, 0);
    cwork_job_options hi;
    cwork_job_options_init(&hi);
    hi.priority = 100000; /* drawn first almost always: the draw must fall through */
    CHECK_INT(cwork_pool_register(p, "paused", record_handler, &hi, NULL), 0);
    CHECK_INT(cwork_pool_register(p, "send_email", record_handler, NULL, NULL), 0);
    freeReplyObject(tl_cmd(rc_, "SET %s:jobs:paused:paused 0", ns_)); /* any value pauses */
    push_raw("paused", GO_JOB);
    push_raw("send_email", GO_JOB);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    CHECK_INT(wait_for_int(0, 5000, "LLEN %s:jobs:%s", "send_email"), 0);
    tl_sleep_ms(300);
    CHECK_INT(wait_for_int(1, 0, "LLEN %s:jobs:%s", "paused"), 1);
    freeReplyObject(tl_cmd(rc_, "DEL %s:jobs:paused:paused", ns_));
    CHECK_INT(wait_for_int(0, 5000, "LLEN %s:jobs:%s", "paused"), 0);
    CHECK_INT(cwork_pool_drain(p, 5000, NULL), 0);
    CHECK_INT(atomic_load(&runs_), 2);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* ---- middleware and contexts */

typedef struct {
    int magic;
    char trail[64];
} test_ctx;

static atomic_int ctx_freed_;
static char trail_[64];

static int ctx_init(void *ctx, void *ud)
{
    test_ctx *c = ctx;
    CHECK(c->magic == 0); /* zeroed */
    c->magic = *(int *)ud;
    return 0;
}

static void ctx_free(void *ctx, void *ud)
{
    (void)ctx, (void)ud;
    atomic_fetch_add(&ctx_freed_, 1);
}

static int mw_outer(cwork_job *job, void *ctx, cwork_next *next)
{
    (void)job;
    strcat(((test_ctx *)ctx)->trail, "outer>");
    int rc = cwork_next_call(next);
    strcat(((test_ctx *)ctx)->trail, "<outer");
    snprintf(trail_, sizeof trail_, "%s", ((test_ctx *)ctx)->trail);
    return rc;
}

static int mw_inner(cwork_job *job, void *ctx, cwork_next *next)
{
    (void)job;
    strcat(((test_ctx *)ctx)->trail, "inner>");
    return cwork_next_call(next);
}

static int ctx_handler(cwork_job *job, void *ctx)
{
    test_ctx *c = ctx;
    strcat(c->trail, c->magic == 42 ? "handler" : "bad-ctx");
    CHECK(*(int *)cwork_job_userdata(job) == 42);
    CHECK(cwork_job_timeout_at_ms(job) > 0);
    cwork_job_checkin(job, "working");
    return 0;
}

static void middleware_order_and_per_job_context(void)
{
    tl_unique_ns("mw", ns_, sizeof ns_);
    static int magic = 42;
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 2;
    o.context_size = sizeof(test_ctx);
    o.context_init = ctx_init;
    o.context_free = ctx_free;
    o.userdata = &magic;
    cwork_pool *p = cwork_pool_new(redis_, ns_, &o, NULL);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.timeout_ms = 60000;
    CHECK_INT(cwork_pool_use(p, mw_outer, NULL), 0);
    CHECK_INT(cwork_pool_use(p, mw_inner, NULL), 0);
    CHECK_INT(cwork_pool_register(p, "send_email", ctx_handler, &jo, NULL), 0);
    atomic_store(&ctx_freed_, 0);
    push_raw("send_email", GO_JOB);
    run_until_drained(p);
    CHECK_STR(trail_, "outer>inner>handler<outer");
    CHECK_INT(atomic_load(&ctx_freed_), 1);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static int skipping_mw(cwork_job *job, void *ctx, cwork_next *next)
{
    (void)ctx, (void)next;
    return cwork_job_fail(job, "blocked by middleware");
}

static void middleware_can_stop_the_chain(void)
{
    cwork_pool *p = new_pool("mwskip", 2);
    atomic_store(&runs_, 0);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.max_fails = 1;
    CHECK_INT(cwork_pool_use(p, skipping_mw, NULL), 0);
    CHECK_INT(cwork_pool_register(p, "send_email", record_handler, &jo, NULL), 0);
    push_raw("send_email", GO_JOB);
    run_until_drained(p);
    CHECK_INT(atomic_load(&runs_), 0);
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    CHECK(r->elements == 1 && strstr(r->element[0]->str, "blocked by middleware"));
    freeReplyObject(r);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* ---- heartbeat before the first fetch, and stop with jobs in flight */

static atomic_int release_;

static int slow_handler(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    atomic_fetch_add(&runs_, 1);
    while (!atomic_load(&release_))
        tl_sleep_ms(5);
    return 0;
}

static void stop_with_jobs_in_flight_leaves_them_to_the_reaper(void)
{
    cwork_pool *p = new_pool("stop", 2);
    atomic_store(&runs_, 0);
    atomic_store(&release_, 0);
    CHECK_INT(cwork_pool_register(p, "send_email", slow_handler, NULL, NULL), 0);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    /* Heartbeat written before anything was fetched (PROTOCOL §16.8). */
    CHECK_INT(wait_for_int(1, 0, "SISMEMBER %s:worker_pools %s", cwork_pool_id(p)), 1);
    push_raw("send_email", GO_JOB);
    for (int i = 0; i < 500 && atomic_load(&runs_) == 0; i++)
        tl_sleep_ms(10);
    CHECK_INT(atomic_load(&runs_), 1);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_stop(p, 100, &err), CWORK_ETIMEOUT);
    /* The traces a reaper needs are still there. */
    char key[256];
    snprintf(key, sizeof key, "%s:jobs:send_email:%s:inprogress", ns_, cwork_pool_id(p));
    redisReply *r = tl_cmd(rc_, "LRANGE %s 0 -1", key);
    CHECK(r->elements == 1 && strcmp(r->element[0]->str, GO_JOB) == 0);
    freeReplyObject(r);
    CHECK_INT(wait_for_int(1, 0, "SISMEMBER %s:worker_pools %s", cwork_pool_id(p)), 1);
    r = tl_cmd(rc_, "GET %s:jobs:send_email:lock", ns_);
    CHECK_STR(r->str, "1");
    freeReplyObject(r);
    /* Once the handler returns, a later stop completes and cleans up. */
    atomic_store(&release_, 1);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    r = tl_cmd(rc_, "EXISTS %s %s:worker_pools %s:jobs:send_email:lock_info", key, ns_, ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static void single_fetch_path_processes_everything(void)
{
    tl_unique_ns("single", ns_, sizeof ns_);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 5;
    o.single_fetch = true;
    cwork_pool *p = cwork_pool_new(redis_, ns_, &o, NULL);
    atomic_store(&runs_, 0);
    CHECK_INT(cwork_pool_register(p, "send_email", record_handler, NULL, NULL), 0);
    CHECK_INT(cwork_pool_register(p, "other", record_handler, NULL, NULL), 0);
    for (int i = 0; i < 50; i++)
        push_raw(i % 2 ? "send_email" : "other", GO_JOB);
    run_until_drained(p);
    CHECK_INT(atomic_load(&runs_), 50);
    char want[512];
    snprintf(want, sizeof want,
             "%s:jobs:other:lock string 0\n%s:jobs:other:max_concurrency string 0\n"
             "%s:jobs:send_email:lock string 0\n%s:jobs:send_email:max_concurrency string 0\n"
             "%s:known_jobs set other | send_email\n",
             ns_, ns_, ns_, ns_, ns_);
    tl_take_stat_days(rc_, ns_, 50, 0);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    RUN(go_job_is_processed_and_leaves_go_state);
    RUN(failure_goes_to_retry_with_go_backoff);
    RUN(custom_backoff_and_dead_after_max_fails);
    RUN(skip_dead_drops_as_the_fork_and_upstream_do);
    RUN(stray_and_malformed_jobs_go_to_dead_and_release_their_lock);
    RUN(unique_guard_is_deleted_before_the_handler);
    RUN(paused_queue_is_not_fetched_and_others_are);
    RUN(middleware_order_and_per_job_context);
    RUN(middleware_can_stop_the_chain);
    RUN(stop_with_jobs_in_flight_leaves_them_to_the_reaper);
    RUN(single_fetch_path_processes_everything);
    pool_test_teardown();
    return tl_finish();
}
