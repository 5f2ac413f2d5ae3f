/* A pool among upstream gocraft/work v0.5 writers (README "Go flavours"): upstream's exact
 * bytes (upstream_testutil.h) are processed as upstream's worker would — args run, guard
 * gone, nothing left — including ByKey (the guard's job runs, the placeholder leaves
 * in-progress), guards whose args do not survive float64, and both escape spellings;
 * failures keep unique_key; periodic fire times are never scheduled twice across
 * flavours; a fork pool warns once per kind when it meets upstream's data. Every case
 * checks the whole namespace afterwards. */
#include "pool_testutil.h"

#include "flavor_testutil.h"
#include "periodic.h"

#include <pthread.h>
#include <stdatomic.h>

#define CHECK_DUMP(...) check_ns_dump(rc_, ns_, __FILE__, __LINE__, __VA_ARGS__)
#define MIXED "go_flavor.mixed_namespace"

static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;
static char seen_id_[64], seen_args_[256];
static long long seen_t_;
static atomic_int runs_;
static const char *fail_with_; /* handler result: NULL succeeds */

static int record(cwork_job *job, void *ctx)
{
    (void)ctx;
    char *args = cwork_job_args_json(job);
    pthread_mutex_lock(&seen_mu);
    snprintf(seen_id_, sizeof seen_id_, "%s", cwork_job_id(job));
    snprintf(seen_args_, sizeof seen_args_, "%s", args ? args : "?");
    seen_t_ = cwork_job_enqueued_at(job);
    pthread_mutex_unlock(&seen_mu);
    cwork_free(args);
    atomic_fetch_add(&runs_, 1);
    return fail_with_ ? cwork_job_fail(job, "%s", fail_with_) : 0;
}

static cwork_pool *flavoured_pool(const char *tag, cwork_go_flavor flavor)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 2;
    o.go_flavor = flavor;
    cwork_error err = {0};
    cwork_pool *p = cwork_pool_new(redis_, ns_, &o, &err);
    if (!p) tl_fail(__FILE__, __LINE__, "cwork_pool_new: %s", err.message);
    atomic_store(&runs_, 0);
    fail_with_ = NULL;
    seen_id_[0] = seen_args_[0] = '\0';
    return p;
}

static void run_until_drained(cwork_pool *p)
{
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    if (cwork_pool_drain(p, 10000, &err) != 0)
        tl_fail(__FILE__, __LINE__, "drain: %s", err.message);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
}

static void set_guard(const char *tmpl, const char *value)
{
    char key[512];
    snprintf(key, sizeof key, tmpl, ns_);
    tl_do(rc_, "SET %b %b EX 86400", key, strlen(key), value, strlen(value));
}

/* What a drained and stopped pool leaves of a job type (as Go's, minus lock_info). */
static const char *leftovers(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof buf,
             "%s:jobs:%s:lock string 0\n%s:jobs:%s:max_concurrency string 0\n"
             "%s:known_jobs set %s\n",
             ns_, name, ns_, name, ns_, name);
    return buf;
}

/* ---------------------------------------------------------------- unique jobs */

static void upstream_unique_job_runs_and_its_guard_goes(void)
{
    cwork_pool *p = flavoured_pool("upuniq", CWORK_GO_UPSTREAM);
    CHECK_INT(cwork_pool_register(p, "clear_cache", record, NULL, NULL), 0);
    char job[1024];
    snprintf(job, sizeof job, UP_UNIQUE, ns_);
    push_raw("clear_cache", job);
    set_guard(UP_UNIQUE_GUARD, "1");
    tl_capture_logs();
    run_until_drained(p);
    CHECK_INT(atomic_load(&runs_), 1);
    CHECK_STR(seen_id_, UP_ID);
    CHECK_STR(seen_args_, "{\"object_id_\":\"123\"}");
    drop_stat_days(rc_, ns_);
    CHECK_DUMP("%s", leftovers("clear_cache"));
    CHECK_INT(tl_count_logs(MIXED), 0);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* ByKey: the queue holds the first job as a placeholder, the guard the latest one, which
 * is what runs (ids and all); the placeholder's bytes leave in-progress; the next ByKey
 * enqueue of the key is accepted again. */
static void bykey_placeholder_runs_the_guards_job(void)
{
    cwork_pool *p = flavoured_pool("upbykey", CWORK_GO_UPSTREAM);
    CHECK_INT(cwork_pool_register(p, "sync", record, NULL, NULL), 0);
    char placeholder[1024], latest[1024];
    snprintf(placeholder, sizeof placeholder, UP_BYKEY_PLACEHOLDER, ns_);
    snprintf(latest, sizeof latest, UP_BYKEY_GUARD_JOB, ns_);
    push_raw("sync", placeholder);
    set_guard(UP_BYKEY_GUARD, latest);
    run_until_drained(p);
    CHECK_INT(atomic_load(&runs_), 1);
    CHECK_STR(seen_args_, "{\"v\":\"second\"}");
    CHECK_STR(seen_id_, UP_ID2);
    CHECK_INT(seen_t_, 1700000005);
    drop_stat_days(rc_, ns_);
    CHECK_DUMP("%s", leftovers("sync"));
    cwork_pool_stats st;
    cwork_pool_get_stats(p, &st);
    CHECK_INT(st.in_flight, 0);
    CHECK_INT(st.succeeded, 1);

    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, NULL);
    cwork_args *args = NULL, *key = NULL;
    CHECK_INT(cwork_args_parse("{\"v\":\"third\"}", 13, &args, NULL), 0);
    CHECK_INT(cwork_args_parse("{\"acct\":7}", 10, &key, NULL), 0);
    cwork_job *again = NULL;
    CHECK_INT(cwork_enqueue_unique_by_key(enq, "sync", args, key, &again, NULL), CWORK_OK);
    const char *raw = cwork_job_raw(again, NULL);
    char guard[256];
    snprintf(guard, sizeof guard, UP_BYKEY_GUARD, ns_);
    CHECK_DUMP("%s:jobs:sync list %s\n%s:jobs:sync:lock string 0\n"
               "%s:jobs:sync:max_concurrency string 0\n%s:known_jobs set sync\n"
               "%s string ttl=86400 %s\n",
               ns_, dumped(raw), ns_, ns_, ns_, dumped(guard), dumped(raw));
    cwork_job_free(again);
    cwork_args_free(args);
    cwork_args_free(key);
    cwork_enqueuer_free(enq);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* Also when a reclaim hands the placeholder back: a guard without a job ("1", or gone)
 * leaves the queued job as it is; a guard value that is no job is logged and the
 * placeholder runs. */
static void guard_values_that_are_no_job_leave_the_placeholder(void)
{
    cwork_pool *p = flavoured_pool("upbad", CWORK_GO_UPSTREAM);
    CHECK_INT(cwork_pool_register(p, "sync", record, NULL, NULL), 0);
    char placeholder[1024];
    snprintf(placeholder, sizeof placeholder, UP_BYKEY_PLACEHOLDER, ns_);
    push_raw("sync", placeholder);
    set_guard(UP_BYKEY_GUARD, "{not a job");
    tl_capture_logs();
    run_until_drained(p);
    CHECK_INT(atomic_load(&runs_), 1);
    CHECK_STR(seen_args_, "{\"v\":\"first\"}");
    CHECK_INT(tl_count_logs("worker.delete_unique_job.updated_job"), 1);
    drop_stat_days(rc_, ns_);
    CHECK_DUMP("%s", leftovers("sync"));
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* Integers past 2^53 come back as other numbers: the key recomputed from the decoded
 * args names another guard, unique_key the right one. */
static void guard_named_by_unique_key_goes_when_args_do_not_survive(void)
{
    cwork_pool *p = flavoured_pool("upbig", CWORK_GO_UPSTREAM);
    CHECK_INT(cwork_pool_register(p, "big", record, NULL, NULL), 0);
    char job[1024];
    snprintf(job, sizeof job, UP_BIG, ns_);
    push_raw("big", job);
    set_guard(UP_BIG_GUARD, "1");
    run_until_drained(p);
    CHECK_INT(atomic_load(&runs_), 1);
    CHECK_STR(seen_args_, "{\"n\":9007199254740992}");
    drop_stat_days(rc_, ns_);
    CHECK_DUMP("%s", leftovers("big"));
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* A fork job (no unique_key) whose args hold U+0008: its guard may be in either
 * spelling, depending on the Go that wrote it; both go. */
static void both_escape_spellings_of_a_guard_go(void)
{
    cwork_pool *p = flavoured_pool("spell", CWORK_GO_FORK);
    CHECK_INT(cwork_pool_register(p, "ctl", record, NULL, NULL), 0);
    push_raw("ctl", OLDGO_CTL);
    set_guard(OLDGO_CTL_GUARD, "1");
    set_guard(NEWGO_CTL_GUARD, "1");
    run_until_drained(p);
    CHECK_INT(atomic_load(&runs_), 1);
    CHECK_STR(seen_args_, "{\"s\":\"a\\bb\"}");
    drop_stat_days(rc_, ns_);
    CHECK_DUMP("%s", leftovers("ctl"));
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* A fork pool handles upstream's jobs all the same, and says once that the namespace is
 * shared with upstream writers. */
static void fork_pool_warns_once_about_unique_key(void)
{
    cwork_pool *p = flavoured_pool("forkwarn", CWORK_GO_FORK);
    CHECK_INT(cwork_pool_register(p, "clear_cache", record, NULL, NULL), 0);
    CHECK_INT(cwork_pool_register(p, "sync", record, NULL, NULL), 0);
    char job[1024], latest[1024];
    snprintf(job, sizeof job, UP_UNIQUE, ns_);
    push_raw("clear_cache", job);
    set_guard(UP_UNIQUE_GUARD, "1");
    snprintf(job, sizeof job, UP_BYKEY_PLACEHOLDER, ns_);
    snprintf(latest, sizeof latest, UP_BYKEY_GUARD_JOB, ns_);
    push_raw("sync", job);
    set_guard(UP_BYKEY_GUARD, latest);
    tl_capture_logs();
    run_until_drained(p);
    CHECK_INT(atomic_load(&runs_), 2);
    CHECK_INT(tl_count_logs(MIXED), 1);
    const tl_log *l = tl_find_log(MIXED);
    CHECK(l && l->level == CWORK_LOG_WARN);
    CHECK(l && strstr(l->fields, "go_flavor=fork") && strstr(l->fields, "unique_key") &&
          strstr(l->fields, "go_flavor=upstream") && strstr(l->fields, "CWORK_GO_FLAVOR"));
    char want[2048];
    snprintf(want, sizeof want,
             "%s:jobs:clear_cache:lock string 0\n%s:jobs:clear_cache:max_concurrency string 0\n"
             "%s:jobs:sync:lock string 0\n%s:jobs:sync:max_concurrency string 0\n"
             "%s:known_jobs set clear_cache | sync\n",
             ns_, ns_, ns_, ns_, ns_);
    drop_stat_days(rc_, ns_);
    CHECK_DUMP("%s", want);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* upstream's retry entry comes due, runs (its guard, if one was set meanwhile, is
 * consumed as upstream's worker does) and fails for good: the dead entry keeps
 * unique_key, in Go's field order. */
static void failed_unique_job_keeps_unique_key(void)
{
    cwork_pool *p = flavoured_pool("upfail", CWORK_GO_UPSTREAM);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.max_fails = 2;
    CHECK_INT(cwork_pool_register(p, "clear_cache", record, &jo, NULL), 0);
    char retry[1024];
    snprintf(retry, sizeof retry, UP_RETRY, ns_);
    tl_do(rc_, "ZADD %s:retry 1 %s", ns_, retry);
    set_guard(UP_UNIQUE_GUARD, "1");
    fail_with_ = "boom";
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    CHECK_INT(wait_for_int(1, 10000, "ZCARD %s:dead%s", ""), 1);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    CHECK_INT(atomic_load(&runs_), 1);
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1 WITHSCORES", ns_);
    CHECK_INT(r->elements, 2);
    if (r->elements == 2) {
        cwork_job *dead = NULL;
        CHECK_INT(cwork_job_decode(r->element[0]->str, r->element[0]->len, &dead, NULL), 0);
        /* t is the time the requeuer moved it (cjson rewrote the entry on the way) */
        char want[1024];
        snprintf(want, sizeof want,
                 "{\"name\":\"clear_cache\",\"id\":\"" UP_ID "\",\"t\":%lld,\"args\":{"
                 "\"object_id_\":\"123\"},\"unique\":true,\"unique_key\":\"%s:unique:"
                 "clear_cache:{\\\"object_id_\\\":\\\"123\\\"}\\n\",\"fails\":2,\"err\":\"boom\","
                 "\"failed_at\":%lld}",
                 (long long)cwork_job_enqueued_at(dead), ns_, (long long)cwork_job_failed_at(dead));
        CHECK_STR(r->element[0]->str, want);
        drop_stat_days(rc_, ns_);
        CHECK_INT(take_failure_histories(), 1); /* its two failures (PROTOCOL §26) */
        char *dump = tl_ns_dump(rc_, ns_);
        char expect[4096];
        snprintf(expect, sizeof expect, "%s:dead zset %s=%s\n%s", ns_, dumped(want),
                 r->element[1]->str, leftovers("clear_cache"));
        CHECK_STR(dump, expect);
        free(dump);
        cwork_job_free(dead);
    }
    freeReplyObject(r);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- periodic jobs */

static void periodic_instances_in_either_flavours_bytes(void)
{
    cw_buf b;
    cw_buf_init(&b);
    cw_periodic_instance_as(&b, CWORK_GO_UPSTREAM, "calc", "0 * * * * *", 1700000040, 1700000100);
    CHECK_STR(b.data, UP_PERIODIC);
    cw_buf_reset(&b);
    cw_periodic_instance_as(&b, CWORK_GO_FORK, "calc", "0 * * * * *", 1700000040, 1700000100);
    CHECK_STR(b.data, FORK_PERIODIC);
    cw_buf_reset(&b);
    cw_periodic_instance(&b, "calc", "0 * * * * *", 1700000040, 1700000100);
    CHECK_STR(b.data, FORK_PERIODIC);
    cw_buf_free(&b);
}

/* The instance of job `calc` at fire time `at` in a flavour's bytes, for dumps. */
static const char *instance(cwork_go_flavor f, const char *spec, long long at)
{
    static char ring[8][512];
    static int next;
    cw_buf b;
    cw_buf_init(&b);
    cw_periodic_instance_as(&b, f, "calc", spec, at, at + 60);
    char *out = ring[next++ % 8];
    snprintf(out, sizeof ring[0], "%s=%lld", b.data, at);
    cw_buf_free(&b);
    return out;
}

/* A pool schedules "S * * * * *" (four fire times a minute apart, the first ~40 s away)
 * while the other flavour's instance of the second fire time is already there. */
static void run_periodic_case(const char *tag, cwork_go_flavor pool_flavor,
                              cwork_go_flavor present_flavor)
{
    cwork_pool *p = flavoured_pool(tag, pool_flavor);
    long long now = (long long)time(NULL);
    char spec[32];
    snprintf(spec, sizeof spec, "%lld * * * * *", (now + 40) % 60);
    long long first = now + 40;
    CHECK_INT(cwork_pool_register(p, "calc", record, NULL, NULL), 0);
    CHECK_INT(cwork_pool_periodically_enqueue(p, spec, "calc", NULL), 0);
    cw_buf b;
    cw_buf_init(&b);
    cw_periodic_instance_as(&b, present_flavor, "calc", spec, first + 60, first + 120);
    tl_do(rc_, "ZADD %s:scheduled %lld %s", ns_, first + 60, b.data);
    cw_buf_free(&b);
    tl_capture_logs();
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    CHECK_INT(wait_for_int(1, 5000, "EXISTS %s:last_periodic_enqueue%s", ""), 1);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    redisReply *r = tl_cmd(rc_, "GET %s:last_periodic_enqueue", ns_);
    char last[32];
    snprintf(last, sizeof last, "%s", r->type == REDIS_REPLY_STRING ? r->str : "?");
    freeReplyObject(r);
    drop_stat_days(rc_, ns_);
    /* Members sort by score: one per fire time, the second in the flavour found. The
     * pass that wrote them also published the schedule for dashboards. */
    CHECK_DUMP("%s:cwork:periodic hash ttl=600 [\"calc\",\"%s\"]={\"next_at\":%lld,"
               "\"seen_at\":%s}\n"
               "%s:jobs:calc:max_concurrency string 0\n%s:known_jobs set calc\n"
               "%s:last_periodic_enqueue string %s\n"
               "%s:scheduled zset %s | %s | %s | %s\n",
               ns_, spec, first, last, ns_, ns_, ns_, last, ns_, instance(pool_flavor, spec, first),
               instance(present_flavor, spec, first + 60), instance(pool_flavor, spec, first + 120),
               instance(pool_flavor, spec, first + 180));
    CHECK_INT(tl_count_logs(MIXED), pool_flavor == present_flavor ? 0 : 1);
    if (pool_flavor != present_flavor) {
        const tl_log *l = tl_find_log(MIXED);
        CHECK(l && strstr(l->fields, "periodic") != NULL);
    }
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

static void upstream_pool_adds_nothing_to_an_upstream_instance(void)
{
    run_periodic_case("perup", CWORK_GO_UPSTREAM, CWORK_GO_UPSTREAM);
}

static void fork_pool_finds_an_upstream_instance_and_warns(void)
{
    run_periodic_case("perfork", CWORK_GO_FORK, CWORK_GO_UPSTREAM);
}

static void upstream_pool_finds_a_fork_instance_and_warns(void)
{
    run_periodic_case("perboth", CWORK_GO_UPSTREAM, CWORK_GO_FORK);
}

int main(void)
{
    pool_test_setup();
    RUN(upstream_unique_job_runs_and_its_guard_goes);
    RUN(bykey_placeholder_runs_the_guards_job);
    RUN(guard_values_that_are_no_job_leave_the_placeholder);
    RUN(guard_named_by_unique_key_goes_when_args_do_not_survive);
    RUN(both_escape_spellings_of_a_guard_go);
    RUN(fork_pool_warns_once_about_unique_key);
    RUN(failed_unique_job_keeps_unique_key);
    RUN(periodic_instances_in_either_flavours_bytes);
    RUN(upstream_pool_adds_nothing_to_an_upstream_instance);
    RUN(fork_pool_finds_an_upstream_instance_and_warns);
    RUN(upstream_pool_finds_a_fork_instance_and_warns);
    pool_test_teardown();
    return tl_finish();
}
