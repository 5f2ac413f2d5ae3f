/* cwork enqueue: one job from the command line, or NDJSON lines from stdin (--bulk). */
#include "cli.h"
#include "opt.h"
#include "table.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char intro[] =
    "Usage: cwork enqueue [--redis URL] [--ns NS] [--in DURATION]\n"
    "                     [--unique | --unique-key KEY_JSON] NAME [ARGS_JSON]\n"
    "       cwork enqueue [--redis URL] [--ns NS] --bulk [--quiet] < jobs.ndjson\n"
    "       cwork enqueue [--redis URL] [--ns NS] --bulk --batch-callback NAME\n"
    "                     [--on-complete] [--open] [ARGS_JSON] < jobs.ndjson\n"
    "       cwork enqueue [--redis URL] [--ns NS] --bulk --batch ID [--open] < jobs.ndjson\n"
    "\n"
    "Puts a job into the queue NAME with ARGS_JSON (a JSON object; default {}) and\n"
    "prints its id. A Go worker of gocraft/work runs it like one of its own.\n";

static const char outro[] =
    "With --go-flavor upstream, unique jobs are written as gocraft/work v0.5 writes\n"
    "them (with unique_key). With --go-json go1.21, unique guards of args holding\n"
    "U+0008/U+000C spell them \\u0008/\\u000c, as Go 1.19-1.21 does (default:\n"
    "$CWORK_GO_JSON, else go1.22: \\b, \\f).\n"
    "\n"
    "Exit status: 0 written, 1 Redis failure, 2 bad input (nothing written),\n"
    "3 unique duplicate, 4 no such batch (--batch; nothing written).\n";

typedef struct enqueue_opts {
    cli_conn_opts conn;
    int has_in;
    int64_t in;
    int unique;
    const char *unique_key; /* --unique-key: the ByKey key object */
    cwork_go_flavor flavor;
    cwork_go_json go_json;
    int bulk;
    int quiet;
    size_t batch_size;
    size_t max_job_bytes;
    const char *name;
    const char *args_json;
    const char *batch_callback; /* --batch-callback: open a tracked batch */
    const char *batch_id;       /* --batch: join this open batch */
    int on_complete, keep_open;
} enqueue_opts;

/* NAME, then ARGS_JSON. */
static int take_positional(void *opts, const char *arg)
{
    enqueue_opts *o = opts;
    if (!o->name) {
        o->name = arg;
    } else if (!o->args_json) {
        o->args_json = arg;
    } else {
        fprintf(stderr, "cwork enqueue: unexpected argument \"%s\"\n", arg);
        return -1;
    }
    return 0;
}

/* --in: whole seconds from now, 0 or more. */
static int set_in(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    enqueue_opts *o = opts;
    if (cli_opt_duration_s(ctx, value, 0, INT64_MAX,
                           "whole seconds or a duration like 90s, 15m, 1h or 7d (not negative: "
                           "0 is now)",
                           &o->in) != 0)
        return -1;
    o->has_in = 1;
    return 0;
}

/* --batch-size and --max-job-bytes: a positive number into a size_t. */
static int set_size(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    uint64_t n;
    if (cli_opt_uint(ctx, value, 1, SIZE_MAX < INT64_MAX ? SIZE_MAX : INT64_MAX,
                     "a positive number", &n) != 0)
        return -1;
    *(size_t *)(void *)((char *)opts + ctx->opt->field) = (size_t)n;
    return 0;
}

static const cli_opt enqueue_options[] = {
    {"in", NULL, CLI_ARG_REQUIRED, "DURATION",
     "run it that long from now (through the scheduled set):\n"
     "whole seconds (90) or 90s, 15m, 1h, 7d, 1h30m",
     set_in, 0, 0, NULL, 0},
    {"unique", NULL, CLI_ARG_NONE, NULL,
     "only if no job with this name and these args is waiting;\n"
     "a duplicate prints nothing on stdout and exits 3",
     cli_set_flag, offsetof(enqueue_opts, unique), 0, NULL, 0},
    {"unique-key", NULL, CLI_ARG_REQUIRED, "KEY_JSON",
     "upstream's EnqueueUniqueByKey: unique by name and this JSON\n"
     "object instead of the args; a duplicate replaces the waiting\n"
     "job's args (and id) with these, prints the id that will run\n"
     "and exits 3",
     cli_set_string, offsetof(enqueue_opts, unique_key), 0, NULL, 0},
    {"bulk", NULL, CLI_ARG_NONE, NULL,
     "read one job per line from stdin:\n"
     "  {\"name\":\"email\",\"args\":{...},\"in\":60,\"unique\":true}\n"
     "(only name is required) and send them in batches, each\n"
     "written whole or not at all; every line is checked first:\n"
     "bad lines are reported with their line number and nothing is\n"
     "written (exit 2); prints the id of each job written, in input\n"
     "order (none for duplicates); the count and rate go to stderr.\n"
     "A Redis failure stops at the batch it hit (exit 1): the lines\n"
     "before it were written, the message says up to which line",
     cli_set_flag, offsetof(enqueue_opts, bulk), 0, NULL, 0},
    {"quiet", NULL, CLI_ARG_NONE, NULL, "with --bulk: print no ids", cli_set_flag,
     offsetof(enqueue_opts, quiet), 0, NULL, 0},
    {"batch-callback", NULL, CLI_ARG_REQUIRED, "NAME",
     "with --bulk: the jobs form a tracked batch (README \"Batches\n"
     "and chains\"), whose id is printed instead of the jobs' ids;\n"
     "once every job has succeeded, cwork pools enqueue one job\n"
     "NAME with ARGS_JSON (default {}) plus batch_id, batch_total,\n"
     "batch_succeeded and batch_dead",
     cli_set_string, offsetof(enqueue_opts, batch_callback), 0, NULL, 0},
    {"on-complete", NULL, CLI_ARG_NONE, NULL,
     "fire the callback when every job has succeeded or died\n"
     "(default: only when all succeeded; never once one dies)",
     cli_set_flag, offsetof(enqueue_opts, on_complete), 0, NULL, 0},
    {"batch", NULL, CLI_ARG_REQUIRED, "ID",
     "with --bulk: add the jobs to open batch ID (see --open)", cli_set_string,
     offsetof(enqueue_opts, batch_id), 0, NULL, 0},
    {"open", NULL, CLI_ARG_NONE, NULL,
     "leave the batch open for more --batch calls; seal it with\n"
     "cwork batch --seal ID (default: sealed once all is written)",
     cli_set_flag, offsetof(enqueue_opts, keep_open), 0, NULL, 0},
    {"batch-size", NULL, CLI_ARG_REQUIRED, "N", "jobs per round trip with --bulk (default 1000)",
     set_size, offsetof(enqueue_opts, batch_size), 0, NULL, 0},
    {"max-job-bytes", NULL, CLI_ARG_REQUIRED, "N",
     "refuse jobs larger than N bytes (default 1048576)", set_size,
     offsetof(enqueue_opts, max_job_bytes), 0, NULL, 0},
    CLI_CONN_OPTS(enqueue_opts, conn),
    CLI_HELP_OPT,
    CLI_OPT_END};

const cli_command cli_enqueue_command = {
    .name = "enqueue",
    .intro = intro,
    .outro = outro,
    .opts = enqueue_options,
    .seen_field = CLI_NO_SEEN,
};

/* The message for options that do not go together, or NULL when they do. */
static const char *conflict(const enqueue_opts *o)
{
    int tracked = o->batch_callback || o->batch_id;
    if (o->unique && o->unique_key)
        return "--unique and --unique-key exclude each other (--unique-key is unique by its key)";
    if (o->quiet && !o->bulk) return "--quiet goes with --bulk (one job prints its id)";
    if ((tracked || o->on_complete || o->keep_open) && !o->bulk)
        return "--batch-callback, --batch, --on-complete and --open go with --bulk";
    if (o->batch_callback && o->batch_id)
        return "--batch-callback opens a new batch, --batch adds to an open one: not both";
    if (o->on_complete && !o->batch_callback) return "--on-complete goes with --batch-callback";
    if (o->keep_open && !tracked) return "--open goes with --batch-callback or --batch";
    return NULL;
}

/* 0 to go on, 1 when --help was printed, -1 on a bad command line (reported). */
static int parse_options(int argc, char **argv, enqueue_opts *o)
{
    int p = cli_parse(&cli_enqueue_command, "cwork enqueue", argc, argv, 2, o, take_positional);
    if (p != 0) return p;
    const char *why = conflict(o);
    if (why) {
        fprintf(stderr, "cwork enqueue: %s\n", why);
        return -1;
    }
    if (o->bulk && o->batch_callback && o->name && !o->args_json) {
        o->args_json = o->name; /* --bulk takes no job name: the callback's ARGS_JSON */
        o->name = NULL;
    }
    if (o->bulk && (o->name || o->has_in || o->unique || o->unique_key)) {
        fprintf(stderr, "cwork enqueue: --bulk takes names, delays and uniqueness from its "
                        "input lines, not from the command line\n");
        return -1;
    }
    if (!o->bulk && !o->name) {
        fprintf(stderr, "cwork enqueue: no job name given (see cwork enqueue --help)\n");
        return -1;
    }
    if (cli_go_json(&o->conn, &o->go_json) < 0) return -1;
    return cli_go_flavor(&o->conn, &o->flavor);
}

/* ---------------------------------------------------------------- one job */

static int enqueue_single(const enqueue_opts *o)
{
    cwork_error err = {0};
    if (cwork_validate_job_name(o->name, &err) != 0) {
        fprintf(stderr, "cwork enqueue: %s\n", err.message);
        return CLI_USAGE;
    }
    const char *text = o->args_json ? o->args_json : "{}";
    cwork_args *args = NULL;
    if (cwork_args_parse(text, strlen(text), &args, &err) != 0) {
        fprintf(stderr, "cwork enqueue: invalid args: %s\n", err.message);
        return CLI_USAGE;
    }
    cwork_args *key = NULL;
    if (o->unique_key && cwork_args_parse(o->unique_key, strlen(o->unique_key), &key, &err) != 0) {
        fprintf(stderr, "cwork enqueue: invalid --unique-key: %s\n", err.message);
        cwork_args_free(args);
        return CLI_USAGE;
    }
    int status;
    cwork_redis *redis = cli_connect(&o->conn, &status);
    if (!redis) {
        cwork_args_free(args);
        cwork_args_free(key);
        return status;
    }
    status = CLI_FAILURE;
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, o->conn.ns, &err);
    if (enq) {
        cwork_enqueuer_set_max_job_bytes(enq, o->max_job_bytes);
        cwork_enqueuer_set_go_flavor(enq, o->flavor);
        cwork_enqueuer_set_go_json(enq, o->go_json);
        cwork_job *job = NULL;
        int rc;
        if (key && o->has_in)
            rc = cwork_enqueue_unique_in_by_key(enq, o->name, o->in, args, key, &job, &err);
        else if (key)
            rc = cwork_enqueue_unique_by_key(enq, o->name, args, key, &job, &err);
        else if (o->unique && o->has_in)
            rc = cwork_enqueue_unique_in(enq, o->name, o->in, args, &job, &err);
        else if (o->unique)
            rc = cwork_enqueue_unique(enq, o->name, args, &job, &err);
        else if (o->has_in)
            rc = cwork_enqueue_in(enq, o->name, o->in, args, &job, &err);
        else
            rc = cwork_enqueue(enq, o->name, args, &job, &err);
        if (rc == CWORK_OK) {
            printf("%s\n", cwork_job_id(job));
            status = CLI_OK;
            fflush(stdout); /* the id first, then any warning */
            cli_warn_unserved(redis, o->conn.ns, (const char *const[]){o->name}, 1);
        } else if (rc == CWORK_DUPLICATE && key) {
            /* The waiting entry now runs this job: its id is the one to follow. */
            printf("%s\n", cwork_job_id(job));
            fprintf(stderr,
                    "cwork enqueue: a unique %s job with this key is already "
                    "waiting; it will run with these args (job %s)\n",
                    o->name, cwork_job_id(job));
            status = CLI_DUPLICATE;
        } else if (rc == CWORK_DUPLICATE) {
            fprintf(stderr,
                    "cwork enqueue: a unique %s job with these args is already "
                    "waiting; nothing enqueued\n",
                    o->name);
            status = CLI_DUPLICATE;
        } else {
            fprintf(stderr, "cwork enqueue: %s\n", err.message);
            status = (rc == CWORK_EINVAL || rc == CWORK_EJSON || rc == CWORK_ETOOBIG) ? CLI_USAGE
                                                                                      : CLI_FAILURE;
        }
        cwork_job_free(job);
        cwork_enqueuer_free(enq);
    } else {
        fprintf(stderr, "cwork enqueue: %s\n", err.message);
    }
    cwork_args_free(args);
    cwork_args_free(key);
    cwork_redis_free(redis);
    return status;
}

/* ---------------------------------------------------------------- NDJSON from stdin */

typedef struct bulk_stats {
    uint64_t written, duplicates, bad;
} bulk_stats;

/* Whether the line's bytes are valid UTF-8. */
static int valid_utf8(const char *s, size_t n)
{
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        size_t k = text_utf8_decode(s + i, n - i, &cp);
        if (k == 0) return 0;
        i += k;
    }
    return 1;
}

/* The JSON reader hands back an invalid UTF-8 sequence as U+FFFD (as Go's does), so a
 * name that was invalid in the line looks valid once parsed: it holds U+FFFD that the
 * line does not hold as it is, and the line is not valid UTF-8. cwork_validate_job_name
 * refuses such a name from argv; the same name must not be renamed here. */
static int name_was_invalid_utf8(const char *line, size_t len, const char *name)
{
    if (!strstr(name, "\xEF\xBF\xBD") || valid_utf8(line, len)) return 0;
    size_t n = strlen(name);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(line + i, name, n) == 0) return 0; /* the U+FFFD is the line's own */
    return 1;
}

/* Validates one NDJSON line and adds it to the batch; prints why when it cannot. */
static int add_line(cwork_batch *batch, const char *line, size_t len, uint64_t lineno)
{
    cwork_error err = {0};
    cwork_args *obj = NULL, *args = NULL;
    int ok = 0;
    if (cwork_args_parse(line, len, &obj, &err) != 0) {
        fprintf(stderr, "cwork enqueue: line %" PRIu64 ": %s\n", lineno, err.message);
        return -1;
    }
    for (size_t i = 0; i < cwork_args_count(obj); i++) {
        const char *k = cwork_args_key_at(obj, i);
        if (strcmp(k, "name") && strcmp(k, "args") && strcmp(k, "in") && strcmp(k, "unique")) {
            fprintf(stderr,
                    "cwork enqueue: line %" PRIu64 ": unknown field \"%s\" (fields: "
                    "name, args, in, unique)\n",
                    lineno, k);
            goto done;
        }
    }
    const char *name;
    if (cwork_args_get_string(obj, "name", &name) != 0) {
        fprintf(stderr, "cwork enqueue: line %" PRIu64 ": \"name\" (a string) is required\n",
                lineno);
        goto done;
    }
    if (name_was_invalid_utf8(line, len, name)) {
        fprintf(stderr,
                "cwork enqueue: line %" PRIu64 ": \"name\" is not valid UTF-8 (refused, as "
                "from the command line)\n",
                lineno);
        goto done;
    }
    int rc = cwork_args_get_args(obj, "args", &args);
    if (rc == CWORK_ENOTFOUND) {
        rc = cwork_args_parse("{}", 2, &args, NULL); /* as with one job: no args = {} */
    } else if (rc == CWORK_ETYPE) {
        fprintf(stderr, "cwork enqueue: line %" PRIu64 ": \"args\" must be a JSON object\n",
                lineno);
        goto done;
    }
    if (rc != 0) {
        fprintf(stderr, "cwork enqueue: line %" PRIu64 ": %s\n", lineno, cwork_strerror(rc));
        goto done;
    }
    int flags = 0;
    double in = 0;
    rc = cwork_args_get_float64(obj, "in", &in);
    if (rc == 0) {
        if (!(in == floor(in)) || in < 0 || in > 1e15) {
            fprintf(stderr,
                    "cwork enqueue: line %" PRIu64 ": \"in\" must be whole seconds, 0 or more\n",
                    lineno);
            goto done;
        }
        flags |= CWORK_BATCH_IN;
    } else if (rc == CWORK_ETYPE) {
        fprintf(stderr, "cwork enqueue: line %" PRIu64 ": \"in\" must be a number of seconds\n",
                lineno);
        goto done;
    }
    bool unique = false;
    rc = cwork_args_get_bool(obj, "unique", &unique);
    if (rc == CWORK_ETYPE) {
        fprintf(stderr, "cwork enqueue: line %" PRIu64 ": \"unique\" must be true or false\n",
                lineno);
        goto done;
    }
    if (unique) flags |= CWORK_BATCH_UNIQUE;
    if (cwork_batch_add(batch, name, args, (int64_t)in, flags, &err) != 0) {
        fprintf(stderr, "cwork enqueue: line %" PRIu64 ": %s\n", lineno, err.message);
        goto done;
    }
    ok = 1;
done:
    cwork_args_free(obj);
    cwork_args_free(args);
    return ok ? 0 : -1;
}

/* Sends the batch; on failure nothing of it was written (the message names its lines). */
static int flush_batch(cwork_batch *batch, bulk_stats *st, uint64_t first_line, uint64_t last_line,
                       int print_ids)
{
    if (cwork_batch_count(batch) == 0) return 0;
    cwork_error err = {0};
    int rc = cwork_enqueue_batch(batch, &err);
    for (size_t i = 0; rc == 0 && i < cwork_batch_count(batch); i++) {
        const char *id = NULL;
        int s = cwork_batch_status(batch, i, &id);
        st->written += s == CWORK_OK;
        st->duplicates += s == CWORK_DUPLICATE;
        if (s == CWORK_OK && print_ids) printf("%s\n", id);
    }
    cwork_batch_reset(batch);
    if (rc != 0) {
        fprintf(stderr, "cwork enqueue: lines %" PRIu64 "-%" PRIu64 " not written: %s\n",
                first_line, last_line, err.message);
        return -1;
    }
    return 0;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Reads the next line of in without its line ending; -1 at the end. Blank lines are
 * returned too (as length 0 after the leading blanks). */
static ssize_t next_line(FILE *in, char **line, size_t *cap)
{
    ssize_t n = getline(line, cap, in);
    while (n > 0 && ((*line)[n - 1] == '\n' || (*line)[n - 1] == '\r'))
        (*line)[--n] = '\0';
    return n;
}

/* The longest line pass 1 holds in memory: a job of max_job_bytes written with every
 * byte escaped as \u00XX (6 bytes each), plus room for the other fields. A longer line
 * is refused while it streams by, so memory stays a small multiple of this limit
 * whatever the input (a 100 MB line must not cost 400 MB to refuse). */
static size_t line_limit(size_t max_job_bytes)
{
    return max_job_bytes > (SIZE_MAX - 4096) / 6 ? SIZE_MAX : 6 * max_job_bytes + 4096;
}

/* next_line, but a line longer than limit is skipped to its end without being kept:
 * *too_long set, and an empty line returned in its place. */
static ssize_t next_line_bounded(FILE *in, char **line, size_t *cap, size_t limit, int *too_long)
{
    size_t n = 0;
    int ch = EOF;
    *too_long = 0;
    while ((ch = getc_unlocked(in)) != EOF && ch != '\n') {
        if (n >= limit) {
            *too_long = 1;
            continue; /* (read on to the line's end, keeping nothing) */
        }
        if (n + 1 >= *cap) {
            size_t grown = *cap ? *cap * 2 : 4096;
            char *p = realloc(*line, grown);
            if (!p) return -1;
            *line = p;
            *cap = grown;
        }
        (*line)[n++] = (char)ch;
    }
    if (ch == EOF && n == 0 && !*too_long) return -1;
    if (*too_long) n = 0;
    while (n > 0 && (*line)[n - 1] == '\r')
        n--;
    if (!*line && !(*line = malloc(1))) return -1;
    (*line)[n] = '\0';
    return (ssize_t)n;
}

static int blank(const char *line, ssize_t n)
{
    return (size_t)n == strspn(line, " \t");
}

/* Pass 1: every line of stdin is checked (added to a batch that is never sent) and
 * copied to spool, so that one bad line anywhere means nothing is written. Returns the
 * number of bad lines, or -1 when the spool cannot be written. */
static long long check_lines(cwork_batch *batch, FILE *spool, size_t batch_size,
                             size_t max_job_bytes)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t lineno = 0;
    long long bad = 0;
    size_t limit = line_limit(max_job_bytes);
    int too_long = 0;
    while ((n = next_line_bounded(stdin, &line, &cap, limit, &too_long)) >= 0) {
        lineno++;
        if (too_long) {
            fprintf(stderr,
                    "cwork enqueue: line %" PRIu64 ": longer than %zu bytes (--max-job-bytes "
                    "%zu)\n",
                    lineno, limit, max_job_bytes);
            bad++;
            continue;
        }
        if (fwrite(line, 1, (size_t)n, spool) != (size_t)n || putc('\n', spool) == EOF) {
            bad = -1;
            break;
        }
        if (!blank(line, n) && add_line(batch, line, (size_t)n, lineno) != 0) bad++;
        if (cwork_batch_count(batch) >= batch_size) cwork_batch_reset(batch);
    }
    cwork_batch_reset(batch);
    free(line);
    if (bad >= 0 && (fflush(spool) != 0 || ferror(stdin))) bad = -1;
    return bad;
}

/* --batch-callback / --batch, before any input is read: the callback's name and args and
 * the batch id are checked, and the batch is joined with a stand-in id so that the check
 * of the lines refuses what a tracked batch cannot hold (unique jobs). */
static int tracked_check(const enqueue_opts *o, cwork_batch *batch, cwork_args **cb_args)
{
    cwork_error err = {0};
    if (o->batch_callback) {
        const char *text = o->args_json ? o->args_json : "{}";
        if (cwork_validate_job_name(o->batch_callback, &err) != 0 ||
            cwork_args_parse(text, strlen(text), cb_args, &err) != 0) {
            fprintf(stderr, "cwork enqueue: --batch-callback: %s\n", err.message);
            return -1;
        }
    }
    if (cwork_batch_join(batch, o->batch_id ? o->batch_id : "000000000000000000000000", &err)) {
        fprintf(stderr, "cwork enqueue: --batch: %s\n", err.message);
        return -1;
    }
    return 0;
}

/* Opens the batch (--batch-callback) or checks that batch --batch is open, joins it and
 * prints its id. An exit status, CLI_OK when the jobs may be sent. */
static int tracked_start(const enqueue_opts *o, cwork_enqueuer *enq, cwork_batch *batch,
                         const cwork_args *cb_args, char id[25])
{
    cwork_error err = {0};
    int rc;
    if (o->batch_callback) {
        rc =
            cwork_batch_open(enq, o->on_complete ? CWORK_BATCH_ON_COMPLETE : CWORK_BATCH_ON_SUCCESS,
                             o->batch_callback, cb_args, id, &err);
    } else {
        cwork_batch_info info;
        snprintf(id, 25, "%s", o->batch_id);
        rc = cwork_batch_read(enq, id, &info, &err);
        if (rc == 0 && info.sealed) {
            fprintf(stderr, "cwork enqueue: batch %s is sealed: no job can join it\n", id);
            return CLI_USAGE;
        }
    }
    if (rc != 0) {
        fprintf(stderr, "cwork enqueue: %s\n", err.message);
        return rc == CWORK_ENOTFOUND                     ? CLI_NOT_FOUND
               : rc == CWORK_EINVAL || rc == CWORK_EJSON ? CLI_USAGE
                                                         : CLI_FAILURE;
    }
    if (cwork_batch_join(batch, id, &err) != 0) {
        fprintf(stderr, "cwork enqueue: %s\n", err.message);
        return CLI_FAILURE;
    }
    printf("%s\n", id);
    fflush(stdout);
    return CLI_OK;
}

/* Pass 1 of --bulk: every line checked and spooled, Redis reached, a tracked batch
 * opened or joined (its id in batch_id). An exit status, CLI_OK when the jobs may be
 * sent. */
static int bulk_prepare(const enqueue_opts *o, cwork_enqueuer *enq, cwork_batch *batch, FILE *spool,
                        char batch_id[25])
{
    int status = CLI_OK;
    int tracked = o->batch_callback || o->batch_id;
    cwork_args *cb_args = NULL;
    long long bad = 0;
    if (tracked && tracked_check(o, batch, &cb_args) != 0)
        status = CLI_USAGE;
    else
        bad = check_lines(batch, spool, o->batch_size, o->max_job_bytes);
    if (bad != 0) {
        if (bad < 0)
            fprintf(stderr, "cwork enqueue: cannot read the input or write its temporary copy\n");
        else
            fprintf(stderr, "cwork enqueue: %lld bad line%s; nothing written\n", bad,
                    bad == 1 ? "" : "s");
        status = bad < 0 ? CLI_FAILURE : CLI_USAGE;
    } else if (status == CLI_OK && cli_ping(&o->conn) != 0) {
        status = CLI_FAILURE;
    }
    if (status == CLI_OK && tracked) status = tracked_start(o, enq, batch, cb_args, batch_id);
    cwork_args_free(cb_args);
    return status;
}

/* Pass 2 of --bulk: the checked lines, sent batch by batch, then a tracked batch sealed
 * (unless --keep-open). Returns 1 when it stopped at a failure; *written_to is the last
 * line written. */
static int bulk_send(const enqueue_opts *o, cwork_enqueuer *enq, cwork_batch *batch, FILE *spool,
                     const char *batch_id, bulk_stats *st, uint64_t *written_to)
{
    int tracked = o->batch_callback || o->batch_id;
    rewind(spool);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t lineno = 0, batch_first = 1;
    int failed = 0;
    while (!failed && (n = next_line(spool, &line, &cap)) >= 0) {
        lineno++;
        if (!blank(line, n) && add_line(batch, line, (size_t)n, lineno) != 0)
            st->bad++; /* cannot happen: checked in pass 1 */
        if (cwork_batch_count(batch) >= o->batch_size) {
            failed = flush_batch(batch, st, batch_first, lineno, !o->quiet && !tracked) != 0;
            if (!failed) *written_to = lineno;
            batch_first = lineno + 1;
        }
    }
    free(line);
    if (!failed) {
        failed = flush_batch(batch, st, batch_first, lineno, !o->quiet && !tracked) != 0;
        if (!failed) *written_to = lineno;
    }
    if (!failed && tracked && !o->keep_open) {
        cwork_error err = {0};
        if (cwork_batch_seal(enq, batch_id, &err) != 0) {
            fprintf(stderr, "cwork enqueue: batch %s: every job written, but not sealed: %s\n",
                    batch_id, err.message);
            failed = 1;
            *written_to = lineno;
        }
    }
    return failed;
}

/* The summary line of --bulk on stderr. */
static void bulk_report(const bulk_stats *st, double secs, int failed, uint64_t written_to,
                        int tracked)
{
    char stop[128] = "";
    /* Each round trip is written whole or not at all (enqueue_batch.lua), so the lines
     * before the failed one are exactly what was written. */
    if (failed && written_to == 0)
        snprintf(stop, sizeof stop, "; stopped at a Redis failure: nothing was written%s",
                 tracked ? " (the batch stays open)" : "");
    else if (failed)
        snprintf(stop, sizeof stop,
                 "; stopped at a Redis failure: lines 1-%" PRIu64 " were written, the rest not%s",
                 written_to, tracked ? " (the batch stays open)" : "");
    fprintf(stderr,
            "cwork enqueue: %" PRIu64 " jobs written, %" PRIu64 " duplicates in %.3f s "
            "(%.0f jobs/s)%s\n",
            st->written, st->duplicates, secs, secs > 0 ? (double)st->written / secs : 0.0, stop);
}

static int enqueue_bulk(const enqueue_opts *o)
{
    cwork_redis *redis = cli_redis_new(&o->conn);
    if (!redis) return CLI_USAGE;
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, o->conn.ns, &err);
    cwork_batch *batch = enq ? cwork_batch_new(enq) : NULL;
    FILE *spool = batch ? tmpfile() : NULL;
    int status = CLI_FAILURE;
    if (!spool) {
        fprintf(stderr, "cwork enqueue: %s\n",
                !enq    ? err.message
                : batch ? "cannot create a temporary file"
                        : "out of memory");
        goto out;
    }
    cwork_enqueuer_set_max_job_bytes(enq, o->max_job_bytes);
    cwork_enqueuer_set_go_flavor(enq, o->flavor);
    cwork_enqueuer_set_go_json(enq, o->go_json);
    char batch_id[25] = "";
    status = bulk_prepare(o, enq, batch, spool, batch_id);
    if (status == CLI_OK) {
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        bulk_stats st = {0};
        uint64_t written_to = 0;
        int failed = bulk_send(o, enq, batch, spool, batch_id, &st, &written_to);
        bulk_report(&st, seconds_since(&t0), failed, written_to, o->batch_callback || o->batch_id);
        status = failed || st.bad ? CLI_FAILURE : CLI_OK;
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "cwork enqueue: cannot write the ids: %s\n", strerror(errno));
            status = CLI_FAILURE;
        }
    }
out:
    if (spool) fclose(spool);
    cwork_batch_free(batch);
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
    return status;
}

int cmd_enqueue(int argc, char **argv)
{
    enqueue_opts o = {0};
    o.conn.ns = "work";
    o.batch_size = 1000;
    o.max_job_bytes = CWORK_DEFAULT_MAX_JOB_BYTES;
    int p = parse_options(argc, argv, &o);
    if (p != 0) return p > 0 ? CLI_OK : CLI_USAGE;
    return o.bulk ? enqueue_bulk(&o) : enqueue_single(&o);
}
