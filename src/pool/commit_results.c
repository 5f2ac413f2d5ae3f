/* Results and kept successes (PROTOCOL §22): the extra KEYS and the ARGV section the
 * cycle script reads after the commit's, written in the same call that removes each job
 * from in-progress and only when that removed it. Nothing is added (and nothing
 * allocated) when no finished job set a result and no type keeps its successes: the
 * plain commit stays as it was. */
#include "pool.h"

#include <stdio.h>
#include <string.h>

/* Whether a done task adds anything: a success with a result or of a keeping type. */
static bool has_extras(const cw_task *t)
{
    return !t->failed && t->handler_type && (t->has_result || t->handler_type->opts.keep_succeeded);
}

/* The member of a kept success: when it ran, how long it took, and the job as fetched
 * (a succeeded job was decoded, so its bytes are a JSON object). */
static void put_member(cw_buf *b, const cw_task *t)
{
    cw_buf_reset(b);
    cw_buf_puts(b, "{\"ran_at\":");
    cw_buf_put_int64(b, t->started_ms);
    cw_buf_puts(b, ",\"took_us\":");
    cw_buf_put_int64(b, t->took_us);
    cw_buf_puts(b, ",\"job\":");
    cw_buf_append(b, t->raw, t->raw_len);
    cw_buf_putc(b, '}');
}

int cw_commit_prepare_results(cwork_pool *p, cw_task *done, cw_commit_args *out, int64_t now_ms,
                              cwork_error *err)
{
    size_t i = 0;
    cw_task *first = done;
    for (; first && !has_extras(first); first = first->next)
        i++;
    if (!first) return 0; /* the plain path */

    cw_argv *k = &out->extra_keys, *a = &out->extra_args;
    cw_buf key, member, channel;
    cw_buf_init(&key);
    cw_buf_init(&member);
    cw_buf_init(&channel);
    cw_key_results_channel(&p->keys, &channel);
    /* Per type: its retention key's index among the extra keys + 1 (0: not yet added). */
    size_t *kept_key = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *kept_key);
    int rc = 0;
    if (!kept_key) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }
    cw_argv_add_int(a, now_ms);
    cw_argv_add_buf(a, &channel);
    for (cw_task *t = first; t; t = t->next, i++) {
        if (!has_extras(t)) continue;
        const cw_job_type *type = t->handler_type;
        size_t ti = (size_t)(type - p->types);
        if (t->has_result) {
            atomic_store_explicit(&t->handler_type->saw_result, true, memory_order_relaxed);
            cw_buf_reset(&key);
            cw_key_result(&p->keys, &key, t->job->id.ptr);
            cw_argv_add_buf(k, &key);
            cw_argv_add_ref(a, "R", 1);
            cw_argv_add_int(a, (int64_t)out->raw_at[i]);
            cw_argv_add_int(a, (int64_t)k->n);
            cw_argv_add_int(a, type->opts.result_ttl_ms);
            cw_argv_add_ref(a, t->result, t->result_len);
            cw_argv_add(a, t->job->id.ptr, t->job->id.len);
        }
        if (type->opts.keep_succeeded) {
            if (!kept_key[ti]) {
                cw_buf_reset(&key);
                cw_key_succeeded(&p->keys, &key, type->name);
                cw_argv_add_buf(k, &key);
                kept_key[ti] = k->n;
            }
            put_member(&member, t);
            cw_argv_add_ref(a, "S", 1);
            cw_argv_add_int(a, (int64_t)out->raw_at[i]);
            cw_argv_add_int(a, (int64_t)ti + 1);
            cw_argv_add_int(a, (int64_t)kept_key[ti]);
            cw_argv_add_buf(a, &member);
        }
    }
    /* Each keeping type is trimmed once per commit, by age then by count. */
    for (size_t ti = 0; ti < p->ntypes; ti++) {
        if (!kept_key[ti]) continue;
        const cwork_job_options *o = &p->types[ti].opts;
        char oldest[32], rank[32];
        snprintf(oldest, sizeof oldest, "(%lld", (long long)(now_ms - o->keep_succeeded_ms));
        snprintf(rank, sizeof rank, "-%lld", (long long)o->keep_succeeded + 1);
        cw_argv_add_ref(a, "T", 1);
        cw_argv_add_int(a, (int64_t)ti + 1);
        cw_argv_add_int(a, (int64_t)kept_key[ti]);
        cw_argv_add_str(a, oldest);
        cw_argv_add_str(a, rank);
    }
    if (k->oom || a->oom || key.oom || member.oom || channel.oom)
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
done:
    cw_free(kept_key);
    cw_buf_free(&key);
    cw_buf_free(&member);
    cw_buf_free(&channel);
    return rc;
}
