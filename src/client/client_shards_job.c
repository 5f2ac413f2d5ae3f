/* One job of a sharded namespace (PROTOCOL §27), and changes to the whole namespace.
 * A plain job lives in the shard its id routes to (cw_sharding_of), so that shard is
 * asked first; a unique or periodic job is routed by another key, so the others follow
 * until one has it. Changes meant for the namespace (pause, rate limits, the bulk
 * calls) are made in every shard. */
#include "client.h"

#include "sharding.h"

#include <string.h>

/* The i-th shard to ask for id: its own shard, then the others in order. */
static unsigned nth_shard(const char *id, unsigned s, unsigned i)
{
    unsigned home = cw_sharding_of(id, strlen(id), s);
    if (i == 0) return home;
    return i <= home ? i - 1 : i;
}

/* Keeps the error worth reporting when every shard said CWORK_ENOTFOUND: the id's own
 * shard's ("nothing deleted"), unless a later shard explained why the job it holds
 * stayed (its message differs). */
static void keep_not_found(cwork_error *kept, const cwork_error *e, unsigned i)
{
    if (i == 0 || strcmp(kept->message, e->message) != 0) *kept = *e;
}

int cw_shards_find(cwork_client *c, unsigned s, const char *id, cwork_job_place *place,
                   cwork_listed_job *out, cwork_error *err)
{
    int rc = CWORK_ENOTFOUND;
    for (unsigned i = 0; i < s && rc == CWORK_ENOTFOUND; i++)
        rc = cwork_client_find(cw_client_shard_at(c, nth_shard(id, s, i)), id, place, out, err);
    return rc;
}

int cw_shards_story(cwork_client *c, unsigned s, const char *id, cwork_job_story *out,
                    cwork_error *err)
{
    int rc = CWORK_ENOTFOUND;
    for (unsigned i = 0; i < s && rc == CWORK_ENOTFOUND; i++)
        rc = cwork_client_job_story(cw_client_shard_at(c, nth_shard(id, s, i)), id, out, err);
    return rc;
}

int cw_shards_cancel(cwork_client *c, unsigned s, const char *id, cwork_cancel_result *out,
                     cwork_error *err)
{
    int rc = CWORK_ENOTFOUND;
    cwork_error kept = {0};
    for (unsigned i = 0; i < s && rc == CWORK_ENOTFOUND; i++) {
        rc = cwork_client_cancel(cw_client_shard_at(c, nth_shard(id, s, i)), id, out, err);
        if (rc == CWORK_ENOTFOUND) keep_not_found(&kept, err, i);
    }
    if (rc == CWORK_ENOTFOUND) *err = kept;
    return rc;
}

static int act_one(cwork_client *shard, cwork_job_set set, cwork_job_action action, int64_t at,
                   const char *id, cwork_error *err)
{
    switch (action) {
    case CWORK_ACTION_DELETE:
        return cwork_client_delete(shard, set, at, id, err);
    case CWORK_ACTION_RETRY:
        return cwork_client_retry_dead(shard, at, id, err);
    case CWORK_ACTION_RUN_NOW:
        return cwork_client_run_now(shard, set, at, id, err);
    case CWORK_ACTION_KILL:
        return cwork_client_kill(shard, set, at, id, err);
    default:
        return cw_error(err, CWORK_EINVAL, "unknown action %d", (int)action);
    }
}

int cw_shards_act(cwork_client *c, unsigned s, cwork_job_set set, cwork_job_action action,
                  int64_t at, const char *id, cwork_error *err)
{
    int rc = CWORK_ENOTFOUND;
    cwork_error kept = {0};
    for (unsigned i = 0; i < s && rc == CWORK_ENOTFOUND; i++) {
        rc = act_one(cw_client_shard_at(c, nth_shard(id, s, i)), set, action, at, id, err);
        if (rc == CWORK_ENOTFOUND) keep_not_found(&kept, err, i);
    }
    if (rc == CWORK_ENOTFOUND) *err = kept;
    return rc;
}

/* One shard's part of a bulk call; its counts added to b's. */
static int bulk_one(cwork_client *shard, cw_shards_bulk *b, cwork_error *err)
{
    int64_t count = 0, stayed = 0;
    int rc;
    switch (b->kind) {
    case CW_SHARDS_RETRY_ALL_DEAD:
        rc = cwork_client_retry_all_dead(shard, b->name, &count, err);
        break;
    case CW_SHARDS_DELETE_ALL_DEAD:
        rc = cwork_client_delete_all_dead(shard, b->name, &count, err);
        break;
    case CW_SHARDS_DELETE_ALL:
        rc = cwork_client_delete_all(shard, b->set, b->name, &count, err);
        break;
    case CW_SHARDS_KILL_ALL:
        rc = cwork_client_kill_all(shard, b->set, b->name, &count, err);
        break;
    case CW_SHARDS_RUN_ALL_NOW:
        rc = cwork_client_run_all_now(shard, b->set, b->name, &count, &stayed, err);
        break;
    case CW_SHARDS_CLEAR_QUEUE:
        rc = cwork_client_clear_queue(shard, b->name, &count, err);
        break;
    case CW_SHARDS_PAUSE:
        rc = cwork_client_pause(shard, b->name, err);
        break;
    case CW_SHARDS_UNPAUSE:
        rc = cwork_client_unpause(shard, b->name, err);
        break;
    case CW_SHARDS_SET_RATE_LIMIT:
        rc = cwork_client_set_rate_limit(shard, b->name, b->limit_count, b->window_ms, err);
        break;
    default:
        rc = cw_error(err, CWORK_EINVAL, "unknown bulk call %d", (int)b->kind);
    }
    b->count += count;
    b->stayed += stayed;
    return rc;
}

int cw_shards_bulk_run(cwork_client *c, unsigned s, cw_shards_bulk *b, cwork_error *err)
{
    int rc = 0;
    for (unsigned i = 0; i < s && rc == 0; i++)
        rc = bulk_one(cw_client_shard_at(c, i), b, err);
    return rc;
}
