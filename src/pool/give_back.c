/* Giving back jobs fetched ahead (PROTOCOL §5.8, docs/POOL.md rule 4): when every
 * executor of a dispatcher is held by a handler that runs far longer than the shard's
 * average, the jobs it fetched ahead would wait for it while another pool (cwork's or
 * Go's) could run them; give_back.lua returns them to the right end of their queues. */
#include "give_back.h"
#include "log.h"
#include "scripts.h"

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
static void build_call(cwork_pool *p, cw_task *tasks, cw_argv *keys, cw_argv *args, cw_task **order)
{
    size_t at = 0;
    cw_argv_add_str(args, p->id);
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
        cw_argv_add_int(args, (int64_t)count);
        for (cw_task *t = tasks; t; t = t->next)
            if (t->type == type) {
                cw_argv_add_ref(args, t->raw, t->raw_len);
                order[at++] = t;
            }
    }
}

int cw_give_back(cwork_pool *p, cw_conn *c, cw_task_queue *back, cw_task_queue *kept, size_t *moved,
                 cwork_error *err)
{
    size_t n = back->len;
    *moved = 0;
    if (!n) return 0;
    cw_task **order = cw_calloc(n, sizeof *order);
    unsigned char *marks = cw_calloc(n, 1); /* 0 moved, 1 not found, 2 kept */
    cw_argv keys, args;
    cw_argv_init(&keys);
    cw_argv_init(&args);
    int rc = order && marks ? 0 : cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0) {
        build_call(p, back->head, &keys, &args, order);
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
    if (rc == 0 && (rc = cw_reply_array(r, 4, &len, GIVE_BACK, err)) == 0 &&
        (rc = cw_reply_at_int(r, 0, &count, GIVE_BACK, err)) == 0 &&
        (rc = read_positions(r, 1, marks, n, 1, err)) == 0)
        rc = read_positions(r, 2, marks, n, 2, err);
    if (rc == 0) {
        log_errors(r);
        /* Every task leaves `back`: the kept ones to `kept`, the others are freed. */
        for (size_t i = 0; i < n; i++) {
            CW_ASSERT(order[i] != NULL); /* every task of `back` has a known type */
            if (marks[i] == 2) {
                order[i]->next = NULL;
                cw_tq_push(kept, order[i]);
            } else {
                cw_task_free(order[i]);
            }
        }
        back->head = back->tail = NULL;
        back->len = 0;
        *moved = (size_t)count;
    }
    cw_reply_free(r);
    cw_argv_free(&keys);
    cw_argv_free(&args);
    cw_free(order);
    cw_free(marks);
    return rc;
}
