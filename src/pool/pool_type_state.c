/* What a pool says in Redis about its job types (max_concurrency, known_jobs): written
 * at start (pool_run.c) and written again where missing by maintenance. */
#include "log.h"
#include "pool.h"

#include <stdio.h>
#include <string.h>

/* Appends what a pool says about its job types: SET max_concurrency per type (at start
 * every time, last writer wins, as Go; later only where missing — after a flush, a
 * restart without persistence or a failover — so that another pool's newer setting
 * stands) and SADD known_jobs. Returns how many replies follow. */
size_t cw_pool_append_type_state(cwork_pool *p, cw_conn *c, bool only_missing, cwork_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < p->ntypes; i++) {
        char v[24];
        snprintf(v, sizeof v, "%u", p->types[i].opts.max_concurrency);
        const char *set[] = {"SET", p->types[i].keys[CW_CYCLE_MAX_CONCURRENCY], v, "NX"};
        size_t lens[] = {3, p->types[i].key_lens[CW_CYCLE_MAX_CONCURRENCY], strlen(v), 2};
        if (cw_conn_append(c, only_missing ? 4 : 3, set, lens, err) == 0) n++;
    }
    cw_buf known;
    cw_buf_init(&known);
    cw_key_known_jobs(&p->keys, &known);
    const char **sadd = cw_malloc((p->ntypes + 2) * sizeof *sadd);
    if (p->ntypes && sadd && !known.oom) {
        sadd[0] = "SADD";
        sadd[1] = known.data;
        for (size_t i = 0; i < p->ntypes; i++)
            sadd[i + 2] = p->types[i].name;
        if (cw_conn_append(c, (int)p->ntypes + 2, sadd, NULL, err) == 0) n++;
    }
    cw_free(sadd);
    cw_buf_free(&known);
    return n;
}

/* Logs an error reply of cw_pool_append_type_state's i-th command. */
void cw_pool_log_type_state_error(cwork_pool *p, size_t i, const redisReply *r)
{
    if (cw_reply_error(r))
        cw_log(CWORK_LOG_ERROR,
               i < p->ntypes ? "write_concurrency_controls_max_concurrency" : "write_known_jobs",
               "error", cw_reply_error(r), NULL);
}

int cw_pool_reassert_types(cwork_pool *p, cwork_error *err)
{
    cw_conn *c;
    int rc = cw_redis_checkout(p->redis, &c, err);
    if (rc) return rc;
    size_t n = cw_pool_append_type_state(p, c, true, err);
    for (size_t i = 0; i < n && rc == 0; i++) {
        redisReply *r = NULL;
        if ((rc = cw_conn_read(c, &r, err)) == 0) {
            cw_pool_log_type_state_error(p, i, r);
            cw_reply_free(r);
        }
    }
    cw_redis_checkin(p->redis, c);
    return rc;
}
