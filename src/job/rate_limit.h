/* Rate limits per job type (PROTOCOL §20): parsing "N/DURATION" and the canonical text
 * that <p>cwork:rate_limits holds and cycle.lua reads. */
#ifndef CWORK_RATE_LIMIT_H
#define CWORK_RATE_LIMIT_H

#include "cwork.h"

#include <stddef.h>
#include <stdint.h>

#define CW_RATE_LIMIT_MAX_COUNT 1000000000u
#define CW_RATE_LIMIT_MAX_WINDOW_MS (7 * 24 * 3600 * 1000LL) /* a week */
/* Enough for any canonical limit ("1000000000/604800000ms" and the NUL). */
#define CW_RATE_LIMIT_TEXT_MAX 32

/* The canonical text: "<count>/<n><unit>", the largest of h, m, s, ms that divides the
 * window (cycle.lua accepts exactly this shape). count and window must be in range. */
void cw_rate_limit_text(unsigned count, int64_t window_ms, char out[CW_RATE_LIMIT_TEXT_MAX]);

#endif
