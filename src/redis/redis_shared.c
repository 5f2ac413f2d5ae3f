/* What every connection of a pool consults about the pool as a whole: the epoch that
 * retires connections to a master that moved (Sentinel), and the clock of warnings a
 * round trip could repeat. Apart from redis.c so that connections and the sentinel
 * watcher depend on these without depending on the pool that owns them. */
#include "redis_impl.h"

unsigned cw_redis_epoch(cwork_redis *r)
{
    cw_mutex_lock(&r->mu);
    unsigned e = r->epoch;
    cw_mutex_unlock(&r->mu);
    return e;
}

void cw_redis_next_epoch(cwork_redis *r)
{
    cw_mutex_lock(&r->mu);
    r->epoch++;
    cw_mutex_unlock(&r->mu);
}

int cw_redis_warn_due(cwork_redis *r)
{
    if (!r) return 1;
    int64_t now = cw_monotonic_ms();
    cw_mutex_lock(&r->mu);
    int due = r->warned_ms == 0 || now - r->warned_ms >= 1000;
    if (due) r->warned_ms = now ? now : 1;
    cw_mutex_unlock(&r->mu);
    return due;
}
