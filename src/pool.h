/* Internal structure of a worker pool (see DESIGN.md "Threads"):
 *   executors   run middleware + handler for tasks from the ready queue, put them on
 *               the done queue; never talk to Redis for fetch or acknowledge;
 *   dispatcher  one thread and connection: commits done tasks and fetches up to k new
 *               jobs (k = free executors) — both in one pipelined round trip;
 *   heartbeat   its own thread (heartbeat.c);
 *   maintenance observer flushes, overrun warnings (later: requeuers, reaper, cron);
 *   wakeup      a subscriber that wakes the dispatcher when a cwork enqueuer pushes. */
#ifndef CWORK_POOL_H
#define CWORK_POOL_H

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
    /* Keys, built once: queue, in-progress (this pool), paused, lock, lock_info,
     * max_concurrency — the fetch script's six keys. */
    char *keys[6];
    size_t key_lens[6];
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
    cw_job_type *type;   /* the type whose queue it came from (its lock is released) */
    cwork_job *job;      /* decoded, or NULL when the bytes are not a valid job */
    char *raw;           /* exact bytes as fetched, for LREM */
    size_t raw_len;
    char decode_error[256];
    int failed;          /* the handler failed (filled by the executor) */
    int outcome;         /* for a failure: drop, retry or dead (filled by the commit) */
    char *fail_message;
    int64_t started_ms;  /* wall clock at handler start, for overrun warnings */
    int overrun_logged;
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
    cw_task *current; /* guarded by pool->mu */
} cw_executor;

/* One dispatcher with its executors. A pool of more than ~10 executors runs several:
 * each dispatcher's cycle (round trip, then its executors run the batch) is serial, and
 * two cycles overlap where one cannot (measured on 2 cores with no-op handlers: 2 × 10
 * executors process ~35% more jobs/s than 1 × 20, for ~25% more Redis CPU per job).
 * Every field is guarded by pool->mu except where noted. */
struct cw_shard {
    cwork_pool *pool;
    size_t index;
    size_t first_executor, nexecutors;
    pthread_t dispatcher;
    int dispatcher_started;
    cw_sampler sampler;        /* dispatcher only */
    pthread_cond_t work_cond;  /* executors: a task is ready, or no more will come */
    pthread_cond_t disp_cond;  /* dispatcher: a batch drained, a wake-up, or stopping */
    cw_task_queue ready, done;
    cw_task *pending;          /* done tasks taken by the dispatcher, not yet committed */
    size_t npending;
    size_t in_flight;          /* fetched and not yet committed */
    int wakeup;                /* a wake-up arrived since the dispatcher last looked */
    int dispatcher_waiting;    /* it sleeps on disp_cond: only then is a signal needed */
    size_t executors_waiting;  /* executors asleep on work_cond */
    int commit_failing;        /* its commits are failing right now */
    int no_more_tasks;         /* stopping, and this dispatcher will fetch nothing more:
                                  its executors may exit once ready is empty */
    int64_t handler_avg_us;    /* moving average of handler run time, for wake-ups */
    atomic_size_t done_seq;    /* tasks its executors finished, ever (read without mu) */
};

struct cwork_pool {
    cwork_redis *redis;
    atomic_llong cycle_error_log_ms; /* when damaged keys were last logged (dispatcher.c) */
    cw_keys keys;
    char id[25];
    cwork_pool_options opts;
    char *ns;

    cw_job_type *types;
    size_t ntypes;
    cwork_middleware *middleware;
    size_t nmiddleware;

    cw_executor *executors;
    cw_shard *shards;
    size_t nshards;
    bool single_fetch;         /* opts.single_fetch or a server < 6.2 */

    pthread_mutex_t mu;        /* guards the shards' queues and everything below */
    pthread_cond_t idle_cond;  /* stop/drain: in_flight changed */
    int started, stopping;
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
    cw_periodic *periodic;     /* NULL until a periodic job is registered */
    cw_watchdog *watchdog;     /* with periodic jobs only */

    _Atomic uint64_t n_fetched, n_succeeded, n_failed, n_retried, n_dead;
};

/* What a commit does with a failed task. */
enum { OUTCOME_DROP, OUTCOME_RETRY, OUTCOME_DEAD };

/* Task queues (caller holds pool->mu). */
void cw_tq_push(cw_task_queue *q, cw_task *t);
cw_task *cw_tq_pop(cw_task_queue *q);
cw_task *cw_tq_take_all(cw_task_queue *q); /* a linked list, queue left empty */
void cw_task_free(cw_task *t);

/* Wakes as many sleeping executors as the tasks in ready need (caller holds mu): one
 * per task when handlers are slow, fewer when they are fast enough for one executor to
 * run several in a row (each wake-up is a context switch); all when force is set. */
void cw_pool_wake_executors(cw_shard *s, int force);
/* Tasks fetched and not committed, over all shards (caller holds mu). */
size_t cw_pool_in_flight(const cwork_pool *p);
/* Wakes every dispatcher from its idle backoff (caller holds mu). */
void cw_pool_wake_dispatchers(cwork_pool *p);

/* Thread bodies. */
void *cw_executor_main(void *executor);
void *cw_dispatcher_main(void *shard);
void *cw_subscriber_main(void *pool);

/* A failed task's forwarding data: target, score and JSON (in a buffer, by offset). */
typedef struct commit_arg {
    size_t json_off, json_len;
    char score[24];
    const char *target; /* "r", "d" or "-" (dropped) */
} commit_arg;

/* The commit part of the cycle script's ARGV (from ARGV[5] on) for a list of done tasks,
 * built by commit.c: failure outcomes decided, failed jobs re-encoded for retry/dead. */
typedef struct cw_commit_args {
    const char **argv;
    size_t *lens;
    size_t n;
    unsigned char *groups; /* per type with done tasks: index, succeeded, failed */
    commit_arg *fail;   /* by task position */
    cw_buf buf;         /* re-encoded failed jobs */
} cw_commit_args;

int cw_commit_prepare(cwork_pool *p, cw_task *done, cw_commit_args *out, cwork_error *err);
void cw_commit_args_free(cw_commit_args *a);

/* The job type registered under name, or NULL (a stray job). */
cw_job_type *cw_pool_find_type(cwork_pool *p, const char *name, size_t len);

#endif
