/* Shared by the two halves of the URL parser (redis_url.c: schemes, user-info, hosts,
 * paths; redis_url_query.c: query parameters) and their common pieces (redis_url_lex.c). */
#ifndef CWORK_REDIS_URL_IMPL_H
#define CWORK_REDIS_URL_IMPL_H

#include "redis.h"

/* The state of one parse: the target, the error sink and the redacted URL to quote. */
typedef struct cw_url_parse {
    cw_redis_addr *out;
    cwork_error *err;
    const char *shown;
    int strict; /* unknown query parameters are errors (every scheme but redis:// and unix:) */
} cw_url_parse;

/* redis_url_lex.c. "invalid Redis URL: <reason> (in "<redacted url>")"; returns code. */
int cw_url_fail(cw_url_parse *pc, int code, const char *reason);
/* Percent-decodes [p, p+n) into a fresh string (NUL bytes refused). 0 or an error. */
int cw_url_decode(cw_url_parse *pc, const char *p, size_t n, const char *what, char **out);
/* A whole unsigned decimal in [min, max]; -1 when it is not one. */
long cw_url_number(const char *p, size_t n, long min, long max);
/* Parses the query q (after the '?', up to an optional '#') into pc->out. */
int cw_url_parse_query(cw_url_parse *pc, const char *q);

#endif
