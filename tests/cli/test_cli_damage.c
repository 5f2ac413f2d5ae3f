/* The cwork admin views with one key of a whole namespace damaged in turn
 * (damage_testutil.h): each view exits 0 with what it could read; the views that read
 * the damaged key print one warning naming it, its type, the type expected and the
 * doctor; --json objects carry a "damaged" array; nothing in the namespace changes. A
 * change that has nothing to work on (all jobs of a set, or one job whose set is
 * damaged) and cwork batch on a damaged batch key name the key once and exit 1. cwork
 * succeeded reads past a damaged zset, result or known_jobs as the views do. */
#include "cli_testutil.h"
#include "damage_testutil.h"

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void every_view_exits_0_and_warns_once(void)
{
    char ns[64];
    tl_unique_ns("dmgcli", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    static const struct {
        const char *argv[4];
        unsigned reads; /* DMG_V_* */
    } views[] = {
        {{"queues", NULL}, DMG_V_QUEUES},
        {{"pools", NULL}, DMG_V_POOLS},
        {{"busy", NULL}, DMG_V_BUSY},
        {{"retry", NULL}, DMG_V_RETRY},
        {{"scheduled", NULL}, DMG_V_SCHEDULED},
        {{"dead", NULL}, DMG_V_DEAD},
        {{"dead", "--json", NULL}, DMG_V_DEAD},
        {{"dead", "--grep", "a", NULL}, DMG_V_DEAD},
        {{"stats", NULL}, DMG_V_STATS},
        {{"stats", "--json", NULL}, DMG_V_STATS},
        {{"limits", NULL}, DMG_V_LIMITS},
        {{"job", "FIND", NULL}, DMG_V_JOB | DMG_V_STORY},
        {{"job", "--json", "FIND", NULL}, DMG_V_JOB | DMG_V_STORY},
        {{"batch", DMG_BATCH, NULL}, DMG_V_BATCH},
        {{"batch", "--json", DMG_BATCH, NULL}, DMG_V_BATCH},
    };
    for (size_t i = 0; i < DMG_NCASES; i++) {
        const dmg_case *k = &dmg_cases[i];
        char key[256], warning[400], json_key[300];
        dmg_key(ns, k, key, sizeof key);
        snprintf(warning, sizeof warning, ": warning: %s is a %s, expected a %s (", key, k->type,
                 k->expected);
        snprintf(json_key, sizeof json_key, "{\"key\":\"%s\",\"type\":\"%s\",\"expected\":\"%s\"",
                 key, k->type, k->expected);
        dmg_fixture(c, ns);
        dmg_apply(c, ns, k);
        char *before = tl_ns_dump(c, ns);
        for (size_t j = 0; j < sizeof views / sizeof views[0]; j++) {
            const char *argv[5];
            size_t n = 0;
            for (; views[j].argv[n]; n++)
                argv[n] = strcmp(views[j].argv[n], "FIND") ? views[j].argv[n] : k->find;
            argv[n] = NULL;
            int status = cli_run_in_ns(ns, NULL, argv);
            if (status != 0)
                tl_fail(__FILE__, __LINE__, "cwork %s %s with %s damaged: exit %d: %s", argv[0],
                        argv[1] ? argv[1] : "", key, status, cli_err_);
            int warned = count_of(cli_err_, warning);
            int wanted = (views[j].reads & k->named_by) ? 1 : 0;
            if (warned != wanted)
                tl_fail(__FILE__, __LINE__, "cwork %s %s with %s damaged: %d warnings: %s", argv[0],
                        argv[1] ? argv[1] : "", key, warned, cli_err_);
            if (wanted && !strstr(cli_err_, "cwork doctor --ns "))
                tl_fail(__FILE__, __LINE__, "no doctor hint: %s", cli_err_);
            if (wanted && argv[1] && !strcmp(argv[1], "--json"))
                CHECK_INT(count_of(cli_out_, json_key), 1);
        }
        char *after = tl_ns_dump(c, ns);
        CHECK_STR(after, before);
        free(before);
        free(after);
    }
    tl_ns_delete(c, ns);
    redisFree(c);
}

static void a_change_on_a_damaged_set_names_it_once(void)
{
    char ns[64];
    tl_unique_ns("dmgclichange", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    dmg_fixture(c, ns);
    dmg_apply(c, ns, &dmg_cases[5]); /* dead */
    char *before = tl_ns_dump(c, ns);
    char want[400];
    snprintf(want, sizeof want,
             "cwork dead retry: %s:dead is a string, expected a zset (the dead set) — cwork "
             "doctor --ns %s can repair it\n",
             ns, ns);
    CHECK_INT(cli_run_in_ns(ns, NULL, (const char *const[]){"dead", "retry", "--all", NULL}), 1);
    CHECK_STR(cli_err_, want);
    char *after = tl_ns_dump(c, ns);
    CHECK_STR(after, before);
    free(before);
    free(after);
    tl_ns_delete(c, ns);
    redisFree(c);
}

/* Runs cwork argv in ns: exit status 1 and exactly the line want on stderr ("%s" in
 * want: ns, as often as it occurs, at most three times). */
static void fails_naming(const char *ns, const char *const *argv, const char *want)
{
    char line[600];
    snprintf(line, sizeof line, want, ns, ns, ns);
    int status = cli_run_in_ns(ns, NULL, argv);
    if (status != 1 || strcmp(cli_err_, line) != 0)
        tl_fail(__FILE__, __LINE__, "cwork %s %s: exit %d\n%s\nwanted\n%s", argv[0],
                argv[1] ? argv[1] : "", status, cli_err_, line);
}

/* A change of one job whose set is damaged: the key named once with its type and what it
 * should be, the doctor, exit 1, nothing changed; found elsewhere, the job is changed and
 * the damaged key warned of. */
static void a_single_job_change_on_a_damaged_set_names_it(void)
{
    char ns[64];
    tl_unique_ns("dmgclione", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    dmg_fixture(c, ns);
    dmg_apply(c, ns, &dmg_cases[5]); /* dead */
    char *before = tl_ns_dump(c, ns);
    fails_naming(ns, (const char *const[]){"dead", "retry", "idd", NULL},
                 "cwork dead retry: %s:dead is a string, expected a zset (the dead set): job idd "
                 "may be in it; nothing was changed — cwork doctor --ns %s can repair it\n");
    fails_naming(ns, (const char *const[]){"dead", "delete", "idd", "--at", "1700000000", NULL},
                 "cwork dead delete: %s:dead is a string, expected a zset (the dead set) — cwork "
                 "doctor --ns %s can repair it\n");
    fails_naming(ns, (const char *const[]){"cancel", "nope", NULL},
                 "cwork cancel: no job with id nope found, but %s:dead is a string, expected a "
                 "zset (the dead set) and may hold it — cwork doctor --ns %s can repair it\n");
    char *after = tl_ns_dump(c, ns);
    CHECK_STR(after, before);
    free(before);
    free(after);

    dmg_fixture(c, ns);
    dmg_apply(c, ns, &dmg_cases[3]); /* retry */
    before = tl_ns_dump(c, ns);
    fails_naming(ns, (const char *const[]){"retry", "kill", "idr", NULL},
                 "cwork retry kill: %s:retry is a string, expected a zset (the retry set): job "
                 "idr may be in it; nothing was changed — cwork doctor --ns %s can repair it\n");
    fails_naming(ns, (const char *const[]){"retry", "run", "idr", "--at", "1800000000", NULL},
                 "cwork retry run: %s:retry is a string, expected a zset (the retry set) — cwork "
                 "doctor --ns %s can repair it\n");
    after = tl_ns_dump(c, ns);
    CHECK_STR(after, before);
    free(before);
    free(after);
    /* the scheduled set is whole: its job is found past the damaged retry set */
    CHECK_INT(cli_run_in_ns(ns, NULL, (const char *const[]){"scheduled", "delete", "ids", NULL}),
              0);
    CHECK_STR(cli_out_, "Deleted scheduled job ids (at 1800000000).\n");
    char warning[300];
    snprintf(warning, sizeof warning,
             "cwork scheduled delete: warning: %s:retry is a string, expected a zset (the retry "
             "set); shown as damaged",
             ns);
    CHECK_INT(count_of(cli_err_, warning), 1);
    tl_ns_delete(c, ns);
    redisFree(c);
}

/* cwork batch on a damaged batch key: nothing to show; the key named, exit 1. */
static void a_damaged_batch_key_is_named(void)
{
    char ns[64];
    tl_unique_ns("dmgclibatch", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    dmg_fixture(c, ns);
    tl_do(c, "DEL %s:cwork:batch:" DMG_BATCH, ns);
    tl_do(c, "SET %s:cwork:batch:" DMG_BATCH " x", ns);
    char *before = tl_ns_dump(c, ns);
    static const char want[] = "cwork batch: %s:cwork:batch:" DMG_BATCH
                               " is a string, expected a hash (a batch) — cwork doctor --ns %s "
                               "can repair it\n";
    fails_naming(ns, (const char *const[]){"batch", DMG_BATCH, NULL}, want);
    fails_naming(ns, (const char *const[]){"batch", "--json", DMG_BATCH, NULL}, want);
    fails_naming(ns, (const char *const[]){"batch", "--seal", DMG_BATCH, NULL}, want);
    CHECK_STR(cli_out_, "");
    char *after = tl_ns_dump(c, ns);
    CHECK_STR(after, before);
    free(before);
    free(after);
    tl_ns_delete(c, ns);
    redisFree(c);
}

/* Two kept successes with their results (PROTOCOL §22), for cwork succeeded. */
#define SUC_MEMBER(name, id)                                                                       \
    "{\"ran_at\":1699999999000,\"took_us\":5,\"job\":" DMG_JOB(name, id) "}"

static void succeeded_fixture(redisContext *c, const char *ns)
{
    tl_ns_delete(c, ns);
    tl_do(c, "SADD %s:known_jobs a b", ns);
    tl_do(c, "ZADD %s:cwork:succeeded:a 1700000000000 %s", ns, SUC_MEMBER("a", "sa1"));
    tl_do(c, "ZADD %s:cwork:succeeded:b 1700000001000 %s", ns, SUC_MEMBER("b", "sb1"));
    tl_do(c, "SET %s:cwork:result:sa1 ra", ns);
    tl_do(c, "SET %s:cwork:result:sb1 rb", ns);
}

/* cwork succeeded with one of its keys damaged in turn: exit 0, what could be read, one
 * warning naming the key and the doctor, a "damaged" array in --json, nothing changed.
 * cwork result ID with its result key damaged has nothing to show: exit 1, the key named
 * once with the doctor. */
static void succeeded_and_result_read_past_damage(void)
{
    char ns[64];
    tl_unique_ns("dmgclisucc", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    static const struct {
        const char *rest, *verb, *type, *expected;
        const char *listed; /* the ids still listed, in order */
        const char *json;   /* a part of --json that must be there */
    } cases[] = {
        {"cwork:succeeded:a", "SET", "string", "zset", "sb1", "\"result\": \"rb\""},
        {"cwork:result:sa1", "HSET", "hash", "string", "sb1 sa1", "\"result\": null"},
        {"known_jobs", "SET", "string", "set", "", "{\"jobs\": [], \"damaged\": [{\"key\":"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char key[128], warning[512], json_key[512];
        snprintf(key, sizeof key, "%s:%s", ns, cases[i].rest);
        snprintf(warning, sizeof warning, "cwork succeeded: warning: %s is a %s, expected a %s (",
                 key, cases[i].type, cases[i].expected);
        snprintf(json_key, sizeof json_key,
                 "\"damaged\": [{\"key\":\"%s\",\"type\":\"%s\",\"expected\":\"%s\"", key,
                 cases[i].type, cases[i].expected);
        succeeded_fixture(c, ns);
        tl_do(c, "DEL %s", key);
        if (!strcmp(cases[i].verb, "HSET"))
            tl_do(c, "HSET %s f v", key);
        else
            tl_do(c, "SET %s x", key);
        char *before = tl_ns_dump(c, ns);

        CHECK_INT(cli_run_in_ns(ns, NULL, (const char *const[]){"succeeded", NULL}), 0);
        CHECK_INT(count_of(cli_err_, warning), 1);
        CHECK_INT(count_of(cli_err_, "warning:"), 1);
        CHECK(strstr(cli_err_, "cwork doctor --ns ") != NULL);
        const char *ids[] = {"sb1", "sa1"};
        char listed[16] = "";
        for (size_t j = 0; j < 2; j++)
            if (strstr(cli_out_, ids[j]))
                snprintf(listed + strlen(listed), sizeof listed - strlen(listed), "%s%s",
                         listed[0] ? " " : "", ids[j]);
        CHECK_STR(listed, cases[i].listed);

        CHECK_INT(cli_run_in_ns(ns, NULL, (const char *const[]){"succeeded", "--json", NULL}), 0);
        CHECK_INT(count_of(cli_out_, json_key), 1);
        CHECK(strstr(cli_out_, cases[i].json) != NULL);
        CHECK_INT(count_of(cli_err_, warning), 1);

        if (!strcmp(cases[i].rest, "cwork:result:sa1")) {
            char want[512];
            snprintf(want, sizeof want,
                     "cwork result: %s is a hash, expected a string (a job's result) — cwork "
                     "doctor --ns %s can repair it\n",
                     key, ns);
            CHECK_INT(cli_run_in_ns(ns, NULL, (const char *const[]){"result", "sa1", NULL}), 1);
            CHECK_STR(cli_err_, want);
            CHECK_STR(cli_out_, "");
            CHECK_INT(cli_run_in_ns(ns, NULL, (const char *const[]){"result", "sb1", NULL}), 0);
            CHECK_STR(cli_out_, "rb");
        }
        char *after = tl_ns_dump(c, ns);
        CHECK_STR(after, before);
        free(before);
        free(after);
    }
    tl_ns_delete(c, ns);
    redisFree(c);
}

int main(void)
{
    RUN(every_view_exits_0_and_warns_once);
    RUN(a_change_on_a_damaged_set_names_it_once);
    RUN(a_single_job_change_on_a_damaged_set_names_it);
    RUN(a_damaged_batch_key_is_named);
    RUN(succeeded_and_result_read_past_damage);
    return tl_finish();
}
