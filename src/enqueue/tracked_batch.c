/* Tracked batches (PROTOCOL §23): opening, sealing and reading one. Jobs join a batch
 * through cwork_batch_join and cwork_enqueue_batch (batch.c); cwork pools count them in
 * the cycle script (cycle.lua), which also enqueues the callback. In a sharded namespace
 * a batch and all its members live in the shard of its id (§27.2). */
#include "enqueue.h"

#include "args.h"
#include "scripts.h"

#include <stdlib.h>
#include <string.h>

/* The callback's own args, encoded once at open: the script writes batch_dead, batch_id,
 * batch_succeeded and batch_total in front of them, so those keys are refused here
 * (Go's decoder would keep whichever came last). rest gets "" or ",<members>". */
static int encode_callback_args(const cwork_args *args, cw_buf *rest, cwork_error *err)
{
    const gj_value *obj = cw_args_object(args);
    if (!obj) return 0;
    static const char *const reserved[] = {"batch_dead", "batch_id", "batch_succeeded",
                                           "batch_total"};
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (cw_gj_object_get(obj, reserved[i], strlen(reserved[i])))
            return cw_error(err, CWORK_EINVAL,
                            "batch callback args: key %s is the batch's own (it carries the "
                            "counts)",
                            reserved[i]);
    cw_buf all;
    cw_buf_init(&all);
    int rc = cw_gj_encode(&all, obj, err);
    if (rc == 0 && all.oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0 && all.len > 2) { /* {…}: the members without the braces */
        cw_buf_putc(rest, ',');
        cw_buf_append(rest, all.data + 1, all.len - 2);
    }
    cw_buf_free(&all);
    return rc;
}

int cwork_batch_open(cwork_enqueuer *enq, cwork_batch_when when, const char *callback,
                     const cwork_args *callback_args, char id_out[25], cwork_error *err)
{
    if (!enq || !id_out) return cw_error(err, CWORK_EINVAL, "batch open: NULL argument");
    if (when != CWORK_BATCH_ON_SUCCESS && when != CWORK_BATCH_ON_COMPLETE)
        return cw_error(err, CWORK_EINVAL, "batch open: when must be on_success or on_complete");
    if (!callback) return cw_error(err, CWORK_EINVAL, "batch open: callback job name is required");
    int rc = cwork_validate_job_name(callback, err);
    if (rc) return rc;
    char id[25], cb_id[25];
    if (cw_make_id(id) != 0 || cw_make_id(cb_id) != 0)
        return cw_error(err, CWORK_EINVAL, "cannot read the OS random source for a batch id");
    if ((rc = cw_enq_shards_refresh(enq, err)) != 0) return rc;
    enq = cw_enq_shard_for(enq, NULL, id, 24, NULL); /* the batch's shard (§27.2) */
    cw_buf key, head, rest;
    cw_buf_init(&key);
    cw_buf_init(&head);
    cw_buf_init(&rest);
    cw_key_batch(&enq->keys, &key, id);
    /* The callback job up to its `t`, as Go writes the fields (§3.1): the script appends
     * the time it fires, the args and the closing braces. */
    cw_buf_puts(&head, "{\"name\":");
    cw_gj_encode_string(&head, callback, strlen(callback));
    cw_buf_puts(&head, ",\"id\":\"");
    cw_buf_puts(&head, cb_id);
    cw_buf_puts(&head, "\",\"t\":");
    rc = encode_callback_args(callback_args, &rest, err);
    if (rc == 0 && (key.oom || head.oom || rest.oom))
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0) {
        char now[24];
        snprintf(now, sizeof now, "%lld", (long long)cw_now());
        char open_ttl[24];
        snprintf(open_ttl, sizeof open_ttl, "%d", CW_BATCH_OPEN_TTL_SECONDS);
        const char *argv[] = {key.data,     open_ttl,
                              "id",         id,
                              "total",      "0",
                              "succeeded",  "0",
                              "retrying",   "0",
                              "dead",       "0",
                              "sealed",     "0",
                              "when",       when == CWORK_BATCH_ON_SUCCESS ? "success" : "complete",
                              "callback",   "waiting",
                              "cb_name",    callback,
                              "cb_head",    head.data,
                              "cb_rest",    rest.len ? rest.data : "",
                              "created_at", now};
        size_t lens[sizeof argv / sizeof *argv];
        for (size_t i = 0; i < sizeof argv / sizeof *argv; i++)
            lens[i] = strlen(argv[i]);
        lens[0] = key.len; /* (the other arguments are NUL-terminated text) */
        cw_conn *c = NULL;
        redisReply *r = NULL;
        rc = cw_redis_checkout(enq->redis, &c, err);
        if (rc == 0) {
            rc = cw_conn_eval(c, &cw_script_batch_open, 1, (int)(sizeof argv / sizeof *argv) - 1,
                              argv, lens, &r, err);
            if (rc == 0) rc = cw_conn_wait_replicas(c, err);
            cw_redis_checkin(enq->redis, c);
        }
        cw_reply_free(r);
    }
    if (rc == 0) memcpy(id_out, id, 25);
    cw_buf_free(&key);
    cw_buf_free(&head);
    cw_buf_free(&rest);
    return rc;
}

/* batch_seal.lua on the batch in one shard's namespace (shard's keys): 0, CWORK_ENOTFOUND
 * when it has none there, CWORK_ETYPE for a damaged key, or an error. */
static int seal_in(cwork_enqueuer *shard, unsigned i, void *ctx, cwork_error *err)
{
    (void)i;
    const char *batch_id = ctx;
    cw_buf key, jobs;
    cw_buf_init(&key);
    cw_buf_init(&jobs);
    cw_key_batch(&shard->keys, &key, batch_id);
    cw_key_batch_jobs(&shard->keys, &jobs, batch_id);
    char now[24], ttl[24];
    snprintf(now, sizeof now, "%lld", (long long)cw_now());
    snprintf(ttl, sizeof ttl, "%d", CW_BATCH_TTL_SECONDS);
    const char *argv[] = {key.data, jobs.data, shard->keys.prefix, now, ttl};
    size_t lens[] = {key.len, jobs.len, shard->keys.prefix_len, strlen(now), strlen(ttl)};
    cw_conn *c = NULL;
    redisReply *r = NULL;
    int rc = 0;
    if (key.oom || jobs.oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0) rc = cw_redis_checkout(shard->redis, &c, err);
    if (rc == 0) {
        cwork_error e2 = {0};
        rc = cw_conn_eval(c, &cw_script_batch_seal, 2, 3, argv, lens, &r, &e2);
        if (rc == 0) rc = cw_conn_wait_replicas(c, &e2);
        cw_redis_checkin(shard->redis, c);
        const char *nobatch = rc ? strstr(e2.message, "NOBATCH ") : NULL;
        if (nobatch && strstr(nobatch, " is a ")) /* a damaged batch key: nothing written */
            rc = cw_error(err, CWORK_ETYPE, "%s, expected a hash (a batch)", nobatch + 8);
        else if (nobatch)
            rc = cw_error(err, CWORK_ENOTFOUND, "batch %s: %s", batch_id, e2.message);
        else if (rc && err)
            *err = e2;
    }
    cw_reply_free(r);
    cw_buf_free(&key);
    cw_buf_free(&jobs);
    return rc;
}

int cwork_batch_seal(cwork_enqueuer *enq, const char *batch_id, cwork_error *err)
{
    if (!enq) return cw_error(err, CWORK_EINVAL, "batch seal: NULL enqueuer");
    int rc = cw_batch_check_id(batch_id, err);
    if (rc == 0) rc = cw_enq_shards_refresh(enq, err);
    if (rc) return rc;
    cwork_enqueuer *to = NULL;
    if ((rc = cw_enq_batch_shard(enq, batch_id, &to, NULL, err)) != 0) return rc;
    if ((rc = seal_in(to, 0, (void *)batch_id, err)) != CWORK_ENOTFOUND) return rc;
    /* opened before a grow that has ended: sealed where it lives (§27.5) */
    return cw_enq_batch_elsewhere(enq, batch_id, to, seal_in, (void *)batch_id, err);
}

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

typedef struct read_ctx {
    const char *batch_id;
    cwork_batch_info *out;
} read_ctx;

/* HGETALL and TTL of the batch (ctx) in one shard's namespace (shard's keys): 0,
 * CWORK_ENOTFOUND when it has none there, or an error. */
static int read_in(cwork_enqueuer *shard, unsigned i, void *ctx, cwork_error *err)
{
    (void)i;
    const char *batch_id = ((read_ctx *)ctx)->batch_id;
    cwork_batch_info *out = ((read_ctx *)ctx)->out;
    memset(out, 0, sizeof *out);
    cw_buf key;
    cw_buf_init(&key);
    cw_key_batch(&shard->keys, &key, batch_id);
    if (key.oom) {
        cw_buf_free(&key);
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    const char *hgetall[] = {"HGETALL", key.data}, *ttl[] = {"TTL", key.data};
    size_t lens[] = {7, key.len}, ttl_lens[] = {3, key.len};
    cw_conn *c = NULL;
    redisReply *all = NULL, *t = NULL;
    int rc = cw_redis_checkout(shard->redis, &c, err);
    if (rc == 0) {
        rc = cw_conn_append(c, 2, hgetall, lens, err);
        if (rc == 0) rc = cw_conn_append(c, 2, ttl, ttl_lens, err);
        if (rc == 0) rc = cw_conn_read(c, &all, err);
        if (rc == 0) rc = cw_conn_read(c, &t, err);
        cw_redis_checkin(shard->redis, c);
    }
    if (rc == 0 && cw_reply_error(all))
        rc = cw_error(err, CWORK_EREDIS, "%s: %s", key.data, cw_reply_error(all));
    if (rc == 0) rc = read_fields(all, key.data, out, err);
    if (rc == 0) rc = cw_reply_int(t, &out->ttl, "TTL", err);
    cw_reply_free(all);
    cw_reply_free(t);
    cw_buf_free(&key);
    return rc;
}

int cwork_batch_read(cwork_enqueuer *enq, const char *batch_id, cwork_batch_info *out,
                     cwork_error *err)
{
    if (!enq || !out) return cw_error(err, CWORK_EINVAL, "batch read: NULL argument");
    memset(out, 0, sizeof *out);
    int rc = cw_batch_check_id(batch_id, err);
    if (rc == 0) rc = cw_enq_shards_refresh(enq, err);
    if (rc) return rc;
    cwork_enqueuer *to = NULL;
    if ((rc = cw_enq_batch_shard(enq, batch_id, &to, NULL, err)) != 0) return rc;
    read_ctx ctx = {batch_id, out};
    if ((rc = read_in(to, 0, &ctx, err)) != CWORK_ENOTFOUND) return rc;
    /* opened before a grow that has ended: read where it lives (§27.5); the error kept
     * names the key in the id's shard by today's count */
    return cw_enq_batch_elsewhere(enq, batch_id, to, read_in, &ctx, err);
}
