/* Go's typed argument accessors (ArgString, ArgInt64, ArgFloat64, ArgBool, ArgError;
 * PROTOCOL §3.7): the zero value and a kept error when a key is missing or has another
 * type, with Go's error texts, where %T and %v are rendered as fmt would. */
#include "job.h"

#include <math.h>
#include <string.h>

static const char *go_type_name(const gj_value *v)
{
    switch (v->type) {
    case GJ_BOOL:
        return "bool";
    case GJ_FLOAT:
        return "float64";
    case GJ_INT:
        return "int64";
    case GJ_UINT:
        return "uint64";
    case GJ_STRING:
        return "string";
    case GJ_ARRAY:
        return "[]interface {}";
    case GJ_OBJECT:
        return "map[string]interface {}";
    default:
        return "<nil>";
    }
}

/* fmt's %v of the Go value: maps as map[k:v ...] with sorted keys, slices as [a b],
 * strings raw. Nesting beyond 32 levels is cut to "..." (Go would print it all) to
 * keep the recursion bounded. */
static void put_go_v(cw_buf *b, const gj_value *v, int depth)
{
    switch (v->type) {
    case GJ_NULL:
        cw_buf_puts(b, "<nil>");
        return;
    case GJ_BOOL:
        cw_buf_puts(b, v->as.b ? "true" : "false");
        return;
    case GJ_FLOAT:
        cw_gj_format_float_v(b, v->as.f);
        return;
    case GJ_INT:
        cw_buf_put_int64(b, v->as.i);
        return;
    case GJ_UINT:
        cw_buf_put_uint64(b, v->as.u);
        return;
    case GJ_STRING:
        cw_buf_append(b, v->as.s.ptr, v->as.s.len);
        return;
    default:
        break;
    }
    if (depth >= 32) {
        cw_buf_puts(b, "...");
        return;
    }
    if (v->type == GJ_ARRAY) {
        cw_buf_putc(b, '[');
        for (size_t i = 0; i < v->as.arr.len; i++) {
            if (i) cw_buf_putc(b, ' ');
            put_go_v(b, v->as.arr.items[i], depth + 1);
        }
        cw_buf_putc(b, ']');
        return;
    }
    size_t n = v->as.obj.len;
    const gj_member **order = cw_malloc((n ? n : 1) * sizeof *order);
    if (!order) {
        b->oom = 1;
        return;
    }
    cw_gj_sort_members(v->as.obj.items, n, order);
    cw_buf_puts(b, "map[");
    for (size_t i = 0; i < n; i++) {
        if (i) cw_buf_putc(b, ' ');
        cw_buf_append(b, order[i]->key.ptr, order[i]->key.len);
        cw_buf_putc(b, ':');
        put_go_v(b, order[i]->value, depth + 1);
    }
    cw_buf_putc(b, ']');
    cw_free(order);
}

/* Replaces the job's argument error (Go assigns j.argError on every failure). */
static void set_arg_error(cwork_job *job, const char *type, const char *key, const gj_value *v)
{
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_printf(&b, "looking for a %s in job.Arg[%s] but ", type, key);
    if (!v) {
        cw_buf_puts(&b, "key wasn't found");
    } else {
        cw_buf_printf(&b, "value wasn't right type: %s(", go_type_name(v));
        put_go_v(&b, v, 0);
        cw_buf_putc(&b, ')');
    }
    char *msg = cw_buf_take(&b, NULL);
    if (job->arg_error != cw_job_arg_error_oom) cw_free(job->arg_error);
    job->arg_error = msg ? msg : cw_job_arg_error_oom;
}

static const gj_value *arg_lookup(cwork_job *job, const char *key)
{
    return cw_gj_object_get(job->args, key, strlen(key));
}

const char *cwork_job_arg_string(cwork_job *job, const char *key)
{
    if (!job || !key) return "";
    const gj_value *v = arg_lookup(job, key);
    if (v && v->type == GJ_STRING) return v->as.s.ptr;
    set_arg_error(job, "string", key, v);
    return "";
}

int64_t cwork_job_arg_int64(cwork_job *job, const char *key)
{
    if (!job || !key) return 0;
    const gj_value *v = arg_lookup(job, key);
    if (v) {
        if (v->type == GJ_INT) return v->as.i;
        if (v->type == GJ_UINT && v->as.u <= (uint64_t)INT64_MAX) return (int64_t)v->as.u;
        /* Go's bound is 9007199254740892, 100 below 2^53, as written in the fork. */
        if (v->type == GJ_FLOAT && v->as.f == trunc(v->as.f) && v->as.f <= 9007199254740892.0 &&
            v->as.f >= -9007199254740892.0)
            return (int64_t)v->as.f;
    }
    set_arg_error(job, "int64", key, v);
    return 0;
}

double cwork_job_arg_float64(cwork_job *job, const char *key)
{
    if (!job || !key) return 0;
    const gj_value *v = arg_lookup(job, key);
    if (v) {
        if (v->type == GJ_FLOAT) return v->as.f;
        if (v->type == GJ_INT) return (double)v->as.i;
        if (v->type == GJ_UINT) return (double)v->as.u;
    }
    set_arg_error(job, "float64", key, v);
    return 0;
}

bool cwork_job_arg_bool(cwork_job *job, const char *key)
{
    if (!job || !key) return false;
    const gj_value *v = arg_lookup(job, key);
    if (v && v->type == GJ_BOOL) return v->as.b;
    set_arg_error(job, "bool", key, v);
    return false;
}

const char *cwork_job_arg_error(const cwork_job *job)
{
    return job ? job->arg_error : NULL;
}
