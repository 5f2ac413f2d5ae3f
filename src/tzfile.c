/* Time zones with the semantics of Go's time package (see tzfile.h): TZif reading as
 * LoadLocationFromTZData does it, Location.lookup with its POSIX-rule extension
 * (tzset) and its one-entry cache, time.Date's choice of offset, and time.Local. */
#include "tzfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TZ_ALPHA INT64_MIN /* Go's alpha and omega: the ends of time for transitions */
#define TZ_OMEGA INT64_MAX
#define TZ_MAX_FILE (10 << 20) /* Go's maxFileSize */
#define SECS_PER_DAY 86400

enum { RULE_JULIAN, RULE_DOY, RULE_MWD };

typedef struct tz_rule {
    int kind;
    int day, week, mon;
    int64_t time; /* seconds after local midnight (may be negative or > 24 h) */
} tz_rule;

/* The footer's POSIX TZ string, parsed once; ok = 0 when Go's tzset would refuse it. */
typedef struct tz_extend {
    int ok;
    int has_dst;
    int64_t std_off, dst_off; /* seconds east of UTC */
    tz_rule start, end;
} tz_extend;

struct cw_tz {
    char *name;
    int builtin; /* UTC or the local zone: never freed */
    size_t nzone;
    int32_t *zone_off;
    unsigned char *zone_dst;
    size_t ntx;
    int64_t *tx_when;
    unsigned char *tx_zone;
    size_t first_zone; /* Go's lookupFirstZone */
    tz_extend ext;     /* used after the last transition when ext.ok */
    int cache_ok;      /* Go's cache of the zone in force when the file was read */
    int64_t cache_start, cache_end;
    int32_t cache_off;
};

static const cw_tz utc_zone = {.name = "UTC", .builtin = 1};
static const cw_tz local_utc_zone = {.name = "UTC", .builtin = 1}; /* time.Local fallback */

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
static void parse_extend(const char *str, size_t len, tz_extend *e)
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
static int32_t extend_eval(const tz_extend *e, int64_t last_tx, int64_t sec, int64_t *start,
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
    if (lo == z->ntx - 1 && z->ext.ok) off = extend_eval(&z->ext, *start, sec, start, end);
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

/* ---------------------------------------------------------------- TZif */

typedef struct dio {
    const unsigned char *p;
    uint64_t n;
    int error;
} dio;

static const unsigned char *dio_read(dio *d, uint64_t k)
{
    if (k == 0) return d->p; /* (no arithmetic on a NULL p) */
    if (d->n < k) {
        d->p = NULL;
        d->n = 0;
        d->error = 1;
        return NULL;
    }
    const unsigned char *r = d->p;
    d->p += k;
    d->n -= k;
    return r;
}

static int dio_big4(dio *d, uint32_t *out)
{
    const unsigned char *p = dio_read(d, 4);
    if (!p) return 0;
    *out = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    return 1;
}

#define BAD_DATA "malformed time zone information"

static void tz_free(cw_tz *z)
{
    if (!z || z->builtin) return;
    cw_free(z->name);
    cw_free(z->zone_off);
    cw_free(z->zone_dst);
    cw_free(z->tx_when);
    cw_free(z->tx_zone);
    cw_free(z);
}

void cw_tz_release(const cw_tz *z)
{
    tz_free((cw_tz *)z);
}

static size_t first_zone(const cw_tz *z)
{
    int used = 0; /* is zone 0 the target of some transition? */
    for (size_t i = 0; i < z->ntx && !used; i++)
        used = z->tx_zone[i] == 0;
    if (!used) return 0;
    if (z->ntx > 0 && z->zone_dst[z->tx_zone[0]]) {
        for (size_t zi = z->tx_zone[0]; zi-- > 0;)
            if (!z->zone_dst[zi]) return zi;
    }
    for (size_t zi = 0; zi < z->nzone; zi++)
        if (!z->zone_dst[zi]) return zi;
    return 0;
}

/* Go fills a one-entry cache with the zone in force when the file is read; lookups
 * inside it return it without the search (and, after the last transition, with the
 * interval tzset gave for that moment), which can differ from an uncached lookup. */
static void fill_cache(cw_tz *z)
{
    int64_t now = cw_now();
    for (size_t i = 0; i < z->ntx; i++) {
        if (z->tx_when[i] <= now && (i + 1 == z->ntx || now < z->tx_when[i + 1])) {
            z->cache_ok = 1;
            z->cache_start = z->tx_when[i];
            z->cache_end = TZ_OMEGA;
            z->cache_off = z->zone_off[z->tx_zone[i]];
            if (i + 1 < z->ntx) {
                z->cache_end = z->tx_when[i + 1];
            } else if (z->ext.ok) {
                int64_t s, e;
                z->cache_off = extend_eval(&z->ext, z->cache_start, now, &s, &e);
                z->cache_start = s;
                z->cache_end = e;
            }
            return;
        }
    }
}

int cw_tz_from_tzif(const char *name, const unsigned char *data, size_t len, const cw_tz **out,
                    cwork_error *err)
{
    dio d = {data, len, 0};
    const unsigned char *p = dio_read(&d, 4);
    if (!p || memcmp(p, "TZif", 4) != 0) return cw_error(err, CWORK_EINVAL, BAD_DATA);
    p = dio_read(&d, 16);
    if (!p) return cw_error(err, CWORK_EINVAL, BAD_DATA);
    int version;
    switch (p[0]) {
    case 0:
        version = 1;
        break;
    case '2':
        version = 2;
        break;
    case '3':
        version = 3;
        break;
    default:
        return cw_error(err, CWORK_EINVAL, BAD_DATA);
    }
    enum { N_UTCLOCAL, N_STDWALL, N_LEAP, N_TIME, N_ZONE, N_CHAR };
    uint64_t n[6];
    for (int i = 0; i < 6; i++) {
        uint32_t v;
        if (!dio_big4(&d, &v)) return cw_error(err, CWORK_EINVAL, BAD_DATA);
        n[i] = v;
    }
    int is64 = 0;
    if (version > 1) { /* skip the 32-bit data and the second header's magic */
        uint64_t skip = n[N_TIME] * 4 + n[N_TIME] + n[N_ZONE] * 6 + n[N_CHAR] + n[N_LEAP] * 8 +
                        n[N_STDWALL] + n[N_UTCLOCAL] + 4 + 16;
        dio_read(&d, skip);
        is64 = 1;
        for (int i = 0; i < 6; i++) {
            uint32_t v;
            if (!dio_big4(&d, &v)) return cw_error(err, CWORK_EINVAL, BAD_DATA);
            n[i] = v;
        }
    }
    uint64_t size = is64 ? 8 : 4;
    dio txtimes = {dio_read(&d, n[N_TIME] * size), n[N_TIME] * size, 0};
    const unsigned char *txzones = dio_read(&d, n[N_TIME]);
    dio zonedata = {dio_read(&d, n[N_ZONE] * 6), n[N_ZONE] * 6, 0};
    dio_read(&d, n[N_CHAR]); /* abbreviations: only their count is checked */
    dio_read(&d, n[N_LEAP] * (size + 4));
    dio_read(&d, n[N_STDWALL]);
    dio_read(&d, n[N_UTCLOCAL]);
    if (d.error) return cw_error(err, CWORK_EINVAL, BAD_DATA);
    const char *rest = (const char *)d.p;
    size_t rest_len = d.n;
    if (n[N_ZONE] == 0) return cw_error(err, CWORK_EINVAL, BAD_DATA);

    cw_tz *z = cw_calloc(1, sizeof *z);
    if (!z) return cw_error(err, CWORK_ENOMEM, "out of memory");
    z->nzone = n[N_ZONE];
    z->ntx = n[N_TIME] ? n[N_TIME] : 1; /* Go adds one transition at alpha when none */
    z->name = cw_strdup(name);
    z->zone_off = cw_calloc(z->nzone, sizeof *z->zone_off);
    z->zone_dst = cw_calloc(z->nzone, 1);
    z->tx_when = cw_calloc(z->ntx, sizeof *z->tx_when);
    z->tx_zone = cw_calloc(z->ntx, 1);
    if (!z->name || !z->zone_off || !z->zone_dst || !z->tx_when || !z->tx_zone) {
        tz_free(z);
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < z->nzone; i++) {
        uint32_t off;
        dio_big4(&zonedata, &off);
        const unsigned char *b = dio_read(&zonedata, 2);
        z->zone_off[i] = (int32_t)off;
        z->zone_dst[i] = b[0] != 0;
        if (b[1] >= n[N_CHAR]) {
            tz_free(z);
            return cw_error(err, CWORK_EINVAL, BAD_DATA);
        }
    }
    for (size_t i = 0; i < n[N_TIME]; i++) {
        const unsigned char *t = dio_read(&txtimes, size);
        uint64_t v = 0;
        for (uint64_t k = 0; k < size; k++)
            v = v << 8 | t[k];
        z->tx_when[i] = is64 ? (int64_t)v : (int64_t)(int32_t)(uint32_t)v;
        if (txzones[i] >= z->nzone) {
            tz_free(z);
            return cw_error(err, CWORK_EINVAL, BAD_DATA);
        }
        z->tx_zone[i] = txzones[i];
    }
    if (n[N_TIME] == 0) {
        z->tx_when[0] = TZ_ALPHA;
        z->tx_zone[0] = 0;
    }
    if (rest_len > 2 && rest[0] == '\n' && rest[rest_len - 1] == '\n')
        parse_extend(rest + 1, rest_len - 2, &z->ext);
    z->first_zone = first_zone(z);
    fill_cache(z);
    *out = z;
    return 0;
}

/* ---------------------------------------------------------------- files */

/* Go's syscall.Errno texts for what opening and reading a file can give. */
static const char *errno_text(int e, char buf[32])
{
    switch (e) {
    case ENOENT:
        return "no such file or directory";
    case EISDIR:
        return "is a directory";
    case ENOTDIR:
        return "not a directory";
    case EACCES:
        return "permission denied";
    case EPERM:
        return "operation not permitted";
    case ENAMETOOLONG:
        return "file name too long";
    case ELOOP:
        return "too many levels of symbolic links";
    case EINVAL:
        return "invalid argument";
    case EIO:
        return "input/output error";
    case EMFILE:
        return "too many open files";
    case ENFILE:
        return "too many open files in system";
    case ENOMEM:
        return "cannot allocate memory";
    case ENXIO:
        return "no such device or address";
    case ENODEV:
        return "no such device";
    default:
        snprintf(buf, 32, "errno %d", e);
        return buf;
    }
}

/* Reads a whole file as Go's time.readFile: 0, or an errno (ENOENT included), or -1 for
 * a file over the size limit, or -2 when out of memory. */
static int read_file(const char *path, cw_buf *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    int rc = 0;
    char chunk[4096];
    for (;;) {
        ssize_t k = read(fd, chunk, sizeof chunk);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            rc = errno;
            break;
        }
        if (k == 0) break;
        cw_buf_append(out, chunk, (size_t)k);
        if (out->oom) {
            rc = -2;
            break;
        }
        if (out->len > TZ_MAX_FILE) {
            rc = -1;
            break;
        }
    }
    close(fd);
    return rc;
}

/* Go's loadLocation for one source (a directory, "" for an absolute name): 0 with *out,
 * ENOENT when the file is not there, else an error filled into err. */
static int load_from(const char *dir, const char *name, const cw_tz **out, cwork_error *err)
{
    cw_buf path, data;
    cw_buf_init(&path);
    cw_buf_init(&data);
    if (*dir) {
        cw_buf_puts(&path, dir);
        cw_buf_putc(&path, '/');
    }
    cw_buf_puts(&path, name);
    int rc;
    if (path.oom) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    } else {
        int e = read_file(path.data, &data);
        char buf[32];
        if (e == ENOENT)
            rc = ENOENT;
        else if (e == -2)
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        else if (e == -1)
            rc = cw_error(err, CWORK_EINVAL, "time: file %s is too large", path.data);
        else if (e != 0)
            rc = cw_error(err, CWORK_EINVAL, "%s", errno_text(e, buf));
        else
            rc = cw_tz_from_tzif(name, (const unsigned char *)(data.data ? data.data : ""),
                                 data.len, out, err);
    }
    cw_buf_free(&path);
    cw_buf_free(&data);
    return rc;
}

/* Tries the sources in order; the first error other than "not there" is the answer
 * when none has the zone, else "unknown time zone NAME". */
static int load_location(const char *name, const char *const *dirs, size_t ndirs, const cw_tz **out,
                         cwork_error *err)
{
    cwork_error first = {0};
    int have_first = 0;
    for (size_t i = 0; i < ndirs; i++) {
        cwork_error e = {0};
        int rc = load_from(dirs[i], name, out, &e);
        if (rc == 0) return 0;
        if (rc == CWORK_ENOMEM) return cw_error(err, CWORK_ENOMEM, "out of memory");
        if (rc != ENOENT && !have_first) {
            first = e;
            have_first = 1;
        }
    }
    if (have_first) return cw_error(err, first.code, "%s", first.message);
    return cw_error(err, CWORK_EINVAL, "unknown time zone %s", name);
}

static const char *const platform_dirs[] = {"/usr/share/zoneinfo/", "/usr/share/lib/zoneinfo/",
                                            "/usr/lib/locale/TZ/"};
#define N_PLATFORM (sizeof platform_dirs / sizeof platform_dirs[0])

/* ---------------------------------------------------------------- the environment */

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static char *zoneinfo_dir;      /* $ZONEINFO at first use (a directory), or NULL */
static const cw_tz *local_zone; /* time.Local, set once */

static void init_env(void)
{
    const char *zi = getenv("ZONEINFO");
    if (zi && *zi) zoneinfo_dir = cw_strdup(zi);

    const char *tz = getenv("TZ");
    const cw_tz *z = NULL;
    cwork_error e = {0};
    if (!tz) {
        static const char *const etc[] = {"/etc"};
        load_location("localtime", etc, 1, &z, &e);
    } else if (*tz) {
        if (tz[0] == ':') tz++;
        if (tz[0] == '/') {
            static const char *const abs[] = {""};
            load_location(tz, abs, 1, &z, &e);
        } else if (*tz && strcmp(tz, "UTC") != 0) {
            load_location(tz, platform_dirs, N_PLATFORM, &z, &e);
        }
    }
    if (z) {
        cw_tz *lz = (cw_tz *)z;
        if (!tz || strcmp(tz, "/etc/localtime") == 0) {
            char *n = cw_strdup("Local");
            if (n) {
                cw_free(lz->name);
                lz->name = n;
            }
        }
        lz->builtin = 1;
        local_zone = lz;
    } else {
        local_zone = &local_utc_zone;
    }
}

const cw_tz *cw_tz_utc(void)
{
    return &utc_zone;
}

const cw_tz *cw_tz_local(void)
{
    pthread_once(&env_once, init_env);
    return local_zone;
}

int cw_tz_is_local(const cw_tz *z)
{
    return z == cw_tz_local();
}

const char *cw_tz_name(const cw_tz *z)
{
    return z->name;
}

int cw_tz_load(const char *name, size_t len, const cw_tz **out, cwork_error *err)
{
    if (len == 0 || (len == 3 && memcmp(name, "UTC", 3) == 0)) {
        *out = &utc_zone;
        return 0;
    }
    if (len == 5 && memcmp(name, "Local", 5) == 0) {
        *out = cw_tz_local();
        return 0;
    }
    int dotdot = 0;
    for (size_t i = 0; i + 1 < len; i++)
        dotdot |= name[i] == '.' && name[i + 1] == '.';
    if (dotdot || name[0] == '/' || name[0] == '\\')
        return cw_error(err, CWORK_EINVAL, "time: invalid location name");
    if (memchr(name, '\0', len)) /* what opening such a path gives in Go */
        return cw_error(err, CWORK_EINVAL, "invalid argument");
    char *nm = cw_strndup(name, len);
    if (!nm) return cw_error(err, CWORK_ENOMEM, "out of memory");
    pthread_once(&env_once, init_env);
    cwork_error first = {0};
    int have_first = 0, rc;
    size_t zl = zoneinfo_dir ? strlen(zoneinfo_dir) : 0;
    if (zl > 0 && !(zl > 4 && strcmp(zoneinfo_dir + zl - 4, ".zip") == 0)) {
        rc = load_from(zoneinfo_dir, nm, out, &first);
        if (rc == 0) {
            cw_free(nm);
            return 0;
        }
        have_first = rc != ENOENT;
    }
    rc = load_location(nm, platform_dirs, N_PLATFORM, out, err);
    cw_free(nm);
    if (rc != 0 && have_first) return cw_error(err, first.code, "%s", first.message);
    return rc;
}
