/* Internals shared by cron.c (schedules, Next) and cron_parse.c (the spec text). */
#ifndef CWORK_CRON_IMPL_H
#define CWORK_CRON_IMPL_H

#include "cron.h"
#include "tzfile.h"

/* robfig's "star" bit: the field was written with '*' or '?' (and no step > 1). */
#define CW_CRON_STAR (UINT64_C(1) << 63)

struct cw_cron {
    uint64_t second, minute, hour, dom, month, dow; /* bit i set: value i matches */
    int64_t every;     /* > 0: an @every schedule firing every `every` seconds */
    const cw_tz *zone; /* released with the schedule (cw_tz_release ignores builtins) */
};

typedef struct cw_cron_span {
    const char *p;
    size_t n;
} cw_cron_span;

/* A field's range and its names (names[i] is value min + i). */
typedef struct cw_cron_bounds {
    uint64_t min, max;
    const char *const *names;
    size_t nnames;
} cw_cron_bounds;

extern const cw_cron_bounds cw_cron_seconds, cw_cron_minutes, cw_cron_hours, cw_cron_doms,
    cw_cron_months, cw_cron_dows;

/* Length of the Unicode white space character (Go's unicode.IsSpace) at s, or 0. */
size_t cw_cron_space_at(const char *s, size_t n);
/* strings.TrimSpace on s[0..*n). */
void cw_cron_trim(const char **s, size_t *n);
/* strings.Fields: stores up to max fields, returns how many there are. */
size_t cw_cron_fields(const char *s, size_t n, cw_cron_span *out, size_t max);
/* robfig's getField: a comma-separated list of ranges into bits; on error -1 with
 * robfig's message appended to msg. */
int cw_cron_field(const char *s, size_t n, const cw_cron_bounds *r, uint64_t *bits, cw_buf *msg);
/* Go's time.ParseDuration into nanoseconds; on error -1 with Go's message in msg. */
int cw_cron_parse_duration(const char *s, size_t n, int64_t *ns, cw_buf *msg);

#endif
