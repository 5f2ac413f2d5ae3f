/* The fault suite's history checker: what was enqueued (and what the enqueue said),
 * every start and end of every run (from the jobs' log), and every fault done to a
 * pool, checked against what cwork promises:
 *
 *   - no job lost: every job whose enqueue succeeded ends at least once, and every job
 *     that started ends;
 *   - nothing from a failed enqueue: a job whose enqueue reported an error reply
 *     (nothing written) never starts;
 *   - every duplicate explained: a job starts again only after a run of it was
 *     interrupted by a fault of its pool (SIGKILL, or SIGSTOP past the dead time)
 *     while it ran or before its pool could commit it;
 *   - recovery: the time from such a fault to the job's next start;
 *   - max concurrency: runs of a limited type never overlap more than its limit,
 *     counting a run of a faulted pool only until the fault (after it, a reaper gave
 *     its slot away while the orphaned command may still run: that is the price of
 *     at-least-once, and counted separately).
 *
 * Pure functions over arrays: table-tested in test_history.c. */
#ifndef CWORK_FAULTS_HISTORY_H
#define CWORK_FAULTS_HISTORY_H

#include <stddef.h>

#define FH_ID 40
#define FH_NAME 24
#define FH_POOL 16

typedef enum fh_enqueue_status {
    FH_ENQ_OK,      /* written */
    FH_ENQ_FAILED,  /* an error reply: nothing written */
    FH_ENQ_UNKNOWN, /* the connection failed after sending: written or not */
} fh_enqueue_status;

typedef struct fh_enqueue {
    char id[FH_ID];
    char name[FH_NAME];
    fh_enqueue_status status;
    long long at_ms;
} fh_enqueue;

/* One line of the jobs' log: 'S' (start) or 'E' (end). */
typedef struct fh_event {
    char kind;
    char id[FH_ID];
    char name[FH_NAME];
    char pool[FH_POOL];
    long long t_ms;
} fh_event;

/* A fault done to one pool: 'K' SIGKILL at at_ms; 'S' SIGSTOP at at_ms until until_ms
 * (SIGCONT, or when it was killed); 'L' the pool lost its lease at at_ms and stopped
 * its running jobs (README "Leases"); 'R' the Redis master the pool used was SIGKILLed
 * at at_ms and a replica promoted (fault_ha.c: one for every pool), so that a fetch or
 * a commit of a run in flight then, or ended just before, may not have reached the
 * promoted replica and the job runs again. */
typedef struct fh_fault {
    char kind;
    char pool[FH_POOL];
    long long at_ms, until_ms;
} fh_fault;

typedef struct fh_limit {
    const char *name;
    int max;
} fh_limit;

/* How long after a command ended its pool may still be committing it: a fault that
 * soon after still explains a rerun. */
#define FH_COMMIT_SLACK_MS 2000
/* How long a command forked before a fault may take to write its start line: a fault
 * that long before a start still cut that run. */
#define FH_START_SLACK_MS 1000

#define FH_SHOWN 8 /* ids kept for each kind of violation */

typedef struct fh_report {
    size_t enqueued_ok, enqueued_failed, enqueued_unknown;
    size_t runs, jobs_run;
    size_t lost;            /* written (or started) and never ended */
    size_t ran_not_written; /* started although the enqueue said nothing was written */
    size_t duplicates;      /* extra starts */
    size_t explained, unexplained;
    size_t interrupted; /* runs cut by a fault of their pool */
    size_t recoveries;  /* interrupted runs restarted elsewhere */
    size_t unrecovered; /* interrupted runs not restarted within their bound */
    long long longest_recovery_ms;
    int max_seen;       /* the worst overlap of a limited type, faults counted */
    int max_exceeded;   /* ...above its limit */
    int orphan_overlap; /* the worst overlap counting orphaned commands too */
    char lost_ids[FH_SHOWN][FH_ID];
    char unexplained_ids[FH_SHOWN][FH_ID];
    char not_written_ids[FH_SHOWN][FH_ID];
} fh_report;

/* Parses the log's lines into *events (malloc'd; *n of them). Lines that are not
 * well-formed are counted in *bad. 0, or -1 when out of memory. */
int fh_parse_log(const char *text, size_t len, fh_event **events, size_t *n, size_t *bad);

/* Checks the history (events are sorted by time here, ends before starts at one
 * millisecond). recovery_bound_ms: a stop fault's run not restarted within this bound
 * of the fault (and before its SIGCONT) counts as unrecovered. */
void fh_check(const fh_enqueue *enq, size_t nenq, fh_event *events, size_t nev,
              const fh_fault *faults, size_t nfaults, const fh_limit *limits, size_t nlimits,
              long long recovery_bound_ms, fh_report *out);

#endif
