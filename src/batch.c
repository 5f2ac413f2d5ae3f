/* Bulk enqueue: a whole batch in one MULTI/EXEC round trip.
 *
 * Immediate jobs are grouped by queue into one multi-value LPUSH each (same order in
 * the queue as one LPUSH per job), delayed jobs go into one ZADD, unique jobs each run
 * the enqueue_unique script, and every name the known_jobs cache lacks goes into one
 * SADD. Entries are validated and encoded when added, so a bad entry never reaches
 * Redis; a connection error during the round trip leaves the MULTI unexecuted. */
#include "enqueue.h"

#include "args.h"
#include "scripts.h"

#include <stdlib.h>
#include <string.h>

typedef struct batch_entry {
    size_t name_off, json_off, json_len, guard_off, guard_len;
    size_t alt_len;          /* unique: the guard in the other escape spelling follows */
    const char *guard_value; /* unique: the enqueue_unique script's ARGV[4], ARGV[5] */
    const char *rearm;
    int delayed;
    int unique;
    int64_t run_at;
    char id[25];
    char score[24];
    int status;
} batch_entry;

struct cwork_batch {
    cwork_enqueuer *enq;
    batch_entry *e;
    size_t n, cap;
    cw_buf data; /* names (NUL-terminated), job JSON and guard keys, by offset */
};

cwork_batch *cwork_batch_new(cwork_enqueuer *enq)
{
    cwork_batch *b = cw_calloc(1, sizeof *b);
    if (b)
        b->enq = enq;
    return b;
}

void cwork_batch_free(cwork_batch *b)
{
    if (!b)
        return;
    cw_free(b->e);
    cw_buf_free(&b->data);
    cw_free(b);
}

void cwork_batch_reset(cwork_batch *b)
{
    b->n = 0;
    cw_buf_reset(&b->data);
}

size_t cwork_batch_count(const cwork_batch *b)
{
    return b->n;
}

int cwork_batch_status(const cwork_batch *b, size_t i, const char **id)
{
    if (i >= b->n)
        return CWORK_EINVAL;
    if (id)
        *id = b->e[i].id;
    return b->e[i].status;
}

int cwork_batch_add(cwork_batch *b, const char *name, const cwork_args *args,
                    int64_t delay_seconds, int flags, cwork_error *err)
{
    if (!name)
        return cw_error(err, CWORK_EINVAL, "batch: job name is required");
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        batch_entry *e = cw_realloc(b->e, cap * sizeof *e);
        if (!e)
            return cw_error(err, CWORK_ENOMEM, "out of memory");
        b->e = e;
        b->cap = cap;
    }
    batch_entry *e = &b->e[b->n];
    memset(e, 0, sizeof *e);
    size_t mark = b->data.len;
    int64_t now = cw_now();
    e->unique = (flags & CWORK_BATCH_UNIQUE) != 0;
    e->delayed = (flags & CWORK_BATCH_IN) != 0;
    e->run_at = e->delayed ? now + delay_seconds : 0;
    snprintf(e->score, sizeof e->score, "%lld", (long long)e->run_at);

    e->name_off = b->data.len;
    cw_buf_append(&b->data, name, strlen(name) + 1);
    int rc;
    if (e->unique) { /* guard key(s), then the job, as the enqueuer's flavour writes them */
        enq_unique u;
        rc = enq_encode_unique(b->enq, name, args, NULL, now, &b->data, &u, e->id, err);
        e->guard_off = u.guard_off;
        e->guard_len = u.guard_len;
        e->alt_len = u.alt_len;
        e->json_off = u.json_off;
        e->json_len = u.json_len;
        e->guard_value = u.guard_value;
        e->rearm = u.rearm;
    } else {
        e->json_off = b->data.len;
        rc = enq_encode_job(b->enq, name, args, 0, now, &b->data, e->id, err);
        e->json_len = b->data.len - e->json_off;
    }
    if (rc == 0 && b->data.oom)
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc) {
        b->data.len = mark; /* drop the half-added entry */
        b->data.oom = 0;
        return rc;
    }
    e->status = CWORK_EREDIS; /* until sent */
    b->n++;
    return 0;
}

/* ---------------------------------------------------------------- sending */

static const char *entry_name(const cwork_batch *b, size_t i)
{
    return b->data.data + b->e[i].name_off;
}

/* Immediate plain entries are sorted by name, keeping their order within a name. */
typedef struct {
    const char *name;
    size_t idx;
} name_idx;

static int cmp_by_name(const void *x, const void *y)
{
    const name_idx *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

static int sort_by_name(const cwork_batch *b, size_t *order, size_t count)
{
    name_idx *tmp = cw_malloc((count ? count : 1) * sizeof *tmp);
    if (!tmp)
        return CWORK_ENOMEM;
    for (size_t k = 0; k < count; k++)
        tmp[k] = (name_idx){entry_name(b, order[k]), order[k]};
    qsort(tmp, count, sizeof *tmp, cmp_by_name);
    for (size_t k = 0; k < count; k++)
        order[k] = tmp[k].idx;
    cw_free(tmp);
    return 0;
}

/* What each queued command of the MULTI stands for, to map EXEC's replies back. */
typedef struct {
    size_t first, count; /* a run in order[] of entries covered by this command */
    int kind;            /* 0 LPUSH/ZADD group, 1 unique script, 2 SADD */
} command_span;

int cwork_enqueue_batch(cwork_batch *b, cwork_error *err)
{
    if (!b)
        return cw_error(err, CWORK_EINVAL, "batch is NULL");
    if (b->n == 0)
        return 0;
    cwork_enqueuer *enq = b->enq;
    int64_t now = cw_now();
    size_t n = b->n;
    size_t *order = cw_malloc(n * sizeof *order);
    command_span *spans = cw_malloc((n + 3) * sizeof *spans);
    /* argv upper bound: per entry at most 12 (EVALSHA sha 4 k1..k4 a1..a5) or 2 (a
     * ZADD pair) plus a name in SADD; per group 2; MULTI, EXEC, SADD key, ZADD key. */
    size_t argv_cap = 12 * n + 16;
    const char **argv = cw_malloc(argv_cap * sizeof *argv);
    size_t *lens = cw_malloc(argv_cap * sizeof *lens);
    unsigned char *sadd_name = cw_calloc(n, 1);
    cw_buf keys;
    cw_buf_init(&keys);
    int rc = 0;
    cw_conn *c = NULL;
    if (!order || !spans || !argv || !lens || !sadd_name) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }

    /* Partition: plain immediate (sorted by name), plain delayed, unique. */
    size_t nplain = 0, ndelayed = 0, nunique = 0;
    for (size_t i = 0; i < n; i++)
        if (!b->e[i].unique && !b->e[i].delayed)
            order[nplain++] = i;
    for (size_t i = 0; i < n; i++)
        if (!b->e[i].unique && b->e[i].delayed)
            order[nplain + ndelayed++] = i;
    for (size_t i = 0; i < n; i++)
        if (b->e[i].unique)
            order[nplain + ndelayed + nunique++] = i;
    if (sort_by_name(b, order, nplain) != 0) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }

    /* Which names need SADD: one per distinct name missing from the cache. */
    size_t nsadd = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        if (!enq_known_needs_sadd(enq, entry_name(b, i), now))
            continue;
        int seen = 0;
        for (size_t m = 0; m < k && !seen; m++)
            seen = sadd_name[order[m]] && strcmp(entry_name(b, order[m]), entry_name(b, i)) == 0;
        if (!seen) {
            sadd_name[i] = 1;
            nsadd++;
        }
    }

    /* Key strings, referenced by offset until the buffer stops growing. */
    size_t known_off = keys.len;
    cw_key_known_jobs(&enq->keys, &keys);
    size_t known_len = keys.len - known_off;
    size_t channel_off = keys.len;
    cw_key_wakeup_channel(&enq->keys, &keys);
    size_t channel_len = keys.len - channel_off;
    size_t sched_off = keys.len;
    cw_key_scheduled(&enq->keys, &keys);
    size_t sched_len = keys.len - sched_off;
    size_t *queue_off = cw_malloc(n * sizeof *queue_off), *queue_len = cw_malloc(n * sizeof *queue_len);
    if (!queue_off || !queue_len) {
        cw_free(queue_off);
        cw_free(queue_len);
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        queue_off[i] = keys.len;
        cw_key_queue(&enq->keys, &keys, entry_name(b, i));
        queue_len[i] = keys.len - queue_off[i];
    }
    if (keys.oom) {
        cw_free(queue_off);
        cw_free(queue_len);
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }

    if ((rc = cw_redis_checkout(enq->redis, &c, err)) != 0) {
        cw_free(queue_off);
        cw_free(queue_len);
        goto done;
    }
    if (nunique && (rc = cw_conn_load_script(c, &cw_script_enqueue_unique, err)) != 0)
        goto send_failed;

    const char *multi[] = {"MULTI"}, *exec[] = {"EXEC"};
    size_t multi_len[] = {5}, exec_len[] = {4};
    size_t nspans = 0;
    if ((rc = cw_conn_append(c, 1, multi, multi_len, err)))
        goto send_failed;
    /* One LPUSH per run of equal names. */
    for (size_t k = 0; k < nplain;) {
        size_t i = order[k], argc = 0, first = k;
        argv[argc] = "LPUSH", lens[argc++] = 5;
        argv[argc] = keys.data + queue_off[i], lens[argc++] = queue_len[i];
        while (k < nplain && strcmp(entry_name(b, order[k]), entry_name(b, i)) == 0) {
            batch_entry *e = &b->e[order[k++]];
            argv[argc] = b->data.data + e->json_off, lens[argc++] = e->json_len;
        }
        spans[nspans++] = (command_span){first, k - first, 0};
        if ((rc = cw_conn_append(c, (int)argc, argv, lens, err)))
            goto send_failed;
    }
    if (ndelayed) {
        size_t argc = 0;
        argv[argc] = "ZADD", lens[argc++] = 4;
        argv[argc] = keys.data + sched_off, lens[argc++] = sched_len;
        for (size_t k = nplain; k < nplain + ndelayed; k++) {
            batch_entry *e = &b->e[order[k]];
            argv[argc] = e->score, lens[argc++] = strlen(e->score);
            argv[argc] = b->data.data + e->json_off, lens[argc++] = e->json_len;
        }
        spans[nspans++] = (command_span){nplain, ndelayed, 0};
        if ((rc = cw_conn_append(c, (int)argc, argv, lens, err)))
            goto send_failed;
    }
    for (size_t k = nplain + ndelayed; k < n; k++) {
        batch_entry *e = &b->e[order[k]];
        const char *guard = b->data.data + e->guard_off;
        const char *sargv[] = {
            e->delayed ? keys.data + sched_off : keys.data + queue_off[order[k]], guard,
            keys.data + known_off, e->alt_len ? guard + e->guard_len : guard,
            b->data.data + e->json_off, e->delayed ? e->score : "", "", e->guard_value,
            e->rearm};
        size_t slens[] = {e->delayed ? sched_len : queue_len[order[k]], e->guard_len, known_len,
                          e->alt_len ? e->alt_len : e->guard_len, e->json_len,
                          e->delayed ? strlen(e->score) : 0, 0, strlen(e->guard_value),
                          strlen(e->rearm)};
        spans[nspans++] = (command_span){k, 1, 1};
        if ((rc = cw_conn_append_eval(c, &cw_script_enqueue_unique, 4, 5, sargv, slens, err)))
            goto send_failed;
    }
    if (nsadd) {
        size_t argc = 0;
        argv[argc] = "SADD", lens[argc++] = 4;
        argv[argc] = keys.data + known_off, lens[argc++] = known_len;
        for (size_t i = 0; i < n; i++)
            if (sadd_name[i])
                argv[argc] = entry_name(b, i), lens[argc++] = strlen(entry_name(b, i));
        spans[nspans++] = (command_span){0, 0, 2};
        if ((rc = cw_conn_append(c, (int)argc, argv, lens, err)))
            goto send_failed;
    }
    if ((rc = cw_conn_append(c, 1, exec, exec_len, err)))
        goto send_failed;
    /* Wake idle pools: one PUBLISH per distinct name of the immediate jobs. */
    size_t npublish = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        if (b->e[i].delayed)
            continue;
        int seen = 0;
        for (size_t m = 0; m < k && !seen; m++)
            seen = !b->e[order[m]].delayed &&
                   strcmp(entry_name(b, order[m]), entry_name(b, i)) == 0;
        if (seen)
            continue;
        const char *pub[] = {"PUBLISH", keys.data + channel_off, entry_name(b, i)};
        size_t pub_lens[] = {7, channel_len, strlen(entry_name(b, i))};
        if ((rc = cw_conn_append(c, 3, pub, pub_lens, err)))
            goto send_failed;
        npublish++;
    }

    /* Replies: +OK, one +QUEUED (or an error) per command, then EXEC's array. */
    redisReply *r = NULL;
    int queue_error = 0;
    for (size_t s = 0; s < nspans + 1; s++) {
        if ((rc = cw_conn_read(c, &r, err)))
            goto send_failed;
        if (r->type == REDIS_REPLY_ERROR && !queue_error) {
            queue_error = 1;
            cw_error(err, CWORK_EREDIS, "redis: %s", r->str);
        }
        freeReplyObject(r);
    }
    if ((rc = cw_conn_read(c, &r, err)))
        goto send_failed;
    if (queue_error || r->type != REDIS_REPLY_ARRAY || r->elements != nspans) {
        if (!queue_error)
            cw_error(err, r->type == REDIS_REPLY_ERROR ? CWORK_EREDIS : CWORK_EPROTO,
                     "redis: EXEC failed: %s",
                     r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
        freeReplyObject(r);
        rc = err ? err->code : CWORK_EREDIS;
        goto send_failed;
    }
    size_t failed = 0;
    for (size_t s = 0; s < nspans; s++) {
        redisReply *x = r->element[s];
        int status = CWORK_OK;
        if (x->type == REDIS_REPLY_ERROR) {
            status = CWORK_EREDIS;
            if (!failed)
                cw_error(err, CWORK_EREDIS, "redis: %s", x->str);
        } else if (spans[s].kind == 1) {
            if (x->type == REDIS_REPLY_STRING && x->len == 3 && !memcmp(x->str, "dup", 3))
                status = CWORK_DUPLICATE;
        }
        if (spans[s].kind == 2) {
            if (status == CWORK_OK)
                for (size_t i = 0; i < n; i++)
                    if (sadd_name[i])
                        enq_known_mark(enq, entry_name(b, i), now);
            continue;
        }
        for (size_t k = spans[s].first; k < spans[s].first + spans[s].count; k++) {
            b->e[order[k]].status = status;
            failed += status < 0;
        }
    }
    freeReplyObject(r);
    for (size_t i = 0; i < npublish; i++) {
        if (cw_conn_read(c, &r, NULL) != 0)
            break; /* the jobs are written; a lost wake-up only delays their start */
        freeReplyObject(r);
    }
    if (failed) {
        char first[sizeof err->message];
        snprintf(first, sizeof first, "%s", err ? err->message : "");
        rc = cw_error(err, CWORK_EREDIS, "%zu of %zu jobs not written: %s", failed, n, first);
    }

send_failed:
    cw_free(queue_off);
    cw_free(queue_len);
    cw_redis_checkin(enq->redis, c);
done:
    cw_free(order);
    cw_free(spans);
    cw_free(argv);
    cw_free(lens);
    cw_free(sadd_name);
    cw_buf_free(&keys);
    return rc;
}
