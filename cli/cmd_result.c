/* cwork result and cwork succeeded: a job's result by id (waiting for it if asked), and
 * the succeeded jobs the job types keep (PROTOCOL §22). */
#include "cli.h"
#include "cmd_admin.h"
#include "opt.h"
#include "table.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char result_intro[] =
    "Usage: cwork result [--wait DURATION] [--json] [--shard N] [--redis URL] [--ns NS] ID\n"
    "\n"
    "Prints the result the job with this id stored when it succeeded (a handler's\n"
    "cwork_job_set_result; a `cwork work` command's output on the file descriptor in\n"
    "$CWORK_RESULT_FD, 4), byte for byte. Results are kept for their type's result TTL\n"
    "(default 24h). In a sharded namespace (cwork shards) the result is looked for in\n"
    "every shard, the id's own first, and waited for in the id's shard.\n";

static const char result_outro[] =
    "Exit status: 0, 1 when Redis fails, 2 for a bad command line, 4 when there is no\n"
    "result (yet, after waiting; or any more).\n";

static const char succeeded_intro[] =
    "Usage: cwork succeeded [--name NAME] [--limit N] [--json] [--shard N] [--redis URL]\n"
    "                       [--ns NS]\n"
    "\n"
    "Lists the succeeded jobs kept by job types that keep them (keep_succeeded), newest\n"
    "first: when each finished, its name and id, when it ran and how long it took, and\n"
    "its result while that is kept. In a sharded namespace (cwork shards) the shards'\n"
    "jobs are merged newest first (--limit in all); --shard N lists one shard's.\n";

static const char succeeded_outro[] =
    "A key of the wrong type (a name's succeeded jobs, a result, known_jobs) reads as\n"
    "empty with a warning naming it (and in --json a \"damaged\" array); `cwork doctor`\n"
    "repairs it.\n"
    "\n"
    "Exit status: 0, 1 when Redis fails, 2 for a bad command line.\n";

typedef struct result_opts {
    cli_conn_opts conn;
    const char *id, *name;
    int64_t wait_ms;
    size_t limit;
    int json;
    long shard; /* --shard N; -1: the whole namespace */
} result_opts;

/* --wait DURATION: a duration, not negative. */
static int set_wait(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    result_opts *o = opts;
    return cli_opt_duration_ms(ctx, value, 0, INT64_MAX, "a duration (30, 30s, 5m)", &o->wait_ms);
}

/* --limit N: a whole number from 1 to 10000. */
static int set_limit(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    result_opts *o = opts;
    uint64_t v;
    if (cli_opt_uint(ctx, value, 1, 10000, "a whole number from 1 to 10000", &v) < 0) return -1;
    o->limit = (size_t)v;
    return 0;
}

static const cli_opt result_options[] = {
    {"wait", NULL, CLI_ARG_REQUIRED, "DURATION",
     "wait up to DURATION for it (30s, 5m): returns as soon as the\n"
     "job's commit writes it",
     set_wait, 0, 0, NULL, 0},
    {"json", NULL, CLI_ARG_NONE, NULL,
     "{\"id\": …, \"result\": …, \"result_base64\": …} instead (result\n"
     "as text, invalid UTF-8 as U+FFFD; result_base64 exact)",
     cli_set_flag, offsetof(result_opts, json), 0, NULL, 0},
    CLI_SHARD_OPT(result_opts, shard),
    CLI_CONN_OPTS(result_opts, conn),
    CLI_HELP_OPT,
    CLI_OPT_END};

static const cli_opt succeeded_options[] = {
    {"name", NULL, CLI_ARG_REQUIRED, "NAME",
     "only jobs of this name (default: every name in known_jobs)", cli_set_string,
     offsetof(result_opts, name), 0, NULL, 0},
    {"limit", NULL, CLI_ARG_REQUIRED, "N", "at most N jobs (1-10000, default 100)", set_limit, 0, 0,
     NULL, 0},
    {"json", NULL, CLI_ARG_NONE, NULL,
     "{\"jobs\": [{\"name\", \"id\", \"finished_at_ms\", \"ran_at_ms\",\n"
     "\"took_us\", \"result\", \"result_base64\", \"job\"}, …]} (\"jobs\": []\n"
     "when none is kept)",
     cli_set_flag, offsetof(result_opts, json), 0, NULL, 0},
    CLI_SHARD_OPT(result_opts, shard),
    CLI_CONN_OPTS(result_opts, conn),
    CLI_HELP_OPT,
    CLI_OPT_END};

const cli_command cli_result_command = {
    .name = "result",
    .intro = result_intro,
    .outro = result_outro,
    .opts = result_options,
    .seen_field = CLI_NO_SEEN,
};

const cli_command cli_succeeded_command = {
    .name = "succeeded",
    .intro = succeeded_intro,
    .outro = succeeded_outro,
    .opts = succeeded_options,
    .seen_field = CLI_NO_SEEN,
};

/* cwork result's ID. */
static int take_id(void *opts, const char *arg)
{
    result_opts *o = opts;
    if (o->id) {
        fprintf(stderr, "cwork result: unexpected argument \"%s\" (see cwork result --help)\n",
                arg);
        return -1;
    }
    o->id = arg;
    return 0;
}

/* Options of both commands; succeeded says which one is parsed. 0 to go on, 1 when
 * --help was printed, -1 on a bad command line (reported). */
static int parse(int argc, char **argv, int succeeded, result_opts *o)
{
    const char *label = succeeded ? "cwork succeeded" : "cwork result";
    memset(o, 0, sizeof *o);
    o->conn.ns = "work";
    o->shard = -1;
    int p = succeeded ? cli_parse(&cli_succeeded_command, label, argc, argv, 2, o, NULL)
                      : cli_parse(&cli_result_command, label, argc, argv, 2, o, take_id);
    if (p != 0) return p;
    if (!succeeded && (!o->id || !*o->id)) {
        fprintf(stderr, "%s: which job? give its ID (see %s --help)\n", label, label);
        return -1;
    }
    return 0;
}

/* Standard, padded base64 of len bytes, to stdout. */
static void put_base64(const unsigned char *p, size_t len)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        if (i + 1 < len) v |= (unsigned)p[i + 1] << 8;
        if (i + 2 < len) v |= p[i + 2];
        char out[4] = {digits[v >> 18], digits[(v >> 12) & 63], '=', '='};
        if (i + 1 < len) out[2] = digits[(v >> 6) & 63];
        if (i + 2 < len) out[3] = digits[v & 63];
        fwrite(out, 1, 4, stdout);
    }
}

/* "result": …, "result_base64": … (null and null when there is none). */
static void put_result_json(const char *result, size_t len)
{
    fputs("\"result\": ", stdout);
    if (result)
        admin_json_string(result, len);
    else
        fputs("null", stdout);
    fputs(", \"result_base64\": ", stdout);
    if (result) {
        putchar('"');
        put_base64((const unsigned char *)result, len);
        putchar('"');
    } else {
        fputs("null", stdout);
    }
}

/* Connects and makes a client (*client, to free) and the view --shard asks for (the
 * client itself without it); NULL with *status set (reported). */
static cwork_client *open_client(const result_opts *o, const char *label, cwork_redis **redis,
                                 cwork_client **client, int *status)
{
    *redis = cli_connect(&o->conn, status);
    if (!*redis) return NULL;
    cwork_error err = {0};
    *client = cwork_client_new(*redis, o->conn.ns, &err);
    cwork_client *view = cli_shard_view(*client, o->shard, &err);
    if (!view) {
        fprintf(stderr, "%s: %s\n", label, err.message);
        cwork_client_free(*client);
        cwork_redis_free(*redis);
        *status = *client && err.code == CWORK_EINVAL ? CLI_USAGE : CLI_FAILURE;
    }
    return view;
}

static int finish(int status)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "cwork: cannot write the output: %s\n", strerror(errno));
        return CLI_FAILURE;
    }
    return status;
}

int cmd_result(int argc, char **argv)
{
    result_opts o;
    int p = parse(argc, argv, 0, &o);
    if (p != 0) return p > 0 ? CLI_OK : CLI_USAGE;
    int status;
    cwork_redis *redis = NULL;
    cwork_client *client = NULL;
    cwork_client *view = open_client(&o, "cwork result", &redis, &client, &status);
    if (!view) return status;
    cwork_error err = {0};
    char *out = NULL;
    size_t len = 0;
    int rc = cwork_client_result(view, o.id, o.wait_ms, &out, &len, &err);
    if (rc == 0) {
        status = CLI_OK;
        if (o.json) {
            fputs("{\"id\": ", stdout);
            admin_json_string(o.id, strlen(o.id));
            fputs(", ", stdout);
            put_result_json(out, len);
            fputs("}\n", stdout);
        } else {
            fwrite(out, 1, len, stdout); /* exactly the bytes: scripts read them */
        }
        status = finish(CLI_OK);
    } else if (rc == CWORK_ENOTFOUND) {
        fprintf(stderr, "cwork result: no result for job %s%s\n", o.id,
                o.wait_ms ? " after waiting" : " (it has not succeeded, set none, or it expired)");
        status = CLI_NOT_FOUND;
    } else if (rc == CWORK_ETYPE) { /* a damaged result key, named */
        fprintf(stderr, "cwork result: %s — cwork doctor --ns %s can repair it\n", err.message,
                o.conn.ns);
        status = CLI_FAILURE;
    } else {
        fprintf(stderr, "cwork result: %s\n", err.message);
        status = rc == CWORK_EINVAL ? CLI_USAGE : CLI_FAILURE;
    }
    cwork_free(out);
    cwork_client_free(client);
    cwork_redis_free(redis);
    return status;
}

/* {"jobs": [...]}: an empty list is "jobs": [], and a "damaged" array follows when a key
 * could not be read. */
static void print_succeeded_json(const cwork_succeeded_job *jobs, size_t n)
{
    fputs("{\"jobs\": [", stdout);
    for (size_t i = 0; i < n; i++) {
        const cwork_succeeded_job *j = &jobs[i];
        fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", stdout);
        admin_json_string(j->name, strlen(j->name));
        fputs(", \"id\": ", stdout);
        admin_json_string(j->id, strlen(j->id));
        printf(", \"finished_at_ms\": %" PRId64 ", \"ran_at_ms\": %" PRId64
               ", \"took_us\": %" PRId64 ", ",
               j->finished_at_ms, j->ran_at_ms, j->took_us);
        put_result_json(j->result, j->result_len);
        fputs(", \"job\": ", stdout);
        admin_json_string(j->job, j->job_len);
        fputs("}", stdout);
    }
    fputs(n ? "\n]" : "]", stdout);
    if (cwork_client_damage(NULL)) {
        fputs(", \"damaged\": ", stdout);
        cli_json_damaged();
    }
    fputs("}\n", stdout);
}

static void print_succeeded_text(const cwork_succeeded_job *jobs, size_t n)
{
    static const char *const headers[] = {"FINISHED", "NAME", "ID", "TOOK", "RESULT"};
    table *t = table_new(5, headers);
    if (!t) return;
    table_set_max_width(t, 4, 60);
    table_set_right(t, 3);
    int64_t now = (int64_t)time(NULL);
    for (size_t i = 0; i < n; i++) {
        const cwork_succeeded_job *j = &jobs[i];
        char when[96];
        fmt_when(when, sizeof when, j->finished_at_ms / 1000, now);
        table_cell(t, when);
        table_cell(t, j->name);
        table_cell(t, j->id);
        if (j->took_us < 10000)
            table_cellf(t, "%" PRId64 " µs", j->took_us);
        else
            table_cellf(t, "%.3f s", (double)j->took_us / 1e6);
        table_cell(t, j->result ? j->result : "-");
    }
    table_print(t, stdout);
    table_free(t);
    if (n == 0) fputs("(no kept succeeded jobs: see keep_succeeded)\n", stdout);
}

int cmd_succeeded(int argc, char **argv)
{
    result_opts o;
    int p = parse(argc, argv, 1, &o);
    if (p != 0) return p > 0 ? CLI_OK : CLI_USAGE;
    int status;
    cwork_redis *redis = NULL;
    cwork_client *client = NULL;
    cwork_client *view = open_client(&o, "cwork succeeded", &redis, &client, &status);
    if (!view) return status;
    cwork_error err = {0};
    cwork_succeeded_job *jobs = NULL;
    size_t n = 0;
    cwork_client_damage_clear();
    int rc = cwork_client_succeeded(view, o.name, o.limit, &jobs, &n, &err);
    if (rc == 0) {
        cli_warn_damage("cwork succeeded", o.conn.ns);
        if (o.json)
            print_succeeded_json(jobs, n);
        else
            print_succeeded_text(jobs, n);
        status = finish(CLI_OK);
    } else {
        fprintf(stderr, "cwork succeeded: %s\n", err.message);
        status = rc == CWORK_EINVAL ? CLI_USAGE : CLI_FAILURE;
    }
    cwork_succeeded_jobs_free(jobs, n);
    cwork_client_free(client);
    cwork_redis_free(redis);
    return status;
}
