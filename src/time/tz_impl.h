/* Internal to the time-zone code: the zone object shared by tz_rules.c (the arithmetic:
 * calendar, POSIX TZ rules, lookups, time.Date) and tzfile.c (loading: TZif, files,
 * $TZ). Nothing else includes this. */
#ifndef CWORK_TZ_IMPL_H
#define CWORK_TZ_IMPL_H

#include "tzfile.h"

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

/* Parses a TZif footer's POSIX TZ string as Go's tzset does (e->ok = 0 when it would
 * refuse it). */
void cw_tz_parse_extend(const char *str, size_t len, tz_extend *e);
/* The offset the POSIX rule gives at sec, and the interval around it (Go's tzset). */
int32_t cw_tz_extend_eval(const tz_extend *e, int64_t last_tx, int64_t sec, int64_t *start,
                          int64_t *end);

#endif
