/* A pool's shards (see cw_shard): laying them out, and the questions stop, drain,
 * maintenance and the subscriber ask across all of them. Kept apart from pool.c so
 * that the pool's life cycle (pool.c, pool_run.c) and its threads all depend on this
 * file and it on none of them. */
#include "pool.h"

#include <time.h>

int cw_cond_init_monotonic(pthread_cond_t *c)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
    return rc;
}

void cw_pool_free_shards(cwork_pool *p)
{
    for (size_t i = 0; i < p->nshards; i++) {
        cw_shard *sh = &p->shards[i];
        cw_sampler_clear(&sh->sampler);
        cw_mutex_destroy(&sh->mu);
        pthread_cond_destroy(&sh->disp_cond);
    }
    for (size_t e = 0; p->shards && e < p->opts.concurrency; e++)
        pthread_cond_destroy(&p->executors[e].cond);
    cw_free(p->shards);
    p->shards = NULL;
    p->nshards = 0;
}

/* Splits the executors into shards of about tuning.shard_executors (see cw_shard). */
int cw_pool_build_shards(cwork_pool *p)
{
    size_t per = p->tuning.shard_executors ? p->tuning.shard_executors : 1;
    size_t n = p->opts.concurrency / per;
    if (n > p->tuning.max_shards) n = p->tuning.max_shards;
    if (n < 1) n = 1;
    /* (cwork_pool_new caps concurrency; the commit's 16-bit counts rely on it) */
    CW_ASSERT(p->opts.concurrency >= 1 && p->opts.concurrency <= CW_MAX_CONCURRENCY);
    CW_ASSERT(n <= p->opts.concurrency);
    cw_shard *shards = cw_calloc(n, sizeof *shards);
    if (!shards) return CWORK_ENOMEM;
    p->shards = shards;
    p->nshards = n;
    for (size_t i = 0; i < n; i++) {
        cw_shard *sh = &shards[i];
        sh->pool = p;
        sh->index = i;
        sh->first_executor = p->opts.concurrency * i / n;
        sh->nexecutors = p->opts.concurrency * (i + 1) / n - sh->first_executor;
        for (size_t e = sh->first_executor; e < sh->first_executor + sh->nexecutors; e++) {
            p->executors[e].shard = sh;
            pthread_cond_init(&p->executors[e].cond, NULL);
        }
        cw_mutex_init(&sh->mu);
        cw_cond_init_monotonic(&sh->disp_cond);
    }
    return 0;
}

size_t cw_pool_in_flight(cwork_pool *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nshards; i++) {
        cw_mutex_lock(&p->shards[i].mu);
        n += p->shards[i].in_flight;
        cw_mutex_unlock(&p->shards[i].mu);
    }
    return n;
}

bool cw_pool_busy(cwork_pool *p)
{
    bool busy = false;
    for (size_t i = 0; i < p->nshards && !busy; i++) {
        cw_mutex_lock(&p->shards[i].mu);
        busy = p->shards[i].in_flight > 0 || p->shards[i].fetching > 0;
        cw_mutex_unlock(&p->shards[i].mu);
    }
    return busy;
}

void cw_pool_wake_dispatchers(cwork_pool *p)
{
    for (size_t i = 0; i < p->nshards; i++) {
        cw_shard *sh = &p->shards[i];
        cw_mutex_lock(&sh->mu);
        sh->wakeup = true;
        if (sh->dispatcher_waiting) pthread_cond_signal(&sh->disp_cond);
        cw_mutex_unlock(&sh->mu);
    }
}
