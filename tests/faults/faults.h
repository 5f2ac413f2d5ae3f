/* The fault suite's world: a private redis-server with AOF, `cwork work` pools that run
 * tests/faults/fault_job for every job (which logs its starts and ends), a generator
 * thread that enqueues through the library and records what each enqueue answered,
 * and the faults done to pools. Scenarios (faults_scenarios.c) act on it; the history
 * checker (history.c) judges it. */
#ifndef CWORK_FAULTS_H
#define CWORK_FAULTS_H

#include "cwork.h"
#include "history.h"
#include "reaper.h"
#include "testlib.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#define FW_MAX_POOLS 32
#define FW_MAX_FAULTS 128
#define FW_CONCURRENCY "4" /* per pool */
#define FW_LIMITED_MAX 2   /* max concurrency of the "limited" job type */
/* The latest a crashed or frozen pool's jobs are back in their queues, from the fault:
 * its heartbeat (whole seconds) is stale CW_REAPER_DEAD_TIME + 1 s after it at the
 * latest; the other pools (run with the default) look for stale heartbeats every
 * CW_REAPER_DEFAULT_CHECK_MS and then run a cycle. Two checks: one for that, one for a
 * check or cycle late under load (21 s; the reap period, which a stuck reaper lock
 * would make it, is 300 s). */
#define FW_RECOVERY_BOUND_MS ((CW_REAPER_DEAD_TIME + 1) * 1000 + 2 * CW_REAPER_DEFAULT_CHECK_MS)
/* A frozen pool stays stopped this long: past the bound, so that its jobs are given
 * back (and run again elsewhere) before it goes on. */
#define FW_FREEZE_MS (FW_RECOVERY_BOUND_MS + 5000)

typedef struct fw_pool {
    char tag[FH_POOL];
    pid_t pid;
    int out_fd;  /* read end of its stdout and stderr, or -1 */
    int file_fd; /* <dir>/<tag>.out, where its lines go with a time stamp */
    char partial[1024];
    size_t npartial;
    int alive, stopped;
    long long stopped_at;
    size_t stop_fault; /* index of its open 'S' fault while stopped */
    pid_t frozen[64];  /* its descendants stopped with it (fw_pool_freeze_tree) */
    size_t nfrozen;
} fw_pool;

typedef struct world {
    tl_server redis;
    char ns[64];
    char dir[256]; /* the log, each pool's output */
    char log_path[320];
    const char *cli, *job;
    const char *limited_max; /* --max-concurrency of "limited" (NULL: FW_LIMITED_MAX) */
    /* For the next fw_pool_start only: run it in this network namespace (`ip netns
     * exec`), with this Redis URL (NULL: the usual way). */
    const char *netns, *netns_url;
    /* Replicated Redis (fault_ha.c): the URL pools and the generator use instead of
     * w->redis.url (redis+sentinel://, redis+cluster://), and where the control
     * connection dials: ctl_port(w) names the node that serves the namespace now (NULL:
     * w->redis.port); topo is the test's own. */
    const char *url;
    int (*ctl_port)(struct world *w);
    void *topo;
    redisContext *ctl; /* the suite's own connection; redial with fw_ctl() after restarts */

    fw_pool pools[FW_MAX_POOLS];
    size_t npools;
    fh_fault faults[FW_MAX_FAULTS];
    size_t nfaults;

    /* recovery of each pool fault: the time until nothing of the pool was left in
     * progress (its jobs back in their queues), as the scenarios measured it */
    struct {
        char what[64];
        long long ms; /* -1: not within the wait */
    } recovery[16];
    size_t nrecovery;

    /* a thread that stamps the pools' output lines with the time */
    pthread_t stamper;
    atomic_int stamper_stop;
    pthread_mutex_t pools_mu; /* guards out_fd while pools start */

    /* the generator */
    pthread_t gen;
    atomic_int gen_stop;
    atomic_int gen_pause; /* 1: enqueue nothing for now */
    pthread_mutex_t mu;   /* guards enq */
    fh_enqueue *enq;
    size_t nenq, cap;
} world;

long long fw_now_ms(void);

/* Starts Redis (AOF, appendfsync always), makes the directory and namespace. 0 or -1. */
int fw_init(world *w);
/* The same without a Redis of its own: the test starts one and sets url and ctl_port. */
int fw_init_external(world *w);
/* Stops everything that still runs and removes the directory (kept when keep). */
void fw_destroy(world *w, int keep);

/* The control connection, re-dialled when Redis was restarted or it broke. */
redisContext *fw_ctl(world *w);
/* A command on the control connection; the reply (or NULL on an I/O error). */
redisReply *fw_cmd(world *w, const char *fmt, ...);
/* An integer reply's value, or -1. */
long long fw_int(world *w, const char *fmt, ...);

/* Starts one `cwork work` pool; its index, or -1. */
int fw_pool_start(world *w);
/* Faults, recorded for the checker (SIGSTOP until the matching SIGCONT or kill). */
void fw_pool_kill(world *w, size_t i, long long at_ms);
void fw_pool_stop(world *w, size_t i);
void fw_pool_cont(world *w, size_t i);
/* The same for the pool's whole process tree (its commands and their supervisors, found
 * in /proc), as a container pause does; the commands are resumed before the pool, so
 * that they run on for as long as the pool takes to stop them. Returns how many
 * processes were stopped. */
size_t fw_pool_freeze_tree(world *w, size_t i);
void fw_pool_thaw_tree(world *w, size_t i);
/* SIGTERM every live pool and wait for each to exit (0 when all exited with 0). */
int fw_pools_shutdown(world *w);
size_t fw_alive(const world *w);
/* Adds an 'L' fault for every `pool.lease_lost` line in the pools' output: a pool that
 * lost its lease (Redis refused or delayed its heartbeat: out of memory, a pause) stops
 * its running jobs, which then run again — duplicates the loss explains. */
void fw_add_lease_faults(world *w);

/* The generator thread (a few hundred jobs a second at most, three types). */
int fw_gen_start(world *w);
void fw_gen_stop(world *w);

/* The pool's id (from the heartbeat with its pid) into id[32]; 0, or -1 when it has
 * none (not started yet, or reaped). */
int fw_pool_id(world *w, size_t i, char id[32]);
/* Jobs in the in-progress lists of pool id. */
long long fw_inprogress(world *w, const char *id);
/* Waits (polling) until pool id has nothing in progress, for up to ms after since_ms;
 * records the time from since_ms as the recovery of what. Returns it, or -1. */
long long fw_wait_recovered(world *w, const char *id, long long since_ms, long ms,
                            const char *what);

/* Waits until no job waits anywhere (queues, in-progress, scheduled, retry) for up to
 * ms; 0 when quiet, -1 when not. */
int fw_wait_quiet(world *w, long ms);

/* The sum of the lock_info fields and the lock of type name. */
void fw_locks(world *w, const char *name, long long *lock, long long *info_sum);

/* The scenarios (faults_scenarios.c), each printing what it did; 0, or -1 when a check
 * of its own failed (the history is judged at the end, for all of them together). */
int sc_kill_a_pool(world *w);
int sc_stop_past_dead_time(world *w);
int sc_client_pause(world *w);
int sc_redis_restart(world *w);
int sc_out_of_memory(world *w);
int sc_damaged_keys(world *w);
int sc_kill_the_reaper_lock_holder(world *w);

/* fault_runs.c: for the focused fault tests (fault_freeze.c, fault_partition.c). */
extern int fr_failures;
void fr_verdict(int ok, const char *what, long long v);
/* One run of a job, from its start and end lines. */
typedef struct fr_run {
    char pool[FH_POOL];
    long long start, end; /* end -1: not ended */
} fr_run;
/* The runs of key in the log, in start order (up to cap). */
size_t fr_read_runs(world *w, const char *key, fr_run *runs, size_t cap);
/* LPUSHes a "limited" job with args {"key": key, "ms": ms}, recorded for the checker. */
void fr_enqueue(world *w, const char *key, long ms);

#endif
