/* Delays beyond 100 years are refused everywhere a delay is taken (library, CLI,
 * --bulk), with nothing written; and members whose score is not whole seconds (written
 * by hand or another client: fractions, past 2^53, ±inf) are listed and can be deleted
 * and retried instead of being hidden. */
#include "client.h"
#include "testlib.h"

#include <fcntl.h>
#include <time.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];

static void check_empty(int line)
{
    char *dump = tl_ns_dump(rc_, ns_);
    if (dump[0]) tl_fail(__FILE__, line, "namespace not empty:\n%s", dump);
    free(dump);
}

/* ---------------------------------------------------------------- pure functions */

static void scores_parse_to_a_listed_at_and_back_to_a_range(void)
{
    static const struct {
        const char *score;
        int ok;
        int64_t at;
        const char *min, *max;
    } cases[] = {
        {"1700000000", 1, 1700000000, "1700000000", "(1700000001"},
        {"-5", 1, -5, "-5", "(-4"},
        {"1.5", 1, 1, "1", "(2"},
        {"-1.5", 1, -2, "-2", "(-1"},
        {"9007199254740993", 1, 9007199254740993LL, "9007199254740993", "9007199254740993"},
        {"1.152921504606847e+18", 1, 1152921504606846976LL, "1152921504606846976",
         "1152921504606846976"},
        {"9.2233720368547758e+18", 1, INT64_MAX, "9223372036854775807", "+inf"},
        {"1e+300", 1, INT64_MAX, "9223372036854775807", "+inf"},
        {"inf", 1, INT64_MAX, "9223372036854775807", "+inf"},
        {"-inf", 1, INT64_MIN, "-inf", "-9223372036854775808"},
        {"-9.2233720368547758e+18", 1, INT64_MIN, "-inf", "-9223372036854775808"},
        {"", 0, 0, NULL, NULL},
        {"nan", 0, 0, NULL, NULL},
        {"1e", 0, 0, NULL, NULL},
        {"1.", 0, 0, NULL, NULL},
        {"--1", 0, 0, NULL, NULL},
        {"12a", 0, 0, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t at = 0;
        int rc = cw_score_parse(cases[i].score, strlen(cases[i].score), &at);
        if ((rc == 0) != cases[i].ok) {
            tl_fail(__FILE__, __LINE__, "\"%s\": parse returned %d", cases[i].score, rc);
            continue;
        }
        if (!cases[i].ok) continue;
        if (at != cases[i].at)
            tl_fail(__FILE__, __LINE__, "\"%s\": at %lld, want %lld", cases[i].score, (long long)at,
                    (long long)cases[i].at);
        char min[24], max[24];
        cw_score_range(at, min, max);
        CHECK_STR(min, cases[i].min);
        CHECK_STR(max, cases[i].max);
    }
}

/* ---------------------------------------------------------------- the library */

static void delays_beyond_a_hundred_years_are_refused_with_nothing_written(void)
{
    tl_unique_ns("delay", ns_, sizeof ns_);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, NULL);
    static const int64_t bad[] = {INT64_MAX, INT64_MIN, CWORK_MAX_DELAY_SECONDS + 1,
                                  -CWORK_MAX_DELAY_SECONDS - 1, 9007199254740992LL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cwork_error err = {0};
        cwork_job *job = (cwork_job *)1;
        CHECK_INT(cwork_enqueue_in(enq, "a", bad[i], NULL, &job, &err), CWORK_EINVAL);
        CHECK(job == NULL);
        CHECK(strstr(err.message, "100 years") != NULL);
        CHECK_INT(cwork_enqueue_unique_in(enq, "a", bad[i], NULL, NULL, NULL), CWORK_EINVAL);
        cwork_batch *b = cwork_batch_new(enq);
        CHECK_INT(cwork_batch_add(b, "a", NULL, bad[i], CWORK_BATCH_IN, NULL), CWORK_EINVAL);
        CHECK_INT(cwork_batch_add(b, "a", NULL, bad[i], CWORK_BATCH_IN | CWORK_BATCH_UNIQUE, NULL),
                  CWORK_EINVAL);
        CHECK_INT(cwork_batch_count(b), 0);
        /* without CWORK_BATCH_IN the delay is ignored, as documented */
        CHECK_INT(cwork_batch_add(b, "a", NULL, bad[i], 0, NULL), 0);
        cwork_batch_free(b);
    }
    check_empty(__LINE__);
    /* The bound itself is accepted, in both directions. */
    cwork_job *far = NULL;
    CHECK_INT(cwork_enqueue_in(enq, "a", CWORK_MAX_DELAY_SECONDS, NULL, &far, NULL), 0);
    CHECK_INT(cwork_job_run_at(far), cwork_job_enqueued_at(far) + CWORK_MAX_DELAY_SECONDS);
    cwork_job_free(far);
    CHECK_INT(cwork_enqueue_in(enq, "a", -CWORK_MAX_DELAY_SECONDS, NULL, NULL, NULL), 0);
    redisReply *r = tl_cmd(rc_, "ZCARD %s:scheduled", ns_);
    CHECK_INT(r->integer, 2);
    freeReplyObject(r);
    cwork_enqueuer_free(enq);
    tl_ns_delete(rc_, ns_);
}

/* A retry's delay from a backoff function, or from Go's default with absurd fails, is
 * kept within the bound: now + INT64_MAX overflowed (UBSan) and made the retry due at
 * once; fails⁴ overflowed past 55108 fails. */
static int64_t huge_backoff(const cwork_job *job, void *ud)
{
    (void)job, (void)ud;
    return INT64_MAX;
}

static int failing(cwork_job *job, void *ctx)
{
    (void)ctx;
    return cwork_job_fail(job, "no");
}

static void retry_delays_are_kept_within_the_bound(void)
{
    tl_unique_ns("backoff", ns_, sizeof ns_);
    cwork_pool_options po;
    cwork_pool_options_init(&po);
    po.concurrency = 2;
    cwork_pool *p = cwork_pool_new(redis_, ns_, &po, NULL);
    cwork_job_options a, b;
    cwork_job_options_init(&a);
    a.backoff = huge_backoff;
    cwork_job_options_init(&b);
    b.max_fails = 1000000000;
    CHECK_INT(cwork_pool_register(p, "a", failing, &a, NULL), 0);
    CHECK_INT(cwork_pool_register(p, "b", failing, &b, NULL), 0);
    tl_do(rc_, "LPUSH %s:jobs:a {\"name\":\"a\",\"id\":\"x\",\"t\":1,\"args\":null}", ns_);
    tl_do(rc_,
          "LPUSH %s:jobs:b {\"name\":\"b\",\"id\":\"y\",\"t\":1,\"args\":null,"
          "\"fails\":100000000}",
          ns_);
    long long t0 = (long long)time(NULL);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    long long n = 0;
    for (long long w = tl_now_ms(); n < 2 && tl_now_ms() - w < 10000; tl_sleep_ms(20)) {
        redisReply *r = tl_cmd(rc_, "ZCARD %s:retry", ns_);
        n = r->integer;
        freeReplyObject(r);
    }
    CHECK_INT(n, 2);
    cwork_pool_stop(p, 10000, NULL);
    cwork_pool_free(p);
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:retry 0 -1 WITHSCORES", ns_);
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        long long score = atoll(r->element[i + 1]->str);
        CHECK(score >= t0 + CWORK_MAX_DELAY_SECONDS && score <= t0 + CWORK_MAX_DELAY_SECONDS + 5);
    }
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- the command line */

static int run_cli(const char *stdin_text, const char *const *args, char *errout, size_t size)
{
    const char *cli = getenv("CWORK_CLI");
    if (!cli) {
        fprintf(stderr, "CWORK_CLI is not set (ctest sets it)\n");
        exit(1);
    }
    char in_path[] = "/tmp/cwt-delay-in-XXXXXX", err_path[] = "/tmp/cwt-delay-err-XXXXXX";
    int in = mkstemp(in_path), er = mkstemp(err_path);
    if (stdin_text && write(in, stdin_text, strlen(stdin_text)) < 0) abort();
    lseek(in, 0, SEEK_SET);
    const char *argv[16] = {cli};
    size_t n = 1;
    for (; args[n - 1] && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int out = open("/dev/null", O_WRONLY);
        dup2(in, 0), dup2(out, 1), dup2(er, 2);
        execv(cli, (char *const *)argv);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    lseek(er, 0, SEEK_SET);
    ssize_t k = read(er, errout, size - 1);
    errout[k > 0 ? k : 0] = '\0';
    close(in), close(er);
    unlink(in_path), unlink(err_path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* `--in 9223372036854775807` overflowed (UBSan) and ran the job at once. */
static void the_command_line_refuses_huge_delays_with_exit_2(void)
{
    tl_unique_ns("delaycli", ns_, sizeof ns_);
    char errout[4096];
    static const char *const ins[] = {"9223372036854775807", "-9223372036854775808", "3155760001",
                                      "99999999999999999999"};
    for (size_t i = 0; i < sizeof ins / sizeof ins[0]; i++) {
        const char *args[] = {"enqueue", "--redis", tl_redis_url(), "--ns", ns_, "--in", ins[i],
                              "a",       NULL};
        CHECK_INT(run_cli(NULL, args, errout, sizeof errout), 2);
        CHECK(errout[0] != '\0');
        const char *uniq[] = {"enqueue",  "--redis", tl_redis_url(), "--ns", ns_,
                              "--unique", "--in",    ins[i],         "a",    NULL};
        CHECK_INT(run_cli(NULL, uniq, errout, sizeof errout), 2);
    }
    const char *bulk[] = {"enqueue", "--redis", tl_redis_url(), "--ns", ns_, "--bulk", NULL};
    CHECK_INT(run_cli("{\"name\":\"a\"}\n{\"name\":\"a\",\"in\":100000000000000}\n", bulk, errout,
                      sizeof errout),
              2);
    CHECK(strstr(errout, "line 2:") != NULL && strstr(errout, "100 years") != NULL);
    CHECK_INT(run_cli("{\"name\":\"a\",\"in\":9.3e18}\n", bulk, errout, sizeof errout), 2);
    check_empty(__LINE__);
}

/* ---------------------------------------------------------------- lists */

static void members_with_odd_scores_are_listed_and_addressable(void)
{
    tl_unique_ns("odd", ns_, sizeof ns_);
    cwork_client *cl = cwork_client_new(redis_, ns_, NULL);
    static const char *const scores[] = {"1.5",   "1152921504606846976", "1e19", "+inf", "-inf",
                                         "-2.25", "1700000000"};
    size_t n = sizeof scores / sizeof scores[0];
    for (size_t i = 0; i < n; i++) {
        tl_do(rc_, "ZADD %s:scheduled %s {\"name\":\"s\",\"id\":\"s%d\",\"t\":1,\"args\":null}",
              ns_, scores[i], (int)i);
        tl_do(rc_, "ZADD %s:dead %s {\"name\":\"d\",\"id\":\"d%d\",\"t\":1,\"args\":null}", ns_,
              scores[i], (int)i);
    }
    tl_do(rc_, "SADD %s:known_jobs d", ns_);
    cwork_listed_job *jobs = NULL;
    size_t got = 0;
    int64_t total = 0;
    CHECK_INT(cwork_client_list(cl, CWORK_SET_SCHEDULED, 1, NULL, &jobs, &got, &total, NULL), 0);
    CHECK_INT(got, n);
    CHECK_INT(total, n);
    /* Each is addressable by the (at, id) the list gave: delete them all. */
    for (size_t i = 0; i < got; i++)
        CHECK_INT(cwork_client_delete(cl, CWORK_SET_SCHEDULED, jobs[i].at,
                                      cwork_job_id(jobs[i].job), NULL),
                  0);
    cwork_listed_jobs_free(jobs, got);
    redisReply *r = tl_cmd(rc_, "EXISTS %s:scheduled", ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    /* The name filter's scan lists them too; retry each dead one by its (at, id). */
    CHECK_INT(cwork_client_list(cl, CWORK_SET_DEAD, 1, "d", &jobs, &got, &total, NULL), 0);
    CHECK_INT(got, n);
    for (size_t i = 0; i < got; i++)
        CHECK_INT(cwork_client_retry_dead(cl, jobs[i].at, cwork_job_id(jobs[i].job), NULL), 0);
    cwork_listed_jobs_free(jobs, got);
    r = tl_cmd(rc_, "LLEN %s:jobs:d", ns_);
    CHECK_INT(r->integer, n);
    freeReplyObject(r);
    r = tl_cmd(rc_, "EXISTS %s:dead", ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    cwork_client_free(cl);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    RUN(scores_parse_to_a_listed_at_and_back_to_a_range);
    RUN(delays_beyond_a_hundred_years_are_refused_with_nothing_written);
    RUN(retry_delays_are_kept_within_the_bound);
    RUN(the_command_line_refuses_huge_delays_with_exit_2);
    RUN(members_with_odd_scores_are_listed_and_addressable);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
