/* Results through the command line, end to end (the binary from $CWORK_CLI against the
 * test Redis): a `cwork work` command's fd 4 becomes its job's result with the job
 * type's TTL, read back by `cwork result` (raw and --json; exit 4 without one) and
 * listed by `cwork succeeded`; a result over the limit fails the run; `cwork result
 * --wait` returns as soon as the job's commit wrote it. The namespace is checked whole. */
#define _GNU_SOURCE
#include "cli_testutil.h"
#include "cli_work_testutil.h"

#include <pthread.h>

#define ID_RES "0000000000000000000000a1"
#define ID_NONE "0000000000000000000000a2"
#define ID_BIG "0000000000000000000000a3"
#define ID_WAIT "0000000000000000000000a4"

static void push(const char *name, const char *id)
{
    redis_int("LPUSH %s:jobs:%s {\"name\":\"%s\",\"id\":\"%s\",\"t\":1,\"args\":{}}", ns_, name,
              name, id);
}

/* A wall-clock time in ms (the command writes its own with date, in another process). */
static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void fd4_result_read_back_and_listed(void)
{
    setup("cli-results");
    push("res", ID_RES);
    push("none", ID_NONE);
    push("big", ID_BIG);
    static const char *const args[] = {
        "--quiet",
        "--job",
        "res=printf 'out of %s\\n\\001' \"$CWORK_JOB_ID\" >&\"$CWORK_RESULT_FD\"",
        "--result-ttl",
        "1h",
        "--keep-succeeded",
        "5",
        "--job",
        "none=true",
        "--job",
        "big=head -c 1048577 /dev/zero >&4",
        "--max-fails",
        "1",
        NULL};
    start_work(args);
    static const char *const names[] = {"res", "none", "big", NULL};
    WAIT_UNTIL(settled(names) && redis_int("ZCARD %s:dead", ns_) == 1 &&
                   redis_int("ZCARD %s:cwork:succeeded:res", ns_) == 1,
               20000);
    CHECK_INT(stop_work(SIGTERM, 20000), 0);
    read_outputs();

    CHECK_INT(cli_run_in_ns(ns_, NULL, (const char *const[]){"result", ID_RES, NULL}), 0);
    CHECK_MEM(cli_out_, strlen(cli_out_), "out of " ID_RES "\n\001", strlen(ID_RES) + 9);
    CHECK_INT(cli_run_in_ns(ns_, NULL, (const char *const[]){"result", "--json", ID_RES, NULL}), 0);
    CHECK_STR(cli_out_, "{\"id\": \"" ID_RES "\", \"result\": \"out of " ID_RES "\\u000a\\u0001\", "
                        "\"result_base64\": \"b3V0IG9mIDAwMDAwMDAwMDAwMDAwMDAwMDAwMDBhMQoB\"}\n");
    CHECK_INT(cli_run_in_ns(ns_, NULL, (const char *const[]){"result", ID_NONE, NULL}), 4);
    CHECK(strstr(cli_err_, "no result for job " ID_NONE) != NULL);
    CHECK_INT(cli_run_in_ns(ns_, NULL, (const char *const[]){"result", NULL}), 2);
    CHECK_INT(
        cli_run_in_ns(ns_, NULL, (const char *const[]){"result", "--wait", "soon", ID_RES, NULL}),
        2);

    /* Listed with its result; the other types keep nothing. */
    CHECK_INT(cli_run_in_ns(ns_, NULL, (const char *const[]){"succeeded", "--json", NULL}), 0);
    CHECK(strstr(cli_out_, "{\"jobs\": [\n  {\"name\": \"res\", \"id\": \"" ID_RES "\", ") ==
          cli_out_);
    CHECK(strstr(cli_out_, "\"result\": \"out of " ID_RES "\\u000a\\u0001\"") != NULL);
    CHECK(strstr(cli_out_, "\"job\": \"{\\\"name\\\":\\\"res\\\",\\\"id\\\":\\\"" ID_RES) != NULL);
    CHECK_INT(cli_lines(cli_out_), 3);
    CHECK_INT(cli_run_in_ns(ns_, NULL, (const char *const[]){"succeeded", "--limit", "0", NULL}),
              2);

    /* The big one failed, saying why, and left no result. */
    char dead[4096];
    zset_members("dead", dead, sizeof dead);
    CHECK(strstr(dead, "\"id\":\"" ID_BIG "\"") != NULL);
    CHECK(strstr(dead, "the result written to fd 4 is over the limit of 1048576 bytes") != NULL);

    /* The whole namespace: the result with the type's TTL, the kept entry, the dead
     * job, and what a stopped pool leaves. */
    redisReply *r = tl_cmd(rc_, "PTTL %s:cwork:result:%s", ns_, ID_RES);
    CHECK(r->integer <= 3600000 && r->integer > 3600000 - 60000);
    freeReplyObject(r);
    tl_do(rc_, "DEL %s:cwork:result:%s %s:cwork:succeeded:res %s:dead", ns_, ID_RES, ns_, ns_);
    tl_take_stat_days(rc_, ns_, 3, 1);
    CHECK_INT(tl_take_failure_histories(rc_, ns_), 1); /* the dead job's (PROTOCOL §26) */
    char want[2048];
    snprintf(want, sizeof want,
             "%s:jobs:big:lock string 0\n"
             "%s:jobs:big:max_concurrency string 0\n"
             "%s:jobs:none:lock string 0\n"
             "%s:jobs:none:max_concurrency string 0\n"
             "%s:jobs:res:lock string 0\n"
             "%s:jobs:res:max_concurrency string 0\n"
             "%s:known_jobs set big | none | res\n",
             ns_, ns_, ns_, ns_, ns_, ns_, ns_);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    cleanup();
}

typedef struct waiter {
    int status;
    long long returned_ms; /* wall clock */
} waiter;

static void *wait_main(void *arg)
{
    waiter *w = arg;
    w->status =
        cli_run_in_ns(ns_, NULL, (const char *const[]){"result", "--wait", "60s", ID_WAIT, NULL});
    w->returned_ms = wall_ms();
    return NULL;
}

static void wait_returns_at_the_commit(void)
{
    setup("cli-results-wait");
    char job[512];
    /* The command ends by writing the time it ends: its commit comes after that. */
    snprintf(job, sizeof job, "slow=sleep 0.2; printf done >&4; date +%%s%%3N > %s/done; exec 4>&-",
             dir_);
    const char *const args[] = {"--quiet", "--job", job, NULL};
    start_work(args);
    waiter w = {-1, 0};
    pthread_t th;
    CHECK_INT(pthread_create(&th, NULL, wait_main, &w), 0);
    push("slow", ID_WAIT);
    pthread_join(th, NULL);
    CHECK_INT(w.status, 0);
    CHECK_STR(cli_out_, "done");
    char done[64];
    read_file("done", done, sizeof done);
    long long latency = w.returned_ms - atoll(done);
    fprintf(stderr, "cwork result --wait returned %lld ms after the command ended\n", latency);
    /* Far under the minute it would wait and the reader's 5 s fallback GET: it returned
     * on the commit's message (a fork and exec of cwork included). */
    CHECK(latency >= 0 && latency < 4000);
    CHECK_INT(stop_work(SIGTERM, 20000), 0);
    tl_do(rc_, "DEL %s:cwork:result:%s", ns_, ID_WAIT);
    tl_take_stat_days(rc_, ns_, 1, 0);
    char want[512];
    snprintf(want, sizeof want,
             "%s:jobs:slow:lock string 0\n"
             "%s:jobs:slow:max_concurrency string 0\n"
             "%s:known_jobs set slow\n",
             ns_, ns_, ns_);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    cleanup();
}

int main(void)
{
    rc_ = tl_redis_connect();
    signal(SIGPIPE, SIG_IGN);
    RUN(fd4_result_read_back_and_listed);
    RUN(wait_returns_at_the_commit);
    redisFree(rc_);
    return tl_finish();
}
