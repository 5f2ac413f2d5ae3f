/* Growing a sharded namespace (PROTOCOL §27.5): the record's change in one script, the
 * grow's progress (what in the old shards still routes by the old count), and its end.
 *
 * A guard (`<p>unique:…`) or an open tracked batch (`<p>cwork:batch:<id>`, its callback
 * still waiting) that sits in one of the `from` old shards and whose routing key lands
 * on another shard under `count` is one an enqueue must still look for in the old shard;
 * the grow may end when there is none, and when every enqueuer has read the grown record
 * and the forwarding markers made meanwhile have expired. */
#include "client.h"

#include "argv.h"
#include "clock.h"
#include "scripts.h"
#include "sharding.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

static int oom(cwork_error *err)
{
    return cw_error(err, CWORK_ENOMEM, "out of memory");
}

int cwork_client_shards_grow(cwork_client *client, unsigned shards, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client) return cw_error(err, CWORK_EINVAL, "cwork_client_shards_grow: NULL client");
    if (shards < 2 || shards > CW_SHARDING_MAX)
        return cw_error(err, CWORK_EINVAL, "grow to %u shards: a grow goes to 2 to %d shards",
                        shards, CW_SHARDING_MAX);
    int rc = cw_sharding_check_ns(client->ns, err);
    cw_sharding_state st;
    if (rc == 0) /* a damaged record is named before anything is written */
        rc = cw_sharding_record_state(client->redis, client->ns, 0, true, &st, err);
    if (rc) return rc;
    cw_buf key;
    cw_buf_init(&key);
    cw_key_shards(&client->keys, &key);
    if (key.oom) return oom(err);
    char want[16], now[24];
    snprintf(want, sizeof want, "%u", shards);
    snprintf(now, sizeof now, "%lld", (long long)cw_clock_now());
    const char *argv[] = {key.data, want, now, "fnv1a64-jump"};
    size_t lens[] = {key.len, strlen(want), strlen(now), strlen(argv[3])};
    cw_conn *c = NULL;
    redisReply *r = NULL;
    cwork_error e = {0};
    rc = cw_redis_checkout(client->redis, &c, &e);
    if (rc == 0) {
        rc = cw_conn_eval(c, &cw_script_shards_grow, 1, 3, argv, lens, &r, &e);
        if (rc == 0) rc = cw_conn_wait_replicas(c, &e);
        cw_redis_checkin(client->redis, c);
    }
    const char *why = rc ? e.message : NULL;
    const char *refused = NULL;
    if (why && (refused = strstr(why, "SHRINK ")) != NULL)
        rc = cw_error(err, CWORK_EINVAL, "%s", refused + 7);
    else if (why && (refused = strstr(why, "GROWING ")) != NULL)
        rc = cw_error(err, CWORK_EINVAL, "%s", refused + 8);
    else if (why && (refused = strstr(why, "WRONGTYPE ")) != NULL)
        rc = cw_error(err, CWORK_EINVAL, "%s is damaged: %s", key.data, refused + 10);
    else if (rc)
        *err = e;
    cw_reply_free(r);
    cw_buf_free(&key);
    if (rc == 0) rc = cw_client_shards_reread(client, err) < 0 ? err->code : 0;
    /* a refusal (shrinking, a grow in progress, damage) is the caller's to report */
    return rc && rc != CWORK_EINVAL ? cw_client_fail("client.shards_grow", rc, err) : rc;
}

/* Every key of shard c matching <prefix><pattern>* into out (SCAN, each key once or
 * more: the caller tolerates repeats only as a count that is too high, never too low). */
static int scan_keys(cwork_client *c, const char *pattern, cw_argv *out, cwork_error *err)
{
    cw_buf match;
    cw_buf_init(&match);
    for (size_t i = 0; i < c->keys.prefix_len; i++) {
        if (strchr("*?[]\\", c->keys.prefix[i])) cw_buf_putc(&match, '\\');
        cw_buf_putc(&match, c->keys.prefix[i]);
    }
    cw_buf_puts(&match, pattern);
    cw_buf_putc(&match, '*');
    if (match.oom) return oom(err);
    cw_conn *conn = NULL;
    int rc = cw_redis_checkout(c->redis, &conn, err);
    char cursor[32] = "0";
    while (rc == 0) {
        const char *sa[] = {"SCAN", cursor, "MATCH", match.data, "COUNT", "1000"};
        size_t sl[] = {4, strlen(cursor), 5, match.len, 5, 4};
        redisReply *r = NULL;
        const char *next = NULL;
        rc = cw_conn_command(conn, 6, sa, sl, &r, err);
        if (rc == 0) rc = cw_reply_at_str(r, 0, &next, NULL, "SCAN", err);
        if (rc == 0) rc = cw_reply_strings(cw_reply_at(r, 1), out, "SCAN", err);
        if (rc == 0) snprintf(cursor, sizeof cursor, "%s", next);
        cw_reply_free(r);
        if (rc == 0 && strcmp(cursor, "0") == 0) break;
    }
    if (conn) cw_redis_checkin(c->redis, conn);
    cw_buf_free(&match);
    if (rc == 0) {
        cw_argv_sort(out); /* SCAN may repeat a key: counted once */
        size_t w = 0;
        for (size_t i = 0; i < out->n; i++)
            if (i == 0 || strcmp(out->argv[i], out->argv[w - 1]) != 0) {
                out->argv[w] = out->argv[i];
                out->lens[w++] = out->lens[i];
            }
        out->n = w;
    }
    return rc;
}

/* Whether the unique key text [t, t + len) ("<name>:<JSON>") is of a pinned type:
 * routed by name, its shard never moves. */
static bool of_pinned(const cw_argv *pinned, const char *t, size_t len)
{
    for (size_t i = 0; i < pinned->n; i++) {
        size_t n = pinned->lens[i];
        if (n < len && t[n] == ':' && memcmp(t, pinned->argv[i], n) == 0) return true;
    }
    return false;
}

/* The guards of old shard `shard` that moved: their routing key is the guard key's text
 * after "<p>unique:", without the newline. */
static int count_guards(cwork_client *sc, const cw_sharding_state *st, const cw_argv *pinned,
                        int64_t *n, cwork_error *err)
{
    cw_argv keys;
    cw_argv_init(&keys);
    int rc = scan_keys(sc, "unique:", &keys, err);
    size_t skip = sc->keys.prefix_len + strlen("unique:");
    for (size_t i = 0; rc == 0 && i < keys.n; i++) {
        const char *t = keys.argv[i] + skip;
        size_t len = keys.lens[i] - skip;
        if (len && t[len - 1] == '\n') len--;
        if (of_pinned(pinned, t, len)) continue;
        if (cw_sharding_of(t, len, st->from) != cw_sharding_of(t, len, st->count)) (*n)++;
    }
    cw_argv_free(&keys);
    return rc;
}

/* The open batches of old shard sc that moved (their callback still waiting). */
static int count_batches(cwork_client *sc, const cw_sharding_state *st, int64_t *n,
                         cwork_error *err)
{
    cw_argv keys;
    cw_argv_init(&keys);
    int rc = scan_keys(sc, "cwork:batch:", &keys, err);
    size_t skip = sc->keys.prefix_len + strlen("cwork:batch:");
    for (size_t i = 0; rc == 0 && i < keys.n; i++) {
        const char *id = keys.argv[i] + skip;
        size_t len = keys.lens[i] - skip;
        if (len != 24 || cw_sharding_of(id, len, st->from) == cw_sharding_of(id, len, st->count))
            continue; /* (the :jobs keys, and batches that did not move) */
        const char *argv[] = {"HGET", keys.argv[i], "callback"};
        redisReply *r = NULL;
        cwork_error e = {0};
        if (cw_redis_command(sc->redis, 3, argv, NULL, &r, &e) == 0 &&
            r->type == REDIS_REPLY_STRING && strcmp(r->str, "waiting") == 0)
            (*n)++;
        else if (e.code && !strstr(e.message, "WRONGTYPE"))
            rc = cw_error(err, e.code, "%s", e.message);
        cw_reply_free(r);
    }
    cw_argv_free(&keys);
    return rc;
}

/* The pinned names (<p>cwork:shard_pinned in shard 0). */
static int read_pinned(cwork_client *client, cw_argv *out, cwork_error *err)
{
    cw_buf key;
    cw_buf_init(&key);
    cw_key_shard_pinned(&client->keys, &key);
    if (key.oom) return oom(err);
    const char *argv[] = {"SMEMBERS", key.data};
    redisReply *r = NULL;
    int rc = cw_redis_command(client->redis, 2, argv, NULL, &r, err);
    if (rc == 0) rc = cw_reply_strings(r, out, key.data, err);
    cw_reply_free(r);
    cw_buf_free(&key);
    return rc;
}

int cwork_client_shards_growth(cwork_client *client, cwork_shards_growth *out, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !out)
        return cw_error(err, CWORK_EINVAL, "cwork_client_shards_growth: NULL argument");
    memset(out, 0, sizeof *out);
    cw_sharding_state st;
    int rc = cw_sharding_record_state(client->redis, client->ns, 0, true, &st, err);
    if (rc) return cw_client_fail("client.shards_growth", rc, err);
    out->count = st.count;
    out->from = st.from;
    out->homes = st.homes;
    out->grown = st.grown;
    if (!st.from) return 0;
    if (cw_client_shards_reread(client, err) < 0) return err->code;
    cw_argv pinned;
    cw_argv_init(&pinned);
    rc = read_pinned(client, &pinned, err);
    for (unsigned i = 0; rc == 0 && i < st.from; i++) {
        cwork_client *sc = cw_client_shard_at(client, i);
        if (!sc) rc = cw_error(err, CWORK_EINVAL, "shard %u of %s: no client", i, client->ns);
        if (rc == 0) rc = count_guards(sc, &st, &pinned, &out->guards, err);
        if (rc == 0) rc = count_batches(sc, &st, &out->batches, err);
    }
    cw_argv_free(&pinned);
    int64_t left = st.grown + CW_SHARDING_FORWARD_TTL - cw_clock_now();
    out->wait_seconds = left > 0 ? left : 0;
    out->finishable = rc == 0 && !out->guards && !out->batches && !out->wait_seconds;
    return rc ? cw_client_fail("client.shards_growth", rc, err) : 0;
}

int cwork_client_shards_finish(cwork_client *client, cwork_shards_growth *out, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    cwork_shards_growth g;
    int rc = cwork_client_shards_growth(client, &g, err);
    if (out) *out = g;
    if (rc || !g.from) return rc;
    if (!g.finishable)
        return cw_error(err, CWORK_EINVAL,
                        "the grow of %s from %u to %u shards cannot end yet: %lld guard%s and "
                        "%lld open batch%s in the old shards still route there, %lld s of "
                        "forwarding left",
                        client->ns, g.from, g.count, (long long)g.guards, g.guards == 1 ? "" : "s",
                        (long long)g.batches, g.batches == 1 ? "" : "es",
                        (long long)g.wait_seconds);
    cw_buf key;
    cw_buf_init(&key);
    cw_key_shards(&client->keys, &key);
    if (key.oom) return oom(err);
    char from[16], count[16];
    snprintf(from, sizeof from, "%u", g.from);
    snprintf(count, sizeof count, "%u", g.count);
    const char *argv[] = {key.data, from, count};
    size_t lens[] = {key.len, strlen(from), strlen(count)};
    cw_conn *c = NULL;
    redisReply *r = NULL;
    rc = cw_redis_checkout(client->redis, &c, err);
    if (rc == 0) {
        rc = cw_conn_eval(c, &cw_script_shards_finish, 1, 2, argv, lens, &r, err);
        if (rc == 0) rc = cw_conn_wait_replicas(c, err);
        cw_redis_checkin(client->redis, c);
    }
    const char *answer = NULL;
    size_t len = 0;
    if (rc == 0) rc = cw_reply_str(r, &answer, &len, "shards_finish script", err);
    if (rc == 0 && len == 7 && memcmp(answer, "changed", 7) == 0)
        rc = cw_error(err, CWORK_EINVAL, "%s changed while the grow was checked: nothing done",
                      key.data);
    if (rc == 0 && out) out->from = 0;
    cw_reply_free(r);
    cw_buf_free(&key);
    return rc ? cw_client_fail("client.shards_finish", rc, err) : 0;
}
