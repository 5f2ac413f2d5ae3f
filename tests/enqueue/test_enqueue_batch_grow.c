/* A tracked batch after a grow that has ended (PROTOCOL §23, §27.5), against a real Redis:
 * a batch opened on two shards whose id's shard moves under three, completed by a cwork
 * pool serving both shards (its members and its callback run), then the namespace grown
 * to three and the grow finished (on the manual clock). The batch still lives in its old
 * shard for as long as it is kept; cwork_batch_read (an enqueuer that saw the grow, and
 * one made after it) and cwork_client_batch find it there, an id never opened is not
 * found and the message names the key of its shard by today's count, and reading writes
 * nothing (every shard dumped before and after). Sealing and joining it find it too
 * (sealed already; a member refused as sealed, naming its old shard's key), and an open
 * batch left in its old shard is joined and sealed there, nothing written elsewhere. */
#include "clock_testutil.h"
#include "cwork.h"
#include "shards_testutil.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];
static char shard_[3][80];
static atomic_int ran_;

static void fresh_ns(const char *tag)
{
    st_fresh_ns(tag, ns_, sizeof ns_, shard_, 3);
}

static void delete_all(void)
{
    st_delete(rc_, shard_, 3);
}

static char *dump_all(void)
{
    return st_dump(rc_, shard_, 3);
}

static int count_run(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    atomic_fetch_add(&ran_, 1);
    return 0;
}

static cwork_enqueuer *enqueuer(void)
{
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, &err);
    CHECK(enq != NULL);
    return enq;
}

/* The batch's members ("m") run by a pool on two shards, and its callback ("done"). */
static void complete(void)
{
    cwork_error err = {0};
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 2;
    o.shards = 2;
    cwork_pool *p = cwork_pool_new(redis_, ns_, &o, &err);
    CHECK(p != NULL);
    CHECK_INT(cwork_pool_register(p, "m", count_run, NULL, &err), 0);
    CHECK_INT(cwork_pool_register(p, "done", count_run, NULL, &err), 0);
    CHECK_INT(cwork_pool_start(p, &err), 0);
    for (int i = 0; i < 2000 && atomic_load(&ran_) < 3; i++) /* two members, one callback */
        tl_sleep_ms(10);
    CHECK_INT(cwork_pool_drain(p, 30000, &err), 0);
    CHECK_INT(cwork_pool_stop(p, 10000, &err), 0);
    cwork_pool_free(p);
    CHECK_INT(atomic_load(&ran_), 3);
}

static void check_info(const cwork_batch_info *info)
{
    CHECK_INT(info->total, 2);
    CHECK_INT(info->succeeded, 2);
    CHECK_INT(info->pending, 0);
    CHECK(info->sealed);
    CHECK_INT(info->callback_state, CWORK_BATCH_CALLBACK_ENQUEUED);
    CHECK(info->ttl > 0);
}

static void a_completed_batch_is_read_after_the_grow(void)
{
    fresh_ns("bg");
    cwork_error err = {0};
    cwork_enqueuer *e = enqueuer();
    CHECK_INT(cwork_enqueuer_set_shards(e, 2, &err), 0);
    char id[25];
    unsigned was = 0, now = 0;
    int opened = 0;
    for (;; opened++) { /* a batch whose id's shard moves from 2 to 3 shards */
        CHECK_INT(cwork_batch_open(e, CWORK_BATCH_ON_COMPLETE, "done", NULL, id, &err), 0);
        was = cw_sharding_of(id, 24, 2);
        now = cw_sharding_of(id, 24, 3);
        if (was != now) break;
        CHECK(opened < 1000);
        /* the others, which stay where they are, are dropped to keep the namespace small */
        tl_do(rc_, "DEL %s:cwork:batch:%s", shard_[was], id);
    }
    cwork_batch *b = cwork_batch_new(e);
    CHECK_INT(cwork_batch_join(b, id, &err), 0);
    CHECK_INT(cwork_batch_add(b, "m", NULL, 0, 0, &err), 0);
    CHECK_INT(cwork_batch_add(b, "m", NULL, 0, 0, &err), 0);
    CHECK_INT(cwork_enqueue_batch(b, &err), 0);
    cwork_batch_free(b);
    CHECK_INT(cwork_batch_seal(e, id, &err), 0);
    complete();

    /* the grow, then its end (the window passed on the manual clock) */
    clock_start_manual();
    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    CHECK(c != NULL);
    CHECK_INT(cwork_client_shards_grow(c, 3, &err), 0);
    cw_clock_advance_ms(1000 * CW_SHARDING_FORWARD_TTL);
    cwork_shards_growth g;
    CHECK_INT(cwork_client_shards_finish(c, &g, &err), 0);
    CHECK_INT(g.from, 0);
    CHECK_INT(g.count, 3);
    /* the batch is where it was opened */
    char key[160];
    snprintf(key, sizeof key, "%s:cwork:batch:%s", shard_[was], id);
    redisReply *x = tl_cmd(rc_, "EXISTS %s", key);
    CHECK_INT(x->integer, 1);
    freeReplyObject(x);

    char *before = dump_all();
    cwork_batch_info info;
    cwork_enqueuer *after = enqueuer(); /* reads the record at its first call: 3, no grow */
    cwork_enqueuer *readers[] = {after, e};
    for (int i = 0; i < 2; i++) {
        memset(&info, 0, sizeof info);
        err = (cwork_error){0};
        int rc = cwork_batch_read(readers[i], id, &info, &err);
        if (rc != 0) tl_fail(__FILE__, __LINE__, "reader %d: %d %s", i, rc, err.message);
        check_info(&info);
    }
    memset(&info, 0, sizeof info);
    CHECK_INT(cwork_client_batch(c, id, &info, &err), 0);
    check_info(&info);
    /* an id never opened: not found, named in its shard by today's count */
    const char *none = "00112233445566778899aabb";
    CHECK_INT(cwork_batch_read(after, none, &info, &err), CWORK_ENOTFOUND);
    snprintf(key, sizeof key, "%s:cwork:batch:%s does not exist",
             shard_[cw_sharding_of(none, 24, 3)], none);
    if (!strstr(err.message, key)) tl_fail(__FILE__, __LINE__, "message: %s", err.message);
    /* sealing it again and joining it find it too: sealed already (0), and a member
     * refused as the batch is sealed, naming its key in the old shard */
    snprintf(key, sizeof key, "SEALED %s:cwork:batch:%s is sealed", shard_[was], id);
    for (int i = 0; i < 2; i++) {
        err = (cwork_error){0};
        int rc = cwork_batch_seal(readers[i], id, &err);
        if (rc != 0) tl_fail(__FILE__, __LINE__, "seal %d: %d %s", i, rc, err.message);
        cwork_batch *j = cwork_batch_new(readers[i]);
        CHECK_INT(cwork_batch_join(j, id, &err), 0);
        CHECK_INT(cwork_batch_add(j, "m", NULL, 0, 0, &err), 0);
        CHECK_INT(cwork_enqueue_batch(j, &err), CWORK_EREDIS);
        if (!strstr(err.message, key)) tl_fail(__FILE__, __LINE__, "join %d: %s", i, err.message);
        CHECK_INT(cwork_batch_status(j, 0, NULL), CWORK_EREDIS);
        cwork_batch_free(j);
    }
    /* an id never opened: a seal and a join are refused, naming its key by today's count */
    snprintf(key, sizeof key, "%s:cwork:batch:%s does not exist",
             shard_[cw_sharding_of(none, 24, 3)], none);
    CHECK_INT(cwork_batch_seal(after, none, &err), CWORK_ENOTFOUND);
    if (!strstr(err.message, key)) tl_fail(__FILE__, __LINE__, "seal: %s", err.message);
    cwork_batch *j = cwork_batch_new(after);
    CHECK_INT(cwork_batch_join(j, none, &err), 0);
    CHECK_INT(cwork_batch_add(j, "m", NULL, 0, 0, &err), 0);
    CHECK_INT(cwork_enqueue_batch(j, &err), CWORK_EREDIS);
    if (!strstr(err.message, key)) tl_fail(__FILE__, __LINE__, "join: %s", err.message);
    cwork_batch_free(j);
    char *later = dump_all();
    CHECK_STR(later, before);
    free(before);
    free(later);

    cwork_enqueuer_free(after);
    cwork_enqueuer_free(e);
    cwork_client_free(c);
    cw_clock_system();
    delete_all();
}

static long long int_of(const char *fmt, const char *a, const char *b)
{
    redisReply *r = tl_cmd(rc_, fmt, a, b);
    long long v = r->type == REDIS_REPLY_INTEGER  ? r->integer
                  : r->type == REDIS_REPLY_STRING ? atoll(r->str)
                                                  : -1;
    freeReplyObject(r);
    return v;
}

/* An open batch in its old shard once the grow has no `from` any more. The finish waits
 * for such a batch (§27.5), so a finished grow leaves only completed ones (above); this
 * one's grow is ended by removing `from` from the record by hand, which is all that
 * shards_finish.lua does, to show where members and the seal are written: in the batch's
 * shard, and nothing anywhere else. */
static void an_open_batch_is_joined_and_sealed_where_it_lives(void)
{
    fresh_ns("bj");
    cwork_error err = {0};
    cwork_enqueuer *e = enqueuer();
    CHECK_INT(cwork_enqueuer_set_shards(e, 2, &err), 0);
    char id[25];
    unsigned was = 0, now = 0;
    for (int opened = 0;; opened++) { /* a batch whose id's shard moves from 2 to 3 */
        CHECK_INT(cwork_batch_open(e, CWORK_BATCH_ON_COMPLETE, "done", NULL, id, &err), 0);
        was = cw_sharding_of(id, 24, 2);
        now = cw_sharding_of(id, 24, 3);
        if (was != now) break;
        CHECK(opened < 1000);
        tl_do(rc_, "DEL %s:cwork:batch:%s", shard_[was], id);
    }
    cwork_client *c = cwork_client_new(redis_, ns_, &err);
    CHECK(c != NULL);
    CHECK_INT(cwork_client_shards_grow(c, 3, &err), 0);
    tl_do(rc_, "HDEL %s:cwork:shards from", ns_);
    char *before[3];
    for (unsigned i = 0; i < 3; i++)
        before[i] = tl_ns_dump(rc_, shard_[i]);

    cwork_enqueuer *after = enqueuer(); /* count 3, no grow: the id routes to `now` */
    cwork_batch *b = cwork_batch_new(after);
    CHECK_INT(cwork_batch_join(b, id, &err), 0);
    CHECK_INT(cwork_batch_add(b, "m", NULL, 0, 0, &err), 0);
    CHECK_INT(cwork_batch_add(b, "m", NULL, 0, 0, &err), 0);
    int rc = cwork_enqueue_batch(b, &err);
    if (rc != 0) tl_fail(__FILE__, __LINE__, "join: %d %s", rc, err.message);
    CHECK_INT(cwork_batch_status(b, 0, NULL), CWORK_OK);
    CHECK_INT(cwork_batch_status(b, 1, NULL), CWORK_OK);
    cwork_batch_free(b);
    rc = cwork_batch_seal(after, id, &err);
    if (rc != 0) tl_fail(__FILE__, __LINE__, "seal: %d %s", rc, err.message);

    /* the batch's shard has both members and the sealed batch; the others are as before */
    char key[160];
    snprintf(key, sizeof key, "%s:cwork:batch:%s", shard_[was], id);
    CHECK_INT(int_of("HGET %s %s", key, "total"), 2);
    CHECK_INT(int_of("HGET %s %s", key, "sealed"), 1);
    CHECK_INT(int_of("LLEN %s:jobs:%s", shard_[was], "m"), 2);
    for (unsigned i = 0; i < 3; i++) {
        char *d = tl_ns_dump(rc_, shard_[i]);
        if (i != was) {
            CHECK_STR(d, before[i]);
            CHECK_INT(int_of("EXISTS %s:cwork:batch:%s", shard_[i], id), 0);
        }
        free(d);
        free(before[i]);
    }
    cwork_enqueuer_free(after);
    cwork_enqueuer_free(e);
    cwork_client_free(c);
    delete_all();
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    RUN(a_completed_batch_is_read_after_the_grow);
    RUN(an_open_batch_is_joined_and_sealed_where_it_lives);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
