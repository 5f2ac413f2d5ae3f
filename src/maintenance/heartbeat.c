/* The pool's heartbeat (PROTOCOL §6).
 *
 * Everything a beat writes except the two timestamps is fixed for the pool's life, so
 * the keys, the joined job and worker lists, host and pid are formatted once in
 * cw_heartbeat_new and a beat only formats two numbers.
 *
 * The heartbeater keeps one connection checked out between beats: a late beat lets
 * other processes' reapers take this pool's jobs (they give up on a pool after 10 s,
 * two periods), so a beat must never queue behind other users of a busy connection
 * pool. A connection kept idle for 5 s can have been closed by the server (its
 * `timeout` setting) or a middlebox; when a beat fails on such a kept connection with
 * an I/O error it is retried once at once on a fresh connection. Both commands are
 * idempotent, so the retry is harmless if the first attempt did reach Redis. */
#include "heartbeat.h"

#include "clock.h"
#include "log.h"
#include "mutex.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HOSTNAME_ERRORED "hostname_errored"

struct cw_heartbeat {
    cwork_redis *redis;
    char *pool_id;
    char *pools_key;       /* <p>worker_pools */
    char *pool_key;        /* <p>worker_pools:<pool> */
    char **lock_info_keys; /* <p>jobs:<name>:lock_info for each job name, for stop */
    size_t njobs;
    char *job_names; /* sorted, joined with ',' */
    char *worker_ids;
    char concurrency[24];
    char pid[24];
    char host[256];

    /* Serialises beats and removal (the synchronous calls and the thread may overlap);
     * guards conn and started_at. */
    cw_mutex beat_mu;
    cw_conn *conn;
    int64_t started_at; /* 0 until the first beat */
    int beaten;         /* a beat has succeeded */
    /* Read without a lock by the pool's lease guard, which must never wait behind a beat
     * that hangs on a cut connection: */
    atomic_uint reaped;         /* times a beat found the pool removed from worker_pools */
    _Atomic int64_t acked_sent; /* monotonic ms when the last acknowledged beat was sent */
    cw_heartbeat_hook hook;     /* set before the thread starts; NULL: none */
    void *hook_userdata;

    /* Guards stop and running; cond wakes the thread at once when stop is set. */
    cw_mutex mu;
    pthread_cond_t cond; /* on CLOCK_MONOTONIC: a wall-clock step must not stall beats */
    int stop;
    int running;
    pthread_t thread;
    int ready; /* the mutexes and cond exist (cw_heartbeat_new got that far) */
};

/* ---------------------------------------------------------------- construction */

static int cmp_str(const void *a, const void *b)
{
    /* strcmp compares as unsigned char: the byte-wise order of Go's sort.Strings. */
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted copy of the list joined with ','; NULL on OOM. */
static char *sorted_join(const char *const *items, size_t n)
{
    const char **order = cw_malloc((n ? n : 1) * sizeof *order);
    if (!order) return NULL;
    for (size_t i = 0; i < n; i++)
        order[i] = items[i];
    qsort(order, n, sizeof *order, cmp_str);
    cw_buf b;
    cw_buf_init(&b);
    /* An empty list must still come out as a terminated "": cw_buf_take on a buffer that
     * never had anything appended returns unterminated memory. */
    cw_buf_append(&b, "", 0);
    for (size_t i = 0; i < n; i++) {
        if (i) cw_buf_putc(&b, ',');
        cw_buf_puts(&b, order[i]);
    }
    cw_free(order);
    return cw_buf_take(&b, NULL);
}

static void read_hostname(char *out, size_t size)
{
    if (gethostname(out, size) == 0) {
        out[size - 1] = '\0'; /* POSIX leaves truncation unterminated */
        return;
    }
    char msg[128];
    snprintf(msg, sizeof msg, "gethostname: %s", strerror(errno));
    cw_log(CWORK_LOG_ERROR, "heartbeat.hostname", "error", msg, NULL);
    snprintf(out, size, "%s", HOSTNAME_ERRORED);
}

cw_heartbeat *cw_heartbeat_new(cwork_redis *redis, const cw_keys *keys, const char *pool_id,
                               const char *const *job_names, size_t njobs,
                               const char *const *worker_ids, size_t nworkers, unsigned concurrency)
{
    if (!redis || !keys || !pool_id || (njobs && !job_names) || (nworkers && !worker_ids))
        return NULL;
    cw_heartbeat *hb = cw_calloc(1, sizeof *hb);
    if (!hb) return NULL;
    hb->redis = redis;
    hb->njobs = njobs;
    hb->pool_id = cw_strdup(pool_id);
    hb->job_names = sorted_join(job_names, njobs);
    hb->worker_ids = sorted_join(worker_ids, nworkers);
    hb->lock_info_keys = cw_calloc(njobs ? njobs : 1, sizeof *hb->lock_info_keys);
    cw_buf b;
    cw_buf_init(&b);
    cw_key_worker_pools(keys, &b);
    hb->pools_key = cw_buf_take(&b, NULL);
    cw_key_worker_pool(keys, &b, pool_id);
    hb->pool_key = cw_buf_take(&b, NULL);
    int ok = hb->pool_id && hb->job_names && hb->worker_ids && hb->lock_info_keys &&
             hb->pools_key && hb->pool_key;
    for (size_t i = 0; ok && i < njobs; i++) {
        cw_key_lock_info(keys, &b, job_names[i]);
        ok = (hb->lock_info_keys[i] = cw_buf_take(&b, NULL)) != NULL;
    }
    if (!ok) {
        cw_heartbeat_free(hb);
        return NULL;
    }
    snprintf(hb->concurrency, sizeof hb->concurrency, "%u", concurrency);
    snprintf(hb->pid, sizeof hb->pid, "%lld", (long long)getpid());
    read_hostname(hb->host, sizeof hb->host);

    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&hb->cond, &ca);
    pthread_condattr_destroy(&ca);
    cw_mutex_init(&hb->mu);
    cw_mutex_init(&hb->beat_mu);
    hb->ready = 1;
    return hb;
}

void cw_heartbeat_free(cw_heartbeat *hb)
{
    if (!hb) return;
    if (hb->ready) {
        cw_heartbeat_stop(hb, 0, NULL); /* joins a forgotten thread, returns the connection */
        pthread_cond_destroy(&hb->cond);
        cw_mutex_destroy(&hb->mu);
        cw_mutex_destroy(&hb->beat_mu);
    }
    if (hb->lock_info_keys)
        for (size_t i = 0; i < hb->njobs; i++)
            cw_free(hb->lock_info_keys[i]);
    cw_free(hb->lock_info_keys);
    cw_free(hb->pool_id);
    cw_free(hb->pools_key);
    cw_free(hb->pool_key);
    cw_free(hb->job_names);
    cw_free(hb->worker_ids);
    cw_free(hb);
}

/* ---------------------------------------------------------------- Redis */

/* Reads n pipelined replies; the first error (reply or I/O) is the result. Every reply
 * is read even after an error reply, so the connection stays usable. */
static int read_replies(cw_conn *c, int n, cwork_error *err)
{
    int rc = 0;
    for (int i = 0; i < n; i++) {
        redisReply *r = NULL;
        cwork_error later;
        int io = cw_conn_read(c, &r, rc ? &later : err);
        if (io) return rc ? rc : io; /* the connection is broken: nothing more to read */
        if (rc == 0 && cw_reply_error(r))
            rc = cw_error(err, CWORK_EREDIS, "redis: %.200s", cw_reply_error(r));
        cw_reply_free(r);
    }
    return rc;
}

static int send_beat(cw_heartbeat *hb, cw_conn *c, int64_t now, cwork_error *err)
{
    char now_s[24], started_s[24];
    snprintf(now_s, sizeof now_s, "%lld", (long long)now);
    snprintf(started_s, sizeof started_s, "%lld", (long long)hb->started_at);
    const char *sadd[] = {"SADD", hb->pools_key, hb->pool_id};
    /* Go's field order, for whoever watches MONITOR side by side; then cwork's own
     * `cwork` (its version), which tells a cwork pool from a Go one (Go ignores it). */
    const char *hmset[] = {"HMSET",         hb->pool_key,  "heartbeat_at",
                           now_s,           "started_at",  started_s,
                           "job_names",     hb->job_names, "concurrency",
                           hb->concurrency, "worker_ids",  hb->worker_ids,
                           "host",          hb->host,      "pid",
                           hb->pid,         "cwork",       CWORK_VERSION_STRING};
    int rc;
    if ((rc = cw_conn_append(c, 3, sadd, NULL, err)) ||
        (rc = cw_conn_append(c, (int)(sizeof hmset / sizeof hmset[0]), hmset, NULL, err)))
        return rc;
    redisReply *r = NULL;
    if ((rc = cw_conn_read(c, &r, err)) != 0) return rc;
    /* SADD adds the pool only on its first beat — unless a reaper has removed it since
     * (it judged the pool dead: stopped, frozen or too slow to beat) or Redis lost its
     * data. Either way jobs this pool was running may have gone back to their queues
     * and run again elsewhere: say so, once per occurrence. */
    int64_t added = 0;
    if (cw_reply_error(r))
        rc = cw_error(err, CWORK_EREDIS, "redis: %.200s (key %.200s, SADD)", cw_reply_error(r),
                      hb->pools_key);
    else if (cw_reply_int(r, &added, NULL, NULL) != 0)
        added = 0;
    cw_reply_free(r);
    /* The HMSET's reply, its error naming the pool's hash (a damaged key is repaired by
     * whoever reads the log: it must say which). */
    r = NULL;
    int hrc = cw_conn_read(c, &r, rc ? NULL : err);
    if (hrc == 0 && cw_reply_error(r))
        hrc = cw_error(rc ? NULL : err, CWORK_EREDIS, "redis: %.200s (key %.200s, HMSET)",
                       cw_reply_error(r), hb->pool_key);
    cw_reply_free(r);
    if (rc == 0) rc = hrc;
    if (rc == 0 && added == 1 && hb->beaten) {
        atomic_fetch_add(&hb->reaped, 1);
        cw_log(CWORK_LOG_WARN, "heartbeat.reaped", "pool_id", hb->pool_id, "message",
               "this pool was missing from worker_pools: a reaper judged it dead (stopped, "
               "frozen or too slow to beat) or Redis lost its data; jobs it was running may "
               "have been given back to their queues and run again elsewhere",
               NULL);
    }
    if (rc == 0) hb->beaten = 1;
    return rc;
}

static int send_remove(cw_heartbeat *hb, cw_conn *c, int64_t now, cwork_error *err)
{
    (void)now;
    const char *srem[] = {"SREM", hb->pools_key, hb->pool_id};
    const char *del[] = {"DEL", hb->pool_key};
    int rc;
    if ((rc = cw_conn_append(c, 3, srem, NULL, err)) || (rc = cw_conn_append(c, 2, del, NULL, err)))
        return rc;
    for (size_t i = 0; i < hb->njobs; i++) {
        const char *hdel[] = {"HDEL", hb->lock_info_keys[i], hb->pool_id};
        if ((rc = cw_conn_append(c, 3, hdel, NULL, err))) return rc;
    }
    return read_replies(c, 2 + (int)hb->njobs, err);
}

typedef int (*send_fn)(cw_heartbeat *hb, cw_conn *c, int64_t now, cwork_error *err);

/* Runs send on the kept connection (checked out when there is none). A kept connection
 * that fails with an I/O error is closed and the send retried once on a fresh one (see
 * the top of the file); a fresh connection failing means Redis itself is the problem.
 * Call with beat_mu held. */
static int with_conn(cw_heartbeat *hb, send_fn send, int64_t now, cwork_error *err)
{
    cw_mutex_assert_held(&hb->beat_mu);
    int followed = 0;
    cw_redis_drop_retired(hb->redis, &hb->conn); /* beat where reapers look: the new master */
    for (;;) {
        int fresh = hb->conn == NULL;
        int rc;
        if (fresh && (rc = cw_redis_checkout(hb->redis, &hb->conn, err)) != 0) {
            hb->conn = NULL;
            return rc;
        }
        cwork_error e = {0};
        rc = send(hb, hb->conn, now, &e);
        if (err && rc) *err = e;
        if (!hb->conn->broken && hb->conn->pending == 0)
            return rc; /* success, or an error reply on a healthy connection */
        cw_redis_checkin(hb->redis, hb->conn); /* closes it */
        hb->conn = NULL;
        /* A fresh connection that met MOVED (Redis Cluster moved the namespace's slot;
         * the pool has learned where to): once more, to the slot's new owner. */
        if (fresh && !(rc && !followed++ && strstr(e.message, "MOVED "))) return rc;
    }
}

static void release_conn(cw_heartbeat *hb)
{
    cw_mutex_assert_held(&hb->beat_mu);
    if (hb->conn) {
        cw_redis_checkin(hb->redis, hb->conn);
        hb->conn = NULL;
    }
}

unsigned cw_heartbeat_reaped(cw_heartbeat *hb)
{
    return atomic_load(&hb->reaped);
}

int64_t cw_heartbeat_acked_sent_ms(cw_heartbeat *hb)
{
    return atomic_load(&hb->acked_sent);
}

void cw_heartbeat_set_hook(cw_heartbeat *hb, cw_heartbeat_hook hook, void *userdata)
{
    hb->hook = hook;
    hb->hook_userdata = userdata;
}

int cw_heartbeat_beat(cw_heartbeat *hb, cwork_error *err)
{
    cw_mutex_lock(&hb->beat_mu);
    /* The lease counts from before the write leaves (a retry on a fresh connection
     * included): a slow reply never lengthens it. */
    int64_t sent = cw_clock_mono_ms();
    int64_t now = cw_clock_now();
    if (hb->started_at == 0) hb->started_at = now;
    int rc = with_conn(hb, send_beat, now, err);
    if (rc == 0) atomic_store(&hb->acked_sent, sent);
    cw_mutex_unlock(&hb->beat_mu);
    return rc;
}

/* ---------------------------------------------------------------- the thread */

static void *beat_loop(void *arg)
{
    cw_heartbeat *hb = arg;
    int64_t next = cw_clock_mono_ms();
    /* The pool beats synchronously before its first fetch (PROTOCOL §16.8); the
     * thread then waits a period. Started without that, it beats at once as Go does. */
    cw_mutex_lock(&hb->beat_mu);
    int beaten = hb->started_at != 0;
    cw_mutex_unlock(&hb->beat_mu);
    if (beaten) next += CW_HEARTBEAT_PERIOD_MS;

    cw_mutex_lock(&hb->mu);
    for (;;) {
        while (!hb->stop && cw_clock_wait_until(&hb->cond, &hb->mu, next) != ETIMEDOUT) {
        }
        if (hb->stop) break;
        cw_mutex_unlock(&hb->mu);

        /* Woken after a freeze or a clock jump, the pool must look at its lease before
         * this beat makes it look alive again. */
        if (hb->hook) hb->hook(hb->hook_userdata, CW_HEARTBEAT_BEFORE_BEAT);
        cwork_error e = {0};
        int failed = cw_heartbeat_beat(hb, &e) != 0;
        if (hb->hook) hb->hook(hb->hook_userdata, CW_HEARTBEAT_AFTER_BEAT);
        if (failed) cw_log(CWORK_LOG_ERROR, "heartbeat", "error", e.message, NULL);

        /* A fixed cadence, as Go's ticker: the beat's own duration doesn't add up. If a
         * beat overran the period (Redis slow or down), beat once more at once and
         * count the period from there, rather than firing every missed tick. A failed
         * beat is tried again after CW_HEARTBEAT_RETRY_MS: with beats every 5 s and
         * pools dead after 10 s without one, waiting a whole period after a failure
         * (Redis restarting, paused or out of memory for a moment) would let reapers
         * take a live pool's jobs. */
        int64_t now = cw_clock_mono_ms();
        if (failed) {
            next = now + CW_HEARTBEAT_RETRY_MS;
        } else {
            next += CW_HEARTBEAT_PERIOD_MS;
            if (next < now) next = now;
        }
        cw_mutex_lock(&hb->mu);
    }
    cw_mutex_unlock(&hb->mu);
    return NULL;
}

/* Creates the thread with asynchronous signals blocked, so that the application's
 * handlers (and sigwait loops) never run on a library thread and SIGPIPE from a write
 * to a dead Redis connection can never kill the process from here. */
int cw_heartbeat_start(cw_heartbeat *hb, cwork_error *err)
{
    cw_mutex_lock(&hb->mu);
    int rc = 0;
    if (hb->running) {
        rc = cw_error(err, CWORK_EINVAL, "heartbeat: already started");
    } else {
        hb->stop = 0;
        int e = cw_thread_create(&hb->thread, beat_loop, hb);
        if (e != 0)
            rc = cw_error(err, CWORK_ENOMEM, "heartbeat: cannot create a thread: %s", strerror(e));
        else
            hb->running = 1;
    }
    cw_mutex_unlock(&hb->mu);
    return rc;
}

int cw_heartbeat_stop(cw_heartbeat *hb, int remove, cwork_error *err)
{
    cw_mutex_lock(&hb->mu);
    int running = hb->running;
    hb->stop = 1;
    hb->running = 0;
    pthread_cond_signal(&hb->cond);
    cw_mutex_unlock(&hb->mu);
    /* Joined before removing: a beat still in flight would otherwise write the hash
     * back right after the DEL. */
    if (running) pthread_join(hb->thread, NULL);

    int rc = 0;
    cw_mutex_lock(&hb->beat_mu);
    if (remove) {
        cwork_error e = {0};
        rc = with_conn(hb, send_remove, 0, &e);
        if (rc) {
            cw_log(CWORK_LOG_ERROR, "remove_heartbeat", "error", e.message, NULL);
            if (err) *err = e;
        }
    }
    release_conn(hb);
    cw_mutex_unlock(&hb->beat_mu);
    return rc;
}
