/* Pure decisions and text of `cwork work`: see work_text.h. */
#include "work_text.h"

#include <stdio.h>
#include <string.h>

work_outcome work_outcome_of(const cwork_job_options *opts, int64_t fails_before, int no_retry)
{
    if (opts->skip_dead && !opts->skip_dead_after_retries) return WORK_DROP;
    if (no_retry || (int64_t)opts->max_fails - (fails_before + 1) <= 0)
        return opts->skip_dead ? WORK_DROP : WORK_DEAD;
    return WORK_RETRY;
}

int64_t work_backoff_s(const char *job_id, int64_t fails)
{
    if (fails < 0) fails = 0;
    if (fails > 1000) /* fails^4 is past the pool's bound (and overflows from 55109 on) */
        return CWORK_MAX_DELAY_SECONDS;
    uint64_t h = 14695981039346656037ULL; /* FNV-1a over the id, then fails */
    for (const unsigned char *p = (const unsigned char *)job_id; p && *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    for (int i = 0; i < 8; i++)
        h = (h ^ (uint64_t)((fails >> (8 * i)) & 0xff)) * 1099511628211ULL;
    int64_t r = (int64_t)((h >> 32) % 30);
    return fails * fails * fails * fails + 15 + r * (fails + 1);
}

static int is_alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

size_t work_arg_env_name(const char *key, char *out)
{
    size_t n = 0;
    memcpy(out, "CWORK_ARG_", 10);
    n = 10;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
        if ((*p & 0xC0) == 0x80 && p != (const unsigned char *)key && (p[-1] & 0x80))
            continue; /* a continuation byte: its character already became '_' */
        if (*p >= 'a' && *p <= 'z')
            out[n++] = (char)(*p - 'a' + 'A');
        else
            out[n++] = (char)(is_alnum(*p) ? *p : '_');
    }
    out[n] = '\0';
    return n;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* How many of the first max bytes of p (length n) end on a character boundary. */
static size_t utf8_cut(const char *p, size_t n, size_t max)
{
    if (n <= max) return n;
    while (max > 0 && ((unsigned char)p[max] & 0xC0) == 0x80)
        max--;
    return max;
}

size_t work_stderr_tail(const char *data, size_t len, int lost_front, char *out, size_t max_bytes,
                        size_t max_lines)
{
    size_t start = 0;
    if (lost_front) {
        const char *nl = memchr(data, '\n', len);
        if (nl && nl + 1 < data + len) start = (size_t)(nl + 1 - data);
        while (start < len && ((unsigned char)data[start] & 0xC0) == 0x80)
            start++; /* (a single partial line: at least begin on a character) */
    }
    /* The kept lines, found from the end: [from[i], to[i]). */
    enum { MAX_KEPT = 64 };
    size_t from[MAX_KEPT], to[MAX_KEPT], kept = 0, bytes = 0;
    if (max_lines > MAX_KEPT) max_lines = MAX_KEPT;
    size_t pos = len;
    while (pos > start && kept < max_lines) {
        size_t end = pos, begin = pos;
        while (begin > start && data[begin - 1] != '\n')
            begin--;
        pos = begin > start ? begin - 1 : start; /* before the newline */
        while (end > begin && is_blank(data[end - 1]))
            end--;
        size_t b = begin;
        while (b < end && is_blank(data[b]))
            b++;
        if (b == end) continue; /* a blank line */
        size_t need = (end - begin) + (kept ? 1 : 0);
        if (bytes + need > max_bytes) {
            if (kept) break;
            end = begin + utf8_cut(data + begin, end - begin, max_bytes);
            need = end - begin;
        }
        from[kept] = begin;
        to[kept] = end;
        kept++;
        bytes += need;
    }
    size_t n = 0;
    for (size_t i = kept; i-- > 0;) {
        memcpy(out + n, data + from[i], to[i] - from[i]);
        n += to[i] - from[i];
        if (i) out[n++] = '\n';
    }
    out[n] = '\0';
    return n;
}

const char *work_last_line(const char *text, size_t *len)
{
    const char *nl = strrchr(text, '\n');
    const char *line = nl ? nl + 1 : text;
    *len = strlen(line);
    return line;
}

void work_duration_text(int64_t ms, char *out, size_t size)
{
    if (ms < 0) ms = 0;
    if (ms < 10000)
        snprintf(out, size, "%.2f s", (double)ms / 1000.0);
    else if (ms < 60000)
        snprintf(out, size, "%.1f s", (double)ms / 1000.0);
    else if (ms < 3600000)
        snprintf(out, size, "%lldm%02llds", (long long)(ms / 60000), (long long)(ms / 1000 % 60));
    else
        snprintf(out, size, "%lldh%02lldm", (long long)(ms / 3600000),
                 (long long)(ms / 60000 % 60));
}

int work_listen_split(const char *addr, char *host, size_t host_size, char *port, size_t port_size)
{
    if (!addr || !*addr) return -1;
    const char *h = "127.0.0.1", *p = addr;
    size_t hlen = strlen(h);
    if (addr[0] == '[') {
        const char *close = strchr(addr, ']');
        if (!close || close[1] != ':' || close == addr + 1) return -1;
        h = addr + 1;
        hlen = (size_t)(close - h);
        p = close + 2;
    } else {
        const char *colon = strrchr(addr, ':');
        if (colon) {
            if (memchr(addr, ':', (size_t)(colon - addr))) return -1; /* v6 without [] */
            if (colon > addr) h = addr, hlen = (size_t)(colon - addr);
            p = colon + 1;
        }
    }
    size_t plen = strlen(p);
    if (plen == 0 || plen > 5 || strspn(p, "0123456789") != plen) return -1;
    long v = 0;
    for (size_t i = 0; i < plen; i++)
        v = v * 10 + (p[i] - '0');
    if (v > 65535 || hlen + 1 > host_size || plen + 1 > port_size) return -1;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    memcpy(port, p, plen + 1);
    return 0;
}
