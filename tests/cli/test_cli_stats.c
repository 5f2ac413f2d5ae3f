/* cwork stats end to end: a real pool runs jobs (some fail for good), then the command
 * reads what the dashboard reads — today's and past days' counters, per-name rows — as
 * text and as JSON; --watch prints again with a rate; bad options exit 2 and say why;
 * the command writes nothing to Redis. */
#include "cli_testutil.h"
#include "cwork.h"

#include <signal.h>
#include <stdatomic.h>
#include <time.h>

static redisContext *rc_;
static char ns_[64];

#define cmd(...) tl_do(rc_, __VA_ARGS__)

#define CLI(...) cli_run_in_ns(ns_, NULL, (const char *const[]){__VA_ARGS__, NULL})

static void utc_date(char *buf, size_t size, int days_ago)
{
    time_t t = time(NULL) - (time_t)days_ago * 86400;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%d", &tm);
}

static atomic_int ran_;

static int ok_job(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    tl_sleep_ms(5); /* a job that takes time */
    atomic_fetch_add(&ran_, 1);
    return 0;
}

static int bad_job(cwork_job *job, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&ran_, 1);
    return cwork_job_fail(job, "smtp: connection refused");
}

/* 6 jobs that succeed and 2 that fail for good (max_fails 1), run by a pool. */
static void run_a_pool(void)
{
    cwork_redis *redis = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, ns_, NULL);
    for (int i = 0; i < 6; i++)
        CHECK_INT(cwork_enqueue(enq, "resize", NULL, NULL, NULL), 0);
    for (int i = 0; i < 2; i++)
        CHECK_INT(cwork_enqueue(enq, "send_email", NULL, NULL, NULL), 0);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 4;
    cwork_pool *p = cwork_pool_new(redis, ns_, &o, NULL);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.max_fails = 1;
    cwork_pool_register(p, "resize", ok_job, NULL, NULL);
    cwork_pool_register(p, "send_email", bad_job, &jo, NULL);
    atomic_store(&ran_, 0);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    for (int i = 0; i < 500 && atomic_load(&ran_) < 8; i++)
        tl_sleep_ms(10);
    cwork_pool_stats st;
    for (int i = 0; i < 500 && (cwork_pool_get_stats(p, &st), st.in_flight); i++)
        tl_sleep_ms(10);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0); /* flushes the day's counters */
    cwork_pool_free(p);
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
}

/* A namespace dump without its TTLs (" ttl=N"), which run down between two dumps: a
 * loaded machine takes seconds over the commands in between. In place; returns dump. */
static char *without_ttls(char *dump)
{
    char *w = dump;
    for (const char *r = dump; *r;) {
        if (strncmp(r, " ttl=", 5) == 0) {
            r += 5;
            while (*r >= '0' && *r <= '9')
                r++;
            continue;
        }
        *w++ = *r++;
    }
    *w = '\0';
    return dump;
}

static void text_and_json_show_what_a_pool_did(void)
{
    tl_unique_ns("stats", ns_, sizeof ns_);
    run_a_pool();
    char today[16], two_days_ago[16];
    utc_date(today, sizeof today, 0);
    utc_date(two_days_ago, sizeof two_days_ago, 2);
    cmd("HSET %s:cwork:stat:%s processed 40 failed 4", ns_, two_days_ago); /* history */
    cmd("SADD %s:known_jobs idle_type", ns_);
    cmd("SET %s:jobs:idle_type:paused 1", ns_);
    char *before = without_ttls(tl_ns_dump(rc_, ns_));
    redisReply *t = tl_cmd(rc_, "PTTL %s:cwork:stat:%s", ns_, today);
    long long ttl_before = t->integer;
    freeReplyObject(t);

    CHECK_INT(CLI("stats", "--days", "3"), 0);
    char want[256];
    snprintf(want, sizeof want, "today %s (UTC): 8 processed, 2 failed\n", today);
    CHECK(strstr(cli_out_, want) != NULL);
    snprintf(want, sizeof want, "%s         40       4\n", two_days_ago);
    CHECK(strstr(cli_out_, want) != NULL);
    CHECK(strstr(cli_out_, "JOB         WAITING  RUNNING  RETRY  DEAD  PAUSED  LAST ERROR\n") !=
          NULL);
    CHECK(strstr(cli_out_, "idle_type         0        0      0     0  yes     -\n") != NULL);
    CHECK(strstr(cli_out_, "resize            0        0      0     0  no      -\n") != NULL);
    CHECK(strstr(cli_out_,
                 "send_email        0        0      0     2  no      smtp: connection refused\n") !=
          NULL);
    CHECK_STR(cli_err_, "");

    CHECK_INT(CLI("stats", "--json", "--days", "1"), 0);
    snprintf(want, sizeof want,
             "{\"ns\":\"%s\",\"today\":{\"date\":\"%s\",\"processed\":8,\"failed\":2},"
             "\"days\":[{\"date\":\"%s\",\"processed\":8,\"failed\":2}],",
             ns_, today, today);
    CHECK(strncmp(cli_out_, want, strlen(want)) == 0);
    CHECK(strstr(cli_out_, "\"retry_total\":0,\"dead_total\":2,\"sampled\":false,") != NULL);
    CHECK(strstr(cli_out_,
                 "{\"name\":\"send_email\",\"known\":true,\"paused\":false,"
                 "\"waiting\":0,\"latency\":0,\"running\":0,\"retry\":0,\"dead\":2,"
                 "\"last_error\":\"smtp: connection refused\",\"last_failed_at\":") != NULL);
    CHECK_INT(cli_lines(cli_out_), 1);

    char *after = without_ttls(tl_ns_dump(rc_, ns_)); /* it only reads */
    t = tl_cmd(rc_, "PTTL %s:cwork:stat:%s", ns_, today);
    CHECK(t->integer > 0 && t->integer <= ttl_before); /* (no EXPIRE either) */
    freeReplyObject(t);
    CHECK_STR(after, before);
    free(before);
    free(after);
    tl_ns_delete(rc_, ns_);
}

/* --watch prints again and again, with the rate since the last print, until SIGINT. */
static void watch_prints_a_rate_until_interrupted(void)
{
    tl_unique_ns("statw", ns_, sizeof ns_);
    char today[16];
    utc_date(today, sizeof today, 0);
    cmd("HSET %s:cwork:stat:%s processed 100 failed 0", ns_, today);
    char out_path[] = "/tmp/cwt-stats-XXXXXX";
    int out = mkstemp(out_path);
    unlink(out_path);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out, 1);
        const char *cli = getenv("CWORK_CLI");
        if (!cli) _exit(127);
        execl(cli, "cwork", "stats", "--watch", "0.3", "--json", "--days", "1", "--redis",
              tl_redis_url(), "--ns", ns_, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 10; i++) {
        tl_sleep_ms(150);
        cmd("HINCRBY %s:cwork:stat:%s processed 30", ns_, today);
    }
    kill(pid, SIGINT);
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    cli_slurp_(out, cli_out_, sizeof cli_out_);
    CHECK(cli_lines(cli_out_) >= 2);
    /* The first print has no rate; a later one has a positive one. */
    const char *second = strchr(cli_out_, '\n');
    CHECK(strstr(cli_out_, "processed_per_second") == NULL ||
          strstr(cli_out_, "processed_per_second") > second);
    const char *r = second ? strstr(second, "\"processed_per_second\":") : NULL;
    CHECK(r != NULL && atof(r + 23) > 0);
    tl_ns_delete(rc_, ns_);
}

static void bad_options_exit_2_and_say_why(void)
{
    tl_unique_ns("statb", ns_, sizeof ns_);
    CHECK_INT(CLI("stats", "--days", "0"), 2);
    CHECK(strstr(cli_err_, "--days takes a whole number from 1 to 366, not \"0\"") != NULL);
    CHECK_INT(CLI("stats", "--dayz", "3"), 2);
    CHECK(strstr(cli_err_, "did you mean --days?") != NULL);
    CHECK_INT(CLI("stats", "--watch", "0.01"), 2);
    CHECK(strstr(cli_err_, "--watch takes a duration") != NULL);
    CHECK_INT(CLI("stats", "extra"), 2);
    CHECK_INT(CLI_RUN("stats", "--redis", "redis://127.0.0.1:1"), 1);
    CHECK(cli_lines(cli_err_) == 1);
    CHECK_INT(CLI_RUN("stats", "--help"), 0);
    CHECK(strncmp(cli_out_, "Usage: cwork stats", 18) == 0);
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(text_and_json_show_what_a_pool_did);
    RUN(watch_prints_a_rate_until_interrupted);
    RUN(bad_options_exit_2_and_say_why);
    redisFree(rc_);
    return tl_finish();
}
