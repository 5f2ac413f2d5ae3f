/* Checked invariants: CW_ASSERT(cond) aborts with the condition, file and line when cond
 * is false, in builds with CW_ASSERTS defined (debug and sanitizer builds: the top-level
 * CMakeLists.txt's CWORK_ASSERTS); elsewhere it compiles to nothing and does not evaluate
 * cond, so a release build pays nothing. Use it for what the code relies on and a caller
 * cannot cause by bad input (which gets an error instead): a lock that must be held, a
 * count that must fit its field, an index within its table, an ownership hand-off.
 *
 * Thread-safety: CW_ASSERT may be used from any thread. */
#ifndef CWORK_INVARIANT_H
#define CWORK_INVARIANT_H

#ifdef CW_ASSERTS
/* Writes "cwork: invariant failed: COND (FILE:LINE, FUNC)" to stderr and aborts. */
_Noreturn void cw_invariant_failed(const char *cond, const char *file, int line, const char *func);
#define CW_ASSERT(cond)                                                                            \
    ((cond) ? (void)0 : cw_invariant_failed(#cond, __FILE__, __LINE__, __func__))
#else
/* sizeof keeps cond compiled (names checked, no unused-variable warnings) but never
 * evaluated. */
#define CW_ASSERT(cond) ((void)sizeof((cond) ? 1 : 0))
#endif

#endif
