/* libFuzzer target for Redis URLs (src/redis/redis_url.c: cw_redis_addr_parse and
 * cwork_redact_url; build: see tests/CMakeLists.txt). The input, up to its first NUL, is
 * the URL. Whatever it is:
 *
 *  1. parsing never crashes and either succeeds or fails with a negative code, a message,
 *     and an address left empty;
 *  2. a parsed address is usable: for one server a host (with a port in 1..65535) or an
 *     absolute unix socket path, never both; for sentinels and cluster seeds a list of
 *     hosts with ports (and a master name for sentinels); a database >= 0;
 *  3. the parser and the redactor agree on where the passwords are: the redacted URL
 *     parses to the same address with each password (the data nodes' and the
 *     sentinels') "xxxxx", and whatever an error message quotes of the URL (between
 *     double quotes) is quoted from the redacted form, so no message carries what the
 *     redactor took out;
 *  4. parsing is deterministic.
 * Any violation aborts with __builtin_trap. */
#include "redis.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void check_empty(const cw_redis_addr *a)
{
    check(!a->host && !a->unix_path && !a->user && !a->password && a->port == 0 && a->db == 0);
    check(!a->nodes && a->nnodes == 0 && !a->master_name && !a->sentinel_user &&
          !a->sentinel_password && !a->tls_ca && !a->tls_cert && !a->tls_key && !a->tls_sni &&
          a->kind == CW_REDIS_DIRECT && !a->tls && a->min_replicas == 0);
}

static void check_usable(const cw_redis_addr *a)
{
    if (a->kind == CW_REDIS_DIRECT) {
        check((a->host != NULL) != (a->unix_path != NULL));
        check(a->nnodes == 0 && !a->nodes && !a->master_name);
    } else {
        check(!a->host && !a->unix_path && a->nnodes >= 1 && a->nodes);
        for (int i = 0; i < a->nnodes; i++)
            check(a->nodes[i].host && a->nodes[i].host[0] && a->nodes[i].port >= 1 &&
                  a->nodes[i].port <= 65535);
        check((a->kind == CW_REDIS_SENTINEL) == (a->master_name != NULL));
        if (a->master_name) check(a->master_name[0]);
    }
    if (a->host) check(a->host[0] && a->port >= 1 && a->port <= 65535);
    if (a->unix_path) check(a->unix_path[0] == '/');
    check(a->db >= 0 && a->min_replicas >= 0 && a->min_replicas_timeout_ms >= 0);
}

/* The same address, passwords aside. */
static int same_addr(const cw_redis_addr *a, const cw_redis_addr *b)
{
    int same = a->kind == b->kind && same_str(a->host, b->host) &&
               same_str(a->unix_path, b->unix_path) && same_str(a->user, b->user) &&
               a->port == b->port && a->db == b->db && a->nnodes == b->nnodes &&
               same_str(a->master_name, b->master_name) &&
               same_str(a->sentinel_user, b->sentinel_user) && a->tls == b->tls &&
               same_str(a->tls_ca, b->tls_ca) && same_str(a->tls_cert, b->tls_cert) &&
               same_str(a->tls_key, b->tls_key) && same_str(a->tls_sni, b->tls_sni) &&
               a->tls_verify == b->tls_verify && a->min_replicas == b->min_replicas &&
               a->min_replicas_timeout_ms == b->min_replicas_timeout_ms;
    for (int i = 0; same && i < a->nnodes; i++)
        same = same_str(a->nodes[i].host, b->nodes[i].host) && a->nodes[i].port == b->nodes[i].port;
    return same;
}

/* r's secret (parsed from the redacted URL) hides a's: "xxxxx" where a has one. */
static void check_hidden(const char *a_secret, const char *r_secret)
{
    if (a_secret) check(r_secret && strcmp(r_secret, "xxxxx") == 0);
}

/* Every piece of the URL that msg quotes comes from shown (the redacted URL): the whole
 * of it in `(in "<shown>")`, and whatever else stands between the remaining first and
 * last double quotes (a port, say). */
static void check_quotes_redacted(const char *msg, const char *shown)
{
    char rest[sizeof((cwork_error *)0)->message];
    if (strlen(msg) + 1 >= sizeof rest) return; /* truncated: the quotes may not pair */
    memcpy(rest, msg, strlen(msg) + 1);
    size_t len = strlen(rest), sl = strlen(shown);
    if (len >= sl + 7 && memcmp(rest + len - sl - 7, "(in \"", 5) == 0 &&
        memcmp(rest + len - sl - 2, shown, sl) == 0 && strcmp(rest + len - 2, "\")") == 0)
        rest[len - sl - 7] = '\0';
    char *open = strchr(rest, '"'), *close = strrchr(rest, '"');
    if (!open || open == close) return;
    *close = '\0';
    check(strstr(shown, open + 1) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *url = strndup((const char *)data, size); /* up to the first NUL */
    if (!url) return 0;

    cw_redis_addr a, again;
    cwork_error err = {0}, err2 = {0};
    int rc = cw_redis_addr_parse(url, &a, &err);
    int rc2 = cw_redis_addr_parse(url, &again, &err2);
    check(rc == rc2 && strcmp(err.message, err2.message) == 0);
    char *shown = cwork_redact_url(url);
    check(shown != NULL);
    int redacted = strcmp(shown, url) != 0;

    if (rc == 0) {
        check(err.message[0] == '\0');
        check_usable(&a);
        check(same_addr(&a, &again) && same_str(a.password, again.password) &&
              same_str(a.sentinel_password, again.sentinel_password));
        if (redacted) {
            /* The redacted form reads as the same address with the passwords hidden. */
            cw_redis_addr r;
            cwork_error rerr = {0};
            check(cw_redis_addr_parse(shown, &r, &rerr) == 0);
            check(same_addr(&a, &r));
            check_hidden(a.password, r.password);
            check_hidden(a.sentinel_password, r.sentinel_password);
            cw_redis_addr_clear(&r);
        } else { /* nothing to hide, or it was "xxxxx" already */
            check_hidden(a.password, a.password);
            check_hidden(a.sentinel_password, a.sentinel_password);
        }
    } else {
        check(rc < 0 && err.code == rc && err.message[0] != '\0');
        check_empty(&a);
        check_quotes_redacted(err.message, shown);
    }
    cw_redis_addr_clear(&a);
    cw_redis_addr_clear(&again);
    check_empty(&a);
    cw_free(shown);
    free(url);
    return 0;
}
