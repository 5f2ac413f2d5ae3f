/* One Redis connection: commands, pipelining and scripts over the transport of
 * redis_net.c (which never raises SIGPIPE: it writes with MSG_NOSIGNAL).
 *
 * Everything here runs on a connection the calling thread has checked out, so nothing
 * needs a lock. A connection that saw an I/O, protocol or out-of-memory error, or a
 * READONLY reply, is marked broken; the pool closes it at checkin. */
#include "redis.h"
#include "redis_impl.h"
#include "log.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- errors */

/* Marks c broken and describes what the transport saw. */
static int io_error(cw_conn *c, cwork_error *err)
{
    c->broken = 1;
    const cw_net *n = &c->net;
    const char *what = n->errstr[0] ? n->errstr : "unknown error";
    int code = CWORK_EREDIS;
    if (n->err == CW_NET_EPROTO || n->err == CW_NET_ENOTREDIS)
        code = CWORK_EPROTO;
    else if (n->err == CW_NET_ENOMEM)
        code = CWORK_ENOMEM;
    return cw_error(err, code, "redis %s: %s", c->addr ? c->addr : "", what);
}

/* A READONLY reply means we are talking to a replica, typically the old primary after a
 * failover behind an unchanged DNS name: re-dialling may reach the new primary. Scripts
 * on Redis < 7 wrap the error, hence the second test. */
static void note_error(cw_conn *c, const redisReply *r)
{
    const char *msg = cw_reply_error(r);
    if (!msg) return;
    if (strncmp(msg, "READONLY", 8) == 0 || strstr(msg, "-READONLY") != NULL) c->broken = 1;
    /* The server lost its scripts (SCRIPT FLUSH, a restart behind a proxy, a failover):
     * forget what this connection loaded, so that the next use sends EVAL again instead
     * of failing with NOSCRIPT forever. */
    if (strncmp(msg, "NOSCRIPT", 8) == 0) c->nscripts = 0;
    if (c->pool && c->pool->redirect) c->pool->redirect->note_error(c, msg);
}

static void note_reply(cw_conn *c, const redisReply *r)
{
    note_error(c, r);
    /* EXEC: errors of the queued commands */
    for (size_t i = 0; cw_reply_at(r, i); i++)
        note_error(c, cw_reply_at(r, i));
}

/* The end of every command call: an error reply becomes CWORK_EREDIS (err filled, the
 * reply freed), a missing one the transport's error; any other reply goes to *out, or
 * is freed when the caller does not want it (out NULL). The code is returned whether or
 * not err is NULL. */
static int finish(cw_conn *c, redisReply *r, redisReply **out, cwork_error *err)
{
    if (!r) return io_error(c, err);
    const char *msg = cw_reply_error(r);
    if (msg) {
        note_reply(c, r);
        /* An untagged namespace's keys spread over slots: say what to do about it. */
        const char *hint = !strncmp(msg, "CROSSSLOT", 9)
                               ? " (in Redis Cluster a namespace needs a hash tag: {myapp})"
                               : "";
        size_t len = cw_reply_len(r);
        cw_error(err, CWORK_EREDIS, "redis: %.*s%s", (int)(len > 180 ? 180 : len), msg, hint);
        cw_reply_free(r);
        return CWORK_EREDIS;
    }
    if (out)
        *out = r;
    else
        cw_reply_free(r);
    return 0;
}

/* Every command call starts by clearing *out, so that a caller may free it
 * unconditionally. */
static void clear_out(redisReply **out)
{
    if (out) *out = NULL;
}

static int refuse_if_pending(cw_conn *c, cwork_error *err)
{
    if (c->pending == 0) return 0;
    return cw_error(err, CWORK_EINVAL, "redis: %d pipelined replies are still unread", c->pending);
}

/* ---------------------------------------------------------------- commands */

/* One round trip of what was appended; NULL means an I/O error. */
static redisReply *round_trip(cw_conn *c)
{
    void *r = NULL;
    return cw_net_read_reply(&c->net, &r) == 0 ? r : NULL;
}

/* One round trip of a formatted command (hiredis' malloc'd cmd, consumed), following
 * a cluster's redirections; error replies come back as replies, NULL means an I/O
 * error. */
static redisReply *formatted_round_trip(cw_conn *c, char *cmd, int len)
{
    if (len < 0 || !cmd) {
        cw_net_fail(&c->net, CW_NET_ENOMEM, "out of memory");
        return NULL;
    }
    redisReply *r = NULL;
    if (cw_net_append_raw(&c->net, cmd, (size_t)len) == 0) r = round_trip(c);
    if (r && c->pool && c->pool->redirect) r = c->pool->redirect->follow(c, r, cmd, (size_t)len);
    redisFreeCommand(cmd);
    return r;
}

static redisReply *raw_command(cw_conn *c, int argc, const char **argv, const size_t *lens)
{
    if (c->net.err) return NULL;
    /* Nothing to send again: encoded once, straight into the output buffer. */
    if (!(c->pool && c->pool->redirect))
        return cw_net_append_argv(&c->net, argc, argv, lens) == 0 ? round_trip(c) : NULL;
    char *cmd = NULL;
    int len = redisFormatCommandArgv(&cmd, argc, argv, lens);
    return formatted_round_trip(c, cmd, len);
}

int cw_conn_command(cw_conn *c, int argc, const char **argv, const size_t *lens, redisReply **out,
                    cwork_error *err)
{
    clear_out(out);
    int rc = refuse_if_pending(c, err);
    if (rc) return rc;
    return finish(c, raw_command(c, argc, argv, lens), out, err);
}

int cw_conn_commandf(cw_conn *c, redisReply **out, cwork_error *err, const char *fmt, ...)
{
    clear_out(out);
    int rc = refuse_if_pending(c, err);
    if (rc) return rc;
    if (c->net.err) return finish(c, NULL, out, err);
    va_list ap;
    va_start(ap, fmt);
    char *cmd = NULL;
    int len = redisvFormatCommand(&cmd, fmt, ap);
    va_end(ap);
    return finish(c, formatted_round_trip(c, cmd, len), out, err);
}

int cw_conn_append(cw_conn *c, int argc, const char **argv, const size_t *lens, cwork_error *err)
{
    /* Appending only fills the output buffer; the write happens in cw_conn_read. */
    if (cw_net_append_argv(&c->net, argc, argv, lens) != 0) return io_error(c, err);
    c->pending++;
    return 0;
}

int cw_conn_read(cw_conn *c, redisReply **out, cwork_error *err)
{
    *out = NULL;
    if (c->pending <= 0) return cw_error(err, CWORK_EINVAL, "redis: no pipelined reply to read");
    /* The first read flushes every appended command, then waits for one reply. */
    redisReply *reply = round_trip(c);
    if (!reply) return io_error(c, err);
    c->pending--;
    note_reply(c, reply);
    *out = reply;
    return 0;
}

int cw_conn_fd(const cw_conn *c)
{
    return c->net.fd;
}

int cw_conn_read_buffered(cw_conn *c, redisReply **out, cwork_error *err)
{
    void *reply = NULL;
    *out = NULL;
    if (cw_net_buffered_reply(&c->net, &reply) != 0) return io_error(c, err);
    *out = reply;
    return 0;
}

/* ---------------------------------------------------------------- replicas */

/* WAIT's arguments for c's min_replicas (n and ms are the caller's buffers). */
static void wait_argv(const cw_conn *c, const char *argv[3], char n[16], char ms[16])
{
    snprintf(n, 16, "%d", c->min_replicas);
    snprintf(ms, 16, "%d", c->min_replicas_timeout_ms);
    argv[0] = "WAIT", argv[1] = n, argv[2] = ms;
}

/* What WAIT answered (r is consumed): 0 when enough replicas acknowledged, else the
 * error. A shortfall does not break c. */
static int judge_wait(cw_conn *c, redisReply *r, cwork_error *err)
{
    int64_t acked = -1;
    int was_error = cw_reply_error(r) != NULL;
    if (was_error)
        cw_error(err, CWORK_EREDIS, "redis %s: WAIT: %.*s", c->addr,
                 (int)(cw_reply_len(r) > 160 ? 160 : cw_reply_len(r)), cw_reply_error(r));
    else
        cw_reply_int(r, &acked, "WAIT", NULL);
    cw_reply_free(r);
    if (was_error) return CWORK_EREDIS;
    if (acked < 0) return cw_error(err, CWORK_EPROTO, "redis %s: WAIT answered no number", c->addr);
    if (acked < c->min_replicas)
        return cw_error(err, CWORK_EREDIS,
                        "redis %s: written, but only %lld of %d replicas acknowledged it within "
                        "%d ms (min_replicas): a failover now could lose it",
                        c->addr, (long long)acked, c->min_replicas, c->min_replicas_timeout_ms);
    return 0;
}

/* WAIT itself may take its whole timeout: the reply's deadline gets that on top. */
static void stretch_deadline(cw_conn *c, int *saved)
{
    *saved = c->net.timeout_ms;
    if (*saved > 0) c->net.timeout_ms = *saved + c->min_replicas_timeout_ms;
}

int cw_conn_wait_replicas(cw_conn *c, cwork_error *err)
{
    if (c->min_replicas <= 0) return 0;
    const char *argv[3];
    char n[16], ms[16];
    wait_argv(c, argv, n, ms);
    int saved;
    stretch_deadline(c, &saved);
    redisReply *r = NULL;
    int rc = cw_conn_command(c, 3, argv, NULL, &r, err);
    c->net.timeout_ms = saved;
    return rc ? rc : judge_wait(c, r, err);
}

int cw_conn_append_wait_replicas(cw_conn *c, cwork_error *err)
{
    if (c->min_replicas <= 0) return 0;
    const char *argv[3];
    char n[16], ms[16];
    wait_argv(c, argv, n, ms);
    return cw_conn_append(c, 3, argv, NULL, err);
}

int cw_conn_read_wait_replicas(cw_conn *c, cwork_error *err)
{
    if (c->min_replicas <= 0) return 0;
    int saved;
    stretch_deadline(c, &saved);
    redisReply *r = NULL;
    int rc = cw_conn_read(c, &r, err);
    c->net.timeout_ms = saved;
    if (rc) return rc;
    cwork_error e = {0};
    if (judge_wait(c, r, &e) == 0) return 0;
    /* The write stands on the master; trying it again would not replicate it any
     * sooner, and stopping would not either. Said once a second per pool at most. */
    if (cw_redis_warn_due(c->pool))
        cw_log(CWORK_LOG_WARN, "redis.min_replicas", "error", e.message, NULL);
    return 0;
}

/* ---------------------------------------------------------------- scripts */

static int script_loaded(const cw_conn *c, const char *sha)
{
    for (int i = 0; i < c->nscripts; i++)
        if (memcmp(c->scripts[i], sha, 40) == 0) return 1;
    return 0;
}

/* Best effort: when memory is short the script is simply not remembered, and the next
 * use loads it again. */
static void remember_script(cw_conn *c, const char *sha)
{
    if (script_loaded(c, sha)) return;
    if (c->nscripts == c->scripts_cap) {
        int cap = c->scripts_cap ? c->scripts_cap * 2 : 8;
        char(*grown)[41] = cw_realloc(c->scripts, (size_t)cap * sizeof *grown);
        if (!grown) return;
        c->scripts = grown;
        c->scripts_cap = cap;
    }
    memcpy(c->scripts[c->nscripts], sha, 40);
    c->scripts[c->nscripts][40] = '\0';
    c->nscripts++;
}

/* argv for EVALSHA sha nkeys … (or EVAL body nkeys …). Small calls use the caller's
 * stack arrays; *heap is what to cw_free afterwards. */
#define EVAL_STACK_ARGS 24

typedef struct eval_args {
    const char *argv[EVAL_STACK_ARGS];
    size_t lens[EVAL_STACK_ARGS];
    const char **pargv;
    size_t *plens;
    void *heap;
    int argc;
    char nkeys[16];
} eval_args;

static int eval_args_build(eval_args *e, const cw_script *s, int use_sha, int nkeys, int nargs,
                           const char **argv, const size_t *lens, cwork_error *err)
{
    e->heap = NULL;
    if (nkeys < 0 || nargs < 0 || nkeys > (1 << 24) || nargs > (1 << 24))
        return cw_error(err, CWORK_EINVAL, "redis: bad script argument counts");
    e->argc = 3 + nkeys + nargs;
    e->pargv = e->argv;
    e->plens = e->lens;
    if (e->argc > EVAL_STACK_ARGS) {
        size_t n = (size_t)e->argc;
        e->heap = cw_malloc(n * (sizeof *e->pargv + sizeof *e->plens));
        if (!e->heap) return cw_error(err, CWORK_ENOMEM, "out of memory");
        e->pargv = e->heap;
        e->plens = (size_t *)((char *)e->heap + n * sizeof *e->pargv);
    }
    snprintf(e->nkeys, sizeof e->nkeys, "%d", nkeys);
    e->pargv[0] = use_sha ? "EVALSHA" : "EVAL";
    e->plens[0] = use_sha ? 7 : 4;
    e->pargv[1] = use_sha ? s->sha : s->body;
    e->plens[1] = use_sha ? 40 : s->body_len;
    e->pargv[2] = e->nkeys;
    e->plens[2] = strlen(e->nkeys);
    for (int i = 0; i < nkeys + nargs; i++) {
        e->pargv[3 + i] = argv[i];
        e->plens[3 + i] = lens ? lens[i] : strlen(argv[i]);
    }
    return 0;
}

/* The call at the line of script s that an error reply names ("… script: SHA, on
 * @user_script:26."): its command, lowercased, into cmd, and the index of its key when
 * the call's first argument is KEYS[n] (*key_index n, else 0). 0 when the message names
 * no line or the line holds no call. Redis 7.0 reports an error raised by a call inside
 * a script (an ACL refusal, WRONGTYPE) by that line only. */
static int script_call(const cw_script *s, const char *msg, char *cmd, size_t size, int *key_index)
{
    *key_index = 0;
    const char *at = strstr(msg, "@user_script:");
    if (!at) return 0;
    long line = strtol(at + 13, NULL, 10);
    const char *p = s->body, *end = s->body + s->body_len;
    for (long i = 1; i < line && p < end; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    for (const char *q = p; q + 6 < eol; q++) {
        if (memcmp(q, "call(", 5) != 0 || (q[5] != '\'' && q[5] != '"')) continue;
        size_t n = 0;
        const char *w = q + 6;
        for (; w < eol && n + 1 < size && *w != q[5]; w++)
            cmd[n++] = (char)tolower((unsigned char)*w);
        cmd[n] = '\0';
        if (w < eol && (size_t)(eol - w) > 8 && memcmp(w + 1, ", KEYS[", 7) == 0)
            *key_index = (int)strtol(w + 8, NULL, 10);
        return n > 0;
    }
    return 0;
}

/* Redis 7.0 reports a command an ACL refuses inside a script by the script's line only
 * ("… can't run this command or subcommand script: SHA, on @user_script:26."): that line
 * of our own script names the command. */
static int refused_call(const cw_script *s, const char *msg, char *cmd, size_t size)
{
    int key_index;
    return strstr(msg, "can't run this command") && script_call(s, msg, cmd, size, &key_index);
}

void cw_script_explain_error(const cw_script *s, const char *msg, char *out, size_t size)
{
    char cmd[32];
    if (refused_call(s, msg, cmd, sizeof cmd))
        snprintf(out, size, "the Redis user may not run '%s' (ACL +%s), which the %s script calls",
                 cmd, cmd, s->name ? s->name : "cwork");
    else
        snprintf(out, size, "%s", msg);
}

/* Any other error raised by a call of the script on one of its KEYS (WRONGTYPE on a
 * damaged key): Redis' words up to " script: SHA…", then the call and the key, so that
 * the message names what to repair instead of a line of a script. */
static void name_the_key(const cw_script *s, const char *msg, int nkeys, const char **argv,
                         const size_t *lens, char *out, size_t size)
{
    char cmd[32];
    int k;
    const char *cut = strstr(msg, " script: ");
    if (!cut || !script_call(s, msg, cmd, sizeof cmd, &k) || k < 1 || k > nkeys) return;
    size_t klen = lens ? lens[k - 1] : strlen(argv[k - 1]);
    snprintf(out, size, "%.*s (key %.*s, in the %s script's '%s')", (int)(cut - msg), msg,
             (int)(klen > 300 ? 300 : klen), argv[k - 1], s->name ? s->name : "cwork", cmd);
}

int cw_conn_eval(cw_conn *c, const cw_script *s, int nkeys, int nargs, const char **argv,
                 const size_t *lens, redisReply **out, cwork_error *err)
{
    clear_out(out);
    int rc = refuse_if_pending(c, err);
    if (rc) return rc;
    eval_args e;
    rc = eval_args_build(&e, s, 1, nkeys, nargs, argv, lens, err);
    if (rc) return rc;
    redisReply *r = raw_command(c, e.argc, e.pargv, e.plens);
    if (cw_reply_error(r) && strncmp(cw_reply_error(r), "NOSCRIPT", 8) == 0) {
        /* Not in the server's script cache (a restart, SCRIPT FLUSH, another server
         * behind the same name): EVAL sends the body, and caches it on the way. */
        cw_reply_free(r);
        e.pargv[0] = "EVAL", e.plens[0] = 4;
        e.pargv[1] = s->body, e.plens[1] = s->body_len;
        r = raw_command(c, e.argc, e.pargv, e.plens);
    }
    cw_free(e.heap);
    if (r && !cw_reply_error(r)) remember_script(c, s->sha);
    if (cw_reply_error(r)) {
        char explained[512];
        cw_script_explain_error(s, cw_reply_error(r), explained, sizeof explained);
        if (strcmp(explained, cw_reply_error(r)) == 0)
            name_the_key(s, cw_reply_error(r), nkeys, argv, lens, explained, sizeof explained);
        if (strcmp(explained, cw_reply_error(r)) != 0) {
            cw_reply_free(r);
            return cw_error(err, CWORK_EREDIS, "redis %s: %s", c->addr, explained);
        }
    }
    return finish(c, r, out, err);
}

int cw_conn_append_eval(cw_conn *c, const cw_script *s, int nkeys, int nargs, const char **argv,
                        const size_t *lens, cwork_error *err)
{
    /* Within a pipeline a NOSCRIPT reply could only be retried by re-sending the tail
     * of the pipeline, so a script this connection has not loaded yet is sent whole
     * with EVAL, which also loads it for the EVALSHAs that follow. */
    int use_sha = script_loaded(c, s->sha);
    eval_args e;
    int rc = eval_args_build(&e, s, use_sha, nkeys, nargs, argv, lens, err);
    if (rc) return rc;
    rc = cw_conn_append(c, e.argc, e.pargv, e.plens, err);
    cw_free(e.heap);
    if (rc == 0 && !use_sha) remember_script(c, s->sha);
    return rc;
}

int cw_conn_load_script(cw_conn *c, const cw_script *s, cwork_error *err)
{
    if (script_loaded(c, s->sha)) return 0;
    const char *argv[] = {"SCRIPT", "LOAD", s->body};
    size_t lens[] = {6, 4, s->body_len};
    redisReply *r = NULL;
    int rc = cw_conn_command(c, 3, argv, lens, &r, err);
    if (rc) return rc;
    /* The embedded SHA must be the server's, or every EVALSHA would miss. */
    const char *sha;
    size_t len;
    int ok = cw_reply_str(r, &sha, &len, "SCRIPT LOAD", NULL) == 0 && len == 40 &&
             memcmp(sha, s->sha, 40) == 0;
    cw_reply_free(r);
    if (!ok)
        return cw_error(err, CWORK_EPROTO, "redis: SCRIPT LOAD of %s returned another SHA1",
                        s->name ? s->name : "a script");
    remember_script(c, s->sha);
    return 0;
}

void cw_conn_close(cw_conn *c)
{
    if (!c) return;
    cw_net_close(&c->net);
    cw_free(c->scripts);
    cw_free(c);
}
