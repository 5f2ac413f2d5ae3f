/* A superseded ByKey placeholder (issue 22, edge 3; PROTOCOL §9.3): upstream's worker runs
 * the job its guard holds instead of the queued placeholder and commits the guard job's
 * bytes, so the placeholder stays in its pool's in-progress list. A reaper must not give
 * it back: it is dropped, recorded in <p>cwork:superseded and logged. The bytes are the
 * ones upstream writes (upstream_testutil.h). Each case sets Redis up as upstream leaves
 * it, runs one reaper cycle, then a cwork pool until drained, and checks what ran and
 * every key of the namespace. */
#include "pool_testutil.h"

#include "keys.h"
#include "reaper.h"
#include "upstream_testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define GONE "00000000000000000000dead" /* the upstream pool, stopped or crashed */

static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;
static char seen_[512]; /* "<id> <args>;" per run */
static atomic_int runs_;
static cw_keys keys_;

static int record(cwork_job *job, void *ctx)
{
    (void)ctx;
    char *args = cwork_job_args_json(job);
    pthread_mutex_lock(&seen_mu);
    size_t n = strlen(seen_);
    snprintf(seen_ + n, sizeof seen_ - n, "%s %s;", cwork_job_id(job), args ? args : "?");
    pthread_mutex_unlock(&seen_mu);
    cwork_free(args);
    atomic_fetch_add(&runs_, 1);
    return 0;
}

static void fresh(const char *tag)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    cw_keys_clear(&keys_);
    cw_keys_init(&keys_, ns_);
    seen_[0] = '\0';
    atomic_store(&runs_, 0);
}

static void reap(void)
{
    const char *names[] = {"sync"};
    cw_reaper *r = cw_reaper_new(redis_, &keys_, names, 1, 300, NULL, NULL);
    int ran = -1;
    cwork_error err = {0};
    if (cw_reaper_cycle(r, &ran, &err) != 0) tl_fail(__FILE__, __LINE__, "cycle: %s", err.message);
    CHECK_INT(ran, 1);
    cw_reaper_free(r);
}

/* A cwork pool (upstream flavour) that runs "sync" until nothing is left. */
static void run_pool(void)
{
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 2;
    o.go_flavor = CWORK_GO_UPSTREAM;
    cwork_error err = {0};
    cwork_pool *p = cwork_pool_new(redis_, ns_, &o, &err);
    if (!p) {
        tl_fail(__FILE__, __LINE__, "cwork_pool_new: %s", err.message);
        return;
    }
    CHECK_INT(cwork_pool_register(p, "sync", record, NULL, NULL), 0);
    CHECK_INT(cwork_pool_start(p, &err), 0);
    if (cwork_pool_drain(p, 10000, &err) != 0)
        tl_fail(__FILE__, __LINE__, "drain: %s", err.message);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    cwork_pool_free(p);
}

static void set_guard(const char *value)
{
    char key[256];
    snprintf(key, sizeof key, UP_BYKEY_GUARD, ns_);
    tl_do(rc_, "SET %b %b EX 86400", key, strlen(key), value, strlen(value));
}

static void push_inprogress(const char *bytes)
{
    tl_do(rc_, "RPUSH %s:jobs:sync:" GONE ":inprogress %s", ns_, bytes);
}

/* The record the reaper keeps of a dropped entry, {"at","pool","key","id","job"} with
 * cjson's escaping (`/` as `\/`; none occur here), as tl_ns_dump shows it; `at` is left
 * as %s for check_namespace. */
static void superseded_record(char *out, size_t size, const char *job)
{
    char key[256], key_esc[300], job_esc[1024];
    snprintf(key, sizeof key, UP_BYKEY_GUARD, ns_);
    size_t k = 0;
    for (const char *s = key; *s && k + 3 < sizeof key_esc; s++) {
        if (*s == '"')
            key_esc[k++] = '\\', key_esc[k++] = '"';
        else if (*s == '\n')
            key_esc[k++] = '\\', key_esc[k++] = 'n';
        else
            key_esc[k++] = *s;
    }
    key_esc[k] = '\0';
    k = 0;
    for (const char *s = job; *s && k + 3 < sizeof job_esc; s++) {
        if (*s == '"' || *s == '\\') job_esc[k++] = '\\';
        job_esc[k++] = *s;
    }
    job_esc[k] = '\0';
    char rec[2048];
    snprintf(rec, sizeof rec,
             "{\"at\":%%s,\"pool\":\"" GONE "\",\"key\":\"%s\",\"id\":\"%s\",\"job\":\"%s\"}",
             key_esc, UP_ID, job_esc);
    /* as tl_ns_dump shows it: a backslash (or a control byte) as \xNN */
    size_t o = 0;
    for (const char *s = rec; *s && o + 5 < size; s++) {
        if (*s == '\\' || (unsigned char)*s < 0x20)
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", (unsigned char)*s);
        else
            out[o++] = *s;
    }
    out[o] = '\0';
}

/* Checks the dump against want, with the record's `at` (the reaper's clock) read back and
 * checked to be within the test's run. */
static void check_namespace(const char *want_fmt, long long t0)
{
    char *got = tl_ns_dump(rc_, ns_);
    const char *at = strstr(got, "{\"at\":");
    long long when = at ? atoll(at + 6) : 0;
    CHECK(when >= t0 && when <= (long long)time(NULL));
    char when_s[24], want[4096];
    snprintf(when_s, sizeof when_s, "%lld", when);
    snprintf(want, sizeof want, want_fmt, when_s);
    CHECK_STR(got, want);
    free(got);
}

/* Upstream ran the guard's job {"v":"second"} in place of the placeholder {"v":"first"},
 * committed (lock and its lock_info field back to 0), deleted the guard and stopped: the
 * placeholder is all that is left, in the in-progress list of a pool that no longer
 * exists. Before the fix, a cwork reaper put it back and it ran again. */
static void placeholder_of_a_finished_replacement_is_dropped(void)
{
    fresh("supdone");
    long long t0 = (long long)time(NULL);
    char placeholder[1024];
    snprintf(placeholder, sizeof placeholder, UP_BYKEY_PLACEHOLDER, ns_);
    push_inprogress(placeholder);
    tl_do(rc_, "SET %s:jobs:sync:lock 0", ns_);
    tl_do(rc_, "HSET %s:jobs:sync:lock_info " GONE " 0", ns_);
    tl_do(rc_, "SADD %s:known_jobs sync", ns_);
    tl_capture_logs();
    reap();
    const tl_log *l = tl_find_log("reaper.superseded");
    CHECK(l != NULL);
    CHECK(l && strstr(l->fields, "job_id=" UP_ID) && strstr(l->fields, "pool=" GONE) &&
          strstr(l->fields, ":unique:sync:{\"acct\":7}"));
    CHECK_INT(tl_count_logs("reaper.superseded"), 1);
    run_pool();
    CHECK_INT(atomic_load(&runs_), 0);
    char rec[2048], want[4096];
    superseded_record(rec, sizeof rec, placeholder);
    snprintf(want, sizeof want,
             "%s:cwork:superseded list %s\n"
             "%s:jobs:sync:lock string 0\n"
             "%s:jobs:sync:max_concurrency string 0\n"
             "%s:known_jobs set sync\n",
             ns_, rec, ns_, ns_, ns_);
    check_namespace(want, t0);
    tl_ns_delete(rc_, ns_);
}

/* The upstream pool crashed while running the replacement of an earlier placeholder, and
 * a later EnqueueUniqueByKey of the same key made a new placeholder and guard: the guard
 * names another job, so the old placeholder is dropped and the current job runs once. */
static void placeholder_whose_guard_names_another_job_is_dropped(void)
{
    fresh("supnew");
    long long t0 = (long long)time(NULL);
    char placeholder[1024], current[1024];
    snprintf(placeholder, sizeof placeholder, UP_BYKEY_PLACEHOLDER, ns_);
    snprintf(current, sizeof current, UP_BYKEY_GUARD_JOB, ns_);
    push_inprogress(placeholder);
    tl_do(rc_, "SET %s:jobs:sync:lock 1", ns_);
    tl_do(rc_, "HSET %s:jobs:sync:lock_info " GONE " 1", ns_);
    tl_do(rc_, "SADD %s:worker_pools " GONE, ns_);
    tl_do(rc_, "HSET %s:worker_pools:" GONE " heartbeat_at 1700000000 job_names sync", ns_);
    tl_do(rc_, "SADD %s:known_jobs sync", ns_);
    /* upstream's ByKey enqueue of the current job: its bytes queued and in the guard */
    push_raw("sync", current);
    set_guard(current);
    tl_capture_logs();
    reap();
    CHECK_INT(tl_count_logs("reaper.superseded"), 1);
    run_pool();
    CHECK_INT(atomic_load(&runs_), 1);
    CHECK_STR(seen_, UP_ID2 " {\"v\":\"second\"};");
    char rec[2048], want[4096];
    superseded_record(rec, sizeof rec, placeholder);
    tl_take_stat_days(rc_, ns_, 1, 0);
    snprintf(want, sizeof want,
             "%s:cwork:superseded list %s\n"
             "%s:jobs:sync:lock string 0\n"
             "%s:jobs:sync:max_concurrency string 0\n"
             "%s:known_jobs set sync\n",
             ns_, rec, ns_, ns_, ns_);
    check_namespace(want, t0);
    tl_ns_delete(rc_, ns_);
}

/* What a requeued placeholder leaves once it ran: nothing but the type's counters. */
static void check_requeued_and_ran(void)
{
    char want[1024];
    snprintf(want, sizeof want,
             "%s:jobs:sync:lock string 0\n"
             "%s:jobs:sync:max_concurrency string 0\n"
             "%s:known_jobs set sync\n",
             ns_, ns_, ns_);
    char *got = tl_ns_dump(rc_, ns_);
    CHECK_STR(got, want);
    free(got);
}

/* Not superseded, so given back as before: a placeholder whose run was cut short (its
 * pool still held the slot, the guard is gone: at least once), and one whose guard still
 * holds the placeholder itself (its pool died before the guard was read). */
static void running_or_current_placeholders_are_requeued(void)
{
    fresh("supkeep");
    char placeholder[1024];
    snprintf(placeholder, sizeof placeholder, UP_BYKEY_PLACEHOLDER, ns_);
    push_inprogress(placeholder);
    tl_do(rc_, "SET %s:jobs:sync:lock 1", ns_);
    tl_do(rc_, "HSET %s:jobs:sync:lock_info " GONE " 1", ns_);
    tl_do(rc_, "SADD %s:known_jobs sync", ns_);
    tl_capture_logs();
    reap();
    CHECK_INT(tl_count_logs("reaper.superseded"), 0);
    run_pool();
    CHECK_STR(seen_, UP_ID " {\"v\":\"first\"};");
    tl_take_stat_days(rc_, ns_, 1, 0);
    check_requeued_and_ran();
    tl_ns_delete(rc_, ns_);

    fresh("supself");
    snprintf(placeholder, sizeof placeholder, UP_BYKEY_PLACEHOLDER, ns_);
    push_inprogress(placeholder);
    set_guard(placeholder);
    tl_do(rc_, "SET %s:jobs:sync:lock 0", ns_);
    tl_do(rc_, "HSET %s:jobs:sync:lock_info " GONE " 0", ns_);
    tl_do(rc_, "SADD %s:known_jobs sync", ns_);
    reap();
    CHECK_INT(tl_count_logs("reaper.superseded"), 0);
    run_pool();
    CHECK_STR(seen_, UP_ID " {\"v\":\"first\"};");
    tl_take_stat_days(rc_, ns_, 1, 0);
    check_requeued_and_ran();
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    cw_keys_init(&keys_, "x");
    RUN(placeholder_of_a_finished_replacement_is_dropped);
    RUN(placeholder_whose_guard_names_another_job_is_dropped);
    RUN(running_or_current_placeholders_are_requeued);
    cw_keys_clear(&keys_);
    pool_test_teardown();
    return tl_finish();
}
