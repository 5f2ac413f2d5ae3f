/* The job record: decoding with the rules Go's json.Unmarshal applies to the Job struct
 * (PROTOCOL §3.3; the fork's fields plus upstream's unique_key, so that nothing either
 * flavour wrote is lost), the canonical encoding of json.Marshal (§3.1, §3.2), and the
 * public field accessors. The typed argument accessors (§3.7) are in job_arg.c. */
#include "job.h"

#include <string.h>

/* ---------------------------------------------------------------- life cycle */

static int str_empty(gj_str *s)
{
    s->ptr = cw_strndup("", 0);
    s->len = 0;
    return s->ptr ? 0 : CWORK_ENOMEM;
}

cwork_job *cw_job_new(void)
{
    cwork_job *job = cw_calloc(1, sizeof *job);
    if (!job) return NULL;
    if (str_empty(&job->name) || str_empty(&job->id) || str_empty(&job->err) ||
        str_empty(&job->unique_key) || str_empty(&job->batch)) {
        cwork_job_free(job);
        return NULL;
    }
    return job;
}

int cw_job_set_str(gj_str *field, const char *s, size_t len)
{
    char *p = cw_strndup(s, len);
    if (!p) return CWORK_ENOMEM;
    cw_free(field->ptr);
    field->ptr = p;
    field->len = len;
    return 0;
}

/* Stored as the argument error when its text cannot be allocated (never freed). */
char cw_job_arg_error_oom[] = "out of memory while recording an argument error";

void cwork_job_free(cwork_job *job)
{
    if (!job) return;
    cw_free(job->name.ptr);
    cw_free(job->id.ptr);
    cw_free(job->err.ptr);
    cw_free(job->unique_key.ptr);
    cw_free(job->batch.ptr);
    cw_gj_free(job->args);
    cw_gj_free(job->trace);
    cw_free(job->raw);
    if (job->arg_error != cw_job_arg_error_oom) cw_free(job->arg_error);
    cw_free(job);
}

/* ---------------------------------------------------------------- decoding */

enum field {
    F_NONE,
    F_NAME,
    F_ID,
    F_T,
    F_ARGS,
    F_UNIQUE,
    F_UNIQUE_KEY,
    F_FAILS,
    F_ERR,
    F_FAILED_AT,
    F_D,
    F_TRACE,
    F_BATCH /* cwork's own field (PROTOCOL §23): matched exactly, Go has no such field */
};

/* Upper-case JSON names in the order of enum field (from F_NAME). */
static const char *const field_names[] = {
    "NAME", "ID", "T", "ARGS", "UNIQUE", "UNIQUE_KEY", "FAILS", "ERR", "FAILED_AT", "D", "TRACE"};

/* Go matches an exact name first, then case-insensitively. Its fold (Go 1.21+:
 * foldName; Go 1.19: equalFoldRight and friends, same outcome for these names) is
 * ASCII case plus two non-ASCII letters that fold to ASCII: U+212A KELVIN SIGN to 'K'
 * and U+017F LATIN SMALL LETTER LONG S to 'S'. No two of our names fold alike, so the
 * exact-first rule changes nothing and one folded comparison is enough. */
static int match_field(const char *key, size_t len)
{
    if (len == 11 && memcmp(key, "cwork_batch", 11) == 0) return F_BATCH;
    char folded[16];
    size_t n = 0;
    const unsigned char *k = (const unsigned char *)key;
    for (size_t i = 0; i < len;) {
        if (n == sizeof folded) return F_NONE;
        unsigned char b = k[i];
        if (b >= 'a' && b <= 'z') {
            folded[n++] = (char)(b - 'a' + 'A');
            i++;
        } else if (b < 0x80) {
            folded[n++] = (char)b;
            i++;
        } else if (len - i >= 3 && b == 0xE2 && k[i + 1] == 0x84 && k[i + 2] == 0xAA) {
            folded[n++] = 'K';
            i += 3;
        } else if (len - i >= 2 && b == 0xC5 && k[i + 1] == 0xBF) {
            folded[n++] = 'S';
            i += 2;
        } else {
            return F_NONE;
        }
    }
    for (int f = F_NAME; f <= F_TRACE; f++) {
        const char *name = field_names[f - F_NAME];
        if (strlen(name) == n && memcmp(name, folded, n) == 0) return f;
    }
    return F_NONE;
}

static const char *json_name(int field)
{
    static const char *const names[] = {"name",      "id",         "t",     "args",
                                        "unique",    "unique_key", "fails", "err",
                                        "failed_at", "d",          "trace", "cwork_batch"};
    return names[field - F_NAME];
}

/* Go's UnmarshalTypeError text; Go quotes a number's text only for integer fields. */
static int type_error(cwork_error *err, int field, const gj_value *v, const char *num,
                      size_t num_len, const char *go_type)
{
    const char *what = v->type == GJ_STRING   ? "string"
                       : v->type == GJ_BOOL   ? "bool"
                       : v->type == GJ_ARRAY  ? "array"
                       : v->type == GJ_OBJECT ? "object"
                                              : "number";
    if (v->type == GJ_FLOAT && num_len)
        return cw_error(err, CWORK_EJSON,
                        "json: cannot unmarshal number %.*s into Go struct field Job.%s of "
                        "type %s",
                        (int)(num_len > 40 ? 40 : num_len), num, json_name(field), go_type);
    return cw_error(err, CWORK_EJSON,
                    "json: cannot unmarshal %s into Go struct field Job.%s of type %s", what,
                    json_name(field), go_type);
}

/* Takes the string out of v (which is then freed by the caller). */
static void steal_str(gj_str *field, gj_value *v)
{
    cw_free(field->ptr);
    *field = v->as.s;
    v->as.s.ptr = NULL;
    v->as.s.len = 0;
}

/* trace is a map[string]string: each value must be a string; null gives "" (Go stores
 * the zero value of the element type). */
static int check_trace(gj_value *obj, cwork_error *err)
{
    for (size_t i = 0; i < obj->as.obj.len; i++) {
        gj_value *v = obj->as.obj.items[i].value;
        if (v->type == GJ_STRING) continue;
        if (v->type != GJ_NULL) return type_error(err, F_TRACE, v, "", 0, "string");
        char *empty = cw_strndup("", 0);
        if (!empty) return cw_error(err, CWORK_ENOMEM, "out of memory");
        v->type = GJ_STRING;
        v->as.s.ptr = empty;
        v->as.s.len = 0;
    }
    return 0;
}

/* Decoding a JSON object into a map field that is already set adds to it (a repeated
 * "args" merges, as with Go); null resets it. Takes ownership of v. */
static int store_map(gj_value **field, gj_value *v, cwork_error *err)
{
    if (v->type == GJ_NULL) {
        cw_gj_free(v);
        cw_gj_free(*field);
        *field = NULL;
        return 0;
    }
    if (!*field) {
        *field = v;
        return 0;
    }
    if (cw_gj_object_merge(*field, v) != 0) return cw_error(err, CWORK_ENOMEM, "out of memory");
    return 0;
}

/* Reads the value of one member at *pos into the job. */
static int decode_member(cwork_job *job, int field, const char *text, size_t len, size_t *pos,
                         cwork_error *err)
{
    if (field == F_NONE) /* unknown fields are checked for syntax and dropped */
        return cw_gj_skip_at(text, len, pos, 1, err);
    size_t start = cw_gj_skip_ws(text, len, *pos);
    gj_value *v = NULL;
    int rc = cw_gj_parse_at(text, len, pos, 1, &v, err);
    if (rc) return rc;
    if (field == F_ARGS || field == F_TRACE) {
        if (v->type != GJ_OBJECT && v->type != GJ_NULL) {
            rc = type_error(err, field, v, "", 0,
                            field == F_ARGS ? "map[string]interface {}" : "map[string]string");
            cw_gj_free(v);
            return rc;
        }
        if (v->type == GJ_OBJECT && field == F_TRACE && (rc = check_trace(v, err)) != 0) {
            cw_gj_free(v);
            return rc;
        }
        return store_map(field == F_ARGS ? &job->args : &job->trace, v, err);
    }
    if (v->type == GJ_NULL) { /* Go leaves strings, integers and booleans as they are */
        cw_gj_free(v);
        return 0;
    }
    switch (field) {
    case F_NAME:
    case F_ID:
    case F_ERR:
    case F_UNIQUE_KEY:
    case F_BATCH:
        if (v->type != GJ_STRING) {
            rc = type_error(err, field, v, "", 0, "string");
            break;
        }
        steal_str(field == F_NAME    ? &job->name
                  : field == F_ID    ? &job->id
                  : field == F_ERR   ? &job->err
                  : field == F_BATCH ? &job->batch
                                     : &job->unique_key,
                  v);
        break;
    case F_UNIQUE:
        if (v->type != GJ_BOOL)
            rc = type_error(err, field, v, "", 0, "bool");
        else
            job->unique = v->as.b;
        break;
    default: { /* t, fails, failed_at, d: strconv.ParseInt of the number's text */
        int64_t n;
        if (v->type != GJ_FLOAT || cw_parse_int64(text + start, *pos - start, &n) != 0) {
            rc = type_error(err, field, v, text + start, *pos - start, "int64");
            break;
        }
        int64_t *dst = field == F_T       ? &job->t
                       : field == F_FAILS ? &job->fails
                       : field == F_D     ? &job->d
                                          : &job->failed_at;
        *dst = n;
    }
    }
    cw_gj_free(v);
    return rc;
}

static int expect(const char *text, size_t len, size_t *pos, char ch, const char *what,
                  cwork_error *err)
{
    *pos = cw_gj_skip_ws(text, len, *pos);
    if (*pos >= len) return cw_error(err, CWORK_EJSON, "json: unexpected end of JSON input");
    if (text[*pos] != ch)
        return cw_error(err, CWORK_EJSON, "json: invalid character %s at offset %zu", what, *pos);
    (*pos)++;
    return 0;
}

static int decode_object(cwork_job *job, const char *text, size_t len, cwork_error *err)
{
    size_t pos = cw_gj_skip_ws(text, len, 0);
    if (pos >= len || text[pos] != '{') {
        /* Valid JSON of another type is a type error, anything else a syntax error. */
        size_t p = pos;
        int rc = cw_gj_skip_at(text, len, &p, 0, err);
        if (rc) return rc;
        return cw_error(err, CWORK_EJSON, "json: a job must be a JSON object (got %s)",
                        text[pos] == 'n'                       ? "null"
                        : text[pos] == '['                     ? "an array"
                        : text[pos] == '"'                     ? "a string"
                        : text[pos] == 't' || text[pos] == 'f' ? "a boolean"
                                                               : "a number");
    }
    pos = cw_gj_skip_ws(text, len, pos + 1);
    if (pos < len && text[pos] == '}') {
        pos++; /* {} */
    } else {
        for (;;) {
            gj_str key;
            int rc;
            pos = cw_gj_skip_ws(text, len, pos);
            if ((rc = cw_gj_parse_string_at(text, len, &pos, &key, err)) != 0) return rc;
            int field = match_field(key.ptr, key.len);
            cw_free(key.ptr);
            if ((rc = expect(text, len, &pos, ':', "after object key", err)) != 0 ||
                (rc = decode_member(job, field, text, len, &pos, err)) != 0)
                return rc;
            pos = cw_gj_skip_ws(text, len, pos);
            if (pos < len && text[pos] == ',') {
                pos++;
                continue;
            }
            if ((rc = expect(text, len, &pos, '}', "after object key:value pair", err)) != 0)
                return rc;
            break;
        }
    }
    pos = cw_gj_skip_ws(text, len, pos);
    if (pos < len)
        return cw_error(err, CWORK_EJSON,
                        "json: invalid character after top-level value at offset %zu", pos);
    return 0;
}

int cw_job_decode(const char *bytes, size_t len, cwork_job **out, cwork_error *err)
{
    if (!out || (!bytes && len)) return cw_error(err, CWORK_EINVAL, "job decode: NULL argument");
    cwork_job *job = cw_job_new();
    if (!job) return cw_error(err, CWORK_ENOMEM, "out of memory");
    int rc = decode_object(job, bytes ? bytes : "", len, err);
    if (rc == 0 && !(job->raw = cw_strndup(bytes ? bytes : "", len)))
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc) {
        cwork_job_free(job);
        return rc;
    }
    job->raw_len = len;
    *out = job;
    return 0;
}

int cwork_job_decode(const char *bytes, size_t len, cwork_job **out, cwork_error *err)
{
    return cw_job_decode(bytes, len, out, err);
}

/* ---------------------------------------------------------------- encoding */

static void put_int_field(cw_buf *out, const char *name, int64_t v)
{
    cw_buf_puts(out, name);
    cw_buf_put_int64(out, v);
}

int cw_job_encode(cw_buf *out, const cwork_job *job, cwork_error *err)
{
    return cw_job_encode_fields(out, job, CW_JOB_FIELDS_ALL, err);
}

cw_job_fields cw_job_fields_of(cwork_go_flavor flavor)
{
    return flavor == CWORK_GO_UPSTREAM ? CW_JOB_FIELDS_UPSTREAM : CW_JOB_FIELDS_FORK;
}

int cw_job_encode_fields(cw_buf *out, const cwork_job *job, cw_job_fields fields, cwork_error *err)
{
    cw_buf_putc(out, '{');
    if (job->name.len) { /* omitempty */
        cw_buf_append(out, "\"name\":", 7);
        cw_gj_encode_string(out, job->name.ptr, job->name.len);
        cw_buf_putc(out, ',');
    }
    cw_buf_append(out, "\"id\":", 5);
    cw_gj_encode_string(out, job->id.ptr, job->id.len);
    put_int_field(out, ",\"t\":", job->t);
    cw_buf_append(out, ",\"args\":", 8);
    if (job->args) {
        int rc = cw_gj_encode(out, job->args, err);
        if (rc) return rc;
    } else {
        cw_buf_append(out, "null", 4);
    }
    if (job->unique) cw_buf_append(out, ",\"unique\":true", 14);
    if (job->unique_key.len && fields != CW_JOB_FIELDS_FORK) { /* upstream's, omitempty */
        cw_buf_append(out, ",\"unique_key\":", 14);
        cw_gj_encode_string(out, job->unique_key.ptr, job->unique_key.len);
    }
    if (job->fails) put_int_field(out, ",\"fails\":", job->fails);
    if (job->err.len) {
        cw_buf_append(out, ",\"err\":", 7);
        cw_gj_encode_string(out, job->err.ptr, job->err.len);
    }
    if (job->failed_at) put_int_field(out, ",\"failed_at\":", job->failed_at);
    if (fields == CW_JOB_FIELDS_UPSTREAM) { /* the fork's own fields; upstream's Job drops them */
        cw_buf_putc(out, '}');
        return 0;
    }
    if (job->d) put_int_field(out, ",\"d\":", job->d);
    if (job->trace && job->trace->type == GJ_OBJECT && job->trace->as.obj.len) {
        cw_buf_append(out, ",\"trace\":", 9);
        int rc = cw_gj_encode(out, job->trace, err);
        if (rc) return rc;
    }
    if (job->batch.len) { /* cwork's own field (§23), last: Go skips it when reading */
        cw_buf_append(out, ",\"cwork_batch\":", 15);
        cw_gj_encode_string(out, job->batch.ptr, job->batch.len);
    }
    cw_buf_putc(out, '}');
    return 0;
}

int cw_job_unique_args_suffix(cw_buf *out, const gj_value *args, cwork_error *err)
{
    if (!args) return 0;
    int rc = cw_gj_encode(out, args, err);
    if (rc) return rc;
    cw_buf_putc(out, '\n'); /* json.Encoder.Encode ends with a newline */
    return 0;
}

int cwork_job_encode(const cwork_job *job, char **out, size_t *len, cwork_error *err)
{
    if (!job || !out) return cw_error(err, CWORK_EINVAL, "job encode: NULL argument");
    cw_buf b;
    cw_buf_init(&b);
    return cw_buf_give(&b, cw_job_encode(&b, job, err), out, len, err);
}

int cwork_job_encode_flavor(const cwork_job *job, cwork_go_flavor flavor, char **out, size_t *len,
                            cwork_error *err)
{
    if (!job || !out) return cw_error(err, CWORK_EINVAL, "job encode: NULL argument");
    if (flavor != CWORK_GO_FORK && flavor != CWORK_GO_UPSTREAM)
        return cw_error(err, CWORK_EINVAL, "job encode: unknown Go flavour %d", (int)flavor);
    cw_buf b;
    cw_buf_init(&b);
    return cw_buf_give(&b, cw_job_encode_fields(&b, job, cw_job_fields_of(flavor), err), out, len,
                       err);
}

/* ---------------------------------------------------------------- accessors */

const char *cwork_job_name(const cwork_job *job)
{
    return job && job->name.ptr ? job->name.ptr : "";
}

const char *cwork_job_id(const cwork_job *job)
{
    return job && job->id.ptr ? job->id.ptr : "";
}

const char *cwork_job_last_error(const cwork_job *job)
{
    return job && job->err.ptr ? job->err.ptr : "";
}

int64_t cwork_job_enqueued_at(const cwork_job *job)
{
    return job ? job->t : 0;
}

int64_t cwork_job_fails(const cwork_job *job)
{
    return job ? job->fails : 0;
}

int64_t cwork_job_failed_at(const cwork_job *job)
{
    return job ? job->failed_at : 0;
}

bool cwork_job_unique(const cwork_job *job)
{
    return job ? job->unique : false;
}

const char *cwork_job_unique_key(const cwork_job *job)
{
    return job && job->unique_key.ptr ? job->unique_key.ptr : "";
}

int64_t cwork_job_periodic_deadline(const cwork_job *job)
{
    return job ? job->d : 0;
}

int64_t cwork_job_run_at(const cwork_job *job)
{
    return job ? job->run_at : 0;
}

const char *cwork_job_raw(const cwork_job *job, size_t *len)
{
    if (!job || !job->raw) {
        if (len) *len = 0;
        return "";
    }
    if (len) *len = job->raw_len;
    return job->raw;
}

char *cwork_job_args_json(const cwork_job *job)
{
    cw_buf b;
    cw_buf_init(&b);
    if (job && job->args) {
        if (cw_gj_encode(&b, job->args, NULL) != 0) {
            cw_buf_free(&b);
            return NULL;
        }
    } else {
        cw_buf_append(&b, "null", 4);
    }
    return cw_buf_take(&b, NULL);
}
