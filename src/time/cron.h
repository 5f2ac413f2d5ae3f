/* Cron schedules with the semantics of robfig/cron v3 as the Go library configures it
 * (PROTOCOL §10.1: optional seconds field, 5 or 6 fields, descriptors, @every, TZ=/CRON_TZ=,
 * names, ranges, steps, lists, '?', the day-of-month/day-of-week rule), and next-fire
 * times identical to robfig's — across daylight-saving changes, in the local zone and in
 * named zones read from the system tz database. Go and C pools must compute the same
 * fire times, because periodic instances de-duplicate by their bytes (PROTOCOL §10.3). */
#ifndef CWORK_CRON_H
#define CWORK_CRON_H

#include "util.h"

typedef struct cw_cron cw_cron;

/* Parses spec. Errors (CWORK_EINVAL) carry robfig's message (Go's for zones and
 * durations). A spec that can never fire (e.g. "0 0 0 30 2 *", or a field that is only
 * commas) is refused here (PROTOCOL §16.12): refused are specs whose Next finds
 * nothing within robfig's five years from each of three instants spread over four
 * years (so 29 February passes). A spec without TZ= uses the local zone (tzfile.h). */
int cw_cron_parse(const char *spec, cw_cron **out, cwork_error *err);
void cw_cron_free(cw_cron *c);

/* The first fire time strictly after t (Unix seconds), as robfig's Schedule.Next; 0 when
 * there is none within five years (robfig's zero time). A fire time of exactly
 * 1970-01-01T00:00:00Z therefore reads as "none" too. Also 0 for t beyond ±10^12 and
 * where robfig itself would never return (its day search loops forever on the day
 * Samoa skipped, 2011-12-30 in Pacific/Apia): the search gives up after a bounded
 * number of steps. A schedule is immutable: Next may be called from any thread. */
int64_t cw_cron_next(const cw_cron *c, int64_t t);

/* True for @every schedules: their fire times depend on when they are asked, so they do
 * not de-duplicate across pools (PROTOCOL §10.3). */
int cw_cron_is_every(const cw_cron *c);

#endif
