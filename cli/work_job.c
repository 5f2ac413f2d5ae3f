/* `cwork work`'s handler: one job, one command (child.c). It gives the command the job
 * (stdin, CWORK_JOB_* and CWORK_ARG_* variables), turns how the command ended into the
 * job's success or failure — exit status WORK_EXIT_NO_RETRY fails it without retry —
 * and says so in one line per outcome on stderr (unless --quiet), counted for
 * /metrics. Runs on the pool's executor threads, many at once. */
#define _GNU_SOURCE
#include "child.h"
#include "work.h"
#include "work_text.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ARGS_ENV_MAX (64 * 1024) /* larger args only on stdin: environments are limited */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t work_backoff(const cwork_job *job, void *userdata)
{
    (void)userdata;
    return work_backoff_s(cwork_job_id(job), cwork_job_fails(job));
}

/* A stop for a lost lease gets at most CWORK_LEASE_STOP_GRACE_MS before the SIGKILL. */
static int64_t stop_grace(void *job)
{
    return cwork_job_stop_reason(job) == CWORK_STOP_LEASE_LOST ? CWORK_LEASE_STOP_GRACE_MS
                                                               : INT64_MAX;
}

static void on_checkin(void *job, const char *line)
{
    cwork_job_checkin(job, line);
}

/* ---------------------------------------------------------------- the environment */

typedef struct env_list {
    char **items;
    size_t n, cap;
    int oom;
} env_list;

/* Adds "NAME=VALUE"; value_len may hold the whole value. */
static void env_add(env_list *e, const char *name, const char *value)
{
    if (e->oom) return;
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 8;
        char **items = realloc(e->items, cap * sizeof *items);
        if (!items) {
            e->oom = 1;
            return;
        }
        e->items = items;
        e->cap = cap;
    }
    char *s = NULL;
    if (asprintf(&s, "%s=%s", name, value) < 0) {
        e->oom = 1;
        return;
    }
    e->items[e->n++] = s;
}

static void env_free(env_list *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->items[i]);
    free(e->items);
}

/* CWORK_ARG_<NAME> for each top-level arg: strings as they are, anything else (and a
 * string holding a NUL byte, which an environment cannot) as JSON. Keys come in Go's
 * sorted order; of two keys with the same variable name the first wins. */
static void add_arg_vars(env_list *e, const char *args_json)
{
    cwork_args *a = NULL;
    if (cwork_args_parse(args_json, strlen(args_json), &a, NULL) != 0) return; /* "null" */
    size_t count = cwork_args_count(a);
    size_t first = e->n;
    for (size_t i = 0; i < count && !e->oom; i++) {
        const char *key = cwork_args_key_at(a, i);
        char *json = NULL, *name = malloc(strlen(key) + 11);
        if (!name || cwork_args_get_json(a, key, &json, NULL, NULL) != 0) {
            free(name);
            e->oom = 1;
            break;
        }
        size_t nlen = work_arg_env_name(key, name);
        int taken = 0;
        for (size_t k = first; k < e->n && !taken; k++)
            taken = strncmp(e->items[k], name, nlen) == 0 && e->items[k][nlen] == '=';
        const char *s = NULL;
        if (!taken) {
            int plain = cwork_args_get_string(a, key, &s) == 0 && !strstr(json, "\\u0000");
            env_add(e, name, plain ? s : json);
        }
        cwork_free(json);
        free(name);
    }
    cwork_args_free(a);
}

/* ---------------------------------------------------------------- outcome lines */

static void say(const work_opts *o, const cwork_job *job, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(const work_opts *o, const cwork_job *job, const char *fmt, ...)
{
    if (o->quiet) return;
    char *text = NULL, *line = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (asprintf(&line, "cwork work: [%s %s] %s", cwork_job_name(job), cwork_job_id(job), text) >=
        0)
        child_say(line);
    free(line);
    free(text);
}

static void report_failure(const work_opts *o, work_job *wj, const cwork_job *job, int64_t took_ms,
                           const char *message, int no_retry)
{
    int64_t fails = cwork_job_fails(job);
    work_outcome out = work_outcome_of(&wj->opts, fails, no_retry);
    atomic_fetch_add(&wj->counts.processed, 1);
    atomic_fetch_add(&wj->counts.failed, 1);
    atomic_fetch_add(out == WORK_RETRY  ? &wj->counts.retried
                     : out == WORK_DEAD ? &wj->counts.dead
                                        : &wj->counts.dropped,
                     1);
    char took[32], then[96];
    work_duration_text(took_ms, took, sizeof took);
    if (out == WORK_RETRY)
        snprintf(then, sizeof then, "retry in %" PRId64 " s",
                 work_backoff_s(cwork_job_id(job), fails + 1));
    else if (no_retry)
        snprintf(then, sizeof then, "%s (no retry: exit status %d)",
                 out == WORK_DEAD ? "dead" : "dropped", WORK_EXIT_NO_RETRY);
    else
        snprintf(then, sizeof then, "%s", out == WORK_DEAD ? "dead" : "dropped (--skip-dead)");
    size_t len;
    const char *last = work_last_line(message, &len);
    say(o, job, "failed in %s: %.*s -> %s", took, (int)len, last, then);
}

/* ---------------------------------------------------------------- the handler */

/* Runs job's command with its environment (CWORK_JOB_* and the args' variables) and the
 * job's bytes on stdin. *complete is 0 when that could not be set up (out of memory: res
 * untouched); else child_run's return, with res filled. */
static int run_command(const work_job *wj, cwork_job *job, child_result *res, int *complete)
{
    char fails[32];
    snprintf(fails, sizeof fails, "%" PRId64, cwork_job_fails(job));
    char *args = cwork_job_args_json(job);
    env_list env = {0};
    env_add(&env, "CWORK_JOB_ID", cwork_job_id(job));
    env_add(&env, "CWORK_JOB_NAME", cwork_job_name(job));
    env_add(&env, "CWORK_JOB_FAILS", fails);
    env_add(&env, "CWORK_RESULT_FD", "4"); /* what the command writes there is its result */
    if (args && strlen(args) <= ARGS_ENV_MAX) {
        env_add(&env, "CWORK_JOB_ARGS", args);
        add_arg_vars(&env, args);
    }
    char *prefix = NULL;
    if (asprintf(&prefix, "[%s %s] ", cwork_job_name(job), cwork_job_id(job)) < 0) prefix = NULL;
    *complete = args && prefix && !env.oom;
    int rc = -1;
    /* Readable once the pool asks the job to stop (a cancel, PROTOCOL §21): the command's
     * tree then gets the timeout's SIGTERM and, after the kill grace, SIGKILL. */
    int stop_fd = cwork_job_stop_fd(job);
    if (*complete) {
        size_t raw_len = 0;
        const char *raw = cwork_job_raw(job, &raw_len);
        child_spec spec = {
            .command = wj->command,
            .stdin_data = raw,
            .stdin_len = raw_len,
            .env_add = (const char *const *)env.items,
            .env_count = env.n,
            .prefix = prefix,
            .timeout_ms = wj->timeout_ms,
            .kill_grace_ms = wj->kill_grace_ms,
            .stop_fd = stop_fd >= 0 ? &stop_fd : NULL,
            .stop_grace_ms = stop_grace,
            .on_checkin = on_checkin,
            .userdata = job,
        };
        rc = child_run(&spec, res);
    }
    cwork_free(args);
    free(prefix);
    env_free(&env);
    return rc;
}

/* Keeps what a successful run wrote to fd 4 as the job's result, and frees it. A result
 * that cannot be stored whole is refused, and so is the run: a caller waiting for it must
 * not read a cut one (PROTOCOL §22). */
static void keep_result(cwork_job *job, int rc, child_result *res)
{
    if (rc == 0 && res->ok && res->result_over) {
        snprintf(res->message, sizeof res->message,
                 "the result written to fd 4 is over the limit of %d bytes", CHILD_RESULT_MAX);
        res->ok = 0;
    } else if (rc == 0 && res->ok && res->result) {
        int set = cwork_job_set_result(job, res->result, res->result_len);
        if (set != 0) {
            snprintf(res->message, sizeof res->message, "the result could not be kept (%s)",
                     cwork_err_name(set));
            res->ok = 0;
        }
    }
    free(res->result);
    res->result = NULL;
}

/* A command whose processes were stopped at the pool's request (res.stopped). */
static int report_stopped(const work_opts *o, work_job *wj, cwork_job *job, int64_t took)
{
    char t[32];
    work_duration_text(took, t, sizeof t);
    if (cwork_job_stop_reason(job) == CWORK_STOP_LEASE_LOST) {
        /* Not committed by the pool, whatever is returned: whoever reaps runs it again. */
        say(o, job,
            "stopped after %s: this pool lost its lease on the job (it runs again "
            "elsewhere)",
            t);
        return cwork_job_fail(job, "lease lost");
    }
    /* The pool decides where the job goes (a cancelled one: dead, "cancelled"). */
    atomic_fetch_add(&wj->counts.processed, 1);
    atomic_fetch_add(&wj->counts.failed, 1);
    atomic_fetch_add(&wj->counts.dead, 1);
    int cancelled = cwork_job_cancelled(job);
    const char *why = cancelled ? "cancelled" : "asked to stop";
    say(o, job, "%s after %s: its processes were stopped%s", why, t, cancelled ? " -> dead" : "");
    return cwork_job_fail(job, "%s", why);
}

int work_run_job(cwork_job *job, void *ctx)
{
    (void)ctx;
    const work_opts *o = cwork_job_userdata(job);
    work_job *wj = NULL;
    for (size_t i = 0; i < o->njobs && !wj; i++)
        if (strcmp(o->jobs[i].name, cwork_job_name(job)) == 0) wj = &o->jobs[i];
    if (!wj) /* the pool only hands us registered names */
        return cwork_job_fail(job, "no command for job %s", cwork_job_name(job));

    int64_t t0 = mono_ms();
    atomic_fetch_add(&wj->counts.running, 1);
    if (cwork_job_fails(job) > 0)
        say(o, job, "started (retry %" PRId64 ")", cwork_job_fails(job));
    else
        say(o, job, "started");

    child_result res;
    memset(&res, 0, sizeof res);
    int complete = 0;
    int rc = run_command(wj, job, &res, &complete);
    if (complete && res.aborted) {
        /* Stopping at once: the job must stay in progress for the reaper, so this
         * handler never returns (a return would commit a failure); the process is about
         * to exit. */
        for (;;)
            pause();
    }
    atomic_fetch_sub(&wj->counts.running, 1);
    int64_t took = mono_ms() - t0;
    if (complete) keep_result(job, rc, &res);
    if (complete && rc == 0 && res.ok) {
        atomic_fetch_add(&wj->counts.processed, 1);
        char t[32];
        work_duration_text(took, t, sizeof t);
        say(o, job, "done in %s", t);
        return 0;
    }
    if (complete && rc == 0 && res.stopped) return report_stopped(o, wj, job, took);
    const char *message = complete ? res.message : "out of memory";
    int no_retry = complete && rc == 0 && !res.timed_out && res.exit_status == WORK_EXIT_NO_RETRY;
    report_failure(o, wj, job, took, message, no_retry);
    return no_retry ? cwork_job_fail_no_retry(job, "%s", message)
                    : cwork_job_fail(job, "%s", message);
}
