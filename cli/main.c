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
    "  queues    list queues: jobs waiting, latency, paused or not\n"
    "  queue     delete waiting jobs: queue clear NAME, queue delete NAME ID\n"
    "  pools     list worker pools (Go's and cwork's) and their heartbeats\n"
    "  busy      list the workers running a job now\n"
    "  retry     list failed jobs waiting to be retried; run them now or delete one\n"
    "  scheduled list jobs scheduled for later; run them now or delete one\n"
    "  dead      list dead jobs; retry, delete or trim them\n"
    "  pause     stop every pool from taking jobs of one name\n"
    "  unpause   let pools take them again\n"
    "  job       find a job by id: its whole story and its JSON\n"
    "  batch     a tracked batch's counts and callback; --seal seals it\n"
    "  web       serve the web UI, workwebui's JSON API and /metrics (cwork web --help)\n"
    "  stats     processed and failed jobs today and per day, and per job name\n"
    "  limits    list the rate limits per job type and whether each holds jobs back\n"
    "  limit     set or remove a job type's rate limit: limit NAME 100/1s|off\n"
    "  cancel    cancel a job by id: waiting ones go to dead, running ones are stopped\n"
    "  result    print a job's result by id (--wait for it)\n"
    "  succeeded list the succeeded jobs that job types keep, with their results\n"
    "  doctor    check every key of the namespace, like fsck; --repair repairs\n"
    /* COMMAND HELP LINES (one per command, keep this marker) */
    "\n"
    "Options of every command that talks to Redis:\n"
    "  --redis URL   redis://[user:password@]host[:port][/db], host:port,\n"
    "                unix:///path[?db=N], rediss://…?ca=FILE[&cert=F&key=F&sni=NAME]\n"
    "                (TLS), redis+sentinel://h1:p1,h2:p2/MASTER[/db] or\n"
    "                redis+cluster://h1:p1,h2:p2 (namespace with a hash tag: {app})\n"
    "                (default: $CWORK_REDIS_URL, else redis://127.0.0.1:6379); the\n"
    "                passwords may instead come from $CWORK_REDIS_PASSWORD and\n"
    "                $CWORK_REDIS_SENTINEL_PASSWORD, which keeps them out of `ps`\n"
    "  --ns NS       namespace (default: work)\n"
    "  --go-flavor fork|upstream\n"
    "                which Go library shares the namespace: the Kuper-Tech fork\n"
    "                (default) or upstream gocraft/work v0.5; decides what cwork\n"
    "                writes where they differ (default: $CWORK_GO_FLAVOR, else fork;\n"
    "                README \"Go flavours\")\n"
    "  --go-json go1.22|go1.21\n"
    "                how that Go spells U+0008/U+000C in JSON: \\b, \\f (Go >= 1.22,\n"
    "                the default) or \\u0008, \\u000c (Go 1.19-1.21); the unique guards\n"
    "                cwork enqueue writes follow it (default: $CWORK_GO_JSON, else\n"
    "                go1.22; README \"Go flavours\")\n"
    "  The Go tools' single-dash spellings (-redis, -ns, -go-flavor) work too.\n"
    "\n"
    "Options that take a duration (--in, --older-than, --timeout, --grace, ...) take\n"
    "seconds or a number with a unit: 90s, 15m, 1h, 7d, 1h30m.\n"
    "\n"
    "Exit status: 0 success, 1 runtime failure (e.g. Redis unreachable),\n"
    "2 bad command line or input (nothing written), 3 unique job already waiting,\n"
    "4 no such job, 5 the job cannot be cancelled (it runs in a Go pool).\n"
    "\n"
    "  cwork COMMAND --help   shows a command's options\n"
    "  cwork --version        prints the version\n";

#ifdef CWORK_CLI_NO_WEB
/* Built with -DCWORK_WEB=OFF: there is no libcwork-web, so nothing to serve a web UI. */
static int cmd_without_web(int argc, char **argv)
{
    (void)argc;
    fprintf(stderr, "cwork %s: this cwork was built without the web UI (-DCWORK_WEB=OFF)\n",
            argv[1]);
    return CLI_FAILURE;
}
#define cmd_demo cmd_without_web
#define cmd_web cmd_without_web
#endif

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
        {"enqueue", cmd_enqueue}, {"work", cmd_work},           {"demo", cmd_demo},
        {"queues", cmd_queues},   {"pools", cmd_pools},         {"busy", cmd_busy},
        {"retry", cmd_retry},     {"scheduled", cmd_scheduled}, {"dead", cmd_dead},
        {"pause", cmd_pause},     {"unpause", cmd_unpause},     {"job", cmd_job},
        {"web", cmd_web},         {"queue", cmd_queue},         {"stats", cmd_stats},
        {"limits", cmd_limits},   {"limit", cmd_limit},         {"cancel", cmd_cancel},
        {"result", cmd_result},   {"succeeded", cmd_succeeded}, {"batch", cmd_batch},
        {"doctor", cmd_doctor},
        /* COMMAND TABLE (one row per command, keep this marker) */
    };
    enum { NCOMMANDS = sizeof commands / sizeof commands[0] };
    const char *names[NCOMMANDS + 3];
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (!strcmp(cmd, commands[i].name)) return commands[i].run(argc, argv);
        names[i] = commands[i].name;
    }
    names[NCOMMANDS] = "help";
    names[NCOMMANDS + 1] = "version";
    names[NCOMMANDS + 2] = NULL;
    /* "--bogus" is no command either; "--hepl" may be a mistyped --help */
    const char *near = cli_suggest(cmd + strspn(cmd, "-"), names);
    if (near)
        fprintf(stderr, "cwork: unknown command \"%s\"; did you mean %s%s? (see cwork --help)\n",
                cmd, cmd[0] == '-' ? "--" : "", near);
    else
        fprintf(stderr, "cwork: unknown command \"%s\" (see cwork --help)\n", cmd);
    return CLI_USAGE;
}
