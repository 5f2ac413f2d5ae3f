/* The admin client's views of what is coming: the jobs waiting in a queue, and the
 * periodic schedules of the namespace (published by cwork pools, or seen as instances
 * in the scheduled set). */
#include "client.h"

#include "cron.h"
#include "log.h"
#include "periodic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- a queue's jobs */

int cwork_client_queue_jobs(cwork_client *client, const char *name, unsigned page,
                            unsigned page_size, cwork_listed_job **out, size_t *n, int64_t *total,
                            cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !name || !out || !n)
        return cw_error(err, CWORK_EINVAL, "cwork_client_queue_jobs: NULL argument");
    *out = NULL;
    *n = 0;
    if (total) *total = 0;
    if (page_size > CW_CLIENT_MAX_PAGE_SIZE)
        return cw_error(err, CWORK_EINVAL, "page size %u is more than %d", page_size,
                        CW_CLIENT_MAX_PAGE_SIZE);
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards
                          : cw_shards_queue_jobs(client, (unsigned)shards, name, page, page_size,
                                                 out, n, total, err);
    size_t size = page_size ? page_size : CWORK_PAGE_SIZE;
    uint64_t skip = ((uint64_t)(page ? page : 1) - 1) * size;
    /* Workers take from the right end: the page counts from there, [skip, skip+size). */
    char start[24], stop[24];
    snprintf(start, sizeof start, "-%llu", (unsigned long long)skip + size);
    snprintf(stop, sizeof stop, "-%llu", (unsigned long long)skip + 1);
    cw_buf key;
    cw_buf_init(&key);
    cw_key_queue(&client->keys, &key, name);
    cwork_listed_job *jobs = cw_calloc(size, sizeof *jobs);
    cw_conn *c = NULL;
    int rc = key.oom || !jobs ? cw_error(err, CWORK_ENOMEM, "out of memory")
                              : cw_redis_checkout(client->redis, &c, err);
    const char *llen[] = {"LLEN", key.data};
    size_t llen_lens[] = {4, key.len};
    const char *range[] = {"LRANGE", key.data, start, stop};
    size_t range_lens[] = {6, key.len, strlen(start), strlen(stop)};
    if (rc == 0 && (rc = cw_conn_append(c, 2, llen, llen_lens, err)) == 0)
        rc = cw_conn_append(c, 4, range, range_lens, err);
    redisReply *r[2] = {NULL, NULL};
    for (int i = 0; rc == 0 && i < 2; i++)
        rc = cw_conn_read(c, &r[i], err);
    /* a damaged queue lists nothing, and is named */
    int damaged = 0;
    for (int i = 0; rc == 0 && i < 2; i++)
        damaged |= cw_damage_reply(&r[i], key.data, key.len);
    if (rc == 0 && damaged) cw_damage_resolve(c, &client->keys);
    if (c) cw_redis_checkin(client->redis, c);
    size_t count = 0, nrange = 0;
    int64_t queued = 0;
    if (rc == 0 && !damaged) rc = cw_reply_int(r[0], &queued, "LLEN", err);
    if (rc == 0 && !damaged) rc = cw_reply_array(r[1], 0, &nrange, "LRANGE", err);
    /* LRANGE gives left to right: the next job to run is its last element. */
    for (size_t i = nrange; rc == 0 && i-- > 0 && count < size;) {
        cwork_error e = {0};
        const char *bytes;
        size_t len;
        if (cw_reply_at_str(r[1], i, &bytes, &len, NULL, NULL) != 0) continue;
        int drc = cw_job_decode(bytes, len, &jobs[count].job, &e);
        if (drc == CWORK_ENOMEM)
            rc = cw_error(err, drc, "out of memory");
        else if (drc != 0)
            cw_client_fail("client.queue_jobs.new_job", drc, &e);
        else
            count++;
    }
    if (rc == 0 && total) *total = queued;
    cw_client_free_replies(r, 2);
    cw_buf_free(&key);
    if (rc) {
        cwork_listed_jobs_free(jobs, count);
        return cw_client_fail("client.queue_jobs", rc, err);
    }
    *out = jobs;
    *n = count;
    return 0;
}

/* ---------------------------------------------------------------- periodic schedules */

/* Instances in the scheduled set read for Go pools' schedules (the soonest). */
#define INSTANCES_READ 1000

void cwork_periodic_schedules_free(cwork_periodic_schedule *s, size_t n)
{
    if (!s) return;
    for (size_t i = 0; i < n; i++) {
        cw_free(s[i].job_name);
        cw_free(s[i].spec);
    }
    cw_free(s);
}

/* A schedule while it is collected: the soonest waiting instance kept apart. */
typedef struct sched {
    cwork_periodic_schedule s;
    int64_t instance_at; /* 0: none seen */
} sched;

typedef struct schedules {
    sched *v;
    size_t n, cap;
    int oom;
} schedules;

/* The entry of (name, spec), added when missing; NULL when out of memory. */
static sched *entry(schedules *s, const char *name, size_t name_len, const char *spec,
                    size_t spec_len)
{
    for (size_t i = 0; i < s->n; i++) {
        const cwork_periodic_schedule *e = &s->v[i].s;
        if (strlen(e->job_name) == name_len && !memcmp(e->job_name, name, name_len) &&
            strlen(e->spec) == spec_len && !memcmp(e->spec, spec, spec_len))
            return &s->v[i];
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 8;
        sched *v = cw_realloc(s->v, cap * sizeof *v);
        if (!v) return NULL;
        s->v = v;
        s->cap = cap;
    }
    sched *e = &s->v[s->n];
    memset(e, 0, sizeof *e);
    e->s.job_name = cw_strndup(name, name_len);
    e->s.spec = cw_strndup(spec, spec_len);
    if (!e->s.job_name || !e->s.spec) {
        cw_free(e->s.job_name);
        cw_free(e->s.spec);
        return NULL;
    }
    s->n++;
    return e;
}

/* A whole number member of a parsed JSON object, or 0. */
static int64_t json_int(const gj_value *obj, const char *key)
{
    const gj_value *v = cw_gj_object_get(obj, key, strlen(key));
    return v && v->type == GJ_FLOAT && v->as.f >= -9e15 && v->as.f <= 9e15 ? (int64_t)v->as.f : 0;
}

/* One field and value of <p>cwork:periodic; entries not seen for a while, or that
 * someone else wrote in another shape, are passed by. */
static void add_published(schedules *s, const redisReply *f, const redisReply *v, int64_t now)
{
    gj_value *field = NULL, *value = NULL;
    const char *fs, *vs;
    size_t flen, vlen;
    if (cw_reply_str(f, &fs, &flen, NULL, NULL) != 0 ||
        cw_reply_str(v, &vs, &vlen, NULL, NULL) != 0 || cw_gj_parse(fs, flen, &field, NULL) != 0 ||
        cw_gj_parse(vs, vlen, &value, NULL) != 0 || field->type != GJ_ARRAY ||
        field->as.arr.len != 2 || field->as.arr.items[0]->type != GJ_STRING ||
        field->as.arr.items[1]->type != GJ_STRING || value->type != GJ_OBJECT) {
        cw_gj_free(field);
        cw_gj_free(value);
        return;
    }
    int64_t seen = json_int(value, "seen_at");
    if (seen >= now - CW_PERIODIC_PUBLISHED_TTL) {
        const gj_str *name = &field->as.arr.items[0]->as.s;
        const gj_str *spec = &field->as.arr.items[1]->as.s;
        sched *e = entry(s, name->ptr, name->len, spec->ptr, spec->len);
        if (!e) {
            s->oom = 1;
        } else if (seen > e->s.seen_at) {
            e->s.seen_at = seen;
            e->s.next_at = json_int(value, "next_at");
        }
    }
    cw_gj_free(field);
    cw_gj_free(value);
}

/* A scheduled member whose id is "periodic:<name>:<spec>:<fire>" (PROTOCOL §10.3); others
 * are passed by. */
static void add_instance(schedules *s, const redisReply *m, const redisReply *score)
{
    int64_t at;
    cwork_job *job = NULL;
    const char *bytes;
    size_t len;
    if (cw_reply_str(m, &bytes, &len, NULL, NULL) != 0 || cw_client_score(score, &at) != 0 ||
        cw_job_decode(bytes, len, &job, NULL) != 0)
        return;
    const char *id = job->id.ptr, *name = job->name.ptr;
    size_t id_len = job->id.len, name_len = job->name.len;
    const char *colon = NULL; /* the last one, before <fire> */
    for (size_t i = id_len; i-- > 0 && !colon;)
        if (id[i] == ':') colon = id + i;
    const char *spec = id + 10 + name_len;
    if (name_len > 0 && id_len > 10 + name_len && memcmp(id, "periodic:", 9) == 0 &&
        memcmp(id + 9, name, name_len) == 0 && id[9 + name_len] == ':' && colon && colon > spec) {
        sched *e = entry(s, name, name_len, spec, (size_t)(colon - spec));
        if (!e)
            s->oom = 1;
        else if (e->instance_at == 0 || at < e->instance_at)
            e->instance_at = at;
    }
    cwork_job_free(job);
}

/* The next fire time of a schedule, from the spec, when the pool's is out of date. */
static int64_t next_from_spec(const char *spec, int64_t now)
{
    cw_cron *c = NULL;
    if (cw_cron_parse(spec, &c, NULL) != 0) return 0;
    int64_t next = cw_cron_next(c, now);
    cw_cron_free(c);
    return next;
}

static int by_next(const void *a, const void *b)
{
    const cwork_periodic_schedule *x = a, *y = b;
    if ((x->next_at == 0) != (y->next_at == 0)) return x->next_at == 0 ? 1 : -1;
    if (x->next_at != y->next_at) return x->next_at < y->next_at ? -1 : 1;
    int c = strcmp(x->job_name, y->job_name);
    return c ? c : strcmp(x->spec, y->spec);
}

/* HGETALL <p>cwork:periodic and ZRANGE <p>scheduled 0 999 WITHSCORES, pipelined. A
 * published key of another type is passed by (logged). */
static int read_schedules(cwork_client *client, schedules *s, int64_t now, cwork_error *err)
{
    cw_buf pub, sch;
    cw_buf_init(&pub);
    cw_buf_init(&sch);
    cw_key_periodic_published(&client->keys, &pub);
    cw_key_scheduled(&client->keys, &sch);
    char stop[24];
    snprintf(stop, sizeof stop, "%d", INSTANCES_READ - 1);
    cw_conn *c = NULL;
    int rc = pub.oom || sch.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                                : cw_redis_checkout(client->redis, &c, err);
    const char *hgetall[] = {"HGETALL", pub.data};
    size_t hgetall_lens[] = {7, pub.len};
    const char *range[] = {"ZRANGE", sch.data, "0", stop, "WITHSCORES"};
    size_t range_lens[] = {6, sch.len, 1, strlen(stop), 10};
    if (rc == 0 && (rc = cw_conn_append(c, 2, hgetall, hgetall_lens, err)) == 0)
        rc = cw_conn_append(c, 5, range, range_lens, err);
    redisReply *r[2] = {NULL, NULL};
    for (int i = 0; rc == 0 && i < 2; i++)
        rc = cw_conn_read(c, &r[i], err);
    if (c) cw_redis_checkin(client->redis, c);
    if (rc == 0 && cw_reply_error(r[1]))
        rc = cw_error(err, CWORK_EREDIS, "redis: %s", cw_reply_error(r[1]));
    if (rc == 0 &&
        cw_reply_error(r[0])) /* a damaged <p>cwork:periodic: the instances still count */
        cw_log(CWORK_LOG_WARN, "client.periodic_schedules.damaged", "error", cw_reply_error(r[0]),
               NULL);
    for (size_t i = 0; rc == 0 && cw_reply_at(r[0], i + 1); i += 2)
        add_published(s, cw_reply_at(r[0], i), cw_reply_at(r[0], i + 1), now);
    for (size_t i = 0; rc == 0 && cw_reply_at(r[1], i + 1); i += 2)
        add_instance(s, cw_reply_at(r[1], i), cw_reply_at(r[1], i + 1));
    if (rc == 0 && s->oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    cw_client_free_replies(r, 2);
    cw_buf_free(&pub);
    cw_buf_free(&sch);
    return rc;
}

int cwork_client_periodic_schedules(cwork_client *client, cwork_periodic_schedule **out, size_t *n,
                                    cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !out || !n)
        return cw_error(err, CWORK_EINVAL, "cwork_client_periodic_schedules: NULL argument");
    *out = NULL;
    *n = 0;
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards : cw_shards_periodic(client, (unsigned)shards, out, n, err);
    schedules s = {0};
    int64_t now = cw_now();
    int rc = read_schedules(client, &s, now, err);
    cwork_periodic_schedule *v = NULL;
    if (rc == 0 && !(v = cw_calloc(s.n ? s.n : 1, sizeof *v)))
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    for (size_t i = 0; i < s.n; i++) {
        if (rc) {
            cw_free(s.v[i].s.job_name);
            cw_free(s.v[i].s.spec);
            continue;
        }
        v[i] = s.v[i].s; /* takes the strings over */
        if (s.v[i].instance_at)
            v[i].next_at = s.v[i].instance_at;
        else if (v[i].next_at <= now)
            v[i].next_at = next_from_spec(v[i].spec, now);
    }
    cw_free(s.v);
    if (rc) {
        cw_free(v);
        return cw_client_fail("client.periodic_schedules", rc, err);
    }
    qsort(v, s.n, sizeof *v, by_next);
    *out = v;
    *n = s.n;
    return 0;
}
