/* A pool on a sharded namespace (PROTOCOL §27.4): what pool_nsshards.c and
 * pool_nsshards_move.c share. A "namespace shard" here is one of the S namespaces of
 * PROTOCOL §27 — never the dispatcher groups (cw_shard) of pool.h.
 *
 * The pool the caller holds runs no thread of its own on such a namespace: it owns one
 * complete inner pool per namespace shard (dispatchers, executors, heartbeat, reaper,
 * requeuers, subscriber and maintenance each), so that one shard's Redis failing or
 * slow stalls only that shard's threads. Inner pool 0 serves the namespace itself with
 * the caller's Redis handle and the outer pool's id; inner pool i ≥ 1 serves "{base.i}"
 * with a clone of it. At most N jobs (the pool's concurrency) run over all of them: the
 * shared budget (pool_nsshards_budget.h) gives each inner pool's dispatchers what they
 * fetch, and each inner pool has up to N executors (cw_nsshards_executors).
 *
 * Pinned types (a max_concurrency or a rate limit: both are kept in one namespace's
 * keys) run only in their home shard, cw_sharding_of(name); the mover thread carries
 * jobs of theirs found in other shards' queues home. */
#ifndef CWORK_POOL_NSSHARDS_H
#define CWORK_POOL_NSSHARDS_H

#include "pool.h"
#include "pool_nsshards_budget.h"

/* How often the mover looks at the other shards' queues of the pinned types. */
#define CW_NSSHARD_MOVE_MS 200
/* The most jobs it carries of one type from one shard in a pass (then the next pair). */
#define CW_NSSHARD_MOVE_BATCH 1000

typedef struct cw_nsshard_pin {
    const char *name; /* the outer pool's type name (borrowed) */
    unsigned home;    /* cw_sharding_of(name) */
} cw_nsshard_pin;

typedef struct cw_nsshards {
    /* The inner pools made so far: grows while the pool runs when the record does
     * (pool_nsshards_grow.c, §27.5); pools[i] and redis[i] are set before count
     * passes i, so that a reader of count finds them. */
    _Atomic unsigned count;
    unsigned homes;     /* the count names (pins, periodic jobs) route by (§27.5) */
    cwork_pool **pools; /* [CW_SHARDING_MAX], each with nsshard_member set */
    cwork_redis *
        *redis; /* [CW_SHARDING_MAX]: [0] is the outer pool's (borrowed), the rest clones */
    cw_nsshard_pin *pins;       /* the pinned types, in registration order */
    cw_nsshards_budget *budget; /* the N executors' worth, shared by every inner pool */
    size_t npins;
    /* The mover thread (only with pinned types): stop is guarded by mu. */
    pthread_t mover;
    bool mover_started;
    cw_mutex mu;
    pthread_cond_t cond; /* CLOCK_MONOTONIC */
    bool stop;
    /* The follower (pool_nsshards_grow.c): reads the record, makes and starts the
     * inner pools of shards a grow added. */
    pthread_t follower;
    bool follower_started;
    bool follower_stop;        /* guarded by mu */
    cwork_pool *follower_pool; /* the outer pool */
    unsigned follow_reads;     /* the follower's reads so far (every 5th looks at Go pools) */
    _Atomic unsigned go_looks; /* how many looks at Go pools are done (tests wait on it) */
    /* The Go pools warned about (pool_nsshards_go.c) as "<pool id>:<type>:<shard>";
     * only the follower thread touches them. */
    char **go_warned;
    size_t ngo_warned;
} cw_nsshards;

/* How often a running pool reads the shard record to follow a grow (§27.5). */
#define CW_NSSHARD_FOLLOW_MS 1000

/* pool_nsshards.c: makes inner pool i (its namespace, Redis clone, share of the
 * executors, registrations); s->count is not changed. */
int cw_nsshards_inner_make(cwork_pool *p, cw_nsshards *s, unsigned i, unsigned count,
                           cwork_error *err);

/* pool_nsshards_grow.c: makes and starts inner pools [s->count, count) of a running
 * pool and raises s->count; 0 or the first error (the shards made stay: the next read
 * retries the rest). */
int cw_nsshards_grow(cwork_pool *p, cw_nsshards *s, unsigned count, cwork_error *err);
/* Starts / stops and joins the follower thread (stop: no-op when not running). */
int cw_nsshards_follower_start(cwork_pool *p, cw_nsshards *s, cwork_error *err);
void cw_nsshards_follower_stop(cw_nsshards *s);

/* pool_nsshards_go.c: warns (once per Go pool, type and shard) about Go pools whose
 * heartbeat in shard i lists a name of <p>cwork:shard_pinned whose home is another
 * shard (PROTOCOL §27.4). Best effort: a Redis error skips the look. Follower only. */
void cw_nsshards_warn_go_pools(cwork_pool *p, cw_nsshards *s);
/* Frees the list of warnings given. */
void cw_nsshards_go_free(cw_nsshards *s);
/* Every how many of the follower's reads it looks for such Go pools. */
#define CW_NSSHARD_GO_EVERY 5

/* pool_nsshards_move.c: starts the mover (when there are pinned types); 0 or
 * CWORK_ENOMEM. */
int cw_nsshards_mover_start(cw_nsshards *s, cwork_error *err);
/* Stops and joins it (no-op when not running). */
void cw_nsshards_mover_stop(cw_nsshards *s);
/* One pass: every pinned type's jobs in every other shard's queue (and what a crash left
 * in <p_i>cwork:moving:<name>) carried home. Returns how many jobs it carried; stops at
 * the first Redis error of a pair (logged) and goes on with the next. */
size_t cw_nsshards_move_pass(cw_nsshards *s);

/* How many jobs of pinned types wait outside their home shard (in queues and moving
 * lists), into *n: a drain is not over while there are any. 0 or a Redis error. */
int cw_nsshards_strays(cw_nsshards *s, int64_t *n, cwork_error *err);

#endif
