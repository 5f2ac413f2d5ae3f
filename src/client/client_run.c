/* The admin client's "run now" for retry and scheduled jobs and its clearing of a
 * queue (operator actions Go's client does not have; PROTOCOL §11 lists what it does). */
#include "client.h"

#include "log.h"
#include "scripts.h"

#include <stdio.h>
#include <string.h>

/* What the run-now script reports. */
typedef struct run_result {
    int64_t run, unknown, damaged, looked_at;
    char first_error[160];
} run_result;

/* Reads {run, unknown, damaged, looked at, first error} when rc, the call's result, is
 * 0, and frees the reply. */
static int read_run_reply(int rc, redisReply *r, run_result *res, cwork_error *err)
{
    const char *what = "run script", *first_error = NULL;
    int64_t v[4];
    if (rc == 0) rc = cw_reply_ints(r, v, 4, what, err);
    if (rc == 0) rc = cw_reply_at_str(r, 4, &first_error, NULL, what, err);
    if (rc == 0) {
        res->run = v[0], res->unknown = v[1], res->damaged = v[2], res->looked_at = v[3];
        snprintf(res->first_error, sizeof res->first_error, "%s", first_error);
    }
    cw_reply_free(r);
    return rc;
}

/* Checks the set, checks out a connection and builds the script's keys and first
 * arguments: KEYS = [the set, the queue of every known name], ARGV = [<p>jobs:, now,
 * mode]. *nkeys receives the number of keys. */
static int run_begin(cwork_client *client, cwork_job_set set, const char *mode, cw_conn **c,
                     cw_argv *a, int *nkeys, cwork_error *err)
{
    *c = NULL;
    if (set != CWORK_SET_RETRY && set != CWORK_SET_SCHEDULED)
        return cw_error(
            err, CWORK_EINVAL,
            "only retry and scheduled jobs run now (dead ones: cwork_client_retry_dead)");
    int rc = cw_redis_checkout(client->redis, c, err);
    cw_argv names = {0};
    if (rc == 0) rc = cw_client_requeue_names(*c, &client->keys, &names, err);
    if (rc == 0) rc = cw_client_add_set_key(a, &client->keys, set, err);
    cw_client_add_queues(a, &client->keys, &names);
    cw_argv_add_int(a, cw_now());
    cw_argv_add_str(a, mode);
    *nkeys = (int)(1 + names.n);
    cw_argv_free(&names);
    return rc;
}

int cwork_client_run_now(cwork_client *client, cwork_job_set set, int64_t at, const char *id,
                         cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !id) return cw_error(err, CWORK_EINVAL, "cwork_client_run_now: NULL argument");
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards
                          : cw_shards_act(client, (unsigned)shards, set, CWORK_ACTION_RUN_NOW, at,
                                          id, err);
    cw_argv a = {0};
    cw_conn *c = NULL;
    int nkeys = 0;
    int rc = run_begin(client, set, "one", &c, &a, &nkeys, err);
    cw_argv_add_int(&a, at);
    cw_argv_add_str(&a, id);
    run_result res = {0};
    if (rc == 0 && (rc = cw_argv_check(&a, err)) == 0) {
        redisReply *r = NULL;
        rc = cw_conn_eval(c, &cw_script_client_run_now, nkeys, 5, a.argv, a.lens, &r, err);
        rc = read_run_reply(rc, r, &res, err);
    }
    rc = cw_client_explain_wrongtype(c, &client->keys, set, rc, err);
    if (c) cw_redis_checkin(client->redis, c);
    cw_argv_free(&a);
    if (rc) return cw_client_fail("client.run_now", rc, err);
    if (res.damaged > 0)
        return cw_client_fail(
            "client.run_now",
            cw_error(err, CWORK_EREDIS, "not run, it stays where it was: %s", res.first_error),
            err);
    if (res.run == 0 && res.unknown > 0)
        return cw_error(err, CWORK_ENOTFOUND,
                        "not run: the job's name is not in known_jobs (no pool runs it); it "
                        "stays where it was");
    return res.run == 0 ? cw_error(err, CWORK_ENOTFOUND, "nothing run") : 0;
}

int cwork_client_run_all_now(cwork_client *client, cwork_job_set set, const char *name,
                             int64_t *count, int64_t *stayed, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (count) *count = 0;
    if (stayed) *stayed = 0;
    if (!client) return cw_error(err, CWORK_EINVAL, "cwork_client_run_all_now: NULL argument");
    int shards = cw_client_shard_count(client, err);
    if (shards != 1) {
        if (shards < 0) return shards;
        cw_shards_bulk b = {.kind = CW_SHARDS_RUN_ALL_NOW, .set = set, .name = name};
        int brc = cw_shards_bulk_run(client, (unsigned)shards, &b, err);
        if (count) *count = b.count;
        if (stayed) *stayed = b.stayed;
        return brc;
    }
    cw_argv a = {0};
    cw_conn *c = NULL;
    int nkeys = 0;
    int rc = run_begin(client, set, "all", &c, &a, &nkeys, err);
    cw_argv_add_int(&a, CW_CLIENT_BATCH);
    cw_argv_add_int(&a, 0); /* the first rank, replaced below */
    if (name) cw_argv_add_str(&a, name);
    int64_t total = 0, from = 0;
    run_result res = {0}, batch = {0};
    if (rc == 0 && (rc = cw_argv_check(&a, err)) == 0)
        rc = cw_client_command_ints(c, 2, (const char *[]){"ZCARD", a.argv[0]},
                                    (const size_t[]){5, a.lens[0]}, &total, 1, err);
    /* Each batch moves what it runs out of the set and steps over what stays, so the
     * loop ends; the bound from the initial ZCARD guards against writers adding jobs. */
    for (int64_t i = 0; rc == 0 && i <= total / CW_CLIENT_BATCH + 1; i++) {
        cw_argv_set_int(&a, (size_t)nkeys + 4, from);
        if ((rc = cw_argv_check(&a, err)) != 0) break;
        redisReply *r = NULL;
        rc = cw_conn_eval(c, &cw_script_client_run_now, nkeys, name ? 6 : 5, a.argv, a.lens, &r,
                          err);
        rc = read_run_reply(rc, r, &batch, err);
        if (rc) break;
        res.run += batch.run;
        res.unknown += batch.unknown;
        res.damaged += batch.damaged;
        if (!res.first_error[0]) memcpy(res.first_error, batch.first_error, sizeof res.first_error);
        from += batch.looked_at - batch.run;
        if (batch.looked_at < CW_CLIENT_BATCH) break;
    }
    rc = cw_client_explain_wrongtype(c, &client->keys, set, rc, err);
    if (c) cw_redis_checkin(client->redis, c);
    cw_argv_free(&a);
    if (count) *count = res.run; /* what ran before a failure did run */
    if (stayed) *stayed = res.unknown + res.damaged;
    if (res.damaged > 0)
        cw_log(CWORK_LOG_WARN, "client.run_all_now.damaged_queue", "error", res.first_error, NULL);
    return rc ? cw_client_fail("client.run_all_now", rc, err) : 0;
}

int cwork_client_clear_queue(cwork_client *client, const char *name, int64_t *count,
                             cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (count) *count = 0;
    if (!client || !name)
        return cw_error(err, CWORK_EINVAL, "cwork_client_clear_queue: NULL argument");
    int shards = cw_client_shard_count(client, err);
    if (shards != 1) {
        if (shards < 0) return shards;
        cw_shards_bulk b = {.kind = CW_SHARDS_CLEAR_QUEUE, .name = name};
        int brc = cw_shards_bulk_run(client, (unsigned)shards, &b, err);
        if (count) *count = b.count;
        return brc;
    }
    cw_buf key;
    cw_buf_init(&key);
    cw_key_queue(&client->keys, &key, name);
    if (key.oom) {
        cw_buf_free(&key);
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    cw_conn *c = NULL;
    int rc = cw_redis_checkout(client->redis, &c, err);
    if (rc == 0) {
        const char *argv[] = {key.data, "1000"};
        size_t lens[] = {key.len, 4};
        redisReply *r = NULL;
        int64_t cleared = 0;
        rc = cw_conn_eval(c, &cw_script_client_queue_clear, 1, 1, argv, lens, &r, err);
        /* {cleared, removed jobs…}, or {-1, the key's type} when it holds no list */
        if (rc == 0) rc = cw_reply_at_int(r, 0, &cleared, "clear script", err);
        if (rc == 0 && cleared < 0) {
            const char *type = cw_reply_is_str(cw_reply_at(r, 1)) ? cw_reply_text(cw_reply_at(r, 1))
                                                                  : "value of another type";
            rc = cw_error(err, CWORK_ETYPE, "%s holds a %s, not a queue: left as it is", key.data,
                          type);
        } else if (rc == 0 && count) {
            *count = cleared;
        }
        if (rc == 0)
            rc = cw_client_delete_guards(c, &client->keys, r, 1, "client.clear_queue.unique", err);
        cw_reply_free(r);
        cw_redis_checkin(client->redis, c);
    }
    cw_buf_free(&key);
    return rc ? cw_client_fail("client.clear_queue", rc, err) : 0;
}
