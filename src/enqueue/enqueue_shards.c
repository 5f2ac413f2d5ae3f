/* An enqueuer's view of a sharded namespace (PROTOCOL §27): the shard count, declared
 * or read from the record <p>cwork:shards, the pinned set <p>cwork:shard_pinned, one
 * enqueuer per shard, and which of them a job goes to.
 *
 * An unsharded namespace pays one HMGET of the record every ENQ_SHARDS_REFRESH_MS (on
 * the first enqueue, then at most that often) and nothing else: its enqueues go through
 * the enqueuer itself, as before, and no key is written. */
#include "enqueue.h"

#include "args.h"
#include "clock.h"
#include "job.h"
#include "log.h"
#include "scripts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cw_enq_shards_init(cwork_enqueuer *enq)
{
    cw_mutex_init(&enq->shards.mu);
    atomic_init(&enq->shards.count, 1);
    atomic_init(&enq->shards.next_ms, INT64_MIN);
}

static void free_pinned(enq_shards *s)
{
    for (size_t i = 0; i < s->npinned; i++)
        cw_free(s->pinned[i]);
    cw_free(s->pinned);
    s->pinned = NULL;
    s->npinned = 0;
}

void cw_enq_shards_clear(cwork_enqueuer *enq)
{
    enq_shards *s = &enq->shards;
    if (s->sub)
        for (unsigned i = 1; i < CW_SHARDING_MAX; i++)
            cwork_enqueuer_free(s->sub[i]);
    cw_free(s->sub);
    free_pinned(s);
    cw_mutex_destroy(&s->mu);
}

unsigned cw_enq_shards_count(cwork_enqueuer *enq)
{
    return atomic_load_explicit(&enq->shards.count, memory_order_acquire);
}

/* ---------------------------------------------------------------- reading */

/* The record's count; a declared count of 1 is checked but, unlike a larger one,
 * written nowhere: an unsharded namespace gets no new key. An enqueuer that declares
 * nothing and may not read the record (an ACL user set up before sharding, without
 * +hmget) goes on as one shard, as it did, and says so once. */
static int read_count(cwork_enqueuer *enq, unsigned *count, cwork_error *err)
{
    /* its own declaration, else its Redis URL's shards= (§27.1) */
    unsigned declared =
        enq->shards.declared ? enq->shards.declared : cw_redis_declared_shards(enq->redis);
    cwork_error e = {0};
    /* Once running, a record grown past the declared count is followed (§27.5). */
    bool follow = atomic_load_explicit(&enq->shards.next_ms, memory_order_relaxed) != INT64_MIN;
    cw_sharding_state st;
    int rc =
        cw_sharding_record_state(enq->redis, enq->ns, declared > 1 ? declared : 0, follow, &st, &e);
    if (rc == 0) {
        *count = st.count;
        enq->shards.homes = st.homes;
        enq->shards.from = st.from;
        enq->shards.grown = st.grown;
    }
    if (rc == CWORK_EREDIS && declared == 0 && strstr(e.message, "NOPERM")) {
        if (!enq->shards.warned)
            cw_log(CWORK_LOG_WARN, "enqueue.shards", "error", e.message, "namespace", enq->ns,
                   "hint",
                   "the enqueuer cannot read the shard record (ACL +hmget on <ns>:cwork:shards): "
                   "it enqueues as if the namespace had one shard",
                   NULL);
        enq->shards.warned = 1;
        *count = enq->shards.homes = 1;
        enq->shards.from = 0;
        return 0;
    }
    if (rc) {
        if (err) *err = e;
        return rc;
    }
    if (declared != 1 || *count == 1 || follow) return 0;
    cw_buf key = {0};
    cw_key_shards(&enq->keys, &key);
    rc = cw_error(err, CWORK_EINVAL,
                  "namespace \"%s\" has %u shards (%s), this process was told 1: every process "
                  "of a namespace must agree (declare none to follow the record)",
                  enq->ns, *count, key.oom ? "its shard record" : key.data);
    cw_buf_free(&key);
    return rc;
}

/* SMEMBERS <p>cwork:shard_pinned into enq->shards.pinned (mu held). */
static int read_pinned(cwork_enqueuer *enq, cwork_error *err)
{
    cw_buf key = {0};
    cw_key_shard_pinned(&enq->keys, &key);
    if (key.oom) return cw_error(err, CWORK_ENOMEM, "out of memory");
    const char *argv[] = {"SMEMBERS", key.data};
    redisReply *rep = NULL;
    int rc = cw_redis_command(enq->redis, 2, argv, NULL, &rep, err);
    if (rc && err && strstr(err->message, "WRONGTYPE"))
        rc = cw_error(err, CWORK_EINVAL,
                      "%s is damaged: it is not a set (the pinned job names of a sharded "
                      "namespace, PROTOCOL §27.2)",
                      key.data);
    size_t n = 0;
    if (rc == 0) rc = cw_reply_array(rep, 0, &n, key.data, err);
    char **names = rc == 0 && n ? cw_calloc(n, sizeof *names) : NULL;
    if (rc == 0 && n && !names) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    size_t got = 0;
    for (; rc == 0 && got < n; got++) {
        const char *v = NULL;
        size_t len = 0;
        rc = cw_reply_at_str(rep, got, &v, &len, key.data, err);
        if (rc == 0 && !(names[got] = cw_strndup(v, len)))
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        free_pinned(&enq->shards);
        enq->shards.pinned = names;
        enq->shards.npinned = n;
    } else if (names) {
        for (size_t i = 0; i < n; i++)
            cw_free(names[i]);
        cw_free(names);
    }
    freeReplyObject(rep);
    cw_buf_free(&key);
    return rc;
}

/* The enqueuer of shard i ≥ 1: shard i's namespace, a redis of its own (in a cluster,
 * a namespace is served by one cwork_redis), the root's settings. */
static cwork_enqueuer *make_sub(cwork_enqueuer *enq, unsigned i, cwork_error *err)
{
    char ns[256];
    if (cw_sharding_ns(enq->ns, i, ns, sizeof ns, err) != 0) return NULL;
    cwork_redis *r = cw_redis_clone(enq->redis, err);
    if (!r) return NULL;
    cwork_enqueuer *sub = cwork_enqueuer_new(r, ns, err);
    if (!sub) {
        cwork_redis_free(r);
        return NULL;
    }
    sub->owned_redis = r;
    sub->root = enq;
    return sub;
}

/* Makes the enqueuers of shards 1..count-1 not made yet (mu held). */
static int make_subs(cwork_enqueuer *enq, unsigned count, cwork_error *err)
{
    enq_shards *s = &enq->shards;
    if (!s->sub && !(s->sub = cw_calloc(CW_SHARDING_MAX, sizeof *s->sub)))
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    for (unsigned i = 1; i < count; i++) {
        cwork_error e = {0};
        if (!s->sub[i] && !(s->sub[i] = make_sub(enq, i, &e))) {
            if (err) *err = e;
            return e.code ? e.code : CWORK_ENOMEM;
        }
    }
    return 0;
}

/* One read (mu held): the count, and for a sharded namespace the pinned set and the
 * shards' enqueuers. Nothing changes on an error. */
static int read_shards(cwork_enqueuer *enq, cwork_error *err)
{
    unsigned count = 1;
    int rc = read_count(enq, &count, err);
    if (rc == 0 && count > 1) rc = cw_sharding_check_ns(enq->ns, err);
    if (rc == 0 && count > 1) rc = read_pinned(enq, err);
    if (rc == 0 && count > 1) rc = make_subs(enq, count, err);
    if (rc == 0) atomic_store_explicit(&enq->shards.count, count, memory_order_release);
    return rc;
}

int cw_enq_shards_refresh(cwork_enqueuer *enq, cwork_error *err)
{
    if (enq->root != enq) return 0; /* a shard's enqueuer is one namespace */
    enq_shards *s = &enq->shards;
    if (cw_clock_mono_ms() < atomic_load_explicit(&s->next_ms, memory_order_acquire)) return 0;
    cw_mutex_lock(&s->mu);
    int rc = 0;
    int64_t now = cw_clock_mono_ms();
    if (now >= atomic_load_explicit(&s->next_ms, memory_order_relaxed)) { /* not done meanwhile */
        rc = read_shards(enq, err);
        if (rc == 0)
            atomic_store_explicit(&s->next_ms, now + ENQ_SHARDS_REFRESH_MS, memory_order_release);
    }
    cw_mutex_unlock(&s->mu);
    return rc;
}

int cwork_enqueuer_set_shards(cwork_enqueuer *enq, unsigned shards, cwork_error *err)
{
    if (!enq) return cw_error(err, CWORK_EINVAL, "cwork_enqueuer_set_shards: NULL enqueuer");
    if (shards > CW_SHARDING_MAX)
        return cw_error(err, CWORK_EINVAL, "cwork_enqueuer_set_shards: %u shards, at most %d",
                        shards, CW_SHARDING_MAX);
    enq_shards *s = &enq->shards;
    cw_mutex_lock(&s->mu);
    unsigned before = s->declared;
    s->declared = shards;
    int rc = read_shards(enq, err);
    if (rc == 0)
        atomic_store_explicit(&s->next_ms, cw_clock_mono_ms() + ENQ_SHARDS_REFRESH_MS,
                              memory_order_release);
    else
        s->declared = before; /* refused: the enqueuer stays as it was */
    cw_mutex_unlock(&s->mu);
    return rc;
}

/* ---------------------------------------------------------------- routing */

static int is_pinned(const enq_shards *s, const char *name)
{
    for (size_t i = 0; i < s->npinned; i++)
        if (strcmp(s->pinned[i], name) == 0) return 1;
    return 0;
}

cwork_enqueuer *cw_enq_shard_for(cwork_enqueuer *enq, const char *name, const char *key, size_t len,
                                 unsigned *shard)
{
    unsigned i = 0;
    cwork_enqueuer *to = enq;
    if (cw_enq_shards_count(enq) > 1) {
        enq_shards *s = &enq->shards;
        cw_mutex_lock(&s->mu);
        unsigned count = atomic_load_explicit(&s->count, memory_order_relaxed);
        if (name && is_pinned(s, name)) /* a name keeps its shard across a grow (§27.5) */
            i = cw_sharding_of(name, strlen(name), s->homes ? s->homes : count);
        else
            i = cw_sharding_of(key, len, count);
        if (i > 0) to = s->sub[i];
        cw_mutex_unlock(&s->mu);
    }
    if (shard) *shard = i;
    return to;
}

bool cw_enq_is_pinned(cwork_enqueuer *enq, const char *name)
{
    if (cw_enq_shards_count(enq) == 1) return false;
    cw_mutex_lock(&enq->shards.mu);
    bool pinned = is_pinned(&enq->shards, name);
    cw_mutex_unlock(&enq->shards.mu);
    return pinned;
}

cwork_enqueuer *cw_enq_shard(cwork_enqueuer *enq, unsigned i)
{
    if (i == 0) return enq;
    cw_mutex_lock(&enq->shards.mu);
    cwork_enqueuer *to = enq->shards.sub[i];
    cw_mutex_unlock(&enq->shards.mu);
    return to;
}

int cw_enq_unique_route(const char *name, const cwork_args *by, cw_buf *out, cwork_error *err)
{
    size_t start = out->len;
    cw_buf_puts(out, name);
    cw_buf_putc(out, ':');
    int rc = cw_job_unique_args_suffix(out, by ? cw_args_object(by) : NULL, err);
    if (rc) {
        out->len = start;
        return rc;
    }
    if (out->len > start && out->data[out->len - 1] == '\n') out->len--; /* json.Encoder's */
    return out->oom ? cw_error(err, CWORK_ENOMEM, "out of memory") : 0;
}

/* ---------------------------------------------------------------- a grow (§27.5) */

cwork_enqueuer *cw_enq_grow_old(cwork_enqueuer *enq, const char *name, const char *key, size_t len,
                                unsigned *shard, int64_t *mark_ttl)
{
    if (cw_enq_shards_count(enq) == 1) return NULL;
    enq_shards *s = &enq->shards;
    cwork_enqueuer *old = NULL;
    cw_mutex_lock(&s->mu);
    unsigned count = atomic_load_explicit(&s->count, memory_order_relaxed);
    if (s->from && !(name && is_pinned(s, name))) {
        unsigned was = cw_sharding_of(key, len, s->from);
        if (was != cw_sharding_of(key, len, count)) old = was ? s->sub[was] : enq;
        if (old && shard) *shard = was;
        int64_t left = s->grown + CW_SHARDING_FORWARD_TTL - cw_clock_now();
        if (mark_ttl) *mark_ttl = left > 0 ? left : 0;
    }
    cw_mutex_unlock(&s->mu);
    return old;
}

int cw_enq_forward(cwork_enqueuer *old, const char *guard, size_t glen, const char *alt,
                   size_t alen, int64_t mark_ttl, const char *value, size_t vlen, bool rearm,
                   bool *dup, cwork_error *err)
{
    char ttl[24];
    snprintf(ttl, sizeof ttl, "%lld", (long long)mark_ttl);
    const char *argv[] = {guard, alt, CW_SHARDING_FORWARD_MARK, ttl, value, rearm ? "1" : ""};
    size_t lens[] = {glen, alen, strlen(CW_SHARDING_FORWARD_MARK), strlen(ttl), vlen, rearm};
    cw_conn *c = NULL;
    redisReply *r = NULL;
    int rc = cw_redis_checkout(old->redis, &c, err);
    if (rc) return rc;
    rc = cw_conn_eval(c, &cw_script_shards_forward, 2, 4, argv, lens, &r, err);
    if (rc == 0) rc = cw_conn_wait_replicas(c, err);
    cw_redis_checkin(old->redis, c);
    const char *answer = NULL;
    size_t len = 0;
    if (rc == 0) rc = cw_reply_str(r, &answer, &len, "shards_forward script", err);
    if (rc == 0) *dup = len == 3 && memcmp(answer, "dup", 3) == 0;
    cw_reply_free(r);
    return rc;
}

int cw_enq_batch_shard(cwork_enqueuer *enq, const char *id, cwork_enqueuer **to, unsigned *shard,
                       cwork_error *err)
{
    size_t len = strlen(id);
    *to = cw_enq_shard_for(enq, NULL, id, len, shard);
    unsigned was = 0;
    cwork_enqueuer *old = cw_enq_grow_old(enq, NULL, id, len, &was, NULL);
    if (!old) return 0;
    cw_buf key;
    cw_buf_init(&key);
    cw_key_batch(&old->keys, &key, id);
    if (key.oom) {
        cw_buf_free(&key);
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    const char *argv[] = {"EXISTS", key.data};
    redisReply *r = NULL;
    int rc = cw_redis_command(old->redis, 2, argv, NULL, &r, err);
    int64_t n = 0;
    if (rc == 0) rc = cw_reply_int(r, &n, key.data, err);
    if (rc == 0 && n > 0) { /* opened before the grow: its members stay with it */
        *to = old;
        if (shard) *shard = was;
    }
    cw_reply_free(r);
    cw_buf_free(&key);
    return rc;
}

int cw_enq_batch_elsewhere(cwork_enqueuer *enq, const char *id, const cwork_enqueuer *tried,
                           cw_enq_batch_try try_in, void *ctx, cwork_error *err)
{
    /* A batch stays in the shard it was opened in, jump(id, c) for the count c then
     * (PROTOCOL §27.5): one opened before a grow that has ended is there still. Counts
     * below today's route an id to the same shard or a lower one (jump hashing), so each
     * shard the id ever went to is asked once, newest first. */
    unsigned last = CW_SHARDING_MAX;
    cwork_error first = {0};
    if (err) first = *err;
    int rc = CWORK_ENOTFOUND;
    for (unsigned c = cw_enq_shards_count(enq); c >= 1 && rc == CWORK_ENOTFOUND; c--) {
        unsigned i = cw_sharding_of(id, strlen(id), c);
        if (i == last) continue;
        last = i;
        cwork_enqueuer *shard = cw_enq_shard(enq, i);
        if (shard != tried) rc = try_in(shard, i, ctx, err);
    }
    if (rc == CWORK_ENOTFOUND && err) *err = first;
    return rc;
}

int cw_enq_batch_exists_in(cwork_enqueuer *shard, unsigned i, void *ctx, cwork_error *err)
{
    (void)i;
    const char *id = ctx;
    cw_buf key;
    cw_buf_init(&key);
    cw_key_batch(&shard->keys, &key, id);
    if (key.oom) {
        cw_buf_free(&key);
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    const char *argv[] = {"EXISTS", key.data};
    redisReply *r = NULL;
    int rc = cw_redis_command(shard->redis, 2, argv, NULL, &r, err);
    int64_t n = 0;
    if (rc == 0) rc = cw_reply_int(r, &n, key.data, err);
    if (rc == 0 && n == 0) rc = CWORK_ENOTFOUND; /* (err untouched: the caller's is kept) */
    cw_reply_free(r);
    cw_buf_free(&key);
    return rc;
}
