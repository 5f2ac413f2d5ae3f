/* Shared set-up for the worker-pool tests: a namespace per test, a pool on the test
 * Redis, waiting for Redis state with a bound, and the raw bytes Go writes. */
#ifndef CWORK_POOL_TESTUTIL_H
#define CWORK_POOL_TESTUTIL_H

#include "cwork.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];

__attribute__((unused)) static cwork_pool *new_pool(const char *tag, unsigned concurrency)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = concurrency;
    cwork_error err = {0};
    cwork_pool *p = cwork_pool_new(redis_, ns_, &o, &err);
    if (!p) tl_fail(__FILE__, __LINE__, "cwork_pool_new: %s", err.message);
    return p;
}

/* LPUSH raw bytes onto <ns>:jobs:<name>, as a Go enqueuer (or anything) would. */
__attribute__((unused)) static void push_raw(const char *name, const char *bytes)
{
    freeReplyObject(tl_cmd(rc_, "LPUSH %s:jobs:%s %s", ns_, name, bytes));
}

/* Waits up to ms for `LLEN/ZCARD/EXISTS …` (fmt) to answer want; returns the last value. */
__attribute__((unused)) static long long wait_for_int(long long want, long ms, const char *fmt,
                                                      const char *arg)
{
    long long v = -1;
    for (long waited = 0; waited <= ms; waited += 10) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, fmt, ns_, arg);
        redisReply *r = tl_cmd(rc_, cmd);
        v = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
        freeReplyObject(r);
        if (v == want) break;
        tl_sleep_ms(10);
    }
    return v;
}

/* Stops the pool (10 s of grace), checks that the namespace holds only type's counters
 * and n jobs processed in the daily stats, frees the pool and deletes the namespace. */
__attribute__((unused)) static void stop_and_check_clean(cwork_pool *p, const char *type,
                                                         long long n)
{
    cwork_error err = {0};
    CHECK_INT(cwork_pool_stop(p, 10000, &err), 0);
    char want[512];
    snprintf(want, sizeof want,
             "%s:jobs:%s:lock string 0\n"
             "%s:jobs:%s:max_concurrency string 0\n"
             "%s:known_jobs set %s\n",
             ns_, type, ns_, type, ns_, type);
    tl_take_stat_days(rc_, ns_, n, 0);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* tl_take_failure_histories of the test's namespace. */
__attribute__((unused)) static long long take_failure_histories(void)
{
    return tl_take_failure_histories(rc_, ns_);
}

static void pool_test_setup(void)
{
    rc_ = tl_redis_connect();
    cwork_error err = {0};
    redis_ = cwork_redis_new(tl_redis_url(), NULL, &err);
    if (!redis_) {
        fprintf(stderr, "cwork_redis_new: %s\n", err.message);
        exit(1);
    }
}

static void pool_test_teardown(void)
{
    cwork_redis_free(redis_);
    redisFree(rc_);
}

#endif
