/* Worker observations against a real Redis (PROTOCOL §7, §17.7), checked over the whole
 * namespace: the hash of a running job with and without check-in, DEL when done, no
 * stale check-in on the next job (PROTOCOL §16.9, fixed), nothing written when
 * nothing changed, mismatched check-ins ignored, several workers in one flush, a failed
 * flush retried by the next one, and executors reporting from many threads at once
 * (this executable runs under ThreadSanitizer too). */
#include "observer.h"
#include "testlib.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];
static cw_keys keys_;
static char expect_[8192];

/* ---- captured error records */
static atomic_int mismatches_, write_errors_, other_errors_;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char last_mismatch_error_[128];

static void test_logger(void *ud, cwork_log_level level, const char *message,
                        const cwork_log_field *fields, size_t nfields)
{
    (void)ud;
    if (level != CWORK_LOG_ERROR) return;
    if (strcmp(message, "observer.checkin_mismatch") == 0) {
        atomic_fetch_add(&mismatches_, 1);
        pthread_mutex_lock(&log_mu);
        for (size_t i = 0; i < nfields; i++)
            if (strcmp(fields[i].key, "error") == 0)
                snprintf(last_mismatch_error_, sizeof last_mismatch_error_, "%s", fields[i].value);
        pthread_mutex_unlock(&log_mu);
    } else if (strcmp(message, "observer.write") == 0) {
        atomic_fetch_add(&write_errors_, 1);
    } else {
        atomic_fetch_add(&other_errors_, 1);
    }
}

static void log_reset(void)
{
    atomic_store(&mismatches_, 0);
    atomic_store(&write_errors_, 0);
    atomic_store(&other_errors_, 0);
}

/* ---- helpers */

static cw_observer *fresh_on(cwork_redis *r, const char *tag, const char *const *workers, size_t n)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    CHECK_INT(cw_keys_init(&keys_, ns_), 0);
    cw_observer *obs = cw_observer_new(r, &keys_, workers, n);
    CHECK(obs != NULL);
    log_reset();
    return obs;
}

static cw_observer *fresh(const char *tag, const char *const *workers, size_t n)
{
    return fresh_on(redis_, tag, workers, n);
}

static void finish(cw_observer *obs)
{
    cw_observer_free(obs);
    tl_ns_delete(rc_, ns_);
    cw_keys_clear(&keys_);
}

static cwork_job *job_from(const char *json)
{
    cwork_job *job = NULL;
    cwork_error err = {0};
    CHECK_INT(cw_job_decode(json, strlen(json), &job, &err), 0);
    return job;
}

static void check_dump(const char *want)
{
    char *got = tl_ns_dump(rc_, ns_);
    CHECK_STR(got, want);
    free(got);
}

static void flush_ok(cw_observer *obs, int force)
{
    cwork_error err = {0};
    CHECK_INT(cw_observer_flush(obs, force, &err), 0);
}

static const char *const abcd_[] = {"abcd"};

/* ---- cases */

static void started_then_checkin_then_done(void)
{
    cw_observer *obs = fresh("obs", abcd_, 1);
    cwork_job *job = job_from("{\"name\":\"foo\",\"id\":\"bar\",\"t\":1425263400,"
                              "\"args\":{\"b\":\"wat\",\"a\":1}}");
    cw_observer_started(obs, 0, job, 1425263401);
    flush_ok(obs, 0);
    snprintf(expect_, sizeof expect_,
             "%s:worker:abcd hash ttl=86400 args={\"a\":1,\"b\":\"wat\"} | job_id=bar | "
             "job_name=foo | started_at=1425263401\n",
             ns_);
    check_dump(expect_);

    cw_observer_checkin(obs, 0, "bar", "doin it", 1425263402);
    flush_ok(obs, 0);
    snprintf(expect_, sizeof expect_,
             "%s:worker:abcd hash ttl=86400 args={\"a\":1,\"b\":\"wat\"} | checkin=doin it | "
             "checkin_at=1425263402 | job_id=bar | job_name=foo | started_at=1425263401\n",
             ns_);
    check_dump(expect_);

    cw_observer_done(obs, 0);
    flush_ok(obs, 0);
    check_dump("");
    CHECK_INT(atomic_load(&mismatches_) + atomic_load(&write_errors_), 0);
    cwork_job_free(job);
    finish(obs);
}

static void next_job_carries_no_stale_checkin(void)
{
    cw_observer *obs = fresh("obsnext", abcd_, 1);
    cwork_job *a = job_from("{\"name\":\"foo\",\"id\":\"j1\",\"t\":1,\"args\":{}}");
    cwork_job *b = job_from("{\"name\":\"foo\",\"id\":\"j2\",\"t\":1,\"args\":{}}");
    const char *want_j2 = "%s:worker:abcd hash ttl=86400 args= | job_id=j2 | job_name=foo | "
                          "started_at=1700000005\n";

    /* The check-in reached Redis, then the next job starts without a done between. */
    cw_observer_started(obs, 0, a, 1700000000);
    cw_observer_checkin(obs, 0, "j1", "half way", 1700000001);
    flush_ok(obs, 0);
    redisReply *r = tl_cmd(rc_, "HGET %s:worker:abcd checkin", ns_);
    CHECK(r->type == REDIS_REPLY_STRING);
    freeReplyObject(r);
    cw_observer_started(obs, 0, b, 1700000005);
    flush_ok(obs, 0);
    snprintf(expect_, sizeof expect_, want_j2, ns_);
    check_dump(expect_);

    /* Check-in, done and the next job all within one flush interval. */
    cw_observer_checkin(obs, 0, "j2", "again", 1700000006);
    flush_ok(obs, 0);
    cw_observer_done(obs, 0);
    cw_observer_started(obs, 0, a, 1700000007);
    flush_ok(obs, 0);
    snprintf(expect_, sizeof expect_,
             "%s:worker:abcd hash ttl=86400 args= | job_id=j1 | job_name=foo | "
             "started_at=1700000007\n",
             ns_);
    check_dump(expect_);
    cwork_job_free(a);
    cwork_job_free(b);
    finish(obs);
}

static void unchanged_workers_are_not_written(void)
{
    cw_observer *obs = fresh("obsclean", abcd_, 1);
    flush_ok(obs, 0); /* never used: nothing to write */
    check_dump("");

    cwork_job *job = job_from("{\"name\":\"foo\",\"id\":\"bar\",\"t\":1,\"args\":{\"x\":true}}");
    cw_observer_started(obs, 0, job, 1700000000);
    flush_ok(obs, 0);
    freeReplyObject(tl_cmd(rc_, "DEL %s:worker:abcd", ns_));
    flush_ok(obs, 0); /* clean: the key is not written back */
    check_dump("");

    flush_ok(obs, 1); /* force writes every worker */
    snprintf(expect_, sizeof expect_,
             "%s:worker:abcd hash ttl=86400 args={\"x\":true} | job_id=bar | job_name=foo | "
             "started_at=1700000000\n",
             ns_);
    check_dump(expect_);

    /* A forced flush of an idle worker deletes its key. */
    cw_observer_done(obs, 0);
    flush_ok(obs, 0);
    freeReplyObject(tl_cmd(rc_, "HSET %s:worker:abcd job_name stale", ns_));
    flush_ok(obs, 0); /* clean: left alone */
    snprintf(expect_, sizeof expect_, "%s:worker:abcd hash job_name=stale\n", ns_);
    check_dump(expect_);
    flush_ok(obs, 1);
    check_dump("");
    cwork_job_free(job);
    finish(obs);
}

static void mismatched_checkin_is_ignored(void)
{
    static const char *const two[] = {"w0", "w1"};
    cw_observer *obs = fresh("obsmis", two, 2);
    cwork_job *job = job_from("{\"name\":\"foo\",\"id\":\"bar\",\"t\":1,\"args\":null}");
    cw_observer_started(obs, 0, job, 1700000000);
    flush_ok(obs, 0);
    freeReplyObject(tl_cmd(rc_, "DEL %s:worker:w0", ns_));

    cw_observer_checkin(obs, 0, "other", "nope", 1700000001); /* another job id */
    cw_observer_checkin(obs, 1, "bar", "nope", 1700000001);   /* an idle worker */
    cw_observer_checkin(obs, 0, "ba", "nope", 1700000001);    /* a prefix is no match */
    cw_observer_checkin(obs, 5, "bar", "nope", 1700000001);   /* no such worker: ignored */
    CHECK_INT(atomic_load(&mismatches_), 3);
    pthread_mutex_lock(&log_mu);
    CHECK_STR(last_mismatch_error_, "got checkin but mismatch on job ID or no job");
    pthread_mutex_unlock(&log_mu);

    flush_ok(obs, 0); /* the ignored check-ins changed nothing */
    check_dump("");
    flush_ok(obs, 1);
    snprintf(expect_, sizeof expect_,
             "%s:worker:w0 hash ttl=86400 args= | job_id=bar | job_name=foo | "
             "started_at=1700000000\n",
             ns_);
    check_dump(expect_);

    /* An empty message or a zero time is no check-in to show. */
    cw_observer_checkin(obs, 0, "bar", "", 1700000002);
    flush_ok(obs, 0);
    check_dump(expect_);
    cw_observer_checkin(obs, 0, "bar", "zero time", 0);
    flush_ok(obs, 0);
    check_dump(expect_);
    cwork_job_free(job);
    finish(obs);
}

static void absent_or_empty_args_write_empty_string(void)
{
    static const char *const three[] = {"a1", "a2", "a3"};
    cw_observer *obs = fresh("obsargs", three, 3);
    cwork_job *absent = job_from("{\"name\":\"n\",\"id\":\"i1\",\"t\":1}");
    cwork_job *null = job_from("{\"name\":\"n\",\"id\":\"i2\",\"t\":1,\"args\":null}");
    cwork_job *empty = job_from("{\"name\":\"n\",\"id\":\"i3\",\"t\":1,\"args\":{}}");
    cw_observer_started(obs, 0, absent, 10);
    cw_observer_started(obs, 1, null, 11);
    cw_observer_started(obs, 2, empty, 12);
    flush_ok(obs, 0);
    snprintf(expect_, sizeof expect_,
             "%s:worker:a1 hash ttl=86400 args= | job_id=i1 | job_name=n | started_at=10\n"
             "%s:worker:a2 hash ttl=86400 args= | job_id=i2 | job_name=n | started_at=11\n"
             "%s:worker:a3 hash ttl=86400 args= | job_id=i3 | job_name=n | started_at=12\n",
             ns_, ns_, ns_);
    check_dump(expect_);
    cwork_job_free(absent);
    cwork_job_free(null);
    cwork_job_free(empty);
    finish(obs);
}

/* Go's encoding of args: sorted keys, HTML-safe escaping, Go floats. */
static void args_are_go_json(void)
{
    cw_observer *obs = fresh("obsjson", abcd_, 1);
    cwork_job *job = job_from("{\"name\":\"n\",\"id\":\"i\",\"t\":1,\"args\":{\"z\":1e21,"
                              "\"y\":\"<&>\",\"x\":[1.5,null,false],\"w\":{\"b\":1,\"a\":2}}}");
    cw_observer_started(obs, 0, job, 1);
    flush_ok(obs, 0);
    redisReply *r = tl_cmd(rc_, "HGET %s:worker:abcd args", ns_);
    CHECK(r->type == REDIS_REPLY_STRING);
    if (r->type == REDIS_REPLY_STRING)
        CHECK_STR(r->str, "{\"w\":{\"a\":2,\"b\":1},\"x\":[1.5,null,false],"
                          "\"y\":\"\\u003c\\u0026\\u003e\",\"z\":1e+21}");
    freeReplyObject(r);
    cwork_job_free(job);
    finish(obs);
}

static void several_workers_in_one_flush(void)
{
    static const char *const three[] = {"w0", "w1", "w2"};
    cw_observer *obs = fresh("obsmany", three, 3);
    cwork_job *j1 = job_from("{\"name\":\"one\",\"id\":\"i1\",\"t\":1,\"args\":{\"n\":1}}");
    cwork_job *j2 = job_from("{\"name\":\"two\",\"id\":\"i2\",\"t\":1,\"args\":{\"n\":2}}");
    cwork_job *j3 = job_from("{\"name\":\"three\",\"id\":\"i3\",\"t\":1}");
    cw_observer_started(obs, 2, j3, 30);
    flush_ok(obs, 0);
    /* One flush: two workers start, the third finishes. */
    cw_observer_started(obs, 0, j1, 10);
    cw_observer_started(obs, 1, j2, 20);
    cw_observer_checkin(obs, 1, "i2", "w1 at work", 21);
    cw_observer_done(obs, 2);
    flush_ok(obs, 0);
    snprintf(expect_, sizeof expect_,
             "%s:worker:w0 hash ttl=86400 args={\"n\":1} | job_id=i1 | job_name=one | "
             "started_at=10\n"
             "%s:worker:w1 hash ttl=86400 args={\"n\":2} | checkin=w1 at work | checkin_at=21 | "
             "job_id=i2 | job_name=two | started_at=20\n",
             ns_, ns_);
    check_dump(expect_);
    cwork_job_free(j1);
    cwork_job_free(j2);
    cwork_job_free(j3);
    finish(obs);
}

/* A flush that fails keeps the changes dirty; the next one writes them. */
static void failed_flush_is_retried(void)
{
    tl_server s;
    if (tl_server_start(&s, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    const char *url = s.url;
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.connect_timeout_ms = 300;
    o.checkout_timeout_ms = 500;
    cwork_redis *r = cwork_redis_new(url, &o, NULL);
    CHECK(r != NULL);
    cw_observer *obs = fresh_on(r, "obsfail", abcd_, 1);
    cwork_job *job = job_from("{\"name\":\"foo\",\"id\":\"bar\",\"t\":1}");
    flush_ok(obs, 1); /* dials the connection */

    tl_server_stop(&s, SIGKILL);
    cw_observer_started(obs, 0, job, 1700000000);
    cwork_error err = {0};
    CHECK(cw_observer_flush(obs, 0, &err) < 0);
    CHECK(err.message[0] != '\0');
    CHECK_INT(atomic_load(&write_errors_), 1);

    CHECK_INT(tl_server_restart(&s, 0), 0);
    /* The pool may still be backing off from the failed dial: retry briefly. */
    int rc = -1;
    for (int i = 0; i < 20 && rc != 0; i++) {
        rc = cw_observer_flush(obs, 0, NULL);
        if (rc != 0) {
            struct timespec t = {0, 100 * 1000000L};
            nanosleep(&t, NULL);
        }
    }
    CHECK_INT(rc, 0);
    redisContext *raw = redisConnect("127.0.0.1", s.port);
    CHECK(raw && !raw->err);
    redisReply *rep = tl_cmd(raw, "HGET %s:worker:abcd job_id", ns_);
    CHECK(rep->type == REDIS_REPLY_STRING);
    if (rep->type == REDIS_REPLY_STRING) CHECK_STR(rep->str, "bar");
    freeReplyObject(rep);
    redisFree(raw);
    cwork_job_free(job);
    cw_observer_free(obs);
    cw_keys_clear(&keys_);
    cwork_redis_free(r);
    tl_server_destroy(&s);
}

/* ---- many executors at once */

#define THREADS 8
#define ROUNDS 2000

static cw_observer *shared_;
static cwork_job *round_jobs_[THREADS][2], *final_jobs_[THREADS];
static atomic_int running_;

static void *executor(void *arg)
{
    size_t w = (size_t)(uintptr_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        cwork_job *job = round_jobs_[w][i & 1];
        cw_observer_started(shared_, w, job, 1700000000 + i);
        cw_observer_checkin(shared_, w, cwork_job_id(job), "step", 1700000000 + i);
        /* A check-in aimed at a neighbour's slot: never its current job. */
        cw_observer_checkin(shared_, (w + 1) % THREADS, "nobody", "x", 1);
        if (i % 3 == 0) cw_observer_done(shared_, w);
    }
    cw_observer_started(shared_, w, final_jobs_[w], 1700001000 + (int64_t)w);
    char msg[32];
    snprintf(msg, sizeof msg, "last of %zu", w);
    cw_observer_checkin(shared_, w, cwork_job_id(final_jobs_[w]), msg, 1700002000);
    atomic_fetch_sub(&running_, 1);
    return NULL;
}

static void concurrent_observations(void)
{
    static const char *const ids[THREADS] = {"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7"};
    shared_ = fresh("obsthreads", ids, THREADS);
    char json[128];
    for (int w = 0; w < THREADS; w++) {
        for (int k = 0; k < 2; k++) {
            snprintf(json, sizeof json,
                     "{\"name\":\"job%d\",\"id\":\"id-%d-%d\",\"t\":1,\"args\":{\"k\":%d}}", w, w,
                     k, k);
            round_jobs_[w][k] = job_from(json);
        }
        snprintf(json, sizeof json, "{\"name\":\"final\",\"id\":\"fin-%d\",\"t\":1}", w);
        final_jobs_[w] = job_from(json);
    }
    atomic_store(&running_, THREADS);
    pthread_t t[THREADS];
    for (int w = 0; w < THREADS; w++)
        CHECK_INT(pthread_create(&t[w], NULL, executor, (void *)(uintptr_t)w), 0);
    int flushes = 0;
    while (atomic_load(&running_) > 0) {
        CHECK_INT(cw_observer_flush(shared_, flushes % 7 == 0, NULL), 0);
        flushes++;
    }
    for (int w = 0; w < THREADS; w++)
        pthread_join(t[w], NULL);
    flush_ok(shared_, 0);
    CHECK(flushes > 0);

    char *p = expect_;
    for (int w = 0; w < THREADS; w++)
        p += snprintf(p, sizeof expect_ - (size_t)(p - expect_),
                      "%s:worker:w%d hash ttl=86400 args= | checkin=last of %d | "
                      "checkin_at=1700002000 | job_id=fin-%d | job_name=final | "
                      "started_at=%d\n",
                      ns_, w, w, w, 1700001000 + w);
    check_dump(expect_);
    CHECK_INT(atomic_load(&mismatches_), THREADS * ROUNDS);
    CHECK_INT(atomic_load(&write_errors_) + atomic_load(&other_errors_), 0);
    for (int w = 0; w < THREADS; w++) {
        cwork_job_free(round_jobs_[w][0]);
        cwork_job_free(round_jobs_[w][1]);
        cwork_job_free(final_jobs_[w]);
    }
    finish(shared_);
}

int main(void)
{
    rc_ = tl_redis_connect();
    cwork_error err = {0};
    redis_ = cwork_redis_new(tl_redis_url(), NULL, &err);
    if (!redis_) {
        fprintf(stderr, "cwork_redis_new: %s\n", err.message);
        return 1;
    }
    cwork_set_logger(test_logger, NULL, CWORK_LOG_DEBUG);
    RUN(started_then_checkin_then_done);
    RUN(next_job_carries_no_stale_checkin);
    RUN(unchanged_workers_are_not_written);
    RUN(mismatched_checkin_is_ignored);
    RUN(absent_or_empty_args_write_empty_string);
    RUN(args_are_go_json);
    RUN(several_workers_in_one_flush);
    RUN(failed_flush_is_retried);
    RUN(concurrent_observations);
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
