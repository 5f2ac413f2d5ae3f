/* The heartbeater against a real Redis (PROTOCOL §6, §17.7), checked over the whole
 * namespace: the hash and the pools set of a beat, started_at constant across beats,
 * the thread beating on its own and waking at once on stop, removal on stop (with this
 * pool's lock_info fields, PROTOCOL §16.8), and errors reported and logged. */
#include "clock_testutil.h"
#include "heartbeat.h"
#include "testlib.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];
static cw_keys keys_;
static char expect_[4096];

static const char *const jobs_[] = {"foo", "bar"};
static const char *const workers_[] = {"ccc", "bbb"};

/* ---- captured error records: a count per message key and the last error text */
#define LOG_KEYS 8
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char log_msgs_[LOG_KEYS][64];
static int log_counts_[LOG_KEYS];
static char log_last_error_[256];

static void test_logger(void *ud, cwork_log_level level, const char *message,
                        const cwork_log_field *fields, size_t nfields)
{
    (void)ud;
    if (level != CWORK_LOG_ERROR) return;
    pthread_mutex_lock(&log_mu);
    for (int i = 0; i < LOG_KEYS; i++) {
        if (log_msgs_[i][0] == '\0') snprintf(log_msgs_[i], sizeof log_msgs_[i], "%s", message);
        if (strcmp(log_msgs_[i], message) == 0) {
            log_counts_[i]++;
            break;
        }
    }
    for (size_t i = 0; i < nfields; i++)
        if (strcmp(fields[i].key, "error") == 0)
            snprintf(log_last_error_, sizeof log_last_error_, "%s", fields[i].value);
    pthread_mutex_unlock(&log_mu);
}

static void log_reset(void)
{
    pthread_mutex_lock(&log_mu);
    memset(log_msgs_, 0, sizeof log_msgs_);
    memset(log_counts_, 0, sizeof log_counts_);
    log_last_error_[0] = '\0';
    pthread_mutex_unlock(&log_mu);
}

static int logged(const char *msg)
{
    int n = 0;
    pthread_mutex_lock(&log_mu);
    for (int i = 0; i < LOG_KEYS; i++)
        if (strcmp(log_msgs_[i], msg) == 0) n = log_counts_[i];
    pthread_mutex_unlock(&log_mu);
    return n;
}

/* ---- helpers */

static cw_heartbeat *fresh(const char *tag)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    CHECK_INT(cw_keys_init(&keys_, ns_), 0);
    cw_heartbeat *hb = cw_heartbeat_new(redis_, &keys_, "abcd", jobs_, 2, workers_, 2, 10);
    CHECK(hb != NULL);
    return hb;
}

static void finish(cw_heartbeat *hb)
{
    cw_heartbeat_free(hb);
    tl_ns_delete(rc_, ns_);
    cw_keys_clear(&keys_);
}

static long long hget(const char *field)
{
    redisReply *r = tl_cmd(rc_, "HGET %s:worker_pools:abcd %s", ns_, field);
    long long v = r->type == REDIS_REPLY_STRING ? atoll(r->str) : -1;
    freeReplyObject(r);
    return v;
}

static void check_dump(const char *want)
{
    char *got = tl_ns_dump(rc_, ns_);
    CHECK_STR(got, want);
    free(got);
}

/* A heartbeat laid out as in PROTOCOL §17.7, with the given times, as tl_ns_dump shows it. */
static const char *spec_dump(long long heartbeat_at, long long started_at)
{
    char host[256];
    CHECK_INT(gethostname(host, sizeof host), 0);
    host[sizeof host - 1] = '\0';
    snprintf(expect_, sizeof expect_,
             "%s:worker_pools set abcd\n"
             "%s:worker_pools:abcd hash concurrency=10 | cwork=" CWORK_VERSION_STRING
             " | heartbeat_at=%lld | host=%s | "
             "job_names=bar,foo | pid=%lld | started_at=%lld | worker_ids=bbb,ccc\n",
             ns_, ns_, heartbeat_at, host, (long long)getpid(), started_at);
    return expect_;
}

/* ---- cases */

static void beat_writes_the_spec_hash(void)
{
    cw_heartbeat *hb = fresh("hb");
    cwork_error err = {0};
    CHECK_INT(cw_heartbeat_beat(hb, &err), 0);
    long long hat = hget("heartbeat_at"), sat = hget("started_at");
    CHECK(llabs(hat - (long long)time(NULL)) <= 1);
    CHECK_INT(sat, hat);
    check_dump(spec_dump(hat, sat)); /* no TTL on either key, nothing else written */
    finish(hb);
}

static void empty_lists_write_empty_strings(void)
{
    tl_unique_ns("hbempty", ns_, sizeof ns_);
    CHECK_INT(cw_keys_init(&keys_, ns_), 0);
    cw_heartbeat *hb = cw_heartbeat_new(redis_, &keys_, "abcd", NULL, 0, NULL, 0, 0);
    CHECK(hb != NULL);
    CHECK_INT(cw_heartbeat_beat(hb, NULL), 0);
    redisReply *r = tl_cmd(rc_, "HMGET %s:worker_pools:abcd job_names worker_ids concurrency", ns_);
    CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 3);
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 3) {
        CHECK_STR(r->element[0]->str, "");
        CHECK_STR(r->element[1]->str, "");
        CHECK_STR(r->element[2]->str, "0");
    }
    freeReplyObject(r);
    CHECK_INT(cw_heartbeat_stop(hb, 1, NULL), 0);
    check_dump("");
    finish(hb);
}

/* On the manual clock (clock_testutil.h): heartbeat_at is the clock's time, started_at
 * the first beat's. */
static void started_at_stays_while_heartbeat_at_advances(void)
{
    int64_t t0 = clock_start_manual();
    cw_heartbeat *hb = fresh("hbtwo");
    CHECK_INT(cw_heartbeat_beat(hb, NULL), 0);
    CHECK_INT(hget("heartbeat_at"), t0 / 1000);
    CHECK_INT(hget("started_at"), t0 / 1000);
    cw_clock_advance_ms(7500);
    CHECK_INT(cw_heartbeat_beat(hb, NULL), 0);
    CHECK_INT(hget("heartbeat_at"), t0 / 1000 + 7);
    CHECK_INT(hget("started_at"), t0 / 1000);
    check_dump(spec_dump(t0 / 1000 + 7, t0 / 1000));
    finish(hb);
    cw_clock_system();
}

/* Waits up to 5 s of real time for heartbeat_at to differ from was; returns it. */
static long long next_beat(long long was)
{
    long long t0 = tl_now_ms(), at = hget("heartbeat_at");
    while (at == was && tl_now_ms() - t0 < 5000) {
        tl_sleep_ms(5);
        at = hget("heartbeat_at");
    }
    return at;
}

/* The thread's own beat comes a period after the synchronous one, not a millisecond
 * sooner, then every period; stop wakes the sleeping thread at once. On the manual
 * clock: the periods pass without waiting for them. */
static void thread_beats_every_period(void)
{
    const long long period_s = CW_HEARTBEAT_PERIOD_MS / 1000; /* heartbeat_at's unit */
    CHECK(CW_HEARTBEAT_PERIOD_MS % 1000 == 0);
    int64_t t0 = clock_start_manual();
    long long sat = t0 / 1000;
    cw_heartbeat *hb = fresh("hbthread");
    CHECK_INT(cw_heartbeat_beat(hb, NULL), 0);
    CHECK_INT(cw_heartbeat_start(hb, NULL), 0);
    cwork_error err = {0};
    CHECK_INT(cw_heartbeat_start(hb, &err), CWORK_EINVAL); /* only one thread */
    CLOCK_ADVANCE(1, CW_HEARTBEAT_PERIOD_MS - 1);
    tl_sleep_ms(300);                     /* (time for a wrong beat to show) */
    CHECK_INT(hget("heartbeat_at"), sat); /* no beat before the period is over */
    cw_clock_advance_ms(1);
    CHECK_INT(next_beat(sat), sat + period_s);
    /* The next period counts from the last one's end, not from the beat's. */
    CLOCK_ADVANCE(1, CW_HEARTBEAT_PERIOD_MS - 1);
    tl_sleep_ms(300);
    CHECK_INT(hget("heartbeat_at"), sat + period_s);
    cw_clock_advance_ms(1);
    CHECK_INT(next_beat(sat + period_s), sat + 2 * period_s);
    CHECK_INT(hget("started_at"), sat);
    CLOCK_SETTLE(1);
    int64_t t1 = tl_now_ms();
    CHECK_INT(cw_heartbeat_stop(hb, 0, NULL), 0);
    CHECK(tl_now_ms() - t1 < 500);
    check_dump(spec_dump(sat + 2 * period_s, sat));
    finish(hb);
    cw_clock_system();
}

/* Started without a synchronous beat, the thread beats at once. */
static void thread_started_alone_beats_at_once(void)
{
    cw_heartbeat *hb = fresh("hbalone");
    int64_t t0 = tl_now_ms();
    CHECK_INT(cw_heartbeat_start(hb, NULL), 0);
    while (hget("heartbeat_at") < 0 && tl_now_ms() - t0 < 3000)
        tl_sleep_ms(10);
    CHECK(tl_now_ms() - t0 < 1000);
    long long hat = hget("heartbeat_at");
    CHECK_INT(hget("started_at"), hat);
    t0 = tl_now_ms();
    CHECK_INT(cw_heartbeat_stop(hb, 0, NULL), 0);
    CHECK(tl_now_ms() - t0 < 500);
    check_dump(spec_dump(hat, hat));
    finish(hb);
}

static void stop_with_remove_leaves_nothing_of_the_pool(void)
{
    cw_heartbeat *hb = fresh("hbremove");
    /* Another pool's traces must survive. */
    freeReplyObject(tl_cmd(rc_, "HSET %s:jobs:foo:lock_info abcd 0", ns_));
    freeReplyObject(tl_cmd(rc_, "HSET %s:jobs:foo:lock_info other 2", ns_));
    freeReplyObject(tl_cmd(rc_, "SADD %s:worker_pools other", ns_));
    CHECK_INT(cw_heartbeat_beat(hb, NULL), 0);
    CHECK_INT(cw_heartbeat_start(hb, NULL), 0);
    CHECK_INT(cw_heartbeat_stop(hb, 1, NULL), 0);
    snprintf(expect_, sizeof expect_,
             "%s:jobs:foo:lock_info hash other=2\n"
             "%s:worker_pools set other\n",
             ns_, ns_);
    check_dump(expect_);
    finish(hb);
}

static void stop_without_remove_leaves_everything(void)
{
    cw_heartbeat *hb = fresh("hbkeep");
    freeReplyObject(tl_cmd(rc_, "HSET %s:jobs:foo:lock_info abcd 0", ns_));
    CHECK_INT(cw_heartbeat_beat(hb, NULL), 0);
    CHECK_INT(cw_heartbeat_start(hb, NULL), 0);
    char *before = tl_ns_dump(rc_, ns_);
    CHECK(strstr(before, ":worker_pools:abcd hash ") != NULL);
    CHECK_INT(cw_heartbeat_stop(hb, 0, NULL), 0);
    check_dump(before);
    free(before);
    finish(hb);
}

/* A kept connection that the server closed while idle costs no beat: the beat is
 * retried at once on a fresh connection, and nothing is logged. */
static void beat_survives_a_closed_idle_connection(void)
{
    tl_server s;
    if (tl_server_start(&s, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    const char *url = s.url;
    cwork_redis *r = cwork_redis_new(url, NULL, NULL);
    CHECK(r != NULL);
    tl_unique_ns("hbkill", ns_, sizeof ns_);
    CHECK_INT(cw_keys_init(&keys_, ns_), 0);
    cw_heartbeat *hb = cw_heartbeat_new(r, &keys_, "abcd", jobs_, 2, workers_, 2, 10);
    CHECK_INT(cw_heartbeat_beat(hb, NULL), 0);

    redisContext *raw = redisConnect("127.0.0.1", s.port);
    CHECK(raw && !raw->err);
    freeReplyObject(tl_cmd(raw, "CLIENT KILL TYPE normal SKIPME yes"));
    freeReplyObject(tl_cmd(raw, "DEL %s:worker_pools:abcd", ns_));
    log_reset();
    cwork_error err = {0};
    CHECK_INT(cw_heartbeat_beat(hb, &err), 0);
    CHECK_INT(logged("heartbeat"), 0);
    redisReply *rep = tl_cmd(raw, "EXISTS %s:worker_pools:abcd", ns_);
    CHECK_INT(rep->integer, 1);
    freeReplyObject(rep);

    cw_heartbeat_free(hb); /* returns the kept connection before the pool goes */
    cwork_redis_free(r);
    redisFree(raw);
    cw_keys_clear(&keys_);
    tl_server_destroy(&s);
}

/* A damaged pool hash or pools set: the error names the key (WRONGTYPE alone does not
 * say what to repair). */
static void a_damaged_key_is_named(void)
{
    cw_heartbeat *hb = fresh("hbdmg");
    char key[128];
    cwork_error err = {0};
    snprintf(key, sizeof key, "%s:worker_pools:abcd", ns_);
    tl_do(rc_, "SET %s oops", key);
    CHECK(cw_heartbeat_beat(hb, &err) < 0);
    if (!strstr(err.message, "WRONGTYPE") || !strstr(err.message, key))
        tl_fail(__FILE__, __LINE__, "message: %s", err.message);
    tl_do(rc_, "DEL %s", key);
    snprintf(key, sizeof key, "%s:worker_pools", ns_);
    tl_do(rc_, "SET %s oops", key);
    memset(&err, 0, sizeof err);
    CHECK(cw_heartbeat_beat(hb, &err) < 0);
    if (!strstr(err.message, "WRONGTYPE") || !strstr(err.message, key))
        tl_fail(__FILE__, __LINE__, "message: %s", err.message);
    tl_do(rc_, "DEL %s", key);
    finish(hb);
}

static void errors_are_returned_and_logged(void)
{
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.connect_timeout_ms = 200;
    o.checkout_timeout_ms = 300;
    cwork_redis *dead = cwork_redis_new("redis://127.0.0.1:1", &o, NULL);
    CHECK(dead != NULL);
    tl_unique_ns("hberr", ns_, sizeof ns_);
    CHECK_INT(cw_keys_init(&keys_, ns_), 0);

    cw_heartbeat *hb = cw_heartbeat_new(dead, &keys_, "abcd", jobs_, 2, workers_, 2, 10);
    cwork_error err = {0};
    CHECK(cw_heartbeat_beat(hb, &err) < 0);
    CHECK(err.message[0] != '\0');
    cw_heartbeat_free(hb);

    /* The thread logs its failures as "heartbeat" and keeps going. */
    log_reset();
    hb = cw_heartbeat_new(dead, &keys_, "abcd", jobs_, 2, workers_, 2, 10);
    CHECK_INT(cw_heartbeat_start(hb, NULL), 0);
    int64_t t0 = tl_now_ms();
    while (logged("heartbeat") == 0 && tl_now_ms() - t0 < 5000)
        tl_sleep_ms(20);
    CHECK(logged("heartbeat") >= 1);
    pthread_mutex_lock(&log_mu);
    CHECK(log_last_error_[0] != '\0');
    pthread_mutex_unlock(&log_mu);

    log_reset();
    memset(&err, 0, sizeof err);
    CHECK(cw_heartbeat_stop(hb, 1, &err) < 0);
    CHECK(err.message[0] != '\0');
    CHECK_INT(logged("remove_heartbeat"), 1);
    cw_heartbeat_free(hb);
    cwork_redis_free(dead);
    cw_keys_clear(&keys_);
}

/* A beat that finds the pool gone from worker_pools (a reaper took it for dead) says
 * so, once for each time it happened. */
static void a_beat_after_being_reaped_says_so(void)
{
    cw_heartbeat *hb = fresh("hbr");
    tl_capture_logs();
    CHECK_INT(cw_heartbeat_beat(hb, NULL), 0);
    CHECK_INT(cw_heartbeat_beat(hb, NULL), 0);
    CHECK_INT(tl_count_logs("heartbeat.reaped"), 0);
    CHECK_INT(cw_heartbeat_reaped(hb), 0);
    tl_do(rc_, "SREM %s:worker_pools abcd", ns_); /* what a reaper does */
    tl_do(rc_, "DEL %s:worker_pools:abcd", ns_);
    CHECK_INT(cw_heartbeat_beat(hb, NULL), 0);
    CHECK_INT(tl_count_logs("heartbeat.reaped"), 1);
    const tl_log *l = tl_find_log("heartbeat.reaped");
    CHECK(l && l->level == CWORK_LOG_WARN && strstr(l->fields, "pool_id=abcd") &&
          strstr(l->fields, "run again"));
    CHECK_INT(cw_heartbeat_reaped(hb), 1);
    CHECK_INT(cw_heartbeat_beat(hb, NULL), 0);
    CHECK_INT(tl_count_logs("heartbeat.reaped"), 1);
    cwork_set_logger(test_logger, NULL, CWORK_LOG_DEBUG);
    finish(hb);
}

/* A failed beat (here: Redis out of memory) is tried again after a second, not after a
 * whole period: two missed beats would make the pool look dead to reapers. On the manual
 * clock. */
static void a_failed_beat_is_retried_soon(void)
{
    tl_server srv;
    if (tl_server_start(&srv, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    redisContext *c = redisConnect("127.0.0.1", srv.port);
    freeReplyObject(redisCommand(c, "CONFIG SET maxmemory-policy noeviction"));
    freeReplyObject(redisCommand(c, "CONFIG SET maxmemory 1"));
    cwork_redis *r = cwork_redis_new(srv.url, NULL, NULL);
    tl_unique_ns("hbretry", ns_, sizeof ns_);
    cw_keys k;
    cw_keys_init(&k, ns_);
    log_reset();
    int64_t t0 = clock_start_manual();
    cw_heartbeat *hb = cw_heartbeat_new(r, &k, "abcd", jobs_, 2, workers_, 2, 10);
    CHECK_INT(cw_heartbeat_start(hb, NULL), 0);
    long long r0 = tl_now_ms();
    while (logged("heartbeat") == 0 && tl_now_ms() - r0 < 5000)
        tl_sleep_ms(5);
    CHECK_INT(logged("heartbeat"), 1); /* the first beat was refused */
    freeReplyObject(redisCommand(c, "CONFIG SET maxmemory 0"));
    CLOCK_ADVANCE(1, CW_HEARTBEAT_RETRY_MS - 1);
    tl_sleep_ms(300);
    redisReply *x = redisCommand(c, "EXISTS %s:worker_pools:abcd", ns_);
    CHECK_INT(x->integer, 0); /* not before the retry is due */
    freeReplyObject(x);
    cw_clock_advance_ms(1);
    long long exists = 0;
    r0 = tl_now_ms();
    while (!exists && tl_now_ms() - r0 < 5000) {
        x = redisCommand(c, "EXISTS %s:worker_pools:abcd", ns_);
        exists = x->integer;
        freeReplyObject(x);
        if (!exists) tl_sleep_ms(5);
    }
    CHECK(exists);
    CHECK_INT(logged("heartbeat"), 1);
    x = redisCommand(c, "HGET %s:worker_pools:abcd heartbeat_at", ns_);
    CHECK(x->type == REDIS_REPLY_STRING && atoll(x->str) == t0 / 1000 + 1);
    freeReplyObject(x);
    /* Then a whole period, as usual. */
    CLOCK_ADVANCE(1, CW_HEARTBEAT_PERIOD_MS - 1);
    tl_sleep_ms(300);
    x = redisCommand(c, "HGET %s:worker_pools:abcd heartbeat_at", ns_);
    CHECK(x->type == REDIS_REPLY_STRING && atoll(x->str) == t0 / 1000 + 1);
    freeReplyObject(x);
    cw_heartbeat_free(hb);
    cw_clock_system();
    cw_keys_clear(&k);
    cwork_redis_free(r);
    redisFree(c);
    tl_server_destroy(&srv);
}

int main(void)
{
    rc_ = tl_redis_connect();
    cwork_error err = {0};
    redis_ = cwork_redis_new(tl_redis_url(), NULL, &err);
    if (!redis_) {
        fprintf(stderr, "cwork_redis_new: %s\n", err.message);
        return 1;
    }
    cwork_set_logger(test_logger, NULL, CWORK_LOG_DEBUG);
    RUN(beat_writes_the_spec_hash);
    RUN(empty_lists_write_empty_strings);
    RUN(started_at_stays_while_heartbeat_at_advances);
    RUN(thread_started_alone_beats_at_once);
    RUN(stop_with_remove_leaves_nothing_of_the_pool);
    RUN(stop_without_remove_leaves_everything);
    RUN(beat_survives_a_closed_idle_connection);
    RUN(a_damaged_key_is_named);
    RUN(errors_are_returned_and_logged);
    RUN(a_beat_after_being_reaped_says_so);
    RUN(a_failed_beat_is_retried_soon);
    RUN(thread_beats_every_period);
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
