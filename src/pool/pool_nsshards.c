/* A pool on a sharded namespace (PROTOCOL §27.4; pool_nsshards.h says the shape): the
 * shard record at start, one inner pool per namespace shard with the outer pool's
 * registrations, and start, stop, drain and statistics over all of them. A namespace
 * shard is one of the S namespaces of §27, not a dispatcher group (cw_shard). */
#include "pool_nsshards.h"

#include "log.h"
#include "sharding.h"

#include <string.h>
#include <time.h>

int cw_nsshards_check_options(const char *ns, const cwork_pool_options *o, cwork_error *err)
{
    if (o->shards > CW_SHARDING_MAX)
        return cw_error(err, CWORK_EINVAL, "shards %u is over the limit of %d", o->shards,
                        CW_SHARDING_MAX);
    if (o->shards <= 1) return 0;
    unsigned concurrency = o->concurrency ? o->concurrency : CW_DEFAULT_CONCURRENCY;
    if (concurrency < o->shards)
        return cw_error(err, CWORK_EINVAL,
                        "concurrency %u is below shards %u: each shard needs an executor",
                        concurrency, o->shards);
    return cw_sharding_check_ns(ns, err);
}

static bool type_pinned(const cw_job_type *t)
{
    return t->opts.max_concurrency > 0 || t->opts.rate_limit > 0;
}

/* Whether inner pool i runs type t: every shard runs an unpinned type; a pinned one only
 * in its home. */
static bool shard_runs(const cw_nsshards *s, const cw_job_type *t, unsigned i)
{
    if (!type_pinned(t)) return true;
    for (size_t k = 0; k < s->npins; k++)
        if (s->pins[k].name == t->name) return s->pins[k].home == i;
    return true; /* (every pinned type has a pin) */
}

/* The outer pool's job types, middleware and the periodic jobs whose name lands on
 * shard i, registered on inner pool q. */
static int inner_register(cwork_pool *p, const cw_nsshards *s, cwork_pool *q, unsigned i,
                          cwork_error *err)
{
    int rc = 0;
    for (size_t k = 0; k < p->ntypes && rc == 0; k++) {
        const cw_job_type *t = &p->types[k];
        if (shard_runs(s, t, i)) rc = cwork_pool_register(q, t->name, t->handler, &t->opts, err);
    }
    for (size_t k = 0; k < p->nmiddleware && rc == 0; k++)
        rc = cwork_pool_use(q, p->middleware[k], err);
    size_t nperiodic = p->periodic ? cw_periodic_count(p->periodic) : 0;
    for (size_t k = 0; k < nperiodic && rc == 0; k++) {
        /* PROTOCOL §27.2: a periodic job's routing key is its name. */
        const char *name = cw_periodic_name(p->periodic, k);
        if (cw_sharding_of(name, strlen(name), s->homes) == i) /* homes: kept across a grow */
            rc = cwork_pool_periodically_enqueue(q, cw_periodic_spec(p->periodic, k), name, err);
    }
    return rc;
}

/* Inner pool i of a namespace of count shards, seated in the shared budget: it may run
 * every job of the budget when the other shards have none (up to cw_nsshards_executors
 * executors), with as many dispatchers as its ⌈N / S⌉ split would have had, so that
 * idle shards cost no more round trips than before. */
int cw_nsshards_inner_make(cwork_pool *p, cw_nsshards *s, unsigned i, unsigned count,
                           cwork_error *err)
{
    char ns[256];
    int rc = cw_sharding_ns(p->ns, i, ns, sizeof ns, err);
    if (rc) return rc;
    cwork_error e = {0};
    if (i == 0) {
        s->redis[0] = p->redis;
    } else if (!(s->redis[i] = cw_redis_clone(p->redis, &e))) {
        return cw_error(err, e.code ? e.code : CWORK_ENOMEM, "shard %s: %s", ns, e.message);
    }
    cwork_pool_options o = p->opts;
    o.concurrency = cw_nsshards_executors(p->opts.concurrency, count);
    o.shards = 0;
    cw_pool_tuning tuning = p->tuning;
    size_t split = p->opts.concurrency / count + (p->opts.concurrency % count != 0);
    size_t groups = split / (tuning.shard_executors ? tuning.shard_executors : 1);
    if (groups < tuning.max_shards) tuning.max_shards = groups ? (unsigned)groups : 1;
    cwork_pool *q = cwork_pool_new(s->redis[i], ns, &o, &e);
    if (!q) return cw_error(err, e.code, "shard %s: %s", ns, e.message);
    s->pools[i] = q;
    q->nsshard_member = true;
    /* Shard 0's heartbeat carries the id cwork_pool_id gives (the outer pool beats none);
     * set before any type is registered: its in-progress keys hold it. */
    if (i == 0) memcpy(q->id, p->id, sizeof q->id);
    if ((rc = cw_pool_set_tuning(q, &tuning)) != 0)
        return cw_error(err, rc, "shard %s: out of memory", ns);
    if ((rc = cw_nsshards_budget_join(s->budget, q, &e)) != 0)
        return cw_error(err, rc, "shard %s: %s", ns, e.message);
    if ((rc = inner_register(p, s, q, i, &e)) != 0)
        return cw_error(err, rc, "shard %s: %s", ns, e.message);
    return 0;
}

/* The pinned types of the outer pool, each with its home shard. */
static int pins_make(cwork_pool *p, cw_nsshards *s, cwork_error *err)
{
    s->pins = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *s->pins);
    if (!s->pins) return cw_error(err, CWORK_ENOMEM, "out of memory");
    for (size_t k = 0; k < p->ntypes; k++) {
        const cw_job_type *t = &p->types[k];
        if (!type_pinned(t)) continue;
        s->pins[s->npins].name = t->name;
        s->pins[s->npins++].home = cw_sharding_of(t->name, t->name_len, s->homes);
    }
    return 0;
}

static void nsshards_destroy(cw_nsshards *s)
{
    if (!s) return;
    for (unsigned i = 0; i < s->count; i++) {
        if (s->pools) cwork_pool_free(s->pools[i]);
        if (s->redis && i > 0) cwork_redis_free(s->redis[i]);
    }
    cw_free(s->pools);
    cw_free(s->redis);
    cw_free(s->pins);
    cw_nsshards_go_free(s);
    cw_nsshards_budget_free(s->budget);
    cw_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cond);
    cw_free(s);
}

static int nsshards_make(cwork_pool *p, unsigned count, unsigned homes, cw_nsshards **out,
                         cwork_error *err)
{
    if (p->opts.concurrency < count)
        return cw_error(err, CWORK_EINVAL,
                        "concurrency %u is below the %u shards of the namespace (%s): each "
                        "shard needs an executor",
                        p->opts.concurrency, count, p->ns);
    cw_nsshards *s = cw_calloc(1, sizeof *s);
    if (!s) return cw_error(err, CWORK_ENOMEM, "out of memory");
    cw_mutex_init(&s->mu);
    cw_cond_init_monotonic(&s->cond);
    s->homes = homes;
    /* room for every count a grow may reach (§27.5) */
    s->pools = cw_calloc(CW_SHARDING_MAX, sizeof *s->pools);
    s->redis = cw_calloc(CW_SHARDING_MAX, sizeof *s->redis);
    s->budget = cw_nsshards_budget_new(p->opts.concurrency);
    int rc = !s->pools || !s->redis || !s->budget ? cw_error(err, CWORK_ENOMEM, "out of memory")
                                                  : pins_make(p, s, err);
    for (unsigned i = 0; i < count && rc == 0; i++)
        rc = cw_nsshards_inner_make(p, s, i, count, err);
    s->count = count;
    if (rc) {
        nsshards_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* SADD <p>cwork:shard_pinned in shard 0: enqueuers route these names by name (§27.4). */
static int pins_publish(cwork_pool *p, const cw_nsshards *s, cwork_error *err)
{
    if (s->npins == 0) return 0;
    cw_buf key;
    cw_buf_init(&key);
    cw_key_shard_pinned(&p->keys, &key);
    const char **argv = cw_calloc(s->npins + 2, sizeof *argv);
    int rc;
    if (!argv || key.oom) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    } else {
        argv[0] = "SADD";
        argv[1] = key.data;
        for (size_t k = 0; k < s->npins; k++)
            argv[k + 2] = s->pins[k].name;
        rc = cw_redis_command(p->redis, (int)(s->npins + 2), argv, NULL, NULL, err);
    }
    cw_free(argv);
    cw_buf_free(&key);
    return rc;
}

/* A stop of one inner pool on a thread of its own, so that every shard's grace runs at
 * once. */
typedef struct inner_stop {
    cwork_pool *pool;
    int64_t grace_ms;
    int rc;
    cwork_error err;
    pthread_t thread;
    bool threaded;
} inner_stop;

static void *inner_stop_main(void *arg)
{
    inner_stop *st = arg;
    st->rc = cwork_pool_stop(st->pool, st->grace_ms, &st->err);
    return NULL;
}

/* Stops the first n inner pools at once; the first error into err. */
static int stop_inner(cw_nsshards *s, unsigned n, int64_t grace_ms, cwork_error *err)
{
    inner_stop *st = cw_calloc(n ? n : 1, sizeof *st);
    int rc = 0;
    for (unsigned i = 0; i < n; i++) {
        if (st) {
            st[i].pool = s->pools[i];
            st[i].grace_ms = grace_ms;
            st[i].threaded = i > 0 && cw_thread_create(&st[i].thread, inner_stop_main, &st[i]) == 0;
            if (!st[i].threaded && i > 0) inner_stop_main(&st[i]);
        } else { /* out of memory: one after the other */
            cwork_error e = {0};
            int r = cwork_pool_stop(s->pools[i], grace_ms, &e);
            if (r && !rc) rc = cw_error(err, r, "shard %s: %s", s->pools[i]->ns, e.message);
        }
    }
    if (!st) return rc;
    if (n > 0) inner_stop_main(&st[0]);
    for (unsigned i = 0; i < n; i++) {
        if (st[i].threaded) pthread_join(st[i].thread, NULL);
        if (st[i].rc && !rc)
            rc = cw_error(err, st[i].rc, "shard %s: %s", s->pools[i]->ns, st[i].err.message);
    }
    cw_free(st);
    return rc;
}

int cw_nsshards_start(cwork_pool *p, bool *served, cwork_error *err)
{
    /* The pool's own declaration, else its Redis URL's shards= (PROTOCOL §27.1). */
    unsigned declared = p->opts.shards ? p->opts.shards : cw_redis_declared_shards(p->redis);
    cw_sharding_state st;
    cw_nsshards *s = p->nsshards;
    /* A pool started before follows a grow (§27.5); a new one must agree with the record. */
    int rc = cw_sharding_record_state(p->redis, p->ns, declared, s != NULL, &st, err);
    if (rc) return rc;
    unsigned count = st.count;
    if (s && (count < s->count || st.homes != s->homes)) /* (only a deleted record does this) */
        return cw_error(err, CWORK_EINVAL,
                        "the shard record of %s now says %u shards (names by %u); this pool "
                        "serves %u (names by %u)",
                        p->ns, count, st.homes, s->count, s->homes);
    if (count <= 1) return 0; /* an unsharded pool, as ever */
    *served = true;
    if (!s) {
        if ((rc = nsshards_make(p, count, st.homes, &s, err)) != 0) return rc;
        p->nsshards = s;
    }
    if ((rc = pins_publish(p, s, err)) != 0) return rc;
    unsigned started = 0;
    for (; started < s->count && rc == 0; started++) {
        cwork_error e = {0};
        if ((rc = cwork_pool_start(s->pools[started], &e)) != 0)
            cw_error(err, rc, "shard %s: %s", s->pools[started]->ns, e.message);
    }
    /* Grown meanwhile (§27.5): cw_nsshards_grow starts every inner pool it counts, so
     * after a complete loop every counted one is started, even when a grow fails. */
    bool all = rc == 0;
    if (rc == 0 && count > s->count) rc = cw_nsshards_grow(p, s, count, err);
    if (all) started = s->count;
    if (rc == 0) rc = cw_nsshards_mover_start(s, err);
    if (rc == 0) rc = cw_nsshards_follower_start(p, s, err);
    if (rc) {
        cw_nsshards_mover_stop(s);
        stop_inner(s, started, CW_DEFAULT_STOP_GRACE_MS, NULL);
        return rc;
    }
    p->started = 1;
    return 0;
}

int cw_nsshards_stop(cwork_pool *p, int64_t grace_ms, cwork_error *err)
{
    cw_nsshards *s = p->nsshards;
    cw_nsshards_follower_stop(s); /* first: the count stays as it is */
    cw_nsshards_mover_stop(s);
    int rc = stop_inner(s, s->count, grace_ms, err);
    /* A timed-out inner pool stays started: a later stop tries it again. */
    if (rc == 0) p->started = 0;
    return rc;
}

/* Drains every inner pool in turn, with what is left of the time. */
static int drain_inner(cw_nsshards *s, bool forever, int64_t end, cwork_error *err)
{
    for (unsigned i = 0; i < s->count; i++) {
        int64_t left = forever ? -1 : end - cw_monotonic_ms();
        cwork_error e = {0};
        int rc = cwork_pool_drain(s->pools[i], forever ? -1 : (left > 0 ? left : 0), &e);
        if (rc) return cw_error(err, rc, "shard %s: %s", s->pools[i]->ns, e.message);
    }
    return 0;
}

int cw_nsshards_drain(cwork_pool *p, int64_t timeout_ms, cwork_error *err)
{
    cw_nsshards *s = p->nsshards;
    bool forever = timeout_ms < 0 || timeout_ms > CW_MAX_DURATION_MS;
    int64_t end = forever ? INT64_MAX : cw_monotonic_ms() + timeout_ms;
    for (;;) {
        /* Twice over: jobs may reach a shard drained earlier while a later one drains (a
         * requeued retry, a moved pinned job); the second pass costs an LLEN per type. */
        int rc = drain_inner(s, forever, end, err);
        if (rc == 0) rc = drain_inner(s, forever, end, err);
        int64_t strays = 0; /* pinned jobs not yet home: the mover owes them a run */
        if (rc == 0) rc = cw_nsshards_strays(s, &strays, err);
        if (rc || strays == 0) return rc;
        if (cw_monotonic_ms() >= end)
            return cw_error(err, CWORK_ETIMEOUT,
                            "drain: %lld jobs of pinned types not yet moved home after %lld ms",
                            (long long)strays, (long long)timeout_ms);
        struct timespec ts = {0, 5 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

void cw_nsshards_get_stats(cwork_pool *p, cwork_pool_stats *s)
{
    memset(s, 0, sizeof *s);
    for (unsigned i = 0; i < p->nsshards->count; i++) {
        cwork_pool_stats one;
        cwork_pool_get_stats(p->nsshards->pools[i], &one);
        s->fetched += one.fetched;
        s->succeeded += one.succeeded;
        s->failed += one.failed;
        s->retried += one.retried;
        s->dead += one.dead;
        s->in_flight += one.in_flight;
    }
}

int cw_nsshards_watchdog_stats(cwork_pool *p, cwork_watchdog_stat **out, size_t *n,
                               cwork_error *err)
{
    cw_nsshards *s = p->nsshards;
    for (unsigned i = 0; i < s->count; i++) {
        cwork_watchdog_stat *one = NULL;
        size_t k = 0;
        int rc = cwork_pool_watchdog_stats(s->pools[i], &one, &k, err);
        cwork_watchdog_stat *all = rc || !k ? NULL : cw_realloc(*out, (*n + k) * sizeof *all);
        if (all) {
            memcpy(all + *n, one, k * sizeof *one);
            *out = all;
            *n += k;
        }
        cw_free(one);
        if (rc == 0 && k && !all) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        if (rc) {
            cw_free(*out);
            *out = NULL;
            *n = 0;
            return rc;
        }
    }
    return 0;
}

int cw_nsshards_configured(cwork_error *err, const char *what)
{
    return cw_error(err, CWORK_EINVAL,
                    "%s: the pool has served a sharded namespace, whose shards' pools took its "
                    "registrations at its first start",
                    what);
}

void cw_nsshards_free(cwork_pool *p)
{
    nsshards_destroy(p->nsshards);
    p->nsshards = NULL;
}
