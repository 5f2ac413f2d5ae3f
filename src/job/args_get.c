/* Read access to cwork_args: what a program (or the CLI's NDJSON reader) needs to look
 * inside an object it parsed. */
#include "args.h"

#include <string.h>

size_t cwork_args_count(const cwork_args *args)
{
    const gj_value *o = cw_args_object(args);
    return o ? o->as.obj.len : 0;
}

const char *cwork_args_key_at(const cwork_args *args, size_t index)
{
    const gj_value *o = cw_args_object(args);
    return o && index < o->as.obj.len ? o->as.obj.items[index].key.ptr : NULL;
}

/* The value of key, or NULL when it is absent or JSON null. */
static const gj_value *lookup(const cwork_args *args, const char *key)
{
    const gj_value *o = cw_args_object(args);
    const gj_value *v = o && key ? cw_gj_object_get(o, key, strlen(key)) : NULL;
    return v && v->type != GJ_NULL ? v : NULL;
}

int cwork_args_get_string(const cwork_args *args, const char *key, const char **out)
{
    const gj_value *v = lookup(args, key);
    if (!v) return CWORK_ENOTFOUND;
    if (v->type != GJ_STRING) return CWORK_ETYPE;
    *out = v->as.s.ptr;
    return 0;
}

int cwork_args_get_float64(const cwork_args *args, const char *key, double *out)
{
    const gj_value *v = lookup(args, key);
    if (!v) return CWORK_ENOTFOUND;
    switch (v->type) {
    case GJ_FLOAT:
        *out = v->as.f;
        return 0;
    case GJ_INT:
        *out = (double)v->as.i;
        return 0;
    case GJ_UINT:
        *out = (double)v->as.u;
        return 0;
    default:
        return CWORK_ETYPE;
    }
}

int cwork_args_get_bool(const cwork_args *args, const char *key, bool *out)
{
    const gj_value *v = lookup(args, key);
    if (!v) return CWORK_ENOTFOUND;
    if (v->type != GJ_BOOL) return CWORK_ETYPE;
    *out = v->as.b;
    return 0;
}

int cwork_args_get_args(const cwork_args *args, const char *key, cwork_args **out)
{
    const gj_value *v = lookup(args, key);
    if (!v) return CWORK_ENOTFOUND;
    if (v->type != GJ_OBJECT) return CWORK_ETYPE;
    /* Through the encoding: exact, since Go floats print as shortest round-trip. */
    cw_buf text;
    cw_buf_init(&text);
    int rc = cw_gj_encode(&text, v, NULL);
    if (rc == 0 && text.oom) rc = CWORK_ENOMEM;
    if (rc == 0) rc = cwork_args_parse(text.data, text.len, out, NULL);
    cw_buf_free(&text);
    return rc;
}

int cwork_args_get_json(const cwork_args *args, const char *key, char **out, size_t *len,
                        cwork_error *err)
{
    if (!args || !key || !out)
        return cw_error(err, CWORK_EINVAL, "cwork_args_get_json: NULL argument");
    const gj_value *o = cw_args_object(args);
    /* Not lookup(): a JSON null is a value here. */
    const gj_value *v = o ? cw_gj_object_get(o, key, strlen(key)) : NULL;
    if (!v) return cw_error(err, CWORK_ENOTFOUND, "no argument %s", key);
    cw_buf b;
    cw_buf_init(&b);
    int rc = cw_gj_encode(&b, v, err);
    return cw_buf_give(&b, rc, out, len, err);
}
