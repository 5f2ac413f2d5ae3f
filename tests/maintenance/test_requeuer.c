/* The scheduled and retry requeuers (PROTOCOL §8), one call of cw_requeue_due per case,
 * then the namespace checked. */
#include "cwork.h"
#include "keys.h"
#include "redis.h"
#include "requeuer.h"
#include "testlib.h"

#include <stdlib.h>
#include <time.h>

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];
static cw_keys keys_;

static void fresh(const char *tag)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    cw_keys_clear(&keys_);
    cw_keys_init(&keys_, ns_);
}

static size_t requeue_as(cwork_go_flavor flavor, const char *const *names, size_t n)
{
    size_t moved = 0;
    cwork_error err = {0};
    if (cw_requeue_due(redis_, &keys_, flavor, names, n, &moved, &err) != 0)
        tl_fail(__FILE__, __LINE__, "cw_requeue_due: %s", err.message);
    return moved;
}

static size_t requeue(const char *const *names, size_t n)
{
    return requeue_as(CWORK_GO_FORK, names, n);
}

static long long now_(void)
{
    return (long long)time(NULL);
}

static void due_jobs_move_with_t_rewritten_and_future_ones_stay(void)
{
    fresh("rq");
    long long now = now_();
    freeReplyObject(tl_cmd(rc_, "ZADD %s:scheduled %lld %s", ns_, now - 5,
                           "{\"name\":\"a\",\"id\":\"x\",\"t\":1,\"args\":{}}"));
    freeReplyObject(tl_cmd(rc_, "ZADD %s:scheduled %lld %s", ns_, now + 3600,
                           "{\"name\":\"a\",\"id\":\"later\",\"t\":1,\"args\":{}}"));
    freeReplyObject(tl_cmd(rc_, "ZADD %s:retry %lld %s", ns_, now - 1,
                           "{\"name\":\"a\",\"id\":\"r\",\"t\":1,\"args\":null,\"fails\":1,"
                           "\"err\":\"boom\",\"failed_at\":5}"));
    const char *names[] = {"a"};
    CHECK_INT(requeue(names, 1), 2);
    redisReply *r = tl_cmd(rc_, "LRANGE %s:jobs:a 0 -1", ns_);
    CHECK_INT(r->elements, 2);
    for (size_t i = 0; i < r->elements; i++) {
        cwork_job *j = NULL;
        CHECK_INT(cwork_job_decode(r->element[i]->str, r->element[i]->len, &j, NULL), 0);
        long long t = cwork_job_enqueued_at(j);
        CHECK(t >= now && t <= now + 2);
        if (!strcmp(cwork_job_id(j), "x")) {
            /* cjson's form, as Go's requeuer writes it (PROTOCOL §8). */
            char want[128];
            snprintf(want, sizeof want, "{\"id\":\"x\",\"t\":%lld,\"name\":\"a\",\"args\":{}}", t);
            CHECK_STR(r->element[i]->str, want);
        } else {
            CHECK_STR(cwork_job_id(j), "r");
            CHECK_INT(cwork_job_fails(j), 1); /* a retried job keeps its failure record */
        }
        cwork_job_free(j);
    }
    freeReplyObject(r);
    r = tl_cmd(rc_, "ZRANGE %s:scheduled 0 -1", ns_);
    CHECK(r->elements == 1 && strstr(r->element[0]->str, "later"));
    freeReplyObject(r);
    r = tl_cmd(rc_, "EXISTS %s:retry %s:dead", ns_, ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

static void expired_periodic_instances_are_discarded_and_stale_tails_dropped(void)
{
    fresh("rqd");
    long long now = now_();
    /* Due but past its deadline: discarded. */
    freeReplyObject(tl_cmd(rc_, "ZADD %s:scheduled %lld %s", ns_, now - 100,
                           "{\"name\":\"p\",\"id\":\"old\",\"t\":1,\"args\":null,\"d\":5}"));
    /* Due and within its deadline: moved. */
    char fresh_job[160];
    snprintf(fresh_job, sizeof fresh_job,
             "{\"name\":\"p\",\"id\":\"new\",\"t\":1,\"args\":null,\"d\":%lld}", now + 60);
    freeReplyObject(tl_cmd(rc_, "ZADD %s:scheduled %lld %s", ns_, now - 1, fresh_job));
    /* The queue's oldest entry is an expired instance: dropped when a job moves in. */
    freeReplyObject(tl_cmd(rc_, "LPUSH %s:jobs:p %s", ns_,
                           "{\"name\":\"p\",\"id\":\"stale\",\"t\":1,\"args\":null,\"d\":7}"));
    freeReplyObject(tl_cmd(rc_, "LPUSH %s:jobs:p %s", ns_,
                           "{\"name\":\"p\",\"id\":\"waiting\",\"t\":1,\"args\":null}"));
    const char *names[] = {"p"};
    tl_capture_logs();
    CHECK_INT(requeue(names, 1), 1);
    redisReply *r = tl_cmd(rc_, "LRANGE %s:jobs:p 0 -1", ns_);
    CHECK_INT(r->elements, 2);
    if (r->elements == 2) {
        CHECK(strstr(r->element[0]->str, "\"new\"") != NULL);
        CHECK(strstr(r->element[1]->str, "\"waiting\"") != NULL);
    }
    freeReplyObject(r);
    r = tl_cmd(rc_, "EXISTS %s:scheduled %s:dead", ns_, ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    const tl_log *l = tl_find_log("requeuer.past_deadline");
    CHECK(l && strstr(l->fields, "action=discarded jobs=1 key=") &&
          strstr(l->fields, ":scheduled"));
    cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
    tl_ns_delete(rc_, ns_);
}

/* Upstream's requeuer knows no d: a retry (or scheduled instance) past its deadline is
 * requeued like any job, and the queue's tail stays whatever its d (Go edge 4; the fork's
 * rules are the case above). */
static void upstream_requeues_past_the_deadline(void)
{
    fresh("rqu");
    long long now = now_();
    freeReplyObject(tl_cmd(rc_, "ZADD %s:retry %lld %s", ns_, now - 100,
                           "{\"name\":\"p\",\"id\":\"late\",\"t\":1,\"args\":null,\"fails\":1,"
                           "\"err\":\"e\",\"failed_at\":2,\"d\":5}"));
    freeReplyObject(tl_cmd(rc_, "LPUSH %s:jobs:p %s", ns_,
                           "{\"name\":\"p\",\"id\":\"stale\",\"t\":1,\"args\":null,\"d\":7}"));
    const char *names[] = {"p"};
    tl_capture_logs();
    CHECK_INT(requeue_as(CWORK_GO_UPSTREAM, names, 1), 1);
    redisReply *r = tl_cmd(rc_, "LRANGE %s:jobs:p 0 -1", ns_);
    CHECK_INT(r->elements, 2);
    if (r->elements == 2) {
        cwork_job *j = NULL;
        CHECK_INT(cwork_job_decode(r->element[0]->str, r->element[0]->len, &j, NULL), 0);
        CHECK_STR(cwork_job_id(j), "late");
        CHECK(cwork_job_enqueued_at(j) >= now);               /* t = the move time */
        CHECK(strstr(r->element[0]->str, "\"d\":5") != NULL); /* the bytes keep d */
        cwork_job_free(j);
        CHECK(strstr(r->element[1]->str, "\"stale\"") != NULL); /* the tail stays */
    }
    freeReplyObject(r);
    r = tl_cmd(rc_, "EXISTS %s:retry %s:scheduled %s:dead", ns_, ns_, ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    const tl_log *l = tl_find_log("requeuer.past_deadline");
    CHECK(l && strstr(l->fields, "action=requeued jobs=1 key=") && strstr(l->fields, ":retry"));
    CHECK_INT(tl_count_logs("requeuer.past_deadline"), 1);
    cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
    tl_ns_delete(rc_, ns_);
}

static void unknown_names_go_to_dead_but_known_jobs_count_as_known(void)
{
    fresh("rqu");
    long long now = now_();
    freeReplyObject(tl_cmd(rc_, "SADD %s:known_jobs other_team", ns_));
    freeReplyObject(tl_cmd(rc_, "ZADD %s:scheduled %lld %s", ns_, now - 1,
                           "{\"name\":\"other_team\",\"id\":\"o\",\"t\":1,\"args\":{}}"));
    freeReplyObject(tl_cmd(rc_, "ZADD %s:scheduled %lld %s", ns_, now - 1,
                           "{\"name\":\"nobody\",\"id\":\"n\",\"t\":1,\"args\":{}}"));
    const char *names[] = {"mine"};
    CHECK_INT(requeue(names, 1), 1);
    redisReply *r = tl_cmd(rc_, "LLEN %s:jobs:other_team", ns_);
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);
    r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1 WITHSCORES", ns_);
    CHECK_INT(r->elements, 2);
    if (r->elements == 2) {
        cwork_job *j = NULL;
        CHECK_INT(cwork_job_decode(r->element[0]->str, r->element[0]->len, &j, NULL), 0);
        CHECK_STR(cwork_job_id(j), "n");
        CHECK_STR(cwork_job_last_error(j), "unknown job when requeueing");
        CHECK(cwork_job_failed_at(j) >= now);
        CHECK(atoll(r->element[1]->str) >= now);
        cwork_job_free(j);
    }
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

static void members_go_would_block_on_or_lose_go_to_dead(void)
{
    fresh("rqb");
    long long now = now_();
    freeReplyObject(
        tl_cmd(rc_, "ZADD %s:retry %lld %b", ns_, now - 9, "not json \xff\xfe", (size_t)11));
    freeReplyObject(tl_cmd(rc_, "ZADD %s:retry %lld %s", ns_, now - 8, "{\"id\":\"noname\"}"));
    freeReplyObject(tl_cmd(rc_, "ZADD %s:retry %lld %s", ns_, now - 7,
                           "{\"name\":\"a\",\"id\":\"dnull\",\"d\":null}"));
    freeReplyObject(tl_cmd(rc_, "ZADD %s:retry %lld %s", ns_, now - 6,
                           "{\"name\":\"a\",\"id\":\"fine\",\"t\":1,\"args\":null}"));
    const char *names[] = {"a"};
    CHECK_INT(requeue(names, 1), 1); /* the good job behind the bad ones still moves */
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    CHECK_INT(r->elements, 3);
    for (size_t i = 0; i < r->elements; i++) {
        cwork_job *j = NULL;
        /* Every dead member is a job Go's client can decode, with the bytes kept. */
        CHECK_INT(cwork_job_decode(r->element[i]->str, r->element[i]->len, &j, NULL), 0);
        CHECK(strstr(cwork_job_last_error(j), "cannot requeue") != NULL);
        CHECK(strstr(r->element[i]->str, "raw_job") != NULL);
        /* Every record has an id to act on: the member's own, or a generated one. */
        CHECK(strlen(cwork_job_id(j)) > 0);
        if (strstr(r->element[i]->str,
                   "bm90IGpzb24g\\/\\/4=")) /* base64 of the bytes (cjson escapes /) */
            CHECK_INT(strlen(cwork_job_id(j)), 24);
        else if (strstr(r->element[i]->str, "noname"))
            CHECK_STR(cwork_job_id(j), "noname");
        else
            CHECK_STR(cwork_job_id(j), "dnull");
        cwork_job_free(j);
    }
    freeReplyObject(r);
    r = tl_cmd(rc_, "EXISTS %s:retry", ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

static void many_due_jobs_move_in_batches(void)
{
    fresh("rqm");
    long long now = now_();
    for (int i = 0; i < 250; i++)
        freeReplyObject(tl_cmd(rc_, "ZADD %s:scheduled %lld {\"name\":\"a\",\"id\":\"%d\",\"t\":1}",
                               ns_, now - 1000 + i, i));
    const char *names[] = {"a"};
    CHECK_INT(requeue(names, 1), 250);
    /* Oldest first: the earliest-scored job is at the right end, next to run. */
    redisReply *r = tl_cmd(rc_, "LINDEX %s:jobs:a -1", ns_);
    CHECK(r->str && strstr(r->str, "\"id\":\"0\"") != NULL);
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

/* A damaged queue key (a string where the list should be): the due job is not lost —
 * it goes to dead with the reason — and later jobs still move. */
static void a_job_whose_queue_is_damaged_goes_to_dead_with_the_reason(void)
{
    fresh("rqw");
    long long now = now_();
    tl_do(rc_, "SET %s:jobs:a oops", ns_);
    tl_do(rc_, "ZADD %s:scheduled %lld %s", ns_, now - 5,
          "{\"name\":\"a\",\"id\":\"victim\",\"t\":1,\"args\":{}}");
    tl_do(rc_, "ZADD %s:retry %lld %s", ns_, now - 4,
          "{\"name\":\"b\",\"id\":\"fine\",\"t\":1,\"args\":{}}");
    const char *names[] = {"a", "b"};
    tl_capture_logs();
    CHECK_INT(requeue(names, 2), 1);
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1 WITHSCORES", ns_);
    CHECK_INT(r->elements, 2);
    if (r->elements == 2) {
        cwork_job *j = NULL;
        CHECK_INT(cwork_job_decode(r->element[0]->str, r->element[0]->len, &j, NULL), 0);
        if (j) {
            CHECK_STR(cwork_job_id(j), "victim");
            CHECK_STR(cwork_job_name(j), "a");
            CHECK(strstr(cwork_job_last_error(j), "WRONGTYPE") != NULL);
            CHECK(strstr(cwork_job_last_error(j), ":jobs:a") != NULL);
            CHECK(cwork_job_failed_at(j) >= now);
        }
        cwork_job_free(j);
        CHECK(atoll(r->element[1]->str) >= now);
    }
    freeReplyObject(r);
    r = tl_cmd(rc_, "GET %s:jobs:a", ns_);
    CHECK_STR(r->str, "oops");
    freeReplyObject(r);
    r = tl_cmd(rc_, "LRANGE %s:jobs:b 0 -1", ns_);
    CHECK(r->elements == 1 && strstr(r->element[0]->str, "\"fine\""));
    freeReplyObject(r);
    r = tl_cmd(rc_, "KEYS %s:*", ns_);
    CHECK_INT(r->elements, 3); /* dead, jobs:a, jobs:b: scheduled and retry are empty */
    freeReplyObject(r);
    const tl_log *l = tl_find_log("requeuer.process.dead");
    CHECK(l && strstr(l->fields, "WRONGTYPE") != NULL);
    tl_ns_delete(rc_, ns_);
}

/* Queue and dead both damaged: the job stays where it is (nothing lost), the error is
 * logged with its message, and jobs behind it still move. */
static void a_job_that_can_go_nowhere_stays_and_the_error_is_logged(void)
{
    fresh("rqn");
    long long now = now_();
    tl_do(rc_, "SET %s:jobs:a oops", ns_);
    tl_do(rc_, "SET %s:dead oops", ns_);
    tl_do(rc_, "ZADD %s:scheduled %lld %s", ns_, now - 5,
          "{\"name\":\"a\",\"id\":\"stuck\",\"t\":1,\"args\":{}}");
    tl_do(rc_, "ZADD %s:scheduled %lld %s", ns_, now - 4,
          "{\"name\":\"b\",\"id\":\"fine\",\"t\":1,\"args\":{}}");
    const char *names[] = {"a", "b"};
    tl_capture_logs();
    size_t moved = 0;
    cwork_error err = {0};
    int rc = cw_requeue_due(redis_, &keys_, CWORK_GO_FORK, names, 2, &moved, &err);
    CHECK(rc != 0); /* the caller hears of it */
    CHECK(strstr(err.message, "WRONGTYPE") != NULL);
    CHECK_INT(moved, 1);
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:scheduled 0 -1 WITHSCORES", ns_);
    CHECK_INT(r->elements, 2);
    if (r->elements == 2) {
        CHECK_STR(r->element[0]->str, "{\"name\":\"a\",\"id\":\"stuck\",\"t\":1,\"args\":{}}");
        CHECK_INT(atoll(r->element[1]->str), now - 5);
    }
    freeReplyObject(r);
    r = tl_cmd(rc_, "LLEN %s:jobs:b", ns_);
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);
    const tl_log *l = tl_find_log("requeuer.process");
    CHECK(l && strstr(l->fields, "WRONGTYPE") != NULL);
    /* Without an error struct (the pool's maintenance passes NULL) the log still says why. */
    tl_capture_logs();
    cw_requeue_due(redis_, &keys_, CWORK_GO_FORK, names, 2, &moved, NULL);
    l = tl_find_log("requeuer.process");
    CHECK(l && strstr(l->fields, "WRONGTYPE") != NULL);
    tl_ns_delete(rc_, ns_);
}

/* A damaged known_jobs: the pool's own names still move, and the error is reported. */
static void a_damaged_known_jobs_still_moves_the_pools_own_jobs(void)
{
    fresh("rqk");
    long long now = now_();
    tl_do(rc_, "SET %s:known_jobs oops", ns_);
    tl_do(rc_, "ZADD %s:scheduled %lld %s", ns_, now - 5,
          "{\"name\":\"a\",\"id\":\"x\",\"t\":1,\"args\":{}}");
    const char *names[] = {"a"};
    tl_capture_logs();
    size_t moved = 0;
    CHECK(cw_requeue_due(redis_, &keys_, CWORK_GO_FORK, names, 1, &moved, NULL) != 0);
    CHECK_INT(moved, 1);
    const tl_log *l = tl_find_log("requeuer.process");
    CHECK(l && strstr(l->fields, "WRONGTYPE") != NULL && strstr(l->fields, "known_jobs") != NULL);
    redisReply *r = tl_cmd(rc_, "LLEN %s:jobs:a", ns_);
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

/* The zset itself damaged: an error with its message, logged, nothing else touched. */
static void a_damaged_zset_is_an_error_with_its_message(void)
{
    fresh("rqz");
    tl_do(rc_, "SET %s:scheduled oops", ns_);
    const char *names[] = {"a"};
    tl_capture_logs();
    size_t moved = 0;
    CHECK(cw_requeue_due(redis_, &keys_, CWORK_GO_FORK, names, 1, &moved, NULL) != 0);
    const tl_log *l = tl_find_log("requeuer.process");
    CHECK(l && strstr(l->fields, "WRONGTYPE") != NULL);
    /* the key to repair, not a line of the script */
    char key[128];
    snprintf(key, sizeof key, "key %s:scheduled", ns_);
    if (l && (!strstr(l->fields, key) || strstr(l->fields, "user_script")))
        tl_fail(__FILE__, __LINE__, "fields: %s", l->fields);
    char *dump = tl_ns_dump(rc_, ns_);
    char want[256];
    snprintf(want, sizeof want, "%s:scheduled string oops\n", ns_);
    CHECK_STR(dump, want);
    free(dump);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cw_keys_init(&keys_, "x");
    RUN(due_jobs_move_with_t_rewritten_and_future_ones_stay);
    RUN(expired_periodic_instances_are_discarded_and_stale_tails_dropped);
    RUN(upstream_requeues_past_the_deadline);
    RUN(unknown_names_go_to_dead_but_known_jobs_count_as_known);
    RUN(members_go_would_block_on_or_lose_go_to_dead);
    RUN(many_due_jobs_move_in_batches);
    RUN(a_job_whose_queue_is_damaged_goes_to_dead_with_the_reason);
    RUN(a_job_that_can_go_nowhere_stays_and_the_error_is_logged);
    RUN(a_damaged_known_jobs_still_moves_the_pools_own_jobs);
    RUN(a_damaged_zset_is_an_error_with_its_message);
    cw_keys_clear(&keys_);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
