/* The namespace's Go JSON spelling of U+0008/U+000C (cwork_go_json; issue 22, edge 1):
 * under go1.21 cwork's unique enqueues write exactly the bytes a Go 1.19-1.21 enqueuer
 * writes (the recordings OLDGO_CTL, OLDGO_UP_CTL, OLDGO_CTL_GUARD, checked against Go
 * 1.19 itself in test_upstream_oracle.c), so that such a Go sees cwork's guard as a
 * duplicate and its workers delete it; a guard in either spelling is a duplicate; jobs
 * in either spelling read the same. Every case checks the whole namespace. */
#include "flavor_testutil.h"

#include "cwork.h"

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];

#define CHECK_DUMP(...) check_ns_dump(rc_, ns_, __FILE__, __LINE__, __VA_ARGS__)

static cwork_enqueuer *enqueuer(const char *tag, cwork_go_flavor flavor, cwork_go_json spelling)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, NULL);
    CHECK(enq != NULL);
    CHECK_INT(cwork_enqueuer_set_go_flavor(enq, flavor), 0);
    CHECK_INT(cwork_enqueuer_set_go_json(enq, spelling), 0);
    return enq;
}

static cwork_args *args_of(const char *json)
{
    cwork_args *a = NULL;
    CHECK_INT(cwork_args_parse(json, strlen(json), &a, NULL), 0);
    return a;
}

static void settings_parse_and_unknown_values_are_refused(void)
{
    cwork_go_json s = CWORK_GO_JSON_121;
    CHECK_INT(cwork_go_json_parse("go1.22", &s, NULL), 0);
    CHECK_INT(s, CWORK_GO_JSON_122);
    CHECK_INT(cwork_go_json_parse("go1.21", &s, NULL), 0);
    CHECK_INT(s, CWORK_GO_JSON_121);
    cwork_error err = {0};
    const char *bad[] = {"", "1.21", "go1.20", "GO1.22", "go1.22 ", NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        s = (cwork_go_json)7;
        CHECK_INT(cwork_go_json_parse(bad[i], &s, &err), CWORK_EINVAL);
        CHECK_INT(s, 7); /* untouched */
    }
    CHECK(strstr(err.message, "go1.22 or go1.21") != NULL);
    CHECK_STR(cwork_go_json_name(CWORK_GO_JSON_122), "go1.22");
    CHECK_STR(cwork_go_json_name(CWORK_GO_JSON_121), "go1.21");
    CHECK_STR(cwork_go_json_name((cwork_go_json)5), "unknown");

    cwork_enqueuer *enq = enqueuer("gjset", CWORK_GO_FORK, CWORK_GO_JSON_122);
    CHECK_INT(cwork_enqueuer_set_go_json(enq, (cwork_go_json)2), CWORK_EINVAL);
    CHECK_INT(cwork_enqueuer_set_go_json(NULL, CWORK_GO_JSON_121), CWORK_EINVAL);
    cwork_enqueuer_free(enq);
    cwork_pool_options po;
    cwork_pool_options_init(&po);
    CHECK_INT(po.go_json, CWORK_GO_JSON_122); /* the default */
    po.go_json = (cwork_go_json)3;
    err.code = 0;
    CHECK(cwork_pool_new(redis_, ns_, &po, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    CHECK(strstr(err.message, "go_json") != NULL);
    CHECK_DUMP("%s", ""); /* nothing written */
}

/* The fork's EnqueueUnique by a Go 1.21: cwork writes the same job and guard. */
static void go121_fork_enqueue_is_byte_identical(void)
{
    cwork_enqueuer *enq = enqueuer("gj121f", CWORK_GO_FORK, CWORK_GO_JSON_121);
    cwork_args *a = args_of("{\"s\":\"a\\bb\"}");
    cwork_job *job = NULL;
    CHECK_INT(cwork_enqueue_unique(enq, "ctl", a, &job, NULL), CWORK_OK);
    const char *want_job =
        fixture(OLDGO_CTL, ns_, cwork_job_id(job), (long long)cwork_job_enqueued_at(job), NULL, 0);
    size_t raw_len = 0;
    const char *raw = cwork_job_raw(job, &raw_len);
    CHECK_MEM(raw, raw_len, want_job, strlen(want_job));
    const char *guard = fixture(OLDGO_CTL_GUARD, ns_, NULL, 0, NULL, 0);
    CHECK_DUMP("%s:jobs:ctl list %s\n%s:known_jobs set ctl\n%s string ttl=86400 1\n", ns_,
               dumped(want_job), ns_, dumped(guard));
    /* A second enqueue (cwork's or that Go's) meets this guard. */
    CHECK_INT(cwork_enqueue_unique(enq, "ctl", a, NULL, NULL), CWORK_DUPLICATE);
    /* A guard in Go 1.22's spelling counts as well, whatever the setting. */
    const char *newer = fixture(NEWGO_CTL_GUARD, ns_, NULL, 0, NULL, 0);
    tl_do(rc_, "RENAME %b %b", guard, strlen(guard), newer, strlen(newer));
    CHECK_INT(cwork_enqueue_unique(enq, "ctl", a, NULL, NULL), CWORK_DUPLICATE);
    CHECK_DUMP("%s:jobs:ctl list %s\n%s:known_jobs set ctl\n%s string ttl=86400 1\n", ns_,
               dumped(want_job), ns_, dumped(newer));
    /* The batch writes the same spelling. */
    tl_do(rc_, "DEL %b %s:jobs:ctl", newer, strlen(newer), ns_);
    cwork_batch *b = cwork_batch_new(enq);
    CHECK_INT(cwork_batch_add(b, "ctl", a, 0, CWORK_BATCH_UNIQUE, NULL), 0);
    CHECK_INT(cwork_enqueue_batch(b, NULL), 0);
    CHECK_INT(cwork_batch_status(b, 0, NULL), CWORK_OK);
    cwork_batch_free(b);
    char *queued = NULL;
    redisReply *r = tl_cmd(rc_, "LINDEX %s:jobs:ctl 0", ns_);
    if (r->type == REDIS_REPLY_STRING) queued = strdup(r->str);
    freeReplyObject(r);
    CHECK(queued && strstr(queued, "\"args\":{\"s\":\"a\\u0008b\"},\"unique\":true}"));
    CHECK_DUMP("%s:jobs:ctl list %s\n%s:known_jobs set ctl\n%s string ttl=86400 1\n", ns_,
               dumped(queued ? queued : "?"), ns_, dumped(guard));
    free(queued);
    cwork_job_free(job);
    cwork_args_free(a);
    cwork_enqueuer_free(enq);
    tl_ns_delete(rc_, ns_);
}

/* Upstream's EnqueueUnique by a Go 1.21: unique_key names the \u0008 guard. */
static void go121_upstream_enqueue_is_byte_identical(void)
{
    cwork_enqueuer *enq = enqueuer("gj121u", CWORK_GO_UPSTREAM, CWORK_GO_JSON_121);
    cwork_args *a = args_of("{\"s\":\"a\\bb\"}");
    cwork_job *job = NULL;
    CHECK_INT(cwork_enqueue_unique(enq, "ctl", a, &job, NULL), CWORK_OK);
    const char *want_job = fixture(OLDGO_UP_CTL, ns_, cwork_job_id(job),
                                   (long long)cwork_job_enqueued_at(job), NULL, 0);
    const char *guard = fixture(OLDGO_CTL_GUARD, ns_, NULL, 0, NULL, 0);
    CHECK_STR(cwork_job_unique_key(job), guard);
    CHECK_DUMP("%s:jobs:ctl list %s\n%s:known_jobs set ctl\n%s string ttl=86400 1\n", ns_,
               dumped(want_job), ns_, dumped(guard));
    cwork_job_free(job);
    /* Under go1.22 (the default) the same enqueue writes \b: another guard. */
    tl_ns_delete(rc_, ns_);
    CHECK_INT(cwork_enqueuer_set_go_json(enq, CWORK_GO_JSON_122), 0);
    CHECK_INT(cwork_enqueue_unique(enq, "ctl", a, &job, NULL), CWORK_OK);
    const char *newer = fixture(NEWGO_CTL_GUARD, ns_, NULL, 0, NULL, 0);
    CHECK_STR(cwork_job_unique_key(job), newer);
    size_t raw_len = 0;
    const char *raw = cwork_job_raw(job, &raw_len);
    char *copy = strndup(raw, raw_len);
    CHECK(copy && strstr(copy, "\"args\":{\"s\":\"a\\bb\"}") != NULL);
    /* (known_jobs is not written again: the enqueuer's cache holds the name) */
    CHECK_DUMP("%s:jobs:ctl list %s\n%s string ttl=86400 1\n", ns_, dumped(copy ? copy : "?"),
               dumped(newer));
    free(copy);
    cwork_job_free(job);
    cwork_args_free(a);
    cwork_enqueuer_free(enq);
    tl_ns_delete(rc_, ns_);
}

/* Reading is spelling-blind: both forms decode to the same job. */
static void both_spellings_read_the_same(void)
{
    const char *older = fixture(OLDGO_CTL, "x", NULL, 0, NULL, 0);
    char newer[512];
    snprintf(newer, sizeof newer,
             "{\"name\":\"ctl\",\"id\":\"" UP_ID "\",\"t\":1700000000,\"args\":{\"s\":\"a\\bb\","
             "\"f\":\"\\f\\u000c\"},\"unique\":true}");
    cwork_job *j1 = NULL, *j2 = NULL;
    CHECK_INT(cwork_job_decode(older, strlen(older), &j1, NULL), 0);
    CHECK_INT(cwork_job_decode(newer, strlen(newer), &j2, NULL), 0);
    if (!j1 || !j2) return;
    CHECK_STR(cwork_job_arg_string(j1, "s"), "a\bb");
    CHECK_STR(cwork_job_arg_string(j2, "s"), "a\bb");
    CHECK_STR(cwork_job_arg_string(j2, "f"), "\f\f");
    char *e1 = NULL, *e2 = NULL;
    CHECK_INT(cwork_job_encode(j1, &e1, NULL, NULL), 0);
    CHECK_INT(cwork_job_encode(j2, &e2, NULL, NULL), 0);
    CHECK(e1 && strstr(e1, "\"args\":{\"s\":\"a\\bb\"}")); /* re-encoded as cwork writes */
    CHECK(e2 && strstr(e2, "\"f\":\"\\f\\f\""));
    cwork_free(e1);
    cwork_free(e2);
    cwork_job_free(j1);
    cwork_job_free(j2);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    if (!redis_) return 1;
    RUN(settings_parse_and_unknown_values_are_refused);
    RUN(go121_fork_enqueue_is_byte_identical);
    RUN(go121_upstream_enqueue_is_byte_identical);
    RUN(both_spellings_read_the_same);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
