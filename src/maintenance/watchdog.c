/* The watchdog (PROTOCOL §10.4): per periodic job name, the set of fire times expected soon,
 * filled every tick with Next(tick) of each schedule, emptied by pickups (processed)
 * and by the timeout (skipped). One mutex guards everything; log records are written
 * while it is held (debug records only when debug logging is on). */
#include "watchdog.h"

#include "log.h"
#include "mutex.h"
#include "tzfile.h"

#include <stdio.h>
#include <string.h>

typedef struct wd_name {
    char *name;
    int64_t processed, skipped;
    int64_t *times; /* expected fire times, ascending, no duplicates */
    size_t n, cap;
} wd_name;

typedef struct wd_schedule {
    const cw_cron *schedule; /* borrowed */
    size_t name;             /* index into names */
} wd_schedule;

struct cw_watchdog {
    cw_mutex mu;
    int64_t timeout;
    wd_name *names;
    size_t nnames, names_cap;
    wd_schedule *schedules;
    size_t nschedules, schedules_cap;
};

cw_watchdog *cw_watchdog_new(int64_t timeout_seconds)
{
    cw_watchdog *w = cw_calloc(1, sizeof *w);
    if (!w) return NULL;
    if (cw_mutex_init(&w->mu) != 0) {
        cw_free(w);
        return NULL;
    }
    w->timeout = timeout_seconds > 0 ? timeout_seconds : CW_WATCHDOG_DEFAULT_TIMEOUT;
    return w;
}

void cw_watchdog_free(cw_watchdog *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->nnames; i++) {
        cw_free(w->names[i].name);
        cw_free(w->names[i].times);
    }
    cw_free(w->names);
    cw_free(w->schedules);
    cw_mutex_destroy(&w->mu);
    cw_free(w);
}

static int find_name(const cw_watchdog *w, const char *name)
{
    for (size_t i = 0; i < w->nnames; i++)
        if (strcmp(w->names[i].name, name) == 0) return (int)i;
    return -1;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 0;
    size_t cap2 = *cap ? *cap * 2 : 8;
    while (cap2 < need)
        cap2 *= 2;
    void *q = cw_realloc(*p, cap2 * size);
    if (!q) return -1;
    *p = q;
    *cap = cap2;
    return 0;
}

int cw_watchdog_track(cw_watchdog *w, const char *name, const cw_cron *schedule)
{
    if (!w || !name || !schedule) return CWORK_EINVAL;
    int idx = find_name(w, name);
    if (idx < 0) {
        if (grow((void **)&w->names, &w->names_cap, w->nnames + 1, sizeof *w->names))
            return CWORK_ENOMEM;
        wd_name *nm = &w->names[w->nnames];
        memset(nm, 0, sizeof *nm);
        nm->name = cw_strdup(name);
        if (!nm->name) return CWORK_ENOMEM;
        idx = (int)w->nnames++;
    }
    if (grow((void **)&w->schedules, &w->schedules_cap, w->nschedules + 1, sizeof *w->schedules))
        return CWORK_ENOMEM;
    w->schedules[w->nschedules].schedule = schedule;
    w->schedules[w->nschedules].name = (size_t)idx;
    w->nschedules++;
    return 0;
}

/* Inserts t keeping the set sorted; 1 when added, 0 when already there (or no memory:
 * an expectation missed is better than a failed tick). */
static int plan(wd_name *nm, int64_t t)
{
    size_t lo = 0, hi = nm->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (nm->times[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < nm->n && nm->times[lo] == t) return 0;
    if (grow((void **)&nm->times, &nm->cap, nm->n + 1, sizeof *nm->times)) return 0;
    memmove(nm->times + lo + 1, nm->times + lo, (nm->n - lo) * sizeof *nm->times);
    nm->times[lo] = t;
    nm->n++;
    return 1;
}

static int64_t pop_first(wd_name *nm)
{
    CW_ASSERT(nm->n > 0);
    int64_t t = nm->times[0];
    memmove(nm->times, nm->times + 1, (nm->n - 1) * sizeof *nm->times);
    nm->n--;
    return t;
}

static void log_event(cwork_log_level level, const char *msg, const char *name, int64_t when,
                      const char *count_key, int64_t count)
{
    if (!cw_log_enabled(level)) return;
    char t[40], n[24];
    cw_tz_format_utc(when, t);
    snprintf(n, sizeof n, "%lld", (long long)count);
    cw_log(level, msg, "job_name", name, "job_next_time", t, count_key, n, NULL);
}

void cw_watchdog_tick(cw_watchdog *w, int64_t now)
{
    if (!w) return;
    cw_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->nschedules; i++) { /* planning */
        int64_t next = cw_cron_next(w->schedules[i].schedule, now);
        if (next == 0) continue; /* none within five years (Go would plan its zero time) */
        CW_ASSERT(w->schedules[i].name < w->nnames);
        wd_name *nm = &w->names[w->schedules[i].name];
        if (plan(nm, next))
            log_event(CWORK_LOG_DEBUG, "Watchdog: planning job", nm->name, next,
                      "jobs_total_planned", (int64_t)nm->n);
    }
    for (size_t i = 0; i < w->nnames; i++) { /* checking */
        wd_name *nm = &w->names[i];
        while (nm->n > 0 && nm->times[0] + w->timeout < now) {
            int64_t t = pop_first(nm);
            nm->skipped++;
            log_event(CWORK_LOG_WARN, "Watchdog: skipped job", nm->name, t, "jobs_skipped",
                      nm->skipped);
        }
    }
    cw_mutex_unlock(&w->mu);
}

void cw_watchdog_picked(cw_watchdog *w, const char *name, int64_t t)
{
    if (!w || !name) return;
    cw_mutex_lock(&w->mu);
    int idx = find_name(w, name);
    if (idx >= 0) {
        wd_name *nm = &w->names[idx];
        while (nm->n > 0 && nm->times[0] <= t) {
            int64_t when = pop_first(nm);
            nm->processed++;
            log_event(CWORK_LOG_DEBUG, "Watchdog: successfully processed job", nm->name, when,
                      "jobs_processed", nm->processed);
        }
    }
    cw_mutex_unlock(&w->mu);
}

int cw_watchdog_stats(cw_watchdog *w, cw_watchdog_stat **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!w) return 0;
    cw_mutex_lock(&w->mu);
    int rc = 0;
    if (w->nnames > 0) {
        cw_watchdog_stat *s = cw_calloc(w->nnames, sizeof *s);
        if (!s) {
            rc = CWORK_ENOMEM;
        } else {
            for (size_t i = 0; i < w->nnames; i++) {
                s[i].name = w->names[i].name;
                s[i].processed = w->names[i].processed;
                s[i].skipped = w->names[i].skipped;
            }
            *out = s;
            *n = w->nnames;
        }
    }
    cw_mutex_unlock(&w->mu);
    return rc;
}
