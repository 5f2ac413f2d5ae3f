/* Requeuers for the scheduled and retry sets (SPEC §7). */
#include "requeuer.h"

#include "log.h"
#include "scripts.h"

#include <stdio.h>
#include <string.h>

/* Queue keys of the registered names and of every name in known_jobs, as one
 * NUL-separated buffer with offsets. */
typedef struct {
    cw_buf keys;
    size_t *offs;
    size_t n;
} queue_list;

static void add_queue(queue_list *q, const cw_keys *keys, const char *name, size_t cap)
{
    if (q->n == cap)
        return;
    q->offs[q->n++] = q->keys.len;
    cw_key_queue(keys, &q->keys, name);
    cw_buf_putc(&q->keys, '\0');
}

static int requeue_zset(cw_conn *c, const cw_buf *zset, const cw_buf *dead, const cw_buf *prefix,
                        const queue_list *q, size_t *moved, cwork_error *err)
{
    char now[24];
    snprintf(now, sizeof now, "%lld", (long long)cw_now());
    size_t argc = 2 + q->n + 3;
    const char **argv = cw_malloc(argc * sizeof *argv);
    size_t *lens = cw_malloc(argc * sizeof *lens);
    if (!argv || !lens) {
        cw_free(argv);
        cw_free(lens);
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    size_t a = 0;
    argv[a] = zset->data, lens[a++] = zset->len;
    argv[a] = dead->data, lens[a++] = dead->len;
    for (size_t i = 0; i < q->n; i++, a++) {
        argv[a] = q->keys.data + q->offs[i];
        lens[a] = strlen(argv[a]);
    }
    char batch[16];
    snprintf(batch, sizeof batch, "%d", CW_REQUEUE_BATCH);
    argv[a] = prefix->data, lens[a++] = prefix->len;
    argv[a] = now, lens[a++] = strlen(now);
    argv[a] = batch, lens[a++] = strlen(batch);
    int rc = 0;
    for (;;) {
        redisReply *r = cw_conn_eval(c, &cw_script_requeue, (int)(2 + q->n), 3, argv, lens, err);
        if (!r) {
            rc = err ? err->code : CWORK_EREDIS;
            break;
        }
        long long m = 0, d = 0, x = 0;
        if (r->type == REDIS_REPLY_ARRAY && r->elements == 3) {
            m = r->element[0]->integer;
            d = r->element[1]->integer;
            x = r->element[2]->integer;
        }
        freeReplyObject(r);
        *moved += (size_t)m;
        if (d > 0) {
            char n[24];
            snprintf(n, sizeof n, "%lld", d);
            cw_log(CWORK_LOG_ERROR, "requeuer.process.dead", "error",
                   "unknown job when requeueing", "jobs", n, NULL);
        }
        if (m + d + x < CW_REQUEUE_BATCH)
            break; /* nothing more is due */
    }
    cw_free(argv);
    cw_free(lens);
    return rc;
}

int cw_requeue_due(cwork_redis *redis, const cw_keys *keys, const char *const *known_names,
                   size_t nknown, size_t *moved, cwork_error *err)
{
    *moved = 0;
    cw_conn *c;
    int rc = cw_redis_checkout(redis, &c, err);
    if (rc)
        return rc;
    cw_buf known_key, zset, dead, prefix;
    cw_buf_init(&known_key);
    cw_buf_init(&zset);
    cw_buf_init(&dead);
    cw_buf_init(&prefix);
    cw_key_known_jobs(keys, &known_key);
    cw_key_dead(keys, &dead);
    cw_key_jobs_prefix(keys, &prefix);
    queue_list q = {0};
    cw_buf_init(&q.keys);
    redisReply *members = NULL;
    const char *smembers[] = {"SMEMBERS", known_key.data};
    size_t smembers_lens[] = {8, known_key.len};
    members = known_key.oom ? NULL : cw_conn_command(c, 2, smembers, smembers_lens, err);
    if (!members) {
        rc = err ? err->code : CWORK_EREDIS;
        goto done;
    }
    size_t cap = nknown + (members->type == REDIS_REPLY_ARRAY ? members->elements : 0);
    q.offs = cw_malloc((cap ? cap : 1) * sizeof *q.offs);
    if (!q.offs) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nknown; i++)
        add_queue(&q, keys, known_names[i], cap);
    for (size_t i = 0; members->type == REDIS_REPLY_ARRAY && i < members->elements; i++) {
        const redisReply *m = members->element[i];
        if (m->type == REDIS_REPLY_STRING && memchr(m->str, '\0', m->len) == NULL)
            add_queue(&q, keys, m->str, cap);
    }
    if (q.keys.oom || dead.oom || prefix.oom) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }
    cw_key_scheduled(keys, &zset);
    rc = requeue_zset(c, &zset, &dead, &prefix, &q, moved, err);
    cw_buf_reset(&zset);
    cw_key_retry(keys, &zset);
    if (rc == 0)
        rc = requeue_zset(c, &zset, &dead, &prefix, &q, moved, err);
    if (rc)
        cw_log(CWORK_LOG_ERROR, "requeuer.process", "error", err ? err->message : "", NULL);
done:
    if (members)
        freeReplyObject(members);
    cw_redis_checkin(redis, c);
    cw_free(q.offs);
    cw_buf_free(&q.keys);
    cw_buf_free(&known_key);
    cw_buf_free(&zset);
    cw_buf_free(&dead);
    cw_buf_free(&prefix);
    return rc;
}
