/* No process of a `cwork work` job outlives its job or its pool (issue 9): commands
 * whose trees fork, go to the background, leave their process group (setsid), get
 * handed to init (double fork) and ignore SIGTERM, under a SIGKILL of `cwork work`,
 * a --timeout, and a command that ends leaving background processes behind.
 *
 * A job's processes are found by their environment (CWORK_JOB_ID=<this case's id>,
 * which every process of the tree inherits), whatever their parent or group. Each
 * process would touch a file a few seconds later: the case checks that none remains
 * within a bound and that no file ever appears. */
#define _GNU_SOURCE
#include "cli_work_testutil.h"

#include <dirent.h>

#define LATER_S 6 /* every process of a job touches its file this much later */

static char job_id_[25];

static int job_processes(int *sleeps, pid_t *pids, int max)
{
    return job_tree_processes(job_id_, sleeps, pids, max);
}

static void kill_job_processes(void)
{
    kill_job_tree(job_id_);
}

/* A job of name "t" with a fresh id, and its command "t=<body>" (static). */
static const char *tree_job(const char *body)
{
    static char cmd[2048];
    snprintf(job_id_, sizeof job_id_, "%08x%08x%08x", (unsigned)getpid(), (unsigned)now_ms(),
             (unsigned)rand());
    redis_int("LPUSH %s:jobs:t {\"name\":\"t\",\"id\":\"%s\",\"t\":1,\"args\":{}}", ns_, job_id_);
    snprintf(cmd, sizeof cmd, "t=%s", body);
    return cmd;
}

/* Waits until the job's tree has `sleeps` sleeps running; its start time. */
static int64_t wait_tree(int sleeps)
{
    int s = 0;
    WAIT_UNTIL((job_processes(&s, NULL, 0), s >= sleeps), 15000);
    CHECK_INT(s, sleeps);
    return now_ms();
}

/* Whether every file R<c> for c in which ("023": R0, R2, R3) exists. */
static int all_ready(const char *which)
{
    for (const char *w = which; *w; w++) {
        char name[8];
        snprintf(name, sizeof name, "R%c", *w);
        if (!file_exists(name)) return 0;
    }
    return 1;
}

/* Waits until the tree's processes have touched their files R<c> (which, as for
 * all_ready): they do so after setting their traps, before their sleeps, so that their
 * start is seen even when they are gone already (a tree under a --timeout is killed a
 * moment after it starts: a /proc scan, slow under load, may never catch it whole).
 * Its time. */
static int64_t wait_ready(const char *which)
{
    WAIT_UNTIL(all_ready(which), 15000);
    CHECK(all_ready(which));
    return now_ms();
}

/* After `what` happened at t0: no process of the job within bound_ms, and (waiting
 * past the moment they would have written) none of the files F0..F3. */
static void check_tree_gone(const char *what, int64_t t0, int64_t started, int bound_ms)
{
    int n = -1;
    WAIT_UNTIL((n = job_processes(NULL, NULL, 0)) == 0, 10000);
    int64_t took = now_ms() - t0;
    printf("  %s: every process of the job gone %lld ms later\n", what, (long long)took);
    CHECK_INT(n, 0);
    CHECK(took <= bound_ms);
    kill_job_processes(); /* (only after a failure is there any) */
    int64_t until = started + LATER_S * 1000 + 1500;
    while (now_ms() < until)
        usleep(50000);
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof name, "F%d", i);
        if (file_exists(name)) tl_fail(__FILE__, __LINE__, "%s appeared: a process survived", name);
    }
}

/* A case's end: whatever it left is killed (a failed case must not touch files later). */
static void finish(void)
{
    kill_job_processes();
    cleanup();
}

/* ---------------------------------------------------------------- cases */

/* The case: `sh -c 'sleep; touch F'` (dash forks the sleep) and SIGKILL. */
static void sigkill_of_cwork_kills_a_forking_shell(void)
{
    setup("tree-kill");
    char body[512];
    snprintf(body, sizeof body, "sh -c 'sleep %d; touch %s/F0'", LATER_S, dir_);
    const char *args[] = {"--job", tree_job(body), NULL};
    start_work(args);
    int64_t started = wait_tree(1);
    CHECK_INT(stop_work(SIGKILL, 5000), 128 + SIGKILL);
    check_tree_gone("SIGKILL of cwork work", now_ms(), started, 2000);
    finish();
}

/* Processes that left the command's process group or session, one handed to init by
 * a double fork, one that ignores SIGTERM and SIGHUP. */
static void sigkill_of_cwork_kills_processes_that_left_the_group(void)
{
    setup("tree-kill2");
    char body[1024];
    snprintf(body, sizeof body,
             "sh -c 'sleep %d; touch %s/F1' & "
             "setsid sh -c 'trap \"\" TERM HUP; sleep %d; touch %s/F2' & "
             "(sh -c 'sleep %d; touch %s/F3' &); "
             "sleep %d; touch %s/F0",
             LATER_S, dir_, LATER_S, dir_, LATER_S, dir_, LATER_S, dir_);
    const char *args[] = {"--job", tree_job(body), NULL};
    start_work(args);
    int64_t started = wait_tree(4);
    CHECK_INT(stop_work(SIGKILL, 5000), 128 + SIGKILL);
    check_tree_gone("SIGKILL of cwork work", now_ms(), started, 2000);
    finish();
}

/* --timeout: SIGTERM to the whole tree, then SIGKILL to what ignored it, wherever it
 * went; the job fails as timed out and cwork goes on. */
static void timeout_kills_the_whole_tree(void)
{
    setup("tree-timeout");
    char body[1024];
    snprintf(body, sizeof body,
             "setsid sh -c 'trap \"\" TERM; touch %s/R2; sleep %d; touch %s/F2' & "
             "(trap '' TERM; sh -c 'touch %s/R3; sleep %d; touch %s/F3' &); "
             "touch %s/R0; sleep %d; touch %s/F0",
             dir_, LATER_S, dir_, dir_, LATER_S, dir_, dir_, LATER_S, dir_);
    const char *args[] = {"--job", tree_job(body), "--timeout", "1", "--kill-grace",
                          "1",     "--max-fails",  "1",         NULL};
    start_work(args);
    int64_t started = wait_ready("023");
    WAIT_UNTIL(redis_int("ZCARD %s:dead", ns_) == 1, 10000);
    char dead[1024];
    zset_members("dead", dead, sizeof dead);
    CHECK(strstr(dead, "\"err\":\"timed out after 1 s\"") != NULL);
    /* The timeout (1 s) and the kill grace (1 s) from the start, and a margin. */
    check_tree_gone("--timeout 1 --kill-grace 1", started, started, 4500);
    CHECK_INT(stop_work(SIGTERM, 10000), 0);
    finish();
}

/* A command that ends leaving a background process: the job is done, and so is the
 * process (it would otherwise outlive the job, and the pool). */
static void leftovers_die_with_their_command(void)
{
    setup("tree-left");
    char body[512];
    snprintf(body, sizeof body, "sh -c 'sleep %d; touch %s/F0' & sleep 0.5; echo started", LATER_S,
             dir_);
    const char *args[] = {"--job", tree_job(body), NULL};
    start_work(args);
    int64_t started = now_ms();
    const char *names[] = {"t", NULL};
    WAIT_UNTIL(settled(names) && (read_outputs(), strstr(out_, "started")), 10000);
    CHECK(settled(names));
    check_tree_gone("the command's end", now_ms(), started, 2000);
    CHECK_INT(redis_int("ZCARD %s:retry", ns_) + redis_int("ZCARD %s:dead", ns_), 0);
    CHECK_INT(stop_work(SIGTERM, 10000), 0);
    finish();
}

int main(void)
{
    rc_ = tl_redis_connect();
    signal(SIGPIPE, SIG_IGN);
    srand((unsigned)getpid());
    RUN(sigkill_of_cwork_kills_a_forking_shell);
    RUN(sigkill_of_cwork_kills_processes_that_left_the_group);
    RUN(timeout_kills_the_whole_tree);
    RUN(leftovers_die_with_their_command);
    redisFree(rc_);
    return tl_finish();
}
