/* Reclaim: after a fetch whose reply was lost (Redis died after running the script),
 * jobs may sit in the pool's in-progress lists with their locks taken but unknown to
 * the pool; our heartbeat keeps reapers away, so nobody else would ever give them back.
 * Every in-progress entry that no task of any shard accounts for is taken up as
 * fetched.
 *
 * Runs under the exclusive round-trip lock (fetch_lock): no shard is in a round trip,
 * between a fetch and delivering its jobs, or freeing committed tasks — so every job
 * the pool holds is in the lists collected here, and none of them is freed while they
 * are compared. Executors still move tasks within their shard (ready → running →
 * done), which is why each shard is looked at whole under its lock. */
#include "log.h"
#include "pool.h"

#include <stdio.h>
#include <string.h>

/* Marks in used[] the first unused known task whose bytes equal b; 1 when found. */
static int claim_known(const char *b, size_t len, cw_task **known, size_t nknown,
                       unsigned char *used)
{
    for (size_t i = 0; i < nknown; i++)
        if (!used[i] && known[i]->raw_len == len && memcmp(known[i]->raw, b, len) == 0)
            return used[i] = 1;
    return 0;
}

/* Every task of every shard: ready, running, done, taken for commit. Returns how many
 * were stored (at most cap). */
static size_t collect_known(cwork_pool *p, cw_task **known, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < p->nshards; i++) {
        cw_shard *sh = &p->shards[i];
        cw_mutex_lock(&sh->mu);
        for (cw_task *t = sh->ready.head; t && k < cap; t = t->next)
            known[k++] = t;
        for (cw_task *t = sh->done.head; t && k < cap; t = t->next)
            known[k++] = t;
        for (cw_task *t = sh->pending; t && k < cap; t = t->next)
            known[k++] = t;
        for (size_t e = sh->first_executor; e < sh->first_executor + sh->nexecutors && k < cap; e++)
            if (p->executors[e].current) known[k++] = p->executors[e].current;
        cw_mutex_unlock(&sh->mu);
    }
    return k;
}

/* Reclaimed jobs an operator cancelled meanwhile (their ids in <p>cwork:cancelled, for
 * instance while the pool had lost its lease and stopped them) are marked stopped
 * before they are delivered: no executor runs them, and their commit sends them to dead
 * as cancelled (PROTOCOL §21.3). One HMGET, on this rare path only; a failed read
 * leaves them unmarked (the commit still sends them to dead, after a run). */
static void mark_cancelled(cwork_pool *p, cw_conn *c, cw_task_queue *tasks)
{
    cw_buf key;
    cw_buf_init(&key);
    cw_key_cancelled(&p->keys, &key);
    cw_argv a;
    cw_argv_init(&a);
    cw_argv_add_str(&a, "HMGET");
    cw_argv_add_buf(&a, &key);
    for (cw_task *t = tasks->head; t; t = t->next)
        if (t->job) cw_argv_add(&a, t->job->id.ptr, t->job->id.len);
    redisReply *r = NULL;
    size_t n = 0;
    if (!key.oom && !a.oom && a.n > 2 &&
        cw_conn_command(c, (int)a.n, a.argv, a.lens, &r, NULL) == 0 &&
        cw_reply_array(r, 0, &n, NULL, NULL) == 0) {
        size_t i = 0;
        for (cw_task *t = tasks->head; t && i < n; t = t->next) {
            if (!t->job) continue;
            const redisReply *v = cw_reply_at(r, i++);
            if (v && v->type == REDIS_REPLY_STRING) cw_task_stop(t, CWORK_STOP_CANCELLED);
        }
    }
    cw_reply_free(r);
    cw_argv_free(&a);
    cw_buf_free(&key);
}

int cw_reclaim_inprogress(cwork_pool *p, cw_conn *c, cw_task_queue *out, int *incomplete,
                          cwork_error *err)
{
    redisReply **replies = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *replies);
    if (!replies) return cw_error(err, CWORK_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < p->ntypes && rc == 0; i++) {
        const cw_job_type *type = &p->types[i];
        const char *argv[] = {"LRANGE", type->keys[CW_CYCLE_INPROGRESS], "0", "-1"};
        size_t lens[] = {6, type->key_lens[CW_CYCLE_INPROGRESS], 1, 2};
        rc = cw_conn_append(c, 4, argv, lens, err);
    }
    for (size_t i = 0; i < p->ntypes && rc == 0; i++)
        rc = cw_conn_read(c, &replies[i], err);
    size_t cap = cw_pool_in_flight(p); /* fixed while no round trip runs */
    cw_task **known = cw_calloc(cap ? cap : 1, sizeof *known);
    size_t nknown = known ? collect_known(p, known, cap) : 0;
    unsigned char *used = cw_calloc(nknown ? nknown : 1, 1);
    if (rc == 0 && (!known || !used)) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < p->ntypes; i++) {
        const redisReply *r = replies[i];
        size_t n = 0;
        if (cw_reply_array(r, 0, &n, NULL, NULL) != 0) {
            *incomplete = 1; /* an error reply: look again next time */
            continue;
        }
        /* Oldest last: walk from the right so that order is kept. */
        for (size_t j = n; j-- > 0;) {
            const char *bytes;
            size_t len;
            if (cw_reply_at_str(r, j, &bytes, &len, NULL, NULL) != 0 ||
                claim_known(bytes, len, known, nknown, used))
                continue;
            cw_task *t = cw_task_new(&p->types[i], bytes, len);
            if (t)
                cw_tq_push(out, t);
            else
                *incomplete = 1;
        }
    }
    for (size_t i = 0; i < p->ntypes; i++)
        cw_reply_free(replies[i]);
    cw_free(replies);
    cw_free(known);
    cw_free(used);
    if (rc == 0 && out->len) mark_cancelled(p, c, out);
    if (out->len) {
        char n[24];
        snprintf(n, sizeof n, "%zu", out->len);
        cw_log(CWORK_LOG_WARN, "worker.reclaim", "jobs", n, NULL);
    }
    return rc;
}
