/* Running code that is expected to fail a checked invariant (src/base/invariant.h): in a
 * child process, with its stderr captured, so that the test sees the abort and the
 * message naming the invariant. */
#ifndef CWORK_INVARIANT_TESTUTIL_H
#define CWORK_INVARIANT_TESTUTIL_H

#include "testlib.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs fn(arg) in a child with stderr captured into err; returns the child's wait
 * status (the child exits 0 when fn returns). */
static inline int run_child(void (*fn)(void *), void *arg, char *err, size_t errsz)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        fn(arg);
        _exit(0);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < errsz && (r = read(fds[0], err + n, errsz - 1 - n)) > 0)
        n += (size_t)r;
    err[n] = '\0';
    close(fds[0]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    return status;
}

/* The child aborted (SIGABRT) with a message that names want. */
#define CHECK_ABORTED(status, err, want)                                                           \
    do {                                                                                           \
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);                                 \
        if (!strstr(err, want)) tl_fail(__FILE__, __LINE__, "no \"%s\" in: %s", want, err);        \
    } while (0)

#define CHECK_EXITED_0(status) CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0)

#endif
