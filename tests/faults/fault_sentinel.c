/* A Sentinel failover at load (issue 20; README "Faults and bad input"): a master, two
 * replicas and three sentinels (quorum 2, down-after-milliseconds 1000) started here on
 * 127.0.0.1; three `cwork work` pools and the fault suite's generator connected only
 * through redis+sentinel://…/mymaster?min_replicas=1 (each acknowledged enqueue and
 * each commit waited for a replica: the setting under which a failover loses nothing);
 * the master SIGKILLed while jobs flow. The second replica is what lets min_replicas=1
 * go on after the first was promoted. Judged by the history checker (fault_ha.c);
 * prints the pause. Skipped (77) where redis-sentinel is missing. */
#include "fault_ha.h"
#include "transport_testutil.h"

#define MASTER "mymaster"
#define DOWN_AFTER_MS 1000

typedef struct sentinel_topo {
    char dir[64];
    tt_proc data[3]; /* [0] the first master, then two replicas */
    tt_proc sentinel[3];
    char url[512];
} sentinel_topo;

static int start_data(sentinel_topo *t, int i, int master_port)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        int port = tt_free_port();
        char port_s[16], of[64], rdb[32];
        snprintf(port_s, sizeof port_s, "%d", port);
        snprintf(of, sizeof of, "127.0.0.1 %d", master_port);
        snprintf(rdb, sizeof rdb, "dump-%d.rdb", port);
        const char *argv[20] = {"redis-server",
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
                                "0",
                                "--maxmemory-policy",
                                "noeviction"};
        if (master_port) argv[17] = "--replicaof", argv[18] = of;
        if (tt_spawn(&t->data[i], port, NULL, argv) == 0) return 0;
    }
    return -1;
}

static int start_sentinel(sentinel_topo *t, int i)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        int port = tt_free_port();
        char conf[128];
        snprintf(conf, sizeof conf, "%s/sentinel-%d.conf", t->dir, port);
        FILE *f = fopen(conf, "w");
        if (!f) return -1;
        fprintf(f,
                "port %d\nbind 127.0.0.1\ndir %s\n"
                "sentinel monitor " MASTER " 127.0.0.1 %d 2\n"
                "sentinel down-after-milliseconds " MASTER " %d\n"
                "sentinel failover-timeout " MASTER " 10000\n"
                "sentinel parallel-syncs " MASTER " 2\n",
                port, t->dir, t->data[0].port, DOWN_AFTER_MS);
        fclose(f);
        const char *argv[] = {"redis-sentinel", conf, NULL};
        if (tt_spawn(&t->sentinel[i], port, NULL, argv) == 0) return 0;
    }
    return -1;
}

static redisReply *node_cmd(int port, const char *cmd)
{
    struct timeval tv = {1, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    redisReply *r = NULL;
    if (c && !c->err) {
        redisSetTimeout(c, tv);
        r = redisCommand(c, cmd);
    }
    if (c) redisFree(c);
    return r;
}

static long long node_count(int port, const char *cmd)
{
    redisReply *r = node_cmd(port, cmd);
    long long v = !r                               ? -1
                  : r->type == REDIS_REPLY_INTEGER ? r->integer
                  : r->type == REDIS_REPLY_ARRAY   ? (long long)r->elements
                                                   : -1;
    if (r) freeReplyObject(r);
    return v;
}

static int topo_start(sentinel_topo *t)
{
    if (tt_tmpdir(t->dir, sizeof t->dir, "fault-sentinel") != 0) return -1;
    if (start_data(t, 0, 0) != 0 || start_data(t, 1, t->data[0].port) != 0 ||
        start_data(t, 2, t->data[0].port) != 0)
        return -1;
    int synced = 0;
    for (int i = 0; i < 300 && !synced; i++)
        if (!(synced = node_count(t->data[0].port, "WAIT 2 100") == 2)) tl_sleep_ms(50);
    if (!synced) return -1;
    size_t len = (size_t)snprintf(t->url, sizeof t->url, "redis+sentinel://");
    for (int i = 0; i < 3; i++) {
        if (start_sentinel(t, i) != 0) return -1;
        len += (size_t)snprintf(t->url + len, sizeof t->url - len, "%s127.0.0.1:%d", i ? "," : "",
                                t->sentinel[i].port);
    }
    snprintf(t->url + len, sizeof t->url - len,
             "/" MASTER "?min_replicas=1&min_replicas_timeout_ms=2000");
    /* A failover needs sentinels that know the replicas (INFO, at once at start) and
     * each other (hello messages every 2 s). */
    for (int i = 0; i < 3; i++) {
        int ok = 0;
        for (int k = 0; k < 300 && !ok; k++)
            if (!(ok = node_count(t->sentinel[i].port, "SENTINEL REPLICAS " MASTER) == 2 &&
                       node_count(t->sentinel[i].port, "SENTINEL SENTINELS " MASTER) == 2))
                tl_sleep_ms(100);
        if (!ok) return -1;
    }
    return 0;
}

static void topo_stop(sentinel_topo *t)
{
    for (int i = 0; i < 3; i++) {
        tt_kill(&t->sentinel[i], SIGKILL);
        tt_kill(&t->data[i], SIGKILL);
    }
    tt_rmdir(t->dir);
}

/* The master's port as the first sentinel that answers names it; 0 if none does. */
static int master_port(sentinel_topo *t)
{
    for (int i = 0; i < 3; i++) {
        redisReply *r = node_cmd(t->sentinel[i].port, "SENTINEL GET-MASTER-ADDR-BY-NAME " MASTER);
        int port = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
                           r->element[1]->type == REDIS_REPLY_STRING
                       ? atoi(r->element[1]->str)
                       : 0;
        if (r) freeReplyObject(r);
        if (port) return port;
    }
    return 0;
}

static int ctl_port(world *w)
{
    return master_port(w->topo);
}

static int killed_port;

static int kill_master(world *w)
{
    sentinel_topo *t = w->topo;
    int port = master_port(t);
    for (int i = 0; i < 3; i++)
        if (t->data[i].port == port) tt_kill(&t->data[i], SIGKILL);
    killed_port = port;
    return port;
}

/* The sentinels name another node, and it says it is a master. */
static int promoted(world *w)
{
    int port = master_port(w->topo);
    if (!port || port == killed_port) return 0;
    redisReply *r = node_cmd(port, "ROLE");
    int master = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
                 r->element[0]->type == REDIS_REPLY_STRING && !strcmp(r->element[0]->str, "master");
    if (r) freeReplyObject(r);
    return master;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!tl_on_path("redis-sentinel") || !tl_on_path("redis-server")) {
        printf("fault sentinel: SKIPPED: redis-sentinel (and redis-server) are needed on the "
               "PATH\n");
        return HA_SKIP;
    }
    static sentinel_topo topo;
    static world w;
    if (fw_init_external(&w) != 0) return 1;
    if (topo_start(&topo) != 0) {
        printf("fault sentinel: cannot start a master, two replicas and three sentinels in %s\n",
               topo.dir);
        topo_stop(&topo);
        fw_destroy(&w, 0);
        return 1;
    }
    w.url = topo.url;
    w.topo = &topo;
    w.ctl_port = ctl_port;
    printf("fault sentinel: %s, namespace %s, files in %s\n", topo.url, w.ns, w.dir);
    static const ha_topology sentinel = {"Sentinel", DOWN_AFTER_MS, kill_master, promoted};
    int failures = ha_run(&w, &sentinel);
    fw_destroy(&w, failures > 0);
    topo_stop(&topo);
    if (failures) printf("%d check(s) failed; the pools' output is kept in %s\n", failures, w.dir);
    return failures ? 1 : 0;
}
