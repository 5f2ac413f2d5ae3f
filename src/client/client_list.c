/* The admin client's work on the retry, scheduled and dead sets (PROTOCOL §11): pages of
 * jobs, delete and retry by (score, id), retry-all, delete-all, trimming, and lookup of
 * a job by id in every place a job can be. */
#include "client.h"

#include "log.h"
#include "scripts.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- scanning */

/* Receives a decoded member (and owns it) with its score (0 for list entries). Returns
 * 0 to go on, 1 to stop the scan, or a negative CWORK_E… code. */
typedef int (*visit_fn)(void *ctx, cwork_job *job, int64_t at);

typedef struct scan {
    /* Members whose bytes cannot hold this text are not decoded (the text is ASCII and
     * the member has no escapes, so a matching string would appear verbatim). */
    const char *needle;
    visit_fn fn;
    void *ctx;
    const char *log_skip; /* log key for members that cannot be decoded, or NULL */
} scan;

static int contains(const char *hay, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; m <= n && i <= n - m; i++)
        if (hay[i] == needle[0] && memcmp(hay + i, needle, m) == 0) return 1;
    return m == 0;
}

static int ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80) return 0;
    return 1;
}

static int visit(const scan *s, const redisReply *m, const redisReply *score)
{
    int64_t at = 0;
    cwork_error e = {0};
    const char *bytes;
    size_t len;
    if (cw_reply_str(m, &bytes, &len, NULL, NULL) != 0) return 0;
    if (score && cw_client_score(score, &at) != 0) {
        if (s->log_skip)
            cw_log(CWORK_LOG_ERROR, s->log_skip, "error", "score is not a whole number", NULL);
        return 0;
    }
    if (s->needle && !memchr(bytes, '\\', len) && !contains(bytes, len, s->needle)) return 0;
    cwork_job *job = NULL;
    int rc = cw_job_decode(bytes, len, &job, &e);
    if (rc == CWORK_ENOMEM) return rc;
    if (rc) {
        if (s->log_skip) cw_client_fail(s->log_skip, rc, &e);
        return 0;
    }
    return s->fn(s->ctx, job, at);
}

/* How scan_key walks a key. */
enum { SCAN_LIST = 0, SCAN_ZSET = 1, SCAN_ZSET_DESC = 2 };

/* Visits every member of a zset (ascending score, as ZRANGEBYSCORE -inf +inf, or
 * descending with SCAN_ZSET_DESC) or every entry of a list (left to right),
 * CW_CLIENT_BATCH per round trip. Returns 1 when the visitor stopped the scan, 0 at
 * the end, or an error. A damaged key (WRONGTYPE) is noted and visits nothing. */
static int scan_key(cw_conn *c, const char *key, size_t key_len, int zset, const scan *s,
                    cwork_error *err)
{
    for (long long from = 0;; from += CW_CLIENT_BATCH) {
        char start[24], stop[24];
        snprintf(start, sizeof start, "%lld", from);
        snprintf(stop, sizeof stop, "%lld", from + CW_CLIENT_BATCH - 1);
        const char *cmd = zset == SCAN_ZSET_DESC ? "ZREVRANGE" : zset ? "ZRANGE" : "LRANGE";
        const char *argv[] = {cmd, key, start, stop, "WITHSCORES"};
        size_t lens[] = {strlen(cmd), key_len, strlen(start), strlen(stop), 10};
        redisReply *r = NULL;
        size_t n = 0, step = zset ? 2 : 1;
        int rc = cw_client_read_command(c, zset ? 5 : 4, argv, lens, key, key_len, &r, err);
        if (rc == 0 && !r) return 0; /* damaged: read as empty */
        if (rc == 0) rc = cw_reply_array(r, 0, &n, argv[0], err);
        for (size_t i = 0; rc == 0 && i + step <= n; i += step)
            rc = visit(s, cw_reply_at(r, i), zset ? cw_reply_at(r, i + 1) : NULL);
        cw_reply_free(r);
        size_t got = n / step;
        if (rc < 0 && rc != CWORK_ENOMEM) return rc;
        if (rc == CWORK_ENOMEM) return cw_error(err, CWORK_ENOMEM, "out of memory");
        if (rc > 0 || got < CW_CLIENT_BATCH) return rc;
    }
}

/* ---------------------------------------------------------------- listing */

void cwork_listed_jobs_free(cwork_listed_job *jobs, size_t n)
{
    if (!jobs) return;
    for (size_t i = 0; i < n; i++)
        cwork_job_free(jobs[i].job);
    cw_free(jobs);
}

typedef struct page {
    const char *name;
    bool skip_periodic;
    uint64_t skip; /* matching jobs before the page */
    size_t size;   /* jobs per page */
    cwork_listed_job *jobs;
    size_t n;
    int64_t total;
} page;

/* A periodic job's instance: "periodic:<name>:<spec>:<fire>" (PROTOCOL §10.3). */
static bool periodic_instance(const cwork_job *job)
{
    static const char prefix[] = "periodic:";
    return job->id.len >= sizeof prefix - 1 && memcmp(job->id.ptr, prefix, sizeof prefix - 1) == 0;
}

static int page_add(void *ctx, cwork_job *job, int64_t at)
{
    page *p = ctx;
    if ((p->name &&
         (job->name.len != strlen(p->name) || memcmp(job->name.ptr, p->name, job->name.len))) ||
        (p->skip_periodic && periodic_instance(job))) {
        cwork_job_free(job);
        return 0;
    }
    if ((uint64_t)p->total >= p->skip && p->n < p->size) {
        p->jobs[p->n].at = at;
        p->jobs[p->n++].job = job;
    } else {
        cwork_job_free(job);
    }
    p->total++;
    return 0;
}

/* Go's page: ZRANGEBYSCORE -inf +inf WITHSCORES LIMIT and ZCARD, pipelined (newest
 * first: ZREVRANGEBYSCORE +inf -inf). */
static int read_page(cw_conn *c, const cw_buf *key, page *p, int newest_first, cwork_error *err)
{
    char off[24], count[24];
    snprintf(off, sizeof off, "%llu", (unsigned long long)p->skip);
    snprintf(count, sizeof count, "%zu", p->size);
    p->skip = 0; /* Redis skips them */
    const char *range[] = {newest_first ? "ZREVRANGEBYSCORE" : "ZRANGEBYSCORE",
                           key->data,
                           newest_first ? "+inf" : "-inf",
                           newest_first ? "-inf" : "+inf",
                           "WITHSCORES",
                           "LIMIT",
                           off,
                           count};
    size_t range_lens[] = {strlen(range[0]), key->len, 4, 4, 10, 5, strlen(off), strlen(count)};
    const char *zcard[] = {"ZCARD", key->data};
    size_t zcard_lens[] = {5, key->len};
    redisReply *r[2];
    int rc;
    if ((rc = cw_conn_append(c, 8, range, range_lens, err)) != 0 ||
        (rc = cw_conn_append(c, 2, zcard, zcard_lens, err)) != 0)
        return rc;
    size_t n = 0;
    int64_t total = 0;
    /* a damaged set (WRONGTYPE to both) is an empty page, and named; any other error
     * reply (an ACL refusal) is reported as Redis said it */
    const char *read_keys[] = {key->data, key->data};
    size_t read_lens[] = {key->len, key->len};
    rc = cw_client_read_damaged(c, 2, r, read_keys, read_lens, err);
    if (rc == 0 && !r[0] && !r[1]) {
        p->total = 0;
        return 0;
    }
    if (rc == 0) rc = cw_reply_array(r[0], 0, &n, range[0], err);
    if (rc == 0) rc = cw_reply_int(r[1], &total, "ZCARD", err);
    scan s = {NULL, page_add, p, "client.get_zset_page.new_job"};
    for (size_t i = 0; rc == 0 && i + 2 <= n; i += 2)
        if (visit(&s, cw_reply_at(r[0], i), cw_reply_at(r[0], i + 1)) == CWORK_ENOMEM)
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    cw_client_free_replies(r, 2);
    p->total = total;
    return rc;
}

int cwork_client_list_page(cwork_client *client, cwork_job_set set, const cwork_list_query *q,
                           cwork_listed_job **out, size_t *n, int64_t *total, cwork_error *err)
{
    return cwork_client_list_filtered(client, set, q, 0, out, n, total, err);
}

int cwork_client_list_filtered(cwork_client *client, cwork_job_set set, const cwork_list_query *q,
                               unsigned filters, cwork_listed_job **out, size_t *n, int64_t *total,
                               cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !out || !n)
        return cw_error(err, CWORK_EINVAL, "cwork_client_list: NULL argument");
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0
                   ? shards
                   : cw_shards_list(client, (unsigned)shards, set, q, filters, out, n, total, err);
    if (filters & ~CWORK_LIST_SKIP_PERIODIC)
        return cw_error(err, CWORK_EINVAL, "cwork_client_list_filtered: unknown filter 0x%x",
                        filters);
    bool skip_periodic = (filters & CWORK_LIST_SKIP_PERIODIC) != 0;
    cwork_list_query dflt = {1, CWORK_PAGE_SIZE, NULL, false};
    if (!q) q = &dflt;
    *out = NULL;
    *n = 0;
    if (total) *total = 0;
    if (q->page_size > CW_CLIENT_MAX_PAGE_SIZE)
        return cw_error(err, CWORK_EINVAL, "page size %u is more than %d", q->page_size,
                        CW_CLIENT_MAX_PAGE_SIZE);
    size_t size = q->page_size ? q->page_size : CWORK_PAGE_SIZE;
    cw_buf key;
    cw_buf_init(&key);
    int rc = cw_client_set_key(&client->keys, set, &key, err);
    page p = {q->name, skip_periodic, ((uint64_t)(q->page ? q->page : 1) - 1) * size, size, NULL, 0,
              0};
    if (rc == 0 && !(p.jobs = cw_calloc(size, sizeof *p.jobs)))
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    cw_conn *c = NULL;
    if (rc == 0 && (rc = cw_redis_checkout(client->redis, &c, err)) == 0) {
        if (q->name || skip_periodic) { /* a filter: every member is read */
            scan s = {q->name && ascii(q->name) ? q->name : NULL, page_add, &p,
                      "client.get_zset_page.new_job"};
            rc = scan_key(c, key.data, key.len, q->newest_first ? SCAN_ZSET_DESC : SCAN_ZSET, &s,
                          err);
        } else {
            rc = read_page(c, &key, &p, q->newest_first, err);
        }
        if (rc == 0) cw_damage_resolve(c, &client->keys);
        cw_redis_checkin(client->redis, c);
    }
    cw_buf_free(&key);
    if (rc) {
        cwork_listed_jobs_free(p.jobs, p.n);
        return cw_client_fail("client.get_zset_page", rc, err);
    }
    *out = p.jobs;
    *n = p.n;
    if (total) *total = p.total;
    return 0;
}

int cwork_client_list(cwork_client *client, cwork_job_set set, unsigned page_no, const char *name,
                      cwork_listed_job **out, size_t *n, int64_t *total, cwork_error *err)
{
    cwork_list_query q = {page_no, CWORK_PAGE_SIZE, name, false};
    return cwork_client_list_page(client, set, &q, out, n, total, err);
}

/* ---------------------------------------------------------------- find */

typedef struct found {
    const char *id;
    cwork_listed_job *out;
} found;

static int found_check(void *ctx, cwork_job *job, int64_t at)
{
    found *f = ctx;
    if (strlen(f->id) != job->id.len || memcmp(job->id.ptr, f->id, job->id.len) != 0) {
        cwork_job_free(job);
        return 0;
    }
    f->out->at = at;
    f->out->job = job;
    return 1;
}

/* Queues, then in-progress lists (every pool in worker_pools × every known name), then
 * retry, scheduled and dead. Returns 1 when found (place set), 0 when not, or an error. */
static int find_in(cw_conn *c, const cw_keys *k, const scan *s, cwork_job_place *place,
                   cw_buf *where, char pool_id[25], cwork_error *err)
{
    cw_argv names = {0}, pools = {0};
    cw_buf key;
    cw_buf_init(&key);
    cw_key_known_jobs(k, &key);
    int rc = cw_client_smembers(c, &key, &names, err);
    cw_buf_reset(&key);
    cw_key_worker_pools(k, &key);
    if (rc == 0) rc = cw_client_smembers(c, &key, &pools, err);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        cw_buf_reset(&key);
        cw_key_queue(k, &key, names.argv[i]);
        rc = key.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                     : scan_key(c, key.data, key.len, 0, s, err);
        *place = CWORK_PLACE_QUEUE;
    }
    for (size_t i = 0; rc == 0 && i < pools.n * names.n; i++) {
        cw_buf_reset(&key);
        cw_key_inprogress(k, &key, names.argv[i % names.n], pools.argv[i / names.n]);
        rc = key.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                     : scan_key(c, key.data, key.len, 0, s, err);
        *place = CWORK_PLACE_IN_PROGRESS;
        if (rc == 1 && pool_id) snprintf(pool_id, 25, "%s", pools.argv[i / names.n]);
    }
    static const struct {
        cwork_job_set set;
        cwork_job_place place;
    } sets[] = {{CWORK_SET_RETRY, CWORK_PLACE_RETRY},
                {CWORK_SET_SCHEDULED, CWORK_PLACE_SCHEDULED},
                {CWORK_SET_DEAD, CWORK_PLACE_DEAD}};
    for (size_t i = 0; rc == 0 && i < sizeof sets / sizeof sets[0]; i++) {
        cw_buf_reset(&key);
        if ((rc = cw_client_set_key(k, sets[i].set, &key, err)) == 0)
            rc = scan_key(c, key.data, key.len, SCAN_ZSET, s, err);
        *place = sets[i].place;
    }
    if (rc == 1 && where) {
        cw_buf_append(where, key.data, key.len);
        if (where->oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    cw_buf_free(&key);
    cw_argv_free(&names);
    cw_argv_free(&pools);
    return rc;
}

int cwork_client_find(cwork_client *client, const char *id, cwork_job_place *place,
                      cwork_listed_job *out, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !id || !place || !out)
        return cw_error(err, CWORK_EINVAL, "cwork_client_find: NULL argument");
    memset(out, 0, sizeof *out);
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards : cw_shards_find(client, (unsigned)shards, id, place, out, err);
    cw_conn *c;
    int rc = cw_redis_checkout(client->redis, &c, err);
    if (rc) return cw_client_fail("client.find", rc, err);
    found f = {id, out};
    scan s = {ascii(id) ? id : NULL, found_check, &f, NULL};
    cwork_job_place where = CWORK_PLACE_QUEUE;
    rc = find_in(c, &client->keys, &s, &where, NULL, NULL, err);
    if (rc >= 0) cw_damage_resolve(c, &client->keys);
    cw_redis_checkin(client->redis, c);
    if (rc < 0) return cw_client_fail("client.find", rc, err);
    if (rc == 0) return cw_error(err, CWORK_ENOTFOUND, "no job with id %s", id);
    *place = where;
    return 0;
}

int cw_client_find_job(cw_conn *c, const cw_keys *k, const char *id, cwork_job_place *place,
                       cwork_listed_job *out, cw_buf *where, char pool_id[25], cwork_error *err)
{
    memset(out, 0, sizeof *out);
    found f = {id, out};
    scan s = {ascii(id) ? id : NULL, found_check, &f, NULL};
    int rc = find_in(c, k, &s, place, where, pool_id, err);
    if (rc >= 0) cw_damage_resolve(c, k);
    if (rc != 1) {
        cwork_job_free(out->job);
        out->job = NULL;
    }
    return rc;
}

/* KEYS = [<p>dead, the queue of each name], then ARGV[1] = <p>jobs: (the retry scripts). */
static void retry_keys(cw_argv *a, const cw_keys *k, const cw_argv *names)
{
    cw_buf dead;
    cw_buf_init(&dead);
    cw_key_dead(k, &dead);
    cw_argv_add_buf(a, &dead);
    cw_buf_free(&dead);
    cw_client_add_queues(a, k, names);
}

/* The retry script's reply: four counts, then the errors of jobs that stayed dead
 * because their queue could not take them. Returns 0, a negative code (the call
 * failed), or 1 when the counts are valid but some jobs stayed (err has the first). */
static int retry_reply(int rc, redisReply *r, int64_t v[4], cwork_error *err)
{
    const char *what = "retry script", *stayed = NULL;
    if (rc == 0) rc = cw_reply_ints(r, v, 4, what, err);
    if (rc == 0 && cw_reply_at(r, 4) && (rc = cw_reply_at_str(r, 4, &stayed, NULL, what, err)) == 0)
        rc = (cw_error(err, CWORK_EREDIS, "redis: %s; the job stays dead", stayed), 1);
    cw_reply_free(r);
    return rc;
}

/* ---------------------------------------------------------------- delete, retry */

int cwork_client_delete(cwork_client *client, cwork_job_set set, int64_t at, const char *id,
                        cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !id) return cw_error(err, CWORK_EINVAL, "cwork_client_delete: NULL argument");
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0
                   ? shards
                   : cw_shards_act(client, (unsigned)shards, set, CWORK_ACTION_DELETE, at, id, err);
    cw_argv a = {0};
    int rc = cw_client_add_set_key(&a, &client->keys, set, err);
    char min[24], max[24];
    cw_score_range(at, min, max);
    cw_buf failures;
    cw_buf_init(&failures);
    cw_key_failures(&client->keys, &failures, id);
    cw_argv_add_buf(&a, &failures);
    cw_buf_free(&failures);
    cw_argv_add_str(&a, id);
    cw_argv_add_str(&a, min);
    cw_argv_add_str(&a, max);
    cw_conn *c = NULL;
    if (rc == 0 && (rc = cw_argv_check(&a, err)) == 0 &&
        (rc = cw_redis_checkout(client->redis, &c, err)) == 0) {
        redisReply *r = NULL;
        int64_t deleted = 0;
        rc = cw_conn_eval(c, &cw_script_client_delete, 2, 3, a.argv, a.lens, &r, err);
        if (rc == 0) rc = cw_reply_at_int(r, 0, &deleted, "delete script", err);
        if (rc == 0 && deleted == 0)
            rc = cw_error(err, CWORK_ENOTFOUND, "nothing deleted");
        else if (rc == 0 && set == CWORK_SET_SCHEDULED)
            rc = cw_client_delete_guards(c, &client->keys, r, 1,
                                         "client.delete_scheduled_job.unique", err);
        cw_reply_free(r);
        /* a damaged set (the script's WRONGTYPE; nothing deleted) is named with its type */
        rc = cw_client_explain_wrongtype(c, &client->keys, set, rc, err);
        cw_redis_checkin(client->redis, c);
    }
    cw_argv_free(&a);
    return rc && rc != CWORK_ENOTFOUND ? cw_client_fail("client.delete_job", rc, err) : rc;
}

int cwork_client_retry_dead(cwork_client *client, int64_t died_at, const char *id, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !id)
        return cw_error(err, CWORK_EINVAL, "cwork_client_retry_dead: NULL argument");
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards
                          : cw_shards_act(client, (unsigned)shards, CWORK_SET_DEAD,
                                          CWORK_ACTION_RETRY, died_at, id, err);
    cw_conn *c;
    int rc = cw_redis_checkout(client->redis, &c, err);
    if (rc) return cw_client_fail("client.retry_dead_job", rc, err);
    cw_argv names = {0};
    rc = cw_client_requeue_names(c, &client->keys, &names, err);
    cw_argv a = {0};
    retry_keys(&a, &client->keys, &names);
    char min[24], max[24];
    cw_score_range(died_at, min, max);
    cw_argv_add_int(&a, cw_now());
    cw_argv_add_str(&a, "one");
    cw_argv_add_str(&a, min);
    cw_argv_add_str(&a, id);
    cw_argv_add_str(&a, max);
    int64_t v[4] = {0, 0, 0, 0};
    if (rc == 0 && (rc = cw_argv_check(&a, err)) == 0) {
        redisReply *r = NULL;
        rc = cw_conn_eval(c, &cw_script_client_retry_dead, (int)(1 + names.n), 6, a.argv, a.lens,
                          &r, err);
        rc = retry_reply(rc, r, v, err);
    }
    if (rc == 1) rc = CWORK_EREDIS; /* the job stayed dead: its queue is damaged (err says how) */
    rc = cw_client_explain_wrongtype(c, &client->keys, CWORK_SET_DEAD, rc, err);
    cw_redis_checkin(client->redis, c);
    cw_argv_free(&a);
    cw_argv_free(&names);
    if (rc) return cw_client_fail("client.retry_dead_job", rc, err);
    if (v[0] == 0 && v[1] > 0)
        return cw_error(err, CWORK_ENOTFOUND,
                        "nothing retried: the job's name is not in known_jobs, it stays dead");
    return v[0] == 0 ? cw_error(err, CWORK_ENOTFOUND, "nothing retried") : 0;
}

/* ---------------------------------------------------------------- retry all, delete all */

/* Batches of the retry-all script with one `now`, until a batch looks at fewer than
 * CW_CLIENT_BATCH due members. Each batch removes what it handles from the due range
 * (requeued, or re-added at now + 5) or steps over it, so the loop ends; the bound from
 * the initial ZCARD only guards against writers adding due members meanwhile. */
static int retry_all(cw_conn *c, const cw_keys *k, const char *name, int64_t *count,
                     cwork_error *err)
{
    cw_argv known = {0}, names = {0};
    int rc = cw_client_requeue_names(c, k, &known, err);
    if (rc == 0 && name) { /* only the name's queue may receive jobs */
        if (cw_argv_find(&known, name, strlen(name)) >= 0) cw_argv_add_str(&names, name);
    } else if (rc == 0) {
        cw_argv_add_refs(&names, &known);
    }
    if (rc == 0) rc = cw_argv_check(&names, err);
    cw_argv a = {0};
    retry_keys(&a, k, &names);
    cw_argv_add_int(&a, cw_now());
    cw_argv_add_str(&a, "all");
    cw_argv_add_int(&a, CW_CLIENT_BATCH);
    cw_argv_add_int(&a, 0); /* the offset, replaced below */
    if (name) cw_argv_add_str(&a, name);
    int64_t total = 0, offset = 0, v[4] = {0, 0, 0, 0};
    int stayed = 0;
    if (rc == 0 && (rc = cw_argv_check(&a, err)) == 0)
        rc = cw_client_command_ints(c, 2, (const char *[]){"ZCARD", a.argv[0]},
                                    (const size_t[]){5, a.lens[0]}, &total, 1, err);
    int nkeys = (int)(1 + names.n);
    for (int64_t i = 0; rc == 0 && i <= total / CW_CLIENT_BATCH + 1; i++) {
        cw_argv_set_int(&a, (size_t)nkeys + 4, offset);
        if ((rc = cw_argv_check(&a, err)) != 0) break;
        cwork_error e = {0};
        redisReply *r = NULL;
        int brc = cw_conn_eval(c, &cw_script_client_retry_dead, nkeys, name ? 6 : 5, a.argv, a.lens,
                               &r, &e);
        brc = retry_reply(brc, r, v, &e);
        if (brc < 0) {
            rc = cw_error(err, brc, "%s", e.message);
            break;
        }
        /* Jobs whose queue is damaged stayed dead and were stepped over: the others
         * still go back, and the first such error is reported at the end. */
        if (brc == 1 && !stayed) stayed = cw_error(err, CWORK_EREDIS, "%s", e.message);
        *count += v[0];
        offset += v[2];
        if (v[3] < CW_CLIENT_BATCH) break;
    }
    cw_argv_free(&a);
    cw_argv_free(&names);
    cw_argv_free(&known);
    return rc ? rc : stayed;
}

/* Batches of the delete-by-name script over the ranks of the dead set. */
static int delete_by_name(cw_conn *c, const char *key, const char *name, int64_t *count,
                          cwork_error *err)
{
    int64_t total = 0, from = 0, v[2] = {0, 0};
    int rc = cw_client_command_ints(c, 2, (const char *[]){"ZCARD", key}, NULL, &total, 1, err);
    for (int64_t i = 0; rc == 0 && i <= total / CW_CLIENT_BATCH + 1; i++) {
        char start[24], stop[24];
        snprintf(start, sizeof start, "%lld", (long long)from);
        snprintf(stop, sizeof stop, "%lld", (long long)(from + CW_CLIENT_BATCH - 1));
        const char *argv[] = {key, name, start, stop};
        size_t lens[] = {strlen(key), strlen(name), strlen(start), strlen(stop)};
        redisReply *r = NULL;
        rc = cw_conn_eval(c, &cw_script_client_delete_by_name, 1, 3, argv, lens, &r, err);
        if (rc == 0) rc = cw_reply_ints(r, v, 2, "delete-by-name script", err);
        cw_reply_free(r);
        if (rc) break;
        *count += v[0];
        from += v[1] - v[0];
        if (v[1] < CW_CLIENT_BATCH) break;
    }
    return rc;
}

/* Checks out a connection and builds the dead set's key for the functions below. */
static int dead_begin(cwork_client *client, cw_conn **c, cw_buf *key, cwork_error *err)
{
    cw_buf_init(key);
    if (!client) return cw_error(err, CWORK_EINVAL, "client: NULL argument");
    cw_key_dead(&client->keys, key);
    if (key->oom) return cw_error(err, CWORK_ENOMEM, "out of memory");
    return cw_redis_checkout(client->redis, c, err);
}

static int dead_end(cwork_client *client, cw_conn *c, cw_buf *key, int rc, const char *step,
                    cwork_error *err)
{
    rc = cw_client_explain_wrongtype(c, &client->keys, CWORK_SET_DEAD, rc, err);
    if (c) cw_redis_checkin(client->redis, c);
    cw_buf_free(key);
    return rc ? cw_client_fail(step, rc, err) : 0;
}

int cwork_client_retry_all_dead(cwork_client *client, const char *name, int64_t *count,
                                cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    int shards = cw_client_shard_count(client, err);
    if (shards != 1) {
        if (shards < 0) return shards;
        cw_shards_bulk b = {.kind = CW_SHARDS_RETRY_ALL_DEAD, .name = name};
        int brc = cw_shards_bulk_run(client, (unsigned)shards, &b, err);
        if (count) *count = b.count;
        return brc;
    }
    int64_t n = 0;
    cw_conn *c = NULL;
    cw_buf key;
    int rc = dead_begin(client, &c, &key, err);
    if (rc == 0) rc = retry_all(c, &client->keys, name, &n, err);
    if (count) *count = n; /* what went back before a failure did go back */
    return dead_end(client, c, &key, rc, "client.retry_all_dead_jobs.do", err);
}

int cwork_client_delete_all_dead(cwork_client *client, const char *name, int64_t *count,
                                 cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    int shards = cw_client_shard_count(client, err);
    if (shards != 1) {
        if (shards < 0) return shards;
        cw_shards_bulk b = {.kind = CW_SHARDS_DELETE_ALL_DEAD, .name = name};
        int brc = cw_shards_bulk_run(client, (unsigned)shards, &b, err);
        if (count) *count = b.count;
        return brc;
    }
    int64_t n = 0;
    cw_conn *c = NULL;
    cw_buf key;
    int rc = dead_begin(client, &c, &key, err);
    if (rc == 0 && name)
        rc = delete_by_name(c, key.data, name, &n, err);
    else if (rc == 0) /* Go DELs the key; removing every rank does that and counts */
        rc = cw_client_command_ints(c, 4, (const char *[]){"ZREMRANGEBYRANK", key.data, "0", "-1"},
                                    NULL, &n, 1, err);
    if (count) *count = n;
    return dead_end(client, c, &key, rc, "client.delete_all_dead_jobs", err);
}

int cwork_client_trim_dead(cwork_client *client, int64_t older_than, int64_t keep, int64_t *removed,
                           cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0
                   ? shards
                   : cw_shards_trim_dead(client, (unsigned)shards, older_than, keep, removed, err);
    int64_t by_age = 0, by_count = 0;
    cw_conn *c = NULL;
    cw_buf key;
    int rc = dead_begin(client, &c, &key, err);
    char bound[32];
    if (rc == 0 && older_than != 0) { /* died before older_than */
        snprintf(bound, sizeof bound, "(%lld", (long long)older_than);
        rc = cw_client_command_ints(c, 4,
                                    (const char *[]){"ZREMRANGEBYSCORE", key.data, "-inf", bound},
                                    NULL, &by_age, 1, err);
    }
    if (rc == 0 && keep >= 0) { /* all but the newest keep */
        snprintf(bound, sizeof bound, "%lld", (long long)(-keep - 1));
        rc = cw_client_command_ints(c, 4, (const char *[]){"ZREMRANGEBYRANK", key.data, "0", bound},
                                    NULL, &by_count, 1, err);
    }
    if (removed) *removed = by_age + by_count;
    return dead_end(client, c, &key, rc, "client.trim_dead_jobs", err);
}
