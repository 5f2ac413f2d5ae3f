/* `cwork work`: what its parts share. cmd_work.c parses the command line and runs the
 * pool; work_job.c is the handler that runs one job's command (child.c) and reports its
 * outcome; work_metrics.c serves /metrics and /healthz (metrics_server.c). */
#ifndef CWORK_CLI_WORK_H
#define CWORK_CLI_WORK_H

#include "cli.h"

#include <stdatomic.h>
#include <stdint.h>

/* Per job type, counted by the handler when a command ends (a failure by where the
 * pool is about to send it); running while commands of the type run. */
typedef struct work_counts {
    atomic_uint_fast64_t processed, failed, retried, dead, dropped;
    atomic_int_fast64_t running;
} work_counts;

typedef struct work_job {
    char *name;
    const char *command; /* borrowed from argv */
    cwork_job_options opts;
    int64_t timeout_ms;
    int64_t kill_grace_ms;
    work_counts counts;
} work_job;

typedef struct work_opts {
    cli_conn_opts conn;
    unsigned concurrency;
    unsigned shards; /* --shards S: the namespace's shard count (0: the record's) */
    int64_t grace_ms;
    unsigned reap_period_s; /* 0: the library's default */
    unsigned dead_check_s;
    int progress;               /* -1: never, 0: on a terminal, 1: also as plain lines */
    int quiet;                  /* no outcome lines */
    const char *metrics_listen; /* --metrics-listen ADDR, or NULL */
    work_job *jobs;
    size_t njobs;
    const char *periodic[64]; /* --periodic 'SPEC NAME' values */
    size_t nperiodic;
    const char *rate_limits[64]; /* --rate-limit NAME=N/DURATION values */
    size_t nrate_limits;
    cwork_go_flavor flavor;
    cwork_go_json go_json;
} work_opts;

/* The pool's handler for every job type (the pool's userdata is the work_opts). */
int work_run_job(cwork_job *job, void *ctx);

/* Every job type's backoff: work_backoff_s, so that the outcome line can tell the
 * delay the pool then uses. */
int64_t work_backoff(const cwork_job *job, void *userdata);

#endif
