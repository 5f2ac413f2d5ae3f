/* The command the fault suite's pools run for every job: it appends a start line to the
 * history log, works for the number of milliseconds in the job's "ms" argument, and
 * appends an end line. Each line is one write() to a file opened with O_APPEND, so
 * lines from many processes never interleave. Line format (see history.h):
 *
 *   S <key> <job name> <pool tag> <unix ms>
 *   E <key> <job name> <pool tag> <unix ms>
 *
 * where key is the job's "key" argument (the generator's name for the enqueue, known
 * even when the enqueue failed), else its id.
 * Environment: FAULT_LOG (the log's path), FAULT_POOL (the pool's tag, set for each
 * `cwork work` process), and cwork work's CWORK_JOB_ID, CWORK_JOB_NAME, CWORK_JOB_ARGS. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int put(int fd, char kind, const char *id, const char *name, const char *pool)
{
    char line[512];
    int n = snprintf(line, sizeof line, "%c %s %s %s %lld\n", kind, id, name, pool, now_ms());
    return n > 0 && n < (int)sizeof line && write(fd, line, (size_t)n) == n ? 0 : -1;
}

int main(void)
{
    const char *log = getenv("FAULT_LOG"), *pool = getenv("FAULT_POOL");
    const char *id = getenv("CWORK_JOB_ID"), *name = getenv("CWORK_JOB_NAME");
    const char *args = getenv("CWORK_JOB_ARGS");
    if (!log || !pool || !id || !name || !*id || strchr(id, ' ')) {
        fprintf(stderr, "fault_job: FAULT_LOG, FAULT_POOL and a job without spaces in its id "
                        "are needed\n");
        return 2;
    }
    long ms = 0;
    const char *p = args ? strstr(args, "\"ms\":") : NULL;
    if (p) ms = strtol(p + 5, NULL, 10);
    char key[64];
    p = args ? strstr(args, "\"key\":\"") : NULL;
    size_t klen = p ? strcspn(p + 7, "\" ") : 0;
    if (p && klen > 0 && klen < sizeof key) {
        memcpy(key, p + 7, klen);
        key[klen] = '\0';
        id = key;
    }
    int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || put(fd, 'S', id, name, pool) != 0) {
        perror("fault_job: log");
        return 1;
    }
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
    if (getenv("FAULT_TERM_LINE")) {
        /* A SIGTERM (its pool stopping it) ends the run with an end line too, so that
         * the freeze test (fault_freeze.c) reads from the runs themselves when a stopped
         * command was gone. Off in the suite, whose checker must see a killed run as one
         * that never ended. Waited for, not handled: no signal handler. */
        sigset_t term;
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        sigprocmask(SIG_BLOCK, &term, NULL);
        long long end = now_ms() + ms;
        for (long long left = ms; left > 0; left = end - now_ms()) {
            struct timespec w = {left / 1000, (left % 1000) * 1000000L};
            if (sigtimedwait(&term, NULL, &w) == SIGTERM) {
                put(fd, 'E', id, name, pool);
                return 143;
            }
        }
    } else {
        while (nanosleep(&d, &d) != 0) {
        }
    }
    if (put(fd, 'E', id, name, pool) != 0) {
        perror("fault_job: log");
        return 1;
    }
    close(fd);
    return 0;
}
