/* The cwork command: dispatches to one sub-command per file (cmd_*.c). */
#include "cli.h"
#include "cmd_admin.h"
#include "opt.h"

#include <string.h>

static const char usage_head[] =
    "Usage: cwork COMMAND [OPTIONS]\n"
    "\n"
    "Durable background jobs in Redis, compatible with Go's gocraft/work.\n"
    "\n"
    "Commands:\n";

static const char usage_tail[] =
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

/* The options every command that talks to Redis takes, for --help and the man page. */
typedef struct conn_only {
    cli_conn_opts conn;
} conn_only;
static const cli_opt conn_options[] = {CLI_CONN_OPTS(conn_only, conn), CLI_OPT_END};
const cli_command cli_conn_command = {
    .name = "", .summary = "", .intro = "", .opts = conn_options, .seen_field = CLI_NO_SEEN};

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
#define WEB_COMMAND NULL
#define DEMO_COMMAND NULL
#else
#define WEB_COMMAND &cli_web_command
#define DEMO_COMMAND &cli_demo_command
#endif

/* Every command: what runs it, its option table when it has one (completion and the
 * man page are made from them), and its line in cwork --help (NULL: not listed). */
const cli_command_entry cli_commands[] = {
    {"enqueue", cmd_enqueue, &cli_enqueue_command,
     "put a job (or, with --bulk, many jobs from stdin) into a queue"},
    {"work", cmd_work, &cli_work_command,
     "run jobs as shell commands in a worker pool (cwork work --help)"},
    {"demo", cmd_demo, DEMO_COMMAND,
     "run example jobs on a private Redis and watch them (Ctrl-C stops)"},
    {"queues", cmd_queues, &admin_commands[ADM_QUEUES],
     "list queues: jobs waiting, latency, paused or not"},
    {"queue", cmd_queue, &admin_commands[ADM_QUEUE],
     "delete waiting jobs: queue clear NAME, queue delete NAME ID"},
    {"pools", cmd_pools, &admin_commands[ADM_POOLS],
     "list worker pools (Go's and cwork's) and their heartbeats"},
    {"busy", cmd_busy, &admin_commands[ADM_BUSY], "list the workers running a job now"},
    {"retry", cmd_retry, &admin_commands[ADM_RETRY],
     "list failed jobs waiting to be retried; run them now or delete one"},
    {"scheduled", cmd_scheduled, &admin_commands[ADM_SCHEDULED],
     "list jobs scheduled for later; run them now or delete one"},
    {"dead", cmd_dead, &admin_commands[ADM_DEAD], "list dead jobs; retry, delete or trim them"},
    {"pause", cmd_pause, &admin_commands[ADM_PAUSE],
     "stop every pool from taking jobs of one name"},
    {"unpause", cmd_unpause, &admin_commands[ADM_UNPAUSE], "let pools take them again"},
    {"job", cmd_job, &admin_commands[ADM_JOB], "find a job by id: its whole story and its JSON"},
    {"batch", cmd_batch, &cli_batch_command,
     "a tracked batch's counts and callback; --seal seals it"},
    {"web", cmd_web, WEB_COMMAND,
     "serve the web UI, workwebui's JSON API and /metrics (cwork web --help)"},
    {"stats", cmd_stats, &cli_stats_command,
     "processed and failed jobs today and per day, and per job name"},
    {"limits", cmd_limits, &cli_limits_command,
     "list the rate limits per job type and whether each holds jobs back"},
    {"limit", cmd_limit, &cli_limit_command,
     "set or remove a job type's rate limit: limit NAME 100/1s|off"},
    {"cancel", cmd_cancel, &admin_commands[ADM_CANCEL],
     "cancel a job by id: waiting ones go to dead, running ones are stopped"},
    {"result", cmd_result, &cli_result_command, "print a job's result by id (--wait for it)"},
    {"succeeded", cmd_succeeded, &cli_succeeded_command,
     "list the succeeded jobs that job types keep, with their results"},
    {"doctor", cmd_doctor, &cli_doctor_command,
     "check every key of the namespace, like fsck; --repair repairs"},
    {"shards", cmd_shards, &cli_shards_command,
     "how the namespace is sharded: each shard's namespace and jobs"},
    {"completion", cmd_completion, NULL, "print a bash or zsh completion script: completion bash"},
    {"man", cmd_man, NULL, NULL}, /* prints cwork.1, the man page (the build installs it) */
    /* COMMAND TABLE (one row per command, keep this marker) */
};
const size_t cli_ncommands = sizeof cli_commands / sizeof cli_commands[0];

static void print_usage(FILE *out)
{
    fputs(usage_head, out);
    for (size_t i = 0; i < cli_ncommands; i++)
        if (cli_commands[i].summary)
            fprintf(out, "  %-9s %s\n", cli_commands[i].name, cli_commands[i].summary);
    fputs("\nOptions of every command that talks to Redis:\n", out);
    cli_print_common_options(out);
    fputs(usage_tail, out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return CLI_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        print_usage(stdout);
        return CLI_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-version") || !strcmp(cmd, "version")) {
        printf("cwork %s\n", cwork_version());
        return CLI_OK;
    }
    cli_setup_logging();
    const char *names[64];
    size_t n = 0;
    for (size_t i = 0; i < cli_ncommands; i++) {
        if (!strcmp(cmd, cli_commands[i].name)) return cli_commands[i].run(argc, argv);
        if (cli_commands[i].summary && n < 60) names[n++] = cli_commands[i].name;
    }
    names[n++] = "help";
    names[n++] = "version";
    names[n] = NULL;
    /* "--bogus" is no command either; "--hepl" may be a mistyped --help */
    const char *near = cli_suggest(cmd + strspn(cmd, "-"), names);
    if (near)
        fprintf(stderr, "cwork: unknown command \"%s\"; did you mean %s%s? (see cwork --help)\n",
                cmd, cmd[0] == '-' ? "--" : "", near);
    else
        fprintf(stderr, "cwork: unknown command \"%s\" (see cwork --help)\n", cmd);
    return CLI_USAGE;
}
