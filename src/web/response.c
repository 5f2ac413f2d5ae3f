/* What every route answers with: JSON bodies and errors, Go's indented JSON, and the
 * origin check of requests that change something. Routes (routes.c, routes_ui.c,
 * metrics.c) and the server (server.c) all use these, and they use none of those. */
#include "web.h"

#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- responses */

void cw_web_ok_json(web_response *res, char *body, size_t len)
{
    res->status = 200;
    res->content_type = WEB_JSON_TYPE;
    res->body = body;
    res->len = len;
}

void cw_web_error(web_response *res, unsigned status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_puts(&b, "{\"error\": ");
    cw_gj_encode_string(&b, msg, strlen(msg));
    cw_buf_putc(&b, '}');
    size_t len = 0;
    char *body = cw_buf_take(&b, &len);
    res->status = status;
    res->content_type = WEB_JSON_TYPE;
    res->body = body; /* NULL when out of memory: an empty body, the status still says it */
    res->len = body ? len : 0;
    res->body_static = 0;
}

void cw_web_client_error(web_response *res, int rc, const cwork_error *err)
{
    unsigned status = 500;
    if (rc == CWORK_ENOTFOUND)
        status = 404;
    else if (rc == CWORK_EINVAL)
        status = 400;
    else if (rc == CWORK_EREDIS || rc == CWORK_ETIMEOUT)
        status = 503;
    const char *msg = err && err->message[0] ? err->message : cwork_strerror(rc);
    cw_web_error(res, status, "%s", msg);
}

/* ---------------------------------------------------------------- checks */

const char *cw_web_header(struct MHD_Connection *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

int cw_web_post_allowed(const web_request *req)
{
    const char *origin = cw_web_header(req->conn, "Origin");
    if (!origin) origin = cw_web_header(req->conn, "Referer");
    if (!origin) return 1; /* not a browser: curl, scripts, the Go UI's tests */
    const char *host = cw_web_header(req->conn, "Host");
    if (cw_web_origin_matches(origin, host ? host : req->web->bound)) return 1;
    /* Behind a reverse proxy that keeps its own Host: a cross-site page cannot add this
     * header without a CORS preflight, which this server never grants. */
    const char *fwd = cw_web_header(req->conn, "X-Forwarded-Host");
    if (fwd) {
        char first[256];
        size_t n = strcspn(fwd, ", ");
        if (n > 0 && n < sizeof first) {
            memcpy(first, fwd, n);
            first[n] = '\0';
            return cw_web_origin_matches(origin, first);
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- JSON indenting */

static void newline(cw_buf *out, int depth)
{
    cw_buf_putc(out, '\n');
    for (int i = 0; i < depth; i++)
        cw_buf_putc(out, '\t');
}

void cw_web_ok_indented(web_response *res, cw_buf *b)
{
    cw_buf out;
    cw_buf_init(&out);
    if (!b->oom) cw_web_json_indent(&out, b->data, b->len, 0);
    int oom = b->oom || out.oom;
    cw_buf_free(b);
    size_t len = 0;
    char *body = oom ? NULL : cw_buf_take(&out, &len);
    cw_buf_free(&out);
    if (!body)
        cw_web_error(res, 500, "out of memory");
    else
        cw_web_ok_json(res, body, len);
}

void cw_web_json_indent(cw_buf *out, const char *json, size_t len, int depth)
{
    for (size_t i = 0; i < len; i++) {
        char c = json[i];
        switch (c) {
        case '"': {
            size_t start = i++;
            while (i < len && json[i] != '"')
                i += json[i] == '\\' ? 2 : 1;
            cw_buf_append(out, json + start, (i < len ? i + 1 : len) - start);
            break;
        }
        case '{':
        case '[':
            cw_buf_putc(out, c);
            if (i + 1 < len && (json[i + 1] == '}' || json[i + 1] == ']')) {
                cw_buf_putc(out, json[++i]);
            } else {
                newline(out, ++depth);
            }
            break;
        case '}':
        case ']':
            newline(out, --depth);
            cw_buf_putc(out, c);
            break;
        case ',':
            cw_buf_putc(out, ',');
            newline(out, depth);
            break;
        case ':':
            cw_buf_puts(out, ": ");
            break;
        case ' ':
        case '\t':
        case '\n':
        case '\r':
            break;
        default:
            cw_buf_putc(out, c);
        }
    }
}
