/* The clock of a pool's timers: the heartbeat's period and its timestamps, the reaper's
 * dead time and the lease of its lock, and the maintenance thread's duties (requeuer,
 * periodic jobs and their watchdog, dead-pool checks, daily counts).
 *
 * It is the system's clock (CLOCK_REALTIME for times written to Redis, CLOCK_MONOTONIC
 * for intervals) unless a test replaces it with a manual clock, which stands still until
 * the test moves it (cw_clock_manual, cw_clock_advance_ms). Timers then fire as if that
 * much time had passed, at once, so a test of a 5 s period does not wait 5 s. Everything
 * else (job timeouts, connection timeouts, back-off, enqueue times) keeps the system's
 * clock: only what the pool schedules by itself follows this one.
 *
 * Thread-safety: every function may be called from any thread. */
#ifndef CWORK_CLOCK_H
#define CWORK_CLOCK_H

#include "mutex.h"

#include <pthread.h>
#include <stdint.h>

/* Wall-clock time in Unix seconds and milliseconds. */
int64_t cw_clock_now(void);
int64_t cw_clock_now_ms(void);
/* Monotonic milliseconds (an arbitrary origin): for intervals and deadlines. */
int64_t cw_clock_mono_ms(void);

/* Waits on cond (created with pthread_condattr_setclock(CLOCK_MONOTONIC)), mu held, until
 * it is signalled or cw_clock_mono_ms() reaches deadline_ms. ETIMEDOUT when the deadline
 * has passed; 0 otherwise (signalled or woken early: callers re-check what they wait
 * for, as with any condition variable). */
int cw_clock_wait_until(pthread_cond_t *cond, cw_mutex *mu, int64_t deadline_ms);

/* ---- for tests */

/* From now on the clock reads wall_ms (Unix milliseconds) and stands still; the
 * monotonic clock stands still too, at its current value. Threads waiting in
 * cw_clock_wait_until go on waiting for their deadline on the manual clock. */
void cw_clock_manual(int64_t wall_ms);
/* Moves the manual clock (both readings) forward by ms; a waiting thread whose deadline
 * it reaches returns within a few milliseconds. Ignored with the system's clock. */
void cw_clock_advance_ms(int64_t ms);
/* Back to the system's clock. */
void cw_clock_system(void);
/* How many threads are inside cw_clock_wait_until while the manual clock is on: a test
 * waits for its timer threads to be asleep (their deadline taken) before it moves the
 * clock, so that "nothing happens before the period is over" is what it checks. */
int cw_clock_sleepers(void);

#endif
