/* Enqueue throughput against baselines measured in the same run on the same server:
 *
 *   bench_enqueue [--redis URL] [--jobs N] [--bulk-jobs N] [--batch N]
 *
 * prints jobs/s for unpipelined LPUSH (one round trip per job), pipelined LPUSH,
 * cwork_enqueue (one job per call), and cwork_enqueue_batch (one name: one LPUSH per
 * batch; mixed names, delays and unique entries: the enqueue_batch script), with the
 * ratios that the README quotes. The LPUSH payload is a job-sized string so that the
 * comparison is about the client, not the bytes. The baselines run over cwork's own
 * connections, so any URL works (rediss://, redis+sentinel://, redis+cluster://) and
 * both sides pay the same transport. Works in its own namespace ({cwork-bench} in a
 * cluster) and deletes it. */
#include "cwork.h"
#include "redis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A connection for the baselines, from a pool of its own on the same URL. */
static cw_conn *dial(cwork_redis *r)
{
    cw_conn *c;
    cwork_error err = {0};
    if (cw_redis_checkout(r, &c, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.message);
        exit(1);
    }
    return c;
}

static void command(cw_conn *c, const char *fmt, const char *a, const char *b)
{
    cwork_error err = {0};
    if (cw_conn_commandf(c, NULL, &err, fmt, a, b) != 0) {
        fprintf(stderr, "bench: %s\n", err.message);
        exit(1);
    }
}

static void drop_namespace(cw_conn *c, const char *ns)
{
    cwork_error err = {0};
    redisReply *keys = NULL;
    cw_conn_commandf(c, &keys, &err, "KEYS %s:*", ns);
    for (size_t i = 0; keys && i < keys->elements; i++)
        command(c, "UNLINK %s", keys->element[i]->str, NULL);
    if (keys) freeReplyObject(keys);
}

/* What each timed phase needs. */
typedef struct bench {
    cw_conn *c; /* the baselines' own connection */
    const char *ns;
    const char *payload; /* the baselines' job bytes */
    cwork_enqueuer *enq;
    cwork_args *args;
    cwork_batch *b;
    long batch;
} bench;

static void die(const cwork_error *err)
{
    fprintf(stderr, "bench: %s\n", err->message);
    exit(1);
}

/* n jobs, one LPUSH per round trip: the unpipelined baseline. */
static double time_lpush(const bench *x, long n)
{
    double t0 = now_s();
    for (long i = 0; i < n; i++)
        command(x->c, "LPUSH %s:baseline %s", x->ns, x->payload);
    return now_s() - t0;
}

static double time_single(const bench *x, long n)
{
    cwork_error err = {0};
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        cwork_args_set_int64(x->args, "i", i);
        if (cwork_enqueue(x->enq, "bench", x->args, NULL, &err) != 0) die(&err);
    }
    return now_s() - t0;
}

/* n jobs as LPUSHes pipelined batch by batch: the pipelined baseline. */
static double time_lpush_pipelined(const bench *x, long n_jobs)
{
    cwork_error err = {0};
    double t0 = now_s();
    char key[64];
    snprintf(key, sizeof key, "%s:baseline", x->ns);
    const char *lpush[] = {"LPUSH", key, x->payload};
    for (long done = 0; done < n_jobs; done += x->batch) {
        long n = n_jobs - done < x->batch ? n_jobs - done : x->batch;
        for (long i = 0; i < n; i++)
            if (cw_conn_append(x->c, 3, lpush, NULL, &err) != 0) die(&err);
        for (long i = 0; i < n; i++) {
            redisReply *r;
            if (cw_conn_read(x->c, &r, &err) != 0) die(&err);
            freeReplyObject(r);
        }
    }
    return now_s() - t0;
}

/* n jobs by cwork_enqueue_batch; mixed: batches of four names with a delayed and a unique
 * entry now and then (what one LPUSH cannot carry goes through the enqueue_batch script). */
static double time_batches(const bench *x, long n_jobs, int mixed)
{
    static const char *const names[] = {"bench_a", "bench_b", "bench_c", "bench_d"};
    cwork_error err = {0};
    double t0 = now_s();
    for (long done = 0; done < n_jobs; done += x->batch) {
        long n = n_jobs - done < x->batch ? n_jobs - done : x->batch;
        for (long i = 0; i < n; i++) {
            long k = done + i;
            cwork_args_set_int64(x->args, "i", k);
            int flags = !mixed          ? 0
                        : k % 100 == 0  ? CWORK_BATCH_IN
                        : k % 100 == 50 ? CWORK_BATCH_UNIQUE
                                        : 0;
            cwork_batch_add(x->b, mixed ? names[i % 4] : "bench", x->args, mixed ? 3600 : 0, flags,
                            NULL);
        }
        if (cwork_enqueue_batch(x->b, &err) != 0) die(&err);
        cwork_batch_reset(x->b);
    }
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    const char *url = getenv("CWORK_REDIS_URL");
    long jobs = 100000, bulk_jobs = 1000000, batch = 1000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--redis"))
            url = argv[i + 1];
        else if (!strcmp(argv[i], "--jobs"))
            jobs = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--bulk-jobs"))
            bulk_jobs = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--batch"))
            batch = atol(argv[i + 1]);
        else {
            fprintf(stderr, "usage: bench_enqueue [--redis URL] [--jobs N] [--bulk-jobs N] "
                            "[--batch N]\n");
            return 2;
        }
    }
    if (!url) url = "redis://127.0.0.1:6379";
    const char *ns = strstr(url, "+cluster://") ? "{cwork-bench}" : "cwork-bench";
    cwork_error err = {0};
    cwork_redis *base = cwork_redis_new(url, NULL, &err);
    if (!base || cw_redis_use_namespace(base, ns, &err) != 0) die(&err);
    bench x = {.c = dial(base), .ns = ns, .batch = batch};
    drop_namespace(x.c, ns);
    x.payload = "{\"name\":\"bench\",\"id\":\"0123456789abcdef01234567\","
                "\"t\":1700000000,\"args\":{\"i\":12345}}";
    cwork_redis *redis = cwork_redis_new(url, NULL, &err);
    x.enq = redis ? cwork_enqueuer_new(redis, ns, &err) : NULL;
    if (!x.enq) die(&err);
    x.args = cwork_args_new();
    x.b = cwork_batch_new(x.enq);

    /* Baselines and cwork alternate in ROUNDS rounds so that a machine that gets busier
     * or quieter during the run affects both sides of each ratio alike. */
    enum { ROUNDS = 5 };
    double t_lpush = 0, t_pipe = 0, t_single = 0, t_bulk = 0, t_mixed = 0;
    long per_round = jobs / ROUNDS, bulk_per_round = bulk_jobs / ROUNDS;
    for (int round = 0; round < ROUNDS; round++) {
        t_lpush += time_lpush(&x, per_round);
        t_single += time_single(&x, per_round);
        t_pipe += time_lpush_pipelined(&x, bulk_per_round);
        t_bulk += time_batches(&x, bulk_per_round, 0);
        t_mixed += time_batches(&x, bulk_per_round, 1);
        drop_namespace(x.c, ns);
    }
    double total = (double)per_round * ROUNDS, bulk_total = (double)bulk_per_round * ROUNDS;
    double lpush = total / t_lpush, single = total / t_single;
    double lpush_pipe = bulk_total / t_pipe, bulk = bulk_total / t_bulk;
    double mixed = bulk_total / t_mixed;

    char *shown = cwork_redact_url(url);
    printf("server: %s (%ld single jobs, %ld bulk jobs, batches of %ld, %d rounds)\n", shown, jobs,
           bulk_jobs, batch, ROUNDS);
    cwork_free(shown);
    printf("baseline LPUSH, one per round trip:   %10.0f ops/s\n", lpush);
    printf("baseline LPUSH, pipelined:            %10.0f ops/s\n", lpush_pipe);
    printf("cwork_enqueue, one job per call:      %10.0f jobs/s  (%.0f%% of unpipelined LPUSH)\n",
           single, 100 * single / lpush);
    printf("cwork_enqueue_batch:                  %10.0f jobs/s  (%.0f%% of pipelined LPUSH)\n",
           bulk, 100 * bulk / lpush_pipe);
    printf("cwork_enqueue_batch, 4 names, delayed and unique entries (script):\n"
           "                                      %10.0f jobs/s  (%.0f%% of pipelined LPUSH)\n",
           mixed, 100 * mixed / lpush_pipe);
    cwork_batch_free(x.b);
    cwork_args_free(x.args);
    cwork_enqueuer_free(x.enq);
    cwork_redis_free(redis);
    cw_redis_checkin(base, x.c);
    cwork_redis_free(base);
    return 0;
}
