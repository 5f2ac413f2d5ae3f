/* The search and a queue's waiting jobs of a sharded namespace (PROTOCOL §27) as one
 * list, paged like the merged sets (cw_shards_pages): the search's matches newest
 * first by score, a queue's jobs next-to-run first by enqueue time (each shard's queue
 * is taken from its front; across shards the jobs enqueued first come first). Deleting
 * listed waiting jobs finds each in the shard that holds it. */
#include "client.h"

#include "sharding.h"

#include <string.h>

/* ---------------------------------------------------------------- search */

typedef struct search_arg {
    cwork_job_set set;
    const cwork_search_query *q;
    cwork_search_info info; /* summed over the shards' first reads */
} search_arg;

static int read_search(void *arg, cwork_client *shard, unsigned i, unsigned page, unsigned size,
                       cwork_listed_job **out, size_t *n, int64_t *total, cwork_error *err)
{
    (void)i;
    search_arg *a = arg;
    cwork_search_query q = {a->q->text, page, size, a->q->max_scan};
    cwork_search_info info = {0, 0, 0, false};
    int rc = cwork_client_search(shard, a->set, &q, out, n, &info, err);
    if (rc) return rc;
    *total = info.matches;
    if (page == 1) { /* a later chunk scans the same members again */
        a->info.total += info.total;
        a->info.scanned += info.scanned;
        a->info.matches += info.matches;
        a->info.bounded = a->info.bounded || info.bounded;
    }
    return 0;
}

int cw_shards_search(cwork_client *c, unsigned s, cwork_job_set set, const cwork_search_query *q,
                     cwork_listed_job **out, size_t *n, cwork_search_info *info, cwork_error *err)
{
    search_arg a = {set, q, {0, 0, 0, false}};
    cw_shards_reader rd = {read_search, NULL, &a, true};
    int64_t total = 0;
    int rc = cw_shards_pages(c, s, q->page, q->page_size, &rd, out, n, &total, err);
    if (rc == 0 && info) *info = a.info;
    return rc;
}

/* ---------------------------------------------------------------- a queue's jobs */

static int read_queue(void *arg, cwork_client *shard, unsigned i, unsigned page, unsigned size,
                      cwork_listed_job **out, size_t *n, int64_t *total, cwork_error *err)
{
    (void)i;
    return cwork_client_queue_jobs(shard, arg, page, size, out, n, total, err);
}

/* The enqueue time: a shard's queue runs its oldest first, and so does the merge. */
static int64_t enqueued_at(const cwork_listed_job *j)
{
    return j->job ? j->job->t : 0;
}

int cw_shards_queue_jobs(cwork_client *c, unsigned s, const char *name, unsigned page,
                         unsigned page_size, cwork_listed_job **out, size_t *n, int64_t *total,
                         cwork_error *err)
{
    cw_shards_reader rd = {read_queue, enqueued_at, (void *)name, false};
    return cw_shards_pages(c, s, page, page_size, &rd, out, n, total, err);
}

/* Deletes one listed job from the shard that holds it: its id's shard first, then the
 * others. Its place in a shard's queue is not known (the merged place is no shard's),
 * so each shard looks in the whole queue. 1 deleted, 0 not found, or an error. */
static int delete_one(cwork_client *c, unsigned s, const char *name, const char *id,
                      cwork_error *err)
{
    unsigned home = cw_sharding_of(id, strlen(id), s);
    cwork_waiting_ref ref = {id, -1};
    for (unsigned k = 0; k < s; k++) {
        unsigned i = k == 0 ? home : k <= home ? k - 1 : k;
        size_t done = 0, unchanged = 0;
        int rc = cwork_client_delete_waiting(cw_client_shard_at(c, i), name, &ref, 1, &done,
                                             &unchanged, err);
        if (rc == 0 && done) return 1;
        if (rc && rc != CWORK_ENOTFOUND) return rc;
    }
    return 0;
}

int cw_shards_delete_waiting(cwork_client *c, unsigned s, const char *name,
                             const cwork_waiting_ref *jobs, size_t n, size_t *done,
                             size_t *unchanged, cwork_error *err)
{
    size_t d = 0, u = 0;
    const char *missing = NULL;
    int rc = 0;
    for (size_t j = 0; j < n && rc == 0; j++) {
        if (!jobs[j].id) {
            rc = cw_error(err, CWORK_EINVAL, "cwork_client_delete_waiting: NULL id");
            break;
        }
        int got = delete_one(c, s, name, jobs[j].id, err);
        if (got < 0)
            rc = got;
        else if (got)
            d++;
        else {
            u++;
            if (!missing) missing = jobs[j].id;
        }
    }
    if (done) *done = d;
    if (unchanged) *unchanged = u;
    if (rc == 0 && missing)
        rc = cw_error(err, CWORK_ENOTFOUND,
                      "job %s is not waiting in any shard's queue %s (%zu of %zu not found)",
                      missing, name, u, n);
    return rc;
}
