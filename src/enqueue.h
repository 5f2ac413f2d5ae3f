/* Internal parts of the enqueuer shared with the batch enqueue. */
#ifndef CWORK_ENQUEUE_H
#define CWORK_ENQUEUE_H

#include "keys.h"
#include "redis.h"

#include <pthread.h>

/* known_jobs cache (SPEC §3.1): name → expiry, per enqueuer. */
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
    size_t max_job_bytes;
    pthread_mutex_t mu; /* guards known */
    known_entry *known[KNOWN_BUCKETS];
};

/* True when name must be (re)sent with SADD <p>known_jobs. */
int enq_known_needs_sadd(cwork_enqueuer *enq, const char *name, int64_t now);
/* Records a successful SADD of name at now. */
void enq_known_mark(cwork_enqueuer *enq, const char *name, int64_t now);

/* Builds and encodes a new job (fresh id, t = now) into out; checks the name and the
 * size limit. id receives the job id. */
int enq_encode_job(cwork_enqueuer *enq, const char *name, const cwork_args *args, int unique,
                   int64_t now, cw_buf *out, char id[25], cwork_error *err);

#endif
