#define _GNU_SOURCE /* pthread_rwlockattr_setkind_np */
/* Worker pool life cycle: options, creation, registration, statistics and release.
 * Start, stop and drain are in pool_run.c, the shards' layout in pool_shards.c, the
 * threads themselves in executor.c, dispatcher.c, maintenance.c and
 * wakeup_subscriber.c. */
#include "flavor.h"
#include "log.h"
#include "pool.h"
#include "rate_limit.h"

#include <errno.h>

#include <string.h>
#include <time.h>

void cwork_pool_options_init(cwork_pool_options *o)
{
    memset(o, 0, sizeof *o);
    o->concurrency = CW_DEFAULT_CONCURRENCY;
    o->idle_backoff_max_ms = CW_DEFAULT_IDLE_BACKOFF_MAX_MS;
    o->reap_period_ms = CW_REAPER_DEFAULT_PERIOD * 1000;
    o->dead_check_ms = CW_REAPER_DEFAULT_CHECK_MS;
    o->watchdog_timeout_ms = CW_WATCHDOG_DEFAULT_TIMEOUT * 1000;
}

void cwork_job_options_init(cwork_job_options *o)
{
    memset(o, 0, sizeof *o);
    o->priority = 1;
    o->max_fails = CW_DEFAULT_MAX_FAILS;
}

/* ---------------------------------------------------------------- task queues */

void cw_tq_push(cw_task_queue *q, cw_task *t)
{
    CW_ASSERT((q->head == NULL) == (q->len == 0) && (q->tail == NULL) == (q->len == 0));
    CW_ASSERT(t != q->tail); /* not pushed twice */
    t->next = NULL;
    if (q->tail)
        q->tail->next = t;
    else
        q->head = t;
    q->tail = t;
    q->len++;
}

cw_task *cw_tq_pop(cw_task_queue *q)
{
    cw_task *t = q->head;
    if (t) {
        CW_ASSERT(q->len > 0);
        q->head = t->next;
        if (!q->head) q->tail = NULL;
        q->len--;
        t->next = NULL;
    }
    return t;
}

cw_task *cw_tq_take_all(cw_task_queue *q)
{
    cw_task *t = q->head;
    q->head = q->tail = NULL;
    q->len = 0;
    return t;
}

void cw_task_free(cw_task *t)
{
    if (!t) return;
    cw_task_close_stop_fd(t); /* (closed already unless the task never ran) */
    cwork_job_free(t->job);
    cw_free(t->raw);
    cw_free(t->fail_message);
    cw_free(t->result);
    cw_free(t);
}

cw_task *cw_task_new(cw_job_type *type, const char *bytes, size_t len)
{
    cw_task *t = cw_calloc(1, sizeof *t);
    if (!t) return NULL;
    t->type = type;
    t->stop_pipe[0] = t->stop_pipe[1] = -1;
    t->raw = cw_strndup(bytes, len);
    if (!t->raw) {
        cw_free(t);
        return NULL;
    }
    t->raw_len = len;
    cwork_error derr = {0};
    if (cw_job_decode(bytes, len, &t->job, &derr) != 0) {
        t->job = NULL;
        memcpy(t->decode_error, derr.message, sizeof t->decode_error); /* same size */
        t->failed = 1; /* straight to dead; the executor skips it */
    }
    return t;
}

/* ---------------------------------------------------------------- creation */

int cw_pool_set_tuning(cwork_pool *p, const cw_pool_tuning *t)
{
    if (p->started) return CWORK_EINVAL;
    cw_pool_free_shards(p);
    p->tuning = *t;
    return cw_pool_build_shards(p);
}

cwork_pool *cwork_pool_new(cwork_redis *redis, const char *ns, const cwork_pool_options *opts,
                           cwork_error *err)
{
    cwork_pool_options o;
    if (opts)
        o = *opts;
    else
        cwork_pool_options_init(&o);
    if (!redis || !ns) {
        cw_error(err, CWORK_EINVAL, "cwork_pool_new: redis and namespace are required");
        return NULL;
    }
    if (cw_check_duration_ms("idle_backoff_max_ms", o.idle_backoff_max_ms, err) ||
        cw_check_duration_ms("reap_period_ms", o.reap_period_ms, err) ||
        cw_check_duration_ms("dead_check_ms", o.dead_check_ms, err) ||
        cw_check_duration_ms("watchdog_timeout_ms", o.watchdog_timeout_ms, err))
        return NULL;
    if (o.concurrency == 0) o.concurrency = CW_DEFAULT_CONCURRENCY;
    if (o.concurrency > CW_MAX_CONCURRENCY) {
        cw_error(err, CWORK_EINVAL, "concurrency %u is over the limit of %d", o.concurrency,
                 CW_MAX_CONCURRENCY);
        return NULL;
    }
    if (cw_nsshards_check_options(ns, &o, err) != 0) return NULL;
    if (o.idle_backoff_max_ms == 0) o.idle_backoff_max_ms = CW_DEFAULT_IDLE_BACKOFF_MAX_MS;
    if (o.reap_period_ms == 0) o.reap_period_ms = CW_REAPER_DEFAULT_PERIOD * 1000;
    if (o.dead_check_ms == 0) o.dead_check_ms = CW_REAPER_DEFAULT_CHECK_MS;
    if (o.watchdog_timeout_ms == 0) o.watchdog_timeout_ms = CW_WATCHDOG_DEFAULT_TIMEOUT * 1000;
    if (cw_go_flavor_check(o.go_flavor, "cwork_pool_new", err) != 0) return NULL;
    if (cw_go_json_check(o.go_json, "cwork_pool_new", err) != 0) return NULL;
    if (cw_redis_use_namespace(redis, ns, err) != 0) /* Redis Cluster: a hash tag */
        return NULL;
    cwork_pool *p = cw_calloc(1, sizeof *p);
    if (!p) goto oom;
    p->redis = redis;
    p->opts = o;
    p->ns = cw_strdup(ns);
    p->executors = cw_calloc(o.concurrency, sizeof *p->executors);
    if (!p->ns || !p->executors || cw_keys_init(&p->keys, ns) != 0) goto oom;
    if (cw_make_id(p->id) != 0) {
        cw_error(err, CWORK_EINVAL, "cannot read the OS random source for the pool id");
        goto fail;
    }
    for (size_t i = 0; i < o.concurrency; i++) {
        p->executors[i].pool = p;
        p->executors[i].index = i;
        if (cw_make_id(p->executors[i].worker_id) != 0) {
            cw_error(err, CWORK_EINVAL, "cannot read the OS random source for worker ids");
            goto fail;
        }
    }
    cw_pool_tuning_init(&p->tuning);
    if (cw_pool_build_shards(p) != 0) goto oom;
    cw_mutex_init(&p->mu);
    cw_mutex_init(&p->stop_mu);
    /* Writer-preferring: a reclaim must not wait behind a stream of round trips. */
    pthread_rwlockattr_t rwa;
    pthread_rwlockattr_init(&rwa);
    pthread_rwlockattr_setkind_np(&rwa, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&p->fetch_lock, &rwa);
    pthread_rwlockattr_destroy(&rwa);
    cw_cond_init_monotonic(&p->idle_cond);
    if (cw_lease_init(p) != 0) goto oom; /* (a condition without its clock: never on Linux) */
    return p;
oom:
    cw_error(err, CWORK_ENOMEM, "out of memory");
fail:
    if (p) {
        cw_keys_clear(&p->keys);
        cw_free(p->shards);
        cw_free(p->executors);
        cw_free(p->ns);
        cw_free(p);
    }
    return NULL;
}

void cw_pool_notify_idle(cwork_pool *p)
{
#ifdef CW_ASSERTS
    for (size_t i = 0; i < p->nshards; i++) /* pool->mu comes before a shard's */
        cw_mutex_assert_not_held(&p->shards[i].mu);
#endif
    cw_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->idle_cond);
    cw_mutex_unlock(&p->mu);
}

const char *cwork_pool_id(const cwork_pool *p)
{
    return p->id;
}

cw_job_type *cw_pool_find_type(cwork_pool *p, const char *name, size_t len)
{
    for (size_t i = 0; i < p->ntypes; i++)
        if (strlen(p->types[i].name) == len && memcmp(p->types[i].name, name, len) == 0)
            return &p->types[i];
    return NULL;
}

static void type_clear(cw_job_type *t)
{
    cw_free(t->name);
    cw_free(t->rate_key);
    for (int i = 0; i < CW_CYCLE_KEY_KINDS; i++)
        cw_free(t->keys[i]);
    memset(t, 0, sizeof *t);
}

static int type_build_keys(cwork_pool *p, cw_job_type *t)
{
    cw_buf b;
    for (int i = 0; i < CW_CYCLE_KEY_KINDS; i++) {
        cw_buf_init(&b);
        switch ((cw_cycle_key)i) {
        case CW_CYCLE_QUEUE:
            cw_key_queue(&p->keys, &b, t->name);
            break;
        case CW_CYCLE_INPROGRESS:
            cw_key_inprogress(&p->keys, &b, t->name, p->id);
            break;
        case CW_CYCLE_PAUSED:
            cw_key_paused(&p->keys, &b, t->name);
            break;
        case CW_CYCLE_LOCK:
            cw_key_lock(&p->keys, &b, t->name);
            break;
        case CW_CYCLE_LOCK_INFO:
            cw_key_lock_info(&p->keys, &b, t->name);
            break;
        case CW_CYCLE_MAX_CONCURRENCY:
        case CW_CYCLE_KEY_KINDS:
        case CW_CYCLE_NAME:
        case CW_CYCLE_RATE_LIMIT:
            cw_key_max_concurrency(&p->keys, &b, t->name);
            break;
        }
        t->keys[i] = cw_buf_take(&b, &t->key_lens[i]);
        if (!t->keys[i]) return CWORK_ENOMEM;
    }
    cw_buf_init(&b);
    cw_key_rate_limit(&p->keys, &b, t->name);
    t->rate_key = cw_buf_take(&b, &t->rate_key_len);
    t->name_len = strlen(t->name);
    return t->rate_key ? 0 : CWORK_ENOMEM;
}

/* The rate_limit options: none, or both in range. */
static int check_rate_limit(const char *name, const cwork_job_options *o, cwork_error *err)
{
    if (o->rate_limit == 0) return 0;
    char text[CW_RATE_LIMIT_TEXT_MAX];
    if (cwork_rate_limit_format(o->rate_limit, o->rate_limit_window_ms, text, sizeof text, NULL))
        return cw_error(err, CWORK_EINVAL,
                        "register %.64s: rate_limit %u per rate_limit_window_ms %lld: want 1 to "
                        "%u jobs per 1 ms to 7 days",
                        name, o->rate_limit, (long long)o->rate_limit_window_ms,
                        CW_RATE_LIMIT_MAX_COUNT);
    return 0;
}

int cwork_pool_register(cwork_pool *p, const char *name, cwork_handler handler,
                        const cwork_job_options *opts, cwork_error *err)
{
    if (!p || !handler)
        return cw_error(err, CWORK_EINVAL, "register: pool and handler are required");
    if (p->started) return cw_error(err, CWORK_EINVAL, "register: the pool is already started");
    if (p->nsshards) return cw_nsshards_configured(err, "register");
    int rc = cwork_validate_job_name(name, err);
    if (rc) return rc;
    cw_job_type t;
    memset(&t, 0, sizeof t);
    if (opts)
        t.opts = *opts;
    else
        cwork_job_options_init(&t.opts);
    if (t.opts.priority == 0) t.opts.priority = 1;
    if (t.opts.priority > CW_MAX_PRIORITY)
        return cw_error(err, CWORK_EINVAL, "register %.64s: priority %u is over %d", name,
                        t.opts.priority, CW_MAX_PRIORITY);
    if (t.opts.max_fails == 0) t.opts.max_fails = CW_DEFAULT_MAX_FAILS;
    if ((rc = check_rate_limit(name, &t.opts, err)) != 0) return rc;
    rc = cw_check_duration_ms("result_ttl_ms", t.opts.result_ttl_ms, err);
    if (rc == 0) rc = cw_check_duration_ms("keep_succeeded_ms", t.opts.keep_succeeded_ms, err);
    if (rc) return rc;
    if (t.opts.result_ttl_ms == 0) t.opts.result_ttl_ms = CW_DEFAULT_RESULT_TTL_MS;
    if (t.opts.keep_succeeded_ms == 0) t.opts.keep_succeeded_ms = CW_DEFAULT_KEEP_SUCCEEDED_MS;
    t.handler = handler;
    t.name = cw_strdup(name);
    if (!t.name || type_build_keys(p, &t) != 0) {
        type_clear(&t);
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    cw_job_type *existing = cw_pool_find_type(p, name, strlen(name));
    if (existing) { /* registering a name again replaces it */
        type_clear(existing);
        *existing = t;
        return 0;
    }
    if (p->ntypes >= CW_MAX_JOB_TYPES) {
        /* The cycle script unpacks three keys per type into one MGET; Lua's stack takes
         * about 8000 values. */
        type_clear(&t);
        return cw_error(err, CWORK_EINVAL, "register %.64s: a pool takes at most %d job types",
                        name, CW_MAX_JOB_TYPES);
    }
    cw_job_type *types = cw_realloc(p->types, (p->ntypes + 1) * sizeof *types);
    if (!types) {
        type_clear(&t);
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    p->types = types;
    p->types[p->ntypes++] = t;
    return 0;
}

int cwork_pool_use(cwork_pool *p, cwork_middleware mw, cwork_error *err)
{
    if (!p || !mw) return cw_error(err, CWORK_EINVAL, "use: pool and middleware are required");
    if (p->started) return cw_error(err, CWORK_EINVAL, "use: the pool is already started");
    if (p->nsshards) return cw_nsshards_configured(err, "use");
    cwork_middleware *m = cw_realloc(p->middleware, (p->nmiddleware + 1) * sizeof *m);
    if (!m) return cw_error(err, CWORK_ENOMEM, "out of memory");
    p->middleware = m;
    p->middleware[p->nmiddleware++] = mw;
    return 0;
}

int cwork_pool_periodically_enqueue(cwork_pool *p, const char *spec, const char *name,
                                    cwork_error *err)
{
    if (!p || !spec || !name)
        return cw_error(err, CWORK_EINVAL,
                        "periodically_enqueue: pool, spec and name are required");
    if (p->started)
        return cw_error(err, CWORK_EINVAL, "periodically_enqueue: the pool is already started");
    if (p->nsshards) return cw_nsshards_configured(err, "periodically_enqueue");
    int rc = cwork_validate_job_name(name, err);
    if (rc) return rc;
    if (!p->periodic && !(p->periodic = cw_periodic_new()))
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    cw_periodic_set_flavor(p->periodic, p->opts.go_flavor);
    cw_periodic_set_go_json(p->periodic, p->opts.go_json);
    return cw_periodic_add(p->periodic, spec, name, err);
}

int cwork_pool_watchdog_stats(cwork_pool *p, cwork_watchdog_stat **out, size_t *n, cwork_error *err)
{
    *out = NULL;
    *n = 0;
    if (!p) return cw_error(err, CWORK_EINVAL, "watchdog_stats: pool is NULL");
    if (p->nsshards) return cw_nsshards_watchdog_stats(p, out, n, err);
    if (!p->watchdog) return 0;
    if (cw_watchdog_stats(p->watchdog, out, n) != 0)
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    return 0;
}

void cwork_pool_get_stats(const cwork_pool *p, cwork_pool_stats *s)
{
    cwork_pool *mp = (cwork_pool *)p;
    if (mp->nsshards) {
        cw_nsshards_get_stats(mp, s);
        return;
    }
    s->fetched = atomic_load(&mp->n_fetched);
    s->succeeded = atomic_load(&mp->n_succeeded);
    s->failed = atomic_load(&mp->n_failed);
    s->retried = atomic_load(&mp->n_retried);
    s->dead = atomic_load(&mp->n_dead);
    s->in_flight = cw_pool_in_flight(mp);
}

void cwork_pool_free(cwork_pool *p)
{
    if (!p) return;
    if (p->started && cwork_pool_stop(p, CW_DEFAULT_STOP_GRACE_MS, NULL) != 0) {
        /* Handlers still run on our threads: freeing would pull memory from under them. */
        cw_log(CWORK_LOG_ERROR, "pool.free", "error",
               "handlers still running after the grace period; the pool is leaked", NULL);
        return;
    }
    cw_nsshards_free(p);
    for (size_t i = 0; i < p->ntypes; i++)
        type_clear(&p->types[i]);
    cw_free(p->types);
    cw_pool_rate_limits_free(p);
    cw_free(p->middleware);
    cw_pool_free_shards(p);
    cw_free(p->executors);
    cw_heartbeat_free(p->heartbeat);
    cw_observer_free(p->observer);
    cw_reaper_free(p->reaper);
    cw_watchdog_free(p->watchdog);
    cw_periodic_free(p->periodic);
    cw_mutex_destroy(&p->mu);
    cw_mutex_destroy(&p->stop_mu);
    pthread_rwlock_destroy(&p->fetch_lock);
    pthread_cond_destroy(&p->idle_cond);
    cw_lease_destroy(p);
    cw_keys_clear(&p->keys);
    cw_free(p->ns);
    cw_free(p);
}
