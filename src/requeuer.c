/* Requeuers for the scheduled and retry sets (PROTOCOL §8). */
#include "requeuer.h"

#include "clock.h"
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

/* Logs what one script call reports: the reasons jobs went to dead (with counts) and
 * the errors of jobs it had to leave in place. The first error goes into err. */
static int report(const redisReply *reasons, const redisReply *errors, cwork_error *err)
{
    for (size_t i = 0; reasons->type == REDIS_REPLY_ARRAY && i + 1 < reasons->elements; i += 2) {
        const redisReply *why = reasons->element[i], *count = reasons->element[i + 1];
        if (why->type != REDIS_REPLY_STRING || count->type != REDIS_REPLY_INTEGER)
            continue;
        char n[24];
        snprintf(n, sizeof n, "%lld", count->integer);
        cw_log(CWORK_LOG_ERROR, "requeuer.process.dead", "error", why->str, "jobs", n, NULL);
    }
    int rc = 0;
    for (size_t i = 0; errors->type == REDIS_REPLY_ARRAY && i < errors->elements; i++) {
        const redisReply *e = errors->element[i];
        if (e->type != REDIS_REPLY_STRING)
            continue;
        cw_log(CWORK_LOG_ERROR, "requeuer.process", "error", e->str, NULL);
        if (rc == 0)
            rc = cw_error(err, CWORK_EREDIS, "redis: %s", e->str);
    }
    return rc;
}

static int requeue_zset(cw_conn *c, const cw_buf *zset, const cw_buf *dead, const cw_buf *prefix,
                        const queue_list *q, size_t *moved, cwork_error *err)
{
    char now[24], seed[25];
    snprintf(now, sizeof now, "%lld", (long long)cw_clock_now());
    if (cw_make_id(seed) != 0)
        return cw_error(err, CWORK_EINVAL, "cannot read the OS random source");
    size_t argc = 2 + q->n + 5;
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
    char batch[16], skip[24];
    snprintf(batch, sizeof batch, "%d", CW_REQUEUE_BATCH);
    argv[a] = prefix->data, lens[a++] = prefix->len;
    argv[a] = now, lens[a++] = strlen(now);
    argv[a] = batch, lens[a++] = strlen(batch);
    size_t skip_at = a++;
    argv[a] = seed, lens[a++] = 24;
    long long left = 0;
    int rc = 0;
    for (;;) {
        snprintf(skip, sizeof skip, "%lld", left);
        argv[skip_at] = skip, lens[skip_at] = strlen(skip);
        redisReply *r = NULL;
        int erc = cw_conn_eval(c, &cw_script_requeue, (int)(2 + q->n), 5, argv, lens, &r, err);
        if (erc) {
            rc = erc;
            cw_log(CWORK_LOG_ERROR, "requeuer.process", "error", err->message, NULL);
            break;
        }
        long long n[4] = {0, 0, 0, 0};
        int well_formed = r->type == REDIS_REPLY_ARRAY && r->elements == 6;
        for (size_t i = 0; well_formed && i < 4; i++) {
            well_formed = r->element[i]->type == REDIS_REPLY_INTEGER;
            n[i] = well_formed ? r->element[i]->integer : 0;
        }
        if (!well_formed) {
            freeReplyObject(r);
            rc = cw_error(err, CWORK_EPROTO, "requeue script: unexpected reply");
            cw_log(CWORK_LOG_ERROR, "requeuer.process", "error", err->message, NULL);
            break;
        }
        int e = report(r->element[4], r->element[5], err);
        if (rc == 0)
            rc = e;
        freeReplyObject(r);
        *moved += (size_t)n[0];
        left += n[3];
        if (n[0] + n[1] + n[2] + n[3] < CW_REQUEUE_BATCH)
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
    cwork_error local = {0};
    if (!err)
        err = &local; /* the message is logged either way */
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
    rc = known_key.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                       : cw_conn_command(c, 2, smembers, smembers_lens, &members, err);
    if (rc && (known_key.oom || c->broken)) {
        cw_log(CWORK_LOG_ERROR, "requeuer.process", "error", err->message, NULL);
        goto done;
    }
    if (rc) {
        /* An error reply (a damaged known_jobs): the registered names' jobs still move;
         * the others wait (their own pools move them), and the error is reported. */
        cw_log(CWORK_LOG_ERROR, "requeuer.process", "error", err->message, "key", known_key.data,
               NULL);
    }
    size_t cap = nknown + (members && members->type == REDIS_REPLY_ARRAY ? members->elements : 0);
    q.offs = cw_malloc((cap ? cap : 1) * sizeof *q.offs);
    if (!q.offs) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nknown; i++)
        add_queue(&q, keys, known_names[i], cap);
    for (size_t i = 0; members && members->type == REDIS_REPLY_ARRAY && i < members->elements; i++) {
        const redisReply *m = members->element[i];
        if (m->type == REDIS_REPLY_STRING && memchr(m->str, '\0', m->len) == NULL)
            add_queue(&q, keys, m->str, cap);
    }
    if (q.keys.oom || dead.oom || prefix.oom) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }
    /* Both sets, whatever happened to the first: a damaged key in one must not stop
     * the other. Jobs left in place were logged by report(); a failed call is here. */
    for (int set = 0; set < 2; set++) {
        cw_buf_reset(&zset);
        if (set == 0)
            cw_key_scheduled(keys, &zset);
        else
            cw_key_retry(keys, &zset);
        cwork_error e = {0};
        int src = zset.oom ? cw_error(&e, CWORK_ENOMEM, "out of memory")
                           : requeue_zset(c, &zset, &dead, &prefix, &q, moved, &e);
        if (src && rc == 0)
            rc = cw_error(err, src, "%s", e.message[0] ? e.message : cwork_strerror(src));
    }
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
