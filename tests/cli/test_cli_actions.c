/* cwork retry run, cwork scheduled run, cwork queue clear and delete, and cwork enqueue
 * --bulk's ids,
 * end to end: Redis state written by hand in Go's bytes, the binary run against it, its
 * stdout, stderr and exit status, and the whole namespace afterwards. */
#include "cli_testutil.h"
#include "cwork.h"

#include <time.h>

static redisContext *rc_;
static char ns_[64];

#define cmd(...) tl_do(rc_, __VA_ARGS__)

static int run_in_ns(const char *stdin_text, const char *const *argv)
{
    return cli_run_in_ns(ns_, stdin_text, argv);
}

#define CLI(...) run_in_ns(NULL, (const char *const[]){__VA_ARGS__, NULL})

static char *dump(void)
{
    return tl_ns_dump(rc_, ns_);
}

static void check_dump_at(int line, const char *want)
{
    char *got = dump();
    if (strcmp(got, want) != 0)
        tl_fail(__FILE__, line, "namespace dump\n   got:\n%s  want:\n%s", got, want);
    free(got);
}
#define CHECK_DUMP(want) check_dump_at(__LINE__, want)

/* The only element of a list, in its exact bytes (malloc'd). */
static char *only_element(const char *suffix)
{
    redisReply *r = tl_cmd(rc_, "LRANGE %s:%s 0 -1", ns_, suffix);
    char *s = strdup(r->elements == 1 ? r->element[0]->str : "");
    CHECK_INT(r->elements, 1);
    freeReplyObject(r);
    return s;
}

/* ---------------------------------------------------------------- retry run */

static void retry_run_by_id_and_all(void)
{
    tl_unique_ns("acr", ns_, sizeof ns_);
    cmd("SADD %s:known_jobs send_email", ns_);
    cmd("ZADD %s:retry 1900000000 %s", ns_,
        "{\"name\":\"send_email\",\"id\":\"r1\",\"t\":1700000000,\"args\":{\"to\":\"a\"},"
        "\"fails\":1,\"err\":\"boom\",\"failed_at\":1700000001}");
    cmd("ZADD %s:retry 1900000001 %s", ns_, "{\"name\":\"send_email\",\"id\":\"r2\",\"t\":1}");
    cmd("ZADD %s:retry 1900000002 %s", ns_, "{\"name\":\"ghost\",\"id\":\"g1\",\"t\":1}");

    long long before = (long long)time(NULL);
    CHECK_INT(CLI("retry", "run", "r1"), 0);
    CHECK_STR(cli_out_, "Queued retry job r1 (at 1900000000).\n");
    CHECK_STR(cli_err_, "");
    char *moved = only_element("jobs:send_email");
    cwork_job *job = NULL;
    CHECK_INT(cwork_job_decode(moved, strlen(moved), &job, NULL), 0);
    if (job) {
        CHECK_STR(cwork_job_id(job), "r1");
        CHECK(cwork_job_enqueued_at(job) >= before && cwork_job_enqueued_at(job) <= time(NULL));
        CHECK_INT(cwork_job_fails(job), 1);
        cwork_job_free(job);
    }
    char want[4096];
    snprintf(want, sizeof want,
             "%s:jobs:send_email list %s\n%s:known_jobs set send_email\n"
             "%s:retry zset {\"name\":\"send_email\",\"id\":\"r2\",\"t\":1}=1900000001 | "
             "{\"name\":\"ghost\",\"id\":\"g1\",\"t\":1}=1900000002\n",
             ns_, moved, ns_, ns_);
    CHECK_DUMP(want);

    /* Gone from the set now: 4, and nothing changes. */
    CHECK_INT(CLI("retry", "run", "r1"), 4);
    CHECK_STR(cli_out_, "");
    CHECK_STR(cli_err_, "cwork retry run: job r1 is not in the retry set but in its queue (see "
                        "cwork job ID)\n");
    CHECK_INT(CLI("retry", "run", "nope"), 4);
    CHECK_STR(cli_err_, "cwork retry run: no job has the id nope\n");
    /* A name no pool runs: 4, it stays. */
    CHECK_INT(CLI("retry", "run", "g1"), 4);
    CHECK_STR(cli_err_, "cwork retry run: not run: the job's name is not in known_jobs (no pool "
                        "runs it); it stays where it was\n");
    CHECK_INT(CLI("retry", "run", "--at", "1900000005", "r2"), 4);
    CHECK_STR(cli_err_, "cwork retry run: nothing run\n");
    CHECK_DUMP(want);

    CHECK_INT(CLI("retry", "run", "--all", "--json"), 0);
    CHECK_STR(cli_out_, "{\"run\":1,\"stayed\":1}\n");
    redisReply *r = tl_cmd(rc_, "LLEN %s:jobs:send_email", ns_);
    CHECK_INT(r->integer, 2);
    freeReplyObject(r);
    CHECK_INT(CLI("retry", "run", "--all"), 0);
    CHECK_STR(cli_out_, "Queued 0 retry jobs.\n1 stayed in the retry set: their names are not in "
                        "known_jobs, or their queue key holds something else (see cwork "
                        "queues).\n");
    free(moved);
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- scheduled run */

static void scheduled_run_by_id_name_and_json(void)
{
    tl_unique_ns("acs", ns_, sizeof ns_);
    cmd("SADD %s:known_jobs a b", ns_);
    cmd("ZADD %s:scheduled 1900000000 %s", ns_, "{\"name\":\"a\",\"id\":\"s1\",\"t\":1}");
    cmd("ZADD %s:scheduled 1900000001 %s", ns_, "{\"name\":\"b\",\"id\":\"s2\",\"t\":1}");
    cmd("ZADD %s:scheduled 1900000002 %s", ns_, "{\"name\":\"a\",\"id\":\"s3\",\"t\":1}");

    CHECK_INT(CLI("scheduled", "run", "--run-at", "2030-03-17T17:46:40Z", "--json", "s1"), 0);
    CHECK_STR(cli_out_, "{\"at\":1900000000,\"id\":\"s1\",\"run\":1}\n");
    CHECK_INT(CLI("scheduled", "run", "--all", "--name", "a"), 0);
    CHECK_STR(cli_out_, "Queued 1 scheduled job called a.\n");
    redisReply *r = tl_cmd(rc_, "LRANGE %s:jobs:a 0 -1", ns_);
    CHECK_INT(r->elements, 2);
    if (r->elements == 2) {
        CHECK(strstr(r->element[0]->str, "\"id\":\"s3\"") != NULL);
        CHECK(strstr(r->element[1]->str, "\"id\":\"s1\"") != NULL);
    }
    freeReplyObject(r);
    r = tl_cmd(rc_, "ZRANGE %s:scheduled 0 -1", ns_);
    CHECK_INT(r->elements, 1);
    freeReplyObject(r);

    /* The queue key holds something else: exit 1, the job stays. (With --at: a lookup by
     * id would fail first, reading the damaged queue.) The library logs the failure too. */
    cmd("SET %s:jobs:b %s", ns_, "damaged");
    CHECK_INT(CLI("scheduled", "run", "--at", "1900000001", "s2"), 1);
    CHECK_STR(cli_out_, "");
    CHECK(strstr(cli_err_, "\ncwork scheduled run: not run, it stays where it was: ") &&
          strstr(cli_err_, ":jobs:b: WRONGTYPE") != NULL);
    r = tl_cmd(rc_, "ZRANGE %s:scheduled 0 -1", ns_);
    CHECK(r->elements == 1 && strstr(r->element[0]->str, "\"id\":\"s2\""));
    freeReplyObject(r);

    /* Usage errors write nothing: exit 2. */
    char *before = dump();
    static const char *const bad[][6] = {
        {"scheduled", "run"},
        {"scheduled", "run", "s2", "--all"},
        {"scheduled", "run", "s2", "--name", "b"},
        {"scheduled", "run", "--all", "--at", "5"},
        {"scheduled", "run", "s2", "extra"},
        {"retry", "run", "--all", "--page", "2"},
        {"dead", "run", "x"},
        {"queue", "clear"},
        {"queue", "clear", "a", "b"},
        {"queue", "clear", "a", "--all"},
        {"queue", "empty", "a"},
        {"queue", "delete"},
        {"queue", "delete", "a"},
        {"queue", "delete", "a", "s1", "s2"},
        {"queue", "delete", "a", "s1", "--all"},
        {"queue", "delete", "--at", "5", "a", "s1"},
        {"queue", "delete", "", "s1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *argv[8];
        size_t n = 0;
        for (; n < 6 && bad[i][n]; n++)
            argv[n] = bad[i][n];
        argv[n] = NULL;
        int rc = run_in_ns(NULL, argv);
        if (rc != 2 || cli_out_[0] || !cli_err_[0])
            tl_fail(__FILE__, __LINE__, "case %zu: exit %d, stdout \"%s\", stderr \"%s\"", i, rc,
                    cli_out_, cli_err_);
    }
    CHECK_DUMP(before);
    free(before);
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- queue clear */

static void queue_clear_deletes_waiting_jobs_and_guards(void)
{
    tl_unique_ns("acq", ns_, sizeof ns_);
    cmd("SADD %s:known_jobs clear_cache", ns_);
    cmd("LPUSH %s:jobs:clear_cache %s", ns_,
        "{\"name\":\"clear_cache\",\"id\":\"u1\",\"t\":1,\"args\":{\"object_id_\":\"123\"},"
        "\"unique\":true}");
    cmd("LPUSH %s:jobs:clear_cache %s", ns_, "{\"name\":\"clear_cache\",\"id\":\"p\",\"t\":1}");
    cmd("SET %s:unique:clear_cache:%s 1 EX 86400", ns_, "{\"object_id_\":\"123\"}\n");
    cmd("ZADD %s:retry 5 %s", ns_, "{\"name\":\"clear_cache\",\"id\":\"r\",\"t\":1}");
    CHECK_INT(CLI("queue", "clear", "clear_cache"), 0);
    CHECK_STR(cli_out_, "Deleted 2 waiting jobs from queue clear_cache.\n");
    CHECK_STR(cli_err_, "");
    char want[1024];
    snprintf(want, sizeof want,
             "%s:known_jobs set clear_cache\n"
             "%s:retry zset {\"name\":\"clear_cache\",\"id\":\"r\",\"t\":1}=5\n",
             ns_, ns_);
    CHECK_DUMP(want);
    /* The unique job can be enqueued again at once. */
    CHECK_INT(CLI("enqueue", "--unique", "clear_cache", "{\"object_id_\":\"123\"}"), 0);
    CHECK_INT(CLI("queue", "clear", "--json", "clear_cache"), 0);
    CHECK_STR(cli_out_, "{\"deleted\":1,\"name\":\"clear_cache\"}\n");
    CHECK_DUMP(want);
    /* A key of another type is left alone: exit 1. */
    cmd("HSET %s:jobs:odd f v", ns_);
    CHECK_INT(CLI("queue", "clear", "odd"), 1);
    CHECK_STR(cli_out_, "");
    /* once, with what repairs it (no log line before it) */
    CHECK(strncmp(cli_err_, "cwork queue clear: ", 19) == 0 &&
          strstr(cli_err_, ":jobs:odd holds a hash, not a queue: left as it is — cwork doctor "
                           "--ns ") &&
          !strchr(cli_err_, '\n')[1]);
    CHECK_INT(CLI("queue", "--help"), 0);
    CHECK(strncmp(cli_out_, "Usage: cwork queue clear", 24) == 0);
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- queue delete */

static void queue_delete_deletes_one_waiting_job(void)
{
    tl_unique_ns("acd", ns_, sizeof ns_);
    cmd("SADD %s:known_jobs clear_cache", ns_);
    cmd("LPUSH %s:jobs:clear_cache %s", ns_,
        "{\"name\":\"clear_cache\",\"id\":\"u1\",\"t\":1,\"args\":{\"object_id_\":\"123\"},"
        "\"unique\":true}");
    cmd("LPUSH %s:jobs:clear_cache %s", ns_, "{\"name\":\"clear_cache\",\"id\":\"p\",\"t\":1}");
    cmd("LPUSH %s:jobs:clear_cache %s", ns_, "{\"name\":\"clear_cache\",\"id\":\"q\",\"t\":2}");
    cmd("SET %s:unique:clear_cache:%s 1", ns_, "{\"object_id_\":\"123\"}\n");
    cmd("ZADD %s:retry 5 %s", ns_, "{\"name\":\"clear_cache\",\"id\":\"p\",\"t\":1}");
    CHECK_INT(CLI("queue", "delete", "clear_cache", "p"), 0);
    CHECK_STR(cli_out_, "Deleted waiting job p from queue clear_cache.\n");
    CHECK_STR(cli_err_, "");
    char want[2048];
    snprintf(want, sizeof want,
             "%s:jobs:clear_cache list {\"name\":\"clear_cache\",\"id\":\"q\",\"t\":2} | "
             "{\"name\":\"clear_cache\",\"id\":\"u1\",\"t\":1,\"args\":{\"object_id_\":\"123\"},"
             "\"unique\":true}\n"
             "%s:known_jobs set clear_cache\n"
             "%s:retry zset {\"name\":\"clear_cache\",\"id\":\"p\",\"t\":1}=5\n"
             "%s:unique:clear_cache:{\"object_id_\":\"123\"}\\x0a string 1\n",
             ns_, ns_, ns_, ns_);
    CHECK_DUMP(want);
    /* Gone: exit 4, nothing else touched (the retry job with that id stays). */
    CHECK_INT(CLI("queue", "delete", "clear_cache", "p"), 4);
    CHECK_STR(cli_out_, "");
    CHECK_STR(cli_err_, "cwork queue delete: no job p is waiting in queue clear_cache\n");
    CHECK_DUMP(want);
    /* A unique job loses its guard. */
    CHECK_INT(CLI("queue", "delete", "--json", "clear_cache", "u1"), 0);
    CHECK_STR(cli_out_, "{\"deleted\":1,\"id\":\"u1\",\"name\":\"clear_cache\"}\n");
    snprintf(want, sizeof want,
             "%s:jobs:clear_cache list {\"name\":\"clear_cache\",\"id\":\"q\",\"t\":2}\n"
             "%s:known_jobs set clear_cache\n"
             "%s:retry zset {\"name\":\"clear_cache\",\"id\":\"p\",\"t\":1}=5\n",
             ns_, ns_, ns_);
    CHECK_DUMP(want);
    /* A key of another type is left alone: exit 1. */
    cmd("HSET %s:jobs:odd f v", ns_);
    CHECK_INT(CLI("queue", "delete", "odd", "q"), 1);
    CHECK_STR(cli_out_, "");
    /* once, with what repairs it (no log line before it) */
    CHECK(strncmp(cli_err_, "cwork queue delete: ", 20) == 0 &&
          strstr(cli_err_, ":jobs:odd holds a hash, not a queue: left as it is — cwork doctor "
                           "--ns ") &&
          !strchr(cli_err_, '\n')[1]);
    CHECK_INT(CLI("queue", "delete", "--help"), 0);
    CHECK(strncmp(cli_out_, "Usage: cwork queue delete", 25) == 0);
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- enqueue --bulk ids */

static void bulk_prints_the_ids_of_written_jobs_unless_quiet(void)
{
    tl_unique_ns("acb", ns_, sizeof ns_);
    /* One bad line anywhere: nothing is written and no id is printed. */
    int rc =
        run_in_ns("{\"name\":\"a\"}\nnot json\n", (const char *const[]){"enqueue", "--bulk", NULL});
    CHECK_INT(rc, 2);
    CHECK_STR(cli_out_, "");
    CHECK(strstr(cli_err_, "line 2: ") != NULL);
    CHECK(strstr(cli_err_, "nothing written") != NULL);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, "");
    free(dump);

    const char *input = "{\"name\":\"a\"}\n"
                        "{\"name\":\"b\",\"args\":{\"x\":1},\"in\":60}\n"
                        "{\"name\":\"c\",\"unique\":true}\n"
                        "{\"name\":\"c\",\"unique\":true}\n";
    rc = run_in_ns(input, (const char *const[]){"enqueue", "--bulk", NULL});
    CHECK_INT(rc, 0);
    CHECK_INT(cli_lines(cli_out_), 3);
    /* Each id printed is a job written, in input order: a's in its queue, b's scheduled,
     * c's in its queue (its duplicate printed nothing). */
    char ids[3][64] = {{0}};
    CHECK_INT(sscanf(cli_out_, "%63s %63s %63s", ids[0], ids[1], ids[2]), 3);
    char *a = only_element("jobs:a"), *c = only_element("jobs:c");
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:scheduled 0 -1", ns_);
    char want_id[96];
    snprintf(want_id, sizeof want_id, "\"id\":\"%s\"", ids[0]);
    CHECK(strstr(a, want_id) != NULL);
    snprintf(want_id, sizeof want_id, "\"id\":\"%s\"", ids[1]);
    CHECK(r->elements == 1 && strstr(r->element[0]->str, want_id));
    snprintf(want_id, sizeof want_id, "\"id\":\"%s\"", ids[2]);
    CHECK(strstr(c, want_id) != NULL);
    freeReplyObject(r);
    free(a);
    free(c);
    CHECK(strstr(cli_err_, "3 jobs written, 1 duplicates") != NULL);
    tl_ns_delete(rc_, ns_);

    rc = run_in_ns("{\"name\":\"a\"}\n{\"name\":\"a\"}\n",
                   (const char *const[]){"enqueue", "--bulk", "--quiet", NULL});
    CHECK_INT(rc, 0);
    CHECK_STR(cli_out_, "");
    redisReply *n = tl_cmd(rc_, "LLEN %s:jobs:a", ns_);
    CHECK_INT(n->integer, 2);
    freeReplyObject(n);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(retry_run_by_id_and_all);
    RUN(scheduled_run_by_id_name_and_json);
    RUN(queue_clear_deletes_waiting_jobs_and_guards);
    RUN(queue_delete_deletes_one_waiting_job);
    RUN(bulk_prints_the_ids_of_written_jobs_unless_quiet);
    redisFree(rc_);
    return tl_finish();
}
