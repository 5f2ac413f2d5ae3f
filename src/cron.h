/* Cron schedules with the semantics of robfig/cron v3 as the Go library configures it
 * (SPEC §9.1: optional seconds field, 5 or 6 fields, descriptors, @every, TZ=/CRON_TZ=,
 * names, ranges, steps, lists, '?', the day-of-month/day-of-week rule), and next-fire
 * times identical to robfig's — across daylight-saving changes, in the local zone and in
 * named zones read from the system tz database. Go and C pools must compute the same
 * fire times, because periodic instances de-duplicate by their bytes (SPEC §9.3). */
#ifndef CWORK_CRON_H
#define CWORK_CRON_H

#include "util.h"

typedef struct cw_cron cw_cron;

/* Parses spec. Errors (CWORK_EINVAL) carry a message like robfig's. A spec that can
 * never fire (e.g. "0 0 0 30 2 *") is refused here (SPEC §15 item 20). */
int cw_cron_parse(const char *spec, cw_cron **out, cwork_error *err);
void cw_cron_free(cw_cron *c);

/* The first fire time strictly after t (Unix seconds), as robfig's Schedule.Next; 0 when
 * there is none within five years (robfig's zero time). */
int64_t cw_cron_next(const cw_cron *c, int64_t t);

/* True for @every schedules: their fire times depend on when they are asked, so they do
 * not de-duplicate across pools (SPEC §15 item 21). */
int cw_cron_is_every(const cw_cron *c);

#endif
