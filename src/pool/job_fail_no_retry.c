/* cwork_job_fail_no_retry: a failure that skips the retries. The message is handled by
 * cwork_job_fail (its cut to 1023 bytes on a character boundary); the task only gets a
 * mark that the commit reads (commit.c, failure_outcome). Kept apart from the executor:
 * it needs nothing of it but the task behind a running job. */
#include "pool.h"

#include <stdarg.h>
#include <stdio.h>

int cwork_job_fail_no_retry(cwork_job *job, const char *fmt, ...)
{
    cw_task *t = job && job->run ? ((cw_run *)job->run)->task : NULL;
    if (!t) return CWORK_EINVAL; /* no job being run by a pool: nothing to fail */
    /* Longer than cwork_job_fail keeps, so that its cut decides where the text ends. */
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = fmt ? vsnprintf(msg, sizeof msg, fmt, ap) : 0;
    va_end(ap);
    if (n < 0) msg[0] = '\0';
    cwork_job_fail(job, "%s", msg);
    t->no_retry = 1;
    return CWORK_EJOBFAILED;
}
