/* cwork_job_fail_no_retry against a real Redis: the job goes to dead at once whatever
 * its retries left (or is dropped under skip_dead, in both meanings), with Go's bytes
 * and the whole namespace checked; a later cwork_job_fail keeps the mark; a plain
 * failure of the same pool still retries; outside a pool nothing happens. */
#include "pool_testutil.h"

#include <stdatomic.h>

#define JOB(id, fails)                                                                             \
    "{\"name\":\"import\",\"id\":\"" id "\",\"t\":1700000000,\"args\":{\"file\":\"a.csv\"}" fails  \
    "}"

static atomic_int runs_;

/* Fails without retry, or plainly for the job whose id ends in "retry". */
static int handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&runs_, 1);
    const char *id = cwork_job_id(job);
    size_t n = strlen(id);
    if (n >= 5 && strcmp(id + n - 5, "retry") == 0) return cwork_job_fail(job, "try again");
    int rc = cwork_job_fail_no_retry(job, "bad input: %s", cwork_job_arg_string(job, "file"));
    if (n >= 5 && strcmp(id + n - 5, "later") == 0)
        rc = cwork_job_fail(job, "bad input, said twice"); /* the message changes, not the mark */
    return rc;
}

/* Runs the pool until it has counted n jobs as finished, then stops it. (Not
 * cwork_pool_drain: it can return while a fetched job is on its way from Redis to an
 * executor — the queue empty, nothing in flight yet — and the stop then flushes the
 * daily stats before that job is counted.) */
static void run_until_counted(cwork_pool *p, uint64_t n)
{
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    cwork_pool_stats st = {0};
    for (long long end = tl_now_ms() + 10000; tl_now_ms() < end; tl_sleep_ms(10)) {
        cwork_pool_get_stats(p, &st);
        if (st.succeeded + st.failed >= n) break;
    }
    CHECK_INT(st.succeeded + st.failed, n);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
}

/* Every key but the pool's bookkeeping: the dead set, member by member with its score. */
static char *dead_and_retry(void)
{
    size_t cap = 8192, len = 0;
    char *out = calloc(1, cap);
    const char *sets[] = {"dead", "retry"};
    for (int s = 0; s < 2; s++) {
        redisReply *r = tl_cmd(rc_, "ZRANGE %s:%s 0 -1 WITHSCORES", ns_, sets[s]);
        for (size_t i = 0; i + 1 < r->elements; i += 2) {
            cwork_job *j = NULL;
            CHECK_INT(cwork_job_decode(r->element[i]->str, r->element[i]->len, &j, NULL), 0);
            long long score = atoll(r->element[i + 1]->str);
            long long fa = j ? cwork_job_failed_at(j) : 0;
            /* dead: died now; retry: later (Go's backoff) */
            const char *when = score == fa ? "now" : score > fa ? "later" : "earlier";
            len += (size_t)snprintf(out + len, cap - len, "%s %s %s\n", sets[s], r->element[i]->str,
                                    when);
            CHECK(llabs(fa - (long long)time(NULL)) <= 5);
            cwork_job_free(j);
        }
        freeReplyObject(r);
    }
    return out;
}

static void failed_at(char *buf, size_t size, const char *which, const char *id)
{
    /* The member's failed_at, to write the expected bytes. */
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:%s 0 -1", ns_, which);
    buf[0] = '\0';
    for (size_t i = 0; i < r->elements; i++) {
        cwork_job *j = NULL;
        if (cwork_job_decode(r->element[i]->str, r->element[i]->len, &j, NULL) == 0 &&
            strcmp(cwork_job_id(j), id) == 0)
            snprintf(buf, size, "%lld", (long long)cwork_job_failed_at(j));
        cwork_job_free(j);
    }
    freeReplyObject(r);
}

static void goes_to_dead_at_once_with_retries_left(void)
{
    cwork_pool *p = new_pool("noretry", 2);
    atomic_store(&runs_, 0);
    cwork_job_options jo;
    cwork_job_options_init(&jo); /* max_fails 4: three retries left */
    CHECK_INT(cwork_pool_register(p, "import", handler, &jo, NULL), 0);
    push_raw("import", JOB("j1", ""));
    push_raw("import", JOB("j2later", ",\"fails\":1,\"err\":\"old\",\"failed_at\":1700000001"));
    push_raw("import", JOB("j3retry", ""));
    run_until_counted(p, 3);
    CHECK_INT(atomic_load(&runs_), 3);
    cwork_pool_stats st;
    cwork_pool_get_stats(p, &st);
    CHECK_INT(st.failed, 3);
    CHECK_INT(st.dead, 2);
    CHECK_INT(st.retried, 1);

    char fa1[32], fa2[32], fa3[32], want[2048];
    failed_at(fa1, sizeof fa1, "dead", "j1");
    failed_at(fa2, sizeof fa2, "dead", "j2later");
    failed_at(fa3, sizeof fa3, "retry", "j3retry");
    char *got = dead_and_retry();
    /* dead is ordered by score, then bytes: both died in the same second or one apart. */
    char d1[512], d2[512];
    snprintf(d1, sizeof d1,
             "dead {\"name\":\"import\",\"id\":\"j1\",\"t\":1700000000,\"args\":{\"file\":"
             "\"a.csv\"},\"fails\":1,\"err\":\"bad input: a.csv\",\"failed_at\":%s} now\n",
             fa1);
    snprintf(d2, sizeof d2,
             "dead {\"name\":\"import\",\"id\":\"j2later\",\"t\":1700000000,\"args\":{\"file\":"
             "\"a.csv\"},\"fails\":2,\"err\":\"bad input, said twice\",\"failed_at\":%s} now\n",
             fa2);
    int d1_first = strcmp(fa1, fa2) < 0 || (strcmp(fa1, fa2) == 0 && strcmp(d1, d2) < 0);
    snprintf(want, sizeof want,
             "%s%sretry {\"name\":\"import\",\"id\":\"j3retry\",\"t\":1700000000,\"args\":"
             "{\"file\":\"a.csv\"},\"fails\":1,\"err\":\"try again\",\"failed_at\":%s} later\n",
             d1_first ? d1 : d2, d1_first ? d2 : d1, fa3);
    CHECK_STR(got, want);
    free(got);

    /* Nothing else: the pool's own keys as a stopped pool leaves them. */
    redisReply *r = tl_cmd(rc_, "DEL %s:dead %s:retry", ns_, ns_);
    freeReplyObject(r);
    tl_take_stat_days(rc_, ns_, 3, 3);
    /* each failure kept (PROTOCOL §26); the retry job's until its retry and 30 days on */
    r = tl_cmd(rc_, "TTL %s:cwork:failures:j3retry", ns_);
    CHECK(r->integer > 2592000);
    freeReplyObject(r);
    CHECK_INT(take_failure_histories(), 3);
    char *dump = tl_ns_dump(rc_, ns_);
    snprintf(want, sizeof want,
             "%s:jobs:import:lock string 0\n"
             "%s:jobs:import:max_concurrency string 0\n"
             "%s:known_jobs set import\n",
             ns_, ns_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static void dropped_under_skip_dead_in_both_meanings(void)
{
    for (int upstream = 0; upstream < 2; upstream++) {
        cwork_pool *p = new_pool("noretry-skip", 2);
        cwork_job_options jo;
        cwork_job_options_init(&jo);
        jo.skip_dead = true;
        jo.skip_dead_after_retries = upstream; /* retried as usual, but not this one */
        CHECK_INT(cwork_pool_register(p, "import", handler, &jo, NULL), 0);
        push_raw("import", JOB("j1", ""));
        run_until_counted(p, 1);
        cwork_pool_stats st;
        cwork_pool_get_stats(p, &st);
        CHECK_INT(st.failed, 1);
        CHECK_INT(st.dead + st.retried, 0);
        tl_take_stat_days(rc_, ns_, 1, 1);
        char *dump = tl_ns_dump(rc_, ns_);
        char want[512];
        snprintf(want, sizeof want,
                 "%s:jobs:import:lock string 0\n"
                 "%s:jobs:import:max_concurrency string 0\n"
                 "%s:known_jobs set import\n",
                 ns_, ns_, ns_);
        CHECK_STR(dump, want);
        free(dump);
        cwork_pool_free(p);
        tl_ns_delete(rc_, ns_);
    }
}

static void outside_a_pool_changes_nothing(void)
{
    const char *bytes = JOB("j1", "");
    cwork_job *j = NULL;
    CHECK_INT(cwork_job_decode(bytes, strlen(bytes), &j, NULL), 0);
    CHECK_INT(cwork_job_fail_no_retry(j, "no %s", "pool"), CWORK_EINVAL);
    CHECK_STR(cwork_job_last_error(j), "");
    CHECK_INT(cwork_job_fail_no_retry(NULL, "x"), CWORK_EINVAL);
    cwork_job_free(j);
}

int main(void)
{
    pool_test_setup();
    RUN(goes_to_dead_at_once_with_retries_left);
    RUN(dropped_under_skip_dead_in_both_meanings);
    RUN(outside_a_pool_changes_nothing);
    pool_test_teardown();
    return tl_finish();
}
