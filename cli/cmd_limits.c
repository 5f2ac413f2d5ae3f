/* cwork limits and cwork limit: the namespace's rate limits per job type (PROTOCOL §20),
 * shown and changed while pools run. Every cwork pool follows the setting within about a
 * second; Go pools ignore it. */
#include "cli.h"
#include "cmd_admin.h"
#include "opt.h"
#include "table.h"

#include <inttypes.h>
#include <string.h>

static const char limits_intro[] =
    "Usage: cwork limits [--json] [--redis URL] [--ns NS]\n"
    "\n"
    "Lists the namespace's rate limits per job type (set by `cwork limit`, by `cwork\n"
    "work --rate-limit` or a pool's rate_limit option) and whether each type is held\n"
    "back now: a limit of N per DURATION schedules the type's starts DURATION/N apart\n"
    "across every cwork pool (at most N + 1 in any window of DURATION); a held-back\n"
    "type's jobs wait in their queue.\n";

static const char limits_outro[] =
    "Exit status: 0, 1 when Redis fails, 2 for a bad command line.\n";

static const char limit_intro[] =
    "Usage: cwork limit [--json] [--redis URL] [--ns NS] NAME N/DURATION|off\n"
    "\n"
    "Sets the rate limit of job type NAME for every cwork pool of the namespace: at most\n"
    "N jobs start per DURATION (a whole number of ms, s, m or h: 100/1s, 5000/1m, 10/s),\n"
    "spaced DURATION/N apart. Running pools follow within about a second; a changed\n"
    "limit spaces the type's starts anew from its next start. `off` removes the limit.\n"
    "Go pools ignore rate limits.\n";

static const char limit_outro[] =
    "Exit status: 0, 1 when Redis fails, 2 for a bad command line or limit.\n";

typedef struct limits_opts {
    admin_opts admin; /* first: admin_run hands it back to set_limit */
    int json;
    const char *pos[2];
    size_t npos;
    unsigned count; /* cwork limit: the limit, count 0 for off */
    int64_t window_ms;
} limits_opts;

static const cli_opt limits_options[] = {
    {"json", NULL, CLI_ARG_NONE, NULL,
     "{\"rate_limits\":[{\"name\":…,\"limit\":\"100/1s\",\"count\":100,\n"
     "\"window_ms\":1000,\"valid\":true,\"limited_now\":false,\"next_in_us\":0}]}",
     cli_set_flag, offsetof(limits_opts, json), OPT_JSON, NULL, 0},
    CLI_CONN_OPTS(limits_opts, admin.conn),
    CLI_HELP_OPT,
    CLI_OPT_END};

static const cli_opt limit_options[] = {
    {"json", NULL, CLI_ARG_NONE, NULL,
     "print {\"name\":\"NAME\",\"limit\":\"100/1s\"} (\"limit\":null after off)", cli_set_flag,
     offsetof(limits_opts, json), OPT_JSON, NULL, 0},
    CLI_CONN_OPTS(limits_opts, admin.conn),
    CLI_HELP_OPT,
    CLI_OPT_END};

const cli_command cli_limits_command = {
    .name = "limits",
    .intro = limits_intro,
    .outro = limits_outro,
    .opts = limits_options,
    .seen_field = offsetof(limits_opts, admin.seen),
};

const cli_command cli_limit_command = {
    .name = "limit",
    .intro = limit_intro,
    .outro = limit_outro,
    .opts = limit_options,
    .seen_field = offsetof(limits_opts, admin.seen),
};

/* cwork limit's NAME and N/DURATION|off. */
static int take_positional(void *opts, const char *arg)
{
    limits_opts *o = opts;
    if (o->npos == 2) {
        fprintf(stderr, "cwork limit: unexpected argument \"%s\" (see cwork limit --help)\n", arg);
        return -1;
    }
    o->pos[o->npos++] = arg;
    return 0;
}

/* 0 to go on, 1 when --help was printed, -1 on a bad command line (reported). */
static int parse(int argc, char **argv, limits_opts *o, const cli_command *cmd)
{
    memset(o, 0, sizeof *o);
    snprintf(o->admin.label, sizeof o->admin.label, "cwork %s", cmd->name);
    const char *label = o->admin.label;
    o->admin.conn.ns = "work";
    size_t want_pos = cmd == &cli_limit_command ? 2 : 0;
    int p = cli_parse(cmd, label, argc, argv, 2, o, want_pos ? take_positional : NULL);
    if (p != 0) return p;
    if (o->npos != want_pos) {
        fprintf(stderr, "%s: give NAME and N/DURATION (or off) (see %s --help)\n", label, label);
        return -1;
    }
    return cli_go_flavor(&o->admin.conn, &o->admin.flavor);
}

/* ---------------------------------------------------------------- limits */

static void print_json(const cwork_rate_limit_info *l, size_t n)
{
    fputs("{\"rate_limits\":[", stdout);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",{\"name\":" : "{\"name\":", stdout);
        admin_json_string(l[i].job_name, strlen(l[i].job_name));
        fputs(",\"limit\":", stdout);
        admin_json_string(l[i].text, strlen(l[i].text));
        printf(",\"count\":%u,\"window_ms\":%" PRId64 ",\"valid\":%s,\"limited_now\":%s,"
               "\"next_in_us\":%" PRId64 "}",
               l[i].count, l[i].window_ms, l[i].count ? "true" : "false",
               l[i].limited_now ? "true" : "false", l[i].next_in_us);
    }
    fputs("]", stdout);
    if (cwork_client_damage(NULL)) {
        fputs(",\"damaged\":", stdout);
        cli_json_damaged();
    }
    fputs("}\n", stdout);
}

static int print_table(const cwork_rate_limit_info *l, size_t n)
{
    static const char *const headers[] = {"NAME", "LIMIT", "HELD BACK", "NEXT START IN"};
    table *t = table_new(4, headers);
    int oom = !t;
    for (size_t i = 0; t && i < n; i++) {
        char next[32] = "-";
        if (l[i].limited_now && l[i].next_in_us)
            snprintf(next, sizeof next, "%.3f s", (double)l[i].next_in_us / 1e6);
        const char *held = l[i].count ? (l[i].limited_now ? "yes" : "no") : "yes (invalid)";
        oom = oom || table_cell(t, l[i].job_name) || table_cell(t, l[i].text) ||
              table_cell(t, held) || table_cell(t, next);
    }
    if (!oom) table_print(t, stdout);
    table_free(t);
    if (oom) fprintf(stderr, "cwork limits: out of memory\n");
    return oom ? CLI_FAILURE : CLI_OK;
}

static int show_limits(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    cwork_rate_limit_info *l = NULL;
    size_t n = 0;
    int rc = cwork_client_rate_limits(client, &l, &n, &err);
    if (rc) return admin_fail(o, rc, &err);
    int status = CLI_OK;
    if (o->seen & OPT_JSON)
        print_json(l, n);
    else if (n == 0)
        printf("No rate limits.\n");
    else
        status = print_table(l, n);
    cwork_rate_limit_infos_free(l, n);
    return status;
}

int cmd_limits(int argc, char **argv)
{
    limits_opts o;
    int p = parse(argc, argv, &o, &cli_limits_command);
    if (p != 0) return p > 0 ? CLI_OK : CLI_USAGE;
    return admin_run(&o.admin, show_limits);
}

/* ---------------------------------------------------------------- limit */

static int set_limit(const admin_opts *o, cwork_client *client)
{
    const limits_opts *lo = (const limits_opts *)o; /* its first member */
    unsigned count = lo->count;
    int64_t window_ms = lo->window_ms;
    cwork_error err = {0};
    const char *name = o->arg;
    int rc = cwork_client_set_rate_limit(client, name, count, window_ms, &err);
    if (rc) return admin_fail(o, rc, &err);
    char text[32] = "";
    if (count) cwork_rate_limit_format(count, window_ms, text, sizeof text, NULL);
    if (o->seen & OPT_JSON) {
        fputs("{\"name\":", stdout);
        admin_json_string(name, strlen(name));
        if (count)
            printf(",\"limit\":\"%s\"}\n", text);
        else
            fputs(",\"limit\":null}\n", stdout);
    } else if (count) {
        printf("Rate limit of %s: %s (cwork pools follow within about a second).\n", name, text);
    } else {
        printf("Rate limit of %s: off.\n", name);
    }
    return CLI_OK;
}

int cmd_limit(int argc, char **argv)
{
    limits_opts o;
    int p = parse(argc, argv, &o, &cli_limit_command);
    if (p != 0) return p > 0 ? CLI_OK : CLI_USAGE;
    cwork_error err = {0};
    int rc = cwork_validate_job_name(o.pos[0], &err);
    if (rc == 0 && strcmp(o.pos[1], "off") != 0)
        rc = cwork_rate_limit_parse(o.pos[1], &o.count, &o.window_ms, &err);
    if (rc) {
        fprintf(stderr, "cwork limit: %s\n", err.message);
        return CLI_USAGE;
    }
    o.admin.arg = o.pos[0];
    return admin_run(&o.admin, set_limit);
}
