/* ?shard=N on every route: the request sees shard N of a sharded namespace alone
 * (PROTOCOL §27), through the client's per-shard view (cwork_client_shard) — the UI's
 * "look at one shard" in every page. Without it a route sees the whole namespace. The
 * view lives for the request: the fields of the namespace's server state that routes read,
 * with the shard's client, redis handle, keys and namespace. */
#include "web.h"

#include "client.h"
#include "sharding.h"

#include <string.h>

int cw_web_shard_view(const web_request *req, cwork_web *out, web_response *res)
{
    char *value = NULL;
    if (cw_web_query(req, "shard", &value) != 0) {
        cw_web_error(res, 400, "shard is not a valid percent-encoded value");
        return -1;
    }
    if (!value) return 0;
    uint64_t i = 0;
    int bad = cw_web_parse_uint(value, strlen(value), CW_SHARDING_MAX - 1, &i);
    if (bad)
        cw_web_error(res, 400, "shard must be a shard number from 0 to %d, not \"%.40s\"",
                     CW_SHARDING_MAX - 1, value);
    cw_free(value);
    if (bad) return -1;
    cwork_error err = {0};
    cwork_client *shard = cwork_client_shard(req->web->client, (unsigned)i, &err);
    char ns[300];
    int rc = shard ? cw_sharding_ns(req->web->ns, (unsigned)i, ns, sizeof ns, &err)
                   : (err.code ? err.code : CWORK_ENOMEM);
    if (rc) {
        cw_web_client_error(res, rc, &err);
        return -1;
    }
    /* the fields routes read, one by one: the server's lock and counters are not the
     * view's to copy while other requests change them */
    const cwork_web *web = req->web;
    memset(out, 0, sizeof *out);
    out->redis = shard->redis; /* in a Cluster, the handle of the shard's slot */
    out->client = shard;
    out->pool = web->pool;
    out->flavor = web->flavor;
    out->port = web->port;
    out->loopback = web->loopback;
    memcpy(out->bound, web->bound, sizeof out->bound);
    out->base_path = web->base_path;
    out->base_redirect = web->base_redirect;
    out->read_only = web->read_only;
    out->views = web->views;
    out->n_views = web->n_views;
    out->is_view = 1;
    out->ns = cw_strdup(ns);
    if (!out->ns || cw_keys_init(&out->keys, ns) != 0) {
        cw_free(out->ns);
        cw_web_error(res, 500, "out of memory");
        return -1;
    }
    return 1;
}

void cw_web_shard_view_clear(cwork_web *view)
{
    cw_keys_clear(&view->keys);
    cw_free(view->ns);
}
