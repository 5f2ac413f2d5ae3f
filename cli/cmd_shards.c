/* cwork shards: how a namespace is sharded (PROTOCOL §27) — the record's count and when
 * it was written, and per shard its namespace and what it holds (jobs waiting, running,
 * retry, scheduled, dead; pools), with a total line. Each shard is read through the
 * client's per-shard view (cwork_client_shard). */
#include "cli.h"
#include "cmd_admin.h"
#include "cmd_shards.h"
#include "opt.h"
#include "table.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char shards_intro[] =
    "Usage: cwork shards [--json] [--redis URL] [--ns NS]\n"
    "       cwork shards grow S | finish [--redis URL] [--ns NS]\n"
    "\n"
    "Shows how the namespace is sharded (PROTOCOL §27): the shard count recorded in\n"
    "<ns>:cwork:shards and when it was written, and per shard its namespace (shard 0 is\n"
    "the namespace itself, shard i is {<ns>.i}) and the jobs waiting, running, waiting for\n"
    "a retry, scheduled and dead there, and its worker pools; then the total. A namespace\n"
    "without a record has one shard.\n"
    "\n"
    "grow S raises the count to S (no shrinking; 1024 at most; again with the same S\n"
    "changes nothing): new jobs spread over all S shards, jobs in the old ones stay and\n"
    "are served there, running processes follow within 5 s. While a grow is in progress\n"
    "cwork shards also shows the unique guards and open tracked batches of the old shards\n"
    "that still route there, and finish ends the grow once there are none (PROTOCOL\n"
    "§27.5, README \"Sharding\").\n";

static const char shards_outro[] =
    "Exit status: 0, 1 when Redis fails, 2 for a bad command line or a damaged record.\n";

typedef struct shards_opts {
    admin_opts admin;
} shards_opts;

static const cli_opt shards_options[] = {
    {"json", NULL, CLI_ARG_NONE, NULL,
     "{\"count\":3,\"created\":1700000000,\"shards\":[{\"shard\":0,\"ns\":…,\n"
     "\"queued\":0,\"running\":0,\"retry\":0,\"scheduled\":0,\"dead\":0,\n"
     "\"pools\":0}],\"total\":{…}}",
     admin_set_option, 0, OPT_JSON, NULL, 0},
    CLI_CONN_OPTS(shards_opts, admin.conn),
    CLI_HELP_OPT,
    CLI_OPT_END};

static const char *const shards_subs[] = {"grow", "finish", NULL};

const cli_command cli_shards_command = {
    .name = "shards",
    .subs = shards_subs,
    .intro = shards_intro,
    .outro = shards_outro,
    .opts = shards_options,
    .seen_field = offsetof(shards_opts, admin.seen),
};

/* What one shard holds. */
typedef struct shard_counts {
    int64_t queued, running, retry, scheduled, dead, pools;
} shard_counts;

/* Shard i's namespace by PROTOCOL §27.1: ns itself for 0, else "{base.i}" with base ns
 * without the braces of a whole-name hash tag. */
static void shard_name(const char *ns, unsigned i, char *out, size_t size)
{
    size_t len = strlen(ns);
    if (i == 0)
        snprintf(out, size, "%s", ns);
    else if (len >= 2 && ns[0] == '{' && ns[len - 1] == '}')
        snprintf(out, size, "{%.*s.%u}", (int)(len - 2), ns + 1, i);
    else
        snprintf(out, size, "{%s.%u}", ns, i);
}

static int set_total(cwork_client *shard, cwork_job_set set, int64_t *out, cwork_error *err)
{
    cwork_list_query q = {1, 1, NULL, false};
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    int rc = cwork_client_list_page(shard, set, &q, &jobs, &n, out, err);
    cwork_listed_jobs_free(jobs, n);
    return rc;
}

static int read_counts(cwork_client *shard, shard_counts *c, cwork_error *err)
{
    memset(c, 0, sizeof *c);
    cwork_queue_info *q = NULL;
    size_t nq = 0;
    int rc = cwork_client_queues(shard, &q, &nq, err);
    for (size_t i = 0; rc == 0 && i < nq; i++)
        c->queued += q[i].count;
    cwork_queue_infos_free(q, nq);
    cwork_worker_observation *w = NULL;
    size_t nw = 0;
    if (rc == 0) rc = cwork_client_workers(shard, &w, &nw, err);
    for (size_t i = 0; rc == 0 && i < nw; i++)
        c->running += w[i].is_busy;
    cwork_worker_observations_free(w, nw);
    cwork_pool_heartbeat *p = NULL;
    size_t np = 0;
    if (rc == 0) rc = cwork_client_pools(shard, &p, &np, err);
    c->pools = (int64_t)np;
    cwork_pool_heartbeats_free(p, np);
    if (rc == 0) rc = set_total(shard, CWORK_SET_RETRY, &c->retry, err);
    if (rc == 0) rc = set_total(shard, CWORK_SET_SCHEDULED, &c->scheduled, err);
    if (rc == 0) rc = set_total(shard, CWORK_SET_DEAD, &c->dead, err);
    return rc;
}

static void add_counts(shard_counts *sum, const shard_counts *c)
{
    sum->queued += c->queued;
    sum->running += c->running;
    sum->retry += c->retry;
    sum->scheduled += c->scheduled;
    sum->dead += c->dead;
    sum->pools += c->pools;
}

static void print_counts_json(const shard_counts *c)
{
    printf("\"queued\":%" PRId64 ",\"running\":%" PRId64 ",\"retry\":%" PRId64
           ",\"scheduled\":%" PRId64 ",\"dead\":%" PRId64 ",\"pools\":%" PRId64 "}",
           c->queued, c->running, c->retry, c->scheduled, c->dead, c->pools);
}

static int counts_row(table *t, const char *shard, const char *ns, const shard_counts *c)
{
    return table_cell(t, shard) || table_cell(t, ns) || table_cellf(t, "%" PRId64, c->queued) ||
           table_cellf(t, "%" PRId64, c->running) || table_cellf(t, "%" PRId64, c->retry) ||
           table_cellf(t, "%" PRId64, c->scheduled) || table_cellf(t, "%" PRId64, c->dead) ||
           table_cellf(t, "%" PRId64, c->pools);
}

static void print_head(unsigned count, int64_t created)
{
    if (created == 0) {
        printf("%u shard (no record: the namespace is not sharded).\n\n", count);
        return;
    }
    char when[32] = "?";
    time_t t = (time_t)created;
    struct tm tm;
    if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    printf("%u shard%s, recorded %s.\n\n", count, count == 1 ? "" : "s", when);
}

static int show_shards(const admin_opts *o, cwork_client *client)
{
    static const char *const headers[] = {"SHARD", "NAMESPACE", "QUEUED", "RUNNING",
                                          "RETRY", "SCHEDULED", "DEAD",   "POOLS"};
    cwork_error err = {0};
    unsigned count = 0;
    int64_t created = 0;
    int rc = cwork_client_shards(client, &count, &err);
    if (rc == 0) rc = cwork_client_shards_created(client, &created, &err);
    if (rc) return admin_fail(o, rc, &err);
    int json = (o->seen & OPT_JSON) != 0;
    table *t = json ? NULL : table_new(8, headers);
    int oom = !json && !t;
    for (size_t col = 2; t && col < 8; col++)
        table_set_right(t, col);
    cwork_shards_growth growth;
    if (rc == 0 && (rc = cwork_client_shards_growth(client, &growth, &err)) != 0)
        return admin_fail(o, rc, &err);
    if (json) {
        printf("{\"count\":%u,\"created\":%" PRId64, count, created);
        shards_print_growth(&growth, 1);
        fputs(",\"shards\":[", stdout);
    }
    shard_counts sum = {0};
    for (unsigned i = 0; rc == 0 && !oom && i < count; i++) {
        char ns[300], num[16];
        shard_name(o->conn.ns, i, ns, sizeof ns);
        snprintf(num, sizeof num, "%u", i);
        shard_counts c;
        cwork_client *shard = cwork_client_shard(client, i, &err);
        rc = shard ? read_counts(shard, &c, &err) : (err.code ? err.code : CWORK_ENOMEM);
        if (rc) break;
        add_counts(&sum, &c);
        if (json) {
            printf("%s{\"shard\":%u,\"ns\":", i ? "," : "", i);
            admin_json_string(ns, strlen(ns));
            putchar(',');
            print_counts_json(&c);
        } else {
            oom = counts_row(t, num, ns, &c);
        }
    }
    if (rc == 0 && !oom && json) {
        fputs("],\"total\":{", stdout);
        print_counts_json(&sum);
        fputs("}\n", stdout);
    } else if (rc == 0 && !oom) {
        oom = counts_row(t, "total", "", &sum);
        print_head(count, created);
        if (!oom) table_print(t, stdout);
        if (!oom) shards_print_growth(&growth, 0);
    }
    table_free(t);
    if (rc) {
        if (json) putchar('\n');
        return admin_fail(o, rc, &err);
    }
    if (oom) fprintf(stderr, "cwork shards: out of memory\n");
    return oom ? CLI_FAILURE : CLI_OK;
}

int cmd_shards(int argc, char **argv)
{
    shards_opts o;
    memset(&o, 0, sizeof o);
    snprintf(o.admin.label, sizeof o.admin.label, "cwork shards");
    o.admin.conn.ns = "work";
    int p =
        cli_parse(&cli_shards_command, o.admin.label, argc, argv, 2, &o, shards_take_positional);
    if (p == 0) p = cli_go_flavor(&o.admin.conn, &o.admin.flavor);
    if (p != 0) return p > 0 ? CLI_OK : CLI_USAGE;
    return admin_run(&o.admin, o.admin.arg ? shards_action : show_shards);
}
