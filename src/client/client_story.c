/* A job's whole story (cwork_client_job_story): where it is, when it was first enqueued
 * and last requeued, for a running job its pool, worker and check-in, the failures its
 * cwork pools kept (PROTOCOL §26) and the time it spent in each state. The CLI's
 * `cwork job` and the web UI's job page both print this one record. */
#include "client.h"
#include "log.h"
#include "reply.h"

#include <stdlib.h>
#include <string.h>

void cwork_job_story_free(cwork_job_story *story)
{
    if (!story) return;
    cwork_job_free(story->job);
    cw_free(story->pool_host);
    cw_free(story->worker_id);
    cw_free(story->checkin);
    for (size_t i = 0; i < story->n_failures; i++)
        cw_free(story->failures[i].err);
    cw_free(story->failures);
    cw_free(story->phases);
    memset(story, 0, sizeof *story);
}

static int64_t member_int(const gj_value *obj, const char *name)
{
    const gj_value *v = cw_gj_object_get(obj, name, strlen(name));
    if (!v) return 0;
    if (v->type == GJ_INT) return v->as.i;
    if (v->type == GJ_UINT) return v->as.u > INT64_MAX ? INT64_MAX : (int64_t)v->as.u;
    if (v->type == GJ_FLOAT) return (int64_t)v->as.f;
    return 0;
}

/* One entry of <p>cwork:failures:<id> into f (its first_t into *first when present);
 * 1 when read, 0 for an entry that is not one (skipped), or CWORK_ENOMEM. */
static int parse_failure(const char *s, size_t len, cwork_job_failure *f, int64_t *first)
{
    gj_value *v = NULL;
    if (cw_gj_parse(s, len, &v, NULL) != 0 || v->type != GJ_OBJECT) {
        cw_gj_free(v);
        return 0;
    }
    const gj_value *e = cw_gj_object_get(v, "err", 3);
    int rc = 0;
    if (e && e->type == GJ_STRING && member_int(v, "failed_at")) {
        f->failed_at = member_int(v, "failed_at");
        f->fails = member_int(v, "fails");
        f->enqueued_at = member_int(v, "t");
        f->ran_at_ms = member_int(v, "ran_at");
        f->took_us = member_int(v, "took_us");
        f->retry_at = member_int(v, "retry_at");
        if (cw_gj_object_get(v, "first_t", 7) && first) *first = member_int(v, "first_t");
        rc = (f->err = cw_strndup(e->as.s.ptr, e->as.s.len)) ? 1 : CWORK_ENOMEM;
    }
    cw_gj_free(v);
    return rc;
}

/* Redis' clock (TIME) and the failures kept for the job, newest first. */
static int read_time_and_failures(cw_conn *c, const cw_keys *k, const char *id,
                                  cwork_job_story *out, int64_t *first, cwork_error *err)
{
    cw_buf key;
    cw_buf_init(&key);
    cw_key_failures(k, &key, id);
    if (key.oom) return cw_error(err, CWORK_ENOMEM, "out of memory");
    const char *time_argv[] = {"TIME"}, *range_argv[] = {"LRANGE", key.data, "0", "-1"};
    size_t time_lens[] = {4}, range_lens[] = {6, key.len, 1, 2};
    redisReply *r[2] = {NULL, NULL};
    int rc = cw_conn_append(c, 1, time_argv, time_lens, err);
    if (rc == 0) rc = cw_conn_append(c, 4, range_argv, range_lens, err);
    /* A damaged failure list (WRONGTYPE) is noted and reads as empty: the rest of the
     * story is still worth showing. */
    const char *read_keys[] = {"TIME", key.data};
    size_t read_lens[] = {4, key.len};
    if (rc == 0) rc = cw_client_read_damaged(c, 2, r, read_keys, read_lens, err);
    const char *sec = NULL;
    if (rc == 0 && (rc = cw_reply_at_str(r[0], 0, &sec, NULL, "TIME", err)) == 0)
        out->now = strtoll(sec, NULL, 10);
    size_t n = 0;
    if (rc == 0 && r[1]) rc = cw_reply_array(r[1], 0, &n, key.data, err);
    if (rc == 0 && n && !(out->failures = cw_calloc(n, sizeof *out->failures)))
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *s;
        size_t len;
        if (cw_reply_at_str(r[1], i, &s, &len, key.data, NULL) != 0) continue;
        int64_t f = 0;
        int got = parse_failure(s, len, &out->failures[out->n_failures], &f);
        if (got == CWORK_ENOMEM) {
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        } else if (got == 1) {
            if (out->n_failures == 0 && f) *first = f; /* the newest entry carries it */
            out->n_failures++;
        }
    }
    cw_client_free_replies(r, 2);
    cw_buf_free(&key);
    return rc;
}

/* The pool's host and pid and the worker that runs the job, from the heartbeats and the
 * observers' hashes (PROTOCOL §6, §7). A job that no observer shows yet keeps "". */
static int read_running(cwork_client *client, cwork_job_story *out, cwork_error *err)
{
    cwork_pool_heartbeat *pools = NULL;
    cwork_worker_observation *workers = NULL;
    size_t np = 0, nw = 0;
    int rc = cwork_client_pools(client, &pools, &np, err);
    if (rc == 0) rc = cwork_client_workers(client, &workers, &nw, err);
    const cwork_pool_heartbeat *pool = NULL;
    for (size_t i = 0; rc == 0 && i < np; i++)
        if (!strcmp(pools[i].worker_pool_id, out->pool_id)) pool = &pools[i];
    if (pool) {
        out->pool_pid = pool->pid;
        cw_free(out->pool_host);
        if (!(out->pool_host = cw_strdup(pool->host ? pool->host : "")))
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    const char *id = cwork_job_id(out->job);
    for (size_t i = 0; rc == 0 && pool && i < nw; i++) {
        const cwork_worker_observation *w = &workers[i];
        if (!w->is_busy || !w->job_id || strcmp(w->job_id, id) != 0) continue;
        bool ours = false; /* the pool's own worker (another pool may run the same id) */
        for (size_t j = 0; j < pool->n_worker_ids; j++)
            ours = ours || !strcmp(pool->worker_ids[j], w->worker_id);
        if (!ours) continue;
        cw_free(out->worker_id);
        cw_free(out->checkin);
        out->worker_id = cw_strdup(w->worker_id);
        out->checkin = cw_strdup(w->checkin ? w->checkin : "");
        if (!out->worker_id || !out->checkin) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        out->started_at = w->started_at;
        out->checkin_at = w->checkin_at;
        break;
    }
    cwork_pool_heartbeats_free(pools, np);
    cwork_worker_observations_free(workers, nw);
    return rc;
}

static void add_phase(cwork_job_story *s, const char *state, int64_t from, int64_t until)
{
    if (from <= 0) return; /* a time not known */
    if (until && until < from) until = from;
    cwork_job_phase *p = &s->phases[s->n_phases++];
    p->state = state;
    p->from = from;
    p->until = until;
}

/* The states in order: each kept failure's run (waiting from its t, running from its
 * start, then retry or dead until the next run's t), then where the job is now. */
static int build_phases(cwork_job_story *s)
{
    /* at most 3 per failure and 3 for the present */
    if (!(s->phases = cw_calloc(3 * s->n_failures + 3, sizeof *s->phases))) return CWORK_ENOMEM;
    const char *after = NULL; /* the state the previous failure left the job in */
    int64_t after_from = 0;
    for (size_t i = s->n_failures; i-- > 0;) {
        const cwork_job_failure *f = &s->failures[i];
        if (after) add_phase(s, after, after_from, f->enqueued_at);
        int64_t ran = f->ran_at_ms / 1000;
        add_phase(s, "waiting", f->enqueued_at, ran ? ran : f->failed_at);
        if (ran) add_phase(s, "running", ran, f->failed_at);
        after = f->retry_at ? "retry" : "dead";
        after_from = f->failed_at;
    }
    const cwork_job *j = s->job;
    bool current_failure_kept = s->n_failures && s->failures[0].failed_at == j->failed_at &&
                                s->failures[0].fails == j->fails;
    if (s->place == CWORK_PLACE_RETRY || s->place == CWORK_PLACE_DEAD) {
        const char *state = s->place == CWORK_PLACE_RETRY ? "retry" : "dead";
        if (current_failure_kept) {
            add_phase(s, state, after_from, 0);
        } else { /* failed in a Go pool: only its last failure is known */
            if (after) add_phase(s, after, after_from, j->t);
            add_phase(s, "waiting", j->t, j->failed_at);
            add_phase(s, state, j->failed_at ? j->failed_at : s->at, 0);
        }
        return 0;
    }
    if (after) add_phase(s, after, after_from, j->t);
    if (s->place == CWORK_PLACE_SCHEDULED) {
        add_phase(s, "scheduled", j->t, 0);
    } else if (s->place == CWORK_PLACE_IN_PROGRESS && s->started_at) {
        add_phase(s, "waiting", j->t, s->started_at);
        add_phase(s, "running", s->started_at, 0);
    } else {
        /* queued, or running but not yet seen by its observer (it lags up to a second) */
        add_phase(s, s->place == CWORK_PLACE_IN_PROGRESS ? "running" : "waiting", j->t, 0);
    }
    return 0;
}

int cwork_client_job_story(cwork_client *client, const char *id, cwork_job_story *out,
                           cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !id || !out)
        return cw_error(err, CWORK_EINVAL, "cwork_client_job_story: NULL argument");
    memset(out, 0, sizeof *out);
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards : cw_shards_story(client, (unsigned)shards, id, out, err);
    cw_conn *c;
    int rc = cw_redis_checkout(client->redis, &c, err);
    if (rc) return cw_client_fail("client.job_story", rc, err);
    cwork_listed_job found = {0};
    int64_t first = 0;
    rc = cw_client_find_job(c, &client->keys, id, &out->place, &found, NULL, out->pool_id, err);
    bool is_found = rc == 1;
    if (is_found) {
        out->job = found.job;
        out->at = found.at;
        rc = read_time_and_failures(c, &client->keys, id, out, &first, err);
        if (rc == 0) cw_damage_resolve(c, &client->keys);
    }
    cw_redis_checkin(client->redis, c);
    if (rc == 0 && !is_found) {
        cwork_job_story_free(out);
        return cw_error(err, CWORK_ENOTFOUND, "no job with id %s", id);
    }
    out->pool_host = cw_strdup("");
    out->worker_id = cw_strdup("");
    out->checkin = cw_strdup("");
    if (rc == 0 && (!out->pool_host || !out->worker_id || !out->checkin))
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0 && out->place == CWORK_PLACE_IN_PROGRESS) rc = read_running(client, out, err);
    if (rc == 0) {
        out->first_enqueued_at = first && first < out->job->t ? first : out->job->t;
        out->last_requeued_at = out->first_enqueued_at < out->job->t ? out->job->t : 0;
        if (build_phases(out) != 0) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    if (rc) {
        cwork_job_story_free(out);
        return cw_client_fail("client.job_story", rc, err);
    }
    return 0;
}
