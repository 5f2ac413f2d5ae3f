/* cwork_enqueue_ex and its options against a real Redis, checked over the whole
 * namespace: all-zero options (or NULL) are a plain enqueue; each of Go's six calls
 * writes exactly what cwork_enqueue_ex writes with the options its name says (the same
 * keys, types, values, scores and TTLs, up to the job's id and time); unique_key implies
 * unique; a delay without `delayed` is refused and writes nothing. */
#include "cwork.h"
#include "testlib.h"

#include <stdlib.h>

static redisContext *rc_;
static cwork_redis *redis_;

static cwork_enqueuer *fresh_enqueuer(const char *tag, char *ns, size_t size)
{
    tl_unique_ns(tag, ns, size);
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns, &err);
    CHECK(enq != NULL);
    return enq;
}

/* s with every `from` replaced by `to`; s is freed. */
static char *replace_all(char *s, const char *from, const char *to)
{
    size_t from_len = strlen(from), to_len = strlen(to), n = 0;
    for (const char *p = strstr(s, from); p; p = strstr(p + from_len, from))
        n++;
    char *out = malloc(strlen(s) + n * to_len + 1), *w = out;
    const char *r = s;
    for (const char *p = strstr(r, from); p; p = strstr(r, from)) {
        memcpy(w, r, (size_t)(p - r));
        w += p - r;
        memcpy(w, to, to_len);
        w += to_len;
        r = p + from_len;
    }
    strcpy(w, r);
    free(s);
    return out;
}

/* The namespace's dump with what differs between two enqueues of the same job made
 * apart (the namespace, the job's id, its `t` and its run-at score) written as names. */
static char *normalized_dump(const char *ns, const cwork_job *job)
{
    char *d = tl_ns_dump(rc_, ns);
    char buf[64];
    d = replace_all(d, ns, "NS");
    d = replace_all(d, cwork_job_id(job), "ID");
    snprintf(buf, sizeof buf, "\"t\":%lld", (long long)cwork_job_enqueued_at(job));
    d = replace_all(d, buf, "\"t\":T");
    if (cwork_job_run_at(job)) {
        snprintf(buf, sizeof buf, "=%lld", (long long)cwork_job_run_at(job));
        d = replace_all(d, buf, "=RUN_AT");
    }
    return d;
}

static cwork_args *args_of(const char *json)
{
    cwork_args *a = NULL;
    CHECK_INT(cwork_args_parse(json, strlen(json), &a, NULL), 0);
    return a;
}

enum wrapper { PLAIN, IN, UNIQUE, UNIQUE_IN, BY_KEY, IN_BY_KEY };
static const char *const wrapper_names[] = {"enqueue",        "enqueue_in",
                                            "enqueue_unique", "enqueue_unique_in",
                                            "unique_by_key",  "unique_in_by_key"};

static int call_wrapper(enum wrapper w, cwork_enqueuer *enq, const cwork_args *args,
                        const cwork_args *key, cwork_job **out)
{
    switch (w) {
    case PLAIN:
        return cwork_enqueue(enq, "mail", args, out, NULL);
    case IN:
        return cwork_enqueue_in(enq, "mail", 90, args, out, NULL);
    case UNIQUE:
        return cwork_enqueue_unique(enq, "mail", args, out, NULL);
    case UNIQUE_IN:
        return cwork_enqueue_unique_in(enq, "mail", 90, args, out, NULL);
    case BY_KEY:
        return cwork_enqueue_unique_by_key(enq, "mail", args, key, out, NULL);
    case IN_BY_KEY:
        return cwork_enqueue_unique_in_by_key(enq, "mail", 90, args, key, out, NULL);
    }
    return -100;
}

static cwork_enqueue_opts opts_of(enum wrapper w, const cwork_args *key)
{
    cwork_enqueue_opts o = {0};
    o.delayed = w == IN || w == UNIQUE_IN || w == IN_BY_KEY;
    o.delay_seconds = o.delayed ? 90 : 0;
    o.unique = w == UNIQUE || w == UNIQUE_IN || w == BY_KEY || w == IN_BY_KEY;
    o.unique_key = w == BY_KEY || w == IN_BY_KEY ? key : NULL;
    return o;
}

/* Each wrapper and cwork_enqueue_ex with its options leave the same namespace, for a
 * first enqueue and for a second one of the same job (a duplicate where unique). */
static void wrappers_write_what_enqueue_ex_writes(void)
{
    cwork_args *args = args_of("{\"to\":\"a@example.com\",\"n\":3}");
    cwork_args *key = args_of("{\"account\":7}");
    for (int w = PLAIN; w <= IN_BY_KEY; w++) {
        char ns_ex[64], ns_wrap[64];
        cwork_enqueuer *ex = fresh_enqueuer("opts_ex", ns_ex, sizeof ns_ex);
        cwork_enqueuer *wrap = fresh_enqueuer("opts_wrap", ns_wrap, sizeof ns_wrap);
        cwork_enqueue_opts o = opts_of((enum wrapper)w, key);
        for (int round = 0; round < 2; round++) {
            cwork_job *a = NULL, *b = NULL;
            int rc_ex = cwork_enqueue_ex(ex, "mail", args, &o, &a, NULL);
            int rc_wrap = call_wrapper((enum wrapper)w, wrap, args, key, &b);
            int want = round == 1 && o.unique ? CWORK_DUPLICATE : CWORK_OK;
            if (rc_ex != want || rc_wrap != want)
                tl_fail(__FILE__, __LINE__, "%s round %d: ex %d, wrapper %d, want %d",
                        wrapper_names[w], round, rc_ex, rc_wrap, want);
            /* A plain unique duplicate returns no job; a ByKey one the job that will run. */
            CHECK((a == NULL) == (b == NULL));
            if (round == 0 && a && b) {
                char *da = normalized_dump(ns_ex, a), *db = normalized_dump(ns_wrap, b);
                if (strcmp(da, db) != 0)
                    tl_fail(__FILE__, __LINE__, "%s: enqueue_ex wrote\n%s\nthe wrapper\n%s",
                            wrapper_names[w], da, db);
                CHECK(strstr(da, o.delayed ? "NS:scheduled zset" : "NS:jobs:mail list") != NULL);
                CHECK((strstr(da, "NS:unique:mail:") != NULL) == o.unique);
                CHECK_INT(cwork_job_run_at(a) != 0, o.delayed);
                CHECK_INT(cwork_job_unique(a), o.unique);
                free(da), free(db);
            }
            cwork_job_free(a);
            cwork_job_free(b);
        }
        tl_ns_delete(rc_, ns_ex);
        tl_ns_delete(rc_, ns_wrap);
        cwork_enqueuer_free(ex);
        cwork_enqueuer_free(wrap);
    }
    cwork_args_free(args);
    cwork_args_free(key);
}

/* All-zero options and NULL are both a plain enqueue: the job in its queue, its name in
 * known_jobs, nothing else. */
static void zero_options_are_a_plain_enqueue(void)
{
    char ns[64], want[1024];
    cwork_enqueuer *enq = fresh_enqueuer("opts_zero", ns, sizeof ns);
    cwork_enqueue_opts zero = {0};
    cwork_job *a = NULL, *b = NULL;
    CHECK_INT(cwork_enqueue_ex(enq, "plain", NULL, &zero, &a, NULL), CWORK_OK);
    CHECK_INT(cwork_enqueue_ex(enq, "plain", NULL, NULL, &b, NULL), CWORK_OK);
    CHECK_INT(cwork_job_run_at(a), 0);
    CHECK(!cwork_job_unique(a) && !cwork_job_unique(b));
    snprintf(want, sizeof want,
             "%s:jobs:plain list {\"name\":\"plain\",\"id\":\"%s\",\"t\":%lld,\"args\":null}"
             " | {\"name\":\"plain\",\"id\":\"%s\",\"t\":%lld,\"args\":null}\n"
             "%s:known_jobs set plain\n",
             ns, cwork_job_id(b), (long long)cwork_job_enqueued_at(b), cwork_job_id(a),
             (long long)cwork_job_enqueued_at(a), ns);
    char *got = tl_ns_dump(rc_, ns);
    CHECK_STR(got, want);
    free(got);
    cwork_job_free(a);
    cwork_job_free(b);
    tl_ns_delete(rc_, ns);
    cwork_enqueuer_free(enq);
}

/* unique_key without unique is still unique by that key: its guard holds the job. */
static void unique_key_implies_unique(void)
{
    char ns[64], guard[256];
    cwork_enqueuer *enq = fresh_enqueuer("opts_key", ns, sizeof ns);
    cwork_args *key = args_of("{\"account\":7}");
    cwork_enqueue_opts o = {.unique_key = key};
    cwork_job *a = NULL, *b = NULL;
    CHECK_INT(cwork_enqueue_ex(enq, "sync", NULL, &o, &a, NULL), CWORK_OK);
    CHECK(cwork_job_unique(a));
    snprintf(guard, sizeof guard, "%s:unique:sync:{\"account\":7}\n", ns);
    CHECK_STR(cwork_job_unique_key(a), guard);
    CHECK_INT(cwork_enqueue_ex(enq, "sync", NULL, &o, &b, NULL), CWORK_DUPLICATE);
    CHECK(b != NULL); /* ByKey: the job that will run */
    redisReply *r = tl_cmd(rc_, "TTL %s", guard);
    CHECK(r->integer > 86000 && r->integer <= 86400);
    freeReplyObject(r);
    r = tl_cmd(rc_, "LLEN %s:jobs:sync", ns);
    CHECK_INT(r->integer, 1); /* one waiting entry: the duplicate queued nothing */
    freeReplyObject(r);
    cwork_job_free(a);
    cwork_job_free(b);
    cwork_args_free(key);
    tl_ns_delete(rc_, ns);
    cwork_enqueuer_free(enq);
}

/* A delay without `delayed` (the job would silently run now) and a delay beyond the
 * bound are refused, naming the field, with nothing written. */
static void bad_delays_are_refused(void)
{
    char ns[64];
    cwork_enqueuer *enq = fresh_enqueuer("opts_bad", ns, sizeof ns);
    cwork_error err = {0};
    cwork_job *job = (cwork_job *)1;
    cwork_enqueue_opts o = {.delay_seconds = 60};
    CHECK_INT(cwork_enqueue_ex(enq, "x", NULL, &o, &job, &err), CWORK_EINVAL);
    CHECK(job == NULL);
    CHECK(strstr(err.message, "opts.delay_seconds") && strstr(err.message, "opts.delayed"));
    o = (cwork_enqueue_opts){.delayed = true, .delay_seconds = CWORK_MAX_DELAY_SECONDS + 1};
    CHECK_INT(cwork_enqueue_ex(enq, "x", NULL, &o, NULL, &err), CWORK_EINVAL);
    o.unique = true;
    CHECK_INT(cwork_enqueue_ex(enq, "x", NULL, &o, NULL, NULL), CWORK_EINVAL);
    CHECK_INT(cwork_enqueue_ex(NULL, "x", NULL, NULL, NULL, NULL), CWORK_EINVAL);
    CHECK_INT(cwork_enqueue_ex(enq, NULL, NULL, NULL, NULL, NULL), CWORK_EINVAL);
    char *got = tl_ns_dump(rc_, ns);
    CHECK_STR(got, "");
    free(got);
    cwork_enqueuer_free(enq);
}

int main(void)
{
    rc_ = tl_redis_connect();
    cwork_error err = {0};
    redis_ = cwork_redis_new(tl_redis_url(), NULL, &err);
    if (!redis_) {
        fprintf(stderr, "cwork_redis_new: %s\n", err.message);
        return 1;
    }
    RUN(wrappers_write_what_enqueue_ex_writes);
    RUN(zero_options_are_a_plain_enqueue);
    RUN(unique_key_implies_unique);
    RUN(bad_delays_are_refused);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
