/* Executor threads: take a fetched task, run middleware and handler with a fresh
 * per-job context, record the outcome, hand the task back to the dispatcher. They never
 * talk to Redis; what a handler publishes (check-ins) goes through the observer. */
#include "log.h"
#include "pool.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct cwork_next {
    cwork_pool *pool;
    size_t index; /* next middleware to run; == nmiddleware: the handler */
    cwork_handler handler;
    cwork_job *job;
    void *ctx;
};

int cwork_next_call(cwork_next *next)
{
    if (next->index >= next->pool->nmiddleware) return next->handler(next->job, next->ctx);
    cwork_next rest = *next;
    rest.index++;
    return next->pool->middleware[next->index](next->job, next->ctx, &rest);
}

/* ---------------------------------------------------------------- for handlers */

static cw_task *task_of(const cwork_job *job)
{
    return job && job->run ? ((cw_run *)job->run)->task : NULL;
}

int cwork_job_fail(cwork_job *job, const char *fmt, ...)
{
    cw_task *t = task_of(job);
    if (!t) return CWORK_EINVAL; /* no job being run by a pool */
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = fmt ? vsnprintf(msg, sizeof msg, fmt, ap) : 0;
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof msg) {
        /* Cut on a character boundary: a half UTF-8 sequence would become U+FFFD. */
        size_t end = sizeof msg - 1, lead = end;
        while (lead > 0 && ((unsigned char)msg[lead - 1] & 0xc0) == 0x80)
            lead--;
        if (lead > 0) {
            unsigned char c = (unsigned char)msg[lead - 1];
            size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
            if (lead - 1 + need > end)
                end = lead - 1; /* the last character is incomplete: drop it */
        }
        msg[end] = '\0';
    } else {
        msg[n] = '\0';
    }
    char *copy = cw_strdup(msg);
    if (copy) {
        cw_free(t->fail_message);
        t->fail_message = copy;
    }
    t->failed = 1;
    return CWORK_EJOBFAILED;
}

void cwork_job_checkin(cwork_job *job, const char *message)
{
    cw_run *run = job ? job->run : NULL;
    if (run && run->pool->observer)
        cw_observer_checkin(run->pool->observer, run->worker, job->id.ptr, message ? message : "",
                            cw_now());
}

int64_t cwork_job_timeout_at_ms(const cwork_job *job)
{
    cw_run *run = job ? job->run : NULL;
    return run ? run->deadline_ms : 0;
}

void *cwork_job_userdata(const cwork_job *job)
{
    cw_run *run = job ? job->run : NULL;
    return run ? run->pool->opts.userdata : NULL;
}

/* ---------------------------------------------------------------- running a task */

static void set_failure(cw_task *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_failure(cw_task *t, const char *fmt, ...)
{
    t->failed = 1;
    if (t->fail_message) return; /* the handler's own message wins */
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    t->fail_message = cw_strdup(msg);
}

/* Runs the chain for a task whose start (started_ms, run) was set under the pool lock,
 * so that the maintenance thread can read them while the handler runs. */
static void run_task(cw_executor *ex, cw_task *t, cw_job_type *handler_type)
{
    cwork_pool *p = ex->pool;
    cwork_job *job = t->job;
    if (!handler_type) {
        /* A job whose name has no handler here (its name differs from its queue's). */
        set_failure(t, "stray job: no handler");
        cw_log(CWORK_LOG_ERROR, "process_job.stray", "error", "stray job: no handler", "job_name",
               job->name.ptr, "job_id", job->id.ptr, NULL);
        return;
    }
    job->run = &t->run;
    if (p->watchdog) /* picked up, whatever the handler then does (PROTOCOL §10.4) */
        cw_watchdog_picked(p->watchdog, job->name.ptr, job->t);
    if (p->observer) cw_observer_started(p->observer, ex->index, job, t->started_ms / 1000);

    void *ctx = NULL;
    int rc = 0;
    if (p->opts.context_size) {
        ctx = cw_calloc(1, p->opts.context_size);
        if (!ctx) rc = -1, set_failure(t, "out of memory for the job's context");
    }
    int initialised = 0;
    if (rc == 0 && p->opts.context_init) {
        rc = p->opts.context_init(ctx, p->opts.userdata);
        if (rc)
            set_failure(t, "context init failed (%d)", rc);
        else
            initialised = 1;
    } else if (rc == 0) {
        initialised = 1;
    }
    if (rc == 0 && atomic_load(&t->stop_reason) != CWORK_STOP_NONE) {
        /* Asked to stop before it started (cancelled while it waited for an executor):
         * not run; its fate is the asker's (commit.c). */
        rc = -1, set_failure(t, "stopped before it started");
    }
    if (rc == 0) {
        cwork_next chain = {p, 0, handler_type->handler, job, ctx};
        rc = cwork_next_call(&chain);
        if (rc != 0) set_failure(t, "handler returned %d", rc);
    }
    if (initialised && p->opts.context_free) p->opts.context_free(ctx, p->opts.userdata);
    cw_free(ctx);
    job->run = NULL;
    if (p->observer) cw_observer_done(p->observer, ex->index);
}

static void log_overrun(const cw_task *t, int64_t end_ms)
{
    char took[32];
    snprintf(took, sizeof took, "%lld", (long long)(end_ms - t->started_ms));
    cw_log(CWORK_LOG_WARN, "job.overrun", "job_name", t->job->name.ptr, "job_id", t->job->id.ptr,
           "took_ms", took, NULL);
}

void cw_shard_wake_executors(cw_shard *s, size_t n)
{
    cw_mutex_assert_held(&s->mu);
    for (; n > 0 && s->sleepers; n--) {
        cw_executor *ex = s->sleepers;
        CW_ASSERT(s->nsleeping > 0 && !ex->woken);
        s->sleepers = ex->next_sleeper;
        s->nsleeping--;
        ex->woken = true;
        pthread_cond_signal(&ex->cond);
    }
}

void cw_shard_no_more_tasks(cw_shard *s)
{
    cw_mutex_assert_held(&s->mu);
    s->no_more_tasks = true;
    cw_shard_wake_executors(s, s->nsleeping);
}

/* Sleeps until a dispatcher wakes this executor (caller holds the shard's mu). */
static void sleep_until_woken(cw_executor *ex)
{
    cw_shard *s = ex->shard;
    cw_mutex_assert_held(&s->mu);
    ex->woken = false;
    ex->next_sleeper = s->sleepers;
    s->sleepers = ex;
    s->nsleeping++;
    while (!ex->woken)
        cw_cond_wait(&ex->cond, &s->mu);
}

void *cw_executor_main(void *arg)
{
    cw_executor *ex = arg;
    cwork_pool *p = ex->pool;
    cw_shard *s = ex->shard;
    cw_block_sigpipe_thread();
    cw_mutex_lock(&s->mu);
    for (;;) {
        /* A fetch in flight when stop began can still deliver tasks: executors leave
         * only once their dispatcher says nothing more will come. */
        while (!s->ready.head && !s->no_more_tasks)
            sleep_until_woken(ex);
        if (!s->ready.head) break;
        cw_task *t = cw_tq_pop(&s->ready);
        /* The hand-off: this executor is free, and no other has taken the task. */
        CW_ASSERT(ex->current == NULL && t->run.pool == NULL && t->job != NULL);
        cw_job_type *type = cw_pool_find_type(p, t->job->name.ptr, t->job->name.len);
        t->started_ms = cw_now_ms();
        t->run.pool = p;
        t->run.worker = ex->index;
        t->run.task = t;
        t->run.deadline_ms =
            type && type->opts.timeout_ms > 0 ? t->started_ms + type->opts.timeout_ms : 0;
        int64_t start_us = cw_monotonic_us();
        ex->current = t;
        ex->current_since_us = start_us;
        cw_mutex_unlock(&s->mu);

        run_task(ex, t, type);

        int64_t end = cw_now_ms();
        int64_t took_us = cw_monotonic_us() - start_us;
        t->handler_type = type;
        t->took_us = took_us;
        cw_mutex_lock(&s->mu);
        /* The first sample seeds the average (from 0 it would say "short" for long). */
        if (atomic_load_explicit(&s->done_seq, memory_order_relaxed) == 0)
            s->handler_avg_us = took_us;
        else
            s->handler_avg_us += (took_us - s->handler_avg_us) / 8;
        int overrun = t->run.deadline_ms && end > t->run.deadline_ms && !t->overrun_logged;
        t->overrun_logged |= overrun;
        CW_ASSERT(ex->current == t);
        ex->current = NULL;
        cw_task_close_stop_fd(t);
        if (overrun) {
            cw_mutex_unlock(&s->mu);
            log_overrun(t, end);
            cw_mutex_lock(&s->mu);
        }
        cw_tq_push(&s->done, t);
        atomic_fetch_add_explicit(&s->done_seq, 1, memory_order_release);
        /* Signals cost a futex call and a context switch each: wake the dispatcher only
         * when it sleeps and the batch is drained, or the jobs fetched ahead run short
         * (refill_at; it gathers until then, and wakes by itself for ready tasks that
         * wait too long). */
        if (s->dispatcher_waiting && s->ready.len <= s->refill_at)
            pthread_cond_signal(&s->disp_cond);
    }
    cw_mutex_unlock(&s->mu);
    return NULL;
}
