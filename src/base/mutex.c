/* The owner token of cw_mutex (mutex.h). */
#include "mutex.h"

#ifdef CW_ASSERTS
uintptr_t cw_thread_token(void)
{
    /* One byte per thread; its address is unique among live threads and never 0. */
    static _Thread_local char anchor;
    return (uintptr_t)&anchor;
}
#else
typedef int cw_mutex_unused; /* an empty translation unit is not valid C11 */
#endif
