/* A failover of the namespace's master at load (fault_ha.h). */
#include "fault_ha.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The history so far (events malloc'd, text kept for them); 0 or -1. */
static int read_events(world *w, char **text, fh_event **ev, size_t *nev, size_t *bad)
{
    size_t len = 0;
    *text = tl_read_file(w->log_path, &len);
    *ev = NULL;
    *nev = *bad = 0;
    if (!*text) return -1;
    return fh_parse_log(*text, len, ev, nev, bad);
}

/* The generator's number in a key ("g17", "g24.3": 17, 24), or -1. */
static long key_number(const char *key)
{
    return key[0] == 'g' ? strtol(key + 1, NULL, 10) : -1;
}

/* The first generator number recorded after t, plus one: every enqueue from it on was
 * sent after t (the generator is one thread, and records each answer before it sends
 * the next). -1 while there is none. */
static long first_sent_after(world *w, long long t)
{
    long first = -1;
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->nenq && first < 0; i++)
        if (w->enq[i].at_ms > t) first = key_number(w->enq[i].id) + 1;
    pthread_mutex_unlock(&w->mu);
    return first;
}

/* The longest time between two acknowledged enqueues, the later one after t. */
static long long ack_gap_after(world *w, long long t)
{
    long long prev = -1, gap = 0;
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->nenq; i++) {
        if (w->enq[i].status != FH_ENQ_OK) continue;
        if (prev >= 0 && w->enq[i].at_ms > t && w->enq[i].at_ms - prev > gap)
            gap = w->enq[i].at_ms - prev;
        prev = w->enq[i].at_ms;
    }
    pthread_mutex_unlock(&w->mu);
    return gap;
}

/* What the log shows around the kill. */
typedef struct ha_flow {
    size_t starts_before[HA_POOLS];               /* starts of each pool before the kill */
    size_t after[HA_POOLS];                       /* starts of jobs sent after the kill, per pool */
    long long last_start_before, last_end_before; /* -1: none */
    long long first_start_after, first_end_after; /* of a job sent after the kill; -1 */
} ha_flow;

static void flow(world *w, long long kill_at, long first_after, ha_flow *f)
{
    memset(f, 0, sizeof *f);
    f->last_start_before = f->last_end_before = f->first_start_after = f->first_end_after = -1;
    char *text = NULL;
    fh_event *ev = NULL;
    size_t nev = 0, bad = 0;
    if (read_events(w, &text, &ev, &nev, &bad) == 0) {
        for (size_t i = 0; i < nev; i++) {
            size_t p = 0;
            while (p < w->npools && p < HA_POOLS && strcmp(w->pools[p].tag, ev[i].pool) != 0)
                p++;
            long n = key_number(ev[i].id);
            int sent_after = kill_at > 0 && first_after >= 0 && n >= first_after;
            long long t = ev[i].t_ms;
            if (ev[i].kind == 'S' && p < HA_POOLS && (kill_at == 0 || t <= kill_at))
                f->starts_before[p]++;
            if (kill_at > 0 && t <= kill_at) {
                long long *last = ev[i].kind == 'S' ? &f->last_start_before : &f->last_end_before;
                if (t > *last) *last = t;
            }
            if (sent_after) {
                if (ev[i].kind == 'S' && p < HA_POOLS) f->after[p]++;
                long long *first = ev[i].kind == 'S' ? &f->first_start_after : &f->first_end_after;
                if (*first < 0 || t < *first) *first = t;
            }
        }
    }
    free(ev);
    free(text);
}

static size_t acked(world *w)
{
    size_t n = 0;
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->nenq; i++)
        n += w->enq[i].status == FH_ENQ_OK;
    pthread_mutex_unlock(&w->mu);
    return n;
}

static size_t total(const size_t *v)
{
    size_t n = 0;
    for (size_t i = 0; i < HA_POOLS; i++)
        n += v[i];
    return n;
}

static size_t least(const size_t *v)
{
    size_t m = v[0];
    for (size_t i = 1; i < HA_POOLS; i++)
        if (v[i] < m) m = v[i];
    return m;
}

/* A fault 'R' for every pool at the kill: a run in flight then (or ended just before,
 * its commit maybe not replicated) may run again. */
static void add_failover_faults(world *w, long long at)
{
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->npools && w->nfaults < FW_MAX_FAULTS; i++) {
        fh_fault *f = &w->faults[w->nfaults++];
        f->kind = 'R';
        char tag[FH_POOL];
        memcpy(tag, w->pools[i].tag, sizeof tag); /* (both inside w) */
        memcpy(f->pool, tag, sizeof f->pool);
        f->at_ms = f->until_ms = at;
    }
    pthread_mutex_unlock(&w->mu);
}

static void show_jobs(const fh_event *ev, size_t nev, char ids[FH_SHOWN][FH_ID], size_t n)
{
    for (size_t i = 0; i < n && i < FH_SHOWN; i++)
        for (size_t k = 0; k < nev; k++)
            if (!strcmp(ev[k].id, ids[i]))
                printf("    %c %s %s %s %lld\n", ev[k].kind, ev[k].id, ev[k].name, ev[k].pool,
                       ev[k].t_ms);
}

int ha_run(world *w, const ha_topology *t)
{
    long long t0 = fw_now_ms();
    /* Every wait derives from the configured periods: the failure detection, and the
     * dead time after which pools reap each other (a pool that lost its lease). */
    const long failover_bound = 10 * t->detect_ms + 20000;
    const long pools_bound = failover_bound + 2 * 10000;
    for (int i = 0; i < HA_POOLS; i++)
        fw_pool_start(w);
    char id[32];
    int up = 0;
    for (long long end = fw_now_ms() + pools_bound; fw_now_ms() < end && !up; tl_sleep_ms(50)) {
        up = 1;
        for (size_t i = 0; i < HA_POOLS && up; i++)
            up = fw_pool_id(w, i, id) == 0;
    }
    fr_verdict(up, "every pool registered through the URL (ms)", fw_now_ms() - t0);
    fw_gen_start(w);

    /* Load: jobs flowing through every pool. */
    ha_flow f;
    memset(&f, 0, sizeof f);
    int flowing = 0;
    for (long long end = fw_now_ms() + pools_bound; fw_now_ms() < end && !flowing;
         tl_sleep_ms(100)) {
        flow(w, 0, -1, &f);
        flowing = total(f.starts_before) >= HA_POOLS * HA_LOAD_RUNS &&
                  least(f.starts_before) >= HA_LOAD_RUNS / 5;
    }
    fr_verdict(flowing, "jobs flow through every pool before the kill (runs)",
               (long long)total(f.starts_before));

    printf("load: %zu acknowledged enqueues in %.1f s\n", acked(w),
           (double)(fw_now_ms() - t0) / 1000);
    long long kill_at = fw_now_ms();
    int old = t->kill_master(w);
    add_failover_faults(w, kill_at);
    printf("%s: SIGKILLed the namespace's master (port %d) at %lld\n", t->what, old, kill_at);
    int promoted = 0;
    long long promoted_at = -1;
    for (long long end = kill_at + failover_bound; fw_now_ms() < end && !promoted; tl_sleep_ms(20))
        if ((promoted = t->promoted(w)) != 0) promoted_at = fw_now_ms();
    fr_verdict(promoted, "a replica was promoted (ms after the kill)",
               promoted ? promoted_at - kill_at : -1);

    /* Every pool runs jobs enqueued after the kill: none is stuck on the dead master. */
    long first_after = -1;
    int back = 0;
    for (long long end = kill_at + pools_bound; fw_now_ms() < end && !back; tl_sleep_ms(100)) {
        if (first_after < 0) first_after = first_sent_after(w, kill_at);
        if (first_after < 0) continue;
        flow(w, kill_at, first_after, &f);
        back = total(f.after) >= HA_POOLS * HA_LOAD_RUNS && least(f.after) >= HA_LOAD_RUNS / 5;
    }
    fr_verdict(back, "every pool runs jobs enqueued after the failover (runs)",
               (long long)total(f.after));

    printf("draining at %.1f s (%zu acknowledged enqueues)\n", (double)(fw_now_ms() - t0) / 1000,
           acked(w));
    fw_gen_stop(w);
    fr_verdict(fw_wait_quiet(w, pools_bound) == 0,
               "every queue, in-progress list, the scheduled and retry sets drained", 0);
    long long dead = fw_int(w, "ZCARD %s:dead", w->ns);
    fr_verdict(dead == 0, "the dead set is empty", dead);
    static const char *const names[] = {"fast", "limited", "sched"};
    for (int i = 0; i < 3; i++) {
        long long lock, sum;
        fw_locks(w, names[i], &lock, &sum);
        char what[96];
        snprintf(what, sizeof what,
                 "the lock of \"%s\" and its lock_info back to 0 (lock_info sum)", names[i]);
        fr_verdict(lock == 0 && sum == 0, what, sum);
    }
    fr_verdict(fw_pools_shutdown(w) == 0, "the pools stop cleanly on SIGTERM (at s)",
               (fw_now_ms() - t0) / 1000);

    /* The history: duplicates explained by the failover (and lost leases, if any). */
    fw_add_lease_faults(w);
    size_t leases = 0;
    for (size_t i = 0; i < w->nfaults; i++)
        leases += w->faults[i].kind == 'L';
    char *text = NULL;
    fh_event *ev = NULL;
    size_t nev = 0, bad = 0;
    read_events(w, &text, &ev, &nev, &bad);
    static const fh_limit limits[] = {{"limited", FW_LIMITED_MAX}};
    fh_report r;
    fh_check(w->enq, w->nenq, ev, nev, w->faults, w->nfaults, limits, 1, pools_bound, &r);
    /* Concurrency without the failover's faults: every run counts until its own end
     * (only a pool that lost its lease stops counting its runs from then on). */
    fh_fault pool_faults[FW_MAX_FAULTS];
    size_t npf = 0;
    for (size_t i = 0; i < w->nfaults; i++)
        if (w->faults[i].kind != 'R') pool_faults[npf++] = w->faults[i];
    fh_report c;
    fh_check(w->enq, w->nenq, ev, nev, pool_faults, npf, limits, 1, pools_bound, &c);
    fr_verdict(bad == 0, "the history log is well-formed (bad lines)", (long long)bad);
    fr_verdict(r.lost == 0, "no acknowledged job lost", (long long)r.lost);
    show_jobs(ev, nev, r.lost_ids, r.lost);
    fr_verdict(r.ran_not_written == 0, "nothing ran whose enqueue said nothing was written",
               (long long)r.ran_not_written);
    show_jobs(ev, nev, r.not_written_ids, r.ran_not_written);
    fr_verdict(r.unexplained == 0,
               "every duplicate explained by a run in flight at the failover (duplicates)",
               (long long)r.duplicates);
    show_jobs(ev, nev, r.unexplained_ids, r.unexplained);
    fr_verdict(!c.max_exceeded, "max concurrency of \"limited\" never exceeded (most at once)",
               c.max_seen);
    fr_verdict(r.enqueued_ok >= 2 * HA_POOLS * HA_LOAD_RUNS, "real work (acknowledged enqueues)",
               (long long)r.enqueued_ok);

    flow(w, kill_at, first_after, &f);
    long long pause = f.first_end_after >= 0 && f.last_end_before >= 0
                          ? f.first_end_after - f.last_end_before
                          : -1;
    long long start_pause = f.first_start_after >= 0 && f.last_start_before >= 0
                                ? f.first_start_after - f.last_start_before
                                : -1;
    printf("figure: %s failover at load: %.1f s from the last job finished before the kill to "
           "the first finished of those enqueued after it (%.1f s start to start); %.1f s "
           "between two acknowledged enqueues; %zu acknowledged, %zu refused, %zu "
           "unknown; lost %zu; %zu duplicates (%zu runs in flight at the kill); %zu lost "
           "leases; \"limited\" at most %d at once (limit %d); %.0f s in all\n",
           t->what, (double)pause / 1000, (double)start_pause / 1000,
           (double)ack_gap_after(w, kill_at) / 1000, r.enqueued_ok, r.enqueued_failed,
           r.enqueued_unknown, r.lost, r.duplicates, r.interrupted, leases, c.max_seen,
           FW_LIMITED_MAX, (double)(fw_now_ms() - t0) / 1000);
    free(ev);
    free(text);
    return fr_failures;
}
