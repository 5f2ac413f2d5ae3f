/* Internal structure of a worker pool (see DESIGN.md "Threads"):
 *   shards      a pool's executors are split into shards of ~10, each with one
 *               dispatcher, its own lock and its own queues (a shard is one serial
 *               cycle: round trip, then its executors run the batch; several overlap);
 *   executors   run middleware + handler for tasks from their shard's ready queue, put
 *               them on its done queue; never talk to Redis for fetch or acknowledge;
 *   dispatcher  one thread and connection per shard: commits done tasks and fetches up
 *               to k new jobs (k = free executors) in one script call per round trip;
 *               what it does next is decided by dispatch_policy.c;
 *   heartbeat   its own thread (heartbeat.c);
 *   maintenance observer flushes, overrun warnings, requeuers, reaper, periodic jobs;
 *   wakeup      a subscriber that wakes the dispatchers when a cwork enqueuer pushes.
 * Locks: pool->mu (life cycle) before a shard's mu; fetch_lock before a shard's mu. */
#ifndef CWORK_POOL_H
#define CWORK_POOL_H

#include "cycle_call.h"
#include "dispatch_policy.h"
#include "heartbeat.h"
#include "job.h"
#include "keys.h"
#include "observer.h"
#include "periodic.h"
#include "reaper.h"
#include "watchdog.h"
#include "redis.h"
#include "sampler.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define CW_DEFAULT_CONCURRENCY 10
#define CW_DEFAULT_MAX_FAILS 4
#define CW_MAX_PRIORITY 100000
#define CW_MAX_JOB_TYPES 2000
#define CW_DEFAULT_IDLE_BACKOFF_MAX_MS 100
#define CW_DEFAULT_STOP_GRACE_MS 30000

/* A registered job type. */
typedef struct cw_job_type {
    char *name;
    cwork_handler handler;
    cwork_job_options opts;
    /* Its keys, built once, by kind (the cycle script's per-type keys). */
    char *keys[CW_CYCLE_KEY_KINDS];
    size_t key_lens[CW_CYCLE_KEY_KINDS];
} cw_job_type;

/* What a running job can reach through cwork_job_* (checkin, deadline, userdata). */
typedef struct cw_run {
    cwork_pool *pool;
    struct cw_task *task;
    size_t worker;
    int64_t deadline_ms;
} cw_run;

/* One fetched job on its way through the pool. */
typedef struct cw_task {
    struct cw_task *next;
    cw_job_type *type; /* the type whose queue it came from (its lock is released) */
    cwork_job *job;    /* decoded, or NULL when the bytes are not a valid job */
    char *raw;         /* exact bytes as fetched, for LREM */
    size_t raw_len;
    char decode_error[256];
    int64_t delivered_us; /* monotonic: when it reached the ready queue */
    int failed;           /* the handler failed (filled by the executor) */
    int no_retry;         /* cwork_job_fail_no_retry: straight to dead (or dropped) */
    int outcome;          /* for a failure: drop, retry or dead (filled by the commit) */
    char *fail_message;
    int64_t started_ms; /* wall clock at handler start, for overrun warnings */
    int overrun_logged;
    int commit_unsure; /* an earlier commit of it got no reply: it may have gone through */
    cw_run run;
} cw_task;

typedef struct cw_task_queue {
    cw_task *head, *tail;
    size_t len;
} cw_task_queue;

typedef struct cw_shard cw_shard;

typedef struct cw_executor {
    cwork_pool *pool;
    cw_shard *shard;
    size_t index;
    pthread_t thread;
    char worker_id[25];
    /* Guarded by shard->mu: */
    cw_task *current;
    /* Each executor sleeps on its own condition, so that a wake-up wakes exactly the
     * executor it counts (the shard's sleepers stack, most recent first: an executor
     * that just ran is the one with warm caches). */
    pthread_cond_t cond;
    bool woken;
    struct cw_executor *next_sleeper;
} cw_executor;

/* One dispatcher with its executors. Every field is guarded by mu except where noted. */
struct cw_shard {
    cwork_pool *pool;
    size_t index;
    size_t first_executor, nexecutors;
    pthread_t dispatcher;
    int dispatcher_started;
    pthread_mutex_t mu;
    pthread_cond_t disp_cond; /* dispatcher: a batch drained, a wake-up, or stopping */
    cw_task_queue ready, done;
    cw_task *pending; /* done tasks taken by the dispatcher, not yet committed */
    size_t npending;
    size_t in_flight;      /* fetched and not yet committed */
    size_t fetching;       /* jobs asked for by a round trip whose reply is not in */
    cw_executor *sleepers; /* executors asleep with no wake-up on its way */
    size_t nsleeping;
    bool wakeup;             /* a wake-up arrived since the dispatcher last looked */
    bool dispatcher_waiting; /* it sleeps on disp_cond: only then is a signal needed */
    bool no_more_tasks;      /* stopping, and this dispatcher will fetch nothing more:
                                its executors may exit once ready is empty */
    int64_t handler_avg_us;  /* moving average of handler run time, for wake-ups */
    atomic_size_t done_seq;  /* tasks its executors finished, ever (read without mu) */
    /* The dispatcher thread's own: */
    cw_sampler sampler;
    cw_dispatch_state state;
};

struct cwork_pool {
    cwork_redis *redis;
    atomic_llong cycle_error_log_ms; /* when damaged keys were last logged (dispatcher.c) */
    cw_keys keys;
    char id[25];
    cwork_pool_options opts;
    cw_pool_tuning tuning;
    char *ns;

    cw_job_type *types;
    size_t ntypes;
    cwork_middleware *middleware;
    size_t nmiddleware;

    cw_executor *executors;
    cw_shard *shards;
    size_t nshards;
    bool single_fetch; /* opts.single_fetch or a server < 6.2 */

    pthread_mutex_t mu;       /* life cycle: idle_cond waits */
    pthread_cond_t idle_cond; /* stop/drain/maintenance: in_flight fell while stopping */
    int started;
    atomic_int stopping;
    /* Round trips hold it shared (until their jobs are delivered and committed tasks
     * freed); a reclaim, which must see every shard's tasks while none is half-handled
     * or freed, holds it exclusively. */
    pthread_rwlock_t fetch_lock;

    pthread_t maintenance, subscriber;
    /* Which threads exist (a start can fail half-way), and one stop at a time. */
    size_t executors_started;
    int maintenance_started, subscriber_started;
    pthread_mutex_t stop_mu;
    cw_heartbeat *heartbeat;
    cw_observer *observer;
    cw_reaper *reaper;
    cw_periodic *periodic; /* NULL until a periodic job is registered */
    cw_watchdog *watchdog; /* with periodic jobs only */

    _Atomic uint64_t n_fetched, n_succeeded, n_failed, n_retried, n_dead;
    /* The counts at start, before any thread runs: the daily stats add what follows. */
    uint64_t start_processed, start_failed;
    atomic_int go_flavor_warned; /* mixed-namespace warnings given (flavor.h kinds) */
};

/* What a commit does with a failed task. */
enum { OUTCOME_DROP, OUTCOME_RETRY, OUTCOME_DEAD };

/* Task queues (caller holds the shard's mu). */
void cw_tq_push(cw_task_queue *q, cw_task *t);
cw_task *cw_tq_pop(cw_task_queue *q);
cw_task *cw_tq_take_all(cw_task_queue *q); /* a linked list, queue left empty */
void cw_task_free(cw_task *t);

/* Wakes up to n sleeping executors of the shard (caller holds its mu). */
void cw_shard_wake_executors(cw_shard *s, size_t n);
/* Nothing more will reach the shard's executors: they leave once ready is empty
 * (caller holds its mu). */
void cw_shard_no_more_tasks(cw_shard *s);
/* Tasks fetched and not committed, over all shards (locks each shard in turn: the
 * caller holds no shard lock). */
size_t cw_pool_in_flight(cwork_pool *p);
/* Whether any shard has jobs in flight or a fetch whose reply is not in yet (a job on
 * its way from Redis is in neither its queue nor in_flight). */
bool cw_pool_busy(cwork_pool *p);
/* Wakes every dispatcher from its idle backoff (the caller holds no shard lock). */
void cw_pool_wake_dispatchers(cwork_pool *p);
/* Tells stop/drain/maintenance that in-flight work fell (the caller holds no lock). */
void cw_pool_notify_idle(cwork_pool *p);
/* Replaces the scheduling tunables (before start only): the shards are laid out again. */
int cw_pool_set_tuning(cwork_pool *p, const cw_pool_tuning *t);

/* pool_type_state.c. Appends what the pool says about its job types to c's pipeline
 * (SET max_concurrency per type, NX when only_missing; SADD known_jobs); returns how
 * many replies follow. */
size_t cw_pool_append_type_state(cwork_pool *p, cw_conn *c, bool only_missing, cwork_error *err);
/* Logs the i-th of those replies when it is an error. */
void cw_pool_log_type_state_error(cwork_pool *p, size_t i, const redisReply *r);
/* Writes what the pool says about its job types where it is missing (max_concurrency
 * after a flush or a failover; known_jobs): maintenance does it every dead_check_ms. */
int cw_pool_reassert_types(cwork_pool *p, cwork_error *err);

/* pool_shards.c. A condition variable on CLOCK_MONOTONIC (0 or an errno). */
int cw_cond_init_monotonic(pthread_cond_t *c);
/* Lays the executors out in shards (p->shards, p->nshards); 0 or CWORK_ENOMEM. */
int cw_pool_build_shards(cwork_pool *p);
/* Destroys the shards and the executors' condition variables. */
void cw_pool_free_shards(cwork_pool *p);

/* Thread bodies. */
void *cw_executor_main(void *executor);
void *cw_dispatcher_main(void *shard);
void *cw_subscriber_main(void *pool);
void *cw_maintenance_main(void *pool);

/* After a fetch whose reply was lost: every in-progress entry of the pool that no task
 * of any shard accounts for, taken up as fetched into out (reclaim.c). The caller holds
 * fetch_lock exclusively and no shard lock. *incomplete is set when some entries could
 * not be looked at or taken up (look again later). */
int cw_reclaim_inprogress(cwork_pool *p, cw_conn *c, cw_task_queue *out, int *incomplete,
                          cwork_error *err);
/* A task for fetched bytes: decoded, or marked failed with the decode error (it goes
 * straight to dead). NULL when out of memory. */
cw_task *cw_task_new(cw_job_type *type, const char *bytes, size_t len);

/* A failed task's forwarding data: target, score and JSON (in a buffer, by offset). */
typedef struct commit_arg {
    size_t json_off, json_len;
    char score[24];
    const char *target; /* "r", "d" or "-" (dropped) */
} commit_arg;

/* The commit part of the cycle script's ARGV (from ARGV[5] on) for a list of done tasks,
 * built by commit.c: failure outcomes decided, failed jobs re-encoded for retry/dead. */
typedef struct cw_commit_args {
    cw_argv args;          /* borrowed from the tasks and the fields below */
    unsigned char *groups; /* per type with done tasks: index, succeeded, failed */
    commit_arg *fail;      /* by task position */
    size_t *raw_at;        /* by task position: where its raw bytes are in args */
    size_t ntasks;
    unsigned char *not_removed; /* by task position, from the reply: a reaper had
                                   taken the job back (it runs again elsewhere) */
    cw_buf buf;                 /* re-encoded failed jobs */
    /* The batch section (PROTOCOL §23), only when a task's job is in a tracked batch. */
    unsigned char *batch_entries; /* seven bytes per member: position, type, kind */
    char batch_now[24], batch_ttl[24];
} cw_commit_args;

int cw_commit_prepare(cwork_pool *p, cw_task *done, cw_commit_args *out, cwork_error *err);
void cw_commit_args_free(cw_commit_args *a);

/* The job type registered under name, or NULL (a stray job). */
cw_job_type *cw_pool_find_type(cwork_pool *p, const char *name, size_t len);

#endif
