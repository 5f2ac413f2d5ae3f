/* Enqueue throughput against baselines measured in the same run on the same server:
 *
 *   bench_enqueue [--redis URL] [--jobs N] [--bulk-jobs N] [--batch N]
 *
 * prints jobs/s for unpipelined LPUSH (one round trip per job), pipelined LPUSH,
 * cwork_enqueue (one job per call), and cwork_enqueue_batch (one name: one LPUSH per
 * batch; mixed names, delays and unique entries: the enqueue_batch script), with the
 * ratios that the README quotes. The LPUSH payload is a job-sized string so that the comparison is
 * about the client, not the bytes. Works in its own namespace and deletes it. */
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

static redisContext *dial(const char *url)
{
    cw_redis_addr a;
    cwork_error err = {0};
    if (cw_redis_addr_parse(url, &a, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.message);
        exit(1);
    }
    struct timeval tv = {5, 0};
    redisContext *c = a.unix_path ? redisConnectUnixWithTimeout(a.unix_path, tv)
                                  : redisConnectWithTimeout(a.host, a.port, tv);
    if (!c || c->err) {
        fprintf(stderr, "bench: cannot connect\n");
        exit(1);
    }
    if (a.password) {
        redisReply *r = a.user ? redisCommand(c, "AUTH %s %s", a.user, a.password)
                               : redisCommand(c, "AUTH %s", a.password);
        freeReplyObject(r);
    }
    if (a.db) {
        redisReply *r = redisCommand(c, "SELECT %d", a.db);
        freeReplyObject(r);
    }
    cw_redis_addr_clear(&a);
    return c;
}

static void drop_namespace(redisContext *c, const char *ns)
{
    redisReply *keys = redisCommand(c, "KEYS %s:*", ns);
    for (size_t i = 0; keys && i < keys->elements; i++)
        freeReplyObject(redisCommand(c, "UNLINK %s", keys->element[i]->str));
    freeReplyObject(keys);
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
    if (!url)
        url = "redis://127.0.0.1:6379";
    const char *ns = "cwork-bench";
    redisContext *c = dial(url);
    drop_namespace(c, ns);
    const char *payload = "{\"name\":\"bench\",\"id\":\"0123456789abcdef01234567\","
                          "\"t\":1700000000,\"args\":{\"i\":12345}}";

    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(url, NULL, &err);
    cwork_enqueuer *enq = redis ? cwork_enqueuer_new(redis, ns, &err) : NULL;
    if (!enq) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 1;
    }
    cwork_args *args = cwork_args_new();
    cwork_batch *b = cwork_batch_new(enq);

    /* Baselines and cwork alternate in ROUNDS rounds so that a machine that gets busier
     * or quieter during the run affects both sides of each ratio alike. */
    enum { ROUNDS = 5 };
    double t_lpush = 0, t_pipe = 0, t_single = 0, t_bulk = 0, t_mixed = 0;
    long per_round = jobs / ROUNDS, bulk_per_round = bulk_jobs / ROUNDS;
    for (int round = 0; round < ROUNDS; round++) {
        double t0 = now_s();
        for (long i = 0; i < per_round; i++)
            freeReplyObject(redisCommand(c, "LPUSH %s:baseline %s", ns, payload));
        t_lpush += now_s() - t0;

        t0 = now_s();
        for (long i = 0; i < per_round; i++) {
            cwork_args_set_int64(args, "i", i);
            if (cwork_enqueue(enq, "bench", args, NULL, &err) != 0) {
                fprintf(stderr, "bench: %s\n", err.message);
                return 1;
            }
        }
        t_single += now_s() - t0;

        t0 = now_s();
        for (long done = 0; done < bulk_per_round; done += batch) {
            long n = bulk_per_round - done < batch ? bulk_per_round - done : batch;
            for (long i = 0; i < n; i++)
                redisAppendCommand(c, "LPUSH %s:baseline %s", ns, payload);
            for (long i = 0; i < n; i++) {
                void *r;
                if (redisGetReply(c, &r) != REDIS_OK)
                    return 1;
                freeReplyObject(r);
            }
        }
        t_pipe += now_s() - t0;

        t0 = now_s();
        for (long done = 0; done < bulk_per_round; done += batch) {
            long n = bulk_per_round - done < batch ? bulk_per_round - done : batch;
            for (long i = 0; i < n; i++) {
                cwork_args_set_int64(args, "i", done + i);
                cwork_batch_add(b, "bench", args, 0, 0, NULL);
            }
            if (cwork_enqueue_batch(b, &err) != 0) {
                fprintf(stderr, "bench: %s\n", err.message);
                return 1;
            }
            cwork_batch_reset(b);
        }
        t_bulk += now_s() - t0;

        /* Batches of four names with a delayed and a unique entry now and then: what
         * one LPUSH cannot carry goes through the enqueue_batch script. */
        static const char *const names[] = {"bench_a", "bench_b", "bench_c", "bench_d"};
        t0 = now_s();
        for (long done = 0; done < bulk_per_round; done += batch) {
            long n = bulk_per_round - done < batch ? bulk_per_round - done : batch;
            for (long i = 0; i < n; i++) {
                cwork_args_set_int64(args, "i", done + i);
                int flags = (done + i) % 100 == 0 ? CWORK_BATCH_IN
                            : (done + i) % 100 == 50 ? CWORK_BATCH_UNIQUE : 0;
                cwork_batch_add(b, names[i % 4], args, 3600, flags, NULL);
            }
            if (cwork_enqueue_batch(b, &err) != 0) {
                fprintf(stderr, "bench: %s\n", err.message);
                return 1;
            }
            cwork_batch_reset(b);
        }
        t_mixed += now_s() - t0;
        drop_namespace(c, ns);
    }
    double total = (double)per_round * ROUNDS, bulk_total = (double)bulk_per_round * ROUNDS;
    double lpush = total / t_lpush, single = total / t_single;
    double lpush_pipe = bulk_total / t_pipe, bulk = bulk_total / t_bulk;
    double mixed = bulk_total / t_mixed;

    printf("server: %s (%ld single jobs, %ld bulk jobs, batches of %ld, %d rounds)\n",
           url, jobs, bulk_jobs, batch, ROUNDS);
    printf("baseline LPUSH, one per round trip:   %10.0f ops/s\n", lpush);
    printf("baseline LPUSH, pipelined:            %10.0f ops/s\n", lpush_pipe);
    printf("cwork_enqueue, one job per call:      %10.0f jobs/s  (%.0f%% of unpipelined LPUSH)\n",
           single, 100 * single / lpush);
    printf("cwork_enqueue_batch:                  %10.0f jobs/s  (%.0f%% of pipelined LPUSH)\n",
           bulk, 100 * bulk / lpush_pipe);
    printf("cwork_enqueue_batch, 4 names, delayed and unique entries (script):\n"
           "                                      %10.0f jobs/s  (%.0f%% of pipelined LPUSH)\n",
           mixed, 100 * mixed / lpush_pipe);
    cwork_batch_free(b);
    cwork_args_free(args);
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
    redisFree(c);
    return 0;
}
