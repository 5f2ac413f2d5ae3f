/* Warnings about Go pools that run a type using one of cwork's own features (PROTOCOL
 * §20.5, §22.5, §23.6). Go's fetch ignores rate limits, and a job a Go pool runs stores
 * no result, is not kept and is not counted in its batch: nothing cwork can prevent, so
 * it says so, once per Go pool and feature, in the log of every cwork pool that sees it.
 * A Go pool is told apart by its heartbeat, which lacks cwork's `cwork` field. */
#include "log.h"
#include "pool.h"

#include <string.h>

typedef enum { USE_RATE_LIMIT, USE_RESULTS, USE_KEPT, USE_BATCH, USE_KINDS } use_kind;

static const struct {
    const char *what, *event, *message;
} uses[USE_KINDS] = {
    [USE_RATE_LIMIT] = {"rate_limit", "pool.rate_limit.go_pool",
                        "a Go pool runs a rate-limited job type: Go ignores cwork's rate "
                        "limits, so the jobs it fetches are neither held back nor counted"},
    [USE_RESULTS] = {"results", "pool.results.go_pool",
                     "a Go pool runs a job type whose jobs store results: the jobs it runs "
                     "store none, and a reader waiting for their result waits in vain"},
    [USE_KEPT] = {"kept", "pool.kept_succeeded.go_pool",
                  "a Go pool runs a job type that keeps its successes: the jobs it runs "
                  "are not kept"},
    [USE_BATCH] = {"batch", "pool.batch.go_pool",
                   "a Go pool runs a job type of tracked batches: a batch job it runs is "
                   "never counted, so its batch may never complete"},
};

bool cw_pool_list_has(const char *list, size_t len, const char *name, size_t name_len)
{
    for (size_t i = 0; i < len;) {
        const char *comma = memchr(list + i, ',', len - i);
        size_t end = comma ? (size_t)(comma - list) : len;
        if (end - i == name_len && memcmp(list + i, name, name_len) == 0) return true;
        i = end + 1;
    }
    return false;
}

/* Whether the Go pool `id` was already warned about for `kind`; records it if not. */
static bool warned_before(cwork_pool *p, use_kind kind, const char *id)
{
    cw_buf tag;
    cw_buf_init(&tag);
    cw_buf_puts(&tag, uses[kind].what);
    cw_buf_putc(&tag, ':');
    cw_buf_puts(&tag, id);
    if (tag.oom) return true; /* out of memory: stay quiet rather than repeat */
    for (size_t i = 0; i < p->ngo_warned_pools; i++)
        if (!strcmp(p->go_warned_pools[i], tag.data)) {
            cw_buf_free(&tag);
            return true;
        }
    char **more = cw_realloc(p->go_warned_pools, (p->ngo_warned_pools + 1) * sizeof *more);
    if (!more) {
        cw_buf_free(&tag);
        return true;
    }
    p->go_warned_pools = more;
    p->go_warned_pools[p->ngo_warned_pools++] = cw_buf_take(&tag, NULL);
    return false;
}

/* The first of this pool's types that a Go pool listing `names` runs and that uses
 * `kind`, or NULL. */
static const char *own_type_using(cwork_pool *p, use_kind kind, const char *names, size_t len)
{
    for (size_t i = 0; i < p->ntypes; i++) {
        cw_job_type *t = &p->types[i];
        bool uses_it = kind == USE_RESULTS ? atomic_load(&t->saw_result)
                       : kind == USE_KEPT  ? t->opts.keep_succeeded > 0
                                           : atomic_load(&t->saw_batch_member);
        if (uses_it && cw_pool_list_has(names, len, t->name, t->name_len)) return t->name;
    }
    return NULL;
}

/* The first rate-limited type of the namespace (limits: HGETALL name, limit, …) that a Go
 * pool listing `names` runs, or NULL. */
static const char *limited_type_in(const redisReply *limits, const char *names, size_t len,
                                   char *name_out, size_t cap)
{
    size_t n = 0;
    if (!limits || cw_reply_array(limits, 0, &n, "HGETALL", NULL) != 0) return NULL;
    for (size_t j = 0; j + 1 < n; j += 2) {
        const char *name;
        size_t name_len;
        if (cw_reply_at_str(limits, j, &name, &name_len, "HGETALL", NULL) == 0 &&
            cw_pool_list_has(names, len, name, name_len) && name_len < cap) {
            memcpy(name_out, name, name_len);
            name_out[name_len] = '\0';
            return name_out;
        }
    }
    return NULL;
}

static bool any_own_use(cwork_pool *p)
{
    for (size_t i = 0; i < p->ntypes; i++)
        if (atomic_load(&p->types[i].saw_result) || p->types[i].opts.keep_succeeded ||
            atomic_load(&p->types[i].saw_batch_member))
            return true;
    return false;
}

/* Warns about the Go pool `id` whose heartbeat lists `names`. */
static void check_pool(cwork_pool *p, const char *id, const char *names, size_t len,
                       const redisReply *limits)
{
    char limited[256];
    for (int kind = 0; kind < USE_KINDS; kind++) {
        const char *type = kind == USE_RATE_LIMIT
                               ? limited_type_in(limits, names, len, limited, sizeof limited)
                               : own_type_using(p, (use_kind)kind, names, len);
        if (!type || warned_before(p, (use_kind)kind, id)) continue;
        cw_log(CWORK_LOG_WARN, uses[kind].event, "pool_id", id, "job_name", type, "message",
               uses[kind].message, NULL);
    }
}

void cw_pool_warn_go_pools(cwork_pool *p, cw_conn *c, const redisReply *limits)
{
    size_t nlimits = 0;
    if (limits && cw_reply_array(limits, 0, &nlimits, "HGETALL", NULL) != 0) nlimits = 0;
    if (!nlimits && !any_own_use(p)) return; /* nothing a Go pool could defeat */
    cw_buf key;
    cw_buf_init(&key);
    cw_key_worker_pools(&p->keys, &key);
    redisReply *pools = NULL;
    const char *smembers[] = {"SMEMBERS", key.data};
    size_t npools = 0;
    if (key.oom || cw_conn_command(c, 2, smembers, NULL, &pools, NULL) != 0 ||
        cw_reply_array(pools, 0, &npools, "SMEMBERS", NULL) != 0)
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
        if (!key.oom && cw_conn_command(c, 4, hmget, NULL, &hb, NULL) == 0 &&
            cw_reply_at_str_or_nil(hb, 0, &names, &names_len, "HMGET", NULL) == 0 &&
            cw_reply_at_str_or_nil(hb, 1, &cwork, NULL, "HMGET", NULL) == 0 && names && !cwork)
            check_pool(p, id, names, names_len, limits);
        cw_reply_free(hb);
    }
    cw_reply_free(pools);
    cw_buf_free(&key);
}

void cw_pool_go_pools_free(cwork_pool *p)
{
    for (size_t i = 0; i < p->ngo_warned_pools; i++)
        cw_free(p->go_warned_pools[i]);
    cw_free(p->go_warned_pools);
    p->go_warned_pools = NULL;
    p->ngo_warned_pools = 0;
}
