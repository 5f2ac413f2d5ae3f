/* Script arguments and replies shared by the client files that run scripts
 * (client_list.c, client_run.c). */
#include "client.h"

#include "job.h"
#include "unique_guard.h"

#include <stdio.h>
#include <string.h>

void cw_client_arg_end(cw_client_args *a)
{
    cw_buf_putc(&a->buf, '\0');
    a->n++;
}

void cw_client_arg_str(cw_client_args *a, const char *s)
{
    cw_buf_puts(&a->buf, s);
    cw_client_arg_end(a);
}

void cw_client_arg_int(cw_client_args *a, int64_t v)
{
    cw_buf_put_int64(&a->buf, v);
    cw_client_arg_end(a);
}

void cw_client_arg_queues(cw_client_args *a, const cw_keys *k, const cw_strv *names)
{
    for (size_t i = 0; i < names->n; i++) {
        cw_key_queue(k, &a->buf, names->items[i]);
        cw_client_arg_end(a);
    }
    cw_key_jobs_prefix(k, &a->buf);
    cw_client_arg_end(a);
}

int cw_client_arg_finish(cw_client_args *a, cwork_error *err)
{
    if (!a->buf.oom) {
        a->argv = cw_malloc(a->n * sizeof *a->argv);
        a->lens = cw_malloc(a->n * sizeof *a->lens);
    }
    if (a->buf.oom || !a->argv || !a->lens) return cw_error(err, CWORK_ENOMEM, "out of memory");
    const char *p = a->buf.data;
    for (size_t i = 0; i < a->n; i++) {
        a->argv[i] = p;
        a->lens[i] = strlen(p);
        p += a->lens[i] + 1;
    }
    return 0;
}

void cw_client_arg_free(cw_client_args *a)
{
    cw_buf_free(&a->buf);
    cw_free(a->argv);
    cw_free(a->lens);
}

void cw_client_arg_set(cw_client_args *a, size_t i, char *buf, size_t size, int64_t v)
{
    snprintf(buf, size, "%lld", (long long)v);
    a->argv[i] = buf;
    a->lens[i] = strlen(buf);
}

int cw_client_known_names(cw_conn *c, const cw_keys *k, cw_strv *names, cwork_error *err)
{
    cw_buf key;
    cw_buf_init(&key);
    cw_key_known_jobs(k, &key);
    int rc = cw_client_smembers(c, &key, names, err);
    cw_buf_free(&key);
    return rc;
}

int cw_client_int_reply(redisReply *r, int64_t *v, size_t n, cwork_error *err)
{
    int rc = 0;
    if (n == 1 && r->type == REDIS_REPLY_INTEGER)
        v[0] = r->integer;
    else if (r->type != REDIS_REPLY_ARRAY || r->elements < n)
        rc = cw_error(err, CWORK_EPROTO, "unexpected reply from Redis");
    for (size_t i = 0; rc == 0 && r->type == REDIS_REPLY_ARRAY && i < n; i++) {
        if (r->element[i]->type != REDIS_REPLY_INTEGER)
            rc = cw_error(err, CWORK_EPROTO, "unexpected reply from Redis");
        else
            v[i] = r->element[i]->integer;
    }
    freeReplyObject(r);
    return rc;
}

int cw_client_command_ints(cw_conn *c, int argc, const char **argv, const size_t *lens,
                           int64_t *v, size_t n, cwork_error *err)
{
    redisReply *r = NULL;
    int rc = cw_conn_command(c, argc, argv, lens, &r, err);
    return rc ? rc : cw_client_int_reply(r, v, n, err);
}

int cw_client_delete_guards(cw_conn *c, const cw_keys *k, const redisReply *r, size_t first,
                            const char *step, cwork_error *err)
{
    int rc = 0;
    cw_buf key;
    cw_buf_init(&key);
    for (size_t i = first; rc == 0 && i < r->elements; i++) {
        cwork_job *job = NULL;
        int64_t deleted;
        const redisReply *m = r->element[i];
        if (m->type != REDIS_REPLY_STRING || (rc = cw_job_decode(m->str, m->len, &job, err)) != 0)
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
