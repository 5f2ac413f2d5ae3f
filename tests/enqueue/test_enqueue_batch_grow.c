/* A tracked batch after a grow that has ended (PROTOCOL §23, §27.5), against a real Redis:
 * a batch opened on two shards whose id's shard moves under three, completed by a cwork
 * pool serving both shards (its members and its callback run), then the namespace grown
 * to three and the grow finished (on the manual clock). The batch still lives in its old
 * shard for as long as it is kept; cwork_batch_read (an enqueuer that saw the grow, and
 * one made after it) and cwork_client_batch find it there, an id never opened is not
 * found and the message names the key of its shard by today's count, and reading writes
 * nothing (every shard dumped before and after). */
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

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    RUN(a_completed_batch_is_read_after_the_grow);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
