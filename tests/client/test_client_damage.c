/* One damaged key does not take down the admin reads of its namespace: for each key of
 * a whole namespace damaged in turn (damage_testutil.h), every read view answers 0 with
 * what it could read, cwork_client_damage names that key once with its type and the
 * type expected, and the namespace is unchanged afterwards. The --all changes, the
 * single-job changes, cwork_client_result and cwork_client_batch on a damaged batch key
 * name the damaged key in their error (CWORK_ETYPE); a job's story and a batch read past
 * a damaged failure list or :jobs hash. */
#include "damage_testutil.h"

#include "cwork.h"

#include <pthread.h>

/* Runs every read view; each must answer 0. */
static void read_every_view(cwork_client *cl, const dmg_case *k)
{
    cwork_error err = {0};
    cwork_queue_info *q = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_queues(cl, &q, &n, &err), 0);
    cwork_queue_infos_free(q, n);
    cwork_pool_heartbeat *p = NULL;
    CHECK_INT(cwork_client_pools(cl, &p, &n, &err), 0);
    cwork_pool_heartbeats_free(p, n);
    cwork_worker_observation *w = NULL;
    CHECK_INT(cwork_client_workers(cl, &w, &n, &err), 0);
    cwork_worker_observations_free(w, n);
    const cwork_job_set sets[] = {CWORK_SET_RETRY, CWORK_SET_SCHEDULED, CWORK_SET_DEAD};
    for (size_t i = 0; i < 3; i++) {
        cwork_listed_job *jobs = NULL;
        int64_t total = -1;
        CHECK_INT(cwork_client_list_page(cl, sets[i], NULL, &jobs, &n, &total, &err), 0);
        cwork_listed_jobs_free(jobs, n);
        cwork_list_query byname = {1, 20, "a", false};
        CHECK_INT(cwork_client_list_page(cl, sets[i], &byname, &jobs, &n, &total, &err), 0);
        cwork_listed_jobs_free(jobs, n);
        cwork_search_query sq = {"a", 1, 20, 0};
        CHECK_INT(cwork_client_search(cl, sets[i], &sq, &jobs, &n, NULL, &err), 0);
        cwork_listed_jobs_free(jobs, n);
    }
    cwork_job_place place;
    cwork_listed_job found = {0};
    int rc = cwork_client_find(cl, k->find, &place, &found, &err);
    if (rc != 0) tl_fail(__FILE__, __LINE__, "find %s: %d %s", k->find, rc, err.message);
    cwork_job_free(found.job);
    cwork_job_types t;
    CHECK_INT(cwork_client_job_types(cl, 0, &t, &err), 0);
    cwork_job_types_free(&t);
    cwork_day_stats *d = NULL;
    CHECK_INT(cwork_client_daily_stats(cl, 7, &d, &n, &err), 0);
    cwork_free(d);
    cwork_rate_limit_info *l = NULL;
    CHECK_INT(cwork_client_rate_limits(cl, &l, &n, &err), 0);
    cwork_rate_limit_infos_free(l, n);
    cwork_succeeded_job *kept = NULL; /* reads known_jobs (named by the queues already) */
    CHECK_INT(cwork_client_succeeded(cl, NULL, 0, &kept, &n, &err), 0);
    cwork_succeeded_jobs_free(kept, n);
    for (const char *const *name = (const char *const[]){"a", "b", NULL}; *name; name++) {
        cwork_listed_job *jobs = NULL;
        CHECK_INT(cwork_client_queue_jobs(cl, *name, 1, 20, &jobs, &n, NULL, &err), 0);
        cwork_listed_jobs_free(jobs, n);
    }
    cwork_job_story st;
    rc = cwork_client_job_story(cl, k->find, &st, &err);
    if (rc != 0) tl_fail(__FILE__, __LINE__, "story %s: %d %s", k->find, rc, err.message);
    if (rc == 0) cwork_job_story_free(&st);
    cwork_batch_info bi;
    CHECK_INT(cwork_client_batch(cl, DMG_BATCH, &bi, &err), 0);
    CHECK_INT(bi.total, 3); /* the counts are the batch hash's, whatever :jobs holds */
    CHECK_INT(bi.pending, 1);
    char *body = NULL;
    size_t len = 0;
    CHECK_INT(cwork_client_queues_json(cl, &body, &len, &err), 0);
    cwork_free(body);
    body = NULL;
    CHECK_INT(cwork_client_pools_json(cl, &body, &len, &err), 0);
    cwork_free(body);
    body = NULL;
    CHECK_INT(cwork_client_busy_workers_json(cl, &body, &len, &err), 0);
    cwork_free(body);
}

static void each_damaged_key_is_named_once_and_the_rest_read(void)
{
    char ns[64];
    tl_unique_ns("dmgviews", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    cwork_redis *r = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cwork_client *cl = cwork_client_new(r, ns, NULL);
    for (size_t i = 0; i < DMG_NCASES; i++) {
        const dmg_case *k = &dmg_cases[i];
        char key[256];
        dmg_key(ns, k, key, sizeof key);
        dmg_fixture(c, ns);
        dmg_apply(c, ns, k);
        char *before = tl_ns_dump(c, ns);
        cwork_client_damage_clear();
        read_every_view(cl, k);
        const cwork_damaged_key *d = NULL;
        size_t n = cwork_client_damage(&d);
        if (n != (k->named_by ? 1u : 0u))
            tl_fail(__FILE__, __LINE__, "%s: %zu damaged keys, first %s", key, n,
                    n ? d[0].key : "-");
        if (n >= 1) {
            CHECK_STR(d[0].key, key);
            CHECK_STR(d[0].type, k->type);
            CHECK_STR(d[0].expected, k->expected);
            CHECK(d[0].what && d[0].what[0]);
        }
        char *after = tl_ns_dump(c, ns);
        CHECK_STR(after, before); /* reading changed nothing */
        free(before);
        free(after);
    }
    cwork_client_damage_clear();
    CHECK_INT(cwork_client_damage(NULL), 0);
    tl_ns_delete(c, ns);
    cwork_client_free(cl);
    cwork_redis_free(r);
    redisFree(c);
}

/* A queue's "what" names its job; the list is the calling thread's own. */
static void *other_thread(void *arg)
{
    (void)arg;
    return (void *)(uintptr_t)cwork_client_damage(NULL);
}

static void the_list_is_per_thread_and_says_what_a_key_is_for(void)
{
    char ns[64];
    tl_unique_ns("dmgthread", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    dmg_fixture(c, ns);
    dmg_apply(c, ns, &dmg_cases[1]); /* jobs:a */
    cwork_redis *r = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cwork_client *cl = cwork_client_new(r, ns, NULL);
    cwork_client_damage_clear();
    cwork_queue_info *q = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_queues(cl, &q, &n, NULL), 0);
    CHECK_INT(n, 2);
    if (n == 2) { /* the damaged queue is listed, empty; the other as it is */
        CHECK_STR(q[0].job_name, "a");
        CHECK_INT(q[0].count, 0);
        CHECK_INT(q[1].count, 1);
    }
    cwork_queue_infos_free(q, n);
    CHECK_INT(cwork_client_queues(cl, &q, &n, NULL), 0); /* met again: still once */
    cwork_queue_infos_free(q, n);
    const cwork_damaged_key *d = NULL;
    CHECK_INT(cwork_client_damage(&d), 1);
    if (d) CHECK_STR(d[0].what, "queue of a");
    pthread_t t;
    void *seen = NULL;
    pthread_create(&t, NULL, other_thread, NULL);
    pthread_join(t, &seen);
    CHECK_INT((uintptr_t)seen, 0);
    cwork_client_damage_clear();
    tl_ns_delete(c, ns);
    cwork_client_free(cl);
    cwork_redis_free(r);
    redisFree(c);
}

/* Changes that have nothing to work on once a key is damaged say which key. */
static void changes_name_the_damaged_key(void)
{
    char ns[64];
    tl_unique_ns("dmgchange", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    dmg_fixture(c, ns);
    dmg_apply(c, ns, &dmg_cases[5]); /* dead */
    tl_do(c, "HSET %s:cwork:result:idr f v", ns);
    char *before = tl_ns_dump(c, ns);
    cwork_redis *r = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cwork_client *cl = cwork_client_new(r, ns, NULL);
    char want[256];
    snprintf(want, sizeof want, "%s:dead is a string, expected a zset (the dead set)", ns);
    cwork_error err = {0};
    int64_t count = -1;
    CHECK_INT(cwork_client_retry_all_dead(cl, NULL, &count, &err), CWORK_ETYPE);
    CHECK_STR(err.message, want);
    CHECK_INT(cwork_client_delete_all_dead(cl, NULL, &count, &err), CWORK_ETYPE);
    CHECK_STR(err.message, want);
    /* this one named it already, in its own words */
    CHECK(cwork_client_delete_all(cl, CWORK_SET_DEAD, NULL, &count, &err) != 0);
    snprintf(want, sizeof want, "%s:dead holds a string", ns);
    CHECK(strstr(err.message, want) != NULL);
    char *out = NULL;
    size_t len = 0;
    snprintf(want, sizeof want, "%s:cwork:result:idr is a hash, expected a string (a job's result)",
             ns);
    CHECK_INT(cwork_client_result(cl, "idr", 0, &out, &len, &err), CWORK_ETYPE);
    CHECK_STR(err.message, want);
    char *after = tl_ns_dump(c, ns);
    CHECK_STR(after, before);
    free(before);
    free(after);
    cwork_client_damage_clear();
    tl_ns_delete(c, ns);
    cwork_client_free(cl);
    cwork_redis_free(r);
    redisFree(c);
}

/* The story of a job whose failure list is damaged: everything else, no failures, the
 * key named with what it is for; with the list whole, its entry is read. */
static void the_story_reads_past_a_damaged_failure_list(void)
{
    char ns[64];
    tl_unique_ns("dmgstory", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    dmg_fixture(c, ns);
    cwork_redis *r = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cwork_client *cl = cwork_client_new(r, ns, NULL);
    cwork_error err = {0};
    cwork_job_story st;
    cwork_client_damage_clear();
    CHECK_INT(cwork_client_job_story(cl, "ids", &st, &err), 0);
    CHECK_INT(st.n_failures, 1); /* whole: read */
    if (st.n_failures == 1) CHECK_STR(st.failures[0].err, "boom");
    cwork_job_story_free(&st);
    CHECK_INT(cwork_client_damage(NULL), 0);
    dmg_apply(c, ns, &dmg_cases[15]); /* cwork:failures:ids */
    char *before = tl_ns_dump(c, ns);
    CHECK_INT(cwork_client_job_story(cl, "ids", &st, &err), 0);
    CHECK_INT(st.place, CWORK_PLACE_SCHEDULED);
    CHECK_INT(st.at, 1800000000);
    CHECK_STR(cwork_job_id(st.job), "ids");
    CHECK_INT(st.n_failures, 0);
    CHECK(st.n_phases >= 1 && st.now > 0);
    cwork_job_story_free(&st);
    const cwork_damaged_key *d = NULL;
    CHECK_INT(cwork_client_damage(&d), 1);
    char key[256];
    snprintf(key, sizeof key, "%s:cwork:failures:ids", ns);
    if (d) {
        CHECK_STR(d[0].key, key);
        CHECK_STR(d[0].type, "hash");
        CHECK_STR(d[0].expected, "list");
        CHECK_STR(d[0].what, "the failures kept for a job's story");
    }
    char *after = tl_ns_dump(c, ns);
    CHECK_STR(after, before);
    free(before);
    free(after);
    cwork_client_damage_clear();
    tl_ns_delete(c, ns);
    cwork_client_free(cl);
    cwork_redis_free(r);
    redisFree(c);
}

/* A batch: read as cwork_batch_read reads it; its damaged :jobs hash named beside the
 * counts; its damaged batch key named in the error; nothing written either way. */
static void a_batch_reads_past_its_damaged_jobs_hash_and_names_its_damaged_key(void)
{
    char ns[64];
    tl_unique_ns("dmgbatch", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    dmg_fixture(c, ns);
    cwork_redis *r = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cwork_client *cl = cwork_client_new(r, ns, NULL);
    cwork_enqueuer *enq = cwork_enqueuer_new(r, ns, NULL);
    cwork_error err = {0};
    cwork_batch_info mine, theirs;
    cwork_client_damage_clear();
    CHECK_INT(cwork_client_batch(cl, DMG_BATCH, &mine, &err), 0);
    CHECK_INT(cwork_batch_read(enq, DMG_BATCH, &theirs, &err), 0);
    CHECK(memcmp(&mine, &theirs, sizeof mine) == 0);
    CHECK_INT(mine.succeeded, 1);
    CHECK_INT(mine.retrying, 1);
    CHECK(mine.sealed);
    CHECK_INT(mine.when, CWORK_BATCH_ON_COMPLETE);
    CHECK_STR(mine.callback, "b");
    CHECK_INT(mine.ttl, -1);
    CHECK_INT(cwork_client_damage(NULL), 0);
    CHECK_INT(cwork_client_batch(cl, "abcdef0123456789abcdef02", &mine, &err), CWORK_ENOTFOUND);
    CHECK_INT(cwork_client_batch(cl, "nope", &mine, &err), CWORK_EINVAL);

    dmg_apply(c, ns, &dmg_cases[16]); /* :jobs */
    char *before = tl_ns_dump(c, ns);
    CHECK_INT(cwork_client_batch(cl, DMG_BATCH, &mine, &err), 0);
    CHECK(memcmp(&mine, &theirs, sizeof mine) == 0);
    const cwork_damaged_key *d = NULL;
    CHECK_INT(cwork_client_damage(&d), 1);
    char key[256], want[400];
    snprintf(key, sizeof key, "%s:cwork:batch:" DMG_BATCH ":jobs", ns);
    if (d) {
        CHECK_STR(d[0].key, key);
        CHECK_STR(d[0].type, "string");
        CHECK_STR(d[0].expected, "hash");
        CHECK_STR(d[0].what, "a batch's jobs");
    }
    char *after = tl_ns_dump(c, ns);
    CHECK_STR(after, before);
    free(before);
    free(after);

    dmg_fixture(c, ns);
    tl_do(c, "DEL %s:cwork:batch:" DMG_BATCH, ns);
    tl_do(c, "RPUSH %s:cwork:batch:" DMG_BATCH " x", ns);
    before = tl_ns_dump(c, ns);
    cwork_client_damage_clear();
    snprintf(want, sizeof want, "%s:cwork:batch:" DMG_BATCH " is a list, expected a hash (a batch)",
             ns);
    CHECK_INT(cwork_client_batch(cl, DMG_BATCH, &mine, &err), CWORK_ETYPE);
    CHECK_STR(err.message, want);
    CHECK_INT(cwork_client_damage(NULL), 1);
    CHECK_INT(cwork_batch_seal(enq, DMG_BATCH, &err), CWORK_ETYPE);
    CHECK_STR(err.message, want);
    after = tl_ns_dump(c, ns);
    CHECK_STR(after, before);
    free(before);
    free(after);
    cwork_client_damage_clear();
    tl_ns_delete(c, ns);
    cwork_enqueuer_free(enq);
    cwork_client_free(cl);
    cwork_redis_free(r);
    redisFree(c);
}

static long long zcard(redisContext *c, const char *ns, const char *set)
{
    redisReply *r = tl_cmd(c, "ZCARD %s:%s", ns, set);
    long long n = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    freeReplyObject(r);
    return n;
}

/* One change of one job on a damaged key: CWORK_ETYPE, err saying want (after "<ns>:"). */
static void check_named(int rc, const cwork_error *err, const char *ns, const char *want)
{
    char full[400];
    snprintf(full, sizeof full, want, ns);
    CHECK_INT(rc, CWORK_ETYPE);
    if (!strstr(err->message, full))
        tl_fail(__FILE__, __LINE__, "error \"%s\" does not say \"%s\"", err->message, full);
}

/* Retry, delete, kill, run now and cancel of one job: a damaged set they read is named
 * with its type and what was expected, nothing is written; cancel still finds a job in
 * another set. */
static void single_job_changes_name_the_damaged_set(void)
{
    char ns[64];
    tl_unique_ns("dmgone", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    cwork_redis *r = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cwork_client *cl = cwork_client_new(r, ns, NULL);
    cwork_error err = {0};
    static const char dead[] = "%s:dead is a string, expected a zset (the dead set)",
                      retry[] = "%s:retry is a string, expected a zset (the retry set)",
                      sched[] = "%s:scheduled is a list, expected a zset (the scheduled set)",
                      known[] = "%s:known_jobs is a string, expected a set (the set of job names)";
    for (size_t i = 0; i < 4; i++) {
        static const size_t which[] = {5, 3, 4, 0}; /* dead, retry, scheduled, known_jobs */
        dmg_fixture(c, ns);
        dmg_apply(c, ns, &dmg_cases[which[i]]);
        char *before = tl_ns_dump(c, ns);
        cwork_client_damage_clear();
        if (i == 0) {
            check_named(cwork_client_retry_dead(cl, 1700000000, "idd", &err), &err, ns, dead);
            check_named(cwork_client_delete(cl, CWORK_SET_DEAD, 1700000000, "idd", &err), &err, ns,
                        dead);
            /* the job is in the queue: found, and the script refuses to write dead */
            check_named(cwork_client_cancel(cl, "ida", NULL, &err), &err, ns, dead);
        } else if (i == 1 || i == 2) {
            cwork_job_set set = i == 1 ? CWORK_SET_RETRY : CWORK_SET_SCHEDULED;
            const char *id = i == 1 ? "idr" : "ids", *want = i == 1 ? retry : sched;
            check_named(cwork_client_delete(cl, set, 1800000000, id, &err), &err, ns, want);
            check_named(cwork_client_kill(cl, set, 1800000000, id, &err), &err, ns, want);
            check_named(cwork_client_run_now(cl, set, 1800000000, id, &err), &err, ns, want);
            /* not found anywhere else: it may be in the damaged set */
            check_named(cwork_client_cancel(cl, id, NULL, &err), &err, ns, want);
            CHECK(strncmp(err.message, "no job with id ", 15) == 0);
        } else {
            /* every name would be unknown: the job would be rewritten where it is */
            check_named(cwork_client_retry_dead(cl, 1700000000, "idd", &err), &err, ns, known);
            check_named(cwork_client_run_now(cl, CWORK_SET_RETRY, 1800000000, "idr", &err), &err,
                        ns, known);
            int64_t count = -1;
            check_named(cwork_client_retry_all_dead(cl, NULL, &count, &err), &err, ns, known);
            CHECK_INT(count, 0);
        }
        const cwork_damaged_key *d = NULL;
        CHECK_INT(cwork_client_damage(&d), 1); /* named in the errors, listed once */
        char *after = tl_ns_dump(c, ns);
        CHECK_STR(after, before);
        free(before);
        free(after);
    }
    /* the retry set damaged, a scheduled job: found past it and cancelled */
    dmg_fixture(c, ns);
    dmg_apply(c, ns, &dmg_cases[3]);
    cwork_client_damage_clear();
    cwork_cancel_result res;
    CHECK_INT(cwork_client_cancel(cl, "ids", &res, &err), 0);
    CHECK_INT(res.place, CWORK_PLACE_SCHEDULED);
    CHECK_INT(cwork_client_damage(NULL), 1);
    CHECK_INT(zcard(c, ns, "scheduled"), 0);
    CHECK_INT(zcard(c, ns, "dead"), 2); /* idd and now ids */
    cwork_client_damage_clear();
    tl_ns_delete(c, ns);
    cwork_client_free(cl);
    cwork_redis_free(r);
    redisFree(c);
}

int main(void)
{
    RUN(each_damaged_key_is_named_once_and_the_rest_read);
    RUN(the_list_is_per_thread_and_says_what_a_key_is_for);
    RUN(changes_name_the_damaged_key);
    RUN(the_story_reads_past_a_damaged_failure_list);
    RUN(a_batch_reads_past_its_damaged_jobs_hash_and_names_its_damaged_key);
    RUN(single_job_changes_name_the_damaged_set);
    return tl_finish();
}
