/* Internal plumbing shared by every module: allocation through the replaceable
 * allocator, error filling, a growable byte buffer, and the clock. */
#ifndef CWORK_UTIL_H
#define CWORK_UTIL_H

#include "cwork.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

void *cw_malloc(size_t n);
void *cw_calloc(size_t n, size_t size);
void *cw_realloc(void *p, size_t n);
void cw_free(void *p);
char *cw_strdup(const char *s);
char *cw_strndup(const char *s, size_t n); /* copies n bytes (may include NUL) + NUL */

/* Fills err (if not NULL) with code and a printf-style message; returns code so that
 * callers can write `return cw_error(err, CWORK_EINVAL, "…")`. */
int cw_error(cwork_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#ifdef __clang_analyzer__
/* clang-tidy's analyzer does not look into util.c: tell it that the result is `code`,
 * or every `if ((rc = cw_error(...)))` path looks as if it could carry on with rc 0. */
#define cw_error(err, code, ...) (cw_error((err), (code), __VA_ARGS__), (code))
#endif

/* A growable byte buffer. Appends never fail loudly: on OOM the buffer sets `oom`, and
 * the owner checks it once at the end. data is always NUL-terminated when cap > 0. */
typedef struct cw_buf {
    char *data;
    size_t len;
    size_t cap;
    int oom;
} cw_buf;

void cw_buf_init(cw_buf *b);
void cw_buf_free(cw_buf *b);
void cw_buf_reset(cw_buf *b);                /* len = 0, memory kept */
int cw_buf_reserve(cw_buf *b, size_t extra); /* 0 or -1 (and oom set) */
void cw_buf_append(cw_buf *b, const void *p, size_t n);
void cw_buf_putc(cw_buf *b, char c);
void cw_buf_puts(cw_buf *b, const char *s);
void cw_buf_printf(cw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cw_buf_put_int64(cw_buf *b, int64_t v); /* plain decimal, locale-independent */
void cw_buf_put_uint64(cw_buf *b, uint64_t v);
void cw_buf_put_base64(cw_buf *b, const void *p, size_t n); /* standard, padded */
/* Hands the data over (NUL-terminated) and leaves the buffer empty; NULL if oom. */
char *cw_buf_take(cw_buf *b, size_t *len);
/* Ends a function that built its result in b: with rc == 0 hands the data to *out (and
 * its length to *len) or fails with CWORK_ENOMEM; otherwise frees b and returns rc. */
int cw_buf_give(cw_buf *b, int rc, char **out, size_t *len, cwork_error *err);

/* Wall clock in whole Unix seconds and in milliseconds; monotonic milliseconds. */
int64_t cw_now(void);
int64_t cw_now_ms(void);
int64_t cw_monotonic_ms(void);
int64_t cw_monotonic_us(void);
/* *ts = the monotonic clock + ms, for timed waits on conditions made with
 * pthread_condattr_setclock(CLOCK_MONOTONIC). */
struct timespec;
void cw_deadline_after_ms(struct timespec *ts, int64_t ms);

/* Fills p with n bytes from the OS CSPRNG; 0 or -1. */
int cw_random_bytes(void *p, size_t n);
/* A fresh 24-hex-character id (12 random bytes) into out[25]; 0 or -1. */
int cw_make_id(char out[25]);

/* pthread_create with every asynchronous signal blocked in the new thread, so that the
 * application's signal handlers (and its sigwait loops) never run on a library thread,
 * and SIGPIPE never kills the process from one. Returns pthread_create's result. */
int cw_thread_create(pthread_t *t, void *(*fn)(void *), void *arg);
/* Blocks every asynchronous signal in the calling thread (the signals a thread raises
 * itself, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP and SIGABRT, stay deliverable) and
 * saves the previous mask in *old: threads created until the mask is restored inherit
 * it (how libmicrohttpd's threads get cw_thread_create's rule). */
void cw_block_async_signals(sigset_t *old);

/* The longest duration an option takes, in ms: CWORK_MAX_DELAY_SECONDS (100 years), so
 * that now + a duration never overflows. */
#define CW_MAX_DURATION_MS (CWORK_MAX_DELAY_SECONDS * 1000)
/* 0 when 0 <= ms <= CW_MAX_DURATION_MS; else CWORK_EINVAL with "<what> must be …". */
int cw_check_duration_ms(const char *what, int64_t ms, cwork_error *err);

/* Blocks SIGPIPE in the calling thread: library threads write to sockets and pipes, and
 * a peer that went away must give EPIPE, not kill the process. */
void cw_block_sigpipe_thread(void);

/* Parses a whole decimal int64 (optional '-', no spaces); 0 on success. */
int cw_parse_int64(const char *s, size_t len, int64_t *out);

#endif
