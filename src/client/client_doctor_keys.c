/* What each key of a namespace is, by its name (PROTOCOL §2.2, §2.3, §20–§23, §26): the
 * doctor compares the type Redis reports with the type given here. */
#include "client_doctor.h"

#include <string.h>

static int has_suffix(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

static int is_hex(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!strchr("0123456789abcdef", s[i]) || !s[i]) return 0;
    return 1;
}

/* Keys named exactly, after the prefix. */
static const struct {
    const char *rest;
    cw_doctor_class cls;
    const char *type;
} exact[] = {
    {"known_jobs", CW_DK_KNOWN_JOBS, "set"},
    {"retry", CW_DK_RETRY, "zset"},
    {"dead", CW_DK_DEAD, "zset"},
    {"scheduled", CW_DK_SCHEDULED, "zset"},
    {"worker_pools", CW_DK_WORKER_POOLS, "set"},
    {"last_periodic_enqueue", CW_DK_LAST_PERIODIC, "string"},
    {"reaper_lock", CW_DK_REAPER_LOCK, "string"},
    {"cwork:periodic", CW_DK_PERIODIC, "hash"},
    {"cwork:rate_limits", CW_DK_RATE_LIMITS, "hash"},
    {"cwork:cancelled", CW_DK_CANCELLED, "hash"},
    {"cwork:superseded", CW_DK_SUPERSEDED, "list"},
    {"cwork:shards", CW_DK_SHARDS, "hash"},
    {"cwork:shard_pinned", CW_DK_SHARD_PINNED, "set"},
};

/* Keys named by a prefix followed by something (a name, an id, a date). */
static const struct {
    const char *head;
    cw_doctor_class cls;
    const char *type;
} headed[] = {
    {"worker_pools:", CW_DK_POOL, "hash"},       {"worker:", CW_DK_WORKER, "hash"},
    {"unique:", CW_DK_UNIQUE, "string"},         {"cwork:stat:", CW_DK_STAT, "hash"},
    {"cwork:stats_sent:", CW_DK_STAT, "hash"},   {"cwork:rate_limit:", CW_DK_RATE_LIMIT, "string"},
    {"cwork:result:", CW_DK_RESULT, "string"},   {"cwork:succeeded:", CW_DK_SUCCEEDED, "zset"},
    {"cwork:failures:", CW_DK_FAILURES, "list"}, {"cwork:moving:", CW_DK_SHARD_MOVING, "list"},
};

/* <p>jobs:<name>…: the suffixes of a name's keys (PROTOCOL §2.4 keeps names from
 * ending in them). */
static const struct {
    const char *suffix;
    cw_doctor_class cls;
    const char *type;
} job_keys[] = {
    {":lock_info", CW_DK_LOCK_INFO, "hash"},
    {":lock", CW_DK_LOCK, "string"},
    {":paused", CW_DK_PAUSED, "string"},
    {":max_concurrency", CW_DK_MAX_CONCURRENCY, "string"},
};

static int set_name(cw_doctor_key *d, const char *s, size_t len)
{
    d->name = cw_strndup(s, len);
    return d->name ? 0 : CWORK_ENOMEM;
}

static int classify_jobs(const char *s, size_t len, cw_doctor_key *d)
{
    /* <name>:<24 hex>:inprogress */
    if (has_suffix(s, len, ":inprogress") && len >= 11 + 25 + 1) {
        const char *pool = s + len - 11 - 24;
        if (pool[-1] == ':' && is_hex(pool, 24)) {
            d->cls = CW_DK_INPROGRESS;
            d->type = "list";
            memcpy(d->pool, pool, 24);
            d->pool[24] = '\0';
            return set_name(d, s, (size_t)(pool - 1 - s));
        }
    }
    for (size_t i = 0; i < sizeof job_keys / sizeof job_keys[0]; i++) {
        size_t n = strlen(job_keys[i].suffix);
        if (len > n && has_suffix(s, len, job_keys[i].suffix)) {
            d->cls = job_keys[i].cls;
            d->type = job_keys[i].type;
            return set_name(d, s, len - n);
        }
    }
    if (len == 0) return 0;
    d->cls = CW_DK_QUEUE;
    d->type = "list";
    return set_name(d, s, len);
}

int cw_doctor_classify(const cw_keys *k, const char *key, size_t key_len, cw_doctor_key *d)
{
    memset(d, 0, sizeof *d);
    if (key_len < k->prefix_len || memcmp(key, k->prefix, k->prefix_len) != 0) return 0;
    const char *s = key + k->prefix_len;
    size_t len = key_len - k->prefix_len;
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strlen(exact[i].rest) == len && memcmp(exact[i].rest, s, len) == 0) {
            d->cls = exact[i].cls;
            d->type = exact[i].type;
            return 0;
        }
    if (len > 5 && memcmp(s, "jobs:", 5) == 0) return classify_jobs(s + 5, len - 5, d);
    if (len > 12 && memcmp(s, "cwork:batch:", 12) == 0) {
        const char *id = s + 12;
        size_t idlen = len - 12;
        if (idlen == 24 && is_hex(id, 24)) {
            d->cls = CW_DK_BATCH;
            d->type = "hash";
        } else if (idlen == 29 && is_hex(id, 24) && memcmp(id + 24, ":jobs", 5) == 0) {
            d->cls = CW_DK_BATCH_JOBS;
            d->type = "hash";
        }
        return 0;
    }
    for (size_t i = 0; i < sizeof headed / sizeof headed[0]; i++) {
        size_t n = strlen(headed[i].head);
        if (len > n && memcmp(s, headed[i].head, n) == 0) {
            d->cls = headed[i].cls;
            d->type = headed[i].type;
            return d->cls == CW_DK_SHARD_MOVING ? set_name(d, s + n, len - n) : 0;
        }
    }
    return 0;
}

void cw_doctor_quarantine_key(const cw_keys *k, const char *key, cw_buf *out)
{
    cw_buf_append(out, k->prefix, k->prefix_len);
    cw_buf_puts(out, "cwork:quarantine:key:");
    size_t len = strlen(key);
    if (len >= k->prefix_len && memcmp(key, k->prefix, k->prefix_len) == 0) key += k->prefix_len;
    cw_buf_puts(out, key);
}

void cw_doctor_quarantine(const cw_keys *k, const char *what, cw_buf *out)
{
    cw_buf_append(out, k->prefix, k->prefix_len);
    cw_buf_puts(out, "cwork:quarantine:");
    cw_buf_puts(out, what);
}
