/* cwork_client_kill, cwork_client_kill_all and cwork_client_search against a real Redis
 * (PROTOCOL §24): retry and scheduled jobs move to dead at score now (a retry job's
 * bytes unchanged, a scheduled job with err "killed"), a tracked batch counts a killed
 * member dead exactly once, nothing else in the namespace changes; the search finds
 * text in args and err, newest first, and says when its bound stopped it. Every case
 * checks the whole namespace. */
#include "client_testutil.h"

#define RETRY_JOB                                                                                  \
    "{\"name\":\"a\",\"id\":\"r1\",\"t\":1,\"args\":{\"k\":1},\"fails\":2,\"err\":\"boom\",\"failed_at\":9}"

/* An integer reply, or a string reply's number (ZSCORE), freed. */
static long long ival(redisReply *r)
{
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : r->str ? atoll(r->str) : -1;
    freeReplyObject(r);
    return v;
}
#define tl_int(c, ...) ival(tl_cmd(c, __VA_ARGS__))

static void a_retry_job_dies_with_its_bytes_and_err(void)
{
    cwork_client *cl = fresh("kr");
    cmd("ZADD %s:retry 1800000000 %s", ns_, RETRY_JOB);
    cmd("ZADD %s:retry 1800000000 %s", ns_, "{\"name\":\"a\",\"id\":\"r2\",\"t\":1,\"err\":\"x\"}");
    long long before = now_();
    CHECK_INT(cwork_client_kill(cl, CWORK_SET_RETRY, 1800000000, "r1", NULL), 0);
    long long after = now_();
    redisReply *r = tl_cmd(rc_, "ZSCORE %s:dead %s", ns_, RETRY_JOB);
    long long at = r->str ? atoll(r->str) : -1;
    freeReplyObject(r);
    CHECK(at >= before && at <= after);
    snprintf(want_, sizeof want_,
             "NS:dead zset %s=%lld\n"
             "NS:retry zset {\"name\":\"a\",\"id\":\"r2\",\"t\":1,\"err\":\"x\"}=1800000000\n",
             RETRY_JOB, at);
    CHECK_DUMP(want_);
    cwork_error err = {0};
    /* gone already; a wrong score; the dead set is not a set kill works on */
    CHECK_INT(cwork_client_kill(cl, CWORK_SET_RETRY, 1800000000, "r1", &err), CWORK_ENOTFOUND);
    CHECK_STR(err.message, "nothing killed");
    CHECK_INT(cwork_client_kill(cl, CWORK_SET_RETRY, 1800000001, "r2", &err), CWORK_ENOTFOUND);
    CHECK_INT(cwork_client_kill(cl, CWORK_SET_DEAD, at, "r1", &err), CWORK_EINVAL);
    CHECK_INT(cwork_client_kill(cl, CWORK_SET_RETRY, 0, NULL, &err), CWORK_EINVAL);
    CHECK_DUMP(want_);
    done(cl);
}

/* A scheduled job never failed: it dies with err "killed" and failed_at = its score, and
 * a unique one gives up its guard (it can be enqueued again), as a deleted one does. */
static void a_scheduled_job_dies_killed_and_gives_up_its_guard(void)
{
    cwork_client *cl = fresh("ks");
    cmd("ZADD %s:scheduled 1900000000 %s", ns_,
        "{\"name\":\"a\",\"id\":\"u1\",\"t\":1,\"args\":{\"k\":1},\"unique\":true}");
    cmd("SET %s:unique:a:%s 1 EX 86400", ns_, "{\"k\":1}\n");
    long long before = now_();
    CHECK_INT(cwork_client_kill(cl, CWORK_SET_SCHEDULED, 1900000000, "u1", NULL), 0);
    long long after = now_();
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1 WITHSCORES", ns_);
    CHECK_INT(r->elements, 2);
    if (r->elements == 2) {
        long long at = atoll(r->element[1]->str);
        CHECK(at >= before && at <= after);
        cwork_job *j = NULL;
        CHECK_INT(cwork_job_decode(r->element[0]->str, r->element[0]->len, &j, NULL), 0);
        if (j) {
            CHECK_STR(cwork_job_name(j), "a");
            CHECK_STR(cwork_job_id(j), "u1");
            CHECK_INT(cwork_job_enqueued_at(j), 1);
            CHECK_STR(cwork_job_last_error(j), "killed");
            CHECK_INT(cwork_job_failed_at(j), at);
            CHECK_INT(cwork_job_fails(j), 0);
            CHECK(cwork_job_unique(j));
            char *args = cwork_job_args_json(j);
            CHECK_STR(args, "{\"k\":1}");
            free(args);
            cwork_job_free(j);
        }
    }
    freeReplyObject(r);
    cmd("DEL %s:dead", ns_);
    CHECK_DUMP(""); /* the guard is gone, the scheduled set empty */
    done(cl);
}

/* --all kills in batches of 1000, only jobs of --name when given; members that cannot be
 * decoded stay. */
static void kill_all_kills_every_matching_job(void)
{
    cwork_client *cl = fresh("ka");
    for (int i = 0; i < 1203; i++)
        cmd("ZADD %s:retry %d {\"name\":\"%s\",\"id\":\"j%d\",\"t\":1,\"err\":\"e\"}", ns_,
            1800000000 + i, i % 3 ? "a" : "b", i);
    cmd("ZADD %s:retry 1700000000 %s", ns_, "not json");
    int64_t count = -1;
    long long before = now_();
    CHECK_INT(cwork_client_kill_all(cl, CWORK_SET_RETRY, "b", &count, NULL), 0);
    CHECK_INT(count, 401);
    CHECK_INT(tl_int(rc_, "ZCARD %s:retry", ns_), 1203 - 401 + 1);
    CHECK_INT(tl_int(rc_, "ZCARD %s:dead", ns_), 401);
    CHECK_INT(cwork_client_kill_all(cl, CWORK_SET_RETRY, NULL, &count, NULL), 0);
    long long after = now_();
    CHECK_INT(count, 802);
    CHECK_INT(tl_int(rc_, "ZCOUNT %s:dead %lld %lld", ns_, before, after), 1203);
    snprintf(want_, sizeof want_, "NS:retry zset not json=1700000000\n");
    cmd("DEL %s:dead", ns_);
    CHECK_DUMP(want_);
    CHECK_INT(cwork_client_kill_all(cl, CWORK_SET_SCHEDULED, NULL, &count, NULL), 0);
    CHECK_INT(count, 0);
    CHECK_DUMP(want_);
    done(cl);
}

static void damaged_keys_write_nothing(void)
{
    cwork_client *cl = fresh("kd");
    cmd("ZADD %s:retry 1800000000 %s", ns_, RETRY_JOB);
    cmd("SET %s:dead %s", ns_, "not a set");
    char *before = dump_now();
    cwork_error err = {0};
    CHECK_INT(cwork_client_kill(cl, CWORK_SET_RETRY, 1800000000, "r1", &err), CWORK_ETYPE);
    CHECK(strstr(err.message, ":dead is a string, expected a zset (the dead set)") != NULL);
    int64_t count = -1;
    CHECK_INT(cwork_client_kill_all(cl, CWORK_SET_RETRY, NULL, &count, &err), CWORK_ETYPE);
    CHECK_INT(count, 0);
    char *after = dump_now();
    CHECK_STR(after, before);
    free(before);
    free(after);
    done(cl);
}

/* cwork_client_apply's kill: the selected rows, each as cwork_client_kill does it. */
static void apply_kills_the_selected_rows(void)
{
    cwork_client *cl = fresh("kp");
    cmd("ZADD %s:retry 1800000000 %s", ns_, RETRY_JOB);
    cmd("ZADD %s:retry 1800000005 %s", ns_, "{\"name\":\"a\",\"id\":\"r2\",\"t\":1,\"err\":\"x\"}");
    cwork_job_ref refs[] = {{1800000000, "r1"}, {1800000005, "gone"}};
    size_t done_n = 9, unchanged = 9;
    cwork_error err = {0};
    CHECK_INT(cwork_client_apply(cl, CWORK_SET_RETRY, CWORK_ACTION_KILL, refs, 2, &done_n,
                                 &unchanged, &err),
              CWORK_ENOTFOUND);
    CHECK_INT(done_n, 1);
    CHECK_INT(unchanged, 1);
    CHECK_INT(cwork_client_apply(cl, CWORK_SET_DEAD, CWORK_ACTION_KILL, refs, 1, NULL, NULL, &err),
              CWORK_EINVAL);
    CHECK_INT(tl_int(rc_, "ZCARD %s:dead", ns_), 1);
    CHECK_INT(tl_int(rc_, "ZCARD %s:retry", ns_), 1);
    done(cl);
}

/* A tracked batch of two on_complete jobs: one retrying (counted 'r' as the cycle counts
 * a failure), one scheduled. Killing both counts each dead once, the retrying one leaves
 * `retrying`, and the callback fires once; a member killed again (its bytes put back
 * by hand) never counts twice. */
static void killed_batch_members_count_dead_once(void)
{
    cwork_client *cl = fresh("kb");
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, &err);
    CHECK(enq != NULL);
    char id[25] = "";
    CHECK_INT(cwork_batch_open(enq, CWORK_BATCH_ON_COMPLETE, "done", NULL, id, &err), 0);
    cwork_batch *b = cwork_batch_new(enq);
    CHECK_INT(cwork_batch_join(b, id, &err), 0);
    CHECK_INT(cwork_batch_add(b, "w", NULL, 3600, CWORK_BATCH_IN, &err), 0);
    CHECK_INT(cwork_batch_add(b, "w", NULL, 3600, CWORK_BATCH_IN, &err), 0);
    CHECK_INT(cwork_enqueue_batch(b, &err), 0);
    CHECK_INT(cwork_batch_seal(enq, id, &err), 0);
    const char *j0 = NULL, *j1 = NULL;
    cwork_batch_status(b, 0, &j0);
    cwork_batch_status(b, 1, &j1);
    /* Job 0 failed once: the cycle moved it to retry and counted it retrying. */
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:scheduled 0 -1 WITHSCORES", ns_);
    CHECK_INT(r->elements, 4);
    char *member0 = NULL, *member1 = NULL;
    long long at1 = 0;
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        if (!member0 && strstr(r->element[i]->str, j0)) member0 = strdup(r->element[i]->str);
        if (!member1 && strstr(r->element[i]->str, j1)) {
            member1 = strdup(r->element[i]->str);
            at1 = atoll(r->element[i + 1]->str);
        }
    }
    freeReplyObject(r);
    CHECK(member0 && member1);
    if (!member0 || !member1) {
        free(member0);
        free(member1);
        return;
    }
    cmd("ZREM %s:scheduled %s", ns_, member0);
    char failed[1024];
    snprintf(failed, sizeof failed, "%.*s,\"fails\":1,\"err\":\"boom\",\"failed_at\":5}",
             (int)strlen(member0) - 1, member0);
    cmd("ZADD %s:retry 1800000000 %s", ns_, failed);
    cmd("HINCRBY %s:cwork:batch:%s retrying 1", ns_, id);
    cmd("HSET %s:cwork:batch:%s:jobs %s r", ns_, id, j0);
    CHECK_INT(cwork_client_kill(cl, CWORK_SET_RETRY, 1800000000, j0, &err), 0);
    cwork_batch_info info;
    CHECK_INT(cwork_batch_read(enq, id, &info, &err), 0);
    CHECK_INT(info.dead, 1);
    CHECK_INT(info.retrying, 0);
    CHECK_INT(info.pending, 1);
    CHECK_INT(info.callback_state, CWORK_BATCH_CALLBACK_WAITING);
    CHECK(info.ttl > 2592000 - 60 && info.ttl <= 2592000); /* still open: 30 days from opening */
    /* killed again after someone put it back: stays counted once */
    cmd("ZADD %s:retry 1800000000 %s", ns_, failed);
    CHECK_INT(cwork_client_kill(cl, CWORK_SET_RETRY, 1800000000, j0, &err), 0);
    CHECK_INT(cwork_batch_read(enq, id, &info, &err), 0);
    CHECK_INT(info.dead, 1);
    CHECK_INT(cwork_client_kill(cl, CWORK_SET_SCHEDULED, at1, j1, &err), 0);
    CHECK_INT(cwork_batch_read(enq, id, &info, &err), 0);
    CHECK_INT(info.total, 2);
    CHECK_INT(info.dead, 2);
    CHECK_INT(info.succeeded, 0);
    CHECK_INT(info.pending, 0);
    CHECK_INT(info.callback_state, CWORK_BATCH_CALLBACK_ENQUEUED);
    CHECK_INT(info.ttl, 604800);
    CHECK_INT(tl_int(rc_, "TTL %s:cwork:batch:%s:jobs", ns_, id), 604800);
    r = tl_cmd(rc_, "HGETALL %s:cwork:batch:%s:jobs", ns_, id);
    CHECK_INT(r->elements, 4);
    for (size_t i = 1; i < r->elements; i += 2)
        CHECK_STR(r->element[i]->str, "d");
    freeReplyObject(r);
    /* the callback, once, with the counts */
    CHECK_INT(tl_int(rc_, "LLEN %s:jobs:done", ns_), 1);
    r = tl_cmd(rc_, "LINDEX %s:jobs:done 0", ns_);
    char want_args[128];
    snprintf(want_args, sizeof want_args,
             "\"args\":{\"batch_dead\":2,\"batch_id\":\"%s\",\"batch_succeeded\":0,"
             "\"batch_total\":2}",
             id);
    CHECK(r->str && strstr(r->str, want_args) != NULL);
    freeReplyObject(r);
    /* dead: the retry job's bytes (twice killed: one member), the scheduled one killed */
    CHECK_INT(tl_int(rc_, "ZCARD %s:dead", ns_), 2);
    CHECK_INT(tl_int(rc_, "ZCARD %s:retry", ns_), 0);
    CHECK_INT(tl_int(rc_, "ZCARD %s:scheduled", ns_), 0);
    CHECK(tl_int(rc_, "ZSCORE %s:dead %s", ns_, failed) > 0);
    /* every key of the namespace: nothing else was written */
    r = tl_cmd(rc_, "KEYS %s:*", ns_);
    CHECK_INT(r->elements, 5); /* dead, the batch hash and its :jobs, jobs:done, known_jobs */
    freeReplyObject(r);
    CHECK_INT(tl_int(rc_, "SISMEMBER %s:known_jobs done", ns_), 1);
    free(member0);
    free(member1);
    cwork_batch_free(b);
    cwork_enqueuer_free(enq);
    done(cl);
}

/* ---------------------------------------------------------------- search */

static void search_finds_text_in_args_and_err_newest_first(void)
{
    cwork_client *cl = fresh("kq");
    cmd("ZADD %s:dead 100 %s", ns_,
        "{\"name\":\"a\",\"id\":\"d1\",\"t\":1,\"args\":{\"user\":\"Alice\"},\"err\":\"x\"}");
    cmd("ZADD %s:dead 200 %s", ns_,
        "{\"name\":\"alice\",\"id\":\"d2\",\"t\":1,\"args\":{},\"err\":\"x\"}"); /* name only */
    cmd("ZADD %s:dead 300 %s", ns_,
        "{\"name\":\"a\",\"id\":\"d3\",\"t\":1,\"args\":null,\"err\":\"ALICE not found\"}");
    cmd("ZADD %s:dead 400 %s", ns_,
        "{\"name\":\"a\",\"id\":\"d4\",\"t\":1,\"args\":{\"u\":\"\\u0061lice\"},\"err\":\"x\"}");
    cmd("ZADD %s:dead 500 %s", ns_, "alice but no json");
    char *before = dump_now();
    cwork_search_query q = {"alice", 0, 0, 0};
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    cwork_search_info info;
    CHECK_INT(cwork_client_search(cl, CWORK_SET_DEAD, &q, &jobs, &n, &info, NULL), 0);
    CHECK_INT(n, 3);
    if (n == 3) {
        CHECK_STR(cwork_job_id(jobs[0].job), "d4"); /* the escape decoded */
        CHECK_INT(jobs[0].at, 400);
        CHECK_STR(cwork_job_id(jobs[1].job), "d3");
        CHECK_STR(cwork_job_id(jobs[2].job), "d1");
    }
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(info.total, 5);
    CHECK_INT(info.scanned, 5);
    CHECK_INT(info.matches, 3);
    CHECK(!info.bounded);
    /* page 2 of 2 per page */
    q.page = 2;
    q.page_size = 2;
    CHECK_INT(cwork_client_search(cl, CWORK_SET_DEAD, &q, &jobs, &n, &info, NULL), 0);
    CHECK_INT(n, 1);
    if (n == 1) CHECK_STR(cwork_job_id(jobs[0].job), "d1");
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(info.matches, 3);
    /* the bound: the newest 3 of 5 read, two of them match */
    q = (cwork_search_query){"alice", 1, 20, 3};
    CHECK_INT(cwork_client_search(cl, CWORK_SET_DEAD, &q, &jobs, &n, &info, NULL), 0);
    CHECK_INT(n, 2);
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(info.scanned, 3);
    CHECK_INT(info.total, 5);
    CHECK(info.bounded);
    /* a bound equal to the set's size is not "bounded" */
    q.max_scan = 5;
    CHECK_INT(cwork_client_search(cl, CWORK_SET_DEAD, &q, &jobs, &n, &info, NULL), 0);
    cwork_listed_jobs_free(jobs, n);
    CHECK(!info.bounded);
    CHECK_INT(info.scanned, 5);
    /* <, > and & in the text: Go's JSON of the args spells them \u003c, \u003e, \u0026 */
    cmd("ZADD %s:dead 600 %s", ns_,
        "{\"name\":\"a\",\"id\":\"d6\",\"t\":1,\"args\":{\"q\":\"R<D> & co\"},\"err\":\"x\"}");
    q = (cwork_search_query){"r<d> & CO", 0, 0, 0};
    CHECK_INT(cwork_client_search(cl, CWORK_SET_DEAD, &q, &jobs, &n, &info, NULL), 0);
    CHECK_INT(n, 1);
    if (n == 1) CHECK_STR(cwork_job_id(jobs[0].job), "d6");
    cwork_listed_jobs_free(jobs, n);
    cmd("ZREM %s:dead %s", ns_,
        "{\"name\":\"a\",\"id\":\"d6\",\"t\":1,\"args\":{\"q\":\"R<D> & co\"},\"err\":\"x\"}");
    /* bad queries */
    cwork_error err = {0};
    q = (cwork_search_query){"", 0, 0, 0};
    CHECK_INT(cwork_client_search(cl, CWORK_SET_DEAD, &q, &jobs, &n, &info, &err), CWORK_EINVAL);
    q = (cwork_search_query){"a", 0, 0, CWORK_SEARCH_MAX_SCAN_MAX + 1};
    CHECK_INT(cwork_client_search(cl, CWORK_SET_DEAD, &q, &jobs, &n, &info, &err), CWORK_EINVAL);
    q = (cwork_search_query){"a", 0, 1001, 0};
    CHECK_INT(cwork_client_search(cl, CWORK_SET_DEAD, &q, &jobs, &n, &info, &err), CWORK_EINVAL);
    /* the retry set is empty; a set of another type */
    q = (cwork_search_query){"alice", 0, 0, 0};
    CHECK_INT(cwork_client_search(cl, CWORK_SET_RETRY, &q, &jobs, &n, &info, NULL), 0);
    CHECK_INT(n, 0);
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(info.total, 0);
    cmd("SET %s:scheduled x", ns_);
    cwork_client_damage_clear(); /* finds nothing, and names the key */
    CHECK_INT(cwork_client_search(cl, CWORK_SET_SCHEDULED, &q, &jobs, &n, &info, &err), 0);
    CHECK(n == 0 && info.total == 0);
    cwork_listed_jobs_free(jobs, n);
    const cwork_damaged_key *d = NULL;
    CHECK_INT(cwork_client_damage(&d), 1);
    if (d) CHECK_STR(d[0].expected, "zset");
    cwork_client_damage_clear();
    cmd("DEL %s:scheduled", ns_);
    char *after = dump_now();
    CHECK_STR(after, before); /* a search writes nothing */
    free(before);
    free(after);
    done(cl);
}

/* Past one chunk of 1000: the default bound of 10,000 reads the newest 10,000 of 10,500. */
static void search_bound_spans_chunks(void)
{
    cwork_client *cl = fresh("kn");
    redisContext *p = rc_;
    for (int i = 0; i < 10500; i++)
        redisAppendCommand(p,
                           "ZADD %s:retry %d {\"name\":\"a\",\"id\":\"j%d\",\"t\":1,"
                           "\"args\":{\"n\":%d},\"err\":\"e\"}",
                           ns_, i, i, i % 1000 == 7 ? 424242 : i);
    for (int i = 0; i < 10500; i++) {
        redisReply *r = NULL;
        CHECK_INT(redisGetReply(p, (void **)&r), REDIS_OK);
        freeReplyObject(r);
    }
    cwork_search_query q = {"424242", 1, 100, 0};
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    cwork_search_info info;
    CHECK_INT(cwork_client_search(cl, CWORK_SET_RETRY, &q, &jobs, &n, &info, NULL), 0);
    /* matches at ranks 7, 1007, …, 10007: the newest 10,000 (scores 500–10499) hold 10 */
    CHECK_INT(info.total, 10500);
    CHECK_INT(info.scanned, 10000);
    CHECK(info.bounded);
    CHECK_INT(info.matches, 10);
    CHECK_INT(n, 10);
    if (n == 10) {
        CHECK_INT(jobs[0].at, 10007);
        CHECK_INT(jobs[9].at, 1007);
    }
    cwork_listed_jobs_free(jobs, n);
    done(cl);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    if (!redis_) return 1;
    RUN(a_retry_job_dies_with_its_bytes_and_err);
    RUN(a_scheduled_job_dies_killed_and_gives_up_its_guard);
    RUN(kill_all_kills_every_matching_job);
    RUN(damaged_keys_write_nothing);
    RUN(apply_kills_the_selected_rows);
    RUN(killed_batch_members_count_dead_once);
    RUN(search_finds_text_in_args_and_err_newest_first);
    RUN(search_bound_spans_chunks);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
