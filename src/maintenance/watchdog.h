/* The watchdog (PROTOCOL §10.4): an in-memory count, per periodic job name, of fire times
 * picked up versus missed. Nothing goes to Redis. */
#ifndef CWORK_WATCHDOG_H
#define CWORK_WATCHDOG_H

#include "cron.h"

#define CW_WATCHDOG_DEFAULT_TIMEOUT 60 /* seconds after a fire time before it is missed */

typedef struct cw_watchdog cw_watchdog;

cw_watchdog *cw_watchdog_new(int64_t timeout_seconds);
void cw_watchdog_free(cw_watchdog *w);

/* Tracks name with this schedule (several schedules may share a name). Not thread-safe:
 * call before the pool starts. */
int cw_watchdog_track(cw_watchdog *w, const char *name, const cw_cron *schedule);

/* Thread-safe. A tick at time now: plan Next(now) for every schedule (once per distinct
 * time), then count as skipped (and log "Watchdog: skipped job") every expected time
 * older than now − timeout. */
void cw_watchdog_tick(cw_watchdog *w, int64_t now);
/* Thread-safe. A job of name was picked up with enqueued-at t: every expected time ≤ t
 * counts as processed. Names not tracked are ignored. */
void cw_watchdog_picked(cw_watchdog *w, const char *name, int64_t t);

/* A snapshot: one entry per tracked name. *out is an array of n entries whose names
 * are borrowed from the watchdog; free the array with cw_free. (The public
 * cwork_watchdog_stat of cwork.h.) */
typedef cwork_watchdog_stat cw_watchdog_stat;
int cw_watchdog_stats(cw_watchdog *w, cw_watchdog_stat **out, size_t *n);

#endif
