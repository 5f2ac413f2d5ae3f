/* The admin client's changes for the web UI's lists (and the CLI): delete-all of any
 * set, and one action applied to the selected jobs of a list. */
#include "client.h"

#include "log.h"
#include "scripts.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- delete all */

/* One batch of client_delete_all.lua; v = {removed, looked at, members before} from its
 * reply, and the guards of the unique jobs it removed deleted. */
static int delete_batch(cw_conn *c, const cw_keys *k, const char *key, int64_t from, int unique,
                        const char *name, int64_t v[3], cwork_error *err)
{
    char start[24], stop[24];
    snprintf(start, sizeof start, "%lld", (long long)from);
    snprintf(stop, sizeof stop, "%lld", (long long)(from + CW_CLIENT_BATCH - 1));
    const char *argv[] = {key, start, stop, unique ? "1" : "0", name};
    size_t lens[] = {strlen(key), strlen(start), strlen(stop), 1, name ? strlen(name) : 0};
    redisReply *r = NULL;
    int rc = cw_conn_eval(c, &cw_script_client_delete_all, 1, name ? 4 : 3, argv, lens, &r, err);
    if (rc) return rc;
    /* {removed, looked at, members before, removed jobs…}, or {-1, the key's type} when
     * the key holds no sorted set. */
    const char *what = "delete-all script";
    int64_t removed = 0;
    rc = cw_reply_at_int(r, 0, &removed, what, err);
    if (rc == 0 && removed < 0) {
        const char *type = cw_reply_text(cw_reply_at(r, 1));
        rc = cw_error(err, CWORK_ETYPE, "%s holds a %s, not a sorted set: left as it is", key,
                      *type ? type : "value of another type");
    } else if (rc == 0) {
        rc = cw_reply_ints(r, v, 3, what, err);
    }
    if (rc == 0 && unique)
        rc = cw_client_delete_guards(c, k, r, 3, "client.delete_all.unique", err);
    cw_reply_free(r);
    return rc;
}

int cwork_client_delete_all(cwork_client *client, cwork_job_set set, const char *name,
                            int64_t *count, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (count) *count = 0;
    if (!client) return cw_error(err, CWORK_EINVAL, "cwork_client_delete_all: NULL argument");
    int shards = cw_client_shard_count(client, err);
    if (shards != 1) {
        if (shards < 0) return shards;
        cw_shards_bulk b = {.kind = CW_SHARDS_DELETE_ALL, .set = set, .name = name};
        int brc = cw_shards_bulk_run(client, (unsigned)shards, &b, err);
        if (count) *count = b.count;
        return brc;
    }
    cw_buf key;
    cw_buf_init(&key);
    int rc = cw_client_set_key(&client->keys, set, &key, err);
    cw_conn *c = NULL;
    if (rc == 0) rc = cw_redis_checkout(client->redis, &c, err);
    int64_t from = 0, gone = 0, bound = 1;
    /* Each batch removes what it matches and steps over the rest, so the loop ends; the
     * bound from the set's size at the first batch only guards against writers adding
     * members meanwhile. */
    for (int64_t i = 0; rc == 0 && i < bound; i++) {
        int64_t v[3] = {0, 0, 0};
        rc = delete_batch(c, &client->keys, key.data, from, set == CWORK_SET_SCHEDULED, name, v,
                          err);
        if (i == 0) bound = v[2] / CW_CLIENT_BATCH + 2;
        gone += v[0];
        from += v[1] - v[0];
        if (v[1] < CW_CLIENT_BATCH) break;
    }
    rc = cw_client_explain_wrongtype(c, &client->keys, set, rc, err);
    if (c) cw_redis_checkin(client->redis, c);
    cw_buf_free(&key);
    if (count) *count = gone; /* what went before a failure did go */
    return rc ? cw_client_fail("client.delete_all", rc, err) : 0;
}

/* ---------------------------------------------------------------- selected jobs */

int cwork_client_apply(cwork_client *client, cwork_job_set set, cwork_job_action action,
                       const cwork_job_ref *jobs, size_t n, size_t *done, size_t *unchanged,
                       cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (done) *done = 0;
    if (unchanged) *unchanged = 0;
    if (!client || (!jobs && n > 0))
        return cw_error(err, CWORK_EINVAL, "cwork_client_apply: NULL argument");
    int fits = action == CWORK_ACTION_DELETE
                   ? set == CWORK_SET_RETRY || set == CWORK_SET_SCHEDULED || set == CWORK_SET_DEAD
               : action == CWORK_ACTION_RETRY ? set == CWORK_SET_DEAD
               : action == CWORK_ACTION_RUN_NOW || action == CWORK_ACTION_KILL
                   ? set == CWORK_SET_RETRY || set == CWORK_SET_SCHEDULED
                   : 0;
    if (!fits)
        return cw_error(err, CWORK_EINVAL,
                        "action %d does not apply to set %d (delete: any set; retry: dead; "
                        "run now, kill: retry and scheduled)",
                        (int)action, (int)set);
    size_t ok = 0, missed = 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        cwork_error e = {0};
        int one = action == CWORK_ACTION_DELETE
                      ? cwork_client_delete(client, set, jobs[i].at, jobs[i].id, &e)
                  : action == CWORK_ACTION_RETRY
                      ? cwork_client_retry_dead(client, jobs[i].at, jobs[i].id, &e)
                  : action == CWORK_ACTION_KILL
                      ? cwork_client_kill(client, set, jobs[i].at, jobs[i].id, &e)
                      : cwork_client_run_now(client, set, jobs[i].at, jobs[i].id, &e);
        if (one == 0) {
            ok++;
        } else if (one == CWORK_ENOTFOUND) {
            if (missed++ == 0) *err = e;
        } else {
            *err = e; /* logged by the single call */
            rc = one;
            break;
        }
    }
    if (done) *done = ok;
    if (unchanged) *unchanged = missed;
    if (rc == 0 && missed > 0) rc = CWORK_ENOTFOUND;
    return rc;
}
