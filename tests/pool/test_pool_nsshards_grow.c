/* Growing a sharded namespace under load (PROTOCOL §27.5) against a real Redis: a pool on
 * 2 shards runs handlers that take 1 to 10 ms while two enqueuers enqueue plain jobs,
 * unique jobs (keys repeating, so that many are duplicates) and tracked batches without
 * a pause; the namespace is grown 2 → 3 → 5 meanwhile, each grow finished as soon as
 * `cwork shards finish` allows. The running pool serves the new shards (a heartbeat in
 * each), jobs reach them, every job an enqueue accepted runs exactly once (and no other),
 * every batch's callback runs once, and at the end every shard's whole namespace holds
 * no job, guard, in-progress entry or open batch. Times are bounds for polling only. */
#include "pool_testutil.h"
#include "sharding.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define MAX_SHARDS 5
#define MAX_IDS 60000
#define MAX_BATCHES 4000
#define UNIQUE_KEYS 40

static char shard_ns_[MAX_SHARDS][80];

/* The ids of the jobs enqueues accepted, and of the jobs handlers ran. */
typedef struct id_log {
    pthread_mutex_t mu;
    char (*id)[25];
    size_t n;
} id_log;

static id_log enqueued_ = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};
static id_log ran_ = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};
static char batch_ids_[MAX_BATCHES][25];
static atomic_int batch_runs_[MAX_BATCHES];
static atomic_int nbatches_;
static atomic_bool stop_;
static atomic_long refused_; /* enqueue errors other than duplicates */

static void log_id(id_log *l, const char *id)
{
    pthread_mutex_lock(&l->mu);
    if (l->n < MAX_IDS) snprintf(l->id[l->n++], 25, "%s", id);
    pthread_mutex_unlock(&l->mu);
}

/* A job: 1 to 10 ms of work, its id logged. */
static int work(cwork_job *job, void *ctx)
{
    (void)ctx;
    const char *id = cwork_job_id(job);
    tl_sleep_ms(1 + (long)(id[23] % 10));
    log_id(&ran_, id);
    return 0;
}

/* A batch's callback: counted by its batch id. */
static int done(cwork_job *job, void *ctx)
{
    (void)ctx;
    const char *b = cwork_job_arg_string(job, "batch_id");
    int n = atomic_load(&nbatches_);
    for (int i = 0; b && i < n; i++)
        if (strcmp(batch_ids_[i], b) == 0) atomic_fetch_add(&batch_runs_[i], 1);
    return 0;
}

static void one_plain(cwork_enqueuer *enq, long i)
{
    cwork_args *a = cwork_args_new();
    cwork_args_set_int64(a, "n", i);
    cwork_job *job = NULL;
    cwork_error err = {0};
    if (cwork_enqueue(enq, "plain", a, &job, &err) == 0)
        log_id(&enqueued_, cwork_job_id(job));
    else
        atomic_fetch_add(&refused_, 1);
    cwork_job_free(job);
    cwork_args_free(a);
}

static void one_unique(cwork_enqueuer *enq, long i)
{
    cwork_args *a = cwork_args_new();
    cwork_args_set_int64(a, "u", i % UNIQUE_KEYS);
    cwork_job *job = NULL;
    cwork_error err = {0};
    int rc = cwork_enqueue_unique(enq, "uniq", a, &job, &err);
    if (rc == 0)
        log_id(&enqueued_, cwork_job_id(job));
    else if (rc != CWORK_DUPLICATE)
        atomic_fetch_add(&refused_, 1);
    cwork_job_free(job);
    cwork_args_free(a);
}

/* A tracked batch of 3 members: opened, filled, sealed. */
static void one_batch(cwork_enqueuer *enq)
{
    int k = atomic_fetch_add(&nbatches_, 0);
    if (k >= MAX_BATCHES) return;
    char id[25];
    cwork_error err = {0};
    if (cwork_batch_open(enq, CWORK_BATCH_ON_COMPLETE, "done", NULL, id, &err) != 0) {
        atomic_fetch_add(&refused_, 1);
        return;
    }
    /* published before its callback can run: the seal comes after */
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mu);
    k = atomic_load(&nbatches_);
    snprintf(batch_ids_[k], 25, "%s", id);
    atomic_store(&nbatches_, k + 1);
    pthread_mutex_unlock(&mu);
    cwork_batch *b = cwork_batch_new(enq);
    int rc = cwork_batch_join(b, id, &err);
    for (int m = 0; m < 3 && rc == 0; m++)
        rc = cwork_batch_add(b, "member", NULL, 0, 0, &err);
    if (rc == 0) rc = cwork_enqueue_batch(b, &err);
    for (size_t m = 0; rc == 0 && m < cwork_batch_count(b); m++) {
        const char *mid = NULL;
        if (cwork_batch_status(b, m, &mid) == CWORK_OK) log_id(&enqueued_, mid);
    }
    if (rc == 0) rc = cwork_batch_seal(enq, id, &err);
    if (rc) {
        fprintf(stderr, "batch: %s\n", err.message);
        atomic_fetch_add(&refused_, 1);
    }
    cwork_batch_free(b);
}

/* An enqueuer of its own, declaring nothing: it follows the record. */
static void *enqueuer_main(void *arg)
{
    long base = (long)(intptr_t)arg;
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, &err);
    for (long i = base; enq && !atomic_load(&stop_); i += 2) {
        one_plain(enq, i);
        one_unique(enq, i);
        if (i % 40 < 2) one_batch(enq);
        tl_sleep_ms(2);
    }
    cwork_enqueuer_free(enq);
    return NULL;
}

static int cmp_id(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Every id enqueued ran once, and nothing else ran. */
static void check_exactly_once(void)
{
    CHECK(enqueued_.n < MAX_IDS);
    CHECK_INT(ran_.n, enqueued_.n);
    qsort(enqueued_.id, enqueued_.n, 25, cmp_id);
    qsort(ran_.id, ran_.n, 25, cmp_id);
    size_t bad = 0;
    for (size_t i = 0; i < enqueued_.n && i < ran_.n; i++)
        if (strcmp(enqueued_.id[i], ran_.id[i]) != 0 && bad++ < 5)
            tl_fail(__FILE__, __LINE__, "job %s enqueued, %s ran at the same rank", enqueued_.id[i],
                    ran_.id[i]);
    int n = atomic_load(&nbatches_);
    for (int i = 0; i < n; i++)
        if (atomic_load(&batch_runs_[i]) != 1)
            tl_fail(__FILE__, __LINE__, "batch %s: callback ran %d times", batch_ids_[i],
                    atomic_load(&batch_runs_[i]));
}

/* Waits (up to 20 s) until shard i has a pool's heartbeat. */
static void wait_served(unsigned i)
{
    long long n = 0;
    for (int waited = 0; waited < 20000 && n == 0; waited += 20) {
        redisReply *r = tl_cmd(rc_, "SCARD %s:worker_pools", shard_ns_[i]);
        n = r->integer;
        freeReplyObject(r);
        if (n == 0) tl_sleep_ms(20);
    }
    if (n == 0) tl_fail(__FILE__, __LINE__, "no pool serves %s", shard_ns_[i]);
}

/* Grows to `to` and finishes the grow as soon as it may (polling up to 90 s: the
 * forwarding window is CW_SHARDING_FORWARD_TTL s). */
static void grow_and_finish(cwork_client *c, unsigned to)
{
    cwork_error err = {0};
    long long t0 = tl_now_ms();
    CHECK_INT(cwork_client_shards_grow(c, to, &err), 0);
    for (unsigned i = 0; i < to; i++)
        wait_served(i);
    long long served = tl_now_ms() - t0;
    cwork_shards_growth g = {0};
    int rc = -1;
    for (int waited = 0; waited < 90000 && rc != 0; waited += 250) {
        rc = cwork_client_shards_finish(c, &g, &err);
        if (rc != 0) tl_sleep_ms(250);
    }
    if (rc != 0) tl_fail(__FILE__, __LINE__, "grow to %u not finished: %s", to, err.message);
    /* what it took (printed, never asserted) */
    fprintf(stderr, "grow to %u: new shards served after %lld ms, finished after %lld ms\n", to,
            served, tl_now_ms() - t0);
    CHECK_INT(g.count, to);
    redisReply *r = tl_cmd(rc_, "HGET %s:cwork:shards from", ns_);
    CHECK(r->type == REDIS_REPLY_NIL);
    freeReplyObject(r);
}

/* What may stay in a shard after the pool stopped: no job, guard, in-progress list,
 * open batch or moving list. */
static void check_clean(unsigned i)
{
    char *dump = tl_ns_dump(rc_, shard_ns_[i]);
    const char *bad[] = {" list ",      ":unique:",   ":retry ",      ":dead ",
                         ":scheduled ", "inprogress", "cwork:moving", "waiting"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        if (strstr(dump, bad[k]))
            tl_fail(__FILE__, __LINE__, "shard %s holds \"%s\":\n%s", shard_ns_[i], bad[k], dump);
    free(dump);
}

static void grow_under_load(void)
{
    tl_unique_ns("grow", ns_, sizeof ns_);
    for (unsigned i = 0; i < MAX_SHARDS; i++)
        CHECK_INT(cw_sharding_ns(ns_, i, shard_ns_[i], sizeof shard_ns_[i], NULL), 0);
    enqueued_.id = calloc(MAX_IDS, 25);
    ran_.id = calloc(MAX_IDS, 25);
    cwork_error err = {0};
    cwork_enqueuer *first = cwork_enqueuer_new(redis_, ns_, &err);
    CHECK_INT(cwork_enqueuer_set_shards(first, 2, &err), 0); /* writes the record */
    cwork_enqueuer_free(first);

    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 10;
    cwork_pool *p = cwork_pool_new(redis_, ns_, &o, &err);
    CHECK(p != NULL);
    CHECK_INT(cwork_pool_register(p, "plain", work, NULL, &err), 0);
    CHECK_INT(cwork_pool_register(p, "uniq", work, NULL, &err), 0);
    CHECK_INT(cwork_pool_register(p, "member", work, NULL, &err), 0);
    CHECK_INT(cwork_pool_register(p, "done", done, NULL, &err), 0);
    CHECK_INT(cwork_pool_start(p, &err), 0);

    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        CHECK_INT(pthread_create(&t[i], NULL, enqueuer_main, (void *)(intptr_t)i), 0);
    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    tl_sleep_ms(300);
    grow_and_finish(c, 3);
    tl_sleep_ms(300);
    grow_and_finish(c, 5);
    tl_sleep_ms(300);
    atomic_store(&stop_, true);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    CHECK_INT(atomic_load(&refused_), 0);
    if (cwork_pool_drain(p, 120000, &err) != 0)
        tl_fail(__FILE__, __LINE__, "drain: %s", err.message);
    CHECK_INT(cwork_pool_stop(p, 10000, &err), 0);
    cwork_pool_free(p);
    check_exactly_once();
    fprintf(stderr, "%zu jobs, %d batches\n", enqueued_.n, atomic_load(&nbatches_));
    CHECK(atomic_load(&nbatches_) > 0);
    for (unsigned i = 0; i < MAX_SHARDS; i++) {
        char *dump = tl_ns_dump(rc_, shard_ns_[i]);
        if (!strstr(dump, "processed")) /* each shard ran jobs (its counts) */
            tl_fail(__FILE__, __LINE__, "shard %s ran no job:\n%s", shard_ns_[i], dump);
        free(dump);
        check_clean(i);
    }
    cwork_client_free(c);
    for (unsigned i = 0; i < MAX_SHARDS; i++)
        tl_ns_delete(rc_, shard_ns_[i]);
    free(enqueued_.id);
    free(ran_.id);
}

static int noop(cwork_job *job, void *ctx)
{
    (void)job;
    (void)ctx;
    return 0;
}

/* A name whose shard under 3 shards is not its shard under 2 (its home: the record's
 * homes is 2 after the grow). */
static void moving_name(const char *prefix, char *name, size_t size, unsigned *home)
{
    for (int k = 0;; k++) {
        snprintf(name, size, "%s%d", prefix, k);
        *home = cw_sharding_of(name, strlen(name), 2);
        if (*home != cw_sharding_of(name, strlen(name), 3)) return;
    }
}

/* After a grow 2 → 3, a pool started anew runs its pinned type and schedules its periodic
 * job in their names' shards under 2 (homes), not under 3. */
static void names_keep_their_home(void)
{
    tl_unique_ns("home", ns_, sizeof ns_);
    for (unsigned i = 0; i < 3; i++)
        CHECK_INT(cw_sharding_ns(ns_, i, shard_ns_[i], sizeof shard_ns_[i], NULL), 0);
    cwork_error err = {0};
    cwork_enqueuer *first = cwork_enqueuer_new(redis_, ns_, &err);
    CHECK_INT(cwork_enqueuer_set_shards(first, 2, &err), 0);
    cwork_enqueuer_free(first);
    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    CHECK_INT(cwork_client_shards_grow(c, 3, &err), 0);
    cwork_client_free(c);
    char lim[16], tick[16];
    unsigned lim_home = 0, tick_home = 0;
    moving_name("lim", lim, sizeof lim, &lim_home);
    moving_name("tick", tick, sizeof tick, &tick_home);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 3;
    cwork_pool *p = cwork_pool_new(redis_, ns_, &o, &err);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.max_concurrency = 1;
    CHECK_INT(cwork_pool_register(p, lim, noop, &jo, &err), 0);
    CHECK_INT(cwork_pool_register(p, tick, noop, NULL, &err), 0);
    CHECK_INT(cwork_pool_periodically_enqueue(p, "* * * * * *", tick, &err), 0);
    CHECK_INT(cwork_pool_start(p, &err), 0);
    char key[160];
    snprintf(key, sizeof key, "%s:last_periodic_enqueue", shard_ns_[tick_home]);
    long long n = 0;
    for (int waited = 0; waited < 20000 && n == 0; waited += 20) {
        redisReply *r = tl_cmd(rc_, "EXISTS %s", key);
        n = r->integer;
        freeReplyObject(r);
        if (n == 0) tl_sleep_ms(20);
    }
    CHECK_INT(n, 1);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    for (unsigned s = 0; s < 3; s++) {
        redisReply *r = tl_cmd(rc_, "EXISTS %s:last_periodic_enqueue", shard_ns_[s]);
        CHECK_INT(r->integer, s == tick_home);
        freeReplyObject(r);
        r = tl_cmd(rc_, "GET %s:jobs:%s:max_concurrency", shard_ns_[s], lim);
        if (s == lim_home)
            CHECK(r->type == REDIS_REPLY_STRING && strcmp(r->str, "1") == 0);
        else
            CHECK(r->type != REDIS_REPLY_STRING || strcmp(r->str, "1") != 0);
        freeReplyObject(r);
    }
    cwork_pool_free(p);
    for (unsigned i = 0; i < 3; i++)
        tl_ns_delete(rc_, shard_ns_[i]);
}

int main(void)
{
    pool_test_setup();
    RUN(names_keep_their_home);
    RUN(grow_under_load);
    pool_test_teardown();
    return tl_finish();
}
