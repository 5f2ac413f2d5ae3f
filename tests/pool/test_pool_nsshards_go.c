/* A Go pool on one shard's namespace beside a sharded cwork pool (issue 23 "Tests";
 * PROTOCOL §27: "a Go pool … pointed at one shard's namespace works there unchanged").
 *
 * No Go toolchain or gocraft/work can be built here, so the Go pool is imitated at the
 * Redis level, in the test's thread, one step at a time, by exactly what PROTOCOL says
 * a Go pool sends:
 *   - its heartbeat (§6): SADD <p>worker_pools, HMSET <p>worker_pools:<id> with
 *     heartbeat_at, started_at, job_names, concurrency, worker_ids, host, pid — and no
 *     `cwork` field, which is how cwork tells a Go pool (§20.5);
 *   - its fetch (§5.4): Go's script, six keys per type (queue, in-progress, paused,
 *     lock, lock_info, max_concurrency), INCR lock, HINCRBY lock_info, RPOPLPUSH;
 *   - its commit (§5.7, the fork): LREM one entry of the fetched bytes and, only if one
 *     was removed, DECR lock and HINCRBY lock_info −1;
 *   - its crash: it stops beating with jobs in its in-progress list; its last
 *     heartbeat_at is then set back by twice the reaper's dead time (§9), which is what
 *     waiting that long would leave, without the wait.
 * Not imitated: Go's sampler (one type per Go pool here), its retries, requeuers,
 * periodic enqueuer and its own reaper.
 *
 * Against the test's redis-server (each shard is a namespace of its own, §27.1; the
 * Cluster placement is fault_cluster_shards'):
 *   - plain jobs enqueued by a sharded enqueuer are shared by the Go pool on shard
 *     GO_SHARD and the cwork pool: each runs exactly once; the cwork pool never touches
 *     the live Go pool's in-progress jobs, and once the Go pool dies, the cwork reaper of
 *     that shard puts them back and the cwork pool runs them; every shard ends empty;
 *   - pinned types (§27.2, §27.4): a Go pool listing a rate-limited type in the type's
 *     home shard is warned about (pool.rate_limit.go_pool); Go pools listing a pinned
 *     type on a shard that is not its home are warned about once each, naming both
 *     shards (pool.pinned.go_pool), and the one in the home is not; a Go pool on another shard
 *     holding a pinned job in progress keeps it (the mover carries only queued jobs),
 *     jobs a Go enqueuer put there are carried home and run there, and the job the dead
 *     Go pool held is requeued by that shard's reaper, carried home and run. */
#include "pool_testutil.h"
#include "reaper.h"
#include "pool_nsshards.h"
#include "sharding.h"

#include <pthread.h>
#include <stdatomic.h>

#define SHARDS 3
#define GO_SHARD 1
#define NJOBS 90
#define GO_ID "60000000000000000000006a"
/* The cwork pool's cheap look for stale heartbeats, short so that the test is. */
#define DEAD_CHECK_MS 200

static atomic_int ran_[NJOBS]; /* by the cwork pool */
static int go_ran_[NJOBS];     /* by the Go pool */
static char shard_ns_[SHARDS][80];

static int counting(cwork_job *job, void *ctx)
{
    (void)ctx;
    long long n = cwork_job_arg_int64(job, "n");
    if (n >= 0 && n < NJOBS) atomic_fetch_add(&ran_[n], 1);
    return 0;
}

/* ---------------------------------------------------------------- the Go pool */

typedef struct go_pool {
    const char *ns; /* its namespace: one shard's */
    const char *id;
    const char *names; /* job_names: its types, sorted, comma-joined */
    long long started_at;
} go_pool;

static void go_beat(const go_pool *g, long long heartbeat_at)
{
    tl_do(rc_, "SADD %s:worker_pools %s", g->ns, g->id);
    tl_do(rc_,
          "HMSET %s:worker_pools:%s heartbeat_at %lld started_at %lld job_names %s "
          "concurrency 1 worker_ids 0000000000000000000000aa host gohost pid 4242",
          g->ns, g->id, heartbeat_at, g->started_at, g->names);
}

/* Go's fetch script (PROTOCOL §5.4) for one type. */
static const char go_fetch_lua[] =
    "for i = 1, #KEYS, 6 do "
    "  local queue, inprogress, paused, lock, info, maxc = "
    "    KEYS[i], KEYS[i+1], KEYS[i+2], KEYS[i+3], KEYS[i+4], KEYS[i+5] "
    "  local max = tonumber(redis.call('get', maxc)) "
    "  if redis.call('llen', queue) > 0 and not redis.call('get', paused) then "
    "    local held = tonumber(redis.call('get', lock)) "
    "    if max == nil or max == 0 or held == nil or held < max then "
    "      redis.call('incr', lock) "
    "      redis.call('hincrby', info, ARGV[1], 1) "
    "      return {redis.call('rpoplpush', queue, inprogress), queue, inprogress} "
    "    end "
    "  end "
    "end "
    "return nil";

/* The fork's commit (PROTOCOL §5.7), without forwarding. */
static const char go_commit_lua[] = "if redis.call('lrem', KEYS[1], 1, ARGV[2]) > 0 then "
                                    "  redis.call('decr', KEYS[2]) "
                                    "  redis.call('hincrby', KEYS[3], ARGV[1], -1) "
                                    "end "
                                    "return 1";

/* One fetch of type name; the job's bytes (free with free), or NULL when none. */
static char *go_fetch(const go_pool *g, const char *name)
{
    redisReply *r = tl_cmd(rc_,
                           "EVAL %s 6 %s:jobs:%s %s:jobs:%s:%s:inprogress %s:jobs:%s:paused "
                           "%s:jobs:%s:lock %s:jobs:%s:lock_info %s:jobs:%s:max_concurrency %s",
                           go_fetch_lua, g->ns, name, g->ns, name, g->id, g->ns, name, g->ns, name,
                           g->ns, name, g->ns, name, g->id);
    char *job = NULL;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
        r->element[0]->type == REDIS_REPLY_STRING)
        job = strdup(r->element[0]->str);
    else
        CHECK(r->type == REDIS_REPLY_NIL);
    freeReplyObject(r);
    return job;
}

static void go_commit(const go_pool *g, const char *name, const char *job)
{
    tl_do(rc_, "EVAL %s 3 %s:jobs:%s:%s:inprogress %s:jobs:%s:lock %s:jobs:%s:lock_info %s %s",
          go_commit_lua, g->ns, name, g->id, g->ns, name, g->ns, name, g->id, job);
}

static int job_n(const char *job)
{
    const char *p = strstr(job, "\"n\":");
    return p ? atoi(p + 4) : -1;
}

/* Fetches, "runs" and commits one job of name; its n, or -1 when there was none. */
static int go_run_one(const go_pool *g, const char *name)
{
    char *job = go_fetch(g, name);
    if (!job) return -1;
    int n = job_n(job);
    if (n >= 0 && n < NJOBS) go_ran_[n]++;
    go_commit(g, name, job);
    free(job);
    return n;
}

/* The Go pool dies: no more beats, its last one as old as twice the dead time. */
static void go_crash(const go_pool *g)
{
    go_beat(g, (long long)time(NULL) - 2 * CW_REAPER_DEAD_TIME);
}

static long long llen(const char *fmt, const char *a, const char *b, const char *c)
{
    redisReply *r = tl_cmd(rc_, fmt, a, b, c);
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    freeReplyObject(r);
    return v;
}

static long long go_inprogress(const go_pool *g, const char *name)
{
    return llen("LLEN %s:jobs:%s:%s:inprogress", g->ns, name, g->id);
}

/* ---------------------------------------------------------------- set-up */

static void shard_names(const char *tag)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    for (unsigned i = 0; i < SHARDS; i++)
        CHECK_INT(cw_sharding_ns(ns_, i, shard_ns_[i], sizeof shard_ns_[i], NULL), 0);
    memset(go_ran_, 0, sizeof go_ran_);
    for (int i = 0; i < NJOBS; i++)
        atomic_store(&ran_[i], 0);
}

static cwork_pool *sharded_pool(void)
{
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 6;
    o.shards = SHARDS;
    o.dead_check_ms = DEAD_CHECK_MS;
    cwork_error err = {0};
    cwork_pool *p = cwork_pool_new(redis_, ns_, &o, &err);
    if (!p) tl_fail(__FILE__, __LINE__, "cwork_pool_new: %s", err.message);
    return p;
}

/* Waits (bounded) until job n has run `want` times in all. */
static int wait_all_ran(int njobs, long ms)
{
    for (long waited = 0; waited <= ms; waited += 20) {
        int done = 1;
        for (int n = 0; n < njobs && done; n++)
            done = atomic_load(&ran_[n]) + go_ran_[n] >= 1;
        if (done) return 1;
        tl_sleep_ms(20);
    }
    return 0;
}

static void check_each_ran_once(int njobs)
{
    for (int n = 0; n < njobs; n++)
        if (atomic_load(&ran_[n]) + go_ran_[n] != 1)
            tl_fail(__FILE__, __LINE__, "job %d ran %d times in cwork, %d in Go", n,
                    atomic_load(&ran_[n]), go_ran_[n]);
}

/* No job left anywhere in shard s: queues, in-progress lists, retry, dead, moving. */
static void check_shard_empty(unsigned s)
{
    redisReply *r = tl_cmd(rc_, "KEYS %s:jobs:*", shard_ns_[s]);
    for (size_t i = 0; i < r->elements; i++) {
        const char *k = r->element[i]->str;
        size_t len = strlen(k);
        int list = (len > 11 && !strcmp(k + len - 11, ":inprogress")) ||
                   !strchr(k + strlen(shard_ns_[s]) + 6, ':');
        if (list && llen("LLEN %s%s%s", k, "", "") != 0)
            tl_fail(__FILE__, __LINE__, "%s is not empty", k);
    }
    freeReplyObject(r);
    r = tl_cmd(rc_, "KEYS %s:cwork:moving:*", shard_ns_[s]);
    for (size_t i = 0; i < r->elements; i++)
        if (llen("LLEN %s%s%s", r->element[i]->str, "", "") != 0)
            tl_fail(__FILE__, __LINE__, "%s is not empty", r->element[i]->str);
    freeReplyObject(r);
    CHECK_INT(llen("ZCARD %s:retry%s%s", shard_ns_[s], "", ""), 0);
    CHECK_INT(llen("ZCARD %s:dead%s%s", shard_ns_[s], "", ""), 0);
}

static void delete_all(void)
{
    for (unsigned i = 0; i < SHARDS; i++)
        tl_ns_delete(rc_, shard_ns_[i]);
}

/* ---------------------------------------------------------------- cases */

/* Plain jobs shared with a Go pool on one shard; its crash healed by cwork's reaper. */
static void plain_jobs_are_shared_with_a_go_pool(void)
{
    shard_names("nsgo");
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, &err);
    CHECK(enq != NULL);
    CHECK_INT(cwork_enqueuer_set_shards(enq, SHARDS, &err), 0);
    cwork_args *a = cwork_args_new();
    int in_go_shard = 0;
    for (int n = 0; n < NJOBS; n++) {
        cwork_args_set_int64(a, "n", n);
        cwork_job *job = NULL;
        CHECK_INT(cwork_enqueue(enq, "work", a, &job, &err), 0);
        in_go_shard += cw_sharding_of(cwork_job_id(job), 24, SHARDS) == GO_SHARD;
        cwork_job_free(job);
    }
    cwork_args_free(a);
    cwork_enqueuer_free(enq);
    CHECK(in_go_shard >= 8); /* (the routing of 90 random ids: about 30) */

    go_pool g = {shard_ns_[GO_SHARD], GO_ID, "work", (long long)time(NULL)};
    go_beat(&g, (long long)time(NULL));
    /* The Go pool runs a few, then takes two it will still hold when it dies. */
    for (int i = 0; i < 3; i++)
        CHECK(go_run_one(&g, "work") >= 0);
    char *held[2];
    for (int i = 0; i < 2; i++)
        CHECK((held[i] = go_fetch(&g, "work")) != NULL);

    cwork_pool *p = sharded_pool();
    CHECK_INT(cwork_pool_register(p, "work", counting, NULL, &err), 0);
    CHECK_INT(cwork_pool_start(p, &err), 0);
    /* Both fetch from the Go pool's shard until it is empty. */
    int go_more = 0;
    while (go_run_one(&g, "work") >= 0)
        go_more++;
    int rest = 0;
    for (int waited = 0; waited < 20000 && rest != NJOBS - 2; waited += 20) {
        rest = 0;
        for (int n = 0; n < NJOBS; n++)
            rest += atomic_load(&ran_[n]) + go_ran_[n] >= 1;
        if (rest != NJOBS - 2) tl_sleep_ms(20);
    }
    CHECK_INT(rest, NJOBS - 2);
    /* The live Go pool's jobs stay its own: twenty of cwork's looks for dead pools later,
     * both are still in its in-progress list and neither ran. */
    go_beat(&g, (long long)time(NULL));
    tl_sleep_ms(20 * DEAD_CHECK_MS);
    go_beat(&g, (long long)time(NULL));
    CHECK_INT(go_inprogress(&g, "work"), 2);
    for (int i = 0; i < 2; i++)
        CHECK_INT(atomic_load(&ran_[job_n(held[i])]), 0);

    /* It dies holding them: the cwork reaper of its shard gives them back, cwork runs them. */
    go_crash(&g);
    CHECK(wait_all_ran(NJOBS, 30000));
    CHECK_INT(go_inprogress(&g, "work"), 0);
    CHECK_INT(llen("SISMEMBER %s:worker_pools %s%s", g.ns, g.id, ""), 0);
    redisReply *info = tl_cmd(rc_, "HGET %s:jobs:work:lock_info %s", g.ns, g.id);
    CHECK(info->type == REDIS_REPLY_NIL || (info->str && !strcmp(info->str, "0")));
    freeReplyObject(info);
    for (int i = 0; i < 2; i++)
        free(held[i]);
    CHECK_INT(cwork_pool_drain(p, 20000, &err), 0);
    CHECK_INT(cwork_pool_stop(p, 10000, &err), 0);
    cwork_pool_free(p);
    check_each_ran_once(NJOBS);
    for (unsigned s = 0; s < SHARDS; s++)
        check_shard_empty(s);
    printf("  the Go pool ran %d jobs (%d while the cwork pool ran), cwork the other %d\n",
           3 + go_more, go_more, NJOBS - 3 - go_more);
    delete_all();
}

static pthread_mutex_t log_mu_ = PTHREAD_MUTEX_INITIALIZER;
static char log_[16384];

static void logger(void *ud, cwork_log_level level, const char *msg, const cwork_log_field *f,
                   size_t n)
{
    (void)ud, (void)level;
    pthread_mutex_lock(&log_mu_);
    size_t len = strlen(log_);
    len += (size_t)snprintf(log_ + len, sizeof log_ - len, "%s", msg);
    for (size_t i = 0; i < n && len < sizeof log_; i++)
        len += (size_t)snprintf(log_ + len, sizeof log_ - len, " %s=%s", f[i].key, f[i].value);
    if (len < sizeof log_ - 1) strcat(log_, "\n");
    pthread_mutex_unlock(&log_mu_);
}

static int logged(const char *needle)
{
    pthread_mutex_lock(&log_mu_);
    int found = strstr(log_, needle) != NULL;
    pthread_mutex_unlock(&log_mu_);
    return found;
}

static int logged_count(const char *needle)
{
    pthread_mutex_lock(&log_mu_);
    int n = 0;
    for (const char *at = strstr(log_, needle); at; at = strstr(at + 1, needle))
        n++;
    pthread_mutex_unlock(&log_mu_);
    return n;
}

/* Pinned types: warnings, the mover and a Go pool's in-progress jobs. */
static void pinned_types_beside_a_go_pool(void)
{
    shard_names("nsgopin");
    unsigned home = cw_sharding_of("limited", 7, SHARDS), away = (home + 1) % SHARDS;
    unsigned rl_home = cw_sharding_of("rl", 2, SHARDS);
    /* A Go pool running the rate-limited type in its home shard. */
    go_pool w = {shard_ns_[rl_home], "70000000000000000000007b", "rl", (long long)time(NULL)};
    go_beat(&w, (long long)time(NULL) + 3600); /* (an hour ahead: never reaped here) */
    /* One listing it in another shard, where its jobs should never be (reported only). */
    go_pool w2 = {shard_ns_[(rl_home + 1) % SHARDS], "80000000000000000000008c", "rl",
                  (long long)time(NULL)};
    go_beat(&w2, (long long)time(NULL) + 3600);
    /* A Go pool on a shard that is not the home of "limited", where a Go enqueuer (which
     * knows nothing of pins) put three of its jobs; it takes two. */
    go_pool g = {shard_ns_[away], GO_ID, "limited", (long long)time(NULL)};
    go_beat(&g, (long long)time(NULL));
    for (int n = 0; n < 3; n++)
        tl_do(rc_,
              "LPUSH %s:jobs:limited {\"name\":\"limited\",\"id\":\"%024d\",\"t\":1700000000,"
              "\"args\":{\"n\":%d}}",
              g.ns, n, n);
    char *held[2];
    for (int i = 0; i < 2; i++)
        CHECK((held[i] = go_fetch(&g, "limited")) != NULL);

    log_[0] = '\0';
    cwork_set_logger(logger, NULL, CWORK_LOG_WARN);
    cwork_pool *p = sharded_pool();
    cwork_job_options lim, rl;
    cwork_job_options_init(&lim);
    lim.max_concurrency = 1;
    cwork_job_options_init(&rl);
    rl.rate_limit = 1000;
    rl.rate_limit_window_ms = 1000;
    cwork_error err = {0};
    CHECK_INT(cwork_pool_register(p, "limited", counting, &lim, &err), 0);
    CHECK_INT(cwork_pool_register(p, "rl", counting, &rl, &err), 0);
    CHECK_INT(cwork_pool_start(p, &err), 0);

    /* The queued one is carried home and runs there. */
    int third = 3 - job_n(held[0]) - job_n(held[1]); /* (n 0, 1 and 2) */
    for (int i = 0; i < 500 && atomic_load(&ran_[third]) == 0; i++)
        tl_sleep_ms(20);
    CHECK_INT(atomic_load(&ran_[third]), 1);
    /* The Go pool's two stay in its in-progress list: the mover looked many times. */
    go_beat(&g, (long long)time(NULL));
    tl_sleep_ms(20 * CW_NSSHARD_MOVE_MS);
    go_beat(&g, (long long)time(NULL));
    CHECK_INT(go_inprogress(&g, "limited"), 2);
    CHECK_INT(llen("LLEN %s:jobs:limited%s%s", shard_ns_[home], "", ""), 0);
    /* It lists "limited" away from its home: warned about, naming both shards (a look
     * at Go pools every CW_NSSHARD_GO_EVERY reads of the record, one a second). */
    char want_g[320];
    snprintf(want_g, sizeof want_g,
             "pool.pinned.go_pool pool_id=%s job_name=limited shard=%s home_shard=%s", g.id,
             shard_ns_[away], shard_ns_[home]);
    for (int i = 0; i < 600 && !logged(want_g); i++) {
        go_beat(&g, (long long)time(NULL));
        tl_sleep_ms(50);
    }
    CHECK(logged(want_g));
    /* It runs one, and dies holding the other: reaped, carried home, run. */
    go_ran_[job_n(held[0])]++;
    go_commit(&g, "limited", held[0]);
    go_crash(&g);
    for (int i = 0; i < 1500 && atomic_load(&ran_[job_n(held[1])]) == 0; i++)
        tl_sleep_ms(20);
    CHECK_INT(go_inprogress(&g, "limited"), 0);

    /* The warning: every fifth read of the rate-limit setting, a read each second. */
    char want[160];
    snprintf(want, sizeof want, "pool.rate_limit.go_pool pool_id=%s job_name=rl", w.id);
    for (int i = 0; i < 400 && !logged(want); i++)
        tl_sleep_ms(50);
    CHECK(logged(want));
    /* w2 lists "rl" in a shard that is not its home: warned about once, however many
     * looks; w, in rl's home, only for the rate limit (the first warning above). */
    char want_w2[320];
    snprintf(want_w2, sizeof want_w2,
             "pool.pinned.go_pool pool_id=%s job_name=rl shard=%s home_shard=%s", w2.id, w2.ns,
             shard_ns_[rl_home]);
    for (int i = 0; i < 600 && !logged(want_w2); i++)
        tl_sleep_ms(50);
    CHECK(logged(want_w2));
    unsigned looks = atomic_load(&p->nsshards->go_looks);
    for (int i = 0; i < 600 && atomic_load(&p->nsshards->go_looks) < looks + 2; i++)
        tl_sleep_ms(50);
    CHECK(atomic_load(&p->nsshards->go_looks) >= looks + 2);
    CHECK_INT(logged_count(want_w2), 1);
    CHECK_INT(logged_count(want_g), 1);
    char not_w[160];
    snprintf(not_w, sizeof not_w, "pool.pinned.go_pool pool_id=%s", w.id);
    CHECK(!logged(not_w));

    CHECK_INT(cwork_pool_drain(p, 20000, &err), 0);
    CHECK_INT(cwork_pool_stop(p, 10000, &err), 0);
    cwork_pool_free(p);
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    check_each_ran_once(3);
    /* The lock in the away shard, taken by Go's fetches, is back to 0. */
    redisReply *lock = tl_cmd(rc_, "GET %s:jobs:limited:lock", g.ns);
    CHECK(lock->str && !strcmp(lock->str, "0"));
    freeReplyObject(lock);
    tl_do(rc_, "SREM %s:worker_pools %s", w.ns, w.id);
    tl_do(rc_, "DEL %s:worker_pools:%s", w.ns, w.id);
    tl_do(rc_, "SREM %s:worker_pools %s", w2.ns, w2.id);
    tl_do(rc_, "DEL %s:worker_pools:%s", w2.ns, w2.id);
    for (unsigned s = 0; s < SHARDS; s++)
        check_shard_empty(s);
    for (int i = 0; i < 2; i++)
        free(held[i]);
    delete_all();
}

int main(void)
{
    pool_test_setup();
    RUN(plain_jobs_are_shared_with_a_go_pool);
    RUN(pinned_types_beside_a_go_pool);
    pool_test_teardown();
    return tl_finish();
}
