/* Key names of PROTOCOL §2 and the job-name rules that keep them from colliding. */
#include "keys.h"

#include "job.h"
#include "utf8.h"

#include <string.h>

int cw_keys_init(cw_keys *k, const char *ns)
{
    size_t n = strlen(ns);
    /* "work" and "work:" give the same keys; an empty namespace has no prefix. */
    int add_colon = n > 0 && ns[n - 1] != ':';
    k->prefix = cw_malloc(n + 2);
    if (!k->prefix) return CWORK_ENOMEM;
    memcpy(k->prefix, ns, n);
    if (add_colon) k->prefix[n++] = ':';
    k->prefix[n] = '\0';
    k->prefix_len = n;
    return 0;
}

void cw_keys_clear(cw_keys *k)
{
    cw_free(k->prefix);
    k->prefix = NULL;
    k->prefix_len = 0;
}

static void put_prefix(const cw_keys *k, cw_buf *out, const char *what)
{
    cw_buf_append(out, k->prefix, k->prefix_len);
    cw_buf_puts(out, what);
}

/* "<p>jobs:<name>" followed by suffix. */
static void put_job_key(const cw_keys *k, cw_buf *out, const char *name, const char *suffix)
{
    put_prefix(k, out, "jobs:");
    cw_buf_puts(out, name);
    cw_buf_puts(out, suffix);
}

void cw_key_known_jobs(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "known_jobs");
}

void cw_key_stat_day(const cw_keys *k, cw_buf *out, const char *date)
{
    put_prefix(k, out, "cwork:stat:");
    cw_buf_puts(out, date);
}
void cw_key_stat_hour(const cw_keys *k, cw_buf *out, const char *hour)
{
    put_prefix(k, out, "cwork:stat:");
    cw_buf_puts(out, hour);
}
void cw_key_stats_sent(const cw_keys *k, cw_buf *out, const char *pool_id)
{
    put_prefix(k, out, "cwork:stats_sent:");
    cw_buf_puts(out, pool_id);
}
void cw_key_periodic_published(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "cwork:periodic");
}
void cw_key_rate_limits(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "cwork:rate_limits");
}
void cw_key_rate_limit(const cw_keys *k, cw_buf *out, const char *name)
{
    put_prefix(k, out, "cwork:rate_limit:");
    cw_buf_puts(out, name);
}
void cw_key_batch(const cw_keys *k, cw_buf *out, const char *id)
{
    put_prefix(k, out, "cwork:batch:");
    cw_buf_puts(out, id);
}
void cw_key_batch_jobs(const cw_keys *k, cw_buf *out, const char *id)
{
    cw_key_batch(k, out, id);
    cw_buf_puts(out, ":jobs");
}
void cw_key_jobs_prefix(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "jobs:");
}
void cw_key_queue(const cw_keys *k, cw_buf *out, const char *name)
{
    put_job_key(k, out, name, "");
}

void cw_key_inprogress(const cw_keys *k, cw_buf *out, const char *name, const char *pool_id)
{
    /* The pool id sits after the job name: jobs:<name>:<pool>:inprogress. */
    put_job_key(k, out, name, ":");
    cw_buf_puts(out, pool_id);
    cw_buf_puts(out, ":inprogress");
}

void cw_key_paused(const cw_keys *k, cw_buf *out, const char *name)
{
    put_job_key(k, out, name, ":paused");
}
void cw_key_lock(const cw_keys *k, cw_buf *out, const char *name)
{
    put_job_key(k, out, name, ":lock");
}
void cw_key_lock_info(const cw_keys *k, cw_buf *out, const char *name)
{
    put_job_key(k, out, name, ":lock_info");
}
void cw_key_max_concurrency(const cw_keys *k, cw_buf *out, const char *name)
{
    put_job_key(k, out, name, ":max_concurrency");
}
void cw_key_retry(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "retry");
}
void cw_key_dead(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "dead");
}
void cw_key_scheduled(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "scheduled");
}

void cw_key_worker(const cw_keys *k, cw_buf *out, const char *worker_id)
{
    put_prefix(k, out, "worker:");
    cw_buf_puts(out, worker_id);
}

void cw_key_worker_pools(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "worker_pools");
}

void cw_key_worker_pool(const cw_keys *k, cw_buf *out, const char *pool_id)
{
    put_prefix(k, out, "worker_pools:");
    cw_buf_puts(out, pool_id);
}

void cw_key_last_periodic_enqueue(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "last_periodic_enqueue");
}
void cw_key_shards(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "cwork:shards");
}

void cw_key_shard_pinned(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "cwork:shard_pinned");
}

void cw_key_shard_moving(const cw_keys *k, cw_buf *out, const char *name)
{
    put_prefix(k, out, "cwork:moving:");
    cw_buf_puts(out, name);
}

void cw_key_reaper_lock(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "reaper_lock");
}

void cw_key_wakeup_channel(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "cwork:wakeup");
}
void cw_key_result(const cw_keys *k, cw_buf *out, const char *id)
{
    put_prefix(k, out, "cwork:result:");
    cw_buf_puts(out, id);
}
void cw_key_failures(const cw_keys *k, cw_buf *out, const char *id)
{
    put_prefix(k, out, "cwork:failures:");
    cw_buf_puts(out, id);
}
void cw_key_succeeded(const cw_keys *k, cw_buf *out, const char *name)
{
    put_prefix(k, out, "cwork:succeeded:");
    cw_buf_puts(out, name);
}
void cw_key_results_channel(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "cwork:results");
}

void cw_key_superseded(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "cwork:superseded");
}

void cw_key_cancelled(const cw_keys *k, cw_buf *out)
{
    put_prefix(k, out, "cwork:cancelled");
}

void cw_key_cancel_channel(const cw_keys *k, cw_buf *out, const char *pool_id)
{
    put_prefix(k, out, "cwork:cancel:");
    cw_buf_puts(out, pool_id);
}

int cw_key_unique(const cw_keys *k, cw_buf *out, const char *name, const gj_value *args,
                  cwork_error *err)
{
    put_prefix(k, out, "unique:");
    cw_buf_puts(out, name);
    cw_buf_putc(out, ':');
    return cw_job_unique_args_suffix(out, args, err);
}

int cw_key_unique_spellings(const cw_keys *k, cw_buf *out, const char *name, const gj_value *args,
                            size_t lens[2], cwork_error *err)
{
    size_t start = out->len;
    put_prefix(k, out, "unique:");
    cw_buf_puts(out, name);
    cw_buf_putc(out, ':');
    size_t json_at = out->len;
    int rc = cw_job_unique_args_suffix(out, args, err);
    if (rc) {
        out->len = start;
        return rc;
    }
    size_t end = out->len;
    lens[0] = end - start;
    lens[1] = 0;
    if (out->oom || !memchr(out->data + json_at, '\\', end - json_at)) return 1;
    /* The second spelling: the same head, then the rewritten JSON, read from a copy
     * because appending may move the buffer. */
    char *first = cw_strndup(out->data + start, end - start);
    if (!first) {
        out->oom = 1;
        return 1;
    }
    cw_buf_append(out, first, json_at - start);
    int changed = cw_gj_append_go121(out, first + (json_at - start), end - json_at);
    cw_free(first);
    if (!changed) {
        out->len = end;
        return 1;
    }
    lens[1] = out->len - end;
    return 2;
}

/* ---------------------------------------------------------------- job names */

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

static int is_lower_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

int cwork_validate_job_name(const char *name, cwork_error *err)
{
    if (!name || !*name) return cw_error(err, CWORK_EINVAL, "invalid job name: empty");
    size_t n = strlen(name);
    if (strchr(name, ','))
        return cw_error(err, CWORK_EINVAL,
                        "invalid job name \"%.64s\": ',' breaks the heartbeat's job list", name);
    /* Strict UTF-8 (no overlongs, no surrogates, ≤ U+10FFFF): a name Go would write with
     * U+FFFD in the job's JSON would not match its own queue key. */
    if (!cw_utf8_valid(name, n))
        return cw_error(err, CWORK_EINVAL, "invalid job name: not valid UTF-8");
    static const char *const reserved[] = {":lock", ":lock_info", ":paused", ":max_concurrency"};
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (ends_with(name, n, reserved[i]))
            return cw_error(err, CWORK_EINVAL,
                            "invalid job name \"%.64s\": ends in \"%s\", which collides with "
                            "another job's %s key",
                            name, reserved[i], reserved[i] + 1);
    /* x:<24 hex>:inprogress would be the in-progress list of job x in pool <24 hex>. */
    static const char inprogress[] = ":inprogress";
    size_t tail = sizeof inprogress - 1 + 24 + 1;
    if (ends_with(name, n, inprogress) && n > tail && name[n - tail] == ':' &&
        is_lower_hex(name + n - tail + 1, 24))
        return cw_error(err, CWORK_EINVAL,
                        "invalid job name \"%.64s\": collides with an in-progress list key", name);
    return 0;
}

void cw_key_unique_prefer(cw_buf *out, size_t off, size_t lens[2], cwork_go_json spelling)
{
    if (spelling != CWORK_GO_JSON_121 || lens[1] == 0 || out->oom) return;
    /* [1.22 key][1.21 key] -> [1.21 key][1.22 key], through a copy of the first */
    char *first = cw_strndup(out->data + off, lens[0]);
    if (!first) {
        out->oom = 1;
        return;
    }
    memmove(out->data + off, out->data + off + lens[0], lens[1]);
    memcpy(out->data + off + lens[1], first, lens[0]);
    cw_free(first);
    size_t t = lens[0];
    lens[0] = lens[1];
    lens[1] = t;
}

int cw_unique_guard_keys(const cw_keys *k, const cwork_job *job, cw_buf *out, size_t lens[2],
                         cwork_error *err)
{
    lens[0] = lens[1] = 0;
    if (!job || !job->unique) return 0;
    if (job->unique_key.len) {
        cw_buf_append(out, job->unique_key.ptr, job->unique_key.len);
        lens[0] = job->unique_key.len;
        return 1;
    }
    return cw_key_unique_spellings(k, out, job->name.ptr, job->args, lens, err);
}
