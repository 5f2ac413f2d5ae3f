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

static const char usage[] =
    "Usage: cwork work [--redis URL] [--ns NS] [--concurrency N] [--grace SECONDS]\n"
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
    "  dead (no retry: exit status 100), dropped (--skip-dead) or dropped (no retry: ...).\n"
    "\n"
    "Options:\n"
    "  --job NAME=COMMAND  run jobs NAME with COMMAND (repeat for more job types)\n"
    "  --concurrency N     commands running at once, 1-10000 (default 10)\n"
    "  --grace SECONDS     how long a stop waits for running commands (default 30)\n"
    "  --periodic 'SPEC NAME'\n"
    "                      enqueue job NAME on the cron schedule SPEC (robfig/cron as\n"
    "                      the Go library: optional seconds field, @hourly, @every 5m,\n"
    "                      TZ=Europe/Berlin prefix); repeatable; give every pool of the\n"
    "                      namespace the same periodic jobs (docs/PROTOCOL.md §10.2)\n"
    "  --reap-period S     full dead pool reaper cycle every S (+0-29) seconds (default\n"
    "                      300, as the Go library)\n"
    "  --dead-check S      look for pools with stale heartbeats every S seconds and reap\n"
    "                      at once when there is one (default 5)\n"
    "  --rate-limit NAME=N/DURATION\n"
    "                      at most N jobs NAME start per DURATION (ms, s, m or h: 100/1s,\n"
    "                      5000/1m), spaced evenly, across every cwork pool of the\n"
    "                      namespace; repeatable. Written to the namespace's setting at\n"
    "                      start, which `cwork limit` changes while pools run. Go pools\n"
    "                      ignore it (cwork warns when one runs a limited type)\n"
    "  --progress          print processed/failed/rate/in-flight counts every 5 s;\n"
    "                      on a terminal they are shown in place every second anyway\n"
    "  --no-progress       not even on a terminal\n"
    "  --quiet, -q         no outcome lines (the commands' output and cwork's start,\n"
    "                      stop and error lines still appear)\n"
    "  --metrics-listen ADDR\n"
    "                      serve http://ADDR/metrics (Prometheus text: jobs processed,\n"
    "                      failed, retried, dead, dropped and running per job name,\n"
    "                      uptime, health) and /healthz (200 while this pool's heartbeat\n"
    "                      in Redis is under 10 s old, which needs Redis to answer; 503\n"
    "                      with the reason otherwise). ADDR: PORT or :PORT (loopback),\n"
    "                      HOST:PORT, [V6]:PORT; 0.0.0.0:PORT for every interface, port 0\n"
    "                      for any free one (the URL is printed). No auth: counts only.\n"
    "  --redis URL, --ns NS, -redis, -ns: see cwork --help\n"
    "  --go-flavor fork|upstream  which Go library shares the namespace: upstream writes\n"
    "                      periodic instances as gocraft/work v0.5 does (no d), so that\n"
    "                      its pools and this one schedule each fire time once; either\n"
    "                      way unique jobs of both flavours are handled (cwork --help)\n"
    "  --go-json go1.22|go1.21  how the namespace's Go spells U+0008/U+000C: periodic\n"
    "                      instances of names holding them are written that way (cwork\n"
    "                      --help); guards are released in both spellings either way\n"
    "\n"
    "Job options apply to the --job they follow (and must follow one):\n"
    "  --priority N        weight in queue selection, 1-100000 (default 1)\n"
    "  --max-fails N       runs before the job goes to the dead set (default 4;\n"
    "                      1 = no retry)\n"
    "  --skip-dead         drop a failing job at once: no retry, no dead set\n"
    "  --max-concurrency N at most N jobs of this type running across all pools\n"
    "  --timeout SECONDS   then SIGTERM to every process of the command, SIGKILL after\n"
    "                      the kill grace; the job fails with \"timed out after N s\"\n"
    "  --kill-grace SECONDS  between that SIGTERM and SIGKILL (default 5); a job\n"
    "                      cancelled while it runs (cwork cancel ID) gets the same\n"
    "                      two steps and goes to the dead set as \"cancelled\"\n"
    "  --result-ttl DURATION   how long a result is kept (default 24h)\n"
    "  --keep-succeeded N  keep the last N succeeded jobs for `cwork succeeded`\n"
    "                      (default 0: none)\n"
    "  --keep-succeeded-for DURATION  and none older than this (default 7d)\n"
    "  e.g. cwork work --job resize='./resize.sh' --timeout 60 --job mail='./mail.sh'\n"
    "\n"
    "Retries wait fails^4 + 15 + R*(fails + 1) seconds as in Go, R in 0-29 drawn from\n"
    "the job's id, so that the outcome line can say the delay.\n"
    "\n"
    "Durations (--grace, --reap-period, --dead-check, --timeout, --kill-grace) are\n"
    "seconds (30, 0.5) or 90s, 15m, 1h, 1d, 1h30m.\n"
    "\n"
    "Stopping: the first SIGINT or SIGTERM stops fetching and waits up to the grace for\n"
    "running commands to finish. A second one stops at once: running commands are\n"
    "killed with all their processes and their jobs stay in progress in Redis, where\n"
    "the dead pool reaper (of any cwork or Go pool) puts them back in their queues.\n"
    "\n"
    "Exit status: 0 after a clean stop, 1 when Redis failed or the stop did not finish\n"
    "in time (or was cut short), 2 for a bad command line.\n";

/* ---------------------------------------------------------------- options */

static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned *out)
{
    char *end;
    errno = 0;
    if (!s || !(*s >= '0' && *s <= '9')) return -1;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < min || v > max) return -1;
    *out = (unsigned)v;
    return 0;
}

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

/* A job option: 1 when it was one (0 done, -1 on error through *bad), 0 if not. */
static int job_option(cli_args *a, work_opts *o, int *bad)
{
    static const char *const names[] = {"priority",        "max-fails",      "skip-dead",
                                        "max-concurrency", "timeout",        "kill-grace",
                                        "result-ttl",      "keep-succeeded", "keep-succeeded-for"};
    size_t k = 0;
    while (k < sizeof names / sizeof names[0] && !cli_is(a, names[k]))
        k++;
    if (k == sizeof names / sizeof names[0]) return 0;
    *bad = 1;
    if (o->njobs == 0) {
        fprintf(stderr,
                "cwork work: --%s applies to the --job it follows; give it after "
                "one\n",
                a->name);
        return 1;
    }
    work_job *j = &o->jobs[o->njobs - 1];
    if (k == 2) { /* the only flag */
        if (a->inline_value) {
            fprintf(stderr, "cwork work: --skip-dead takes no value\n");
            return 1;
        }
        j->opts.skip_dead = true;
        *bad = 0;
        return 1;
    }
    if (cli_take_value(a) < 0) return 1;
    int rc;
    switch (k) {
    case 0:
        rc = parse_uint(a->value, 1, 100000, &j->opts.priority);
        break;
    case 1:
        rc = parse_uint(a->value, 1, UINT32_MAX, &j->opts.max_fails);
        break;
    case 3:
        rc = parse_uint(a->value, 0, UINT32_MAX, &j->opts.max_concurrency);
        break;
    case 4:
        rc = cli_duration_ms(a->value, &j->timeout_ms) || j->timeout_ms <= 0 ? -1 : 0;
        break;
    case 5:
        rc = cli_duration_ms(a->value, &j->kill_grace_ms);
        break;
    case 6:
        rc = cli_duration_ms(a->value, &j->opts.result_ttl_ms) || j->opts.result_ttl_ms <= 0;
        break;
    case 7:
        rc = parse_uint(a->value, 0, UINT32_MAX, &j->opts.keep_succeeded);
        break;
    default:
        rc =
            cli_duration_ms(a->value, &j->opts.keep_succeeded_ms) || j->opts.keep_succeeded_ms <= 0;
        break;
    }
    if (rc != 0) {
        static const char *const want[] = {"a number from 1 to 100000",
                                           "a positive number",
                                           "",
                                           "a number (0 = no limit)",
                                           "a positive duration (30, 0.5, 90s, 15m, 1h)",
                                           "a duration (5, 0.5, 90s, 1m)",
                                           "a positive duration (1h, 7d)",
                                           "a number (0 = keep none)",
                                           "a positive duration (1h, 7d)"};
        fprintf(stderr, "cwork work: --%s needs %s, got \"%s\"\n", a->name, want[k], a->value);
        return 1;
    }
    *bad = 0;
    return 1;
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
        cwork_error err = {0};
        if (cwork_rate_limit_parse(eq + 1, &j->opts.rate_limit, &j->opts.rate_limit_window_ms,
                                   &err) != 0) {
            fprintf(stderr, "cwork work: --rate-limit %s: %s\n", v, err.message);
            return -1;
        }
    }
    return 0;
}

static int parse_options(int argc, char **argv, work_opts *o)
{
    cli_args a;
    cli_args_init(&a, argc, argv, 2);
    int kind;
    while ((kind = cli_next(&a)) >= 0) {
        if (kind == 0) {
            fprintf(stderr,
                    "cwork work: unexpected argument \"%s\" (jobs are given as "
                    "--job NAME=COMMAND)\n",
                    a.value);
            return -1;
        }
        int c = cli_conn_option(&a, &o->conn);
        if (c < 0) return -1;
        if (c > 0) continue;
        int bad = 0;
        if (job_option(&a, o, &bad)) {
            if (bad) return -1;
        } else if (cli_is(&a, "help") || cli_is(&a, "h")) {
            fputs(usage, stdout);
            exit(CLI_OK);
        } else if (cli_is(&a, "job")) {
            if (cli_take_value(&a) < 0 || add_job(o, a.value) < 0) return -1;
        } else if (cli_is(&a, "concurrency")) {
            if (cli_take_value(&a) < 0 || parse_uint(a.value, 1, 10000, &o->concurrency)) {
                fprintf(stderr, "cwork work: --concurrency needs a number from 1 to 10000\n");
                return -1;
            }
        } else if (cli_is(&a, "grace")) {
            if (cli_take_value(&a) < 0 || cli_duration_ms(a.value, &o->grace_ms) ||
                o->grace_ms > INT32_MAX) {
                fprintf(stderr, "cwork work: --grace needs a duration (30, 0.5, 90s, 15m)\n");
                return -1;
            }
        } else if (cli_is(&a, "periodic")) {
            if (cli_take_value(&a) < 0) return -1;
            if (o->nperiodic == sizeof o->periodic / sizeof o->periodic[0]) {
                fprintf(stderr, "cwork work: too many --periodic\n");
                return -1;
            }
            const char *last = strrchr(a.value, ' ');
            if (!last) {
                fprintf(stderr, "cwork work: --periodic needs 'SPEC NAME', e.g. "
                                "'*/5 * * * * report'\n");
                return -1;
            }
            if (is_cron_field(last + 1)) {
                fprintf(stderr,
                        "cwork work: --periodic '%s': the last word \"%s\" is part of "
                        "a schedule, not a job name; give 'SPEC NAME', e.g. "
                        "'%s report'\n",
                        a.value, last + 1, a.value);
                return -1;
            }
            o->periodic[o->nperiodic++] = a.value;
        } else if (cli_is(&a, "reap-period") || cli_is(&a, "dead-check")) {
            int reap = cli_is(&a, "reap-period");
            int64_t secs = 0;
            if (cli_take_value(&a) < 0 || cli_duration_s(a.value, &secs) || secs < 1 ||
                secs > 86400) {
                fprintf(stderr,
                        "cwork work: --%s needs whole seconds from 1 to 86400 (or 90s, "
                        "15m, 1h, 1d)\n",
                        reap ? "reap-period" : "dead-check");
                return -1;
            }
            *(reap ? &o->reap_period_s : &o->dead_check_s) = (unsigned)secs;
        } else if (cli_is(&a, "rate-limit")) {
            if (cli_take_value(&a) < 0) return -1;
            if (o->nrate_limits == sizeof o->rate_limits / sizeof o->rate_limits[0]) {
                fprintf(stderr, "cwork work: too many --rate-limit\n");
                return -1;
            }
            o->rate_limits[o->nrate_limits++] = a.value; /* checked once every --job is in */
        } else if (cli_is(&a, "progress")) {
            if (cli_flag(&a) < 0) return -1;
            o->progress = 1;
        } else if (cli_is(&a, "no-progress")) {
            if (cli_flag(&a) < 0) return -1;
            o->progress = -1;
        } else if (cli_is(&a, "quiet") || cli_is(&a, "q")) {
            if (cli_flag(&a) < 0) return -1;
            o->quiet = 1;
        } else if (cli_is(&a, "metrics-listen")) {
            char host[256], port[8];
            if (cli_take_value(&a) < 0) return -1;
            if (work_listen_split(a.value, host, sizeof host, port, sizeof port) != 0) {
                fprintf(stderr,
                        "cwork work: --metrics-listen needs PORT, HOST:PORT or [V6]:PORT "
                        "(e.g. 9090, 127.0.0.1:9090, 0.0.0.0:9090), got \"%s\"\n",
                        a.value);
                return -1;
            }
            o->metrics_listen = a.value;
        } else {
            static const char *const names[] = {"job",
                                                "concurrency",
                                                "grace",
                                                "periodic",
                                                "reap-period",
                                                "dead-check",
                                                "progress",
                                                "no-progress",
                                                "priority",
                                                "max-fails",
                                                "skip-dead",
                                                "timeout",
                                                "max-concurrency",
                                                "kill-grace",
                                                "result-ttl",
                                                "keep-succeeded",
                                                "keep-succeeded-for",
                                                "quiet",
                                                "metrics-listen",
                                                "rate-limit",
                                                CLI_COMMON_OPTIONS,
                                                NULL};
            cli_unknown_option("cwork work", &a, names);
            return -1;
        }
    }
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
    if (parse_options(argc, argv, &o) != 0) {
        free_opts(&o);
        return CLI_USAGE;
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
