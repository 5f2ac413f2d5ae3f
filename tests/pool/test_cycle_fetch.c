/* The cycle script's fetch (src/scripts/cycle.lua), run directly against a real Redis:
 * a plain batch, queues running short (the re-assignment path), mixed draw orders
 * against a model of Go's one-draw-per-call fetch (fixed cases and seeded random
 * rounds), pause, max concurrency, the lock counters, the single-job path, two-byte
 * draws (also with indices past 255) and the empty call. Each case checks the reply and the whole
 * namespace. */
#include "cycle_testutil.h"

/* ---------------------------------------------------------------- fetch cases */

/* One type's state for a fetch-only case: jobs 1..queued pushed, the got oldest of them
 * expected fetched; paused, max_concurrency and lock set before (NULL: no key). */
typedef struct tstate {
    int queued, got;
    const char *paused, *mc, *lock0;
} tstate;

/* The expected namespace after the fetch, as a template. */
static void model(const char *types, const tstate *st, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int t = 0; types[t]; t++) {
        char c = types[t];
        const tstate *s = &st[t];
        if (s->queued > s->got) {
            app(buf, size, "@:jobs:%c list ", c);
            seq(buf, size, c, s->queued, s->got + 1);
            app(buf, size, "\n");
        }
        if (s->got) {
            app(buf, size, "@:jobs:%c:" POOL ":inprogress list ", c);
            seq(buf, size, c, s->got, 1);
            app(buf, size, "\n");
            app(buf, size, "@:jobs:%c:lock string %lld\n", c,
                (s->lock0 ? atoll(s->lock0) : 0) + s->got);
            app(buf, size, "@:jobs:%c:lock_info hash " POOL "=%d\n", c, s->got);
        } else if (s->lock0) {
            app(buf, size, "@:jobs:%c:lock string %s\n", c, s->lock0);
        }
        if (s->mc) app(buf, size, "@:jobs:%c:max_concurrency string %s\n", c, s->mc);
        if (s->paused) app(buf, size, "@:jobs:%c:paused string %s\n", c, s->paused);
    }
}

/* In a fresh namespace: sets st up, runs one fetch of d, checks the reply and the
 * namespace against st. */
static void fetch_case(int line, const char *types, const tstate *st, int single, const drawbuf *d)
{
    fresh();
    for (int t = 0; types[t]; t++) {
        push(types[t], 1, st[t].queued);
        if (st[t].paused) set(types[t], ":paused", st[t].paused);
        if (st[t].mc) set(types[t], ":max_concurrency", st[t].mc);
        if (st[t].lock0) set(types[t], ":lock", st[t].lock0);
    }
    redisReply *r = cycle(types, single, d, NULL);
    check_removed(line, r, 0);
    int total = 0;
    for (int t = 0; types[t]; t++) {
        char want[BIG] = "";
        if (st[t].got) seq(want, sizeof want, types[t], 1, st[t].got);
        check_got(line, r, t + 1, want);
        total += st[t].got;
    }
    char want[BIG];
    if (fetched(r, 0, want, sizeof want) != total)
        tl_fail(__FILE__, line, "the reply holds jobs of other types: %s", want);
    model(types, st, want, sizeof want);
    check_ns(line, want);
    done(r);
}

/* Go's fetch, one draw per call: the first type in the draw's order that is not paused,
 * has a job left and may run (no max concurrency, no lock counter, or lock < limit). */
static void simulate(int n, tstate *st, const drawbuf *d)
{
    double lock[MAXT];
    int has_lock[MAXT];
    for (int t = 0; t < n; t++) {
        st[t].got = 0;
        has_lock[t] = st[t].lock0 != NULL;
        lock[t] = has_lock[t] ? atof(st[t].lock0) : 0;
    }
    for (size_t at = 0; at + (size_t)n <= d->len; at += (size_t)n)
        for (int i = 0; i < n; i++) {
            int t = (int)d->idx[at + (size_t)i];
            double limit = st[t].mc ? atof(st[t].mc) : 0;
            if (st[t].paused || st[t].got == st[t].queued ||
                (limit != 0 && has_lock[t] && lock[t] >= limit))
                continue;
            st[t].got++;
            lock[t]++;
            has_lock[t] = 1;
            break;
        }
}

/* 1. */
static void plain_batch_takes_the_oldest_jobs_of_the_first_type(void)
{
    fresh();
    push('a', 1, 5);
    push('b', 1, 5);
    drawbuf d = draws(1, "ab", 4);
    redisReply *r = cycle("ab", 0, &d, NULL);
    CHECK_REMOVED(r, 0);
    CHECK_GOT(r, 1, "<a1> | <a2> | <a3> | <a4>");
    CHECK_GOT(r, 2, "");
    CHECK_NS("@:jobs:a list <a5>\n"
             "@:jobs:a:" POOL ":inprogress list <a4> | <a3> | <a2> | <a1>\n"
             "@:jobs:a:lock string 4\n"
             "@:jobs:a:lock_info hash " POOL "=4\n"
             "@:jobs:b list <b5> | <b4> | <b3> | <b2> | <b1>\n");
    done(r);
}

/* 2, 9 and 10: the same end state by every path. */
static void a_queue_running_short_hands_its_draws_on(void)
{
    const tstate st[2] = {{3, 3, NULL, NULL, NULL}, {20, 7, NULL, NULL, NULL}};
    for (int single = 0; single <= 1; single++)
        for (int width = 1; width <= 2; width++) {
            drawbuf d = draws(width, "ab", 10);
            fetch_case(__LINE__, "ab", st, single, &d);
        }
}

/* 3: fixed orders, then seeded random rounds, against the one-draw-at-a-time model. */
static void mixed_orders_match_the_per_draw_model(void)
{
    static const struct {
        int qa, qb;
        const char *orders; /* draws separated by spaces */
    } fixed[] = {
        {2, 6, "ab ab ab ab ab ba ba"},    /* a empties: later [a,b] draws fall to b */
        {4, 2, "ba ba ba ab ab ab"},       /* b empties first */
        {3, 3, "ab ba ab ba ab ba ab ba"}, /* more draws than jobs */
        {5, 5, "ba ab ba ab"},
        {0, 0, "ab ba"},
    };
    for (size_t f = 0; f < sizeof fixed / sizeof fixed[0]; f++)
        for (int width = 1; width <= 2; width++) {
            tstate st[2] = {{fixed[f].qa, 0, NULL, NULL, NULL}, {fixed[f].qb, 0, NULL, NULL, NULL}};
            drawbuf d = draws(width, fixed[f].orders, 1);
            simulate(2, st, &d);
            fetch_case(__LINE__, "ab", st, 0, &d);
        }
    /* Three types, pause and max concurrency too. */
    static const char *const mcs[] = {NULL, NULL, "0", "1", "2"};
    static const char *const locks[] = {NULL, NULL, "0", "1"};
    unsigned seed = 20240601u;
    for (int round = 0; round < 40 && !tl_case_failed; round++) {
#define RND(n) (((seed = seed * 1103515245u + 12345u) >> 16) % (n))
        tstate st[3];
        for (int t = 0; t < 3; t++) {
            st[t].queued = (int)RND(7);
            st[t].paused = RND(6) == 0 ? "" : NULL;
            st[t].mc = mcs[RND(5)];
            st[t].lock0 = locks[RND(4)];
        }
        int width = 1 + (int)RND(2), ndraws = 1 + (int)RND(12), single = (int)RND(2);
        char orders[64] = "";
        for (int k = 0; k < ndraws; k++) {
            char *o = orders + 4 * k; /* a random permutation of "abc", then a space */
            memcpy(o, "abc ", 5);
            for (int i = 2; i > 0; i--) {
                int j = (int)RND(i + 1);
                char tmp = o[i];
                o[i] = o[j], o[j] = tmp;
            }
        }
#undef RND
        drawbuf d = draws(width, orders, 1);
        simulate(3, st, &d);
        fetch_case(__LINE__, "abc", st, single, &d);
        if (tl_case_failed)
            fprintf(stderr, "  (random round %d: width %d, single %d, draws %s)\n", round, width,
                    single, orders);
    }
}

/* 4. */
static void a_paused_type_gives_nothing_whatever_the_value(void)
{
    static const char *const values[] = {"", "1", "false"};
    for (int v = 0; v < 3; v++) {
        const tstate st[2] = {{2, 0, values[v], NULL, NULL}, {5, 3, NULL, NULL, NULL}};
        drawbuf d = draws(1, "ab", 3);
        fetch_case(__LINE__, "ab", st, 0, &d);
    }
    /* Everything paused: nothing moves and no lock is written. */
    const tstate all[2] = {{2, 0, "", NULL, "1"}, {2, 0, "x", NULL, NULL}};
    drawbuf d = draws(1, "ab", 2);
    fetch_case(__LINE__, "ab", all, 0, &d);
}

/* 5: a has 5 jobs, b has 5, four draws [a,b]. */
static void max_concurrency_caps_a_type_as_go_does(void)
{
    static const struct {
        const char *mc, *lock0;
        int a;
    } rows[] = {
        {"2", "1", 1},   /* room for one */
        {"2", NULL, 2},  /* no counter yet */
        {"-1", NULL, 1}, /* no counter: at least one, whatever the limit */
        {"0.5", NULL, 1}, {"-1", "0", 0}, {"0", "7", 4}, /* 0 = unlimited */
        {"abc", "7", 4}, /* not a number = unlimited (Go's tonumber gives nil) */
        {"2", "2", 0},   /* at the limit */
        {"2", "5", 0},   /* above it */
        {"2.5", "1", 2}, /* 1 < 2.5, 2 < 2.5, 3 not */
        {"3", "-2", 4},  /* a negative counter leaves more room */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const tstate st[2] = {{5, rows[i].a, NULL, rows[i].mc, rows[i].lock0},
                              {5, 4 - rows[i].a, NULL, NULL, NULL}};
        drawbuf d = draws(1, "ab", 4);
        fetch_case(__LINE__, "ab", st, 0, &d);
        if (tl_case_failed) {
            fprintf(stderr, "  (row %zu)\n", i);
            break;
        }
    }
}

/* 8 (the valid counters): MSET for short integers, INCRBY for long ones. */
static void lock_counters_move_by_the_number_fetched(void)
{
    /* the last: past 2^53, so only INCRBY gets it right (19 characters and more count
     * as damaged: see test_cycle_commit) */
    static const char *const locks[] = {
        "5", "0", "-3", "999999999999999", "1000000000000000", "100000000000000001"};
    for (size_t i = 0; i < sizeof locks / sizeof locks[0]; i++) {
        const tstate st[1] = {{3, 2, NULL, NULL, locks[i]}};
        drawbuf d = draws(1, "a", 2);
        fetch_case(__LINE__, "a", st, 0, &d);
    }
}

/* ---------------------------------------------------------------- commits */

/* 11. */
static void an_empty_call_changes_nothing(void)
{
    fresh();
    push('a', 1, 2);
    set('a', ":lock", "1");
    cmd("HSET %s:jobs:a:lock_info " POOL " 1", ns_);
    const char *before = "@:jobs:a list <a2> | <a1>\n"
                         "@:jobs:a:lock string 1\n"
                         "@:jobs:a:lock_info hash " POOL "=1\n";
    CHECK_NS(before);
    redisReply *r = cycle("ab", 0, NULL, NULL);
    CHECK_REMOVED(r, 0);
    CHECK_INT(r->elements, 1);
    CHECK_NS(before);
    freeReplyObject(r);
    drawbuf d = draws(2, "", 1);
    r = cycle("ab", 1, &d, NULL); /* empty draws, two-byte width, single path */
    CHECK_REMOVED(r, 0);
    CHECK_INT(r->elements, 1);
    CHECK_NS(before);
    done(r);
}

/* Two-byte draws with indices past 255 (the high byte matters), and a commit group of
 * such a type: 260 types t000…t259, jobs only in t257 (index 258) and t000 (index 1). */
static const char *numbered_name(int t)
{
    static char buf[8];
    snprintf(buf, sizeof buf, "t%03d", t);
    return buf;
}

static void type_indices_past_255_use_both_bytes(void)
{
    enum { N = 260 };
    fresh();
    cmd("LPUSH %s:jobs:t257 j1 j2", ns_);
    cmd("LPUSH %s:jobs:t000 k1", ns_);
    /* Two draws: each tries index 258 (0x0102 in the script's 1-based indices), then
     * index 1. */
    static size_t orders[2 * N];
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < N; i++) /* a permutation of 0..N-1 */
            orders[d * N + i] = (size_t)(i == 0 ? 257 : i == 257 ? 0 : i);
    redisReply *r = cycle_eval(N, numbered_name, 0, orders, 2, 2, NULL, 0, NULL, 0);
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 5);
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 5) {
        CHECK_INT(r->element[1]->integer, 258);
        CHECK_INT(r->element[2]->integer, 2);
        CHECK_STR(r->element[3]->str, "j1");
        CHECK_STR(r->element[4]->str, "j2");
    }
    freeReplyObject(r);
    /* Commit j1 as type 258, no fetch. */
    static const unsigned char groups[6] = {1, 2, 0, 1, 0, 0}; /* one succeeded job */
    static const char *const j1[] = {"j1"};
    r = cycle_eval(N, numbered_name, 0, NULL, 0, 2, groups, sizeof groups, j1, 1);
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->integer == 1);
    CHECK_NS("@:jobs:t000 list k1\n"
             "@:jobs:t257:" POOL ":inprogress list j2\n"
             "@:jobs:t257:lock string 1\n"
             "@:jobs:t257:lock_info hash " POOL "=1\n");
    done(r);
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(plain_batch_takes_the_oldest_jobs_of_the_first_type);
    RUN(a_queue_running_short_hands_its_draws_on);
    RUN(mixed_orders_match_the_per_draw_model);
    RUN(a_paused_type_gives_nothing_whatever_the_value);
    RUN(max_concurrency_caps_a_type_as_go_does);
    RUN(lock_counters_move_by_the_number_fetched);
    RUN(type_indices_past_255_use_both_bytes);
    RUN(an_empty_call_changes_nothing);
    redisFree(rc_);
    return tl_finish();
}
