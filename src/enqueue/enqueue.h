/* Internal parts of the enqueuer shared with the batch enqueue. */
#ifndef CWORK_ENQUEUE_H
#define CWORK_ENQUEUE_H

#include "batch_info.h"
#include "keys.h"
#include "mutex.h"
#include "redis.h"
#include "sharding.h"

#include <pthread.h>
#include <stdatomic.h>

/* known_jobs cache (PROTOCOL §4.1): name → expiry, per enqueuer. */
typedef struct known_entry {
    struct known_entry *next;
    int64_t expiry;
    char name[];
} known_entry;

#define KNOWN_BUCKETS 64
#define KNOWN_JOBS_TTL 300 /* seconds a cached registration is trusted */

/* How often an enqueuer reads its namespace's shard record again (PROTOCOL §27): a
 * namespace sharded (or a type pinned) while it runs is followed within this time. */
#define ENQ_SHARDS_REFRESH_MS 5000

/* The namespace's shards as an enqueuer last read them (PROTOCOL §27). */
typedef struct enq_shards {
    cw_mutex mu;             /* guards the fields below; held across a refresh's reads */
    _Atomic unsigned count;  /* the shards the last read found (1 until one finds more) */
    _Atomic int64_t next_ms; /* cw_clock_mono_ms() from which the next enqueue reads the
                                record again (INT64_MIN: never read yet) */
    unsigned declared;       /* cwork_enqueuer_set_shards' count; 0: follow the record */
    /* The enqueuers of shards 1..count-1 (shard 0 is the enqueuer itself), made when a
     * read first finds them and kept until cwork_enqueuer_free, so that a pointer taken
     * under mu stays valid after it. CW_SHARDING_MAX slots, allocated with the first. */
    cwork_enqueuer **sub;
    unsigned homes; /* the count names route by (the record's homes, §27.5) */
    unsigned from;  /* a grow in progress: the count before it (0: none) */
    int64_t grown;  /* when it started (the record's grown, Unix s) */
    char **pinned;  /* the names of <p>cwork:shard_pinned: routed by name */
    size_t npinned;
    int warned; /* the record could not be read (an ACL): said once */
} enq_shards;

struct cwork_enqueuer {
    cwork_redis *redis;
    cw_keys keys;
    char *ns;                 /* as given to cwork_enqueuer_new */
    cwork_enqueuer *root;     /* whose settings it follows: itself, or (a shard's
                                 enqueuer) the enqueuer that made it */
    cwork_redis *owned_redis; /* a shard's enqueuer: its clone of the root's redis */
    enq_shards shards;        /* unused in a shard's enqueuer */
    /* Setters may run while other threads enqueue: each enqueue reads them once. A
     * shard's enqueuer reads its root's. */
    _Atomic size_t max_job_bytes;
    _Atomic cwork_go_flavor flavor; /* what unique enqueues write */
    _Atomic cwork_go_json go_json;  /* the spelling of the guard keys they write */
    cw_mutex mu;                    /* guards known, down_msg and down_node */
    known_entry *known[KNOWN_BUCKETS];
    /* A shard's enqueuer (shard 0's is the root) whose node failed (shard_backoff.c):
     * until down_until_ms (cw_clock_mono_ms; 0: up), calls routed to it fail at once. */
    _Atomic int64_t down_until_ms;
    _Atomic int64_t down_ms; /* the back-off's length */
    char down_msg[256];      /* the failure's message */
    char down_node[96];      /* the node that failed ("host:port"), or "" */
};

/* A shard's back-off after its node failed (shard_backoff.c, PROTOCOL §27.3): as long as
 * the failed call took, within these bounds. */
#define CW_ENQ_BACKOFF_MIN_MS 1000
#define CW_ENQ_BACKOFF_MAX_MS 30000

/* 0 when a call may go to shard enqueuer `to` of root's sharded namespace; CWORK_EREDIS
 * (naming the shard, its node and the failure) while it backs off. Thread-safe. */
int cw_enq_backoff_check(cwork_enqueuer *root, cwork_enqueuer *to, cwork_error *err);
/* After a call to `to` that returned rc: node_failed when the node did not answer (no
 * connection, or one broken by an I/O error or timeout, not redirected); node is its
 * "host:port" when known (may be NULL), took_ms how long the call took (real time), e
 * the error. A success or an answer ends a back-off. Thread-safe. */
void cw_enq_backoff_note(cwork_enqueuer *to, int rc, bool node_failed, const char *node,
                         int64_t took_ms, const cwork_error *e);

/* True when name must be (re)sent with SADD <p>known_jobs. */
int cw_enq_known_needs_sadd(cwork_enqueuer *enq, const char *name, int64_t now);
/* Records a successful SADD of name at now. */
void cw_enq_known_mark(cwork_enqueuer *enq, const char *name, int64_t now);

/* 0, or CWORK_EINVAL with a message when |seconds| > CWORK_MAX_DELAY_SECONDS. */
int cw_enq_check_delay(int64_t seconds, cwork_error *err);

/* A fresh job id into id (24 hex characters): made before the job is encoded, since a
 * sharded namespace routes the job by it. 0 or CWORK_EINVAL (no OS randomness). */
int cw_enq_new_id(char id[25], cwork_error *err);

/* Encodes a new job (id from cw_enq_new_id, t = now) into out; checks the name and the
 * size limit. */
int cw_enq_encode_job(cwork_enqueuer *enq, const char *name, const cwork_args *args, int unique,
                      int64_t now, cw_buf *out, const char *id, cwork_error *err);

/* The same for a member of tracked batch batch_id (its `cwork_batch` field, §23). */
int cw_enq_encode_member(cwork_enqueuer *enq, const char *name, const cwork_args *args,
                         const char *batch_id, int64_t now, cw_buf *out, const char *id,
                         cwork_error *err);

/* Where cw_enq_encode_unique put a unique job's parts in its buffer, and what its guard
 * takes (the enqueue_unique script's ARGV[4] and ARGV[5]). */
typedef struct enq_unique {
    size_t guard_off, guard_len; /* the guard key */
    size_t alt_len;              /* right after it: the key in the other escape
                                    spelling, or 0 when there is one spelling */
    size_t json_off, json_len;   /* the job */
    const char *guard_value;     /* "1", or "" for the job JSON (ByKey) */
    const char *rearm;           /* "1": a duplicate re-arms the guard; "" it doesn't */
} enq_unique;

/* Builds a unique job (id given, t = now, "unique":true) keyed by key, or by args when
 * key is NULL: appends its guard key(s) and then its JSON to out. The JSON carries
 * unique_key under the upstream flavour and for every ByKey job (key non-NULL), as
 * upstream writes it; the fork's plain unique job has none. */
int cw_enq_encode_unique(cwork_enqueuer *enq, const char *name, const cwork_args *args,
                         const cwork_args *key, int64_t now, cw_buf *out, enq_unique *u,
                         const char *id, cwork_error *err);

/* ---------------------------------------------------------------- shards (enqueue_shards.c) */

/* Sets up / frees enq->shards (the enqueuer's own fields are set by then). */
void cw_enq_shards_init(cwork_enqueuer *enq);
void cw_enq_shards_clear(cwork_enqueuer *enq);

/* Reads the shard record and the pinned set when the last read is ENQ_SHARDS_REFRESH_MS
 * old or there was none (cheap otherwise: a clock reading). 0, or the error of the read
 * (CWORK_EINVAL for a damaged record or a count other than the declared one, naming
 * the key; CWORK_EREDIS...): the enqueue that asked then writes nothing. */
int cw_enq_shards_refresh(cwork_enqueuer *enq, cwork_error *err);

/* The shard count the last read found (1 before any, and in a shard's enqueuer). */
unsigned cw_enq_shards_count(cwork_enqueuer *enq);

/* The enqueuer of the shard a job goes to (PROTOCOL §27.2): by name when name is in
 * the pinned set (name may be NULL: never), else by the routing key [key, key + len).
 * enq itself for shard 0 or an unsharded namespace. *shard (may be NULL) receives the
 * shard's number. The enqueuer returned lives as long as enq. */
cwork_enqueuer *cw_enq_shard_for(cwork_enqueuer *enq, const char *name, const char *key, size_t len,
                                 unsigned *shard);

/* During a grow (PROTOCOL §27.5): the enqueuer of the shard the unique routing key
 * [key, key + len) had before the grow, when that differs from its shard now (and name
 * is not pinned: names keep their shard); else NULL. *shard (may be NULL) receives
 * the old shard's number, *mark_ttl (may be NULL) the seconds a forwarding marker
 * written now lives: until CW_SHARDING_FORWARD_TTL after the grow started, 0 after. */
cwork_enqueuer *cw_enq_grow_old(cwork_enqueuer *enq, const char *name, const char *key, size_t len,
                                unsigned *shard, int64_t *mark_ttl);

/* Runs shards_forward.lua in old (cw_enq_grow_old's) on the guard keys [guard, +glen)
 * and [alt, +alen) spelled with old's prefix: *dup true when a guard is there (the job
 * is a duplicate; the guard re-armed to [value, +vlen) when rearm), else false (a
 * forwarding marker of mark_ttl s stands in old when mark_ttl > 0; the enqueue goes to
 * the new shard). 0 or the Redis error. */
int cw_enq_forward(cwork_enqueuer *old, const char *guard, size_t glen, const char *alt,
                   size_t alen, int64_t mark_ttl, const char *value, size_t vlen, bool rearm,
                   bool *dup, cwork_error *err);

/* cw_enq_forward for a unique job (key: ByKey's, or NULL) with its guard keys and
 * re-arm spelled as old's enqueue would write them (rearm false: never re-armed). */
int cw_enq_forward_unique(cwork_enqueuer *old, const char *name, const cwork_args *args,
                          const cwork_args *key, const char *id, int64_t mark_ttl, bool rearm,
                          bool *dup, cwork_error *err);

/* The enqueuer of tracked batch id's shard: by its id, but during a grow, when the id's
 * shard moved and the batch exists in the old one (it was opened before), the old
 * one (§27.5). *shard (may be NULL) receives its number. */
int cw_enq_batch_shard(cwork_enqueuer *enq, const char *id, cwork_enqueuer **to, unsigned *shard,
                       cwork_error *err);

/* One try of an operation on tracked batch (ctx) in shard i's enqueuer: 0 or an error
 * when the batch is there, CWORK_ENOTFOUND when it is not. */
typedef int (*cw_enq_batch_try)(cwork_enqueuer *shard, unsigned i, void *ctx, cwork_error *err);

/* After a miss in the shard `tried` (where id routes now, or its old shard during a
 * grow): try_in on each other shard id routed to at a lower count, newest first
 * (PROTOCOL §27.5), until one answers other than CWORK_ENOTFOUND, whose answer is
 * returned. When every one misses: CWORK_ENOTFOUND with err as it was (the first miss's
 * message, which names the key by today's count). Nothing is tried in an unsharded
 * namespace. */
int cw_enq_batch_elsewhere(cwork_enqueuer *enq, const char *id, const cwork_enqueuer *tried,
                           cw_enq_batch_try try_in, void *ctx, cwork_error *err);

/* A cw_enq_batch_try (ctx: the batch id) that only asks EXISTS <p_i>cwork:batch:<id>. */
int cw_enq_batch_exists_in(cwork_enqueuer *shard, unsigned i, void *ctx, cwork_error *err);

/* Whether name is in the pinned set the last read found (never in an unsharded
 * namespace). */
bool cw_enq_is_pinned(cwork_enqueuer *enq, const char *name);

/* The enqueuer of shard i (< cw_enq_shards_count at some point): enq for 0. */
cwork_enqueuer *cw_enq_shard(cwork_enqueuer *enq, unsigned i);

/* Appends a unique job's routing key to out: "<name>:<JSON of by>" (by = the key map
 * for ByKey, else the args), the guard key's text after "<p>unique:" without its
 * newline, in cwork's (Go 1.22) spelling whatever the enqueuer's go_json, so that
 * every process routes a guard alike. 0 or CWORK_EJSON. */
int cw_enq_unique_route(const char *name, const cwork_args *by, cw_buf *out, cwork_error *err);

#endif
