/* The mover of a pool on a sharded namespace (PROTOCOL §27.4): a pinned type runs only
 * in its home shard, so a job of it found in another namespace shard's queue (enqueued
 * before enqueuers learned of the pin, or by a Go enqueuer that routes by id) is carried
 * home. The two shards are two slots, so no one script can do it; instead, for each
 * job: RPOPLPUSH from the queue into <p_i>cwork:moving:<name> (same shard), LPUSH to the
 * home queue, LREM from moving. A job is always in a queue or in moving; what a crash
 * leaves in moving is carried first on the next pass, which may push a job home twice
 * when the crash fell between the LPUSH and the LREM (at least once, as everywhere). */
#include "pool_nsshards.h"

#include "log.h"

#include <errno.h>
#include <string.h>

/* The keys of one (type, source shard) pair. */
typedef struct move_keys {
    cw_buf queue, moving, home, channel;
} move_keys;

static void move_keys_free(move_keys *k)
{
    cw_buf_free(&k->queue);
    cw_buf_free(&k->moving);
    cw_buf_free(&k->home);
    cw_buf_free(&k->channel);
}

static int move_keys_make(const cw_nsshards *s, const cw_nsshard_pin *pin, unsigned from,
                          move_keys *k)
{
    const cw_keys *src = &s->pools[from]->keys, *dst = &s->pools[pin->home]->keys;
    cw_buf_init(&k->queue);
    cw_buf_init(&k->moving);
    cw_buf_init(&k->home);
    cw_buf_init(&k->channel);
    cw_key_queue(src, &k->queue, pin->name);
    cw_key_shard_moving(src, &k->moving, pin->name);
    cw_key_queue(dst, &k->home, pin->name);
    cw_key_wakeup_channel(dst, &k->channel);
    return k->queue.oom || k->moving.oom || k->home.oom || k->channel.oom ? CWORK_ENOMEM : 0;
}

/* The job to carry next: what a crash left in moving, else the queue's oldest, moved
 * into moving. *job NULL when there is none. */
static int move_take(cwork_redis *src, const move_keys *k, redisReply **job, cwork_error *err)
{
    const char *lindex[] = {"LINDEX", k->moving.data, "-1"};
    redisReply *r = NULL;
    int rc = cw_redis_command(src, 3, lindex, NULL, &r, err);
    if (rc == 0 && r->type == REDIS_REPLY_NIL) {
        freeReplyObject(r);
        r = NULL;
        const char *pop[] = {"RPOPLPUSH", k->queue.data, k->moving.data};
        rc = cw_redis_command(src, 3, pop, NULL, &r, err);
    }
    if (rc == 0 && r->type != REDIS_REPLY_STRING) {
        if (r->type != REDIS_REPLY_NIL) rc = cw_error(err, CWORK_EREDIS, "unexpected reply");
        freeReplyObject(r);
        r = NULL;
    }
    *job = r;
    return rc;
}

/* Carries up to CW_NSSHARD_MOVE_BATCH jobs of pin from shard `from` home; *moved counts
 * them. */
static int move_pair(cw_nsshards *s, const cw_nsshard_pin *pin, unsigned from, size_t *moved,
                     cwork_error *err)
{
    move_keys k;
    if (move_keys_make(s, pin, from, &k) != 0) {
        move_keys_free(&k);
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    cwork_redis *src = s->redis[from], *dst = s->redis[pin->home];
    int rc = 0;
    size_t n = 0;
    while (n < CW_NSSHARD_MOVE_BATCH && rc == 0) {
        redisReply *job = NULL;
        if ((rc = move_take(src, &k, &job, err)) != 0 || !job) break;
        const char *push[] = {"LPUSH", k.home.data, job->str};
        size_t push_lens[] = {5, k.home.len, job->len};
        const char *rem[] = {"LREM", k.moving.data, "-1", job->str};
        size_t rem_lens[] = {4, k.moving.len, 2, job->len};
        rc = cw_redis_command(dst, 3, push, push_lens, NULL, err);
        if (rc == 0) rc = cw_redis_command(src, 4, rem, rem_lens, NULL, err);
        freeReplyObject(job);
        n += rc == 0;
    }
    if (n > 0) { /* the home pool may be in its idle backoff */
        const char *pub[] = {"PUBLISH", k.channel.data, pin->name};
        cw_redis_command(dst, 3, pub, NULL, NULL, NULL);
    }
    *moved += n;
    move_keys_free(&k);
    return rc;
}

size_t cw_nsshards_move_pass(cw_nsshards *s)
{
    size_t moved = 0;
    for (size_t p = 0; p < s->npins; p++) {
        for (unsigned i = 0; i < s->count; i++) {
            if (i == s->pins[p].home) continue;
            cwork_error e = {0};
            /* A shard that fails is tried again next pass; the others go on. */
            if (move_pair(s, &s->pins[p], i, &moved, &e) != 0)
                cw_log(CWORK_LOG_WARN, "pool.shard_move", "job_name", s->pins[p].name, "shard",
                       s->pools[i]->ns, "error", e.message, NULL);
        }
    }
    return moved;
}

/* LLEN of one key into *sum. */
static int add_llen(cwork_redis *r, const cw_buf *key, int64_t *sum, cwork_error *err)
{
    const char *argv[] = {"LLEN", key->data};
    size_t lens[] = {4, key->len};
    redisReply *reply = NULL;
    int rc = cw_redis_command(r, 2, argv, lens, &reply, err);
    int64_t n = 0;
    if (rc == 0) rc = cw_reply_int(reply, &n, "LLEN", err);
    if (reply) freeReplyObject(reply);
    *sum += n;
    return rc;
}

int cw_nsshards_strays(cw_nsshards *s, int64_t *n, cwork_error *err)
{
    *n = 0;
    int rc = 0;
    for (size_t p = 0; p < s->npins && rc == 0; p++) {
        for (unsigned i = 0; i < s->count && rc == 0; i++) {
            if (i == s->pins[p].home) continue;
            move_keys k;
            rc = move_keys_make(s, &s->pins[p], i, &k) != 0
                     ? cw_error(err, CWORK_ENOMEM, "out of memory")
                     : add_llen(s->redis[i], &k.queue, n, err);
            if (rc == 0) rc = add_llen(s->redis[i], &k.moving, n, err);
            move_keys_free(&k);
        }
    }
    return rc;
}

static void *mover_main(void *arg)
{
    cw_nsshards *s = arg;
    for (;;) {
        size_t moved = cw_nsshards_move_pass(s);
        cw_mutex_lock(&s->mu);
        if (moved < CW_NSSHARD_MOVE_BATCH && !s->stop) { /* a full batch: go on at once */
            struct timespec at;
            cw_deadline_after_ms(&at, CW_NSSHARD_MOVE_MS);
            while (!s->stop && cw_cond_timedwait(&s->cond, &s->mu, &at) != ETIMEDOUT) {
            }
        }
        bool stop = s->stop;
        cw_mutex_unlock(&s->mu);
        if (stop) return NULL;
    }
}

int cw_nsshards_mover_start(cw_nsshards *s, cwork_error *err)
{
    if (s->npins == 0 || s->mover_started) return 0;
    s->stop = false;
    int rc = cw_thread_create(&s->mover, mover_main, s);
    if (rc) return cw_error(err, CWORK_ENOMEM, "cannot start a thread: %s", strerror(rc));
    s->mover_started = true;
    return 0;
}

void cw_nsshards_mover_stop(cw_nsshards *s)
{
    if (!s->mover_started) return;
    cw_mutex_lock(&s->mu);
    s->stop = true;
    pthread_cond_broadcast(&s->cond);
    cw_mutex_unlock(&s->mu);
    pthread_join(s->mover, NULL);
    s->mover_started = false;
}
