/* A sharded enqueue whose shard's master does not answer (PROTOCOL §27.3, README
 * "Sharding"): without this, every call routed there waits its connect or command
 * timeout, so that a thread enqueueing over all the shards is held up for a whole
 * timeout at every job that lands on the failed one. After such a failure (Redis
 * unreachable, a connection broken or timed out; never an error reply, which a living
 * master gave), calls routed to that shard fail at once with a message naming the shard
 * and its node, for as long as the failed call took (at least CW_ENQ_BACKOFF_MIN_MS, at
 * most CW_ENQ_BACKOFF_MAX_MS); then one call tries the shard again while the others go
 * on failing at once, and its success ends the back-off. Calls routed to other shards
 * are not touched: each shard's enqueuer keeps its own state. Times are
 * cw_clock_mono_ms (the tests' manual clock). */
#include "enqueue.h"

#include "clock.h"

#include <stdio.h>
#include <string.h>

static unsigned shard_of(cwork_enqueuer *root, const cwork_enqueuer *to)
{
    for (unsigned i = 1; i < cw_enq_shards_count(root); i++)
        if (cw_enq_shard(root, i) == to) return i;
    return 0;
}

int cw_enq_backoff_check(cwork_enqueuer *root, cwork_enqueuer *to, cwork_error *err)
{
    int64_t until = atomic_load_explicit(&to->down_until_ms, memory_order_acquire);
    if (until == 0) return 0; /* the usual case: one atomic load */
    int64_t now = cw_clock_mono_ms();
    int64_t length = atomic_load_explicit(&to->down_ms, memory_order_relaxed);
    /* Over: the one call that moves the end on tries the shard; the others fail at once
     * until it has answered. */
    if (now >= until && atomic_compare_exchange_strong(&to->down_until_ms, &until, now + length))
        return 0;
    cw_mutex_lock(&to->mu);
    int rc = cw_error(err, CWORK_EREDIS,
                      "shard %u (%s) at %s: not tried, its last call failed (%s); calls routed "
                      "there fail at once for up to %lld ms after that, then one tries again",
                      shard_of(root, to), to->ns, to->down_node[0] ? to->down_node : "its node",
                      to->down_msg, (long long)length);
    cw_mutex_unlock(&to->mu);
    return rc;
}

void cw_enq_backoff_note(cwork_enqueuer *to, int rc, bool node_failed, const char *node,
                         int64_t took_ms, const cwork_error *e)
{
    if (rc == 0 || !node_failed) {
        /* answered: the shard is up (an error reply came from a living master) */
        if (atomic_load_explicit(&to->down_until_ms, memory_order_relaxed) != 0)
            atomic_store_explicit(&to->down_until_ms, 0, memory_order_release);
        return;
    }
    int64_t length = took_ms < CW_ENQ_BACKOFF_MIN_MS   ? CW_ENQ_BACKOFF_MIN_MS
                     : took_ms > CW_ENQ_BACKOFF_MAX_MS ? CW_ENQ_BACKOFF_MAX_MS
                                                       : took_ms;
    cw_mutex_lock(&to->mu);
    snprintf(to->down_msg, sizeof to->down_msg, "%s", e && e->message[0] ? e->message : "?");
    if (node && node[0]) snprintf(to->down_node, sizeof to->down_node, "%s", node);
    cw_mutex_unlock(&to->mu);
    atomic_store_explicit(&to->down_ms, length, memory_order_relaxed);
    atomic_store_explicit(&to->down_until_ms, cw_clock_mono_ms() + length, memory_order_release);
}
