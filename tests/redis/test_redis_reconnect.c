/* Dialling, and Redis going away and coming back: close-on-exec sockets, unix sockets,
 * errors instead of crashes or hangs, no SIGPIPE death, transparent re-dialling,
 * backoff logging, and data kept by AOF across a SIGKILL. */
#include "redis.h"
#include "testlib.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PASSWORD "pw-s3cr3t"

static redisContext *connect_port(int port)
{
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c || c->err) {
        fprintf(stderr, "cannot connect to 127.0.0.1:%d\n", port);
        exit(1);
    }
    return c;
}

static cwork_redis *pool_on(int port, const char *userinfo, int checkout_ms)
{
    char url[128];
    snprintf(url, sizeof url, "redis://%s%s127.0.0.1:%d", userinfo ? userinfo : "",
             userinfo ? "@" : "", port);
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.connect_timeout_ms = 500;
    o.command_timeout_ms = 2000;
    o.checkout_timeout_ms = checkout_ms;
    o.max_connections = 2;
    cwork_error err = {0};
    cwork_redis *r = cwork_redis_new(url, &o, &err);
    if (!r) tl_fail(__FILE__, __LINE__, "cwork_redis_new: %s", err.message);
    return r;
}

/* Dial warnings, checked for passwords. The logger may run on any thread. */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static int dial_warnings, leaked_password;
static char dial_addr[64];

static void test_logger(void *ud, cwork_log_level level, const char *message,
                        const cwork_log_field *fields, size_t nfields)
{
    pthread_mutex_lock(&log_mu);
    if (level == CWORK_LOG_WARN && strcmp(message, "redis.dial") == 0) dial_warnings++;
    for (size_t i = 0; i < nfields; i++) {
        if (strstr(fields[i].value, PASSWORD)) leaked_password = 1;
        if (strcmp(fields[i].key, "addr") == 0)
            snprintf(dial_addr, sizeof dial_addr, "%s", fields[i].value);
    }
    pthread_mutex_unlock(&log_mu);
}

static void reset_log_counts(void)
{
    pthread_mutex_lock(&log_mu);
    dial_warnings = leaked_password = 0;
    dial_addr[0] = '\0';
    pthread_mutex_unlock(&log_mu);
}

/* Nothing listens: the checkout re-dials with backoff until its timeout, then fails
 * with the dial error, logging one warning per backoff step. */
static void unreachable_redis_is_an_error(void)
{
    cwork_redis *r = pool_on(1, ":" PASSWORD, 300);
    if (!r) return;
    reset_log_counts();
    cwork_set_logger(test_logger, NULL, CWORK_LOG_DEBUG);
    cwork_error err = {0};
    long long t0 = tl_now_ms();
    CHECK_INT(cwork_redis_ping(r, &err), CWORK_EREDIS);
    CHECK(tl_now_ms() - t0 < 10000);
    CHECK(strstr(err.message, "127.0.0.1:1") != NULL);
    CHECK(strstr(err.message, PASSWORD) == NULL);
    cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
    pthread_mutex_lock(&log_mu);
    /* Backoff 10, 20, 40, 80, 160 ms within 300 ms: a handful of lines, not hundreds. */
    CHECK(dial_warnings >= 1 && dial_warnings <= 10);
    CHECK_STR(dial_addr, "127.0.0.1:1");
    CHECK(!leaked_password);
    pthread_mutex_unlock(&log_mu);
    cwork_redis_free(r);
}

static void kill_and_restart(void)
{
    tl_server s;
    if (tl_server_start(&s, 1) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    redisContext *raw = connect_port(s.port);
    freeReplyObject(tl_cmd(raw, "CONFIG SET requirepass %s", PASSWORD));
    redisFree(raw);
    reset_log_counts();
    cwork_set_logger(test_logger, NULL, CWORK_LOG_DEBUG);

    cwork_redis *r = pool_on(s.port, ":" PASSWORD, 1000);
    if (!r) goto out;
    cwork_error err = {0};
    const char *set[] = {"SET", "survivor", "still-here"};
    const char *get[] = {"GET", "survivor"};
    CHECK_INT(cw_redis_command(r, 3, set, NULL, NULL, &err), 0);
    cw_conn *held;
    CHECK_INT(cw_redis_checkout(r, &held, &err), 0);

    tl_server_stop(&s, SIGKILL);

    /* A connection held across the crash fails its next command. */
    long long t0 = tl_now_ms();
    CHECK_INT(cw_conn_command(held, 2, get, NULL, NULL, &err), CWORK_EREDIS);
    CHECK_INT(err.code, CWORK_EREDIS);
    CHECK(held->broken);
    cw_redis_checkin(r, held);
    /* A new command re-dials until the checkout timeout, then reports the dial error. */
    CHECK_INT(cw_redis_command(r, 2, get, NULL, NULL, &err), CWORK_EREDIS);
    CHECK_INT(err.code, CWORK_EREDIS);
    CHECK(strstr(err.message, "connect") != NULL);
    CHECK(strstr(err.message, PASSWORD) == NULL);
    CHECK_INT(cwork_redis_ping(r, &err), CWORK_EREDIS);
    CHECK(tl_now_ms() - t0 < 20000); /* bounded by the timeouts, loosely */

    CHECK_INT(tl_server_restart(&s, 1), 0);
    raw = connect_port(s.port); /* requirepass was runtime config: set it again */
    freeReplyObject(tl_cmd(raw, "CONFIG SET requirepass %s", PASSWORD));
    redisFree(raw);

    redisReply *rep = NULL;
    CHECK_INT(cw_redis_command(r, 2, get, NULL, &rep, &err), 0);
    CHECK(rep && rep->type == REDIS_REPLY_STRING);
    if (rep && rep->type == REDIS_REPLY_STRING)
        CHECK_STR(rep->str, "still-here"); /* appendfsync always kept it */
    if (rep) freeReplyObject(rep);
    cwork_redis_free(r);
out:
    cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
    pthread_mutex_lock(&log_mu);
    CHECK(dial_warnings >= 1);
    CHECK(dial_warnings <= 30); /* one per backoff step, not one per attempt */
    CHECK(!leaked_password);
    pthread_mutex_unlock(&log_mu);
    tl_server_destroy(&s);
}

/* Writing to a socket whose peer is gone raises SIGPIPE, whose default action kills
 * the process. The disposition stays SIG_DFL here on purpose. */
static void no_death_by_sigpipe(void)
{
    signal(SIGPIPE, SIG_DFL);
    sigset_t pipe_set, cur;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_UNBLOCK, &pipe_set, NULL);

    tl_server s;
    if (tl_server_start(&s, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    cwork_redis *r = pool_on(s.port, NULL, 500);
    cw_conn *c;
    cwork_error err = {0};
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    CHECK_INT(cwork_redis_ping(r, &err), 0);
    tl_server_stop(&s, SIGKILL);

    /* Megabytes to a dead peer: the first segments draw a RST, later writes EPIPE. */
    size_t big = 8u << 20;
    char *value = malloc(big);
    memset(value, 'x', big);
    const char *argv[] = {"SET", "big", value};
    size_t lens[] = {3, 3, big};
    for (int i = 0; i < 4; i++)
        CHECK_INT(cw_conn_append(c, 3, argv, lens, &err), 0);
    redisReply *x = NULL;
    CHECK(cw_conn_read(c, &x, &err) != 0);
    CHECK_INT(err.code, CWORK_EREDIS);
    CHECK(c->broken);
    /* The same through the one-shot path. */
    CHECK(cw_conn_command(c, 3, argv, lens, NULL, &err) != 0);
    free(value);

    /* The thread's mask is as it was, and no SIGPIPE is left pending for later. */
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    CHECK(!sigismember(&cur, SIGPIPE));
    sigset_t pending;
    sigpending(&pending);
    CHECK(!sigismember(&pending, SIGPIPE));
    cw_redis_checkin(r, c);
    cwork_redis_free(r);
    tl_server_destroy(&s);
}

typedef struct restarter {
    tl_server *s;
    int rc;
} restarter;

static void *restart_later(void *p)
{
    restarter *rs = p;
    struct timespec ts = {0, 300 * 1000000L};
    nanosleep(&ts, NULL);
    rs->rc = tl_server_restart(rs->s, 1);
    return NULL;
}

static void checkout_waits_for_redis_to_come_back(void)
{
    tl_server s;
    if (tl_server_start(&s, 1) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    cwork_redis *r = pool_on(s.port, NULL, 15000);
    cwork_error err = {0};
    CHECK_INT(cwork_redis_ping(r, &err), 0); /* leaves an idle connection, soon stale */
    tl_server_stop(&s, SIGKILL);

    restarter rs = {&s, -99};
    pthread_t t;
    long long t0 = tl_now_ms();
    CHECK_INT(pthread_create(&t, NULL, restart_later, &rs), 0);
    int rc = cwork_redis_ping(r, &err);
    if (rc) tl_fail(__FILE__, __LINE__, "ping: %s", err.message);
    long long waited = tl_now_ms() - t0;
    pthread_join(t, NULL);
    CHECK_INT(rs.rc, 0);
    CHECK(waited >= 200); /* it really waited for the restart */
    /* and then works normally */
    CHECK_INT(cwork_redis_ping(r, &err), 0);
    cwork_redis_free(r);
    tl_server_destroy(&s);
}

/* ---------------------------------------------------------------- dialling */

static void sockets_are_close_on_exec(void)
{
    tl_server s;
    if (tl_server_start(&s, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    cwork_redis *r = pool_on(s.port, NULL, 3000);
    cw_conn *c;
    cwork_error err = {0};
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    int fl = fcntl(cw_conn_fd(c), F_GETFD);
    CHECK(fl >= 0 && (fl & FD_CLOEXEC));
    cw_redis_checkin(r, c);
    cwork_redis_free(r);
    tl_server_destroy(&s);
}

static void unix_socket_with_db(void)
{
    char dir[] = "/tmp/cwork-test-unix-XXXXXX";
    if (!mkdtemp(dir)) {
        tl_fail(__FILE__, __LINE__, "mkdtemp");
        return;
    }
    char sock[128];
    snprintf(sock, sizeof sock, "%s/redis.sock", dir);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 1), dup2(devnull, 2);
        execlp("redis-server", "redis-server", "--port", "0", "--unixsocket", sock, "--dir", dir,
               "--save", "", "--appendonly", "no", (char *)NULL);
        _exit(127);
    }
    redisContext *raw = NULL;
    for (int i = 0; i < 200 && !raw; i++) {
        struct timeval tv = {1, 0};
        raw = redisConnectUnixWithTimeout(sock, tv);
        if (raw && raw->err) {
            redisFree(raw);
            raw = NULL;
            tl_sleep_ms(50);
        }
    }
    CHECK(raw != NULL);
    if (raw) {
        char url[200];
        snprintf(url, sizeof url, "unix://%s?db=2", sock);
        cwork_error err = {0};
        cwork_redis *r = cwork_redis_new(url, NULL, &err);
        CHECK(r != NULL);
        const char *argv[] = {"SET", "k", "over-unix"};
        CHECK(r && cw_redis_command(r, 3, argv, NULL, NULL, &err) == 0);
        cwork_redis_free(r);
        freeReplyObject(tl_cmd(raw, "SELECT 2"));
        redisReply *v = tl_cmd(raw, "GET k");
        CHECK(v->type == REDIS_REPLY_STRING && strcmp(v->str, "over-unix") == 0);
        freeReplyObject(v);
        redisFree(raw);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    unlink(sock);
    rmdir(dir);
}

int main(void)
{
    RUN(sockets_are_close_on_exec);
    RUN(unix_socket_with_db);
    RUN(unreachable_redis_is_an_error);
    RUN(kill_and_restart);
    RUN(no_death_by_sigpipe);
    RUN(checkout_waits_for_redis_to_come_back);
    return tl_finish();
}
