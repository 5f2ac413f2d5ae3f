/* Enqueue, EnqueueIn, EnqueueUnique, EnqueueUniqueIn (PROTOCOL §4) and upstream's
 * EnqueueUniqueByKey / EnqueueUniqueInByKey (§4.5), in the enqueuer's Go flavour.
 *
 * Every enqueue is atomic: the job and its known_jobs registration go together in one
 * script (enqueue.lua, enqueue_unique.lua), so an error never hides a written job. Not
 * MULTI/EXEC: where an ACL refuses MULTI, the commands pipelined behind it would run
 * one by one. When the known_jobs cache is warm the job is a single LPUSH/ZADD, which
 * is atomic on its own — the common case costs exactly one command. */
#include "enqueue.h"

#include "args.h"
#include "flavor.h"
#include "job.h"
#include "log.h"
#include "scripts.h"

#include <string.h>

cwork_enqueuer *cwork_enqueuer_new(cwork_redis *redis, const char *ns, cwork_error *err)
{
    if (!redis || !ns) {
        cw_error(err, CWORK_EINVAL, "cwork_enqueuer_new: redis and namespace are required");
        return NULL;
    }
    if (cw_redis_use_namespace(redis, ns, err) != 0) /* Redis Cluster: a hash tag */
        return NULL;
    cwork_enqueuer *enq = cw_calloc(1, sizeof *enq);
    if (!enq || !(enq->ns = cw_strdup(ns)) || cw_keys_init(&enq->keys, ns) != 0) {
        if (enq) cw_free(enq->ns);
        cw_free(enq);
        cw_error(err, CWORK_ENOMEM, "out of memory");
        return NULL;
    }
    enq->redis = redis;
    enq->root = enq;
    enq->max_job_bytes = CWORK_DEFAULT_MAX_JOB_BYTES;
    cw_mutex_init(&enq->mu);
    cw_enq_shards_init(enq);
    return enq;
}

void cwork_enqueuer_free(cwork_enqueuer *enq)
{
    if (!enq) return;
    cw_enq_shards_clear(enq);
    for (size_t i = 0; i < KNOWN_BUCKETS; i++) {
        known_entry *e = enq->known[i];
        while (e) {
            known_entry *next = e->next;
            cw_free(e);
            e = next;
        }
    }
    cw_mutex_destroy(&enq->mu);
    cw_keys_clear(&enq->keys);
    cwork_redis_free(enq->owned_redis);
    cw_free(enq->ns);
    cw_free(enq);
}

void cwork_enqueuer_set_max_job_bytes(cwork_enqueuer *enq, size_t max_bytes)
{
    if (enq) atomic_store_explicit(&enq->max_job_bytes, max_bytes, memory_order_relaxed);
}

int cwork_enqueuer_set_go_flavor(cwork_enqueuer *enq, cwork_go_flavor flavor)
{
    if (!enq) return CWORK_EINVAL;
    int rc = cw_go_flavor_check(flavor, "cwork_enqueuer_set_go_flavor", NULL);
    if (rc == 0) atomic_store_explicit(&enq->flavor, flavor, memory_order_relaxed);
    return rc;
}

int cwork_enqueuer_set_go_json(cwork_enqueuer *enq, cwork_go_json spelling)
{
    if (!enq) return CWORK_EINVAL;
    int rc = cw_go_json_check(spelling, "cwork_enqueuer_set_go_json", NULL);
    if (rc == 0) atomic_store_explicit(&enq->go_json, spelling, memory_order_relaxed);
    return rc;
}

/* ---------------------------------------------------------------- known_jobs cache */

static size_t known_bucket(const char *name)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 1099511628211ull;
    return (size_t)(h % KNOWN_BUCKETS);
}

int cw_enq_known_needs_sadd(cwork_enqueuer *enq, const char *name, int64_t now)
{
    int needs = 1;
    cw_mutex_lock(&enq->mu);
    for (known_entry *e = enq->known[known_bucket(name)]; e; e = e->next) {
        if (strcmp(e->name, name) == 0) {
            needs = now >= e->expiry;
            break;
        }
    }
    cw_mutex_unlock(&enq->mu);
    return needs;
}

void cw_enq_known_mark(cwork_enqueuer *enq, const char *name, int64_t now)
{
    size_t b = known_bucket(name);
    cw_mutex_lock(&enq->mu);
    known_entry *e = enq->known[b];
    while (e && strcmp(e->name, name) != 0)
        e = e->next;
    if (!e) {
        size_t n = strlen(name);
        e = cw_malloc(sizeof *e + n + 1);
        if (e) { /* out of memory only costs a repeated SADD later */
            memcpy(e->name, name, n + 1);
            e->next = enq->known[b];
            enq->known[b] = e;
        }
    }
    if (e) e->expiry = now + KNOWN_JOBS_TTL;
    cw_mutex_unlock(&enq->mu);
}

/* ---------------------------------------------------------------- building the job */

int cw_enq_check_delay(int64_t seconds, cwork_error *err)
{
    if (seconds > CWORK_MAX_DELAY_SECONDS || seconds < -CWORK_MAX_DELAY_SECONDS)
        return cw_error(err, CWORK_EINVAL,
                        "a delay of %lld seconds is beyond the limit of 100 years (%lld s)",
                        (long long)seconds, (long long)CWORK_MAX_DELAY_SECONDS);
    return 0;
}

int cw_enq_new_id(char id[25], cwork_error *err)
{
    if (cw_make_id(id) != 0)
        return cw_error(err, CWORK_EINVAL, "cannot read the OS random source for a job id");
    return 0;
}

/* The job as cw_enq_encode_job describes it, with unique_key when given. */
static int encode_job(cwork_enqueuer *enq, const char *name, const cwork_args *args, int unique,
                      const char *unique_key, size_t unique_key_len, const char *batch, int64_t now,
                      cw_buf *out, const char *id, cwork_error *err)
{
    int rc = cwork_validate_job_name(name, err);
    if (rc) return rc;
    /* The encoder only reads the job: point its fields at the caller's data. */
    struct cwork_job job;
    memset(&job, 0, sizeof job);
    job.name.ptr = (char *)name;
    job.name.len = strlen(name);
    job.id.ptr = (char *)id;
    job.id.len = 24;
    job.t = now;
    job.args = args ? (gj_value *)cw_args_object(args) : NULL;
    job.unique = unique != 0;
    job.unique_key.ptr = (char *)unique_key;
    job.unique_key.len = unique_key_len;
    job.err.ptr = (char *)"";
    job.batch.ptr = (char *)batch;
    job.batch.len = batch ? strlen(batch) : 0;
    size_t start = out->len;
    rc = cw_job_encode(out, &job, err);
    if (rc) return rc;
    /* the job as the namespace's Go writes it (unique_key is already in that spelling) */
    if (atomic_load_explicit(&enq->root->go_json, memory_order_relaxed) == CWORK_GO_JSON_121)
        cw_gj_respell_go121(out, start);
    if (out->oom) return cw_error(err, CWORK_ENOMEM, "out of memory");
    size_t max_bytes = atomic_load_explicit(&enq->root->max_job_bytes, memory_order_relaxed);
    if (out->len - start > max_bytes)
        return cw_error(err, CWORK_ETOOBIG, "job %.64s is %zu bytes, over the limit of %zu", name,
                        out->len - start, max_bytes);
    return 0;
}

int cw_enq_encode_job(cwork_enqueuer *enq, const char *name, const cwork_args *args, int unique,
                      int64_t now, cw_buf *out, const char *id, cwork_error *err)
{
    return encode_job(enq, name, args, unique, NULL, 0, NULL, now, out, id, err);
}

int cw_enq_encode_member(cwork_enqueuer *enq, const char *name, const cwork_args *args,
                         const char *batch_id, int64_t now, cw_buf *out, const char *id,
                         cwork_error *err)
{
    return encode_job(enq, name, args, 0, NULL, 0, batch_id, now, out, id, err);
}

int cw_enq_encode_unique(cwork_enqueuer *enq, const char *name, const cwork_args *args,
                         const cwork_args *key, int64_t now, cw_buf *out, enq_unique *u,
                         const char *id, cwork_error *err)
{
    int rc = cwork_validate_job_name(name, err);
    if (rc) return rc;
    const cwork_args *by = key ? key : args;
    size_t lens[2];
    size_t mark = out->len;
    u->guard_off = out->len;
    rc = cw_key_unique_spellings(&enq->keys, out, name, by ? cw_args_object(by) : NULL, lens, err);
    if (rc < 0) return rc;
    /* the guard (and unique_key) a Go of the namespace's spelling looks for comes first */
    cw_key_unique_prefer(out, u->guard_off, lens,
                         atomic_load_explicit(&enq->root->go_json, memory_order_relaxed));
    if (out->oom) return cw_error(err, CWORK_ENOMEM, "out of memory");
    u->guard_len = lens[0];
    u->alt_len = lens[1];
    /* upstream writes unique_key on every unique job (its EnqueueUnique is ByKey with the
     * args as key); the fork on none, and cwork's ByKey needs it under both flavours,
     * since the key cannot be recomputed from the args. */
    int upstream =
        atomic_load_explicit(&enq->root->flavor, memory_order_relaxed) == CWORK_GO_UPSTREAM;
    int with_key = key != NULL || upstream;
    char *guard = NULL;
    if (with_key && !(guard = cw_strndup(out->data + u->guard_off, u->guard_len)))
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    u->json_off = out->len;
    rc =
        encode_job(enq, name, args, 1, guard, with_key ? u->guard_len : 0, NULL, now, out, id, err);
    cw_free(guard);
    if (rc) {
        out->len = mark;
        return rc;
    }
    u->json_len = out->len - u->json_off;
    u->guard_value = key ? "" : "1";
    u->rearm = key || upstream ? "1" : "";
    return 0;
}

/* The job handed back to the caller: exactly what was written, decoded. */
static int make_result(const char *json, size_t len, int64_t run_at, cwork_job **out,
                       cwork_error *err)
{
    if (!out) return 0;
    int rc = cw_job_decode(json, len, out, err);
    if (rc == 0) (*out)->run_at = run_at;
    return rc;
}

/* Reads n replies; the first error (I/O or error reply) is returned. */
static int read_replies(cw_conn *c, int n, cwork_error *err)
{
    int rc = 0;
    for (int i = 0; i < n; i++) {
        redisReply *r = NULL;
        int io = cw_conn_read(c, &r, rc ? NULL : err);
        if (io) return rc ? rc : io;
        if (rc == 0 && cw_reply_error(r))
            rc = cw_error(err, CWORK_EREDIS, "redis: %s", cw_reply_error(r));
        cw_reply_free(r);
    }
    return rc;
}

/* The reply to a wake-up PUBLISH. The job is written whatever it says: a refusal (an
 * ACL without PUBLISH, common where only Go clients were planned for) must not turn a
 * written job into a reported failure, which a caller would retry into a duplicate.
 * Idle pools then find the job by polling; the refusal is logged. */
static void read_wakeup_reply(cw_conn *c)
{
    redisReply *r = NULL;
    if (cw_conn_read(c, &r, NULL) != 0)
        return; /* the connection is broken and will be re-dialled */
    if (cw_reply_error(r))
        cw_log(CWORK_LOG_WARN, "enqueue.wakeup", "error", cw_reply_error(r), NULL);
    cw_reply_free(r);
}

/* The keys and score one enqueue needs: the queue (or the scheduled set and the score
 * for a delayed job), known_jobs and the wake-up channel. */
typedef struct {
    cw_buf target, known, channel;
    char score[24];
} send_keys;

static int send_keys_build(cwork_enqueuer *enq, const char *name, int delayed, int64_t run_at,
                           send_keys *k, cwork_error *err)
{
    cw_buf_init(&k->target);
    cw_buf_init(&k->known);
    cw_buf_init(&k->channel);
    k->score[0] = '\0';
    if (!delayed) {
        cw_key_queue(&enq->keys, &k->target, name);
    } else {
        cw_key_scheduled(&enq->keys, &k->target);
        snprintf(k->score, sizeof k->score, "%lld", (long long)run_at);
    }
    cw_key_known_jobs(&enq->keys, &k->known);
    cw_key_wakeup_channel(&enq->keys, &k->channel);
    if (k->target.oom || k->known.oom || k->channel.oom)
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    return 0;
}

static void send_keys_free(send_keys *k)
{
    cw_buf_free(&k->target);
    cw_buf_free(&k->known);
    cw_buf_free(&k->channel);
}

/* LPUSH or (delayed) ZADD; with SADD <p>known_jobs, when the cache says so, through the
 * enqueue script. */
static int send_plain(cwork_enqueuer *enq, cw_conn *c, const char *name, const cw_buf *json,
                      int delayed, int64_t run_at, int sadd, cwork_error *err)
{
    send_keys k;
    int rc = send_keys_build(enq, name, delayed, run_at, &k, err);
    if (rc) goto done;
    if (sadd) {
        const char *argv[] = {k.target.data, k.known.data, json->data,
                              k.score,       name,         k.channel.data};
        size_t lens[] = {k.target.len,    k.known.len,  json->len,
                         strlen(k.score), strlen(name), k.channel.len};
        redisReply *r = NULL;
        const char *refused = NULL;
        size_t len = 0;
        rc = cw_conn_eval(c, &cw_script_enqueue, 2, 4, argv, lens, &r, err);
        if (rc == 0) rc = cw_reply_str(r, &refused, &len, "enqueue script", err);
        if (rc == 0 && len > 0) /* the job is written; only the wake-up was refused */
            cw_log(CWORK_LOG_WARN, "enqueue.wakeup", "error", refused, NULL);
        cw_reply_free(r);
        goto done;
    }
    const char *argv[4];
    size_t lens[4];
    int argc = 0;
    if (!delayed) {
        argv[0] = "LPUSH", lens[0] = 5;
        argv[1] = k.target.data, lens[1] = k.target.len;
        argv[2] = json->data, lens[2] = json->len;
        argc = 3;
    } else {
        argv[0] = "ZADD", lens[0] = 4;
        argv[1] = k.target.data, lens[1] = k.target.len;
        argv[2] = k.score, lens[2] = strlen(k.score);
        argv[3] = json->data, lens[3] = json->len;
        argc = 4;
    }
    /* An immediate job also announces itself to idle pools, in the same round trip. */
    const char *pub[] = {"PUBLISH", k.channel.data, name};
    size_t pub_lens[] = {7, k.channel.len, strlen(name)};
    int publish = !delayed;
    if ((rc = cw_conn_append(c, argc, argv, lens, err)) ||
        (publish && (rc = cw_conn_append(c, 3, pub, pub_lens, err))))
        goto done;
    rc = read_replies(c, 1, err);
    if (publish) read_wakeup_reply(c);
done:
    send_keys_free(&k);
    return rc;
}

static int send_unique(cwork_enqueuer *enq, cw_conn *c, const char *name, const cw_buf *data,
                       const enq_unique *u, int delayed, int64_t run_at, int sadd, cwork_error *err)
{
    send_keys k;
    int rc = send_keys_build(enq, name, delayed, run_at, &k, err);
    if (rc == 0) {
        const char *guard = data->data + u->guard_off;
        const char *alt = u->alt_len ? guard + u->guard_len : guard;
        const char *argv[] = {k.target.data,
                              guard,
                              k.known.data,
                              alt,
                              data->data + u->json_off,
                              k.score,
                              sadd ? name : "",
                              u->guard_value,
                              u->rearm,
                              k.channel.data,
                              name};
        size_t lens[] = {k.target.len,
                         u->guard_len,
                         k.known.len,
                         u->alt_len ? u->alt_len : u->guard_len,
                         u->json_len,
                         strlen(k.score),
                         sadd ? strlen(name) : 0,
                         strlen(u->guard_value),
                         strlen(u->rearm),
                         k.channel.len,
                         strlen(name)};
        redisReply *r = NULL;
        rc = cw_conn_eval(c, &cw_script_enqueue_unique, 4, 7, argv, lens, &r, err);
        const char *answer = NULL;
        size_t len = 0;
        if (rc == 0) rc = cw_reply_str(r, &answer, &len, "enqueue_unique script", err);
        if (rc == 0 && len == 3 && memcmp(answer, "dup", 3) == 0)
            rc = CWORK_DUPLICATE;
        else if (rc == 0 && !(len == 2 && memcmp(answer, "ok", 2) == 0))
            rc = cw_error(err, CWORK_EPROTO, "enqueue_unique script answered no ok/dup");
        cw_reply_free(r);
    }
    send_keys_free(&k);
    return rc;
}

/* *to: the enqueuer of the shard the job goes to (PROTOCOL §27.2), by id, or for a
 * unique job by its guard's text; enq itself when the namespace is not sharded. *dup:
 * during a grow, the guard was found in the key's old shard (§27.5). */
static int route_one(cwork_enqueuer *enq, const char *name, const cwork_args *args, int unique,
                     const cwork_args *key, const char *id, cwork_enqueuer **to, bool *dup,
                     cwork_error *err)
{
    *to = enq;
    if (cw_enq_shards_count(enq) == 1) return 0;
    if (!unique) {
        *to = cw_enq_shard_for(enq, name, id, 24, NULL);
        return 0;
    }
    cw_buf route;
    cw_buf_init(&route);
    int rc = cw_enq_unique_route(name, key ? key : args, &route, err);
    if (rc == 0) *to = cw_enq_shard_for(enq, name, route.data, route.len, NULL);
    /* A grow in progress (§27.5): a guard made before it lives in the old shard. */
    int64_t ttl = 0;
    cwork_enqueuer *old =
        rc == 0 ? cw_enq_grow_old(enq, name, route.data, route.len, NULL, &ttl) : NULL;
    if (old) rc = cw_enq_forward_unique(old, name, args, key, id, ttl, true, dup, err);
    if (rc == 0 && *dup) *to = old; /* (the job the caller gets back is encoded there) */
    cw_buf_free(&route);
    return rc;
}

int cw_enq_forward_unique(cwork_enqueuer *old, const char *name, const cwork_args *args,
                          const cwork_args *key, const char *id, int64_t mark_ttl, bool rearm,
                          bool *dup, cwork_error *err)
{
    cw_buf data;
    cw_buf_init(&data);
    enq_unique u;
    memset(&u, 0, sizeof u);
    int rc = cw_enq_encode_unique(old, name, args, key, cw_now(), &data, &u, id, err);
    if (rc == 0) {
        const char *guard = data.data + u.guard_off;
        const char *value = u.guard_value[0] ? u.guard_value : data.data + u.json_off;
        size_t vlen = u.guard_value[0] ? strlen(u.guard_value) : u.json_len;
        rc = cw_enq_forward(old, guard, u.guard_len, u.alt_len ? guard + u.guard_len : guard,
                            u.alt_len ? u.alt_len : u.guard_len, mark_ttl, value, vlen,
                            rearm && u.rearm[0], dup, err);
    }
    cw_buf_free(&data);
    return rc;
}

/* Whether a call's node failed (no answer: cw_enq_backoff_note), and which it was. */
typedef struct node_failure {
    bool failed;
    char node[96];
} node_failure;

/* Sends the encoded job to its shard's enqueuer `to`; *nf (may be NULL) says whether
 * the node failed to answer. */
static int send_job(cwork_enqueuer *to, const char *name, const cw_buf *data, const enq_unique *u,
                    int unique, int delayed, int64_t run_at, int sadd, node_failure *nf,
                    cwork_error *err)
{
    int rc = 0;
    /* Redis Cluster: a pipelined LPUSH/ZADD that meets a redirection (the slot moved)
     * was refused before it wrote anything, and its connection goes; one more try
     * reaches the new node. Scripts follow redirections by themselves. */
    for (int attempt = 0; attempt < 2; attempt++) {
        cw_conn *c;
        if ((rc = cw_redis_checkout(to->redis, &c, err)) != 0) {
            if (nf) nf->failed = rc == CWORK_EREDIS; /* not dialled (a full pool: ETIMEOUT) */
            break;
        }
        if (unique)
            rc = send_unique(to, c, name, data, u, delayed, run_at, sadd, err);
        else
            rc = send_plain(to, c, name, data, delayed, run_at, sadd, err);
        if (rc == 0)
            rc = cw_conn_wait_replicas(c, err); /* min_replicas: acknowledged means replicated */
        int redirected = c->redirected;
        if (nf) {
            nf->failed = rc < 0 && c->broken && !redirected;
            if (c->addr) snprintf(nf->node, sizeof nf->node, "%s", c->addr);
        }
        cw_redis_checkin(to->redis, c);
        if (rc >= 0 || !redirected) break;
    }
    return rc;
}

/* cwork_enqueue_ex's work (the six Go-named calls are its wrappers). A delayed job's run-at may lie
 * in the past (negative seconds): it is still written to the scheduled set with that score, as Go
 * does. key is only used for unique jobs (ByKey). */
static int enqueue_one(cwork_enqueuer *enq, const char *name, const cwork_args *args, int delayed,
                       int64_t seconds, int unique, const cwork_args *key, cwork_job **out,
                       cwork_error *err)
{
    if (out) *out = NULL;
    if (!enq || !name)
        return cw_error(err, CWORK_EINVAL, "enqueue: enqueuer and name are required");
    if (delayed && cw_enq_check_delay(seconds, err) != 0) return CWORK_EINVAL;
    char id[25];
    int rc = cw_enq_shards_refresh(enq, err);
    bool sharded = cw_enq_shards_count(enq) > 1;
    if (rc == 0) rc = cw_enq_new_id(id, err);
    cwork_enqueuer *to = enq;
    bool dup = false;
    if (rc == 0) rc = route_one(enq, name, args, unique, key, id, &to, &dup, err);
    if (rc) return rc;
    int64_t now = cw_now(); /* one clock reading for t and run-at */
    int64_t run_at = delayed ? now + seconds : -1;
    cw_buf data;
    cw_buf_init(&data);
    enq_unique u;
    memset(&u, 0, sizeof u);
    rc = unique ? cw_enq_encode_unique(to, name, args, key, now, &data, &u, id, err)
                : cw_enq_encode_job(to, name, args, 0, now, &data, id, err);
    if (rc) goto done;
    if (!unique) u.json_len = data.len; /* the buffer holds the JSON only */
    int sadd = cw_enq_known_needs_sadd(to, name, now);
    if (dup) {
        rc = CWORK_DUPLICATE; /* found in its old shard: nothing to send */
    } else if (!sharded) {
        rc = send_job(to, name, &data, &u, unique, delayed, run_at, sadd, NULL, err);
    } else if ((rc = cw_enq_backoff_check(enq, to, err)) == 0) {
        /* (its shard's node failed a moment ago: at once, shard_backoff.c) */
        cwork_error local = {0};
        cwork_error *e = err ? err : &local; /* (the back-off keeps the message) */
        int64_t t0 = cw_monotonic_ms();
        node_failure nf = {false, ""};
        rc = send_job(to, name, &data, &u, unique, delayed, run_at, sadd, &nf, e);
        cw_enq_backoff_note(to, rc, nf.failed, nf.node, cw_monotonic_ms() - t0, e);
    }
    if (sadd && !dup && (rc == 0 || rc == CWORK_DUPLICATE)) cw_enq_known_mark(to, name, now);
    /* A ByKey duplicate hands back the job it put in the guard: the one that will run. */
    if (rc == 0 || (rc == CWORK_DUPLICATE && key)) {
        int drc = make_result(data.data + u.json_off, u.json_len, delayed ? run_at : 0, out, err);
        if (drc) rc = drc;
    }
done:
    cw_buf_free(&data);
    return rc;
}

int cwork_enqueue_ex(cwork_enqueuer *enq, const char *name, const cwork_args *args,
                     const cwork_enqueue_opts *opts, cwork_job **out, cwork_error *err)
{
    static const cwork_enqueue_opts plain;
    if (!opts) opts = &plain;
    if (!opts->delayed && opts->delay_seconds != 0) {
        if (out) *out = NULL;
        return cw_error(err, CWORK_EINVAL,
                        "enqueue: opts.delay_seconds is %lld but opts.delayed is false "
                        "(set delayed to run the job later)",
                        (long long)opts->delay_seconds);
    }
    bool unique = opts->unique || opts->unique_key;
    return enqueue_one(enq, name, args, opts->delayed, opts->delay_seconds, unique,
                       opts->unique_key, out, err);
}

/* Go's six calls: cwork_enqueue_ex with the options their names say (cwork.h). */
int cwork_enqueue(cwork_enqueuer *enq, const char *name, const cwork_args *args, cwork_job **out,
                  cwork_error *err)
{
    return cwork_enqueue_ex(enq, name, args, NULL, out, err);
}

int cwork_enqueue_in(cwork_enqueuer *enq, const char *name, int64_t seconds, const cwork_args *args,
                     cwork_job **out, cwork_error *err)
{
    cwork_enqueue_opts o = {.delayed = true, .delay_seconds = seconds};
    return cwork_enqueue_ex(enq, name, args, &o, out, err);
}

int cwork_enqueue_unique(cwork_enqueuer *enq, const char *name, const cwork_args *args,
                         cwork_job **out, cwork_error *err)
{
    cwork_enqueue_opts o = {.unique = true};
    return cwork_enqueue_ex(enq, name, args, &o, out, err);
}

int cwork_enqueue_unique_in(cwork_enqueuer *enq, const char *name, int64_t seconds,
                            const cwork_args *args, cwork_job **out, cwork_error *err)
{
    cwork_enqueue_opts o = {.delayed = true, .delay_seconds = seconds, .unique = true};
    return cwork_enqueue_ex(enq, name, args, &o, out, err);
}

int cwork_enqueue_unique_by_key(cwork_enqueuer *enq, const char *name, const cwork_args *args,
                                const cwork_args *key, cwork_job **out, cwork_error *err)
{
    cwork_enqueue_opts o = {.unique = true, .unique_key = key};
    return cwork_enqueue_ex(enq, name, args, &o, out, err);
}

int cwork_enqueue_unique_in_by_key(cwork_enqueuer *enq, const char *name, int64_t seconds,
                                   const cwork_args *args, const cwork_args *key, cwork_job **out,
                                   cwork_error *err)
{
    cwork_enqueue_opts o = {
        .delayed = true, .delay_seconds = seconds, .unique = true, .unique_key = key};
    return cwork_enqueue_ex(enq, name, args, &o, out, err);
}
