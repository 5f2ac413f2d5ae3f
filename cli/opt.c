/* The generic command line parser and --help option list of the option tables (opt.h).
 * The messages are the ones every hand-written parser printed before, so that scripts
 * and tests see no difference. */
#include "opt.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Column where the options' help texts start, as the hand-written texts had it. */
enum { HELP_COLUMN = 20, MAX_NAMES = 96 };

static const cli_opt *find_opt(const cli_command *cmd, const char *name)
{
    for (const cli_opt *o = cmd->opts; o->name; o++)
        if (!(o->flags & CLI_OPT_HEADING) &&
            (strcmp(o->name, name) == 0 || (o->alias && strcmp(o->alias, name) == 0)))
            return o;
    return NULL;
}

static void unknown_option(const cli_command *cmd, const char *label, const cli_args *a)
{
    const char *names[MAX_NAMES];
    size_t n = 0;
    for (const cli_opt *o = cmd->opts; o->name && n + 3 < MAX_NAMES; o++) {
        if (o->flags & CLI_OPT_HEADING) continue;
        names[n++] = o->name;
        if (o->alias && strlen(o->alias) > 1) names[n++] = o->alias;
    }
    names[n] = NULL;
    cli_unknown_option(label, a, names);
}

static unsigned *seen_bits(const cli_command *cmd, void *opts)
{
    if (cmd->seen_field == CLI_NO_SEEN) return NULL;
    return (unsigned *)(void *)((char *)opts + cmd->seen_field);
}

static void print_help(const cli_command *cmd, const void *opts)
{
    if (cmd->help)
        cmd->help(cmd, opts);
    else
        cli_print_help(cmd, stdout);
}

int cli_parse(const cli_command *cmd, const char *label, int argc, char **argv, int first,
              void *opts, cli_positional_fn positional)
{
    cli_args a;
    cli_args_init(&a, argc, argv, first);
    unsigned *seen = seen_bits(cmd, opts);
    unsigned given = 0; /* bit i: row i was given, for commands whose options are once only */
    int kind;
    while ((kind = cli_next(&a)) >= 0) {
        if (kind == 0) {
            if (positional) {
                if (positional(opts, a.value) < 0) return -1;
                continue;
            }
            fprintf(stderr, "%s: unexpected argument \"%s\" (see %s --help)\n", label, a.value,
                    label);
            return -1;
        }
        const cli_opt *o = find_opt(cmd, a.name);
        if (!o) {
            unknown_option(cmd, label, &a);
            return -1;
        }
        if (!o->set) { /* --help, -h */
            print_help(cmd, opts);
            return 1;
        }
        size_t row = (size_t)(o - cmd->opts);
        if (cmd->once && !(o->flags & (CLI_OPT_COMMON | CLI_OPT_REPEAT)) && row < 32) {
            if (given & (1u << row)) {
                fprintf(stderr, "%s: --%s given twice\n", label, o->name);
                return -1;
            }
            given |= 1u << row;
        }
        if (seen) *seen |= o->bit;
        const char *value = NULL;
        if (o->arg == CLI_ARG_NONE) {
            if (cli_flag(&a) < 0) return -1; /* never --all=false = all */
        } else if (o->arg == CLI_ARG_REQUIRED) {
            if (cli_take_value(&a) < 0) return -1;
            value = a.value;
        } else {
            value = a.inline_value;
        }
        cli_opt_ctx ctx = {label, a.name, o, &a};
        if (o->set(opts, value, &ctx) < 0) return -1;
    }
    return 0;
}

/* "--name METAVAR" (and the alias), as the option list shows it. */
static size_t opt_spelling(const cli_opt *o, char *buf, size_t size)
{
    int n;
    const char *sep = o->metavar ? " " : "";
    const char *mv = o->metavar ? o->metavar : "";
    if (o->alias && strlen(o->alias) > 1)
        n = snprintf(buf, size, "--%s%s%s, --%s%s%s", o->name, sep, mv, o->alias, sep, mv);
    else if (o->alias) /* a letter: -q */
        n = snprintf(buf, size, "--%s%s%s, -%s%s%s", o->name, sep, mv, o->alias, sep, mv);
    else
        n = snprintf(buf, size, "--%s%s%s", o->name, sep, mv);
    if (o->arg == CLI_ARG_OPTIONAL && o->metavar)
        n = snprintf(buf, size, "--%s [%s]", o->name, o->metavar);
    return n < 0 ? 0 : (size_t)n;
}

static void print_opt(const cli_opt *o, FILE *out, int column)
{
    char head[160];
    size_t n = opt_spelling(o, head, sizeof head);
    fprintf(out, "  %s", head);
    if (2 + (int)n + 1 > column)
        fprintf(out, "\n%*s", column, "");
    else
        fprintf(out, "%*s", (int)(column - 2 - (int)n), "");
    for (const char *p = o->help; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        fwrite(p, 1, len, out);
        fputc('\n', out);
        if (!nl) break;
        p = nl + 1;
        fprintf(out, "%*s", column, "");
    }
}

/* The Redis options in one line: at the first heading, else at the end of the list. */
static void print_common_line(int *common, FILE *out)
{
    if (*common == 1)
        fputs("  --redis URL, --ns NS, --go-flavor, --go-json: see cwork --help\n", out);
    *common = 2;
}

void cli_print_options(const cli_command *cmd, FILE *out)
{
    int common = 0; /* 1: the table has Redis options, 2: their line was printed */
    for (const cli_opt *o = cmd->opts; o->name; o++) {
        if (o->flags & CLI_OPT_COMMON) {
            common |= 1;
            continue;
        }
        if (o->flags & CLI_OPT_HEADING) {
            print_common_line(&common, out);
            fprintf(out, "\n%s\n", o->help);
        } else if (o->help) {
            print_opt(o, out, HELP_COLUMN);
        }
    }
    print_common_line(&common, out);
}

void cli_print_common_options(FILE *out)
{
    for (const cli_opt *o = cli_conn_command.opts; o->name; o++)
        if (o->help) print_opt(o, out, 16);
}

void cli_print_help(const cli_command *cmd, FILE *out)
{
    fputs(cmd->intro, out);
    fputs("\nOptions:\n", out);
    cli_print_options(cmd, out);
    if (cmd->outro) {
        fputc('\n', out);
        fputs(cmd->outro, out);
    }
}

/* ---------------------------------------------------------------- generic setters */

static void *field(void *opts, const cli_opt_ctx *ctx)
{
    return (char *)opts + ctx->opt->field;
}

int cli_set_flag(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    (void)value;
    *(int *)field(opts, ctx) = 1;
    return 0;
}

int cli_set_string(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    *(const char **)field(opts, ctx) = value;
    return 0;
}

int cli_set_nonempty(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    if (!value || !*value) {
        fprintf(stderr, "%s: --%s needs %s\n", ctx->label, ctx->spelled,
                ctx->opt->metavar ? ctx->opt->metavar : "a value");
        return -1;
    }
    *(const char **)field(opts, ctx) = value;
    return 0;
}

int cli_set_duration_ms(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    int64_t ms;
    if (!value || cli_duration_ms(value, &ms) < 0) {
        fprintf(stderr,
                "%s: --%s needs a duration (seconds, or 90s, 15m, 1h30m, 7d; not negative), "
                "not \"%s\"\n",
                ctx->label, ctx->spelled, value ? value : "");
        return -1;
    }
    *(int64_t *)field(opts, ctx) = ms;
    return 0;
}

/* ---------------------------------------------------------------- bounded values */

static int bad_value(const cli_opt_ctx *ctx, const char *value, const char *want, int negative)
{
    if (negative)
        fprintf(stderr, "%s: --%s needs %s; \"%s\" is negative\n", ctx->label, ctx->spelled, want,
                value);
    else
        fprintf(stderr, "%s: --%s needs %s, got \"%s\"\n", ctx->label, ctx->spelled, want,
                value ? value : "");
    return -1;
}

/* Whether value is a minus sign before a number or duration above 0: "-5", "-5s", "-0.5"
 * ("-0" is no negative number, just a bad value). */
static int is_negative(const char *value)
{
    int64_t ms;
    return value && value[0] == '-' && cli_duration_ms(value + 1, &ms) == 0 && ms > 0;
}

int cli_opt_uint(const cli_opt_ctx *ctx, const char *value, uint64_t min, uint64_t max,
                 const char *want, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!value || !(value[0] >= '0' && value[0] <= '9'))
        return bad_value(ctx, value, want, is_negative(value));
    unsigned long long v = strtoull(value, &end, 10);
    if (errno || *end || v < min || v > max) return bad_value(ctx, value, want, 0);
    *out = v;
    return 0;
}

int cli_opt_duration_ms(const cli_opt_ctx *ctx, const char *value, int64_t min_ms, int64_t max_ms,
                        const char *want, int64_t *out)
{
    int64_t ms;
    if (!value || cli_duration_ms(value, &ms) != 0 || ms < min_ms || ms > max_ms)
        return bad_value(ctx, value, want, is_negative(value));
    *out = ms;
    return 0;
}

int cli_opt_duration_s(const cli_opt_ctx *ctx, const char *value, int64_t min_s, int64_t max_s,
                       const char *want, int64_t *out)
{
    int64_t s;
    if (!value || cli_duration_s(value, &s) != 0 || s < min_s || s > max_s)
        return bad_value(ctx, value, want, is_negative(value));
    *out = s;
    return 0;
}
