/* cwork retry kill, cwork scheduled kill and the lists' --grep, end to end: Redis state
 * written by hand in Go's bytes, the binary run against it, its stdout, stderr and exit
 * status, and the whole namespace afterwards. */
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

static void check_dump_at(int line, const char *want)
{
    char *got = tl_ns_dump(rc_, ns_);
    if (strcmp(got, want) != 0)
        tl_fail(__FILE__, line, "namespace dump\n   got:\n%s  want:\n%s", got, want);
    free(got);
}
#define CHECK_DUMP(want) check_dump_at(__LINE__, want)

#define R1                                                                                         \
    "{\"name\":\"mail\",\"id\":\"r1\",\"t\":1700000000,\"args\":{\"to\":\"a\"},\"fails\":1,"       \
    "\"err\":\"boom\",\"failed_at\":1700000001}"
#define R2 "{\"name\":\"mail\",\"id\":\"r2\",\"t\":1,\"args\":null,\"err\":\"smtp down\"}"
#define R3 "{\"name\":\"sms\",\"id\":\"r3\",\"t\":1,\"args\":null,\"err\":\"no route\"}"

static long long dead_score(const char *member)
{
    redisReply *r = tl_cmd(rc_, "ZSCORE %s:dead %s", ns_, member);
    long long at = r->str ? atoll(r->str) : -1;
    freeReplyObject(r);
    return at;
}

static void retry_kill_by_id_name_and_all(void)
{
    tl_unique_ns("akr", ns_, sizeof ns_);
    cmd("ZADD %s:retry 1900000000 %s", ns_, R1);
    cmd("ZADD %s:retry 1900000001 %s", ns_, R2);
    cmd("ZADD %s:retry 1900000002 %s", ns_, R3);
    long long before = (long long)time(NULL);
    CHECK_INT(CLI("retry", "kill", "r1"), 0);
    long long after = (long long)time(NULL);
    CHECK_STR(cli_out_, "Killed retry job r1 (at 1900000000).\n");
    CHECK_STR(cli_err_, "");
    long long at = dead_score(R1);
    CHECK(at >= before && at <= after);
    char want[4096];
    snprintf(want, sizeof want,
             "%s:dead zset " R1 "=%lld\n%s:retry zset " R2 "=1900000001 | " R3 "=1900000002\n", ns_,
             at, ns_);
    CHECK_DUMP(want);

    /* gone, unknown, a wrong time: 4 and nothing changes */
    CHECK_INT(CLI("retry", "kill", "r1"), 4);
    CHECK_STR(cli_err_, "cwork retry kill: job r1 is not in the retry set but in the dead set "
                        "(see cwork job ID)\n");
    CHECK_INT(CLI("retry", "kill", "nope"), 4);
    CHECK_STR(cli_err_, "cwork retry kill: no job has the id nope\n");
    CHECK_INT(CLI("retry", "kill", "--at", "1900000005", "r2", "--json"), 4);
    CHECK_STR(cli_out_, "");
    CHECK_STR(cli_err_, "cwork retry kill: nothing killed\n");
    /* bad command lines: 2 */
    CHECK_INT(CLI("retry", "kill"), 2);
    CHECK_STR(cli_err_, "cwork retry kill: no job ID given (or --all) (see cwork retry kill "
                        "--help)\n");
    CHECK_INT(CLI("retry", "kill", "r2", "--all"), 2);
    CHECK_INT(CLI("dead", "kill", "r2"), 2);
    CHECK_DUMP(want);

    CHECK_INT(CLI("retry", "kill", "--all", "--name", "sms", "--json"), 0);
    CHECK_STR(cli_out_, "{\"killed\":1}\n");
    CHECK_INT(CLI("retry", "kill", "--all"), 0);
    CHECK_STR(cli_out_, "Killed 1 retry job.\n");
    CHECK(dead_score(R2) >= before && dead_score(R3) >= before);
    redisReply *r = tl_cmd(rc_, "ZCARD %s:dead", ns_);
    CHECK_INT(r->integer, 3);
    freeReplyObject(r);
    r = tl_cmd(rc_, "EXISTS %s:retry", ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);

    CHECK_INT(CLI("retry", "kill", "--help"), 0);
    CHECK(strstr(cli_out_, "Usage: cwork retry kill [--redis URL]") == cli_out_);
    tl_ns_delete(rc_, ns_);
}

static void scheduled_kill_gets_err_killed_and_drops_the_guard(void)
{
    tl_unique_ns("aks", ns_, sizeof ns_);
    cmd("ZADD %s:scheduled 1900000000 %s", ns_,
        "{\"name\":\"a\",\"id\":\"s1\",\"t\":1,\"args\":{\"k\":1},\"unique\":true}");
    cmd("SET %s:unique:a:%s 1 EX 86400", ns_, "{\"k\":1}\n");
    CHECK_INT(CLI("scheduled", "kill", "--run-at", "1900000000", "s1", "--json"), 0);
    CHECK_STR(cli_out_, "{\"at\":1900000000,\"id\":\"s1\",\"killed\":1}\n");
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    CHECK_INT(r->elements, 1);
    if (r->elements == 1) {
        cwork_job *job = NULL;
        CHECK_INT(cwork_job_decode(r->element[0]->str, r->element[0]->len, &job, NULL), 0);
        if (job) {
            CHECK_STR(cwork_job_last_error(job), "killed");
            CHECK_STR(cwork_job_id(job), "s1");
            cwork_job_free(job);
        }
    }
    freeReplyObject(r);
    r = tl_cmd(rc_, "KEYS %s:*", ns_);
    CHECK_INT(r->elements, 1); /* only dead: the guard and the scheduled set are gone */
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

static void grep_lists_matching_jobs_newest_first(void)
{
    tl_unique_ns("akg", ns_, sizeof ns_);
    cmd("ZADD %s:dead 1700000000 %s", ns_, R1);
    cmd("ZADD %s:dead 1700000100 %s", ns_, R2);
    cmd("ZADD %s:dead 1700000200 %s", ns_, R3);
    char *before = tl_ns_dump(rc_, ns_);
    /* in args ("to":"a" holds no "smtp"), in err, any case */
    CHECK_INT(CLI("dead", "--grep", "SMTP"), 0);
    CHECK(strstr(cli_out_, "Dead jobs matching \"SMTP\": 1 of 3 (page 1 of 1)\n") == cli_out_);
    CHECK(strstr(cli_out_, " r2 ") != NULL && strstr(cli_out_, " r1 ") == NULL);
    CHECK_STR(cli_err_, "");
    CHECK_INT(CLI("dead", "--search", "o", "--json"), 0);
    CHECK_STR(cli_out_,
              "{\"bounded\":false,\"count\":3,\"jobs\":[{\"died_at\":1700000200,\"job\":" R3
              "},{\"died_at\":1700000100,\"job\":" R2 "},{\"died_at\":1700000000,\"job\":" R1
              "}],\"scanned\":3,\"total\":3}\n");
    CHECK_INT(CLI("retry", "--grep", "x"), 0);
    CHECK_STR(cli_out_, "Jobs to retry matching \"x\": 0 of 0\n");
    CHECK_INT(CLI("dead", "--grep", ""), 2);
    CHECK_INT(CLI("dead", "--grep", "a", "--name", "mail"), 2);
    CHECK_STR(cli_err_, "cwork dead: --grep searches every job of the set: it does not go with "
                        "--name (see cwork dead --help)\n");
    char *after = tl_ns_dump(rc_, ns_);
    CHECK_STR(after, before);
    free(before);
    free(after);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(retry_kill_by_id_name_and_all);
    RUN(scheduled_kill_gets_err_killed_and_drops_the_guard);
    RUN(grep_lists_matching_jobs_newest_first);
    redisFree(rc_);
    return tl_finish();
}
