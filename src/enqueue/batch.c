/* Bulk enqueue: a whole batch in one script call (enqueue_batch.lua), written entirely
 * or not at all.
 *
 * Immediate jobs are grouped by queue into one multi-value LPUSH each (same order in
 * the queue as one LPUSH per job), delayed jobs go into one ZADD, unique jobs each go
 * through the enqueue_unique script's logic (embedded in the batch script at build
 * time), and every name the known_jobs cache lacks goes into one SADD. Entries are validated and
 * encoded when added, so a bad entry never reaches Redis; the script checks every key's type before
 * its first write. */
#include "enqueue.h"
#include "argv.h"

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
    cw_buf data;      /* names (NUL-terminated), job JSON and guard keys, by offset */
    char tracked[25]; /* the tracked batch its jobs join (§23), or "" */
};

int cwork_batch_join(cwork_batch *b, const char *batch_id, cwork_error *err)
{
    if (!b) return cw_error(err, CWORK_EINVAL, "batch is NULL");
    if (b->n) return cw_error(err, CWORK_EINVAL, "batch join: the batch already holds jobs");
    if (!batch_id) {
        b->tracked[0] = '\0';
        return 0;
    }
    int rc = cw_batch_check_id(batch_id, err);
    if (rc == 0) memcpy(b->tracked, batch_id, 25);
    return rc;
}

cwork_batch *cwork_batch_new(cwork_enqueuer *enq)
{
    cwork_batch *b = cw_calloc(1, sizeof *b);
    if (b) b->enq = enq;
    return b;
}

void cwork_batch_free(cwork_batch *b)
{
    if (!b) return;
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
    if (i >= b->n) return CWORK_EINVAL;
    if (id) *id = b->e[i].id;
    return b->e[i].status;
}

int cwork_batch_add(cwork_batch *b, const char *name, const cwork_args *args, int64_t delay_seconds,
                    int flags, cwork_error *err)
{
    if (!name) return cw_error(err, CWORK_EINVAL, "batch: job name is required");
    if (b->tracked[0] && (flags & CWORK_BATCH_UNIQUE))
        return cw_error(err, CWORK_EINVAL,
                        "batch: job %.64s: a job of a tracked batch cannot be unique", name);
    if ((flags & CWORK_BATCH_IN) && cw_enq_check_delay(delay_seconds, err) != 0)
        return CWORK_EINVAL;
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        batch_entry *e = cw_realloc(b->e, cap * sizeof *e);
        if (!e) return cw_error(err, CWORK_ENOMEM, "out of memory");
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
        rc = cw_enq_encode_unique(b->enq, name, args, NULL, now, &b->data, &u, e->id, err);
        e->guard_off = u.guard_off;
        e->guard_len = u.guard_len;
        e->alt_len = u.alt_len;
        e->json_off = u.json_off;
        e->json_len = u.json_len;
        e->guard_value = u.guard_value;
        e->rearm = u.rearm;
    } else {
        e->json_off = b->data.len;
        rc = b->tracked[0]
                 ? cw_enq_encode_member(b->enq, name, args, b->tracked, now, &b->data, e->id, err)
                 : cw_enq_encode_job(b->enq, name, args, 0, now, &b->data, e->id, err);
        e->json_len = b->data.len - e->json_off;
    }
    if (rc == 0 && b->data.oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
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
    if (!tmp) return CWORK_ENOMEM;
    for (size_t k = 0; k < count; k++)
        tmp[k] = (name_idx){entry_name(b, order[k]), order[k]};
    qsort(tmp, count, sizeof *tmp, cmp_by_name);
    for (size_t k = 0; k < count; k++)
        order[k] = tmp[k].idx;
    cw_free(tmp);
    return 0;
}

/* The index (1-based) of name's queue among the first q queue keys, or 0. */
static size_t find_queue(const cwork_batch *b, const size_t *queue_entry, size_t q,
                         const char *name)
{
    for (size_t j = 0; j < q; j++)
        if (strcmp(entry_name(b, queue_entry[j]), name) == 0) return j + 1;
    return 0;
}

/* LPUSH queue jobs… (then a wake-up PUBLISH of the name), or ZADD scheduled run-at job…;
 * the return and reply as cw_conn_command gives them. */
static int send_one_command(const cwork_batch *b, cw_conn *c, const size_t *order, size_t n,
                            const char *queue, const char *sched, size_t sched_len,
                            const char *channel, size_t channel_len, redisReply **out,
                            cwork_error *err)
{
    *out = NULL;
    cw_argv a = {0};
    cw_argv_reserve(&a, 2 + 2 * n);
    cw_argv_add_str(&a, queue ? "LPUSH" : "ZADD");
    cw_argv_add_ref(&a, queue ? queue : sched, queue ? strlen(queue) : sched_len);
    for (size_t k = 0; k < n; k++) {
        const batch_entry *e = &b->e[order[k]];
        if (!queue) cw_argv_add_ref(&a, e->score, strlen(e->score));
        cw_argv_add_ref(&a, b->data.data + e->json_off, e->json_len);
    }
    redisReply *r = NULL;
    const char *name = entry_name(b, order[0]);
    const char *pub[] = {"PUBLISH", channel, name};
    size_t pub_lens[] = {7, channel_len, strlen(name)};
    int rc = cw_argv_check(&a, err);
    if (rc == 0) rc = cw_conn_append(c, (int)a.n, a.argv, a.lens, err);
    if (rc == 0 && queue) rc = cw_conn_append(c, 3, pub, pub_lens, err);
    if (rc == 0) rc = cw_conn_read(c, &r, err);
    if (rc == 0) {
        if (cw_reply_error(r)) {
            rc = cw_error(err, CWORK_EREDIS, "redis: %s", cw_reply_error(r));
            cw_reply_free(r);
            r = NULL;
        }
        redisReply *p = NULL;
        /* the jobs are written whatever the wake-up's reply says */
        if (queue && cw_conn_read(c, &p, NULL) == 0) cw_reply_free(p);
    }
    cw_argv_free(&a);
    *out = r;
    return rc;
}

static int enqueue_batch_once(cwork_batch *b, int *redirected, cwork_error *err);

int cwork_enqueue_batch(cwork_batch *b, cwork_error *err)
{
    /* Redis Cluster: a single pipelined LPUSH/ZADD that meets a redirection (the slot
     * moved) was refused before it wrote anything; one more try reaches the new node.
     * The script follows redirections by itself. */
    int redirected = 0;
    int rc = enqueue_batch_once(b, &redirected, err);
    if (rc < 0 && redirected) rc = enqueue_batch_once(b, &redirected, err);
    return rc;
}

static int enqueue_batch_once(cwork_batch *b, int *redirected, cwork_error *err)
{
    if (!b) return cw_error(err, CWORK_EINVAL, "batch is NULL");
    if (b->n == 0) return 0;
    cwork_enqueuer *enq = b->enq;
    int64_t now = cw_now();
    size_t n = b->n;
    for (size_t i = 0; i < n; i++)
        b->e[i].status = CWORK_EREDIS; /* until the reply says otherwise */
    size_t *order = cw_malloc(n * sizeof *order);
    size_t *queue_entry = cw_malloc(n * sizeof *queue_entry); /* an entry of each queue */
    size_t *queue_of = cw_calloc(n, sizeof *queue_of);        /* by entry, 1-based */
    unsigned char *sadd_name = cw_calloc(n, 1);
    /* The script's arguments, KEYS first (see enqueue_batch.lua). Upper bound (loose): 2
     * fixed keys and 8 counts; per entry a queue key, two guard spellings, 5 args, a SADD
     * name, a publish name and a group's 2 numbers. */
    cw_argv a = {0};
    cw_argv_reserve(&a, 12 * n + 18);
    cw_buf scratch;
    cw_buf_init(&scratch);
    int rc = 0;
    cw_conn *c = NULL;
    if (!order || !queue_entry || !queue_of || !sadd_name || a.oom) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }

    /* Partition: plain immediate (sorted by name), plain delayed, unique. */
    size_t nplain = 0, ndelayed = 0, nunique = 0;
    for (size_t i = 0; i < n; i++)
        if (!b->e[i].unique && !b->e[i].delayed) order[nplain++] = i;
    for (size_t i = 0; i < n; i++)
        if (!b->e[i].unique && b->e[i].delayed) order[nplain + ndelayed++] = i;
    for (size_t i = 0; i < n; i++)
        if (b->e[i].unique) order[nplain + ndelayed + nunique++] = i;
    if (sort_by_name(b, order, nplain) != 0) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }

    /* Which names need SADD: one per distinct name missing from the cache. */
    size_t nsadd = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        if (!cw_enq_known_needs_sadd(enq, entry_name(b, i), now)) continue;
        int seen = 0;
        for (size_t m = 0; m < k && !seen; m++)
            seen = sadd_name[order[m]] && strcmp(entry_name(b, order[m]), entry_name(b, i)) == 0;
        if (!seen) {
            sadd_name[i] = 1;
            nsadd++;
        }
    }

    /* The distinct queues of immediate jobs: runs of the sorted plain entries, then the
     * unique immediate entries' names not seen yet. */
    size_t q = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        if (b->e[i].delayed) continue;
        size_t j = 0;
        if (k < nplain) /* sorted: a new name starts a new queue */
            j = k > 0 && strcmp(entry_name(b, order[k - 1]), entry_name(b, i)) == 0 ? q : 0;
        else
            j = find_queue(b, queue_entry, q, entry_name(b, i));
        if (j == 0) {
            queue_entry[q++] = i;
            j = q;
        }
        queue_of[i] = j;
    }

    /* KEYS: known_jobs, scheduled, the queues, the guards. The keys are copies; every
     * other argument is borrowed from the batch. */
    cw_key_known_jobs(&enq->keys, &scratch);
    cw_argv_add_buf(&a, &scratch);
    cw_buf_reset(&scratch);
    cw_key_scheduled(&enq->keys, &scratch);
    cw_argv_add_buf(&a, &scratch);
    const size_t sched_at = 1, queues_at = 2;
    for (size_t j = 0; j < q; j++) {
        cw_buf_reset(&scratch);
        cw_key_queue(&enq->keys, &scratch, entry_name(b, queue_entry[j]));
        cw_argv_add_buf(&a, &scratch);
    }
    for (size_t k = nplain + ndelayed; k < n; k++) { /* each guard in both spellings */
        const batch_entry *e = &b->e[order[k]];
        const char *guard = b->data.data + e->guard_off;
        cw_argv_add_ref(&a, guard, e->guard_len);
        cw_argv_add_ref(&a, e->alt_len ? guard + e->guard_len : guard,
                        e->alt_len ? e->alt_len : e->guard_len);
    }
    size_t nkeys = a.n;
    /* ARGV: channel, q; plain groups; delayed pairs; unique entries; SADD; PUBLISH. */
    cw_buf_reset(&scratch);
    cw_key_wakeup_channel(&enq->keys, &scratch);
    const size_t channel_at = a.n;
    cw_argv_add_buf(&a, &scratch);
    cw_argv_add_int(&a, (int64_t)q);
    size_t ngroups = 0, groups_at = a.n;
    cw_argv_add_int(&a, 0); /* the number of groups, set below */
    for (size_t k = 0; k < nplain;) {
        size_t first = k, i = order[k];
        cw_argv_add_int(&a, (int64_t)queue_of[i]);
        size_t count_at = a.n;
        cw_argv_add_int(&a, 0); /* the group's size, set below */
        while (k < nplain && queue_of[order[k]] == queue_of[i]) {
            const batch_entry *e = &b->e[order[k++]];
            cw_argv_add_ref(&a, b->data.data + e->json_off, e->json_len);
        }
        cw_argv_set_int(&a, count_at, (int64_t)(k - first));
        ngroups++;
    }
    cw_argv_set_int(&a, groups_at, (int64_t)ngroups);
    cw_argv_add_int(&a, (int64_t)ndelayed);
    for (size_t k = nplain; k < nplain + ndelayed; k++) {
        const batch_entry *e = &b->e[order[k]];
        cw_argv_add_ref(&a, e->score, strlen(e->score));
        cw_argv_add_ref(&a, b->data.data + e->json_off, e->json_len);
    }
    cw_argv_add_int(&a, (int64_t)nunique);
    for (size_t k = nplain + ndelayed; k < n; k++) {
        const batch_entry *e = &b->e[order[k]];
        cw_argv_add_int(&a, e->delayed ? 0 : (int64_t)queue_of[order[k]]);
        cw_argv_add_ref(&a, e->delayed ? e->score : "", e->delayed ? strlen(e->score) : 0);
        cw_argv_add_ref(&a, b->data.data + e->json_off, e->json_len);
        cw_argv_add_ref(&a, e->guard_value, strlen(e->guard_value));
        cw_argv_add_ref(&a, e->rearm, strlen(e->rearm));
    }
    cw_argv_add_int(&a, (int64_t)nsadd);
    for (size_t i = 0; i < n; i++)
        if (sadd_name[i]) cw_argv_add_ref(&a, entry_name(b, i), strlen(entry_name(b, i)));
    cw_argv_add_int(&a, (int64_t)q); /* one wake-up per distinct name of the immediate jobs */
    for (size_t j = 0; j < q; j++)
        cw_argv_add_ref(&a, entry_name(b, queue_entry[j]), strlen(entry_name(b, queue_entry[j])));
    if (b->tracked[0]) { /* the tracked batch's key and how many jobs join it */
        cw_buf_reset(&scratch);
        cw_key_batch(&enq->keys, &scratch, b->tracked);
        cw_argv_add_buf(&a, &scratch);
        cw_argv_add_int(&a, (int64_t)n);
    }
    if ((rc = cw_argv_check(&a, err)) != 0) goto done;

    if ((rc = cw_redis_checkout(enq->redis, &c, err)) != 0) goto done;
    redisReply *r = NULL;
    if (!b->tracked[0] && nsadd == 0 && nunique == 0 && (ndelayed == 0) != (q == 0) && q <= 1) {
        /* One queue's jobs or only delayed ones, every name registered: a single LPUSH
         * or ZADD, atomic on its own and cheaper than the script. */
        rc = send_one_command(b, c, order, n, q ? a.argv[queues_at] : NULL, a.argv[sched_at],
                              a.lens[sched_at], a.argv[channel_at], a.lens[channel_at], &r, err);
    } else {
        rc = cw_conn_eval(c, &cw_script_enqueue_batch, (int)nkeys, (int)(a.n - nkeys), a.argv,
                          a.lens, &r, err);
    }
    /* min_replicas: acknowledged means replicated (checked once the reply is read). */
    int replicated = rc == 0 ? cw_conn_wait_replicas(c, err) : 0;
    *redirected = c->redirected;
    cw_redis_checkin(enq->redis, c);
    if (rc) goto done; /* nothing written (or, on I/O, unknown) */
    /* The single command's count, or the script's one letter per unique job: 'd' for a
     * duplicate. */
    const char *marks = "";
    size_t nmarks = 0;
    if (!(nunique == 0 && cw_reply_is_int(r))) {
        rc = cw_reply_str(r, &marks, &nmarks, "enqueue_batch script", err);
        if (rc == 0 && nmarks != nunique)
            rc = cw_error(err, CWORK_EPROTO, "enqueue_batch script: %zu marks for %zu unique jobs",
                          nmarks, nunique);
    }
    for (size_t k = 0; rc == 0 && k < n; k++) {
        size_t u = k - (nplain + ndelayed);
        b->e[order[k]].status =
            k >= nplain + ndelayed && marks[u] == 'd' ? CWORK_DUPLICATE : CWORK_OK;
    }
    cw_reply_free(r);
    if (rc) goto done;
    for (size_t i = 0; i < n; i++)
        if (sadd_name[i]) cw_enq_known_mark(enq, entry_name(b, i), now);
    rc = replicated;

done:
    cw_free(order);
    cw_free(queue_entry);
    cw_free(queue_of);
    cw_free(sadd_name);
    cw_argv_free(&a);
    cw_buf_free(&scratch);
    return rc;
}
