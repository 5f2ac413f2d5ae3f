/* The pool's subscriber: one connection SUBSCRIBEd to
 *   - the namespace's wake-up channel (PROTOCOL §14.1; unless no_wakeups): cwork
 *     enqueuers PUBLISH a job's name there in the same round trip as the push, so that
 *     an idle pool starts a cwork-enqueued job within a fraction of a millisecond
 *     instead of at its next poll (jobs enqueued by Go are found by polling);
 *   - the pool's own cancel channel (PROTOCOL §21): the cancel script PUBLISHes the id
 *     of a running job an operator cancelled, and the pool asks that job to stop
 *     (job_stop.c). Its subscription is also how the script tells a cwork pool from a
 *     Go one (PUBLISH answers how many listened). A message missed while the connection
 *     was down is made up for at each (re)subscription: the pool looks its jobs up in
 *     the hash of cancelled jobs. */
#include "log.h"
#include "pool.h"

#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int is_stopping(cwork_pool *p)
{
    return atomic_load(&p->stopping);
}

/* A published message: wake the dispatcher for a job name this pool runs, or stop a
 * cancelled job. */
static void on_message(cwork_pool *p, const cw_buf *cancel_channel, redisReply *r)
{
    /* {"message", channel, payload} */
    const char *channel, *payload;
    size_t clen, len, n = 0;
    if (cw_reply_array(r, 3, &n, NULL, NULL) == 0 && n == 3 &&
        cw_reply_at_str(r, 1, &channel, &clen, NULL, NULL) == 0 &&
        cw_reply_at_str(r, 2, &payload, &len, NULL, NULL) == 0) {
        if (clen == cancel_channel->len && memcmp(channel, cancel_channel->data, clen) == 0) {
            size_t found = cw_pool_stop_job(p, payload, len, CWORK_STOP_CANCELLED);
            char id[64];
            snprintf(id, sizeof id, "%.*s", (int)(len < 63 ? len : 63), payload);
            cw_log(CWORK_LOG_INFO, "pool.cancel", "job_id", id, "found", found ? "yes" : "no",
                   NULL);
        } else if (cw_pool_find_type(p, payload, len)) {
            cw_pool_wake_dispatchers(p);
        }
    }
    cw_reply_free(r);
}

/* The ids of every job the pool holds (running, waiting for an executor, finished and not
 * committed), appended to ids. */
static void collect_ids(cwork_pool *p, cw_argv *ids)
{
    for (size_t i = 0; i < p->nshards; i++) {
        cw_shard *s = &p->shards[i];
        cw_mutex_lock(&s->mu);
        cw_task *lists[3] = {s->ready.head, s->done.head, s->pending};
        for (size_t e = s->first_executor; e < s->first_executor + s->nexecutors; e++) {
            cw_task *t = p->executors[e].current;
            if (t && t->job) cw_argv_add(ids, t->job->id.ptr, t->job->id.len);
        }
        for (int l = 0; l < 3; l++)
            for (cw_task *t = lists[l]; t; t = t->next)
                if (t->job) cw_argv_add(ids, t->job->id.ptr, t->job->id.len);
        cw_mutex_unlock(&s->mu);
    }
}

/* After a (re)subscription: cancels published while the pool was not listening are
 * found in the hash of cancelled jobs. One HMGET of the jobs the pool holds, on its own
 * connection; nothing when it holds none. */
static void catch_up_cancels(cwork_pool *p)
{
    cw_argv a = {0};
    cw_buf key;
    cw_buf_init(&key);
    cw_key_cancelled(&p->keys, &key);
    cw_argv_add_str(&a, "HMGET");
    cw_argv_add_buf(&a, &key);
    cw_buf_free(&key);
    collect_ids(p, &a);
    cw_conn *c = NULL;
    redisReply *r = NULL;
    cwork_error err = {0};
    if (a.n > 2 && cw_argv_check(&a, &err) == 0 && cw_redis_checkout(p->redis, &c, &err) == 0) {
        if (cw_conn_command(c, (int)a.n, a.argv, a.lens, &r, &err) == 0) {
            size_t n = 0;
            cw_reply_array(r, 0, &n, NULL, NULL);
            for (size_t i = 0; i < n && i + 2 < a.n; i++) {
                const char *at;
                if (cw_reply_at_str(r, i, &at, NULL, NULL, NULL) == 0)
                    cw_pool_stop_job(p, a.argv[i + 2], a.lens[i + 2], CWORK_STOP_CANCELLED);
            }
            cw_reply_free(r);
        }
        cw_redis_checkin(p->redis, c);
    }
    cw_argv_free(&a);
}

/* Subscribes to the channels and serves their messages until the pool stops. A
 * subscribed connection cannot go back to the pool's idle list: it is always checked in
 * as broken (closed). */
void *cw_subscriber_main(void *arg)
{
    cwork_pool *p = arg;
    cw_block_sigpipe_thread();
    cw_buf wakeup, cancel;
    cw_buf_init(&wakeup);
    cw_buf_init(&cancel);
    cw_key_wakeup_channel(&p->keys, &wakeup);
    cw_key_cancel_channel(&p->keys, &cancel, p->id);
    int both = !p->opts.no_wakeups;
    int backoff_ms = 0;
    while (!is_stopping(p) && !wakeup.oom && !cancel.oom) {
        cw_conn *c = NULL;
        cwork_error err = {0};
        const char *sub[] = {"SUBSCRIBE", cancel.data, wakeup.data};
        size_t lens[] = {9, cancel.len, wakeup.len};
        redisReply *confirm = NULL;
        /* The append is only written by the first read: read the confirmations first. */
        int ok = cw_redis_checkout(p->redis, &c, &err) == 0 &&
                 cw_conn_append(c, both ? 3 : 2, sub, lens, &err) == 0;
        for (int i = 0; ok && i < (both ? 2 : 1); i++) {
            ok = cw_conn_read(c, &confirm, &err) == 0;
            cw_reply_free(confirm);
            confirm = NULL;
            if (ok) c->pending = 1; /* a subscribed connection always has replies coming */
        }
        if (ok) {
            backoff_ms = 0;
            catch_up_cancels(p);
            while (!is_stopping(p) && !c->broken) {
                struct pollfd pfd = {cw_conn_fd(c), POLLIN, 0};
                int n = poll(&pfd, 1, 100);
                if (n <= 0) continue;
                redisReply *r = NULL;
                if (cw_conn_read(c, &r, &err) != 0) break;
                c->pending = 1;
                on_message(p, &cancel, r);
                /* More replies may be buffered than poll() can see. */
                redisReply *more = NULL;
                while (cw_conn_read_buffered(c, &more, NULL) == 0 && more) {
                    on_message(p, &cancel, more);
                    more = NULL;
                }
            }
        }
        if (c) {
            c->broken = 1;
            cw_redis_checkin(p->redis, c);
        }
        if (is_stopping(p)) break;
        backoff_ms = backoff_ms ? (backoff_ms * 2 > 1000 ? 1000 : backoff_ms * 2) : 50;
        struct timespec ts = {0, backoff_ms * 1000000L};
        nanosleep(&ts, NULL);
    }
    cw_buf_free(&wakeup);
    cw_buf_free(&cancel);
    return NULL;
}
