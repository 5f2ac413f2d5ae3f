/* A real crash: a `cwork work` process is killed with SIGKILL while its job runs; a
 * second process finds the dead pool by its stale heartbeat, puts the job back and runs
 * it — within 30 s of the crash (Go's fork: up to 5.5 min) — and afterwards the lock
 * and lock_info are consistent and nothing of the dead pool is left. */
#include "testlib.h"

#include <signal.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char ns_[64];

static pid_t start_worker(const char *command)
{
    char job[256];
    snprintf(job, sizeof job, "slow=%s", command);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execl(getenv("CWORK_CLI"), "cwork", "work", "--redis", tl_redis_url(), "--ns", ns_,
              "--concurrency", "2", "--no-progress", "--job", job, (char *)NULL);
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

static void killed_pool_job_is_recovered_within_30s(void)
{
    tl_unique_ns("crash", ns_, sizeof ns_);
    char marker[128];
    snprintf(marker, sizeof marker, "/tmp/cwt-crash-%s", ns_);
    unlink(marker);
    redisContext *c = tl_redis_connect();
    freeReplyObject(tl_cmd(c, "LPUSH %s:jobs:slow %s", ns_,
                           "{\"name\":\"slow\",\"id\":\"crashme\",\"t\":1,\"args\":null}"));
    pid_t a = start_worker("sleep 60");
    /* Wait until A holds the job in its in-progress list. */
    for (int i = 0; i < 1000 && count_keys(c, "jobs:slow:*:inprogress") == 0; i++)
        tl_sleep_ms(10);
    CHECK_INT(count_keys(c, "jobs:slow:*:inprogress"), 1);
    kill(a, SIGKILL);
    waitpid(a, NULL, 0);
    long long crashed_at = tl_now_ms();

    char cmd[256];
    snprintf(cmd, sizeof cmd, "touch %s", marker);
    pid_t b = start_worker(cmd);
    struct stat st;
    while (stat(marker, &st) != 0 && tl_now_ms() - crashed_at < 60000)
        tl_sleep_ms(50);
    long long took = tl_now_ms() - crashed_at;
    printf("  recovered and ran %lld ms after the crash\n", took);
    CHECK(stat(marker, &st) == 0);
    CHECK(took < 30000);

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

int main(void)
{
    if (!getenv("CWORK_CLI")) {
        fprintf(stderr, "CWORK_CLI is not set (ctest sets it)\n");
        return 1;
    }
    RUN(killed_pool_job_is_recovered_within_30s);
    return tl_finish();
}
