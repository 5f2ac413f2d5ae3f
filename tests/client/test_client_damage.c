/* One damaged key does not take down the admin reads of its namespace: for each key of
 * a whole namespace damaged in turn (damage_testutil.h), every read view answers 0 with
 * what it could read, cwork_client_damage names that key once with its type and the
 * type expected, and the namespace is unchanged afterwards. The --all changes and
 * cwork_client_result name the damaged key in their error (CWORK_ETYPE). */
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
    for (const char *const *name = (const char *const[]){"a", "b", NULL}; *name; name++) {
        cwork_listed_job *jobs = NULL;
        CHECK_INT(cwork_client_queue_jobs(cl, *name, 1, 20, &jobs, &n, NULL, &err), 0);
        cwork_listed_jobs_free(jobs, n);
    }
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

int main(void)
{
    RUN(each_damaged_key_is_named_once_and_the_rest_read);
    RUN(the_list_is_per_thread_and_says_what_a_key_is_for);
    RUN(changes_name_the_damaged_key);
    return tl_finish();
}
