/* One option table per cwork command, and everything made from it: the command line
 * parser (cli_parse), the option list of `--help` (cli_print_help), shell completion
 * (`cwork completion bash|zsh`, opt_complete.c) and the man page (`cwork man`,
 * opt_man.c). A command's options are declared once, as rows of a cli_opt array; the
 * hand-written parts that stay are the paragraphs around the option list. */
#ifndef CWORK_CLI_OPT_H
#define CWORK_CLI_OPT_H

#include "cli.h"

#include <stddef.h>
#include <stdint.h>

typedef struct cli_opt cli_opt;

/* What cli_parse hands a setter besides the value. */
typedef struct cli_opt_ctx {
    const char *label;   /* "cwork stats", for messages */
    const char *spelled; /* the name as given on the command line, without dashes */
    const cli_opt *opt;
    cli_args *args; /* the walk, for an option whose value is optional */
} cli_opt_ctx;

/* Stores what the option says into the command's options struct (opts). value is NULL
 * for a flag (and for an optional value not given). Returns 0, or -1 after printing
 * "LABEL: --NAME ..." on stderr. */
typedef int (*cli_opt_setter)(void *opts, const char *value, const cli_opt_ctx *ctx);

typedef enum cli_opt_arg {
    CLI_ARG_NONE,     /* a flag: --json; --json=x is refused */
    CLI_ARG_REQUIRED, /* --page N or --page=N */
    CLI_ARG_OPTIONAL  /* --watch [SECONDS]: the setter takes what it wants (ctx->args) */
} cli_opt_arg;

enum {
    CLI_OPT_COMMON = 1u << 0, /* one of the Redis options: listed once, in cwork --help */
    CLI_OPT_REPEAT = 1u << 1, /* may be given more than once even where options are once only */
    CLI_OPT_FILE = 1u << 2,   /* the value is a file name (completion offers files) */
    CLI_OPT_HEADING = 1u << 3 /* no option: a heading in the option list (CLI_HEADING) */
};

/* The fields are in the order a table row reads best, not the tightest packing. */
struct cli_opt {         // NOLINT(clang-analyzer-optin.performance.Padding)
    const char *name;    /* long name, without dashes; NULL ends a table */
    const char *alias;   /* a second spelling ("search", "died-at", "h"), or NULL */
    cli_opt_arg arg;     /* whether it takes a value */
    const char *metavar; /* the value in --help: "N", "URL"; NULL for a flag */
    const char *help;    /* --help text; lines after the first start with spaces to
                          * line up; NULL: accepted but not listed */
    cli_opt_setter set;  /* stores it; NULL for --help (handled by cli_parse) */
    size_t field;        /* offsetof the field the generic setters below store into */
    unsigned bit;        /* set in the command's seen bits when given (0: none) */
    const char *values;  /* the words completion offers for the value ("fork upstream") */
    unsigned flags;      /* CLI_OPT_* */
};

/* A command: its table and the texts around the option list. */
typedef struct cli_command {
    const char *name;        /* "stats" */
    const char *summary;     /* one line: cwork --help and the man page's NAME list */
    const char *intro;       /* "Usage: ..." and the paragraphs before the options */
    const char *outro;       /* the paragraphs after them (exit status ...), or NULL */
    const cli_opt *opts;     /* the table, ending with a row whose name is NULL */
    const char *const *subs; /* words taken as the first argument (actions), or NULL */
    /* offsetof an unsigned in the options struct that collects the bits of the options
     * given, or CLI_NO_SEEN */
    size_t seen_field;
    int once; /* an option given twice is refused ("LABEL: --NAME given twice") */
    /* prints --help itself (commands whose actions have texts of their own); NULL:
     * cli_print_help */
    void (*help)(const struct cli_command *cmd, const void *opts);
} cli_command;

#define CLI_NO_SEEN ((size_t)-1)

/* Takes a positional argument; 0, or -1 after printing why. */
typedef int (*cli_positional_fn)(void *opts, const char *arg);

/* Parses argv[first..] by cmd's table into opts. label (a buffer the positional
 * function may rewrite, as admin actions do) prefixes the messages. Unknown options get
 * "did you mean" from the table's names; --help and -h print the help. positional NULL:
 * any argument is refused ("LABEL: unexpected argument ..."). Returns 0 to go on, 1 when
 * the help was printed, -1 on a bad command line (reported). */
int cli_parse(const cli_command *cmd, const char *label, int argc, char **argv, int first,
              void *opts, cli_positional_fn positional);

/* The option list of cmd, one option a line, as --help shows it. */
void cli_print_options(const cli_command *cmd, FILE *out);
/* The Redis options with their whole texts, for cwork --help. */
void cli_print_common_options(FILE *out);
/* intro, "Options:" list, outro. */
void cli_print_help(const cli_command *cmd, FILE *out);

/* ---- generic setters: the field is at opt->field of the options struct ---- */
int cli_set_flag(void *opts, const char *value, const cli_opt_ctx *ctx);   /* int = 1 */
int cli_set_string(void *opts, const char *value, const cli_opt_ctx *ctx); /* const char * */
/* const char *, refusing an empty value ("LABEL: --NAME needs METAVAR") */
int cli_set_nonempty(void *opts, const char *value, const cli_opt_ctx *ctx);
/* int64_t milliseconds from a duration (cli_duration_ms; signs are refused) */
int cli_set_duration_ms(void *opts, const char *value, const cli_opt_ctx *ctx);

/* ---- checks for a command's own setters, whose bounds are their own ----
 * Each takes value with bounds and want (the message's "needs WANT": "a number from 1
 * to 100"), sets *out and returns 0; or prints "LABEL: --NAME needs WANT, got \"V\"",
 * or "LABEL: --NAME needs WANT; \"V\" is negative" for a negative number or duration
 * (a bare -5 as much as -5s), and returns -1. */
/* A whole number from min to max: digits only (no sign, no spaces). */
int cli_opt_uint(const cli_opt_ctx *ctx, const char *value, uint64_t min, uint64_t max,
                 const char *want, uint64_t *out);
/* A duration (cli_duration_ms) from min_ms to max_ms milliseconds. */
int cli_opt_duration_ms(const cli_opt_ctx *ctx, const char *value, int64_t min_ms, int64_t max_ms,
                        const char *want, int64_t *out);
/* A duration in whole seconds (cli_duration_s) from min_s to max_s. */
int cli_opt_duration_s(const cli_opt_ctx *ctx, const char *value, int64_t min_s, int64_t max_s,
                       const char *want, int64_t *out);

/* The Redis options of every command, as rows of a table of options struct T whose
 * cli_conn_opts is field C. */
int cli_set_redis_url(void *opts, const char *value, const cli_opt_ctx *ctx);
#define CLI_CONN_HELP_REDIS                                                                        \
    "redis://[user:password@]host[:port][/db], host:port,\n"                                       \
    "unix:///path[?db=N], rediss://…?ca=FILE[&cert=F&key=F&sni=NAME]\n"                          \
    "(TLS), redis+sentinel://h1:p1,h2:p2/MASTER[/db] or\n"                                         \
    "redis+cluster://h1:p1,h2:p2 (namespace with a hash tag: {app})\n"                             \
    "(default: $CWORK_REDIS_URL, else redis://127.0.0.1:6379); the\n"                              \
    "passwords may instead come from $CWORK_REDIS_PASSWORD and\n"                                  \
    "$CWORK_REDIS_SENTINEL_PASSWORD, which keeps them out of `ps`"
#define CLI_CONN_HELP_FLAVOR                                                                       \
    "which Go library shares the namespace: the Kuper-Tech fork\n"                                 \
    "(default) or upstream gocraft/work v0.5; decides what cwork\n"                                \
    "writes where they differ (default: $CWORK_GO_FLAVOR, else fork;\n"                            \
    "README \"Go flavours\")"
#define CLI_CONN_HELP_JSON                                                                         \
    "how that Go spells U+0008/U+000C in JSON: \\b, \\f (Go >= 1.22,\n"                            \
    "the default) or \\u0008, \\u000c (Go 1.19-1.21); the unique guards\n"                         \
    "cwork enqueue writes follow it (default: $CWORK_GO_JSON, else\n"                              \
    "go1.22; README \"Go flavours\")"
/* NOLINTBEGIN(bugprone-macro-parentheses): offsetof takes a type and a member designator */
#define CLI_CONN_OPTS(T, C)                                                                        \
    {"redis",                                                                                      \
     NULL,                                                                                         \
     CLI_ARG_REQUIRED,                                                                             \
     "URL",                                                                                        \
     CLI_CONN_HELP_REDIS,                                                                          \
     cli_set_redis_url,                                                                            \
     offsetof(T, C.redis_url),                                                                     \
     0,                                                                                            \
     NULL,                                                                                         \
     CLI_OPT_COMMON},                                                                              \
        {"ns",                                                                                     \
         NULL,                                                                                     \
         CLI_ARG_REQUIRED,                                                                         \
         "NS",                                                                                     \
         "namespace (default: work)",                                                              \
         cli_set_string,                                                                           \
         offsetof(T, C.ns),                                                                        \
         0,                                                                                        \
         NULL,                                                                                     \
         CLI_OPT_COMMON},                                                                          \
        {"go-flavor",          NULL,           CLI_ARG_REQUIRED,         "fork|upstream",          \
         CLI_CONN_HELP_FLAVOR, cli_set_string, offsetof(T, C.go_flavor), 0,                        \
         "fork upstream",      CLI_OPT_COMMON},                                                    \
    {                                                                                              \
        "go-json", NULL, CLI_ARG_REQUIRED, "go1.22|go1.21", CLI_CONN_HELP_JSON, cli_set_string,    \
            offsetof(T, C.go_json), 0, "go1.22 go1.21", CLI_OPT_COMMON                             \
    }
/* NOLINTEND(bugprone-macro-parentheses) */
#define CLI_HELP_OPT                                                                               \
    {                                                                                              \
        "help", "h", CLI_ARG_NONE, NULL, NULL, NULL, 0, 0, NULL, 0                                 \
    }
/* A heading between the rows of a table, printed (after a blank line) where it stands
 * in --help and the man page: the options after it are a group of their own. */
#define CLI_HEADING(text)                                                                          \
    {                                                                                              \
        "", NULL, CLI_ARG_NONE, NULL, (text), NULL, 0, 0, NULL, CLI_OPT_HEADING                    \
    }
#define CLI_OPT_END                                                                                \
    {                                                                                              \
        NULL, NULL, CLI_ARG_NONE, NULL, NULL, NULL, 0, 0, NULL, 0                                  \
    }

/* The commands that have a table, for completion and the man page (main.c). */
typedef struct cli_command_entry {
    const char *name;
    int (*run)(int argc, char **argv);
    const cli_command *spec; /* NULL: no table yet (the name and summary only) */
    const char *summary;
} cli_command_entry;
extern const cli_command_entry cli_commands[];
extern const size_t cli_ncommands;
/* The Redis options' rows, for cwork --help and the man page. */
extern const cli_command cli_conn_command;

/* `cwork completion bash|zsh` (opt_complete.c) and `cwork man` (opt_man.c). */
int cmd_completion(int argc, char **argv);
int cmd_man(int argc, char **argv);

/* The tables (each in its command's file). */
extern const cli_command cli_stats_command;
extern const cli_command cli_batch_command;
extern const cli_command cli_web_command; /* not in a build without the web UI */
extern const cli_command cli_enqueue_command;
extern const cli_command cli_work_command;
extern const cli_command cli_limits_command, cli_limit_command, cli_result_command,
    cli_succeeded_command, cli_doctor_command, cli_shards_command;
extern const cli_command cli_demo_command; /* not in a build without the web UI */

/* --shard N (cli_shard.c): stores N (0 to 1023) into the options' long at the row's
 * field, which the command sets to -1 (the whole namespace) before parsing; the number
 * is checked against the namespace's count once connected. */
int cli_set_shard(void *opts, const char *value, const cli_opt_ctx *ctx);
#define CLI_SHARD_OPT(type, member)                                                                \
    {                                                                                              \
        "shard", NULL, CLI_ARG_REQUIRED, "N",                                                      \
            "shard N of a sharded namespace alone (0 is the namespace\n"                           \
            "itself; cwork shards lists them)",                                                    \
            cli_set_shard, offsetof(type, member), 0, NULL, 0                                      \
    }

/* The view a command works on: client itself when shard < 0, else its shard's client
 * (borrowed from client; NULL with err filled when shard is past the count). */
cwork_client *cli_shard_view(cwork_client *client, long shard, cwork_error *err);

/* Shard i's namespace as PROTOCOL §27 names it (shard 0: ns itself; i: "{ns.i}"). */
void cli_shard_ns(const char *ns, unsigned i, char *out, size_t size);

#endif
