/* Typed readers of Redis replies: what a command answered, checked against what it
 * should answer, with one wording for every mismatch. Every file of the library reads
 * replies only through these (the transport, which makes them, included), so that a
 * reply of the wrong shape always becomes CWORK_EPROTO with a message naming the
 * command:
 *
 *     ZCARD: expected an integer, got a string
 *     enqueue script: element 2: expected a string, got nil
 *
 * (elements counted from 1, as a script's Lua table counts them).
 * `what` is the command or script the reply answers, as the message should name it.
 * Readers return 0 or CWORK_EPROTO (err filled when not NULL); they never free r, and
 * strings they hand out point into r (valid until cw_reply_free). A NULL r is a
 * mismatch like any other. Error replies never reach these readers through
 * cw_conn_command (it turns them into CWORK_EREDIS); pipelined replies may be errors:
 * cw_reply_error says so. */
#ifndef CWORK_REPLY_H
#define CWORK_REPLY_H

#include "argv.h"
#include "util.h"

#include <hiredis/hiredis.h>
#include <stdint.h>

/* Frees a reply (NULL is ignored). */
void cw_reply_free(redisReply *r);

/* Type tests, for replies whose shape varies legitimately (a value or nil, damaged keys
 * reported as strings among integers). */
int cw_reply_is_nil(const redisReply *r);
int cw_reply_is_int(const redisReply *r);
int cw_reply_is_str(const redisReply *r); /* a bulk string */
int cw_reply_is_array(const redisReply *r);
/* The error reply's message, or NULL when r is no error reply. */
const char *cw_reply_error(const redisReply *r);
/* "an integer", "a string", "nil", "an array", "a status", "an error", … */
const char *cw_reply_type_name(const redisReply *r);

/* An integer. */
int cw_reply_int(const redisReply *r, int64_t *out, const char *what, cwork_error *err);
/* A bulk string: *s (NUL-terminated, may hold NULs) and *len (len may be NULL). */
int cw_reply_str(const redisReply *r, const char **s, size_t *len, const char *what,
                 cwork_error *err);
/* A bulk string, or nil (*s NULL, *len 0). */
int cw_reply_str_or_nil(const redisReply *r, const char **s, size_t *len, const char *what,
                        cwork_error *err);
/* A status reply equal to want ("OK", "PONG"). */
int cw_reply_status(const redisReply *r, const char *want, const char *what, cwork_error *err);
/* An array of at least min elements; its length in *n (n may be NULL). */
int cw_reply_array(const redisReply *r, size_t min, size_t *n, const char *what, cwork_error *err);
/* n integers: an array whose first n elements are integers, or one integer when n is
 * 1 (what scripts and commands answer with counts). */
int cw_reply_ints(const redisReply *r, int64_t *v, size_t n, const char *what, cwork_error *err);

/* Element i of an array, or NULL when r is no array or has no element i. */
const redisReply *cw_reply_at(const redisReply *r, size_t i);
/* Element i of an array, read as cw_reply_int / cw_reply_str / cw_reply_str_or_nil /
 * cw_reply_array would (the message names the element). */
int cw_reply_at_int(const redisReply *r, size_t i, int64_t *out, const char *what,
                    cwork_error *err);
int cw_reply_at_str(const redisReply *r, size_t i, const char **s, size_t *len, const char *what,
                    cwork_error *err);
int cw_reply_at_str_or_nil(const redisReply *r, size_t i, const char **s, size_t *len,
                           const char *what, cwork_error *err);
int cw_reply_at_array(const redisReply *r, size_t i, size_t min, size_t *n, const char *what,
                      cwork_error *err);

/* Appends every string element of an array reply (SMEMBERS, KEYS…) to out, leaving out
 * those that hold a NUL (no key or name can be built from them) and elements of other
 * types. CWORK_EPROTO when r is no array, CWORK_ENOMEM when out ran out of memory. */
int cw_reply_strings(const redisReply *r, cw_argv *out, const char *what, cwork_error *err);

/* The text of a string, status or error reply (for logs), else "". */
const char *cw_reply_text(const redisReply *r);
/* Its length (0 when there is no text). */
size_t cw_reply_len(const redisReply *r);

#endif
