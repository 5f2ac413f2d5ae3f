/* Giving back jobs fetched ahead (PROTOCOL §5.8, docs/POOL.md rule 4): when every
 * executor of a dispatcher is held by a handler that runs far longer than the shard's
 * average, the jobs it fetched ahead would wait for it while another pool (cwork's or
 * Go's) could run them; give_back.lua returns them to the right end of their queues. */
#include "give_back.h"
#include "log.h"
#include "scripts.h"

#include <stdatomic.h>

#define GIVE_BACK "give-back script"

/* Positions (1-based among the call's jobs) listed in element `at` of reply r, marked
 * with `mark` in marks. */
static int read_positions(const redisReply *r, size_t at, unsigned char *marks, size_t n,
                          unsigned char mark, cwork_error *err)
{
    const redisReply *list = cw_reply_at(r, at);
    size_t len;
    int rc = cw_reply_array(list, 0, &len, GIVE_BACK, err);
    for (size_t j = 0; rc == 0 && j < len; j++) {
        int64_t pos;
        rc = cw_reply_at_int(list, j, &pos, GIVE_BACK, err);
        if (rc == 0 && (pos < 1 || (uint64_t)pos > n))
            rc = cw_error(err, CWORK_EPROTO, "%s: position %lld of %zu jobs", GIVE_BACK,
                          (long long)pos, n);
        if (rc == 0) marks[pos - 1] = mark;
    }
    return rc;
}

/* Logs the writes that failed on damaged keys (the jobs they concern stay the pool's). */
static void log_errors(const redisReply *r)
{
    const redisReply *list = cw_reply_at(r, 3);
    size_t len;
    if (cw_reply_array(list, 0, &len, GIVE_BACK, NULL) != 0) return;
    for (size_t j = 0; j < len; j++) {
        const char *text;
        if (cw_reply_at_str(list, j, &text, NULL, GIVE_BACK, NULL) == 0)
            cw_log(CWORK_LOG_WARN, "worker.give_back", "error", text, NULL);
    }
}

/* The call's keys and arguments, by type in the pool's order; order[] gets the tasks in
 * the order of their bytes in ARGV. */
static void build_call(cwork_pool *p, cw_task *tasks, cw_argv *keys, cw_argv *args, cw_task **order,
                       const cw_buf *cancelled, const cw_buf *channel)
{
    size_t at = 0;
    cw_argv_add_str(args, p->id);
    cw_argv_add(args, channel->data, p->opts.no_wakeups ? 0 : channel->len);
    for (size_t ti = 0; ti < p->ntypes; ti++) {
        const cw_job_type *type = &p->types[ti];
        size_t count = 0;
        for (cw_task *t = tasks; t; t = t->next)
            count += t->type == type;
        if (!count) continue;
        static const cw_cycle_key kinds[] = {CW_CYCLE_INPROGRESS, CW_CYCLE_QUEUE, CW_CYCLE_LOCK,
                                             CW_CYCLE_LOCK_INFO};
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
            cw_argv_add_ref(keys, type->keys[kinds[k]], type->key_lens[kinds[k]]);
        cw_argv_add_ref(args, type->name, type->name_len);
        cw_argv_add_int(args, (int64_t)count);
        for (cw_task *t = tasks; t; t = t->next)
            if (t->type == type) {
                cw_argv_add_ref(args, t->raw, t->raw_len);
                order[at++] = t;
            }
    }
    cw_argv_add_ref(keys, cancelled->data, cancelled->len);
}

/* Every task leaves `back` by its mark: 0 given back and 1 not found are freed; 2 kept
 * and 3 cancelled go to `kept`, never to be offered again (a damaged queue stays
 * damaged); a cancelled one does not run (executor.c) and its commit sends it to dead. */
static void sort_out(cw_task **order, const unsigned char *marks, size_t n, cw_task_queue *back,
                     cw_task_queue *kept)
{
    for (size_t i = 0; i < n; i++) {
        CW_ASSERT(order[i] != NULL); /* every task of `back` has a known type */
        if (marks[i] < 2) {
            cw_task_free(order[i]);
            continue;
        }
        order[i]->no_give_back = 1;
        if (marks[i] == 3) atomic_store(&order[i]->stop_reason, (int)CWORK_STOP_CANCELLED);
        order[i]->next = NULL;
        cw_tq_push(kept, order[i]);
    }
    back->head = back->tail = NULL;
    back->len = 0;
}

int cw_give_back(cwork_pool *p, cw_conn *c, cw_task_queue *back, cw_task_queue *kept, size_t *moved,
                 cwork_error *err)
{
    size_t n = back->len;
    *moved = 0;
    if (!n) return 0;
    cw_task **order = cw_calloc(n, sizeof *order);
    unsigned char *marks = cw_calloc(n, 1); /* 0 moved, 1 not found, 2 kept, 3 cancelled */
    cw_argv keys, args;
    cw_argv_init(&keys);
    cw_argv_init(&args);
    cw_buf cancelled, channel;
    cw_buf_init(&cancelled);
    cw_buf_init(&channel);
    cw_key_cancelled(&p->keys, &cancelled);
    cw_key_wakeup_channel(&p->keys, &channel);
    int rc = order && marks && !cancelled.oom && !channel.oom
                 ? 0
                 : cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0) {
        build_call(p, back->head, &keys, &args, order, &cancelled, &channel);
        cw_argv_add_refs(&keys, &args); /* KEYS, then ARGV */
        rc = cw_argv_check(&args, err);
        if (rc == 0) rc = cw_argv_check(&keys, err);
    }
    redisReply *r = NULL;
    if (rc == 0)
        rc = cw_conn_eval(c, &cw_script_give_back, (int)(keys.n - args.n), (int)args.n, keys.argv,
                          keys.lens, &r, err);
    size_t len = 0;
    int64_t count = 0;
    if (rc == 0 && (rc = cw_reply_array(r, 5, &len, GIVE_BACK, err)) == 0 &&
        (rc = cw_reply_at_int(r, 0, &count, GIVE_BACK, err)) == 0 &&
        (rc = read_positions(r, 1, marks, n, 1, err)) == 0 &&
        (rc = read_positions(r, 2, marks, n, 2, err)) == 0)
        rc = read_positions(r, 4, marks, n, 3, err);
    /* With min_replicas, as after a commit: a give-back a failover could lose must not be
     * believed (the tasks would be freed with their entries still in progress on the
     * promoted replica); an error leaves `back` whole, and the reclaim takes up the rest. */
    if (rc == 0) rc = cw_conn_append_wait_replicas(c, err);
    if (rc == 0) rc = cw_conn_read_wait_replicas(c, err);
    if (rc == 0) {
        log_errors(r);
        sort_out(order, marks, n, back, kept);
        *moved = (size_t)count;
    }
    cw_reply_free(r);
    cw_argv_free(&keys);
    cw_argv_free(&args);
    cw_buf_free(&cancelled);
    cw_buf_free(&channel);
    cw_free(order);
    cw_free(marks);
    return rc;
}
