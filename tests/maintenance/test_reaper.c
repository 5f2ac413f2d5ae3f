/* The dead pool reaper (PROTOCOL §9): for each pass, Redis set up as a crashed Go pool
 * leaves it, one cycle, then every key of the namespace checked. */
#include "clock_testutil.h"
#include "cwork.h"
#include "keys.h"
#include "reaper.h"
#include "reaper_lock.h"
#include "testlib.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define DEAD "deaddeaddeaddeaddeaddead"
#define LIVE "a11ea11ea11ea11ea11ea11e"
#define GHOST "0000000000000000000ghost"

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];
static cw_keys keys_;
static char want_[4096];

static void fresh(const char *tag)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    cw_keys_clear(&keys_);
    cw_keys_init(&keys_, ns_);
}

static void cmd(const char *fmt, const char *a, const char *b)
{
    char full[512];
    snprintf(full, sizeof full, fmt, ns_, a, b);
    redisReply *r = redisCommand(rc_, full);
    if (!r || r->type == REDIS_REPLY_ERROR)
        tl_fail(__FILE__, __LINE__, "setup command failed: %s", full);
    if (r) freeReplyObject(r);
}

static int cycle(const char *const *registered, size_t n)
{
    cw_reaper *r = cw_reaper_new(redis_, &keys_, registered, n, 300, NULL, NULL);
    int ran = -1;
    cwork_error err = {0};
    if (cw_reaper_cycle(r, &ran, &err) != 0) tl_fail(__FILE__, __LINE__, "cycle: %s", err.message);
    cw_reaper_free(r);
    return ran;
}

static void check_dump(const char *want)
{
    char *got = tl_ns_dump(rc_, ns_);
    CHECK_STR(got, want);
    free(got);
}

static long long now_(void)
{
    return (long long)time(NULL);
}

/* A Go pool that stopped beating a minute ago, with jobs of a and b in progress. */
static void requeues_jobs_of_pool_with_stale_heartbeat(void)
{
    fresh("reap1");
    char hb[32];
    snprintf(hb, sizeof hb, "%lld", now_() - 60);
    cmd("SADD %s:worker_pools %s", DEAD, "");
    cmd("HSET %s:worker_pools:" DEAD " heartbeat_at %s job_names %s", hb, "a,b");
    cmd("LPUSH %s:jobs:a %s%s", "{\"name\":\"a\",\"id\":\"waiting\"}", "");
    cmd("RPUSH %s:jobs:a:" DEAD ":inprogress %s%s", "{\"name\":\"a\",\"id\":\"j2\"}", "");
    cmd("RPUSH %s:jobs:a:" DEAD ":inprogress %s%s", "{\"name\":\"a\",\"id\":\"j1\"}", "");
    cmd("RPUSH %s:jobs:b:" DEAD ":inprogress %s%s", "{\"name\":\"b\",\"id\":\"k1\"}", "");
    cmd("SET %s:jobs:a:lock 2%s%s", "", "");
    cmd("SET %s:jobs:b:lock 1%s%s", "", "");
    cmd("HSET %s:jobs:a:lock_info " DEAD " %s%s", "2", "");
    cmd("HSET %s:jobs:b:lock_info " DEAD " %s%s", "1", "");
    const char *mine[] = {"a"};
    CHECK_INT(cycle(mine, 1), 1);
    /* j1 (the oldest, at the right) moved first: the queue reads j2, j1, waiting. */
    snprintf(want_, sizeof want_,
             "%s:jobs:a list {\"name\":\"a\",\"id\":\"j2\"} | {\"name\":\"a\",\"id\":\"j1\"} | "
             "{\"name\":\"a\",\"id\":\"waiting\"}\n"
             "%s:jobs:a:lock string 0\n"
             "%s:jobs:b list {\"name\":\"b\",\"id\":\"k1\"}\n"
             "%s:jobs:b:lock string 0\n",
             ns_, ns_, ns_, ns_);
    check_dump(want_);
    tl_ns_delete(rc_, ns_);
}

/* In worker_pools without any heartbeat hash: Go only frees its slots and orphans its
 * jobs (PROTOCOL §16.11); cwork requeues them for every known name. */
static void requeues_jobs_of_pool_without_heartbeat(void)
{
    fresh("reap2");
    cmd("SADD %s:worker_pools %s%s", DEAD, "");
    cmd("SADD %s:known_jobs %s%s", "other", "");
    cmd("RPUSH %s:jobs:other:" DEAD ":inprogress %s%s", "{\"name\":\"other\",\"id\":\"o1\"}", "");
    cmd("SET %s:jobs:other:lock 1%s%s", "", "");
    cmd("HSET %s:jobs:other:lock_info " DEAD " 1%s%s", "", "");
    const char *mine[] = {"a"};
    CHECK_INT(cycle(mine, 1), 1);
    snprintf(want_, sizeof want_,
             "%s:jobs:other list {\"name\":\"other\",\"id\":\"o1\"}\n"
             "%s:jobs:other:lock string 0\n"
             "%s:known_jobs set other\n",
             ns_, ns_, ns_);
    check_dump(want_);
    tl_ns_delete(rc_, ns_);
}

/* Pass 2: a pool that crashed before its first heartbeat holds a slot and a job. */
static void requeues_jobs_of_unknown_pool(void)
{
    fresh("reap3");
    cmd("RPUSH %s:jobs:a:" GHOST ":inprogress %s%s", "{\"name\":\"a\",\"id\":\"g1\"}", "");
    cmd("SET %s:jobs:a:lock 1%s%s", "", "");
    cmd("HSET %s:jobs:a:lock_info " GHOST " 1%s%s", "", "");
    const char *mine[] = {"a"};
    CHECK_INT(cycle(mine, 1), 1);
    snprintf(want_, sizeof want_,
             "%s:jobs:a list {\"name\":\"a\",\"id\":\"g1\"}\n"
             "%s:jobs:a:lock string 0\n",
             ns_, ns_);
    check_dump(want_);
    tl_ns_delete(rc_, ns_);
}

/* Pass 3 and a live pool: the lock is set to the sum of lock_info; nothing of the live
 * pool (fresh heartbeat, jobs in progress) is touched. */
static void fixes_dangling_locks_and_never_touches_a_live_pool(void)
{
    fresh("reap4");
    char hb[32];
    snprintf(hb, sizeof hb, "%lld", now_());
    cmd("SADD %s:worker_pools %s%s", LIVE, "");
    cmd("HSET %s:worker_pools:" LIVE " heartbeat_at %s job_names %s", hb, "a");
    cmd("RPUSH %s:jobs:a:" LIVE ":inprogress %s%s", "{\"name\":\"a\",\"id\":\"busy\"}", "");
    cmd("SET %s:jobs:a:lock 5%s%s", "", "");
    cmd("HSET %s:jobs:a:lock_info " LIVE " 1%s%s", "", "");
    cmd("SET %s:jobs:b:lock 1%s%s", "", "");
    cmd("SADD %s:known_jobs b%s%s", "", "");
    char *before = tl_ns_dump(rc_, ns_);
    const char *mine[] = {"a"};
    CHECK_INT(cycle(mine, 1), 1);
    /* Only the two lock values changed: a 5 → 1 (its lock_info sum), b 1 → 0. */
    snprintf(want_, sizeof want_,
             "%s:jobs:a:" LIVE ":inprogress list {\"name\":\"a\",\"id\":\"busy\"}\n"
             "%s:jobs:a:lock string 1\n"
             "%s:jobs:a:lock_info hash " LIVE "=1\n"
             "%s:jobs:b:lock string 0\n"
             "%s:known_jobs set b\n"
             "%s:worker_pools set " LIVE "\n"
             "%s:worker_pools:" LIVE " hash heartbeat_at=%s | job_names=a\n",
             ns_, ns_, ns_, ns_, ns_, ns_, ns_, hb);
    check_dump(want_);
    free(before);
    tl_ns_delete(rc_, ns_);
}

/* Another process holds reaper_lock: the cycle does nothing and leaves its lock. */
static void respects_a_lock_held_by_another_process(void)
{
    fresh("reap5");
    cmd("SET %s:reaper_lock %s EX 60", "somebody-elses-token==", "");
    cmd("SADD %s:worker_pools %s%s", DEAD, "");
    cmd("RPUSH %s:jobs:a:" DEAD ":inprogress %s%s", "{\"name\":\"a\",\"id\":\"x\"}", "");
    char *before = tl_ns_dump(rc_, ns_);
    const char *mine[] = {"a"};
    CHECK_INT(cycle(mine, 1), 0);
    check_dump(before);
    free(before);
    tl_ns_delete(rc_, ns_);
}

/* Two reapers at once: each cycle either holds the lock alone or skips. */
static int racing_ran_[2];

static void *race(void *arg)
{
    int i = (int)(intptr_t)arg;
    const char *mine[] = {"a"};
    cw_reaper *r = cw_reaper_new(redis_, &keys_, mine, 1, 300, NULL, NULL);
    for (int k = 0; k < 20; k++) {
        int ran = 0;
        cw_reaper_cycle(r, &ran, NULL);
        racing_ran_[i] += ran;
    }
    cw_reaper_free(r);
    return NULL;
}

static void two_reapers_race_for_the_lock(void)
{
    fresh("reap6");
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, race, (void *)(intptr_t)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    CHECK(racing_ran_[0] + racing_ran_[1] >= 1);
    check_dump(""); /* the lock is always released by its holder */
    tl_ns_delete(rc_, ns_);
}

/* The hook sees what the cycle did; a negative lock is clamped to 0. */
static char hook_seen_[512];

static void on_done(const cwork_reap_result *res, void *ud)
{
    (void)ud;
    size_t n = 0;
    n += (size_t)snprintf(hook_seen_ + n, sizeof hook_seen_ - n,
                          "err=%s dead=", res->error ? res->error : "-");
    for (size_t i = 0; i < res->n_no_heartbeat_jobs; i++)
        n += (size_t)snprintf(hook_seen_ + n, sizeof hook_seen_ - n, "%s;",
                              res->no_heartbeat_jobs[i]);
    n += (size_t)snprintf(hook_seen_ + n, sizeof hook_seen_ - n, " unknown=");
    for (size_t i = 0; i < res->n_unknown_pool_jobs; i++)
        n += (size_t)snprintf(hook_seen_ + n, sizeof hook_seen_ - n, "%s;",
                              res->unknown_pool_jobs[i]);
    n += (size_t)snprintf(hook_seen_ + n, sizeof hook_seen_ - n, " dangling=");
    for (size_t i = 0; i < res->n_dangling_lock_jobs; i++)
        snprintf(hook_seen_ + n, sizeof hook_seen_ - n, "%s;", res->dangling_lock_jobs[i]);
}

static cwork_reap_done hook(void *ud)
{
    (void)ud;
    return on_done;
}

static void hook_reports_every_pass(void)
{
    fresh("reap7");
    char hb[32];
    snprintf(hb, sizeof hb, "%lld", now_() - 30);
    cmd("SADD %s:worker_pools %s%s", DEAD, "");
    cmd("HSET %s:worker_pools:" DEAD " heartbeat_at %s job_names %s", hb, "a");
    cmd("SET %s:jobs:a:lock 0%s%s", "", "");
    cmd("HSET %s:jobs:a:lock_info " DEAD " 2%s%s", "", "");  /* lock would go to -2 */
    cmd("HSET %s:jobs:a:lock_info " GHOST " 0%s%s", "", ""); /* a stopped Go pool's 0 */
    cmd("SET %s:jobs:c:lock 3%s%s", "", "");
    cmd("SADD %s:known_jobs c%s%s", "", "");
    const char *mine[] = {"a"};
    cw_reaper *r = cw_reaper_new(redis_, &keys_, mine, 1, 300, hook, NULL);
    int ran = 0;
    CHECK_INT(cw_reaper_cycle(r, &ran, NULL), 0);
    cw_reaper_free(r);
    CHECK_STR(hook_seen_, "err=- dead=a; unknown=a; dangling=c;");
    snprintf(want_, sizeof want_,
             "%s:jobs:a:lock string 0\n%s:jobs:c:lock string 0\n%s:known_jobs set c\n", ns_, ns_,
             ns_);
    check_dump(want_);
    tl_ns_delete(rc_, ns_);
}

static void cheap_check_sees_stale_and_missing_heartbeats(void)
{
    fresh("reap8");
    const char *mine[] = {"a"};
    cw_reaper *r = cw_reaper_new(redis_, &keys_, mine, 1, 300, NULL, NULL);
    int seen = -1;
    CHECK_INT(cw_reaper_check(r, &seen, NULL), 0);
    CHECK_INT(seen, 0);
    char hb[32];
    snprintf(hb, sizeof hb, "%lld", now_());
    cmd("SADD %s:worker_pools %s%s", LIVE, "");
    cmd("HSET %s:worker_pools:" LIVE " heartbeat_at %s job_names %s", hb, "a");
    CHECK_INT(cw_reaper_check(r, &seen, NULL), 0);
    CHECK_INT(seen, 0);
    cmd("SADD %s:worker_pools %s%s", DEAD, ""); /* no heartbeat hash */
    CHECK_INT(cw_reaper_check(r, &seen, NULL), 0);
    CHECK_INT(seen, 1);
    cw_reaper_free(r);
    tl_ns_delete(rc_, ns_);
}

/* ---- the reaper lock: a short lease naming its holder (issue 14 defect 3) */

static void holder_of_a_lock_value(void)
{
    static const struct {
        const char *value;
        int cwork;
        const char *pool;
    } cases[] = {
        {"cwork:" LIVE ":dGhpcyBpcyBhIHRva2VuIQ==", 1, LIVE},
        {"cwork::dGhpcyBpcyBhIHRva2VuIQ==", 1, ""},
        {"dGhpcyBpcyBhIHRva2VuIQ==", 0, ""}, /* Go's token (and cwork's before leases) */
        {"cwork:" LIVE, 0, ""},              /* no token: someone else's value */
        {"cwork", 0, ""},
        {"", 0, ""},
        {"CWORK:x:y", 0, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char pool[65] = "junk";
        int got = cw_reaper_lock_holder(cases[i].value, strlen(cases[i].value), pool, sizeof pool);
        if (got != cases[i].cwork || strcmp(pool, cases[i].pool) != 0)
            tl_fail(__FILE__, __LINE__, "%s: got %d '%s', want %d '%s'", cases[i].value, got, pool,
                    cases[i].cwork, cases[i].pool);
    }
    char small[4];
    CHECK_INT(cw_reaper_lock_holder("cwork:abcdef:t", 14, small, sizeof small), 1);
    CHECK_STR(small, "abc");
}

/* What the lock looks like while a cycle runs, seen from the hook and from its
 * completion callback. */
static char lock_seen_[128], lock_at_end_[128];
static long long ttl_seen_, ttl_at_end_;
static long hook_sleep_ms_;
static int steal_in_hook_;

static void read_lock(char *value, size_t size, long long *ttl)
{
    redisReply *v = tl_cmd(rc_, "GET %s:reaper_lock", ns_);
    snprintf(value, size, "%s", v->type == REDIS_REPLY_STRING ? v->str : "(none)");
    freeReplyObject(v);
    redisReply *t = tl_cmd(rc_, "PTTL %s:reaper_lock", ns_);
    *ttl = t->integer;
    freeReplyObject(t);
}

static void lock_done(const cwork_reap_result *res, void *ud)
{
    (void)ud;
    read_lock(lock_at_end_, sizeof lock_at_end_, &ttl_at_end_);
    snprintf(hook_seen_, sizeof hook_seen_, "%s", res->error ? res->error : "-");
}

/* The cycle "takes" hook_sleep_ms_: on the manual clock (clock_testutil.h), which the
 * lease's renewal follows, and in Redis, where the lock's TTL is cut by as much, as if
 * that time had passed there too. */
static cwork_reap_done lock_hook(void *ud)
{
    (void)ud;
    read_lock(lock_seen_, sizeof lock_seen_, &ttl_seen_);
    cw_clock_advance_ms(hook_sleep_ms_);
    freeReplyObject(tl_cmd(rc_, "PEXPIRE %s:reaper_lock %lld", ns_,
                           ttl_seen_ - hook_sleep_ms_ > 0 ? ttl_seen_ - hook_sleep_ms_ : 1));
    if (steal_in_hook_) /* as if the lease had run out and another reaper had taken it */
        freeReplyObject(tl_cmd(rc_, "SET %s:reaper_lock someone-else PX 60000", ns_));
    return lock_done;
}

static cw_reaper *lock_reaper(void)
{
    const char *mine[] = {"a"};
    cw_reaper *r = cw_reaper_new(redis_, &keys_, mine, 1, 300, lock_hook, NULL);
    CHECK_INT(cw_reaper_set_pool_id(r, LIVE), 0);
    return r;
}

/* The value names the pool, the TTL is the lease (not the 300 s period); a cycle that
 * outlasts the renewal interval renews it; the lock is gone afterwards. */
static void lock_is_a_renewed_lease_naming_its_holder(void)
{
    fresh("lease");
    hook_sleep_ms_ = 2000, steal_in_hook_ = 0;
    clock_start_manual();
    cw_reaper *r = lock_reaper();
    CHECK_INT(cw_reaper_set_pool_id(r, "a:b"), CWORK_EINVAL);
    int ran = 0;
    CHECK_INT(cw_reaper_cycle(r, &ran, NULL), 0);
    CHECK_INT(ran, 1);
    cw_reaper_free(r);
    cw_clock_system();
    CHECK(strncmp(lock_seen_, "cwork:" LIVE ":", 31) == 0 && strlen(lock_seen_) == 31 + 24);
    CHECK(ttl_seen_ > 0 && ttl_seen_ <= CW_REAPER_LEASE_MS);
    /* Without renewal 2 s of the lease would be gone by the end of the cycle. */
    printf("  lease left at the end of a 2 s cycle: %lld ms\n", ttl_at_end_);
    CHECK_STR(lock_at_end_, lock_seen_);
    CHECK(ttl_at_end_ >= CW_REAPER_LEASE_MS - 1000);
    CHECK_STR(hook_seen_, "-");
    check_dump("");
    tl_ns_delete(rc_, ns_);
}

/* A cycle whose lock was lost (its lease ran out and another reaper took it) acts on
 * nothing after that, says so, and leaves the other's lock alone. */
static void a_cycle_that_lost_its_lock_stops(void)
{
    fresh("lost");
    char hb[32];
    snprintf(hb, sizeof hb, "%lld", now_() - 60);
    cmd("SADD %s:worker_pools %s", DEAD, "");
    cmd("HSET %s:worker_pools:" DEAD " heartbeat_at %s job_names %s", hb, "a");
    cmd("RPUSH %s:jobs:a:" DEAD ":inprogress %s%s", "j1", "");
    cmd("SET %s:jobs:a:lock 1%s%s", "", "");
    cmd("HSET %s:jobs:a:lock_info " DEAD " 1%s%s", "", "");
    hook_sleep_ms_ = CW_REAPER_RENEW_MS + 200, steal_in_hook_ = 1;
    clock_start_manual();
    cw_reaper *r = lock_reaper();
    int ran = 0;
    CHECK_INT(cw_reaper_cycle(r, &ran, NULL), 0);
    cw_reaper_free(r);
    cw_clock_system();
    CHECK(strstr(hook_seen_, "lock: the reaper lock's lease ran out") != NULL);
    snprintf(want_, sizeof want_,
             "%s:jobs:a:" DEAD ":inprogress list j1\n"
             "%s:jobs:a:lock string 1\n"
             "%s:jobs:a:lock_info hash " DEAD "=1\n"
             "%s:reaper_lock string ttl=60 someone-else\n"
             "%s:worker_pools set " DEAD "\n"
             "%s:worker_pools:" DEAD " hash heartbeat_at=%s | job_names=a\n",
             ns_, ns_, ns_, ns_, ns_, ns_, hb);
    check_dump(want_);
    tl_ns_delete(rc_, ns_);
}

/* A Go reaper's lock (its token, its TTL) is never touched, however long it blocks;
 * the blocking is logged once at info level, once more as a warning when it still
 * blocks a later attempt, and then no more. */
static void a_go_lock_is_respected_and_logged_once(void)
{
    fresh("golock");
    cmd("SET %s:reaper_lock %s EX 60%s", "dGhpcyBpcyBhIHRva2VuIQ==", "");
    cmd("SADD %s:worker_pools %s%s", DEAD, "");
    char *before = tl_ns_dump(rc_, ns_);
    tl_capture_logs();
    const char *mine[] = {"a"};
    cw_reaper *r = cw_reaper_new(redis_, &keys_, mine, 1, 300, NULL, NULL);
    for (int i = 0; i < 4; i++) {
        int ran = -1;
        CHECK_INT(cw_reaper_cycle(r, &ran, NULL), 0);
        CHECK_INT(ran, 0);
    }
    check_dump(before);
    CHECK_INT(tl_count_logs("Reaper: locked by another process"), 1);
    CHECK_INT(tl_count_logs("Reaper: still locked by another process, dead pools wait"), 1);
    CHECK_INT(tl_count_logs("Reaper: trying to acquire lock..."), 1);
    const tl_log *l = tl_find_log("Reaper: locked by another process");
    CHECK(l && l->level == CWORK_LOG_INFO &&
          strstr(l->fields, "holder=a Go reaper or cwork before leases") &&
          strstr(l->fields, "ttl_ms="));
    l = tl_find_log("Reaper: still locked by another process, dead pools wait");
    CHECK(l && l->level == CWORK_LOG_WARN);
    /* Another lock, by a cwork pool: logged again, naming it. */
    cmd("SET %s:reaper_lock cwork:" LIVE ":dGhpcyBpcyBhIHRva2VuIQ== PX 4000%s%s", "", "");
    int ran = -1;
    CHECK_INT(cw_reaper_cycle(r, &ran, NULL), 0);
    CHECK_INT(ran, 0);
    CHECK_INT(tl_count_logs("Reaper: locked by another process"), 2);
    CHECK(strstr(tl_logs[tl_nlogs - 1].fields, "holder=cwork pool " LIVE) != NULL);
    /* Once it is gone, a cycle runs. */
    cmd("DEL %s:reaper_lock%s%s", "", "");
    CHECK_INT(cw_reaper_cycle(r, &ran, NULL), 0);
    CHECK_INT(ran, 1);
    cw_reaper_free(r);
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    free(before);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cw_keys_init(&keys_, "x");
    RUN(requeues_jobs_of_pool_with_stale_heartbeat);
    RUN(requeues_jobs_of_pool_without_heartbeat);
    RUN(requeues_jobs_of_unknown_pool);
    RUN(fixes_dangling_locks_and_never_touches_a_live_pool);
    RUN(respects_a_lock_held_by_another_process);
    RUN(two_reapers_race_for_the_lock);
    RUN(hook_reports_every_pass);
    RUN(cheap_check_sees_stale_and_missing_heartbeats);
    RUN(holder_of_a_lock_value);
    RUN(lock_is_a_renewed_lease_naming_its_holder);
    RUN(a_cycle_that_lost_its_lock_stops);
    RUN(a_go_lock_is_respected_and_logged_once);
    cw_keys_clear(&keys_);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
