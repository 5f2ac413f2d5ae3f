/* The job record (PROTOCOL §3.1) and its Go-compatible reading and writing. */
#ifndef CWORK_JOB_H
#define CWORK_JOB_H

#include "gojson.h"

struct cwork_job {
    gj_str name;
    gj_str id;
    int64_t t;
    gj_value *args; /* GJ_OBJECT, or NULL for JSON null / absent */
    bool unique;
    gj_str unique_key; /* upstream's guard key; "" when absent (may be {NULL, 0} in a
                          job built on the stack for encoding) */
    int64_t fails;
    gj_str err;
    int64_t failed_at;
    int64_t d;
    gj_value *trace; /* GJ_OBJECT of strings, or NULL */
    gj_str batch;    /* cwork's `cwork_batch`: the id of the tracked batch the job belongs to
                        (PROTOCOL §23); "" or {NULL, 0} when none */

    char *raw; /* bytes as read from / written to Redis */
    size_t raw_len;
    int64_t run_at;  /* for delayed enqueues */
    char *arg_error; /* sticky accessor error */
    void *run;       /* the pool's cw_run while a handler runs it, else NULL (not owned) */
};

/* A zeroed job with every string set to "" (never NULL); NULL on OOM. */
cwork_job *cw_job_new(void);
/* Sets a gj_str field to a copy of s; 0 or CWORK_ENOMEM. */
int cw_job_set_str(gj_str *field, const char *s, size_t len);

/* Appends Go's canonical encoding (PROTOCOL §3.1 order and omit rules, with upstream's
 * unique_key between unique and fails) of job to out: every field the job has.
 * 0, or CWORK_EJSON for args that JSON cannot hold. */
int cw_job_encode(cw_buf *out, const cwork_job *job, cwork_error *err);
/* Which of a job's fields an encoding keeps. */
typedef enum cw_job_fields {
    CW_JOB_FIELDS_ALL = 0,  /* every field the job has: the bytes cwork writes to Redis */
    CW_JOB_FIELDS_UPSTREAM, /* upstream gocraft/work's Job: no d, no trace */
    CW_JOB_FIELDS_FORK      /* the Kuper-Tech fork's Job: no unique_key */
} cw_job_fields;
/* The same with only the fields that Go flavour's Job struct has: what a Go process of
 * that flavour renders when it re-encodes the job (its workwebui's bodies). */
int cw_job_encode_fields(cw_buf *out, const cwork_job *job, cw_job_fields fields, cwork_error *err);
/* The fields a Go process of that flavour renders. */
cw_job_fields cw_job_fields_of(cwork_go_flavor flavor);

/* Decodes with Go's rules (PROTOCOL §3.3) and keeps a copy of the bytes in raw. */
int cw_job_decode(const char *bytes, size_t len, cwork_job **out, cwork_error *err);

/* Appends the dead record for raw bytes that are not a valid job, read from the queue
 * of job name: a valid job with a fresh id, t = failed_at = now, fails 1, err naming
 * reason, and the bytes in args.raw_job (readable; invalid UTF-8 becomes U+FFFD as in
 * Go) and args.raw_job_base64 (exact). 0 or a CWORK_E… code. */
int cw_job_encode_undecodable(cw_buf *out, const char *name, const char *raw, size_t raw_len,
                              const char *reason, int64_t now, cwork_error *err);

/* The argument error stored when its text cannot be allocated; cwork_job_free must
 * not free it. */
extern char cw_job_arg_error_oom[];

/* Appends the unique key's args part: Go's encoding of args + '\n', or nothing when
 * args is NULL (PROTOCOL §4.3). */
int cw_job_unique_args_suffix(cw_buf *out, const gj_value *args, cwork_error *err);

#endif
