/* Each enqueue variant against a real Redis, checked over the whole namespace:
 * keys, types, values, scores and TTLs (PROTOCOL §4). */
#include "cwork.h"
#include "testlib.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];
static char expect_[8192];

static cwork_enqueuer *fresh_enqueuer(const char *tag)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, &err);
    CHECK(enq != NULL);
    return enq;
}

static void check_dump(const char *want)
{
    char *got = tl_ns_dump(rc_, ns_);
    CHECK_STR(got, want);
    free(got);
}

static cwork_args *email_args(void)
{
    cwork_args *a = cwork_args_new();
    cwork_args_set_string(a, "address", "test@example.com");
    cwork_args_set_string(a, "subject", "hello world");
    cwork_args_set_int64(a, "customer_id", 4);
    return a;
}

static void enqueue_pushes_job_and_registers_name(void)
{
    cwork_enqueuer *enq = fresh_enqueuer("enq");
    cwork_args *args = email_args();
    cwork_job *job = NULL;
    cwork_error err = {0};
    CHECK_INT(cwork_enqueue(enq, "send_email", args, &job, &err), CWORK_OK);
    CHECK(job != NULL);
    CHECK_STR(cwork_job_name(job), "send_email");
    CHECK_INT(strlen(cwork_job_id(job)), 24);
    CHECK_INT(cwork_job_run_at(job), 0);
    snprintf(expect_, sizeof expect_,
             "%s:jobs:send_email list {\"name\":\"send_email\",\"id\":\"%s\",\"t\":%lld,"
             "\"args\":{\"address\":\"test@example.com\",\"customer_id\":4,"
             "\"subject\":\"hello world\"}}\n"
             "%s:known_jobs set send_email\n",
             ns_, cwork_job_id(job), (long long)cwork_job_enqueued_at(job), ns_);
    check_dump(expect_);
    size_t raw_len;
    const char *raw = cwork_job_raw(job, &raw_len);
    CHECK(raw_len > 0 && strstr(expect_, raw) != NULL);
    cwork_job_free(job);
    cwork_args_free(args);
    tl_ns_delete(rc_, ns_);
    cwork_enqueuer_free(enq);
}

static void enqueue_without_args_writes_null(void)
{
    cwork_enqueuer *enq = fresh_enqueuer("enqnull");
    cwork_job *job = NULL;
    CHECK_INT(cwork_enqueue(enq, "noargs", NULL, &job, NULL), CWORK_OK);
    snprintf(expect_, sizeof expect_,
             "%s:jobs:noargs list {\"name\":\"noargs\",\"id\":\"%s\",\"t\":%lld,\"args\":null}\n"
             "%s:known_jobs set noargs\n",
             ns_, cwork_job_id(job), (long long)cwork_job_enqueued_at(job), ns_);
    check_dump(expect_);
    cwork_job_free(job);
    tl_ns_delete(rc_, ns_);
    cwork_enqueuer_free(enq);
}

static void enqueue_in_adds_to_scheduled_with_run_at_score(void)
{
    cwork_enqueuer *enq = fresh_enqueuer("enqin");
    cwork_args *args = cwork_args_new();
    cwork_job *job = NULL, *late = NULL;
    CHECK_INT(cwork_enqueue_in(enq, "later", 300, args, &job, NULL), CWORK_OK);
    CHECK_INT(cwork_job_run_at(job), cwork_job_enqueued_at(job) + 300);
    /* A negative delay keeps Go's score: already due. */
    CHECK_INT(cwork_enqueue_in(enq, "later", -10, args, &late, NULL), CWORK_OK);
    CHECK_INT(cwork_job_run_at(late), cwork_job_enqueued_at(late) - 10);
    snprintf(expect_, sizeof expect_,
             "%s:known_jobs set later\n"
             "%s:scheduled zset {\"name\":\"later\",\"id\":\"%s\",\"t\":%lld,\"args\":{}}=%lld"
             " | {\"name\":\"later\",\"id\":\"%s\",\"t\":%lld,\"args\":{}}=%lld\n",
             ns_, ns_, cwork_job_id(late), (long long)cwork_job_enqueued_at(late),
             (long long)cwork_job_run_at(late), cwork_job_id(job),
             (long long)cwork_job_enqueued_at(job), (long long)cwork_job_run_at(job));
    check_dump(expect_);
    cwork_job_free(job);
    cwork_job_free(late);
    cwork_args_free(args);
    tl_ns_delete(rc_, ns_);
    cwork_enqueuer_free(enq);
}

static void enqueue_unique_sets_guard_and_refuses_duplicate(void)
{
    cwork_enqueuer *enq = fresh_enqueuer("uniq");
    cwork_args *args = cwork_args_new();
    cwork_args_set_string(args, "object_id_", "123");
    cwork_job *job = NULL, *dup = (cwork_job *)1;
    CHECK_INT(cwork_enqueue_unique(enq, "clear_cache", args, &job, NULL), CWORK_OK);
    CHECK(cwork_job_unique(job));
    snprintf(expect_, sizeof expect_,
             "%s:jobs:clear_cache list {\"name\":\"clear_cache\",\"id\":\"%s\",\"t\":%lld,"
             "\"args\":{\"object_id_\":\"123\"},\"unique\":true}\n"
             "%s:known_jobs set clear_cache\n"
             "%s:unique:clear_cache:{\"object_id_\":\"123\"}\\x0a string ttl=86400 1\n",
             ns_, cwork_job_id(job), (long long)cwork_job_enqueued_at(job), ns_, ns_);
    check_dump(expect_);
    CHECK_INT(cwork_enqueue_unique(enq, "clear_cache", args, &dup, NULL), CWORK_DUPLICATE);
    CHECK(dup == NULL);
    check_dump(expect_); /* nothing changed */
    cwork_job_free(job);
    cwork_args_free(args);
    tl_ns_delete(rc_, ns_);
    cwork_enqueuer_free(enq);
}

static void enqueue_unique_in_and_nil_args_guard(void)
{
    cwork_enqueuer *enq = fresh_enqueuer("uniqin");
    cwork_job *job = NULL;
    CHECK_INT(cwork_enqueue_unique_in(enq, "clear_cache", 60, NULL, &job, NULL), CWORK_OK);
    snprintf(expect_, sizeof expect_,
             "%s:known_jobs set clear_cache\n"
             "%s:scheduled zset {\"name\":\"clear_cache\",\"id\":\"%s\",\"t\":%lld,"
             "\"args\":null,\"unique\":true}=%lld\n"
             "%s:unique:clear_cache: string ttl=86400 1\n",
             ns_, ns_, cwork_job_id(job), (long long)cwork_job_enqueued_at(job),
             (long long)cwork_job_run_at(job), ns_);
    check_dump(expect_);
    CHECK_INT(cwork_enqueue_unique_in(enq, "clear_cache", 60, NULL, NULL, NULL), CWORK_DUPLICATE);
    CHECK_INT(cwork_enqueue_unique(enq, "clear_cache", NULL, NULL, NULL), CWORK_DUPLICATE);
    check_dump(expect_);
    cwork_job_free(job);
    tl_ns_delete(rc_, ns_);
    cwork_enqueuer_free(enq);
}

static void known_jobs_cache_skips_repeated_sadd(void)
{
    cwork_enqueuer *enq = fresh_enqueuer("cache");
    CHECK_INT(cwork_enqueue(enq, "a", NULL, NULL, NULL), CWORK_OK);
    char key[128];
    snprintf(key, sizeof key, "%s:known_jobs", ns_);
    freeReplyObject(tl_cmd(rc_, "DEL %s", key));
    /* Within 300 s the enqueuer trusts its cache, as Go's does: no SADD is sent. */
    CHECK_INT(cwork_enqueue(enq, "a", NULL, NULL, NULL), CWORK_OK);
    redisReply *r = tl_cmd(rc_, "EXISTS %s", key);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    /* A fresh enqueuer has an empty cache. */
    cwork_enqueuer *enq2 = cwork_enqueuer_new(redis_, ns_, NULL);
    CHECK_INT(cwork_enqueue(enq2, "a", NULL, NULL, NULL), CWORK_OK);
    r = tl_cmd(rc_, "SMEMBERS %s", key);
    CHECK_INT(r->elements, 1);
    freeReplyObject(r);
    cwork_enqueuer_free(enq2);
    tl_ns_delete(rc_, ns_);
    cwork_enqueuer_free(enq);
}

static void bad_input_writes_nothing(void)
{
    cwork_enqueuer *enq = fresh_enqueuer("bad");
    cwork_error err = {0};
    cwork_job *job = (cwork_job *)1;
    CHECK_INT(cwork_enqueue(enq, "a,b", NULL, &job, &err), CWORK_EINVAL);
    CHECK(job == NULL);
    CHECK(strstr(err.message, "','") != NULL);
    CHECK_INT(cwork_enqueue(enq, "", NULL, NULL, NULL), CWORK_EINVAL);
    CHECK_INT(cwork_enqueue(enq, "x:lock", NULL, NULL, NULL), CWORK_EINVAL);
    cwork_args *args = cwork_args_new();
    CHECK_INT(cwork_args_set_float64(args, "nan", NAN), CWORK_EJSON);
    CHECK_INT(cwork_args_set_float64(args, "inf", INFINITY), CWORK_EJSON);
    char *big = malloc(300);
    memset(big, 'x', 299);
    big[299] = '\0';
    cwork_args_set_string(args, "payload", big);
    free(big);
    cwork_enqueuer_set_max_job_bytes(enq, 200);
    CHECK_INT(cwork_enqueue(enq, "big", args, NULL, &err), CWORK_ETOOBIG);
    CHECK(strstr(err.message, "limit") != NULL);
    CHECK_INT(cwork_enqueue_unique_in(enq, "big", 5, args, NULL, NULL), CWORK_ETOOBIG);
    check_dump("");
    cwork_args_free(args);
    cwork_enqueuer_free(enq);
}

/* Jobs built in one test carry one `t` only if they are built within one second. */
static void wait_for_fresh_second(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (ts.tv_nsec > 500 * 1000000L) {
        struct timespec d = {0, 1000000000L - ts.tv_nsec + 1000000L};
        nanosleep(&d, NULL);
    }
}

static void batch_writes_everything_in_one_round_trip(void)
{
    cwork_enqueuer *enq = fresh_enqueuer("batch");
    CHECK_INT(cwork_enqueue_unique(enq, "u", NULL, NULL, NULL), CWORK_OK); /* pre-existing */
    tl_ns_delete(rc_, ns_);
    freeReplyObject(tl_cmd(rc_, "SET %s:unique:u: 1", ns_)); /* keep only the guard */
    cwork_batch *b = cwork_batch_new(enq);
    cwork_args *args = cwork_args_new();
    wait_for_fresh_second();
    cwork_error err = {0};
    for (int i = 0; i < 3; i++) {
        cwork_args_set_int64(args, "i", i);
        CHECK_INT(cwork_batch_add(b, i == 1 ? "beta" : "alpha", args, 0, 0, &err), 0);
    }
    CHECK_INT(cwork_batch_add(b, "later", NULL, 100, CWORK_BATCH_IN, &err), 0);
    CHECK_INT(cwork_batch_add(b, "u", NULL, 0, CWORK_BATCH_UNIQUE, &err), 0);  /* dup */
    CHECK_INT(cwork_batch_add(b, "v", args, 0, CWORK_BATCH_UNIQUE, &err), 0);  /* new */
    CHECK_INT(cwork_batch_add(b, "bad,name", NULL, 0, 0, &err), CWORK_EINVAL); /* refused */
    CHECK_INT(cwork_batch_count(b), 6);
    CHECK_INT(cwork_enqueue_batch(b, &err), 0);
    const char *ids[6];
    int want[] = {CWORK_OK, CWORK_OK, CWORK_OK, CWORK_OK, CWORK_DUPLICATE, CWORK_OK};
    for (size_t i = 0; i < 6; i++)
        CHECK_INT(cwork_batch_status(b, i, &ids[i]), want[i]);
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:scheduled 0 -1 WITHSCORES", ns_);
    CHECK_INT(r->elements, 2);
    cwork_job *sched = NULL;
    CHECK_INT(cwork_job_decode(r->element[0]->str, r->element[0]->len, &sched, NULL), 0);
    long long t = (long long)cwork_job_enqueued_at(sched);
    CHECK_INT(atoll(r->element[1]->str), t + 100);
    freeReplyObject(r);
    cwork_job_free(sched);
    snprintf(expect_, sizeof expect_,
             "%s:jobs:alpha list {\"name\":\"alpha\",\"id\":\"%s\",\"t\":%lld,\"args\":{\"i\":2}}"
             " | {\"name\":\"alpha\",\"id\":\"%s\",\"t\":%lld,\"args\":{\"i\":0}}\n"
             "%s:jobs:beta list {\"name\":\"beta\",\"id\":\"%s\",\"t\":%lld,\"args\":{\"i\":1}}\n"
             "%s:jobs:v list {\"name\":\"v\",\"id\":\"%s\",\"t\":%lld,\"args\":{\"i\":2},"
             "\"unique\":true}\n"
             "%s:known_jobs set alpha | beta | later | v\n"
             "%s:scheduled zset {\"name\":\"later\",\"id\":\"%s\",\"t\":%lld,\"args\":null}=%lld\n"
             "%s:unique:u: string 1\n"
             "%s:unique:v:{\"i\":2}\\x0a string ttl=86400 1\n",
             ns_, ids[2], t, ids[0], t, ns_, ids[1], t, ns_, ids[5], t, ns_, ns_, ids[3], t,
             t + 100, ns_, ns_);
    check_dump(expect_);
    cwork_batch_free(b);
    cwork_args_free(args);
    tl_ns_delete(rc_, ns_);
    cwork_enqueuer_free(enq);
}

static void unreachable_redis_is_an_error_not_a_hang(void)
{
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.connect_timeout_ms = 200;
    o.checkout_timeout_ms = 300;
    cwork_error err = {0};
    cwork_redis *down = cwork_redis_new("redis://127.0.0.1:1", &o, &err);
    CHECK(down != NULL);
    cwork_enqueuer *enq = cwork_enqueuer_new(down, "work", &err);
    cwork_job *job = (cwork_job *)1;
    int rc = cwork_enqueue(enq, "x", NULL, &job, &err);
    CHECK(rc == CWORK_EREDIS || rc == CWORK_ETIMEOUT);
    CHECK(job == NULL);
    CHECK(err.message[0] != '\0');
    cwork_enqueuer_free(enq);
    cwork_redis_free(down);
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
    RUN(enqueue_pushes_job_and_registers_name);
    RUN(enqueue_without_args_writes_null);
    RUN(enqueue_in_adds_to_scheduled_with_run_at_score);
    RUN(enqueue_unique_sets_guard_and_refuses_duplicate);
    RUN(enqueue_unique_in_and_nil_args_guard);
    RUN(known_jobs_cache_skips_repeated_sadd);
    RUN(bad_input_writes_nothing);
    RUN(batch_writes_everything_in_one_round_trip);
    RUN(unreachable_redis_is_an_error_not_a_hang);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
