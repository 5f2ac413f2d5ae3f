/* A mutex that knows its owner, so that "the caller holds mu" is checked, not only
 * written: cw_mutex_assert_held(mu) fails (CW_ASSERT, invariant.h) when the calling
 * thread does not hold mu. Without CW_ASSERTS it is a pthread mutex and nothing more:
 * the functions are inline wrappers and the owner is not stored.
 *
 * Condition variables wait through cw_cond_wait / cw_cond_timedwait, which give up the
 * ownership while the thread sleeps and take it back when it wakes.
 *
 * Errors: pthread_mutex_lock and _unlock fail only on a mutex used wrongly (not
 * initialised, unlocked by a thread that does not hold it); that is asserted.
 * Thread-safety: as pthread mutexes. */
#ifndef CWORK_MUTEX_H
#define CWORK_MUTEX_H

#include "invariant.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#ifdef CW_ASSERTS
#include <stdatomic.h>
#endif

typedef struct cw_mutex {
    pthread_mutex_t m;
#ifdef CW_ASSERTS
    _Atomic uintptr_t owner; /* cw_thread_token() of the holder, 0 when free */
#endif
} cw_mutex;

#ifdef CW_ASSERTS
/* A number that differs for every live thread (the address of a thread-local). */
uintptr_t cw_thread_token(void);
#define CW_MUTEX_TOOK(mu)                                                                          \
    atomic_store_explicit(&(mu)->owner, cw_thread_token(), memory_order_relaxed)
#define CW_MUTEX_GIVES(mu)                                                                         \
    do {                                                                                           \
        CW_ASSERT(atomic_load_explicit(&(mu)->owner, memory_order_relaxed) == cw_thread_token());  \
        atomic_store_explicit(&(mu)->owner, 0, memory_order_relaxed);                              \
    } while (0)
#else
#define CW_MUTEX_TOOK(mu) ((void)0)
#define CW_MUTEX_GIVES(mu) ((void)0)
#endif

/* 0, or pthread_mutex_init's error. */
static inline int cw_mutex_init(cw_mutex *mu)
{
#ifdef CW_ASSERTS
    atomic_init(&mu->owner, 0);
#endif
    return pthread_mutex_init(&mu->m, NULL);
}

static inline void cw_mutex_destroy(cw_mutex *mu)
{
#ifdef CW_ASSERTS
    CW_ASSERT(atomic_load_explicit(&mu->owner, memory_order_relaxed) == 0);
#endif
    pthread_mutex_destroy(&mu->m);
}

static inline void cw_mutex_lock(cw_mutex *mu)
{
#ifdef CW_ASSERTS
    /* Taking a lock this thread holds would deadlock: fail naming the line instead. */
    CW_ASSERT(atomic_load_explicit(&mu->owner, memory_order_relaxed) != cw_thread_token());
#endif
    int rc = pthread_mutex_lock(&mu->m);
    CW_ASSERT(rc == 0);
    (void)rc;
    CW_MUTEX_TOOK(mu);
}

static inline void cw_mutex_unlock(cw_mutex *mu)
{
    CW_MUTEX_GIVES(mu);
    int rc = pthread_mutex_unlock(&mu->m);
    CW_ASSERT(rc == 0);
    (void)rc;
}

/* cw_mutex_assert_held(mu) fails (with CW_ASSERTS) unless the calling thread holds mu;
 * cw_mutex_assert_not_held(mu) when it does (for "the caller holds no X", where X is
 * taken further down or comes first in the lock order). Macros, so that a failure names
 * the caller's file, line and function. */
#ifdef CW_ASSERTS
static inline int cw_mutex_held(cw_mutex *mu)
{
    return atomic_load_explicit(&mu->owner, memory_order_relaxed) == cw_thread_token();
}
#define cw_mutex_assert_held(mu) CW_ASSERT(cw_mutex_held(mu))
#define cw_mutex_assert_not_held(mu) CW_ASSERT(!cw_mutex_held(mu))
#else
#define cw_mutex_assert_held(mu) ((void)sizeof(mu))
#define cw_mutex_assert_not_held(mu) ((void)sizeof(mu))
#endif

/* pthread_cond_wait on mu, which the caller holds. */
static inline void cw_cond_wait(pthread_cond_t *cv, cw_mutex *mu)
{
    CW_MUTEX_GIVES(mu);
    pthread_cond_wait(cv, &mu->m);
    CW_MUTEX_TOOK(mu);
}

/* pthread_cond_timedwait on mu, which the caller holds: 0 or ETIMEDOUT (or its other
 * errors). */
static inline int cw_cond_timedwait(pthread_cond_t *cv, cw_mutex *mu, const struct timespec *at)
{
    CW_MUTEX_GIVES(mu);
    int rc = pthread_cond_timedwait(cv, &mu->m, at);
    CW_MUTEX_TOOK(mu);
    return rc;
}

#endif
