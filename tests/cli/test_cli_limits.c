/* cwork limits and cwork limit (PROTOCOL §20): text and --json, what they write (the whole
 * namespace after each), bad input with exit status 2 and nothing written, an
 * unreachable Redis with 1, and cwork work --rate-limit's checks. */
#include "cli_testutil.h"

static redisContext *rc_;
static char ns_[64];

#define IN_NS(...) cli_run_in_ns(ns_, NULL, (const char *const[]){__VA_ARGS__, NULL})

static void check_ns(int line, const char *want)
{
    char *got = tl_ns_dump(rc_, ns_);
    char buf[1024];
    snprintf(buf, sizeof buf, want, ns_, ns_);
    if (strcmp(got, buf) != 0)
        tl_fail(__FILE__, line, "namespace\n--- got:\n%s--- want:\n%s---", got, buf);
    free(got);
}

static void set_show_change_and_remove(void)
{
    tl_unique_ns("cl", ns_, sizeof ns_);
    CHECK_INT(IN_NS("limits"), 0);
    CHECK_STR(cli_out_, "No rate limits.\n");
    CHECK_INT(IN_NS("limits", "--json"), 0);
    CHECK_STR(cli_out_, "{\"rate_limits\":[]}\n");

    CHECK_INT(IN_NS("limit", "mail", "100/s"), 0);
    CHECK_STR(cli_out_, "Rate limit of mail: 100/1s (cwork pools follow within about a second).\n");
    CHECK_INT(IN_NS("limit", "--json", "resize", "60/3600s"), 0);
    CHECK_STR(cli_out_, "{\"name\":\"resize\",\"limit\":\"60/1h\"}\n"); /* canonical */
    check_ns(__LINE__, "%s:cwork:rate_limits hash mail=100/1s | resize=60/1h\n");

    /* The state of a type that just started a job: held back, and for how long. */
    redisReply *t = tl_cmd(rc_, "TIME");
    long long now = atoll(t->element[0]->str) * 1000000 + atoll(t->element[1]->str);
    freeReplyObject(t);
    tl_do(rc_, "SET %s:cwork:rate_limit:resize %lld PX 60000", ns_, now + 60000000);
    CHECK_INT(IN_NS("limits"), 0);
    CHECK(strstr(cli_out_, "NAME    LIMIT   HELD BACK  NEXT START IN\n"
                           "mail    100/1s  no         -\n"
                           "resize  60/1h   yes        ") == cli_out_);
    CHECK_INT(IN_NS("limits", "--json"), 0);
    CHECK(strstr(cli_out_,
                 "{\"rate_limits\":[{\"name\":\"mail\",\"limit\":\"100/1s\",\"count\":"
                 "100,\"window_ms\":1000,\"valid\":true,\"limited_now\":false,"
                 "\"next_in_us\":0},{\"name\":\"resize\",\"limit\":\"60/1h\",\"count\":60,"
                 "\"window_ms\":3600000,\"valid\":true,\"limited_now\":true,"
                 "\"next_in_us\":") == cli_out_);
    const char *second = strstr(strstr(cli_out_, "resize"), "\"next_in_us\":");
    long long next = second ? atoll(second + 13) : -1;
    CHECK(next > 0 && next <= 60000000);
    tl_do(rc_, "DEL %s:cwork:rate_limit:resize", ns_);

    /* A damaged setting is shown as such. */
    tl_do(rc_, "HSET %s:cwork:rate_limits bad 5/1x", ns_);
    CHECK_INT(IN_NS("limits", "--json"), 0);
    CHECK(strstr(cli_out_, "{\"name\":\"bad\",\"limit\":\"5/1x\",\"count\":0,\"window_ms\":0,"
                           "\"valid\":false") != NULL);
    /* Written by hand: valid as the cycle script reads it, or not. */
    tl_do(rc_, "HSET %s:cwork:rate_limits bad 10/s odd 100/1000ms", ns_);
    CHECK_INT(IN_NS("limits", "--json"), 0);
    CHECK(strstr(cli_out_, "{\"name\":\"bad\",\"limit\":\"10/s\",\"count\":0,") != NULL);
    CHECK(strstr(cli_out_, "{\"name\":\"odd\",\"limit\":\"100/1000ms\",\"count\":100,"
                           "\"window_ms\":1000,\"valid\":true") != NULL);
    tl_do(rc_, "HDEL %s:cwork:rate_limits bad odd", ns_);

    CHECK_INT(IN_NS("limit", "mail", "off", "--json"), 0);
    CHECK_STR(cli_out_, "{\"name\":\"mail\",\"limit\":null}\n");
    CHECK_INT(IN_NS("limit", "resize", "off"), 0);
    CHECK_STR(cli_out_, "Rate limit of resize: off.\n");
    check_ns(__LINE__, ""); /* nothing left */
    tl_ns_delete(rc_, ns_);
}

static void bad_input_exits_2_and_writes_nothing(void)
{
    tl_unique_ns("cl", ns_, sizeof ns_);
    static const struct {
        const char *name, *limit, *says;
    } cases[] = {
        {"x", "0/1s", "N must be 1 to 1000000000"},
        {"x", "abc", "want N/DURATION"},
        {"x", "10/1d", "unit must be ms, s, m or h"},
        {"x", "10/8d", "unit must be ms, s, m or h"},
        {"x", "10/169h", "the duration must be 1ms to 7 days"},
        {"x", "10/0s", "the duration must be 1ms to 7 days"},
        {"x", "1000000001/1s", "N must be 1 to 1000000000"},
        {"x", "-1/1s", "want N/DURATION"},
        {"x", "10/1.5s", "unit must be ms, s, m or h"},
        {"a,b", "10/1s", "a,b"},
        {"", "10/1s", "empty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = IN_NS("limit", cases[i].name, cases[i].limit);
        if (rc != 2 || !strstr(cli_err_, cases[i].says))
            tl_fail(__FILE__, __LINE__, "limit '%s' '%s': exit %d, stderr %s", cases[i].name,
                    cases[i].limit, rc, cli_err_);
    }
    CHECK_INT(IN_NS("limit", "x"), 2);
    CHECK(strstr(cli_err_, "give NAME and N/DURATION (or off)") != NULL);
    CHECK_INT(IN_NS("limit", "x", "1/s", "extra"), 2);
    CHECK_INT(IN_NS("limits", "extra"), 2);
    CHECK_INT(IN_NS("limits", "--bogus"), 2);
    CHECK_INT(IN_NS("limits", "--json=yes"), 2);
    check_ns(__LINE__, "");
    CHECK_INT(CLI_RUN("limits", "--redis", "redis://127.0.0.1:1"), 1);
    CHECK_INT(CLI_RUN("limit", "x", "1/s", "--redis", "redis://127.0.0.1:1"), 1);
    CHECK_INT(CLI_RUN("limits", "--help"), 0);
    CHECK(strstr(cli_out_, "Usage: cwork limits") == cli_out_);
    CHECK_INT(CLI_RUN("limit", "--help"), 0);
    CHECK(strstr(cli_out_, "Usage: cwork limit ") == cli_out_);
    CHECK_INT(CLI_RUN("--help"), 0);
    CHECK(strstr(cli_out_, "  limits    ") != NULL && strstr(cli_out_, "  limit     ") != NULL);
}

static void work_checks_its_rate_limits(void)
{
    tl_unique_ns("cl", ns_, sizeof ns_);
    CHECK_INT(IN_NS("work", "--job", "a=true", "--rate-limit", "b=1/s"), 2);
    CHECK(strstr(cli_err_, "--rate-limit b=1/s: no --job b given") != NULL);
    CHECK_INT(IN_NS("work", "--job", "a=true", "--rate-limit", "a=0/s"), 2);
    CHECK(strstr(cli_err_, "--rate-limit a=0/s: rate limit 0/s: N must be 1") != NULL);
    CHECK_INT(IN_NS("work", "--job", "a=true", "--rate-limit", "a"), 2);
    CHECK(strstr(cli_err_, "--rate-limit needs NAME=N/DURATION") != NULL);
    CHECK_INT(CLI_RUN("work", "--help"), 0);
    CHECK(strstr(cli_out_, "--rate-limit NAME=N/DURATION") != NULL);
    check_ns(__LINE__, "");
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(set_show_change_and_remove);
    RUN(bad_input_exits_2_and_writes_nothing);
    RUN(work_checks_its_rate_limits);
    redisFree(rc_);
    return tl_finish();
}
