/* The dashboard's table of shards (read-only, any server):
 *
 *   GET /shards   how the namespace is sharded (PROTOCOL §27): {"count": S, "created":
 *                 the record's time (unix s; 0 without a record), "shards": [{"shard":
 *                 i, "ns": its namespace, "queued", "running", "retry", "scheduled",
 *                 "dead", "pools", "node": the server holding it}, …]}, one row per
 *                 shard (one for an unsharded namespace), each read through the client's
 *                 per-shard view */
#include "web.h"

#include "gojson.h"
#include "sharding.h"

#include <string.h>

/* What one shard holds, appended to b as a row. */
static int put_shard(cw_buf *b, cwork_client *shard, const char *ns, unsigned i, cwork_error *err)
{
    int64_t queued = 0, running = 0, totals[3] = {0, 0, 0};
    cwork_queue_info *q = NULL;
    size_t nq = 0;
    int rc = cwork_client_queues(shard, &q, &nq, err);
    for (size_t k = 0; rc == 0 && k < nq; k++)
        queued += q[k].count;
    cwork_queue_infos_free(q, nq);
    cwork_worker_observation *w = NULL;
    size_t nw = 0;
    if (rc == 0) rc = cwork_client_workers(shard, &w, &nw, err);
    for (size_t k = 0; rc == 0 && k < nw; k++)
        running += w[k].is_busy;
    cwork_worker_observations_free(w, nw);
    cwork_pool_heartbeat *p = NULL;
    size_t np = 0;
    if (rc == 0) rc = cwork_client_pools(shard, &p, &np, err);
    cwork_pool_heartbeats_free(p, np);
    static const cwork_job_set sets[3] = {CWORK_SET_RETRY, CWORK_SET_SCHEDULED, CWORK_SET_DEAD};
    for (int k = 0; rc == 0 && k < 3; k++) {
        cwork_list_query lq = {1, 1, NULL, false};
        cwork_listed_job *jobs = NULL;
        size_t n = 0;
        rc = cwork_client_list_page(shard, sets[k], &lq, &jobs, &n, &totals[k], err);
        cwork_listed_jobs_free(jobs, n);
    }
    if (rc) return rc;
    cw_buf_printf(b, "%s{\"shard\":%u,\"ns\":", i ? "," : "", i);
    cw_gj_encode_string(b, ns, strlen(ns));
    cw_buf_printf(b,
                  ",\"queued\":%lld,\"running\":%lld,\"retry\":%lld,\"scheduled\":%lld,"
                  "\"dead\":%lld,\"pools\":%lld,\"node\":",
                  (long long)queued, (long long)running, (long long)totals[0], (long long)totals[1],
                  (long long)totals[2], (long long)np);
    char node[160];
    cw_web_shard_node(shard, node, sizeof node);
    cw_gj_encode_string(b, node, strlen(node));
    cw_buf_putc(b, '}');
    return 0;
}

void cw_web_route_shards(const web_request *req, web_response *res)
{
    cwork_client *client = req->web->client;
    cwork_error err = {0};
    unsigned count = 0;
    int64_t created = 0;
    int rc = cwork_client_shards(client, &count, &err);
    if (rc == 0) rc = cwork_client_shards_created(client, &created, &err);
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_printf(&b, "{\"count\":%u,\"created\":%lld,\"shards\":[", count, (long long)created);
    for (unsigned i = 0; rc == 0 && i < count; i++) {
        char ns[300];
        cwork_client *shard = cwork_client_shard(client, i, &err);
        if (!shard)
            rc = err.code ? err.code : CWORK_ENOMEM;
        else if (count == 1)
            rc = put_shard(&b, shard, req->web->ns, i, &err);
        else if ((rc = cw_sharding_ns(req->web->ns, i, ns, sizeof ns, &err)) == 0)
            rc = put_shard(&b, shard, ns, i, &err);
    }
    if (rc != 0) {
        cw_buf_free(&b);
        cw_web_client_error(res, rc, &err);
        return;
    }
    cw_buf_puts(&b, "]}");
    cw_web_ok_indented(res, &b);
}
