/* Damaged keys met by the admin reads (cwork_client_damage): a key of the namespace that
 * holds the wrong kind of value (WRONGTYPE) is noted here and read as empty, so that one
 * bad key does not take down every view of its namespace. The list is per thread (the
 * views run on the caller's thread, and a web server serves requests on many), bounded,
 * and each key is in it once. What a key should be comes from the doctor's table
 * (cw_doctor_classify), so that the views and the doctor never disagree. */
#include "client_doctor.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A namespace with more damaged keys than this needs the doctor, not a longer list. */
#define MAX_DAMAGED 64

typedef struct damage_list {
    cwork_damaged_key v[MAX_DAMAGED];
    uint64_t met[MAX_DAMAGED]; /* when each was last met: the clock at that note */
    uint64_t clock;            /* counts the notes, repeated ones too */
    size_t n;
} damage_list;

static pthread_key_t list_key;
static pthread_once_t list_once = PTHREAD_ONCE_INIT;
static int list_key_ok;

/* What an entry shows when even its placeholder could not be allocated (never freed). */
static const char no_text[] = "";

static void entry_clear(cwork_damaged_key *d)
{
    cw_free((char *)d->key);
    if (d->type != no_text) cw_free((char *)d->type);
    if (d->what != no_text) cw_free((char *)d->what);
    memset(d, 0, sizeof *d);
}

static void list_free(void *p)
{
    damage_list *l = p;
    for (size_t i = 0; l && i < l->n; i++)
        entry_clear(&l->v[i]);
    cw_free(l);
}

static void list_key_init(void)
{
    list_key_ok = pthread_key_create(&list_key, list_free) == 0;
}

/* The calling thread's list, created when create is set; NULL when out of memory. */
static damage_list *list_get(int create)
{
    pthread_once(&list_once, list_key_init);
    if (!list_key_ok) return NULL;
    damage_list *l = pthread_getspecific(list_key);
    if (!l && create && (l = cw_calloc(1, sizeof *l)) != NULL &&
        pthread_setspecific(list_key, l) != 0) {
        cw_free(l);
        l = NULL;
    }
    return l;
}

size_t cwork_client_damage(const cwork_damaged_key **out)
{
    damage_list *l = list_get(0);
    /* A call that failed after noting a key gave its connection back unresolved: the
     * key is still named, its types unknown. */
    for (size_t i = 0; l && i < l->n; i++) {
        cwork_damaged_key *e = &l->v[i];
        if (!e->expected) e->expected = "unknown";
        if (!e->type && !(e->type = cw_strdup("unknown"))) e->type = no_text;
        if (!e->what && !(e->what = cw_strdup("not checked"))) e->what = no_text;
    }
    if (out) *out = l && l->n ? l->v : NULL;
    return l ? l->n : 0;
}

void cwork_client_damage_clear(void)
{
    damage_list *l = list_get(0);
    for (size_t i = 0; l && i < l->n; i++)
        entry_clear(&l->v[i]);
    if (l) l->n = 0;
}

int cw_client_wrong_type(const redisReply *r)
{
    const char *refused = cw_reply_error(r);
    return refused && strncmp(refused, "WRONGTYPE", 9) == 0;
}

int cw_damage_note(const char *key, size_t len)
{
    damage_list *l = list_get(1);
    if (!l) return CWORK_ENOMEM;
    l->clock++;
    for (size_t i = 0; i < l->n; i++)
        if (strlen(l->v[i].key) == len && memcmp(l->v[i].key, key, len) == 0) {
            l->met[i] = l->clock;
            return 0;
        }
    if (l->n == MAX_DAMAGED) return 0; /* the doctor lists the rest */
    char *copy = cw_strndup(key, len);
    if (!copy) return CWORK_ENOMEM;
    l->met[l->n] = l->clock;
    l->v[l->n++].key = copy;
    return 0;
}

uint64_t cw_damage_clock(void)
{
    damage_list *l = list_get(0);
    return l ? l->clock : 0;
}

const char *cw_damage_met_since(uint64_t mark)
{
    damage_list *l = list_get(0);
    const char *first = NULL;
    uint64_t when = UINT64_MAX;
    for (size_t i = 0; l && i < l->n; i++)
        if (l->met[i] > mark && l->met[i] < when) {
            first = l->v[i].key;
            when = l->met[i];
        }
    return first;
}

int cw_damage_named(cw_conn *c, const cw_keys *k, const char *key, size_t len, cwork_error *err)
{
    cw_damage_note(key, len); /* out of memory: the line below names it all the same */
    cw_damage_resolve(c, k);
    return cw_damage_error(err, CWORK_ETYPE, key, len);
}

int cw_damage_reply(redisReply **r, const char *key, size_t len)
{
    if (!cw_client_wrong_type(*r)) return 0;
    cw_reply_free(*r);
    *r = NULL;
    cw_damage_note(key, len); /* out of memory: the key reads as empty, unnamed */
    return 1;
}

/* What a key of class cls (of job name name) is for, as the views' warnings say it. */
static char *purpose(const cw_doctor_key *d)
{
    static const struct {
        cw_doctor_class cls;
        const char *text;
    } texts[] = {
        {CW_DK_KNOWN_JOBS, "the set of job names"},
        {CW_DK_QUEUE, "queue of %s"},
        {CW_DK_INPROGRESS, "in-progress list of %s"},
        {CW_DK_PAUSED, "pause flag of %s"},
        {CW_DK_LOCK, "running count of %s"},
        {CW_DK_LOCK_INFO, "running count per pool of %s"},
        {CW_DK_MAX_CONCURRENCY, "concurrency limit of %s"},
        {CW_DK_RETRY, "the retry set"},
        {CW_DK_DEAD, "the dead set"},
        {CW_DK_SCHEDULED, "the scheduled set"},
        {CW_DK_WORKER, "a worker's observation"},
        {CW_DK_WORKER_POOLS, "the set of worker pools"},
        {CW_DK_POOL, "a worker pool's heartbeat"},
        {CW_DK_UNIQUE, "a unique job's guard"},
        {CW_DK_LAST_PERIODIC, "the last periodic enqueue"},
        {CW_DK_REAPER_LOCK, "the reaper's lock"},
        {CW_DK_STAT, "a day's counts"},
        {CW_DK_PERIODIC, "the periodic schedules"},
        {CW_DK_RATE_LIMITS, "the rate limits"},
        {CW_DK_RATE_LIMIT, "a rate limit's window"},
        {CW_DK_CANCELLED, "the cancelled jobs"},
        {CW_DK_RESULT, "a job's result"},
        {CW_DK_SUCCEEDED, "a name's succeeded jobs"},
        {CW_DK_BATCH, "a batch"},
        {CW_DK_BATCH_JOBS, "a batch's jobs"},
        {CW_DK_SUPERSEDED, "the superseded jobs"},
        {CW_DK_FAILURES, "the failures kept for a job's story"},
        {CW_DK_SHARDS, "the shard record"},
        {CW_DK_SHARD_PINNED, "the job names pinned to one shard"},
        {CW_DK_SHARD_MOVING, "jobs of %s moving to their shard"},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        if (texts[i].cls != d->cls) continue;
        char text[400];
        snprintf(text, sizeof text, texts[i].text, d->name ? d->name : "");
        return cw_strdup(text);
    }
    return cw_strdup("a key cwork does not know");
}

void cw_damage_resolve(cw_conn *c, const cw_keys *k)
{
    damage_list *l = list_get(0);
    for (size_t i = 0; l && i < l->n; i++) {
        cwork_damaged_key *e = &l->v[i];
        if (e->type) continue;
        size_t len = strlen(e->key);
        cw_doctor_key d;
        if (!e->what && cw_doctor_classify(k, e->key, len, &d) == 0) {
            e->expected = d.type ? d.type : "unknown";
            e->what = purpose(&d);
            cw_free(d.name);
        }
        if (!e->expected) e->expected = "unknown";
        const char *argv[] = {"TYPE", e->key};
        size_t lens[] = {4, len};
        redisReply *r = NULL;
        static const char *const types[] = {"string", "list",   "set", "zset",
                                            "hash",   "stream", "none"};
        const char *type = "unknown";
        cwork_error err = {0};
        /* TYPE fails only with the connection (or an ACL): the key stays named. */
        if (c && cw_conn_command(c, 2, argv, lens, &r, &err) == 0)
            for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
                if (cw_reply_status(r, types[t], NULL, NULL) == 0) type = types[t];
        e->type = cw_strdup(type);
        cw_reply_free(r);
    }
}

int cw_damage_error(cwork_error *err, int rc, const char *key, size_t len)
{
    damage_list *l = list_get(0);
    for (size_t i = 0; l && i < l->n; i++) {
        const cwork_damaged_key *e = &l->v[i];
        if (strlen(e->key) != len || memcmp(e->key, key, len) != 0 || !e->type) continue;
        return cw_error(err, rc, "%s is a %s, expected a %s (%s)", e->key, e->type, e->expected,
                        e->what ? e->what : "");
    }
    return cw_error(err, rc, "%.*s holds the wrong kind of value", (int)len, key);
}

int cw_client_read_command(cw_conn *c, int argc, const char **argv, const size_t *lens,
                           const char *key, size_t key_len, redisReply **out, cwork_error *err)
{
    *out = NULL;
    int rc = cw_conn_append(c, argc, argv, lens, err);
    if (rc == 0) rc = cw_conn_read(c, out, err);
    return rc ? rc : cw_client_check_reply(out, key, key_len, err);
}

int cw_client_read_damaged(cw_conn *c, size_t n, redisReply **replies, const char *const *keys,
                           const size_t *lens, cwork_error *err)
{
    memset(replies, 0, n * sizeof *replies);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = cw_conn_read(c, &replies[i], err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = cw_client_check_reply(&replies[i], keys[i], lens[i], err);
    if (rc) cw_client_free_replies(replies, n);
    return rc;
}

int cw_client_check_reply(redisReply **r, const char *key, size_t key_len, cwork_error *err)
{
    if (cw_damage_reply(r, key, key_len)) return 0;
    const char *refused = cw_reply_error(*r);
    if (!refused) return 0;
    int rc = cw_error(err, CWORK_EREDIS, "redis: %s", refused);
    cw_reply_free(*r);
    *r = NULL;
    return rc;
}

int cw_client_explain_wrongtype(cw_conn *c, const cw_keys *k, cwork_job_set set, int rc,
                                cwork_error *err)
{
    if (rc != CWORK_EREDIS || !err || !strstr(err->message, "WRONGTYPE") || !c) return rc;
    cw_buf keys[2];
    cw_buf_init(&keys[0]);
    cw_buf_init(&keys[1]);
    cw_key_known_jobs(k, &keys[1]);
    if (set && cw_client_set_key(k, set, &keys[0], NULL) != 0) set = 0;
    const cw_buf *first = NULL;
    for (int i = set ? 0 : 1; i < 2; i++) {
        if (keys[i].oom) continue;
        cw_doctor_key d;
        if (cw_doctor_classify(k, keys[i].data, keys[i].len, &d) != 0) continue;
        cw_free(d.name);
        const char *argv[] = {"TYPE", keys[i].data};
        size_t lens[] = {4, keys[i].len};
        redisReply *r = NULL;
        int wrong = cw_conn_command(c, 2, argv, lens, &r, NULL) == 0 && d.type &&
                    cw_reply_status(r, d.type, NULL, NULL) != 0 &&
                    cw_reply_status(r, "none", NULL, NULL) != 0;
        cw_reply_free(r);
        if (wrong && cw_damage_note(keys[i].data, keys[i].len) == 0 && !first) first = &keys[i];
    }
    if (first) {
        cw_damage_resolve(c, k);
        rc = cw_damage_error(err, CWORK_ETYPE, first->data, first->len);
    }
    cw_buf_free(&keys[0]);
    cw_buf_free(&keys[1]);
    return rc;
}
