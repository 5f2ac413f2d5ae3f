/* Redis URLs: parsing into a cw_redis_addr and redaction of passwords for messages.
 *
 * The redis:// rules are the ones of the Go side (redigo's DialURL over net/url, PROTOCOL
 * §12.3): user-info with a ':' is user:password (an empty user means a password only),
 * a lone user-info is the password, missing host → localhost, missing port → 6379, a
 * "/N" path selects database N, unknown query parameters are ignored. On top of that we
 * accept Go's workenqueue address form (host:port, :port), unix:///path?db=N sockets,
 * rediss:// (TLS), redis+sentinel://h1:p1,h2:p2/MASTER[/db] and
 * redis+cluster://h1:p1,h2:p2 (each also as rediss+…). Query parameters are parsed in
 * redis_url_query.c.
 *
 * '@' is reserved as the user-info separator: one after the host part is refused, so
 * that the parser and cwork_redact_url always agree on where a password ends. Every
 * error message quotes the URL only in its redacted form. */
#include "redis_url_impl.h"

#include <limits.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#define REDACTED "xxxxx"
#define DEFAULT_PORT 6379
#define DEFAULT_SENTINEL_PORT 26379

/* ---------------------------------------------------------------- redaction */

/* The last '@' in [p, end), or NULL. */
static const char *last_at(const char *p, const char *end)
{
    const char *at = NULL;
    for (; p < end; p++)
        if (*p == '@') at = p;
    return at;
}

static int has_prefix_ci(const char *s, const char *prefix)
{
    return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/* Where a best-effort reading of url puts its user-info: [*start, *at). Returns 0 when
 * there is none. Deliberately generous: a malformed URL whose password holds '/', '?'
 * or '#' is redacted up to its last '@' too, so that its password cannot leak into a
 * message that quotes it. */
static int find_userinfo(const char *url, const char **start, const char **at)
{
    const char *end = url + strlen(url);
    const char *a = last_at(url, end);
    if (!a) return 0;
    const char *s = url;
    const char *slashes = strstr(url, "//");
    if (slashes && slashes < a)
        s = slashes + 2;
    else if (has_prefix_ci(url, "unix:"))
        s = url + 5;
    *start = s;
    *at = a;
    return 1;
}

/* Copies url into b with the user-info's password replaced: user:password →
 * user:xxxxx (as Go's url.Redacted); a lone user-info is a password for Redis, so it
 * goes entirely. Returns where the copy stopped in url (the part after the '@'). */
static const char *redact_userinfo(const char *url, cw_buf *b)
{
    const char *start, *at;
    if (!find_userinfo(url, &start, &at) || at == start) return url;
    const char *colon = memchr(start, ':', (size_t)(at - start));
    const char *cut = colon ? colon + 1 : start;
    cw_buf_append(b, url, (size_t)(cut - url));
    cw_buf_puts(b, REDACTED);
    return at;
}

/* A query parameter whose name ends in "password" (sentinel_password) is a secret. */
static int secret_param(const char *p, size_t n)
{
    const char *eq = memchr(p, '=', n);
    size_t klen = eq ? (size_t)(eq - p) : n;
    return eq && klen >= 8 && strncasecmp(p + klen - 8, "password", 8) == 0;
}

char *cwork_redact_url(const char *url)
{
    if (!url) return cw_strdup("");
    cw_buf b;
    cw_buf_init(&b);
    const char *rest = redact_userinfo(url, &b);
    const char *q = strchr(rest, '?');
    if (!q) {
        cw_buf_puts(&b, rest);
        return cw_buf_take(&b, NULL);
    }
    cw_buf_append(&b, rest, (size_t)(q + 1 - rest));
    for (const char *p = q + 1;;) {
        size_t n = strcspn(p, "&#");
        if (secret_param(p, n)) {
            const char *eq = memchr(p, '=', n);
            cw_buf_append(&b, p, (size_t)(eq + 1 - p));
            cw_buf_puts(&b, REDACTED);
        } else {
            cw_buf_append(&b, p, n);
        }
        if (p[n] != '&') {
            cw_buf_puts(&b, p + n);
            break;
        }
        cw_buf_putc(&b, '&');
        p += n + 1;
    }
    return cw_buf_take(&b, NULL);
}

/* ---------------------------------------------------------------- parsing helpers */

typedef cw_url_parse parse_ctx;

/* user:password, :password or a lone password (redigo's reading of user-info). */
static int parse_userinfo(parse_ctx *pc, const char *p, size_t n)
{
    const char *colon = memchr(p, ':', n);
    int rc;
    if (!colon) {
        if (n == 0) return 0;
        return cw_url_decode(pc, p, n, "password", &pc->out->password);
    }
    size_t ulen = (size_t)(colon - p);
    if (ulen && (rc = cw_url_decode(pc, p, ulen, "user name", &pc->out->user)) != 0) return rc;
    size_t plen = n - ulen - 1;
    if (plen && (rc = cw_url_decode(pc, colon + 1, plen, "password", &pc->out->password)) != 0)
        return rc;
    return 0;
}

/* host[:port], [v6]:port, :port or nothing, into *host (fresh) and *port. */
static int parse_hostport(parse_ctx *pc, const char *p, size_t n, int default_port, char **host_out,
                          int *port_out)
{
    const char *host = p, *port = NULL;
    size_t hlen = n, plen = 0;
    if (n && p[0] == '[') {
        const char *close = memchr(p, ']', n);
        if (!close) return cw_url_fail(pc, CWORK_EINVAL, "missing ']' after an IPv6 address");
        host = p + 1;
        hlen = (size_t)(close - host);
        const char *rest = close + 1;
        size_t rlen = n - (size_t)(rest - p);
        if (rlen && rest[0] != ':')
            return cw_url_fail(pc, CWORK_EINVAL, "unexpected text after ']'");
        if (rlen) port = rest + 1, plen = rlen - 1;
        if (hlen == 0) return cw_url_fail(pc, CWORK_EINVAL, "empty IPv6 address");
    } else {
        const char *colon = memchr(p, ':', n);
        if (colon) {
            hlen = (size_t)(colon - p);
            port = colon + 1;
            plen = n - hlen - 1;
            if (memchr(port, ':', plen))
                return cw_url_fail(
                    pc, CWORK_EINVAL,
                    "too many colons in the address (write IPv6 hosts as [::1]:6379)");
        }
        for (size_t i = 0; i < hlen; i++)
            if (p[i] == '[' || p[i] == ']' || p[i] == ' ')
                return cw_url_fail(pc, CWORK_EINVAL, "bad character in the host name");
    }
    *port_out = default_port;
    if (plen) {
        long v = cw_url_number(port, plen, 1, 65535);
        if (v < 0) {
            char reason[64];
            snprintf(reason, sizeof reason, "bad port \"%.*s\"", (int)(plen > 12 ? 12 : plen),
                     port);
            return cw_url_fail(pc, CWORK_EINVAL, reason);
        }
        *port_out = (int)v;
    }
    if (hlen == 0) {
        *host_out = cw_strdup("localhost");
        return *host_out ? 0 : cw_error(pc->err, CWORK_ENOMEM, "out of memory");
    }
    return cw_url_decode(pc, host, hlen, "host", host_out);
}

/* host:port,host:port,… (sentinels or cluster seeds), each as parse_hostport reads it. */
static int parse_node_list(parse_ctx *pc, const char *p, size_t n, int default_port)
{
    int count = 1;
    for (size_t i = 0; i < n; i++)
        count += p[i] == ',';
    if (count > 64) return cw_url_fail(pc, CWORK_EINVAL, "more than 64 hosts");
    pc->out->nodes = cw_calloc((size_t)count, sizeof *pc->out->nodes);
    if (!pc->out->nodes) return cw_error(pc->err, CWORK_ENOMEM, "out of memory");
    const char *end = p + n;
    for (int i = 0; i < count; i++) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        size_t len = (size_t)((comma ? comma : end) - p);
        if (len == 0) return cw_url_fail(pc, CWORK_EINVAL, "an empty host in the list");
        cw_redis_node *node = &pc->out->nodes[pc->out->nnodes++];
        int rc = parse_hostport(pc, p, len, default_port, &node->host, &node->port);
        if (rc) return rc;
        p = comma ? comma + 1 : end;
    }
    return 0;
}

/* "/N" (or "/" or nothing) → database N. */
static int parse_db_path(parse_ctx *pc, const char *p, size_t n)
{
    if (n <= 1) return 0;
    char *path;
    int rc = cw_url_decode(pc, p, n, "path", &path);
    if (rc) return rc;
    long db = cw_url_number(path + 1, strlen(path + 1), 0, INT_MAX);
    cw_free(path);
    if (db < 0)
        return cw_url_fail(pc, CWORK_EINVAL, "the path must be a database number, as in /3");
    pc->out->db = (int)db;
    return 0;
}

/* "/MASTER_NAME[/N]" of a sentinel URL. */
static int parse_sentinel_path(parse_ctx *pc, const char *p, size_t n)
{
    size_t name_len = n > 1 ? strcspn(p + 1, "/") : 0;
    if (name_len > n - 1) name_len = n - 1;
    if (name_len == 0)
        return cw_url_fail(pc, CWORK_EINVAL,
                           "a sentinel URL names the master: redis+sentinel://host:26379/mymaster");
    int rc = cw_url_decode(pc, p + 1, name_len, "master name", &pc->out->master_name);
    if (rc) return rc;
    return parse_db_path(pc, p + 1 + name_len, n - 1 - name_len);
}

/* Splits scheme-less rest into authority and the part after it (Go's order: the
 * authority ends at the first '/', '?' or '#'), and refuses an '@' past the authority. */
static int split_authority(parse_ctx *pc, const char *rest, size_t *alen)
{
    *alen = strcspn(rest, "/?#");
    if (strchr(rest + *alen, '@'))
        return cw_url_fail(
            pc, CWORK_EINVAL,
            "'@' after the host (percent-encode '@', '/', '?' and '#' in passwords)");
    return 0;
}

/* The query after the path, if any. */
static int parse_tail_query(parse_ctx *pc, const char *path)
{
    const char *q = path + strcspn(path, "?#");
    return *q == '?' ? cw_url_parse_query(pc, q + 1) : 0;
}

/* redis://, rediss://, and both +sentinel and +cluster forms. */
static int parse_redis(parse_ctx *pc, const char *rest)
{
    size_t alen;
    int rc = split_authority(pc, rest, &alen);
    if (rc) return rc;
    const char *at = last_at(rest, rest + alen);
    const char *hp = rest;
    if (at) {
        if ((rc = parse_userinfo(pc, rest, (size_t)(at - rest))) != 0) return rc;
        hp = at + 1;
    }
    size_t hlen = alen - (size_t)(hp - rest);
    cw_redis_addr *a = pc->out;
    if (a->kind == CW_REDIS_DIRECT)
        rc = parse_hostport(pc, hp, hlen, DEFAULT_PORT, &a->host, &a->port);
    else
        rc = parse_node_list(pc, hp, hlen,
                             a->kind == CW_REDIS_SENTINEL ? DEFAULT_SENTINEL_PORT : DEFAULT_PORT);
    if (rc) return rc;
    const char *path = rest + alen;
    size_t plen = strcspn(path, "?#");
    if (a->kind == CW_REDIS_SENTINEL)
        rc = parse_sentinel_path(pc, path, plen);
    else
        rc = parse_db_path(pc, path, plen);
    if (rc) return rc;
    if (a->kind == CW_REDIS_CLUSTER && a->db != 0)
        return cw_url_fail(pc, CWORK_EINVAL, "a Redis Cluster has only database 0");
    return parse_tail_query(pc, path);
}

/* unix:///path, unix://[user-info@]/path or unix:/path; then ?db=N. */
static int parse_unix(parse_ctx *pc, const char *rest)
{
    int rc;
    if (rest[0] == '/' && rest[1] == '/') {
        rest += 2;
        size_t alen;
        if ((rc = split_authority(pc, rest, &alen)) != 0) return rc;
        const char *at = last_at(rest, rest + alen);
        const char *host = rest;
        if (at) {
            if ((rc = parse_userinfo(pc, rest, (size_t)(at - rest))) != 0) return rc;
            host = at + 1;
        }
        size_t hlen = alen - (size_t)(host - rest);
        if (hlen && !(hlen == 9 && strncasecmp(host, "localhost", 9) == 0))
            return cw_url_fail(pc, CWORK_EINVAL,
                               "a unix:// URL names no host (unix:///path/to.sock)");
        rest += alen;
    } else if (strchr(rest, '@')) {
        return cw_url_fail(pc, CWORK_EINVAL, "unexpected '@' (percent-encode it as %40)");
    }
    size_t plen = strcspn(rest, "?#");
    if (plen == 0 || rest[0] != '/')
        return cw_url_fail(pc, CWORK_EINVAL,
                           "the socket path must be absolute (unix:///path/to.sock)");
    if ((rc = cw_url_decode(pc, rest, plen, "socket path", &pc->out->unix_path)) != 0) return rc;
    if (strlen(pc->out->unix_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return cw_url_fail(pc, CWORK_EINVAL, "the socket path is too long");
    return parse_tail_query(pc, rest);
}

/* Go's workenqueue form: host:port or :port, nothing else. */
static int parse_bare(parse_ctx *pc, const char *s)
{
    if (strchr(s, '@')) return cw_url_fail(pc, CWORK_EINVAL, "a password needs a redis:// URL");
    if (strpbrk(s, "/?#"))
        return cw_url_fail(pc, CWORK_EINVAL, "host:port takes no path (use redis://host:port/db)");
    return parse_hostport(pc, s, strlen(s), DEFAULT_PORT, &pc->out->host, &pc->out->port);
}

/* ---------------------------------------------------------------- entry points */

void cw_redis_addr_clear(cw_redis_addr *a)
{
    if (!a) return;
    cw_free(a->host);
    cw_free(a->unix_path);
    for (int i = 0; i < a->nnodes; i++)
        cw_free(a->nodes[i].host);
    cw_free(a->nodes);
    cw_free(a->master_name);
    cw_free(a->user);
    cw_free(a->password);
    cw_free(a->sentinel_user);
    cw_free(a->sentinel_password);
    cw_free(a->tls_ca);
    cw_free(a->tls_cert);
    cw_free(a->tls_key);
    cw_free(a->tls_sni);
    memset(a, 0, sizeof *a);
}

/* The schemes with a "//" authority: what each selects. */
static const struct scheme {
    const char *prefix;
    cw_redis_kind kind;
    int tls, strict;
} schemes[] = {
    {"redis://", CW_REDIS_DIRECT, 0, 0},
    {"rediss://", CW_REDIS_DIRECT, 1, 1},
    {"redis+sentinel://", CW_REDIS_SENTINEL, 0, 1},
    {"rediss+sentinel://", CW_REDIS_SENTINEL, 1, 1},
    {"redis+cluster://", CW_REDIS_CLUSTER, 0, 1},
    {"rediss+cluster://", CW_REDIS_CLUSTER, 1, 1},
};

/* What every parse agrees on once the URL is read. */
static int check_combination(parse_ctx *pc)
{
    const cw_redis_addr *a = pc->out;
    if (!a->tls && (a->tls_ca || a->tls_cert || a->tls_key || a->tls_sni || !a->tls_verify))
        return cw_url_fail(pc, CWORK_EINVAL,
                           "ca=, cert=, key=, sni= and verify= are for TLS: use rediss://");
    if ((a->tls_cert != NULL) != (a->tls_key != NULL))
        return cw_url_fail(pc, CWORK_EINVAL, "a client certificate needs both cert= and key=");
    if (a->kind != CW_REDIS_SENTINEL && (a->sentinel_user || a->sentinel_password))
        return cw_url_fail(pc, CWORK_EINVAL,
                           "sentinel_user= and sentinel_password= need redis+sentinel://");
    return 0;
}

int cw_redis_addr_parse(const char *url, cw_redis_addr *out, cwork_error *err)
{
    memset(out, 0, sizeof *out);
    out->tls_verify = 1;
    out->min_replicas_timeout_ms = CW_MIN_REPLICAS_DEFAULT_TIMEOUT_MS;
    if (!url || !*url) return cw_error(err, CWORK_EINVAL, "invalid Redis URL: empty");
    for (const char *p = url; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return cw_error(err, CWORK_EINVAL,
                            "invalid Redis URL: it contains a control character");
    char *shown = cwork_redact_url(url);
    if (!shown) return cw_error(err, CWORK_ENOMEM, "out of memory");
    parse_ctx pc = {out, err, shown, 0};
    const struct scheme *sc = NULL;
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
        if (has_prefix_ci(url, schemes[i].prefix)) sc = &schemes[i];
    int rc;
    if (sc) {
        out->kind = sc->kind;
        out->tls = sc->tls;
        pc.strict = sc->strict;
        rc = parse_redis(&pc, url + strlen(sc->prefix));
    } else if (has_prefix_ci(url, "unix:")) {
        rc = parse_unix(&pc, url + 5);
    } else if (strstr(url, "://")) {
        rc = cw_url_fail(&pc, CWORK_EINVAL,
                         "unsupported scheme (use redis://, rediss://, redis+sentinel://, "
                         "redis+cluster://, unix:// or host:port)");
    } else {
        rc = parse_bare(&pc, url);
    }
    if (rc == 0) rc = check_combination(&pc);
    cw_free(shown);
    if (rc) {
        cw_redis_addr_clear(out);
        out->tls_verify = 1;
    }
    return rc;
}
