/* Table tests of `cwork work`'s pure decisions and text (cli/work_text.c, compiled in
 * here): failure outcomes as the pool's commit decides them, the printed backoff,
 * CWORK_ARG_ names, the stderr tail kept as a job's error, durations, and
 * --metrics-listen addresses. */
#include "../cli/work_text.c"

#include "testlib.h"

static void outcomes_follow_the_commit(void)
{
    static const struct {
        unsigned max_fails;
        int skip_dead, after_retries;
        long long fails_before;
        int no_retry;
        work_outcome want;
    } cases[] = {
        {4, 0, 0, 0, 0, WORK_RETRY},  {4, 0, 0, 2, 0, WORK_RETRY}, {4, 0, 0, 3, 0, WORK_DEAD},
        {4, 0, 0, 9, 0, WORK_DEAD},   {1, 0, 0, 0, 0, WORK_DEAD},  {4, 0, 0, 0, 1, WORK_DEAD},
        {4, 1, 0, 0, 0, WORK_DROP},   {4, 1, 0, 0, 1, WORK_DROP},  {4, 1, 1, 0, 0, WORK_RETRY},
        {4, 1, 1, 3, 0, WORK_DROP},   {4, 1, 1, 0, 1, WORK_DROP},  {0, 0, 0, 0, 0, WORK_DEAD},
        {4, 0, 0, -5, 0, WORK_RETRY},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cwork_job_options o;
        cwork_job_options_init(&o);
        o.max_fails = cases[i].max_fails;
        o.skip_dead = cases[i].skip_dead;
        o.skip_dead_after_retries = cases[i].after_retries;
        work_outcome got = work_outcome_of(&o, cases[i].fails_before, cases[i].no_retry);
        if (got != cases[i].want)
            tl_fail(__FILE__, __LINE__, "case %zu: %d, want %d", i, got, cases[i].want);
    }
}

static void backoff_is_gos_formula_with_jitter_from_the_id(void)
{
    int seen[30] = {0};
    char id[32];
    for (int k = 0; k < 3000; k++) {
        snprintf(id, sizeof id, "%024x", k * 2654435761u);
        for (long long f = 1; f <= 4; f++) {
            long long d = work_backoff_s(id, f);
            long long base = f * f * f * f + 15, r = (d - base) / (f + 1);
            if (d < base || (d - base) % (f + 1) != 0 || r > 29)
                tl_fail(__FILE__, __LINE__, "id %s fails %lld: %lld", id, f, d);
            else if (f == 1)
                seen[r]++;
            CHECK_INT(work_backoff_s(id, f), d); /* the same every time */
        }
    }
    for (int r = 0; r < 30; r++) /* spread: about 100 each */
        if (seen[r] < 40) tl_fail(__FILE__, __LINE__, "R=%d only %d times of 3000", r, seen[r]);
    CHECK_INT(work_backoff_s("x", 1001), CWORK_MAX_DELAY_SECONDS);
    CHECK_INT(work_backoff_s("x", 0) >= 15 && work_backoff_s("x", 0) <= 44, 1);
    CHECK_INT(work_backoff_s(NULL, -3), work_backoff_s("", 0));
}

static void arg_env_names(void)
{
    static const struct {
        const char *key, *want;
    } cases[] = {
        {"user", "CWORK_ARG_USER"},
        {"user-id", "CWORK_ARG_USER_ID"},
        {"User_ID2", "CWORK_ARG_USER_ID2"},
        {"a.b c", "CWORK_ARG_A_B_C"},
        {"", "CWORK_ARG_"},
        {"9lives", "CWORK_ARG_9LIVES"},
        {"caf\xc3\xa9", "CWORK_ARG_CAF_"}, /* one character, one _ */
        {"\xe2\x82\xac"
         "x",
         "CWORK_ARG__X"},                    /* a 3-byte character */
        {"\xf0\x9f\x98\x80", "CWORK_ARG__"}, /* a 4-byte character */
        {"a\x80"
         "b",
         "CWORK_ARG_A_B"},        /* a stray continuation byte */
        {"=x=", "CWORK_ARG__X_"}, /* '=' cannot end the name early */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        size_t n = work_arg_env_name(cases[i].key, out);
        CHECK_STR(out, cases[i].want);
        CHECK_INT(n, strlen(cases[i].want));
    }
}

static void check_tail(int line, const char *in, size_t in_len, int lost, size_t max_bytes,
                       size_t max_lines, const char *want)
{
    char out[64];
    size_t n = work_stderr_tail(in, in_len, lost, out, max_bytes, max_lines);
    if (strcmp(out, want) != 0 || n != strlen(want))
        tl_fail(__FILE__, line, "tail of \"%s\": \"%s\" (%zu), want \"%s\"", in, out, n, want);
    if (n > max_bytes) tl_fail(__FILE__, line, "%zu bytes > %zu", n, max_bytes);
}
#define TAIL(in, lost, bytes, lines, want)                                                         \
    check_tail(__LINE__, in, strlen(in), lost, bytes, lines, want)

static void stderr_tails_are_bounded(void)
{
    TAIL("", 0, 40, 10, "");
    TAIL(" \n\t\r\n\n", 0, 40, 10, "");
    TAIL("oops\n", 0, 40, 10, "oops");
    TAIL("a\nb\nc\n", 0, 40, 10, "a\nb\nc");
    TAIL("a\r\nb  \r\n\n  \nc\n\n", 0, 40, 10, "a\nb\nc"); /* CR, trailing and blank lines */
    TAIL("  indented\n", 0, 40, 10, "  indented");         /* leading space kept */
    TAIL("1\n2\n3\n4\n5\n", 0, 40, 3, "3\n4\n5");          /* line count */
    TAIL("aaaa\nbbbb\ncccc\n", 0, 9, 10, "bbbb\ncccc");    /* bytes: whole lines */
    TAIL("aaaa\nbbbb\ncccc\n", 0, 8, 10, "cccc");
    TAIL("0123456789\n", 0, 4, 10, "0123"); /* one long line: its start */
    TAIL("ab\xc3\xa9"
         "cd\n",
         0, 3, 10, "ab"); /* never half a character */
    TAIL("ab\xc3\xa9"
         "cd\n",
         0, 4, 10, "ab\xc3\xa9");
    TAIL("rtial\nwhole\n", 1, 40, 10, "whole");    /* the cut first line goes */
    TAIL("\xa9tial only", 1, 40, 10, "tial only"); /* unless it is all there is */
    TAIL("rtial\n", 1, 40, 10, "rtial");
    TAIL("no newline at end", 0, 40, 10, "no newline at end");
    /* 64 lines kept at most whatever max_lines says */
    static char many[400];
    size_t n = 0;
    for (int i = 0; i < 100; i++)
        n += (size_t)snprintf(many + n, sizeof many - n, "%c\n", 'a' + i % 26);
    char out[400];
    CHECK_INT(work_stderr_tail(many, n, 0, out, 300, 1000), 64 * 2 - 1);
}

static void last_lines_and_durations(void)
{
    size_t len;
    const char *l = work_last_line("a\nbb\nccc", &len);
    CHECK_STR(l, "ccc");
    CHECK_INT(len, 3);
    l = work_last_line("single", &len);
    CHECK_STR(l, "single");
    static const struct {
        long long ms;
        const char *want;
    } d[] = {{0, "0.00 s"},       {-5, "0.00 s"},     {104, "0.10 s"},   {9994, "9.99 s"},
             {10000, "10.0 s"},   {59949, "59.9 s"},  {60000, "1m00s"},  {245000, "4m05s"},
             {3599999, "59m59s"}, {3600000, "1h00m"}, {7380000, "2h03m"}};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        char out[32];
        work_duration_text(d[i].ms, out, sizeof out);
        CHECK_STR(out, d[i].want);
    }
}

static void listen_addresses(void)
{
    static const struct {
        const char *in, *host, *port; /* host NULL: refused */
    } cases[] = {
        {"9090", "127.0.0.1", "9090"},
        {":9090", "127.0.0.1", "9090"},
        {"0", "127.0.0.1", "0"},
        {"0.0.0.0:9090", "0.0.0.0", "9090"},
        {"localhost:80", "localhost", "80"},
        {"[::1]:9090", "::1", "9090"},
        {"[::]:65535", "::", "65535"},
        {"", NULL, NULL},
        {"65536", NULL, NULL},
        {"host:", NULL, NULL},
        {"host:http", NULL, NULL},
        {"::1:9090", NULL, NULL},
        {"[::1]9090", NULL, NULL},
        {"[]:9090", NULL, NULL},
        {"1:-1", NULL, NULL},
        {"123456", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char host[64] = "", port[8] = "";
        int rc = work_listen_split(cases[i].in, host, sizeof host, port, sizeof port);
        if (!cases[i].host) {
            if (rc == 0) tl_fail(__FILE__, __LINE__, "\"%s\" accepted", cases[i].in);
            continue;
        }
        if (rc != 0) {
            tl_fail(__FILE__, __LINE__, "\"%s\" refused", cases[i].in);
            continue;
        }
        CHECK_STR(host, cases[i].host);
        CHECK_STR(port, cases[i].port);
    }
    char small[4], port[8];
    CHECK_INT(work_listen_split("localhost:1", small, sizeof small, port, sizeof port), -1);
}

int main(void)
{
    RUN(outcomes_follow_the_commit);
    RUN(backoff_is_gos_formula_with_jitter_from_the_id);
    RUN(arg_env_names);
    RUN(stderr_tails_are_bounded);
    RUN(last_lines_and_durations);
    RUN(listen_addresses);
    return tl_finish();
}
