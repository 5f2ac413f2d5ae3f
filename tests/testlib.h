/* A small test harness: CHECK macros, a runner that prints one line per case and a
 * closing "N passed, N failed" line, and helpers for tests against a real Redis.
 *
 * Redis tests read the server from CWORK_TEST_REDIS_URL, else from the file the CTest
 * fixture "redis" writes (tests/redis_fixture.sh); they fail, not skip, when neither
 * names one. Each test works in its own namespace and checks
 * the whole namespace afterwards with tl_ns_dump. */
#ifndef CWORK_TESTLIB_H
#define CWORK_TESTLIB_H

#include "cwork.h"

#include <hiredis/hiredis.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

extern int tl_case_failed;

void tl_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) tl_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                              \
    } while (0)

#define CHECK_INT(a, b)                                                                            \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_)                                                                              \
            tl_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", #a, a_, #b, b_);        \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                                                     \
            tl_fail(__FILE__, __LINE__, "%s\n   got: %s\n  want: %s", #a, a_ ? a_ : "(null)",      \
                    b_ ? b_ : "(null)");                                                           \
    } while (0)

#define CHECK_MEM(a, alen, b, blen) tl_check_mem(__FILE__, __LINE__, #a, a, alen, b, blen)
void tl_check_mem(const char *file, int line, const char *what, const void *a, size_t alen,
                  const void *b, size_t blen);

/* Sleeps ms milliseconds; monotonic milliseconds for measuring waits. */
void tl_sleep_ms(long ms);
long long tl_now_ms(void);

/* The Go oracle (tests/oracle/run, found through $CWORK_GO_ORACLE, which CTest sets):
 * its path, or NULL after printing why it cannot run (no `go` on PATH, no executable
 * oracle). Differential tests fail then, never skip: a test command that cannot compare
 * with Go must not report success. */
const char *tl_oracle(void);
/* Runs the oracle in mode ("json" or "cron") with stdin from in_path and stdout to
 * out_path; returns its exit status or -1. Its stderr (build errors) is the test's. */
int tl_run_oracle(const char *oracle, const char *mode, const char *in_path, const char *out_path);
/* A whole file (malloc'd, NUL-terminated, free with free), or NULL. */
char *tl_read_file(const char *path, size_t *len);
/* True when prog is an executable in a PATH directory. */
int tl_on_path(const char *prog);

/* Recording what the library logs: tl_capture_logs() clears the record and installs a
 * logger (debug level, thread-safe) that keeps the first TL_MAX_LOGS records, each with
 * its fields as "key=value key=value". */
#define TL_MAX_LOGS 64
typedef struct tl_log {
    cwork_log_level level;
    char message[64];
    char fields[512];
} tl_log;
extern tl_log tl_logs[TL_MAX_LOGS];
extern int tl_nlogs;
void tl_capture_logs(void);
const tl_log *tl_find_log(const char *message); /* the first with this message, or NULL */
int tl_count_logs(const char *message);

/* Runs one case; RUN(fn) names it after the function. */
void tl_run(const char *name, void (*fn)(void));
#define RUN(fn) tl_run(#fn, fn)
/* Prints the closing line and returns the process exit status. */
int tl_finish(void);
/* Exit status for "skipped" (ctest SKIP_RETURN_CODE). */
#define TL_SKIP 77

/* ---- Redis helpers (hiredis directly, independent of the library under test) */
const char *tl_redis_url(void);                            /* exits 1 with a message when none */
redisContext *tl_redis_connect(void);                      /* to tl_redis_url(); exits on failure */
redisReply *tl_cmd(redisContext *c, const char *fmt, ...); /* exits on I/O error */
/* A set-up command whose reply is not needed: exits on an I/O error or an error reply. */
void tl_do(redisContext *c, const char *fmt, ...);
/* A fresh namespace "cwt-<tag>-<random hex>" (static storage, one per call site use). */
const char *tl_unique_ns(const char *tag, char *buf, size_t size);
/* Every key that starts with prefix, sorted, one line each:
 *   key TYPE [ttl=N] value
 * string: the value; list: elements left to right; set: sorted members; zset:
 * member=score ascending; hash: sorted field=value. Non-printable bytes are written
 * as \xNN. ttl is the remaining TTL rounded up to seconds, shown only when set.
 * Returns a malloc'd string. */
char *tl_ns_dump(redisContext *c, const char *prefix);
void tl_ns_delete(redisContext *c, const char *prefix);
/* Checks the daily stats hashes cwork pools keep under "<ns>:cwork:stat:<date>" (the
 * processed and failed jobs summed over their days, a TTL of about 40 days) and
 * deletes them, so that a whole-namespace dump after a pool run shows the rest. The
 * per-minute hashes "<ns>:cwork:stat:<YYYY-MM-DDTHH>" are checked (fields MM:processed and
 * MM:failed, a TTL of about 25 h, the same sums as the days) and deleted with them, and
 * so are the totals a killed pool left in "<ns>:cwork:stats_sent:<id>" (a stopped pool
 * deletes its own): a hash of processed and failed no larger than the days' sums. */
void tl_take_stat_days(redisContext *c, const char *ns, long long processed, long long failed);
/* The failure histories (<ns>:cwork:failures:<id>, PROTOCOL §26) that pools' commits of
 * failed jobs wrote, checked and deleted, so that the caller can compare the rest of the
 * namespace: each a list of 1 to 10 entries ending in a first_t, whose TTL is at least
 * the 30 days of a dead job's story (less two minutes). Returns how many there were. */
long long tl_take_failure_histories(redisContext *c, const char *ns);

/* ---- a private redis-server, for tests that kill and restart Redis */
typedef struct tl_server {
    pid_t pid;
    int port;
    char dir[256];
    char url[64]; /* redis://127.0.0.1:<port> */
} tl_server;
/* Starts redis-server on a free loopback port in a fresh temporary directory, with
 * AOF (appendfsync always) when aof is non-zero. 0 or -1. */
int tl_server_start(tl_server *s, int aof);
/* Kills it with sig (SIGKILL or SIGTERM) and waits. */
void tl_server_stop(tl_server *s, int sig);
/* Starts it again on the same port and directory (data survives with AOF). */
int tl_server_restart(tl_server *s, int aof);
/* Stops it and removes its directory. */
void tl_server_destroy(tl_server *s);

#endif
