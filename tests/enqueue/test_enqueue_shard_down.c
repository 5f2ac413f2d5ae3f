/* A sharded enqueue whose shard's master stops answering (PROTOCOL §27.3, README
 * "Sharding"), on a real Redis Cluster of three masters started here, the namespace's
 * three shards placed so that shard DOWN's master serves no other shard, and the
 * enqueuer's connect, command and checkout timeouts TIMEOUT_MS. The master is stopped
 * (SIGSTOP) and plain jobs are enqueued (their random ids spread them over the shards):
 *   - every job routed to another shard is enqueued;
 *   - the first call routed to shard DOWN fails after its timeout; every later one, the
 *     back-off's clock (the manual clock) standing still, fails at once with a message
 *     naming the shard, its namespace and its node, and a bulk enqueue's entries for it
 *     fail so too while the others are written;
 *   - once the clock has passed the back-off, one call tries the shard again (and fails
 *     again, the master still stopped), the others fail at once;
 *   - the master resumed and the back-off passed, calls routed there succeed again
 *     (after at most a few more failures while the connection pool re-dials), and none
 *     fails once one has succeeded;
 *   - every shard holds exactly the jobs enqueued there, shard DOWN up to one more per
 *     call that timed out (its outcome unknown: Redis may run it when it resumes).
 * How long the first call took is printed (what every call routed there waited before
 * the back-off); nothing is asserted of times. */
#include "clock_testutil.h"
#include "cluster_testutil.h"
#include "cwork.h"
#include "enqueue.h"

#include <signal.h>

#define S 3
#define DOWN 1
#define TIMEOUT_MS 300

static tc_cluster cl;
static char ns_[96], shard_ns_[S][96];
static int port_[S];
static int ok_[S]; /* jobs enqueued in each shard */
static int slow_;  /* calls routed to DOWN that tried it and failed */
static int fast_;  /* calls routed to DOWN that failed at once */
static char fast_msg_[512];

/* A namespace whose shard DOWN's master serves no other shard. */
static void spread_ns(void)
{
    char base[64];
    tl_unique_ns("shdown", base, sizeof base);
    for (int n = 0; n < 1000; n++) {
        snprintf(ns_, sizeof ns_, "{%s-%d}", base, n);
        for (unsigned s = 0; s < S; s++)
            port_[s] = tc_shard_master(&cl, ns_, s, shard_ns_[s], sizeof shard_ns_[s]);
        int apart = 1;
        for (unsigned s = 0; s < S; s++)
            apart &= s == DOWN || port_[s] != port_[DOWN];
        if (apart) return;
    }
    CHECK(!"no namespace with shard DOWN alone on its master");
}

/* One job; counts where it went or how it failed. */
static int enqueue_one(cwork_enqueuer *enq, int n)
{
    cwork_args *a = cwork_args_new();
    cwork_args_set_int64(a, "n", n);
    cwork_job *job = NULL;
    cwork_error err = {0};
    long long t0 = tl_now_ms();
    int rc = cwork_enqueue(enq, "work", a, &job, &err);
    long long took = tl_now_ms() - t0;
    cwork_args_free(a);
    if (rc == 0) {
        unsigned s = cw_sharding_of(cwork_job_id(job), 24, S);
        ok_[s]++;
        cwork_job_free(job);
        return (int)s;
    }
    CHECK_INT(rc, CWORK_EREDIS);
    if (strstr(err.message, "not tried")) {
        fast_++;
        snprintf(fast_msg_, sizeof fast_msg_, "%s", err.message);
    } else {
        slow_++;
        printf("  a call routed to the stopped shard failed after %lld ms: %s\n", took,
               err.message);
    }
    return -1;
}

static void check_fast_message(void)
{
    char want[160];
    snprintf(want, sizeof want, "shard %d (%s) at 127.0.0.1:%d: not tried", DOWN, shard_ns_[DOWN],
             port_[DOWN]);
    if (!strstr(fast_msg_, want)) tl_fail(__FILE__, __LINE__, "message: %s", fast_msg_);
}

static long long llen(unsigned s)
{
    redisReply *r = tt_node_cmd(port_[s], "LLEN %s:jobs:work", shard_ns_[s]);
    long long n = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (r) freeReplyObject(r);
    return n;
}

static void a_stopped_master_fails_its_shard_fast(void)
{
    spread_ns();
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.connect_timeout_ms = o.command_timeout_ms = o.checkout_timeout_ms = TIMEOUT_MS;
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(cl.url, &o, &err);
    CHECK(redis != NULL);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, ns_, &err);
    CHECK(enq != NULL);
    CHECK_INT(cwork_enqueuer_set_shards(enq, S, &err), 0);
    /* every shard reached once (its connection made) */
    int seen[S] = {0};
    for (int n = 0; n < 300 && !(seen[0] && seen[1] && seen[2]); n++) {
        int s = enqueue_one(enq, n);
        CHECK(s >= 0);
        if (s >= 0) seen[s] = 1;
    }
    CHECK(seen[0] && seen[1] && seen[2]);
    CHECK_INT(slow_ + fast_, 0);

    clock_start_manual();
    int node = tc_node_index(&cl, port_[DOWN]);
    CHECK(node >= 0);
    kill(cl.node[node].pid, SIGSTOP);
    int ok_before = ok_[DOWN];
    for (int n = 0; n < 300 && fast_ < 10; n++)
        enqueue_one(enq, 1000 + n);
    CHECK_INT(ok_[DOWN], ok_before); /* nothing reached it */
    CHECK_INT(slow_, 1);             /* the first one only */
    CHECK_INT(fast_, 10);
    check_fast_message();

    /* a bulk enqueue: the entries for shard DOWN fail at once, the others are written */
    cwork_batch *b = cwork_batch_new(enq);
    for (int n = 0; n < 30; n++)
        CHECK_INT(cwork_batch_add(b, "work", NULL, 0, 0, &err), 0);
    CHECK_INT(cwork_enqueue_batch(b, &err), CWORK_EREDIS);
    snprintf(fast_msg_, sizeof fast_msg_, "%s", err.message);
    check_fast_message();
    int in_down = 0;
    for (size_t i = 0; i < cwork_batch_count(b); i++) {
        const char *id = NULL;
        int st = cwork_batch_status(b, i, &id);
        unsigned s = cw_sharding_of(id, 24, S);
        CHECK_INT(st, s == DOWN ? CWORK_EREDIS : CWORK_OK);
        if (st == CWORK_OK) ok_[s]++;
        in_down += s == DOWN;
    }
    CHECK(in_down > 0);
    cwork_batch_free(b);

    /* the back-off over: one call tries again (and fails), the others fail at once */
    cw_clock_advance_ms(CW_ENQ_BACKOFF_MAX_MS);
    fast_ = 0;
    for (int n = 0; n < 300 && fast_ < 5; n++)
        enqueue_one(enq, 2000 + n);
    CHECK_INT(slow_, 2);
    CHECK_INT(fast_, 5);
    CHECK_INT(ok_[DOWN], ok_before);

    /* resumed: once the back-off is over, the shard takes jobs again (a try may still
     * fail while the connection pool's own re-dial waits: the clock is moved on past the
     * back-off then, and real time given to the re-dial); once one succeeded, all do */
    kill(cl.node[node].pid, SIGCONT);
    cw_clock_advance_ms(CW_ENQ_BACKOFF_MAX_MS);
    for (int n = 0; n < 1000 && ok_[DOWN] < ok_before + 5; n++) {
        int failed = fast_ + slow_;
        enqueue_one(enq, 3000 + n);
        if (fast_ + slow_ == failed) continue;
        CHECK_INT(ok_[DOWN], ok_before); /* none after the first success */
        cw_clock_advance_ms(CW_ENQ_BACKOFF_MAX_MS);
        tl_sleep_ms(50);
    }
    CHECK_INT(ok_[DOWN], ok_before + 5);

    /* the whole namespace: each shard's queue holds what was enqueued there */
    for (unsigned s = 0; s < S; s++) {
        long long n = llen(s);
        if (s == DOWN ? n < ok_[s] || n > ok_[s] + slow_ : n != ok_[s])
            tl_fail(__FILE__, __LINE__, "shard %u holds %lld jobs, %d enqueued there", s, n,
                    ok_[s]);
    }
    printf("  enqueued per shard: %d, %d, %d; shard %d holds %lld\n", ok_[0], ok_[1], ok_[2], DOWN,
           llen(DOWN));
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
    cw_clock_system();
}

int main(void)
{
    if (tc_start(&cl, "shdown") != 0) {
        tc_stop(&cl);
        return 1;
    }
    RUN(a_stopped_master_fails_its_shard_fast);
    tc_stop(&cl);
    return tl_finish();
}
