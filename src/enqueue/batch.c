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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct batch_entry {
    size_t name_off, json_off, json_len, guard_off, guard_len;
    size_t alt_len;          /* unique: the guard in the other escape spelling follows */
    const char *guard_value; /* unique: the enqueue_unique script's ARGV[4], ARGV[5] */
    const char *rearm;
    int delayed;
    int unique;
    unsigned shard; /* of a sharded namespace (§27.2), chosen when added; 0 otherwise */
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
    /* the last send's node did not answer (shard_backoff.c), and which node it was */
    bool node_failed;
    char node[96];
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

/* The shard entry e goes to (PROTOCOL §27.2) and its enqueuer: every member of a tracked
 * batch to the batch's shard (its counts stay in one slot), a unique job by its guard's
 * text, any other by its id (pinned names by name). */
static int route_entry(cwork_batch *b, batch_entry *e, const char *name, const cwork_args *args,
                       cwork_enqueuer **to, cwork_error *err)
{
    if (cw_enq_shards_count(b->enq) == 1) return 0;
    if (b->tracked[0]) {
        /* Its batch's shard and its type's home could differ, and the pools' mover
         * would carry it away from its batch (PROTOCOL §27.2, §27.4). */
        if (cw_enq_is_pinned(b->enq, name))
            return cw_error(err, CWORK_EINVAL,
                            "batch: job %.64s: its type has a concurrency or rate limit, so in "
                            "a sharded namespace it runs in its name's shard only and cannot "
                            "join a tracked batch",
                            name);
        return cw_enq_batch_shard(b->enq, b->tracked, to, &e->shard, err);
    }
    if (!e->unique) {
        *to = cw_enq_shard_for(b->enq, name, e->id, 24, &e->shard);
        return 0;
    }
    cw_buf route;
    cw_buf_init(&route);
    int rc = cw_enq_unique_route(name, args, &route, err);
    if (rc == 0) *to = cw_enq_shard_for(b->enq, name, route.data, route.len, &e->shard);
    unsigned was = 0; /* a grow in progress (§27.5): the guard may be in the old shard */
    int64_t ttl = 0;
    cwork_enqueuer *old =
        rc == 0 ? cw_enq_grow_old(b->enq, name, route.data, route.len, &was, &ttl) : NULL;
    bool dup = false; /* then sent to the old shard, whose script says so in its status */
    if (old) rc = cw_enq_forward_unique(old, name, args, NULL, e->id, ttl, false, &dup, err);
    if (rc == 0 && dup) {
        *to = old;
        e->shard = was;
    }
    cw_buf_free(&route);
    return rc;
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

    cwork_enqueuer *to = b->enq;
    int rc = cw_enq_shards_refresh(b->enq, err);
    if (rc == 0) rc = cw_enq_new_id(e->id, err);
    if (rc == 0) rc = route_entry(b, e, name, args, &to, err);
    if (rc) return rc;
    e->name_off = b->data.len;
    cw_buf_append(&b->data, name, strlen(name) + 1);
    if (e->unique) { /* guard key(s), then the job, as the enqueuer's flavour writes them */
        enq_unique u;
        rc = cw_enq_encode_unique(to, name, args, NULL, now, &b->data, &u, e->id, err);
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
                 ? cw_enq_encode_member(to, name, args, b->tracked, now, &b->data, e->id, err)
                 : cw_enq_encode_job(to, name, args, 0, now, &b->data, e->id, err);
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

/* How one send lays the batch out. order: the entries, plain immediate ones first
 * (sorted by name), then plain delayed, then unique; sadd_name: by entry, the first
 * entry of each name missing from the known_jobs cache; queue_entry: an entry of each
 * distinct queue of immediate jobs; queue_of: by entry, its queue (1-based, 0 delayed). */
typedef struct batch_plan {
    size_t n, nplain, ndelayed, nunique, nsadd, q;
    size_t *order, *queue_entry, *queue_of;
    unsigned char *sadd_name;
} batch_plan;

static void plan_free(batch_plan *pl)
{
    cw_free(pl->order);
    cw_free(pl->queue_entry);
    cw_free(pl->queue_of);
    cw_free(pl->sadd_name);
}

/* Partition: plain immediate (sorted by name), plain delayed, unique. */
static int plan_order(const cwork_batch *b, batch_plan *pl)
{
    size_t n = pl->n;
    for (size_t i = 0; i < n; i++)
        if (!b->e[i].unique && !b->e[i].delayed) pl->order[pl->nplain++] = i;
    for (size_t i = 0; i < n; i++)
        if (!b->e[i].unique && b->e[i].delayed) pl->order[pl->nplain + pl->ndelayed++] = i;
    for (size_t i = 0; i < n; i++)
        if (b->e[i].unique) pl->order[pl->nplain + pl->ndelayed + pl->nunique++] = i;
    return sort_by_name(b, pl->order, pl->nplain);
}

/* Which names need SADD: one per distinct name missing from the cache. */
static void plan_sadd(const cwork_batch *b, batch_plan *pl, int64_t now)
{
    const size_t *order = pl->order;
    for (size_t k = 0; k < pl->n; k++) {
        size_t i = order[k];
        if (!cw_enq_known_needs_sadd(b->enq, entry_name(b, i), now)) continue;
        int seen = 0;
        for (size_t m = 0; m < k && !seen; m++)
            seen =
                pl->sadd_name[order[m]] && strcmp(entry_name(b, order[m]), entry_name(b, i)) == 0;
        if (!seen) {
            pl->sadd_name[i] = 1;
            pl->nsadd++;
        }
    }
}

/* The distinct queues of immediate jobs: runs of the sorted plain entries, then the
 * unique immediate entries' names not seen yet. */
static void plan_queues(const cwork_batch *b, batch_plan *pl)
{
    const size_t *order = pl->order;
    for (size_t k = 0; k < pl->n; k++) {
        size_t i = order[k];
        if (b->e[i].delayed) continue;
        size_t j = 0;
        if (k < pl->nplain) /* sorted: a new name starts a new queue */
            j = k > 0 && strcmp(entry_name(b, order[k - 1]), entry_name(b, i)) == 0 ? pl->q : 0;
        else
            j = find_queue(b, pl->queue_entry, pl->q, entry_name(b, i));
        if (j == 0) {
            pl->queue_entry[pl->q++] = i;
            j = pl->q;
        }
        pl->queue_of[i] = j;
    }
}

/* The plan of the batch's send; 0 or CWORK_ENOMEM (pl is then freed). */
static int plan_batch(const cwork_batch *b, batch_plan *pl, int64_t now)
{
    memset(pl, 0, sizeof *pl);
    size_t n = pl->n = b->n;
    pl->order = cw_malloc(n * sizeof *pl->order);
    pl->queue_entry = cw_malloc(n * sizeof *pl->queue_entry);
    pl->queue_of = cw_calloc(n, sizeof *pl->queue_of);
    pl->sadd_name = cw_calloc(n, 1);
    if (!pl->order || !pl->queue_entry || !pl->queue_of || !pl->sadd_name ||
        plan_order(b, pl) != 0) {
        plan_free(pl);
        return CWORK_ENOMEM;
    }
    plan_sadd(b, pl, now);
    plan_queues(b, pl);
    return 0;
}

/* Where single commands find their keys and channel among the script's arguments. */
#define SCHED_AT 1
#define QUEUES_AT 2

/* KEYS: known_jobs, scheduled, the queues, the guards. The keys are copies; every
 * other argument is borrowed from the batch. */
static void add_keys(const cwork_batch *b, const batch_plan *pl, cw_argv *a, cw_buf *scratch)
{
    const cw_keys *keys = &b->enq->keys;
    cw_key_known_jobs(keys, scratch);
    cw_argv_add_buf(a, scratch);
    cw_buf_reset(scratch);
    cw_key_scheduled(keys, scratch);
    cw_argv_add_buf(a, scratch);
    for (size_t j = 0; j < pl->q; j++) {
        cw_buf_reset(scratch);
        cw_key_queue(keys, scratch, entry_name(b, pl->queue_entry[j]));
        cw_argv_add_buf(a, scratch);
    }
    for (size_t k = pl->nplain + pl->ndelayed; k < pl->n; k++) { /* both guard spellings */
        const batch_entry *e = &b->e[pl->order[k]];
        const char *guard = b->data.data + e->guard_off;
        cw_argv_add_ref(a, guard, e->guard_len);
        cw_argv_add_ref(a, e->alt_len ? guard + e->guard_len : guard,
                        e->alt_len ? e->alt_len : e->guard_len);
    }
}

/* The plain immediate jobs: the number of groups, then per queue its index, its size
 * and its jobs. */
static void add_plain_groups(const cwork_batch *b, const batch_plan *pl, cw_argv *a)
{
    size_t ngroups = 0, groups_at = a->n;
    cw_argv_add_int(a, 0); /* the number of groups, set below */
    for (size_t k = 0; k < pl->nplain;) {
        size_t first = k, i = pl->order[k];
        cw_argv_add_int(a, (int64_t)pl->queue_of[i]);
        size_t count_at = a->n;
        cw_argv_add_int(a, 0); /* the group's size, set below */
        while (k < pl->nplain && pl->queue_of[pl->order[k]] == pl->queue_of[i]) {
            const batch_entry *e = &b->e[pl->order[k++]];
            cw_argv_add_ref(a, b->data.data + e->json_off, e->json_len);
        }
        cw_argv_set_int(a, count_at, (int64_t)(k - first));
        ngroups++;
    }
    cw_argv_set_int(a, groups_at, (int64_t)ngroups);
}

/* The delayed pairs, then the unique entries. */
static void add_delayed_and_unique(const cwork_batch *b, const batch_plan *pl, cw_argv *a)
{
    size_t unique_from = pl->nplain + pl->ndelayed;
    cw_argv_add_int(a, (int64_t)pl->ndelayed);
    for (size_t k = pl->nplain; k < unique_from; k++) {
        const batch_entry *e = &b->e[pl->order[k]];
        cw_argv_add_ref(a, e->score, strlen(e->score));
        cw_argv_add_ref(a, b->data.data + e->json_off, e->json_len);
    }
    cw_argv_add_int(a, (int64_t)pl->nunique);
    for (size_t k = unique_from; k < pl->n; k++) {
        const batch_entry *e = &b->e[pl->order[k]];
        cw_argv_add_int(a, e->delayed ? 0 : (int64_t)pl->queue_of[pl->order[k]]);
        cw_argv_add_ref(a, e->delayed ? e->score : "", e->delayed ? strlen(e->score) : 0);
        cw_argv_add_ref(a, b->data.data + e->json_off, e->json_len);
        cw_argv_add_ref(a, e->guard_value, strlen(e->guard_value));
        cw_argv_add_ref(a, e->rearm, strlen(e->rearm));
    }
}

/* ARGV: channel, q; plain groups; delayed pairs; unique entries; SADD; PUBLISH; the
 * tracked batch. Returns where the channel is. */
static size_t add_args(const cwork_batch *b, const batch_plan *pl, cw_argv *a, cw_buf *scratch)
{
    const cwork_enqueuer *enq = b->enq;
    cw_buf_reset(scratch);
    cw_key_wakeup_channel(&enq->keys, scratch);
    size_t channel_at = a->n;
    cw_argv_add_buf(a, scratch);
    cw_argv_add_int(a, (int64_t)pl->q);
    add_plain_groups(b, pl, a);
    add_delayed_and_unique(b, pl, a);
    cw_argv_add_int(a, (int64_t)pl->nsadd);
    for (size_t i = 0; i < pl->n; i++)
        if (pl->sadd_name[i]) cw_argv_add_ref(a, entry_name(b, i), strlen(entry_name(b, i)));
    cw_argv_add_int(a, (int64_t)pl->q); /* one wake-up per distinct name of immediate jobs */
    for (size_t j = 0; j < pl->q; j++) {
        const char *name = entry_name(b, pl->queue_entry[j]);
        cw_argv_add_ref(a, name, strlen(name));
    }
    if (b->tracked[0]) { /* the tracked batch's key and how many jobs join it */
        cw_buf_reset(scratch);
        cw_key_batch(&enq->keys, scratch, b->tracked);
        cw_argv_add_buf(a, scratch);
        cw_argv_add_int(a, (int64_t)pl->n);
    }
    return channel_at;
}

/* Sends the batch: a single LPUSH or ZADD when one queue's jobs or only delayed ones
 * with every name registered (atomic on its own and cheaper than the script), else the
 * script. *replicated is min_replicas' verdict once the reply is read. */
static int send_batch(cwork_batch *b, const batch_plan *pl, const cw_argv *a, size_t nkeys,
                      size_t channel_at, redisReply **r, int *redirected, int *replicated,
                      cwork_error *err)
{
    cw_conn *c = NULL;
    int rc = cw_redis_checkout(b->enq->redis, &c, err);
    if (rc != 0) {
        b->node_failed = rc == CWORK_EREDIS; /* not dialled (a full pool: ETIMEOUT) */
        return rc;
    }
    if (!b->tracked[0] && pl->nsadd == 0 && pl->nunique == 0 &&
        (pl->ndelayed == 0) != (pl->q == 0) && pl->q <= 1)
        rc = send_one_command(b, c, pl->order, pl->n, pl->q ? a->argv[QUEUES_AT] : NULL,
                              a->argv[SCHED_AT], a->lens[SCHED_AT], a->argv[channel_at],
                              a->lens[channel_at], r, err);
    else
        rc = cw_conn_eval(c, &cw_script_enqueue_batch, (int)nkeys, (int)(a->n - nkeys), a->argv,
                          a->lens, r, err);
    /* min_replicas: acknowledged means replicated (checked once the reply is read). */
    *replicated = rc == 0 ? cw_conn_wait_replicas(c, err) : 0;
    *redirected = c->redirected;
    b->node_failed = rc < 0 && c->broken && !c->redirected;
    if (c->addr) snprintf(b->node, sizeof b->node, "%s", c->addr);
    cw_redis_checkin(b->enq->redis, c);
    return rc;
}

/* Each entry's status from the reply: the single command's count, or the script's one
 * letter per unique job ('d' for a duplicate). */
static int read_statuses(cwork_batch *b, const batch_plan *pl, const redisReply *r,
                         cwork_error *err)
{
    const char *marks = "";
    size_t nmarks = 0;
    int rc = 0;
    if (!(pl->nunique == 0 && cw_reply_is_int(r))) {
        rc = cw_reply_str(r, &marks, &nmarks, "enqueue_batch script", err);
        if (rc == 0 && nmarks != pl->nunique)
            rc = cw_error(err, CWORK_EPROTO, "enqueue_batch script: %zu marks for %zu unique jobs",
                          nmarks, pl->nunique);
    }
    size_t unique_from = pl->nplain + pl->ndelayed;
    for (size_t k = 0; rc == 0 && k < pl->n; k++)
        b->e[pl->order[k]].status =
            k >= unique_from && marks[k - unique_from] == 'd' ? CWORK_DUPLICATE : CWORK_OK;
    return rc;
}

static int enqueue_batch_once(cwork_batch *b, int *redirected, cwork_error *err);

/* Sends b (all of whose entries go to b->enq's namespace) in one script call. */
static int send_whole(cwork_batch *b, cwork_error *err)
{
    /* Redis Cluster: a single pipelined LPUSH/ZADD that meets a redirection (the slot
     * moved) was refused before it wrote anything; one more try reaches the new node.
     * The script follows redirections by itself. */
    int redirected = 0;
    int rc = enqueue_batch_once(b, &redirected, err);
    if (rc < 0 && redirected) rc = enqueue_batch_once(b, &redirected, err);
    return rc;
}

/* A sharded batch: each shard's entries, in the caller's order, as a batch of their own
 * sent to that shard (one script call each, all or nothing per shard); the statuses go
 * back to the caller's entries. Every shard is tried; the first error is returned. */
static int send_by_shard(cwork_batch *b, cwork_error *err)
{
    unsigned char *sent = cw_calloc(b->n, 1);
    batch_entry *part = cw_malloc(b->n * sizeof *part);
    size_t *from = cw_malloc(b->n * sizeof *from);
    int first = 0;
    if (!sent || !part || !from) first = cw_error(err, CWORK_ENOMEM, "out of memory");
    for (size_t i = 0; first != CWORK_ENOMEM && i < b->n; i++) {
        if (sent[i]) continue;
        size_t k = 0;
        for (size_t j = i; j < b->n; j++)
            if (!sent[j] && b->e[j].shard == b->e[i].shard) {
                part[k] = b->e[j];
                from[k++] = j;
                sent[j] = 1;
            }
        /* a view of b: its shard's entries, the same encoded data (read only) */
        cwork_batch view = {.enq = cw_enq_shard(b->enq, b->e[i].shard),
                            .e = part,
                            .n = k,
                            .cap = k,
                            .data = b->data};
        memcpy(view.tracked, b->tracked, sizeof view.tracked);
        cwork_error e2 = {0};
        /* its shard's node failed a moment ago: at once (shard_backoff.c) */
        int rc = cw_enq_backoff_check(b->enq, view.enq, &e2);
        if (rc == 0) {
            int64_t t0 = cw_monotonic_ms();
            rc = send_whole(&view, &e2);
            cw_enq_backoff_note(view.enq, rc, view.node_failed, view.node, cw_monotonic_ms() - t0,
                                &e2);
        }
        for (size_t m = 0; m < k; m++)
            b->e[from[m]].status = part[m].status;
        if (rc && !first) {
            first = rc;
            if (err) *err = e2;
        }
    }
    cw_free(sent);
    cw_free(part);
    cw_free(from);
    return first;
}

/* Whether the script refused the batch because its tracked batch is not in the shard
 * it was sent to (enqueue_batch.lua's NOBATCH, nothing written); not for a damaged key. */
static bool no_tracked_batch(const cwork_error *e)
{
    const char *nobatch = strstr(e->message, "NOBATCH ");
    return nobatch && strstr(nobatch, " does not exist");
}

typedef struct batch_at {
    const char *id;
    unsigned shard; /* where it is, once found */
} batch_at;

/* A cw_enq_batch_try: whether the batch (ctx) is in shard i, which is then kept. */
static int batch_found_at(cwork_enqueuer *shard, unsigned i, void *ctx, cwork_error *err)
{
    batch_at *at = ctx;
    int rc = cw_enq_batch_exists_in(shard, i, (void *)at->id, err);
    if (rc == 0) at->shard = i;
    return rc;
}

/* The members of a tracked batch opened before a grow that has ended, refused where its
 * id routes now: sent to the shard that holds the batch, when another one the id routed
 * to at a lower count does (PROTOCOL §27.5). rc and e are the refusal's, returned as
 * they are when no shard has it. */
static int send_where_tracked(cwork_batch *b, int rc, cwork_error *e)
{
    unsigned shard = b->n ? b->e[0].shard : 0; /* (every member goes to the batch's shard) */
    batch_at at = {b->tracked, 0};
    cwork_error look = *e;
    int where = cw_enq_batch_elsewhere(b->enq, b->tracked, cw_enq_shard(b->enq, shard),
                                       batch_found_at, &at, &look);
    if (where == CWORK_ENOTFOUND) return rc;
    if (where != 0) {
        *e = look;
        return where;
    }
    for (size_t i = 0; i < b->n; i++)
        b->e[i].shard = at.shard;
    *e = (cwork_error){0};
    return send_by_shard(b, e);
}

int cwork_enqueue_batch(cwork_batch *b, cwork_error *err)
{
    if (!b) return cw_error(err, CWORK_EINVAL, "batch is NULL");
    int sharded = 0;
    for (size_t i = 0; i < b->n; i++) {
        b->e[i].status = CWORK_EREDIS; /* until the reply says otherwise */
        sharded |= b->e[i].shard != 0;
    }
    /* a sharded namespace's shard 0 too goes through send_by_shard: its back-off */
    sharded |= b->n > 0 && cw_enq_shards_count(b->enq) > 1;
    cwork_error e = {0};
    int rc = sharded ? send_by_shard(b, &e) : send_whole(b, &e);
    if (rc && b->tracked[0] && cw_enq_shards_count(b->enq) > 1 && no_tracked_batch(&e))
        rc = send_where_tracked(b, rc, &e);
    if (rc && err) *err = e;
    return rc;
}

static int enqueue_batch_once(cwork_batch *b, int *redirected, cwork_error *err)
{
    if (!b) return cw_error(err, CWORK_EINVAL, "batch is NULL");
    if (b->n == 0) return 0;
    int64_t now = cw_now();
    for (size_t i = 0; i < b->n; i++)
        b->e[i].status = CWORK_EREDIS; /* until the reply says otherwise */
    batch_plan pl;
    if (plan_batch(b, &pl, now) != 0) return cw_error(err, CWORK_ENOMEM, "out of memory");
    /* The script's arguments, KEYS first (see enqueue_batch.lua). Upper bound (loose): 2
     * fixed keys and 8 counts; per entry a queue key, two guard spellings, 5 args, a SADD
     * name, a publish name and a group's 2 numbers. */
    cw_argv a = {0};
    cw_argv_reserve(&a, 12 * pl.n + 18);
    cw_buf scratch;
    cw_buf_init(&scratch);
    int rc = a.oom ? cw_error(err, CWORK_ENOMEM, "out of memory") : 0;
    size_t nkeys = 0, channel_at = 0;
    if (rc == 0) {
        add_keys(b, &pl, &a, &scratch);
        nkeys = a.n;
        channel_at = add_args(b, &pl, &a, &scratch);
        rc = cw_argv_check(&a, err);
    }
    redisReply *r = NULL;
    int replicated = 0;
    if (rc == 0) rc = send_batch(b, &pl, &a, nkeys, channel_at, &r, redirected, &replicated, err);
    /* (an error: nothing written, or, on I/O, unknown) */
    if (rc == 0) rc = read_statuses(b, &pl, r, err);
    cw_reply_free(r);
    if (rc == 0) {
        for (size_t i = 0; i < pl.n; i++)
            if (pl.sadd_name[i]) cw_enq_known_mark(b->enq, entry_name(b, i), now);
        rc = replicated;
    }
    plan_free(&pl);
    cw_argv_free(&a);
    cw_buf_free(&scratch);
    return rc;
}
