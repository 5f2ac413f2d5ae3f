/* The cwork command: dispatches to one sub-command per file (cmd_*.c). */
#include "cli.h"

#include <string.h>

static const char usage[] =
    "Usage: cwork COMMAND [OPTIONS]\n"
    "\n"
    "Durable background jobs in Redis, compatible with Go's gocraft/work.\n"
    "\n"
    "Commands:\n"
    "  enqueue   put a job (or, with --bulk, many jobs from stdin) into a queue\n"
    "  work      run jobs as shell commands in a worker pool (cwork work --help)\n"
    "  demo      run example jobs on a private Redis and watch them (Ctrl-C stops)\n"
    /* COMMAND HELP LINES (one per command, keep this marker) */
    "\n"
    "Options of every command that talks to Redis:\n"
    "  --redis URL   redis://[user:password@]host[:port][/db], host:port or\n"
    "                unix:///path[?db=N] (default: $CWORK_REDIS_URL, else\n"
    "                redis://127.0.0.1:6379); the password may instead come from\n"
    "                $CWORK_REDIS_PASSWORD, which keeps it out of `ps`\n"
    "  --ns NS       namespace (default: work)\n"
    "  The Go tools' single-dash spellings (-redis, -ns) work too.\n"
    "\n"
    "Exit status: 0 success, 1 runtime failure (e.g. Redis unreachable),\n"
    "2 bad command line or input (nothing written), 3 unique job already waiting.\n"
    "\n"
    "  cwork COMMAND --help   shows a command's options\n"
    "  cwork --version        prints the version\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return CLI_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-version") || !strcmp(cmd, "version")) {
        printf("cwork %s\n", cwork_version());
        return CLI_OK;
    }
    cli_setup_logging();
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } commands[] = {
        {"enqueue", cmd_enqueue},
        {"work", cmd_work},
        {"demo", cmd_demo},
        /* COMMAND TABLE (one row per command, keep this marker) */
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].run(argc, argv);
    fprintf(stderr, "cwork: unknown command \"%s\" (see cwork --help)\n", cmd);
    return CLI_USAGE;
}
