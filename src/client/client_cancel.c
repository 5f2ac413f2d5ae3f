/* The admin client's cancellation of one job by id (PROTOCOL §21): a waiting, scheduled
 * or retry job goes to dead with err "cancelled" at once; a running job is marked and
 * its pool told, and the pool stops it and commits it to dead. */
#include "client.h"

#include "log.h"
#include "scripts.h"

#include <stdio.h>
#include <string.h>

/* A job can move between the find and the script (a pool fetched it, a requeuer moved
 * it): the script then finds nothing and the client looks again, this many times. */
#define CANCEL_ATTEMPTS 5

/* The dead record of a job that did not run: its failure is the cancellation. */
static int dead_record(const cwork_job *found, int64_t now, cw_buf *out, cwork_error *err)
{
    size_t len = 0;
    const char *raw = cwork_job_raw(found, &len);
    cwork_job *job = NULL;
    int rc = cw_job_decode(raw, len, &job, err);
    if (rc) return rc;
    job->fails++;
    job->failed_at = now;
    rc = cw_job_set_str(&job->err, "cancelled", 9);
    if (rc == 0) rc = cw_job_encode(out, job, err);
    if (rc == 0 && out->oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    cwork_job_free(job);
    return rc;
}

/* No job has this id, but the search read key, a damaged one (noted and resolved), as
 * empty: the job may be in it, so the error names it (CWORK_ETYPE) rather than saying
 * the job does not exist. */
static int not_found_in_damage(const char *key, const char *id, cwork_error *err)
{
    cwork_error named = {0};
    cw_damage_error(&named, CWORK_ETYPE, key, strlen(key));
    return cw_error(err, CWORK_ETYPE, "no job with id %s found, but %s and may hold it", id,
                    named.message);
}

/* A unique job that left its queue or the scheduled set gives up its guard (PROTOCOL
 * §4.3), as a deleted one does, so that it can be enqueued again. A failure is logged:
 * the job is cancelled all the same. */
static void release_guard(cwork_client *client, cw_conn *c, const cwork_job *job)
{
    if (!cwork_job_unique(job)) return;
    cwork_error err = {0};
    cw_buf key;
    cw_buf_init(&key);
    size_t lens[2];
    int n = cw_unique_guard_keys(&client->keys, job, &key, lens, &err);
    int64_t deleted = 0;
    if (n > 0 && key.oom) n = cw_error(&err, CWORK_ENOMEM, "out of memory");
    if (n > 0) {
        const char *argv[] = {"DEL", key.data, key.data + lens[0]};
        size_t dlens[] = {3, lens[0], lens[1]};
        n = cw_client_command_ints(c, 1 + n, argv, dlens, &deleted, 1, &err);
    }
    if (n < 0) cw_client_fail("client.cancel.unique_guard", n, &err);
    cw_buf_free(&key);
}

/* One find and one script call: 1 done, 0 the job moved (look again), or an error. */
static int cancel_once(cwork_client *client, cw_conn *c, const char *id, cwork_cancel_result *res,
                       cwork_error *err)
{
    cwork_listed_job found;
    cw_buf where, dead, marks, channel, record;
    cw_buf_init(&where), cw_buf_init(&dead), cw_buf_init(&marks), cw_buf_init(&channel);
    cw_buf_init(&record);
    cwork_job_place place = CWORK_PLACE_QUEUE;
    char pool_id[25] = "";
    uint64_t mark = cw_damage_clock();
    int rc = cw_client_find_job(c, &client->keys, id, &place, &found, &where, pool_id, err);
    const char *hidden = rc == 0 ? cw_damage_met_since(mark) : NULL;
    if (hidden) /* the job may be in a key the search read as empty */
        rc = not_found_in_damage(hidden, id, err);
    else if (rc == 0)
        rc = cw_error(err, CWORK_ENOTFOUND, "no job with id %s", id);
    if (rc == 1 && place == CWORK_PLACE_DEAD)
        rc = cw_error(err, CWORK_ENOTFOUND, "job %s is in the dead set already", id);
    if (rc != 1) goto out;
    res->place = place;
    snprintf(res->pool_id, sizeof res->pool_id, "%s", pool_id);
    int64_t now = cw_now();
    int running = place == CWORK_PLACE_IN_PROGRESS;
    if (!running && (rc = dead_record(found.job, now, &record, err)) != 0) goto out;
    cw_key_dead(&client->keys, &dead);
    cw_key_cancelled(&client->keys, &marks);
    cw_key_cancel_channel(&client->keys, &channel, pool_id);
    if (where.oom || dead.oom || marks.oom || channel.oom) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto out;
    }
    size_t raw_len = 0;
    const char *raw = cwork_job_raw(found.job, &raw_len);
    char now_s[24];
    snprintf(now_s, sizeof now_s, "%lld", (long long)now);
    const char *kind = running ? "running" : place == CWORK_PLACE_QUEUE ? "list" : "zset";
    char ttl_s[24];
    snprintf(ttl_s, sizeof ttl_s, "%d", CW_BATCH_TTL_SECONDS);
    /* running: the pool's channel; otherwise the prefix and the batch TTL, with which
     * the script counts a job of a tracked batch as dead (PROTOCOL §23) */
    const char *argv[] = {where.data,
                          dead.data,
                          marks.data,
                          kind,
                          raw,
                          now_s,
                          running ? id : record.data,
                          running ? channel.data : client->keys.prefix,
                          ttl_s};
    size_t lens[] = {where.len,
                     dead.len,
                     marks.len,
                     strlen(kind),
                     raw_len,
                     strlen(now_s),
                     running ? strlen(id) : record.len,
                     running ? channel.len : client->keys.prefix_len,
                     strlen(ttl_s)};
    redisReply *r = NULL;
    rc = cw_conn_eval(c, &cw_script_client_cancel, 3, running ? 5 : 6, argv, lens, &r, err);
    int64_t v = 0;
    const char *damaged = NULL;
    size_t damaged_len = 0;
    if (rc == 0 && cw_reply_int(r, &v, NULL, NULL) != 0) {
        /* {-2, key}: a key of another type; nothing was written */
        if ((rc = cw_reply_at_str(r, 1, &damaged, &damaged_len, "cancel script", err)) == 0)
            rc = cw_damage_named(c, &client->keys, damaged, damaged_len, err);
    } else if (rc == 0 && v == -1) {
        rc = cw_error(err, CWORK_EUNSUPPORTED,
                      "job %s runs in pool %s, which does not listen for cancellations (a Go "
                      "pool, or a cwork pool that is not connected just now): it cannot be "
                      "cancelled; it was left as it is",
                      id, pool_id);
    } else if (rc == 0) {
        rc = v > 0 ? 1 : 0;
    }
    cw_reply_free(r);
    if (rc == 1 && (place == CWORK_PLACE_QUEUE || place == CWORK_PLACE_SCHEDULED))
        release_guard(client, c, found.job);
out:
    cwork_job_free(found.job);
    cw_buf_free(&where), cw_buf_free(&dead), cw_buf_free(&marks), cw_buf_free(&channel);
    cw_buf_free(&record);
    return rc;
}

int cwork_client_cancel(cwork_client *client, const char *id, cwork_cancel_result *out,
                        cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !id) return cw_error(err, CWORK_EINVAL, "cwork_client_cancel: NULL argument");
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards : cw_shards_cancel(client, (unsigned)shards, id, out, err);
    cwork_cancel_result res;
    memset(&res, 0, sizeof res);
    cw_conn *c;
    int rc = cw_redis_checkout(client->redis, &c, err);
    if (rc) return cw_client_fail("client.cancel", rc, err);
    for (int i = 0; i < CANCEL_ATTEMPTS && (rc = cancel_once(client, c, id, &res, err)) == 0; i++) {
    }
    cw_redis_checkin(client->redis, c);
    if (rc == 0)
        rc = cw_error(err, CWORK_ETIMEOUT, "job %s kept moving; nothing was cancelled", id);
    if (rc < 0) return rc == CWORK_ENOTFOUND ? rc : cw_client_fail("client.cancel", rc, err);
    if (out) *out = res;
    return 0;
}
