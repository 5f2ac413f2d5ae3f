/* Committing finished jobs (SPEC §4.8): success releases the job; a failure goes to
 * retry with backoff, to dead, or is dropped (SkipDead), decided here and written by one
 * commit script call for the whole batch. */
#include "log.h"
#include "pool.h"
#include "scripts.h"

#include <string.h>

/* Go's default backoff: fails⁴ + 15 + R × (fails + 1), R uniform in [0, 29]. */
static int64_t default_backoff(const cwork_job *job)
{
    int64_t f = job->fails;
    uint32_t r = 0;
    if (cw_random_bytes(&r, sizeof r) != 0)
        r = (uint32_t)cw_now_ms();
    return f * f * f * f + 15 + (int64_t)(r % 30) * (f + 1);
}


static int failure_outcome(cwork_pool *p, const cw_task *t, const cw_job_type **type_out)
{
    const cw_job_type *type =
        t->job ? cw_pool_find_type(p, t->job->name.ptr, t->job->name.len) : NULL;
    *type_out = type;
    if (!type)
        return OUTCOME_DEAD; /* stray or undecodable */
    if (type->opts.skip_dead && !type->opts.skip_dead_after_retries)
        return OUTCOME_DROP; /* the fork's SkipDead: dropped on the first failure */
    /* Decided with fails counting this failure, as Go does after fails += 1. */
    if ((int64_t)type->opts.max_fails - (t->job->fails + 1) > 0)
        return OUTCOME_RETRY;
    return type->opts.skip_dead ? OUTCOME_DROP : OUTCOME_DEAD;
}

/* A job whose bytes are not a valid job still goes to dead as a valid job, so that Go's
 * client can list it: its name is the queue's, and the bytes are kept in args.raw_job. */
static int encode_undecodable(cw_buf *out, const cw_task *t, int64_t now)
{
    cwork_job j;
    memset(&j, 0, sizeof j);
    j.name.ptr = t->type->name;
    j.name.len = strlen(t->type->name);
    j.id.ptr = (char *)"";
    j.t = now;
    j.fails = 1;
    char msg[400];
    snprintf(msg, sizeof msg, "cwork: the job's bytes are not a valid job (%s); they are kept "
                              "in args.raw_job", t->decode_error);
    j.err.ptr = msg;
    j.err.len = strlen(msg);
    j.failed_at = now;
    gj_value *args = gj_new_object();
    gj_value *raw = gj_new_string(t->raw, t->raw_len);
    if (!args || !raw || gj_object_set(args, "raw_job", 7, raw) != 0) {
        gj_free(args);
        return CWORK_ENOMEM;
    }
    j.args = args;
    int rc = job_encode(out, &j, NULL);
    gj_free(args);
    return rc;
}

/* A failed task's forwarding data: target, score and JSON (in one buffer, by offset,
 * until the append copies them into hiredis' output). */
typedef struct {
    size_t json_off, json_len;
    char score[24];
    const char *target; /* "r", "d" or "-" */
} commit_arg;

/* Builds the failure record of each failed task (retry, dead or drop). */
static int prepare_failures(cwork_pool *p, cw_task *done, commit_arg *ca, cw_buf *buf)
{
    int64_t now = cw_now();
    size_t i = 0;
    for (cw_task *t = done; t; t = t->next, i++) {
        commit_arg *a = &ca[i];
        a->target = "-";
        strcpy(a->score, "0");
        if (!t->failed)
            continue;
        const cw_job_type *type;
        t->outcome = failure_outcome(p, t, &type);
        if (t->outcome == OUTCOME_DROP)
            continue;
        a->json_off = buf->len;
        int erc;
        int64_t score = now;
        if (!t->job) {
            erc = encode_undecodable(buf, t, now);
        } else {
            /* Forward a fresh Go-canonical copy with the failure recorded. */
            cwork_job *j = t->job;
            j->fails++;
            const char *msg = t->fail_message ? t->fail_message : "failed";
            job_set_str(&j->err, msg, strlen(msg));
            j->failed_at = now;
            if (t->outcome == OUTCOME_RETRY)
                score = now + (type->opts.backoff
                                   ? type->opts.backoff(j, type->opts.backoff_userdata)
                                   : default_backoff(j));
            erc = job_encode(buf, j, NULL);
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
        a->target = t->outcome == OUTCOME_RETRY ? "r" : "d";
        snprintf(a->score, sizeof a->score, "%lld", (long long)score);
    }
    return buf->oom ? CWORK_ENOMEM : 0;
}

int cw_commit_append(cwork_pool *p, cw_conn *c, cw_task *done, cwork_error *err)
{
    size_t n = 0;
    for (cw_task *t = done; t; t = t->next)
        n++;
    /* The queues the tasks came from (few: at most the registered types). */
    cw_job_type **groups = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *groups);
    size_t *nok = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *nok);
    size_t *nfail = cw_calloc(p->ntypes ? p->ntypes : 1, sizeof *nfail);
    size_t *group_of = cw_calloc(n ? n : 1, sizeof *group_of);
    size_t argc_max = 3 * p->ntypes + 2 + 2 + 2 * p->ntypes + 4 * n;
    const char **argv = cw_malloc(argc_max * sizeof *argv);
    size_t *lens = cw_malloc(argc_max * sizeof *lens);
    commit_arg *ca = cw_calloc(n ? n : 1, sizeof *ca);
    cw_buf buf, retry_key, dead_key;
    cw_buf_init(&buf);
    cw_buf_init(&retry_key);
    cw_buf_init(&dead_key);
    cw_key_retry(&p->keys, &retry_key);
    cw_key_dead(&p->keys, &dead_key);
    int rc = 0;
    if (!groups || !nok || !nfail || !group_of || !argv || !lens || !ca || retry_key.oom ||
        dead_key.oom || prepare_failures(p, done, ca, &buf) != 0) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }
    size_t G = 0, i = 0;
    for (cw_task *t = done; t; t = t->next, i++) {
        size_t g = 0;
        while (g < G && groups[g] != t->type)
            g++;
        if (g == G)
            groups[G++] = t->type;
        group_of[i] = g;
        if (t->failed)
            nfail[g]++;
        else
            nok[g]++;
    }
    size_t k = 0;
    for (size_t g = 0; g < G; g++) {
        argv[k] = groups[g]->keys[1], lens[k++] = groups[g]->key_lens[1]; /* in-progress */
        argv[k] = groups[g]->keys[3], lens[k++] = groups[g]->key_lens[3]; /* lock */
        argv[k] = groups[g]->keys[4], lens[k++] = groups[g]->key_lens[4]; /* lock_info */
    }
    argv[k] = retry_key.data, lens[k++] = retry_key.len;
    argv[k] = dead_key.data, lens[k++] = dead_key.len;
    size_t nkeys = k;
    char counts[2 + 2 * 64][24];
    char *counts_heap = NULL;
    char (*cnt)[24] = counts;
    if (2 + 2 * G > sizeof counts / sizeof counts[0]) {
        counts_heap = cw_malloc((2 + 2 * G) * 24);
        if (!counts_heap) {
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
            goto done;
        }
        cnt = (char(*)[24])counts_heap;
    }
    argv[k] = p->id, lens[k++] = 24;
    snprintf(cnt[0], 24, "%zu", G);
    argv[k] = cnt[0], lens[k++] = strlen(cnt[0]);
    for (size_t g = 0; g < G; g++) {
        snprintf(cnt[1 + 2 * g], 24, "%zu", nok[g]);
        snprintf(cnt[2 + 2 * g], 24, "%zu", nfail[g]);
        argv[k] = cnt[1 + 2 * g], lens[k++] = strlen(cnt[1 + 2 * g]);
        argv[k] = cnt[2 + 2 * g], lens[k++] = strlen(cnt[2 + 2 * g]);
    }
    for (size_t g = 0; g < G; g++) {
        i = 0;
        for (cw_task *t = done; t; t = t->next, i++)
            if (group_of[i] == g && !t->failed)
                argv[k] = t->raw, lens[k++] = t->raw_len;
    }
    for (size_t g = 0; g < G; g++) {
        i = 0;
        for (cw_task *t = done; t; t = t->next, i++) {
            if (group_of[i] != g || !t->failed)
                continue;
            argv[k] = t->raw, lens[k++] = t->raw_len;
            argv[k] = ca[i].target, lens[k++] = 1;
            argv[k] = ca[i].score, lens[k++] = strlen(ca[i].score);
            argv[k] = ca[i].json_len ? buf.data + ca[i].json_off : "", lens[k++] = ca[i].json_len;
        }
    }
    rc = cw_conn_append_eval(c, &cw_script_commit, (int)nkeys, (int)(k - nkeys), argv, lens,
                             err);
    cw_free(counts_heap);
done:
    cw_free(groups);
    cw_free(nok);
    cw_free(nfail);
    cw_free(group_of);
    cw_free(argv);
    cw_free(lens);
    cw_free(ca);
    cw_buf_free(&buf);
    cw_buf_free(&retry_key);
    cw_buf_free(&dead_key);
    return rc;
}

int cw_commit_read(cwork_pool *p, cw_conn *c, cwork_error *err)
{
    (void)p;
    redisReply *r = NULL;
    int rc = cw_conn_read(c, &r, err);
    if (rc)
        return rc;
    if (r->type == REDIS_REPLY_ERROR)
        rc = cw_error(err, CWORK_EREDIS, "redis: commit: %s", r->str);
    else if (r->type != REDIS_REPLY_INTEGER)
        rc = cw_error(err, CWORK_EPROTO, "commit script answered no integer");
    freeReplyObject(r);
    return rc;
}
