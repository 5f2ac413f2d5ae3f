/* Checked invariants (src/base/invariant.h, mutex.h): in a build with CW_ASSERTS a
 * broken invariant aborts with its condition named, and a mutex knows its owner; in a
 * build without, CW_ASSERT evaluates nothing. */
#include "invariant_testutil.h"
#include "mutex.h"

#include <pthread.h>
#include <stdio.h>

static void assert_false(void *arg)
{
    int *calls = arg;
    CW_ASSERT(++*calls == 0);
}

#ifdef CW_ASSERTS
static void held_by_nobody(void *arg)
{
    cw_mutex *mu = arg;
    cw_mutex_assert_held(mu);
}

static void locked_twice(void *arg)
{
    cw_mutex *mu = arg;
    cw_mutex_lock(mu);
    cw_mutex_lock(mu); /* would deadlock: fails instead */
}

static void *lock_and_keep(void *arg)
{
    cw_mutex_lock(arg);
    return NULL;
}

static void held_by_another_thread(void *arg)
{
    cw_mutex *mu = arg;
    pthread_t t;
    pthread_create(&t, NULL, lock_and_keep, mu);
    pthread_join(t, NULL);
    cw_mutex_assert_held(mu);
}
#endif

static void held_then_released(void *arg)
{
    cw_mutex *mu = arg;
    cw_mutex_lock(mu);
    cw_mutex_assert_held(mu);
    cw_mutex_unlock(mu);
}

static void broken_invariant_aborts(void)
{
    char err[512];
    int calls = 0;
    int status = run_child(assert_false, &calls, err, sizeof err);
#ifdef CW_ASSERTS
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    CHECK(strstr(err, "invariant failed: ++*calls == 0") != NULL);
    CHECK(strstr(err, "test_invariant.c") != NULL);
#else
    /* Not evaluated: the child's increment never happened, and it exited normally. */
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CW_ASSERT(++calls == 0);
    CHECK(calls == 0);
#endif
}

static void mutex_knows_its_owner(void)
{
    char err[512];
    cw_mutex mu;
    CHECK(cw_mutex_init(&mu) == 0);
    int status = run_child(held_then_released, &mu, err, sizeof err);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
#ifdef CW_ASSERTS
    status = run_child(held_by_nobody, &mu, err, sizeof err);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    CHECK(strstr(err, "invariant failed") != NULL);
    CHECK(strstr(err, "held_by_nobody") != NULL); /* the caller, not mutex.h */
    status = run_child(held_by_another_thread, &mu, err, sizeof err);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    status = run_child(locked_twice, &mu, err, sizeof err);
    CHECK_ABORTED(status, err, "cw_mutex_lock"); /* (inline: names itself) */
#endif
    cw_mutex_destroy(&mu);
}

static void cond_wait_hands_ownership_back(void)
{
    cw_mutex mu;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    CHECK(cw_mutex_init(&mu) == 0);
    cw_mutex_lock(&mu);
    struct timespec at;
    clock_gettime(CLOCK_REALTIME, &at);
    CHECK(cw_cond_timedwait(&cv, &mu, &at) != 0); /* already past: times out */
    cw_mutex_assert_held(&mu);
    cw_mutex_unlock(&mu);
    cw_mutex_destroy(&mu);
    pthread_cond_destroy(&cv);
}

int main(void)
{
    RUN(broken_invariant_aborts);
    RUN(mutex_knows_its_owner);
    RUN(cond_wait_hands_ownership_back);
    return tl_finish();
}
