/* Running one job's command as a supervised child process (for `cwork work`).
 *
 * child_run spawns `/bin/sh -c COMMAND` under a supervisor process (child_supervisor.h)
 * that kills every process of the command's tree when the command ends, on a timeout,
 * and when cwork dies in any way; it feeds the command stdin, passes its stdout/stderr
 * through line by line with a prefix, turns lines written to its fd 3 into check-ins,
 * keeps what it writes to fd 4 as its result (up to CHILD_RESULT_MAX bytes),
 * enforces a timeout, and reports how the command ended. It is called from many
 * executor threads at once; each call reaps only its own child. */
#ifndef CWORK_CLI_CHILD_H
#define CWORK_CLI_CHILD_H

#include <stddef.h>
#include <stdint.h>

/* Longest failure message child_run produces (the stderr tail is capped to it); 1 KiB
 * with its NUL, which is what cwork_job_fail keeps. */
#define CHILD_MESSAGE_MAX 1023
/* The most a command's fd 4 (its result, PROTOCOL §22) may carry: the library's limit. */
#define CHILD_RESULT_MAX (1024 * 1024)
/* Lines of stderr kept in a failure message. */
#define CHILD_TAIL_LINES 10

typedef struct child_spec {
    const char *command;    /* run with /bin/sh -c */
    const char *stdin_data; /* written to the child's stdin, which is then closed */
    size_t stdin_len;
    /* "NAME=value" strings added to the environment. Every inherited variable whose
     * name starts with CWORK_JOB_ or CWORK_ARG_ is left out, so the child never sees a
     * stale one. */
    const char *const *env_add;
    size_t env_count;
    const char *prefix;    /* put before every passed-through line, e.g. "[name id] " */
    int64_t timeout_ms;    /* 0: none; then SIGTERM to every process of the tree */
    int64_t kill_grace_ms; /* after the SIGTERM, until SIGKILL */
    /* When the fd it points to becomes readable (the job was asked to stop:
     * cwork_job_stop_fd), the same steps as a timeout's: SIGTERM to every process of
     * the tree, SIGKILL after the kill grace. NULL: never. */
    const int *stop_fd;
    /* When set, called (on the calling thread) once stop_fd is readable: the kill grace
     * of that stop, when shorter than kill_grace_ms (a job whose pool lost its lease
     * must be gone before another pool may start it). */
    int64_t (*stop_grace_ms)(void *userdata);
    /* Called (on the calling thread) for each line the child writes to fd 3. */
    void (*on_checkin)(void *userdata, const char *line);
    void *userdata;
} child_spec;

typedef struct child_result {
    int ok;          /* exited with status 0 (and did not time out) */
    int aborted;     /* child_abort_all ran while the child was running */
    int timed_out;   /* killed for running past timeout_ms */
    int stopped;     /* killed because stop_fd became readable (and not timed out first) */
    int exit_status; /* when it exited, else -1 */
    int signal;      /* the signal that killed it, else 0 */
    /* When !ok: the last CHILD_TAIL_LINES non-blank lines of stderr (at most
     * CHILD_MESSAGE_MAX bytes, whole lines from the end), else "exit status N" or
     * "killed by signal S"; after a timeout that tail (one line less) and then
     * "timed out after N s"; after a stop, "stopped"; or why it could not start. */
    char message[CHILD_MESSAGE_MAX + 64];
    /* What the command wrote to fd 4 (malloc'd; free it): NULL when it wrote nothing.
     * result_over: it wrote more than CHILD_RESULT_MAX (result then holds the first
     * CHILD_RESULT_MAX bytes; the rest was read and dropped). */
    char *result;
    size_t result_len;
    int result_over;
} child_result;

/* Runs the command to its end (or its timeout) and fills *res (free res->result).
 * Returns 0, or -1 when it could not be started (res->message says why). */
int child_run(const child_spec *spec, child_result *res);

/* Stop at once: SIGKILL every process of every running command's tree, and refuse to
 * start new ones (their child_run reports aborted). Idempotent; safe from any thread. */
void child_abort_all(void);

/* Writes one whole line (text and a newline) to our stderr, never mixed with the
 * commands' passed-through lines or the status line. Any thread. */
void child_say(const char *text);

/* A status line on stderr, shown in place with \r (for a terminal). Passed-through
 * lines erase it first, so they never mix with it; text NULL erases it for good. */
void child_status_line(const char *text);

#endif
