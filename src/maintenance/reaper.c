/* The dead pool reaper (PROTOCOL §9). One cycle, holding reaper_lock:
 *   pass 1  pools in worker_pools whose heartbeat is missing or older than 10 s: their
 *           in-progress jobs go back to the queues, their heartbeat and lock_info
 *           fields go, they leave worker_pools;
 *   pass 2  pools that hold lock_info fields but are not in worker_pools: the same;
 *   pass 3  the lock counters healed: every lock_info field made equal to its pool's
 *           in-progress count, every lock to the sum of its fields (the fork's
 *           dangling-lock pass, widened: reaper_heal_locks.lua says why).
 * Each pass runs even if an earlier one failed. A damaged key (wrong type, a counter
 * that is not an integer) stops only the step of its own job name: the scripts go on
 * with the other names and report it, and it is logged with its message; a Redis
 * error stops the pass. The job names considered are the pool's own and every name
 * in known_jobs. */
#include "reaper.h"
#include "argv.h"

#include "clock.h"
#include "gojson.h"
#include "log.h"
#include "reaper_lock.h"
#include "scripts.h"

#include <stdio.h>
#include <string.h>

struct cw_reaper {
    cwork_redis *redis;
    const cw_keys *keys;
    char **registered;
    size_t nregistered;
    cwork_reaper_hook hook;
    void *hook_userdata;
    cw_reaper_lock lock;
};

cw_reaper *cw_reaper_new(cwork_redis *redis, const cw_keys *keys, const char *const *registered,
                         size_t nregistered, int64_t period_s, cwork_reaper_hook hook,
                         void *hook_userdata)
{
    cw_reaper *r = cw_calloc(1, sizeof *r);
    if (!r) return NULL;
    (void)period_s; /* the pool schedules the cycles; the lock is a lease of its own */
    r->redis = redis;
    r->keys = keys;
    r->hook = hook;
    r->hook_userdata = hook_userdata;
    r->registered = cw_calloc(nregistered ? nregistered : 1, sizeof *r->registered);
    if (!r->registered || cw_reaper_lock_init(&r->lock, keys) != 0) {
        cw_reaper_lock_clear(&r->lock);
        cw_free(r->registered);
        cw_free(r);
        return NULL;
    }
    for (size_t i = 0; i < nregistered; i++) {
        r->registered[i] = cw_strdup(registered[i]);
        if (!r->registered[i]) {
            r->nregistered = i;
            cw_reaper_free(r);
            return NULL;
        }
    }
    r->nregistered = nregistered;
    return r;
}

void cw_reaper_free(cw_reaper *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nregistered; i++)
        cw_free(r->registered[i]);
    cw_free(r->registered);
    cw_reaper_lock_clear(&r->lock);
    cw_free(r);
}

int cw_reaper_set_pool_id(cw_reaper *r, const char *pool_id)
{
    return cw_reaper_lock_set_pool(&r->lock, pool_id);
}

typedef struct {
    cw_argv no_heartbeat, unknown, dangling; /* job names, for the hook */
    cw_buf errors;                           /* joined pass errors */
} cycle_result;

static void note_text(cycle_result *res, const char *pass, const char *text, size_t len)
{
    if (res->errors.len) cw_buf_puts(&res->errors, "; ");
    cw_buf_printf(&res->errors, "%s: ", pass);
    cw_buf_append(&res->errors, text, len);
}

static void note_error(cycle_result *res, const char *pass, const cwork_error *err)
{
    note_text(res, pass, err->message, strlen(err->message));
}

/* A script's reports of keys it could not use or repair ("key: error" strings, from
 * element `from` of arr): each logged with its message, and noted for the hook. The
 * script went on with the other names. */
static void note_damage(cycle_result *res, const char *pass, const redisReply *arr, size_t from)
{
    for (const redisReply *e; (e = cw_reply_at(arr, from)) != NULL; from++) {
        const char *text;
        size_t len;
        if (cw_reply_str(e, &text, &len, NULL, NULL) != 0) continue;
        cw_log(CWORK_LOG_ERROR, "Reaper: damaged key", "pass", pass, "error", text, NULL);
        note_text(res, pass, text, len);
    }
}

/* Joins the string elements of an array reply with sep, for a log line. */
static void join_strings(cw_buf *out, const redisReply *arr, const char *sep)
{
    const char *text;
    size_t len;
    for (size_t i = 0; cw_reply_at(arr, i); i++) {
        if (cw_reply_at_str(arr, i, &text, &len, NULL, NULL) != 0) continue;
        if (out->len) cw_buf_puts(out, sep);
        cw_buf_append(out, text, len);
    }
}

/* ---------------------------------------------------------------- helpers */

/* Appends the keys of one job name to a reaper script's KEYS (scratch: a buffer to
 * build them in). */
typedef void (*name_keys_fn)(const cw_keys *k, cw_argv *out, cw_buf *scratch, const char *name,
                             const char *pool_id);

/* Appends the key built in scratch to out, and empties scratch for the next one. */
static void add_key(cw_argv *out, cw_buf *scratch)
{
    cw_argv_add_buf(out, scratch);
    cw_buf_reset(scratch);
}

static void requeue_keys(const cw_keys *k, cw_argv *out, cw_buf *scratch, const char *name,
                         const char *pool_id)
{
    cw_key_inprogress(k, scratch, name, pool_id);
    add_key(out, scratch);
    cw_key_queue(k, scratch, name);
    add_key(out, scratch);
    cw_key_lock(k, scratch, name);
    add_key(out, scratch);
    cw_key_lock_info(k, scratch, name);
    add_key(out, scratch);
}

static void lock_keys(const cw_keys *k, cw_argv *out, cw_buf *scratch, const char *name,
                      const char *pool_id)
{
    (void)pool_id;
    cw_key_lock(k, scratch, name);
    add_key(out, scratch);
    cw_key_lock_info(k, scratch, name);
    add_key(out, scratch);
}

/* The keys the requeue script takes after the names' keys: <p>dead and the hash of
 * cancelled jobs, which go there instead of back to their queue (PROTOCOL §21), and the
 * record of superseded entries, which are dropped (PROTOCOL §9.3). */
static void requeue_tail_keys(const cw_keys *k, cw_argv *out, cw_buf *scratch)
{
    cw_key_dead(k, scratch);
    add_key(out, scratch);
    cw_key_cancelled(k, scratch);
    add_key(out, scratch);
    cw_key_superseded(k, scratch);
    add_key(out, scratch);
}

/* Logs each superseded entry the requeue script dropped (pairs of unique_key, job id):
 * upstream's worker ran its guard's job in its place, so running it again would run a
 * replaced job (PROTOCOL §9.3). */
static void log_superseded(const redisReply *pairs, const char *pool_id)
{
    size_t n = 0;
    if (cw_reply_array(pairs, 0, &n, "requeue script", NULL) != 0) return;
    for (size_t i = 0; i + 1 < n; i += 2) {
        const char *key = NULL, *id = NULL;
        size_t key_len = 0, id_len = 0;
        if (cw_reply_at_str(pairs, i, &key, &key_len, NULL, NULL) != 0 ||
            cw_reply_at_str(pairs, i + 1, &id, &id_len, NULL, NULL) != 0)
            continue;
        char *k = cw_strndup(key, key_len), *j = cw_strndup(id, id_len);
        cw_log(CWORK_LOG_WARN, "reaper.superseded", "key", k ? k : "", "job_id", j ? j : "", "pool",
               pool_id, "action", "dropped, not requeued", NULL);
        cw_free(k);
        cw_free(j);
    }
}

/* Calls script with the keys of every name (fn's keys each), then tail's keys (when
 * given), and ARGV = [pool_id, extra args…] when pool_id is given: 0 with the reply in *out (free
 * it), or the error. */
static int run_for_names(cw_reaper *r, cw_conn *c, const cw_script *script, name_keys_fn fn,
                         void (*tail)(const cw_keys *, cw_argv *, cw_buf *), const cw_argv *names,
                         const char *pool_id, const char *extra_arg, const char *extra_arg2,
                         redisReply **out, cwork_error *err)
{
    *out = NULL;
    cw_argv a = {0};
    cw_buf scratch;
    cw_buf_init(&scratch);
    for (size_t i = 0; i < names->n; i++)
        fn(r->keys, &a, &scratch, names->argv[i], pool_id ? pool_id : "");
    if (tail) tail(r->keys, &a, &scratch);
    cw_buf_free(&scratch);
    size_t nkeys = a.n;
    if (pool_id) cw_argv_add_str(&a, pool_id);
    if (extra_arg) cw_argv_add_str(&a, extra_arg);
    if (extra_arg2) cw_argv_add_str(&a, extra_arg2);
    int rc = cw_argv_check(&a, err);
    if (rc == 0)
        rc = cw_conn_eval(c, script, (int)nkeys, (int)(a.n - nkeys), a.argv, a.lens, out, err);
    cw_argv_free(&a);
    return rc;
}

/* Requeues the pool's in-progress jobs of names, then releases its slots (the stale
 * lock cleanup, once; negative locks are logged). Damaged keys are reported (pass is
 * the pass's name) and do not stop the other names. */
static int give_back(cw_reaper *r, cw_conn *c, const char *pool_id, const cw_argv *names,
                     const char *pass, cycle_result *res, cwork_error *err)
{
    if (names->n == 0) return 0;
    redisReply *x = NULL;
    /* the TTL of a finished batch: a cancelled job that goes to dead counts in its batch */
    char batch_ttl_now[48];
    int ttl_len = snprintf(batch_ttl_now, sizeof batch_ttl_now, "%d", CW_BATCH_TTL_SECONDS);
    snprintf(batch_ttl_now + ttl_len + 1, sizeof batch_ttl_now - (size_t)ttl_len - 1, "%lld",
             (long long)cw_clock_now());
    int rc = run_for_names(r, c, &cw_script_reaper_requeue, requeue_keys, requeue_tail_keys, names,
                           pool_id, batch_ttl_now, batch_ttl_now + ttl_len + 1, &x, err);
    if (rc) return rc;
    /* {requeued, the (1-based) names whose jobs could not move, damaged keys, superseded
     * entries dropped} */
    size_t nstuck = 0;
    if ((rc = cw_reply_array(x, 4, NULL, "requeue script", err)) != 0 ||
        (rc = cw_reply_at_array(x, 1, 0, &nstuck, "requeue script", err)) != 0) {
        cw_reply_free(x);
        return rc;
    }
    /* A name whose jobs could not move keeps the pool's slot (its lock_info field), so
     * that the pool is found again as unknown and a later cycle tries again. */
    const redisReply *stuck_names = cw_reply_at(x, 1);
    cw_argv release = {0};
    for (size_t i = 0; i < names->n; i++) {
        int stuck = 0;
        for (size_t k = 0; k < nstuck; k++) {
            int64_t at = 0;
            stuck |= cw_reply_at_int(stuck_names, k, &at, NULL, NULL) == 0 && at == (int64_t)i + 1;
        }
        if (!stuck) cw_argv_add(&release, names->argv[i], names->lens[i]);
    }
    note_damage(res, pass, cw_reply_at(x, 2), 0);
    log_superseded(cw_reply_at(x, 3), pool_id);
    cw_reply_free(x);
    if ((rc = cw_argv_check(&release, err)) != 0 || release.n == 0) {
        cw_argv_free(&release);
        return rc;
    }
    rc = run_for_names(r, c, &cw_script_reaper_stale_locks, lock_keys, NULL, &release, pool_id,
                       NULL, NULL, &x, err);
    cw_argv_free(&release);
    if (rc) return rc;
    /* {negative locks, damaged keys} */
    if ((rc = cw_reply_array(x, 2, NULL, "stale locks script", err)) != 0) {
        cw_reply_free(x);
        return rc;
    }
    cw_buf keys;
    cw_buf_init(&keys);
    join_strings(&keys, cw_reply_at(x, 0), ",");
    if (keys.len)
        cw_log(CWORK_LOG_INFO, "Reaper: negative locks", "keys", keys.oom ? "" : keys.data, NULL);
    cw_buf_free(&keys);
    note_damage(res, pass, cw_reply_at(x, 1), 0);
    cw_reply_free(x);
    return 0;
}

/* One command whose reply is not needed: 0 or its error. */
static int command(cw_conn *c, int argc, const char **argv, cwork_error *err)
{
    return cw_conn_command(c, argc, argv, NULL, NULL, err);
}

/* Splits "a,b" into names (an empty value gives one empty name, as Go). */
static void split_names(cw_argv *out, const char *s, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == ',') {
            cw_argv_add(out, s + start, i - start);
            start = i + 1;
        }
    }
}

/* Strips "<p>jobs:" and suffix from a key, giving the job name; 0 when it doesn't fit. */
static int name_of_key(const cw_reaper *r, const char *key, size_t len, const char *suffix,
                       cw_argv *out)
{
    cw_buf prefix;
    cw_buf_init(&prefix);
    cw_key_jobs_prefix(r->keys, &prefix);
    size_t sl = strlen(suffix);
    int ok = !prefix.oom && len >= prefix.len + sl && memcmp(key, prefix.data, prefix.len) == 0 &&
             memcmp(key + len - sl, suffix, sl) == 0;
    if (ok) cw_argv_add(out, key + prefix.len, len - prefix.len - sl);
    cw_buf_free(&prefix);
    return ok;
}

/* ---------------------------------------------------------------- the passes */

/* Pass 1: pools whose heartbeat is missing or stale. */
/* The ids in <p>worker_pools. */
static int worker_pools(cw_reaper *r, cw_conn *c, cw_argv *ids, cwork_error *err)
{
    cw_buf key;
    cw_buf_init(&key);
    cw_key_worker_pools(r->keys, &key);
    const char *sm[] = {"SMEMBERS", key.data};
    redisReply *x = NULL;
    int rc = key.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                     : cw_conn_command(c, 2, sm, NULL, &x, err);
    if (rc == 0) rc = cw_reply_strings(x, ids, "SMEMBERS", err);
    cw_reply_free(x);
    cw_buf_free(&key);
    return rc;
}

static int pass_dead_pools(cw_reaper *r, cw_conn *c, const cw_argv *current, cycle_result *res,
                           cwork_error *err)
{
    cw_argv pools = {0};
    int rc = worker_pools(r, c, &pools, err);
    if (rc) {
        cw_argv_free(&pools);
        return rc;
    }
    cw_buf key;
    cw_buf_init(&key);
    /* One pipelined round trip for every pool's heartbeat_at and job_names. */
    for (size_t i = 0; i < pools.n && rc == 0; i++) {
        cw_buf_reset(&key);
        cw_key_worker_pool(r->keys, &key, pools.argv[i]);
        const char *hm[] = {"HMGET", key.data, "heartbeat_at", "job_names"};
        rc = key.oom ? CWORK_ENOMEM : cw_conn_append(c, 4, hm, NULL, err);
    }
    redisReply **beats = cw_calloc(pools.n ? pools.n : 1, sizeof *beats);
    for (size_t i = 0; i < pools.n && rc == 0; i++)
        rc = beats ? cw_conn_read(c, &beats[i], err) : CWORK_ENOMEM;
    double now = (double)cw_clock_now_ms() / 1000.0;
    cw_buf logged;
    cw_buf_init(&logged);
    for (size_t i = 0; i < pools.n && rc == 0; i++) {
        const char *id = pools.argv[i];
        const redisReply *b = beats[i];
        /* {heartbeat_at, job_names}: each a string or nil */
        const char *at, *job_names;
        size_t at_len, job_names_len;
        size_t nfields = 0;
        if (cw_reply_array(b, 2, &nfields, NULL, NULL) != 0 || nfields != 2 ||
            cw_reply_at_str_or_nil(b, 0, &at, &at_len, NULL, NULL) != 0 ||
            cw_reply_at_str_or_nil(b, 1, &job_names, &job_names_len, NULL, NULL) != 0) {
            rc = cw_error(err, CWORK_EPROTO, "unexpected heartbeat reply for pool %s", id);
            break;
        }
        int has_heartbeat = at != NULL;
        cw_argv names = {0};
        if (has_heartbeat) {
            int64_t hb;
            if (cw_parse_int64(at, at_len, &hb) != 0) {
                rc = cw_error(err, CWORK_EPROTO, "pool %s: heartbeat_at is not an integer", id);
                break;
            }
            if ((double)hb + CW_REAPER_DEAD_TIME > now) continue; /* alive */
            if (!job_names) continue; /* no job list: not treated as dead (Go) */
            split_names(&names, job_names, job_names_len);
        } else {
            /* No heartbeat at all: Go only releases its slots for the current names and
             * leaves its in-progress jobs orphaned (PROTOCOL §16.11); we requeue them. */
            cw_argv_add_refs(&names, current);
        }
        /* Each pool only while the lock is still ours: a cycle that lost it (its
         * lease ran out while it was frozen or stalled) must not act on what it read
         * before. */
        if ((rc = cw_reaper_lock_keep(&r->lock, c, err)) != 0) {
            cw_argv_free(&names);
            break;
        }
        rc = names.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                       : give_back(r, c, id, &names, "dead pools", res, err);
        if (rc == 0 && has_heartbeat) {
            cw_buf_reset(&key);
            cw_key_worker_pool(r->keys, &key, id);
            const char *del[] = {"DEL", key.data};
            rc = command(c, 2, del, err);
        }
        if (rc == 0) {
            cw_buf_reset(&key);
            cw_key_worker_pools(r->keys, &key);
            const char *srem[] = {"SREM", key.data, id};
            rc = command(c, 3, srem, err);
        }
        /* Reported even when a step failed: Go reports every pool it found. */
        for (size_t n = 0; n < names.n; n++)
            cw_argv_add(&res->no_heartbeat, names.argv[n], names.lens[n]);
        cw_buf_printf(&logged, "%s%s=[", logged.len ? " " : "", id);
        for (size_t n = 0; n < names.n; n++)
            cw_buf_printf(&logged, "%s%s", n ? "," : "", names.argv[n]);
        cw_buf_putc(&logged, ']');
        cw_argv_free(&names);
    }
    if (logged.len && !logged.oom)
        cw_log(CWORK_LOG_INFO, "Reaper: dead pools", "dead", logged.data, NULL);
    cw_buf_free(&logged);
    for (size_t i = 0; beats && i < pools.n; i++)
        cw_reply_free(beats[i]);
    cw_free(beats);
    cw_argv_free(&pools);
    cw_buf_free(&key);
    return rc;
}

/* Pass 2: pools with lock_info fields that are not in worker_pools. */
static int pass_unknown_pools(cw_reaper *r, cw_conn *c, const cw_argv *current, cycle_result *res,
                              cwork_error *err)
{
    if (current->n == 0) return 0;
    cw_argv keys = {0};
    cw_buf scratch;
    cw_buf_init(&scratch);
    cw_key_worker_pools(r->keys, &scratch);
    add_key(&keys, &scratch);
    for (size_t i = 0; i < current->n; i++) {
        cw_key_lock_info(r->keys, &scratch, current->argv[i]);
        add_key(&keys, &scratch);
    }
    cw_buf_free(&scratch);
    redisReply *x = NULL;
    int rc = cw_argv_check(&keys, err);
    if (rc == 0)
        rc = cw_conn_eval(c, &cw_script_reaper_unknown_pools, (int)keys.n, 0, keys.argv, keys.lens,
                          &x, err);
    cw_argv_free(&keys);
    if (rc) return rc;
    /* {JSON of pool → lock_info keys, damaged keys…} */
    gj_value *map = NULL;
    const char *json;
    size_t json_len;
    rc = cw_reply_at_str(x, 0, &json, &json_len, "unknown pools script", err);
    if (rc == 0) rc = cw_gj_parse(json, json_len, &map, err);
    note_damage(res, "unknown pools", x, 1);
    cw_reply_free(x);
    if (rc == 0 && map->type == GJ_OBJECT && map->as.obj.len > 0) {
        cw_buf logged;
        cw_buf_init(&logged);
        for (size_t i = 0; i < map->as.obj.len && rc == 0; i++) {
            const char *pool = map->as.obj.items[i].key.ptr;
            const gj_value *arr = map->as.obj.items[i].value;
            cw_argv names = {0};
            for (size_t j = 0; arr->type == GJ_ARRAY && j < arr->as.arr.len; j++) {
                const gj_value *k = arr->as.arr.items[j];
                if (k->type == GJ_STRING)
                    name_of_key(r, k->as.s.ptr, k->as.s.len, ":lock_info", &names);
            }
            rc = cw_reaper_lock_keep(&r->lock, c, err);
            if (rc == 0) rc = give_back(r, c, pool, &names, "unknown pools", res, err);
            cw_buf_printf(&logged, "%s%s=[", logged.len ? " " : "", pool);
            for (size_t n = 0; n < names.n; n++) {
                cw_argv_add(&res->unknown, names.argv[n], names.lens[n]);
                cw_buf_printf(&logged, "%s%s", n ? "," : "", names.argv[n]);
            }
            cw_buf_putc(&logged, ']');
            cw_argv_free(&names);
        }
        if (!logged.oom)
            cw_log(CWORK_LOG_INFO, "Reaper: unknown pools", "unknown", logged.data, NULL);
        cw_buf_free(&logged);
    }
    cw_gj_free(map);
    return rc;
}

/* Pass 3: every lock_info field made equal to its pool's in-progress count, every lock
 * to the sum of its fields (reaper_heal_locks.lua says why). */
static int pass_heal_locks(cw_reaper *r, cw_conn *c, const cw_argv *current, cycle_result *res,
                           cwork_error *err)
{
    if (current->n == 0) return 0;
    redisReply *x = NULL;
    int rc = run_for_names(r, c, &cw_script_reaper_heal_locks, lock_keys, NULL, current, NULL, NULL,
                           NULL, &x, err);
    if (rc) return rc;
    /* {lock keys adjusted, changes made, damaged keys} */
    if ((rc = cw_reply_array(x, 3, NULL, "heal locks script", err)) != 0) {
        cw_reply_free(x);
        return rc;
    }
    const redisReply *adjusted = cw_reply_at(x, 0);
    cw_buf logged;
    cw_buf_init(&logged);
    for (size_t i = 0; cw_reply_at(adjusted, i); i++) {
        size_t before = res->dangling.n;
        const char *k;
        size_t len;
        if (cw_reply_at_str(adjusted, i, &k, &len, NULL, NULL) == 0 &&
            name_of_key(r, k, len, ":lock", &res->dangling) && res->dangling.n > before)
            cw_buf_printf(&logged, "%s%s", logged.len ? "," : "",
                          res->dangling.argv[res->dangling.n - 1]);
    }
    if (logged.len && !logged.oom)
        cw_log(CWORK_LOG_INFO, "Reaper: dangling locks", "dangling", logged.data, NULL);
    /* Every value changed, for whoever wonders why a counter moved. */
    cw_buf_reset(&logged);
    join_strings(&logged, cw_reply_at(x, 1), "; ");
    if (logged.len && !logged.oom)
        cw_log(CWORK_LOG_WARN, "Reaper: lock counters repaired", "changes", logged.data, NULL);
    cw_buf_free(&logged);
    note_damage(res, "heal locks", cw_reply_at(x, 2), 0);
    cw_reply_free(x);
    return 0;
}

/* ---------------------------------------------------------------- a cycle */

/* The names every pass considers: the pool's own and known_jobs. */
static int current_names(cw_reaper *r, cw_conn *c, cw_argv *out, cwork_error *err)
{
    for (size_t i = 0; i < r->nregistered; i++)
        cw_argv_add_str(out, r->registered[i]);
    cw_buf key;
    cw_buf_init(&key);
    cw_key_known_jobs(r->keys, &key);
    const char *sm[] = {"SMEMBERS", key.data};
    redisReply *x = NULL;
    cw_argv known = {0};
    int rc = key.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                     : cw_conn_command(c, 2, sm, NULL, &x, err);
    cw_buf_free(&key);
    if (rc == 0 && cw_reply_is_array(x)) rc = cw_reply_strings(x, &known, "SMEMBERS", err);
    cw_reply_free(x);
    for (size_t i = 0; rc == 0 && i < known.n; i++)
        if (cw_argv_find(out, known.argv[i], known.lens[i]) < 0)
            cw_argv_add(out, known.argv[i], known.lens[i]);
    cw_argv_free(&known);
    return rc ? rc : cw_argv_check(out, err);
}

/* Whether the cycle may take its next step: the connection works and the lock is
 * still ours (its lease renewed when due). A lost lock is noted once. */
static int may_go_on(cw_reaper *r, cw_conn *c, cycle_result *res)
{
    if (c->broken) return 0;
    int was_lost = r->lock.lost;
    cwork_error e = {0};
    if (cw_reaper_lock_keep(&r->lock, c, &e) == 0) return 1;
    if (!was_lost) note_error(res, "lock", &e);
    return 0;
}

int cw_reaper_cycle(cw_reaper *r, int *ran, cwork_error *err)
{
    *ran = 0;
    cw_conn *c;
    int rc = cw_redis_checkout(r->redis, &c, err);
    if (rc) return rc;
    int acquired = 0;
    if ((rc = cw_reaper_lock_acquire(&r->lock, c, &acquired, err)) != 0 || !acquired) goto out;
    *ran = 1;
    cwork_reap_done done = r->hook ? r->hook(r->hook_userdata) : NULL;

    cycle_result res;
    memset(&res, 0, sizeof res);
    cw_buf_init(&res.errors);
    cw_argv current = {0};
    cwork_error perr = {0};
    if (current_names(r, c, &current, &perr) != 0) note_error(&res, "known jobs", &perr);
    if (may_go_on(r, c, &res) && pass_dead_pools(r, c, &current, &res, &perr) != 0)
        note_error(&res, "dead pools", &perr);
    if (may_go_on(r, c, &res) && pass_unknown_pools(r, c, &current, &res, &perr) != 0)
        note_error(&res, "unknown pools", &perr);
    if (may_go_on(r, c, &res) && pass_heal_locks(r, c, &current, &res, &perr) != 0)
        note_error(&res, "heal locks", &perr);
    if (res.errors.len && !res.errors.oom) /* Go only shows these to the hook (item 2) */
        cw_log(CWORK_LOG_ERROR, "dead_pool_reaper.reap", "error", res.errors.data, NULL);
    if (done) {
        cwork_reap_result result = {
            res.errors.len && !res.errors.oom ? res.errors.data : NULL,
            res.no_heartbeat.argv,
            res.no_heartbeat.n,
            res.unknown.argv,
            res.unknown.n,
            res.dangling.argv,
            res.dangling.n,
        };
        done(&result, r->hook_userdata);
    }
    cw_argv_free(&current);
    cw_argv_free(&res.no_heartbeat);
    cw_argv_free(&res.unknown);
    cw_argv_free(&res.dangling);
    cw_buf_free(&res.errors);

    /* Release: compare-and-delete, on a fresh connection if this one broke. */
    if (c->broken) {
        cw_redis_checkin(r->redis, c);
        if ((rc = cw_redis_checkout(r->redis, &c, err)) != 0) {
            c = NULL;
            goto out;
        }
    }
    rc = cw_reaper_lock_release(&r->lock, c, err);
out:
    if (rc)
        cw_log(CWORK_LOG_ERROR, "dead_pool_reaper.reap", "error", err ? err->message : "", NULL);
    if (c) cw_redis_checkin(r->redis, c);
    return rc;
}

int cw_reaper_check(cw_reaper *r, int *seen, cwork_error *err)
{
    *seen = 0;
    cw_conn *c;
    int rc = cw_redis_checkout(r->redis, &c, err);
    if (rc) return rc;
    cw_buf key;
    cw_buf_init(&key);
    cw_argv pools = {0};
    rc = worker_pools(r, c, &pools, err);
    for (size_t i = 0; i < pools.n && rc == 0; i++) {
        cw_buf_reset(&key);
        cw_key_worker_pool(r->keys, &key, pools.argv[i]);
        const char *hg[] = {"HGET", key.data, "heartbeat_at"};
        rc = key.oom ? CWORK_ENOMEM : cw_conn_append(c, 3, hg, NULL, err);
    }
    double now = (double)cw_clock_now_ms() / 1000.0;
    for (size_t i = 0; i < pools.n && rc == 0; i++) {
        redisReply *b = NULL;
        if ((rc = cw_conn_read(c, &b, err)) != 0) break;
        int64_t hb;
        const char *at;
        size_t len;
        if (cw_reply_str(b, &at, &len, NULL, NULL) != 0 || cw_parse_int64(at, len, &hb) != 0 ||
            (double)hb + CW_REAPER_DEAD_TIME <= now)
            *seen = 1;
        cw_reply_free(b);
    }
    cw_argv_free(&pools);
    cw_redis_checkin(r->redis, c);
    cw_buf_free(&key);
    return rc;
}
