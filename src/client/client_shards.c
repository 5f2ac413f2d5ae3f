/* The admin client of a sharded namespace (PROTOCOL §27): the shard record read when
 * due, and one client per shard, each an ordinary client of that shard's namespace on
 * a redis handle of its own (in a Redis Cluster a handle serves one namespace's slot).
 * The merged views are in client_shards_merge.c, _list.c and _job.c. */
#include "client.h"

#include "log.h"
#include "sharding.h"
#include "util.h"

#include <string.h>

cwork_client *cw_client_shard_at(cwork_client *client, unsigned i)
{
    return atomic_load(&atomic_load(&client->shard_clients)[i]);
}

/* Shard i's client: shard 0 shares the parent's handle, the others get a clone. */
static cwork_client *new_shard(cwork_client *parent, unsigned i, cwork_error *err)
{
    char ns[512];
    if (cw_sharding_ns(parent->ns, i, ns, sizeof ns, err) != 0) return NULL;
    cwork_redis *r = parent->redis;
    if (i > 0 && !(r = cw_redis_clone(parent->redis, err))) return NULL;
    cwork_client *shard = cwork_client_new(r, ns, err);
    if (!shard) {
        if (i > 0) cwork_redis_free(r);
        return NULL;
    }
    shard->shard_member = true;
    shard->owned_redis = i > 0 ? r : NULL;
    atomic_store(&shard->flavor, atomic_load(&parent->flavor));
    return shard;
}

/* Creates the clients of shards [0, count) that do not exist yet; under shards_mu. */
static int make_shards(cwork_client *c, unsigned count, cwork_error *err)
{
    cw_client_slot *slots = atomic_load(&c->shard_clients);
    if (!slots) {
        if (!(slots = cw_calloc(CW_SHARDING_MAX, sizeof *slots)))
            return cw_error(err, CWORK_ENOMEM, "out of memory");
        atomic_store(&c->shard_clients, slots);
    }
    for (unsigned i = 0; i < count; i++) {
        if (atomic_load(&slots[i])) continue;
        cwork_client *shard = new_shard(c, i, err);
        if (!shard) return err->code ? err->code : CWORK_ENOMEM;
        atomic_store(&slots[i], shard);
    }
    return 0;
}

int cw_client_shard_count(cwork_client *client, cwork_error *err)
{
    if (!client || client->shard_member) return 1;
    int64_t now = cw_monotonic_ms();
    int64_t next = atomic_load(&client->shards_next_ms);
    if (next != 0 && now < next) return (int)atomic_load(&client->shards);
    pthread_mutex_lock(&client->shards_mu);
    int rc = 0;
    next = atomic_load(&client->shards_next_ms);
    if (next == 0 || now >= next) { /* not read meanwhile by another thread */
        /* Once read, a record grown past the URL's shards= is followed (§27.5). */
        cw_sharding_state st;
        rc = cw_sharding_record_state(client->redis, client->ns,
                                      cw_redis_declared_shards(client->redis), next != 0, &st, err);
        unsigned count = rc == 0 ? st.count : 1;
        if (rc == 0 && count > 1) rc = make_shards(client, count, err);
        if (rc == 0) {
            atomic_store(&client->shards, count);
            atomic_store(&client->shards_next_ms, now + CW_CLIENT_SHARDS_REREAD_MS);
        }
    }
    unsigned count = atomic_load(&client->shards);
    pthread_mutex_unlock(&client->shards_mu);
    return rc ? cw_client_fail("client.shards", rc, err) : (int)count;
}

int cw_client_shards_reread(cwork_client *client, cwork_error *err)
{
    if (client && !client->shard_member) atomic_store(&client->shards_next_ms, -1);
    return cw_client_shard_count(client, err);
}

int cwork_client_shards(cwork_client *client, unsigned *count, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !count) return cw_error(err, CWORK_EINVAL, "cwork_client_shards: NULL argument");
    int rc = cw_client_shard_count(client, err);
    if (rc < 0) return rc;
    *count = (unsigned)rc;
    return 0;
}

cwork_client *cwork_client_shard(cwork_client *client, unsigned i, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client) {
        cw_error(err, CWORK_EINVAL, "cwork_client_shard: NULL client");
        return NULL;
    }
    int count = cw_client_shard_count(client, err);
    if (count < 0) return NULL;
    if (i >= (unsigned)count) {
        cw_error(err, CWORK_EINVAL, "shard %u: namespace %s has %d shard%s", i, client->ns, count,
                 count == 1 ? "" : "s");
        return NULL;
    }
    return count == 1 ? client : cw_client_shard_at(client, i);
}

int cwork_client_shards_created(cwork_client *client, int64_t *created, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !created)
        return cw_error(err, CWORK_EINVAL, "cwork_client_shards_created: NULL argument");
    *created = 0;
    cw_buf key;
    cw_buf_init(&key);
    cw_key_shards(&client->keys, &key);
    if (key.oom) return cw_error(err, CWORK_ENOMEM, "out of memory");
    const char *argv[] = {"HGET", key.data, "created"};
    redisReply *r = NULL;
    int rc = cw_redis_command(client->redis, 3, argv, NULL, &r, err);
    const char *s = NULL;
    size_t len = 0;
    if (rc == 0 && (rc = cw_reply_str_or_nil(r, &s, &len, key.data, err)) == 0 && s &&
        cw_parse_int64(s, len, created))
        rc = cw_error(err, CWORK_EINVAL, "%s is damaged: its created \"%.*s\" is not a time",
                      key.data, (int)(len > 40 ? 40 : len), s);
    cw_reply_free(r);
    cw_buf_free(&key);
    return rc ? cw_client_fail("client.shards_created", rc, err) : 0;
}
