/* `cwork man`: the man page cwork.1, made from the same option tables and texts as
 * --help (opt.h). The build runs it to make cwork.1 and `cmake --install` puts that
 * under share/man/man1; the command is not listed in cwork --help. */
#include "opt.h"

#include <string.h>

/* Text as troff reads it: backslashes doubled as \e, and no line starting with a dot
 * or an apostrophe (a request). join: the help's line breaks become spaces (the man
 * reader fills paragraphs itself). */
static void put_text(const char *s, int join)
{
    int line_start = 1;
    for (; *s; s++) {
        if (*s == '\n' && join) {
            putchar(' ');
            while (s[1] == ' ')
                s++;
            continue;
        }
        if (line_start && (*s == '.' || *s == '\'')) fputs("\\&", stdout);
        line_start = *s == '\n';
        if (*s == '\\')
            fputs("\\e", stdout);
        else if (*s == '-')
            fputs("\\-", stdout);
        else
            putchar(*s);
    }
}

static void put_option(const cli_opt *o)
{
    printf(".TP\n.B \\-\\-%s", o->name);
    if (o->metavar) {
        printf(o->arg == CLI_ARG_OPTIONAL ? " \" [\"" : " \" \"");
        printf("\n.I ");
        put_text(o->metavar, 0);
    }
    if (o->alias) printf("\n(also \\-%s%s)", strlen(o->alias) > 1 ? "\\-" : "", o->alias);
    printf("\n");
    put_text(o->help, 1);
    printf("\n");
}

/* A preformatted block: the intro and outro keep their layout. */
static void put_block(const char *s)
{
    printf(".PP\n.nf\n");
    put_text(s, 0);
    if (s[0] && s[strlen(s) - 1] != '\n') putchar('\n');
    printf(".fi\n");
}

int cmd_man(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf(".\\\" cwork.1, made by `cwork man` from the option tables of cwork %s\n",
           cwork_version());
    printf(".TH CWORK 1 \"\" \"cwork %s\" \"User Commands\"\n", cwork_version());
    printf(".SH NAME\ncwork \\- durable background jobs in Redis, compatible with Go's "
           "gocraft/work\n");
    printf(".SH SYNOPSIS\n.B cwork\n.I COMMAND\n[\\fIOPTIONS\\fR]\n");
    printf(".SH DESCRIPTION\n.B cwork\nenqueues jobs, runs them as shell commands in a worker "
           "pool, serves a web UI and looks into and repairs a namespace of jobs that Go's "
           "gocraft/work and cwork share. Each command's options follow; \\fBcwork COMMAND "
           "\\-\\-help\\fR prints the same.\n");
    printf(".SH COMMANDS\n");
    for (size_t i = 0; i < cli_ncommands; i++) {
        if (!cli_commands[i].summary) continue;
        printf(".TP\n.B %s\n", cli_commands[i].name);
        put_text(cli_commands[i].summary, 1);
        printf("\n");
    }
    printf(".SH OPTIONS OF EVERY COMMAND THAT TALKS TO REDIS\n");
    for (const cli_opt *o = cli_conn_command.opts; o->name; o++)
        put_option(o);
    printf(".PP\nThe Go tools' single\\-dash spellings (\\-redis, \\-ns, \\-go\\-flavor) work "
           "too. Options that take a duration take seconds or a number with a unit: 90s, 15m, "
           "1h, 7d, 1h30m.\n");
    for (size_t i = 0; i < cli_ncommands; i++) {
        const cli_command *spec = cli_commands[i].spec;
        if (!spec || !cli_commands[i].summary) continue;
        printf(".SH CWORK %s\n", cli_commands[i].name);
        put_block(spec->intro);
        for (const cli_opt *o = spec->opts; o->name; o++)
            if (o->flags & CLI_OPT_HEADING)
                put_block(o->help);
            else if (o->help && !(o->flags & CLI_OPT_COMMON))
                put_option(o);
        if (spec->outro) put_block(spec->outro);
    }
    printf(".SH EXIT STATUS\n0 success, 1 runtime failure (e.g. Redis unreachable), 2 bad "
           "command line or input (nothing written), 3 unique job already waiting, 4 no such "
           "job, 5 the job cannot be cancelled (it runs in a Go pool).\n");
    printf(".SH ENVIRONMENT\n.TP\n.B CWORK_REDIS_URL\nthe Redis URL when \\-\\-redis is not "
           "given\n.TP\n.B CWORK_REDIS_PASSWORD\\fR, \\fBCWORK_REDIS_SENTINEL_PASSWORD\npasswords "
           "kept out of the command line\n.TP\n.B CWORK_GO_FLAVOR\\fR, \\fBCWORK_GO_JSON\nthe "
           "defaults of \\-\\-go\\-flavor and \\-\\-go\\-json\n.TP\n.B CWORK_LOG_LEVEL\ndebug, "
           "info, warn (default) or error\n");
    printf(".SH SEE ALSO\nThe README and docs/PROTOCOL.md of cwork.\n");
    return fflush(stdout) == 0 ? CLI_OK : CLI_FAILURE;
}
