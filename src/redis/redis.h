/* Redis connections: URL parsing, a thread-safe connection pool with re-dialling and
 * capped backoff, EVALSHA with NOSCRIPT fallback, pipelining. The socket is cwork's own
 * (redis_net.h); hiredis formats commands and parses replies.
 *
 * Every Redis round trip of the library goes through a cw_conn checked out of a
 * cwork_redis pool. A connection that saw an I/O or protocol error is marked broken and
 * is closed when checked back in; the next checkout dials a fresh one. */
#ifndef CWORK_REDIS_H
#define CWORK_REDIS_H

#include "util.h"

#include "redis_net.h"
#include "reply.h" /* the readers of the replies these calls return */

#include <hiredis/hiredis.h>

/* What a URL names: one server, or the sentinels of a replicated master, or the seed
 * nodes of a cluster. */
typedef enum cw_redis_kind {
    CW_REDIS_DIRECT = 0, /* redis://, rediss://, unix://, host:port */
    CW_REDIS_SENTINEL,   /* redis+sentinel://, rediss+sentinel:// */
    CW_REDIS_CLUSTER     /* redis+cluster://, rediss+cluster:// */
} cw_redis_kind;

typedef struct cw_redis_node {
    char *host;
    int port;
} cw_redis_node;

#define CW_MIN_REPLICAS_DEFAULT_TIMEOUT_MS 1000

/* Where and how to connect, parsed from a URL. Strings are owned (cw_free). */
typedef struct cw_redis_addr {
    cw_redis_kind kind;
    char *host; /* DIRECT over TCP; NULL otherwise */
    int port;
    char *unix_path;      /* DIRECT over a unix socket, or NULL */
    cw_redis_node *nodes; /* SENTINEL: the sentinels; CLUSTER: the seed nodes */
    int nnodes;
    char *master_name; /* SENTINEL: the name the sentinels monitor */
    int db;
    char *user;          /* ACL user, or NULL */
    char *password;      /* or NULL */
    char *sentinel_user; /* SENTINEL: the sentinels' own ACL user and password */
    char *sentinel_password;
    int tls;        /* rediss… */
    char *tls_ca;   /* ca=: CA file (else the system's store) */
    char *tls_cert; /* cert=, key=: a client certificate and its key */
    char *tls_key;
    char *tls_sni;               /* sni=: the name sent and verified instead of the host */
    int tls_verify;              /* verify=0 turns verification off; default 1 */
    int min_replicas;            /* min_replicas=N: enqueues and commits WAIT for N replicas */
    int min_replicas_timeout_ms; /* min_replicas_timeout_ms=, default 1000 */
    int shards;                  /* shards=S: the shard count every enqueuer, pool and client
                                    made on the pool declares (PROTOCOL §27.1); 0 = none */
} cw_redis_addr;

#define CW_REDIS_MAX_SHARDS 1024 /* = CW_SHARDING_MAX (src/sharding sits above redis) */

/* Parses the URL forms of cwork_redis_new (see cwork.h), with the query parameters
 * ca, cert, key, sni, verify (rediss… only), sentinel_user, sentinel_password
 * (sentinel only), min_replicas, min_replicas_timeout_ms, shards, and db (unix only). redis://
 * and unix: ignore unknown parameters, as Go does; the other schemes refuse them.
 * Messages never contain a password. */
int cw_redis_addr_parse(const char *url, cw_redis_addr *out, cwork_error *err);
void cw_redis_addr_clear(cw_redis_addr *a);

/* One connection, owned by the pool while checked in. */
typedef struct cw_conn {
    cw_net net;
    int broken;  /* set on I/O or protocol error or a READONLY reply: closed at checkin */
    int pending; /* replies appended but not yet read */
    struct cw_conn *next_idle;
    const char *addr;    /* "host:port" (or unix:path) of the server, for messages */
    char addr_buf[96];   /* where addr usually points */
    char (*scripts)[41]; /* SHAs this connection has loaded (SCRIPT LOAD or EVAL) */
    int nscripts, scripts_cap;
    int min_replicas;            /* cw_conn_wait_replicas: WAIT for this many replicas… */
    int min_replicas_timeout_ms; /* …this long */
    unsigned epoch;              /* the pool's epoch when dialled (see redis_impl.h) */
    cwork_redis *pool;           /* the pool it was dialled for (cluster redirections) */
    int redirected;              /* a cluster redirection reached the caller (and c is broken):
                                    the command was refused before it ran, worth one more try on
                                    a fresh connection */
} cw_conn;

/* Waits up to the checkout timeout for a connection, dialling (AUTH, SELECT,
 * keepalive, timeouts, close-on-exec) when none is idle; while Redis is unreachable it
 * re-dials with capped backoff until the timeout. CWORK_ETIMEOUT or CWORK_EREDIS. */
int cw_redis_checkout(cwork_redis *r, cw_conn **out, cwork_error *err);
/* Returns c to the pool (closing it if broken or if replies are still pending). */
void cw_redis_checkin(cwork_redis *r, cw_conn *c);
/* For a connection kept across uses (the dispatcher's, the heartbeat's): when *cp was
 * dialled before the master moved (Sentinel named another one), closes it and sets *cp
 * to NULL, so that the next use checks out a connection to the new master. A retired
 * master that is still up (a second failover, a manual one, a partition) would
 * otherwise take this pool's fetches, commits and beats until it is demoted, while
 * the real master's reapers take the pool for dead. No cost without Sentinel. */
void cw_redis_drop_retired(cwork_redis *r, cw_conn **cp);

/* One command, argv with explicit lengths (lens NULL: strlen). Returns 0 with the reply
 * in *out (free with freeReplyObject; out NULL: the reply is freed here), or the error
 * code with *out NULL: the code is returned whether err is NULL or not, and err (when
 * not NULL) gets the message. I/O errors mark c broken (CWORK_EREDIS; CWORK_EPROTO for a
 * protocol error, CWORK_ENOMEM); an error reply becomes CWORK_EREDIS with the server's
 * message (a READONLY one also marks c broken). CWORK_EINVAL while pipelined replies are
 * unread. */
int cw_conn_command(cw_conn *c, int argc, const char **argv, const size_t *lens, redisReply **out,
                    cwork_error *err);
/* printf-style convenience over redisvFormatCommand, same rules. */
int cw_conn_commandf(cw_conn *c, redisReply **out, cwork_error *err, const char *fmt, ...);

/* Pipelining: append any number of commands, then read the replies in order. An
 * error *reply* is returned as a reply (type REDIS_REPLY_ERROR), so that callers can
 * tell which command failed; only I/O errors return non-zero. */
int cw_conn_append(cw_conn *c, int argc, const char **argv, const size_t *lens, cwork_error *err);
int cw_conn_read(cw_conn *c, redisReply **out, cwork_error *err);

/* With min_replicas=N in the URL: WAIT until N replicas have acknowledged every write
 * made on c so far (at most min_replicas_timeout_ms). 0 at once without it, 0 when
 * enough replicas acknowledged, else CWORK_EREDIS ("written, but only K of N replicas
 * acknowledged it"): the write stands on the master but could be lost by a failover.
 * Call it after a write whose caller must know that it survives one: enqueues
 * (enqueue.c, batch.c). */
int cw_conn_wait_replicas(cw_conn *c, cwork_error *err);
/* The same in a pipeline, for the pool's commits (dispatcher.c): append WAIT behind the
 * write, and read its reply after the write's. Both do nothing without min_replicas.
 * The read returns non-zero only for an I/O or protocol error (c broken: the write may
 * have to be sent again); a shortfall is logged as a warning (redis.min_replicas, at
 * most once a second per pool) and returns 0, since the write stands on the master and
 * neither sending it again nor stopping would replicate it sooner. */
int cw_conn_append_wait_replicas(cw_conn *c, cwork_error *err);
int cw_conn_read_wait_replicas(cw_conn *c, cwork_error *err);

/* A Lua script embedded from src/scripts/NAME.lua at build time (see scripts.h). */
typedef struct cw_script {
    const char *name;
    const char *body;
    size_t body_len;
    const char *sha; /* 40 lower-case hex characters */
} cw_script;

/* EVALSHA sha nkeys keys… args…, falling back to EVAL on NOSCRIPT. argv holds the keys
 * followed by the args (nkeys + nargs entries). Return, reply and error rules of
 * cw_conn_command. */
int cw_conn_eval(cw_conn *c, const cw_script *s, int nkeys, int nargs, const char **argv,
                 const size_t *lens, redisReply **out, cwork_error *err);
/* The same as a pipelined append: EVALSHA when this connection has loaded the script
 * (cw_conn_load_script, or an earlier EVAL), else EVAL with the body, which loads it;
 * so NOSCRIPT cannot happen within the pipeline unless someone runs SCRIPT FLUSH. */
int cw_conn_append_eval(cw_conn *c, const cw_script *s, int nkeys, int nargs, const char **argv,
                        const size_t *lens, cwork_error *err);
/* An error reply of script s in words: an ACL refusal inside a script (which Redis 7.0
 * reports only as "@user_script:LINE") becomes "the Redis user may not run 'zadd' (ACL
 * +zadd), which the NAME script calls"; any other message is copied. cw_conn_eval does
 * this itself; pipelined callers (cw_conn_append_eval) can use it on their replies. */
void cw_script_explain_error(const cw_script *s, const char *msg, char *out, size_t size);

/* SCRIPT LOAD unless this connection has already loaded it. */
int cw_conn_load_script(cw_conn *c, const cw_script *s, cwork_error *err);

/* The connection's socket, for poll(POLLIN) on a subscribed connection. Replies that
 * were already read are not visible to poll: drain cw_conn_read_buffered first. */
int cw_conn_fd(const cw_conn *c);
/* A reply already read from the socket, without blocking or any I/O: *out NULL when
 * there is none. For subscribed connections (messages nobody asked for): it does not
 * count against c->pending. 0, or non-zero (c marked broken) on a protocol error. */
int cw_conn_read_buffered(cw_conn *c, redisReply **out, cwork_error *err);

/* Closes the socket and frees c (pool-internal: use cw_redis_checkin). NULL is ignored. */
void cw_conn_close(cw_conn *c);

/* The pool's URL with any password replaced by "xxxxx" (borrowed, valid until
 * cwork_redis_free), e.g. for a "redis = …" line or log fields. */
const char *cw_redis_url_redacted(const cwork_redis *r);

/* Binds the pool to namespace ns before an enqueuer, pool, client or web server uses
 * it. Only Redis Cluster cares: there the namespace must carry a hash tag ({myapp} or
 * myapp{1}) so that all its keys share a slot, and one cwork_redis serves the slot of
 * one namespace (others with the same tag are fine). 0, or CWORK_EINVAL saying what is
 * wrong. */
int cw_redis_use_namespace(cwork_redis *r, const char *ns, cwork_error *err);

/* A new pool to the same place with the same options (URL, passwords, TLS files loaded
 * again), with connections and, in a cluster, a namespace of its own: a sharded
 * namespace keeps one per shard. NULL on error (err filled). Thread-safe. */
cwork_redis *cw_redis_clone(const cwork_redis *r, cwork_error *err);
/* The shard count the URL's shards= declares, 0 when it has none. Thread-safe. */
unsigned cw_redis_declared_shards(const cwork_redis *r);

/* Convenience: check out, run one command, check in. The rules of cw_conn_command (and
 * cw_redis_checkout's CWORK_ETIMEOUT). */
int cw_redis_command(cwork_redis *r, int argc, const char **argv, const size_t *lens,
                     redisReply **out, cwork_error *err);

#endif
