/* The dashboard's throughput history and Redis panel from the admin client, against a
 * real Redis: per-minute counts read from hand-written hour hashes on a fixed clock
 * (zero-filled, damage read as 0, nothing written), and the INFO fields of a real server,
 * one with an evicting policy and a user the ACL refuses INFO. */
#include "clock_testutil.h"
#include "client_testutil.h"

/* 2026-03-09 14:02:30 UTC. */
#define NOW 1773064950LL

static void throughput_per_minute_zero_filled_oldest_first(void)
{
    cwork_client *cl = fresh("tp");
    cmd("HSET %s:cwork:stat:2026-03-09T14 00:processed 4 00:failed 1 02:processed 7", ns_);
    cmd("HSET %s:cwork:stat:2026-03-09T13 59:processed 2 03:processed 11", ns_);
    cmd("HSET %s:cwork:stat:2026-03-09T12 30:processed 100 30:failed 9", ns_);
    cmd("SET %s:cwork:stat:2026-03-09T11 7", ns_);                     /* not a hash */
    cmd("HSET %s:cwork:stat:2026-03-08T14 02:processed 1000", ns_);    /* 24 h ago: outside */
    cmd("HSET %s:cwork:stat:2026-03-09 processed 124 failed 10", ns_); /* the day: not read */
    char *before = tl_ns_dump(rc_, ns_);
    cw_clock_manual(NOW * 1000);
    cwork_minute_stats *m = NULL;
    size_t n = 0;
    tl_capture_logs();
    CHECK_INT(cwork_client_throughput(cl, 60, &m, &n, NULL), 0);
    CHECK_INT(n, 60);
    CHECK(tl_find_log("client.throughput.damaged") == NULL);
    if (n == 60) {
        CHECK_INT(m[59].minute, NOW - 30);
        CHECK_INT(m[59].processed, 7);
        CHECK_INT(m[58].processed, 0);
        CHECK_INT(m[57].minute, NOW - 150);
        CHECK_INT(m[57].processed, 4);
        CHECK_INT(m[57].failed, 1);
        CHECK_INT(m[56].processed, 2);
        CHECK_INT(m[0].minute, NOW - 30 - 59 * 60); /* 13:03 */
        CHECK_INT(m[0].processed, 11);
        int64_t p = 0, f = 0;
        for (size_t i = 0; i < n; i++) {
            p += m[i].processed;
            f += m[i].failed;
            if (i) CHECK_INT(m[i].minute - m[i - 1].minute, 60);
        }
        CHECK_INT(p, 24);
        CHECK_INT(f, 1);
    }
    cwork_free(m);

    /* A day: the 12:30 minute, the string key read as nothing (and logged), the same
     * minute a day earlier left out. */
    CHECK_INT(cwork_client_throughput(cl, 1440, &m, &n, NULL), 0);
    CHECK_INT(n, 1440);
    CHECK(tl_find_log("client.throughput.damaged") != NULL);
    cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
    if (n == 1440) {
        CHECK_INT(m[0].minute, NOW - 30 - 1439 * 60); /* yesterday 14:03 */
        int64_t p = 0, f = 0;
        for (size_t i = 0; i < n; i++) {
            p += m[i].processed;
            f += m[i].failed;
        }
        CHECK_INT(p, 124);
        CHECK_INT(f, 10);
        CHECK_INT(m[1439 - 92].processed, 100); /* 12:30 is 92 minutes before 14:02 */
        CHECK_INT(m[1439 - 92].failed, 9);
    }
    cwork_free(m);

    /* Fields that are no counts are skipped, the rest still read. */
    cmd("HSET %s:cwork:stat:2026-03-09T14 xx:processed 5 01:processed abc 01:other 3", ns_);
    tl_capture_logs();
    CHECK_INT(cwork_client_throughput(cl, 3, &m, &n, NULL), 0);
    CHECK(tl_find_log("client.throughput.damaged") != NULL);
    cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
    CHECK_INT(n, 3);
    if (n == 3) {
        CHECK_INT(m[0].processed, 4);
        CHECK_INT(m[1].processed, 0);
        CHECK_INT(m[2].processed, 7);
    }
    cwork_free(m);
    cmd("HDEL %s:cwork:stat:2026-03-09T14 xx:processed 01:processed 01:other", ns_);
    char *after = tl_ns_dump(rc_, ns_);
    CHECK_STR(after, before); /* a reader writes nothing */
    free(before);
    free(after);

    cwork_error err = {0};
    m = (cwork_minute_stats *)1;
    n = 7;
    CHECK_INT(cwork_client_throughput(cl, 0, &m, &n, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "minutes") != NULL);
    CHECK_INT(cwork_client_throughput(cl, 1441, &m, &n, &err), CWORK_EINVAL);
    CHECK(m == NULL && n == 0);
    CHECK_INT(cwork_client_throughput(cl, 1, NULL, &n, &err), CWORK_EINVAL);
    cw_clock_system();
    done(cl);
}

static void redis_info_of_the_namespace_server(void)
{
    cwork_client *cl = fresh("ri");
    cwork_redis_info info;
    cwork_error err = {0};
    CHECK_INT(cwork_client_redis_info(cl, &info, &err), 0);
    CHECK(info.permitted);
    redisReply *v = tl_cmd(rc_, "INFO server");
    CHECK(strstr(v->str, info.version) != NULL && info.version[0]);
    freeReplyObject(v);
    CHECK_STR(info.role, "master");
    CHECK(info.used_memory > 0);
    CHECK(info.maxmemory >= 0);
    CHECK(info.connected_clients >= 2); /* this test's two connections at least */
    CHECK(info.ops_per_sec >= 0);
    CHECK(info.uptime_s >= 0);
    redisReply *policy = tl_cmd(rc_, "CONFIG GET maxmemory-policy");
    CHECK_STR(info.maxmemory_policy, policy->element[1]->str);
    CHECK(info.evicts == (strcmp(policy->element[1]->str, "noeviction") != 0));
    freeReplyObject(policy);
    CHECK_INT(cwork_client_redis_info(cl, NULL, &err), CWORK_EINVAL);
    done(cl);
}

/* A private server (its configuration is changed) with an evicting policy and a limit. */
static void redis_info_says_when_redis_evicts(void)
{
    tl_server s;
    CHECK_INT(tl_server_start(&s, 0), 0);
    redisContext *raw = redisConnect("127.0.0.1", s.port);
    freeReplyObject(redisCommand(raw, "CONFIG SET maxmemory-policy allkeys-lru"));
    freeReplyObject(redisCommand(raw, "CONFIG SET maxmemory 104857600"));
    cwork_redis *r = cwork_redis_new(s.url, NULL, NULL);
    cwork_client *cl = cwork_client_new(r, "evicts", NULL);
    cwork_redis_info info;
    cwork_error err = {0};
    CHECK_INT(cwork_client_redis_info(cl, &info, &err), 0);
    CHECK(info.permitted);
    CHECK_STR(info.maxmemory_policy, "allkeys-lru");
    CHECK(info.evicts);
    CHECK_INT(info.maxmemory, 104857600);
    freeReplyObject(redisCommand(raw, "CONFIG SET maxmemory-policy noeviction"));
    CHECK_INT(cwork_client_redis_info(cl, &info, &err), 0);
    CHECK(!info.evicts);
    cwork_client_free(cl);
    cwork_redis_free(r);
    redisFree(raw);
    tl_server_destroy(&s);
}

/* A user without +info: no failure, permitted false. */
static void redis_info_not_permitted_is_no_failure(void)
{
    char user[64], url[256];
    tl_unique_ns("noinfo", user, sizeof user);
    cmd("ACL SETUSER %s on >pw ~* +@all -info", user);
    const char *base = tl_redis_url(); /* redis://host:port */
    snprintf(url, sizeof url, "redis://%s:pw@%s", user, base + strlen("redis://"));
    cwork_redis *r = cwork_redis_new(url, NULL, NULL);
    cwork_client *cl = cwork_client_new(r, "noinfo", NULL);
    cwork_redis_info info;
    memset(&info, 0x55, sizeof info);
    cwork_error err = {0};
    CHECK_INT(cwork_client_redis_info(cl, &info, &err), 0);
    CHECK(!info.permitted);
    CHECK_STR(info.version, "");
    CHECK_INT(info.used_memory, -1);
    CHECK(!info.evicts);
    cwork_client_free(cl);
    cwork_redis_free(r);
    cmd("ACL DELUSER %s", user);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    RUN(throughput_per_minute_zero_filled_oldest_first);
    RUN(redis_info_of_the_namespace_server);
    RUN(redis_info_says_when_redis_evicts);
    RUN(redis_info_not_permitted_is_no_failure);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
