/* Shard namespaces (sharding.h). */
#include "sharding.h"

#include <stdio.h>
#include <string.h>

/* The base name of ns: [*base, *base + *len). 0, or -1 when ns cannot be sharded. */
static int base_of(const char *ns, const char **base, size_t *len)
{
    size_t n = strlen(ns);
    if (n >= 2 && ns[0] == '{' && ns[n - 1] == '}') {
        *base = ns + 1;
        *len = n - 2;
    } else {
        *base = ns;
        *len = n;
    }
    if (*len == 0 || (*base)[*len - 1] == ':') return -1;
    for (size_t i = 0; i < *len; i++)
        if ((*base)[i] == '{' || (*base)[i] == '}') return -1;
    return 0;
}

int cw_sharding_check_ns(const char *ns, cwork_error *err)
{
    const char *base;
    size_t len;
    if (!ns || base_of(ns, &base, &len) != 0)
        return cw_error(err, CWORK_EINVAL,
                        "namespace \"%s\" cannot be sharded: it must be a plain name (app) or "
                        "one hash tag around one ({app}), not empty, with no other braces and "
                        "no ':' at the end",
                        ns ? ns : "(null)");
    return 0;
}

int cw_sharding_ns(const char *ns, unsigned i, char *out, size_t size, cwork_error *err)
{
    int rc = cw_sharding_check_ns(ns, err);
    if (rc) return rc;
    int n;
    if (i == 0) {
        n = snprintf(out, size, "%s", ns);
    } else {
        const char *base;
        size_t len;
        base_of(ns, &base, &len);
        n = snprintf(out, size, "{%.*s.%u}", (int)len, base, i);
    }
    if (n < 0 || (size_t)n >= size)
        return cw_error(err, CWORK_EINVAL, "the name of shard %u of namespace \"%s\" is too long",
                        i, ns);
    return 0;
}
