/* Internal structure of a worker pool (docs/POOL.md explains the threads):
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
#include "mutex.h"
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
/* Executors per pool at most: the commit's per-type counts are 16-bit (commit_layout.h). */
#define CW_MAX_CONCURRENCY 10000
#define CW_DEFAULT_MAX_FAILS 4
#define CW_MAX_PRIORITY 100000
#define CW_MAX_JOB_TYPES 2000
#define CW_DEFAULT_IDLE_BACKOFF_MAX_MS 100
#define CW_DEFAULT_STOP_GRACE_MS 30000
#define CW_DEFAULT_RESULT_TTL_MS (24LL * 3600 * 1000)
#define CW_DEFAULT_KEEP_SUCCEEDED_MS (7LL * 24 * 3600 * 1000)

/* A registered job type. */
typedef struct cw_job_type {
    char *name;
    cwork_handler handler;
    cwork_job_options opts;
    /* Its keys, built once, by kind (the cycle script's per-type keys). */
    char *keys[CW_CYCLE_KEY_KINDS];
    size_t key_lens[CW_CYCLE_KEY_KINDS];
    char *rate_key; /* <p>cwork:rate_limit:<name> (PROTOCOL §20) */
    size_t rate_key_len, name_len;
    /* The namespace has a rate limit for it, as last read (rate_limits.c); dispatchers
     * read it without a lock. */
    atomic_bool rate_limited;
    /* This pool committed a job of the type that set a result, or was a tracked batch's
     * member (commit_results.c, commit.c): a Go pool running the type would defeat
     * either, which go_pools.c warns about. Set once, never cleared. */
    atomic_bool saw_result, saw_batch_member;
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
    int no_give_back;  /* a give-back kept it (give_back.c): it runs, or dies, here */
    cw_run run;
    /* "Stop this job" (job_stop.c): why it was asked to stop (a cwork_stop_reason, set
     * once, read without a lock), and the pipe cwork_job_stop_fd hands out (-1 until
     * then; made, written and closed under the shard's mu). */
    atomic_int stop_reason;
    int stop_pipe[2];
    /* Filled by the executor for the commit of a success (PROTOCOL §22): the type whose
     * handler ran (its result and retention options), how long it ran, and the result
     * cwork_job_set_result stored (has_result: set, possibly empty). */
    struct cw_job_type *handler_type;
    int64_t took_us;
    char *result;
    size_t result_len;
    bool has_result;
} cw_task;

typedef struct cw_task_queue {
    cw_task *head, *tail;
    size_t len;
} cw_task_queue;

typedef struct cw_shard cw_shard;
typedef struct cw_budget_seat cw_budget_seat;

typedef struct cw_executor {
    cwork_pool *pool;
    cw_shard *shard;
    size_t index;
    pthread_t thread;
    char worker_id[25];
    /* Guarded by shard->mu: */
    cw_task *current;
    int64_t current_since_us; /* monotonic: when current started (fetch ahead) */
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
    cw_mutex mu;
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
    bool lease_reclaim;      /* the lease was renewed after a loss: take up what is left
                                in this pool's in-progress lists (lease.c) */
    int64_t handler_avg_us;  /* moving average of handler run time, for wake-ups */
    int64_t round_trip_us;   /* moving average of the dispatcher's exchanges (fetch ahead) */
    size_t refill_at;        /* a finishing executor signals a waiting dispatcher once ready is
                                this short (cw_decision.refill_at) */
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

    cw_mutex mu;              /* life cycle: idle_cond waits */
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
    cw_mutex stop_mu;
    cw_heartbeat *heartbeat;
    cw_observer *observer;
    cw_reaper *reaper;
    cw_periodic *periodic; /* NULL until a periodic job is registered */
    cw_watchdog *watchdog; /* with periodic jobs only */

    _Atomic uint64_t n_fetched, n_succeeded, n_failed, n_retried, n_dead;
    /* The counts at start, before any thread runs: the daily stats add what follows. */
    uint64_t start_processed, start_failed;
    atomic_int go_flavor_warned; /* mixed-namespace warnings given (flavor.h kinds) */
    /* Rate limits (rate_limits.c): how many types are limited (0: the plain cycle
     * call, no work for limits at all) and the setting's key. */
    atomic_size_t nrate_limited;
    char *rate_limits_key;
    size_t rate_limits_key_len;
    /* The Go pools already warned about (go_pools.c), as "<what>:<pool id>"; only the
     * maintenance thread touches them. */
    char **go_warned_pools;
    size_t ngo_warned_pools;
    /* The pool's lease on its jobs (lease.c): fenced while it cannot prove it; the
     * guard thread watches it. */
    atomic_int fenced;
    atomic_uint reaped_seen;
    cw_mutex lease_mu; /* guards lease_stop; lease_cond on CLOCK_MONOTONIC */
    pthread_cond_t lease_cond;
    int lease_stop;
    atomic_int lease_started; /* read by the dispatchers and the heartbeat's hook */
    pthread_t lease_guard;
    /* A sharded namespace (PROTOCOL §27.4, pool_nsshards.c): NOT the dispatcher groups
     * called shards above. Set by the first start on a namespace of S > 1 shards, then
     * this pool runs no thread of its own: one inner pool per namespace shard does the
     * work. NULL (and nothing differs from an unsharded pool) otherwise. */
    struct cw_nsshards *nsshards;
    bool nsshard_member; /* an inner pool: its owner read the shard record */
    /* An inner pool: its dispatchers' seats in the shared budget, by shard index
     * (pool_nsshards_budget.h; owned by the budget), set before start. NULL for any other
     * pool, whose dispatchers never look further (kept out of cw_shard, whose layout the
     * unsharded hot path keeps). */
    cw_budget_seat *seats;
};

/* What a commit does with a failed task. */
enum { OUTCOME_DROP, OUTCOME_RETRY, OUTCOME_DEAD };

/* Asserts (CW_ASSERTS builds) that the caller holds the mu of the shard whose executor
 * took t; a task no executor has taken (fetched, not yet delivered or run) belongs to
 * the thread that holds it, and nothing is checked. A macro: a failure names the
 * caller. */
#ifdef CW_ASSERTS
static inline bool cw_task_locked(const cw_task *t)
{
    const cwork_pool *p = t->run.pool;
    return !p || (t->run.worker < p->opts.concurrency &&
                  cw_mutex_held(&p->executors[t->run.worker].shard->mu));
}
#define cw_task_assert_locked(t) CW_ASSERT(cw_task_locked(t))
#else
#define cw_task_assert_locked(t) ((void)sizeof(t))
#endif

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

/* rate_limits.c (PROTOCOL §20). Writes the registered types' rate_limit options to
 * <p>cwork:rate_limits, then reads which types are limited (at start). */
int cw_pool_rate_limits_start(cwork_pool *p, cwork_error *err);
/* Reads which of the pool's types the namespace limits, so that a limit set or removed
 * while the pool runs is followed (maintenance, every CW_RATE_LIMIT_REFRESH_MS); every
 * few reads, warns about Go pools running a limited type. */
int cw_pool_rate_limits_refresh(cwork_pool *p, bool look_for_go_pools, cwork_error *err);

/* Logs, once per Go pool and feature, each Go pool (a heartbeat without cwork's `cwork`
 * field, PROTOCOL §6) whose job_names list a type that uses a feature Go pools defeat:
 * a rate limit in the namespace's setting (limits: its HGETALL reply, or NULL), or, for
 * this pool's types, results, kept successes and tracked batches (PROTOCOL §20.5, §22.5,
 * §23.6). Does nothing, and sends nothing, when none is in use. Maintenance thread
 * only; failures to read are ignored (the next look tries again). */
void cw_pool_warn_go_pools(cwork_pool *p, cw_conn *c, const redisReply *limits);
void cw_pool_go_pools_free(cwork_pool *p);
/* Whether the comma-joined list (a heartbeat's job_names, len bytes) holds name. Pure. */
bool cw_pool_list_has(const char *list, size_t len, const char *name, size_t name_len);
#define CW_RATE_LIMIT_REFRESH_MS 1000
/* Fills limited[] with the indices of the types limited now (ascending); returns how
 * many. limited has room for ntypes. */
size_t cw_pool_rate_limited_types(cwork_pool *p, size_t *limited);
void cw_pool_rate_limits_free(cwork_pool *p);

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
    const char *target; /* CW_COMMIT_TARGET_* (commit_layout.h) */
    int64_t failed_at;  /* the failure's time as recorded in the job (Unix s) */
} commit_arg;

/* The commit part of the cycle script's ARGV (from ARGV[5] on) for a list of done tasks,
 * built by commit.c: failure outcomes decided, failed jobs re-encoded for retry/dead. */
typedef struct cw_commit_args {
    cw_argv args;          /* borrowed from the tasks and the fields below */
    unsigned char *groups; /* per type with done tasks: index, succeeded, failed */
    commit_arg *fail;      /* by task position */
    size_t *raw_at;        /* by task position: where its raw bytes are in args */
    size_t ntasks;
    unsigned char *not_removed; /* by task position, from the reply: 1 a reaper had
                                   taken the job back (it runs again elsewhere), 2 its
                                   commit's write failed (still in in-progress) */
    char write_error[200];      /* the reply's first failed write ("type: what: error") */
    unsigned char *cancelled;   /* by task position, from the reply: the script sent
                                   it to dead as cancelled (PROTOCOL §21) */
    cw_buf buf;                 /* re-encoded failed jobs */
    /* Results and kept successes (commit_results.c): extra KEYS and the ARGV section after
     * the commit's, both empty (nothing allocated) when no job has a result and no type
     * keeps its successes. */
    cw_argv extra_keys, extra_args;
    /* The batch section (PROTOCOL §23), only when a task's job is in a tracked batch. */
    unsigned char *batch_entries; /* seven bytes per member: position, type, kind */
    char batch_now[24], batch_ttl[24];
    size_t batch_nargs; /* how many of args's last arguments are the batch section */
} cw_commit_args;

int cw_commit_prepare(cwork_pool *p, cw_task *done, cw_commit_args *out, cwork_error *err);
/* commit_results.c: appends to out->extra_keys/extra_args the results and retention
 * entries of the succeeded tasks of done (positions in out->raw_at), or nothing when
 * none has any; now_ms is the pool's clock. 0 or CWORK_ENOMEM. */
int cw_commit_prepare_results(cwork_pool *p, cw_task *done, cw_commit_args *out, int64_t now_ms,
                              cwork_error *err);
void cw_commit_args_free(cw_commit_args *a);

/* job_stop.c: "stop this job", the one mechanism for every reason (cwork_stop_reason).
 * Asks the task to stop: records the first reason and makes its stop fd readable. The
 * caller holds the task's shard's mu. Returns whether this call set the reason. */
bool cw_task_stop(cw_task *t, cwork_stop_reason reason);
/* Asks every task of the pool holding the job with this id (running, waiting for an
 * executor, or finished and not committed) to stop; the caller holds no shard lock.
 * Returns how many tasks it found. */
size_t cw_pool_stop_job(cwork_pool *p, const char *id, size_t len, cwork_stop_reason reason);
/* Closes the task's stop pipe once its handler has returned (caller holds the shard's
 * mu). */
void cw_task_close_stop_fd(cw_task *t);

/* lease.c: the pool's lease on its jobs (README "Leases"). The lease of a beat sent at
 * monotonic time s ends at s + CW_LEASE_MS (the reaper's dead time, less the second
 * heartbeat_at loses to truncation); jobs are stopped at s + CW_LEASE_STOP_AT_MS, so that
 * the kill grace of CWORK_LEASE_STOP_GRACE_MS and CW_LEASE_SLACK_MS of scheduling fit
 * before it ends. */
#define CW_LEASE_MS (CW_REAPER_DEAD_TIME * 1000 - 1000)
#define CW_LEASE_SLACK_MS 1000
#define CW_LEASE_STOP_AT_MS (CW_LEASE_MS - CWORK_LEASE_STOP_GRACE_MS - CW_LEASE_SLACK_MS)
/* Initialises the lease's lock and condition (pool creation); 0 or CWORK_ENOMEM. */
int cw_lease_init(cwork_pool *p);
void cw_lease_destroy(cwork_pool *p);
/* Starts the guard thread (after the first beat; sets the heartbeat's hook first). */
int cw_lease_start(cwork_pool *p, cwork_error *err);
/* Stops and joins it. */
void cw_lease_stop(cwork_pool *p);
/* Whether the pool may not commit or fetch now: it is fenced, or its lease has run out
 * to the stop point (it is then fenced by this call, which takes no shard lock). One
 * atomic load and a monotonic clock read on the plain path. */
bool cw_lease_lost(cwork_pool *p);
/* While fenced, the dispatcher of a shard (holding its mu): asks every running or ready
 * task of the shard to stop (CWORK_STOP_LEASE_LOST) and frees, uncommitted, those so
 * asked that are not running (their in-progress entries are left to whoever reaps this
 * pool); with all, every finished task too (the pool stops). Returns how many it freed. */
size_t cw_lease_drop_shard_tasks(cw_shard *sh, bool all);

/* pool_nsshards.c: a pool on a sharded namespace (PROTOCOL §27.4). A "namespace shard"
 * is one of the S namespaces of §27, unrelated to the dispatcher groups (cw_shard).
 * At start, for a pool that is not an inner pool: reads (or, with opts.shards, writes)
 * the shard record. One namespace shard: *served = false, nothing else is done and the
 * pool starts as it always did. S > 1: starts one inner pool per namespace shard (made
 * on the first start) and the mover, and sets *served. CWORK_EINVAL when the declared
 * count differs from the record (naming the key), or concurrency is below S. */
int cw_nsshards_start(cwork_pool *p, bool *served, cwork_error *err);
/* cwork_pool_new: opts->shards in range, a namespace that can be sharded when it is over
 * 1, and at least one executor per declared shard. 0 or CWORK_EINVAL naming the field. */
int cw_nsshards_check_options(const char *ns, const cwork_pool_options *o, cwork_error *err);
/* Stops every inner pool at once (each with grace_ms); the first error is returned. */
int cw_nsshards_stop(cwork_pool *p, int64_t grace_ms, cwork_error *err);
int cw_nsshards_drain(cwork_pool *p, int64_t timeout_ms, cwork_error *err);
/* The inner pools' counts, summed. */
void cw_nsshards_get_stats(cwork_pool *p, cwork_pool_stats *s);
/* The inner pools' watchdog entries (each name in its one home shard), concatenated. */
int cw_nsshards_watchdog_stats(cwork_pool *p, cwork_watchdog_stat **out, size_t *n,
                               cwork_error *err);
/* CWORK_EINVAL for a configuration call (what) on a pool that has served a sharded
 * namespace: its inner pools were made with the registrations of its first start. */
int cw_nsshards_configured(cwork_error *err, const char *what);
/* Frees the inner pools and their Redis handles (the pool is stopped). */
void cw_nsshards_free(cwork_pool *p);

/* The job type registered under name, or NULL (a stray job). */
cw_job_type *cw_pool_find_type(cwork_pool *p, const char *name, size_t len);

#endif
