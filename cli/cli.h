/* Shared pieces of the cwork command: option parsing in both spellings (the Go tools'
 * `-redis URL` and `--redis URL` / `--redis=URL`), exit codes, and connection set-up. */
#ifndef CWORK_CLI_H
#define CWORK_CLI_H

#include "cwork.h"

#include <stdio.h>

/* Exit codes, documented in `cwork --help`. */
enum {
    CLI_OK = 0,
    CLI_FAILURE = 1,   /* Redis unreachable or another runtime failure */
    CLI_USAGE = 2,     /* bad command line or bad input; nothing was written */
    CLI_DUPLICATE = 3, /* a unique job with the same arguments is already waiting */
    CLI_NOT_FOUND = 4  /* no such job (admin commands) */
};

/* Walks argv one option at a time. */
typedef struct cli_args {
    int argc;
    char **argv;
    int i;              /* next index */
    const char *value;  /* the option's value after cli_take_value */
    const char *inline_value; /* from --opt=value */
    char name[64];      /* current option name without dashes */
    int only_positional; /* after "--" */
} cli_args;

void cli_args_init(cli_args *a, int argc, char **argv, int first);
/* Next element: returns 1 with a->name set for an option, 0 for a positional argument
 * (a->value), -1 at the end. "--" ends options. */
int cli_next(cli_args *a);
/* Takes the current option's value (inline or the next element); prints an error and
 * returns -1 when there is none. */
int cli_take_value(cli_args *a);
/* For options that take no value: refuses `--flag=value` (prints why, returns -1).
 * `--all=false` must never mean "all" (Go's flag package reads it as false). */
int cli_flag(const cli_args *a);
/* True when the current option is called name (either spelling). */
int cli_is(const cli_args *a, const char *name);

/* Options every Redis-facing command shares. */
typedef struct cli_conn_opts {
    const char *redis_url; /* NULL: CWORK_REDIS_URL, else redis://127.0.0.1:6379 */
    const char *ns;        /* default "work", as the Go tools */
    const char *go_flavor; /* --go-flavor; NULL: CWORK_GO_FLAVOR, else fork */
} cli_conn_opts;

/* Handles --redis/--ns/--go-flavor; returns 1 when the option was one of them, 0 if
 * not, -1 on a missing value. */
int cli_conn_option(cli_args *a, cli_conn_opts *o);
/* The Go flavour of the namespace: --go-flavor, else $CWORK_GO_FLAVOR (when set and not
 * empty), else fork. Prints the error and returns -1 for anything but fork/upstream. */
int cli_go_flavor(const cli_conn_opts *o, cwork_go_flavor *out);
/* Creates the connection pool and checks that Redis answers; prints the error (with
 * the password redacted) and returns NULL on failure, with *status the exit status to
 * use: CLI_USAGE for a URL that cannot be used, CLI_FAILURE when Redis did not answer. */
cwork_redis *cli_connect(const cli_conn_opts *o, int *status);
/* The two halves of cli_connect: the pool for the URL, not yet connected (NULL, with
 * the error printed, for a URL that cannot be used), and the check that Redis answers
 * (0, or -1 with the error printed). */
cwork_redis *cli_redis_new(const cli_conn_opts *o);
int cli_ping(cwork_redis *r);

/* Installs the stderr logger at warn level (CWORK_LOG_LEVEL=debug|info|warn|error). */
void cli_setup_logging(void);

/* Sub-commands, one file each (cmd_NAME.c); argv[1] is the command's name. */
int cmd_enqueue(int argc, char **argv);
int cmd_work(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_queues(int argc, char **argv);
int cmd_pools(int argc, char **argv);
int cmd_busy(int argc, char **argv);
int cmd_retry(int argc, char **argv);
int cmd_scheduled(int argc, char **argv);
int cmd_dead(int argc, char **argv);
int cmd_pause(int argc, char **argv);
int cmd_unpause(int argc, char **argv);
int cmd_job(int argc, char **argv);
int cmd_web(int argc, char **argv);
/* COMMAND DECLARATIONS (one per command, keep this marker) */

#endif
