/* Internal parts of the enqueuer shared with the batch enqueue. */
#ifndef CWORK_ENQUEUE_H
#define CWORK_ENQUEUE_H

#include "batch_info.h"
#include "keys.h"
#include "mutex.h"
#include "redis.h"

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

struct cwork_enqueuer {
    cwork_redis *redis;
    cw_keys keys;
    /* Setters may run while other threads enqueue: each enqueue reads them once. */
    _Atomic size_t max_job_bytes;
    _Atomic cwork_go_flavor flavor; /* what unique enqueues write */
    _Atomic cwork_go_json go_json;  /* the spelling of the guard keys they write */
    cw_mutex mu;                    /* guards known */
    known_entry *known[KNOWN_BUCKETS];
};

/* True when name must be (re)sent with SADD <p>known_jobs. */
int cw_enq_known_needs_sadd(cwork_enqueuer *enq, const char *name, int64_t now);
/* Records a successful SADD of name at now. */
void cw_enq_known_mark(cwork_enqueuer *enq, const char *name, int64_t now);

/* 0, or CWORK_EINVAL with a message when |seconds| > CWORK_MAX_DELAY_SECONDS. */
int cw_enq_check_delay(int64_t seconds, cwork_error *err);

/* Builds and encodes a new job (fresh id, t = now) into out; checks the name and the
 * size limit. id receives the job id. */
int cw_enq_encode_job(cwork_enqueuer *enq, const char *name, const cwork_args *args, int unique,
                      int64_t now, cw_buf *out, char id[25], cwork_error *err);

/* The same for a member of tracked batch batch_id (its `cwork_batch` field, §23). */
int cw_enq_encode_member(cwork_enqueuer *enq, const char *name, const cwork_args *args,
                         const char *batch_id, int64_t now, cw_buf *out, char id[25],
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

/* Builds a unique job (fresh id, t = now, "unique":true) keyed by key, or by args when
 * key is NULL: appends its guard key(s) and then its JSON to out. The JSON carries
 * unique_key under the upstream flavour and for every ByKey job (key non-NULL), as
 * upstream writes it; the fork's plain unique job has none. */
int cw_enq_encode_unique(cwork_enqueuer *enq, const char *name, const cwork_args *args,
                         const cwork_args *key, int64_t now, cw_buf *out, enq_unique *u,
                         char id[25], cwork_error *err);

#endif
