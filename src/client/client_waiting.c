/* The admin client's deleting of single jobs waiting in a queue (the web UI's queue
 * page, `cwork queue delete`): client_queue_delete.lua finds each job by id and takes
 * out its exact bytes in one step; this file decides which part of the queue each
 * script searches, so that the work stays bounded on a queue of millions. */
#include "client.h"

#include "scripts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Listed jobs searched by one script: those whose places lie within this many of the
 * first one's (a page of the UI), at most this many of them. */
#define GROUP_SPAN 1000
#define GROUP_MAX 1000

/* A job asked for: its place and its index among the caller's jobs. */
typedef struct placed {
    int64_t place;
    size_t i;
} placed;

/* The state of one call: the queue, the jobs asked for and what became of them. */
typedef struct waiting_call {
    cw_conn *c;
    const cw_keys *keys;
    const char *key;
    const cwork_waiting_ref *jobs;
    unsigned char *deleted; /* per job: 1 once deleted */
    size_t done;
} waiting_call;

/* Runs the script over LRANGE part [start, stop] for the jobs picked[0..n); marks what
 * it deleted, deletes the guards of deleted unique jobs. *looked and *len (may be NULL)
 * receive the entries looked at and the queue's length before. */
static int delete_in_part(waiting_call *w, int64_t start, int64_t stop, const placed *picked,
                          size_t n, int64_t *looked, int64_t *len, cwork_error *err)
{
    cw_argv a = {0};
    cw_argv_add_str(&a, w->key);
    cw_argv_add_int(&a, start);
    cw_argv_add_int(&a, stop);
    for (size_t i = 0; i < n; i++) {
        cw_argv_add_int(&a, picked[i].place);
        cw_argv_add_str(&a, w->jobs[picked[i].i].id);
    }
    int rc = cw_argv_check(&a, err);
    redisReply *r = NULL;
    if (rc == 0)
        rc = cw_conn_eval(w->c, &cw_script_client_queue_delete, 1, (int)(2 + 2 * n), a.argv, a.lens,
                          &r, err);
    /* {entries looked at, the queue's length before, per job 1 when deleted, the bytes of
     * deleted unique jobs…}, or {-1, the key's type} when it holds no list */
    const char *what = "queue delete script";
    int64_t head[2] = {0, 0};
    if (rc == 0) rc = cw_reply_at_int(r, 0, &head[0], what, err);
    if (rc == 0 && head[0] < 0) {
        const char *kind = cw_reply_text(cw_reply_at(r, 1));
        rc = cw_error(err, CWORK_ETYPE, "%s holds a %s, not a queue: left as it is", w->key,
                      *kind ? kind : "value of another type");
    } else if (rc == 0) {
        rc = cw_reply_ints(r, head, 2, what, err);
    }
    if (rc == 0) rc = cw_reply_array(r, 2 + n, NULL, what, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int64_t flag = 0;
        rc = cw_reply_at_int(r, 2 + i, &flag, what, err);
        if (rc == 0 && flag == 1) {
            w->deleted[picked[i].i] = 1;
            w->done++;
        }
    }
    if (rc == 0) {
        if (looked) *looked = head[0];
        if (len) *len = head[1];
        rc = cw_client_delete_guards(w->c, w->keys, r, 2 + n, "client.delete_waiting.unique", err);
    }
    cw_reply_free(r);
    cw_argv_free(&a);
    return rc;
}

static int by_place(const void *a, const void *b)
{
    const placed *x = a, *y = b;
    if (x->place != y->place) return x->place < y->place ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The jobs with a place, in groups of nearby places: each group one script over its
 * places widened by the look-back and look-ahead (LRANGE from the right end). */
static int delete_listed(waiting_call *w, const placed *order, size_t n, cwork_error *err)
{
    int rc = 0;
    for (size_t first = 0; rc == 0 && first < n;) {
        size_t end = first + 1;
        int64_t low = order[first].place;
        while (end < n && end - first < GROUP_MAX && order[end].place - low <= GROUP_SPAN)
            end++;
        int64_t high = order[end - 1].place;
        int64_t from = low > CWORK_WAITING_LOOK_BACK ? low - CWORK_WAITING_LOOK_BACK : 0;
        int64_t to = high > INT64_MAX - CWORK_WAITING_LOOK_AHEAD - 1
                         ? INT64_MAX - 1
                         : high + CWORK_WAITING_LOOK_AHEAD;
        rc = delete_in_part(w, -(to + 1), -(from + 1), order + first, end - first, NULL, NULL, err);
        first = end;
    }
    return rc;
}

/* The jobs of unknown place: the whole queue from its back (left) end, CW_CLIENT_BATCH
 * entries per script, until every one is found or the queue ends. Jobs added meanwhile
 * join at the back and only push entries further along, so none is passed over; the
 * bound from the first length guards against a queue that grows faster than the walk. */
static int delete_anywhere(waiting_call *w, placed *missing, size_t n, cwork_error *err)
{
    int rc = 0;
    int64_t from = 0, bound = 1;
    for (int64_t step = 0; rc == 0 && n > 0 && step < bound; step++) {
        int64_t looked = 0, len = 0;
        size_t before = w->done;
        rc = delete_in_part(w, from, from + CW_CLIENT_BATCH - 1, missing, n, &looked, &len, err);
        if (step == 0) bound = len / CW_CLIENT_BATCH + 2;
        /* entries deleted in this part no longer push the rest along */
        from += looked - (int64_t)(w->done - before);
        size_t left = 0;
        for (size_t i = 0; i < n; i++)
            if (!w->deleted[missing[i].i]) missing[left++] = missing[i];
        n = left;
        if (looked < CW_CLIENT_BATCH) break;
    }
    return rc;
}

int cwork_client_delete_waiting(cwork_client *client, const char *name,
                                const cwork_waiting_ref *jobs, size_t n, size_t *done,
                                size_t *unchanged, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (done) *done = 0;
    if (unchanged) *unchanged = 0;
    int bad = !client || !name || (!jobs && n > 0);
    for (size_t i = 0; !bad && i < n; i++)
        bad = !jobs[i].id;
    if (bad) return cw_error(err, CWORK_EINVAL, "cwork_client_delete_waiting: NULL argument");
    if (n == 0) return 0;
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards
                          : cw_shards_delete_waiting(client, (unsigned)shards, name, jobs, n, done,
                                                     unchanged, err);
    cw_buf key;
    cw_buf_init(&key);
    cw_key_queue(&client->keys, &key, name);
    waiting_call w = {NULL, &client->keys, key.data, jobs, cw_calloc(n, 1), 0};
    placed *order = cw_malloc(n * sizeof *order);
    int rc = key.oom || !w.deleted || !order ? cw_error(err, CWORK_ENOMEM, "out of memory")
                                             : cw_redis_checkout(client->redis, &w.c, err);
    size_t listed = 0, unplaced = 0;
    if (rc == 0) {
        /* listed jobs first (sorted by place), those of unknown place at the end */
        for (size_t i = 0; i < n; i++)
            if (jobs[i].place >= 0) order[listed++] = (placed){jobs[i].place, i};
        for (size_t i = 0; i < n; i++)
            if (jobs[i].place < 0) order[listed + unplaced++] = (placed){-1, i};
        qsort(order, listed, sizeof *order, by_place);
        rc = delete_listed(&w, order, listed, err);
    }
    if (rc == 0) rc = delete_anywhere(&w, order + listed, unplaced, err);
    if (w.c) cw_redis_checkin(client->redis, w.c);
    size_t missed = 0;
    const char *first_missed = NULL;
    int first_listed = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (w.deleted[i]) continue;
        if (missed++ == 0) {
            first_missed = jobs[i].id;
            first_listed = jobs[i].place >= 0;
        }
    }
    if (rc == 0 && missed > 0)
        rc = first_listed
                 ? cw_error(err, CWORK_ENOTFOUND,
                            "job %s is no longer waiting in queue %s near where it was listed: "
                            "a pool may have taken it to run",
                            first_missed, name)
                 : cw_error(err, CWORK_ENOTFOUND, "no job %s is waiting in queue %s", first_missed,
                            name);
    if (done) *done = w.done;
    if (unchanged) *unchanged = rc == 0 || rc == CWORK_ENOTFOUND ? missed : 0;
    cw_free(order);
    cw_free(w.deleted);
    cw_buf_free(&key);
    if (rc != 0 && rc != CWORK_ENOTFOUND) return cw_client_fail("client.delete_waiting", rc, err);
    return rc;
}
