/* The --help texts of the admin commands (cmd_admin.c). */
#include "cmd_admin.h"
#include "opt.h"

#define COMMON                                                                                     \
    "  --shard N  shard N of a sharded namespace alone (cwork shards lists them)\n"                \
    "  --redis URL, --ns NS, --go-flavor fork|upstream (what --json bodies of jobs hold):\n"       \
    "  see cwork --help\n"

static const char queues_usage[] =
    "Usage: cwork queues [--redis URL] [--ns NS] [--json]\n"
    "\n"
    "Lists every job name in known_jobs: how many jobs wait in its queue, its\n"
    "latency (how long the next job to run has been waiting) and whether it is\n"
    "paused (cwork pause). Jobs in progress, to retry or scheduled are not counted.\n"
    "\n"
    "  --json   print the body of Go workwebui's GET /queues instead: Go's fields\n"
    "           job_name, count and latency (not paused), indented with tabs\n" COMMON "\n"
    "Exit status: 0 success, 1 Redis failure, 2 bad command line.\n";

static const char pools_usage[] =
    "Usage: cwork pools [--redis URL] [--ns NS] [--json]\n"
    "\n"
    "Lists the worker pools of the namespace, Go's and cwork's, from their\n"
    "heartbeats: host, pid, concurrency, workers, when each started and last beat,\n"
    "and its job names. cwork pools beat every 2 s, Go's every 5 s; one silent for\n"
    "minutes has died, and a dead pool reaper puts its jobs back into their queues.\n"
    "\n"
    "  --json   print the body of Go workwebui's GET /worker_pools instead\n" COMMON "\n"
    "Exit status: 0 success, 1 Redis failure, 2 bad command line.\n";

static const char busy_usage[] =
    "Usage: cwork busy [--redis URL] [--ns NS] [--json]\n"
    "\n"
    "Lists the workers running a job now: the job's name and id, when it started,\n"
    "its last check-in and its args (cut to fit).\n"
    "\n"
    "  --json   print the body of Go workwebui's GET /busy_workers instead ([]\n"
    "           when no worker is busy, where Go's body is null)\n" COMMON "\n"
    "Exit status: 0 success, 1 Redis failure, 2 bad command line.\n";

const char admin_retry_intro[] =
    "Usage: cwork retry [--redis URL] [--ns NS] [--page N] [--name NAME | --grep TEXT]\n"
    "                [--order newest|oldest] [--json]\n"
    "       cwork retry run ID [--at T] | --all [--name NAME]\n"
    "       cwork retry delete [--at T] [--json] ID\n"
    "       cwork retry kill ID [--at T] | --all [--name NAME]\n"
    "\n"
    "Lists the retry set: jobs that failed and wait for their next attempt, the\n"
    "latest retry first (as the web UI; --order oldest: the next retry first), 20 a\n"
    "page, with the time of the next attempt, the failures so far, the last error and\n"
    "the args (cut to fit).\n";

const char admin_retry_outro[] =
    "Actions:\n"
    "  run ID        put job ID into its queue now, instead of at its retry time\n"
    "                (with --all every retry job; cwork retry run --help)\n"
    "  delete ID     remove job ID from the retry set (cwork retry delete --help)\n"
    "  kill ID       move job ID to the dead set now (cwork retry kill --help)\n"
    "\n"
    "Exit status: 0 success, 1 Redis failure, 2 bad command line (nothing written),\n"
    "4 no such job.\n";

const char admin_scheduled_intro[] =
    "Usage: cwork scheduled [--redis URL] [--ns NS] [--page N] [--name NAME | --grep TEXT]\n"
    "                [--order newest|oldest] [--no-periodic] [--json]\n"
    "       cwork scheduled run ID [--at T] | --all [--name NAME]\n"
    "       cwork scheduled delete [--at T] [--json] ID\n"
    "       cwork scheduled kill ID [--at T] | --all [--name NAME]\n"
    "\n"
    "Lists the scheduled set: jobs enqueued to run later (enqueue --in, periodic\n"
    "jobs), the soonest first (as the web UI; --order newest: the latest first), 20 a\n"
    "page, with the time each is due and its args (cut to fit).\n";

const char admin_scheduled_outro[] =
    "Actions:\n"
    "  run ID        put job ID into its queue now, instead of when it is due\n"
    "                (with --all every scheduled job; cwork scheduled run --help)\n"
    "  delete ID     remove job ID from the scheduled set\n"
    "                (cwork scheduled delete --help)\n"
    "  kill ID       move job ID to the dead set now (cwork scheduled kill --help)\n"
    "\n"
    "Exit status: 0 success, 1 Redis failure, 2 bad command line (nothing written),\n"
    "4 no such job.\n";

const char admin_dead_intro[] =
    "Usage: cwork dead [--redis URL] [--ns NS] [--page N] [--name NAME | --grep TEXT]\n"
    "                [--order newest|oldest] [--json]\n"
    "       cwork dead retry  ID [--died-at T] | --all [--name NAME]\n"
    "       cwork dead delete ID [--died-at T] | --all [--name NAME]\n"
    "       cwork dead trim [--older-than AGE] [--keep N]\n"
    "\n"
    "Lists the dead set: jobs that failed for the last time, the newest death\n"
    "first (as the web UI; --order oldest: the oldest first), 20 a page, with the\n"
    "time of death, the failures, the last error and the args (cut to fit).\n";

const char admin_dead_outro[] =
    "Actions:\n"
    "  retry    put dead jobs back into their queues (cwork dead retry --help)\n"
    "  delete   delete dead jobs (cwork dead delete --help)\n"
    "  trim     delete old dead jobs or all but the N newest (cwork dead trim --help)\n"
    "\n"
    "Exit status: 0 success, 1 Redis failure, 2 bad command line (nothing written),\n"
    "4 no such job.\n";

#define DIED_AT_HELP                                                                               \
    "  --died-at T, --at T  the job's time of death, as Unix seconds or as the\n"                  \
    "                      listing shows it (2023-11-14T22:13:20Z); without it the\n"              \
    "                      job is looked up by id first\n"

static const char dead_retry_usage[] =
    "Usage: cwork dead retry [--redis URL] [--ns NS] [--died-at T] [--json] ID\n"
    "       cwork dead retry [--redis URL] [--ns NS] --all [--name NAME] [--json]\n"
    "\n"
    "Puts dead job ID (with --all every dead job; with --name as well, only those\n"
    "called NAME) back into its queue with t set to now and its failures, error\n"
    "and periodic deadline removed, as the Retry button of Go's web UI does. A job\n"
    "whose name is not in known_jobs stays dead, its error then saying \"unknown\n"
    "job when requeueing\".\n"
    "\n" DIED_AT_HELP "  --all               every dead job (of NAME with --name)\n"
    "  --json              print {\"retried\":N} (for one job also \"at\" and \"id\")\n" COMMON "\n"
    "Exit status: 0 retried (with --all also when nothing was dead), 1 Redis\n"
    "failure, 2 bad command line (nothing written), 4 no such dead job, or its name\n"
    "is not in known_jobs (it stays dead).\n";

static const char dead_delete_usage[] =
    "Usage: cwork dead delete [--redis URL] [--ns NS] [--died-at T] [--json] ID\n"
    "       cwork dead delete [--redis URL] [--ns NS] --all [--name NAME] [--json]\n"
    "\n"
    "Deletes dead job ID (with --all every dead job; with --name as well, only\n"
    "those called NAME) for good.\n"
    "\n" DIED_AT_HELP "  --all               every dead job (of NAME with --name)\n"
    "  --json              print {\"deleted\":N} (for one job also \"at\" and \"id\")\n" COMMON "\n"
    "Exit status: 0 deleted (with --all also when nothing was dead), 1 Redis\n"
    "failure, 2 bad command line (nothing written), 4 no such dead job.\n";

static const char dead_trim_usage[] =
    "Usage: cwork dead trim [--redis URL] [--ns NS] [--older-than AGE] [--keep N]\n"
    "                       [--json]\n"
    "\n"
    "Deletes the dead jobs that died more than AGE ago, then the oldest beyond the\n"
    "N newest. Neither Go nor cwork ever trims the dead set by itself. At least one\n"
    "of --older-than and --keep is needed. A sharded namespace (cwork shards) is trimmed\n"
    "shard by shard, --keep N keeping N in each, with a line per shard and the sum.\n"
    "\n"
    "  --older-than AGE  seconds (86400) or a duration: 90s, 15m, 1h, 7d, 2w, 1d12h\n"
    "  --keep N          keep at most the N newest dead jobs (0 deletes them all)\n"
    "  --json            print {\"removed\":N} (sharded: {\"shards\":[{\"shard\",\"ns\",\n"
    "                    \"removed\"},…],\"removed\":N})\n" COMMON "\n"
    "Exit status: 0 success, 1 Redis failure, 2 bad command line (nothing written).\n";

/* printf format: the set's name, a sentence more, the time option's name and what
 * the time is, the set's name. */
static const char set_delete_usage[] =
    "Usage: cwork %s delete [--redis URL] [--ns NS] [--at T] [--json] ID\n"
    "\n"
    "Deletes job ID from the %s set for good: it will not run.%s\n"
    "\n"
    "  --at T, --%s T\n"
    "                      the entry's %s, as Unix seconds or as the listing\n"
    "                      shows it (2023-11-14T22:13:20Z); without it the job is\n"
    "                      looked up by id first\n"
    "  --json              print {\"at\":T,\"id\":\"ID\",\"deleted\":1}\n" COMMON "\n"
    "Exit status: 0 deleted, 1 Redis failure, 2 bad command line (nothing written),\n"
    "4 no such job in the %s set.\n";

/* printf format: the set's name twice, the time option's name, what the time is, the
 * set's name twice. */
static const char set_run_usage[] =
    "Usage: cwork %s run [--redis URL] [--ns NS] [--at T] [--json] ID\n"
    "       cwork %s run [--redis URL] [--ns NS] --all [--name NAME] [--json]\n"
    "\n"
    "Puts job ID (with --all every job of the set; with --name as well, only those\n"
    "called NAME) into its queue now, as the requeuer does once it is due: with t set\n"
    "to now, its failures and error kept, its periodic deadline (d) removed. A job\n"
    "whose name is not in known_jobs stays where it is: no pool would run it.\n"
    "\n"
    "  --at T, --%s T\n"
    "                      the entry's %s, as Unix seconds or as the listing\n"
    "                      shows it (2023-11-14T22:13:20Z); without it the job is\n"
    "                      looked up by id first\n"
    "  --all               every job of the set (of NAME with --name)\n"
    "  --json              print {\"run\":N,\"stayed\":M} (for one job {\"at\":T,\"id\":\"ID\",\n"
    "                      \"run\":1})\n" COMMON "\n"
    "Exit status: 0 queued (with --all also when nothing was there), 1 Redis failure\n"
    "(or the job's queue key holds something else; the job stays), 2 bad command\n"
    "line (nothing written), 4 no such job in the %s set, or its name is not in\n"
    "known_jobs (it stays in the %s set).\n";

static const char queue_usage[] =
    "Usage: cwork queue clear [--redis URL] [--ns NS] [--json] NAME\n"
    "       cwork queue delete [--redis URL] [--ns NS] [--json] NAME ID\n"
    "\n"
    "  clear    delete every job waiting in the queue of job NAME (below)\n"
    "  delete   delete the one waiting job ID (cwork queue delete --help)\n"
    "\n"
    "clear deletes every job waiting in the queue of job NAME, in one step: the\n"
    "jobs waiting at that moment go, jobs enqueued later stay; running, retry,\n"
    "scheduled and dead jobs are not in the queue. Unique jobs among them lose their\n"
    "guards, so they can be enqueued again. Warns when NAME is not in known_jobs.\n"
    "\n"
    "  --json   print {\"deleted\":N,\"name\":\"NAME\"}\n" COMMON "\n"
    "Exit status: 0 cleared (also when the queue was empty), 1 Redis failure (or the\n"
    "key holds something other than a queue; it is left as it is), 2 bad command\n"
    "line.\n";

static const char queue_delete_usage[] =
    "Usage: cwork queue delete [--redis URL] [--ns NS] [--json] NAME ID\n"
    "\n"
    "Deletes job ID from the queue of job NAME before a pool takes it: exactly that\n"
    "entry goes (found by its id, taken out by its bytes in one step), everything else\n"
    "in the queue stays. A unique job loses its guard, so that it can be enqueued\n"
    "again. The queue is searched from its back, 1000 entries per step, so a queue\n"
    "of millions takes a moment but never blocks Redis for long.\n"
    "\n"
    "  --json   print {\"deleted\":1,\"id\":\"ID\",\"name\":\"NAME\"}\n" COMMON "\n"
    "Exit status: 0 deleted, 1 Redis failure (or the key holds something other than\n"
    "a queue; it is left as it is), 2 bad command line, 4 no job ID waiting in the\n"
    "queue (a pool may have taken it to run: see cwork job ID).\n";

static const char pause_usage[] =
    "Usage: cwork pause [--redis URL] [--ns NS] [--json] NAME\n"
    "       cwork unpause [--redis URL] [--ns NS] [--json] NAME\n"
    "\n"
    "pause stops every pool of the namespace, Go's included, from taking jobs\n"
    "called NAME (it sets jobs:NAME:paused): new jobs wait in the queue, running\n"
    "ones finish. unpause lets pools take them again. A NAME that is not in\n"
    "known_jobs is paused anyway, with a warning.\n"
    "\n"
    "  --json   print {\"name\":\"NAME\",\"paused\":true} (false after unpause)\n" COMMON "\n"
    "Exit status: 0 success, 1 Redis failure, 2 bad command line.\n";

static const char job_usage[] =
    "Usage: cwork job [--redis URL] [--ns NS] [--json] ID\n"
    "\n"
    "Finds the job with this id in the queues, in progress (in the pools of\n"
    "worker_pools), and in the retry, scheduled and dead sets (a scan of them all:\n"
    "slow on a big namespace), and tells its story: where it is, when it was first\n"
    "enqueued and last requeued, for a running job its pool (host, pid), worker,\n"
    "start and last check-in, every failure cwork pools kept (the last 10, PROTOCOL\n"
    "§26), the time it spent in each state, and its JSON as stored.\n"
    "\n"
    "  --json   print one line {\"at\":T,\"checkin\":...,\"failures\":[...],\n"
    "           \"first_enqueued_at\":...,\"job\":{...},\"phases\":[...],\"place\":P,\n"
    "           \"pool\":...,\"started_at\":...,\"worker\":...} instead: P is queue,\n"
    "           in_progress, retry, scheduled or dead, T the retry, run or death\n"
    "           time (0 in a queue or in progress), job the job in Go's encoding\n" COMMON "\n"
    "Exit status: 0 found, 1 Redis failure, 2 bad command line, 4 no job with this\n"
    "id.\n";

static const char cancel_usage[] =
    "Usage: cwork cancel [--redis URL] [--ns NS] [--json] ID\n"
    "\n"
    "Cancels the job with this id. A job waiting in its queue, scheduled or waiting\n"
    "for a retry moves to the dead set at once. A running job's cwork pool is told\n"
    "(within a second): its handler is asked to stop, and under `cwork work` the\n"
    "command's whole process tree gets SIGTERM, then SIGKILL after --kill-grace. Either\n"
    "way the job lands in the dead set with err \"cancelled\" (fails + 1), where it can\n"
    "be inspected and retried by hand (cwork dead retry); it is never retried, nor run\n"
    "again by a reaper should its pool die. A job running in a Go pool cannot be\n"
    "cancelled: nothing is changed. Finding the job scans the namespace as cwork job\n"
    "does.\n"
    "\n"
    "  --json   print one line {\"cancelled\":true,\"id\":\"ID\",\"place\":P,\"pool\":\"POOL\"}:\n"
    "           P is where the job was (queue, scheduled, retry or in_progress),\n"
    "           POOL the pool running it (\"\" unless in_progress)\n" COMMON "\n"
    "Exit status: 0 cancelled, 1 Redis failure, 2 bad command line, 4 no job with this\n"
    "id (or it is dead already), 5 it runs in a pool that cannot be told (a Go pool).\n";

/* printf format: the set's name twice, a sentence more, the time option's name, what
 * the time is, the set's name. */
static const char set_kill_usage[] =
    "Usage: cwork %s kill [--redis URL] [--ns NS] [--at T] [--json] ID\n"
    "       cwork %s kill [--redis URL] [--ns NS] --all [--name NAME] [--json]\n"
    "\n"
    "Moves job ID (with --all every job of the set; with --name as well, only those\n"
    "called NAME) to the dead set now, as Sidekiq's Kill does: it will not run again\n"
    "unless retried by hand (cwork dead retry). It dies at now (its score in the dead\n"
    "set) with its last error kept; a job without one gets the error \"killed\".%s A\n"
    "job of a tracked batch counts as dead in its batch, once.\n"
    "\n"
    "  --at T, --%s T\n"
    "                      the entry's %s, as Unix seconds or as the listing\n"
    "                      shows it (2023-11-14T22:13:20Z); without it the job is\n"
    "                      looked up by id first\n"
    "  --all               every job of the set (of NAME with --name)\n"
    "  --json              print {\"killed\":N} (for one job also \"at\" and \"id\")\n" COMMON "\n"
    "Exit status: 0 killed (with --all also when nothing was there), 1 Redis\n"
    "failure, 2 bad command line (nothing written), 4 no such job in the %s set.\n";

/* The whole --help texts of the commands whose one option (--json) they list by hand;
 * NULL for the set commands, whose list options come from their tables. */
const char *const admin_usage_texts[] = {
    [ADM_QUEUES] = queues_usage, [ADM_POOLS] = pools_usage,   [ADM_BUSY] = busy_usage,
    [ADM_RETRY] = NULL,          [ADM_SCHEDULED] = NULL,      [ADM_DEAD] = NULL,
    [ADM_PAUSE] = pause_usage,   [ADM_UNPAUSE] = pause_usage, [ADM_JOB] = job_usage,
    [ADM_QUEUE] = queue_usage,   [ADM_CANCEL] = cancel_usage};

void admin_usage(const admin_opts *o)
{
    const char *const *usages = admin_usage_texts;
    if (o->action == ACT_RETRY)
        fputs(dead_retry_usage, stdout);
    else if (o->action == ACT_TRIM)
        fputs(dead_trim_usage, stdout);
    else if (o->action == ACT_KILL && o->cmd == ADM_RETRY)
        printf(set_kill_usage, "retry", "retry", "", "retry-at", "retry time", "retry");
    else if (o->action == ACT_KILL)
        printf(set_kill_usage, "scheduled", "scheduled",
               "\nA unique job also loses its guard, so that it can be enqueued again.", "run-at",
               "run time", "scheduled");
    else if (o->action == ACT_RUN && o->cmd == ADM_RETRY)
        printf(set_run_usage, "retry", "retry", "retry-at", "retry time", "retry", "retry");
    else if (o->action == ACT_RUN)
        printf(set_run_usage, "scheduled", "scheduled", "run-at", "run time", "scheduled",
               "scheduled");
    else if (o->action == ACT_DELETE && o->cmd == ADM_QUEUE)
        fputs(queue_delete_usage, stdout);
    else if (o->action == ACT_DELETE && o->cmd == ADM_DEAD)
        fputs(dead_delete_usage, stdout);
    else if (o->action == ACT_DELETE && o->cmd == ADM_RETRY)
        printf(set_delete_usage, "retry", "retry", "", "retry-at", "retry time", "retry");
    else if (o->action == ACT_DELETE)
        printf(set_delete_usage, "scheduled", "scheduled",
               "\nA unique job also loses its guard, so that it can be enqueued again.", "run-at",
               "run time", "scheduled");
    else if (!usages[o->cmd])
        cli_print_help(admin_command(o->cmd), stdout);
    else
        fputs(usages[o->cmd], stdout);
}

/* ---------------------------------------------------------------- option tables */

static void admin_help(const cli_command *cmd, const void *opts)
{
    (void)cmd;
    admin_usage(opts);
}

#define ROW(name, alias, arg, metavar, help, bit)                                                  \
    {                                                                                              \
        name, alias, arg, metavar, help, admin_set_option, 0, bit, NULL, 0                         \
    }
#define ADMIN_TAIL                                                                                 \
    ROW("shard", NULL, CLI_ARG_REQUIRED, "N", NULL, OPT_SHARD), CLI_CONN_OPTS(admin_opts, conn),   \
        CLI_HELP_OPT, CLI_OPT_END
#define LIST_ROWS(set, at_alias)                                                                   \
    ROW("page", NULL, CLI_ARG_REQUIRED, "N", "show page N (default 1)", OPT_PAGE),                 \
        ROW("name", NULL, CLI_ARG_REQUIRED, "NAME",                                                \
            "only jobs called NAME (the count and the pages count only those)", OPT_NAME),         \
        ROW("grep", "search", CLI_ARG_REQUIRED, "TEXT",                                            \
            "only jobs whose args or error hold TEXT (ASCII letters in any\n"                      \
            "case), newest first: a scan of at most the newest\n"                                  \
            "10000 jobs, and the count line says when it stopped there;\n"                         \
            "with --json {\"bounded\":B,\"count\":N,\"jobs\":[{\"" at_alias "\":T,\"job\":\n"      \
            "{...}}],\"scanned\":S,\"total\":M}",                                                  \
            OPT_GREP),                                                                             \
    {                                                                                              \
        "order", NULL, CLI_ARG_REQUIRED, "newest|oldest",                                          \
            "newest: the highest " set " time first; oldest: the lowest\n"                         \
            "first (default: the web UI's, above; --json: Go's, oldest)",                          \
            admin_set_option, 0, OPT_ORDER, "newest oldest", 0                                     \
    }
/* The options of the actions (their texts are in the actions' --help). */
#define ACTION_ROWS(at_name)                                                                       \
    ROW("all", NULL, CLI_ARG_NONE, NULL, NULL, OPT_ALL),                                           \
        ROW("at", at_name, CLI_ARG_REQUIRED, "T", NULL, OPT_AT)

static const cli_opt json_only[] = {ROW("json", NULL, CLI_ARG_NONE, NULL, NULL, OPT_JSON),
                                    ADMIN_TAIL};

static const cli_opt retry_options[] = {
    LIST_ROWS("retry", "retry_at"),
    ROW("json", NULL, CLI_ARG_NONE, NULL,
        "print the body of Go workwebui's GET /retry_jobs instead:\n"
        "{\"count\": N, \"jobs\": [{\"retry_at\": T, <job fields>}, ...]}",
        OPT_JSON),
    ACTION_ROWS("retry-at"), ADMIN_TAIL};

static const cli_opt scheduled_options[] = {
    LIST_ROWS("run", "run_at"),
    ROW("no-periodic", NULL, CLI_ARG_NONE, NULL,
        "leave out the instances periodic jobs enqueue ahead (their ids\n"
        "start with periodic:; the count counts the others only)",
        OPT_NO_PERIODIC),
    ROW("json", NULL, CLI_ARG_NONE, NULL,
        "print the body of Go workwebui's GET /scheduled_jobs instead:\n"
        "{\"count\": N, \"jobs\": [{\"run_at\": T, <job fields>}, ...]}",
        OPT_JSON),
    ACTION_ROWS("run-at"), ADMIN_TAIL};

static const cli_opt dead_options[] = {
    LIST_ROWS("death", "died_at"),
    ROW("json", NULL, CLI_ARG_NONE, NULL,
        "print the body of Go workwebui's GET /dead_jobs instead:\n"
        "{\"count\": N, \"jobs\": [{\"died_at\": T, <job fields>}, ...]}",
        OPT_JSON),
    ACTION_ROWS("died-at"),
    ROW("older-than", NULL, CLI_ARG_REQUIRED, "AGE", NULL, OPT_OLDER),
    ROW("keep", NULL, CLI_ARG_REQUIRED, "N", NULL, OPT_KEEP),
    ADMIN_TAIL};

static const char *const set_actions[] = {"run", "delete", "kill", NULL};
static const char *const dead_actions[] = {"retry", "delete", "trim", NULL};
static const char *const queue_actions[] = {"clear", "delete", NULL};

#define JSON_ONLY(cmd, text, subs_)                                                                \
    {                                                                                              \
        .name = (cmd), .intro = (text), .opts = json_only, .subs = (subs_),                        \
        .seen_field = offsetof(admin_opts, seen), .once = 1, .help = admin_help                    \
    }
#define SET(cmd, table, subs_)                                                                     \
    {                                                                                              \
        .name = #cmd, .intro = admin_##cmd##_intro, .outro = admin_##cmd##_outro, .opts = (table), \
        .subs = (subs_), .seen_field = offsetof(admin_opts, seen), .once = 1, .help = admin_help   \
    }

const cli_command admin_commands[] = {
    [ADM_QUEUES] = JSON_ONLY("queues", queues_usage, NULL),
    [ADM_POOLS] = JSON_ONLY("pools", pools_usage, NULL),
    [ADM_BUSY] = JSON_ONLY("busy", busy_usage, NULL),
    [ADM_RETRY] = SET(retry, retry_options, set_actions),
    [ADM_SCHEDULED] = SET(scheduled, scheduled_options, set_actions),
    [ADM_DEAD] = SET(dead, dead_options, dead_actions),
    [ADM_PAUSE] = JSON_ONLY("pause", pause_usage, NULL),
    [ADM_UNPAUSE] = JSON_ONLY("unpause", pause_usage, NULL),
    [ADM_JOB] = JSON_ONLY("job", job_usage, NULL),
    [ADM_QUEUE] = JSON_ONLY("queue", queue_usage, queue_actions),
    [ADM_CANCEL] = JSON_ONLY("cancel", cancel_usage, NULL),
};

const cli_command *admin_command(admin_cmd cmd)
{
    return &admin_commands[cmd];
}
