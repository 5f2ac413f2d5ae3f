/* The dashboard's Redis panel: version, memory, clients, load and role of the server that
 * holds the namespace, read from one INFO (the connection goes to that server: in a
 * Cluster, the master of the namespace's slot). The INFO text is parsed here; callers
 * get the fields, never the text. */
#include "client.h"

#include <string.h>

/* The value of "name:value" in INFO text (lines end in \r\n; "# Section" lines and blank
 * ones are skipped): *v and *vlen, or 0 when absent. */
static int info_field(const char *text, size_t len, const char *name, const char **v, size_t *vlen)
{
    size_t nlen = strlen(name);
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = eol ? eol : end;
        if (line_end > p && line_end[-1] == '\r') line_end--;
        if ((size_t)(line_end - p) > nlen && memcmp(p, name, nlen) == 0 && p[nlen] == ':') {
            *v = p + nlen + 1;
            *vlen = (size_t)(line_end - *v);
            return 1;
        }
        p = eol ? eol + 1 : end;
    }
    return 0;
}

static int64_t info_int(const char *text, size_t len, const char *name)
{
    const char *v;
    size_t vlen;
    int64_t n = -1;
    if (!info_field(text, len, name, &v, &vlen) || cw_parse_int64(v, vlen, &n) != 0) return -1;
    return n;
}

/* Copies the field into out (cut to size - 1 bytes); "" when absent. */
static void info_str(const char *text, size_t len, const char *name, char *out, size_t size)
{
    const char *v;
    size_t vlen;
    out[0] = '\0';
    if (!info_field(text, len, name, &v, &vlen)) return;
    if (vlen >= size) vlen = size - 1;
    memcpy(out, v, vlen);
    out[vlen] = '\0';
}

static void parse_info(const char *text, size_t len, cwork_redis_info *out)
{
    out->permitted = true;
    info_str(text, len, "redis_version", out->version, sizeof out->version);
    info_str(text, len, "role", out->role, sizeof out->role);
    info_str(text, len, "maxmemory_policy", out->maxmemory_policy, sizeof out->maxmemory_policy);
    out->evicts = out->maxmemory_policy[0] && strcmp(out->maxmemory_policy, "noeviction") != 0;
    out->used_memory = info_int(text, len, "used_memory");
    out->maxmemory = info_int(text, len, "maxmemory");
    out->connected_clients = info_int(text, len, "connected_clients");
    out->ops_per_sec = info_int(text, len, "instantaneous_ops_per_sec");
    out->uptime_s = info_int(text, len, "uptime_in_seconds");
}

static void clear_info(cwork_redis_info *out)
{
    memset(out, 0, sizeof *out);
    out->used_memory = out->maxmemory = out->connected_clients = -1;
    out->ops_per_sec = out->uptime_s = -1;
}

int cwork_client_redis_info(cwork_client *client, cwork_redis_info *out, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !out)
        return cw_error(err, CWORK_EINVAL, "cwork_client_redis_info: NULL argument");
    clear_info(out);
    cw_conn *c = NULL;
    redisReply *r = NULL;
    const char *argv[] = {"INFO"};
    int rc = cw_redis_checkout(client->redis, &c, err);
    /* Appended and read rather than cw_conn_command, to tell an ACL refusal (an error
     * reply starting NOPERM) from a failure. */
    if (rc == 0 && (rc = cw_conn_append(c, 1, argv, NULL, err)) == 0) rc = cw_conn_read(c, &r, err);
    if (c) cw_redis_checkin(client->redis, c);
    const char *refused = rc == 0 ? cw_reply_error(r) : NULL;
    if (refused && strncmp(refused, "NOPERM", 6) == 0) {
        cw_reply_free(r);
        return 0; /* permitted stays false */
    }
    const char *text = NULL;
    size_t len = 0;
    if (rc == 0 && refused) rc = cw_error(err, CWORK_EREDIS, "INFO: %s", refused);
    if (rc == 0) rc = cw_reply_str(r, &text, &len, "INFO", err);
    if (rc == 0) {
        parse_info(text, len, out);
        if (!out->version[0]) {
            clear_info(out);
            rc = cw_error(err, CWORK_EPROTO, "INFO: no redis_version field");
        }
    }
    cw_reply_free(r);
    return rc ? cw_client_fail("client.redis_info", rc, err) : 0;
}
