/* The admin client's dashboard figures, browsing and bulk changes (what the web UI's
 * dashboard and lists use), against a real Redis: every case writes the namespace by
 * hand in Go's bytes, calls the client and checks the whole namespace afterwards —
 * readers change nothing, changers change exactly what they say. */
#include "client_testutil.h"

#include <time.h>

/* A UTC date days before today, as the daily stats keys name it. */
static void date_ago(int days, char out[11])
{
    time_t t = time(NULL) - (time_t)days * 86400;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 11, "%Y-%m-%d", &tm);
}

/* ---------------------------------------------------------------- daily stats */

static void daily_stats_read_30_days_oldest_first_and_damage_reads_as_zero(void)
{
    cwork_client *cl = fresh("ds");
    char today[11], yesterday[11], three[11], ten[11];
    for (int attempt = 0; attempt < 2; attempt++) { /* a midnight between may move "today" */
        tl_ns_delete(rc_, ns_);
        date_ago(0, today);
        date_ago(1, yesterday);
        date_ago(3, three);
        date_ago(10, ten);
        cmd("HSET %s:cwork:stat:%s processed 10 failed 3", ns_, today);
        cmd("HSET %s:cwork:stat:%s processed 5", ns_, yesterday);
        cmd("SET %s:cwork:stat:%s 7", ns_, three);                     /* not a hash */
        cmd("HSET %s:cwork:stat:%s processed x1 failed -2", ns_, ten); /* not counts */
        cmd("HSET %s:cwork:stat:2001-01-01 processed 99", ns_);        /* long ago */
        char *before = dump_now();
        cwork_day_stats *d = NULL;
        size_t n = 0;
        tl_capture_logs();
        CHECK_INT(cwork_client_daily_stats(cl, 30, &d, &n, NULL), 0);
        cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
        char check[11];
        date_ago(0, check);
        if (strcmp(check, today) != 0 && attempt == 0) {
            cwork_free(d);
            free(before);
            continue;
        }
        CHECK_INT(n, 30);
        CHECK(tl_find_log("client.daily_stats.damaged") != NULL);
        if (n == 30) {
            CHECK_STR(d[29].date, today);
            CHECK_INT(d[29].processed, 10);
            CHECK_INT(d[29].failed, 3);
            CHECK_STR(d[28].date, yesterday);
            CHECK_INT(d[28].processed, 5);
            CHECK_INT(d[28].failed, 0);
            CHECK_STR(d[26].date, three);
            CHECK_INT(d[26].processed, 0);
            CHECK_STR(d[19].date, ten);
            CHECK_INT(d[19].processed + d[19].failed, 0);
            int64_t sum = 0;
            for (size_t i = 0; i < n; i++)
                sum += d[i].processed;
            CHECK_INT(sum, 15);
            for (size_t i = 1; i < n; i++)
                CHECK(strcmp(d[i - 1].date, d[i].date) < 0);
        }
        cwork_free(d);
        char *after = dump_now();
        CHECK_STR(after, before); /* a reader writes nothing */
        free(before);
        free(after);
        break;
    }
    cwork_day_stats *d = NULL;
    size_t n = 7;
    cwork_error err = {0};
    CHECK_INT(cwork_client_daily_stats(cl, 0, &d, &n, &err), CWORK_EINVAL);
    CHECK_INT(cwork_client_daily_stats(cl, 367, &d, &n, &err), CWORK_EINVAL);
    CHECK(d == NULL && n == 0);
    CHECK_INT(cwork_client_daily_stats(cl, 1, &d, &n, NULL), 0);
    CHECK_INT(n, 1);
    cwork_free(d);
    done(cl);
}

/* ---------------------------------------------------------------- per job name */

static void job_types_count_per_name_with_the_latest_error(void)
{
    cwork_client *cl = fresh("jt");
    cmd("SADD %s:known_jobs a b", ns_);
    cmd("LPUSH %s:jobs:a {\"name\":\"a\",\"id\":\"q1\",\"t\":1} {\"name\":\"a\",\"id\":\"q2\",\"t\":2}",
        ns_);
    cmd("SET %s:jobs:b:paused 1", ns_);
    cmd("ZADD %s:retry 2000000000 {\"name\":\"a\",\"id\":\"r1\",\"t\":1,\"fails\":1,\"err\":\"r-old\","
        "\"failed_at\":100}",
        ns_);
    cmd("ZADD %s:retry 2000000001 %s", ns_,
        "{\"name\":\"ghost\",\"id\":\"r2\",\"t\":1,\"fails\":1,\"err\":\"no handler\","
        "\"failed_at\":150}");
    cmd("ZADD %s:dead 300 {\"name\":\"a\",\"id\":\"d1\",\"t\":1,\"fails\":4,\"err\":\"newest\","
        "\"failed_at\":300}",
        ns_);
    cmd("ZADD %s:dead 200 {\"name\":\"a\",\"id\":\"d2\",\"t\":1,\"fails\":4,\"err\":\"older\","
        "\"failed_at\":200}",
        ns_);
    cmd("ZADD %s:dead 250 not-json", ns_);
    cmd("SADD %s:worker_pools p1", ns_);
    cmd("HSET %s:worker_pools:p1 heartbeat_at %lld worker_ids w1,w2 concurrency 2", ns_, now_());
    cmd("HSET %s:worker:w1 job_name b job_id x started_at 1 args {}", ns_);
    char *before = dump_now();
    cwork_job_types t;
    CHECK_INT(cwork_client_job_types(cl, 0, &t, NULL), 0);
    CHECK_INT(t.n, 3);
    CHECK_INT(t.retry_total, 2);
    CHECK_INT(t.dead_total, 3);
    CHECK_INT(t.retry_read, 2);
    CHECK_INT(t.dead_read, 3);
    if (t.n == 3) {
        const cwork_job_type_stats *a = &t.types[0], *b = &t.types[1], *g = &t.types[2];
        CHECK_STR(a->job_name, "a");
        CHECK(a->known && !a->paused);
        CHECK_INT(a->waiting, 2);
        CHECK_INT(a->running, 0);
        CHECK_INT(a->retry, 1);
        CHECK_INT(a->dead, 2); /* the member that cannot be decoded counts for no name */
        CHECK_STR(a->last_error, "newest");
        CHECK_INT(a->last_failed_at, 300);
        CHECK_STR(b->job_name, "b");
        CHECK(b->known && b->paused);
        CHECK_INT(b->running, 1);
        CHECK(b->last_error == NULL);
        CHECK_STR(g->job_name, "ghost");
        CHECK(!g->known);
        CHECK_INT(g->retry, 1);
        CHECK_STR(g->last_error, "no handler");
    }
    cwork_job_types_free(&t);
    /* A sample of 1 reads the newest member of each set only. */
    CHECK_INT(cwork_client_job_types(cl, 1, &t, NULL), 0);
    CHECK_INT(t.dead_read, 1);
    CHECK_INT(t.dead_total, 3);
    CHECK(t.n == 3 && t.types[0].dead == 1 && !strcmp(t.types[0].last_error, "newest"));
    CHECK(t.n == 3 && t.types[2].retry == 1 && t.types[0].retry == 0); /* ghost: the newer */
    cwork_job_types_free(&t);
    cwork_error err = {0};
    CHECK_INT(cwork_client_job_types(cl, 100001, &t, &err), CWORK_EINVAL);
    CHECK(t.n == 0 && t.types == NULL);
    /* A malformed worker hash leaves running at 0, the rest stays. */
    cmd("HSET %s:worker:w2 job_name a started_at notanumber", ns_);
    CHECK_INT(cwork_client_job_types(cl, 0, &t, NULL), 0);
    CHECK(t.n == 3 && t.types[0].waiting == 2);
    cwork_job_types_free(&t);
    cmd("DEL %s:worker:w2", ns_);
    char *after = dump_now();
    CHECK_STR(after, before);
    free(before);
    free(after);
    cwork_job_types_free(NULL);
    done(cl);
}

/* ---------------------------------------------------------------- pages */

static void list_pages_with_a_size_and_newest_first(void)
{
    cwork_client *cl = fresh("lp");
    for (int i = 1; i <= 5; i++)
        cmd("ZADD %s:dead %d {\"name\":\"%s\",\"id\":\"d%d\",\"t\":1}", ns_, 100 + i,
            i % 2 ? "odd" : "even", i);
    char *before = dump_now();
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    int64_t total = 0;
    cwork_list_query q = {1, 2, NULL, true};
    CHECK_INT(cwork_client_list_page(cl, CWORK_SET_DEAD, &q, &jobs, &n, &total, NULL), 0);
    CHECK_INT(total, 5);
    CHECK(n == 2 && jobs[0].at == 105 && !strcmp(cwork_job_id(jobs[0].job), "d5") &&
          jobs[1].at == 104);
    cwork_listed_jobs_free(jobs, n);
    q.page = 3;
    CHECK_INT(cwork_client_list_page(cl, CWORK_SET_DEAD, &q, &jobs, &n, &total, NULL), 0);
    CHECK(n == 1 && jobs[0].at == 101);
    cwork_listed_jobs_free(jobs, n);
    q.page = 4; /* past the end: empty, the total still told */
    CHECK_INT(cwork_client_list_page(cl, CWORK_SET_DEAD, &q, &jobs, &n, &total, NULL), 0);
    CHECK(n == 0 && total == 5);
    cwork_listed_jobs_free(jobs, n);
    /* one name, newest first: d5, d3 | d1 */
    q = (cwork_list_query){1, 2, "odd", true};
    CHECK_INT(cwork_client_list_page(cl, CWORK_SET_DEAD, &q, &jobs, &n, &total, NULL), 0);
    CHECK_INT(total, 3);
    CHECK(n == 2 && jobs[0].at == 105 && jobs[1].at == 103);
    cwork_listed_jobs_free(jobs, n);
    q.page = 2;
    CHECK_INT(cwork_client_list_page(cl, CWORK_SET_DEAD, &q, &jobs, &n, &total, NULL), 0);
    CHECK(n == 1 && jobs[0].at == 101);
    cwork_listed_jobs_free(jobs, n);
    /* oldest first as Go, and the old call is the same thing */
    q = (cwork_list_query){1, 3, NULL, false};
    CHECK_INT(cwork_client_list_page(cl, CWORK_SET_DEAD, &q, &jobs, &n, &total, NULL), 0);
    CHECK(n == 3 && jobs[0].at == 101 && jobs[2].at == 103);
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(cwork_client_list_page(cl, CWORK_SET_DEAD, NULL, &jobs, &n, &total, NULL), 0);
    CHECK(n == 5 && jobs[0].at == 101);
    cwork_listed_jobs_free(jobs, n);
    cwork_error err = {0};
    q.page_size = 1001;
    CHECK_INT(cwork_client_list_page(cl, CWORK_SET_DEAD, &q, &jobs, &n, &total, &err),
              CWORK_EINVAL);
    char *body = NULL;
    size_t len = 0;
    q = (cwork_list_query){2, 4, NULL, true};
    CHECK_INT(cwork_client_list_page_json(cl, CWORK_SET_DEAD, &q, &body, &len, NULL), 0);
    CHECK(body && strncmp(body, "{\n\t\"count\": 5,\n\t\"jobs\": [\n\t\t{\n\t\t\t\"died_at\": 101,",
                          45) == 0);
    cwork_free(body);
    char *after = dump_now();
    CHECK_STR(after, before);
    free(before);
    free(after);
    done(cl);
}

/* CWORK_LIST_SKIP_PERIODIC: the instances go from the page and from the total, in
 * either order and with a name; an unknown filter bit is refused. */
static void list_filtered_skips_periodic_instances(void)
{
    cwork_client *cl = fresh("lf");
    cmd("ZADD %s:scheduled 101 {\"name\":\"rep\",\"id\":\"periodic:rep:@daily:101\",\"t\":1}", ns_);
    cmd("ZADD %s:scheduled 102 {\"name\":\"rep\",\"id\":\"a1\",\"t\":1}", ns_);
    cmd("ZADD %s:scheduled 103 {\"name\":\"rep\",\"id\":\"periodic:rep:@daily:103\",\"t\":1}", ns_);
    cmd("ZADD %s:scheduled 104 {\"name\":\"other\",\"id\":\"a2\",\"t\":1}", ns_);
    char *before = dump_now();
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    int64_t total = 0;
    cwork_list_query q = {1, 20, NULL, false};
    CHECK_INT(cwork_client_list_filtered(cl, CWORK_SET_SCHEDULED, &q, CWORK_LIST_SKIP_PERIODIC,
                                         &jobs, &n, &total, NULL),
              0);
    CHECK(total == 2 && n == 2 && !strcmp(cwork_job_id(jobs[0].job), "a1") && jobs[1].at == 104);
    cwork_listed_jobs_free(jobs, n);
    q = (cwork_list_query){1, 1, "rep", true};
    CHECK_INT(cwork_client_list_filtered(cl, CWORK_SET_SCHEDULED, &q, CWORK_LIST_SKIP_PERIODIC,
                                         &jobs, &n, &total, NULL),
              0);
    CHECK(total == 1 && n == 1 && jobs[0].at == 102);
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(cwork_client_list_filtered(cl, CWORK_SET_SCHEDULED, &q, 0, &jobs, &n, &total, NULL),
              0);
    CHECK(total == 3 && n == 1 && jobs[0].at == 103);
    cwork_listed_jobs_free(jobs, n);
    char *body = NULL;
    size_t len = 0;
    q = (cwork_list_query){1, 20, NULL, false};
    CHECK_INT(cwork_client_list_filtered_json(cl, CWORK_SET_SCHEDULED, &q, CWORK_LIST_SKIP_PERIODIC,
                                              &body, &len, NULL),
              0);
    CHECK(body && strstr(body, "\"count\": 2") && !strstr(body, "periodic:"));
    cwork_free(body);
    cwork_error err = {0};
    CHECK_INT(cwork_client_list_filtered(cl, CWORK_SET_SCHEDULED, &q, 2u, &jobs, &n, &total, &err),
              CWORK_EINVAL);
    CHECK(strstr(err.message, "unknown filter") != NULL);
    char *after = dump_now();
    CHECK_STR(after, before);
    free(before);
    free(after);
    done(cl);
}

static void queue_jobs_next_to_run_first(void)
{
    cwork_client *cl = fresh("qj");
    /* LPUSH puts each at the left; workers take from the right: q1 runs first. */
    cmd("LPUSH %s:jobs:a {\"name\":\"a\",\"id\":\"q1\",\"t\":1}", ns_);
    cmd("LPUSH %s:jobs:a {\"name\":\"a\",\"id\":\"q2\",\"t\":2}", ns_);
    cmd("LPUSH %s:jobs:a not-json", ns_);
    cmd("LPUSH %s:jobs:a {\"name\":\"a\",\"id\":\"q4\",\"t\":4}", ns_);
    cmd("SET %s:jobs:bad x", ns_);
    char *before = dump_now();
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    int64_t total = 0;
    CHECK_INT(cwork_client_queue_jobs(cl, "a", 1, 2, &jobs, &n, &total, NULL), 0);
    CHECK_INT(total, 4);
    CHECK(n == 2 && !strcmp(cwork_job_id(jobs[0].job), "q1") &&
          !strcmp(cwork_job_id(jobs[1].job), "q2") && jobs[0].at == 0);
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(cwork_client_queue_jobs(cl, "a", 2, 2, &jobs, &n, &total, NULL), 0);
    CHECK(n == 1 && !strcmp(cwork_job_id(jobs[0].job), "q4")); /* not-json skipped */
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(cwork_client_queue_jobs(cl, "a", 3, 2, &jobs, &n, &total, NULL), 0);
    CHECK(n == 0 && total == 4);
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(cwork_client_queue_jobs(cl, "none", 0, 0, &jobs, &n, &total, NULL), 0);
    CHECK(n == 0 && total == 0);
    cwork_listed_jobs_free(jobs, n);
    cwork_error err = {0};
    /* a key of another type lists nothing and is named */
    cwork_client_damage_clear();
    CHECK_INT(cwork_client_queue_jobs(cl, "bad", 1, 20, &jobs, &n, &total, &err), 0);
    CHECK(n == 0 && total == 0);
    cwork_listed_jobs_free(jobs, n);
    CHECK_INT(cwork_client_damage(NULL), 1);
    cwork_client_damage_clear();
    CHECK_INT(cwork_client_queue_jobs(cl, "a", 1, 1001, &jobs, &n, &total, &err), CWORK_EINVAL);
    CHECK_INT(cwork_client_queue_jobs(cl, NULL, 1, 20, &jobs, &n, &total, &err), CWORK_EINVAL);
    char *after = dump_now();
    CHECK_STR(after, before);
    free(before);
    free(after);
    done(cl);
}

/* ---------------------------------------------------------------- delete all */

static void delete_all_of_a_name_then_everything(void)
{
    cwork_client *cl = fresh("da");
    cmd("ZADD %s:retry 100 {\"name\":\"a\",\"id\":\"a1\",\"t\":1}", ns_);
    cmd("ZADD %s:retry 101 {\"name\":\"b\",\"id\":\"b1\",\"t\":1}", ns_);
    cmd("ZADD %s:retry 102 {\"name\":\"a\",\"id\":\"a2\",\"t\":1}", ns_);
    cmd("ZADD %s:retry 103 undecodable", ns_);
    cmd("ZADD %s:dead 100 {\"name\":\"a\",\"id\":\"d1\",\"t\":1}", ns_);
    int64_t count = -1;
    CHECK_INT(cwork_client_delete_all(cl, CWORK_SET_RETRY, "a", &count, NULL), 0);
    CHECK_INT(count, 2);
    CHECK_DUMP("NS:dead zset {\"name\":\"a\",\"id\":\"d1\",\"t\":1}=100\n"
               "NS:retry zset {\"name\":\"b\",\"id\":\"b1\",\"t\":1}=101 | undecodable=103\n");
    CHECK_INT(cwork_client_delete_all(cl, CWORK_SET_RETRY, NULL, &count, NULL), 0);
    CHECK_INT(count, 2); /* the undecodable member too: everything was asked for */
    CHECK_DUMP("NS:dead zset {\"name\":\"a\",\"id\":\"d1\",\"t\":1}=100\n");
    CHECK_INT(cwork_client_delete_all(cl, CWORK_SET_RETRY, NULL, &count, NULL), 0);
    CHECK_INT(count, 0);
    done(cl);
}

static void delete_all_scheduled_drops_unique_guards_of_what_went(void)
{
    cwork_client *cl = fresh("das");
    cmd("ZADD %s:scheduled 100 %s", ns_,
        "{\"name\":\"a\",\"id\":\"u1\",\"t\":1,\"args\":{\"k\":1},\"unique\":true}");
    cmd("ZADD %s:scheduled 101 %s", ns_,
        "{\"name\":\"b\",\"id\":\"u2\",\"t\":1,\"args\":{\"k\":2},\"unique\":true}");
    cmd("SET %s:unique:a:{\"k\":1}\n 1", ns_);
    cmd("SET %s:unique:b:{\"k\":2}\n 1", ns_);
    int64_t count = 0;
    CHECK_INT(cwork_client_delete_all(cl, CWORK_SET_SCHEDULED, "a", &count, NULL), 0);
    CHECK_INT(count, 1);
    CHECK_DUMP("NS:scheduled zset "
               "{\"name\":\"b\",\"id\":\"u2\",\"t\":1,\"args\":{\"k\":2},\"unique\":true}=101\n"
               "NS:unique:b:{\"k\":2}\\x0a string 1\n");
    CHECK_INT(cwork_client_delete_all(cl, CWORK_SET_SCHEDULED, NULL, &count, NULL), 0);
    CHECK_INT(count, 1);
    CHECK_DUMP("");
    done(cl);
}

static void delete_all_in_batches_and_a_damaged_key_stays(void)
{
    cwork_client *cl = fresh("dab");
    /* 2500 members, every other one of name a: three batches with steps over b. */
    char member[128];
    for (int j = 0; j < 2500; j++) {
        snprintf(member, sizeof member, "{\"name\":\"%s\",\"id\":\"j%d\",\"t\":1}",
                 j % 2 ? "b" : "a", j);
        redisAppendCommand(rc_, "ZADD %s:dead %d %s", ns_, j, member);
    }
    for (int j = 0; j < 2500; j++) {
        redisReply *r = NULL;
        CHECK(redisGetReply(rc_, (void **)&r) == REDIS_OK && r->type == REDIS_REPLY_INTEGER);
        freeReplyObject(r);
    }
    int64_t count = 0;
    CHECK_INT(cwork_client_delete_all(cl, CWORK_SET_DEAD, "a", &count, NULL), 0);
    CHECK_INT(count, 1250);
    redisReply *r = tl_cmd(rc_, "ZCARD %s:dead", ns_);
    CHECK_INT(r->integer, 1250);
    freeReplyObject(r);
    r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    int only_b = 1;
    for (size_t i = 0; i < r->elements; i++)
        only_b &= strstr(r->element[i]->str, "\"name\":\"b\"") != NULL;
    CHECK(only_b);
    freeReplyObject(r);
    CHECK_INT(cwork_client_delete_all(cl, CWORK_SET_DEAD, NULL, &count, NULL), 0);
    CHECK_INT(count, 1250);
    CHECK_DUMP("");
    cmd("SET %s:retry not-a-zset", ns_);
    cwork_error err = {0};
    CHECK_INT(cwork_client_delete_all(cl, CWORK_SET_RETRY, NULL, &count, &err), CWORK_ETYPE);
    CHECK(strstr(err.message, "holds a string") != NULL);
    CHECK_INT(count, 0);
    CHECK_DUMP("NS:retry string not-a-zset\n");
    CHECK_INT(cwork_client_delete_all(cl, (cwork_job_set)9, NULL, &count, &err), CWORK_EINVAL);
    done(cl);
}

/* ---------------------------------------------------------------- selected jobs */

static void apply_changes_exactly_the_selected_jobs(void)
{
    cwork_client *cl = fresh("ap");
    cmd("SADD %s:known_jobs a", ns_);
    for (int i = 1; i <= 4; i++)
        cmd("ZADD %s:dead %d {\"name\":\"a\",\"id\":\"d%d\",\"t\":1,\"fails\":4,\"err\":\"x\","
            "\"failed_at\":%d}",
            ns_, 100 + i, i, 100 + i);
    cwork_job_ref sel[] = {{102, "d2"}, {104, "d4"}, {104, "gone"}};
    size_t done_n = 9, unchanged = 9;
    cwork_error err = {0};
    long long before = now_();
    CHECK_INT(cwork_client_apply(cl, CWORK_SET_DEAD, CWORK_ACTION_RETRY, sel, 3, &done_n,
                                 &unchanged, &err),
              CWORK_ENOTFOUND);
    long long after = now_();
    CHECK_INT(done_n, 2);
    CHECK_INT(unchanged, 1);
    CHECK_STR(err.message, "nothing retried");
    /* d2 and d4 went back (d4 first: the later LPUSH is at the left), d1 and d3 stay */
    redisReply *q = tl_cmd(rc_, "LRANGE %s:jobs:a 0 -1", ns_);
    CHECK_INT(q->elements, 2);
    if (q->elements == 2) {
        long long t = 0;
        CHECK(strstr(q->element[0]->str, "\"id\":\"d4\"") &&
              strstr(q->element[1]->str, "\"id\":\"d2\""));
        const char *tp = strstr(q->element[0]->str, "\"t\":");
        CHECK(tp && sscanf(tp + 4, "%lld", &t) == 1 && t >= before && t <= after);
        snprintf(
            want_, sizeof want_,
            "NS:dead zset "
            "{\"name\":\"a\",\"id\":\"d1\",\"t\":1,\"fails\":4,\"err\":\"x\",\"failed_at\":101}=101"
            " | {\"name\":\"a\",\"id\":\"d3\",\"t\":1,\"fails\":4,\"err\":\"x\",\"failed_at\":103}"
            "=103\nNS:jobs:a list %s | %s\nNS:known_jobs set a\n",
            q->element[0]->str, q->element[1]->str);
        CHECK_DUMP(want_);
    }
    freeReplyObject(q);
    cwork_job_ref del[] = {{103, "d3"}};
    CHECK_INT(cwork_client_apply(cl, CWORK_SET_DEAD, CWORK_ACTION_DELETE, del, 1, &done_n,
                                 &unchanged, NULL),
              0);
    CHECK(done_n == 1 && unchanged == 0);
    redisReply *d = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    CHECK(d->elements == 1 && strstr(d->element[0]->str, "\"id\":\"d1\""));
    freeReplyObject(d);
    /* actions that do not apply to the set change nothing */
    char *snap = dump_now();
    CHECK_INT(cwork_client_apply(cl, CWORK_SET_DEAD, CWORK_ACTION_RUN_NOW, del, 1, &done_n,
                                 &unchanged, &err),
              CWORK_EINVAL);
    CHECK_INT(cwork_client_apply(cl, CWORK_SET_RETRY, CWORK_ACTION_RETRY, del, 1, &done_n,
                                 &unchanged, &err),
              CWORK_EINVAL);
    CHECK_INT(cwork_client_apply(cl, CWORK_SET_DEAD, (cwork_job_action)7, del, 1, &done_n,
                                 &unchanged, &err),
              CWORK_EINVAL);
    CHECK_INT(cwork_client_apply(cl, CWORK_SET_DEAD, CWORK_ACTION_DELETE, NULL, 0, &done_n,
                                 &unchanged, &err),
              0);
    char *snap2 = dump_now();
    CHECK_STR(snap2, snap);
    free(snap);
    free(snap2);
    done(cl);
}

static void apply_run_now_to_scheduled_jobs(void)
{
    cwork_client *cl = fresh("apr");
    cmd("SADD %s:known_jobs a", ns_);
    cmd("ZADD %s:scheduled 2000000000 {\"name\":\"a\",\"id\":\"s1\",\"t\":1}", ns_);
    cmd("ZADD %s:scheduled 2000000001 {\"name\":\"a\",\"id\":\"s2\",\"t\":1}", ns_);
    cmd("ZADD %s:scheduled 2000000002 {\"name\":\"ghost\",\"id\":\"s3\",\"t\":1}", ns_);
    cwork_job_ref sel[] = {{2000000001, "s2"}, {2000000002, "s3"}};
    size_t done_n = 0, unchanged = 0;
    cwork_error err = {0};
    CHECK_INT(cwork_client_apply(cl, CWORK_SET_SCHEDULED, CWORK_ACTION_RUN_NOW, sel, 2, &done_n,
                                 &unchanged, &err),
              CWORK_ENOTFOUND);
    CHECK(done_n == 1 && unchanged == 1);
    CHECK(strstr(err.message, "not in known_jobs") != NULL);
    char *moved = list_member("jobs:a");
    CHECK(strstr(moved, "\"id\":\"s2\"") != NULL);
    snprintf(want_, sizeof want_,
             "NS:jobs:a list %s\nNS:known_jobs set a\nNS:scheduled zset "
             "{\"name\":\"a\",\"id\":\"s1\",\"t\":1}=2000000000 | "
             "{\"name\":\"ghost\",\"id\":\"s3\",\"t\":1}=2000000002\n",
             moved);
    CHECK_DUMP(want_);
    free(moved);
    done(cl);
}

/* ---------------------------------------------------------------- periodic schedules */

static void periodic_schedules_published_and_seen_as_instances(void)
{
    cwork_client *cl = fresh("ps");
    long long now = now_();
    /* published by a cwork pool, fresh: next fire time still ahead */
    cmd("HSET %s:cwork:periodic %s {\"next_at\":%lld,\"seen_at\":%lld}", ns_,
        "[\"calc\",\"0 0 * * *\"]", now + 3000, now - 30);
    /* fresh, but its next fire time passed: computed here from the spec */
    cmd("HSET %s:cwork:periodic %s {\"next_at\":%lld,\"seen_at\":%lld}", ns_,
        "[\"tick\",\"@every 1h\"]", now - 5, now - 60);
    /* stale: no pool said so for more than 10 minutes */
    cmd("HSET %s:cwork:periodic [\"old\",\"@daily\"] {\"next_at\":%lld,\"seen_at\":%lld}", ns_,
        now + 100, now - 700);
    cmd("HSET %s:cwork:periodic garbage {}", ns_);
    /* a Go pool's instance, and an instance of the published calc sooner than its next */
    cmd("ZADD %s:scheduled %lld %s", ns_, now + 40,
        "{\"name\":\"go:job\",\"id\":\"periodic:go:job:*/5 * * * *:1\",\"t\":1,\"args\":null}");
    cmd("ZADD %s:scheduled %lld %s", ns_, now + 200,
        "{\"name\":\"calc\",\"id\":\"periodic:calc:0 0 * * *:2\",\"t\":2}");
    cmd("ZADD %s:scheduled %lld {\"name\":\"plain\",\"id\":\"x\",\"t\":2}", ns_, now + 10);
    char *before = dump_now();
    cwork_periodic_schedule *s = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_periodic_schedules(cl, &s, &n, NULL), 0);
    CHECK_INT(n, 3);
    if (n == 3) {
        CHECK_STR(s[0].job_name, "go:job"); /* a name with ':' splits at the name */
        CHECK_STR(s[0].spec, "*/5 * * * *");
        CHECK_INT(s[0].next_at, now + 40);
        CHECK_INT(s[0].seen_at, 0);
        CHECK_STR(s[1].job_name, "calc");
        CHECK_INT(s[1].next_at, now + 200);
        CHECK_INT(s[1].seen_at, now - 30);
        CHECK_STR(s[2].job_name, "tick");
        CHECK(s[2].next_at > now && s[2].next_at <= now + 3600 + 1);
    }
    cwork_periodic_schedules_free(s, n);
    char *after = dump_now();
    CHECK_STR(after, before);
    free(before);
    free(after);
    /* a published key of another type is passed by */
    tl_ns_delete(rc_, ns_);
    cmd("SET %s:cwork:periodic x", ns_);
    CHECK_INT(cwork_client_periodic_schedules(cl, &s, &n, NULL), 0);
    CHECK_INT(n, 0);
    cwork_periodic_schedules_free(s, n);
    done(cl);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    RUN(daily_stats_read_30_days_oldest_first_and_damage_reads_as_zero);
    RUN(job_types_count_per_name_with_the_latest_error);
    RUN(list_pages_with_a_size_and_newest_first);
    RUN(list_filtered_skips_periodic_instances);
    RUN(queue_jobs_next_to_run_first);
    RUN(delete_all_of_a_name_then_everything);
    RUN(delete_all_scheduled_drops_unique_guards_of_what_went);
    RUN(delete_all_in_batches_and_a_damaged_key_stays);
    RUN(apply_changes_exactly_the_selected_jobs);
    RUN(apply_run_now_to_scheduled_jobs);
    RUN(periodic_schedules_published_and_seen_as_instances);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
