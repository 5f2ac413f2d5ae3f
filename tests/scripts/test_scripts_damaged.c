/* The damaged-key policy (PROTOCOL §16.15) for every script of src/scripts/,
 * through the library's own code paths: for each script, each key it touches is
 * replaced by a value of another type, the operation that runs the script is called,
 * and then
 *   - its result is the one expected (a refusal, or success with the damage reported);
 *   - every job of the namespace before the call is somewhere in it afterwards, except
 *     those a handler ran to success (never lost);
 *   - the damaged key is exactly as it was (reported or skipped, never "repaired" by
 *     overwriting someone's data);
 *   - every other key is as it was, except those the case lets change (a refusal
 *     writes nothing at all: no partial writes).
 * One world is seeded per case: known_jobs {a}; a queued job, a due scheduled job, a
 * due retry job, a dead job; a dead pool holding one job in progress with its lock and
 * lock_info slot. */
#include "cwork.h"
#include "keys.h"
#include "periodic.h"
#include "reaper.h"
#include "requeuer.h"
#include "testlib.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static redisContext *rc_;
static cwork_redis *redis_;
static cwork_client *client_;
static char ns_[64];
static cw_keys keys_;
static long long now_;
static char guard_key_[256]; /* the unique guard of name "a" with args {} (suffix) */

#define JOB(id) "{\"name\":\"a\",\"id\":\"" id "\",\"t\":1700000000,\"args\":{}}"

/* ---------------------------------------------------------------- the world */

static void seed(void)
{
    tl_unique_ns("dmg", ns_, sizeof ns_);
    cw_keys_clear(&keys_);
    cw_keys_init(&keys_, ns_);
    cwork_client_free(client_);
    client_ = cwork_client_new(redis_, ns_, NULL);
    now_ = (long long)time(NULL);
    tl_do(rc_, "SADD %s:known_jobs a", ns_);
    tl_do(rc_, "LPUSH %s:jobs:a %s", ns_, JOB("queued0000000000000000001"));
    tl_do(rc_, "ZADD %s:scheduled %lld %s", ns_, now_ - 10, JOB("scheduled000000000000001"));
    tl_do(rc_, "ZADD %s:retry %lld %s", ns_, now_ - 10, JOB("retry0000000000000000001"));
    tl_do(rc_, "ZADD %s:dead %lld %s", ns_, now_ - 100, JOB("dead00000000000000000001"));
    tl_do(rc_, "SADD %s:worker_pools deadpool", ns_);
    tl_do(rc_, "HSET %s:worker_pools:deadpool heartbeat_at 1000 job_names a", ns_);
    tl_do(rc_, "LPUSH %s:jobs:a:deadpool:inprogress %s", ns_, JOB("inprogress00000000000001"));
    tl_do(rc_, "SET %s:jobs:a:lock 1", ns_);
    tl_do(rc_, "HSET %s:jobs:a:lock_info deadpool 1", ns_);
}

/* Replaces <ns>:<suffix> by a value of another type than it should hold. */
static void damage_key(const char *suffix, const char *type)
{
    char key[320];
    snprintf(key, sizeof key, "%s:%s", ns_, suffix);
    tl_do(rc_, "DEL %s", key);
    if (!strcmp(type, "list"))
        tl_do(rc_, "RPUSH %s damaged", key);
    else
        tl_do(rc_, "SET %s damaged", key);
}

/* ---------------------------------------------------------------- the operations */

static int handled_n_;
static char handled_[16][64]; /* ids a handler ran to success */
static pthread_mutex_t handled_mu_ = PTHREAD_MUTEX_INITIALIZER;
static int handler_fails_;

static int handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    if (handler_fails_) return cwork_job_fail(job, "fails on purpose");
    pthread_mutex_lock(&handled_mu_);
    if (handled_n_ < 16) snprintf(handled_[handled_n_++], 64, "%s", cwork_job_id(job));
    pthread_mutex_unlock(&handled_mu_);
    return 0;
}

static cwork_args *no_args(void)
{
    static cwork_args *a;
    if (!a) a = cwork_args_new();
    return a;
}

static cwork_error err_;

/* A key the operation damages itself once it runs (NULL: none): a key a pool's start
 * writes (max_concurrency), or the reaper lock while it is held. */
static const char *late_key_, *late_type_;

static int op_enqueue(void)
{
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, NULL);
    int rc = cwork_enqueue(enq, "a", no_args(), NULL, &err_);
    cwork_enqueuer_free(enq);
    return rc;
}

static int op_enqueue_in(void)
{
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, NULL);
    int rc = cwork_enqueue_in(enq, "a", 60, no_args(), NULL, &err_);
    cwork_enqueuer_free(enq);
    return rc;
}

static int op_enqueue_unique(void)
{
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, NULL);
    int rc = cwork_enqueue_unique(enq, "a", no_args(), NULL, &err_);
    cwork_enqueuer_free(enq);
    return rc;
}

/* Under the upstream flavour a duplicate re-arms the guard it meets. */
static int op_enqueue_unique_upstream(void)
{
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, NULL);
    cwork_enqueuer_set_go_flavor(enq, CWORK_GO_UPSTREAM);
    int rc = cwork_enqueue_unique(enq, "a", no_args(), NULL, &err_);
    cwork_enqueuer_free(enq);
    return rc;
}

/* A plain, a delayed and a unique job of a name the enqueuer has not registered yet:
 * the batch script. Succeeds only as a whole; the unique one meets its guard. */
static int op_batch(void)
{
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, NULL);
    cwork_batch *b = cwork_batch_new(enq);
    int rc = cwork_batch_add(b, "a", no_args(), 0, 0, &err_);
    if (rc == 0) rc = cwork_batch_add(b, "a", no_args(), 60, CWORK_BATCH_IN, &err_);
    if (rc == 0) rc = cwork_batch_add(b, "a", no_args(), 0, CWORK_BATCH_UNIQUE, &err_);
    if (rc == 0) rc = cwork_enqueue_batch(b, &err_);
    if (rc == 0 && cwork_batch_status(b, 2, NULL) != CWORK_DUPLICATE) rc = 1;
    cwork_batch_free(b);
    cwork_enqueuer_free(enq);
    return rc;
}

static int op_periodic(void)
{
    cw_periodic *p = cw_periodic_new();
    int rc = cw_periodic_add(p, "0 * * * * *", "a", &err_);
    size_t scheduled = 0;
    if (rc == 0) rc = cw_periodic_run(p, redis_, &keys_, now_, &scheduled, &err_);
    cw_periodic_free(p);
    return rc;
}

static int op_delete(void)
{
    return cwork_client_delete(client_, CWORK_SET_DEAD, now_ - 100, "dead00000000000000000001",
                               &err_);
}

/* A job running in a pool that does not listen (nothing written either way), and a
 * retry job (found before the scan reaches dead; the script refuses). */
static int op_cancel_running(void)
{
    return cwork_client_cancel(client_, "inprogress00000000000001", NULL, &err_);
}

static int op_cancel_retry(void)
{
    return cwork_client_cancel(client_, "retry0000000000000000001", NULL, &err_);
}

static int op_delete_all(void)
{
    return cwork_client_delete_all(client_, CWORK_SET_RETRY, NULL, NULL, &err_);
}

static int op_delete_by_name(void)
{
    return cwork_client_delete_all_dead(client_, "a", NULL, &err_);
}

static int op_clear_queue(void)
{
    return cwork_client_clear_queue(client_, "a", NULL, &err_);
}

static int op_delete_waiting(void)
{
    const cwork_waiting_ref job = {"queued0000000000000000001", -1};
    return cwork_client_delete_waiting(client_, "a", &job, 1, NULL, NULL, &err_);
}

static int op_retry_dead(void)
{
    return cwork_client_retry_all_dead(client_, NULL, NULL, &err_);
}

static int op_run_now(void)
{
    int64_t stayed = 0;
    int rc = cwork_client_run_all_now(client_, CWORK_SET_RETRY, NULL, NULL, &stayed, &err_);
    return rc == 0 && stayed > 0 ? 2 : rc; /* 2: succeeded, with jobs that stayed */
}

static int op_requeue(void)
{
    static const char *const names[] = {"a"};
    size_t moved = 0;
    return cw_requeue_due(redis_, &keys_, CWORK_GO_FORK, names, 1, &moved, &err_);
}

static int op_reaper(void)
{
    static const char *const names[] = {"a"};
    cw_reaper *r = cw_reaper_new(redis_, &keys_, names, 1, 300, NULL, NULL);
    int ran = 0;
    int rc = cw_reaper_cycle(r, &ran, &err_);
    cw_reaper_free(r);
    return rc == 0 && !ran ? 3 : rc; /* 3: the lock was not taken */
}

/* The hook runs once the reaper holds its lock: damage the lock now, so that the lock's
 * renewal and release scripts meet it. */
static cwork_reap_done damage_lock_hook(void *userdata)
{
    (void)userdata;
    damage_key(late_key_, late_type_);
    return NULL;
}

static int op_reaper_lock_damaged_while_held(void)
{
    static const char *const names[] = {"a"};
    cw_reaper *r = cw_reaper_new(redis_, &keys_, names, 1, 300, damage_lock_hook, NULL);
    int ran = 0;
    int rc = cw_reaper_cycle(r, &ran, &err_);
    cw_reaper_free(r);
    return rc;
}

/* A pool running "a" for a while (its cycle script fetches and commits, its requeuer
 * moves due jobs, the unique guards of fetched jobs are released), then stopped. */
static int op_pool(void)
{
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 2;
    cwork_pool *p = cwork_pool_new(redis_, ns_, &o, &err_);
    if (!p) return err_.code;
    int rc = cwork_pool_register(p, "a", handler, NULL, &err_);
    if (rc == 0) rc = cwork_pool_start(p, &err_);
    if (rc == 0 && late_key_) damage_key(late_key_, late_type_);
    if (rc == 0) {
        tl_sleep_ms(1500);
        rc = cwork_pool_stop(p, 5000, &err_);
    }
    cwork_pool_free(p);
    return rc;
}

static int op_pool_failing(void)
{
    handler_fails_ = 1;
    int rc = op_pool();
    handler_fails_ = 0;
    return rc;
}

/* A unique job waiting in "a"'s queue whose guard is damaged: the pool fetches it, and
 * unique_release.lua reads the guard. */
static int op_pool_unique(void)
{
    tl_do(rc_, "LPUSH %s:jobs:a %s", ns_,
          "{\"name\":\"a\",\"id\":\"unique000000000000000001\",\"t\":1700000000,\"args\":{},"
          "\"unique\":true}");
    return op_pool();
}

/* ---------------------------------------------------------------- the cases */

#define ANY_ERROR (-1000)
static const char *const ANY_KEY[] = {"*", NULL};
static const char *const REAPER_KEYS[] = {
    "worker_pools", "worker_pools:deadpool", "jobs:a", "jobs:a:deadpool:inprogress",
    "jobs:a:lock",  "jobs:a:lock_info",      NULL};
static const char *const REQUEUED_KEYS[] = {"scheduled", "retry", "jobs:a", "dead", NULL};
static const char *const BATCH_KEYS[] = {"jobs:a", "scheduled", NULL};
static const char *const PERIODIC_KEYS[] = {"cwork:periodic", NULL};
static const char *const LOCK_KEYS[] = {
    "worker_pools", "worker_pools:deadpool", "jobs:a",      "jobs:a:deadpool:inprogress",
    "jobs:a:lock",  "jobs:a:lock_info",      "reaper_lock", NULL};

typedef struct dcase {
    const char *script; /* the script under test */
    const char *key;    /* the damaged key (suffix after "<ns>:"); "guard": the unique guard */
    const char *type;   /* what it holds instead: "string" or "list" */
    int (*op)(void);
    int want;                      /* the operation's result (ANY_ERROR: any error) */
    const char *const *may_change; /* other keys that may differ afterwards (NULL: none) */
    int late; /* damaged by the operation once it runs, not before (late_key_) */
} dcase;

static const dcase cases[] = {
    {"enqueue", "jobs:a", "string", op_enqueue, CWORK_EREDIS, NULL, 0},
    {"enqueue", "known_jobs", "string", op_enqueue, CWORK_EREDIS, NULL, 0},
    {"enqueue", "scheduled", "string", op_enqueue_in, CWORK_EREDIS, NULL, 0},
    {"enqueue_unique", "jobs:a", "string", op_enqueue_unique, CWORK_EREDIS, NULL, 0},
    {"enqueue_unique", "known_jobs", "string", op_enqueue_unique, CWORK_EREDIS, NULL, 0},
    {"enqueue_unique", "guard", "list", op_enqueue_unique, CWORK_DUPLICATE, NULL, 0},
    {"enqueue_unique", "guard", "list", op_enqueue_unique_upstream, CWORK_DUPLICATE, NULL, 0},
    {"enqueue_batch", "jobs:a", "string", op_batch, CWORK_EREDIS, NULL, 0},
    {"enqueue_batch", "scheduled", "string", op_batch, CWORK_EREDIS, NULL, 0},
    {"enqueue_batch", "known_jobs", "string", op_batch, CWORK_EREDIS, NULL, 0},
    {"enqueue_batch", "guard", "list", op_batch, 0, BATCH_KEYS, 0},
    {"periodic_schedule", "scheduled", "string", op_periodic, CWORK_EREDIS, PERIODIC_KEYS, 0},
    {"client_delete", "dead", "string", op_delete, CWORK_ETYPE, NULL, 0},
    {"client_cancel", "cwork:cancelled", "string", op_cancel_running, CWORK_ETYPE, NULL, 0},
    {"client_cancel", "dead", "string", op_cancel_retry, CWORK_ETYPE, NULL, 0},
    {"client_delete_all", "retry", "string", op_delete_all, CWORK_ETYPE, NULL, 0},
    {"client_delete_by_name", "dead", "string", op_delete_by_name, CWORK_ETYPE, NULL, 0},
    {"client_queue_clear", "jobs:a", "string", op_clear_queue, CWORK_ETYPE, NULL, 0},
    {"client_queue_delete", "jobs:a", "string", op_delete_waiting, CWORK_ETYPE, NULL, 0},
    {"client_retry_dead", "dead", "string", op_retry_dead, CWORK_ETYPE, NULL, 0},
    {"client_retry_dead", "jobs:a", "string", op_retry_dead, CWORK_EREDIS, NULL, 0},
    {"client_run_now", "retry", "string", op_run_now, CWORK_ETYPE, NULL, 0},
    {"client_run_now", "jobs:a", "string", op_run_now, 2, NULL, 0},
    {"requeue", "scheduled", "string", op_requeue, ANY_ERROR, REQUEUED_KEYS, 0},
    {"requeue", "retry", "string", op_requeue, ANY_ERROR, REQUEUED_KEYS, 0},
    {"requeue", "jobs:a", "string", op_requeue, 0, REQUEUED_KEYS, 0},
    {"requeue", "dead", "string", op_requeue, 0, REQUEUED_KEYS, 0},
    {"requeue", "known_jobs", "string", op_requeue, ANY_ERROR, REQUEUED_KEYS, 0},
    {"reaper_requeue", "jobs:a:deadpool:inprogress", "string", op_reaper, 0, REAPER_KEYS, 0},
    {"reaper_requeue", "jobs:a", "string", op_reaper, 0, REAPER_KEYS, 0},
    /* (read as no marks: the jobs go back to their queues) */
    {"reaper_requeue", "cwork:cancelled", "string", op_reaper, 0, REAPER_KEYS, 0},
    {"reaper_stale_locks", "jobs:a:lock", "list", op_reaper, 0, REAPER_KEYS, 0},
    {"reaper_stale_locks", "jobs:a:lock_info", "string", op_reaper, 0, REAPER_KEYS, 0},
    {"reaper_unknown_pools", "worker_pools", "string", op_reaper, 0, REAPER_KEYS, 0},
    {"reaper_heal_locks", "jobs:a:lock", "list", op_reaper, 0, REAPER_KEYS, 0},
    {"reaper_renew", "reaper_lock", "list", op_reaper, 3, NULL, 0},
    {"reaper_release", "reaper_lock", "list", op_reaper_lock_damaged_while_held, ANY_ERROR,
     LOCK_KEYS, 1},
    {"cycle", "jobs:a", "string", op_pool, 0, ANY_KEY, 0},
    {"cycle", "cwork:cancelled", "string", op_pool, 0, ANY_KEY, 0},
    {"cycle", "jobs:a:lock", "list", op_pool, 0, ANY_KEY, 0},
    /* (the pool's stop then cannot remove its lock_info field: it says so) */
    {"cycle", "jobs:a:lock_info", "string", op_pool, CWORK_EREDIS, ANY_KEY, 0},
    {"cycle", "jobs:a:paused", "list", op_pool, 0, ANY_KEY, 0},
    /* (a pool's start writes max_concurrency: damaged once the pool runs) */
    {"cycle", "jobs:a:max_concurrency", "list", op_pool, 0, ANY_KEY, 1},
    {"cycle", "retry", "string", op_pool_failing, 0, ANY_KEY, 0},
    {"unique_release", "guard", "list", op_pool_unique, 0, ANY_KEY, 0},
};

/* ---------------------------------------------------------------- the checks */

/* The dump's lines, each without its " ttl=N" (a TTL runs down while the case runs). */
typedef struct lines {
    char **v;
    size_t n;
} lines;

static lines split_dump(const char *dump)
{
    lines l = {calloc(4096, sizeof(char *)), 0};
    const char *p = dump;
    while (*p && l.n < 4096) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *line = malloc(len + 1);
        memcpy(line, p, len);
        line[len] = '\0';
        char *ttl = strstr(line, " ttl=");
        if (ttl) {
            char *end = strchr(ttl + 1, ' ');
            memmove(ttl, end ? end : ttl + strlen(ttl), strlen(end ? end : ttl + strlen(ttl)) + 1);
        }
        l.v[l.n++] = line;
        p = nl ? nl + 1 : p + len;
    }
    return l;
}

static void free_lines(lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

/* Whether a line is about <ns>:<suffix> for one of the suffixes. */
static int about(const char *line, const char *const *suffixes)
{
    for (size_t i = 0; suffixes && suffixes[i]; i++) {
        if (!strcmp(suffixes[i], "*")) return 1;
        char key[320];
        int n = snprintf(key, sizeof key, "%s:%s ", ns_, suffixes[i]);
        if (!strncmp(line, key, (size_t)n)) return 1;
    }
    return 0;
}

static int has_line(const lines *l, const char *line)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], line)) return 1;
    return 0;
}

/* Every line of a that is not about the keys that may change is in b. */
static void same_lines(const dcase *c, const lines *a, const lines *b, const char *which)
{
    for (size_t i = 0; i < a->n; i++)
        if (!about(a->v[i], c->may_change) && !has_line(b, a->v[i]))
            tl_fail(__FILE__, __LINE__, "%s / %s: %s: %s", c->script, c->key, which, a->v[i]);
}

/* The job ids (24 characters after "id":") in a dump. */
static size_t job_ids(const char *dump, char ids[][32], size_t cap)
{
    size_t n = 0;
    for (const char *p = strstr(dump, "\"id\":\""); p && n < cap; p = strstr(p + 6, "\"id\":\"")) {
        snprintf(ids[n], 25, "%s", p + 6);
        int seen = 0;
        for (size_t i = 0; i < n; i++)
            seen |= !strcmp(ids[i], ids[n]);
        if (!seen) n++;
    }
    return n;
}

static int was_handled(const char *id)
{
    for (int i = 0; i < handled_n_; i++)
        if (!strncmp(handled_[i], id, 24)) return 1;
    return 0;
}

static void run_case(const dcase *c)
{
    seed();
    handled_n_ = 0;
    memset(&err_, 0, sizeof err_);
    const char *key = c->key;
    if (!strcmp(key, "guard")) key = guard_key_;
    late_key_ = c->late ? key : NULL;
    late_type_ = c->type;
    if (!c->late) damage_key(key, c->type);
    char *before = tl_ns_dump(rc_, ns_);
    int rc = c->op();
    late_key_ = NULL;
    char *after = tl_ns_dump(rc_, ns_);

    if (c->want == ANY_ERROR ? rc >= 0 : rc != c->want)
        tl_fail(__FILE__, __LINE__, "%s / %s damaged: result %d (%s), want %d", c->script, c->key,
                rc, err_.message, c->want);
    lines a = split_dump(before), b = split_dump(after);
    /* The damaged key as it was; the others as they were unless they may change. */
    const char *const damaged[] = {key, NULL};
    for (size_t i = 0; i < a.n; i++)
        if (about(a.v[i], damaged) && !has_line(&b, a.v[i]))
            tl_fail(__FILE__, __LINE__, "%s / %s: the damaged key changed: %s", c->script, c->key,
                    a.v[i]);
    same_lines(c, &a, &b, "changed or gone");
    same_lines(c, &b, &a, "written");
    /* No job lost. */
    static char ids[64][32];
    size_t n = job_ids(before, ids, 64);
    for (size_t i = 0; i < n; i++)
        if (!strstr(after, ids[i]) && !was_handled(ids[i]))
            tl_fail(__FILE__, __LINE__, "%s / %s damaged: job %s lost\nbefore:\n%s\nafter:\n%s",
                    c->script, c->key, ids[i], before, after);
    if (c->late) { /* damaged while the operation ran: left as it is */
        char want[400];
        snprintf(want, sizeof want, "%s:%s %s damaged", ns_, key, c->type);
        if (!has_line(&b, want))
            tl_fail(__FILE__, __LINE__, "%s / %s damaged while it ran: not left as it is:\n%s",
                    c->script, c->key, after);
    }
    free_lines(&a);
    free_lines(&b);
    free(before);
    free(after);
    tl_ns_delete(rc_, ns_);
}

/* Every script of src/scripts/ has cases. */
static void every_script_is_covered(void)
{
    static const char *const scripts[] = {
        "client_cancel",
        "client_delete",
        "client_queue_delete",
        "client_delete_all",
        "client_delete_by_name",
        "client_queue_clear",
        "client_retry_dead",
        "client_run_now",
        "cycle",
        "enqueue",
        "enqueue_batch",
        "enqueue_unique",
        "periodic_schedule",
        "reaper_heal_locks",
        "reaper_release",
        "reaper_renew",
        "reaper_requeue",
        "reaper_stale_locks",
        "reaper_unknown_pools",
        "requeue",
        "unique_release",
    };
    for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
        int found = 0;
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            found |= !strcmp(cases[k].script, scripts[i]);
        if (!found) tl_fail(__FILE__, __LINE__, "no damaged-key case for %s.lua", scripts[i]);
    }
}

static void enqueue_scripts(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!strncmp(cases[i].script, "enqueue", 7) ||
            !strcmp(cases[i].script, "periodic_schedule"))
            run_case(&cases[i]);
}

static void client_scripts(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!strncmp(cases[i].script, "client_", 7)) run_case(&cases[i]);
}

static void requeue_and_reaper_scripts(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!strncmp(cases[i].script, "requeue", 7) || !strncmp(cases[i].script, "reaper_", 7))
            run_case(&cases[i]);
}

static void pool_scripts(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(cases[i].script, "cycle") || !strcmp(cases[i].script, "unique_release"))
            run_case(&cases[i]);
}

/* The guard key of name "a" with args {}, found by enqueuing once in a namespace of
 * its own. */
static void find_guard_key(void)
{
    char ns[64];
    tl_unique_ns("dmg-guard", ns, sizeof ns);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns, NULL);
    cwork_error err = {0};
    if (cwork_enqueue_unique(enq, "a", no_args(), NULL, &err) != 0) {
        fprintf(stderr, "enqueue_unique: %s\n", err.message);
        exit(1);
    }
    cwork_enqueuer_free(enq);
    redisReply *k = tl_cmd(rc_, "KEYS %s:unique:*", ns);
    if (k->type != REDIS_REPLY_ARRAY || k->elements != 1) {
        fprintf(stderr, "no unique guard written\n");
        exit(1);
    }
    snprintf(guard_key_, sizeof guard_key_, "%s", k->element[0]->str + strlen(ns) + 1);
    freeReplyObject(k);
    tl_ns_delete(rc_, ns);
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
    find_guard_key();
    RUN(every_script_is_covered);
    RUN(enqueue_scripts);
    RUN(client_scripts);
    RUN(requeue_and_reaper_scripts);
    RUN(pool_scripts);
    cwork_client_free(client_);
    cw_keys_clear(&keys_);
    cwork_args_free(no_args());
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
