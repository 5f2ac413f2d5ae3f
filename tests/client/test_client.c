/* The admin client against a real Redis (PROTOCOL §11 and the header's extensions). Every
 * case writes the namespace by hand in Go's exact bytes (and in cjson's, as Go's scripts
 * leave them), calls the client, and checks the whole namespace afterwards. In the
 * expected dumps "NS" stands for the case's namespace and \x5c for a backslash. */
#include "client_testutil.h"

#include <stdarg.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- queues */

static void queues_give_counts_latency_and_pause_sorted_by_name(void)
{
    cwork_client *cl = fresh("cq");
    long long now = now_();
    cmd("SADD %s:known_jobs b_empty a_mail c_paused d_bad", ns_);
    cmd("LPUSH %s:jobs:a_mail %s", ns_, "{\"name\":\"a_mail\",\"id\":\"1\",\"t\":1,\"args\":null}");
    /* the oldest job (right end) decides; in cjson's key order */
    char oldest[128];
    snprintf(oldest, sizeof oldest, "{\"t\":%lld,\"id\":\"0\",\"name\":\"a_mail\",\"args\":{}}",
             now - 30);
    cmd("RPUSH %s:jobs:a_mail %s", ns_, oldest);
    cmd("SET %s:jobs:c_paused:paused 0", ns_); /* any value pauses */
    cmd("LPUSH %s:jobs:c_paused %s", ns_, "{\"name\":\"c_paused\",\"id\":\"2\",\"t\":0}");
    cmd("LPUSH %s:jobs:d_bad %s", ns_, "not a job"); /* Go crashes here (§16.13) */
    char *before = dump_now();
    cwork_queue_info *q = NULL;
    size_t n = 0;
    cwork_error err = {0};
    CHECK_INT(cwork_client_queues(cl, &q, &n, &err), 0);
    long long after = now_();
    CHECK_INT(n, 4);
    if (n == 4) {
        CHECK_STR(q[0].job_name, "a_mail");
        CHECK_INT(q[0].count, 2);
        CHECK(q[0].latency >= 30 && q[0].latency <= 30 + (after - now));
        CHECK(!q[0].paused);
        CHECK_STR(q[1].job_name, "b_empty");
        CHECK_INT(q[1].count, 0);
        CHECK_INT(q[1].latency, 0);
        CHECK_STR(q[2].job_name, "c_paused");
        CHECK_INT(q[2].count, 1);
        CHECK(q[2].latency >= now && q[2].latency <= after); /* t = 0 */
        CHECK(q[2].paused);
        CHECK_STR(q[3].job_name, "d_bad");
        CHECK_INT(q[3].count, 1);
        CHECK_INT(q[3].latency, 0);
    }
    cwork_queue_infos_free(q, n);
    char *after_dump = dump_now();
    CHECK_STR(after_dump, before); /* read only */
    free(before);
    free(after_dump);
    /* a queue key of the wrong type: listed as empty, the others read, the key named */
    cmd("SADD %s:known_jobs e_wrong", ns_);
    cmd("SET %s:jobs:e_wrong x", ns_);
    cwork_client_damage_clear();
    CHECK_INT(cwork_client_queues(cl, &q, &n, &err), 0);
    CHECK_INT(n, 5);
    if (n == 5) {
        CHECK_STR(q[4].job_name, "e_wrong");
        CHECK_INT(q[4].count, 0);
        CHECK_INT(q[3].count, 1);
    }
    cwork_queue_infos_free(q, n);
    const cwork_damaged_key *d = NULL;
    CHECK_INT(cwork_client_damage(&d), 1);
    if (d) CHECK_STR(d[0].type, "string");
    cwork_client_damage_clear();
    /* no known jobs: an empty list */
    tl_ns_delete(rc_, ns_);
    CHECK_INT(cwork_client_queues(cl, &q, &n, &err), 0);
    CHECK_INT(n, 0);
    cwork_queue_infos_free(q, n);
    done(cl);
}

/* ---------------------------------------------------------------- pools, workers */

static void pools_sorted_with_ids_without_hash(void)
{
    cwork_client *cl = fresh("cp");
    cmd("SADD %s:worker_pools ffffffffffffffffffffffff 0123456789abcdef01234567", ns_);
    cmd("HSET %s:worker_pools:0123456789abcdef01234567 heartbeat_at 1425263409 started_at "
        "1425263400 job_names foo,bar concurrency 10 worker_ids ccc,bbb host h1 pid 77 extra x",
        ns_);
    cwork_pool_heartbeat *p = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_pools(cl, &p, &n, NULL), 0);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_STR(p[0].worker_pool_id, "0123456789abcdef01234567");
        CHECK_INT(p[0].heartbeat_at, 1425263409);
        CHECK_INT(p[0].started_at, 1425263400);
        CHECK_INT(p[0].n_job_names, 2);
        CHECK_STR(p[0].job_names[0], "bar");
        CHECK_STR(p[0].job_names[1], "foo");
        CHECK_INT(p[0].concurrency, 10);
        CHECK_STR(p[0].host, "h1");
        CHECK_INT(p[0].pid, 77);
        CHECK_INT(p[0].n_worker_ids, 2);
        CHECK_STR(p[0].worker_ids[0], "bbb");
        CHECK_STR(p[0].worker_ids[1], "ccc");
        CHECK_STR(p[1].worker_pool_id, "ffffffffffffffffffffffff");
        CHECK(p[1].job_names == NULL && p[1].n_job_names == 0);
        CHECK(p[1].worker_ids == NULL && p[1].n_worker_ids == 0);
        CHECK_STR(p[1].host, "");
        CHECK_INT(p[1].pid + p[1].concurrency + p[1].started_at + p[1].heartbeat_at, 0);
    }
    cwork_pool_heartbeats_free(p, n);
    /* a field Go cannot parse fails Go's whole call; here that pool says it is damaged,
     * naming the key and field, and the others are listed */
    cmd("HSET %s:worker_pools:ffffffffffffffffffffffff started_at 1.5", ns_);
    cwork_error err = {0};
    CHECK_INT(cwork_client_pools(cl, &p, &n, &err), 0);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK(p[0].damaged == NULL);
        CHECK(p[1].damaged &&
              strstr(p[1].damaged, ":worker_pools:ffffffffffffffffffffffff "
                                   "field started_at") &&
              strstr(p[1].damaged, "1.5"));
    }
    cwork_pool_heartbeats_free(p, n);
    done(cl);
}

static void workers_in_pool_order_busy_when_their_hash_has_a_field(void)
{
    cwork_client *cl = fresh("cw");
    cmd("SADD %s:worker_pools p2 p1", ns_);
    cmd("HSET %s:worker_pools:p1 worker_ids zz1,aa1", ns_);
    cmd("HSET %s:worker_pools:p2 worker_ids bb2", ns_);
    cmd("HSET %s:worker:zz1 job_name foo job_id bar started_at 1425263401 args "
        "{\"a\":1,\"b\":\"wat\"} checkin %s checkin_at 1425263402",
        ns_, "doin it");
    cmd("HSET %s:worker:bb2 job_name x", ns_);
    cwork_worker_observation *w = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_workers(cl, &w, &n, NULL), 0);
    CHECK_INT(n, 3);
    if (n == 3) {
        CHECK_STR(w[0].worker_id, "aa1"); /* pool p1 first, its ids sorted */
        CHECK(!w[0].is_busy);
        CHECK_STR(w[0].job_name, "");
        CHECK_STR(w[1].worker_id, "zz1");
        CHECK(w[1].is_busy);
        CHECK_STR(w[1].job_name, "foo");
        CHECK_STR(w[1].job_id, "bar");
        CHECK_INT(w[1].started_at, 1425263401);
        CHECK_STR(w[1].args_json, "{\"a\":1,\"b\":\"wat\"}");
        CHECK_STR(w[1].checkin, "doin it");
        CHECK_INT(w[1].checkin_at, 1425263402);
        CHECK_STR(w[2].worker_id, "bb2");
        CHECK(w[2].is_busy);
        CHECK_INT(w[2].started_at, 0);
    }
    cwork_worker_observations_free(w, n);
    cmd("HSET %s:worker:bb2 checkin_at soon", ns_);
    cwork_error err = {0};
    CHECK_INT(cwork_client_workers(cl, &w, &n, &err), CWORK_EPROTO);
    done(cl);
}

/* ---------------------------------------------------------------- listing */

static void add_job(const char *set, long long score, const char *name, int i)
{
    cmd("ZADD %s:%s %lld {\"name\":\"%s\",\"id\":\"%s-%d\",\"t\":1,\"args\":{\"i\":%d}}", ns_, set,
        score, name, name, i, i);
}

static void list_pages_of_twenty_with_name_filter_skipping_bad_members(void)
{
    cwork_client *cl = fresh("cl");
    for (int i = 0; i < 45; i++)
        add_job("dead", 1000 + i, i % 3 == 0 ? "b" : "a", i);
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    int64_t total = 0;
    CHECK_INT(cwork_client_list(cl, CWORK_SET_DEAD, 0, NULL, &jobs, &n, &total, NULL), 0);
    CHECK_INT(n, 20);
    CHECK_INT(total, 45);
    CHECK_INT(jobs[0].at, 1000);
    CHECK_STR(cwork_job_id(jobs[0].job), "b-0");
    CHECK_INT(jobs[19].at, 1019);
    size_t raw_len;
    const char *raw = cwork_job_raw(jobs[1].job, &raw_len);
    CHECK_MEM(raw, raw_len, "{\"name\":\"a\",\"id\":\"a-1\",\"t\":1,\"args\":{\"i\":1}}", 44);
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(cwork_client_list(cl, CWORK_SET_DEAD, 3, NULL, &jobs, &n, &total, NULL), 0);
    CHECK_INT(n, 5);
    CHECK_INT(jobs[4].at, 1044);
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(cwork_client_list(cl, CWORK_SET_DEAD, 4, NULL, &jobs, &n, &total, NULL), 0);
    CHECK_INT(n, 0);
    CHECK_INT(total, 45);
    cwork_listed_jobs_free(jobs, n);
    /* name b: 15 of them, one page; name a: 30, two pages */
    CHECK_INT(cwork_client_list(cl, CWORK_SET_DEAD, 1, "b", &jobs, &n, &total, NULL), 0);
    CHECK_INT(n, 15);
    CHECK_INT(total, 15);
    for (size_t i = 0; i < n; i++)
        CHECK_STR(cwork_job_name(jobs[i].job), "b");
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(cwork_client_list(cl, CWORK_SET_DEAD, 2, "a", &jobs, &n, &total, NULL), 0);
    CHECK_INT(n, 10);
    CHECK_INT(total, 30);
    CHECK_STR(cwork_job_id(jobs[0].job), "a-31"); /* the 21st a: 1,2,4,5,…,29,31 */
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(cwork_client_list(cl, CWORK_SET_DEAD, 1, "nobody", &jobs, &n, &total, NULL), 0);
    CHECK_INT(n + total, 0);
    cwork_listed_jobs_free(jobs, n);
    /* an undecodable member is skipped, not fatal; a fractional score is listed, rounded
     * down (it used to be hidden) */
    cmd("ZADD %s:dead 999 %s", ns_, "{broken");
    cmd("ZADD %s:dead 999.5 %s", ns_, "{\"name\":\"a\",\"id\":\"frac\",\"t\":1}");
    CHECK_INT(cwork_client_list(cl, CWORK_SET_DEAD, 1, NULL, &jobs, &n, &total, NULL), 0);
    CHECK_INT(n, 19);
    CHECK_INT(total, 47); /* ZCARD, as Go */
    CHECK_STR(cwork_job_id(jobs[0].job), "frac");
    CHECK_INT(jobs[0].at, 999);
    CHECK_STR(cwork_job_id(jobs[1].job), "b-0");
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(cwork_client_list(cl, CWORK_SET_DEAD, 1, "b", &jobs, &n, &total, NULL), 0);
    CHECK_INT(total, 15);
    cwork_listed_jobs_free(jobs, n);
    /* other sets, and a bad set */
    add_job("retry", 5, "r", 1);
    add_job("scheduled", 6, "s", 1);
    CHECK_INT(cwork_client_list(cl, CWORK_SET_RETRY, 1, NULL, &jobs, &n, &total, NULL), 0);
    CHECK(n == 1 && total == 1 && jobs[0].at == 5);
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(cwork_client_list(cl, CWORK_SET_SCHEDULED, 1, NULL, &jobs, &n, &total, NULL), 0);
    CHECK(n == 1 && total == 1 && !strcmp(cwork_job_name(jobs[0].job), "s"));
    cwork_listed_jobs_free(jobs, n);
    cwork_error err = {0};
    CHECK_INT(cwork_client_list(cl, (cwork_job_set)0, 1, NULL, &jobs, &n, &total, &err),
              CWORK_EINVAL);
    done(cl);
}

/* ---------------------------------------------------------------- delete */

static void delete_removes_exact_score_and_id_and_a_unique_guard(void)
{
    cwork_client *cl = fresh("cd");
    cmd("ZADD %s:dead 100 %s", ns_, "{\"name\":\"a\",\"id\":\"x\",\"t\":1,\"args\":null}");
    cmd("ZADD %s:dead 100 %s", ns_, "{\"name\":\"a\",\"id\":\"y\",\"t\":1,\"args\":null}");
    cmd("ZADD %s:dead 101 %s", ns_, "{\"name\":\"a\",\"id\":\"x\",\"t\":2,\"args\":null}");
    cmd("ZADD %s:dead 100 %s", ns_, "not json"); /* Go's script fails on it; we pass by */
    CHECK_INT(cwork_client_delete(cl, CWORK_SET_DEAD, 100, "x", NULL), 0);
    CHECK_DUMP("NS:dead zset not json=100 | {\"name\":\"a\",\"id\":\"y\",\"t\":1,\"args\":null}=100"
               " | {\"name\":\"a\",\"id\":\"x\",\"t\":2,\"args\":null}=101\n");
    cwork_error err = {0};
    CHECK_INT(cwork_client_delete(cl, CWORK_SET_DEAD, 100, "x", &err), CWORK_ENOTFOUND);
    CHECK_STR(err.message, "nothing deleted");
    CHECK_INT(cwork_client_delete(cl, CWORK_SET_RETRY, 101, "x", &err), CWORK_ENOTFOUND);
    CHECK_DUMP("NS:dead zset not json=100 | {\"name\":\"a\",\"id\":\"y\",\"t\":1,\"args\":null}=100"
               " | {\"name\":\"a\",\"id\":\"x\",\"t\":2,\"args\":null}=101\n");
    tl_ns_delete(rc_, ns_);

    /* A unique scheduled job (Go form) and one in cjson form: the guards go, computed
     * from the decoded args in Go's encoding; a non-unique job's like-named key stays. */
    cmd("ZADD %s:scheduled 200 %s", ns_,
        "{\"name\":\"clear_cache\",\"id\":\"u1\",\"t\":1,\"args\":{\"object_id_\":\"123\"},"
        "\"unique\":true}");
    cmd("ZADD %s:scheduled 300 %s", ns_,
        "{\"unique\":true,\"args\":{\"b\":2,\"a\":\"<&>\"},\"id\":\"u2\",\"name\":\"x\",\"t\":1}");
    cmd("ZADD %s:scheduled 400 %s", ns_, "{\"name\":\"x\",\"id\":\"plain\",\"t\":1,\"args\":{}}");
    cmd("SET %s:unique:clear_cache:%s 1 EX 86400", ns_, "{\"object_id_\":\"123\"}\n");
    cmd("SET %s:unique:x:%s 1 EX 86400", ns_, "{\"a\":\"\\u003c\\u0026\\u003e\",\"b\":2}\n");
    cmd("SET %s:unique:x:%s 1 EX 86400", ns_, "{}\n");
    CHECK_INT(cwork_client_delete(cl, CWORK_SET_SCHEDULED, 200, "u1", NULL), 0);
    CHECK_INT(cwork_client_delete(cl, CWORK_SET_SCHEDULED, 300, "u2", NULL), 0);
    CHECK_INT(cwork_client_delete(cl, CWORK_SET_SCHEDULED, 400, "plain", NULL), 0);
    CHECK_DUMP("NS:unique:x:{}\\x0a string ttl=86400 1\n");
    done(cl);
}

/* ---------------------------------------------------------------- retry one */

static void retry_dead_requeues_with_t_now_and_failure_fields_and_d_removed(void)
{
    cwork_client *cl = fresh("cr");
    cmd("SADD %s:known_jobs send_email", ns_);
    cmd("ZADD %s:dead 1700000100 %s", ns_,
        "{\"name\":\"send_email\",\"id\":\"j1\",\"t\":1700000000,\"args\":{\"address\":"
        "\"a@b.c\"},\"unique\":true,\"fails\":4,\"err\":\"boom\",\"failed_at\":1700000100,"
        "\"d\":1700000060,\"trace\":{\"traceparent\":\"00-ab-cd-01\"}}");
    cmd("ZADD %s:dead 1700000100 %s", ns_, "{\"name\":\"send_email\",\"id\":\"j2\",\"t\":5}");
    long long before = now_();
    CHECK_INT(cwork_client_retry_dead(cl, 1700000100, "j1", NULL), 0);
    long long after = now_();
    char *moved = list_member("jobs:send_email");
    cwork_job *job = NULL;
    CHECK_INT(cwork_job_decode(moved, strlen(moved), &job, NULL), 0);
    if (job) {
        CHECK_STR(cwork_job_id(job), "j1");
        CHECK(cwork_job_enqueued_at(job) >= before && cwork_job_enqueued_at(job) <= after);
        CHECK_INT(cwork_job_fails(job), 0);
        CHECK_STR(cwork_job_last_error(job), "");
        CHECK_INT(cwork_job_failed_at(job), 0);
        CHECK_INT(cwork_job_periodic_deadline(job), 0);
        CHECK(cwork_job_unique(job)); /* unique and trace are kept, as Go does */
        CHECK(strstr(moved, "\"traceparent\":\"00-ab-cd-01\"") != NULL);
        CHECK(strstr(moved, "\"address\":\"a@b.c\"") != NULL);
        cwork_job_free(job);
    }
    snprintf(want_, sizeof want_,
             "NS:dead zset {\"name\":\"send_email\",\"id\":\"j2\",\"t\":5}=1700000100\n"
             "NS:jobs:send_email list %s\n"
             "NS:known_jobs set send_email\n",
             moved);
    CHECK_DUMP(want_);
    free(moved);
    cwork_error err = {0};
    CHECK_INT(cwork_client_retry_dead(cl, 1700000100, "j1", &err), CWORK_ENOTFOUND);
    CHECK_STR(err.message, "nothing retried");
    CHECK_DUMP(want_);
    done(cl);
}

static void retry_dead_of_unknown_name_stays_dead_with_err(void)
{
    cwork_client *cl = fresh("cru");
    cmd("SADD %s:known_jobs other", ns_);
    cmd("ZADD %s:dead 50 %s", ns_, "{\"name\":\"ghost\",\"id\":\"g\",\"t\":5,\"args\":null}");
    long long before = now_();
    cwork_error err = {0};
    CHECK_INT(cwork_client_retry_dead(cl, 50, "g", &err), CWORK_ENOTFOUND);
    CHECK(strstr(err.message, "nothing retried") == err.message);
    long long after = now_();
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1 WITHSCORES", ns_);
    CHECK_INT(r->elements, 2);
    if (r->elements == 2) {
        cwork_job *job = NULL;
        CHECK_INT(cwork_job_decode(r->element[0]->str, r->element[0]->len, &job, NULL), 0);
        CHECK_STR(cwork_job_last_error(job), "unknown job when requeueing");
        CHECK(cwork_job_failed_at(job) >= before && cwork_job_failed_at(job) <= after);
        long long score = atoll(r->element[1]->str);
        CHECK(score == cwork_job_failed_at(job) + 5); /* Go: now + 5 */
        snprintf(want_, sizeof want_, "NS:dead zset %s=%lld\nNS:known_jobs set other\n",
                 r->element[0]->str, score);
        CHECK_DUMP(want_);
        cwork_job_free(job);
    }
    freeReplyObject(r);
    done(cl);
}

/* ---------------------------------------------------------------- retry all */

static void retry_all_small_case_and_name_filter(void)
{
    cwork_client *cl = fresh("cra");
    long long now = now_();
    cmd("SADD %s:known_jobs a b", ns_);
    cmd("ZADD %s:dead %lld %s", ns_, now - 10,
        "{\"name\":\"a\",\"id\":\"a1\",\"t\":1,\"fails\":4}");
    cmd("ZADD %s:dead %lld %s", ns_, now - 9, "{\"name\":\"b\",\"id\":\"b1\",\"t\":1,\"fails\":4}");
    cmd("ZADD %s:dead %lld %s", ns_, now - 8, "{\"name\":\"ghost\",\"id\":\"g1\",\"t\":1}");
    cmd("ZADD %s:dead %lld %s", ns_, now - 7, "undecodable");
    cmd("ZADD %s:dead %lld %s", ns_, now + 1000, "{\"name\":\"a\",\"id\":\"later\",\"t\":1}");
    int64_t count = -1;
    CHECK_INT(cwork_client_retry_all_dead(cl, "b", &count, NULL), 0);
    CHECK_INT(count, 1);
    char *b1 = list_member("jobs:b");
    CHECK(strstr(b1, "\"id\":\"b1\"") && !strstr(b1, "fails"));
    snprintf(want_, sizeof want_,
             "NS:dead zset {\"name\":\"a\",\"id\":\"a1\",\"t\":1,\"fails\":4}=%lld | "
             "{\"name\":\"ghost\",\"id\":\"g1\",\"t\":1}=%lld | undecodable=%lld | "
             "{\"name\":\"a\",\"id\":\"later\",\"t\":1}=%lld\n"
             "NS:jobs:b list %s\n"
             "NS:known_jobs set a | b\n",
             now - 10, now - 8, now - 7, now + 1000, b1);
    CHECK_DUMP(want_);
    CHECK_INT(cwork_client_retry_all_dead(cl, NULL, &count, NULL), 0);
    CHECK_INT(count, 1); /* a1; the ghost goes back to dead, not counted */
    char *a1 = list_member("jobs:a");
    CHECK(strstr(a1, "\"id\":\"a1\"") && !strstr(a1, "fails"));
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1 WITHSCORES", ns_);
    CHECK_INT(r->elements, 6);
    if (r->elements == 6) {
        CHECK_STR(r->element[0]->str, "undecodable");
        CHECK(strstr(r->element[2]->str, "unknown job when requeueing") != NULL);
        long long ghost_at = atoll(r->element[3]->str);
        CHECK(ghost_at >= now + 5 && ghost_at <= now_() + 5);
        snprintf(want_, sizeof want_,
                 "NS:dead zset undecodable=%lld | %s=%lld | "
                 "{\"name\":\"a\",\"id\":\"later\",\"t\":1}=%lld\n"
                 "NS:jobs:a list %s\n"
                 "NS:jobs:b list %s\n"
                 "NS:known_jobs set a | b\n",
                 now - 7, r->element[2]->str, ghost_at, now + 1000, a1, b1);
        CHECK_DUMP(want_);
    }
    freeReplyObject(r);
    free(a1);
    free(b1);
    done(cl);
}

/* 1001 unknown jobs die first: Go's first batch of 1000 requeues nothing and Go stops
 * (§16.13); every known job behind them must still go back. */
static void retry_all_does_not_stop_at_a_batch_of_unknown_names(void)
{
    cwork_client *cl = fresh("crb");
    long long now = now_();
    cmd("SADD %s:known_jobs a", ns_);
    for (int i = 0; i < 1001; i++)
        cmd("ZADD %s:dead %lld {\"name\":\"ghost\",\"id\":\"g%d\",\"t\":1}", ns_, now - 5000 + i,
            i);
    for (int i = 0; i < 1150; i++)
        cmd("ZADD %s:dead %lld {\"name\":\"a\",\"id\":\"a%d\",\"t\":1,\"err\":\"x\"}", ns_,
            now - 3000 + i, i);
    cmd("ZADD %s:dead %lld {bad", ns_, now - 6000);
    int64_t count = 0;
    CHECK_INT(cwork_client_retry_all_dead(cl, NULL, &count, NULL), 0);
    CHECK_INT(count, 1150);
    redisReply *r = tl_cmd(rc_, "LLEN %s:jobs:a", ns_);
    CHECK_INT(r->integer, 1150);
    freeReplyObject(r);
    r = tl_cmd(rc_, "ZCARD %s:dead", ns_);
    CHECK_INT(r->integer, 1002);
    freeReplyObject(r);
    r = tl_cmd(rc_, "ZCOUNT %s:dead %lld +inf", ns_, now + 5);
    CHECK_INT(r->integer, 1001); /* every ghost re-added at now + 5 */
    freeReplyObject(r);
    r = tl_cmd(rc_, "LINDEX %s:jobs:a -1", ns_);
    CHECK(strstr(r->str, "\"id\":\"a0\"") != NULL); /* oldest first */
    freeReplyObject(r);
    /* nothing else was written: three keys */
    char *dump = dump_now();
    int lines = 0;
    for (const char *p = dump; *p; p++)
        lines += *p == '\n';
    CHECK_INT(lines, 3);
    CHECK(strncmp(dump, ns_, strlen(ns_)) == 0 && strstr(dump, ":dead zset {bad=") != NULL);
    free(dump);
    done(cl);
}

/* A dead job whose queue key is damaged (a string): retrying it loses nothing — it
 * stays dead as it was, and the caller gets the server's message. */
static void retry_dead_onto_a_damaged_queue_keeps_the_job_dead(void)
{
    cwork_client *cl = fresh("crw");
    long long now = now_();
    cmd("SADD %s:known_jobs a b", ns_);
    cmd("SET %s:jobs:a oops", ns_);
    cmd("ZADD %s:dead %lld %s", ns_, now - 10,
        "{\"name\":\"a\",\"id\":\"a1\",\"t\":1,\"fails\":4}");
    cmd("ZADD %s:dead %lld %s", ns_, now - 9, "{\"name\":\"b\",\"id\":\"b1\",\"t\":1,\"fails\":4}");
    cwork_error err = {0};
    CHECK_INT(cwork_client_retry_dead(cl, now - 10, "a1", &err), CWORK_EREDIS);
    CHECK(strstr(err.message, "WRONGTYPE") != NULL);
    CHECK(strstr(err.message, ":jobs:a") != NULL);
    snprintf(want_, sizeof want_,
             "NS:dead zset {\"name\":\"a\",\"id\":\"a1\",\"t\":1,\"fails\":4}=%lld | "
             "{\"name\":\"b\",\"id\":\"b1\",\"t\":1,\"fails\":4}=%lld\n"
             "NS:jobs:a string oops\n"
             "NS:known_jobs set a | b\n",
             now - 10, now - 9);
    CHECK_DUMP(want_);
    /* Retry-all: the others go back, the one that cannot stays, the error is reported. */
    int64_t count = 0;
    memset(&err, 0, sizeof err);
    CHECK_INT(cwork_client_retry_all_dead(cl, NULL, &count, &err), CWORK_EREDIS);
    CHECK_INT(count, 1);
    CHECK(strstr(err.message, "WRONGTYPE") != NULL);
    char *b1 = list_member("jobs:b");
    snprintf(want_, sizeof want_,
             "NS:dead zset {\"name\":\"a\",\"id\":\"a1\",\"t\":1,\"fails\":4}=%lld\n"
             "NS:jobs:a string oops\n"
             "NS:jobs:b list %s\n"
             "NS:known_jobs set a | b\n",
             now - 10, b1);
    CHECK_DUMP(want_);
    free(b1);
    done(cl);
}

/* ---------------------------------------------------------------- delete all, trim */

static void delete_all_dead_with_and_without_a_name(void)
{
    cwork_client *cl = fresh("cda");
    for (int i = 0; i < 2500; i++)
        add_job("dead", 1000 + i, i % 5 == 0 ? "keep" : "drop", i);
    cmd("ZADD %s:dead 1 %s", ns_, "[not a job");
    add_job("retry", 5, "drop", 1);
    int64_t count = 0;
    CHECK_INT(cwork_client_delete_all_dead(cl, "drop", &count, NULL), 0);
    CHECK_INT(count, 2000);
    char *expect = malloc(200000), *o = expect;
    o += sprintf(o, "NS:dead zset [not a job=1");
    for (int i = 0; i < 2500; i += 5)
        o += sprintf(o, " | {\"name\":\"keep\",\"id\":\"keep-%d\",\"t\":1,\"args\":{\"i\":%d}}=%d",
                     i, i, 1000 + i);
    sprintf(o,
            "\nNS:retry zset {\"name\":\"drop\",\"id\":\"drop-1\",\"t\":1,\"args\":{\"i\":1}}=5\n");
    CHECK_DUMP(expect);
    free(expect);
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    int64_t total = 0;
    CHECK_INT(cwork_client_list(cl, CWORK_SET_DEAD, 1, "keep", &jobs, &n, &total, NULL), 0);
    CHECK_INT(total, 500);
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(cwork_client_delete_all_dead(cl, NULL, &count, NULL), 0);
    CHECK_INT(count, 501);
    CHECK_DUMP(
        "NS:retry zset {\"name\":\"drop\",\"id\":\"drop-1\",\"t\":1,\"args\":{\"i\":1}}=5\n");
    CHECK_INT(cwork_client_delete_all_dead(cl, NULL, &count, NULL), 0);
    CHECK_INT(count, 0);
    done(cl);
}

static void trim_dead_by_age_and_by_count(void)
{
    cwork_client *cl = fresh("ct");
    for (int i = 0; i < 6; i++)
        add_job("dead", 100 + i, "a", i);
    int64_t removed = -1;
    CHECK_INT(cwork_client_trim_dead(cl, 0, -1, &removed, NULL), 0);
    CHECK_INT(removed, 0);
    CHECK_INT(cwork_client_trim_dead(cl, 102, -1, &removed, NULL), 0); /* died before 102 */
    CHECK_INT(removed, 2);
    CHECK_DUMP("NS:dead zset {\"name\":\"a\",\"id\":\"a-2\",\"t\":1,\"args\":{\"i\":2}}=102 | "
               "{\"name\":\"a\",\"id\":\"a-3\",\"t\":1,\"args\":{\"i\":3}}=103 | "
               "{\"name\":\"a\",\"id\":\"a-4\",\"t\":1,\"args\":{\"i\":4}}=104 | "
               "{\"name\":\"a\",\"id\":\"a-5\",\"t\":1,\"args\":{\"i\":5}}=105\n");
    CHECK_INT(cwork_client_trim_dead(cl, 0, 3, &removed, NULL), 0); /* the newest 3 stay */
    CHECK_INT(removed, 1);
    CHECK_DUMP("NS:dead zset {\"name\":\"a\",\"id\":\"a-3\",\"t\":1,\"args\":{\"i\":3}}=103 | "
               "{\"name\":\"a\",\"id\":\"a-4\",\"t\":1,\"args\":{\"i\":4}}=104 | "
               "{\"name\":\"a\",\"id\":\"a-5\",\"t\":1,\"args\":{\"i\":5}}=105\n");
    CHECK_INT(cwork_client_trim_dead(cl, 105, 1, &removed, NULL), 0); /* both limits */
    CHECK_INT(removed, 2);
    CHECK_DUMP("NS:dead zset {\"name\":\"a\",\"id\":\"a-5\",\"t\":1,\"args\":{\"i\":5}}=105\n");
    CHECK_INT(cwork_client_trim_dead(cl, 0, 0, &removed, NULL), 0);
    CHECK_INT(removed, 1);
    CHECK_DUMP("");
    done(cl);
}

/* ---------------------------------------------------------------- pause */

static void pause_sets_the_key_go_reads_and_unpause_deletes_it(void)
{
    cwork_client *cl = fresh("cpa");
    CHECK_INT(cwork_client_pause(cl, "send_email", NULL), 0);
    CHECK_DUMP("NS:jobs:send_email:paused string 1\n");
    CHECK_INT(cwork_client_pause(cl, "send_email", NULL), 0);
    CHECK_DUMP("NS:jobs:send_email:paused string 1\n");
    CHECK_INT(cwork_client_unpause(cl, "send_email", NULL), 0);
    CHECK_DUMP("");
    CHECK_INT(cwork_client_unpause(cl, "send_email", NULL), 0);
    cwork_error err = {0};
    CHECK_INT(cwork_client_pause(cl, "", &err), CWORK_EINVAL);
    CHECK_INT(cwork_client_pause(cl, NULL, &err), CWORK_EINVAL);
    done(cl);
}

/* ---------------------------------------------------------------- find */

static void find_looks_in_every_place(void)
{
    cwork_client *cl = fresh("cf");
    cmd("SADD %s:known_jobs a b", ns_);
    cmd("SADD %s:worker_pools 0123456789abcdef01234567", ns_);
    cmd("LPUSH %s:jobs:a %s", ns_, "{\"name\":\"a\",\"id\":\"q1\",\"t\":1,\"args\":null}");
    cmd("LPUSH %s:jobs:a %s", ns_, "garbage");
    cmd("LPUSH %s:jobs:b:0123456789abcdef01234567:inprogress %s", ns_,
        "{\"name\":\"b\",\"id\":\"ip1\",\"t\":1,\"args\":null}");
    cmd("ZADD %s:retry 11 %s", ns_, "{\"name\":\"a\",\"id\":\"r1\",\"t\":1}");
    /* a periodic id with '/', as cjson writes it (\/) */
    cmd("ZADD %s:scheduled 12 %s", ns_,
        "{\"name\":\"a\",\"id\":\"periodic:a:*\\/5 * * * *:12\",\"t\":12}");
    cmd("ZADD %s:dead 13 %s", ns_, "{\"name\":\"a\",\"id\":\"d1\",\"t\":1,\"err\":\"e\"}");
    cmd("LPUSH %s:jobs:unknown %s", ns_, "{\"name\":\"unknown\",\"id\":\"hidden\",\"t\":1}");
    char *before = dump_now();
    static const struct {
        const char *id;
        cwork_job_place place;
        int64_t at;
    } cases[] = {{"q1", CWORK_PLACE_QUEUE, 0},
                 {"ip1", CWORK_PLACE_IN_PROGRESS, 0},
                 {"r1", CWORK_PLACE_RETRY, 11},
                 {"periodic:a:*/5 * * * *:12", CWORK_PLACE_SCHEDULED, 12},
                 {"d1", CWORK_PLACE_DEAD, 13}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cwork_job_place place = 0;
        cwork_listed_job found = {0};
        cwork_error err = {0};
        int rc = cwork_client_find(cl, cases[i].id, &place, &found, &err);
        if (rc != 0) {
            tl_fail(__FILE__, __LINE__, "find %s: %s", cases[i].id, err.message);
            continue;
        }
        CHECK_INT(place, cases[i].place);
        CHECK_INT(found.at, cases[i].at);
        CHECK_STR(cwork_job_id(found.job), cases[i].id);
        cwork_job_free(found.job);
    }
    cwork_job_place place = 0;
    cwork_listed_job found = {0};
    cwork_error err = {0};
    CHECK_INT(cwork_client_find(cl, "nope", &place, &found, &err), CWORK_ENOTFOUND);
    CHECK(found.job == NULL);
    /* only known names' queues are looked at */
    CHECK_INT(cwork_client_find(cl, "hidden", &place, &found, &err), CWORK_ENOTFOUND);
    char *after = dump_now();
    CHECK_STR(after, before);
    free(before);
    free(after);
    done(cl);
}

static void unreachable_redis_is_an_error_value(void)
{
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.connect_timeout_ms = 200;
    o.checkout_timeout_ms = 200;
    cwork_redis *dead = cwork_redis_new("redis://127.0.0.1:1", &o, NULL);
    cwork_client *cl = cwork_client_new(dead, "x", NULL);
    cwork_queue_info *q = (cwork_queue_info *)1;
    size_t n = 7;
    cwork_error err = {0};
    CHECK(cwork_client_queues(cl, &q, &n, &err) < 0);
    CHECK(q == NULL && n == 0);
    CHECK(cwork_client_delete(cl, CWORK_SET_DEAD, 1, "x", &err) < 0);
    CHECK(cwork_client_retry_all_dead(cl, NULL, NULL, NULL) < 0);
    cwork_client_free(cl);
    cwork_redis_free(dead);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    RUN(queues_give_counts_latency_and_pause_sorted_by_name);
    RUN(pools_sorted_with_ids_without_hash);
    RUN(workers_in_pool_order_busy_when_their_hash_has_a_field);
    RUN(list_pages_of_twenty_with_name_filter_skipping_bad_members);
    RUN(delete_removes_exact_score_and_id_and_a_unique_guard);
    RUN(retry_dead_requeues_with_t_now_and_failure_fields_and_d_removed);
    RUN(retry_dead_of_unknown_name_stays_dead_with_err);
    RUN(retry_all_small_case_and_name_filter);
    RUN(retry_all_does_not_stop_at_a_batch_of_unknown_names);
    RUN(retry_dead_onto_a_damaged_queue_keeps_the_job_dead);
    RUN(delete_all_dead_with_and_without_a_name);
    RUN(trim_dead_by_age_and_by_count);
    RUN(pause_sets_the_key_go_reads_and_unpause_deletes_it);
    RUN(find_looks_in_every_place);
    RUN(unreachable_redis_is_an_error_value);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
