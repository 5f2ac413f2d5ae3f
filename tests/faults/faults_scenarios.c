/* The fault suite's scenarios: each does one kind of harm to the running world, prints
 * what it did, and leaves the world able to go on (a killed pool is replaced, a damaged
 * key repaired, Redis back). The generator keeps enqueueing throughout. */
#include "faults.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("  ");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
}

/* ---------------------------------------------------------------- pools */

/* A running pool with jobs in progress (so that the fault has something to recover),
 * its id in id; -1 when none shows up within a few seconds. */
static long busy_pool(world *w, char id[32])
{
    for (int attempt = 0; attempt < 100; attempt++) {
        for (size_t i = 0; i < w->npools; i++)
            if (w->pools[i].alive && !w->pools[i].stopped && fw_pool_id(w, i, id) == 0 &&
                fw_inprogress(w, id) > 0)
                return (long)i;
        tl_sleep_ms(50);
    }
    return -1;
}

int sc_kill_a_pool(world *w)
{
    char id[32];
    long i = busy_pool(w, id);
    if (i < 0) return -1;
    long long n = fw_inprogress(w, id);
    fw_pool_kill(w, (size_t)i, 0);
    long long at = w->faults[w->nfaults - 1].at_ms;
    say("SIGKILL pool %s with %lld jobs in progress (its commands die with it); a new pool "
        "starts",
        w->pools[i].tag, n);
    fw_pool_start(w);
    long long took = fw_wait_recovered(w, id, at, 40000, "SIGKILL of a pool");
    say("its jobs were back in their queues after %.1f s", (double)took / 1000);
    tl_sleep_ms(2000);
    return took >= 0 && took <= FW_RECOVERY_BOUND_MS ? 0 : -1;
}

int sc_stop_past_dead_time(world *w)
{
    char id[32];
    long i = busy_pool(w, id);
    if (i < 0) return -1;
    long long n = fw_inprogress(w, id);
    fw_pool_stop(w, (size_t)i);
    long long at = w->pools[i].stopped_at;
    say("SIGSTOP pool %s with %lld jobs in progress, for %d s (past the %d s dead time and the "
        "recovery bound; its commands run on)",
        w->pools[i].tag, n, FW_FREEZE_MS / 1000, CW_REAPER_DEAD_TIME);
    long long took = fw_wait_recovered(w, id, at, FW_FREEZE_MS - 1000, "SIGSTOP of a pool");
    say("its jobs were back in their queues after %.1f s", (double)took / 1000);
    while (fw_now_ms() - at < FW_FREEZE_MS)
        tl_sleep_ms(100);
    fw_pool_cont(w, (size_t)i);
    say("SIGCONT pool %s: it finds its jobs taken back and goes on", w->pools[i].tag);
    tl_sleep_ms(4000);
    return took >= 0 && took <= FW_RECOVERY_BOUND_MS ? 0 : -1;
}

/* ---------------------------------------------------------------- Redis */

int sc_client_pause(world *w)
{
    redisReply *r = fw_cmd(w, "CLIENT PAUSE 3000 ALL");
    int ok = r && r->type == REDIS_REPLY_STATUS;
    if (r) freeReplyObject(r);
    say("CLIENT PAUSE 3000 ALL: every client, pools and generator, waits 3 s");
    tl_sleep_ms(6000);
    return ok ? 0 : -1;
}

int sc_redis_restart(world *w)
{
    long long t0 = fw_now_ms();
    if (tl_server_restart(&w->redis, 1) != 0) {
        say("redis-server did not come back");
        return -1;
    }
    if (w->ctl) redisFree(w->ctl);
    w->ctl = NULL;
    redisReply *r = fw_cmd(w, "CONFIG SET maxmemory-policy noeviction");
    if (r) freeReplyObject(r);
    say("SIGKILL redis-server, restart from its AOF (appendfsync always): down %lld ms",
        fw_now_ms() - t0);
    tl_sleep_ms(6000);
    return r ? 0 : -1;
}

static long long failed_enqueues(world *w)
{
    pthread_mutex_lock(&w->mu);
    long long n = 0;
    for (size_t i = 0; i < w->nenq; i++)
        n += w->enq[i].status == FH_ENQ_FAILED;
    pthread_mutex_unlock(&w->mu);
    return n;
}

int sc_out_of_memory(world *w)
{
    redisReply *r = fw_cmd(w, "INFO memory");
    long long used = 0;
    const char *p = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, "used_memory:") : NULL;
    if (p) used = atoll(p + 12);
    if (r) freeReplyObject(r);
    if (used <= 0) return -1;
    long long failed = failed_enqueues(w);
    r = fw_cmd(w, "CONFIG SET maxmemory %lld", used / 2);
    if (r) freeReplyObject(r);
    tl_sleep_ms(4000);
    r = fw_cmd(w, "CONFIG SET maxmemory 0");
    if (r) freeReplyObject(r);
    long long refused = failed_enqueues(w) - failed;
    say("out of memory (maxmemory below use, noeviction) for 4 s: %lld enqueues refused "
        "with nothing written",
        refused);
    tl_sleep_ms(4000);
    return refused > 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- damaged keys */

static int damage_empty_queue(world *w, const char *name)
{
    static const char script[] = "if redis.call('LLEN', KEYS[1]) == 0 then "
                                 "redis.call('SET', KEYS[1], 'oops') return 1 end return 0";
    for (int i = 0; i < 400; i++) {
        if (fw_int(w, "EVAL %s 1 %s:jobs:%s", script, w->ns, name) == 1) return 0;
        tl_sleep_ms(5);
    }
    return -1;
}

int sc_damaged_keys(world *w)
{
    int rc = 0;
    /* A queue holding a string while its scheduled jobs come due: the requeuer must send
     * them to dead with the reason (it used to drop them). */
    if (damage_empty_queue(w, "sched") != 0) {
        say("could not catch the sched queue empty");
        return -1;
    }
    tl_sleep_ms(4000);
    static const char repair[] =
        "if redis.call('TYPE', KEYS[1]).ok == 'string' then redis.call('DEL', KEYS[1]) end";
    redisReply *r = fw_cmd(w, "EVAL %s 1 %s:jobs:sched", repair, w->ns);
    if (r) freeReplyObject(r);
    long long dead = fw_int(w, "ZCARD %s:dead", w->ns);
    cwork_redis *redis = cwork_redis_new(w->redis.url, NULL, NULL);
    cwork_client *client = cwork_client_new(redis, w->ns, NULL);
    int64_t retried = 0;
    cwork_error err = {0};
    if (cwork_client_retry_all_dead(client, "sched", &retried, &err) != 0) {
        say("retrying the dead sched jobs failed: %s", err.message);
        rc = -1;
    }
    say("%s:jobs:sched held a string for 4 s: %lld due jobs went to dead with the reason, "
        "%lld retried after the repair",
        w->ns, dead, (long long)retried);
    if (dead <= 0) rc = -1;

    /* A lock counter that is not a number: the type is not fetched, releases are
     * reported; then the counter is set back to the sum of lock_info (as the reaper's
     * pass 3 would). */
    r = fw_cmd(w, "SET %s:jobs:limited:lock garbage", w->ns);
    if (r) freeReplyObject(r);
    tl_sleep_ms(3000);
    static const char relock[] =
        "local s = 0 for _, v in ipairs(redis.call('HVALS', KEYS[2])) do s = s + tonumber(v) end "
        "redis.call('SET', KEYS[1], s) return s";
    long long held =
        fw_int(w, "EVAL %s 2 %s:jobs:limited:lock %s:jobs:limited:lock_info", relock, w->ns, w->ns);
    say("%s:jobs:limited:lock held \"garbage\" for 3 s; set back to the sum of lock_info (%lld)",
        w->ns, held);

    /* known_jobs of the wrong type: registering enqueues are refused whole, the
     * requeuers still move the pools' own jobs. */
    long long failed = failed_enqueues(w);
    r = fw_cmd(w, "DEL %s:known_jobs", w->ns);
    if (r) freeReplyObject(r);
    r = fw_cmd(w, "SET %s:known_jobs oops", w->ns);
    if (r) freeReplyObject(r);
    tl_sleep_ms(3000);
    r = fw_cmd(w, "DEL %s:known_jobs", w->ns);
    if (r) freeReplyObject(r);
    r = fw_cmd(w, "SADD %s:known_jobs fast limited sched", w->ns);
    if (r) freeReplyObject(r);
    say("%s:known_jobs held a string for 3 s: %lld enqueues refused with nothing written", w->ns,
        failed_enqueues(w) - failed);
    cwork_client_free(client);
    cwork_redis_free(redis);
    tl_sleep_ms(3000);
    return rc;
}

/* ---------------------------------------------------------------- the reaper lock */

/* Pool ids of the live pools' heartbeats, by pid. */
static size_t pool_ids(world *w, char ids[][32], size_t cap)
{
    size_t n = 0;
    redisReply *m = fw_cmd(w, "SMEMBERS %s:worker_pools", w->ns);
    for (size_t i = 0; m && m->type == REDIS_REPLY_ARRAY && i < m->elements && n < cap; i++) {
        long long has = fw_int(w, "EXISTS %s:worker_pools:%s", w->ns, m->element[i]->str);
        if (has == 1 && strncmp(m->element[i]->str, "fake", 4) != 0)
            snprintf(ids[n++], 32, "%s", m->element[i]->str);
    }
    if (m) freeReplyObject(m);
    return n;
}

static long long inprogress_of(world *w, char ids[][32], size_t n)
{
    long long sum = 0;
    static const char *const names[] = {"fast", "limited", "sched"};
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            long long v = fw_int(w, "LLEN %s:jobs:%s:%s:inprogress", w->ns, names[k], ids[i]);
            sum += v > 0 ? v : 0;
        }
    return sum;
}

/* Stale pools that make the next reaper cycles long enough to be caught in (and that
 * go again once one was: they are a device to catch a cycle, not part of what is
 * measured). */
static void stale_pools(world *w, int n, int add)
{
    redisContext *c = fw_ctl(w);
    if (!c) return;
    long long old = fw_now_ms() / 1000 - 600;
    for (int i = 0; i < n; i++) {
        if (!add) {
            redisAppendCommand(c, "SREM %s:worker_pools fake%d", w->ns, i);
            redisAppendCommand(c, "DEL %s:worker_pools:fake%d", w->ns, i);
            continue;
        }
        redisAppendCommand(c, "SADD %s:worker_pools fake%d", w->ns, i);
        redisAppendCommand(c,
                           "HSET %s:worker_pools:fake%d heartbeat_at %lld started_at %lld "
                           "job_names fast,limited,sched concurrency 1 worker_ids w host h pid 1",
                           w->ns, i, old, old);
    }
    for (int i = 0; i < 2 * n; i++) {
        redisReply *r = NULL;
        if (redisGetReply(c, (void **)&r) != REDIS_OK) break;
        freeReplyObject(r);
    }
}

/* A reaper killed in the middle of its cycle leaves reaper_lock behind: recovery of the
 * jobs of crashed pools must not wait for it (SET NX EX <reap period>: 300 s). To kill
 * the holder mid-cycle without knowing which pool it is, every pool is frozen the moment
 * the lock is seen; if the lock is still there, its holder is among them, and they all
 * die. Then new pools start. */
int sc_kill_the_reaper_lock_holder(world *w)
{
    char ids[FW_MAX_POOLS][32];
    size_t nids = pool_ids(w, ids, FW_MAX_POOLS);
    int caught = 0;
    long long stopped_at = 0;
    for (int attempt = 0; attempt < 6 && !caught; attempt++) {
        stale_pools(w, 300, 1);
        long long t0 = fw_now_ms();
        while (!caught && fw_now_ms() - t0 < 12000) {
            if (fw_int(w, "EXISTS %s:reaper_lock", w->ns) != 1) {
                usleep(500);
                continue;
            }
            stopped_at = fw_now_ms();
            for (size_t i = 0; i < w->npools; i++)
                if (w->pools[i].alive) kill(w->pools[i].pid, SIGSTOP);
            if (fw_int(w, "EXISTS %s:reaper_lock", w->ns) == 1) {
                caught = 1;
                break;
            }
            for (size_t i = 0; i < w->npools; i++)
                if (w->pools[i].alive) kill(w->pools[i].pid, SIGCONT);
            break; /* the cycle ended: add stale pools again */
        }
    }
    if (!caught) {
        say("never caught a reaper holding its lock");
        return -1;
    }
    long long ttl = fw_int(w, "TTL %s:reaper_lock", w->ns);
    size_t killed = 0;
    for (size_t i = 0; i < w->npools; i++)
        if (w->pools[i].alive) {
            fw_pool_kill(w, i, stopped_at);
            killed++;
        }
    stale_pools(w, 300, 0);
    say("caught a reaper cycle holding reaper_lock (TTL %lld s): SIGKILL all %zu pools with "
        "%lld jobs in progress; 3 new pools start",
        ttl, killed, inprogress_of(w, ids, nids));
    for (int i = 0; i < 3; i++)
        fw_pool_start(w);
    long long left = 1;
    while ((left = inprogress_of(w, ids, nids)) > 0 && fw_now_ms() - stopped_at < 30000)
        tl_sleep_ms(100);
    if (w->nrecovery < sizeof w->recovery / sizeof w->recovery[0]) {
        snprintf(w->recovery[w->nrecovery].what, sizeof w->recovery[0].what,
                 "SIGKILL of the reaper_lock holder");
        w->recovery[w->nrecovery++].ms = left == 0 ? fw_now_ms() - stopped_at : -1;
    }
    if (left == 0) {
        say("the killed pools' jobs were back in their queues after %.1f s",
            (double)(fw_now_ms() - stopped_at) / 1000);
    } else {
        ttl = fw_int(w, "TTL %s:reaper_lock", w->ns);
        say("STALLED: %lld jobs of the killed pools still in progress after 30 s; reaper_lock "
            "TTL %lld s. Deleting the lock by hand so that the suite can go on",
            left, ttl);
        redisReply *r = fw_cmd(w, "DEL %s:reaper_lock", w->ns);
        if (r) freeReplyObject(r);
        long long t0 = fw_now_ms();
        while (inprogress_of(w, ids, nids) > 0 && fw_now_ms() - t0 < 30000)
            tl_sleep_ms(200);
    }
    return left == 0 ? 0 : -1;
}
