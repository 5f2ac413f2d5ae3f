/* The web routes of kill and search (PROTOCOL §24) over real HTTP: /apply's action kill
 * and /kill_all move retry and scheduled jobs to dead (the whole namespace checked
 * after), /search answers the matching jobs as the lists do with what it scanned; bad
 * input gets 400, a read-only server and a cross-origin page 403 with nothing written. */
#include "client_testutil.h"
#include "web_testutil.h"

#include <signal.h>

static cwork_web *web_;
static int port_;

static cwork_web *start(bool read_only)
{
    cwork_web_options o;
    cwork_web_options_init(&o);
    o.listen = "127.0.0.1:0";
    o.read_only = read_only;
    cwork_error err = {0};
    cwork_web *w = cwork_web_start(redis_, ns_, &o, &err);
    if (!w) {
        fprintf(stderr, "cwork_web_start: %s\n", err.message);
        exit(1);
    }
    return w;
}

static void req_at(int line, const char *method, const char *path, const char *extra,
                   const char *body, int status, const char *want)
{
    http_res r;
    if (wt_http(port_, method, path, extra, body, &r) != 0) {
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
#define REQ(method, path, body, status, want)                                                      \
    req_at(__LINE__, method, path, NULL, body, status, want)

#define R1 "{\"name\":\"a\",\"id\":\"r1\",\"t\":1,\"args\":{\"k\":\"Needle\"},\"err\":\"x\"}"
#define R2 "{\"name\":\"b\",\"id\":\"r2\",\"t\":1,\"args\":null,\"err\":\"y\"}"

static void seed(void)
{
    cmd("ZADD %s:retry 1800000000 %s", ns_, R1);
    cmd("ZADD %s:retry 1800000001 %s", ns_, R2);
    cmd("ZADD %s:scheduled 1900000000 %s", ns_, "{\"name\":\"a\",\"id\":\"s1\",\"t\":1}");
}

static long long zcard(const char *set)
{
    redisReply *r = tl_cmd(rc_, "ZCARD %s:%s", ns_, set);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

static void kill_one_and_all(void)
{
    tl_unique_ns("wkill", ns_, sizeof ns_);
    web_ = start(false);
    port_ = cwork_web_port(web_);
    seed();
    long long before = now_();
    REQ("POST", "/apply?set=retry&action=kill", "[{\"at\":1800000000,\"id\":\"r1\"}]", 200,
        "{\n\t\"done\": 1,\n\t\"unchanged\": 0,\n\t\"message\": \"\"\n}");
    long long after = now_();
    redisReply *r = tl_cmd(rc_, "ZSCORE %s:dead %s", ns_, R1);
    long long at = r->str ? atoll(r->str) : -1;
    freeReplyObject(r);
    CHECK(at >= before && at <= after);
    snprintf(want_, sizeof want_,
             "NS:dead zset " R1 "=%lld\n"
             "NS:retry zset " R2 "=1800000001\n"
             "NS:scheduled zset {\"name\":\"a\",\"id\":\"s1\",\"t\":1}=1900000000\n",
             at);
    CHECK_DUMP(want_);
    /* the dead set is no set kill applies to; an unknown action */
    REQ("POST", "/apply?set=dead&action=kill", "[{\"at\":1,\"id\":\"r1\"}]", 400, NULL);
    REQ("POST", "/apply?set=retry&action=slay", "[]", 400, NULL);
    REQ("POST", "/kill_all?set=dead", NULL, 400, NULL);
    REQ("POST", "/kill_all", NULL, 400, NULL);
    REQ("GET", "/kill_all?set=retry", NULL, 405, NULL);
    CHECK_DUMP(want_);
    REQ("POST", "/kill_all?set=scheduled&name=a", NULL, 200, "{\n\t\"count\": 1\n}");
    REQ("POST", "/kill_all?set=retry", NULL, 200, "{\n\t\"count\": 1\n}");
    CHECK_INT(zcard("dead"), 3);
    CHECK_INT(zcard("retry"), 0);
    CHECK_INT(zcard("scheduled"), 0);
    cwork_web_free(web_);
    web_ = NULL;
    done(NULL);
}

static void search_answers_matches_and_the_scan(void)
{
    tl_unique_ns("wsearch", ns_, sizeof ns_);
    web_ = start(false);
    port_ = cwork_web_port(web_);
    seed();
    char *snap = dump_now();
    REQ("GET", "/search?set=retry&q=needle", NULL, 200,
        "{\n\t\"bounded\": false,\n\t\"count\": 1,\n\t\"jobs\": [\n\t\t{\n\t\t\t\"retry_at\": "
        "1800000000,\n\t\t\t\"name\": \"a\",\n\t\t\t\"id\": \"r1\",\n\t\t\t\"t\": 1,\n\t\t\t"
        "\"args\": {\n\t\t\t\t\"k\": \"Needle\"\n\t\t\t},\n\t\t\t\"err\": \"x\"\n\t\t}\n\t],\n\t"
        "\"scanned\": 2,\n\t\"total\": 2\n}");
    REQ("GET", "/search?set=retry&q=y&max_scan=1", NULL, 200,
        "{\n\t\"bounded\": true,\n\t\"count\": 1,\n\t\"jobs\": [\n\t\t{\n\t\t\t\"retry_at\": "
        "1800000001,\n\t\t\t\"name\": \"b\",\n\t\t\t\"id\": \"r2\",\n\t\t\t\"t\": 1,\n\t\t\t"
        "\"args\": null,\n\t\t\t\"err\": \"y\"\n\t\t}\n\t],\n\t\"scanned\": 1,\n\t\"total\": 2\n}");
    REQ("GET", "/search?set=dead&q=zzz", NULL, 200,
        "{\n\t\"bounded\": false,\n\t\"count\": 0,\n\t\"jobs\": [],\n\t\"scanned\": 0,\n\t"
        "\"total\": 0\n}");
    REQ("GET", "/search?set=retry", NULL, 400, NULL);
    REQ("GET", "/search?set=retry&q=", NULL, 400, NULL);
    REQ("GET", "/search?set=nope&q=a", NULL, 400, NULL);
    REQ("GET", "/search?set=retry&q=a&max_scan=100001", NULL, 400, NULL);
    REQ("GET", "/search?set=retry&q=a&per_page=1001", NULL, 400, NULL);
    char *after = dump_now();
    CHECK_STR(after, snap);
    free(snap);
    free(after);
    cwork_web_free(web_);
    web_ = NULL;
    done(NULL);
}

static void read_only_and_cross_origin_refuse_kill(void)
{
    tl_unique_ns("wkro", ns_, sizeof ns_);
    web_ = start(true);
    port_ = cwork_web_port(web_);
    seed();
    char *snap = dump_now();
    REQ("POST", "/kill_all?set=retry", NULL, 403, NULL);
    REQ("POST", "/apply?set=retry&action=kill", "[{\"at\":1800000000,\"id\":\"r1\"}]", 403, NULL);
    REQ("GET", "/search?set=retry&q=x", NULL, 200, NULL); /* reading is allowed */
    cwork_web_free(web_);
    web_ = start(false);
    port_ = cwork_web_port(web_);
    req_at(__LINE__, "POST", "/kill_all?set=retry", "Origin: http://evil.example\r\n", NULL, 403,
           NULL);
    char *after = dump_now();
    CHECK_STR(after, snap);
    free(snap);
    free(after);
    cwork_web_free(web_);
    web_ = NULL;
    done(NULL);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    RUN(kill_one_and_all);
    RUN(search_answers_matches_and_the_scan);
    RUN(read_only_and_cross_origin_refuse_kill);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
