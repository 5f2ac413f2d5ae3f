/* The periodic enqueuer (PROTOCOL §10.2, §10.3): every 120–149 s, unless another pool did it
 * within the last 120 s (<p>last_periodic_enqueue), each registered periodic job's fire
 * times in (now, now + 240 s) are added to <p>scheduled as instances byte-identical to
 * Go's, so that Go and C pools scheduling the same job write one member. */
#ifndef CWORK_PERIODIC_H
#define CWORK_PERIODIC_H

#include "cron.h"
#include "keys.h"
#include "redis.h"

#define CW_PERIODIC_HORIZON 240      /* seconds scheduled ahead */
#define CW_PERIODIC_WINDOW 120       /* a pass within this many seconds suffices */
#define CW_PERIODIC_INTERVAL_MIN 120 /* seconds between checks: 120 + rand(0..29) */
#define CW_PERIODIC_INTERVAL_JITTER 30

typedef struct cw_periodic cw_periodic;

cw_periodic *cw_periodic_new(void);
void cw_periodic_free(cw_periodic *p);
/* Which flavour's instances the pass writes (default CWORK_GO_FORK). Before the first
 * cw_periodic_run. */
void cw_periodic_set_flavor(cw_periodic *p, cwork_go_flavor flavor);
/* How the instances spell U+0008/U+000C (cwork_go_json; default CWORK_GO_JSON_122).
 * Before the first cw_periodic_run. */
void cw_periodic_set_go_json(cw_periodic *p, cwork_go_json spelling);

/* Registers (spec, name); the spec text is kept exactly (it is part of the job id).
 * CWORK_EINVAL for a spec that does not parse or never fires. */
int cw_periodic_add(cw_periodic *p, const char *spec, const char *name, cwork_error *err);
size_t cw_periodic_count(const cw_periodic *p);
/* The i-th registration (borrowed). */
const char *cw_periodic_name(const cw_periodic *p, size_t i);
const char *cw_periodic_spec(const cw_periodic *p, size_t i);
const cw_cron *cw_periodic_schedule(const cw_periodic *p, size_t i);

/* Appends the instance of PROTOCOL §10.3: name, id "periodic:<name>:<spec>:<fire>", t = fire,
 * args null, d = the following fire time; Go's encoding. next == 0 (no following fire
 * time within robfig's five years) is written as Go writes the zero time's Unix
 * seconds, -62135596800. */
void cw_periodic_instance(cw_buf *out, const char *name, const char *spec, int64_t fire,
                          int64_t next);
/* The instance in a flavour's bytes: the fork's as cw_periodic_instance; upstream's
 * without `d` ({"name":…,"id":…,"t":fire,"args":null}; next is not used). */
void cw_periodic_instance_as(cw_buf *out, cwork_go_flavor flavor, const char *name,
                             const char *spec, int64_t fire, int64_t next);

/* One check at now: GET <p>last_periodic_enqueue; when absent, unreadable or older than
 * now − 120, ZADD every instance with fire time in (now, now + 240) and SET the key to
 * now. Does nothing (not even the GET) when no periodic job is registered (PROTOCOL
 * §16.12). *scheduled receives the number of instances written. Errors are returned
 * and leave last_periodic_enqueue unchanged.
 *
 * Round trips: first cw_periodic_publish (on every call, window or not, so that every
 * pool's jobs are published, PROTOCOL §14.7), the GET, then one script call that ZADDs
 * every member (skipped when the window holds none), then the SET — the SET only once
 * the script succeeded. A fire time whose instance is already there in the other
 * flavour's bytes gets no second member (it would run twice) and makes the pool warn
 * once (cw_go_flavor_warn_mixed); such fire times do not count in *scheduled. Logs as
 * Go does (PROTOCOL
 * §13): "periodic_enqueuer.loop" (debug: enqueue_time, should_enqueue) on every call
 * that reaches Redis, "periodic_enqueuer.enqueue" (debug) per instance,
 * "periodic_enqueuer.should_enqueue" (error) when the GET fails or its value is no
 * integer, "periodic_enqueuer.loop.enqueue" (error) when the pass fails — so callers
 * need not log the returned error again. Times in log fields are RFC 3339 UTC. */
/* How long the published schedules stay (seconds): a few passes of every pool. */
#define CW_PERIODIC_PUBLISHED_TTL 600

/* Publishes the registered periodic jobs in <p>cwork:periodic (see keys.h) for
 * dashboards: one HSET of every job with its next fire time after now and seen_at = now,
 * and EXPIRE, pipelined on c. Best effort: a failure (a key of another type, Redis
 * failing) is logged as periodic_enqueuer.publish and changes nothing else. */
void cw_periodic_publish(cw_periodic *p, cw_conn *c, const cw_keys *keys, int64_t now);

int cw_periodic_run(cw_periodic *p, cwork_redis *redis, const cw_keys *keys, int64_t now,
                    size_t *scheduled, cwork_error *err);

#endif
