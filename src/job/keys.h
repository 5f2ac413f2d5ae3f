/* Every Redis key of a namespace (PROTOCOL §2), one function each; nothing else in the
 * library builds a key. Functions append the key to a buffer so that hot paths reuse
 * one allocation; check out->oom once when done. */
#ifndef CWORK_KEYS_H
#define CWORK_KEYS_H

#include "gojson.h"
#include "job.h"

typedef struct cw_keys {
    char *prefix; /* "<ns>:" — or "" for an empty namespace, or ns itself if it ends in ':' */
    size_t prefix_len;
} cw_keys;

/* Derives the prefix of PROTOCOL §2.1. 0 or CWORK_ENOMEM. */
int cw_keys_init(cw_keys *k, const char *ns);
void cw_keys_clear(cw_keys *k);

void cw_key_known_jobs(const cw_keys *k, cw_buf *out);
void cw_key_jobs_prefix(const cw_keys *k, cw_buf *out); /* "<p>jobs:" as passed to scripts */
void cw_key_queue(const cw_keys *k, cw_buf *out, const char *name);
void cw_key_inprogress(const cw_keys *k, cw_buf *out, const char *name, const char *pool_id);
void cw_key_paused(const cw_keys *k, cw_buf *out, const char *name);
void cw_key_lock(const cw_keys *k, cw_buf *out, const char *name);
void cw_key_lock_info(const cw_keys *k, cw_buf *out, const char *name);
void cw_key_max_concurrency(const cw_keys *k, cw_buf *out, const char *name);
void cw_key_retry(const cw_keys *k, cw_buf *out);
void cw_key_dead(const cw_keys *k, cw_buf *out);
void cw_key_scheduled(const cw_keys *k, cw_buf *out);
void cw_key_worker(const cw_keys *k, cw_buf *out, const char *worker_id);
void cw_key_worker_pools(const cw_keys *k, cw_buf *out);
void cw_key_worker_pool(const cw_keys *k, cw_buf *out, const char *pool_id);
void cw_key_last_periodic_enqueue(const cw_keys *k, cw_buf *out);
void cw_key_reaper_lock(const cw_keys *k, cw_buf *out);
/* "<p>cwork:shards": the shard record of a sharded namespace (PROTOCOL §27.1), in shard
 * 0's namespace. cwork's own. */
void cw_key_shards(const cw_keys *k, cw_buf *out);
/* "<p>cwork:shard_pinned": the set of job names a sharded namespace routes by name
 * (types with a concurrency or rate limit, PROTOCOL §27.2), in shard 0 next to the record. */
void cw_key_shard_pinned(const cw_keys *k, cw_buf *out);
/* "<p>cwork:moving:<name>": jobs of a pinned type on their way from this shard to the
 * shard of their name (PROTOCOL §27.4). cwork's own. */
void cw_key_shard_moving(const cw_keys *k, cw_buf *out, const char *name);
/* "<p>cwork:stat:<date>" (date YYYY-MM-DD, UTC): a hash of the jobs cwork pools
 * processed and failed that day, for dashboards. cwork's own: Go never reads it. */
void cw_key_stat_day(const cw_keys *k, cw_buf *out, const char *date);
/* "<p>cwork:stat:<hour>" (hour YYYY-MM-DDTHH, UTC): a hash of that hour's jobs per minute,
 * fields "MM:processed" and "MM:failed", kept 25 h. cwork's own, like the day's. */
void cw_key_stat_hour(const cw_keys *k, cw_buf *out, const char *hour);
/* "<p>cwork:stats_sent:<pool id>": a hash of the totals that pool has added to the daily
 * counts (processed, failed), so that a write retried after an unknown outcome adds only
 * what it lacks (PROTOCOL §14.2). */
void cw_key_stats_sent(const cw_keys *k, cw_buf *out, const char *pool_id);
/* "<p>cwork:periodic": a hash in which cwork pools publish the periodic jobs they
 * schedule, for dashboards (field ["<name>","<spec>"], value {"next_at":…,"seen_at":…};
 * the key expires CW_PERIODIC_PUBLISHED_TTL after the last pool wrote it). cwork's own:
 * Go never reads it. */
void cw_key_periodic_published(const cw_keys *k, cw_buf *out);
/* "<p>cwork:rate_limits": a hash, job name → its rate limit "N/<n><unit>" (PROTOCOL §20),
 * the one setting every cwork pool of the namespace follows. cwork's own. */
void cw_key_rate_limits(const cw_keys *k, cw_buf *out);
/* "<p>cwork:rate_limit:<name>": the type's rate limit state, the time in µs of Redis'
 * clock from which its next job may start (expires then). cwork's own. */
void cw_key_rate_limit(const cw_keys *k, cw_buf *out, const char *name);
/* "<p>cwork:batch:<id>": a tracked batch's hash (total, counts, seal, callback), and
 * "<p>cwork:batch:<id>:jobs": which of its jobs were counted and how (PROTOCOL §23).
 * cwork's own: Go never reads them. An open batch expires CW_BATCH_OPEN_TTL_SECONDS
 * after it was opened (its :jobs hash with it); both expire CW_BATCH_TTL_SECONDS after
 * the batch completes. The scripts that count build them from the prefix
 * (cw_keys.prefix). */
void cw_key_batch(const cw_keys *k, cw_buf *out, const char *id);
void cw_key_batch_jobs(const cw_keys *k, cw_buf *out, const char *id);
#define CW_BATCH_TTL_SECONDS 604800 /* a week: long enough to look at a finished batch */
/* A job's failure history (PROTOCOL §26): the last 10 failures, kept 30 days past the
 * job's retry time or its death — the time an operator looks at a dead job's story. */
#define CW_FAILURES_KEEP 10
#define CW_FAILURES_TTL_SECONDS 2592000
/* 30 days from opening: a batch left unsealed, or with a job an operator deleted, does
 * not stay for ever; far longer than any retry schedule of a sealed batch's jobs. */
#define CW_BATCH_OPEN_TTL_SECONDS 2592000
/* "<p>cwork:superseded": a list, newest first, of the in-progress entries reapers dropped
 * instead of requeueing because their unique_key's guard had been taken over by another
 * job (PROTOCOL §9.3), capped at CW_SUPERSEDED_CAP entries; each a JSON object
 * {"at","pool","key","id","job"}. cwork's own: `cwork doctor` reports it. */
void cw_key_superseded(const cw_keys *k, cw_buf *out);
#define CW_SUPERSEDED_CAP 1000 /* reaper_requeue.lua keeps this many records */
/* The pub/sub channel on which cwork enqueuers announce new jobs (message: the job
 * name), so that idle pools fetch at once. A channel, not a key: Go never sees it. */
void cw_key_wakeup_channel(const cw_keys *k, cw_buf *out);
/* "<p>cwork:cancelled": a hash of the running jobs an operator cancelled (field: job id,
 * value: when, Unix seconds), written by the cancel script and consumed by the commit
 * and the reaper's requeue, which send such a job to dead (PROTOCOL §21). cwork's own. */
void cw_key_cancelled(const cw_keys *k, cw_buf *out);
/* "<p>cwork:cancel:<pool>": the pub/sub channel on which the cancel script tells a cwork
 * pool that one of its running jobs was cancelled (message: the job id). A pool that
 * does not subscribe to it (Go) cannot have its jobs cancelled (PROTOCOL §21). */
void cw_key_cancel_channel(const cw_keys *k, cw_buf *out, const char *pool_id);
/* "<p>cwork:result:<id>": a string holding the result a handler set for the job with
 * that id, written by the commit of its successful run with the type's result TTL
 * (PROTOCOL §22). cwork's own: Go never reads it. */
void cw_key_result(const cw_keys *k, cw_buf *out, const char *id);
/* "<p>cwork:failures:<id>": a list, newest first, of the last CW_FAILURES_KEEP failures of
 * the job with that id, written by the commit of each failed run (PROTOCOL §26). */
void cw_key_failures(const cw_keys *k, cw_buf *out, const char *id);
/* "<p>cwork:succeeded:<name>": a zset of the type's kept succeeded jobs (score: when
 * the commit wrote it, Unix ms; member: {"ran_at":…,"took_us":…,"job":<bytes>}). */
void cw_key_succeeded(const cw_keys *k, cw_buf *out, const char *name);
/* The pub/sub channel on which a commit announces a written result (message: the job's
 * id), so that a waiting reader returns at once. A channel, not a key. */
void cw_key_results_channel(const cw_keys *k, cw_buf *out);
/* "<p>unique:<name>:" + Go JSON of args + "\n" (nothing after the ':' when args is
 * NULL). 0 or CWORK_EJSON for args JSON cannot hold. */
int cw_key_unique(const cw_keys *k, cw_buf *out, const char *name, const gj_value *args,
                  cwork_error *err);
/* The guard key as cw_key_unique, then — when the args hold U+0008 or U+000C — the
 * same key as a Go older than 1.22 spells it (\u0008, \u000c where Go 1.22 and cwork
 * write \b, \f), back to back. lens[0] and lens[1] receive their lengths (lens[1] = 0
 * with one spelling). Returns the number of keys (1 or 2) or a negative code; check
 * out->oom afterwards. */
int cw_key_unique_spellings(const cw_keys *k, cw_buf *out, const char *name, const gj_value *args,
                            size_t lens[2], cwork_error *err);

/* Puts the key a Go of that JSON spelling writes first: for CWORK_GO_JSON_121, swaps the
 * two keys cw_key_unique_spellings appended at off (and lens) when there are two, so that
 * lens[0] is the key with \u0008/\u000c. Nothing changes for one spelling or go1.22. */
void cw_key_unique_prefer(cw_buf *out, size_t off, size_t lens[2], cwork_go_json spelling);

/* The guard keys a unique job holds (the pool releases them when it fetches the job;
 * the client when it deletes the job). Appends the guard keys of job back to back and their lengths
 * to lens[0..1]: the key its unique_key names when it has one (upstream wrote it, or cwork under
 * the upstream flavour or ByKey), else the key of its decoded args as cw_key_unique_spellings gives
 * it (both escape spellings when they differ). Returns the number of keys (0 for a job
 * that is not unique) or a negative code (CWORK_EJSON for args JSON cannot hold); check
 * out->oom afterwards. */
int cw_unique_guard_keys(const cw_keys *k, const cwork_job *job, cw_buf *out, size_t lens[2],
                         cwork_error *err);

#endif
