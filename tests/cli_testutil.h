/* Running the cwork binary in CLI tests: its stdout, stderr, exit status and how long it
 * took, with chosen environment variables and stdin. */
#ifndef CWORK_CLI_TESTUTIL_H
#define CWORK_CLI_TESTUTIL_H

#include "testlib.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char cli_out_[1 << 17], cli_err_[1 << 16];
static long long cli_ms_; /* how long the last run took */

static void cli_slurp_(int fd, char *buf, size_t size)
{
    lseek(fd, 0, SEEK_SET);
    size_t n = 0;
    ssize_t k;
    while (n < size - 1 && (k = read(fd, buf + n, size - 1 - n)) > 0)
        n += (size_t)k;
    buf[n] = '\0';
    close(fd);
}

/* Runs `cwork argv...` (argv NULL-terminated, without the program) with env changed by
 * "NAME=value" (set) and "NAME" (unset) entries (NULL-terminated; env may be NULL) and
 * stdin_text (NULL: /dev/null) on its stdin. Returns the exit status (128 + signal). */
__attribute__((unused)) static int cli_run(const char *const *env, const char *stdin_text,
                                           const char *const *argv)
{
    const char *cli = getenv("CWORK_CLI");
    if (!cli) {
        fprintf(stderr, "CWORK_CLI is not set (ctest sets it)\n");
        exit(1);
    }
    const char *args[64];
    size_t n = 0;
    args[n++] = cli;
    for (size_t i = 0; argv[i] && n < 63; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    char out_path[] = "/tmp/cwt-cli-out-XXXXXX", err_path[] = "/tmp/cwt-cli-err-XXXXXX";
    char in_path[] = "/tmp/cwt-cli-in-XXXXXX";
    int out = mkstemp(out_path), er = mkstemp(err_path), in = mkstemp(in_path);
    if (out < 0 || er < 0 || in < 0) abort();
    unlink(out_path);
    unlink(err_path);
    unlink(in_path);
    if (stdin_text && write(in, stdin_text, strlen(stdin_text)) != (ssize_t)strlen(stdin_text))
        abort();
    lseek(in, 0, SEEK_SET);
    long long t0 = tl_now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in, 0);
        dup2(out, 1);
        dup2(er, 2);
        for (size_t i = 0; env && env[i]; i++) {
            const char *eq = strchr(env[i], '=');
            if (!eq) {
                unsetenv(env[i]);
                continue;
            }
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
            setenv(name, eq + 1, 1);
        }
        execv(cli, (char *const *)args);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    cli_ms_ = tl_now_ms() - t0;
    close(in);
    cli_slurp_(out, cli_out_, sizeof cli_out_);
    cli_slurp_(er, cli_err_, sizeof cli_err_);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* cwork with these arguments, the environment as it is and no stdin. */
#define CLI_RUN(...) cli_run(NULL, NULL, (const char *const[]){__VA_ARGS__, NULL})

/* cwork ARGS --redis URL --ns NS (at most 18 ARGS), with stdin_text (NULL: none). */
__attribute__((unused)) static int cli_run_in_ns(const char *ns, const char *stdin_text,
                                                 const char *const *argv)
{
    const char *args[24];
    size_t n = 0;
    for (; argv[n] && n < 18; n++)
        args[n] = argv[n];
    args[n++] = "--redis";
    args[n++] = tl_redis_url();
    args[n++] = "--ns";
    args[n++] = ns;
    args[n] = NULL;
    return cli_run(NULL, stdin_text, args);
}

__attribute__((unused)) static size_t cli_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

#endif
