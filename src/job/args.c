/* cwork_args: job arguments built in C. Values keep the C type they were given (an
 * int64 is written as an integer, as Go writes an int), while text parsed with
 * cwork_args_parse/cwork_args_set_json has Go's decoding rules (every number is a
 * float64), so an args object prints exactly as a Go enqueuer would print the same
 * map. */
#include "args.h"

#include <math.h>
#include <string.h>

/* Depths are counted in the job document that will carry the args (the job object
 * is level 1, args level 2), so that whatever we enqueue can be decoded again by Go
 * and by us, both of which refuse more than GJ_MAX_DEPTH levels. */
#define ARGS_DEPTH 1  /* containers around the args object */
#define VALUE_DEPTH 2 /* containers around a value inside args */

const gj_value *cw_args_object(const cwork_args *a)
{
    return a ? a->obj : NULL;
}

cwork_args *cwork_args_new(void)
{
    cwork_args *a = cw_malloc(sizeof *a);
    if (!a) return NULL;
    a->obj = cw_gj_new_object();
    if (!a->obj) {
        cw_free(a);
        return NULL;
    }
    return a;
}

void cwork_args_free(cwork_args *args)
{
    if (!args) return;
    cw_gj_free(args->obj);
    cw_free(args);
}

/* Parses one complete JSON value nested `depth` levels deep in a job. */
static int parse_nested(const char *json, size_t len, int depth, gj_value **out, cwork_error *err)
{
    if (!json) return cw_error(err, CWORK_EINVAL, "args: JSON text is NULL");
    size_t pos = 0;
    gj_value *v = NULL;
    int rc = cw_gj_parse_at(json, len, &pos, depth, &v, err);
    if (rc) return rc;
    pos = cw_gj_skip_ws(json, len, pos);
    if (pos < len) {
        cw_gj_free(v);
        return cw_error(err, CWORK_EJSON,
                        "json: invalid character after top-level value "
                        "at offset %zu",
                        pos);
    }
    *out = v;
    return 0;
}

int cwork_args_parse(const char *json, size_t len, cwork_args **out, cwork_error *err)
{
    if (!out) return cw_error(err, CWORK_EINVAL, "args: out is NULL");
    gj_value *v = NULL;
    int rc = parse_nested(json, len, ARGS_DEPTH, &v, err);
    if (rc) return rc;
    if (v->type != GJ_OBJECT) {
        cw_gj_free(v);
        return cw_error(err, CWORK_EJSON, "args must be a JSON object");
    }
    cwork_args *a = cw_malloc(sizeof *a);
    if (!a) {
        cw_gj_free(v);
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    a->obj = v;
    *out = a;
    return 0;
}

/* Stores value under key; takes ownership of value (NULL means it could not be
 * allocated). */
static int set(cwork_args *args, const char *key, gj_value *value)
{
    if (!args || !key) {
        cw_gj_free(value);
        return CWORK_EINVAL;
    }
    if (!value) return CWORK_ENOMEM;
    return cw_gj_object_set(args->obj, key, strlen(key), value);
}

int cwork_args_set_string(cwork_args *args, const char *key, const char *value)
{
    if (!value) return CWORK_EINVAL;
    return set(args, key, cw_gj_new_string(value, strlen(value)));
}

int cwork_args_set_int64(cwork_args *args, const char *key, int64_t value)
{
    return set(args, key, cw_gj_new_int(value));
}

int cwork_args_set_uint64(cwork_args *args, const char *key, uint64_t value)
{
    return set(args, key, cw_gj_new_uint(value));
}

int cwork_args_set_float64(cwork_args *args, const char *key, double value)
{
    if (!isfinite(value)) /* Go's json.Marshal fails on NaN and ±Inf */
        return CWORK_EJSON;
    return set(args, key, cw_gj_new_float(value));
}

int cwork_args_set_bool(cwork_args *args, const char *key, bool value)
{
    return set(args, key, cw_gj_new_bool(value));
}

int cwork_args_set_null(cwork_args *args, const char *key)
{
    return set(args, key, cw_gj_new_null());
}

int cwork_args_set_json(cwork_args *args, const char *key, const char *json, size_t len,
                        cwork_error *err)
{
    if (!args || !key) return cw_error(err, CWORK_EINVAL, "args: NULL argument");
    gj_value *v = NULL;
    int rc = parse_nested(json, len, VALUE_DEPTH, &v, err);
    if (rc) return rc;
    rc = set(args, key, v);
    return rc ? cw_error(err, rc, "out of memory") : 0;
}

int cwork_args_to_json(const cwork_args *args, char **out, size_t *len, cwork_error *err)
{
    if (!out) return cw_error(err, CWORK_EINVAL, "args: out is NULL");
    cw_buf b;
    cw_buf_init(&b);
    int rc = 0;
    if (args)
        rc = cw_gj_encode(&b, args->obj, err);
    else
        cw_buf_append(&b, "null", 4); /* what enqueue writes for absent args */
    return cw_buf_give(&b, rc, out, len, err);
}
