/* One job's command as a child process: spawn, feed, pass output through, time out,
 * report. See child.h.
 *
 * The command does not run as our child but under a supervisor process of its own
 * (child_supervisor.c), which kills the command's whole tree when the command ends, on
 * a timeout, and when we die in any way. We talk to it with two signals; it exits as
 * the command did. Spawning is fork (the supervisor runs on data prepared before the
 * fork, async-signal-safe calls only: the pool is multi-threaded). */
#define _GNU_SOURCE
#include "child.h"

#include "child_supervisor.h"
#include "work_text.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define PASS_LINE_MAX 8192  /* longer passed-through lines are split */
#define CHECKIN_MAX 1024    /* longer check-in lines are cut */
#define STDERR_TAIL 4096    /* the failure text comes from this much of stderr */
#define POLL_MS 50          /* the supervision loop's granularity */
#define LAST_RESORT_MS 5000 /* a timed-out supervisor's time to kill the tree */
#define DRAIN_MAX (1 << 20) /* output read after the child exited, per stream */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------- our stdout/stderr */

/* Whole lines from concurrent children, and the status line, go out under one lock so
 * that they never interleave mid-line. */
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static int status_showing;

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return; /* a closed or full terminal is not the job's failure */
        p += w;
        n -= (size_t)w;
    }
}

static void emit(int fd, const char *p, size_t n)
{
    pthread_mutex_lock(&out_mu);
    if (status_showing) {
        write_all(2, "\r\033[K", 4);
        status_showing = 0;
    }
    write_all(fd, p, n);
    pthread_mutex_unlock(&out_mu);
}

void child_say(const char *text)
{
    size_t n = strlen(text);
    char *line = malloc(n + 1);
    if (!line) {
        emit(2, text, n); /* two writes: may mix, but is not lost */
        emit(2, "\n", 1);
        return;
    }
    memcpy(line, text, n);
    line[n] = '\n';
    emit(2, line, n + 1);
    free(line);
}

void child_status_line(const char *text)
{
    pthread_mutex_lock(&out_mu);
    if (text) {
        char line[512];
        int n = snprintf(line, sizeof line, "\r%s\033[K", text);
        write_all(2, line, n < (int)sizeof line ? (size_t)n : sizeof line - 1);
        status_showing = 1;
    } else if (status_showing) {
        write_all(2, "\r\033[K", 4);
        status_showing = 0;
    }
    pthread_mutex_unlock(&out_mu);
}

/* ---------------------------------------------------------------- line splitting */

/* A passed-through stream: the prefix sits at the front of the buffer, so a line goes
 * out with one write. */
typedef struct pass_buf {
    int fd; /* ours: 1 or 2 */
    char *data;
    size_t prefix_len, len; /* len counts the bytes after the prefix */
} pass_buf;

static int pass_init(pass_buf *b, int fd, const char *prefix)
{
    b->fd = fd;
    b->prefix_len = strlen(prefix);
    b->len = 0;
    b->data = malloc(b->prefix_len + PASS_LINE_MAX + 1);
    if (!b->data) return -1;
    memcpy(b->data, prefix, b->prefix_len);
    return 0;
}

static void pass_flush(pass_buf *b)
{
    if (b->len == 0) return;
    b->data[b->prefix_len + b->len] = '\n';
    emit(b->fd, b->data, b->prefix_len + b->len + 1);
    b->len = 0;
}

static void pass_add(pass_buf *b, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n') {
            b->data[b->prefix_len + b->len] = '\n';
            emit(b->fd, b->data, b->prefix_len + b->len + 1);
            b->len = 0;
            continue;
        }
        if (b->len == PASS_LINE_MAX) pass_flush(b);
        b->data[b->prefix_len + b->len++] = p[i];
    }
}

/* Check-in lines from fd 3, each handed to the spec's callback. */
typedef struct checkin_buf {
    char data[CHECKIN_MAX + 1];
    size_t len;
    const child_spec *spec;
} checkin_buf;

static void checkin_add(checkin_buf *b, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '\n') {
            if (b->len < CHECKIN_MAX) b->data[b->len++] = p[i];
            continue;
        }
        if (b->len > 0 && b->data[b->len - 1] == '\r') b->len--;
        b->data[b->len] = '\0';
        if (b->spec->on_checkin) b->spec->on_checkin(b->spec->userdata, b->data);
        b->len = 0;
    }
}

/* The last STDERR_TAIL bytes of stderr: enough for the failure text (at most
 * CHILD_MESSAGE_MAX bytes), bounded however much the child writes. */
typedef struct tail_buf {
    char data[STDERR_TAIL];
    size_t len;
    int lost_front; /* bytes before data were dropped */
} tail_buf;

static void tail_add(tail_buf *t, const char *p, size_t n)
{
    if (n >= STDERR_TAIL) {
        memcpy(t->data, p + n - STDERR_TAIL, STDERR_TAIL);
        t->len = STDERR_TAIL;
        t->lost_front = 1;
        return;
    }
    if (t->len + n > STDERR_TAIL) {
        size_t keep = STDERR_TAIL - n;
        memmove(t->data, t->data + t->len - keep, keep);
        t->len = keep;
        t->lost_front = 1;
    }
    memcpy(t->data + t->len, p, n);
    t->len += n;
}

/* ---------------------------------------------------------------- running children */

/* Every running supervisor, so that child_abort_all can have each kill its tree.
 * Nodes live in the frames of the child_run calls. */
typedef struct running {
    pid_t pid;
    struct running *next;
} running;

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static running *reg_head;
static int aborting;

void child_abort_all(void)
{
    pthread_mutex_lock(&reg_mu);
    aborting = 1;
    for (running *r = reg_head; r; r = r->next)
        kill(r->pid, SUPERVISOR_KILL);
    pthread_mutex_unlock(&reg_mu);
}

static int is_aborting(void)
{
    pthread_mutex_lock(&reg_mu);
    int a = aborting;
    pthread_mutex_unlock(&reg_mu);
    return a;
}

static void reg_add(running *r)
{
    pthread_mutex_lock(&reg_mu);
    r->next = reg_head;
    reg_head = r;
    if (aborting) /* the abort ran while we were forking: it missed this child */
        kill(r->pid, SUPERVISOR_KILL);
    pthread_mutex_unlock(&reg_mu);
}

/* Returns whether an abort happened meanwhile. */
static int reg_remove(running *r)
{
    pthread_mutex_lock(&reg_mu);
    for (running **pp = &reg_head; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    int a = aborting;
    pthread_mutex_unlock(&reg_mu);
    return a;
}

/* ---------------------------------------------------------------- spawning */

/* The environment: ours without CWORK_JOB_* and CWORK_ARG_*, then the job's. NULL when out of
 * memory; free the array only (the strings are borrowed). */
static char **build_env(const child_spec *spec)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    char **env = malloc((n + spec->env_count + 1) * sizeof *env);
    if (!env) return NULL;
    size_t k = 0;
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "CWORK_JOB_", 10) != 0 && strncmp(*e, "CWORK_ARG_", 10) != 0) env[k++] = *e;
    for (size_t i = 0; i < spec->env_count; i++)
        env[k++] = (char *)spec->env_add[i];
    env[k] = NULL;
    return env;
}

static void close_fd(int *fd)
{
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Our side of one job's process: its supervisor's pid and the command's pipes. */
typedef struct tracker {
    const child_spec *spec;
    pid_t pid;
    int in_w, out_r, err_r, chk_r, res_r, pidfd;
    size_t in_off;
    child_result *res; /* its result, from fd 4 */
    size_t result_cap;
    pass_buf out, err;
    checkin_buf chk;
    tail_buf tail;
} tracker;

/* Creates the pipes and forks. Returns 0, or -1 with res->message filled. */
static int spawn(tracker *s, child_result *res)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, chk[2] = {-1, -1}, rs[2] = {-1, -1};
    char **env = NULL;
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) ||
        pipe2(chk, O_CLOEXEC) || pipe2(rs, O_CLOEXEC)) {
        snprintf(res->message, sizeof res->message, "cannot create pipes: %s", strerror(errno));
        goto fail;
    }
    if (!(env = build_env(s->spec))) {
        snprintf(res->message, sizeof res->message, "out of memory");
        goto fail;
    }
    struct rlimit rl;
    int max_fd = 65536; /* the close loop's bound when close_range is missing */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < (rlim_t)max_fd)
        max_fd = (int)rl.rlim_cur;
    char *argv[] = {"sh", "-c", (char *)s->spec->command, NULL};
    supervisor_launch launch = {
        {in[0], out[1], err[1], chk[1], rs[1]}, max_fd, argv, env, getpid(), NULL, NULL};
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    int prep = supervisor_prepare(&launch, &actions, &attr);
    if (prep) {
        snprintf(res->message, sizeof res->message, "cannot prepare the command: %s",
                 strerror(prep));
        goto fail;
    }
    /* Every signal blocked across the fork: the supervisor starts with them blocked, so
     * that a SUPERVISOR_KILL sent at once (an abort) waits for it instead of killing it
     * before it could kill anything. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = fork();
    if (pid == 0) supervisor_run(&launch);
    int fork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    supervisor_unprepare(&launch);
    free(env);
    close(in[0]), close(out[1]), close(err[1]), close(chk[1]), close(rs[1]);
    if (pid < 0) {
        close(in[1]), close(out[0]), close(err[0]), close(chk[0]), close(rs[0]);
        snprintf(res->message, sizeof res->message, "cannot fork: %s", strerror(fork_errno));
        return -1;
    }
    s->pid = pid;
    s->in_w = in[1], s->out_r = out[0], s->err_r = err[0], s->chk_r = chk[0], s->res_r = rs[0];
    set_nonblock(s->in_w), set_nonblock(s->out_r), set_nonblock(s->err_r);
    set_nonblock(s->chk_r), set_nonblock(s->res_r);
#ifdef SYS_pidfd_open
    /* Wakes the loop the moment the supervisor exits; without it the loop polls. Only
     * we reap this pid, so it cannot have been reused yet. */
    s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
    return 0;
fail:
    free(env);
    for (int i = 0; i < 2; i++)
        close_fd(&in[i]), close_fd(&out[i]), close_fd(&err[i]), close_fd(&chk[i]), close_fd(&rs[i]);
    return -1;
}

/* Keeps what the command writes to fd 4, up to CHILD_RESULT_MAX bytes; more is read
 * (the command must not block on a full pipe) and only counted as too much. */
static void result_add(tracker *s, const char *p, size_t n)
{
    child_result *r = s->res;
    if (r->result_len + n > CHILD_RESULT_MAX) {
        r->result_over = 1;
        n = CHILD_RESULT_MAX - r->result_len;
    }
    if (n == 0) return;
    if (r->result_len + n > s->result_cap) {
        size_t cap = s->result_cap ? s->result_cap * 2 : 4096;
        while (cap < r->result_len + n)
            cap *= 2;
        if (cap > CHILD_RESULT_MAX) cap = CHILD_RESULT_MAX;
        char *more = realloc(r->result, cap);
        if (!more) {
            r->result_over = 1; /* cannot keep it: reported as not kept */
            return;
        }
        r->result = more;
        s->result_cap = cap;
    }
    memcpy(r->result + r->result_len, p, n);
    r->result_len += n;
}

/* Reads what is there from one of the child's streams; closes it at end of file.
 * Reads at most limit bytes. */
static void pump(tracker *s, int *fd, size_t limit)
{
    char buf[4096];
    size_t total = 0;
    while (*fd >= 0 && total < limit) {
        ssize_t n = read(*fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            close_fd(fd);
            return;
        }
        total += (size_t)n;
        if (fd == &s->out_r) {
            pass_add(&s->out, buf, (size_t)n);
        } else if (fd == &s->err_r) {
            pass_add(&s->err, buf, (size_t)n);
            tail_add(&s->tail, buf, (size_t)n);
        } else if (fd == &s->res_r) {
            result_add(s, buf, (size_t)n);
        } else {
            checkin_add(&s->chk, buf, (size_t)n);
        }
    }
}

/* Writes more of the job to the child's stdin; closes it when done or refused. */
static void feed(tracker *s)
{
    while (s->in_w >= 0 && s->in_off < s->spec->stdin_len) {
        ssize_t n = write(s->in_w, s->spec->stdin_data + s->in_off, s->spec->stdin_len - s->in_off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) break; /* EPIPE: the command does not read its stdin, which is its right */
        s->in_off += (size_t)n;
    }
    close_fd(&s->in_w);
}

/* Waits for the supervisor, serving the command's pipes, until it has exited — which
 * it does only once the command and every other process of its tree are gone. It is
 * left a zombie, not reaped: until it is, its pid cannot be reused, so signalling it
 * stays safe. */
static void follow(tracker *s, child_result *res)
{
    const child_spec *spec = s->spec;
    int64_t deadline = spec->timeout_ms > 0 ? now_ms() + spec->timeout_ms : 0;
    /* A timeout, or a stop (stop_fd readable), goes in steps, each when the one before
     * has had its time: SIGTERM to every process of the tree, SIGKILL to all of them
     * after the kill grace, and last SIGKILL to the supervisor itself should it not have
     * ended LAST_RESORT_MS later (it cannot hang; the command would still die with it).
     * next_at is 0 while no step is due. */
    int step = 0;
    int64_t next_at = deadline;
    int stop_fd = spec->stop_fd ? *spec->stop_fd : -1;
    int64_t grace = spec->kill_grace_ms;
    int exited = 0;
    for (;;) {
        siginfo_t si;
        si.si_pid = 0;
        int w = waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOHANG | WNOWAIT);
        if ((w == 0 && si.si_pid == s->pid) || (w < 0 && errno == ECHILD))
            exited = 1;    /* (ECHILD cannot happen: only this thread waits for this pid) */
        if (exited) break; /* and with the supervisor, every process of the tree */
        int64_t now = now_ms();
        if (next_at && step < 3 && now >= next_at) {
            static const int signals[3] = {SUPERVISOR_TERM, SUPERVISOR_KILL, SIGKILL};
            if (step == 0 && !res->stopped) res->timed_out = 1;
            kill(s->pid, signals[step]);
            next_at = now + (step == 0 ? grace : LAST_RESORT_MS);
            step++;
        }
        int64_t wait = POLL_MS;
        if (next_at && step < 3 && next_at - now < wait) wait = next_at - now;
        if (wait < 0) wait = 0;
        struct pollfd p[7];
        int *fds[7] = {&s->in_w, &s->out_r, &s->err_r, &s->chk_r, &s->res_r, &s->pidfd, &stop_fd};
        for (int i = 0; i < 7; i++) {
            p[i].fd = *fds[i];
            p[i].events = i == 0 ? POLLOUT : POLLIN;
            p[i].revents = 0;
        }
        if (poll(p, 7, (int)wait) <= 0) continue;
        if (p[0].revents) feed(s);
        for (int i = 1; i < 5; i++)
            if (p[i].revents) pump(s, fds[i], 64 * 1024);
        /* p[5], the pidfd, only wakes the loop: the child ended */
        if (p[6].revents) {
            /* Asked to stop: the timeout's steps from the first, unless they began. */
            stop_fd = -1; /* (looked at once: it stays readable) */
            if (step == 0) {
                res->stopped = 1;
                next_at = now;
                int64_t g = spec->stop_grace_ms ? spec->stop_grace_ms(spec->userdata) : grace;
                if (g < grace) grace = g;
            }
        }
    }
}

/* Reaps the exited supervisor (this pid only, never another thread's) and drains what
 * the command wrote: all of it is in the pipes now (the tree is gone). */
static void reap(tracker *s, child_result *res)
{
    int status = 0;
    while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {
    }
    pump(s, &s->out_r, DRAIN_MAX);
    pump(s, &s->err_r, DRAIN_MAX);
    pump(s, &s->chk_r, DRAIN_MAX);
    pump(s, &s->res_r, CHILD_RESULT_MAX + 1); /* enough to see that it is over */
    if (WIFEXITED(status))
        res->exit_status = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        res->signal = WTERMSIG(status);
}

int child_run(const child_spec *spec, child_result *res)
{
    memset(res, 0, sizeof *res);
    res->exit_status = -1;
    tracker s;
    memset(&s, 0, sizeof s);
    s.spec = spec;
    s.in_w = s.out_r = s.err_r = s.chk_r = s.res_r = s.pidfd = -1;
    s.chk.spec = spec;
    s.res = res;
    if (is_aborting()) {
        res->aborted = 1;
        snprintf(res->message, sizeof res->message, "not started: stopping at once");
        return -1;
    }
    if (pass_init(&s.out, 1, spec->prefix) || pass_init(&s.err, 2, spec->prefix)) {
        free(s.out.data), free(s.err.data);
        snprintf(res->message, sizeof res->message, "out of memory");
        return -1;
    }
    if (spawn(&s, res) != 0) {
        free(s.out.data), free(s.err.data);
        return -1;
    }
    running node = {s.pid, NULL};
    reg_add(&node);
    if (spec->stdin_len == 0)
        close_fd(&s.in_w);
    else
        feed(&s);
    follow(&s, res);
    res->aborted = reg_remove(&node); /* before the reap, which frees the pid */
    reap(&s, res);
    pass_flush(&s.out);
    pass_flush(&s.err);
    close_fd(&s.in_w), close_fd(&s.out_r), close_fd(&s.err_r), close_fd(&s.chk_r);
    close_fd(&s.res_r), close_fd(&s.pidfd);
    free(s.out.data), free(s.err.data);

    if (res->stopped) {
        snprintf(res->message, sizeof res->message, "stopped");
    } else if (res->timed_out) {
        /* What it said before, then why it ended: the last line is the reason. */
        char why[64];
        int wn =
            snprintf(why, sizeof why, "timed out after %g s", (double)spec->timeout_ms / 1000.0);
        size_t n = work_stderr_tail(s.tail.data, s.tail.len, s.tail.lost_front, res->message,
                                    CHILD_MESSAGE_MAX - (size_t)wn - 1, CHILD_TAIL_LINES - 1);
        snprintf(res->message + n, sizeof res->message - n, "%s%s", n ? "\n" : "", why);
    } else if (res->exit_status == 0) {
        res->ok = 1;
    } else if (!work_stderr_tail(s.tail.data, s.tail.len, s.tail.lost_front, res->message,
                                 CHILD_MESSAGE_MAX, CHILD_TAIL_LINES)) {
        if (res->signal)
            snprintf(res->message, sizeof res->message, "killed by signal %d", res->signal);
        else
            snprintf(res->message, sizeof res->message, "exit status %d", res->exit_status);
    }
    return 0;
}
