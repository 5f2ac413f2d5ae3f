/* Option walking and the shared Redis set-up of the cwork command. */
#include "cli.h"
#include "opt.h"

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
    if (a->i >= a->argc) return -1;
    const char *s = a->argv[a->i++];
    if (!a->only_positional && strcmp(s, "--") == 0) { /* everything after is positional */
        a->only_positional = 1;
        if (a->i >= a->argc) return -1;
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
    if (n >= sizeof a->name) n = sizeof a->name - 1;
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
    if (!a->inline_value) return 0;
    fprintf(stderr, "cwork: option --%s takes no value (got \"%s\")\n", a->name, a->inline_value);
    return -1;
}

int cli_is(const cli_args *a, const char *name)
{
    return strcmp(a->name, name) == 0;
}

/* --redis's URL is used from a copy, and the argument itself (argv memory, writable)
 * is overwritten with the redacted URL, cut or padded with spaces to its length: the
 * passwords leave the command line that `ps` and /proc/PID/cmdline show a moment after
 * start. Better still is CWORK_REDIS_PASSWORD, never on a command line at all. The copy
 * stays for the life of the process (the last --redis given wins). */
static char *redis_url_copy;

static const char *keep_secrets_out_of_ps(char *arg)
{
    char *copy = strdup(arg);
    char *shown = copy ? cwork_redact_url(copy) : NULL;
    if (!shown) {
        free(copy);
        return arg; /* out of memory: the URL still works, only ps still shows it */
    }
    if (strcmp(shown, arg) != 0) {
        size_t len = strlen(arg), n = strlen(shown);
        for (size_t i = 0; i < len; i++) {
            char c = ' ';
            if (i < n) c = shown[i];
            arg[i] = c;
        }
    }
    cwork_free(shown);
    free(redis_url_copy);
    redis_url_copy = copy;
    return copy;
}

int cli_conn_option(cli_args *a, cli_conn_opts *o)
{
    if (cli_is(a, "redis")) {
        if (cli_take_value(a) < 0) return -1;
        o->redis_url = keep_secrets_out_of_ps((char *)a->value);
        return 1;
    }
    if (cli_is(a, "ns")) {
        if (cli_take_value(a) < 0) return -1;
        o->ns = a->value;
        return 1;
    }
    if (cli_is(a, "go-flavor")) {
        if (cli_take_value(a) < 0) return -1;
        o->go_flavor = a->value;
        return 1;
    }
    if (cli_is(a, "go-json")) {
        if (cli_take_value(a) < 0) return -1;
        o->go_json = a->value;
        return 1;
    }
    return 0;
}

int cli_set_redis_url(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    /* value is argv memory (cli_take_value), writable: it is overwritten with the redacted URL */
    *(const char **)(void *)((char *)opts + ctx->opt->field) =
        keep_secrets_out_of_ps((char *)value);
    return 0;
}

int cli_go_json(const cli_conn_opts *o, cwork_go_json *out)
{
    const char *text = o->go_json, *from = "--go-json";
    if (!text) {
        text = getenv("CWORK_GO_JSON");
        from = "CWORK_GO_JSON";
        if (!text || !*text) {
            *out = CWORK_GO_JSON_122;
            return 0;
        }
    }
    if (cwork_go_json_parse(text, out, NULL) == 0) return 0;
    fprintf(stderr, "cwork: %s: unknown Go JSON spelling \"%s\" (want go1.22 or go1.21)\n", from,
            text);
    return -1;
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
    if (cwork_go_flavor_parse(text, out, NULL) == 0) return 0;
    fprintf(stderr, "cwork: %s: unknown Go flavour \"%s\" (want fork or upstream)\n", from, text);
    return -1;
}

void cli_redis_options(cwork_redis_options *ro)
{
    cwork_redis_options_init(ro);
    const char *pw = getenv("CWORK_REDIS_PASSWORD");
    if (pw && *pw) ro->password = pw; /* the library uses it when the URL carries none */
    const char *spw = getenv("CWORK_REDIS_SENTINEL_PASSWORD");
    if (spw && *spw) ro->sentinel_password = spw; /* likewise, for a sentinel URL's sentinels */
}

/* The URL to use for o, and where it comes from. */
static const char *url_source(const cli_conn_opts *o, const char **url)
{
    const char *env = getenv("CWORK_REDIS_URL");
    if (o->redis_url) {
        *url = o->redis_url;
        return "given with --redis";
    }
    if (env && *env) {
        *url = env;
        return "from CWORK_REDIS_URL";
    }
    *url = "redis://127.0.0.1:6379";
    return "the default";
}

/* One line for a failed connection check: the library's message and what to do. */
static void print_connect_failure(const cli_conn_opts *o, const cwork_error *err)
{
    const char *url;
    const char *source = url_source(o, &url);
    char *shown = cwork_redact_url(url);
    const char *m = err->message;
    if (strstr(m, "NOAUTH"))
        fprintf(stderr,
                "cwork: Redis at %s (%s) wants a password (NOAUTH): give it in the URL, "
                "redis://:PASSWORD@HOST:PORT (--redis or CWORK_REDIS_URL), or in "
                "CWORK_REDIS_PASSWORD, which keeps it out of ps\n",
                shown ? shown : "?", source);
    else if (strstr(m, "WRONGPASS"))
        fprintf(stderr,
                "cwork: Redis at %s (%s) refused the user name or password (WRONGPASS): check "
                "the password in the URL (redis://[USER]:PASSWORD@HOST:PORT, --redis or "
                "CWORK_REDIS_URL) or in CWORK_REDIS_PASSWORD\n",
                shown ? shown : "?", source);
    else if (strstr(m, "without any password configured"))
        fprintf(stderr,
                "cwork: Redis at %s (%s) has no password, but one was given: remove it from "
                "the URL or unset CWORK_REDIS_PASSWORD\n",
                shown ? shown : "?", source);
    else if (strstr(m, "DB index is out of range"))
        fprintf(stderr,
                "cwork: Redis at %s (%s) has no database of that number (ERR DB index is out "
                "of range): give a database below its `databases` setting (16 by default) "
                "at the end of the URL, as redis://HOST:PORT/0\n",
                shown ? shown : "?", source);
    else if (strstr(m, "answered like an HTTP server"))
        fprintf(stderr,
                "cwork: the port of %s (%s) answered like an HTTP server, not Redis (a web "
                "server's or cwork web's port?): give Redis' address (port 6379 by default) "
                "with --redis URL or CWORK_REDIS_URL\n",
                shown ? shown : "?", source);
    else if (strstr(m, "the server speaks TLS"))
        fprintf(stderr,
                "cwork: Redis at %s (%s) speaks TLS: use a rediss:// URL (with ca= when its "
                "certificate is not signed by a CA of the system's store)\n",
                shown ? shown : "?", source);
    else if (err->code == CWORK_EINVAL || err->code == CWORK_EUNSUPPORTED)
        fprintf(stderr, "cwork: %s%s (see --redis in cwork --help)\n",
                strcmp(source, "from CWORK_REDIS_URL") == 0 ? "CWORK_REDIS_URL: " : "", m);
    else
        fprintf(stderr,
                "cwork: %s — is redis-server running at %s (%s)? Give its address with "
                "--redis URL or CWORK_REDIS_URL\n",
                m, shown ? shown : "?", source);
    cwork_free(shown);
}

/* cwork_redis_new for o's URL (--redis, CWORK_REDIS_URL or the default). */
static cwork_redis *redis_new(const cli_conn_opts *o, cwork_redis_options *ro, cwork_error *err)
{
    const char *url;
    url_source(o, &url);
    return cwork_redis_new(url, ro, err);
}

cwork_redis *cli_redis_new(const cli_conn_opts *o)
{
    cwork_error err = {0};
    cwork_redis_options ro;
    cli_redis_options(&ro);
    cwork_redis *r = redis_new(o, &ro, &err);
    if (!r) print_connect_failure(o, &err);
    return r;
}

int cli_ping(const cli_conn_opts *o)
{
    /* The check runs on a pool of its own with short timeouts, so that an unreachable
     * Redis fails a command in under 2 s; the dial warnings it would log while
     * retrying are left out, as the line printed says it all. */
    cwork_redis_options quick;
    cli_redis_options(&quick);
    quick.connect_timeout_ms = 1000;
    quick.command_timeout_ms = 1000;
    quick.checkout_timeout_ms = 700;
    cwork_error err = {0};
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    cwork_redis *probe = redis_new(o, &quick, &err);
    int ok = probe && cwork_redis_ping(probe, &err) == 0;
    cwork_redis_free(probe);
    cli_setup_logging();
    if (!ok) print_connect_failure(o, &err);
    return ok ? 0 : -1;
}

cwork_redis *cli_connect(const cli_conn_opts *o, int *status)
{
    /* A URL that cannot be parsed (or that this build cannot serve) is a usage error;
     * a server that does not answer is a runtime failure. */
    cwork_redis *r = cli_redis_new(o);
    *status = r ? CLI_FAILURE : CLI_USAGE;
    if (r && cli_ping(o) != 0) {
        cwork_redis_free(r);
        r = NULL;
    }
    return r;
}

void cli_unknown_option(const char *label, const cli_args *a, const char *const *options)
{
    const char *dashes = strlen(a->name) > 1 ? "--" : "-";
    const char *near = cli_suggest(a->name, options);
    if (near)
        fprintf(stderr, "%s: unknown option %s%s; did you mean %s%s? (see %s --help)\n", label,
                dashes, a->name, strlen(near) > 1 ? "--" : "-", near, label);
    else
        fprintf(stderr, "%s: unknown option %s%s (see %s --help)\n", label, dashes, a->name, label);
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
