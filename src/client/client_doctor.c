/* The namespace doctor (PROTOCOL §25): reads every key of a namespace, reports what
 * does not match PROTOCOL, and with CWORK_DOCTOR_REPAIR repairs it one finding at a
 * time (client_doctor_repair.c). A damaged key is a finding, never an error: every
 * check reads a key only once its type is known to be the documented one. */
#include "client_doctor.h"

#include "gojson.h"
#include "log.h"
#include "sharding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A heartbeat further ahead of Redis' clock than this is from the future: clocks of a
 * fleet differ by far less, and such a beat keeps every reaper away from its pool. */
#define FUTURE_BEAT_S 60
/* Published periodic schedules older than this are no pool's any more (PROTOCOL §14.7). */
#define PUBLISHED_FRESH_S 600

typedef struct entry {
    cw_doctor_key d;
    char type[8];
    int ok; /* the documented type */
} entry;

typedef struct scan_state {
    cw_argv keys;
    entry *e;
    size_t n;
} scan_state;

static int oom(cwork_error *err)
{
    return cw_error(err, CWORK_ENOMEM, "out of memory");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every key of the namespace (SCAN MATCH <prefix>* COUNT 1000), each once, and its type
 * (TYPE pipelined 1000 at a time). */
static int scan_namespace(cw_doctor *d, scan_state *s, cwork_error *err)
{
    cw_buf match;
    cw_buf_init(&match);
    for (size_t i = 0; i < d->k->prefix_len; i++) {
        if (strchr("*?[]\\", d->k->prefix[i])) cw_buf_putc(&match, '\\');
        cw_buf_putc(&match, d->k->prefix[i]);
    }
    cw_buf_putc(&match, '*');
    if (match.oom) return oom(err);
    cw_argv found;
    cw_argv_init(&found);
    char cursor[32] = "0";
    int rc = 0;
    do {
        const char *sa[] = {"SCAN", cursor, "MATCH", match.data, "COUNT", "1000"};
        size_t sl[] = {4, strlen(cursor), 5, match.len, 5, 4};
        redisReply *r = NULL;
        const char *next = NULL;
        rc = cw_conn_command(d->c, 6, sa, sl, &r, err);
        if (rc == 0) rc = cw_reply_at_str(r, 0, &next, NULL, "SCAN", err);
        if (rc == 0) rc = cw_reply_strings(cw_reply_at(r, 1), &found, "SCAN", err);
        if (rc == 0) snprintf(cursor, sizeof cursor, "%s", next);
        cw_reply_free(r);
    } while (rc == 0 && strcmp(cursor, "0") != 0);
    cw_buf_free(&match);
    if (rc == 0) {
        cw_argv_sort(&found);
        for (size_t i = 0; i < found.n; i++)
            if (i == 0 || strcmp(found.argv[i], found.argv[i - 1]) != 0)
                cw_argv_add(&s->keys, found.argv[i], found.lens[i]);
        if (s->keys.oom) rc = oom(err);
    }
    cw_argv_free(&found);
    if (rc || s->keys.n == 0) return rc;
    s->e = cw_calloc(s->keys.n, sizeof *s->e);
    if (!s->e) return oom(err);
    s->n = s->keys.n;
    for (size_t at = 0; rc == 0 && at < s->n; at += CW_CLIENT_BATCH) {
        size_t end = at + CW_CLIENT_BATCH < s->n ? at + CW_CLIENT_BATCH : s->n;
        for (size_t i = at; rc == 0 && i < end; i++) {
            const char *ta[] = {"TYPE", s->keys.argv[i]};
            size_t tl[] = {4, s->keys.lens[i]};
            rc = cw_conn_append(d->c, 2, ta, tl, err);
        }
        for (size_t i = at; rc == 0 && i < end; i++) {
            redisReply *r = NULL;
            rc = cw_conn_read(d->c, &r, err);
            if (rc == 0 && cw_reply_error(r))
                rc = cw_error(err, CWORK_EREDIS, "TYPE %s: %s", s->keys.argv[i], cw_reply_error(r));
            if (rc == 0) snprintf(s->e[i].type, sizeof s->e[i].type, "%s", cw_reply_text(r));
            cw_reply_free(r);
        }
    }
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        entry *e = &s->e[i];
        if (cw_doctor_classify(d->k, s->keys.argv[i], s->keys.lens[i], &e->d)) return oom(err);
        e->ok = e->d.type && !strcmp(e->type, e->d.type);
    }
    return rc;
}

static void scan_free(scan_state *s)
{
    for (size_t i = 0; i < s->n; i++)
        cw_free(s->e[i].d.name);
    cw_free(s->e);
    cw_argv_free(&s->keys);
}

/* Redis' clock, Unix seconds: the doctor judges heartbeats by the clock every pool
 * shares. */
static int redis_now(cw_doctor *d, cwork_error *err)
{
    redisReply *r = NULL;
    const char *argv[] = {"TIME"};
    size_t lens[] = {4};
    const char *sec = NULL;
    int rc = cw_conn_command(d->c, 1, argv, lens, &r, err);
    if (rc == 0) rc = cw_reply_at_str(r, 0, &sec, NULL, "TIME", err);
    if (rc == 0) d->now = strtoll(sec, NULL, 10);
    cw_reply_free(r);
    return rc;
}

/* The type of one key ("none" when missing), into type. */
static int key_type(cw_doctor *d, const cw_buf *key, char type[8], cwork_error *err)
{
    redisReply *r = NULL;
    const char *argv[] = {"TYPE", key->data};
    size_t lens[] = {4, key->len};
    int rc = cw_conn_command(d->c, 2, argv, lens, &r, err);
    if (rc == 0) snprintf(type, 8, "%s", cw_reply_text(r));
    cw_reply_free(r);
    return rc;
}

/* Runs one command on a key and returns its reply (the caller frees it). */
static int key_command(cw_doctor *d, const char *cmd, const char *key, size_t key_len,
                       const char *arg, redisReply **r, cwork_error *err)
{
    const char *argv[] = {cmd, key, arg};
    size_t lens[] = {strlen(cmd), key_len, arg ? strlen(arg) : 0};
    return cw_conn_command(d->c, arg ? 3 : 2, argv, lens, r, err);
}

/* ---------------------------------------------------------------- types */

/* Whether a hash at a unique guard's key is a grow's forwarding marker (PROTOCOL §27.5):
 * its one field `cwork` holds CW_SHARDING_FORWARD_MARK. It is a guard to enqueuers still
 * on the old shard count and expires with the grow's window: not damage, and renaming
 * it away would let such an enqueuer make a second job. 1, 0, or an I/O error. */
static int is_marker(cw_doctor *d, const scan_state *s, size_t i, cwork_error *err)
{
    if (s->e[i].d.cls != CW_DK_UNIQUE || strcmp(s->e[i].type, "hash") != 0) return 0;
    redisReply *r = NULL;
    int rc = key_command(d, "HGETALL", s->keys.argv[i], s->keys.lens[i], NULL, &r, err);
    const redisReply *f = cw_reply_at(r, 0), *v = cw_reply_at(r, 1);
    int marker = rc == 0 && cw_reply_is_array(r) && r->elements == 2 && cw_reply_is_str(f) &&
                 cw_reply_is_str(v) && !strcmp(cw_reply_text(f), "cwork") &&
                 !strcmp(cw_reply_text(v), CW_SHARDING_FORWARD_MARK);
    cw_reply_free(r);
    return rc ? rc : marker;
}

static int check_types(cw_doctor *d, scan_state *s, cwork_error *err)
{
    long long markers = 0;
    for (size_t i = 0; i < s->n; i++) {
        entry *e = &s->e[i];
        if (!e->d.type || e->ok || !strcmp(e->type, "none")) continue;
        int marker = is_marker(d, s, i, err);
        if (marker < 0) return marker;
        if (marker) {
            markers++;
            continue;
        }
        cw_buf q;
        cw_buf_init(&q);
        cw_doctor_quarantine_key(d->k, s->keys.argv[i], &q);
        char action[600];
        snprintf(action, sizeof action, "rename it to %s (its content kept, no TTL)",
                 q.oom ? "its quarantine key" : q.data);
        cw_buf_free(&q);
        int rc = cw_doctor_add(d, CWORK_DOCTOR_WRONG_TYPE, s->keys.argv[i], NULL, 0, e->type,
                               action, "a %s where PROTOCOL has a %s", e->type, e->d.type);
        if (rc) return rc;
    }
    if (markers) {
        char n[24];
        snprintf(n, sizeof n, "%lld", markers);
        cw_log(CWORK_LOG_INFO, "client.doctor.forwarding_markers", "prefix", d->k->prefix, "count",
               n, "note", "a grow's guards in the old shards (PROTOCOL §27.5): left alone", NULL);
    }
    return 0;
}

/* ---------------------------------------------------------------- pools */

static int check_heartbeats(cw_doctor *d, scan_state *s, cwork_error *err)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->e[i].d.cls != CW_DK_POOL || !s->e[i].ok) continue;
        redisReply *r = NULL;
        const char *v = NULL;
        int rc = key_command(d, "HGET", s->keys.argv[i], s->keys.lens[i], "heartbeat_at", &r, err);
        if (rc == 0) rc = cw_reply_str_or_nil(r, &v, NULL, "HGET", err);
        if (rc == 0 && v) {
            char *end = NULL;
            long long at = strtoll(v, &end, 10);
            int number = *v && !*end;
            if (!number)
                rc = cw_doctor_add(
                    d, CWORK_DOCTOR_FUTURE_HEARTBEAT, s->keys.argv[i], NULL, 0, v,
                    "set heartbeat_at to now (a live pool rewrites it at its next beat)",
                    "heartbeat_at \"%.64s\" is no number: every reaper cycle fails on it", v);
            else if (at > d->now + FUTURE_BEAT_S)
                rc = cw_doctor_add(
                    d, CWORK_DOCTOR_FUTURE_HEARTBEAT, s->keys.argv[i], NULL, 0, v,
                    "set heartbeat_at to now (a live pool rewrites it at its next beat)",
                    "heartbeat_at is %lld s ahead of Redis' clock: no reaper takes "
                    "this pool's jobs back while it lasts",
                    at - (long long)d->now);
        }
        cw_reply_free(r);
        if (rc) return rc;
    }
    return 0;
}

static int check_orphans(cw_doctor *d, scan_state *s, cwork_error *err)
{
    cw_buf hb, q;
    cw_buf_init(&hb), cw_buf_init(&q);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        entry *e = &s->e[i];
        if (e->d.cls != CW_DK_INPROGRESS || !e->ok) continue;
        cw_buf_reset(&hb), cw_buf_reset(&q);
        cw_key_worker_pool(d->k, &hb, e->d.pool);
        cw_key_queue(d->k, &q, e->d.name);
        if (hb.oom || q.oom) {
            rc = oom(err);
            break;
        }
        redisReply *r = NULL;
        int64_t exists = 1, len = 0;
        rc = key_command(d, "EXISTS", hb.data, hb.len, NULL, &r, err);
        if (rc == 0) rc = cw_reply_int(r, &exists, "EXISTS", err);
        cw_reply_free(r);
        r = NULL;
        if (rc == 0 && !exists) {
            rc = key_command(d, "LLEN", s->keys.argv[i], s->keys.lens[i], NULL, &r, err);
            if (rc == 0) rc = cw_reply_int(r, &len, "LLEN", err);
            cw_reply_free(r);
        }
        if (rc || exists || len == 0) continue;
        char action[600];
        snprintf(action, sizeof action,
                 "move its jobs, oldest first, to the left of %s and take them off the lock",
                 q.data);
        rc = cw_doctor_add(d, CWORK_DOCTOR_ORPHAN, s->keys.argv[i], e->d.pool, strlen(e->d.pool),
                           NULL, action,
                           "%lld job(s) in progress in pool %s, which has no heartbeat: no reaper "
                           "will give them back",
                           (long long)len, e->d.pool);
    }
    cw_buf_free(&hb), cw_buf_free(&q);
    return rc;
}

static int check_locks(cw_doctor *d, scan_state *s, cwork_error *err)
{
    cw_argv names;
    cw_argv_init(&names);
    for (size_t i = 0; i < s->n; i++) {
        cw_doctor_class c = s->e[i].d.cls;
        if (c == CW_DK_LOCK || c == CW_DK_LOCK_INFO || c == CW_DK_INPROGRESS)
            if (cw_argv_find(&names, s->e[i].d.name, strlen(s->e[i].d.name)) < 0)
                cw_argv_add_str(&names, s->e[i].d.name);
    }
    int rc = cw_argv_check(&names, err);
    cw_buf key;
    cw_buf_init(&key);
    for (size_t n = 0; rc == 0 && n < names.n; n++) {
        const char *name = names.argv[n];
        cw_argv pools;
        cw_argv_init(&pools);
        cw_buf_reset(&key);
        cw_key_lock_info(d->k, &key, name);
        char type[8] = "";
        rc = key.oom ? oom(err) : key_type(d, &key, type, err);
        if (rc == 0 && !strcmp(type, "hash")) {
            redisReply *r = NULL;
            rc = key_command(d, "HKEYS", key.data, key.len, NULL, &r, err);
            if (rc == 0) rc = cw_reply_strings(r, &pools, "HKEYS", err);
            cw_reply_free(r);
        }
        for (size_t i = 0; rc == 0 && i < s->n; i++)
            if (s->e[i].d.cls == CW_DK_INPROGRESS && !strcmp(s->e[i].d.name, name) &&
                cw_argv_find(&pools, s->e[i].d.pool, 24) < 0)
                cw_argv_add_str(&pools, s->e[i].d.pool);
        char *text = NULL;
        if (rc == 0) rc = cw_argv_check(&pools, err);
        if (rc == 0) rc = cw_doctor_locks(d->c, d->k, name, &pools, 0, &text, err);
        cw_argv_free(&pools);
        if (rc == 1) {
            cw_buf_reset(&key);
            cw_key_lock(d->k, &key, name);
            rc = key.oom ? oom(err)
                         : cw_doctor_add(d, CWORK_DOCTOR_LOCK, key.data, name, strlen(name), NULL,
                                         "set each lock_info field to its in-progress list's "
                                         "length and the lock to their sum",
                                         "%s", text);
        }
        cw_free(text);
    }
    cw_buf_free(&key);
    cw_argv_free(&names);
    return rc;
}

/* ---------------------------------------------------------------- jobs */

/* What the walk over the jobs collects: the guard keys that jobs hold, and the
 * members of one zset to report once its walk is over (a repair during the walk
 * would shift its pages). */
typedef struct walk {
    cw_doctor *d;
    int want_guards;
    cw_argv guards;
    cw_argv bad;      /* undecodable members of the zset being walked */
    cw_argv removed;  /* periodic instances of removed specs */
    cw_argv fresh;    /* published [name,spec] fields, sorted */
    cw_argv go_names; /* names a Go pool registered (they may schedule anything) */
    int periodic;     /* check periodic instances (cwork pools publish schedules) */
} walk;

static void add_guards(walk *w, const cwork_job *job)
{
    if (!w->want_guards || !cwork_job_unique(job)) return;
    cw_buf b;
    cw_buf_init(&b);
    size_t lens[2];
    cwork_error err = {0};
    int n = cw_unique_guard_keys(w->d->k, job, &b, lens, &err);
    if (n >= 1) cw_argv_add(&w->guards, b.data, lens[0]);
    if (n >= 2) cw_argv_add(&w->guards, b.data + lens[0], lens[1]);
    cw_buf_free(&b);
}

/* A scheduled periodic instance (id periodic:<name>:<spec>:<fire>) whose [name,spec] no
 * pool publishes any more and no Go pool could schedule. */
static int removed_periodic(walk *w, const cwork_job *job)
{
    const char *id = cwork_job_id(job), *name = cwork_job_name(job);
    size_t nl = strlen(name);
    if (strncmp(id, "periodic:", 9) != 0 || strncmp(id + 9, name, nl) != 0 || id[9 + nl] != ':')
        return 0;
    const char *spec = id + 9 + nl + 1, *last = strrchr(spec, ':');
    if (!last || last == spec || !last[1] || strspn(last + 1, "0123456789") != strlen(last + 1))
        return 0;
    if (cw_argv_find(&w->go_names, name, nl) >= 0) return 0;
    cw_buf f;
    cw_buf_init(&f);
    cw_buf_putc(&f, '[');
    cw_gj_encode_string(&f, name, nl);
    cw_buf_putc(&f, ',');
    cw_gj_encode_string(&f, spec, (size_t)(last - spec));
    cw_buf_putc(&f, ']');
    int removed = !f.oom && cw_argv_find(&w->fresh, f.data, f.len) < 0;
    cw_buf_free(&f);
    return removed;
}

/* Walks a list or zset CW_CLIENT_BATCH at a time. */
static int walk_key(walk *w, const char *key, size_t key_len, int zset, cwork_error *err)
{
    for (long long from = 0;; from += CW_CLIENT_BATCH) {
        char start[24], stop[24];
        snprintf(start, sizeof start, "%lld", from);
        snprintf(stop, sizeof stop, "%lld", from + CW_CLIENT_BATCH - 1);
        const char *argv[] = {zset ? "ZRANGE" : "LRANGE", key, start, stop};
        size_t lens[] = {6, key_len, strlen(start), strlen(stop)};
        redisReply *r = NULL;
        size_t n = 0;
        int rc = cw_conn_command(w->d->c, 4, argv, lens, &r, err);
        if (rc == 0) rc = cw_reply_array(r, 0, &n, argv[0], err);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            const redisReply *m = cw_reply_at(r, i);
            cwork_job *job = NULL;
            cwork_error jerr = {0};
            if (cw_job_decode(cw_reply_text(m), cw_reply_len(m), &job, &jerr) != 0) {
                if (zset) cw_argv_add(&w->bad, cw_reply_text(m), cw_reply_len(m));
                continue;
            }
            add_guards(w, job);
            if (w->periodic && removed_periodic(w, job))
                cw_argv_add(&w->removed, cw_reply_text(m), cw_reply_len(m));
            cwork_job_free(job);
        }
        cw_reply_free(r);
        if (rc) return rc;
        if (n < CW_CLIENT_BATCH) return 0;
    }
}

/* Shows a member in a finding's line: printable ASCII as it is, up to 80 bytes. */
static void shown(const char *m, size_t len, char out[100])
{
    size_t w = 0;
    for (size_t i = 0; i < len && w < 80; i++) {
        if (m[i] >= 0x20 && m[i] < 0x7f)
            out[w++] = m[i];
        else
            out[w++] = '?';
    }
    if (len > 80) memcpy(out + w, "...", 3), w += 3;
    out[w] = '\0';
}

static int report_members(walk *w, const char *key, const char *set)
{
    cw_buf q;
    cw_buf_init(&q);
    cw_doctor_quarantine(w->d->k, set, &q);
    char action[300];
    snprintf(action, sizeof action, "move it with its score to %s", q.oom ? "quarantine" : q.data);
    cw_buf_free(&q);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < w->bad.n; i++) {
        char m[100];
        shown(w->bad.argv[i], w->bad.lens[i], m);
        rc = cw_doctor_add(w->d, CWORK_DOCTOR_UNDECODABLE, key, w->bad.argv[i], w->bad.lens[i],
                           NULL, action, "member is no job JSON: %s", m);
    }
    for (size_t i = 0; rc == 0 && i < w->removed.n; i++) {
        char m[100];
        shown(w->removed.argv[i], w->removed.lens[i], m);
        rc = cw_doctor_add(w->d, CWORK_DOCTOR_REMOVED_PERIODIC, key, w->removed.argv[i],
                           w->removed.lens[i], NULL, action,
                           "periodic instance of a spec no pool schedules any more: %s", m);
    }
    cw_argv_reset(&w->bad);
    cw_argv_reset(&w->removed);
    return rc;
}

/* The published schedules that are fresh, and the names Go pools registered. */
static int periodic_context(walk *w, cwork_error *err)
{
    cw_doctor *d = w->d;
    cw_buf key;
    cw_buf_init(&key);
    cw_key_periodic_published(d->k, &key);
    char type[8] = "";
    int rc = key.oom ? oom(err) : key_type(d, &key, type, err);
    redisReply *r = NULL;
    if (rc == 0 && !strcmp(type, "hash")) {
        size_t n = 0;
        rc = key_command(d, "HGETALL", key.data, key.len, NULL, &r, err);
        if (rc == 0) rc = cw_reply_array(r, 0, &n, "HGETALL", err);
        for (size_t i = 0; rc == 0 && i + 1 < n; i += 2) {
            const char *v = strstr(cw_reply_text(cw_reply_at(r, i + 1)), "\"seen_at\":");
            if (v && strtoll(v + 10, NULL, 10) >= d->now - PUBLISHED_FRESH_S)
                cw_argv_add(&w->fresh, cw_reply_text(cw_reply_at(r, i)),
                            cw_reply_len(cw_reply_at(r, i)));
        }
        cw_reply_free(r);
        r = NULL;
    }
    w->periodic = rc == 0 && w->fresh.n > 0;
    cw_argv pools;
    cw_argv_init(&pools);
    cw_buf_reset(&key);
    cw_key_worker_pools(d->k, &key);
    if (rc == 0 && w->periodic) rc = key.oom ? oom(err) : key_type(d, &key, type, err);
    if (rc == 0 && w->periodic && !strcmp(type, "set"))
        rc = cw_client_smembers(d->c, &key, &pools, err);
    for (size_t i = 0; rc == 0 && i < pools.n; i++) {
        cw_buf_reset(&key);
        cw_key_worker_pool(d->k, &key, pools.argv[i]);
        if ((rc = key.oom ? oom(err) : key_type(d, &key, type, err)) != 0 || strcmp(type, "hash"))
            continue;
        const char *argv[] = {"HMGET", key.data, "job_names", "cwork"};
        size_t lens[] = {5, key.len, 9, 5};
        rc = cw_conn_command(d->c, 4, argv, lens, &r, err);
        if (rc == 0 && cw_reply_is_nil(cw_reply_at(r, 1)) && cw_reply_is_str(cw_reply_at(r, 0))) {
            /* a Go pool: every name it registered may have periodic specs */
            const char *names = cw_reply_text(cw_reply_at(r, 0));
            while (*names) {
                size_t l = strcspn(names, ",");
                cw_argv_add(&w->go_names, names, l);
                names += l + (names[l] == ',');
            }
        }
        cw_reply_free(r);
        r = NULL;
    }
    cw_argv_free(&pools);
    cw_buf_free(&key);
    if (rc == 0) rc = cw_argv_check(&w->fresh, err);
    if (rc == 0) rc = cw_argv_check(&w->go_names, err);
    return rc;
}

static int check_jobs(cw_doctor *d, scan_state *s, cwork_error *err)
{
    walk w;
    memset(&w, 0, sizeof w);
    w.d = d;
    cw_argv_init(&w.guards), cw_argv_init(&w.bad), cw_argv_init(&w.removed);
    cw_argv_init(&w.fresh), cw_argv_init(&w.go_names);
    for (size_t i = 0; i < s->n; i++)
        if (s->e[i].d.cls == CW_DK_UNIQUE && s->e[i].ok) w.want_guards = 1;
    int rc = periodic_context(&w, err);
    /* the queues and in-progress lists: only for the guards their jobs hold */
    for (size_t i = 0; rc == 0 && w.want_guards && i < s->n; i++)
        if ((s->e[i].d.cls == CW_DK_QUEUE || s->e[i].d.cls == CW_DK_INPROGRESS) && s->e[i].ok)
            rc = walk_key(&w, s->keys.argv[i], s->keys.lens[i], 0, err);
    static const struct {
        cw_doctor_class cls;
        const char *set;
    } sets[] = {{CW_DK_DEAD, "dead"}, {CW_DK_RETRY, "retry"}, {CW_DK_SCHEDULED, "scheduled"}};
    for (size_t k = 0; rc == 0 && k < 3; k++)
        for (size_t i = 0; rc == 0 && i < s->n; i++) {
            if (s->e[i].d.cls != sets[k].cls || !s->e[i].ok) continue;
            int was = w.periodic, guards = w.want_guards;
            w.periodic = was && sets[k].cls == CW_DK_SCHEDULED;
            w.want_guards = guards && sets[k].cls != CW_DK_DEAD;
            rc = walk_key(&w, s->keys.argv[i], s->keys.lens[i], 1, err);
            w.periodic = was, w.want_guards = guards;
            if (rc == 0) rc = report_members(&w, s->keys.argv[i], sets[k].set);
        }
    if (rc == 0) rc = cw_argv_check(&w.guards, err);
    if (rc == 0) rc = cw_argv_check(&w.bad, err);
    if (rc == 0) rc = cw_argv_check(&w.removed, err);
    /* the guards no job holds */
    const char **held = NULL;
    if (rc == 0 && w.guards.n) {
        held = cw_malloc(w.guards.n * sizeof *held);
        if (!held) rc = oom(err);
        for (size_t i = 0; held && i < w.guards.n; i++)
            held[i] = w.guards.argv[i];
        if (held) qsort(held, w.guards.n, sizeof *held, cmp_str);
    }
    for (size_t i = 0; rc == 0 && w.want_guards && i < s->n; i++) {
        if (s->e[i].d.cls != CW_DK_UNIQUE || !s->e[i].ok) continue;
        const char *key = s->keys.argv[i];
        if (held && bsearch(&key, held, w.guards.n, sizeof *held, cmp_str)) continue;
        redisReply *r = NULL;
        const char *v = NULL;
        rc = key_command(d, "GET", key, s->keys.lens[i], NULL, &r, err);
        if (rc == 0) rc = cw_reply_str_or_nil(r, &v, NULL, "GET", err);
        if (rc == 0 && v) {
            int plain = !strcmp(v, "1");
            rc = cw_doctor_add(d, CWORK_DOCTOR_GUARD, key, NULL, 0, plain ? v : NULL,
                               plain ? "delete the guard (it holds no job)"
                                     : "rename it to its quarantine key (it holds a job's JSON)",
                               "unique guard whose job is in no queue, in-progress list, retry "
                               "or scheduled set: it blocks enqueueing that job for up to 24 h");
        }
        cw_reply_free(r);
    }
    cw_free(held);
    cw_argv_free(&w.guards), cw_argv_free(&w.bad), cw_argv_free(&w.removed);
    cw_argv_free(&w.fresh), cw_argv_free(&w.go_names);
    return rc;
}

/* ---------------------------------------------------------------- names */

static int check_known(cw_doctor *d, scan_state *s, cwork_error *err)
{
    cw_buf key;
    cw_buf_init(&key);
    cw_key_known_jobs(d->k, &key);
    char type[8] = "";
    int rc = key.oom ? oom(err) : key_type(d, &key, type, err);
    cw_argv known;
    cw_argv_init(&known);
    if (rc == 0 && strcmp(type, "set") && strcmp(type, "none")) goto out; /* a type finding */
    if (rc == 0) rc = cw_client_smembers(d->c, &key, &known, err);
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        entry *e = &s->e[i];
        if (e->d.cls != CW_DK_QUEUE || !e->ok) continue;
        if (cw_argv_find(&known, e->d.name, strlen(e->d.name)) >= 0) continue;
        rc = cw_doctor_add(d, CWORK_DOCTOR_UNKNOWN_NAME, s->keys.argv[i], e->d.name,
                           strlen(e->d.name), NULL, "add the name to known_jobs",
                           "queue of \"%s\", a name missing from known_jobs: the requeuers and "
                           "the reaper do not look at it",
                           e->d.name);
    }
out:
    cw_argv_free(&known);
    cw_buf_free(&key);
    return rc;
}

static int check_rate_limits(cw_doctor *d, cwork_error *err)
{
    cw_buf key, q;
    cw_buf_init(&key), cw_buf_init(&q);
    cw_key_rate_limits(d->k, &key);
    cw_doctor_quarantine(d->k, "rate_limits", &q);
    char type[8] = "";
    int rc = key.oom || q.oom ? oom(err) : key_type(d, &key, type, err);
    redisReply *r = NULL;
    size_t n = 0;
    if (rc == 0 && !strcmp(type, "hash")) {
        rc = key_command(d, "HGETALL", key.data, key.len, NULL, &r, err);
        if (rc == 0) rc = cw_reply_array(r, 0, &n, "HGETALL", err);
    }
    char action[300];
    snprintf(action, sizeof action, "move the field to %s", q.data ? q.data : "quarantine");
    for (size_t i = 0; rc == 0 && i + 1 < n; i += 2) {
        const redisReply *f = cw_reply_at(r, i), *v = cw_reply_at(r, i + 1);
        const char *text = cw_reply_text(v);
        unsigned count = 0;
        int64_t window = 0;
        char canon[32] = "";
        if (cwork_rate_limit_parse(text, &count, &window, NULL) == 0 &&
            cwork_rate_limit_format(count, window, canon, sizeof canon, NULL) == 0 &&
            !strcmp(canon, text))
            continue;
        char m[100];
        shown(text, cw_reply_len(v), m);
        rc = cw_doctor_add(d, CWORK_DOCTOR_RATE_LIMIT, key.data, cw_reply_text(f), cw_reply_len(f),
                           text, action,
                           "rate limit of \"%s\" is \"%s\", no limit of the form N/<n><unit>: "
                           "cwork pools hold that type back",
                           cw_reply_text(f), m);
    }
    cw_reply_free(r);
    cw_buf_free(&key), cw_buf_free(&q);
    return rc;
}

static int check_batches(cw_doctor *d, scan_state *s, cwork_error *err)
{
    int rc = 0;
    cw_buf jobs;
    cw_buf_init(&jobs);
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        if (s->e[i].d.cls != CW_DK_BATCH || !s->e[i].ok) continue;
        cw_buf_reset(&jobs);
        cw_buf_append(&jobs, s->keys.argv[i], s->keys.lens[i]);
        cw_buf_puts(&jobs, ":jobs");
        if (jobs.oom) return oom(err);
        cw_argv keys, args;
        cw_argv_init(&keys), cw_argv_init(&args);
        cw_argv_add(&keys, s->keys.argv[i], s->keys.lens[i]);
        cw_argv_add_buf(&keys, &jobs);
        cw_argv_add_str(&args, "batch");
        cw_argv_add_str(&args, "check");
        redisReply *r = NULL;
        rc = cw_doctor_eval(d->c, &keys, &args, &r, err);
        cw_argv_free(&keys), cw_argv_free(&args);
        if (rc == 0 && cw_reply_is_str(r))
            rc = cw_doctor_add(d, CWORK_DOCTOR_BATCH, s->keys.argv[i], NULL, 0, NULL,
                               "set the counts to what :jobs holds (and total to at least their "
                               "sum)",
                               "%s", cw_reply_text(r));
        cw_reply_free(r);
    }
    cw_buf_free(&jobs);
    return rc;
}

/* Reapers record each in-progress entry they dropped as superseded by its by-key
 * guard's job (PROTOCOL §9.3): an upstream Go pool leaves such placeholders behind. The
 * jobs are not lost (the guard's job ran instead); the finding tells the operator, and
 * its repair files the records under <p>cwork:quarantine:superseded. */
static int check_superseded(cw_doctor *d, scan_state *s, cwork_error *err)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->e[i].d.cls != CW_DK_SUPERSEDED || !s->e[i].ok) continue;
        redisReply *len = NULL, *newest = NULL;
        int rc = key_command(d, "LLEN", s->keys.argv[i], s->keys.lens[i], NULL, &len, err);
        if (rc == 0)
            rc = key_command(d, "LINDEX", s->keys.argv[i], s->keys.lens[i], "0", &newest, err);
        if (rc == 0 && len && len->type == REDIS_REPLY_INTEGER && len->integer > 0 &&
            cw_reply_is_str(newest)) {
            cw_buf q;
            cw_buf_init(&q);
            cw_doctor_quarantine(d->k, "superseded", &q);
            char action[300], m[100];
            snprintf(action, sizeof action, "file the records under %s",
                     q.oom ? "quarantine" : q.data);
            shown(cw_reply_text(newest), cw_reply_len(newest), m);
            rc = cw_doctor_add(d, CWORK_DOCTOR_SUPERSEDED, s->keys.argv[i], NULL, 0,
                               cw_reply_text(newest), action,
                               "%lld in-progress entries were dropped by reapers as superseded "
                               "by-key placeholders (upstream Go leaves them; the guard's job "
                               "ran instead); the newest: %s",
                               (long long)len->integer, m);
            cw_buf_free(&q);
        }
        cw_reply_free(len);
        cw_reply_free(newest);
        if (rc) return rc;
    }
    return 0;
}

/* ---------------------------------------------------------------- the run */

static int run(cw_doctor *d, cwork_error *err)
{
    scan_state s;
    memset(&s, 0, sizeof s);
    cw_argv_init(&s.keys);
    int rc = redis_now(d, err);
    if (rc == 0) rc = scan_namespace(d, &s, err);
    /* In this order: a repaired wrong type frees the key for what follows; orphans are
     * back in their queues before the locks are counted. */
    if (rc == 0) rc = check_types(d, &s, err);
    if (rc == 0) rc = check_heartbeats(d, &s, err);
    if (rc == 0) rc = check_orphans(d, &s, err);
    if (rc == 0) rc = check_locks(d, &s, err);
    if (rc == 0) rc = check_jobs(d, &s, err);
    if (rc == 0) rc = check_known(d, &s, err);
    if (rc == 0) rc = check_rate_limits(d, err);
    if (rc == 0) rc = check_batches(d, &s, err);
    if (rc == 0) rc = check_superseded(d, &s, err);
    if (rc == CWORK_ENOMEM && !err->message[0]) rc = oom(err);
    scan_free(&s);
    return rc;
}

/* Whether the shard count failed (rc) because the record is damaged: the doctor then
 * runs on the namespace as given, where it names the record (a finding), so that a
 * damaged record can still be looked at and repaired. err is cleared then. */
static bool record_damaged(int rc, cwork_error *err)
{
    if (rc != CWORK_EINVAL && !(rc == CWORK_EREDIS && strstr(err->message, "WRONGTYPE")))
        return false;
    *err = (cwork_error){0};
    return true;
}

int cwork_client_doctor(cwork_client *client, unsigned flags, cwork_doctor_finding **out, size_t *n,
                        cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !out || !n)
        return cw_error(err, CWORK_EINVAL, "cwork_client_doctor: NULL argument");
    *out = NULL;
    *n = 0;
    int shards = cw_client_shard_count(client, err);
    if (shards > 1) return cw_shards_doctor(client, (unsigned)shards, flags, out, n, err);
    if (shards < 0 && !record_damaged(shards, err)) return shards;
    cw_doctor d;
    memset(&d, 0, sizeof d);
    d.k = &client->keys;
    d.flags = flags;
    int rc = cw_redis_checkout(client->redis, &d.c, err);
    if (rc) return cw_client_fail("client.doctor", rc, err);
    rc = run(&d, err);
    cw_redis_checkin(client->redis, d.c);
    if (rc) {
        cwork_doctor_findings_free(d.f, d.n);
        return cw_client_fail("client.doctor", rc, err);
    }
    *out = d.f;
    *n = d.n;
    return 0;
}

int cwork_client_doctor_repair(cwork_client *client, cwork_doctor_finding *f, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !f || !f->key)
        return cw_error(err, CWORK_EINVAL, "cwork_client_doctor_repair: NULL argument");
    int shards = cw_client_shard_count(client, err);
    if (shards > 1) return cw_shards_doctor_repair(client, (unsigned)shards, f, err);
    if (shards < 0 && !record_damaged(shards, err)) return shards;
    cw_doctor d;
    memset(&d, 0, sizeof d);
    d.k = &client->keys;
    int rc = cw_redis_checkout(client->redis, &d.c, err);
    if (rc == 0) rc = redis_now(&d, err);
    if (rc == 0) rc = cw_doctor_repair(d.c, d.k, f, d.now, err);
    if (d.c) cw_redis_checkin(client->redis, d.c);
    if (rc < 0) return cw_client_fail("client.doctor.repair", rc, err);
    return rc;
}
