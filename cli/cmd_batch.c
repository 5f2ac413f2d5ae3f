/* cwork batch: a tracked batch's counts and its callback's state (PROTOCOL §23); with
 * --seal, seals it first (after `cwork enqueue --bulk --open`). */
#include "cli.h"
#include "opt.h"
#include "table.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char intro[] =
    "Usage: cwork batch [--redis URL] [--ns NS] [--json] [--seal] [--shard N] ID\n"
    "\n"
    "Shows tracked batch ID (made by cwork enqueue --bulk --batch-callback): how many\n"
    "jobs it holds, how many are pending, succeeded, failed and waiting for a retry,\n"
    "or dead, whether it is sealed, and its callback: waiting, enqueued (once every\n"
    "job was counted) or skipped (on_success, and a job died). Only cwork pools count\n"
    "jobs (README \"Batches and chains\"). A finished batch is kept for a week; one\n"
    "not finished 30 days after it was opened expires then. In a sharded namespace\n"
    "(cwork shards) the batch is found in its id's shard (or another that holds it).\n";

static const char outro[] =
    "A damaged key (one that holds another type than PROTOCOL says, cwork doctor): when\n"
    "it is the batch's :jobs hash, its jobs are no longer counted; the counts read are\n"
    "shown with a warning naming the key. When it is the batch key itself, nothing can\n"
    "be shown: the error names it (exit 1).\n"
    "\n"
    "Exit status: 0 shown, 1 Redis failure or a damaged batch key, 2 bad command line or\n"
    "id, 4 no such batch (never opened, or expired).\n";

typedef struct batch_opts {
    cli_conn_opts conn;
    int json, seal;
    const char *id;
    long shard; /* --shard N; -1: the whole namespace */
} batch_opts;

static int take_id(void *opts, const char *arg)
{
    batch_opts *o = opts;
    if (o->id) {
        fprintf(stderr, "cwork batch: unexpected argument \"%s\"\n", arg);
        return -1;
    }
    o->id = arg;
    return 0;
}

static const cli_opt batch_options[] = {
    {"seal", NULL, CLI_ARG_NONE, NULL,
     "seal it first: no job can join it any more, and its callback\n"
     "fires once every job is counted (at once if they are)",
     cli_set_flag, offsetof(batch_opts, seal), 0, NULL, 0},
    {"json", NULL, CLI_ARG_NONE, NULL,
     "one JSON object: {\"id\", \"total\", \"pending\", \"succeeded\",\n"
     "\"retrying\", \"dead\", \"sealed\", \"when\" (\"on_success\" or\n"
     "\"on_complete\"), \"callback\", \"callback_state\", \"created_at\",\n"
     "\"completed_at\" (0 until settled), \"expires_in\" (seconds;\n"
     "-1 for a batch opened before open batches expired), and\n"
     "\"damaged\" when a key of the batch is damaged}",
     cli_set_flag, offsetof(batch_opts, json), 0, NULL, 0},
    CLI_SHARD_OPT(batch_opts, shard),
    CLI_CONN_OPTS(batch_opts, conn),
    CLI_HELP_OPT,
    CLI_OPT_END};

const cli_command cli_batch_command = {
    .name = "batch",
    .intro = intro,
    .outro = outro,
    .opts = batch_options,
    .seen_field = CLI_NO_SEEN,
};

/* 0 to go on, 1 when --help was printed, -1 on a bad command line (reported). */
static int parse_options(int argc, char **argv, batch_opts *o)
{
    int p = cli_parse(&cli_batch_command, "cwork batch", argc, argv, 2, o, take_id);
    if (p != 0) return p;
    if (!o->id) {
        fprintf(stderr, "cwork batch: no batch id given (see cwork batch --help)\n");
        return -1;
    }
    return 0;
}

static const char *state_name(cwork_batch_callback_state s)
{
    return s == CWORK_BATCH_CALLBACK_ENQUEUED  ? "enqueued"
           : s == CWORK_BATCH_CALLBACK_SKIPPED ? "skipped"
                                               : "waiting";
}

/* A JSON string: the callback's name may hold any UTF-8 a job name may. */
static void put_json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

static void print_json(const char *id, const cwork_batch_info *b)
{
    printf("{\"id\":\"%s\",\"total\":%" PRId64 ",\"pending\":%" PRId64 ",\"succeeded\":%" PRId64
           ",\"retrying\":%" PRId64 ",\"dead\":%" PRId64 ",\"sealed\":%s,\"when\":\"%s\","
           "\"callback\":",
           id, b->total, b->pending, b->succeeded, b->retrying, b->dead,
           b->sealed ? "true" : "false",
           b->when == CWORK_BATCH_ON_SUCCESS ? "on_success" : "on_complete");
    put_json_string(b->callback);
    printf(",\"callback_state\":\"%s\",\"created_at\":%" PRId64 ",\"completed_at\":%" PRId64
           ",\"expires_in\":%" PRId64,
           state_name(b->callback_state), b->created_at, b->completed_at, b->ttl);
    if (cwork_client_damage(NULL) > 0) { /* the damaged :jobs hash, as the views say it */
        fputs(",\"damaged\":", stdout);
        cli_json_damaged();
    }
    puts("}");
}

static void print_text(const char *id, const cwork_batch_info *b)
{
    printf("%-10s %s\n", "batch", id);
    printf("%-10s %" PRId64 "\n", "total", b->total);
    printf("%-10s %" PRId64 "\n", "pending", b->pending);
    printf("%-10s %" PRId64 "\n", "succeeded", b->succeeded);
    printf("%-10s %" PRId64 " (failed, waiting for a retry)\n", "retrying", b->retrying);
    printf("%-10s %" PRId64 "\n", "dead", b->dead);
    printf("%-10s %s\n", "sealed", b->sealed ? "yes" : "no (more jobs may join)");
    char *name = text_clean(b->callback, strlen(b->callback), 0, NULL);
    printf("%-10s %s %s: %s\n", "callback", name ? name : "?",
           b->when == CWORK_BATCH_ON_SUCCESS ? "on_success" : "on_complete",
           state_name(b->callback_state));
    free(name);
    if (b->ttl >= 0) /* days and hours: the TTLs are 30 days (open) and a week (finished) */
        printf("%-10s in %" PRId64 "d %" PRId64 "h%s\n", "expires", b->ttl / 86400,
               b->ttl % 86400 / 3600, b->completed_at ? "" : " (unless it finishes first)");
}

/* Seals (with --seal) and reads the batch; a damaged key is named (exit 1) when nothing
 * can be shown. */
static int show(const batch_opts *o, cwork_redis *redis)
{
    cwork_error err = {0};
    int rc = 0;
    if (o->seal) {
        cwork_enqueuer *enq = cwork_enqueuer_new(redis, o->conn.ns, &err);
        rc = enq ? cwork_batch_seal(enq, o->id, &err) : err.code ? err.code : CWORK_ENOMEM;
        cwork_enqueuer_free(enq);
    }
    cwork_client *client = rc == 0 ? cwork_client_new(redis, o->conn.ns, &err) : NULL;
    if (rc == 0 && !client) rc = err.code ? err.code : CWORK_ENOMEM;
    cwork_client_damage_clear();
    cwork_batch_info info;
    cwork_client *view = rc == 0 ? cli_shard_view(client, o->shard, &err) : NULL;
    if (rc == 0 && !view) rc = err.code ? err.code : CWORK_ENOMEM;
    if (rc == 0) rc = cwork_client_batch(view, o->id, &info, &err);
    cwork_client_free(client);
    if (rc == CWORK_ETYPE) {
        fprintf(stderr, "cwork batch: %s — cwork doctor --ns %s can repair it\n", err.message,
                o->conn.ns);
        return CLI_FAILURE;
    }
    if (rc != 0) {
        fprintf(stderr, "cwork batch: %s\n", err.message);
        return rc == CWORK_ENOTFOUND ? CLI_NOT_FOUND : rc == CWORK_EINVAL ? CLI_USAGE : CLI_FAILURE;
    }
    if (o->json)
        print_json(o->id, &info);
    else
        print_text(o->id, &info);
    cli_warn_damage("cwork batch", o->conn.ns);
    return CLI_OK;
}

int cmd_batch(int argc, char **argv)
{
    batch_opts o = {0};
    o.conn.ns = "work";
    o.shard = -1;
    int p = parse_options(argc, argv, &o);
    if (p != 0) return p > 0 ? CLI_OK : CLI_USAGE;
    int status = CLI_OK;
    cwork_redis *redis = cli_connect(&o.conn, &status);
    if (!redis) return status;
    status = show(&o, redis);
    cwork_redis_free(redis);
    return status;
}
