/*
 * cwork_web — the web UI server of cwork, in a library of its own: libcwork-web (on
 * libmicrohttpd), so that a program that does not serve the UI needs neither
 * libmicrohttpd nor its TLS stack, and finds no declaration in cwork.h it cannot link.
 * Link with `pkg-config --libs cwork-web` or CMake's cwork::cwork_web; both bring
 * libcwork too. The conventions of cwork.h hold here.
 */
#ifndef CWORK_WEB_H
#define CWORK_WEB_H

#include "cwork.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ web UI */

/* An HTTP server with workwebui's JSON routes and paths (PROTOCOL §12.1; errors answered
 * with 400/404 and a JSON error instead of Go's 500s), pause routes, lookup by id,
 * filters by name, /metrics in the Prometheus text format, and the single-page UI.
 * Requests are served on the server's own threads (asynchronous signals blocked).
 * cwork_web_port is thread-safe; cwork_web_free needs the server to itself.
 */
typedef struct cwork_web cwork_web;

typedef struct cwork_web_options {
    const char *listen;            /* "HOST:PORT", "[V6]:PORT" or ":PORT" (every interface, as Go);
                                      default "127.0.0.1:5040" */
    const char *auth;              /* "user:password" for HTTP basic auth; NULL or "": none.
                                      (The cwork command passes CWORK_WEB_AUTH here.) */
    cwork_pool *pool;              /* optional, borrowed (must outlive the server): its
                                      processed/failed counters go to /metrics and the dashboard */
    cwork_go_flavor go_flavor;     /* the JSON bodies' flavour (cwork_client_set_go_flavor);
                                      default fork; unknown values fail the start */
    const char *base_path;         /* e.g. "/jobs": a path prefix a reverse proxy passes on; the
                                      server then answers under it too ("/jobs" redirects to
                                      "/jobs/"). NULL or "" for none. The UI uses relative URLs
                                      only, so a proxy that strips the prefix needs nothing. */
    bool read_only;                /* refuse every change (403): no POST route works, the UI
                                      shows no action */
    const char *const *namespaces; /* more namespaces the UI can switch to (?ns=), the
                                      ns of cwork_web_start being the first and the
                                      default; copied. No other namespace is served. */
    size_t n_namespaces;
    bool insecure; /* serve beyond loopback without auth (refused otherwise: any web
                      page a browser there opens could drive the UI) */
} cwork_web_options;

void cwork_web_options_init(cwork_web_options *opts);

/* Starts serving namespace ns (as cwork_enqueuer_new takes it) of redis (borrowed:
 * keep it alive until cwork_web_free) on its own threads (a few event loops: idle and
 * slow clients cost a socket, not a thread); opts (its strings copied) may be NULL.
 * Connections: as many as the file limit allows (at most 10,000), 64 per client
 * address; a connection silent for 10 s is closed. Beyond loopback without auth it
 * refuses to start unless opts->insecure is set, and then warns (logger). NULL on error
 * (CWORK_EINVAL for a NULL redis or ns, a bad listen address, one in use, no auth
 * beyond loopback, a base path that does not start with '/' or holds '?', '#' or "..",
 * more than 64 namespaces). */
cwork_web *cwork_web_start(cwork_redis *redis, const char *ns, const cwork_web_options *opts,
                           cwork_error *err);
/* The port actually bound (useful with port 0). */
int cwork_web_port(const cwork_web *web);
/* Stops serving (in-flight requests get up to 10 s to finish) and frees the server.
 * NULL is ignored. */
void cwork_web_free(cwork_web *web);

#ifdef __cplusplus
}
#endif

#endif /* CWORK_WEB_H */
