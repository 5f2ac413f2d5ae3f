/* Worker-pool throughput, efficiency and latency, PROTOCOL §18 at a size measurable at
 * cwork's rate:
 *
 *   bench_pool [--redis URL] [--jobs N] [--concurrency N] [--latency-jobs N] [--queues N]
 *              [--workloads LIST] [--workload-concurrency LIST] [--workload-seconds S]
 *              [--tune NAME=VALUE]... [--features LIST]
 *   bench_pool --shards S [--redis URL] [--jobs N] [--queues N] [--concurrency N]
 *              [--tune NAME=VALUE]...
 *
 * No-op jobs, for 5 and for 10 queues (or only --queues N): enqueues N jobs with
 * {"i": n} (bulk), then runs a pool of in-process C handlers and reports the processing
 * rate from the first to the last handler start, plus the Redis server's CPU time per
 * processed job (INFO cpu before and after), also as a multiple of what one unpipelined
 * PING costs it; and how much of it the scripts took (INFO commandstats: EVALSHA µs, the
 * commands they ran included) over how many jobs per call — the pool's batch size. With
 * --features LIST (of rate-limit, results, kept, batch, cancel),
 * instead: for each feature, 5 queues of plain jobs, then the same with the feature
 * (throughput(), FEATURE_*): what each costs, beside a plain run made just before it.
 *
 * Handlers that take real time (--workloads, default "1ms,10ms,100ms,bimodal"; bimodal
 * is 99 % 1 ms and 1 % 1 s), each at every concurrency of --workload-concurrency
 * (default "20,100"), with enough jobs for about --workload-seconds (default 5) of
 * work: jobs/s and efficiency = handler time / (wall time × concurrency), both over the
 * whole run and over the time jobs were waiting (first to last handler start, handler
 * time clipped to it) — the tail of a run, where the last jobs finish and executors
 * have nothing left to take, is not the pool's doing. Each workload is then run again
 * by a floor loop (a thread per executor, one PING round trip and the sleep per job):
 * what this machine and server allow any pool at all.
 *
 * Then a low-rate run (idle workers, 500 jobs/s) reports p50/p99 of the time from
 * enqueue to handler start. --tune sets a scheduling tunable (src/pool/dispatch_policy.h,
 * e.g. --tune wake_after_us=500). Works in its own namespaces and deletes them. --redis
 * takes every URL form of cwork_redis_new (rediss:// included: its own connection goes
 * through cwork's transport too); not Redis Cluster, whose namespaces need a tag.
 *
 * --shards S runs instead the no-op jobs (one case: 5 queues, or --queues N) over a
 * sharded namespace, {bench}, served by one pool (concurrency by default 20 per shard),
 * against a Redis Cluster (bench/cluster/cluster.sh places each shard on its own master)
 * or one server: jobs/s, and per master its Redis CPU per job, with the pool process's
 * own CPU per job and the projection to 8, 16 and 64 masters (bench_pool_shards.c). */
#include "bench_pool.h"
#include "cwork.h"
#include "pool.h"
#include "redis.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_long started_;
static cw_pool_tuning tuning_; /* --tune */
static _Atomic int64_t first_us_, last_us_;
static int64_t *latency_us_;
static atomic_long latency_n_;

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int noop(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    int64_t t = now_us();
    int64_t zero = 0;
    atomic_compare_exchange_strong(&first_us_, &zero, t);
    atomic_store(&last_us_, t);
    atomic_fetch_add(&started_, 1);
    return 0;
}

static int latency_handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    int64_t t = now_us();
    int64_t sent = (int64_t)cwork_job_arg_float64(job, "sent_us");
    long i = atomic_fetch_add(&latency_n_, 1);
    latency_us_[i] = t - sent;
    return 0;
}

/* The benchmark's own connection to the server (baselines, INFO, cleanup), over cwork's
 * transport so that every URL form works, rediss:// included. */
typedef struct raw_conn {
    cwork_redis *pool;
    cw_conn *c;
} raw_conn;

static redisReply *raw_command(raw_conn *raw, int argc, const char **argv)
{
    redisReply *r = NULL;
    cw_conn_command(raw->c, argc, argv, NULL, &r, NULL);
    return r;
}

static double redis_cpu_seconds(raw_conn *raw)
{
    const char *info[] = {"INFO", "cpu"};
    redisReply *r = raw_command(raw, 2, info);
    double sys = 0, user = 0;
    if (r && r->type == REDIS_REPLY_STRING) {
        const char *s = strstr(r->str, "used_cpu_sys:");
        const char *u = strstr(r->str, "used_cpu_user:");
        if (s) sys = atof(s + 13);
        if (u) user = atof(u + 14);
    }
    if (r) freeReplyObject(r);
    return sys + user;
}

/* EVALSHA calls and the µs Redis spent in them so far (INFO commandstats): the pool's
 * round trips are its cycle script's calls, so that jobs per call is the batch size. */
typedef struct script_stats {
    double calls, usec;
} script_stats;

static script_stats redis_script_stats(raw_conn *raw)
{
    const char *info[] = {"INFO", "commandstats"};
    redisReply *r = raw_command(raw, 2, info);
    script_stats st = {0, 0};
    if (r && r->type == REDIS_REPLY_STRING) {
        const char *e = strstr(r->str, "cmdstat_evalsha:calls=");
        if (e) {
            st.calls = atof(e + strlen("cmdstat_evalsha:calls="));
            const char *u = strstr(e, ",usec=");
            if (u) st.usec = atof(u + strlen(",usec="));
        }
    }
    if (r) freeReplyObject(r);
    return st;
}

static void drop(raw_conn *raw, const char *ns)
{
    char pattern[128];
    snprintf(pattern, sizeof pattern, "%s:*", ns);
    const char *argv[] = {"KEYS", pattern};
    redisReply *keys = raw_command(raw, 2, argv);
    for (size_t i = 0; keys && i < keys->elements; i++) {
        const char *unlink[] = {"UNLINK", keys->element[i]->str};
        redisReply *r = raw_command(raw, 2, unlink);
        if (r) freeReplyObject(r);
    }
    if (keys) freeReplyObject(keys);
}

static raw_conn *dial(const char *url)
{
    cwork_error err = {0};
    raw_conn *raw = calloc(1, sizeof *raw);
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.max_connections = 1;
    raw->pool = cwork_redis_new(url, &o, &err);
    if (!raw->pool || cw_redis_checkout(raw->pool, &raw->c, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.message);
        exit(1);
    }
    return raw;
}

static void raw_close(raw_conn *raw)
{
    cw_redis_checkin(raw->pool, raw->c);
    cwork_redis_free(raw->pool);
    free(raw);
}

/* Baselines on the same server, same run: round trips per second one at a time (the
 * ceiling of a worker that needs a round trip per job, as Go's does) and pipelined. */
static double baseline_rtt, baseline_pipelined, baseline_ping_cpu_us;

static void measure_baselines(raw_conn *raw)
{
    const int n = 20000;
    const char *ping[] = {"PING"};
    double cpu0 = redis_cpu_seconds(raw);
    int64_t t0 = now_us();
    for (int i = 0; i < n; i++) {
        redisReply *r = raw_command(raw, 1, ping);
        if (!r) exit(1);
        freeReplyObject(r);
    }
    baseline_rtt = n / ((double)(now_us() - t0) / 1e6);
    /* What one unpipelined command costs the server (syscalls, wake-ups): the unit the
     * pool's per-job cost is also given in, steadier than microseconds on a shared VM. */
    baseline_ping_cpu_us = (redis_cpu_seconds(raw) - cpu0) * 1e6 / n;
    t0 = now_us();
    for (int i = 0; i < n * 10; i++)
        cw_conn_append(raw->c, 1, ping, NULL, NULL);
    for (int i = 0; i < n * 10; i++) {
        redisReply *r;
        if (cw_conn_read(raw->c, &r, NULL) != 0) exit(1);
        freeReplyObject(r);
    }
    baseline_pipelined = n * 10 / ((double)(now_us() - t0) / 1e6);
    printf("baseline: %.0f round trips/s one at a time (Redis CPU %.2f us each), %.0f/s "
           "pipelined\n",
           baseline_rtt, baseline_ping_cpu_us, baseline_pipelined);
}

/* What a no-op run may carry besides plain jobs (--features): each is measured beside a
 * plain run of the same size, in the same run of the benchmark. */
typedef enum {
    FEATURE_NONE,
    FEATURE_RATE_LIMIT, /* one more type limited to 100/1s, its jobs waiting all run long */
    FEATURE_RESULTS,    /* every job stores a 16-byte result (PROTOCOL §22) */
    FEATURE_KEPT,       /* every type keeps its last 1,000 successes (§22) */
    FEATURE_BATCH,      /* every job is a member of a tracked batch of 1,000 (§23) */
    FEATURE_CANCEL      /* a cancel is pending for a job outside the run (§21.3): every
                         * commit then looks each job up */
} feature;

static const char *const feature_names[] = {"plain", "rate-limit", "results",
                                            "kept",  "batch",      "cancel"};

static feature feature_by_name(const char *name)
{
    for (int f = FEATURE_RATE_LIMIT; f <= FEATURE_CANCEL; f++)
        if (!strcmp(name, feature_names[f])) return (feature)f;
    fprintf(stderr,
            "bench: --features: unknown feature '%s' (rate-limit, results, kept, "
            "batch, cancel)\n",
            name);
    exit(2);
}

static atomic_long aside_started_;

/* The handler of jobs counted apart from the no-op jobs: the rate-limited type's and
 * the batches' callbacks. */
static int aside_noop(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    atomic_fetch_add(&aside_started_, 1);
    return 0;
}

/* A no-op job that stores a result, as a handler returning a small record would. */
static int noop_with_result(cwork_job *job, void *ctx)
{
    static const char result[] = "{\"ok\":true,\"n\":12}"; /* 16 bytes */
    cwork_job_set_result(job, result, sizeof result - 1);
    return noop(job, ctx);
}

/* Sends the jobs added to b; with FEATURE_BATCH they were made members of a batch
 * opened before them, which is sealed now. */
static void send_chunk(cwork_enqueuer *enq, cwork_batch *b, feature f, const char *batch_id)
{
    if (cwork_enqueue_batch(b, NULL) != 0) {
        fprintf(stderr, "bench: enqueue failed\n");
        exit(1);
    }
    if (f == FEATURE_BATCH && cwork_batch_seal(enq, batch_id, NULL) != 0) exit(1);
    cwork_batch_reset(b);
}

static long batches_opened_;

static void open_chunk(cwork_enqueuer *enq, cwork_batch *b, feature f, char batch_id[25])
{
    if (f != FEATURE_BATCH) return;
    batches_opened_++;
    if (cwork_batch_open(enq, CWORK_BATCH_ON_COMPLETE, "bench_cb", NULL, batch_id, NULL) != 0 ||
        cwork_batch_join(b, batch_id, NULL) != 0) {
        fprintf(stderr, "bench: cannot open a tracked batch\n");
        exit(1);
    }
}

static void enqueue_noops(cwork_enqueuer *enq, long jobs, int queues, feature f)
{
    cwork_batch *b = cwork_batch_new(enq);
    cwork_args *args = cwork_args_new();
    char name[16], batch_id[25] = "";
    open_chunk(enq, b, f, batch_id);
    for (int q = 0; q < queues; q++) {
        snprintf(name, sizeof name, "job%d", q);
        for (long i = 0; i < jobs / queues; i++) {
            cwork_args_set_int64(args, "i", i);
            cwork_batch_add(b, name, args, 0, 0, NULL);
            if (cwork_batch_count(b) == 1000) {
                send_chunk(enq, b, f, batch_id);
                open_chunk(enq, b, f, batch_id);
            }
        }
    }
    send_chunk(enq, b, f, batch_id);
    if (f == FEATURE_RATE_LIMIT) { /* not timed: more than the run can take at 100/s */
        for (long i = 0; i < 5000; i++)
            cwork_batch_add(b, "limited", args, 0, 0, NULL);
        send_chunk(enq, b, FEATURE_NONE, NULL);
    }
    cwork_args_free(args);
    cwork_batch_free(b);
}

/* Registers the no-op types, and what feature f needs. */
static void register_noops(cwork_pool *p, int queues, feature f)
{
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    if (f == FEATURE_KEPT) jo.keep_succeeded = 1000;
    char name[16];
    for (int q = 0; q < queues; q++) {
        snprintf(name, sizeof name, "job%d", q);
        cwork_pool_register(p, name, f == FEATURE_RESULTS ? noop_with_result : noop, &jo, NULL);
    }
    if (f == FEATURE_RATE_LIMIT) {
        cwork_job_options_init(&jo);
        jo.rate_limit = 100;
        jo.rate_limit_window_ms = 1000;
        cwork_pool_register(p, "limited", aside_noop, &jo, NULL);
    }
    if (f == FEATURE_BATCH) cwork_pool_register(p, "bench_cb", aside_noop, NULL, NULL);
}

/* No-op jobs on `queues` queues, plain or with feature f (above): jobs/s from the first
 * to the last start, and Redis CPU per job. */
static void throughput(cwork_redis *redis, raw_conn *raw, long jobs, int queues,
                       unsigned concurrency, feature f)
{
    const char *ns = "bench_test"; /* PROTOCOL §18 */
    drop(raw, ns);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, ns, NULL);
    int64_t t0 = now_us();
    batches_opened_ = 0;
    enqueue_noops(enq, jobs, queues, f);
    double enqueue_s = (double)(now_us() - t0) / 1e6;
    long total = (jobs / queues) * queues;
    if (f == FEATURE_CANCEL) {
        const char *mark[] = {"HSET", "bench_test:cwork:cancelled", "000000000000000000000000",
                              "1"};
        redisReply *r = raw_command(raw, 4, mark);
        if (r) freeReplyObject(r);
    }

    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = concurrency;
    cwork_pool *p = cwork_pool_new(redis, ns, &o, NULL);
    cw_pool_set_tuning(p, &tuning_);
    register_noops(p, queues, f);
    atomic_store(&aside_started_, 0);
    atomic_store(&started_, 0);
    atomic_store(&first_us_, 0);
    double cpu0 = redis_cpu_seconds(raw);
    script_stats sc0 = redis_script_stats(raw);
    cwork_error err = {0};
    if (cwork_pool_start(p, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.message);
        exit(1);
    }
    while (atomic_load(&started_) < total) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    /* the limited queue never drains; the others' last commits are part of the cost */
    if (f != FEATURE_RATE_LIMIT) cwork_pool_drain(p, -1, NULL);
    double cpu1 = redis_cpu_seconds(raw);
    script_stats sc1 = redis_script_stats(raw);
    cwork_pool_stop(p, 10000, NULL);
    double run_s = (double)(atomic_load(&last_us_) - atomic_load(&first_us_)) / 1e6;
    double rate = (double)(total - 1) / (run_s > 0 ? run_s : 1e-9);
    double cpu_us = (cpu1 - cpu0) * 1e6 / (double)total;
    double calls = sc1.calls - sc0.calls;
    printf("%2d queues, %-10s concurrency %u, %ld jobs: enqueue %9.0f jobs/s, processing "
           "%9.0f jobs/s (%.1fx one-at-a-time round trips), Redis CPU %.2f us/job (%.2fx "
           "one PING round trip; scripts %.2f us/job, %.1f jobs per call)\n",
           queues, feature_names[f], concurrency, total, (double)total / enqueue_s, rate,
           rate / baseline_rtt, cpu_us, cpu_us / baseline_ping_cpu_us,
           (sc1.usec - sc0.usec) / (double)total, calls > 0 ? (double)total / calls : 0.0);
    if (f == FEATURE_RATE_LIMIT)
        printf("  the rate-limited type (100/1s): %ld started in %.2f s\n",
               atomic_load(&aside_started_), run_s);
    if (f == FEATURE_BATCH)
        printf("  batch callbacks run: %ld of %ld (the pool stops when the last no-op job "
               "is committed)\n",
               atomic_load(&aside_started_), batches_opened_);
    cwork_pool_free(p);
    cwork_enqueuer_free(enq);
    drop(raw, ns);
}

/* ---------------------------------------------------------------- sleeping handlers */

static _Atomic int64_t *run_start_us_, *run_end_us_;

/* Sleeps the job's "ms" and records when it ran, by its "i". */
static int sleeper(cwork_job *job, void *ctx)
{
    (void)ctx;
    long i = (long)cwork_job_arg_int64(job, "i");
    int64_t ms = cwork_job_arg_int64(job, "ms");
    atomic_store(&run_start_us_[i], now_us());
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    atomic_store(&run_end_us_[i], now_us());
    atomic_fetch_add(&started_, 1);
    return 0;
}

static int64_t workload_ms(const char *w, long i)
{
    if (!strcmp(w, "bimodal")) /* 1 % of 1 s, spread evenly by a fixed hash */
        return ((unsigned long)i * 2654435761u) % 100 == 0 ? 1000 : 1;
    return atol(w);
}

/* Efficiency of a run from when each job started and ended: handler time / (wall time x
 * concurrency), over the whole run and over the part when jobs still waited (until
 * the last job started). Also jobs/s over the run. */
typedef struct {
    double jobs_per_s, efficiency, efficiency_waiting;
} run_figures;

static run_figures figures_of_run(long n, unsigned concurrency)
{
    int64_t first = INT64_MAX, last_start = 0, last_end = 0;
    for (long i = 0; i < n; i++) {
        first = run_start_us_[i] < first ? run_start_us_[i] : first;
        last_start = run_start_us_[i] > last_start ? run_start_us_[i] : last_start;
        last_end = run_end_us_[i] > last_end ? run_end_us_[i] : last_end;
    }
    double busy = 0, busy_waiting = 0;
    for (long i = 0; i < n; i++) {
        int64_t s0 = run_start_us_[i], e0 = run_end_us_[i];
        busy += (double)(e0 - s0);
        int64_t e1 = e0 < last_start ? e0 : last_start;
        if (e1 > s0) busy_waiting += (double)(e1 - s0);
    }
    double wall = (double)(last_end - first), waiting = (double)(last_start - first);
    return (run_figures){(double)n / (wall / 1e6), busy / (wall * concurrency),
                         waiting > 0 ? busy_waiting / (waiting * concurrency) : 0.0};
}

/* The floor a sleeping workload is measured against, on the same machine and server:
 * one thread per executor, each with its own connection, doing nothing but one
 * unpipelined PING round trip per job and the job's sleep. A pool must at least learn
 * of each job, so the gap between this loop and 1.000 is the machine's (thread
 * wake-ups, timer slack, a round trip, cores shared with Redis), not the pool's. */
typedef struct {
    const char *url, *w;
    long n;
    atomic_long *next;
} floor_arg;

static void *floor_thread(void *arg)
{
    floor_arg *a = arg;
    raw_conn *c = dial(a->url);
    const char *ping[] = {"PING"};
    for (long i; (i = atomic_fetch_add(a->next, 1)) < a->n;) {
        redisReply *r = raw_command(c, 1, ping);
        if (r) freeReplyObject(r);
        int64_t ms = workload_ms(a->w, i);
        atomic_store(&run_start_us_[i], now_us());
        struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
        nanosleep(&ts, NULL);
        atomic_store(&run_end_us_[i], now_us());
    }
    raw_close(c);
    return NULL;
}

static run_figures workload_floor(const char *url, const char *w, unsigned concurrency, long n)
{
    atomic_long next = 0;
    floor_arg a = {url, w, n, &next};
    pthread_t *t = calloc(concurrency, sizeof *t);
    for (unsigned i = 0; i < concurrency; i++)
        pthread_create(&t[i], NULL, floor_thread, &a);
    for (unsigned i = 0; i < concurrency; i++)
        pthread_join(t[i], NULL);
    free(t);
    return figures_of_run(n, concurrency);
}

static void workload(cwork_redis *redis, raw_conn *raw, const char *url, const char *w,
                     unsigned concurrency, double seconds)
{
    const char *ns = "cwork-bench-workload";
    drop(raw, ns);
    double mean_ms = !strcmp(w, "bimodal") ? 0.99 * 1 + 0.01 * 1000 : (double)atol(w);
    long n = (long)(seconds * 1000.0 * concurrency / mean_ms);
    run_start_us_ = calloc((size_t)n, sizeof *run_start_us_);
    run_end_us_ = calloc((size_t)n, sizeof *run_end_us_);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, ns, NULL);
    cwork_batch *b = cwork_batch_new(enq);
    cwork_args *args = cwork_args_new();
    for (long i = 0; i < n; i++) {
        cwork_args_set_int64(args, "i", i);
        cwork_args_set_int64(args, "ms", workload_ms(w, i));
        cwork_batch_add(b, "sleep", args, 0, 0, NULL);
        if (cwork_batch_count(b) == 1000) {
            cwork_enqueue_batch(b, NULL);
            cwork_batch_reset(b);
        }
    }
    cwork_enqueue_batch(b, NULL);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = concurrency;
    cwork_pool *p = cwork_pool_new(redis, ns, &o, NULL);
    cw_pool_set_tuning(p, &tuning_);
    cwork_pool_register(p, "sleep", sleeper, NULL, NULL);
    atomic_store(&started_, 0);
    double cpu0 = redis_cpu_seconds(raw);
    cwork_error err = {0};
    if (cwork_pool_start(p, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.message);
        exit(1);
    }
    while (atomic_load(&started_) < n) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    double cpu_us = (redis_cpu_seconds(raw) - cpu0) * 1e6 / (double)n;
    cwork_pool_stop(p, 10000, NULL);
    run_figures f = figures_of_run(n, concurrency);
    memset(run_start_us_, 0, (size_t)n * sizeof *run_start_us_);
    memset(run_end_us_, 0, (size_t)n * sizeof *run_end_us_);
    run_figures fl = workload_floor(url, w, concurrency, n);
    printf("%-7s concurrency %3u, %6ld jobs: %8.0f jobs/s, efficiency %.3f (%.3f while jobs "
           "waited), Redis CPU %.1f us/job; floor loop %.0f jobs/s, efficiency %.3f\n",
           w, concurrency, n, f.jobs_per_s, f.efficiency, f.efficiency_waiting, cpu_us,
           fl.jobs_per_s, fl.efficiency);
    cwork_pool_free(p);
    cwork_args_free(args);
    cwork_batch_free(b);
    cwork_enqueuer_free(enq);
    free(run_start_us_);
    free(run_end_us_);
    drop(raw, ns);
}

#define TUNE(field)                                                                                \
    do {                                                                                           \
        if (n == strlen(#field) && !strncmp(spec, #field, n)) {                                    \
            tuning_.field = (__typeof__(tuning_.field))v;                                          \
            return 0;                                                                              \
        }                                                                                          \
    } while (0)

/* The tunables that count executors, jobs or round trips: 0, or -1 for another name. */
static int tune_count(const char *spec, size_t n, long long v)
{
    TUNE(shard_executors);
    TUNE(max_shards);
    TUNE(max_fetch);
    TUNE(ahead_max);
    TUNE(ahead_round_trips);
    TUNE(long_run_factor);
    TUNE(idle_backoff_factor);
    return -1;
}

/* The tunables that are times: 0, or -1 for another name. */
static int tune_time(const char *spec, size_t n, long long v)
{
    TUNE(wake_target_us);
    TUNE(wake_after_us);
    TUNE(gather_max_us);
    TUNE(gather_handler_us);
    TUNE(spin_max_us);
    TUNE(spin_handler_us);
    TUNE(spin_wake_us);
    TUNE(idle_backoff_first_ms);
    return -1;
}
#undef TUNE

/* Sets one field of tuning_ from NAME=VALUE; 0 or -1. */
static int tune(const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq) return -1;
    long long v = atoll(eq + 1);
    size_t n = (size_t)(eq - spec);
    return tune_count(spec, n, v) == 0 || tune_time(spec, n, v) == 0 ? 0 : -1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void latency(cwork_redis *redis, raw_conn *raw, long n, unsigned concurrency)
{
    const char *ns = "cwork-bench-latency";
    drop(raw, ns);
    latency_us_ = calloc((size_t)n, sizeof *latency_us_);
    atomic_store(&latency_n_, 0);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = concurrency;
    cwork_pool *p = cwork_pool_new(redis, ns, &o, NULL);
    cw_pool_set_tuning(p, &tuning_);
    cwork_pool_register(p, "ping", latency_handler, NULL, NULL);
    cwork_pool_start(p, NULL);
    struct timespec settle = {0, 300000000};
    nanosleep(&settle, NULL); /* let the pool go idle: its poll backoff at its cap */
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, ns, NULL);
    cwork_args *args = cwork_args_new();
    for (long i = 0; i < n; i++) {
        cwork_args_set_int64(args, "sent_us", now_us());
        cwork_enqueue(enq, "ping", args, NULL, NULL);
        struct timespec gap = {0, 2000000}; /* 500 jobs/s: the workers are idle */
        nanosleep(&gap, NULL);
    }
    cwork_pool_drain(p, 10000, NULL);
    cwork_pool_stop(p, 10000, NULL);
    long got = atomic_load(&latency_n_);
    qsort(latency_us_, (size_t)got, sizeof *latency_us_, cmp_i64);
    if (got > 0)
        printf("pickup latency (enqueue -> handler start), %ld jobs at 500/s: p50 %.2f ms, "
               "p99 %.2f ms, max %.2f ms\n",
               got, latency_us_[got / 2] / 1000.0, latency_us_[got * 99 / 100] / 1000.0,
               latency_us_[got - 1] / 1000.0);
    free(latency_us_);
    cwork_args_free(args);
    cwork_enqueuer_free(enq);
    cwork_pool_free(p);
    drop(raw, ns);
}

/* ---------------------------------------------------------------- for --shards */

raw_conn *bp_dial(const char *url, const char *ns)
{
    if (!ns) return dial(url);
    cwork_error err = {0};
    raw_conn *raw = calloc(1, sizeof *raw);
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.max_connections = 1;
    raw->pool = cwork_redis_new(url, &o, &err);
    if (!raw->pool || cw_redis_use_namespace(raw->pool, ns, &err) != 0 ||
        cw_redis_checkout(raw->pool, &raw->c, &err) != 0) {
        fprintf(stderr, "bench: %s: %s\n", ns, err.message);
        exit(1);
    }
    return raw;
}

void bp_close(raw_conn *raw)
{
    raw_close(raw);
}

redisReply *bp_command(raw_conn *raw, int argc, const char **argv)
{
    return raw_command(raw, argc, argv);
}

double bp_redis_cpu(raw_conn *raw)
{
    return redis_cpu_seconds(raw);
}

void bp_drop(raw_conn *raw, const char *ns)
{
    drop(raw, ns);
}

void bp_enqueue_noops(cwork_enqueuer *enq, long jobs, int queues)
{
    enqueue_noops(enq, jobs, queues, FEATURE_NONE);
}

void bp_register_noops(cwork_pool *p, int queues)
{
    cw_pool_set_tuning(p, &tuning_);
    register_noops(p, queues, FEATURE_NONE);
}

void bp_reset_starts(void)
{
    atomic_store(&started_, 0);
    atomic_store(&first_us_, 0);
    atomic_store(&last_us_, 0);
}

long bp_starts(void)
{
    return atomic_load(&started_);
}

double bp_run_seconds(void)
{
    return (double)(atomic_load(&last_us_) - atomic_load(&first_us_)) / 1e6;
}

int main(int argc, char **argv)
{
    const char *url = getenv("CWORK_REDIS_URL");
    long jobs = 1000000, latency_jobs = 1000;
    unsigned concurrency = 20, shards = 0; /* shards 0: not sharded */
    int only_queues = 0;                   /* 0: both cases */
    int concurrency_given = 0;
    char features[128] = ""; /* --features: each beside a plain run, 5 queues */
    char workloads[128] = "1ms,10ms,100ms,bimodal", wconc[64] = "20,100";
    double wseconds = 5;
    cw_pool_tuning_init(&tuning_);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--redis"))
            url = argv[i + 1];
        else if (!strcmp(argv[i], "--jobs"))
            jobs = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--concurrency"))
            concurrency = (unsigned)atoi(argv[i + 1]), concurrency_given = 1;
        else if (!strcmp(argv[i], "--shards") && atoi(argv[i + 1]) > 0)
            shards = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--latency-jobs"))
            latency_jobs = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--queues"))
            only_queues = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--workloads"))
            snprintf(workloads, sizeof workloads, "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "--workload-concurrency"))
            snprintf(wconc, sizeof wconc, "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "--workload-seconds"))
            wseconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--tune") && tune(argv[i + 1]) == 0)
            continue;
        else if (!strcmp(argv[i], "--features"))
            snprintf(features, sizeof features, "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "--rate-limited")) /* the older spelling */
            snprintf(features, sizeof features, "%s", "rate-limit");
        else {
            fprintf(stderr, "usage: bench_pool [--redis URL] [--jobs N] [--concurrency N] "
                            "[--latency-jobs N] [--queues N] [--workloads LIST|none] "
                            "[--workload-concurrency LIST] [--workload-seconds S] "
                            "[--tune NAME=VALUE]... [--features LIST]\n"
                            "       bench_pool --shards S [--redis URL] [--jobs N] [--queues N] "
                            "[--concurrency N] [--tune NAME=VALUE]...\n");
            return 2;
        }
    }
    if (!url) url = "redis://127.0.0.1:6379";
    if (shards > 0) /* a pool's default concurrency per shard */
        return bp_sharded_run(url, shards, jobs, only_queues > 0 ? only_queues : 5,
                              concurrency_given ? concurrency : 20 * shards);
    raw_conn *raw = dial(url);
    cwork_redis *redis = cwork_redis_new(url, NULL, NULL);
    printf("server: %s\n", url);
    measure_baselines(raw);
    if (jobs > 0 && features[0]) {
        /* each feature right after a plain run, so that both see the same machine */
        for (char *save = NULL, *f = strtok_r(features, ",", &save); f;
             f = strtok_r(NULL, ",", &save)) {
            feature which = feature_by_name(f);
            throughput(redis, raw, jobs, 5, concurrency, FEATURE_NONE);
            throughput(redis, raw, jobs, 5, concurrency, which);
        }
    } else if (jobs > 0 && only_queues > 0) {
        throughput(redis, raw, jobs, only_queues, concurrency, FEATURE_NONE);
    } else if (jobs > 0) {
        throughput(redis, raw, jobs, 5, concurrency, FEATURE_NONE);
        throughput(redis, raw, jobs, 10, concurrency, FEATURE_NONE);
    }
    if (strcmp(workloads, "none") != 0) {
        for (char *w = strtok(workloads, ","); w; w = strtok(NULL, ",")) {
            char list[64];
            snprintf(list, sizeof list, "%s", wconc);
            for (char *save = NULL, *c = strtok_r(list, ",", &save); c;
                 c = strtok_r(NULL, ",", &save))
                workload(redis, raw, url, w, (unsigned)atoi(c), wseconds);
        }
    }
    if (latency_jobs > 0) latency(redis, raw, latency_jobs, concurrency);
    cwork_redis_free(redis);
    raw_close(raw);
    return 0;
}
