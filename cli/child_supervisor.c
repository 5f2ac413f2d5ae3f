/* The job's supervisor process: see child_supervisor.h for its contract.
 *
 * Why a process between cwork and the command: PR_SET_PDEATHSIG reaches only the
 * process that asked for it, and a command's tree does not stay where cwork could find
 * it once cwork is gone — Debian's dash forks rather than execs, a command may setsid
 * or change process group, and a double fork hands a process to init. The supervisor
 *  - is a child subreaper (PR_SET_CHILD_SUBREAPER): an orphan of the tree becomes its
 *    child instead of init's, so every process of the tree stays its descendant;
 *  - hears of cwork's death at once from PR_SET_PDEATHSIG (SUPERVISOR_KILL, sent when
 *    the cwork thread that forked it ends: a SIGKILL of cwork included) and, should that
 *    be missed, from getppid() changing, which it looks at every WAKE_MS;
 *  - finds the tree by reading /proc (every process whose chain of parents leads to
 *    it) and signals each, round after round, until it has no child left.
 * Rejected: cgroups (killing a cgroup needs a delegated hierarchy — root or systemd —
 * that a plain user often lacks); one supervisor for all jobs (pipes passed over a
 * socket, a protocol to keep); exec'ing a helper program (a program start per job).
 *
 * It is forked, not exec'd, from a multi-threaded process, so it runs only
 * async-signal-safe code — system calls, on memory it maps itself: no malloc, no
 * stdio, no locks. It starts the command with posix_spawn (file actions and
 * attributes prepared by child.c before the fork): glibc's clone(CLONE_VM |
 * CLONE_VFORK) spares a second copy of cwork's address space, which a fork would
 * make (a clone of our own would confuse ThreadSanitizer's runtime). It names itself
 * "cw-supervisor", so that `killall cwork` (which would kill it before it could kill
 * the tree) leaves it alone.
 *
 * Limits: a SIGKILL of the supervisor itself (by its pid, or `pkill -9 -f 'cwork
 * work'`, which matches its command line) leaves the tree to init. A process started
 * on the command's behalf by something outside the tree (a daemon asked over a
 * socket, `systemd-run`) is not in it. A pid freed and reused
 * between a /proc scan and the kill could be signalled in error; pids are allocated
 * cyclically, so that takes a full wrap within microseconds. */
#define _GNU_SOURCE
#include "child_supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PID_LIMIT (1 << 22) /* Linux's PID_MAX_LIMIT: every pid is below it */
#define TABLE_MAX (1 << 16) /* processes looked at per /proc scan */
#define WAKE_MS 100         /* how often it looks whether cwork still lives */
#define RESCAN_MS 10        /* between kill rounds while children remain */

/* One /proc scan: every process and its parent, and the tree marked in a bitmap
 * indexed by pid. All of it mapped once, at start. */
typedef struct proc_table {
    pid_t *pid, *ppid;
    unsigned char *in_tree; /* PID_LIMIT bits */
    size_t n;
} proc_table;

/* The supervisor's state. */
typedef struct sup {
    pid_t self, parent, cmd;
    int cmd_done, cmd_status;
    proc_table t;
} sup;

static void say(int fd, const char *msg)
{
    if (write(fd, msg, strlen(msg)) < 0) {
        /* nothing else to do: the exit status says it */
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---------------------------------------------------------------- reading /proc */

/* The parent of pid from /proc/<pid>/stat, or -1 (gone, unreadable). */
static pid_t read_ppid(pid_t pid)
{
    char path[32] = "/proc/", digits[12];
    int nd = 0;
    for (unsigned v = (unsigned)pid; nd == 0 || v; v /= 10)
        digits[nd++] = (char)('0' + v % 10);
    size_t k = 6;
    while (nd)
        path[k++] = digits[--nd];
    memcpy(path + k, "/stat", 6);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[512];
    ssize_t n;
    do
        n = read(fd, buf, sizeof buf);
    while (n < 0 && errno == EINTR);
    close(fd);
    /* "pid (comm) S ppid …": comm may hold anything, ')' included, but no field after
     * it does, so the last ')' ends it. */
    const char *end = NULL;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == ')') end = buf + i;
    if (!end || end + 4 >= buf + n) return -1;
    pid_t v = 0;
    int len = 0;
    for (const char *p = end + 4; p < buf + n && *p >= '0' && *p <= '9' && len < 8; p++, len++)
        v = v * 10 + (*p - '0');
    return len ? v : -1;
}

/* Raw getdents64 records (glibc's readdir allocates). */
struct dirent64_raw {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

/* Fills the table with every process and its parent; 0 processes when /proc cannot be
 * read. */
static void scan(proc_table *t)
{
    t->n = 0;
    int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    _Alignas(8) char buf[8192];
    long got;
    while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < got;) {
            const struct dirent64_raw *d = (const void *)(buf + off);
            off += d->reclen;
            pid_t pid = 0;
            int len = 0;
            const char *s = d->name;
            for (; *s >= '0' && *s <= '9' && len < 8; s++, len++)
                pid = pid * 10 + (*s - '0');
            if (len == 0 || *s || pid <= 0 || pid >= PID_LIMIT || t->n == TABLE_MAX) continue;
            pid_t pp = read_ppid(pid);
            if (pp < 0) continue; /* gone meanwhile */
            t->pid[t->n] = pid;
            t->ppid[t->n] = pp;
            t->n++;
        }
    }
    close(fd);
}

static int marked(const proc_table *t, pid_t pid)
{
    return pid > 0 && pid < PID_LIMIT && (t->in_tree[pid >> 3] >> (pid & 7) & 1);
}

/* Marks every process whose chain of parents leads to root. */
static void mark_tree(proc_table *t, pid_t root)
{
    memset(t->in_tree, 0, PID_LIMIT / 8);
    t->in_tree[root >> 3] |= (unsigned char)(1u << (root & 7));
    for (int changed = 1; changed;) { /* one round per generation */
        changed = 0;
        for (size_t i = 0; i < t->n; i++) {
            pid_t p = t->pid[i];
            if (!marked(t, p) && marked(t, t->ppid[i])) {
                t->in_tree[p >> 3] |= (unsigned char)(1u << (p & 7));
                changed = 1;
            }
        }
    }
}

/* ---------------------------------------------------------------- signalling the tree */

/* Sends sig to every process of the tree but the supervisor; 0 when /proc showed no
 * process at all (then only the command's process group gets it). */
static int signal_tree(sup *s, int sig)
{
    scan(&s->t);
    if (s->t.n == 0) {
        kill(-s->cmd, sig);
        return 0;
    }
    mark_tree(&s->t, s->self);
    for (size_t i = 0; i < s->t.n; i++)
        if (s->t.pid[i] != s->self && marked(&s->t, s->t.pid[i])) kill(s->t.pid[i], sig);
    return 1;
}

/* Reaps every child that has ended, noting the command's status. 1 when no child is
 * left (then no descendant is: an orphan becomes our child), else 0. */
static int reap_ended(sup *s)
{
    for (;;) {
        int st = 0;
        pid_t w = waitpid(-1, &st, WNOHANG | __WALL);
        if (w > 0) {
            if (w == s->cmd) {
                s->cmd_done = 1;
                s->cmd_status = st;
            }
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        return w < 0;
    }
}

/* SIGKILLs the tree, round after round (a process forked meanwhile becomes our child
 * when its killed parent is gone, and the next round finds it), until no child is
 * left. Without /proc it settles for the command's process group. */
static void kill_tree(sup *s)
{
    if (!s->cmd_done) kill(-s->cmd, SIGKILL); /* most of it, before the scan */
    while (!reap_ended(s)) {
        if (!signal_tree(s, SIGKILL)) {
            /* No /proc: the leftovers that left the group cannot be found. */
            if (s->cmd_done) return;
        }
        if (reap_ended(s)) return;
        sleep_ms(RESCAN_MS);
    }
}

/* Exits as the command did: its exit status, or killed by its signal (without a core
 * file of our own). */
static _Noreturn void exit_as(int status)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(sig, &dfl, NULL);
        kill(getpid(), sig);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        _exit(128 + sig); /* a signal that does not end a process: cannot happen */
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

/* ---------------------------------------------------------------- the command */

int supervisor_prepare(supervisor_launch *l, posix_spawn_file_actions_t *actions,
                       posix_spawnattr_t *attr)
{
    int rc = posix_spawn_file_actions_init(actions);
    if (rc) return rc;
    if ((rc = posix_spawnattr_init(attr)) != 0) {
        posix_spawn_file_actions_destroy(actions);
        return rc;
    }
    /* fds 0-4 from the pipes, through fds above all five so that no end is overwritten
     * before it is moved (cwork may itself lack fds 0-2); every other fd closed: Redis
     * sockets, other children's pipes (another thread may have created them without
     * having forked yet). */
    int above = 4;
    for (int i = 0; i < 5; i++)
        if (l->fds[i] > above) above = l->fds[i];
    for (int i = 0; i < 5 && rc == 0; i++)
        rc = posix_spawn_file_actions_adddup2(actions, l->fds[i], above + 1 + i);
    for (int i = 0; i < 5 && rc == 0; i++)
        rc = posix_spawn_file_actions_adddup2(actions, above + 1 + i, i);
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(actions, 5);
    /* A process group of its own (the fast first strike of a kill); cwork ignores
     * SIGPIPE and the supervisor blocks every signal: the command gets the defaults. */
    sigset_t none, pipe_default;
    sigemptyset(&none);
    sigemptyset(&pipe_default);
    sigaddset(&pipe_default, SIGPIPE);
    if (rc == 0) rc = posix_spawnattr_setpgroup(attr, 0);
    if (rc == 0) rc = posix_spawnattr_setsigmask(attr, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(attr, &pipe_default);
    if (rc == 0)
        rc = posix_spawnattr_setflags(attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                POSIX_SPAWN_SETSIGDEF);
    if (rc) {
        posix_spawn_file_actions_destroy(actions);
        posix_spawnattr_destroy(attr);
        return rc;
    }
    l->actions = actions;
    l->attr = attr;
    return 0;
}

void supervisor_unprepare(supervisor_launch *l)
{
    if (l->actions) posix_spawn_file_actions_destroy((posix_spawn_file_actions_t *)l->actions);
    if (l->attr) posix_spawnattr_destroy((posix_spawnattr_t *)l->attr);
    l->actions = NULL;
    l->attr = NULL;
}

/* ---------------------------------------------------------------- the supervisor */

_Noreturn void supervisor_run(const supervisor_launch *l)
{
    static const char no_table[] = "cwork work: cannot map the supervisor's table\n";
    static const char no_start[] = "cwork work: cannot start /bin/sh\n";
    sup s;
    memset(&s, 0, sizeof s);
    s.self = getpid();
    s.parent = l->parent;
    setpgid(0, 0); /* its own group: a signal for the command's group never hits it */
    /* Told when cwork's forking thread ends; if cwork is already gone we were
     * reparented, and getppid() tells. (Every signal is blocked: nothing is lost.) */
    if (prctl(PR_SET_PDEATHSIG, SUPERVISOR_KILL) != 0 || getppid() != s.parent) _exit(127);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); /* (Linux ≥ 3.4; without it: best effort) */
    prctl(PR_SET_NAME, "cw-supervisor", 0, 0, 0);
    /* SIGCHLD left at SIG_IGN would make the kernel reap our children unseen. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &dfl, NULL);
    size_t table_bytes = 2 * (size_t)TABLE_MAX * sizeof(pid_t) + PID_LIMIT / 8;
    void *mem = mmap(NULL, table_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        say(l->fds[2], no_table);
        _exit(127);
    }
    s.t.pid = mem;
    s.t.ppid = s.t.pid + TABLE_MAX;
    s.t.in_tree = (unsigned char *)(s.t.ppid + TABLE_MAX);

    /* posix_spawn: glibc starts the command with clone(CLONE_VM | CLONE_VFORK) from
     * code of its own, without a copy of our copy of cwork's address space (a fork
     * would cost as much again as the fork that made us), and sanitizer runtimes
     * leave that code alone. What the command gets is prepared by child.c. */
    int rc = posix_spawn(&s.cmd, "/bin/sh", l->actions, l->attr, l->argv, l->envp);
    if (rc != 0) {
        say(l->fds[2], no_start);
        _exit(127);
    }
    /* Nothing of cwork's stays open here: its sockets, the pipes (the command's end of
     * file must not wait for us). */
    long closed = -1;
#ifdef SYS_close_range
    closed = syscall(SYS_close_range, 0U, ~0U, 0U);
#endif
    for (int fd = 0; closed != 0 && fd < l->max_fd; fd++)
        close(fd);

    sigset_t wait_for;
    sigemptyset(&wait_for);
    sigaddset(&wait_for, SIGCHLD);
    sigaddset(&wait_for, SUPERVISOR_TERM);
    sigaddset(&wait_for, SUPERVISOR_KILL);
    for (;;) {
        reap_ended(&s);
        if (s.cmd_done) {
            kill_tree(&s); /* leftovers: background processes of a finished command */
            exit_as(s.cmd_status);
        }
        struct timespec wake = {0, WAKE_MS * 1000000L};
        int sig = sigtimedwait(&wait_for, NULL, &wake);
        if (sig == SUPERVISOR_KILL || getppid() != s.parent) {
            kill_tree(&s);
            exit_as(s.cmd_done ? s.cmd_status : SIGKILL); /* (a status "killed by SIGKILL") */
        }
        if (sig == SUPERVISOR_TERM) signal_tree(&s, SIGTERM);
    }
}
