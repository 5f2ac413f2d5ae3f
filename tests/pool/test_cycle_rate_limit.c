/* The cycle script's rate limits (PROTOCOL §20), run directly against a real Redis with
 * an injected time (microseconds), never the wall clock — except one case that checks
 * Redis' own TIME is used, bounded by TIME read before and after. Each case checks the
 * reply (jobs, the wait for a held-back type, errors) and the whole namespace. */
#include "cycle_testutil.h"

#define T0 1700000000000000LL /* µs: any time works, the script only compares */

static const size_t only_a[] = {0}, a_and_b[] = {0, 1};

/* The rate-limited types of the next calls (0-based) and the time they run at. */
static void limits(const size_t *types, size_t n, long long now_us)
{
    cycle_limited_ = types;
    cycle_nlimited_ = n;
    cycle_now_us_ = now_us;
}

/* The reply's wait for a held-back rate-limited type (µs), or -1 without one. */
static long long wait_of(const redisReply *r)
{
    if (r->type != REDIS_REPLY_ARRAY) return -2;
    for (size_t i = 1; i + 1 < r->elements;) {
        long long type = r->element[i]->integer, m = r->element[i + 1]->integer;
        if (type == -2) return m == 1 ? r->element[i + 2]->integer : -3;
        i += 2 + (size_t)m;
    }
    return -1;
}

/* The reply's error texts (type index 0 group), joined with " | ". */
static void errors_of(const redisReply *r, char *buf, size_t size)
{
    buf[0] = '\0';
    for (size_t i = 1; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements;) {
        long long type = r->element[i]->integer, m = r->element[i + 1]->integer;
        if (type == 0)
            for (long long j = 0; j + 1 < m; j += 2)
                app(buf, size, "%s%lld %s", buf[0] ? " | " : "", r->element[i + 2 + j]->integer,
                    r->element[i + 3 + j]->str);
        i += 2 + (size_t)m;
    }
}

static void a_limited_type_gives_one_job_per_interval(void)
{
    fresh();
    cmd("HSET %s:cwork:rate_limits a 4/1s", ns_); /* one start every 250 ms */
    push('a', 1, 5);
    push('b', 1, 3);
    drawbuf d = draws(1, "ab", 4);
    limits(only_a, 1, T0);
    redisReply *r = cycle("ab", 0, &d, NULL);
    CHECK_GOT(r, 1, "<a1>"); /* one job: the other draws fall through to b */
    CHECK_GOT(r, 2, "<b1> | <b2> | <b3>");
    CHECK_INT(wait_of(r), -1);
    CHECK_NS("@:cwork:rate_limit:a string ttl=1 1700000000250000\n"
             "@:cwork:rate_limits hash a=4/1s\n"
             "@:jobs:a list <a5> | <a4> | <a3> | <a2>\n"
             "@:jobs:a:" POOL ":inprogress list <a1>\n"
             "@:jobs:a:lock string 1\n"
             "@:jobs:a:lock_info hash " POOL "=1\n"
             "@:jobs:b:" POOL ":inprogress list <b3> | <b2> | <b1>\n"
             "@:jobs:b:lock string 3\n"
             "@:jobs:b:lock_info hash " POOL "=3\n");
    freeReplyObject(r);

    /* 100 ms later: held back, its jobs left in the queue, and the reply says when. */
    limits(only_a, 1, T0 + 100000);
    r = cycle("ab", 0, &d, NULL);
    CHECK_GOT(r, 0, "");
    CHECK_INT(wait_of(r), 150000);
    CHECK_NS("@:cwork:rate_limit:a string ttl=1 1700000000250000\n"
             "@:cwork:rate_limits hash a=4/1s\n"
             "@:jobs:a list <a5> | <a4> | <a3> | <a2>\n"
             "@:jobs:a:" POOL ":inprogress list <a1>\n"
             "@:jobs:a:lock string 1\n"
             "@:jobs:a:lock_info hash " POOL "=1\n"
             "@:jobs:b:" POOL ":inprogress list <b3> | <b2> | <b1>\n"
             "@:jobs:b:lock string 3\n"
             "@:jobs:b:lock_info hash " POOL "=3\n");
    freeReplyObject(r);

    /* At the allowed time exactly: the next job, on schedule. */
    limits(only_a, 1, T0 + 250000);
    r = cycle("ab", 0, &d, NULL);
    CHECK_GOT(r, 1, "<a2>");
    CHECK_INT(wait_of(r), -1);
    freeReplyObject(r);
    limits(only_a, 1, T0 + 600000); /* 100 ms late (under half an interval): */
    r = cycle("ab", 0, &d, NULL);
    CHECK_GOT(r, 1, "<a3>");
    freeReplyObject(r);
    r = tl_cmd(rc_, "GET %s:cwork:rate_limit:a", ns_); /* …the schedule holds: 500 + 250 */
    CHECK_STR(r->str, "1700000000750000");
    freeReplyObject(r);
    limits(only_a, 1, T0 + 10000000); /* 10 s idle: one job, not 40, and a new schedule */
    r = cycle("ab", 0, &d, NULL);
    CHECK_GOT(r, 1, "<a4>");
    CHECK_NS("@:cwork:rate_limit:a string ttl=1 1700000010250000\n"
             "@:cwork:rate_limits hash a=4/1s\n"
             "@:jobs:a list <a5>\n"
             "@:jobs:a:" POOL ":inprogress list <a4> | <a3> | <a2> | <a1>\n"
             "@:jobs:a:lock string 4\n"
             "@:jobs:a:lock_info hash " POOL "=4\n"
             "@:jobs:b:" POOL ":inprogress list <b3> | <b2> | <b1>\n"
             "@:jobs:b:lock string 3\n"
             "@:jobs:b:lock_info hash " POOL "=3\n");
    limits(NULL, 0, -1);
    done(r);
}

/* Every start of the type, call after call (each 70 ms, so most starts are late): starts
 * at least half an interval apart, any N + 1 of them spanning more than the window (at
 * most N + 1 in any window), and the schedule kept: the run is not slowed down. */
static void starts_over_a_long_run_keep_the_interval(void)
{
    fresh();
    cmd("HSET %s:cwork:rate_limits a 3/1s", ns_); /* 333334 µs apart (rounded up) */
    push('a', 1, 40);
    drawbuf d = draws(1, "a", 5);
    long long starts[40];
    int n = 0;
    for (long long now = T0; now < T0 + 5000000 && n < 40; now += 70000) { /* a call each 70 ms */
        limits(only_a, 1, now);
        redisReply *r = cycle("a", 0, &d, NULL);
        char got[BIG];
        int m = fetched(r, 1, got, sizeof got);
        CHECK(m == 0 || m == 1);
        if (m == 1) starts[n++] = now;
        CHECK(m == 1 || wait_of(r) > 0);
        freeReplyObject(r);
    }
    CHECK_INT(n, 15); /* 5 s at 3/s: every start on its schedule, late by < 70 ms */
    for (int i = 1; i < n; i++)
        CHECK(starts[i] - starts[i - 1] >= 333334 / 2);
    for (int i = 4; i < n; i++) /* any five starts span more than the window */
        CHECK(starts[i] - starts[i - 4] > 1000000);
    limits(NULL, 0, -1);
    tl_ns_delete(rc_, ns_);
}

/* The setting is read in the call: a type passed as limited without a limit (a pool's
 * view is up to a second old) is fetched as usual and gets no state. */
static void a_type_passed_without_a_limit_is_not_limited(void)
{
    fresh();
    push('a', 1, 3);
    drawbuf d = draws(1, "a", 3);
    limits(only_a, 1, T0);
    redisReply *r = cycle("a", 0, &d, NULL);
    CHECK_GOT(r, 1, "<a1> | <a2> | <a3>");
    CHECK_INT(wait_of(r), -1);
    CHECK_NS("@:jobs:a:" POOL ":inprogress list <a3> | <a2> | <a1>\n"
             "@:jobs:a:lock string 3\n"
             "@:jobs:a:lock_info hash " POOL "=3\n");
    limits(NULL, 0, -1);
    done(r);
}

/* A changed limit holds from the next start: the time already allowed stands, the
 * interval after it is the new one. */
static void a_changed_limit_holds_from_the_next_start(void)
{
    fresh();
    cmd("HSET %s:cwork:rate_limits a 4/1s", ns_);
    push('a', 1, 5);
    drawbuf d = draws(1, "a", 2);
    limits(only_a, 1, T0);
    redisReply *r = cycle("a", 0, &d, NULL);
    CHECK_GOT(r, 1, "<a1>");
    freeReplyObject(r);
    cmd("HSET %s:cwork:rate_limits a 1/2s", ns_);
    limits(only_a, 1, T0 + 250000);
    r = cycle("a", 0, &d, NULL);
    CHECK_GOT(r, 1, "<a2>");
    freeReplyObject(r);
    limits(only_a, 1, T0 + 260000);
    r = cycle("a", 0, &d, NULL);
    CHECK_GOT(r, 1, "");
    CHECK_INT(wait_of(r), 1990000);
    CHECK_NS("@:cwork:rate_limit:a string ttl=2 1700000002250000\n"
             "@:cwork:rate_limits hash a=1/2s\n"
             "@:jobs:a list <a5> | <a4> | <a3>\n"
             "@:jobs:a:" POOL ":inprogress list <a2> | <a1>\n"
             "@:jobs:a:lock string 2\n"
             "@:jobs:a:lock_info hash " POOL "=2\n");
    freeReplyObject(r);
    /* Removed: the next call fetches freely (the old state is ignored). */
    cmd("HDEL %s:cwork:rate_limits a", ns_);
    r = cycle("a", 0, &d, NULL);
    CHECK_GOT(r, 1, "<a3> | <a4>");
    limits(NULL, 0, -1);
    done(r);
}

/* Two limited types: each held back on its own; the wait is the earlier of the two; a
 * paused limited type is neither fetched nor charged. */
static void two_limited_types_and_a_paused_one(void)
{
    fresh();
    cmd("HSET %s:cwork:rate_limits a 10/1s b 2/1s c 1/1h", ns_);
    push('a', 1, 3);
    push('b', 1, 3);
    push('c', 1, 3);
    set('c', ":paused", "1");
    drawbuf d = draws(1, "abc bca", 3);
    size_t three[] = {0, 1, 2};
    limits(three, 3, T0);
    redisReply *r = cycle("abc", 0, &d, NULL);
    CHECK_GOT(r, 1, "<a1>");
    CHECK_GOT(r, 2, "<b1>");
    CHECK_GOT(r, 3, "");
    CHECK_INT(wait_of(r), -1);
    freeReplyObject(r);
    limits(three, 3, T0 + 50000);
    r = cycle("abc", 0, &d, NULL);
    CHECK_GOT(r, 0, "");
    CHECK_INT(wait_of(r), 50000); /* a at T0 + 100 ms, b at T0 + 500 ms */
    CHECK_NS("@:cwork:rate_limit:a string ttl=1 1700000000100000\n"
             "@:cwork:rate_limit:b string ttl=1 1700000000500000\n"
             "@:cwork:rate_limits hash a=10/1s | b=2/1s | c=1/1h\n"
             "@:jobs:a list <a3> | <a2>\n"
             "@:jobs:a:" POOL ":inprogress list <a1>\n"
             "@:jobs:a:lock string 1\n"
             "@:jobs:a:lock_info hash " POOL "=1\n"
             "@:jobs:b list <b3> | <b2>\n"
             "@:jobs:b:" POOL ":inprogress list <b1>\n"
             "@:jobs:b:lock string 1\n"
             "@:jobs:b:lock_info hash " POOL "=1\n"
             "@:jobs:c list <c3> | <c2> | <c1>\n"
             "@:jobs:c:paused string 1\n");
    limits(NULL, 0, -1);
    done(r);
}

/* A damaged setting or state: the type is not fetched (never over its limit), the
 * others are, and the reply names the problem. */
static void a_damaged_limit_stops_only_its_type(void)
{
    fresh();
    cmd("HSET %s:cwork:rate_limits a abc b 5/1s", ns_);
    cmd("HSET %s:cwork:rate_limit:b x 1", ns_); /* a hash where a time belongs */
    push('a', 1, 2);
    push('b', 1, 2);
    push('c', 1, 2);
    drawbuf d = draws(1, "abc", 2);
    limits(a_and_b, 2, T0);
    redisReply *r = cycle("abc", 0, &d, NULL);
    CHECK_GOT(r, 3, "<c1> | <c2>");
    CHECK_GOT(r, 1, "");
    CHECK_GOT(r, 2, "");
    char errs[512];
    errors_of(r, errs, sizeof errs);
    CHECK(strstr(errs, "1 rate_limit: not N/DURATION: abc: type not fetched") != NULL);
    CHECK(strstr(errs, "2 rate_limit: WRONGTYPE") != NULL);
    limits(NULL, 0, -1);
    done(r);
}

/* Without an injected time the script reads Redis' TIME. */
static void without_an_injected_time_redis_time_is_used(void)
{
    fresh();
    cmd("HSET %s:cwork:rate_limits a 1/1m", ns_);
    push('a', 1, 2);
    drawbuf d = draws(1, "a", 2);
    redisReply *t = tl_cmd(rc_, "TIME");
    long long before = atoll(t->element[0]->str) * 1000000 + atoll(t->element[1]->str);
    freeReplyObject(t);
    limits(only_a, 1, -1);
    redisReply *r = cycle("a", 0, &d, NULL);
    CHECK_GOT(r, 1, "<a1>");
    freeReplyObject(r);
    t = tl_cmd(rc_, "TIME");
    long long after = atoll(t->element[0]->str) * 1000000 + atoll(t->element[1]->str);
    freeReplyObject(t);
    redisReply *s = tl_cmd(rc_, "GET %s:cwork:rate_limit:a", ns_);
    long long tat = s->type == REDIS_REPLY_STRING ? atoll(s->str) : 0;
    freeReplyObject(s);
    CHECK(tat >= before + 60000000 && tat <= after + 60000000);
    r = cycle("a", 0, &d, NULL);
    CHECK_GOT(r, 1, "");
    CHECK(wait_of(r) > 0 && wait_of(r) <= 60000000);
    limits(NULL, 0, -1);
    done(r);
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(a_limited_type_gives_one_job_per_interval);
    RUN(starts_over_a_long_run_keep_the_interval);
    RUN(a_type_passed_without_a_limit_is_not_limited);
    RUN(a_changed_limit_holds_from_the_next_start);
    RUN(two_limited_types_and_a_paused_one);
    RUN(a_damaged_limit_stops_only_its_type);
    RUN(without_an_injected_time_redis_time_is_used);
    redisFree(rc_);
    return tl_finish();
}
