#define _GNU_SOURCE /* pipe2 */
/* "Stop this job": the one way a running job is asked to end before its handler
 * returns, whatever the reason — an operator's cancel (PROTOCOL §21) today; a timeout or
 * a pool that lost its lease on the job later. It only asks:
 *   - the reason is recorded on the task (the first one wins), which the handler reads
 *     with cwork_job_stop_reason / cwork_job_cancelled, polling;
 *   - the task's stop fd (cwork_job_stop_fd, made on demand so that a job that never
 *     asks costs no pipe) becomes readable, for handlers that wait in poll(): `cwork
 *     work`'s handler waits on it and then sends SIGTERM to the command's whole process
 *     tree, and SIGKILL after the kill grace (cli/child.c).
 * What becomes of the job is the caller's decision, not this file's: a cancelled job is
 * committed to dead with err "cancelled" (commit.c, cycle.lua) whatever the handler
 * returns. In-process code cannot be stopped by force, so a handler that never looks
 * runs to its end. */
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static cw_task *task_of(const cwork_job *job)
{
    return job && job->run ? ((cw_run *)job->run)->task : NULL;
}

static void wake_fd(cw_task *t)
{
    if (t->stop_pipe[1] < 0) return;
    ssize_t w;
    do
        w = write(t->stop_pipe[1], "x", 1);
    while (w < 0 && errno == EINTR);
    /* (EAGAIN: a byte is there already, which is all a reader needs) */
}

bool cw_task_stop(cw_task *t, cwork_stop_reason reason)
{
    cw_task_assert_locked(t);
    int none = CWORK_STOP_NONE;
    if (!atomic_compare_exchange_strong(&t->stop_reason, &none, (int)reason)) return false;
    wake_fd(t);
    return true;
}

void cw_task_close_stop_fd(cw_task *t)
{
    cw_task_assert_locked(t);
    for (int i = 0; i < 2; i++) {
        if (t->stop_pipe[i] >= 0) close(t->stop_pipe[i]);
        t->stop_pipe[i] = -1;
    }
}

static bool holds(const cw_task *t, const char *id, size_t len)
{
    return t && t->job && t->job->id.len == len && memcmp(t->job->id.ptr, id, len) == 0;
}

static size_t stop_in(cw_task *list, const char *id, size_t len, cwork_stop_reason reason)
{
    size_t n = 0;
    for (cw_task *t = list; t; t = t->next)
        if (holds(t, id, len)) cw_task_stop(t, reason), n++;
    return n;
}

size_t cw_pool_stop_job(cwork_pool *p, const char *id, size_t len, cwork_stop_reason reason)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nshards; i++) {
        cw_shard *s = &p->shards[i];
        cw_mutex_lock(&s->mu);
        for (size_t e = s->first_executor; e < s->first_executor + s->nexecutors; e++)
            if (holds(p->executors[e].current, id, len))
                cw_task_stop(p->executors[e].current, reason), n++;
        n += stop_in(s->ready.head, id, len, reason);
        n += stop_in(s->done.head, id, len, reason);
        n += stop_in(s->pending, id, len, reason);
        cw_mutex_unlock(&s->mu);
    }
    return n;
}

/* ---------------------------------------------------------------- for handlers */

cwork_stop_reason cwork_job_stop_reason(const cwork_job *job)
{
    cw_task *t = task_of(job);
    return t ? (cwork_stop_reason)atomic_load(&t->stop_reason) : CWORK_STOP_NONE;
}

bool cwork_job_cancelled(const cwork_job *job)
{
    return cwork_job_stop_reason(job) == CWORK_STOP_CANCELLED;
}

int cwork_job_stop_fd(cwork_job *job)
{
    cw_task *t = task_of(job);
    if (!t) {
        errno = EINVAL;
        return -1;
    }
    cw_run *run = job->run;
    CW_ASSERT(run->worker < run->pool->opts.concurrency);
    cw_shard *s = run->pool->executors[run->worker].shard;
    cw_mutex_lock(&s->mu);
    int fd = t->stop_pipe[0], saved = 0;
    if (fd < 0) {
        if (pipe2(t->stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
            saved = errno;
            t->stop_pipe[0] = t->stop_pipe[1] = -1;
        } else {
            fd = t->stop_pipe[0];
            if (atomic_load(&t->stop_reason) != CWORK_STOP_NONE) wake_fd(t); /* asked before */
        }
    }
    cw_mutex_unlock(&s->mu);
    if (fd < 0) errno = saved;
    return fd;
}
