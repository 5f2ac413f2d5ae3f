/* cwork stats: the web dashboard's numbers on the command line — processed and failed
 * today and per day (the per-day counters cwork pools keep), and per job name: waiting,
 * running, retry, dead, paused, last error. --json for scripts; --watch repeats every
 * few seconds and adds the live rate (from the difference of today's counters);
 * --history shows the per-minute counts of the last 24 hours instead. */
#include "cli.h"
#include "cmd_admin.h"
#include "opt.h"
#include "table.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char intro[] =
    "Usage: cwork stats [--days N] [--history] [--json] [--watch [SECONDS]] [--shard N]\n"
    "                   [--redis URL] [--ns NS]\n"
    "\n"
    "What the web UI's dashboard shows: jobs processed and failed today and on each of\n"
    "the last days (counted by cwork pools; Go pools do not count), and per job name the\n"
    "jobs waiting, running, waiting for a retry and dead, whether the name is paused and\n"
    "its last error. In a sharded namespace (cwork shards) every number adds up the\n"
    "shards (--sample counts per shard); --shard N shows one shard alone.\n";

static const char outro[] = "Exit status: 0, 1 when Redis fails, 2 for a bad command line.\n";

typedef struct stats_opts {
    cli_conn_opts conn;
    unsigned days;
    size_t sample;
    int json;
    int history;      /* --history: the per-minute counts instead */
    int64_t watch_ms; /* 0: print once */
    long shard;       /* --shard N: that shard alone; -1: the namespace */
} stats_opts;

/* One reading: today's counters and history, and the per-name rows. */
typedef struct reading {
    cwork_day_stats *days;
    size_t ndays;
    cwork_job_types types;
    int64_t at_ms; /* monotonic, for the rate */
} reading;

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --days N and --sample N: a whole number from 1 to a maximum. */
static int set_count(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    stats_opts *o = opts;
    int days = strcmp(ctx->opt->name, "days") == 0;
    char *end;
    errno = 0;
    unsigned long v = strtoul(value, &end, 10);
    unsigned long max = days ? 366 : 1000000;
    if (errno || end == value || *end || value[0] == '-' || v < 1 || v > max) {
        fprintf(stderr, "cwork stats: --%s takes a whole number from 1 to %lu, not \"%s\"\n",
                ctx->opt->name, max, value);
        return -1;
    }
    if (days)
        o->days = (unsigned)v;
    else
        o->sample = v;
    return 0;
}

/* --watch [SECONDS]: an optional value, --watch=5s or a next argument that reads as a
 * duration. */
static int set_watch(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    stats_opts *o = opts;
    cli_args *a = ctx->args;
    int64_t ms;
    o->watch_ms = 2000;
    /* The next argument is its value when it reads as a duration, or as a negative one
     * (refused below, naming --watch, rather than taken for an argument of its own). */
    if (!value && a->i < a->argc &&
        (cli_duration_ms(a->argv[a->i], &ms) == 0 ||
         (a->argv[a->i][0] == '-' && cli_duration_ms(a->argv[a->i] + 1, &ms) == 0)))
        value = a->argv[a->i++];
    if (value) {
        if (cli_duration_ms(value, &ms) != 0 || ms < 100) {
            fprintf(stderr,
                    "cwork stats: --watch takes a duration of at least 0.1s "
                    "(2, 5s, 1m; not negative), not \"%s\"\n",
                    value);
            return -1;
        }
        o->watch_ms = ms;
    }
    return 0;
}

/* --shard N: a shard number (checked against the namespace's count once connected). */
static int set_shard(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    uint64_t v = 0;
    if (cli_opt_uint(ctx, value, 0, 1023, "a shard number from 0 to 1023", &v) != 0) return -1;
    ((stats_opts *)opts)->shard = (long)v;
    return 0;
}

static const cli_opt stats_options[] = {
    {"days", NULL, CLI_ARG_REQUIRED, "N", "days of history, today included (1-366, default 7)",
     set_count, 0, 0, NULL, 0},
    {"history", NULL, CLI_ARG_NONE, NULL,
     "the jobs finished per minute over the last 24 hours instead\n"
     "(kept by cwork pools for 25 h), summed per UTC hour; with\n"
     "--json every minute too",
     cli_set_flag, offsetof(stats_opts, history), 0, NULL, 0},
    {"json", NULL, CLI_ARG_NONE, NULL, "one JSON object (with --watch: one per line)", cli_set_flag,
     offsetof(stats_opts, json), 0, NULL, 0},
    {"watch", NULL, CLI_ARG_OPTIONAL, "SECONDS",
     "print again every SECONDS (a duration, default 2s) with the\n"
     "rate since the last print, until Ctrl-C",
     set_watch, 0, 0, NULL, 0},
    {"sample", NULL, CLI_ARG_REQUIRED, "N",
     "retry and dead jobs read for the per-name counts (default\n"
     "10000); above it the counts are of the newest N",
     set_count, 0, 0, NULL, 0},
    {"shard", NULL, CLI_ARG_REQUIRED, "N",
     "shard N of a sharded namespace alone (0 is the namespace\n"
     "itself; cwork shards lists them)",
     set_shard, 0, 0, NULL, 0},
    CLI_CONN_OPTS(stats_opts, conn),
    CLI_HELP_OPT,
    CLI_OPT_END};

const cli_command cli_stats_command = {
    .name = "stats",
    .summary = "processed and failed jobs today and per day, and per job name",
    .intro = intro,
    .outro = outro,
    .opts = stats_options,
    .seen_field = CLI_NO_SEEN,
};

/* 0 to go on, 1 when --help was printed, -1 on a bad command line (reported). */
static int parse_options(int argc, char **argv, stats_opts *o)
{
    memset(o, 0, sizeof *o);
    o->conn.ns = "work";
    o->days = 7;
    o->sample = 10000;
    o->shard = -1;
    return cli_parse(&cli_stats_command, "cwork stats", argc, argv, 2, o, NULL);
}

static int read_stats(cwork_client *client, const stats_opts *o, reading *r)
{
    memset(r, 0, sizeof *r);
    cwork_error err = {0};
    cwork_client_damage_clear();
    if (cwork_client_daily_stats(client, o->days, &r->days, &r->ndays, &err) != 0 ||
        cwork_client_job_types(client, o->sample, &r->types, &err) != 0) {
        fprintf(stderr, "cwork stats: %s\n", err.message);
        return -1;
    }
    r->at_ms = monotonic_ms();
    return 0;
}

static void reading_clear(reading *r)
{
    cwork_free(r->days);
    cwork_job_types_free(&r->types);
    memset(r, 0, sizeof *r);
}

/* Jobs per second processed between two readings, or -1 when it cannot be told (no
 * earlier reading, or the day changed in between and the counter restarted). */
static double rate(const reading *now, const reading *before)
{
    if (!before || !before->ndays || !now->ndays || now->at_ms <= before->at_ms) return -1;
    const cwork_day_stats *a = &before->days[before->ndays - 1], *b = &now->days[now->ndays - 1];
    if (strcmp(a->date, b->date) != 0 || b->processed < a->processed) return -1;
    return (double)(b->processed - a->processed) * 1000.0 / (double)(now->at_ms - before->at_ms);
}

static void print_json(const stats_opts *o, const reading *r, double per_s)
{
    const cwork_day_stats *today = &r->days[r->ndays - 1];
    printf("{\"ns\":");
    admin_json_string(o->conn.ns, strlen(o->conn.ns));
    printf(",\"today\":{\"date\":\"%s\",\"processed\":%" PRId64 ",\"failed\":%" PRId64 "}",
           today->date, today->processed, today->failed);
    if (per_s >= 0) printf(",\"processed_per_second\":%.1f", per_s);
    printf(",\"days\":[");
    for (size_t i = 0; i < r->ndays; i++)
        printf("%s{\"date\":\"%s\",\"processed\":%" PRId64 ",\"failed\":%" PRId64 "}", i ? "," : "",
               r->days[i].date, r->days[i].processed, r->days[i].failed);
    printf("],\"retry_total\":%" PRId64 ",\"dead_total\":%" PRId64
           ",\"sampled\":%s,\"job_types\":[",
           r->types.retry_total, r->types.dead_total,
           r->types.retry_read < r->types.retry_total || r->types.dead_read < r->types.dead_total
               ? "true"
               : "false");
    for (size_t i = 0; i < r->types.n; i++) {
        const cwork_job_type_stats *t = &r->types.types[i];
        printf("%s{\"name\":", i ? "," : "");
        admin_json_string(t->job_name, strlen(t->job_name));
        printf(",\"known\":%s,\"paused\":%s,\"waiting\":%" PRId64 ",\"latency\":%" PRId64
               ",\"running\":%" PRId64 ",\"retry\":%" PRId64 ",\"dead\":%" PRId64
               ",\"last_error\":",
               t->known ? "true" : "false", t->paused ? "true" : "false", t->waiting, t->latency,
               t->running, t->retry, t->dead);
        if (t->last_error)
            admin_json_string(t->last_error, strlen(t->last_error));
        else
            fputs("null", stdout);
        printf(",\"last_failed_at\":%" PRId64 "}", t->last_failed_at);
    }
    printf("]");
    if (cwork_client_damage(NULL)) {
        printf(",\"damaged\":");
        cli_json_damaged();
    }
    printf("}\n");
}

static void print_text(const stats_opts *o, const reading *r, double per_s)
{
    const cwork_day_stats *today = &r->days[r->ndays - 1];
    printf("namespace %s, today %s (UTC): %" PRId64 " processed, %" PRId64 " failed", o->conn.ns,
           today->date, today->processed, today->failed);
    if (per_s >= 0) printf(", now %.1f jobs/s", per_s);
    printf("\n\n");
    if (r->ndays > 1) {
        static const char *const h[] = {"DAY", "PROCESSED", "FAILED"};
        table *t = table_new(3, h);
        if (!t) return;
        table_set_right(t, 1);
        table_set_right(t, 2);
        for (size_t i = r->ndays; i-- > 0;) {
            table_cell(t, r->days[i].date);
            table_cellf(t, "%" PRId64, r->days[i].processed);
            table_cellf(t, "%" PRId64, r->days[i].failed);
        }
        table_print(t, stdout);
        table_free(t);
        printf("\n");
    }
    static const char *const h[] = {"JOB",  "WAITING", "RUNNING",   "RETRY",
                                    "DEAD", "PAUSED",  "LAST ERROR"};
    table *t = table_new(7, h);
    if (!t) return;
    for (size_t c = 1; c <= 4; c++)
        table_set_right(t, c);
    table_set_max_width(t, 0, 40);
    table_set_max_width(t, 6, 60);
    for (size_t i = 0; i < r->types.n; i++) {
        const cwork_job_type_stats *ty = &r->types.types[i];
        table_cell(t, ty->job_name);
        table_cellf(t, "%" PRId64, ty->waiting);
        table_cellf(t, "%" PRId64, ty->running);
        table_cellf(t, "%" PRId64, ty->retry);
        table_cellf(t, "%" PRId64, ty->dead);
        table_cell(t, ty->paused ? "yes" : "no");
        table_cell(t, ty->last_error ? ty->last_error : "-");
    }
    if (table_rows(t))
        table_print(t, stdout);
    else
        printf("no job names yet (none known, waiting, running, retried or dead)\n");
    table_free(t);
    if (r->types.retry_read < r->types.retry_total || r->types.dead_read < r->types.dead_total)
        printf("\nretry and dead per name: the newest %" PRId64 " of %" PRId64 " retry and %" PRId64
               " of %" PRId64 " dead jobs (--sample)\n",
               r->types.retry_read, r->types.retry_total, r->types.dead_read, r->types.dead_total);
}

/* ---------------------------------------------------------------- --history */

#define HISTORY_MINUTES 1440

/* The last 24 hours per minute: per UTC hour (newest first) with its busiest minute, and
 * the totals of the day and of the last hour; --json adds every minute. 0 or -1. */
static int print_history(cwork_client *client, const stats_opts *o)
{
    cwork_minute_stats *m = NULL;
    size_t n = 0;
    cwork_error err = {0};
    if (cwork_client_throughput(client, HISTORY_MINUTES, &m, &n, &err) != 0) {
        fprintf(stderr, "cwork stats: %s\n", err.message);
        return -1;
    }
    int64_t day_p = 0, day_f = 0, hour_p = 0, hour_f = 0;
    for (size_t i = 0; i < n; i++) {
        day_p += m[i].processed;
        day_f += m[i].failed;
        if (i + 60 >= n) {
            hour_p += m[i].processed;
            hour_f += m[i].failed;
        }
    }
    if (o->json) {
        printf("{\"ns\":");
        admin_json_string(o->conn.ns, strlen(o->conn.ns));
        printf(",\"processed\":%" PRId64 ",\"failed\":%" PRId64
               ",\"last_hour\":{\"processed\":%" PRId64 ",\"failed\":%" PRId64 "},\"hours\":[",
               day_p, day_f, hour_p, hour_f);
    } else {
        printf("namespace %s, the last 24 hours (UTC): %" PRId64 " processed, %" PRId64
               " failed; the last hour: %" PRId64 " processed, %" PRId64 " failed\n\n",
               o->conn.ns, day_p, day_f, hour_p, hour_f);
    }
    static const char *const h[] = {"HOUR (UTC)", "PROCESSED", "FAILED", "BUSIEST MINUTE"};
    table *t = o->json ? NULL : table_new(4, h);
    if (t)
        for (size_t c = 1; c <= 3; c++)
            table_set_right(t, c);
    /* Hours newest first: walk the minutes backwards, one row per hour met. */
    int first_row = 1;
    for (size_t end = n; end > 0;) {
        int64_t hour = m[end - 1].minute / 3600 * 3600, p = 0, f = 0, busiest = 0;
        size_t start = end;
        while (start > 0 && m[start - 1].minute >= hour) {
            start--;
            p += m[start].processed;
            f += m[start].failed;
            if (m[start].processed > busiest) busiest = m[start].processed;
        }
        char when[24];
        time_t tt = (time_t)hour;
        struct tm tm;
        gmtime_r(&tt, &tm);
        strftime(when, sizeof when, o->json ? "%Y-%m-%dT%H" : "%Y-%m-%d %H:00", &tm);
        if (o->json) {
            printf("%s{\"hour\":\"%s\",\"processed\":%" PRId64 ",\"failed\":%" PRId64
                   ",\"busiest_minute\":%" PRId64 "}",
                   first_row ? "" : ",", when, p, f, busiest);
        } else if (t) {
            table_cell(t, when);
            table_cellf(t, "%" PRId64, p);
            table_cellf(t, "%" PRId64, f);
            table_cellf(t, "%" PRId64, busiest);
        }
        first_row = 0;
        end = start;
    }
    if (o->json) {
        printf("],\"minutes\":{\"first\":%" PRId64 ",\"step\":60,\"processed\":[",
               n ? m[0].minute : 0);
        for (size_t i = 0; i < n; i++)
            printf("%s%" PRId64, i ? "," : "", m[i].processed);
        printf("],\"failed\":[");
        for (size_t i = 0; i < n; i++)
            printf("%s%" PRId64, i ? "," : "", m[i].failed);
        printf("]}}\n");
    } else if (t) {
        table_print(t, stdout);
        table_free(t);
    }
    cwork_free(m);
    return 0;
}

static volatile sig_atomic_t stop_;

static void on_signal(int sig)
{
    (void)sig;
    stop_ = 1;
}

/* Connects and makes the client, and with --shard that shard's view: CLI_OK, or the exit
 * status of the failure (reported; nothing left open). */
static int open_client(const stats_opts *o, cwork_redis **redis, cwork_client **client,
                       cwork_client **view)
{
    int status;
    *redis = cli_connect(&o->conn, &status);
    if (!*redis) return status;
    cwork_error err = {0};
    *client = cwork_client_new(*redis, o->conn.ns, &err);
    *view =
        !*client || o->shard < 0 ? *client : cwork_client_shard(*client, (unsigned)o->shard, &err);
    if (*view) return CLI_OK;
    fprintf(stderr, "cwork stats: %s\n", err.message);
    status = *client && err.code == CWORK_EINVAL ? CLI_USAGE : CLI_FAILURE;
    cwork_client_free(*client);
    cwork_redis_free(*redis);
    return status;
}

int cmd_stats(int argc, char **argv)
{
    stats_opts o;
    int p = parse_options(argc, argv, &o);
    if (p != 0) return p > 0 ? CLI_OK : CLI_USAGE;
    cwork_redis *redis = NULL;
    cwork_client *client = NULL, *view = NULL;
    int status = open_client(&o, &redis, &client, &view);
    if (status != CLI_OK) return status;
    if (o.watch_ms) {
        struct sigaction sa = {0};
        sa.sa_handler = on_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    int rc = CLI_OK, tty = isatty(STDOUT_FILENO);
    reading prev = {0}, now;
    for (int first = 1; !stop_; first = 0) {
        if (o.history) {
            if (o.watch_ms && !o.json) fputs(tty ? "\033[H\033[2J" : (first ? "" : "\n"), stdout);
            rc = print_history(view, &o) == 0 ? CLI_OK : CLI_FAILURE;
            fflush(stdout);
        } else if (read_stats(view, &o, &now) != 0) {
            reading_clear(&now);
            rc = CLI_FAILURE;
            if (!o.watch_ms) break;
        } else {
            double per_s = rate(&now, first ? NULL : &prev);
            if (o.watch_ms && !o.json) fputs(tty ? "\033[H\033[2J" : (first ? "" : "\n"), stdout);
            if (o.json)
                print_json(&o, &now, per_s);
            else
                print_text(&o, &now, per_s);
            fflush(stdout);
            cli_warn_damage("cwork stats", o.conn.ns);
            reading_clear(&prev);
            prev = now;
            rc = CLI_OK;
        }
        if (!o.watch_ms) break;
        struct timespec ts = {(time_t)(o.watch_ms / 1000), (long)(o.watch_ms % 1000) * 1000000};
        while (!stop_ && nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    reading_clear(&prev);
    cwork_client_free(client);
    cwork_redis_free(redis);
    return rc;
}
