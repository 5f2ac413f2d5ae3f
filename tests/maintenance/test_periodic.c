/* The periodic enqueuer's pass (src/maintenance/periodic.c) against a real Redis: the instances of
 * PROTOCOL §10.3 byte for byte, the 120 s window on last_periodic_enqueue, no traffic at all
 * without periodic jobs, failures that leave the window open, and the log records.
 *
 * The specs below carry no TZ= prefix (the spec text is part of the id), so this process
 * runs with the local zone UTC: TZ is set before anything reads it. */
#include "testlib.h"

#include "keys.h"
#include "periodic.h"

#include <stdlib.h>

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];
static cw_keys keys_;

static void fresh(const char *tag)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    cw_keys_clear(&keys_);
    cw_keys_init(&keys_, ns_);
}

/* ---------------------------------------------------------------- helpers */

static cw_periodic *with(const char *const *pairs, size_t n)
{
    cw_periodic *p = cw_periodic_new();
    CHECK(p != NULL);
    for (size_t i = 0; i < n; i += 2) {
        cwork_error err = {0};
        if (cw_periodic_add(p, pairs[i], pairs[i + 1], &err) != 0)
            tl_fail(__FILE__, __LINE__, "add %s: %s", pairs[i], err.message);
    }
    return p;
}

static size_t run(cw_periodic *p, int64_t now, int want_rc)
{
    size_t n = 12345;
    cwork_error err = {0};
    int rc = cw_periodic_run(p, redis_, &keys_, now, &n, &err);
    if (rc != want_rc)
        tl_fail(__FILE__, __LINE__, "cw_periodic_run: %d (%s), want %d", rc, err.message, want_rc);
    return n;
}

static void check_dump(const char *want)
{
    char *got = tl_ns_dump(rc_, ns_);
    CHECK_STR(got, want);
    free(got);
}

/* ---------------------------------------------------------------- cases */

static void instance_bytes_match_go(void)
{
    cw_buf b;
    cw_buf_init(&b);
    cw_periodic_instance(&b, "calc", "0 * * * * *", 1700000040, 1700000100);
    CHECK_STR(b.data, "{\"name\":\"calc\",\"id\":\"periodic:calc:0 * * * * *:1700000040\","
                      "\"t\":1700000040,\"args\":null,\"d\":1700000100}");
    cw_buf_reset(&b);
    /* Go's escaping of the name and the spec inside the id (HTML-safe, \u003c …). */
    cw_periodic_instance(&b, "a\"<b>&", "TZ=Europe/Berlin 0 0 * * * *", 1700002800, 1700006400);
    CHECK_STR(b.data, "{\"name\":\"a\\\"\\u003cb\\u003e\\u0026\","
                      "\"id\":\"periodic:a\\\"\\u003cb\\u003e\\u0026:TZ=Europe/Berlin 0 0 * * * *"
                      ":1700002800\",\"t\":1700002800,\"args\":null,\"d\":1700006400}");
    cw_buf_reset(&b);
    /* No following fire time: Go writes the zero time's Unix seconds. */
    cw_periodic_instance(&b, "leap", "0 0 0 29 2 *", 4080672000, 0);
    CHECK_STR(b.data, "{\"name\":\"leap\",\"id\":\"periodic:leap:0 0 0 29 2 *:4080672000\","
                      "\"t\":4080672000,\"args\":null,\"d\":-62135596800}");
    CHECK(!b.oom);
    cw_buf_free(&b);
}

/* The go1.21 spelling (cwork_go_json): a name holding U+0008 is \u0008 in every instance,
 * as a Go 1.19-1.21 pool writes it, so that the two write one member per fire time. */
static void go121_spells_instances_as_old_go(void)
{
    fresh("pegj");
    const char *pairs[] = {"0 * * * * *", "b\bx"};
    cw_periodic *p = with(pairs, 2);
    cw_periodic_set_go_json(p, CWORK_GO_JSON_121);
    CHECK_INT(run(p, 1700000000, 0), 4);
    cw_buf want;
    cw_buf_init(&want);
    /* (cwork's own dashboard hash keeps cwork's spelling: Go never reads it) */
    cw_buf_printf(&want,
                  "%s:cwork:periodic hash ttl=600 [\"b\\x5cbx\",\"0 * * * * *\"]={\"next_at\":"
                  "1700000040,\"seen_at\":1700000000}\n"
                  "%s:last_periodic_enqueue string 1700000000\n%s:scheduled zset",
                  ns_, ns_, ns_);
    for (long long t = 1700000040; t < 1700000240; t += 60)
        cw_buf_printf(
            &want,
            "%s{\"name\":\"b\\x5cu0008x\",\"id\":\"periodic:b\\x5cu0008x:0 * * * * *:%lld\","
            "\"t\":%lld,\"args\":null,\"d\":%lld}=%lld",
            t == 1700000040 ? " " : " | ", t, t, t + 60, t);
    cw_buf_putc(&want, '\n');
    check_dump(want.data);
    cw_buf_free(&want);
    cw_periodic_free(p);
    tl_ns_delete(rc_, ns_);
}

/* Three specs, one pass at now = 1700000000 (the form of PROTOCOL §17.5). */
static void vectors_of_spec_18_4(void)
{
    fresh("pe");
    const char *pairs[] = {"0 * * * * *", "calc", "*/20 * * * * *", "tick", "*/5 * * * *", "five"};
    cw_periodic *p = with(pairs, 6);
    CHECK_INT(cw_periodic_count(p), 3);
    CHECK_STR(cw_periodic_name(p, 1), "tick");
    CHECK_STR(cw_periodic_spec(p, 2), "*/5 * * * *");
    CHECK(cw_periodic_schedule(p, 0) != NULL);
    CHECK_INT(run(p, 1700000000, 0), 4 + 11 + 1);

    cw_buf want;
    cw_buf_init(&want);
    /* Every pass publishes the pool's periodic jobs for dashboards (field order: bytes). */
    cw_buf_printf(&want,
                  "%s:cwork:periodic hash ttl=600 "
                  "[\"calc\",\"0 * * * * *\"]={\"next_at\":1700000040,\"seen_at\":1700000000} | "
                  "[\"five\",\"*/5 * * * *\"]={\"next_at\":1700000100,\"seen_at\":1700000000} | "
                  "[\"tick\",\"*/20 * * * * *\"]={\"next_at\":1700000020,"
                  "\"seen_at\":1700000000}\n",
                  ns_);
    cw_buf_printf(&want, "%s:last_periodic_enqueue string 1700000000\n%s:scheduled zset", ns_, ns_);
    /* ZRANGE order: by score, then member bytes ("calc" < "five" < "tick"). */
    static const struct {
        const char *name, *spec;
        long long t, d;
    } m[] = {{"tick", "*/20 * * * * *", 1700000020, 1700000040},
             {"calc", "0 * * * * *", 1700000040, 1700000100},
             {"tick", "*/20 * * * * *", 1700000040, 1700000060},
             {"tick", "*/20 * * * * *", 1700000060, 1700000080},
             {"tick", "*/20 * * * * *", 1700000080, 1700000100},
             {"calc", "0 * * * * *", 1700000100, 1700000160},
             {"five", "*/5 * * * *", 1700000100, 1700000400},
             {"tick", "*/20 * * * * *", 1700000100, 1700000120},
             {"tick", "*/20 * * * * *", 1700000120, 1700000140},
             {"tick", "*/20 * * * * *", 1700000140, 1700000160},
             {"calc", "0 * * * * *", 1700000160, 1700000220},
             {"tick", "*/20 * * * * *", 1700000160, 1700000180},
             {"tick", "*/20 * * * * *", 1700000180, 1700000200},
             {"tick", "*/20 * * * * *", 1700000200, 1700000220},
             {"calc", "0 * * * * *", 1700000220, 1700000280},
             {"tick", "*/20 * * * * *", 1700000220, 1700000240}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        cw_buf_printf(&want,
                      "%s{\"name\":\"%s\",\"id\":\"periodic:%s:%s:%lld\",\"t\":%lld,"
                      "\"args\":null,\"d\":%lld}=%lld",
                      i ? " | " : " ", m[i].name, m[i].name, m[i].spec, m[i].t, m[i].t, m[i].d,
                      m[i].t);
    cw_buf_putc(&want, '\n');
    check_dump(want.data);
    cw_buf_free(&want);
    cw_periodic_free(p);
    tl_ns_delete(rc_, ns_);
}

static void hourly_and_the_forks_own_vectors(void)
{
    fresh("pe");
    const char *pairs[] = {"@hourly", "hourly"};
    cw_periodic *p = with(pairs, 2);
    CHECK_INT(run(p, 1700002700, 0), 1);
    char want[512];
    snprintf(want, sizeof want,
             "%s:cwork:periodic hash ttl=600 "
             "[\"hourly\",\"@hourly\"]={\"next_at\":1700002800,\"seen_at\":1700002700}\n"
             "%s:last_periodic_enqueue string 1700002700\n%s:scheduled zset "
             "{\"name\":\"hourly\",\"id\":\"periodic:hourly:@hourly:1700002800\","
             "\"t\":1700002800,\"args\":null,\"d\":1700006400}=1700002800\n",
             ns_, ns_, ns_);
    check_dump(want);
    cw_periodic_free(p);
    tl_ns_delete(rc_, ns_);

    fresh("pe");
    const char *fork[] = {"3/49 * * * * *", "bar", "0/29 * * * * *", "foo"};
    p = with(fork, 4);
    CHECK(run(p, 1468359453, 0) > 2);
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:scheduled 0 0", ns_);
    CHECK(r->elements == 1 &&
          !strcmp(r->element[0]->str, "{\"name\":\"bar\",\"id\":\"periodic:bar:3/49 * * * * *:"
                                      "1468359472\",\"t\":1468359472,\"args\":null,"
                                      "\"d\":1468359483}"));
    freeReplyObject(r);
    r = tl_cmd(rc_, "ZRANGEBYSCORE %s:scheduled 1468359478 1468359478", ns_);
    CHECK(r->elements == 1 &&
          !strcmp(r->element[0]->str, "{\"name\":\"foo\",\"id\":\"periodic:foo:0/29 * * * * *:"
                                      "1468359478\",\"t\":1468359478,\"args\":null,"
                                      "\"d\":1468359480}"));
    freeReplyObject(r);
    cw_periodic_free(p);
    tl_ns_delete(rc_, ns_);
}

/* PROTOCOL §10.2: a pass within the last 120 s (by anyone) means nothing to do. */
static void window_rule(void)
{
    const int64_t now = 1700000000;
    const char *pairs[] = {"0 * * * * *", "calc"};
    cw_periodic *p = with(pairs, 2);
    static const struct {
        const char *stored; /* NULL: absent */
        int writes;
    } cases[] = {{"1699999940", 0}, {"1699999880", 0}, /* exactly now - 120: not older */
                 {"1699999879", 1}, {NULL, 1},
                 {"garbage", 1},    {"+1699999999", 0}, /* strconv.ParseInt takes the sign */
                 {"", 1},           {"1e9", 1},
                 {"-5", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fresh("pw");
        if (cases[i].stored)
            freeReplyObject(tl_cmd(rc_, "SET %s:last_periodic_enqueue %s", ns_, cases[i].stored));
        size_t n = run(p, now, 0);
        redisReply *r = tl_cmd(rc_, "GET %s:last_periodic_enqueue", ns_);
        redisReply *z = tl_cmd(rc_, "ZCARD %s:scheduled", ns_);
        if (cases[i].writes) {
            CHECK_INT(n, 4);
            CHECK(r->type == REDIS_REPLY_STRING && !strcmp(r->str, "1700000000"));
            CHECK_INT(z->integer, 4);
        } else {
            CHECK_INT(n, 0);
            CHECK(r->type == REDIS_REPLY_STRING && !strcmp(r->str, cases[i].stored));
            CHECK_INT(z->integer, 0);
        }
        freeReplyObject(r);
        freeReplyObject(z);
        tl_ns_delete(rc_, ns_);
    }
    cw_periodic_free(p);
}

/* PROTOCOL §16.12: a pool without periodic jobs never touches Redis. */
static void no_periodic_jobs_no_traffic(void)
{
    fresh("pn");
    cw_periodic *p = cw_periodic_new();
    CHECK_INT(run(p, 1700000000, 0), 0);
    check_dump("");
    cwork_error err = {0};
    cwork_redis *nowhere = cwork_redis_new("redis://127.0.0.1:1", NULL, &err);
    CHECK(nowhere != NULL);
    size_t n = 7;
    CHECK_INT(cw_periodic_run(p, nowhere, &keys_, 1700000000, &n, &err), 0);
    CHECK_INT(n, 0);
    CHECK_INT(cw_periodic_run(NULL, nowhere, &keys_, 1700000000, &n, &err), 0);
    cwork_redis_free(nowhere);
    cw_periodic_free(p);
}

/* A failed pass (here: <p>scheduled has the wrong type) reports the error, logs it,
 * and leaves last_periodic_enqueue alone so that the next pass tries again. */
static void failed_pass_leaves_the_window_open(void)
{
    fresh("pf");
    freeReplyObject(tl_cmd(rc_, "SET %s:scheduled not-a-zset", ns_));
    const char *pairs[] = {"0 * * * * *", "calc"};
    cw_periodic *p = with(pairs, 2);
    tl_capture_logs();
    CHECK_INT(run(p, 1700000000, CWORK_EREDIS), 0);
    cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
    char want[512];
    snprintf(want, sizeof want,
             "%s:cwork:periodic hash ttl=600 "
             "[\"calc\",\"0 * * * * *\"]={\"next_at\":1700000040,\"seen_at\":1700000000}\n"
             "%s:scheduled string not-a-zset\n",
             ns_, ns_);
    check_dump(want);
    const tl_log *r = tl_find_log("periodic_enqueuer.loop.enqueue");
    CHECK(r != NULL && r->level == CWORK_LOG_ERROR && strstr(r->fields, "WRONGTYPE"));
    tl_ns_delete(rc_, ns_);

    /* A GET that fails (the key is a list) is logged and the pass goes ahead. */
    fresh("pf");
    freeReplyObject(tl_cmd(rc_, "RPUSH %s:last_periodic_enqueue x", ns_));
    tl_capture_logs();
    CHECK_INT(run(p, 1700000000, 0), 4);
    cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
    r = tl_find_log("periodic_enqueuer.should_enqueue");
    CHECK(r != NULL && r->level == CWORK_LOG_ERROR && strstr(r->fields, "WRONGTYPE"));
    redisReply *g = tl_cmd(rc_, "GET %s:last_periodic_enqueue", ns_);
    CHECK(g->type == REDIS_REPLY_STRING && !strcmp(g->str, "1700000000"));
    freeReplyObject(g);
    cw_periodic_free(p);
    tl_ns_delete(rc_, ns_);
}

/* Publishing is best effort: a published key of another type (someone else's) is
 * left exactly as it was — no TTL put on it — and the pass goes on. */
static void publishing_leaves_a_foreign_key_alone(void)
{
    fresh("pp");
    freeReplyObject(tl_cmd(rc_, "RPUSH %s:cwork:periodic mine", ns_));
    const char *pairs[] = {"0 * * * * *", "calc"};
    cw_periodic *p = with(pairs, 2);
    tl_capture_logs();
    CHECK_INT(run(p, 1700000000, 0), 4);
    cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
    const tl_log *r = tl_find_log("periodic_enqueuer.publish");
    CHECK(r != NULL && r->level == CWORK_LOG_WARN && strstr(r->fields, "WRONGTYPE"));
    redisReply *t = tl_cmd(rc_, "TTL %s:cwork:periodic", ns_);
    CHECK_INT(t->integer, -1);
    freeReplyObject(t);
    redisReply *z = tl_cmd(rc_, "ZCARD %s:scheduled", ns_);
    CHECK_INT(z->integer, 4);
    freeReplyObject(z);
    cw_periodic_free(p);
    tl_ns_delete(rc_, ns_);
}

static void log_records(void)
{
    fresh("pl");
    const char *pairs[] = {"0 * * * * *", "calc"};
    cw_periodic *p = with(pairs, 2);
    tl_capture_logs();
    run(p, 1700000000, 0);
    run(p, 1700000030, 0); /* within the window: no pass */
    cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
    CHECK_INT(tl_count_logs("periodic_enqueuer.loop"), 2);
    CHECK_INT(tl_count_logs("periodic_enqueuer.enqueue"), 4);
    CHECK_STR(tl_logs[0].message, "periodic_enqueuer.loop");
    CHECK_STR(tl_logs[0].fields, "enqueue_time=2023-11-14T22:13:20Z should_enqueue=true");
    CHECK_STR(tl_logs[1].message, "periodic_enqueuer.enqueue");
    CHECK_STR(tl_logs[1].fields, "job_scheduled_time=2023-11-14T22:14:00Z job_name=calc "
                                 "job_id=periodic:calc:0 * * * * *:1700000040");
    CHECK(tl_logs[1].level == CWORK_LOG_DEBUG);
    CHECK_STR(tl_logs[5].fields, "enqueue_time=2023-11-14T22:13:50Z should_enqueue=false");
    cw_periodic_free(p);
    tl_ns_delete(rc_, ns_);
}

static void specs_are_checked_when_added(void)
{
    cw_periodic *p = cw_periodic_new();
    cwork_error err = {0};
    CHECK_INT(cw_periodic_add(p, "0 0 0 30 2 *", "never", &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "never fires") != NULL);
    CHECK_INT(cw_periodic_add(p, "* * *", "short", &err), CWORK_EINVAL);
    CHECK_STR(err.message, "expected 5 to 6 fields, found 3: [* * *]");
    CHECK_INT(cw_periodic_add(p, NULL, "x", &err), CWORK_EINVAL);
    CHECK_INT(cw_periodic_count(p), 0);
    cw_periodic_free(p);
    cw_periodic_free(NULL);
}

/* @every: its instances depend on when the pass runs (PROTOCOL §10.3). */
static void every_specs_schedule_from_now(void)
{
    fresh("pv");
    const char *pairs[] = {"@every 1m", "ev", "TZ=Asia/Tokyo 0 0 9 * * *", "nine"};
    cw_periodic *p = with(pairs, 4);
    CHECK(cw_cron_is_every(cw_periodic_schedule(p, 0)));
    CHECK_INT(run(p, 1700000000, 0), 3);
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:scheduled 0 -1 WITHSCORES", ns_);
    CHECK(r->elements == 6 && !strcmp(r->element[1]->str, "1700000060") &&
          !strcmp(r->element[5]->str, "1700000180"));
    CHECK(r->elements == 6 && strstr(r->element[0]->str, "\"d\":1700000120}"));
    freeReplyObject(r);
    /* 09:00 in Tokyo is 00:00 UTC: 1700006400 is beyond the horizon from here... */
    tl_ns_delete(rc_, ns_);
    fresh("pv");
    CHECK_INT(run(p, 1700006400 - 200, 0), 4); /* ...and inside it from here */
    cw_periodic_free(p);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    setenv("TZ", "UTC", 1); /* before anything reads the local zone */
    rc_ = tl_redis_connect();
    cwork_error err = {0};
    redis_ = cwork_redis_new(tl_redis_url(), NULL, &err);
    if (!redis_) {
        fprintf(stderr, "cwork_redis_new: %s\n", err.message);
        return 1;
    }
    RUN(instance_bytes_match_go);
    RUN(vectors_of_spec_18_4);
    RUN(go121_spells_instances_as_old_go);
    RUN(hourly_and_the_forks_own_vectors);
    RUN(window_rule);
    RUN(no_periodic_jobs_no_traffic);
    RUN(failed_pass_leaves_the_window_open);
    RUN(publishing_leaves_a_foreign_key_alone);
    RUN(log_records);
    RUN(specs_are_checked_when_added);
    RUN(every_specs_schedule_from_now);
    cw_keys_clear(&keys_);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
