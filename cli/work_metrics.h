/* `cwork work --metrics-listen ADDR`: /metrics (Prometheus text: the pool's job counts
 * per job name, its uptime and health) and /healthz (200 while the pool's heartbeat in
 * Redis is fresh, which also shows Redis answers; 503 otherwise), served by
 * metrics_server.c. Redis is asked by a thread of its own every HEALTH_PERIOD_MS, so
 * that a scrape never waits for Redis. */
#ifndef CWORK_CLI_WORK_METRICS_H
#define CWORK_CLI_WORK_METRICS_H

#include "work.h"

typedef struct work_metrics work_metrics;

/* Starts serving for the pool (borrowed, as o and redis: keep them until
 * work_metrics_stop), before it starts: /healthz says 503 "starting" until
 * work_metrics_pool_started. NULL with why in err. */
work_metrics *work_metrics_start(const work_opts *o, cwork_pool *pool, cwork_redis *redis,
                                 char *err, size_t err_size);
/* The pool is running: uptime counts from now, and the health checks begin. 0, or -1
 * with why in err. */
int work_metrics_pool_started(work_metrics *m, char *err, size_t err_size);
/* "http://HOST:PORT" as bound. */
const char *work_metrics_url(const work_metrics *m);
void work_metrics_stop(work_metrics *m);

#endif
