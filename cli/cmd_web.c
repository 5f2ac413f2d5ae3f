/* cwork web: serves the web UI and workwebui's JSON API for one namespace until SIGINT,
 * SIGTERM or SIGQUIT. */
#include "cli.h"
#include "cwork_web.h"
#include "opt.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static const char intro[] =
    "Usage: cwork web [--redis URL] [--ns NS]... [--listen HOST:PORT] [--auth USER:PASS]\n"
    "                 [--base-path /PREFIX] [--read-only] [--insecure]\n"
    "\n"
    "Serves the web UI and the JSON API of Go's workwebui (same paths and bodies) for\n"
    "namespace NS, and prints its URL. Ctrl-C (SIGINT), SIGTERM or SIGQUIT stop it once\n"
    "the requests in flight are answered.\n";

static const char outro[] =
    "Changes are POST requests, refused (403) when a page of another origin sends them.\n"
    "GET /metrics answers in the Prometheus text format. Connections: as many as the\n"
    "open-file limit allows (raised to its hard limit), 64 per client address; one\n"
    "silent for 10 s is closed.\n"
    "\n"
    "Exit status: 0 stopped by a signal, 1 runtime failure (Redis unreachable), 2 bad\n"
    "command line (a listen address that cannot be used, no auth beyond loopback).\n";

#define MAX_NS 64

typedef struct web_opts {
    cli_conn_opts conn;
    const char *listen;
    const char *auth;
    cwork_go_flavor flavor;
    const char *base_path;
    bool read_only;
    const char *more_ns[MAX_NS]; /* after the first --ns */
    size_t n_more_ns;
    int seen_ns;
    int insecure; /* cli_set_flag writes an int */
} web_opts;

/* --ns: the first goes to o->conn, the others are the namespaces the UI switches to. */
static int set_ns(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    web_opts *o = opts;
    (void)ctx;
    if (o->seen_ns++ == 0) {
        o->conn.ns = value;
        return 0;
    }
    if (o->n_more_ns == MAX_NS) {
        fprintf(stderr, "cwork web: at most %d namespaces\n", MAX_NS + 1);
        return -1;
    }
    o->more_ns[o->n_more_ns++] = value;
    return 0;
}

static int set_auth(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    (void)ctx;
    if (!strchr(value, ':')) {
        fprintf(stderr, "cwork web: --auth needs USER:PASS\n");
        return -1;
    }
    ((web_opts *)opts)->auth = value;
    return 0;
}

static int set_read_only(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    (void)value;
    (void)ctx;
    ((web_opts *)opts)->read_only = true;
    return 0;
}

static const cli_opt web_options[] = {
    {"ns", NULL, CLI_ARG_REQUIRED, "NS",
     "the namespace (default work); give --ns more than once and the\n"
     "UI offers a switch between them (the first is the default)",
     set_ns, 0, 0, NULL, CLI_OPT_REPEAT},
    {"base-path", NULL, CLI_ARG_REQUIRED, "/PREFIX",
     "behind a reverse proxy that passes a path prefix on (e.g.\n"
     "/jobs/ → this server), answer under it too; a proxy that strips\n"
     "the prefix needs nothing (the UI uses relative URLs only)",
     cli_set_string, offsetof(web_opts, base_path), 0, NULL, 0},
    {"read-only", NULL, CLI_ARG_NONE, NULL,
     "refuse every change (403); the UI shows no action buttons", set_read_only, 0, 0, NULL, 0},
    {"listen", NULL, CLI_ARG_REQUIRED, "HOST:PORT",
     "address to listen on (default 127.0.0.1:5040; port 0 picks a\n"
     "free one; \":PORT\" listens on every interface, as Go's\n"
     "workwebui)",
     cli_set_string, offsetof(web_opts, listen), 0, NULL, 0},
    {"auth", NULL, CLI_ARG_REQUIRED, "USER:PASS",
     "require HTTP basic auth; better: set CWORK_WEB_AUTH=USER:PASS,\n"
     "which keeps the password out of `ps`",
     set_auth, 0, 0, NULL, 0},
    {"insecure", NULL, CLI_ARG_NONE, NULL,
     "serve beyond loopback without auth (refused otherwise: any\n"
     "web page a browser on that network opens could drive the UI)",
     cli_set_flag, offsetof(web_opts, insecure), 0, NULL, 0},
    CLI_CONN_OPTS(web_opts, conn),
    CLI_HELP_OPT,
    CLI_OPT_END};

const cli_command cli_web_command = {
    .name = "web",
    .intro = intro,
    .outro = outro,
    .opts = web_options,
    .seen_field = CLI_NO_SEEN,
};

/* 0 to go on, 1 when --help was printed, -1 on a bad command line (reported). */
static int parse_options(int argc, char **argv, web_opts *o)
{
    int p = cli_parse(&cli_web_command, "cwork web", argc, argv, 2, o, NULL);
    if (p != 0) return p;
    return cli_go_flavor(&o->conn, &o->flavor);
}

/* The URL to print: the listen host, or 127.0.0.1 when it names every interface. */
static void print_url(const char *listen, int port, const char *base_path)
{
    const char *colon = strrchr(listen, ':');
    size_t hlen = colon ? (size_t)(colon - listen) : 0;
    char host[256];
    if (hlen == 0 || hlen >= sizeof host || strncmp(listen, "0.0.0.0", hlen) == 0 ||
        strncmp(listen, "[::]", hlen) == 0) {
        snprintf(host, sizeof host, "127.0.0.1");
    } else {
        memcpy(host, listen, hlen);
        host[hlen] = '\0';
    }
    size_t blen = base_path ? strlen(base_path) : 0;
    while (blen > 0 && base_path[blen - 1] == '/')
        blen--;
    printf("http://%s:%d%.*s/\n", host, port, (int)blen, base_path ? base_path : "");
    fflush(stdout);
}

int cmd_web(int argc, char **argv)
{
    web_opts o = {0};
    o.conn.ns = "work";
    o.listen = "127.0.0.1:5040";
    int p = parse_options(argc, argv, &o);
    if (p != 0) return p > 0 ? CLI_OK : CLI_USAGE;
    /* The signals are taken with sigwait below; blocked before any thread starts so
     * that every thread inherits the mask. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGQUIT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    int status;
    cwork_redis *redis = cli_connect(&o.conn, &status);
    if (!redis) return status;
    cwork_web_options opts;
    cwork_web_options_init(&opts);
    opts.listen = o.listen;
    /* The environment keeps the password out of `ps`; --auth wins over it. */
    const char *env_auth = getenv("CWORK_WEB_AUTH");
    opts.auth = o.auth ? o.auth : env_auth && *env_auth ? env_auth : NULL;
    opts.go_flavor = o.flavor;
    opts.base_path = o.base_path;
    opts.read_only = o.read_only;
    opts.namespaces = o.more_ns;
    opts.n_namespaces = o.n_more_ns;
    opts.insecure = o.insecure;
    /* Every connection is a descriptor: take all the process may have. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    cwork_error err = {0};
    cwork_web *web = cwork_web_start(redis, o.conn.ns, &opts, &err);
    if (!web) {
        /* The library names its options; say what they are called here. */
        const char *source =
            !o.auth && env_auth && *env_auth && !strchr(env_auth, ':') ? "CWORK_WEB_AUTH: " : "";
        const char *hint = strstr(err.message, "without a password")
                               ? " (here: CWORK_WEB_AUTH=USER:PASS or --auth, --listen "
                                 "127.0.0.1:PORT, or --insecure)"
                               : "";
        fprintf(stderr, "cwork web: %s%s%s\n", source, err.message, hint);
        cwork_redis_free(redis);
        return err.code == CWORK_EINVAL ? CLI_USAGE : CLI_FAILURE;
    }
    print_url(o.listen, cwork_web_port(web), o.base_path);
    int sig = 0;
    sigwait(&stop, &sig);
    fprintf(stderr, "cwork web: stopping\n");
    cwork_web_free(web);
    cwork_redis_free(redis);
    return CLI_OK;
}
