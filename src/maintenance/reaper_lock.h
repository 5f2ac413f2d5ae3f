/* The reaper lock, <p>reaper_lock: one reaper cycle at a time across every cwork and Go
 * pool of a namespace (PROTOCOL §9.2).
 *
 * Go takes it with SET NX EX <reap period> (5 min) and a random token. A pool killed
 * in the middle of its cycle leaves that lock for the whole period, and recovery of a
 * crashed pool's jobs stalls behind it. cwork takes it as a short lease instead:
 *   SET <p>reaper_lock "cwork:<pool id>:<token>" NX PX CW_REAPER_LEASE_MS
 * renewed (compare-and-PEXPIRE with our value) at least every CW_REAPER_RENEW_MS while
 * the cycle runs, so that a killed cwork reaper's lock is gone CW_REAPER_LEASE_MS after
 * its death at the latest: its own pool's heartbeat goes stale later than that, so its
 * jobs are not delayed at all, and another crashed pool's by at most the lease and
 * one stale-heartbeat check. A renewal that finds the lock gone or another's stops the
 * cycle before its next step (the steps are single scripts that a second reaper can
 * repeat without harm). Go reapers only ever SET NX it and delete it by their own
 * token, so they respect our lease as we respect their lock, for its whole TTL: a
 * value that is not ours is never touched.
 *
 * A cycle that finds the lock held logs it once per blocking: at info level when a
 * lock is first seen, at warn level once if the same lock still blocks a later
 * attempt (a stuck lock: dead pools wait), then nothing more for that lock. */
#ifndef CWORK_REAPER_LOCK_H
#define CWORK_REAPER_LOCK_H

#include "keys.h"
#include "redis.h"

#define CW_REAPER_LEASE_MS 5000 /* a cwork reaper lock lives this long unless renewed */
#define CW_REAPER_RENEW_MS 1000 /* renewed when this much has passed since the last time */
#define CW_REAPER_POOL_ID_MAX 64

typedef struct cw_reaper_lock {
    cw_buf key;                              /* <p>reaper_lock */
    char pool_id[CW_REAPER_POOL_ID_MAX + 1]; /* named in our value; may be empty */
    char value[CW_REAPER_POOL_ID_MAX + 40];  /* while held: cwork:<pool id>:<token> */
    int held, lost;
    int64_t renewed_ms; /* monotonic */
    char *blocked_by;   /* the value that blocked the last attempt */
    int blocked_warned;
} cw_reaper_lock;

/* keys is only read here. Returns 0 or CWORK_ENOMEM. */
int cw_reaper_lock_init(cw_reaper_lock *l, const cw_keys *keys);
void cw_reaper_lock_clear(cw_reaper_lock *l);

/* The pool id named in the lock's value (copied; at most CW_REAPER_POOL_ID_MAX bytes,
 * no ':'), else CWORK_EINVAL. */
int cw_reaper_lock_set_pool(cw_reaper_lock *l, const char *pool_id);

/* Tries to take the lock: *acquired = 1 when taken (then keep and release it),
 * 0 when another holds it (logged as above). The error is Redis'. */
int cw_reaper_lock_acquire(cw_reaper_lock *l, cw_conn *c, int *acquired, cwork_error *err);

/* Before each step of a cycle: renews the lease when CW_REAPER_RENEW_MS have passed
 * since the last renewal. CWORK_ETIMEOUT once the lock was found gone or another's
 * (and from then on); a Redis error otherwise. */
int cw_reaper_lock_keep(cw_reaper_lock *l, cw_conn *c, cwork_error *err);

/* Compare-and-delete (PROTOCOL §9.2 item 5): deletes the lock only if it still holds our
 * value. Forgets it either way. */
int cw_reaper_lock_release(cw_reaper_lock *l, cw_conn *c, cwork_error *err);

/* Who holds a lock of this value: 1 for a cwork lease, with its pool id (possibly
 * empty) copied into pool (size bytes, truncated); 0 for anything else (a Go reaper's
 * token, cwork before leases, a value someone wrote). Pure. */
int cw_reaper_lock_holder(const char *value, size_t len, char *pool, size_t size);

#endif
