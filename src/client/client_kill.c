/* The admin client's kill (Sidekiq's "Kill"): retry and scheduled jobs moved to the dead
 * set at once, one by (score, id) or all of a set, by client_kill.lua (PROTOCOL §24). */
#include "client.h"

#include "log.h"
#include "scripts.h"

#include <stdio.h>
#include <string.h>

/* KEYS = [the set, <p>dead], ARGV = [<p>, now, batch TTL, mode]. */
static int kill_begin(cwork_client *client, cwork_job_set set, const char *mode, cw_conn **c,
                      cw_argv *a, cwork_error *err)
{
    *c = NULL;
    if (set != CWORK_SET_RETRY && set != CWORK_SET_SCHEDULED)
        return cw_error(err, CWORK_EINVAL, "only retry and scheduled jobs can be killed (set %d)",
                        (int)set);
    int rc = cw_client_add_set_key(a, &client->keys, set, err);
    cw_buf dead;
    cw_buf_init(&dead);
    cw_key_dead(&client->keys, &dead);
    cw_argv_add_buf(a, &dead);
    cw_buf_free(&dead);
    cw_argv_add(a, client->keys.prefix, client->keys.prefix_len);
    cw_argv_add_int(a, cw_now());
    cw_argv_add_int(a, CW_BATCH_TTL_SECONDS);
    cw_argv_add_str(a, mode);
    if (rc == 0) rc = cw_redis_checkout(client->redis, c, err);
    return rc;
}

/* One script call: v = {killed, looked at}; the guards of killed unique scheduled jobs
 * are deleted (as cwork_client_delete does), a failure there is logged only. */
static int kill_call(cwork_client *client, cw_conn *c, cwork_job_set set, const cw_argv *a,
                     int64_t v[2], cwork_error *err)
{
    int rc = cw_argv_check(a, err);
    redisReply *r = NULL;
    if (rc == 0)
        rc = cw_conn_eval(c, &cw_script_client_kill, 2, (int)a->n - 2, a->argv, a->lens, &r, err);
    if (rc == 0) rc = cw_reply_at_int(r, 0, &v[0], "kill script", err);
    if (rc == 0 && v[0] < 0) { /* {-1, key}: a damaged set, nothing was killed */
        const char *key = cw_reply_text(cw_reply_at(r, 1));
        rc = cw_damage_named(c, &client->keys, key, strlen(key), err);
    } else if (rc == 0) {
        rc = cw_reply_at_int(r, 1, &v[1], "kill script", err);
    }
    if (rc == 0 && v[0] > 0 && set == CWORK_SET_SCHEDULED) {
        cwork_error e = {0};
        cw_client_delete_guards(c, &client->keys, r, 2, "client.kill.unique", &e);
    }
    cw_reply_free(r);
    return rc;
}

int cwork_client_kill(cwork_client *client, cwork_job_set set, int64_t at, const char *id,
                      cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !id) return cw_error(err, CWORK_EINVAL, "cwork_client_kill: NULL argument");
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0
                   ? shards
                   : cw_shards_act(client, (unsigned)shards, set, CWORK_ACTION_KILL, at, id, err);
    cw_argv a = {0};
    cw_conn *c = NULL;
    int rc = kill_begin(client, set, "one", &c, &a, err);
    char min[24], max[24];
    cw_score_range(at, min, max);
    cw_argv_add_str(&a, min);
    cw_argv_add_str(&a, id);
    cw_argv_add_str(&a, max);
    int64_t v[2] = {0, 0};
    if (rc == 0) rc = kill_call(client, c, set, &a, v, err);
    if (c) cw_redis_checkin(client->redis, c);
    cw_argv_free(&a);
    if (rc) return cw_client_fail("client.kill", rc, err);
    return v[0] == 0 ? cw_error(err, CWORK_ENOTFOUND, "nothing killed") : 0;
}

int cwork_client_kill_all(cwork_client *client, cwork_job_set set, const char *name, int64_t *count,
                          cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (count) *count = 0;
    if (!client) return cw_error(err, CWORK_EINVAL, "cwork_client_kill_all: NULL argument");
    int shards = cw_client_shard_count(client, err);
    if (shards != 1) {
        if (shards < 0) return shards;
        cw_shards_bulk b = {.kind = CW_SHARDS_KILL_ALL, .set = set, .name = name};
        int brc = cw_shards_bulk_run(client, (unsigned)shards, &b, err);
        if (count) *count = b.count;
        return brc;
    }
    cw_argv a = {0};
    cw_conn *c = NULL;
    int rc = kill_begin(client, set, "all", &c, &a, err);
    cw_argv_add_int(&a, CW_CLIENT_BATCH);
    cw_argv_add_int(&a, 0); /* the first rank, replaced below */
    if (name) cw_argv_add_str(&a, name);
    int64_t total = 0, from = 0, killed = 0;
    if (rc == 0 && (rc = cw_argv_check(&a, err)) == 0)
        rc = cw_client_command_ints(c, 2, (const char *[]){"ZCARD", a.argv[0]},
                                    (const size_t[]){5, a.lens[0]}, &total, 1, err);
    /* Each batch moves what it kills out of the set and steps over what stays, so the
     * loop ends; the bound from the first ZCARD guards against writers adding jobs. */
    for (int64_t i = 0; rc == 0 && i <= total / CW_CLIENT_BATCH + 1; i++) {
        cw_argv_set_int(&a, 7, from);
        int64_t v[2] = {0, 0};
        if ((rc = kill_call(client, c, set, &a, v, err)) != 0) break;
        killed += v[0];
        from += v[1] - v[0];
        if (v[1] < CW_CLIENT_BATCH) break;
    }
    rc = cw_client_explain_wrongtype(c, &client->keys, set, rc, err);
    if (c) cw_redis_checkin(client->redis, c);
    cw_argv_free(&a);
    if (count) *count = killed; /* what died before a failure did die */
    return rc ? cw_client_fail("client.kill_all", rc, err) : 0;
}
