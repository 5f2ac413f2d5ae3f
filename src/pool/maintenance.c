/* The maintenance thread: a pool's periodic duties, each a timer of its own — observer
 * flushes, overrun warnings, the requeuers for scheduled and retry jobs, the dead pool
 * reaper and its cheap check for stale heartbeats, periodic jobs and their watchdog,
 * re-asserting the job types' state in Redis, and the daily processed/failed counts. It runs until
 * the pool has stopped and nothing of it is in flight (flushes and warnings go on while it stops).
 */
#include "clock.h"
#include "log.h"
#include "pool.h"
#include "requeuer.h"
#include "scripts.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define STAT_DAY_TTL_S (40 * 24 * 3600) /* a dashboard shows 30 days */
/* An hour's per-minute counts live 25 h: a 24-hour graph drawn late in an hour still finds
 * the hour that began 24 h earlier. */
#define STAT_HOUR_TTL_S (25 * 3600)

typedef struct maintenance maintenance;
typedef struct timer {
    bool enabled;
    bool while_stopping; /* also runs while the pool stops */
    int64_t next_ms;     /* monotonic */
    /* Does the duty; returns the milliseconds until its next run. */
    int64_t (*run)(maintenance *m);
} timer;

enum {
    T_FLUSH,
    T_OVERRUN,
    T_REQUEUE,
    T_DEAD_CHECK,
    T_REAP,
    T_TYPES,
    T_PERIODIC,
    T_WATCHDOG,
    T_STATS,
    T_RATE_LIMITS,
    T_N
};

struct maintenance {
    cwork_pool *p;
    const char **names;                   /* the pool's type names, for the requeuers */
    uint64_t stat_processed, stat_failed; /* counts known to be in the daily stats */
    bool stats_sent; /* <p>cwork:stats_sent:<id> may exist (a write was tried) */
    bool last_stats; /* the stopping pool's last write: that key goes */
    unsigned rate_limit_reads;
    timer timers[T_N];
};

static int64_t jitter_s(uint32_t range)
{
    uint32_t r = 0;
    cw_random_bytes(&r, sizeof r);
    return r % range;
}

static int64_t flush(maintenance *m)
{
    cw_observer_flush(m->p->observer, 0, NULL);
    return CW_OBSERVER_FLUSH_MS;
}

/* A warning when a running job passes its deadline, once per job. */
static int64_t warn_overruns(maintenance *m)
{
    cwork_pool *p = m->p;
    int64_t now_ms = cw_now_ms();
    for (size_t s = 0; s < p->nshards; s++) {
        cw_shard *sh = &p->shards[s];
        cw_mutex_lock(&sh->mu);
        for (size_t e = sh->first_executor; e < sh->first_executor + sh->nexecutors; e++) {
            cw_task *t = p->executors[e].current;
            if (!t || !t->job || !t->run.deadline_ms || now_ms <= t->run.deadline_ms ||
                t->overrun_logged)
                continue;
            t->overrun_logged = 1;
            char timeout[24];
            snprintf(timeout, sizeof timeout, "%lld",
                     (long long)(t->run.deadline_ms - t->started_ms));
            cw_log(CWORK_LOG_WARN, "job.overrun", "job_name", t->job->name.ptr, "job_id",
                   t->job->id.ptr, "timeout_ms", timeout, NULL);
        }
        cw_mutex_unlock(&sh->mu);
    }
    return 100;
}

static int64_t requeue(maintenance *m)
{
    size_t moved = 0;
    if (m->names)
        cw_requeue_due(m->p->redis, &m->p->keys, m->p->opts.go_flavor, m->names, m->p->ntypes,
                       &moved, NULL);
    if (moved) /* they are likely ours to run: don't wait for the next poll */
        cw_pool_wake_dispatchers(m->p);
    return CW_REQUEUE_PERIOD_MS;
}

/* The cheap check for stale heartbeats: a crashed pool's jobs come back in seconds, not
 * at the next full cycle. */
static int64_t dead_check(maintenance *m)
{
    int seen = 0;
    cw_reaper_check(m->p->reaper, &seen, NULL);
    if (seen) m->timers[T_REAP].next_ms = 0; /* now */
    return m->p->opts.dead_check_ms;
}

/* A full reaper cycle: every period + rand(0..29) s, as Go's. */
static int64_t reap(maintenance *m)
{
    int ran = 0;
    cw_reaper_cycle(m->p->reaper, &ran, NULL);
    return m->p->opts.reap_period_ms + jitter_s(30) * 1000;
}

static int64_t reassert_types(maintenance *m)
{
    cwork_error err = {0};
    if (cw_pool_reassert_types(m->p, &err) != 0)
        cw_log(CWORK_LOG_ERROR, "pool.reassert_types", "error", err.message, NULL);
    return m->p->opts.dead_check_ms;
}

static int64_t periodic(maintenance *m)
{
    size_t scheduled = 0;
    cw_periodic_run(m->p->periodic, m->p->redis, &m->p->keys, cw_clock_now(), &scheduled, NULL);
    return (CW_PERIODIC_INTERVAL_MIN + jitter_s(CW_PERIODIC_INTERVAL_JITTER)) * 1000;
}

static int64_t watchdog(maintenance *m)
{
    cw_watchdog_tick(m->p->watchdog, cw_clock_now());
    return 1000;
}

/* Adds the jobs finished since the last flush to today's counters and to this minute's
 * (UTC, PROTOCOL §14.2) with one script call (stats_add.lua): the minutes of a day sum to
 * the day. The call carries the pool's totals and the script adds what it has not added
 * yet for this pool, so counts whose write failed are added by the next write (at its
 * minute) exactly once, also when the failed write had in fact run. */
static int64_t flush_daily_stats(maintenance *m)
{
    cwork_pool *p = m->p;
    uint64_t ok = atomic_load(&p->n_succeeded), failed = atomic_load(&p->n_failed);
    uint64_t processed = ok + failed;
    bool moved = processed != m->stat_processed || failed != m->stat_failed;
    if (!moved && !(m->last_stats && m->stats_sent)) return 1000;
    char date[16], hour[24], minute[8], np[24], nf[24], bp[24], bf[24], day_ttl[24], hour_ttl[24];
    time_t now = (time_t)cw_clock_now();
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%d", &tm);
    strftime(hour, sizeof hour, "%Y-%m-%dT%H", &tm);
    strftime(minute, sizeof minute, "%M", &tm);
    snprintf(np, sizeof np, "%llu", (unsigned long long)processed);
    snprintf(nf, sizeof nf, "%llu", (unsigned long long)failed);
    snprintf(bp, sizeof bp, "%llu", (unsigned long long)m->stat_processed);
    snprintf(bf, sizeof bf, "%llu", (unsigned long long)m->stat_failed);
    snprintf(day_ttl, sizeof day_ttl, "%d", STAT_DAY_TTL_S);
    snprintf(hour_ttl, sizeof hour_ttl, "%d", STAT_HOUR_TTL_S);
    cw_buf day_key, hour_key, sent_key;
    cw_buf_init(&day_key);
    cw_buf_init(&hour_key);
    cw_buf_init(&sent_key);
    cw_key_stat_day(&p->keys, &day_key, date);
    cw_key_stat_hour(&p->keys, &hour_key, hour);
    cw_key_stats_sent(&p->keys, &sent_key, p->id);
    cwork_error err = {0};
    int rc = 0;
    if (day_key.oom || hour_key.oom || sent_key.oom) {
        rc = cw_error(&err, CWORK_ENOMEM, "out of memory");
    } else {
        const char *argv[] = {day_key.data,
                              hour_key.data,
                              sent_key.data,
                              np,
                              nf,
                              minute,
                              day_ttl,
                              hour_ttl,
                              bp,
                              bf,
                              m->last_stats ? "1" : "0"};
        cw_conn *c = NULL;
        if ((rc = cw_redis_checkout(p->redis, &c, &err)) == 0) {
            m->stats_sent = true; /* even when the outcome is unknown */
            rc = cw_conn_eval(c, &cw_script_stats_add, 3, 8, argv, NULL, NULL, &err);
            cw_redis_checkin(p->redis, c);
        }
    }
    if (rc == 0) {
        m->stat_processed = processed;
        m->stat_failed = failed;
    } else {
        cw_log(CWORK_LOG_WARN, "pool.stats", "error", err.message, NULL);
    }
    cw_buf_free(&day_key);
    cw_buf_free(&hour_key);
    cw_buf_free(&sent_key);
    return 1000;
}

/* Follows the namespace's rate limits (a limit set or removed while the pool runs);
 * every fifth time also looks for Go pools running a type that uses a feature Go
 * defeats (go_pools.c). */
static int64_t refresh_rate_limits(maintenance *m)
{
    cwork_error err = {0};
    bool go = ++m->rate_limit_reads % 5 == 0;
    if (cw_pool_rate_limits_refresh(m->p, go, &err) != 0)
        cw_log(CWORK_LOG_WARN, "pool.rate_limits", "error", err.message, NULL);
    return CW_RATE_LIMIT_REFRESH_MS;
}

static void setup(maintenance *m, cwork_pool *p)
{
    memset(m, 0, sizeof *m);
    m->p = p;
    m->names = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *m->names);
    for (size_t i = 0; m->names && i < p->ntypes; i++)
        m->names[i] = p->types[i].name;
    int64_t now = cw_clock_mono_ms();
    /* Pools without periodic jobs never touch their keys (PROTOCOL §16.12). */
    bool has_periodic = p->periodic && cw_periodic_count(p->periodic) > 0;
    m->timers[T_FLUSH] = (timer){true, true, now + CW_OBSERVER_FLUSH_MS, flush};
    m->timers[T_OVERRUN] = (timer){true, true, now + 100, warn_overruns};
    m->timers[T_REQUEUE] = (timer){true, false, now + CW_REQUEUE_PERIOD_MS, requeue};
    m->timers[T_DEAD_CHECK] = (timer){true, false, now + p->opts.dead_check_ms, dead_check};
    m->timers[T_REAP] = (timer){true, false, now + CW_REAPER_FIRST_CYCLE * 1000, reap};
    m->timers[T_TYPES] = (timer){true, false, now + p->opts.dead_check_ms, reassert_types};
    m->timers[T_PERIODIC] = (timer){has_periodic, false, now, periodic};
    m->timers[T_WATCHDOG] = (timer){p->watchdog != NULL, true, now + 1000, watchdog};
    m->timers[T_STATS] = (timer){true, true, now + 1000, flush_daily_stats};
    m->timers[T_RATE_LIMITS] =
        (timer){true, false, now + CW_RATE_LIMIT_REFRESH_MS, refresh_rate_limits};
    /* The daily counts are the pool's own since start (taken before any thread ran). */
    m->stat_failed = p->start_failed;
    m->stat_processed = p->start_processed;
}

void *cw_maintenance_main(void *arg)
{
    maintenance m;
    setup(&m, arg);
    cwork_pool *p = m.p;
    cw_block_sigpipe_thread();
    cw_mutex_lock(&p->mu);
    for (;;) {
        bool stopping = atomic_load(&p->stopping);
        if (stopping && cw_pool_in_flight(p) == 0) break;
        int64_t now = cw_clock_mono_ms(), next = now + 1000;
        for (timer *t = m.timers; t < m.timers + T_N; t++) {
            if (!t->enabled || (stopping && !t->while_stopping)) continue;
            if (now >= t->next_ms) {
                cw_mutex_unlock(&p->mu);
                t->next_ms = cw_clock_mono_ms() + t->run(&m);
                cw_mutex_lock(&p->mu);
                now = cw_clock_mono_ms();
            }
            if (t->next_ms < next) next = t->next_ms;
        }
        if (next > now) /* stop wakes it early */
            cw_clock_wait_until(&p->idle_cond, &p->mu, next);
    }
    cw_mutex_unlock(&p->mu);
    m.last_stats = true;
    flush_daily_stats(&m); /* what the last commits added */
    cw_free(m.names);
    return NULL;
}
