/* The connection pool: creation from a URL, dialling (timeouts, keepalive,
 * close-on-exec, AUTH, SELECT), checkout/checkin, and re-dialling with capped backoff
 * while Redis is unreachable. Per-connection commands live in redis_conn.c, URL
 * parsing in redis_url.c.
 *
 * Dialling while Redis is down: the first failed dial puts the pool in the "failing"
 * state. From then on one checkout at a time dials (the probe) and only after the
 * backoff (10 ms, doubling up to 1 s) since the previous failure; the other checkouts
 * wait for the probe or their deadline instead of hammering a dead server, and one
 * warning is logged per backoff step. The first successful dial ends the state. */
#include "redis.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_URL "redis://127.0.0.1:6379"
#define BACKOFF_FIRST_MS 10
#define BACKOFF_CAP_MS 1000

struct cwork_redis {
    cw_redis_addr addr;
    char *url_shown; /* the URL with the password redacted */
    char *addr_text; /* "host:port", "[v6]:port" or "unix:/path", for messages */
    struct timeval connect_tv, command_tv;
    int max_connections;
    int64_t checkout_timeout_ms;

    pthread_mutex_t mu;
    pthread_cond_t cv;    /* broadcast whenever an idle connection, a free slot or the
                             result of a dial appears */
    cw_conn *idle;        /* LIFO: the warmest connection is reused first */
    int live;             /* connections that exist or are being dialled */
    int failing;          /* the last dial could not reach Redis; no success since */
    int probing;          /* while failing, a dial is in flight */
    int backoff_ms;       /* the current backoff step while failing */
    int64_t next_dial_ms; /* while failing: no dial before this (monotonic ms) */
    cwork_error last_error;
};

void cwork_redis_options_init(cwork_redis_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->connect_timeout_ms = 5000;
    opts->command_timeout_ms = 5000;
    opts->max_connections = 16;
    opts->checkout_timeout_ms = 5000;
    opts->password = NULL;
}

static struct timeval ms_to_tv(int64_t ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    return tv;
}

const char *cw_redis_url_redacted(const cwork_redis *r)
{
    return r->url_shown;
}

/* ---------------------------------------------------------------- creation */

static int check_options(const cwork_redis_options *o, cwork_error *err)
{
    if (o->connect_timeout_ms <= 0)
        return cw_error(err, CWORK_EINVAL, "redis options: connect_timeout_ms must be > 0");
    if (o->max_connections < 1)
        return cw_error(err, CWORK_EINVAL, "redis options: max_connections must be >= 1");
    if (cw_check_duration_ms("redis options: connect_timeout_ms", o->connect_timeout_ms, err) ||
        cw_check_duration_ms("redis options: command_timeout_ms", o->command_timeout_ms, err) ||
        cw_check_duration_ms("redis options: checkout_timeout_ms", o->checkout_timeout_ms, err))
        return CWORK_EINVAL;
    return 0;
}

/* The URL's password wins; opts->password stands in when the URL carries none. */
static int choose_password(cw_redis_addr *a, const cwork_redis_options *o, cwork_error *err)
{
    if (a->password || !o->password || !*o->password) return 0;
    a->password = cw_strdup(o->password);
    return a->password ? 0 : cw_error(err, CWORK_ENOMEM, "out of memory");
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
    if (pthread_mutex_init(&r->mu, NULL) != 0) {
        pthread_cond_destroy(&r->cv);
        return -1;
    }
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
    if (choose_password(&r->addr, &o, err)) goto fail;
    cw_buf b;
    cw_buf_init(&b);
    if (r->addr.unix_path)
        cw_buf_printf(&b, "unix:%s", r->addr.unix_path);
    else if (strchr(r->addr.host, ':'))
        cw_buf_printf(&b, "[%s]:%d", r->addr.host, r->addr.port);
    else
        cw_buf_printf(&b, "%s:%d", r->addr.host, r->addr.port);
    r->addr_text = cw_buf_take(&b, NULL);
    r->url_shown = cwork_redact_url(url);
    if (!r->addr_text || !r->url_shown) {
        cw_error(err, CWORK_ENOMEM, "out of memory");
        goto fail;
    }
    r->connect_tv = ms_to_tv(o.connect_timeout_ms);
    r->command_tv = ms_to_tv(o.command_timeout_ms); /* {0, 0}: no timeout */
    r->max_connections = o.max_connections;
    r->checkout_timeout_ms = o.checkout_timeout_ms;
    if (init_sync(r) != 0) {
        cw_error(err, CWORK_ENOMEM, "cannot create the pool's mutex");
        goto fail;
    }
    return r;
fail:
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
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    cw_redis_addr_clear(&r->addr);
    cw_free(r->addr_text);
    cw_free(r->url_shown);
    cw_free(r);
}

/* ---------------------------------------------------------------- dialling */

/* Copies a server message into out with every occurrence of secret replaced: Redis does
 * not echo passwords, but a message that reaches a log must not be trusted to. */
static void scrub(char *out, size_t size, const char *msg, const char *secret)
{
    size_t n = secret ? strlen(secret) : 0, j = 0;
    for (const char *p = msg; *p && j + 1 < size;) {
        if (n && strncmp(p, secret, n) == 0) {
            for (const char *x = "xxxxx"; *x && j + 1 < size; x++)
                out[j++] = *x;
            p += n;
        } else {
            out[j++] = *p++;
        }
    }
    out[j] = '\0';
}

/* Errors Redis gives while it cannot serve yet: worth another try after a backoff. */
static int transient_reply(const char *msg)
{
    return strstr(msg, "LOADING") != NULL || strstr(msg, "BUSY") != NULL;
}

/* Runs AUTH or SELECT during the dial. On an error reply, *transient tells whether it
 * may go away by itself. */
static int setup_command(cwork_redis *r, cw_conn *c, int argc, const char **argv, const char *what,
                         int *transient, cwork_error *err)
{
    cwork_error e;
    redisReply *reply = cw_conn_command(c, argc, argv, NULL, &e);
    if (reply) {
        freeReplyObject(reply);
        return 0;
    }
    char msg[sizeof e.message];
    scrub(msg, sizeof msg, e.message, r->addr.password);
    *transient = c->ctx->err != 0 || transient_reply(msg);
    if (c->ctx->err)
        return cw_error(err, e.code, "%s", msg); /* io_error already names the address */
    return cw_error(err, CWORK_EREDIS, "redis %s refused %s: %s", r->addr_text, what, msg);
}

/* Opens and prepares one connection. *transient is 1 when Redis could not be reached
 * (worth re-dialling), 0 when it answered with a refusal (wrong password, bad db).
 * probe: Redis was unreachable until now; a PING makes sure that it serves again and
 * is not still loading its data set (LOADING counts as unreachable). */
static int dial(cwork_redis *r, int probe, cw_conn **out, int *transient, cwork_error *err)
{
    *out = NULL;
    *transient = 1;
    redisContext *ctx = r->addr.unix_path
                            ? redisConnectUnixWithTimeout(r->addr.unix_path, r->connect_tv)
                            : redisConnectWithTimeout(r->addr.host, r->addr.port, r->connect_tv);
    if (!ctx)
        return cw_error(err, CWORK_ENOMEM, "out of memory connecting to redis %s", r->addr_text);
    int rc = 0;
    if (ctx->err) {
        rc = cw_error(err, CWORK_EREDIS, "cannot connect to redis %s: %s", r->addr_text,
                      ctx->errstr);
        redisFree(ctx);
        return rc;
    }
    /* hiredis 0.14 opens sockets without SOCK_CLOEXEC: mark it now so that child
     * processes (cwork work --job) don't inherit it. A fork+exec in another thread in
     * between can still inherit it; this hiredis leaves no way to close that window. */
    int fl = fcntl(ctx->fd, F_GETFD);
    if (fl < 0 || fcntl(ctx->fd, F_SETFD, fl | FD_CLOEXEC) < 0)
        rc = cw_error(err, CWORK_EREDIS, "redis %s: cannot set close-on-exec: %s", r->addr_text,
                      strerror(errno));
    /* Always set: {0, 0} clears any timeout, so "none" really means none. */
    else if (redisSetTimeout(ctx, r->command_tv) != REDIS_OK)
        rc = cw_error(err, CWORK_EREDIS, "redis %s: cannot set timeouts: %s", r->addr_text,
                      ctx->errstr);
    else if (!r->addr.unix_path && redisEnableKeepAlive(ctx) != REDIS_OK)
        rc = cw_error(err, CWORK_EREDIS, "redis %s: cannot enable keepalive: %s", r->addr_text,
                      ctx->errstr);
    if (rc) {
        redisFree(ctx);
        return rc;
    }
    cw_conn *c = cw_calloc(1, sizeof *c);
    if (!c) {
        redisFree(ctx);
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    c->ctx = ctx;
    c->addr = r->addr_text;
    if (r->addr.password) {
        const char *argv[3] = {"AUTH"};
        int argc = 1;
        if (r->addr.user) argv[argc++] = r->addr.user;
        argv[argc++] = r->addr.password;
        rc = setup_command(r, c, argc, argv, "AUTH", transient, err);
    }
    if (rc == 0 && r->addr.db != 0) {
        char db[16];
        snprintf(db, sizeof db, "%d", r->addr.db);
        const char *argv[2] = {"SELECT", db};
        rc = setup_command(r, c, 2, argv, "SELECT", transient, err);
    }
    if (rc == 0 && probe) {
        const char *argv[1] = {"PING"};
        rc = setup_command(r, c, 1, argv, "PING", transient, err);
    }
    if (rc) {
        cw_conn_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* ---------------------------------------------------------------- checkout / checkin */

/* An idle connection has nothing to read. If poll says otherwise, the server closed it
 * (idle timeout, CLIENT KILL, restart) or sent something unasked: either way it is
 * unusable, and finding out here saves the caller a failed command. */
static int idle_usable(cw_conn *c)
{
    if (c->ctx->err) return 0;
    struct pollfd p = {.fd = c->ctx->fd, .events = POLLIN};
    int n;
    while ((n = poll(&p, 1, 0)) < 0 && errno == EINTR) {
    }
    return n == 0;
}

static void wait_until(cwork_redis *r, int64_t until_ms)
{
    struct timespec ts = {(time_t)(until_ms / 1000), (long)(until_ms % 1000) * 1000000L};
    pthread_cond_timedwait(&r->cv, &r->mu, &ts);
}

/* Records a failed dial (called with the lock held). Returns 1 when this failure starts
 * a new backoff step, which is when it deserves a log line. */
static int note_dial_failure(cwork_redis *r, int was_probe, const cwork_error *e)
{
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

int cw_redis_checkout(cwork_redis *r, cw_conn **out, cwork_error *err)
{
    *out = NULL;
    int64_t deadline = cw_monotonic_ms() + r->checkout_timeout_ms;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        if (r->idle) {
            cw_conn *c = r->idle;
            r->idle = c->next_idle;
            c->next_idle = NULL;
            if (idle_usable(c)) {
                pthread_mutex_unlock(&r->mu);
                *out = c;
                return 0;
            }
            r->live--;
            pthread_mutex_unlock(&r->mu);
            cw_conn_close(c);
            pthread_mutex_lock(&r->mu);
            continue;
        }
        int64_t now = cw_monotonic_ms();
        int may_dial = r->live < r->max_connections &&
                       (!r->failing || (!r->probing && now >= r->next_dial_ms));
        if (may_dial) {
            int probe = r->failing;
            r->probing |= probe;
            r->live++;
            pthread_mutex_unlock(&r->mu);

            cw_conn *c;
            cwork_error e;
            int transient;
            int rc = dial(r, probe, &c, &transient, &e);

            pthread_mutex_lock(&r->mu);
            if (probe) r->probing = 0;
            if (rc == 0) {
                int recovered = r->failing;
                r->failing = 0;
                pthread_cond_broadcast(&r->cv); /* waiters for the probe may dial now */
                pthread_mutex_unlock(&r->mu);
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
            pthread_mutex_unlock(&r->mu);
            if (log_it)
                cw_log(CWORK_LOG_WARN, "redis.dial", "addr", r->addr_text, "error", e.message,
                       NULL);
            if (give_up) {
                if (err) *err = e;
                return e.code;
            }
            pthread_mutex_lock(&r->mu);
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
            pthread_mutex_unlock(&r->mu);
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
    /* Unread replies would be read by the next user as answers to its own commands. */
    if (c->broken || c->pending != 0 || c->ctx->err) {
        cw_conn_close(c);
        pthread_mutex_lock(&r->mu);
        r->live--;
    } else {
        pthread_mutex_lock(&r->mu);
        c->next_idle = r->idle;
        r->idle = c;
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* ---------------------------------------------------------------- conveniences */

redisReply *cw_redis_command(cwork_redis *r, int argc, const char **argv, const size_t *lens,
                             cwork_error *err)
{
    cw_conn *c;
    if (cw_redis_checkout(r, &c, err) != 0) return NULL;
    redisReply *reply = cw_conn_command(c, argc, argv, lens, err);
    cw_redis_checkin(r, c);
    return reply;
}

int cwork_redis_ping(cwork_redis *r, cwork_error *err)
{
    if (!r) return cw_error(err, CWORK_EINVAL, "no Redis pool");
    cw_conn *c;
    cwork_error e;
    int rc = cw_redis_checkout(r, &c, &e);
    if (rc == 0) {
        redisReply *reply = cw_conn_commandf(c, &e, "PING");
        if (!reply)
            rc = e.code;
        else if (reply->type != REDIS_REPLY_STATUS || !reply->str || strcmp(reply->str, "PONG"))
            rc = cw_error(&e, CWORK_EPROTO, "redis %s: unexpected answer to PING", r->addr_text);
        if (reply) freeReplyObject(reply);
        cw_redis_checkin(r, c);
    }
    if (rc && err) *err = e;
    return rc;
}
