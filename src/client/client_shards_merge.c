/* The overview of a sharded namespace (PROTOCOL §27) as one: each shard's client is
 * asked as if it were the whole namespace, and the answers are merged here — queues by
 * name, pools and workers side by side, counts of days and minutes added up. */
#include "client.h"

#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Grows *arr (of *cap elements of size) to hold need; 0 or CWORK_ENOMEM. */
static int reserve(void **arr, size_t *cap, size_t need, size_t size, cwork_error *err)
{
    if (need <= *cap) return 0;
    size_t cap2 = *cap ? *cap : 8;
    while (cap2 < need)
        cap2 *= 2;
    void *p = cw_realloc(*arr, cap2 * size);
    if (!p) return cw_error(err, CWORK_ENOMEM, "out of memory");
    *arr = p;
    *cap = cap2;
    return 0;
}

/* ---------------------------------------------------------------- queues */

static int by_job_name(const void *a, const void *b)
{
    return strcmp(((const cwork_queue_info *)a)->job_name, ((const cwork_queue_info *)b)->job_name);
}

/* Sorts all by name and folds each name's entries into one: counts added, the oldest
 * job's latency, paused when paused in any shard (a pause is made in every shard). */
static size_t fold_queues(cwork_queue_info *all, size_t n)
{
    if (n == 0) return 0;
    qsort(all, n, sizeof *all, by_job_name);
    size_t w = 0;
    for (size_t i = 1; i < n; i++) {
        if (strcmp(all[w].job_name, all[i].job_name) == 0) {
            all[w].count += all[i].count;
            if (all[i].latency > all[w].latency) all[w].latency = all[i].latency;
            all[w].paused = all[w].paused || all[i].paused;
            cw_free(all[i].job_name);
        } else {
            all[++w] = all[i];
        }
    }
    return w + 1;
}

int cw_shards_queues(cwork_client *c, unsigned s, cwork_queue_info **out, size_t *n,
                     cwork_error *err)
{
    cwork_queue_info *all = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (unsigned i = 0; i < s && rc == 0; i++) {
        cwork_queue_info *q = NULL;
        size_t m = 0;
        rc = cwork_client_queues(cw_client_shard_at(c, i), &q, &m, err);
        if (rc == 0 && (rc = reserve((void **)&all, &cap, len + m, sizeof *all, err)) == 0) {
            if (m) memcpy(all + len, q, m * sizeof *q);
            len += m;
            cw_free(q); /* the names now belong to all */
        } else {
            cwork_queue_infos_free(q, m);
        }
    }
    if (rc) {
        cwork_queue_infos_free(all, len);
        return rc;
    }
    *out = all;
    *n = fold_queues(all, len);
    return 0;
}

/* ---------------------------------------------------------------- pools, workers */

static int by_pool_id(const void *a, const void *b)
{
    return strcmp(((const cwork_pool_heartbeat *)a)->worker_pool_id,
                  ((const cwork_pool_heartbeat *)b)->worker_pool_id);
}

int cw_shards_pools(cwork_client *c, unsigned s, cwork_pool_heartbeat **out, size_t *n,
                    cwork_error *err)
{
    cwork_pool_heartbeat *all = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (unsigned i = 0; i < s && rc == 0; i++) {
        cwork_pool_heartbeat *p = NULL;
        size_t m = 0;
        rc = cwork_client_pools(cw_client_shard_at(c, i), &p, &m, err);
        if (rc == 0 && (rc = reserve((void **)&all, &cap, len + m, sizeof *all, err)) == 0) {
            if (m) memcpy(all + len, p, m * sizeof *p);
            len += m;
            cw_free(p);
        } else {
            cwork_pool_heartbeats_free(p, m);
        }
    }
    if (rc) {
        cwork_pool_heartbeats_free(all, len);
        return rc;
    }
    if (len) qsort(all, len, sizeof *all, by_pool_id); /* sorted by id, as one shard's */
    *out = all;
    *n = len;
    return 0;
}

int cw_shards_workers(cwork_client *c, unsigned s, cwork_worker_observation **out, size_t *n,
                      cwork_error *err)
{
    cwork_worker_observation *all = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (unsigned i = 0; i < s && rc == 0; i++) {
        cwork_worker_observation *w = NULL;
        size_t m = 0;
        rc = cwork_client_workers(cw_client_shard_at(c, i), &w, &m, err);
        if (rc == 0 && (rc = reserve((void **)&all, &cap, len + m, sizeof *all, err)) == 0) {
            if (m) memcpy(all + len, w, m * sizeof *w);
            len += m;
            cw_free(w);
        } else {
            cwork_worker_observations_free(w, m);
        }
    }
    if (rc) {
        cwork_worker_observations_free(all, len);
        return rc;
    }
    *out = all;
    *n = len;
    return 0;
}

/* ---------------------------------------------------------------- counts over time */

int cw_shards_daily_stats(cwork_client *c, unsigned s, unsigned days, cwork_day_stats **out,
                          size_t *n, cwork_error *err)
{
    *out = NULL;
    *n = 0;
    int rc = cwork_client_daily_stats(cw_client_shard_at(c, 0), days, out, n, err);
    for (unsigned i = 1; i < s && rc == 0; i++) {
        cwork_day_stats *d = NULL;
        size_t m = 0;
        rc = cwork_client_daily_stats(cw_client_shard_at(c, i), days, &d, &m, err);
        /* each call reads the days ending today: matched by date, so that a call
         * across midnight adds no day to another */
        for (size_t j = 0; rc == 0 && j < m; j++)
            for (size_t k = 0; k < *n; k++)
                if (strcmp((*out)[k].date, d[j].date) == 0) {
                    (*out)[k].processed += d[j].processed;
                    (*out)[k].failed += d[j].failed;
                    break;
                }
        cw_free(d);
    }
    if (rc) {
        cw_free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

int cw_shards_throughput(cwork_client *c, unsigned s, unsigned minutes, cwork_minute_stats **out,
                         size_t *n, cwork_error *err)
{
    *out = NULL;
    *n = 0;
    int rc = cwork_client_throughput(cw_client_shard_at(c, 0), minutes, out, n, err);
    for (unsigned i = 1; i < s && rc == 0; i++) {
        cwork_minute_stats *t = NULL;
        size_t m = 0;
        rc = cwork_client_throughput(cw_client_shard_at(c, i), minutes, &t, &m, err);
        /* the minutes are consecutive in both: the offset of the first matches them */
        for (size_t j = 0; rc == 0 && j<m && * n> 0; j++) {
            int64_t k = (t[j].minute - (*out)[0].minute) / 60;
            if (k >= 0 && (size_t)k < *n && (*out)[k].minute == t[j].minute) {
                (*out)[k].processed += t[j].processed;
                (*out)[k].failed += t[j].failed;
            }
        }
        cw_free(t);
    }
    if (rc) {
        cw_free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}
