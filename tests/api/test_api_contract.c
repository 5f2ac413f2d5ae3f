/* What cwork.h promises beyond any one module: every error code has a name and a
 * description, cwork_job_fail's value cannot be mistaken for CWORK_EINVAL, durations
 * are milliseconds checked against one range, and enqueuers, clients, pools and web
 * servers take the namespace the same way. */
#include "cwork.h"
#include "cwork_web.h"
#include "testlib.h"

#include <stddef.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- error codes */

static const struct {
    int code;
    const char *name;
} codes_[] = {
    {CWORK_OK, "CWORK_OK"},
    {CWORK_DUPLICATE, "CWORK_DUPLICATE"},
    {CWORK_EINVAL, "CWORK_EINVAL"},
    {CWORK_ENOMEM, "CWORK_ENOMEM"},
    {CWORK_EREDIS, "CWORK_EREDIS"},
    {CWORK_EPROTO, "CWORK_EPROTO"},
    {CWORK_EJSON, "CWORK_EJSON"},
    {CWORK_ETOOBIG, "CWORK_ETOOBIG"},
    {CWORK_ETIMEOUT, "CWORK_ETIMEOUT"},
    {CWORK_ENOTFOUND, "CWORK_ENOTFOUND"},
    {CWORK_ETYPE, "CWORK_ETYPE"},
    {CWORK_EUNSUPPORTED, "CWORK_EUNSUPPORTED"},
    {CWORK_EJOBFAILED, "CWORK_EJOBFAILED"},
};
#define NCODES (sizeof codes_ / sizeof codes_[0])

static void every_code_has_its_name_and_a_description_of_its_own(void)
{
    for (size_t i = 0; i < NCODES; i++) {
        CHECK_STR(cwork_err_name(codes_[i].code), codes_[i].name);
        const char *text = cwork_strerror(codes_[i].code);
        CHECK(text && *text && strcmp(text, "unknown error") != 0);
        if (!text) continue;
        for (size_t j = 0; j < i; j++) {
            CHECK(codes_[i].code != codes_[j].code);
            CHECK(strcmp(text, cwork_strerror(codes_[j].code)) != 0);
        }
    }
    /* The codes are dense from CWORK_DUPLICATE down to the last: no gap hides one the
     * table above forgot. */
    for (int code = CWORK_DUPLICATE; code >= CWORK_EJOBFAILED; code--)
        CHECK(strcmp(cwork_err_name(code), "unknown") != 0);
    static const int not_codes[] = {2, 7, -12, -100, 1000};
    for (size_t i = 0; i < sizeof not_codes / sizeof not_codes[0]; i++) {
        CHECK_STR(cwork_err_name(not_codes[i]), "unknown");
        CHECK_STR(cwork_strerror(not_codes[i]), "unknown error");
    }
}

/* Inside a handler it returns CWORK_EJOBFAILED (test_threads_contract runs one); for a
 * job no pool runs it records nothing and says so with CWORK_EINVAL. */
static void job_fail_outside_a_pool_is_einval_not_a_failure(void)
{
    CHECK(CWORK_EJOBFAILED != CWORK_EINVAL && CWORK_EJOBFAILED < 0);
    CHECK_INT(cwork_job_fail(NULL, "x"), CWORK_EINVAL);
    static const char json[] = "{\"name\":\"a\",\"id\":\"1\",\"t\":1,\"args\":{}}";
    cwork_job *job = NULL;
    CHECK_INT(cwork_job_decode(json, sizeof json - 1, &job, NULL), 0);
    CHECK_INT(cwork_job_fail(job, "not running: %d", 1), CWORK_EINVAL);
    CHECK_STR(cwork_job_last_error(job), "");
    CHECK(cwork_job_userdata(job) == NULL);
    CHECK_INT(cwork_job_timeout_at_ms(job), 0);
    cwork_job_free(job);
}

/* ---------------------------------------------------------------- durations */

static void duration_defaults_are_milliseconds(void)
{
    cwork_pool_options po;
    cwork_pool_options_init(&po);
    CHECK_INT(po.idle_backoff_max_ms, 100);
    CHECK_INT(po.reap_period_ms, 300000);
    CHECK_INT(po.dead_check_ms, 5000);
    CHECK_INT(po.watchdog_timeout_ms, 60000);
    cwork_redis_options ro;
    cwork_redis_options_init(&ro);
    CHECK_INT(ro.connect_timeout_ms, 5000);
    CHECK_INT(ro.command_timeout_ms, 5000);
    CHECK_INT(ro.checkout_timeout_ms, 5000);
    CHECK(ro.password == NULL);
}

#define HUNDRED_YEARS_MS (CWORK_MAX_DELAY_SECONDS * 1000)

static void out_of_range_durations_are_refused_by_name(void)
{
    cwork_redis *redis = cwork_redis_new("redis://127.0.0.1:1", NULL, NULL);
    CHECK(redis != NULL);
    static const struct {
        size_t offset;
        const char *name;
    } fields[] = {
        {offsetof(cwork_pool_options, idle_backoff_max_ms), "idle_backoff_max_ms"},
        {offsetof(cwork_pool_options, reap_period_ms), "reap_period_ms"},
        {offsetof(cwork_pool_options, dead_check_ms), "dead_check_ms"},
        {offsetof(cwork_pool_options, watchdog_timeout_ms), "watchdog_timeout_ms"},
    };
    static const int64_t values[] = {-1, HUNDRED_YEARS_MS + 1, INT64_MIN, INT64_MAX, 0,
                                     1,  HUNDRED_YEARS_MS};
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            cwork_pool_options po;
            cwork_pool_options_init(&po);
            *(int64_t *)((char *)&po + fields[f].offset) = values[v];
            cwork_error err = {0};
            cwork_pool *p = cwork_pool_new(redis, "contract", &po, &err);
            int valid = values[v] >= 0 && values[v] <= HUNDRED_YEARS_MS;
            if (valid != (p != NULL))
                tl_fail(__FILE__, __LINE__, "%s = %lld: %s", fields[f].name, (long long)values[v],
                        p ? "accepted" : err.message);
            if (!valid) {
                CHECK_INT(err.code, CWORK_EINVAL);
                CHECK(strstr(err.message, fields[f].name) != NULL);
            }
            cwork_pool_free(p);
        }
    }
    cwork_redis_free(redis);

    static const struct {
        size_t offset;
        const char *name;
    } redis_fields[] = {
        {offsetof(cwork_redis_options, connect_timeout_ms), "connect_timeout_ms"},
        {offsetof(cwork_redis_options, command_timeout_ms), "command_timeout_ms"},
        {offsetof(cwork_redis_options, checkout_timeout_ms), "checkout_timeout_ms"},
    };
    for (size_t f = 0; f < sizeof redis_fields / sizeof redis_fields[0]; f++) {
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            cwork_redis_options ro;
            cwork_redis_options_init(&ro);
            *(int64_t *)((char *)&ro + redis_fields[f].offset) = values[v];
            cwork_error err = {0};
            cwork_redis *r = cwork_redis_new("redis://127.0.0.1:1", &ro, &err);
            /* 0 is valid for each: connect_timeout_ms's default, the others' "none" */
            int valid = values[v] >= 0 && values[v] <= HUNDRED_YEARS_MS;
            if (valid != (r != NULL))
                tl_fail(__FILE__, __LINE__, "%s = %lld: %s", redis_fields[f].name,
                        (long long)values[v], r ? "accepted" : err.message);
            if (!valid) {
                CHECK_INT(err.code, CWORK_EINVAL);
                CHECK(strstr(err.message, redis_fields[f].name) != NULL);
            }
            cwork_redis_free(r);
        }
    }
}

/* ---------------------------------------------------------------- zeroed options */

static int noop_handler(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    return 0;
}

/* docs/ABI.md: an options struct left all zero is accepted, each field at its default
 * (or off), so that a field appended later changes nothing for a caller who zeroes. */
static void zeroed_options_are_accepted(void)
{
    cwork_error err = {0};
    cwork_redis_options ro = {0};
    cwork_redis *redis = cwork_redis_new(tl_redis_url(), &ro, &err);
    CHECK(redis != NULL);
    if (!redis) return;
    CHECK_INT(cwork_redis_ping(redis, &err), 0);
    cwork_pool_options po = {0};
    cwork_pool *pool = cwork_pool_new(redis, "contract_zero", &po, &err);
    CHECK(pool != NULL);
    cwork_job_options jo = {0};
    CHECK_INT(cwork_pool_register(pool, "zeroed", noop_handler, &jo, &err), 0);
    cwork_pool_free(pool);
    cwork_redis_free(redis);
}

/* ---------------------------------------------------------------- the namespace */

static void every_object_takes_the_namespace_the_same_way(void)
{
    cwork_redis *redis = cwork_redis_new("redis://127.0.0.1:1", NULL, NULL);
    CHECK(redis != NULL);
    cwork_error err = {0};
    CHECK(cwork_enqueuer_new(redis, NULL, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    memset(&err, 0, sizeof err);
    CHECK(cwork_client_new(redis, NULL, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    memset(&err, 0, sizeof err);
    CHECK(cwork_pool_new(redis, NULL, NULL, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    memset(&err, 0, sizeof err);
    CHECK(cwork_web_start(redis, NULL, NULL, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    /* The same string, second argument, for all four (the web server is only created
     * here: nothing listens on that Redis). */
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, "shared", &err);
    cwork_client *client = cwork_client_new(redis, "shared", &err);
    cwork_pool *pool = cwork_pool_new(redis, "shared", NULL, &err);
    CHECK(enq && client && pool);
    cwork_web_options wo;
    cwork_web_options_init(&wo);
    wo.listen = "127.0.0.1:0";
    cwork_web *web = cwork_web_start(redis, "shared", &wo, &err);
    CHECK(web != NULL);
    cwork_web_free(web);
    cwork_pool_free(pool);
    cwork_client_free(client);
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
}

int main(void)
{
    RUN(every_code_has_its_name_and_a_description_of_its_own);
    RUN(job_fail_outside_a_pool_is_einval_not_a_failure);
    RUN(duration_defaults_are_milliseconds);
    RUN(out_of_range_durations_are_refused_by_name);
    RUN(zeroed_options_are_accepted);
    RUN(every_object_takes_the_namespace_the_same_way);
    return tl_finish();
}
