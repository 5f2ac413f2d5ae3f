/* A network partition (issue 20; README "Leases"): a `cwork work` pool in a network
 * namespace the test makes, reaching Redis over a veth pair; a second pool beside
 * Redis; --max-concurrency 1 for "limited" and one job of it that runs far longer than
 * the dead time, started by the pool in the namespace. The veth is then taken down
 * (its packets dropped, no error returned to anyone) until the other pool has reaped
 * the cut-off one and run the job, then brought up again. From the runs' own lines:
 *   - the cut-off pool's command ended (stopped for the lost lease) before the other
 *     pool started the job: no overlap at all;
 *   - nothing lost, the rerun explained (the partition counts as a stop of the pool);
 *   - healed, the pool beats again.
 * Skipped (exit 77) with the reason where namespaces cannot be made (not root, no `ip`,
 * no CAP_NET_ADMIN). */
#include "faults.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SKIP 77

static char ns_name[32], host_if[16], peer_if[16];
static int third; /* 10.213.<third>.0/30 */

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

static void net_down(void)
{
    sh("ip link del %s >/dev/null 2>&1", host_if);
    sh("ip netns del %s >/dev/null 2>&1", ns_name);
}

static int net_up(void)
{
    int id = (int)getpid() % 100000;
    third = (int)getpid() % 250 + 1;
    snprintf(ns_name, sizeof ns_name, "cwfault%d", id);
    snprintf(host_if, sizeof host_if, "cwh%d", id);
    snprintf(peer_if, sizeof peer_if, "cwn%d", id);
    if (sh("ip netns add %s >/dev/null 2>&1", ns_name) != 0) return -1;
    if (sh("ip link add %s type veth peer name %s >/dev/null 2>&1", host_if, peer_if) != 0 ||
        sh("ip link set %s netns %s", peer_if, ns_name) != 0 ||
        sh("ip addr add 10.213.%d.1/30 dev %s", third, host_if) != 0 ||
        sh("ip link set %s up", host_if) != 0 ||
        sh("ip netns exec %s ip addr add 10.213.%d.2/30 dev %s", ns_name, third, peer_if) != 0 ||
        sh("ip netns exec %s ip link set %s up", ns_name, peer_if) != 0 ||
        sh("ip netns exec %s ip link set lo up", ns_name) != 0) {
        net_down();
        return -1;
    }
    return 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    setenv("FAULT_TERM_LINE", "1", 1);
    if (geteuid() != 0 || net_up() != 0) {
        printf("fault partition: SKIPPED: cannot make a network namespace and a veth pair "
               "here (needs root with CAP_NET_ADMIN and iproute2's `ip`)\n");
        return SKIP;
    }
    world w;
    if (fw_init(&w) != 0) {
        net_down();
        return 1;
    }
    w.limited_max = "1";
    char url[64];
    snprintf(url, sizeof url, "redis://10.213.%d.1:%d", third, w.redis.port);
    char bind[64];
    snprintf(bind, sizeof bind, "127.0.0.1 10.213.%d.1", third);
    redisReply *r = fw_cmd(&w, "CONFIG SET bind %s", bind);
    int bound = r && r->type == REDIS_REPLY_STATUS;
    if (r) freeReplyObject(r);
    r = fw_cmd(&w, "CONFIG SET protected-mode no");
    if (r) freeReplyObject(r);
    printf("fault partition: redis %s (and %s), namespace %s, netns %s\n", w.redis.url, url, w.ns,
           ns_name);
    fr_verdict(bound, "Redis listens on the veth too", bound);

    w.netns = ns_name, w.netns_url = url;
    int a = fw_pool_start(&w); /* in the namespace */
    w.netns = NULL;
    char id[32];
    for (long long end = fw_now_ms() + 20000; fw_now_ms() < end; tl_sleep_ms(50))
        if (fw_pool_id(&w, (size_t)a, id) == 0) break;
    fr_enqueue(&w, "part1", 30000); /* past the dead time and the reaper's check */
    fr_run runs[4] = {{"", -1, -1}, {"", -1, -1}, {"", -1, -1}, {"", -1, -1}};
    size_t n = 0;
    for (long long end = fw_now_ms() + 20000; fw_now_ms() < end && n == 0; tl_sleep_ms(20))
        n = fr_read_runs(&w, "part1", runs, 4);
    fr_verdict(n == 1 && !strcmp(runs[0].pool, w.pools[a].tag),
               "the pool in the namespace started the job", (long long)n);
    int b = fw_pool_start(&w);
    for (long long end = fw_now_ms() + 20000; fw_now_ms() < end; tl_sleep_ms(50))
        if (fw_pool_id(&w, (size_t)b, id) == 0) break;

    long long cut_at = fw_now_ms();
    sh("ip link set %s down", host_if);
    printf("partition: %s down, packets to and from pool %s dropped\n", host_if, w.pools[a].tag);
    for (long long end = fw_now_ms() + 45000; fw_now_ms() < end && n < 2; tl_sleep_ms(20))
        n = fr_read_runs(&w, "part1", runs, 4);
    fr_verdict(n == 2, "the other pool reaped the cut-off one and started the job (ms after cut)",
               n == 2 ? runs[1].start - cut_at : -1);
    fr_verdict(runs[0].end >= 0, "the cut-off pool stopped its command (ms after the cut)",
               runs[0].end >= 0 ? runs[0].end - cut_at : -1);
    long long overlap = n == 2 && runs[0].end > runs[1].start ? runs[0].end - runs[1].start : 0;
    if (runs[0].end < 0) overlap = -1;
    fr_verdict(overlap == 0, "no overlap: stopped before the other pool could start it (ms)",
               n == 2 && runs[0].end >= 0 ? runs[1].start - runs[0].end : -1);
    /* The partition goes on a little (as a 30 s one would), then heals. */
    tl_sleep_ms(2000);
    sh("ip link set %s up", host_if);
    long long healed_at = fw_now_ms();
    /* The fault the checker sees: the pool was as good as stopped while cut off. */
    pthread_mutex_lock(&w.mu);
    if (w.nfaults < FW_MAX_FAULTS) {
        fh_fault *f = &w.faults[w.nfaults++];
        f->kind = 'S';
        char tag[FH_POOL];
        memcpy(tag, w.pools[a].tag, sizeof tag); /* (both inside w) */
        memcpy(f->pool, tag, sizeof f->pool);
        f->at_ms = cut_at, f->until_ms = healed_at;
    }
    pthread_mutex_unlock(&w.mu);
    int back = 0;
    for (long long end = fw_now_ms() + 30000; fw_now_ms() < end && !back; tl_sleep_ms(50))
        back = fw_pool_id(&w, (size_t)a, id) == 0;
    fr_verdict(back, "healed, the pool beats again (ms after the heal)",
               back ? fw_now_ms() - healed_at : -1);
    fr_verdict(fw_wait_quiet(&w, 90000) == 0, "the job ran to its end on the other pool", 0);
    fr_enqueue(&w, "after1", 100);
    fr_enqueue(&w, "after2", 100);
    fr_verdict(fw_wait_quiet(&w, 30000) == 0, "new jobs run after the heal", 0);
    fr_verdict(fw_pools_shutdown(&w) == 0, "the pools stop cleanly on SIGTERM", 0);

    size_t len = 0, nev = 0, bad = 0;
    char *text = tl_read_file(w.log_path, &len);
    fh_event *ev = NULL;
    fh_parse_log(text, len, &ev, &nev, &bad);
    static const fh_limit limits[] = {{"limited", 1}};
    fh_report rep;
    fh_check(w.enq, w.nenq, ev, nev, w.faults, w.nfaults, limits, 1, 60000, &rep);
    fr_verdict(rep.lost == 0, "no job lost", (long long)rep.lost);
    fr_verdict(rep.unexplained == 0, "every duplicate explained (by the partition)",
               (long long)rep.duplicates);
    fr_verdict(!rep.max_exceeded && rep.orphan_overlap <= 1,
               "max concurrency 1 never exceeded, the cut-off command counted", rep.orphan_overlap);
    printf("figure: overlap across a partition past the dead time: %lld ms\n", overlap);
    free(ev);
    free(text);
    fw_destroy(&w, fr_failures > 0);
    net_down();
    return fr_failures ? 1 : 0;
}
