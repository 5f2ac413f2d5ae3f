/* Redis URLs: parsing into a cw_redis_addr and redaction of passwords for messages.
 *
 * The redis:// rules are the ones of the Go side (redigo's DialURL over net/url, PROTOCOL
 * §12.3): user-info with a ':' is user:password (an empty user means a password only),
 * a lone user-info is the password, missing host → localhost, missing port → 6379, a
 * "/N" path selects database N, the query is ignored. On top of that we accept Go's
 * workenqueue address form (host:port, :port) and unix:///path?db=N sockets.
 *
 * '@' is reserved as the user-info separator: one after the host part is refused, so
 * that the parser and cwork_redact_url always agree on where a password ends. Every
 * error message quotes the URL only in its redacted form. */
#include "redis.h"

#include <ctype.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#define REDACTED "xxxxx"
#define DEFAULT_PORT 6379

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

char *cwork_redact_url(const char *url)
{
    if (!url) return cw_strdup("");
    const char *start, *at;
    if (!find_userinfo(url, &start, &at) || at == start) return cw_strdup(url);
    /* user:password → user:xxxxx (as Go's url.Redacted); a lone user-info is a
     * password for Redis, so it goes entirely. */
    const char *colon = memchr(start, ':', (size_t)(at - start));
    const char *cut = colon ? colon + 1 : start;
    size_t head = (size_t)(cut - url), tail = strlen(at);
    char *out = cw_malloc(head + sizeof REDACTED - 1 + tail + 1);
    if (!out) return NULL;
    memcpy(out, url, head);
    memcpy(out + head, REDACTED, sizeof REDACTED - 1);
    memcpy(out + head + sizeof REDACTED - 1, at, tail + 1);
    return out;
}

/* ---------------------------------------------------------------- parsing helpers */

/* The state of one parse: the target, the error sink and the redacted URL to quote. */
typedef struct parse_ctx {
    cw_redis_addr *out;
    cwork_error *err;
    const char *shown;
} parse_ctx;

static int fail(parse_ctx *pc, int code, const char *reason)
{
    return cw_error(pc->err, code, "invalid Redis URL: %s (in \"%s\")", reason, pc->shown);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decodes [p, p+n) into a fresh string. NUL bytes are refused: every string of
 * cw_redis_addr is NUL-terminated. */
static int decode(parse_ctx *pc, const char *p, size_t n, const char *what, char **out)
{
    char *d = cw_malloc(n + 1);
    if (!d) return cw_error(pc->err, CWORK_ENOMEM, "out of memory");
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '%') {
            d[j++] = p[i];
            continue;
        }
        if (i + 2 < n) {
            int hi = hexval(p[i + 1]), lo = hexval(p[i + 2]);
            if (hi >= 0 && lo >= 0 && (hi || lo)) {
                d[j++] = (char)(hi * 16 + lo);
                i += 2;
                continue;
            }
        }
        cw_free(d);
        char reason[96];
        snprintf(reason, sizeof reason, "bad percent-encoding in the %s", what);
        return fail(pc, CWORK_EINVAL, reason);
    }
    d[j] = '\0';
    *out = d;
    return 0;
}

/* A whole unsigned decimal in [min, max]; -1 when it is not one. */
static long parse_number(const char *p, size_t n, long min, long max)
{
    if (n == 0 || n > 10) return -1; /* 10 digits fit in int64_t, and exceed INT_MAX */
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v < min || v > max ? -1 : (long)v;
}

/* user:password, :password or a lone password (redigo's reading of user-info). */
static int parse_userinfo(parse_ctx *pc, const char *p, size_t n)
{
    const char *colon = memchr(p, ':', n);
    int rc;
    if (!colon) {
        if (n == 0) return 0;
        return decode(pc, p, n, "password", &pc->out->password);
    }
    size_t ulen = (size_t)(colon - p);
    if (ulen && (rc = decode(pc, p, ulen, "user name", &pc->out->user)) != 0) return rc;
    size_t plen = n - ulen - 1;
    if (plen && (rc = decode(pc, colon + 1, plen, "password", &pc->out->password)) != 0) return rc;
    return 0;
}

/* host[:port], [v6]:port, :port or nothing. */
static int parse_hostport(parse_ctx *pc, const char *p, size_t n)
{
    const char *host = p, *port = NULL;
    size_t hlen = n, plen = 0;
    if (n && p[0] == '[') {
        const char *close = memchr(p, ']', n);
        if (!close) return fail(pc, CWORK_EINVAL, "missing ']' after an IPv6 address");
        host = p + 1;
        hlen = (size_t)(close - host);
        const char *rest = close + 1;
        size_t rlen = n - (size_t)(rest - p);
        if (rlen && rest[0] != ':') return fail(pc, CWORK_EINVAL, "unexpected text after ']'");
        if (rlen) port = rest + 1, plen = rlen - 1;
        if (hlen == 0) return fail(pc, CWORK_EINVAL, "empty IPv6 address");
    } else {
        const char *colon = memchr(p, ':', n);
        if (colon) {
            hlen = (size_t)(colon - p);
            port = colon + 1;
            plen = n - hlen - 1;
            if (memchr(port, ':', plen))
                return fail(pc, CWORK_EINVAL,
                            "too many colons in the address (write IPv6 hosts as [::1]:6379)");
        }
        for (size_t i = 0; i < hlen; i++)
            if (p[i] == '[' || p[i] == ']' || p[i] == ' ')
                return fail(pc, CWORK_EINVAL, "bad character in the host name");
    }
    pc->out->port = DEFAULT_PORT;
    if (plen) {
        long v = parse_number(port, plen, 1, 65535);
        if (v < 0) {
            char reason[64];
            snprintf(reason, sizeof reason, "bad port \"%.*s\"", (int)(plen > 12 ? 12 : plen),
                     port);
            return fail(pc, CWORK_EINVAL, reason);
        }
        pc->out->port = (int)v;
    }
    if (hlen == 0) {
        pc->out->host = cw_strdup("localhost");
        return pc->out->host ? 0 : cw_error(pc->err, CWORK_ENOMEM, "out of memory");
    }
    return decode(pc, host, hlen, "host", &pc->out->host);
}

/* "/N" (or "/" or nothing) → database N. */
static int parse_db_path(parse_ctx *pc, const char *p, size_t n)
{
    if (n <= 1) return 0;
    char *path;
    int rc = decode(pc, p, n, "path", &path);
    if (rc) return rc;
    long db = parse_number(path + 1, strlen(path + 1), 0, INT_MAX);
    cw_free(path);
    if (db < 0) return fail(pc, CWORK_EINVAL, "the path must be a database number, as in /3");
    pc->out->db = (int)db;
    return 0;
}

/* The query of a unix URL: db=N selects the database, other parameters are ignored. */
static int parse_unix_query(parse_ctx *pc, const char *q)
{
    while (*q) {
        size_t n = strcspn(q, "&#");
        if (n > 3 && memcmp(q, "db=", 3) == 0) {
            long db = parse_number(q + 3, n - 3, 0, INT_MAX);
            if (db < 0) return fail(pc, CWORK_EINVAL, "db= must be a database number");
            pc->out->db = (int)db;
        } else if (n == 3 && memcmp(q, "db=", 3) == 0) {
            return fail(pc, CWORK_EINVAL, "db= must be a database number");
        }
        if (q[n] != '&') break;
        q += n + 1;
    }
    return 0;
}

/* Splits scheme-less rest into authority and the part after it (Go's order: the
 * authority ends at the first '/', '?' or '#'), and refuses an '@' past the authority. */
static int split_authority(parse_ctx *pc, const char *rest, size_t *alen)
{
    *alen = strcspn(rest, "/?#");
    if (strchr(rest + *alen, '@'))
        return fail(pc, CWORK_EINVAL,
                    "'@' after the host (percent-encode '@', '/', '?' and '#' in passwords)");
    return 0;
}

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
    if ((rc = parse_hostport(pc, hp, alen - (size_t)(hp - rest))) != 0) return rc;
    const char *path = rest + alen;
    return parse_db_path(pc, path, strcspn(path, "?#"));
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
            return fail(pc, CWORK_EINVAL, "a unix:// URL names no host (unix:///path/to.sock)");
        rest += alen;
    } else if (strchr(rest, '@')) {
        return fail(pc, CWORK_EINVAL, "unexpected '@' (percent-encode it as %40)");
    }
    size_t plen = strcspn(rest, "?#");
    if (plen == 0 || rest[0] != '/')
        return fail(pc, CWORK_EINVAL, "the socket path must be absolute (unix:///path/to.sock)");
    if ((rc = decode(pc, rest, plen, "socket path", &pc->out->unix_path)) != 0) return rc;
    if (strlen(pc->out->unix_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return fail(pc, CWORK_EINVAL, "the socket path is too long");
    return rest[plen] == '?' ? parse_unix_query(pc, rest + plen + 1) : 0;
}

/* Go's workenqueue form: host:port or :port, nothing else. */
static int parse_bare(parse_ctx *pc, const char *s)
{
    if (strchr(s, '@')) return fail(pc, CWORK_EINVAL, "a password needs a redis:// URL");
    if (strpbrk(s, "/?#"))
        return fail(pc, CWORK_EINVAL, "host:port takes no path (use redis://host:port/db)");
    return parse_hostport(pc, s, strlen(s));
}

/* ---------------------------------------------------------------- entry points */

void cw_redis_addr_clear(cw_redis_addr *a)
{
    if (!a) return;
    cw_free(a->host);
    cw_free(a->unix_path);
    cw_free(a->user);
    cw_free(a->password);
    memset(a, 0, sizeof *a);
}

int cw_redis_addr_parse(const char *url, cw_redis_addr *out, cwork_error *err)
{
    memset(out, 0, sizeof *out);
    if (!url || !*url) return cw_error(err, CWORK_EINVAL, "invalid Redis URL: empty");
    for (const char *p = url; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return cw_error(err, CWORK_EINVAL,
                            "invalid Redis URL: it contains a control character");
    char *shown = cwork_redact_url(url);
    if (!shown) return cw_error(err, CWORK_ENOMEM, "out of memory");
    parse_ctx pc = {out, err, shown};
    int rc;
    if (has_prefix_ci(url, "rediss://")) {
        rc = cw_error(err, CWORK_EUNSUPPORTED,
                      "rediss:// (TLS) is not supported by this build: Debian 12's hiredis "
                      "0.14 has no TLS; use redis:// or a TLS tunnel (in \"%s\")",
                      shown);
    } else if (has_prefix_ci(url, "redis://")) {
        rc = parse_redis(&pc, url + 8);
    } else if (has_prefix_ci(url, "unix:")) {
        rc = parse_unix(&pc, url + 5);
    } else if (strstr(url, "://")) {
        rc = fail(&pc, CWORK_EINVAL, "unsupported scheme (use redis://, unix:// or host:port)");
    } else {
        rc = parse_bare(&pc, url);
    }
    cw_free(shown);
    if (rc) cw_redis_addr_clear(out);
    return rc;
}
