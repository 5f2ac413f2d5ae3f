/* The cycle script's commit and lock accounting (src/scripts/cycle.lua), run directly
 * against a real Redis: release and forwarding to retry/dead/dropped, jobs a reaper
 * already took, several groups, commit and fetch in one call, and counters and keys
 * damaged by someone else (never failing the call, losing a job or costing other types
 * their accounting). Each case checks the reply and the whole namespace. */
#include "cycle_testutil.h"

/* Fetches count jobs of the type first in order (setup for a commit). */
static void fetch(const char *types, const char *order, int count)
{
    drawbuf d = draws(1, order, count);
    redisReply *r = cycle(types, 0, &d, NULL);
    char got[BIG];
    if (fetched(r, order[0] - 'a' + 1, got, sizeof got) != count)
        tl_fail(__FILE__, __LINE__, "setup fetch of %d %s jobs: %s", count, order, got);
    freeReplyObject(r);
}

#define X_A3 "{\"name\":\"a\",\"id\":\"a3\",\"fails\":1,\"err\":\"x\"}"

/* 6. */
static void commit_releases_and_forwards_what_it_removes(void)
{
    fresh();
    push('a', 1, 3);
    fetch("a", "a", 3);
    commit c = {0};
    group(&c, 1, 2, 1);
    args(&c, "<a1>", "<a2>", "<a3>", "r", "123", X_A3, NULL);
    redisReply *r = cycle("a", 0, NULL, &c);
    CHECK_REMOVED(r, 3);
    CHECK_INT(r->elements, 1);
    CHECK_NS("@:jobs:a:lock string 0\n"
             "@:jobs:a:lock_info hash " POOL "=0\n"
             "@:retry zset " X_A3 "=123\n");
    done(r);
}

static void commit_to_dead_dropped_and_already_reaped(void)
{
    fresh();
    push('a', 1, 4);
    fetch("a", "a", 4);
    commit c = {0};
    group(&c, 1, 1, 3);
    /* a9 succeeded and a7 failed, but a reaper took them: not in in-progress */
    args(&c, "<a9>", "<a1>", "d", "50", "{\"id\":\"a1\",\"fails\":9}", "<a2>", "-", "0", "", "<a7>",
         "r", "7", "{\"id\":\"a7\"}", NULL);
    redisReply *r = cycle("a", 0, NULL, &c);
    /* their positions in the commit's arguments: a9 the 1st, a7 the 10th (after the
     * four arguments of a1 and of a2) */
    CHECK_NOT_REMOVED(r, 2, "1 10");
    CHECK_INT(r->elements, 1);
    CHECK_NS("@:dead zset {\"id\":\"a1\",\"fails\":9}=50\n"
             "@:jobs:a:" POOL ":inprogress list <a4> | <a3>\n"
             "@:jobs:a:lock string 2\n"
             "@:jobs:a:lock_info hash " POOL "=2\n");
    done(r);
}

/* Succeeded jobs group by group, then failed ones group by group. */
static void commit_of_several_groups_reads_its_arguments_in_order(void)
{
    fresh();
    push('a', 1, 2);
    push('b', 1, 3);
    fetch("ab", "ab", 2);
    fetch("ab", "ba", 2);
    commit c = {0};
    group(&c, 1, 1, 1);
    group(&c, 2, 1, 1);
    args(&c, "<a1>", "<b1>", "<a2>", "r", "10", "{\"id\":\"a2\"}", "<b2>", "d", "20",
         "{\"id\":\"b2\"}", NULL);
    redisReply *r = cycle("ab", 0, NULL, &c);
    CHECK_REMOVED(r, 4);
    CHECK_INT(r->elements, 1);
    CHECK_NS("@:dead zset {\"id\":\"b2\"}=20\n"
             "@:jobs:a:lock string 0\n"
             "@:jobs:a:lock_info hash " POOL "=0\n"
             "@:jobs:b list <b3>\n"
             "@:jobs:b:lock string 0\n"
             "@:jobs:b:lock_info hash " POOL "=0\n"
             "@:retry zset {\"id\":\"a2\"}=10\n");
    done(r);
}

/* 7. */
static void a_slot_released_by_the_commit_counts_for_the_fetch(void)
{
    fresh();
    set('a', ":max_concurrency", "1");
    push('a', 1, 1);
    fetch("a", "a", 1);
    push('a', 2, 3);
    drawbuf d = draws(1, "a", 2);
    redisReply *r = cycle("a", 0, &d, NULL); /* at the limit: nothing */
    CHECK_REMOVED(r, 0);
    CHECK_INT(r->elements, 1);
    freeReplyObject(r);
    commit c = {0};
    group(&c, 1, 1, 0);
    args(&c, "<a1>", NULL);
    r = cycle("a", 0, &d, &c);
    CHECK_REMOVED(r, 1);
    CHECK_GOT(r, 1, "<a2>");
    CHECK_NS("@:jobs:a list <a3>\n"
             "@:jobs:a:" POOL ":inprogress list <a2>\n"
             "@:jobs:a:lock string 1\n"
             "@:jobs:a:lock_info hash " POOL "=1\n"
             "@:jobs:a:max_concurrency string 1\n");
    done(r);
}

/* The write errors a cycle reply reports (its type-0 group), "t:text" joined by
 * " | ", or "" when there are none. */
static void cycle_errors(const redisReply *r, char *buf, size_t size)
{
    buf[0] = '\0';
    for (size_t i = 1; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements;) {
        long long type = r->element[i]->integer, m = r->element[i + 1]->integer;
        if (type == 0)
            for (size_t j = i + 2; j + 1 < i + 2 + (size_t)m; j += 2)
                app(buf, size, "%s%lld:%s", buf[0] ? " | " : "", r->element[j]->integer,
                    r->element[j + 1]->str);
        i += 2 + (size_t)m;
    }
}

/* 8 (an invalid counter): Go's fetch would RPOPLPUSH and then fail on INCR, failing the
 * whole call. Here the type is simply not fetched: its draws fall through to the next
 * type, nothing is moved and nothing fails. */
static void a_type_with_a_non_integer_lock_is_not_fetched(void)
{
    /* Not an integer, too long for INCRBY to be sure to take it, a hash. */
    static const char *const bad[] = {"abc", "9223372036854775807", NULL};
    for (int i = 0; i < 3; i++) {
        fresh();
        if (bad[i]) {
            set('a', ":lock", bad[i]);
        } else {
            cmd("HSET %s:jobs:a:lock x 1", ns_);
            set('a', ":max_concurrency", "5"); /* the counter is read for a limit */
        }
        push('a', 1, 1);
        push('b', 1, 1);
        drawbuf d = draws(1, "ab", 2);
        redisReply *r = cycle("ab", 0, &d, NULL);
        CHECK_REMOVED(r, 0);
        CHECK_GOT(r, 1, "");
        CHECK_GOT(r, 2, "<b1>");
        char errors[512], want[600];
        cycle_errors(r, errors, sizeof errors);
        CHECK(strncmp(errors, "1:lock: ", 8) == 0); /* reported (the pool logs it) */
        snprintf(want, sizeof want,
                 "@:jobs:a list <a1>\n"
                 "%s"
                 "@:jobs:b:" POOL ":inprogress list <b1>\n"
                 "@:jobs:b:lock string 1\n"
                 "@:jobs:b:lock_info hash " POOL "=1\n",
                 !bad[i] ? "@:jobs:a:lock hash x=1\n@:jobs:a:max_concurrency string 5\n"
                 : strcmp(bad[i], "abc") == 0 ? "@:jobs:a:lock string abc\n"
                                              : "@:jobs:a:lock string 9223372036854775807\n");
        CHECK_NS(want);
        done(r);
    }
}

/* Go's commit DECRs a missing counter into existence (-1), so the fetch of the same call
 * meets a counter: the "at least one while there is no counter" rule no longer holds. */
static void a_release_creates_the_counter_the_limit_then_reads(void)
{
    fresh();
    push('a', 1, 2);
    fetch("a", "a", 1);
    cmd("DEL %s:jobs:a:lock", ns_);
    set('a', ":max_concurrency", "-1");
    commit c = {0};
    group(&c, 1, 1, 0);
    args(&c, "<a1>", NULL);
    drawbuf d = draws(1, "a", 1);
    redisReply *r = cycle("a", 0, &d, &c); /* Go: DECR → -1; -1 < -1 is false: no fetch */
    CHECK_REMOVED(r, 1);
    CHECK_GOT(r, 1, "");
    CHECK_NS("@:jobs:a list <a2>\n"
             "@:jobs:a:lock string -1\n"
             "@:jobs:a:lock_info hash " POOL "=0\n"
             "@:jobs:a:max_concurrency string -1\n");
    done(r);
}

/* A counter damaged while its job runs: the commit still removes the job and keeps the
 * other types' accounting in step; the failed release is reported, never a failed call
 * (a failed call would leave the LREMs done and every lock unreleased). */
static void a_damaged_lock_never_costs_other_types_their_accounting(void)
{
    fresh();
    push('a', 1, 1);
    push('b', 1, 2);
    fetch("ab", "ab ba", 1); /* a1 and b1 in progress */
    set('a', ":lock", "abc");
    commit c = {0};
    group(&c, 1, 1, 0);
    group(&c, 2, 1, 0);
    args(&c, "<a1>", "<b1>", NULL);
    drawbuf d = draws(1, "ab", 1);
    redisReply *r = cycle("ab", 0, &d, &c); /* commits a1 and b1, fetches b2 */
    CHECK_REMOVED(r, 2);
    CHECK_GOT(r, 2, "<b2>");
    char errors[512];
    cycle_errors(r, errors, sizeof errors);
    CHECK(strncmp(errors, "1:lock: ", 8) == 0 && strstr(errors, "not an integer") != NULL);
    CHECK_NS("@:jobs:a:lock string abc\n"
             "@:jobs:a:lock_info hash " POOL "=0\n"
             "@:jobs:b:" POOL ":inprogress list <b2>\n"
             "@:jobs:b:lock string 1\n"
             "@:jobs:b:lock_info hash " POOL "=1\n");
    done(r);
}

/* Keys someone damaged (a wrong type) never fail the call and never lose a job: a job
 * the retry set cannot take goes back to in-progress still holding its lock; a queue or
 * in-progress list of the wrong type gives nothing and its draws fall through; jobs
 * popped for an in-progress list that cannot take them go back to the queue's tail in
 * their order. Each failure is reported in the reply. */
static void damaged_keys_lose_no_job_and_fail_no_call(void)
{
    char errors[512];
    fresh();
    push('a', 1, 2);
    fetch("a", "a", 2);
    cmd("HSET %s:retry x y", ns_);
    commit c = {0};
    group(&c, 1, 1, 1);
    args(&c, "<a1>", "<a2>", "r", "123", "{\"id\":\"a2\"}", NULL);
    redisReply *r = cycle("a", 0, NULL, &c);
    CHECK_NOT_REMOVED(r, 1, "-2"); /* a2, back in in-progress: negative, a write failed */
    cycle_errors(r, errors, sizeof errors);
    CHECK(strncmp(errors, "1:retry ", 8) == 0 && strstr(errors, ":retry: WRONGTYPE") != NULL);
    CHECK_NS("@:jobs:a:" POOL ":inprogress list <a2>\n"
             "@:jobs:a:lock string 1\n"
             "@:jobs:a:lock_info hash " POOL "=1\n"
             "@:retry hash x=y\n");
    done(r);

    /* A queue that is not a list: its draws go to b (one job at a time, and several). */
    drawbuf d;
    for (int batch = 0; batch < 2; batch++) {
        fresh();
        cmd("HSET %s:jobs:a f v", ns_);
        push('b', 1, 3);
        d = draws(1, "ab", batch ? 3 : 2);
        r = cycle("ab", 0, &d, NULL);
        CHECK_GOT(r, 2, batch ? "<b1> | <b2> | <b3>" : "<b1> | <b2>");
        cycle_errors(r, errors, sizeof errors);
        CHECK(strncmp(errors, "1:fetch: WRONGTYPE", 18) == 0);
        CHECK_NS(batch ? "@:jobs:a hash f=v\n"
                         "@:jobs:b:" POOL ":inprogress list <b3> | <b2> | <b1>\n"
                         "@:jobs:b:lock string 3\n"
                         "@:jobs:b:lock_info hash " POOL "=3\n"
                       : "@:jobs:a hash f=v\n"
                         "@:jobs:b list <b3>\n"
                         "@:jobs:b:" POOL ":inprogress list <b2> | <b1>\n"
                         "@:jobs:b:lock string 2\n"
                         "@:jobs:b:lock_info hash " POOL "=2\n");
        done(r);
    }

    /* An in-progress list that is not a list, on both paths: one job at a time (nothing
     * moves) and several at once (popped, then put back in order). */
    for (int single = 1; single >= 0; single--) {
        fresh();
        push('a', 1, 5);
        push('b', 1, 4);
        cmd("SET %s:jobs:a:" POOL ":inprogress x", ns_);
        d = draws(1, "ab", 4);
        r = cycle("ab", single, &d, NULL);
        CHECK_GOT(r, 1, "");
        CHECK_GOT(r, 2, "<b1> | <b2> | <b3> | <b4>");
        cycle_errors(r, errors, sizeof errors);
        CHECK(strstr(errors, "1:") == errors && strstr(errors, "WRONGTYPE") != NULL);
        CHECK_NS("@:jobs:a list <a5> | <a4> | <a3> | <a2> | <a1>\n"
                 "@:jobs:a:" POOL ":inprogress string x\n"
                 "@:jobs:b:" POOL ":inprogress list <b4> | <b3> | <b2> | <b1>\n"
                 "@:jobs:b:lock string 4\n"
                 "@:jobs:b:lock_info hash " POOL "=4\n");
        done(r);
    }

    /* An in-progress list damaged while its job ran: that commit is reported and holds
     * its lock; b's goes through. */
    fresh();
    push('a', 1, 1);
    push('b', 1, 1);
    fetch("ab", "ab ba", 1);
    cmd("DEL %s:jobs:a:" POOL ":inprogress", ns_);
    cmd("SET %s:jobs:a:" POOL ":inprogress x", ns_);
    commit c2 = {0};
    group(&c2, 1, 1, 0);
    group(&c2, 2, 1, 0);
    args(&c2, "<a1>", "<b1>", NULL);
    r = cycle("ab", 0, NULL, &c2);
    CHECK_NOT_REMOVED(r, 1, "-1"); /* negative: its LREM failed, no reaper took it */
    cycle_errors(r, errors, sizeof errors);
    CHECK(strncmp(errors, "1:in-progress ", 14) == 0 &&
          strstr(errors, ":jobs:a:" POOL ":inprogress: WRONGTYPE") != NULL);
    CHECK_NS("@:jobs:a:" POOL ":inprogress string x\n"
             "@:jobs:a:lock string 1\n"
             "@:jobs:a:lock_info hash " POOL "=1\n"
             "@:jobs:b:lock string 0\n"
             "@:jobs:b:lock_info hash " POOL "=0\n");
    done(r);
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(commit_releases_and_forwards_what_it_removes);
    RUN(commit_to_dead_dropped_and_already_reaped);
    RUN(commit_of_several_groups_reads_its_arguments_in_order);
    RUN(a_slot_released_by_the_commit_counts_for_the_fetch);
    RUN(a_type_with_a_non_integer_lock_is_not_fetched);
    RUN(a_release_creates_the_counter_the_limit_then_reads);
    RUN(a_damaged_lock_never_costs_other_types_their_accounting);
    RUN(damaged_keys_lose_no_job_and_fail_no_call);
    redisFree(rc_);
    return tl_finish();
}
