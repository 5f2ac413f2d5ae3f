/* The admin commands end to end (cwork queues, pools, busy, retry, scheduled, dead,
 * pause, unpause, job): Redis state written by hand in Go's bytes, the binary run
 * against it, and its stdout, exit status and the namespace afterwards checked. */
#include "cli_testutil.h"
#include "cwork.h"

#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static redisContext *rc_;
static char ns_[64];

/* ---------------------------------------------------------------- running the binary */

/* Runs `cwork argv[0] [--redis URL --ns NS] argv[1..]`; returns the exit status. */
static int run_cli(int with_conn, const char *const *argv)
{
    const char *args[48];
    size_t n = 0;
    args[n++] = argv[0];
    if (with_conn) {
        args[n++] = "--redis";
        args[n++] = tl_redis_url();
        args[n++] = "--ns";
        args[n++] = ns_;
    }
    for (size_t i = 1; argv[i] && n < 47; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    return cli_run(NULL, NULL, args);
}

#define CLI(...) run_cli(1, (const char *const[]){__VA_ARGS__, NULL})
#define CLI_RAW(...) run_cli(0, (const char *const[]){__VA_ARGS__, NULL})

/* ---------------------------------------------------------------- Redis state */

#define cmd(...) tl_do(rc_, __VA_ARGS__)

static char key_[256];

/* "<ns>:" + suffix (static storage, valid until the next call). */
static const char *key(const char *suffix)
{
    snprintf(key_, sizeof key_, "%s:%s", ns_, suffix);
    return key_;
}

/* A job as Go encodes it after it failed for good (PROTOCOL §17.2, §17.8). */
static const char *dead_job(char *buf, size_t size, const char *name, const char *id, int i)
{
    snprintf(buf, size,
             "{\"name\":\"%s\",\"id\":\"%s\",\"t\":1700000000,\"args\":{\"i\":%d},\"fails\":4,"
             "\"err\":\"boom\",\"failed_at\":1700000100}",
             name, id, i);
    return buf;
}

static void zadd(const char *set, long long score, const char *member)
{
    cmd("ZADD %s %lld %s", key(set), score, member);
}

static char *dump(void)
{
    return tl_ns_dump(rc_, ns_);
}

#define CHECK_DUMP(want)                                                                           \
    do {                                                                                           \
        char *d_ = dump();                                                                         \
        CHECK_STR(d_, want);                                                                       \
        free(d_);                                                                                  \
    } while (0)

/* ---------------------------------------------------------------- looking at stdout */

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The line of cli_out_ that starts with start, copied (static storage), or NULL. */
static const char *line_starting(const char *start)
{
    static char line[4096];
    for (const char *p = cli_out_; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (!strncmp(p, start, strlen(start)) && len < sizeof line) {
            memcpy(line, p, len);
            line[len] = '\0';
            return line;
        }
        p += len + (nl != NULL);
    }
    return NULL;
}

#define CHECK_LINE(start, needle)                                                                  \
    do {                                                                                           \
        const char *l_ = line_starting(start);                                                     \
        if (!l_ || !strstr(l_, needle))                                                            \
            tl_fail(__FILE__, __LINE__, "no line \"%s...\" with \"%s\" in:\n%s", start, needle,    \
                    cli_out_);                                                                     \
    } while (0)

/* The library's own answers, to compare --json with. */
static cwork_redis *lib_redis_;

static cwork_client *lib_client(void)
{
    cwork_client *c = cwork_client_new(lib_redis_, ns_, NULL);
    if (!c) abort();
    return c;
}

/* stdout is body + "\n". */
static void check_body(int rc, char *body, size_t len)
{
    CHECK_INT(rc, 0);
    if (rc != 0) return;
    CHECK_INT(strlen(cli_out_), len + 1);
    CHECK(strncmp(cli_out_, body, len) == 0 && cli_out_[len] == '\n');
    cwork_free(body);
}

/* A compact JSON line parses as an object. */
static cwork_args *parse_line(void)
{
    cwork_args *a = NULL;
    size_t len = strlen(cli_out_);
    CHECK(len > 0 && cli_out_[len - 1] == '\n' && cli_lines(cli_out_) == 1);
    CHECK_INT(cwork_args_parse(cli_out_, len, &a, NULL), 0);
    return a;
}

/* ---------------------------------------------------------------- listings */

static void queues_show_counts_latency_and_pause(void)
{
    tl_unique_ns("adq", ns_, sizeof ns_);
    long long now = (long long)time(NULL);
    char j1[256], j2[256];
    snprintf(j1, sizeof j1,
             "{\"name\":\"send_email\",\"id\":\"0123456789abcdef01234567\",\"t\":%lld,\"args\":"
             "{\"address\":\"test@example.com\"}}",
             now - 100);
    snprintf(j2, sizeof j2,
             "{\"name\":\"send_email\",\"id\":\"0123456789abcdef01234568\",\"t\":%lld,\"args\":"
             "null}",
             now - 5);
    cmd("SADD %s send_email noargs idle", key("known_jobs"));
    cmd("LPUSH %s %s %s", key("jobs:send_email"), j1, j2); /* j1 runs next */
    cmd("SET %s 1", key("jobs:noargs:paused"));
    char *before = dump();

    CHECK_INT(CLI("queues"), 0);
    CHECK_INT(cli_lines(cli_out_), 4);
    CHECK_LINE("NAME", "LATENCY");
    CHECK_LINE("send_email ", " 2 ");
    CHECK_LINE("send_email ", " 1m ");
    CHECK_LINE("noargs ", "paused");
    CHECK_LINE("idle ", " 0 ");
    const char *idle = line_starting("idle ");
    CHECK(idle && !strstr(idle, "paused"));

    /* Go's body; its latency moves with the clock: the library's answer is read right
     * after, and a second boundary crossed in between gets another try */
    for (int attempt = 0; attempt < 3; attempt++) {
        CHECK_INT(CLI("queues", "--json"), 0);
        cwork_client *c = lib_client();
        char *body = NULL;
        size_t len = 0;
        CHECK_INT(cwork_client_queues_json(c, &body, &len, NULL), 0);
        int same = strlen(cli_out_) == len + 1 && !strncmp(cli_out_, body, len);
        cwork_free(body);
        cwork_client_free(c);
        if (same) break;
        if (attempt == 2)
            tl_fail(__FILE__, __LINE__, "queues --json differs from the library: %s", cli_out_);
    }
    CHECK(strstr(cli_out_, "\"job_name\": \"send_email\"") != NULL);
    CHECK_DUMP(before);
    free(before);
    tl_ns_delete(rc_, ns_);

    CHECK_INT(CLI("queues"), 0);
    CHECK_STR(cli_out_, "No queues: known_jobs is empty.\n");
    CHECK_INT(CLI("queues", "--json"), 0);
    CHECK_STR(cli_out_, "[]\n");
}

static void pools_and_busy_show_heartbeats_and_workers(void)
{
    tl_unique_ns("adp", ns_, sizeof ns_);
    long long now = (long long)time(NULL);
    cmd("SADD %s 0123456789abcdef01234567", key("worker_pools"));
    cmd("HSET %s heartbeat_at %lld started_at 1700000000 job_names bar,foo concurrency 10 "
        "worker_ids bbb,ccc host box1 pid 4242",
        key("worker_pools:0123456789abcdef01234567"), now - 3);
    cmd("HSET %s job_name foo job_id bar started_at 1425263401 args %s checkin %s "
        "checkin_at 1425263402",
        key("worker:bbb"), "{\"a\":1,\"b\":\"wat\"}", "doin it");
    char *before = dump();

    CHECK_INT(CLI("pools"), 0);
    CHECK_INT(cli_lines(cli_out_), 2);
    CHECK_LINE("POOL", "HEARTBEAT");
    CHECK_LINE("0123456789abcdef01234567", " box1 ");
    CHECK_LINE("0123456789abcdef01234567", " 4242 ");
    CHECK_LINE("0123456789abcdef01234567", " 10 ");
    CHECK_LINE("0123456789abcdef01234567", "2023-11-14T22:13:20Z (");
    CHECK_LINE("0123456789abcdef01234567", "s ago)");
    CHECK_LINE("0123456789abcdef01234567", " bar,foo");
    cwork_client *c = lib_client();
    char *body = NULL;
    size_t len = 0;
    int body_rc;
    CHECK_INT(CLI("pools", "--json"), 0);
    body_rc = cwork_client_pools_json(c, &body, &len, NULL);
    check_body(body_rc, body, len);

    CHECK_INT(CLI("busy"), 0);
    CHECK_INT(cli_lines(cli_out_), 2); /* ccc is idle */
    CHECK_LINE("WORKER", "CHECKIN");
    CHECK_LINE("bbb ", " foo ");
    CHECK_LINE("bbb ", " bar ");
    CHECK_LINE("bbb ", "2015-03-02T02:30:01Z");
    CHECK_LINE("bbb ", "ago: doin it");
    CHECK_LINE("bbb ", "{\"a\":1,\"b\":\"wat\"}");
    CHECK_INT(CLI("busy", "--json"), 0);
    body_rc = cwork_client_busy_workers_json(c, &body, &len, NULL);
    check_body(body_rc, body, len);
    CHECK_DUMP(before);
    free(before);

    cmd("DEL %s", key("worker:bbb"));
    CHECK_INT(CLI("busy"), 0);
    CHECK_STR(cli_out_, "No busy workers.\n");
    CHECK_INT(CLI("busy", "--json"), 0);
    CHECK_STR(cli_out_, "[]\n"); /* where Go's /busy_workers answers null */
    cwork_client_free(c);
    tl_ns_delete(rc_, ns_);
    CHECK_INT(CLI("pools"), 0);
    CHECK_STR(cli_out_, "No worker pools.\n");
}

static void dead_lists_pages_and_filters_by_name(void)
{
    tl_unique_ns("adl", ns_, sizeof ns_);
    char job[256], id[32];
    for (int i = 0; i < 25; i++) {
        snprintf(id, sizeof id, "%024d", i);
        zadd("dead", 1700000100 + i, dead_job(job, sizeof job, i % 5 ? "a" : "b", id, i));
    }
    char *before = dump();

    /* The web UI's order: the newest death first. */
    CHECK_INT(CLI("dead"), 0);
    CHECK_INT(cli_lines(cli_out_), 23);
    CHECK(starts(cli_out_, "Dead jobs: 25 (page 1 of 2)\n"));
    CHECK(strstr(strchr(cli_out_, '\n') + 1, "\n2023-11-14T22:15:24Z (") != NULL);
    CHECK(strstr(cli_out_, "000000000000000000000000") == NULL);
    CHECK_INT(CLI("dead", "--page", "2"), 0);
    CHECK(strstr(cli_out_, "000000000000000000000000") != NULL);
    CHECK(strstr(cli_out_, "000000000000000000000024") == NULL);

    CHECK_INT(CLI("dead", "--order", "oldest"), 0);
    CHECK_INT(cli_lines(cli_out_), 23);
    CHECK(starts(cli_out_, "Dead jobs: 25 (page 1 of 2)\n"));
    CHECK_LINE("DIED", "ERROR");
    CHECK_LINE("2023-11-14T22:15:00Z (", "000000000000000000000000  b ");
    CHECK_LINE("2023-11-14T22:15:01Z (", "000000000000000000000001  a ");
    CHECK_LINE("2023-11-14T22:15:01Z (", "      4  boom ");
    CHECK_LINE("2023-11-14T22:15:01Z (", "  {\"i\":1}");
    CHECK_LINE("Next page", "--page 2");

    CHECK_INT(CLI("dead", "--page", "2", "--order=oldest"), 0);
    CHECK_INT(cli_lines(cli_out_), 7);
    CHECK(starts(cli_out_, "Dead jobs: 25 (page 2 of 2)\n"));
    CHECK(strstr(cli_out_, "000000000000000000000024") != NULL);
    CHECK(strstr(cli_out_, "Next page") == NULL);

    CHECK_INT(CLI("dead", "-name", "b"), 0);
    CHECK(starts(cli_out_, "Dead jobs called b: 5 (page 1 of 1)\n"));
    CHECK_INT(cli_lines(cli_out_), 7);
    CHECK(strstr(cli_out_, "  a  ") == NULL);

    CHECK_INT(CLI("dead", "--page=3"), 0);
    CHECK(strstr(cli_out_, "page 3 is past the end") != NULL);
    CHECK_INT(cli_lines(cli_out_), 1);
    CHECK_INT(CLI("dead", "--name", "zzz"), 0);
    CHECK_STR(cli_out_, "No dead jobs called zzz.\n");

    cwork_client *c = lib_client();
    char *body = NULL;
    size_t len = 0;
    int body_rc;
    CHECK_INT(CLI("dead", "--json", "--page", "2", "--name", "a"), 0);
    body_rc = cwork_client_list_json(c, CWORK_SET_DEAD, 2, "a", &body, &len, NULL);
    check_body(body_rc, body, len);
    CHECK(strstr(cli_out_, "\"count\": 20") != NULL);
    CHECK_INT(CLI("dead", "--json"), 0);
    body_rc = cwork_client_list_json(c, CWORK_SET_DEAD, 1, NULL, &body, &len, NULL);
    check_body(body_rc, body, len);
    cwork_client_free(c);
    CHECK_DUMP(before);
    free(before);
    tl_ns_delete(rc_, ns_);

    CHECK_INT(CLI("dead"), 0);
    CHECK_STR(cli_out_, "The dead set is empty.\n");
}

static void retry_and_scheduled_list_their_sets(void)
{
    tl_unique_ns("adr", ns_, sizeof ns_);
    static const char retry_job[] =
        "{\"name\":\"send_email\",\"id\":\"0123456789abcdef01234567\",\"t\":1700000000,\"args\":"
        "{\"address\":\"test@example.com\"},\"fails\":1,\"err\":\"smtp: 550 "
        "\\u003crejected\\u003e\",\"failed_at\":1700000005}";
    static const char periodic[] = "{\"name\":\"calc\",\"id\":\"periodic:calc:0 * * * * "
                                   "*:1700000040\",\"t\":1700000040,\"args\":null,\"d\":"
                                   "1700000100}";
    long long later = (long long)time(NULL) + 7230; /* "in 2h" even a second later */
    zadd("retry", later, retry_job);
    zadd("scheduled", 1700000040, periodic);
    char *before = dump();

    CHECK_INT(CLI("retry"), 0);
    CHECK_INT(cli_lines(cli_out_), 3);
    CHECK(starts(cli_out_, "Jobs to retry: 1 (page 1 of 1)\n"));
    CHECK_LINE("RETRY AT", "FAILS");
    CHECK_LINE("20", "(in 2h)  0123456789abcdef01234567  send_email");
    CHECK_LINE("20", " 1  smtp: 550 <rejected>  {\"address\":\"test@example.com\"}");

    CHECK_INT(CLI("scheduled"), 0);
    CHECK_INT(cli_lines(cli_out_), 3);
    CHECK(starts(cli_out_, "Scheduled jobs: 1 (page 1 of 1)\n"));
    CHECK_LINE("RUN AT", "ARGS");
    CHECK(line_starting("RUN AT") && !strstr(line_starting("RUN AT"), "FAILS"));
    CHECK_LINE("2023-11-14T22:14:00Z (", "ago)  periodic:calc:0 * * * * *:1700000040  calc  null");

    cwork_client *c = lib_client();
    char *body = NULL;
    size_t len = 0;
    int body_rc;
    CHECK_INT(CLI("retry", "--json"), 0);
    body_rc = cwork_client_list_json(c, CWORK_SET_RETRY, 1, NULL, &body, &len, NULL);
    check_body(body_rc, body, len);
    CHECK(strstr(cli_out_, "\"retry_at\": ") != NULL);
    CHECK_INT(CLI("scheduled", "--json"), 0);
    body_rc = cwork_client_list_json(c, CWORK_SET_SCHEDULED, 1, NULL, &body, &len, NULL);
    check_body(body_rc, body, len);
    CHECK(strstr(cli_out_, "\"run_at\": 1700000040") != NULL);
    cwork_client_free(c);
    CHECK_DUMP(before);
    free(before);
    tl_ns_delete(rc_, ns_);
}

static int has_control_bytes(const char *s)
{
    for (; *s; s++)
        if (((unsigned char)*s < 0x20 && *s != '\n') || *s == 0x7f) return 1;
    return 0;
}

static void tables_survive_hostile_job_text(void)
{
    tl_unique_ns("adh", ns_, sizeof ns_);
    /* newline, CR, ESC, a bidi override (raw U+202E: Go does not escape it), a lone 0xFF
     * byte, and args far wider than a terminal */
    char big[700], member[1200];
    memset(big, 'x', 600);
    big[600] = '\0';
    snprintf(member, sizeof member,
             "{\"name\":\"ev\xff"
             "il\",\"id\":\"0123456789abcdef01234567\",\"t\":1700000000,"
             "\"args\":{\"s\":\"%s\",\"t\":\"a\\tb\"},\"fails\":4,\"err\":\"line1\\nline2\\r"
             "\\u001b[2J\xe2\x80\xaegnp.exe\",\"failed_at\":1700000100}",
             big);
    zadd("dead", 1700000100, member);

    CHECK_INT(CLI("dead"), 0);
    CHECK_INT(cli_lines(cli_out_), 3);
    CHECK(!has_control_bytes(cli_out_));
    CHECK(strstr(cli_out_, "\xe2\x80\xae") == NULL);
    CHECK(strstr(cli_out_, "\xff") == NULL);
    CHECK(strstr(cli_out_, "\xe2\x80\xa6") != NULL); /* the ellipsis */
    CHECK(strstr(cli_out_, big) == NULL);
    CHECK_LINE("2023-11-14T22:15:00Z", "line1 line2 ?[2J?gnp.exe");
    CHECK_LINE("2023-11-14T22:15:00Z", "ev\xef\xbf\xbdil"); /* decoded as Go does: U+FFFD */
    const char *row = line_starting("2023-11-14T22:15:00Z");
    CHECK(row && strlen(row) < 300);

    CHECK_INT(CLI("job", "0123456789abcdef01234567"), 0);
    CHECK(!has_control_bytes(cli_out_));
    CHECK(strstr(cli_out_, "\xe2\x80\xae") == NULL);
    CHECK_LINE("error", "line1 line2 ?[2J?gnp.exe");
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- dead: retry, delete, trim */

static void dead_retry_by_id_puts_the_job_back_in_its_queue(void)
{
    tl_unique_ns("adrt", ns_, sizeof ns_);
    static const char job[] = "{\"name\":\"send_email\",\"id\":\"0123456789abcdef01234567\",\"t\":"
                              "1700000000,\"args\":{\"address\":\"a@b.c\"},\"fails\":4,\"err\":"
                              "\"boom\",\"failed_at\":1700000100}";
    char other[256], third[256];
    dead_job(other, sizeof other, "unknown_name", "aaaaaaaaaaaaaaaaaaaaaaaa", 1);
    dead_job(third, sizeof third, "send_email", "bbbbbbbbbbbbbbbbbbbbbbbb", 2);
    cmd("SADD %s send_email", key("known_jobs"));
    zadd("dead", 1700000100, job);
    zadd("dead", 1700000200, other);
    zadd("dead", 1700000300, third);

    long long t0 = (long long)time(NULL);
    CHECK_INT(CLI("dead", "retry", "0123456789abcdef01234567"), 0);
    long long t1 = (long long)time(NULL);
    CHECK_STR(cli_out_, "Retried dead job 0123456789abcdef01234567 (at 1700000100).\n");
    redisReply *r = tl_cmd(rc_, "LINDEX %s 0", key("jobs:send_email"));
    CHECK(r->type == REDIS_REPLY_STRING);
    cwork_job *back = NULL;
    if (r->type == REDIS_REPLY_STRING && cwork_job_decode(r->str, r->len, &back, NULL) == 0) {
        CHECK_STR(cwork_job_name(back), "send_email");
        CHECK_STR(cwork_job_id(back), "0123456789abcdef01234567");
        CHECK(cwork_job_enqueued_at(back) >= t0 && cwork_job_enqueued_at(back) <= t1);
        CHECK_INT(cwork_job_fails(back), 0);
        CHECK_STR(cwork_job_last_error(back), "");
        CHECK_INT(cwork_job_failed_at(back), 0);
        char *args = cwork_job_args_json(back);
        CHECK_STR(args, "{\"address\":\"a@b.c\"}");
        cwork_free(args);
        cwork_job_free(back);
    } else {
        tl_fail(__FILE__, __LINE__, "no job in the queue");
    }
    char want[2048];
    snprintf(want, sizeof want,
             "%s:dead zset %s=1700000200 | %s=1700000300\n"
             "%s:jobs:send_email list %s\n"
             "%s:known_jobs set send_email\n",
             ns_, other, third, ns_, r->type == REDIS_REPLY_STRING ? r->str : "", ns_);
    freeReplyObject(r);
    CHECK_DUMP(want);

    /* again: it is in its queue now, not dead */
    CHECK_INT(CLI("dead", "retry", "0123456789abcdef01234567"), 4);
    CHECK_STR(cli_out_, "");
    CHECK(strstr(cli_err_, "not in the dead set but in its queue") != NULL);
    /* a wrong time of death */
    CHECK_INT(CLI("dead", "retry", "--died-at", "1700000301", "bbbbbbbbbbbbbbbbbbbbbbbb"), 4);
    CHECK(strstr(cli_err_, "nothing retried") != NULL);
    CHECK_INT(CLI("dead", "retry", "cccccccccccccccccccccccc"), 4);
    CHECK(strstr(cli_err_, "no job has the id cccccccccccccccccccccccc") != NULL);
    CHECK_DUMP(want);

    /* addressed by the time the listing shows; --json */
    CHECK_INT(CLI("dead", "retry", "--died-at", "2023-11-14T22:18:20Z", "--json",
                  "bbbbbbbbbbbbbbbbbbbbbbbb"),
              0);
    CHECK_STR(cli_out_, "{\"at\":1700000300,\"id\":\"bbbbbbbbbbbbbbbbbbbbbbbb\",\"retried\":1}\n");
    cwork_args_free(parse_line());
    r = tl_cmd(rc_, "LLEN %s", key("jobs:send_email"));
    CHECK_INT(r->integer, 2);
    freeReplyObject(r);

    /* a name missing from known_jobs: nothing retried, the job stays dead (Go's script) */
    CHECK_INT(CLI("dead", "retry", "aaaaaaaaaaaaaaaaaaaaaaaa"), 4);
    CHECK(strstr(cli_err_, "nothing retried") != NULL);
    r = tl_cmd(rc_, "ZRANGE %s 0 -1 WITHSCORES", key("dead"));
    CHECK_INT(r->elements, 2);
    if (r->elements == 2) {
        CHECK(strstr(r->element[0]->str, "\"err\":\"unknown job when requeueing\"") != NULL);
        CHECK(atoll(r->element[1]->str) >= t0 + 5);
    }
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

static void dead_retry_all_and_by_name(void)
{
    tl_unique_ns("adra", ns_, sizeof ns_);
    char job[256], id[32], unknown[256];
    cmd("SADD %s a b", key("known_jobs"));
    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof id, "%024d", i);
        zadd("dead", 1700000100 + i, dead_job(job, sizeof job, i < 3 ? "a" : "b", id, i));
    }
    zadd("dead", 1700000200, dead_job(unknown, sizeof unknown, "c", "cccccccccccccccccccccccc", 9));

    CHECK_INT(CLI("dead", "retry", "--all", "--name", "a", "--json"), 0);
    CHECK_STR(cli_out_, "{\"retried\":3}\n");
    redisReply *r = tl_cmd(rc_, "LLEN %s", key("jobs:a"));
    CHECK_INT(r->integer, 3);
    freeReplyObject(r);
    r = tl_cmd(rc_, "ZCARD %s", key("dead"));
    CHECK_INT(r->integer, 3);
    freeReplyObject(r);

    CHECK_INT(CLI("dead", "retry", "--all"), 0);
    CHECK_STR(cli_out_, "Retried 2 dead jobs.\n");
    r = tl_cmd(rc_, "LLEN %s", key("jobs:b"));
    CHECK_INT(r->integer, 2);
    freeReplyObject(r);
    r = tl_cmd(rc_, "ZRANGE %s 0 -1", key("dead"));
    CHECK_INT(r->elements, 1); /* c is not a known name: it stays */
    if (r->elements == 1) CHECK(strstr(r->element[0]->str, "cccccccccccccccccccccccc") != NULL);
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

static void dead_delete_one_by_name_and_all(void)
{
    tl_unique_ns("add", ns_, sizeof ns_);
    char j[4][256], id[32];
    for (int i = 0; i < 4; i++) {
        snprintf(id, sizeof id, "%024d", i);
        zadd("dead", 1700000100 + i, dead_job(j[i], sizeof j[i], i < 2 ? "a" : "b", id, i));
    }
    char want[2048];

    CHECK_INT(CLI("dead", "delete", "000000000000000000000000"), 0);
    CHECK_STR(cli_out_, "Deleted dead job 000000000000000000000000 (at 1700000100).\n");
    snprintf(want, sizeof want, "%s:dead zset %s=1700000101 | %s=1700000102 | %s=1700000103\n", ns_,
             j[1], j[2], j[3]);
    CHECK_DUMP(want);

    CHECK_INT(CLI("dead", "delete", "--at", "1", "000000000000000000000001"), 4);
    CHECK(strstr(cli_err_, "nothing deleted") != NULL);
    CHECK_STR(cli_out_, "");
    CHECK_DUMP(want);

    CHECK_INT(CLI("dead", "delete", "--all", "--name", "b", "--json"), 0);
    CHECK_STR(cli_out_, "{\"deleted\":2}\n");
    snprintf(want, sizeof want, "%s:dead zset %s=1700000101\n", ns_, j[1]);
    CHECK_DUMP(want);

    CHECK_INT(CLI("dead", "delete", "--all"), 0);
    CHECK_STR(cli_out_, "Deleted 1 dead job.\n");
    CHECK_DUMP("");
}

static void dead_trim_by_age_and_count(void)
{
    tl_unique_ns("adt", ns_, sizeof ns_);
    long long now = (long long)time(NULL);
    const long long ages[] = {10 * 86400, 2 * 86400, 3 * 3600, 3600, 60};
    char j[5][256], id[32];
    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof id, "%024d", i);
        zadd("dead", now - ages[i], dead_job(j[i], sizeof j[i], "a", id, i));
    }
    char want[2048];

    CHECK_INT(CLI("dead", "trim", "--older-than", "1d"), 0);
    CHECK_STR(cli_out_, "Removed 2 dead jobs.\n");
    snprintf(want, sizeof want, "%s:dead zset %s=%lld | %s=%lld | %s=%lld\n", ns_, j[2],
             now - ages[2], j[3], now - ages[3], j[4], now - ages[4]);
    CHECK_DUMP(want);

    CHECK_INT(CLI("dead", "trim", "--older-than", "86400", "--keep", "5"), 0);
    CHECK_STR(cli_out_, "Removed 0 dead jobs.\n");
    CHECK_DUMP(want);

    CHECK_INT(CLI("dead", "trim", "--keep", "1", "--json"), 0);
    CHECK_STR(cli_out_, "{\"removed\":2}\n");
    snprintf(want, sizeof want, "%s:dead zset %s=%lld\n", ns_, j[4], now - ages[4]);
    CHECK_DUMP(want);

    CHECK_INT(CLI("dead", "trim", "--older-than", "30s"), 0);
    CHECK_STR(cli_out_, "Removed 1 dead job.\n");
    CHECK_DUMP("");
}

/* ---------------------------------------------------------------- retry and scheduled */

static void retry_and_scheduled_delete_by_id(void)
{
    tl_unique_ns("adsd", ns_, sizeof ns_);
    static const char retry_job[] =
        "{\"name\":\"send_email\",\"id\":\"0123456789abcdef01234567\",\"t\":1700000000,\"args\":"
        "{\"address\":\"test@example.com\"},\"fails\":1,\"err\":\"x\",\"failed_at\":1700000005}";
    static const char unique_job[] =
        "{\"name\":\"clear_cache\",\"id\":\"1123456789abcdef01234567\",\"t\":1700000000,\"args\":"
        "{\"object_id_\":\"123\"},\"unique\":true}";
    static const char plain_job[] =
        "{\"name\":\"clear_cache\",\"id\":\"2123456789abcdef01234567\",\"t\":1700000000,\"args\":"
        "{\"object_id_\":\"456\"}}";
    zadd("retry", 1700000100, retry_job);
    zadd("scheduled", 1700000500, unique_job);
    zadd("scheduled", 1700000600, plain_job);
    cmd("SET %s 1 EX 86400", key("unique:clear_cache:{\"object_id_\":\"123\"}\n"));
    char want[2048];

    CHECK_INT(CLI("retry", "delete", "0123456789abcdef01234567"), 0);
    CHECK_STR(cli_out_, "Deleted retry job 0123456789abcdef01234567 (at 1700000100).\n");
    CHECK_INT(CLI("retry", "delete", "0123456789abcdef01234567"), 4);
    CHECK_STR(cli_out_, "");

    /* a unique scheduled job takes its guard with it */
    CHECK_INT(CLI("scheduled", "delete", "--json", "1123456789abcdef01234567"), 0);
    CHECK_STR(cli_out_, "{\"at\":1700000500,\"id\":\"1123456789abcdef01234567\",\"deleted\":1}\n");
    snprintf(want, sizeof want, "%s:scheduled zset %s=1700000600\n", ns_, plain_job);
    CHECK_DUMP(want);

    /* wrong set, wrong time */
    CHECK_INT(CLI("retry", "delete", "2123456789abcdef01234567"), 4);
    CHECK(strstr(cli_err_, "not in the retry set but in the scheduled set") != NULL);
    CHECK_INT(CLI("scheduled", "delete", "--run-at", "1700000601", "2123456789abcdef01234567"), 4);
    CHECK(strstr(cli_err_, "nothing deleted") != NULL);
    CHECK_DUMP(want);
    CHECK_INT(
        CLI("scheduled", "delete", "--at", "2023-11-14T22:23:20Z", "2123456789abcdef01234567"), 0);
    CHECK_DUMP("");
}

/* ---------------------------------------------------------------- pause, job */

static void pause_and_unpause_set_and_remove_the_flag(void)
{
    tl_unique_ns("adpa", ns_, sizeof ns_);
    cmd("SADD %s send_email", key("known_jobs"));
    char before[256], want[512];
    snprintf(before, sizeof before, "%s:known_jobs set send_email\n", ns_);

    /* Go's single-dash spellings */
    CHECK_INT(CLI_RAW("pause", "-redis", tl_redis_url(), "-ns", ns_, "send_email"), 0);
    CHECK(strstr(cli_out_, "Paused send_email") != NULL);
    CHECK_STR(cli_err_, "");
    snprintf(want, sizeof want, "%s:jobs:send_email:paused string 1\n%s", ns_, before);
    CHECK_DUMP(want);
    CHECK_INT(CLI("queues"), 0);
    CHECK_LINE("send_email ", "paused");

    CHECK_INT(CLI("unpause", "--json", "send_email"), 0);
    CHECK_STR(cli_out_, "{\"name\":\"send_email\",\"paused\":false}\n");
    CHECK_DUMP(before);

    CHECK_INT(CLI("pause", "--json", "typo"), 0);
    CHECK_STR(cli_out_, "{\"name\":\"typo\",\"paused\":true}\n");
    CHECK(strstr(cli_err_, "\"typo\" is not in known_jobs") != NULL);
    snprintf(want, sizeof want, "%s:jobs:typo:paused string 1\n%s", ns_, before);
    CHECK_DUMP(want);
    tl_ns_delete(rc_, ns_);
}

/* cwork job ID --json is {"at":T,…,"job":<Go's encoding>,…,"place":P,…} with the story's
 * members sorted; these members are in Go's encoding already, and hold no kept failure
 * (their story is what the job's own fields say: phases). */
static void check_job(const char *id, const char *place_line, long long at, const char *member,
                      const char *place, const char *pool, const char *phases)
{
    CHECK_INT(CLI("job", id), 0);
    CHECK_LINE("place ", place_line);
    CHECK_LINE("id ", id);
    CHECK_LINE("json ", member);
    CHECK_LINE("enqueued ", "2023-11-14T22:13:20Z (");
    CHECK_INT(CLI("job", "--json", id), 0);
    char want[2048];
    snprintf(want, sizeof want,
             "{\"at\":%lld,\"checkin\":\"\",\"checkin_at\":0,\"failures\":[],"
             "\"first_enqueued_at\":1700000000,\"job\":%s,\"last_requeued_at\":0,\"phases\":[%s],"
             "\"place\":\"%s\",\"pool\":\"%s\",\"pool_host\":\"\",\"pool_pid\":0,"
             "\"started_at\":0,\"worker\":\"\"}\n",
             at, member, phases, place, pool);
    CHECK_STR(cli_out_, want);
    cwork_args_free(parse_line());
}

static void job_is_found_wherever_it_is(void)
{
    tl_unique_ns("adj", ns_, sizeof ns_);
    char q[256], p[256], r[256], s[256], d[256];
    dead_job(q, sizeof q, "a", "000000000000000000000001", 1);
    dead_job(p, sizeof p, "a", "000000000000000000000002", 2);
    dead_job(r, sizeof r, "a", "000000000000000000000003", 3);
    dead_job(s, sizeof s, "a", "000000000000000000000004", 4);
    dead_job(d, sizeof d, "a", "000000000000000000000005", 5);
    cmd("SADD %s a", key("known_jobs"));
    cmd("LPUSH %s %s", key("jobs:a"), q);
    cmd("SADD %s 0123456789abcdef01234567", key("worker_pools"));
    cmd("LPUSH %s %s", key("jobs:a:0123456789abcdef01234567:inprogress"), p);
    zadd("retry", 1700000300, r);
    zadd("scheduled", 1700000400, s);
    zadd("dead", 1700000500, d);
    char *before = dump();

#define PH(state, from, until) "{\"from\":" #from ",\"state\":\"" state "\",\"until\":" #until "}"
    check_job("000000000000000000000001", "queue", 0, q, "queue", "", PH("waiting", 1700000000, 0));
    check_job("000000000000000000000002", "in progress", 0, p, "in_progress",
              "0123456789abcdef01234567", PH("running", 1700000000, 0));
    CHECK_INT(CLI("job", "000000000000000000000002"), 0);
    CHECK_LINE("pool ", "0123456789abcdef01234567 (no heartbeat)");
    CHECK_LINE("states ", "running ");
    check_job("000000000000000000000003", "retry set", 1700000300, r, "retry", "",
              PH("waiting", 1700000000, 1700000100) "," PH("retry", 1700000100, 0));
    check_job("000000000000000000000004", "scheduled set", 1700000400, s, "scheduled", "",
              PH("scheduled", 1700000000, 0));
    check_job("000000000000000000000005", "dead set", 1700000500, d, "dead", "",
              PH("waiting", 1700000000, 1700000100) "," PH("dead", 1700000100, 0));
#undef PH
    CHECK_INT(CLI("job", "000000000000000000000005"), 0);
    CHECK_LINE("died at ", "2023-11-14T22:21:40Z (");
    CHECK_LINE("died at ", "= 1700000500");
    CHECK_LINE("states ", "waiting 1m, dead ");

    CHECK_INT(CLI("job", "nope"), 4);
    CHECK_STR(cli_out_, "");
    CHECK(strstr(cli_err_, "nope") != NULL);
    CHECK_DUMP(before);
    free(before);
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- Go flavours */

/* --json bodies of jobs follow --go-flavor (or CWORK_GO_FLAVOR): every field under the
 * fork, upstream workwebui's fields (no d, no trace) under upstream; the text view shows
 * unique_key. A bad flavour exits 2. */
static void json_bodies_follow_the_go_flavour(void)
{
    tl_unique_ns("adfl", ns_, sizeof ns_);
    static const char job[] =
        "{\"name\":\"calc\",\"id\":\"0123456789abcdef01234567\",\"t\":1700000040,\"args\":"
        "null,\"unique\":true,\"unique_key\":\"k\",\"fails\":1,\"err\":\"e\",\"failed_at\":"
        "1700000099,\"d\":1700000100}";
    zadd("retry", 1700000200, job);
    char *before = dump();
    CHECK_INT(CLI("retry", "--json"), 0);
    CHECK(!strstr(cli_out_, "unique_key") && strstr(cli_out_, "\"d\": 1700000100"));
    CHECK_INT(CLI("retry", "--json", "--go-flavor", "upstream"), 0);
    CHECK(strstr(cli_out_, "\t\t\t\"unique_key\": \"k\",\n") && !strstr(cli_out_, "\"d\""));
    CHECK_INT(CLI("job", "--json", "-go-flavor=upstream", "0123456789abcdef01234567"), 0);
    CHECK_STR(cli_out_,
              "{\"at\":1700000200,\"checkin\":\"\",\"checkin_at\":0,\"failures\":[],"
              "\"first_enqueued_at\":1700000040,\"job\":{\"name\":\"calc\",\"id\":"
              "\"0123456789abcdef01234567\",\"t\":1700000040,\"args\":null,\"unique\":true,"
              "\"unique_key\":\"k\",\"fails\":1,\"err\":\"e\",\"failed_at\":1700000099},"
              "\"last_requeued_at\":0,\"phases\":[{\"from\":1700000040,\"state\":\"waiting\","
              "\"until\":1700000099},{\"from\":1700000099,\"state\":\"retry\",\"until\":0}],"
              "\"place\":\"retry\",\"pool\":\"\",\"pool_host\":\"\",\"pool_pid\":0,"
              "\"started_at\":0,\"worker\":\"\"}\n");
    setenv("CWORK_GO_FLAVOR", "upstream", 1);
    CHECK_INT(CLI("job", "--json", "0123456789abcdef01234567"), 0);
    CHECK(strstr(cli_out_, "\"d\"") == NULL);
    CHECK_INT(CLI("job", "--json", "--go-flavor", "fork", "0123456789abcdef01234567"), 0);
    CHECK(strstr(cli_out_, "\"d\":1700000100") != NULL); /* the option wins */
    CHECK(strstr(cli_out_, "unique_key") == NULL);       /* the fork's Job has none */
    setenv("CWORK_GO_FLAVOR", "forked", 1);
    CHECK_INT(CLI("retry", "--json"), 2);
    CHECK(strstr(cli_err_, "CWORK_GO_FLAVOR") && strstr(cli_err_, "forked"));
    unsetenv("CWORK_GO_FLAVOR");
    CHECK_INT(CLI("retry", "--go-flavor", "v0.5"), 2);
    CHECK_STR(cli_out_, "");
    CHECK(strstr(cli_err_, "fork or upstream") != NULL);
    CHECK_INT(CLI("job", "0123456789abcdef01234567"), 0);
    CHECK(strstr(cli_out_, "unique key k\n") != NULL);
    CHECK_DUMP(before);
    free(before);
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- command lines */

static void usage_errors_exit_2_and_write_nothing(void)
{
    tl_unique_ns("adu", ns_, sizeof ns_);
    static const char *const cases[][8] = {
        {"queues", "extra"},
        {"queues", "--page", "2"},
        {"pools", "--name", "x"},
        {"busy", "--bogus"},
        {"dead", "--page", "x"},
        {"dead", "--page", "-1"},
        {"dead", "--page"},
        {"dead", "--name", ""},
        {"dead", "--page", "1", "--page", "2"},
        {"dead", "bogus"},
        {"dead", "retry"},
        {"dead", "retry", "x", "--all"},
        {"dead", "retry", "x", "y"},
        {"dead", "retry", "--all", "--died-at", "5"},
        {"dead", "retry", "x", "--name", "a"},
        {"dead", "retry", "x", "--died-at", "yesterday"},
        {"dead", "retry", "x", "--died-at", "2023-02-31T00:00:00Z"},
        {"dead", "retry", "x", "--page", "2"},
        {"dead", "delete"},
        {"dead", "delete", "--all", "--keep", "1"},
        {"dead", "trim"},
        {"dead", "trim", "x"},
        {"dead", "trim", "--older-than", "5y"},
        {"dead", "trim", "--older-than", "-5"},
        {"dead", "trim", "--keep", "-1"},
        {"dead", "trim", "--keep", "many"},
        {"retry", "retry", "x"},
        {"retry", "delete", "--all"},
        {"retry", "delete", "x", "--died-at", "5"},
        {"scheduled", "delete"},
        {"scheduled", "trim"},
        {"pause"},
        {"pause", ""},
        {"pause", "a", "b"},
        {"unpause"},
        {"job"},
        {"job", "a", "b"},
        {"job", "--all", "a"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[12];
        size_t n = 0;
        for (; n < 8 && cases[i][n]; n++)
            argv[n] = cases[i][n];
        argv[n] = NULL;
        int rc = run_cli(1, argv);
        if (rc != 2 || cli_out_[0] != '\0' || cli_err_[0] == '\0')
            tl_fail(__FILE__, __LINE__, "case %zu (%s %s): exit %d, stdout \"%s\", stderr \"%s\"",
                    i, cases[i][0], cases[i][1] ? cases[i][1] : "", rc, cli_out_, cli_err_);
    }
    CHECK_DUMP("");
}

/* A flag with a value (Go's `-all=false`) must be refused, never read as the flag. */
static void flags_refuse_values(void)
{
    tl_unique_ns("adf", ns_, sizeof ns_);
    redisContext *c = tl_redis_connect();
    freeReplyObject(tl_cmd(c, "ZADD %s:dead 1700000100 %s", ns_,
                           "{\"name\":\"a\",\"id\":\"keep\",\"t\":1,\"args\":null}"));
    static const char *const cases[][5] = {
        {"dead", "delete", "--all=false"},
        {"dead", "retry", "--all=0"},
        {"dead", "delete", "-all=false"},
        {"dead", "--json=no"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[6] = {cases[i][0], cases[i][1], cases[i][2], NULL};
        int rc = run_cli(1, argv);
        if (rc != 2) tl_fail(__FILE__, __LINE__, "case %zu: exit %d: %s", i, rc, cli_err_);
    }
    redisReply *r = tl_cmd(c, "ZCARD %s:dead", ns_);
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);
    tl_ns_delete(c, ns_);
    redisFree(c);
}

static void every_command_and_subcommand_has_help(void)
{
    static const char *const cases[][3] = {
        {"queues", "Usage: cwork queues"},
        {"pools", "Usage: cwork pools"},
        {"busy", "Usage: cwork busy"},
        {"retry", "Usage: cwork retry"},
        {"scheduled", "Usage: cwork scheduled"},
        {"dead", "Usage: cwork dead"},
        {"pause", "Usage: cwork pause"},
        {"unpause", "Usage: cwork pause"},
        {"job", "Usage: cwork job"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_INT(CLI_RAW(cases[i][0], "--help"), 0);
        if (strncmp(cli_out_, cases[i][1], strlen(cases[i][1])) != 0)
            tl_fail(__FILE__, __LINE__, "%s --help: %s", cases[i][0], cli_out_);
        CHECK(strstr(cli_out_, "Exit status") != NULL);
    }
    CHECK_INT(CLI_RAW("dead", "retry", "--help"), 0);
    CHECK(starts(cli_out_, "Usage: cwork dead retry") && strstr(cli_out_, "--all"));
    CHECK_INT(CLI_RAW("dead", "delete", "-h"), 0);
    CHECK(starts(cli_out_, "Usage: cwork dead delete"));
    CHECK_INT(CLI_RAW("dead", "trim", "--help"), 0);
    CHECK(starts(cli_out_, "Usage: cwork dead trim") && strstr(cli_out_, "--older-than"));
    CHECK_INT(CLI_RAW("retry", "delete", "--help"), 0);
    CHECK(starts(cli_out_, "Usage: cwork retry delete") && strstr(cli_out_, "--retry-at"));
    CHECK_INT(CLI_RAW("scheduled", "delete", "--help"), 0);
    CHECK(starts(cli_out_, "Usage: cwork scheduled delete") && strstr(cli_out_, "guard"));
    CHECK_INT(CLI_RAW("--help"), 0);
    CHECK(strstr(cli_out_, "  dead ") != NULL && strstr(cli_out_, "  job ") != NULL);
}

static void redis_failure_exits_1(void)
{
    static const char *const cmds[][3] = {
        {"queues"}, {"dead"}, {"dead", "trim", "--keep=0"}, {"pause", "x"}, {"job", "x"}};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        const char *argv[8] = {cmds[i][0], "--redis", "redis://user:s3cr3tpw@127.0.0.1:1"};
        size_t n = 3;
        for (size_t j = 1; j < 3 && cmds[i][j]; j++)
            argv[n++] = cmds[i][j];
        argv[n] = NULL;
        CHECK_INT(run_cli(0, argv), 1);
        CHECK_STR(cli_out_, "");
        CHECK(cli_err_[0] != '\0' && strstr(cli_err_, "s3cr3tpw") == NULL);
    }
}

/* stdout without its spaces, tabs and newlines (the bodies are indented as Go's). */
static void squeeze(const char *in, char *out, size_t size)
{
    size_t n = 0;
    for (; *in && n + 1 < size; in++)
        if (*in != ' ' && *in != '\t' && *in != '\n') out[n++] = *in;
    out[n] = '\0';
}

/* Every list-shaped --json view of an empty namespace prints [] for its list (the
 * whole output, or the list member of its object), never null or nothing, and exits 0. */
static void empty_lists_print_brackets_in_json(void)
{
    tl_unique_ns("ade", ns_, sizeof ns_);
    static const char *const whole[][4] = {{"queues"}, {"pools"}, {"busy"}};
    static const char *const member[][6] = {
        {"\"jobs\":[]", "retry"},
        {"\"jobs\":[]", "scheduled"},
        {"\"jobs\":[]", "dead"},
        {"\"jobs\":[]", "dead", "--page", "3"},
        {"\"jobs\":[]", "dead", "--name", "none"},
        {"\"jobs\":[]", "scheduled", "--no-periodic"},
        {"\"jobs\":[]", "retry", "--grep", "x"},
        {"\"jobs\":[]", "scheduled", "--grep", "x"},
        {"\"jobs\":[]", "dead", "--grep", "x"},
        {"\"job_types\":[]", "stats"},
    };
    static char flat[sizeof cli_out_];
    for (size_t i = 0; i < sizeof whole / sizeof whole[0] + sizeof member / sizeof member[0]; i++) {
        int is_whole = i < sizeof whole / sizeof whole[0];
        const char *const *c = is_whole ? whole[i] : member[i - sizeof whole / sizeof whole[0]] + 1;
        const char *want = is_whole ? "[]" : member[i - sizeof whole / sizeof whole[0]][0];
        const char *argv[10];
        size_t n = 0;
        for (; n < 5 && c[n]; n++)
            argv[n] = c[n];
        argv[n++] = "--json";
        argv[n] = NULL;
        int rc = run_cli(1, argv);
        squeeze(cli_out_, flat, sizeof flat);
        if (rc != 0 || (is_whole ? strcmp(flat, want) != 0 : !strstr(flat, want)) ||
            strstr(flat, "null"))
            tl_fail(__FILE__, __LINE__, "cwork %s %s --json: exit %d, stdout \"%s\", stderr \"%s\"",
                    c[0], c[1] ? c[1] : "", rc, cli_out_, cli_err_);
    }
    CHECK_DUMP("");
}

/* --order (the web UI's default per set), --no-periodic on the scheduled list, and a
 * --name that matches nothing but is near a name the namespace knows. */
static void lists_order_skip_periodic_and_suggest_names(void)
{
    tl_unique_ns("ado", ns_, sizeof ns_);
    static const char p1[] = "{\"name\":\"report\",\"id\":\"periodic:report:@daily:1700006400\","
                             "\"t\":1700006400,\"args\":null,\"d\":1700092800}";
    static const char p2[] = "{\"name\":\"report\",\"id\":\"periodic:report:@daily:1700092800\","
                             "\"t\":1700092800,\"args\":null,\"d\":1700179200}";
    static const char one[] = "{\"name\":\"report\",\"id\":\"aaaaaaaaaaaaaaaaaaaaaaaa\","
                              "\"t\":1700000000,\"args\":{\"x\":1}}";
    char job[256];
    zadd("scheduled", 1700006400, p1);
    zadd("scheduled", 1700092800, p2);
    zadd("scheduled", 1700050000, one);
    zadd("dead", 1700000100, dead_job(job, sizeof job, "flaky", "000000000000000000000001", 1));
    zadd("dead", 1700000200, dead_job(job, sizeof job, "flaky", "000000000000000000000002", 2));
    zadd("retry", 1700000300, dead_job(job, sizeof job, "flaky", "000000000000000000000003", 3));
    zadd("retry", 1700000400, dead_job(job, sizeof job, "flaky", "000000000000000000000004", 4));
    char *before = dump();

    /* scheduled: the soonest first, as the UI; --order newest the latest first */
    CHECK_INT(CLI("scheduled"), 0);
    CHECK(starts(cli_out_, "Scheduled jobs: 3 (page 1 of 1)\n"));
    const char *a = strstr(cli_out_, "periodic:report:@daily:1700006400");
    const char *b = strstr(cli_out_, "aaaaaaaaaaaaaaaaaaaaaaaa");
    const char *c = strstr(cli_out_, "periodic:report:@daily:1700092800");
    CHECK(a && b && c && a < b && b < c);
    CHECK_INT(CLI("scheduled", "--order", "newest"), 0);
    a = strstr(cli_out_, "periodic:report:@daily:1700006400");
    c = strstr(cli_out_, "periodic:report:@daily:1700092800");
    CHECK(a && c && c < a);

    /* --no-periodic: the instances go, and the count counts the others only */
    CHECK_INT(CLI("scheduled", "--no-periodic"), 0);
    CHECK(starts(cli_out_, "Scheduled jobs: 1 (page 1 of 1)\n"));
    CHECK(strstr(cli_out_, "aaaaaaaaaaaaaaaaaaaaaaaa") != NULL);
    CHECK(strstr(cli_out_, "periodic:") == NULL);
    CHECK_INT(CLI("scheduled", "--no-periodic", "--json"), 0);
    CHECK(strstr(cli_out_, "\"count\": 1") != NULL);
    CHECK(strstr(cli_out_, "periodic:") == NULL);
    CHECK(strstr(cli_out_, "aaaaaaaaaaaaaaaaaaaaaaaa") != NULL);

    /* retry and dead: the latest first; --order oldest turns it round */
    CHECK_INT(CLI("retry"), 0);
    a = strstr(cli_out_, "000000000000000000000004");
    b = strstr(cli_out_, "000000000000000000000003");
    CHECK(a && b && a < b);
    CHECK_INT(CLI("retry", "--order=oldest"), 0);
    a = strstr(cli_out_, "000000000000000000000004");
    b = strstr(cli_out_, "000000000000000000000003");
    CHECK(a && b && b < a);
    CHECK_INT(CLI("dead"), 0);
    a = strstr(cli_out_, "000000000000000000000002");
    b = strstr(cli_out_, "000000000000000000000001");
    CHECK(a && b && a < b);
    /* --json keeps Go's order unless --order is given */
    CHECK_INT(CLI("dead", "--json"), 0);
    a = strstr(cli_out_, "000000000000000000000002");
    b = strstr(cli_out_, "000000000000000000000001");
    CHECK(a && b && b < a);
    CHECK_INT(CLI("dead", "--json", "--order", "newest"), 0);
    a = strstr(cli_out_, "000000000000000000000002");
    b = strstr(cli_out_, "000000000000000000000001");
    CHECK(a && b && a < b);

    /* a name near one the namespace knows */
    CHECK_INT(CLI("dead", "--name", "flaki"), 0);
    CHECK_STR(cli_out_, "No dead jobs called flaki; did you mean flaky?\n");
    CHECK_INT(CLI("retry", "--name", "flakey"), 0);
    CHECK_STR(cli_out_, "No retry jobs called flakey; did you mean flaky?\n");
    CHECK_INT(CLI("dead", "--name", "something"), 0);
    CHECK_STR(cli_out_, "No dead jobs called something.\n");

    /* bad values and combinations */
    CHECK_INT(CLI("dead", "--order", "sideways"), 2);
    CHECK_STR(cli_err_, "cwork dead: --order takes newest or oldest, not \"sideways\"\n");
    CHECK_INT(CLI("scheduled", "--grep", "x", "--no-periodic"), 2);
    CHECK(strstr(cli_err_, "does not go with --no-periodic") != NULL);
    CHECK_INT(CLI("dead", "--no-periodic"), 2);
    CHECK(starts(cli_err_, "cwork dead: unknown option --no-periodic"));
    CHECK_DUMP(before);
    free(before);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    rc_ = tl_redis_connect();
    lib_redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    if (!lib_redis_) return 1;
    RUN(queues_show_counts_latency_and_pause);
    RUN(pools_and_busy_show_heartbeats_and_workers);
    RUN(dead_lists_pages_and_filters_by_name);
    RUN(retry_and_scheduled_list_their_sets);
    RUN(empty_lists_print_brackets_in_json);
    RUN(lists_order_skip_periodic_and_suggest_names);
    RUN(tables_survive_hostile_job_text);
    RUN(dead_retry_by_id_puts_the_job_back_in_its_queue);
    RUN(dead_retry_all_and_by_name);
    RUN(dead_delete_one_by_name_and_all);
    RUN(dead_trim_by_age_and_count);
    RUN(retry_and_scheduled_delete_by_id);
    RUN(pause_and_unpause_set_and_remove_the_flag);
    RUN(job_is_found_wherever_it_is);
    RUN(json_bodies_follow_the_go_flavour);
    RUN(usage_errors_exit_2_and_write_nothing);
    RUN(flags_refuse_values);
    RUN(every_command_and_subcommand_has_help);
    RUN(redis_failure_exits_1);
    cwork_redis_free(lib_redis_);
    redisFree(rc_);
    return tl_finish();
}
