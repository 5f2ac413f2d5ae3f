/* The rest of the admin client's views of a sharded namespace (PROTOCOL §27) against a
 * real Redis: the search and a queue's waiting jobs paged as one list, kept successes
 * merged newest first, periodic schedules folded, a result and a batch found in the
 * shard that holds them, the dead set trimmed and the doctor run in every shard, and a
 * finding repaired in its own shard. Three shards are built by hand (the record, and
 * Go's JSON written straight into each shard's keys); every shard is dumped after a
 * change. Shard i's own client (cwork_client_shard) sees that shard alone. */
#include "client_testutil.h"
#include "sharding.h"

#define SHARDS 3

static char shard_ns_[SHARDS][80];

static cwork_client *sharded(const char *tag)
{
    cwork_client *cl = fresh(tag);
    for (unsigned i = 0; i < SHARDS; i++)
        CHECK_INT(cw_sharding_ns(ns_, i, shard_ns_[i], sizeof shard_ns_[i], NULL), 0);
    cmd("HSET %s:cwork:shards count %d hash fnv1a64-jump created 1700000000", ns_, SHARDS);
    return cl;
}

static void done_sharded(cwork_client *cl)
{
    for (unsigned i = 1; i < SHARDS; i++)
        tl_ns_delete(rc_, shard_ns_[i]);
    done(cl);
}

/* An id (of the form "<tag><n>") whose own shard is home. */
static const char *id_for(const char *tag, unsigned home, char *buf, size_t size)
{
    for (int n = 0;; n++) {
        snprintf(buf, size, "%s%d", tag, n);
        if (cw_sharding_of(buf, strlen(buf), SHARDS) == home) return buf;
    }
}

static long long ival(redisReply *r)
{
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    freeReplyObject(r);
    return v;
}

static char job_[8][200];

/* Go's JSON of a job with args {"w":word}. */
static const char *job(int slot, const char *name, const char *id, long long t, const char *word)
{
    snprintf(job_[slot], sizeof job_[slot],
             "{\"name\":\"%s\",\"id\":\"%s\",\"t\":%lld,\"args\":{\"w\":\"%s\"}}", name, id, t,
             word);
    return job_[slot];
}

static void check_shard_dump_at(int line, unsigned i, const char *want)
{
    char *got = tl_ns_dump(rc_, shard_ns_[i]);
    if (strcmp(got, want) != 0)
        tl_fail(__FILE__, line, "shard %u dump\n   got:\n%s  want:\n%s", i, got, want);
    free(got);
}
#define CHECK_SHARD(i, want) check_shard_dump_at(__LINE__, i, want)

/* The ids of listed jobs, e.g. "x1 x2". */
static void ids_of(const cwork_listed_job *jobs, size_t n, char *out, size_t size)
{
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? " " : "",
                 jobs[i].job ? cwork_job_id(jobs[i].job) : "?");
}

/* ---------------------------------------------------------------- search */

static void check_search_at(int line, cwork_client *cl, unsigned page, unsigned size,
                            const char *want, long long want_matches)
{
    cwork_search_query q = {"HIT", page, size, 0};
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    cwork_search_info info = {0, 0, 0, false};
    cwork_error err = {0};
    if (cwork_client_search(cl, CWORK_SET_RETRY, &q, &jobs, &n, &info, &err) != 0) {
        tl_fail(__FILE__, line, "search: %s", err.message);
        return;
    }
    char got[256];
    ids_of(jobs, n, got, sizeof got);
    if (strcmp(got, want) != 0 || info.matches != want_matches)
        tl_fail(__FILE__, line, "page %u of %u: got \"%s\" of %lld, want \"%s\" of %lld", page,
                size, got, (long long)info.matches, want, want_matches);
    cwork_listed_jobs_free(jobs, n);
}
#define CHECK_SEARCH(cl, page, size, want, matches)                                                \
    check_search_at(__LINE__, cl, page, size, want, matches)

/* Retry jobs r1..r9 at scores 10..90 spread over the shards; r1, r2, r4, r5, r7, r8 hold
 * "hit" in their args, the others "miss". Newest first the hits are r8 r7 r5 r4 r2 r1. */
static void search_is_merged_newest_first_with_pages(void)
{
    cwork_client *cl = sharded("ss");
    for (int k = 1; k <= 9; k++) {
        char id[8];
        snprintf(id, sizeof id, "r%d", k);
        cmd("ZADD %s:retry %d %s", shard_ns_[(k - 1) % 3], k * 10,
            job(0, "a", id, 1, k % 3 ? "a hit" : "a miss"));
    }
    char *before = tl_ns_dump(rc_, shard_ns_[1]);
    CHECK_SEARCH(cl, 1, 0, "r8 r7 r5 r4 r2 r1", 6);
    CHECK_SEARCH(cl, 1, 4, "r8 r7 r5 r4", 6);
    CHECK_SEARCH(cl, 2, 4, "r2 r1", 6);
    CHECK_SEARCH(cl, 3, 4, "", 6);
    cwork_search_query q = {"hit", 1, 2, 0};
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    cwork_search_info info = {0, 0, 0, false};
    CHECK_INT(cwork_client_search(cl, CWORK_SET_RETRY, &q, &jobs, &n, &info, NULL), 0);
    CHECK_INT(info.total, 9);
    CHECK_INT(info.scanned, 9);
    CHECK(!info.bounded);
    cwork_listed_jobs_free(jobs, n);
    /* a bound of 2 per shard: each shard's newest two */
    q.max_scan = 2;
    CHECK_INT(cwork_client_search(cl, CWORK_SET_RETRY, &q, &jobs, &n, &info, NULL), 0);
    CHECK_INT(info.scanned, 6);
    CHECK_INT(info.matches, 4); /* r7 r4 of shard 0, r8 r5 of shard 1, none of shard 2 */
    CHECK(info.bounded);
    cwork_listed_jobs_free(jobs, n);
    /* shard 1 alone */
    cwork_client *one = cwork_client_shard(cl, 1, NULL);
    CHECK_SEARCH(one, 1, 0, "r8 r5 r2", 3);
    CHECK_SHARD(1, before);
    free(before);
    done_sharded(cl);
}

/* ---------------------------------------------------------------- a queue's jobs */

static void check_queue_at(int line, cwork_client *cl, unsigned page, unsigned size,
                           const char *want, long long want_total)
{
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    int64_t total = -1;
    cwork_error err = {0};
    if (cwork_client_queue_jobs(cl, "a", page, size, &jobs, &n, &total, &err) != 0) {
        tl_fail(__FILE__, line, "queue jobs: %s", err.message);
        return;
    }
    char got[256];
    ids_of(jobs, n, got, sizeof got);
    if (strcmp(got, want) != 0 || total != want_total)
        tl_fail(__FILE__, line, "page %u of %u: got \"%s\" of %lld, want \"%s\" of %lld", page,
                size, got, (long long)total, want, want_total);
    cwork_listed_jobs_free(jobs, n);
}
#define CHECK_QUEUE(cl, page, size, want, total)                                                   \
    check_queue_at(__LINE__, cl, page, size, want, total)

/* Shard 0's queue: q1 (t 100) then q2 (110) next to run; shard 1: q3 (50); shard 2: q4
 * (105), q5 (120). Merged by enqueue time: q3 q1 q4 q2 q5. Deleting listed jobs finds
 * each in its shard. */
static void a_queue_is_one_list_and_its_jobs_are_deleted_where_they_wait(void)
{
    cwork_client *cl = sharded("sw");
    char q4[16];
    id_for("q4x", 0, q4, sizeof q4); /* kept in shard 2, not its id's shard */
    cmd("LPUSH %s:jobs:a %s %s", shard_ns_[0], job(0, "a", "q1", 100, "x"),
        job(1, "a", "q2", 110, "x"));
    cmd("LPUSH %s:jobs:a %s", shard_ns_[1], job(0, "a", "q3", 50, "x"));
    cmd("LPUSH %s:jobs:a %s %s", shard_ns_[2], job(0, "a", q4, 105, "x"),
        job(1, "a", "q5", 120, "x"));
    char want[64];
    snprintf(want, sizeof want, "q3 q1 %s q2 q5", q4);
    CHECK_QUEUE(cl, 1, 0, want, 5);
    snprintf(want, sizeof want, "%s q2", q4);
    CHECK_QUEUE(cl, 2, 2, want, 5);
    CHECK_QUEUE(cl, 3, 2, "q5", 5);
    CHECK_QUEUE(cl, 4, 2, "", 5);
    snprintf(want, sizeof want, "%s q5", q4);
    CHECK_QUEUE(cwork_client_shard(cl, 2, NULL), 1, 0, want, 2);
    /* delete q4 (shard 2) and q3 (shard 1) as listed on the merged page; "gone" is none */
    cwork_waiting_ref refs[] = {{q4, 2}, {"q3", 0}, {"gone", 1}};
    size_t deleted = 0, unchanged = 0;
    cwork_error err = {0};
    CHECK_INT(cwork_client_delete_waiting(cl, "a", refs, 3, &deleted, &unchanged, &err),
              CWORK_ENOTFOUND);
    CHECK_INT(deleted, 2);
    CHECK_INT(unchanged, 1);
    CHECK(strstr(err.message, "gone") != NULL);
    CHECK_SHARD(1, "");
    snprintf(want_, sizeof want_, "%s:jobs:a list %s\n", shard_ns_[2], job(0, "a", "q5", 120, "x"));
    CHECK_SHARD(2, want_);
    snprintf(want_, sizeof want_,
             "%s:cwork:shards hash count=3 | created=1700000000 | hash=fnv1a64-jump\n"
             "%s:jobs:a list %s | %s\n",
             ns_, ns_, job(0, "a", "q2", 110, "x"), job(1, "a", "q1", 100, "x"));
    CHECK_SHARD(0, want_);
    done_sharded(cl);
}

/* A shard's chunk may list fewer jobs than it covers (an entry that is no job is
 * skipped): the merge reads on until the shard's total, so nothing after it is lost.
 * Shard 0's queue, next to run first: an entry that is no JSON, q1 (t 10), q2 (20), q4
 * (30), q5 (35); shard 1: q3 (100). */
static void entries_that_are_no_jobs_do_not_end_a_shard(void)
{
    cwork_client *cl = sharded("sn");
    cmd("LPUSH %s:jobs:a %s %s %s %s %s", shard_ns_[0], "{notjson", job(0, "a", "q1", 10, "x"),
        job(1, "a", "q2", 20, "x"), job(2, "a", "q4", 30, "x"), job(3, "a", "q5", 35, "x"));
    cmd("LPUSH %s:jobs:a %s", shard_ns_[1], job(0, "a", "q3", 100, "x"));
    CHECK_QUEUE(cl, 1, 4, "q1 q2 q4 q5", 6);
    CHECK_QUEUE(cl, 2, 4, "q3", 6);
    done_sharded(cl);
}

/* ---------------------------------------------------------------- succeeded, results */

static void kept_successes_merge_newest_first(void)
{
    cwork_client *cl = sharded("sk");
    static const int ms[SHARDS][2] = {{5000, 2000}, {4000, 0}, {6000, 1000}};
    for (unsigned i = 0; i < SHARDS; i++) {
        cmd("SADD %s:known_jobs a", shard_ns_[i]);
        for (int k = 0; k < 2 && ms[i][k]; k++) {
            char id[16], member[300];
            snprintf(id, sizeof id, "s%d", ms[i][k] / 1000);
            snprintf(member, sizeof member, "{\"ran_at\":%d,\"took_us\":7,\"job\":%s}",
                     ms[i][k] - 10, job(0, "a", id, 1, "x"));
            cmd("ZADD %s:cwork:succeeded:a %d %s", shard_ns_[i], ms[i][k], member);
        }
    }
    cmd("SET %s:cwork:result:s4 forty", shard_ns_[1]);
    cwork_succeeded_job *jobs = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_succeeded(cl, NULL, 4, &jobs, &n, NULL), 0);
    char got[128] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", jobs[i].id);
    CHECK_STR(got, "s6 s5 s4 s2");
    CHECK_STR(n >= 3 && jobs[2].result ? jobs[2].result : "", "forty");
    cwork_succeeded_jobs_free(jobs, n);
    CHECK_INT(cwork_client_succeeded(cwork_client_shard(cl, 2, NULL), "a", 0, &jobs, &n, NULL), 0);
    CHECK_INT(n, 2);
    cwork_succeeded_jobs_free(jobs, n);
    /* a result is found in the shard that holds it, whichever the id's shard is */
    char *out = NULL;
    size_t len = 0;
    CHECK_INT(cwork_client_result(cl, "s4", 0, &out, &len, NULL), 0);
    CHECK_STR(out ? out : "", "forty");
    cwork_free(out);
    cwork_error err = {0};
    CHECK_INT(cwork_client_result(cl, "s5", 0, &out, &len, &err), CWORK_ENOTFOUND);
    done_sharded(cl);
}

static void a_batch_is_found_in_its_shard(void)
{
    cwork_client *cl = sharded("sb");
    const char *id = "00112233445566778899aabb";
    unsigned home = cw_sharding_of(id, strlen(id), SHARDS);
    cmd("HSET %s:cwork:batch:%s id %s total 3 succeeded 1 dead 0 retrying 1 sealed 1 when "
        "complete callback waiting created_at 1700000000",
        shard_ns_[home], id, id);
    cwork_batch_info bi;
    CHECK_INT(cwork_client_batch(cl, id, &bi, NULL), 0);
    CHECK_INT(bi.total, 3);
    CHECK_INT(bi.succeeded, 1);
    cwork_error err = {0};
    CHECK_INT(cwork_client_batch(cl, "ffffffffffffffffffffffff", &bi, &err), CWORK_ENOTFOUND);
    CHECK(strstr(err.message, "ffffffffffffffffffffffff") != NULL);
    CHECK_INT(cwork_client_batch(cwork_client_shard(cl, (home + 1) % SHARDS, NULL), id, &bi, &err),
              CWORK_ENOTFOUND);
    done_sharded(cl);
}

/* ---------------------------------------------------------------- periodic */

static void periodic_schedules_fold_over_the_shards(void)
{
    cwork_client *cl = sharded("sp");
    long long now = now_();
    /* a pool publishes its schedules in every shard it serves */
    for (unsigned i = 0; i < SHARDS; i++)
        cmd("HSET %s:cwork:periodic [\"rep\",\"@hourly\"] {\"next_at\":%lld,\"seen_at\":%lld}",
            shard_ns_[i], now + 3600 - i, now - i);
    cmd("HSET %s:cwork:periodic [\"night\",\"@daily\"] {\"next_at\":%lld,\"seen_at\":%lld}",
        shard_ns_[2], now + 7200, now);
    cwork_periodic_schedule *s = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_periodic_schedules(cl, &s, &n, NULL), 0);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_STR(s[0].job_name, "rep");
        CHECK_INT(s[0].next_at, now + 3600 - 2);
        CHECK_INT(s[0].seen_at, now);
        CHECK_STR(s[1].job_name, "night");
    }
    cwork_periodic_schedules_free(s, n);
    CHECK_INT(cwork_client_periodic_schedules(cwork_client_shard(cl, 1, NULL), &s, &n, NULL), 0);
    CHECK_INT(n, 1);
    cwork_periodic_schedules_free(s, n);
    done_sharded(cl);
}

/* ---------------------------------------------------------------- rate limits */

/* A limit is set in every shard; whether a type is held back now is read in the shard of
 * its name, where a limited type runs: a state left in another shard does not count. */
static void rate_limits_read_each_type_in_its_shard(void)
{
    cwork_client *cl = sharded("sl");
    CHECK_INT(cwork_client_set_rate_limit(cl, "a", 1, 3600000, NULL), 0);
    CHECK_INT(cwork_client_set_rate_limit(cl, "b", 1, 3600000, NULL), 0);
    for (unsigned i = 0; i < SHARDS; i++)
        CHECK_INT(ival(tl_cmd(rc_, "HLEN %s:cwork:rate_limits", shard_ns_[i])), 2);
    unsigned home_a = cw_sharding_of("a", 1, SHARDS), home_b = cw_sharding_of("b", 1, SHARDS);
    redisReply *t = tl_cmd(rc_, "TIME");
    long long until = atoll(t->element[0]->str) * 1000000 + 3600000000LL;
    freeReplyObject(t);
    cmd("SET %s:cwork:rate_limit:a %lld", shard_ns_[home_a], until);
    cmd("SET %s:cwork:rate_limit:b %lld", shard_ns_[(home_b + 1) % SHARDS], until);
    cwork_rate_limit_info *l = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_rate_limits(cl, &l, &n, NULL), 0);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_STR(l[0].job_name, "a");
        CHECK(l[0].limited_now);
        CHECK_STR(l[1].job_name, "b");
        CHECK(!l[1].limited_now);
        CHECK_STR(l[1].text, "1/1h");
    }
    cwork_rate_limit_infos_free(l, n);
    done_sharded(cl);
}

/* ---------------------------------------------------------------- every shard */

static void trim_runs_in_every_shard(void)
{
    cwork_client *cl = sharded("st");
    for (unsigned i = 0; i < SHARDS; i++)
        for (int k = 0; k < 3; k++) {
            char id[16];
            snprintf(id, sizeof id, "t%u%d", i, k);
            cmd("ZADD %s:dead %d %s", shard_ns_[i], 100 * (k + 1), job(0, "a", id, 1, "x"));
        }
    int64_t removed = 0;
    /* died before 150 (one per shard), then all but the newest 1 of each shard */
    CHECK_INT(cwork_client_trim_dead(cl, 150, 1, &removed, NULL), 0);
    CHECK_INT(removed, 6);
    for (unsigned i = 1; i < SHARDS; i++) {
        char id[16];
        snprintf(id, sizeof id, "t%u2", i);
        snprintf(want_, sizeof want_, "%s:dead zset %s=300\n", shard_ns_[i],
                 job(0, "a", id, 1, "x"));
        CHECK_SHARD(i, want_);
    }
    /* one shard alone */
    CHECK_INT(cwork_client_trim_dead(cwork_client_shard(cl, 1, NULL), 0, 0, &removed, NULL), 0);
    CHECK_INT(removed, 1);
    CHECK_SHARD(1, "");
    CHECK_INT(ival(tl_cmd(rc_, "ZCARD %s:dead", shard_ns_[2])), 1);
    done_sharded(cl);
}

static void the_doctor_checks_and_repairs_every_shard(void)
{
    cwork_client *cl = sharded("sr");
    cmd("SET %s:known_jobs x", shard_ns_[1]); /* a string where a set belongs */
    cmd("SADD %s:known_jobs a", shard_ns_[2]);
    cmd("LPUSH %s:jobs:b %s", shard_ns_[2], job(0, "b", "d1", 1, "x")); /* b is not known */
    cwork_doctor_finding *f = NULL;
    size_t n = 0;
    CHECK_INT(cwork_client_doctor(cl, 0, &f, &n, NULL), 0);
    CHECK_INT(n, 2);
    char k1[128], k2[128];
    snprintf(k1, sizeof k1, "%s:known_jobs", shard_ns_[1]);
    snprintf(k2, sizeof k2, "%s:jobs:b", shard_ns_[2]);
    size_t at2 = n;
    for (size_t i = 0; i < n; i++) {
        if (f[i].kind == CWORK_DOCTOR_WRONG_TYPE) CHECK_STR(f[i].key, k1);
        if (f[i].kind == CWORK_DOCTOR_UNKNOWN_NAME) {
            CHECK_STR(f[i].key, k2);
            at2 = i;
        }
    }
    CHECK(at2 < n);
    if (at2 < n) CHECK_INT(cwork_client_doctor_repair(cl, &f[at2], NULL), 1);
    cwork_doctor_findings_free(f, n);
    CHECK_INT(ival(tl_cmd(rc_, "SISMEMBER %s:known_jobs b", shard_ns_[2])), 1);
    /* shard 1 alone has one finding left; a finding of no shard is refused */
    CHECK_INT(cwork_client_doctor(cwork_client_shard(cl, 1, NULL), 0, &f, &n, NULL), 0);
    CHECK_INT(n, 1);
    cwork_doctor_findings_free(f, n);
    CHECK_INT(cwork_client_doctor(cl, 0, &f, &n, NULL), 0);
    CHECK_INT(n, 1);
    if (n == 1) {
        free(f[0].key);
        f[0].key = strdup("elsewhere:known_jobs");
        cwork_error err = {0};
        CHECK_INT(cwork_client_doctor_repair(cl, &f[0], &err), CWORK_EINVAL);
        CHECK(strstr(err.message, "elsewhere:known_jobs") != NULL);
    }
    cwork_doctor_findings_free(f, n);
    done_sharded(cl);
}

/* A damaged record fails the merged views, but the doctor still runs on the namespace
 * as given (a record of another type is its finding). */
static void the_doctor_runs_on_a_damaged_record(void)
{
    cwork_client *cl = fresh("sy");
    cmd("HSET %s:cwork:shards count many", ns_);
    cwork_doctor_finding *f = NULL;
    size_t n = 0;
    cwork_error err = {0};
    cwork_queue_info *q = NULL;
    size_t nq = 0;
    CHECK_INT(cwork_client_queues(cl, &q, &nq, &err), CWORK_EINVAL);
    CHECK_INT(cwork_client_doctor(cl, 0, &f, &n, &err), 0);
    CHECK_INT(n, 0);
    cwork_doctor_findings_free(f, n);
    cmd("DEL %s:cwork:shards", ns_);
    cmd("SET %s:cwork:shards 3", ns_);
    CHECK_INT(cwork_client_doctor(cl, 0, &f, &n, &err), 0);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_INT(f[0].kind, CWORK_DOCTOR_WRONG_TYPE);
        CHECK(strstr(f[0].key, ":cwork:shards") != NULL);
    }
    cwork_doctor_findings_free(f, n);
    done(cl);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    if (!redis_) return 1;
    RUN(search_is_merged_newest_first_with_pages);
    RUN(a_queue_is_one_list_and_its_jobs_are_deleted_where_they_wait);
    RUN(entries_that_are_no_jobs_do_not_end_a_shard);
    RUN(kept_successes_merge_newest_first);
    RUN(a_batch_is_found_in_its_shard);
    RUN(periodic_schedules_fold_over_the_shards);
    RUN(rate_limits_read_each_type_in_its_shard);
    RUN(trim_runs_in_every_shard);
    RUN(the_doctor_checks_and_repairs_every_shard);
    RUN(the_doctor_runs_on_a_damaged_record);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
