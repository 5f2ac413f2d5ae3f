/* Opening one prepared connection: the transport (redis_net.c), TLS (redis_tls.c),
 * then AUTH and SELECT. Where the pool's connections go for each URL form is redis.c's
 * (dial), which Sentinel and Cluster use these for. */
#include "redis_impl.h"

#include <stdio.h>
#include <string.h>

void cw_scrub(char *out, size_t size, const char *msg, const char *secret1, const char *secret2)
{
    /* Redis does not echo passwords, but a message that reaches a log must not be
     * trusted to. */
    size_t n1 = secret1 ? strlen(secret1) : 0, n2 = secret2 ? strlen(secret2) : 0, j = 0;
    for (const char *p = msg; *p && j + 1 < size;) {
        size_t n = n1 && strncmp(p, secret1, n1) == 0   ? n1
                   : n2 && strncmp(p, secret2, n2) == 0 ? n2
                                                        : 0;
        if (n) {
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
    return strstr(msg, "LOADING") != NULL || strstr(msg, "BUSY") != NULL ||
           strstr(msg, "MASTERDOWN") != NULL || strstr(msg, "TRYAGAIN") != NULL;
}

int cw_dial_setup(cwork_redis *r, cw_conn *c, int argc, const char **argv, const char *what,
                  redisReply **reply, int *transient, cwork_error *err)
{
    cwork_error e;
    redisReply *x = NULL;
    if (cw_conn_command(c, argc, argv, NULL, &x, &e) == 0) {
        if (reply)
            *reply = x;
        else
            cw_reply_free(x);
        return 0;
    }
    char msg[sizeof e.message];
    cw_scrub(msg, sizeof msg, e.message, r->addr.password, r->addr.sentinel_password);
    *transient = (c->net.err != 0 && c->net.err != CW_NET_ETLS && c->net.err != CW_NET_ENOTREDIS) ||
                 transient_reply(msg);
    if (c->net.err)
        return cw_error(err, e.code, "%s", msg); /* io_error already names the address */
    return cw_error(err, CWORK_EREDIS, "redis %s refused %s: %s", c->addr, what, msg);
}

static void describe_node(cw_conn *c, const char *host, int port, const char *unix_path)
{
    if (unix_path)
        snprintf(c->addr_buf, sizeof c->addr_buf, "unix:%s", unix_path);
    else if (strchr(host, ':'))
        snprintf(c->addr_buf, sizeof c->addr_buf, "[%s]:%d", host, port);
    else
        snprintf(c->addr_buf, sizeof c->addr_buf, "%s:%d", host, port);
    c->addr = c->addr_buf;
}

int cw_dial_node(cwork_redis *r, const char *host, int port, const char *unix_path,
                 const cw_dial_auth *auth, cw_conn **out, int *transient, cwork_error *err)
{
    *out = NULL;
    *transient = 1;
    cw_conn *c = cw_calloc(1, sizeof *c);
    if (!c) return cw_error(err, CWORK_ENOMEM, "out of memory");
    cw_net_init(&c->net);
    describe_node(c, host, port, unix_path);
    c->pool = r;
    c->min_replicas = r->addr.min_replicas;
    c->min_replicas_timeout_ms = r->addr.min_replicas_timeout_ms;
    int rc = unix_path ? cw_net_dial_unix(&c->net, unix_path, r->connect_timeout_ms)
                       : cw_net_dial_tcp(&c->net, host, port, r->connect_timeout_ms);
    if (rc == 0 && r->tls.ctx) rc = cw_tls_connect(&c->net, &r->tls, host, r->connect_timeout_ms);
    if (rc != 0) {
        /* A certificate that does not verify, or a server that does not speak TLS, will
         * not change by dialling again. */
        *transient = c->net.err != CW_NET_ETLS && c->net.err != CW_NET_ENOTREDIS;
        rc = cw_error(err, c->net.err == CW_NET_ENOMEM ? CWORK_ENOMEM : CWORK_EREDIS,
                      "cannot connect to redis %s: %s", c->addr, c->net.errstr);
        cw_conn_close(c);
        return rc;
    }
    c->net.timeout_ms = r->command_timeout_ms;
    if (auth->password) {
        const char *argv[3] = {"AUTH"};
        int argc = 1;
        if (auth->user) argv[argc++] = auth->user;
        argv[argc++] = auth->password;
        rc = cw_dial_setup(r, c, argc, argv, "AUTH", NULL, transient, err);
    }
    if (rc == 0 && auth->db != 0) {
        char db[16];
        snprintf(db, sizeof db, "%d", auth->db);
        const char *argv[2] = {"SELECT", db};
        rc = cw_dial_setup(r, c, 2, argv, "SELECT", NULL, transient, err);
    }
    if (rc) {
        cw_conn_close(c);
        return rc;
    }
    *out = c;
    return 0;
}
