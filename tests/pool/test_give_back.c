/* give_back.lua (PROTOCOL §5.8): jobs a pool fetched ahead go from its in-progress list
 * to the right end of their queue in the order they had, lock and lock_info go down by
 * the number moved; a job no longer in progress is left alone, a job its queue cannot
 * take stays in progress, a counter that cannot move is reported — and every job is
 * somewhere afterwards. Each case checks the whole namespace. */
#include "scripts.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

static redisContext *rc_;
static char ns_[64];

#define JOB(name, id) "{\"name\":\"" name "\",\"id\":\"" id "\",\"t\":1,\"args\":{}}"

/* A pool "pool1" holding, oldest first, a1 a2 a3 of type a (a4 running) and b1 of b. */
static void seed(void)
{
    tl_unique_ns("giveback", ns_, sizeof ns_);
    tl_do(rc_, "LPUSH %s:jobs:a:pool1:inprogress %s %s %s %s", ns_, JOB("a", "a4"), JOB("a", "a1"),
          JOB("a", "a2"), JOB("a", "a3"));
    tl_do(rc_, "LPUSH %s:jobs:b:pool1:inprogress %s", ns_, JOB("b", "b1"));
    tl_do(rc_, "LPUSH %s:jobs:a %s", ns_, JOB("a", "a0")); /* waiting already */
    tl_do(rc_, "SET %s:jobs:a:lock 4", ns_);
    tl_do(rc_, "SET %s:jobs:b:lock 1", ns_);
    tl_do(rc_, "HSET %s:jobs:a:lock_info pool1 4", ns_);
    tl_do(rc_, "HSET %s:jobs:b:lock_info pool1 1", ns_);
}

/* Calls the script for a1 a2 a3 (oldest first) of a and b1 of b; returns the reply. */
static redisReply *give_back(void)
{
    char k[9][128];
    const char *names[] = {"a", "b"};
    for (int i = 0; i < 2; i++) {
        snprintf(k[4 * i], sizeof k[0], "%s:jobs:%s:pool1:inprogress", ns_, names[i]);
        snprintf(k[4 * i + 1], sizeof k[0], "%s:jobs:%s", ns_, names[i]);
        snprintf(k[4 * i + 2], sizeof k[0], "%s:jobs:%s:lock", ns_, names[i]);
        snprintf(k[4 * i + 3], sizeof k[0], "%s:jobs:%s:lock_info", ns_, names[i]);
    }
    snprintf(k[8], sizeof k[8], "%s:cwork:cancelled", ns_);
    /* KEYS: four per name and the cancel marks; ARGV: pool, no wake-up channel, then
     * per name: the name, the count, the jobs oldest first. */
    const char *argv[] = {"EVAL",
                          cw_script_give_back.body,
                          "9",
                          k[0],
                          k[1],
                          k[2],
                          k[3],
                          k[4],
                          k[5],
                          k[6],
                          k[7],
                          k[8],
                          "pool1",
                          "",
                          "a",
                          "3",
                          JOB("a", "a1"),
                          JOB("a", "a2"),
                          JOB("a", "a3"),
                          "b",
                          "1",
                          JOB("b", "b1")};
    size_t n = sizeof argv / sizeof *argv, lens[sizeof argv / sizeof *argv];
    for (size_t i = 0; i < n; i++)
        lens[i] = strlen(argv[i]);
    redisReply *r = redisCommandArgv(rc_, (int)n, argv, lens);
    if (!r) tl_fail(__FILE__, __LINE__, "redis I/O error");
    return r;
}

/* The reply as text: moved, then the three lists. */
static void check_reply(redisReply *r, long long moved, const char *missing, const char *kept,
                        const char *error_prefix)
{
    CHECK_INT(r->type, REDIS_REPLY_ARRAY);
    CHECK_INT(r->elements, 5);
    CHECK_INT(r->element[0]->integer, moved);
    char got[64] = "";
    for (size_t i = 0; i < r->element[1]->elements; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%lld ",
                 r->element[1]->element[i]->integer);
    CHECK_STR(got, missing);
    got[0] = 0;
    for (size_t i = 0; i < r->element[2]->elements; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%lld ",
                 r->element[2]->element[i]->integer);
    CHECK_STR(got, kept);
    if (error_prefix) {
        CHECK_INT(r->element[3]->elements, 1);
        char want[160];
        snprintf(want, sizeof want, "%s:%s", ns_, error_prefix);
        CHECK(!strncmp(r->element[3]->element[0]->str, want, strlen(want)));
    } else {
        CHECK_INT(r->element[3]->elements, 0);
    }
    freeReplyObject(r);
}

static void check_ns(const char *fmt)
{
    char want[2048];
    snprintf(want, sizeof want, fmt, ns_, ns_, ns_, ns_, ns_, ns_, ns_, ns_, ns_, ns_);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    tl_ns_delete(rc_, ns_);
}

static void jobs_go_to_the_right_end_in_their_order(void)
{
    seed();
    check_reply(give_back(), 4, "", "", NULL);
    /* The queue, left to right: a0 waited already; a3 a2 a1 at the right end, a1 next. */
    check_ns("%s:jobs:a list " JOB("a", "a0") " | " JOB("a", "a3") " | " JOB("a", "a2") " | " JOB(
        "a", "a1") "\n"
                   "%s:jobs:a:lock string 1\n"
                   "%s:jobs:a:lock_info hash pool1=1\n"
                   "%s:jobs:a:pool1:inprogress list " JOB(
                       "a", "a4") "\n"
                                  "%s:jobs:b list " JOB("b",
                                                        "b1") "\n"
                                                              "%s:jobs:b:lock string 0\n"
                                                              "%s:jobs:b:lock_info hash pool1=0\n");
}

static void a_job_a_reaper_took_is_left_alone(void)
{
    seed();
    /* A reaper gave a2 back meanwhile (and released its slot). */
    tl_do(rc_, "LREM %s:jobs:a:pool1:inprogress 1 %s", ns_, JOB("a", "a2"));
    tl_do(rc_, "LPUSH %s:jobs:a %s", ns_, JOB("a", "a2"));
    tl_do(rc_, "DECR %s:jobs:a:lock", ns_);
    tl_do(rc_, "HINCRBY %s:jobs:a:lock_info pool1 -1", ns_);
    check_reply(give_back(), 3, "2 ", "", NULL);
    check_ns("%s:jobs:a list " JOB("a", "a2") " | " JOB("a", "a0") " | " JOB("a", "a3") " | " JOB(
        "a", "a1") "\n"
                   "%s:jobs:a:lock string 1\n"
                   "%s:jobs:a:lock_info hash pool1=1\n"
                   "%s:jobs:a:pool1:inprogress list " JOB(
                       "a", "a4") "\n"
                                  "%s:jobs:b list " JOB("b",
                                                        "b1") "\n"
                                                              "%s:jobs:b:lock string 0\n"
                                                              "%s:jobs:b:lock_info hash pool1=0\n");
}

static void a_queue_that_cannot_take_them_keeps_them_in_progress(void)
{
    seed();
    tl_do(rc_, "DEL %s:jobs:b", ns_);
    tl_do(rc_, "SET %s:jobs:b damaged", ns_);
    check_reply(give_back(), 3, "", "4 ", "jobs:b: ");
    check_ns("%s:jobs:a list " JOB("a", "a0") " | " JOB("a", "a3") " | " JOB("a", "a2") " | " JOB(
        "a", "a1") "\n"
                   "%s:jobs:a:lock string 1\n"
                   "%s:jobs:a:lock_info hash pool1=1\n"
                   "%s:jobs:a:pool1:inprogress list " JOB(
                       "a", "a4") "\n"
                                  "%s:jobs:b string damaged\n"
                                  "%s:jobs:b:lock string 1\n"
                                  "%s:jobs:b:lock_info hash pool1=1\n"
                                  "%s:jobs:b:pool1:inprogress list " JOB("b", "b1") "\n");
}

static void a_counter_that_cannot_move_is_reported(void)
{
    seed();
    tl_do(rc_, "SET %s:jobs:b:lock notanumber", ns_);
    check_reply(give_back(), 4, "", "", "jobs:b:lock: ");
    check_ns("%s:jobs:a list " JOB("a", "a0") " | " JOB("a", "a3") " | " JOB("a", "a2") " | " JOB(
        "a", "a1") "\n"
                   "%s:jobs:a:lock string 1\n"
                   "%s:jobs:a:lock_info hash pool1=1\n"
                   "%s:jobs:a:pool1:inprogress list " JOB(
                       "a", "a4") "\n"
                                  "%s:jobs:b list " JOB("b",
                                                        "b1") "\n"
                                                              "%s:jobs:b:lock string notanumber\n"
                                                              "%s:jobs:b:lock_info hash pool1=0\n");
}

/* A job an operator cancelled stays in progress (the pool commits it to dead), and is
 * reported apart; the mark stays for that commit. */
static void a_cancelled_job_stays_in_progress(void)
{
    seed();
    tl_do(rc_, "HSET %s:cwork:cancelled a2 1700000000", ns_);
    redisReply *r = give_back();
    CHECK_INT(r->elements, 5);
    CHECK_INT(r->element[4]->elements, 1);
    CHECK_INT(r->element[4]->element[0]->integer, 2); /* a2: the second job */
    check_reply(r, 3, "", "", NULL);
    check_ns("%s:cwork:cancelled hash a2=1700000000\n"
             "%s:jobs:a list " JOB("a", "a0") " | " JOB("a", "a3") " | " JOB(
                 "a", "a1") "\n"
                            "%s:jobs:a:lock string 2\n"
                            "%s:jobs:a:lock_info hash pool1=2\n"
                            "%s:jobs:a:pool1:inprogress list " JOB("a", "a2") " | " JOB(
                                "a", "a4") "\n"
                                           "%s:jobs:b list " JOB(
                                               "b", "b1") "\n"
                                                          "%s:jobs:b:lock string 0\n"
                                                          "%s:jobs:b:lock_info hash pool1=0\n");
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(jobs_go_to_the_right_end_in_their_order);
    RUN(a_job_a_reaper_took_is_left_alone);
    RUN(a_queue_that_cannot_take_them_keeps_them_in_progress);
    RUN(a_counter_that_cannot_move_is_reported);
    RUN(a_cancelled_job_stays_in_progress);
    redisFree(rc_);
    return tl_finish();
}
