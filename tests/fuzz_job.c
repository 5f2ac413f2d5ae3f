/* libFuzzer target for the job and JSON code: whatever bytes come out of Redis,
 * decoding never crashes, and what we write reads back to the same thing.
 *
 *  1. job: decode -> encode -> decode -> encode; once the first decode succeeds the
 *     second must too, and both encodings must be byte-identical (our canonical form is
 *     a fixed point, as Go's is).
 *  2. value: cw_gj_parse -> cw_gj_encode -> cw_gj_parse -> cw_gj_encode, the same property for
 *     arbitrary JSON values (parsing cannot produce NaN or Inf, so encoding of a parsed
 *     value never fails); cw_gj_dup must encode identically too.
 *  3. the typed accessors and their error texts run on every decoded job.
 * Any violation aborts with __builtin_trap. */
#include "gojson.h"
#include "job.h"

#include <stdint.h>
#include <string.h>

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

static char *encode_job(const cwork_job *job, size_t *len)
{
    char *out = NULL;
    check(cwork_job_encode(job, &out, len, NULL) == 0);
    return out;
}

static void job_round_trip(const char *data, size_t size)
{
    cwork_job *job = NULL;
    if (cwork_job_decode(data, size, &job, NULL) != 0) return;
    size_t raw_len;
    const char *raw = cwork_job_raw(job, &raw_len);
    check(raw_len == size && memcmp(raw, data, size) == 0);

    size_t len1, len2;
    char *first = encode_job(job, &len1);
    cwork_job *again = NULL;
    check(cwork_job_decode(first, len1, &again, NULL) == 0);
    char *second = encode_job(again, &len2);
    check(len1 == len2 && memcmp(first, second, len1) == 0);

    /* Accessors on whatever keys the args have, plus a missing one. */
    if (job->args) {
        for (size_t i = 0; i < job->args->as.obj.len && i < 8; i++) {
            const char *key = job->args->as.obj.items[i].key.ptr;
            (void)cwork_job_arg_string(job, key);
            (void)cwork_job_arg_int64(job, key);
            (void)cwork_job_arg_float64(job, key);
            (void)cwork_job_arg_bool(job, key);
        }
    }
    (void)cwork_job_arg_int64(job, "\x01missing");
    check(cwork_job_arg_error(job) != NULL);
    char *args = cwork_job_args_json(job);
    check(args != NULL);
    cw_free(args);

    cw_free(first);
    cw_free(second);
    cwork_job_free(again);
    cwork_job_free(job);
}

static char *encode_value(const gj_value *v)
{
    cw_buf b;
    cw_buf_init(&b);
    check(cw_gj_encode(&b, v, NULL) == 0);
    return cw_buf_take(&b, NULL);
}

static void value_round_trip(const char *data, size_t size)
{
    gj_value *v = NULL;
    if (cw_gj_parse(data, size, &v, NULL) != 0) return;
    char *first = encode_value(v);
    check(first != NULL);
    gj_value *w = NULL;
    check(cw_gj_parse(first, strlen(first), &w, NULL) == 0);
    char *second = encode_value(w);
    check(second != NULL && strcmp(first, second) == 0);
    gj_value *copy = cw_gj_dup(v);
    check(copy != NULL);
    char *third = encode_value(copy);
    check(third != NULL && strcmp(first, third) == 0);
    cw_free(first);
    cw_free(second);
    cw_free(third);
    cw_gj_free(copy);
    cw_gj_free(w);
    cw_gj_free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    job_round_trip((const char *)data, size);
    value_round_trip((const char *)data, size);
    return 0;
}
