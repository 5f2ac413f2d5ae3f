/* A whole namespace for the damaged-key tests (tests/client, tests/cli, tests/web): two
 * queues, a retry, a scheduled and a dead job, a pool heartbeat with a busy worker and
 * its in-progress list, locks, a pause flag, a rate limit with its window, today's
 * counts, the scheduled job's kept failure, a tracked batch — and the cases that damage one of its
 * keys in turn (a string where a list, zset, set or hash is expected; a list or a hash where a
 * string is expected). */
#ifndef CWORK_DAMAGE_TESTUTIL_H
#define CWORK_DAMAGE_TESTUTIL_H

#include "testlib.h"

#include <stdio.h>
#include <time.h>

#define DMG_POOL "0123456789abcdef01234567"
#define DMG_BATCH "abcdef0123456789abcdef01"
#define DMG_JOB(name, id) "{\"name\":\"" name "\",\"id\":\"" id "\",\"t\":1700000000,\"args\":{}}"

/* One damage: the key (after "<ns>:"), how it is rewritten, what it should be, and the
 * views that read it (and so must name it): bits of DMG_V_*. */
enum {
    DMG_V_QUEUES = 1 << 0,
    DMG_V_POOLS = 1 << 1,
    DMG_V_BUSY = 1 << 2,
    DMG_V_RETRY = 1 << 3,
    DMG_V_SCHEDULED = 1 << 4,
    DMG_V_DEAD = 1 << 5,
    DMG_V_STATS = 1 << 6,
    DMG_V_LIMITS = 1 << 7,
    DMG_V_JOB = 1 << 8,   /* finding a job by id */
    DMG_V_STORY = 1 << 9, /* a job's story (its kept failures) */
    DMG_V_BATCH = 1 << 10 /* the tracked batch DMG_BATCH */
};

typedef struct dmg_case {
    const char *rest; /* the key after "<ns>:" ("%s" is today's date) */
    const char *verb; /* how it is rewritten: VERB <key> A1 [A2] */
    const char *a1, *a2;
    const char *type;     /* what the key holds then */
    const char *expected; /* what it should be */
    unsigned named_by;    /* the views that read it */
    const char *find;     /* an id that is still found with this damage */
} dmg_case;

static const dmg_case dmg_cases[] = {
    {"known_jobs", "SET", "str", NULL, "string", "set", DMG_V_QUEUES | DMG_V_STATS | DMG_V_JOB,
     "ids"},
    {"jobs:a", "SET", "notalist", NULL, "string", "list", DMG_V_QUEUES | DMG_V_STATS | DMG_V_JOB,
     "ids"},
    {"jobs:b", "HSET", "f", "v", "hash", "list", DMG_V_QUEUES | DMG_V_STATS | DMG_V_JOB, "ids"},
    {"retry", "SET", "x", NULL, "string", "zset", DMG_V_RETRY | DMG_V_STATS | DMG_V_JOB, "ids"},
    {"scheduled", "RPUSH", "x", NULL, "list", "zset", DMG_V_SCHEDULED | DMG_V_JOB, "idd"},
    {"dead", "SET", "x", NULL, "string", "zset", DMG_V_DEAD | DMG_V_STATS, "ids"},
    {"worker_pools", "SET", "x", NULL, "string", "set",
     DMG_V_POOLS | DMG_V_BUSY | DMG_V_STATS | DMG_V_JOB, "ids"},
    {"worker_pools:" DMG_POOL, "SET", "x", NULL, "string", "hash",
     DMG_V_POOLS | DMG_V_BUSY | DMG_V_STATS, "ids"},
    {"worker:w1", "RPUSH", "x", NULL, "list", "hash", DMG_V_BUSY | DMG_V_STATS, "ids"},
    {"jobs:a:" DMG_POOL ":inprogress", "SET", "x", NULL, "string", "list", DMG_V_JOB, "ids"},
    {"cwork:rate_limits", "SET", "x", NULL, "string", "hash", DMG_V_LIMITS, "ids"},
    {"cwork:rate_limit:a", "HSET", "f", "v", "hash", "string", DMG_V_LIMITS, "ids"},
    {"cwork:stat:%s", "SET", "x", NULL, "string", "hash", DMG_V_STATS, "ids"},
    {"jobs:a:lock", "RPUSH", "1", NULL, "list", "string", 0, "ids"},
    {"jobs:a:paused", "HSET", "f", "v", "hash", "string", 0, "ids"},
    {"cwork:failures:ids", "HSET", "f", "v", "hash", "list", DMG_V_STORY, "ids"},
    {"cwork:batch:" DMG_BATCH ":jobs", "SET", "x", NULL, "string", "hash", DMG_V_BATCH, "ids"},
};
#define DMG_NCASES (sizeof dmg_cases / sizeof dmg_cases[0])

/* Today's date as the daily counts name it (UTC). */
static inline void dmg_today(char out[16])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 16, "%Y-%m-%d", &tm);
}

/* The whole key of case k in ns. */
static inline void dmg_key(const char *ns, const dmg_case *k, char *out, size_t size)
{
    char today[16], rest[128];
    dmg_today(today);
    snprintf(rest, sizeof rest, k->rest, today);
    snprintf(out, size, "%s:%s", ns, rest);
}

/* Writes the namespace. */
static inline void dmg_fixture(redisContext *c, const char *ns)
{
    char today[16];
    dmg_today(today);
    tl_ns_delete(c, ns);
    tl_do(c, "SADD %s:known_jobs a b", ns);
    tl_do(c, "LPUSH %s:jobs:a %s", ns, DMG_JOB("a", "ida"));
    tl_do(c, "LPUSH %s:jobs:b %s", ns, DMG_JOB("b", "idb"));
    tl_do(c, "ZADD %s:retry 1800000000 %s", ns, DMG_JOB("a", "idr"));
    tl_do(c, "ZADD %s:scheduled 1800000000 %s", ns, DMG_JOB("b", "ids"));
    tl_do(c, "ZADD %s:dead 1700000000 %s", ns, DMG_JOB("a", "idd"));
    tl_do(c, "SADD %s:worker_pools " DMG_POOL, ns);
    tl_do(c,
          "HSET %s:worker_pools:" DMG_POOL " heartbeat_at 1700000000 started_at 1700000000 "
          "job_names a,b concurrency 2 host h pid 7 worker_ids w1,w2",
          ns);
    tl_do(c, "HSET %s:worker:w1 job_name a job_id idp started_at 1700000000 args {}", ns);
    tl_do(c, "LPUSH %s:jobs:a:" DMG_POOL ":inprogress %s", ns, DMG_JOB("a", "idp"));
    tl_do(c, "SET %s:jobs:a:lock 1", ns);
    tl_do(c, "HSET %s:jobs:a:lock_info " DMG_POOL " 1", ns);
    tl_do(c, "SET %s:jobs:a:paused 1", ns);
    tl_do(c, "HSET %s:cwork:rate_limits a 10/1s", ns);
    tl_do(c, "SET %s:cwork:rate_limit:a 1", ns);
    tl_do(c, "HSET %s:cwork:stat:%s processed 5 failed 1", ns, today);
    tl_do(c,
          "RPUSH %s:cwork:failures:ids "
          "{\"err\":\"boom\",\"failed_at\":1700000050,\"fails\":1,\"t\":1700000000}",
          ns);
    tl_do(c,
          "HSET %s:cwork:batch:" DMG_BATCH " id " DMG_BATCH " total 3 succeeded 1 retrying 1 "
          "dead 0 sealed 1 when complete callback waiting cb_name b created_at 1700000000",
          ns);
    tl_do(c, "HSET %s:cwork:batch:" DMG_BATCH ":jobs idx s idy r", ns);
}

/* Damages the key of case k. */
static inline void dmg_apply(redisContext *c, const char *ns, const dmg_case *k)
{
    char key[256];
    dmg_key(ns, k, key, sizeof key);
    tl_do(c, "DEL %s", key);
    if (k->a2)
        tl_do(c, "%s %s %s %s", k->verb, key, k->a1, k->a2);
    else
        tl_do(c, "%s %s %s", k->verb, key, k->a1);
}

#endif
