/* Shared by the `cwork work` tests: a namespace and a temporary directory per case,
 * starting `cwork work` (the binary from $CWORK_CLI) with its output in files, bounded
 * waits, and clean-up of whatever a case left running. */
#ifndef CWORK_CLI_WORK_TESTUTIL_H
#define CWORK_CLI_WORK_TESTUTIL_H

#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static redisContext *rc_;
static char ns_[64];
static char dir_[64];   /* per-case temporary directory for pidfiles and outputs */
static pid_t work_pid_; /* the running `cwork work`, or 0 */
static char out_[1 << 17], err_[1 << 17];

__attribute__((unused)) static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Polls cond every 20 ms for up to ms milliseconds; check cond again afterwards. */
#define WAIT_UNTIL(cond, ms)                                                                       \
    for (int64_t end_ = now_ms() + (ms); !(cond) && now_ms() < end_;)                              \
    usleep(20000)

__attribute__((unused)) static long long redis_int(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(rc_, fmt, ap);
    va_end(ap);
    if (!r) {
        fprintf(stderr, "test redis I/O error\n");
        exit(1);
    }
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer
                  : r->type == REDIS_REPLY_ARRAY ? (long long)r->elements
                                                 : -1;
    freeReplyObject(r);
    return v;
}

/* Number of the namespace's keys that match "<ns>:<pattern>". */
__attribute__((unused)) static long long count_keys(const char *pattern)
{
    return redis_int("KEYS %s:%s", ns_, pattern);
}

/* Alive and not a zombie (an orphan may wait a while for its reaper). */
__attribute__((unused)) static int pid_alive(pid_t pid)
{
    if (pid <= 0 || kill(pid, 0) != 0) return 0;
    char path[64], st[256] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(st, 1, sizeof st - 1, f);
    fclose(f);
    st[n] = '\0';
    const char *paren = strrchr(st, ')');
    return !(paren && paren[1] == ' ' && paren[2] == 'Z');
}

/* The live (not zombie) processes whose environment holds CWORK_JOB_ID=job_id: how a
 * test finds every process of a `cwork work` job's tree, whatever it forked. *sleeps
 * (may be NULL) counts those named "sleep"; pids[] (may be NULL) gets up to max of them.
 * -1 when /proc cannot be read. */
__attribute__((unused)) static int job_tree_processes(const char *job_id, int *sleeps, pid_t *pids,
                                                      int max)
{
    char want[64];
    int wlen = snprintf(want, sizeof want, "CWORK_JOB_ID=%s", job_id);
    int n = 0;
    if (sleeps) *sleeps = 0;
    DIR *d = opendir("/proc");
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 0 || !pid_alive(pid)) continue;
        char path[64];
        static char env[1 << 16];
        snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t len = fread(env, 1, sizeof env, f);
        fclose(f);
        int found = 0;
        for (size_t i = 0; i < len && !found; i += strlen(env + i) + 1) {
            if (len - i >= (size_t)wlen + 1 && memcmp(env + i, want, (size_t)wlen + 1) == 0)
                found = 1;
            if (!memchr(env + i, '\0', len - i)) break;
        }
        if (!found) continue;
        if (n < max && pids) pids[n] = pid;
        n++;
        char comm[64] = "";
        snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
        if ((f = fopen(path, "r"))) {
            if (!fgets(comm, sizeof comm, f)) comm[0] = '\0';
            fclose(f);
        }
        if (sleeps && strcmp(comm, "sleep\n") == 0) (*sleeps)++;
    }
    closedir(d);
    return n;
}

/* Kills what a failed case left of a job's tree (so that it cannot touch files after the
 * test). */
__attribute__((unused)) static void kill_job_tree(const char *job_id)
{
    pid_t pids[64];
    int n = job_tree_processes(job_id, NULL, pids, 64);
    for (int i = 0; i < n && i < 64; i++)
        kill(pids[i], SIGKILL);
}

__attribute__((unused)) static size_t read_file(const char *name, char *buf, size_t size)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir_, name);
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n;
}

__attribute__((unused)) static int file_exists(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir_, name);
    return access(path, F_OK) == 0;
}

__attribute__((unused)) static pid_t read_pidfile(const char *name)
{
    char buf[32];
    if (!read_file(name, buf, sizeof buf) || !strchr(buf, '\n'))
        return 0; /* not (completely) written yet */
    return (pid_t)atoi(buf);
}

__attribute__((unused)) static void read_outputs(void)
{
    read_file("work.out", out_, sizeof out_);
    read_file("work.err", err_, sizeof err_);
}

__attribute__((unused)) static void setup(const char *tag)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    snprintf(dir_, sizeof dir_, "/tmp/cwt-work-XXXXXX");
    if (!mkdtemp(dir_)) {
        perror("mkdtemp");
        exit(1);
    }
    work_pid_ = 0;
}

/* Starts `cwork work --redis URL --ns NS ARGS...` with stdout and stderr in files of
 * the case's directory. In its environment: a marker variable, and stale CWORK_JOB_ and
 * CWORK_ARG_ variables that must not reach the commands. */
__attribute__((unused)) static void start_work(const char *const *args)
{
    const char *cli = getenv("CWORK_CLI");
    if (!cli) {
        fprintf(stderr, "CWORK_CLI is not set (ctest sets it)\n");
        exit(1);
    }
    char out_path[256], err_path[256];
    snprintf(out_path, sizeof out_path, "%s/work.out", dir_);
    snprintf(err_path, sizeof err_path, "%s/work.err", dir_);
    const char *argv[40] = {cli, "work", "--redis", tl_redis_url(), "--ns", ns_};
    size_t n = 6;
    for (; args[n - 6] && n < 39; n++)
        argv[n] = args[n - 6];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int er = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int in = open("/dev/null", O_RDONLY);
        dup2(in, 0), dup2(out, 1), dup2(er, 2);
        setenv("CWORK_TEST_MARK", "inherited", 1);
        setenv("CWORK_JOB_STALE", "stale", 1);
        setenv("CWORK_ARG_STALE", "stale", 1);
        execv(cli, (char *const *)argv);
        _exit(127);
    }
    work_pid_ = pid;
}

/* Waits up to ms for cwork to exit: its exit status, 128+signal, or -1 on a timeout. */
__attribute__((unused)) static int wait_work(int ms)
{
    int status;
    pid_t r = 0;
    WAIT_UNTIL((r = waitpid(work_pid_, &status, WNOHANG)) != 0, ms);
    if (r != work_pid_) return -1;
    work_pid_ = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

__attribute__((unused)) static int stop_work(int sig, int ms)
{
    kill(work_pid_, sig);
    return wait_work(ms);
}

/* Kills whatever a case left running (cwork and the commands named by pidfiles), and
 * removes its directory and namespace. */
__attribute__((unused)) static void cleanup(void)
{
    if (work_pid_ > 0) {
        kill(work_pid_, SIGKILL);
        waitpid(work_pid_, NULL, 0);
        work_pid_ = 0;
    }
    static const char *const pidfiles[] = {"child.pid", "gc.pid"};
    for (size_t i = 0; i < sizeof pidfiles / sizeof pidfiles[0]; i++) {
        pid_t p = read_pidfile(pidfiles[i]);
        if (p > 0 && pid_alive(p)) {
            kill(-p, SIGKILL);
            kill(p, SIGKILL);
        }
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir_);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir_);
    tl_ns_delete(rc_, ns_);
}

/* Everything of the namespace's jobs is settled: queues empty, nothing in progress. */
__attribute__((unused)) static int settled(const char *const *names)
{
    for (size_t i = 0; names[i]; i++)
        if (redis_int("LLEN %s:jobs:%s", ns_, names[i]) != 0) return 0;
    return count_keys("*inprogress") == 0;
}

/* The first member of a sorted set ("" when empty), for checking a job's err. */
__attribute__((unused)) static void zset_members(const char *key, char *buf, size_t size)
{
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:%s 0 -1", ns_, key);
    buf[0] = '\0';
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        strncat(buf, r->element[i]->str, size - strlen(buf) - 2);
        strcat(buf, "\n");
    }
    freeReplyObject(r);
}

#endif
