/* The supervisor process that stands between `cwork work` and one job's command, so
 * that no process of the command's tree outlives the job or the pool (see
 * child_supervisor.c for why a process, and how it finds the tree).
 *
 *   cwork work ──fork──▶ supervisor ──posix_spawn──▶ /bin/sh -c COMMAND ──▶ …
 *
 * The supervisor and the command each lead a process group of their own. It exits as
 * the command did (same exit status, or killed by the same signal), but only once every
 * other process of the tree is gone too: a command's leftover background processes are
 * killed (SIGKILL) when the command ends. It obeys two signals from cwork:
 *   SUPERVISOR_TERM  pass SIGTERM to every process of the tree (a timeout's first step);
 *   SUPERVISOR_KILL  SIGKILL every process of the tree, then exit.
 * It does the latter by itself when cwork dies, however it dies (SIGKILL included). */
#ifndef CWORK_CLI_CHILD_SUPERVISOR_H
#define CWORK_CLI_CHILD_SUPERVISOR_H

#include <signal.h>
#include <spawn.h>
#include <sys/types.h>

#define SUPERVISOR_TERM SIGTERM
#define SUPERVISOR_KILL SIGUSR1

/* What the supervisor needs to start the command; prepared before the fork. */
typedef struct supervisor_launch {
    int fds[5];        /* the command's fds 0-4: the child's ends of the five pipes */
    int max_fd;        /* the close loop's bound when close_range is missing */
    char *const *argv; /* {"sh", "-c", COMMAND, NULL} */
    char *const *envp;
    pid_t parent; /* cwork's pid, taken before the fork */
    /* For posix_spawn of /bin/sh: fds 0-4 from fds, every other fd closed; its own
     * process group, no signal blocked, SIGPIPE at its default (supervisor_prepare). */
    const posix_spawn_file_actions_t *actions;
    const posix_spawnattr_t *attr;
} supervisor_launch;

/* Fills l->actions and l->attr (in the caller's *actions and *attr) from l->fds.
 * Allocates: call before the fork, and supervisor_unprepare after it. 0 or an errno. */
int supervisor_prepare(supervisor_launch *l, posix_spawn_file_actions_t *actions,
                       posix_spawnattr_t *attr);
void supervisor_unprepare(supervisor_launch *l);

/* Runs in the child of fork() and never returns. Call it with every signal blocked
 * (so that a SUPERVISOR_KILL sent right after the fork waits for it). Exits 127 when
 * it cannot set itself up or start /bin/sh (after writing why to the command's
 * stderr). Uses only async-signal-safe calls: the parent is multi-threaded. */
_Noreturn void supervisor_run(const supervisor_launch *l);

#endif
