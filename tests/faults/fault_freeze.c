/* The whole-tree freeze past the dead time (issue 20; README "Leases"), on the fault
 * suite's world: two `cwork work` pools with --max-concurrency 1 for "limited", one job
 * of it that runs longer than the dead time. The pool running it is frozen with every
 * process under it (SIGSTOP of the tree, as a container pause) until the other pool
 * has reaped it and started the job, then thawed, its commands first. From the runs'
 * own start and end lines (fault_job, FAULT_TERM_LINE: a stopped run writes its end):
 *   - the two runs overlap for no longer than the lease's stop grace
 *     (CWORK_LEASE_STOP_GRACE_MS): the thawed pool stops its command at once;
 *   - nothing lost, the rerun explained by the freeze (history checker, limit 1);
 *   - the thawed pool beats again and runs new work.
 * The overlap it measured is printed (the README's figure). */
#include "faults.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    setenv("FAULT_TERM_LINE", "1", 1);
    world w;
    if (fw_init(&w) != 0) return 1;
    w.limited_max = "1";
    printf("fault freeze: redis %s, namespace %s, files in %s\n", w.redis.url, w.ns, w.dir);
    fw_pool_start(&w);
    fw_pool_start(&w);
    char id[32];
    for (long long end = fw_now_ms() + 20000; fw_now_ms() < end; tl_sleep_ms(50))
        if (fw_pool_id(&w, 0, id) == 0 && fw_pool_id(&w, 1, id) == 0) break;

    /* Longer than the dead time plus the time a reaper takes to notice. */
    fr_enqueue(&w, "freeze1", 40000);
    fr_run runs[4] = {{"", -1, -1}, {"", -1, -1}, {"", -1, -1}, {"", -1, -1}};
    size_t n = 0;
    for (long long end = fw_now_ms() + 20000; fw_now_ms() < end && n == 0; tl_sleep_ms(20))
        n = fr_read_runs(&w, "freeze1", runs, 4);
    if (n == 0) {
        fr_verdict(0, "the job started", 0);
        fw_destroy(&w, 1);
        return 1;
    }
    size_t a = strcmp(runs[0].pool, w.pools[0].tag) == 0 ? 0 : 1;
    char a_id[32];
    fw_pool_id(&w, a, a_id);
    size_t frozen = fw_pool_freeze_tree(&w, a);
    long long frozen_at = fw_now_ms();
    printf("froze pool %s and %zu processes under it\n", w.pools[a].tag, frozen);
    for (long long end = fw_now_ms() + 40000; fw_now_ms() < end && n < 2; tl_sleep_ms(20))
        n = fr_read_runs(&w, "freeze1", runs, 4);
    fr_verdict(n == 2, "the other pool reaped the frozen one and started the job (ms after freeze)",
               n == 2 ? runs[1].start - frozen_at : -1);
    tl_sleep_ms(1000); /* both "running": the frozen command has not ended */
    long long thawed_at = fw_now_ms();
    fw_pool_thaw_tree(&w, a);
    printf("thawed pool %s (its commands first)\n", w.pools[a].tag);
    /* The thawed command ends (stopped) long before the job's 40 s. */
    for (long long end = fw_now_ms() + 10000; fw_now_ms() < end; tl_sleep_ms(5)) {
        n = fr_read_runs(&w, "freeze1", runs, 4);
        if (n >= 1 && runs[0].end >= 0) break;
    }
    long long overlap = runs[0].end >= 0
                            ? runs[0].end - (thawed_at > runs[1].start ? thawed_at : runs[1].start)
                            : -1;
    printf("the frozen pool's command ended %lld ms after the thaw\n",
           runs[0].end >= 0 ? runs[0].end - thawed_at : -1);
    fr_verdict(runs[0].end >= 0 && overlap <= CWORK_LEASE_STOP_GRACE_MS,
               "two runs of the limited type overlapped after the thaw for at most the lease's "
               "stop grace (ms)",
               overlap);
    /* The thawed pool is back: it beats again and takes new work. */
    int back = 0;
    for (long long end = fw_now_ms() + 20000; fw_now_ms() < end && !back; tl_sleep_ms(50))
        back = fw_pool_id(&w, a, id) == 0;
    fr_verdict(back, "the thawed pool is in worker_pools again", back);
    fr_verdict(fw_wait_quiet(&w, 60000) == 0,
               "the job ran to its end on the other pool; all drained", 0);
    fr_enqueue(&w, "after1", 100);
    fr_enqueue(&w, "after2", 100);
    fr_verdict(fw_wait_quiet(&w, 30000) == 0, "new jobs run after the freeze", 0);
    fr_verdict(fw_pools_shutdown(&w) == 0, "the pools stop cleanly on SIGTERM", 0);

    size_t len = 0, nev = 0, bad = 0;
    char *text = tl_read_file(w.log_path, &len);
    fh_event *ev = NULL;
    fh_parse_log(text, len, &ev, &nev, &bad);
    static const fh_limit limits[] = {{"limited", 1}};
    fh_report r;
    fh_check(w.enq, w.nenq, ev, nev, w.faults, w.nfaults, limits, 1, FW_RECOVERY_BOUND_MS, &r);
    fr_verdict(r.lost == 0, "no job lost", (long long)r.lost);
    fr_verdict(r.unexplained == 0, "every duplicate explained (by the freeze)",
               (long long)r.duplicates);
    fr_verdict(!r.max_exceeded, "max concurrency 1 never exceeded up to the freeze", r.max_seen);
    printf("figure: overlap after a whole-tree freeze past the dead time: %lld ms (bound %d ms); "
           "frozen %lld ms\n",
           overlap, CWORK_LEASE_STOP_GRACE_MS, thawed_at - frozen_at);
    free(ev);
    free(text);
    fw_destroy(&w, fr_failures > 0);
    return fr_failures ? 1 : 0;
}
