/* cwork batch: a tracked batch's counts and its callback's state (PROTOCOL §23); with
 * --seal, seals it first (after `cwork enqueue --bulk --open`). */
#include "cli.h"
#include "table.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "Usage: cwork batch [--redis URL] [--ns NS] [--json] [--seal] ID\n"
    "\n"
    "Shows tracked batch ID (made by cwork enqueue --bulk --batch-callback): how many\n"
    "jobs it holds, how many are pending, succeeded, failed and waiting for a retry,\n"
    "or dead, whether it is sealed, and its callback: waiting, enqueued (once every\n"
    "job was counted) or skipped (on_success, and a job died). Only cwork pools count\n"
    "jobs (README \"Batches and chains\"). A finished batch is kept for a week; one\n"
    "not finished 30 days after it was opened expires then.\n"
    "\n"
    "  --seal        seal it first: no job can join it any more, and its callback\n"
    "                fires once every job is counted (at once if they are)\n"
    "  --json        one JSON object: {\"id\", \"total\", \"pending\", \"succeeded\",\n"
    "                \"retrying\", \"dead\", \"sealed\", \"when\" (\"on_success\" or\n"
    "                \"on_complete\"), \"callback\", \"callback_state\", \"created_at\",\n"
    "                \"completed_at\" (0 until settled), \"expires_in\" (seconds;\n"
    "                -1 for a batch opened before open batches expired)}\n"
    "  --redis URL, --ns NS: see cwork --help\n"
    "\n"
    "Exit status: 0 shown, 1 Redis failure, 2 bad command line or id, 4 no such batch\n"
    "(never opened, or expired).\n";

typedef struct batch_opts {
    cli_conn_opts conn;
    int json, seal;
    const char *id;
} batch_opts;

static int parse_options(int argc, char **argv, batch_opts *o)
{
    cli_args a;
    cli_args_init(&a, argc, argv, 2);
    int kind;
    while ((kind = cli_next(&a)) >= 0) {
        if (kind == 0) {
            if (o->id) {
                fprintf(stderr, "cwork batch: unexpected argument \"%s\"\n", a.value);
                return -1;
            }
            o->id = a.value;
            continue;
        }
        int c = cli_conn_option(&a, &o->conn);
        if (c < 0) return -1;
        if (c > 0) continue;
        if (cli_is(&a, "help") || cli_is(&a, "h")) {
            fputs(usage, stdout);
            exit(CLI_OK);
        } else if (cli_is(&a, "json") || cli_is(&a, "seal")) {
            if (cli_flag(&a) < 0) return -1;
            *(cli_is(&a, "json") ? &o->json : &o->seal) = 1;
        } else {
            static const char *const names[] = {"json", "seal", CLI_COMMON_OPTIONS, NULL};
            cli_unknown_option("cwork batch", &a, names);
            return -1;
        }
    }
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
           ",\"expires_in\":%" PRId64 "}\n",
           state_name(b->callback_state), b->created_at, b->completed_at, b->ttl);
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

int cmd_batch(int argc, char **argv)
{
    batch_opts o = {0};
    o.conn.ns = "work";
    if (parse_options(argc, argv, &o) != 0) return CLI_USAGE;
    int status = CLI_OK;
    cwork_redis *redis = cli_connect(&o.conn, &status);
    if (!redis) return status;
    status = CLI_OK;
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, o.conn.ns, &err);
    int rc = enq ? 0 : CWORK_ENOMEM;
    if (rc == 0 && o.seal) rc = cwork_batch_seal(enq, o.id, &err);
    cwork_batch_info info;
    if (rc == 0) rc = cwork_batch_read(enq, o.id, &info, &err);
    if (rc != 0) {
        fprintf(stderr, "cwork batch: %s\n", err.message);
        status = rc == CWORK_ENOTFOUND ? CLI_NOT_FOUND
                 : rc == CWORK_EINVAL  ? CLI_USAGE
                                       : CLI_FAILURE;
    } else if (o.json) {
        print_json(o.id, &info);
    } else {
        print_text(o.id, &info);
    }
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
    return status;
}
