/* Worker observations (PROTOCOL §7).
 *
 * Each worker has a slot with its own mutex, so executors reporting at the same time
 * never contend with each other, only (briefly) with a flush copying their slot. Every
 * change bumps the slot's version; a flush writes the slots whose version differs from
 * the one last written, and records the written version only once Redis confirmed it,
 * so a failed flush leaves the slot dirty and the next flush retries it.
 *
 * Flushes are serialised among themselves: two overlapping flushes could otherwise
 * land an older state in Redis after a newer one and then consider the slot clean.
 *
 * A busy slot is written as MULTI, DEL, HMSET, EXPIRE, EXEC. Go only HMSETs, which
 * lets a previous job's checkin fields survive into the next job's hash (PROTOCOL
 * §16.9); the DEL removes them, and the transaction keeps a reader from seeing the
 * hash missing between DEL and HMSET. */
#include "observer.h"

#include "log.h"
#include "mutex.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define CHECKIN_MISMATCH "got checkin but mismatch on job ID or no job"

typedef struct obs_slot {
    cw_mutex mu;
    char *key; /* <p>worker:<worker id>, fixed */
    size_t key_len;

    /* Guarded by mu. name, id and args live in one block (job), NULL only after an
     * allocation failure (then written as empty strings). */
    int busy;
    char *job;
    const char *name, *id, *args;
    size_t name_len, id_len, args_len;
    int64_t started_at;
    char *checkin; /* NULL: none */
    int64_t checkin_at;
    uint64_t version, written;
} obs_slot;

/* What one flush writes for one slot: copied out of the slot under its lock, the
 * strings as offsets into the flush's arena (it may move while it grows). */
typedef struct obs_write {
    size_t slot;
    uint64_t version;
    int busy;
    int has_checkin;
    size_t name, name_len, id, id_len, args, args_len, checkin, checkin_len;
    char started_at[24], checkin_at[24];
    int ok;
} obs_write;

struct cw_observer {
    cwork_redis *redis;
    obs_slot *slots;
    size_t n;
    size_t ninit; /* slots whose mutex exists */

    cw_mutex flush_mu; /* serialises flushes; guards writes and arena */
    obs_write *writes; /* n entries, reused by every flush */
    cw_buf arena;
};

/* ---------------------------------------------------------------- life cycle */

cw_observer *cw_observer_new(cwork_redis *redis, const cw_keys *keys, const char *const *worker_ids,
                             size_t nworkers)
{
    if (!redis || !keys || (nworkers && !worker_ids)) return NULL;
    cw_observer *obs = cw_calloc(1, sizeof *obs);
    if (!obs) return NULL;
    obs->redis = redis;
    obs->n = nworkers;
    cw_buf_init(&obs->arena);
    cw_mutex_init(&obs->flush_mu);
    obs->slots = cw_calloc(nworkers ? nworkers : 1, sizeof *obs->slots);
    obs->writes = cw_calloc(nworkers ? nworkers : 1, sizeof *obs->writes);
    if (!obs->slots || !obs->writes) {
        cw_observer_free(obs);
        return NULL;
    }
    for (size_t i = 0; i < nworkers; i++) {
        obs_slot *s = &obs->slots[i];
        cw_mutex_init(&s->mu);
        obs->ninit++;
        cw_buf b;
        cw_buf_init(&b);
        cw_key_worker(keys, &b, worker_ids[i]);
        if (!(s->key = cw_buf_take(&b, &s->key_len))) {
            cw_observer_free(obs);
            return NULL;
        }
    }
    return obs;
}

void cw_observer_free(cw_observer *obs)
{
    if (!obs) return;
    /* (ninit > 0 implies slots; said for the analyzer, which cannot see that cw_calloc
     * zeroed it) */
    for (size_t i = 0; obs->slots && i < obs->ninit; i++) {
        obs_slot *s = &obs->slots[i];
        cw_mutex_destroy(&s->mu);
        cw_free(s->key);
        cw_free(s->job);
        cw_free(s->checkin);
    }
    cw_free(obs->slots);
    cw_free(obs->writes);
    cw_buf_free(&obs->arena);
    cw_mutex_destroy(&obs->flush_mu);
    cw_free(obs);
}

/* ---------------------------------------------------------------- observations */

/* The args as Go's observer writes them: compact JSON of the decoded map, or "" when
 * there are none. */
static void encode_args(cw_buf *out, const cwork_job *job)
{
    const gj_value *a = job ? job->args : NULL;
    if (!a || a->type != GJ_OBJECT || a->as.obj.len == 0) return;
    size_t start = out->len;
    if (cw_gj_encode(out, a, NULL) != 0)
        out->len = start; /* NaN/Inf cannot come from decoded JSON; write "" rather than junk */
}

void cw_observer_started(cw_observer *obs, size_t worker, const cwork_job *job, int64_t now)
{
    if (!obs || worker >= obs->n) return;
    /* Everything is built before taking the lock: the executor holds it only to swap. */
    static const char empty[] = "";
    const char *name = job && job->name.ptr ? job->name.ptr : empty;
    const char *id = job && job->id.ptr ? job->id.ptr : empty;
    size_t name_len = name == empty ? 0 : job->name.len;
    size_t id_len = id == empty ? 0 : job->id.len;
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_append(&b, name, name_len);
    cw_buf_putc(&b, '\0');
    cw_buf_append(&b, id, id_len);
    cw_buf_putc(&b, '\0');
    size_t args_at = b.len;
    encode_args(&b, job);
    size_t args_len = b.len - args_at;
    char *block = cw_buf_take(&b, NULL); /* NULL on OOM: the slot still turns busy */

    obs_slot *s = &obs->slots[worker];
    cw_mutex_lock(&s->mu);
    char *old_job = s->job, *old_checkin = s->checkin;
    s->busy = 1;
    s->job = block;
    s->name = block;
    s->name_len = block ? name_len : 0;
    s->id = block ? block + name_len + 1 : NULL;
    s->id_len = block ? id_len : 0;
    s->args = block ? block + args_at : NULL;
    s->args_len = block ? args_len : 0;
    s->started_at = now;
    s->checkin = NULL; /* a check-in belongs to the job it was made for */
    s->checkin_at = 0;
    s->version++;
    cw_mutex_unlock(&s->mu);
    cw_free(old_job);
    cw_free(old_checkin);
}

void cw_observer_done(cw_observer *obs, size_t worker)
{
    if (!obs || worker >= obs->n) return;
    obs_slot *s = &obs->slots[worker];
    cw_mutex_lock(&s->mu);
    char *old_job = s->job, *old_checkin = s->checkin;
    s->busy = 0;
    s->job = s->checkin = NULL;
    s->name = s->id = s->args = NULL;
    s->name_len = s->id_len = s->args_len = 0;
    s->started_at = s->checkin_at = 0;
    s->version++;
    cw_mutex_unlock(&s->mu);
    cw_free(old_job);
    cw_free(old_checkin);
}

void cw_observer_checkin(cw_observer *obs, size_t worker, const char *job_id, const char *message,
                         int64_t now)
{
    if (!obs || worker >= obs->n) return;
    char *msg = cw_strdup(message ? message : "");
    size_t id_len = job_id ? strlen(job_id) : 0;
    obs_slot *s = &obs->slots[worker];
    cw_mutex_lock(&s->mu);
    int match =
        s->busy && s->id && job_id && s->id_len == id_len && memcmp(s->id, job_id, id_len) == 0;
    char *old = NULL;
    if (match && msg) { /* out of memory: this check-in is lost, the next one may not be */
        old = s->checkin;
        s->checkin = msg;
        s->checkin_at = now;
        s->version++;
        msg = NULL;
    }
    cw_mutex_unlock(&s->mu);
    cw_free(old);
    cw_free(msg);
    if (!match)
        cw_log(CWORK_LOG_ERROR, "observer.checkin_mismatch", "error", CHECKIN_MISMATCH, NULL);
}

/* ---------------------------------------------------------------- flushing */

static void put_str(cw_buf *arena, const char *p, size_t len, size_t *at, size_t *out_len)
{
    *at = arena->len;
    *out_len = p ? len : 0;
    if (p) cw_buf_append(arena, p, len);
}

/* Copies the slot's state into w; call with the slot's lock held. */
static void snapshot(obs_slot *s, size_t index, obs_write *w, cw_buf *arena)
{
    memset(w, 0, sizeof *w);
    w->slot = index;
    w->version = s->version;
    w->busy = s->busy;
    if (!s->busy) return;
    put_str(arena, s->name, s->name_len, &w->name, &w->name_len);
    put_str(arena, s->id, s->id_len, &w->id, &w->id_len);
    put_str(arena, s->args, s->args_len, &w->args, &w->args_len);
    snprintf(w->started_at, sizeof w->started_at, "%lld", (long long)s->started_at);
    w->has_checkin = s->checkin && s->checkin[0] && s->checkin_at > 0;
    if (w->has_checkin) {
        put_str(arena, s->checkin, strlen(s->checkin), &w->checkin, &w->checkin_len);
        snprintf(w->checkin_at, sizeof w->checkin_at, "%lld", (long long)s->checkin_at);
    }
}

static int append_write(cw_conn *c, const obs_slot *s, const obs_write *w, const char *arena,
                        cwork_error *err)
{
    const char *del[] = {"DEL", s->key};
    size_t del_len[] = {3, s->key_len};
    if (!w->busy) return cw_conn_append(c, 2, del, del_len, err);

    char ttl[24];
    snprintf(ttl, sizeof ttl, "%d", CW_OBSERVATION_TTL);
    const char *multi[] = {"MULTI"}, *exec[] = {"EXEC"};
    size_t multi_len[] = {5}, exec_len[] = {4};
    const char *hmset[] = {"HMSET",      s->key,          "job_name",   arena + w->name,
                           "job_id",     arena + w->id,   "started_at", w->started_at,
                           "args",       arena + w->args, "checkin",    arena + w->checkin,
                           "checkin_at", w->checkin_at};
    size_t hmset_len[] = {5,  s->key_len,
                          8,  w->name_len,
                          6,  w->id_len,
                          10, strlen(w->started_at),
                          4,  w->args_len,
                          7,  w->checkin_len,
                          10, strlen(w->checkin_at)};
    const char *expire[] = {"EXPIRE", s->key, ttl};
    size_t expire_len[] = {6, s->key_len, strlen(ttl)};
    int rc;
    if ((rc = cw_conn_append(c, 1, multi, multi_len, err)) ||
        (rc = cw_conn_append(c, 2, del, del_len, err)) ||
        (rc = cw_conn_append(c, w->has_checkin ? 14 : 10, hmset, hmset_len, err)) ||
        (rc = cw_conn_append(c, 3, expire, expire_len, err)) ||
        (rc = cw_conn_append(c, 1, exec, exec_len, err)))
        return rc;
    return 0;
}

/* Reads one reply; a non-zero return is an I/O error (nothing more can be read). An
 * error reply, or an EXEC that did not run everything, clears *ok. */
static int read_one(cw_conn *c, int is_exec, int *ok, int *rc, cwork_error *err)
{
    redisReply *r = NULL;
    cwork_error later;
    int io = cw_conn_read(c, &r, *rc ? &later : err);
    if (io) {
        if (*rc == 0) *rc = io;
        return io;
    }
    const char *bad = cw_reply_error(r);
    if (!bad && is_exec && !cw_reply_is_array(r)) bad = "EXEC answered no array";
    for (size_t i = 0; !bad && is_exec && cw_reply_at(r, i); i++) /* a queued command's error */
        bad = cw_reply_error(cw_reply_at(r, i));
    if (bad) {
        *ok = 0;
        if (*rc == 0) *rc = cw_error(err, CWORK_EREDIS, "redis: %.200s", bad);
    }
    cw_reply_free(r);
    return 0;
}

/* Sends every write in one pipeline and marks the ones Redis confirmed (w->ok). */
static int send_writes(cw_observer *obs, obs_write *writes, size_t nw, cwork_error *err)
{
    cw_conn *c;
    int rc = cw_redis_checkout(obs->redis, &c, err);
    if (rc) return rc;
    size_t appended = 0;
    for (; appended < nw; appended++)
        if ((rc = append_write(c, &obs->slots[writes[appended].slot], &writes[appended],
                               obs->arena.data, err)) != 0)
            break;
    if (rc == 0) {
        for (size_t i = 0; i < appended; i++) {
            obs_write *w = &writes[i];
            int ok = 1, io = 0;
            for (int k = 0; !io && k < (w->busy ? 5 : 1); k++)
                io = read_one(c, w->busy && k == 4, &ok, &rc, err);
            if (io) break; /* the rest stay unconfirmed */
            w->ok = ok;
        }
    }
    cw_redis_checkin(obs->redis, c); /* closes it if replies were left unread */
    return rc;
}

int cw_observer_flush(cw_observer *obs, int force, cwork_error *err)
{
    cw_mutex_lock(&obs->flush_mu);
    cw_buf_reset(&obs->arena);
    size_t nw = 0;
    for (size_t i = 0; i < obs->n; i++) {
        obs_slot *s = &obs->slots[i];
        cw_mutex_lock(&s->mu);
        if (force || s->version != s->written) snapshot(s, i, &obs->writes[nw++], &obs->arena);
        cw_mutex_unlock(&s->mu);
    }
    /* The arena always holds a NUL, so empty strings point at valid memory. */
    cw_buf_putc(&obs->arena, '\0');

    int rc = 0;
    cwork_error e = {0};
    if (nw == 0) goto done;
    if (obs->arena.oom)
        rc = cw_error(&e, CWORK_ENOMEM, "out of memory");
    else
        rc = send_writes(obs, obs->writes, nw, &e);
    for (size_t i = 0; i < nw; i++) {
        obs_write *w = &obs->writes[i];
        if (!w->ok) continue; /* still dirty: retried by the next flush */
        obs_slot *s = &obs->slots[w->slot];
        cw_mutex_lock(&s->mu);
        /* Observations made since the snapshot leave version ahead: still dirty. */
        s->written = w->version;
        cw_mutex_unlock(&s->mu);
    }
    if (rc) {
        cw_log(CWORK_LOG_ERROR, "observer.write", "error", e.message, NULL);
        if (err) *err = e;
    }
done:
    cw_mutex_unlock(&obs->flush_mu);
    return rc;
}
