/* Time-zone arithmetic with the semantics of Go's time package (see tzfile.h): the
 * proleptic Gregorian calendar, the POSIX TZ rules of TZif footers (Go's tzset),
 * Location.lookup with its one-entry cache, and time.Date's choice of offset. Loading
 * zones lives in tzfile.c. */
#include "tz_impl.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- calendar */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t cw_days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void cw_civil_from_days(int64_t days, int64_t *y, int *m, int *d)
{
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int mm = (int)(mp < 10 ? mp + 3 : mp - 9);
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = mm;
    *y = yoe + era * 400 + (mm <= 2);
}

static int is_leap(int64_t y)
{
    return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

static const int days_before[13] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365};

static int days_in(int mon, int64_t year)
{
    if (mon == 2 && is_leap(year)) return 29;
    return days_before[mon] - days_before[mon - 1];
}

/* ---------------------------------------------------------------- POSIX TZ rules */

typedef struct span {
    const char *p;
    size_t n;
} span;

static void adv(span *s, size_t k)
{
    s->p += k;
    s->n -= k;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A zone abbreviation: three or more characters up to a digit, ',', '-' or '+', or
 * anything between '<' and '>'. */
static int tzs_name(span *s)
{
    if (s->n == 0) return 0;
    if (s->p[0] != '<') {
        for (size_t i = 0; i < s->n; i++) {
            char c = s->p[i];
            if (is_digit(c) || c == ',' || c == '-' || c == '+') {
                if (i < 3) return 0;
                adv(s, i);
                return 1;
            }
        }
        if (s->n < 3) return 0;
        adv(s, s->n);
        return 1;
    }
    for (size_t i = 0; i < s->n; i++) {
        if (s->p[i] == '>') {
            adv(s, i + 1);
            return 1;
        }
    }
    return 0;
}

static int tzs_num(span *s, int min, int max, int *out)
{
    if (s->n == 0) return 0;
    int num = 0;
    for (size_t i = 0; i < s->n; i++) {
        char c = s->p[i];
        if (!is_digit(c)) {
            if (i == 0 || num < min) return 0;
            *out = num;
            adv(s, i);
            return 1;
        }
        num = num * 10 + (c - '0');
        if (num > max) return 0;
    }
    if (num < min) return 0;
    *out = num;
    adv(s, s->n);
    return 1;
}

/* [+-]hh[:mm[:ss]], hours up to 24 * 7 as tzcode allows. */
static int tzs_offset(span *s, int64_t *out)
{
    if (s->n == 0) return 0;
    int neg = 0;
    if (s->p[0] == '+') {
        adv(s, 1);
    } else if (s->p[0] == '-') {
        adv(s, 1);
        neg = 1;
    }
    int v;
    if (!tzs_num(s, 0, 24 * 7, &v)) return 0;
    int64_t off = (int64_t)v * 3600;
    for (int part = 0; part < 2; part++) {
        if (s->n == 0 || s->p[0] != ':') break;
        adv(s, 1);
        if (!tzs_num(s, 0, 59, &v)) return 0;
        off += part == 0 ? (int64_t)v * 60 : v;
    }
    *out = neg ? -off : off;
    return 1;
}

static int tzs_rule(span *s, tz_rule *r)
{
    if (s->n == 0) return 0;
    memset(r, 0, sizeof *r);
    if (s->p[0] == 'J') {
        adv(s, 1);
        if (!tzs_num(s, 1, 365, &r->day)) return 0;
        r->kind = RULE_JULIAN;
    } else if (s->p[0] == 'M') {
        adv(s, 1);
        if (!tzs_num(s, 1, 12, &r->mon) || s->n == 0 || s->p[0] != '.') return 0;
        adv(s, 1);
        if (!tzs_num(s, 1, 5, &r->week) || s->n == 0 || s->p[0] != '.') return 0;
        adv(s, 1);
        if (!tzs_num(s, 0, 6, &r->day)) return 0;
        r->kind = RULE_MWD;
    } else {
        if (!tzs_num(s, 0, 365, &r->day)) return 0;
        r->kind = RULE_DOY;
    }
    if (s->n == 0 || s->p[0] != '/') {
        r->time = 2 * 3600;
        return 1;
    }
    adv(s, 1);
    return tzs_offset(s, &r->time);
}

/* Parses as Go's tzset does before it looks at the time (the parse does not depend on
 * it, so it is done once per zone). */
void cw_tz_parse_extend(const char *str, size_t len, tz_extend *e)
{
    memset(e, 0, sizeof *e);
    span s = {str, len};
    int64_t std_off, dst_off;
    if (!tzs_name(&s) || !tzs_offset(&s, &std_off)) return;
    std_off = -std_off; /* POSIX offsets are west of UTC */
    e->std_off = std_off;
    if (s.n == 0 || s.p[0] == ',') {
        e->ok = 1; /* no daylight saving time */
        return;
    }
    if (!tzs_name(&s)) return;
    if (s.n == 0 || s.p[0] == ',') {
        dst_off = std_off + 3600;
    } else {
        if (!tzs_offset(&s, &dst_off)) return;
        dst_off = -dst_off;
    }
    static const char default_rules[] = ",M3.2.0,M11.1.0"; /* tzcode's default */
    if (s.n == 0) {
        s.p = default_rules;
        s.n = sizeof default_rules - 1;
    }
    if (s.p[0] != ',' && s.p[0] != ';') return;
    adv(&s, 1);
    if (!tzs_rule(&s, &e->start) || s.n == 0 || s.p[0] != ',') return;
    adv(&s, 1);
    if (!tzs_rule(&s, &e->end) || s.n > 0) return;
    e->dst_off = dst_off;
    e->has_dst = 1;
    e->ok = 1;
}

/* Seconds after the start of year (UTC) at which rule r takes effect, for a clock
 * running at offset off. Day of week of the 1st of the month by Zeller's congruence,
 * with Go's integer arithmetic. */
static int64_t rule_time(int64_t year, const tz_rule *r, int64_t off)
{
    int64_t s = 0;
    switch (r->kind) {
    case RULE_JULIAN:
        s = (int64_t)(r->day - 1) * SECS_PER_DAY;
        if (is_leap(year) && r->day >= 60) s += SECS_PER_DAY;
        break;
    case RULE_DOY:
        s = (int64_t)r->day * SECS_PER_DAY;
        break;
    default: {
        int64_t m1 = (r->mon + 9) % 12 + 1;
        int64_t yy0 = year;
        if (r->mon <= 2) yy0--;
        int64_t yy1 = yy0 / 100, yy2 = yy0 % 100;
        int64_t dow = ((26 * m1 - 2) / 10 + 1 + yy2 + yy2 / 4 + yy1 / 4 - 2 * yy1) % 7;
        if (dow < 0) dow += 7;
        int64_t d = r->day - dow;
        if (d < 0) d += 7;
        for (int i = 1; i < r->week; i++) {
            if (d + 7 >= days_in(r->mon, year)) break;
            d += 7;
        }
        d += days_before[r->mon - 1];
        if (is_leap(year) && r->mon > 2) d++;
        s = d * SECS_PER_DAY;
    }
    }
    return s + r->time - off;
}

/* Go's tzset for the instant sec, given the last transition: the offset and the
 * interval Go reports (exact near a change, otherwise the calendar year). */
int32_t cw_tz_extend_eval(const tz_extend *e, int64_t last_tx, int64_t sec, int64_t *start,
                          int64_t *end)
{
    if (!e->has_dst) {
        *start = last_tx;
        *end = TZ_OMEGA;
        return (int32_t)e->std_off;
    }
    int64_t days = floor_div(sec, SECS_PER_DAY), year;
    int m, d;
    cw_civil_from_days(days, &year, &m, &d);
    int64_t jan1 = cw_days_from_civil(year, 1, 1);
    int64_t ysec = (days - jan1) * SECS_PER_DAY + sec % SECS_PER_DAY; /* Go's '%' */
    int64_t abs = jan1 * SECS_PER_DAY;
    int64_t start_sec = rule_time(year, &e->start, e->std_off);
    int64_t end_sec = rule_time(year, &e->end, e->dst_off);
    int64_t std = e->std_off, dst = e->dst_off;
    if (end_sec < start_sec) { /* southern hemisphere: the labels flip */
        int64_t t = start_sec;
        start_sec = end_sec;
        end_sec = t;
        std = e->dst_off;
        dst = e->std_off;
    }
    if (ysec < start_sec) {
        *start = abs;
        *end = start_sec + abs;
        return (int32_t)std;
    }
    if (ysec >= end_sec) {
        *start = end_sec + abs;
        *end = abs + 365 * SECS_PER_DAY;
        return (int32_t)std;
    }
    *start = start_sec + abs;
    *end = end_sec + abs;
    return (int32_t)dst;
}

/* ---------------------------------------------------------------- lookups */

static int32_t lookup_uncached(const cw_tz *z, int64_t sec, int64_t *start, int64_t *end)
{
    if (z->ntx == 0 || sec < z->tx_when[0]) {
        *start = TZ_ALPHA;
        *end = z->ntx ? z->tx_when[0] : TZ_OMEGA;
        return z->zone_off[z->first_zone];
    }
    size_t lo = 0, hi = z->ntx;
    *end = TZ_OMEGA;
    while (hi - lo > 1) {
        size_t m = lo + (hi - lo) / 2;
        if (sec < z->tx_when[m]) {
            *end = z->tx_when[m];
            hi = m;
        } else {
            lo = m;
        }
    }
    *start = z->tx_when[lo];
    int32_t off = z->zone_off[z->tx_zone[lo]];
    if (lo == z->ntx - 1 && z->ext.ok) off = cw_tz_extend_eval(&z->ext, *start, sec, start, end);
    return off;
}

int32_t cw_tz_lookup(const cw_tz *z, int64_t sec, int64_t *startp, int64_t *endp)
{
    int64_t start, end;
    int32_t off;
    if (z->nzone == 0) {
        start = TZ_ALPHA;
        end = TZ_OMEGA;
        off = 0;
    } else if (z->cache_ok && z->cache_start <= sec && sec < z->cache_end) {
        start = z->cache_start;
        end = z->cache_end;
        off = z->cache_off;
    } else {
        off = lookup_uncached(z, sec, &start, &end);
    }
    if (startp) *startp = start;
    if (endp) *endp = end;
    return off;
}

void cw_tz_civil(const cw_tz *z, int64_t sec, cw_civil *c)
{
    int32_t off = cw_tz_lookup(z, sec, NULL, NULL);
    int64_t local = sec + off;
    int64_t days = floor_div(local, SECS_PER_DAY);
    int64_t rem = local - days * SECS_PER_DAY;
    cw_civil_from_days(days, &c->year, &c->month, &c->day);
    c->hour = (int)(rem / 3600);
    c->min = (int)(rem % 3600 / 60);
    c->sec = (int)(rem % 60);
    c->wday = (int)(((days + 4) % 7 + 7) % 7); /* 1970-01-01 was a Thursday */
    c->offset = off;
}

void cw_tz_format_utc(int64_t sec, char out[40])
{
    int64_t days = floor_div(sec, SECS_PER_DAY), rem = sec - days * SECS_PER_DAY, y;
    int m, d;
    cw_civil_from_days(days, &y, &m, &d);
    snprintf(out, 40, "%04lld-%02d-%02dT%02d:%02d:%02dZ", (long long)y, m, d, (int)(rem / 3600),
             (int)(rem % 3600 / 60), (int)(rem % 60));
}

int64_t cw_tz_date(const cw_tz *z, int64_t year, int64_t month, int64_t day, int64_t hour,
                   int64_t min, int64_t sec)
{
    int64_t m = month - 1; /* months carry into years; the rest is linear */
    if (m < 0) {
        int64_t n = (-m - 1) / 12 + 1;
        year -= n;
        m += n * 12;
    }
    if (m >= 12) {
        year += m / 12;
        m %= 12;
    }
    int64_t unix = (cw_days_from_civil(year, m + 1, 1) + day - 1) * SECS_PER_DAY + hour * 3600 +
                   min * 60 + sec;
    int64_t start, end;
    int32_t off = cw_tz_lookup(z, unix, &start, &end);
    if (off != 0) {
        int64_t utc = unix - off;
        if (utc < start || utc >= end) off = cw_tz_lookup(z, utc, NULL, NULL);
        unix -= off;
    }
    return unix;
}
