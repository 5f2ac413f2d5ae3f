/* `cwork enqueue --bulk --batch-callback` / `--batch` / `--open` and `cwork batch`: the
 * batch id on stdout, the jobs with their batch field, a batch grown in two calls and
 * sealed by `cwork batch --seal`, its --json and text views, and the exit codes of bad
 * input (nothing written) and of a batch that does not exist. */
#include "cli_testutil.h"

static redisContext *rc_;
static char ns_[64];

#define RUN_NS(stdin_text, ...)                                                                    \
    cli_run_in_ns(ns_, stdin_text, (const char *const[]){__VA_ARGS__, NULL})

#define OPEN_TTL 2592000 /* an open batch: 30 days from opening (PROTOCOL §23.1) */

/* The batch hash's TTL in seconds, as the dump and the CLI read it. */
static long long batch_ttl(const char *id)
{
    redisReply *r = tl_cmd(rc_, "TTL %s:cwork:batch:%s", ns_, id);
    long long ttl = r->integer;
    freeReplyObject(r);
    return ttl;
}

/* Whether `cwork batch`'s last line is its "expires in" text of a TTL the batch had
 * between the command and now (it read the TTL a few seconds at most before the test). */
static int expires_line_ok(const char *out, const char *id)
{
    long long now = batch_ttl(id);
    for (long long ttl = now; ttl <= now + 10; ttl++) {
        char line[96];
        snprintf(line, sizeof line, "expires    in %lldd %lldh (unless it finishes first)\n",
                 ttl / 86400, ttl % 86400 / 3600);
        const char *at = strstr(out, "expires    in ");
        if (at && !strcmp(at, line)) return 1;
    }
    return 0;
}

/* The 24 hex digits of stdout's only line, or "" */
static void take_id(char id[25])
{
    id[0] = '\0';
    if (strlen(cli_out_) == 25 && cli_out_[24] == '\n') {
        memcpy(id, cli_out_, 24);
        id[24] = '\0';
    }
}

static void open_grow_seal_and_show(void)
{
    tl_unique_ns("cli-batch", ns_, sizeof ns_);
    char id[25];
    CHECK_INT(RUN_NS("{\"name\":\"a\",\"args\":{\"x\":1}}\n\n{\"name\":\"a\"}\n", "enqueue",
                     "--bulk", "--batch-callback", "done", "--on-complete", "--open",
                     "{\"k\":\"v\"}"),
              0);
    take_id(id);
    CHECK_INT(strlen(id), 24);
    CHECK(strstr(cli_err_, "2 jobs written") != NULL);
    CHECK_INT(RUN_NS("{\"name\":\"b\"}\n", "enqueue", "--bulk", "--batch", id, "--open"), 0);
    CHECK(strncmp(cli_out_, id, 24) == 0);

    /* the jobs: each with its batch field */
    redisReply *r = tl_cmd(rc_, "LRANGE %s:jobs:a 0 -1", ns_);
    CHECK_INT(r->elements, 2);
    for (size_t i = 0; i < r->elements; i++) {
        char want[64];
        snprintf(want, sizeof want, ",\"cwork_batch\":\"%s\"}", id);
        CHECK(strstr(r->element[i]->str, want) != NULL);
    }
    freeReplyObject(r);

    CHECK_INT(RUN_NS(NULL, "batch", id), 0);
    char want[2048];
    snprintf(want, sizeof want,
             "batch      %s\n"
             "total      3\n"
             "pending    3\n"
             "succeeded  0\n"
             "retrying   0 (failed, waiting for a retry)\n"
             "dead       0\n"
             "sealed     no (more jobs may join)\n"
             "callback   done on_complete: waiting\n",
             id);
    CHECK(strncmp(cli_out_, want, strlen(want)) == 0);
    CHECK(expires_line_ok(cli_out_ + strlen(want), id));

    CHECK_INT(RUN_NS(NULL, "batch", "--json", "--seal", id), 0);
    redisReply *created = tl_cmd(rc_, "HGET %s:cwork:batch:%s created_at", ns_, id);
    snprintf(want, sizeof want,
             "{\"id\":\"%s\",\"total\":3,\"pending\":3,\"succeeded\":0,\"retrying\":0,\"dead\":0,"
             "\"sealed\":true,\"when\":\"on_complete\",\"callback\":\"done\","
             "\"callback_state\":\"waiting\",\"created_at\":%s,\"completed_at\":0,"
             "\"expires_in\":",
             id, created->str ? created->str : "?");
    CHECK(strncmp(cli_out_, want, strlen(want)) == 0);
    /* the TTL the command read, a few seconds at most before this one */
    long long shown = atoll(cli_out_ + strlen(want)), now = batch_ttl(id);
    CHECK(shown >= now && shown <= now + 10);
    CHECK(strlen(cli_out_) > 2 && !strcmp(cli_out_ + strlen(cli_out_) - 2, "}\n"));
    freeReplyObject(created);

    /* sealed: nothing more joins (exit 2, nothing written) */
    CHECK_INT(RUN_NS("{\"name\":\"b\"}\n", "enqueue", "--bulk", "--batch", id), 2);
    CHECK(strstr(cli_err_, "is sealed") != NULL);

    /* the whole namespace: the batch hash (30 days from opening while running), the
     * queues, known_jobs */
    char *dump = tl_ns_dump(rc_, ns_);
    /* the dump's TTL, a few seconds under 30 days, is checked and then written "open" */
    char *ttl_at = strstr(dump, " ttl=");
    CHECK(ttl_at != NULL);
    long long ttl = ttl_at ? atoll(ttl_at + 5) : 0;
    CHECK(ttl > OPEN_TTL - 60 && ttl <= OPEN_TTL);
    if (ttl_at) {
        size_t digits = strspn(ttl_at + 5, "0123456789");
        memmove(ttl_at + 9, ttl_at + 5 + digits, strlen(ttl_at + 5 + digits) + 1);
        memcpy(ttl_at + 5, "open", 4);
    }
    redisReply *h = tl_cmd(rc_, "HMGET %s:cwork:batch:%s cb_head created_at", ns_, id);
    r = tl_cmd(rc_, "LRANGE %s:jobs:a 0 -1", ns_);
    redisReply *rb = tl_cmd(rc_, "LRANGE %s:jobs:b 0 -1", ns_);
    snprintf(want, sizeof want,
             "%s:cwork:batch:%s hash ttl=open callback=waiting | cb_head=%s | cb_name=done | "
             "cb_rest=,\"k\":\"v\" | created_at=%s | dead=0 | id=%s | retrying=0 | sealed=1 | "
             "succeeded=0 | total=3 | when=complete\n"
             "%s:jobs:a list %s | %s\n"
             "%s:jobs:b list %s\n"
             "%s:known_jobs set a | b\n",
             ns_, id, h->element[0]->str, h->element[1]->str, id, ns_, r->element[0]->str,
             r->element[1]->str, ns_, rb->element[0]->str, ns_);
    CHECK_STR(dump, want);
    free(dump);
    freeReplyObject(h);
    freeReplyObject(r);
    freeReplyObject(rb);
    tl_ns_delete(rc_, ns_);
}

static void bad_input_writes_nothing(void)
{
    tl_unique_ns("cli-batch-bad", ns_, sizeof ns_);
    /* a unique job cannot join a batch */
    CHECK_INT(
        RUN_NS("{\"name\":\"b\",\"unique\":true}\n", "enqueue", "--bulk", "--batch-callback", "cb"),
        2);
    CHECK(strstr(cli_err_, "line 1: batch: job b: a job of a tracked batch cannot be unique") !=
          NULL);
    /* the callback's args may not hold the counts' keys */
    CHECK_INT(RUN_NS("{\"name\":\"b\"}\n", "enqueue", "--bulk", "--batch-callback", "cb",
                     "{\"batch_total\":1}"),
              2);
    CHECK(strstr(cli_err_, "batch_total") != NULL);
    /* a bad callback name, a bad batch id, a batch that does not exist */
    CHECK_INT(RUN_NS("{\"name\":\"b\"}\n", "enqueue", "--bulk", "--batch-callback", "a,b"), 2);
    CHECK_INT(RUN_NS("{\"name\":\"b\"}\n", "enqueue", "--bulk", "--batch", "nope"), 2);
    CHECK(strstr(cli_err_, "not a batch id") != NULL);
    CHECK_INT(
        RUN_NS("{\"name\":\"b\"}\n", "enqueue", "--bulk", "--batch", "0123456789abcdef01234567"),
        4);
    CHECK(strstr(cli_err_, "does not exist") != NULL);
    CHECK_INT(RUN_NS(NULL, "batch", "0123456789abcdef01234567"), 4);
    CHECK_INT(RUN_NS(NULL, "batch", "--json", "nope"), 2);
    CHECK_INT(RUN_NS(NULL, "batch"), 2);
    /* options that go with --bulk */
    CHECK_INT(RUN_NS(NULL, "enqueue", "--batch-callback", "cb", "a"), 2);
    CHECK_INT(RUN_NS("", "enqueue", "--bulk", "--on-complete"), 2);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, "");
    free(dump);
    CHECK_INT(CLI_RUN("batch", "--help"), 0);
    CHECK(strstr(cli_out_, "--seal") != NULL);
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(open_grow_seal_and_show);
    RUN(bad_input_writes_nothing);
    redisFree(rc_);
    return tl_finish();
}
