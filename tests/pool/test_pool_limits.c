/* Queue selection and limits: the priority distribution (chi-square over 10,000
 * fetches), max concurrency across two processes, and a lock held by a Go pool. */
#include "pool_testutil.h"

#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- priorities */

#define DRAWS 10000
static atomic_int counted_;
static atomic_int per_queue_[3];

static int count_handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    if (atomic_fetch_add(&counted_, 1) < DRAWS) {
        const char *n = cwork_job_name(job);
        atomic_fetch_add(&per_queue_[strcmp(n, "p1") == 0 ? 0 : strcmp(n, "p10") == 0 ? 1 : 2], 1);
    }
    return 0;
}

static void priority_distribution_follows_weights(void)
{
    cwork_pool *p = new_pool("prio", 4);
    const char *names[] = {"p1", "p10", "p100", "empty"};
    unsigned prio[] = {1, 10, 100, 50};
    for (int i = 0; i < 4; i++) {
        cwork_job_options jo;
        cwork_job_options_init(&jo);
        jo.priority = prio[i];
        CHECK_INT(cwork_pool_register(p, names[i], count_handler, &jo, NULL), 0);
    }
    /* Enough jobs everywhere that no queue runs dry within the counted draws (the
     * "empty" queue stays empty: its draws fall through to the next in order). */
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, NULL);
    cwork_batch *b = cwork_batch_new(enq);
    for (int q = 0; q < 3; q++)
        for (int i = 0; i < DRAWS + 200; i++) {
            cwork_batch_add(b, names[q], NULL, 0, 0, NULL);
            if (cwork_batch_count(b) == 1000) {
                CHECK_INT(cwork_enqueue_batch(b, NULL), 0);
                cwork_batch_reset(b);
            }
        }
    CHECK_INT(cwork_enqueue_batch(b, NULL), 0);
    cwork_batch_free(b);
    cwork_enqueuer_free(enq);
    atomic_store(&counted_, 0);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    for (int i = 0; i < 6000 && atomic_load(&counted_) < DRAWS; i++)
        tl_sleep_ms(10);
    CHECK_INT(cwork_pool_stop(p, 10000, NULL), 0);
    CHECK(atomic_load(&counted_) >= DRAWS);
    /* With every queue non-empty, a draw's first queue is i with probability p_i/111
     * (the empty queue's weight passes to whichever follows it in the draw's order:
     * total weight of non-empty queues is what matters for the first non-empty pick). */
    double total = 111.0, chi2 = 0;
    for (int q = 0; q < 3; q++) {
        double expected = DRAWS * prio[q] / total;
        double d = atomic_load(&per_queue_[q]) - expected;
        chi2 += d * d / expected;
    }
    printf("  counts p1=%d p10=%d p100=%d chi2=%.2f\n", atomic_load(&per_queue_[0]),
           atomic_load(&per_queue_[1]), atomic_load(&per_queue_[2]), chi2);
    /* Two degrees of freedom: P(chi2 > 18.42) = 0.0001 for a correct sampler. */
    CHECK(chi2 < 18.42);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* ---- max concurrency */

/* Handlers note how many run at once in Redis, so that two processes can be watched
 * together: running is INCR'd on entry and DECR'd on exit, peak keeps the maximum. */
static const char overlap_script[] =
    "local v = redis.call('INCR', KEYS[1]) "
    "if v > tonumber(redis.call('GET', KEYS[2]) or '0') then redis.call('SET', KEYS[2], v) end "
    "return v";

static int overlap_handler(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    redisContext *c = tl_redis_connect();
    char running[128], peak[128], done[128];
    snprintf(running, sizeof running, "%s:probe:running", ns_);
    snprintf(peak, sizeof peak, "%s:probe:peak", ns_);
    snprintf(done, sizeof done, "%s:probe:done", ns_);
    freeReplyObject(tl_cmd(c, "EVAL %s 2 %s %s", overlap_script, running, peak));
    tl_sleep_ms(3);
    freeReplyObject(tl_cmd(c, "DECR %s", running));
    freeReplyObject(tl_cmd(c, "INCR %s", done));
    redisFree(c);
    return 0;
}

static long long get_int(const char *suffix)
{
    redisReply *r = tl_cmd(rc_, "GET %s:%s", ns_, suffix);
    long long v = r->type == REDIS_REPLY_STRING ? atoll(r->str) : -1;
    freeReplyObject(r);
    return v;
}

static cwork_pool *limited_pool(unsigned limit)
{
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 8;
    cwork_pool *p = cwork_pool_new(redis_, ns_, &o, NULL);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.max_concurrency = limit;
    cwork_pool_register(p, "limited", overlap_handler, &jo, NULL);
    return p;
}

static void max_concurrency_holds_across_two_processes(void)
{
    tl_unique_ns("maxc", ns_, sizeof ns_);
    enum { JOBS = 150, LIMIT = 3 };
    for (int i = 0; i < JOBS; i++)
        push_raw("limited", "{\"name\":\"limited\",\"id\":\"x\",\"t\":1,\"args\":null}");
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        /* A second process with its own pool on the same namespace. */
        cwork_redis *r = cwork_redis_new(tl_redis_url(), NULL, NULL);
        redis_ = r;
        cwork_pool *p = limited_pool(LIMIT);
        int rc = cwork_pool_start(p, NULL);
        for (int i = 0; i < 3000 && rc == 0; i++) {
            redisContext *c = tl_redis_connect();
            redisReply *x = tl_cmd(c, "GET %s:probe:done", ns_);
            int done = x->type == REDIS_REPLY_STRING && atoi(x->str) >= JOBS;
            freeReplyObject(x);
            redisFree(c);
            if (done) break;
            tl_sleep_ms(10);
        }
        rc = rc ? rc : cwork_pool_stop(p, 5000, NULL);
        cwork_pool_free(p);
        cwork_redis_free(r);
        _exit(rc == 0 ? 0 : 1);
    }
    cwork_pool *p = limited_pool(LIMIT);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    for (int i = 0; i < 3000 && get_int("probe:done") < JOBS; i++)
        tl_sleep_ms(10);
    CHECK_INT(get_int("probe:done"), JOBS);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    long long peak = get_int("probe:peak");
    printf("  peak concurrency %lld (limit %d)\n", peak, LIMIT);
    CHECK(peak >= 1 && peak <= LIMIT);
    CHECK_INT(get_int("jobs:limited:lock"), 0);
    CHECK_INT(get_int("jobs:limited:max_concurrency"), LIMIT);
    redisReply *r = tl_cmd(rc_, "EXISTS %s:jobs:limited:lock_info %s:jobs:limited", ns_, ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static void lock_held_by_a_go_pool_counts_against_the_limit(void)
{
    tl_unique_ns("golock", ns_, sizeof ns_);
    /* A Go pool holds 2 of the 3 slots: lock 2, its lock_info field 2. */
    const char *go_pool = "feedfacefeedfacefeedface";
    freeReplyObject(tl_cmd(rc_, "SET %s:jobs:limited:lock 2", ns_));
    freeReplyObject(tl_cmd(rc_, "HSET %s:jobs:limited:lock_info %s 2", ns_, go_pool));
    for (int i = 0; i < 40; i++)
        push_raw("limited", "{\"name\":\"limited\",\"id\":\"y\",\"t\":1,\"args\":null}");
    cwork_pool *p = limited_pool(3);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    for (int i = 0; i < 3000 && get_int("probe:done") < 40; i++)
        tl_sleep_ms(10);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    CHECK_INT(get_int("probe:done"), 40);
    CHECK_INT(get_int("probe:peak"), 1); /* one slot left for us */
    CHECK_INT(get_int("jobs:limited:lock"), 2);
    redisReply *r = tl_cmd(rc_, "HGETALL %s:jobs:limited:lock_info", ns_);
    CHECK(r->elements == 2 && strcmp(r->element[0]->str, go_pool) == 0 &&
          strcmp(r->element[1]->str, "2") == 0);
    freeReplyObject(r);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* A flush, a restart without persistence or a failover loses max_concurrency (and
 * known_jobs): the pool writes them again where missing, every dead_check_ms, and
 * leaves a value another pool wrote since alone. */
static void max_concurrency_comes_back_after_a_flush(void)
{
    tl_unique_ns("reassert", ns_, sizeof ns_);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 2;
    o.dead_check_ms = 100;
    cwork_pool *p = cwork_pool_new(redis_, ns_, &o, NULL);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.max_concurrency = 2;
    CHECK_INT(cwork_pool_register(p, "limited", overlap_handler, &jo, NULL), 0);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    CHECK_INT(get_int("jobs:limited:max_concurrency"), 2);
    tl_do(rc_, "DEL %s:jobs:limited:max_concurrency %s:known_jobs", ns_, ns_);
    for (int i = 0; i < 300 && get_int("jobs:limited:max_concurrency") != 2; i++)
        tl_sleep_ms(10);
    CHECK_INT(get_int("jobs:limited:max_concurrency"), 2);
    tl_do(rc_, "SET %s:jobs:limited:max_concurrency 5", ns_); /* another pool's, newer */
    tl_sleep_ms(400);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    char want[256];
    snprintf(want, sizeof want,
             "%s:jobs:limited:max_concurrency string 5\n"
             "%s:known_jobs set limited\n",
             ns_, ns_);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    RUN(priority_distribution_follows_weights);
    RUN(max_concurrency_holds_across_two_processes);
    RUN(lock_held_by_a_go_pool_counts_against_the_limit);
    RUN(max_concurrency_comes_back_after_a_flush);
    pool_test_teardown();
    return tl_finish();
}
