/* The web server over real HTTP: a server started in-process on a free port, requests
 * written by hand on a raw socket, Redis state written by hand in Go's bytes. Checks
 * workwebui's routes and bodies (PROTOCOL §12.1, §17.8), cwork's own routes, status codes
 * and JSON errors, security headers, the origin, host and auth checks, /metrics (with
 * promtool when installed) and that nonsense never stops the server. */
#include "cwork_web.h"
#include "web_testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static redisContext *rc_;
static cwork_redis *redis_;
static cwork_web *web_;
static int port_;
static char ns_[64];

/* ---------------------------------------------------------------- HTTP on a socket */

static int http_port(int port, const char *method, const char *path, const char *extra, http_res *r)
{
    return wt_http(port, method, path, extra, NULL, r);
}

static int http(const char *method, const char *path, const char *extra, http_res *r)
{
    return http_port(port_, method, path, extra, r);
}

/* One request; checks its status and, when want_body is not NULL, its body. */
static void check_res(const char *file, int line, const char *method, const char *path,
                      const char *extra, int want_status, const char *want_body)
{
    http_res r;
    if (http(method, path, extra, &r) != 0) {
        tl_fail(file, line, "%s %s: no HTTP answer", method, path);
        return;
    }
    if (r.status != want_status)
        tl_fail(file, line, "%s %s: status %d, expected %d (%s)", method, path, r.status,
                want_status, r.body);
    if (want_body) tl_check_mem(file, line, path, r.body, r.len, want_body, strlen(want_body));
}
#define CHECK_RES(method, path, extra, status, body)                                               \
    check_res(__FILE__, __LINE__, method, path, extra, status, body)

static const char json_type[] = "application/json; charset=utf-8";
static const char status_ok[] = "{\n\t\"status\": \"ok\"\n}";

static void cmd(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(rc_, fmt, ap);
    va_end(ap);
    if (!r) {
        fprintf(stderr, "redis: %s\n", rc_->errstr);
        exit(1);
    }
    freeReplyObject(r);
}

static long long redis_int(const char *fmt, const char *arg)
{
    redisReply *r = tl_cmd(rc_, fmt, ns_, arg);
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    freeReplyObject(r);
    return v;
}

static void fresh_ns(const char *tag)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
}

/* (Re)starts the shared server on a fresh namespace, its bodies in a Go flavour. */
static void serve_flavour(const char *tag, cwork_go_flavor flavor)
{
    cwork_web_free(web_);
    fresh_ns(tag);
    cwork_web_options o;
    cwork_web_options_init(&o);
    o.listen = "127.0.0.1:0";
    o.go_flavor = flavor;
    cwork_error err = {0};
    web_ = cwork_web_start(redis_, ns_, &o, &err);
    if (!web_) {
        fprintf(stderr, "cwork_web_start: %s\n", err.message);
        exit(1);
    }
    port_ = cwork_web_port(web_);
}

static void serve(const char *tag)
{
    serve_flavour(tag, CWORK_GO_FORK);
}

#define DEAD_JOB                                                                                   \
    "{\"name\":\"send_email\",\"id\":\"0123456789abcdef01234567\",\"t\":1700000000,\"args\":{"     \
    "\"address\":\"a@b.c\"},\"fails\":4,\"err\":\"boom\",\"failed_at\":1700000100}"

/* ---------------------------------------------------------------- Go's routes */

static void queues_and_dead_bodies_of_spec_18_7(void)
{
    serve("webq");
    int matched = 0;
    for (int attempt = 0; attempt < 3 && !matched; attempt++) {
        tl_ns_delete(rc_, ns_);
        long long now = (long long)time(NULL);
        cmd("SADD %s:known_jobs send_email", ns_);
        cmd("LPUSH %s:jobs:send_email "
            "{\"name\":\"send_email\",\"id\":\"a\",\"t\":%lld,\"args\":{}}",
            ns_, now - 17);
        cmd("LPUSH %s:jobs:send_email "
            "{\"name\":\"send_email\",\"id\":\"b\",\"t\":%lld,\"args\":{}}",
            ns_, now);
        http_res r;
        CHECK_INT(http("GET", "/queues", NULL, &r), 0);
        CHECK_INT(r.status, 200);
        CHECK_STR(wt_header(&r, "Content-Type"), json_type);
        const char want[] = "[\n\t{\n\t\t\"job_name\": \"send_email\",\n\t\t\"count\": 2,\n\t\t"
                            "\"latency\": 17\n\t}\n]";
        matched = r.len == strlen(want) && memcmp(r.body, want, r.len) == 0;
        if (!matched && attempt == 2) CHECK_MEM(r.body, r.len, want, strlen(want));
    }
    cmd("ZADD %s:dead 1700000100 %s", ns_, DEAD_JOB);
    CHECK_RES("GET", "/dead_jobs?page=1", NULL, 200,
              "{\n\t\"count\": 1,\n\t\"jobs\": [\n\t\t{\n\t\t\t\"died_at\": 1700000100,\n\t\t\t"
              "\"name\": \"send_email\",\n\t\t\t\"id\": \"0123456789abcdef01234567\",\n\t\t\t"
              "\"t\": 1700000000,\n\t\t\t\"args\": {\n\t\t\t\t\"address\": \"a@b.c\"\n\t\t\t},"
              "\n\t\t\t\"fails\": 4,\n\t\t\t\"err\": \"boom\",\n\t\t\t\"failed_at\": "
              "1700000100\n\t\t}\n\t]\n}");
    CHECK_RES("GET", "/busy_workers", NULL, 200, "[]"); /* Go: null (PROTOCOL §12.2) */
    CHECK_RES("GET", "/worker_pools", NULL, 200, "[]");
    CHECK_RES("GET", "/retry_jobs", NULL, 200, "{\n\t\"count\": 0,\n\t\"jobs\": []\n}");
    CHECK_RES("GET", "/scheduled_jobs?page=0", NULL, 200, "{\n\t\"count\": 0,\n\t\"jobs\": []\n}");
    /* Go: 500 {"error": "nothing deleted"}; cwork: a missing job is 404 */
    CHECK_RES("POST", "/delete_dead_job/1700000100/nope", NULL, 404,
              "{\"error\": \"nothing deleted\"}");
    CHECK_RES("POST", "/retry_dead_job/1700000100/nope", NULL, 404, NULL);
    CHECK_INT(redis_int("ZCARD %s:dead", ""), 1);
    CHECK_RES("POST", "/retry_dead_job/1700000100/0123456789abcdef01234567", NULL, 200, status_ok);
    CHECK_INT(redis_int("ZCARD %s:dead", ""), 0);
    CHECK_INT(redis_int("LLEN %s:jobs:send_email", ""), 3);
    tl_ns_delete(rc_, ns_);
}

static void pools_and_busy_workers(void)
{
    serve("webp");
    cmd("SADD %s:worker_pools 0123456789abcdef01234567", ns_);
    cmd("HSET %s:worker_pools:0123456789abcdef01234567 heartbeat_at %lld started_at 1700000000 "
        "job_names send_email concurrency 2 worker_ids w1,w2 host box pid 42",
        ns_, (long long)time(NULL));
    cmd("HSET %s:worker:w1 job_name send_email job_id j1 started_at 1700000001 args {} "
        "checkin half checkin_at 1700000002",
        ns_);
    http_res r;
    CHECK_INT(http("GET", "/worker_pools", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK(strstr(r.body, "\"worker_pool_id\": \"0123456789abcdef01234567\"") != NULL);
    CHECK(strstr(r.body, "\"host\": \"box\"") && strstr(r.body, "\"pid\": 42"));
    CHECK_INT(http("GET", "/busy_workers", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK(r.body[0] == '[' && strstr(r.body, "\"worker_id\": \"w1\"") &&
          !strstr(r.body, "\"w2\"") && strstr(r.body, "\"checkin\": \"half\""));
    CHECK_INT(http("GET", "/summary", NULL, &r), 0);
    CHECK(strstr(r.body, "\"busy_workers\": 1") && strstr(r.body, "\"live_pools\": 1") &&
          strstr(r.body, "\"workers\": 2"));
    tl_ns_delete(rc_, ns_);
}

/* Every route that answers a list answers [] for none, never null or nothing: as the
 * whole body, or as the list member of its object. */
static void empty_lists_are_brackets(void)
{
    serve("webe");
    static const char *const whole[] = {
        "/queues",      "/worker_pools", "/busy_workers",       "/periodic",
        "/rate_limits", "/succeeded",    "/succeeded?name=none"};
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++)
        CHECK_RES("GET", whole[i], NULL, 200, "[]");
    static const char *const member[][2] = {
        {"/retry_jobs", "\"jobs\": []"},          {"/scheduled_jobs?periodic=hide", "\"jobs\": []"},
        {"/dead_jobs?page=3", "\"jobs\": []"},    {"/queue_jobs?name=none", "\"jobs\": []"},
        {"/search?set=dead&q=x", "\"jobs\": []"}, {"/search?set=retry&q=x", "\"jobs\": []"},
        {"/summary", "\"queues\": []"},           {"/dashboard", "\"types\": []"},
        {"/doctor", "\"findings\": []"},
    };
    for (size_t i = 0; i < sizeof member / sizeof member[0]; i++) {
        http_res r;
        CHECK_INT(http("GET", member[i][0], NULL, &r), 0);
        if (r.status != 200 || !strstr(r.body, member[i][1]))
            tl_fail(__FILE__, __LINE__, "GET %s: status %d, body lacks %s: %s", member[i][0],
                    r.status, member[i][1], r.body);
    }
    tl_ns_delete(rc_, ns_);
}

static void bad_parameters_are_400_with_json_errors(void)
{
    serve("web400");
    static const char *const pages[] = {"abc", "-1", "1.5", "99999999999999999999", "%ZZ", "1%00"};
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        char path[64];
        snprintf(path, sizeof path, "/dead_jobs?page=%s", pages[i]);
        http_res r;
        CHECK_INT(http("GET", path, NULL, &r), 0);
        CHECK_INT(r.status, 400);
        CHECK_STR(wt_header(&r, "Content-Type"), json_type);
        CHECK(strncmp(r.body, "{\"error\": \"", 11) == 0 && r.body[r.len - 1] == '}');
    }
    static const char *const paths[] = {"/delete_dead_job/99999999999999999999/x",
                                        "/delete_dead_job/abc/x",
                                        "/retry_dead_job/--5/x",
                                        "/retry_dead_job/-99999999999999999999/x",
                                        "/retry_dead_job/17e9/x",
                                        "/delete_retry_job/1%32/x",
                                        "/delete_dead_job/1/bad%zzid",
                                        "/retry_dead_job/1/a%00b"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        http_res r;
        CHECK_INT(http("POST", paths[i], NULL, &r), 0);
        if (r.status != 400) tl_fail(__FILE__, __LINE__, "%s: status %d", paths[i], r.status);
    }
    /* a message with quotes and markup is escaped as Go would (HTML-safe) */
    CHECK_RES("GET", "/job/%3Cb%3E%22x", NULL, 404, "{\"error\": \"no job with this id\"}");
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- cwork's routes */

/* GET /result/<id>: the result a commit kept (PROTOCOL §22), as a JSON string, and 404
 * without one; nothing is written. */
static void job_results(void)
{
    serve("webresult");
    cmd("SET %s:cwork:result:r1 %s", ns_, "done <b>\"ok\"</b>\n");
    cmd("SET %s:cwork:result:a/b %s", ns_, "slash");
    CHECK_RES(
        "GET", "/result/r1", NULL, 200,
        "{\n\t\"id\": \"r1\",\n\t\"result\": \"done \\u003cb\\u003e\\\"ok\\\"\\u003c/b\\u003e\\n\"\n}");
    CHECK_RES("GET", "/result?id=a%2Fb", NULL, 200,
              "{\n\t\"id\": \"a/b\",\n\t\"result\": \"slash\"\n}");
    CHECK_RES("GET", "/result/r2", NULL, 404, "{\"error\": \"no result for this id\"}");
    char *dump = tl_ns_dump(rc_, ns_);
    char want[512];
    snprintf(
        want, sizeof want,
        "%s:cwork:result:a/b string slash\n%s:cwork:result:r1 string done <b>\"ok\"</b>\\x0a\n",
        ns_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    tl_ns_delete(rc_, ns_);
}

/* The UI's views of cwork's own features: rate limits (set, listed, removed), a tracked
 * batch's counts and the succeeded jobs types keep (PROTOCOL §20, §22, §23). */
static void rate_limits_batches_and_kept_successes(void)
{
    serve("webfeat");
    CHECK_RES("POST", "/rate_limit?name=mail&limit=100%2F1s", NULL, 200,
              "{\n\t\"status\": \"ok\"\n}");
    http_res r;
    CHECK_INT(http("GET", "/rate_limits", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK(strstr(r.body, "\"job_name\": \"mail\"") && strstr(r.body, "\"limit\": \"100/1s\"") &&
          strstr(r.body, "\"valid\": true") && strstr(r.body, "\"limited_now\": false"));
    char *dump = tl_ns_dump(rc_, ns_);
    char want[1024];
    snprintf(want, sizeof want, "%s:cwork:rate_limits hash mail=100/1s\n", ns_);
    CHECK_STR(dump, want);
    free(dump);
    CHECK_INT(http("POST", "/rate_limit?name=mail&limit=0%2F1s", NULL, &r), 0);
    CHECK_INT(r.status, 400); /* named, nothing written */
    CHECK_RES("POST", "/rate_limit?name=mail&limit=off", NULL, 200, "{\n\t\"status\": \"ok\"\n}");
    CHECK_RES("GET", "/rate_limits", NULL, 200, "[]");
    CHECK_INT(redis_int("EXISTS %s:cwork:rate_limits", ""), 0);

    /* a batch of two jobs, one counted as succeeded by hand through its hash */
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, NULL);
    char id[25] = "";
    CHECK_INT(cwork_batch_open(enq, CWORK_BATCH_ON_COMPLETE, "report", NULL, id, NULL), 0);
    char path[96];
    snprintf(path, sizeof path, "/batch?id=%s", id);
    CHECK_INT(http("GET", path, NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK(strstr(r.body, "\"total\": 0") && strstr(r.body, "\"sealed\": false") &&
          strstr(r.body, "\"when\": \"on_complete\"") &&
          strstr(r.body, "\"callback\": \"report\"") &&
          strstr(r.body, "\"callback_state\": \"waiting\"") && strstr(r.body, id));
    CHECK_RES("GET", "/batch?id=0123456789abcdef01234567", NULL, 404, NULL);
    CHECK_INT(http("GET", "/batch?id=not%20hex", NULL, &r), 0);
    CHECK_INT(r.status, 400);
    cwork_enqueuer_free(enq);

    /* a kept success, as a pool's commit writes it */
    cmd("SADD %s:known_jobs calc", ns_);
    cmd("ZADD %s:cwork:succeeded:calc 1700000001000 "
        "{\"ran_at\":1700000000500,\"took_us\":250,\"job\":{\"name\":\"calc\",\"id\":\"k1\",\"t\":1,"
        "\"args\":{}}}",
        ns_);
    cmd("SET %s:cwork:result:k1 42", ns_);
    CHECK_INT(http("GET", "/succeeded", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK(strstr(r.body, "\"id\": \"k1\"") && strstr(r.body, "\"took_us\": 250") &&
          strstr(r.body, "\"finished_at_ms\": 1700000001000") &&
          strstr(r.body, "\"result\": \"42\""));
    CHECK_RES("GET", "/succeeded?name=other", NULL, 200, "[]");
    CHECK_INT(http("GET", "/succeeded?limit=0", NULL, &r), 0);
    CHECK_INT(r.status, 400);
    tl_ns_delete(rc_, ns_);
}

static void ids_with_slashes_and_one_name(void)
{
    serve("webid");
    const char *id = "periodic:calc:*/5:1700000000";
    cmd("SADD %s:known_jobs calc send_email", ns_);
    cmd("ZADD %s:dead 1700000100 {\"name\":\"calc\",\"id\":\"%s\",\"t\":1,\"args\":{},\"fails\":1,"
        "\"err\":\"x\",\"failed_at\":1700000100}",
        ns_, id);
    cmd("ZADD %s:dead 1700000101 {\"name\":\"calc\",\"id\":\"c2\",\"t\":1,\"args\":{}}", ns_);
    cmd("ZADD %s:dead 1700000100 %s", ns_, DEAD_JOB);
    http_res r;
    CHECK_INT(http("GET", "/dead_jobs?name=calc", NULL, &r), 0);
    CHECK(strncmp(r.body, "{\n\t\"count\": 2,", 14) == 0 && !strstr(r.body, "send_email"));
    CHECK_INT(http("GET", "/job/periodic%3Acalc%3A*%2F5%3A1700000000", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    const char head[] = "{\n\t\"place\": \"dead\",\n\t\"at\": 1700000100,\n\t\"now\": ";
    CHECK(strncmp(r.body, head, sizeof head - 1) == 0);
    /* its story (PROTOCOL §26): what the job's fields tell, no failure kept */
    const char story[] =
        ",\n\t\"first_enqueued_at\": 1,\n\t\"last_requeued_at\": 0,\n\t\"pool\": \"\",\n\t"
        "\"pool_host\": \"\",\n\t\"pool_pid\": 0,\n\t\"worker\": \"\",\n\t\"started_at\": 0,\n\t"
        "\"checkin\": \"\",\n\t\"checkin_at\": 0,\n\t\"failures\": [],\n\t\"phases\": [\n\t\t"
        "{\"state\": \"waiting\", \"from\": 1, \"until\": 1700000100},\n\t\t"
        "{\"state\": \"dead\", \"from\": 1700000100, \"until\": 0}\n\t],\n\t\"job\": {\n\t\t\"name\"";
    CHECK(strstr(r.body, story) != NULL);
    /* with the failures a cwork pool kept: each of them, and the first enqueue */
    cmd("RPUSH %s:cwork:failures:%s {\"failed_at\":1700000100,\"fails\":1,\"err\":\"x\",\"t\":1,"
        "\"ran_at\":1700000090500,\"took_us\":9500000,\"first_t\":1}",
        ns_, id);
    CHECK_INT(http("GET", "/job/periodic%3Acalc%3A*%2F5%3A1700000000", NULL, &r), 0);
    const char kept[] =
        "\t\"failures\": [\n\t\t{\"failed_at\": 1700000100, \"fails\": 1, \"enqueued_at\": 1, "
        "\"ran_at_ms\": 1700000090500, \"took_us\": 9500000, \"retry_at\": 0, \"err\": \"x\"}\n\t],\n\t"
        "\"phases\": [\n\t\t{\"state\": \"waiting\", \"from\": 1, \"until\": 1700000090},\n\t\t"
        "{\"state\": \"running\", \"from\": 1700000090, \"until\": 1700000100},\n\t\t"
        "{\"state\": \"dead\", \"from\": 1700000100, \"until\": 0}\n\t],";
    CHECK(r.status == 200 && strstr(r.body, kept) != NULL);
    CHECK_RES("GET", "/job/nope", NULL, 404, NULL);
    CHECK_RES("POST", "/retry_dead_job/1700000100/periodic%3Acalc%3A*%2F5%3A1700000000", NULL, 200,
              status_ok);
    CHECK_INT(redis_int("LLEN %s:jobs:calc", ""), 1);
    /* unencoded, the rest of the path is the id as well */
    cmd("ZADD %s:retry 1700000200 {\"name\":\"calc\",\"id\":\"%s\",\"t\":1,\"args\":{}}", ns_, id);
    CHECK_RES("POST", "/delete_retry_job/1700000200/periodic:calc:*/5:1700000000", NULL, 200,
              status_ok);
    CHECK_INT(redis_int("ZCARD %s:retry", ""), 0);
    cmd("ZADD %s:scheduled 1700000300 {\"name\":\"calc\",\"id\":\"s1\",\"t\":1,\"args\":{}}", ns_);
    CHECK_RES("POST", "/delete_scheduled_job/1700000300/s1", NULL, 200, status_ok);
    /* one name's dead jobs only */
    CHECK_RES("POST", "/retry_all_dead_jobs?name=calc", NULL, 200, status_ok);
    CHECK_INT(redis_int("ZCARD %s:dead", ""), 1);
    CHECK_INT(redis_int("LLEN %s:jobs:calc", ""), 2);
    CHECK_RES("POST", "/delete_all_dead_jobs?name=calc", NULL, 200, status_ok);
    CHECK_INT(redis_int("ZCARD %s:dead", ""), 1);
    CHECK_RES("POST", "/delete_all_dead_jobs", NULL, 200, status_ok);
    CHECK_INT(redis_int("EXISTS %s:dead", ""), 0);
    cmd("ZADD %s:dead 1700000100 %s", ns_, DEAD_JOB);
    CHECK_RES("POST", "/retry_all_dead_jobs", NULL, 200, status_ok);
    CHECK_INT(redis_int("LLEN %s:jobs:send_email", ""), 1);
    tl_ns_delete(rc_, ns_);
}

/* Job bodies follow the server's Go flavour: every field under the fork, upstream
 * workwebui's under upstream (no d, no trace); unique_key shows in both. */
static void job_bodies_follow_the_go_flavour(void)
{
    for (int flavor = 0; flavor < 2; flavor++) {
        serve_flavour("webfl", (cwork_go_flavor)flavor);
        cmd("ZADD %s:retry 1700000200 {\"name\":\"calc\",\"id\":\"r1\",\"t\":1,\"args\":null,"
            "\"unique\":true,\"unique_key\":\"k\",\"fails\":1,\"err\":\"e\",\"failed_at\":2,"
            "\"d\":60,\"trace\":{\"traceparent\":\"00-ab-cd-01\"}}",
            ns_);
        const char *tail = flavor == CWORK_GO_FORK
                               ? "\"failed_at\": 2,\n\t\t\t\"d\": 60,\n\t\t\t\"trace\": {\n\t\t\t\t"
                                 "\"traceparent\": \"00-ab-cd-01\"\n\t\t\t}\n\t\t}\n\t]\n}"
                               : "\"failed_at\": 2\n\t\t}\n\t]\n}";
        http_res r;
        CHECK_INT(http("GET", "/retry_jobs", NULL, &r), 0);
        CHECK_INT(r.status, 200);
        /* each flavour's Job: the fork's has no unique_key, upstream's no d or trace */
        CHECK((strstr(r.body, "\t\t\t\"unique\": true,\n\t\t\t\"unique_key\": \"k\",\n") != NULL) ==
              (flavor == CWORK_GO_UPSTREAM));
        CHECK(r.len > strlen(tail) && strcmp(r.body + r.len - strlen(tail), tail) == 0);
        CHECK_INT(http("GET", "/job/r1", NULL, &r), 0);
        CHECK_INT(r.status, 200);
        CHECK((strstr(r.body, "\"unique_key\": \"k\"") != NULL) == (flavor == CWORK_GO_UPSTREAM));
        CHECK((strstr(r.body, "\"d\": 60") != NULL) == (flavor == CWORK_GO_FORK));
        char *dump = tl_ns_dump(rc_, ns_);
        char want[512];
        snprintf(want, sizeof want,
                 "%s:retry zset {\"name\":\"calc\",\"id\":\"r1\",\"t\":1,\"args\":null,"
                 "\"unique\":true,\"unique_key\":\"k\",\"fails\":1,\"err\":\"e\",\"failed_at\":2,"
                 "\"d\":60,\"trace\":{\"traceparent\":\"00-ab-cd-01\"}}=1700000200\n",
                 ns_);
        CHECK_STR(dump, want);
        free(dump);
        tl_ns_delete(rc_, ns_);
    }
}

/* Every id can be addressed: "", "." and ".." (which browsers and curl strip from a
 * path, encoded or not) through ?id=, the empty id also as an empty path segment, and
 * members with negative scores. */
static void every_id_is_addressable(void)
{
    serve("webid");
    cmd("SADD %s:known_jobs a", ns_);
    static const char *const ids[] = {"", ".", "..", "x"};
    for (int i = 0; i < 4; i++)
        cmd("ZADD %s:dead %d {\"name\":\"a\",\"id\":\"%s\",\"t\":1,\"fails\":4}", ns_,
            i == 3 ? -5 : 1700000000 + i, ids[i]);
    http_res r;
    CHECK_INT(http("GET", "/job?id=..", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK(strstr(r.body, "\"place\": \"dead\"") && strstr(r.body, "\"id\": \"..\""));
    CHECK_INT(http("GET", "/job?id=", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK(strstr(r.body, "\"at\": 1700000000") != NULL);
    CHECK_INT(http("GET", "/job?id=x", NULL, &r), 0);
    CHECK(r.status == 200 && strstr(r.body, "\"at\": -5") != NULL);
    CHECK_RES("POST", "/retry_dead_job/1700000002?id=..", NULL, 200, status_ok);
    CHECK_RES("POST", "/delete_dead_job/1700000001?id=%2E", NULL, 200, status_ok);
    CHECK_RES("POST", "/delete_dead_job/1700000000/", NULL, 200, status_ok);
    CHECK_RES("POST", "/delete_dead_job/-5?id=x", NULL, 200, status_ok);
    CHECK_INT(redis_int("EXISTS %s:dead", ""), 0);
    CHECK_INT(redis_int("LLEN %s:jobs:a", ""), 1);
    /* pause by query too; an empty name is refused */
    CHECK_RES("POST", "/pause?name=..", NULL, 200, status_ok);
    CHECK_INT(redis_int("EXISTS %s:jobs:..:paused", ""), 1);
    CHECK_RES("POST", "/unpause?name=..", NULL, 200, status_ok);
    CHECK_RES("POST", "/pause?name=", NULL, 400, NULL);
    CHECK_RES("POST", "/pause/", NULL, 400, NULL);
    tl_ns_delete(rc_, ns_);
}

static void pause_and_unpause(void)
{
    serve("webpause");
    cmd("SADD %s:known_jobs send_email", ns_);
    CHECK_RES("POST", "/pause/send_email", NULL, 200, status_ok);
    CHECK_INT(redis_int("EXISTS %s:jobs:send_email:paused", ""), 1);
    http_res r;
    CHECK_INT(http("GET", "/summary", NULL, &r), 0);
    CHECK(strstr(r.body, "\"paused\": true") != NULL);
    CHECK_RES("POST", "/unpause/send_email", NULL, 200, status_ok);
    CHECK_INT(redis_int("EXISTS %s:jobs:send_email:paused", ""), 0);
    tl_ns_delete(rc_, ns_);
}

/* One malformed heartbeat (pid not a number) must not take the queues and the dead set
 * out of the UI, nor make /metrics say Redis is down. */
static void a_malformed_pool_hash_does_not_blank_the_ui(void)
{
    serve("webbadpool");
    cmd("SADD %s:known_jobs send_email", ns_);
    cmd("SADD %s:worker_pools bad0bad0bad0bad0bad0bad0", ns_);
    cmd("HSET %s:worker_pools:bad0bad0bad0bad0bad0bad0 pid notanumber heartbeat_at 1", ns_);
    http_res r;
    CHECK_INT(http("GET", "/summary", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK(strstr(r.body, "send_email") != NULL);
    CHECK_INT(http("GET", "/metrics", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK(strstr(r.body, "cwork_up 1") != NULL);
    tl_ns_delete(rc_, ns_);
}

static void unknown_routes_404_and_wrong_methods_405(void)
{
    serve("webr");
    static const char *const missing[] = {"/nope",  "/queues/",           "/queues/x",
                                          "/pause", "/delete_dead_job/1", "/job/",
                                          "//",     "/app.js/x"};
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
        http_res r;
        CHECK_INT(http("GET", missing[i], NULL, &r), 0);
        if (r.status != 404 || !strstr(r.body, "\"error\""))
            tl_fail(__FILE__, __LINE__, "%s: %d %s", missing[i], r.status, r.body);
    }
    http_res r;
    CHECK_INT(http("POST", "/queues", NULL, &r), 0);
    CHECK_INT(r.status, 405);
    CHECK_STR(wt_header(&r, "Allow"), "GET, HEAD, OPTIONS");
    CHECK_STR(wt_header(&r, "Content-Type"), json_type);
    CHECK_INT(http("GET", "/retry_all_dead_jobs", NULL, &r), 0);
    CHECK_INT(r.status, 405);
    CHECK_STR(wt_header(&r, "Allow"), "POST, OPTIONS");
    CHECK_INT(http("DELETE", "/pause/x", NULL, &r), 0);
    CHECK_INT(r.status, 405);
    CHECK_INT(http("PUT", "/", NULL, &r), 0);
    CHECK_INT(r.status, 405);
    CHECK_INT(http("OPTIONS", "/dead_jobs", NULL, &r), 0);
    CHECK_INT(r.status, 204);
    CHECK_STR(wt_header(&r, "Allow"), "GET, HEAD, OPTIONS");
    CHECK(wt_header(&r, "Access-Control-Allow-Origin") == NULL);
}

static void page_and_assets_with_security_headers(void)
{
    serve("webui");
    static const struct {
        const char *path, *type, *needle;
    } assets[] = {{"/", "text/html; charset=utf-8", "<script type=\"module\" src=\"app.js\">"},
                  {"/app.js", "application/javascript; charset=utf-8", "textContent"},
                  {"/work.js", "application/javascript; charset=utf-8", "textContent"},
                  {"/app.css", "text/css; charset=utf-8", "body"}};
    for (size_t i = 0; i < sizeof assets / sizeof assets[0]; i++) {
        http_res r;
        CHECK_INT(http("GET", assets[i].path, NULL, &r), 0);
        CHECK_INT(r.status, 200);
        CHECK_STR(wt_header(&r, "Content-Type"), assets[i].type);
        CHECK(strstr(r.body, assets[i].needle) != NULL);
        const char *csp = wt_header(&r, "Content-Security-Policy");
        CHECK(csp && strstr(csp, "script-src 'self'") && !strstr(csp, "unsafe-inline"));
        CHECK_STR(wt_header(&r, "X-Content-Type-Options"), "nosniff");
        CHECK_STR(wt_header(&r, "X-Frame-Options"), "DENY");
        char etag[128], inm[200];
        snprintf(etag, sizeof etag, "%s", wt_header(&r, "ETag") ? wt_header(&r, "ETag") : "");
        snprintf(inm, sizeof inm, "If-None-Match: %s\r\n", etag);
        CHECK_INT(http("GET", assets[i].path, inm, &r), 0);
        CHECK_INT(r.status, 304);
    }
    /* no inline script in the page: every <script> has a src */
    http_res r;
    CHECK_INT(http("GET", "/", NULL, &r), 0);
    for (const char *p = strstr(r.body, "<script"); p; p = strstr(p + 1, "<script"))
        CHECK(strncmp(p, "<script type=\"module\" src=", 26) == 0);
    CHECK(strstr(r.body, " style=") == NULL && strstr(r.body, " onclick=") == NULL);
    CHECK_INT(http("HEAD", "/", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK_INT(r.len, 0);
    CHECK_INT(http("GET", "/queues", NULL, &r), 0);
    CHECK_STR(wt_header(&r, "X-Frame-Options"), "DENY");
    CHECK_STR(wt_header(&r, "Cache-Control"), "no-store");
}

/* ---------------------------------------------------------------- checks */

static void cross_site_posts_are_refused(void)
{
    serve("weborigin");
    cmd("SADD %s:known_jobs send_email", ns_);
    char same[128];
    snprintf(same, sizeof same, "Origin: http://127.0.0.1:%d\r\n", port_);
    static const char *const evil[] = {
        "Origin: http://evil.example\r\n", "Origin: null\r\n", "Origin: http://127.0.0.1:1\r\n",
        "Referer: http://evil.example/page\r\n",
        "Origin: https://127.0.0.1\r\nReferer: http://127.0.0.1/\r\n"};
    for (size_t i = 0; i < sizeof evil / sizeof evil[0]; i++) {
        http_res r;
        CHECK_INT(http("POST", "/pause/send_email", evil[i], &r), 0);
        CHECK_INT(r.status, 403);
        CHECK(strstr(r.body, "\"error\"") != NULL);
    }
    CHECK_INT(redis_int("EXISTS %s:jobs:send_email:paused", ""), 0);
    CHECK_RES("POST", "/pause/send_email", same, 200, status_ok);
    CHECK_RES("POST", "/unpause/send_email", NULL, 200, status_ok); /* a script: no header */
    char referer[128];
    snprintf(referer, sizeof referer, "Referer: http://127.0.0.1:%d/#dead\r\n", port_);
    CHECK_RES("POST", "/pause/send_email", referer, 200, status_ok);
    /* a proxy that keeps its own Host but forwards the browser's */
    CHECK_RES("POST", "/unpause/send_email",
              "Origin: https://jobs.example.com\r\nX-Forwarded-Host: jobs.example.com\r\n", 200,
              status_ok);
    /* reads are not refused for their Origin; DNS rebinding (a foreign Host) is */
    CHECK_RES("GET", "/queues", "Origin: http://evil.example\r\n", 200, NULL);
    http_res r;
    char req[256];
    int n = snprintf(req, sizeof req,
                     "GET /queues HTTP/1.1\r\nHost: evil.example:%d\r\n"
                     "Connection: close\r\n\r\n",
                     port_);
    CHECK_INT(wt_raw(port_, req, (size_t)n, &r), 0);
    CHECK_INT(r.status, 403);
    n = snprintf(req, sizeof req,
                 "GET /queues HTTP/1.1\r\nHost: localhost:%d\r\n"
                 "Connection: close\r\n\r\n",
                 port_);
    CHECK_INT(wt_raw(port_, req, (size_t)n, &r), 0);
    CHECK_INT(r.status, 200);
    tl_ns_delete(rc_, ns_);
}

static void basic_auth_when_configured(void)
{
    fresh_ns("webauth");
    cwork_web_options o;
    cwork_web_options_init(&o);
    o.listen = "127.0.0.1:0";
    o.auth = "admin:s3cr:et";
    cwork_web *w = cwork_web_start(redis_, ns_, &o, NULL);
    CHECK(w != NULL);
    if (!w) return;
    int port = cwork_web_port(w);
    http_res r;
    CHECK_INT(http_port(port, "GET", "/queues", NULL, &r), 0);
    CHECK_INT(r.status, 401);
    const char *www = wt_header(&r, "WWW-Authenticate");
    CHECK(www && strncmp(www, "Basic realm=", 12) == 0);
    CHECK_INT(http_port(port, "GET", "/", NULL, &r), 0);
    CHECK_INT(r.status, 401);
    /* admin:wrong, admin:s3cr:e, garbage, another scheme */
    static const char *const bad[] = {
        "Authorization: Basic YWRtaW46d3Jvbmc=\r\n", "Authorization: Basic YWRtaW46czNjcjpl\r\n",
        "Authorization: Basic !!!!\r\n", "Authorization: Bearer YWRtaW46czNjcjpldA==\r\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_INT(http_port(port, "GET", "/queues", bad[i], &r), 0);
        CHECK_INT(r.status, 401);
    }
    CHECK_INT(
        http_port(port, "GET", "/queues", "Authorization: Basic YWRtaW46czNjcjpldA==\r\n", &r), 0);
    CHECK_INT(r.status, 200);
    CHECK_INT(http_port(port, "GET", "/metrics", "Authorization: basic YWRtaW46czNjcjpldA\r\n", &r),
              0);
    CHECK_INT(r.status, 200);
    cwork_web_free(w);
    /* The library reads no environment: CWORK_WEB_AUTH is the cwork command's (tested in
     * cli_serves_until_sigint); with the option NULL there is no auth. */
    setenv("CWORK_WEB_AUTH", "env:pw", 1);
    o.auth = NULL;
    w = cwork_web_start(redis_, ns_, &o, NULL);
    unsetenv("CWORK_WEB_AUTH");
    CHECK(w != NULL);
    if (!w) return;
    port = cwork_web_port(w);
    CHECK_INT(http_port(port, "GET", "/queues", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    cwork_web_free(w);
    o.auth = "no-colon";
    cwork_error err = {0};
    CHECK(cwork_web_start(redis_, ns_, &o, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
}

/* Sends bytes on a fresh connection and reads whatever comes back. */
static void poke(const char *bytes, size_t len)
{
    http_res r;
    wt_half_close_ = 1;
    wt_raw(port_, bytes, len, &r);
    wt_half_close_ = 0;
}

static void nonsense_never_stops_the_server(void)
{
    serve("webjunk");
    static char big[6000];
    memset(big, 'a', sizeof big - 1);
    char req[7000];
    snprintf(req, sizeof req, "GET /%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", big);
    http_res r;
    CHECK_INT(wt_raw(port_, req, strlen(req), &r), 0);
    CHECK_INT(r.status, 414);
    static const char *const junk[] = {
        "GARBAGE\r\n\r\n",
        "GET\r\n\r\n",
        "GET / HTTP/9.9\r\n\r\n",
        "GET /queues HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n",
        "POST /pause/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999999\r\n\r\n",
        "POST /pause/x HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "GET http://evil.example/queues HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "GET * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "GET /job/%%%%% HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "GET /dead_jobs?page=1&page=2&name&=&&& HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "GET /queues HTTP/1.1\r\nHost: [::1\r\n\r\n",
        "GET /queues HTTP/1.1\r\nAuthorization: Basic \r\n\r\n",
        "POST /delete_dead_job/1/x HTTP/1.1\r\nOrigin: http://[\r\nReferer: ://\r\n\r\n",
        "GET /queues HTTP/1.1\r\nHost: 127.0.0.1",
        "\x00\x01\x02\xff\xfe\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        poke(junk[i], strlen(junk[i]) + (i == sizeof junk / sizeof junk[0] - 1 ? 5 : 0));
    static char hdr[70000];
    memcpy(hdr, "GET /queues HTTP/1.1\r\nX: ", 25);
    memset(hdr + 25, 'x', sizeof hdr - 30);
    memcpy(hdr + sizeof hdr - 5, "\r\n\r\n", 5);
    poke(hdr, sizeof hdr - 1);
    int fd = wt_connect(port_); /* a client that connects and says nothing */
    CHECK_RES("GET", "/queues", NULL, 200, "[]");
    CHECK_RES("GET", "/dead_jobs?name=%C3%28", NULL, 200, NULL); /* invalid UTF-8 name */
    close(fd);
    CHECK_RES("POST", "/pause/%E2%80%A8%3Cx%3E", NULL, 200, status_ok);
    CHECK_RES("GET", "/summary", NULL, 200, NULL);
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- /metrics */

static void metrics_in_prometheus_format(void)
{
    serve("webm");
    cmd("SADD %s:known_jobs send_email %s", ns_, "we\"ird\\name");
    cmd("LPUSH %s:jobs:send_email {\"name\":\"send_email\",\"id\":\"a\",\"t\":%lld,\"args\":{}}",
        ns_, (long long)time(NULL) - 5);
    cmd("ZADD %s:dead 1700000100 %s", ns_, DEAD_JOB);
    cmd("ZADD %s:retry 1700000100 {\"name\":\"x\",\"id\":\"r\",\"t\":1}", ns_);
    cmd("SET %s:jobs:send_email:paused 1", ns_);
    http_res r;
    CHECK_INT(http("GET", "/metrics", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK_STR(wt_header(&r, "Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    static const char *const lines[] = {"\ncwork_up 1\n",
                                        "\ncwork_queue_jobs{job_name=\"send_email\"} 1\n",
                                        "\ncwork_queue_jobs{job_name=\"we\\\"ird\\\\name\"} 0\n",
                                        "\ncwork_queue_paused{job_name=\"send_email\"} 1\n",
                                        "\ncwork_dead_jobs 1\n",
                                        "\ncwork_retry_jobs 1\n",
                                        "\ncwork_scheduled_jobs 0\n",
                                        "\ncwork_busy_workers 0\n",
                                        "\ncwork_worker_pools{state=\"live\"} 0\n",
                                        "# TYPE cwork_queue_latency_seconds gauge\n"};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (!strstr(r.body, lines[i]))
            tl_fail(__FILE__, __LINE__, "missing %s in:\n%s", lines[i], r.body);
    CHECK(strstr(r.body, "cwork_queue_latency_seconds{job_name=\"send_email\"} ") != NULL);
    if (system("command -v promtool >/dev/null 2>&1") != 0) {
        printf("     (promtool is not installed: `promtool check metrics` skipped)\n");
    } else {
        char path[] = "/tmp/cwt-metrics-XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0 && write(fd, r.body, r.len) == (ssize_t)r.len);
        close(fd);
        char sh[256];
        snprintf(sh, sizeof sh, "promtool check metrics < %s", path);
        CHECK_INT(system(sh), 0);
        unlink(path);
    }
    tl_ns_delete(rc_, ns_);
}

static void metrics_of_a_pool_and_without_redis(void)
{
    fresh_ns("webmp");
    cwork_pool_options po;
    cwork_pool_options_init(&po);
    cwork_pool *pool = cwork_pool_new(redis_, ns_, &po, NULL);
    CHECK(pool != NULL);
    cwork_web_options o;
    cwork_web_options_init(&o);
    o.listen = "127.0.0.1:0";
    o.pool = pool;
    cwork_web *w = cwork_web_start(redis_, ns_, &o, NULL);
    CHECK(w != NULL);
    http_res r;
    if (w) {
        CHECK_INT(http_port(cwork_web_port(w), "GET", "/metrics", NULL, &r), 0);
        char want[128];
        snprintf(want, sizeof want, "\ncwork_pool_jobs_processed_total{pool_id=\"%s\"} 0\n",
                 cwork_pool_id(pool));
        CHECK(strstr(r.body, want) != NULL);
        CHECK(strstr(r.body, "# TYPE cwork_pool_jobs_failed_total counter\n") != NULL);
        cwork_web_free(w);
    }
    cwork_pool_free(pool);
    /* Redis unreachable: JSON routes answer 503, /metrics says cwork_up 0 */
    cwork_redis_options ro;
    cwork_redis_options_init(&ro);
    ro.connect_timeout_ms = 200;
    ro.checkout_timeout_ms = 300;
    cwork_redis *down = cwork_redis_new("redis://127.0.0.1:1", &ro, NULL);
    o.pool = NULL;
    w = down ? cwork_web_start(down, ns_, &o, NULL) : NULL;
    CHECK(w != NULL);
    if (w) {
        int port = cwork_web_port(w);
        CHECK_INT(http_port(port, "GET", "/queues", NULL, &r), 0);
        CHECK_INT(r.status, 503);
        CHECK(strncmp(r.body, "{\"error\": \"", 11) == 0);
        CHECK_INT(http_port(port, "GET", "/metrics", NULL, &r), 0);
        CHECK_INT(r.status, 200);
        CHECK(strstr(r.body, "\ncwork_up 0\n") != NULL);
        CHECK(strstr(r.body, "cwork_pool_jobs") == NULL); /* no pool this time */
        cwork_web_free(w);
    }
    cwork_redis_free(down);
}

/* ---------------------------------------------------------------- start and stop */

static int warned_;
static void capture(void *ud, cwork_log_level level, const char *msg, const cwork_log_field *f,
                    size_t n)
{
    if (level == CWORK_LOG_WARN && strcmp(msg, "web.no_auth") == 0) warned_++;
}

static int open_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++)
        n += fcntl(fd, F_GETFD) != -1;
    return n;
}

static void listen_errors_and_warning_beyond_loopback(void)
{
    int fds = open_fds();
    cwork_web_options o;
    cwork_web_options_init(&o);
    cwork_error err = {0};
    static const char *const bad[] = {"nonsense", "127.0.0.1:", "127.0.0.1:99999", ":x",
                                      "no.such.host.invalid:80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.listen = bad[i];
        CHECK(cwork_web_start(redis_, "x", &o, &err) == NULL);
        CHECK_INT(err.code, CWORK_EINVAL);
    }
    char inuse[32];
    snprintf(inuse, sizeof inuse, "127.0.0.1:%d", port_);
    o.listen = inuse;
    CHECK(cwork_web_start(redis_, "x", &o, &err) == NULL);
    CHECK(strstr(err.message, "cannot listen") != NULL);
    cwork_set_logger(capture, NULL, CWORK_LOG_DEBUG);
    o.listen = "127.0.0.1:0";
    cwork_web_free(cwork_web_start(redis_, "x", &o, NULL));
    CHECK_INT(warned_, 0);
    /* Beyond loopback without auth: refused, unless insecure is asked for (and warned). */
    o.listen = "0.0.0.0:0";
    memset(&err, 0, sizeof err);
    CHECK(cwork_web_start(redis_, "x", &o, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    CHECK(strstr(err.message, "insecure") != NULL && strstr(err.message, "auth"));
    CHECK(strstr(err.message, "CWORK_WEB_AUTH") == NULL); /* the command's name, not ours */
    CHECK_INT(warned_, 0);
    o.insecure = true;
    cwork_web *w = cwork_web_start(redis_, "x", &o, NULL);
    CHECK(w != NULL);
    cwork_web_free(w);
    CHECK_INT(warned_, 1);
    o.insecure = false;
    o.auth = "a:b";
    w = cwork_web_start(redis_, "x", &o, NULL);
    CHECK(w != NULL);
    cwork_web_free(w);
    CHECK_INT(warned_, 1);
    cwork_set_logger(NULL, NULL, CWORK_LOG_WARN);
    CHECK_INT(open_fds(), fds); /* every listening socket was closed */
    cwork_web_options_init(&o);
    CHECK_STR(o.listen, "127.0.0.1:5040");
    CHECK(o.auth == NULL && o.pool == NULL && !o.insecure);
    cwork_web_free(NULL);
}

/* Waits until fd's connection is established (in the server's accept queue or
 * accepted): a burst of connects overflows the listen backlog, and a dropped SYN is
 * only sent again a second or more later. 0, or -1 when it failed or took over 10 s. */
static int established(int fd)
{
    struct pollfd p = {fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    return poll(&p, 1, 10000) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
                   err == 0
               ? 0
               : -1;
}

/* A connection from source address 127.0.0.<host> (all of 127/8 is loopback on Linux),
 * non-blocking, or -1. */
static int connect_from(int host)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in src = {0}, dst = {0};
    src.sin_family = dst.sin_family = AF_INET;
    src.sin_addr.s_addr = htonl(0x7f000000u | (unsigned)host);
    dst.sin_port = htons((uint16_t)port_);
    dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&src, sizeof src) != 0 ||
        (connect(fd, (struct sockaddr *)&dst, sizeof dst) != 0 && errno != EINPROGRESS)) {
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

/* Whether the server has closed fd (a read sees end of file or a reset, after whatever
 * it sent before closing). */
static int closed_by_server(int fd)
{
    char buf[512];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
    }
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/* 1,000 idle and slow (slowloris) connections from 25 addresses are held open: the UI
 * still answers at once (with a thread per connection, 64 of them made it unreachable).
 * One address cannot hold more than 64; stalled connections are closed after 10 s; a
 * query string counts in the request target's length. */
static void the_ui_answers_while_a_thousand_idle_connections_are_held(void)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 4096 && rl.rlim_max > rl.rlim_cur) {
        rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 2600) { /* both ends are in this process */
        printf("     (skipped: only %llu file descriptors)\n", (unsigned long long)rl.rlim_cur);
        return;
    }
    serve("webidle"); /* started after raising the limit: its connection limit follows it */
    enum { N = 1000, HOSTS = 25 };
    static int fds[N];
    int opened = 0;
    for (int i = 0; i < N; i++) {
        fds[i] = connect_from(2 + i % HOSTS);
        if (fds[i] < 0 || established(fds[i]) != 0) continue;
        opened++;
        if (i % 2) /* half of them start a request and stall (slowloris) */
            send(fds[i], "GET /queues HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: ", 43, MSG_NOSIGNAL);
    }
    CHECK_INT(opened, N);
    tl_sleep_ms(300);
    long long t0 = tl_now_ms();
    http_res r;
    CHECK_INT(http("GET", "/queues", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK_INT(http("GET", "/", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    long long took = tl_now_ms() - t0;
    CHECK(took < 3000);
    int dropped = 0;
    for (int i = 0; i < N; i++)
        dropped += closed_by_server(fds[i]);
    CHECK_INT(dropped, 0); /* 40 per address: under the per-address limit */
    /* One address past its limit: the surplus is refused, the others still served. */
    enum { M = 100 };
    int more[M], refused = 0;
    for (int i = 0; i < M; i++)
        if ((more[i] = connect_from(200)) >= 0 && established(more[i]) != 0) {
            close(more[i]);
            more[i] = -1;
        }
    tl_sleep_ms(1000);
    for (int i = 0; i < M; i++)
        refused += more[i] < 0 || closed_by_server(more[i]);
    CHECK(refused >= M - 64);
    CHECK(refused <= M - 60);
    if (refused < M - 64 || refused > M - 60)
        printf("     %d of %d connections from one address refused\n", refused, M);
    CHECK_INT(http("GET", "/queues", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    /* Too long a target, the query included: 414. */
    static char path[6000];
    memset(path, 'a', sizeof path - 1);
    memcpy(path, "/queues?x=", 10);
    CHECK_INT(http("GET", path, NULL, &r), 0);
    CHECK_INT(r.status, 414);
    /* The stalled and idle connections are closed after 10 s of silence. */
    int left = N;
    for (long long t = tl_now_ms(); left > 0 && tl_now_ms() - t < 25000;) {
        tl_sleep_ms(500);
        left = 0;
        for (int i = 0; i < N; i++)
            if (fds[i] >= 0 && !closed_by_server(fds[i])) left++;
    }
    if (left > 0) {
        int idle = 0;
        for (int i = 0; i < N; i += 2)
            idle += fds[i] >= 0 && !closed_by_server(fds[i]);
        tl_fail(__FILE__, __LINE__, "%d connections still open after 25 s (%d idle, %d half-sent)",
                left, idle, left - idle);
    }
    CHECK(tl_now_ms() - t0 >= 9000); /* not before the timeout */
    for (int i = 0; i < N; i++)
        if (fds[i] >= 0) close(fds[i]);
    for (int i = 0; i < M; i++)
        if (more[i] >= 0) close(more[i]);
    CHECK_INT(http("GET", "/queues", NULL, &r), 0);
    CHECK_INT(r.status, 200);
}

static void *hammer(void *arg)
{
    long bad = 0;
    for (int i = 0; i < 40; i++) {
        http_res *r = malloc(sizeof *r);
        const char *path = i % 3 == 0 ? "/summary" : i % 3 == 1 ? "/dead_jobs?page=2" : "/";
        if (http(i % 5 == 4 ? "POST" : "GET", path, NULL, r) != 0 ||
            (r->status != 200 && r->status != 405))
            bad++;
        free(r);
    }
    return (void *)bad;
}

static void concurrent_requests(void)
{
    serve("webconc");
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, hammer, NULL);
    long bad = 0;
    for (int i = 0; i < 4; i++) {
        void *b;
        pthread_join(t[i], &b);
        bad += (long)b;
    }
    CHECK_INT(bad, 0);
    /* a connection kept alive over two requests */
    int fd = wt_connect(port_);
    char req[200];
    int n = snprintf(req, sizeof req, "GET /queues HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port_);
    char buf[4096];
    int ok = 0;
    for (int k = 0; k < 2; k++) {
        if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) break;
        ssize_t got = recv(fd, buf, sizeof buf - 1, 0);
        ok += got > 0 && strncmp(buf, "HTTP/1.1 200", 12) == 0;
    }
    close(fd);
    CHECK_INT(ok, 2);
}

/* ---------------------------------------------------------------- cwork web */

/* Starts `cwork web ARGS…` with stdout on a pipe; returns its pid. */
static pid_t spawn_cli(const char *const *args, int *out_fd)
{
    const char *cli = getenv("CWORK_CLI");
    int p[2];
    if (!cli || pipe(p) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        const char *argv[16] = {cli, "web"};
        for (int i = 0; args[i] && i < 13; i++)
            argv[i + 2] = args[i];
        execv(cli, (char *const *)argv);
        _exit(127);
    }
    close(p[1]);
    *out_fd = p[0];
    return pid;
}

static int wait_status(pid_t pid)
{
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void cli_serves_until_sigint(void)
{
    if (!getenv("CWORK_CLI")) {
        printf("     (CWORK_CLI is not set: run through ctest)\n");
        return;
    }
    int fd = -1;
    const char *help[] = {"--help", NULL};
    pid_t pid = spawn_cli(help, &fd);
    CHECK(pid > 0);
    if (pid <= 0) return;
    char out[4096] = "";
    ssize_t n = read(fd, out, sizeof out - 1);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
    CHECK_INT(wait_status(pid), 0);
    CHECK(strstr(out, "Usage: cwork web") != NULL);
    const char *bad[] = {"-listen", "nonsense", "-redis", tl_redis_url(), NULL};
    pid = spawn_cli(bad, &fd);
    close(fd);
    CHECK_INT(wait_status(pid), 2); /* a usage error */
    const char *open_bad[] = {"-listen", "0.0.0.0:0", "-redis", tl_redis_url(), NULL};
    pid = spawn_cli(open_bad, &fd);
    close(fd);
    CHECK_INT(wait_status(pid), 2); /* beyond loopback without auth or --insecure */
    const char *open_ok[] = {"-listen", "0.0.0.0:0", "--insecure", "-redis", tl_redis_url(), NULL};
    pid = spawn_cli(open_ok, &fd);
    n = read(fd, out, sizeof out - 1);
    out[n > 0 ? n : 0] = '\0';
    CHECK(strncmp(out, "http://", 7) == 0);
    kill(pid, SIGINT);
    CHECK_INT(wait_status(pid), 0);
    close(fd);
    /* CWORK_WEB_AUTH: the command passes it to the library; beyond loopback that is
     * enough, and the server asks for it. */
    setenv("CWORK_WEB_AUTH", "env:pw", 1);
    pid = spawn_cli(open_bad, &fd);
    unsetenv("CWORK_WEB_AUTH");
    n = read(fd, out, sizeof out - 1);
    out[n > 0 ? n : 0] = '\0';
    int env_port = 0;
    CHECK(sscanf(out, "http://127.0.0.1:%d/", &env_port) == 1);
    if (env_port > 0) {
        http_res ar;
        CHECK_INT(http_port(env_port, "GET", "/queues", NULL, &ar), 0);
        CHECK_INT(ar.status, 401);
        CHECK_INT(http_port(env_port, "GET", "/queues", "Authorization: Basic ZW52OnB3\r\n", &ar),
                  0);
        CHECK_INT(ar.status, 200);
    }
    kill(pid, SIGINT);
    CHECK_INT(wait_status(pid), 0);
    close(fd);
    fresh_ns("webcli");
    const char *run[] = {"-redis", tl_redis_url(), "-ns", ns_, "--listen", "127.0.0.1:0", NULL};
    pid = spawn_cli(run, &fd);
    n = read(fd, out, sizeof out - 1); /* the URL line */
    out[n > 0 ? n : 0] = '\0';
    int port = 0;
    CHECK(sscanf(out, "http://127.0.0.1:%d/", &port) == 1);
    http_res r;
    CHECK_INT(http_port(port, "GET", "/busy_workers", NULL, &r), 0);
    CHECK_INT(r.status, 200);
    CHECK_MEM(r.body, r.len, "[]", 2);
    kill(pid, SIGINT);
    CHECK_INT(wait_status(pid), 0);
    close(fd);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    if (!redis_) {
        fprintf(stderr, "cannot create the Redis pool\n");
        return 1;
    }
    RUN(queues_and_dead_bodies_of_spec_18_7);
    RUN(pools_and_busy_workers);
    RUN(empty_lists_are_brackets);
    RUN(bad_parameters_are_400_with_json_errors);
    RUN(ids_with_slashes_and_one_name);
    RUN(job_results);
    RUN(job_bodies_follow_the_go_flavour);
    RUN(every_id_is_addressable);
    RUN(pause_and_unpause);
    RUN(a_malformed_pool_hash_does_not_blank_the_ui);
    RUN(unknown_routes_404_and_wrong_methods_405);
    RUN(page_and_assets_with_security_headers);
    RUN(cross_site_posts_are_refused);
    RUN(basic_auth_when_configured);
    RUN(nonsense_never_stops_the_server);
    RUN(metrics_in_prometheus_format);
    RUN(metrics_of_a_pool_and_without_redis);
    RUN(listen_errors_and_warning_beyond_loopback);
    RUN(concurrent_requests);
    RUN(the_ui_answers_while_a_thousand_idle_connections_are_held);
    RUN(cli_serves_until_sigint);
    RUN(rate_limits_batches_and_kept_successes);
    cwork_web_free(web_);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
