/* Shared by the Sentinel and Cluster tests: jobs are enqueued by one thread while a pool
 * runs them, and something happens to Redis mid-run (a SIGKILLed master, a manual
 * failover, a slot migration). Counts what was acknowledged, run, lost and run twice,
 * and the longest stretch without progress from the event until the enqueuer is done
 * (before and after it the pool may simply have nothing to do). */
#ifndef CWORK_FAILOVER_TESTUTIL_H
#define CWORK_FAILOVER_TESTUTIL_H

#include "transport_testutil.h"

#include <stdatomic.h>

#define TF_MAX_JOBS 32000

typedef struct tf_plan {
    cwork_redis *enqueue_redis, *pool_redis;
    const char *ns;
    int jobs;        /* enqueued one by one while the pool runs */
    int event_after; /* jobs run before event() */
    void (*event)(void *arg);
    int (*settled)(void *arg); /* optional: waits until the event is over (after the
                                  enqueuer is done); 0 when it is */
    int more;                  /* then this many more jobs */
    void *arg;
    const char *const *watch_logs; /* NULL-terminated log messages to count */
    int patience_ms; /* after the enqueuer: how long without progress ends the wait for
                        acknowledged jobs (0: 20 s; shorter where losses are expected) */
    int enqueuers;   /* threads enqueueing `jobs`, each its share (0: one) */
} tf_plan;

typedef struct tf_stats {
    long acked, lost, dups, enqueue_errors, done_at_event, enqueued_at_event, watched_logs;
    double max_gap_s;
    char last_error[256]; /* of the enqueues that failed */
} tf_stats;

static pthread_mutex_t tf_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char tf_acked[TF_MAX_JOBS], tf_ran[TF_MAX_JOBS];
static long tf_done, tf_dups, tf_enqueued, tf_errors, tf_logs;
static long long tf_last_ms, tf_max_gap_ms;
static int tf_measuring;
static char tf_last_error[256];
static const char *const *tf_watch;
static atomic_int tf_hold; /* while set, handlers wait before they count their job */

static void tf_logger(void *ud, cwork_log_level level, const char *message,
                      const cwork_log_field *fields, size_t nfields)
{
    (void)ud, (void)level, (void)fields, (void)nfields;
    for (const char *const *w = tf_watch; w && *w; w++)
        if (!strcmp(message, *w)) {
            pthread_mutex_lock(&tf_mu);
            tf_logs++;
            pthread_mutex_unlock(&tf_mu);
        }
}

static int tf_job(cwork_job *job, void *ctx)
{
    (void)ctx;
    while (atomic_load(&tf_hold))
        tl_sleep_ms(2);
    int64_t i = cwork_job_arg_int64(job, "i");
    long long now = tl_now_ms();
    pthread_mutex_lock(&tf_mu);
    if (i >= 0 && i < TF_MAX_JOBS) {
        if (tf_ran[i]) tf_dups++;
        tf_ran[i] = 1;
    }
    tf_done++;
    if (tf_measuring && now - tf_last_ms > tf_max_gap_ms) tf_max_gap_ms = now - tf_last_ms;
    tf_last_ms = now;
    pthread_mutex_unlock(&tf_mu);
    return 0;
}

typedef struct tf_enqueuer {
    const tf_plan *plan;
    int from, to;
} tf_enqueuer;

/* Enqueues jobs from … to-1 once each, as an application would: an enqueue that fails
 * is tried again after a pause (the job may then be in Redis twice: a duplicate, not a
 * loss), for at most a minute of failures in all. The acknowledged jobs are the ones
 * that must run. */
static void *tf_enqueue_main(void *arg)
{
    tf_enqueuer *fe = arg;
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(fe->plan->enqueue_redis, fe->plan->ns, &err);
    if (!enq) tl_fail(__FILE__, __LINE__, "enqueuer: %s", err.message);
    cwork_args *args = cwork_args_new();
    long long failing_ms = 0;
    for (int i = fe->from; enq && i < fe->to && failing_ms < 60000; i++) {
        cwork_args_set_int64(args, "i", i);
        for (int attempt = 0; attempt < 20; attempt++) {
            long long t0 = tl_now_ms();
            int rc = cwork_enqueue(enq, "tf_job", args, NULL, &err);
            pthread_mutex_lock(&tf_mu);
            if (rc == 0)
                tf_acked[i] = 1, tf_enqueued++;
            else
                tf_errors++, snprintf(tf_last_error, sizeof tf_last_error, "%s", err.message);
            pthread_mutex_unlock(&tf_mu);
            if (rc == 0) break;
            tl_sleep_ms(20 * (attempt + 1));
            failing_ms += tl_now_ms() - t0;
        }
    }
    cwork_args_free(args);
    cwork_enqueuer_free(enq);
    return NULL;
}

static long tf_get(long *v)
{
    pthread_mutex_lock(&tf_mu);
    long x = *v;
    pthread_mutex_unlock(&tf_mu);
    return x;
}

/* Runs the plan; 0, or -1 when the pool could not even start. Every acknowledged job is
 * waited for until progress stops for 20 s. */
__attribute__((unused)) static int tf_run(const tf_plan *plan, tf_stats *st)
{
    memset(st, 0, sizeof *st);
    memset(tf_acked, 0, sizeof tf_acked);
    memset(tf_ran, 0, sizeof tf_ran);
    tf_done = tf_dups = tf_enqueued = tf_errors = tf_logs = 0;
    tf_last_ms = tl_now_ms();
    tf_max_gap_ms = 0;
    tf_measuring = 0;
    tf_last_error[0] = '\0';
    tf_watch = plan->watch_logs;
    atomic_store(&tf_hold, 0);
    int total = plan->jobs + plan->more;
    if (total > TF_MAX_JOBS) return -1;
    cwork_set_logger(tf_logger, NULL, CWORK_LOG_INFO);

    cwork_error err = {0};
    cwork_pool_options po;
    cwork_pool_options_init(&po);
    po.concurrency = 10;
    cwork_pool *pool = cwork_pool_new(plan->pool_redis, plan->ns, &po, &err);
    if (!pool || cwork_pool_register(pool, "tf_job", tf_job, NULL, &err) != 0 ||
        cwork_pool_start(pool, &err) != 0) {
        tl_fail(__FILE__, __LINE__, "pool: %s", err.message);
        cwork_pool_free(pool);
        cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
        return -1;
    }
    /* min_replicas makes each enqueue wait for a replica: several enqueuers keep the
     * rate up (their WAITs are answered together). */
    int nenq = plan->enqueuers > 0 ? (plan->enqueuers < 8 ? plan->enqueuers : 8) : 1;
    tf_enqueuer fe[8];
    pthread_t th[8];
    for (int k = 0; k < nenq; k++) {
        fe[k] = (tf_enqueuer){plan, plan->jobs * k / nenq, plan->jobs * (k + 1) / nenq};
        pthread_create(&th[k], NULL, tf_enqueue_main, &fe[k]);
    }
    while (tf_get(&tf_done) < plan->event_after && tf_get(&tf_enqueued) < plan->jobs)
        tl_sleep_ms(5);
    pthread_mutex_lock(&tf_mu);
    tf_measuring = 1;
    st->done_at_event = tf_done;
    st->enqueued_at_event = tf_enqueued;
    pthread_mutex_unlock(&tf_mu);
    plan->event(plan->arg);
    for (int k = 0; k < nenq; k++)
        pthread_join(th[k], NULL);
    pthread_mutex_lock(&tf_mu);
    tf_measuring = 0;
    pthread_mutex_unlock(&tf_mu);
    if (plan->settled) {
        if (plan->settled(plan->arg) != 0) tl_fail(__FILE__, __LINE__, "the event never settled");
        tf_enqueuer after = {plan, plan->jobs, total};
        tf_enqueue_main(&after);
    }

    long acked = 0;
    for (int i = 0; i < total; i++)
        acked += tf_acked[i];
    long long still = tl_now_ms();
    long last = -1;
    for (;;) {
        long ran = 0;
        pthread_mutex_lock(&tf_mu);
        for (int i = 0; i < total; i++)
            ran += tf_acked[i] && tf_ran[i];
        pthread_mutex_unlock(&tf_mu);
        if (ran == acked) break;
        if (ran != last) last = ran, still = tl_now_ms();
        if (tl_now_ms() - still > (plan->patience_ms ? plan->patience_ms : 20000)) break;
        tl_sleep_ms(50);
    }
    if (cwork_pool_stop(pool, 10000, &err) != 0)
        tl_fail(__FILE__, __LINE__, "stop: %s", err.message);
    cwork_pool_free(pool);
    cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
    st->acked = acked;
    for (int i = 0; i < total; i++)
        st->lost += tf_acked[i] && !tf_ran[i];
    st->dups = tf_dups;
    st->enqueue_errors = tf_errors;
    st->watched_logs = tf_logs;
    st->max_gap_s = (double)tf_max_gap_ms / 1000.0;
    snprintf(st->last_error, sizeof st->last_error, "%s", tf_last_error);
    return 0;
}

/* One line for the test's output (and the README's figures). */
__attribute__((unused)) static void tf_print(const char *what, const tf_stats *st)
{
    fprintf(stderr,
            "  %s: event after %ld jobs run (%ld enqueued); %.2f s without progress; %ld of %ld "
            "acknowledged jobs lost, %ld ran twice, %ld enqueue errors retried\n",
            what, st->done_at_event, st->enqueued_at_event, st->max_gap_s, st->lost, st->acked,
            st->dups, st->enqueue_errors);
    if (st->last_error[0]) fprintf(stderr, "    (the last enqueue error: %s)\n", st->last_error);
}

#endif
