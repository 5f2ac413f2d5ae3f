/* /metrics and /healthz of `cwork work`: see work_metrics.h. */
#define _GNU_SOURCE
#include "work_metrics.h"

#include "metrics_server.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HEALTH_PERIOD_MS 2000
#define HEARTBEAT_FRESH_S 10    /* other pools' reapers take a pool's jobs after 10 s */
#define HEALTH_MAX_AGE_MS 10000 /* a check older than this: Redis hangs */

struct work_metrics {
    const work_opts *o;
    cwork_redis *redis;
    cwork_client *client;
    char pool_id[32];
    atomic_llong started_ms; /* set again when the pool starts; read by the server */
    metrics_server *server;
    pthread_t health_thread;
    pthread_mutex_t mu;
    pthread_cond_t cond; /* wakes the health thread to stop */
    /* Guarded by mu: */
    int health_started;
    int stopping;
    int healthy;
    int64_t checked_ms; /* 0: no check finished yet */
    char why[300];
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------- health */

/* Reads this pool's heartbeat: 1 when fresh, else 0, with why filled either way. */
static int check_health(work_metrics *m, char *why, size_t size)
{
    cwork_pool_heartbeat *pools = NULL;
    size_t n = 0;
    cwork_error err = {0};
    /* A PING first: the library logs a failed client call, and a Redis that is down
     * would otherwise add a log line every HEALTH_PERIOD_MS to the pool's own. */
    if (cwork_redis_ping(m->redis, &err) != 0 ||
        cwork_client_pools(m->client, &pools, &n, &err) != 0) {
        snprintf(why, size, "Redis: %s", err.message);
        return 0;
    }
    int64_t at = -1;
    for (size_t i = 0; i < n; i++)
        if (strcmp(pools[i].worker_pool_id, m->pool_id) == 0) at = pools[i].heartbeat_at;
    cwork_pool_heartbeats_free(pools, n);
    int64_t age = (int64_t)time(NULL) - at;
    if (at < 0) {
        snprintf(why, size, "pool %s has no heartbeat in Redis (stopped, or reaped)", m->pool_id);
        return 0;
    }
    snprintf(why, size, "pool %s: heartbeat %" PRId64 " s ago", m->pool_id, age < 0 ? 0 : age);
    return age <= HEARTBEAT_FRESH_S;
}

static void *health_main(void *arg)
{
    work_metrics *m = arg;
    pthread_mutex_lock(&m->mu);
    while (!m->stopping) {
        pthread_mutex_unlock(&m->mu);
        char why[sizeof m->why];
        int ok = check_health(m, why, sizeof why);
        pthread_mutex_lock(&m->mu);
        m->healthy = ok;
        m->checked_ms = mono_ms();
        memcpy(m->why, why, sizeof why);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += HEALTH_PERIOD_MS / 1000;
        until.tv_nsec += (long)(HEALTH_PERIOD_MS % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        while (!m->stopping && pthread_cond_timedwait(&m->cond, &m->mu, &until) != ETIMEDOUT) {
        }
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

/* The health as /healthz tells it: 1 or 0, and a line saying why. */
static int health_now(work_metrics *m, char *why, size_t size)
{
    pthread_mutex_lock(&m->mu);
    int64_t age = mono_ms() - m->checked_ms;
    int ok = m->checked_ms && m->healthy && age <= HEALTH_MAX_AGE_MS;
    if (!m->health_started)
        snprintf(why, size, "starting: the pool is not started yet");
    else if (!m->checked_ms)
        snprintf(why, size, "starting: no health check finished yet");
    else if (age > HEALTH_MAX_AGE_MS)
        snprintf(why, size, "no answer from Redis for %" PRId64 " s (last: %s)", age / 1000,
                 m->why);
    else
        snprintf(why, size, "%s", m->why);
    pthread_mutex_unlock(&m->mu);
    return ok;
}

/* ---------------------------------------------------------------- /metrics */

static void label_value(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fputc('\\', f), fputc(*s, f);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

enum { C_PROCESSED, C_FAILED, C_RETRIED, C_DEAD, C_DROPPED, C_RUNNING };

static int64_t count_of(const work_job *j, int which)
{
    const work_counts *c = &j->counts;
    switch (which) {
    case C_PROCESSED:
        return (int64_t)atomic_load(&c->processed);
    case C_FAILED:
        return (int64_t)atomic_load(&c->failed);
    case C_RETRIED:
        return (int64_t)atomic_load(&c->retried);
    case C_DEAD:
        return (int64_t)atomic_load(&c->dead);
    case C_DROPPED:
        return (int64_t)atomic_load(&c->dropped);
    default:
        return (int64_t)atomic_load(&c->running);
    }
}

static void render_metrics(work_metrics *m, FILE *f)
{
    static const struct {
        const char *name, *type, *help;
    } per_name[] = {
        {"cwork_work_jobs_processed_total", "counter",
         "Jobs whose command ended (succeeded or failed), by job name."},
        {"cwork_work_jobs_failed_total", "counter",
         "Jobs whose command failed (then retried, dead or dropped), by job name."},
        {"cwork_work_jobs_retried_total", "counter", "Failed jobs sent to the retry set."},
        {"cwork_work_jobs_dead_total", "counter",
         "Failed jobs sent to the dead set (retries exhausted or no-retry exit status)."},
        {"cwork_work_jobs_dropped_total", "counter", "Failed jobs dropped (--skip-dead)."},
        {"cwork_work_jobs_running", "gauge", "Commands running now, by job name."},
    };
    char why[400];
    int healthy = health_now(m, why, sizeof why);
    family(f, "cwork_work_healthy", "gauge",
           "1 while /healthz answers 200: the pool's heartbeat in Redis is fresh.");
    fprintf(f, "cwork_work_healthy %d\n", healthy);
    family(f, "cwork_work_uptime_seconds", "gauge", "Seconds since the pool started.");
    fprintf(f, "cwork_work_uptime_seconds %.3f\n",
            (double)(mono_ms() - atomic_load(&m->started_ms)) / 1000.0);
    family(f, "cwork_work_concurrency", "gauge", "Commands the pool runs at most at once.");
    fprintf(f, "cwork_work_concurrency %u\n", m->o->concurrency);
    family(f, "cwork_work_pool_info", "gauge", "The pool's id and namespace (value 1).");
    fputs("cwork_work_pool_info{namespace=", f);
    label_value(f, m->o->conn.ns);
    fputs(",pool_id=", f);
    label_value(f, m->pool_id);
    fputs("} 1\n", f);
    for (size_t k = 0; k < sizeof per_name / sizeof per_name[0]; k++) {
        family(f, per_name[k].name, per_name[k].type, per_name[k].help);
        for (size_t i = 0; i < m->o->njobs; i++) {
            fprintf(f, "%s{job_name=", per_name[k].name);
            label_value(f, m->o->jobs[i].name);
            fprintf(f, "} %" PRId64 "\n", count_of(&m->o->jobs[i], (int)k));
        }
    }
}

static void route(void *userdata, const char *path, metrics_reply *reply)
{
    work_metrics *m = userdata;
    char *body = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&body, &len);
    if (!f) {
        reply->status = 503;
        return;
    }
    if (strcmp(path, "/metrics") == 0) {
        render_metrics(m, f);
        reply->status = 200;
        reply->content_type = "text/plain; version=0.0.4; charset=utf-8";
    } else if (strcmp(path, "/healthz") == 0) {
        char why[400];
        int ok = health_now(m, why, sizeof why);
        fprintf(f, "%s: %s\n", ok ? "ok" : "unhealthy", why);
        reply->status = ok ? 200 : 503;
    } else {
        fprintf(f, "not found: cwork work serves /metrics and /healthz\n");
        reply->status = 404;
    }
    fclose(f);
    reply->body = body;
    reply->len = len;
}

/* ---------------------------------------------------------------- start and stop */

work_metrics *work_metrics_start(const work_opts *o, cwork_pool *pool, cwork_redis *redis,
                                 char *err, size_t err_size)
{
    work_metrics *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    m->o = o;
    m->redis = redis;
    atomic_init(&m->started_ms, mono_ms());
    snprintf(m->pool_id, sizeof m->pool_id, "%s", cwork_pool_id(pool));
    pthread_mutex_init(&m->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&m->cond, &ca);
    pthread_condattr_destroy(&ca);
    cwork_error e = {0};
    m->client = cwork_client_new(redis, o->conn.ns, &e);
    if (!m->client) {
        snprintf(err, err_size, "%s", e.message);
        work_metrics_stop(m);
        return NULL;
    }
    m->server = metrics_server_start(o->metrics_listen, route, m, err, err_size);
    if (!m->server) {
        work_metrics_stop(m);
        return NULL;
    }
    return m;
}

int work_metrics_pool_started(work_metrics *m, char *err, size_t err_size)
{
    atomic_store(&m->started_ms, mono_ms());
    int rc = pthread_create(&m->health_thread, NULL, health_main, m);
    if (rc != 0) {
        snprintf(err, err_size, "cannot start a thread: %s", strerror(rc));
        return -1;
    }
    pthread_mutex_lock(&m->mu);
    m->health_started = 1;
    pthread_mutex_unlock(&m->mu);
    return 0;
}

const char *work_metrics_url(const work_metrics *m)
{
    return metrics_server_url(m->server);
}

void work_metrics_stop(work_metrics *m)
{
    if (!m) return;
    metrics_server_stop(m->server); /* first: its route reads what follows */
    pthread_mutex_lock(&m->mu);
    int started = m->health_started;
    pthread_mutex_unlock(&m->mu);
    if (started) {
        pthread_mutex_lock(&m->mu);
        m->stopping = 1;
        pthread_cond_signal(&m->cond);
        pthread_mutex_unlock(&m->mu);
        pthread_join(m->health_thread, NULL);
    }
    cwork_client_free(m->client);
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->mu);
    free(m);
}
