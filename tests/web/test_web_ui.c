/* The web UI's own routes over real HTTP (tests/web/test_web.c has workwebui's): the
 * dashboard, a queue's jobs, the periodic schedules, bulk apply, delete/run/retry all,
 * clearing a queue, deleting single waiting jobs; the lists' page size and order; several
 * namespaces, a base path, read-only. Bodies are checked exactly, bad input gets 400 with a JSON
 * error, and after every change the whole namespace is checked. */
#include "client_testutil.h"
#include "web_testutil.h"

#include "util.h"

#include <signal.h>
#include <sys/wait.h>

static cwork_web *web_;
static int port_;

static cwork_web *start(const cwork_web_options *extra)
{
    cwork_web_options o;
    if (extra)
        o = *extra;
    else
        cwork_web_options_init(&o);
    o.listen = "127.0.0.1:0";
    cwork_error err = {0};
    cwork_web *w = cwork_web_start(redis_, ns_, &o, &err);
    if (!w) {
        fprintf(stderr, "cwork_web_start: %s\n", err.message);
        exit(1);
    }
    return w;
}

/* A fresh namespace and the shared server on it. */
static void serve(const char *tag)
{
    cwork_web_free(web_);
    tl_unique_ns(tag, ns_, sizeof ns_);
    web_ = start(NULL);
    port_ = cwork_web_port(web_);
}

static void req_at(int line, const char *method, const char *path, const char *body, int status,
                   const char *want)
{
    http_res r;
    if (wt_http(port_, method, path, NULL, body, &r) != 0) {
        tl_fail(__FILE__, line, "%s %s: no answer", method, path);
        return;
    }
    if (r.status != status)
        tl_fail(__FILE__, line, "%s %s: status %d, want %d (%s)", method, path, r.status, status,
                r.body);
    if (want && (r.len != strlen(want) || memcmp(r.body, want, r.len) != 0))
        tl_fail(__FILE__, line, "%s %s: body\n   got: %s\n  want: %s", method, path, r.body, want);
    if (status >= 400 && !wt_is_json_error(&r))
        tl_fail(__FILE__, line, "%s %s: not a JSON error: %s", method, path, r.body);
}
#define REQ(method, path, body, status, want) req_at(__LINE__, method, path, body, status, want)

/* An integer reply (EXISTS, ZCARD, …) of a command on key <ns><suffix>. */
static long long int_of(const char *command, const char *ns, const char *suffix)
{
    redisReply *r = tl_cmd(rc_, "%s %s%s", command, ns, suffix);
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    freeReplyObject(r);
    return v;
}

static void today(char out[11])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 11, "%Y-%m-%d", &tm);
}

/* ---------------------------------------------------------------- reading */

static void dashboard_body(void)
{
    serve("wdash");
    char date[11], date2[11];
    today(date);
    cmd("SADD %s:known_jobs a", ns_);
    cmd("HSET %s:cwork:stat:%s processed 12 failed 2", ns_, date);
    cmd("ZADD %s:dead 100 %s", ns_,
        "{\"name\":\"a\",\"id\":\"d1\",\"t\":1,\"fails\":4,\"err\":\"x<y\",\"failed_at\":100}");
    http_res r;
    CHECK_INT(wt_http(port_, "GET", "/dashboard?days=1", NULL, NULL, &r), 0);
    today(date2);
    char want[2048];
    snprintf(
        want, sizeof want,
        "{\n\t\"now\": %%lld,\n\t\"days\": [\n\t\t{\n\t\t\t\"date\": \"%s\",\n\t\t\t"
        "\"processed\": 12,\n\t\t\t\"failed\": 2\n\t\t}\n\t],\n\t\"retry_total\": 0,\n\t"
        "\"retry_read\": 0,\n\t\"dead_total\": 1,\n\t\"dead_read\": 1,\n\t\"types\": [\n\t\t"
        "{\n\t\t\t\"job_name\": \"a\",\n\t\t\t\"known\": true,\n\t\t\t\"paused\": false,\n\t\t\t"
        "\"waiting\": 0,\n\t\t\t\"latency\": 0,\n\t\t\t\"running\": 0,\n\t\t\t\"retry\": 0,\n\t\t\t"
        "\"dead\": 1,\n\t\t\t\"last_error\": \"x\\u003cy\",\n\t\t\t\"last_failed_at\": 100\n\t\t}"
        "\n\t],\n\t\"pool\": null\n}",
        date);
    long long now = 0;
    CHECK(sscanf(r.body, "{\n\t\"now\": %lld", &now) == 1 && now >= time(NULL) - 5);
    char expect[2048];
    snprintf(expect, sizeof expect, want, now);
    if (!strcmp(date, date2)) CHECK_STR(r.body, expect);
    CHECK_INT(r.status, 200);
    static const char *const bad[] = {"/dashboard?days=0",        "/dashboard?days=367",
                                      "/dashboard?days=x",        "/dashboard?sample=0",
                                      "/dashboard?sample=100001", "/dashboard?days=%zz"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        REQ("GET", bad[i], NULL, 400, NULL);
    REQ("POST", "/dashboard", NULL, 405, NULL);
    tl_ns_delete(rc_, ns_);
}

static void dashboard_shows_the_pool_of_its_process(void)
{
    tl_unique_ns("wdpool", ns_, sizeof ns_);
    cwork_pool_options po;
    cwork_pool_options_init(&po);
    cwork_pool *pool = cwork_pool_new(redis_, ns_, &po, NULL);
    cwork_web_options o;
    cwork_web_options_init(&o);
    o.pool = pool;
    cwork_web *w = start(&o);
    http_res r;
    CHECK_INT(wt_http(cwork_web_port(w), "GET", "/dashboard?days=1", NULL, NULL, &r), 0);
    char want[128];
    snprintf(want, sizeof want,
             "\"pool\": {\n\t\t\"id\": \"%s\",\n\t\t\"processed\": 0,\n\t\t\"failed\": 0,\n\t\t"
             "\"in_flight\": 0\n\t}\n}",
             cwork_pool_id(pool));
    CHECK(strstr(r.body, want) != NULL);
    cwork_web_free(w);
    cwork_pool_free(pool);
    tl_ns_delete(rc_, ns_);
}

static void queue_jobs_and_list_options(void)
{
    serve("wqj");
    cmd("LPUSH %s:jobs:a {\"name\":\"a\",\"id\":\"q1\",\"t\":1}", ns_);
    cmd("LPUSH %s:jobs:a {\"name\":\"a\",\"id\":\"q2\",\"t\":2}", ns_);
    cmd("SET %s:jobs:bad x", ns_);
    REQ("GET", "/queue_jobs?name=a&per_page=1&page=2", NULL, 200,
        "{\n\t\"count\": 2,\n\t\"jobs\": [\n\t\t{\n\t\t\t\"name\": \"a\",\n\t\t\t\"id\": \"q2\",\n\t\t\t"
        "\"t\": 2,\n\t\t\t\"args\": null\n\t\t}\n\t]\n}");
    REQ("GET", "/queue_jobs?name=none", NULL, 200, "{\n\t\"count\": 0,\n\t\"jobs\": []\n}");
    REQ("GET", "/queue_jobs", NULL, 400, "{\"error\": \"name is required\"}");
    REQ("GET", "/queue_jobs?name=a&per_page=1001", NULL, 400, NULL);
    REQ("GET", "/queue_jobs?name=a&per_page=0", NULL, 400, NULL);
    REQ("GET", "/queue_jobs?name=a&page=x", NULL, 400, NULL);
    /* a key of another type: listed as empty, and named */
    char damaged[512];
    snprintf(damaged, sizeof damaged,
             "{\n\t\"count\": 0,\n\t\"jobs\": [],\n\t\"damaged\": [{\"key\":\"%s:jobs:bad\","
             "\"type\":\"string\",\"expected\":\"list\",\"what\":\"queue of bad\"}]\n}",
             ns_);
    REQ("GET", "/queue_jobs?name=bad", NULL, 200, damaged);
    for (int i = 1; i <= 3; i++)
        cmd("ZADD %s:dead %d {\"name\":\"a\",\"id\":\"d%d\",\"t\":1}", ns_, 100 + i, i);
    REQ("GET", "/dead_jobs?per_page=1&order=newest", NULL, 200,
        "{\n\t\"count\": 3,\n\t\"jobs\": [\n\t\t{\n\t\t\t\"died_at\": 103,\n\t\t\t\"name\": \"a\","
        "\n\t\t\t\"id\": \"d3\",\n\t\t\t\"t\": 1,\n\t\t\t\"args\": null\n\t\t}\n\t]\n}");
    REQ("GET", "/dead_jobs?per_page=1&order=oldest&page=2&name=a", NULL, 200,
        "{\n\t\"count\": 3,\n\t\"jobs\": [\n\t\t{\n\t\t\t\"died_at\": 102,\n\t\t\t\"name\": \"a\","
        "\n\t\t\t\"id\": \"d2\",\n\t\t\t\"t\": 1,\n\t\t\t\"args\": null\n\t\t}\n\t]\n}");
    REQ("GET", "/dead_jobs?order=sideways", NULL, 400,
        "{\"error\": \"order must be newest or oldest\"}");
    REQ("GET", "/retry_jobs?per_page=0", NULL, 400, NULL);
    REQ("GET", "/scheduled_jobs?per_page=1001", NULL, 400, NULL);
    /* ?periodic=hide: without the instances periodic jobs enqueue ahead */
    cmd("ZADD %s:scheduled 201 {\"name\":\"a\",\"id\":\"periodic:a:@daily:201\",\"t\":1}", ns_);
    cmd("ZADD %s:scheduled 202 {\"name\":\"a\",\"id\":\"s1\",\"t\":1}", ns_);
    REQ("GET", "/scheduled_jobs?periodic=hide", NULL, 200,
        "{\n\t\"count\": 1,\n\t\"jobs\": [\n\t\t{\n\t\t\t\"run_at\": 202,\n\t\t\t\"name\": \"a\","
        "\n\t\t\t\"id\": \"s1\",\n\t\t\t\"t\": 1,\n\t\t\t\"args\": null\n\t\t}\n\t]\n}");
    REQ("GET", "/scheduled_jobs?periodic=show&per_page=1", NULL, 200,
        "{\n\t\"count\": 2,\n\t\"jobs\": [\n\t\t{\n\t\t\t\"run_at\": 201,\n\t\t\t\"name\": \"a\","
        "\n\t\t\t\"id\": \"periodic:a:@daily:201\",\n\t\t\t\"t\": 1,\n\t\t\t\"args\": null\n\t\t}\n\t]\n}");
    REQ("GET", "/scheduled_jobs?periodic=maybe", NULL, 400,
        "{\"error\": \"periodic must be show or hide\"}");
    tl_ns_delete(rc_, ns_);
}

static void periodic_schedules(void)
{
    serve("wper");
    long long now = now_();
    cmd("HSET %s:cwork:periodic %s {\"next_at\":%lld,\"seen_at\":%lld}", ns_,
        "[\"calc\",\"0 * * * *\"]", now + 100, now - 5);
    char want[512];
    snprintf(want, sizeof want,
             "[\n\t{\n\t\t\"job_name\": \"calc\",\n\t\t\"spec\": \"0 * * * *\",\n\t\t\"next_at\": "
             "%lld,\n\t\t\"seen_at\": %lld\n\t}\n]",
             now + 100, now - 5);
    REQ("GET", "/periodic", NULL, 200, want);
    tl_ns_delete(rc_, ns_);
    REQ("GET", "/periodic", NULL, 200, "[]");
}

/* ---------------------------------------------------------------- changing */

static void apply_changes_exactly_the_listed_jobs(void)
{
    serve("wapply");
    cmd("SADD %s:known_jobs a", ns_);
    cmd("ZADD %s:dead 101 {\"name\":\"a\",\"id\":\"d1\",\"t\":1}", ns_);
    cmd("ZADD %s:dead 102 {\"name\":\"a\",\"id\":\"d2\",\"t\":1}", ns_);
    cmd("ZADD %s:dead 103 {\"name\":\"a\",\"id\":\"d3\",\"t\":1}", ns_);
    REQ("POST", "/apply?set=dead&action=delete",
        "[{\"at\":101,\"id\":\"d1\"},{\"at\":103,\"id\":\"d3\"}]", 200,
        "{\n\t\"done\": 2,\n\t\"unchanged\": 0,\n\t\"message\": \"\"\n}");
    CHECK_DUMP("NS:dead zset {\"name\":\"a\",\"id\":\"d2\",\"t\":1}=102\nNS:known_jobs set a\n");
    REQ("POST", "/apply?set=dead&action=retry",
        "[{\"at\":102,\"id\":\"d2\"},{\"at\":9,\"id\":\"gone\"}]", 200,
        "{\n\t\"done\": 1,\n\t\"unchanged\": 1,\n\t\"message\": \"nothing retried\"\n}");
    char *moved = list_member("jobs:a");
    CHECK(strstr(moved, "\"id\":\"d2\"") != NULL);
    snprintf(want_, sizeof want_, "NS:jobs:a list %s\nNS:known_jobs set a\n", moved);
    free(moved);
    CHECK_DUMP(want_);
    char *snap = dump_now();
    /* bad requests change nothing */
    static const struct {
        const char *path, *body;
    } bad[] = {
        {"/apply?set=dead&action=delete", NULL},
        {"/apply?set=dead&action=delete", "not json"},
        {"/apply?set=dead&action=delete", "{\"at\":1,\"id\":\"x\"}"},
        {"/apply?set=dead&action=delete", "[{\"at\":1}]"},
        {"/apply?set=dead&action=delete", "[{\"id\":\"x\"}]"},
        {"/apply?set=dead&action=delete", "[{\"at\":1.5,\"id\":\"x\"}]"},
        {"/apply?set=dead&action=delete", "[{\"at\":\"1\",\"id\":\"x\"}]"},
        {"/apply?set=dead&action=delete", "[{\"at\":1,\"id\":7}]"},
        {"/apply?set=dead&action=delete", "[{\"at\":1,\"id\":\"a\\u0000b\"}]"},
        {"/apply?set=dead&action=delete", "[{\"at\":1e300,\"id\":\"x\"}]"},
        {"/apply?set=dead&action=delete", "[1]"},
        {"/apply?set=sideways&action=delete", "[]"},
        {"/apply?action=delete", "[]"},
        {"/apply?set=dead&action=explode", "[]"},
        {"/apply?set=dead", "[]"},
        {"/apply?set=dead&action=run_now", "[{\"at\":1,\"id\":\"x\"}]"}, /* retry dead jobs */
        {"/apply?set=scheduled&action=retry", "[{\"at\":1,\"id\":\"x\"}]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        http_res r;
        CHECK_INT(wt_http(port_, "POST", bad[i].path, NULL, bad[i].body, &r), 0);
        if (r.status != 400 || !wt_is_json_error(&r))
            tl_fail(__FILE__, __LINE__, "%s %s: %d %s", bad[i].path, bad[i].body ? bad[i].body : "",
                    r.status, r.body);
    }
    /* more than 1000 jobs at once */
    cw_buf big;
    cw_buf_init(&big);
    cw_buf_putc(&big, '[');
    for (int i = 0; i < 1001; i++)
        cw_buf_printf(&big, "%s{\"at\":1,\"id\":\"x%d\"}", i ? "," : "", i);
    cw_buf_putc(&big, ']');
    REQ("POST", "/apply?set=dead&action=delete", big.data, 400,
        "{\"error\": \"at most 1000 jobs at once\"}");
    cw_buf_free(&big);
    REQ("GET", "/apply?set=dead&action=delete", NULL, 405, NULL);
    http_res r;
    CHECK_INT(wt_http(port_, "POST", "/apply?set=dead&action=delete",
                      "Origin: http://evil.example\r\n", "[{\"at\":102,\"id\":\"d2\"}]", &r),
              0);
    CHECK_INT(r.status, 403);
    char *after = dump_now();
    CHECK_STR(after, snap);
    free(after);
    free(snap);
    tl_ns_delete(rc_, ns_);
}

/* POST /cancel: a waiting job goes to dead; a Go pool's running job cannot be told. */
static void cancel_a_job(void)
{
    serve("wcancel");
    cmd("SADD %s:known_jobs a", ns_);
    cmd("LPUSH %s:jobs:a {\"name\":\"a\",\"id\":\"q1\",\"t\":1}", ns_);
    cmd("SADD %s:worker_pools 0123456789abcdef01234567", ns_);
    cmd("LPUSH %s:jobs:a:0123456789abcdef01234567:inprogress {\"name\":\"a\",\"id\":\"g1\"}", ns_);
    REQ("POST", "/cancel?id=q1", NULL, 200, "{\n\t\"place\": \"queue\",\n\t\"pool\": \"\"\n}");
    CHECK_INT(int_of("LLEN", ns_, ":jobs:a"), 0);
    redisReply *d = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    CHECK(d->elements == 1 && strstr(d->element[0]->str, "\"err\":\"cancelled\""));
    freeReplyObject(d);
    char *snap = dump_now();
    REQ("POST", "/cancel?id=q1", NULL, 404, "{\"error\": \"job q1 is in the dead set already\"}");
    REQ("POST", "/cancel?id=g1", NULL, 409, NULL);
    REQ("POST", "/cancel", NULL, 400, "{\"error\": \"id is required\"}");
    REQ("GET", "/cancel?id=q1", NULL, 405, NULL);
    char *after = dump_now();
    CHECK_STR(after, snap);
    free(after);
    free(snap);
    tl_ns_delete(rc_, ns_);
}

static void all_at_once_and_clearing_a_queue(void)
{
    serve("wall");
    cmd("SADD %s:known_jobs a b", ns_);
    cmd("ZADD %s:retry 101 {\"name\":\"a\",\"id\":\"r1\",\"t\":1}", ns_);
    cmd("ZADD %s:retry 102 {\"name\":\"b\",\"id\":\"r2\",\"t\":1}", ns_);
    cmd("ZADD %s:scheduled 2000000000 {\"name\":\"ghost\",\"id\":\"s1\",\"t\":1}", ns_);
    cmd("ZADD %s:dead 100 {\"name\":\"b\",\"id\":\"d1\",\"t\":1}", ns_);
    cmd("LPUSH %s:jobs:b {\"name\":\"b\",\"id\":\"q1\",\"t\":1}", ns_);
    REQ("POST", "/delete_all?set=retry&name=a", NULL, 200, "{\n\t\"count\": 1\n}");
    REQ("POST", "/run_all?set=scheduled", NULL, 200, "{\n\t\"count\": 0,\n\t\"stayed\": 1\n}");
    REQ("POST", "/clear_queue?name=b", NULL, 200, "{\n\t\"count\": 1\n}");
    CHECK_DUMP("NS:dead zset {\"name\":\"b\",\"id\":\"d1\",\"t\":1}=100\nNS:known_jobs set a | b\n"
               "NS:retry zset {\"name\":\"b\",\"id\":\"r2\",\"t\":1}=102\n"
               "NS:scheduled zset {\"name\":\"ghost\",\"id\":\"s1\",\"t\":1}=2000000000\n");
    REQ("POST", "/retry_all", NULL, 200, "{\n\t\"count\": 1\n}");
    REQ("POST", "/run_all?set=retry&name=b", NULL, 200, "{\n\t\"count\": 1,\n\t\"stayed\": 0\n}");
    redisReply *q = tl_cmd(rc_, "LRANGE %s:jobs:b 0 -1", ns_);
    CHECK(q->elements == 2 && strstr(q->element[0]->str, "\"id\":\"r2\"") &&
          strstr(q->element[1]->str, "\"id\":\"d1\""));
    freeReplyObject(q);
    REQ("POST", "/delete_all?set=scheduled", NULL, 200, "{\n\t\"count\": 1\n}");
    REQ("POST", "/clear_queue?name=b", NULL, 200, "{\n\t\"count\": 2\n}");
    CHECK_DUMP("NS:known_jobs set a | b\n");
    char *snap = dump_now();
    REQ("POST", "/delete_all", NULL, 400, "{\"error\": \"set is required\"}");
    REQ("POST", "/delete_all?set=queue", NULL, 400, NULL);
    REQ("POST", "/run_all?set=dead", NULL, 400, NULL); /* dead jobs are retried */
    REQ("POST", "/run_all", NULL, 400, NULL);
    REQ("POST", "/clear_queue", NULL, 400, "{\"error\": \"name is required\"}");
    REQ("POST", "/clear_queue?name=", NULL, 400, NULL);
    REQ("GET", "/clear_queue?name=b", NULL, 405, NULL);
    REQ("GET", "/retry_all", NULL, 405, NULL);
    http_res r;
    CHECK_INT(wt_http(port_, "OPTIONS", "/run_all", NULL, NULL, &r), 0);
    CHECK_INT(r.status, 204);
    CHECK_STR(wt_header(&r, "Allow"), "POST, OPTIONS");
    CHECK(wt_header(&r, "Access-Control-Allow-Origin") == NULL);
    cmd("SET %s:jobs:broken x", ns_);
    REQ("POST", "/clear_queue?name=broken", NULL, 500, NULL); /* left as it is */
    CHECK_INT(int_of("EXISTS", ns_, ":jobs:broken"), 1);
    cmd("DEL %s:jobs:broken", ns_);
    char *after = dump_now();
    CHECK_STR(after, snap);
    free(after);
    free(snap);
    tl_ns_delete(rc_, ns_);
}

static void delete_waiting_takes_exactly_the_listed_jobs(void)
{
    serve("wdelw");
    cmd("SADD %s:known_jobs a b", ns_);
    for (int i = 5; i >= 1; i--) /* left to right q5 … q1: q1 runs next (place 0) */
        cmd("RPUSH %s:jobs:a {\"name\":\"a\",\"id\":\"q%d\",\"t\":%d}", ns_, i, i);
    cmd("LPUSH %s:jobs:b {\"name\":\"b\",\"id\":\"q2\",\"t\":1}", ns_);
    cmd("ZADD %s:retry 100 {\"name\":\"a\",\"id\":\"q4\",\"t\":1}", ns_);
    /* a pool took q1 since the page was listed: q2 and q4 moved one place */
    cmd("RPOPLPUSH %s:jobs:a %s:jobs:a:p1:inprogress", ns_, ns_);
    REQ("POST", "/delete_waiting?name=a",
        "[{\"place\":1,\"id\":\"q2\"},{\"place\":3,\"id\":\"q4\"}]", 200,
        "{\n\t\"done\": 2,\n\t\"unchanged\": 0,\n\t\"message\": \"\"\n}");
    static const char after_two[] =
        "NS:jobs:a list {\"name\":\"a\",\"id\":\"q5\",\"t\":5} | {\"name\":\"a\",\"id\":\"q3\",\"t\":3}\n"
        "NS:jobs:a:p1:inprogress list {\"name\":\"a\",\"id\":\"q1\",\"t\":1}\n"
        "NS:jobs:b list {\"name\":\"b\",\"id\":\"q2\",\"t\":1}\n"
        "NS:known_jobs set a | b\n"
        "NS:retry zset {\"name\":\"a\",\"id\":\"q4\",\"t\":1}=100\n";
    CHECK_DUMP(after_two);
    /* the one the pool took, and one already deleted: reported, nothing removed */
    REQ("POST", "/delete_waiting?name=a",
        "[{\"place\":0,\"id\":\"q1\"},{\"place\":1,\"id\":\"q2\"}]", 200,
        "{\n\t\"done\": 0,\n\t\"unchanged\": 2,\n\t\"message\": \"job q1 is no longer waiting in "
        "queue a near where it was listed: a pool may have taken it to run\"\n}");
    CHECK_DUMP(after_two);
    REQ("POST", "/delete_waiting?name=a", "[]", 200,
        "{\n\t\"done\": 0,\n\t\"unchanged\": 0,\n\t\"message\": \"\"\n}");
    /* a place below 0: unknown, the whole queue is searched */
    REQ("POST", "/delete_waiting?name=a", "[{\"place\":-1,\"id\":\"q5\"}]", 200,
        "{\n\t\"done\": 1,\n\t\"unchanged\": 0,\n\t\"message\": \"\"\n}");
    char *snap = dump_now();
    static const struct {
        const char *path, *body;
    } bad[] = {
        {"/delete_waiting", "[]"},
        {"/delete_waiting?name=", "[]"},
        {"/delete_waiting?name=a", NULL},
        {"/delete_waiting?name=a", "{\"place\":1,\"id\":\"q3\"}"},
        {"/delete_waiting?name=a", "[{\"at\":1,\"id\":\"q3\"}]"},
        {"/delete_waiting?name=a", "[{\"place\":1.5,\"id\":\"q3\"}]"},
        {"/delete_waiting?name=a", "[{\"place\":\"1\",\"id\":\"q3\"}]"},
        {"/delete_waiting?name=a", "[{\"place\":1,\"id\":3}]"},
        {"/delete_waiting?name=a", "[{\"place\":1}]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        http_res r;
        CHECK_INT(wt_http(port_, "POST", bad[i].path, NULL, bad[i].body, &r), 0);
        if (r.status != 400 || !wt_is_json_error(&r))
            tl_fail(__FILE__, __LINE__, "%s %s: %d %s", bad[i].path, bad[i].body ? bad[i].body : "",
                    r.status, r.body);
    }
    REQ("POST", "/delete_waiting?name=a", "[{\"at\":1,\"id\":\"q3\"}]", 400,
        "{\"error\": \"job 0: each job must be {\\\"place\\\": a whole number, \\\"id\\\": a string}\"}");
    REQ("GET", "/delete_waiting?name=a", NULL, 405, NULL);
    http_res r;
    CHECK_INT(wt_http(port_, "POST", "/delete_waiting?name=a", "Origin: http://evil.example\r\n",
                      "[{\"place\":0,\"id\":\"q3\"}]", &r),
              0);
    CHECK_INT(r.status, 403);
    /* a queue key of another type: an error, the key as it was */
    cmd("HSET %s:jobs:broken id q3", ns_);
    REQ("POST", "/delete_waiting?name=broken", "[{\"place\":0,\"id\":\"q3\"}]", 500, NULL);
    CHECK_INT(int_of("HLEN", ns_, ":jobs:broken"), 1);
    cmd("DEL %s:jobs:broken", ns_);
    char *after = dump_now();
    CHECK_STR(after, snap);
    free(after);
    free(snap);
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- where it runs */

static void read_only_refuses_every_change(void)
{
    tl_unique_ns("wro", ns_, sizeof ns_);
    cmd("SADD %s:known_jobs a", ns_);
    cmd("ZADD %s:dead 100 {\"name\":\"a\",\"id\":\"d1\",\"t\":1}", ns_);
    cmd("LPUSH %s:jobs:a {\"name\":\"a\",\"id\":\"q1\",\"t\":1}", ns_);
    cwork_web_options o;
    cwork_web_options_init(&o);
    o.read_only = true;
    cwork_web *w = start(&o);
    int saved = port_;
    port_ = cwork_web_port(w);
    char *snap = dump_now();
    static const char *const posts[] = {"/delete_dead_job/100/d1",
                                        "/retry_dead_job/100/d1",
                                        "/delete_all_dead_jobs",
                                        "/retry_all_dead_jobs",
                                        "/delete_retry_job/1/x",
                                        "/delete_scheduled_job/1/x",
                                        "/pause/a",
                                        "/unpause/a",
                                        "/delete_all?set=dead",
                                        "/run_all?set=retry",
                                        "/retry_all",
                                        "/clear_queue?name=a",
                                        "/apply?set=dead&action=delete",
                                        "/delete_waiting?name=a"};
    for (size_t i = 0; i < sizeof posts / sizeof posts[0]; i++) {
        http_res r;
        CHECK_INT(wt_http(port_, "POST", posts[i], NULL, "[{\"at\":100,\"id\":\"d1\"}]", &r), 0);
        if (r.status != 403 || !strstr(r.body, "read-only"))
            tl_fail(__FILE__, __LINE__, "%s: %d %s", posts[i], r.status, r.body);
    }
    REQ("GET", "/dead_jobs", NULL, 200, NULL);
    REQ("GET", "/dashboard", NULL, 200, NULL);
    http_res r;
    CHECK_INT(wt_http(port_, "GET", "/summary", NULL, NULL, &r), 0);
    CHECK(strstr(r.body, "\"read_only\": true") != NULL);
    char *after = dump_now();
    CHECK_STR(after, snap);
    free(after);
    free(snap);
    cwork_web_free(w);
    port_ = saved;
    tl_ns_delete(rc_, ns_);
}

static void several_namespaces(void)
{
    char first[64], second[64];
    tl_unique_ns("wns2", second, sizeof second);
    tl_unique_ns("wns1", ns_, sizeof ns_);
    snprintf(first, sizeof first, "%s", ns_);
    cmd("SADD %s:known_jobs one", first);
    cmd("SADD %s:known_jobs two", second);
    cmd("ZADD %s:dead 100 {\"name\":\"two\",\"id\":\"d2\",\"t\":1}", second);
    const char *more[] = {second, first /* listed twice: once is enough */, NULL};
    cwork_web_options o;
    cwork_web_options_init(&o);
    o.namespaces = more;
    o.n_namespaces = 3;
    cwork_web *w = start(&o);
    int saved = port_;
    port_ = cwork_web_port(w);
    REQ("GET", "/queues", NULL, 200,
        "[\n\t{\n\t\t\"job_name\": \"one\",\n\t\t\"count\": 0,\n\t\t\"latency\": 0\n\t}\n]");
    char path[256];
    snprintf(path, sizeof path, "/queues?ns=%s", second);
    REQ("GET", path, NULL, 200,
        "[\n\t{\n\t\t\"job_name\": \"two\",\n\t\t\"count\": 0,\n\t\t\"latency\": 0\n\t}\n]");
    snprintf(path, sizeof path, "/summary?ns=%s", second);
    http_res r;
    CHECK_INT(wt_http(port_, "GET", path, NULL, NULL, &r), 0);
    char want[256];
    snprintf(want, sizeof want, "\"namespaces\": [\n\t\t\"%s\",\n\t\t\"%s\"\n\t]", first, second);
    CHECK(strstr(r.body, want) != NULL);
    snprintf(want, sizeof want, "\"namespace\": \"%s\"", second);
    CHECK(strstr(r.body, want) != NULL);
    /* a change goes to the namespace asked for, and only there */
    snprintf(path, sizeof path, "/delete_all?set=dead&ns=%s", second);
    REQ("POST", path, NULL, 200, "{\n\t\"count\": 1\n}");
    CHECK_INT(int_of("EXISTS", second, ":dead"), 0);
    REQ("GET", "/queues?ns=nope", NULL, 404,
        "{\"error\": \"this server does not serve namespace nope\"}");
    REQ("GET", "/queues?ns=%zz", NULL, 400, NULL);
    REQ("GET", "/queues?ns=", NULL, 200, NULL); /* empty: the default */
    cwork_web_free(w);
    port_ = saved;
    tl_ns_delete(rc_, first);
    tl_ns_delete(rc_, second);
    const char *too_many[65];
    for (int i = 0; i < 65; i++)
        too_many[i] = "x";
    o.namespaces = too_many;
    o.n_namespaces = 65;
    o.listen = "127.0.0.1:0";
    cwork_error err = {0};
    CHECK(cwork_web_start(redis_, ns_, &o, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
}

static void under_a_base_path(void)
{
    tl_unique_ns("wbase", ns_, sizeof ns_);
    cmd("SADD %s:known_jobs a", ns_);
    cwork_web_options o;
    cwork_web_options_init(&o);
    o.base_path = "/ops/jobs/";
    cwork_web *w = start(&o);
    int port = cwork_web_port(w);
    http_res r;
    CHECK_INT(wt_http(port, "GET", "/ops/jobs", NULL, NULL, &r), 0);
    CHECK_INT(r.status, 308);
    CHECK_STR(wt_header(&r, "Location"), "jobs/");
    CHECK_INT(wt_http(port, "GET", "/ops/jobs/", NULL, NULL, &r), 0);
    CHECK(r.status == 200 && strstr(r.body, "<script type=\"module\" src=\"app.js\">"));
    CHECK(!strstr(r.body, "=\"/") && !strstr(r.body, "='/")); /* relative URLs only */
    CHECK_INT(wt_http(port, "GET", "/ops/jobs/app.js", NULL, NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK_INT(wt_http(port, "GET", "/ops/jobs/queues", NULL, NULL, &r), 0);
    CHECK(r.status == 200 && strstr(r.body, "\"job_name\": \"a\""));
    CHECK_INT(wt_http(port, "GET", "/queues", NULL, NULL, &r), 0); /* a proxy that strips */
    CHECK_INT(r.status, 200);
    CHECK_INT(wt_http(port, "GET", "/ops/jobsx/queues", NULL, NULL, &r), 0);
    CHECK_INT(r.status, 404);
    CHECK_INT(wt_http(port, "POST", "/ops/jobs/pause/a", NULL, NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK_INT(int_of("EXISTS", ns_, ":jobs:a:paused"), 1);
    cwork_web_free(w);
    static const char *const bad[] = {"jobs", "/a?b", "/a/../b", "/a#b", "/a b", "/a//b", "/%2e"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.base_path = bad[i];
        o.listen = "127.0.0.1:0";
        cwork_error err = {0};
        cwork_web *x = cwork_web_start(redis_, ns_, &o, &err);
        if (x || err.code != CWORK_EINVAL)
            tl_fail(__FILE__, __LINE__, "base path %s: accepted", bad[i]);
        cwork_web_free(x);
    }
    o.base_path = "/";
    cwork_web_free(start(&o)); /* "/" is no prefix at all */
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- cwork web */

static void cli_options(void)
{
    const char *cli = getenv("CWORK_CLI");
    if (!cli) {
        printf("     (CWORK_CLI is not set: run through ctest)\n");
        return;
    }
    char sh[1024];
    snprintf(sh, sizeof sh, "%s web --help", cli);
    FILE *f = popen(sh, "r");
    char out[8192] = "";
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    CHECK_INT(pclose(f), 0);
    CHECK(strstr(out, "--base-path /PREFIX") && strstr(out, "--read-only") &&
          strstr(out, "give --ns more than once"));
    tl_unique_ns("wcli", ns_, sizeof ns_);
    int p[2];
    CHECK_INT(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        execl(cli, cli, "web", "--redis", tl_redis_url(), "--ns", ns_, "--ns", "other-ns",
              "--listen", "127.0.0.1:0", "--base-path", "/jobs/", "--read-only", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char line[256] = "";
    n = (size_t)read(p[0], line, sizeof line - 1);
    line[n < sizeof line ? n : 0] = '\0';
    int port = 0;
    CHECK(sscanf(line, "http://127.0.0.1:%d/jobs/", &port) == 1 && strstr(line, "/jobs/\n"));
    http_res r;
    CHECK_INT(wt_http(port, "GET", "/jobs/summary?ns=other-ns", NULL, NULL, &r), 0);
    CHECK(r.status == 200 && strstr(r.body, "\"read_only\": true") &&
          strstr(r.body, "\"namespace\": \"other-ns\""));
    CHECK_INT(wt_http(port, "POST", "/jobs/pause/x", NULL, NULL, &r), 0);
    CHECK_INT(r.status, 403);
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(p[0]);
    snprintf(sh, sizeof sh, "%s web --read-only=yes --redis %s 2>/dev/null", cli, tl_redis_url());
    CHECK(WEXITSTATUS(system(sh)) == 2);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    RUN(dashboard_body);
    RUN(dashboard_shows_the_pool_of_its_process);
    RUN(queue_jobs_and_list_options);
    RUN(periodic_schedules);
    RUN(apply_changes_exactly_the_listed_jobs);
    RUN(all_at_once_and_clearing_a_queue);
    RUN(cancel_a_job);
    RUN(delete_waiting_takes_exactly_the_listed_jobs);
    RUN(read_only_refuses_every_change);
    RUN(several_namespaces);
    RUN(under_a_base_path);
    RUN(cli_options);
    cwork_web_free(web_);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
