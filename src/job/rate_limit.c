/* "N/DURATION" in and out (rate_limit.h). */
#include "rate_limit.h"

#include "util.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int64_t ms;
} units[] = {{"h", 3600000}, {"m", 60000}, {"s", 1000}, {"ms", 1}}; /* largest first */

void cw_rate_limit_text(unsigned count, int64_t window_ms, char out[CW_RATE_LIMIT_TEXT_MAX])
{
    size_t u = 0;
    while (window_ms % units[u].ms) /* ms divides everything */
        u++;
    snprintf(out, CW_RATE_LIMIT_TEXT_MAX, "%u/%lld%s", count, (long long)(window_ms / units[u].ms),
             units[u].name);
}

/* Digits at *p (at most 12 of them) into *v; false when there are none. */
static bool read_number(const char **p, int64_t *v)
{
    int64_t n = 0;
    int digits = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++) {
        if (++digits > 12) return false;
        n = n * 10 + (**p - '0');
    }
    *v = n;
    return digits > 0;
}

int cwork_rate_limit_parse(const char *text, unsigned *count, int64_t *window_ms, cwork_error *err)
{
    if (!text || !count || !window_ms)
        return cw_error(err, CWORK_EINVAL, "rate limit: NULL argument");
    const char *p = text;
    int64_t n, d = 1;
    if (!read_number(&p, &n) || *p != '/')
        return cw_error(err, CWORK_EINVAL,
                        "rate limit %.64s: want N/DURATION, e.g. 100/1s or 5000/1m", text);
    p++;
    if (*p == '-') /* said as such: "the unit must be ..." would mislead */
        return cw_error(err, CWORK_EINVAL, "rate limit %.64s: the duration cannot be negative",
                        text);
    if (*p >= '0' && *p <= '9' && !read_number(&p, &d))
        return cw_error(err, CWORK_EINVAL, "rate limit %.64s: duration too long", text);
    int64_t unit = 0;
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
        if (!strcmp(p, units[u].name)) unit = units[u].ms;
    if (!unit)
        return cw_error(err, CWORK_EINVAL,
                        "rate limit %.64s: the duration's unit must be ms, s, m or h", text);
    if (n < 1 || n > CW_RATE_LIMIT_MAX_COUNT)
        return cw_error(err, CWORK_EINVAL, "rate limit %.64s: N must be 1 to %u", text,
                        CW_RATE_LIMIT_MAX_COUNT);
    if (d < 1 || d > CW_RATE_LIMIT_MAX_WINDOW_MS / unit)
        return cw_error(err, CWORK_EINVAL, "rate limit %.64s: the duration must be 1ms to 7 days",
                        text);
    *count = (unsigned)n;
    *window_ms = d * unit;
    return 0;
}

int cwork_rate_limit_format(unsigned count, int64_t window_ms, char *buf, size_t size,
                            cwork_error *err)
{
    if (!buf || size < CW_RATE_LIMIT_TEXT_MAX)
        return cw_error(err, CWORK_EINVAL, "rate limit: a buffer of %d bytes is needed",
                        CW_RATE_LIMIT_TEXT_MAX);
    if (count < 1 || count > CW_RATE_LIMIT_MAX_COUNT || window_ms < 1 ||
        window_ms > CW_RATE_LIMIT_MAX_WINDOW_MS)
        return cw_error(err, CWORK_EINVAL, "rate limit %u/%lldms: out of range", count,
                        (long long)window_ms);
    cw_rate_limit_text(count, window_ms, buf);
    return 0;
}
