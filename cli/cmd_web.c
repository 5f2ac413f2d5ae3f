/* cwork web: serves the web UI and workwebui's JSON API for one namespace until SIGINT,
 * SIGTERM or SIGQUIT. */
#include "cli.h"
#include "cwork_web.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static const char usage[] =
    "Usage: cwork web [--redis URL] [--ns NS]... [--listen HOST:PORT] [--auth USER:PASS]\n"
    "                 [--base-path /PREFIX] [--read-only] [--insecure]\n"
    "\n"
    "Serves the web UI and the JSON API of Go's workwebui (same paths and bodies) for\n"
    "namespace NS, and prints its URL. Ctrl-C (SIGINT), SIGTERM or SIGQUIT stop it once\n"
    "the requests in flight are answered.\n"
    "\n"
    "  --ns NS             the namespace (default work); give --ns more than once and the\n"
    "                      UI offers a switch between them (the first is the default)\n"
    "  --base-path /PREFIX behind a reverse proxy that passes a path prefix on (e.g.\n"
    "                      /jobs/ → this server), answer under it too; a proxy that strips\n"
    "                      the prefix needs nothing (the UI uses relative URLs only)\n"
    "  --read-only         refuse every change (403); the UI shows no action buttons\n"
    "  --listen HOST:PORT  address to listen on (default 127.0.0.1:5040; port 0 picks a\n"
    "                      free one; \":PORT\" listens on every interface, as Go's\n"
    "                      workwebui)\n"
    "  --auth USER:PASS    require HTTP basic auth; better: set CWORK_WEB_AUTH=USER:PASS,\n"
    "                      which keeps the password out of `ps`\n"
    "  --insecure          serve beyond loopback without auth (refused otherwise: any\n"
    "                      web page a browser on that network opens could drive the UI)\n"
    "  --redis URL, --ns NS, -redis, -ns, -listen: see cwork --help\n"
    "  --go-flavor fork|upstream  upstream: job bodies as gocraft/work v0.5's workwebui\n"
    "                      gives them (no d, no trace); see cwork --help\n"
    "\n"
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
    bool insecure;
} web_opts;

static int parse_options(int argc, char **argv, web_opts *o)
{
    cli_args a;
    cli_args_init(&a, argc, argv, 2);
    int kind;
    while ((kind = cli_next(&a)) >= 0) {
        if (kind == 0) {
            fprintf(stderr, "cwork web: unexpected argument \"%s\"\n", a.value);
            return -1;
        }
        if (cli_is(&a, "ns") && o->seen_ns++ > 0) { /* the first goes to o->conn */
            if (cli_take_value(&a) < 0) return -1;
            if (o->n_more_ns == MAX_NS) {
                fprintf(stderr, "cwork web: at most %d namespaces\n", MAX_NS + 1);
                return -1;
            }
            o->more_ns[o->n_more_ns++] = a.value;
            continue;
        }
        int c = cli_conn_option(&a, &o->conn);
        if (c < 0) return -1;
        if (c > 0) continue;
        if (cli_is(&a, "help") || cli_is(&a, "h")) {
            fputs(usage, stdout);
            exit(CLI_OK);
        } else if (cli_is(&a, "listen")) {
            if (cli_take_value(&a) < 0) return -1;
            o->listen = a.value;
        } else if (cli_is(&a, "base-path")) {
            if (cli_take_value(&a) < 0) return -1;
            o->base_path = a.value;
        } else if (cli_is(&a, "read-only")) {
            if (cli_flag(&a) < 0) return -1;
            o->read_only = true;
        } else if (cli_is(&a, "insecure")) {
            if (cli_flag(&a) < 0) return -1;
            o->insecure = true;
        } else if (cli_is(&a, "auth")) {
            if (cli_take_value(&a) < 0) return -1;
            if (!strchr(a.value, ':')) {
                fprintf(stderr, "cwork web: --auth needs USER:PASS\n");
                return -1;
            }
            o->auth = a.value;
        } else {
            static const char *const names[] = {
                "listen", "auth", "base-path", "read-only", CLI_COMMON_OPTIONS, NULL};
            cli_unknown_option("cwork web", &a, names);
            return -1;
        }
    }
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
    if (parse_options(argc, argv, &o) != 0) return CLI_USAGE;
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
