/* The failure path of CW_ASSERT (invariant.h). */
#include "invariant.h"

#ifdef CW_ASSERTS
#include <stdio.h>
#include <stdlib.h>

void cw_invariant_failed(const char *cond, const char *file, int line, const char *func)
{
    /* Not through the logger: the process is in a state its own code says cannot be,
     * and the user's log callback may take a lock this thread already holds. */
    fprintf(stderr, "cwork: invariant failed: %s (%s:%d, %s)\n", cond, file, line, func);
    abort();
}
#else
/* An empty translation unit is not valid C11. */
typedef int cw_invariant_unused;
#endif
