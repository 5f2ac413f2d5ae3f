/* The rest of a sharded namespace's admin views (PROTOCOL §27) as one: kept succeeded
 * jobs merged newest first, periodic schedules merged by name, a result or a batch
 * found in whichever shard holds it (its id's shard first), the dead set trimmed and
 * the doctor run in every shard, and a finding repaired in the shard it names. */
#include "client.h"

#include "sharding.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Appends src[0..m) (elements of size) to *dst of *len; src is freed (its elements'
 * strings now dst's). 0 or CWORK_ENOMEM (src untouched then). */
static int append(void **dst, size_t *len, void *src, size_t m, size_t size, cwork_error *err)
{
    if (m == 0) {
        cw_free(src);
        return 0;
    }
    void *p = cw_realloc(*dst, (*len + m) * size);
    if (!p) return cw_error(err, CWORK_ENOMEM, "out of memory");
    memcpy((char *)p + *len * size, src, m * size);
    *dst = p;
    *len += m;
    cw_free(src);
    return 0;
}

/* The i-th shard to ask about key: its own shard, then the others in order. */
static unsigned nth_shard(const char *key, unsigned s, unsigned i)
{
    unsigned home = cw_sharding_of(key, strlen(key), s);
    if (i == 0) return home;
    return i <= home ? i - 1 : i;
}

/* ---------------------------------------------------------------- succeeded */

typedef struct ranked_job {
    cwork_succeeded_job j;
    size_t at; /* its place in the shards' lists one after the other */
} ranked_job;

/* Newest first; equal times the lower shard first, then as its shard listed them. */
static int newest_first(const void *a, const void *b)
{
    const ranked_job *x = a, *y = b;
    if (x->j.finished_at_ms != y->j.finished_at_ms)
        return x->j.finished_at_ms > y->j.finished_at_ms ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

int cw_shards_succeeded(cwork_client *c, unsigned s, const char *name, size_t limit,
                        cwork_succeeded_job **out, size_t *n, cwork_error *err)
{
    cwork_succeeded_job *all = NULL;
    size_t len = 0;
    int rc = 0;
    for (unsigned i = 0; i < s && rc == 0; i++) {
        cwork_succeeded_job *j = NULL;
        size_t m = 0;
        rc = cwork_client_succeeded(cw_client_shard_at(c, i), name, limit, &j, &m, err);
        if (rc == 0 && (rc = append((void **)&all, &len, j, m, sizeof *j, err)) != 0)
            cwork_succeeded_jobs_free(j, m);
    }
    ranked_job *r = rc == 0 && len ? cw_calloc(len, sizeof *r) : NULL;
    if (rc == 0 && len && !r) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc) {
        cwork_succeeded_jobs_free(all, len);
        return rc;
    }
    for (size_t k = 0; k < len; k++)
        r[k] = (ranked_job){all[k], k};
    if (len > 1) qsort(r, len, sizeof *r, newest_first);
    for (size_t k = 0; k < len; k++)
        all[k] = r[k].j;
    cw_free(r);
    size_t keep = len < limit ? len : limit;
    for (size_t k = keep; k < len; k++) { /* past the limit: freed as the array's own */
        cw_free(all[k].name);
        cw_free(all[k].id);
        cw_free(all[k].job);
        cw_free(all[k].result);
    }
    *out = all;
    *n = keep;
    return 0;
}

/* ---------------------------------------------------------------- by id */

int cw_shards_result(cwork_client *c, unsigned s, const char *id, int64_t wait_ms, char **out,
                     size_t *len, cwork_error *err)
{
    /* a look in every shard, then the wait in the id's own shard (where a plain job runs;
     * a unique job's shard is its key's, which only its enqueuer knows) */
    int rc = CWORK_ENOTFOUND;
    for (unsigned i = 0; i < s && rc == CWORK_ENOTFOUND; i++)
        rc = cwork_client_result(cw_client_shard_at(c, nth_shard(id, s, i)), id, 0, out, len, err);
    if (rc == CWORK_ENOTFOUND && wait_ms > 0)
        rc = cwork_client_result(cw_client_shard_at(c, nth_shard(id, s, 0)), id, wait_ms, out, len,
                                 err);
    return rc;
}

int cw_shards_batch(cwork_client *c, unsigned s, const char *batch_id, cwork_batch_info *out,
                    cwork_error *err)
{
    /* a tracked batch lives in its id's shard (PROTOCOL §27); the others are asked too,
     * for a batch written there by hand or before the namespace was sharded */
    int rc = CWORK_ENOTFOUND;
    cwork_error first = {0};
    for (unsigned i = 0; i < s && rc == CWORK_ENOTFOUND; i++) {
        rc = cwork_client_batch(cw_client_shard_at(c, nth_shard(batch_id, s, i)), batch_id, out,
                                err);
        if (i == 0 && rc == CWORK_ENOTFOUND) first = *err;
    }
    if (rc == CWORK_ENOTFOUND) *err = first; /* names the key of the id's own shard */
    return rc;
}

/* ---------------------------------------------------------------- periodic schedules */

static int by_name(const void *a, const void *b)
{
    const cwork_periodic_schedule *x = a, *y = b;
    int c = strcmp(x->job_name, y->job_name);
    return c ? c : strcmp(x->spec, y->spec);
}

/* Soonest first, unknown last, as one shard's list (cwork_client_periodic_schedules). */
static int by_next(const void *a, const void *b)
{
    const cwork_periodic_schedule *x = a, *y = b;
    if ((x->next_at == 0) != (y->next_at == 0)) return x->next_at == 0 ? 1 : -1;
    if (x->next_at != y->next_at) return x->next_at < y->next_at ? -1 : 1;
    return by_name(a, b);
}

/* Folds the entries of one name and spec (a pool publishes its schedules in every shard
 * it serves; the instances wait in the name's shard): the soonest next fire time known,
 * the latest time a pool said it schedules it. */
static size_t fold_schedules(cwork_periodic_schedule *v, size_t n)
{
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, by_name);
    size_t w = 0;
    for (size_t i = 1; i < n; i++) {
        if (by_name(&v[w], &v[i]) != 0) {
            v[++w] = v[i];
            continue;
        }
        if (v[i].next_at && (!v[w].next_at || v[i].next_at < v[w].next_at))
            v[w].next_at = v[i].next_at;
        if (v[i].seen_at > v[w].seen_at) v[w].seen_at = v[i].seen_at;
        cw_free(v[i].job_name);
        cw_free(v[i].spec);
    }
    n = w + 1;
    qsort(v, n, sizeof *v, by_next);
    return n;
}

int cw_shards_periodic(cwork_client *c, unsigned s, cwork_periodic_schedule **out, size_t *n,
                       cwork_error *err)
{
    cwork_periodic_schedule *all = NULL;
    size_t len = 0;
    int rc = 0;
    for (unsigned i = 0; i < s && rc == 0; i++) {
        cwork_periodic_schedule *p = NULL;
        size_t m = 0;
        rc = cwork_client_periodic_schedules(cw_client_shard_at(c, i), &p, &m, err);
        if (rc == 0 && (rc = append((void **)&all, &len, p, m, sizeof *p, err)) != 0)
            cwork_periodic_schedules_free(p, m);
    }
    if (rc) {
        cwork_periodic_schedules_free(all, len);
        return rc;
    }
    *n = fold_schedules(all, len);
    *out = all;
    return 0;
}

/* ---------------------------------------------------------------- every shard */

int cw_shards_trim_dead(cwork_client *c, unsigned s, int64_t older_than, int64_t keep,
                        int64_t *removed, cwork_error *err)
{
    int64_t sum = 0;
    int rc = 0;
    for (unsigned i = 0; i < s && rc == 0; i++) {
        int64_t r = 0;
        rc = cwork_client_trim_dead(cw_client_shard_at(c, i), older_than, keep, &r, err);
        sum += r;
    }
    if (removed) *removed = sum;
    return rc;
}

int cw_shards_doctor(cwork_client *c, unsigned s, unsigned flags, cwork_doctor_finding **out,
                     size_t *n, cwork_error *err)
{
    cwork_doctor_finding *all = NULL;
    size_t len = 0;
    int rc = 0;
    for (unsigned i = 0; i < s && rc == 0; i++) {
        cwork_doctor_finding *f = NULL;
        size_t m = 0;
        rc = cwork_client_doctor(cw_client_shard_at(c, i), flags, &f, &m, err);
        if (rc == 0 && (rc = append((void **)&all, &len, f, m, sizeof *f, err)) != 0)
            cwork_doctor_findings_free(f, m);
    }
    if (rc) {
        cwork_doctor_findings_free(all, len);
        return rc;
    }
    *out = all;
    *n = len;
    return 0;
}

int cw_shards_of_key(cwork_client *c, unsigned s, const char *key)
{
    int best = -1;
    size_t best_len = 0;
    for (unsigned i = 0; i < s; i++) {
        const cw_keys *k = &cw_client_shard_at(c, i)->keys;
        if (k->prefix_len >= best_len && strncmp(key, k->prefix, k->prefix_len) == 0) {
            best = (int)i;
            best_len = k->prefix_len;
        }
    }
    return best;
}

int cw_shards_doctor_repair(cwork_client *c, unsigned s, cwork_doctor_finding *f, cwork_error *err)
{
    int i = cw_shards_of_key(c, s, f->key);
    if (i < 0)
        return cw_error(err, CWORK_EINVAL, "doctor finding: key %s is in no shard of namespace %s",
                        f->key, c->ns);
    return cwork_client_doctor_repair(cw_client_shard_at(c, (unsigned)i), f, err);
}

/* ---------------------------------------------------------------- rate limits */

typedef struct homed_limit {
    cwork_rate_limit_info l;
    bool home; /* read in the shard of its name */
    size_t at; /* its place in the shards' lists one after the other */
} homed_limit;

/* By name; the entry of the name's home shard first, then as listed. */
static int by_name_home_first(const void *a, const void *b)
{
    const homed_limit *x = a, *y = b;
    int c = strcmp(x->l.job_name, y->l.job_name);
    if (c) return c;
    if (x->home != y->home) return x->home ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

int cw_shards_rate_limits(cwork_client *c, unsigned s, cwork_rate_limit_info **out, size_t *n,
                          cwork_error *err)
{
    cwork_rate_limit_info *all = NULL;
    size_t len = 0;
    unsigned *shard_of = NULL;
    int rc = 0;
    for (unsigned i = 0; i < s && rc == 0; i++) {
        cwork_rate_limit_info *l = NULL;
        size_t m = 0;
        rc = cwork_client_rate_limits(cw_client_shard_at(c, i), &l, &m, err);
        unsigned *more = rc == 0 && m ? cw_realloc(shard_of, (len + m) * sizeof *more) : shard_of;
        if (rc == 0 && m && !more) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        if (rc == 0) shard_of = more;
        for (size_t k = 0; rc == 0 && k < m; k++)
            shard_of[len + k] = i;
        if (rc == 0) rc = append((void **)&all, &len, l, m, sizeof *l, err); /* frees l */
        if (rc) cwork_rate_limit_infos_free(l, m);
    }
    homed_limit *h = rc == 0 && len ? cw_calloc(len, sizeof *h) : NULL;
    if (rc == 0 && len && !h) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc) {
        cw_free(shard_of);
        cwork_rate_limit_infos_free(all, len);
        return rc;
    }
    for (size_t k = 0; k < len; k++) {
        const char *name = all[k].job_name;
        h[k] = (homed_limit){all[k], cw_sharding_of(name, strlen(name), s) == shard_of[k], k};
    }
    cw_free(shard_of);
    if (len > 1) qsort(h, len, sizeof *h, by_name_home_first);
    size_t w = 0;
    for (size_t k = 0; k < len; k++) {
        if (w && strcmp(all[w - 1].job_name, h[k].l.job_name) == 0) {
            cw_free(h[k].l.job_name); /* another shard's copy of the setting */
            cw_free(h[k].l.text);
            continue;
        }
        all[w++] = h[k].l;
    }
    cw_free(h);
    *out = all;
    *n = w;
    return 0;
}
