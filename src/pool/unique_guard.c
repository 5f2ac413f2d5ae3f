/* Releasing unique guards when their jobs are fetched (PROTOCOL §5.5 item 2, §4.5).
 *
 * The Kuper-Tech fork recomputes the guard key from the decoded args and deletes it.
 * Upstream gocraft/work v0.5 deletes exactly the key its job carries in unique_key, and
 * first reads it: a value other than "1" is the job its EnqueueUniqueByKey last wrote,
 * which runs instead of the queued placeholder. cwork does what the writer of each job
 * expects, whichever flavour the pool is set to:
 *  - unique_key present: that key, and nothing else (recomputing from args fails for
 *    numbers that float64 or cjson changed, and for ByKey jobs always);
 *  - otherwise the args' key in both escape spellings of U+0008/U+000C, since the job
 *    does not say which Go toolchain wrote the guard;
 *  - a job in the guard replaces the task's job; the task keeps the placeholder's raw
 *    bytes for the commit's LREM (upstream LREMs the replacement's bytes, which are not
 *    in the in-progress list: its placeholder stays there until its pool dies). */
#include "unique_guard.h"

#include "flavor.h"
#include "log.h"
#include "pool.h"
#include "scripts.h"

#include <string.h>

/* Where one task's keys sit in the script's KEYS. */
typedef struct task_keys {
    cw_task *task;
    size_t first, n;
} task_keys;

/* Replaces t's job with the job stored in its guard (upstream's ByKey). */
static void replace_job(cw_task *t, const char *bytes, size_t len)
{
    cwork_job *with = NULL;
    cwork_error derr = {0};
    if (cw_job_decode(bytes, len, &with, &derr) != 0) {
        cw_log(CWORK_LOG_ERROR, "worker.delete_unique_job.updated_job", "error", derr.message,
               "job_id", t->job->id.ptr, NULL);
        return; /* as upstream: the placeholder runs */
    }
    cwork_job_free(t->job);
    t->job = with;
}

int cw_unique_guards_release(cwork_pool *p, cw_conn *c, struct cw_task_queue *fetched)
{
    size_t ntasks = 0;
    for (cw_task *t = fetched->head; t; t = t->next)
        ntasks += t->job && t->job->unique;
    if (ntasks == 0) return 0;
    cw_buf scratch;
    cw_buf_init(&scratch);
    cw_argv keys = {0};
    cw_argv_reserve(&keys, 2 * ntasks);
    task_keys *tk = cw_calloc(ntasks, sizeof *tk);
    size_t nt = 0;
    int rc = 0;
    if (!tk || keys.oom) {
        rc = CWORK_ENOMEM;
        goto done;
    }
    for (cw_task *t = fetched->head; t; t = t->next) {
        if (!t->job || !t->job->unique) continue;
        if (t->job->unique_key.len && p->opts.go_flavor == CWORK_GO_FORK)
            cw_go_flavor_warn_mixed(&p->go_flavor_warned, CW_MIXED_UNIQUE_KEY, p->opts.go_flavor,
                                    "a fetched job carries upstream gocraft/work's unique_key "
                                    "(Go workers of the fork ignore it and leave its guard)");
        cwork_error kerr = {0};
        size_t l[2];
        cw_buf_reset(&scratch);
        int n = cw_unique_guard_keys(&p->keys, t->job, &scratch, l, &kerr);
        if (n < 0) {
            cw_log(CWORK_LOG_ERROR, "worker.delete_unique_job.key", "error", kerr.message, "job_id",
                   t->job->id.ptr, NULL);
            continue;
        }
        if (scratch.oom) break;
        tk[nt++] = (task_keys){t, keys.n, (size_t)n};
        size_t off = 0;
        for (int i = 0; i < n; i++) {
            cw_argv_add(&keys, scratch.data + off, l[i]);
            off += l[i];
        }
    }
    if (scratch.oom || keys.oom) {
        rc = CWORK_ENOMEM;
        goto done;
    }
    size_t nk = keys.n;
    if (nk == 0) goto done;
    cwork_error err = {0};
    redisReply *r = NULL;
    rc = cw_conn_eval(c, &cw_script_unique_release, (int)nk, 0, keys.argv, keys.lens, &r, &err);
    if (rc) {
        cw_log(CWORK_LOG_ERROR, "worker.delete_unique_job.del", "error", err.message, NULL);
        goto done;
    }
    /* One value per key: nil when absent, "1" for a plain guard, else the job it holds. */
    size_t nvalues = 0;
    if ((rc = cw_reply_array(r, nk, &nvalues, "unique_release script", &err)) != 0) {
        cw_log(CWORK_LOG_ERROR, "worker.delete_unique_job.del", "error", err.message, NULL);
    } else {
        for (size_t i = 0; i < nt; i++) {
            for (size_t j = tk[i].first; j < tk[i].first + tk[i].n; j++) {
                const char *v;
                size_t len;
                if (cw_reply_at_str(r, j, &v, &len, NULL, NULL) != 0 || (len == 1 && v[0] == '1'))
                    continue; /* absent, or a plain guard: the queued job runs */
                replace_job(tk[i].task, v, len);
                break;
            }
        }
    }
    cw_reply_free(r);
done:
    if (rc == CWORK_ENOMEM)
        cw_log(CWORK_LOG_ERROR, "worker.delete_unique_job.key", "error",
               "out of memory: guards left until their TTL", NULL);
    cw_free(tk);
    cw_argv_free(&keys);
    cw_buf_free(&scratch);
    return rc;
}
