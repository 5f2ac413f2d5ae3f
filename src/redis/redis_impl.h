/* The connection pool's insides, shared by its files: redis.c (creation, checkout,
 * checkin), redis_dial.c (opening one prepared connection), and, for the URL forms that
 * name more than one server, redis_sentinel.c and redis_cluster.c. */
#ifndef CWORK_REDIS_IMPL_H
#define CWORK_REDIS_IMPL_H

#include "redis.h"
#include "mutex.h"
#include "redis_tls.h"

#include <pthread.h>

typedef struct cw_sentinel cw_sentinel;
typedef struct cw_cluster cw_cluster;

/* What a connection does with replies that send it elsewhere (MOVED, ASK…): set by the
 * URL form that has such replies (redis_cluster.c), called by redis_conn.c, which so
 * needs to know nothing of clusters. */
typedef struct cw_redirect_ops {
    /* After a reply to the formatted command cmd on c: the final reply (r consumed),
     * or NULL with c broken when the connection failed on the way. */
    redisReply *(*follow)(cw_conn *c, redisReply *r, const char *cmd, size_t len);
    /* An error reply met in a pipeline, which is not retried. */
    void (*note_error)(cw_conn *c, const char *msg);
} cw_redirect_ops;

struct cwork_redis {
    cw_redis_addr addr;
    char *url_shown; /* the URL with the password redacted */
    char *addr_text; /* "host:port", "[v6]:port", "unix:/path", "sentinel master NAME" or
                        "cluster", for messages about the pool as a whole */
    int connect_timeout_ms, command_timeout_ms; /* command: 0 = none; both at most
                                                   INT_MAX ms (24 days: as good as none) */
    int max_connections;
    int64_t checkout_timeout_ms;
    cw_tls_config tls;               /* tls.ctx NULL: plain connections */
    cw_sentinel *sentinel;           /* redis+sentinel: the sentinels and the master they name */
    cw_cluster *cluster;             /* redis+cluster: the slot map */
    const cw_redirect_ops *redirect; /* NULL: replies never redirect */
    /* What it was made from, for cw_redis_clone (a sharded namespace needs one pool per
     * shard: in a cluster each serves its own slot). Secrets included: cleared at free. */
    char *url_given;
    cwork_redis_options opts_given; /* passwords: owned copies or NULL */

    cw_mutex mu;
    pthread_cond_t cv;    /* broadcast whenever an idle connection, a free slot or the
                             result of a dial appears */
    cw_conn *idle;        /* LIFO: the warmest connection is reused first */
    int live;             /* connections that exist or are being dialled */
    int failing;          /* the last dial could not reach Redis; no success since */
    int probing;          /* while failing, a dial is in flight */
    int backoff_ms;       /* the current backoff step while failing */
    int64_t next_dial_ms; /* while failing: no dial before this (monotonic ms) */
    unsigned epoch;       /* connections of an older epoch are closed, not reused */
    cwork_error last_error;
    int64_t warned_ms; /* cw_redis_warn_due: the last warning (monotonic ms) */
};

/* Who to be on a node: the data nodes' credentials and database, or the sentinels'. */
typedef struct cw_dial_auth {
    const char *user;
    const char *password;
    int db;
} cw_dial_auth;

/* Opens one connection to host:port (or unix_path), with the pool's timeouts and TLS,
 * then AUTH and SELECT as auth says. *transient is 1 when the node could not be reached
 * (worth re-dialling), 0 when it answered with a refusal (wrong password, bad db, a
 * certificate that will not verify). Messages name the node, never a password. */
int cw_dial_node(cwork_redis *r, const char *host, int port, const char *unix_path,
                 const cw_dial_auth *auth, cw_conn **out, int *transient, cwork_error *err);
/* Runs one setup command (AUTH, SELECT, PING, ROLE…) on a fresh connection: 0, or an
 * error with *transient set as for cw_dial_node. The reply goes to *reply when wanted. */
int cw_dial_setup(cwork_redis *r, cw_conn *c, int argc, const char **argv, const char *what,
                  redisReply **reply, int *transient, cwork_error *err);

/* The current epoch; cw_redis_next_epoch retires every connection dialled before (the
 * master moved): idle ones are closed at checkout, busy ones at checkin. */
unsigned cw_redis_epoch(cwork_redis *r);
void cw_redis_next_epoch(cwork_redis *r);

/* 1 at most once a second per pool (and the first time): for warnings that every
 * round trip could repeat, such as min_replicas' shortfalls. r may be NULL (then 1). */
int cw_redis_warn_due(cwork_redis *r);

/* Copies msg into out with every occurrence of each secret replaced by xxxxx. */
void cw_scrub(char *out, size_t size, const char *msg, const char *secret1, const char *secret2);

#endif
