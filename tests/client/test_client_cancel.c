/* cwork_client_cancel against a real Redis (PROTOCOL §21): waiting, scheduled and retry
 * jobs move to dead with err "cancelled"; a running job of a pool that listens on its
 * cancel channel is marked and the pool told; one of a pool that does not (Go) is left
 * alone with CWORK_EUNSUPPORTED; unknown and dead jobs give CWORK_ENOTFOUND, a damaged
 * cancelled hash CWORK_ETYPE, none of them writing anything. Every case checks the whole
 * namespace. */
#include "client_testutil.h"

#define POOL "0123456789abcdef01234567"

/* The dead set's one member: checked as the cancelled form of want_job (Go's bytes:
 * fails + 1, err, failed_at between before and after = its score), its failed_at
 * returned. */
static long long dead_member_at(int line, const char *want_prefix, const char *want_suffix,
                                long long before, long long after)
{
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1 WITHSCORES", ns_);
    long long at = -1;
    if (r->elements != 2) {
        tl_fail(__FILE__, line, "dead holds %zu members, expected 1", r->elements / 2);
    } else {
        at = atoll(r->element[1]->str);
        char want[1024];
        snprintf(want, sizeof want, "%s%lld%s", want_prefix, at, want_suffix);
        if (strcmp(r->element[0]->str, want) != 0)
            tl_fail(__FILE__, line, "dead member\n   got: %s\n  want: %s", r->element[0]->str,
                    want);
        if (at < before || at > after)
            tl_fail(__FILE__, line, "died at %lld, not within [%lld, %lld]", at, before, after);
    }
    freeReplyObject(r);
    return at;
}

static void a_waiting_job_moves_to_dead(void)
{
    cwork_client *cl = fresh("cq");
    cmd("SADD %s:known_jobs mail", ns_);
    cmd("LPUSH %s:jobs:mail %s %s", ns_,
        "{\"name\":\"mail\",\"id\":\"m1\",\"t\":1700000000,\"args\":{\"to\":\"a@b.c\"}}",
        "{\"name\":\"mail\",\"id\":\"m2\",\"t\":1700000001,\"args\":null}");
    long long before = now_();
    cwork_cancel_result res;
    memset(&res, 0xff, sizeof res);
    CHECK_INT(cwork_client_cancel(cl, "m1", &res, NULL), 0);
    long long after = now_();
    CHECK_INT(res.place, CWORK_PLACE_QUEUE);
    CHECK_STR(res.pool_id, "");
    long long at = dead_member_at(
        __LINE__,
        "{\"name\":\"mail\",\"id\":\"m1\",\"t\":1700000000,\"args\":{\"to\":\"a@b.c\"},\"fails\":1,"
        "\"err\":\"cancelled\",\"failed_at\":",
        "}", before, after);
    snprintf(want_, sizeof want_,
             "NS:dead zset {\"name\":\"mail\",\"id\":\"m1\",\"t\":1700000000,\"args\":{\"to\":"
             "\"a@b.c\"},\"fails\":1,\"err\":\"cancelled\",\"failed_at\":%lld}=%lld\n"
             "NS:jobs:mail list {\"name\":\"mail\",\"id\":\"m2\",\"t\":1700000001,\"args\":null}\n"
             "NS:known_jobs set mail\n",
             at, at);
    CHECK_DUMP(want_);
    cwork_error err = {0};
    CHECK_INT(cwork_client_cancel(cl, "m1", NULL, &err), CWORK_ENOTFOUND);
    CHECK_STR(err.message, "job m1 is in the dead set already");
    CHECK_DUMP(want_);
    done(cl);
}

/* As a deleted one, a cancelled unique job gives up its guard: it can be enqueued again. */
static void a_unique_scheduled_job_gives_up_its_guard(void)
{
    cwork_client *cl = fresh("cu");
    cmd("ZADD %s:scheduled 1900000000 %s", ns_,
        "{\"name\":\"a\",\"id\":\"u1\",\"t\":1,\"args\":{\"k\":1},\"unique\":true}");
    cmd("SET %s:unique:a:%s 1 EX 86400", ns_, "{\"k\":1}\n");
    long long before = now_();
    CHECK_INT(cwork_client_cancel(cl, "u1", NULL, NULL), 0);
    long long at =
        dead_member_at(__LINE__,
                       "{\"name\":\"a\",\"id\":\"u1\",\"t\":1,\"args\":{\"k\":1},"
                       "\"unique\":true,\"fails\":1,\"err\":\"cancelled\",\"failed_at\":",
                       "}", before, now_());
    snprintf(want_, sizeof want_,
             "NS:dead zset {\"name\":\"a\",\"id\":\"u1\",\"t\":1,\"args\":{\"k\":1},"
             "\"unique\":true,\"fails\":1,\"err\":\"cancelled\",\"failed_at\":%lld}=%lld\n",
             at, at);
    CHECK_DUMP(want_); /* the guard is gone */
    done(cl);
}

static void scheduled_and_retry_jobs_move_to_dead(void)
{
    cwork_client *cl = fresh("cs");
    cmd("ZADD %s:scheduled 1900000000 %s", ns_, "{\"name\":\"a\",\"id\":\"s1\",\"t\":1}");
    cmd("ZADD %s:scheduled 1900000000 %s", ns_, "{\"name\":\"a\",\"id\":\"s2\",\"t\":1}");
    cmd("ZADD %s:retry 1800000000 %s", ns_,
        "{\"name\":\"a\",\"id\":\"r1\",\"t\":1,\"fails\":2,\"err\":\"boom\",\"failed_at\":9}");
    long long before = now_();
    cwork_cancel_result res;
    CHECK_INT(cwork_client_cancel(cl, "s1", &res, NULL), 0);
    CHECK_INT(res.place, CWORK_PLACE_SCHEDULED);
    dead_member_at(__LINE__,
                   "{\"name\":\"a\",\"id\":\"s1\",\"t\":1,\"args\":null,\"fails\":1,\"err\":"
                   "\"cancelled\",\"failed_at\":",
                   "}", before, now_());
    freeReplyObject(tl_cmd(rc_, "DEL %s:dead", ns_));
    before = now_();
    CHECK_INT(cwork_client_cancel(cl, "r1", &res, NULL), 0);
    CHECK_INT(res.place, CWORK_PLACE_RETRY);
    long long at =
        dead_member_at(__LINE__,
                       "{\"name\":\"a\",\"id\":\"r1\",\"t\":1,\"args\":null,\"fails\":3,\"err\":"
                       "\"cancelled\",\"failed_at\":",
                       "}", before, now_());
    snprintf(want_, sizeof want_,
             "NS:dead zset {\"name\":\"a\",\"id\":\"r1\",\"t\":1,\"args\":null,\"fails\":3,"
             "\"err\":\"cancelled\",\"failed_at\":%lld}=%lld\n"
             "NS:scheduled zset {\"name\":\"a\",\"id\":\"s2\",\"t\":1}=1900000000\n",
             at, at);
    CHECK_DUMP(want_);
    done(cl);
}

/* A running job, as a Go pool and as a cwork pool hold it. */
static void seed_running(void)
{
    cmd("SADD %s:known_jobs a", ns_);
    cmd("SADD %s:worker_pools " POOL, ns_);
    cmd("LPUSH %s:jobs:a:" POOL ":inprogress %s", ns_, "{\"name\":\"a\",\"id\":\"run1\",\"t\":1}");
    cmd("SET %s:jobs:a:lock 1", ns_);
    cmd("HSET %s:jobs:a:lock_info " POOL " 1", ns_);
}

static void a_job_running_in_a_pool_that_does_not_listen_is_left_alone(void)
{
    cwork_client *cl = fresh("cg");
    seed_running();
    char *before = dump_now();
    cwork_error err = {0};
    CHECK_INT(cwork_client_cancel(cl, "run1", NULL, &err), CWORK_EUNSUPPORTED);
    CHECK(strstr(err.message, "job run1 runs in pool " POOL ", which does not listen") ==
          err.message);
    char *after = dump_now();
    CHECK_STR(after, before);
    free(before);
    free(after);
    done(cl);
}

static void a_job_running_in_a_listening_pool_is_marked_and_its_pool_told(void)
{
    cwork_client *cl = fresh("cr");
    seed_running();
    /* The pool's subscription, as a cwork pool's subscriber makes it. */
    redisContext *sub = tl_redis_connect();
    redisReply *r = redisCommand(sub, "SUBSCRIBE %s:cwork:cancel:" POOL, ns_);
    CHECK(r != NULL);
    freeReplyObject(r);
    long long before = now_();
    cwork_cancel_result res;
    CHECK_INT(cwork_client_cancel(cl, "run1", &res, NULL), 0);
    long long after = now_();
    CHECK_INT(res.place, CWORK_PLACE_IN_PROGRESS);
    CHECK_STR(res.pool_id, POOL);
    r = NULL;
    CHECK_INT(redisGetReply(sub, (void **)&r), REDIS_OK);
    CHECK(r && r->type == REDIS_REPLY_ARRAY && r->elements == 3);
    if (r && r->elements == 3) CHECK_STR(r->element[2]->str, "run1");
    if (r) freeReplyObject(r);
    redisFree(sub);
    r = tl_cmd(rc_, "HGET %s:cwork:cancelled run1", ns_);
    long long at = r->type == REDIS_REPLY_STRING ? atoll(r->str) : -1;
    freeReplyObject(r);
    CHECK(at >= before && at <= after);
    /* The job stays where it runs: its pool commits it. */
    snprintf(want_, sizeof want_,
             "NS:cwork:cancelled hash ttl=86400 run1=%lld\n"
             "NS:jobs:a:" POOL ":inprogress list {\"name\":\"a\",\"id\":\"run1\",\"t\":1}\n"
             "NS:jobs:a:lock string 1\n"
             "NS:jobs:a:lock_info hash " POOL "=1\n"
             "NS:known_jobs set a\n"
             "NS:worker_pools set " POOL "\n",
             at);
    CHECK_DUMP(want_);
    done(cl);
}

static void unknown_ids_and_damaged_keys_write_nothing(void)
{
    cwork_client *cl = fresh("cx");
    seed_running();
    cmd("SET %s:cwork:cancelled %s", ns_, "not a hash");
    char *before = dump_now();
    cwork_error err = {0};
    CHECK_INT(cwork_client_cancel(cl, "nope", NULL, &err), CWORK_ENOTFOUND);
    CHECK_STR(err.message, "no job with id nope");
    CHECK_INT(cwork_client_cancel(cl, "run1", NULL, &err), CWORK_ETYPE);
    CHECK(strstr(err.message,
                 ":cwork:cancelled is a string, expected a hash (the cancelled jobs)") != NULL);
    CHECK_INT(cwork_client_cancel(cl, NULL, NULL, &err), CWORK_EINVAL);
    char *after = dump_now();
    CHECK_STR(after, before);
    free(before);
    free(after);
    done(cl);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    if (!redis_) return 1;
    RUN(a_waiting_job_moves_to_dead);
    RUN(scheduled_and_retry_jobs_move_to_dead);
    RUN(a_unique_scheduled_job_gives_up_its_guard);
    RUN(a_job_running_in_a_pool_that_does_not_listen_is_left_alone);
    RUN(a_job_running_in_a_listening_pool_is_marked_and_its_pool_told);
    RUN(unknown_ids_and_damaged_keys_write_nothing);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
