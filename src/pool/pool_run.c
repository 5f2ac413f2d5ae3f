/* Starting, stopping and draining a pool. */
#include "log.h"
#include "pool.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- start */

/* INFO server: batch fetch needs RPOP with a count (Redis >= 6.2). */
static int server_supports_rpop_count(const char *info)
{
    const char *v = strstr(info, "redis_version:");
    if (!v) return 0;
    int major = 0, minor = 0;
    // NOLINTNEXTLINE(cert-err34-c): Redis' own version string
    if (sscanf(v + 14, "%d.%d", &major, &minor) < 2) return 0;
    return major > 6 || (major == 6 && minor >= 2);
}

/* One pipelined round trip: INFO server, CONFIG GET maxmemory-policy, and the types'
 * state (cw_pool_append_type_state). */
static int prepare_redis(cwork_pool *p, cwork_error *err)
{
    cw_conn *c;
    int rc = cw_redis_checkout(p->redis, &c, err);
    if (rc) return rc;
    const char *info[] = {"INFO", "server"};
    const char *cfg[] = {"CONFIG", "GET", "maxmemory-policy"};
    cw_conn_append(c, 2, info, NULL, err);
    cw_conn_append(c, 3, cfg, NULL, err);
    size_t expect = 2 + cw_pool_append_type_state(p, c, false, err);
    for (size_t i = 0; i < expect && rc == 0; i++) {
        redisReply *r = NULL;
        rc = cw_conn_read(c, &r, err);
        if (rc) break;
        if (i == 0) {
            const char *text;
            int batch =
                cw_reply_str(r, &text, NULL, "INFO", NULL) == 0 && server_supports_rpop_count(text);
            if (!batch && !p->single_fetch) {
                cw_log(CWORK_LOG_WARN, "pool.redis_version", "error",
                       "Redis < 6.2: fetching one job per step", NULL);
                p->single_fetch = true;
            }
        } else if (i == 1) {
            /* CONFIG may be renamed or forbidden (managed Redis): then say nothing. */
            const char *policy;
            if (cw_reply_at_str(r, 1, &policy, NULL, "CONFIG GET", NULL) == 0 &&
                strcmp(policy, "noeviction") != 0)
                cw_log(CWORK_LOG_WARN, "pool.maxmemory_policy", "policy", policy, "error",
                       "Redis may evict keys under memory pressure: jobs can be lost; "
                       "set maxmemory-policy noeviction",
                       NULL);
        } else {
            cw_pool_log_type_state_error(p, i - 2, r);
        }
        cw_reply_free(r);
    }
    cw_redis_checkin(p->redis, c);
    return rc;
}

static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg, cwork_error *err)
{
    int rc = cw_thread_create(t, fn, arg);
    if (rc) return cw_error(err, CWORK_ENOMEM, "cannot start a thread: %s", strerror(rc));
    return 0;
}

/* The watchdog tracks every periodic registration (a new one per start); none without
 * periodic jobs. 0, or -1 when out of memory. */
static int make_watchdog(cwork_pool *p)
{
    cw_watchdog_free(p->watchdog);
    p->watchdog = NULL;
    size_t nperiodic = p->periodic ? cw_periodic_count(p->periodic) : 0;
    if (!nperiodic) return 0;
    /* Fire times are whole seconds: a timeout of part of one counts as a whole. */
    p->watchdog = cw_watchdog_new((p->opts.watchdog_timeout_ms + 999) / 1000);
    if (!p->watchdog) return -1;
    for (size_t i = 0; i < nperiodic; i++)
        if (cw_watchdog_track(p->watchdog, cw_periodic_name(p->periodic, i),
                              cw_periodic_schedule(p->periodic, i)) != 0)
            return -1;
    return 0;
}

/* The helpers a start makes anew: reaper, heartbeat, observer, the shards' samplers and
 * the watchdog. 0 or CWORK_ENOMEM. */
static int make_helpers(cwork_pool *p, const unsigned *prio, const char **names,
                        const char **workers, cwork_error *err)
{
    cw_heartbeat_free(p->heartbeat);
    cw_observer_free(p->observer);
    cw_reaper_free(p->reaper);
    p->reaper = cw_reaper_new(p->redis, &p->keys, names, p->ntypes, p->opts.reap_period_ms / 1000,
                              p->opts.reaper_hook, p->opts.reaper_hook_userdata);
    if (p->reaper && cw_reaper_set_pool_id(p->reaper, p->id) != 0) { /* named in its lock */
        cw_reaper_free(p->reaper);
        p->reaper = NULL; /* out of memory, reported below */
    }
    p->heartbeat = cw_heartbeat_new(p->redis, &p->keys, p->id, names, p->ntypes, workers,
                                    p->opts.concurrency, p->opts.concurrency);
    p->observer = cw_observer_new(p->redis, &p->keys, workers, p->opts.concurrency);
    int sampler_failed = 0;
    for (size_t i = 0; i < p->nshards; i++) {
        cw_sampler_clear(&p->shards[i].sampler);
        sampler_failed |= cw_sampler_init(&p->shards[i].sampler, prio, p->ntypes) != 0;
    }
    int watchdog_failed = make_watchdog(p) != 0;
    if (sampler_failed || watchdog_failed || !p->heartbeat || !p->observer || !p->reaper)
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    return 0;
}

/* In worker_pools with a heartbeat before the first fetch (PROTOCOL §16.8), then the
 * lease's guard and the heartbeat's thread. */
static int begin_beating(cwork_pool *p, cwork_error *err)
{
    int rc = cw_heartbeat_beat(p->heartbeat, err);
    if (rc != 0) return rc;
    if ((rc = cw_lease_start(p, err)) != 0 || (rc = cw_heartbeat_start(p->heartbeat, err)) != 0) {
        cw_lease_stop(p);
        cw_heartbeat_stop(p->heartbeat, 1, NULL); /* leave no heartbeat of a pool that never ran */
    }
    return rc;
}

/* Starts executors, dispatchers, maintenance and the wake-up subscriber. When one cannot
 * start (rare: thread limits) the threads that did are stopped. */
static int start_threads(cwork_pool *p, cwork_error *err)
{
    int rc = 0;
    p->executors_started = 0;
    p->maintenance_started = p->subscriber_started = 0;
    for (size_t i = 0; i < p->nshards; i++) {
        cw_shard *sh = &p->shards[i];
        sh->no_more_tasks = false;
        sh->dispatcher_started = 0;
    }
    for (; p->executors_started < p->opts.concurrency && rc == 0; p->executors_started++) {
        cw_executor *ex = &p->executors[p->executors_started];
        if ((rc = start_thread(&ex->thread, cw_executor_main, ex, err)) != 0) break;
    }
    for (size_t i = 0; i < p->nshards && rc == 0; i++) {
        cw_shard *sh = &p->shards[i];
        if ((rc = start_thread(&sh->dispatcher, cw_dispatcher_main, sh, err)) == 0)
            sh->dispatcher_started = 1;
    }
    if (rc == 0 && (rc = start_thread(&p->maintenance, cw_maintenance_main, p, err)) == 0)
        p->maintenance_started = 1;
    if (rc == 0 && (rc = start_thread(&p->subscriber, cw_subscriber_main, p, err)) == 0)
        p->subscriber_started = 1;
    if (rc) {
        /* Nothing was fetched yet unless the dispatcher started, and then stop commits
         * what it took. */
        for (size_t i = 0; i < p->nshards; i++) {
            cw_shard *sh = &p->shards[i];
            cw_mutex_lock(&sh->mu);
            if (!sh->dispatcher_started) cw_shard_no_more_tasks(sh); /* no dispatcher to say so */
            cw_mutex_unlock(&sh->mu);
        }
        cwork_pool_stop(p, CW_DEFAULT_STOP_GRACE_MS, NULL);
        cw_error(err, rc, "cannot start the pool's threads");
    }
    return rc;
}

int cwork_pool_start(cwork_pool *p, cwork_error *err)
{
    if (!p) return cw_error(err, CWORK_EINVAL, "start: pool is NULL");
    if (p->started) return 0;
    int rc;
    if (!p->nsshard_member) { /* (an inner pool's owner read the shard record) */
        bool served = false;
        rc = cw_nsshards_start(p, &served, err);
        if (rc || served) return rc;
    }
    p->single_fetch = p->opts.single_fetch;
    rc = prepare_redis(p, err);
    if (rc == 0) rc = cw_pool_rate_limits_start(p, err); /* before the first fetch */
    if (rc) return rc;
    unsigned *prio = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *prio);
    const char **names = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *names);
    const char **workers = cw_calloc(p->opts.concurrency, sizeof *workers);
    if (!prio || !names || !workers) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    } else {
        for (size_t i = 0; i < p->ntypes; i++) {
            prio[i] = p->types[i].opts.priority;
            names[i] = p->types[i].name;
        }
        for (size_t i = 0; i < p->opts.concurrency; i++)
            workers[i] = p->executors[i].worker_id;
        rc = make_helpers(p, prio, names, workers, err);
    }
    if (rc == 0) rc = begin_beating(p, err);
    if (rc == 0) {
        atomic_store(&p->stopping, 0);
        p->start_failed = atomic_load(&p->n_failed);
        p->start_processed = atomic_load(&p->n_succeeded) + p->start_failed;
        p->started = 1;
        rc = start_threads(p, err);
    }
    cw_free(prio);
    cw_free(names);
    cw_free(workers);
    return rc;
}

/* ---------------------------------------------------------------- stop and drain */

static int stop_locked(cwork_pool *p, int64_t grace_ms, cwork_error *err)
{
    cw_mutex_lock(&p->mu);
    atomic_store(&p->stopping, 1);
    pthread_cond_broadcast(&p->idle_cond); /* maintenance: stop its own duties */
    for (size_t i = 0; i < p->nshards; i++) {
        cw_shard *sh = &p->shards[i];
        cw_mutex_lock(&sh->mu);
        pthread_cond_signal(&sh->disp_cond);
        cw_mutex_unlock(&sh->mu);
    }
    struct timespec deadline;
    cw_deadline_after_ms(&deadline, grace_ms < 0                    ? 0
                                    : grace_ms > CW_MAX_DURATION_MS ? CW_MAX_DURATION_MS
                                                                    : grace_ms);
    while (cw_pool_in_flight(p) > 0) {
        if (cw_cond_timedwait(&p->idle_cond, &p->mu, &deadline) == ETIMEDOUT) break;
    }
    size_t left = 0, ready = 0, running = 0, done = 0;
    for (size_t i = 0; i < p->nshards; i++) {
        cw_shard *sh = &p->shards[i];
        cw_mutex_lock(&sh->mu);
        left += sh->in_flight;
        ready += sh->ready.len;
        done += sh->done.len + sh->npending;
        for (size_t e = sh->first_executor; e < sh->first_executor + sh->nexecutors; e++)
            running += p->executors[e].current != NULL;
        cw_mutex_unlock(&sh->mu);
    }
    char where[96];
    snprintf(where, sizeof where, "ready=%zu running=%zu done=%zu", ready, running, done);
    cw_mutex_unlock(&p->mu);
    if (left > 0) {
        /* Leave the heartbeat (it goes stale) and the in-progress entries to a reaper. */
        cw_heartbeat_stop(p->heartbeat, 0, NULL);
        char n[24];
        snprintf(n, sizeof n, "%zu", left);
        cw_log(CWORK_LOG_WARN, "pool.stop_timeout", "in_flight", n, "where", where, NULL);
        return cw_error(err, CWORK_ETIMEOUT,
                        "stop: %zu jobs still running or uncommitted after %lld ms; left to "
                        "the dead pool reaper",
                        left, (long long)grace_ms);
    }
    for (size_t i = 0; i < p->nshards; i++)
        if (p->shards[i].dispatcher_started) pthread_join(p->shards[i].dispatcher, NULL);
    for (size_t i = 0; i < p->executors_started; i++)
        pthread_join(p->executors[i].thread, NULL);
    if (p->maintenance_started) pthread_join(p->maintenance, NULL);
    if (p->subscriber_started) pthread_join(p->subscriber, NULL);
    p->started = 0;
    cw_observer_flush(p->observer, 1, NULL);
    /* A pool that lost its lease and did not renew it leaves its heartbeat and
     * in-progress entries (and lock_info, which counts them) to a reaper. */
    cw_heartbeat_stop(p->heartbeat, 0, NULL); /* (no hook call after this) */
    cw_lease_stop(p);
    int fenced = atomic_load(&p->fenced);
    if (fenced)
        cw_log(CWORK_LOG_WARN, "pool.stop_fenced", "pool_id", p->id, "message",
               "stopped without its lease: its heartbeat is left to go stale for a reaper", NULL);
    return cw_heartbeat_stop(p->heartbeat, !fenced, err);
}

int cwork_pool_stop(cwork_pool *p, int64_t grace_ms, cwork_error *err)
{
    if (!p) return 0;
    cw_mutex_lock(&p->stop_mu); /* concurrent stops: one after the other */
    int rc = 0;
    if (p->started)
        rc = p->nsshards ? cw_nsshards_stop(p, grace_ms, err) : stop_locked(p, grace_ms, err);
    cw_mutex_unlock(&p->stop_mu);
    return rc;
}

int cwork_pool_drain(cwork_pool *p, int64_t timeout_ms, cwork_error *err)
{
    if (!p || !p->started) return cw_error(err, CWORK_EINVAL, "drain: the pool is not started");
    if (p->nsshards) return cw_nsshards_drain(p, timeout_ms, err);
    int64_t end = timeout_ms < 0 || timeout_ms > CW_MAX_DURATION_MS
                      ? INT64_MAX
                      : cw_monotonic_ms() + timeout_ms;
    for (;;) {
        int empty = 1;
        cw_conn *c;
        int rc = cw_redis_checkout(p->redis, &c, err);
        if (rc) return rc;
        for (size_t i = 0; i < p->ntypes; i++) {
            const char *argv[] = {"LLEN", p->types[i].keys[CW_CYCLE_QUEUE]};
            size_t lens[] = {4, p->types[i].key_lens[CW_CYCLE_QUEUE]};
            cw_conn_append(c, 2, argv, lens, err);
        }
        for (size_t i = 0; i < p->ntypes && rc == 0; i++) {
            redisReply *r = NULL;
            rc = cw_conn_read(c, &r, err);
            int64_t len;
            if (rc == 0 && cw_reply_int(r, &len, "LLEN", NULL) == 0 && len > 0) empty = 0;
            cw_reply_free(r);
        }
        cw_redis_checkin(p->redis, c);
        if (rc) return rc;
        if (empty && !cw_pool_busy(p)) return cw_observer_flush(p->observer, 1, err);
        cw_pool_wake_dispatchers(p); /* keep them polling without idle backoff */
        if (cw_monotonic_ms() >= end)
            return cw_error(err, CWORK_ETIMEOUT, "drain: queues not empty after %lld ms",
                            (long long)timeout_ms);
        struct timespec ts = {0, 5 * 1000000L};
        nanosleep(&ts, NULL);
    }
}
