/* The dispatcher: one thread and one connection per shard of the pool. It loops on
 * one question — what next? — answered by dispatch_policy.c from a snapshot of the
 * shard: wait, spin for a batch of short handlers, reclaim after a lost reply, or a
 * round trip, or a give-back of jobs fetched ahead that wait behind long runs. A round
 * trip is one cycle script call that commits the jobs the shard's executors finished and
 * fetches up to k new ones (k = free executors and, on a backlog, those fetched ahead;
 * each chosen by its own sampler draw). This file does what the policy decides. */
#include "give_back.h"
#include "log.h"
#include "pool.h"
#include "pool_nsshards_budget.h"
#include "scripts.h"
#include "unique_guard.h"

#include <sched.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- the round trip */

static const char *type_key(const void *ud, size_t type, cw_cycle_key kind, size_t *len)
{
    const cwork_pool *p = ud;
    const cw_job_type *t = &p->types[type];
    if (kind == CW_CYCLE_NAME) {
        *len = t->name_len;
        return t->name;
    }
    if (kind == CW_CYCLE_RATE_LIMIT) {
        *len = t->rate_key_len;
        return t->rate_key;
    }
    *len = t->key_lens[kind];
    return t->keys[kind];
}

/* Appends one cycle script call: the commit of the done tasks (ca, may be empty) and a
 * fetch of k jobs, each draw the sampler's order of the types. */
static int append_cycle(cw_shard *sh, cw_conn *c, size_t k, const cw_commit_args *ca,
                        cw_cycle_call *call, size_t *limited, cwork_error *err)
{
    cwork_pool *p = sh->pool;
    cw_buf retry, dead, cancelled;
    cw_buf_init(&retry);
    cw_buf_init(&dead);
    cw_buf_init(&cancelled);
    cw_key_retry(&p->keys, &retry);
    cw_key_dead(&p->keys, &dead);
    cw_key_cancelled(&p->keys, &cancelled);
    cw_cycle_keys keys = {.ntypes = p->ntypes,
                          .key = type_key,
                          .ud = p,
                          .retry = retry.data,
                          .dead = dead.data,
                          .retry_len = retry.len,
                          .dead_len = dead.len,
                          .rate_limits = p->rate_limits_key,
                          .rate_limits_len = p->rate_limits_key_len,
                          .cancelled = cancelled.data,
                          .cancelled_len = cancelled.len};
    /* Rate-limited types only when some are, and only when this call fetches. */
    size_t nlimited = 0;
    if (k && limited && atomic_load_explicit(&p->nrate_limited, memory_order_relaxed))
        nlimited = cw_pool_rate_limited_types(p, limited);
    cw_cycle_call_reset(call);
    for (size_t d = 0; d < k; d++) {
        cw_sampler_draw(&sh->sampler);
        cw_cycle_call_add_draw(call, sh->sampler.order);
    }
    cw_cycle_call_set_extras(call, &ca->extra_keys, &ca->extra_args);
    cw_cycle_call_set_batch(call, ca->batch_nargs);
    int rc = retry.oom || dead.oom || cancelled.oom
                 ? CWORK_ENOMEM
                 : cw_cycle_call_finish_limited(call, &keys, p->id, p->single_fetch, &ca->args,
                                                limited, nlimited, -1);
    if (rc == 0)
        rc = cw_conn_append_eval(c, &cw_script_cycle, call->nkeys, call->nargs, call->args.argv,
                                 call->args.lens, err);
    else
        cw_error(err, rc, "out of memory");
    cw_buf_free(&retry);
    cw_buf_free(&dead);
    cw_buf_free(&cancelled);
    return rc;
}

#define CYCLE "cycle script"

/* The cycle script's writes that failed on a key someone damaged (type index, error
 * text pairs in r from element `from`, n elements): the script went on without them
 * and lost no job (see cycle.lua). A damaged key stays damaged until someone repairs
 * it, and every round trip meets it again: logged at most once a second per pool. */
static void log_cycle_errors(cwork_pool *p, const redisReply *r, size_t from, size_t n)
{
    long long now = cw_monotonic_us() / 1000, last = atomic_load(&p->cycle_error_log_ms);
    if (last && now - last < 1000) return;
    if (!atomic_compare_exchange_strong(&p->cycle_error_log_ms, &last, now ? now : 1))
        return; /* another shard logs them */
    for (size_t j = from; j + 1 < from + n; j += 2) {
        int64_t ti;
        const char *text;
        if (cw_reply_at_int(r, j, &ti, CYCLE, NULL) != 0 || ti < 1 || (uint64_t)ti > p->ntypes ||
            cw_reply_at_str(r, j + 1, &text, NULL, CYCLE, NULL) != 0)
            continue;
        cw_log(CWORK_LOG_WARN, "worker.cycle", "job_name", p->types[ti - 1].name, "error", text,
               NULL);
    }
}

/* Marks in ca the committed jobs the reply names as not removed from in-progress (see
 * cycle.lua): the first element is the count removed, or {removed, positions in the
 * commit's arguments…}, a position negative when the job's write failed. */
static int read_not_removed(const redisReply *first, cw_commit_args *ca, cwork_error *err)
{
    if (cw_reply_is_int(first)) return 0;
    size_t n;
    int rc = cw_reply_array(first, 1, &n, CYCLE " (commit)", err);
    for (size_t j = 1; rc == 0 && j < n; j++) {
        int64_t pos;
        rc = cw_reply_at_int(first, j, &pos, CYCLE " (commit)", err);
        for (size_t i = 0; rc == 0 && i < ca->ntasks; i++)
            if ((int64_t)ca->raw_at[i] == (pos < 0 ? -pos : pos))
                ca->not_removed[i] = pos < 0 ? 2 : 1;
    }
    return rc;
}

/* Reads the cycle reply: the commit's count (and the jobs it did not remove, marked in
 * ca), then the fetched jobs as tasks. A job whose task cannot be allocated stays in
 * in-progress; *incomplete is then set, so that a later reclaim takes it up (our
 * heartbeat keeps reapers away). */
static int read_cycle(cwork_pool *p, cw_conn *c, cw_commit_args *ca, cw_task_queue *out,
                      int *incomplete, int64_t *rate_wait_us, cwork_error *err)
{
    redisReply *r = NULL;
    int rc = cw_conn_read(c, &r, err);
    if (rc) return rc;
    size_t n = 0;
    if (cw_reply_error(r)) {
        rc = cw_error(err, CWORK_EREDIS, "redis: cycle: %s", cw_reply_error(r));
    } else if ((rc = cw_reply_array(r, 1, &n, CYCLE, err)) == 0) {
        rc = read_not_removed(cw_reply_at(r, 0), ca, err);
    }
    /* Flat after the first element: type index, count, that many job bytes; again for
     * the next type. Type index 0 carries the errors of writes on damaged keys. */
    for (size_t i = 1; rc == 0 && i < n;) {
        int64_t ti, count;
        if ((rc = cw_reply_at_int(r, i, &ti, CYCLE, err)) != 0 ||
            (rc = cw_reply_at_int(r, i + 1, &count, CYCLE, err)) != 0)
            break;
        if (count < 0 || (uint64_t)count > n - i - 2 || ti < -2 || (ti == -2 && count != 1) ||
            (ti > 0 && (uint64_t)ti > p->ntypes)) {
            rc = cw_error(err, CWORK_EPROTO, "%s: element %zu: type %lld with %lld jobs", CYCLE,
                          i + 1, (long long)ti, (long long)count);
            break;
        }
        size_t end = i + 2 + (size_t)count;
        if (ti == -2) { /* a rate-limited type was held back: when it may start */
            if ((rc = cw_reply_at_int(r, i + 2, rate_wait_us, CYCLE, err)) != 0) break;
            i = end;
            continue;
        }
        if (ti == -1) { /* committed jobs the script sent to dead as cancelled */
            for (size_t j = i + 2; rc == 0 && j < end; j++) {
                int64_t pos;
                rc = cw_reply_at_int(r, j, &pos, CYCLE " (cancelled)", err);
                for (size_t k = 0; rc == 0 && k < ca->ntasks; k++)
                    if ((int64_t)ca->raw_at[k] == pos) ca->cancelled[k] = 1;
            }
            i = end;
            continue;
        }
        if (ti == 0) {
            int64_t eti;
            const char *text;
            if (!ca->write_error[0] && count >= 2 &&
                cw_reply_at_int(r, i + 2, &eti, CYCLE, NULL) == 0 && eti >= 1 &&
                (uint64_t)eti <= p->ntypes &&
                cw_reply_at_str(r, i + 3, &text, NULL, CYCLE, NULL) == 0)
                snprintf(ca->write_error, sizeof ca->write_error, "%s: %s", p->types[eti - 1].name,
                         text);
            log_cycle_errors(p, r, i + 2, (size_t)count);
            i = end;
            continue;
        }
        cw_job_type *type = &p->types[ti - 1];
        for (i += 2; i < end; i++) {
            const char *bytes;
            size_t len;
            if (cw_reply_at_str(r, i, &bytes, &len, CYCLE, NULL) != 0) continue;
            cw_task *t = cw_task_new(type, bytes, len);
            if (!t) {
                cw_log(CWORK_LOG_ERROR, "worker.fetch", "error",
                       "out of memory: job left in progress until a reclaim", NULL);
                *incomplete = 1;
                continue;
            }
            cw_tq_push(out, t);
        }
    }
    cw_reply_free(r);
    return rc;
}

/* Counts the committed jobs by outcome. A job the commit did not find in in-progress
 * was taken back by a reaper (this pool was judged dead while it ran: frozen, stopped,
 * cut off) and runs again elsewhere — unless an earlier commit of it went unanswered: it is not
 * counted here, and the pool says how many, once per round trip that meets them. A job
 * whose commit could not write (its in-progress list, retry or dead set damaged, or a
 * command the Redis user may not run) is not counted either, and is said to be that. */
static void count_committed(cwork_pool *p, cw_task *list, const cw_commit_args *ca)
{
    size_t i = 0, taken_back = 0, unwritten = 0;
    for (cw_task *t = list; t; t = t->next, i++) {
        if (i < ca->ntasks && ca->not_removed[i] == 2) {
            unwritten++;
            continue;
        }
        /* A job whose earlier commit went unanswered was most likely removed by it. */
        if (i < ca->ntasks && ca->not_removed[i] && !t->commit_unsure) {
            taken_back++;
            continue;
        }
        if (i < ca->ntasks && ca->cancelled[i]) {
            /* cancelled before the pool heard of it: dead, whatever the handler said */
            t->failed = 1;
            t->outcome = OUTCOME_DEAD;
        }
        if (!t->failed) {
            atomic_fetch_add(&p->n_succeeded, 1);
            continue;
        }
        atomic_fetch_add(&p->n_failed, 1);
        if (t->outcome == OUTCOME_RETRY)
            atomic_fetch_add(&p->n_retried, 1);
        else if (t->outcome == OUTCOME_DEAD)
            atomic_fetch_add(&p->n_dead, 1);
    }
    if (taken_back) {
        char n[24];
        snprintf(n, sizeof n, "%zu", taken_back);
        cw_log(CWORK_LOG_WARN, "worker.commit.taken_back", "jobs", n, "message",
               "finished jobs were no longer in this pool's in-progress list: a reaper gave "
               "them back to their queues, so they run again elsewhere and are not counted "
               "as processed here",
               NULL);
    }
    if (unwritten) {
        char n[24];
        snprintf(n, sizeof n, "%zu", unwritten);
        cw_log(CWORK_LOG_ERROR, "worker.commit.not_written", "jobs", n, "error",
               ca->write_error[0] ? ca->write_error : "(not reported)", "message",
               "finished jobs could not be committed: a write of the commit failed (the key "
               "and Redis' error are in `error`); they stay in this pool's in-progress list, "
               "not counted as processed, until the key is repaired or the permission given, "
               "and run again if a reaper gives them back",
               NULL);
    }
}

/* ---------------------------------------------------------------- the shard */

/* Whether a ready task may go back to its queue: not a unique job (its guard went at
 * the fetch, PROTOCOL §4.3: back in the queue without it, a second copy could be
 * enqueued, and upstream's ByKey placeholder would lose its replacement's args), not
 * asked to stop (a cancel: it is not to run anywhere), not kept by an earlier give-back. */
static bool may_give_back(const cw_task *t)
{
    return t->job && !t->job->unique && !t->no_give_back &&
           atomic_load(&t->stop_reason) == CWORK_STOP_NONE;
}

/* What the policy looks at (caller holds mu); consumes the wake-up flag. */
static cw_dispatch_view shard_view(cw_shard *sh)
{
    cw_mutex_assert_held(&sh->mu);
    cwork_pool *p = sh->pool;
    cw_dispatch_view v = {
        .now_us = cw_monotonic_us(),
        .stopping = atomic_load(&p->stopping) != 0,
        .wakeup = sh->wakeup,
        .ntypes = p->ntypes,
        .nexecutors = sh->nexecutors,
        .in_flight = sh->in_flight,
        .ready = sh->ready.len,
        .done = sh->done.len + sh->npending,
        .sleeping = sh->nsleeping,
        .ready_since_us = sh->ready.head ? sh->ready.head->delivered_us : 0,
        .handler_avg_us = sh->handler_avg_us,
        .round_trip_us = sh->round_trip_us,
        .finished = atomic_load_explicit(&sh->done_seq, memory_order_relaxed),
    };
    sh->wakeup = false;
    /* Ready tasks while every executor runs: whether one could go back (rule 4). The
     * oldest usually can: the walk stops at the first. */
    if (v.ready && v.in_flight >= v.done + v.ready + v.nexecutors)
        for (cw_task *t = sh->ready.head; t && !v.returnable; t = t->next)
            v.returnable = may_give_back(t);
    /* Only fetching ahead needs the executors' long runs; ten reads under mu. */
    if (sh->state.backlog && p->tuning.ahead_max) {
        int64_t long_us = cw_long_run_us(v.handler_avg_us, v.round_trip_us, &p->tuning);
        for (size_t e = sh->first_executor; e < sh->first_executor + sh->nexecutors; e++)
            v.running_long +=
                p->executors[e].current && v.now_us - p->executors[e].current_since_us > long_us;
    }
    return v;
}

/* Hands fetched tasks to the executors and wakes as many as they need (caller holds
 * mu). An undecodable job goes straight to its commit (to dead). */
static void deliver(cw_shard *sh, cw_task_queue *fetched)
{
    cw_mutex_assert_held(&sh->mu);
    cwork_pool *p = sh->pool;
    int64_t now = cw_monotonic_us();
    atomic_fetch_add(&p->n_fetched, fetched->len);
    sh->in_flight += fetched->len;
    for (cw_task *t = fetched->head; t;) {
        cw_task *next = t->next;
        CW_ASSERT(t->run.pool == NULL); /* handed over fresh: no executor has taken it */
        t->delivered_us = now;
        cw_tq_push(t->job ? &sh->ready : &sh->done, t);
        t = next;
    }
    fetched->head = fetched->tail = NULL;
    fetched->len = 0;
    if (sh->ready.head)
        cw_shard_wake_executors(sh, cw_wake_count(sh->ready.len, sh->nsleeping, sh->handler_avg_us,
                                                  now - sh->ready.head->delivered_us, &p->tuning));
}

/* Sleeps on disp_cond until signalled or until the monotonic time until_us (0: no
 * limit); caller holds mu. */
static void wait_until(cw_shard *sh, int64_t until_us)
{
    cw_mutex_assert_held(&sh->mu);
    sh->dispatcher_waiting = true;
    if (until_us) {
        struct timespec ts = {(time_t)(until_us / 1000000), (long)(until_us % 1000000) * 1000};
        cw_cond_timedwait(&sh->disp_cond, &sh->mu, &ts);
    } else {
        cw_cond_wait(&sh->disp_cond, &sh->mu);
    }
    sh->dispatcher_waiting = false;
}

/* Waits for `busy` finishers of a batch of short handlers without sleeping (caller
 * holds mu, released meanwhile): a sleeping dispatcher costs a futex wake-up in the
 * executor and a scheduler wake-up before the next round trip, several times the
 * batch's own run time on a virtual machine. Yields the CPU between looks and gives up
 * at until_us; the caller then looks at the shard again under mu. */
static void spin_for_batch(cw_shard *sh, size_t busy, int64_t until_us)
{
    cw_mutex_assert_held(&sh->mu);
    /* done_seq moves under mu: read here, it counts what is still due. */
    size_t start = atomic_load_explicit(&sh->done_seq, memory_order_acquire);
    cw_mutex_unlock(&sh->mu);
    for (unsigned i = 1; atomic_load_explicit(&sh->done_seq, memory_order_acquire) - start < busy;
         i++) {
        if ((i & 15) == 0 && cw_monotonic_us() >= until_us) break;
        sched_yield(); /* two cores: let the executor (or Redis) have this one */
    }
    cw_mutex_lock(&sh->mu);
}

/* A reclaim (caller holds mu, released meanwhile). */
static void reclaim(cw_shard *sh, cw_conn **cp)
{
    cw_mutex_assert_held(&sh->mu);
    cwork_pool *p = sh->pool;
    cw_mutex_unlock(&sh->mu);
    cwork_error err = {0};
    cw_task_queue found = {0};
    int incomplete = 0;
    cw_redis_drop_retired(p->redis, cp); /* the master moved: not one more write there */
    int rc = *cp ? 0 : cw_redis_checkout(p->redis, cp, &err);
    if (rc == 0) {
        pthread_rwlock_wrlock(&p->fetch_lock);
        rc = cw_reclaim_inprogress(p, *cp, &found, &incomplete, &err);
        if (found.len && !(*cp)->broken)
            cw_unique_guards_release(p, *cp, &found); /* as for any fetched unique job */
        cw_mutex_lock(&sh->mu);
        if (found.len) deliver(sh, &found);
        cw_mutex_unlock(&sh->mu);
        pthread_rwlock_unlock(&p->fetch_lock);
    }
    if (rc) cw_log(CWORK_LOG_ERROR, "worker.reclaim", "error", err.message, NULL);
    if (*cp && (*cp)->broken) {
        cw_redis_checkin(p->redis, *cp);
        *cp = NULL;
    }
    cw_mutex_lock(&sh->mu);
    cw_round_trip_result res = {
        .ok = rc == 0, .complete = rc == 0 && !incomplete, .reclaimed = true, .got = found.len};
    cw_dispatch_after(&sh->state, &res, cw_monotonic_us(), &p->tuning, p->opts.idle_backoff_max_ms);
}

/* Moves the shard's done tasks to its pending list, for the next commit, with what an
 * earlier failed attempt left (caller holds mu) — except a task stopped for a lost lease
 * that finished after the dispatcher last held off (the lease came back meanwhile): its
 * run is not this pool's to report, and the lease's reclaim takes its entry up again if
 * no reaper did (lease.c). */
static void take_done(cw_shard *sh)
{
    cw_mutex_assert_held(&sh->mu);
    for (cw_task *t = cw_tq_take_all(&sh->done); t;) {
        cw_task *next = t->next;
        if (atomic_load(&t->stop_reason) == CWORK_STOP_LEASE_LOST) {
            cw_task_free(t);
            CW_ASSERT(sh->in_flight > 0);
            sh->in_flight--;
            t = next;
            continue;
        }
        t->next = sh->pending;
        sh->pending = t;
        sh->npending++;
        t = next;
    }
}

/* The round trip's one exchange with Redis on c (no shard lock held): commits the
 * npending tasks of pending and fetches `fetch` jobs into fetched, in one cycle call
 * (with min_replicas, the commit's WAIT in the same trip). 0 or the error. */
static int exchange(cw_shard *sh, cw_conn *c, cw_cycle_call *call, size_t *limited, size_t fetch,
                    cw_task *pending, size_t npending, cw_commit_args *ca, cw_task_queue *fetched,
                    int *incomplete, int64_t *rate_wait_us, cwork_error *err)
{
    cwork_pool *p = sh->pool;
    int rc = 0;
    if (npending) rc = cw_commit_prepare(p, pending, ca, err);
    if (rc == 0) rc = append_cycle(sh, c, fetch, ca, call, limited, err);
    if (rc == 0 && npending) rc = cw_conn_append_wait_replicas(c, err);
    if (rc == 0) rc = read_cycle(p, c, ca, fetched, incomplete, rate_wait_us, err);
    if (rc == 0 && npending) rc = cw_conn_read_wait_replicas(c, err);
    return rc;
}

/* Gives back a connection left broken or with a reply unread (*cp cleared); returns
 * the connection kept, or NULL. */
static cw_conn *keep_conn(cwork_pool *p, cw_conn **cp)
{
    cw_conn *c = *cp;
    if (c && (c->broken || c->pending)) {
        c->broken = 1;
        cw_redis_checkin(p->redis, c);
        *cp = c = NULL;
    }
    return c;
}

static void free_fetched(cw_task_queue *fetched)
{
    for (cw_task *t = fetched->head; t;) {
        cw_task *next = t->next;
        cw_task_free(t);
        t = next;
    }
    fetched->head = fetched->tail = NULL;
    fetched->len = 0;
}

/* After the exchange (caller holds mu): delivers what was fetched and, when the commit
 * went through, frees the committed tasks. */
static void settle(cw_shard *sh, cw_task_queue *fetched, bool committed)
{
    cw_mutex_assert_held(&sh->mu);
    if (fetched->len) deliver(sh, fetched);
    sh->fetching = 0;
    if (!committed) return;
    CW_ASSERT(sh->in_flight >= sh->npending);
    sh->in_flight -= sh->npending;
    cw_task *pending = sh->pending; /* only this thread adds to it, and not meanwhile */
    sh->pending = NULL;
    sh->npending = 0;
    while (pending) {
        cw_task *next = pending->next;
        cw_task_free(pending);
        pending = next;
    }
}

/* Moves the ready tasks that may go back to `back` (caller holds mu); the others stay
 * in their order. */
static void take_for_give_back(cw_shard *sh, cw_task_queue *back)
{
    cw_mutex_assert_held(&sh->mu);
    cw_task *t = sh->ready.head;
    sh->ready.head = sh->ready.tail = NULL;
    sh->ready.len = 0;
    while (t) {
        cw_task *next = t->next;
        t->next = NULL;
        cw_tq_push(may_give_back(t) ? back : &sh->ready, t);
        t = next;
    }
}

/* Gives ready tasks back to their queues (caller holds mu, released meanwhile): every
 * executor is held by a run far longer than the average, or the pool stops (rule 4).
 * The round-trip lock is held shared while the tasks are in neither the shard nor a
 * queue, so that no reclaim takes their entries up meanwhile; `fetching` counts them, so
 * that a drain or the lease does not take the shard for quiet. */
static void give_back(cw_shard *sh, cw_conn **cp)
{
    cw_mutex_assert_held(&sh->mu);
    cwork_pool *p = sh->pool;
    cw_mutex_unlock(&sh->mu);
    cwork_error err = {0};
    cw_task_queue back = {0}, kept = {0};
    size_t moved = 0, taken = 0;
    cw_redis_drop_retired(p->redis, cp); /* the master moved: not one more write there */
    int rc = *cp ? 0 : cw_redis_checkout(p->redis, cp, &err);
    int locked = rc == 0;
    if (locked) {
        pthread_rwlock_rdlock(&p->fetch_lock);
        cw_mutex_lock(&sh->mu);
        take_for_give_back(sh, &back); /* what the executors have not taken meanwhile */
        taken = back.len;
        sh->fetching += taken;
        cw_mutex_unlock(&sh->mu);
        rc = cw_give_back(p, *cp, &back, &kept, &moved, &err);
        if (rc) free_fetched(&back); /* the outcome is unknown: a reclaim takes up the rest */
    }
    if (rc) cw_log(CWORK_LOG_ERROR, "worker.give_back", "error", err.message, NULL);
    keep_conn(p, cp);
    /* Fenced meanwhile: what it kept is not run; its entries stay for a reaper, or for
     * the lease's reclaim once renewed (lease.c), as for a fetch read after a freeze. */
    if (kept.len && cw_lease_lost(p)) free_fetched(&kept);
    cw_mutex_lock(&sh->mu);
    CW_ASSERT(sh->in_flight >= taken && sh->fetching >= taken);
    sh->fetching -= taken;
    sh->in_flight -= taken - kept.len;
    int64_t now = cw_monotonic_us();
    for (cw_task *t = kept.head; t;) { /* still this pool's: they run (or die) here */
        cw_task *next = t->next;
        t->delivered_us = now;
        cw_tq_push(&sh->ready, t);
        t = next;
    }
    if (locked) pthread_rwlock_unlock(&p->fetch_lock);
    if (moved) {
        char n[24];
        snprintf(n, sizeof n, "%zu", moved);
        cw_log(CWORK_LOG_INFO, "worker.give_back", "jobs", n, "message",
               "jobs fetched ahead went back to their queues: every executor is held by a "
               "handler far longer than the average, or the pool stops",
               NULL);
    }
    cw_round_trip_result res = {.ok = rc == 0, .gave_back = true, .got = taken};
    cw_dispatch_after(&sh->state, &res, now, &p->tuning, p->opts.idle_backoff_max_ms);
    if (taken > kept.len && atomic_load(&p->stopping)) {
        cw_mutex_unlock(&sh->mu); /* pool->mu comes before a shard's */
        cw_pool_notify_idle(p);
        cw_mutex_lock(&sh->mu);
    }
}

/* One round trip: commits every done task and fetches `fetch` jobs (caller holds mu,
 * released meanwhile). Until its reply is read, what it moved is unknown (reclaim). The
 * round-trip lock is held shared until fetched jobs are delivered and committed tasks
 * freed, so that another shard's reclaim (exclusive) sees every task and none is freed
 * under it. */
static void round_trip(cw_shard *sh, cw_conn **cp, cw_cycle_call *call, size_t *limited,
                       size_t fetch)
{
    cw_mutex_assert_held(&sh->mu);
    cwork_pool *p = sh->pool;
    take_done(sh);
    cw_task *pending = sh->pending; /* stable while we commit it: only this thread
                                       changes the list, under mu */
    size_t npending = sh->npending;
    sh->fetching = fetch; /* until delivered: cwork_pool_drain must not miss them */
    cw_mutex_unlock(&sh->mu);

    cwork_error err = {0};
    cw_task_queue fetched = {0};
    int incomplete = 0;
    int64_t rate_wait_us = 0;
    cw_redis_drop_retired(p->redis, cp); /* the master moved: not one more write there */
    cw_commit_args ca;
    memset(&ca, 0, sizeof ca);
    int rc = *cp ? 0 : cw_redis_checkout(p->redis, cp, &err);
    int locked = rc == 0;
    if (locked) pthread_rwlock_rdlock(&p->fetch_lock);
    int64_t sent_us = cw_monotonic_us();
    if (rc == 0)
        rc = exchange(sh, *cp, call, limited, fetch, pending, npending, &ca, &fetched, &incomplete,
                      &rate_wait_us, &err);
    int64_t took_us = cw_monotonic_us() - sent_us;
    if (rc && npending)
        cw_log(CWORK_LOG_WARN, "worker.remove_job_from_in_progress.lrem", "error", err.message,
               NULL);
    if (rc && fetch) cw_log(CWORK_LOG_ERROR, "worker.fetch", "error", err.message, NULL);
    cw_conn *c = keep_conn(p, cp);
    /* A fetch whose reply is read after a freeze (or once the lease ran out): a reaper
     * may have given those jobs back, and another pool run them, meanwhile. They are not
     * delivered; their entries stay for the reaper, or for this pool's reclaim once its
     * lease is renewed (lease.c). */
    if (fetched.len && cw_lease_lost(p)) free_fetched(&fetched);
    if (fetched.len && c) cw_unique_guards_release(p, c, &fetched);

    size_t got = fetched.len;
    int committed = npending && rc == 0;
    if (committed)
        count_committed(p, pending, &ca);
    else
        for (cw_task *t = pending; t; t = t->next)
            t->commit_unsure = 1;
    cw_commit_args_free(&ca);
    cw_mutex_lock(&sh->mu);
    CW_ASSERT(sh->pending == pending && sh->npending == npending);
    if (rc == 0) /* the first sample seeds the average: from 0 it would take 8 to count */
        sh->round_trip_us =
            sh->round_trip_us ? sh->round_trip_us + (took_us - sh->round_trip_us) / 8 : took_us;
    settle(sh, &fetched, committed);
    if (locked) pthread_rwlock_unlock(&p->fetch_lock);
    cw_round_trip_result res = {.ok = rc == 0,
                                .complete = rc == 0 && !incomplete,
                                .committed = npending > 0,
                                .fetch = fetch,
                                .got = got,
                                .rate_wait_us = rate_wait_us};
    cw_dispatch_after(&sh->state, &res, cw_monotonic_us(), &p->tuning, p->opts.idle_backoff_max_ms);
    if (p->seats) cw_budget_after(&p->seats[sh->index], fetch, got, rc == 0);
    if (committed && atomic_load(&p->stopping)) {
        cw_mutex_unlock(&sh->mu); /* pool->mu comes before a shard's */
        cw_pool_notify_idle(p);
        cw_mutex_lock(&sh->mu);
    }
}

/* While the pool is fenced (caller holds mu): its running tasks are asked to stop and
 * those so asked freed uncommitted once they end; finished ones wait for the renewal
 * (or, when the pool stops, are left to the reaper too); then a short wait. True when the
 * dispatcher may exit (the pool stops and nothing is left). */
static bool hold_fenced(cw_shard *sh)
{
    cw_mutex_assert_held(&sh->mu);
    cwork_pool *p = sh->pool;
    bool stopping = atomic_load(&p->stopping) != 0;
    size_t dropped = cw_lease_drop_shard_tasks(sh, stopping); /* stopping: all to the reaper */
    if (stopping && sh->in_flight == 0) {
        cw_shard_no_more_tasks(sh);
        return true;
    }
    if (dropped && stopping) {
        cw_mutex_unlock(&sh->mu); /* pool->mu comes before a shard's */
        cw_pool_notify_idle(p);
        cw_mutex_lock(&sh->mu);
    }
    wait_until(sh, cw_monotonic_us() + 20000); /* the running ones end: look again */
    return false;
}

/* ---------------------------------------------------------------- the shared budget */

/* A sharded namespace's pool (caller holds mu): gives back the units of the shard's
 * finished jobs and of what its last fetch did not get, wakes the dispatchers held back
 * for them (mu released meanwhile), and returns how many jobs it may fetch now. */
static size_t budget_sync(cw_shard *sh, cw_budget_seat *seat)
{
    cw_mutex_assert_held(&sh->mu);
    bool wake = false;
    size_t taken = sh->in_flight - sh->done.len - sh->npending; /* ready or running */
    size_t room = cw_budget_sync(seat, taken, cw_monotonic_us(), &wake);
    if (wake) {
        cw_mutex_unlock(&sh->mu); /* waking locks their shards' mu */
        cw_budget_wake(seat);
        cw_mutex_lock(&sh->mu);
    }
    return room;
}

/* The dispatcher exits (caller holds mu): its seat gives everything back. */
static void budget_leave(cw_shard *sh, cw_budget_seat *seat)
{
    cw_mutex_assert_held(&sh->mu);
    bool wake = false;
    cw_budget_leave(seat, &wake);
    if (wake) {
        cw_mutex_unlock(&sh->mu);
        cw_budget_wake(seat);
        cw_mutex_lock(&sh->mu);
    }
}

void *cw_dispatcher_main(void *arg)
{
    cw_shard *sh = arg;
    cwork_pool *p = sh->pool;
    cw_block_sigpipe_thread();
    cw_conn *c = NULL;
    cw_cycle_call call;
    cw_cycle_call_init(&call, p->ntypes);
    /* The rate-limited types of a call (without memory, types are never limited). */
    size_t *limited = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *limited);
    /* A sharded namespace's inner pool: this dispatcher's seat in the shared budget. */
    cw_budget_seat *seat = p->seats ? &p->seats[sh->index] : NULL;

    cw_mutex_lock(&sh->mu);
    memset(&sh->state, 0, sizeof sh->state);
    for (;;) {
        /* A sharded namespace's pool: the units of what finished go back first. */
        size_t room = seat ? budget_sync(sh, seat) : 0;
        /* Before anything else, the lease (lease.c): after a freeze nothing is
         * committed or fetched until the jobs it held are stopped. */
        if (cw_lease_lost(p)) {
            if (hold_fenced(sh)) break;
            continue;
        }
        if (sh->lease_reclaim) { /* the lease was renewed: take up what is left */
            sh->lease_reclaim = false;
            reclaim(sh, &c);
            continue;
        }
        cw_dispatch_view v = shard_view(sh);
        v.budgeted = seat != NULL;
        v.budget = room;
        cw_decision d = cw_dispatch_decide(&sh->state, &v, &p->tuning);
        /* Held back by the budget: ask for units, unless some came back meanwhile. */
        if (d.budget_short && cw_budget_held_back(seat, v.now_us) && d.what != CW_DO_ROUND_TRIP)
            continue;
        if (d.what == CW_DO_ROUND_TRIP && d.fetch && seat) {
            d.fetch = cw_budget_reserve(seat, d.fetch, v.now_us);
            if (!d.fetch && !d.commit) continue; /* taken by others since the sync */
        }
        sh->refill_at = d.refill_at;
        if (d.announce_no_more) cw_shard_no_more_tasks(sh);
        if (d.wake) cw_shard_wake_executors(sh, d.wake);
        if (d.what == CW_DO_EXIT) break;
        switch (d.what) {
        case CW_DO_WAIT:
            wait_until(sh, d.until_us);
            break;
        case CW_DO_SPIN:
            spin_for_batch(sh, d.busy, d.until_us);
            break;
        case CW_DO_RECLAIM:
            reclaim(sh, &c);
            break;
        case CW_DO_GIVE_BACK:
            give_back(sh, &c);
            break;
        default:
            round_trip(sh, &c, &call, limited, d.fetch);
            break;
        }
    }
    if (seat) budget_leave(sh, seat);
    cw_mutex_unlock(&sh->mu);
    if (c) cw_redis_checkin(p->redis, c);
    cw_cycle_call_clear(&call);
    cw_free(limited);
    return NULL;
}
