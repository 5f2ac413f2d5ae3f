/* `cwork cancel` (PROTOCOL §21) with real processes: a running `sleep 30` command of
 * `cwork work` is cancelled and every process of its tree is gone within 2 s, the job in
 * dead with "cancelled"; a job cancelled while its pool is frozen goes to dead when the
 * pool is SIGKILLed and another pool reaps it, and never runs again; exit codes 0, 4, 5
 * and 2, --json and --help.
 *
 * A job's processes are found by their environment (CWORK_JOB_ID=<the case's id>, which
 * every process of the tree inherits), whatever their parent or group. */
#define _GNU_SOURCE
#include "cli_testutil.h"
#include "cli_work_testutil.h"

#include <dirent.h>

static char job_id_[25];

static int job_processes(void)
{
    return job_tree_processes(job_id_, NULL, NULL, 0);
}

static void kill_job_processes(void)
{
    kill_job_tree(job_id_);
}

/* A job of name "t" with a fresh id waiting in its queue, and the --job argument of a
 * command that notes each run in the case's directory and then sleeps in a tree of two
 * processes (static). */
static const char *sleeping_job(void)
{
    static char arg[512];
    snprintf(job_id_, sizeof job_id_, "%08x%08x%08x", (unsigned)getpid(), (unsigned)now_ms(),
             (unsigned)rand());
    redis_int("LPUSH %s:jobs:t {\"name\":\"t\",\"id\":\"%s\",\"t\":1,\"args\":{}}", ns_, job_id_);
    snprintf(arg, sizeof arg, "t=echo run >> %s/runs; sh -c 'sleep 30' & sleep 30", dir_);
    return arg;
}

static int runs(void)
{
    char buf[256];
    read_file("runs", buf, sizeof buf);
    return (int)cli_lines(buf);
}

static int cancel_cmd(int json)
{
    const char *argv[] = {"cancel", json ? "--json" : job_id_, json ? job_id_ : NULL, NULL};
    return cli_run_in_ns(ns_, NULL, argv);
}

/* The one dead member holds the job, cancelled. */
static void check_dead_cancelled(int line)
{
    char dead[2048];
    zset_members("dead", dead, sizeof dead);
    char want_id[64];
    snprintf(want_id, sizeof want_id, "\"id\":\"%s\"", job_id_);
    if (cli_lines(dead) != 1 || !strstr(dead, want_id) || !strstr(dead, "\"err\":\"cancelled\"") ||
        !strstr(dead, "\"fails\":1"))
        tl_fail(__FILE__, line, "dead set: %s", dead);
}

static void a_running_sleep_is_cancelled_with_its_whole_tree(void)
{
    setup("cancel-run");
    const char *args[] = {"--job", sleeping_job(), "--kill-grace", "1", NULL};
    start_work(args);
    WAIT_UNTIL(job_processes() >= 3, 15000); /* sh, its sleep, the inner sh's sleep */
    CHECK(job_processes() >= 3);
    int64_t t0 = now_ms();
    CHECK_INT(cancel_cmd(1), 0);
    char prefix[160];
    snprintf(prefix, sizeof prefix,
             "{\"cancelled\":true,\"id\":\"%s\",\"place\":\"in_progress\",\"pool\":\"", job_id_);
    CHECK(strncmp(cli_out_, prefix, strlen(prefix)) == 0);
    CHECK(strlen(cli_out_) == strlen(prefix) + 24 + 3); /* the pool's 24 hex digits, "}\n */
    WAIT_UNTIL(job_processes() == 0, 10000);
    int64_t took = now_ms() - t0;
    printf("  every process of the job gone %lld ms after the cancel\n", (long long)took);
    CHECK_INT(job_processes(), 0);
    CHECK(took <= 2000);
    WAIT_UNTIL(redis_int("ZCARD %s:dead", ns_) == 1, 10000);
    check_dead_cancelled(__LINE__);
    /* Nothing left to run it again: not in its queue, in progress or retry; no mark. */
    const char *names[] = {"t", NULL};
    WAIT_UNTIL(settled(names), 5000);
    CHECK(settled(names));
    CHECK_INT(redis_int("ZCARD %s:retry", ns_), 0);
    CHECK_INT(redis_int("EXISTS %s:cwork:cancelled", ns_), 0);
    CHECK_INT(stop_work(SIGTERM, 10000), 0);
    read_outputs();
    CHECK(strstr(err_, "cancelled after") != NULL);
    CHECK_INT(runs(), 1);
    CHECK_INT(cancel_cmd(0), 4); /* dead already */
    CHECK(strstr(cli_err_, "is in the dead set already") != NULL);
    kill_job_processes();
    cleanup();
}

/* The pool cannot act on the cancel (frozen), then dies: the job's mark sends it to dead
 * when another pool's reaper gives back the dead pool's jobs. */
static void a_job_of_a_pool_that_dies_before_it_acts_goes_to_dead_when_reaped(void)
{
    setup("cancel-reap");
    const char *args[] = {"--job", sleeping_job(), NULL};
    start_work(args);
    WAIT_UNTIL(job_processes() >= 3, 15000);
    CHECK(job_processes() >= 3);
    kill(work_pid_, SIGSTOP);
    CHECK_INT(cancel_cmd(0), 0); /* its subscription is still open: it counts as told */
    CHECK(strstr(cli_out_, "cancelled: job ") == cli_out_);
    CHECK_INT(redis_int("HEXISTS %s:cwork:cancelled %s", ns_, job_id_), 1);
    CHECK_INT(stop_work(SIGKILL, 5000), 128 + SIGKILL);
    WAIT_UNTIL(job_processes() == 0, 10000); /* the supervisor's doing: cwork died */
    CHECK_INT(job_processes(), 0);
    CHECK_INT(redis_int("ZCARD %s:dead", ns_), 0); /* nobody committed it */
    /* Another pool: its reaper finds the dead pool once the heartbeat is stale. */
    char job[256];
    snprintf(job, sizeof job, "t=echo run >> %s/runs", dir_);
    const char *again[] = {"--job", job, "--dead-check", "1", NULL};
    start_work(again);
    WAIT_UNTIL(redis_int("ZCARD %s:dead", ns_) == 1, 40000);
    check_dead_cancelled(__LINE__);
    const char *names[] = {"t", NULL};
    WAIT_UNTIL(settled(names), 5000);
    CHECK(settled(names));
    CHECK_INT(redis_int("EXISTS %s:cwork:cancelled", ns_), 0);
    redisReply *r = tl_cmd(rc_, "GET %s:jobs:t:lock", ns_);
    CHECK(r->type == REDIS_REPLY_STRING && strcmp(r->str, "0") == 0);
    freeReplyObject(r);
    CHECK_INT(stop_work(SIGTERM, 10000), 0);
    CHECK_INT(runs(), 1); /* never run again */
    kill_job_processes();
    cleanup();
}

static void exit_codes_json_and_help(void)
{
    setup("cancel-cli");
    /* 0: a waiting job, with --json */
    snprintf(job_id_, sizeof job_id_, "waiting1");
    redis_int("SADD %s:known_jobs t", ns_);
    redis_int("LPUSH %s:jobs:t {\"name\":\"t\",\"id\":\"waiting1\",\"t\":1,\"args\":{}}", ns_);
    CHECK_INT(cancel_cmd(1), 0);
    CHECK_STR(cli_out_,
              "{\"cancelled\":true,\"id\":\"waiting1\",\"place\":\"queue\",\"pool\":\"\"}\n");
    CHECK_INT(redis_int("LLEN %s:jobs:t", ns_), 0);
    check_dead_cancelled(__LINE__);
    /* 0: a scheduled job, as text */
    snprintf(job_id_, sizeof job_id_, "sched1");
    redis_int("ZADD %s:scheduled 1900000000 {\"name\":\"t\",\"id\":\"sched1\",\"t\":1}", ns_);
    CHECK_INT(cancel_cmd(0), 0);
    CHECK_STR(cli_out_, "cancelled: job sched1 moved from the scheduled set to the dead set\n");
    CHECK_INT(redis_int("ZCARD %s:scheduled", ns_), 0);
    CHECK_INT(redis_int("ZCARD %s:dead", ns_), 2);
    /* 4: no such job */
    snprintf(job_id_, sizeof job_id_, "nosuchjob");
    CHECK_INT(cancel_cmd(0), 4);
    CHECK_STR(cli_err_, "cwork cancel: no job with id nosuchjob\n");
    /* 5: running in a pool that does not listen (a Go pool) */
    snprintf(job_id_, sizeof job_id_, "ingopool");
    redis_int("SADD %s:worker_pools 0123456789abcdef01234567", ns_);
    redis_int("LPUSH %s:jobs:t:0123456789abcdef01234567:inprogress "
              "{\"name\":\"t\",\"id\":\"ingopool\",\"t\":1}",
              ns_);
    CHECK_INT(cancel_cmd(1), 5);
    CHECK_STR(cli_out_, "");
    CHECK(strstr(cli_err_, "cannot be cancelled") != NULL);
    CHECK_INT(redis_int("LLEN %s:jobs:t:0123456789abcdef01234567:inprogress", ns_), 1);
    CHECK_INT(redis_int("EXISTS %s:cwork:cancelled", ns_), 0);
    /* 2: no ID; --help */
    const char *none[] = {"cancel", NULL};
    CHECK_INT(cli_run_in_ns(ns_, NULL, none), 2);
    CHECK(strstr(cli_err_, "no job ID given") != NULL);
    CHECK_INT(CLI_RUN("cancel", "--help"), 0);
    CHECK(strstr(cli_out_, "Usage: cwork cancel") == cli_out_);
    CHECK(strstr(cli_out_, "5 it runs in a pool") != NULL);
    CHECK_INT(CLI_RUN("--help"), 0);
    CHECK(strstr(cli_out_, "  cancel    ") != NULL);
    cleanup();
}

int main(void)
{
    rc_ = tl_redis_connect();
    signal(SIGPIPE, SIG_IGN);
    srand((unsigned)getpid());
    RUN(exit_codes_json_and_help);
    RUN(a_running_sleep_is_cancelled_with_its_whole_tree);
    RUN(a_job_of_a_pool_that_dies_before_it_acts_goes_to_dead_when_reaped);
    redisFree(rc_);
    return tl_finish();
}
