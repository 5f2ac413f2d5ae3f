/* A pool on a sharded namespace (PROTOCOL §27.4) against a real Redis: one pool serves
 * every namespace shard — jobs pushed straight into each shard's queues run exactly
 * once, counts are summed, each shard has the pool's heartbeat, and a stop leaves each
 * shard as an unsharded pool leaves its namespace; the executors in use never exceed
 * the pool's concurrency; a type with max_concurrency runs only in its home shard,
 * within its limit, and its jobs found in other shards (or left half-moved by a crash)
 * are carried there; a periodic job is scheduled in its name's shard only; a declared
 * count that differs from the record is refused. The shared budget: a backlog in one
 * shard runs on all N executors, never more than N handlers run at once (mixed real
 * durations), and two shards with backlogs both progress. */
#include "pool_nsshards.h"
#include "pool_testutil.h"
#include "sharding.h"

#include <pthread.h>
#include <stdatomic.h>

#define SHARDS 3
#define PER_SHARD 40
#define MAX_JOBS (SHARDS * PER_SHARD)

static atomic_int seen_[MAX_JOBS];
static atomic_int running_, max_running_;
static atomic_int sleep_ms_;
static char shard_ns_[SHARDS][80];

static void reset_counts(int sleep_ms)
{
    for (int i = 0; i < MAX_JOBS; i++)
        atomic_store(&seen_[i], 0);
    atomic_store(&running_, 0);
    atomic_store(&max_running_, 0);
    atomic_store(&sleep_ms_, sleep_ms);
}

/* Counts job n (its args), and how many handlers run at once. */
static int counting_handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    int now = atomic_fetch_add(&running_, 1) + 1;
    int max = atomic_load(&max_running_);
    while (now > max && !atomic_compare_exchange_weak(&max_running_, &max, now)) {
    }
    tl_sleep_ms(atomic_load(&sleep_ms_));
    long long n = cwork_job_arg_int64(job, "n");
    if (n >= 0 && n < MAX_JOBS) atomic_fetch_add(&seen_[n], 1);
    atomic_fetch_sub(&running_, 1);
    return 0;
}

/* A fresh namespace and its shards' names. */
static void shard_names(const char *tag)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    for (unsigned i = 0; i < SHARDS; i++)
        CHECK_INT(cw_sharding_ns(ns_, i, shard_ns_[i], sizeof shard_ns_[i], NULL), 0);
}

static cwork_pool *sharded_pool(unsigned concurrency, unsigned shards, cwork_error *err)
{
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = concurrency;
    o.shards = shards;
    return cwork_pool_new(redis_, ns_, &o, err);
}

/* LPUSH a Go-JSON job numbered n onto <shard ns>:<list> (a queue, or a moving list). */
static void push_job(unsigned shard, const char *list, const char *name, int n)
{
    freeReplyObject(tl_cmd(rc_,
                           "LPUSH %s:%s {\"name\":\"%s\",\"id\":\"%024d\",\"t\":1700000000,"
                           "\"args\":{\"n\":%d}}",
                           shard_ns_[shard], list, name, n, n));
}

static void check_each_ran_once(int njobs)
{
    for (int n = 0; n < njobs; n++)
        if (atomic_load(&seen_[n]) != 1)
            tl_fail(__FILE__, __LINE__, "job %d ran %d times", n, atomic_load(&seen_[n]));
}

/* Waits up to ms for EXISTS key to answer want; returns the last answer. */
static long long wait_exists(const char *key, long long want, long ms)
{
    long long v = -1;
    for (long waited = 0; waited <= ms; waited += 10) {
        redisReply *r = tl_cmd(rc_, "EXISTS %s", key);
        v = r->integer;
        freeReplyObject(r);
        if (v == want) break;
        tl_sleep_ms(10);
    }
    return v;
}

static void delete_all(void)
{
    for (unsigned i = 0; i < SHARDS; i++)
        tl_ns_delete(rc_, shard_ns_[i]);
}

/* Checks and deletes shard 0's record of SHARDS shards. */
static void take_record(void)
{
    redisReply *r = tl_cmd(rc_, "HMGET %s:cwork:shards count hash", ns_);
    CHECK(r->elements == 2 && r->element[0]->str && r->element[1]->str);
    if (r->elements == 2 && r->element[0]->str && r->element[1]->str) {
        CHECK_STR(r->element[0]->str, "3");
        CHECK_STR(r->element[1]->str, "fnv1a64-jump");
    }
    freeReplyObject(r);
    tl_do(rc_, "DEL %s:cwork:shards", ns_);
}

static void check_dump(unsigned shard, const char *want)
{
    char *dump = tl_ns_dump(rc_, shard_ns_[shard]);
    CHECK_STR(dump, want);
    free(dump);
}

static void every_shard_is_served(void)
{
    shard_names("nsshards");
    reset_counts(1);
    cwork_error err = {0};
    cwork_pool *p = sharded_pool(6, SHARDS, &err);
    CHECK(p != NULL);
    CHECK_INT(cwork_pool_register(p, "work", counting_handler, NULL, &err), 0);
    for (unsigned s = 0; s < SHARDS; s++)
        for (int k = 0; k < PER_SHARD; k++)
            push_job(s, "jobs:work", "work", (int)s * PER_SHARD + k);
    CHECK_INT(cwork_pool_start(p, &err), 0);
    /* A heartbeat in each shard; shard 0's under the pool's id. */
    for (unsigned s = 0; s < SHARDS; s++) {
        redisReply *r = tl_cmd(rc_, "SMEMBERS %s:worker_pools", shard_ns_[s]);
        CHECK_INT(r->elements, 1);
        if (s == 0 && r->elements == 1) CHECK_STR(r->element[0]->str, cwork_pool_id(p));
        freeReplyObject(r);
    }
    if (cwork_pool_drain(p, 20000, &err) != 0)
        tl_fail(__FILE__, __LINE__, "drain: %s", err.message);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    check_each_ran_once(MAX_JOBS);
    CHECK(atomic_load(&max_running_) <= 6);
    cwork_pool_stats st;
    cwork_pool_get_stats(p, &st);
    CHECK_INT(st.fetched, MAX_JOBS);
    CHECK_INT(st.succeeded, MAX_JOBS);
    CHECK_INT(st.failed, 0);
    CHECK_INT(st.in_flight, 0);
    /* Each shard as a stopped unsharded pool leaves its namespace. */
    take_record();
    for (unsigned s = 0; s < SHARDS; s++) {
        tl_take_stat_days(rc_, shard_ns_[s], PER_SHARD, 0);
        char want[512];
        snprintf(want, sizeof want,
                 "%.79s:jobs:work:lock string 0\n"
                 "%.79s:jobs:work:max_concurrency string 0\n"
                 "%.79s:known_jobs set work\n",
                 shard_ns_[s], shard_ns_[s], shard_ns_[s]);
        check_dump(s, want);
    }
    cwork_pool_free(p);
    delete_all();
}

/* Slow jobs in every shard: the handlers running at once never exceed the pool's
 * concurrency (4 over 3 shards: 2 + 1 + 1). */
static void concurrency_is_the_total(void)
{
    shard_names("nsconc");
    reset_counts(20);
    cwork_pool *p = sharded_pool(4, SHARDS, NULL);
    CHECK(p != NULL);
    CHECK_INT(cwork_pool_register(p, "work", counting_handler, NULL, NULL), 0);
    for (unsigned s = 0; s < SHARDS; s++)
        for (int k = 0; k < 10; k++)
            push_job(s, "jobs:work", "work", (int)s * 10 + k);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    CHECK_INT(cwork_pool_drain(p, 20000, &err), 0);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    check_each_ran_once(SHARDS * 10);
    CHECK(atomic_load(&max_running_) <= 4);
    CHECK(atomic_load(&max_running_) >= 1);
    /* Its registrations were taken by the shards' pools at the first start. */
    CHECK_INT(cwork_pool_register(p, "other", counting_handler, NULL, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "sharded") != NULL);
    /* Started again, it serves every shard again. */
    reset_counts(1);
    for (unsigned s = 0; s < SHARDS; s++)
        push_job(s, "jobs:work", "work", (int)s);
    CHECK_INT(cwork_pool_start(p, &err), 0);
    CHECK_INT(cwork_pool_drain(p, 20000, &err), 0);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    check_each_ran_once(SHARDS);
    cwork_pool_stats st;
    cwork_pool_get_stats(p, &st);
    CHECK_INT(st.succeeded, SHARDS * 10 + SHARDS);
    cwork_pool_free(p);
    delete_all();
}

/* A type with max_concurrency 2 is pinned to the shard of its name: it runs there only,
 * never more than 2 at once, and its jobs in the other shards' queues, or left in a
 * moving list by a crash, are carried there and run. */
static void pinned_type_runs_home_only(void)
{
    shard_names("nspin");
    reset_counts(20);
    unsigned home = cw_sharding_of("limited", 7, SHARDS);
    cwork_pool *p = sharded_pool(9, SHARDS, NULL);
    CHECK(p != NULL);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.max_concurrency = 2;
    CHECK_INT(cwork_pool_register(p, "limited", counting_handler, &jo, NULL), 0);
    int n = 0;
    for (unsigned s = 0; s < SHARDS; s++)
        for (int k = 0; k < 10; k++)
            push_job(s, "jobs:limited", "limited", n++);
    unsigned other = (home + 1) % SHARDS;
    push_job(other, "cwork:moving:limited", "limited", n++); /* a crash mid-move */
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    redisReply *r = tl_cmd(rc_, "SMEMBERS %s:cwork:shard_pinned", ns_);
    CHECK(r->elements == 1 && strcmp(r->element[0]->str, "limited") == 0);
    freeReplyObject(r);
    /* A drain waits for the jobs in other shards too: they are carried home and run. */
    CHECK_INT(cwork_pool_drain(p, 20000, &err), 0);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    check_each_ran_once(n);
    CHECK(atomic_load(&max_running_) <= 2);
    tl_do(rc_, "DEL %s:cwork:shard_pinned", ns_);
    take_record();
    /* Only the home shard ran it (its limit's keys); the others are left empty. */
    for (unsigned s = 0; s < SHARDS; s++) {
        char want[512] = "";
        if (s == home) {
            tl_take_stat_days(rc_, shard_ns_[s], n, 0);
            snprintf(want, sizeof want,
                     "%.79s:jobs:limited:lock string 0\n"
                     "%.79s:jobs:limited:max_concurrency string 2\n"
                     "%.79s:known_jobs set limited\n",
                     shard_ns_[s], shard_ns_[s], shard_ns_[s]);
        }
        check_dump(s, want);
    }
    cwork_pool_free(p);
    delete_all();
}

static int noop(cwork_job *job, void *ctx)
{
    (void)job;
    (void)ctx;
    return 0;
}

/* A rate-limited type is pinned as well: its limit is written to its home shard only. */
static void rate_limited_type_is_pinned(void)
{
    shard_names("nsrate");
    unsigned home = cw_sharding_of("metered", 7, SHARDS);
    cwork_pool *p = sharded_pool(3, SHARDS, NULL);
    CHECK(p != NULL);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.rate_limit = 100;
    jo.rate_limit_window_ms = 1000;
    CHECK_INT(cwork_pool_register(p, "metered", noop, &jo, NULL), 0);
    CHECK_INT(cwork_pool_register(p, "plain", noop, NULL, NULL), 0);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    redisReply *r = tl_cmd(rc_, "SMEMBERS %s:cwork:shard_pinned", ns_);
    CHECK(r->elements == 1 && strcmp(r->element[0]->str, "metered") == 0);
    freeReplyObject(r);
    for (unsigned s = 0; s < SHARDS; s++) {
        r = tl_cmd(rc_, "HGET %s:cwork:rate_limits metered", shard_ns_[s]);
        if (s == home)
            CHECK(r->str && strcmp(r->str, "100/1s") == 0);
        else
            CHECK(r->type == REDIS_REPLY_NIL);
        freeReplyObject(r);
        r = tl_cmd(rc_, "SMEMBERS %s:known_jobs", shard_ns_[s]);
        CHECK_INT(r->elements, s == home ? 2 : 1); /* plain runs everywhere */
        freeReplyObject(r);
    }
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    cwork_pool_free(p);
    delete_all();
}

/* A periodic job is scheduled by the shard of its name (PROTOCOL §27.2) only. */
static void periodic_job_in_its_shard(void)
{
    shard_names("nsper");
    char name[16] = "";
    unsigned home = 0;
    for (int k = 0; k < 100 && home == 0; k++) { /* a name whose shard is not 0 */
        snprintf(name, sizeof name, "tick%d", k);
        home = cw_sharding_of(name, strlen(name), SHARDS);
    }
    CHECK(home != 0);
    cwork_pool *p = sharded_pool(3, SHARDS, NULL);
    CHECK(p != NULL);
    CHECK_INT(cwork_pool_register(p, name, noop, NULL, NULL), 0);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_periodically_enqueue(p, "* * * * * *", name, &err), 0);
    CHECK_INT(cwork_pool_start(p, &err), 0);
    char key[160];
    snprintf(key, sizeof key, "%s:last_periodic_enqueue", shard_ns_[home]);
    CHECK_INT(wait_exists(key, 1, 20000), 1);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    for (unsigned s = 0; s < SHARDS; s++) {
        redisReply *r = tl_cmd(rc_, "EXISTS %s:last_periodic_enqueue", shard_ns_[s]);
        CHECK_INT(r->integer, s == home);
        freeReplyObject(r);
        r = tl_cmd(rc_, "ZCARD %s:scheduled", shard_ns_[s]);
        CHECK(s == home ? r->integer > 0 : r->integer == 0);
        freeReplyObject(r);
    }
    cwork_watchdog_stat *st = NULL;
    size_t nst = 0;
    CHECK_INT(cwork_pool_watchdog_stats(p, &st, &nst, &err), 0);
    CHECK_INT(nst, 1);
    if (nst == 1) CHECK_STR(st[0].name, name);
    cwork_free(st);
    cwork_pool_free(p);
    delete_all();
}

/* A declared count is checked against the record; bad options are named. */
static void disagreement_is_refused(void)
{
    shard_names("nsrec");
    cwork_error err = {0};
    CHECK(sharded_pool(10, 2000, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    CHECK(strstr(err.message, "shards") != NULL);
    CHECK(sharded_pool(2, 3, &err) == NULL);
    CHECK(strstr(err.message, "concurrency") != NULL);
    tl_do(rc_, "HSET %s:cwork:shards count 3 hash fnv1a64-jump", ns_);
    cwork_pool *p = sharded_pool(4, 2, &err);
    CHECK(p != NULL);
    CHECK_INT(cwork_pool_register(p, "work", noop, NULL, NULL), 0);
    CHECK_INT(cwork_pool_start(p, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, ":cwork:shards") != NULL);
    cwork_pool_free(p);
    /* Following the record, two executors cannot serve three shards. */
    p = sharded_pool(2, 0, &err);
    CHECK(p != NULL);
    CHECK_INT(cwork_pool_start(p, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "concurrency") != NULL);
    cwork_pool_free(p);
    /* Nothing was written but the record. */
    char want[256];
    snprintf(want, sizeof want, "%s:cwork:shards hash count=3 | hash=fnv1a64-jump\n", ns_);
    check_dump(0, want);
    check_dump(1, "");
    delete_all();
}

/* Declaring one shard is an unsharded pool (plus the record it declared). */
static void one_shard_is_unsharded(void)
{
    shard_names("nsone");
    reset_counts(0);
    cwork_pool *p = sharded_pool(2, 1, NULL);
    CHECK(p != NULL);
    CHECK_INT(cwork_pool_register(p, "work", counting_handler, NULL, NULL), 0);
    push_job(0, "jobs:work", "work", 0);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    CHECK_INT(cwork_pool_drain(p, 20000, &err), 0);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    check_each_ran_once(1);
    redisReply *r = tl_cmd(rc_, "HGET %s:cwork:shards count", ns_);
    CHECK(r->str && strcmp(r->str, "1") == 0);
    freeReplyObject(r);
    tl_do(rc_, "DEL %s:cwork:shards", ns_);
    tl_take_stat_days(rc_, ns_, 1, 0);
    char want[512];
    snprintf(want, sizeof want,
             "%s:jobs:work:lock string 0\n"
             "%s:jobs:work:max_concurrency string 0\n"
             "%s:known_jobs set work\n",
             ns_, ns_, ns_);
    check_dump(0, want);
    check_dump(1, "");
    cwork_pool_free(p);
    delete_all();
}

/* ---------------------------------------------------------------- the shared budget */

static atomic_int hold_;               /* handlers wait while it is set */
static atomic_int shard_done_[SHARDS]; /* budget jobs finished, by shard */

/* A budget job: {"s": shard, "ms": run time}; counts how many run at once, and waits
 * while hold_ is set (bounded, so that a failing test still ends). */
static int budget_handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    int now = atomic_fetch_add(&running_, 1) + 1;
    int max = atomic_load(&max_running_);
    while (now > max && !atomic_compare_exchange_weak(&max_running_, &max, now)) {
    }
    for (int waited = 0; atomic_load(&hold_) && waited < 60000; waited++)
        tl_sleep_ms(1);
    tl_sleep_ms((int)cwork_job_arg_int64(job, "ms"));
    long long s = cwork_job_arg_int64(job, "s");
    if (s >= 0 && s < SHARDS) atomic_fetch_add(&shard_done_[s], 1);
    atomic_fetch_sub(&running_, 1);
    return 0;
}

static void push_budget_jobs(unsigned shard, int n, int ms_of_k_mod)
{
    for (int k = 0; k < n; k++) {
        int ms = ms_of_k_mod ? 1 + (k * 7 + (int)shard * 3) % ms_of_k_mod : 1;
        freeReplyObject(tl_cmd(rc_,
                               "LPUSH %s:jobs:work {\"name\":\"work\",\"id\":\"b%u-%d\","
                               "\"t\":1700000000,\"args\":{\"s\":%u,\"ms\":%d}}",
                               shard_ns_[shard], shard, k, shard, ms));
    }
}

static void reset_budget_counts(void)
{
    reset_counts(0);
    atomic_store(&hold_, 0);
    for (int i = 0; i < SHARDS; i++)
        atomic_store(&shard_done_[i], 0);
}

/* Waits up to ms for max_running_ to reach want. */
static int wait_max_running(int want, long ms)
{
    for (long waited = 0; waited < ms && atomic_load(&max_running_) < want; waited += 5)
        tl_sleep_ms(5);
    return atomic_load(&max_running_);
}

/* The budget is all given back once the pool stops, and was never over N. */
static void check_budget_after_stop(cwork_pool *p, size_t n)
{
    size_t used = 99, peak = 99;
    cw_nsshards_budget_usage(p->nsshards->budget, &used, &peak);
    CHECK_INT(used, 0);
    CHECK(peak <= n && peak >= 1);
}

/* A backlog in one shard of three runs on all 6 executors (the split would give it 2):
 * the handlers hold until 6 run at once. */
static void backlog_in_one_shard_uses_all(void)
{
    shard_names("nsbudget1");
    reset_budget_counts();
    atomic_store(&hold_, 1);
    cwork_pool *p = sharded_pool(6, SHARDS, NULL);
    CHECK(p != NULL);
    CHECK_INT(cwork_pool_register(p, "work", budget_handler, NULL, NULL), 0);
    push_budget_jobs(1, 30, 0);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    CHECK_INT(wait_max_running(6, 20000), 6);
    atomic_store(&hold_, 0);
    CHECK_INT(cwork_pool_drain(p, 20000, &err), 0);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    CHECK_INT(atomic_load(&shard_done_[1]), 30);
    CHECK(atomic_load(&max_running_) <= 6);
    check_budget_after_stop(p, 6);
    take_record();
    for (unsigned s = 0; s < SHARDS; s++)
        tl_take_stat_days(rc_, shard_ns_[s], s == 1 ? 30 : 0, 0);
    cwork_pool_free(p);
    delete_all();
}

/* Uneven backlogs in every shard with handlers of 1 to 20 ms: never more than N = 5 run
 * at once, and every job runs once. */
static void never_more_than_n_run(void)
{
    shard_names("nsbudget2");
    reset_budget_counts();
    cwork_pool *p = sharded_pool(5, SHARDS, NULL);
    CHECK(p != NULL);
    CHECK_INT(cwork_pool_register(p, "work", budget_handler, NULL, NULL), 0);
    int want[SHARDS] = {60, 5, 25};
    for (unsigned s = 0; s < SHARDS; s++)
        push_budget_jobs(s, want[s], 20);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    CHECK_INT(cwork_pool_drain(p, 60000, &err), 0);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    for (unsigned s = 0; s < SHARDS; s++)
        CHECK_INT(atomic_load(&shard_done_[s]), want[s]);
    CHECK(atomic_load(&max_running_) <= 5);
    check_budget_after_stop(p, 5);
    cwork_pool_stats st;
    cwork_pool_get_stats(p, &st);
    CHECK_INT(st.succeeded, 90);
    cwork_pool_free(p);
    delete_all();
}

/* Two shards with backlogs share the budget: while both queues still hold jobs, each
 * has run some (the one that started first does not keep every executor). */
static void two_backlogs_both_progress(void)
{
    shard_names("nsbudget3");
    reset_budget_counts();
    cwork_pool *p = sharded_pool(4, SHARDS, NULL);
    CHECK(p != NULL);
    CHECK_INT(cwork_pool_register(p, "work", budget_handler, NULL, NULL), 0);
    push_budget_jobs(0, 300, 5);
    push_budget_jobs(2, 300, 5);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    /* Until one of them has run 40 (bounded). */
    for (int waited = 0; waited < 60000; waited += 5) {
        if (atomic_load(&shard_done_[0]) >= 40 || atomic_load(&shard_done_[2]) >= 40) break;
        tl_sleep_ms(5);
    }
    int done0 = atomic_load(&shard_done_[0]), done2 = atomic_load(&shard_done_[2]);
    char key[128];
    snprintf(key, sizeof key, "LLEN %s:jobs:work", shard_ns_[0]);
    redisReply *r0 = tl_cmd(rc_, key);
    snprintf(key, sizeof key, "LLEN %s:jobs:work", shard_ns_[2]);
    redisReply *r2 = tl_cmd(rc_, key);
    CHECK(r0->integer > 0 && r2->integer > 0); /* both still had a backlog */
    freeReplyObject(r0);
    freeReplyObject(r2);
    if (done0 < 10 || done2 < 10)
        tl_fail(__FILE__, __LINE__, "one backlog stalled: shard 0 ran %d, shard 2 ran %d", done0,
                done2);
    CHECK_INT(cwork_pool_drain(p, 60000, &err), 0);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    CHECK_INT(atomic_load(&shard_done_[0]), 300);
    CHECK_INT(atomic_load(&shard_done_[2]), 300);
    CHECK(atomic_load(&max_running_) <= 4);
    check_budget_after_stop(p, 4);
    cwork_pool_free(p);
    delete_all();
}

int main(void)
{
    pool_test_setup();
    RUN(every_shard_is_served);
    RUN(concurrency_is_the_total);
    RUN(pinned_type_runs_home_only);
    RUN(rate_limited_type_is_pinned);
    RUN(periodic_job_in_its_shard);
    RUN(disagreement_is_refused);
    RUN(one_shard_is_unsharded);
    RUN(backlog_in_one_shard_uses_all);
    RUN(never_more_than_n_run);
    RUN(two_backlogs_both_progress);
    pool_test_teardown();
    return tl_finish();
}
