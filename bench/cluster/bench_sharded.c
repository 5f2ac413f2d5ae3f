/* A sharded namespace at load (issue 23, README "Sharding"): no-op jobs over S shards of
 * namespace {bench}, run by one cwork pool serving every shard, against a Redis Cluster
 * (bench/cluster/cluster.sh puts each shard on its own master) or one server:
 *
 *   bench_sharded --redis URL --shards S [--jobs N] [--queues Q] [--concurrency C]
 *                 [--handler-us U] [--one-shard K]
 *
 * Enqueues N jobs with {"i": n} (bulk, the sharded enqueuer: one pipeline per shard),
 * then runs the pool and reports jobs/s from the first to the last handler start, and
 * per master: the jobs its shards held and its Redis CPU per job (INFO cpu before and
 * after the run, on a connection to that master), and the benchmark process's own CPU
 * per job (getrusage: the pool, the client side of the cost). From those two costs it
 * projects what M masters could run, each at one busy core, with as many pool machines
 * as the client cost asks for. Deletes its namespaces before and after.
 *
 * --handler-us U: each handler sleeps U µs, and the run reports how many ran at once
 * (the mean, jobs × U / run time, and the peak). --one-shard K: every job goes to shard
 * K's queues (an unsharded enqueuer on its namespace), the others stay empty: with the
 * shared budget (docs/POOL.md) that shard runs on all C executors. */
#include "cwork.h"
#include "redis.h"
#include "sharding.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define NS "{bench}"
#define MAX_SHARDS 64

static atomic_long started_;
static _Atomic int64_t first_us_, last_us_;
static long handler_us_; /* --handler-us */
static atomic_int running_, peak_running_;

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int noop(cwork_job *job, void *ctx)
{
    (void)job;
    (void)ctx;
    int64_t t = now_us(), zero = 0;
    atomic_compare_exchange_strong(&first_us_, &zero, t);
    atomic_store(&last_us_, t);
    atomic_fetch_add(&started_, 1);
    if (handler_us_ > 0) {
        int now = atomic_fetch_add(&running_, 1) + 1, peak = atomic_load(&peak_running_);
        while (now > peak && !atomic_compare_exchange_weak(&peak_running_, &peak, now)) {
        }
        struct timespec ts = {handler_us_ / 1000000, (handler_us_ % 1000000) * 1000};
        nanosleep(&ts, NULL);
        atomic_fetch_sub(&running_, 1);
    }
    return 0;
}

/* One shard as the benchmark sees it: a Redis pool bound to its namespace (so, in a
 * cluster, connected to its master) and that master's identity. */
typedef struct shard {
    char ns[64];
    cwork_redis *redis;
    char master[64]; /* CLUSTER MYID, or "server" outside a cluster */
    long jobs;       /* what it held when the pool started */
} shard;

static void fail(const char *what, const cwork_error *err)
{
    fprintf(stderr, "bench_sharded: %s: %s\n", what, err->message);
    exit(1);
}

static redisReply *command(shard *s, int argc, const char **argv)
{
    redisReply *r = NULL;
    cwork_error err = {0};
    if (cw_redis_command(s->redis, argc, argv, NULL, &r, &err) != 0) return NULL;
    return r;
}

static void drop(shard *s)
{
    char pattern[sizeof s->ns + 4];
    snprintf(pattern, sizeof pattern, "%.63s:*", s->ns);
    const char *keys[] = {"KEYS", pattern};
    redisReply *k = command(s, 2, keys);
    for (size_t i = 0; k && i < k->elements; i++) {
        const char *unlink[] = {"UNLINK", k->element[i]->str};
        redisReply *r = command(s, 2, unlink);
        if (r) freeReplyObject(r);
    }
    if (k) freeReplyObject(k);
}

static double cpu_seconds(shard *s)
{
    const char *info[] = {"INFO", "cpu"};
    redisReply *r = command(s, 2, info);
    double sys = 0, user = 0;
    if (r && r->type == REDIS_REPLY_STRING) {
        const char *a = strstr(r->str, "used_cpu_sys:"), *b = strstr(r->str, "used_cpu_user:");
        if (a) sys = atof(a + 13);
        if (b) user = atof(b + 14);
    }
    if (r) freeReplyObject(r);
    return sys + user;
}

static double self_cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
           ((double)u.ru_utime.tv_usec + (double)u.ru_stime.tv_usec) / 1e6;
}

static void shard_open(shard *s, const char *url, unsigned i)
{
    cwork_error err = {0};
    if (cw_sharding_ns(NS, i, s->ns, sizeof s->ns, &err) != 0) fail("shard name", &err);
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.max_connections = 1;
    s->redis = cwork_redis_new(url, &o, &err);
    if (!s->redis || cw_redis_use_namespace(s->redis, s->ns, &err) != 0) fail(url, &err);
    const char *myid[] = {"CLUSTER", "MYID"};
    redisReply *r = command(s, 2, myid);
    snprintf(s->master, sizeof s->master, "%s",
             r && r->type == REDIS_REPLY_STRING ? r->str : "server");
    if (r) freeReplyObject(r);
}

static long queued(shard *s, int queues)
{
    long n = 0;
    for (int q = 0; q < queues; q++) {
        char key[sizeof s->ns + 32];
        snprintf(key, sizeof key, "%.63s:jobs:job%d", s->ns, q);
        const char *llen[] = {"LLEN", key};
        redisReply *r = command(s, 2, llen);
        if (r && r->type == REDIS_REPLY_INTEGER) n += (long)r->integer;
        if (r) freeReplyObject(r);
    }
    return n;
}

/* Over the shards (ns NS), or into one shard's namespace (an unsharded enqueuer). */
static void enqueue(cwork_redis *redis, const char *ns, unsigned shards, long jobs, int queues)
{
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, ns, &err);
    if (!enq || (shards > 1 && cwork_enqueuer_set_shards(enq, shards, &err) != 0))
        fail("enqueuer", &err);
    cwork_batch *b = cwork_batch_new(enq);
    cwork_args *args = cwork_args_new();
    char name[16];
    for (int q = 0; q < queues; q++) {
        snprintf(name, sizeof name, "job%d", q);
        for (long i = 0; i < jobs / queues; i++) {
            cwork_args_set_int64(args, "i", i);
            cwork_batch_add(b, name, args, 0, 0, NULL);
            if (cwork_batch_count(b) == 1000) {
                if (cwork_enqueue_batch(b, &err) != 0) fail("enqueue", &err);
                cwork_batch_reset(b);
            }
        }
    }
    if (cwork_batch_count(b) && cwork_enqueue_batch(b, &err) != 0) fail("enqueue", &err);
    cwork_args_free(args);
    cwork_batch_free(b);
    cwork_enqueuer_free(enq);
}

/* The masters' figures: each master once, with the jobs and CPU of its shards. */
static void report(shard *sh, unsigned shards, const double *cpu0, const double *cpu1, long total,
                   double run_s, double client_s)
{
    double worst = 0, sum_cost = 0;
    int masters = 0;
    for (unsigned i = 0; i < shards; i++) {
        int first = 1;
        for (unsigned k = 0; k < i; k++)
            first &= strcmp(sh[k].master, sh[i].master) != 0;
        if (!first) continue;
        long jobs = 0;
        for (unsigned k = 0; k < shards; k++)
            if (!strcmp(sh[k].master, sh[i].master)) jobs += sh[k].jobs;
        double cost = jobs ? (cpu1[i] - cpu0[i]) * 1e6 / (double)jobs : 0;
        printf("  master %.8s (shard %s and any others on it): %ld jobs, Redis CPU %.2f us/job, "
               "busy %.0f %% of the run\n",
               sh[i].master, sh[i].ns, jobs, cost, (cpu1[i] - cpu0[i]) * 100 / run_s);
        worst = cost > worst ? cost : worst;
        sum_cost += cost;
        masters++;
    }
    double client_us = client_s * 1e6 / (double)total;
    printf("%u shards on %d master(s), %ld jobs: processing %.0f jobs/s; Redis CPU %.2f us/job "
           "per master (mean; worst %.2f); pool process CPU %.2f us/job\n",
           shards, masters, total, (double)total / run_s, sum_cost / masters, worst, client_us);
    double per_master = 1e6 / (sum_cost / masters);
    for (int m = 8; m <= 64; m *= m == 16 ? 4 : 2)
        printf("  projection, %d masters at one core each: %.2f M jobs/s, with pool processes "
               "using %.0f cores in all\n",
               m, m * per_master / 1e6, m * per_master * client_us / 1e6);
}

int main(int argc, char **argv)
{
    const char *url = NULL;
    unsigned shards = 1, concurrency = 0;
    int one_shard = -1;
    long jobs = 200000;
    int queues = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--redis"))
            url = argv[i + 1];
        else if (!strcmp(argv[i], "--shards"))
            shards = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--jobs"))
            jobs = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--queues"))
            queues = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--concurrency"))
            concurrency = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--handler-us"))
            handler_us_ = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--one-shard"))
            one_shard = atoi(argv[i + 1]);
        else
            break;
    }
    if (!url || shards < 1 || shards > MAX_SHARDS || queues < 1 || jobs < queues ||
        one_shard >= (int)shards) {
        fprintf(stderr,
                "usage: bench_sharded --redis URL --shards S (1 to %d) [--jobs N] "
                "[--queues Q] [--concurrency C] [--handler-us U] [--one-shard K]\n",
                MAX_SHARDS);
        return 2;
    }
    if (!concurrency) concurrency = 20 * shards; /* a pool's default, per shard */
    static shard sh[MAX_SHARDS];
    for (unsigned i = 0; i < shards; i++) {
        shard_open(&sh[i], url, i);
        drop(&sh[i]);
    }
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(url, NULL, &err);
    if (!redis) fail(url, &err);
    if (one_shard >= 0)
        enqueue(redis, sh[one_shard].ns, 1, jobs, queues);
    else
        enqueue(redis, NS, shards, jobs, queues);
    long total = 0;
    for (unsigned i = 0; i < shards; i++)
        total += sh[i].jobs = queued(&sh[i], queues);

    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = concurrency;
    o.shards = shards;
    cwork_pool *p = cwork_pool_new(redis, NS, &o, &err);
    if (!p) fail("pool", &err);
    char name[16];
    for (int q = 0; q < queues; q++) {
        snprintf(name, sizeof name, "job%d", q);
        cwork_pool_register(p, name, noop, NULL, NULL);
    }
    double cpu0[MAX_SHARDS], cpu1[MAX_SHARDS];
    for (unsigned i = 0; i < shards; i++)
        cpu0[i] = cpu_seconds(&sh[i]);
    double self0 = self_cpu_seconds();
    if (cwork_pool_start(p, &err) != 0) fail("pool start", &err);
    while (atomic_load(&started_) < total) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    cwork_pool_drain(p, -1, NULL);
    double self1 = self_cpu_seconds();
    for (unsigned i = 0; i < shards; i++)
        cpu1[i] = cpu_seconds(&sh[i]);
    cwork_pool_stop(p, 10000, NULL);
    double run_s = (double)(atomic_load(&last_us_) - atomic_load(&first_us_)) / 1e6;
    report(sh, shards, cpu0, cpu1, total, run_s > 0 ? run_s : 1e-9, self1 - self0);
    if (handler_us_ > 0)
        printf("handlers of %ld us at concurrency %u: %.1f running on average, %d at most\n",
               handler_us_, concurrency, (double)total * (double)handler_us_ / 1e6 / run_s,
               atomic_load(&peak_running_));
    cwork_pool_free(p);
    for (unsigned i = 0; i < shards; i++) {
        drop(&sh[i]);
        cwork_redis_free(sh[i].redis);
    }
    cwork_redis_free(redis);
    return 0;
}
