/* stats_add.lua (PROTOCOL §14.2): a pool's write of its throughput counts counts once,
 * also when the pool tries it again after an outcome it could not know (the call ran, its
 * answer was lost). Driven through the script itself, as the pool's maintenance thread
 * calls it, on a real server; each case checks the whole namespace afterwards. */
#include "keys.h"
#include "redis.h"
#include "scripts.h"
#include "testlib.h"

#include <stdio.h>
#include <string.h>

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];
static cw_keys keys_;

#define DAY "2026-03-09"
#define HOUR "2026-03-09T14"

/* One call as the pool makes it: its totals, the totals it knows were added, last. */
static int add(const char *minute, long long processed, long long failed, long long base_p,
               long long base_f, int last, cwork_error *err)
{
    cw_buf day, hour, sent;
    cw_buf_init(&day), cw_buf_init(&hour), cw_buf_init(&sent);
    cw_key_stat_day(&keys_, &day, DAY);
    cw_key_stat_hour(&keys_, &hour, HOUR);
    cw_key_stats_sent(&keys_, &sent, "pool0000000000000000000a");
    char np[24], nf[24], bp[24], bf[24];
    snprintf(np, sizeof np, "%lld", processed);
    snprintf(nf, sizeof nf, "%lld", failed);
    snprintf(bp, sizeof bp, "%lld", base_p);
    snprintf(bf, sizeof bf, "%lld", base_f);
    const char *argv[] = {day.data, hour.data, sent.data,       np, nf, minute, "3456000", "90000",
                          bp,       bf,        last ? "1" : "0"};
    cw_conn *c = NULL;
    int rc = cw_redis_checkout(redis_, &c, err);
    if (rc == 0) {
        rc = cw_conn_eval(c, &cw_script_stats_add, 3, 8, argv, NULL, NULL, err);
        cw_redis_checkin(redis_, c);
    }
    cw_buf_free(&day), cw_buf_free(&hour), cw_buf_free(&sent);
    return rc;
}

static void fresh_ns(void)
{
    tl_unique_ns("stats", ns_, sizeof ns_);
    cw_keys_clear(&keys_);
    cw_keys_init(&keys_, ns_);
}

static void check_dump(const char *want_fmt)
{
    char want[2048];
    /* every line names the namespace once */
    snprintf(want, sizeof want, want_fmt, ns_, ns_, ns_, ns_);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
}

static void a_write_tried_again_counts_once(void)
{
    fresh_ns();
    cwork_error err = {0};
    /* 10 finished (2 failed); the answer is lost, so the pool still knows of 0 added */
    CHECK_INT(add("03", 10, 2, 0, 0, 0, &err), 0);
    /* a second later: 15 finished (3 failed), tried again from the same base */
    CHECK_INT(add("04", 15, 3, 0, 0, 0, &err), 0);
    check_dump("%s:cwork:stat:" DAY " hash ttl=3456000 failed=3 | processed=15\n"
               "%s:cwork:stat:" HOUR " hash ttl=90000 03:failed=2 | 03:processed=10 | "
               "04:failed=1 | 04:processed=5\n"
               "%s:cwork:stats_sent:pool0000000000000000000a hash ttl=90000 "
               "failed=3 | processed=15\n");
    /* the same call again (its answer lost too) adds nothing; the last one deletes the
     * pool's totals */
    CHECK_INT(add("04", 15, 3, 0, 0, 0, &err), 0);
    CHECK_INT(add("05", 15, 3, 15, 3, 1, &err), 0);
    check_dump("%s:cwork:stat:" DAY " hash ttl=3456000 failed=3 | processed=15\n"
               "%s:cwork:stat:" HOUR " hash ttl=90000 03:failed=2 | 03:processed=10 | "
               "04:failed=1 | 04:processed=5\n");
    tl_ns_delete(rc_, ns_);
}

static void without_the_totals_the_known_base_counts(void)
{
    fresh_ns();
    cwork_error err = {0};
    /* the key expired (or a stopped pool of the same object started again): the pool's
     * known base stands in for it */
    tl_do(rc_, "HSET %s:cwork:stat:" DAY " processed 100 failed 1", ns_);
    CHECK_INT(add("10", 130, 4, 120, 3, 0, &err), 0);
    check_dump("%s:cwork:stat:" DAY " hash ttl=3456000 failed=2 | processed=110\n"
               "%s:cwork:stat:" HOUR " hash ttl=90000 10:failed=1 | 10:processed=10\n"
               "%s:cwork:stats_sent:pool0000000000000000000a hash ttl=90000 "
               "failed=4 | processed=130\n");
    /* totals below what was added (a reused id) add nothing rather than subtract */
    CHECK_INT(add("11", 5, 0, 0, 0, 0, &err), 0);
    check_dump("%s:cwork:stat:" DAY " hash ttl=3456000 failed=2 | processed=110\n"
               "%s:cwork:stat:" HOUR " hash ttl=90000 10:failed=1 | 10:processed=10\n"
               "%s:cwork:stats_sent:pool0000000000000000000a hash ttl=90000 "
               "failed=0 | processed=5\n");
    tl_ns_delete(rc_, ns_);
}

static void a_damaged_totals_key_writes_nothing(void)
{
    fresh_ns();
    cwork_error err = {0};
    tl_do(rc_, "SET %s:cwork:stats_sent:pool0000000000000000000a x", ns_);
    CHECK(add("10", 10, 0, 0, 0, 0, &err) != 0);
    CHECK(strstr(err.message, "stats_sent:pool0000000000000000000a is a string") != NULL);
    check_dump("%s:cwork:stats_sent:pool0000000000000000000a string x\n");
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    rc_ = tl_redis_connect();
    cwork_error err = {0};
    redis_ = cwork_redis_new(tl_redis_url(), NULL, &err);
    if (!redis_) {
        fprintf(stderr, "cwork_redis_new: %s\n", err.message);
        return 1;
    }
    RUN(a_write_tried_again_counts_once);
    RUN(without_the_totals_the_known_base_counts);
    RUN(a_damaged_totals_key_writes_nothing);
    cw_keys_clear(&keys_);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
