/* The reaper lock as a renewed lease: see reaper_lock.h. */
#include "reaper_lock.h"

#include "clock.h"
#include "log.h"
#include "scripts.h"

#include <stdio.h>
#include <string.h>

#define VALUE_PREFIX "cwork:"

int cw_reaper_lock_init(cw_reaper_lock *l, const cw_keys *keys)
{
    memset(l, 0, sizeof *l);
    cw_buf_init(&l->key);
    cw_key_reaper_lock(keys, &l->key);
    return l->key.oom ? CWORK_ENOMEM : 0;
}

void cw_reaper_lock_clear(cw_reaper_lock *l)
{
    cw_buf_free(&l->key);
    cw_free(l->blocked_by);
    memset(l, 0, sizeof *l);
}

int cw_reaper_lock_set_pool(cw_reaper_lock *l, const char *pool_id)
{
    size_t n = pool_id ? strlen(pool_id) : 0;
    if (n > CW_REAPER_POOL_ID_MAX || (pool_id && strchr(pool_id, ':'))) return CWORK_EINVAL;
    memcpy(l->pool_id, pool_id ? pool_id : "", n);
    l->pool_id[n] = '\0';
    return 0;
}

int cw_reaper_lock_holder(const char *value, size_t len, char *pool, size_t size)
{
    size_t plen = sizeof VALUE_PREFIX - 1;
    if (size) pool[0] = '\0';
    if (len < plen || memcmp(value, VALUE_PREFIX, plen) != 0) return 0;
    const char *id = value + plen;
    const char *colon = memchr(id, ':', len - plen);
    if (!colon) return 0;
    size_t n = (size_t)(colon - id);
    if (size) {
        if (n >= size) n = size - 1;
        memcpy(pool, id, n);
        pool[n] = '\0';
    }
    return 1;
}

/* The token: 16 random bytes in standard base64 with padding, as Go's (PROTOCOL §3.6). */
static void make_token(char out[25])
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned char raw[18] = {0};
    if (cw_random_bytes(raw, 16) != 0) {
        int64_t t = cw_now_ms();
        memcpy(raw, &t, sizeof t);
    }
    for (int i = 0, o = 0; i < 18; i += 3) {
        unsigned v = (unsigned)raw[i] << 16 | (unsigned)raw[i + 1] << 8 | raw[i + 2];
        out[o++] = b64[v >> 18 & 63];
        out[o++] = b64[v >> 12 & 63];
        out[o++] = b64[v >> 6 & 63];
        out[o++] = b64[v & 63];
    }
    out[22] = out[23] = '=';
    out[24] = '\0';
}

/* Logs that the lock held by value (ttl_ms left, -1 for none) blocked an attempt, once
 * per blocking (see reaper_lock.h). */
static void log_blocked(cw_reaper_lock *l, const char *value, size_t len, long long ttl_ms)
{
    int same =
        l->blocked_by && strlen(l->blocked_by) == len && memcmp(l->blocked_by, value, len) == 0;
    if (same && l->blocked_warned) return;
    char pool[CW_REAPER_POOL_ID_MAX + 1], holder[CW_REAPER_POOL_ID_MAX + 64], ttl[32];
    if (!cw_reaper_lock_holder(value, len, pool, sizeof pool))
        snprintf(holder, sizeof holder, "a Go reaper or cwork before leases");
    else if (pool[0])
        snprintf(holder, sizeof holder, "cwork pool %s", pool);
    else
        snprintf(holder, sizeof holder, "a cwork reaper");
    if (ttl_ms >= 0)
        snprintf(ttl, sizeof ttl, "%lld", ttl_ms);
    else
        snprintf(ttl, sizeof ttl, "none");
    if (!same) {
        cw_free(l->blocked_by);
        l->blocked_by = cw_strndup(value, len);
        l->blocked_warned = 0;
        cw_log(CWORK_LOG_INFO, "Reaper: locked by another process", "holder", holder, "ttl_ms", ttl,
               NULL);
    } else {
        l->blocked_warned = 1;
        cw_log(CWORK_LOG_WARN, "Reaper: still locked by another process, dead pools wait", "holder",
               holder, "ttl_ms", ttl, NULL);
    }
}

int cw_reaper_lock_acquire(cw_reaper_lock *l, cw_conn *c, int *acquired, cwork_error *err)
{
    *acquired = 0;
    char token[25], lease[24];
    make_token(token);
    snprintf(l->value, sizeof l->value, VALUE_PREFIX "%s:%s", l->pool_id, token);
    snprintf(lease, sizeof lease, "%d", CW_REAPER_LEASE_MS);
    if (!l->blocked_by) /* (not again and again while one lock blocks us) */
        cw_log(CWORK_LOG_INFO, "Reaper: trying to acquire lock...", NULL);
    const char *set[] = {"SET", l->key.data, l->value, "NX", "PX", lease};
    redisReply *x = NULL;
    int rc = cw_conn_command(c, 6, set, NULL, &x, err);
    if (rc) return rc;
    int taken = cw_reply_status(x, "OK", NULL, NULL) == 0; /* else nil: someone holds it */
    cw_reply_free(x);
    if (taken) {
        l->held = 1;
        l->lost = 0;
        l->renewed_ms = cw_clock_mono_ms();
        cw_free(l->blocked_by);
        l->blocked_by = NULL;
        *acquired = 1;
        cw_log(CWORK_LOG_INFO, "Reaper: lock is acquired", NULL);
        return 0;
    }
    /* Who holds it, for the log: one round trip, and only when blocked. */
    const char *get[] = {"GET", l->key.data};
    const char *pttl[] = {"PTTL", l->key.data};
    redisReply *v = NULL, *t = NULL;
    rc = cw_conn_append(c, 2, get, NULL, err);
    if (rc == 0) rc = cw_conn_append(c, 2, pttl, NULL, err);
    if (rc == 0) rc = cw_conn_read(c, &v, err);
    if (rc == 0) rc = cw_conn_read(c, &t, err);
    const char *holder;
    size_t len;
    int64_t ttl = -1;
    if (rc == 0 && cw_reply_str(v, &holder, &len, NULL, NULL) == 0) {
        if (cw_reply_int(t, &ttl, NULL, NULL) != 0) ttl = -1;
        log_blocked(l, holder, len, ttl);
    }
    /* (a lock gone meanwhile: the next attempt takes it) */
    cw_reply_free(v);
    cw_reply_free(t);
    return rc;
}

int cw_reaper_lock_keep(cw_reaper_lock *l, cw_conn *c, cwork_error *err)
{
    if (!l->held || l->lost)
        return cw_error(err, CWORK_ETIMEOUT,
                        "the reaper lock's lease ran out (another reaper may hold it)");
    int64_t now = cw_clock_mono_ms();
    if (now - l->renewed_ms < CW_REAPER_RENEW_MS) return 0;
    char lease[24];
    snprintf(lease, sizeof lease, "%d", CW_REAPER_LEASE_MS);
    const char *argv[] = {l->key.data, l->value, lease};
    redisReply *x = NULL;
    int rc = cw_conn_eval(c, &cw_script_reaper_renew, 1, 2, argv, NULL, &x, err);
    if (rc) return rc;
    int64_t renewed = 0;
    if (cw_reply_int(x, &renewed, NULL, NULL) != 0) renewed = 0;
    cw_reply_free(x);
    if (renewed != 1) {
        l->lost = 1;
        return cw_error(err, CWORK_ETIMEOUT,
                        "the reaper lock's lease ran out (another reaper may hold it)");
    }
    l->renewed_ms = now;
    return 0;
}

int cw_reaper_lock_release(cw_reaper_lock *l, cw_conn *c, cwork_error *err)
{
    l->held = 0;
    const char *rel[] = {l->key.data, l->value};
    return cw_conn_eval(c, &cw_script_reaper_release, 1, 1, rel, NULL, NULL, err);
}
