/* Shared by the transport tests (TLS, ACL, Sentinel, Cluster): shell commands for set-up
 * (openssl, redis-cli), private servers started with the test's own arguments, and one
 * run of every role (enqueuer, pool, client, web server) over a given cwork_redis. */
#ifndef CWORK_TRANSPORT_TESTUTIL_H
#define CWORK_TRANSPORT_TESTUTIL_H

#include "cwork.h"
#include "cwork_web.h"
#include "testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs a shell command (printf-style), its output to /dev/null unless it says
 * otherwise; returns its exit status (-1 when it could not run). */
__attribute__((unused, format(printf, 1, 2))) static int tt_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

/* True when something accepts TCP connections on 127.0.0.1:port. */
__attribute__((unused)) static int tt_port_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    if (fd >= 0) close(fd);
    return ok;
}

/* A free loopback port (nothing listens there now), from a random start, below the
 * kernel's ephemeral range (32768…) so that no client socket holds it. */
__attribute__((unused)) static int tt_free_port(void)
{
    static unsigned next;
    if (!next) {
        unsigned r;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = (unsigned)getpid();
        next = r;
    }
    for (int i = 0; i < 1000; i++) {
        int port = 20000 + (int)(next++ % 12000);
        if (!tt_port_open(port)) return port;
    }
    return -1;
}

/* A free port for a cluster node, whose bus listens on port + 10000: both free, and the
 * bus port too below the ephemeral range (so data ports 20000…22767). */
__attribute__((unused)) static int tt_free_cluster_port(void)
{
    for (int i = 0; i < 1000; i++) {
        int port = tt_free_port();
        if (port < 0) return -1;
        port = 20000 + (port - 20000) % 2768;
        if (!tt_port_open(port) && !tt_port_open(port + 10000)) return port;
    }
    return -1;
}

/* One command to one node by port, on a fresh connection with a 5 s timeout (a node
 * may have just been killed); NULL when the node cannot be reached. For set-up and
 * checks of private servers, not the library under test. */
__attribute__((unused, format(printf, 2, 3))) static redisReply *tt_node_cmd(int port,
                                                                             const char *fmt, ...)
{
    struct timeval tv = {5, 0};
    redisContext *rc = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!rc || rc->err) {
        if (rc) redisFree(rc);
        return NULL;
    }
    redisSetTimeout(rc, tv);
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(rc, fmt, ap);
    va_end(ap);
    redisFree(rc);
    return r;
}

/* A cluster asked of port is ready: its state is ok and every master of CLUSTER SLOTS
 * has a replica. */
__attribute__((unused)) static int tt_cluster_ready(int port)
{
    redisReply *info = tt_node_cmd(port, "CLUSTER INFO");
    int ok = info && info->type == REDIS_REPLY_STRING && strstr(info->str, "cluster_state:ok");
    if (info) freeReplyObject(info);
    redisReply *slots = ok ? tt_node_cmd(port, "CLUSTER SLOTS") : NULL;
    ok = slots && slots->type == REDIS_REPLY_ARRAY && slots->elements > 0;
    for (size_t i = 0; ok && i < slots->elements; i++)
        ok = slots->element[i]->elements >= 4; /* start, end, master, a replica */
    if (slots) freeReplyObject(slots);
    return ok;
}

/* A private server process: argv is run as given (stdout/stderr to log, if set), then
 * the port is polled until it accepts connections. 0, or -1 (and the process killed). */
typedef struct tt_proc {
    pid_t pid;
    int port;
} tt_proc;

__attribute__((unused)) static int tt_spawn(tt_proc *p, int port, const char *log,
                                            const char *const *argv)
{
    p->port = port;
    p->pid = fork();
    if (p->pid < 0) return -1;
    if (p->pid == 0) {
        int fd = open(log ? log : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) dup2(fd, 1), dup2(fd, 2);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    for (int i = 0; i < 400; i++) { /* up to ~20 s: sanitizers and two loaded cores */
        if (tt_port_open(port)) return 0;
        if (waitpid(p->pid, NULL, WNOHANG) == p->pid) {
            p->pid = 0;
            return -1;
        }
        tl_sleep_ms(50);
    }
    kill(p->pid, SIGKILL);
    waitpid(p->pid, NULL, 0);
    p->pid = 0;
    return -1;
}

__attribute__((unused)) static void tt_kill(tt_proc *p, int sig)
{
    if (p->pid > 0) {
        kill(p->pid, sig);
        while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR) {
        }
        p->pid = 0;
    }
}

/* The redis-server on port is the process pid (INFO server's process_id): a port found
 * free can be taken by another test's server before ours binds it, and then ours exits
 * while the port answers. */
__attribute__((unused)) static int tt_redis_is(int port, pid_t pid)
{
    redisReply *info = tt_node_cmd(port, "INFO server");
    char want[48];
    snprintf(want, sizeof want, "\nprocess_id:%ld\r", (long)pid);
    int ours = info && info->type == REDIS_REPLY_STRING && strstr(info->str, want);
    if (info) freeReplyObject(info);
    return ours;
}

/* A Redis Cluster node on a free port pair (tried five times), its files in dir:
 * nodes-PORT.conf, dump-PORT.rdb, no persistence; extra (NULL-terminated, or NULL) adds
 * redis-server arguments. The node is proved to be ours (tt_redis_is), so that tests run
 * in parallel (ctest -j) never take each other's nodes. 0 or -1. */
__attribute__((unused)) static int tt_spawn_cluster_node(tt_proc *p, const char *dir,
                                                         const char *const *extra)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        int port = tt_free_cluster_port();
        char port_s[16], conf[64], rdb[32];
        snprintf(port_s, sizeof port_s, "%d", port);
        snprintf(conf, sizeof conf, "nodes-%d.conf", port);
        snprintf(rdb, sizeof rdb, "dump-%d.rdb", port);
        const char *argv[32] = {"redis-server",
                                "--port",
                                port_s,
                                "--bind",
                                "127.0.0.1",
                                "--cluster-enabled",
                                "yes",
                                "--cluster-config-file",
                                conf,
                                "--save",
                                "",
                                "--appendonly",
                                "no",
                                "--dir",
                                dir,
                                "--dbfilename",
                                rdb};
        size_t n = 17;
        for (size_t i = 0; extra && extra[i] && n + 1 < sizeof argv / sizeof *argv; i++)
            argv[n++] = extra[i];
        argv[n] = NULL;
        if (tt_spawn(p, port, NULL, argv) != 0) continue;
        if (tt_redis_is(port, p->pid)) return 0;
        tt_kill(p, SIGKILL); /* another server has the port: ours has exited or will */
    }
    return -1;
}

/* The port of the master serving slot, as the node on port says (CLUSTER SLOTS); 0 if
 * unknown or the node does not answer. */
__attribute__((unused)) static int tt_cluster_master_of(int port, unsigned slot)
{
    redisReply *x = tt_node_cmd(port, "CLUSTER SLOTS");
    int master = 0;
    for (size_t k = 0; x && x->type == REDIS_REPLY_ARRAY && k < x->elements; k++) {
        redisReply *r = x->element[k];
        if (r->elements >= 3 && (unsigned)r->element[0]->integer <= slot &&
            slot <= (unsigned)r->element[1]->integer)
            master = (int)r->element[2]->element[1]->integer;
    }
    if (x) freeReplyObject(x);
    return master;
}

/* A fresh temporary directory in buf ("/tmp/cwork-<tag>-XXXXXX"); 0 or -1. */
__attribute__((unused)) static int tt_tmpdir(char *buf, size_t size, const char *tag)
{
    snprintf(buf, size, "/tmp/cwork-%s-XXXXXX", tag);
    return mkdtemp(buf) ? 0 : -1;
}

__attribute__((unused)) static void tt_rmdir(const char *dir)
{
    if (dir[0] && strncmp(dir, "/tmp/cwork-", 11) == 0) tt_sh("rm -rf '%s'", dir);
}

/* Runs the cwork command ($CWORK_CLI) with argv (NULL-terminated, without the program);
 * its stdout and stderr go to out (NUL-terminated). Returns the exit status, -1 when it
 * could not run or was killed (after timeout_s). */
__attribute__((unused)) static int tt_cli(char *out, size_t size, int timeout_s,
                                          const char *const *args)
{
    const char *cli = getenv("CWORK_CLI");
    if (!cli) {
        snprintf(out, size, "CWORK_CLI is not set (ctest sets it)");
        return -1;
    }
    char path[] = "/tmp/cwork-cli-out-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 1), dup2(fd, 2);
        const char *argv[32] = {cli};
        int n = 1;
        for (; args && *args && n < 31; args++)
            argv[n++] = *args;
        argv[n] = NULL;
        execv(cli, (char *const *)argv);
        _exit(127);
    }
    close(fd);
    int status = -1, done = 0;
    for (int i = 0; i < timeout_s * 20 && !done; i++) {
        done = waitpid(pid, &status, WNOHANG) == pid;
        if (!done) tl_sleep_ms(50);
    }
    if (!done) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    char *text = tl_read_file(path, NULL);
    snprintf(out, size, "%s", text ? text : "");
    free(text);
    unlink(path);
    return done && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The cwork command with this URL: enqueue a job, list the queues (it must be there),
 * and a short demo run. Failures through tl_fail. */
__attribute__((unused)) static void tt_cli_roles(const char *url, const char *ns)
{
    char out[8192];
    const char *enq[] = {"enqueue", "--redis", url, "--ns", ns, "cli_job", "{\"n\":1}", NULL};
    int rc = tt_cli(out, sizeof out, 30, enq);
    if (rc != 0) tl_fail(__FILE__, __LINE__, "cwork enqueue: %d %s", rc, out);
    const char *queues[] = {"queues", "--redis", url, "--ns", ns, "--json", NULL};
    rc = tt_cli(out, sizeof out, 30, queues);
    if (rc != 0 || !strstr(out, "cli_job"))
        tl_fail(__FILE__, __LINE__, "cwork queues: %d %s", rc, out);
    const char *demo[] = {"demo", "--redis",  url,      "--ns", ns,  "--duration",
                          "2",    "--no-web", "--rate", "50",   NULL};
    rc = tt_cli(out, sizeof out, 60, demo);
    if (rc != 0) tl_fail(__FILE__, __LINE__, "cwork demo: %d %.300s", rc, out);
}

/* ---------------------------------------------------------------- every role */

static pthread_mutex_t tt_mu = PTHREAD_MUTEX_INITIALIZER;
static long tt_ran;

static int tt_count_job(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    pthread_mutex_lock(&tt_mu);
    tt_ran++;
    pthread_mutex_unlock(&tt_mu);
    return 0;
}

/* GET path from 127.0.0.1:port; the status, and the body (NUL-terminated) in body. */
__attribute__((unused)) static int tt_http_get(int port, const char *path, char *body, size_t size)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    char req[512];
    int n =
        snprintf(req, sizeof req,
                 "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", path, port);
    if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        close(fd);
        return -1;
    }
    static char buf[65536];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof buf - 1 && (r = recv(fd, buf + got, sizeof buf - 1 - got, 0)) > 0)
        got += (size_t)r;
    close(fd);
    buf[got] = '\0';
    int status = -1;
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1) return -1;
    const char *b = strstr(buf, "\r\n\r\n");
    snprintf(body, size, "%s", b ? b + 4 : "");
    return status;
}

/* Enqueues njobs jobs "tt_job", runs them with a pool, lists the queues with a client and
 * through the web server, all over r in namespace ns. Failures are reported through
 * tl_fail with the step and the library's message; returns the number of jobs run. */
__attribute__((unused)) static long tt_every_role(cwork_redis *r, const char *ns, int njobs)
{
    cwork_error err = {0};
    pthread_mutex_lock(&tt_mu);
    tt_ran = 0;
    pthread_mutex_unlock(&tt_mu);

    cwork_enqueuer *enq = cwork_enqueuer_new(r, ns, &err);
    if (!enq) {
        tl_fail(__FILE__, __LINE__, "enqueuer: %s", err.message);
        return 0;
    }
    cwork_args *args = cwork_args_new();
    for (int i = 0; i < njobs; i++) {
        cwork_args_set_int64(args, "i", i);
        if (cwork_enqueue(enq, "tt_job", args, NULL, &err) != CWORK_OK) {
            tl_fail(__FILE__, __LINE__, "enqueue %d: %s", i, err.message);
            break;
        }
    }
    cwork_args_free(args);
    cwork_enqueuer_free(enq);

    cwork_client *cl = cwork_client_new(r, ns, &err);
    if (!cl) {
        tl_fail(__FILE__, __LINE__, "client: %s", err.message);
    } else {
        cwork_queue_info *q = NULL;
        size_t nq = 0;
        if (cwork_client_queues(cl, &q, &nq, &err) != 0)
            tl_fail(__FILE__, __LINE__, "client queues: %s", err.message);
        else if (nq != 1 || strcmp(q[0].job_name, "tt_job") != 0 || q[0].count != njobs)
            tl_fail(__FILE__, __LINE__, "client queues: %zu queues, want tt_job with %d", nq,
                    njobs);
        cwork_queue_infos_free(q, nq);
        cwork_client_free(cl);
    }

    cwork_web_options wo;
    cwork_web_options_init(&wo);
    wo.listen = "127.0.0.1:0";
    cwork_web *web = cwork_web_start(r, ns, &wo, &err);
    if (!web) {
        tl_fail(__FILE__, __LINE__, "web: %s", err.message);
    } else {
        char body[4096];
        int status = tt_http_get(cwork_web_port(web), "/queues", body, sizeof body);
        if (status != 200 || !strstr(body, "\"tt_job\""))
            tl_fail(__FILE__, __LINE__, "GET /queues: %d %.200s", status, body);
        cwork_web_free(web);
    }

    cwork_pool_options po;
    cwork_pool_options_init(&po);
    po.concurrency = 4;
    cwork_pool *pool = cwork_pool_new(r, ns, &po, &err);
    if (!pool) {
        tl_fail(__FILE__, __LINE__, "pool: %s", err.message);
        return 0;
    }
    if (cwork_pool_register(pool, "tt_job", tt_count_job, NULL, &err) != 0 ||
        cwork_pool_start(pool, &err) != 0)
        tl_fail(__FILE__, __LINE__, "pool start: %s", err.message);
    else if (cwork_pool_drain(pool, 60000, &err) != 0)
        tl_fail(__FILE__, __LINE__, "pool drain: %s", err.message);
    if (cwork_pool_stop(pool, 10000, &err) != 0)
        tl_fail(__FILE__, __LINE__, "pool stop: %s", err.message);
    cwork_pool_free(pool);
    pthread_mutex_lock(&tt_mu);
    long ran = tt_ran;
    pthread_mutex_unlock(&tt_mu);
    if (ran != njobs) tl_fail(__FILE__, __LINE__, "the pool ran %ld jobs, want %d", ran, njobs);
    return ran;
}

#endif
