/* cwork demo: a private redis-server (unless --redis is given), a worker pool with
 * three example job types — some fail and are retried — a stream of jobs, and a
 * progress line, until Ctrl-C stops everything cleanly. */
#include "cli.h"
#include "cwork_web.h"
#include "opt.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char intro[] =
    "Usage: cwork demo [--redis URL] [--ns NS] [--rate JOBS_PER_S] [--concurrency N]\n"
    "                  [--duration DURATION]\n"
    "\n"
    "Shows cwork at work: without --redis it starts a private redis-server on a free\n"
    "loopback port (removed again at the end); then it runs a worker pool with three\n"
    "example job types — send_welcome_email (quick), resize_image (fails 25% of the\n"
    "time and is retried after 1-3 s), generate_report (slow, reports progress) — and\n"
    "feeds it a stream of jobs, printing progress every second until Ctrl-C.\n";

/* The command line. */
typedef struct demo_opts {
    cli_conn_opts conn;
    double rate;
    unsigned concurrency;
    long duration; /* seconds, 0: until Ctrl-C */
    const char *listen;
    int no_web;
} demo_opts;

/* --rate N and --concurrency N: a positive number up to a million. */
static int set_number(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    demo_opts *o = opts;
    char *end;
    double v = strtod(value, &end);
    if (end == value || *end || v <= 0 || v > 1e6) {
        fprintf(stderr, "%s: --%s needs a positive number\n", ctx->label, ctx->opt->name);
        return -1;
    }
    if (strcmp(ctx->opt->name, "rate") == 0)
        o->rate = v;
    else
        o->concurrency = (unsigned)v;
    return 0;
}

/* --duration D: whole seconds, more than none. */
static int set_duration(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    demo_opts *o = opts;
    int64_t secs;
    if (cli_opt_duration_s(ctx, value, 1, LONG_MAX, "whole seconds or a duration like 90s or 15m",
                           &secs) < 0)
        return -1;
    o->duration = (long)secs;
    return 0;
}

/* --go-flavor, --go-json: the demo's namespace is its own, no Go shares it. */
static int refuse_go(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    (void)opts;
    (void)value;
    fprintf(stderr, "%s: --%s does not apply to the demo\n", ctx->label, ctx->opt->name);
    return -1;
}

static const cli_opt demo_options[] = {
    {"rate", NULL, CLI_ARG_REQUIRED, "N", "jobs enqueued per second (default 50)", set_number, 0, 0,
     NULL, 0},
    {"concurrency", NULL, CLI_ARG_REQUIRED, "N", "executor threads (default 10)", set_number, 0, 0,
     NULL, 0},
    {"ns", NULL, CLI_ARG_REQUIRED, "NS", "namespace (default cwork-demo)", cli_set_string,
     offsetof(demo_opts, conn.ns), 0, NULL, 0},
    {"duration", NULL, CLI_ARG_REQUIRED, "D",
     "stop by itself after D: seconds, or 90s, 15m, 1h (default:\n"
     "run until Ctrl-C)",
     set_duration, 0, 0, NULL, 0},
    {"redis", NULL, CLI_ARG_REQUIRED, "URL", "use this Redis instead of a private one",
     cli_set_redis_url, offsetof(demo_opts, conn.redis_url), 0, NULL, 0},
    {"listen", NULL, CLI_ARG_REQUIRED, "ADDR",
     "where the web UI listens (default 127.0.0.1:5040, or a free\n"
     "port when that one is taken)",
     cli_set_string, offsetof(demo_opts, listen), 0, NULL, 0},
    {"no-web", NULL, CLI_ARG_NONE, NULL, "don't serve the web UI", cli_set_flag,
     offsetof(demo_opts, no_web), 0, NULL, 0},
    /* taken, to say they do not apply; not listed */
    {"go-flavor", NULL, CLI_ARG_REQUIRED, "fork|upstream", NULL, refuse_go, 0, 0, NULL, 0},
    {"go-json", NULL, CLI_ARG_REQUIRED, "go1.22|go1.21", NULL, refuse_go, 0, 0, NULL, 0},
    CLI_HELP_OPT,
    CLI_OPT_END};

const cli_command cli_demo_command = {
    .name = "demo",
    .intro = intro,
    .opts = demo_options,
    .seen_field = CLI_NO_SEEN,
};

static int refuse_argument(void *opts, const char *arg)
{
    (void)opts;
    fprintf(stderr, "cwork demo: unexpected argument %s (see cwork demo --help)\n", arg);
    return -1;
}

/* 0 to go on, 1 when --help was printed, -1 on a bad command line (reported). */
static int parse_options(int argc, char **argv, demo_opts *o)
{
    memset(o, 0, sizeof *o);
    o->conn.ns = "cwork-demo";
    o->rate = 50;
    o->concurrency = 10;
    return cli_parse(&cli_demo_command, "cwork demo", argc, argv, 2, o, refuse_argument);
}

typedef struct demo {
    char url[2048]; /* rediss:// URLs carry file paths */
    const char *ns;
    pid_t redis_pid;
    char redis_dir[64];
    atomic_int stop_feeding;
    atomic_long enqueued;
    double rate;
} demo;

/* ---------------------------------------------------------------- private redis */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A TCP connection to 127.0.0.1:port, or -1. Plain sockets rather than the library:
 * while the private server starts, refusals are expected, and the library would log
 * each as a warning. */
static int dial_loopback(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int port_taken(int port)
{
    int fd = dial_loopback(port);
    if (fd >= 0) close(fd);
    return fd >= 0;
}

/* Whether the Redis server on the port is the one with this pid: it answers INFO server
 * (within timeout_ms) with that process_id. Someone else's server that took the port
 * before ours could must not pass for ours; ours then exits, and we try another port. */
static int our_redis_answers(int port, pid_t pid, int timeout_ms)
{
    int fd = dial_loopback(port);
    if (fd < 0) return 0;
    char reply[8192], want[48];
    snprintf(want, sizeof want, "\r\nprocess_id:%d\r\n", (int)pid);
    size_t got = 0;
    int found = 0;
    if (write(fd, "INFO server\r\n", 13) == 13) {
        struct pollfd p = {fd, POLLIN, 0};
        while (!found && got < sizeof reply - 1 && poll(&p, 1, timeout_ms) > 0) {
            ssize_t n = read(fd, reply + got, sizeof reply - 1 - got);
            if (n <= 0) break;
            got += (size_t)n;
            reply[got] = '\0';
            found = strstr(reply, want) != NULL;
        }
    }
    close(fd);
    return found;
}

/* The private server's log (its last 4 KiB), without trailing newlines. */
static void read_redis_log(const demo *d, char *buf, size_t size)
{
    char path[96];
    snprintf(path, sizeof path, "%s/redis.log", d->redis_dir);
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (fseek(f, 0, SEEK_END) == 0 && ftell(f) > (long)size - 1)
        fseek(f, -(long)(size - 1), SEEK_END);
    else
        rewind(f);
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    buf[n] = '\0';
}

/* The last line of the private server's log: why it exited. */
static void print_redis_log_tail(const char *log)
{
    const char *last = strrchr(log, '\n');
    if (*log) fprintf(stderr, "cwork demo: redis-server said: %s\n", last ? last + 1 : log);
}

enum { REDIS_UP, REDIS_PORT_TAKEN, REDIS_FAILED };

/* Waits until the server just forked answers (it needs a moment to start): the pool,
 * the web UI and the feed connect only then. */
static int wait_for_redis(demo *d, int port)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        if (our_redis_answers(port, d->redis_pid, 500)) return REDIS_UP;
        int status;
        if (waitpid(d->redis_pid, &status, WNOHANG) == d->redis_pid) {
            d->redis_pid = 0;
            char log[4096];
            read_redis_log(d, log, sizeof log);
            /* Someone took the port since we looked, or holds it without listening (the
             * local end of a connection): another port will do. */
            if (port_taken(port) || strstr(log, "Failed listening on port"))
                return REDIS_PORT_TAKEN;
            if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
                fprintf(stderr, "cwork demo: cannot run redis-server (is it installed? "
                                "apt-get install redis-server)\n");
            else
                print_redis_log_tail(log);
            return REDIS_FAILED;
        }
        sleep_ms(20);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec < 10);
    char log[4096];
    read_redis_log(d, log, sizeof log);
    fprintf(stderr, "cwork demo: redis-server did not answer within 10 s\n");
    print_redis_log_tail(log);
    return REDIS_FAILED;
}

static int start_redis(demo *d)
{
    snprintf(d->redis_dir, sizeof d->redis_dir, "/tmp/cwork-demo-XXXXXX");
    if (!mkdtemp(d->redis_dir)) {
        fprintf(stderr, "cwork demo: cannot create a directory for redis-server: %s\n",
                strerror(errno));
        return -1;
    }
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    for (int attempt = 0; attempt < 20; attempt++) {
        /* Below Linux's ephemeral ports (32768 and up by default), which the local ends
         * of connections hold without listening. */
        int port = 20000 + (int)(rand_r(&seed) % 12768);
        if (port_taken(port)) continue;
        char port_s[16], log[96];
        snprintf(port_s, sizeof port_s, "%d", port);
        snprintf(log, sizeof log, "%s/redis.log", d->redis_dir);
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
            int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
            }
            sigset_t none; /* our blocked SIGINT/SIGTERM would survive exec */
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, NULL);
            setpgid(0, 0); /* Ctrl-C goes to us; we stop it ourselves, after the pool */
            prctl(PR_SET_PDEATHSIG, SIGTERM); /* and it never outlives us */
            if (getppid() == 1) _exit(1);
            execlp("redis-server", "redis-server", "--port", port_s, "--bind", "127.0.0.1", "--dir",
                   d->redis_dir, "--save", "", "--appendonly", "no", (char *)NULL);
            _exit(127);
        }
        d->redis_pid = pid;
        snprintf(d->url, sizeof d->url, "redis://127.0.0.1:%d", port);
        switch (wait_for_redis(d, port)) {
        case REDIS_UP:
            return 0;
        case REDIS_PORT_TAKEN:
            continue;
        default:
            return -1; /* stop_redis ends it if it still runs */
        }
    }
    fprintf(stderr, "cwork demo: found no free port for redis-server\n");
    return -1;
}

static void stop_redis(demo *d)
{
    if (d->redis_pid > 0) {
        kill(d->redis_pid, SIGTERM);
        waitpid(d->redis_pid, NULL, 0);
    }
    if (d->redis_dir[0]) {
        char path[128];
        snprintf(path, sizeof path, "%s/redis.log", d->redis_dir);
        unlink(path);
        rmdir(d->redis_dir);
    }
}

/* ---------------------------------------------------------------- example jobs */

static unsigned job_seed(const cwork_job *job)
{
    unsigned s = 2166136261u;
    for (const char *p = cwork_job_id(job); *p; p++)
        s = (s ^ (unsigned char)*p) * 16777619u;
    return s ^ (unsigned)cwork_job_fails(job) ^ (unsigned)time(NULL);
}

static int send_welcome_email(cwork_job *job, void *ctx)
{
    (void)ctx;
    unsigned s = job_seed(job);
    if (!*cwork_job_arg_string(job, "to")) return cwork_job_fail(job, "no address");
    sleep_ms(5 + rand_r(&s) % 25);
    return 0;
}

static int resize_image(cwork_job *job, void *ctx)
{
    (void)ctx;
    unsigned s = job_seed(job);
    sleep_ms(20 + rand_r(&s) % 60);
    if (rand_r(&s) % 4 == 0)
        return cwork_job_fail(job, "image server timed out resizing %s",
                              cwork_job_arg_string(job, "image"));
    return 0;
}

static int generate_report(cwork_job *job, void *ctx)
{
    (void)ctx;
    unsigned s = job_seed(job);
    static const char *const steps[] = {"25%", "50%", "75%"};
    for (int i = 0; i < 3; i++) {
        sleep_ms(60 + rand_r(&s) % 100);
        cwork_job_checkin(job, steps[i]);
    }
    if (rand_r(&s) % 10 == 0) return cwork_job_fail(job, "report query was cancelled");
    return 0;
}

/* Demo retries come back after 1-3 s instead of Go's 16 s and more. */
static int64_t quick_backoff(const cwork_job *job, void *ud)
{
    (void)ud;
    return 1 + cwork_job_fails(job) % 3;
}

/* ---------------------------------------------------------------- the feed */

static void *feeder(void *arg)
{
    demo *d = arg;
    cwork_redis_options ro;
    cli_redis_options(&ro);
    cwork_redis *redis = cwork_redis_new(d->url, &ro, NULL);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, d->ns, NULL);
    cwork_args *args = cwork_args_new();
    unsigned seed = (unsigned)time(NULL);
    long interval_us = d->rate > 0 ? (long)(1e6 / d->rate) : 1000000;
    long n = 0;
    while (enq && !atomic_load(&d->stop_feeding)) {
        char value[64];
        const char *name;
        switch (rand_r(&seed) % 10) {
        case 0:
            name = "generate_report";
            snprintf(value, sizeof value, "2026-%02u", 1 + rand_r(&seed) % 12);
            cwork_args_set_string(args, "month", value);
            break;
        case 1:
        case 2:
        case 3:
        case 4:
            name = "resize_image";
            snprintf(value, sizeof value, "photo-%ld.jpg", n);
            cwork_args_set_string(args, "image", value);
            cwork_args_set_int64(args, "width", 640);
            break;
        default:
            name = "send_welcome_email";
            snprintf(value, sizeof value, "user%ld@example.com", n);
            cwork_args_set_string(args, "to", value);
            break;
        }
        if (cwork_enqueue(enq, name, args, NULL, NULL) == 0) atomic_fetch_add(&d->enqueued, 1);
        n++;
        struct timespec ts = {interval_us / 1000000, (interval_us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
    cwork_args_free(args);
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
    return NULL;
}

/* ---------------------------------------------------------------- main */

static int register_jobs(cwork_pool *p)
{
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.max_fails = 3;
    jo.backoff = quick_backoff;
    cwork_error err = {0};
    if (cwork_pool_register(p, "send_welcome_email", send_welcome_email, &jo, &err) ||
        cwork_pool_register(p, "resize_image", resize_image, &jo, &err))
        goto fail;
    jo.priority = 5;
    jo.max_concurrency = 3;
    jo.timeout_ms = 2000;
    if (cwork_pool_register(p, "generate_report", generate_report, &jo, &err)) goto fail;
    return 0;
fail:
    fprintf(stderr, "cwork demo: %s\n", err.message);
    return -1;
}

/* The Redis the demo runs on: --redis's, else a private redis-server. 0, or an exit
 * status (reported; a private server that started is stopped by stop_redis). */
static int choose_redis(demo *d, const demo_opts *o)
{
    if (o->conn.redis_url && strlen(o->conn.redis_url) >= sizeof d->url) {
        fprintf(stderr, "cwork demo: --redis: the URL is longer than %zu bytes\n",
                sizeof d->url - 1);
        return CLI_USAGE;
    }
    if (o->conn.redis_url) {
        snprintf(d->url, sizeof d->url, "%s", o->conn.redis_url);
        return 0;
    }
    return start_redis(d) == 0 ? 0 : CLI_FAILURE;
}

/* The web UI on --listen, else on 127.0.0.1:5040 or any free loopback port; NULL when
 * it could not start (said on stderr: the demo runs on without it). */
static cwork_web *start_web(cwork_redis *redis, cwork_pool *pool, const demo_opts *o)
{
    cwork_web_options wo;
    cwork_web_options_init(&wo);
    wo.pool = pool;
    wo.listen = o->listen ? o->listen : "127.0.0.1:5040";
    const char *auth = getenv("CWORK_WEB_AUTH"); /* as cwork web: the library reads none */
    wo.auth = auth && *auth ? auth : NULL;
    cwork_error err = {0};
    cwork_web *web = cwork_web_start(redis, o->conn.ns, &wo, &err);
    if (!web && !o->listen) { /* 5040 taken: any free loopback port */
        wo.listen = "127.0.0.1:0";
        web = cwork_web_start(redis, o->conn.ns, &wo, &err);
    }
    if (web)
        fprintf(stderr, "cwork demo: web UI at http://127.0.0.1:%d/\n", cwork_web_port(web));
    else
        fprintf(stderr, "cwork demo: no web UI: %s\n", err.message);
    return web;
}

/* Prints the progress line every second until a signal in sigs or the --duration. */
static void watch(demo *d, cwork_pool *pool, const sigset_t *sigs, long duration)
{
    int tty = isatty(2);
    uint64_t last_done = 0;
    for (long second = 1;; second++) {
        struct timespec one = {1, 0};
        int sig = sigtimedwait(sigs, NULL, &one);
        cwork_pool_stats st;
        cwork_pool_get_stats(pool, &st);
        uint64_t done = st.succeeded + st.failed;
        fprintf(stderr,
                "%s%5lds  enqueued %ld  done %llu  failed %llu  retried %llu  dead %llu  "
                "%llu/s  in flight %llu%s",
                tty ? "\r" : "", second, atomic_load(&d->enqueued), (unsigned long long)done,
                (unsigned long long)st.failed, (unsigned long long)st.retried,
                (unsigned long long)st.dead, (unsigned long long)(done - last_done),
                (unsigned long long)st.in_flight, tty ? "   " : "\n");
        last_done = done;
        if (sig > 0 || (duration > 0 && second >= duration)) break;
    }
    fprintf(stderr, "%scwork demo: stopping (Ctrl-C again to quit at once)\n", tty ? "\n" : "");
}

/* Feeds the started pool, shows its progress and stops everything in order; the exit
 * status. Returns with *stopped set when the pool stopped (and may be freed). */
static int run_started(demo *d, cwork_redis *redis, cwork_pool *pool, const demo_opts *o,
                       const sigset_t *sigs, int *stopped)
{
    cwork_web *web = o->no_web ? NULL : start_web(redis, pool, o);
    pthread_t feed;
    pthread_create(&feed, NULL, feeder, d);
    watch(d, pool, sigs, o->duration);
    /* A second signal now ends the process at once; running jobs stay in Redis for a
     * reaper, and the private redis-server follows us (PR_SET_PDEATHSIG). */
    pthread_sigmask(SIG_UNBLOCK, sigs, NULL);
    atomic_store(&d->stop_feeding, 1);
    pthread_join(feed, NULL);
    cwork_web_free(web); /* before the pool it reports on */
    cwork_error err = {0};
    int rc = cwork_pool_stop(pool, 10000, &err);
    *stopped = rc == 0;
    if (rc != 0) fprintf(stderr, "cwork demo: %s\n", err.message);
    cwork_pool_stats st;
    cwork_pool_get_stats(pool, &st);
    fprintf(stderr, "cwork demo: %llu jobs done, %llu failures (%llu retried, %llu dead)\n",
            (unsigned long long)st.succeeded + st.failed, (unsigned long long)st.failed,
            (unsigned long long)st.retried, (unsigned long long)st.dead);
    return rc == 0 ? CLI_OK : CLI_FAILURE;
}

int cmd_demo(int argc, char **argv)
{
    demo_opts o;
    int p = parse_options(argc, argv, &o);
    if (p != 0) return p > 0 ? CLI_OK : CLI_USAGE;
    demo d;
    memset(&d, 0, sizeof d);
    d.rate = o.rate;
    d.ns = o.conn.ns;

    /* Signals are taken by this thread only (sigtimedwait in watch). */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    int status = choose_redis(&d, &o);
    if (status != 0) {
        stop_redis(&d);
        return status;
    }
    cwork_redis *redis = cli_connect(&(cli_conn_opts){d.url, o.conn.ns, NULL, NULL}, &status);
    if (!redis) {
        stop_redis(&d);
        return status;
    }
    char *shown = cwork_redact_url(d.url);
    fprintf(stderr, "cwork demo: redis %s%s, namespace %s, %u executors, %.0f jobs/s\n",
            shown ? shown : "", d.redis_pid ? " (private, removed at exit)" : "", o.conn.ns,
            o.concurrency, d.rate);
    cwork_free(shown);
    fprintf(stderr, "cwork demo: Ctrl-C stops it\n");

    cwork_pool_options po;
    cwork_pool_options_init(&po);
    po.concurrency = o.concurrency;
    cwork_error err = {0};
    cwork_pool *pool = cwork_pool_new(redis, o.conn.ns, &po, &err);
    int started = 0, stopped = 0;
    status = CLI_FAILURE;
    if (!pool || register_jobs(pool) != 0 || cwork_pool_start(pool, &err) != 0) {
        if (err.message[0]) fprintf(stderr, "cwork demo: %s\n", err.message);
    } else {
        started = 1;
        status = run_started(&d, redis, pool, &o, &sigs, &stopped);
    }
    if (stopped || !started)
        cwork_pool_free(pool); /* never while a handler may still run on its threads */
    cwork_redis_free(redis);
    stop_redis(&d);
    return status;
}
