/* The query parameters of a Redis URL: TLS files and names, the sentinels' own
 * credentials, replica acknowledgement, the namespace's shard count, and db= of unix
 * sockets. A parameter given
 * twice takes its last value. */
#include "redis_url_impl.h"

#include <limits.h>
#include <string.h>

typedef enum param_kind { P_STRING, P_BOOL, P_COUNT, P_MS, P_DB, P_SHARDS } param_kind;

typedef struct param {
    const char *name;
    param_kind kind;
    size_t offset; /* of the field in cw_redis_addr */
} param;

#define FIELD(f) offsetof(cw_redis_addr, f)

static const param params[] = {
    {"ca", P_STRING, FIELD(tls_ca)},
    {"cert", P_STRING, FIELD(tls_cert)},
    {"key", P_STRING, FIELD(tls_key)},
    {"sni", P_STRING, FIELD(tls_sni)},
    {"verify", P_BOOL, FIELD(tls_verify)},
    {"sentinel_user", P_STRING, FIELD(sentinel_user)},
    {"sentinel_password", P_STRING, FIELD(sentinel_password)},
    {"min_replicas", P_COUNT, FIELD(min_replicas)},
    {"min_replicas_timeout_ms", P_MS, FIELD(min_replicas_timeout_ms)},
    {"db", P_DB, FIELD(db)},
    {"shards", P_SHARDS, FIELD(shards)},
};

/* A reason naming the parameter, e.g. "verify= must be 0 or 1". */
static int bad_value(cw_url_parse *pc, const char *name, const char *must)
{
    char reason[128];
    snprintf(reason, sizeof reason, "%s= %s", name, must);
    return cw_url_fail(pc, CWORK_EINVAL, reason);
}

static int set_param(cw_url_parse *pc, const param *p, const char *v)
{
    void *field = (char *)pc->out + p->offset;
    size_t n = strlen(v);
    long num;
    switch (p->kind) {
    case P_STRING: {
        if (n == 0) return bad_value(pc, p->name, "needs a value");
        char *copy = cw_strdup(v);
        if (!copy) return cw_error(pc->err, CWORK_ENOMEM, "out of memory");
        cw_free(*(char **)field);
        *(char **)field = copy;
        return 0;
    }
    case P_BOOL:
        if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0 || strcmp(v, "no") == 0)
            *(int *)field = 0;
        else if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 || strcmp(v, "yes") == 0)
            *(int *)field = 1;
        else
            return bad_value(pc, p->name, "must be 0 or 1");
        return 0;
    case P_COUNT:
        if ((num = cw_url_number(v, n, 0, 1000)) < 0)
            return bad_value(pc, p->name, "must be a number of replicas (0 to 1000)");
        *(int *)field = (int)num;
        return 0;
    case P_MS:
        if ((num = cw_url_number(v, n, 1, INT_MAX)) < 0)
            return bad_value(pc, p->name, "must be a number of milliseconds > 0");
        *(int *)field = (int)num;
        return 0;
    case P_DB:
        if ((num = cw_url_number(v, n, 0, INT_MAX)) < 0)
            return bad_value(pc, p->name, "must be a database number");
        *(int *)field = (int)num;
        return 0;
    case P_SHARDS:
        if ((num = cw_url_number(v, n, 1, CW_REDIS_MAX_SHARDS)) < 0)
            return bad_value(pc, p->name, "must be a number of shards (1 to 1024)");
        *(int *)field = (int)num;
        return 0;
    }
    return 0;
}

/* One name=value pair of length n at q. */
static int parse_pair(cw_url_parse *pc, const char *q, size_t n)
{
    const char *eq = memchr(q, '=', n);
    size_t klen = eq ? (size_t)(eq - q) : n;
    const param *p = NULL;
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++)
        if (strlen(params[i].name) == klen && memcmp(params[i].name, q, klen) == 0) p = &params[i];
    /* db= belongs to unix sockets; redis:// takes its database from the path and, as
     * Go does, ignores it in the query. */
    int known = p && (p->kind != P_DB || pc->out->unix_path);
    if (!known) {
        if (!pc->strict) return 0;
        char reason[96];
        snprintf(reason, sizeof reason, "unknown parameter \"%.*s\"%s",
                 (int)(klen > 40 ? 40 : klen), q, p ? " (the database is the path: /3)" : "");
        return cw_url_fail(pc, CWORK_EINVAL, reason);
    }
    if (!eq) return bad_value(pc, p->name, "needs a value");
    char *value;
    int rc = cw_url_decode(pc, eq + 1, n - klen - 1, "query", &value);
    if (rc) return rc;
    rc = set_param(pc, p, value);
    cw_free(value);
    return rc;
}

int cw_url_parse_query(cw_url_parse *pc, const char *q)
{
    for (;;) {
        size_t n = strcspn(q, "&#");
        if (n) {
            int rc = parse_pair(pc, q, n);
            if (rc) return rc;
        }
        if (q[n] != '&') return 0;
        q += n + 1;
    }
}
