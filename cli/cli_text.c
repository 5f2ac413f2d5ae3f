/* Pure text functions of the cwork command (declared in cli.h): durations, and the
 * closest known word to a mistyped one. They use nothing but the C library, so that
 * tests/cli/test_cli_text.c can include this file and table-test them. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Durations above this are refused: a hundred years, in milliseconds. */
#define DURATION_MAX_MS 3155760000000.0

int cli_duration_ms(const char *s, int64_t *ms)
{
    if (!s || !*s) return -1;
    double total = 0;
    int parts = 0;
    while (*s) {
        /* Digits with at most one point: strtod alone would also take signs, spaces,
         * exponents, hex, inf and nan. */
        size_t n = strspn(s, "0123456789.");
        const char *point = memchr(s, '.', n);
        if (n == 0 || (point && (n == 1 || memchr(point + 1, '.', n - (size_t)(point + 1 - s)))))
            return -1;
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (errno || end != s + n || !isfinite(v)) return -1;
        double unit;
        if (*end == '\0' && parts == 0) {
            unit = 1000; /* a bare number: seconds */
        } else if (end[0] == 'm' && end[1] == 's') {
            unit = 1, end++;
        } else {
            unit = *end == 's'   ? 1000
                   : *end == 'm' ? 60e3
                   : *end == 'h' ? 3600e3
                   : *end == 'd' ? 86400e3
                   : *end == 'w' ? 604800e3
                                 : 0;
            if (unit == 0) return -1;
        }
        total += v * unit;
        if (total > DURATION_MAX_MS) return -1;
        s = *end ? end + 1 : end;
        parts++;
    }
    *ms = (int64_t)llround(total);
    return 0;
}

int cli_duration_s(const char *s, int64_t *seconds)
{
    int64_t ms;
    if (cli_duration_ms(s, &ms) != 0 || ms % 1000 != 0) return -1;
    *seconds = ms / 1000;
    return 0;
}

/* Edit distance where a swap of two neighbouring letters counts one (optimal string
 * alignment), for words of up to 63 bytes; longer ones are "far". */
static size_t edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63) return (size_t)-1;
    size_t d[64][64];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *cli_suggest(const char *word, const char *const *candidates)
{
    size_t len = strlen(word);
    if (len == 0) return NULL;
    /* One typo in a short word, two in a longer one: "ab" must not become "job". */
    size_t allowed = len <= 3 ? 1 : 2;
    const char *best = NULL, *prefixed = NULL;
    size_t best_d = allowed + 1, n_prefixed = 0;
    for (const char *const *c = candidates; *c; c++) {
        if (strcmp(word, *c) == 0) return NULL; /* not a typo */
        size_t d = edit_distance(word, *c);
        if (d < best_d) best_d = d, best = *c;
        if (len >= 3 && strncmp(*c, word, len) == 0) n_prefixed++, prefixed = *c;
    }
    if (best) return best;
    return n_prefixed == 1 ? prefixed : NULL; /* "sched" for "scheduled" */
}
