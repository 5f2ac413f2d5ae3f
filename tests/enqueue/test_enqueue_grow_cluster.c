/* A grow (PROTOCOL §27.5) on a real Redis Cluster (three masters, started here): the
 * record changes on shard 0's master; a unique key whose shard moved is checked on its
 * old shard's master (a duplicate there; a new key leaves its forwarding marker there and
 * its job on the new shard's master); a batch opened before keeps its members on its
 * master; the grow's progress SCANs each old shard on its own master, and the grow ends
 * once those have gone and the window passed (on the manual clock). */
#include "clock_testutil.h"
#include "cluster_testutil.h"

static tc_cluster cl;

static char shard_[3][96];
static int port_[3];

/* A tagged namespace whose 3 shards are on 3 different masters. */
static void spread_ns(char *ns, size_t size)
{
    char base[64];
    tl_unique_ns("grcl", base, sizeof base);
    for (int n = 0; n < 5000; n++) {
        snprintf(ns, size, "{%s-%d}", base, n);
        for (unsigned i = 0; i < 3; i++) {
            port_[i] = tc_shard_master(&cl, ns, i, shard_[i], sizeof shard_[i]);
            CHECK(port_[i] > 0);
        }
        if (port_[0] != port_[1] && port_[1] != port_[2] && port_[0] != port_[2]) return;
    }
    CHECK(!"no namespace spread over three masters");
}

static long long node_int(int port, const char *fmt, const char *a, const char *b)
{
    redisReply *r = tt_node_cmd(port, fmt, a, b);
    long long n = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (r) freeReplyObject(r);
    return n;
}

/* A unique key of "u" ({"k":n}) whose shard is `was` under 2 and `now` under 3. */
static long moving_key(long from, unsigned *was, unsigned *now)
{
    for (long n = from;; n++) {
        char route[64];
        int len = snprintf(route, sizeof route, "u:{\"k\":%ld}", n);
        *was = cw_sharding_of(route, (size_t)len, 2);
        *now = cw_sharding_of(route, (size_t)len, 3);
        if (*was != *now) return n;
    }
}

static int enqueue_u(cwork_enqueuer *enq, long k)
{
    cwork_args *a = cwork_args_new();
    cwork_args_set_int64(a, "k", k);
    cwork_error err = {0};
    int rc = cwork_enqueue_unique(enq, "u", a, NULL, &err);
    cwork_args_free(a);
    return rc;
}

static void grow_on_a_cluster(void)
{
    clock_start_manual();
    cwork_error err = {0};
    cwork_redis *r = cwork_redis_new(cl.url, NULL, &err);
    CHECK(r != NULL);
    char ns[96];
    spread_ns(ns, sizeof ns);
    cwork_enqueuer *enq = cwork_enqueuer_new(r, ns, &err);
    CHECK_INT(cwork_enqueuer_set_shards(enq, 2, &err), 0);
    unsigned was = 0, now = 0;
    long k = moving_key(0, &was, &now);
    CHECK_INT(enqueue_u(enq, k), 0);
    char id[25];
    unsigned bwas = 0;
    for (;;) {
        CHECK_INT(cwork_batch_open(enq, CWORK_BATCH_ON_COMPLETE, "done", NULL, id, &err), 0);
        bwas = cw_sharding_of(id, 24, 2);
        if (bwas != cw_sharding_of(id, 24, 3)) break;
    }
    cwork_redis *r2 = cwork_redis_new(cl.url, NULL, &err);
    cwork_client *c = cwork_client_new(r2, ns, &err);
    CHECK_INT(cwork_client_shards_grow(c, 3, &err), 0);
    char key[160];
    snprintf(key, sizeof key, "%s:cwork:shards", shard_[0]);
    CHECK_INT(node_int(port_[0], "HLEN %s%s", key, ""), 6);

    cwork_redis *r3 = cwork_redis_new(cl.url, NULL, &err);
    cwork_enqueuer *fresh = cwork_enqueuer_new(r3, ns, &err);
    CHECK_INT(enqueue_u(fresh, k), CWORK_DUPLICATE);
    snprintf(key, sizeof key, "%s:jobs:u", shard_[now]);
    CHECK_INT(node_int(port_[now], "LLEN %s%s", key, ""), 0);
    unsigned was2 = 0, now2 = 0;
    long k2 = moving_key(k + 1, &was2, &now2);
    CHECK_INT(enqueue_u(fresh, k2), 0);
    snprintf(key, sizeof key, "%s:jobs:u", shard_[now2]);
    CHECK_INT(node_int(port_[now2], "LLEN %s%s", key, ""), 1);
    snprintf(key, sizeof key, "%s:unique:u:{\"k\":%ld}\n", shard_[was2], k2);
    CHECK_INT(node_int(port_[was2], "EXISTS %s%s", key, ""), 1);
    CHECK_INT(enqueue_u(enq, k2), CWORK_DUPLICATE); /* still on 2 shards: the marker */

    cwork_batch *b = cwork_batch_new(fresh);
    CHECK_INT(cwork_batch_join(b, id, &err), 0);
    CHECK_INT(cwork_batch_add(b, "m", NULL, 0, 0, &err), 0);
    CHECK_INT(cwork_enqueue_batch(b, &err), 0);
    cwork_batch_free(b);
    snprintf(key, sizeof key, "%s:jobs:m", shard_[bwas]);
    CHECK_INT(node_int(port_[bwas], "LLEN %s%s", key, ""), 1);

    cwork_shards_growth g;
    CHECK_INT(cwork_client_shards_growth(c, &g, &err), 0);
    CHECK_INT(g.from, 2);
    CHECK_INT(g.guards, 2);
    CHECK(g.batches >= 1);
    cw_clock_advance_ms(1000 * CW_SHARDING_FORWARD_TTL);
    CHECK_INT(cwork_client_shards_finish(c, &g, &err), CWORK_EINVAL);
    /* the guards go (a job started, the marker expired) and the batches complete */
    for (unsigned i = 0; i < 2; i++) {
        redisReply *ks = tt_node_cmd(port_[i], "KEYS %s:*", shard_[i]);
        for (size_t j = 0; ks && j < ks->elements; j++) {
            const char *kk = ks->element[j]->str;
            if (strstr(kk, ":unique:"))
                freeReplyObject(tt_node_cmd(port_[i], "DEL %s", kk));
            else if (strstr(kk, ":cwork:batch:") && !strstr(kk + strlen(kk) - 5, ":jobs"))
                freeReplyObject(tt_node_cmd(port_[i], "HSET %s callback enqueued", kk));
        }
        if (ks) freeReplyObject(ks);
    }
    CHECK_INT(cwork_client_shards_finish(c, &g, &err), 0);
    snprintf(key, sizeof key, "%s:cwork:shards", shard_[0]);
    redisReply *f = tt_node_cmd(port_[0], "HEXISTS %s from", key);
    CHECK(f && f->integer == 0);
    if (f) freeReplyObject(f);
    cwork_client_free(c);
    cwork_enqueuer_free(fresh);
    cwork_enqueuer_free(enq);
    cwork_redis_free(r3);
    cwork_redis_free(r2);
    cwork_redis_free(r);
    cw_clock_system();
}

int main(void)
{
    if (tc_start(&cl, "growcl") != 0) {
        tc_stop(&cl);
        return 1;
    }
    RUN(grow_on_a_cluster);
    tc_stop(&cl);
    return tl_finish();
}
