/* Every enqueue — single, delayed, unique, bulk — writes everything and reports success,
 * or writes nothing and reports an error: for an ACL user that may not run MULTI, on
 * keys of the wrong type, and when Redis is out of memory (noeviction). Each case checks
 * the whole namespace. */
#include "cwork.h"
#include "testlib.h"

#include <signal.h>
#include <stdlib.h>

static redisContext *rc_;
static char ns_[64];

/* A URL for user:pass on the test server (same host and port as tl_redis_url()). */
static void user_url(char *out, size_t size, const char *user, const char *pass)
{
    const char *url = tl_redis_url(), *host = strstr(url, "://");
    host = host ? host + 3 : url;
    snprintf(out, size, "redis://%s:%s@%s", user, pass, host);
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* One of each kind through an enqueuer on redis; the namespace must then hold every job
 * (4 single ones, 3 of the batch) and every registration. */
static void enqueue_each_kind(cwork_redis *redis)
{
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, ns_, &err);
    cwork_args *args = cwork_args_new();
    cwork_args_set_string(args, "k", "v");
    CHECK_INT(cwork_enqueue(enq, "plain", args, NULL, &err), 0);
    CHECK_INT(cwork_enqueue_in(enq, "later", 60, args, NULL, &err), 0);
    CHECK_INT(cwork_enqueue_unique(enq, "uniq", args, NULL, &err), 0);
    CHECK_INT(cwork_enqueue_unique_in(enq, "uniq_later", 60, args, NULL, &err), 0);
    cwork_enqueuer *enq2 = cwork_enqueuer_new(redis, ns_, &err); /* a cold cache */
    cwork_batch *b = cwork_batch_new(enq2);
    CHECK_INT(cwork_batch_add(b, "bulk", args, 0, 0, &err), 0);
    CHECK_INT(cwork_batch_add(b, "bulk_later", args, 30, CWORK_BATCH_IN, &err), 0);
    CHECK_INT(cwork_batch_add(b, "bulk_uniq", args, 0, CWORK_BATCH_UNIQUE, &err), 0);
    CHECK_INT(cwork_enqueue_batch(b, &err), 0);
    if (err.message[0]) printf("   error: %s\n", err.message);
    for (size_t i = 0; i < 3; i++)
        CHECK_INT(cwork_batch_status(b, i, NULL), CWORK_OK);
    cwork_batch_free(b);
    cwork_args_free(args);
    cwork_enqueuer_free(enq);
    cwork_enqueuer_free(enq2);
    char *dump = tl_ns_dump(rc_, ns_);
    /* queues plain, uniq, bulk, bulk_uniq; known_jobs; scheduled; three guards */
    CHECK_INT(lines(dump), 9);
    char want[512];
    snprintf(
        want, sizeof want,
        "%s:known_jobs set bulk | bulk_later | bulk_uniq | later | plain | uniq | uniq_later\n",
        ns_);
    CHECK(strstr(dump, want) != NULL);
    redisReply *r = tl_cmd(rc_, "ZCARD %s:scheduled", ns_);
    CHECK_INT(r->integer, 3);
    freeReplyObject(r);
    free(dump);
}

/* An ACL user without MULTI: every kind works, and is written exactly once. (Before,
 * the refused MULTI let LPUSH and SADD run on their own and the enqueue reported an
 * error for a written job.) */
static void a_user_without_multi_enqueues_every_kind(void)
{
    tl_unique_ns("acl", ns_, sizeof ns_);
    char user[80], url[256];
    snprintf(user, sizeof user, "%s-user", ns_);
    tl_do(rc_, "ACL SETUSER %s on >secret ~* &* +@all -multi -exec", user);
    user_url(url, sizeof url, user, "secret");
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(url, NULL, &err);
    CHECK(redis != NULL);
    if (redis) enqueue_each_kind(redis);
    cwork_redis_free(redis);
    tl_do(rc_, "ACL DELUSER %s", user);
    tl_ns_delete(rc_, ns_);
}

/* A user that may not run scripts: a first enqueue of a name (which registers it) is
 * refused with nothing written — never a job written behind an error. */
static void a_user_without_scripts_gets_an_error_and_nothing_written(void)
{
    tl_unique_ns("acls", ns_, sizeof ns_);
    char user[80], url[256];
    snprintf(user, sizeof user, "%s-user", ns_);
    tl_do(rc_, "ACL SETUSER %s on >secret ~* &* +@all -@scripting", user);
    user_url(url, sizeof url, user, "secret");
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(url, NULL, &err);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, ns_, &err);
    CHECK_INT(cwork_enqueue(enq, "plain", NULL, NULL, &err), CWORK_EREDIS);
    CHECK(strstr(err.message, "NOPERM") != NULL || strstr(err.message, "permission") != NULL);
    CHECK_INT(cwork_enqueue_in(enq, "later", 5, NULL, NULL, NULL), CWORK_EREDIS);
    cwork_batch *b = cwork_batch_new(enq);
    CHECK_INT(cwork_batch_add(b, "bulk", NULL, 0, 0, NULL), 0);
    CHECK_INT(cwork_enqueue_batch(b, NULL), CWORK_EREDIS);
    CHECK_INT(cwork_batch_status(b, 0, NULL), CWORK_EREDIS);
    cwork_batch_free(b);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, "");
    free(dump);
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
    tl_do(rc_, "ACL DELUSER %s", user);
}

/* Keys of the wrong type: each kind fails with the key named, and nothing else of the
 * enqueue is written (no queue entry, no registration, no unique guard). */
static void damaged_keys_fail_the_enqueue_and_write_nothing(void)
{
    tl_unique_ns("dmg", ns_, sizeof ns_);
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(tl_redis_url(), NULL, &err);
    cwork_args *args = cwork_args_new();
    cwork_args_set_string(args, "k", "v");
    /* The queue and the scheduled set: */
    char want[512];
    snprintf(want, sizeof want, "%s:jobs:a string oops\n%s:scheduled string oops\n", ns_, ns_);
    for (int warm = 0; warm < 2; warm++) {
        tl_ns_delete(rc_, ns_);
        cwork_enqueuer *enq = cwork_enqueuer_new(redis, ns_, &err);
        if (warm) { /* a warm cache: the single LPUSH/ZADD path */
            CHECK_INT(cwork_enqueue(enq, "a", NULL, NULL, NULL), 0);
            tl_ns_delete(rc_, ns_);
        }
        tl_do(rc_, "SET %s:jobs:a oops", ns_);
        tl_do(rc_, "SET %s:scheduled oops", ns_);
        memset(&err, 0, sizeof err);
        CHECK_INT(cwork_enqueue(enq, "a", args, NULL, &err), CWORK_EREDIS);
        CHECK(strstr(err.message, "WRONGTYPE") != NULL);
        CHECK_INT(cwork_enqueue_in(enq, "a", 10, args, NULL, NULL), CWORK_EREDIS);
        CHECK_INT(cwork_enqueue_unique(enq, "a", args, NULL, NULL), CWORK_EREDIS);
        CHECK_INT(cwork_enqueue_unique_in(enq, "a", 10, args, NULL, NULL), CWORK_EREDIS);
        /* A batch with one bad entry among good ones: none of it is written. */
        cwork_batch *b = cwork_batch_new(enq);
        CHECK_INT(cwork_batch_add(b, "good", args, 0, 0, NULL), 0);
        CHECK_INT(cwork_batch_add(b, "good_uniq", args, 0, CWORK_BATCH_UNIQUE, NULL), 0);
        CHECK_INT(cwork_batch_add(b, "a", args, 0, CWORK_BATCH_UNIQUE, NULL), 0);
        memset(&err, 0, sizeof err);
        CHECK_INT(cwork_enqueue_batch(b, &err), CWORK_EREDIS);
        CHECK(strstr(err.message, "WRONGTYPE") != NULL);
        for (size_t i = 0; i < 3; i++)
            CHECK_INT(cwork_batch_status(b, i, NULL), CWORK_EREDIS);
        cwork_batch_free(b);
        /* One queue's jobs only (with a warm cache: one LPUSH), and delayed ones only. */
        for (int delayed = 0; delayed < 2; delayed++) {
            b = cwork_batch_new(enq);
            for (int i = 0; i < 2; i++)
                CHECK_INT(cwork_batch_add(b, "a", args, 5, delayed ? CWORK_BATCH_IN : 0, NULL), 0);
            memset(&err, 0, sizeof err);
            CHECK_INT(cwork_enqueue_batch(b, &err), CWORK_EREDIS);
            CHECK(strstr(err.message, "WRONGTYPE") != NULL);
            CHECK_INT(cwork_batch_status(b, 1, NULL), CWORK_EREDIS);
            cwork_batch_free(b);
        }
        char *dump = tl_ns_dump(rc_, ns_);
        CHECK_STR(dump, want);
        free(dump);
        cwork_enqueuer_free(enq);
    }
    /* known_jobs: */
    tl_do(rc_, "DEL %s:jobs:a %s:scheduled", ns_, ns_);
    tl_do(rc_, "SET %s:known_jobs oops", ns_);
    snprintf(want, sizeof want, "%s:known_jobs string oops\n", ns_);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, ns_, &err);
    CHECK_INT(cwork_enqueue(enq, "a", args, NULL, NULL), CWORK_EREDIS);
    CHECK_INT(cwork_enqueue_in(enq, "a", 10, args, NULL, NULL), CWORK_EREDIS);
    CHECK_INT(cwork_enqueue_unique(enq, "a", args, NULL, NULL), CWORK_EREDIS);
    cwork_batch *b = cwork_batch_new(enq);
    CHECK_INT(cwork_batch_add(b, "a", args, 0, 0, NULL), 0);
    CHECK_INT(cwork_enqueue_batch(b, NULL), CWORK_EREDIS);
    cwork_batch_free(b);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    cwork_enqueuer_free(enq);
    cwork_args_free(args);
    cwork_redis_free(redis);
    tl_ns_delete(rc_, ns_);
}

/* Out of memory with noeviction: every kind is refused, and refused whole. */
static void out_of_memory_refuses_every_kind_whole(void)
{
    tl_server s;
    if (tl_server_start(&s, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    redisContext *c = redisConnect("127.0.0.1", s.port);
    CHECK(c && !c->err);
    tl_unique_ns("oom", ns_, sizeof ns_);
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(s.url, NULL, &err);
    cwork_enqueuer *warm = cwork_enqueuer_new(redis, ns_, &err);
    CHECK_INT(cwork_enqueue(warm, "w", NULL, NULL, NULL), 0);
    CHECK_INT(cwork_enqueue_in(warm, "w", 5, NULL, NULL, NULL), 0);
    /* Fill memory, then cap it just above what is used. */
    freeReplyObject(redisCommand(c, "DEBUG POPULATE 20000 filler 100"));
    redisReply *r = redisCommand(c, "MEMORY STATS");
    long long used = 0;
    for (size_t i = 0; r && i + 1 < r->elements; i += 2)
        if (!strcmp(r->element[i]->str, "total.allocated")) used = r->element[i + 1]->integer;
    freeReplyObject(r);
    CHECK(used > 0);
    freeReplyObject(redisCommand(c, "CONFIG SET maxmemory-policy noeviction"));
    freeReplyObject(redisCommand(c, "CONFIG SET maxmemory %lld", used - 100000));
    char *before = tl_ns_dump(c, ns_);
    cwork_enqueuer *cold = cwork_enqueuer_new(redis, ns_, &err);
    cwork_args *args = cwork_args_new();
    cwork_args_set_string(args, "k", "v");
    cwork_enqueuer *both[] = {warm, cold};
    for (int i = 0; i < 2; i++) {
        memset(&err, 0, sizeof err);
        CHECK_INT(cwork_enqueue(both[i], "w", args, NULL, &err), CWORK_EREDIS);
        CHECK(strstr(err.message, "OOM") != NULL);
        CHECK_INT(cwork_enqueue_in(both[i], "w", 5, args, NULL, NULL), CWORK_EREDIS);
        CHECK_INT(cwork_enqueue_unique(both[i], "w", args, NULL, NULL), CWORK_EREDIS);
        CHECK_INT(cwork_enqueue_unique_in(both[i], "w", 5, args, NULL, NULL), CWORK_EREDIS);
        cwork_batch *b = cwork_batch_new(both[i]);
        CHECK_INT(cwork_batch_add(b, "w", args, 0, 0, NULL), 0);
        CHECK_INT(cwork_batch_add(b, "x", args, 0, CWORK_BATCH_UNIQUE, NULL), 0);
        CHECK_INT(cwork_batch_add(b, "w", args, 9, CWORK_BATCH_IN, NULL), 0);
        CHECK_INT(cwork_enqueue_batch(b, NULL), CWORK_EREDIS);
        cwork_batch_free(b);
        b = cwork_batch_new(both[i]);
        CHECK_INT(cwork_batch_add(b, "w", args, 0, 0, NULL), 0);
        CHECK_INT(cwork_batch_add(b, "w", args, 0, 0, NULL), 0);
        CHECK_INT(cwork_enqueue_batch(b, NULL), CWORK_EREDIS);
        cwork_batch_free(b);
    }
    char *after = tl_ns_dump(c, ns_);
    CHECK_STR(after, before);
    free(before);
    free(after);
    cwork_args_free(args);
    cwork_enqueuer_free(warm);
    cwork_enqueuer_free(cold);
    cwork_redis_free(redis);
    redisFree(c);
    tl_server_destroy(&s);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    rc_ = tl_redis_connect();
    RUN(a_user_without_multi_enqueues_every_kind);
    RUN(a_user_without_scripts_gets_an_error_and_nothing_written);
    RUN(damaged_keys_fail_the_enqueue_and_write_nothing);
    RUN(out_of_memory_refuses_every_kind_whole);
    redisFree(rc_);
    return tl_finish();
}
