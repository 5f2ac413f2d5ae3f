/* redis+sentinel:// against real servers started here: one master, two replicas, three
 * sentinels. Every role through the sentinels; sentinels down at start are rotated
 * past; a wrong master name fails at once; and a pool running 20,000 jobs while the
 * master is SIGKILLed resumes by itself: as it is on loopback, and after the
 * replication link was held back for a moment (as a slow one would lag), where
 * acknowledged jobs are lost without min_replicas=1 and none with it. The failover
 * figures are printed for the README. */
#include "redis.h"
#include "redis_impl.h"
#include "redis_sentinel.h"
#include "failover_testutil.h"
#include "repl_link_testutil.h"

#define MASTER_NAME "mymaster"
#define FAILOVER_JOBS 20000
#define AFTER_JOBS 1000 /* enqueued once a manual failover is over */

#define DATA_PW "data-s3cr3t"
#define SENTINEL_PW "sentinel-s3cr3t"

typedef struct topo {
    int auth;    /* data nodes and sentinels each have their own password */
    int relayed; /* the replicas replicate through relay (repl_link_testutil.h) */
    rl_relay relay;
    char dir[64];
    tt_proc data[3]; /* [0] the first master, then two replicas */
    tt_proc sentinel[3];
    char url[256]; /* redis+sentinel://…/mymaster */
} topo;

static int start_data_on(topo *t, int i, int master_port, int port)
{
    char port_s[16], of[64], rdb[32];
    snprintf(port_s, sizeof port_s, "%d", port);
    snprintf(of, sizeof of, "127.0.0.1 %d", master_port);
    snprintf(rdb, sizeof rdb, "dump-%d.rdb", port);
    /* A replica that needs a full sync gets it at once (Redis 7 waits 5 s for more). */
    const char *argv[26] = {"redis-server",
                            "--port",
                            port_s,
                            "--bind",
                            "127.0.0.1",
                            "--save",
                            "",
                            "--appendonly",
                            "no",
                            "--dir",
                            t->dir,
                            "--dbfilename",
                            rdb,
                            "--repl-diskless-sync-delay",
                            "0"};
    int argc = 15;
    if (t->auth) {
        argv[argc++] = "--requirepass", argv[argc++] = DATA_PW;
        argv[argc++] = "--masterauth", argv[argc++] = DATA_PW;
    }
    if (master_port) argv[argc++] = "--replicaof", argv[argc++] = of;
    return tt_spawn(&t->data[i], port, NULL, argv);
}

/* A port that looked free may be taken before the server binds it: try a few. */
static int start_data(topo *t, int i, int master_port)
{
    for (int attempt = 0; attempt < 5; attempt++)
        if (start_data_on(t, i, master_port, tt_free_port()) == 0) return 0;
    return -1;
}

static int start_sentinel(topo *t, int i, int port)
{
    char conf[128];
    snprintf(conf, sizeof conf, "%s/sentinel-%d.conf", t->dir, port);
    FILE *f = fopen(conf, "w");
    if (!f) return -1;
    fprintf(f,
            "port %d\nbind 127.0.0.1\ndir %s\n"
            "sentinel monitor " MASTER_NAME " 127.0.0.1 %d 2\n"
            "sentinel down-after-milliseconds " MASTER_NAME " 1000\n"
            "sentinel failover-timeout " MASTER_NAME " %d\n"
            "sentinel parallel-syncs " MASTER_NAME " 1\n",
            port, t->dir, t->data[0].port,
            /* A sentinel "fixes" a replica that replicates from another address than
             * the master's (the relay) once failover-timeout has passed: not during
             * the test. */
            t->relayed ? 300000 : 10000);
    if (t->auth)
        fprintf(f, "requirepass " SENTINEL_PW "\nsentinel sentinel-pass " SENTINEL_PW "\n"
                   "sentinel auth-pass " MASTER_NAME " " DATA_PW "\n");
    fclose(f);
    const char *argv[] = {"redis-sentinel", conf, NULL};
    return tt_spawn(&t->sentinel[i], port, NULL, argv);
}

static long long int_of(int port, const char *pw, const char *cmd)
{
    redisContext *c = redisConnect("127.0.0.1", port);
    long long v = -1;
    if (c && !c->err && pw) freeReplyObject(redisCommand(c, "AUTH %s", pw));
    if (c && !c->err) {
        redisReply *r = redisCommand(c, cmd);
        if (r && r->type == REDIS_REPLY_INTEGER) v = r->integer;
        if (r && r->type == REDIS_REPLY_ARRAY) v = (long long)r->elements;
        if (r) freeReplyObject(r);
    }
    if (c) redisFree(c);
    return v;
}

/* Master, replicas in sync, sentinels that know the replicas and each other (a
 * failover needs their quorum). Sentinels whose bit is clear in down_mask are not
 * started, but are in the URL (first). */
static int topo_start(topo *t, unsigned down_mask, int auth, int relayed)
{
    memset(t, 0, sizeof *t);
    t->auth = auth;
    t->relayed = relayed;
    if (tt_tmpdir(t->dir, sizeof t->dir, "sentinel") != 0) return -1;
    if (start_data(t, 0, 0) != 0) return -1;
    if (relayed && rl_start(&t->relay, t->data[0].port) != 0) return -1;
    int upstream = relayed ? t->relay.port : t->data[0].port;
    if (start_data(t, 1, upstream) != 0 || start_data(t, 2, upstream) != 0) return -1;
    for (int i = 0; i < 200 && int_of(t->data[0].port, auth ? DATA_PW : NULL, "WAIT 2 100") < 2;
         i++) {
    }
    int ports[3];
    size_t len = (size_t)snprintf(t->url, sizeof t->url, "redis+sentinel://");
    for (int i = 0; i < 3; i++) {
        int started = 0;
        for (int attempt = 0; attempt < 5 && !started; attempt++) {
            ports[i] = tt_free_port();
            started = (down_mask & (1u << i)) || start_sentinel(t, i, ports[i]) == 0;
        }
        if (!started) return -1;
        if (down_mask & (1u << i)) t->sentinel[i].port = ports[i]; /* nothing listens */
        len += (size_t)snprintf(t->url + len, sizeof t->url - len, "%s127.0.0.1:%d", i ? "," : "",
                                ports[i]);
    }
    snprintf(t->url + len, sizeof t->url - len, "/" MASTER_NAME);
    /* Sentinels find replicas (INFO every 10 s, at once at start) and each other (hello
     * messages every 2 s). */
    int up = 3 - __builtin_popcount(down_mask);
    for (int i = 0; i < 3; i++) {
        if (down_mask & (1u << i)) continue;
        int ok = 0;
        for (int k = 0; k < 300 && !ok; k++) {
            const char *pw = auth ? SENTINEL_PW : NULL;
            ok = int_of(ports[i], pw, "SENTINEL REPLICAS " MASTER_NAME) == 2 &&
                 int_of(ports[i], pw, "SENTINEL SENTINELS " MASTER_NAME) == up - 1;
            if (!ok) tl_sleep_ms(100);
        }
        if (!ok) return -1;
    }
    return 0;
}

static void topo_stop(topo *t)
{
    rl_stop(&t->relay);
    for (int i = 0; i < 3; i++) {
        tt_kill(&t->sentinel[i], SIGKILL);
        tt_kill(&t->data[i], SIGKILL);
    }
    tt_rmdir(t->dir);
}

static const char *sentinel_pw_option; /* cwork_redis_options.sentinel_password */

static cwork_redis *pool_for(const char *url, const char *query, int checkout_ms, cwork_error *err)
{
    char u[1024];
    snprintf(u, sizeof u, "%s%s%s", url, query && *query ? "?" : "", query ? query : "");
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.connect_timeout_ms = 1000;
    o.checkout_timeout_ms = checkout_ms;
    o.sentinel_password = sentinel_pw_option;
    return cwork_redis_new(u, &o, err);
}

/* ---------------------------------------------------------------- plain runs */

static void every_role_through_sentinels(void)
{
    topo t;
    if (topo_start(&t, 0, 1, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start master, replicas and sentinels");
        topo_stop(&t);
        return;
    }
    /* Each side its own password: the data nodes' in the URL, the sentinels' as the
     * option (out of the URL). */
    char url[400];
    snprintf(url, sizeof url, "redis+sentinel://:" DATA_PW "@%s", t.url + 17);
    cwork_error err = {0};
    sentinel_pw_option = SENTINEL_PW;
    cwork_redis *r = pool_for(url, NULL, 10000, &err);
    sentinel_pw_option = NULL;
    if (!r) tl_fail(__FILE__, __LINE__, "cwork_redis_new: %s", err.message);
    char ns[64];
    tl_unique_ns("sentinel", ns, sizeof ns);
    if (r) CHECK_INT(tt_every_role(r, ns, 200), 200);
    cwork_redis_free(r);
    /* The library reads no environment: the sentinels want their password. */
    setenv("CWORK_REDIS_SENTINEL_PASSWORD", SENTINEL_PW, 1);
    r = pool_for(url, NULL, 10000, &err);
    CHECK(r && cwork_redis_ping(r, &err) != 0);
    cwork_redis_free(r);
    /* The cwork command, both passwords from the environment (nothing secret in ps). */
    setenv("CWORK_REDIS_PASSWORD", DATA_PW, 1);
    tt_cli_roles(t.url, ns);
    unsetenv("CWORK_REDIS_PASSWORD");
    unsetenv("CWORK_REDIS_SENTINEL_PASSWORD");

    /* A wrong sentinel password is final, and never shown. */
    char wrong[500];
    snprintf(wrong, sizeof wrong, "%s?sentinel_password=wrong-s3cr3t", url);
    r = pool_for(wrong, NULL, 10000, &err);
    long long t0 = tl_now_ms();
    CHECK(r && cwork_redis_ping(r, &err) != 0);
    CHECK(tl_now_ms() - t0 < 5000);
    if (!strstr(err.message, "refused AUTH") || strstr(err.message, "s3cr3t"))
        tl_fail(__FILE__, __LINE__, "message: %s", err.message);
    cwork_redis_free(r);

    /* A wrong master name is final too: no waiting for the checkout timeout. */
    char bad[500];
    snprintf(bad, sizeof bad, "%.*s/nosuchmaster?sentinel_password=" SENTINEL_PW,
             (int)(strrchr(url, '/') - url), url);
    r = pool_for(bad, NULL, 10000, &err);
    t0 = tl_now_ms();
    CHECK(r && cwork_redis_ping(r, &err) != 0);
    CHECK(tl_now_ms() - t0 < 5000);
    if (!strstr(err.message, "monitors no master named \"nosuchmaster\"") ||
        strstr(err.message, "s3cr3t"))
        tl_fail(__FILE__, __LINE__, "message: %s", err.message);
    cwork_redis_free(r);
    topo_stop(&t);
}

/* The first two sentinels of the URL are down: the third answers. */
static void sentinels_down_at_start(void)
{
    topo t;
    if (topo_start(&t, 3u, 0, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start master, replicas and sentinels");
        topo_stop(&t);
        return;
    }
    cwork_error err = {0};
    cwork_redis *r = pool_for(t.url, NULL, 10000, &err);
    CHECK(r && cwork_redis_ping(r, &err) == 0);
    if (err.message[0]) fprintf(stderr, "  %s\n", err.message);
    char ns[64];
    tl_unique_ns("sentinel-down", ns, sizeof ns);
    if (r) CHECK_INT(tt_every_role(r, ns, 50), 50);
    cwork_redis_free(r);

    /* None up at all: an error that says so, after the checkout timeout. */
    char none[128];
    snprintf(none, sizeof none, "redis+sentinel://127.0.0.1:%d,127.0.0.1:%d/" MASTER_NAME,
             t.sentinel[0].port, t.sentinel[1].port);
    r = pool_for(none, NULL, 1000, &err);
    CHECK(r && cwork_redis_ping(r, &err) != 0);
    if (!strstr(err.message, "no sentinel of 2 could name it"))
        tl_fail(__FILE__, __LINE__, "message: %s", err.message);
    cwork_redis_free(r);
    topo_stop(&t);
}

static void switch_master_messages(void)
{
    char host[64];
    int port = 0;
    const char *m = "mymaster 127.0.0.1 6379 127.0.0.2 6380";
    CHECK_INT(cw_sentinel_parse_switch(m, strlen(m), "mymaster", host, sizeof host, &port), 1);
    CHECK_STR(host, "127.0.0.2");
    CHECK_INT(port, 6380);
    CHECK_INT(cw_sentinel_parse_switch(m, strlen(m), "mymaste", host, sizeof host, &port), 0);
    CHECK_INT(cw_sentinel_parse_switch(m, strlen(m), "other", host, sizeof host, &port), 0);
    const char *bad = "mymaster 127.0.0.1 6379 127.0.0.2";
    CHECK_INT(cw_sentinel_parse_switch(bad, strlen(bad), "mymaster", host, sizeof host, &port), 0);
    const char *v6 = "mymaster ::1 6379 ::2 6381";
    CHECK_INT(cw_sentinel_parse_switch(v6, strlen(v6), "mymaster", host, sizeof host, &port), 1);
    CHECK_STR(host, "::2");
    const char *noport[] = {
        "mymaster 127.0.0.1 6379 127.0.0.2 x6380", "mymaster 127.0.0.1 6379 127.0.0.2 70000",
        "mymaster 127.0.0.1 6379 127.0.0.2 6380 extra", "mymaster 127.0.0.1 6379  127.0.0.2 6380"};
    for (size_t i = 0; i < sizeof noport / sizeof *noport; i++)
        CHECK_INT(cw_sentinel_parse_switch(noport[i], strlen(noport[i]), "mymaster", host,
                                           sizeof host, &port),
                  0);
}

/* ---------------------------------------------------------------- failover */

typedef struct fo_ctx {
    topo *t;
    int manual;
    int lag_ms;               /* relayed: how long the replication link is held back */
    long enqueued_while_held; /* acknowledged while it was */
} fo_ctx;

/* SIGKILL the master, or (manual) tell the sentinels to fail over, which leaves the old
 * master running as a replica (READONLY to anyone still writing to it). With lag_ms the
 * replication link is frozen first, and the handlers held (so that what is enqueued
 * meanwhile stays in the queue), then the master killed and the link cut: what the
 * master acknowledged in those lag_ms never reaches the replica that is promoted. */
static void fo_event(void *arg)
{
    fo_ctx *f = arg;
    if (f->lag_ms) {
        atomic_store(&tf_hold, 1);
        atomic_store(&f->t->relay.frozen, 1);
        long before = tf_get(&tf_enqueued);
        tl_sleep_ms(f->lag_ms);
        tt_kill(&f->t->data[0], SIGKILL);
        f->enqueued_while_held = tf_get(&tf_enqueued) - before;
        rl_cut(&f->t->relay);
        atomic_store(&f->t->relay.frozen, 0);
        atomic_store(&tf_hold, 0);
        return;
    }
    if (!f->manual) {
        tt_kill(&f->t->data[0], SIGKILL);
        return;
    }
    redisContext *sc = redisConnect("127.0.0.1", f->t->sentinel[0].port);
    redisReply *x = tl_cmd(sc, "SENTINEL FAILOVER " MASTER_NAME);
    if (x->type == REDIS_REPLY_ERROR) tl_fail(__FILE__, __LINE__, "SENTINEL FAILOVER: %s", x->str);
    freeReplyObject(x);
    redisFree(sc);
}

/* The old master demoted: more jobs then must reach the new one. */
static int fo_demoted(void *arg)
{
    fo_ctx *f = arg;
    for (int i = 0; i < 300; i++) {
        redisContext *oc = redisConnect("127.0.0.1", f->t->data[0].port);
        redisReply *x = oc && !oc->err ? redisCommand(oc, "ROLE") : NULL;
        int demoted = x && x->type == REDIS_REPLY_ARRAY && x->elements &&
                      !strcmp(x->element[0]->str, "slave");
        if (x) freeReplyObject(x);
        if (oc) redisFree(oc);
        if (demoted) return 0;
        tl_sleep_ms(100);
    }
    return -1;
}

static const char *const fo_logs[] = {"redis.sentinel.switch_master",
                                      "redis.sentinel.master_changed", NULL};

enum { LOSS_REPORTED, LOSS_NONE, LOSS_SOME };

/* 20,000 jobs enqueued while a pool runs them; the failover once 5,000 have run. */
static void failover_run(const char *query, int manual, int lag_ms, int loss)
{
    topo t;
    if (topo_start(&t, 0, 0, lag_ms > 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start master, replicas and sentinels");
        topo_stop(&t);
        return;
    }
    char ns[64];
    tl_unique_ns("failover", ns, sizeof ns);
    cwork_error err = {0};
    cwork_redis *er = pool_for(t.url, query, 30000, &err);
    cwork_redis *pr = pool_for(t.url, query, 30000, &err);
    fo_ctx f = {&t, manual, lag_ms, 0};
    tf_plan plan = {er,
                    pr,
                    ns,
                    FAILOVER_JOBS,
                    5000,
                    fo_event,
                    manual ? fo_demoted : NULL,
                    manual ? AFTER_JOBS : 0,
                    &f,
                    fo_logs,
                    loss == LOSS_SOME ? 3000 : 0,
                    query ? 4 : 1};
    tf_stats st;
    if (er && pr && tf_run(&plan, &st) == 0) {
        char what[200];
        snprintf(what, sizeof what, "%s%s%s%s", manual ? "SENTINEL FAILOVER" : "master SIGKILLed",
                 lag_ms ? " after its replication was held back" : "", query ? " with " : "",
                 query ? query : "");
        tf_print(what, &st);
        if (lag_ms)
            fprintf(stderr,
                    "    (%ld jobs were acknowledged while replication was held back %d ms)\n",
                    f.enqueued_while_held, lag_ms);
        CHECK(st.acked >= FAILOVER_JOBS + (manual ? AFTER_JOBS : 0));
        CHECK(st.max_gap_s < 30);    /* it resumed by itself */
        CHECK(st.watched_logs >= 1); /* the watcher or a dial saw the new master */
        if (loss == LOSS_NONE) CHECK_INT(st.lost, 0);
        /* Held handlers took at most one job each of those enqueued meanwhile: the rest
         * stayed in the queue of a master whose replicas never had them. */
        if (loss == LOSS_SOME && f.enqueued_while_held > 20) CHECK(st.lost > 0);
        if (loss == LOSS_SOME && f.enqueued_while_held <= 20)
            tl_fail(__FILE__, __LINE__, "only %ld jobs enqueued while replication was held back",
                    f.enqueued_while_held);
    }
    cwork_redis_free(er);
    cwork_redis_free(pr);
    topo_stop(&t);
}

/* On loopback: the replicas are never more than a moment behind. */
static void failover(void)
{
    failover_run(NULL, 0, 0, LOSS_REPORTED);
}

/* A lagging link: what the master acknowledged meanwhile is lost... */
static void lagging_failover_without_min_replicas(void)
{
    failover_run(NULL, 0, 300, LOSS_SOME);
}

/* ...unless min_replicas made every acknowledgement wait for a replica. */
static void lagging_failover_with_min_replicas(void)
{
    failover_run("min_replicas=1&min_replicas_timeout_ms=2000", 0, 300, LOSS_NONE);
}

/* Losses are reported, not asserted: an enqueue the old master acknowledged after the
 * promotion and before the enqueuer heard of the switch is discarded when the old master
 * resyncs (README). The pools no longer rescue such jobs by fetching from the retired
 * master (cw_redis_drop_retired): that kept pools beating on a master a reaper could no
 * longer see, which ran limited jobs past their limit after a SIGKILLed master. */
static void manual_failover(void)
{
    failover_run(NULL, 1, 0, LOSS_REPORTED);
}

/* A connection kept across uses (the dispatcher's, the heartbeat's) is dropped once a
 * failover retired its master, though that master is still up and still answers: the
 * fault suite saw pools fetch, commit and beat on such a master for 10 s while a reaper
 * on the real one took them for dead (tests/faults/fault_sentinel.c). */
static void held_connection_dropped_when_the_master_moves(void)
{
    topo t;
    if (topo_start(&t, 0, 0, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start master, replicas and sentinels");
        topo_stop(&t);
        return;
    }
    cwork_error err = {0};
    cwork_redis *r = pool_for(t.url, NULL, 10000, &err);
    cw_conn *c = NULL;
    CHECK(r && cw_redis_checkout(r, &c, &err) == 0);
    char old[96];
    snprintf(old, sizeof old, "127.0.0.1:%d", t.data[0].port);
    if (c) CHECK_STR(c->addr, old);
    cw_redis_drop_retired(r, &c);
    CHECK(c != NULL); /* nothing moved: kept */
    unsigned before = r ? cw_redis_epoch(r) : 0;
    redisContext *sc = redisConnect("127.0.0.1", t.sentinel[0].port);
    redisReply *x = tl_cmd(sc, "SENTINEL FAILOVER " MASTER_NAME);
    CHECK(x->type == REDIS_REPLY_STATUS);
    freeReplyObject(x);
    redisFree(sc);
    /* The watcher's +switch-master moves the epoch (a failover takes seconds). */
    for (int i = 0; i < 600 && r && cw_redis_epoch(r) == before; i++)
        tl_sleep_ms(50);
    CHECK(r && cw_redis_epoch(r) != before);
    cw_redis_drop_retired(r, &c);
    CHECK(c == NULL);
    /* The next use dials the new master. */
    CHECK(r && cw_redis_checkout(r, &c, &err) == 0);
    if (c) CHECK(strcmp(c->addr, old) != 0);
    if (r) cw_redis_checkin(r, c);
    cwork_redis_free(r);
    topo_stop(&t);
}

int main(void)
{
    if (!tl_on_path("redis-sentinel") || !tl_on_path("redis-server")) {
        fprintf(stderr, "redis-sentinel is needed (scripts/test.sh installs it)\n");
        return 1;
    }
    RUN(switch_master_messages);
    RUN(every_role_through_sentinels);
    RUN(sentinels_down_at_start);
    RUN(failover);
    RUN(lagging_failover_without_min_replicas);
    RUN(lagging_failover_with_min_replicas);
    RUN(manual_failover);
    RUN(held_connection_dropped_when_the_master_moves);
    return tl_finish();
}
