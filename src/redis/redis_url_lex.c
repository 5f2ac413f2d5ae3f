/* The lexical pieces both halves of the URL parser use (redis_url.c, redis_url_query.c):
 * the error every refusal becomes, percent-decoding and whole numbers. */
#include "redis_url_impl.h"

#include <ctype.h>
#include <stdio.h>

int cw_url_fail(cw_url_parse *pc, int code, const char *reason)
{
    return cw_error(pc->err, code, "invalid Redis URL: %s (in \"%s\")", reason, pc->shown);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int cw_url_decode(cw_url_parse *pc, const char *p, size_t n, const char *what, char **out)
{
    char *d = cw_malloc(n + 1);
    if (!d) return cw_error(pc->err, CWORK_ENOMEM, "out of memory");
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '%') {
            d[j++] = p[i];
            continue;
        }
        if (i + 2 < n) {
            int hi = hexval(p[i + 1]), lo = hexval(p[i + 2]);
            if (hi >= 0 && lo >= 0 && (hi || lo)) {
                d[j++] = (char)(hi * 16 + lo);
                i += 2;
                continue;
            }
        }
        cw_free(d);
        char reason[96];
        snprintf(reason, sizeof reason, "bad percent-encoding in the %s", what);
        return cw_url_fail(pc, CWORK_EINVAL, reason);
    }
    d[j] = '\0';
    *out = d;
    return 0;
}

long cw_url_number(const char *p, size_t n, long min, long max)
{
    if (n == 0 || n > 10) return -1; /* 10 digits fit in int64_t, and exceed INT_MAX */
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v < min || v > max ? -1 : (long)v;
}
