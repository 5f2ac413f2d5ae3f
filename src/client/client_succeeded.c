/* Listing kept successes (PROTOCOL §22): the newest entries of each type's
 * <p>cwork:succeeded:<name> zset, merged newest first, each with its result when one is
 * still kept. Two round trips after the names: the ranges, then the results. A damaged
 * key (known_jobs, a name's zset, a result) reads as empty and is listed
 * (cwork_client_damage), as in the other views: the rest is still shown. */
#include "client.h"

#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_LIMIT 100
#define MAX_LIMIT 10000

/* Reads `"<field>":<integer>` at *p, moving past it. */
static bool take_int(const char **p, const char *end, const char *field, int64_t *v)
{
    size_t fl = strlen(field);
    if ((size_t)(end - *p) < fl || memcmp(*p, field, fl) != 0) return false;
    *p += fl;
    const char *start = *p;
    while (*p < end && (**p == '-' || (**p >= '0' && **p <= '9')))
        (*p)++;
    return cw_parse_int64(start, (size_t)(*p - start), v) == 0;
}

/* A member as commit_results.c writes it: {"ran_at":N,"took_us":N,"job":<job bytes>}. */
static int parse_member(const char *s, size_t len, cwork_succeeded_job *j)
{
    const char *p = s, *end = s + len;
    if (!take_int(&p, end, "{\"ran_at\":", &j->ran_at_ms) ||
        !take_int(&p, end, ",\"took_us\":", &j->took_us) || (size_t)(end - p) < 8 ||
        memcmp(p, ",\"job\":", 7) != 0 || end[-1] != '}')
        return CWORK_EPROTO;
    p += 7;
    j->job_len = (size_t)(end - 1 - p);
    j->job = cw_strndup(p, j->job_len);
    cwork_job *job = NULL;
    if (!j->job) return CWORK_ENOMEM;
    if (cwork_job_decode(j->job, j->job_len, &job, NULL) != 0) return CWORK_EPROTO;
    j->name = cw_strdup(cwork_job_name(job));
    j->id = cw_strdup(cwork_job_id(job));
    cwork_job_free(job);
    return j->name && j->id ? 0 : CWORK_ENOMEM;
}

static void entry_clear(cwork_succeeded_job *j)
{
    cw_free(j->name);
    cw_free(j->id);
    cw_free(j->job);
    cw_free(j->result);
    memset(j, 0, sizeof *j);
}

void cwork_succeeded_jobs_free(cwork_succeeded_job *jobs, size_t n)
{
    for (size_t i = 0; jobs && i < n; i++)
        entry_clear(&jobs[i]);
    cw_free(jobs);
}

/* Newest first; ties by name and id, so that the order is stable. */
static int newest_first(const void *a, const void *b)
{
    const cwork_succeeded_job *x = a, *y = b;
    if (x->finished_at_ms != y->finished_at_ms)
        return x->finished_at_ms > y->finished_at_ms ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->id, y->id);
}

/* Appends the entries of one ZREVRANGE … WITHSCORES reply (NULL: a damaged key, no
 * entries); members that are not cwork's are skipped (logged). */
static int collect(const redisReply *r, const char *key, cwork_succeeded_job **jobs, size_t *n,
                   size_t *cap, cwork_error *err)
{
    size_t m = 0;
    if (!r) return 0;
    int rc = cw_reply_array(r, 0, &m, key, err);
    for (size_t i = 0; rc == 0 && i + 1 < m; i += 2) {
        const char *member, *score;
        size_t mlen, slen;
        if ((rc = cw_reply_at_str(r, i, &member, &mlen, key, err)) != 0 ||
            (rc = cw_reply_at_str(r, i + 1, &score, &slen, key, err)) != 0)
            break;
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 16;
            cwork_succeeded_job *more = cw_calloc(nc, sizeof *more);
            if (!more) return cw_error(err, CWORK_ENOMEM, "out of memory");
            if (*n) memcpy(more, *jobs, *n * sizeof *more);
            cw_free(*jobs);
            *jobs = more;
            *cap = nc;
        }
        cwork_succeeded_job *j = &(*jobs)[*n];
        int prc = parse_member(member, mlen, j);
        if (prc == 0 && cw_score_parse(score, slen, &j->finished_at_ms) != 0) prc = CWORK_EPROTO;
        if (prc == CWORK_ENOMEM) {
            entry_clear(j);
            return cw_error(err, CWORK_ENOMEM, "out of memory");
        }
        if (prc) {
            cw_log(CWORK_LOG_WARN, "client.succeeded", "key", key, "error",
                   "a member that is not a kept success: skipped", NULL);
            entry_clear(j);
            continue;
        }
        (*n)++;
    }
    return rc;
}

/* The kept successes of every name in names: one pipelined ZREVRANGE per name. */
static int read_ranges(cwork_client *client, cw_conn *c, const cw_argv *names, size_t limit,
                       cwork_succeeded_job **jobs, size_t *n, cwork_error *err)
{
    cw_argv keys = {0};
    cw_buf key;
    cw_buf_init(&key);
    for (size_t i = 0; i < names->n; i++) {
        cw_buf_reset(&key);
        cw_key_succeeded(&client->keys, &key, names->argv[i]);
        cw_argv_add_buf(&keys, &key);
    }
    cw_buf_free(&key);
    char stop[24];
    snprintf(stop, sizeof stop, "%zu", limit - 1);
    int rc = cw_argv_check(&keys, err);
    for (size_t i = 0; rc == 0 && i < keys.n; i++) {
        const char *argv[] = {"ZREVRANGE", keys.argv[i], "0", stop, "WITHSCORES"};
        size_t lens[] = {9, keys.lens[i], 1, strlen(stop), 10};
        rc = cw_conn_append(c, 5, argv, lens, err);
    }
    redisReply **r = keys.n ? cw_calloc(keys.n, sizeof *r) : NULL;
    if (rc == 0 && keys.n && !r) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0 && keys.n) rc = cw_client_read_damaged(c, keys.n, r, keys.argv, keys.lens, err);
    size_t cap = 0;
    for (size_t i = 0; rc == 0 && i < keys.n; i++)
        rc = collect(r[i], keys.argv[i], jobs, n, &cap, err);
    if (r) cw_client_free_replies(r, keys.n);
    cw_free(r);
    cw_argv_free(&keys);
    return rc;
}

/* The results still kept for the listed jobs: one pipelined GET each (a damaged result
 * key: no result, the key listed). */
static int read_results(cwork_client *client, cw_conn *c, cwork_succeeded_job *jobs, size_t n,
                        cwork_error *err)
{
    cw_argv keys = {0};
    cw_buf key;
    cw_buf_init(&key);
    for (size_t i = 0; i < n; i++) {
        cw_buf_reset(&key);
        cw_key_result(&client->keys, &key, jobs[i].id);
        cw_argv_add_buf(&keys, &key);
    }
    cw_buf_free(&key);
    int rc = cw_argv_check(&keys, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *argv[] = {"GET", keys.argv[i]};
        size_t lens[] = {3, keys.lens[i]};
        rc = cw_conn_append(c, 2, argv, lens, err);
    }
    redisReply **r = n ? cw_calloc(n, sizeof *r) : NULL;
    if (rc == 0 && n && !r) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0 && n) rc = cw_client_read_damaged(c, n, r, keys.argv, keys.lens, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *s = NULL;
        size_t len = 0;
        if (!r[i]) continue; /* damaged */
        rc = cw_reply_str_or_nil(r[i], &s, &len, "result", err);
        if (rc == 0 && s) {
            jobs[i].result = cw_strndup(s, len);
            jobs[i].result_len = len;
            if (!jobs[i].result) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        }
    }
    if (r) cw_client_free_replies(r, n);
    cw_free(r);
    cw_argv_free(&keys);
    return rc;
}

int cwork_client_succeeded(cwork_client *client, const char *name, size_t limit,
                           cwork_succeeded_job **out, size_t *n, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (out) *out = NULL;
    if (n) *n = 0;
    if (!client || !out || !n)
        return cw_error(err, CWORK_EINVAL,
                        "cwork_client_succeeded: client, out and n are required");
    if (limit == 0) limit = DEFAULT_LIMIT;
    if (limit > MAX_LIMIT)
        return cw_error(err, CWORK_EINVAL, "cwork_client_succeeded: limit %zu is over %d", limit,
                        MAX_LIMIT);
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards
                          : cw_shards_succeeded(client, (unsigned)shards, name, limit, out, n, err);
    cw_conn *c = NULL;
    cw_argv names = {0};
    cwork_succeeded_job *jobs = NULL;
    size_t count = 0;
    int rc = cw_redis_checkout(client->redis, &c, err);
    if (rc == 0 && name) {
        cw_argv_add_str(&names, name);
        rc = cw_argv_check(&names, err);
    } else if (rc == 0) {
        rc = cw_client_known_names(c, &client->keys, &names, err);
    }
    if (rc == 0) rc = read_ranges(client, c, &names, limit, &jobs, &count, err);
    if (rc == 0 && count > 1) qsort(jobs, count, sizeof *jobs, newest_first);
    if (rc == 0 && count > limit) {
        for (size_t i = limit; i < count; i++)
            entry_clear(&jobs[i]);
        count = limit;
    }
    if (rc == 0) rc = read_results(client, c, jobs, count, err);
    if (rc == 0) cw_damage_resolve(c, &client->keys);
    if (c) cw_redis_checkin(client->redis, c);
    cw_argv_free(&names);
    if (rc) {
        cwork_succeeded_jobs_free(jobs, count);
        return cw_client_fail("client.succeeded", rc, err);
    }
    *out = jobs;
    *n = count;
    return 0;
}
