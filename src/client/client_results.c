/* Reading results and kept successes (PROTOCOL §22): a job's result by id, waiting for
 * it on the results channel, and the succeeded jobs the types keep. */
#include "client.h"

#include <poll.h>
#include <string.h>

/* The bounded fallback of a wait: a GET this often, should the subscription miss the
 * message (a reconnect of the server in between). */
#define FALLBACK_GET_MS 5000

/* GET of the result key: 0 with the bytes, CWORK_ENOTFOUND, or an error. */
static int get_result(cwork_client *client, const cw_buf *key, char **out, size_t *len,
                      cwork_error *err)
{
    const char *argv[] = {"GET", key->data};
    size_t lens[] = {3, key->len};
    redisReply *r = NULL;
    int rc = cw_redis_command(client->redis, 2, argv, lens, &r, err);
    if (rc == CWORK_EREDIS && strstr(err->message, "WRONGTYPE")) {
        /* nothing else to show: the error names the key, its type and what it should be */
        cw_damage_note(key->data, key->len);
        cw_conn *c = NULL;
        if (cw_redis_checkout(client->redis, &c, NULL) == 0) {
            cw_damage_resolve(c, &client->keys);
            cw_redis_checkin(client->redis, c);
        }
        return cw_damage_error(err, CWORK_ETYPE, key->data, key->len);
    }
    if (rc) return rc;
    const char *s = NULL;
    size_t n = 0;
    rc = cw_reply_str_or_nil(r, &s, &n, key->data, err);
    if (rc == 0 && !s) rc = cw_error(err, CWORK_ENOTFOUND, "no result for %s", key->data);
    if (rc == 0) {
        *out = cw_malloc(n + 1);
        if (!*out) {
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        } else {
            memcpy(*out, s, n);
            (*out)[n] = '\0';
            *len = n;
        }
    }
    cw_reply_free(r);
    return rc;
}

/* Whether a reply on the subscribed connection is the message "id" on the channel. */
static bool is_our_message(redisReply *r, const char *id)
{
    const char *s;
    size_t len, n = 0;
    bool ours = cw_reply_array(r, 3, &n, NULL, NULL) == 0 && n == 3 &&
                cw_reply_at_str(r, 2, &s, &len, NULL, NULL) == 0 && len == strlen(id) &&
                memcmp(s, id, len) == 0;
    cw_reply_free(r);
    return ours;
}

/* Waits for the result: subscribed to the results channel before the first GET (so
 * that a commit between the two is not missed), then a GET after each message naming
 * the id, and every FALLBACK_GET_MS in case the subscription was lost. */
static int wait_result(cwork_client *client, const cw_buf *key, const char *id, int64_t wait_ms,
                       char **out, size_t *len, cwork_error *err)
{
    cw_buf channel;
    cw_buf_init(&channel);
    cw_key_results_channel(&client->keys, &channel);
    if (channel.oom) return cw_error(err, CWORK_ENOMEM, "out of memory");
    int64_t deadline = cw_monotonic_us() / 1000 + wait_ms;
    cw_conn *c = NULL;
    const char *sub[] = {"SUBSCRIBE", channel.data};
    size_t lens[] = {9, channel.len};
    redisReply *confirm = NULL;
    int rc = cw_redis_checkout(client->redis, &c, err);
    if (rc == 0) rc = cw_conn_append(c, 2, sub, lens, err);
    if (rc == 0) rc = cw_conn_read(c, &confirm, err);
    cw_reply_free(confirm);
    if (rc == 0) c->pending = 1; /* a subscribed connection always has replies coming */
    bool look = true;
    while (rc == 0) {
        if (look) {
            rc = get_result(client, key, out, len, err);
            if (rc != CWORK_ENOTFOUND) break;
            rc = 0;
            look = false;
        }
        int64_t left = deadline - cw_monotonic_us() / 1000;
        if (left <= 0) {
            rc = cw_error(err, CWORK_ENOTFOUND, "no result for %s after waiting", key->data);
            break;
        }
        redisReply *r = NULL;
        if (cw_conn_read_buffered(c, &r, err) != 0) {
            rc = CWORK_EREDIS;
            break;
        }
        if (r) {
            look = is_our_message(r, id);
            continue;
        }
        struct pollfd pfd = {cw_conn_fd(c), POLLIN, 0};
        int n = poll(&pfd, 1, (int)(left < FALLBACK_GET_MS ? left : FALLBACK_GET_MS));
        if (n == 0) {
            look = true; /* the bounded fallback: one GET a second */
        } else if (n > 0) {
            rc = cw_conn_read(c, &r, err);
            if (rc == 0) {
                c->pending = 1;
                look = is_our_message(r, id);
            }
        }
    }
    if (c) {
        c->broken = 1; /* subscribed: it cannot serve commands again */
        cw_redis_checkin(client->redis, c);
    }
    cw_buf_free(&channel);
    return rc;
}

int cwork_client_result(cwork_client *client, const char *id, int64_t wait_ms, char **out,
                        size_t *len, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (out) *out = NULL;
    if (len) *len = 0;
    if (!client || !id || !*id || !out)
        return cw_error(err, CWORK_EINVAL,
                        "cwork_client_result: a client, an id and out are required");
    int rc = cw_check_duration_ms("wait_ms", wait_ms, err);
    if (rc) return rc;
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards
                          : cw_shards_result(client, (unsigned)shards, id, wait_ms, out, len, err);
    cw_buf key;
    cw_buf_init(&key);
    cw_key_result(&client->keys, &key, id);
    size_t n = 0;
    if (key.oom)
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    else if (wait_ms > 0)
        rc = wait_result(client, &key, id, wait_ms, out, &n, err);
    else
        rc = get_result(client, &key, out, &n, err);
    cw_buf_free(&key);
    if (rc == 0 && len) *len = n;
    if (rc && rc != CWORK_ENOTFOUND && rc != CWORK_ETYPE)
        return cw_client_fail("client.result", rc, err);
    return rc;
}
