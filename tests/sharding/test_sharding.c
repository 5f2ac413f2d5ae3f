/* A sharded namespace's pure parts (shard names, the hash, the jump) and its record
 * against a real Redis: created by the first process that declares a count, followed by
 * those that declare none, refused to one that declares another; damage named. */
#include "sharding.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

static void names(void)
{
    char out[64];
    cwork_error err = {0};
    CHECK_INT(cw_sharding_ns("app", 0, out, sizeof out, &err), 0);
    CHECK_STR(out, "app");
    CHECK_INT(cw_sharding_ns("app", 3, out, sizeof out, &err), 0);
    CHECK_STR(out, "{app.3}");
    CHECK_INT(cw_sharding_ns("{app}", 0, out, sizeof out, &err), 0);
    CHECK_STR(out, "{app}");
    CHECK_INT(cw_sharding_ns("{app}", 12, out, sizeof out, &err), 0);
    CHECK_STR(out, "{app.12}");
    const char *bad[] = {"", "{}", "app:", "my{app}", "{a}b", "a}", "{app"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_INT(cw_sharding_ns(bad[i], 1, out, sizeof out, &err), CWORK_EINVAL);
        CHECK(strstr(err.message, "cannot be sharded") != NULL);
    }
    CHECK_INT(cw_sharding_ns("a-rather-long-namespace", 1, out, 12, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "too long") != NULL);
}

/* FNV-1a 64 test vectors, and the shards PROTOCOL §27.2 lists as its examples. */
static void hash_and_pick(void)
{
    CHECK(cw_sharding_hash("", 0) == 0xcbf29ce484222325ULL);
    CHECK(cw_sharding_hash("a", 1) == 0xaf63dc4c8601ec8cULL);
    CHECK(cw_sharding_hash("foobar", 6) == 0x85944171f73967e8ULL);
    for (unsigned s = 1; s < 100; s++)
        CHECK_INT(cw_sharding_pick(0, s), 0);
    CHECK_INT(cw_sharding_of("x", 1, 1), 0);
    CHECK_INT(cw_sharding_of("5f1e3b1d2c7a9e0b4d6f8a21", 24, 4), 0);
    CHECK_INT(cw_sharding_of("5f1e3b1d2c7a9e0b4d6f8a21", 24, 16), 7);
    CHECK_INT(cw_sharding_of("send_email", 10, 4), 0);
    CHECK_INT(cw_sharding_of("send_email", 10, 3), 0);
    CHECK_INT(cw_sharding_of("nightly", 7, 4), 1);
    CHECK_INT(cw_sharding_of("nightly", 7, 8), 5);
}

/* Growing S to S+1 moves a key only to the new shard, about 1/(S+1) of them, and keys
 * spread evenly (fixed keys: the counts below are exact, not statistical). */
static void jump_moves_little_and_spreads_evenly(void)
{
    enum { KEYS = 20000, S = 8 };
    unsigned count[S + 1] = {0}, moved = 0;
    for (unsigned k = 0; k < KEYS; k++) {
        char key[32];
        int n = snprintf(key, sizeof key, "job-%u", k);
        unsigned a = cw_sharding_of(key, (size_t)n, S), b = cw_sharding_of(key, (size_t)n, S + 1);
        CHECK(a < S);
        CHECK(b == a || b == S);
        moved += b != a;
        count[a]++;
    }
    /* 1/(S+1) = 2222 expected; each shard 2500. */
    CHECK(moved > 2000 && moved < 2450);
    for (unsigned i = 0; i < S; i++)
        CHECK(count[i] > 2300 && count[i] < 2700);
}

static void record(void)
{
    redisContext *rc = tl_redis_connect();
    char ns[64];
    tl_unique_ns("shards", ns, sizeof ns);
    cwork_error err = {0};
    cwork_redis *r = cwork_redis_new(tl_redis_url(), NULL, &err);
    CHECK(r != NULL);
    unsigned n = 99;
    /* No record, nothing declared: one shard, nothing written. */
    CHECK_INT(cw_sharding_record_sync(r, ns, 0, &n, &err), 0);
    CHECK_INT(n, 1);
    char *dump = tl_ns_dump(rc, ns);
    CHECK_STR(dump, "");
    free(dump);
    /* The first to declare writes it; the others follow or are refused. */
    CHECK_INT(cw_sharding_record_sync(r, ns, 4, &n, &err), 0);
    CHECK_INT(n, 4);
    CHECK_INT(cw_sharding_record_sync(r, ns, 0, &n, &err), 0);
    CHECK_INT(n, 4);
    CHECK_INT(cw_sharding_record_sync(r, ns, 4, &n, &err), 0);
    n = 0;
    CHECK_INT(cw_sharding_record_sync(r, ns, 3, &n, &err), CWORK_EINVAL);
    CHECK_INT(n, 0);
    CHECK(strstr(err.message, "has 4 shards") && strstr(err.message, "told 3") &&
          strstr(err.message, ":cwork:shards"));
    redisReply *rep = tl_cmd(rc, "HGET %s:cwork:shards created", ns);
    CHECK(rep->type == REDIS_REPLY_STRING && atoll(rep->str) > 1700000000);
    freeReplyObject(rep);
    tl_do(rc, "HDEL %s:cwork:shards created", ns);
    dump = tl_ns_dump(rc, ns);
    char want[256];
    snprintf(want, sizeof want, "%s:cwork:shards hash count=4 | hash=fnv1a64-jump\n", ns);
    CHECK_STR(dump, want);
    free(dump);
    /* Damage is named and changes nothing. */
    tl_do(rc, "HSET %s:cwork:shards count 0", ns);
    CHECK_INT(cw_sharding_record_sync(r, ns, 0, &n, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "is damaged") && strstr(err.message, "\"0\""));
    tl_do(rc, "HSET %s:cwork:shards count 4 hash crc16", ns);
    CHECK_INT(cw_sharding_record_sync(r, ns, 4, &n, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "\"crc16\""));
    tl_do(rc, "DEL %s:cwork:shards", ns);
    tl_do(rc, "SET %s:cwork:shards 4", ns);
    CHECK_INT(cw_sharding_record_sync(r, ns, 4, &n, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "not a hash"));
    rep = tl_cmd(rc, "GET %s:cwork:shards", ns);
    CHECK_STR(rep->str, "4");
    freeReplyObject(rep);
    /* A namespace that cannot be sharded is refused before anything is written. */
    CHECK_INT(cw_sharding_record_sync(r, "my{app}", 2, &n, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "cannot be sharded"));
    tl_ns_delete(rc, ns);
    cwork_redis_free(r);
    redisFree(rc);
}

/* A clone reaches the same server with the same credentials. */
static void clone_reaches_the_same_server(void)
{
    cwork_error err = {0};
    cwork_redis *r = cwork_redis_new(tl_redis_url(), NULL, &err);
    cwork_redis *c = cw_redis_clone(r, &err);
    CHECK(c != NULL);
    cwork_redis_free(r); /* the clone owns its own copies */
    CHECK_INT(cwork_redis_ping(c, &err), 0);
    cwork_redis_free(c);
}

int main(void)
{
    RUN(names);
    RUN(hash_and_pick);
    RUN(jump_moves_little_and_spreads_evenly);
    RUN(record);
    RUN(clone_reaches_the_same_server);
    return tl_finish();
}
