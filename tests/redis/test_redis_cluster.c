/* redis+cluster:// against a real cluster started here (three masters, three replicas,
 * built with redis-cli --cluster create): hash slots and tags, every role in a tagged
 * namespace, untagged namespaces refused, MOVED followed while the namespace's slot is
 * resharded under a running pool, and the namespace's master SIGKILLed mid-run. */
#include "redis.h"
#include "redis_cluster.h"
#include "cwork_web.h"
#include "failover_testutil.h"

#define NODES 6
#define FAILOVER_JOBS 20000

typedef struct cluster {
    char dir[64];
    tt_proc node[NODES + 1]; /* the last: a second replica added for min_replicas */
    char url[256];
} cluster;

static int start_node(cluster *c, int i)
{
    /* the second replica of failover_with_min_replicas must stay where it was put, not
       move to a master left without one */
    static const char *const extra[] = {"--cluster-node-timeout", "2000",
                                        "--cluster-allow-replica-migration", "no", NULL};
    return tt_spawn_cluster_node(&c->node[i], c->dir, extra);
}

static void cluster_stop(cluster *c)
{
    for (int i = 0; i < NODES + 1; i++)
        tt_kill(&c->node[i], SIGKILL);
    tt_rmdir(c->dir);
}

static int cluster_start(cluster *c)
{
    memset(c, 0, sizeof *c);
    if (tt_tmpdir(c->dir, sizeof c->dir, "cluster") != 0) return -1;
    char nodes[256] = "";
    size_t len = 0;
    for (int i = 0; i < NODES; i++) {
        if (start_node(c, i) != 0) return -1;
        len += (size_t)snprintf(nodes + len, sizeof nodes - len, " 127.0.0.1:%d", c->node[i].port);
    }
    if (tt_sh("redis-cli --cluster create%s --cluster-replicas 1 --cluster-yes >%s/create.log 2>&1",
              nodes, c->dir) != 0)
        return -1;
    int ready = 0;
    for (int k = 0; k < 300 && !ready; k++) {
        ready = 1;
        for (int i = 0; i < NODES && ready; i++)
            ready = tt_cluster_ready(c->node[i].port);
        if (!ready) tl_sleep_ms(100);
    }
    snprintf(c->url, sizeof c->url, "redis+cluster://127.0.0.1:%d,127.0.0.1:%d", c->node[0].port,
             c->node[1].port);
    return ready ? 0 : -1;
}

/* The port of the master serving slot, asked of any node; 0 if unknown. */
static int master_of(cluster *c, unsigned slot)
{
    for (int i = 0; i < NODES; i++) {
        if (c->node[i].pid <= 0) continue;
        int port = tt_cluster_master_of(c->node[i].port, slot);
        if (port) return port;
    }
    return 0;
}

/* The first slot of a range whose master has a replica (so that it can fail over). */
static int slot_with_replica(cluster *c)
{
    for (int i = 0; i < NODES; i++) {
        if (c->node[i].pid <= 0) continue;
        redisReply *x = tt_node_cmd(c->node[i].port, "CLUSTER SLOTS");
        int slot = -1;
        for (size_t k = 0; x && x->type == REDIS_REPLY_ARRAY && k < x->elements && slot < 0; k++)
            if (x->element[k]->elements >= 4) slot = (int)x->element[k]->element[0]->integer;
        if (x) freeReplyObject(x);
        if (slot >= 0) return slot;
    }
    return -1;
}

static int node_index(cluster *c, int port)
{
    for (int i = 0; i < NODES + 1; i++)
        if (c->node[i].port == port) return i;
    return -1;
}

static cwork_redis *pool_for(const char *url, const char *query, int checkout_ms, cwork_error *err)
{
    char u[1024];
    snprintf(u, sizeof u, "%s%s%s", url, query ? "?" : "", query ? query : "");
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.connect_timeout_ms = 1000;
    o.checkout_timeout_ms = checkout_ms;
    return cwork_redis_new(u, &o, err);
}

/* A tagged namespace whose slot is `slot` ("{cwt-<hex>-N}"). */
static void ns_in_slot(char *ns, size_t size, int slot)
{
    char base[64];
    tl_unique_ns("cl", base, sizeof base);
    for (int n = 0;; n++) {
        snprintf(ns, size, "{%s-%d}", base, n);
        if (slot < 0 || (int)cw_cluster_key_slot(ns, strlen(ns)) == slot) return;
    }
}

static cluster cl;

/* ---------------------------------------------------------------- slots */

static void slots_and_tags(void)
{
    /* Redis Cluster's specification: CRC16("123456789") = 0x31C3. */
    CHECK_INT(cw_cluster_key_slot("123456789", 9), 0x31C3);
    CHECK_INT(cw_cluster_key_slot("{user1000}.following", 20),
              cw_cluster_key_slot("{user1000}.followers", 20));
    CHECK_INT(cw_cluster_key_slot("foo{}{bar}", 10), cw_cluster_key_slot("foo{}{bar}", 10));
    CHECK_INT(cw_cluster_key_slot("foo{{bar}}zap", 13), cw_cluster_key_slot("{bar", 4));
    CHECK_INT(cw_cluster_key_slot("foo{bar}{zap}", 13), cw_cluster_key_slot("bar", 3));
    /* Against the server's own answer. */
    const char *keys[] = {
        "foo", "bar", "{app}:jobs:x", "app{x}:queue",         "foo{}{bar}",
        "{}",  "{",   "a{b}c{d}",     "work:jobs:send_email", "\xc3\xa9t\xc3\xa9"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        redisReply *x = tt_node_cmd(cl.node[0].port, "CLUSTER KEYSLOT %s", keys[i]);
        CHECK(x && x->type == REDIS_REPLY_INTEGER);
        if (x && (long long)cw_cluster_key_slot(keys[i], strlen(keys[i])) != x->integer)
            tl_fail(__FILE__, __LINE__, "%s: slot %u, Redis says %lld", keys[i],
                    cw_cluster_key_slot(keys[i], strlen(keys[i])), x->integer);
        if (x) freeReplyObject(x);
    }
    const struct {
        const char *ns;
        int ok;
    } tags[] = {{"{app}", 1}, {"app{x}", 1}, {"{app}:", 1}, {"a}{b}", 1}, {"app", 0},
                {"", 0},      {"{}app", 0},  {"app{", 0},   {"{app", 0},  {"app}{", 0}};
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
        if (cw_cluster_ns_has_tag(tags[i].ns) != tags[i].ok)
            tl_fail(__FILE__, __LINE__, "\"%s\": has_tag %d", tags[i].ns, !tags[i].ok);
}

/* ---------------------------------------------------------------- roles */

static void every_role_in_a_tagged_namespace(void)
{
    cwork_error err = {0};
    cwork_redis *r = pool_for(cl.url, NULL, 10000, &err);
    if (!r) {
        tl_fail(__FILE__, __LINE__, "cwork_redis_new: %s", err.message);
        return;
    }
    char ns[80];
    ns_in_slot(ns, sizeof ns, -1);
    CHECK_INT(tt_every_role(r, ns, 300), 300);
    cwork_redis_free(r);
    tt_cli_roles(cl.url, ns);
    /* Every key of the namespace is on the master of its slot. */
    unsigned slot = cw_cluster_key_slot(ns, strlen(ns));
    redisReply *x = tt_node_cmd(master_of(&cl, slot), "CLUSTER COUNTKEYSINSLOT %u", slot);
    CHECK(x && x->integer >= 1);
    if (x) freeReplyObject(x);
}

static void untagged_namespace_refused(void)
{
    cwork_error err = {0};
    cwork_redis *r = pool_for(cl.url, NULL, 10000, &err);
    if (!r) return;
    CHECK(cwork_enqueuer_new(r, "plain", &err) == NULL);
    CHECK(strstr(err.message, "has no hash tag") != NULL);
    CHECK(cwork_client_new(r, "work", &err) == NULL);
    CHECK(strstr(err.message, "{work}") != NULL);
    cwork_pool_options po;
    cwork_pool_options_init(&po);
    CHECK(cwork_pool_new(r, "plain", &po, &err) == NULL);
    CHECK(strstr(err.message, "has no hash tag") != NULL);
    cwork_web_options wo;
    cwork_web_options_init(&wo);
    wo.listen = "127.0.0.1:0";
    CHECK(cwork_web_start(r, "app{", &wo, &err) == NULL);
    CHECK(strstr(err.message, "has no hash tag") != NULL);

    /* One cwork_redis serves one slot: another tag needs another pool. */
    cwork_enqueuer *a = cwork_enqueuer_new(r, "{cwt-a}", &err);
    CHECK(a != NULL);
    cwork_enqueuer *same = cwork_enqueuer_new(r, "x{cwt-a}", &err);
    CHECK(same != NULL);
    CHECK(cwork_enqueuer_new(r, "{cwt-b}", &err) == NULL);
    CHECK(strstr(err.message, "give it a cwork_redis of its own") != NULL);
    cwork_enqueuer_free(a);
    cwork_enqueuer_free(same);
    cwork_redis_free(r);
}

/* ---------------------------------------------------------------- MOVED */

typedef struct reshard_ctx {
    int from_port, to_port;
    int rc;
} reshard_ctx;

static void reshard_slot_0(void *arg)
{
    reshard_ctx *rc = arg;
    redisReply *a = tt_node_cmd(rc->from_port, "CLUSTER MYID");
    redisReply *b = tt_node_cmd(rc->to_port, "CLUSTER MYID");
    /* redis-cli moves the source's first slots: slot 0 here. */
    rc->rc =
        a && b ? tt_sh("redis-cli --cluster reshard 127.0.0.1:%d --cluster-from %s --cluster-to %s "
                       "--cluster-slots 1 --cluster-yes >/dev/null 2>&1",
                       rc->from_port, a->str, b->str)
               : -1;
    if (a) freeReplyObject(a);
    if (b) freeReplyObject(b);
}

static void moved_after_reshard(void)
{
    char ns[80];
    ns_in_slot(ns, sizeof ns, 0);
    int from = master_of(&cl, 0), to = 0;
    for (int i = 0; i < NODES && !to; i++) {
        int p = cl.node[i].port;
        redisReply *x = tt_node_cmd(p, "ROLE");
        if (x && p != from && !strcmp(x->element[0]->str, "master")) to = p;
        if (x) freeReplyObject(x);
    }
    cwork_error err = {0};
    cwork_redis *er = pool_for(cl.url, NULL, 30000, &err),
                *pr = pool_for(cl.url, NULL, 30000, &err);
    reshard_ctx rc = {from, to, -1};
    tf_plan plan = {er, pr, ns, 5000, 1000, reshard_slot_0, NULL, 0, &rc, NULL, 0, 0};
    tf_stats st;
    if (er && pr && tf_run(&plan, &st) == 0) {
        tf_print("slot resharded", &st);
        CHECK_INT(rc.rc, 0);
        CHECK_INT(master_of(&cl, 0), to);
        CHECK_INT(st.lost, 0);
        CHECK_INT(st.acked, 5000);
        /* The namespace lives on the new master now, nothing of it on the old. */
        redisReply *x = tt_node_cmd(to, "CLUSTER COUNTKEYSINSLOT 0");
        CHECK(x && x->integer >= 1);
        if (x) freeReplyObject(x);
        x = tt_node_cmd(from, "CLUSTER COUNTKEYSINSLOT 0");
        CHECK(x && x->integer == 0);
        if (x) freeReplyObject(x);
    }
    cwork_redis_free(er);
    cwork_redis_free(pr);
}

/* ---------------------------------------------------------------- failover */

typedef struct kill_ctx {
    cluster *c;
    int port;
} kill_ctx;

static void kill_master(void *arg)
{
    kill_ctx *k = arg;
    int i = node_index(k->c, k->port);
    if (i >= 0) tt_kill(&k->c->node[i], SIGKILL);
}

static void failover_run(const char *query, int must_lose_nothing)
{
    char ns[80];
    int with_replica = slot_with_replica(&cl);
    if (with_replica < 0) {
        tl_fail(__FILE__, __LINE__, "no master with a replica left");
        return;
    }
    ns_in_slot(ns, sizeof ns, with_replica);
    unsigned slot = cw_cluster_key_slot(ns, strlen(ns));
    kill_ctx k = {&cl, master_of(&cl, slot)};
    cwork_error err = {0};
    cwork_redis *er = pool_for(cl.url, query, 30000, &err),
                *pr = pool_for(cl.url, query, 30000, &err);
    tf_plan plan = {er,   pr, ns, FAILOVER_JOBS, 5000, kill_master,
                    NULL, 0,  &k, NULL,          0,    query ? 4 : 1};
    tf_stats st;
    if (er && pr && tf_run(&plan, &st) == 0) {
        char what[160];
        snprintf(what, sizeof what, "cluster master SIGKILLed%s%s", query ? " with " : "",
                 query ? query : "");
        tf_print(what, &st);
        CHECK_INT(st.acked, FAILOVER_JOBS);
        CHECK(st.max_gap_s < 30); /* it resumed by itself */
        CHECK(master_of(&cl, slot) != k.port);
        if (must_lose_nothing) CHECK_INT(st.lost, 0);
    }
    cwork_redis_free(er);
    cwork_redis_free(pr);
}

static void failover_of_the_namespace_master(void)
{
    failover_run(NULL, 0);
}

/* Gives the master of slot a second replica (node NODES), so that one is left to
 * acknowledge writes after the other was promoted. */
static int add_second_replica(int slot)
{
    int master = master_of(&cl, (unsigned)slot);
    redisReply *id = tt_node_cmd(master, "CLUSTER MYID");
    if (!id || start_node(&cl, NODES) != 0) {
        if (id) freeReplyObject(id);
        return -1;
    }
    int rc = tt_sh("redis-cli --cluster add-node 127.0.0.1:%d 127.0.0.1:%d --cluster-slave "
                   "--cluster-master-id %s >/dev/null 2>&1",
                   cl.node[NODES].port, master, id->str);
    freeReplyObject(id);
    for (int k = 0; rc == 0 && k < 300; k++) {
        redisReply *w = tt_node_cmd(master, "WAIT 2 100");
        long long n = w && w->type == REDIS_REPLY_INTEGER ? w->integer : 0;
        if (w) freeReplyObject(w);
        if (n >= 2) return 0;
        tl_sleep_ms(100);
    }
    return -1;
}

static void failover_with_min_replicas(void)
{
    int slot = slot_with_replica(&cl);
    if (slot < 0 || add_second_replica(slot) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot give the master of slot %d a second replica", slot);
        return;
    }
    failover_run("min_replicas=1&min_replicas_timeout_ms=2000", 1);
}

int main(void)
{
    if (!tl_on_path("redis-cli") || !tl_on_path("redis-server")) {
        fprintf(stderr, "redis-server and redis-cli are needed\n");
        return 1;
    }
    if (cluster_start(&cl) != 0) {
        fprintf(stderr, "cannot start a Redis Cluster in %s\n", cl.dir);
        cluster_stop(&cl);
        return 1;
    }
    RUN(slots_and_tags);
    RUN(every_role_in_a_tagged_namespace);
    RUN(untagged_namespace_refused);
    RUN(moved_after_reshard);
    RUN(failover_of_the_namespace_master);
    RUN(failover_with_min_replicas);
    cluster_stop(&cl);
    return tl_finish();
}
