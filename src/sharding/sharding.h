/* A sharded namespace (PROTOCOL §27): one namespace spread over S complete Go-compatible
 * namespaces ("shards"), each with a hash tag of its own so that Redis Cluster places
 * them on different slots, and so on different masters.
 *
 *   - Shard 0 is the namespace as given; shard i ≥ 1 is "{<base>.<i>}", where base is
 *     the namespace without the braces of a whole-name hash tag ("app" and "{app}" both
 *     give "{app.1}", "{app.2}", …). A namespace of one shard is therefore exactly
 *     today's namespace, and growing it keeps its data where it is.
 *   - Which shard a job goes to is a pure function of a routing key (the job id, the
 *     unique guard key, or the job name, PROTOCOL §27.2): jump consistent hashing of the
 *     key's 64-bit FNV-1a, so that growing S moves as few keys as any scheme can.
 *   - How many shards there are is recorded in the hash <ns>:cwork:shards (shard 0's
 *     slot); processes that declare a count are refused when it differs, and processes
 *     that declare none follow it.
 *
 * Thread-safety: every function is pure or uses only its arguments. */
#ifndef CWORK_SHARDING_H
#define CWORK_SHARDING_H

#include "redis.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most shards a namespace may have (a slot each; far more than masters anyone runs). */
#define CW_SHARDING_MAX 1024

/* 0 when ns can be sharded: a plain name (no '{' or '}', no ':' at the end) or one whole
 * hash tag "{name}" around such a name; else CWORK_EINVAL naming what is wrong. */
int cw_sharding_check_ns(const char *ns, cwork_error *err);

/* Writes shard i's namespace of ns into out (size bytes). 0, or CWORK_EINVAL when ns
 * cannot be sharded or out is too small. */
int cw_sharding_ns(const char *ns, unsigned i, char *out, size_t size, cwork_error *err);

/* The 64-bit FNV-1a hash of len bytes. Pure. */
uint64_t cw_sharding_hash(const void *key, size_t len);

/* Jump consistent hash: the shard (0 ≤ result < shards) of a key hashed to h. shards ≥ 1.
 * Going from S to S+1 shards moves exactly the keys that land on the new shard. Pure. */
unsigned cw_sharding_pick(uint64_t h, unsigned shards);

/* The shard of a routing key (cw_sharding_pick of its cw_sharding_hash). */
unsigned cw_sharding_of(const char *key, size_t len, unsigned shards);

/* The shard record <ns>:cwork:shards (PROTOCOL §27.1), read and, when declared is not 0
 * and no record exists, written (count, hash function, time). *count receives the
 * namespace's shard count: the record's, or 1 when there is none and declared is 0.
 * CWORK_EINVAL when declared differs from the record (the message names the key and
 * both counts) or the record is damaged (a field that is not a count in range, a key
 * of another type); CWORK_EREDIS on a Redis error. r must serve ns (cw_redis_use_
 * namespace). Thread-safe as r. */
int cw_sharding_record_sync(cwork_redis *r, const char *ns, unsigned declared, unsigned *count,
                            cwork_error *err);

/* How long a forwarding marker lives (PROTOCOL §27.5): more than the 5 s within which
 * every enqueuer reads a grown record, with room for a slow one. A grow is not finished
 * before this long after it started either. */
#define CW_SHARDING_FORWARD_TTL 15

/* A forwarding marker, the guard a grow leaves in a unique key's old shard (§27.5), is a
 * hash whose field `cwork` holds this: a real guard is a string ("1" or a job's JSON),
 * and enqueue_unique.lua takes any key there for a guard but re-arms only strings, so
 * an enqueuer still on the old count is refused by a marker and leaves it to expire. */
#define CW_SHARDING_FORWARD_MARK "forwarded"

/* What the record says (PROTOCOL §27.1, §27.5). */
typedef struct cw_sharding_state {
    unsigned count; /* the shards (1 without a record) */
    unsigned homes; /* the count names (pinned types, periodic jobs) route by: the
                       record's `homes`, else count */
    unsigned from;  /* a grow in progress: the count before it; 0 when none */
    int64_t grown;  /* when the last grow started (Unix s; 0: never grown) */
} cw_sharding_state;

/* cw_sharding_record_sync with the whole record into *st. When follow is true a record
 * grown past the declared count is followed instead of refused (a running process,
 * §27.5); at start (follow false) such a record is refused with a message that names
 * the count it was grown to. */
int cw_sharding_record_state(cwork_redis *r, const char *ns, unsigned declared, bool follow,
                             cw_sharding_state *st, cwork_error *err);

/* The shard a name (a pinned type, a periodic job) lives in: by homes. */
unsigned cw_sharding_home(const cw_sharding_state *st, const char *name, size_t len);

#endif
