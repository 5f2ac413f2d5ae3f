/* The admin client of a sharded namespace (PROTOCOL §27) against a real Redis: a
 * namespace of three shards is built by hand (the record, and Go's JSON jobs written
 * straight into each shard's keys), and the client's views must be the namespace as
 * one — queues and counts added up, the sets merged by score with correct pages — while
 * a job found or changed by id is found or changed in the shard that holds it (every
 * shard dumped after). An unsharded namespace reads as before and gets no new key. */
#include "client_testutil.h"
#include "sharding.h"

#include <pthread.h>
#include <stdatomic.h>

#define SHARDS 3

static char shard_ns_[SHARDS][80];

/* A fresh namespace of SHARDS shards: its record, and the shards' names. */
static cwork_client *sharded(const char *tag)
{
    cwork_client *cl = fresh(tag);
    for (unsigned i = 0; i < SHARDS; i++)
        CHECK_INT(cw_sharding_ns(ns_, i, shard_ns_[i], sizeof shard_ns_[i], NULL), 0);
    cmd("HSET %s:cwork:shards count %d hash fnv1a64-jump created 1700000000", ns_, SHARDS);
    return cl;
}

static void done_sharded(cwork_client *cl)
{
    for (unsigned i = 1; i < SHARDS; i++)
        tl_ns_delete(rc_, shard_ns_[i]);
    done(cl);
}

/* An id (of the form "<tag><n>") whose own shard is home. */
static const char *id_for(const char *tag, unsigned home, char *buf, size_t size)
{
    for (int n = 0;; n++) {
        snprintf(buf, size, "%s%d", tag, n);
        if (cw_sharding_of(buf, strlen(buf), SHARDS) == home) return buf;
    }
}

/* An integer reply, freed. */
static long long ival(redisReply *r)
{
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    freeReplyObject(r);
    return v;
}

static char job_[SHARDS * 4][160];

/* Go's JSON of a job. */
static const char *job(int slot, const char *name, const char *id, long long t)
{
    snprintf(job_[slot], sizeof job_[slot],
             "{\"name\":\"%s\",\"id\":\"%s\",\"t\":%lld,\"args\":{}}", name, id, t);
    return job_[slot];
}

static void check_shard_dump_at(int line, unsigned i, const char *want)
{
    char *got = tl_ns_dump(rc_, shard_ns_[i]);
    if (strcmp(got, want) != 0)
        tl_fail(__FILE__, line, "shard %u dump\n   got:\n%s  want:\n%s", i, got, want);
    free(got);
}
#define CHECK_SHARD(i, want) check_shard_dump_at(__LINE__, i, want)

/* ---------------------------------------------------------------- merged views */

static void queues_pools_and_counts_add_up(void)
{
    cwork_client *cl = sharded("sq");
    const char **s = (const char **)(const char *[]){shard_ns_[0], shard_ns_[1], shard_ns_[2]};
    cmd("SADD %s:known_jobs a", s[0]);
    cmd("SADD %s:known_jobs a b", s[1]);
    cmd("SADD %s:known_jobs b", s[2]);
    cmd("LPUSH %s:jobs:a %s %s", s[0], job(0, "a", "x1", 100), job(1, "a", "x2", 110));
    cmd("LPUSH %s:jobs:a %s", s[1], job(0, "a", "x3", 50));
    cmd("LPUSH %s:jobs:b %s", s[1], job(0, "b", "x4", 200));
    cmd("LPUSH %s:jobs:b %s %s", s[2], job(0, "b", "x5", 10), job(1, "b", "x6", 20));
    cmd("SET %s:jobs:b:paused 1", s[2]);
    cmd("SADD %s:worker_pools p0", s[0]);
    cmd("HSET %s:worker_pools:p0 heartbeat_at 5 started_at 1 concurrency 2 host h pid 7", s[0]);
    cmd("SADD %s:worker_pools p2", s[2]);
    cmd("HSET %s:worker_pools:p2 heartbeat_at 6 started_at 2 concurrency 3 host h pid 8", s[2]);
    char date[11];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(date, sizeof date, "%Y-%m-%d", &tm);
    cmd("HSET %s:cwork:stat:%s processed 5 failed 1", s[0], date);
    cmd("HSET %s:cwork:stat:%s processed 7 failed 2", s[2], date);

    unsigned count = 0;
    CHECK_INT(cwork_client_shards(cl, &count, NULL), 0);
    CHECK_INT(count, SHARDS);
    long long before = now_();
    cwork_queue_info *q = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_queues(cl, &q, &n, NULL), 0);
    long long after = now_();
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_STR(q[0].job_name, "a");
        CHECK_INT(q[0].count, 3);
        CHECK(q[0].latency >= before - 50 && q[0].latency <= after - 50); /* shard 1's */
        CHECK(!q[0].paused);
        CHECK_STR(q[1].job_name, "b");
        CHECK_INT(q[1].count, 3);
        CHECK(q[1].latency >= before - 10 && q[1].latency <= after - 10); /* shard 2's */
        CHECK(q[1].paused);
    }
    cwork_queue_infos_free(q, n);

    cwork_pool_heartbeat *p = NULL;
    CHECK_INT(cwork_client_pools(cl, &p, &n, NULL), 0);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_STR(p[0].worker_pool_id, "p0");
        CHECK_INT(p[0].concurrency, 2);
        CHECK_STR(p[1].worker_pool_id, "p2");
        CHECK_INT(p[1].pid, 8);
    }
    cwork_pool_heartbeats_free(p, n);

    /* two days, so that a call after midnight still covers the day written */
    cwork_day_stats *d = NULL;
    CHECK_INT(cwork_client_daily_stats(cl, 2, &d, &n, NULL), 0);
    CHECK_INT(n, 2);
    long long processed = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        processed += d[i].processed;
        failed += d[i].failed;
    }
    CHECK_INT(processed, 12);
    CHECK_INT(failed, 3);
    cwork_free(d);

    /* the per-shard view: shard 2 alone */
    cwork_error err = {0};
    cwork_client *two = cwork_client_shard(cl, 2, &err);
    CHECK(two != NULL && two != cl);
    CHECK_INT(cwork_client_queues(two, &q, &n, NULL), 0);
    CHECK_INT(n, 1);
    if (n == 1) CHECK_INT(q[0].count, 2);
    cwork_queue_infos_free(q, n);
    CHECK(cwork_client_shard(cl, SHARDS, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    CHECK(strstr(err.message, "has 3 shards") != NULL);

    /* a pause is made in every shard */
    CHECK_INT(cwork_client_pause(cl, "a", NULL), 0);
    for (unsigned i = 0; i < SHARDS; i++)
        CHECK_INT(ival(tl_cmd(rc_, "EXISTS %s:jobs:a:paused", s[i])), 1);
    CHECK_INT(cwork_client_unpause(cl, "a", NULL), 0);
    for (unsigned i = 0; i < SHARDS; i++)
        CHECK_INT(ival(tl_cmd(rc_, "EXISTS %s:jobs:a:paused", s[i])), 0);
    done_sharded(cl);
}

/* ---------------------------------------------------------------- merged sets */

/* Retry jobs at scores 10..90: shard 0 has 10, 40, 70; shard 1 20, 50, 80; shard 2 30,
 * 60, 90 (names alternate a, b, c by score). */
static void nine_retry_jobs(void)
{
    for (int k = 1; k <= 9; k++) {
        char id[8];
        snprintf(id, sizeof id, "r%d", k);
        const char *name = k % 3 == 1 ? "a" : k % 3 == 2 ? "b" : "c";
        cmd("ZADD %s:retry %d %s", shard_ns_[(k - 1) % 3], k * 10, job(0, name, id, 1));
    }
}

/* The scores of a page of the merged set, e.g. "30 40". */
static void check_page_at(int line, cwork_client *cl, unsigned page, unsigned size, bool newest,
                          const char *name, const char *want, long long want_total)
{
    cwork_list_query q = {page, size, name, newest};
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    int64_t total = -1;
    cwork_error err = {0};
    if (cwork_client_list_page(cl, CWORK_SET_RETRY, &q, &jobs, &n, &total, &err) != 0) {
        tl_fail(__FILE__, line, "list: %s", err.message);
        return;
    }
    char got[256] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? " " : "",
                 (long long)jobs[i].at);
    if (strcmp(got, want) != 0 || total != want_total)
        tl_fail(__FILE__, line, "page %u of %u: got \"%s\" of %lld, want \"%s\" of %lld", page,
                size, got, (long long)total, want, want_total);
    cwork_listed_jobs_free(jobs, n);
}
#define CHECK_PAGE(cl, page, size, newest, name, want, total)                                      \
    check_page_at(__LINE__, cl, page, size, newest, name, want, total)

static void sets_merge_by_score_with_correct_pages(void)
{
    cwork_client *cl = sharded("sl");
    nine_retry_jobs();
    CHECK_PAGE(cl, 1, 0, false, NULL, "10 20 30 40 50 60 70 80 90", 9);
    CHECK_PAGE(cl, 1, 2, false, NULL, "10 20", 9);
    CHECK_PAGE(cl, 2, 2, false, NULL, "30 40", 9);
    CHECK_PAGE(cl, 5, 2, false, NULL, "90", 9);
    CHECK_PAGE(cl, 6, 2, false, NULL, "", 9);
    CHECK_PAGE(cl, 1, 4, true, NULL, "90 80 70 60", 9);
    CHECK_PAGE(cl, 3, 4, true, NULL, "10", 9);
    CHECK_PAGE(cl, 1, 2, false, "b", "20 50", 3);
    CHECK_PAGE(cl, 2, 2, false, "b", "80", 3);
    /* Go's list call and body: the same merge */
    char *body = NULL;
    size_t len = 0;
    CHECK_INT(cwork_client_list_json(cl, CWORK_SET_RETRY, 1, NULL, &body, &len, NULL), 0);
    CHECK(body && strstr(body, "\"count\": 9") != NULL);
    CHECK(body && strstr(body, "\"retry_at\": 10") < strstr(body, "\"retry_at\": 20"));
    cwork_free(body);
    done_sharded(cl);
}

/* Sets of more than one chunk (1000) per shard: shard 1 holds the even scores 0..2198,
 * shard 2 the odd ones; every page of the merge is the ranks it should be. */
static void deep_pages_read_several_chunks(void)
{
    cwork_client *cl = sharded("sd");
    for (unsigned i = 1; i <= 2; i++) {
        redisContext *p = rc_;
        for (int k = (int)i - 1; k < 2200; k += 2) {
            char id[16];
            snprintf(id, sizeof id, "d%d", k);
            redisAppendCommand(p, "ZADD %s:dead %d %s", shard_ns_[i], k, job(0, "a", id, 1));
        }
        for (int k = (int)i - 1; k < 2200; k += 2) {
            redisReply *r = NULL;
            CHECK_INT(redisGetReply(p, (void **)&r), REDIS_OK);
            freeReplyObject(r);
        }
    }
    for (unsigned page = 1; page <= 3; page++) {
        cwork_list_query q = {page, 1000, NULL, false};
        cwork_listed_job *jobs = NULL;
        size_t n = 0;
        int64_t total = 0;
        CHECK_INT(cwork_client_list_page(cl, CWORK_SET_DEAD, &q, &jobs, &n, &total, NULL), 0);
        CHECK_INT(total, 2200);
        CHECK_INT(n, page < 3 ? 1000 : 200);
        size_t bad = 0;
        for (size_t j = 0; j < n; j++)
            bad += jobs[j].at != (int64_t)((page - 1) * 1000 + j);
        CHECK_INT(bad, 0);
        cwork_listed_jobs_free(jobs, n);
    }
    done_sharded(cl);
}

/* ---------------------------------------------------------------- one job by id */

static void a_job_is_found_in_any_shard(void)
{
    cwork_client *cl = sharded("sf");
    char home1[16], home0[16];
    id_for("f", 1, home1, sizeof home1);
    id_for("g", 0, home0, sizeof home0);
    cmd("ZADD %s:scheduled 500 %s", shard_ns_[1], job(0, "a", home1, 3));
    /* routed by another key (a unique job): not in its id's shard */
    cmd("ZADD %s:dead 600 %s", shard_ns_[2], job(1, "a", home0, 4));
    cwork_job_place place = 0;
    cwork_listed_job found = {0};
    CHECK_INT(cwork_client_find(cl, home1, &place, &found, NULL), 0);
    CHECK_INT(place, CWORK_PLACE_SCHEDULED);
    CHECK_INT(found.at, 500);
    cwork_job_free(found.job);
    CHECK_INT(cwork_client_find(cl, home0, &place, &found, NULL), 0);
    CHECK_INT(place, CWORK_PLACE_DEAD);
    CHECK_INT(found.at, 600);
    CHECK_STR(found.job ? cwork_job_id(found.job) : "", home0);
    cwork_job_free(found.job);
    cwork_error err = {0};
    CHECK_INT(cwork_client_find(cl, "nosuch", &place, &found, &err), CWORK_ENOTFOUND);
    cwork_job_story story;
    CHECK_INT(cwork_client_job_story(cl, home0, &story, NULL), 0);
    CHECK_INT(story.place, CWORK_PLACE_DEAD);
    CHECK_INT(story.at, 600);
    cwork_job_story_free(&story);
    CHECK_INT(cwork_client_job_story(cl, "nosuch", &story, &err), CWORK_ENOTFOUND);
    done_sharded(cl);
}

/* Each change by id lands in the shard that holds the job; the others do not change. */
static void actions_by_id_land_in_the_right_shard(void)
{
    cwork_client *cl = sharded("sa");
    char id1[16], id2[16], id3[16], id4[16];
    id_for("a", 1, id1, sizeof id1);
    id_for("b", 0, id2, sizeof id2); /* kept in shard 2 */
    id_for("c", 2, id3, sizeof id3);
    id_for("d", 0, id4, sizeof id4);
    cmd("SADD %s:known_jobs a", shard_ns_[2]);
    cmd("ZADD %s:retry 100 %s", shard_ns_[1], job(0, "a", id1, 1));
    cmd("ZADD %s:dead 200 %s", shard_ns_[2], job(1, "a", id2, 1));
    cmd("ZADD %s:scheduled 300 %s", shard_ns_[2], job(2, "a", id3, 1));
    cmd("ZADD %s:retry 400 %s", shard_ns_[0], job(3, "a", id4, 1));
    cwork_error err = {0};
    CHECK_INT(cwork_client_delete(cl, CWORK_SET_RETRY, 100, id1, NULL), 0);
    CHECK_INT(cwork_client_delete(cl, CWORK_SET_RETRY, 100, id1, &err), CWORK_ENOTFOUND);
    CHECK_STR(err.message, "nothing deleted");
    CHECK_INT(cwork_client_retry_dead(cl, 200, id2, NULL), 0);
    CHECK_INT(cwork_client_kill(cl, CWORK_SET_SCHEDULED, 300, id3, NULL), 0);
    CHECK_SHARD(1, "");
    snprintf(want_, sizeof want_,
             "%s:cwork:shards hash count=3 | created=1700000000 | hash=fnv1a64-jump\n"
             "%s:retry zset %s=400\n",
             ns_, ns_, job(3, "a", id4, 1));
    CHECK_SHARD(0, want_);
    /* shard 2: the retried job waits in its queue, the killed one is dead */
    redisReply *r = tl_cmd(rc_, "LRANGE %s:jobs:a 0 -1", shard_ns_[2]);
    CHECK_INT(r->elements, 1);
    if (r->elements == 1) CHECK(strstr(r->element[0]->str, id2) != NULL);
    freeReplyObject(r);
    r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", shard_ns_[2]);
    CHECK_INT(r->elements, 1);
    if (r->elements == 1) CHECK(strstr(r->element[0]->str, id3) != NULL);
    freeReplyObject(r);
    CHECK_INT(ival(tl_cmd(rc_, "EXISTS %s:scheduled %s:retry", shard_ns_[2], shard_ns_[2])), 0);
    /* run now in shard 0 (its queue's name known there), through apply */
    cmd("SADD %s:known_jobs a", shard_ns_[0]);
    cwork_job_ref ref = {400, id4};
    size_t changed = 0, unchanged = 0;
    CHECK_INT(cwork_client_apply(cl, CWORK_SET_RETRY, CWORK_ACTION_RUN_NOW, &ref, 1, &changed,
                                 &unchanged, NULL),
              0);
    CHECK_INT(changed, 1);
    CHECK_INT(ival(tl_cmd(rc_, "EXISTS %s:retry", shard_ns_[0])), 0);
    CHECK_INT(ival(tl_cmd(rc_, "LLEN %s:jobs:a", shard_ns_[0])), 1);
    CHECK_INT(ival(tl_cmd(rc_, "LLEN %s:jobs:a", shard_ns_[2])), 1);
    CHECK_SHARD(1, "");
    done_sharded(cl);
}

/* ---------------------------------------------------------------- threads */

static cwork_client *shared_;
static _Atomic int thread_failures_;

static void *read_views(void *arg)
{
    (void)arg;
    for (int k = 0; k < 20; k++) {
        cwork_queue_info *q = NULL;
        size_t n = 0;
        if (cwork_client_queues(shared_, &q, &n, NULL) != 0 || n != 1 || q[0].count != 3)
            thread_failures_++;
        cwork_queue_infos_free(q, n);
        unsigned count = 0;
        if (cwork_client_shards(shared_, &count, NULL) != 0 || count != SHARDS) thread_failures_++;
        if (!cwork_client_shard(shared_, (unsigned)k % SHARDS, NULL)) thread_failures_++;
    }
    return NULL;
}

/* Threads sharing a client that has not read the record yet: one reads it and makes the
 * shards' clients, every call sees the namespace as one. */
static void threads_share_a_client_from_its_first_call(void)
{
    shared_ = sharded("st");
    for (unsigned i = 0; i < SHARDS; i++) {
        cmd("SADD %s:known_jobs a", shard_ns_[i]);
        cmd("LPUSH %s:jobs:a %s", shard_ns_[i], job(0, "a", "t", 1));
    }
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, read_views, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    CHECK_INT(thread_failures_, 0);
    done_sharded(shared_);
}

/* ---------------------------------------------------------------- unsharded */

/* Without a record the client is today's: shard 0 is itself, nothing is written. */
static void an_unsharded_namespace_is_read_as_before(void)
{
    cwork_client *cl = fresh("su");
    cmd("SADD %s:known_jobs a", ns_);
    cmd("LPUSH %s:jobs:a %s", ns_, job(0, "a", "u1", 1));
    cmd("ZADD %s:retry 10 %s", ns_, job(1, "a", "u2", 1));
    char *before = dump_now();
    unsigned count = 0;
    CHECK_INT(cwork_client_shards(cl, &count, NULL), 0);
    CHECK_INT(count, 1);
    cwork_error err = {0};
    CHECK(cwork_client_shard(cl, 0, &err) == cl);
    CHECK(cwork_client_shard(cl, 1, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    cwork_queue_info *q = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_queues(cl, &q, &n, NULL), 0);
    CHECK_INT(n, 1);
    if (n == 1) CHECK_INT(q[0].count, 1);
    cwork_queue_infos_free(q, n);
    CHECK_PAGE(cl, 1, 0, false, NULL, "10", 1);
    CHECK_DUMP(before);
    free(before);
    done(cl);
}

/* A damaged record is named, and nothing is read as if the namespace had one shard. */
static void a_damaged_record_is_named(void)
{
    cwork_client *cl = fresh("sx");
    cmd("HSET %s:cwork:shards count many", ns_);
    cwork_queue_info *q = NULL;
    size_t n = 0;
    cwork_error err = {0};
    CHECK_INT(cwork_client_queues(cl, &q, &n, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, ":cwork:shards is damaged") != NULL);
    done(cl);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    if (!redis_) return 1;
    RUN(queues_pools_and_counts_add_up);
    RUN(sets_merge_by_score_with_correct_pages);
    RUN(deep_pages_read_several_chunks);
    RUN(a_job_is_found_in_any_shard);
    RUN(actions_by_id_land_in_the_right_shard);
    RUN(threads_share_a_client_from_its_first_call);
    RUN(an_unsharded_namespace_is_read_as_before);
    RUN(a_damaged_record_is_named);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
