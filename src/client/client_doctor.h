/* The namespace doctor (PROTOCOL §25), shared by client_doctor.c (the checks),
 * client_doctor_keys.c (what PROTOCOL says each key is) and client_doctor_repair.c
 * (findings and their repairs with doctor_repair.lua). */
#ifndef CWORK_CLIENT_DOCTOR_H
#define CWORK_CLIENT_DOCTOR_H

#include "client.h"

/* What a key of the namespace is, by its name. */
typedef enum cw_doctor_class {
    CW_DK_UNKNOWN = 0, /* not a key PROTOCOL documents: left alone */
    CW_DK_KNOWN_JOBS,
    CW_DK_QUEUE,
    CW_DK_INPROGRESS,
    CW_DK_PAUSED,
    CW_DK_LOCK,
    CW_DK_LOCK_INFO,
    CW_DK_MAX_CONCURRENCY,
    CW_DK_RETRY,
    CW_DK_DEAD,
    CW_DK_SCHEDULED,
    CW_DK_WORKER,
    CW_DK_WORKER_POOLS,
    CW_DK_POOL,
    CW_DK_UNIQUE,
    CW_DK_LAST_PERIODIC,
    CW_DK_REAPER_LOCK,
    CW_DK_STAT,
    CW_DK_PERIODIC,
    CW_DK_RATE_LIMITS,
    CW_DK_RATE_LIMIT,
    CW_DK_CANCELLED,
    CW_DK_RESULT,
    CW_DK_SUCCEEDED,
    CW_DK_BATCH,
    CW_DK_BATCH_JOBS,
    CW_DK_SUPERSEDED,
    CW_DK_FAILURES,     /* <p>cwork:failures:<id>, a job's failure history (PROTOCOL §26) */
    CW_DK_SHARDS,       /* <p>cwork:shards, the shard record (§27.1) */
    CW_DK_SHARD_PINNED, /* <p>cwork:shard_pinned (§27.2) */
    CW_DK_SHARD_MOVING  /* <p>cwork:moving:<name>, a pinned type's jobs on the way home (§27.4) */
} cw_doctor_class;

/* A key's class and the type PROTOCOL gives it ("list", "zset", …; NULL for
 * CW_DK_UNKNOWN). For jobs:… keys, the job name (and for an in-progress list the pool
 * id) are copied into name and pool (name empty otherwise). */
typedef struct cw_doctor_key {
    cw_doctor_class cls;
    const char *type;
    char *name; /* cw_malloc'd or NULL */
    char pool[25];
} cw_doctor_key;

/* Classifies key (key_len bytes, the prefix included) of the namespace of k. Returns 0
 * or CWORK_ENOMEM; free d->name with cw_free. */
int cw_doctor_classify(const cw_keys *k, const char *key, size_t key_len, cw_doctor_key *d);

/* The doctor's run: the connection, the namespace and the findings so far. */
typedef struct cw_doctor {
    cw_conn *c;
    const cw_keys *k;
    unsigned flags;
    int64_t now;
    cwork_doctor_finding *f;
    size_t n, cap;
} cw_doctor;

/* Adds a finding (member and value may be NULL; action NULL: no repair) and, under
 * CWORK_DOCTOR_REPAIR, repairs it at once; a failed repair is kept in repair_error.
 * Returns 0, CWORK_ENOMEM, or an I/O error of the connection. */
int cw_doctor_add(cw_doctor *d, cwork_doctor_kind kind, const char *key, const char *member,
                  size_t member_len, const char *value, const char *action, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));

/* Runs doctor_repair.lua: keys then args (ARGV[1] is the kind). */
int cw_doctor_eval(cw_conn *c, const cw_argv *keys, const cw_argv *args, redisReply **out,
                   cwork_error *err);

/* The pools that hold or held jobs of name: lock_info's fields and the pools of the
 * in-progress lists found by SCAN, each once, appended to pools. */
int cw_doctor_name_pools(cw_conn *c, const cw_keys *k, const char *name, cw_argv *pools,
                         cwork_error *err);

/* The lock check of one name with pools: 0 agreed, 1 with *text the disagreement (the
 * caller frees it; repaired when repair is set), or an error. */
int cw_doctor_locks(cw_conn *c, const cw_keys *k, const char *name, cw_argv *pools, int repair,
                    char **text, cwork_error *err);

/* Repairs one finding: 1 repaired, 0 nothing to do, or an error. */
int cw_doctor_repair(cw_conn *c, const cw_keys *k, cwork_doctor_finding *f, int64_t now,
                     cwork_error *err);

/* "<p>cwork:quarantine:key:<rest>" for a key of the namespace; "<p>cwork:quarantine:"
 * what (dead, retry, scheduled, rate_limits). */
void cw_doctor_quarantine_key(const cw_keys *k, const char *key, cw_buf *out);
void cw_doctor_quarantine(const cw_keys *k, const char *what, cw_buf *out);

#endif
