/* Table tests of the cwork command's pure text functions (cli/cli_text.c, compiled in
 * here: the command's sources are not in a library): durations and "did you mean". */
#include "../cli/cli_text.c"

#include "testlib.h"

static void durations(void)
{
    static const struct {
        const char *in;
        long long ms; /* -1: refused */
    } cases[] = {
        {"90", 90000},
        {"0", 0},
        {"0.5", 500},
        {".5", 500},
        {"5.", 5000},
        {"90s", 90000},
        {"15m", 900000},
        {"1h", 3600000},
        {"7d", 604800000},
        {"2w", 1209600000},
        {"500ms", 500},
        {"1h30m", 5400000},
        {"1d12h", 129600000},
        {"1m30s250ms", 90250},
        {"1.5h", 5400000},
        {"36500d", 3153600000000LL},
        {"", -1},
        {"s", -1},
        {"-5", -1},
        {"+5", -1},
        {" 5", -1},
        {"5 ", -1},
        {"5y", -1},
        {"1h30", -1}, /* a bare number after a unit: seconds or minutes? */
        {"1e3", -1},
        {"0x10", -1},
        {"inf", -1},
        {"nan", -1},
        {"1.2.3", -1},
        {".", -1},
        {"5m5", -1},
        {"5M", -1},
        {"36600d", -1}, /* beyond a hundred years */
        {"99999999999999999999999", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t ms = -7;
        int rc = cli_duration_ms(cases[i].in, &ms);
        long long got = rc == 0 ? (long long)ms : -1;
        if (got != cases[i].ms)
            tl_fail(__FILE__, __LINE__, "cli_duration_ms(\"%s\") = %lld, want %lld", cases[i].in,
                    got, cases[i].ms);
        if (rc != 0 && ms != -7)
            tl_fail(__FILE__, __LINE__, "cli_duration_ms(\"%s\") failed but wrote", cases[i].in);
    }
    int64_t s = -1;
    CHECK_INT(cli_duration_s("15m", &s), 0);
    CHECK_INT(s, 900);
    CHECK_INT(cli_duration_s("86400", &s), 0);
    CHECK_INT(s, 86400);
    CHECK_INT(cli_duration_s("1.5", &s), -1); /* not whole seconds */
    CHECK_INT(cli_duration_s("1500ms", &s), -1);
    CHECK_INT(cli_duration_s("2000ms", &s), 0);
    CHECK_INT(s, 2);
}

static void suggestions(void)
{
    static const char *const commands[] = {"enqueue", "work",  "demo",      "queues", "pools",
                                           "busy",    "retry", "scheduled", "dead",   "pause",
                                           "unpause", "job",   "web",       "queue",  NULL};
    static const char *const options[] = {"json",     "page",  "name", "all",  "at",
                                          "retry-at", "redis", "ns",   "help", NULL};
    static const struct {
        const char *word;
        const char *const *list;
        const char *want; /* NULL: no suggestion */
    } cases[] = {
        {"retyr", commands, "retry"},    /* two letters swapped */
        {"enqeue", commands, "enqueue"}, /* one left out */
        {"enqueeu", commands, "enqueue"},
        {"wrok", commands, "work"},
        {"sched", commands, "scheduled"}, /* an unambiguous prefix */
        {"schedule", commands, "scheduled"},
        {"jbo", commands, "job"},
        {"queus", commands, "queues"}, /* closer to queues than to queue */
        {"que", commands, NULL},       /* the prefix of queue and queues */
        {"xyz", commands, NULL},
        {"statistics", commands, NULL},
        {"retry", commands, NULL}, /* no typo */
        {"", commands, NULL},
        {"ab", commands, NULL}, /* too short to guess from */
        {"jsno", options, "json"},
        {"jason", options, "json"},
        {"redsi", options, "redis"},
        {"nss", options, "ns"},
        {"pgae", options, "page"},
        {"retry-att", options, "retry-at"},
        {"hlep", options, "help"},
        {"verbose", options, NULL},
        {"a-very-long-option-name-that-is-longer-than-sixty-three-bytes-altogether", options, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = cli_suggest(cases[i].word, cases[i].list);
        int same = got && cases[i].want ? strcmp(got, cases[i].want) == 0 : got == cases[i].want;
        if (!same)
            tl_fail(__FILE__, __LINE__, "cli_suggest(\"%s\") = %s, want %s", cases[i].word,
                    got ? got : "NULL", cases[i].want ? cases[i].want : "NULL");
    }
}

int main(void)
{
    RUN(durations);
    RUN(suggestions);
    return tl_finish();
}
