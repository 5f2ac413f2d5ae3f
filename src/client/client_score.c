/* Zset scores as listed jobs' `at` and back (client.h): Go writes whole seconds, other
 * clients may write anything a double holds, and every member must still be listed and
 * addressable. */
#include "client.h"

#include "gojson.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* JSON's number grammar, which is also how Redis writes a score that is not whole
 * ("1.5", "9.2233720368547758e+18"). */
static int number_grammar(const char *s, size_t len)
{
    size_t i = s[0] == '-';
    size_t d = i;
    while (i < len && s[i] >= '0' && s[i] <= '9')
        i++;
    if (i == d) return 0;
    if (i < len && s[i] == '.') {
        d = ++i;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d) return 0;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-')) i++;
        d = i;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d) return 0;
    }
    return i == len;
}

int cw_score_parse(const char *s, size_t len, int64_t *out)
{
    if (cw_parse_int64(s, len, out) == 0) return 0; /* whole seconds: the common case */
    double d;
    if (len == 3 && memcmp(s, "inf", 3) == 0)
        d = HUGE_VAL;
    else if (len == 4 && memcmp(s, "-inf", 4) == 0)
        d = -HUGE_VAL;
    else if (len == 0 || len > 64 || !number_grammar(s, len) || cw_gj_number_value(s, len, &d) != 0)
        return -1;
    /* (2^63 is exact as a double; anything from there up is past int64) */
    if (d >= 9223372036854775808.0)
        *out = INT64_MAX;
    else if (d <= -9223372036854775808.0)
        *out = INT64_MIN;
    else
        *out = (int64_t)floor(d);
    return 0;
}

void cw_score_range(int64_t at, char min[24], char max[24])
{
    if (at == INT64_MAX) { /* every score from 2^63 up, +inf included */
        snprintf(min, 24, "%lld", (long long)at);
        snprintf(max, 24, "+inf");
    } else if (at == INT64_MIN) {
        snprintf(min, 24, "-inf");
        snprintf(max, 24, "%lld", (long long)at);
    } else if (at >= 9007199254740992LL || at <= -9007199254740992LL) {
        /* past 2^53 every double is whole: at is the score itself (and at + 1 would
         * round back to it) */
        snprintf(min, 24, "%lld", (long long)at);
        snprintf(max, 24, "%lld", (long long)at);
    } else {
        snprintf(min, 24, "%lld", (long long)at);
        snprintf(max, 24, "(%lld", (long long)at + 1);
    }
}
