/* The `cwork work` command end to end: it runs as a separate process (the binary from
 * $CWORK_CLI) against the test Redis, its commands are small shell scripts, and the
 * test checks what they saw, what cwork printed, how it exited, and Redis afterwards.
 * Every wait is bounded; every process started is killed in cleanup. */
#define _GNU_SOURCE
#include "cli_work_testutil.h"

/* ---------------------------------------------------------------- cases */

#define JOB_ID "0123456789abcdef01234567"
#define BIG_ID "89abcdef0123456789abcdef"

static void success_gets_job_on_stdin_and_env(void)
{
    setup("work-ok");
    /* Go-shaped, args keys unsorted: stdin must carry these bytes, not a re-encoding. */
    const char *json = "{\"name\":\"ok\",\"id\":\"" JOB_ID "\",\"t\":1700000000,"
                       "\"args\":{\"s\":\"a b\",\"n\":1}}";
    redis_int("LPUSH %s:jobs:ok %s", ns_, json);
    /* args above 64 KiB: not in the environment, whole on stdin */
    static char big[80 * 1024];
    int n = snprintf(big, sizeof big,
                     "{\"name\":\"big\",\"id\":\"" BIG_ID "\",\"t\":1,"
                     "\"args\":{\"b\":\"");
    memset(big + n, 'x', 70000);
    strcpy(big + n + 70000, "\"}}");
    redis_int("LPUSH %s:jobs:big %s", ns_, big);

    char ok_cmd[512], big_cmd[512];
    snprintf(ok_cmd, sizeof ok_cmd,
             "ok=cat > %s/in-$CWORK_JOB_ID; printf '%%s\\n' \"$CWORK_JOB_ID\" "
             "\"$CWORK_JOB_NAME\" \"$CWORK_JOB_ARGS\" \"$CWORK_JOB_FAILS\" "
             "\"$CWORK_TEST_MARK\" \"${CWORK_JOB_STALE:-none}\" > %s/env.tmp; "
             "mv %s/env.tmp %s/env; echo hello; echo warn >&2",
             dir_, dir_, dir_, dir_);
    snprintf(big_cmd, sizeof big_cmd,
             "big=test -z \"${CWORK_JOB_ARGS+set}\" || exit 9; wc -c > %s/big.tmp; "
             "mv %s/big.tmp %s/big",
             dir_, dir_, dir_);
    const char *args[] = {"--job", ok_cmd, "--job", big_cmd, NULL};
    start_work(args);
    const char *names[] = {"ok", "big", NULL};
    WAIT_UNTIL(file_exists("env") && file_exists("big") && settled(names), 10000);
    CHECK(settled(names));
    CHECK_INT(stop_work(SIGTERM, 10000), 0);

    char buf[1 << 17];
    size_t len = read_file("in-" JOB_ID, buf, sizeof buf);
    CHECK_MEM(buf, len, json, strlen(json));
    read_file("env", buf, sizeof buf);
    CHECK_STR(buf, JOB_ID "\nok\n{\"n\":1,\"s\":\"a b\"}\n0\ninherited\nnone\n");
    read_file("big", buf, sizeof buf);
    CHECK_INT(atol(buf), strlen(big));
    read_outputs();
    CHECK(strstr(out_, "[ok " JOB_ID "] hello\n") != NULL);
    CHECK(strstr(err_, "[ok " JOB_ID "] warn\n") != NULL);
    CHECK_INT(redis_int("ZCARD %s:retry", ns_), 0);
    CHECK_INT(redis_int("ZCARD %s:dead", ns_), 0);
    CHECK_INT(redis_int("SCARD %s:worker_pools", ns_), 0); /* a clean stop */
    cleanup();
}

static void failures_retry_die_or_vanish(void)
{
    setup("work-fail");
    static const char *const names[] = {"bad", "bad1", "bad2", "quiet", "sig", NULL};
    for (size_t i = 0; names[i]; i++) {
        char json[128];
        snprintf(json, sizeof json, "{\"name\":\"%s\",\"id\":\"%024zx\",\"t\":1,\"args\":{}}",
                 names[i], i + 1);
        redis_int("LPUSH %s:jobs:%s %s", ns_, names[i], json);
    }
    const char *args[] = {"--job",
                          "bad=echo oops >&2; exit 3",
                          "--job",
                          "bad1=echo first >&2; echo oops >&2; echo >&2; exit 3",
                          "--max-fails",
                          "1",
                          "--job",
                          "bad2=echo oops >&2; exit 3",
                          "--skip-dead",
                          "--job",
                          "quiet=exit 4",
                          "--max-fails",
                          "1",
                          "--job",
                          "sig=kill -9 $$",
                          "--max-fails=1",
                          NULL};
    start_work(args);
    WAIT_UNTIL(settled(names) && redis_int("ZCARD %s:retry", ns_) == 1 &&
                   redis_int("ZCARD %s:dead", ns_) == 3,
               10000);
    char retry[4096], dead[4096];
    zset_members("retry", retry, sizeof retry);
    zset_members("dead", dead, sizeof dead);
    CHECK(strstr(retry, "\"name\":\"bad\"") && strstr(retry, "\"fails\":1,\"err\":\"oops\""));
    /* the stderr tail: its non-blank lines (test_cli_work_script.c has the bounds) */
    CHECK(strstr(dead, "\"id\":\"000000000000000000000002\",\"t\":1,\"args\":{},\"fails\":1,"
                       "\"err\":\"first\\noops\""));
    CHECK(strstr(dead, "\"err\":\"exit status 4\""));
    CHECK(strstr(dead, "\"err\":\"killed by signal 9\""));
    CHECK(!strstr(retry, "\"bad2\"") && !strstr(dead, "\"bad2\"")); /* skip-dead: dropped */
    CHECK_INT(stop_work(SIGTERM, 10000), 0);
    cleanup();
}

static void timeout_kills_the_process_group(void)
{
    setup("work-timeout");
    redis_int("LPUSH %s:jobs:slow {\"name\":\"slow\",\"id\":\"" JOB_ID "\",\"t\":1,\"args\":{}}",
              ns_);
    char cmd[256];
    /* A grandchild in the background: the kill must reach the whole group. */
    snprintf(cmd, sizeof cmd, "slow=sh -c 'sleep 300 & echo $! > %s/gc.pid; wait'", dir_);
    const char *args[] = {"--job", cmd, "--timeout", "1", "--max-fails", "1", NULL};
    int64_t t0 = now_ms();
    start_work(args);
    WAIT_UNTIL(redis_int("ZCARD %s:dead", ns_) == 1, 10000);
    int64_t took = now_ms() - t0;
    char dead[1024];
    zset_members("dead", dead, sizeof dead);
    CHECK(strstr(dead, "\"err\":\"timed out after 1 s\"") != NULL);
    CHECK(took >= 1000 && took < 5000); /* SIGTERM sufficed: no wait for the kill grace */
    pid_t gc = read_pidfile("gc.pid");
    CHECK(gc > 0);
    WAIT_UNTIL(!pid_alive(gc), 2000);
    CHECK(!pid_alive(gc));
    CHECK_INT(stop_work(SIGTERM, 10000), 0);
    cleanup();
}

/* Finds the check-in of any worker of the namespace. */
static int has_checkin(const char *want)
{
    redisReply *r = tl_cmd(rc_, "KEYS %s:worker:*", ns_);
    int found = 0;
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements && !found; i++) {
        redisReply *c = tl_cmd(rc_, "HGET %s checkin", r->element[i]->str);
        found = c->type == REDIS_REPLY_STRING && strcmp(c->str, want) == 0;
        freeReplyObject(c);
    }
    freeReplyObject(r);
    return found;
}

static void checkin_lines_from_fd3(void)
{
    setup("work-checkin");
    redis_int("LPUSH %s:jobs:ck {\"name\":\"ck\",\"id\":\"" JOB_ID "\",\"t\":1,\"args\":{}}", ns_);
    const char *args[] = {"--job", "ck=echo starting >&3; echo halfway >&3; sleep 2", NULL};
    start_work(args);
    WAIT_UNTIL(has_checkin("halfway"), 3500);
    CHECK(has_checkin("halfway"));
    const char *names[] = {"ck", NULL};
    WAIT_UNTIL(settled(names), 5000);
    CHECK_INT(stop_work(SIGTERM, 10000), 0);
    CHECK_INT(redis_int("ZCARD %s:retry", ns_), 0);
    cleanup();
}

static const char *hang_job(void)
{
    static char cmd[256];
    snprintf(cmd, sizeof cmd, "hang=echo $$ > %s/child.pid; exec sleep 300", dir_);
    redis_int("LPUSH %s:jobs:hang {\"name\":\"hang\",\"id\":\"" JOB_ID "\",\"t\":1,\"args\":{}}",
              ns_);
    return cmd;
}

static void child_dies_with_cwork(void)
{
    setup("work-pdeath");
    const char *args[] = {"--job", hang_job(), NULL};
    start_work(args);
    pid_t child = 0;
    WAIT_UNTIL((child = read_pidfile("child.pid")) > 0, 10000);
    CHECK(child > 0 && pid_alive(child));
    CHECK_INT(stop_work(SIGKILL, 5000), 128 + SIGKILL);
    WAIT_UNTIL(!pid_alive(child), 3000);
    CHECK(!pid_alive(child));
    cleanup();
}

/* The job of a pool stopped at once, or past its grace, stays in its in-progress
 * list for the reaper, and its command is gone. */
static void check_left_in_progress(pid_t child)
{
    WAIT_UNTIL(!pid_alive(child), 3000);
    CHECK(!pid_alive(child));
    redisReply *r = tl_cmd(rc_, "SMEMBERS %s:worker_pools", ns_);
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 1);
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1)
        CHECK_INT(redis_int("LLEN %s:jobs:hang:%s:inprogress", ns_, r->element[0]->str), 1);
    freeReplyObject(r);
    CHECK_INT(redis_int("ZCARD %s:retry", ns_) + redis_int("ZCARD %s:dead", ns_), 0);
}

static void second_signal_stops_at_once(void)
{
    setup("work-abort");
    const char *args[] = {"--job", hang_job(), NULL};
    start_work(args);
    pid_t child = 0;
    WAIT_UNTIL((child = read_pidfile("child.pid")) > 0, 10000);
    CHECK(child > 0);
    kill(work_pid_, SIGTERM);
    WAIT_UNTIL((read_outputs(), strstr(err_, "stopping") != NULL), 5000);
    CHECK(strstr(err_, "stopping") != NULL);
    CHECK(pid_alive(child)); /* the first signal lets it run */
    int64_t t0 = now_ms();
    CHECK_INT(stop_work(SIGTERM, 5000), 1);
    CHECK(now_ms() - t0 < 2000);
    check_left_in_progress(child);
    cleanup();
}

static void grace_over_leaves_job_in_progress(void)
{
    setup("work-grace");
    const char *args[] = {"--grace", "0.5", "--job", hang_job(), NULL};
    start_work(args);
    pid_t child = 0;
    WAIT_UNTIL((child = read_pidfile("child.pid")) > 0, 10000);
    CHECK(child > 0);
    CHECK_INT(stop_work(SIGTERM, 5000), 1);
    check_left_in_progress(child);
    cleanup();
}

static void graceful_stop_lets_commands_finish(void)
{
    setup("work-graceful");
    redis_int("LPUSH %s:jobs:j {\"name\":\"j\",\"id\":\"" JOB_ID "\",\"t\":1,\"args\":{}}", ns_);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "j=echo $$ > %s/child.pid; sleep 1; echo done > %s/done", dir_, dir_);
    const char *args[] = {"--job", cmd, NULL};
    start_work(args);
    WAIT_UNTIL(read_pidfile("child.pid") > 0, 10000);
    CHECK_INT(stop_work(SIGTERM, 10000), 0);
    CHECK(file_exists("done"));
    CHECK_INT(count_keys("*inprogress"), 0);
    CHECK_INT(redis_int("ZCARD %s:retry", ns_), 0);
    CHECK_INT(redis_int("SCARD %s:worker_pools", ns_), 0);
    cleanup();
}

static void usage_errors_exit_2(void)
{
    setup("work-usage");
    static const char *const cases[][6] = {
        {"--job", "noequals", NULL},
        {"--job", "=cmd", NULL},
        {"--job", "x=", NULL},
        {"--job", "x=true", "--bogus", NULL},
        {NULL},
        {"--timeout", "1", "--job", "x=true", NULL},
        {"--job", "x=true", "--timeout", "soon", NULL},
        {"--job", "x=true", "--priority", "0", NULL},
        {"--job", "x=true", "--job", "x=false", NULL},
        {"--job", "bad,name=true", NULL},
        {"--concurrency", "0", "--job", "x=true", NULL},
        {"--job", "x=true", "stray", NULL},
        {"--job", "x=true", "--go-flavor", "gocraft", NULL},
        {"--job", "x=true", "--go-flavor", NULL},
        /* a schedule without a name: not a job named "*" */
        {"--job", "x=true", "--periodic", "0 * * * * *", NULL},
        {"--job", "x=true", "--periodic", "TZ=UTC */5 * * * *", NULL},
        {"--job", "x=true", "--redis", "redis://a:b:c", NULL}, /* a URL that cannot be used */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        start_work(cases[i]);
        /* A usage error exits at once; the wait is only for the process to be gone (an
         * ASan build's exit scans for leaks, slow on a loaded machine): the exit status
         * is what is checked, not the time. */
        int rc = wait_work(60000);
        read_outputs();
        if (rc != 2) tl_fail(__FILE__, __LINE__, "case %zu exited %d, not 2: %s", i, rc, err_);
        CHECK(err_[0] != '\0');
    }
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, ""); /* nothing written */
    free(dump);
    const char *help[] = {"--help", NULL};
    start_work(help);
    CHECK_INT(wait_work(5000), 0);
    read_outputs();
    CHECK(strstr(out_, ">&3") && strstr(out_, "CWORK_JOB_ID") && strstr(out_, "CWORK_JOB_ARGS") &&
          strstr(out_, "CWORK_JOB_FAILS") && strstr(out_, "Exit status") &&
          strstr(out_, "--kill-grace") && strstr(out_, "follow"));
    cleanup();
}

/* Issue 21: every duration option refuses a negative value, a bare number as much as
 * a duration with a unit, with one line naming the option; exit 2 and nothing written
 * (a pool that started would have written its heartbeat). */
static void negative_durations_are_refused_naming_the_option(void)
{
    setup("work-neg");
    static const char *const cases[][6] = {
        /* the arguments, then the whole of stderr */
        {"--grace", "-5", "--job", "x=true", NULL,
         "cwork work: --grace needs a duration (30, 0.5, 90s, 15m); \"-5\" is negative\n"},
        {"--grace=-0.5s", "--job", "x=true", NULL,
         "cwork work: --grace needs a duration (30, 0.5, 90s, 15m); \"-0.5s\" is negative\n"},
        {"--reap-period", "-300", "--job", "x=true", NULL,
         "cwork work: --reap-period needs whole seconds from 1 to 86400 (or 90s, 15m, 1h, 1d); "
         "\"-300\" is negative\n"},
        {"-dead-check", "-1m", "--job", "x=true", NULL,
         "cwork work: --dead-check needs whole seconds from 1 to 86400 (or 90s, 15m, 1h, 1d); "
         "\"-1m\" is negative\n"},
        {"--job", "x=true", "--timeout", "-5", NULL,
         "cwork work: --timeout needs a positive duration (30, 0.5, 90s, 15m, 1h); \"-5\" is "
         "negative\n"},
        {"--job", "x=true", "--timeout=-1h30m", NULL,
         "cwork work: --timeout needs a positive duration (30, 0.5, 90s, 15m, 1h); \"-1h30m\" is "
         "negative\n"},
        {"--job", "x=true", "--kill-grace", "-5", NULL,
         "cwork work: --kill-grace needs a duration (5, 0.5, 90s, 1m); \"-5\" is negative\n"},
        {"--job", "x=true", "--result-ttl", "-1h", NULL,
         "cwork work: --result-ttl needs a positive duration (1h, 7d); \"-1h\" is negative\n"},
        {"--job", "x=true", "--keep-succeeded-for", "-7d", NULL,
         "cwork work: --keep-succeeded-for needs a positive duration (1h, 7d); \"-7d\" is "
         "negative\n"},
        {"--job", "x=true", "--rate-limit", "x=5/-1s", NULL,
         "cwork work: --rate-limit x=5/-1s: N and DURATION cannot be negative\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = 0;
        while (cases[i][n])
            n++;
        start_work(cases[i]);
        int rc = wait_work(60000); /* at once; the bound only for a slow ASan exit */
        read_outputs();
        if (rc != 2 || out_[0] || strcmp(err_, cases[i][n + 1]) != 0)
            tl_fail(__FILE__, __LINE__, "case %zu: exit %d, stdout \"%s\", stderr \"%s\"", i, rc,
                    out_, err_);
    }
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, "");
    free(dump);
    cleanup();
}

int main(void)
{
    rc_ = tl_redis_connect();
    signal(SIGPIPE, SIG_IGN);
    RUN(usage_errors_exit_2);
    RUN(negative_durations_are_refused_naming_the_option);
    RUN(success_gets_job_on_stdin_and_env);
    RUN(failures_retry_die_or_vanish);
    RUN(timeout_kills_the_process_group);
    RUN(checkin_lines_from_fd3);
    RUN(child_dies_with_cwork);
    RUN(second_signal_stops_at_once);
    RUN(grace_over_leaves_job_in_progress);
    RUN(graceful_stop_lets_commands_finish);
    redisFree(rc_);
    return tl_finish();
}
