/* The throughput history (PROTOCOL §14.2) written by a real pool: handlers that take 1 ms
 * and 20 ms, some failing, run in three minutes that cross an hour; on the pool's
 * manual clock each once-a-second write lands in a known minute. Checked: the per-minute
 * hashes (type, fields, TTL), that they sum to the daily hash, and that nothing else is
 * left in the namespace. The minute-long jumps of the clock outrun the pool's lease (and
 * its own reaper takes it for dead): the pool is fenced and recovers at each, with no
 * job running, and the counts stay exact through it. */
#include "clock_testutil.h"
#include "pool_testutil.h"

#include <pthread.h>
#include <stdatomic.h>

/* q: 1 ms, succeeds; s: 20 ms, succeeds; f: 20 ms, fails for good (dead, no retry that
 * the moved clock could bring back). */
static int handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    const char *id = cwork_job_id(job);
    tl_sleep_ms(id[0] == 'q' ? 1 : 20);
    if (id[0] == 'f') return cwork_job_fail_no_retry(job, "failed on purpose");
    return 0;
}

static void wait_counted(cwork_pool *p, uint64_t n)
{
    cwork_pool_stats st = {0};
    for (long long end = tl_now_ms() + 20000; tl_now_ms() < end; tl_sleep_ms(2)) {
        cwork_pool_get_stats(p, &st);
        if (st.succeeded + st.failed >= n) break;
    }
    CHECK_INT(st.succeeded + st.failed, n);
}

/* Waits (up to 20 s of real time) until HGET key field reads want. */
static void wait_field(const char *key, const char *field, long long want)
{
    long long v = -1;
    for (long long end = tl_now_ms() + 20000; tl_now_ms() < end; tl_sleep_ms(5)) {
        redisReply *r = tl_cmd(rc_, "HGET %s %s", key, field);
        v = r->type == REDIS_REPLY_STRING ? atoll(r->str) : -1;
        freeReplyObject(r);
        if (v == want) break;
    }
    if (v != want) tl_fail(__FILE__, __LINE__, "%s %s: %lld, want %lld", key, field, v, want);
}

static atomic_int ticking_;

static void *tick_main(void *arg)
{
    (void)arg;
    while (atomic_load(&ticking_)) {
        cw_clock_advance_ms(100);
        tl_sleep_ms(5);
    }
    return NULL;
}

/* Stops the pool while the manual clock keeps moving. Back on the system's clock, the
 * maintenance thread's deadlines, taken on a manual clock moved two minutes ahead, would
 * lie two minutes in the future, and a stop that met it between two looks would wait for
 * them; on a clock that stands it would wait for ever. */
static void stop_on_a_moving_clock(cwork_pool *p)
{
    pthread_t ticker;
    atomic_store(&ticking_, 1);
    CHECK_INT(pthread_create(&ticker, NULL, tick_main, NULL), 0);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    atomic_store(&ticking_, 0);
    pthread_join(ticker, NULL);
    cw_clock_system();
}

static void push(const char *id, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        char job[160];
        snprintf(job, sizeof job,
                 "{\"name\":\"work\",\"id\":\"%s%u\",\"t\":1700000000,\"args\":{}}", id, i);
        push_raw("work", job);
    }
}

/* "<ns>:cwork:stat:" followed by the UTC date (with_hour: and hour) of unix second t. */
static void stat_key(char *out, size_t size, int64_t t, int with_hour)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    char when[24];
    strftime(when, sizeof when, with_hour ? "%Y-%m-%dT%H" : "%Y-%m-%d", &tm);
    snprintf(out, size, "%s:cwork:stat:%s", ns_, when);
}

/* A hash's fields, sorted "field=value " pairs, and its TTL. */
static void check_hash(const char *key, const char *want, long long ttl_lo, long long ttl_hi)
{
    redisReply *t = tl_cmd(rc_, "TYPE %s", key);
    CHECK_STR(t->str, "hash");
    freeReplyObject(t);
    char *dump = tl_ns_dump(rc_, key); /* "key hash ttl=N f=v | f=v\n", keys sorted */
    char needle[160];
    snprintf(needle, sizeof needle, "%s hash ", key);
    const char *fields = strstr(dump, needle); /* the first line (other keys only extend key) */
    CHECK(fields == dump);
    if (fields) {
        const char *ttl = strstr(fields, "ttl=");
        CHECK(ttl != NULL);
        long long secs = ttl ? atoll(ttl + 4) : -1;
        if (secs < ttl_lo || secs > ttl_hi)
            tl_fail(__FILE__, __LINE__, "%s: TTL %lld, want %lld to %lld", key, secs, ttl_lo,
                    ttl_hi);
        const char *rest = ttl ? strchr(ttl, ' ') : NULL;
        const char *end = rest ? strchr(rest, '\n') : NULL;
        char got[256] = "";
        if (rest && end) snprintf(got, sizeof got, "%.*s", (int)(end - rest - 1), rest + 1);
        CHECK_STR(got, want);
    }
    free(dump);
}

static void minutes_across_an_hour_sum_to_the_day(void)
{
    /* 70 s before a whole hour an hour ahead of the real clock: the manual clock decides
     * which minute and hour each write lands in. */
    int64_t hour = (tl_now_ms() / 3600000 + 2) * 3600;
    int64_t t0 = hour - 70; /* HH:58:50 */
    cw_clock_manual(t0 * 1000);
    cwork_pool *p = new_pool("throughput", 2);
    cwork_job_options o;
    cwork_job_options_init(&o);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_register(p, "work", handler, &o, &err), 0);
    CHECK_INT(cwork_pool_start(p, &err), 0);
    char day1[128], day2[128], h1[128], h2[128];
    stat_key(day1, sizeof day1, t0, 0);
    stat_key(day2, sizeof day2, hour, 0);
    stat_key(h1, sizeof h1, t0, 1);
    stat_key(h2, sizeof h2, hour, 1);

    /* Minute 58: 5 quick, 2 slow, 2 failing. */
    push("q58-", 5);
    push("s58-", 2);
    push("f58-", 2);
    wait_counted(p, 9);
    cw_clock_advance_ms(1000); /* the once-a-second write, at HH:58:51 */
    wait_field(h1, "58:processed", 9);
    /* Minute 59: 2 quick, 1 failing. */
    cw_clock_advance_ms(60000);
    push("q59-", 2);
    push("f59-", 1);
    wait_counted(p, 12);
    cw_clock_advance_ms(1000); /* HH:59:52 */
    wait_field(h1, "59:processed", 3);
    /* Minute 00 of the next hour: 3 quick, 1 slow. */
    cw_clock_advance_ms(60000);
    push("q00-", 3);
    push("s00-", 1);
    wait_counted(p, 16);
    cw_clock_advance_ms(1000); /* (HH+1):00:53 */
    wait_field(h2, "00:processed", 4);
    stop_on_a_moving_clock(p);

    check_hash(h1, "58:failed=2 | 58:processed=9 | 59:failed=1 | 59:processed=3", 24 * 3600,
               25 * 3600);
    check_hash(h2, "00:failed=0 | 00:processed=4", 24 * 3600, 25 * 3600);
    if (!strcmp(day1, day2)) {
        check_hash(day1, "failed=3 | processed=16", 39 * 86400, 40 * 86400);
    } else { /* the hour was midnight */
        check_hash(day1, "failed=3 | processed=12", 39 * 86400, 40 * 86400);
        check_hash(day2, "failed=0 | processed=4", 39 * 86400, 40 * 86400);
    }
    /* The admin client reads the three minutes back (on the clock of the last write). */
    cw_clock_manual((hour + 53) * 1000);
    cwork_client *cl = cwork_client_new(redis_, ns_, &err);
    cwork_minute_stats *m = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_throughput(cl, 3, &m, &n, &err), 0);
    CHECK_INT(n, 3);
    if (n == 3) {
        CHECK_INT(m[0].minute, hour - 120);
        CHECK_INT(m[0].processed, 9);
        CHECK_INT(m[0].failed, 2);
        CHECK_INT(m[1].processed, 3);
        CHECK_INT(m[1].failed, 1);
        CHECK_INT(m[2].minute, hour);
        CHECK_INT(m[2].processed, 4);
        CHECK_INT(m[2].failed, 0);
    }
    cwork_free(m);
    cwork_client_free(cl);
    cw_clock_system();
    /* Both kinds sum to the same, and nothing else holds counts. */
    tl_take_stat_days(rc_, ns_, 16, 3);
    redisReply *r = tl_cmd(rc_, "KEYS %s:cwork:stat:*", ns_);
    CHECK_INT(r->elements, 0);
    freeReplyObject(r);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    RUN(minutes_across_an_hour_sum_to_the_day);
    pool_test_teardown();
    return tl_finish();
}
