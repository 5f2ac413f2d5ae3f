/* cwork_job_set_result: the handler's result, kept on the task until the commit of a
 * success writes it (commit_results.c, PROTOCOL §22). Kept apart from the executor: it
 * needs nothing of it but the task behind a running job. */
#include "log.h"
#include "pool.h"

#include <stdio.h>
#include <string.h>

int cwork_job_set_result(cwork_job *job, const void *bytes, size_t len)
{
    cw_task *t = job && job->run ? ((cw_run *)job->run)->task : NULL;
    if (!t) return CWORK_EINVAL; /* no job being run by a pool: nothing to keep */
    if (len > CWORK_RESULT_MAX_BYTES || (!bytes && len > 0)) {
        /* No error argument to carry the reason: the log says which job and why. */
        char why[96];
        snprintf(why, sizeof why,
                 len > CWORK_RESULT_MAX_BYTES
                     ? "a result of %zu bytes is over the limit of %d bytes"
                     : "a result of %zu bytes without bytes",
                 len, CWORK_RESULT_MAX_BYTES);
        cw_log(CWORK_LOG_WARN, "job.set_result", "job_name", job->name.ptr, "job_id", job->id.ptr,
               "error", why, NULL);
        return CWORK_EINVAL;
    }
    char *copy = cw_malloc(len ? len : 1); /* an empty result is a result */
    if (!copy) return CWORK_ENOMEM;
    if (len) memcpy(copy, bytes, len);
    cw_free(t->result);
    t->result = copy;
    t->result_len = len;
    t->has_result = true;
    return 0;
}
