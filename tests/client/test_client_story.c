/* cwork_client_job_story with real pools (PROTOCOL §26): a running job shows its pool,
 * host, pid, worker, start and live check-in; a job that fails twice and then dies keeps
 * every failure with its times in <p>cwork:failures:<id> (a capped list with a TTL), its
 * first enqueue survives the requeues that rewrite t, and the time in each state follows;
 * a retry from dead keeps the story; a success after a failure removes it. */
#include "pool_testutil.h"

#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define T0 1700000000LL
#define JOB(name, id)                                                                              \
    "{\"name\":\"" name "\",\"id\":\"" id "\",\"t\":1700000000,\"args\":{\"n\":1}}"
#define DAYS30 2592000LL

static atomic_int release_; /* the slow handler runs until the test sets it */
static atomic_int runs_;

/* Checks in, then runs until released (at most 20 s): a job that is seen running. */
static int slow(cwork_job *job, void *ctx)
{
    (void)ctx;
    cwork_job_checkin(job, "step 1 of 2");
    for (int i = 0; i < 2000 && !atomic_load(&release_); i++)
        tl_sleep_ms(10);
    return 0;
}

/* Runs 200 ms, checks in, and fails with its run's number. */
static int flaky(cwork_job *job, void *ctx)
{
    (void)ctx;
    int run = atomic_fetch_add(&runs_, 1) + 1;
    cwork_job_checkin(job, "working");
    tl_sleep_ms(200);
    return cwork_job_fail(job, "boom %d", run);
}

/* Fails its first run only. */
static int once(cwork_job *job, void *ctx)
{
    (void)ctx;
    return cwork_job_fails(job) == 0 ? cwork_job_fail(job, "first try") : 0;
}

static int64_t no_backoff(const cwork_job *job, void *userdata)
{
    (void)job;
    (void)userdata;
    return 0; /* due again at once: the requeuer moves it within its period */
}

static cwork_client *client_of(void)
{
    cwork_error err = {0};
    cwork_client *cl = cwork_client_new(redis_, ns_, &err);
    CHECK(cl != NULL);
    return cl;
}

static const char *phase_states(const cwork_job_story *st, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < st->n_phases; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s%s", i ? " " : "",
                                 st->phases[i].state, st->phases[i].until ? "" : "*");
    return buf;
}

static void running_job_tells_pool_worker_and_checkin(void)
{
    cwork_pool *p = new_pool("story_run", 1);
    atomic_store(&release_, 0);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_register(p, "slow", slow, &jo, NULL), 0);
    push_raw("slow", JOB("slow", "run1"));
    CHECK_INT(cwork_pool_start(p, &err), 0);
    cwork_client *cl = client_of();
    cwork_job_story st = {0};
    /* The observer writes once a second: wait for the check-in to show. */
    for (long long end = tl_now_ms() + 15000; tl_now_ms() < end; tl_sleep_ms(20)) {
        cwork_job_story_free(&st);
        CHECK_INT(cwork_client_job_story(cl, "run1", &st, &err), 0);
        if (st.place == CWORK_PLACE_IN_PROGRESS && *st.checkin) break;
    }
    if (st.place != CWORK_PLACE_IN_PROGRESS || !st.worker_id || st.n_phases != 2) {
        tl_fail(__FILE__, __LINE__, "the running job was not seen running (place %d)",
                (int)st.place);
        atomic_store(&release_, 1);
        cwork_job_story_free(&st);
        CHECK_INT(cwork_pool_stop(p, 10000, &err), 0);
        cwork_client_free(cl);
        cwork_pool_free(p);
        tl_ns_delete(rc_, ns_);
        return;
    }
    CHECK_STR(st.pool_id, cwork_pool_id(p));
    char host[256] = "";
    gethostname(host, sizeof host);
    CHECK_STR(st.pool_host, host);
    CHECK_INT(st.pool_pid, getpid());
    CHECK(*st.worker_id != '\0');
    CHECK(st.started_at >= T0 && st.started_at <= st.now);
    CHECK_STR(st.checkin, "step 1 of 2");
    CHECK(st.checkin_at >= st.started_at && st.checkin_at <= st.now);
    CHECK_INT(st.first_enqueued_at, T0);
    CHECK_INT(st.last_requeued_at, 0);
    CHECK_INT(st.n_failures, 0);
    char states[256];
    CHECK_STR(phase_states(&st, states, sizeof states), "waiting running*");
    CHECK_INT(st.phases[0].from, T0);
    CHECK_INT(st.phases[0].until, st.started_at);
    CHECK_INT(st.phases[1].from, st.started_at);
    /* The worker is the pool's, as the pool's heartbeat lists it. */
    redisReply *r = tl_cmd(rc_, "HGET %s:worker_pools:%s worker_ids", ns_, cwork_pool_id(p));
    CHECK(r->type == REDIS_REPLY_STRING && strstr(r->str, st.worker_id) != NULL);
    freeReplyObject(r);
    /* A plain run writes no failure history. */
    CHECK_INT(wait_for_int(0, 0, "EXISTS %s:cwork:failures:%s", "run1"), 0);
    cwork_job_story_free(&st);
    atomic_store(&release_, 1);
    CHECK_INT(cwork_pool_stop(p, 10000, &err), 0);
    CHECK_INT(cwork_client_job_story(cl, "run1", &st, &err), CWORK_ENOTFOUND);
    CHECK_INT(cwork_client_job_story(cl, "run1", NULL, &err), CWORK_EINVAL);
    cwork_client_free(cl);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* The fields of one entry of the failures list, compared with the story's. */
static void check_entry(const char *entry, const cwork_job_failure *f)
{
    char want[512];
    if (f->retry_at)
        snprintf(want, sizeof want,
                 "{\"failed_at\":%lld,\"fails\":%lld,\"err\":\"%s\",\"t\":%lld,\"ran_at\":%lld,"
                 "\"took_us\":%lld,\"retry_at\":%lld,\"first_t\":1700000000}",
                 (long long)f->failed_at, (long long)f->fails, f->err, (long long)f->enqueued_at,
                 (long long)f->ran_at_ms, (long long)f->took_us, (long long)f->retry_at);
    else
        snprintf(want, sizeof want,
                 "{\"failed_at\":%lld,\"fails\":%lld,\"err\":\"%s\",\"t\":%lld,\"ran_at\":%lld,"
                 "\"took_us\":%lld,\"first_t\":1700000000}",
                 (long long)f->failed_at, (long long)f->fails, f->err, (long long)f->enqueued_at,
                 (long long)f->ran_at_ms, (long long)f->took_us);
    CHECK_STR(entry, want);
}

static void failed_twice_then_dead_keeps_every_error(void)
{
    cwork_pool *p = new_pool("story_fail", 1);
    atomic_store(&runs_, 0);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.max_fails = 3;
    jo.backoff = no_backoff;
    cwork_error err = {0};
    CHECK_INT(cwork_pool_register(p, "flaky", flaky, &jo, NULL), 0);
    push_raw("flaky", JOB("flaky", "f1"));
    CHECK_INT(cwork_pool_start(p, &err), 0);
    CHECK_INT(wait_for_int(1, 30000, "ZCARD %s:dead", ""), 1);
    CHECK_INT(cwork_pool_stop(p, 10000, &err), 0);
    CHECK_INT(atomic_load(&runs_), 3);

    cwork_client *cl = client_of();
    cwork_job_story st = {0};
    CHECK_INT(cwork_client_job_story(cl, "f1", &st, &err), 0);
    CHECK_INT(st.place, CWORK_PLACE_DEAD);
    CHECK_STR(cwork_job_last_error(st.job), "boom 3");
    CHECK_INT(st.first_enqueued_at, T0);
    /* the retry requeuer rewrote t: the last requeue */
    CHECK(st.last_requeued_at > T0 && st.last_requeued_at == cwork_job_enqueued_at(st.job));
    CHECK_STR(st.pool_id, "");
    CHECK_INT(st.n_failures, 3);
    for (int i = 0; i < 3; i++) {
        const cwork_job_failure *f = &st.failures[i];
        char want[16];
        snprintf(want, sizeof want, "boom %d", 3 - i);
        CHECK_STR(f->err, want);
        CHECK_INT(f->fails, 3 - i);
        CHECK(f->took_us >= 200000); /* the handler ran 200 ms at least */
        CHECK(f->ran_at_ms / 1000 >= f->enqueued_at && f->ran_at_ms / 1000 <= f->failed_at);
        CHECK_INT(f->retry_at, i == 0 ? 0 : f->failed_at); /* no backoff */
    }
    CHECK_INT(st.failures[2].enqueued_at, T0);
    CHECK(st.failures[1].enqueued_at >= st.failures[2].failed_at);
    CHECK_INT(st.failures[0].failed_at, cwork_job_failed_at(st.job));
    CHECK_INT(st.at, st.failures[0].failed_at);
    char states[256];
    CHECK_STR(phase_states(&st, states, sizeof states),
              "waiting running retry waiting running retry waiting running dead*");
    CHECK_INT(st.phases[2].from, st.failures[2].failed_at);
    CHECK_INT(st.phases[2].until, st.failures[1].enqueued_at);
    CHECK_INT(st.phases[8].from, st.failures[0].failed_at);

    /* The namespace: the history is a list of the three entries, newest first, with the
     * TTL of a dead job's story; nothing else is new. */
    redisReply *r = tl_cmd(rc_, "LRANGE %s:cwork:failures:f1 0 -1", ns_);
    CHECK_INT(r->elements, 3);
    for (size_t i = 0; i < r->elements && i < 3; i++)
        check_entry(r->element[i]->str, &st.failures[i]);
    freeReplyObject(r);
    r = tl_cmd(rc_, "TTL %s:cwork:failures:f1", ns_);
    CHECK(r->integer > DAYS30 - 120 && r->integer <= DAYS30);
    freeReplyObject(r);
    tl_take_stat_days(rc_, ns_, 3, 3);
    char *dead = NULL;
    r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    dead = strdup(r->element[0]->str);
    freeReplyObject(r);
    /* (the TTL was checked above; set again so that the dump does not depend on time) */
    freeReplyObject(tl_cmd(rc_, "EXPIRE %s:cwork:failures:f1 %lld", ns_, DAYS30));
    char *dump = tl_ns_dump(rc_, ns_), want[4096];
    r = tl_cmd(rc_, "LRANGE %s:cwork:failures:f1 0 -1", ns_);
    snprintf(want, sizeof want,
             "%s:cwork:failures:f1 list ttl=%lld %s | %s | %s\n"
             "%s:dead zset %s=%lld\n"
             "%s:jobs:flaky:lock string 0\n"
             "%s:jobs:flaky:max_concurrency string 0\n"
             "%s:known_jobs set flaky\n",
             ns_, DAYS30, r->element[0]->str, r->element[1]->str, r->element[2]->str, ns_, dead,
             (long long)st.at, ns_, ns_, ns_);
    freeReplyObject(r);
    CHECK_STR(dump, want);
    free(dump);
    free(dead);

    /* A retry from dead rewrites t again; the first enqueue stays known. */
    int64_t died = st.at;
    cwork_job_story_free(&st);
    CHECK_INT(cwork_client_retry_dead(cl, died, "f1", &err), 0);
    CHECK_INT(cwork_client_job_story(cl, "f1", &st, &err), 0);
    CHECK_INT(st.place, CWORK_PLACE_QUEUE);
    CHECK_INT(st.first_enqueued_at, T0);
    CHECK(st.last_requeued_at >= died && st.last_requeued_at == cwork_job_enqueued_at(st.job));
    CHECK_INT(st.n_failures, 3);
    CHECK_STR(phase_states(&st, states, sizeof states),
              "waiting running retry waiting running retry waiting running dead waiting*");
    CHECK_INT(st.phases[8].until, st.last_requeued_at);
    cwork_job_story_free(&st);
    cwork_client_free(cl);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* A failure, then a success: the history goes with the job (the success of a job that
 * never failed writes nothing, above). */
static void success_after_failure_removes_the_history(void)
{
    cwork_pool *p = new_pool("story_once", 1);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.backoff = no_backoff;
    cwork_error err = {0};
    CHECK_INT(cwork_pool_register(p, "once", once, &jo, NULL), 0);
    push_raw("once", JOB("once", "o1"));
    CHECK_INT(cwork_pool_start(p, &err), 0);
    CHECK_INT(wait_for_int(1, 10000, "EXISTS %s:cwork:failures:%s", "o1"), 1);
    cwork_pool_stats s = {0};
    for (long long end = tl_now_ms() + 15000; tl_now_ms() < end; tl_sleep_ms(10)) {
        cwork_pool_get_stats(p, &s);
        if (s.succeeded == 1) break;
    }
    CHECK_INT(s.succeeded, 1);
    CHECK_INT(cwork_pool_stop(p, 10000, &err), 0);
    tl_take_stat_days(rc_, ns_, 2, 1);
    char *dump = tl_ns_dump(rc_, ns_), want[1024];
    snprintf(want, sizeof want,
             "%s:jobs:once:lock string 0\n"
             "%s:jobs:once:max_concurrency string 0\n"
             "%s:known_jobs set once\n",
             ns_, ns_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
}

/* Deleting a job from its set deletes its history; another job's stays. */
static void delete_removes_the_history(void)
{
    tl_unique_ns("story_del", ns_, sizeof ns_);
    freeReplyObject(tl_cmd(rc_, "ZADD %s:dead 1700000100 %s", ns_,
                           "{\"name\":\"a\",\"id\":\"d1\",\"t\":1700000050,\"fails\":1,"
                           "\"err\":\"x\",\"failed_at\":1700000100}"));
    freeReplyObject(tl_cmd(rc_, "RPUSH %s:cwork:failures:d1 %s", ns_,
                           "{\"failed_at\":1700000100,\"fails\":1,\"err\":\"x\",\"t\":"
                           "1700000050,\"ran_at\":0,\"took_us\":0,\"first_t\":1700000000}"));
    freeReplyObject(tl_cmd(rc_, "RPUSH %s:cwork:failures:d2 x", ns_));
    cwork_client *cl = client_of();
    cwork_error err = {0};
    cwork_job_story st = {0};
    CHECK_INT(cwork_client_job_story(cl, "d1", &st, &err), 0);
    CHECK_INT(st.first_enqueued_at, T0);
    CHECK_INT(st.last_requeued_at, 1700000050);
    CHECK_INT(st.n_failures, 1);
    char states[128];
    CHECK_STR(phase_states(&st, states, sizeof states), "waiting dead*");
    cwork_job_story_free(&st);
    CHECK_INT(cwork_client_delete(cl, CWORK_SET_DEAD, 1700000100, "d1", &err), 0);
    char *dump = tl_ns_dump(rc_, ns_), want[256];
    snprintf(want, sizeof want, "%s:cwork:failures:d2 list x\n", ns_);
    CHECK_STR(dump, want);
    free(dump);
    cwork_client_free(cl);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    RUN(running_job_tells_pool_worker_and_checkin);
    RUN(failed_twice_then_dead_keeps_every_error);
    RUN(success_after_failure_removes_the_history);
    RUN(delete_removes_the_history);
    pool_test_teardown();
    return tl_finish();
}
