/* The fault suite: cwork under the faults a reliability probe found (issue 14), judged
 * from the history of every job — what each enqueue answered, every start and end of
 * every run, every fault done to a pool (see history.h for the rules).
 *
 * A private redis-server with AOF (appendfsync always) and noeviction; `cwork work`
 * pools of concurrency 4 running three job types ("limited": at most 2 at once across
 * all pools); a generator enqueueing single, delayed, unique and bulk jobs throughout;
 * then, one after the other: SIGKILL of a pool, SIGSTOP of a pool past the dead time,
 * CLIENT PAUSE, SIGKILL of Redis and a restart from its AOF, out of memory, damaged
 * keys, and SIGKILL of every pool while a reaper holds reaper_lock. Then the generator
 * stops, everything drains, and the history is checked: no job lost, nothing run of an
 * enqueue that reported nothing written, every duplicate explained by a crash or freeze
 * while the job ran, recovery within FW_RECOVERY_BOUND_MS (derived from the dead time
 * and the stale-heartbeat check's period), lock counters back to the sum of running
 * jobs (0 once drained), max concurrency never exceeded. Prints its figures. */
#include "faults.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures_;

static void verdict(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void verdict(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s ", ok ? "ok  " : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
    failures_ += !ok;
}

static long long t0_;

static void scenario(world *w, const char *title, int (*fn)(world *))
{
    printf("== %s (at %.1f s, %lld)\n", title, (double)(fw_now_ms() - t0_) / 1000, fw_now_ms());
    fflush(stdout);
    int rc = fn(w);
    verdict(rc == 0, "%s", title);
}

static void print_ids(const char *what, char ids[FH_SHOWN][FH_ID], size_t n)
{
    if (n == 0) return;
    printf("     %s:", what);
    for (size_t i = 0; i < n && i < FH_SHOWN; i++)
        printf(" %s", ids[i]);
    printf("%s\n", n > FH_SHOWN ? " …" : "");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    world w;
    if (fw_init(&w) != 0) return 1;
    printf("fault suite: redis %s (AOF), namespace %s, files in %s\n", w.redis.url, w.ns, w.dir);
    long long t0 = t0_ = fw_now_ms();
    for (int i = 0; i < 3; i++)
        fw_pool_start(&w);
    fw_gen_start(&w);
    tl_sleep_ms(3000);

    scenario(&w, "SIGKILL of a pool", sc_kill_a_pool);
    scenario(&w, "SIGSTOP of a pool past the dead time", sc_stop_past_dead_time);
    scenario(&w, "CLIENT PAUSE", sc_client_pause);
    scenario(&w, "SIGKILL of Redis, restart from the AOF", sc_redis_restart);
    scenario(&w, "out of memory with noeviction", sc_out_of_memory);
    scenario(&w, "damaged keys", sc_damaged_keys);
    scenario(&w, "SIGKILL of every pool while a reaper holds reaper_lock",
             sc_kill_the_reaper_lock_holder);

    printf("== drain\n");
    fw_gen_stop(&w);
    int quiet = fw_wait_quiet(&w, 60000);
    long long dead = fw_int(&w, "ZCARD %s:dead", w.ns);
    verdict(quiet == 0, "every queue, in-progress list, the scheduled and retry sets drained");
    verdict(dead == 0, "the dead set is empty (%lld)", dead);

    /* Locks: with nothing running, every counter is back to 0 and to the sum of its
     * lock_info fields (the dead pools' fields reaped or zero). */
    static const char *const names[] = {"fast", "limited", "sched"};
    int locks_ok = 1;
    for (int i = 0; i < 3; i++) {
        long long lock, sum;
        fw_locks(&w, names[i], &lock, &sum);
        if (lock != 0 || sum != 0) {
            printf("     %s: lock %lld, lock_info sum %lld\n", names[i], lock, sum);
            locks_ok = 0;
        }
    }
    verdict(locks_ok, "lock counters back to the sum of running jobs (0)");
    verdict(fw_pools_shutdown(&w) == 0, "the pools stop cleanly on SIGTERM");

    /* The history. */
    size_t len = 0;
    char *text = tl_read_file(w.log_path, &len);
    fh_event *ev = NULL;
    size_t nev = 0, bad = 0;
    if (!text || fh_parse_log(text, len, &ev, &nev, &bad) != 0) {
        verdict(0, "read the history log %s", w.log_path);
        fw_destroy(&w, 1);
        return 1;
    }
    fw_add_lease_faults(&w);
    static const fh_limit limits[] = {{"limited", FW_LIMITED_MAX}};
    fh_report r;
    pthread_mutex_lock(&w.mu);
    fh_check(w.enq, w.nenq, ev, nev, w.faults, w.nfaults, limits, 1, FW_RECOVERY_BOUND_MS, &r);
    pthread_mutex_unlock(&w.mu);
    /* What a reader of a failure needs: the faults, and the lines of the jobs at fault. */
    if (r.lost || r.unexplained || r.ran_not_written) {
        printf("== faults\n");
        for (size_t i = 0; i < w.nfaults; i++)
            printf("  %c %s at %lld until %lld\n", w.faults[i].kind, w.faults[i].pool,
                   w.faults[i].at_ms, w.faults[i].until_ms);
        char(*ids)[FH_ID] = r.unexplained ? r.unexplained_ids : r.lost_ids;
        size_t n = r.unexplained ? r.unexplained : r.lost;
        for (size_t i = 0; i < n && i < FH_SHOWN; i++)
            for (size_t k = 0; k < nev; k++)
                if (!strcmp(ev[k].id, ids[i]))
                    printf("  %c %s %s %s %lld\n", ev[k].kind, ev[k].id, ev[k].name, ev[k].pool,
                           ev[k].t_ms);
    }
    free(ev);
    free(text);

    printf("== figures (%.0f s, %zu pools started, %zu faults)\n",
           (double)(fw_now_ms() - t0) / 1000, w.npools, w.nfaults);
    printf("  jobs enqueued: %zu written, %zu refused (nothing written), %zu unknown (I/O)\n",
           r.enqueued_ok, r.enqueued_failed, r.enqueued_unknown);
    printf("  runs: %zu of %zu jobs; interrupted by a fault: %zu\n", r.runs, r.jobs_run,
           r.interrupted);
    printf("  lost: %zu\n", r.lost);
    printf("  duplicates: %zu (%zu explained by a crash or freeze while running, %zu not)\n",
           r.duplicates, r.explained, r.unexplained);
    long long longest = 0;
    int recovered = 1;
    for (size_t i = 0; i < w.nrecovery; i++) {
        printf("  recovery, %s: %s%.1f s\n", w.recovery[i].what, w.recovery[i].ms < 0 ? "> " : "",
               (double)(w.recovery[i].ms < 0 ? 30000 : w.recovery[i].ms) / 1000);
        if (w.recovery[i].ms < 0 || w.recovery[i].ms > FW_RECOVERY_BOUND_MS) recovered = 0;
        if (w.recovery[i].ms > longest) longest = w.recovery[i].ms;
    }
    int stalled = 0;
    for (size_t i = 0; i < w.nrecovery; i++)
        stalled |= w.recovery[i].ms < 0;
    printf("  longest recovery (jobs of a crashed or frozen pool back in their queues): %s%.1f s "
           "(bound %d s)\n",
           stalled ? "> " : "", stalled ? 30.0 : (double)longest / 1000,
           FW_RECOVERY_BOUND_MS / 1000);
    printf("  longest time from a fault to a rerun (waiting in a queue included): %.1f s\n",
           (double)r.longest_recovery_ms / 1000);
    printf("  max concurrency of \"limited\": %d (limit %d; %d counting the commands a frozen "
           "pool ran on after its slots were given away)\n",
           r.max_seen, FW_LIMITED_MAX, r.orphan_overlap);
    verdict(bad == 0, "the history log is well-formed (%zu bad lines)", bad);
    verdict(r.lost == 0, "no job lost");
    print_ids("lost", r.lost_ids, r.lost);
    verdict(r.ran_not_written == 0, "no job ran whose enqueue said nothing was written");
    print_ids("ran", r.not_written_ids, r.ran_not_written);
    verdict(r.unexplained == 0, "every duplicate explained");
    print_ids("unexplained", r.unexplained_ids, r.unexplained);
    verdict(recovered && w.nrecovery == 3, "recovery within %d s", FW_RECOVERY_BOUND_MS / 1000);
    verdict(!r.max_exceeded, "max concurrency never exceeded");
    verdict(r.enqueued_ok > 1000 && r.interrupted > 0, "the suite did real work");
    fw_destroy(&w, failures_ > 0);
    if (failures_)
        printf("%d check(s) failed; the pools' output is kept in %s\n", failures_, w.dir);
    return failures_ ? 1 : 0;
}
