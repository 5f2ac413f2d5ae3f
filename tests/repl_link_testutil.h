/* A replication link the test controls: a TCP relay on loopback between replicas
 * (replicaof 127.0.0.1 <relay port>) and their master. Frozen, it stops reading what the
 * master sends, so that the master goes on acknowledging writes that no replica has (as
 * on a slow or saturated link, where asynchronous replication lags); cut, it closes
 * every link without passing on what was held back, as the death of the master would
 * have left it. That makes "what a failover can lose" happen on loopback, where the
 * replicas are otherwise never more than a fraction of a millisecond behind. */
#ifndef CWORK_REPL_LINK_TESTUTIL_H
#define CWORK_REPL_LINK_TESTUTIL_H

#include "transport_testutil.h"

#include <poll.h>
#include <stdatomic.h>

#define RL_MAX_LINKS 8

typedef struct rl_relay {
    int listen_fd, port, master_port;
    pthread_t thread;
    int running;
    atomic_int frozen; /* master → replica bytes stay unread */
    atomic_int cut;    /* set: close every link; the relay clears it when done */
    atomic_int stop;
    int replica_fd[RL_MAX_LINKS], master_fd[RL_MAX_LINKS]; /* -1: free */
} rl_relay;

static int rl_dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) return fd;
    if (fd >= 0) close(fd);
    return -1;
}

static void rl_close_link(rl_relay *r, int i)
{
    if (r->replica_fd[i] >= 0) close(r->replica_fd[i]);
    if (r->master_fd[i] >= 0) close(r->master_fd[i]);
    r->replica_fd[i] = r->master_fd[i] = -1;
}

/* Moves what from has to to; 0, or -1 when either side is gone. */
static int rl_pass(int from, int to)
{
    char buf[65536];
    ssize_t n = recv(from, buf, sizeof buf, 0);
    if (n <= 0) return -1;
    for (ssize_t off = 0; off < n;) {
        ssize_t w = send(to, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
        if (w <= 0) return -1;
        off += w;
    }
    return 0;
}

static void *rl_main(void *arg)
{
    rl_relay *r = arg;
    while (!atomic_load(&r->stop)) {
        if (atomic_load(&r->cut)) {
            for (int i = 0; i < RL_MAX_LINKS; i++)
                rl_close_link(r, i);
            atomic_store(&r->cut, 0);
        }
        struct pollfd p[1 + 2 * RL_MAX_LINKS];
        int who[1 + 2 * RL_MAX_LINKS], np = 0;
        p[np] = (struct pollfd){.fd = r->listen_fd, .events = POLLIN}, who[np++] = -1;
        int frozen = atomic_load(&r->frozen);
        for (int i = 0; i < RL_MAX_LINKS; i++) {
            if (r->replica_fd[i] < 0) continue;
            p[np] = (struct pollfd){.fd = r->replica_fd[i], .events = POLLIN}, who[np++] = i;
            if (!frozen)
                p[np] = (struct pollfd){.fd = r->master_fd[i], .events = POLLIN},
                who[np++] = RL_MAX_LINKS + i;
        }
        if (poll(p, (nfds_t)np, 20) <= 0) continue;
        if (atomic_load(&r->cut) || atomic_load(&r->frozen) != frozen) continue;
        for (int k = 0; k < np; k++) {
            if (!p[k].revents) continue;
            if (who[k] < 0) {
                int c = accept(r->listen_fd, NULL, NULL);
                if (c >= 0) fcntl(c, F_SETFD, FD_CLOEXEC);
                int m = c >= 0 ? rl_dial(r->master_port) : -1;
                int slot = -1;
                for (int i = 0; i < RL_MAX_LINKS && slot < 0 && m >= 0; i++)
                    if (r->replica_fd[i] < 0) slot = i;
                if (slot < 0) {
                    if (c >= 0) close(c);
                    if (m >= 0) close(m);
                    continue;
                }
                r->replica_fd[slot] = c, r->master_fd[slot] = m;
                continue;
            }
            int i = who[k] % RL_MAX_LINKS, from_master = who[k] >= RL_MAX_LINKS;
            if (r->replica_fd[i] < 0) continue; /* closed earlier in this round */
            int rc = from_master ? rl_pass(r->master_fd[i], r->replica_fd[i])
                                 : rl_pass(r->replica_fd[i], r->master_fd[i]);
            if (rc != 0) rl_close_link(r, i);
        }
    }
    for (int i = 0; i < RL_MAX_LINKS; i++)
        rl_close_link(r, i);
    return NULL;
}

/* Listens on a free loopback port for replicas of the master on master_port. 0 or -1. */
__attribute__((unused)) static int rl_start(rl_relay *r, int master_port)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < RL_MAX_LINKS; i++)
        r->replica_fd[i] = r->master_fd[i] = -1;
    r->master_port = master_port;
    for (int attempt = 0; attempt < 5; attempt++) {
        r->port = tt_free_port();
        r->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        setsockopt(r->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)r->port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (bind(r->listen_fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
            listen(r->listen_fd, 8) == 0)
            break;
        close(r->listen_fd);
        r->listen_fd = -1;
    }
    if (r->listen_fd < 0) return -1;
    if (pthread_create(&r->thread, NULL, rl_main, r) != 0) {
        close(r->listen_fd);
        return -1;
    }
    r->running = 1;
    return 0;
}

/* Cuts every link (nothing held back is passed on) and waits until it is done. */
__attribute__((unused)) static void rl_cut(rl_relay *r)
{
    atomic_store(&r->cut, 1);
    for (int i = 0; i < 500 && atomic_load(&r->cut); i++)
        tl_sleep_ms(2);
}

__attribute__((unused)) static void rl_stop(rl_relay *r)
{
    if (!r->running) return;
    atomic_store(&r->stop, 1);
    pthread_join(r->thread, NULL);
    close(r->listen_fd);
    r->running = 0;
}

#endif
