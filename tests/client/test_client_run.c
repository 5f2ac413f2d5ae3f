/* The admin client's run-now of retry and scheduled jobs and its queue clearing,
 * against a real Redis: every case writes the namespace by hand (Go's bytes), calls the
 * client and checks the whole namespace afterwards. */
#include "client_testutil.h"

/* ---------------------------------------------------------------- run one */

static void run_now_moves_a_retry_job_with_t_now_keeping_fails_and_dropping_d(void)
{
    cwork_client *cl = fresh("rn");
    cmd("SADD %s:known_jobs send_email", ns_);
    cmd("ZADD %s:retry 1900000000 %s", ns_,
        "{\"name\":\"send_email\",\"id\":\"j1\",\"t\":1700000000,\"args\":{\"to\":\"a@b.c\"},"
        "\"fails\":2,\"err\":\"boom\",\"failed_at\":1700000100,\"d\":1700000060,"
        "\"trace\":{\"traceparent\":\"00-ab-cd-01\"}}");
    cmd("ZADD %s:retry 1900000000 %s", ns_, "{\"name\":\"send_email\",\"id\":\"j2\",\"t\":5}");
    cmd("ZADD %s:retry 1900000000 %s", ns_, "not json"); /* at the same score: passed by */
    long long before = now_();
    CHECK_INT(cwork_client_run_now(cl, CWORK_SET_RETRY, 1900000000, "j1", NULL), 0);
    long long after = now_();
    char *moved = list_member("jobs:send_email");
    cwork_job *job = NULL;
    CHECK_INT(cwork_job_decode(moved, strlen(moved), &job, NULL), 0);
    if (job) {
        CHECK_STR(cwork_job_id(job), "j1");
        CHECK(cwork_job_enqueued_at(job) >= before && cwork_job_enqueued_at(job) <= after);
        CHECK_INT(cwork_job_fails(job), 2); /* still a retried job, as the requeuer keeps it */
        CHECK_STR(cwork_job_last_error(job), "boom");
        CHECK_INT(cwork_job_failed_at(job), 1700000100);
        CHECK_INT(cwork_job_periodic_deadline(job), 0); /* d dropped */
        CHECK(strstr(moved, "\"traceparent\":\"00-ab-cd-01\"") != NULL);
        cwork_job_free(job);
    }
    snprintf(want_, sizeof want_,
             "NS:jobs:send_email list %s\n"
             "NS:known_jobs set send_email\n"
             "NS:retry zset not json=1900000000 | "
             "{\"name\":\"send_email\",\"id\":\"j2\",\"t\":5}=1900000000\n",
             moved);
    CHECK_DUMP(want_);
    free(moved);
    cwork_error err = {0};
    CHECK_INT(cwork_client_run_now(cl, CWORK_SET_RETRY, 1900000000, "j1", &err), CWORK_ENOTFOUND);
    CHECK_STR(err.message, "nothing run");
    CHECK_INT(cwork_client_run_now(cl, CWORK_SET_SCHEDULED, 1900000000, "j2", &err),
              CWORK_ENOTFOUND); /* another set */
    CHECK_DUMP(want_);
    done(cl);
}

static void run_now_of_a_unique_scheduled_job_keeps_its_guard(void)
{
    cwork_client *cl = fresh("rns");
    cmd("SADD %s:known_jobs clear_cache", ns_);
    cmd("ZADD %s:scheduled 2000000000 %s", ns_,
        "{\"name\":\"clear_cache\",\"id\":\"u1\",\"t\":1,\"args\":{\"object_id_\":\"123\"},"
        "\"unique\":true}");
    cmd("SET %s:unique:clear_cache:%s 1 EX 86400", ns_, "{\"object_id_\":\"123\"}\n");
    cmd("LPUSH %s:jobs:clear_cache %s", ns_, "{\"name\":\"clear_cache\",\"id\":\"old\",\"t\":1}");
    CHECK_INT(cwork_client_run_now(cl, CWORK_SET_SCHEDULED, 2000000000, "u1", NULL), 0);
    redisReply *r = tl_cmd(rc_, "LINDEX %s:jobs:clear_cache 0", ns_);
    CHECK(r->type == REDIS_REPLY_STRING && strstr(r->str, "\"id\":\"u1\"") &&
          strstr(r->str, "\"unique\":true"));
    /* The guard stays: the job waits in its queue now, which the guard covers. */
    snprintf(want_, sizeof want_,
             "NS:jobs:clear_cache list %s | {\"name\":\"clear_cache\",\"id\":\"old\",\"t\":1}\n"
             "NS:known_jobs set clear_cache\n"
             "NS:unique:clear_cache:{\"object_id_\":\"123\"}\\x0a string ttl=86400 1\n",
             r->type == REDIS_REPLY_STRING ? r->str : "?");
    freeReplyObject(r);
    CHECK_DUMP(want_);
    done(cl);
}

static void run_now_leaves_unknown_names_damaged_queues_and_dead_jobs_alone(void)
{
    cwork_client *cl = fresh("rnu");
    cmd("SADD %s:known_jobs broken", ns_);
    cmd("ZADD %s:retry 100 %s", ns_, "{\"name\":\"ghost\",\"id\":\"g\",\"t\":1}");
    cmd("ZADD %s:retry 100 %s", ns_, "{\"name\":\"broken\",\"id\":\"b\",\"t\":1}");
    cmd("SET %s:jobs:broken %s", ns_, "not a list");
    cmd("ZADD %s:dead 100 %s", ns_, "{\"name\":\"broken\",\"id\":\"d\",\"t\":1}");
    char *before = dump_now();
    cwork_error err = {0};
    CHECK_INT(cwork_client_run_now(cl, CWORK_SET_RETRY, 100, "g", &err), CWORK_ENOTFOUND);
    CHECK_STR(err.message, "not run: the job's name is not in known_jobs (no pool runs it); it "
                           "stays where it was");
    CHECK_INT(cwork_client_run_now(cl, CWORK_SET_RETRY, 100, "b", &err), CWORK_EREDIS);
    CHECK(strstr(err.message, "not run, it stays where it was: ") == err.message);
    CHECK(strstr(err.message, ":jobs:broken: WRONGTYPE") != NULL);
    CHECK_INT(cwork_client_run_now(cl, CWORK_SET_DEAD, 100, "d", &err), CWORK_EINVAL);
    CHECK_INT(cwork_client_run_now(cl, CWORK_SET_RETRY, 100, NULL, &err), CWORK_EINVAL);
    char *after = dump_now();
    CHECK_STR(after, before);
    free(before);
    free(after);
    done(cl);
}

/* ---------------------------------------------------------------- run all */

static void run_all_with_a_name_then_all_leaves_what_cannot_run(void)
{
    cwork_client *cl = fresh("rna");
    cmd("SADD %s:known_jobs a b broken", ns_);
    cmd("ZADD %s:retry 100 %s", ns_, "{\"name\":\"a\",\"id\":\"a1\",\"t\":1,\"fails\":1}");
    cmd("ZADD %s:retry 101 %s", ns_, "{\"name\":\"b\",\"id\":\"b1\",\"t\":1,\"fails\":1}");
    cmd("ZADD %s:retry 102 %s", ns_, "{\"name\":\"ghost\",\"id\":\"g1\",\"t\":1}");
    cmd("ZADD %s:retry 103 %s", ns_, "undecodable");
    cmd("ZADD %s:retry 104 %s", ns_, "{\"name\":\"broken\",\"id\":\"x1\",\"t\":1}");
    cmd("ZADD %s:retry 2000000000 %s", ns_, "{\"name\":\"a\",\"id\":\"a2\",\"t\":1}");
    cmd("ZADD %s:scheduled 100 %s", ns_, "{\"name\":\"a\",\"id\":\"s1\",\"t\":1}");
    cmd("HSET %s:jobs:broken f v", ns_);
    int64_t count = -1, stayed = -1;
    CHECK_INT(cwork_client_run_all_now(cl, CWORK_SET_RETRY, "a", &count, &stayed, NULL), 0);
    CHECK_INT(count, 2); /* a1, and a2 although it is due in 2033 */
    CHECK_INT(stayed, 0);
    redisReply *r = tl_cmd(rc_, "LRANGE %s:jobs:a 0 -1", ns_);
    CHECK_INT(r->elements, 2);
    if (r->elements == 2) { /* the lowest score went first: it is at the right end */
        CHECK(strstr(r->element[0]->str, "\"id\":\"a2\"") != NULL);
        CHECK(strstr(r->element[1]->str, "\"id\":\"a1\"") != NULL);
    }
    CHECK_INT(cwork_client_run_all_now(cl, CWORK_SET_RETRY, NULL, &count, &stayed, NULL), 0);
    CHECK_INT(count, 1);  /* b1 */
    CHECK_INT(stayed, 2); /* the ghost and the job whose queue is a hash */
    char *b1 = list_member("jobs:b");
    snprintf(want_, sizeof want_,
             "NS:jobs:a list %s | %s\n"
             "NS:jobs:b list %s\n"
             "NS:jobs:broken hash f=v\n"
             "NS:known_jobs set a | b | broken\n"
             "NS:retry zset {\"name\":\"ghost\",\"id\":\"g1\",\"t\":1}=102 | undecodable=103 | "
             "{\"name\":\"broken\",\"id\":\"x1\",\"t\":1}=104\n"
             "NS:scheduled zset {\"name\":\"a\",\"id\":\"s1\",\"t\":1}=100\n",
             r->elements == 2 ? r->element[0]->str : "?",
             r->elements == 2 ? r->element[1]->str : "?", b1);
    freeReplyObject(r);
    CHECK_DUMP(want_);
    free(b1);
    CHECK_INT(cwork_client_run_all_now(cl, CWORK_SET_DEAD, NULL, &count, NULL, NULL), CWORK_EINVAL);
    done(cl);
}

/* More than a batch, with a batch of members that stay in front: every job behind them
 * still runs, in score order. */
static void run_all_goes_past_a_batch_that_stays(void)
{
    cwork_client *cl = fresh("rnb");
    cmd("SADD %s:known_jobs a", ns_);
    for (int i = 0; i < 1001; i++)
        cmd("ZADD %s:scheduled %d {\"name\":\"ghost\",\"id\":\"g%d\",\"t\":1}", ns_, 1000 + i, i);
    for (int i = 0; i < 1500; i++)
        cmd("ZADD %s:scheduled %d {\"name\":\"a\",\"id\":\"a%d\",\"t\":1}", ns_, 5000 + i, i);
    int64_t count = 0, stayed = 0;
    CHECK_INT(cwork_client_run_all_now(cl, CWORK_SET_SCHEDULED, NULL, &count, &stayed, NULL), 0);
    CHECK_INT(count, 1500);
    CHECK_INT(stayed, 1001);
    redisReply *r = tl_cmd(rc_, "LLEN %s:jobs:a", ns_);
    CHECK_INT(r->integer, 1500);
    freeReplyObject(r);
    r = tl_cmd(rc_, "LINDEX %s:jobs:a -1", ns_);
    CHECK(strstr(r->str, "\"id\":\"a0\"") != NULL); /* runs first */
    freeReplyObject(r);
    r = tl_cmd(rc_, "ZCOUNT %s:scheduled 1000 2000", ns_);
    CHECK_INT(r->integer, 1001);
    freeReplyObject(r);
    char *dump = dump_now();
    int lines = 0;
    for (const char *p = dump; *p; p++)
        lines += *p == '\n';
    CHECK_INT(lines, 3); /* jobs:a, known_jobs, scheduled */
    free(dump);
    done(cl);
}

/* ---------------------------------------------------------------- clear a queue */

static void clear_queue_deletes_the_waiting_jobs_and_their_unique_guards(void)
{
    cwork_client *cl = fresh("cqc");
    cmd("SADD %s:known_jobs x", ns_);
    cmd("LPUSH %s:jobs:x %s", ns_,
        "{\"name\":\"x\",\"id\":\"u1\",\"t\":1,\"args\":{\"object_id_\":\"123\"},\"unique\":true}");
    /* cjson's form, as the requeuer leaves it: the guard is still Go's encoding */
    cmd("LPUSH %s:jobs:x %s", ns_,
        "{\"unique\":true,\"args\":{\"b\":2,\"a\":\"<&>\"},\"id\":\"u2\",\"name\":\"x\",\"t\":1}");
    cmd("LPUSH %s:jobs:x %s", ns_, "{\"name\":\"x\",\"id\":\"plain\",\"t\":1,\"args\":{}}");
    cmd("LPUSH %s:jobs:x %s", ns_, "not json, but a unique mess");
    cmd("SET %s:unique:x:%s 1 EX 86400", ns_, "{\"object_id_\":\"123\"}\n");
    cmd("SET %s:unique:x:%s 1 EX 86400", ns_, "{\"a\":\"\\u003c\\u0026\\u003e\",\"b\":2}\n");
    /* the guard of a unique job scheduled for later, which stays */
    cmd("SET %s:unique:x:%s 1 EX 86400", ns_, "{}\n");
    cmd("ZADD %s:scheduled 2000000000 %s", ns_,
        "{\"name\":\"x\",\"id\":\"later\",\"t\":1,\"args\":{},\"unique\":true}");
    cmd("ZADD %s:retry 100 %s", ns_, "{\"name\":\"x\",\"id\":\"r\",\"t\":1}");
    int64_t count = -1;
    CHECK_INT(cwork_client_clear_queue(cl, "x", &count, NULL), 0);
    CHECK_INT(count, 4);
    CHECK_DUMP("NS:known_jobs set x\n"
               "NS:retry zset {\"name\":\"x\",\"id\":\"r\",\"t\":1}=100\n"
               "NS:scheduled zset {\"name\":\"x\",\"id\":\"later\",\"t\":1,\"args\":{},"
               "\"unique\":true}=2000000000\n"
               "NS:unique:x:{}\\x0a string ttl=86400 1\n");
    CHECK_INT(cwork_client_clear_queue(cl, "x", &count, NULL), 0);
    CHECK_INT(count, 0);
    CHECK_INT(cwork_client_clear_queue(cl, "never_seen", &count, NULL), 0);
    CHECK_INT(count, 0);
    done(cl);
}

static void clear_queue_reads_a_long_queue_in_parts(void)
{
    cwork_client *cl = fresh("cql");
    for (int i = 0; i < 2500; i++)
        cmd("LPUSH %s:jobs:y {\"name\":\"y\",\"id\":\"p%d\",\"t\":1,\"args\":{\"i\":%d}%s}", ns_, i,
            i, i == 2100 ? ",\"unique\":true" : "");
    cmd("SET %s:unique:y:%s 1 EX 86400", ns_, "{\"i\":2100}\n");
    int64_t count = 0;
    CHECK_INT(cwork_client_clear_queue(cl, "y", &count, NULL), 0);
    CHECK_INT(count, 2500);
    CHECK_DUMP("");
    done(cl);
}

static void clear_queue_leaves_a_key_of_another_type(void)
{
    cwork_client *cl = fresh("cqt");
    cmd("HSET %s:jobs:z f v", ns_);
    cwork_error err = {0};
    int64_t count = -1;
    CHECK_INT(cwork_client_clear_queue(cl, "z", &count, &err), CWORK_ETYPE);
    CHECK(strstr(err.message, ":jobs:z holds a hash, not a queue: left as it is") != NULL);
    CHECK_INT(count, 0);
    CHECK_DUMP("NS:jobs:z hash f=v\n");
    CHECK_INT(cwork_client_clear_queue(cl, NULL, NULL, &err), CWORK_EINVAL);
    done(cl);
}

static void unreachable_redis_is_an_error_value(void)
{
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.connect_timeout_ms = 200;
    o.checkout_timeout_ms = 200;
    cwork_redis *dead = cwork_redis_new("redis://127.0.0.1:1", &o, NULL);
    cwork_client *cl = cwork_client_new(dead, "x", NULL);
    cwork_error err = {0};
    int64_t count = 7;
    CHECK(cwork_client_run_now(cl, CWORK_SET_RETRY, 1, "x", &err) < 0);
    CHECK(cwork_client_run_all_now(cl, CWORK_SET_SCHEDULED, NULL, &count, NULL, &err) < 0);
    CHECK_INT(count, 0);
    CHECK(cwork_client_clear_queue(cl, "x", &count, &err) < 0);
    cwork_client_free(cl);
    cwork_redis_free(dead);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    RUN(run_now_moves_a_retry_job_with_t_now_keeping_fails_and_dropping_d);
    RUN(run_now_of_a_unique_scheduled_job_keeps_its_guard);
    RUN(run_now_leaves_unknown_names_damaged_queues_and_dead_jobs_alone);
    RUN(run_all_with_a_name_then_all_leaves_what_cannot_run);
    RUN(run_all_goes_past_a_batch_that_stays);
    RUN(clear_queue_deletes_the_waiting_jobs_and_their_unique_guards);
    RUN(clear_queue_reads_a_long_queue_in_parts);
    RUN(clear_queue_leaves_a_key_of_another_type);
    RUN(unreachable_redis_is_an_error_value);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
