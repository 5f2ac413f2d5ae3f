/* cwork_client_doctor against a real Redis (PROTOCOL §25). A whole, healthy namespace
 * (queues, a unique job and its guard, a live pool with a job in progress and its lock,
 * retry, scheduled and dead jobs, a periodic instance and its published schedule, a
 * rate limit, a tracked batch) is clean. Then each kind of damage is made in turn on a
 * fresh copy: the doctor finds exactly it and writes nothing; the repair fixes it; a
 * second run is clean; the namespace then equals the healthy one plus the repair's
 * expected change (built the same way in a second namespace and compared dump to
 * dump), and holds every job it held (lists and zsets counted). */
#include "client_testutil.h"

#define LIVE "aaaaaaaaaaaaaaaaaaaaaaaa"
#define DEAD_POOL "bbbbbbbbbbbbbbbbbbbbbbbb"
#define BATCH "0123456789abcdef01234567"
#define MAIL_JOB "{\"name\":\"mail\",\"id\":\"m1\",\"t\":1700000000,\"args\":{\"to\":\"a\"}}"
#define UNIQUE_JOB                                                                                 \
    "{\"name\":\"mail\",\"id\":\"u1\",\"t\":1700000000,\"args\":{\"to\":\"u\"},\"unique\":true}"
#define RUNNING_JOB "{\"name\":\"good\",\"id\":\"r1\",\"t\":1700000000,\"args\":{}}"
#define ORPHAN_JOB "{\"name\":\"good\",\"id\":\"o1\",\"t\":1700000000,\"args\":{}}"

static char other_[64]; /* the namespace of the expected state */
static long long now_s_;

/* The healthy namespace, in ns. */
static void healthy(const char *ns)
{
    long long hb = now_s_;
    cmd("SADD %s:known_jobs mail good rep", ns);
    cmd("LPUSH %s:jobs:mail %s %s", ns, MAIL_JOB, UNIQUE_JOB);
    cmd("SET %s:unique:mail:%s 1 EX 86400", ns, "{\"to\":\"u\"}\n");
    cmd("SADD %s:worker_pools %s", ns, LIVE);
    cmd("HSET %s:worker_pools:%s heartbeat_at %lld started_at %lld job_names good,mail,rep "
        "concurrency 1 worker_ids w host h pid 1 cwork 0.2",
        ns, LIVE, hb, hb);
    cmd("LPUSH %s:jobs:good:%s:inprogress %s", ns, LIVE, RUNNING_JOB);
    cmd("SET %s:jobs:good:lock 1", ns);
    cmd("HSET %s:jobs:good:lock_info %s 1", ns, LIVE);
    cmd("SET %s:jobs:good:max_concurrency 0", ns);
    cmd("ZADD %s:retry 1900000000 %s", ns,
        "{\"name\":\"mail\",\"id\":\"t1\",\"t\":1,\"args\":null,\"fails\":1,\"err\":\"x\","
        "\"failed_at\":2}");
    cmd("ZADD %s:dead 1700000000 %s", ns,
        "{\"name\":\"mail\",\"id\":\"d1\",\"t\":1,\"args\":null,\"fails\":4,\"err\":\"x\","
        "\"failed_at\":1700000000}");
    cmd("ZADD %s:scheduled 1900000000 %s", ns,
        "{\"name\":\"rep\",\"id\":\"periodic:rep:@daily:1900000000\",\"t\":1900000000,\"args\":"
        "null,\"d\":1900086400}");
    cmd("HSET %s:cwork:periodic %s {\"next_at\":1900000000,\"seen_at\":%lld}", ns,
        "[\"rep\",\"@daily\"]", now_s_);
    cmd("HSET %s:cwork:rate_limits mail 5/1s", ns);
    cmd("HSET %s:cwork:batch:%s id %s total 2 succeeded 1 dead 0 retrying 0 sealed 1", ns, BATCH,
        BATCH);
    cmd("HSET %s:cwork:batch:%s:jobs j1 s", ns, BATCH);
}

/* Every list entry and zset member of ns: jobs, wherever they are. */
static long long count_jobs(const char *ns)
{
    long long n = 0;
    redisReply *keys = tl_cmd(rc_, "KEYS %s:*", ns);
    for (size_t i = 0; i < keys->elements; i++) {
        redisReply *t = tl_cmd(rc_, "TYPE %b", keys->element[i]->str, keys->element[i]->len);
        const char *c = !strcmp(t->str, "list") ? "LLEN" : !strcmp(t->str, "zset") ? "ZCARD" : NULL;
        if (c) {
            redisReply *l = tl_cmd(rc_, "%s %b", c, keys->element[i]->str, keys->element[i]->len);
            n += l->integer;
            freeReplyObject(l);
        }
        freeReplyObject(t);
    }
    freeReplyObject(keys);
    return n;
}

/* A dump with the namespace's name replaced by NS and TTLs by their presence (the two
 * namespaces are written a moment apart). */
static char *normalized(const char *ns)
{
    char *d = tl_ns_dump(rc_, ns), *out = malloc(strlen(d) + 1), *o = out;
    size_t nl = strlen(ns);
    for (const char *p = d; *p;) {
        if (!strncmp(p, ns, nl)) {
            o += sprintf(o, "NS");
            p += nl;
        } else if (!strncmp(p, " ttl=", 5)) {
            o += sprintf(o, " ttl");
            p += 5 + strspn(p + 5, "0123456789");
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    free(d);
    return out;
}

/* Whether a dump taken elapsed_ms after before (from the start of the one to the end of
 * the other) shows the same namespace: equal but for TTLs that ran down meanwhile. A dump
 * rounds a TTL up to whole seconds, so it may show up to ceil(elapsed) seconds less, never
 * more (a write that set a TTL again, or dropped it, is a change). */
static int unchanged_but_ttls(const char *before, const char *after, long long elapsed_ms)
{
    long long slack_s = (elapsed_ms + 999) / 1000;
    const char *b = before, *a = after;
    while (*b && *a) {
        if (!strncmp(b, " ttl=", 5) && !strncmp(a, " ttl=", 5)) {
            char *b_end = NULL, *a_end = NULL;
            long long tb = strtoll(b + 5, &b_end, 10), ta = strtoll(a + 5, &a_end, 10);
            if (ta > tb || ta < tb - slack_s) return 0;
            b = b_end, a = a_end;
        } else if (*b++ != *a++) {
            return 0;
        }
    }
    return *b == *a;
}

/* A check (or a repair with nothing to do) writes nothing: the dump before it, taken
 * at t0, equals the one after. */
#define CHECK_UNCHANGED(before, t0)                                                                \
    do {                                                                                           \
        char *after_ = dump_now();                                                                 \
        if (!unchanged_but_ttls((before), after_, tl_now_ms() - (t0)))                             \
            CHECK_STR(after_, (before));                                                           \
        free(after_);                                                                              \
    } while (0)

static cwork_doctor_finding *doctor(cwork_client *cl, unsigned flags, size_t *n)
{
    cwork_doctor_finding *f = NULL;
    cwork_error err = {0};
    int rc = cwork_client_doctor(cl, flags, &f, n, &err);
    if (rc) tl_fail(__FILE__, __LINE__, "doctor: %s", err.message);
    return f;
}

typedef struct damage_case {
    const char *what;
    cwork_doctor_kind kind;
    const char *key; /* after the namespace and ':' */
    void (*damage)(const char *ns);
    void (*expected)(const char *ns); /* the healthy namespace's change after repair */
    size_t repaired;                  /* findings the repair run makes (the first may free
                                         others to be seen) */
} damage_case;

static void run_case(const damage_case *c)
{
    cwork_client *cl = fresh("doc");
    tl_unique_ns("doc", other_, sizeof other_);
    healthy(ns_);
    c->damage(ns_);
    long long jobs = count_jobs(ns_);
    long long t0 = tl_now_ms();
    char *before = dump_now();
    size_t n = 0;
    cwork_doctor_finding *f = doctor(cl, 0, &n);
    if (n != 1) tl_fail(__FILE__, __LINE__, "%s: %zu findings, expected 1", c->what, n);
    if (n >= 1) {
        CHECK_STR(cwork_doctor_kind_name(f[0].kind), cwork_doctor_kind_name(c->kind));
        char key[256];
        snprintf(key, sizeof key, "%s:%s", ns_, c->key);
        CHECK_STR(f[0].key, key);
        CHECK(f[0].action != NULL);
        CHECK(!f[0].repaired);
    }
    cwork_doctor_findings_free(f, n);
    CHECK_UNCHANGED(before, t0); /* a check writes nothing */
    free(before);

    f = doctor(cl, CWORK_DOCTOR_REPAIR, &n);
    CHECK_INT(n, c->repaired);
    for (size_t i = 0; i < n; i++) {
        if (f[i].repair_error) tl_fail(__FILE__, __LINE__, "%s: %s", c->what, f[i].repair_error);
        CHECK(f[i].repaired);
    }
    cwork_doctor_findings_free(f, n);
    f = doctor(cl, 0, &n);
    if (n) tl_fail(__FILE__, __LINE__, "%s: second run: %s %s", c->what, f[0].key, f[0].problem);
    cwork_doctor_findings_free(f, n);
    CHECK_INT(count_jobs(ns_), jobs);

    healthy(other_);
    c->expected(other_);
    char *got = normalized(ns_), *want = normalized(other_);
    if (strcmp(got, want))
        tl_fail(__FILE__, __LINE__, "%s: namespace after repair\n   got:\n%s  want:\n%s", c->what,
                got, want);
    free(got), free(want);
    tl_ns_delete(rc_, other_);
    done(cl);
}

/* ---------------------------------------------------------------- the damages */

static void queue_string(const char *ns)
{
    cmd("SADD %s:known_jobs x", ns);
    cmd("SET %s:jobs:x notalist", ns);
}
static void queue_string_moved(const char *ns)
{
    cmd("SADD %s:known_jobs x", ns);
    cmd("SET %s:cwork:quarantine:key:jobs:x notalist", ns);
}

/* A job's failure history (PROTOCOL §26) that is not a list. */
static void failures_string(const char *ns)
{
    cmd("SET %s:cwork:failures:d1 notalist", ns);
}
static void failures_string_moved(const char *ns)
{
    cmd("SET %s:cwork:quarantine:key:cwork:failures:d1 notalist", ns);
}

static void lock_without_info(const char *ns)
{
    cmd("SET %s:jobs:mail:lock 3", ns);
}
static void lock_zeroed(const char *ns)
{
    cmd("SET %s:jobs:mail:lock 0", ns);
}

static void orphan(const char *ns)
{
    cmd("LPUSH %s:jobs:good:%s:inprogress %s", ns, DEAD_POOL, ORPHAN_JOB);
    cmd("HSET %s:jobs:good:lock_info %s 1", ns, DEAD_POOL);
    cmd("SET %s:jobs:good:lock 2", ns);
}
static void orphan_requeued(const char *ns)
{
    cmd("LPUSH %s:jobs:good %s", ns, ORPHAN_JOB);
}

static void stale_guard(const char *ns)
{
    cmd("SET %s:unique:mail:%s 1 EX 86400", ns, "{\"to\":\"gone\"}\n");
}
static void nothing(const char *ns)
{
    (void)ns;
}

static void dead_notjson(const char *ns)
{
    cmd("ZADD %s:dead 5 {notjson", ns);
}
static void dead_notjson_moved(const char *ns)
{
    cmd("ZADD %s:cwork:quarantine:dead 5 {notjson", ns);
}

static void stray_name(const char *ns)
{
    cmd("LPUSH %s:jobs:stray %s", ns, "{\"name\":\"stray\",\"id\":\"s1\",\"t\":1,\"args\":null}");
}
static void stray_known(const char *ns)
{
    stray_name(ns);
    cmd("SADD %s:known_jobs stray", ns);
}

static void future_beat(const char *ns)
{
    cmd("HSET %s:worker_pools:%s heartbeat_at %lld", ns, LIVE, now_s_ + 100000);
}

/* The repaired heartbeat_at is Redis' clock at the repair, which may be a second past
 * the one the healthy namespace was written with: the expected state takes it from the
 * repaired namespace (the case's first check bounds it). */
static void beat_as_repaired(const char *ns)
{
    redisReply *r = tl_cmd(rc_, "HGET %s:worker_pools:%s heartbeat_at", ns_, LIVE);
    if (r->type == REDIS_REPLY_STRING)
        cmd("HSET %s:worker_pools:%s heartbeat_at %s", ns, LIVE, r->str);
    freeReplyObject(r);
}

static void bad_limit(const char *ns)
{
    cmd("HSET %s:cwork:rate_limits good 5/xx", ns);
}
static void bad_limit_moved(const char *ns)
{
    cmd("HSET %s:cwork:quarantine:rate_limits good 5/xx", ns);
}

static void batch_overcounted(const char *ns)
{
    cmd("HSET %s:cwork:batch:%s succeeded 5", ns, BATCH);
}

#define HOURLY                                                                                     \
    "{\"name\":\"rep\",\"id\":\"periodic:rep:@hourly:1900003600\",\"t\":1900003600,\"args\":null," \
    "\"d\":1900007200}"
static void removed_spec(const char *ns)
{
    cmd("ZADD %s:scheduled 1900003600 %s", ns, HOURLY);
}
static void removed_spec_moved(const char *ns)
{
    cmd("ZADD %s:cwork:quarantine:scheduled 1900003600 %s", ns, HOURLY);
}

static void known_jobs_string(const char *ns)
{
    cmd("DEL %s:known_jobs", ns);
    cmd("SET %s:known_jobs str", ns);
}
static void known_jobs_moved(const char *ns)
{
    /* the queue that was there gets its name back; the others return as pools run */
    cmd("DEL %s:known_jobs", ns);
    cmd("SET %s:cwork:quarantine:key:known_jobs str", ns);
    cmd("SADD %s:known_jobs mail", ns);
}

static void dead_hash(const char *ns)
{
    cmd("DEL %s:dead", ns);
    cmd("HSET %s:dead %s x", ns, "{\"name\":\"mail\",\"id\":\"h1\",\"t\":1,\"args\":null}");
}
static void dead_hash_moved(const char *ns)
{
    cmd("DEL %s:dead", ns);
    cmd("HSET %s:cwork:quarantine:key:dead %s x", ns,
        "{\"name\":\"mail\",\"id\":\"h1\",\"t\":1,\"args\":null}");
}

/* Two records of superseded by-key entries (as reaper_requeue.lua writes them, newest
 * first), and where the repair files them: a record is no job (the guard's job ran),
 * but it is kept. */
#define SUPERSEDED_OLD                                                                             \
    "{\"at\":1900000000,\"pool\":\"" DEAD_POOL "\",\"key\":\"k\",\"id\":\"s1\",\"job\":\"{}\"}"
#define SUPERSEDED_NEW                                                                             \
    "{\"at\":1900000100,\"pool\":\"" DEAD_POOL "\",\"key\":\"k\",\"id\":\"s2\",\"job\":\"{}\"}"
static void superseded_records(const char *ns)
{
    cmd("RPUSH %s:cwork:superseded %s %s", ns, SUPERSEDED_NEW, SUPERSEDED_OLD);
}
static void superseded_filed(const char *ns)
{
    cmd("RPUSH %s:cwork:quarantine:superseded %s %s", ns, SUPERSEDED_NEW, SUPERSEDED_OLD);
}

static void each_damage_found_repaired_and_clean_after(void)
{
    static const damage_case cases[] = {
        {"a queue holding a string", CWORK_DOCTOR_WRONG_TYPE, "jobs:x", queue_string,
         queue_string_moved, 1},
        {"dead as a hash", CWORK_DOCTOR_WRONG_TYPE, "dead", dead_hash, dead_hash_moved, 1},
        {"a failure history holding a string", CWORK_DOCTOR_WRONG_TYPE, "cwork:failures:d1",
         failures_string, failures_string_moved, 1},
        {"known_jobs as a string", CWORK_DOCTOR_WRONG_TYPE, "known_jobs", known_jobs_string,
         known_jobs_moved, 2},
        {"a lock of 3 with no lock_info", CWORK_DOCTOR_LOCK, "jobs:mail:lock", lock_without_info,
         lock_zeroed, 1},
        {"an in-progress list of a pool with no heartbeat", CWORK_DOCTOR_ORPHAN,
         "jobs:good:" DEAD_POOL ":inprogress", orphan, orphan_requeued, 1},
        {"a guard with no job", CWORK_DOCTOR_GUARD, "unique:mail:{\"to\":\"gone\"}\n", stale_guard,
         nothing, 1},
        {"a dead member that is no JSON", CWORK_DOCTOR_UNDECODABLE, "dead", dead_notjson,
         dead_notjson_moved, 1},
        {"a queue missing from known_jobs", CWORK_DOCTOR_UNKNOWN_NAME, "jobs:stray", stray_name,
         stray_known, 1},
        {"a heartbeat from the future", CWORK_DOCTOR_FUTURE_HEARTBEAT, "worker_pools:" LIVE,
         future_beat, beat_as_repaired, 1},
        {"a rate limit that does not parse", CWORK_DOCTOR_RATE_LIMIT, "cwork:rate_limits",
         bad_limit, bad_limit_moved, 1},
        {"a batch counting more than it holds", CWORK_DOCTOR_BATCH, "cwork:batch:" BATCH,
         batch_overcounted, nothing, 1},
        {"an instance of a removed periodic spec", CWORK_DOCTOR_REMOVED_PERIODIC, "scheduled",
         removed_spec, removed_spec_moved, 1},
        {"records of superseded by-key entries", CWORK_DOCTOR_SUPERSEDED, "cwork:superseded",
         superseded_records, superseded_filed, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* the repaired heartbeat is Redis' now: the healthy one is written with it too */
        redisReply *t = tl_cmd(rc_, "TIME");
        now_s_ = atoll(t->element[0]->str);
        freeReplyObject(t);
        if (cases[i].damage == future_beat) {
            /* the repair writes Redis' clock: check it, then compare with it */
            cwork_client *cl = fresh("doc");
            healthy(ns_);
            future_beat(ns_);
            size_t n = 0;
            cwork_doctor_finding *f = doctor(cl, CWORK_DOCTOR_REPAIR, &n);
            CHECK_INT(n, 1);
            if (n) CHECK_INT(f[0].kind, CWORK_DOCTOR_FUTURE_HEARTBEAT);
            cwork_doctor_findings_free(f, n);
            redisReply *r = tl_cmd(rc_, "HGET %s:worker_pools:%s heartbeat_at", ns_, LIVE);
            long long at = atoll(r->str);
            freeReplyObject(r);
            CHECK(at >= now_s_ && at <= now_s_ + 60);
            done(cl);
        }
        run_case(&cases[i]);
    }
}

static void clean_namespace_is_clean_and_unchanged(void)
{
    cwork_client *cl = fresh("doc");
    redisReply *t = tl_cmd(rc_, "TIME");
    now_s_ = atoll(t->element[0]->str);
    freeReplyObject(t);
    healthy(ns_);
    long long t0 = tl_now_ms();
    char *before = dump_now();
    size_t n = 7;
    cwork_doctor_finding *f = doctor(cl, CWORK_DOCTOR_REPAIR, &n);
    CHECK_INT(n, 0);
    CHECK(f == NULL);
    CHECK_UNCHANGED(before, t0);
    free(before);
    cwork_error err = {0};
    CHECK_INT(cwork_client_doctor(cl, 0, NULL, &n, &err), CWORK_EINVAL);
    CHECK_STR(cwork_doctor_kind_name((cwork_doctor_kind)99), "unknown");
    done(cl);
}

/* A finding repaired later (the web UI's button): 0 when it no longer holds. */
/* An upstream Go pool's by-key placeholder (PROTOCOL §4.5): the entry stays in the Go
 * pool's in-progress list after the pool released its slot. Not a lock finding; a
 * lock_info field below the pool's other entries still is, and is repaired to them. */
#define GO_POOL "cccccccccccccccccccccccc"
#define PLACEHOLDER                                                                                \
    "{\"name\":\"good\",\"id\":\"p1\",\"t\":1700000000,\"args\":{\"v\":1},"                        \
    "\"unique\":true,\"unique_key\":\"k\"}"
static void an_upstream_placeholder_is_no_lock_finding(void)
{
    cwork_client *cl = fresh("doc");
    redisReply *t = tl_cmd(rc_, "TIME");
    now_s_ = atoll(t->element[0]->str);
    freeReplyObject(t);
    healthy(ns_);
    cmd("SADD %s:worker_pools %s", ns_, GO_POOL);
    cmd("HSET %s:worker_pools:%s heartbeat_at %lld started_at %lld job_names good "
        "concurrency 1 worker_ids w host h pid 2",
        ns_, GO_POOL, now_s_, now_s_);
    cmd("LPUSH %s:jobs:good:%s:inprogress %s", ns_, GO_POOL, PLACEHOLDER);
    cmd("HSET %s:jobs:good:lock_info %s 0", ns_, GO_POOL);
    size_t n = 7;
    cwork_doctor_finding *f = doctor(cl, 0, &n);
    if (n) tl_fail(__FILE__, __LINE__, "%s: %s", f[0].key, f[0].problem);
    cwork_doctor_findings_free(f, n);
    /* the cwork pool's field below its one running job: found, repaired to 1 */
    cmd("HSET %s:jobs:good:lock_info %s 0", ns_, LIVE);
    f = doctor(cl, CWORK_DOCTOR_REPAIR, &n);
    CHECK_INT(n, 1);
    if (n) CHECK_INT(f[0].kind, CWORK_DOCTOR_LOCK);
    cwork_doctor_findings_free(f, n);
    redisReply *r = tl_cmd(rc_, "HGET %s:jobs:good:lock_info %s", ns_, LIVE);
    CHECK_STR(r->str, "1");
    freeReplyObject(r);
    r = tl_cmd(rc_, "GET %s:jobs:good:lock", ns_);
    CHECK_STR(r->str, "1");
    freeReplyObject(r);
    f = doctor(cl, 0, &n);
    CHECK_INT(n, 0);
    cwork_doctor_findings_free(f, n);
    done(cl);
}

static void a_finding_repaired_alone_and_twice(void)
{
    cwork_client *cl = fresh("doc");
    cmd("ZADD %s:retry 7 {bad", ns_);
    size_t n = 0;
    cwork_doctor_finding *f = doctor(cl, 0, &n);
    CHECK_INT(n, 1);
    cwork_error err = {0};
    CHECK_INT(cwork_client_doctor_repair(cl, &f[0], &err), 1);
    CHECK(f[0].repaired);
    CHECK_INT(cwork_client_doctor_repair(cl, &f[0], &err), 0);
    cwork_doctor_findings_free(f, n);
    CHECK_DUMP("NS:cwork:quarantine:retry zset {bad=7\n");
    /* a quarantine key in the way: the repair writes nothing and says why */
    cmd("ZADD %s:retry 8 {bad2", ns_);
    cmd("SET %s:cwork:quarantine:retry x", ns_);
    f = doctor(cl, CWORK_DOCTOR_REPAIR, &n);
    CHECK_INT(n, 1);
    if (n) {
        CHECK(!f[0].repaired);
        CHECK(f[0].repair_error &&
              strstr(f[0].repair_error, "cwork:quarantine:retry has another type"));
    }
    cwork_doctor_findings_free(f, n);
    CHECK_DUMP("NS:cwork:quarantine:retry string x\nNS:retry zset {bad2=8\n");
    done(cl);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    if (!redis_) return 1;
    RUN(clean_namespace_is_clean_and_unchanged);
    RUN(each_damage_found_repaired_and_clean_after);
    RUN(a_finding_repaired_alone_and_twice);
    RUN(an_upstream_placeholder_is_no_lock_finding);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
