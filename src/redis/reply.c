/* Typed readers of Redis replies (reply.h). */
#include "reply.h"

#include <stdio.h>
#include <string.h>

void cw_reply_free(redisReply *r)
{
    if (r) freeReplyObject(r);
}

int cw_reply_is_nil(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_NIL;
}

int cw_reply_is_int(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_INTEGER;
}

int cw_reply_is_str(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_STRING;
}

int cw_reply_is_array(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_ARRAY;
}

const char *cw_reply_error(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_ERROR ? (r->str ? r->str : "") : NULL;
}

const char *cw_reply_type_name(const redisReply *r)
{
    if (!r) return "no reply";
    switch (r->type) {
    case REDIS_REPLY_STRING:
        return "a string";
    case REDIS_REPLY_ARRAY:
        return "an array";
    case REDIS_REPLY_INTEGER:
        return "an integer";
    case REDIS_REPLY_NIL:
        return "nil";
    case REDIS_REPLY_STATUS:
        return "a status";
    case REDIS_REPLY_ERROR:
        return "an error";
    default:
        return "a reply of another type";
    }
}

/* The one wording of a mismatch: "<what>: [element <i>: ]expected <want>, got <type>",
 * elements counted from 1 as a script's Lua tables count them. */
static int mismatch(const redisReply *r, const char *want, long elem, const char *what,
                    cwork_error *err)
{
    char at[32] = "";
    if (elem >= 0) snprintf(at, sizeof at, "element %ld: ", elem + 1);
    return cw_error(err, CWORK_EPROTO, "%s: %sexpected %s, got %s", what ? what : "redis", at, want,
                    cw_reply_type_name(r));
}

static int read_int(const redisReply *r, int64_t *out, long elem, const char *what,
                    cwork_error *err)
{
    if (!cw_reply_is_int(r)) return mismatch(r, "an integer", elem, what, err);
    *out = r->integer;
    return 0;
}

static int read_str(const redisReply *r, const char **s, size_t *len, int nil_ok, long elem,
                    const char *what, cwork_error *err)
{
    if (nil_ok && cw_reply_is_nil(r)) {
        *s = NULL;
        if (len) *len = 0;
        return 0;
    }
    if (!cw_reply_is_str(r))
        return mismatch(r, nil_ok ? "a string or nil" : "a string", elem, what, err);
    *s = r->str;
    if (len) *len = r->len;
    return 0;
}

static int read_array(const redisReply *r, size_t min, size_t *n, long elem, const char *what,
                      cwork_error *err)
{
    if (!cw_reply_is_array(r)) return mismatch(r, "an array", elem, what, err);
    if (r->elements < min) {
        char at[32] = "";
        if (elem >= 0) snprintf(at, sizeof at, "element %ld: ", elem + 1);
        return cw_error(err, CWORK_EPROTO, "%s: %sexpected an array of at least %zu, got %zu",
                        what ? what : "redis", at, min, r->elements);
    }
    if (n) *n = r->elements;
    return 0;
}

int cw_reply_int(const redisReply *r, int64_t *out, const char *what, cwork_error *err)
{
    return read_int(r, out, -1, what, err);
}

int cw_reply_str(const redisReply *r, const char **s, size_t *len, const char *what,
                 cwork_error *err)
{
    return read_str(r, s, len, 0, -1, what, err);
}

int cw_reply_str_or_nil(const redisReply *r, const char **s, size_t *len, const char *what,
                        cwork_error *err)
{
    return read_str(r, s, len, 1, -1, what, err);
}

int cw_reply_status(const redisReply *r, const char *want, const char *what, cwork_error *err)
{
    if (r && r->type == REDIS_REPLY_STATUS && r->str && strcmp(r->str, want) == 0) return 0;
    if (r && r->type == REDIS_REPLY_STATUS)
        return cw_error(err, CWORK_EPROTO, "%s: expected %s, got %.64s", what ? what : "redis",
                        want, r->str ? r->str : "");
    char want_status[48];
    snprintf(want_status, sizeof want_status, "the status %s", want);
    return mismatch(r, want_status, -1, what, err);
}

int cw_reply_array(const redisReply *r, size_t min, size_t *n, const char *what, cwork_error *err)
{
    return read_array(r, min, n, -1, what, err);
}

int cw_reply_ints(const redisReply *r, int64_t *v, size_t n, const char *what, cwork_error *err)
{
    if (n == 1 && cw_reply_is_int(r)) return read_int(r, v, -1, what, err);
    int rc = read_array(r, n, NULL, -1, what, err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = read_int(r->element[i], &v[i], (long)i, what, err);
    return rc;
}

const redisReply *cw_reply_at(const redisReply *r, size_t i)
{
    return cw_reply_is_array(r) && i < r->elements ? r->element[i] : NULL;
}

/* Element i, or a mismatch when r is not an array that has it. */
static int element(const redisReply *r, size_t i, const redisReply **e, const char *what,
                   cwork_error *err)
{
    *e = cw_reply_at(r, i);
    if (*e) return 0;
    return read_array(r, i + 1, NULL, -1, what, err);
}

int cw_reply_at_int(const redisReply *r, size_t i, int64_t *out, const char *what, cwork_error *err)
{
    const redisReply *e;
    int rc = element(r, i, &e, what, err);
    return rc ? rc : read_int(e, out, (long)i, what, err);
}

int cw_reply_at_str(const redisReply *r, size_t i, const char **s, size_t *len, const char *what,
                    cwork_error *err)
{
    const redisReply *e;
    int rc = element(r, i, &e, what, err);
    return rc ? rc : read_str(e, s, len, 0, (long)i, what, err);
}

int cw_reply_at_str_or_nil(const redisReply *r, size_t i, const char **s, size_t *len,
                           const char *what, cwork_error *err)
{
    const redisReply *e;
    int rc = element(r, i, &e, what, err);
    return rc ? rc : read_str(e, s, len, 1, (long)i, what, err);
}

int cw_reply_at_array(const redisReply *r, size_t i, size_t min, size_t *n, const char *what,
                      cwork_error *err)
{
    const redisReply *e;
    int rc = element(r, i, &e, what, err);
    return rc ? rc : read_array(e, min, n, (long)i, what, err);
}

int cw_reply_strings(const redisReply *r, cw_argv *out, const char *what, cwork_error *err)
{
    size_t n = 0;
    int rc = read_array(r, 0, &n, -1, what, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const redisReply *m = r->element[i];
        if (cw_reply_is_str(m) && !memchr(m->str, '\0', m->len)) cw_argv_add(out, m->str, m->len);
    }
    return rc ? rc : cw_argv_check(out, err);
}

const char *cw_reply_text(const redisReply *r)
{
    if (!r || !r->str) return "";
    if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS ||
        r->type == REDIS_REPLY_ERROR)
        return r->str;
    return "";
}

size_t cw_reply_len(const redisReply *r)
{
    if (!r || !r->str) return 0;
    if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS ||
        r->type == REDIS_REPLY_ERROR)
        return r->len;
    return 0;
}
