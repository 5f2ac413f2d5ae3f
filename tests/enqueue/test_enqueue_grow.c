/* Routing across a grow (PROTOCOL §27.5) against a real Redis, on the manual clock (the
 * enqueuers' 5 s re-read and the grow's forwarding window follow it): the record's
 * change and its refusals; unique and ByKey keys whose shard moved stay unique before,
 * during and after the grow, an enqueuer still on the old count included (it meets the
 * forwarding marker); pinned names keep their shard; a tracked batch opened before the
 * grow keeps its members; the grow ends only when nothing routes by the old count; a
 * process that declared the old count is refused at start and follows once running.
 * Each case checks the shards' whole namespaces where it writes. */
#include "clock_testutil.h"
#include "cwork.h"
#include "shards_testutil.h"

#include <stdlib.h>
#include <string.h>

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];
static char shard_[5][80];

static void fresh_ns(const char *tag)
{
    st_fresh_ns(tag, ns_, sizeof ns_, shard_, 5);
}

static void delete_all(void)
{
    st_delete(rc_, shard_, 5);
}

static char *record(void)
{
    return tl_ns_dump(rc_, ns_);
}

/* A value of "k" whose unique routing key "<name>:{\"<field>\":n}" lands on another shard
 * under 3 shards than under 2; *was and *now receive the two. */
static long moving_key(const char *name, const char *field, unsigned *was, unsigned *now)
{
    for (long n = 0;; n++) {
        char route[128];
        int len = snprintf(route, sizeof route, "%s:{\"%s\":%ld}", name, field, n);
        *was = cw_sharding_of(route, (size_t)len, 2);
        *now = cw_sharding_of(route, (size_t)len, 3);
        if (*was != *now) return n;
    }
}

static long long exists(const char *fmt, const char *a, const char *b)
{
    redisReply *r = tl_cmd(rc_, fmt, a, b);
    long long n = r->integer;
    freeReplyObject(r);
    return n;
}

static long long llen(unsigned shard, const char *name)
{
    redisReply *r = tl_cmd(rc_, "LLEN %s:jobs:%s", shard_[shard], name);
    long long n = r->integer;
    freeReplyObject(r);
    return n;
}

static int enqueue_u(cwork_enqueuer *enq, const char *name, long k)
{
    cwork_args *a = cwork_args_new();
    cwork_args_set_int64(a, "k", k);
    cwork_error err = {0};
    int rc = cwork_enqueue_unique(enq, name, a, NULL, &err);
    cwork_args_free(a);
    return rc;
}

static int enqueue_by_key(cwork_enqueuer *enq, const char *name, long k, long v)
{
    cwork_args *a = cwork_args_new(), *key = cwork_args_new();
    cwork_args_set_int64(a, "v", v);
    cwork_args_set_int64(key, "k", k);
    cwork_error err = {0};
    int rc = cwork_enqueue_unique_by_key(enq, name, a, key, NULL, &err);
    cwork_args_free(a);
    cwork_args_free(key);
    return rc;
}

static cwork_enqueuer *enqueuer(void)
{
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, &err);
    CHECK(enq != NULL);
    return enq;
}

/* Two shards, recorded by an enqueuer that declares them. */
static void two_shards(void)
{
    cwork_enqueuer *e = enqueuer();
    cwork_error err = {0};
    CHECK_INT(cwork_enqueuer_set_shards(e, 2, &err), 0);
    cwork_enqueuer_free(e);
}

static void grow_changes_the_record_once(void)
{
    fresh_ns("gr");
    int64_t t0 = clock_start_manual() / 1000;
    cwork_error err = {0};
    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    CHECK_INT(cwork_client_shards_grow(c, 1, &err), CWORK_EINVAL);
    CHECK_INT(cwork_client_shards_grow(c, 1025, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "1025 shards") != NULL);
    char *none = record();
    CHECK_STR(none, "");
    free(none);
    /* no record: one shard grown to two */
    CHECK_INT(cwork_client_shards_grow(c, 2, &err), 0);
    char want[512];
    snprintf(want, sizeof want,
             "%s:cwork:shards hash count=2 | created=%lld | from=1 | grown=%lld | "
             "hash=fnv1a64-jump | homes=1\n",
             ns_, (long long)t0, (long long)t0);
    char *got = record();
    CHECK_STR(got, want);
    free(got);
    unsigned n = 0;
    CHECK_INT(cwork_client_shards(c, &n, &err), 0);
    CHECK_INT(n, 2);
    /* the same count again: nothing changes; another while growing: refused */
    cw_clock_advance_ms(3000);
    CHECK_INT(cwork_client_shards_grow(c, 2, &err), 0);
    CHECK_INT(cwork_client_shards_grow(c, 3, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "still growing from 1 to 2") != NULL);
    got = record();
    CHECK_STR(got, want);
    free(got);
    /* the window first: 15 s after the grow */
    cwork_shards_growth g;
    CHECK_INT(cwork_client_shards_finish(c, &g, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "12 s of forwarding left") != NULL);
    CHECK_INT(g.from, 1);
    CHECK_INT(g.wait_seconds, 12);
    cw_clock_advance_ms(12000);
    CHECK_INT(cwork_client_shards_finish(c, &g, &err), 0);
    CHECK_INT(g.from, 0);
    CHECK_INT(cwork_client_shards_finish(c, &g, &err), 0); /* none in progress: harmless */
    /* no shrinking; homes stays what the first grow wrote */
    CHECK_INT(cwork_client_shards_grow(c, 1, &err), CWORK_EINVAL);
    CHECK_INT(cwork_client_shards_grow(c, 4, &err), 0);
    CHECK_INT(cwork_client_shards_grow(c, 3, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "cannot shrink") != NULL);
    CHECK_INT(cwork_client_shards_growth(c, &g, &err), 0);
    CHECK_INT(g.count, 4);
    CHECK_INT(g.from, 2);
    CHECK_INT(g.homes, 1);
    /* damage is named, nothing written */
    tl_do(rc_, "DEL %s:cwork:shards", ns_);
    tl_do(rc_, "SET %s:cwork:shards x", ns_);
    CHECK_INT(cwork_client_shards_grow(c, 3, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, ":cwork:shards is damaged") != NULL);
    cwork_client_free(c);
    cw_clock_system();
    delete_all();
}

static void unique_keys_stay_unique_across_a_grow(void)
{
    fresh_ns("gu");
    clock_start_manual();
    two_shards();
    unsigned was = 0, now = 0;
    long k = moving_key("u", "k", &was, &now);
    cwork_enqueuer *old = enqueuer(); /* reads the record at its first enqueue: 2 shards */
    CHECK_INT(enqueue_u(old, "u", k), 0);
    CHECK_INT(llen(was, "u"), 1);
    cwork_error err = {0};
    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    CHECK_INT(cwork_client_shards_grow(c, 3, &err), 0);
    /* a new view asks the old shard: a duplicate, nothing in the new one */
    cwork_enqueuer *fresh = enqueuer();
    CHECK_INT(enqueue_u(fresh, "u", k), CWORK_DUPLICATE);
    CHECK_INT(llen(now, "u"), 0);
    CHECK_INT(llen(was, "u"), 1);
    cwork_shards_growth g;
    CHECK_INT(cwork_client_shards_growth(c, &g, &err), 0);
    CHECK_INT(g.guards, 1);
    CHECK_INT(g.batches, 0);
    /* another moving key, new: enqueued in its new shard, a marker left in the old one,
     * which refuses the enqueuer still on 2 shards */
    long k2 = k + 1;
    unsigned was2 = 0, now2 = 0;
    char route[64];
    for (;; k2++) {
        int len = snprintf(route, sizeof route, "u:{\"k\":%ld}", k2);
        was2 = cw_sharding_of(route, (size_t)len, 2);
        now2 = cw_sharding_of(route, (size_t)len, 3);
        if (was2 != now2) break;
    }
    CHECK_INT(enqueue_u(fresh, "u", k2), 0);
    CHECK_INT(llen(now2, "u"), 1);
    char guard[128];
    snprintf(guard, sizeof guard, "unique:u:{\"k\":%ld}\n", k2);
    redisReply *r = tl_cmd(rc_, "HGET %s:%s cwork", shard_[was2], guard);
    CHECK(r->type == REDIS_REPLY_STRING && strcmp(r->str, CW_SHARDING_FORWARD_MARK) == 0);
    freeReplyObject(r);
    r = tl_cmd(rc_, "TTL %s:%s", shard_[was2], guard);
    CHECK(r->integer > 0 && r->integer <= CW_SHARDING_FORWARD_TTL);
    freeReplyObject(r);
    CHECK_INT(enqueue_u(old, "u", k2), CWORK_DUPLICATE); /* the old view meets the marker */
    CHECK_INT(llen(was2, "u"), (was2 == was) ? 1 : 0);
    CHECK_INT(enqueue_u(fresh, "u", k2), CWORK_DUPLICATE); /* its guard in the new shard */
    /* ByKey alike: a duplicate on either view, and the marker is not re-armed */
    unsigned wasb = 0, nowb = 0;
    long kb = moving_key("b", "k", &wasb, &nowb);
    CHECK_INT(enqueue_by_key(fresh, "b", kb, 1), 0);
    CHECK_INT(llen(nowb, "b"), 1);
    CHECK_INT(enqueue_by_key(old, "b", kb, 2), CWORK_DUPLICATE);
    CHECK_INT(enqueue_by_key(fresh, "b", kb, 3), CWORK_DUPLICATE);
    snprintf(guard, sizeof guard, "unique:b:{\"k\":%ld}\n", kb);
    r = tl_cmd(rc_, "HGET %s:%s cwork", shard_[wasb], guard);
    CHECK(r->type == REDIS_REPLY_STRING && strcmp(r->str, CW_SHARDING_FORWARD_MARK) == 0);
    freeReplyObject(r);
    r = tl_cmd(rc_, "TTL %s:%s", shard_[wasb], guard);
    CHECK(r->integer > 0 && r->integer <= CW_SHARDING_FORWARD_TTL);
    freeReplyObject(r);
    CHECK_INT(llen(wasb, "b"), 0);
    /* what still routes by 2 shards: u's first guard and the two markers */
    CHECK_INT(cwork_client_shards_growth(c, &g, &err), 0);
    CHECK_INT(g.guards, 3);
    CHECK_INT(cwork_client_shards_finish(c, &g, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "3 guards and 0 open batches") != NULL);
    /* u's first job starts (its pool deletes its guard), the markers expire (DEL stands
     * for their TTL) and the window passes: the grow may end */
    for (unsigned i = 0; i < 2; i++) {
        redisReply *ks = tl_cmd(rc_, "KEYS %s:unique:*", shard_[i]);
        for (size_t j = 0; j < ks->elements; j++)
            freeReplyObject(tl_cmd(rc_, "DEL %b", ks->element[j]->str, ks->element[j]->len));
        freeReplyObject(ks);
    }
    cw_clock_advance_ms(1000 * CW_SHARDING_FORWARD_TTL);
    CHECK_INT(cwork_client_shards_finish(c, &g, &err), 0);
    /* after the grow: straight to the new shard, no marker */
    cw_clock_advance_ms(6000); /* every enqueuer reads the record again */
    long k3 = k2 + 1;
    for (;; k3++) {
        int len = snprintf(route, sizeof route, "u:{\"k\":%ld}", k3);
        was2 = cw_sharding_of(route, (size_t)len, 2);
        now2 = cw_sharding_of(route, (size_t)len, 3);
        if (was2 != now2) break;
    }
    CHECK_INT(enqueue_u(old, "u", k3), 0);
    snprintf(guard, sizeof guard, "%s:unique:u:{\"k\":%ld}\n", shard_[was2], k3);
    CHECK_INT(exists("EXISTS %s%s", guard, ""), 0);
    snprintf(guard, sizeof guard, "%s:unique:u:{\"k\":%ld}\n", shard_[now2], k3);
    CHECK_INT(exists("EXISTS %s%s", guard, ""), 1);
    cwork_enqueuer_free(old);
    cwork_enqueuer_free(fresh);
    cwork_client_free(c);
    cw_clock_system();
    delete_all();
}

/* A pinned name keeps the shard of its name under the count before the grow (homes). */
static void pinned_names_stay_home(void)
{
    fresh_ns("gp");
    clock_start_manual();
    two_shards();
    char name[32];
    unsigned home = 0;
    for (int i = 0;; i++) {
        snprintf(name, sizeof name, "lim%d", i);
        home = cw_sharding_of(name, strlen(name), 2);
        if (home != cw_sharding_of(name, strlen(name), 3)) break;
    }
    tl_do(rc_, "SADD %s:cwork:shard_pinned %s", ns_, name);
    cwork_error err = {0};
    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    CHECK_INT(cwork_client_shards_grow(c, 3, &err), 0);
    cwork_enqueuer *e = enqueuer();
    for (int i = 0; i < 20; i++)
        CHECK_INT(cwork_enqueue(e, name, NULL, NULL, &err), 0);
    CHECK_INT(llen(home, name), 20);
    CHECK_INT(enqueue_u(e, name, 7), 0); /* a pinned unique job: home too, no marker */
    CHECK_INT(llen(home, name), 21);
    cwork_shards_growth g;
    CHECK_INT(cwork_client_shards_growth(c, &g, &err), 0);
    CHECK_INT(g.guards, 0);
    cwork_enqueuer_free(e);
    cwork_client_free(c);
    cw_clock_system();
    delete_all();
}

/* A tracked batch opened before the grow keeps its members in its shard; the grow waits
 * for it. */
static void a_batch_opened_before_keeps_its_shard(void)
{
    fresh_ns("gb");
    clock_start_manual();
    two_shards();
    cwork_enqueuer *e = enqueuer();
    cwork_error err = {0};
    char id[25];
    unsigned was = 0;
    for (;;) { /* a batch whose id moves */
        CHECK_INT(cwork_batch_open(e, CWORK_BATCH_ON_COMPLETE, "done", NULL, id, &err), 0);
        was = cw_sharding_of(id, 24, 2);
        if (was != cw_sharding_of(id, 24, 3)) break;
    }
    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    CHECK_INT(cwork_client_shards_grow(c, 3, &err), 0);
    cwork_enqueuer *fresh = enqueuer();
    cwork_batch *b = cwork_batch_new(fresh);
    CHECK_INT(cwork_batch_join(b, id, &err), 0);
    for (int i = 0; i < 4; i++)
        CHECK_INT(cwork_batch_add(b, "m", NULL, 0, 0, &err), 0);
    CHECK_INT(cwork_enqueue_batch(b, &err), 0);
    CHECK_INT(llen(was, "m"), 4);
    CHECK_INT(cwork_batch_seal(fresh, id, &err), 0);
    cwork_batch_info info;
    CHECK_INT(cwork_batch_read(fresh, id, &info, &err), 0);
    CHECK_INT(info.total, 4);
    cw_clock_advance_ms(1000 * CW_SHARDING_FORWARD_TTL);
    cwork_shards_growth g;
    CHECK_INT(cwork_client_shards_finish(c, &g, &err), CWORK_EINVAL);
    CHECK(g.batches >= 1); /* (the batches opened while looking for one that moves, too) */
    /* once their callbacks are enqueued the batches no longer hold the grow */
    for (unsigned i = 0; i < 2; i++) {
        redisReply *r = tl_cmd(rc_, "KEYS %s:cwork:batch:*", shard_[i]);
        for (size_t j = 0; j < r->elements; j++)
            if (!strstr(r->element[j]->str, ":jobs"))
                freeReplyObject(tl_cmd(rc_, "HSET %b callback enqueued", r->element[j]->str,
                                       r->element[j]->len));
        freeReplyObject(r);
    }
    CHECK_INT(cwork_client_shards_finish(c, &g, &err), 0);
    cwork_batch_free(b);
    cwork_enqueuer_free(e);
    cwork_enqueuer_free(fresh);
    cwork_client_free(c);
    cw_clock_system();
    delete_all();
}

static int noop(cwork_job *job, void *ctx)
{
    (void)job;
    (void)ctx;
    return 0;
}

/* A process that declared 2 shards: refused at start once the record says 3 (the message
 * says so); one that was running follows. */
static void a_declared_count_after_a_grow(void)
{
    fresh_ns("gd");
    clock_start_manual();
    cwork_enqueuer *running = enqueuer();
    cwork_error err = {0};
    CHECK_INT(cwork_enqueuer_set_shards(running, 2, &err), 0);
    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    CHECK_INT(cwork_client_shards_grow(c, 3, &err), 0);
    cwork_enqueuer *late = enqueuer();
    CHECK_INT(cwork_enqueuer_set_shards(late, 2, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "was grown to 3 shards") != NULL);
    cw_clock_advance_ms(6000);
    CHECK_INT(cwork_enqueue(running, "x", NULL, NULL, &err), 0);
    long long total = 0;
    for (unsigned i = 0; i < 3; i++)
        total += llen(i, "x");
    CHECK_INT(total, 1);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.shards = 2;
    cwork_pool *p = cwork_pool_new(redis_, ns_, &o, &err);
    CHECK(p != NULL);
    CHECK_INT(cwork_pool_register(p, "x", noop, NULL, &err), 0);
    CHECK_INT(cwork_pool_start(p, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "was grown to 3 shards") != NULL);
    cwork_pool_free(p);
    cwork_enqueuer_free(running);
    cwork_enqueuer_free(late);
    cwork_client_free(c);
    cw_clock_system();
    delete_all();
}

/* README's "ACL SETUSER cwork-enqueuer" line for ns_ as user grow-acl (with the shards'
 * key and channel patterns README asks for); 0, or -1 when README has no such line. */
static int set_acl_user(void)
{
    const char *src = getenv("CWORK_SOURCE_DIR");
    char path[512];
    snprintf(path, sizeof path, "%s/README.md", src ? src : ".");
    char *readme = tl_read_file(path, NULL);
    const char *p = readme ? strstr(readme, "\nACL SETUSER cwork-enqueuer ") : NULL;
    if (!p) {
        free(readme);
        return -1;
    }
    char line[2048];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(p + 1, "\n"), p + 1);
    free(readme);
    static char words[300][160];
    const char *argv[300];
    int argc = 0;
    for (char *tok = strtok(line, " "); tok && argc < 296; tok = strtok(NULL, " ")) {
        const char *m = strstr(tok, "myapp");
        if (m)
            snprintf(words[argc], 160, "%.*s%s%s", (int)(m - tok), tok, ns_, m + 5);
        else
            snprintf(words[argc], 160, "%s",
                     strcmp(tok, ">CHANGE-ME") == 0       ? ">pw"
                     : strcmp(tok, "cwork-enqueuer") == 0 ? "grow-acl"
                                                          : tok);
        argv[argc] = words[argc];
        argc++;
    }
    snprintf(words[argc], 160, "~{%s.*}:*", ns_);
    argv[argc] = words[argc];
    argc++;
    snprintf(words[argc], 160, "&{%s.*}:*", ns_);
    argv[argc] = words[argc];
    argc++;
    freeReplyObject(tl_cmd(rc_, "ACL DELUSER grow-acl"));
    redisReply *r = redisCommandArgv(rc_, argc, argv, NULL);
    if (!r || r->type == REDIS_REPLY_ERROR)
        tl_fail(__FILE__, __LINE__, "ACL SETUSER: %s", r ? r->str : "I/O error");
    if (r) freeReplyObject(r);
    return 0;
}

/* An enqueuer with README's cwork-enqueuer ACL (no GET, no HSETNX) across a grow: the
 * old shard's check and its marker need no more than that role has. */
static void an_acl_enqueuer_across_a_grow(void)
{
    fresh_ns("ga");
    clock_start_manual();
    two_shards();
    CHECK_INT(set_acl_user(), 0);
    char url[256];
    const char *base = tl_redis_url();
    const char *host = strstr(base, "://");
    snprintf(url, sizeof url, "redis://grow-acl:pw@%s", host ? host + 3 : base);
    cwork_error err = {0};
    cwork_redis *ur = cwork_redis_new(url, NULL, &err);
    CHECK(ur != NULL);
    cwork_enqueuer *old = cwork_enqueuer_new(ur, ns_, &err);
    unsigned was = 0, now = 0;
    long k = moving_key("u", "k", &was, &now);
    CHECK_INT(enqueue_u(old, "u", k), 0);
    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    CHECK_INT(cwork_client_shards_grow(c, 3, &err), 0);
    cwork_redis *ur2 = cwork_redis_new(url, NULL, &err);
    cwork_enqueuer *fresh = cwork_enqueuer_new(ur2, ns_, &err);
    CHECK_INT(enqueue_u(fresh, "u", k), CWORK_DUPLICATE);
    unsigned was2 = 0, now2 = 0;
    long k2 = k + 1;
    for (;; k2++) {
        char route[64];
        int len = snprintf(route, sizeof route, "u:{\"k\":%ld}", k2);
        was2 = cw_sharding_of(route, (size_t)len, 2);
        now2 = cw_sharding_of(route, (size_t)len, 3);
        if (was2 != now2) break;
    }
    if (enqueue_u(fresh, "u", k2) != 0) tl_fail(__FILE__, __LINE__, "as grow-acl: %s", err.message);
    CHECK_INT(llen(now2, "u"), 1);
    CHECK_INT(enqueue_u(old, "u", k2), CWORK_DUPLICATE);
    cwork_enqueuer_free(old);
    cwork_enqueuer_free(fresh);
    cwork_redis_free(ur);
    cwork_redis_free(ur2);
    cwork_client_free(c);
    freeReplyObject(tl_cmd(rc_, "ACL DELUSER grow-acl"));
    cw_clock_system();
    delete_all();
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
    RUN(grow_changes_the_record_once);
    RUN(unique_keys_stay_unique_across_a_grow);
    RUN(pinned_names_stay_home);
    RUN(a_batch_opened_before_keeps_its_shard);
    RUN(a_declared_count_after_a_grow);
    RUN(an_acl_enqueuer_across_a_grow);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
