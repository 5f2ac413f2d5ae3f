/* The timers' clock: the system's, or a test's manual one (clock.h). */
#include "clock.h"

#include "util.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

/* How often a thread waiting on the manual clock looks at it again. Moving the clock
 * does not signal the waiters' conditions (the clock does not know them), so a waiter
 * polls; only tests pay for it. */
#define MANUAL_POLL_MS 2

static atomic_bool manual;
static _Atomic int64_t manual_wall_ms, manual_mono_ms;
static atomic_int sleepers;

int64_t cw_clock_now_ms(void)
{
    return atomic_load(&manual) ? atomic_load(&manual_wall_ms) : cw_now_ms();
}

int64_t cw_clock_now(void)
{
    if (!atomic_load(&manual)) return cw_now();
    int64_t ms = atomic_load(&manual_wall_ms);
    return ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000); /* rounded down, as time() */
}

int64_t cw_clock_mono_ms(void)
{
    return atomic_load(&manual) ? atomic_load(&manual_mono_ms) : cw_monotonic_ms();
}

int cw_clock_wait_until(pthread_cond_t *cond, cw_mutex *mu, int64_t deadline_ms)
{
    if (!atomic_load(&manual)) {
        if (deadline_ms <= cw_monotonic_ms()) return ETIMEDOUT;
        struct timespec ts = {.tv_sec = (time_t)(deadline_ms / 1000),
                              .tv_nsec = (long)(deadline_ms % 1000) * 1000000L};
        return cw_cond_timedwait(cond, mu, &ts) == ETIMEDOUT ? ETIMEDOUT : 0;
    }
    if (atomic_load(&manual_mono_ms) >= deadline_ms)
        return ETIMEDOUT; /* (not counted as sleeping) */
    atomic_fetch_add(&sleepers, 1);
    int rc = 0;
    for (;;) {
        if (!atomic_load(&manual))
            break; /* back on the system's clock: the caller takes a new deadline */
        if (atomic_load(&manual_mono_ms) >= deadline_ms) {
            rc = ETIMEDOUT;
            break;
        }
        struct timespec ts;
        cw_deadline_after_ms(&ts, MANUAL_POLL_MS);
        if (cw_cond_timedwait(cond, mu, &ts) != ETIMEDOUT) break; /* signalled */
    }
    atomic_fetch_sub(&sleepers, 1);
    return rc;
}

void cw_clock_manual(int64_t wall_ms)
{
    atomic_store(&manual_wall_ms, wall_ms);
    atomic_store(&manual_mono_ms, cw_monotonic_ms());
    atomic_store(&manual, true);
}

void cw_clock_advance_ms(int64_t ms)
{
    if (!atomic_load(&manual) || ms <= 0) return;
    /* The monotonic reading last: a waiter that sees its deadline reached also sees the
     * wall clock moved when it acts. */
    atomic_fetch_add(&manual_wall_ms, ms);
    atomic_fetch_add(&manual_mono_ms, ms);
}

void cw_clock_system(void)
{
    atomic_store(&manual, false);
}

int cw_clock_sleepers(void)
{
    return atomic_load(&sleepers);
}
