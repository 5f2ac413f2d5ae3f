/* `cwork enqueue --bulk` refuses an oversized line while it streams by: a 100 MB line
 * through a pipe costs the process a small multiple of the line limit (6 ×
 * --max-job-bytes + 4 KiB), not of the line. Peak RSS is the child's ru_maxrss (what
 * /proc/<pid>/status shows as VmHWM), against a run of the same command on a tiny input. */
#include "testlib.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs cwork enqueue --bulk with --max-job-bytes 65536 on `size` bytes of one line fed
 * through a pipe; returns the peak RSS in KiB and the exit status in *status. */
static long peak_rss_kib(const char *ns, size_t size, int *status)
{
    const char *cli = getenv("CWORK_CLI");
    if (!cli) {
        fprintf(stderr, "CWORK_CLI is not set (ctest sets it)\n");
        exit(1);
    }
    int in[2];
    if (pipe(in) != 0) abort();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        close(in[0]);
        close(in[1]);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execl(cli, cli, "enqueue", "--bulk", "--max-job-bytes", "65536", "--redis", tl_redis_url(),
              "--ns", ns, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    signal(SIGPIPE, SIG_IGN);
    static char chunk[1 << 16];
    memset(chunk, 'a', sizeof chunk);
    const char *head = "{\"name\":\"big\",\"args\":{\"x\":\"";
    ssize_t w = write(in[1], head, strlen(head));
    for (size_t sent = 0; w >= 0 && sent < size; sent += (size_t)w) {
        size_t k = size - sent < sizeof chunk ? size - sent : sizeof chunk;
        w = write(in[1], chunk, k);
    }
    if (w >= 0) (void)!write(in[1], "\"}}\n", 4); /* (the child may have gone) */
    close(in[1]);
    struct rusage ru;
    int st = 0;
    if (wait4(pid, &st, 0, &ru) != pid) abort();
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return ru.ru_maxrss;
}

static void an_oversized_line_is_refused_while_streaming(void)
{
    char ns[64];
    tl_unique_ns("stream", ns, sizeof ns);
    int st = 0;
    long base = peak_rss_kib(ns, 1 << 10, &st);
    CHECK_INT(st, 0); /* a small line is written */
    redisContext *c = tl_redis_connect();
    tl_ns_delete(c, ns);
    long big = peak_rss_kib(ns, (size_t)100 << 20, &st);
    CHECK_INT(st, 2); /* a bad line: nothing written */
    long limit_kib = (6 * 65536 + 4096) / 1024;
    if (big > base + 4 * limit_kib + 2048)
        tl_fail(__FILE__, __LINE__, "peak RSS %ld KiB for a 100 MB line, %ld KiB for a small one",
                big, base);
    char *dump = tl_ns_dump(c, ns);
    CHECK_STR(dump, "");
    free(dump);
    redisFree(c);
}

int main(void)
{
    RUN(an_oversized_line_is_refused_while_streaming);
    return tl_finish();
}
