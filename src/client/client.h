/* The admin client (PROTOCOL §11): internal pieces shared by client.c (queues, pools,
 * workers, pause, find), client_list.c (the retry, scheduled and dead sets: listing,
 * deleting, retrying, trimming) and client_json.c (workwebui's bodies). */
#ifndef CWORK_CLIENT_H
#define CWORK_CLIENT_H

#include "argv.h"
#include "job.h"
#include "keys.h"
#include "redis.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

typedef _Atomic(struct cwork_client *) cw_client_slot;

struct cwork_client {
    cwork_redis *redis; /* borrowed (a shard's client: owned when owned_redis) */
    cw_keys keys;
    _Atomic cwork_go_flavor flavor; /* of the JSON bodies (client_json.c); settable while
                                       other threads use the client */
    /* A sharded namespace (PROTOCOL §27; client_shards.c). The record is read on the
     * first call and again at most every CW_CLIENT_SHARDS_REREAD_MS; while it says one
     * shard, nothing else changes. */
    char *ns;
    bool shard_member;              /* one shard of a sharded client: never reads the record */
    cwork_redis *owned_redis;       /* a shard's clone of the redis handle (freed with it) */
    pthread_mutex_t shards_mu;      /* serialises record reads and the creation of shards */
    _Atomic int64_t shards_next_ms; /* monotonic ms of the next record read; 0: never read */
    _Atomic unsigned shards;        /* the record's count (1 without one) */
    /* CW_SHARDING_MAX slots once the count exceeded 1: slot i is shard i's client
     * (created under shards_mu, then never changed until cwork_client_free). */
    cw_client_slot *_Atomic shard_clients;
};

/* How often a client reads the shard record again (a count may be declared later). */
#define CW_CLIENT_SHARDS_REREAD_MS 5000

/* Members read per round trip when a set or list is scanned (filters, find), and jobs
 * handled per script call (retry-all, delete-all by name): Go's retry-all batch. */
#define CW_CLIENT_BATCH 1000

/* The largest page a list call returns. */
#define CW_CLIENT_MAX_PAGE_SIZE 1000

/* Logs a failed step under its "client.*" key (PROTOCOL §13) with the error's message and
 * returns rc. */
int cw_client_fail(const char *step, int rc, const cwork_error *err);

/* SMEMBERS of a set key appended to out, sorted (as Go's sort.Strings); members
 * containing NUL are left out (no key can be built from them). A damaged key
 * (WRONGTYPE) is noted (cw_damage_note) and reads as empty. */
int cw_client_smembers(cw_conn *c, const cw_buf *key, cw_argv *out, cwork_error *err);

/* Reads n pipelined replies into replies[0..n). Every reply is read even when one is
 * an error reply, which then fails the call (CWORK_EREDIS, the server's message); an
 * I/O error stops at once (the connection is then broken). On failure every reply read
 * so far is freed and replies[] is zeroed. */
int cw_client_read_replies(cw_conn *c, size_t n, redisReply **replies, cwork_error *err);
void cw_client_free_replies(redisReply **replies, size_t n);

/* A zset score as a listed job's `at`: whole seconds as Go writes them; any other score
 * (a fraction, a number past int64 or 2^53 written by another client, ±inf) rounded
 * down and clamped into int64, so that such a member is still listed and can be
 * addressed (cw_score_range). 0, or -1 when the text is no number. */
int cw_client_score(const redisReply *r, int64_t *out);
int cw_score_parse(const char *s, size_t len, int64_t *out);

/* The ZRANGEBYSCORE bounds of the scores that `at` stands for (the inverse of
 * cw_score_parse): [at, at + 1) for a whole or fractional score, at itself past 2^53,
 * and up to +inf (down to -inf) at the int64 limits. */
void cw_score_range(int64_t at, char min[24], char max[24]);

/* The key of a set; CWORK_EINVAL for an unknown enum value. */
int cw_client_set_key(const cw_keys *k, cwork_job_set set, cw_buf *out, cwork_error *err);

/* Script arguments (client_script.c): the key of set appended to a (CWORK_EINVAL for an
 * unknown set), and the queue <p>jobs:<name> of every name followed by <p>jobs: (the
 * requeueing scripts' keys and first argument). */
int cw_client_add_set_key(cw_argv *a, const cw_keys *k, cwork_job_set set, cwork_error *err);
void cw_client_add_queues(cw_argv *a, const cw_keys *k, const cw_argv *names);

/* The names in known_jobs appended to names, sorted. */
int cw_client_known_names(cw_conn *c, const cw_keys *k, cw_argv *names, cwork_error *err);

/* The same for a change that sends jobs to the queues of these names (retry, run now):
 * a damaged known_jobs would make every name unknown, and the scripts would rewrite each
 * job as "unknown job" where it is, so it fails the call instead (CWORK_ETYPE, err
 * naming it; nothing written). */
int cw_client_requeue_names(cw_conn *c, const cw_keys *k, cw_argv *names, cwork_error *err);

/* Runs one command (cw_conn_command) whose reply is n integers (cw_reply_ints). */
int cw_client_command_ints(cw_conn *c, int argc, const char **argv, const size_t *lens, int64_t *v,
                           size_t n, cwork_error *err);

/* DEL of the unique guard of each unique job among the members r->element[first..]
 * (job bytes a script removed; Go does this for the last one only, and a script cannot
 * build the key, which needs Go's JSON of the args): the key its unique_key names, else
 * its args' key in both escape spellings (upstream's client recomputes from args even
 * then, which misses ByKey guards). A failure is logged under step. */
int cw_client_delete_guards(cw_conn *c, const cw_keys *k, const redisReply *r, size_t first,
                            const char *step, cwork_error *err);

/* Finds a job by id as cwork_client_find does (into *out, the caller's to clear), and
 * also the key it was found in (appended to where) and, for an in-progress list, the
 * id of the pool that holds it. Returns 1 when found, 0 when not, or an error. */
int cw_client_find_job(cw_conn *c, const cw_keys *k, const char *id, cwork_job_place *place,
                       cwork_listed_job *out, cw_buf *where, char pool_id[25], cwork_error *err);

/* ---------------------------------------------------------------- damaged keys
 * (client_damage.c; cwork_client_damage). A read that meets WRONGTYPE on a key notes the
 * key on the calling thread's list and reads it as empty; before it gives its
 * connection back, the public call resolves what it noted (TYPE, and what the doctor's
 * table says the key should be). */

/* Whether r is Redis's WRONGTYPE error reply. */
int cw_client_wrong_type(const redisReply *r);

/* Notes key[0..len) as damaged (once). 0, or CWORK_ENOMEM (then it goes unnamed). */
int cw_damage_note(const char *key, size_t len);

/* The calling thread's count of notes (cw_damage_note, repeated ones too), and the key
 * first met among those noted (again) after mark, a count taken before: NULL when none.
 * The key is the list's (valid until the next cwork_client_damage_clear). So a call
 * learns which damaged keys it met itself, whatever the list held before it. */
uint64_t cw_damage_clock(void);
const char *cw_damage_met_since(uint64_t mark);

/* A change refused because key (len bytes) holds another type (a script said so): notes
 * it, resolves it on c (no reply pending) and returns CWORK_ETYPE with err saying
 * "KEY is a TYPE, expected a WANT (PURPOSE)". */
int cw_damage_named(cw_conn *c, const cw_keys *k, const char *key, size_t len, cwork_error *err);

/* When *r is a WRONGTYPE reply: notes key, frees *r, sets it to NULL and returns 1;
 * else 0 (*r untouched). */
int cw_damage_reply(redisReply **r, const char *key, size_t len);

/* A reply read for key (key, key_len): a WRONGTYPE error is noted and gives 0 with *r
 * NULL (the key reads as empty); any other error reply gives CWORK_EREDIS with Redis'
 * message and *r freed and NULL; else 0 with *r untouched. */
int cw_client_check_reply(redisReply **r, const char *key, size_t key_len, cwork_error *err);

/* Reads n pipelined replies as cw_client_read_replies does, the one to a command on
 * keys[i] (lens[i] bytes) into replies[i], except that a WRONGTYPE reply is noted and
 * leaves replies[i] NULL (that key reads as empty; cw_client_check_reply). Every reply is
 * read first, so that the connection stays in step. On failure every reply is freed and
 * replies[] zeroed. */
int cw_client_read_damaged(cw_conn *c, size_t n, redisReply **replies, const char *const *keys,
                           const size_t *lens, cwork_error *err);

/* One command on c with the rules of cw_conn_command, except that a WRONGTYPE reply
 * (key, key_len: the key it reads) is noted and gives 0 with *out NULL: the key reads
 * as empty. */
int cw_client_read_command(cw_conn *c, int argc, const char **argv, const size_t *lens,
                           const char *key, size_t key_len, redisReply **out, cwork_error *err);

/* After a call on set (0: none) failed with rc: when err says WRONGTYPE, checks the
 * type of set's key and of known_jobs on c (no reply pending), notes and resolves the
 * damaged ones and returns CWORK_ETYPE with err naming the first
 * (cw_damage_error); otherwise returns rc as it is. */
int cw_client_explain_wrongtype(cw_conn *c, const cw_keys *k, cwork_job_set set, int rc,
                                cwork_error *err);

/* Fills the type (TYPE on c, which must have no reply pending), the expected type and
 * the purpose of every key noted but not yet resolved; c NULL or a failed TYPE gives
 * "unknown". */
void cw_damage_resolve(cw_conn *c, const cw_keys *k);

/* Sets err to "KEY is a TYPE, expected a WANT (PURPOSE)" when key was noted and
 * resolved (else a generic line naming it) and returns rc: for a call that has nothing
 * left to show once the key is damaged. */
int cw_damage_error(cwork_error *err, int rc, const char *key, size_t len);

/* ---------------------------------------------------------------- sharded namespaces
 * (client_shards*.c). A public call first asks cw_client_shard_count; when it is above
 * 1 it answers from the shards' clients (each an unsharded client of one shard, on a
 * clone of the redis handle), merged. */

/* The shard count of client's namespace (reads the record when due, creating the
 * shards' clients the first time it exceeds 1): ≥ 1, or a negative error code (err
 * filled, logged). 1 for NULL and for a shard's own client, without any I/O. */
int cw_client_shard_count(cwork_client *client, cwork_error *err);

/* Shard i's client, i below a count cw_client_shard_count returned above 1. Borrowed. */
cwork_client *cw_client_shard_at(cwork_client *client, unsigned i);
/* cw_client_shard_count reading the record now, whatever the time of the last read (a
 * grow just made, §27.5). */
int cw_client_shards_reread(cwork_client *client, cwork_error *err);

/* Merged views (client_shards_merge.c, client_shards_list.c), S the count (> 1). */
int cw_shards_queues(cwork_client *c, unsigned s, cwork_queue_info **out, size_t *n,
                     cwork_error *err);
int cw_shards_pools(cwork_client *c, unsigned s, cwork_pool_heartbeat **out, size_t *n,
                    cwork_error *err);
int cw_shards_workers(cwork_client *c, unsigned s, cwork_worker_observation **out, size_t *n,
                      cwork_error *err);
int cw_shards_daily_stats(cwork_client *c, unsigned s, unsigned days, cwork_day_stats **out,
                          size_t *n, cwork_error *err);
int cw_shards_throughput(cwork_client *c, unsigned s, unsigned minutes, cwork_minute_stats **out,
                         size_t *n, cwork_error *err);
int cw_shards_list(cwork_client *c, unsigned s, cwork_job_set set, const cwork_list_query *q,
                   unsigned filters, cwork_listed_job **out, size_t *n, int64_t *total,
                   cwork_error *err);

/* A list of a sharded namespace paged as one (client_shards_list.c): read(arg, shard i's
 * client, i, page, size, ...) gives page `page` of `size` of shard i's list in its order
 * and the shard's total; the shards' lists are merged by key (NULL: the listed job's
 * `at`), ascending or descending, equal keys the lower shard first. */
typedef struct cw_shards_reader {
    int (*read)(void *arg, cwork_client *shard, unsigned i, unsigned page, unsigned size,
                cwork_listed_job **out, size_t *n, int64_t *total, cwork_error *err);
    int64_t (*key)(const cwork_listed_job *job);
    void *arg;
    bool descending;
} cw_shards_reader;

/* Page `page` (1-based; 0 counts as 1) of page_size (0: CWORK_PAGE_SIZE; at most
 * CW_CLIENT_MAX_PAGE_SIZE) of the merged list; *total (may be NULL) the shards' totals
 * added. Page p reads the first p pages of every shard. */
int cw_shards_pages(cwork_client *c, unsigned s, unsigned page, unsigned page_size,
                    const cw_shards_reader *rd, cwork_listed_job **out, size_t *n, int64_t *total,
                    cwork_error *err);

/* The search (newest first by score; info added up over the shards, max_scan each) and
 * a queue's waiting jobs (by enqueue time, oldest first), paged as one
 * (client_shards_search.c); listed waiting jobs deleted each in the shard holding it
 * (its id's shard first, the whole queue searched). */
int cw_shards_search(cwork_client *c, unsigned s, cwork_job_set set, const cwork_search_query *q,
                     cwork_listed_job **out, size_t *n, cwork_search_info *info, cwork_error *err);
int cw_shards_queue_jobs(cwork_client *c, unsigned s, const char *name, unsigned page,
                         unsigned page_size, cwork_listed_job **out, size_t *n, int64_t *total,
                         cwork_error *err);
int cw_shards_delete_waiting(cwork_client *c, unsigned s, const char *name,
                             const cwork_waiting_ref *jobs, size_t n, size_t *done,
                             size_t *unchanged, cwork_error *err);

/* client_shards_more.c: kept succeeded jobs merged newest first (limit in all), periodic
 * schedules folded by name and spec, a result or batch from the shard holding it (the
 * id's first; a result is waited for in the id's shard), the dead set trimmed in every
 * shard (older_than and keep per shard, removed added up), the doctor run in every
 * shard (findings shard by shard, each naming its shard's key) and a finding repaired
 * in the shard whose key it names (cw_shards_of_key: that shard, or -1). */
int cw_shards_succeeded(cwork_client *c, unsigned s, const char *name, size_t limit,
                        cwork_succeeded_job **out, size_t *n, cwork_error *err);
int cw_shards_periodic(cwork_client *c, unsigned s, cwork_periodic_schedule **out, size_t *n,
                       cwork_error *err);
int cw_shards_result(cwork_client *c, unsigned s, const char *id, int64_t wait_ms, char **out,
                     size_t *len, cwork_error *err);
int cw_shards_batch(cwork_client *c, unsigned s, const char *batch_id, cwork_batch_info *out,
                    cwork_error *err);
int cw_shards_trim_dead(cwork_client *c, unsigned s, int64_t older_than, int64_t keep,
                        int64_t *removed, cwork_error *err);
int cw_shards_doctor(cwork_client *c, unsigned s, unsigned flags, cwork_doctor_finding **out,
                     size_t *n, cwork_error *err);
int cw_shards_of_key(cwork_client *c, unsigned s, const char *key);
/* Every shard's rate limits, one entry per name: the one read in the name's shard, where
 * a limited type is pinned and its state kept (PROTOCOL §27.4), else the first shard's. */
int cw_shards_rate_limits(cwork_client *c, unsigned s, cwork_rate_limit_info **out, size_t *n,
                          cwork_error *err);
int cw_shards_doctor_repair(cwork_client *c, unsigned s, cwork_doctor_finding *f, cwork_error *err);

/* Calls on one job by id (client_shards_job.c): the id's shard first (where
 * cw_sharding_of routes a plain job), then the others, until one is not
 * CWORK_ENOTFOUND. */
int cw_shards_find(cwork_client *c, unsigned s, const char *id, cwork_job_place *place,
                   cwork_listed_job *out, cwork_error *err);
int cw_shards_story(cwork_client *c, unsigned s, const char *id, cwork_job_story *out,
                    cwork_error *err);
int cw_shards_cancel(cwork_client *c, unsigned s, const char *id, cwork_cancel_result *out,
                     cwork_error *err);
/* delete, retry (dead), run now, kill: action as in cwork_client_apply. */
int cw_shards_act(cwork_client *c, unsigned s, cwork_job_set set, cwork_job_action action,
                  int64_t at, const char *id, cwork_error *err);

/* Calls for the whole namespace, made in every shard in turn (client_shards_job.c);
 * the first failure stops it, counts summed over the shards done. */
typedef enum cw_shards_bulk_kind {
    CW_SHARDS_RETRY_ALL_DEAD,
    CW_SHARDS_DELETE_ALL_DEAD,
    CW_SHARDS_DELETE_ALL,
    CW_SHARDS_KILL_ALL,
    CW_SHARDS_RUN_ALL_NOW,
    CW_SHARDS_CLEAR_QUEUE,
    CW_SHARDS_PAUSE,
    CW_SHARDS_UNPAUSE,
    CW_SHARDS_SET_RATE_LIMIT
} cw_shards_bulk_kind;

typedef struct cw_shards_bulk {
    cw_shards_bulk_kind kind;
    cwork_job_set set;
    const char *name;
    unsigned limit_count; /* CW_SHARDS_SET_RATE_LIMIT */
    int64_t window_ms;
    int64_t count, stayed; /* summed */
} cw_shards_bulk;

int cw_shards_bulk_run(cwork_client *c, unsigned s, cw_shards_bulk *b, cwork_error *err);

/* The internal functions of the client files need a non-NULL err; the public ones
 * substitute a local one for a caller's NULL with this (they log every failure, so they
 * need its message either way). */
#define CW_CLIENT_ERR(err, local) ((err) ? (err) : (local))

#endif
