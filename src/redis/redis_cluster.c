/* Redis Cluster: slots, the slot map, and redirections. See redis_cluster.h. */
#include "redis_cluster.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NO_NODE 0xFFFF
#define MAX_HOPS 5
#define MAX_NODES 1024

typedef struct node {
    char host[256];
    int port;
} node;

struct cw_cluster {
    cw_mutex mu;
    uint16_t master_of[CW_CLUSTER_SLOTS]; /* index into nodes, NO_NODE when unknown */
    node *nodes; /* every node of the last CLUSTER SLOTS, masters and replicas */
    int nnodes;
    int have_map;     /* a CLUSTER SLOTS answer is installed */
    int stale;        /* ask again before the next dial */
    int bound_slot;   /* the namespace's slot, -1 before one binds */
    int learned_slot; /* unbound: the slot of the last MOVED, -1 if none */
    char bound_ns[128];
};

/* ---------------------------------------------------------------- slots */

/* CRC16-CCITT (XMODEM), as Redis Cluster uses it. */
static uint16_t crc16(const char *p, size_t n)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)((unsigned char)p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    return crc;
}

unsigned cw_cluster_key_slot(const char *key, size_t len)
{
    const char *open = memchr(key, '{', len);
    if (open) {
        size_t rest = len - (size_t)(open - key) - 1;
        const char *close = memchr(open + 1, '}', rest);
        if (close && close > open + 1) return crc16(open + 1, (size_t)(close - open - 1)) & 16383;
    }
    return crc16(key, len) & 16383;
}

int cw_cluster_ns_has_tag(const char *ns)
{
    const char *open = strchr(ns, '{');
    const char *close = open ? strchr(open + 1, '}') : NULL;
    return close && close > open + 1;
}

/* ---------------------------------------------------------------- lifetime */

static redisReply *follow(cw_conn *c, redisReply *r, const char *cmd, size_t len);
static void note_error(cw_conn *c, const char *msg);
static const cw_redirect_ops cluster_redirect = {follow, note_error};

int cw_cluster_new(cwork_redis *r, cwork_error *err)
{
    cw_cluster *cl = cw_calloc(1, sizeof *cl);
    if (!cl) return cw_error(err, CWORK_ENOMEM, "out of memory");
    if (cw_mutex_init(&cl->mu) != 0) {
        cw_free(cl);
        return cw_error(err, CWORK_ENOMEM, "cannot create the cluster map's mutex");
    }
    memset(cl->master_of, 0xFF, sizeof cl->master_of);
    cl->bound_slot = cl->learned_slot = -1;
    r->cluster = cl;
    r->redirect = &cluster_redirect;
    return 0;
}

void cw_cluster_free(cwork_redis *r)
{
    cw_cluster *cl = r->cluster;
    if (!cl) return;
    cw_mutex_destroy(&cl->mu);
    cw_free(cl->nodes);
    cw_free(cl);
    r->cluster = NULL;
}

int cw_cluster_bind(cwork_redis *r, const char *ns, cwork_error *err)
{
    if (!cw_cluster_ns_has_tag(ns))
        return cw_error(err, CWORK_EINVAL,
                        "namespace \"%.60s\" has no hash tag: in Redis Cluster all keys of a "
                        "namespace must be in one slot, so name it like {%.60s} or %.60s{1}",
                        ns, ns, ns);
    unsigned slot = cw_cluster_key_slot(ns, strlen(ns));
    cw_cluster *cl = r->cluster;
    cw_mutex_lock(&cl->mu);
    int rc = 0;
    if (cl->bound_slot < 0) {
        cl->bound_slot = (int)slot;
        snprintf(cl->bound_ns, sizeof cl->bound_ns, "%s", ns);
    } else if ((unsigned)cl->bound_slot != slot) {
        rc = cw_error(err, CWORK_EINVAL,
                      "this cwork_redis serves namespace \"%.60s\" (slot %d) of the cluster; "
                      "namespace \"%.60s\" is in slot %u: give it a cwork_redis of its own",
                      cl->bound_ns, cl->bound_slot, ns, slot);
    }
    cw_mutex_unlock(&cl->mu);
    return rc;
}

/* ---------------------------------------------------------------- the map */

static void mark_stale(cwork_redis *r)
{
    cw_mutex_lock(&r->cluster->mu);
    r->cluster->stale = 1;
    cw_mutex_unlock(&r->cluster->mu);
}

static int find_or_add(node **nodes, int *n, const char *host, int port)
{
    for (int i = 0; i < *n; i++)
        if ((*nodes)[i].port == port && strcmp((*nodes)[i].host, host) == 0) return i;
    if (*n >= MAX_NODES) return -1;
    node *grown = cw_realloc(*nodes, (size_t)(*n + 1) * sizeof **nodes);
    if (!grown) return -1;
    *nodes = grown;
    snprintf(grown[*n].host, sizeof grown[*n].host, "%s", host);
    grown[*n].port = port;
    return (*n)++;
}

/* One [host, port, id, …] of CLUSTER SLOTS; an empty host means "the one you asked". */
static int entry_node(const redisReply *e, const char *asked, node **nodes, int *n)
{
    const char *host;
    size_t len;
    int64_t port;
    if (cw_reply_at_str(e, 0, &host, &len, NULL, NULL) != 0 ||
        cw_reply_at_int(e, 1, &port, NULL, NULL) != 0)
        return -1;
    return find_or_add(nodes, n, len ? host : asked, (int)port);
}

/* Installs a CLUSTER SLOTS answer; 0, or -1 when it is not one. */
static int install_map(cwork_redis *r, const redisReply *x, const char *asked)
{
    size_t nranges = 0;
    if (cw_reply_array(x, 0, &nranges, NULL, NULL) != 0) return -1;
    uint16_t *map = cw_malloc(sizeof r->cluster->master_of);
    node *nodes = NULL;
    int n = 0, ok = map != NULL;
    if (map) memset(map, 0xFF, sizeof r->cluster->master_of);
    for (size_t i = 0; ok && i < nranges; i++) {
        /* {from, to, master, replicas…} */
        const redisReply *range = cw_reply_at(x, i);
        int64_t from, to;
        size_t nentries = 0;
        if (cw_reply_array(range, 3, &nentries, NULL, NULL) != 0 ||
            cw_reply_at_int(range, 0, &from, NULL, NULL) != 0 ||
            cw_reply_at_int(range, 1, &to, NULL, NULL) != 0) {
            ok = 0;
            break;
        }
        int master = entry_node(cw_reply_at(range, 2), asked, &nodes, &n);
        for (size_t k = 3; k < nentries; k++) /* replicas: refresh sources */
            entry_node(cw_reply_at(range, k), asked, &nodes, &n);
        if (master < 0 || from < 0 || to >= CW_CLUSTER_SLOTS || from > to) {
            ok = 0;
            break;
        }
        for (long long s = from; s <= to; s++)
            map[s] = (uint16_t)master;
    }
    if (!ok) {
        cw_free(map);
        cw_free(nodes);
        return -1;
    }
    cw_cluster *cl = r->cluster;
    cw_mutex_lock(&cl->mu);
    memcpy(cl->master_of, map, sizeof cl->master_of);
    cw_free(cl->nodes);
    cl->nodes = nodes;
    cl->nnodes = n;
    cl->have_map = 1;
    cl->stale = 0;
    cw_mutex_unlock(&cl->mu);
    cw_free(map);
    return 0;
}

/* Where to ask for the map: every node seen so far, then the seeds of the URL. */
static int refresh_sources(cwork_redis *r, node **out)
{
    cw_cluster *cl = r->cluster;
    node *list = NULL;
    int n = 0;
    cw_mutex_lock(&cl->mu);
    for (int i = 0; i < cl->nnodes; i++)
        find_or_add(&list, &n, cl->nodes[i].host, cl->nodes[i].port);
    cw_mutex_unlock(&cl->mu);
    for (int i = 0; i < r->addr.nnodes; i++)
        find_or_add(&list, &n, r->addr.nodes[i].host, r->addr.nodes[i].port);
    *out = list;
    return n;
}

static int refresh_map(cwork_redis *r, int *transient, cwork_error *err)
{
    node *sources = NULL;
    int n = refresh_sources(r, &sources);
    cwork_error last = {0};
    int refusals = 0;
    for (int i = 0; i < n; i++) {
        cw_dial_auth auth = {r->addr.user, r->addr.password, 0};
        cw_conn *c;
        int t;
        if (cw_dial_node(r, sources[i].host, sources[i].port, NULL, &auth, &c, &t, &last) != 0) {
            refusals += !t;
            continue;
        }
        const char *argv[] = {"CLUSTER", "SLOTS"};
        redisReply *x = NULL;
        int rc = cw_dial_setup(r, c, 2, argv, "CLUSTER SLOTS", &x, &t, &last);
        if (rc == 0 && install_map(r, x, sources[i].host) != 0)
            rc = cw_error(&last, CWORK_EPROTO, "redis %s: unexpected answer to CLUSTER SLOTS",
                          c->addr);
        refusals += rc != 0 && !t;
        cw_reply_free(x);
        cw_conn_close(c);
        if (rc == 0) {
            cw_free(sources);
            return 0;
        }
    }
    cw_free(sources);
    *transient = refusals < n; /* every node refusing (a password, an ACL) is final */
    return cw_error(err, last.code ? last.code : CWORK_EREDIS,
                    "cluster: no node answered CLUSTER SLOTS (%d tried); last: %s", n,
                    last.message);
}

int cw_cluster_dial(cwork_redis *r, int probe, cw_conn **out, int *transient, cwork_error *err)
{
    cw_cluster *cl = r->cluster;
    *out = NULL;
    *transient = 1;
    cw_mutex_lock(&cl->mu);
    int refresh = cl->stale || !cl->have_map;
    cw_mutex_unlock(&cl->mu);
    int rc = refresh ? refresh_map(r, transient, err) : 0;
    if (rc) return rc;
    cw_mutex_lock(&cl->mu);
    int slot = cl->bound_slot >= 0 ? cl->bound_slot : cl->learned_slot >= 0 ? cl->learned_slot : 0;
    node target = {{0}, 0};
    if (cl->master_of[slot] != NO_NODE) target = cl->nodes[cl->master_of[slot]];
    cw_mutex_unlock(&cl->mu);
    if (!target.port) {
        mark_stale(r);
        return cw_error(err, CWORK_EREDIS,
                        "cluster: no master serves slot %d (a failover in progress?)", slot);
    }
    cw_dial_auth auth = {r->addr.user, r->addr.password, 0};
    rc = cw_dial_node(r, target.host, target.port, NULL, &auth, out, transient, err);
    if (rc == 0 && probe) {
        const char *ping[] = {"PING"};
        rc = cw_dial_setup(r, *out, 1, ping, "PING", NULL, transient, err);
        if (rc) {
            cw_conn_close(*out);
            *out = NULL;
        }
    }
    if (rc) mark_stale(r); /* the master may have failed over */
    return rc;
}

/* ---------------------------------------------------------------- redirections */

typedef enum { R_NONE, R_MOVED, R_ASK, R_TRYAGAIN, R_DOWN } redirect_kind;

typedef struct redirect {
    redirect_kind kind;
    int slot;
    char host[256];
    int port;
} redirect;

/* "MOVED 3999 127.0.0.1:6381", "ASK 3999 [::1]:6381", "TRYAGAIN …", "CLUSTERDOWN …". */
static redirect_kind parse_redirect(const char *msg, redirect *rd)
{
    rd->kind = R_NONE;
    if (!strncmp(msg, "TRYAGAIN", 8)) return rd->kind = R_TRYAGAIN;
    if (!strncmp(msg, "CLUSTERDOWN", 11)) return rd->kind = R_DOWN;
    redirect_kind k = !strncmp(msg, "MOVED ", 6) ? R_MOVED
                      : !strncmp(msg, "ASK ", 4) ? R_ASK
                                                 : R_NONE;
    if (k == R_NONE) return R_NONE;
    const char *p = strchr(msg, ' ') + 1;
    char *end;
    long slot = strtol(p, &end, 10);
    if (end == p || *end != ' ' || slot < 0 || slot >= CW_CLUSTER_SLOTS) return R_NONE;
    const char *addr = end + 1, *colon = strrchr(addr, ':');
    if (!colon || colon == addr) return R_NONE;
    size_t hlen = (size_t)(colon - addr);
    if (addr[0] == '[' && colon[-1] == ']') addr++, hlen -= 2;
    if (hlen >= sizeof rd->host) return R_NONE;
    memcpy(rd->host, addr, hlen);
    rd->host[hlen] = '\0';
    char *digits_end = NULL;
    long port = strtol(colon + 1, &digits_end, 10);
    if (digits_end == colon + 1 || port <= 0 || port > 65535) return R_NONE;
    rd->port = (int)port;
    rd->slot = (int)slot;
    return rd->kind = k;
}

/* MOVED: the slot lives at host:port now. An unbound pool learns it as its slot. */
static void learn_moved(cwork_redis *r, const redirect *rd)
{
    cw_cluster *cl = r->cluster;
    cw_mutex_lock(&cl->mu);
    int i = find_or_add(&cl->nodes, &cl->nnodes, rd->host, rd->port);
    if (i >= 0)
        cl->master_of[rd->slot] = (uint16_t)i;
    else
        cl->stale = 1;
    if (cl->bound_slot < 0) cl->learned_slot = rd->slot;
    cw_mutex_unlock(&cl->mu);
}

/* Moves c to host:port: a fresh connection's transport replaces c's. */
static int move_conn(cw_conn *c, const redirect *rd)
{
    cwork_redis *r = c->pool;
    cw_dial_auth auth = {r->addr.user, r->addr.password, 0};
    cw_conn *fresh;
    int t;
    cwork_error e;
    if (cw_dial_node(r, rd->host, rd->port, NULL, &auth, &fresh, &t, &e) != 0) {
        mark_stale(r);
        c->broken = 1;
        cw_net_fail(&c->net, CW_NET_EIO, "following MOVED: %.120s", e.message);
        return -1;
    }
    cw_net_close(&c->net);
    cw_net_move(&c->net, &fresh->net);
    memcpy(c->addr_buf, fresh->addr_buf, sizeof c->addr_buf);
    c->addr = c->addr_buf;
    c->nscripts = 0; /* another server, another script cache */
    cw_conn_close(fresh);
    return 0;
}

static redisReply *resend(cw_conn *c, const char *cmd, size_t len)
{
    void *x = NULL;
    if (cw_net_append_raw(&c->net, cmd, len) != 0 || cw_net_read_reply(&c->net, &x) != 0) {
        c->broken = 1;
        return NULL;
    }
    return x;
}

/* ASK: the command once to the node importing the slot, preceded by ASKING. NULL when
 * that node could not be asked (the original error stands). */
static redisReply *ask(cw_conn *c, const redirect *rd, const char *cmd, size_t len)
{
    cwork_redis *r = c->pool;
    cw_dial_auth auth = {r->addr.user, r->addr.password, 0};
    cw_conn *tmp;
    int t;
    cwork_error e;
    if (cw_dial_node(r, rd->host, rd->port, NULL, &auth, &tmp, &t, &e) != 0) return NULL;
    void *asking = NULL, *x = NULL;
    const char *argv[] = {"ASKING"};
    int ok = cw_net_append_argv(&tmp->net, 1, argv, NULL) == 0 &&
             cw_net_append_raw(&tmp->net, cmd, len) == 0 &&
             cw_net_read_reply(&tmp->net, &asking) == 0 && cw_net_read_reply(&tmp->net, &x) == 0;
    if (asking) cw_reply_free(asking);
    cw_conn_close(tmp);
    if (!ok && x) cw_reply_free(x);
    return ok ? x : NULL;
}

static redisReply *follow(cw_conn *c, redisReply *r, const char *cmd, size_t len)
{
    for (int hop = 0; cw_reply_error(r) && hop < MAX_HOPS; hop++) {
        redirect rd;
        switch (parse_redirect(cw_reply_error(r), &rd)) {
        case R_MOVED:
            learn_moved(c->pool, &rd);
            if (move_conn(c, &rd) != 0) {
                cw_reply_free(r);
                return NULL;
            }
            cw_reply_free(r);
            r = resend(c, cmd, len);
            break;
        case R_ASK: {
            redisReply *x = ask(c, &rd, cmd, len);
            if (!x) return r;
            cw_reply_free(r);
            r = x;
            break;
        }
        case R_TRYAGAIN: {
            /* Keys of one call split between two nodes while the slot migrates. */
            struct timespec ts = {0, (hop + 1) * 25 * 1000000L};
            nanosleep(&ts, NULL);
            cw_reply_free(r);
            r = resend(c, cmd, len);
            break;
        }
        case R_DOWN:
            mark_stale(c->pool);
            c->broken = 1;
            return r;
        case R_NONE:
            return r;
        }
    }
    return r;
}

static void note_error(cw_conn *c, const char *msg)
{
    redirect rd;
    redirect_kind k = parse_redirect(msg, &rd);
    if (k == R_NONE) return;
    if (k == R_MOVED) learn_moved(c->pool, &rd);
    if (k == R_DOWN) mark_stale(c->pool);
    c->broken = 1;
    c->redirected = 1;
}
