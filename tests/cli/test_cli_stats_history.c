/* cwork stats --history: the per-minute counts of the last 24 hours (PROTOCOL §14.2) as
 * text (totals, one row per UTC hour) and as JSON (every minute too). Every minute from
 * 26 hours ago to an hour ahead holds the same counts, so that what the command shows
 * does not depend on the minute it runs in; an empty namespace shows zeros; a bad
 * option exits 2; the command writes nothing. */
#include "cli_testutil.h"

#include <time.h>

static redisContext *rc_;
static char ns_[64];

#define CLI(...) cli_run_in_ns(ns_, NULL, (const char *const[]){__VA_ARGS__, NULL})

/* processed 2 and failed 1 in every minute of the hours around now. */
static void seed_every_minute(void)
{
    time_t now = time(NULL);
    for (time_t h = now / 3600 * 3600 - 26 * 3600; h <= now + 3600; h += 3600) {
        struct tm tm;
        gmtime_r(&h, &tm);
        char hour[24];
        strftime(hour, sizeof hour, "%Y-%m-%dT%H", &tm);
        for (int m = 0; m < 60; m++)
            tl_do(rc_, "HSET %s:cwork:stat:%s %02d:processed 2 %02d:failed 1", ns_, hour, m, m);
    }
}

/* The sum of the "processed" of every {"hour":…} row of the JSON, and how many rows. */
static long long hour_rows(const char *json, int *rows)
{
    long long sum = 0;
    *rows = 0;
    for (const char *p = strstr(json, "{\"hour\":"); p; p = strstr(p + 1, "{\"hour\":")) {
        const char *v = strstr(p, "\"processed\":");
        if (v) sum += atoll(v + 12);
        (*rows)++;
    }
    return sum;
}

static void history_of_a_busy_day(void)
{
    tl_unique_ns("stats-hist", ns_, sizeof ns_);
    seed_every_minute();
    char *before = tl_ns_dump(rc_, ns_);

    CHECK_INT(CLI("stats", "--history"), 0);
    char want[256];
    snprintf(
        want, sizeof want,
        "namespace %s, the last 24 hours (UTC): 2880 processed, 1440 failed; the last "
        "hour: 120 processed, 60 failed\n\nHOUR (UTC)        PROCESSED  FAILED  BUSIEST MINUTE\n",
        ns_);
    CHECK(strncmp(cli_out_, want, strlen(want)) == 0);
    size_t lines = cli_lines(cli_out_); /* 3 + 24 or 25 hours (the first may be cut) */
    CHECK(lines == 3 + 24 || lines == 3 + 25);
    CHECK(strstr(cli_out_, "        120      60               2\n") != NULL); /* a whole hour */
    CHECK_STR(cli_err_, "");

    CHECK_INT(CLI("stats", "--history", "--json"), 0);
    CHECK_INT(cli_lines(cli_out_), 1);
    snprintf(want, sizeof want,
             "{\"ns\":\"%s\",\"processed\":2880,\"failed\":1440,\"last_hour\":{\"processed\":120,"
             "\"failed\":60},\"hours\":[{\"hour\":\"",
             ns_);
    CHECK(strncmp(cli_out_, want, strlen(want)) == 0);
    int rows = 0;
    CHECK_INT(hour_rows(cli_out_, &rows), 2880);
    CHECK(rows == 24 || rows == 25);
    /* every minute: 1440 times 2, then 1440 times 1 */
    const char *p = strstr(cli_out_, ",\"step\":60,\"processed\":[");
    CHECK(p != NULL);
    if (p) {
        p = strchr(p, '[') + 1;
        for (int i = 0; i < 1440; i++, p += 2)
            if (strncmp(p, i < 1439 ? "2," : "2]", 2) != 0) {
                tl_fail(__FILE__, __LINE__, "minute %d: %.10s", i, p);
                break;
            }
        CHECK(strncmp(p, ",\"failed\":[1,1,", 15) == 0);
    }
    char *after = tl_ns_dump(rc_, ns_);
    CHECK_STR(after, before); /* it only reads */
    free(before);
    free(after);
    tl_ns_delete(rc_, ns_);
}

static void history_of_an_empty_namespace_and_bad_options(void)
{
    tl_unique_ns("stats-hist0", ns_, sizeof ns_);
    CHECK_INT(CLI("stats", "--history"), 0);
    char want[256];
    snprintf(want, sizeof want,
             "namespace %s, the last 24 hours (UTC): 0 processed, 0 failed; the last hour: 0 "
             "processed, 0 failed\n",
             ns_);
    CHECK(strncmp(cli_out_, want, strlen(want)) == 0);
    CHECK_INT(CLI("stats", "--history=yes"), 2);
    CHECK(strstr(cli_err_, "--history") != NULL);
    CHECK_INT(CLI("stats", "--histroy"), 2);
    CHECK(strstr(cli_err_, "--history") != NULL); /* the suggestion */
    CHECK_INT(CLI("stats", "--help"), 0);
    CHECK(strstr(cli_out_, "--history") != NULL);
    redisReply *keys = tl_cmd(rc_, "KEYS %s:*", ns_);
    CHECK_INT(keys->elements, 0);
    freeReplyObject(keys);
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(history_of_a_busy_day);
    RUN(history_of_an_empty_namespace_and_bad_options);
    redisFree(rc_);
    return tl_finish();
}
