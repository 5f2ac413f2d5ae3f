/* cwork doctor (PROTOCOL §25): a clean namespace exits 0; findings exit 1 with the key,
 * the problem and what --repair would do, in text and --json; --repair repairs them (exit
 * 1, the findings marked repaired) and a second run exits 0; the whole namespace after
 * each; bad command lines exit 2, an unreachable Redis 6. */
#include "cli_testutil.h"

static redisContext *rc_;
static char ns_[64];

#define IN_NS(...) cli_run_in_ns(ns_, NULL, (const char *const[]){__VA_ARGS__, NULL})

static void check_ns(int line, const char *want)
{
    char *got = tl_ns_dump(rc_, ns_);
    char buf[2048];
    snprintf(buf, sizeof buf, want, ns_, ns_, ns_, ns_);
    if (strcmp(got, buf) != 0)
        tl_fail(__FILE__, line, "namespace\n--- got:\n%s--- want:\n%s---", got, buf);
    free(got);
}

static void clean_findings_repair_clean(void)
{
    tl_unique_ns("cd", ns_, sizeof ns_);
    CHECK_INT(IN_NS("enqueue", "x", "{}"), 0);
    CHECK_INT(IN_NS("doctor"), 0);
    CHECK_STR(cli_out_, "Clean: every key of the namespace is as PROTOCOL describes it.\n");
    CHECK_INT(IN_NS("doctor", "--json"), 0);
    CHECK_STR(cli_out_, "{\"clean\":true,\"findings\":[]}\n");

    /* the damage: the queue replaced by a string, and a dead member no JSON */
    tl_do(rc_, "DEL %s:jobs:x", ns_);
    tl_do(rc_, "SET %s:jobs:x notalist", ns_);
    tl_do(rc_, "ZADD %s:dead 5 {notjson", ns_);
    CHECK_INT(IN_NS("doctor"), 1);
    char want[2048];
    snprintf(want, sizeof want,
             "wrong_type  %s:jobs:x\n"
             "  problem: a string where PROTOCOL has a list\n"
             "  --repair would rename it to %s:cwork:quarantine:key:jobs:x (its content kept, "
             "no TTL)\n"
             "undecodable  %s:dead\n"
             "  problem: member is no job JSON: {notjson\n"
             "  --repair would move it with its score to %s:cwork:quarantine:dead\n"
             "2 finding(s); cwork doctor --repair repairs them.\n",
             ns_, ns_, ns_, ns_);
    CHECK_STR(cli_out_, want);
    CHECK_INT(IN_NS("doctor", "--json"), 1);
    snprintf(want, sizeof want,
             "{\"clean\":false,\"findings\":[{\"kind\":\"wrong_type\",\"key\":\"%s:jobs:x\","
             "\"member\":null,\"problem\":\"a string where PROTOCOL has a list\",\"action\":"
             "\"rename it to %s:cwork:quarantine:key:jobs:x (its content kept, no TTL)\","
             "\"repaired\":false,\"repair_error\":null},{\"kind\":\"undecodable\",\"key\":"
             "\"%s:dead\",\"member\":\"{notjson\",\"problem\":\"member is no job JSON: "
             "{notjson\",\"action\":\"move it with its score to %s:cwork:quarantine:dead\","
             "\"repaired\":false,\"repair_error\":null}]}\n",
             ns_, ns_, ns_, ns_);
    CHECK_STR(cli_out_, want);
    check_ns(__LINE__, "%s:dead zset {notjson=5\n%s:jobs:x string notalist\n%s:known_jobs set x\n");

    CHECK_INT(IN_NS("doctor", "--repair"), 1);
    CHECK(strstr(cli_out_, "  repaired: rename it to ") != NULL);
    CHECK(strstr(cli_out_, "  repaired: move it with its score to ") != NULL);
    CHECK(strstr(cli_out_, "2 finding(s).\n") != NULL);
    check_ns(__LINE__, "%s:cwork:quarantine:dead zset {notjson=5\n"
                       "%s:cwork:quarantine:key:jobs:x string notalist\n%s:known_jobs set x\n");
    CHECK_INT(IN_NS("doctor", "--json", "--repair"), 0);
    CHECK_STR(cli_out_, "{\"clean\":true,\"findings\":[]}\n");
}

static void a_failed_repair_exits_6(void)
{
    tl_unique_ns("cd", ns_, sizeof ns_);
    tl_do(rc_, "ZADD %s:retry 5 {notjson", ns_);
    tl_do(rc_, "SET %s:cwork:quarantine:retry x", ns_);
    CHECK_INT(IN_NS("doctor", "--repair", "--json"), 6);
    CHECK(strstr(cli_out_, "\"repaired\":false,\"repair_error\":\"") != NULL);
    CHECK(strstr(cli_out_, "cwork:quarantine:retry has another type") != NULL);
    check_ns(__LINE__, "%s:cwork:quarantine:retry string x\n%s:retry zset {notjson=5\n");
    tl_ns_delete(rc_, ns_);
}

static void bad_command_lines_and_no_redis(void)
{
    tl_unique_ns("cd", ns_, sizeof ns_);
    CHECK_INT(IN_NS("doctor", "extra"), 2);
    CHECK(strstr(cli_err_, "cwork doctor: unexpected argument \"extra\"") != NULL);
    CHECK_INT(IN_NS("doctor", "--repiar"), 2);
    CHECK(strstr(cli_err_, "did you mean --repair?") != NULL);
    CHECK_INT(IN_NS("doctor", "--repair=false"), 2);
    CHECK_INT(CLI_RUN("doctor", "--redis", "redis://127.0.0.1:1"), 6);
    CHECK_INT(CLI_RUN("doctor", "--help"), 0);
    CHECK(strstr(cli_out_, "Usage: cwork doctor") == cli_out_);
    CHECK_INT(CLI_RUN("--help"), 0);
    CHECK(strstr(cli_out_, "  doctor    check every key of the namespace") != NULL);
    check_ns(__LINE__, "");
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(clean_findings_repair_clean);
    RUN(a_failed_repair_exits_6);
    RUN(bad_command_lines_and_no_redis);
    tl_ns_delete(rc_, ns_);
    redisFree(rc_);
    return tl_finish();
}
