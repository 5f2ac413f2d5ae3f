/* The dashboard's throughput graph and Redis panel (read-only, any server):
 *
 *   GET /throughput?minutes=60    the per-minute counts of the last minutes (1–1440, default
 *                                 60) ending with the current one (PROTOCOL §14.2):
 *                                 {"first": the first minute's start (unix s), "step": 60,
 *                                 "processed": [n, …], "failed": [n, …]}, oldest first,
 *                                 zero-filled
 *   GET /redis_info               the namespace's Redis server: {"permitted", "version",
 *                                 "role", "maxmemory_policy", "evicts", "used_memory",
 *                                 "maxmemory", "connected_clients", "ops_per_sec",
 *                                 "uptime_s"} (numbers the server does not report are
 *                                 null); a user the ACL refuses INFO gets 200 with
 *                                 "permitted": false, so that the page still shows */
#include "web.h"

#include "gojson.h"

#include <string.h>

void cw_web_route_throughput(const web_request *req, web_response *res)
{
    char *v = NULL;
    uint64_t minutes = 60;
    int bad = cw_web_query(req, "minutes", &v) != 0 ||
              (v && v[0] && (cw_web_parse_uint(v, strlen(v), 1440, &minutes) != 0 || minutes < 1));
    cw_free(v);
    if (bad) {
        cw_web_error(res, 400, "minutes must be a whole number from 1 to 1440");
        return;
    }
    cwork_error err = {0};
    cwork_minute_stats *m = NULL;
    size_t n = 0;
    int rc = cwork_client_throughput(req->web->client, (unsigned)minutes, &m, &n, &err);
    if (rc != 0) {
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_printf(&b, "{\"first\":%lld,\"step\":60,\"processed\":[",
                  (long long)(n ? m[0].minute : 0));
    for (size_t i = 0; i < n; i++)
        cw_buf_printf(&b, "%s%lld", i ? "," : "", (long long)m[i].processed);
    cw_buf_puts(&b, "],\"failed\":[");
    for (size_t i = 0; i < n; i++)
        cw_buf_printf(&b, "%s%lld", i ? "," : "", (long long)m[i].failed);
    cw_buf_puts(&b, "]}");
    cwork_free(m);
    cw_web_ok_indented(res, &b);
}

static void put_str(cw_buf *b, const char *key, const char *v)
{
    cw_buf_printf(b, ",\"%s\":", key);
    cw_gj_encode_string(b, v, strlen(v));
}

/* -1 (not reported) as null. */
static void put_num(cw_buf *b, const char *key, int64_t v)
{
    if (v < 0)
        cw_buf_printf(b, ",\"%s\":null", key);
    else
        cw_buf_printf(b, ",\"%s\":%lld", key, (long long)v);
}

void cw_web_route_redis_info(const web_request *req, web_response *res)
{
    cwork_error err = {0};
    cwork_redis_info info;
    int rc = cwork_client_redis_info(req->web->client, &info, &err);
    if (rc != 0) {
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_printf(&b, "{\"permitted\":%s", info.permitted ? "true" : "false");
    put_str(&b, "version", info.version);
    put_str(&b, "role", info.role);
    put_str(&b, "maxmemory_policy", info.maxmemory_policy);
    cw_buf_printf(&b, ",\"evicts\":%s", info.evicts ? "true" : "false");
    put_num(&b, "used_memory", info.used_memory);
    put_num(&b, "maxmemory", info.maxmemory);
    put_num(&b, "connected_clients", info.connected_clients);
    put_num(&b, "ops_per_sec", info.ops_per_sec);
    put_num(&b, "uptime_s", info.uptime_s);
    cw_buf_putc(&b, '}');
    cw_web_ok_indented(res, &b);
}
