/* The text side of cron specs (see cron.h): splitting like Go's strings.Fields and
 * TrimSpace, robfig's field grammar with its error messages, and Go's
 * time.ParseDuration for @every. */
#include "cron_impl.h"
#include "utf8.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- white space */

size_t cw_cron_space_at(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    if (n == 0) return 0;
    switch (s[0]) {
    case ' ':
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
        return 1;
    default:
        break;
    }
    if (n >= 2 && s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0)) /* U+0085, U+00A0 */
        return 2;
    if (n < 3) return 0;
    if (s[0] == 0xe1 && s[1] == 0x9a && s[2] == 0x80) /* U+1680 */
        return 3;
    if (s[0] == 0xe2 && s[1] == 0x80 && /* U+2000..U+200A, U+2028, U+2029, U+202F */
        ((s[2] >= 0x80 && s[2] <= 0x8a) || s[2] == 0xa8 || s[2] == 0xa9 || s[2] == 0xaf))
        return 3;
    if (s[0] == 0xe2 && s[1] == 0x81 && s[2] == 0x9f) /* U+205F */
        return 3;
    if (s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80) /* U+3000 */
        return 3;
    return 0;
}

/* The white space character that ends s[0..n), as Go decodes the last rune. */
static size_t space_before(const char *s, size_t n)
{
    for (size_t k = 1; k <= 3 && k <= n; k++)
        if (cw_cron_space_at(s + n - k, k) == k) return k;
    return 0;
}

void cw_cron_trim(const char **s, size_t *n)
{
    size_t k;
    while ((k = cw_cron_space_at(*s, *n)) > 0) {
        *s += k;
        *n -= k;
    }
    while ((k = space_before(*s, *n)) > 0)
        *n -= k;
}

size_t cw_cron_fields(const char *s, size_t n, cw_cron_span *out, size_t max)
{
    size_t count = 0, i = 0;
    while (i < n) {
        size_t k = cw_cron_space_at(s + i, n - i);
        if (k) {
            i += k;
            continue;
        }
        size_t start = i;
        while (i < n && cw_cron_space_at(s + i, n - i) == 0)
            i++;
        if (count < max) {
            out[count].p = s + start;
            out[count].n = i - start;
        }
        count++;
    }
    return count;
}

/* ---------------------------------------------------------------- Go's quoting */

/* An approximation of Go's unicode.IsPrint for non-ASCII: space separators, format
 * and control characters, private use and non-characters are not printable. */
static int rune_printable(uint32_t r)
{
    return !((r >= 0x80 && r <= 0xa0) || r == 0xad || r == 0x1680 || (r >= 0x2000 && r <= 0x200f) ||
             (r >= 0x2028 && r <= 0x202f) || (r >= 0x205f && r <= 0x206f) || r == 0x3000 ||
             (r >= 0xe000 && r <= 0xf8ff) || r == 0xfeff || (r >= 0xfff0 && r <= 0xfffb) ||
             r == 0xfffe || r == 0xffff || r >= 0xe0000);
}

/* strconv.Quote (Unicode printability approximated). */
static void quote_strconv(cw_buf *b, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    cw_buf_putc(b, '"');
    for (size_t i = 0; i < n;) {
        uint32_t r;
        size_t k = cw_utf8_decode(s + i, n - i, &r);
        if (k == 0) {
            cw_buf_printf(b, "\\x%02x", s[i]);
            i++;
            continue;
        }
        i += k;
        if (r == '"' || r == '\\') {
            cw_buf_putc(b, '\\');
            cw_buf_putc(b, (char)r);
        } else if (r >= 0x20 && r < 0x7f) {
            cw_buf_putc(b, (char)r);
        } else if (r < 0x80) {
            static const char esc[] = "abtnvfr";
            if (r >= 7 && r <= 13)
                cw_buf_printf(b, "\\%c", esc[r - 7]);
            else
                cw_buf_printf(b, "\\x%02x", (unsigned)r);
        } else if (rune_printable(r)) {
            cw_buf_append(b, s + i - k, k);
        } else if (r < 0x10000) {
            cw_buf_printf(b, "\\u%04x", (unsigned)r);
        } else {
            cw_buf_printf(b, "\\U%08x", (unsigned)r);
        }
    }
    cw_buf_putc(b, '"');
}

/* The time package's own quote: every byte outside printable ASCII as \xNN. */
static void quote_time(cw_buf *b, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    cw_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= 0x80 || s[i] < 0x20) {
            cw_buf_printf(b, "\\x%02x", s[i]);
        } else {
            if (s[i] == '"' || s[i] == '\\') cw_buf_putc(b, '\\');
            cw_buf_putc(b, (char)s[i]);
        }
    }
    cw_buf_putc(b, '"');
}

/* ---------------------------------------------------------------- numbers */

/* strconv.Atoi(s) as robfig's mustParseInt uses it, then its own sign check. On error
 * appends robfig's message to msg and returns -1. */
static int must_parse_int(const char *s, size_t n, uint64_t *out, cw_buf *msg)
{
    size_t i = 0;
    int neg = 0;
    if (n > 0 && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        i = 1;
    }
    const char *why = NULL;
    uint64_t v = 0;
    if (i == n) why = "invalid syntax";
    for (; i < n && !why; i++) {
        if (s[i] < '0' || s[i] > '9') {
            why = "invalid syntax";
        } else if (v >= UINT64_MAX / 10 + 1) {
            why = "value out of range";
        } else {
            uint64_t w = v * 10 + (uint64_t)(s[i] - '0');
            if (w < v) why = "value out of range";
            v = w;
        }
    }
    if (!why && ((!neg && v >= UINT64_C(1) << 63) || (neg && v > UINT64_C(1) << 63)))
        why = "value out of range";
    if (why) {
        cw_buf_puts(msg, "failed to parse int from ");
        cw_buf_append(msg, s, n);
        cw_buf_puts(msg, ": strconv.Atoi: parsing ");
        quote_strconv(msg, s, n);
        cw_buf_printf(msg, ": %s", why);
        return -1;
    }
    if (neg && v != 0) {
        cw_buf_puts(msg, "negative number (");
        cw_buf_put_int64(msg, v == UINT64_C(1) << 63 ? INT64_MIN : -(int64_t)v);
        cw_buf_puts(msg, ") not allowed: ");
        cw_buf_append(msg, s, n);
        return -1;
    }
    *out = v;
    return 0;
}

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                          "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const dow_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

const cw_cron_bounds cw_cron_seconds = {0, 59, NULL, 0};
const cw_cron_bounds cw_cron_minutes = {0, 59, NULL, 0};
const cw_cron_bounds cw_cron_hours = {0, 23, NULL, 0};
const cw_cron_bounds cw_cron_doms = {1, 31, NULL, 0};
const cw_cron_bounds cw_cron_months = {1, 12, month_names, 12};
const cw_cron_bounds cw_cron_dows = {0, 6, dow_names, 7};

static int parse_int_or_name(const char *s, size_t n, const cw_cron_bounds *r, uint64_t *out,
                             cw_buf *msg)
{
    if (r->names && n == 3) { /* strings.ToLower(s) is a key of robfig's map */
        for (size_t i = 0; i < r->nnames; i++) {
            const char *nm = r->names[i];
            size_t k = 0;
            while (k < 3 && (s[k] | 0x20) == nm[k] &&
                   ((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z')))
                k++;
            if (k == 3) {
                *out = r->min + i;
                return 0;
            }
        }
    }
    return must_parse_int(s, n, out, msg);
}

/* ---------------------------------------------------------------- fields */

static void range_error(cw_buf *msg, const char *what, uint64_t a, const char *mid, uint64_t b,
                        const char *expr, size_t n)
{
    cw_buf_printf(msg, "%s (%llu) %s (%llu): ", what, (unsigned long long)a, mid,
                  (unsigned long long)b);
    cw_buf_append(msg, expr, n);
}

/* robfig's getRange: `*`, `?`, N or N-M, optionally /S. */
static int get_range(const char *e, size_t n, const cw_cron_bounds *r, uint64_t *bits, cw_buf *msg)
{
    const char *slash = memchr(e, '/', n);
    size_t range_len = slash ? (size_t)(slash - e) : n;
    size_t nslash = 0, nhyphen = 0;
    for (size_t i = 0; i < n; i++)
        nslash += e[i] == '/';
    for (size_t i = 0; i < range_len; i++)
        nhyphen += e[i] == '-';
    const char *hyphen = memchr(e, '-', range_len);
    size_t low_len = hyphen ? (size_t)(hyphen - e) : range_len;

    uint64_t start, end, step, extra = 0;
    if (low_len == 1 && (e[0] == '*' || e[0] == '?')) {
        start = r->min; /* whatever follows a '-' is ignored, as robfig does */
        end = r->max;
        extra = CW_CRON_STAR;
    } else {
        if (parse_int_or_name(e, low_len, r, &start, msg)) return -1;
        if (nhyphen == 0) {
            end = start;
        } else if (nhyphen == 1) {
            if (parse_int_or_name(hyphen + 1, range_len - low_len - 1, r, &end, msg)) return -1;
        } else {
            cw_buf_puts(msg, "too many hyphens: ");
            cw_buf_append(msg, e, n);
            return -1;
        }
    }
    if (nslash == 0) {
        step = 1;
    } else if (nslash == 1) {
        if (must_parse_int(slash + 1, n - range_len - 1, &step, msg)) return -1;
        if (nhyphen == 0) /* "N/S" means "N-max/S" */
            end = r->max;
        if (step > 1) extra = 0;
    } else {
        cw_buf_puts(msg, "too many slashes: ");
        cw_buf_append(msg, e, n);
        return -1;
    }
    if (start < r->min) {
        range_error(msg, "beginning of range", start, "below minimum", r->min, e, n);
        return -1;
    }
    if (end > r->max) {
        range_error(msg, "end of range", end, "above maximum", r->max, e, n);
        return -1;
    }
    if (start > end) {
        range_error(msg, "beginning of range", start, "beyond end of range", end, e, n);
        return -1;
    }
    if (step == 0) {
        cw_buf_puts(msg, "step of range should be a positive number: ");
        cw_buf_append(msg, e, n);
        return -1;
    }
    uint64_t b = 0;
    for (uint64_t i = start; i <= end; i += step)
        b |= UINT64_C(1) << i;
    *bits = b | extra;
    return 0;
}

int cw_cron_field(const char *s, size_t n, const cw_cron_bounds *r, uint64_t *bits, cw_buf *msg)
{
    uint64_t b = 0;
    size_t i = 0;
    while (i < n) { /* strings.FieldsFunc on ',': empty items are skipped */
        if (s[i] == ',') {
            i++;
            continue;
        }
        size_t start = i;
        while (i < n && s[i] != ',')
            i++;
        uint64_t one;
        if (get_range(s + start, i - start, r, &one, msg)) return -1;
        b |= one;
    }
    *bits = b;
    return 0;
}

/* ---------------------------------------------------------------- durations */

static int duration_error(cw_buf *msg, const char *what, const char *unit, size_t unit_len,
                          const char *orig, size_t orig_len)
{
    cw_buf_puts(msg, "time: ");
    cw_buf_puts(msg, what);
    if (unit) {
        cw_buf_putc(msg, ' ');
        quote_time(msg, unit, unit_len);
        cw_buf_puts(msg, " in duration");
    }
    cw_buf_putc(msg, ' ');
    quote_time(msg, orig, orig_len);
    return -1;
}

static uint64_t unit_ns(const char *u, size_t n)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {{"ns", 1},
                 {"us", 1000},
                 {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
                 {"\xce\xbcs", 1000}, /* U+03BC Greek mu */
                 {"ms", 1000000},
                 {"s", UINT64_C(1000000000)},
                 {"m", UINT64_C(60000000000)},
                 {"h", UINT64_C(3600000000000)}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].name) == n && memcmp(units[i].name, u, n) == 0) return units[i].ns;
    return 0;
}

#define DURATION_LIMIT (UINT64_C(1) << 63)

/* The integer part of a term (Go's leadingInt): its digits at *s, consumed. -1 past 2^63. */
static int leading_int(const char **s, size_t *n, uint64_t *v)
{
    size_t i = 0;
    for (*v = 0; i < *n && (*s)[i] >= '0' && (*s)[i] <= '9'; i++) {
        if (*v > DURATION_LIMIT / 10) return -1;
        *v = *v * 10 + (uint64_t)((*s)[i] - '0');
        if (*v > DURATION_LIMIT) return -1;
    }
    *s += i, *n -= i;
    return (int)(i > 0);
}

/* The digits after a term's '.' (Go's leadingFraction), consumed: as many as fit in f,
 * scale the power of ten they make; the rest only skipped. 1 when there was a digit. */
static int leading_fraction(const char **s, size_t *n, uint64_t *f, double *scale)
{
    int overflow = 0;
    size_t i = 0;
    for (; i < *n && (*s)[i] >= '0' && (*s)[i] <= '9'; i++) {
        if (overflow) continue;
        uint64_t y = *f > (DURATION_LIMIT - 1) / 10 ? DURATION_LIMIT + 1
                                                    : *f * 10 + (uint64_t)((*s)[i] - '0');
        if (y > DURATION_LIMIT) {
            overflow = 1;
            continue;
        }
        *f = y;
        *scale *= 10;
    }
    *s += i, *n -= i;
    return i > 0;
}

/* One term of a duration, "<number><unit>" ("1.5h"), consumed: its nanoseconds in *out.
 * 0, or -1 with the error in msg. */
static int duration_term(const char **s, size_t *n, uint64_t *out, const char *orig,
                         size_t orig_len, cw_buf *msg)
{
    uint64_t v = 0, f = 0;
    double scale = 1;
    if (!((*s)[0] == '.' || ((*s)[0] >= '0' && (*s)[0] <= '9')))
        return duration_error(msg, "invalid duration", NULL, 0, orig, orig_len);
    int pre = leading_int(s, n, &v), post = 0;
    if (pre < 0) return duration_error(msg, "invalid duration", NULL, 0, orig, orig_len);
    if (*n > 0 && (*s)[0] == '.') {
        (*s)++, (*n)--;
        post = leading_fraction(s, n, &f, &scale);
    }
    if (!pre && !post) return duration_error(msg, "invalid duration", NULL, 0, orig, orig_len);
    size_t i = 0;
    while (i < *n && (*s)[i] != '.' && !((*s)[i] >= '0' && (*s)[i] <= '9'))
        i++;
    if (i == 0) return duration_error(msg, "missing unit in duration", NULL, 0, orig, orig_len);
    uint64_t unit = unit_ns(*s, i);
    if (!unit) return duration_error(msg, "unknown unit", *s, i, orig, orig_len);
    *s += i, *n -= i;
    if (v > DURATION_LIMIT / unit)
        return duration_error(msg, "invalid duration", NULL, 0, orig, orig_len);
    v *= unit;
    if (f > 0) {
        v += (uint64_t)((double)f * ((double)unit / scale));
        if (v > DURATION_LIMIT)
            return duration_error(msg, "invalid duration", NULL, 0, orig, orig_len);
    }
    *out = v;
    return 0;
}

int cw_cron_parse_duration(const char *orig, size_t orig_len, int64_t *out, cw_buf *msg)
{
    const char *s = orig;
    size_t n = orig_len;
    uint64_t d = 0;
    int neg = 0;
    if (n > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        s++, n--;
    }
    if (n == 1 && s[0] == '0') {
        *out = 0;
        return 0;
    }
    if (n == 0) return duration_error(msg, "invalid duration", NULL, 0, orig, orig_len);
    while (n > 0) {
        uint64_t v = 0;
        if (duration_term(&s, &n, &v, orig, orig_len, msg) != 0) return -1;
        d += v;
        if (d > DURATION_LIMIT)
            return duration_error(msg, "invalid duration", NULL, 0, orig, orig_len);
    }
    if (neg) {
        *out = d == DURATION_LIMIT ? INT64_MIN : -(int64_t)d;
        return 0;
    }
    if (d > DURATION_LIMIT - 1)
        return duration_error(msg, "invalid duration", NULL, 0, orig, orig_len);
    *out = (int64_t)d;
    return 0;
}
