/* Results and kept successes (PROTOCOL §22), and failure histories (§26): the extra KEYS and the
 * ARGV section the cycle script reads after the commit's, written in the same call that removes
 * each job from in-progress and only when that removed it. Nothing is added (and nothing allocated)
 * when no finished job set a result and no type keeps its successes: the plain commit stays as it
 * was. */
#include "pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A failed run of a decoded job forwarded to retry or dead: its failure is kept in
 * <p>cwork:failures:<id> (PROTOCOL §26). */
static bool keeps_failure(const cw_task *t, const commit_arg *a)
{
    return t->failed && t->job && a->target[0] != '-';
}

/* A success of a job that failed before: its failure history goes (PROTOCOL §26). A job
 * that never failed costs nothing more. */
static bool drops_failures(const cw_task *t)
{
    return !t->failed && t->job && t->job->fails > 0;
}

/* Whether a done task adds anything: a success with a result or of a keeping type, a
 * kept failure, or a success that ends one. */
static bool has_extras(const cw_task *t, const commit_arg *a)
{
    return keeps_failure(t, a) || drops_failures(t) ||
           (!t->failed && t->handler_type &&
            (t->has_result || t->handler_type->opts.keep_succeeded));
}

/* A failure entry without its end: the cycle script appends ,"first_t":<n>} (the first
 * enqueue, carried over from the newest entry kept, else this run's t). */
static void put_failure(cw_buf *b, const cw_task *t, const commit_arg *a)
{
    const cwork_job *j = t->job;
    const char *msg = a->target[0] == 'c' ? "cancelled"
                      : t->fail_message   ? t->fail_message
                                          : "failed";
    cw_buf_reset(b);
    cw_buf_puts(b, "{\"failed_at\":");
    cw_buf_put_int64(b, a->failed_at);
    cw_buf_puts(b, ",\"fails\":");
    cw_buf_put_int64(b, j->fails + 1);
    cw_buf_puts(b, ",\"err\":");
    cw_gj_encode_string(b, msg, strlen(msg));
    cw_buf_puts(b, ",\"t\":");
    cw_buf_put_int64(b, j->t);
    cw_buf_puts(b, ",\"ran_at\":");
    cw_buf_put_int64(b, t->started_ms);
    cw_buf_puts(b, ",\"took_us\":");
    cw_buf_put_int64(b, t->took_us);
    if (a->target[0] == 'r') {
        cw_buf_puts(b, ",\"retry_at\":");
        cw_buf_puts(b, a->score);
    }
}

/* How long a failure history lives: until the retry, then CW_FAILURES_TTL_SECONDS. */
static int64_t failure_ttl(const commit_arg *a)
{
    int64_t wait = a->target[0] == 'r' ? strtoll(a->score, NULL, 10) - a->failed_at : 0;
    return (wait > 0 ? wait : 0) + CW_FAILURES_TTL_SECONDS;
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
    for (; first && !has_extras(first, &out->fail[i]); first = first->next)
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
        if (!has_extras(t, &out->fail[i])) continue;
        if (keeps_failure(t, &out->fail[i]) || drops_failures(t)) {
            cw_buf_reset(&key);
            cw_key_failures(&p->keys, &key, t->job->id.ptr);
            cw_argv_add_buf(k, &key);
        }
        if (keeps_failure(t, &out->fail[i])) {
            put_failure(&member, t, &out->fail[i]);
            cw_argv_add_ref(a, "F", 1);
            cw_argv_add_int(a, (int64_t)out->raw_at[i]);
            cw_argv_add_int(a, (int64_t)(t->type - p->types) + 1);
            cw_argv_add_int(a, (int64_t)k->n);
            cw_argv_add_int(a, failure_ttl(&out->fail[i]));
            cw_argv_add_int(a, CW_FAILURES_KEEP - 1);
            cw_argv_add_buf(a, &member);
            cw_argv_add_int(a, t->job->t);
            continue;
        }
        if (drops_failures(t)) {
            cw_argv_add_ref(a, "D", 1);
            cw_argv_add_int(a, (int64_t)out->raw_at[i]);
            cw_argv_add_int(a, (int64_t)k->n);
        }
        if (t->failed || !t->handler_type) continue;
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
