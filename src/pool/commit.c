/* Committing finished jobs (PROTOCOL §5.7): success releases the job; a failure goes to
 * retry with backoff, to dead, or is dropped (SkipDead). Decided here; written by the
 * dispatcher's cycle script together with the next fetch. */
#include "clock.h"
#include "commit_layout.h"
#include "log.h"
#include "pool.h"
#include "scripts.h"

#include <string.h>

/* Go's default backoff: fails⁴ + 15 + R × (fails + 1), R uniform in [0, 29]. */
static int64_t default_backoff(const cwork_job *job)
{
    int64_t f = job->fails;
    if (f < 0) f = 0;
    if (f > 1000) /* fails⁴ is past the bound anyway (and overflows from 55109 on) */
        return CWORK_MAX_DELAY_SECONDS;
    uint32_t r = 0;
    if (cw_random_bytes(&r, sizeof r) != 0) r = (uint32_t)cw_now_ms();
    return f * f * f * f + 15 + (int64_t)(r % 30) * (f + 1);
}

static int failure_outcome(cwork_pool *p, const cw_task *t, const cw_job_type **type_out)
{
    const cw_job_type *type =
        t->job ? cw_pool_find_type(p, t->job->name.ptr, t->job->name.len) : NULL;
    *type_out = type;
    if (!type) return OUTCOME_DEAD; /* stray or undecodable */
    if (type->opts.skip_dead && !type->opts.skip_dead_after_retries)
        return OUTCOME_DROP; /* the fork's SkipDead: dropped on the first failure */
    if (t->no_retry)         /* cwork_job_fail_no_retry: as if the retries were exhausted */
        return type->opts.skip_dead ? OUTCOME_DROP : OUTCOME_DEAD;
    /* Decided with fails counting this failure, as Go does after fails += 1. */
    if ((int64_t)type->opts.max_fails - (t->job->fails + 1) > 0) return OUTCOME_RETRY;
    return type->opts.skip_dead ? OUTCOME_DROP : OUTCOME_DEAD;
}

/* A job whose bytes are not a valid job still goes to dead as a valid job, so that Go's
 * client can list it: its name is the queue's, it gets an id of its own, and the bytes
 * are kept in args.raw_job and args.raw_job_base64. */
static int encode_undecodable(cw_buf *out, const cw_task *t, int64_t now)
{
    return cw_job_encode_undecodable(out, t->type->name, t->raw, t->raw_len, t->decode_error, now,
                                     NULL);
}

/* Builds the failure record of each failed task (retry, dead or drop). */
static int prepare_failures(cwork_pool *p, cw_task *done, commit_arg *ca, cw_buf *buf)
{
    int64_t now = cw_now();
    size_t i = 0;
    for (cw_task *t = done; t; t = t->next, i++) {
        commit_arg *a = &ca[i];
        a->target = CW_COMMIT_TARGET_DROP;
        strcpy(a->score, "0");
        /* A cancelled job goes to dead with err "cancelled", whatever its handler
         * returned and whatever its type's retry or skip-dead options (PROTOCOL §21). */
        int cancelled = t->job && atomic_load(&t->stop_reason) == CWORK_STOP_CANCELLED;
        if (cancelled) t->failed = 1;
        if (!t->failed) continue;
        const cw_job_type *type = NULL;
        t->outcome = cancelled ? OUTCOME_DEAD : failure_outcome(p, t, &type);
        if (t->outcome == OUTCOME_DROP) continue;
        a->json_off = buf->len;
        int erc;
        int64_t score = now;
        if (!t->job) {
            erc = encode_undecodable(buf, t, now);
        } else {
            /* Forward a fresh Go-canonical copy with the failure recorded. */
            cwork_job *j = t->job;
            j->fails++;
            const char *msg = cancelled         ? "cancelled"
                              : t->fail_message ? t->fail_message
                                                : "failed";
            cw_job_set_str(&j->err, msg, strlen(msg));
            j->failed_at = now;
            if (t->outcome == OUTCOME_RETRY) {
                int64_t delay = type->opts.backoff
                                    ? type->opts.backoff(j, type->opts.backoff_userdata)
                                    : default_backoff(j);
                /* Within the bound every delay keeps (a larger one overflows the score or
                 * passes 2^53, where scores stop being whole seconds). */
                if (delay > CWORK_MAX_DELAY_SECONDS) delay = CWORK_MAX_DELAY_SECONDS;
                if (delay < -CWORK_MAX_DELAY_SECONDS) delay = -CWORK_MAX_DELAY_SECONDS;
                score = now + delay;
            }
            erc = cw_job_encode(buf, j, NULL);
            j->fails--; /* the task may be committed again after a failed attempt */
        }
        if (erc != 0) {
            /* Cannot happen for a decoded job; never lose the release of its lock. */
            cw_log(CWORK_LOG_ERROR, "worker.removeJobFromInProgress.serialize", "error",
                   cwork_strerror(erc), NULL);
            buf->len = a->json_off;
            t->outcome = OUTCOME_DROP;
            continue;
        }
        a->json_len = buf->len - a->json_off;
        a->failed_at = now;
        a->target = cancelled                     ? CW_COMMIT_TARGET_CANCELLED
                    : t->outcome == OUTCOME_RETRY ? CW_COMMIT_TARGET_RETRY
                                                  : CW_COMMIT_TARGET_DEAD;
        snprintf(a->score, sizeof a->score, "%lld", (long long)score);
    }
    return buf->oom ? CWORK_ENOMEM : 0;
}

static bool in_batch(const cw_task *t)
{
    return t->job && t->job->batch.len;
}

/* The cycle script's batch section: <p>, now, TTL, the entries, then per entry the batch
 * id and job id (cycle.lua). Called only when some task is in a batch, so that the plain
 * commit carries nothing of it. The arguments were reserved by the caller. */
static void add_batch_section(cwork_pool *p, cw_task *done, cw_commit_args *out, size_t nbatch)
{
    cw_argv *args = &out->args;
    snprintf(out->batch_now, sizeof out->batch_now, "%lld", (long long)cw_now());
    snprintf(out->batch_ttl, sizeof out->batch_ttl, "%d", CW_BATCH_TTL_SECONDS);
    cw_argv_add_ref(args, p->keys.prefix, p->keys.prefix_len);
    cw_argv_add_ref(args, out->batch_now, strlen(out->batch_now));
    cw_argv_add_ref(args, out->batch_ttl, strlen(out->batch_ttl));
    cw_argv_add_ref(args, out->batch_entries, CW_COMMIT_BATCH_ENTRY_BYTES * nbatch);
    out->batch_nargs = CW_COMMIT_BATCH_FIXED_ARGS + CW_COMMIT_BATCH_ENTRY_ARGS * nbatch;
    unsigned char *e = out->batch_entries;
    size_t i = 0;
    for (cw_task *t = done; t; t = t->next, i++) {
        if (!in_batch(t)) continue;
        atomic_store_explicit(&t->type->saw_batch_member, true, memory_order_relaxed);
        size_t type_index = (size_t)(t->type - p->types);
        CW_ASSERT(type_index < p->ntypes);
        int kind = !t->failed                    ? CW_COMMIT_BATCH_SUCCEEDED
                   : t->outcome == OUTCOME_RETRY ? CW_COMMIT_BATCH_RETRY
                                                 : CW_COMMIT_BATCH_DEAD;
        cw_commit_put_batch_entry(e, out->raw_at[i], type_index + 1, kind);
        e += CW_COMMIT_BATCH_ENTRY_BYTES;
        cw_argv_add_ref(args, t->job->batch.ptr, t->job->batch.len);
        cw_argv_add_ref(args, t->job->id.ptr, t->job->id.len);
    }
}

int cw_commit_prepare(cwork_pool *p, cw_task *done, cw_commit_args *out, cwork_error *err)
{
    memset(out, 0, sizeof *out);
    cw_buf_init(&out->buf);
    size_t n = 0, nbatch = 0;
    for (cw_task *t = done; t; t = t->next) {
        n++;
        nbatch += in_batch(t);
    }
    size_t nt = p->ntypes ? p->ntypes : 1;
    size_t *group_type = cw_calloc(nt, sizeof *group_type); /* type index of group g */
    size_t *nok = cw_calloc(nt, sizeof *nok), *nfail = cw_calloc(nt, sizeof *nfail);
    size_t *group_of = cw_calloc(n ? n : 1, sizeof *group_of);
    out->groups = cw_malloc(CW_COMMIT_GROUP_BYTES * nt);
    out->fail = cw_calloc(n ? n : 1, sizeof *out->fail);
    out->raw_at = cw_calloc(n ? n : 1, sizeof *out->raw_at);
    out->not_removed = cw_calloc(n ? n : 1, 1);
    out->cancelled = cw_calloc(n ? n : 1, 1);
    cw_argv *args = &out->args;
    cw_argv_reserve(
        args, 1 + CW_COMMIT_FAIL_ARGS * n +
                  (nbatch ? CW_COMMIT_BATCH_FIXED_ARGS + CW_COMMIT_BATCH_ENTRY_ARGS * nbatch : 0));
    if (nbatch) out->batch_entries = cw_malloc(CW_COMMIT_BATCH_ENTRY_BYTES * nbatch);
    int rc = 0;
    if (!group_type || !nok || !nfail || !group_of || !out->groups || !out->fail || !out->raw_at ||
        !out->not_removed || !out->cancelled || args->oom || (nbatch && !out->batch_entries) ||
        prepare_failures(p, done, out->fail, &out->buf) != 0) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }
    size_t G = 0, i = 0;
    for (cw_task *t = done; t; t = t->next, i++) {
        size_t type_index = (size_t)(t->type - p->types);
        CW_ASSERT(type_index < p->ntypes);
        size_t g = 0;
        while (g < G && group_type[g] != type_index)
            g++;
        if (g == G) group_type[G++] = type_index;
        group_of[i] = g;
        if (t->failed)
            nfail[g]++;
        else
            nok[g]++;
    }
    /* One argument for all groups, three 16-bit numbers each: the script reads it with
     * string.byte instead of tonumber on three arguments per type. */
    for (size_t g = 0; g < G; g++)
        cw_commit_put_group(out->groups + CW_COMMIT_GROUP_BYTES * g, group_type[g] + 1, nok[g],
                            nfail[g]);
    /* (the reservation above makes every append below succeed) */
    cw_argv_add_ref(args, out->groups, CW_COMMIT_GROUP_BYTES * G);
    for (size_t g = 0; g < G; g++) {
        i = 0;
        for (cw_task *t = done; t; t = t->next, i++)
            if (group_of[i] == g && !t->failed) {
                out->raw_at[i] = args->n;
                cw_argv_add_ref(args, t->raw, t->raw_len);
            }
    }
    for (size_t g = 0; g < G; g++) {
        i = 0;
        for (cw_task *t = done; t; t = t->next, i++) {
            if (group_of[i] != g || !t->failed) continue;
            commit_arg *a = &out->fail[i];
            out->raw_at[i] = args->n;
            cw_argv_add_ref(args, t->raw, t->raw_len);
            cw_argv_add_ref(args, a->target, 1);
            cw_argv_add_ref(args, a->score, strlen(a->score));
            cw_argv_add_ref(args, a->json_len ? out->buf.data + a->json_off : "", a->json_len);
        }
    }
    if (nbatch) add_batch_section(p, done, out, nbatch);
    out->ntasks = n;
    /* (the pool's clock: tests move it to age kept successes out) */
    rc = cw_commit_prepare_results(p, done, out, cw_clock_now_ms(), err);
done:
    cw_free(group_type);
    cw_free(nok);
    cw_free(nfail);
    cw_free(group_of);
    if (rc) cw_commit_args_free(out);
    return rc;
}

void cw_commit_args_free(cw_commit_args *a)
{
    cw_argv_free(&a->args);
    cw_free(a->groups);
    cw_free(a->fail);
    cw_free(a->raw_at);
    cw_free(a->not_removed);
    cw_free(a->cancelled);
    cw_free(a->batch_entries);
    cw_buf_free(&a->buf);
    cw_argv_free(&a->extra_keys);
    cw_argv_free(&a->extra_args);
    memset(a, 0, sizeof *a);
}
