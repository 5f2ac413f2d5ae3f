/* What TLS costs: the same redis-server over plain TCP and over TLS, in one run.
 *
 *   bench_tls [--plain URL --tls URL] [--jobs N] [--pool-jobs N] [--rounds N]
 *
 * Without URLs it makes a CA and a server certificate with openssl, starts a private
 * redis-server with a plain and a TLS port on loopback, and removes both at exit. For
 * each transport it measures PING round trips, cwork_enqueue (one job per call),
 * cwork_enqueue_batch (1,000 per call) and a pool running no-op jobs (concurrency 20,
 * 5 queues), alternating the two transports round by round so that a machine getting
 * busier or quieter affects both alike, and prints the median of each figure and the
 * median of the per-round TLS/TCP ratios. On a shared machine throughput moves with
 * the neighbours, so it also prints CPU per operation (this process, pool threads
 * included, plus redis-server's own from INFO), which is what TLS really costs. */
#include "cwork.h"
#include "redis.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define QUEUES 5
#define BATCH 1000
#define MAX_ROUNDS 15
#define METRICS 4

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const cwork_error *err);

/* redis-server's CPU so far (used_cpu_sys + used_cpu_user of INFO cpu), in seconds. */
static double server_cpu_s(cwork_redis *r)
{
    cw_conn *c;
    cwork_error err;
    if (cw_redis_checkout(r, &c, &err) != 0) die("checkout", &err);
    redisReply *x = NULL;
    cw_conn_commandf(c, &x, &err, "INFO cpu");
    double s = 0;
    const char *p;
    if (x && x->str && (p = strstr(x->str, "used_cpu_sys:"))) s += atof(p + 13);
    if (x && x->str && (p = strstr(x->str, "used_cpu_user:"))) s += atof(p + 14);
    if (x) freeReplyObject(x);
    cw_redis_checkin(r, c);
    return s;
}

/* CPU spent between cpu_mark calls: client + server, accumulated into *acc. */
static double cpu_mark_client, cpu_mark_server;
static void cpu_start(cwork_redis *r)
{
    cpu_mark_server = server_cpu_s(r);
    cpu_mark_client = cpu_now_s();
}
static void cpu_stop(cwork_redis *r, double *acc)
{
    double client = cpu_now_s() - cpu_mark_client;
    *acc += client + (server_cpu_s(r) - cpu_mark_server);
}
static double *cpu_acc; /* where the measured part of the current figure goes */

static void die(const char *what, const cwork_error *err)
{
    fprintf(stderr, "bench_tls: %s: %s\n", what, err ? err->message : "failed");
    exit(1);
}

/* ---------------------------------------------------------------- a private server */

static char dir_[64];
static pid_t server_;

static int port_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    close(fd);
    return ok;
}

static int free_port(void)
{
    for (int i = 0; i < 1000; i++) {
        uint32_t r = 0;
        if (cw_random_bytes(&r, sizeof r) != 0) r = (uint32_t)getpid() + (uint32_t)i;
        int port = 20000 + (int)(r % 12000);
        if (!port_open(port)) return port;
    }
    return -1;
}

static void cleanup(void)
{
    if (server_ > 0) {
        kill(server_, SIGTERM);
        waitpid(server_, NULL, 0);
    }
    if (dir_[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir_);
        // NOLINTNEXTLINE(cert-env33-c): a fixed command on the benchmark's own mkdtemp name
        if (system(cmd) != 0) fprintf(stderr, "bench_tls: could not remove %s\n", dir_);
    }
}

/* Certificates, then redis-server with both ports; fills the two URLs. */
static void start_server(char *plain, char *tls, size_t size)
{
    snprintf(dir_, sizeof dir_, "/tmp/cwork-bench-tls-XXXXXX");
    if (!mkdtemp(dir_)) die("mkdtemp", NULL);
    atexit(cleanup);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "(cd '%s' && K='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes' && "
             "openssl req -x509 $K -keyout ca.key -out ca.crt -days 2 -subj '/CN=bench CA' && "
             "openssl req $K -keyout server.key -out server.csr -subj '/CN=localhost' && "
             "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > san.ext && "
             "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
             "-out server.crt -days 2 -extfile san.ext) >/dev/null 2>&1",
             dir_);
    // NOLINTNEXTLINE(cert-env33-c): the openssl command makes the certificates, as in the tests
    if (system(cmd) != 0) die("openssl could not make the certificates", NULL);
    int pport = free_port(), tport = free_port();
    char ps[16], ts[16], crt[96], key[96], ca[96];
    snprintf(ps, sizeof ps, "%d", pport);
    snprintf(ts, sizeof ts, "%d", tport);
    snprintf(crt, sizeof crt, "%s/server.crt", dir_);
    snprintf(key, sizeof key, "%s/server.key", dir_);
    snprintf(ca, sizeof ca, "%s/ca.crt", dir_);
    server_ = fork();
    if (server_ == 0) {
        execlp("redis-server", "redis-server", "--port", ps, "--tls-port", ts, "--bind",
               "127.0.0.1", "--tls-cert-file", crt, "--tls-key-file", key, "--tls-ca-cert-file", ca,
               "--tls-auth-clients", "no", "--save", "", "--appendonly", "no", "--dir", dir_,
               "--loglevel", "warning", "--logfile", "redis.log", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200 && !(port_open(pport) && port_open(tport)); i++)
        usleep(50000);
    snprintf(plain, size, "redis://127.0.0.1:%d", pport);
    snprintf(tls, size, "rediss://localhost:%d?ca=%s", tport, ca);
}

/* ---------------------------------------------------------------- measurements */

static void drop_namespace(cwork_redis *r, const char *ns)
{
    cw_conn *c;
    cwork_error err;
    if (cw_redis_checkout(r, &c, &err) != 0) die("checkout", &err);
    redisReply *keys = NULL;
    cw_conn_commandf(c, &keys, &err, "KEYS %s:*", ns);
    for (size_t i = 0; keys && i < keys->elements; i++)
        cw_conn_commandf(c, NULL, &err, "UNLINK %s", keys->element[i]->str);
    if (keys) freeReplyObject(keys);
    cw_redis_checkin(r, c);
}

static double ping_seconds(cwork_redis *r, long n)
{
    cw_conn *c;
    cwork_error err;
    if (cw_redis_checkout(r, &c, &err) != 0) die("checkout", &err);
    cpu_start(r);
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        if (cw_conn_commandf(c, NULL, &err, "PING") != 0) die("PING", &err);
    }
    double t = now_s() - t0;
    cw_redis_checkin(r, c);
    cpu_stop(r, cpu_acc);
    return t;
}

static double enqueue_seconds(cwork_redis *r, const char *ns, long n)
{
    cwork_error err;
    cwork_enqueuer *enq = cwork_enqueuer_new(r, ns, &err);
    cwork_args *args = cwork_args_new();
    cpu_start(r);
    double t0 = now_s();
    for (long i = 0; enq && i < n; i++) {
        cwork_args_set_int64(args, "i", i);
        if (cwork_enqueue(enq, "bench", args, NULL, &err) != 0) die("enqueue", &err);
    }
    double t = now_s() - t0;
    cpu_stop(r, cpu_acc);
    cwork_args_free(args);
    cwork_enqueuer_free(enq);
    drop_namespace(r, ns);
    return t;
}

/* n jobs spread over QUEUES names, BATCH per call; CPU counted into acc (if any). */
static double batch_seconds(cwork_redis *r, const char *ns, long n, double *acc)
{
    cwork_error err;
    cwork_enqueuer *enq = cwork_enqueuer_new(r, ns, &err);
    cwork_batch *b = enq ? cwork_batch_new(enq) : NULL;
    if (!b) die("batch", &err);
    cwork_args *args = cwork_args_new();
    char name[16];
    if (acc) cpu_start(r);
    double t0 = now_s();
    for (long done = 0; done < n; done += BATCH) {
        for (long i = done; i < done + BATCH && i < n; i++) {
            snprintf(name, sizeof name, "q%ld", i % QUEUES);
            cwork_args_set_int64(args, "i", i);
            cwork_batch_add(b, name, args, 0, 0, NULL);
        }
        if (cwork_enqueue_batch(b, &err) != 0) die("enqueue_batch", &err);
        cwork_batch_reset(b);
    }
    double t = now_s() - t0;
    if (acc) cpu_stop(r, acc);
    cwork_args_free(args);
    cwork_batch_free(b);
    cwork_enqueuer_free(enq);
    return t;
}

static int noop(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    return 0;
}

/* A pool of 20 runs n no-op jobs waiting in QUEUES queues: start to drained. */
static double pool_seconds(cwork_redis *r, const char *ns, long n)
{
    batch_seconds(r, ns, n, NULL);
    cwork_error err;
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 20;
    cwork_pool *p = cwork_pool_new(r, ns, &o, &err);
    char name[16];
    for (int q = 0; p && q < QUEUES; q++) {
        snprintf(name, sizeof name, "q%d", q);
        if (cwork_pool_register(p, name, noop, NULL, &err) != 0) die("register", &err);
    }
    cpu_start(r);
    double t0 = now_s();
    if (!p || cwork_pool_start(p, &err) != 0 || cwork_pool_drain(p, -1, &err) != 0)
        die("pool", &err);
    double t = now_s() - t0;
    cpu_stop(r, cpu_acc);
    cwork_pool_stop(p, 10000, &err);
    cwork_pool_free(p);
    drop_namespace(r, ns);
    return t;
}

int main(int argc, char **argv)
{
    const char *plain = NULL, *tls = NULL;
    long jobs = 50000, pool_jobs = 200000, pings = 50000;
    int rounds = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--plain"))
            plain = argv[i + 1];
        else if (!strcmp(argv[i], "--tls"))
            tls = argv[i + 1];
        else if (!strcmp(argv[i], "--jobs"))
            jobs = pings = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--pool-jobs"))
            pool_jobs = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]) < 1            ? 1
                     : atoi(argv[i + 1]) > MAX_ROUNDS ? MAX_ROUNDS
                                                      : atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: bench_tls [--plain URL --tls URL] [--jobs N] "
                            "[--pool-jobs N] [--rounds N]\n");
            return 2;
        }
    }
    char plain_buf[128], tls_buf[256];
    if (!plain || !tls) {
        start_server(plain_buf, tls_buf, sizeof tls_buf);
        plain = plain_buf, tls = tls_buf;
    }
    cwork_error err;
    cwork_redis *r[2] = {cwork_redis_new(plain, NULL, &err), NULL};
    if (!r[0]) die(plain, &err);
    r[1] = cwork_redis_new(tls, NULL, &err);
    if (!r[1]) die("the TLS URL", &err);
    const char *ns = "cwork-bench-tls";
    double n[METRICS] = {(double)pings, (double)jobs, (double)jobs * 4, (double)pool_jobs};
    double rate[METRICS][2][MAX_ROUNDS] = {{{0}}}, ratio[METRICS][MAX_ROUNDS] = {{0}};
    double cpu[METRICS][2] = {{0}};
    for (int round = 0; round < rounds; round++) {
        for (int k = 0; k < 2; k++) {
            int i = (round + k) % 2; /* alternate which transport goes first */
            cpu_acc = &cpu[0][i];
            rate[0][i][round] = n[0] / ping_seconds(r[i], pings);
            cpu_acc = &cpu[1][i];
            rate[1][i][round] = n[1] / enqueue_seconds(r[i], ns, jobs);
            rate[2][i][round] = n[2] / batch_seconds(r[i], ns, jobs * 4, &cpu[2][i]);
            drop_namespace(r[i], ns);
            cpu_acc = &cpu[3][i];
            rate[3][i][round] = n[3] / pool_seconds(r[i], ns, pool_jobs);
        }
        for (int m = 0; m < METRICS; m++)
            ratio[m][round] = rate[m][1][round] / rate[m][0][round];
    }
    char *shown = cwork_redact_url(tls);
    printf("plain: %s\nTLS:   %s  (%d rounds, alternating)\n", plain, shown, rounds);
    cwork_free(shown);
    printf("%-38s %12s %12s %8s %s\n", "(medians)", "plain TCP", "TLS", "TLS/TCP", "ratio range");
    const char *what[METRICS] = {"PING round trips/s", "cwork_enqueue, jobs/s (one per call)",
                                 "cwork_enqueue_batch, jobs/s", "pool no-op jobs/s (20, 5 queues)"};
    for (int m = 0; m < METRICS; m++) {
        double lo = ratio[m][0], hi = ratio[m][0];
        for (int k = 1; k < rounds; k++)
            lo = ratio[m][k] < lo ? ratio[m][k] : lo, hi = ratio[m][k] > hi ? ratio[m][k] : hi;
        printf("%-38s %12.0f %12.0f %7.0f%% %.0f–%.0f%%\n", what[m], median(rate[m][0], rounds),
               median(rate[m][1], rounds), 100 * median(ratio[m], rounds), 100 * lo, 100 * hi);
    }
    printf("%-38s %12s %12s %8s\n", "CPU per operation (client + server)", "plain TCP", "TLS",
           "TLS/TCP");
    for (int m = 0; m < METRICS; m++) {
        double a = 1e6 * cpu[m][0] / (n[m] * rounds), b = 1e6 * cpu[m][1] / (n[m] * rounds);
        printf("%-38s %10.2f µs %10.2f µs %7.0f%%\n", what[m], a, b, 100 * b / a);
    }
    cwork_redis_free(r[0]);
    cwork_redis_free(r[1]);
    return 0;
}
