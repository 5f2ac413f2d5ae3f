/* The doctor on a sharded namespace during a grow (PROTOCOL §25, §27.5), against a real
 * Redis on the manual clock: two shards grown to three with a unique job and a ByKey job
 * enqueued before, then a unique and a ByKey key whose shard moved enqueued on the new
 * count, so that each leaves its forwarding marker (a hash at the guard's key) in its
 * old shard. The doctor run on the namespace (every shard) and on each shard's namespace
 * alone finds nothing, its repair writes nothing (every shard dumped before and after),
 * and a repair handed a wrong-type finding about a marker (a stale one) leaves the
 * marker be; a hash at a guard's key that is not a marker is still damage. */
#include "clock_testutil.h"
#include "cwork.h"
#include "shards_testutil.h"

#include <stdlib.h>
#include <string.h>

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];
static char shard_[3][80];

static void fresh_ns(const char *tag)
{
    st_fresh_ns(tag, ns_, sizeof ns_, shard_, 3);
}

static void delete_all(void)
{
    st_delete(rc_, shard_, 3);
}

/* Every shard's keys and values, one string (free it). */
static char *dump_all(void)
{
    return st_dump(rc_, shard_, 3);
}

/* A value of "k" from `from` on whose routing key "<name>:{\"k\":n}" lands on another
 * shard under 3 shards than under 2; *was receives the shard under 2. */
static long moving_key(const char *name, long from, unsigned *was)
{
    for (long n = from;; n++) {
        char route[128];
        int len = snprintf(route, sizeof route, "%s:{\"k\":%ld}", name, n);
        *was = cw_sharding_of(route, (size_t)len, 2);
        if (*was != cw_sharding_of(route, (size_t)len, 3)) return n;
    }
}

static int enqueue(cwork_enqueuer *enq, const char *name, long k, int by_key)
{
    cwork_args *a = cwork_args_new();
    cwork_args_set_int64(a, "k", k);
    cwork_error err = {0};
    int rc = by_key ? cwork_enqueue_unique_by_key(enq, name, a, a, NULL, &err)
                    : cwork_enqueue_unique(enq, name, a, NULL, &err);
    cwork_args_free(a);
    return rc;
}

static cwork_enqueuer *enqueuer(void)
{
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, &err);
    CHECK(enq != NULL);
    return enq;
}

/* The doctor on the namespace of c: no finding, with and without repair. */
static void clean(cwork_client *c, const char *what)
{
    for (unsigned flags = 0; flags <= CWORK_DOCTOR_REPAIR; flags += CWORK_DOCTOR_REPAIR) {
        cwork_doctor_finding *f = NULL;
        size_t n = 0;
        cwork_error err = {0};
        CHECK_INT(cwork_client_doctor(c, flags, &f, &n, &err), 0);
        for (size_t i = 0; i < n; i++)
            tl_fail(__FILE__, __LINE__, "%s%s: %s %s: %s", what, flags ? " (repair)" : "",
                    cwork_doctor_kind_name(f[i].kind), f[i].key, f[i].problem);
        cwork_doctor_findings_free(f, n);
    }
}

static void markers_are_no_damage(void)
{
    fresh_ns("dg");
    clock_start_manual();
    cwork_error err = {0};
    cwork_enqueuer *old = enqueuer();
    CHECK_INT(cwork_enqueuer_set_shards(old, 2, &err), 0);
    unsigned was = 0, was_bk = 0, was2 = 0, was2_bk = 0;
    long k = moving_key("u", 0, &was), kb = moving_key("b", 0, &was_bk);
    CHECK_INT(enqueue(old, "u", k, 0), 0);
    CHECK_INT(enqueue(old, "b", kb, 1), 0);
    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    CHECK(c != NULL);
    CHECK_INT(cwork_client_shards_grow(c, 3, &err), 0);
    /* keys whose shard moved, new on the new count: each leaves a marker where it was */
    cwork_enqueuer *fresh = enqueuer();
    long k2 = moving_key("u", k + 1, &was2), kb2 = moving_key("b", kb + 1, &was2_bk);
    CHECK_INT(enqueue(fresh, "u", k2, 0), 0);
    CHECK_INT(enqueue(fresh, "b", kb2, 1), 0);
    char marker[160], marker_bk[160];
    snprintf(marker, sizeof marker, "%s:unique:u:{\"k\":%ld}\n", shard_[was2], k2);
    snprintf(marker_bk, sizeof marker_bk, "%s:unique:b:{\"k\":%ld}\n", shard_[was2_bk], kb2);
    /* Redis expires a marker after 15 real seconds: kept longer here, so that a slow run
     * still meets it (its shape is what the doctor judges) */
    const char *markers[] = {marker, marker_bk};
    for (int i = 0; i < 2; i++) {
        redisReply *r = tl_cmd(rc_, "HGETALL %s", markers[i]);
        CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 2);
        if (r->elements == 2) {
            CHECK_STR(r->element[0]->str, "cwork");
            CHECK_STR(r->element[1]->str, CW_SHARDING_FORWARD_MARK);
        }
        freeReplyObject(r);
        tl_do(rc_, "EXPIRE %s 600", markers[i]);
    }
    cwork_shards_growth g;
    CHECK_INT(cwork_client_shards_growth(c, &g, &err), 0);
    CHECK_INT(g.guards, 4); /* two guards and two markers */

    char *before = dump_all();
    clean(c, "the namespace");
    for (unsigned i = 1; i < 3; i++) { /* each shard's namespace alone (shard 0's is ns_) */
        cwork_client *one = cwork_client_new(redis_, shard_[i], &err);
        CHECK(one != NULL);
        clean(one, shard_[i]);
        cwork_client_free(one);
    }
    /* a repair handed a stale wrong-type finding about a marker leaves it */
    for (int i = 0; i < 2; i++) {
        cwork_doctor_finding f = {.kind = CWORK_DOCTOR_WRONG_TYPE,
                                  .key = (char *)markers[i],
                                  .value = "hash",
                                  .problem = "a hash where PROTOCOL has a string",
                                  .action = "rename it"};
        CHECK_INT(cwork_client_doctor_repair(c, &f, &err), 0);
        CHECK(!f.repaired);
    }
    char *after = dump_all();
    CHECK_STR(after, before);
    free(before);
    free(after);
    for (int i = 0; i < 2; i++) {
        redisReply *ttl = tl_cmd(rc_, "TTL %s", markers[i]);
        CHECK(ttl->integer > 0);
        freeReplyObject(ttl);
    }

    /* a hash at a guard's key that is not a marker is damage, as ever */
    tl_do(rc_, "HSET %s cwork %s other x", marker, CW_SHARDING_FORWARD_MARK);
    cwork_doctor_finding *f = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_doctor(c, 0, &f, &n, &err), 0);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_INT(f[0].kind, CWORK_DOCTOR_WRONG_TYPE);
        CHECK_STR(f[0].key, marker);
    }
    cwork_doctor_findings_free(f, n);

    cwork_enqueuer_free(fresh);
    cwork_enqueuer_free(old);
    cwork_client_free(c);
    cw_clock_system();
    delete_all();
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    RUN(markers_are_no_damage);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
