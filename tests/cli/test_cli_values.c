/* Values the command lines of cwork limit(s), result, succeeded, doctor and demo refuse,
 * and what --json prints for nothing: a negative duration (a bare number or a duration,
 * as the next argument or after '=') exits 2 with a message naming the option, and the
 * namespace stays as it was (empty, or with the rate limit written before); an empty
 * list in --json is [] (never null, never nothing). */
#include "cli_testutil.h"

static redisContext *rc_;
static char ns_[64];

#define IN_NS(...) cli_run_in_ns(ns_, NULL, (const char *const[]){__VA_ARGS__, NULL})

/* The namespace dumped is want (with each %s the namespace). */
static void check_ns(int line, const char *want)
{
    char *got = tl_ns_dump(rc_, ns_);
    char buf[1024];
    snprintf(buf, sizeof buf, want, ns_, ns_, ns_);
    if (strcmp(got, buf) != 0)
        tl_fail(__FILE__, line, "namespace\n--- got:\n%s--- want:\n%s---", got, buf);
    free(got);
}

static void negative_durations_are_refused(void)
{
    tl_unique_ns("cv", ns_, sizeof ns_);
    /* one limit written first: a refused command must leave it as it is */
    CHECK_INT(IN_NS("limit", "a", "10/1s"), 0);
    static const char *const values[] = {"-5", "-5s", "-1h30m", "-0.5"};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char inline_value[32], want[160];
        snprintf(inline_value, sizeof inline_value, "--wait=%s", values[i]);
        snprintf(want, sizeof want,
                 "cwork result: --wait needs a duration (30, 30s, 5m); \"%s\" is negative\n",
                 values[i]);
        CHECK_INT(IN_NS("result", "--wait", values[i], "0123456789abcdef01234567"), 2);
        CHECK_STR(cli_err_, want);
        CHECK_STR(cli_out_, "");
        CHECK_INT(IN_NS("result", inline_value, "0123456789abcdef01234567"), 2);
        CHECK_STR(cli_err_, want);

        /* the demo refuses before it starts anything (no private server, no pool) */
        snprintf(want, sizeof want,
                 "cwork demo: --duration needs whole seconds or a duration like 90s or 15m; "
                 "\"%s\" is negative\n",
                 values[i]);
        CHECK_INT(IN_NS("demo", "--no-web", "--duration", values[i]), 2);
        CHECK_STR(cli_err_, want);
        snprintf(inline_value, sizeof inline_value, "--duration=%s", values[i]);
        CHECK_INT(IN_NS("demo", "--no-web", inline_value), 2);
        CHECK_STR(cli_err_, want);

        /* a rate limit's window: N/DURATION with a signed duration */
        char limit[32];
        snprintf(limit, sizeof limit, "10/%s", values[i]);
        snprintf(want, sizeof want, "cwork limit: rate limit %s: the duration cannot be negative\n",
                 limit);
        CHECK_INT(IN_NS("limit", "a", limit), 2);
        CHECK_STR(cli_err_, want);
    }
    /* a value that is no duration still says so */
    CHECK_INT(IN_NS("result", "--wait", "soon", "0123456789abcdef01234567"), 2);
    CHECK_STR(cli_err_, "cwork result: --wait needs a duration (30, 30s, 5m), got \"soon\"\n");
    check_ns(__LINE__, "%s:cwork:rate_limits hash a=10/1s\n");
    tl_ns_delete(rc_, ns_);
}

static void empty_lists_are_empty_arrays(void)
{
    tl_unique_ns("cv", ns_, sizeof ns_);
    CHECK_INT(IN_NS("succeeded", "--json"), 0);
    CHECK_STR(cli_out_, "{\"jobs\": []}\n");
    CHECK_INT(IN_NS("succeeded", "--json", "--name", "nothing"), 0);
    CHECK_STR(cli_out_, "{\"jobs\": []}\n");
    CHECK_INT(IN_NS("limits", "--json"), 0);
    CHECK_STR(cli_out_, "{\"rate_limits\":[]}\n");
    CHECK_INT(IN_NS("doctor", "--json"), 0);
    CHECK_STR(cli_out_, "{\"clean\":true,\"findings\":[]}\n");
    check_ns(__LINE__, "");
}

/* The converted commands keep their spellings: -h, the help texts' first lines, the
 * positional arguments' messages. */
static void help_and_arguments(void)
{
    static const char *const cmds[] = {"limits", "limit", "result", "succeeded", "doctor", "demo"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char usage[64];
        snprintf(usage, sizeof usage, "Usage: cwork %s ", cmds[i]);
        CHECK_INT(CLI_RUN(cmds[i], "--help"), 0);
        CHECK(strstr(cli_out_, usage) == cli_out_);
        CHECK(strstr(cli_out_, "\nOptions:\n") != NULL);
        CHECK_INT(CLI_RUN(cmds[i], "-h"), 0);
        CHECK(strstr(cli_out_, usage) == cli_out_);
    }
    tl_unique_ns("cv", ns_, sizeof ns_);
    CHECK_INT(IN_NS("result", "a", "b"), 2);
    CHECK_STR(cli_err_, "cwork result: unexpected argument \"b\" (see cwork result --help)\n");
    CHECK_INT(IN_NS("succeeded", "x"), 2);
    CHECK_STR(cli_err_,
              "cwork succeeded: unexpected argument \"x\" (see cwork succeeded --help)\n");
    CHECK_INT(IN_NS("succeeded", "--limit", "-3"), 2);
    CHECK_STR(cli_err_, "cwork succeeded: --limit needs a whole number from 1 to 10000; \"-3\" is "
                        "negative\n");
    CHECK_INT(IN_NS("succeeded", "--wait", "5s"), 2);
    CHECK(strstr(cli_err_, "cwork succeeded: unknown option --wait") == cli_err_);
    CHECK_INT(IN_NS("demo", "extra"), 2);
    CHECK_STR(cli_err_, "cwork demo: unexpected argument extra (see cwork demo --help)\n");
    CHECK_INT(IN_NS("demo", "--go-flavor", "fork"), 2);
    CHECK_STR(cli_err_, "cwork demo: --go-flavor does not apply to the demo\n");
    CHECK_INT(IN_NS("demo", "--rate", "-1"), 2);
    CHECK_STR(cli_err_, "cwork demo: --rate needs a positive number\n");
    CHECK_INT(IN_NS("demo", "--concurency", "2"), 2);
    CHECK(strstr(cli_err_, "did you mean --concurrency?") != NULL);
    check_ns(__LINE__, "");
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(negative_durations_are_refused);
    RUN(empty_lists_are_empty_arrays);
    RUN(help_and_arguments);
    redisFree(rc_);
    return tl_finish();
}
