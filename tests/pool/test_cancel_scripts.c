/* Cancellation in the scripts that end a running job (PROTOCOL §21), run against a real
 * Redis: the cycle script's commit sends a job marked in <p>cwork:cancelled to dead with
 * err "cancelled" whatever the pool said (success, retry, drop), takes its mark away and
 * leaves other marks; a pool that knew (target 'c') has its own record written; without
 * marks nothing changes. The reaper's requeue sends a crashed pool's marked job to dead
 * instead of its queue. Each case checks the whole namespace. */
#include "cwork.h"
#include "cycle_testutil.h"
#include "keys.h"
#include "reaper.h"

#include <string.h>

static cwork_redis *redis_;

/* Fetches count jobs of type a (setup for a commit). */
static void fetch_a(int count)
{
    drawbuf d = draws(1, "a", count);
    redisReply *r = cycle("a", 0, &d, NULL);
    char got[BIG];
    if (fetched(r, 1, got, sizeof got) != count)
        tl_fail(__FILE__, __LINE__, "setup fetch of %d jobs: %s", count, got);
    freeReplyObject(r);
}

/* The one member of the dead set with its score, checked as the cancelled form of the
 * job with this id (fails + 1, err "cancelled", failed_at = score = at); its bytes are
 * copied to bytes (cjson's form: its key order is cjson's). */
static void check_dead_cancelled(int line, const char *id, long long fails, long long at,
                                 char *bytes, size_t size)
{
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1 WITHSCORES", ns_);
    bytes[0] = '\0';
    if (r->elements != 2) {
        tl_fail(__FILE__, line, "dead holds %zu members, expected 1", r->elements / 2);
        freeReplyObject(r);
        return;
    }
    cwork_job *j = NULL;
    if (cwork_job_decode(r->element[0]->str, r->element[0]->len, &j, NULL) != 0) {
        tl_fail(__FILE__, line, "dead member does not decode: %s", r->element[0]->str);
    } else {
        if (strcmp(cwork_job_id(j), id) != 0 || cwork_job_fails(j) != fails ||
            strcmp(cwork_job_last_error(j), "cancelled") != 0 || cwork_job_failed_at(j) != at ||
            atoll(r->element[1]->str) != at)
            tl_fail(__FILE__, line, "dead member %s=%s is not %s cancelled at %lld, fails %lld",
                    r->element[0]->str, r->element[1]->str, id, at, fails);
        cwork_job_free(j);
    }
    snprintf(bytes, size, "%s", r->element[0]->str);
    freeReplyObject(r);
}

/* The reply's group of jobs the script sent to dead as cancelled: {-1, m, positions}. */
static void check_cancelled_group(int line, const redisReply *r, long long position)
{
    size_t n = r->type == REDIS_REPLY_ARRAY ? r->elements : 0;
    if (n != 4 || r->element[1]->integer != -1 || r->element[2]->integer != 1 ||
        r->element[3]->integer != position)
        tl_fail(__FILE__, line, "the reply does not list position %lld as cancelled", position);
}

static void a_cancelled_job_committed_as_a_success_goes_to_dead_and_loses_its_mark(void)
{
    fresh();
    push('a', 1, 2);
    fetch_a(2);
    cmd("HSET %s:cwork:cancelled a1 1700000500 other 1700000600", ns_);
    commit c = {0};
    group(&c, 1, 2, 0);
    args(&c, "<a2>", "<a1>", NULL);
    redisReply *r = cycle("a", 0, NULL, &c);
    CHECK_REMOVED(r, 2);
    check_cancelled_group(__LINE__, r, 2);
    char dead[256], want[BIG];
    check_dead_cancelled(__LINE__, "a1", 1, 1700000500, dead, sizeof dead);
    snprintf(want, sizeof want,
             "@:cwork:cancelled hash other=1700000600\n"
             "@:dead zset %s=1700000500\n"
             "@:jobs:a:lock string 0\n"
             "@:jobs:a:lock_info hash " POOL "=0\n",
             dead);
    CHECK_NS(want);
    done(r);
}

static void a_cancelled_job_the_pool_would_retry_goes_to_dead_and_the_last_mark_goes(void)
{
    fresh();
    push('a', 1, 1);
    fetch_a(1);
    cmd("HSET %s:cwork:cancelled a1 1700000500", ns_);
    commit c = {0};
    group(&c, 1, 0, 1);
    args(&c, "{\"name\":\"a\",\"id\":\"a1\",\"fails\":2}", NULL); /* fetched bytes */
    freeReplyObject(tl_cmd(rc_, "DEL %s:jobs:a:" POOL ":inprogress", ns_));
    cmd("LPUSH %s:jobs:a:" POOL ":inprogress %s", ns_,
        "{\"name\":\"a\",\"id\":\"a1\",\"fails\":2}");
    args(&c, "r", "1800000000", "{\"name\":\"a\",\"id\":\"a1\",\"fails\":3,\"err\":\"boom\"}",
         NULL);
    redisReply *r = cycle("a", 0, NULL, &c);
    CHECK_REMOVED(r, 1);
    check_cancelled_group(__LINE__, r, 1);
    char dead[256], want[BIG];
    check_dead_cancelled(__LINE__, "a1", 3, 1700000500, dead, sizeof dead);
    snprintf(want, sizeof want,
             "@:dead zset %s=1700000500\n"
             "@:jobs:a:lock string 0\n"
             "@:jobs:a:lock_info hash " POOL "=0\n",
             dead);
    CHECK_NS(want); /* not in retry; the cancelled hash is gone with its last field */
    done(r);
}

static void a_pool_that_knew_writes_its_own_record_and_the_mark_goes(void)
{
    fresh();
    push('a', 1, 2);
    fetch_a(2);
    cmd("HSET %s:cwork:cancelled a1 1700000500", ns_);
    commit c = {0};
    group(&c, 1, 0, 2);
    /* a1: the pool heard of the cancel; a2: 'c' too, without a mark (it expired) */
    args(&c, "<a1>", "c", "1700000501", "{\"id\":\"a1\",\"err\":\"cancelled\"}", "<a2>", "c",
         "1700000502", "{\"id\":\"a2\",\"err\":\"cancelled\"}", NULL);
    redisReply *r = cycle("a", 0, NULL, &c);
    CHECK_REMOVED(r, 2);
    CHECK_INT(r->elements, 1); /* the pool knew: nothing to tell it */
    CHECK_NS("@:dead zset {\"id\":\"a1\",\"err\":\"cancelled\"}=1700000501 | "
             "{\"id\":\"a2\",\"err\":\"cancelled\"}=1700000502\n"
             "@:jobs:a:lock string 0\n"
             "@:jobs:a:lock_info hash " POOL "=0\n");
    done(r);
}

static void without_marks_a_commit_is_what_it_was(void)
{
    fresh();
    push('a', 1, 2);
    fetch_a(2);
    cmd("SET %s:cwork:cancelled not-a-hash", ns_); /* damaged: read as no marks */
    commit c = {0};
    group(&c, 1, 1, 1);
    args(&c, "<a1>", "<a2>", "r", "1800000000", "{\"id\":\"a2\",\"fails\":1}", NULL);
    redisReply *r = cycle("a", 0, NULL, &c);
    CHECK_REMOVED(r, 2);
    CHECK_NS("@:cwork:cancelled string not-a-hash\n"
             "@:jobs:a:lock string 0\n"
             "@:jobs:a:lock_info hash " POOL "=0\n"
             "@:retry zset {\"id\":\"a2\",\"fails\":1}=1800000000\n");
    done(r);
}

#define DEAD_POOL "deaddeaddeaddeaddeaddead"

/* A crashed pool held a1 (cancelled while it ran) and a2: a reaper requeues a2 and sends
 * a1 to dead; both release their slots. */
static void the_reaper_sends_a_cancelled_job_to_dead_not_back_to_its_queue(void)
{
    fresh();
    cw_keys keys;
    cw_keys_init(&keys, ns_);
    cmd("SADD %s:worker_pools " DEAD_POOL, ns_);
    cmd("HSET %s:worker_pools:" DEAD_POOL " heartbeat_at 1 job_names a", ns_);
    cmd("RPUSH %s:jobs:a:" DEAD_POOL ":inprogress %s %s", ns_, "{\"name\":\"a\",\"id\":\"a2\"}",
        "{\"name\":\"a\",\"id\":\"a1\",\"t\":5}");
    cmd("SET %s:jobs:a:lock 2", ns_);
    cmd("HSET %s:jobs:a:lock_info " DEAD_POOL " 2", ns_);
    cmd("HSET %s:cwork:cancelled a1 1700000500", ns_);
    const char *mine[] = {"a"};
    cw_reaper *rp = cw_reaper_new(redis_, &keys, mine, 1, 300, NULL, NULL);
    int ran = -1;
    cwork_error err = {0};
    CHECK_INT(cw_reaper_cycle(rp, &ran, &err), 0);
    CHECK_INT(ran, 1);
    cw_reaper_free(rp);
    char dead[256], want[BIG];
    check_dead_cancelled(__LINE__, "a1", 1, 1700000500, dead, sizeof dead);
    snprintf(want, sizeof want,
             "@:dead zset %s=1700000500\n"
             "@:jobs:a list {\"name\":\"a\",\"id\":\"a2\"}\n"
             "@:jobs:a:lock string 0\n",
             dead);
    CHECK_NS(want);
    cw_keys_clear(&keys);
    tl_ns_delete(rc_, ns_);
}

/* A cancelled member of a tracked batch whose pool died counts dead in its batch when the
 * reaper sends it to dead (PROTOCOL §23.3): an on_complete batch of that one job fires. */
static void the_reaper_counts_a_cancelled_batch_member_dead(void)
{
    fresh();
    cw_keys keys;
    cw_keys_init(&keys, ns_);
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, &err);
    char id[25];
    CHECK_INT(cwork_batch_open(enq, CWORK_BATCH_ON_COMPLETE, "after", NULL, id, &err), 0);
    cwork_batch *b = cwork_batch_new(enq);
    CHECK_INT(cwork_batch_join(b, id, &err), 0);
    CHECK_INT(cwork_batch_add(b, "a", NULL, 0, 0, &err), 0);
    CHECK_INT(cwork_enqueue_batch(b, &err), 0);
    const char *jid = NULL;
    cwork_batch_status(b, 0, &jid);
    char job_id[25];
    snprintf(job_id, sizeof job_id, "%s", jid ? jid : "");
    cwork_batch_free(b);
    CHECK_INT(cwork_batch_seal(enq, id, &err), 0);
    /* fetched by a pool that then died, and cancelled while it ran */
    freeReplyObject(
        tl_cmd(rc_, "RPOPLPUSH %s:jobs:a %s:jobs:a:" DEAD_POOL ":inprogress", ns_, ns_));
    cmd("SADD %s:worker_pools " DEAD_POOL, ns_);
    cmd("HSET %s:worker_pools:" DEAD_POOL " heartbeat_at 1 job_names a", ns_);
    cmd("SET %s:jobs:a:lock 1", ns_);
    cmd("HSET %s:jobs:a:lock_info " DEAD_POOL " 1", ns_);
    freeReplyObject(tl_cmd(rc_, "HSET %s:cwork:cancelled %s 1700000500", ns_, job_id));
    const char *mine[] = {"a"};
    cw_reaper *rp = cw_reaper_new(redis_, &keys, mine, 1, 300, NULL, NULL);
    int ran = -1;
    CHECK_INT(cw_reaper_cycle(rp, &ran, &err), 0);
    cw_reaper_free(rp);
    cwork_batch_info info;
    CHECK_INT(cwork_batch_read(enq, id, &info, &err), 0);
    CHECK_INT(info.dead, 1);
    CHECK_INT(info.pending, 0);
    CHECK_INT(info.callback_state, CWORK_BATCH_CALLBACK_ENQUEUED);
    redisReply *r = tl_cmd(rc_, "LRANGE %s:jobs:after 0 -1", ns_);
    CHECK_INT(r->elements, 1);
    if (r->elements == 1) CHECK(strstr(r->element[0]->str, "\"batch_dead\":1") != NULL);
    freeReplyObject(r);
    r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    CHECK_INT(r->elements, 1);
    if (r->elements == 1) CHECK(strstr(r->element[0]->str, "\"err\":\"cancelled\"") != NULL);
    freeReplyObject(r);
    cwork_enqueuer_free(enq);
    cw_keys_clear(&keys);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    if (!redis_) return 1;
    RUN(a_cancelled_job_committed_as_a_success_goes_to_dead_and_loses_its_mark);
    RUN(a_cancelled_job_the_pool_would_retry_goes_to_dead_and_the_last_mark_goes);
    RUN(a_pool_that_knew_writes_its_own_record_and_the_mark_goes);
    RUN(without_marks_a_commit_is_what_it_was);
    RUN(the_reaper_sends_a_cancelled_job_to_dead_not_back_to_its_queue);
    RUN(the_reaper_counts_a_cancelled_batch_member_dead);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
