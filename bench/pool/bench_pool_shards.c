/* `bench_pool --shards S` (issue 23, README "Sharding"): no-op jobs over S shards of
 * namespace {bench}, run by one cwork pool serving every shard, against a Redis Cluster
 * (bench/cluster/cluster.sh puts each shard on its own master) or one server.
 *
 * Enqueues N jobs with {"i": n} (bulk, through the sharded enqueuer: one script call per
 * shard), then runs the pool and reports jobs/s from the first to the last handler
 * start, and per master: the jobs its shards held and its Redis CPU per job (INFO cpu
 * before and after the run, on a connection to that master), and the benchmark
 * process's own CPU per job (getrusage: the pool, the client side of the cost). From
 * those two costs it projects what M masters could run, each at one busy core, with as
 * many pool machines as the client cost asks for. Deletes its namespaces before and
 * after. */
#include "bench_pool.h"
#include "sharding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define NS "{bench}"
#define MAX_SHARDS 64

/* One shard as the benchmark sees it: a connection to its master (its namespace's, in a
 * cluster) and that master's identity. */
typedef struct shard {
    char ns[64];
    raw_conn *raw;
    char master[64]; /* CLUSTER MYID, or "server" outside a cluster */
    long jobs;       /* what it held when the pool started */
} shard;

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
    if (cw_sharding_ns(NS, i, s->ns, sizeof s->ns, &err) != 0) {
        fprintf(stderr, "bench: shard name: %s\n", err.message);
        exit(1);
    }
    s->raw = bp_dial(url, s->ns);
    const char *myid[] = {"CLUSTER", "MYID"};
    redisReply *r = bp_command(s->raw, 2, myid);
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
        redisReply *r = bp_command(s->raw, 2, llen);
        if (r && r->type == REDIS_REPLY_INTEGER) n += (long)r->integer;
        if (r) freeReplyObject(r);
    }
    return n;
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

static void enqueue(const char *url, unsigned shards, long jobs, int queues)
{
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(url, NULL, &err);
    cwork_enqueuer *enq = redis ? cwork_enqueuer_new(redis, NS, &err) : NULL;
    if (!enq || cwork_enqueuer_set_shards(enq, shards, &err) != 0) {
        fprintf(stderr, "bench: enqueuer: %s\n", err.message);
        exit(1);
    }
    bp_enqueue_noops(enq, jobs, queues);
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
}

int bp_sharded_run(const char *url, unsigned shards, long jobs, int queues, unsigned concurrency)
{
    static shard sh[MAX_SHARDS];
    if (shards > MAX_SHARDS || jobs < queues) {
        fprintf(stderr, "bench: --shards takes 1 to %d, and --jobs at least --queues\n",
                MAX_SHARDS);
        return 2;
    }
    printf("server: %s, namespace %s over %u shards\n", url, NS, shards);
    for (unsigned i = 0; i < shards; i++) {
        shard_open(&sh[i], url, i);
        bp_drop(sh[i].raw, sh[i].ns);
    }
    enqueue(url, shards, jobs, queues);
    long total = 0;
    for (unsigned i = 0; i < shards; i++)
        total += sh[i].jobs = queued(&sh[i], queues);

    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(url, NULL, &err);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = concurrency;
    o.shards = shards;
    cwork_pool *p = redis ? cwork_pool_new(redis, NS, &o, &err) : NULL;
    if (!p) {
        fprintf(stderr, "bench: pool: %s\n", err.message);
        return 1;
    }
    bp_register_noops(p, queues);
    bp_reset_starts();
    double cpu0[MAX_SHARDS], cpu1[MAX_SHARDS];
    for (unsigned i = 0; i < shards; i++)
        cpu0[i] = bp_redis_cpu(sh[i].raw);
    double self0 = self_cpu_seconds();
    if (cwork_pool_start(p, &err) != 0) {
        fprintf(stderr, "bench: pool start: %s\n", err.message);
        return 1;
    }
    while (bp_starts() < total) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    cwork_pool_drain(p, -1, NULL);
    double self1 = self_cpu_seconds();
    for (unsigned i = 0; i < shards; i++)
        cpu1[i] = bp_redis_cpu(sh[i].raw);
    cwork_pool_stop(p, 10000, NULL);
    double run_s = bp_run_seconds();
    report(sh, shards, cpu0, cpu1, total, run_s > 0 ? run_s : 1e-9, self1 - self0);
    cwork_pool_free(p);
    cwork_redis_free(redis);
    for (unsigned i = 0; i < shards; i++) {
        bp_drop(sh[i].raw, sh[i].ns);
        bp_close(sh[i].raw);
    }
    return 0;
}
