/* The admin client (PROTOCOL §11): queues, worker pools and their workers, pause, and
 * lookup of a job by id. The sets are in client_list.c, the web bodies in
 * client_json.c. */
#include "client.h"

#include "flavor.h"
#include "log.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- shared helpers */

void cw_strv_add(cw_strv *v, const char *s, size_t len)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 16;
        char **items = cw_realloc(v->items, cap * sizeof *items);
        if (!items) {
            v->oom = 1;
            return;
        }
        v->items = items;
        v->cap = cap;
    }
    char *copy = cw_strndup(s, len);
    if (!copy) {
        v->oom = 1;
        return;
    }
    v->items[v->n++] = copy;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void cw_strv_sort(cw_strv *v)
{
    if (v->n > 1) qsort(v->items, v->n, sizeof *v->items, cmp_str);
}

void cw_strv_free(cw_strv *v)
{
    for (size_t i = 0; i < v->n; i++)
        cw_free(v->items[i]);
    cw_free(v->items);
    memset(v, 0, sizeof *v);
}

int cw_client_fail(const char *step, int rc, const cwork_error *err)
{
    cw_log(CWORK_LOG_ERROR, step, "error", err ? err->message : cwork_strerror(rc), NULL);
    return rc;
}

int cw_client_smembers(cw_conn *c, const cw_buf *key, cw_strv *out, cwork_error *err)
{
    if (key->oom) return cw_error(err, CWORK_ENOMEM, "out of memory");
    const char *argv[] = {"SMEMBERS", key->data};
    size_t lens[] = {8, key->len};
    redisReply *r = cw_conn_command(c, 2, argv, lens, err);
    if (!r) return err->code;
    int rc = 0;
    if (r->type != REDIS_REPLY_ARRAY) {
        rc = cw_error(err, CWORK_EPROTO, "SMEMBERS %s: not an array", key->data);
    } else {
        for (size_t i = 0; i < r->elements; i++) {
            const redisReply *m = r->element[i];
            if (m->type == REDIS_REPLY_STRING && !memchr(m->str, '\0', m->len))
                cw_strv_add(out, m->str, m->len);
        }
        if (out->oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    freeReplyObject(r);
    cw_strv_sort(out);
    return rc;
}

void cw_client_free_replies(redisReply **replies, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (replies[i]) freeReplyObject(replies[i]);
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
        if (replies[i]->type == REDIS_REPLY_ERROR && rc == 0)
            rc = cw_error(err, CWORK_EREDIS, "redis: %s", replies[i]->str);
    }
    if (rc) cw_client_free_replies(replies, n);
    return rc;
}

int cw_client_score(const redisReply *r, int64_t *out)
{
    if (r->type != REDIS_REPLY_STRING) return -1;
    return cw_score_parse(r->str, r->len, out);
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
    if (!cl || cw_keys_init(&cl->keys, ns) != 0) {
        cw_free(cl);
        cw_error(err, CWORK_ENOMEM, "out of memory");
        return NULL;
    }
    cl->redis = redis;
    return cl;
}

void cwork_client_free(cwork_client *client)
{
    if (!client) return;
    cw_keys_clear(&client->keys);
    cw_free(client);
}

int cwork_client_set_go_flavor(cwork_client *client, cwork_go_flavor flavor)
{
    if (!client) return CWORK_EINVAL;
    int rc = cw_go_flavor_check(flavor, "cwork_client_set_go_flavor", NULL);
    if (rc == 0) atomic_store_explicit(&client->flavor, flavor, memory_order_relaxed);
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
    if (head->type != REDIS_REPLY_STRING) return 0;
    cwork_job *job = NULL;
    cwork_error e = {0};
    if (cw_job_decode(head->str, head->len, &job, &e) != 0) {
        cw_client_fail("client.queues.new_job", e.code, &e);
        return 0;
    }
    int64_t latency = now - job->t;
    cwork_job_free(job);
    return latency;
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
        if ((rc = cw_client_read_replies(c, 3, r, err)) != 0) return rc;
        if (r[0]->type != REDIS_REPLY_INTEGER || r[1]->type != REDIS_REPLY_INTEGER)
            rc = cw_error(err, CWORK_EPROTO, "queue %s: unexpected reply", q[i].job_name);
        q[i].count = r[0]->integer;
        q[i].paused = r[1]->integer > 0;
        q[i].latency = q[i].count > 0 ? queue_latency(r[2], now) : 0;
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
    cw_conn *c;
    int rc = cw_redis_checkout(client->redis, &c, err);
    if (rc) return cw_client_fail("client.queues.checkout", rc, err);
    cw_strv names = {0};
    cw_buf key;
    cw_buf_init(&key);
    cw_key_known_jobs(&client->keys, &key);
    cwork_queue_info *q = NULL;
    size_t count = 0;
    rc = cw_client_smembers(c, &key, &names, err);
    if (rc == 0 && !(q = cw_calloc(names.n ? names.n : 1, sizeof *q)))
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0) {
        for (; count < names.n; count++) { /* the records take the names over */
            q[count].job_name = names.items[count];
            names.items[count] = NULL;
        }
        rc = read_queues(c, &client->keys, q, count, err);
    }
    cw_redis_checkin(client->redis, c);
    cw_buf_free(&key);
    cw_strv_free(&names);
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
    }
    cw_free(pools);
}

/* strconv.ParseInt(s, 10, 64) (an optional sign) and ParseUint (no sign), with Go's
 * error text. */
static int parse_int(const redisReply *v, int64_t *out, cwork_error *err)
{
    const char *s = v->str;
    size_t len = v->len;
    if (len > 1 && s[0] == '+' && s[1] != '-') {
        s++;
        len--;
    }
    if (cw_parse_int64(s, len, out) == 0) return 0;
    return cw_error(err, CWORK_EPROTO, "strconv.ParseInt: parsing \"%.*s\": invalid syntax",
                    (int)(v->len > 64 ? 64 : v->len), v->str);
}

static int parse_uint(const redisReply *v, uint64_t max, uint64_t *out, cwork_error *err)
{
    uint64_t n = 0;
    size_t i = 0;
    for (; i < v->len && v->str[i] >= '0' && v->str[i] <= '9'; i++) {
        unsigned d = (unsigned)(v->str[i] - '0');
        if (n > (max - d) / 10) break;
        n = n * 10 + d;
    }
    if (v->len == 0 || i != v->len)
        return cw_error(err, CWORK_EPROTO, "strconv.ParseUint: parsing \"%.*s\": invalid syntax",
                        (int)(v->len > 64 ? 64 : v->len), v->str);
    *out = n;
    return 0;
}

/* strings.Split(value, ",") then sort.Strings: an empty value gives one empty string. */
static int split_sorted(const redisReply *v, char ***items, size_t *n)
{
    cw_strv l = {0};
    const char *p = v->str, *end = v->str + v->len;
    for (;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        cw_strv_add(&l, p, (size_t)(stop - p));
        if (!comma) break;
        p = comma + 1;
    }
    if (l.oom) {
        cw_strv_free(&l);
        return CWORK_ENOMEM;
    }
    cw_strv_sort(&l);
    /* a second value of the same field replaces the first, as in Go */
    for (size_t j = 0; j < *n; j++)
        cw_free((*items)[j]);
    cw_free(*items);
    *items = l.items;
    *n = l.n;
    return 0;
}

static int set_str(char **field, const redisReply *v)
{
    char *s = cw_strndup(v->str, v->len);
    if (!s) return CWORK_ENOMEM;
    cw_free(*field);
    *field = s;
    return 0;
}

/* Fills hb from an HGETALL reply (field, value, …); unknown fields are ignored. */
static int parse_heartbeat(const redisReply *r, cwork_pool_heartbeat *hb, cwork_error *err)
{
    if (r->type != REDIS_REPLY_ARRAY) return cw_error(err, CWORK_EPROTO, "HGETALL: not an array");
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const redisReply *f = r->element[i], *v = r->element[i + 1];
        if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
            return cw_error(err, CWORK_EPROTO, "HGETALL: not a string");
        int rc = 0;
        uint64_t u = 0;
        int64_t pid = 0;
        if (!strcmp(f->str, "heartbeat_at")) {
            rc = parse_int(v, &hb->heartbeat_at, err);
        } else if (!strcmp(f->str, "started_at")) {
            rc = parse_int(v, &hb->started_at, err);
        } else if (!strcmp(f->str, "job_names")) {
            if (split_sorted(v, &hb->job_names, &hb->n_job_names))
                rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        } else if (!strcmp(f->str, "concurrency")) {
            if ((rc = parse_uint(v, UINT_MAX, &u, err)) == 0) hb->concurrency = (unsigned)u;
        } else if (!strcmp(f->str, "host")) {
            if (set_str(&hb->host, v)) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        } else if (!strcmp(f->str, "pid")) {
            if ((rc = parse_int(v, &pid, err)) == 0 && (pid < INT_MIN || pid > INT_MAX))
                rc = cw_error(err, CWORK_EPROTO, "pid %lld out of range", (long long)pid);
            if (rc == 0) hb->pid = (int)pid;
        } else if (!strcmp(f->str, "worker_ids")) {
            if (split_sorted(v, &hb->worker_ids, &hb->n_worker_ids))
                rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        }
        if (rc) return rc;
    }
    return 0;
}

/* SMEMBERS worker_pools, sorted, then one pipelined HGETALL per id (PROTOCOL §11). */
static int read_pools(cw_conn *c, const cw_keys *k, cwork_pool_heartbeat **out, size_t *n,
                      cwork_error *err)
{
    cw_strv ids = {0};
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
        cw_key_worker_pool(k, &key, ids.items[i]);
        const char *argv[] = {"HGETALL", key.data};
        size_t lens[] = {7, key.len};
        rc = key.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                     : cw_conn_append(c, 2, argv, lens, err);
    }
    for (; rc == 0 && count < ids.n; count++) {
        hb[count].worker_pool_id = ids.items[count];
        ids.items[count] = NULL;
        if (!(hb[count].host = cw_strdup(""))) {
            count++;
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
            break;
        }
        redisReply *r;
        if ((rc = cw_client_read_replies(c, 1, &r, err)) != 0) {
            cw_client_fail("worker_pool_statuses.receive", rc, err);
            count++;
            break;
        }
        rc = parse_heartbeat(r, &hb[count], err);
        freeReplyObject(r);
        if (rc) {
            cw_client_fail("worker_pool_statuses.parse", rc, err);
            count++;
            break;
        }
    }
    cw_buf_free(&key);
    cw_strv_free(&ids);
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
    cw_conn *c;
    int rc = cw_redis_checkout(client->redis, &c, err);
    if (rc == 0) {
        rc = read_pools(c, &client->keys, out, n, err);
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
    if (r->type != REDIS_REPLY_ARRAY) return cw_error(err, CWORK_EPROTO, "HGETALL: not an array");
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const redisReply *f = r->element[i], *v = r->element[i + 1];
        if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
            return cw_error(err, CWORK_EPROTO, "HGETALL: not a string");
        ob->is_busy = true;
        int rc = 0;
        char **s = !strcmp(f->str, "job_name")  ? &ob->job_name
                   : !strcmp(f->str, "job_id")  ? &ob->job_id
                   : !strcmp(f->str, "args")    ? &ob->args_json
                   : !strcmp(f->str, "checkin") ? &ob->checkin
                                                : NULL;
        if (s && set_str(s, v))
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        else if (!strcmp(f->str, "started_at"))
            rc = parse_int(v, &ob->started_at, err);
        else if (!strcmp(f->str, "checkin_at"))
            rc = parse_int(v, &ob->checkin_at, err);
        if (rc) return rc;
    }
    return 0;
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
    cw_buf_free(&key);
    for (size_t i = 0; i < total && rc == 0; i++) {
        redisReply *r;
        if ((rc = cw_client_read_replies(c, 1, &r, err)) != 0) {
            cw_client_fail("worker_observations.receive", rc, err);
            break;
        }
        rc = parse_observation(r, &ob[i], err);
        freeReplyObject(r);
        if (rc) cw_client_fail("worker_observations.parse", rc, err);
    }
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
    cw_conn *c;
    int rc = cw_redis_checkout(client->redis, &c, err);
    if (rc) return cw_client_fail("worker_observations.checkout", rc, err);
    cwork_pool_heartbeat *hb = NULL;
    size_t npools = 0;
    rc = read_pools(c, &client->keys, &hb, &npools, err);
    if (rc == 0) rc = read_workers(c, &client->keys, hb, npools, out, n, err);
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
    cw_buf key;
    cw_buf_init(&key);
    cw_key_paused(&client->keys, &key, name);
    if (key.oom) return cw_error(err, CWORK_ENOMEM, "out of memory");
    const char *argv[] = {pause ? "SET" : "DEL", key.data, "1"};
    size_t lens[] = {3, key.len, 1};
    redisReply *r = cw_redis_command(client->redis, pause ? 3 : 2, argv, lens, err);
    cw_buf_free(&key);
    if (!r) return cw_client_fail(pause ? "client.pause" : "client.unpause", err->code, err);
    freeReplyObject(r);
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
