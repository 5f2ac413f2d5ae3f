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

/* With FAULT_TERM_LINE set, a SIGTERM (its pool stopping it) ends the run with an end
 * line too, so that the freeze test (fault_freeze.c) reads from the runs themselves
 * when a stopped command was gone. Off in the suite, whose checker must see a killed
 * run as one that never ended. */
static int term_fd = -1;
static const char *term_id, *term_name, *term_pool;
static int put(int fd, char kind, const char *id, const char *name, const char *pool);

static void on_term(int sig)
{
    (void)sig;
    if (term_fd >= 0) put(term_fd, 'E', term_id, term_name, term_pool);
    _exit(143);
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
    if (getenv("FAULT_TERM_LINE")) {
        term_fd = fd, term_id = id, term_name = name, term_pool = pool;
        signal(SIGTERM, on_term);
    }
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&d, &d) != 0) {
    }
    if (put(fd, 'E', id, name, pool) != 0) {
        perror("fault_job: log");
        return 1;
    }
    close(fd);
    return 0;
}
