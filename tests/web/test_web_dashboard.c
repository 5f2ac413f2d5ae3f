/* The dashboard's throughput and Redis routes over real HTTP: GET /throughput on a fixed
 * clock (bodies exact, bad input 400 with a JSON error, nothing written), GET /redis_info
 * from a real server and for a user the ACL refuses INFO (200, "permitted": false), and
 * both on a read-only server; GET /shards for a namespace of two shards built by hand and
 * for one that is not sharded (nothing written). */
#include "clock_testutil.h"
#include "client_testutil.h"
#include "web_testutil.h"

#include <signal.h>

/* 2026-03-09 14:02:30 UTC. */
#define NOW 1773064950LL

static cwork_web *start(cwork_redis *redis, bool read_only)
{
    cwork_web_options o;
    cwork_web_options_init(&o);
    o.listen = "127.0.0.1:0";
    o.read_only = read_only;
    cwork_error err = {0};
    cwork_web *w = cwork_web_start(redis, ns_, &o, &err);
    if (!w) tl_fail(__FILE__, __LINE__, "cwork_web_start: %s", err.message);
    return w;
}

static void get_at(int line, int port, const char *path, int status, const char *want,
                   http_res *out)
{
    http_res r;
    if (out) memset(out, 0, sizeof *out); /* what a caller reads when nothing answered */
    if (wt_http(port, "GET", path, NULL, NULL, &r) != 0) {
        tl_fail(__FILE__, line, "GET %s: no answer", path);
        return;
    }
    if (r.status != status)
        tl_fail(__FILE__, line, "GET %s: status %d, want %d (%s)", path, r.status, status, r.body);
    if (want && strcmp(r.body, want) != 0)
        tl_fail(__FILE__, line, "GET %s: body\n   got: %s\n  want: %s", path, r.body, want);
    if (status >= 400 && !wt_is_json_error(&r))
        tl_fail(__FILE__, line, "GET %s: not a JSON error: %s", path, r.body);
    if (out) *out = r;
}
#define GET(port, path, status, want, out) get_at(__LINE__, port, path, status, want, out)

static void throughput_route(void)
{
    tl_unique_ns("wtp", ns_, sizeof ns_);
    cmd("HSET %s:cwork:stat:2026-03-09T14 00:processed 4 00:failed 1 02:processed 7", ns_);
    cmd("HSET %s:cwork:stat:2026-03-09T13 59:processed 2", ns_);
    char *before = tl_ns_dump(rc_, ns_);
    cw_clock_manual(NOW * 1000);
    cwork_web *w = start(redis_, true); /* read-only: reading is allowed */
    int port = cwork_web_port(w);
    char want[512];
    snprintf(want, sizeof want,
             "{\n\t\"first\": %lld,\n\t\"step\": 60,\n\t\"processed\": [\n\t\t2,\n\t\t4,\n\t\t0,"
             "\n\t\t7\n\t],\n\t\"failed\": [\n\t\t0,\n\t\t1,\n\t\t0,\n\t\t0\n\t]\n}",
             NOW - 30 - 180);
    GET(port, "/throughput?minutes=4", 200, want, NULL);
    /* The default: the last hour, 60 minutes. */
    http_res r;
    GET(port, "/throughput", 200, NULL, &r);
    long long first = 0;
    CHECK(sscanf(r.body, "{\n\t\"first\": %lld", &first) == 1);
    CHECK_INT(first, NOW - 30 - 59 * 60);
    size_t lines = 0;
    for (const char *p = r.body; *p; p++)
        lines += *p == '\n';
    CHECK_INT(lines, 2 * 60 + 7); /* { first step "processed": [ … ], "failed": [ … ] } */
    GET(port, "/throughput?minutes=1440", 200, NULL, NULL);
    static const char *const bad[] = {"/throughput?minutes=0", "/throughput?minutes=1441",
                                      "/throughput?minutes=x", "/throughput?minutes=-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        GET(port, bad[i], 400, NULL, NULL);
    http_res post;
    CHECK_INT(wt_http(port, "POST", "/throughput", NULL, "", &post), 0);
    CHECK_INT(post.status, 405);
    cwork_web_free(w);
    cw_clock_system();
    char *after = tl_ns_dump(rc_, ns_);
    CHECK_STR(after, before);
    free(before);
    free(after);
    tl_ns_delete(rc_, ns_);
}

static void redis_info_route(void)
{
    tl_unique_ns("wri", ns_, sizeof ns_);
    cwork_web *w = start(redis_, true);
    http_res r;
    GET(cwork_web_port(w), "/redis_info", 200, NULL, &r);
    redisReply *v = tl_cmd(rc_, "INFO server");
    const char *ver = strstr(v->str, "redis_version:");
    char version[64] = "";
    if (ver) sscanf(ver, "redis_version:%63[^\r\n]", version);
    freeReplyObject(v);
    char head[256];
    snprintf(head, sizeof head,
             "{\n\t\"permitted\": true,\n\t\"version\": \"%s\",\n\t\"role\": \"master\",", version);
    CHECK(strncmp(r.body, head, strlen(head)) == 0);
    static const char *const fields[] = {
        "\"maxmemory_policy\": \"", "\"evicts\": ",      "\"used_memory\": ", "\"maxmemory\": ",
        "\"connected_clients\": ",  "\"ops_per_sec\": ", "\"uptime_s\": "};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!strstr(r.body, fields[i]))
            tl_fail(__FILE__, __LINE__, "no %s in %s", fields[i], r.body);
    CHECK(strstr(r.body, "null") == NULL); /* a real server reports every number */
    cwork_web_free(w);

    /* A user without +info: the panel's route still answers. */
    char user[64], url[256];
    tl_unique_ns("wnoinfo", user, sizeof user);
    cmd("ACL SETUSER %s on >pw ~* +@all -info", user);
    snprintf(url, sizeof url, "redis://%s:pw@%s", user, tl_redis_url() + strlen("redis://"));
    cwork_redis *limited = cwork_redis_new(url, NULL, NULL);
    w = start(limited, false);
    GET(cwork_web_port(w), "/redis_info", 200,
        "{\n\t\"permitted\": false,\n\t\"version\": \"\",\n\t\"role\": \"\",\n\t"
        "\"maxmemory_policy\": \"\",\n\t\"evicts\": false,\n\t\"used_memory\": null,\n\t"
        "\"maxmemory\": null,\n\t\"connected_clients\": null,\n\t\"ops_per_sec\": null,\n\t"
        "\"uptime_s\": null\n}",
        NULL);
    cwork_web_free(w);
    cwork_redis_free(limited);
    cmd("ACL DELUSER %s", user);
    tl_ns_delete(rc_, ns_);
}

static void shards_route(void)
{
    tl_unique_ns("wsh", ns_, sizeof ns_);
    char one[80];
    snprintf(one, sizeof one, "{%s.1}", ns_);
    cwork_web *w = start(redis_, true);
    char want[1024];
    snprintf(want, sizeof want,
             "{\n\t\"count\": 1,\n\t\"created\": 0,\n\t\"shards\": [\n\t\t{\n\t\t\t\"shard\": 0,"
             "\n\t\t\t\"ns\": \"%s\",\n\t\t\t\"queued\": 0,\n\t\t\t\"running\": 0,\n\t\t\t"
             "\"retry\": 0,\n\t\t\t\"scheduled\": 0,\n\t\t\t\"dead\": 0,\n\t\t\t\"pools\": 0,"
             "\n\t\t\t\"node\": \"",
             ns_);
    http_res r;
    GET(cwork_web_port(w), "/shards", 200, NULL, &r);
    /* then the server's address (the test's Redis: 127.0.0.1:port or a socket) */
    CHECK(strncmp(r.body, want, strlen(want)) == 0);
    const char *node = r.body + strlen(want), *end = strchr(node, '"');
    CHECK(end && end > node && strcmp(end, "\"\n\t\t}\n\t]\n}") == 0);
    CHECK_DUMP(""); /* an unsharded namespace gets no key */
    cwork_web_free(w);

    cmd("HSET %s:cwork:shards count 2 hash fnv1a64-jump created 1700000000", ns_);
    cmd("SADD %s:known_jobs a", one);
    cmd("LPUSH %s:jobs:a %s", one, "{\"name\":\"a\",\"id\":\"q\",\"t\":1,\"args\":{}}");
    cmd("ZADD %s:dead 5 %s", ns_, "{\"name\":\"a\",\"id\":\"d\",\"t\":1,\"args\":{}}");
    cmd("ZADD %s:scheduled 6 %s", one, "{\"name\":\"a\",\"id\":\"s\",\"t\":1,\"args\":{}}");
    w = start(redis_, true);
    GET(cwork_web_port(w), "/shards", 200, NULL, &r);
    static const char *const rows[] = {"\"count\": 2,",     "\"created\": 1700000000,",
                                       "\"shard\": 1,",     "\"queued\": 1,",
                                       "\"scheduled\": 1,", "\"dead\": 1,"};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strstr(r.body, rows[i])) tl_fail(__FILE__, __LINE__, "no %s in %s", rows[i], r.body);
    char ns_row[128];
    snprintf(ns_row, sizeof ns_row, "\"ns\": \"{%s.1}\"", ns_);
    CHECK(strstr(r.body, ns_row) != NULL);
    cwork_web_free(w);
    tl_ns_delete(rc_, one);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    RUN(throughput_route);
    RUN(redis_info_route);
    RUN(shards_route);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
