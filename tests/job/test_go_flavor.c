/* The Go-flavour setting on the writing side (README "Go flavours"): under upstream,
 * enqueues write gocraft/work v0.5's bytes (upstream_testutil.h) and its guard rules;
 * under the fork, today's bytes; ByKey in both; the duplicate check and the client's
 * guard deletion see both escape spellings and unique_key; JSON bodies follow the
 * client's flavour. Every case checks the whole namespace. */
#include "flavor_testutil.h"

#include "cwork.h"
#include "cwork_web.h"

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];

#define CHECK_DUMP(...) check_ns_dump(rc_, ns_, __FILE__, __LINE__, __VA_ARGS__)

static cwork_enqueuer *enqueuer(const char *tag, cwork_go_flavor flavor)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, NULL);
    CHECK(enq != NULL);
    CHECK_INT(cwork_enqueuer_set_go_flavor(enq, flavor), 0);
    return enq;
}

static cwork_args *args_of(const char *json)
{
    cwork_args *a = NULL;
    CHECK_INT(cwork_args_parse(json, strlen(json), &a, NULL), 0);
    return a;
}

static long long ttl(const char *key)
{
    redisReply *r = tl_cmd(rc_, "TTL %b", key, strlen(key));
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

static void set_ttl(const char *key, int seconds)
{
    tl_do(rc_, "EXPIRE %b %d", key, strlen(key), seconds);
}

/* ---------------------------------------------------------------- the setting */

static void flavours_parse_and_unknown_values_are_refused(void)
{
    cwork_go_flavor f = CWORK_GO_UPSTREAM;
    CHECK_INT(cwork_go_flavor_parse("fork", &f, NULL), 0);
    CHECK_INT(f, CWORK_GO_FORK);
    CHECK_INT(cwork_go_flavor_parse("upstream", &f, NULL), 0);
    CHECK_INT(f, CWORK_GO_UPSTREAM);
    cwork_error err = {0};
    const char *bad[] = {"", "Fork", "UPSTREAM", "upstream ", "v0.5", NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f = (cwork_go_flavor)7;
        CHECK_INT(cwork_go_flavor_parse(bad[i], &f, &err), CWORK_EINVAL);
        CHECK_INT(f, 7); /* untouched */
    }
    CHECK(strstr(err.message, "fork or upstream") != NULL);
    CHECK_STR(cwork_go_flavor_name(CWORK_GO_FORK), "fork");
    CHECK_STR(cwork_go_flavor_name(CWORK_GO_UPSTREAM), "upstream");
    CHECK_STR(cwork_go_flavor_name((cwork_go_flavor)9), "unknown");

    /* Every place the setting goes refuses a value outside the enum and changes nothing. */
    cwork_enqueuer *enq = enqueuer("fl", CWORK_GO_FORK);
    CHECK_INT(cwork_enqueuer_set_go_flavor(enq, (cwork_go_flavor)2), CWORK_EINVAL);
    CHECK_INT(cwork_enqueuer_set_go_flavor(NULL, CWORK_GO_FORK), CWORK_EINVAL);
    cwork_client *cl = cwork_client_new(redis_, ns_, NULL);
    CHECK_INT(cwork_client_set_go_flavor(cl, (cwork_go_flavor)-1), CWORK_EINVAL);
    CHECK_INT(cwork_client_set_go_flavor(NULL, CWORK_GO_FORK), CWORK_EINVAL);
    cwork_pool_options po;
    cwork_pool_options_init(&po);
    CHECK_INT(po.go_flavor, CWORK_GO_FORK); /* the default */
    po.go_flavor = (cwork_go_flavor)3;
    CHECK(cwork_pool_new(redis_, ns_, &po, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    cwork_web_options wo;
    cwork_web_options_init(&wo);
    CHECK_INT(wo.go_flavor, CWORK_GO_FORK);
    wo.listen = "127.0.0.1:0";
    wo.go_flavor = (cwork_go_flavor)3;
    CHECK(cwork_web_start(redis_, ns_, &wo, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    /* The enqueuer still writes the fork's bytes. */
    cwork_args *a = args_of("{\"object_id_\":\"123\"}");
    cwork_job *job = NULL;
    CHECK_INT(cwork_enqueue_unique(enq, "clear_cache", a, &job, NULL), CWORK_OK);
    CHECK_STR(cwork_job_unique_key(job), "");
    CHECK_DUMP("%s:jobs:clear_cache list {\"name\":\"clear_cache\",\"id\":\"%s\",\"t\":%lld,"
               "\"args\":{\"object_id_\":\"123\"},\"unique\":true}\n"
               "%s:known_jobs set clear_cache\n"
               "%s string ttl=86400 1\n",
               ns_, cwork_job_id(job), (long long)cwork_job_enqueued_at(job), ns_,
               dumped(fixture(UP_UNIQUE_GUARD, ns_, NULL, 0, NULL, 0)));
    cwork_job_free(job);
    cwork_args_free(a);
    cwork_client_free(cl);
    cwork_enqueuer_free(enq);
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- enqueue */

static void upstream_enqueues_write_upstream_bytes_and_rearm_the_guard(void)
{
    cwork_enqueuer *enq = enqueuer("upenq", CWORK_GO_UPSTREAM);
    cwork_args *email = args_of("{\"address\":\"test@example.com\",\"subject\":\"hello world\","
                                "\"customer_id\":4}");
    cwork_args *obj = args_of("{\"object_id_\":\"123\"}");
    cwork_job *plain = NULL, *unique = NULL, *dup = (cwork_job *)1;
    CHECK_INT(cwork_enqueue(enq, "send_email", email, &plain, NULL), CWORK_OK);
    CHECK_INT(cwork_enqueue_unique(enq, "clear_cache", obj, &unique, NULL), CWORK_OK);
    const char *guard = fixture(UP_UNIQUE_GUARD, ns_, NULL, 0, NULL, 0);
    CHECK_STR(cwork_job_unique_key(unique), guard);
    const char *want_unique =
        fixture(UP_UNIQUE, ns_, cwork_job_id(unique), cwork_job_enqueued_at(unique), NULL, 0);
    size_t raw_len;
    CHECK_STR(cwork_job_raw(unique, &raw_len), want_unique);
    char want[8192];
    snprintf(want, sizeof want,
             "%s:jobs:clear_cache list %s\n"
             "%s:jobs:send_email list %s\n"
             "%s:known_jobs set clear_cache | send_email\n"
             "%s string ttl=86400 1\n",
             ns_, dumped(want_unique), ns_,
             dumped(fixture(UP_ENQUEUE, ns_, cwork_job_id(plain), cwork_job_enqueued_at(plain),
                            NULL, 0)),
             ns_, dumped(guard));
    CHECK_DUMP("%s", want);

    /* A duplicate re-arms the guard's 24 h with "1", as upstream's script does. */
    set_ttl(guard, 100);
    CHECK_INT(cwork_enqueue_unique(enq, "clear_cache", obj, &dup, NULL), CWORK_DUPLICATE);
    CHECK(dup == NULL);
    CHECK_DUMP("%s", want);

    /* The fork leaves a duplicate's guard as it is. */
    CHECK_INT(cwork_enqueuer_set_go_flavor(enq, CWORK_GO_FORK), 0);
    set_ttl(guard, 100);
    CHECK_INT(cwork_enqueue_unique(enq, "clear_cache", obj, NULL, NULL), CWORK_DUPLICATE);
    CHECK(ttl(guard) <= 100 && ttl(guard) > 0);

    /* Delayed unique: the scheduled set, unique_key all the same. */
    CHECK_INT(cwork_enqueuer_set_go_flavor(enq, CWORK_GO_UPSTREAM), 0);
    tl_ns_delete(rc_, ns_);
    cwork_job *later = NULL;
    CHECK_INT(cwork_enqueue_unique_in(enq, "clear_cache", 60, obj, &later, NULL), CWORK_OK);
    /* (no known_jobs: the enqueuer's cache has the name for 300 s, as Go's) */
    CHECK_DUMP(
        "%s:scheduled zset %s=%lld\n"
        "%s string ttl=86400 1\n",
        ns_,
        dumped(fixture(UP_UNIQUE, ns_, cwork_job_id(later), cwork_job_enqueued_at(later), NULL, 0)),
        (long long)cwork_job_run_at(later), dumped(guard));
    cwork_job_free(later);
    cwork_job_free(plain);
    cwork_job_free(unique);
    cwork_args_free(email);
    cwork_args_free(obj);
    cwork_enqueuer_free(enq);
    tl_ns_delete(rc_, ns_);
}

/* ByKey: the first job waits as a placeholder, the guard holds the latest job; the same
 * bytes under both flavours (the fork has no ByKey of its own). */
static void bykey(cwork_go_flavor flavor)
{
    cwork_enqueuer *enq = enqueuer("bykey", flavor);
    cwork_args *first = args_of("{\"v\":\"first\"}"), *second = args_of("{\"v\":\"second\"}");
    cwork_args *key = args_of("{\"acct\":7}");
    cwork_job *a = NULL, *b = NULL;
    CHECK_INT(cwork_enqueue_unique_by_key(enq, "sync", first, key, &a, NULL), CWORK_OK);
    const char *guard = fixture(UP_BYKEY_GUARD, ns_, NULL, 0, NULL, 0);
    const char *placeholder =
        fixture(UP_BYKEY_PLACEHOLDER, ns_, cwork_job_id(a), cwork_job_enqueued_at(a), NULL, 0);
    CHECK_STR(cwork_job_raw(a, NULL), placeholder);
    CHECK_STR(cwork_job_unique_key(a), guard);
    CHECK_DUMP("%s:jobs:sync list %s\n"
               "%s:known_jobs set sync\n"
               "%s string ttl=86400 %s\n",
               ns_, dumped(placeholder), ns_, dumped(guard), dumped(placeholder));

    /* The duplicate: nothing queued, the guard takes the new job (and 24 h again), which
     * comes back as the job that will run. */
    set_ttl(guard, 100);
    CHECK_INT(cwork_enqueue_unique_by_key(enq, "sync", second, key, &b, NULL), CWORK_DUPLICATE);
    CHECK(b != NULL);
    if (b) {
        CHECK(strcmp(cwork_job_id(b), cwork_job_id(a)) != 0);
        const char *now_guard =
            fixture(UP_BYKEY_GUARD_JOB, ns_, NULL, 0, cwork_job_id(b), cwork_job_enqueued_at(b));
        /* the stand-in time of the second job is 1700000005 in the fixture */
        CHECK_STR(cwork_job_raw(b, NULL), now_guard);
        CHECK_DUMP("%s:jobs:sync list %s\n"
                   "%s:known_jobs set sync\n"
                   "%s string ttl=86400 %s\n",
                   ns_, dumped(placeholder), ns_, dumped(guard), dumped(now_guard));
    }
    /* key NULL: plain EnqueueUnique (unique_key only under upstream, guard "1"). */
    cwork_job *c = NULL;
    CHECK_INT(cwork_enqueue_unique_by_key(enq, "solo", first, NULL, &c, NULL), CWORK_OK);
    CHECK_STR(cwork_job_unique_key(c),
              flavor == CWORK_GO_UPSTREAM
                  ? fixture("%s:unique:solo:{\"v\":\"first\"}\n", ns_, NULL, 0, NULL, 0)
                  : "");
    char solo_guard[256];
    snprintf(solo_guard, sizeof solo_guard, "%s:unique:solo:{\"v\":\"first\"}\n", ns_);
    redisReply *r = tl_cmd(rc_, "GET %b", solo_guard, strlen(solo_guard));
    CHECK(r->type == REDIS_REPLY_STRING && strcmp(r->str, "1") == 0);
    freeReplyObject(r);
    cwork_job_free(a);
    cwork_job_free(b);
    cwork_job_free(c);
    tl_ns_delete(rc_, ns_);

    /* Delayed ByKey: the scheduled set. */
    CHECK_INT(cwork_enqueue_unique_in_by_key(enq, "sync", 30, first, key, &a, NULL), CWORK_OK);
    placeholder =
        fixture(UP_BYKEY_PLACEHOLDER, ns_, cwork_job_id(a), cwork_job_enqueued_at(a), NULL, 0);
    CHECK_DUMP("%s:scheduled zset %s=%lld\n" /* known_jobs: cached, see above */
               "%s string ttl=86400 %s\n",
               ns_, dumped(placeholder), (long long)cwork_job_run_at(a), dumped(guard),
               dumped(placeholder));
    cwork_job *d = NULL;
    CHECK_INT(cwork_enqueue_unique_in_by_key(enq, "sync", 30, second, key, &d, NULL),
              CWORK_DUPLICATE);
    /* A bad name is refused before anything is sent. */
    CHECK_INT(cwork_enqueue_unique_by_key(enq, "x:lock", first, key, NULL, NULL), CWORK_EINVAL);
    CHECK_DUMP("%s:scheduled zset %s=%lld\n"
               "%s string ttl=86400 %s\n",
               ns_, dumped(placeholder), (long long)cwork_job_run_at(a), dumped(guard),
               dumped(d ? cwork_job_raw(d, NULL) : "?"));
    CHECK(d && strstr(cwork_job_raw(d, NULL), "\"args\":{\"v\":\"second\"}") != NULL);
    cwork_job_free(a);
    cwork_job_free(d);
    cwork_args_free(first);
    cwork_args_free(second);
    cwork_args_free(key);
    cwork_enqueuer_free(enq);
    tl_ns_delete(rc_, ns_);
}

static void bykey_under_upstream(void)
{
    bykey(CWORK_GO_UPSTREAM);
}

static void bykey_under_fork(void)
{
    bykey(CWORK_GO_FORK);
}

/* A guard written by a Go older than 1.22 (\u0008) blocks cwork's enqueue (\b) too. */
static void duplicate_check_sees_both_escape_spellings(void)
{
    cwork_enqueuer *enq = enqueuer("spell", CWORK_GO_UPSTREAM);
    const char *old_guard = fixture(OLDGO_CTL_GUARD, ns_, NULL, 0, NULL, 0);
    const char *new_guard = fixture(NEWGO_CTL_GUARD, ns_, NULL, 0, NULL, 0);
    tl_do(rc_, "SET %b 1 EX 100", old_guard, strlen(old_guard));
    cwork_args *a = args_of("{\"s\":\"a\\bb\"}");
    CHECK_INT(cwork_enqueue_unique(enq, "ctl", a, NULL, NULL), CWORK_DUPLICATE);
    /* upstream re-arms the guard that exists; no second spelling appears */
    CHECK_DUMP("%s:known_jobs set ctl\n%s string ttl=86400 1\n", ns_, dumped(old_guard));
    CHECK_INT(cwork_enqueuer_set_go_flavor(enq, CWORK_GO_FORK), 0);
    set_ttl(old_guard, 100);
    CHECK_INT(cwork_enqueue_unique(enq, "ctl", a, NULL, NULL), CWORK_DUPLICATE);
    CHECK_DUMP("%s:known_jobs set ctl\n%s string ttl=100 1\n", ns_, dumped(old_guard));
    /* The batch sees it as well. */
    cwork_batch *b = cwork_batch_new(enq);
    CHECK_INT(cwork_batch_add(b, "ctl", a, 0, CWORK_BATCH_UNIQUE, NULL), 0);
    CHECK_INT(cwork_enqueue_batch(b, NULL), 0);
    CHECK_INT(cwork_batch_status(b, 0, NULL), CWORK_DUPLICATE);
    CHECK_DUMP("%s:known_jobs set ctl\n%s string ttl=100 1\n", ns_, dumped(old_guard));
    /* Without it, cwork's own spelling. */
    tl_do(rc_, "DEL %b", old_guard, strlen(old_guard));
    cwork_job *job = NULL;
    CHECK_INT(cwork_enqueue_unique(enq, "ctl", a, &job, NULL), CWORK_OK);
    CHECK_DUMP("%s:jobs:ctl list {\"name\":\"ctl\",\"id\":\"%s\",\"t\":%lld,\"args\":{\"s\":"
               "\"a\\x5cbb\"},\"unique\":true}\n"
               "%s:known_jobs set ctl\n%s string ttl=86400 1\n",
               ns_, cwork_job_id(job), (long long)cwork_job_enqueued_at(job), ns_,
               dumped(new_guard));
    cwork_job_free(job);
    cwork_batch_free(b);
    cwork_args_free(a);
    cwork_enqueuer_free(enq);
    tl_ns_delete(rc_, ns_);
}

/* The batch writes unique jobs in the enqueuer's flavour too. */
static void batch_unique_entries_follow_the_flavour(void)
{
    cwork_enqueuer *enq = enqueuer("batch", CWORK_GO_UPSTREAM);
    cwork_args *obj = args_of("{\"object_id_\":\"123\"}");
    cwork_batch *b = cwork_batch_new(enq);
    CHECK_INT(cwork_batch_add(b, "clear_cache", obj, 0, CWORK_BATCH_UNIQUE, NULL), 0);
    CHECK_INT(cwork_batch_add(b, "clear_cache", obj, 0, CWORK_BATCH_UNIQUE, NULL), 0);
    CHECK_INT(cwork_enqueue_batch(b, NULL), 0);
    const char *id = NULL;
    CHECK_INT(cwork_batch_status(b, 0, &id), CWORK_OK);
    CHECK_INT(cwork_batch_status(b, 1, NULL), CWORK_DUPLICATE);
    redisReply *r = tl_cmd(rc_, "LINDEX %s:jobs:clear_cache 0", ns_);
    cwork_job *job = NULL;
    CHECK_INT(cwork_job_decode(r->str, r->len, &job, NULL), 0);
    const char *guard = fixture(UP_UNIQUE_GUARD, ns_, NULL, 0, NULL, 0);
    CHECK_DUMP("%s:jobs:clear_cache list %s\n%s:known_jobs set clear_cache\n"
               "%s string ttl=86400 1\n",
               ns_, dumped(fixture(UP_UNIQUE, ns_, id, cwork_job_enqueued_at(job), NULL, 0)), ns_,
               dumped(guard));
    cwork_job_free(job);
    freeReplyObject(r);
    cwork_batch_free(b);
    cwork_args_free(obj);
    cwork_enqueuer_free(enq);
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- client */

/* Deleting a unique scheduled job removes the guard its unique_key names (upstream's
 * client would recompute from args: the ByKey and big-number guards would stay), else
 * its args' guard in both spellings. */
static void client_delete_releases_the_right_guards(void)
{
    tl_unique_ns("cdel", ns_, sizeof ns_);
    cwork_client *cl = cwork_client_new(redis_, ns_, NULL);
    char m[3][1024], g[4][256];
    snprintf(m[0], sizeof m[0], UP_BYKEY_PLACEHOLDER, ns_);
    snprintf(m[1], sizeof m[1], UP_BIG, ns_);
    snprintf(m[2], sizeof m[2], "%s", OLDGO_CTL);
    snprintf(g[0], sizeof g[0], UP_BYKEY_GUARD, ns_);
    snprintf(g[1], sizeof g[1], UP_BIG_GUARD, ns_);
    snprintf(g[2], sizeof g[2], OLDGO_CTL_GUARD, ns_);
    snprintf(g[3], sizeof g[3], NEWGO_CTL_GUARD, ns_);
    for (int i = 0; i < 3; i++)
        tl_do(rc_, "ZADD %s:scheduled %d %s", ns_, 1700000500 + i, m[i]);
    char guard_job[1024];
    snprintf(guard_job, sizeof guard_job, UP_BYKEY_GUARD_JOB, ns_);
    tl_do(rc_, "SET %b %s EX 86400", g[0], strlen(g[0]), guard_job);
    for (int i = 1; i < 4; i++)
        tl_do(rc_, "SET %b 1 EX 86400", g[i], strlen(g[i]));
    /* Another job's guard stays. */
    tl_do(rc_, "SET %s:unique:sync:{\"acct\":8}\n 1 EX 86400", ns_);
    for (int i = 0; i < 3; i++)
        CHECK_INT(cwork_client_delete(cl, CWORK_SET_SCHEDULED, 1700000500 + i, UP_ID, NULL), 0);
    CHECK_DUMP("%s:unique:sync:{\"acct\":8}\\x0a string ttl=86400 1\n", ns_);
    cwork_client_free(cl);
    tl_ns_delete(rc_, ns_);
}

/* Listing bodies: every field the job has under the fork; upstream's workwebui body under
 * upstream (no d, no trace). */
static void bodies_follow_the_client_flavour(void)
{
    tl_unique_ns("body", ns_, sizeof ns_);
    cwork_client *cl = cwork_client_new(redis_, ns_, NULL);
    char retry[1024];
    snprintf(retry, sizeof retry, UP_RETRY, ns_);
    tl_do(rc_, "ZADD %s:retry 1700000100 %s", ns_, retry);
    tl_do(rc_, "ZADD %s:dead 1700000200 %s", ns_,
          "{\"name\":\"calc\",\"id\":\"p\",\"t\":1700000040,\"args\":null,\"unique\":true,"
          "\"unique_key\":\"k\",\"fails\":1,\"err\":\"e\",\"failed_at\":1700000199,"
          "\"d\":1700000100,\"trace\":{\"traceparent\":\"00-ab-cd-01\"}}");
    char want[4096];
    snprintf(
        want, sizeof want,
        "{\n\t\"count\": 1,\n\t\"jobs\": [\n\t\t{\n\t\t\t\"retry_at\": 1700000100,\n"
        "\t\t\t\"name\": \"clear_cache\",\n\t\t\t\"id\": \"" UP_ID "\",\n"
        "\t\t\t\"t\": 1700000000,\n\t\t\t\"args\": {\n\t\t\t\t\"object_id_\": \"123\"\n"
        "\t\t\t},\n\t\t\t\"unique\": true,\n"
        "\t\t\t\"unique_key\": \"%s:unique:clear_cache:{\\\"object_id_\\\":\\\"123\\\"}\\n\",\n"
        "\t\t\t\"fails\": 1,\n\t\t\t\"err\": \"boom\",\n\t\t\t\"failed_at\": 1700000010\n"
        "\t\t}\n\t]\n}",
        ns_);
    for (int flavor = 0; flavor < 2; flavor++) {
        CHECK_INT(cwork_client_set_go_flavor(cl, (cwork_go_flavor)flavor), 0);
        char *body = NULL;
        CHECK_INT(cwork_client_list_json(cl, CWORK_SET_RETRY, 1, NULL, &body, NULL, NULL), 0);
        if (flavor == CWORK_GO_UPSTREAM) {
            CHECK_STR(body, want);
        } else { /* the same without upstream's unique_key: the fork's Job has none */
            char fork_want[4096];
            const char *k = strstr(want, "\t\t\t\"unique_key\"");
            const char *after = k ? strchr(k, '\n') : NULL;
            CHECK(k && after);
            snprintf(fork_want, sizeof fork_want, "%.*s%s", (int)(k - want), want, after + 1);
            CHECK_STR(body, fork_want);
        }
        cwork_free(body);
        CHECK_INT(cwork_client_list_json(cl, CWORK_SET_DEAD, 1, NULL, &body, NULL, NULL), 0);
        const char *fork_tail =
            "\t\t\t\"failed_at\": 1700000199,\n\t\t\t\"d\": 1700000100,\n"
            "\t\t\t\"trace\": {\n\t\t\t\t\"traceparent\": \"00-ab-cd-01\"\n\t\t\t}\n\t\t}\n\t]\n}";
        const char *upstream_tail = "\t\t\t\"failed_at\": 1700000199\n\t\t}\n\t]\n}";
        const char *tail = flavor == CWORK_GO_FORK ? fork_tail : upstream_tail;
        /* upstream's field only in upstream's body: the fork's Job has no unique_key */
        CHECK(body && (strstr(body, "\t\t\t\"unique_key\": \"k\",\n") != NULL) ==
                          (flavor == CWORK_GO_UPSTREAM));
        CHECK(body && strlen(body) > strlen(tail) &&
              strcmp(body + strlen(body) - strlen(tail), tail) == 0);
        cwork_free(body);
    }
    /* The job encoders: all fields (cwork_job_encode), or a flavour's. */
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 0", ns_);
    cwork_job *job = NULL;
    CHECK_INT(cwork_job_decode(r->element[0]->str, r->element[0]->len, &job, NULL), 0);
    char *enc = NULL;
    CHECK_INT(cwork_job_encode_flavor(job, CWORK_GO_UPSTREAM, &enc, NULL, NULL), 0);
    CHECK_STR(enc, "{\"name\":\"calc\",\"id\":\"p\",\"t\":1700000040,\"args\":null,\"unique\":true,"
                   "\"unique_key\":\"k\",\"fails\":1,\"err\":\"e\",\"failed_at\":1700000199}");
    cwork_free(enc);
    CHECK_INT(cwork_job_encode_flavor(job, CWORK_GO_FORK, &enc, NULL, NULL), 0);
    CHECK_STR(enc, "{\"name\":\"calc\",\"id\":\"p\",\"t\":1700000040,\"args\":null,\"unique\":true,"
                   "\"fails\":1,\"err\":\"e\",\"failed_at\":1700000199,\"d\":1700000100,"
                   "\"trace\":{\"traceparent\":\"00-ab-cd-01\"}}");
    cwork_free(enc);
    CHECK_INT(cwork_job_encode(job, &enc, NULL, NULL), 0);
    CHECK_STR(enc, r->element[0]->str);
    cwork_free(enc);
    CHECK_INT(cwork_job_encode_flavor(job, (cwork_go_flavor)5, &enc, NULL, NULL), CWORK_EINVAL);
    cwork_job_free(job);
    freeReplyObject(r);
    CHECK_DUMP("%s:dead zset {\"name\":\"calc\",\"id\":\"p\",\"t\":1700000040,\"args\":null,"
               "\"unique\":true,\"unique_key\":\"k\",\"fails\":1,\"err\":\"e\",\"failed_at\":"
               "1700000199,\"d\":1700000100,\"trace\":{\"traceparent\":\"00-ab-cd-01\"}}"
               "=1700000200\n%s:retry zset %s=1700000100\n",
               ns_, ns_, dumped(retry));
    cwork_client_free(cl);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    if (!redis_) return 1;
    RUN(flavours_parse_and_unknown_values_are_refused);
    RUN(upstream_enqueues_write_upstream_bytes_and_rearm_the_guard);
    RUN(bykey_under_upstream);
    RUN(bykey_under_fork);
    RUN(duplicate_check_sees_both_escape_spellings);
    RUN(batch_unique_entries_follow_the_flavour);
    RUN(client_delete_releases_the_right_guards);
    RUN(bodies_follow_the_client_flavour);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
