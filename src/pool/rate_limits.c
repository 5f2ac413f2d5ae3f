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
        if (rc == 0 && look_for_go_pools) cw_pool_warn_go_pools(p, c, r);
    }
    cw_reply_free(r);
    cw_redis_checkin(p->redis, c);
    return rc;
}

void cw_pool_rate_limits_free(cwork_pool *p)
{
    cw_free(p->rate_limits_key);
    p->rate_limits_key = NULL;
    cw_pool_go_pools_free(p);
}
