/* Script arguments and replies shared by the client files that run scripts
 * (client_list.c, client_run.c). */
#include "client.h"

#include "job.h"
#include "keys.h"

#include <stdio.h>
#include <string.h>

int cw_client_add_set_key(cw_argv *a, const cw_keys *k, cwork_job_set set, cwork_error *err)
{
    cw_buf key;
    cw_buf_init(&key);
    int rc = cw_client_set_key(k, set, &key, err);
    if (rc == 0) cw_argv_add_buf(a, &key);
    cw_buf_free(&key);
    return rc;
}

void cw_client_add_queues(cw_argv *a, const cw_keys *k, const cw_argv *names)
{
    cw_buf key;
    cw_buf_init(&key);
    for (size_t i = 0; i < names->n; i++) {
        cw_buf_reset(&key);
        cw_key_queue(k, &key, names->argv[i]);
        cw_argv_add_buf(a, &key);
    }
    cw_buf_reset(&key);
    cw_key_jobs_prefix(k, &key);
    cw_argv_add_buf(a, &key);
    cw_buf_free(&key);
}

int cw_client_known_names(cw_conn *c, const cw_keys *k, cw_argv *names, cwork_error *err)
{
    cw_buf key;
    cw_buf_init(&key);
    cw_key_known_jobs(k, &key);
    int rc = cw_client_smembers(c, &key, names, err);
    cw_buf_free(&key);
    return rc;
}

int cw_client_requeue_names(cw_conn *c, const cw_keys *k, cw_argv *names, cwork_error *err)
{
    cw_buf key;
    cw_buf_init(&key);
    cw_key_known_jobs(k, &key);
    uint64_t mark = cw_damage_clock();
    int rc = cw_client_smembers(c, &key, names, err);
    if (rc == 0 && cw_damage_met_since(mark)) rc = cw_damage_named(c, k, key.data, key.len, err);
    cw_buf_free(&key);
    return rc;
}

int cw_client_command_ints(cw_conn *c, int argc, const char **argv, const size_t *lens, int64_t *v,
                           size_t n, cwork_error *err)
{
    redisReply *r = NULL;
    int rc = cw_conn_command(c, argc, argv, lens, &r, err);
    if (rc == 0) rc = cw_reply_ints(r, v, n, argv[0], err);
    cw_reply_free(r);
    return rc;
}

int cw_client_delete_guards(cw_conn *c, const cw_keys *k, const redisReply *r, size_t first,
                            const char *step, cwork_error *err)
{
    int rc = 0;
    cw_buf key;
    cw_buf_init(&key);
    for (const redisReply *m; rc == 0 && (m = cw_reply_at(r, first)) != NULL; first++) {
        cwork_job *job = NULL;
        int64_t deleted;
        const char *bytes;
        size_t len;
        if (cw_reply_str(m, &bytes, &len, NULL, NULL) != 0 ||
            (rc = cw_job_decode(bytes, len, &job, err)) != 0)
            break;
        cw_buf_reset(&key);
        size_t lens[2];
        int nkeys = cw_unique_guard_keys(k, job, &key, lens, err);
        if (nkeys < 0)
            rc = nkeys;
        else if (nkeys > 0 && key.oom)
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        else if (nkeys > 0) {
            const char *argv[] = {"DEL", key.data, key.data + lens[0]};
            size_t dlens[] = {3, lens[0], lens[1]};
            rc = cw_client_command_ints(c, 1 + nkeys, argv, dlens, &deleted, 1, err);
        }
        cwork_job_free(job);
    }
    cw_buf_free(&key);
    return rc ? cw_client_fail(step, rc, err) : 0;
}
