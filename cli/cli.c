/* Option walking and the shared Redis set-up of the cwork command. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

void cli_args_init(cli_args *a, int argc, char **argv, int first)
{
    memset(a, 0, sizeof *a);
    a->argc = argc;
    a->argv = argv;
    a->i = first;
}

int cli_next(cli_args *a)
{
    a->value = NULL;
    a->inline_value = NULL;
    a->name[0] = '\0';
    if (a->i >= a->argc)
        return -1;
    const char *s = a->argv[a->i++];
    if (!a->only_positional && strcmp(s, "--") == 0) { /* everything after is positional */
        a->only_positional = 1;
        if (a->i >= a->argc)
            return -1;
        s = a->argv[a->i++];
    }
    if (a->only_positional) {
        a->value = s;
        return 0;
    }
    /* "-" alone and anything not starting with '-' are positional; so are negative
     * numbers, which cannot be option names. */
    if (s[0] != '-' || s[1] == '\0' || (s[1] >= '0' && s[1] <= '9')) {
        a->value = s;
        return 0;
    }
    s += (s[1] == '-') ? 2 : 1;
    const char *eq = strchr(s, '=');
    size_t n = eq ? (size_t)(eq - s) : strlen(s);
    if (n >= sizeof a->name)
        n = sizeof a->name - 1;
    memcpy(a->name, s, n);
    a->name[n] = '\0';
    a->inline_value = eq ? eq + 1 : NULL;
    return 1;
}

int cli_take_value(cli_args *a)
{
    if (a->inline_value) {
        a->value = a->inline_value;
        return 0;
    }
    if (a->i >= a->argc) {
        fprintf(stderr, "cwork: option --%s needs a value\n", a->name);
        return -1;
    }
    a->value = a->argv[a->i++];
    return 0;
}

int cli_flag(const cli_args *a)
{
    if (!a->inline_value)
        return 0;
    fprintf(stderr, "cwork: option --%s takes no value (got \"%s\")\n", a->name,
            a->inline_value);
    return -1;
}

int cli_is(const cli_args *a, const char *name)
{
    return strcmp(a->name, name) == 0;
}

int cli_conn_option(cli_args *a, cli_conn_opts *o)
{
    if (cli_is(a, "redis")) {
        if (cli_take_value(a) < 0)
            return -1;
        o->redis_url = a->value;
        return 1;
    }
    if (cli_is(a, "ns")) {
        if (cli_take_value(a) < 0)
            return -1;
        o->ns = a->value;
        return 1;
    }
    if (cli_is(a, "go-flavor")) {
        if (cli_take_value(a) < 0)
            return -1;
        o->go_flavor = a->value;
        return 1;
    }
    return 0;
}

int cli_go_flavor(const cli_conn_opts *o, cwork_go_flavor *out)
{
    const char *text = o->go_flavor, *from = "--go-flavor";
    if (!text) {
        text = getenv("CWORK_GO_FLAVOR");
        from = "CWORK_GO_FLAVOR";
        if (!text || !*text) {
            *out = CWORK_GO_FORK;
            return 0;
        }
    }
    if (cwork_go_flavor_parse(text, out, NULL) == 0)
        return 0;
    fprintf(stderr, "cwork: %s: unknown Go flavour \"%s\" (want fork or upstream)\n", from,
            text);
    return -1;
}

cwork_redis *cli_redis_new(const cli_conn_opts *o)
{
    cwork_error err = {0};
    cwork_redis *r = cwork_redis_new(o->redis_url, NULL, &err);
    if (!r)
        fprintf(stderr, "cwork: %s\n", err.message);
    return r;
}

int cli_ping(cwork_redis *r)
{
    cwork_error err = {0};
    if (cwork_redis_ping(r, &err) == 0)
        return 0;
    fprintf(stderr, "cwork: %s\n", err.message);
    return -1;
}

cwork_redis *cli_connect(const cli_conn_opts *o, int *status)
{
    /* A URL that cannot be parsed (or that this build cannot serve) is a usage error;
     * a server that does not answer is a runtime failure. */
    cwork_redis *r = cli_redis_new(o);
    *status = r ? CLI_FAILURE : CLI_USAGE;
    if (r && cli_ping(r) != 0) {
        cwork_redis_free(r);
        r = NULL;
    }
    return r;
}

void cli_setup_logging(void)
{
    const char *lv = getenv("CWORK_LOG_LEVEL");
    cwork_log_level level = CWORK_LOG_WARN;
    if (lv && strcmp(lv, "debug") == 0)
        level = CWORK_LOG_DEBUG;
    else if (lv && strcmp(lv, "info") == 0)
        level = CWORK_LOG_INFO;
    else if (lv && strcmp(lv, "error") == 0)
        level = CWORK_LOG_ERROR;
    cwork_set_logger(cwork_stderr_logger, NULL, level);
}
