/* The arguments of one cycle script call (src/scripts/cycle.lua): the dispatcher's
 * round trip, built here and nowhere else — the dispatcher and the script's tests both
 * use it, so a change of layout is made once.
 *
 * KEYS: six kinds of per-type keys, grouped by kind (n types each, in registration
 * order), then the retry and dead sets and the cancelled hash. ARGV: pool id, single-job switch,
 * the draws, the width of a type index in the draws, and the commit's arguments (see commit.c). */
#ifndef CWORK_CYCLE_CALL_H
#define CWORK_CYCLE_CALL_H

#include "argv.h"
#include "util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kinds of per-type keys, in the order the script groups them: the first three
 * are read with one MGET over a slice of KEYS. */
typedef enum cw_cycle_key {
    CW_CYCLE_PAUSED,
    CW_CYCLE_LOCK,
    CW_CYCLE_MAX_CONCURRENCY,
    CW_CYCLE_QUEUE,
    CW_CYCLE_INPROGRESS, /* this pool's in-progress list of the type */
    CW_CYCLE_LOCK_INFO,
    CW_CYCLE_KEY_KINDS,
    /* Asked for rate-limited types only (PROTOCOL §20), after the kinds above: */
    CW_CYCLE_NAME,      /* the job name (an argument: the field of <p>cwork:rate_limits) */
    CW_CYCLE_RATE_LIMIT /* <p>cwork:rate_limit:<name>, the type's rate limit state */
} cw_cycle_key;

/* Where the keys come from: key(ud, type, kind, &len) for type 0..ntypes-1 (borrowed
 * until the call is sent), the namespace's retry and dead sets, and its hash of
 * cancelled jobs (PROTOCOL §21). */
typedef struct cw_cycle_keys {
    size_t ntypes;
    const char *(*key)(const void *ud, size_t type, cw_cycle_key kind, size_t *len);
    const void *ud;
    const char *retry, *dead;
    size_t retry_len, dead_len;
    const char *rate_limits; /* <p>cwork:rate_limits: needed only with limited types */
    size_t rate_limits_len;
    const char *cancelled;
    size_t cancelled_len;
} cw_cycle_keys;

/* One call being built. args holds KEYS then ARGV (nkeys, nargs); every argument is
 * borrowed from the keys, the commit arguments or the call's draws, valid until the
 * next reset or cw_cycle_call_clear. */
typedef struct cw_cycle_call {
    size_t ntypes;
    int width; /* bytes per type index in the draws: 1, or 2 past 255 types */
    cw_buf draws;
    cw_buf width_arg; /* ARGV[4]: the width, with the rate-limited types if any */
    cw_argv args;
    int nkeys, nargs;
    /* Results and kept successes (PROTOCOL §22): extra KEYS after the dead set and an
     * ARGV section after the commit's; ARGV[2] then carries their number of keys. */
    const cw_argv *extra_keys, *extra_args;
    size_t batch_nargs; /* the commit's last arguments that are its batch section */
    char mode[48];
} cw_cycle_call;

void cw_cycle_call_init(cw_cycle_call *c, size_t ntypes);
/* Appends one draw: order[0..ntypes-1], 0-based type indices in the order the priority
 * sampler drew them. */
void cw_cycle_call_add_draw(cw_cycle_call *c, const size_t *order);
/* Lays out KEYS and ARGV with the draws added so far and the commit's arguments
 * (borrowed; NULL or empty: nothing to commit). 0 or CWORK_ENOMEM. May be called again
 * after cw_cycle_call_reset for the next call. */
int cw_cycle_call_finish(cw_cycle_call *c, const cw_cycle_keys *keys, const char *pool_id,
                         bool single, const cw_argv *commit);
/* The same, for a call where the types limited[0..nlimited-1] (0-based, ascending) are
 * rate-limited: their state keys and names are added (PROTOCOL §20). now_us is the
 * time the script judges the limits at, in microseconds of Redis' clock; < 0 for
 * Redis' own TIME (what pools do; tests inject a time). nlimited 0 is the plain call. */
int cw_cycle_call_finish_limited(cw_cycle_call *c, const cw_cycle_keys *keys, const char *pool_id,
                                 bool single, const cw_argv *commit, const size_t *limited,
                                 size_t nlimited, int64_t now_us);
/* Adds extra keys and arguments (borrowed; both NULL or empty for none) to the next
 * cw_cycle_call_finish: a commit's results and retention entries (commit_results.c). */
void cw_cycle_call_set_extras(cw_cycle_call *c, const cw_argv *keys, const cw_argv *args);
/* Says that the last nargs arguments of the next call's commit are its batch section
 * (PROTOCOL §23; 0: none), so that the script finds the sections after it. */
void cw_cycle_call_set_batch(cw_cycle_call *c, size_t nargs);
/* Forgets the draws and the layout, keeping buffers for the next call. */
void cw_cycle_call_reset(cw_cycle_call *c);
void cw_cycle_call_clear(cw_cycle_call *c);

#endif
