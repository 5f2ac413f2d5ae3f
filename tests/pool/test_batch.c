/* Tracked batches (PROTOCOL §23) against a real Redis and real pools: the callback is
 * enqueued exactly once when a sealed batch's last job is counted (on_success only when
 * none died, on_complete with the counts); a job retried three times counts once; a
 * batch grows in several calls while open and refuses jobs once sealed; a batch of 1,000
 * jobs over two pools in child processes, one SIGKILLed mid-batch, still counts every
 * job once and fires once after the last. The whole namespace is checked afterwards:
 * keys, types, values and the batch keys' TTL of a week once complete. */
#include "pool_testutil.h"
#include "scripts.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#define WEEK 604800
#define OPEN_TTL 2592000 /* an open batch: 30 days from opening */

static long long int_reply(const char *fmt, const char *arg);

static cwork_enqueuer *enq_;

static void open_batch(cwork_batch_when when, const char *callback, const char *note, char id[25])
{
    cwork_args *a = NULL;
    if (note) {
        a = cwork_args_new();
        cwork_args_set_string(a, "note", note);
    }
    cwork_error err = {0};
    int rc = cwork_batch_open(enq_, when, callback, a, id, &err);
    if (rc) tl_fail(__FILE__, __LINE__, "cwork_batch_open: %s", err.message);
    cwork_args_free(a);
}

/* Enqueues n jobs of name into batch id, args {"i": first + k, key: value}; the
 * enqueue's return code. */
static int add_jobs(const char *id, const char *name, int first, int n, const char *key,
                    int64_t value, cwork_error *err)
{
    cwork_batch *b = cwork_batch_new(enq_);
    int rc = cwork_batch_join(b, id, err);
    for (int k = 0; rc == 0 && k < n; k++) {
        cwork_args *a = cwork_args_new();
        cwork_args_set_int64(a, "i", first + k);
        if (key) cwork_args_set_int64(a, key, value);
        rc = cwork_batch_add(b, name, a, 0, 0, err);
        cwork_args_free(a);
    }
    if (rc == 0) rc = cwork_enqueue_batch(b, err);
    cwork_batch_free(b);
    return rc;
}

static cwork_batch_info read_batch(const char *id)
{
    cwork_batch_info info;
    cwork_error err = {0};
    int rc = cwork_batch_read(enq_, id, &info, &err);
    if (rc) tl_fail(__FILE__, __LINE__, "cwork_batch_read: %s", err.message);
    return info;
}

/* Fails until the job has failed `fail_until` times (arg). */
static int work(cwork_job *job, void *ctx)
{
    (void)ctx;
    int64_t until = cwork_job_arg_int64(job, "fail_until");
    if (cwork_job_fails(job) < until) return cwork_job_fail(job, "not yet");
    return 0;
}

static int64_t no_backoff(const cwork_job *job, void *userdata)
{
    (void)job;
    (void)userdata;
    return 0;
}

static cwork_pool *work_pool(const char *tag)
{
    cwork_pool *p = new_pool(tag, 4);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.backoff = no_backoff;
    CHECK_INT(cwork_pool_register(p, "work", work, &jo, NULL), 0);
    cwork_job_options_init(&jo);
    jo.max_fails = 1;
    CHECK_INT(cwork_pool_register(p, "mortal", work, &jo, NULL), 0);
    cwork_error err = {0};
    enq_ = cwork_enqueuer_new(redis_, ns_, &err);
    CHECK(enq_ != NULL);
    return p;
}

/* Waits until the pool has finished n runs (failures included). */
static void wait_runs(cwork_pool *p, uint64_t n)
{
    cwork_pool_stats st = {0};
    for (long long end = tl_now_ms() + 30000; tl_now_ms() < end; tl_sleep_ms(10)) {
        cwork_pool_get_stats(p, &st);
        if (st.succeeded + st.failed >= n) break;
    }
    CHECK_INT(st.succeeded + st.failed, n);
}

static void stop_pool(cwork_pool *p)
{
    cwork_error err = {0};
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    cwork_pool_free(p);
    cwork_enqueuer_free(enq_);
    enq_ = NULL;
}

/* The dump of the namespace with each TTL within a minute of a week written as
 * "ttl=week" (the dump rounds the remaining time up; the test may take seconds). */
static char *dump_ns(void)
{
    char *d = tl_ns_dump(rc_, ns_);
    for (char *t = strstr(d, " ttl="); t; t = strstr(t + 1, " ttl=")) {
        long v = strtol(t + 5, NULL, 10);
        if (v > WEEK - 60 && v <= WEEK) {
            char *end = t + 5;
            while (*end >= '0' && *end <= '9')
                end++;
            memmove(t + 9, end, strlen(end) + 1);
            memcpy(t, " ttl=week", 9);
        }
    }
    return d;
}

/* The callback job at the head of <ns>:jobs:<name> with its count and bytes checked
 * against the batch's values: the callback's id and t come from the job itself (t is
 * the moment the batch completed). Pops it. */
static void check_callback(const char *name, const char *id, int total, int succeeded, int dead,
                           const char *note)
{
    redisReply *r = tl_cmd(rc_, "LRANGE %s:jobs:%s 0 -1", ns_, name);
    CHECK_INT(r->elements, 1);
    if (r->elements == 1) {
        cwork_job *j = NULL;
        CHECK_INT(cwork_job_decode(r->element[0]->str, r->element[0]->len, &j, NULL), 0);
        char want[1024];
        snprintf(want, sizeof want,
                 "{\"name\":\"%s\",\"id\":\"%s\",\"t\":%lld,\"args\":{\"batch_dead\":%d,"
                 "\"batch_id\":\"%s\",\"batch_succeeded\":%d,\"batch_total\":%d%s%s%s}}",
                 name, j ? cwork_job_id(j) : "?", j ? (long long)cwork_job_enqueued_at(j) : 0, dead,
                 id, succeeded, total, note ? ",\"note\":\"" : "", note ? note : "",
                 note ? "\"" : "");
        CHECK_STR(r->element[0]->str, want);
        CHECK(j && strlen(cwork_job_id(j)) == 24);
        CHECK(j && llabs(cwork_job_enqueued_at(j) - (long long)time(NULL)) <= 60);
        cwork_job_free(j);
    }
    freeReplyObject(r);
    freeReplyObject(tl_cmd(rc_, "DEL %s:jobs:%s", ns_, name));
}

/* The batch hash as the dump shows it, for a batch whose callback was settled. */
static void batch_line(char *out, size_t size, const char *id, const char *callback,
                       const char *state, int total, int succeeded, int dead, const char *when,
                       const char *rest)
{
    redisReply *h = tl_cmd(rc_, "HMGET %s:cwork:batch:%s cb_head created_at completed_at", ns_, id);
    const char *head = h->element[0]->str ? h->element[0]->str : "?";
    snprintf(out, size,
             "%s:cwork:batch:%s hash ttl=week callback=%s | cb_head=%s | cb_name=%s | cb_rest=%s | "
             "completed_at=%s | created_at=%s | dead=%d | id=%s | retrying=0 | sealed=1 | "
             "succeeded=%d | total=%d | when=%s\n",
             ns_, id, state, head, callback, rest, h->element[2]->str ? h->element[2]->str : "?",
             h->element[1]->str ? h->element[1]->str : "?", dead, id, succeeded, total, when);
    /* cb_head is the callback's name and id as Go writes them, up to its t */
    char want_head[256];
    snprintf(want_head, sizeof want_head, "{\"name\":\"%s\",\"id\":\"", callback);
    CHECK(strncmp(head, want_head, strlen(want_head)) == 0 &&
          strlen(head) == strlen(want_head) + 24 + 6);
    long long created = h->element[1]->str ? atoll(h->element[1]->str) : 0;
    long long completed = h->element[2]->str ? atoll(h->element[2]->str) : 0;
    CHECK(created <= completed && llabs(completed - (long long)time(NULL)) <= 60);
    freeReplyObject(h);
}

/* Three jobs, one failing three times before it succeeds: counted once; on_success fires
 * once, after the last, with the counts; the batch keys expire a week later. */
static void job_retried_three_times_counts_once(void)
{
    cwork_pool *p = work_pool("batch-retry");
    char id[25];
    open_batch(CWORK_BATCH_ON_SUCCESS, "done", "x", id);
    cwork_error err = {0};
    CHECK_INT(add_jobs(id, "work", 0, 2, NULL, 0, &err), 0);
    CHECK_INT(add_jobs(id, "work", 2, 1, "fail_until", 3, &err), 0);
    CHECK_INT(cwork_batch_seal(enq_, id, &err), 0);
    cwork_batch_info info = read_batch(id);
    CHECK_INT(info.total, 3);
    CHECK_INT(info.pending, 3);
    CHECK(info.sealed);
    CHECK_INT(info.callback_state, CWORK_BATCH_CALLBACK_WAITING);
    CHECK(info.ttl > OPEN_TTL - 60 && info.ttl <= OPEN_TTL);
    cwork_error e2 = {0};
    CHECK_INT(cwork_pool_start(p, &e2), 0);
    wait_runs(p, 6); /* 2 + 3 failures + 1 success */
    /* The last run's commit is what fires: wait for the settled state. */
    for (long long end = tl_now_ms() + 10000;
         tl_now_ms() < end && read_batch(id).callback_state == CWORK_BATCH_CALLBACK_WAITING;)
        tl_sleep_ms(10);
    stop_pool(p);
    enq_ = cwork_enqueuer_new(redis_, ns_, &err);
    info = read_batch(id);
    CHECK_INT(info.total, 3);
    CHECK_INT(info.succeeded, 3);
    CHECK_INT(info.retrying, 0);
    CHECK_INT(info.dead, 0);
    CHECK_INT(info.pending, 0);
    CHECK_INT(info.callback_state, CWORK_BATCH_CALLBACK_ENQUEUED);
    CHECK_STR(info.callback, "done");
    CHECK(info.ttl > WEEK - 60 && info.ttl <= WEEK);
    check_callback("done", id, 3, 3, 0, "x");

    tl_take_stat_days(rc_, ns_, 6, 3);
    char line[2048], want[8192];
    batch_line(line, sizeof line, id, "done", "enqueued", 3, 3, 0, "success", ",\"note\":\"x\"");
    /* the jobs hash: job id → 's' for each; ids read back from it */
    redisReply *ids = tl_cmd(rc_, "HKEYS %s:cwork:batch:%s:jobs", ns_, id);
    CHECK_INT(ids->elements, 3);
    freeReplyObject(ids);
    char *dump = dump_ns();
    /* (the jobs hash line is checked for its shape: three ids, all 's') */
    char *jobs_line = strstr(dump, ":jobs hash ttl=week ");
    CHECK(jobs_line != NULL);
    int s_count = 0;
    for (char *s = jobs_line; s && (s = strstr(s, "=s")) != NULL; s += 2)
        s_count += s[2] == '\n' || s[2] == ' ';
    CHECK_INT(s_count, 3);
    snprintf(want, sizeof want, "%s", line);
    CHECK(strncmp(dump, want, strlen(want)) == 0);
    char *after = strchr(jobs_line, '\n');
    snprintf(want, sizeof want,
             "\n%s:jobs:mortal:max_concurrency string 0\n"
             "%s:jobs:work:lock string 0\n"
             "%s:jobs:work:max_concurrency string 0\n"
             "%s:known_jobs set done | mortal | work\n",
             ns_, ns_, ns_, ns_);
    CHECK_STR(after, want);
    free(dump);
    cwork_enqueuer_free(enq_);
    tl_ns_delete(rc_, ns_);
}

/* A job that dies: an on_success batch never fires (skipped), an on_complete batch fires
 * once with batch_dead=1. */
static void dead_job_skips_on_success_and_completes(void)
{
    cwork_pool *p = work_pool("batch-dead");
    char ids[2][25];
    open_batch(CWORK_BATCH_ON_SUCCESS, "ok", NULL, ids[0]);
    open_batch(CWORK_BATCH_ON_COMPLETE, "all", NULL, ids[1]);
    cwork_error err = {0};
    for (int b = 0; b < 2; b++) {
        CHECK_INT(add_jobs(ids[b], "work", 0, 2, NULL, 0, &err), 0);
        CHECK_INT(add_jobs(ids[b], "mortal", 2, 1, "fail_until", 1, &err), 0);
        CHECK_INT(cwork_batch_seal(enq_, ids[b], &err), 0);
    }
    cwork_error e2 = {0};
    CHECK_INT(cwork_pool_start(p, &e2), 0);
    wait_runs(p, 6);
    for (long long end = tl_now_ms() + 10000;
         tl_now_ms() < end && (read_batch(ids[0]).callback_state == CWORK_BATCH_CALLBACK_WAITING ||
                               read_batch(ids[1]).callback_state == CWORK_BATCH_CALLBACK_WAITING);)
        tl_sleep_ms(10);
    stop_pool(p);
    enq_ = cwork_enqueuer_new(redis_, ns_, &err);
    for (int b = 0; b < 2; b++) {
        cwork_batch_info info = read_batch(ids[b]);
        CHECK_INT(info.succeeded, 2);
        CHECK_INT(info.dead, 1);
        CHECK_INT(info.pending, 0);
        CHECK_INT(info.callback_state,
                  b ? CWORK_BATCH_CALLBACK_ENQUEUED : CWORK_BATCH_CALLBACK_SKIPPED);
        CHECK(info.ttl > WEEK - 60 && info.ttl <= WEEK);
    }
    /* Sealing again changes nothing and fires nothing. */
    CHECK_INT(cwork_batch_seal(enq_, ids[0], &err), 0);
    CHECK_INT(cwork_batch_seal(enq_, ids[1], &err), 0);
    freeReplyObject(tl_cmd(rc_, "EXISTS %s:jobs:ok", ns_));
    redisReply *r = tl_cmd(rc_, "EXISTS %s:jobs:ok", ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    check_callback("all", ids[1], 3, 2, 1, NULL);

    /* The dead job is in dead, with its batch field kept (cwork re-encodes every field). */
    r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    CHECK_INT(r->elements, 2);
    for (size_t i = 0; i < r->elements; i++)
        CHECK(strstr(r->element[i]->str, "\"cwork_batch\":\"") != NULL);
    freeReplyObject(r);
    freeReplyObject(tl_cmd(rc_, "DEL %s:dead", ns_));

    tl_take_stat_days(rc_, ns_, 6, 2);
    char *dump = dump_ns();
    char l0[2048], l1[2048];
    batch_line(l0, sizeof l0, ids[0], "ok", "skipped", 3, 2, 1, "success", "");
    batch_line(l1, sizeof l1, ids[1], "all", "enqueued", 3, 2, 1, "complete", "");
    /* each batch: its hash, then its jobs hash (3 ids: two 's', one 'd') */
    const char *first = strcmp(ids[0], ids[1]) < 0 ? l0 : l1;
    const char *second = first == l0 ? l1 : l0;
    CHECK(strncmp(dump, first, strlen(first)) == 0);
    char *p2 = strstr(dump, second);
    CHECK(p2 != NULL);
    int d = 0, s = 0; /* values of the jobs hashes: "<id>=d | " or "<id>=d\n" */
    for (char *q = dump; (q = strstr(q, "=d")) != NULL; q += 2)
        d += q[2] == '\n' || q[2] == ' ';
    for (char *q = dump; (q = strstr(q, "=s")) != NULL; q += 2)
        s += q[2] == '\n' || q[2] == ' ';
    CHECK_INT(d, 2);
    CHECK_INT(s, 4);
    char want[1024];
    snprintf(want, sizeof want,
             "%s:jobs:mortal:lock string 0\n"
             "%s:jobs:mortal:max_concurrency string 0\n"
             "%s:jobs:work:lock string 0\n"
             "%s:jobs:work:max_concurrency string 0\n"
             "%s:known_jobs set all | mortal | work\n",
             ns_, ns_, ns_, ns_, ns_);
    char *tail = strstr(dump, want);
    CHECK(tail != NULL && strlen(tail) == strlen(want));
    free(dump);
    cwork_enqueuer_free(enq_);
    tl_ns_delete(rc_, ns_);
}

/* Jobs join an open batch in several calls, some finishing before others are added: no
 * callback before the seal; the seal fires it when every job is counted already; a
 * sealed batch refuses more jobs and writes nothing of them. An empty batch fires at
 * its seal with total 0. */
static void open_batch_grows_until_sealed(void)
{
    cwork_pool *p = work_pool("batch-open");
    char id[25];
    open_batch(CWORK_BATCH_ON_COMPLETE, "after", NULL, id);
    cwork_error err = {0};
    CHECK_INT(add_jobs(id, "work", 0, 2, NULL, 0, &err), 0);
    cwork_error e2 = {0};
    CHECK_INT(cwork_pool_start(p, &e2), 0);
    wait_runs(p, 2);
    CHECK_INT(add_jobs(id, "work", 2, 3, NULL, 0, &err), 0);
    wait_runs(p, 5);
    for (long long end = tl_now_ms() + 10000; tl_now_ms() < end && read_batch(id).succeeded < 5;)
        tl_sleep_ms(10);
    cwork_batch_info info = read_batch(id);
    CHECK_INT(info.total, 5);
    CHECK_INT(info.succeeded, 5);
    CHECK(!info.sealed);
    CHECK_INT(info.callback_state, CWORK_BATCH_CALLBACK_WAITING);
    CHECK(info.ttl > OPEN_TTL - 60 && info.ttl <= OPEN_TTL);
    /* the jobs counted so far expire with the open batch */
    CHECK(int_reply("TTL %s:cwork:batch:%s:jobs", id) > OPEN_TTL - 60);
    redisReply *r = tl_cmd(rc_, "EXISTS %s:jobs:after", ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    CHECK_INT(cwork_batch_seal(enq_, id, &err), 0);
    info = read_batch(id);
    CHECK_INT(info.callback_state, CWORK_BATCH_CALLBACK_ENQUEUED);
    CHECK(info.ttl > WEEK - 60 && info.ttl <= WEEK);
    check_callback("after", id, 5, 5, 0, NULL);
    /* sealed: nothing more joins, nothing written */
    memset(&err, 0, sizeof err);
    CHECK_INT(add_jobs(id, "work", 5, 2, NULL, 0, &err), CWORK_EREDIS);
    CHECK(strstr(err.message, "is sealed") != NULL);
    r = tl_cmd(rc_, "LLEN %s:jobs:work", ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);

    char empty[25];
    open_batch(CWORK_BATCH_ON_SUCCESS, "after", NULL, empty);
    CHECK_INT(cwork_batch_seal(enq_, empty, &err), 0);
    check_callback("after", empty, 0, 0, 0, NULL);
    stop_pool(p);
    tl_ns_delete(rc_, ns_);
}

/* One call of the cycle script committing the succeeded jobs raw[0..n) of type "a" as
 * pool POOL, with the batch section of members id (job ids jid): what the dispatcher
 * sends (commit.c), written out by hand. The reply's first element. */
#define POOL "0123456789abcdef01234567"
static long long commit_members(const char *id, char raw[][256], char jid[][25], int n, char *lost,
                                size_t lost_size)
{
    char k[9][128], prefix[80], mode[32];
    const char *kinds[] = {":paused",   ":lock", ":max_concurrency", "", ":" POOL ":inprogress",
                           ":lock_info"};
    for (int i = 0; i < 6; i++)
        snprintf(k[i], sizeof k[i], "%s:jobs:a%s", ns_, kinds[i]);
    snprintf(k[6], sizeof k[6], "%s:retry", ns_);
    snprintf(k[7], sizeof k[7], "%s:dead", ns_);
    snprintf(k[8], sizeof k[8], "%s:cwork:cancelled", ns_);
    snprintf(mode, sizeof mode, "0 x0 b%d", 4 + 2 * n); /* the batch section's length */
    snprintf(prefix, sizeof prefix, "%s:", ns_);
    const char *argv[64];
    size_t lens[64];
    int c = 0;
#define ARG(p, l) (argv[c] = (p), lens[c] = (l), c++)
    ARG("EVAL", 4);
    ARG(cw_script_cycle.body, cw_script_cycle.body_len);
    ARG("9", 1);
    for (int i = 0; i < 9; i++)
        ARG(k[i], strlen(k[i]));
    unsigned char groups[6] = {0, 1, 0, (unsigned char)n, 0, 0}, entries[7 * 8];
    ARG(POOL, 24);
    ARG(mode, strlen(mode));
    ARG("", 0); /* no fetch */
    ARG("1", 1);
    ARG((const char *)groups, 6);
    for (int i = 0; i < n; i++)
        ARG(raw[i], strlen(raw[i]));
    for (int i = 0; i < n; i++) { /* position i + 1 (the groups are 0), type 1, 's' */
        unsigned char e[7] = {0, 0, 0, (unsigned char)(i + 1), 0, 1, 's'};
        memcpy(entries + 7 * i, e, 7);
    }
    ARG(prefix, strlen(prefix));
    ARG("1700000000", 10);
    ARG("604800", 6);
    ARG((const char *)entries, (size_t)(7 * n));
    for (int i = 0; i < n; i++) {
        ARG(id, 24);
        ARG(jid[i], 24);
    }
#undef ARG
    redisReply *r = redisCommandArgv(rc_, c, argv, lens);
    long long removed = -1;
    lost[0] = '\0';
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements >= 1) {
        redisReply *first = r->element[0];
        if (first->type == REDIS_REPLY_INTEGER) {
            removed = first->integer;
        } else if (first->type == REDIS_REPLY_ARRAY) {
            removed = first->element[0]->integer;
            for (size_t i = 1; i < first->elements; i++)
                snprintf(lost + strlen(lost), lost_size - strlen(lost), "%s%lld", i > 1 ? " " : "",
                         first->element[i]->integer);
        }
    } else {
        tl_fail(__FILE__, __LINE__, "cycle: %s", r && r->str ? r->str : "no reply");
    }
    freeReplyObject(r);
    return removed;
}

/* The commit counts a member only when its LREM removed it: a job a reaper took back
 * counts nothing, nor does the same commit sent again (after a lost reply); the job's
 * real commit later counts it, and fires the callback once. */
static void commit_counts_only_what_it_removes(void)
{
    tl_unique_ns("batch-lrem", ns_, sizeof ns_);
    cwork_error err = {0};
    enq_ = cwork_enqueuer_new(redis_, ns_, &err);
    char id[25], jid[2][25], raw[2][256];
    open_batch(CWORK_BATCH_ON_SUCCESS, "next", NULL, id);
    cwork_batch *b = cwork_batch_new(enq_);
    CHECK_INT(cwork_batch_join(b, id, &err), 0);
    CHECK_INT(cwork_batch_add(b, "a", NULL, 0, 0, &err), 0);
    CHECK_INT(cwork_batch_add(b, "a", NULL, 0, 0, &err), 0);
    CHECK_INT(cwork_enqueue_batch(b, &err), 0);
    for (int i = 0; i < 2; i++) {
        const char *j = NULL;
        cwork_batch_status(b, (size_t)i, &j);
        snprintf(jid[i], sizeof jid[i], "%s", j ? j : "");
    }
    cwork_batch_free(b);
    CHECK_INT(cwork_batch_seal(enq_, id, &err), 0);
    /* fetched by POOL: both in its in-progress list, oldest (jid[0]) first */
    for (int i = 0; i < 2; i++) {
        redisReply *r = tl_cmd(rc_, "RPOPLPUSH %s:jobs:a %s:jobs:a:" POOL ":inprogress", ns_, ns_);
        CHECK(r->type == REDIS_REPLY_STRING && strstr(r->str, jid[i]) != NULL);
        snprintf(raw[i], sizeof raw[i], "%s", r->str ? r->str : "");
        freeReplyObject(r);
    }
    /* a reaper gave the second back to the queue */
    freeReplyObject(tl_cmd(rc_, "LREM %s:jobs:a:" POOL ":inprogress 1 %s", ns_, raw[1]));
    freeReplyObject(tl_cmd(rc_, "LPUSH %s:jobs:a %s", ns_, raw[1]));
    char lost[64];
    CHECK_INT(commit_members(id, raw, jid, 2, lost, sizeof lost), 1);
    CHECK_STR(lost, "2");
    cwork_batch_info info = read_batch(id);
    CHECK_INT(info.succeeded, 1);
    CHECK_INT(info.pending, 1);
    /* the same commit again: nothing removed, nothing counted */
    CHECK_INT(commit_members(id, raw, jid, 2, lost, sizeof lost), 0);
    CHECK_STR(lost, "1 2");
    CHECK_INT(read_batch(id).succeeded, 1);
    /* the second job fetched again and committed: counted, the callback fires once */
    freeReplyObject(tl_cmd(rc_, "RPOPLPUSH %s:jobs:a %s:jobs:a:" POOL ":inprogress", ns_, ns_));
    CHECK_INT(commit_members(id, raw + 1, jid + 1, 1, lost, sizeof lost), 1);
    CHECK_STR(lost, "");
    CHECK_INT(commit_members(id, raw + 1, jid + 1, 1, lost, sizeof lost), 0);
    info = read_batch(id);
    CHECK_INT(info.succeeded, 2);
    CHECK_INT(info.pending, 0);
    CHECK_INT(info.callback_state, CWORK_BATCH_CALLBACK_ENQUEUED);
    CHECK_INT(info.completed_at, 1700000000); /* the commit's now */
    redisReply *r = tl_cmd(rc_, "LRANGE %s:jobs:next 0 -1", ns_);
    CHECK_INT(r->elements, 1);
    if (r->elements == 1) CHECK(strstr(r->element[0]->str, "\"t\":1700000000,") != NULL);
    freeReplyObject(r);
    cwork_enqueuer_free(enq_);
    tl_ns_delete(rc_, ns_);
}

/* The requeuer sends a scheduled member whose name nobody knows to dead: it counts as
 * dead in its batch in that same script call, and on_complete fires. */
static void requeuer_sending_to_dead_counts(void)
{
    cwork_pool *p = work_pool("batch-requeue");
    char id[25];
    open_batch(CWORK_BATCH_ON_COMPLETE, "after", NULL, id);
    cwork_error err = {0};
    cwork_batch *b = cwork_batch_new(enq_);
    CHECK_INT(cwork_batch_join(b, id, &err), 0);
    CHECK_INT(cwork_batch_add(b, "orphan", NULL, 0, CWORK_BATCH_IN, &err), 0);
    CHECK_INT(cwork_batch_add(b, "work", NULL, 0, 0, &err), 0);
    CHECK_INT(cwork_enqueue_batch(b, &err), 0);
    cwork_batch_free(b);
    CHECK_INT(cwork_batch_seal(enq_, id, &err), 0);
    freeReplyObject(tl_cmd(rc_, "SREM %s:known_jobs orphan", ns_)); /* nobody knows it */
    cwork_error e2 = {0};
    CHECK_INT(cwork_pool_start(p, &e2), 0);
    for (long long end = tl_now_ms() + 20000;
         tl_now_ms() < end && read_batch(id).callback_state == CWORK_BATCH_CALLBACK_WAITING;)
        tl_sleep_ms(10);
    stop_pool(p);
    enq_ = cwork_enqueuer_new(redis_, ns_, &err);
    cwork_batch_info info = read_batch(id);
    CHECK_INT(info.succeeded, 1);
    CHECK_INT(info.dead, 1);
    CHECK_INT(info.callback_state, CWORK_BATCH_CALLBACK_ENQUEUED);
    check_callback("after", id, 2, 1, 1, NULL);
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    CHECK_INT(r->elements, 1);
    if (r->elements == 1) CHECK(strstr(r->element[0]->str, "unknown job when requeueing") != NULL);
    freeReplyObject(r);
    r = tl_cmd(rc_, "HVALS %s:cwork:batch:%s:jobs", ns_, id);
    CHECK_INT(r->elements, 2);
    freeReplyObject(r);
    cwork_enqueuer_free(enq_);
    tl_ns_delete(rc_, ns_);
}

/* The features together (issue of the four): a batch whose jobs are of a rate-limited
 * type, one job cancelled while it waits (client_cancel.lua counts it dead) and one
 * marked cancelled while its pool runs it (the commit sends it to dead as cancelled and
 * counts it dead): on_complete fires once, after the last job, with dead = 2; the
 * limited type's starts keep their spacing. */
static pthread_mutex_t starts_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t starts_[8];
static int nstarts_;

static int limited_work(cwork_job *job, void *ctx)
{
    (void)job;
    (void)ctx;
    pthread_mutex_lock(&starts_mu);
    if (nstarts_ < 8) starts_[nstarts_++] = tl_now_ms();
    pthread_mutex_unlock(&starts_mu);
    return 0;
}

static void rate_limited_batch_with_cancelled_jobs(void)
{
    cwork_pool *p = new_pool("batch-features", 4);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.rate_limit = 2; /* 2 per 200 ms: starts at least 100 ms apart */
    jo.rate_limit_window_ms = 200;
    CHECK_INT(cwork_pool_register(p, "lim", limited_work, &jo, NULL), 0);
    cwork_error err = {0};
    enq_ = cwork_enqueuer_new(redis_, ns_, &err);
    char id[25];
    open_batch(CWORK_BATCH_ON_COMPLETE, "after", NULL, id);
    CHECK_INT(add_jobs(id, "lim", 0, 5, NULL, 0, &err), 0);
    CHECK_INT(cwork_batch_seal(enq_, id, &err), 0);
    redisReply *r = tl_cmd(rc_, "LRANGE %s:jobs:lim 0 -1", ns_); /* newest first */
    CHECK_INT(r->elements, 5);
    char waiting[25] = "", running[25] = "";
    for (size_t i = 0; i < r->elements && i < 5; i++) {
        cwork_job *j = NULL;
        if (cwork_job_decode(r->element[i]->str, r->element[i]->len, &j, NULL) != 0) continue;
        if (i == 0) snprintf(waiting, sizeof waiting, "%s", cwork_job_id(j)); /* runs last */
        if (i == 4) snprintf(running, sizeof running, "%s", cwork_job_id(j)); /* runs first */
        cwork_job_free(j);
    }
    freeReplyObject(r);
    /* cancelled while it waits: dead at once, counted dead */
    cwork_client *cl = cwork_client_new(redis_, ns_, NULL);
    cwork_cancel_result res;
    CHECK_INT(cwork_client_cancel(cl, waiting, &res, &err), 0);
    CHECK_INT(res.place, CWORK_PLACE_QUEUE);
    cwork_batch_info info = read_batch(id);
    CHECK_INT(info.dead, 1);
    CHECK_INT(info.pending, 4);
    /* marked as a running job's cancel is before its pool hears of it */
    freeReplyObject(tl_cmd(rc_, "HSET %s:cwork:cancelled %s 1700000500", ns_, running));
    nstarts_ = 0;
    CHECK_INT(cwork_pool_start(p, &err), 0);
    for (long long end = tl_now_ms() + 20000;
         tl_now_ms() < end && read_batch(id).callback_state == CWORK_BATCH_CALLBACK_WAITING;)
        tl_sleep_ms(10);
    info = read_batch(id);
    CHECK_INT(info.succeeded, 3);
    CHECK_INT(info.dead, 2);
    CHECK_INT(info.pending, 0);
    CHECK_INT(info.callback_state, CWORK_BATCH_CALLBACK_ENQUEUED);
    stop_pool(p);
    cwork_client_free(cl);
    pthread_mutex_lock(&starts_mu);
    /* 4 runs, or 3: a pool that learns of the mark before it runs the job does not run it */
    CHECK(nstarts_ == 3 || nstarts_ == 4);
    for (int i = 1; i < nstarts_ && i < 8; i++) /* half the interval: the limit's rule */
        CHECK(starts_[i] - starts_[i - 1] >= 50);
    pthread_mutex_unlock(&starts_mu);
    check_callback("after", id, 5, 3, 2, NULL);
    r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    CHECK_INT(r->elements, 2);
    for (size_t i = 0; i < r->elements; i++)
        CHECK(strstr(r->element[i]->str, "\"err\":\"cancelled\"") != NULL);
    freeReplyObject(r);
    CHECK_INT(int_reply("EXISTS %s:cwork:cancelled%s", ""), 0); /* the mark went with it */
    tl_ns_delete(rc_, ns_);
}

static void bad_input_is_refused_with_its_name(void)
{
    tl_unique_ns("batch-bad", ns_, sizeof ns_);
    cwork_error err = {0};
    enq_ = cwork_enqueuer_new(redis_, ns_, &err);
    char id[25];
    cwork_args *a = cwork_args_new();
    cwork_args_set_int64(a, "batch_total", 1);
    CHECK_INT(cwork_batch_open(enq_, CWORK_BATCH_ON_SUCCESS, "cb", a, id, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "batch_total") != NULL);
    cwork_args_free(a);
    CHECK_INT(cwork_batch_open(enq_, (cwork_batch_when)7, "cb", NULL, id, &err), CWORK_EINVAL);
    CHECK_INT(cwork_batch_open(enq_, CWORK_BATCH_ON_SUCCESS, "a,b", NULL, id, &err), CWORK_EINVAL);
    CHECK_INT(cwork_batch_seal(enq_, "../x", &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "../x") != NULL);
    CHECK_INT(cwork_batch_seal(enq_, "0123456789abcdef01234567", &err), CWORK_ENOTFOUND);
    CHECK(strstr(err.message, "cwork:batch:0123456789abcdef01234567") != NULL);
    cwork_batch_info info;
    CHECK_INT(cwork_batch_read(enq_, "0123456789abcdef01234567", &info, &err), CWORK_ENOTFOUND);
    /* joining a batch that does not exist: refused, nothing written */
    CHECK_INT(add_jobs("0123456789abcdef01234567", "work", 0, 1, NULL, 0, &err), CWORK_EREDIS);
    CHECK(strstr(err.message, "does not exist") != NULL);
    cwork_batch *b = cwork_batch_new(enq_);
    CHECK_INT(cwork_batch_join(b, "0123456789abcdef01234567", &err), 0);
    CHECK_INT(cwork_batch_add(b, "work", NULL, 0, CWORK_BATCH_UNIQUE, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "unique") != NULL);
    CHECK_INT(cwork_batch_add(b, "work", NULL, 0, 0, &err), 0);
    CHECK_INT(cwork_batch_join(b, NULL, &err), CWORK_EINVAL); /* holds a job */
    cwork_batch_free(b);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, "");
    free(dump);
    cwork_enqueuer_free(enq_);
}

/* ---- two pools in child processes, one killed */

#define BIG 1000

static pthread_mutex_t child_mu = PTHREAD_MUTEX_INITIALIZER;
static redisContext *child_rc;

static int child_work(cwork_job *job, void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&child_mu);
    freeReplyObject(redisCommand(child_rc, "SADD %s:test:ran %lld", ns_,
                                 (long long)cwork_job_arg_int64(job, "i")));
    pthread_mutex_unlock(&child_mu);
    usleep(10000); /* spread the batch over time, so that the kill lands mid-batch */
    return 0;
}

/* The callback records how many jobs of its batch were counted when it ran. */
static int child_callback(cwork_job *job, void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&child_mu);
    redisReply *r = redisCommand(child_rc, "HGET %s:cwork:batch:%s succeeded", ns_,
                                 cwork_job_arg_string(job, "batch_id"));
    freeReplyObject(
        redisCommand(child_rc, "RPUSH %s:test:callback %s", ns_, r && r->str ? r->str : "?"));
    freeReplyObject(r);
    pthread_mutex_unlock(&child_mu);
    return 0;
}

static pid_t start_child_pool(void)
{
    pid_t pid = fork();
    if (pid != 0) return pid;
    child_rc = tl_redis_connect();
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(tl_redis_url(), NULL, &err);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 4;
    o.dead_check_ms = 200; /* find the killed pool's stale heartbeat soon */
    cwork_pool *p = cwork_pool_new(redis, ns_, &o, &err);
    if (!p || cwork_pool_register(p, "big", child_work, NULL, &err) != 0 ||
        cwork_pool_register(p, "big_done", child_callback, NULL, &err) != 0 ||
        cwork_pool_start(p, &err) != 0)
        _exit(2);
    /* Runs until the parent says stop (a key) — or kills it. */
    for (;;) {
        pthread_mutex_lock(&child_mu); /* (the handlers share the connection) */
        redisReply *r = redisCommand(child_rc, "EXISTS %s:test:stop", ns_);
        int stop = r && r->integer == 1;
        freeReplyObject(r);
        pthread_mutex_unlock(&child_mu);
        if (stop) break;
        usleep(20000);
    }
    int rc = cwork_pool_stop(p, 10000, &err);
    cwork_pool_free(p);
    cwork_redis_free(redis);
    _exit(rc == 0 ? 0 : 3);
}

static long long int_reply(const char *fmt, const char *arg)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, fmt, ns_, arg);
    redisReply *r = tl_cmd(rc_, cmd);
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : r->str ? atoll(r->str) : -1;
    freeReplyObject(r);
    return v;
}

static void thousand_jobs_two_pools_one_killed(void)
{
    tl_unique_ns("batch-kill", ns_, sizeof ns_);
    cwork_error err = {0};
    enq_ = cwork_enqueuer_new(redis_, ns_, &err);
    char id[25];
    open_batch(CWORK_BATCH_ON_SUCCESS, "big_done", NULL, id);
    /* In three calls, the last after the pools started. */
    CHECK_INT(add_jobs(id, "big", 0, 400, NULL, 0, &err), 0);
    CHECK_INT(add_jobs(id, "big", 400, 300, NULL, 0, &err), 0);
    pid_t a = start_child_pool(), b = start_child_pool();
    CHECK_INT(add_jobs(id, "big", 700, 300, NULL, 0, &err), 0);
    CHECK_INT(cwork_batch_seal(enq_, id, &err), 0);
    /* Kill A once a fifth of the batch is counted (mid-batch, with jobs in flight). */
    for (long long end = tl_now_ms() + 60000;
         tl_now_ms() < end && read_batch(id).succeeded < BIG / 5;)
        tl_sleep_ms(5);
    cwork_batch_info info = read_batch(id);
    CHECK(info.succeeded >= BIG / 5 && info.succeeded < BIG);
    kill(a, SIGKILL);
    waitpid(a, NULL, 0);
    /* A died holding jobs: its in-progress list (found by its heartbeat's pid) is not
     * empty, so the rest of the batch goes through the reaper and runs again on B. */
    char a_list[160] = "";
    redisReply *pools = tl_cmd(rc_, "SMEMBERS %s:worker_pools", ns_);
    for (size_t i = 0; i < pools->elements; i++) {
        redisReply *pid = tl_cmd(rc_, "HGET %s:worker_pools:%s pid", ns_, pools->element[i]->str);
        if (pid->str && atoll(pid->str) == (long long)a)
            snprintf(a_list, sizeof a_list, "jobs:big:%s:inprogress", pools->element[i]->str);
        freeReplyObject(pid);
    }
    freeReplyObject(pools);
    CHECK(a_list[0] != '\0');
    long long held = int_reply("LLEN %s:%s", a_list);
    CHECK(held > 0);
    /* B finishes the batch, the killed pool's jobs once the reaper gave them back. */
    for (long long end = tl_now_ms() + 120000;
         tl_now_ms() < end && int_reply("LLEN %s:test:callback", "") < 1;)
        tl_sleep_ms(20);
    /* The callback ran once, when all 1,000 were counted. */
    CHECK_INT(int_reply("LLEN %s:test:callback", ""), 1);
    redisReply *r = tl_cmd(rc_, "LRANGE %s:test:callback 0 -1", ns_);
    CHECK_INT(r->elements, 1);
    if (r->elements == 1) CHECK_STR(r->element[0]->str, "1000");
    freeReplyObject(r);
    info = read_batch(id);
    CHECK_INT(info.total, BIG);
    CHECK_INT(info.succeeded, BIG);
    CHECK_INT(info.pending, 0);
    CHECK_INT(info.dead + info.retrying, 0);
    CHECK_INT(info.callback_state, CWORK_BATCH_CALLBACK_ENQUEUED);
    CHECK_INT(int_reply("SCARD %s:test:ran", ""), BIG);           /* every job ran */
    CHECK_INT(int_reply("HLEN %s:cwork:batch:%s:jobs", id), BIG); /* each counted once */
    /* No second callback comes: stop B and look again. */
    freeReplyObject(tl_cmd(rc_, "SET %s:test:stop 1", ns_));
    int status = 0;
    waitpid(b, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_INT(int_reply("LLEN %s:test:callback", ""), 1);
    char key[128];
    snprintf(key, sizeof key, "cwork:batch:%s", id);
    CHECK(int_reply("TTL %s:%s", key) > WEEK - 120);
    snprintf(key, sizeof key, "cwork:batch:%s:jobs", id);
    CHECK(int_reply("TTL %s:%s", key) > WEEK - 120);
    /* The queues are empty; the locks are back to 0 (the reaper released A's). */
    CHECK_INT(int_reply("EXISTS %s:jobs:big", ""), 0);
    CHECK_INT(int_reply("GET %s:jobs:big:lock", ""), 0);
    CHECK_INT(int_reply("EXISTS %s:jobs:big_done", ""), 0);
    r = tl_cmd(rc_, "KEYS %s:jobs:*:inprogress", ns_);
    CHECK_INT(r->elements, 0);
    freeReplyObject(r);
    CHECK_INT(int_reply("EXISTS %s:%s", a_list), 0); /* the reaper gave A's jobs back */
    cwork_enqueuer_free(enq_);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    RUN(bad_input_is_refused_with_its_name);
    RUN(commit_counts_only_what_it_removes);
    RUN(job_retried_three_times_counts_once);
    RUN(dead_job_skips_on_success_and_completes);
    RUN(open_batch_grows_until_sealed);
    RUN(requeuer_sending_to_dead_counts);
    RUN(rate_limited_batch_with_cancelled_jobs);
    RUN(thousand_jobs_two_pools_one_killed);
    pool_test_teardown();
    return tl_finish();
}
