/* cwork work: a worker pool that runs every job as a shell command in a child process
 * (child.c), for hard isolation and timeouts that in-process handlers cannot have.
 *
 * Threads: the pool's executors each supervise one child at a time; the main thread
 * waits for SIGINT/SIGTERM with sigtimedwait (both blocked in every thread, which
 * inherit the mask from here) and draws the progress line; a stopper thread runs the
 * graceful cwork_pool_stop so that a second signal is still seen while it waits. */
#define _GNU_SOURCE
#include "child.h"
#include "cli.h"
#include "opt.h"
#include "work.h"
#include "work_metrics.h"
#include "work_text.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const char intro[] =
    "Usage: cwork work [--redis URL] [--ns NS] [--concurrency N] [--shards S]\n"
    "                  [--grace SECONDS]\n"
    "                  [--progress] [--quiet] [--metrics-listen ADDR]\n"
    "                  [--rate-limit NAME=N/DURATION ...]\n"
    "                  --job NAME=COMMAND [JOB OPTIONS] [--job ...]\n"
    "\n"
    "Runs a worker pool that takes jobs from the queues NAME (filled by `cwork enqueue`\n"
    "or by Go's gocraft/work) and runs each one as `/bin/sh -c COMMAND` in a child\n"
    "process. Exit status 0 means success; 100 means \"failed, do not retry\": the job\n"
    "goes to the dead set at once (dropped under --skip-dead); anything else fails the\n"
    "job, which is then retried with backoff, sent to the dead set, or dropped, as its\n"
    "options say. Delivery is at least once: a job can run twice, so COMMAND must be\n"
    "idempotent.\n"
    "\n"
    "What COMMAND gets:\n"
    "  stdin              the job's JSON, exactly as stored in Redis\n"
    "  CWORK_JOB_ID       the job's id\n"
    "  CWORK_JOB_NAME     the job's name\n"
    "  CWORK_JOB_ARGS     the job's args as JSON (left out above 64 KiB: read stdin)\n"
    "  CWORK_JOB_FAILS    how many times the job failed before this run\n"
    "  CWORK_ARG_<KEY>    each top-level arg: KEY upper-cased, every character but\n"
    "                     A-Z and 0-9 as _ ({\"user-id\": 7} gives CWORK_ARG_USER_ID=7);\n"
    "                     strings as they are, other values as JSON (numbers, true,\n"
    "                     null, [..], {..}); of two keys giving one name, the first in\n"
    "                     sorted order; all left out with CWORK_JOB_ARGS above 64 KiB\n"
    "  and the rest of cwork's environment (inherited CWORK_JOB_* and CWORK_ARG_*\n"
    "  variables excepted).\n"
    "  File descriptor 3 takes check-ins: each line written to it, e.g.\n"
    "  `echo \"50%\" >&3`, becomes the job's check-in shown by the web UI.\n"
    "  File descriptor 4 ($CWORK_RESULT_FD) takes the job's result: what a command\n"
    "  that succeeds wrote there (at most 1 MiB; more fails the job) is kept for the\n"
    "  result TTL and read with `cwork result ID`; nothing written, no result.\n"
    "  No process of a command outlives it: when the command ends, and when cwork dies\n"
    "  in any way (SIGKILL included), every process it started is killed (SIGKILL),\n"
    "  background ones and those that left its process group or session included.\n"
    "\n"
    "What cwork does with its output:\n"
    "  stdout and stderr lines are passed through to cwork's own, each prefixed with\n"
    "  \"[NAME ID] \". A failing job's error (its `err` in Redis, shown by the web UI)\n"
    "  is the last 10 non-blank lines of its stderr, at most 1 KiB (whole lines from\n"
    "  the end), else \"exit status N\" or \"killed by signal S\"; after --timeout, that\n"
    "  and \"timed out after N s\".\n"
    "\n"
    "What cwork says (on stderr, like all its own lines; stdout carries only the\n"
    "commands' stdout), one line per job outcome unless --quiet:\n"
    "  cwork work: [NAME ID] started               (or \"started (retry N)\")\n"
    "  cwork work: [NAME ID] done in 0.84 s\n"
    "  cwork work: [NAME ID] failed in 0.84 s: ERROR -> retry in 16 s\n"
    "  cwork work: [NAME ID] failed in 0.84 s: ERROR -> dead\n"
    "  ERROR is the error's last line; after the last \" -> \": retry in N s, dead,\n"
    "  dead (no retry: exit status 100), dropped (--skip-dead) or dropped (no retry: ...).\n";

static const char outro[] =
    "For example,\n"
    "  cwork work --job resize='./resize.sh' --timeout 60 --job mail='./mail.sh'\n"
    "runs resize jobs for at most 60 s each and mail jobs without a limit.\n"
    "\n"
    "With --go-flavor upstream, periodic instances are written as gocraft/work v0.5\n"
    "writes them (no d), so that its pools and this one schedule each fire time once;\n"
    "either way unique jobs of both flavours are handled. With --go-json go1.21,\n"
    "periodic instances of names holding U+0008/U+000C spell them as Go 1.19-1.21\n"
    "does; guards are released in both spellings either way (cwork --help).\n"
    "\n"
    "Retries wait fails^4 + 15 + R*(fails + 1) seconds as in Go, R in 0-29 drawn from\n"
    "the job's id, so that the outcome line can say the delay.\n"
    "\n"
    "Durations (--grace, --reap-period, --dead-check, --timeout, --kill-grace,\n"
    "--result-ttl, --keep-succeeded-for) are seconds (30, 0.5) or 90s, 15m, 1h, 1d,\n"
    "1h30m; none is negative.\n"
    "\n"
    "Stopping: the first SIGINT or SIGTERM stops fetching and waits up to the grace for\n"
    "running commands to finish. A second one stops at once: running commands are\n"
    "killed with all their processes and their jobs stay in progress in Redis, where\n"
    "the dead pool reaper (of any cwork or Go pool) puts them back in their queues.\n"
    "\n"
    "Exit status: 0 after a clean stop, 1 when Redis failed or the stop did not finish\n"
    "in time (or was cut short), 2 for a bad command line.\n";

/* ---------------------------------------------------------------- options */

static int add_job(work_opts *o, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1]) {
        fprintf(stderr, "cwork work: --job needs NAME=COMMAND, got \"%s\"\n", spec);
        return -1;
    }
    char *name = strndup(spec, (size_t)(eq - spec));
    cwork_error err = {0};
    if (!name || cwork_validate_job_name(name, &err) != 0) {
        fprintf(stderr, "cwork work: --job %s: %s\n", spec, name ? err.message : "out of memory");
        free(name);
        return -1;
    }
    for (size_t i = 0; i < o->njobs; i++)
        if (strcmp(o->jobs[i].name, name) == 0) {
            fprintf(stderr, "cwork work: job %s is given twice\n", name);
            free(name);
            return -1;
        }
    work_job *jobs = realloc(o->jobs, (o->njobs + 1) * sizeof *jobs);
    if (!jobs) {
        free(name);
        return -1;
    }
    o->jobs = jobs;
    work_job *j = &o->jobs[o->njobs++];
    memset(j, 0, sizeof *j);
    j->name = name;
    j->command = eq + 1;
    cwork_job_options_init(&j->opts);
    j->kill_grace_ms = 5000;
    work_counts *c = &j->counts;
    atomic_init(&c->processed, 0), atomic_init(&c->failed, 0), atomic_init(&c->retried, 0);
    atomic_init(&c->dead, 0), atomic_init(&c->dropped, 0), atomic_init(&c->running, 0);
    return 0;
}

/* True when word could only be a cron field (digits, *, ?, and , - / between them):
 * "--periodic '0 * * * * *'" without a name would otherwise schedule a job named "*". */
static int is_cron_field(const char *word)
{
    return *word && strspn(word, "0123456789*?,-/") == strlen(word);
}

/* Each --rate-limit NAME=N/DURATION into the options of --job NAME. */
static int apply_rate_limits(work_opts *o)
{
    for (size_t i = 0; i < o->nrate_limits; i++) {
        const char *v = o->rate_limits[i], *eq = strrchr(v, '=');
        work_job *j = NULL;
        for (size_t k = 0; eq && k < o->njobs; k++)
            if (strlen(o->jobs[k].name) == (size_t)(eq - v) &&
                !memcmp(o->jobs[k].name, v, (size_t)(eq - v)))
                j = &o->jobs[k];
        if (!eq) {
            fprintf(stderr, "cwork work: --rate-limit needs NAME=N/DURATION, e.g. mail=100/1s\n");
            return -1;
        }
        if (!j) {
            fprintf(stderr, "cwork work: --rate-limit %s: no --job %.*s given\n", v, (int)(eq - v),
                    v);
            return -1;
        }
        const char *slash = strchr(eq, '/');
        if (eq[1] == '-' || (slash && slash[1] == '-')) { /* the library: "want N/DURATION" */
            fprintf(stderr, "cwork work: --rate-limit %s: N and DURATION cannot be negative\n", v);
            return -1;
        }
        cwork_error err = {0};
        if (cwork_rate_limit_parse(eq + 1, &j->opts.rate_limit, &j->opts.rate_limit_window_ms,
                                   &err) != 0) {
            fprintf(stderr, "cwork work: --rate-limit %s: %s\n", v, err.message);
            return -1;
        }
    }
    return 0;
}

/* The range and the "needs ..." of each number and duration option, by name:
 * durations in milliseconds, those of reap-period and dead-check in whole seconds. */
typedef struct work_bound {
    const char *name;
    int64_t min, max;
    const char *want;
} work_bound;

static const work_bound bounds[] = {
    {"concurrency", 1, 10000, "a number from 1 to 10000"},
    {"shards", 1, 1024, "a number of shards from 1 to 1024"},
    {"grace", 0, INT32_MAX, "a duration (30, 0.5, 90s, 15m)"},
    {"reap-period", 1, 86400, "whole seconds from 1 to 86400 (or 90s, 15m, 1h, 1d)"},
    {"dead-check", 1, 86400, "whole seconds from 1 to 86400 (or 90s, 15m, 1h, 1d)"},
    {"priority", 1, 100000, "a number from 1 to 100000"},
    {"max-fails", 1, UINT32_MAX, "a positive number"},
    {"max-concurrency", 0, UINT32_MAX, "a number (0 = no limit)"},
    {"keep-succeeded", 0, UINT32_MAX, "a number (0 = keep none)"},
    {"timeout", 1, INT64_MAX, "a positive duration (30, 0.5, 90s, 15m, 1h)"},
    {"kill-grace", 0, INT64_MAX, "a duration (5, 0.5, 90s, 1m)"},
    {"result-ttl", 1, INT64_MAX, "a positive duration (1h, 7d)"},
    {"keep-succeeded-for", 1, INT64_MAX, "a positive duration (1h, 7d)"},
};

/* The row's bounds; NULL (said) for a row with these setters that bounds[] lacks, a
 * slip of this file. */
static const work_bound *bound_of(const cli_opt_ctx *ctx)
{
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++)
        if (strcmp(bounds[i].name, ctx->opt->name) == 0) return &bounds[i];
    fprintf(stderr, "cwork work: --%s has no bounds (a bug)\n", ctx->opt->name);
    return NULL;
}

/* A number into the unsigned at the row's field of base (the options or a job). */
static int set_count(void *base, const char *value, const cli_opt_ctx *ctx)
{
    const work_bound *b = bound_of(ctx);
    uint64_t n;
    if (!b || cli_opt_uint(ctx, value, (uint64_t)b->min, (uint64_t)b->max, b->want, &n) != 0)
        return -1;
    *(unsigned *)(void *)((char *)base + ctx->opt->field) = (unsigned)n;
    return 0;
}

/* A duration into the int64_t milliseconds at the row's field of base. */
static int set_ms(void *base, const char *value, const cli_opt_ctx *ctx)
{
    const work_bound *b = bound_of(ctx);
    int64_t *field = (int64_t *)(void *)((char *)base + ctx->opt->field);
    return b ? cli_opt_duration_ms(ctx, value, b->min, b->max, b->want, field) : -1;
}

/* --reap-period and --dead-check: whole seconds into the unsigned at the row's field. */
static int set_seconds(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    const work_bound *b = bound_of(ctx);
    int64_t secs;
    if (!b || cli_opt_duration_s(ctx, value, b->min, b->max, b->want, &secs) != 0) return -1;
    *(unsigned *)(void *)((char *)opts + ctx->opt->field) = (unsigned)secs;
    return 0;
}

/* The --job a job option applies to: the last one given; NULL (said) before the first. */
static work_job *last_job(work_opts *o, const cli_opt_ctx *ctx)
{
    if (o->njobs > 0) return &o->jobs[o->njobs - 1];
    fprintf(stderr, "cwork work: --%s applies to the --job it follows; give it after one\n",
            ctx->spelled);
    return NULL;
}

static int set_job_count(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    work_job *j = last_job(opts, ctx);
    return j ? set_count(j, value, ctx) : -1;
}

static int set_job_ms(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    work_job *j = last_job(opts, ctx);
    return j ? set_ms(j, value, ctx) : -1;
}

static int set_skip_dead(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    (void)value;
    work_job *j = last_job(opts, ctx);
    if (j) j->opts.skip_dead = true;
    return j ? 0 : -1;
}

static int set_job(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    (void)ctx;
    return add_job(opts, value);
}

static int set_periodic(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    work_opts *o = opts;
    (void)ctx;
    if (o->nperiodic == sizeof o->periodic / sizeof o->periodic[0]) {
        fprintf(stderr, "cwork work: too many --periodic\n");
        return -1;
    }
    const char *last = strrchr(value, ' ');
    if (!last) {
        fprintf(stderr, "cwork work: --periodic needs 'SPEC NAME', e.g. '*/5 * * * * report'\n");
        return -1;
    }
    if (is_cron_field(last + 1)) {
        fprintf(stderr,
                "cwork work: --periodic '%s': the last word \"%s\" is part of a schedule, not "
                "a job name; give 'SPEC NAME', e.g. '%s report'\n",
                value, last + 1, value);
        return -1;
    }
    o->periodic[o->nperiodic++] = value;
    return 0;
}

static int set_rate_limit(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    work_opts *o = opts;
    (void)ctx;
    if (o->nrate_limits == sizeof o->rate_limits / sizeof o->rate_limits[0]) {
        fprintf(stderr, "cwork work: too many --rate-limit\n");
        return -1;
    }
    o->rate_limits[o->nrate_limits++] = value; /* checked once every --job is in */
    return 0;
}

/* --progress and --no-progress. */
static int set_progress(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    (void)value;
    ((work_opts *)opts)->progress = strcmp(ctx->opt->name, "progress") == 0 ? 1 : -1;
    return 0;
}

static int set_metrics_listen(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    char host[256], port[8];
    (void)ctx;
    if (work_listen_split(value, host, sizeof host, port, sizeof port) != 0) {
        fprintf(stderr,
                "cwork work: --metrics-listen needs PORT, HOST:PORT or [V6]:PORT (e.g. 9090, "
                "127.0.0.1:9090, 0.0.0.0:9090), got \"%s\"\n",
                value);
        return -1;
    }
    ((work_opts *)opts)->metrics_listen = value;
    return 0;
}

static int take_positional(void *opts, const char *arg)
{
    (void)opts;
    fprintf(stderr,
            "cwork work: unexpected argument \"%s\" (jobs are given as --job NAME=COMMAND)\n", arg);
    return -1;
}

static const cli_opt work_options[] = {
    {"job", NULL, CLI_ARG_REQUIRED, "NAME=COMMAND",
     "run jobs NAME with COMMAND (repeat for more job types)", set_job, 0, 0, NULL, 0},
    {"concurrency", NULL, CLI_ARG_REQUIRED, "N", "commands running at once, 1-10000 (default 10)",
     set_count, offsetof(work_opts, concurrency), 0, NULL, 0},
    {"shards", NULL, CLI_ARG_REQUIRED, "S",
     "the namespace has S shards (README \"Sharding\"): written to its\n"
     "record when there is none, refused when it says otherwise;\n"
     "without it the pool follows the record (or the URL's shards=)",
     set_count, offsetof(work_opts, shards), 0, NULL, 0},
    {"grace", NULL, CLI_ARG_REQUIRED, "SECONDS",
     "how long a stop waits for running commands (default 30)", set_ms,
     offsetof(work_opts, grace_ms), 0, NULL, 0},
    {"periodic", NULL, CLI_ARG_REQUIRED, "'SPEC NAME'",
     "enqueue job NAME on the cron schedule SPEC (robfig/cron as\n"
     "the Go library: optional seconds field, @hourly, @every 5m,\n"
     "TZ=Europe/Berlin prefix); repeatable; give every pool of the\n"
     "namespace the same periodic jobs (docs/PROTOCOL.md §10.2)",
     set_periodic, 0, 0, NULL, 0},
    {"reap-period", NULL, CLI_ARG_REQUIRED, "S",
     "full dead pool reaper cycle every S (+0-29) seconds (default\n"
     "300, as the Go library)",
     set_seconds, offsetof(work_opts, reap_period_s), 0, NULL, 0},
    {"dead-check", NULL, CLI_ARG_REQUIRED, "S",
     "look for pools with stale heartbeats every S seconds and reap\n"
     "at once when there is one (default 5)",
     set_seconds, offsetof(work_opts, dead_check_s), 0, NULL, 0},
    {"rate-limit", NULL, CLI_ARG_REQUIRED, "NAME=N/DURATION",
     "at most N jobs NAME start per DURATION (ms, s, m or h: 100/1s,\n"
     "5000/1m), spaced evenly, across every cwork pool of the\n"
     "namespace; repeatable. Written to the namespace's setting at\n"
     "start, which `cwork limit` changes while pools run. Go pools\n"
     "ignore it (cwork warns when one runs a limited type)",
     set_rate_limit, 0, 0, NULL, 0},
    {"progress", NULL, CLI_ARG_NONE, NULL,
     "print processed/failed/rate/in-flight counts every 5 s;\n"
     "on a terminal they are shown in place every second anyway",
     set_progress, 0, 0, NULL, 0},
    {"no-progress", NULL, CLI_ARG_NONE, NULL, "not even on a terminal", set_progress, 0, 0, NULL,
     0},
    {"quiet", "q", CLI_ARG_NONE, NULL,
     "no outcome lines (the commands' output and cwork's start,\n"
     "stop and error lines still appear)",
     cli_set_flag, offsetof(work_opts, quiet), 0, NULL, 0},
    {"metrics-listen", NULL, CLI_ARG_REQUIRED, "ADDR",
     "serve http://ADDR/metrics (Prometheus text: jobs processed,\n"
     "failed, retried, dead, dropped and running per job name,\n"
     "uptime, health) and /healthz (200 while this pool's heartbeat\n"
     "in Redis is under 10 s old, which needs Redis to answer; 503\n"
     "with the reason otherwise). ADDR: PORT or :PORT (loopback),\n"
     "HOST:PORT, [V6]:PORT; 0.0.0.0:PORT for every interface, port 0\n"
     "for any free one (the URL is printed). No auth: counts only.",
     set_metrics_listen, 0, 0, NULL, 0},
    CLI_CONN_OPTS(work_opts, conn),
    CLI_HEADING("Job options apply to the --job they follow (and must follow one):"),
    {"priority", NULL, CLI_ARG_REQUIRED, "N", "weight in queue selection, 1-100000 (default 1)",
     set_job_count, offsetof(work_job, opts.priority), 0, NULL, 0},
    {"max-fails", NULL, CLI_ARG_REQUIRED, "N",
     "runs before the job goes to the dead set (default 4;\n"
     "1 = no retry)",
     set_job_count, offsetof(work_job, opts.max_fails), 0, NULL, 0},
    {"skip-dead", NULL, CLI_ARG_NONE, NULL, "drop a failing job at once: no retry, no dead set",
     set_skip_dead, 0, 0, NULL, 0},
    {"max-concurrency", NULL, CLI_ARG_REQUIRED, "N",
     "at most N jobs of this type running across all pools", set_job_count,
     offsetof(work_job, opts.max_concurrency), 0, NULL, 0},
    {"timeout", NULL, CLI_ARG_REQUIRED, "SECONDS",
     "then SIGTERM to every process of the command, SIGKILL after\n"
     "the kill grace; the job fails with \"timed out after N s\"",
     set_job_ms, offsetof(work_job, timeout_ms), 0, NULL, 0},
    {"kill-grace", NULL, CLI_ARG_REQUIRED, "SECONDS",
     "between that SIGTERM and SIGKILL (default 5); a job\n"
     "cancelled while it runs (cwork cancel ID) gets the same\n"
     "two steps and goes to the dead set as \"cancelled\"",
     set_job_ms, offsetof(work_job, kill_grace_ms), 0, NULL, 0},
    {"result-ttl", NULL, CLI_ARG_REQUIRED, "DURATION", "how long a result is kept (default 24h)",
     set_job_ms, offsetof(work_job, opts.result_ttl_ms), 0, NULL, 0},
    {"keep-succeeded", NULL, CLI_ARG_REQUIRED, "N",
     "keep the last N succeeded jobs for `cwork succeeded`\n"
     "(default 0: none)",
     set_job_count, offsetof(work_job, opts.keep_succeeded), 0, NULL, 0},
    {"keep-succeeded-for", NULL, CLI_ARG_REQUIRED, "DURATION",
     "and none older than this (default 7d)", set_job_ms,
     offsetof(work_job, opts.keep_succeeded_ms), 0, NULL, 0},
    CLI_HELP_OPT,
    CLI_OPT_END};

const cli_command cli_work_command = {
    .name = "work",
    .intro = intro,
    .outro = outro,
    .opts = work_options,
    .seen_field = CLI_NO_SEEN,
};

/* 0 to go on, 1 when --help was printed, -1 on a bad command line (reported). */
static int parse_options(int argc, char **argv, work_opts *o)
{
    int p = cli_parse(&cli_work_command, "cwork work", argc, argv, 2, o, take_positional);
    if (p != 0) return p;
    if (o->njobs == 0) {
        fprintf(stderr, "cwork work: no --job NAME=COMMAND given (see cwork work --help)\n");
        return -1;
    }
    if (apply_rate_limits(o) != 0) return -1;
    if (cli_go_json(&o->conn, &o->go_json) < 0) return -1;
    return cli_go_flavor(&o->conn, &o->flavor);
}

static void free_opts(work_opts *o)
{
    for (size_t i = 0; i < o->njobs; i++)
        free(o->jobs[i].name);
    free(o->jobs);
}

/* ---------------------------------------------------------------- progress */

typedef struct progress_state {
    int mode;        /* 0 none, 1 in place (terminal), 2 plain lines */
    int64_t period;  /* ms */
    int64_t next_at; /* monotonic ms */
    uint64_t last_processed;
} progress_state;

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "N processed, N failed[, R/s], N in flight"; the rate over `seconds` when > 0. */
static void format_stats(const cwork_pool *pool, char *line, size_t size, double seconds,
                         uint64_t *last_processed)
{
    cwork_pool_stats st;
    cwork_pool_get_stats(pool, &st);
    uint64_t processed = st.succeeded + st.failed;
    char rate[48] = "";
    if (seconds > 0)
        snprintf(rate, sizeof rate, ", %.1f/s", (double)(processed - *last_processed) / seconds);
    *last_processed = processed;
    snprintf(line, size, "%" PRIu64 " processed, %" PRIu64 " failed%s, %" PRIu64 " in flight",
             processed, st.failed, rate, st.in_flight);
}

static void progress_tick(const cwork_pool *pool, progress_state *ps)
{
    int64_t now = mono_ms();
    if (ps->mode == 0 || now < ps->next_at) return;
    char stats[200], line[256];
    format_stats(pool, stats, sizeof stats, (double)(now - ps->next_at + ps->period) / 1000.0,
                 &ps->last_processed);
    snprintf(line, sizeof line, "cwork work: %s", stats);
    if (ps->mode == 1)
        child_status_line(line);
    else
        fprintf(stderr, "%s\n", line);
    ps->next_at = now + ps->period;
}

/* ---------------------------------------------------------------- running and stopping */

typedef struct stopper {
    cwork_pool *pool;
    int64_t grace_ms;
    int rc;
    cwork_error err;
    atomic_int done;
} stopper;

static void *stopper_main(void *arg)
{
    stopper *st = arg;
    st->rc = cwork_pool_stop(st->pool, st->grace_ms, &st->err);
    atomic_store(&st->done, 1);
    return NULL;
}

/* Gives up on the running commands: kills their process groups and exits without
 * freeing anything, because executor threads are still inside their handlers (which
 * now never return, so nothing is committed). The heartbeat goes stale and a reaper
 * puts the jobs back in their queues. */
static _Noreturn void exit_now(const char *why)
{
    child_status_line(NULL);
    child_abort_all();
    fprintf(stderr,
            "cwork work: %s: running commands killed; their jobs stay in progress "
            "for the dead pool reaper\n",
            why);
    fflush(stdout);
    fflush(stderr);
    _exit(CLI_FAILURE);
}

/* Descriptors 0-2 that are closed would be taken by the next open (a Redis socket),
 * and a command's passed-through output would then go into it. */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
            open("/dev/null", O_RDWR) < 0) /* takes the lowest free fd: this one */
            return;
}

/* Each running command holds 5 of our descriptors (4 pipes and a pidfd), 9 while it
 * starts: with a high concurrency the usual soft limit of 1024 would make spawns fail.
 * Raised as far as the hard limit allows; the commands inherit the raised limit. */
static void raise_fd_limit(unsigned concurrency)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)concurrency * 10 + 256;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need) return;
    rlim_t want = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need ? rl.rlim_max : need;
    if (want > rl.rlim_cur) {
        rl.rlim_cur = want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (want < need)
        fprintf(stderr,
                "cwork work: warning: the open files limit (%llu) may be too low for "
                "concurrency %u\n",
                (unsigned long long)want, concurrency);
}

/* The pool of the command's options, or NULL (said on stderr). */
static cwork_pool *new_pool(work_opts *o, cwork_redis *redis)
{
    cwork_error err = {0};
    cwork_pool_options po;
    cwork_pool_options_init(&po);
    po.concurrency = o->concurrency;
    po.shards = o->shards;
    po.go_flavor = o->flavor;
    po.go_json = o->go_json;
    po.userdata = o;
    if (o->reap_period_s) /* the command takes seconds; the library milliseconds */
        po.reap_period_ms = (int64_t)o->reap_period_s * 1000;
    if (o->dead_check_s) po.dead_check_ms = (int64_t)o->dead_check_s * 1000;
    cwork_pool *pool = cwork_pool_new(redis, o->conn.ns, &po, &err);
    if (!pool) fprintf(stderr, "cwork work: %s\n", err.message);
    return pool;
}

/* Registers every --job; CLI_OK or CLI_FAILURE (said on stderr). */
static int register_jobs(work_opts *o, cwork_pool *pool)
{
    cwork_error err = {0};
    for (size_t i = 0; i < o->njobs; i++) {
        work_job *j = &o->jobs[i];
        /* The library only warns when a job passes its deadline; set it past our own
         * kill, so that the warning means the kill did not end the job. */
        if (j->timeout_ms > 0) j->opts.timeout_ms = j->timeout_ms + j->kill_grace_ms + 1000;
        j->opts.backoff = work_backoff;
        if (cwork_pool_register(pool, j->name, work_run_job, &j->opts, &err) != 0) {
            fprintf(stderr, "cwork work: %s\n", err.message);
            return CLI_FAILURE;
        }
    }
    return CLI_OK;
}

/* Registers every --periodic ('<cron spec> <name>'); CLI_OK or CLI_USAGE (said on
 * stderr). A name no --job here runs gets a note. */
static int register_periodic(const work_opts *o, cwork_pool *pool)
{
    cwork_error err = {0};
    for (size_t i = 0; i < o->nperiodic; i++) {
        /* The name is the last word; the spec (which has spaces) is the rest. */
        const char *v = o->periodic[i];
        const char *space = strrchr(v, ' ');
        char spec[512];
        size_t len = (size_t)(space - v);
        while (len > 0 && v[len - 1] == ' ')
            len--;
        if (len >= sizeof spec || len == 0) {
            fprintf(stderr, "cwork work: --periodic '%s': no cron spec before the name\n", v);
            return CLI_USAGE;
        }
        memcpy(spec, v, len);
        spec[len] = '\0';
        if (cwork_pool_periodically_enqueue(pool, spec, space + 1, &err) != 0) {
            fprintf(stderr, "cwork work: --periodic '%s': %s\n", v, err.message);
            return CLI_USAGE;
        }
        int handled = 0;
        for (size_t j = 0; j < o->njobs; j++)
            handled |= strcmp(o->jobs[j].name, space + 1) == 0;
        if (!handled)
            fprintf(stderr, "cwork work: note: no --job %s here; another pool must run it\n",
                    space + 1);
    }
    return CLI_OK;
}

/* Binds --metrics-listen (before the pool starts: a port in use stops us before
 * anything is written), then starts the pool. CLI_OK with *metrics set (NULL without
 * the option), or CLI_FAILURE (said on stderr; nothing left running). */
static int start_pool(work_opts *o, cwork_pool *pool, cwork_redis *redis, work_metrics **metrics)
{
    *metrics = NULL;
    char why[300];
    if (o->metrics_listen) {
        *metrics = work_metrics_start(o, pool, redis, why, sizeof why);
        if (!*metrics) {
            fprintf(stderr, "cwork work: --metrics-listen %s: %s\n", o->metrics_listen, why);
            return CLI_FAILURE;
        }
    }
    cwork_error err = {0};
    if (cwork_pool_start(pool, &err) != 0) {
        fprintf(stderr, "cwork work: cannot start the pool: %s\n", err.message);
        work_metrics_stop(*metrics);
        *metrics = NULL;
        return CLI_FAILURE;
    }
    fprintf(stderr,
            "cwork work: pool %s started in namespace %s: %zu job type%s, "
            "concurrency %u\n",
            cwork_pool_id(pool), o->conn.ns, o->njobs, o->njobs == 1 ? "" : "s", o->concurrency);
    if (*metrics) {
        if (work_metrics_pool_started(*metrics, why, sizeof why) != 0)
            fprintf(stderr, "cwork work: warning: /healthz stays 503: %s\n", why);
        fprintf(stderr, "cwork work: metrics on %s/metrics, health on %s/healthz\n",
                work_metrics_url(*metrics), work_metrics_url(*metrics));
    }
    return CLI_OK;
}

/* Shows progress until the first SIGINT/SIGTERM, then stops the pool on another thread
 * (a second signal ends the process at once); returns the stop's result in *st. */
static void run_until_stopped(const work_opts *o, cwork_pool *pool, const sigset_t *sigs,
                              stopper *st)
{
    progress_state ps = {0};
    if (o->progress >= 0 && isatty(2))
        ps.mode = 1, ps.period = 1000;
    else if (o->progress > 0)
        ps.mode = 2, ps.period = 5000;
    ps.next_at = mono_ms() + ps.period;

    pthread_t stop_thread;
    int signals = 0, joinable = 0;
    for (;;) {
        struct timespec wait = {0, 50 * 1000000L};
        int sig = sigtimedwait(sigs, NULL, &wait);
        if (sig > 0 && ++signals == 1) {
            child_status_line(NULL);
            fprintf(stderr,
                    "cwork work: %s: stopping; running commands get up to %g s to "
                    "finish (signal again to stop at once)\n",
                    sig == SIGINT ? "SIGINT" : "SIGTERM", (double)o->grace_ms / 1000.0);
            if (pthread_create(&stop_thread, NULL, stopper_main, st) == 0)
                joinable = 1;
            else
                stopper_main(st); /* no second signal while it waits, but a stop */
        } else if (sig > 0 && !atomic_load(&st->done)) {
            exit_now("second signal");
        }
        if (signals && atomic_load(&st->done)) break;
        progress_tick(pool, &ps);
    }
    if (joinable) pthread_join(stop_thread, NULL);
}

static int run_pool(work_opts *o, cwork_redis *redis, const sigset_t *sigs)
{
    cwork_pool *pool = new_pool(o, redis);
    if (!pool) return CLI_FAILURE;
    work_metrics *metrics = NULL;
    int rc = register_jobs(o, pool);
    if (rc == CLI_OK) rc = register_periodic(o, pool);
    if (rc == CLI_OK) rc = start_pool(o, pool, redis, &metrics);
    if (rc != CLI_OK) {
        cwork_pool_free(pool);
        return rc;
    }
    stopper st = {.pool = pool, .grace_ms = o->grace_ms};
    atomic_init(&st.done, 0);
    run_until_stopped(o, pool, sigs, &st);
    child_status_line(NULL);
    if (st.rc == CWORK_ETIMEOUT) exit_now("grace period over");
    char line[256];
    uint64_t unused = 0;
    format_stats(pool, line, sizeof line, 0, &unused);
    fprintf(stderr, "cwork work: stopped%s%s; %s\n", st.rc ? ": " : "", st.rc ? st.err.message : "",
            line);
    work_metrics_stop(metrics);
    cwork_pool_free(pool);
    return st.rc ? CLI_FAILURE : CLI_OK;
}

int cmd_work(int argc, char **argv)
{
    work_opts o = {0};
    o.conn.ns = "work";
    o.concurrency = 10;
    o.grace_ms = 30000;
    int p = parse_options(argc, argv, &o);
    if (p != 0) {
        free_opts(&o);
        return p > 0 ? CLI_OK : CLI_USAGE;
    }
    ensure_std_fds();
    raise_fd_limit(o.concurrency);
    /* Before any thread exists, so that every thread inherits the mask and the signals
     * wait, pending, for sigtimedwait in this thread. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    /* A command closing its stdin early must not kill us (children get SIG_DFL back).
     * SIGCHLD ignored by whoever started us would make the kernel reap our children
     * before we can read their status. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_DFL);

    int status;
    cwork_redis *redis = cli_connect(&o.conn, &status);
    if (!redis) {
        free_opts(&o);
        return status;
    }
    int rc = run_pool(&o, redis, &sigs);
    cwork_redis_free(redis);
    free_opts(&o);
    return rc;
}
