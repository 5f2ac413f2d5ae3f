/* The transport cwork owns (redis_net.c): command and connect deadlines, socket options
 * (close-on-exec, keepalive, no Nagle), big values in and out, commands encoded byte for
 * byte as hiredis encodes them, replies split across reads, and the subscriber's view of
 * buffered replies, and a reset that is not mistaken for a TLS port. */
#include "redis.h"
#include "testlib.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static cw_redis_addr shared; /* the server of CWORK_TEST_REDIS_URL */

static cwork_redis *pool_url(const char *url, int connect_ms, int command_ms)
{
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.connect_timeout_ms = connect_ms;
    o.command_timeout_ms = command_ms;
    o.checkout_timeout_ms = connect_ms;
    o.max_connections = 2;
    cwork_error err = {0};
    cwork_redis *r = cwork_redis_new(url, &o, &err);
    if (!r) tl_fail(__FILE__, __LINE__, "cwork_redis_new(%s): %s", url, err.message);
    return r;
}

static cwork_redis *shared_pool(int command_ms)
{
    char url[128];
    snprintf(url, sizeof url, "redis://%s:%d", shared.host, shared.port);
    return pool_url(url, 3000, command_ms);
}

/* A listening loopback socket on a free port (backlog as given); returns the fd. */
static int listen_loopback(int backlog, int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, backlog) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot listen on loopback");
        if (fd >= 0) close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

/* A server that accepts but never answers: the command fails after its timeout, with a
 * message that says so, instead of hanging. */
static void command_times_out(void)
{
    int port;
    int lfd = listen_loopback(8, &port);
    if (lfd < 0) return;
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", port);
    cwork_redis *r = pool_url(url, 2000, 300);
    cw_conn *c = NULL;
    cwork_error err = {0};
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    long long t0 = tl_now_ms();
    redisReply *x = NULL;
    if (c) CHECK_INT(cw_conn_commandf(c, &x, &err, "PING"), CWORK_EREDIS);
    long long took = tl_now_ms() - t0;
    CHECK(x == NULL);
    CHECK_INT(err.code, CWORK_EREDIS);
    CHECK(strstr(err.message, "timed out") != NULL);
    CHECK(took >= 250 && took < 3000);
    CHECK(c && c->broken);
    cw_redis_checkin(r, c);
    cwork_redis_free(r);
    close(lfd);
}

/* A listener whose backlog is full drops further SYNs: the dial gives up at the connect
 * timeout, not the kernel's minutes. */
static void connect_times_out(void)
{
    int port;
    int lfd = listen_loopback(0, &port);
    if (lfd < 0) return;
    /* Fill the backlog with connections nobody accepts. */
    int fillers[8];
    int nfill = 0;
    for (int i = 0; i < 8; i++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        (void)connect(fd, (struct sockaddr *)&sa, sizeof sa);
        fillers[nfill++] = fd;
    }
    tl_sleep_ms(100);
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", port);
    cwork_redis *r = pool_url(url, 400, 1000);
    cwork_error err = {0};
    long long t0 = tl_now_ms();
    int rc = cwork_redis_ping(r, &err);
    long long took = tl_now_ms() - t0;
    CHECK(rc != 0);
    CHECK(took < 5000);
    if (strstr(err.message, "timed out") == NULL)
        tl_fail(__FILE__, __LINE__, "expected a timeout, got: %s", err.message);
    cwork_redis_free(r);
    for (int i = 0; i < nfill; i++)
        close(fillers[i]);
    close(lfd);
}

static int sockopt(int fd, int level, int name)
{
    int v = -1;
    socklen_t len = sizeof v;
    return getsockopt(fd, level, name, &v, &len) == 0 ? v : -1;
}

static void socket_options(void)
{
    cwork_redis *r = shared_pool(2000);
    cw_conn *c = NULL;
    cwork_error err = {0};
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    if (c) {
        int fd = cw_conn_fd(c);
        CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        CHECK(sockopt(fd, SOL_SOCKET, SO_KEEPALIVE) == 1);
        CHECK(sockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE) == 15);
        CHECK(sockopt(fd, IPPROTO_TCP, TCP_NODELAY) == 1);
    }
    cw_redis_checkin(r, c);
    cwork_redis_free(r);
}

/* Values far larger than one read or one socket buffer, both ways, and a pipeline of
 * them: every byte comes back in order. */
static void big_values_round_trip(void)
{
    char key[64];
    tl_unique_ns("big", key, sizeof key);
    cwork_redis *r = shared_pool(10000);
    cw_conn *c = NULL;
    cwork_error err = {0};
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    if (!c) return;
    size_t n = 3u << 20;
    char *v = malloc(n);
    for (size_t i = 0; i < n; i++)
        v[i] = (char)('a' + i % 23);
    const char *set[] = {"SET", key, v};
    size_t set_lens[] = {3, strlen(key), n};
    redisReply *x = NULL;
    CHECK_INT(cw_conn_command(c, 3, set, set_lens, &x, &err), 0);
    CHECK(x && x->type == REDIS_REPLY_STATUS);
    if (x) freeReplyObject(x);
    const char *get[] = {"GET", key};
    for (int i = 0; i < 4; i++)
        CHECK_INT(cw_conn_append(c, 2, get, NULL, &err), 0);
    for (int i = 0; i < 4; i++) {
        x = NULL;
        CHECK_INT(cw_conn_read(c, &x, &err), 0);
        CHECK(x && x->type == REDIS_REPLY_STRING && x->len == n && memcmp(x->str, v, n) == 0);
        if (x) freeReplyObject(x);
    }
    CHECK_INT(cw_conn_commandf(c, NULL, &err, "DEL %s", key), 0);
    CHECK(!c->broken);
    cw_redis_checkin(r, c);
    cwork_redis_free(r);
    free(v);
}

/* The commands the transport writes are RESP exactly as hiredis' formatter writes them:
 * arguments with NULs, CRLF, '$' and '*', empty ones, lengths given or taken with
 * strlen, several commands in one buffer, and one of a megabyte after small ones. */
static void commands_encode_as_hiredis_does(void)
{
    static const char bin[] = {'a', '\0', '\r', '\n', '$', '*', 'z'};
    char *big = malloc(1u << 20);
    if (!big) return;
    memset(big, 'j', 1u << 20);
    const char *v1[] = {"SET", "k", bin};
    size_t l1[] = {3, 1, sizeof bin};
    const char *v2[] = {"LPUSH", "", "x", "\r\n"};
    const char *v3[] = {"PING"};
    const char *v4[] = {"RPUSH", "q", big, "tail"};
    size_t l4[] = {5, 1, 1u << 20, 4};
    struct {
        int argc;
        const char **argv;
        const size_t *lens;
    } cmds[] = {{3, v1, l1}, {4, v2, NULL}, {1, v3, NULL}, {4, v4, l4}};
    cw_net n;
    cw_net_init(&n);
    cw_buf want;
    cw_buf_init(&want);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        CHECK_INT(cw_net_append_argv(&n, cmds[i].argc, cmds[i].argv, cmds[i].lens), 0);
        char *cmd = NULL;
        int len = redisFormatCommandArgv(&cmd, cmds[i].argc, cmds[i].argv, cmds[i].lens);
        CHECK(len > 0);
        if (len > 0) cw_buf_append(&want, cmd, (size_t)len);
        redisFreeCommand(cmd);
        CHECK_INT((long long)n.out.len, (long long)want.len);
        CHECK(n.out.len == want.len && memcmp(n.out.data, want.data, want.len) == 0);
    }
    cw_buf_free(&want);
    cw_net_close(&n);
    free(big);
}

/* What the pool's wake-up subscriber relies on: after a read, further messages that
 * arrived in the same chunk are handed out by cw_conn_read_buffered without I/O. */
static void buffered_replies_after_a_read(void)
{
    cwork_redis *r = shared_pool(2000);
    cw_conn *c = NULL;
    cwork_error err = {0};
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    if (!c) return;
    const char *ping[] = {"PING"};
    for (int i = 0; i < 5; i++)
        CHECK_INT(cw_conn_append(c, 1, ping, NULL, &err), 0);
    redisReply *x = NULL;
    CHECK_INT(cw_conn_read(c, &x, &err), 0);
    if (x) freeReplyObject(x);
    tl_sleep_ms(100); /* the other four replies are on their way or already read */
    int got = 0;
    for (int tries = 0; tries < 50 && got < 4; tries++) {
        redisReply *more = NULL;
        CHECK_INT(cw_conn_read_buffered(c, &more, &err), 0);
        if (more) {
            got++;
            freeReplyObject(more);
        } else if (got < 4) {
            /* Not read yet: one blocking read brings the rest into the buffer. */
            CHECK_INT(cw_conn_read(c, &more, &err), 0);
            if (more) got++, freeReplyObject(more);
        }
    }
    CHECK_INT(got, 4);
    c->pending = 0; /* read through read_buffered, which does not count them */
    cw_redis_checkin(r, c);
    cwork_redis_free(r);
}

/* A server that accepts one connection, reads the request and resets it (SO_LINGER 0),
 * as the kernel does for a server SIGKILLed with the request unread; then, when
 * stay_silent, keeps listening without a word (a plain port that is back), else closes
 * the port (the server is gone). The error says what happened and never suggests TLS:
 * the port is asked, and it does not speak TLS. (test_redis_tls checks that a real TLS
 * port still gets "use rediss://".) */
static void reset_is_not_called_tls(int stay_silent)
{
    int port;
    int lfd = listen_loopback(8, &port);
    if (lfd < 0) return;
    pid_t pid = fork();
    if (pid == 0) {
        int fd = accept(lfd, NULL, NULL);
        char buf[256];
        if (fd >= 0 && read(fd, buf, sizeof buf) > 0) {
            struct linger lg = {1, 0};
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        }
        if (fd >= 0) close(fd);
        if (!stay_silent) _exit(0);
        for (;;) { /* accept and read, never answer, until killed */
            int c = accept(lfd, NULL, NULL);
            if (c >= 0 && read(c, buf, sizeof buf) < 0) close(c);
        }
    }
    close(lfd);
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", port);
    cwork_redis *r = pool_url(url, 2000, 1000);
    cw_conn *c = NULL;
    cwork_error err = {0};
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    redisReply *x = NULL;
    if (c) CHECK_INT(cw_conn_commandf(c, &x, &err, "PING"), CWORK_EREDIS);
    CHECK(x == NULL);
    if (!strstr(err.message, "reset") || strstr(err.message, "TLS") ||
        strstr(err.message, "rediss"))
        tl_fail(__FILE__, __LINE__, "message: %s", err.message);
    if (c) cw_redis_checkin(r, c);
    cwork_redis_free(r);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void reset_by_a_gone_server(void)
{
    reset_is_not_called_tls(0);
}

static void reset_by_a_plain_server(void)
{
    reset_is_not_called_tls(1);
}

int main(void)
{
    cwork_error err = {0};
    if (cw_redis_addr_parse(tl_redis_url(), &shared, &err) != 0 || !shared.host) {
        fprintf(stderr, "CWORK_TEST_REDIS_URL must be a redis:// URL: %s\n", err.message);
        return 1;
    }
    RUN(command_times_out);
    RUN(connect_times_out);
    RUN(socket_options);
    RUN(big_values_round_trip);
    RUN(commands_encode_as_hiredis_does);
    RUN(buffered_replies_after_a_read);
    RUN(reset_by_a_gone_server);
    RUN(reset_by_a_plain_server);
    cw_redis_addr_clear(&shared);
    return tl_finish();
}
