/* A sharded namespace's admin views on a real Redis Cluster (three masters, started here
 * with redis-cli --cluster create): a namespace of four shards whose shards sit on more
 * than one master is shown as one by the client (the search, a queue's jobs and the dead
 * set merged across masters, the doctor run on every shard's master, a result found on
 * its shard's master) and by the web server (the header's counts added over the masters,
 * ?shard=N answered by that shard's master alone, GET /shards naming each shard's
 * master). Every shard's keys are written on its master by hand (Go's JSON). */
#include "cluster_testutil.h"
#include "web_testutil.h"

#define S 4

static tc_cluster cl;

static char ns_[96], shard_[S][128];
static int port_[S]; /* the master of each shard */

/* A tagged namespace whose shards are not all on one master. */
static void spread_ns(void)
{
    char base[64];
    tl_unique_ns("shw", base, sizeof base);
    for (int n = 0; n < 1000; n++) {
        snprintf(ns_, sizeof ns_, "{%s-%d}", base, n);
        int spread = 0;
        for (unsigned i = 0; i < S; i++) {
            port_[i] = tc_shard_master(&cl, ns_, i, shard_[i], sizeof shard_[i]);
            CHECK(port_[i] > 0);
            spread |= port_[i] != port_[0];
        }
        if (spread) return;
    }
    CHECK(!"no namespace spread over two masters");
}

static void on(unsigned i, const char *fmt, const char *a, const char *b)
{
    redisReply *r = tt_node_cmd(port_[i], fmt, a, b);
    CHECK(r && r->type != REDIS_REPLY_ERROR);
    if (r) freeReplyObject(r);
}

/* Shard i: one dead job "d<i>" (score 100 + i) whose err says "boom", and one waiting
 * job "q<i>" (t 10 + i) of type a; shard 0 holds the record. */
static void seed(void)
{
    char key[200], job[200];
    for (unsigned i = 0; i < S; i++) {
        snprintf(key, sizeof key, "%s:dead", shard_[i]);
        snprintf(job, sizeof job,
                 "{\"name\":\"a\",\"id\":\"d%u\",\"t\":1,\"args\":{},\"err\":\"boom\","
                 "\"failed_at\":%u}",
                 i, 100 + i);
        redisReply *r = tt_node_cmd(port_[i], "ZADD %s %u %s", key, 100 + i, job);
        CHECK(r && r->type == REDIS_REPLY_INTEGER);
        if (r) freeReplyObject(r);
        snprintf(key, sizeof key, "%s:jobs:a", shard_[i]);
        snprintf(job, sizeof job, "{\"name\":\"a\",\"id\":\"q%u\",\"t\":%u,\"args\":{}}", i,
                 10 + i);
        on(i, "LPUSH %s %s", key, job);
        snprintf(key, sizeof key, "%s:known_jobs", shard_[i]);
        on(i, "SADD %s %s", key, "a");
    }
    snprintf(key, sizeof key, "%s:cwork:result:q3", shard_[3]);
    on(3, "SET %s %s", key, "three");
    snprintf(key, sizeof key, "%s:cwork:shards", ns_);
    redisReply *r =
        tt_node_cmd(port_[0], "HSET %s count 4 hash fnv1a64-jump created 1700000000", key);
    CHECK(r && r->type == REDIS_REPLY_INTEGER);
    if (r) freeReplyObject(r);
}

static void ids_of(const cwork_listed_job *jobs, size_t n, char *out, size_t size)
{
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? " " : "",
                 jobs[i].job ? cwork_job_id(jobs[i].job) : "?");
}

static void the_client_sees_every_master(cwork_client *client)
{
    cwork_search_query q = {"BOOM", 1, 3, 0};
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    cwork_search_info info;
    char got[128];
    CHECK_INT(cwork_client_search(client, CWORK_SET_DEAD, &q, &jobs, &n, &info, NULL), 0);
    ids_of(jobs, n, got, sizeof got);
    CHECK_STR(got, "d3 d2 d1");
    CHECK_INT(info.matches, S);
    cwork_listed_jobs_free(jobs, n);
    int64_t total = 0;
    CHECK_INT(cwork_client_queue_jobs(client, "a", 2, 2, &jobs, &n, &total, NULL), 0);
    ids_of(jobs, n, got, sizeof got);
    CHECK_STR(got, "q2 q3");
    CHECK_INT(total, S);
    cwork_listed_jobs_free(jobs, n);
    char *out = NULL;
    size_t len = 0;
    CHECK_INT(cwork_client_result(client, "q3", 0, &out, &len, NULL), 0);
    CHECK_STR(out ? out : "", "three");
    cwork_free(out);
    cwork_doctor_finding *f = NULL;
    CHECK_INT(cwork_client_doctor(client, 0, &f, &n, NULL), 0);
    CHECK_INT(n, 0);
    cwork_doctor_findings_free(f, n);
}

static void the_server_sees_every_master(cwork_redis *redis)
{
    cwork_web_options o;
    cwork_web_options_init(&o);
    o.listen = "127.0.0.1:0";
    o.read_only = true;
    cwork_error err = {0};
    cwork_web *w = cwork_web_start(redis, ns_, &o, &err);
    if (!w) {
        tl_fail(__FILE__, __LINE__, "cwork_web_start: %s", err.message);
        return;
    }
    int port = cwork_web_port(w);
    http_res r;
    CHECK_INT(wt_http(port, "GET", "/summary", NULL, NULL, &r), 0);
    CHECK(r.status == 200 && strstr(r.body, "\"dead\": 4") != NULL);
    for (unsigned i = 0; i < S; i++) { /* each shard alone, read on its own master */
        char path[64];
        snprintf(path, sizeof path, "/summary?shard=%u", i);
        CHECK_INT(wt_http(port, "GET", path, NULL, NULL, &r), 0);
        if (r.status != 200 || !strstr(r.body, "\"dead\": 1"))
            tl_fail(__FILE__, __LINE__, "%s: %d %s", path, r.status, r.body);
        snprintf(path, sizeof path, "/dead_jobs?shard=%u", i);
        CHECK_INT(wt_http(port, "GET", path, NULL, NULL, &r), 0);
        char id[16];
        snprintf(id, sizeof id, "\"d%u\"", i);
        CHECK(r.status == 200 && strstr(r.body, id) != NULL);
    }
    CHECK_INT(wt_http(port, "GET", "/shards", NULL, NULL, &r), 0);
    CHECK_INT(r.status, 200);
    for (unsigned i = 0; i < S; i++) { /* the rows in order, each naming its master */
        char row[256];
        snprintf(row, sizeof row, "\"shard\": %u,", i);
        const char *at = strstr(r.body, row);
        snprintf(row, sizeof row, "\"node\": \"127.0.0.1:%d\"", port_[i]);
        const char *node = at ? strstr(at, "\"node\"") : NULL;
        if (!node || strncmp(node, row, strlen(row)) != 0)
            tl_fail(__FILE__, __LINE__, "shard %u: want %s in %s", i, row, r.body);
    }
    cwork_web_free(w);
}

static void admin_views_span_the_masters(void)
{
    spread_ns();
    seed();
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(cl.url, NULL, &err);
    if (!redis) {
        tl_fail(__FILE__, __LINE__, "cwork_redis_new: %s", err.message);
        return;
    }
    cwork_client *client = cwork_client_new(redis, ns_, &err);
    CHECK(client != NULL);
    if (client) the_client_sees_every_master(client);
    cwork_client_free(client);
    the_server_sees_every_master(redis);
    cwork_redis_free(redis);
}

int main(void)
{
    if (tc_start(&cl, "shardweb") != 0) {
        tc_stop(&cl);
        return 1;
    }
    RUN(admin_views_span_the_masters);
    tc_stop(&cl);
    return tl_finish();
}
