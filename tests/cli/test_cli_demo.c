/* `cwork demo`: starts its own redis-server, processes jobs (some retried), stops
 * cleanly on SIGINT and leaves no process or directory behind; with --redis it uses the
 * given server and leaves only the namespace's bookkeeping keys. */
#include "testlib.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char err_[65536];

/* Starts the demo with its stderr in a file; returns the pid. path_env, when not NULL,
 * replaces PATH. */
static pid_t start_demo_env(const char *const *extra, char *path, const char *path_env)
{
    strcpy(path, "/tmp/cwt-demo-err-XXXXXX");
    int fd = mkstemp(path);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 2);
        dup2(fd, 1);
        if (path_env) setenv("PATH", path_env, 1);
        const char *argv[16] = {getenv("CWORK_CLI"), "demo", "--rate", "200"};
        if (!argv[0]) _exit(127);
        size_t n = 4;
        for (; extra && *extra && n < 15; extra++)
            argv[n++] = *extra;
        argv[n] = NULL;
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(fd);
    return pid;
}

static pid_t start_demo(const char *const *extra, char *path)
{
    return start_demo_env(extra, path, NULL);
}

static int finish(pid_t pid, const char *path, int timeout_s)
{
    int status = -1;
    for (int i = 0; i < timeout_s * 20; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid) break;
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
        if (i == timeout_s * 20 - 1) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            tl_fail(__FILE__, __LINE__, "demo did not stop in %d s", timeout_s);
        }
    }
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(err_, 1, sizeof err_ - 1, f) : 0;
    err_[n] = '\0';
    if (f) fclose(f);
    unlink(path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static long jobs_done(void)
{
    const char *s = strstr(err_, "cwork demo: ");
    long done = -1;
    for (; s; s = strstr(s + 1, "cwork demo: "))
        if (sscanf(s, "cwork demo: %ld jobs done", &done) == 1) break;
    return done;
}

static void private_redis_and_sigint(void)
{
    char path[64];
    pid_t pid = start_demo(NULL, path);
    struct timespec ts = {3, 0};
    nanosleep(&ts, NULL);
    kill(pid, SIGINT);
    int rc = finish(pid, path, 20);
    if (rc != 0) tl_fail(__FILE__, __LINE__, "the demo exited with %d:\n%s", rc, err_);
    CHECK(jobs_done() > 0);
    CHECK(strstr(err_, "private, removed at exit") != NULL);
    CHECK(strstr(err_, "web UI at http://127.0.0.1:") != NULL);
    /* It waited for its redis-server to answer before connecting: no warning about a
     * refused connection while the server started, nor any other log line. */
    if (strstr(err_, "level=")) tl_fail(__FILE__, __LINE__, "the demo logged:\n%s", err_);
    /* Its redis-server is gone: the port it printed refuses connections. */
    const char *u = strstr(err_, "redis://127.0.0.1:");
    int port = u ? atoi(u + strlen("redis://127.0.0.1:")) : 0;
    CHECK(port > 0);
    struct timeval tv = {1, 0};
    redisContext *c = port ? redisConnectWithTimeout("127.0.0.1", port, tv) : NULL;
    CHECK(c == NULL || c->err != 0);
    if (c) redisFree(c);
}

static void given_redis_and_duration(void)
{
    char ns[64], path[64];
    tl_unique_ns("demo", ns, sizeof ns);
    const char *extra[] = {"--redis", tl_redis_url(), "--ns", ns, "--duration",
                           "3",       "--no-web",     NULL};
    pid_t pid = start_demo(extra, path);
    CHECK_INT(finish(pid, path, 30), 0);
    CHECK(jobs_done() > 0);
    redisContext *c = tl_redis_connect();
    redisReply *r = tl_cmd(c, "SCARD %s:known_jobs", ns);
    CHECK_INT(r->integer, 3);
    freeReplyObject(r);
    r = tl_cmd(c, "EXISTS %s:worker_pools", ns);
    CHECK_INT(r->integer, 0); /* stopped cleanly: no heartbeat left */
    freeReplyObject(r);
    tl_ns_delete(c, ns);
    redisFree(c);
}

static void without_redis_server(void)
{
    char path[64];
    pid_t pid = start_demo_env(NULL, path, "/nonexistent");
    CHECK_INT(finish(pid, path, 20), 1);
    CHECK(strstr(err_, "cwork demo: cannot run redis-server (is it installed? "
                       "apt-get install redis-server)\n") != NULL);
}

int main(void)
{
    RUN(private_redis_and_sigint);
    RUN(given_redis_and_duration);
    RUN(without_redis_server);
    return tl_finish();
}
