/* Request parsing for the web server: percent-decoding (libmicrohttpd is told not to
 * decode, so that an id with an encoded '/' stays one path segment), query parameters,
 * HTTP basic credentials and the authorities of Host, Origin and Referer. */
#include "web.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <string.h>
#include <strings.h>

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int cw_web_percent_decode(const char *s, size_t len, char **out)
{
    char *d = cw_malloc(len + 1);
    if (!d) return CWORK_ENOMEM;
    size_t j = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '%') {
            int hi = i + 1 < len ? hex_value(s[i + 1]) : -1;
            int lo = i + 2 < len ? hex_value(s[i + 2]) : -1;
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                cw_free(d);
                return -1;
            }
            c = (char)(hi * 16 + lo);
            i += 2;
        } else if (c == '\0') {
            cw_free(d);
            return -1;
        }
        d[j++] = c;
    }
    d[j] = '\0';
    *out = d;
    return 0;
}

int cw_web_query(const web_request *req, const char *key, char **out)
{
    *out = NULL;
    const char *v = MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
    if (!v) return 0;
    return cw_web_percent_decode(v, strlen(v), out);
}

int cw_web_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out)
{
    if (len == 0 || len > 20) return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (d > max || v > (max - d) / 10) return -1; /* v * 10 + d > max */
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* ---------------------------------------------------------------- basic auth */

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Decodes standard base64 (padding optional) into out (at most cap bytes). Returns the
 * decoded length, or -1 for bad input or too little room. */
static long b64_decode(const char *s, size_t len, unsigned char *out, size_t cap)
{
    while (len > 0 && s[len - 1] == '=')
        len--;
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64_value((unsigned char)s[i]);
        if (v < 0) return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n >= cap) return -1;
            out[n++] = (unsigned char)(acc >> bits);
        }
    }
    if (bits >= 6) /* a lone sixth character cannot end valid base64 */
        return -1;
    return (long)n;
}

/* Compares a[0..alen) with b[0..blen) in time that depends only on blen. */
static int equal_constant_time(const unsigned char *a, size_t alen, const unsigned char *b,
                               size_t blen)
{
    volatile unsigned char diff = (unsigned char)(alen != blen);
    for (size_t i = 0; i < blen; i++) {
        unsigned char x = i < alen ? a[i] : 0;
        diff |= (unsigned char)(x ^ b[i]);
    }
    return diff == 0;
}

int cw_web_basic_auth_ok(const char *header, const char *expected)
{
    if (!header || !expected) return 0;
    while (*header == ' ')
        header++;
    if (strncasecmp(header, "Basic", 5) != 0 || header[5] != ' ') return 0;
    header += 6;
    while (*header == ' ')
        header++;
    size_t len = strlen(header);
    while (len > 0 && header[len - 1] == ' ')
        len--;
    unsigned char decoded[1024];
    long n = b64_decode(header, len, decoded, sizeof decoded);
    if (n < 0) return 0;
    return equal_constant_time(decoded, (size_t)n, (const unsigned char *)expected,
                               strlen(expected));
}

/* ---------------------------------------------------------------- hosts and origins */

/* Splits an authority "host[:port]" or "[v6]:port" into the host (without brackets)
 * and the port text ("" when absent). 0, or -1 when it does not fit or is malformed. */
static int split_authority(const char *a, size_t len, char *host, size_t hcap, char *port,
                           size_t pcap)
{
    const char *colon = NULL;
    const char *h = a;
    size_t hlen;
    if (len > 0 && a[0] == '[') {
        const char *close = memchr(a, ']', len);
        if (!close) return -1;
        h = a + 1;
        hlen = (size_t)(close - h);
        if ((size_t)(close + 1 - a) < len) {
            if (close[1] != ':') return -1;
            colon = close + 1;
        }
    } else {
        colon = memchr(a, ':', len);
        hlen = colon ? (size_t)(colon - a) : len;
    }
    size_t plen = colon ? len - (size_t)(colon + 1 - a) : 0;
    if (hlen == 0 || hlen >= hcap || plen >= pcap) return -1;
    for (size_t i = 0; i < hlen; i++)
        host[i] = (char)((h[i] >= 'A' && h[i] <= 'Z') ? h[i] + 32 : h[i]);
    host[hlen] = '\0';
    if (hlen > 1 && host[hlen - 1] == '.') /* "localhost." is "localhost" */
        host[hlen - 1] = '\0';
    memcpy(port, colon ? colon + 1 : "", plen);
    port[plen] = '\0';
    for (size_t i = 0; i < plen; i++)
        if (port[i] < '0' || port[i] > '9') return -1;
    return 0;
}

int cw_web_host_is_loopback(const char *hostport)
{
    char host[256], port[16];
    if (!hostport ||
        split_authority(hostport, strlen(hostport), host, sizeof host, port, sizeof port) != 0)
        return 0;
    size_t n = strlen(host);
    if (strcmp(host, "localhost") == 0 || (n > 10 && strcmp(host + n - 10, ".localhost") == 0))
        return 1;
    struct in_addr a4;
    if (inet_pton(AF_INET, host, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
    struct in6_addr a6;
    if (inet_pton(AF_INET6, host, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6) || (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
    return 0;
}

/* The port a scheme uses when the URL names none. */
static const char *default_port(const char *scheme, size_t len)
{
    if (len == 4 && strncasecmp(scheme, "http", 4) == 0) return "80";
    if (len == 5 && strncasecmp(scheme, "https", 5) == 0) return "443";
    return "";
}

int cw_web_origin_matches(const char *origin, const char *hostport)
{
    if (!origin || !hostport) return 0;
    const char *sep = strstr(origin, "://");
    if (!sep || sep == origin) return 0; /* "null" and other opaque origins */
    const char *scheme = origin;
    size_t slen = (size_t)(sep - origin);
    const char *auth = sep + 3;
    size_t alen = strcspn(auth, "/?#");
    const char *at = memchr(auth, '@', alen); /* user-info never names the host */
    if (at) {
        alen -= (size_t)(at + 1 - auth);
        auth = at + 1;
    }
    char oh[256], op[16], hh[256], hp[16];
    if (split_authority(auth, alen, oh, sizeof oh, op, sizeof op) != 0 ||
        split_authority(hostport, strlen(hostport), hh, sizeof hh, hp, sizeof hp) != 0)
        return 0;
    const char *dflt = default_port(scheme, slen);
    const char *p1 = op[0] ? op : dflt, *p2 = hp[0] ? hp : dflt;
    return strcmp(oh, hh) == 0 && strcmp(p1, p2) == 0;
}
