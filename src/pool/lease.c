/* The pool's lease on its jobs (README "Leases", PROTOCOL §6). Other processes may take
 * this pool's jobs back once its heartbeat is CW_REAPER_DEAD_TIME old (reaper.c), so
 * what the pool may prove it owns ends CW_LEASE_MS after the last beat Redis
 * acknowledged was sent (measured on the monotonic clock from the send, so a slow reply
 * never lengthens it). A pool that has not renewed it by the stop point, or learns that
 * a reaper took it for dead, is fenced:
 *   - every job it holds is asked to stop with CWORK_STOP_LEASE_LOST (the cancel
 *     machinery: `cwork work` SIGTERMs the command's tree, SIGKILLs it after the grace);
 *   - nothing is committed or fetched: a task so stopped is freed uncommitted, its
 *     in-progress entry left to whoever reaps (it runs again, a duplicate explained by
 *     the lost lease, never a success this pool cannot prove); a task whose handler
 *     had returned before waits, and is committed after the renewal only if its entry
 *     is still in this pool's in-progress list (the commit's LREM);
 *   - once no handler runs, the guard beats again (re-registering the pool), and the
 *     first dispatcher takes up what is still in the pool's in-progress lists and no
 *     task accounts for (reclaim: no reaper came), then fetching goes on.
 * The guard is a thread of its own that sleeps until the stop point, because every
 * other thread may be stuck in a call to an unreachable Redis; the dispatchers and the
 * heartbeat also look before each round trip and each beat, so that after a freeze or a
 * clock jump nothing is committed, fetched or beaten before the jobs are stopped. */
#include "clock.h"
#include "log.h"
#include "pool.h"
#include "util.h"

#include <errno.h>
#include <string.h>

#define RECOVER_POLL_MS 100 /* while fenced: how often to look whether the tasks are gone */

int cw_lease_init(cwork_pool *p)
{
    atomic_store(&p->fenced, 0);
    atomic_store(&p->reaped_seen, 0);
    cw_mutex_init(&p->lease_mu);
    return cw_cond_init_monotonic(&p->lease_cond) ? CWORK_ENOMEM : 0;
}

void cw_lease_destroy(cwork_pool *p)
{
    pthread_cond_destroy(&p->lease_cond);
    cw_mutex_destroy(&p->lease_mu);
}

/* Asks each task of the shard that runs or waits to run to stop (caller holds its mu).
 * Tasks whose handler had already returned keep their outcome: they are committed once
 * the lease is renewed, and only if their entry is still in this pool's in-progress list
 * (the cycle script's LREM: a reaper that gave the job back removed it). */
static void stop_shard_tasks(cw_shard *sh)
{
    cw_mutex_assert_held(&sh->mu);
    cwork_pool *p = sh->pool;
    for (size_t e = sh->first_executor; e < sh->first_executor + sh->nexecutors; e++)
        if (p->executors[e].current) cw_task_stop(p->executors[e].current, CWORK_STOP_LEASE_LOST);
    for (cw_task *t = sh->ready.head; t; t = t->next)
        cw_task_stop(t, CWORK_STOP_LEASE_LOST);
}

static void fence(cwork_pool *p, const char *why)
{
    if (atomic_exchange(&p->fenced, 1) == 0) {
        char lease[24];
        snprintf(lease, sizeof lease, "%d", CW_LEASE_MS);
        cw_log(CWORK_LOG_ERROR, "pool.lease_lost", "pool_id", p->id, "why", why, "lease_ms", lease,
               "message",
               "this pool can no longer prove it owns its jobs (another pool may run them "
               "now): they are asked to stop and are not committed; fetching resumes once "
               "the pool has beaten again",
               NULL);
    }
    for (size_t i = 0; i < p->nshards; i++) {
        cw_shard *sh = &p->shards[i];
        cw_mutex_lock(&sh->mu);
        stop_shard_tasks(sh);
        pthread_cond_signal(&sh->disp_cond);
        cw_mutex_unlock(&sh->mu);
    }
}

/* Whether the lease has run to its stop point or a reaper took the pool for dead. */
static const char *lease_gone(cwork_pool *p, int64_t *stop_at)
{
    int64_t sent = cw_heartbeat_acked_sent_ms(p->heartbeat);
    *stop_at = sent + CW_LEASE_STOP_AT_MS;
    if (cw_heartbeat_reaped(p->heartbeat) != atomic_load(&p->reaped_seen))
        return "a reaper took this pool for dead and gave its jobs back";
    if (cw_clock_mono_ms() >= *stop_at) return "the heartbeat was not renewed in time";
    return NULL;
}

bool cw_lease_lost(cwork_pool *p)
{
    if (atomic_load(&p->fenced)) return true;
    if (!atomic_load(&p->lease_started)) return false;
    int64_t stop_at;
    const char *why = lease_gone(p, &stop_at);
    if (!why) return false;
    /* Only the flag here (the caller may hold a shard's mu); the guard asks the tasks
     * of every shard to stop, the caller those of its own. */
    if (atomic_exchange(&p->fenced, 1) == 0) {
        cw_mutex_lock(&p->lease_mu);
        pthread_cond_signal(&p->lease_cond);
        cw_mutex_unlock(&p->lease_mu);
        cw_log(CWORK_LOG_ERROR, "pool.lease_lost", "pool_id", p->id, "why", why, NULL);
    }
    return true;
}

/* Frees the tasks of list that were asked to stop for the lost lease (all of them with
 * all set), keeping the others in order; returns how many it freed. */
static size_t drop_from(cw_task **list, bool all)
{
    size_t n = 0;
    for (cw_task **at = list; *at;) {
        cw_task *t = *at;
        if (all || atomic_load(&t->stop_reason) == CWORK_STOP_LEASE_LOST) {
            *at = t->next;
            cw_task_free(t);
            n++;
        } else {
            at = &t->next;
        }
    }
    return n;
}

size_t cw_lease_drop_shard_tasks(cw_shard *sh, bool all)
{
    stop_shard_tasks(sh);
    size_t n = drop_from(&sh->pending, all);
    CW_ASSERT(sh->npending >= n);
    sh->npending -= n;
    /* ready: every task was asked to stop above; done: rebuilt, its tail found again */
    cw_task *ready = cw_tq_take_all(&sh->ready), *done = cw_tq_take_all(&sh->done);
    n += drop_from(&ready, true);
    n += drop_from(&done, all);
    while (done) {
        cw_task *next = done->next;
        cw_tq_push(&sh->done, done);
        done = next;
    }
    CW_ASSERT(sh->in_flight >= n);
    sh->in_flight -= n;
    return n;
}

/* No handler runs or waits to run and no fetch is under way (finished tasks may wait
 * for their commit). */
static bool nothing_runs(cwork_pool *p)
{
    bool quiet = true;
    for (size_t i = 0; i < p->nshards && quiet; i++) {
        cw_shard *sh = &p->shards[i];
        cw_mutex_lock(&sh->mu);
        quiet = sh->ready.len == 0 && sh->fetching == 0;
        for (size_t e = sh->first_executor; quiet && e < sh->first_executor + sh->nexecutors; e++)
            quiet = p->executors[e].current == NULL;
        cw_mutex_unlock(&sh->mu);
    }
    return quiet;
}

/* Fenced and no handler running: beat (re-registering the pool if a reaper removed it), and
 * once that is acknowledged let the dispatchers go on, the first with a reclaim. */
static void try_recover(cwork_pool *p)
{
    if (!nothing_runs(p)) return;
    cwork_error e = {0};
    if (cw_heartbeat_beat(p->heartbeat, &e) != 0) return; /* (the heartbeat logs its own) */
    atomic_store(&p->reaped_seen, cw_heartbeat_reaped(p->heartbeat));
    cw_shard *first = &p->shards[0];
    cw_mutex_lock(&first->mu);
    first->lease_reclaim = true;
    cw_mutex_unlock(&first->mu);
    atomic_store(&p->fenced, 0);
    cw_log(CWORK_LOG_WARN, "pool.lease_renewed", "pool_id", p->id, "message",
           "the pool beat again after losing its lease: fetching resumes", NULL);
    cw_pool_wake_dispatchers(p);
}

static void *guard_main(void *arg)
{
    cwork_pool *p = arg;
    cw_mutex_lock(&p->lease_mu);
    while (!p->lease_stop) {
        if (atomic_load(&p->fenced)) {
            cw_mutex_unlock(&p->lease_mu);
            fence(p, "lease lost"); /* (again: tasks a round trip delivered meanwhile) */
            if (!atomic_load(&p->stopping)) try_recover(p);
            cw_mutex_lock(&p->lease_mu);
            if (p->lease_stop) break;
            /* A poll of this process's own tasks, not one of the pool's timers: on the
             * system's monotonic clock even under a test's manual clock, which may stand
             * while the pool waits to recover (a fenced pool would then never fetch). */
            struct timespec ts;
            cw_deadline_after_ms(&ts, RECOVER_POLL_MS);
            cw_cond_timedwait(&p->lease_cond, &p->lease_mu, &ts);
            continue;
        }
        int64_t stop_at;
        const char *why = lease_gone(p, &stop_at);
        if (why) {
            cw_mutex_unlock(&p->lease_mu);
            fence(p, why);
            cw_mutex_lock(&p->lease_mu);
            continue;
        }
        cw_clock_wait_until(&p->lease_cond, &p->lease_mu, stop_at);
    }
    cw_mutex_unlock(&p->lease_mu);
    return NULL;
}

/* The heartbeat's hook: before a beat, the lease is looked at (a beat after a freeze must
 * not make the pool look alive before its jobs are stopped); after it, the guard wakes
 * to see whether a reaper had taken the pool for dead. */
static void on_beat(void *userdata, cw_heartbeat_moment moment)
{
    cwork_pool *p = userdata;
    if (moment == CW_HEARTBEAT_BEFORE_BEAT) {
        if (cw_lease_lost(p)) fence(p, "lease lost");
        return;
    }
    cw_mutex_lock(&p->lease_mu);
    pthread_cond_signal(&p->lease_cond);
    cw_mutex_unlock(&p->lease_mu);
}

int cw_lease_start(cwork_pool *p, cwork_error *err)
{
    atomic_store(&p->fenced, 0);
    atomic_store(&p->reaped_seen, cw_heartbeat_reaped(p->heartbeat));
    for (size_t i = 0; i < p->nshards; i++)
        p->shards[i].lease_reclaim = false;
    cw_heartbeat_set_hook(p->heartbeat, on_beat, p);
    p->lease_stop = 0;
    int e = cw_thread_create(&p->lease_guard, guard_main, p);
    if (e != 0)
        return cw_error(err, CWORK_ENOMEM, "lease: cannot create a thread: %s", strerror(e));
    atomic_store(&p->lease_started, 1);
    return 0;
}

void cw_lease_stop(cwork_pool *p)
{
    if (!atomic_load(&p->lease_started)) return;
    cw_mutex_lock(&p->lease_mu);
    p->lease_stop = 1;
    pthread_cond_signal(&p->lease_cond);
    cw_mutex_unlock(&p->lease_mu);
    pthread_join(p->lease_guard, NULL);
    atomic_store(&p->lease_started, 0);
}
