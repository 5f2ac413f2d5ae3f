/* Tests on the manual clock (src/base/clock.h): the pool's timers (heartbeat, reaper lease,
 * maintenance duties) fire when the test moves the clock, not after real seconds. */
#ifndef CWORK_CLOCK_TESTUTIL_H
#define CWORK_CLOCK_TESTUTIL_H

#include "clock.h"
#include "testlib.h"

/* Puts the timers on a manual clock standing at the next whole second of the real wall
 * clock (so that Unix-second timestamps are exact); returns that time in ms. */
__attribute__((unused)) static int64_t clock_start_manual(void)
{
    int64_t t = (tl_now_ms() / 1000 + 1) * 1000;
    cw_clock_manual(t);
    return t;
}

/* Waits (up to 10 s of real time) until n threads sleep on the manual clock, their
 * deadlines taken; fails the test otherwise. */
__attribute__((unused)) static void clock_settle(int n, const char *file, int line)
{
    long long t0 = tl_now_ms();
    while (cw_clock_sleepers() < n && tl_now_ms() - t0 < 10000)
        tl_sleep_ms(1);
    if (cw_clock_sleepers() < n)
        tl_fail(file, line, "%d threads sleep on the manual clock, expected %d",
                cw_clock_sleepers(), n);
}
#define CLOCK_SETTLE(n) clock_settle((n), __FILE__, __LINE__)

/* Once the n timer threads sleep, moves the clock forward by ms. */
#define CLOCK_ADVANCE(n, ms)                                                                       \
    do {                                                                                           \
        CLOCK_SETTLE(n);                                                                           \
        cw_clock_advance_ms(ms);                                                                   \
    } while (0)

#endif
