/* Warnings about Go pools that run a pinned type outside its home shard (PROTOCOL §27.4,
 * README "Sharding"). A pinned type's max_concurrency lock and the periodic fire times of
 * a name live in one shard's keys, its home by the record's homes (§27.2, §27.5); a Go
 * pool pointed at another shard's namespace keeps a lock of its own there, which the home
 * shard's pool never sees, so the type's limit is not shared and neither are its fire
 * times. Nothing cwork can prevent (a Go pool knows nothing of shards), so it says so,
 * once per Go pool, type and shard, in the log of the sharded pool that sees it.
 *
 * Only the follower thread calls this (pool_nsshards_grow.c), so the list of warnings
 * already given needs no lock. */
#include "pool_nsshards.h"

#include "log.h"
#include "sharding.h"

#include <stdatomic.h>
#include <string.h>

static const char message[] =
    "a Go pool runs a pinned type outside its home shard: the type's max_concurrency lock "
    "and its periodic fire times there are not shared with the home shard";

/* Whether (id, name, shard) was already warned about; records it if not. */
static bool warned_before(cw_nsshards *s, const char *id, const char *name, size_t len,
                          unsigned shard)
{
    cw_buf tag;
    cw_buf_init(&tag);
    cw_buf_puts(&tag, id);
    cw_buf_putc(&tag, ':');
    cw_buf_append(&tag, name, len);
    cw_buf_printf(&tag, ":%u", shard);
    if (tag.oom) return true; /* out of memory: stay quiet rather than repeat */
    for (size_t i = 0; i < s->ngo_warned; i++)
        if (!strcmp(s->go_warned[i], tag.data)) {
            cw_buf_free(&tag);
            return true;
        }
    char **more = cw_realloc(s->go_warned, (s->ngo_warned + 1) * sizeof *more);
    if (!more) {
        cw_buf_free(&tag);
        return true;
    }
    s->go_warned = more;
    s->go_warned[s->ngo_warned++] = cw_buf_take(&tag, NULL);
    return false;
}

/* Warns about each pinned name (pinned: SMEMBERS reply) that the Go pool `id` of shard i
 * lists in its job_names and whose home is another shard. */
static void check_pool(cw_nsshards *s, unsigned i, const char *id, const char *names,
                       size_t names_len, const redisReply *pinned)
{
    for (size_t k = 0; k < pinned->elements; k++) {
        const char *name;
        size_t len;
        if (cw_reply_at_str(pinned, k, &name, &len, "SMEMBERS", NULL) != 0) continue;
        unsigned home = cw_sharding_of(name, len, s->homes);
        if (home == i || home >= s->count || !cw_pool_list_has(names, names_len, name, len) ||
            warned_before(s, id, name, len, i))
            continue;
        char *type = cw_strndup(name, len);
        cw_log(CWORK_LOG_WARN, "pool.pinned.go_pool", "pool_id", id, "job_name", type ? type : "?",
               "shard", s->pools[i]->ns, "home_shard", s->pools[home]->ns, "message", message,
               NULL);
        cw_free(type);
    }
}

/* The Go pools of shard i (heartbeats without cwork's `cwork` field) checked. */
static void check_shard(cw_nsshards *s, unsigned i, const redisReply *pinned)
{
    cwork_pool *q = s->pools[i];
    cw_buf key;
    cw_buf_init(&key);
    cw_key_worker_pools(&q->keys, &key);
    const char *smembers[] = {"SMEMBERS", key.data};
    redisReply *pools = NULL;
    size_t npools = 0;
    if (key.oom || cw_redis_command(s->redis[i], 2, smembers, NULL, &pools, NULL) != 0 ||
        cw_reply_array(pools, 0, &npools, "SMEMBERS", NULL) != 0)
        npools = 0;
    for (size_t k = 0; k < npools; k++) {
        const char *id;
        if (cw_reply_at_str(pools, k, &id, NULL, "SMEMBERS", NULL) != 0 || !strcmp(id, q->id))
            continue;
        cw_buf_reset(&key);
        cw_key_worker_pool(&q->keys, &key, id);
        const char *hmget[] = {"HMGET", key.data, "job_names", "cwork"};
        redisReply *hb = NULL;
        const char *names = NULL, *cwork = NULL;
        size_t names_len = 0;
        if (!key.oom && cw_redis_command(s->redis[i], 4, hmget, NULL, &hb, NULL) == 0 &&
            cw_reply_at_str_or_nil(hb, 0, &names, &names_len, "HMGET", NULL) == 0 &&
            cw_reply_at_str_or_nil(hb, 1, &cwork, NULL, "HMGET", NULL) == 0 && names && !cwork)
            check_pool(s, i, id, names, names_len, pinned);
        cw_reply_free(hb);
    }
    cw_reply_free(pools);
    cw_buf_free(&key);
}

void cw_nsshards_warn_go_pools(cwork_pool *p, cw_nsshards *s)
{
    cw_buf key;
    cw_buf_init(&key);
    cw_key_shard_pinned(&p->keys, &key);
    const char *smembers[] = {"SMEMBERS", key.data};
    redisReply *pinned = NULL;
    size_t npinned = 0;
    /* The namespace's pinned names (every cwork pool's, §27.4), not only this pool's. */
    if (!key.oom && cw_redis_command(p->redis, 2, smembers, NULL, &pinned, NULL) == 0 &&
        cw_reply_array(pinned, 0, &npinned, "SMEMBERS", NULL) == 0 && npinned > 0) {
        unsigned count = s->count;
        for (unsigned i = 0; i < count; i++)
            check_shard(s, i, pinned);
    }
    cw_reply_free(pinned);
    cw_buf_free(&key);
    atomic_fetch_add(&s->go_looks, 1);
}

void cw_nsshards_go_free(cw_nsshards *s)
{
    for (size_t i = 0; i < s->ngo_warned; i++)
        cw_free(s->go_warned[i]);
    cw_free(s->go_warned);
    s->go_warned = NULL;
    s->ngo_warned = 0;
}
