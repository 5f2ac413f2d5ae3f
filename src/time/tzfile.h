/* Time zones as Go's time package has them: zones read from the system tz database
 * (TZif files, versions 1 to 3, with the POSIX TZ rule of the footer for instants after
 * the last transition), the process's local zone chosen from $TZ like Go's time.Local,
 * and the conversions Go's time.Time performs: an instant to wall-clock fields, and
 * wall-clock fields to an instant with time.Date's normalisation and its choice of
 * offset for wall times that fall in a gap or an overlap. cron.c relies on every one of
 * these agreeing with Go to the second (PROTOCOL §10.1).
 *
 * Process-wide state: the local zone and $ZONEINFO are read once, on first use, under
 * pthread_once (as Go reads them once); that zone then lives until the process exits.
 * Every other zone is an immutable object owned by whoever loaded it. */
#ifndef CWORK_TZFILE_H
#define CWORK_TZFILE_H

#include "util.h"

typedef struct cw_tz cw_tz;

/* Go's time.LoadLocation(name) (name is len bytes, not necessarily NUL-terminated):
 * "" and "UTC" give UTC, "Local" the local zone; names containing ".." or starting with
 * '/' or '\' are refused; otherwise the TZif file name is read from $ZONEINFO (when it
 * names a directory), then /usr/share/zoneinfo, /usr/share/lib/zoneinfo and
 * /usr/lib/locale/TZ. Errors are CWORK_EINVAL with Go's text ("unknown time zone X",
 * "malformed time zone information", "time: invalid location name", "is a
 * directory", …). Release *out with cw_tz_release. */
int cw_tz_load(const char *name, size_t len, const cw_tz **out, cwork_error *err);

/* Go's time.LoadLocationFromTZData: a zone from the bytes of a TZif file. */
int cw_tz_from_tzif(const char *name, const unsigned char *data, size_t len, const cw_tz **out,
                    cwork_error *err);

/* Frees a loaded zone; the UTC and local zones (and NULL) are ignored. */
void cw_tz_release(const cw_tz *z);

const cw_tz *cw_tz_utc(void);
/* time.Local: $TZ unset → /etc/localtime; TZ="" or "UTC" → UTC; TZ="Name" or ":Name"
 * → /usr/share/zoneinfo/Name (and the other system directories); TZ="/path" or
 * ":/path" → that file; anything unreadable → UTC. Read once. */
const cw_tz *cw_tz_local(void);
/* Whether z is the local zone (a spec without TZ= or with TZ=Local). */
int cw_tz_is_local(const cw_tz *z);
/* The name it was loaded with ("UTC", "Local", "Europe/Berlin", …); borrowed. */
const char *cw_tz_name(const cw_tz *z);

/* Go's Location.lookup: the offset (seconds east of UTC) in force at the instant sec,
 * and the interval [*start, *end) that Go reports around it (either may be NULL). */
int32_t cw_tz_lookup(const cw_tz *z, int64_t sec, int64_t *start, int64_t *end);

/* Wall-clock fields of an instant in a zone (time.Time's Date, Clock, Weekday). */
typedef struct cw_civil {
    int64_t year;
    int month; /* 1..12 */
    int day;   /* 1..31 */
    int hour;  /* 0..23 */
    int min;   /* 0..59 */
    int sec;   /* 0..59 */
    int wday;  /* 0 = Sunday */
    int32_t offset;
} cw_civil;
void cw_tz_civil(const cw_tz *z, int64_t sec, cw_civil *out);

/* Go's time.Date(year, month, day, hour, min, sec, 0, z) as Unix seconds: any field
 * may be out of its range and is normalised (month into year, the rest linearly into
 * days); a wall time that does not exist or exists twice gets the offset Go picks
 * (the offset in force at the wall time read as UTC, corrected once if that offset
 * puts the instant outside the zone period it came from). Fields must be within about
 * ±10^12 of sensible values (no overflow checks). */
int64_t cw_tz_date(const cw_tz *z, int64_t year, int64_t month, int64_t day, int64_t hour,
                   int64_t min, int64_t sec);

/* Writes sec as RFC 3339 in UTC ("2023-11-14T22:13:20Z") into out (NUL-terminated),
 * for log fields that carry a time. */
void cw_tz_format_utc(int64_t sec, char out[40]);

/* Proleptic Gregorian helpers (days since 1970-01-01). */
int64_t cw_days_from_civil(int64_t y, int64_t m, int64_t d);
void cw_civil_from_days(int64_t days, int64_t *y, int *m, int *d);

#endif
