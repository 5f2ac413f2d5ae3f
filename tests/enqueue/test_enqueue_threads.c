/* One enqueuer shared by many threads (also run under ThreadSanitizer): every job is
 * written exactly once and known_jobs ends up with exactly the names used. */
#include "cwork.h"
#include "testlib.h"

#include <pthread.h>
#include <stdlib.h>

#define THREADS 8
#define PER_THREAD 300
#define NAMES 4

static cwork_enqueuer *enq_;
static int failures_[THREADS];

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    char name[16];
    cwork_args *args = cwork_args_new();
    for (int i = 0; i < PER_THREAD; i++) {
        snprintf(name, sizeof name, "job%d", (t + i) % NAMES);
        cwork_args_set_int64(args, "t", t);
        cwork_args_set_int64(args, "i", i);
        int rc;
        if (i % 3 == 0) {
            /* every third job goes through a small batch of its own */
            cwork_batch *b = cwork_batch_new(enq_);
            rc = cwork_batch_add(b, name, args, 0, 0, NULL);
            if (rc == 0) rc = cwork_enqueue_batch(b, NULL);
            cwork_batch_free(b);
        } else {
            rc = cwork_enqueue(enq_, name, args, NULL, NULL);
        }
        failures_[t] += rc != 0;
    }
    cwork_args_free(args);
    return NULL;
}

static void many_threads_share_one_enqueuer(void)
{
    char ns[64];
    tl_unique_ns("threads", ns, sizeof ns);
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.max_connections = 4; /* fewer than threads: checkouts wait for each other */
    cwork_redis *redis = cwork_redis_new(tl_redis_url(), &o, NULL);
    enq_ = cwork_enqueuer_new(redis, ns, NULL);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        CHECK_INT(failures_[t], 0);
    }
    redisContext *c = tl_redis_connect();
    long long total = 0;
    for (int n = 0; n < NAMES; n++) {
        redisReply *r = tl_cmd(c, "LLEN %s:jobs:job%d", ns, n);
        total += r->integer;
        freeReplyObject(r);
    }
    CHECK_INT(total, THREADS * PER_THREAD);
    redisReply *r = tl_cmd(c, "SCARD %s:known_jobs", ns);
    CHECK_INT(r->integer, NAMES);
    freeReplyObject(r);
    tl_ns_delete(c, ns);
    char *left = tl_ns_dump(c, ns);
    CHECK_STR(left, "");
    free(left);
    redisFree(c);
    cwork_enqueuer_free(enq_);
    cwork_redis_free(redis);
}

int main(void)
{
    RUN(many_threads_share_one_enqueuer);
    return tl_finish();
}
