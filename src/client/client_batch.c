/* A tracked batch as the admin views show it (cwork_client_batch, PROTOCOL §23): the
 * batch hash and its TTL as cwork_batch_read reads them, and the type of its :jobs hash.
 * A damaged :jobs (WRONGTYPE) stops the counting of the batch's jobs, so the view that
 * shows the counts also names it (cwork_client_damage); a damaged batch hash leaves
 * nothing to show and is named in the error. */
#include "batch_info.h"
#include "client.h"
#include "reply.h"

#include <string.h>

/* The HGETALL reply of the batch hash into out. */
static int read_fields(const redisReply *all, const char *key, cwork_batch_info *out,
                       cwork_error *err)
{
    size_t n = 0;
    int rc = cw_reply_array(all, 0, &n, key, err);
    if (rc) return rc;
    if (n == 0)
        return cw_error(err, CWORK_ENOTFOUND, "%s does not exist (never opened, or expired)", key);
    for (size_t i = 0; i + 1 < n; i += 2) {
        const char *f, *v;
        size_t flen, vlen;
        if ((rc = cw_reply_at_str(all, i, &f, &flen, key, err)) != 0 ||
            (rc = cw_reply_at_str(all, i + 1, &v, &vlen, key, err)) != 0 ||
            (rc = cw_batch_info_field(key, f, flen, v, vlen, out, err)) != 0)
            return rc;
    }
    cw_batch_info_finish(out);
    return 0;
}

/* HGETALL and TTL of the batch and TYPE of its :jobs, in one round trip (TYPE: the
 * :jobs hash is not shown, only checked, with a command every role's ACL allows). A
 * WRONGTYPE reply of the batch leaves r[0] NULL; a :jobs of another type than a hash is
 * noted. Both are resolved by the caller. */
static int read_batch(cw_conn *c, const cw_buf *key, const cw_buf *jobs, redisReply *r[3],
                      cwork_error *err)
{
    const char *hgetall[] = {"HGETALL", key->data}, *ttl[] = {"TTL", key->data},
               *type[] = {"TYPE", jobs->data};
    size_t hgetall_lens[] = {7, key->len}, ttl_lens[] = {3, key->len}, type_lens[] = {4, jobs->len};
    int rc = cw_conn_append(c, 2, hgetall, hgetall_lens, err);
    if (rc == 0) rc = cw_conn_append(c, 2, ttl, ttl_lens, err);
    if (rc == 0) rc = cw_conn_append(c, 2, type, type_lens, err);
    const char *read_keys[] = {key->data, key->data, jobs->data};
    size_t read_lens[] = {key->len, key->len, jobs->len};
    if (rc == 0) rc = cw_client_read_damaged(c, 3, r, read_keys, read_lens, err);
    if (rc == 0 && cw_reply_status(r[2], "hash", NULL, NULL) != 0 &&
        cw_reply_status(r[2], "none", NULL, NULL) != 0)
        cw_damage_note(jobs->data, jobs->len); /* out of memory: it goes unnamed */
    return rc;
}

int cwork_client_batch(cwork_client *client, const char *batch_id, cwork_batch_info *out,
                       cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !out) return cw_error(err, CWORK_EINVAL, "cwork_client_batch: NULL argument");
    memset(out, 0, sizeof *out);
    int rc = cw_batch_check_id(batch_id, err);
    if (rc) return rc;
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards : cw_shards_batch(client, (unsigned)shards, batch_id, out, err);
    cw_buf key, jobs;
    cw_buf_init(&key);
    cw_buf_init(&jobs);
    cw_key_batch(&client->keys, &key, batch_id);
    cw_key_batch_jobs(&client->keys, &jobs, batch_id);
    if (key.oom || jobs.oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    redisReply *r[3] = {NULL, NULL, NULL};
    cw_conn *c = NULL;
    if (rc == 0 && (rc = cw_redis_checkout(client->redis, &c, err)) == 0) {
        rc = read_batch(c, &key, &jobs, r, err);
        if (rc == 0) cw_damage_resolve(c, &client->keys);
        cw_redis_checkin(client->redis, c);
    }
    /* a damaged batch hash: nothing of the batch can be read */
    if (rc == 0 && !r[0]) rc = cw_damage_error(err, CWORK_ETYPE, key.data, key.len);
    if (rc == 0) rc = read_fields(r[0], key.data, out, err);
    if (rc == 0) rc = cw_reply_int(r[1], &out->ttl, "TTL", err);
    cw_client_free_replies(r, 3);
    cw_buf_free(&key);
    cw_buf_free(&jobs);
    if (rc && rc != CWORK_ENOTFOUND) cw_client_fail("client.batch", rc, err);
    return rc;
}
