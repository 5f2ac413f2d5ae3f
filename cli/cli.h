/* Shared pieces of the cwork command: option parsing in both spellings (the Go tools'
 * `-redis URL` and `--redis URL` / `--redis=URL`), exit codes, and connection set-up. */
#ifndef CWORK_CLI_H
#define CWORK_CLI_H

#include "cwork.h"

#include <stdint.h>
#include <stdio.h>

/* Exit codes, documented in `cwork --help`. */
enum {
    CLI_OK = 0,
    CLI_FAILURE = 1,        /* Redis unreachable or another runtime failure */
    CLI_USAGE = 2,          /* bad command line or bad input; nothing was written */
    CLI_DUPLICATE = 3,      /* a unique job with the same arguments is already waiting */
    CLI_NOT_FOUND = 4,      /* no such job (admin commands) */
    CLI_NOT_CANCELLABLE = 5 /* cwork cancel: the job runs in a pool that cannot stop it */
};

/* Walks argv one option at a time. */
typedef struct cli_args {
    int argc;
    char **argv;
    int i;                    /* next index */
    const char *value;        /* the option's value after cli_take_value */
    const char *inline_value; /* from --opt=value */
    char name[64];            /* current option name without dashes */
    int only_positional;      /* after "--" */
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
    const char *go_json;   /* --go-json; NULL: CWORK_GO_JSON, else go1.22 */
} cli_conn_opts;

/* Handles --redis/--ns/--go-flavor/--go-json; returns 1 when the option was one of them, 0 if
 * not, -1 on a missing value. */
int cli_conn_option(cli_args *a, cli_conn_opts *o);
/* The Go flavour of the namespace: --go-flavor, else $CWORK_GO_FLAVOR (when set and not
 * empty), else fork. Prints the error and returns -1 for anything but fork/upstream. */
int cli_go_flavor(const cli_conn_opts *o, cwork_go_flavor *out);
/* How the namespace's Go spells U+0008/U+000C: --go-json, else $CWORK_GO_JSON (when set
 * and not empty), else go1.22. Prints the error and returns -1 for anything but
 * go1.22/go1.21. */
int cli_go_json(const cli_conn_opts *o, cwork_go_json *out);
/* The options cli_conn_option and every command's --help take, for option lists. */
#define CLI_COMMON_OPTIONS "redis", "ns", "go-flavor", "go-json", "help"
/* Creates the connection pool and checks, in about a second at most, that Redis answers.
 * On failure it prints one line — what failed (the password redacted), which URL was
 * used and where it came from, and what to do: --redis URL, CWORK_REDIS_URL, whether
 * redis-server runs, or the password options for NOAUTH/WRONGPASS — with no log lines
 * around it, and returns NULL with *status the exit status to use: CLI_USAGE for a URL
 * that cannot be used, CLI_FAILURE when Redis did not answer. The pool keeps the
 * library's default timeouts. */
cwork_redis *cli_connect(const cli_conn_opts *o, int *status);
/* The two halves of cli_connect: the pool for the URL, not yet connected (NULL, with
 * the error printed, for a URL that cannot be used), and the quick check that Redis at
 * o's URL answers (0, or -1 with the line printed). */
cwork_redis *cli_redis_new(const cli_conn_opts *o);
int cli_ping(const cli_conn_opts *o);
/* The library's defaults, with the passwords of $CWORK_REDIS_PASSWORD and
 * $CWORK_REDIS_SENTINEL_PASSWORD (when set and not empty; the library reads no
 * environment): used when the URL carries none. */
void cli_redis_options(cwork_redis_options *ro);

/* "LABEL: unknown option --NAME; did you mean --X? (see LABEL --help)", the suggestion
 * from options (NULL-terminated names without dashes) when one is close. */
void cli_unknown_option(const char *label, const cli_args *a, const char *const *options);

/* ---- pure text functions (cli_text.c, table-tested by tests/cli/test_cli_text.c) ---- */

/* A duration: seconds ("90", "0.5"), or numbers with units ms, s, m, h, d, w, one
 * after another ("90s", "15m", "1h30m", "7d", "1.5h"), into milliseconds. -1 for
 * anything else: signs, spaces, a bare number after a unit ("1h30"), above 100 years. */
int cli_duration_ms(const char *s, int64_t *ms);
/* The same in whole seconds: -1 also when it has a fraction of a second. */
int cli_duration_s(const char *s, int64_t *seconds);
/* The known word (candidates: NULL-terminated) that word is probably a typo of: the
 * closest within one edit for words of up to 3 bytes and two for longer ones (a swap of
 * neighbours counts one), else the only one word is a prefix of (3 bytes or more).
 * NULL when none is, or when word is itself a candidate. */
const char *cli_suggest(const char *word, const char *const *candidates);

/* Warns on stderr about each of the n job names that no worker pool of namespace ns
 * has registered (its heartbeat's job_names), with the closest registered name when one
 * is near (enqueue_hint.c). Prints nothing when every name is served or when the pools
 * cannot be read. */
void cli_warn_unserved(cwork_redis *redis, const char *ns, const char *const *names, size_t n);

/* Damaged keys (cli_damage.c, cwork_client_damage): the calling thread's list as one
 * "LABEL: warning: KEY is a TYPE, expected a WANT (WHAT); … cwork doctor --ns NS can
 * repair it" line each on stderr (returns the count); as a JSON array on stdout; and a
 * JSON body printed with a "damaged" member added when it is an object and the list is
 * not empty (an array is printed as it is). */
size_t cli_warn_damage(const char *label, const char *ns);
void cli_json_damaged(void);
void cli_print_json_body(const char *body, size_t len);

/* The job name the namespace knows (known_jobs, names in its queues and sets, names its
 * pools register) that name is probably a typo of (cli_suggest): 1 with it copied into
 * out, 0 when none is near or the names cannot be read (enqueue_hint.c). */
int cli_near_job_name(cwork_client *client, const char *name, char *out, size_t size);

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
int cmd_cancel(int argc, char **argv);
int cmd_web(int argc, char **argv);
int cmd_queue(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_limits(int argc, char **argv);
int cmd_limit(int argc, char **argv);
int cmd_result(int argc, char **argv);
int cmd_succeeded(int argc, char **argv);
int cmd_batch(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_shards(int argc, char **argv); /* cmd_shards.c: a sharded namespace (§27) */
/* cmd_batch.c: tracked batches (PROTOCOL §23); cmd_doctor.c: the namespace doctor (§25) */
/* COMMAND DECLARATIONS (one per command, keep this marker) */

#endif
