/* Starting, stopping and draining a pool, and its two small threads: maintenance
 * (observer flushes, requeuers, overrun warnings) and the wake-up subscriber. */
#include "log.h"
#include "pool.h"
#include "requeuer.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- start */

/* INFO server: batch fetch needs RPOP with a count (Redis >= 6.2). */
static int server_supports_rpop_count(const char *info)
{
    const char *v = strstr(info, "redis_version:");
    if (!v)
        return 0;
    int major = 0, minor = 0;
    if (sscanf(v + 14, "%d.%d", &major, &minor) < 2)
        return 0;
    return major > 6 || (major == 6 && minor >= 2);
}

/* One pipelined round trip: INFO server, CONFIG GET maxmemory-policy, SET
 * max_concurrency per type (every start, last writer wins, as Go), SADD known_jobs. */
static int prepare_redis(cwork_pool *p, cwork_error *err)
{
    cw_conn *c;
    int rc = cw_redis_checkout(p->redis, &c, err);
    if (rc)
        return rc;
    const char *info[] = {"INFO", "server"};
    const char *cfg[] = {"CONFIG", "GET", "maxmemory-policy"};
    cw_conn_append(c, 2, info, NULL, err);
    cw_conn_append(c, 3, cfg, NULL, err);
    char values[64][24];
    for (size_t i = 0; i < p->ntypes; i++) {
        char *v = values[i % 64];
        snprintf(v, 24, "%u", p->types[i].opts.max_concurrency);
        const char *set[] = {"SET", p->types[i].keys[5], v};
        size_t lens[] = {3, p->types[i].key_lens[5], strlen(v)};
        cw_conn_append(c, 3, set, lens, err);
    }
    cw_buf known;
    cw_buf_init(&known);
    cw_key_known_jobs(&p->keys, &known);
    const char **sadd = cw_malloc((p->ntypes + 2) * sizeof *sadd);
    if (p->ntypes && sadd && !known.oom) {
        sadd[0] = "SADD";
        sadd[1] = known.data;
        for (size_t i = 0; i < p->ntypes; i++)
            sadd[i + 2] = p->types[i].name;
        cw_conn_append(c, (int)p->ntypes + 2, sadd, NULL, err);
    }
    size_t expect = 2 + p->ntypes + (p->ntypes && sadd && !known.oom ? 1 : 0);
    cw_free(sadd);
    cw_buf_free(&known);
    for (size_t i = 0; i < expect && rc == 0; i++) {
        redisReply *r = NULL;
        rc = cw_conn_read(c, &r, err);
        if (rc)
            break;
        if (i == 0) {
            int batch = r->type == REDIS_REPLY_STRING && server_supports_rpop_count(r->str);
            if (!batch && !p->single_fetch) {
                cw_log(CWORK_LOG_WARN, "pool.redis_version", "error",
                       "Redis < 6.2: fetching one job per step", NULL);
                p->single_fetch = true;
            }
        } else if (i == 1) {
            /* CONFIG may be renamed or forbidden (managed Redis): then say nothing. */
            if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
                r->element[1]->type == REDIS_REPLY_STRING &&
                strcmp(r->element[1]->str, "noeviction") != 0)
                cw_log(CWORK_LOG_WARN, "pool.maxmemory_policy", "policy", r->element[1]->str,
                       "error", "Redis may evict keys under memory pressure: jobs can be lost; "
                                "set maxmemory-policy noeviction",
                       NULL);
        } else if (r->type == REDIS_REPLY_ERROR) {
            cw_log(CWORK_LOG_ERROR, i < 2 + p->ntypes ? "write_concurrency_controls_max_concurrency"
                                                        : "write_known_jobs",
                   "error", r->str, NULL);
        }
        freeReplyObject(r);
    }
    cw_redis_checkin(p->redis, c);
    return rc;
}

static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg, cwork_error *err)
{
    int rc = cw_thread_create(t, fn, arg);
    if (rc)
        return cw_error(err, CWORK_ENOMEM, "cannot start a thread: %s", strerror(rc));
    return 0;
}

static void *maintenance_main(void *arg);

int cwork_pool_start(cwork_pool *p, cwork_error *err)
{
    if (!p)
        return cw_error(err, CWORK_EINVAL, "start: pool is NULL");
    if (p->started)
        return 0;
    p->single_fetch = p->opts.single_fetch;
    int rc = prepare_redis(p, err);
    if (rc)
        return rc;
    unsigned *prio = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *prio);
    const char **names = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *names);
    const char **workers = cw_calloc(p->opts.concurrency, sizeof *workers);
    if (!prio || !names || !workers) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < p->ntypes; i++) {
        prio[i] = p->types[i].opts.priority;
        names[i] = p->types[i].name;
    }
    for (size_t i = 0; i < p->opts.concurrency; i++)
        workers[i] = p->executors[i].worker_id;
    cw_heartbeat_free(p->heartbeat);
    cw_observer_free(p->observer);
    cw_reaper_free(p->reaper);
    p->reaper = cw_reaper_new(p->redis, &p->keys, names, p->ntypes, p->opts.reap_period_s,
                              p->opts.reaper_hook, p->opts.reaper_hook_userdata);
    p->heartbeat = cw_heartbeat_new(p->redis, &p->keys, p->id, names, p->ntypes, workers,
                                    p->opts.concurrency, p->opts.concurrency);
    p->observer = cw_observer_new(p->redis, &p->keys, workers, p->opts.concurrency);
    int sampler_failed = 0;
    for (size_t i = 0; i < p->nshards; i++) {
        cw_sampler_clear(&p->shards[i].sampler);
        sampler_failed |= cw_sampler_init(&p->shards[i].sampler, prio, p->ntypes) != 0;
    }
    /* The watchdog tracks every periodic registration (a new one per start). */
    cw_watchdog_free(p->watchdog);
    p->watchdog = NULL;
    size_t nperiodic = p->periodic ? cw_periodic_count(p->periodic) : 0;
    int watchdog_failed = 0;
    if (nperiodic) {
        p->watchdog = cw_watchdog_new(p->opts.watchdog_timeout_s);
        watchdog_failed = !p->watchdog;
        for (size_t i = 0; !watchdog_failed && i < nperiodic; i++)
            watchdog_failed = cw_watchdog_track(p->watchdog, cw_periodic_name(p->periodic, i),
                                                cw_periodic_schedule(p->periodic, i)) != 0;
    }
    if (sampler_failed || watchdog_failed || !p->heartbeat || !p->observer || !p->reaper) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }
    /* In worker_pools with a heartbeat before the first fetch (SPEC §15 item 5). */
    if ((rc = cw_heartbeat_beat(p->heartbeat, err)) != 0)
        goto done;
    if ((rc = cw_heartbeat_start(p->heartbeat, err)) != 0) {
        cw_heartbeat_stop(p->heartbeat, 1, NULL); /* leave no heartbeat of a pool that never ran */
        goto done;
    }
    p->stopping = 0;
    p->started = 1;
    p->executors_started = 0;
    p->maintenance_started = p->subscriber_started = 0;
    for (size_t i = 0; i < p->nshards; i++) {
        cw_shard *sh = &p->shards[i];
        sh->no_more_tasks = 0;
        sh->dispatcher_started = 0;
        sh->commit_failing = 0;
    }
    for (; p->executors_started < p->opts.concurrency && rc == 0; p->executors_started++) {
        cw_executor *ex = &p->executors[p->executors_started];
        if ((rc = start_thread(&ex->thread, cw_executor_main, ex, err)) != 0)
            break;
    }
    for (size_t i = 0; i < p->nshards && rc == 0; i++) {
        cw_shard *sh = &p->shards[i];
        if ((rc = start_thread(&sh->dispatcher, cw_dispatcher_main, sh, err)) == 0)
            sh->dispatcher_started = 1;
    }
    if (rc == 0 && (rc = start_thread(&p->maintenance, maintenance_main, p, err)) == 0)
        p->maintenance_started = 1;
    if (rc == 0 && !p->opts.no_wakeups &&
        (rc = start_thread(&p->subscriber, cw_subscriber_main, p, err)) == 0)
        p->subscriber_started = 1;
    if (rc) {
        /* Rare (thread limits): stop the threads that did start. Nothing was fetched
         * yet unless the dispatcher started, and then stop commits what it took. */
        pthread_mutex_lock(&p->mu);
        for (size_t i = 0; i < p->nshards; i++)
            if (!p->shards[i].dispatcher_started)
                p->shards[i].no_more_tasks = 1; /* no dispatcher to say so */
        pthread_mutex_unlock(&p->mu);
        cwork_pool_stop(p, CW_DEFAULT_STOP_GRACE_MS, NULL);
        cw_error(err, rc, "cannot start the pool's threads");
    }
done:
    cw_free(prio);
    cw_free(names);
    cw_free(workers);
    return rc;
}

/* ---------------------------------------------------------------- stop and drain */

static int stop_locked(cwork_pool *p, int grace_ms, cwork_error *err)
{
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    for (size_t i = 0; i < p->nshards; i++) {
        pthread_cond_broadcast(&p->shards[i].work_cond);
        pthread_cond_broadcast(&p->shards[i].disp_cond);
    }
    struct timespec deadline;
    cw_deadline_after_ms(&deadline, grace_ms < 0 ? 0 : grace_ms);
    while (cw_pool_in_flight(p) > 0) {
        if (pthread_cond_timedwait(&p->idle_cond, &p->mu, &deadline) == ETIMEDOUT)
            break;
    }
    size_t left = cw_pool_in_flight(p);
    size_t running = 0;
    for (size_t i = 0; i < p->opts.concurrency; i++)
        running += p->executors[i].current != NULL;
    char where[96];
    size_t ready = 0, done = 0;
    for (size_t i = 0; i < p->nshards; i++) {
        ready += p->shards[i].ready.len;
        done += p->shards[i].done.len + p->shards[i].npending;
    }
    snprintf(where, sizeof where, "ready=%zu running=%zu done=%zu", ready, running, done);
    pthread_mutex_unlock(&p->mu);
    if (left > 0) {
        /* Leave the heartbeat (it goes stale) and the in-progress entries to a reaper. */
        cw_heartbeat_stop(p->heartbeat, 0, NULL);
        char n[24];
        snprintf(n, sizeof n, "%zu", left);
        cw_log(CWORK_LOG_WARN, "pool.stop_timeout", "in_flight", n, "where", where, NULL);
        return cw_error(err, CWORK_ETIMEOUT,
                        "stop: %zu jobs still running or uncommitted after %d ms; left to "
                        "the dead pool reaper", left, grace_ms);
    }
    for (size_t i = 0; i < p->nshards; i++)
        if (p->shards[i].dispatcher_started)
            pthread_join(p->shards[i].dispatcher, NULL);
    for (size_t i = 0; i < p->executors_started; i++)
        pthread_join(p->executors[i].thread, NULL);
    if (p->maintenance_started)
        pthread_join(p->maintenance, NULL);
    if (p->subscriber_started)
        pthread_join(p->subscriber, NULL);
    p->started = 0;
    cw_observer_flush(p->observer, 1, NULL);
    return cw_heartbeat_stop(p->heartbeat, 1, err);
}

int cwork_pool_stop(cwork_pool *p, int grace_ms, cwork_error *err)
{
    if (!p)
        return 0;
    pthread_mutex_lock(&p->stop_mu); /* concurrent stops: one after the other */
    int rc = 0;
    if (p->started)
        rc = stop_locked(p, grace_ms, err);
    pthread_mutex_unlock(&p->stop_mu);
    return rc;
}

int cwork_pool_drain(cwork_pool *p, int timeout_ms, cwork_error *err)
{
    if (!p || !p->started)
        return cw_error(err, CWORK_EINVAL, "drain: the pool is not started");
    int64_t end = timeout_ms < 0 ? INT64_MAX : cw_monotonic_ms() + timeout_ms;
    for (;;) {
        int empty = 1;
        cw_conn *c;
        int rc = cw_redis_checkout(p->redis, &c, err);
        if (rc)
            return rc;
        for (size_t i = 0; i < p->ntypes; i++) {
            const char *argv[] = {"LLEN", p->types[i].keys[0]};
            size_t lens[] = {4, p->types[i].key_lens[0]};
            cw_conn_append(c, 2, argv, lens, err);
        }
        for (size_t i = 0; i < p->ntypes && rc == 0; i++) {
            redisReply *r = NULL;
            rc = cw_conn_read(c, &r, err);
            if (rc == 0 && r->type == REDIS_REPLY_INTEGER && r->integer > 0)
                empty = 0;
            if (r)
                freeReplyObject(r);
        }
        cw_redis_checkin(p->redis, c);
        if (rc)
            return rc;
        pthread_mutex_lock(&p->mu);
        if (empty && cw_pool_in_flight(p) == 0) {
            pthread_mutex_unlock(&p->mu);
            return cw_observer_flush(p->observer, 1, err);
        }
        cw_pool_wake_dispatchers(p); /* keep them polling without idle backoff */
        pthread_mutex_unlock(&p->mu);
        if (cw_monotonic_ms() >= end)
            return cw_error(err, CWORK_ETIMEOUT, "drain: queues not empty after %d ms",
                            timeout_ms);
        struct timespec ts = {0, 5 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* ---------------------------------------------------------------- maintenance */

/* Observer flushes and the requeuers every second, and a warning when a running job
 * passes its deadline. */
static void *maintenance_main(void *arg)
{
    cwork_pool *p = arg;
    cw_block_sigpipe_thread();
    int64_t next_flush = cw_monotonic_ms() + CW_OBSERVER_FLUSH_MS;
    int64_t next_requeue = cw_monotonic_ms() + CW_REQUEUE_PERIOD_MS;
    /* The reaper: a full cycle 10 s after start and then every period + rand(0..29) s
     * (as Go's), plus a cheap check for stale heartbeats every dead_check_ms that runs a
     * cycle at once when it sees one — a crashed pool's jobs come back in ~20 s, not
     * minutes. */
    int64_t next_reap = cw_monotonic_ms() + CW_REAPER_FIRST_CYCLE * 1000;
    int64_t next_check = cw_monotonic_ms() + p->opts.dead_check_ms;
    /* Periodic jobs: a pass at start, then every 120 + rand(0..29) s; the watchdog ticks
     * every second. Pools without periodic jobs skip both (SPEC §15 item 23). */
    int has_periodic = p->periodic && cw_periodic_count(p->periodic) > 0;
    int64_t next_periodic = cw_monotonic_ms();
    int64_t next_watchdog = cw_monotonic_ms() + 1000;
    const char **names = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *names);
    for (size_t i = 0; names && i < p->ntypes; i++)
        names[i] = p->types[i].name;
    pthread_mutex_lock(&p->mu);
    while (!p->stopping || cw_pool_in_flight(p) > 0) {
        struct timespec ts;
        cw_deadline_after_ms(&ts, 100);
        pthread_cond_timedwait(&p->idle_cond, &p->mu, &ts);
        int64_t now_ms = cw_now_ms();
        for (size_t i = 0; i < p->opts.concurrency; i++) {
            cw_task *t = p->executors[i].current;
            if (t && t->job && t->run.deadline_ms && now_ms > t->run.deadline_ms &&
                !t->overrun_logged) {
                t->overrun_logged = 1;
                char timeout[24];
                snprintf(timeout, sizeof timeout, "%lld",
                         (long long)(t->run.deadline_ms - t->started_ms));
                cw_log(CWORK_LOG_WARN, "job.overrun", "job_name", t->job->name.ptr, "job_id",
                       t->job->id.ptr, "timeout_ms", timeout, NULL);
            }
        }
        if (cw_monotonic_ms() >= next_flush) {
            pthread_mutex_unlock(&p->mu);
            cw_observer_flush(p->observer, 0, NULL);
            next_flush = cw_monotonic_ms() + CW_OBSERVER_FLUSH_MS;
            pthread_mutex_lock(&p->mu);
        }
        if (!p->stopping && cw_monotonic_ms() >= next_check) {
            pthread_mutex_unlock(&p->mu);
            int seen = 0;
            cw_reaper_check(p->reaper, &seen, NULL);
            if (seen)
                next_reap = 0; /* now */
            next_check = cw_monotonic_ms() + p->opts.dead_check_ms;
            pthread_mutex_lock(&p->mu);
        }
        if (!p->stopping && cw_monotonic_ms() >= next_reap) {
            pthread_mutex_unlock(&p->mu);
            int ran = 0;
            cw_reaper_cycle(p->reaper, &ran, NULL);
            uint32_t jitter = 0;
            cw_random_bytes(&jitter, sizeof jitter);
            next_reap = cw_monotonic_ms() + ((int64_t)p->opts.reap_period_s + jitter % 30) * 1000;
            pthread_mutex_lock(&p->mu);
        }
        if (has_periodic && !p->stopping && cw_monotonic_ms() >= next_periodic) {
            pthread_mutex_unlock(&p->mu);
            size_t scheduled = 0;
            cw_periodic_run(p->periodic, p->redis, &p->keys, cw_now(), &scheduled, NULL);
            uint32_t jitter = 0;
            cw_random_bytes(&jitter, sizeof jitter);
            next_periodic = cw_monotonic_ms() +
                            (CW_PERIODIC_INTERVAL_MIN + jitter % CW_PERIODIC_INTERVAL_JITTER) * 1000;
            pthread_mutex_lock(&p->mu);
        }
        if (p->watchdog && cw_monotonic_ms() >= next_watchdog) {
            pthread_mutex_unlock(&p->mu);
            cw_watchdog_tick(p->watchdog, cw_now());
            next_watchdog = cw_monotonic_ms() + 1000;
            pthread_mutex_lock(&p->mu);
        }
        if (!p->stopping && cw_monotonic_ms() >= next_requeue) {
            pthread_mutex_unlock(&p->mu);
            size_t moved = 0;
            if (names)
                cw_requeue_due(p->redis, &p->keys, names, p->ntypes, &moved, NULL);
            next_requeue = cw_monotonic_ms() + CW_REQUEUE_PERIOD_MS;
            pthread_mutex_lock(&p->mu);
            if (moved) { /* they are likely ours to run: don't wait for the next poll */
                cw_pool_wake_dispatchers(p);
            }
        }
    }
    pthread_mutex_unlock(&p->mu);
    cw_free(names);
    return NULL;
}

/* ---------------------------------------------------------------- wake-ups */

static int is_stopping(cwork_pool *p)
{
    pthread_mutex_lock(&p->mu);
    int s = p->stopping;
    pthread_mutex_unlock(&p->mu);
    return s;
}

/* A published job name: wake the dispatcher if this pool runs that type. */
static void on_message(cwork_pool *p, redisReply *r)
{
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
        r->element[2]->type == REDIS_REPLY_STRING &&
        cw_pool_find_type(p, r->element[2]->str, r->element[2]->len)) {
        pthread_mutex_lock(&p->mu);
        cw_pool_wake_dispatchers(p);
        pthread_mutex_unlock(&p->mu);
    }
    freeReplyObject(r);
}

/* Subscribes to the namespace's wake-up channel and wakes the dispatcher when a job of
 * a registered type was pushed. A subscribed connection cannot go back to the pool's
 * idle list: it is always checked in as broken (closed). */
void *cw_subscriber_main(void *arg)
{
    cwork_pool *p = arg;
    cw_block_sigpipe_thread();
    cw_buf channel;
    cw_buf_init(&channel);
    cw_key_wakeup_channel(&p->keys, &channel);
    int backoff_ms = 0;
    while (!is_stopping(p) && !channel.oom) {
        cw_conn *c = NULL;
        cwork_error err = {0};
        const char *sub[] = {"SUBSCRIBE", channel.data};
        size_t lens[] = {9, channel.len};
        redisReply *confirm = NULL;
        /* The append is only written by the first read: read the confirmation first. */
        if (cw_redis_checkout(p->redis, &c, &err) == 0 &&
            cw_conn_append(c, 2, sub, lens, &err) == 0 && cw_conn_read(c, &confirm, &err) == 0) {
            freeReplyObject(confirm);
            c->pending = 1; /* a subscribed connection always has replies coming */
            backoff_ms = 0;
            while (!is_stopping(p) && !c->broken) {
                struct pollfd pfd = {c->ctx->fd, POLLIN, 0};
                int n = poll(&pfd, 1, 100);
                if (n <= 0)
                    continue;
                redisReply *r = NULL;
                if (cw_conn_read(c, &r, &err) != 0)
                    break;
                c->pending = 1;
                on_message(p, r);
                /* hiredis may have more replies buffered than poll() can see. */
                void *more = NULL;
                while (redisGetReplyFromReader(c->ctx, &more) == REDIS_OK && more) {
                    on_message(p, more);
                    more = NULL;
                }
            }
        }
        if (c) {
            c->broken = 1;
            cw_redis_checkin(p->redis, c);
        }
        if (is_stopping(p))
            break;
        backoff_ms = backoff_ms ? (backoff_ms * 2 > 1000 ? 1000 : backoff_ms * 2) : 50;
        struct timespec ts = {0, backoff_ms * 1000000L};
        nanosleep(&ts, NULL);
    }
    cw_buf_free(&channel);
    return NULL;
}
