/* The admin commands (queues, pools, busy, retry, scheduled, dead, pause, unpause, job,
 * queue, cancel)
 * share one option parser (cmd_admin.c) and help texts (cmd_admin_help.c); what they
 * show is in cmd_admin_show.c, what they change in cmd_admin_change.c. */
#ifndef CWORK_CLI_CMD_ADMIN_H
#define CWORK_CLI_CMD_ADMIN_H

#include "cli.h"
#include "opt.h"

#include <stddef.h>
#include <stdint.h>

typedef enum admin_cmd {
    ADM_QUEUES,
    ADM_POOLS,
    ADM_BUSY,
    ADM_RETRY,
    ADM_SCHEDULED,
    ADM_DEAD,
    ADM_PAUSE,
    ADM_UNPAUSE,
    ADM_JOB,
    ADM_QUEUE,
    ADM_CANCEL
} admin_cmd;

/* What a set command (retry, scheduled, dead) or queue does: its first positional
 * argument. */
typedef enum admin_action {
    ACT_LIST,
    ACT_RETRY,
    ACT_DELETE,
    ACT_TRIM,
    ACT_RUN,   /* retry run, scheduled run */
    ACT_CLEAR, /* queue clear (queue delete is ACT_DELETE) */
    ACT_KILL   /* retry kill, scheduled kill */
} admin_action;

/* Options, as bits of admin_opts.seen. */
enum {
    OPT_JSON = 1 << 0,
    OPT_PAGE = 1 << 1,
    OPT_NAME = 1 << 2,
    OPT_ALL = 1 << 3,
    OPT_AT = 1 << 4,
    OPT_OLDER = 1 << 5,
    OPT_KEEP = 1 << 6,
    OPT_GREP = 1 << 7,        /* --grep TEXT (--search): the list's substring search */
    OPT_ORDER = 1 << 8,       /* --order newest|oldest */
    OPT_NO_PERIODIC = 1 << 9, /* --no-periodic: scheduled list without periodic instances */
    OPT_SHARD = 1 << 10       /* --shard N: one shard of a sharded namespace alone */
};

typedef struct admin_opts {
    cli_conn_opts conn;
    admin_cmd cmd;
    admin_action action;
    char label[32];         /* "cwork dead retry", for messages */
    unsigned seen;          /* OPT_* given on the command line */
    unsigned page;          /* --page, 0 when absent */
    const char *name;       /* --name */
    int64_t at;             /* --at / --died-at / --retry-at / --run-at */
    int64_t older_than;     /* --older-than, in seconds */
    int64_t keep;           /* --keep */
    const char *arg;        /* the ID or NAME argument */
    const char *id;         /* cwork queue delete NAME ID: the ID */
    const char *grep;       /* --grep */
    int newest_first;       /* --order, else the web UI's default for the set */
    cwork_go_flavor flavor; /* --go-flavor / CWORK_GO_FLAVOR: the JSON bodies' flavour */
    unsigned shard;         /* --shard N (with OPT_SHARD in seen) */
} admin_opts;

/* The option table of each admin command (cmd_admin.c), and the texts around the
 * generated option list of the set commands' lists (cmd_admin_help.c). */
const cli_command *admin_command(admin_cmd cmd);
extern const char admin_retry_intro[], admin_retry_outro[], admin_scheduled_intro[],
    admin_scheduled_outro[], admin_dead_intro[], admin_dead_outro[];
extern const char *const admin_usage_texts[];
extern const cli_command admin_commands[]; /* indexed by admin_cmd */
/* The setter of every admin option row (cmd_admin.c). */
int admin_set_option(void *opts, const char *value, const cli_opt_ctx *ctx);

/* Connects, creates a client for the namespace and returns fn's exit status, or the
 * exit status of a failure to connect (reported); CLI_FAILURE when stdout could not be
 * written. */
int admin_run(const admin_opts *o, int (*fn)(const admin_opts *o, cwork_client *client));

/* Prints "LABEL: message" for a failed call and returns its exit status: CLI_NOT_FOUND
 * for CWORK_ENOTFOUND, CLI_USAGE for CWORK_EINVAL, else CLI_FAILURE. */
int admin_fail(const admin_opts *o, int rc, const cwork_error *err);

/* Writes len bytes of s as a JSON string literal (invalid UTF-8 as U+FFFD). */
void admin_json_string(const char *s, size_t len);

/* The set a set command works on; its lower-case name ("dead set", …). */
cwork_job_set admin_set(admin_cmd cmd);
const char *admin_set_title(cwork_job_set set);
/* "queue", "in_progress", "retry", "scheduled", "dead". */

/* Prints the --help text of the command (and action) to stdout (cmd_admin_help.c). */
void admin_usage(const admin_opts *o);

/* cmd_admin_show.c */
int admin_queues(const admin_opts *o);
int admin_pools(const admin_opts *o);
int admin_busy(const admin_opts *o);
int admin_list(const admin_opts *o);
int admin_job(const admin_opts *o);

/* cmd_admin_change.c */
int admin_retry_dead(const admin_opts *o);
int admin_delete(const admin_opts *o);
int admin_trim(const admin_opts *o);
int admin_pause(const admin_opts *o);
int admin_run_now(const admin_opts *o);
int admin_clear_queue(const admin_opts *o);
int admin_delete_waiting(const admin_opts *o);
int admin_cancel(const admin_opts *o);

/* cmd_admin_change.c: retry kill, scheduled kill */
int admin_kill(const admin_opts *o);
/* cmd_admin_search.c: a list with --grep */
int admin_search(const admin_opts *o, cwork_client *client);

/* cmd_admin_show.c: the table of a page of a set's jobs, printed (CLI_OK or a failure) */
int admin_print_jobs(const admin_opts *o, cwork_job_set set, const cwork_listed_job *jobs,
                     size_t n);

#endif
