/* The wake-up subscriber: cwork enqueuers PUBLISH a job's name on the namespace's
 * wake-up channel in the same round trip as the push, so that an idle pool starts a
 * cwork-enqueued job within a fraction of a millisecond instead of at its next poll
 * (jobs enqueued by Go are found by polling). */
#include "pool.h"

#include <poll.h>
#include <time.h>

static int is_stopping(cwork_pool *p)
{
    return atomic_load(&p->stopping);
}

/* A published job name: wake the dispatcher if this pool runs that type. */
static void on_message(cwork_pool *p, redisReply *r)
{
    /* {"message", channel, payload} */
    const char *name;
    size_t len, n = 0;
    if (cw_reply_array(r, 3, &n, NULL, NULL) == 0 && n == 3 &&
        cw_reply_at_str(r, 2, &name, &len, NULL, NULL) == 0 && cw_pool_find_type(p, name, len))
        cw_pool_wake_dispatchers(p);
    cw_reply_free(r);
}

/* Subscribes to the namespace's wake-up channel and wakes the dispatcher when a job of
 * a registered type was pushed. A subscribed connection cannot go back to the pool's
 * idle list: it is always checked in as broken (closed). */
void *cw_subscriber_main(void *arg)
{
    cwork_pool *p = arg;
    cw_block_sigpipe_thread();
    cw_buf channel;
    cw_buf_init(&channel);
    cw_key_wakeup_channel(&p->keys, &channel);
    int backoff_ms = 0;
    while (!is_stopping(p) && !channel.oom) {
        cw_conn *c = NULL;
        cwork_error err = {0};
        const char *sub[] = {"SUBSCRIBE", channel.data};
        size_t lens[] = {9, channel.len};
        redisReply *confirm = NULL;
        /* The append is only written by the first read: read the confirmation first. */
        if (cw_redis_checkout(p->redis, &c, &err) == 0 &&
            cw_conn_append(c, 2, sub, lens, &err) == 0 && cw_conn_read(c, &confirm, &err) == 0) {
            cw_reply_free(confirm);
            c->pending = 1; /* a subscribed connection always has replies coming */
            backoff_ms = 0;
            while (!is_stopping(p) && !c->broken) {
                struct pollfd pfd = {cw_conn_fd(c), POLLIN, 0};
                int n = poll(&pfd, 1, 100);
                if (n <= 0) continue;
                redisReply *r = NULL;
                if (cw_conn_read(c, &r, &err) != 0) break;
                c->pending = 1;
                on_message(p, r);
                /* More replies may be buffered than poll() can see. */
                redisReply *more = NULL;
                while (cw_conn_read_buffered(c, &more, NULL) == 0 && more) {
                    on_message(p, more);
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
    cw_buf_free(&channel);
    return NULL;
}
