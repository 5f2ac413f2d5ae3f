/* The connection pool: creation from a URL, dialling (the transport of redis_net.c,
 * then AUTH and SELECT), checkout/checkin, and re-dialling with capped backoff
 * while Redis is unreachable. Per-connection commands live in redis_conn.c, URL
 * parsing in redis_url.c.
 *
 * Dialling while Redis is down: the first failed dial puts the pool in the "failing"
 * state. From then on one checkout at a time dials (the probe) and only after the
 * backoff (10 ms, doubling up to 1 s) since the previous failure; the other checkouts
 * wait for the probe or their deadline instead of hammering a dead server, and one
 * warning is logged per backoff step. The first successful dial ends the state. */
#include "redis_impl.h"
#include "log.h"
#include "redis_cluster.h"
#include "redis_sentinel.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_URL "redis://127.0.0.1:6379"
#define BACKOFF_FIRST_MS 10
#define BACKOFF_CAP_MS 1000

void cwork_redis_options_init(cwork_redis_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->connect_timeout_ms = 5000;
    opts->command_timeout_ms = 5000;
    opts->max_connections = 16;
    opts->checkout_timeout_ms = 5000;
    opts->password = NULL;
}

const char *cw_redis_url_redacted(const cwork_redis *r)
{
    return r->url_shown;
}

/* ---------------------------------------------------------------- creation */

/* Zero means the default (docs/ABI.md: a zeroed options struct is valid). */
static int check_options(cwork_redis_options *o, cwork_error *err)
{
    if (o->connect_timeout_ms == 0) o->connect_timeout_ms = 5000;
    if (o->max_connections == 0) o->max_connections = 16;
    if (o->connect_timeout_ms < 0)
        return cw_error(err, CWORK_EINVAL, "redis options: connect_timeout_ms must be > 0");
    if (o->max_connections < 0)
        return cw_error(err, CWORK_EINVAL, "redis options: max_connections must be >= 1");
    if (cw_check_duration_ms("redis options: connect_timeout_ms", o->connect_timeout_ms, err) ||
        cw_check_duration_ms("redis options: command_timeout_ms", o->command_timeout_ms, err) ||
        cw_check_duration_ms("redis options: checkout_timeout_ms", o->checkout_timeout_ms, err))
        return CWORK_EINVAL;
    return 0;
}

/* The URL's password wins; the option stands in when the URL carries none (the library
 * reads no environment: the cwork command passes CWORK_REDIS_PASSWORD and
 * CWORK_REDIS_SENTINEL_PASSWORD here). */
static int choose_secret(char **field, const char *option, cwork_error *err)
{
    if (*field || !option || !*option) return 0;
    *field = cw_strdup(option);
    return *field ? 0 : cw_error(err, CWORK_ENOMEM, "out of memory");
}

/* The same rule for the sentinels' password (sentinel URLs only). */
static int choose_passwords(cw_redis_addr *a, const cwork_redis_options *o, cwork_error *err)
{
    int rc = choose_secret(&a->password, o->password, err);
    if (rc == 0 && a->kind == CW_REDIS_SENTINEL)
        rc = choose_secret(&a->sentinel_password, o->sentinel_password, err);
    return rc;
}

static int init_sync(cwork_redis *r)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0) return -1;
    /* Deadlines are monotonic: a wall-clock jump must not stretch a checkout. */
    int rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (rc == 0) rc = pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0) return -1;
    if (cw_mutex_init(&r->mu) != 0) {
        pthread_cond_destroy(&r->cv);
        return -1;
    }
    return 0;
}

/* What messages about the pool as a whole call it. */
static char *describe_pool(const cw_redis_addr *a)
{
    cw_buf b;
    cw_buf_init(&b);
    if (a->kind == CW_REDIS_SENTINEL)
        cw_buf_printf(&b, "sentinel master %s", a->master_name);
    else if (a->kind == CW_REDIS_CLUSTER)
        cw_buf_puts(&b, "cluster");
    else if (a->unix_path)
        cw_buf_printf(&b, "unix:%s", a->unix_path);
    else if (strchr(a->host, ':'))
        cw_buf_printf(&b, "[%s]:%d", a->host, a->port);
    else
        cw_buf_printf(&b, "%s:%d", a->host, a->port);
    return cw_buf_take(&b, NULL);
}

/* Frees a kept secret after overwriting it (it should not linger in freed memory). */
static void free_secret(char *s)
{
    if (!s) return;
    volatile char *v = s;
    while (*v)
        *v++ = 0;
    cw_free(s);
}

static void forget_given(cwork_redis *r)
{
    free_secret(r->url_given);
    free_secret((char *)r->opts_given.password);
    free_secret((char *)r->opts_given.sentinel_password);
    r->url_given = NULL;
    r->opts_given.password = r->opts_given.sentinel_password = NULL;
}

/* Keeps url and o (with copies of its passwords) for cw_redis_clone. 0 or -1. */
static int keep_given(cwork_redis *r, const char *url, const cwork_redis_options *o)
{
    r->opts_given = *o;
    r->opts_given.password = o->password && *o->password ? cw_strdup(o->password) : NULL;
    r->opts_given.sentinel_password =
        o->sentinel_password && *o->sentinel_password ? cw_strdup(o->sentinel_password) : NULL;
    r->url_given = cw_strdup(url);
    if (!r->url_given || (o->password && *o->password && !r->opts_given.password) ||
        (o->sentinel_password && *o->sentinel_password && !r->opts_given.sentinel_password))
        return -1;
    return 0;
}

cwork_redis *cwork_redis_new(const char *url, const cwork_redis_options *opts, cwork_error *err)
{
    cwork_redis_options o;
    if (opts)
        o = *opts;
    else
        cwork_redis_options_init(&o);
    if (check_options(&o, err)) return NULL;
    if (!url) url = DEFAULT_URL;
    cwork_redis *r = cw_calloc(1, sizeof *r);
    if (!r) {
        cw_error(err, CWORK_ENOMEM, "out of memory");
        return NULL;
    }
    int rc = cw_redis_addr_parse(url, &r->addr, err);
    if (rc) {
        cw_free(r);
        return NULL;
    }
    if (choose_passwords(&r->addr, &o, err)) goto fail;
    r->url_shown = cwork_redact_url(url);
    r->addr_text = describe_pool(&r->addr);
    if (!r->addr_text || !r->url_shown) {
        cw_error(err, CWORK_ENOMEM, "out of memory");
        goto fail;
    }
    if (r->addr.kind == CW_REDIS_SENTINEL && cw_sentinel_new(r, err) != 0) goto fail;
    if (r->addr.kind == CW_REDIS_CLUSTER && cw_cluster_new(r, err) != 0) goto fail;
    const cw_redis_addr *a = &r->addr;
    if (a->tls) {
        if (cw_tls_config_init(&r->tls, a->tls_ca, a->tls_cert, a->tls_key, a->tls_sni,
                               a->tls_verify, err) != 0)
            goto fail;
        if (!a->tls_verify)
            cw_log(CWORK_LOG_WARN, "redis.tls.verify_off", "url", r->url_shown, "risk",
                   "the server's certificate is not checked: anyone on the path can read and "
                   "change the traffic",
                   NULL);
    }
    /* The transport counts per-reply deadlines in int milliseconds. */
    r->connect_timeout_ms = o.connect_timeout_ms > INT_MAX ? INT_MAX : (int)o.connect_timeout_ms;
    r->command_timeout_ms = o.command_timeout_ms > INT_MAX ? INT_MAX : (int)o.command_timeout_ms;
    r->max_connections = o.max_connections;
    r->checkout_timeout_ms = o.checkout_timeout_ms;
    if (keep_given(r, url, &o) != 0) {
        cw_error(err, CWORK_ENOMEM, "out of memory");
        goto fail;
    }
    if (init_sync(r) != 0) {
        cw_error(err, CWORK_ENOMEM, "cannot create the pool's mutex");
        goto fail;
    }
    return r;
fail:
    forget_given(r);
    cw_sentinel_free(r);
    cw_cluster_free(r);
    cw_tls_config_clear(&r->tls);
    cw_redis_addr_clear(&r->addr);
    cw_free(r->addr_text);
    cw_free(r->url_shown);
    cw_free(r);
    return NULL;
}

void cwork_redis_free(cwork_redis *r)
{
    if (!r) return;
    while (r->idle) {
        cw_conn *c = r->idle;
        r->idle = c->next_idle;
        cw_conn_close(c);
    }
    cw_sentinel_free(r); /* its watcher may still use the pool's TLS and addresses */
    cw_cluster_free(r);
    cw_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    cw_tls_config_clear(&r->tls);
    cw_redis_addr_clear(&r->addr);
    forget_given(r);
    cw_free(r->addr_text);
    cw_free(r->url_shown);
    cw_free(r);
}

cwork_redis *cw_redis_clone(const cwork_redis *r, cwork_error *err)
{
    return cwork_redis_new(r->url_given, &r->opts_given, err);
}

unsigned cw_redis_declared_shards(const cwork_redis *r)
{
    return r->addr.shards > 0 ? (unsigned)r->addr.shards : 0;
}

/* ---------------------------------------------------------------- checkout / checkin */

/* An idle connection has nothing to read. If poll says otherwise, the server closed it
 * (idle timeout, CLIENT KILL, restart) or sent something unasked: either way it is
 * unusable, and finding out here saves the caller a failed command. */
static int idle_usable(cw_conn *c)
{
    return cw_net_idle_ok(&c->net);
}

static void wait_until(cwork_redis *r, int64_t until_ms)
{
    cw_mutex_assert_held(&r->mu);
    struct timespec ts = {(time_t)(until_ms / 1000), (long)(until_ms % 1000) * 1000000L};
    cw_cond_timedwait(&r->cv, &r->mu, &ts);
}

/* Records a failed dial (called with the lock held). Returns 1 when this failure starts
 * a new backoff step, which is when it deserves a log line. */
static int note_dial_failure(cwork_redis *r, int was_probe, const cwork_error *e)
{
    cw_mutex_assert_held(&r->mu);
    r->last_error = *e;
    int new_step = 0;
    if (!r->failing) {
        r->failing = 1;
        r->backoff_ms = BACKOFF_FIRST_MS;
        new_step = 1;
    } else if (was_probe) {
        r->backoff_ms = r->backoff_ms * 2 > BACKOFF_CAP_MS ? BACKOFF_CAP_MS : r->backoff_ms * 2;
        new_step = 1;
    }
    if (new_step) r->next_dial_ms = cw_monotonic_ms() + r->backoff_ms;
    return new_step;
}

/* A new connection for the pool, wherever the URL says the data is: the server of a
 * direct URL, the master the sentinels name, the cluster node serving the namespace.
 * probe: Redis was unreachable until now; a PING makes sure that it serves again. */
static int dial(cwork_redis *r, int probe, cw_conn **out, int *transient, cwork_error *err)
{
    if (r->sentinel) return cw_sentinel_dial(r, probe, out, transient, err);
    if (r->cluster) return cw_cluster_dial(r, probe, out, transient, err);
    const cw_redis_addr *a = &r->addr;
    cw_dial_auth auth = {a->user, a->password, a->db};
    int rc = cw_dial_node(r, a->host, a->port, a->unix_path, &auth, out, transient, err);
    if (rc == 0 && probe) {
        /* Not still loading its data set (LOADING counts as unreachable). */
        const char *argv[1] = {"PING"};
        rc = cw_dial_setup(r, *out, 1, argv, "PING", NULL, transient, err);
        if (rc) {
            cw_conn_close(*out);
            *out = NULL;
        }
    }
    return rc;
}

int cw_redis_checkout(cwork_redis *r, cw_conn **out, cwork_error *err)
{
    *out = NULL;
    int64_t deadline = cw_monotonic_ms() + r->checkout_timeout_ms;
    cw_mutex_lock(&r->mu);
    for (;;) {
        if (r->idle) {
            cw_conn *c = r->idle;
            r->idle = c->next_idle;
            c->next_idle = NULL;
            if (c->epoch == r->epoch && idle_usable(c)) {
                cw_mutex_unlock(&r->mu);
                *out = c;
                return 0;
            }
            r->live--;
            cw_mutex_unlock(&r->mu);
            cw_conn_close(c);
            cw_mutex_lock(&r->mu);
            continue;
        }
        int64_t now = cw_monotonic_ms();
        int may_dial = r->live < r->max_connections &&
                       (!r->failing || (!r->probing && now >= r->next_dial_ms));
        if (may_dial) {
            int probe = r->failing;
            r->probing |= probe;
            r->live++;
            cw_mutex_unlock(&r->mu);

            cw_conn *c;
            cwork_error e;
            int transient;
            int rc = dial(r, probe, &c, &transient, &e);

            cw_mutex_lock(&r->mu);
            if (probe) r->probing = 0;
            if (rc == 0) {
                int recovered = r->failing;
                r->failing = 0;
                pthread_cond_broadcast(&r->cv); /* waiters for the probe may dial now */
                cw_mutex_unlock(&r->mu);
                if (recovered)
                    cw_log(CWORK_LOG_INFO, "redis.dial.recovered", "addr", r->addr_text, NULL);
                *out = c;
                return 0;
            }
            r->live--;
            int log_it = 0;
            if (transient)
                log_it = note_dial_failure(r, probe, &e);
            else
                r->failing = 0; /* Redis answered: it is reachable, the refusal is final */
            pthread_cond_broadcast(&r->cv);
            int give_up = !transient || cw_monotonic_ms() >= deadline;
            cw_mutex_unlock(&r->mu);
            if (log_it)
                cw_log(CWORK_LOG_WARN, "redis.dial", "addr", r->addr_text, "error", e.message,
                       NULL);
            if (give_up) {
                if (err) *err = e;
                return e.code;
            }
            cw_mutex_lock(&r->mu);
            continue;
        }
        if (now >= deadline) {
            /* Redis' fault only if a dial was what we were waiting for. */
            int unreachable = r->failing && r->live < r->max_connections;
            int rc;
            if (unreachable && err) *err = r->last_error;
            if (unreachable)
                rc = r->last_error.code;
            else
                rc = cw_error(err, CWORK_ETIMEOUT,
                              "redis %s: no free connection within %lld ms (max_connections %d)",
                              r->addr_text, (long long)r->checkout_timeout_ms, r->max_connections);
            cw_mutex_unlock(&r->mu);
            return rc;
        }
        /* Sleep until something changes, the next dial is due, or the deadline. */
        int64_t until = deadline;
        if (r->live < r->max_connections && r->failing && !r->probing && r->next_dial_ms < until)
            until = r->next_dial_ms;
        wait_until(r, until);
    }
}

void cw_redis_checkin(cwork_redis *r, cw_conn *c)
{
    if (!c) return;
    /* Unread replies would be read by the next user as answers to its own commands; a
     * connection of an older epoch goes to a server that is no longer the master. */
    cw_mutex_lock(&r->mu);
    int drop = c->broken || c->pending != 0 || c->net.err || c->epoch != r->epoch;
    cw_mutex_unlock(&r->mu);
    if (drop) {
        cw_conn_close(c);
        cw_mutex_lock(&r->mu);
        r->live--;
    } else {
        cw_mutex_lock(&r->mu);
        c->next_idle = r->idle;
        r->idle = c;
    }
    pthread_cond_broadcast(&r->cv);
    cw_mutex_unlock(&r->mu);
}

void cw_redis_drop_retired(cwork_redis *r, cw_conn **cp)
{
    if (!*cp || !r->sentinel) return; /* only Sentinel moves the epoch */
    cw_mutex_lock(&r->mu);
    int retired = (*cp)->epoch != r->epoch;
    cw_mutex_unlock(&r->mu);
    if (!retired) return;
    cw_redis_checkin(r, *cp); /* closes it: of an older epoch */
    *cp = NULL;
}

int cw_redis_use_namespace(cwork_redis *r, const char *ns, cwork_error *err)
{
    return r && r->cluster && ns ? cw_cluster_bind(r, ns, err) : 0;
}

/* ---------------------------------------------------------------- conveniences */

int cw_redis_command(cwork_redis *r, int argc, const char **argv, const size_t *lens,
                     redisReply **out, cwork_error *err)
{
    if (out) *out = NULL;
    cw_conn *c;
    int rc = cw_redis_checkout(r, &c, err);
    if (rc) return rc;
    rc = cw_conn_command(c, argc, argv, lens, out, err);
    cw_redis_checkin(r, c);
    return rc;
}

int cwork_redis_ping(cwork_redis *r, cwork_error *err)
{
    if (!r) return cw_error(err, CWORK_EINVAL, "no Redis pool");
    cw_conn *c;
    cwork_error e;
    int rc = cw_redis_checkout(r, &c, &e);
    if (rc == 0) {
        redisReply *reply = NULL;
        rc = cw_conn_commandf(c, &reply, &e, "PING");
        if (rc == 0 && cw_reply_status(reply, "PONG", NULL, NULL) != 0)
            rc = cw_error(&e, CWORK_EPROTO, "redis %s: unexpected answer to PING", r->addr_text);
        cw_reply_free(reply);
        cw_redis_checkin(r, c);
    }
    if (rc && err) *err = e;
    return rc;
}
