/* cwork limits and cwork limit: the namespace's rate limits per job type (PROTOCOL §20),
 * shown and changed while pools run. Every cwork pool follows the setting within about a
 * second; Go pools ignore it. */
#include "cli.h"
#include "cmd_admin.h"
#include "table.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char limits_help[] =
    "Usage: cwork limits [--json] [--redis URL] [--ns NS]\n"
    "\n"
    "Lists the namespace's rate limits per job type (set by `cwork limit`, by `cwork\n"
    "work --rate-limit` or a pool's rate_limit option) and whether each type is held\n"
    "back now: a limit of N per DURATION schedules the type's starts DURATION/N apart\n"
    "across every cwork pool (at most N + 1 in any window of DURATION); a held-back\n"
    "type's jobs wait in their queue.\n"
    "\n"
    "Options:\n"
    "  --json   {\"rate_limits\":[{\"name\":…,\"limit\":\"100/1s\",\"count\":100,\n"
    "           \"window_ms\":1000,\"valid\":true,\"limited_now\":false,\"next_in_us\":0}]}\n"
    "  --redis URL, --ns NS, --go-flavor fork|upstream   as for every command\n"
    "\n"
    "Exit status: 0, 1 when Redis fails, 2 for a bad command line.\n";

static const char limit_help[] =
    "Usage: cwork limit [--json] [--redis URL] [--ns NS] NAME N/DURATION|off\n"
    "\n"
    "Sets the rate limit of job type NAME for every cwork pool of the namespace: at most\n"
    "N jobs start per DURATION (a whole number of ms, s, m or h: 100/1s, 5000/1m, 10/s),\n"
    "spaced DURATION/N apart. Running pools follow within about a second; a changed\n"
    "limit spaces the type's starts anew from its next start. `off` removes the limit.\n"
    "Go pools ignore rate limits.\n"
    "\n"
    "Options:\n"
    "  --json   print {\"name\":\"NAME\",\"limit\":\"100/1s\"} (\"limit\":null after off)\n"
    "  --redis URL, --ns NS, --go-flavor fork|upstream   as for every command\n"
    "\n"
    "Exit status: 0, 1 when Redis fails, 2 for a bad command line or limit.\n";

typedef struct limits_opts {
    admin_opts admin; /* first: admin_run hands it back to set_limit */
    int json;
    const char *pos[2];
    size_t npos;
    unsigned count; /* cwork limit: the limit, count 0 for off */
    int64_t window_ms;
} limits_opts;

static int parse(int argc, char **argv, limits_opts *o, const char *label, const char *help,
                 size_t want_pos)
{
    static const char *const names[] = {"json", CLI_COMMON_OPTIONS, NULL};
    memset(o, 0, sizeof *o);
    snprintf(o->admin.label, sizeof o->admin.label, "%s", label);
    o->admin.conn.ns = "work";
    cli_args a;
    cli_args_init(&a, argc, argv, 2);
    for (int k; (k = cli_next(&a)) >= 0;) {
        if (k == 0) {
            if (o->npos == want_pos) {
                fprintf(stderr, "%s: unexpected argument \"%s\" (see %s --help)\n", label, a.value,
                        label);
                return -1;
            }
            o->pos[o->npos++] = a.value;
            continue;
        }
        int c = cli_conn_option(&a, &o->admin.conn);
        if (c < 0) return -1;
        if (c) continue;
        if (cli_is(&a, "help") || cli_is(&a, "h")) {
            fputs(help, stdout);
            exit(CLI_OK);
        } else if (cli_is(&a, "json")) {
            if (cli_flag(&a) != 0) return -1;
            o->json = 1;
            o->admin.seen |= OPT_JSON;
        } else {
            cli_unknown_option(label, &a, names);
            return -1;
        }
    }
    if (o->npos != want_pos) {
        fprintf(stderr, "%s: %s (see %s --help)\n", label,
                want_pos ? "give NAME and N/DURATION (or off)" : "takes no arguments", label);
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
    if (parse(argc, argv, &o, "cwork limits", limits_help, 0) != 0) return CLI_USAGE;
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
    if (parse(argc, argv, &o, "cwork limit", limit_help, 2) != 0) return CLI_USAGE;
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
