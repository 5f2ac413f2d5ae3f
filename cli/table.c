/* Aligned tables for the admin commands, and the cleaning of what goes into them. */
#include "table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct table {
    size_t ncols;
    char **cells;   /* row-major, the header row first */
    size_t *widths; /* of each cell, in columns */
    size_t ncells, cap;
    size_t *col_width, *max_width;
    unsigned char *right;
};

/* ---------------------------------------------------------------- cell text */

static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t len;
    uint32_t c, min;
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    } else if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        len = 2, c = s[0] & 0x1F, min = 0x80;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        len = 3, c = s[0] & 0x0F, min = 0x800;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        len = 4, c = s[0] & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    *cp = c;
    return len;
}

size_t text_utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    return n ? utf8_decode((const unsigned char *)s, n, cp) : 0;
}

/* Characters that must not reach a terminal verbatim: C0 and C1 controls, DEL, line
 * and paragraph separators, and the bidi marks and overrides that reorder a line. */
static int unsafe_char(uint32_t c)
{
    return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x2028 || c == 0x2029 || c == 0x061C ||
           c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) ||
           (c >= 0x2066 && c <= 0x2069);
}

/* Columns a printable character takes: 0 for combining marks and zero-width
 * characters, 2 for wide East Asian characters and emoji, else 1. */
static size_t char_width(uint32_t c)
{
    if ((c >= 0x0300 && c <= 0x036F) || (c >= 0x200B && c <= 0x200D) || c == 0xFEFF ||
        (c >= 0xFE00 && c <= 0xFE0F))
        return 0;
    if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF && c != 0x303F) ||
        (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) ||
        (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
        (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
        (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD))
        return 2;
    return 1;
}

char *text_clean(const char *s, size_t len, size_t max, size_t *width)
{
    static const char ellipsis[] = "\xE2\x80\xA6"; /* U+2026 */
    /* never longer than the input (a replaced character is one byte), plus the ellipsis */
    char *out = malloc(len + sizeof ellipsis);
    if (!out) return NULL;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t o = 0, w = 0, i = 0;
    int cut = 0;
    while (i < len) {
        uint32_t c;
        size_t n = utf8_decode(p + i, len - i, &c);
        const char *emit = (const char *)p + i;
        size_t emit_len = n, cw;
        if (n == 0 || unsafe_char(c)) {
            emit = (n && (c == '\t' || c == '\n' || c == '\r')) ? " " : "?";
            emit_len = 1, cw = 1;
            n = n ? n : 1;
        } else {
            cw = char_width(c);
        }
        /* keep one column for the ellipsis whenever something follows that won't fit */
        if (max && w + cw > max - 1) {
            size_t rest_w = 0;
            for (size_t j = i; j < len && w + rest_w <= max;) {
                uint32_t c2;
                size_t n2 = utf8_decode(p + j, len - j, &c2);
                rest_w += (n2 == 0 || unsafe_char(c2)) ? 1 : char_width(c2);
                j += n2 ? n2 : 1;
            }
            if (w + rest_w > max) {
                cut = 1;
                break;
            }
        }
        memcpy(out + o, emit, emit_len);
        o += emit_len, w += cw, i += n;
    }
    if (cut) {
        memcpy(out + o, ellipsis, sizeof ellipsis - 1);
        o += sizeof ellipsis - 1, w += 1;
    }
    out[o] = '\0';
    if (width) *width = w;
    return out;
}

void fmt_iso_time(char *buf, size_t size, int64_t t)
{
    struct tm tm;
    time_t tt = (time_t)t;
    if (t == 0)
        snprintf(buf, size, "-");
    else if (!gmtime_r(&tt, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, size, "@%lld", (long long)t);
}

void fmt_duration(char *buf, size_t size, int64_t seconds)
{
    unsigned long long s =
        seconds < 0 ? 0ULL - (unsigned long long)seconds : (unsigned long long)seconds;
    if (s < 60)
        snprintf(buf, size, "%llus", s);
    else if (s < 3600)
        snprintf(buf, size, "%llum", s / 60);
    else if (s < 86400 && (s % 3600) / 60)
        snprintf(buf, size, "%lluh%llum", s / 3600, (s % 3600) / 60);
    else if (s < 86400)
        snprintf(buf, size, "%lluh", s / 3600);
    else if ((s % 86400) / 3600)
        snprintf(buf, size, "%llud%lluh", s / 86400, (s % 86400) / 3600);
    else
        snprintf(buf, size, "%llud", s / 86400);
}

void fmt_when(char *buf, size_t size, int64_t t, int64_t now)
{
    char iso[48], d[32];
    fmt_iso_time(iso, sizeof iso, t);
    if (t == 0) {
        snprintf(buf, size, "-");
        return;
    }
    fmt_duration(d, sizeof d, now - t);
    if (t == now)
        snprintf(buf, size, "%s (now)", iso);
    else if (t < now)
        snprintf(buf, size, "%s (%s ago)", iso, d);
    else
        snprintf(buf, size, "%s (in %s)", iso, d);
}

/* ---------------------------------------------------------------- the table */

table *table_new(size_t ncols, const char *const *headers)
{
    table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->ncols = ncols;
    t->col_width = calloc(ncols, sizeof *t->col_width);
    t->max_width = calloc(ncols, sizeof *t->max_width);
    t->right = calloc(ncols, 1);
    if (!t->col_width || !t->max_width || !t->right) {
        table_free(t);
        return NULL;
    }
    for (size_t i = 0; i < ncols; i++) {
        if (table_cell(t, headers[i]) != 0) {
            table_free(t);
            return NULL;
        }
    }
    return t;
}

void table_free(table *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->ncells; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t->widths);
    free(t->col_width);
    free(t->max_width);
    free(t->right);
    free(t);
}

void table_set_max_width(table *t, size_t col, size_t max)
{
    if (col < t->ncols) t->max_width[col] = max;
}

void table_set_right(table *t, size_t col)
{
    if (col < t->ncols) t->right[col] = 1;
}

int table_cell(table *t, const char *text)
{
    if (t->ncells == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        char **cells = realloc(t->cells, cap * sizeof *cells);
        if (!cells) return -1;
        t->cells = cells;
        size_t *widths = realloc(t->widths, cap * sizeof *widths);
        if (!widths) return -1;
        t->widths = widths;
        t->cap = cap;
    }
    size_t col = t->ncells % t->ncols, w;
    /* the header row is never cut */
    size_t max = t->ncells < t->ncols ? 0 : t->max_width[col];
    char *cell = text_clean(text, text ? strlen(text) : 0, max, &w);
    if (!cell) return -1;
    t->cells[t->ncells] = cell;
    t->widths[t->ncells++] = w;
    if (w > t->col_width[col]) t->col_width[col] = w;
    return 0;
}

int table_cellf(table *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return -1;
    char *s = malloc((size_t)n + 1);
    if (!s) return -1;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = table_cell(t, s);
    free(s);
    return rc;
}

size_t table_rows(const table *t)
{
    return t->ncells / t->ncols - 1;
}

static void pad(FILE *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fputc(' ', out);
}

void table_print(const table *t, FILE *out)
{
    size_t complete = t->ncells - t->ncells % t->ncols;
    size_t blanks = 0; /* owed before the next visible text: none trail a line */
    for (size_t i = 0; i < complete; i++) {
        size_t col = i % t->ncols, gap = t->col_width[col] - t->widths[i];
        if (col > 0) blanks += 2;
        if (t->right[col]) blanks += gap;
        if (t->cells[i][0]) {
            pad(out, blanks);
            fputs(t->cells[i], out);
            blanks = 0;
        }
        if (!t->right[col]) blanks += gap;
        if (col + 1 == t->ncols) {
            fputc('\n', out);
            blanks = 0;
        }
    }
}
