/* Lists of a sharded namespace (PROTOCOL §27) read as one list: each shard's list is
 * read in order, in chunks, and the shards' lists are merged by a key (the score of the
 * retry, scheduled and dead sets; equal keys: the lower shard first), so that page p of
 * the namespace is the jobs ranked (p-1)·size to p·size-1 of all shards together. The
 * sets, a queue's waiting jobs and the search all page this way (cw_shards_pages). */
#include "client.h"

#include "util.h"

#include <string.h>

/* One shard's list, read a chunk at a time. */
typedef struct cursor {
    cwork_client *shard;
    cwork_listed_job *jobs; /* the chunk read last */
    size_t n, at;           /* its length, and the next job not yet merged */
    unsigned next_page;     /* the chunk to read next (1-based) */
    int64_t total;          /* the shard's total, as its first read said */
    bool done;              /* the list's end was read */
} cursor;

typedef struct merge {
    const cw_shards_reader *rd;
    unsigned chunk;
    cursor *cur;
    unsigned s;
} merge;

/* Whether the shard's list may hold more than the chunks read: a chunk can list fewer
 * jobs than it covers (members that cannot be decoded are skipped), so the end is where
 * the chunks read reach the total. */
static bool more_after(const merge *m, const cursor *cur)
{
    return (uint64_t)(cur->next_page - 1) * m->chunk < (uint64_t)(cur->total > 0 ? cur->total : 0);
}

/* Makes cur->jobs[cur->at] the shard's next job unless the list is exhausted (then
 * cur->done); *total (may be NULL) receives the shard's total on the first read. */
static int fill(const merge *m, unsigned i, int64_t *total, cwork_error *err)
{
    cursor *cur = &m->cur[i];
    if (cur->at < cur->n || cur->done) return 0;
    bool first = cur->next_page == 1;
    do { /* a chunk of undecodable members only: on to the next */
        cwork_listed_jobs_free(cur->jobs, cur->n);
        cur->jobs = NULL;
        cur->n = cur->at = 0;
        int64_t t = 0;
        int rc = m->rd->read(m->rd->arg, cur->shard, i, cur->next_page++, m->chunk, &cur->jobs,
                             &cur->n, &t, err);
        if (rc) return rc;
        if (first) cur->total = t;
        first = false;
    } while (cur->n == 0 && more_after(m, cur));
    if (total) *total = cur->total;
    cur->done = cur->n == 0;
    return 0;
}

/* The job's merge key: its score, or what the reader says. */
static int64_t key_of(const merge *m, const cwork_listed_job *j)
{
    return m->rd->key ? m->rd->key(j) : j->at;
}

/* The cursor whose next job comes first in the merged order, or NULL when all are
 * exhausted. */
static cursor *first_of(const merge *m)
{
    cursor *best = NULL;
    int64_t best_key = 0;
    for (unsigned i = 0; i < m->s; i++) {
        cursor *c = &m->cur[i];
        if (c->at >= c->n) continue;
        int64_t k = key_of(m, &c->jobs[c->at]);
        if (!best || (m->rd->descending ? k > best_key : k < best_key)) {
            best = c;
            best_key = k;
        }
    }
    return best;
}

/* After taking a job from cur: reads the next chunk when cur's is used up and the list
 * may hold more. */
static int advance(const merge *m, cursor *cur, cwork_error *err)
{
    cur->at++;
    if (cur->at < cur->n) return 0;
    if (!more_after(m, cur)) {
        cur->done = true;
        return 0;
    }
    return fill(m, (unsigned)(cur - m->cur), NULL, err);
}

/* Takes the jobs ranked skip to skip + size - 1 into out (*n of them). */
static int take(const merge *m, uint64_t skip, size_t size, cwork_listed_job *out, size_t *n,
                cwork_error *err)
{
    int rc = 0;
    for (uint64_t rank = 0; rc == 0 && *n < size;) {
        cursor *c = first_of(m);
        if (!c) break;
        if (rank++ >= skip) {
            out[(*n)++] = c->jobs[c->at];
            c->jobs[c->at].job = NULL; /* now out's */
        }
        rc = advance(m, c, err);
    }
    return rc;
}

int cw_shards_pages(cwork_client *c, unsigned s, unsigned page, unsigned page_size,
                    const cw_shards_reader *rd, cwork_listed_job **out, size_t *n, int64_t *total,
                    cwork_error *err)
{
    *out = NULL;
    *n = 0;
    if (total) *total = 0;
    if (page_size > CW_CLIENT_MAX_PAGE_SIZE)
        return cw_error(err, CWORK_EINVAL, "page size %u is more than %d", page_size,
                        CW_CLIENT_MAX_PAGE_SIZE);
    size_t size = page_size ? page_size : CWORK_PAGE_SIZE;
    uint64_t skip = ((uint64_t)(page ? page : 1) - 1) * size;
    uint64_t want = skip + size;
    merge m = {rd, want < CW_CLIENT_MAX_PAGE_SIZE ? (unsigned)want : CW_CLIENT_MAX_PAGE_SIZE,
               cw_calloc(s, sizeof(cursor)), s};
    cwork_listed_job *jobs = cw_calloc(size, sizeof *jobs);
    int rc = m.cur && jobs ? 0 : cw_error(err, CWORK_ENOMEM, "out of memory");
    int64_t sum = 0;
    for (unsigned i = 0; i < s && rc == 0; i++) {
        int64_t t = 0;
        m.cur[i] = (cursor){cw_client_shard_at(c, i), NULL, 0, 0, 1, 0, false};
        rc = fill(&m, i, &t, err);
        sum += t;
    }
    /* a page past the end reads no further than each shard's first chunk */
    if (rc == 0 && skip < (uint64_t)(sum > 0 ? sum : 0)) rc = take(&m, skip, size, jobs, n, err);
    for (unsigned i = 0; m.cur && i < s; i++)
        cwork_listed_jobs_free(m.cur[i].jobs, m.cur[i].n);
    cw_free(m.cur);
    if (rc) {
        cwork_listed_jobs_free(jobs, *n);
        *n = 0;
        return rc;
    }
    *out = jobs;
    if (total) *total = sum;
    return 0;
}

/* ---------------------------------------------------------------- the sets */

typedef struct set_query {
    cwork_job_set set;
    const cwork_list_query *q;
    unsigned filters;
} set_query;

static int read_set(void *arg, cwork_client *shard, unsigned i, unsigned page, unsigned size,
                    cwork_listed_job **out, size_t *n, int64_t *total, cwork_error *err)
{
    (void)i;
    const set_query *sq = arg;
    cwork_list_query q = {page, size, sq->q->name, sq->q->newest_first};
    return cwork_client_list_filtered(shard, sq->set, &q, sq->filters, out, n, total, err);
}

int cw_shards_list(cwork_client *c, unsigned s, cwork_job_set set, const cwork_list_query *q,
                   unsigned filters, cwork_listed_job **out, size_t *n, int64_t *total,
                   cwork_error *err)
{
    cwork_list_query dflt = {1, CWORK_PAGE_SIZE, NULL, false};
    if (!q) q = &dflt;
    set_query sq = {set, q, filters};
    cw_shards_reader rd = {read_set, NULL, &sq, q->newest_first};
    return cw_shards_pages(c, s, q->page, q->page_size, &rd, out, n, total, err);
}
