/* The admin client's figures for dashboards (the web UI's first tab, `cwork stats`):
 * the daily processed/failed counts cwork pools keep, and one row per job name with
 * what waits, runs, retries and died. */
#include "client.h"

#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- daily counts */

#define MAX_DAYS 366

/* A counter field of an HMGET reply: nil is 0; text that is no whole number is 0 and
 * *damaged is set. */
static int64_t counter(const redisReply *v, int *damaged)
{
    int64_t n = 0;
    const char *s;
    size_t len;
    if (cw_reply_str_or_nil(v, &s, &len, NULL, NULL) != 0 ||
        (s && (cw_parse_int64(s, len, &n) != 0 || n < 0))) {
        *damaged = 1;
        return 0;
    }
    return n;
}

int cwork_client_daily_stats(cwork_client *client, unsigned days, cwork_day_stats **out, size_t *n,
                             cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !out || !n)
        return cw_error(err, CWORK_EINVAL, "cwork_client_daily_stats: NULL argument");
    *out = NULL;
    *n = 0;
    if (days < 1 || days > MAX_DAYS)
        return cw_error(err, CWORK_EINVAL, "days must be from 1 to %d, not %u", MAX_DAYS, days);
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards
                          : cw_shards_daily_stats(client, (unsigned)shards, days, out, n, err);
    cwork_day_stats *d = cw_calloc(days, sizeof *d);
    if (!d) return cw_error(err, CWORK_ENOMEM, "out of memory");
    time_t today = (time_t)cw_now();
    for (unsigned i = 0; i < days; i++) {
        time_t t = today - (time_t)(days - 1 - i) * 86400;
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(d[i].date, sizeof d[i].date, "%Y-%m-%d", &tm);
    }
    cw_conn *c = NULL;
    int rc = cw_redis_checkout(client->redis, &c, err);
    cw_buf key;
    cw_buf_init(&key);
    for (unsigned i = 0; rc == 0 && i < days; i++) {
        cw_buf_reset(&key);
        cw_key_stat_day(&client->keys, &key, d[i].date);
        const char *argv[] = {"HMGET", key.data, "processed", "failed"};
        size_t lens[] = {5, key.len, 9, 6};
        rc = key.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                     : cw_conn_append(c, 4, argv, lens, err);
    }
    int damaged = 0;
    for (unsigned i = 0; rc == 0 && i < days; i++) {
        redisReply *r = NULL;
        if ((rc = cw_conn_read(c, &r, err)) != 0) break;
        size_t nfields = 0;
        if (cw_reply_array(r, 2, &nfields, NULL, NULL) == 0 && nfields == 2) {
            d[i].processed = counter(cw_reply_at(r, 0), &damaged);
            d[i].failed = counter(cw_reply_at(r, 1), &damaged);
        } else {
            damaged = 1; /* WRONGTYPE: a key someone else wrote */
            cw_buf_reset(&key);
            cw_key_stat_day(&client->keys, &key, d[i].date);
            if (!key.oom) cw_damage_reply(&r, key.data, key.len);
        }
        cw_reply_free(r);
    }
    cw_buf_free(&key);
    if (rc == 0) cw_damage_resolve(c, &client->keys);
    if (c) cw_redis_checkin(client->redis, c);
    if (rc) {
        cw_free(d);
        return cw_client_fail("client.daily_stats", rc, err);
    }
    if (damaged)
        cw_log(CWORK_LOG_WARN, "client.daily_stats.damaged", "error",
               "a daily stats key is not a hash of whole numbers; read as 0", NULL);
    *out = d;
    *n = days;
    return 0;
}

/* ---------------------------------------------------------------- per job name */

#define DEFAULT_SAMPLE 1000
#define MAX_SAMPLE 100000

void cwork_job_types_free(cwork_job_types *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) {
        cw_free(t->types[i].job_name);
        cw_free(t->types[i].last_error);
    }
    cw_free(t->types);
    memset(t, 0, sizeof *t);
}

/* The rows, kept sorted by name while they are collected. */
typedef struct rows {
    cwork_job_type_stats *v;
    size_t n, cap;
} rows;

/* The row of name[0..len), added when missing; NULL when out of memory. */
static cwork_job_type_stats *row_of(rows *r, const char *name, size_t len)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *m = r->v[mid].job_name;
        size_t mlen = strlen(m);
        int cmp = memcmp(m, name, mlen < len ? mlen : len);
        if (cmp == 0) cmp = mlen < len ? -1 : mlen > len ? 1 : 0;
        if (cmp == 0) return &r->v[mid];
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        cwork_job_type_stats *v = cw_realloc(r->v, cap * sizeof *v);
        if (!v) return NULL;
        r->v = v;
        r->cap = cap;
    }
    char *copy = cw_strndup(name, len);
    if (!copy) return NULL;
    memmove(&r->v[lo + 1], &r->v[lo], (r->n - lo) * sizeof *r->v);
    memset(&r->v[lo], 0, sizeof r->v[lo]);
    r->v[lo].job_name = copy;
    r->n++;
    return &r->v[lo];
}

/* Counts the decodable members of a ZREVRANGE reply per name into retry or dead, and
 * keeps the error of the latest failure. */
static int tally(rows *r, const redisReply *members, int dead, cwork_error *err)
{
    for (size_t i = 0; cw_reply_at(members, i); i++) {
        cwork_job *job = NULL;
        cwork_error e = {0};
        const char *bytes;
        size_t len;
        if (cw_reply_at_str(members, i, &bytes, &len, NULL, NULL) != 0) continue;
        int rc = cw_job_decode(bytes, len, &job, &e);
        if (rc == CWORK_ENOMEM) return cw_error(err, rc, "out of memory");
        if (rc != 0) continue;
        if (job->name.len == 0 || memchr(job->name.ptr, '\0', job->name.len)) {
            cwork_job_free(job);
            continue;
        }
        cwork_job_type_stats *row = row_of(r, job->name.ptr, job->name.len);
        if (row) {
            if (dead)
                row->dead++;
            else
                row->retry++;
            if (job->err.len > 0 && (!row->last_error || job->failed_at > row->last_failed_at)) {
                char *copy = cw_strndup(job->err.ptr, job->err.len);
                if (copy) {
                    cw_free(row->last_error);
                    row->last_error = copy;
                    row->last_failed_at = job->failed_at;
                } else {
                    row = NULL;
                }
            }
        }
        cwork_job_free(job);
        if (!row) return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    return 0;
}

/* ZCARD and ZREVRANGE 0 sample-1 of the retry and the dead set, in one round trip. */
static int read_sets(cwork_client *client, size_t sample, rows *r, cwork_job_types *out,
                     cwork_error *err)
{
    cw_buf retry, dead;
    cw_buf_init(&retry);
    cw_buf_init(&dead);
    cw_key_retry(&client->keys, &retry);
    cw_key_dead(&client->keys, &dead);
    char stop[24];
    snprintf(stop, sizeof stop, "%zu", sample - 1);
    cw_conn *c = NULL;
    int rc = retry.oom || dead.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                                   : cw_redis_checkout(client->redis, &c, err);
    const cw_buf *keys[2] = {&retry, &dead};
    for (int i = 0; rc == 0 && i < 2; i++) {
        const char *zcard[] = {"ZCARD", keys[i]->data};
        size_t zcard_lens[] = {5, keys[i]->len};
        const char *range[] = {"ZREVRANGE", keys[i]->data, "0", stop};
        size_t range_lens[] = {9, keys[i]->len, 1, strlen(stop)};
        if ((rc = cw_conn_append(c, 2, zcard, zcard_lens, err)) == 0)
            rc = cw_conn_append(c, 4, range, range_lens, err);
    }
    redisReply *rep[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; rc == 0 && i < 4; i++)
        rc = cw_conn_read(c, &rep[i], err);
    /* a damaged set counts nothing, and is named */
    for (int i = 0; rc == 0 && i < 4; i++)
        cw_damage_reply(&rep[i], keys[i / 2]->data, keys[i / 2]->len);
    if (rc == 0) cw_damage_resolve(c, &client->keys);
    if (c) cw_redis_checkin(client->redis, c);
    size_t retry_read = 0, dead_read = 0;
    int64_t retry_total = 0, dead_total = 0;
    if (rc == 0 && rep[0]) rc = cw_reply_int(rep[0], &retry_total, "ZCARD", err);
    if (rc == 0 && rep[1]) rc = cw_reply_array(rep[1], 0, &retry_read, "ZREVRANGE", err);
    if (rc == 0 && rep[2]) rc = cw_reply_int(rep[2], &dead_total, "ZCARD", err);
    if (rc == 0 && rep[3]) rc = cw_reply_array(rep[3], 0, &dead_read, "ZREVRANGE", err);
    if (rc == 0) { /* added up over the shards of a sharded namespace */
        out->retry_total += retry_total;
        out->dead_total += dead_total;
        out->retry_read += (int64_t)retry_read;
        out->dead_read += (int64_t)dead_read;
        rc = tally(r, rep[1], 0, err);
    }
    if (rc == 0) rc = tally(r, rep[3], 1, err);
    cw_client_free_replies(rep, 4);
    cw_buf_free(&retry);
    cw_buf_free(&dead);
    return rc;
}

int cwork_client_job_types(cwork_client *client, size_t sample, cwork_job_types *out,
                           cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !out)
        return cw_error(err, CWORK_EINVAL, "cwork_client_job_types: NULL argument");
    memset(out, 0, sizeof *out);
    if (sample > MAX_SAMPLE)
        return cw_error(err, CWORK_EINVAL, "sample must be at most %d", MAX_SAMPLE);
    if (sample == 0) sample = DEFAULT_SAMPLE;
    rows r = {0};
    cwork_queue_info *q = NULL;
    size_t nq = 0;
    int rc = cwork_client_queues(client, &q, &nq, err);
    for (size_t i = 0; rc == 0 && i < nq; i++) {
        cwork_job_type_stats *row = row_of(&r, q[i].job_name, strlen(q[i].job_name));
        if (!row) {
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
            break;
        }
        row->known = true;
        row->paused = q[i].paused;
        row->waiting = q[i].count;
        row->latency = q[i].latency;
    }
    cwork_queue_infos_free(q, nq);
    /* the sets of each shard (the queues and workers above are merged already) */
    int shards = rc == 0 ? cw_client_shard_count(client, err) : 1;
    if (shards < 0) rc = shards;
    for (int i = 0; rc == 0 && i < shards; i++)
        rc = read_sets(shards == 1 ? client : cw_client_shard_at(client, (unsigned)i), sample, &r,
                       out, err);
    cwork_worker_observation *w = NULL;
    size_t nw = 0;
    if (rc == 0) {
        /* A malformed heartbeat or worker hash must not blank the dashboard. */
        int wrc = cwork_client_workers(client, &w, &nw, err);
        if (wrc != 0 && wrc != CWORK_EPROTO) rc = wrc;
    }
    for (size_t i = 0; rc == 0 && i < nw; i++) {
        if (!w[i].is_busy || !w[i].job_name[0]) continue;
        cwork_job_type_stats *row = row_of(&r, w[i].job_name, strlen(w[i].job_name));
        if (!row)
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        else
            row->running++;
    }
    cwork_worker_observations_free(w, nw);
    out->types = r.v;
    out->n = r.n;
    if (rc) {
        cwork_job_types_free(out);
        return cw_client_fail("client.job_types", rc, err);
    }
    return 0;
}
