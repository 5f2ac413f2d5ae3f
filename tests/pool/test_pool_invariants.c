/* The pool's checked invariants (CW_ASSERT, cw_mutex_assert_held): in a build with
 * CW_ASSERTS, calling a function that needs a shard's lock without it, or handing a task
 * over twice, aborts naming the function and the condition; called as intended, the
 * same functions pass. Without CW_ASSERTS, only the intended calls are made. */
#include "commit_layout.h"
#include "invariant_testutil.h"
#include "pool.h"

/* A pool with one shard of one executor, as far as these functions look. */
typedef struct world {
    cwork_pool pool;
    cw_shard shard;
    cw_executor executor;
    cw_task task;
} world;

static void world_init(world *w)
{
    memset(w, 0, sizeof *w);
    w->pool.opts.concurrency = 1;
    w->pool.executors = &w->executor;
    w->pool.shards = &w->shard;
    w->pool.nshards = 1;
    w->shard.pool = &w->pool;
    w->shard.nexecutors = 1;
    w->executor.pool = &w->pool;
    w->executor.shard = &w->shard;
    CHECK(cw_mutex_init(&w->shard.mu) == 0);
    w->task.stop_pipe[0] = w->task.stop_pipe[1] = -1;
    /* taken by the executor: its shard's lock guards it from now on */
    w->task.run.pool = &w->pool;
    w->task.run.worker = 0;
}

#ifdef CW_ASSERTS /* called only where an assertion can fire */
static void wake_unlocked(void *arg)
{
    world *w = arg;
    cw_shard_wake_executors(&w->shard, 1);
}
#endif

static void wake_locked(void *arg)
{
    world *w = arg;
    cw_mutex_lock(&w->shard.mu);
    cw_shard_wake_executors(&w->shard, 1);
    cw_shard_no_more_tasks(&w->shard);
    cw_mutex_unlock(&w->shard.mu);
}

#ifdef CW_ASSERTS /* called only where an assertion can fire */
static void stop_task_unlocked(void *arg)
{
    world *w = arg;
    cw_task_stop(&w->task, CWORK_STOP_CANCELLED);
}
#endif

static void stop_task_locked(void *arg)
{
    world *w = arg;
    cw_mutex_lock(&w->shard.mu);
    bool set = cw_task_stop(&w->task, CWORK_STOP_CANCELLED);
    cw_task_close_stop_fd(&w->task);
    cw_mutex_unlock(&w->shard.mu);
    if (!set) _exit(3);
}

#ifdef CW_ASSERTS /* called only where an assertion can fire */
static void push_twice(void *arg)
{
    world *w = arg;
    cw_mutex_lock(&w->shard.mu);
    cw_tq_push(&w->shard.ready, &w->task);
    cw_tq_push(&w->shard.ready, &w->task); /* the same task queued twice */
    cw_mutex_unlock(&w->shard.mu);
}
#endif

static void push_two(void *arg)
{
    world *w = arg;
    cw_task other = {0};
    cw_mutex_lock(&w->shard.mu);
    cw_tq_push(&w->shard.ready, &w->task);
    cw_tq_push(&w->shard.ready, &other);
    bool ok = cw_tq_pop(&w->shard.ready) == &w->task && cw_tq_pop(&w->shard.ready) == &other &&
              cw_tq_pop(&w->shard.ready) == NULL;
    cw_mutex_unlock(&w->shard.mu);
    if (!ok) _exit(3);
}

#ifdef CW_ASSERTS /* called only where an assertion can fire */
static void notify_idle_holding_shard(void *arg)
{
    world *w = arg;
    CHECK(cw_mutex_init(&w->pool.mu) == 0);
    cw_mutex_lock(&w->shard.mu);
    cw_pool_notify_idle(&w->pool); /* pool->mu comes before a shard's */
}
#endif

static void shard_lock_needed(void)
{
    world w;
    world_init(&w);
    char err[1024];
    int status = run_child(wake_locked, &w, err, sizeof err);
    CHECK_EXITED_0(status);
    status = run_child(stop_task_locked, &w, err, sizeof err);
    CHECK_EXITED_0(status);
#ifdef CW_ASSERTS
    status = run_child(wake_unlocked, &w, err, sizeof err);
    CHECK_ABORTED(status, err, "invariant failed: cw_mutex_held(&s->mu)");
    CHECK_ABORTED(status, err, "cw_shard_wake_executors");
    status = run_child(stop_task_unlocked, &w, err, sizeof err);
    CHECK_ABORTED(status, err, "invariant failed: cw_task_locked(t)");
    CHECK_ABORTED(status, err, "cw_task_stop");
    status = run_child(notify_idle_holding_shard, &w, err, sizeof err);
    CHECK_ABORTED(status, err, "!cw_mutex_held(&p->shards[i].mu)");
#endif
    cw_mutex_destroy(&w.shard.mu);
}

static void task_queued_once(void)
{
    world w;
    world_init(&w);
    char err[1024];
    int status = run_child(push_two, &w, err, sizeof err);
    CHECK_EXITED_0(status);
#ifdef CW_ASSERTS
    status = run_child(push_twice, &w, err, sizeof err);
    CHECK_ABORTED(status, err, "invariant failed: t != q->tail");
    CHECK_ABORTED(status, err, "cw_tq_push");
#endif
    cw_mutex_destroy(&w.shard.mu);
}

#ifdef CW_ASSERTS /* called only where an assertion can fire */
static void group_count_over_16_bits(void *arg)
{
    unsigned char g[CW_COMMIT_GROUP_BYTES];
    cw_commit_put_group(g, 1, CW_COMMIT_FIELD_MAX + 1, 0);
    (void)arg;
}
#endif

/* The commit's 16-bit fields: the largest pool and type table fit, one more does not. */
static void commit_fields_bounded(void)
{
    unsigned char g[CW_COMMIT_GROUP_BYTES];
    cw_commit_put_group(g, CW_MAX_JOB_TYPES, CW_MAX_CONCURRENCY, 1);
    const unsigned char want[] = {0x07, 0xd0, 0x27, 0x10, 0x00, 0x01};
    CHECK_MEM(g, sizeof g, want, sizeof want);
    unsigned char e[CW_COMMIT_BATCH_ENTRY_BYTES];
    cw_commit_put_batch_entry(e, 0x01020304, 3, CW_COMMIT_BATCH_RETRY);
    const unsigned char want_e[] = {1, 2, 3, 4, 0, 3, 'r'};
    CHECK_MEM(e, sizeof e, want_e, sizeof want_e);
#ifdef CW_ASSERTS
    char err[1024];
    int status = run_child(group_count_over_16_bits, NULL, err, sizeof err);
    CHECK_ABORTED(status, err, "invariant failed: v <= CW_COMMIT_FIELD_MAX");
#endif
}

int main(void)
{
    RUN(shard_lock_needed);
    RUN(task_queued_once);
    RUN(commit_fields_bounded);
    return tl_finish();
}
