/* Which of a pool's job types the namespace rate-limits (PROTOCOL §20). The limit
 * itself is enforced by the cycle script; the pool only needs to know which types to
 * pass it, so that a pool whose types are not limited makes the plain call. The
 * setting <p>cwork:rate_limits is read at start and every CW_RATE_LIMIT_REFRESH_MS. */
#include "log.h"
#include "pool.h"
#include "rate_limit.h"

#include <string.h>

static int ensure_key(cwork_pool *p)
{
    if (p->rate_limits_key) return 0;
    cw_buf b;
    cw_buf_init(&b);
    cw_key_rate_limits(&p->keys, &b);
    p->rate_limits_key = cw_buf_take(&b, &p->rate_limits_key_len);
    return p->rate_limits_key ? 0 : CWORK_ENOMEM;
}

size_t cw_pool_rate_limited_types(cwork_pool *p, size_t *limited)
{
    size_t n = 0;
    for (size_t i = 0; i < p->ntypes; i++)
        if (atomic_load_explicit(&p->types[i].rate_limited, memory_order_relaxed)) limited[n++] = i;
    return n;
}

int cw_pool_rate_limits_start(cwork_pool *p, cwork_error *err)
{
    if (ensure_key(p)) return cw_error(err, CWORK_ENOMEM, "out of memory");
    /* HSET rate_limits name text …, for the types with the option: last writer wins, as
     * for max_concurrency. */
    size_t n = 0;
    for (size_t i = 0; i < p->ntypes; i++)
        n += p->types[i].opts.rate_limit > 0;
    int rc = 0;
    if (n) {
        const char **argv = cw_calloc(2 + 2 * n, sizeof *argv);
        char(*texts)[CW_RATE_LIMIT_TEXT_MAX] = cw_calloc(n, sizeof *texts);
        if (!argv || !texts) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        int argc = 0;
        if (rc == 0) {
            argv[argc++] = "HSET";
            argv[argc++] = p->rate_limits_key;
            for (size_t i = 0, j = 0; i < p->ntypes; i++) {
                const cwork_job_options *o = &p->types[i].opts;
                if (!o->rate_limit) continue;
                cw_rate_limit_text(o->rate_limit, o->rate_limit_window_ms, texts[j]);
                argv[argc++] = p->types[i].name;
                argv[argc++] = texts[j++];
            }
            rc = cw_redis_command(p->redis, argc, argv, NULL, NULL, err);
        }
        cw_free(argv);
        cw_free(texts);
        if (rc) return rc;
    }
    return cw_pool_rate_limits_refresh(p, false, err);
}

/* Whether the comma-joined list holds name. */
static bool list_has(const char *list, size_t len, const char *name, size_t name_len)
{
    for (size_t i = 0; i < len;) {
        const char *comma = memchr(list + i, ',', len - i);
        size_t end = comma ? (size_t)(comma - list) : len;
        if (end - i == name_len && memcmp(list + i, name, name_len) == 0) return true;
        i = end + 1;
    }
    return false;
}

static bool go_pool_warned(cwork_pool *p, const char *id)
{
    for (size_t i = 0; i < p->ngo_warned_pools; i++)
        if (!strcmp(p->go_warned_pools[i], id)) return true;
    char **more = cw_realloc(p->go_warned_pools, (p->ngo_warned_pools + 1) * sizeof *more);
    char *copy = more ? cw_strdup(id) : NULL;
    if (more) p->go_warned_pools = more;
    if (!copy) return true; /* out of memory: stay quiet rather than repeat */
    p->go_warned_pools[p->ngo_warned_pools++] = copy;
    return false;
}

/* Warns, once per pool, about every Go pool (a heartbeat without cwork's `cwork` field,
 * PROTOCOL §6) whose job_names list a type limited now: Go fetches without looking at
 * the limit. */
static void warn_go_pools(cwork_pool *p, cw_conn *c, const redisReply *limits)
{
    cw_buf key;
    cw_buf_init(&key);
    cw_key_worker_pools(&p->keys, &key);
    redisReply *pools = NULL;
    cwork_error err = {0};
    const char *smembers[] = {"SMEMBERS", key.data};
    size_t npools = 0, nlimits = 0;
    if (key.oom || cw_conn_command(c, 2, smembers, NULL, &pools, &err) != 0 ||
        cw_reply_array(pools, 0, &npools, "SMEMBERS", NULL) != 0 ||
        cw_reply_array(limits, 0, &nlimits, "HGETALL", NULL) != 0)
        npools = 0;
    for (size_t i = 0; i < npools; i++) {
        const char *id;
        if (cw_reply_at_str(pools, i, &id, NULL, "SMEMBERS", NULL) != 0 || !strcmp(id, p->id))
            continue;
        cw_buf_reset(&key);
        cw_key_worker_pool(&p->keys, &key, id);
        const char *hmget[] = {"HMGET", key.data, "job_names", "cwork"};
        redisReply *hb = NULL;
        const char *names = NULL, *cwork = NULL;
        size_t names_len = 0;
        if (key.oom || cw_conn_command(c, 4, hmget, NULL, &hb, NULL) != 0 ||
            cw_reply_at_str_or_nil(hb, 0, &names, &names_len, "HMGET", NULL) != 0 ||
            cw_reply_at_str_or_nil(hb, 1, &cwork, NULL, "HMGET", NULL) != 0)
            names = NULL;
        for (size_t j = 0; names && !cwork && j + 1 < nlimits; j += 2) {
            const char *name;
            size_t len;
            if (cw_reply_at_str(limits, j, &name, &len, "HGETALL", NULL) != 0 ||
                !list_has(names, names_len, name, len) || go_pool_warned(p, id))
                continue;
            cw_log(CWORK_LOG_WARN, "pool.rate_limit.go_pool", "pool_id", id, "job_name", name,
                   "message",
                   "a Go pool runs a rate-limited job type: Go ignores cwork's rate limits, "
                   "so the jobs it fetches are neither held back nor counted",
                   NULL);
            break;
        }
        cw_reply_free(hb);
    }
    cw_reply_free(pools);
    cw_buf_free(&key);
}

int cw_pool_rate_limits_refresh(cwork_pool *p, bool look_for_go_pools, cwork_error *err)
{
    if (ensure_key(p)) return cw_error(err, CWORK_ENOMEM, "out of memory");
    cw_conn *c;
    int rc = cw_redis_checkout(p->redis, &c, err);
    if (rc) return rc;
    /* HGETALL: the namespace's limits are few, and the Go check needs them all. */
    const char *hgetall[] = {"HGETALL", p->rate_limits_key};
    redisReply *r = NULL;
    size_t n = 0;
    rc = cw_conn_command(c, 2, hgetall, NULL, &r, err);
    if (rc == 0) rc = cw_reply_array(r, 0, &n, "HGETALL rate_limits", err);
    if (rc == 0) {
        bool *limited = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *limited);
        if (!limited) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        for (size_t j = 0; rc == 0 && j + 1 < n; j += 2) {
            const char *name;
            size_t len;
            if (cw_reply_at_str(r, j, &name, &len, "HGETALL", NULL) != 0) continue;
            cw_job_type *t = cw_pool_find_type(p, name, len);
            if (t) limited[t - p->types] = true;
        }
        size_t count = 0;
        for (size_t i = 0; rc == 0 && i < p->ntypes; i++) {
            atomic_store(&p->types[i].rate_limited, limited[i]);
            count += limited[i];
        }
        if (rc == 0) atomic_store(&p->nrate_limited, count);
        cw_free(limited);
        if (rc == 0 && n && look_for_go_pools) warn_go_pools(p, c, r);
    }
    cw_reply_free(r);
    cw_redis_checkin(p->redis, c);
    return rc;
}

void cw_pool_rate_limits_free(cwork_pool *p)
{
    cw_free(p->rate_limits_key);
    p->rate_limits_key = NULL;
    for (size_t i = 0; i < p->ngo_warned_pools; i++)
        cw_free(p->go_warned_pools[i]);
    cw_free(p->go_warned_pools);
    p->go_warned_pools = NULL;
    p->ngo_warned_pools = 0;
}
