/* A failover of one master while a sharded namespace runs at load (issue 23 "Measured";
 * README "Sharding"): a Redis Cluster of three masters and three replicas started here
 * (cluster_topo.c, as fault_cluster.c) with cluster-require-full-coverage no, a
 * namespace of three shards whose name is chosen so that each shard's slot (PROTOCOL
 * §27.1: shard i ≥ 1 is "{base.i}") is served by another master — the placement
 * bench/cluster/cluster.sh makes with ADDSLOTSRANGE, found here among the slots
 * `redis-cli --cluster create` gave — and the master of shard VICTIM given a second
 * replica. One sharded cwork pool (cwork_pool_options.shards = 3) runs handlers of
 * 1–10 ms; two enqueuer threads (a sharded enqueuer each, on a Redis handle of their
 * own: one enqueues jobs one at a time, one in bulk) keep a backlog of work in every
 * shard; then that master is SIGKILLed and the cluster promotes a replica.
 *
 * Durability of acknowledged writes: the URL's min_replicas=1 (enqueues fail unless a
 * replica acknowledged the job; the pool's commits WAIT for one too; README "Faults and
 * bad input"), so an acknowledged job survives the promotion.
 *
 * Judged, from what the handlers recorded (the job id gives its shard, §27.2):
 *   - the other shards never stop: from the kill until the failed shard runs again at
 *     load, no completion gap in them reaches the cluster's node timeout, the least time a shard
 * waiting on the failed master would stand still (the failure is not even detected before it);
 *   - every acknowledged job runs; exactly once, except on the failed shard a job that
 *     had started before the kill (a handler in flight then, or one whose commit had
 *     not reached the promoted replica);
 *   - every shard's queues, in-progress lists, retry, scheduled and dead sets are empty
 *     at the end.
 * Prints the completions per shard over time and the failed shard's pause in seconds
 * (not asserted). FULL_COVERAGE=1 in the environment runs the cluster with Redis'
 * default cluster-require-full-coverage yes instead: every node then refuses commands
 * from the failure's detection to the promotion, and the other shards stop for that
 * while too (README "Sharding" has both figures). Skipped (77) where redis-cli or
 * cluster support is missing. */
#include "cluster_topo.h"
#include "faults.h"
#include "sharding.h"
#include "transport_testutil.h"

#define SHARDS 3
#define VICTIM 1      /* the shard whose master is killed */
#define ENQ_THREADS 2 /* enqueuer threads: one enqueues jobs one at a time, one in bulk */
#define BATCH 30
/* Acknowledged jobs not yet started the enqueuers keep in each shard, built before the
 * kill: an enqueuer whose job goes to the failed shard waits there (up to its timeouts,
 * again and again until the promotion), so the other shards live on this backlog
 * through the failover — about ten seconds of a shard's two slots at 1–10 ms a job. */
#define BACKLOG 3000
#define LOAD_RUNS 300   /* completions per shard before the kill, and after the promotion */
#define CONCURRENCY 6   /* the pool's, split over the shards */
#define MAX_RUNS 400000 /* runs recorded */
#define MAX_ACKS 400000 /* enqueues recorded */
#define CMD_TIMEOUT_MS 1000

/* Every wait derives from the configured periods: the failure detection (as fault_ha.c),
 * and the dead time after which a pool's in-progress jobs are the reaper's. */
#define FAILOVER_BOUND_MS (10 * CT_NODE_TIMEOUT_MS + 20000)
#define DRAIN_BOUND_MS (FAILOVER_BOUND_MS + 2 * FW_RECOVERY_BOUND_MS)

typedef struct run {
    char id[32];
    unsigned shard;
    long long start, end; /* end -1 while running */
} run;

typedef struct ack { /* an acknowledged enqueue */
    char id[32];
    unsigned shard;
} ack;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static run *runs;
static size_t nruns;
static ack *acks;
static size_t nacks;
static long long started[SHARDS], acked[SHARDS]; /* first runs; acknowledged enqueues */
static atomic_int stop_enqueuers, killed;
static char ns[64], url[512];

static long long now_ms(void)
{
    return fw_now_ms();
}

static int handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    const char *id = cwork_job_id(job);
    unsigned shard = cw_sharding_of(id, strlen(id), SHARDS);
    pthread_mutex_lock(&mu);
    size_t i = nruns < MAX_RUNS ? nruns++ : MAX_RUNS;
    if (i < MAX_RUNS) {
        snprintf(runs[i].id, sizeof runs[i].id, "%s", id);
        runs[i].shard = shard;
        runs[i].start = now_ms();
        runs[i].end = -1;
        started[shard]++; /* (duplicates too: only a throttle) */
    }
    pthread_mutex_unlock(&mu);
    tl_sleep_ms(cwork_job_arg_int64(job, "ms"));
    pthread_mutex_lock(&mu);
    if (i < MAX_RUNS) runs[i].end = now_ms();
    pthread_mutex_unlock(&mu);
    return 0;
}

static int64_t no_backoff(const cwork_job *job, void *userdata)
{
    (void)job;
    (void)userdata;
    return 0;
}

/* Every shard has its backlog (after the kill: the failed one's stays, stuck). */
static int backlog_full(void)
{
    int full = 1;
    pthread_mutex_lock(&mu);
    for (int s = 0; s < SHARDS; s++)
        if ((s != VICTIM || !atomic_load(&killed)) && acked[s] - started[s] < BACKLOG) full = 0;
    pthread_mutex_unlock(&mu);
    return full;
}

static void record_ack(const char *id)
{
    pthread_mutex_lock(&mu);
    if (nacks < MAX_ACKS) {
        ack *a = &acks[nacks++];
        snprintf(a->id, sizeof a->id, "%s", id);
        a->shard = cw_sharding_of(id, strlen(id), SHARDS);
        acked[a->shard]++;
    }
    pthread_mutex_unlock(&mu);
}

/* A handler's time, 1–10 ms. */
static int64_t next_ms(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return 1 + (*seed >> 16) % 10;
}

static void *enqueuer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    int single = (int)((uintptr_t)arg % 2); /* enqueues one job at a time, else in bulk */
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.connect_timeout_ms = 500;
    o.command_timeout_ms = CMD_TIMEOUT_MS;
    o.checkout_timeout_ms = 500;
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(url, &o, &err);
    cwork_enqueuer *enq = redis ? cwork_enqueuer_new(redis, ns, &err) : NULL;
    if (!enq || cwork_enqueuer_set_shards(enq, SHARDS, &err) != 0) {
        printf("enqueuer: %s\n", err.message);
        atomic_store(&stop_enqueuers, 1);
    }
    cwork_args *a = cwork_args_new();
    cwork_batch *b = enq ? cwork_batch_new(enq) : NULL;
    while (!atomic_load(&stop_enqueuers)) {
        if (backlog_full()) {
            tl_sleep_ms(5);
            continue;
        }
        /* A job that is not acknowledged (refused: no replica acknowledged it,
         * CLUSTERDOWN; or an I/O error or timeout that may have written it) is not
         * required to run; it may. */
        if (single) {
            cwork_args_set_int64(a, "ms", next_ms(&seed));
            cwork_job *job = NULL;
            if (cwork_enqueue(enq, "work", a, &job, &err) == 0) {
                record_ack(cwork_job_id(job));
                cwork_job_free(job);
            } else {
                tl_sleep_ms(10);
            }
            continue;
        }
        /* bulk: grouped by shard, each group written whole or not at all */
        cwork_batch_reset(b);
        for (int k = 0; k < BATCH; k++) {
            cwork_args_set_int64(a, "ms", next_ms(&seed));
            cwork_batch_add(b, "work", a, 0, 0, NULL);
        }
        cwork_enqueue_batch(b, &err);
        for (size_t k = 0; k < cwork_batch_count(b); k++) {
            const char *id = NULL;
            if (cwork_batch_status(b, k, &id) == CWORK_OK) record_ack(id);
        }
    }
    cwork_batch_free(b);
    cwork_args_free(a);
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
    return NULL;
}

/* A namespace whose SHARDS shards are each on another master. 0 or -1. */
static int place(cluster_topo *c, int slots[SHARDS])
{
    char base[48];
    tl_unique_ns("fshard", base, sizeof base);
    for (int n = 0; n < 2000; n++) {
        snprintf(ns, sizeof ns, "{%s-%d}", base, n);
        int masters[SHARDS], distinct = 1;
        for (unsigned i = 0; i < SHARDS && distinct; i++) {
            char name[80];
            cwork_error err = {0};
            if (cw_sharding_ns(ns, i, name, sizeof name, &err) != 0) return -1;
            slots[i] = ct_keyslot(c, name);
            masters[i] = ct_master_of(c, slots[i]);
            for (unsigned k = 0; k < i; k++)
                distinct &= masters[k] != masters[i];
        }
        if (distinct) return 0;
    }
    return -1;
}

/* Completions of shard s ending after t, with the latest and earliest ends. */
static long long ends_after(unsigned s, long long t, long long *first)
{
    long long n = 0;
    *first = -1;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nruns; i++)
        if (runs[i].shard == s && runs[i].end > t) {
            n++;
            if (*first < 0 || runs[i].end < *first) *first = runs[i].end;
        }
    pthread_mutex_unlock(&mu);
    return n;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* The longest time in [from, to] without a completion in shard s; *last_before the
 * last completion at or before from (-1: none). */
static long long longest_gap(unsigned s, long long from, long long to, long long *last_before)
{
    pthread_mutex_lock(&mu);
    long long *t = malloc((nruns + 2) * sizeof *t);
    size_t n = 0;
    *last_before = -1;
    for (size_t i = 0; t && i < nruns; i++) {
        if (runs[i].shard != s || runs[i].end < 0) continue;
        if (runs[i].end <= from && runs[i].end > *last_before) *last_before = runs[i].end;
        if (runs[i].end > from && runs[i].end <= to) t[n++] = runs[i].end;
    }
    pthread_mutex_unlock(&mu);
    if (!t) return -1;
    t[n++] = to;
    qsort(t, n, sizeof *t, cmp_ll);
    long long gap = 0, prev = *last_before >= 0 ? *last_before : from;
    for (size_t i = 0; i < n; i++) {
        if (t[i] - prev > gap) gap = t[i] - prev;
        prev = t[i];
    }
    free(t);
    return gap;
}

/* Completions per shard in each half second from two seconds before the kill until
 * two after the promotion. */
static void print_timeline(long long kill_at, long long promoted_at)
{
    enum { STEP = 500, MAX_STEPS = 120 };
    long long from = kill_at - 2000, to = (promoted_at > 0 ? promoted_at : kill_at) + 2000;
    int steps = (int)((to - from) / STEP) + 1;
    if (steps > MAX_STEPS) steps = MAX_STEPS;
    static long long n[SHARDS][MAX_STEPS];
    memset(n, 0, sizeof n);
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nruns; i++) {
        long long k = runs[i].end >= from ? (runs[i].end - from) / STEP : -1;
        if (k >= 0 && k < steps) n[runs[i].shard][k]++;
    }
    pthread_mutex_unlock(&mu);
    printf("completions per %d ms, from 2 s before the kill (K) to 2 s after the promotion (P):\n",
           STEP);
    for (int s = 0; s < SHARDS; s++) {
        printf("  shard %d%s:", s, s == VICTIM ? " (failed)" : "         ");
        for (int k = 0; k < steps; k++) {
            long long t = from + (long long)k * STEP;
            const char *mark = t <= kill_at && kill_at < t + STEP           ? "K"
                               : t <= promoted_at && promoted_at < t + STEP ? "P"
                                                                            : "";
            printf(" %s%lld", mark, n[s][k]);
        }
        printf("\n");
    }
}

static int cmp_run(const void *a, const void *b)
{
    const run *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    return c ? c : cmp_ll(&x->start, &y->start);
}

static int cmp_ack(const void *a, const void *b)
{
    return strcmp(((const ack *)a)->id, ((const ack *)b)->id);
}

/* Every acknowledged job ran; runs of one job beyond the first only on the failed
 * shard and only when the first started before the kill. Counts into the arguments. */
static void judge_runs(long long kill_at, size_t *lost, size_t *explained, size_t *unexplained)
{
    pthread_mutex_lock(&mu);
    qsort(runs, nruns, sizeof *runs, cmp_run);
    qsort(acks, nacks, sizeof *acks, cmp_ack);
    *lost = *explained = *unexplained = 0;
    size_t r = 0;
    for (size_t a = 0; a < nacks; a++) {
        while (r < nruns && strcmp(runs[r].id, acks[a].id) < 0)
            r++;
        size_t k = r;
        while (k < nruns && !strcmp(runs[k].id, acks[a].id))
            k++;
        if (k == r) {
            if (*lost < 5) printf("    lost: %s (shard %u)\n", acks[a].id, acks[a].shard);
            ++*lost;
        }
        if (k - r > 1) {
            int ok = acks[a].shard == VICTIM && runs[r].start <= kill_at;
            if (!ok && *unexplained < 5)
                printf("    ran %zu times: %s (shard %u, first start %lld ms from the kill)\n",
                       k - r, acks[a].id, acks[a].shard, runs[r].start - kill_at);
            *(ok ? explained : unexplained) += k - r - 1;
        }
    }
    pthread_mutex_unlock(&mu);
}

/* Jobs left in shard s's keys (its queue, in-progress lists, retry, scheduled and dead
 * sets), asked of its master now; -1 when it does not answer. */
static long long leftover(cluster_topo *c, unsigned s, int slot)
{
    static const char probe[] =
        "local n = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[2]) + "
        "redis.call('ZCARD', KEYS[3]) + redis.call('LLEN', KEYS[4]) "
        "local cursor = '0' "
        "repeat "
        "  local r = redis.call('SCAN', cursor, 'MATCH', ARGV[1] .. 'jobs:work:*:inprogress', "
        "                       'COUNT', 1000) "
        "  cursor = r[1] "
        "  for _, k in ipairs(r[2]) do n = n + redis.call('LLEN', k) end "
        "until cursor == '0' "
        "return n";
    char name[80];
    cwork_error err = {0};
    cw_sharding_ns(ns, s, name, sizeof name, &err);
    int port = ct_master_of(c, slot);
    redisReply *r =
        port ? tt_node_cmd(port, "EVAL %s 4 %s:retry %s:scheduled %s:dead %s:jobs:work %s:", probe,
                           name, name, name, name, name)
             : NULL;
    long long n = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (r) freeReplyObject(r);
    return n;
}

static int wait_runs(long long since, long long want_each, long long bound_ms, int all)
{
    for (long long end = now_ms() + bound_ms; now_ms() < end; tl_sleep_ms(50)) {
        int ok = 1;
        long long first;
        for (unsigned s = 0; s < SHARDS && ok; s++)
            if (all || s != VICTIM) ok = ends_after(s, since, &first) >= want_each;
        if (ok) return 1;
    }
    return 0;
}

static int start_pool(cwork_redis **redis, cwork_pool **pool)
{
    cwork_error err = {0};
    *redis = cwork_redis_new(url, NULL, &err);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = CONCURRENCY;
    o.shards = SHARDS;
    *pool = *redis ? cwork_pool_new(*redis, ns, &o, &err) : NULL;
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.max_fails = 100;
    jo.backoff = no_backoff;
    if (!*pool || cwork_pool_register(*pool, "work", handler, &jo, &err) != 0 ||
        cwork_pool_start(*pool, &err) != 0) {
        printf("pool: %s\n", err.message);
        return -1;
    }
    return 0;
}

static void failover_at_load(cluster_topo *c, const int slots[SHARDS])
{
    long long t0 = now_ms();
    cwork_redis *redis = NULL;
    cwork_pool *pool = NULL;
    if (start_pool(&redis, &pool) != 0) {
        fr_verdict(0, "the sharded pool starts", 0);
        cwork_pool_free(pool);
        cwork_redis_free(redis);
        return;
    }
    pthread_t th[ENQ_THREADS];
    for (uintptr_t i = 0; i < ENQ_THREADS; i++)
        pthread_create(&th[i], NULL, enqueuer, (void *)(i + 1));
    fr_verdict(wait_runs(t0, LOAD_RUNS, DRAIN_BOUND_MS, 1),
               "jobs flow through every shard before the kill (ms)", now_ms() - t0);

    /* Before the kill, a backlog in every shard: whatever the enqueuers then do (each
     * waits on the failed master for up to its timeouts when a job goes there), the
     * other shards have work. */
    int built = 0;
    for (long long end = now_ms() + DRAIN_BOUND_MS; now_ms() < end && !built; tl_sleep_ms(50))
        built = backlog_full();
    fr_verdict(built, "a backlog in every shard before the kill (ms)", now_ms() - t0);
    long long kill_at = now_ms();
    atomic_store(&killed, 1);
    int port = ct_kill_master(c, slots[VICTIM]);
    printf("SIGKILLed the master of shard %d (port %d) at %lld\n", VICTIM, port, kill_at);
    long long promoted_at = -1;
    for (long long end = kill_at + FAILOVER_BOUND_MS; now_ms() < end && promoted_at < 0;
         tl_sleep_ms(20))
        if (ct_promoted(c, slots[VICTIM])) promoted_at = now_ms();
    fr_verdict(promoted_at >= 0, "a replica was promoted (ms after the kill)",
               promoted_at >= 0 ? promoted_at - kill_at : -1);
    int back = wait_runs(promoted_at > 0 ? promoted_at : kill_at, LOAD_RUNS, DRAIN_BOUND_MS, 1);
    fr_verdict(back, "every shard runs jobs after the promotion (ms after the kill)",
               now_ms() - kill_at);
    long long until = now_ms(); /* (the failed shard is back at load) */
    for (unsigned s = 0; s < SHARDS; s++) {
        if (s == VICTIM) continue;
        long long before = -1, gap = longest_gap(s, kill_at, until, &before);
        char what[128];
        snprintf(what, sizeof what,
                 "shard %u never stops during the failover: its longest gap (ms) under the node "
                 "timeout %d",
                 s, CT_NODE_TIMEOUT_MS);
        fr_verdict(gap >= 0 && gap < CT_NODE_TIMEOUT_MS, what, gap);
    }
    /* the failed shard's pause: its longest gap from the kill to its first completion
     * after the promotion */
    long long first_after = -1, last_before = -1;
    ends_after(VICTIM, promoted_at > 0 ? promoted_at : kill_at, &first_after);
    long long pause =
        first_after > 0 ? longest_gap(VICTIM, kill_at, first_after, &last_before) : -1;
    print_timeline(kill_at, promoted_at);

    atomic_store(&stop_enqueuers, 1);
    for (int i = 0; i < ENQ_THREADS; i++)
        pthread_join(th[i], NULL);
    int quiet = 0;
    for (long long end = now_ms() + DRAIN_BOUND_MS; now_ms() < end && !quiet; tl_sleep_ms(200)) {
        quiet = 1;
        for (unsigned s = 0; s < SHARDS && quiet; s++)
            quiet = leftover(c, s, slots[s]) == 0;
    }
    fr_verdict(quiet,
               "every shard's queue, in-progress lists, retry, scheduled and dead sets "
               "drained",
               0);
    cwork_pool_drain(pool, 10000, NULL);
    fr_verdict(cwork_pool_stop(pool, 20000, NULL) == 0, "the pool stops", 0);
    cwork_pool_free(pool);
    cwork_redis_free(redis);

    size_t lost, explained, unexplained;
    judge_runs(kill_at, &lost, &explained, &unexplained);
    fr_verdict(lost == 0, "every acknowledged job ran (lost)", (long long)lost);
    fr_verdict(unexplained == 0,
               "exactly once, but for jobs of the failed shard started before the kill "
               "(unexplained extra runs)",
               (long long)unexplained);
    long long total = 0;
    for (int s = 0; s < SHARDS; s++)
        total += acked[s];
    fr_verdict(total >= SHARDS * 2 * LOAD_RUNS, "real work (acknowledged enqueues)", total);
    printf("figure: failover of shard %d's master at load: the shard paused %.1f s (its "
           "longest time without a completion; promotion %.1f s after the kill); "
           "acknowledged per shard %lld/%lld/%lld; %zu extra runs of jobs in flight at the "
           "kill; %zu runs in %.0f s\n",
           VICTIM, (double)pause / 1000,
           promoted_at >= 0 ? (double)(promoted_at - kill_at) / 1000 : -1.0, acked[0], acked[1],
           acked[2], explained, nruns, (double)(now_ms() - t0) / 1000);
}

/* FULL_COVERAGE=1 (not empty, not 0): Redis' default cluster-require-full-coverage. */
static int full_coverage(void)
{
    const char *v = getenv("FULL_COVERAGE");
    return v && *v && strcmp(v, "0") != 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!tl_on_path("redis-cli") || !tl_on_path("redis-server")) {
        printf("fault cluster shards: SKIPPED: redis-server and redis-cli are needed\n");
        return 77;
    }
    runs = calloc(MAX_RUNS, sizeof *runs);
    acks = calloc(MAX_ACKS, sizeof *acks);
    static cluster_topo c;
    int rc = ct_start(&c, "fault-shards", full_coverage());
    int slots[SHARDS];
    if (rc == 0) rc = place(&c, slots) == 0 ? ct_add_replica(&c, slots[VICTIM]) : -1;
    if (rc != 0) {
        printf("fault cluster shards: %s: cannot start a cluster of three masters and three "
               "replicas with the shards placed (redis-cli --cluster said:)\n",
               rc == 1 ? "SKIPPED" : "FAILED");
        tt_sh("cat '%s/create.log'", c.dir);
        ct_stop(&c);
        return rc == 1 ? 77 : 1;
    }
    snprintf(
        url, sizeof url,
        "redis+cluster://127.0.0.1:%d,127.0.0.1:%d?min_replicas=1&min_replicas_timeout_ms=2000",
        c.node_port[0], c.node_port[1]);
    printf("fault cluster shards: %s, namespace %s, shard slots %d %d %d on masters %d %d %d\n",
           url, ns, slots[0], slots[1], slots[2], ct_master_of(&c, slots[0]),
           ct_master_of(&c, slots[1]), ct_master_of(&c, slots[2]));
    failover_at_load(&c, slots);
    ct_stop(&c);
    free(runs);
    free(acks);
    if (fr_failures) printf("%d check(s) failed\n", fr_failures);
    return fr_failures ? 1 : 0;
}
