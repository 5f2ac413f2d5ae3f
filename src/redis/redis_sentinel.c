/* Sentinel: asking for the master, checking it, and watching for failovers. See
 * redis_sentinel.h. */
#include "redis_sentinel.h"
#include "log.h"
#include "util.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WATCH_POLL_MS 200
#define WATCH_BACKOFF_CAP_MS 1000

struct cw_sentinel {
    cw_mutex mu;
    pthread_cond_t cv; /* wakes the watcher's sleeps when the pool is freed */
    int next;          /* the sentinel to ask first: the last one that answered */
    char master[300];  /* "host:port" of the master last dialled, "" before */
    pthread_t watcher;
    int watching; /* the watcher thread runs */
    int stop;     /* cw_sentinel_free asks it to end */
};

int cw_sentinel_new(cwork_redis *r, cwork_error *err)
{
    cw_sentinel *s = cw_calloc(1, sizeof *s);
    if (!s) return cw_error(err, CWORK_ENOMEM, "out of memory");
    pthread_condattr_t ca;
    int ok = pthread_condattr_init(&ca) == 0;
    if (ok) {
        ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
             pthread_cond_init(&s->cv, &ca) == 0;
        pthread_condattr_destroy(&ca);
    }
    if (ok && cw_mutex_init(&s->mu) != 0) {
        pthread_cond_destroy(&s->cv);
        ok = 0;
    }
    if (!ok) {
        cw_free(s);
        return cw_error(err, CWORK_ENOMEM, "cannot create the sentinel watcher's mutex");
    }
    r->sentinel = s;
    return 0;
}

void cw_sentinel_free(cwork_redis *r)
{
    cw_sentinel *s = r->sentinel;
    if (!s) return;
    cw_mutex_lock(&s->mu);
    s->stop = 1;
    int watching = s->watching;
    pthread_cond_broadcast(&s->cv);
    cw_mutex_unlock(&s->mu);
    if (watching) pthread_join(s->watcher, NULL);
    cw_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    cw_free(s);
    r->sentinel = NULL;
}

/* ---------------------------------------------------------------- asking */

static int dial_sentinel(cwork_redis *r, int i, cw_conn **out, int *transient, cwork_error *err)
{
    const cw_redis_node *node = &r->addr.nodes[i];
    cw_dial_auth auth = {r->addr.sentinel_user, r->addr.sentinel_password, 0};
    return cw_dial_node(r, node->host, node->port, NULL, &auth, out, transient, err);
}

/* SENTINEL get-master-addr-by-name on sentinel i. *final: it answered, with a refusal
 * (credentials) or that it monitors no master of that name. */
static int ask_sentinel(cwork_redis *r, int i, char *host, size_t host_size, int *port, int *final,
                        cwork_error *err)
{
    *final = 0;
    cw_conn *c;
    int transient;
    int rc = dial_sentinel(r, i, &c, &transient, err);
    if (rc) {
        *final = !transient;
        return rc;
    }
    const char *argv[] = {"SENTINEL", "get-master-addr-by-name", r->addr.master_name};
    redisReply *x = NULL;
    rc = cw_dial_setup(r, c, 3, argv, "SENTINEL get-master-addr-by-name", &x, &transient, err);
    if (rc == 0) {
        /* {host, port}, or nil for a name it does not monitor */
        const char *h, *p;
        size_t n = 0, plen = 0;
        if (cw_reply_is_nil(x)) {
            *final = 1;
            rc = cw_error(err, CWORK_EREDIS, "sentinel %s monitors no master named \"%s\"", c->addr,
                          r->addr.master_name);
        } else if (cw_reply_array(x, 2, &n, NULL, NULL) != 0 || n != 2 ||
                   cw_reply_at_str(x, 0, &h, NULL, NULL, NULL) != 0 ||
                   cw_reply_at_str(x, 1, &p, &plen, NULL, NULL) != 0) {
            rc = cw_error(err, CWORK_EPROTO, "sentinel %s: unexpected answer for the master",
                          c->addr);
        } else {
            int64_t v = 0;
            if (cw_parse_int64(p, plen, &v) != 0 || v < 1 || v > 65535) {
                rc = cw_error(err, CWORK_EPROTO, "sentinel %s: the master's port is not a port",
                              c->addr);
            } else {
                snprintf(host, host_size, "%s", h);
                *port = (int)v;
            }
        }
        cw_reply_free(x);
    } else {
        *final = !transient;
    }
    cw_conn_close(c);
    return rc;
}

/* ROLE says "master": a sentinel may name the old master for a moment after a
 * failover, or one that is being demoted. */
static int check_master(cwork_redis *r, cw_conn *c, int *transient, cwork_error *err)
{
    const char *argv[] = {"ROLE"};
    redisReply *x = NULL;
    int rc = cw_dial_setup(r, c, 1, argv, "ROLE", &x, transient, err);
    if (rc) return rc;
    const char *role;
    int master = cw_reply_at_str(x, 0, &role, NULL, NULL, NULL) == 0 && strcmp(role, "master") == 0;
    cw_reply_free(x);
    if (master) return 0;
    *transient = 1;
    return cw_error(err, CWORK_EREDIS,
                    "the sentinels name %s as master \"%s\", but it is a replica (a failover in "
                    "progress?)",
                    c->addr, r->addr.master_name);
}

static void *watch_main(void *arg);

/* Records the master just dialled: a different one than before retires the
 * connections to the old one. Starts the watcher on the first success. */
static void note_master(cwork_redis *r, const char *addr)
{
    cw_sentinel *s = r->sentinel;
    cw_mutex_lock(&s->mu);
    int changed = s->master[0] && strcmp(s->master, addr) != 0;
    snprintf(s->master, sizeof s->master, "%s", addr);
    if (!s->watching && !s->stop && cw_thread_create(&s->watcher, watch_main, r) == 0)
        s->watching = 1;
    cw_mutex_unlock(&s->mu);
    if (changed) {
        cw_redis_next_epoch(r);
        cw_log(CWORK_LOG_WARN, "redis.sentinel.master_changed", "master", r->addr.master_name,
               "addr", addr, NULL);
    }
}

int cw_sentinel_dial(cwork_redis *r, int probe, cw_conn **out, int *transient, cwork_error *err)
{
    cw_sentinel *s = r->sentinel;
    int n = r->addr.nnodes;
    cw_mutex_lock(&s->mu);
    int first = s->next;
    cw_mutex_unlock(&s->mu);
    cwork_error last = {0};
    int final_count = 0;
    *out = NULL;
    for (int k = 0; k < n; k++) {
        int i = (first + k) % n, final, port = 0;
        char host[256];
        if (ask_sentinel(r, i, host, sizeof host, &port, &final, &last) != 0) {
            final_count += final;
            continue; /* down, or it does not know: the next one may */
        }
        cw_mutex_lock(&s->mu);
        s->next = i;
        cw_mutex_unlock(&s->mu);
        cw_dial_auth auth = {r->addr.user, r->addr.password, r->addr.db};
        cw_conn *c = NULL;
        int rc = cw_dial_node(r, host, port, NULL, &auth, &c, transient, err);
        if (rc == 0) rc = check_master(r, c, transient, err);
        if (rc == 0 && probe) {
            const char *ping[] = {"PING"};
            rc = cw_dial_setup(r, c, 1, ping, "PING", NULL, transient, err);
        }
        if (rc) {
            if (c) cw_conn_close(c);
            return rc;
        }
        note_master(r, c->addr);
        c->epoch = cw_redis_epoch(r);
        *out = c;
        return 0;
    }
    /* Every sentinel refused or said it knows no such master: a typo in the name or the
     * sentinel password will not go away by dialling again. */
    *transient = final_count < n;
    return cw_error(err, last.code ? last.code : CWORK_EREDIS,
                    "sentinel master %s: no sentinel of %d could name it; last: %s",
                    r->addr.master_name, n, last.message);
}

/* ---------------------------------------------------------------- the watcher */

int cw_sentinel_parse_switch(const char *msg, size_t len, const char *master_name, char *host,
                             size_t host_size, int *port)
{
    size_t nlen = strlen(master_name);
    if (len <= nlen || memcmp(msg, master_name, nlen) != 0 || msg[nlen] != ' ') return 0;
    char buf[600];
    if (len - nlen >= sizeof buf) return 0;
    memcpy(buf, msg + nlen + 1, len - nlen - 1);
    buf[len - nlen - 1] = '\0';
    /* "OLD_HOST OLD_PORT NEW_HOST NEW_PORT": four fields separated by single spaces. */
    const char *field[4];
    size_t flen[4];
    const char *p = buf;
    for (int i = 0; i < 4; i++) {
        const char *end = strchr(p, ' ');
        if (!end) end = p + strlen(p);
        if (end == p || (i < 3) != (*end == ' ')) return 0;
        field[i] = p;
        flen[i] = (size_t)(end - p);
        p = *end ? end + 1 : end;
    }
    int64_t new_port = 0;
    if (flen[2] >= host_size || cw_parse_int64(field[3], flen[3], &new_port) != 0 || new_port < 1 ||
        new_port > 65535)
        return 0;
    memcpy(host, field[2], flen[2]);
    host[flen[2]] = '\0';
    *port = (int)new_port;
    return 1;
}

/* Sleeps up to ms unless the pool is being freed; returns 1 when it is. */
static int watcher_sleep(cw_sentinel *s, int ms)
{
    struct timespec ts;
    cw_deadline_after_ms(&ts, ms);
    cw_mutex_lock(&s->mu);
    if (!s->stop) cw_cond_timedwait(&s->cv, &s->mu, &ts);
    int stop = s->stop;
    cw_mutex_unlock(&s->mu);
    return stop;
}

static void on_switch(cwork_redis *r, const redisReply *m)
{
    /* {"message", "+switch-master", payload} */
    const char *payload;
    size_t len, n = 0;
    if (cw_reply_array(m, 3, &n, NULL, NULL) != 0 || n != 3 ||
        cw_reply_at_str(m, 2, &payload, &len, NULL, NULL) != 0)
        return;
    char host[256];
    int port;
    if (!cw_sentinel_parse_switch(payload, len, r->addr.master_name, host, sizeof host, &port))
        return;
    char addr[300];
    snprintf(addr, sizeof addr, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
    cw_sentinel *s = r->sentinel;
    cw_mutex_lock(&s->mu);
    snprintf(s->master, sizeof s->master, "%s", addr);
    cw_mutex_unlock(&s->mu);
    cw_redis_next_epoch(r);
    cw_log(CWORK_LOG_WARN, "redis.sentinel.switch_master", "master", r->addr.master_name, "addr",
           addr, NULL);
}

/* Subscribed to +switch-master on one sentinel until it fails or the pool is freed. */
static void watch_one(cwork_redis *r, cw_conn *c, int *backoff_ms)
{
    cwork_error e;
    const char *sub[] = {"SUBSCRIBE", "+switch-master"};
    redisReply *x = NULL;
    if (cw_conn_append(c, 2, sub, NULL, &e) != 0 || cw_conn_read(c, &x, &e) != 0) return;
    cw_reply_free(x);
    *backoff_ms = 0;
    for (;;) {
        cw_mutex_lock(&r->sentinel->mu);
        int stop = r->sentinel->stop;
        cw_mutex_unlock(&r->sentinel->mu);
        if (stop) return;
        struct pollfd p = {.fd = cw_conn_fd(c), .events = POLLIN};
        int n = poll(&p, 1, WATCH_POLL_MS);
        if (n < 0 && errno != EINTR) return;
        if (n <= 0) continue;
        c->pending = 1; /* a subscribed connection always has messages coming */
        if (cw_conn_read(c, &x, &e) != 0) return;
        on_switch(r, x);
        cw_reply_free(x);
        while (cw_conn_read_buffered(c, &x, &e) == 0 && x) {
            on_switch(r, x);
            cw_reply_free(x);
        }
    }
}

static void *watch_main(void *arg)
{
    cwork_redis *r = arg;
    cw_sentinel *s = r->sentinel;
    cw_mutex_lock(&s->mu);
    int i = s->next;
    cw_mutex_unlock(&s->mu);
    int backoff_ms = 0;
    for (;;) {
        cw_conn *c = NULL;
        cwork_error e;
        int transient;
        if (dial_sentinel(r, i, &c, &transient, &e) == 0) {
            watch_one(r, c, &backoff_ms);
            cw_conn_close(c);
        }
        i = (i + 1) % r->addr.nnodes;
        backoff_ms = backoff_ms ? (backoff_ms * 2 > WATCH_BACKOFF_CAP_MS ? WATCH_BACKOFF_CAP_MS
                                                                         : backoff_ms * 2)
                                : 50;
        if (watcher_sleep(s, backoff_ms)) break;
    }
    return NULL;
}
