/* workwebui's bodies from the admin client (PROTOCOL §12.1, §17.8), byte for byte: the
 * expected texts are what Go's json.MarshalIndent(v, "", "\t") wrote for Go's client
 * types holding the same data (Go 1.19; pasted here, no Go code in the repo). */
#include "client_testutil.h"

#include <stdlib.h>
#include <time.h>

/* Calls a renderer and compares its body with want, byte for byte. */
#define CHECK_BODY(call, want)                                                                     \
    do {                                                                                           \
        char *body_ = NULL;                                                                        \
        size_t len_ = 0;                                                                           \
        cwork_error e_ = {0};                                                                      \
        int rc_call_ = (call);                                                                     \
        if (rc_call_ != 0)                                                                         \
            tl_fail(__FILE__, __LINE__, "%s: %d %s", #call, rc_call_, e_.message);                 \
        else                                                                                       \
            CHECK_MEM(body_, len_, want, strlen(want));                                            \
        cwork_free(body_);                                                                         \
    } while (0)

static void queues_body_of_spec_18_7(void)
{
    cwork_client *cl = fresh("cjq");
    /* Latency counts from the oldest job's t; repeat if the second changes meanwhile. */
    for (int attempt = 0; attempt < 3; attempt++) {
        tl_ns_delete(rc_, ns_);
        long long now = (long long)time(NULL);
        freeReplyObject(tl_cmd(rc_, "SADD %s:known_jobs send_email", ns_));
        freeReplyObject(tl_cmd(rc_,
                               "LPUSH %s:jobs:send_email "
                               "{\"name\":\"send_email\",\"id\":\"a\",\"t\":%lld,\"args\":null}",
                               ns_, now - 17));
        freeReplyObject(tl_cmd(rc_,
                               "LPUSH %s:jobs:send_email "
                               "{\"name\":\"send_email\",\"id\":\"b\",\"t\":%lld,\"args\":null}",
                               ns_, now - 1));
        char *body = NULL;
        size_t len = 0;
        CHECK_INT(cwork_client_queues_json(cl, &body, &len, NULL), 0);
        if ((long long)time(NULL) != now) {
            cwork_free(body);
            continue;
        }
        const char *want = "[\n"
                           "\t{\n"
                           "\t\t\"job_name\": \"send_email\",\n"
                           "\t\t\"count\": 2,\n"
                           "\t\t\"latency\": 17\n"
                           "\t}\n"
                           "]";
        CHECK_MEM(body, len, want, strlen(want));
        cwork_free(body);
        break;
    }
    /* A paused queue keeps Go's three fields. */
    freeReplyObject(tl_cmd(rc_, "SET %s:jobs:send_email:paused 1", ns_));
    freeReplyObject(tl_cmd(rc_, "DEL %s:jobs:send_email", ns_));
    CHECK_BODY(cwork_client_queues_json(cl, &body_, &len_, &e_),
               "[\n"
               "\t{\n"
               "\t\t\"job_name\": \"send_email\",\n"
               "\t\t\"count\": 0,\n"
               "\t\t\"latency\": 0\n"
               "\t}\n"
               "]");
    done(cl);
}

static void dead_body_of_spec_18_7(void)
{
    cwork_client *cl = fresh("cjd");
    freeReplyObject(tl_cmd(rc_, "ZADD %s:dead 1700000100 %s", ns_,
                           "{\"name\":\"send_email\",\"id\":\"0123456789abcdef01234567\","
                           "\"t\":1700000000,\"args\":{\"address\":\"a@b.c\"},\"fails\":4,"
                           "\"err\":\"boom\",\"failed_at\":1700000100}"));
    const char *want = "{\n"
                       "\t\"count\": 1,\n"
                       "\t\"jobs\": [\n"
                       "\t\t{\n"
                       "\t\t\t\"died_at\": 1700000100,\n"
                       "\t\t\t\"name\": \"send_email\",\n"
                       "\t\t\t\"id\": \"0123456789abcdef01234567\",\n"
                       "\t\t\t\"t\": 1700000000,\n"
                       "\t\t\t\"args\": {\n"
                       "\t\t\t\t\"address\": \"a@b.c\"\n"
                       "\t\t\t},\n"
                       "\t\t\t\"fails\": 4,\n"
                       "\t\t\t\"err\": \"boom\",\n"
                       "\t\t\t\"failed_at\": 1700000100\n"
                       "\t\t}\n"
                       "\t]\n"
                       "}";
    CHECK_BODY(cwork_client_list_json(cl, CWORK_SET_DEAD, 1, NULL, &body_, &len_, &e_), want);
    CHECK_BODY(cwork_client_list_json(cl, CWORK_SET_DEAD, 0, NULL, &body_, &len_, &e_), want);
    CHECK_BODY(cwork_client_list_json(cl, CWORK_SET_DEAD, 1, "send_email", &body_, &len_, &e_),
               want);
    done(cl);
}

/* Nested args indented level by level, sorted keys, Go floats (12345678901234567 is
 * float64 12345678901234568), HTML escaping in args and err, every optional field. The
 * member is in cjson's style (\/, raw <, another key order): Go re-encodes it. */
static void nested_args_and_escaping_as_go_marshal_indent(void)
{
    cwork_client *cl = fresh("cjn");
    freeReplyObject(tl_cmd(
        rc_, "ZADD %s:dead 1700000100 %s", ns_,
        "{\"d\":1700000060,\"name\":\"nest\",\"id\":\"n1\",\"t\":1700000000,\"args\":{\"z\":{\"b\":"
        "[1,2.5,{\"k\":\"v\",\"a\":[]}],\"a\":{}},\"e\":{},\"l\":[],\"n\":null,\"f\":1e21,"
        "\"small\":0.000001,\"big\":12345678901234567,\"s\":\"<script>alert('x&y')<\\/script>\","
        "\"u\":\"\xc3\xa9/\\u2028\"},\"unique\":true,\"fails\":2,\"err\":\"<script>boom</script> "
        "& more\",\"failed_at\":1700000050,\"trace\":{\"traceparent\":"
        "\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"}}"));
    const char *want =
        "{\n"
        "\t\"count\": 1,\n"
        "\t\"jobs\": [\n"
        "\t\t{\n"
        "\t\t\t\"died_at\": 1700000100,\n"
        "\t\t\t\"name\": \"nest\",\n"
        "\t\t\t\"id\": \"n1\",\n"
        "\t\t\t\"t\": 1700000000,\n"
        "\t\t\t\"args\": {\n"
        "\t\t\t\t\"big\": 12345678901234568,\n"
        "\t\t\t\t\"e\": {},\n"
        "\t\t\t\t\"f\": 1e+21,\n"
        "\t\t\t\t\"l\": [],\n"
        "\t\t\t\t\"n\": null,\n"
        "\t\t\t\t\"s\": \"\\u003cscript\\u003ealert('x\\u0026y')\\u003c/script\\u003e\",\n"
        "\t\t\t\t\"small\": 0.000001,\n"
        "\t\t\t\t\"u\": \"\xc3\xa9/\\u2028\",\n"
        "\t\t\t\t\"z\": {\n"
        "\t\t\t\t\t\"a\": {},\n"
        "\t\t\t\t\t\"b\": [\n"
        "\t\t\t\t\t\t1,\n"
        "\t\t\t\t\t\t2.5,\n"
        "\t\t\t\t\t\t{\n"
        "\t\t\t\t\t\t\t\"a\": [],\n"
        "\t\t\t\t\t\t\t\"k\": \"v\"\n"
        "\t\t\t\t\t\t}\n"
        "\t\t\t\t\t]\n"
        "\t\t\t\t}\n"
        "\t\t\t},\n"
        "\t\t\t\"unique\": true,\n"
        "\t\t\t\"fails\": 2,\n"
        "\t\t\t\"err\": \"\\u003cscript\\u003eboom\\u003c/script\\u003e \\u0026 more\",\n"
        "\t\t\t\"failed_at\": 1700000050,\n"
        "\t\t\t\"d\": 1700000060,\n"
        "\t\t\t\"trace\": {\n"
        "\t\t\t\t\"traceparent\": \"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"\n"
        "\t\t\t}\n"
        "\t\t}\n"
        "\t]\n"
        "}";
    CHECK_BODY(cwork_client_list_json(cl, CWORK_SET_DEAD, 1, NULL, &body_, &len_, &e_), want);
    done(cl);
}

static void retry_and_scheduled_bodies_lead_with_their_own_field(void)
{
    cwork_client *cl = fresh("cjr");
    freeReplyObject(tl_cmd(rc_, "ZADD %s:retry 1700000200 %s", ns_,
                           "{\"name\":\"a\",\"id\":\"r1\",\"t\":5,\"args\":null}"));
    freeReplyObject(
        tl_cmd(rc_, "ZADD %s:retry 1700000300 %s", ns_, "{\"id\":\"r2\",\"t\":6,\"args\":{}}"));
    CHECK_BODY(cwork_client_list_json(cl, CWORK_SET_RETRY, 1, NULL, &body_, &len_, &e_),
               "{\n"
               "\t\"count\": 2,\n"
               "\t\"jobs\": [\n"
               "\t\t{\n"
               "\t\t\t\"retry_at\": 1700000200,\n"
               "\t\t\t\"name\": \"a\",\n"
               "\t\t\t\"id\": \"r1\",\n"
               "\t\t\t\"t\": 5,\n"
               "\t\t\t\"args\": null\n"
               "\t\t},\n"
               "\t\t{\n"
               "\t\t\t\"retry_at\": 1700000300,\n"
               "\t\t\t\"id\": \"r2\",\n"
               "\t\t\t\"t\": 6,\n"
               "\t\t\t\"args\": {}\n"
               "\t\t}\n"
               "\t]\n"
               "}");
    /* An empty page: jobs is [] (Go's empty slice), not null. */
    CHECK_BODY(cwork_client_list_json(cl, CWORK_SET_SCHEDULED, 1, NULL, &body_, &len_, &e_),
               "{\n"
               "\t\"count\": 0,\n"
               "\t\"jobs\": []\n"
               "}");
    CHECK_BODY(cwork_client_list_json(cl, CWORK_SET_RETRY, 2, NULL, &body_, &len_, &e_),
               "{\n"
               "\t\"count\": 2,\n"
               "\t\"jobs\": []\n"
               "}");
    freeReplyObject(tl_cmd(rc_, "ZADD %s:scheduled 1700000400 %s", ns_,
                           "{\"name\":\"s\",\"id\":\"s1\",\"t\":7,\"args\":null}"));
    CHECK_BODY(cwork_client_list_json(cl, CWORK_SET_SCHEDULED, 1, NULL, &body_, &len_, &e_),
               "{\n"
               "\t\"count\": 1,\n"
               "\t\"jobs\": [\n"
               "\t\t{\n"
               "\t\t\t\"run_at\": 1700000400,\n"
               "\t\t\t\"name\": \"s\",\n"
               "\t\t\t\"id\": \"s1\",\n"
               "\t\t\t\"t\": 7,\n"
               "\t\t\t\"args\": null\n"
               "\t\t}\n"
               "\t]\n"
               "}");
    done(cl);
}

static void empty_namespace_gives_empty_arrays_and_null_busy_workers(void)
{
    cwork_client *cl = fresh("cje");
    CHECK_BODY(cwork_client_queues_json(cl, &body_, &len_, &e_), "[]");
    CHECK_BODY(cwork_client_pools_json(cl, &body_, &len_, &e_), "[]");
    CHECK_BODY(cwork_client_busy_workers_json(cl, &body_, &len_, &e_), "null");
    /* Workers exist but none is busy: still null. */
    freeReplyObject(tl_cmd(rc_, "SADD %s:worker_pools ffff", ns_));
    freeReplyObject(tl_cmd(rc_, "HSET %s:worker_pools:ffff worker_ids aaa,bbb", ns_));
    CHECK_BODY(cwork_client_busy_workers_json(cl, &body_, &len_, &e_), "null");
    done(cl);
}

static const char pools_want[] = "[\n"
                                 "\t{\n"
                                 "\t\t\"worker_pool_id\": \"0123456789abcdef01234567\",\n"
                                 "\t\t\"started_at\": 1425263409,\n"
                                 "\t\t\"heartbeat_at\": 1425263414,\n"
                                 "\t\t\"job_names\": [\n"
                                 "\t\t\t\"bar\",\n"
                                 "\t\t\t\"foo\"\n"
                                 "\t\t],\n"
                                 "\t\t\"concurrency\": 10,\n"
                                 "\t\t\"host\": \"host\\u003c1\\u003e\",\n"
                                 "\t\t\"pid\": 4242,\n"
                                 "\t\t\"worker_ids\": [\n"
                                 "\t\t\t\"bbb\",\n"
                                 "\t\t\t\"ccc\"\n"
                                 "\t\t]\n"
                                 "\t},\n"
                                 "\t{\n"
                                 "\t\t\"worker_pool_id\": \"1123456789abcdef01234567\",\n"
                                 "\t\t\"started_at\": 0,\n"
                                 "\t\t\"heartbeat_at\": 0,\n"
                                 "\t\t\"job_names\": [\n"
                                 "\t\t\t\"\"\n"
                                 "\t\t],\n"
                                 "\t\t\"concurrency\": 0,\n"
                                 "\t\t\"host\": \"\",\n"
                                 "\t\t\"pid\": 0,\n"
                                 "\t\t\"worker_ids\": null\n"
                                 "\t},\n"
                                 "\t{\n"
                                 "\t\t\"worker_pool_id\": \"ffff\",\n"
                                 "\t\t\"started_at\": 0,\n"
                                 "\t\t\"heartbeat_at\": 0,\n"
                                 "\t\t\"job_names\": null,\n"
                                 "\t\t\"concurrency\": 0,\n"
                                 "\t\t\"host\": \"\",\n"
                                 "\t\t\"pid\": 0,\n"
                                 "\t\t\"worker_ids\": null\n"
                                 "\t}\n"
                                 "]";

static const char busy_want[] = "[\n"
                                "\t{\n"
                                "\t\t\"worker_id\": \"bbb\",\n"
                                "\t\t\"is_busy\": true,\n"
                                "\t\t\"job_name\": \"foo\",\n"
                                "\t\t\"job_id\": \"bar\",\n"
                                "\t\t\"started_at\": 1425263401,\n"
                                "\t\t\"args_json\": \"{\\\"a\\\":1,\\\"b\\\":\\\"wat\\\"}\",\n"
                                "\t\t\"checkin\": \"doin \\u003cit\\u003e\",\n"
                                "\t\t\"checkin_at\": 1425263402\n"
                                "\t}\n"
                                "]";

/* Pools: a full heartbeat (lists sorted), one whose job_names is empty ([""]), an id
 * without a hash (null lists). Busy workers: bbb has an observation, ccc none. */
static void pools_and_busy_workers_bodies(void)
{
    cwork_client *cl = fresh("cjp");
    freeReplyObject(tl_cmd(rc_,
                           "SADD %s:worker_pools ffff 1123456789abcdef01234567 "
                           "0123456789abcdef01234567",
                           ns_));
    freeReplyObject(tl_cmd(rc_,
                           "HSET %s:worker_pools:0123456789abcdef01234567 heartbeat_at 1425263414 "
                           "started_at 1425263409 job_names foo,bar concurrency 10 worker_ids "
                           "ccc,bbb host host<1> pid 4242",
                           ns_));
    freeReplyObject(
        tl_cmd(rc_, "HSET %s:worker_pools:1123456789abcdef01234567 job_names %s", ns_, ""));
    CHECK_BODY(cwork_client_pools_json(cl, &body_, &len_, &e_), pools_want);
    freeReplyObject(tl_cmd(rc_,
                           "HSET %s:worker:bbb job_name foo job_id bar started_at 1425263401 "
                           "args {\"a\":1,\"b\":\"wat\"} checkin %s checkin_at 1425263402",
                           ns_, "doin <it>"));
    CHECK_BODY(cwork_client_busy_workers_json(cl, &body_, &len_, &e_), busy_want);
    done(cl);
}

static void errors_come_back_as_values(void)
{
    cwork_client *cl = fresh("cjx");
    freeReplyObject(tl_cmd(rc_, "SADD %s:worker_pools p", ns_));
    freeReplyObject(tl_cmd(rc_, "HSET %s:worker_pools:p pid notanumber", ns_));
    char *body = (char *)"untouched";
    cwork_error err = {0};
    /* a damaged pool hash is no error: the pool is listed as damaged (test_client) */
    CHECK_INT(cwork_client_pools_json(cl, &body, NULL, &err), 0);
    CHECK(strstr(body, "notanumber") != NULL && strstr(body, "\"damaged\"") != NULL);
    cwork_free(body);
    body = (char *)"untouched";
    CHECK_INT(cwork_client_list_json(cl, (cwork_job_set)9, 1, NULL, &body, NULL, &err),
              CWORK_EINVAL);
    done(cl);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    RUN(queues_body_of_spec_18_7);
    RUN(dead_body_of_spec_18_7);
    RUN(nested_args_and_escaping_as_go_marshal_indent);
    RUN(retry_and_scheduled_bodies_lead_with_their_own_field);
    RUN(empty_namespace_gives_empty_arrays_and_null_busy_workers);
    RUN(pools_and_busy_workers_bodies);
    RUN(errors_come_back_as_values);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
