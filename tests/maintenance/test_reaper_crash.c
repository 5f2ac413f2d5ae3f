/* Real crashes: a `cwork work` process is killed with SIGKILL while its job runs; a
 * second process finds the dead pool by its stale heartbeat, puts the job back and runs
 * it, and afterwards the lock and lock_info are consistent and nothing of the dead pool
 * is left. And the same when the pool is killed in the middle of a reaper cycle,
 * holding the reaper lock (issue 14: a lock held for the whole reap period stalled
 * recovery 5 min).
 *
 * The bound on the job's return (A's in-progress list empty) follows from the periods:
 * A's heartbeat (whole seconds) is stale CW_REAPER_DEAD_TIME + 1 s after the kill at
 * the latest; B looks for stale heartbeats every --dead-check seconds and then runs a
 * cycle. The bound allows RECOVERY_CHECKS checks for that (a check and a cycle late
 * under load): far below the reap period (Go's fork: up to 5.5 min). That the job then
 * runs again is waited for without a bound of its own: it is a fetch and a command
 * start, no period of the reaper's. */
#include "reaper.h"
#include "testlib.h"

#include <signal.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char ns_[64];

#define RECOVERY_CHECKS 4

/* The latest time (ms after the kill) by which a pool checking every check_s seconds
 * has put a killed pool's jobs back. */
static long long recovery_bound_ms(int check_s)
{
    return (CW_REAPER_DEAD_TIME + 1) * 1000LL + RECOVERY_CHECKS * check_s * 1000LL;
}

static pid_t start_worker(const char *command, const char *dead_check)
{
    char job[256];
    snprintf(job, sizeof job, "slow=%s", command);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        const char *cli = getenv("CWORK_CLI");
        if (!cli) _exit(127);
        execl(cli, "cwork", "work", "--redis", tl_redis_url(), "--ns", ns_, "--concurrency", "2",
              "--no-progress", "--dead-check", dead_check, "--job", job, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static long long count_keys(redisContext *c, const char *pattern_suffix)
{
    redisReply *r = tl_cmd(c, "KEYS %s:%s", ns_, pattern_suffix);
    long long n = (long long)r->elements;
    freeReplyObject(r);
    return n;
}

/* The key of the one in-progress list of job "slow" (the pool that holds the job), or
 * "" when there is not exactly one. */
static void inprogress_key(redisContext *c, char *key, size_t size)
{
    redisReply *r = tl_cmd(c, "KEYS %s:jobs:slow:*:inprogress", ns_);
    snprintf(key, size, "%s", r->elements == 1 ? r->element[0]->str : "");
    freeReplyObject(r);
}

/* Waits up to ms (from since_ms) until the key (the killed pool's in-progress list) is
 * gone: the time it took from since_ms, or -1. */
static long long wait_requeued(redisContext *c, const char *key, long long since_ms, long long ms)
{
    long long exists = 1;
    for (;;) {
        redisReply *r = tl_cmd(c, "EXISTS %s", key);
        exists = r->integer;
        freeReplyObject(r);
        if (!exists || tl_now_ms() - since_ms >= ms) break;
        tl_sleep_ms(20);
    }
    return exists ? -1 : tl_now_ms() - since_ms;
}

/* Waits up to ms for the marker file; the time it took from since_ms, or -1. */
static long long wait_marker(const char *marker, long long since_ms, long long ms)
{
    struct stat st;
    while (stat(marker, &st) != 0 && tl_now_ms() - since_ms < ms)
        tl_sleep_ms(20);
    return stat(marker, &st) == 0 ? tl_now_ms() - since_ms : -1;
}

static void killed_pool_job_is_recovered(void)
{
    tl_unique_ns("crash", ns_, sizeof ns_);
    char marker[128];
    snprintf(marker, sizeof marker, "/tmp/cwt-crash-%s", ns_);
    unlink(marker);
    redisContext *c = tl_redis_connect();
    freeReplyObject(tl_cmd(c, "LPUSH %s:jobs:slow %s", ns_,
                           "{\"name\":\"slow\",\"id\":\"crashme\",\"t\":1,\"args\":null}"));
    pid_t a = start_worker("sleep 60", "5");
    /* Wait until A holds the job in its in-progress list. */
    for (int i = 0; i < 1000 && count_keys(c, "jobs:slow:*:inprogress") == 0; i++)
        tl_sleep_ms(10);
    CHECK_INT(count_keys(c, "jobs:slow:*:inprogress"), 1);
    char a_list[160];
    inprogress_key(c, a_list, sizeof a_list);
    kill(a, SIGKILL);
    waitpid(a, NULL, 0);
    long long crashed_at = tl_now_ms();

    char cmd[256];
    snprintf(cmd, sizeof cmd, "touch %s", marker);
    pid_t b = start_worker(cmd, "5");
    long long bound = recovery_bound_ms(5);
    long long back = wait_requeued(c, a_list, crashed_at, 2 * bound);
    long long ran = wait_marker(marker, crashed_at, 2 * bound + 30000);
    printf("  back in the queue %lld ms after the crash (bound %lld), ran after %lld ms\n", back,
           bound, ran);
    CHECK(back >= 0 && back <= bound);
    CHECK(ran >= 0);

    kill(b, SIGTERM);
    int status = 0;
    waitpid(b, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* Consistent afterwards: lock 0, no lock_info field, no pool, nothing in progress. */
    redisReply *r = tl_cmd(c, "GET %s:jobs:slow:lock", ns_);
    CHECK(r->type == REDIS_REPLY_STRING && strcmp(r->str, "0") == 0);
    freeReplyObject(r);
    r = tl_cmd(c, "EXISTS %s:jobs:slow:lock_info %s:worker_pools %s:jobs:slow", ns_, ns_, ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    CHECK_INT(count_keys(c, "jobs:slow:*:inprogress"), 0);
    CHECK_INT(count_keys(c, "worker_pools:*"), 0);
    unlink(marker);
    tl_ns_delete(c, ns_);
    redisFree(c);
}

#define GHOSTS 1500
#define GHOSTS_KEPT 10

/* Adds stale pools ghost<from>..ghost<to - 1> (with nothing to give back), or removes
 * them. */
static void ghosts(redisContext *c, int from, int to, int add)
{
    long long stale = (long long)time(NULL) - 60;
    for (int i = from; i < to; i++) {
        if (add) {
            redisAppendCommand(c, "SADD %s:worker_pools ghost%019d", ns_, i);
            redisAppendCommand(c,
                               "HSET %s:worker_pools:ghost%019d heartbeat_at %lld job_names slow",
                               ns_, i, stale);
        } else {
            redisAppendCommand(c, "SREM %s:worker_pools ghost%019d", ns_, i);
            redisAppendCommand(c, "DEL %s:worker_pools:ghost%019d", ns_, i);
        }
    }
    for (int i = 0; i < 2 * (to - from); i++) {
        redisReply *r = NULL;
        if (redisGetReply(c, (void **)&r) != REDIS_OK || !r || r->type == REDIS_REPLY_ERROR)
            tl_fail(__FILE__, __LINE__, "ghost set-up failed");
        if (r) freeReplyObject(r);
    }
}

static long long int_reply(redisContext *c, const char *fmt, const char *arg)
{
    redisReply *r = tl_cmd(c, fmt, arg);
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    freeReplyObject(r);
    return v;
}

/* Pool A runs a job and, as the reaper of the moment, a long cycle (GHOSTS stale pools
 * with nothing to give back); it is frozen the moment the lock is seen and, if the
 * cycle is still going (lock held, ghosts left), killed: it dies holding the reaper
 * lock. (A freeze, not a kill a moment later: under load the test may be descheduled
 * for the rest of the cycle. If the cycle ended meanwhile, A goes on, the ghosts come
 * back, and its next check starts another cycle.) Pool B must still get A's job back
 * within the bound. The ghosts are a device to catch a cycle: all but a few go once
 * A is dead, so that B's cycles are short whatever the load; the few left make B find
 * stale pools, and A's lock in its way, from its first check. */
static void killed_reaper_lock_holder_stalls_no_recovery(void)
{
    tl_unique_ns("lockkill", ns_, sizeof ns_);
    char marker[128];
    snprintf(marker, sizeof marker, "/tmp/cwt-lockkill-%s", ns_);
    unlink(marker);
    redisContext *c = tl_redis_connect();
    ghosts(c, 0, GHOSTS, 1);
    freeReplyObject(tl_cmd(c, "LPUSH %s:jobs:slow %s", ns_,
                           "{\"name\":\"slow\",\"id\":\"lockkill\",\"t\":1,\"args\":null}"));
    pid_t a = start_worker("sleep 60", "1");
    /* A takes the job, then (its first check, 1 s) the lock for a cycle. */
    for (long long t0 = tl_now_ms();
         count_keys(c, "jobs:slow:*:inprogress") == 0 && tl_now_ms() - t0 < 30000;)
        tl_sleep_ms(10);
    CHECK_INT(count_keys(c, "jobs:slow:*:inprogress"), 1);
    char a_list[160];
    inprogress_key(c, a_list, sizeof a_list);
    int caught = 0;
    long long stopped_at = 0;
    for (int attempt = 0; attempt < 5 && !caught; attempt++) {
        if (attempt) ghosts(c, 0, GHOSTS, 1);
        int locked = 0;
        for (long long t0 = tl_now_ms(); !locked && tl_now_ms() - t0 < 30000;) {
            locked = int_reply(c, "EXISTS %s:reaper_lock", ns_) == 1;
            if (!locked) usleep(500);
        }
        if (!locked) break;
        kill(a, SIGSTOP);
        stopped_at = tl_now_ms();
        caught = int_reply(c, "EXISTS %s:reaper_lock", ns_) == 1 &&
                 int_reply(c, "SCARD %s:worker_pools", ns_) > 1;
        if (!caught) kill(a, SIGCONT);
    }
    kill(a, SIGKILL);
    waitpid(a, NULL, 0);
    CHECK(caught);
    CHECK_INT(count_keys(c, "jobs:slow:*:inprogress"), 1);
    redisReply *r = tl_cmd(c, "GET %s:reaper_lock", ns_);
    CHECK(r->type == REDIS_REPLY_STRING); /* left behind by the killed cycle */
    printf("  killed holding the lock %s\n", r->type == REDIS_REPLY_STRING ? r->str : "(none)");
    freeReplyObject(r);
    r = tl_cmd(c, "SCARD %s:worker_pools", ns_);
    printf("  %lld of %d stale pools not reaped yet\n", r->integer - 1, GHOSTS);
    freeReplyObject(r);
    ghosts(c, GHOSTS_KEPT, GHOSTS, 0);

    char cmd[256];
    snprintf(cmd, sizeof cmd, "touch %s", marker);
    pid_t b = start_worker(cmd, "1");
    long long bound = recovery_bound_ms(1);
    long long back = wait_requeued(c, a_list, stopped_at, 2 * bound);
    long long ran = wait_marker(marker, stopped_at, 2 * bound + 30000);
    printf("  the killed pool's job back in the queue %lld ms after it stopped (bound %lld), ran "
           "after %lld ms\n",
           back, bound, ran);
    CHECK(back >= 0 && back <= bound);
    CHECK(ran >= 0);
    kill(b, SIGTERM);
    int status = 0;
    waitpid(b, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* Everything reaped: no pool, nothing in progress, the lock released, counters 0.
     * (A's worker observation stays for its 24 h TTL, as a Go worker's would.) */
    r = tl_cmd(c, "KEYS %s:worker:*", ns_);
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 1);
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        redisReply *w = tl_cmd(c, "HGET %s job_id", r->element[i]->str);
        CHECK(w->type == REDIS_REPLY_STRING && strcmp(w->str, "lockkill") == 0);
        freeReplyObject(w);
        freeReplyObject(tl_cmd(c, "DEL %s", r->element[i]->str));
    }
    freeReplyObject(r);
    /* The day's statistics: the one run that finished, B's. */
    tl_take_stat_days(c, ns_, 1, 0);
    char *dump = tl_ns_dump(c, ns_);
    char want[512];
    snprintf(want, sizeof want,
             "%s:jobs:slow:lock string 0\n"
             "%s:jobs:slow:max_concurrency string 0\n"
             "%s:known_jobs set slow\n",
             ns_, ns_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    unlink(marker);
    tl_ns_delete(c, ns_);
    redisFree(c);
}

int main(void)
{
    if (!getenv("CWORK_CLI")) {
        fprintf(stderr, "CWORK_CLI is not set (ctest sets it)\n");
        return 1;
    }
    RUN(killed_pool_job_is_recovered);
    RUN(killed_reaper_lock_holder_stalls_no_recovery);
    return tl_finish();
}
