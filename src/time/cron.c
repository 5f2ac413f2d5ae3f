/* Cron schedules as robfig/cron v3.0.1 parses them with SecondOptional | Minute | Hour |
 * Dom | Month | Dow | Descriptor, and SpecSchedule.Next step by step as robfig computes
 * it on Go's time.Time (wall-clock fields of the zone, time.Date for resets and AddDate,
 * absolute Add and Truncate), so that fire times agree with Go's to the second,
 * including robfig's behaviour around daylight-saving changes (PROTOCOL §10.1). */
#include "cron_impl.h"

#include <string.h>

/* Instants far outside any plausible use (about ±31 700 years) have no next time. */
#define CW_CRON_T_LIMIT INT64_C(1000000000000)
/* Loop steps one Next may take before it gives up (a real search takes a few
 * thousand; this only guards against pathological zone data). */
#define CW_CRON_STEP_BUDGET 2000000L

/* A spec is refused when Next finds nothing within robfig's five years from any of
 * these instants (2024-01-01, 2025-05-01, 2026-09-01 UTC): every date a cron spec can
 * name recurs within four years, 29 February included, so a spec that fires at all
 * fires within five years of one of them (the century rule aside, which only matters
 * around 2100). */
static const int64_t never_refs[] = {1704067200, 1746057600, 1788220800};

/* ---------------------------------------------------------------- Next */

typedef struct wt { /* a Go time.Time in the schedule's zone */
    const cw_tz *z;
    int64_t sec;
    cw_civil c;
} wt;

static void wt_set(wt *t, int64_t sec)
{
    t->sec = sec;
    cw_tz_civil(t->z, sec, &t->c);
}

static int bit(uint64_t bits, int i)
{
    return (int)((bits >> i) & 1);
}

static int day_matches(const cw_cron *s, const cw_civil *c)
{
    int dom = bit(s->dom, c->day), dow = bit(s->dow, c->wday);
    if ((s->dom & CW_CRON_STAR) || (s->dow & CW_CRON_STAR)) return dom && dow;
    return dom || dow;
}

static int64_t floor_mod60(int64_t v)
{
    int64_t r = v % 60;
    return r < 0 ? r + 60 : r;
}

static int64_t spec_next(const cw_cron *s, int64_t from)
{
    wt t = {.z = s->zone};
    wt_set(&t, from + 1); /* the upcoming second */
    int added = 0;
    int64_t year_limit = t.c.year + 5;
    long budget = CW_CRON_STEP_BUDGET;

wrap:
    if (t.c.year > year_limit) return 0;

    while (!bit(s->month, t.c.month)) {
        if (--budget < 0) return 0;
        if (!added) {
            added = 1;
            wt_set(&t, cw_tz_date(t.z, t.c.year, t.c.month, 1, 0, 0, 0));
        }
        /* AddDate(0, 1, 0) */
        wt_set(&t, cw_tz_date(t.z, t.c.year, t.c.month + 1, t.c.day, t.c.hour, t.c.min, t.c.sec));
        if (t.c.month == 1) goto wrap;
    }

    while (!day_matches(s, &t.c)) {
        if (--budget < 0) return 0;
        if (!added) {
            added = 1;
            wt_set(&t, cw_tz_date(t.z, t.c.year, t.c.month, t.c.day, 0, 0, 0));
        }
        /* AddDate(0, 0, 1), then robfig's correction when midnight moved (DST). */
        wt_set(&t, cw_tz_date(t.z, t.c.year, t.c.month, t.c.day + 1, t.c.hour, t.c.min, t.c.sec));
        if (t.c.hour != 0) {
            if (t.c.hour > 12)
                wt_set(&t, t.sec + (int64_t)(24 - t.c.hour) * 3600);
            else
                wt_set(&t, t.sec - (int64_t)t.c.hour * 3600);
        }
        if (t.c.day == 1) goto wrap;
    }

    while (!bit(s->hour, t.c.hour)) {
        if (--budget < 0) return 0;
        if (!added) {
            added = 1;
            wt_set(&t, cw_tz_date(t.z, t.c.year, t.c.month, t.c.day, t.c.hour, 0, 0));
        }
        wt_set(&t, t.sec + 3600);
        if (t.c.hour == 0) goto wrap;
    }

    while (!bit(s->minute, t.c.min)) {
        if (--budget < 0) return 0;
        if (!added) {
            added = 1;
            wt_set(&t, t.sec - floor_mod60(t.sec)); /* Truncate(time.Minute): absolute */
        }
        wt_set(&t, t.sec + 60);
        if (t.c.min == 0) goto wrap;
    }

    while (!bit(s->second, t.c.sec)) {
        if (--budget < 0) return 0;
        added = 1; /* Truncate(time.Second) changes nothing on whole seconds */
        wt_set(&t, t.sec + 1);
        if (t.c.sec == 0) goto wrap;
    }
    return t.sec;
}

int64_t cw_cron_next(const cw_cron *c, int64_t t)
{
    if (c->every > 0) return t > INT64_MAX - c->every ? 0 : t + c->every;
    if (t < -CW_CRON_T_LIMIT || t > CW_CRON_T_LIMIT) return 0;
    return spec_next(c, t);
}

int cw_cron_is_every(const cw_cron *c)
{
    return c->every > 0;
}

/* ---------------------------------------------------------------- parsing */

void cw_cron_free(cw_cron *c)
{
    if (!c) return;
    cw_tz_release(c->zone);
    cw_free(c);
}

static uint64_t all_bits(const cw_cron_bounds *r)
{
    uint64_t b = 0;
    for (uint64_t i = r->min; i <= r->max; i++)
        b |= UINT64_C(1) << i;
    return b | CW_CRON_STAR;
}

static int is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* robfig's parseDescriptor. */
static int parse_descriptor(cw_cron *c, const char *s, size_t n, cw_buf *msg)
{
    c->second = c->minute = c->hour = 1; /* bit 0 */
    c->dom = all_bits(&cw_cron_doms);
    c->month = all_bits(&cw_cron_months);
    c->dow = all_bits(&cw_cron_dows);
    if (is(s, n, "@yearly") || is(s, n, "@annually")) {
        c->dom = c->month = 1 << 1;
    } else if (is(s, n, "@monthly")) {
        c->dom = 1 << 1;
    } else if (is(s, n, "@weekly")) {
        c->dow = 1;
    } else if (is(s, n, "@daily") || is(s, n, "@midnight")) {
        /* midnight every day */
    } else if (is(s, n, "@hourly")) {
        c->hour = all_bits(&cw_cron_hours);
    } else if (n >= 7 && memcmp(s, "@every ", 7) == 0) {
        int64_t ns;
        cw_buf why;
        cw_buf_init(&why);
        if (cw_cron_parse_duration(s + 7, n - 7, &ns, &why)) {
            cw_buf_puts(msg, "failed to parse duration ");
            cw_buf_append(msg, s, n);
            cw_buf_puts(msg, ": ");
            cw_buf_append(msg, why.data, why.len);
            cw_buf_free(&why);
            return -1;
        }
        cw_buf_free(&why);
        const int64_t second = 1000000000;
        if (ns < second) /* robfig's Every: at least a second, whole seconds */
            ns = second;
        c->every = (ns - ns % second) / second;
    } else {
        cw_buf_puts(msg, "unrecognized descriptor: ");
        cw_buf_append(msg, s, n);
        return -1;
    }
    return 0;
}

static int parse_fields(cw_cron *c, const char *s, size_t n, cw_buf *msg)
{
    cw_cron_span f[7];
    size_t count = cw_cron_fields(s, n, f, 7);
    if (count < 5 || count > 6) {
        cw_buf_printf(msg, "expected 5 to 6 fields, found %zu: [", count);
        size_t i = 0, k = 0;
        while (i < n) { /* the fields joined by spaces, as Go prints a []string */
            size_t sp = cw_cron_space_at(s + i, n - i);
            if (sp) {
                i += sp;
                continue;
            }
            if (k++) cw_buf_putc(msg, ' ');
            while (i < n && cw_cron_space_at(s + i, n - i) == 0)
                cw_buf_putc(msg, s[i++]);
        }
        cw_buf_putc(msg, ']');
        return -1;
    }
    if (count == 5) { /* the optional seconds field defaults to 0 */
        memmove(f + 1, f, 5 * sizeof f[0]);
        f[0].p = "0";
        f[0].n = 1;
    }
    const cw_cron_bounds *b[6] = {&cw_cron_seconds, &cw_cron_minutes, &cw_cron_hours,
                                  &cw_cron_doms,    &cw_cron_months,  &cw_cron_dows};
    uint64_t *dst[6] = {&c->second, &c->minute, &c->hour, &c->dom, &c->month, &c->dow};
    for (int i = 0; i < 6; i++)
        if (cw_cron_field(f[i].p, f[i].n, b[i], dst[i], msg)) return -1;
    return 0;
}

static int never_fires(const cw_cron *c)
{
    if (c->every > 0) return 0;
    if (!(c->second & ~CW_CRON_STAR) || !(c->minute & ~CW_CRON_STAR) ||
        !(c->hour & ~CW_CRON_STAR) || !(c->month & ~CW_CRON_STAR))
        return 1;
    for (size_t i = 0; i < sizeof never_refs / sizeof never_refs[0]; i++)
        if (spec_next(c, never_refs[i]) != 0) return 0;
    return 1;
}

int cw_cron_parse(const char *spec, cw_cron **out, cwork_error *err)
{
    if (!spec || !out) return cw_error(err, CWORK_EINVAL, "cron: NULL argument");
    size_t n = strlen(spec);
    if (n == 0) return cw_error(err, CWORK_EINVAL, "empty spec string");
    cw_cron *c = cw_calloc(1, sizeof *c);
    if (!c) return cw_error(err, CWORK_ENOMEM, "out of memory");
    c->zone = cw_tz_local();

    const char *s = spec;
    int rc = 0;
    cw_buf msg;
    cw_buf_init(&msg);
    if (strncmp(s, "TZ=", 3) == 0 || strncmp(s, "CRON_TZ=", 8) == 0) {
        const char *eq = strchr(s, '=') + 1;
        const char *sp = strchr(s, ' ');
        if (!sp) { /* Go's robfig panics here (slice bounds) */
            cw_free(c);
            return cw_error(err, CWORK_EINVAL,
                            "provided bad location %s: no schedule after the time zone", eq);
        }
        cwork_error e = {0};
        const cw_tz *z;
        if (cw_tz_load(eq, (size_t)(sp - eq), &z, &e) != 0) {
            cw_free(c);
            if (e.code == CWORK_ENOMEM) return cw_error(err, CWORK_ENOMEM, "out of memory");
            return cw_error(err, CWORK_EINVAL, "provided bad location %.*s: %s", (int)(sp - eq), eq,
                            e.message);
        }
        c->zone = z;
        n -= (size_t)(sp - s);
        s = sp;
        cw_cron_trim(&s, &n);
    }
    if (n > 0 && s[0] == '@')
        rc = parse_descriptor(c, s, n, &msg);
    else
        rc = parse_fields(c, s, n, &msg);
    if (rc == 0 && never_fires(c)) {
        cw_buf_puts(&msg, "spec never fires (no matching time within five years): ");
        cw_buf_puts(&msg, spec);
        rc = -1;
    }
    if (rc != 0) {
        rc = msg.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                     : cw_error(err, CWORK_EINVAL, "%s", msg.data ? msg.data : "");
        cw_buf_free(&msg);
        cw_cron_free(c);
        return rc;
    }
    cw_buf_free(&msg);
    *out = c;
    return 0;
}
