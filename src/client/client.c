/* The admin client (PROTOCOL §11): queues, worker pools and their workers, pause, and
 * lookup of a job by id. The sets are in client_list.c, the web bodies in
 * client_json.c. */
#include "client.h"

#include "flavor.h"
#include "log.h"
#include "sharding.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- shared helpers */

/* Owned copies of v's strings (each and the array: cw_free); 0 or CWORK_ENOMEM. */
static int copy_strings(const cw_argv *v, char ***out)
{
    *out = cw_calloc(v->n ? v->n : 1, sizeof **out);
    for (size_t i = 0; *out && i < v->n; i++) {
        if (((*out)[i] = cw_argv_dup(v, i)) == NULL) {
            for (size_t j = 0; j < i; j++)
                cw_free((*out)[j]);
            cw_free(*out);
            *out = NULL;
        }
    }
    return *out ? 0 : CWORK_ENOMEM;
}

int cw_client_fail(const char *step, int rc, const cwork_error *err)
{
    if (rc == CWORK_ETYPE) return rc; /* a damaged key: named to the caller, listed once */
    cw_log(CWORK_LOG_ERROR, step, "error", err ? err->message : cwork_strerror(rc), NULL);
    return rc;
}

int cw_client_smembers(cw_conn *c, const cw_buf *key, cw_argv *out, cwork_error *err)
{
    if (key->oom) return cw_error(err, CWORK_ENOMEM, "out of memory");
    const char *argv[] = {"SMEMBERS", key->data};
    size_t lens[] = {8, key->len};
    redisReply *r = NULL;
    /* a damaged set (WRONGTYPE) is noted and read as empty */
    int rc = cw_client_read_command(c, 2, argv, lens, key->data, key->len, &r, err);
    if (rc == 0 && !r) return 0;
    if (rc == 0) rc = cw_reply_strings(r, out, "SMEMBERS", err);
    cw_reply_free(r);
    if (rc) return rc;
    cw_argv_sort(out);
    return cw_argv_check(out, err);
}

void cw_client_free_replies(redisReply **replies, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cw_reply_free(replies[i]);
        replies[i] = NULL;
    }
}

int cw_client_read_replies(cw_conn *c, size_t n, redisReply **replies, cwork_error *err)
{
    int rc = 0;
    memset(replies, 0, n * sizeof *replies);
    for (size_t i = 0; i < n; i++) {
        int io = cw_conn_read(c, &replies[i], err);
        if (io) {
            rc = io;
            break;
        }
        const char *refused = cw_reply_error(replies[i]);
        if (refused && rc == 0) rc = cw_error(err, CWORK_EREDIS, "redis: %s", refused);
    }
    if (rc) cw_client_free_replies(replies, n);
    return rc;
}

int cw_client_score(const redisReply *r, int64_t *out)
{
    const char *s;
    size_t len;
    if (cw_reply_str(r, &s, &len, NULL, NULL) != 0) return -1;
    return cw_score_parse(s, len, out);
}

int cw_client_set_key(const cw_keys *k, cwork_job_set set, cw_buf *out, cwork_error *err)
{
    switch (set) {
    case CWORK_SET_RETRY:
        cw_key_retry(k, out);
        break;
    case CWORK_SET_SCHEDULED:
        cw_key_scheduled(k, out);
        break;
    case CWORK_SET_DEAD:
        cw_key_dead(k, out);
        break;
    default:
        return cw_error(err, CWORK_EINVAL, "unknown job set %d", (int)set);
    }
    return out->oom ? cw_error(err, CWORK_ENOMEM, "out of memory") : 0;
}

/* ---------------------------------------------------------------- life cycle */

cwork_client *cwork_client_new(cwork_redis *redis, const char *ns, cwork_error *err)
{
    if (!redis || !ns) {
        cw_error(err, CWORK_EINVAL, "cwork_client_new: redis and namespace are required");
        return NULL;
    }
    if (cw_redis_use_namespace(redis, ns, err) != 0) /* Redis Cluster: a hash tag */
        return NULL;
    cwork_client *cl = cw_calloc(1, sizeof *cl);
    if (!cl || cw_keys_init(&cl->keys, ns) != 0 || !(cl->ns = cw_strdup(ns))) {
        if (cl) cw_keys_clear(&cl->keys);
        cw_free(cl);
        cw_error(err, CWORK_ENOMEM, "out of memory");
        return NULL;
    }
    cl->redis = redis;
    atomic_init(&cl->shards, 1);
    pthread_mutex_init(&cl->shards_mu, NULL);
    return cl;
}

void cwork_client_free(cwork_client *client)
{
    if (!client) return;
    cw_client_slot *slots = atomic_load(&client->shard_clients);
    if (slots) {
        for (unsigned i = 0; i < CW_SHARDING_MAX; i++)
            cwork_client_free(atomic_load(&slots[i]));
        cw_free((void *)slots);
    }
    cwork_redis_free(client->owned_redis);
    pthread_mutex_destroy(&client->shards_mu);
    cw_keys_clear(&client->keys);
    cw_free(client->ns);
    cw_free(client);
}

int cwork_client_set_go_flavor(cwork_client *client, cwork_go_flavor flavor)
{
    if (!client) return CWORK_EINVAL;
    int rc = cw_go_flavor_check(flavor, "cwork_client_set_go_flavor", NULL);
    if (rc == 0) atomic_store_explicit(&client->flavor, flavor, memory_order_relaxed);
    cw_client_slot *slots = atomic_load(&client->shard_clients);
    for (unsigned i = 0; rc == 0 && slots && i < CW_SHARDING_MAX; i++) {
        cwork_client *shard = atomic_load(&slots[i]);
        if (shard) atomic_store_explicit(&shard->flavor, flavor, memory_order_relaxed);
    }
    return rc;
}

/* ---------------------------------------------------------------- queues */

void cwork_queue_infos_free(cwork_queue_info *queues, size_t n)
{
    if (!queues) return;
    for (size_t i = 0; i < n; i++)
        cw_free(queues[i].job_name);
    cw_free(queues);
}

/* Latency of a queue from its oldest job (LINDEX -1): now − t, or 0 when the queue
 * emptied meanwhile or the job cannot be decoded (Go crashes there, PROTOCOL §16.13). */
static int64_t queue_latency(const redisReply *head, int64_t now)
{
    const char *bytes;
    size_t len;
    if (cw_reply_str(head, &bytes, &len, NULL, NULL) != 0) return 0;
    cwork_job *job = NULL;
    cwork_error e = {0};
    if (cw_job_decode(bytes, len, &job, &e) != 0) {
        cw_client_fail("client.queues.new_job", e.code, &e);
        return 0;
    }
    int64_t latency = now - job->t;
    cwork_job_free(job);
    return latency;
}

/* The replies of a queue's LLEN, EXISTS and LINDEX, each WRONGTYPE reply (a damaged
 * queue) noted and left NULL. */
static int read_replies_of(cw_conn *c, const cw_keys *k, const char *name, redisReply *r[3],
                           cwork_error *err)
{
    int rc = 0;
    memset(r, 0, 3 * sizeof *r);
    for (int i = 0; i < 3 && rc == 0; i++)
        rc = cw_conn_read(c, &r[i], err);
    cw_buf key;
    cw_buf_init(&key);
    cw_key_queue(k, &key, name);
    for (int i = 0; i < 3 && rc == 0; i++) {
        if (key.oom)
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        else if (i != 1)
            cw_damage_reply(&r[i], key.data, key.len);
        const char *refused = cw_reply_error(r[i]);
        if (refused && rc == 0) rc = cw_error(err, CWORK_EREDIS, "redis: %s", refused);
    }
    cw_buf_free(&key);
    if (rc) cw_client_free_replies(r, 3);
    return rc;
}

/* Per name one pipelined LLEN, EXISTS <paused> and LINDEX -1: one round trip for all. */
static int read_queues(cw_conn *c, const cw_keys *k, cwork_queue_info *q, size_t n,
                       cwork_error *err)
{
    cw_buf key;
    cw_buf_init(&key);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        cw_buf_reset(&key);
        cw_key_queue(k, &key, q[i].job_name);
        size_t queue_len = key.len;
        cw_buf_putc(&key, '\0');
        cw_key_paused(k, &key, q[i].job_name);
        if (key.oom) {
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
            break;
        }
        const char *llen[] = {"LLEN", key.data};
        const char *exists[] = {"EXISTS", key.data + queue_len + 1};
        const char *lindex[] = {"LINDEX", key.data, "-1"};
        size_t llen_lens[] = {4, queue_len};
        size_t exists_lens[] = {6, key.len - queue_len - 1};
        size_t lindex_lens[] = {6, queue_len, 2};
        if ((rc = cw_conn_append(c, 2, llen, llen_lens, err)) != 0 ||
            (rc = cw_conn_append(c, 2, exists, exists_lens, err)) != 0 ||
            (rc = cw_conn_append(c, 3, lindex, lindex_lens, err)) != 0)
            break;
    }
    cw_buf_free(&key);
    if (rc) return rc;
    redisReply *r[3];
    int64_t now = cw_now();
    for (size_t i = 0; i < n; i++) {
        if ((rc = read_replies_of(c, k, q[i].job_name, r, err)) != 0) return rc;
        int64_t paused = 0;
        /* a damaged queue (its LLEN and LINDEX nil) is listed as empty, and named */
        if ((r[0] && (rc = cw_reply_int(r[0], &q[i].count, "LLEN", err)) == 0) || !r[0])
            rc = cw_reply_int(r[1], &paused, "EXISTS", err);
        if (rc == 0) {
            q[i].paused = paused > 0;
            q[i].latency = q[i].count > 0 ? queue_latency(r[2], now) : 0;
        }
        cw_client_free_replies(r, 3);
        if (rc) return rc;
    }
    return 0;
}

int cwork_client_queues(cwork_client *client, cwork_queue_info **out, size_t *n, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !out || !n)
        return cw_error(err, CWORK_EINVAL, "cwork_client_queues: NULL argument");
    *out = NULL;
    *n = 0;
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards : cw_shards_queues(client, (unsigned)shards, out, n, err);
    cw_conn *c;
    int rc = cw_redis_checkout(client->redis, &c, err);
    if (rc) return cw_client_fail("client.queues.checkout", rc, err);
    cw_argv names = {0};
    cw_buf key;
    cw_buf_init(&key);
    cw_key_known_jobs(&client->keys, &key);
    cwork_queue_info *q = NULL;
    size_t count = 0;
    rc = cw_client_smembers(c, &key, &names, err);
    if (rc == 0 && !(q = cw_calloc(names.n ? names.n : 1, sizeof *q)))
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0) {
        for (; rc == 0 && count < names.n; count++)
            if (!(q[count].job_name = cw_argv_dup(&names, count)))
                rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        if (rc == 0) rc = read_queues(c, &client->keys, q, count, err);
    }
    if (rc == 0) cw_damage_resolve(c, &client->keys);
    cw_redis_checkin(client->redis, c);
    cw_buf_free(&key);
    cw_argv_free(&names);
    if (rc) {
        cwork_queue_infos_free(q, count);
        return cw_client_fail("client.queues", rc, err);
    }
    *out = q;
    *n = count;
    return 0;
}

/* ---------------------------------------------------------------- worker pools */

void cwork_pool_heartbeats_free(cwork_pool_heartbeat *pools, size_t n)
{
    if (!pools) return;
    for (size_t i = 0; i < n; i++) {
        cw_free(pools[i].worker_pool_id);
        cw_free(pools[i].host);
        for (size_t j = 0; j < pools[i].n_job_names; j++)
            cw_free(pools[i].job_names[j]);
        cw_free(pools[i].job_names);
        for (size_t j = 0; j < pools[i].n_worker_ids; j++)
            cw_free(pools[i].worker_ids[j]);
        cw_free(pools[i].worker_ids);
        cw_free(pools[i].damaged);
    }
    cw_free(pools);
}

/* strconv.ParseInt(s, 10, 64) (an optional sign) and ParseUint (no sign), with Go's
 * error text. */
static int parse_int(const char *v, size_t vlen, int64_t *out, cwork_error *err)
{
    const char *s = v;
    size_t len = vlen;
    if (len > 1 && s[0] == '+' && s[1] != '-') {
        s++;
        len--;
    }
    if (cw_parse_int64(s, len, out) == 0) return 0;
    return cw_error(err, CWORK_EPROTO, "strconv.ParseInt: parsing \"%.*s\": invalid syntax",
                    (int)(vlen > 64 ? 64 : vlen), v);
}

static int parse_uint(const char *v, size_t len, uint64_t max, uint64_t *out, cwork_error *err)
{
    uint64_t n = 0;
    size_t i = 0;
    for (; i < len && v[i] >= '0' && v[i] <= '9'; i++) {
        unsigned d = (unsigned)(v[i] - '0');
        if (n > (max - d) / 10) break;
        n = n * 10 + d;
    }
    if (len == 0 || i != len)
        return cw_error(err, CWORK_EPROTO, "strconv.ParseUint: parsing \"%.*s\": invalid syntax",
                        (int)(len > 64 ? 64 : len), v);
    *out = n;
    return 0;
}

/* strings.Split(value, ",") then sort.Strings: an empty value gives one empty string. */
static int split_sorted(const char *v, size_t len, char ***items, size_t *n)
{
    cw_argv l = {0};
    const char *p = v, *end = v + len;
    for (;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        cw_argv_add_ref(&l, p, (size_t)(stop - p));
        if (!comma) break;
        p = comma + 1;
    }
    cw_argv_sort(&l);
    char **copies = NULL;
    int rc = l.oom ? CWORK_ENOMEM : copy_strings(&l, &copies);
    size_t count = l.n;
    cw_argv_free(&l);
    if (rc) return rc;
    /* a second value of the same field replaces the first, as in Go */
    for (size_t j = 0; j < *n; j++)
        cw_free((*items)[j]);
    cw_free(*items);
    *items = copies;
    *n = count;
    return 0;
}

static int set_str(char **field, const char *v, size_t len)
{
    char *s = cw_strndup(v, len);
    if (!s) return CWORK_ENOMEM;
    cw_free(*field);
    *field = s;
    return 0;
}

/* Fills hb from an HGETALL reply (field, value, …); unknown fields are ignored. */
/* Field and value i of an HGETALL reply r (n elements): 0, or CWORK_EPROTO. */
static int hash_entry(const redisReply *r, size_t i, const char **f, const char **v, size_t *vlen,
                      cwork_error *err)
{
    int rc = cw_reply_at_str(r, i, f, NULL, "HGETALL", err);
    return rc ? rc : cw_reply_at_str(r, i + 1, v, vlen, "HGETALL", err);
}

/* Fills hb from an HGETALL reply (field, value, …) of key; unknown fields are ignored. A
 * field whose value cannot be read (someone wrote to the hash) does not fail the whole
 * listing, as it does Go's: hb->damaged names the key, the field and why. */
static int parse_heartbeat(const redisReply *r, const char *key, cwork_pool_heartbeat *hb,
                           cwork_error *err)
{
    size_t n = 0;
    int rc = cw_reply_array(r, 0, &n, "HGETALL", err);
    for (size_t i = 0; rc == 0 && i + 1 < n; i += 2) {
        const char *f, *v;
        size_t len;
        if ((rc = hash_entry(r, i, &f, &v, &len, err)) != 0) break;
        uint64_t u = 0;
        int64_t pid = 0;
        if (!strcmp(f, "heartbeat_at")) {
            rc = parse_int(v, len, &hb->heartbeat_at, err);
        } else if (!strcmp(f, "started_at")) {
            rc = parse_int(v, len, &hb->started_at, err);
        } else if (!strcmp(f, "job_names")) {
            if (split_sorted(v, len, &hb->job_names, &hb->n_job_names))
                rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        } else if (!strcmp(f, "concurrency")) {
            if ((rc = parse_uint(v, len, UINT_MAX, &u, err)) == 0) hb->concurrency = (unsigned)u;
        } else if (!strcmp(f, "host")) {
            if (set_str(&hb->host, v, len)) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        } else if (!strcmp(f, "pid")) {
            if ((rc = parse_int(v, len, &pid, err)) == 0 && (pid < INT_MIN || pid > INT_MAX))
                rc = cw_error(err, CWORK_EPROTO, "pid %lld out of range", (long long)pid);
            if (rc == 0) hb->pid = (int)pid;
        } else if (!strcmp(f, "worker_ids")) {
            if (split_sorted(v, len, &hb->worker_ids, &hb->n_worker_ids))
                rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        }
        if (rc == CWORK_EPROTO && !hb->damaged) {
            char text[400];
            snprintf(text, sizeof text, "%s field %s: %s", key, f, err ? err->message : "");
            if (!(hb->damaged = cw_strdup(text)))
                rc = cw_error(err, CWORK_ENOMEM, "out of memory");
            else
                rc = 0;
        } else if (rc == CWORK_EPROTO) {
            rc = 0; /* the first damaged field is named */
        }
    }
    return rc;
}

/* SMEMBERS worker_pools, sorted, then one pipelined HGETALL per id (PROTOCOL §11). */
static int read_pools(cw_conn *c, const cw_keys *k, cwork_pool_heartbeat **out, size_t *n,
                      cwork_error *err)
{
    cw_argv ids = {0};
    cw_buf key;
    cw_buf_init(&key);
    cw_key_worker_pools(k, &key);
    int rc = cw_client_smembers(c, &key, &ids, err);
    cwork_pool_heartbeat *hb = NULL;
    size_t count = 0;
    if (rc == 0 && !(hb = cw_calloc(ids.n ? ids.n : 1, sizeof *hb)))
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < ids.n; i++) {
        cw_buf_reset(&key);
        cw_key_worker_pool(k, &key, ids.argv[i]);
        const char *argv[] = {"HGETALL", key.data};
        size_t lens[] = {7, key.len};
        rc = key.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                     : cw_conn_append(c, 2, argv, lens, err);
    }
    for (; rc == 0 && count < ids.n; count++) {
        hb[count].worker_pool_id = cw_argv_dup(&ids, count);
        if (!hb[count].worker_pool_id || !(hb[count].host = cw_strdup(""))) {
            count++;
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
            break;
        }
        redisReply *r = NULL;
        cw_buf_reset(&key);
        cw_key_worker_pool(k, &key, ids.argv[count]);
        if ((rc = cw_conn_read(c, &r, err)) == 0 && key.oom)
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        if (rc == 0 && cw_damage_reply(&r, key.data, key.len)) {
            /* a damaged heartbeat: the pool is listed, and says so */
            char text[400];
            snprintf(text, sizeof text, "%.300s is no hash", key.data);
            hb[count].damaged = cw_strdup(text);
            if (!hb[count].damaged) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
            continue;
        }
        if (rc == 0 && cw_reply_error(r))
            rc = cw_error(err, CWORK_EREDIS, "redis: %s", cw_reply_error(r));
        if (rc) {
            cw_reply_free(r);
            cw_client_fail("worker_pool_statuses.receive", rc, err);
            count++;
            break;
        }
        rc = parse_heartbeat(r, key.data, &hb[count], err);
        cw_reply_free(r);
        if (rc) {
            cw_client_fail("worker_pool_statuses.parse", rc, err);
            count++;
            break;
        }
    }
    cw_buf_free(&key);
    cw_argv_free(&ids);
    if (rc) {
        cwork_pool_heartbeats_free(hb, count);
        return rc;
    }
    *out = hb;
    *n = count;
    return 0;
}

int cwork_client_pools(cwork_client *client, cwork_pool_heartbeat **out, size_t *n,
                       cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !out || !n)
        return cw_error(err, CWORK_EINVAL, "cwork_client_pools: NULL argument");
    *out = NULL;
    *n = 0;
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards : cw_shards_pools(client, (unsigned)shards, out, n, err);
    cw_conn *c;
    int rc = cw_redis_checkout(client->redis, &c, err);
    if (rc == 0) {
        rc = read_pools(c, &client->keys, out, n, err);
        if (rc == 0) cw_damage_resolve(c, &client->keys);
        cw_redis_checkin(client->redis, c);
    }
    return rc ? cw_client_fail("client.worker_pool_heartbeats", rc, err) : 0;
}

/* ---------------------------------------------------------------- workers */

void cwork_worker_observations_free(cwork_worker_observation *workers, size_t n)
{
    if (!workers) return;
    for (size_t i = 0; i < n; i++) {
        cw_free(workers[i].worker_id);
        cw_free(workers[i].job_name);
        cw_free(workers[i].job_id);
        cw_free(workers[i].args_json);
        cw_free(workers[i].checkin);
    }
    cw_free(workers);
}

/* Fills ob from an HGETALL reply of <p>worker:<id>; any field makes the worker busy. */
static int parse_observation(const redisReply *r, cwork_worker_observation *ob, cwork_error *err)
{
    size_t n = 0;
    int rc = cw_reply_array(r, 0, &n, "HGETALL", err);
    for (size_t i = 0; rc == 0 && i + 1 < n; i += 2) {
        const char *f, *v;
        size_t len;
        if ((rc = hash_entry(r, i, &f, &v, &len, err)) != 0) break;
        ob->is_busy = true;
        char **s = !strcmp(f, "job_name")  ? &ob->job_name
                   : !strcmp(f, "job_id")  ? &ob->job_id
                   : !strcmp(f, "args")    ? &ob->args_json
                   : !strcmp(f, "checkin") ? &ob->checkin
                                           : NULL;
        if (s && set_str(s, v, len))
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        else if (!strcmp(f, "started_at"))
            rc = parse_int(v, len, &ob->started_at, err);
        else if (!strcmp(f, "checkin_at"))
            rc = parse_int(v, len, &ob->checkin_at, err);
    }
    return rc;
}

static int read_workers(cw_conn *c, const cw_keys *k, const cwork_pool_heartbeat *hb, size_t npools,
                        cwork_worker_observation **out, size_t *n, cwork_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < npools; i++)
        total += hb[i].n_worker_ids;
    cwork_worker_observation *ob = cw_calloc(total ? total : 1, sizeof *ob);
    if (!ob) return cw_error(err, CWORK_ENOMEM, "out of memory");
    cw_buf key;
    cw_buf_init(&key);
    int rc = 0;
    size_t count = 0;
    for (size_t i = 0; i < npools && rc == 0; i++) {
        for (size_t j = 0; j < hb[i].n_worker_ids && rc == 0; j++, count++) {
            cwork_worker_observation *o = &ob[count];
            o->worker_id = cw_strdup(hb[i].worker_ids[j]);
            o->job_name = cw_strdup("");
            o->job_id = cw_strdup("");
            o->args_json = cw_strdup("");
            o->checkin = cw_strdup("");
            cw_buf_reset(&key);
            cw_key_worker(k, &key, hb[i].worker_ids[j]);
            const char *argv[] = {"HGETALL", key.data};
            size_t lens[] = {7, key.len};
            if (!o->worker_id || !o->job_name || !o->job_id || !o->args_json || !o->checkin ||
                key.oom)
                rc = cw_error(err, CWORK_ENOMEM, "out of memory");
            else
                rc = cw_conn_append(c, 2, argv, lens, err);
        }
    }
    for (size_t i = 0; i < total && rc == 0; i++) {
        redisReply *r = NULL;
        cw_buf_reset(&key);
        cw_key_worker(k, &key, ob[i].worker_id);
        if ((rc = cw_conn_read(c, &r, err)) == 0 && key.oom)
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        if (rc == 0 && cw_damage_reply(&r, key.data, key.len)) continue; /* not busy */
        if (rc == 0 && cw_reply_error(r))
            rc = cw_error(err, CWORK_EREDIS, "redis: %s", cw_reply_error(r));
        if (rc) {
            cw_reply_free(r);
            cw_client_fail("worker_observations.receive", rc, err);
            break;
        }
        rc = parse_observation(r, &ob[i], err);
        cw_reply_free(r);
        if (rc) cw_client_fail("worker_observations.parse", rc, err);
    }
    cw_buf_free(&key);
    if (rc) {
        cwork_worker_observations_free(ob, count);
        return rc;
    }
    *out = ob;
    *n = total;
    return 0;
}

int cwork_client_workers(cwork_client *client, cwork_worker_observation **out, size_t *n,
                         cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !out || !n)
        return cw_error(err, CWORK_EINVAL, "cwork_client_workers: NULL argument");
    *out = NULL;
    *n = 0;
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards : cw_shards_workers(client, (unsigned)shards, out, n, err);
    cw_conn *c;
    int rc = cw_redis_checkout(client->redis, &c, err);
    if (rc) return cw_client_fail("worker_observations.checkout", rc, err);
    cwork_pool_heartbeat *hb = NULL;
    size_t npools = 0;
    rc = read_pools(c, &client->keys, &hb, &npools, err);
    if (rc == 0) rc = read_workers(c, &client->keys, hb, npools, out, n, err);
    if (rc == 0) cw_damage_resolve(c, &client->keys);
    cw_redis_checkin(client->redis, c);
    cwork_pool_heartbeats_free(hb, npools);
    return rc ? cw_client_fail("worker_observations.worker_pool_heartbeats", rc, err) : 0;
}

/* ---------------------------------------------------------------- pause */

static int pause_command(cwork_client *client, const char *name, int pause, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !name || !*name)
        return cw_error(err, CWORK_EINVAL, "%s: a job name is required",
                        pause ? "cwork_client_pause" : "cwork_client_unpause");
    int shards = cw_client_shard_count(client, err);
    if (shards != 1) {
        if (shards < 0) return shards;
        cw_shards_bulk b = {.kind = pause ? CW_SHARDS_PAUSE : CW_SHARDS_UNPAUSE, .name = name};
        int brc = cw_shards_bulk_run(client, (unsigned)shards, &b, err);
        return brc;
    }
    cw_buf key;
    cw_buf_init(&key);
    cw_key_paused(&client->keys, &key, name);
    if (key.oom) return cw_error(err, CWORK_ENOMEM, "out of memory");
    const char *argv[] = {pause ? "SET" : "DEL", key.data, "1"};
    size_t lens[] = {3, key.len, 1};
    int rc = cw_redis_command(client->redis, pause ? 3 : 2, argv, lens, NULL, err);
    cw_buf_free(&key);
    if (rc) return cw_client_fail(pause ? "client.pause" : "client.unpause", rc, err);
    return 0;
}

int cwork_client_pause(cwork_client *client, const char *name, cwork_error *err)
{
    return pause_command(client, name, 1, err);
}

int cwork_client_unpause(cwork_client *client, const char *name, cwork_error *err)
{
    return pause_command(client, name, 0, err);
}
