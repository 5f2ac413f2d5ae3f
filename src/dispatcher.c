/* The dispatcher: one thread and one connection per shard of the pool. Each round trip
 * is one cycle script call that commits the jobs its executors finished and fetches up
 * to k new ones (k = free executors, each chosen by its own sampler draw).
 * When nothing is fetched it backs off (1, 10, 100 ms … up to a cap); a wake-up from a
 * cwork enqueuer or a finished job ends the wait early. */
#include "log.h"
#include "pool.h"
#include "scripts.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#define MAX_FETCH 1000         /* jobs per fetch script call */
#define COMMIT_BACKOFF_MAX_MS 5000
#define GATHER_MAX_MS 1        /* longest wait for more free executors under load */
#define SPIN_MAX_US 100        /* longest spin for a batch of short handlers */
#define SPIN_HANDLER_US 20     /* handlers shorter than this on average: spin for them */

/* Appends one cycle script call: the commit of the done tasks (commit args, may be
 * empty) and a fetch of k jobs, each draw the sampler's order of type indices packed as
 * one or two bytes per index into a single argument. */
static int append_cycle(cw_shard *sh, cw_conn *c, size_t k, const cw_commit_args *ca,
                        cw_buf *draws, cwork_error *err)
{
    cwork_pool *p = sh->pool;
    size_t nkeys = 6 * p->ntypes + 2, nargs = 4 + (ca->n ? ca->n : 1);
    const char **argv = cw_malloc((nkeys + nargs) * sizeof *argv);
    size_t *lens = cw_malloc((nkeys + nargs) * sizeof *lens);
    cw_buf retry, dead;
    cw_buf_init(&retry);
    cw_buf_init(&dead);
    cw_key_retry(&p->keys, &retry);
    cw_key_dead(&p->keys, &dead);
    int rc = 0;
    if (!argv || !lens || retry.oom || dead.oom) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }
    int width = p->ntypes <= 255 ? 1 : 2;
    /* Grouped by kind (cycle.lua's KEYS): paused, lock, max_concurrency, queue,
     * in-progress, lock_info — the first three kinds are read with one MGET over a
     * slice of KEYS. */
    static const int kinds[6] = {2, 3, 5, 0, 1, 4};
    size_t a = 0;
    for (int j = 0; j < 6; j++)
        for (size_t i = 0; i < p->ntypes; i++)
            argv[a] = p->types[i].keys[kinds[j]], lens[a++] = p->types[i].key_lens[kinds[j]];
    argv[a] = retry.data, lens[a++] = retry.len;
    argv[a] = dead.data, lens[a++] = dead.len;
    cw_buf_reset(draws);
    cw_buf_putc(draws, '\0'); /* keeps data non-NULL for k = 0 */
    draws->len = 0;
    for (size_t d = 0; d < k; d++) {
        cw_sampler_draw(&sh->sampler);
        for (size_t i = 0; i < p->ntypes; i++) {
            size_t t = sh->sampler.order[i] + 1;
            if (width == 2)
                cw_buf_putc(draws, (char)(unsigned char)(t >> 8));
            cw_buf_putc(draws, (char)(unsigned char)(t & 0xff));
        }
    }
    if (draws->oom) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }
    argv[a] = p->id, lens[a++] = 24;
    argv[a] = p->single_fetch ? "1" : "0", lens[a++] = 1;
    argv[a] = draws->data, lens[a++] = draws->len;
    argv[a] = width == 2 ? "2" : "1", lens[a++] = 1;
    if (ca->n) {
        for (size_t i = 0; i < ca->n; i++)
            argv[a] = ca->argv[i], lens[a++] = ca->lens[i];
    } else {
        argv[a] = "", lens[a++] = 0; /* no groups: nothing to commit */
    }
    rc = cw_conn_append_eval(c, &cw_script_cycle, (int)nkeys, (int)(a - nkeys), argv, lens,
                             err);
done:
    cw_free(argv);
    cw_free(lens);
    cw_buf_free(&retry);
    cw_buf_free(&dead);
    return rc;
}

static cw_task *new_task(cw_job_type *type, const char *bytes, size_t len)
{
    cw_task *t = cw_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->type = type;
    t->raw = cw_strndup(bytes, len);
    if (!t->raw) {
        cw_free(t);
        return NULL;
    }
    t->raw_len = len;
    cwork_error derr = {0};
    if (job_decode(bytes, len, &t->job, &derr) != 0) {
        t->job = NULL;
        memcpy(t->decode_error, derr.message, sizeof t->decode_error); /* same size */
        t->failed = 1; /* straight to dead; the executor skips it */
    }
    return t;
}

/* The cycle script's writes that failed on a key someone damaged (type index, error
 * text pairs): the script went on without them and lost no job (see cycle.lua). A
 * damaged key stays damaged until someone repairs it, and every round trip meets it
 * again: logged at most once a second per pool. */
static void log_cycle_errors(cwork_pool *p, redisReply **e, size_t n)
{
    long long now = cw_monotonic_us() / 1000, last = atomic_load(&p->cycle_error_log_ms);
    if (last && now - last < 1000)
        return;
    if (!atomic_compare_exchange_strong(&p->cycle_error_log_ms, &last, now ? now : 1))
        return; /* another shard logs them */
    for (size_t j = 0; j + 1 < n; j += 2) {
        if (e[j]->type != REDIS_REPLY_INTEGER || e[j]->integer < 1 ||
            (size_t)e[j]->integer > p->ntypes || e[j + 1]->type != REDIS_REPLY_STRING)
            continue;
        cw_log(CWORK_LOG_WARN, "worker.cycle", "job_name", p->types[e[j]->integer - 1].name,
               "error", e[j + 1]->str, NULL);
    }
}

/* Reads the cycle reply: the commit's count, then the fetched jobs as tasks. A job whose
 * task cannot be allocated stays in in-progress; *incomplete is then set, so that a
 * later reclaim takes it up (our heartbeat keeps reapers away). */
static int read_cycle(cwork_pool *p, cw_conn *c, cw_task_queue *out, int *incomplete,
                      cwork_error *err)
{
    redisReply *r = NULL;
    int rc = cw_conn_read(c, &r, err);
    if (rc)
        return rc;
    if (r->type == REDIS_REPLY_ERROR) {
        rc = cw_error(err, CWORK_EREDIS, "redis: cycle: %s", r->str);
    } else if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
               r->element[0]->type != REDIS_REPLY_INTEGER) {
        rc = cw_error(err, CWORK_EPROTO, "cycle script answered an unexpected reply");
    } else {
        /* Flat: type index, count, that many job bytes; again for the next type. */
        size_t i = 1;
        while (i < r->elements) {
            redisReply *ti = r->element[i], *count = i + 1 < r->elements ? r->element[i + 1] : NULL;
            if (ti->type == REDIS_REPLY_INTEGER && ti->integer == 0 && count &&
                count->type == REDIS_REPLY_INTEGER && count->integer >= 0 &&
                (size_t)count->integer <= r->elements - i - 2) {
                log_cycle_errors(p, r->element + i + 2, (size_t)count->integer);
                i += 2 + (size_t)count->integer;
                continue;
            }
            if (ti->type != REDIS_REPLY_INTEGER || ti->integer < 1 ||
                (size_t)ti->integer > p->ntypes || !count ||
                count->type != REDIS_REPLY_INTEGER || count->integer < 0 ||
                (size_t)count->integer > r->elements - i - 2) {
                rc = cw_error(err, CWORK_EPROTO, "cycle script answered an unexpected reply");
                break;
            }
            cw_job_type *type = &p->types[ti->integer - 1];
            size_t end = i + 2 + (size_t)count->integer;
            for (i += 2; i < end; i++) {
                redisReply *b = r->element[i];
                if (b->type != REDIS_REPLY_STRING)
                    continue;
                cw_task *t = new_task(type, b->str, b->len);
                if (!t) {
                    cw_log(CWORK_LOG_ERROR, "worker.fetch", "error",
                           "out of memory: job left in progress until a reclaim", NULL);
                    *incomplete = 1;
                    continue;
                }
                cw_tq_push(out, t);
            }
        }
    }
    freeReplyObject(r);
    return rc;
}

/* Unique jobs release their guard before their handler runs (SPEC §4.7 step 2). */
static void delete_unique_keys(cwork_pool *p, cw_conn *c, const cw_task_queue *q)
{
    cw_buf keys;
    cw_buf_init(&keys);
    size_t n = 0;
    for (cw_task *t = q->head; t; t = t->next) {
        if (!t->job || !t->job->unique)
            continue;
        size_t off = keys.len;
        if (cw_key_unique(&p->keys, &keys, t->job->name.ptr, t->job->args, NULL) != 0) {
            keys.len = off;
            cw_log(CWORK_LOG_ERROR, "worker.delete_unique_job.key", "error",
                   "cannot encode the args", "job_id", t->job->id.ptr, NULL);
            continue;
        }
        cw_buf_putc(&keys, '\0'); /* separator; keys may not contain NUL themselves */
        n++;
    }
    if (n == 0 || keys.oom) {
        cw_buf_free(&keys);
        return;
    }
    const char **argv = cw_malloc((n + 1) * sizeof *argv);
    size_t *lens = cw_malloc((n + 1) * sizeof *lens);
    if (argv && lens) {
        argv[0] = "DEL", lens[0] = 3;
        const char *k = keys.data;
        for (size_t i = 1; i <= n; i++) {
            argv[i] = k;
            lens[i] = strlen(k);
            k += lens[i] + 1;
        }
        cwork_error err = {0};
        redisReply *r = cw_conn_command(c, (int)n + 1, argv, lens, &err);
        if (!r)
            cw_log(CWORK_LOG_ERROR, "worker.delete_unique_job.del", "error", err.message, NULL);
        else
            freeReplyObject(r);
    }
    cw_free(argv);
    cw_free(lens);
    cw_buf_free(&keys);
}

static void count_committed(cwork_pool *p, cw_task *list)
{
    for (cw_task *t = list; t; t = t->next) {
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
}

/* Marks in used[] the first unused known task whose bytes equal b; 1 when found. */
static int claim_known(const char *b, size_t len, cw_task **known, size_t nknown,
                       unsigned char *used)
{
    for (size_t i = 0; i < nknown; i++)
        if (!used[i] && known[i]->raw_len == len && memcmp(known[i]->raw, b, len) == 0)
            return used[i] = 1;
    return 0;
}

/* Every task of every shard: ready, running, done, taken for commit (caller holds mu).
 * Returns how many were stored (at most cap). */
static size_t collect_known(cwork_pool *p, cw_task **known, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < p->nshards; i++) {
        cw_shard *sh = &p->shards[i];
        for (cw_task *t = sh->ready.head; t && k < cap; t = t->next)
            known[k++] = t;
        for (cw_task *t = sh->done.head; t && k < cap; t = t->next)
            known[k++] = t;
        for (cw_task *t = sh->pending; t && k < cap; t = t->next)
            known[k++] = t;
    }
    for (size_t e = 0; e < p->opts.concurrency && k < cap; e++)
        if (p->executors[e].current)
            known[k++] = p->executors[e].current;
    return k;
}

/* After a fetch whose reply was lost (Redis died after running the script), jobs may
 * sit in the pool's in-progress lists with their locks taken but unknown to us; our
 * heartbeat keeps reapers away, so nobody else would ever give them back. Every
 * in-progress entry that no task of any shard accounts for is taken up as fetched.
 * Runs under the exclusive round-trip lock: no other shard is in a round trip, between
 * a fetch and delivering its jobs, or freeing committed tasks — so every job we hold is
 * in the lists collected here, and none of them is freed while we compare. */
static int reclaim_inprogress(cw_shard *sh, cw_conn *c, cw_task_queue *out, int *incomplete,
                              cwork_error *err)
{
    cwork_pool *p = sh->pool;
    redisReply **replies = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *replies);
    if (!replies)
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < p->ntypes && rc == 0; i++) {
        const char *argv[] = {"LRANGE", p->types[i].keys[1], "0", "-1"};
        size_t lens[] = {6, p->types[i].key_lens[1], 1, 2};
        rc = cw_conn_append(c, 4, argv, lens, err);
    }
    for (size_t i = 0; i < p->ntypes && rc == 0; i++)
        rc = cw_conn_read(c, &replies[i], err);
    pthread_mutex_lock(&p->mu);
    size_t cap = cw_pool_in_flight(p);
    cw_task **known = cw_calloc(cap ? cap : 1, sizeof *known);
    size_t nknown = known ? collect_known(p, known, cap) : 0;
    pthread_mutex_unlock(&p->mu);
    unsigned char *used = cw_calloc(nknown ? nknown : 1, 1);
    if (rc == 0 && (!known || !used))
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < p->ntypes; i++) {
        redisReply *r = replies[i];
        if (!r || r->type != REDIS_REPLY_ARRAY) {
            *incomplete = 1; /* an error reply: look again next time */
            continue;
        }
        /* Oldest last: walk from the right so that order is kept. */
        for (size_t j = r->elements; j-- > 0;) {
            redisReply *b = r->element[j];
            if (b->type != REDIS_REPLY_STRING || claim_known(b->str, b->len, known, nknown, used))
                continue;
            cw_task *t = new_task(&p->types[i], b->str, b->len);
            if (t)
                cw_tq_push(out, t);
            else
                *incomplete = 1;
        }
    }
    for (size_t i = 0; replies && i < p->ntypes; i++)
        if (replies[i])
            freeReplyObject(replies[i]);
    cw_free(replies);
    cw_free(known);
    cw_free(used);
    if (out->len) {
        char n[24];
        snprintf(n, sizeof n, "%zu", out->len);
        cw_log(CWORK_LOG_WARN, "worker.reclaim", "jobs", n, NULL);
    }
    return rc;
}

/* Hands fetched tasks to the executors (caller holds mu). */
static void deliver(cw_shard *sh, cw_task_queue *fetched)
{
    cwork_pool *p = sh->pool;
    atomic_fetch_add(&p->n_fetched, fetched->len);
    sh->in_flight += fetched->len;
    for (cw_task *t = fetched->head; t;) {
        cw_task *next = t->next;
        /* An undecodable job goes straight to its commit (to dead). */
        cw_tq_push(t->job ? &sh->ready : &sh->done, t);
        t = next;
    }
    fetched->head = fetched->tail = NULL;
    fetched->len = 0;
    cw_pool_wake_executors(sh, 0);
}

/* Waits for the busy tasks of a batch of short handlers without sleeping (caller holds
 * mu, which is released meanwhile): a sleeping dispatcher costs a futex wake-up in the
 * executor and a scheduler wake-up before the next round trip, several times the
 * batch's own run time on a virtual machine. Yields the CPU between looks and gives up
 * after the batch's expected time (at most SPIN_MAX_US); the caller then looks at the
 * queues again under mu and sleeps as usual. */
static void spin_for_batch(cw_shard *sh, size_t busy)
{
    cwork_pool *p = sh->pool;
    /* Waking the executor takes tens of microseconds on a virtual machine, more than the
     * batch itself: expect it. */
    int64_t budget = 60 + 2 * (int64_t)(sh->ready.len + 1) * sh->handler_avg_us;
    if (budget > SPIN_MAX_US)
        budget = SPIN_MAX_US;
    /* done_seq moves under mu: read with the done queue, it counts what is still due. */
    size_t start = atomic_load_explicit(&sh->done_seq, memory_order_acquire);
    busy = busy > sh->done.len ? busy - sh->done.len : 0;
    if (busy == 0)
        return;
    pthread_mutex_unlock(&p->mu);
    int64_t end = cw_monotonic_us() + budget;
    for (unsigned i = 1; atomic_load_explicit(&sh->done_seq, memory_order_acquire) - start < busy;
         i++) {
        if ((i & 15) == 0 && cw_monotonic_us() >= end)
            break;
        sched_yield(); /* two cores: let the executor (or Redis) have this one */
    }
    pthread_mutex_lock(&p->mu);
}

void *cw_dispatcher_main(void *arg)
{
    cw_shard *sh = arg;
    cwork_pool *p = sh->pool;
    cw_block_sigpipe_thread();
    cw_conn *c = NULL;
    int64_t idle_ms = 0;         /* current idle backoff */
    int64_t commit_wait_ms = 0;  /* backoff while commits fail */
    int64_t fetch_error_ms = 0;  /* backoff while fetches fail */
    int reclaim = 0;             /* a fetch's outcome is unknown: look at in-progress */
    struct timespec sleep_until = {0, 0};
    int sleeping = 0;
    int gathered = 0;            /* waited once for finishers since the last round trip */
    int spun = 0;                /* spun once for finishers since the last round trip */
    cw_buf draws;
    cw_buf_init(&draws);
    cwork_error err = {0};

    pthread_mutex_lock(&p->mu);
    for (;;) {
        /* Take what the executors finished. */
        for (cw_task *t = cw_tq_take_all(&sh->done); t;) {
            cw_task *next = t->next;
            t->next = sh->pending;
            sh->pending = t;
            sh->npending++;
            t = next;
        }
        if (p->stopping && !reclaim && !sh->no_more_tasks) {
            /* No round trip is in flight here: nothing new can reach the executors. */
            sh->no_more_tasks = 1;
            pthread_cond_broadcast(&sh->work_cond);
        }
        if (p->stopping && sh->in_flight == 0 && !reclaim)
            break;
        if (sh->wakeup) {
            sh->wakeup = 0;
            if (!sh->commit_failing && fetch_error_ms == 0) {
                sleeping = 0;
                idle_ms = 0;
            }
        }
        size_t busy = sh->in_flight - sh->npending;
        size_t freen = sh->nexecutors > busy ? sh->nexecutors - busy : 0;
        int can_fetch = !p->stopping && freen > 0 && p->ntypes > 0;
        if (sleeping) {
            /* Idle or failing: wait out the backoff, but commit finished jobs at once
             * unless commits themselves are what is failing. */
            if (!sh->npending || sh->commit_failing) {
                sh->dispatcher_waiting = 1;
                int w = pthread_cond_timedwait(&sh->disp_cond, &p->mu, &sleep_until);
                sh->dispatcher_waiting = 0;
                if (w == ETIMEDOUT)
                    sleeping = 0;
                continue;
            }
            can_fetch = 0;
        }
        /* Under load, gather: while jobs fetched last time still wait for an executor,
         * a fetch now would be small (each script call has a fixed cost in Redis that
         * dwarfs its per-job cost); wait up to GATHER_MAX_MS for the batch to drain.
         * An idle or lightly loaded pool never waits here (nothing sits in ready). */
        if (can_fetch && sh->ready.len > 0 && !gathered) {
            struct timespec g;
            cw_deadline_after_ms(&g, GATHER_MAX_MS);
            sh->dispatcher_waiting = 1;
            pthread_cond_timedwait(&sh->disp_cond, &p->mu, &g);
            sh->dispatcher_waiting = 0;
            gathered = sh->ready.len > 0; /* timed out: go ahead with what there is */
            if (gathered) /* tasks still wait: the handlers are slower than estimated */
                cw_pool_wake_executors(sh, 1);
            continue;
        }
        gathered = 0;
        if (sh->npending || can_fetch || reclaim)
            spun = 0;
        if (!sh->npending && !can_fetch && !reclaim) {
            if (!spun && busy > 0 && sh->handler_avg_us < SPIN_HANDLER_US && !p->stopping) {
                /* Look again under mu afterwards: an executor that finished while we
                 * spun did not signal (we were not waiting). */
                spun = 1;
                spin_for_batch(sh, busy);
                continue;
            }
            sh->dispatcher_waiting = 1;
            pthread_cond_wait(&sh->disp_cond, &p->mu);
            sh->dispatcher_waiting = 0;
            continue;
        }
        cw_task *pending = sh->pending; /* the list is stable while we commit it: only
                                           this thread changes it, under mu */
        size_t npending = sh->npending;
        pthread_mutex_unlock(&p->mu);

        size_t k = can_fetch && !reclaim ? (freen < MAX_FETCH ? freen : MAX_FETCH) : 0;
        cw_task_queue fetched = {0};
        int rc = c ? 0 : cw_redis_checkout(p->redis, &c, &err);
        if (rc == 0 && reclaim) {
            pthread_rwlock_wrlock(&p->fetch_lock);
            int incomplete = 0;
            rc = reclaim_inprogress(sh, c, &fetched, &incomplete, &err);
            if (rc == 0 && !incomplete)
                reclaim = 0;
            if (fetched.len && c && !c->broken)
                delete_unique_keys(p, c, &fetched); /* as for any fetched unique job */
            pthread_mutex_lock(&p->mu);
            if (fetched.len)
                deliver(sh, &fetched);
            pthread_mutex_unlock(&p->mu);
            pthread_rwlock_unlock(&p->fetch_lock);
            if (rc == 0) {
                pthread_mutex_lock(&p->mu);
                continue;
            }
        }
        /* One script call commits the done tasks and fetches k new jobs. Until its reply
         * is read, what it moved is unknown (reclaim). The round-trip lock is held shared
         * until fetched jobs are delivered and committed tasks freed, so that another
         * shard's reclaim (exclusive) sees every task and none is freed under it. */
        int locked = rc == 0;
        if (locked)
            pthread_rwlock_rdlock(&p->fetch_lock);
        cw_commit_args ca;
        memset(&ca, 0, sizeof ca);
        if (rc == 0 && npending)
            rc = cw_commit_prepare(p, pending, &ca, &err);
        if (rc == 0) {
            rc = append_cycle(sh, c, k, &ca, &draws, &err);
            if (rc == 0 && k)
                reclaim = 1;
        }
        cw_commit_args_free(&ca);
        if (rc == 0) {
            int incomplete = 0;
            rc = read_cycle(p, c, &fetched, &incomplete, &err);
            /* Only a clean reply tells what moved: a script that failed midway (Redis
             * keeps what it wrote) may have moved jobs it could not return. */
            if (rc == 0 && !incomplete)
                reclaim = 0;
        }
        if (rc && npending)
            cw_log(CWORK_LOG_WARN, "worker.remove_job_from_in_progress.lrem", "error",
                   err.message, NULL);
        if (rc && k)
            cw_log(CWORK_LOG_ERROR, "worker.fetch", "error", err.message, NULL);
        if (c && (c->broken || c->pending)) {
            c->broken = 1;
            cw_redis_checkin(p->redis, c);
            c = NULL;
        }
        if (fetched.len && c)
            delete_unique_keys(p, c, &fetched);

        size_t got = fetched.len;
        pthread_mutex_lock(&p->mu);
        if (got)
            deliver(sh, &fetched);
        if (npending && rc == 0) {
            count_committed(p, pending);
            sh->in_flight -= npending;
            sh->pending = NULL; /* only this thread adds to it, and not meanwhile */
            sh->npending = 0;
            while (pending) {
                cw_task *next = pending->next;
                cw_task_free(pending);
                pending = next;
            }
            commit_wait_ms = 0;
            sh->commit_failing = 0;
            pthread_cond_broadcast(&p->idle_cond);
        }
        if (locked)
            pthread_rwlock_unlock(&p->fetch_lock);
        if (rc && (npending || !k)) {
            /* Commits (or a reclaim) are retried with capped backoff; nothing new is
             * fetched meanwhile. */
            sh->commit_failing = npending > 0;
            commit_wait_ms = commit_wait_ms ? commit_wait_ms * 10 : 10;
            if (commit_wait_ms > COMMIT_BACKOFF_MAX_MS)
                commit_wait_ms = COMMIT_BACKOFF_MAX_MS;
            cw_deadline_after_ms(&sleep_until, commit_wait_ms);
            sleeping = 1;
            continue;
        }
        if (rc == 0 && got) {
            idle_ms = 0;
            fetch_error_ms = 0;
        } else if (k || reclaim) {
            if (rc) {
                fetch_error_ms = fetch_error_ms ? fetch_error_ms * 2 : 10;
                if (fetch_error_ms > 1000)
                    fetch_error_ms = 1000;
                idle_ms = fetch_error_ms;
            } else {
                fetch_error_ms = 0;
                idle_ms = idle_ms ? idle_ms * 10 : 1;
                if (idle_ms > p->opts.idle_backoff_max_ms)
                    idle_ms = p->opts.idle_backoff_max_ms;
            }
            cw_deadline_after_ms(&sleep_until, idle_ms);
            sleeping = 1;
        }
    }
    pthread_mutex_unlock(&p->mu);
    if (c)
        cw_redis_checkin(p->redis, c);
    cw_buf_free(&draws);
    return NULL;
}
