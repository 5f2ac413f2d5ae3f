/* Rate limits seen and set by the admin client (PROTOCOL §20): the setting is one hash,
 * <p>cwork:rate_limits; whether a type is held back now is its state key's time against
 * Redis' TIME. */
#include "client.h"
#include "rate_limit.h"

#include <stdlib.h>
#include <string.h>

static int by_name(const void *a, const void *b)
{
    return strcmp(((const cwork_rate_limit_info *)a)->job_name,
                  ((const cwork_rate_limit_info *)b)->job_name);
}

void cwork_rate_limit_infos_free(cwork_rate_limit_info *limits, size_t n)
{
    for (size_t i = 0; limits && i < n; i++) {
        cw_free(limits[i].job_name);
        cw_free(limits[i].text);
    }
    cw_free(limits);
}

/* TIME's reply in µs; -1 when it is not two numbers. */
static int64_t time_us(const redisReply *r)
{
    const char *s, *u;
    if (cw_reply_at_str(r, 0, &s, NULL, "TIME", NULL) != 0 ||
        cw_reply_at_str(r, 1, &u, NULL, "TIME", NULL) != 0)
        return -1;
    return strtoll(s, NULL, 10) * 1000000 + strtoll(u, NULL, 10);
}

/* The shape cycle.lua reads a limit in: "<N>/<n><unit>", both numbers without a leading
 * zero (cwork_rate_limit_parse also takes "10/s", which the script does not). */
static bool script_accepts(const char *text, size_t len)
{
    const char *slash = memchr(text, '/', len);
    if (strlen(text) != len || !slash || slash == text || text[0] == '0' || slash[1] < '1' ||
        slash[1] > '9')
        return false;
    return strspn(text, "0123456789") == (size_t)(slash - text);
}

/* Fills the entries from HGETALL's reply (without their state). */
static int read_setting(const redisReply *r, cwork_rate_limit_info *l, size_t n, cwork_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const char *name, *text;
        size_t name_len, text_len;
        int rc = cw_reply_at_str(r, 2 * i, &name, &name_len, "HGETALL rate_limits", err);
        if (rc == 0) rc = cw_reply_at_str(r, 2 * i + 1, &text, &text_len, "HGETALL", err);
        if (rc) return rc;
        l[i].job_name = cw_strndup(name, name_len);
        l[i].text = cw_strndup(text, text_len);
        if (!l[i].job_name || !l[i].text) return cw_error(err, CWORK_ENOMEM, "out of memory");
        if (!script_accepts(l[i].text, text_len) ||
            cwork_rate_limit_parse(l[i].text, &l[i].count, &l[i].window_ms, NULL) != 0)
            l[i].count = 0, l[i].window_ms = 0; /* pools do not run the type: invalid */
    }
    qsort(l, n, sizeof *l, by_name);
    return 0;
}

/* One pipelined round trip: TIME and GET of each type's state. */
static int read_state(cw_conn *c, const cw_keys *keys, cwork_rate_limit_info *l, size_t n,
                      cwork_error *err)
{
    const char *time_cmd[] = {"TIME"};
    int rc = cw_conn_append(c, 1, time_cmd, NULL, err);
    cw_buf key;
    cw_buf_init(&key);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        cw_buf_reset(&key);
        cw_key_rate_limit(keys, &key, l[i].job_name);
        if (key.oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        const char *get[] = {"GET", key.data};
        if (rc == 0) rc = cw_conn_append(c, 2, get, (size_t[]){3, key.len}, err);
    }
    redisReply **replies = rc ? NULL : cw_calloc(n + 1, sizeof *replies);
    if (rc == 0 && !replies) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < n + 1; i++)
        rc = cw_conn_read(c, &replies[i], err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        /* a damaged state (no string) holds the type back below, and is named */
        cw_buf_reset(&key);
        cw_key_rate_limit(keys, &key, l[i].job_name);
        if (key.oom)
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        else if (cw_client_wrong_type(replies[i + 1]))
            cw_damage_note(key.data, key.len);
    }
    cw_buf_free(&key);
    if (rc == 0 && cw_reply_error(replies[0]))
        rc = cw_error(err, CWORK_EREDIS, "redis: %s", cw_reply_error(replies[0]));
    if (rc && replies) cw_client_free_replies(replies, n + 1);
    int64_t now = rc == 0 ? time_us(replies[0]) : -1;
    for (size_t i = 0; rc == 0 && now >= 0 && i < n; i++) {
        const char *s;
        /* A state that is not a time (damaged) holds the type back: say so. */
        if (cw_reply_str_or_nil(replies[i + 1], &s, NULL, "GET", NULL) != 0) {
            l[i].limited_now = true;
            continue;
        }
        int64_t at = s ? strtoll(s, NULL, 10) : 0;
        if (at > now && l[i].count) {
            l[i].limited_now = true;
            l[i].next_in_us = at - now;
        }
    }
    if (rc == 0) cw_client_free_replies(replies, n + 1);
    cw_free(replies);
    return rc;
}

int cwork_client_rate_limits(cwork_client *client, cwork_rate_limit_info **out, size_t *n,
                             cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !out || !n)
        return cw_error(err, CWORK_EINVAL, "cwork_client_rate_limits: NULL argument");
    *out = NULL;
    *n = 0;
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards : cw_shards_rate_limits(client, (unsigned)shards, out, n, err);
    cw_buf key;
    cw_buf_init(&key);
    cw_key_rate_limits(&client->keys, &key);
    if (key.oom) return cw_error(err, CWORK_ENOMEM, "out of memory");
    cw_conn *c;
    int rc = cw_redis_checkout(client->redis, &c, err);
    redisReply *r = NULL;
    size_t count = 0;
    cwork_rate_limit_info *l = NULL;
    if (rc == 0) {
        const char *hgetall[] = {"HGETALL", key.data};
        rc = cw_client_read_command(c, 2, hgetall, (size_t[]){7, key.len}, key.data, key.len, &r,
                                    err);
        if (rc == 0 && r) /* damaged (r NULL): no limits */
            rc = cw_reply_array(r, 0, &count, "HGETALL rate_limits", err);
        count /= 2;
        if (rc == 0 && count) {
            l = cw_calloc(count, sizeof *l);
            rc = l ? read_setting(r, l, count, err) : cw_error(err, CWORK_ENOMEM, "out of memory");
            if (rc == 0) rc = read_state(c, &client->keys, l, count, err);
        }
        cw_reply_free(r);
        if (rc == 0) cw_damage_resolve(c, &client->keys);
        cw_redis_checkin(client->redis, c);
    }
    cw_buf_free(&key);
    if (rc) {
        cwork_rate_limit_infos_free(l, count);
        return cw_client_fail("client.rate_limits", rc, err);
    }
    *out = l;
    *n = count;
    return 0;
}

int cwork_client_set_rate_limit(cwork_client *client, const char *name, unsigned count,
                                int64_t window_ms, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client) return cw_error(err, CWORK_EINVAL, "cwork_client_set_rate_limit: client is NULL");
    int rc = cwork_validate_job_name(name, err);
    if (rc) return rc;
    int shards = cw_client_shard_count(client, err);
    if (shards != 1) {
        if (shards < 0) return shards;
        cw_shards_bulk b = {.kind = CW_SHARDS_SET_RATE_LIMIT,
                            .name = name,
                            .limit_count = count,
                            .window_ms = window_ms};
        int brc = cw_shards_bulk_run(client, (unsigned)shards, &b, err);
        return brc;
    }
    char text[CW_RATE_LIMIT_TEXT_MAX];
    if (count && (rc = cwork_rate_limit_format(count, window_ms, text, sizeof text, err)) != 0)
        return rc;
    cw_buf key;
    cw_buf_init(&key);
    cw_key_rate_limits(&client->keys, &key);
    if (key.oom) return cw_error(err, CWORK_ENOMEM, "out of memory");
    /* Removing leaves the state: it expires within one interval, and no pool reads it
     * without a limit. */
    const char *argv[] = {count ? "HSET" : "HDEL", key.data, name, text};
    rc = cw_redis_command(client->redis, count ? 4 : 3, argv, NULL, NULL, err);
    cw_buf_free(&key);
    return rc ? cw_client_fail("client.set_rate_limit", rc, err) : 0;
}
