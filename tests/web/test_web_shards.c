/* The web server on a sharded namespace (PROTOCOL §27) over real HTTP: three shards built
 * by hand (the record, Go's JSON in each shard's keys). The search, a queue's jobs, kept
 * successes, periodic schedules, a result, a batch and the doctor answer for the whole
 * namespace; ?shard=N on any route answers for shard N alone (400 past the count, naming
 * it); a finding is repaired in its shard; the server changes nothing when it reads. */
#include "client_testutil.h"
#include "web_testutil.h"

static char shard1_[80], shard2_[80];

static cwork_web *start(cwork_redis *redis)
{
    cwork_web_options o;
    cwork_web_options_init(&o);
    o.listen = "127.0.0.1:0";
    cwork_error err = {0};
    cwork_web *w = cwork_web_start(redis, ns_, &o, &err);
    if (!w) tl_fail(__FILE__, __LINE__, "cwork_web_start: %s", err.message);
    return w;
}

/* The body of a request answered with status (else a failure); "" when none came. */
static const char *ask_at(int line, int port, const char *method, const char *path, int status)
{
    static http_res r;
    if (wt_http(port, method, path, NULL, NULL, &r) != 0) {
        tl_fail(__FILE__, line, "%s %s: no answer", method, path);
        return "";
    }
    if (r.status != status)
        tl_fail(__FILE__, line, "%s %s: status %d, want %d (%s)", method, path, r.status, status,
                r.body);
    if (status >= 400 && !wt_is_json_error(&r))
        tl_fail(__FILE__, line, "%s %s: not a JSON error: %s", method, path, r.body);
    return r.body;
}
#define GET(port, path, status) ask_at(__LINE__, port, "GET", path, status)
#define POST(port, path, status) ask_at(__LINE__, port, "POST", path, status)

/* Whether a appears in s before b. */
static int before_in(const char *s, const char *a, const char *b)
{
    const char *x = strstr(s, a), *y = strstr(s, b);
    return x && y && x < y;
}

static char *dump_all(void)
{
    char *a = tl_ns_dump(rc_, ns_), *b = tl_ns_dump(rc_, shard1_), *c = tl_ns_dump(rc_, shard2_);
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *all = malloc(n);
    snprintf(all, n, "%s%s%s", a, b, c);
    free(a);
    free(b);
    free(c);
    return all;
}

static void three_shards(const char *tag)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    snprintf(shard1_, sizeof shard1_, "{%s.1}", ns_);
    snprintf(shard2_, sizeof shard2_, "{%s.2}", ns_);
    cmd("HSET %s:cwork:shards count 3 hash fnv1a64-jump created 1700000000", ns_);
    cmd("SADD %s:known_jobs a", ns_);
    cmd("SADD %s:known_jobs a", shard2_);
    cmd("LPUSH %s:jobs:a %s %s", shard2_, "{\"name\":\"a\",\"id\":\"q1\",\"t\":20,\"args\":{}}",
        "{\"name\":\"a\",\"id\":\"q2\",\"t\":40,\"args\":{}}");
    cmd("LPUSH %s:jobs:a %s", ns_, "{\"name\":\"a\",\"id\":\"q3\",\"t\":30,\"args\":{}}");
    cmd("ZADD %s:dead 5 %s", shard1_,
        "{\"name\":\"a\",\"id\":\"d1\",\"t\":1,\"args\":{},\"err\":\"boom\",\"failed_at\":5}");
    cmd("ZADD %s:dead 7 %s", ns_,
        "{\"name\":\"a\",\"id\":\"d2\",\"t\":1,\"args\":{},\"err\":\"boom too\",\"failed_at\":7}");
    cmd("SET %s:cwork:result:q9 hello", shard2_);
    cmd("HSET %s:cwork:batch:00112233445566778899aabb id 00112233445566778899aabb total 2 "
        "succeeded 1 dead 0 retrying 0 sealed 1 when complete callback waiting "
        "created_at 1700000000",
        shard1_);
    cmd("HSET %s:cwork:periodic [\"rep\",\"@hourly\"] {\"next_at\":%lld,\"seen_at\":%lld}", shard2_,
        now_() + 3600, now_());
}

static void cleanup(void)
{
    tl_ns_delete(rc_, shard1_);
    tl_ns_delete(rc_, shard2_);
    tl_ns_delete(rc_, ns_);
}

static void every_view_is_the_whole_namespace_or_one_shard(void)
{
    three_shards("wsv");
    char *before = dump_all();
    cwork_web *w = start(redis_);
    int port = cwork_web_port(w);
    const char *b = GET(port, "/search?set=dead&q=boom", 200);
    CHECK(before_in(b, "\"d2\"", "\"d1\""));
    b = GET(port, "/search?set=dead&q=boom&shard=1", 200);
    CHECK(strstr(b, "\"d1\"") && !strstr(b, "\"d2\""));
    b = GET(port, "/queue_jobs?name=a", 200);
    CHECK(strstr(b, "\"count\": 3") && before_in(b, "\"q1\"", "\"q3\"") &&
          before_in(b, "\"q3\"", "\"q2\""));
    b = GET(port, "/queue_jobs?name=a&shard=2", 200);
    CHECK(strstr(b, "\"count\": 2") && !strstr(b, "\"q3\""));
    b = GET(port, "/dead_jobs?shard=0", 200);
    CHECK(strstr(b, "\"count\": 1") && strstr(b, "\"d2\""));
    b = GET(port, "/dead_jobs", 200);
    CHECK(strstr(b, "\"count\": 2") != NULL);
    /* the UI's header and /metrics: the sets' sizes over every shard, or one shard's */
    b = GET(port, "/summary", 200);
    CHECK(strstr(b, "\"dead\": 2") != NULL);
    b = GET(port, "/summary?shard=1", 200);
    CHECK(strstr(b, "\"dead\": 1") != NULL);
    b = GET(port, "/metrics", 200);
    CHECK(strstr(b, "\ncwork_dead_jobs 2\n") != NULL);
    b = GET(port, "/result/q9", 200);
    CHECK(strstr(b, "hello") != NULL);
    GET(port, "/result/q9?shard=1", 404);
    b = GET(port, "/batch?id=00112233445566778899aabb", 200);
    CHECK(strstr(b, "\"total\": 2") != NULL);
    b = GET(port, "/periodic", 200);
    CHECK(strstr(b, "\"rep\"") != NULL);
    b = GET(port, "/periodic?shard=1", 200);
    CHECK(!strstr(b, "\"rep\""));
    GET(port, "/succeeded", 200);
    b = GET(port, "/shards", 200); /* each shard's server: here the test's one Redis */
    CHECK(strstr(b, "\"count\": 3") && strstr(b, "\"node\": \"") && !strstr(b, "\"node\": \"\""));
    b = GET(port, "/shards?shard=1", 200); /* one shard's own view: one row, itself */
    CHECK(strstr(b, "\"count\": 1") != NULL);
    b = GET(port, "/queues?shard=3", 400);
    CHECK(strstr(b, "3 shards") != NULL);
    GET(port, "/queues?shard=x", 400);
    char *after = dump_all();
    CHECK_STR(after, before);
    free(after);
    free(before);
    cwork_web_free(w);
    cleanup();
}

static void the_doctor_checks_and_repairs_every_shard(void)
{
    three_shards("wsd");
    cmd("LPUSH %s:jobs:b %s", shard2_, "{\"name\":\"b\",\"id\":\"b1\",\"t\":1,\"args\":{}}");
    cwork_web *w = start(redis_);
    int port = cwork_web_port(w);
    char key[160], path[400];
    snprintf(key, sizeof key, "%s:jobs:b", shard2_);
    const char *b = GET(port, "/doctor", 200);
    CHECK(strstr(b, key) != NULL);
    b = GET(port, "/doctor?shard=1", 200);
    CHECK(!strstr(b, key));
    /* the key's braces percent-encoded */
    snprintf(path, sizeof path, "/doctor_repair?kind=unknown_name&key=%%7B%s.2%%7D:jobs:b&member=b",
             ns_);
    b = POST(port, path, 200);
    CHECK(strstr(b, "\"repaired\": 1") != NULL);
    redisReply *r = tl_cmd(rc_, "SISMEMBER %s:known_jobs b", shard2_);
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);
    b = GET(port, "/doctor", 200);
    CHECK(!strstr(b, key));
    cwork_web_free(w);
    cleanup();
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    if (!redis_) return 1;
    RUN(every_view_is_the_whole_namespace_or_one_shard);
    RUN(the_doctor_checks_and_repairs_every_shard);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
