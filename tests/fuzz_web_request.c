/* libFuzzer target for the web server's request parsing (src/web/request.c; build: see
 * tests/CMakeLists.txt). The input is up to six newline-separated fields:
 *
 *   percent-encoded value \n number \n Authorization value \n user:password \n
 *   Host value \n Origin value
 *
 * and whatever they hold:
 *  1. cw_web_percent_decode agrees with a plain reference decoder (%XX with two hex digits,
 *     never %00, no raw NUL), and encoding its result back decodes to the same bytes;
 *  2. cw_web_parse_uint agrees with a 128-bit reference for several limits;
 *  3. cw_web_basic_auth_ok accepts "Basic " + base64(user:password) (with or without
 *     padding and spaces), refuses it for any other expected value, and never crashes on
 *     the given header;
 *  4. cw_web_host_is_loopback and cw_web_origin_matches never crash, and a plain host matches
 *     its own http:// and https:// origins whenever it is a valid authority.
 * Any violation aborts with __builtin_trap. */
#include "web.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

/* ---------------------------------------------------------------- references */

static int hex(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes into out (room for len bytes); the decoded length, or -1. */
static long ref_decode(const unsigned char *s, size_t len, unsigned char *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\0') return -1;
        if (s[i] != '%') {
            out[n++] = s[i];
            continue;
        }
        if (i + 2 >= len) return -1; /* fewer than two digits left */
        int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return -1;
        out[n++] = (unsigned char)(hi * 16 + lo);
        i += 2;
    }
    return (long)n;
}

static int ref_parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out)
{
    if (len == 0 || len > 20) return -1;
    unsigned __int128 v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v > max) return -1;
    *out = (uint64_t)v;
    return 0;
}

static char *percent_encode_all(const unsigned char *s, size_t len)
{
    static const char digits[] = "0123456789ABCDEF";
    char *out = malloc(3 * len + 1);
    if (!out) return NULL;
    for (size_t i = 0; i < len; i++) {
        out[3 * i] = '%';
        out[3 * i + 1] = digits[s[i] >> 4];
        out[3 * i + 2] = digits[s[i] & 15];
    }
    out[3 * len] = '\0';
    return out;
}

static char *base64(const char *s, size_t len, int pad)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc(4 * (len / 3 + 1) + 1);
    if (!out) return NULL;
    size_t o = 0, i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)s[i] << 16 | (uint32_t)(unsigned char)s[i + 1] << 8 |
                     (unsigned char)s[i + 2];
        out[o++] = tab[v >> 18];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = tab[(v >> 6) & 63];
        out[o++] = tab[v & 63];
    }
    if (len - i == 1) {
        uint32_t v = (uint32_t)(unsigned char)s[i] << 16;
        out[o++] = tab[v >> 18];
        out[o++] = tab[(v >> 12) & 63];
        if (pad) out[o++] = '=', out[o++] = '=';
    } else if (len - i == 2) {
        uint32_t v = (uint32_t)(unsigned char)s[i] << 16 | (uint32_t)(unsigned char)s[i + 1] << 8;
        out[o++] = tab[v >> 18];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = tab[(v >> 6) & 63];
        if (pad) out[o++] = '=';
    }
    out[o] = '\0';
    return out;
}

/* ---------------------------------------------------------------- properties */

static void fuzz_percent_decode(const unsigned char *s, size_t len)
{
    unsigned char *want = malloc(len + 1);
    if (!want) return;
    long n = ref_decode(s, len, want);
    char *got = NULL;
    int rc = cw_web_percent_decode((const char *)s, len, &got);
    if (n < 0) {
        check(rc == -1 && got == NULL);
    } else {
        check(rc == 0 && got && strlen(got) == (size_t)n && memcmp(got, want, (size_t)n) == 0);
        char *enc = percent_encode_all((const unsigned char *)got, (size_t)n);
        if (enc) {
            char *again = NULL;
            check(cw_web_percent_decode(enc, strlen(enc), &again) == 0);
            check(strcmp(again, got) == 0);
            cw_free(again);
            free(enc);
        }
        cw_free(got);
    }
    free(want);
}

static void fuzz_parse_uint(const char *s, size_t len)
{
    static const uint64_t limits[] = {0, 9, 100000000, INT64_MAX, UINT64_MAX};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        uint64_t got = 12345, want = 54321;
        int rc = cw_web_parse_uint(s, len, limits[i], &got);
        int ref = ref_parse_uint(s, len, limits[i], &want);
        check(rc == ref);
        if (rc == 0) check(got == want && got <= limits[i]);
    }
}

static void fuzz_basic_auth(const char *header, const char *expected)
{
    (void)cw_web_basic_auth_ok(header, expected);
    (void)cw_web_basic_auth_ok(header, "user:password");
    size_t len = strlen(expected);
    if (len > 1024) return; /* longer credentials than the server reads */
    for (int pad = 0; pad <= 1; pad++) {
        char *b64 = base64(expected, len, pad);
        if (!b64) return;
        size_t hl = strlen(b64) + 16;
        char *h = malloc(hl);
        if (!h) {
            free(b64);
            return;
        }
        snprintf(h, hl, "%sBasic %s%s", pad ? "" : "  ", b64, pad ? "" : " ");
        check(cw_web_basic_auth_ok(h, expected) == 1);
        /* Any other expected value is refused: one more byte, or one byte changed. */
        char *other = malloc(len + 2);
        if (other) {
            memcpy(other, expected, len);
            other[len] = 'x';
            other[len + 1] = '\0';
            check(cw_web_basic_auth_ok(h, other) == 0);
            if (len > 0) {
                other[len] = '\0';
                other[len / 2] = other[len / 2] == 'a' ? 'b' : 'a';
                check(cw_web_basic_auth_ok(h, other) == 0);
            }
            free(other);
        }
        free(h);
        free(b64);
    }
}

static void fuzz_hosts(const char *host, const char *origin)
{
    (void)cw_web_origin_matches(origin, host);
    (void)cw_web_origin_matches(host, origin);
    int loop = cw_web_host_is_loopback(host);
    (void)cw_web_host_is_loopback(origin);
    check(loop == 0 || loop == 1);
    /* A host that is a valid authority (loopback says yes only for those) matches its own
     * origin under either scheme, whatever its case. */
    if (loop && !strpbrk(host, "/?#@")) {
        size_t n = strlen(host) + 16;
        char *o = malloc(n);
        if (!o) return;
        snprintf(o, n, "http://%s", host);
        check(cw_web_origin_matches(o, host) == 1);
        snprintf(o, n, "HTTPS://%s/path", host);
        check(cw_web_origin_matches(o, host) == 1);
        free(o);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192) return 0;
    /* Six fields split at '\n'; missing ones are empty. */
    const unsigned char *field[6];
    size_t flen[6];
    size_t pos = 0;
    for (int i = 0; i < 6; i++) {
        field[i] = data + pos;
        size_t end = pos;
        while (end < size && data[end] != '\n')
            end++;
        flen[i] = end - pos;
        pos = end < size ? end + 1 : end;
    }
    fuzz_percent_decode(field[0], flen[0]);
    fuzz_parse_uint((const char *)field[1], flen[1]);

    /* The header-like fields as C strings (up to a NUL, as libmicrohttpd hands them). */
    char *str[6];
    for (int i = 2; i < 6; i++)
        str[i] = strndup((const char *)field[i], flen[i]);
    if (str[2] && str[3]) fuzz_basic_auth(str[2], str[3]);
    if (str[4] && str[5]) fuzz_hosts(str[4], str[5]);
    for (int i = 2; i < 6; i++)
        free(str[i]);
    return 0;
}
