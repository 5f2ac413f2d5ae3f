/* The dead record of bytes that are not a valid job (PROTOCOL §16.5: Go would leave them in
 * progress forever). It is itself a valid job, so that Go's client and UI can list it,
 * with an id of its own, so that it can be retried or deleted like any other. */
#include "job.h"

#include <stdio.h>
#include <string.h>

int cw_job_encode_undecodable(cw_buf *out, const char *name, const char *raw, size_t raw_len,
                              const char *reason, int64_t now, cwork_error *err)
{
    char id[25];
    if (cw_make_id(id) != 0)
        return cw_error(err, CWORK_EINVAL, "cannot read the OS random source for a job id");
    cwork_job j;
    memset(&j, 0, sizeof j);
    j.name.ptr = (char *)name;
    j.name.len = strlen(name);
    j.id.ptr = id;
    j.id.len = 24;
    j.t = now;
    j.fails = 1;
    j.failed_at = now;
    char msg[400];
    snprintf(msg, sizeof msg,
             "cwork: the job's bytes are not a valid job (%s); they are kept in args.raw_job "
             "and, exactly, in args.raw_job_base64",
             reason);
    j.err.ptr = msg;
    j.err.len = strlen(msg);
    /* raw_job is the readable form: Go's encoder writes invalid UTF-8 as U+FFFD, so
     * the exact bytes are in raw_job_base64. */
    cw_buf b64;
    cw_buf_init(&b64);
    cw_buf_put_base64(&b64, raw, raw_len);
    gj_value *args = cw_gj_new_object();
    int rc = b64.oom || !args ? CWORK_ENOMEM : 0;
    if (rc == 0) rc = cw_gj_object_set(args, "raw_job", 7, cw_gj_new_string(raw, raw_len));
    if (rc == 0)
        rc = cw_gj_object_set(args, "raw_job_base64", 14, cw_gj_new_string(b64.data, b64.len));
    cw_buf_free(&b64);
    if (rc == 0 && (args->as.obj.items[0].value == NULL || args->as.obj.items[1].value == NULL))
        rc = CWORK_ENOMEM;
    if (rc == 0) {
        j.args = args;
        rc = cw_job_encode(out, &j, err);
    } else {
        cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    cw_gj_free(args);
    return rc;
}
