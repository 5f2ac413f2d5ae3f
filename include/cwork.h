/*
 * cwork — durable background jobs for C programs, kept in Redis.
 *
 * The Redis data model is the one of the Go library `work` (gocraft/work and its
 * Kuper-Tech fork): a Go service and a C service can share one namespace.
 *
 * Conventions (see also README.md):
 *  - Functions that can fail return int: 0 (CWORK_OK) or a negative CWORK_E… code,
 *    and fill an optional `cwork_error *` with a message. Nothing prints or exits.
 *  - One release verb: whatever the library allocated is released with a `_free`
 *    (NULL is ignored). An object (`_new`, `_parse`, `_start`) with its type's `_free`,
 *    which also stops what runs (cwork_pool_free, cwork_web_free); an array of records
 *    that own strings with the records' `_free(array, n)`; a filled struct that owns
 *    memory (cwork_job_types) with its `_free`, which leaves it empty; a plain buffer or
 *    an array of plain records with cwork_free. Borrowed pointers say until when they
 *    are valid.
 *  - Threads: each type and function says what may run at the same time. In short:
 *    cwork_redis, cwork_enqueuer and cwork_client are safe to share between threads;
 *    cwork_args, cwork_job and cwork_batch are one thread's at a time when changed
 *    (read-only use of a const object may be shared); a cwork_pool is configured from
 *    one thread before cwork_pool_start. A `_free` never runs while another thread
 *    still uses the object.
 *  - Threads the library starts (executors that run handlers, the maintenance and
 *    heartbeat threads, the web server's) block every asynchronous signal (all but
 *    SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP and SIGABRT), so the application's signal
 *    handlers and sigwait loops never run on them, and SIGPIPE never kills the process
 *    from one. Handlers and loggers run with that mask.
 *  - Durations that configure the library (timeouts, periods, grace) are milliseconds
 *    in int64_t, from 0 to 100 years. Delays of jobs (cwork_enqueue_in, a retry's
 *    backoff) are whole seconds, as the scores Redis keeps are; times are Unix seconds
 *    (int64_t) unless a name ends in _ms.
 *  - The library reads no environment variable, except TZ (and ZONEINFO, as Go) for
 *    the local zone of periodic schedules. The cwork command reads CWORK_REDIS_URL,
 *    CWORK_REDIS_PASSWORD, CWORK_WEB_AUTH, CWORK_GO_FLAVOR, CWORK_GO_JSON and
 *    CWORK_LOG_LEVEL and passes them as options.
 */
#ifndef CWORK_H
#define CWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CWORK_VERSION_MAJOR 0
#define CWORK_VERSION_MINOR 2
#define CWORK_VERSION_PATCH 0
/* "MAJOR.MINOR.PATCH" of the numbers above (the build reads them from here). */
#define CWORK_VERSION_STR_(x) #x
#define CWORK_VERSION_STR(x) CWORK_VERSION_STR_(x)
#define CWORK_VERSION_STRING                                                                       \
    CWORK_VERSION_STR(CWORK_VERSION_MAJOR)                                                         \
    "." CWORK_VERSION_STR(CWORK_VERSION_MINOR) "." CWORK_VERSION_STR(CWORK_VERSION_PATCH)

/* Checks a printf-style format and its arguments where the compiler can (GCC, Clang);
 * expands to nothing elsewhere. fmt_index and first_arg count parameters from 1. */
#if defined(__GNUC__) || defined(__clang__)
#define CWORK_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define CWORK_PRINTF(fmt_index, first_arg)
#endif

/* The library's version string ("MAJOR.MINOR.PATCH"); static storage. */
const char *cwork_version(void);

/* ------------------------------------------------------------------ errors */

enum {
    CWORK_OK = 0,
    CWORK_DUPLICATE = 1,      /* not an error: a unique job with the same args is waiting */
    CWORK_EINVAL = -1,        /* bad argument: invalid name, URL, option, non-object args */
    CWORK_ENOMEM = -2,        /* out of memory */
    CWORK_EREDIS = -3,        /* Redis unreachable, I/O error or error reply */
    CWORK_EPROTO = -4,        /* Redis answered something unexpected */
    CWORK_EJSON = -5,         /* malformed JSON, or a value JSON cannot hold (NaN, Inf) */
    CWORK_ETOOBIG = -6,       /* a job beyond the configured size limit */
    CWORK_ETIMEOUT = -7,      /* no connection became free in time, or a deadline passed */
    CWORK_ENOTFOUND = -8,     /* no such job, key or argument */
    CWORK_ETYPE = -9,         /* an argument exists but has another type */
    CWORK_EUNSUPPORTED = -10, /* a feature this build or this Redis lacks */
    CWORK_EJOBFAILED = -11    /* the handler failed the job (what cwork_job_fail returns) */
};

/* Short static description of a code ("redis error", …; "unknown error" for a value
 * that is no code). Thread-safe. */
const char *cwork_strerror(int code);
/* The code's name as written here ("CWORK_EINVAL", "CWORK_OK", …; "unknown" for a value
 * that is no code): for logs and test messages. Static storage; thread-safe. */
const char *cwork_err_name(int code);

/* Filled by failing calls when the caller passes one; message is NUL-terminated and
 * never contains a Redis password. One per call: don't share one between threads. */
typedef struct cwork_error {
    int code;
    char message[256];
} cwork_error;

/* ------------------------------------------------------------------ logging and memory */

typedef enum cwork_log_level {
    CWORK_LOG_DEBUG = 0,
    CWORK_LOG_INFO = 1,
    CWORK_LOG_WARN = 2,
    CWORK_LOG_ERROR = 3
} cwork_log_level;

typedef struct cwork_log_field {
    const char *key;
    const char *value;
} cwork_log_field;

/* Receives every log record at or above the configured level. message is a fixed key
 * (the Go library's keys where one exists, e.g. "worker.fetch"); fields are borrowed
 * for the duration of the call. Called from any thread that logs — the caller's, or a
 * library thread (asynchronous signals blocked) — often from several at once, so it
 * must be thread-safe. */
typedef void (*cwork_logger_fn)(void *userdata, cwork_log_level level, const char *message,
                                const cwork_log_field *fields, size_t nfields);

/* Installs the process-wide logger (fn NULL: silent, the default). Safe from any thread
 * at any time: the callback, userdata and level change together, as one (a record sees
 * the old three or the new three). A record being logged while the logger changes may
 * still reach the previous callback, so keep its userdata valid as long as library
 * threads may log (until pools and web servers are stopped). Each distinct
 * (fn, userdata, min_level) costs a few bytes kept until exit. 0, or CWORK_ENOMEM with
 * the previous logger left in place. */
int cwork_set_logger(cwork_logger_fn fn, void *userdata, cwork_log_level min_level);

/* A logger that writes "level=… msg=… key=value …" lines to stderr, one whole line per
 * record even from several threads; userdata unused. */
void cwork_stderr_logger(void *userdata, cwork_log_level level, const char *message,
                         const cwork_log_field *fields, size_t nfields);

/* Replaces the allocator used for everything cwork allocates (not hiredis' own).
 * Call once, before any other cwork function and before other threads may call one:
 * not synchronised. The functions must be thread-safe. */
void cwork_set_allocator(void *(*malloc_fn)(size_t), void *(*realloc_fn)(void *, size_t),
                         void (*free_fn)(void *));

/* Frees memory that a cwork function documents as "free with cwork_free". Thread-safe. */
void cwork_free(void *ptr);

/* ------------------------------------------------------------------ Redis connections */

/* A pool of Redis connections, shared by enqueuers, pools, clients and web servers:
 * safe to use from several threads at once (each call checks a connection out and
 * back in). */
typedef struct cwork_redis cwork_redis;

/* Durations in ms (int64_t), 0 to 100 years; outside that CWORK_EINVAL. */
typedef struct cwork_redis_options {
    int64_t connect_timeout_ms;    /* default (and 0) 5000 */
    int64_t command_timeout_ms;    /* default 5000; 0 = none */
    int max_connections;           /* default (and 0) 16 */
    int64_t checkout_timeout_ms;   /* how long to wait for a free connection, or for
                                      Redis to come back while re-dialling; default 5000 */
    const char *password;          /* used when the URL carries none (it keeps the
                                      password out of a URL that gets shown); NULL or "":
                                      none. The cwork command passes CWORK_REDIS_PASSWORD
                                      here. */
    const char *sentinel_password; /* the same for the sentinels of a redis+sentinel://
                                    URL, when it has no sentinel_password=. The cwork
                                    command passes CWORK_REDIS_SENTINEL_PASSWORD here. */
} cwork_redis_options;

/* Fills *opts with the defaults above. */
void cwork_redis_options_init(cwork_redis_options *opts);

/* Creates a connection pool. url:
 *   redis://[user:password@]host[:port][/db]   (a lone user-info is a password)
 *   rediss://… the same over TLS, with the query parameters ca=PATH (the CA file; else
 *     the system's store), cert=PATH and key=PATH (a client certificate, PEM, key not
 *     encrypted), sni=NAME (sent, and verified instead of the host), verify=0 (no
 *     verification at all: logged as a warning once, at creation). The certificate and
 *     the host name (or IP address) are verified by default.
 *   redis+sentinel://[user:password@]host1:port1[,host2:port2…]/MASTER_NAME[/db]
 *     (rediss+sentinel:// with TLS to sentinels and data nodes alike): the master the
 *     sentinels name (default port 26379), followed through failovers;
 *     sentinel_user= and sentinel_password= are the sentinels' own credentials
 *   redis+cluster://[user:password@]host1:port1[,host2:port2…] (rediss+cluster:// with
 *     TLS): Redis Cluster; the namespace of everything using the pool must carry a hash
 *     tag ({myapp} or myapp{1}; enqueuers, pools, clients and web servers refuse any
 *     other with CWORK_EINVAL), and one pool serves the slot of one namespace
 *   host:port, or unix:///path[?db=N]
 * and on any of them min_replicas=N (with min_replicas_timeout_ms=MS, default 1000):
 * enqueues wait until N replicas have acknowledged the job (WAIT) and fail otherwise;
 * a pool's commits wait too (a WAIT in the same round trip), and when the replicas do
 * not answer in time the pool logs a warning (redis.min_replicas) and goes on.
 * Also on any of them shards=S (1 to 1024): every enqueuer, pool and client made on
 * this handle declares that the namespace has S shards (PROTOCOL §27; as their own
 * shards settings do, which take precedence).
 * redis:// and unix: ignore query parameters they do not know, as Go does; the other
 * schemes refuse them. NULL means redis://127.0.0.1:6379. opts (copied) may be NULL.
 * TLS files are loaded here (errors name the file); connections are dialled on first
 * use. Returns NULL on error (filling err). Free with cwork_redis_free. Thread-safe. */
cwork_redis *cwork_redis_new(const char *url, const cwork_redis_options *opts, cwork_error *err);

/* Closes every connection. Only once nothing uses the pool any more: enqueuers,
 * clients, pools and web servers made on it are freed or stopped. NULL is ignored. */
void cwork_redis_free(cwork_redis *redis);

/* Sends PING on a pooled connection: a cheap check that Redis is reachable.
 * Thread-safe. */
int cwork_redis_ping(cwork_redis *redis, cwork_error *err);

/* Returns a copy of url with any password replaced by "xxxxx", for logs. Free with
 * cwork_free. Returns NULL only when out of memory. Thread-safe. */
char *cwork_redact_url(const char *url);

/* ------------------------------------------------------------------ Go flavours */

/* Which Go library the other processes of a namespace run; it decides what cwork
 * *writes* where the two differ (README "Go flavours"). Reading is flavour-blind:
 * whatever either flavour wrote, cwork honours it. Every cwork process of a namespace
 * should use the same setting.
 *  - CWORK_GO_FORK (the default): the Kuper-Tech fork. Unique jobs carry no
 *    unique_key, a duplicate leaves the guard alone, periodic instances carry `d`.
 *  - CWORK_GO_UPSTREAM: gocraft/work v0.5.x. Unique jobs carry `unique_key`, a
 *    duplicate re-arms the guard (24 h), periodic instances have no `d`.
 * The JSON bodies of jobs (web UI, cwork_client_list_json, cwork_job_encode_flavor)
 * show the fields that flavour's Job has, as its workwebui does: the fork's leave out
 * upstream's `unique_key`, upstream's the fork's `d` and `trace`. */
typedef enum cwork_go_flavor { CWORK_GO_FORK = 0, CWORK_GO_UPSTREAM = 1 } cwork_go_flavor;

/* "fork" or "upstream" (exactly) into *out; anything else (NULL included) is
 * CWORK_EINVAL with *out untouched. Thread-safe. */
int cwork_go_flavor_parse(const char *text, cwork_go_flavor *out, cwork_error *err);
/* "fork", "upstream", or "unknown" for a value outside the enum; static storage;
 * thread-safe. */
const char *cwork_go_flavor_name(cwork_go_flavor flavor);

/* How the Go processes of a namespace spell U+0008 and U+000C in JSON: Go 1.22 and later
 * write \b and \f, Go 1.21 and earlier \u0008 and \u000c (README "Go flavours").
 * Unique guard keys embed the args' JSON, so the spelling decides which guard a Go
 * process looks for; cwork writes guards (and upstream's `unique_key`, and periodic
 * instances) in the namespace's spelling, and reads, checks and deletes both.
 *  - CWORK_GO_JSON_122 (the default): "go1.22", \b and \f.
 *  - CWORK_GO_JSON_121: "go1.21", \u0008 and \u000c (Go 1.19 to 1.21). */
typedef enum cwork_go_json { CWORK_GO_JSON_122 = 0, CWORK_GO_JSON_121 = 1 } cwork_go_json;

/* "go1.22" or "go1.21" (exactly) into *out; anything else (NULL included) is CWORK_EINVAL
 * with *out untouched. Thread-safe. */
int cwork_go_json_parse(const char *text, cwork_go_json *out, cwork_error *err);
/* "go1.22", "go1.21", or "unknown" for a value outside the enum; static storage;
 * thread-safe. */
const char *cwork_go_json_name(cwork_go_json spelling);

/* ------------------------------------------------------------------ job arguments */

/* A JSON object of job arguments, built by the caller. Keys are written sorted, as Go
 * does. Numbers keep the C type they were given (int64 prints as an integer, double in
 * Go's float64 format); values parsed from JSON text are float64, as in Go.
 * Threads: not synchronised. A setter needs the object to itself (no other thread
 * reading or writing it); without setters running, any number of threads may read it
 * (the getters, cwork_args_to_json, and enqueue calls that take it as const). Separate
 * objects are independent. */
typedef struct cwork_args cwork_args;

/* An empty argument object; NULL when out of memory. Free with cwork_args_free. */
cwork_args *cwork_args_new(void);

/* Parses a JSON object (Go's rules: numbers become float64). Anything but an object
 * (including `null`) fails with CWORK_EJSON and *out untouched. */
int cwork_args_parse(const char *json, size_t len, cwork_args **out, cwork_error *err);

void cwork_args_free(cwork_args *args);

/* Setters copy key and value; setting an existing key replaces it. CWORK_EJSON for a
 * NaN/Inf double, CWORK_EINVAL for a NULL args, key or string, CWORK_ENOMEM when out of
 * memory. Values nest at most 9998 levels deep (so that the job stays decodable). */
int cwork_args_set_string(cwork_args *args, const char *key, const char *value);
int cwork_args_set_int64(cwork_args *args, const char *key, int64_t value);
int cwork_args_set_uint64(cwork_args *args, const char *key, uint64_t value);
int cwork_args_set_float64(cwork_args *args, const char *key, double value);
int cwork_args_set_bool(cwork_args *args, const char *key, bool value);
int cwork_args_set_null(cwork_args *args, const char *key);
/* Sets key to any JSON value given as text (nested objects and arrays). */
int cwork_args_set_json(cwork_args *args, const char *key, const char *json, size_t len,
                        cwork_error *err);

/* Reading arguments back, e.g. after cwork_args_parse. Keys are in insertion order;
 * the key is borrowed until the args are changed or freed. */
size_t cwork_args_count(const cwork_args *args);
const char *cwork_args_key_at(const cwork_args *args, size_t index);
/* Each getter returns 0, CWORK_ENOTFOUND when the key is absent, or CWORK_ETYPE when
 * its value has another type (a JSON null counts as absent). Strings are borrowed until
 * the args are changed or freed; get_float64 accepts any number; get_args copies a
 * nested object into a new cwork_args (the caller's, cwork_args_free), its numbers as
 * float64 like cwork_args_parse gives them. */
int cwork_args_get_string(const cwork_args *args, const char *key, const char **out);
int cwork_args_get_float64(const cwork_args *args, const char *key, double *out);
int cwork_args_get_bool(const cwork_args *args, const char *key, bool *out);
int cwork_args_get_args(const cwork_args *args, const char *key, cwork_args **out);
/* The value of key, whatever its type, in Go's encoding as cwork_args_to_json writes it
 * (a string with its quotes and escapes, a number, true/false, an array, an object; a
 * JSON null is a value here: "null"). *out is NUL-terminated, the caller's (free with
 * cwork_free); len may be NULL. CWORK_ENOTFOUND when the key is absent, CWORK_EINVAL
 * for a NULL args, key or out, CWORK_ENOMEM; *out is untouched on error. Safe from
 * several threads as long as nobody changes the args meanwhile. */
int cwork_args_get_json(const cwork_args *args, const char *key, char **out, size_t *len,
                        cwork_error *err);

/* Go's compact encoding of the object (sorted keys, HTML-safe escaping, Go floats).
 * *out is NUL-terminated; free with cwork_free. */
int cwork_args_to_json(const cwork_args *args, char **out, size_t *len, cwork_error *err);

/* ------------------------------------------------------------------ jobs */

/* A job as stored in Redis. Jobs returned to the caller are the caller's.
 * Threads: the accessors that take a const job only read it, and several threads may
 * call them at once. The typed argument accessors (cwork_job_arg_string …) take a
 * non-const job because they record the sticky argument error: they need the job to
 * themselves, like cwork_job_arg_error reading that error. The calls for a running job
 * (cwork_job_fail, cwork_job_checkin, …) are for the thread that runs its handler. */
typedef struct cwork_job cwork_job;

/* Decodes a job with Go's rules (any key order and escape style, field names matched
 * case-insensitively, the last duplicate wins; t/fails/failed_at/d must be integers).
 * Unlike Go, a top-level `null` is refused (CWORK_EJSON): it is no job.
 * The bytes are kept (cwork_job_raw). Free with cwork_job_free. */
int cwork_job_decode(const char *bytes, size_t len, cwork_job **out, cwork_error *err);

/* Go's canonical encoding of the job: every field it has, in Go's field order (name,
 * id, t, args, unique, unique_key, fails, err, failed_at, d, trace). *out is
 * NUL-terminated; free with cwork_free. */
int cwork_job_encode(const cwork_job *job, char **out, size_t *len, cwork_error *err);
/* The job as a Go process of that flavour renders it: CWORK_GO_FORK without upstream's
 * `unique_key` (the fork's Job has no such field); CWORK_GO_UPSTREAM without the fork's
 * `d` and `trace`. CWORK_EINVAL for an unknown flavour. */
int cwork_job_encode_flavor(const cwork_job *job, cwork_go_flavor flavor, char **out, size_t *len,
                            cwork_error *err);

void cwork_job_free(cwork_job *job);

/* Field accessors; strings are borrowed until the job is freed ("" when absent). */
const char *cwork_job_name(const cwork_job *job);
const char *cwork_job_id(const cwork_job *job);
int64_t cwork_job_enqueued_at(const cwork_job *job); /* `t` */
int64_t cwork_job_fails(const cwork_job *job);
const char *cwork_job_last_error(const cwork_job *job); /* `err` */
int64_t cwork_job_failed_at(const cwork_job *job);
bool cwork_job_unique(const cwork_job *job);
/* upstream's `unique_key`: the guard key a unique job was enqueued under ("" when the
 * job has none, as the fork's jobs). */
const char *cwork_job_unique_key(const cwork_job *job);
/* `d` of a periodic instance, the fork's starting deadline (Unix seconds: an instance
 * still waiting after it is discarded, PROTOCOL §10.3), or 0. Not the handler's timeout:
 * that is cwork_job_timeout_at_ms. */
int64_t cwork_job_periodic_deadline(const cwork_job *job);
/* run-at of a job returned by a delayed enqueue, else 0. */
int64_t cwork_job_run_at(const cwork_job *job);
/* The exact bytes the job was decoded from or written as; borrowed. */
const char *cwork_job_raw(const cwork_job *job, size_t *len);
/* The args object in Go's encoding ("null" when absent); free with cwork_free. */
char *cwork_job_args_json(const cwork_job *job);

/* Typed argument accessors with Go's rules: on a missing key or a wrong type they
 * return the zero value and keep an error on the job (sticky: later successes don't
 * clear it, a later failure replaces it). The string is borrowed until the job is freed.
 * int64 accepts integral numbers within ±9007199254740892, as Go does. Not safe
 * against other threads using the same job (they write the error). */
const char *cwork_job_arg_string(cwork_job *job, const char *key);
int64_t cwork_job_arg_int64(cwork_job *job, const char *key);
double cwork_job_arg_float64(cwork_job *job, const char *key);
bool cwork_job_arg_bool(cwork_job *job, const char *key);
/* The latest argument error's message (as Go's ArgError), or NULL; borrowed until the
 * job is freed. */
const char *cwork_job_arg_error(const cwork_job *job);

/* Default limit for an encoded job's size (1 MiB). */
#define CWORK_DEFAULT_MAX_JOB_BYTES (1024 * 1024)

/* Job names are rejected when empty, containing ',' or NUL, or shaped so that their
 * keys collide with other keys (ending in :lock, :lock_info, :paused,
 * :max_concurrency, or like x:<24 hex>:inprogress). Returns 0 or CWORK_EINVAL.
 * Thread-safe. */
int cwork_validate_job_name(const char *name, cwork_error *err);

/* ------------------------------------------------------------------ enqueuing */

/* Writes jobs to a namespace. Safe to share: any number of threads may enqueue through
 * one enqueuer at once, and its setters may run at the same time (each enqueue reads
 * the settings once, so it sees either value). Only cwork_enqueuer_free needs it to
 * itself. */
typedef struct cwork_enqueuer cwork_enqueuer;

/* An enqueuer for namespace ns (e.g. "work"; "work" and "work:" are the same, "" means
 * no prefix: the Go prefix rule) on redis, which it borrows: keep redis alive until
 * cwork_enqueuer_free. NULL on error (CWORK_EINVAL for a NULL redis or ns). Enqueuers,
 * clients, pools and web servers all take the namespace this way. */
cwork_enqueuer *cwork_enqueuer_new(cwork_redis *redis, const char *ns, cwork_error *err);
void cwork_enqueuer_free(cwork_enqueuer *enq);

/* Largest encoded job accepted (default CWORK_DEFAULT_MAX_JOB_BYTES); larger ones fail
 * with CWORK_ETOOBIG before anything is sent. NULL is ignored. Safe while other threads
 * enqueue. */
void cwork_enqueuer_set_max_job_bytes(cwork_enqueuer *enq, size_t max_bytes);

/* What this enqueuer writes for unique jobs (see cwork_go_flavor; default
 * CWORK_GO_FORK). Safe while other threads enqueue. 0, or CWORK_EINVAL for a NULL
 * enqueuer or an unknown flavour (nothing changes then). */
int cwork_enqueuer_set_go_flavor(cwork_enqueuer *enq, cwork_go_flavor flavor);

/* The JSON spelling of U+0008/U+000C in the unique guard keys (and `unique_key`) this
 * enqueuer writes (see cwork_go_json; default CWORK_GO_JSON_122). Whatever the setting, a
 * guard in either spelling makes a unique enqueue a duplicate. Safe while other threads
 * enqueue. 0, or CWORK_EINVAL for a NULL enqueuer or an unknown value (nothing changes
 * then). */
int cwork_enqueuer_set_go_json(cwork_enqueuer *enq, cwork_go_json spelling);

/* Declares how many shards enq's namespace has (1 to 1024; PROTOCOL §27, README
 * "Sharding"): a sharded namespace is that many complete namespaces, shard 0 the one
 * given to cwork_enqueuer_new and shard i "{<ns>.<i>}", and each job goes to one of them
 * (by its id; a unique job by its name and args or key; a type a pool pinned, one with a
 * concurrency or rate limit, by its name; a tracked batch's members to the batch's
 * shard). Checked at once against the record <ns>:cwork:shards: with no record a count
 * above 1 is written there (the first process to declare decides), and a record of
 * another count is refused. 1 declares an unsharded namespace: nothing is written, a
 * record of more shards is refused. 0 (the default) declares nothing: the enqueuer
 * follows the record, read before its first enqueue and again at most every 5 seconds,
 * so a namespace sharded later is followed (an unsharded one costs one HMGET per 5 s
 * and gets no key). The enqueuer then holds one connection pool per shard (a clone of
 * its redis: in a Redis Cluster each shard is served on its own slot). Safe while other
 * threads enqueue (their next enqueue follows it); best called before the first. A
 * record grown past the declared count (cwork_client_shards_grow) is refused here, the
 * message naming the count it was grown to; once this check has passed, the enqueuer's
 * later reads follow a grow.
 * 0; CWORK_EINVAL for a NULL enqueuer, a count above 1024, a namespace that cannot be
 * sharded (only a plain name, or one hash tag around one, can be), a declared count other than
 * the record's or a damaged record (the message names the key and both counts; nothing
 * is written, the enqueuer keeps what it had); CWORK_EREDIS when Redis cannot be read. */
int cwork_enqueuer_set_shards(cwork_enqueuer *enq, unsigned shards, cwork_error *err);

/* The largest delay (either sign) an enqueue takes: 100 years of 365.25 days. Further
 * is refused with CWORK_EINVAL before anything is sent: such a run-at overflows, or
 * passes 2^53 where scores stop being whole seconds. */
#define CWORK_MAX_DELAY_SECONDS 3155760000LL

/* How cwork_enqueue_ex writes a job. All zero (`cwork_enqueue_opts o = {0};`, or a NULL
 * pointer) is a plain enqueue: the job goes to its queue, to run now. Every field's zero
 * keeps the plain behaviour, and fields are only appended (docs/ABI.md). */
typedef struct cwork_enqueue_opts {
    /* Write the job through the scheduled set, to run delay_seconds from now (Go's
     * EnqueueIn; zero or negative: due at once, with that score); cwork_job_run_at tells
     * when. |delay_seconds| > CWORK_MAX_DELAY_SECONDS is CWORK_EINVAL, and so is a
     * delay_seconds other than 0 without delayed (nothing is written either way). */
    bool delayed;
    int64_t delay_seconds;
    /* Go's EnqueueUnique: only if no job with this name and these args is waiting (guard
     * key <p>unique:<name>:<args JSON>\n with a 24 h TTL); CWORK_DUPLICATE (and *out =
     * NULL) when one is. A guard written by a Go built before 1.22 (args with
     * U+0008/U+000C escaped as \u0008/\u000c rather than \b/\f) counts as well. Under
     * CWORK_GO_UPSTREAM the job carries `unique_key` and a duplicate re-arms the guard's
     * 24 h, as upstream does; under CWORK_GO_FORK a duplicate changes nothing. */
    bool unique;
    /* Upstream's EnqueueUniqueByKey (implies unique): unique by name and this key (a JSON
     * object like args) rather than by args, and a duplicate *replaces* the waiting job.
     * The job is written to its queue (or the scheduled set) with `unique_key` = the
     * guard's key, and the guard <p>unique:<name>:<key JSON>\n (24 h) holds the job's
     * JSON. When a job with that key is already waiting, nothing is queued: the guard
     * takes this job instead and its 24 h start again, and CWORK_DUPLICATE is returned
     * with *out (when out is not NULL) set to this job, the one that will run. The worker
     * that picks up the waiting entry (cwork's, or upstream Go's) runs the guard's job:
     * these args, this id. Written the same way under both flavours (the fork has no
     * ByKey; its Go workers ignore unique_key and would run the first job's args: run
     * ByKey job names on cwork or upstream pools only). A key that JSON cannot hold is
     * CWORK_EJSON. Borrowed for the call. */
    const cwork_args *unique_key;
} cwork_enqueue_opts;

/* Enqueues a job named name with args (NULL: written as `null`) as opts says (NULL: a
 * plain enqueue). Returns 0, CWORK_DUPLICATE for a unique job that found one waiting
 * (see cwork_enqueue_opts), or an error with nothing written: CWORK_EINVAL (a NULL enq
 * or name, a bad name, a bad delay, the field named), CWORK_EJSON, CWORK_ETOOBIG,
 * CWORK_EREDIS. On success, *out (if out is not NULL) receives the written job. The job
 * is pushed and its name recorded in known_jobs together (one command, or one script —
 * never MULTI, which an ACL may refuse): an error reply (a key of the wrong type, out of
 * memory, a command the ACL refuses) means nothing was written. Only when the
 * connection fails after the request was sent (a timeout, Redis dying) is the outcome
 * unknown, as with any Redis client; CWORK_EREDIS either way. Needs EVALSHA/EVAL (the
 * first enqueue of a name, and unique jobs) and LPUSH/ZADD; PUBLISH is optional (a
 * refused wake-up is logged, the job is written). In a sharded namespace, for a while
 * after a call to a shard whose node did not answer, calls routed to that shard fail at
 * once with CWORK_EREDIS, nothing written, the message naming the shard and its node
 * (PROTOCOL §27.3). Thread-safe as the enqueuer. */
int cwork_enqueue_ex(cwork_enqueuer *enq, const char *name, const cwork_args *args,
                     const cwork_enqueue_opts *opts, cwork_job **out, cwork_error *err);

/* Go's six enqueue calls, kept as thin wrappers of cwork_enqueue_ex for code written
 * (or ported from Go) in their terms; each is exactly cwork_enqueue_ex with the options
 * its name says, and nothing else:
 *  - cwork_enqueue: none (Go's Enqueue);
 *  - cwork_enqueue_in: delayed, delay_seconds = seconds (EnqueueIn);
 *  - cwork_enqueue_unique: unique (EnqueueUnique);
 *  - cwork_enqueue_unique_in: unique, delayed (EnqueueUniqueIn);
 *  - cwork_enqueue_unique_by_key: unique, unique_key = key (EnqueueUniqueByKey; with
 *    key NULL, cwork_enqueue_unique);
 *  - cwork_enqueue_unique_in_by_key: all three (EnqueueUniqueInByKey). */
int cwork_enqueue(cwork_enqueuer *enq, const char *name, const cwork_args *args, cwork_job **out,
                  cwork_error *err);
int cwork_enqueue_in(cwork_enqueuer *enq, const char *name, int64_t seconds, const cwork_args *args,
                     cwork_job **out, cwork_error *err);
int cwork_enqueue_unique(cwork_enqueuer *enq, const char *name, const cwork_args *args,
                         cwork_job **out, cwork_error *err);
int cwork_enqueue_unique_in(cwork_enqueuer *enq, const char *name, int64_t seconds,
                            const cwork_args *args, cwork_job **out, cwork_error *err);
int cwork_enqueue_unique_by_key(cwork_enqueuer *enq, const char *name, const cwork_args *args,
                                const cwork_args *key, cwork_job **out, cwork_error *err);
int cwork_enqueue_unique_in_by_key(cwork_enqueuer *enq, const char *name, int64_t seconds,
                                   const cwork_args *args, const cwork_args *key, cwork_job **out,
                                   cwork_error *err);

/* A batch of jobs for one round trip; reusable after cwork_batch_reset. Not
 * synchronised: one thread at a time per batch (several batches of one enqueuer may be
 * used by several threads). */
typedef struct cwork_batch cwork_batch;

#define CWORK_BATCH_UNIQUE 1 /* entry flag: enqueue as a unique job */
#define CWORK_BATCH_IN                                                                             \
    2 /* entry flag: run delay_seconds from now (through the                                       \
         scheduled set; zero or negative: due at once) */

/* A batch for enq (borrowed: keep it alive while the batch is used). NULL when out of
 * memory. */
cwork_batch *cwork_batch_new(cwork_enqueuer *enq);
void cwork_batch_free(cwork_batch *batch);
void cwork_batch_reset(cwork_batch *batch);
size_t cwork_batch_count(const cwork_batch *batch);

/* Adds a job: to its queue, or with CWORK_BATCH_IN in flags through the scheduled set
 * delay_seconds from now (ignored without that flag; at most CWORK_MAX_DELAY_SECONDS
 * either way). The name, delay and args are validated and encoded here (errors:
 * CWORK_EINVAL, CWORK_EJSON, CWORK_ETOOBIG) so that a bad entry is refused before
 * anything is sent. The entry's shard is chosen here too (see
 * cwork_enqueuer_set_shards), so an add may read the namespace's shard record (at most
 * once per 5 s per enqueuer): CWORK_EREDIS when it cannot, CWORK_EINVAL when it is
 * damaged; the entry is not added then. */
int cwork_batch_add(cwork_batch *batch, const char *name, const cwork_args *args,
                    int64_t delay_seconds, int flags, cwork_error *err);

/* Sends the whole batch in one round trip (one script call) that writes every entry or
 * none: returns 0 when every entry was written or found a duplicate (per-entry outcomes
 * CWORK_OK or CWORK_DUPLICATE through cwork_batch_status), or an error with nothing
 * written (a key of the wrong type, out of memory, a refused command) — every entry
 * then reports CWORK_EREDIS. A connection that fails while waiting for the reply (a
 * timeout on a huge batch, Redis dying) leaves the outcome unknown, also reported as
 * CWORK_EREDIS, so keep batches small enough for the command timeout. In a sharded
 * namespace the entries are grouped by shard and each group is sent as above to its
 * shard (one round trip each): every group is written entirely or not at all, every
 * group is tried, the first error is returned, and cwork_batch_status tells which
 * entries were written; a group whose shard backs off (see cwork_enqueue_ex) fails at
 * once. */
int cwork_enqueue_batch(cwork_batch *batch, cwork_error *err);

/* Outcome of entry i after cwork_enqueue_batch; the job id through *id (borrowed until
 * the batch is reset or freed). */
int cwork_batch_status(const cwork_batch *batch, size_t i, const char **id);

/* ------------------------------------------------------------------ tracked batches */

/* A tracked batch (PROTOCOL §23): jobs enqueued in one or more calls, counted as cwork
 * pools finish them, and one callback job enqueued exactly once when the batch is sealed
 * and every job counted. Its id is 24 lower-case hex digits. Chains ("run B after A"):
 * a batch of one job whose callback is B. Only cwork pools count: a job of a batch run
 * by a Go pool is never counted (README, mixed fleets). */
typedef enum cwork_batch_when {
    CWORK_BATCH_ON_SUCCESS = 1, /* when every job succeeded; never once one is dead */
    CWORK_BATCH_ON_COMPLETE = 2 /* when every job succeeded or is dead */
} cwork_batch_when;

/* Opens a batch in enq's namespace whose callback is a job named callback with
 * callback_args (NULL: none) plus batch_total, batch_succeeded, batch_dead and
 * batch_id, which callback_args may therefore not hold. The id goes to id_out. One
 * command (in a sharded namespace, in the shard of the batch's id, where its members,
 * seal and reads go too); thread-safe as the enqueuer. 0, CWORK_EINVAL (bad name, when or args key,
 * named in err), CWORK_EJSON, CWORK_EREDIS. */
int cwork_batch_open(cwork_enqueuer *enq, cwork_batch_when when, const char *callback,
                     const cwork_args *callback_args, char id_out[25], cwork_error *err);

/* Makes every job added to batch from now on (and after cwork_batch_reset) a member of
 * the open batch batch_id (NULL: none again); call it while batch holds no job. Members
 * cannot be unique (CWORK_BATCH_UNIQUE is refused). cwork_enqueue_batch then adds the
 * jobs to the batch's total in the same script call that writes them, and refuses
 * (CWORK_EREDIS, nothing written) when the batch does not exist or is sealed. Sharded
 * namespace: the jobs go to the shard of the batch's id, and when the batch is not there,
 * to the shard its id went to before a grow that holds it (PROTOCOL §27.5; asked only
 * after such a refusal, one EXISTS per shard asked). 0 or CWORK_EINVAL. */
int cwork_batch_join(cwork_batch *batch, const char *batch_id, cwork_error *err);

/* Seals the batch: no job can join it any more, and its callback is enqueued as soon as
 * every job is counted (at once if they already are). Sealing again is harmless (returns
 * 0; it retries a callback that a damaged queue refused). Thread-safe as the enqueuer.
 * 0, CWORK_EINVAL (bad id), CWORK_ENOTFOUND (no such batch, or expired), CWORK_ETYPE
 * (the batch key holds another type than a hash: err names it; nothing written),
 * CWORK_EREDIS. Sharded namespace: in the shard of its id, and when it is not there, in
 * the shards its id went to before a grow (PROTOCOL §27.5), one more call each. */
int cwork_batch_seal(cwork_enqueuer *enq, const char *batch_id, cwork_error *err);

typedef enum cwork_batch_callback_state {
    CWORK_BATCH_CALLBACK_WAITING = 0,  /* not sealed, or jobs still to count */
    CWORK_BATCH_CALLBACK_ENQUEUED = 1, /* the callback job was pushed (once) */
    CWORK_BATCH_CALLBACK_SKIPPED = 2   /* on_success, and a job died: never fires */
} cwork_batch_callback_state;

/* A batch as read by cwork_batch_read. pending = total − succeeded − retrying − dead. */
typedef struct cwork_batch_info {
    int64_t total, pending, succeeded, retrying, dead;
    bool sealed;
    cwork_batch_when when;
    cwork_batch_callback_state callback_state;
    char callback[256];   /* the callback's job name (truncated past 255 bytes) */
    int64_t created_at;   /* Unix seconds */
    int64_t completed_at; /* when the callback was settled, or 0 */
    int64_t ttl;          /* seconds until the batch's keys expire, or -1 while running */
} cwork_batch_info;

/* Reads batch batch_id (HGETALL and TTL, one round trip). Thread-safe as the enqueuer. 0,
 * CWORK_EINVAL (bad id), CWORK_ENOTFOUND (no such batch, or expired), CWORK_EPROTO (a damaged hash,
 * the field named), CWORK_EREDIS. Sharded namespace: in the shard of its id, and when it is
 * not there, in the shards its id went to before a grow (PROTOCOL §27.5), one more round
 * trip each. */
int cwork_batch_read(cwork_enqueuer *enq, const char *batch_id, cwork_batch_info *out,
                     cwork_error *err);

/* ------------------------------------------------------------------ dead pool reaper */

/* What one reaper cycle did (the C form of Go's ReapResult). Borrowed for the duration
 * of the callback. Lists may repeat names and have no defined order. */
typedef struct cwork_reap_result {
    const char *error;                    /* the passes' errors joined, or NULL */
    const char *const *no_heartbeat_jobs; /* pass 1: job names of dead pools */
    size_t n_no_heartbeat_jobs;
    const char *const *unknown_pool_jobs; /* pass 2: job names of unknown pools */
    size_t n_unknown_pool_jobs;
    const char *const *dangling_lock_jobs; /* pass 3: job names whose lock was fixed */
    size_t n_dangling_lock_jobs;
} cwork_reap_result;

typedef void (*cwork_reap_done)(const cwork_reap_result *result, void *userdata);
/* Called on the pool's maintenance thread (asynchronous signals blocked) at the start
 * of every reaper cycle that holds the reaper lock; may return a function to be called,
 * on that thread, with the cycle's result. */
typedef cwork_reap_done (*cwork_reaper_hook)(void *userdata);

/* ------------------------------------------------------------------ worker pools */

/* A pool of executor threads that run handlers for jobs of registered types, fetched
 * from the namespace's queues (which Go or C may fill), with Go's Redis effects:
 * in-progress lists, locks, retries with backoff, the dead set, heartbeats.
 * Delivery is at least once: a job can run twice (a crash after its handler, a pool
 * wrongly judged dead), so handlers must be idempotent.
 * Threads: configure a pool (cwork_pool_register, cwork_pool_use,
 * cwork_pool_periodically_enqueue) from one thread before cwork_pool_start — those
 * calls are not synchronised, and after the start they fail with CWORK_EINVAL. Start,
 * stop and free belong to the pool's owner: cwork_pool_stop may run in several threads
 * at once (one waits for the other) but not beside cwork_pool_start or cwork_pool_free.
 * While the pool runs, any thread may call cwork_pool_get_stats, cwork_pool_id,
 * cwork_pool_watchdog_stats and cwork_pool_drain. Handlers, middleware, the context
 * and backoff callbacks run on library threads (asynchronous signals blocked), several
 * at once: they must be thread-safe. */
typedef struct cwork_pool cwork_pool;

/* The rest of a middleware chain. */
typedef struct cwork_next cwork_next;

/* Runs a job, on one of the pool's executor threads (asynchronous signals blocked; see
 * the conventions at the top). ctx is the job's context (cwork_pool_options.context_size
 * bytes, made fresh for each job), NULL when the pool has none. Return 0 for success;
 * anything else (such as cwork_job_fail's CWORK_EJOBFAILED) fails the job. The job is
 * borrowed for the call. */
typedef int (*cwork_handler)(cwork_job *job, void *ctx);

/* Wraps every handler: call cwork_next_call(next) to run the rest of the chain (later
 * middleware, then the handler) and return its result, or return without calling it to
 * skip the rest. Middleware run in registration order, the first outermost. */
typedef int (*cwork_middleware)(cwork_job *job, void *ctx, cwork_next *next);
int cwork_next_call(cwork_next *next);

/* Fails the running job with a printf-style message that becomes its `err` (the last
 * message wins; at most 1023 bytes are kept). Returns CWORK_EJOBFAILED, so a handler
 * can `return cwork_job_fail(job, "…")` and a caller can tell the job's failure from an
 * error of its own; CWORK_EINVAL (the job is not being run by a pool: NULL, decoded by
 * the caller, or its handler returned) means nothing was recorded. From the thread
 * running the job's handler. */
int cwork_job_fail(cwork_job *job, const char *fmt, ...) CWORK_PRINTF(2, 3);

/* Fails the running job as cwork_job_fail does (same message rules), and without retry:
 * whatever its fails and its type's max_fails, the job goes to the dead set at once, its
 * fails counting this failure (dropped instead when its type has skip_dead, in either
 * meaning, as when retries run out). For a job that can never succeed, e.g. bad args.
 * The mark sticks for this run: a later cwork_job_fail changes only the message.
 * Returns CWORK_EJOBFAILED (so a handler can `return cwork_job_fail_no_retry(job, "…")`),
 * or CWORK_EINVAL when job is not running in a pool, which changes nothing. Call it, as
 * cwork_job_fail, only from the thread running the job (its handler or middleware); the
 * message is copied. */
int cwork_job_fail_no_retry(cwork_job *job, const char *fmt, ...) CWORK_PRINTF(2, 3);

/* The largest result cwork_job_set_result takes (1 MiB). */
#define CWORK_RESULT_MAX_BYTES (1024 * 1024)

/* Sets the running job's result: len bytes (any bytes; len 0 is an empty result),
 * copied. A later call replaces it. Written to Redis only if the job succeeds, by the
 * same script call that removes it from in-progress, and kept for its type's
 * result_ttl_ms under <p>cwork:result:<id> (PROTOCOL §22); a failed run's result is
 * discarded and leaves an earlier result of the same id as it was. Returns 0;
 * CWORK_EINVAL (nothing recorded) for more than CWORK_RESULT_MAX_BYTES, NULL bytes with
 * len > 0, or a job no pool is running; CWORK_ENOMEM. From the thread running the job. */
int cwork_job_set_result(cwork_job *job, const void *bytes, size_t len);

/* Publishes a progress message for the running job (shown by web UIs as its check-in;
 * written to Redis at most once a second). The message is copied. Safe from any thread
 * while the job runs; ignored for a job that no pool is running. */
void cwork_job_checkin(cwork_job *job, const char *message);

/* When the running job should be done, as Unix milliseconds: start + the job type's
 * timeout_ms (cwork_job_options); 0 when the type has none. A handler that runs past it is logged
 * ("job.overrun"), not killed: in-process code cannot be stopped safely. */
int64_t cwork_job_timeout_at_ms(const cwork_job *job);

/* The userdata of the pool running the job (cwork_pool_options.userdata); NULL for a
 * job no pool is running. */
void *cwork_job_userdata(const cwork_job *job);

/* Why a running job was asked to stop early. The job's fate is decided by whoever asked:
 * a cancelled job goes to the dead set with err "cancelled" whatever its handler
 * returns (PROTOCOL §21). */
typedef enum cwork_stop_reason {
    CWORK_STOP_NONE = 0,      /* not asked to stop */
    CWORK_STOP_CANCELLED = 1, /* an operator cancelled it (cwork_client_cancel) */
    CWORK_STOP_TIMEOUT = 2,   /* reserved: its type's timeout passed */
    CWORK_STOP_LEASE_LOST = 3 /* its pool can no longer prove it owns the job: its
                                 heartbeat was not renewed in time, or a reaper took the
                                 job back (README "Leases"); another pool may run it */
} cwork_stop_reason;

/* A job asked to stop with CWORK_STOP_LEASE_LOST should be over within this many
 * milliseconds: the pool's lease ends soon after, and another pool may then start the
 * job. `cwork work` kills the command's process tree after at most this grace. Such a
 * job is not committed by its pool, whatever its handler returns. */
#define CWORK_LEASE_STOP_GRACE_MS 1500

/* Whether, and why, the running job has been asked to stop. A handler that runs long
 * should poll it (or wait on cwork_job_stop_fd) and return soon after it turns non-zero;
 * nothing stops an in-process handler by force. CWORK_STOP_NONE for a job no pool is
 * running. Safe from any thread while the job runs. */
cwork_stop_reason cwork_job_stop_reason(const cwork_job *job);

/* cwork_job_stop_reason(job) == CWORK_STOP_CANCELLED. */
bool cwork_job_cancelled(const cwork_job *job);

/* A file descriptor that becomes readable once the running job is asked to stop (it is
 * never written to otherwise), for a handler that waits in poll()/select() on its own
 * I/O. Owned by the pool, made on the first call, closed when the handler returns: do
 * not read, write or close it. -1 (errno set) when it cannot be made or no pool runs
 * the job. From the thread running the job's handler. */
int cwork_job_stop_fd(cwork_job *job);

/* Durations in ms (int64_t), 0 to 100 years (else CWORK_EINVAL); 0 means the default. */
typedef struct cwork_pool_options {
    unsigned concurrency; /* executor threads, 1–10000; default 10 */
    size_t context_size;  /* bytes of zeroed per-job context; 0: ctx is NULL */
    /* Called on each fresh context before the chain runs (optional); a non-zero return
     * fails the job without running it. */
    int (*context_init)(void *ctx, void *userdata);
    void (*context_free)(void *ctx, void *userdata); /* optional, after the chain */
    void *userdata;                /* handed to the callbacks above and cwork_job_userdata */
    int64_t idle_backoff_max_ms;   /* cap of the idle poll backoff (0, 1, 10, 100 ms …);
                                      default 100 */
    bool single_fetch;             /* move one job per script step even on Redis ≥ 6.2 (the
                                      path older servers use; for tests) */
    bool no_wakeups;               /* don't subscribe to enqueue wake-ups; poll only (the
                                      pool still subscribes to its cancel channel) */
    int64_t reap_period_ms;        /* full reaper cycle every period + rand(0..29) s; default
                                      300000 (Go's fork's 5 minutes, where it is also the
                                      reaper lock's TTL; cwork holds the lock as a 5 s lease
                                      renewed while a cycle runs) */
    int64_t dead_check_ms;         /* how often the cheap check for stale heartbeats runs; it
                                      starts a reaper cycle at once when it sees one; default
                                      5000 */
    cwork_reaper_hook reaper_hook; /* optional */
    void *reaper_hook_userdata;
    int64_t watchdog_timeout_ms; /* periodic fire times older than this count as
                                    skipped (whole seconds: rounded up); default
                                    60000 */
    /* What the pool writes: periodic instances in this flavour's bytes (upstream's have
     * no `d`). Whatever the setting, fetched unique jobs release their guard as both
     * flavours expect (unique_key, a replacement job in the guard, both escape
     * spellings), and the pool warns once per kind when it meets the other flavour's
     * periodic instances or, under CWORK_GO_FORK, a job with unique_key.
     * cwork_pool_new fails with CWORK_EINVAL for an unknown value. Default fork. */
    cwork_go_flavor go_flavor;
    /* How the pool's periodic instances spell U+0008/U+000C in a name or spec (see
     * cwork_go_json), so that they match the Go pools' members of the same fire time.
     * Fetched unique jobs release their guard in both spellings whatever the setting.
     * cwork_pool_new fails with CWORK_EINVAL for an unknown value. Default go1.22. */
    cwork_go_json go_json;
    /* Namespace shards (PROTOCOL §27): 0 (the default) follows the namespace's record
     * <p>cwork:shards (one shard when there is none) or what the Redis URL's shards=
     * declares; 1–1024 declares the count:
     * cwork_pool_start writes the record when there is none and fails with CWORK_EINVAL
     * (naming the key and both counts) when it holds another. A pool on S > 1 shards
     * serves every shard, each with a Redis pool of its own (cloned from redis), and
     * splits concurrency between them (so concurrency must be at least S; CWORK_EINVAL
     * from cwork_pool_new or, following the record, cwork_pool_start). Types with
     * max_concurrency or a rate limit run only in the shard of their name (README
     * "Sharding", PROTOCOL §27.4). Once it has started on S > 1 shards, cwork_pool_register,
     * cwork_pool_use and cwork_pool_periodically_enqueue fail with CWORK_EINVAL even while
     * it is stopped (the shards' pools took the registrations). A running pool follows a
     * grow of the record (cwork_client_shards_grow, read every second): it starts a pool
     * for each new shard; a declared count the record was grown past fails
     * cwork_pool_start with CWORK_EINVAL naming the new count. One shard: exactly an
     * unsharded pool. */
    unsigned shards;
} cwork_pool_options;

/* Fills *opts with the defaults above. */
void cwork_pool_options_init(cwork_pool_options *opts);

typedef struct cwork_job_options {
    unsigned priority;  /* 1–100000, weight in queue selection; default 1 */
    unsigned max_fails; /* runs before the job goes to dead; default 4; 1 = no retry */
    /* The Go fork's SkipDead: a failing job is dropped at once, never retried nor sent to
     * dead. With skip_dead_after_retries as well, upstream's meaning instead: retried as
     * usual, and dropped instead of going to dead when the retries are exhausted. */
    bool skip_dead;
    bool skip_dead_after_retries;
    unsigned max_concurrency; /* jobs of this type in flight across all pools; 0 = any */
    /* Seconds (a job's delay: whole seconds, as retry scores are) until the retry of a
     * job that just failed (cwork_job_fails counts this failure); NULL: Go's default
     * fails⁴ + 15 + rand(0..29) × (fails + 1). Either is kept within
     * ±CWORK_MAX_DELAY_SECONDS. Called on a library thread, possibly several at once. */
    int64_t (*backoff)(const cwork_job *job, void *userdata);
    void *backoff_userdata;
    int64_t timeout_ms; /* a handler's time (cwork_job_timeout_at_ms); 0 = none */
    /* At most rate_limit jobs of this type start per rate_limit_window_ms, across every
     * cwork pool of the namespace (PROTOCOL §20: starts are scheduled window / N apart
     * on Redis' clock; any window holds at most N + 1). 0 = none. cwork_pool_start writes it to the
     * namespace's setting, which `cwork limit` and cwork_client_set_rate_limit change while pools
     * run; the setting, not this option, is what pools follow. Go pools ignore it. rate_limit
     * 1–1000000000, window 1 ms to 7 days (cwork_pool_register: CWORK_EINVAL). */
    unsigned rate_limit;
    int64_t rate_limit_window_ms;
    /* How long a result set with cwork_job_set_result is kept after the job succeeded
     * (PROTOCOL §22); 0 = 24 h; at most 100 years (else CWORK_EINVAL). */
    int64_t result_ttl_ms;
    /* Keep the last keep_succeeded succeeded jobs of the type (with when they ran and how
     * long they took; cwork_client_succeeded lists them), none older than
     * keep_succeeded_ms (0 = 7 days; at most 100 years). 0 = keep none (the default):
     * the commit then writes nothing more than before. Trimmed by the pools' commits. */
    unsigned keep_succeeded;
    int64_t keep_succeeded_ms;
} cwork_job_options;

void cwork_job_options_init(cwork_job_options *opts);

/* Parses a rate limit "N/DURATION": N 1–1000000000 jobs, DURATION a whole number
 * (optional: 1) of ms, s, m or h, from 1 ms to 7 days — "100/1s", "5000/1m", "10/s".
 * 0, or CWORK_EINVAL naming what is wrong (*count and *window_ms untouched). Thread-safe. */
int cwork_rate_limit_parse(const char *text, unsigned *count, int64_t *window_ms, cwork_error *err);
/* Writes the canonical text of a rate limit ("100/1s", "5000/1m": the largest unit
 * that divides the window) into buf, which needs at least 32 bytes. 0, or CWORK_EINVAL
 * for a smaller buffer or a limit out of the ranges above. Thread-safe. */
int cwork_rate_limit_format(unsigned count, int64_t window_ms, char *buf, size_t size,
                            cwork_error *err);

/* A stopped pool for namespace ns (as cwork_enqueuer_new takes it) on redis (borrowed:
 * keep it alive until cwork_pool_free). opts (copied) may be NULL for the defaults.
 * NULL on error (CWORK_EINVAL for a NULL redis or ns, or a bad option). */
cwork_pool *cwork_pool_new(cwork_redis *redis, const char *ns, const cwork_pool_options *opts,
                           cwork_error *err);

/* Registers handler for job name (validated as for enqueue); opts (copied) may be NULL.
 * Registering a name again replaces it. Only before cwork_pool_start, from the thread
 * that configures the pool; at most 2000 job types per pool (CWORK_EINVAL beyond). */
int cwork_pool_register(cwork_pool *pool, const char *name, cwork_handler handler,
                        const cwork_job_options *opts, cwork_error *err);

/* Adds a middleware (outermost first). Only before cwork_pool_start, from the thread
 * that configures the pool. */
int cwork_pool_use(cwork_pool *pool, cwork_middleware middleware, cwork_error *err);

/* Writes max_concurrency and known_jobs for the registered types, beats the first
 * heartbeat, and starts the threads. Returns once the pool is fetching. Warns (through
 * the logger) when Redis' maxmemory-policy could evict jobs. */
int cwork_pool_start(cwork_pool *pool, cwork_error *err);

/* Stops fetching, lets running jobs finish within grace_ms and commits them, then
 * removes the pool's heartbeat and lock_info fields. If handlers still run or commits
 * still fail at the deadline, returns CWORK_ETIMEOUT and leaves the heartbeat and the
 * in-progress entries for a reaper (the threads of a running handler are left to finish
 * on their own; the pool must not be freed then until cwork_pool_stop returns 0 on a
 * later call). Stopping a stopped pool returns 0. grace_ms < 0 counts as 0; more than
 * 100 years as 100 years. */
int cwork_pool_stop(cwork_pool *pool, int64_t grace_ms, cwork_error *err);

/* Waits until the registered queues are empty and nothing is in flight, up to
 * timeout_ms (< 0, or more than 100 years: forever). CWORK_ETIMEOUT when time runs out;
 * CWORK_EINVAL for a pool that is not started. The pool keeps running. */
int cwork_pool_drain(cwork_pool *pool, int64_t timeout_ms, cwork_error *err);

/* Stops the pool (30 s grace) if needed and frees it. */
void cwork_pool_free(cwork_pool *pool);

/* The pool's id (24 hex characters), as in its heartbeat; borrowed until the pool is
 * freed. Thread-safe. */
const char *cwork_pool_id(const cwork_pool *pool);

typedef struct cwork_pool_stats {
    uint64_t fetched; /* jobs taken from queues */
    uint64_t succeeded;
    uint64_t failed;    /* handler failures (retried, dead or dropped) */
    uint64_t retried;   /* failures sent to the retry set */
    uint64_t dead;      /* sent to the dead set */
    uint64_t in_flight; /* fetched and not yet committed */
} cwork_pool_stats;

/* A snapshot of the pool's counters since it was created. Thread-safe. */
void cwork_pool_get_stats(const cwork_pool *pool, cwork_pool_stats *stats);

/* Schedules job name by cron spec (robfig/cron v3 syntax as the Go library takes it:
 * optional seconds field, descriptors like @hourly, @every 5m, a TZ=Zone prefix; without
 * one, the process's local zone). Instances are written to the scheduled set ahead of
 * time, byte-identical to those of the Go flavour in cwork_pool_options.go_flavor, so
 * Go and C pools registering the same spec and name run each fire time once: give every
 * pool of a namespace the same periodic jobs and the same zone. A fire time already
 * scheduled in the other flavour's bytes gets no second instance (and a warning). A
 * handler must be registered for name too. Only before cwork_pool_start (from the
 * thread that configures the pool); CWORK_EINVAL for a spec that does not parse or can
 * never fire. */
int cwork_pool_periodically_enqueue(cwork_pool *pool, const char *spec, const char *name,
                                    cwork_error *err);

/* Per periodic job name: fire times picked up (a job of the name fetched with t at or
 * after the time) versus missed (cwork_pool_options.watchdog_timeout_ms passed). Only
 * meaningful for a namespace with one pool (others pick up the rest). */
typedef struct cwork_watchdog_stat {
    const char *name; /* borrowed until the pool is freed */
    int64_t processed, skipped;
} cwork_watchdog_stat;

/* A snapshot: *out is an array of *n entries (none without periodic jobs); free it with
 * cwork_free. Thread-safe, except beside cwork_pool_start. */
int cwork_pool_watchdog_stats(cwork_pool *pool, cwork_watchdog_stat **out, size_t *n,
                              cwork_error *err);

/* ------------------------------------------------------------------ admin client */

/* Reads and repairs a namespace: queues, pools, busy workers, the retry, scheduled and
 * dead sets (PROTOCOL §11, plus pause, per-name retry/delete, lookup by id and trimming).
 * What it returns is the caller's; each result type has its _free. Safe to share: any
 * number of threads may call a client's functions at once (cwork_client_set_go_flavor
 * included: a call sees the old flavour or the new); only cwork_client_free needs it
 * to itself. */
typedef struct cwork_client cwork_client;

/* A client for namespace ns (as cwork_enqueuer_new takes it) on redis (borrowed: keep
 * it alive). NULL on error (CWORK_EINVAL for a NULL redis or ns). */
cwork_client *cwork_client_new(cwork_redis *redis, const char *ns, cwork_error *err);
void cwork_client_free(cwork_client *client);

/* Sharded namespaces (PROTOCOL §27). cwork_client_new does no I/O; the client's first
 * call reads the shard record <ns>:cwork:shards (and again at most every 5 s), and when
 * it counts S > 1 shards the client keeps a client per shard (each on its own copy of
 * the redis handle) and answers for the namespace as one:
 *   - merged: _queues (counts added per name, the largest latency, paused when paused
 *     in any shard), _pools (sorted by id) and _workers (shard by shard), _daily_stats
 *     and _throughput (added up), _list, _list_page, _list_filtered and their _json
 *     (the shards' sets merged by score, equal scores the lower shard first; totals
 *     added; page p costs reading the first p pages of every shard);
 *   - one job by id: _find, _job_story, _cancel, _delete, _retry_dead, _run_now,
 *     _kill and _apply ask the shard the id routes to first, then the others, and act
 *     in the one that holds the job;
 *   - every shard in turn (stopping at the first failure, counts added up): _pause,
 *     _unpause, _set_rate_limit, _clear_queue, _retry_all_dead, _delete_all_dead,
 *     _delete_all, _kill_all, _run_all_now;
 *   - _job_types adds up its rows over the shards (the sample is read in each shard);
 *   - merged too: _search (the shards' matches newest first by score, paged as the lists,
 *     max_scan per shard, cwork_search_info added up), _queue_jobs (by enqueue time,
 *     oldest first, paged as the lists; its total the shards' added), _succeeded
 *     (newest first), _periodic_schedules (one entry per name and spec);
 *   - found where it is: _result and _batch ask the id's own shard first, then the
 *     others (_result waits, when asked to, in the id's shard); _delete_waiting finds
 *     each job in the shard that holds it (the whole queue searched there: the merged
 *     place is no shard's); _doctor_repair acts in the shard whose key the finding names;
 *   - every shard: _trim_dead (older_than and keep per shard; removed added up) and
 *     _doctor (the shards' findings one after the other, each naming its shard's key);
 *   - _rate_limits: each type's entry from the shard of its name (where a limited type
 *     is pinned and its state kept);
 *   - shard 0 only: _redis_info (one server's INFO).
 * cwork_client_shard gives one shard's own view of every call.
 * A namespace without a record (or with count 1) is read exactly as before: one HMGET
 * of the record every 5 s is all that is added. A damaged record fails every merged
 * call with CWORK_EINVAL naming the key (`cwork doctor --shard 0` still runs). */

/* The namespace's shard count into *count (1 when it is not sharded), reading the
 * record when due. 0; CWORK_EINVAL for a NULL argument or a damaged record (err names
 * the key); CWORK_EREDIS/CWORK_ETIMEOUT when Redis fails. Thread-safe. */
int cwork_client_shards(cwork_client *client, unsigned *count, cwork_error *err);

/* When the shard record was written (its `created`, Unix s) into *created: 0 when the
 * namespace has no record. CWORK_EINVAL for a NULL argument or a `created` that is no
 * number (err names the key); CWORK_EREDIS/CWORK_ETIMEOUT when Redis fails. A WRONGTYPE
 * record fails with CWORK_EREDIS. Thread-safe. */
int cwork_client_shards_created(cwork_client *client, int64_t *created, cwork_error *err);

/* Growing a sharded namespace (PROTOCOL §27.5, README "Sharding"). What a grow in
 * progress still waits for, as cwork_client_shards_growth reads it. */
typedef struct cwork_shards_growth {
    unsigned count;       /* the shards the record says */
    unsigned from;        /* the count before the grow in progress; 0 when none is */
    unsigned homes;       /* the count job names (pinned types, periodic jobs) route by */
    int64_t grown;        /* when the last grow started (Unix s); 0: never grown */
    int64_t guards;       /* unique guards (forwarding markers included) in the old shards
                             whose key routes to another shard now: the grow ends when their
                             jobs have started (or the markers expired) */
    int64_t batches;      /* open tracked batches in the old shards whose id routes to another
                             shard now: the grow ends when they have completed */
    int64_t wait_seconds; /* seconds left before every enqueuer has read the grow and the
                             forwarding markers it made have expired (0: passed) */
    bool finishable;      /* a grow is in progress and guards, batches and wait_seconds are 0 */
} cwork_shards_growth;

/* Grows client's namespace to shards shards (2 to 1024) in one script on the record
 * <ns>:cwork:shards: its count becomes shards, `from` the count before, `homes` (written
 * at the first grow only) the count before. New plain jobs spread over all the shards
 * at once; the jobs already in the old shards stay there and are served as before;
 * running cwork enqueuers, pools and clients follow within 5 s. 0, also when the count
 * already is shards (nothing changes); CWORK_EINVAL for a NULL client, shards out of
 * range, fewer shards than the record's (no shrinking), a grow still in progress (finish
 * it first), a namespace that cannot be sharded, or a damaged record (err names the
 * key); CWORK_EREDIS/CWORK_ETIMEOUT when Redis fails. Thread-safe. */
int cwork_client_shards_grow(cwork_client *client, unsigned shards, cwork_error *err);

/* The grow's progress into *out (zeroed first; from 0 and the counts 0 when no grow is
 * in progress): reads the record and SCANs the old shards' guards and batches. 0;
 * CWORK_EINVAL for a NULL argument or a damaged record; CWORK_EREDIS/CWORK_ETIMEOUT when
 * Redis fails. Thread-safe. */
int cwork_client_shards_growth(cwork_client *client, cwork_shards_growth *out, cwork_error *err);

/* Ends the grow in progress (removes the record's `from`) when it is finishable, so that
 * enqueues stop asking old shards; *out (may be NULL) receives the progress it checked.
 * 0 when it ended it or no grow was in progress; CWORK_EINVAL when it is not finishable
 * yet (err says what is left; nothing changes) or the record changed meanwhile; the
 * errors of cwork_client_shards_growth. Thread-safe. */
int cwork_client_shards_finish(cwork_client *client, cwork_shards_growth *out, cwork_error *err);

/* The client of shard i (0 ≤ i < the count), for the per-shard view: an ordinary client
 * of that shard's namespace ("{base.i}", shard 0 the namespace itself) whose calls see
 * that shard alone. Borrowed: owned by client, valid until cwork_client_free(client);
 * never free it. For an unsharded namespace shard 0 is client itself. Thread-safe, like
 * every client (cwork_client_set_go_flavor on client also sets its shards'). NULL on
 * error: CWORK_EINVAL for a NULL client or i out of range (err says the count), or the
 * errors of cwork_client_shards. */
cwork_client *cwork_client_shard(cwork_client *client, unsigned i, cwork_error *err);

/* What the client's JSON bodies are (see cwork_go_flavor; default CWORK_GO_FORK). Safe
 * while other threads use the client. 0, or CWORK_EINVAL for a NULL client or an
 * unknown flavour (nothing changes then). */
int cwork_client_set_go_flavor(cwork_client *client, cwork_go_flavor flavor);

/* Damaged keys. A key of the namespace that holds the wrong kind of value (a string
 * where a list is expected: written by hand or by another program) does not fail the
 * admin views. cwork_client_queues, _pools, _workers, _list, _list_page, _find,
 * _job_types, _daily_stats, _rate_limits, _queue_jobs, _search, _job_story, _batch,
 * _succeeded and the *_json bodies read such a key as empty, read the rest, and add the
 * key to a list of the calling thread; the calls that change a set or queue name it in
 * their error (CWORK_EREDIS or CWORK_ETYPE) and add it too. `cwork doctor` repairs such
 * keys. */
typedef struct cwork_damaged_key {
    const char *key;      /* the whole key, prefix included */
    const char *type;     /* what Redis holds there: "string", "hash", …, "none" when it
                             went meanwhile, "unknown" when TYPE failed */
    const char *expected; /* what PROTOCOL says it is: "list", "zset", "set", "hash",
                             "string" ("unknown" for a key cwork does not know) */
    const char *what;     /* what it is for, e.g. "queue of x", "the dead set" */
} cwork_damaged_key;

/* The damaged keys the calling thread's client calls met since its last
 * cwork_client_damage_clear, each once, in the order met (at most 64: the doctor lists
 * all). *out (may be NULL) points into the thread's own list: valid until the thread's
 * next cwork_client_* call or its end; the strings are the library's. Returns the
 * count. Thread-safe: each thread has its own list (clear it before a view, read it
 * after). */
size_t cwork_client_damage(const cwork_damaged_key **out);
/* Empties the calling thread's list. */
void cwork_client_damage_clear(void);

typedef struct cwork_queue_info {
    char *job_name;
    int64_t count;   /* jobs waiting in the queue */
    int64_t latency; /* seconds since the next job to run was enqueued (0 when empty) */
    bool paused;     /* <p>jobs:<name>:paused exists */
} cwork_queue_info;

/* Every name in known_jobs, sorted (PROTOCOL §11.1). A job that cannot be decoded at a
 * queue's head gives latency 0 instead of failing the call (PROTOCOL §16.13). */
int cwork_client_queues(cwork_client *client, cwork_queue_info **out, size_t *n, cwork_error *err);
void cwork_queue_infos_free(cwork_queue_info *queues, size_t n);

typedef struct cwork_pool_heartbeat {
    char *worker_pool_id;
    int64_t started_at, heartbeat_at;
    char **job_names; /* sorted; NULL (n 0) when the field is absent */
    size_t n_job_names;
    unsigned concurrency;
    char *host;
    int pid;
    char **worker_ids; /* sorted; NULL when absent */
    size_t n_worker_ids;
    /* NULL, or why the pool's hash could not be read whole, naming the key and field
     * (e.g. a pid that is not a number): the fields above then hold what could be read,
     * and the other pools are listed as usual. */
    char *damaged;
} cwork_pool_heartbeat;

/* One record per id in worker_pools, sorted by id, including ids without a hash. */
int cwork_client_pools(cwork_client *client, cwork_pool_heartbeat **out, size_t *n,
                       cwork_error *err);
void cwork_pool_heartbeats_free(cwork_pool_heartbeat *pools, size_t n);

typedef struct cwork_worker_observation {
    char *worker_id;
    bool is_busy;
    char *job_name, *job_id;
    int64_t started_at;
    char *args_json; /* the raw `args` field */
    char *checkin;
    int64_t checkin_at;
} cwork_worker_observation;

/* One record per worker of every pool (pool order, then sorted worker ids). */
int cwork_client_workers(cwork_client *client, cwork_worker_observation **out, size_t *n,
                         cwork_error *err);
void cwork_worker_observations_free(cwork_worker_observation *workers, size_t n);

typedef enum cwork_job_set {
    CWORK_SET_RETRY = 1,
    CWORK_SET_SCHEDULED = 2,
    CWORK_SET_DEAD = 3
} cwork_job_set;

#define CWORK_PAGE_SIZE 20

typedef struct cwork_listed_job {
    int64_t at;     /* retry_at, run_at or died_at: the member's score (whole seconds as
                       Go writes them; another score — a fraction, past 2^53, ±inf — is
                       rounded down and clamped to int64, and this `at` still addresses
                       the member in delete and retry) */
    cwork_job *job; /* decoded; cwork_job_raw gives the member's exact bytes */
} cwork_listed_job;

/* Page (1-based; 0 counts as 1) of CWORK_PAGE_SIZE jobs of a set, ascending by score,
 * and the set's total (ZCARD, as Go). With name non-NULL only decodable jobs of that name
 * are listed and counted (a scan of the set). Members that cannot be decoded are skipped,
 * not fatal; members with odd scores are listed (see `at`). Out-pointers for totals and counts
 * in this section may be NULL. */
int cwork_client_list(cwork_client *client, cwork_job_set set, unsigned page, const char *name,
                      cwork_listed_job **out, size_t *n, int64_t *total, cwork_error *err);
void cwork_listed_jobs_free(cwork_listed_job *jobs, size_t n);

/* Deletes the jobs with this score and id from a set; a deleted unique scheduled job
 * also loses its guard (the one its unique_key names, else the one of its args in both
 * escape spellings). CWORK_ENOTFOUND ("nothing deleted") when none matched; CWORK_ETYPE,
 * err naming the key, its type and the type expected, when the set holds another type
 * (nothing written). */
int cwork_client_delete(cwork_client *client, cwork_job_set set, int64_t at, const char *id,
                        cwork_error *err);

/* Moves a dead job (died_at, id) back to its queue with t = now and fails/err/failed_at
 * removed; its `d` is dropped too so that a retried periodic instance is not discarded as
 * stale (PROTOCOL §16.13). A job whose name is not in known_jobs stays dead (err
 * "unknown job when requeueing", score now + 5) and, as in Go, counts as not retried.
 * CWORK_ENOTFOUND ("nothing retried") when nothing went back to a queue; CWORK_ETYPE,
 * err naming the key, its type and the type expected, when the dead set or known_jobs
 * holds another type (nothing written). */
int cwork_client_retry_dead(cwork_client *client, int64_t died_at, const char *id,
                            cwork_error *err);

/* Retries every dead job (of one name when name is non-NULL); *count receives how many
 * went back to queues. Unlike Go, never stops early on a batch of unknown names. */
int cwork_client_retry_all_dead(cwork_client *client, const char *name, int64_t *count,
                                cwork_error *err);

/* Deletes every dead job (of one name when name is non-NULL). These two and
 * cwork_client_trim_dead fail with CWORK_ETYPE, err naming the key, its type and the
 * type expected, when the dead set (or known_jobs) holds another type (nothing written;
 * the key is listed by cwork_client_damage). */
int cwork_client_delete_all_dead(cwork_client *client, const char *name, int64_t *count,
                                 cwork_error *err);

/* Removes dead jobs that died before older_than (0: no age limit) and then the oldest
 * beyond the newest keep (< 0: no count limit). Never automatic: Go keeps the dead set
 * unbounded. *removed receives how many went.
 * Sharded namespace: every shard, older_than and keep in each (removed added up). */
int cwork_client_trim_dead(cwork_client *client, int64_t older_than, int64_t keep, int64_t *removed,
                           cwork_error *err);

/* Runs a retry or scheduled job now, whatever its time (Sidekiq's "Add to queue"; Go's
 * client has no such call): the members of set with exactly score at and this id go to
 * their queues as the requeuer moves a due job — t = now, in cjson's encoding, at the
 * queue's left end — keeping fails and err but dropping `d`, so that a periodic
 * instance run by hand is not discarded as stale. Nothing is lost: a job whose name is
 * not in known_jobs stays where it is (CWORK_ENOTFOUND, "not run: the job's name is not
 * in known_jobs …"), and so does a job whose queue key holds another type (CWORK_EREDIS
 * with the server's error). CWORK_ENOTFOUND ("nothing run") when no member matches;
 * CWORK_ETYPE, err naming the key, its type and the type expected, when the set or
 * known_jobs holds another type (nothing written);
 * CWORK_EINVAL for CWORK_SET_DEAD (use cwork_client_retry_dead) or a NULL argument;
 * CWORK_EREDIS/CWORK_ETIMEOUT when Redis fails. Safe from several threads. */
int cwork_client_run_now(cwork_client *client, cwork_job_set set, int64_t at, const char *id,
                         cwork_error *err);

/* Runs every job of the retry or scheduled set now (only those called name when name is
 * non-NULL), as cwork_client_run_now does one, in batches. *count (may be NULL) receives
 * how many went to their queues — after a failure, how many went before it; *stayed (may
 * be NULL) how many of the matching jobs stayed because their name is not in known_jobs
 * or their queue key holds another type (logged as client.run_all_now.damaged_queue).
 * Members that cannot be decoded stay too, uncounted. Jobs added to the set while the
 * call runs may run as well. Errors as cwork_client_run_now, never CWORK_ENOTFOUND: an
 * empty set gives 0 with *count 0. Safe from several threads. */
int cwork_client_run_all_now(cwork_client *client, cwork_job_set set, const char *name,
                             int64_t *count, int64_t *stayed, cwork_error *err);

/* Kills a retry or scheduled job (Sidekiq's "Kill"): the members of set with this score
 * (as listed: see cwork_listed_job.at) and id move to the dead set in one atomic script
 * (client_kill.lua, PROTOCOL §24), scored by the time they died (now), as Go's dead set
 * is. A job with `err` (a retry job's last failure) enters dead with its bytes
 * unchanged; one without gets err "killed" and failed_at = now. A job of a tracked
 * batch counts there as dead, once (its callback may fire); a killed unique scheduled
 * job loses its guard (as cwork_client_delete). Nothing is lost: members that cannot be
 * decoded stay. CWORK_ENOTFOUND ("nothing killed") when no member matches; CWORK_EINVAL
 * for CWORK_SET_DEAD or a NULL argument; CWORK_ETYPE when the set or the dead key holds
 * another type (nothing written; err names the key, its type and the type expected);
 * CWORK_EREDIS/CWORK_ETIMEOUT when Redis fails. Borrows id for the call; safe from
 * several threads on one client. */
int cwork_client_kill(cwork_client *client, cwork_job_set set, int64_t at, const char *id,
                      cwork_error *err);

/* Kills every job of the retry or scheduled set (only those called name when name is
 * non-NULL) as cwork_client_kill does one, 1000 per script call (each batch atomic; jobs
 * added meanwhile may die too). *count (may be NULL) receives how many died — after a
 * failure, how many died before it. Members that cannot be decoded stay. Errors as
 * cwork_client_kill, never CWORK_ENOTFOUND: an empty set gives 0 with *count 0. Safe
 * from several threads. */
int cwork_client_kill_all(cwork_client *client, cwork_job_set set, const char *name, int64_t *count,
                          cwork_error *err);

/* A substring search in a set (cwork_client_search). The scan is bounded: at most
 * max_scan members are read, newest (highest score) first, so that a request costs the
 * same however large the set is; cwork_search_info says when the bound stopped it. */
#define CWORK_SEARCH_MAX_SCAN 10000      /* the default bound */
#define CWORK_SEARCH_MAX_SCAN_MAX 100000 /* the largest bound a caller may ask for */

typedef struct cwork_search_query {
    const char *text;   /* looked for in the job's args (their JSON text as stored) and its
                           err, ASCII letters in any case; required, 1–256 bytes */
    unsigned page;      /* of the matches, 1-based; 0 counts as 1 */
    unsigned page_size; /* 1–1000; 0 means CWORK_PAGE_SIZE */
    size_t max_scan;    /* members read at most; 0 means CWORK_SEARCH_MAX_SCAN */
} cwork_search_query;

typedef struct cwork_search_info {
    int64_t total;   /* the set's size (ZCARD) when the scan began */
    int64_t scanned; /* members read (newest first) */
    int64_t matches; /* matching jobs among them (the pages cover these) */
    bool bounded;    /* max_scan stopped the scan before the set's end: "searched the
                        newest `scanned` of `total`" */
} cwork_search_info;

/* The jobs of a set whose args or err contain q->text, newest first: page q->page of
 * q->page_size matches into *out (free with cwork_listed_jobs_free), and what was
 * scanned into *info (may be NULL). The client reads the set in chunks of 1000
 * (ZREVRANGE … WITHSCORES), never one long script: Redis serves other clients between
 * chunks, and while writers change the set a member may be seen twice or missed, as
 * when paging. Members that cannot be decoded are skipped. CWORK_EINVAL for an empty or
 * longer text, a page size above 1000, a max_scan above CWORK_SEARCH_MAX_SCAN_MAX or a
 * NULL argument; a key of another type finds nothing and is listed as damaged
 * (cwork_client_damage); CWORK_EREDIS/CWORK_ETIMEOUT when Redis fails (*out then
 * empty). Safe from several threads.
 * Sharded namespace: the shards' matches merged newest first and paged as one, max_scan
 * per shard, info added up (see cwork_client_shards). */
int cwork_client_search(cwork_client *client, cwork_job_set set, const cwork_search_query *q,
                        cwork_listed_job **out, size_t *n, cwork_search_info *info,
                        cwork_error *err);

/* Deletes every job waiting in the queue of job type name, in one atomic step: exactly
 * the jobs waiting at that moment go; jobs in progress, retry, scheduled or dead are
 * not touched. The unique guard of each unique job among them is deleted too, so that
 * it can be enqueued again. *count (may be NULL) receives how many jobs went (0 for an
 * empty or missing queue). CWORK_ETYPE when the key holds something other than a list
 * (left as it is); CWORK_EINVAL for a NULL argument; CWORK_EREDIS/CWORK_ETIMEOUT when
 * Redis fails (a failure after the jobs went, while deleting guards, still sets *count).
 * Redis runs the whole queue in one script: a queue of millions blocks it for a moment.
 * Safe from several threads. */
int cwork_client_clear_queue(cwork_client *client, const char *name, int64_t *count,
                             cwork_error *err);

/* Pauses a job type for every pool of the namespace, Go's included (SET
 * <p>jobs:<name>:paused 1), or lifts the pause (DEL). */
/* Rate limits (PROTOCOL §20): the namespace's setting <p>cwork:rate_limits, which every
 * cwork pool follows (Go pools ignore it), and whether each type is held back now. */
typedef struct cwork_rate_limit_info {
    char *job_name;
    char *text;         /* the setting as stored: "100/1s" */
    unsigned count;     /* 0 when text is not a valid limit (pools then run none) */
    int64_t window_ms;  /* 0 likewise */
    bool limited_now;   /* a job started so recently that the next one must wait */
    int64_t next_in_us; /* how long it must wait (0 when not limited now) */
} cwork_rate_limit_info;

/* Every rate limit of the namespace, sorted by job name (*out NULL and *n 0 when there
 * are none). "Now" is Redis' clock. Free with cwork_rate_limit_infos_free. Thread-safe.
 * Sharded namespace: a limit is set in every shard, and each type's state is read in the
 * shard of its name, where a limited type runs (see cwork_client_shards). */
int cwork_client_rate_limits(cwork_client *client, cwork_rate_limit_info **out, size_t *n,
                             cwork_error *err);
void cwork_rate_limit_infos_free(cwork_rate_limit_info *limits, size_t n);
/* Sets job name's rate limit to count jobs per window_ms for every cwork pool of the
 * namespace (running pools follow within about a second, and the new spacing holds from
 * the type's next start); count 0 removes the limit. CWORK_EINVAL for a bad name or a
 * limit out of range (see cwork_rate_limit_parse). Thread-safe. */
int cwork_client_set_rate_limit(cwork_client *client, const char *name, unsigned count,
                                int64_t window_ms, cwork_error *err);

int cwork_client_pause(cwork_client *client, const char *name, cwork_error *err);
int cwork_client_unpause(cwork_client *client, const char *name, cwork_error *err);

typedef enum cwork_job_place {
    CWORK_PLACE_QUEUE = 1,
    CWORK_PLACE_IN_PROGRESS = 2,
    CWORK_PLACE_RETRY = 3,
    CWORK_PLACE_SCHEDULED = 4,
    CWORK_PLACE_DEAD = 5
} cwork_job_place;

/* Finds a job by id in the queues of the names in known_jobs, the in-progress lists of
 * the pools in worker_pools, and the retry, scheduled and dead sets (a scan: an
 * operator's tool, not a hot path). *out.at is the score in a set, else 0.
 * CWORK_ENOTFOUND when no job has that id. */
int cwork_client_find(cwork_client *client, const char *id, cwork_job_place *place,
                      cwork_listed_job *out, cwork_error *err);

/* The result the job with this id stored (cwork_job_set_result) when it succeeded, as
 * kept under <p>cwork:result:<id> for its type's result_ttl_ms (PROTOCOL §22): *out
 * (NUL-terminated after the len bytes; free with cwork_free) and *len (may be NULL).
 * With wait_ms > 0, waits up to that long for it: subscribed to the namespace's results
 * channel, it returns as soon as the commit that writes it has run (a GET every 5 s
 * besides, should the subscription be lost); this takes a connection of its own for
 * the wait. CWORK_ENOTFOUND when there is none (yet, or any more) at the end;
 * CWORK_EINVAL for a NULL client, id or out, an empty id, or wait_ms outside 0 to 100
 * years; CWORK_ETYPE, err naming the key and its type, when the result key holds
 * another type than a string. Thread-safe as every client function.
 * Sharded namespace: the id's own shard, then the others; the wait is in the id's shard
 * (see cwork_client_shards). */
int cwork_client_result(cwork_client *client, const char *id, int64_t wait_ms, char **out,
                        size_t *len, cwork_error *err);

/* A succeeded job kept by its type (cwork_job_options.keep_succeeded). */
typedef struct cwork_succeeded_job {
    char *name, *id;
    char *job; /* the job's bytes as fetched (NUL-terminated), job_len of them */
    size_t job_len;
    int64_t finished_at_ms; /* when its commit kept it (Unix ms, the pool's clock) */
    int64_t ran_at_ms;      /* when its handler started (Unix ms) */
    int64_t took_us;        /* how long middleware and handler ran */
    char *result;           /* its result while kept (NUL-terminated), else NULL */
    size_t result_len;
} cwork_succeeded_job;

/* The kept succeeded jobs of name (NULL: of every name in known_jobs), newest first,
 * at most limit (0: 100; at most 10000, else CWORK_EINVAL); *out (may be NULL when *n
 * is 0) is the caller's: free it with cwork_succeeded_jobs_free. Members that are not
 * cwork's records are skipped (logged as client.succeeded). A damaged key (known_jobs, a
 * name's zset, a result) reads as empty and is listed (cwork_client_damage).
 * Sharded namespace: the shards' merged newest first, limit in all (see
 * cwork_client_shards). */
int cwork_client_succeeded(cwork_client *client, const char *name, size_t limit,
                           cwork_succeeded_job **out, size_t *n, cwork_error *err);
void cwork_succeeded_jobs_free(cwork_succeeded_job *jobs, size_t n);

/* "queue", "in_progress", "retry", "scheduled" or "dead" ("unknown" otherwise);
 * static storage. */
const char *cwork_job_place_name(cwork_job_place place);

/* One failed run of a job, as the commit of a cwork pool kept it in
 * <p>cwork:failures:<id> (PROTOCOL §26; Go pools keep only the job's last err). */
typedef struct cwork_job_failure {
    int64_t failed_at;   /* Unix s */
    int64_t fails;       /* the job's fails counting this failure */
    int64_t enqueued_at; /* the job's t for that run (Unix s) */
    int64_t ran_at_ms;   /* when its handler started (Unix ms; 0 when it did not run) */
    int64_t took_us;     /* how long it ran */
    int64_t retry_at;    /* when it was due again (Unix s); 0 when it went to dead */
    char *err;           /* the failure's message (NUL-terminated) */
} cwork_job_failure;

/* A span of time a job spent in one state. */
typedef struct cwork_job_phase {
    const char *state;   /* "waiting", "running", "retry", "scheduled" or "dead" (static) */
    int64_t from, until; /* Unix s; until is 0 while the job is still in it */
} cwork_job_phase;

/* Everything the namespace knows about one job (cwork_client_job_story). Strings are
 * NUL-terminated, never NULL, owned by the story. */
typedef struct cwork_job_story {
    cwork_job_place place;
    int64_t at;     /* its score in the retry, scheduled or dead set, else 0 */
    cwork_job *job; /* decoded, with the exact bytes (cwork_job_raw) */
    int64_t now;    /* Redis' clock when it was read (Unix s) */
    /* The first enqueue: the kept one (§26) when a cwork pool recorded a failure, else
     * the job's t. Requeuers and a retry from dead rewrite t (PROTOCOL §3.1), so t is
     * then the last requeue: last_requeued_at, 0 when t is the first enqueue. */
    int64_t first_enqueued_at, last_requeued_at;
    /* A running job: the pool whose in-progress list holds it ("" otherwise), that
     * pool's heartbeat host and pid ("" and 0 when it has none), and what its worker's
     * observer published (PROTOCOL §7): "" and 0 while none is (yet) seen. */
    char pool_id[25];
    char *pool_host;
    int pool_pid;
    char *worker_id;
    int64_t started_at;
    char *checkin; /* the handler's last cwork_job_checkin message: its progress */
    int64_t checkin_at;
    /* The failures kept (newest first; at most 10), and the time in each state
     * (oldest first) as far as the times above tell it. */
    cwork_job_failure *failures;
    size_t n_failures;
    cwork_job_phase *phases;
    size_t n_phases;
} cwork_job_story;

/* Finds the job with this id as cwork_client_find does and tells its whole story into
 * *out: where it is, its first enqueue and last requeue, for a running job its pool,
 * worker, start and check-in, the failures kept and the time spent in each state.
 * Free with cwork_job_story_free. CWORK_ENOTFOUND when no job has that id; CWORK_EINVAL
 * for a NULL argument; CWORK_EREDIS/CWORK_ETIMEOUT when Redis fails. An entry of the
 * failures key that cannot be read is skipped; a failures key of another type than a
 * list reads as no failures and is listed by cwork_client_damage. A scan, like
 * cwork_client_find. Thread-safe. */
int cwork_client_job_story(cwork_client *client, const char *id, cwork_job_story *out,
                           cwork_error *err);
/* Frees what the story holds (not the struct itself) and zeroes it; NULL is a no-op. */
void cwork_job_story_free(cwork_job_story *story);

/* Reads tracked batch batch_id as cwork_batch_read does (HGETALL and TTL of the batch,
 * one round trip), and the type of its :jobs hash (PROTOCOL §23.1): when that holds another
 * type than a hash, no job of the batch is counted any more, so the key is listed by
 * cwork_client_damage and the counts read are returned (0). CWORK_ETYPE, err naming the
 * key, its type and the type expected, when the batch key itself holds another type;
 * CWORK_EINVAL (bad id or NULL argument), CWORK_ENOTFOUND (no such batch, or expired),
 * CWORK_EPROTO (a field that is not an integer, named), CWORK_EREDIS. Reads only.
 * Thread-safe.
 * Sharded namespace: the batch id's shard, then the others (see cwork_client_shards). */
int cwork_client_batch(cwork_client *client, const char *batch_id, cwork_batch_info *out,
                       cwork_error *err);

/* What cwork_client_cancel found. */
typedef struct cwork_cancel_result {
    /* Where the job was: CWORK_PLACE_QUEUE, _SCHEDULED or _RETRY (it is in the dead set
     * now), or CWORK_PLACE_IN_PROGRESS (its pool has been told; it stops the job and
     * commits it to the dead set). */
    cwork_job_place place;
    char pool_id[25]; /* for a running job, the pool running it; else "" */
} cwork_cancel_result;

/* Cancels the job with this id (PROTOCOL §21). A waiting, scheduled or retry job moves
 * to the dead set at once (fails + 1, err "cancelled", failed_at and score now), in one
 * step. A running job is marked in <p>cwork:cancelled and its cwork pool is told over
 * pub/sub: the pool asks the handler to stop (cwork_job_stop_reason) and, whatever the
 * handler returns, commits the job to dead with err "cancelled" — never to retry; a
 * reaper that gives back a crashed pool's jobs sends a marked job to dead too. Errors:
 * CWORK_ENOTFOUND when no job has that id, or it is dead already; CWORK_EUNSUPPORTED
 * when it runs in a pool that does not listen for cancellations (a Go pool; nothing is
 * written); CWORK_ETYPE for a key of another type (nothing written; err names the key,
 * its type and the type expected), also when no job has that id but the search read a
 * damaged key as empty (the job may be in it: err says so); a damaged key the job is
 * not in is searched past. CWORK_ETIMEOUT when the job kept moving between places. out
 * (may be NULL) is filled on success. Scans like cwork_client_find. Thread-safe. */
int cwork_client_cancel(cwork_client *client, const char *id, cwork_cancel_result *out,
                        cwork_error *err);

/* The namespace doctor (PROTOCOL §25): a check of every key of the namespace, like fsck. */
typedef enum cwork_doctor_kind {
    CWORK_DOCTOR_WRONG_TYPE = 0,   /* a key of another type than PROTOCOL documents */
    CWORK_DOCTOR_FUTURE_HEARTBEAT, /* heartbeat_at not a number, or over a minute ahead */
    CWORK_DOCTOR_ORPHAN,           /* an in-progress list of a pool with no heartbeat */
    CWORK_DOCTOR_LOCK,             /* lock, lock_info and in-progress lists disagree */
    CWORK_DOCTOR_GUARD,            /* a unique guard whose job is nowhere */
    CWORK_DOCTOR_UNKNOWN_NAME,     /* a queue whose name is missing from known_jobs */
    CWORK_DOCTOR_UNDECODABLE,      /* a dead, retry or scheduled member that is no job */
    CWORK_DOCTOR_REMOVED_PERIODIC, /* a scheduled instance of a spec no pool schedules */
    CWORK_DOCTOR_RATE_LIMIT,       /* a rate limit setting that does not parse */
    CWORK_DOCTOR_BATCH,            /* a tracked batch whose counts do not add up */
    CWORK_DOCTOR_SUPERSEDED        /* reapers dropped superseded by-key entries (records) */
} cwork_doctor_kind;

/* "wrong_type", "future_heartbeat", "orphan", "lock", "guard", "unknown_name",
 * "undecodable", "removed_periodic", "rate_limit", "batch", "superseded" ("unknown"
 * otherwise);
 * static storage. */
const char *cwork_doctor_kind_name(cwork_doctor_kind kind);

/* One finding. Every string is NUL-terminated and owned by the findings array. */
typedef struct cwork_doctor_finding {
    cwork_doctor_kind kind;
    char *key;    /* the key it is about */
    char *member; /* the member, field or name it is about (member_len bytes, which may
                     hold any byte), or NULL */
    size_t member_len;
    char *value;        /* the value found that the repair checks is still there, or NULL */
    char *problem;      /* what is wrong, one line */
    char *action;       /* what the repair does, one line; NULL when there is no repair */
    bool repaired;      /* true once repaired by this call */
    char *repair_error; /* why the repair failed (cwork_client_doctor with
                           CWORK_DOCTOR_REPAIR), or NULL */
} cwork_doctor_finding;

/* cwork_client_doctor's flags. */
#define CWORK_DOCTOR_REPAIR 1u /* repair each finding as soon as it is found */

/* Checks the namespace (PROTOCOL §25): the type of every key PROTOCOL documents (found
 * with SCAN), lock counters against lock_info against the in-progress lists, in-progress
 * lists of pools without a heartbeat, unique guards whose job is gone, queues missing
 * from known_jobs, scheduled periodic instances of specs no pool schedules, heartbeats
 * from the future, dead/retry/scheduled members that are not job JSON, rate limit
 * settings that do not parse, tracked batches whose counts do not add up, and records of
 * in-progress entries that reapers dropped as superseded by-key placeholders (PROTOCOL
 * §9.3; the repair files the records away). A damaged key is a finding, never an error. *out
 * receives the findings (NULL and *n 0 when the namespace is clean); free them with
 * cwork_doctor_findings_free. With CWORK_DOCTOR_REPAIR each finding is repaired by one script call
 * that first checks it still holds; jobs are moved (to their queue, or to a <p>cwork:quarantine:…
 * key), never deleted; a repair that fails sets repair_error and the others go on. Errors:
 * CWORK_EREDIS and CWORK_EPROTO when Redis fails (no findings are returned),
 * CWORK_EINVAL for NULL arguments, CWORK_ENOMEM. Reads every key of the namespace: its
 * cost grows with the namespace. Thread-safe.
 * Sharded namespace: every shard, findings shard by shard, each naming its shard's key
 * (see cwork_client_shards). */
int cwork_client_doctor(cwork_client *client, unsigned flags, cwork_doctor_finding **out, size_t *n,
                        cwork_error *err);

/* Repairs one finding that cwork_client_doctor returned (the web UI's button): 1 when
 * repaired, 0 when there was nothing to do any more (the key changed since), or an
 * error: CWORK_EUNSUPPORTED for a finding without repair, CWORK_ETYPE when a key the
 * repair would write has another type (nothing written), CWORK_EREDIS. Sets
 * f->repaired. Thread-safe for different findings.
 * Sharded namespace: in the shard whose key f names (CWORK_EINVAL when none). */
int cwork_client_doctor_repair(cwork_client *client, cwork_doctor_finding *f, cwork_error *err);

/* Frees what cwork_client_doctor returned (NULL is fine). */
void cwork_doctor_findings_free(cwork_doctor_finding *findings, size_t n);

/* The bodies Go's workwebui answers (PROTOCOL §12.1, §17.8): Go's JSON field names and
 * structure, indented with tabs. *out is NUL-terminated; free it with cwork_free.
 * busy_workers is `null` when nobody is busy (as Go). list gives
 * {"count": N, "jobs": [...]} with run_at / retry_at / died_at leading each job, then
 * the job's fields as cwork_job_encode_flavor renders them in the client's flavour. */
int cwork_client_queues_json(cwork_client *client, char **out, size_t *len, cwork_error *err);
int cwork_client_pools_json(cwork_client *client, char **out, size_t *len, cwork_error *err);
int cwork_client_busy_workers_json(cwork_client *client, char **out, size_t *len, cwork_error *err);
int cwork_client_list_json(cwork_client *client, cwork_job_set set, unsigned page, const char *name,
                           char **out, size_t *len, cwork_error *err);

/* ------------------------------------------------------------------ dashboard, browsing, bulk
 * changes What the web UI's dashboard and lists need beyond Go's client (and `cwork stats`). Like
 * the rest of the client: safe to call from several threads on one client; what is returned is the
 * caller's; every failure is also logged under a "client.*" key. */

/* One UTC day of the counts cwork pools keep in <ns>:cwork:stat:<YYYY-MM-DD> (a hash
 * with fields processed and failed, kept 40 days; Go pools write none). */
typedef struct cwork_day_stats {
    char date[11];     /* "YYYY-MM-DD" */
    int64_t processed; /* jobs cwork pools finished that day, failed ones included */
    int64_t failed;
} cwork_day_stats;

/* The `days` days (1–366) ending today (UTC, by this machine's clock), oldest first:
 * *out is an array of *n = days entries (free with cwork_free). A day without its hash
 * counts 0; a key of another type or a field that is no whole number also reads as 0
 * (logged as client.daily_stats.damaged; such a key is listed by cwork_client_damage)
 * instead of failing the call. One round trip.
 * CWORK_EINVAL for days out of range or a NULL argument; CWORK_EREDIS/CWORK_ETIMEOUT
 * when Redis fails. */
int cwork_client_daily_stats(cwork_client *client, unsigned days, cwork_day_stats **out, size_t *n,
                             cwork_error *err);

/* One UTC minute of the per-minute counts cwork pools keep in
 * <ns>:cwork:stat:<YYYY-MM-DDTHH> (a hash per hour with fields MM:processed and MM:failed,
 * kept 25 h; Go pools write none). */
typedef struct cwork_minute_stats {
    int64_t minute;    /* Unix seconds of the minute's start */
    int64_t processed; /* jobs cwork pools finished in that minute, failed ones included */
    int64_t failed;
} cwork_minute_stats;

/* The throughput history: the `minutes` minutes (1–1440) ending with the current one
 * (UTC, by this machine's clock), oldest first: *out is an array of *n = minutes entries
 * (free with cwork_free); a minute in which no cwork pool wrote counts 0. A key of
 * another type or a field that is no MM:processed/MM:failed whole number reads as 0
 * (logged as client.throughput.damaged) instead of failing the call. One round trip (at
 * most 25 HGETALLs). CWORK_EINVAL for minutes out of range or a NULL argument;
 * CWORK_EREDIS/CWORK_ETIMEOUT when Redis fails. */
int cwork_client_throughput(cwork_client *client, unsigned minutes, cwork_minute_stats **out,
                            size_t *n, cwork_error *err);

/* The Redis server that holds the namespace (in a Cluster, the master of the namespace's
 * slot), as its INFO reports it, for the dashboard's Redis panel. */
typedef struct cwork_redis_info {
    bool permitted;            /* false: the Redis user may not run INFO (ACL); then every
                                  other field is empty or -1 */
    char version[32];          /* redis_version, e.g. "7.2.4" */
    char role[16];             /* "master", or "slave" for a replica */
    char maxmemory_policy[32]; /* e.g. "noeviction", "allkeys-lru"; "" when not reported */
    bool evicts;               /* maxmemory_policy is reported and not noeviction: when
                                  memory runs out Redis may delete job keys (jobs lost) */
    int64_t used_memory;       /* bytes */
    int64_t maxmemory;         /* bytes; 0 = no limit */
    int64_t connected_clients;
    int64_t ops_per_sec; /* instantaneous_ops_per_sec */
    int64_t uptime_s;    /* uptime_in_seconds */
} cwork_redis_info;

/* Fills *out from one INFO of the namespace's server (the reply is parsed here: numbers a
 * server does not report read -1, strings ""). A user the ACL refuses INFO (a NOPERM
 * reply) is no failure: 0 with out->permitted false. CWORK_EINVAL for a NULL argument;
 * CWORK_EREDIS/CWORK_ETIMEOUT when Redis fails; CWORK_EPROTO when the reply is no INFO
 * text (no redis_version field).
 * Sharded namespace: the server of shard 0 (see cwork_client_shards). */
int cwork_client_redis_info(cwork_client *client, cwork_redis_info *out, cwork_error *err);

/* The dashboard's row of one job name. */
typedef struct cwork_job_type_stats {
    char *job_name;
    bool known; /* in known_jobs; else seen only in retry, dead or on a worker */
    bool paused;
    int64_t waiting;     /* jobs in its queue */
    int64_t latency;     /* as cwork_queue_info */
    int64_t running;     /* busy workers running a job of this name */
    int64_t retry, dead; /* of the members read (see cwork_job_types): exact when the
                            whole set was read */
    char *last_error;    /* `err` of the job of this name that failed last among the
                            members read, or NULL */
    int64_t last_failed_at;
} cwork_job_type_stats;

typedef struct cwork_job_types {
    cwork_job_type_stats *types; /* sorted by name */
    size_t n;
    int64_t retry_total, dead_total; /* sizes of the sets (ZCARD) */
    int64_t retry_read, dead_read;   /* members read: the highest-scored (newest) ones,
                                        at most the sample; < total means the per-name
                                        counts are of a sample */
} cwork_job_types;

/* Per job name: waiting, running, retry, dead, last error. Names come from known_jobs,
 * the members read and the busy workers. To bound the work on big sets, at most
 * `sample` members of the retry set and of the dead set are read and decoded (the
 * newest: highest scores first); 0 means 1000, more than 100000 is CWORK_EINVAL.
 * Members that cannot be decoded are skipped. Fills *out (release what it holds with
 * cwork_job_types_free); on error *out is empty. A malformed heartbeat or worker hash
 * leaves `running` at 0 instead of failing the call. Sharded namespace: every shard,
 * `sample` members of each shard's sets (see cwork_client_shards). */
int cwork_client_job_types(cwork_client *client, size_t sample, cwork_job_types *out,
                           cwork_error *err);
/* Frees what *types holds and leaves it empty (the struct itself is the caller's); an
 * empty or NULL one is fine. */
void cwork_job_types_free(cwork_job_types *types);

/* A page of a set as cwork_client_list gives it, with a page size and an order. */
typedef struct cwork_list_query {
    unsigned page;      /* 1-based; 0 counts as 1 */
    unsigned page_size; /* 1–1000; 0 means CWORK_PAGE_SIZE */
    const char *name;   /* only decodable jobs of this name (a scan of the set), or NULL */
    bool newest_first;  /* highest score first (Go lists lowest first) */
} cwork_list_query;

/* cwork_client_list with a page size and an order; q may be NULL (cwork_client_list's
 * page 1). CWORK_EINVAL for a page size above 1000. */
int cwork_client_list_page(cwork_client *client, cwork_job_set set, const cwork_list_query *q,
                           cwork_listed_job **out, size_t *n, int64_t *total, cwork_error *err);
/* Its body: {"count": N, "jobs": [...]} as cwork_client_list_json. */
int cwork_client_list_page_json(cwork_client *client, cwork_job_set set, const cwork_list_query *q,
                                char **out, size_t *len, cwork_error *err);

/* Filters of cwork_client_list_filtered (bits). */
#define CWORK_LIST_SKIP_PERIODIC                                                                   \
    1u /* leave out the instances periodic jobs enqueue ahead,                                     \
        * whose ids start with "periodic:" (PROTOCOL §10.3;                                       \
        * Go's and cwork's alike) */
/* cwork_client_list_page with filters (CWORK_LIST_*; 0: none, the same as
 * cwork_client_list_page): a filtered list is a scan of the set, as with q->name, and
 * *total counts the jobs that pass. CWORK_EINVAL for an unknown filter bit. Thread-safe
 * as the client's other calls; the caller frees *out with cwork_listed_jobs_free. */
int cwork_client_list_filtered(cwork_client *client, cwork_job_set set, const cwork_list_query *q,
                               unsigned filters, cwork_listed_job **out, size_t *n, int64_t *total,
                               cwork_error *err);
/* Its body, as cwork_client_list_page_json (the caller frees *out with cwork_free). */
int cwork_client_list_filtered_json(cwork_client *client, cwork_job_set set,
                                    const cwork_list_query *q, unsigned filters, char **out,
                                    size_t *len, cwork_error *err);

/* The jobs waiting in the queue of job type name, next to run first: page (1-based, 0
 * counts as 1) of page_size (1–1000; 0 means CWORK_PAGE_SIZE) jobs, *total the queue's
 * length. Entries that cannot be decoded are skipped (logged); `at` is 0 (a queue has
 * no scores: cwork_job_enqueued_at tells when). A key of another type lists nothing (*total
 * 0) and is listed as damaged (cwork_client_damage).
 * Free *out with cwork_listed_jobs_free.
 * Sharded namespace: the shards' queues merged by enqueue time, oldest first, paged as
 * one; *total added up (see cwork_client_shards). */
int cwork_client_queue_jobs(cwork_client *client, const char *name, unsigned page,
                            unsigned page_size, cwork_listed_job **out, size_t *n, int64_t *total,
                            cwork_error *err);

/* A job waiting in a queue as a list showed it (the id is borrowed by the call). */
typedef struct cwork_waiting_ref {
    const char *id;
    int64_t place; /* where it was listed: 0 is the next to run, as cwork_client_queue_jobs
                      counts ((page - 1) * page_size + its index on the page); -1 when
                      unknown */
} cwork_waiting_ref;

/* Places a listed job is looked for before and after its listed place, and the most a
 * listed job can move towards the front (pools taking jobs) and still be found. */
#define CWORK_WAITING_LOOK_BACK 10000
#define CWORK_WAITING_LOOK_AHEAD 1000

/* Deletes the n listed jobs from the queue of job type name, each by id: the entry
 * whose decoded id it is goes, by its exact bytes, in an atomic script that also finds
 * it; nothing else changes, and a unique job's guard is deleted with it (as
 * cwork_client_clear_queue does). Jobs only move towards the front of a queue (pools
 * take from there, new jobs join at the back), so a job listed at place p is looked for
 * from place p + CWORK_WAITING_LOOK_AHEAD down to at most p - CWORK_WAITING_LOOK_BACK,
 * stopping once found: one script per group of nearby jobs, its search bounded however
 * long the queue is (taking the entry out is one LREM pass from the nearer end of the
 * list). A job of unknown place (-1) is looked for in the whole queue, from the back,
 * 1000 entries per script; on a queue of millions that takes a while but never blocks
 * Redis for long. When several entries carry the id, the one nearest the listed place
 * among those searched goes.
 * *done (may be NULL) counts the jobs deleted, *unchanged (may be NULL) those not found
 * (a pool took them to run, someone deleted them, or they moved out of reach). Returns
 * 0 when every job was deleted; CWORK_ENOTFOUND when some were not found (err says
 * which first); CWORK_ETYPE when the key holds something other than a list (left as it
 * is); CWORK_EINVAL for a NULL argument; CWORK_EREDIS/CWORK_ETIMEOUT when Redis fails
 * (the counts say what happened before). Safe from several threads.
 * Sharded namespace: each job in the shard that holds it, its id's shard first; the whole
 * queue is searched there, as for place -1 (see cwork_client_shards). */
int cwork_client_delete_waiting(cwork_client *client, const char *name,
                                const cwork_waiting_ref *jobs, size_t n, size_t *done,
                                size_t *unchanged, cwork_error *err);

/* Deletes every job of a set (only decodable jobs called name when name is non-NULL), in
 * batches of 1000, each batch one script: jobs added meanwhile may go too. Deleted unique
 * scheduled jobs lose their guards, as with cwork_client_delete. Without a name, members
 * that cannot be decoded go as well (the whole set was asked for); with one they stay.
 * *count (may be NULL) receives how many went, also after a failure. CWORK_ETYPE when
 * the key holds something other than a sorted set (left as it is). */
int cwork_client_delete_all(cwork_client *client, cwork_job_set set, const char *name,
                            int64_t *count, cwork_error *err);

/* What cwork_client_apply does to each job. */
typedef enum cwork_job_action {
    CWORK_ACTION_DELETE = 1,  /* any set, as cwork_client_delete */
    CWORK_ACTION_RETRY = 2,   /* dead jobs, as cwork_client_retry_dead */
    CWORK_ACTION_RUN_NOW = 3, /* retry and scheduled jobs, as cwork_client_run_now */
    CWORK_ACTION_KILL = 4     /* retry and scheduled jobs, as cwork_client_kill */
} cwork_job_action;

/* A job of a set as listed: its score and id (borrowed by the call). */
typedef struct cwork_job_ref {
    int64_t at;
    const char *id;
} cwork_job_ref;

/* Applies action to each of the n jobs of set, in order, exactly as the single call
 * does (the selected rows of a list: nothing else in the namespace changes). *done
 * (may be NULL) counts the jobs changed, *unchanged (may be NULL) those the single call
 * answered CWORK_ENOTFOUND for (gone meanwhile, or staying where they are: see the
 * single calls). Returns 0 when every job was changed; CWORK_ENOTFOUND when every job
 * was tried but some were unchanged (err: the first one's message); CWORK_EINVAL for
 * an action that does not apply to set (nothing tried); any other code stops at the job
 * that failed (a Redis failure), the counts saying what happened before. */
int cwork_client_apply(cwork_client *client, cwork_job_set set, cwork_job_action action,
                       const cwork_job_ref *jobs, size_t n, size_t *done, size_t *unchanged,
                       cwork_error *err);

/* A periodic job a pool schedules (cwork_pool_periodically_enqueue). */
typedef struct cwork_periodic_schedule {
    char *job_name;
    char *spec;      /* as registered, e.g. "0 * * * *" or "TZ=Europe/Berlin @daily" */
    int64_t next_at; /* the next fire time; 0 when unknown */
    int64_t seen_at; /* when a cwork pool last said it schedules it; 0 when it is only
                        known from instances in the scheduled set (Go pools) */
} cwork_periodic_schedule;

/* The periodic jobs of the namespace, soonest first. cwork pools with periodic jobs
 * publish them in <ns>:cwork:periodic every 2–3 minutes (entries older than 10 minutes
 * are ignored); instances waiting in the scheduled set (periodic ids, at most the 1000
 * soonest members are read) add the schedules of Go pools firing in the next minutes.
 * next_at: the soonest waiting instance, else the publishing pool's own computation
 * when still ahead, else computed here from the spec (in this process's zone when the
 * spec names none). Free with cwork_periodic_schedules_free.
 * Sharded namespace: every shard's, one entry per name and spec (the soonest next_at,
 * the latest seen_at; see cwork_client_shards). */
int cwork_client_periodic_schedules(cwork_client *client, cwork_periodic_schedule **out, size_t *n,
                                    cwork_error *err);
void cwork_periodic_schedules_free(cwork_periodic_schedule *schedules, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* CWORK_H */
