/* The doctor's findings and their repairs (PROTOCOL §25): one doctor_repair.lua call
 * per finding, which checks again that the finding still holds before it writes. */
#include "client_doctor.h"

#include "scripts.h"
#include "sharding.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *cwork_doctor_kind_name(cwork_doctor_kind kind)
{
    static const char *const names[] = {
        [CWORK_DOCTOR_WRONG_TYPE] = "wrong_type",
        [CWORK_DOCTOR_FUTURE_HEARTBEAT] = "future_heartbeat",
        [CWORK_DOCTOR_ORPHAN] = "orphan",
        [CWORK_DOCTOR_LOCK] = "lock",
        [CWORK_DOCTOR_GUARD] = "guard",
        [CWORK_DOCTOR_UNKNOWN_NAME] = "unknown_name",
        [CWORK_DOCTOR_UNDECODABLE] = "undecodable",
        [CWORK_DOCTOR_REMOVED_PERIODIC] = "removed_periodic",
        [CWORK_DOCTOR_RATE_LIMIT] = "rate_limit",
        [CWORK_DOCTOR_BATCH] = "batch",
        [CWORK_DOCTOR_SUPERSEDED] = "superseded",
    };
    if ((unsigned)kind >= sizeof names / sizeof names[0]) return "unknown";
    return names[kind];
}

void cwork_doctor_findings_free(cwork_doctor_finding *findings, size_t n)
{
    if (!findings) return;
    for (size_t i = 0; i < n; i++) {
        cw_free(findings[i].key), cw_free(findings[i].member), cw_free(findings[i].value);
        cw_free(findings[i].problem), cw_free(findings[i].action);
        cw_free(findings[i].repair_error);
    }
    cw_free(findings);
}

int cw_doctor_eval(cw_conn *c, const cw_argv *keys, const cw_argv *args, redisReply **out,
                   cwork_error *err)
{
    cw_argv all;
    cw_argv_init(&all);
    cw_argv_add_refs(&all, keys);
    cw_argv_add_refs(&all, args);
    int rc = cw_argv_check(&all, err);
    if (rc == 0)
        rc = cw_conn_eval(c, &cw_script_doctor_repair, (int)keys->n, (int)args->n, all.argv,
                          all.lens, out, err);
    cw_argv_free(&all);
    return rc;
}

/* A reply of 1, 0 or {-2, key}. */
static int repair_reply(const redisReply *r, cwork_error *err)
{
    int64_t v = 0;
    const char *key = NULL;
    if (cw_reply_int(r, &v, NULL, NULL) == 0) return v > 0 ? 1 : 0;
    int rc = cw_reply_at_str(r, 1, &key, NULL, "doctor script", err);
    if (rc) return rc;
    return cw_error(err, CWORK_ETYPE,
                    "%s has another type than the repair needs; nothing was written", key);
}

/* An in-progress key's name and pool, from the key itself. */
static int key_parts(const cw_keys *k, const char *key, cw_doctor_key *d, cwork_error *err)
{
    if (cw_doctor_classify(k, key, strlen(key), d))
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    if (!d->name) return cw_error(err, CWORK_EINVAL, "%s is not a key of a job name", key);
    return 0;
}

int cw_doctor_name_pools(cw_conn *c, const cw_keys *k, const char *name, cw_argv *pools,
                         cwork_error *err)
{
    if (!name) return cw_error(err, CWORK_EINVAL, "no job name given");
    cw_buf key, match;
    cw_buf_init(&key), cw_buf_init(&match);
    cw_key_lock_info(k, &key, name);
    redisReply *r = NULL;
    const char *hk[] = {"TYPE", key.data};
    size_t hl[] = {4, key.len};
    int rc = cw_conn_command(c, 2, hk, hl, &r, err);
    int is_hash = rc == 0 && !strcmp(cw_reply_text(r), "hash");
    cw_reply_free(r);
    r = NULL;
    if (rc == 0 && is_hash) {
        hk[0] = "HKEYS";
        hl[0] = 5;
        rc = cw_conn_command(c, 2, hk, hl, &r, err);
        if (rc == 0) rc = cw_reply_strings(r, pools, "HKEYS", err);
        cw_reply_free(r);
    }
    /* the in-progress lists, whatever their pool: SCAN with the name's glob escaped */
    cw_buf_reset(&key);
    cw_key_queue(k, &key, name);
    for (size_t i = 0; i < key.len; i++) {
        if (strchr("*?[]\\", key.data[i])) cw_buf_putc(&match, '\\');
        cw_buf_putc(&match, key.data[i]);
    }
    cw_buf_puts(&match, ":*:inprogress");
    if (key.oom || match.oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    char cursor[32] = "0";
    do {
        if (rc) break;
        const char *sa[] = {"SCAN", cursor, "MATCH", match.data, "COUNT", "1000"};
        size_t sl[] = {4, strlen(cursor), 5, match.len, 5, 4};
        r = NULL;
        rc = cw_conn_command(c, 6, sa, sl, &r, err);
        const char *next = NULL;
        size_t nk = 0;
        const redisReply *keys = NULL;
        if (rc == 0) rc = cw_reply_at_str(r, 0, &next, NULL, "SCAN", err);
        if (rc == 0) rc = cw_reply_at_array(r, 1, 0, &nk, "SCAN", err);
        if (rc == 0) {
            snprintf(cursor, sizeof cursor, "%s", next);
            keys = cw_reply_at(r, 1);
        }
        for (size_t i = 0; rc == 0 && i < nk; i++) {
            const redisReply *e = cw_reply_at(keys, i);
            cw_doctor_key d;
            if (cw_doctor_classify(k, cw_reply_text(e), cw_reply_len(e), &d)) {
                rc = cw_error(err, CWORK_ENOMEM, "out of memory");
                break;
            }
            if (d.cls == CW_DK_INPROGRESS && d.name && !strcmp(d.name, name))
                cw_argv_add_str(pools, d.pool);
            cw_free(d.name);
        }
        cw_reply_free(r);
    } while (strcmp(cursor, "0") != 0);
    cw_buf_free(&key), cw_buf_free(&match);
    if (rc == 0) {
        cw_argv_sort(pools);
        /* each once */
        size_t w = 0;
        for (size_t i = 0; i < pools->n; i++)
            if (w == 0 || pools->lens[i] != pools->lens[w - 1] ||
                memcmp(pools->argv[i], pools->argv[w - 1], pools->lens[i]) != 0) {
                pools->argv[w] = pools->argv[i];
                pools->lens[w++] = pools->lens[i];
            }
        pools->n = w;
    }
    if (rc == 0 && pools->oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    return rc;
}

int cw_doctor_locks(cw_conn *c, const cw_keys *k, const char *name, cw_argv *pools, int repair,
                    char **text, cwork_error *err)
{
    *text = NULL;
    cw_argv keys, args;
    cw_buf b;
    cw_buf_init(&b);
    int rc = 0;
    /* -1: lock_info names a pool the list lacks (it fetched since): read again */
    for (int attempt = 0; attempt < 5; attempt++) {
        cw_argv_init(&keys), cw_argv_init(&args);
        cw_buf_reset(&b);
        cw_key_lock(k, &b, name);
        cw_argv_add_buf(&keys, &b);
        cw_buf_reset(&b);
        cw_key_lock_info(k, &b, name);
        cw_argv_add_buf(&keys, &b);
        cw_argv_add_str(&args, "locks");
        cw_argv_add_str(&args, repair ? "repair" : "check");
        for (size_t i = 0; i < pools->n; i++) {
            cw_buf_reset(&b);
            cw_key_inprogress(k, &b, name, pools->argv[i]);
            cw_argv_add_buf(&keys, &b);
            cw_argv_add_ref(&args, pools->argv[i], pools->lens[i]);
        }
        redisReply *r = NULL;
        rc = b.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                   : cw_doctor_eval(c, &keys, &args, &r, err);
        cw_argv_free(&keys), cw_argv_free(&args);
        int64_t v = 0;
        if (rc == 0 && cw_reply_int(r, &v, NULL, NULL) == 0) {
            cw_reply_free(r);
            if (v == 0) break;
            cw_argv_reset(pools);
            if ((rc = cw_doctor_name_pools(c, k, name, pools, err)) != 0) break;
            continue;
        }
        const char *s = NULL;
        if (rc == 0 && (rc = cw_reply_str(r, &s, NULL, "doctor script", err)) == 0) {
            *text = cw_strdup(s);
            rc = *text ? 1 : cw_error(err, CWORK_ENOMEM, "out of memory");
        }
        cw_reply_free(r);
        break;
    }
    cw_buf_free(&b);
    return rc;
}

/* A finding whose repair needs a member or a value it lacks: 0, or CWORK_EINVAL. */
static int check_finding(const cwork_doctor_finding *f, cwork_error *err)
{
    int needs_member = f->kind == CWORK_DOCTOR_LOCK || f->kind == CWORK_DOCTOR_UNKNOWN_NAME ||
                       f->kind == CWORK_DOCTOR_UNDECODABLE ||
                       f->kind == CWORK_DOCTOR_REMOVED_PERIODIC ||
                       f->kind == CWORK_DOCTOR_RATE_LIMIT;
    int needs_value = f->kind == CWORK_DOCTOR_WRONG_TYPE || f->kind == CWORK_DOCTOR_RATE_LIMIT ||
                      f->kind == CWORK_DOCTOR_FUTURE_HEARTBEAT ||
                      f->kind == CWORK_DOCTOR_SUPERSEDED;
    if ((needs_member && !f->member) || (needs_value && !f->value))
        return cw_error(err, CWORK_EINVAL, "%s: the finding lacks its %s", f->key,
                        needs_member && !f->member ? "member" : "value");
    return 0;
}

/* A lock finding is repaired by the lock check itself, run with repair on. */
static int repair_lock(cw_conn *c, const cw_keys *k, const cwork_doctor_finding *f,
                       cwork_error *err)
{
    cw_argv pools;
    cw_argv_init(&pools);
    char *text = NULL;
    int rc = cw_doctor_name_pools(c, k, f->member, &pools, err);
    if (rc == 0) rc = cw_doctor_locks(c, k, f->member, &pools, 1, &text, err);
    cw_free(text);
    cw_argv_free(&pools);
    return rc;
}

/* An orphaned in-progress list goes back to its queue: the keys the requeue needs. */
static int orphan_arguments(const cw_keys *k, const cwork_doctor_finding *f, cw_argv *keys,
                            cw_argv *args, cw_buf *b, cwork_error *err)
{
    cw_doctor_key d = {0};
    int rc = key_parts(k, f->key, &d, err);
    if (rc == 0) {
        cw_key_queue(k, b, d.name);
        cw_argv_add_buf(keys, b);
        cw_buf_reset(b);
        cw_key_lock(k, b, d.name);
        cw_argv_add_buf(keys, b);
        cw_buf_reset(b);
        cw_key_lock_info(k, b, d.name);
        cw_argv_add_buf(keys, b);
        cw_buf_reset(b);
        cw_key_worker_pool(k, b, d.pool);
        cw_argv_add_buf(keys, b);
        cw_argv_add_str(args, "requeue");
        cw_argv_add_str(args, d.pool);
    }
    cw_free(d.name);
    return rc;
}

/* A rename of a unique guard's key tells the script what a grow's forwarding marker
 * holds (PROTOCOL §27.5), so that it never renames one away: a finding made before the
 * key became a marker, or handed in by a caller, must not free the guard while
 * enqueuers on the old shard count still ask it. 0 or CWORK_ENOMEM. */
static int guard_marker(const cw_keys *k, const cwork_doctor_finding *f, cw_argv *args,
                        cwork_error *err)
{
    cw_doctor_key d = {0};
    if (cw_doctor_classify(k, f->key, strlen(f->key), &d))
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    if (d.cls == CW_DK_UNIQUE) cw_argv_add_str(args, CW_SHARDING_FORWARD_MARK);
    cw_free(d.name);
    return 0;
}

/* The repair script's keys after f->key (which keys[0] already holds) and its arguments,
 * for every kind but a lock. */
static int repair_arguments(const cw_keys *k, const cwork_doctor_finding *f, int64_t now,
                            cw_argv *keys, cw_argv *args, cw_buf *b, cwork_error *err)
{
    switch (f->kind) {
    case CWORK_DOCTOR_WRONG_TYPE:
    case CWORK_DOCTOR_GUARD:
        if (f->kind == CWORK_DOCTOR_GUARD && f->value && !strcmp(f->value, "1")) {
            cw_argv_add_str(args, "unguard");
            cw_argv_add_str(args, "1");
            return 0;
        }
        cw_doctor_quarantine_key(k, f->key, b);
        cw_argv_add_buf(keys, b);
        cw_argv_add_str(args, "rename");
        cw_argv_add_str(args, f->kind == CWORK_DOCTOR_GUARD ? "string" : f->value);
        return guard_marker(k, f, args, err);
    case CWORK_DOCTOR_FUTURE_HEARTBEAT:
        cw_argv_add_str(args, "beat");
        cw_argv_add_str(args, f->value);
        cw_argv_add_int(args, now);
        return 0;
    case CWORK_DOCTOR_ORPHAN:
        return orphan_arguments(k, f, keys, args, b, err);
    case CWORK_DOCTOR_UNKNOWN_NAME:
        cw_argv_reset(keys);
        cw_key_known_jobs(k, b);
        cw_argv_add_buf(keys, b);
        cw_argv_add_str(args, "sadd");
        cw_argv_add(args, f->member, f->member_len);
        return 0;
    case CWORK_DOCTOR_UNDECODABLE:
    case CWORK_DOCTOR_REMOVED_PERIODIC:
        cw_doctor_quarantine(k, f->key + k->prefix_len, b);
        cw_argv_add_buf(keys, b);
        cw_argv_add_str(args, "zmove");
        cw_argv_add(args, f->member, f->member_len);
        return 0;
    case CWORK_DOCTOR_RATE_LIMIT:
        cw_doctor_quarantine(k, "rate_limits", b);
        cw_argv_add_buf(keys, b);
        cw_argv_add_str(args, "hmove");
        cw_argv_add(args, f->member, f->member_len);
        cw_argv_add_str(args, f->value);
        return 0;
    case CWORK_DOCTOR_SUPERSEDED:
        cw_doctor_quarantine(k, "superseded", b);
        cw_argv_add_buf(keys, b);
        cw_argv_add_str(args, "file");
        cw_argv_add_str(args, f->value);
        return 0;
    case CWORK_DOCTOR_BATCH:
        cw_buf_puts(b, f->key);
        cw_buf_puts(b, ":jobs");
        cw_argv_add_buf(keys, b);
        cw_argv_add_str(args, "batch");
        cw_argv_add_str(args, "repair");
        return 0;
    default:
        return cw_error(err, CWORK_EINVAL, "unknown finding kind %d", (int)f->kind);
    }
}

int cw_doctor_repair(cw_conn *c, const cw_keys *k, cwork_doctor_finding *f, int64_t now,
                     cwork_error *err)
{
    if (!f->action)
        return cw_error(err, CWORK_EUNSUPPORTED, "%s: this finding has no repair", f->key);
    int rc = check_finding(f, err);
    if (rc == 0 && f->kind == CWORK_DOCTOR_LOCK) rc = repair_lock(c, k, f, err);
    if (rc != 0 || f->kind == CWORK_DOCTOR_LOCK) {
        if (rc == 1) f->repaired = true;
        return rc;
    }
    cw_argv keys, args;
    cw_argv_init(&keys), cw_argv_init(&args);
    cw_buf b;
    cw_buf_init(&b);
    cw_argv_add_str(&keys, f->key);
    rc = repair_arguments(k, f, now, &keys, &args, &b, err);
    if (rc == 0 && (b.oom || keys.oom || args.oom))
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0) {
        redisReply *r = NULL;
        rc = cw_doctor_eval(c, &keys, &args, &r, err);
        if (rc == 0) rc = f->kind == CWORK_DOCTOR_BATCH ? cw_reply_is_str(r) : repair_reply(r, err);
        cw_reply_free(r);
    }
    if (rc == 1) f->repaired = true;
    cw_buf_free(&b);
    cw_argv_free(&keys), cw_argv_free(&args);
    return rc;
}

int cw_doctor_add(cw_doctor *d, cwork_doctor_kind kind, const char *key, const char *member,
                  size_t member_len, const char *value, const char *action, const char *fmt, ...)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        cwork_doctor_finding *f = cw_realloc(d->f, cap * sizeof *f);
        if (!f) return CWORK_ENOMEM;
        d->f = f;
        d->cap = cap;
    }
    cwork_doctor_finding *f = &d->f[d->n];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    va_list ap;
    va_start(ap, fmt);
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    f->key = cw_strdup(key);
    f->member = member ? cw_strndup(member, member_len) : NULL;
    f->member_len = member ? member_len : 0;
    f->value = value ? cw_strdup(value) : NULL;
    f->problem = cw_strdup(line);
    f->action = action ? cw_strdup(action) : NULL;
    d->n++;
    if (!f->key || (member && !f->member) || (value && !f->value) || !f->problem ||
        (action && !f->action))
        return CWORK_ENOMEM;
    if (!(d->flags & CWORK_DOCTOR_REPAIR) || !action) return 0;
    cwork_error err = {0};
    int rc = cw_doctor_repair(d->c, d->k, f, d->now, &err);
    if (rc < 0) {
        f->repair_error = cw_strdup(err.message);
        if (!f->repair_error) return CWORK_ENOMEM;
        cw_client_fail("client.doctor.repair", rc, &err);
        if (d->c->broken) return rc;
    }
    return 0;
}
