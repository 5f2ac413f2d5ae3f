/* A running pool on a sharded namespace follows a grow (PROTOCOL §27.5): its follower
 * thread reads the shard record every CW_NSSHARD_FOLLOW_MS and, when the count went up,
 * makes an inner pool for each new shard, as the pool's start made the others (its
 * namespace, a clone of the Redis handle, the registrations, a seat in the
 * shared executor budget), and starts it. The existing inner pools go on unchanged: jobs already in
 * the old shards stay there and are served as before; names (pinned types, periodic
 * jobs) keep their shard by the record's homes, so no registration moves. */
#include "pool_nsshards.h"

#include "log.h"
#include "sharding.h"

#include <errno.h>
#include <string.h>

int cw_nsshards_grow(cwork_pool *p, cw_nsshards *s, unsigned count, cwork_error *err)
{
    if (count > CW_SHARDING_MAX) count = CW_SHARDING_MAX;
    for (unsigned i = s->count; i < count; i++) {
        int rc = cw_nsshards_inner_make(p, s, i, count, err);
        cwork_error e = {0};
        if (rc == 0 && (rc = cwork_pool_start(s->pools[i], &e)) != 0)
            cw_error(err, rc, "shard %s: %s", s->pools[i]->ns, e.message);
        if (rc) {
            /* Not counted: freed here, made again by the next read. */
            cwork_pool_free(s->pools[i]);
            s->pools[i] = NULL;
            if (i > 0) cwork_redis_free(s->redis[i]);
            s->redis[i] = NULL;
            return rc;
        }
        s->count = i + 1; /* published after pools[i] (an atomic store) */
        cw_log(CWORK_LOG_INFO, "pool.shards", "event", "grown", "namespace", s->pools[i]->ns, NULL);
    }
    return 0;
}

/* One read of the record; grows when it says more shards than the pool serves; every
 * CW_NSSHARD_GO_EVERY reads also looks for Go pools running a pinned type away from
 * its home (pool_nsshards_go.c). */
static void follow_once(cwork_pool *p, cw_nsshards *s)
{
    cw_sharding_state st;
    cwork_error err = {0};
    int rc = cw_sharding_record_state(p->redis, p->ns, 0, true, &st, &err);
    if (rc == 0 && st.count > s->count) rc = cw_nsshards_grow(p, s, st.count, &err);
    if (rc) /* the next read tries again */
        cw_log(CWORK_LOG_WARN, "pool.shards", "error", err.message, "namespace", p->ns, NULL);
    if (++s->follow_reads % CW_NSSHARD_GO_EVERY == 0) cw_nsshards_warn_go_pools(p, s);
}

static void *follower_main(void *arg)
{
    cw_nsshards *s = arg;
    cwork_pool *p = s->follower_pool;
    for (;;) {
        cw_mutex_lock(&s->mu);
        struct timespec at;
        cw_deadline_after_ms(&at, CW_NSSHARD_FOLLOW_MS);
        while (!s->follower_stop && cw_cond_timedwait(&s->cond, &s->mu, &at) != ETIMEDOUT) {
        }
        bool stop = s->follower_stop;
        cw_mutex_unlock(&s->mu);
        if (stop) return NULL;
        follow_once(p, s);
    }
}

int cw_nsshards_follower_start(cwork_pool *p, cw_nsshards *s, cwork_error *err)
{
    if (s->follower_started) return 0;
    cw_mutex_lock(&s->mu);
    s->follower_stop = false;
    cw_mutex_unlock(&s->mu);
    s->follower_pool = p;
    int rc = cw_thread_create(&s->follower, follower_main, s);
    if (rc) return cw_error(err, CWORK_ENOMEM, "cannot start a thread: %s", strerror(rc));
    s->follower_started = true;
    return 0;
}

void cw_nsshards_follower_stop(cw_nsshards *s)
{
    if (!s->follower_started) return;
    cw_mutex_lock(&s->mu);
    s->follower_stop = true;
    pthread_cond_broadcast(&s->cond);
    cw_mutex_unlock(&s->mu);
    pthread_join(s->follower, NULL);
    s->follower_started = false;
}
