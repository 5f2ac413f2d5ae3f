/* A tracked batch's id and hash fields (batch_info.h). */
#include "batch_info.h"

#include "util.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Batch ids are what cw_make_id writes: 24 lower-case hex digits. Anything else is
 * refused before it becomes part of a key. */
int cw_batch_check_id(const char *id, cwork_error *err)
{
    if (!id) return cw_error(err, CWORK_EINVAL, "batch id is required");
    size_t n = strlen(id);
    for (size_t i = 0; i < n; i++)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f'))) n = 0;
    if (n != 24)
        return cw_error(err, CWORK_EINVAL,
                        "batch id \"%.64s\": not a batch id (24 lower-case hex digits)", id);
    return 0;
}

static int is(const char *f, size_t len, const char *name)
{
    return strlen(name) == len && memcmp(f, name, len) == 0;
}

/* The integer fields: counts and times. */
static const struct {
    const char *name;
    size_t offset;
} int_fields[] = {
    {"total", offsetof(cwork_batch_info, total)},
    {"succeeded", offsetof(cwork_batch_info, succeeded)},
    {"retrying", offsetof(cwork_batch_info, retrying)},
    {"dead", offsetof(cwork_batch_info, dead)},
    {"created_at", offsetof(cwork_batch_info, created_at)},
    {"completed_at", offsetof(cwork_batch_info, completed_at)},
};

int cw_batch_info_field(const char *key, const char *f, size_t f_len, const char *v, size_t v_len,
                        cwork_batch_info *out, cwork_error *err)
{
    int64_t *num = NULL;
    for (size_t i = 0; i < sizeof int_fields / sizeof int_fields[0]; i++)
        if (is(f, f_len, int_fields[i].name))
            num = (int64_t *)(void *)((char *)out + int_fields[i].offset);
    if (num) {
        if (cw_parse_int64(v, v_len, num) != 0)
            return cw_error(err, CWORK_EPROTO, "%s: field %.*s is not an integer (%.32s)", key,
                            (int)f_len, f, v);
    } else if (is(f, f_len, "sealed")) {
        out->sealed = is(v, v_len, "1");
    } else if (is(f, f_len, "when")) {
        out->when = is(v, v_len, "success") ? CWORK_BATCH_ON_SUCCESS : CWORK_BATCH_ON_COMPLETE;
    } else if (is(f, f_len, "callback")) {
        out->callback_state = is(v, v_len, "enqueued")  ? CWORK_BATCH_CALLBACK_ENQUEUED
                              : is(v, v_len, "skipped") ? CWORK_BATCH_CALLBACK_SKIPPED
                                                        : CWORK_BATCH_CALLBACK_WAITING;
    } else if (is(f, f_len, "cb_name")) {
        snprintf(out->callback, sizeof out->callback, "%.*s", (int)v_len, v);
    }
    return 0;
}

void cw_batch_info_finish(cwork_batch_info *out)
{
    out->pending = out->total - out->succeeded - out->retrying - out->dead;
}
