/* Allocation hooks, error filling, byte buffers, clocks and ids. */
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static void *(*alloc_malloc)(size_t) = malloc;
static void *(*alloc_realloc)(void *, size_t) = realloc;
static void (*alloc_free)(void *) = free;

void cwork_set_allocator(void *(*malloc_fn)(size_t), void *(*realloc_fn)(void *, size_t),
                         void (*free_fn)(void *))
{
    alloc_malloc = malloc_fn ? malloc_fn : malloc;
    alloc_realloc = realloc_fn ? realloc_fn : realloc;
    alloc_free = free_fn ? free_fn : free;
}

void *cw_malloc(size_t n)
{
    return alloc_malloc(n ? n : 1);
}

void *cw_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL;
    void *p = cw_malloc(n * size);
    if (p) memset(p, 0, n * size);
    return p;
}

void *cw_realloc(void *p, size_t n)
{
    return alloc_realloc(p, n ? n : 1);
}

void cw_free(void *p)
{
    if (p) alloc_free(p);
}

void cwork_free(void *p)
{
    cw_free(p);
}

char *cw_strndup(const char *s, size_t n)
{
    char *d = cw_malloc(n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *cw_strdup(const char *s)
{
    return cw_strndup(s, strlen(s));
}

/* (the name in parentheses: util.h makes cw_error a macro for the static analyzer) */
int(cw_error)(cwork_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Every code once: its name and its description. */
#define CW_ERROR_CODES(X)                                                                          \
    X(CWORK_OK, "ok")                                                                              \
    X(CWORK_DUPLICATE, "duplicate unique job")                                                     \
    X(CWORK_EINVAL, "invalid argument")                                                            \
    X(CWORK_ENOMEM, "out of memory")                                                               \
    X(CWORK_EREDIS, "redis error")                                                                 \
    X(CWORK_EPROTO, "unexpected redis reply")                                                      \
    X(CWORK_EJSON, "invalid json")                                                                 \
    X(CWORK_ETOOBIG, "job too large")                                                              \
    X(CWORK_ETIMEOUT, "timed out")                                                                 \
    X(CWORK_ENOTFOUND, "not found")                                                                \
    X(CWORK_ETYPE, "wrong type")                                                                   \
    X(CWORK_EUNSUPPORTED, "not supported")                                                         \
    X(CWORK_EJOBFAILED, "job failed by its handler")

const char *cwork_strerror(int code)
{
#define CW_ERROR_TEXT(c, text)                                                                     \
    case c:                                                                                        \
        return text;
    switch (code) {
        CW_ERROR_CODES(CW_ERROR_TEXT)
    default:
        return "unknown error";
    }
#undef CW_ERROR_TEXT
}

const char *cwork_err_name(int code)
{
#define CW_ERROR_NAME(c, text)                                                                     \
    case c:                                                                                        \
        return #c;
    switch (code) {
        CW_ERROR_CODES(CW_ERROR_NAME)
    default:
        return "unknown";
    }
#undef CW_ERROR_NAME
}

const char *cwork_version(void)
{
    return CWORK_VERSION_STRING;
}

/* ---------------------------------------------------------------- buffers */

void cw_buf_init(cw_buf *b)
{
    memset(b, 0, sizeof *b);
}

void cw_buf_free(cw_buf *b)
{
    cw_free(b->data);
    cw_buf_init(b);
}

void cw_buf_reset(cw_buf *b)
{
    b->len = 0;
    b->oom = 0;
    if (b->data) b->data[0] = '\0';
}

int cw_buf_reserve(cw_buf *b, size_t extra)
{
    if (b->oom) return -1;
    if (extra > SIZE_MAX / 2 - b->len) {
        b->oom = 1;
        return -1;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    char *d = cw_realloc(b->data, cap);
    if (!d) {
        b->oom = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    b->data[b->len] = '\0'; /* keep the promise: NUL-terminated whenever cap > 0 */
    return 0;
}

void cw_buf_append(cw_buf *b, const void *p, size_t n)
{
    if (cw_buf_reserve(b, n) < 0) return;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void cw_buf_putc(cw_buf *b, char c)
{
    if (b->len + 1 < b->cap) { /* fast path: room for c and the NUL */
        b->data[b->len++] = c;
        b->data[b->len] = '\0';
        return;
    }
    cw_buf_append(b, &c, 1);
}

void cw_buf_puts(cw_buf *b, const char *s)
{
    cw_buf_append(b, s, strlen(s));
}

void cw_buf_printf(cw_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || cw_buf_reserve(b, (size_t)n) < 0) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void cw_buf_put_uint64(cw_buf *b, uint64_t v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    cw_buf_append(b, tmp + i, sizeof tmp - i);
}

void cw_buf_put_base64(cw_buf *b, const void *p, size_t n)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = p;
    if (n > (SIZE_MAX - 3) / 4 * 3 || cw_buf_reserve(b, (n + 2) / 3 * 4) != 0) return;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16;
        if (i + 1 < n) v |= (uint32_t)s[i + 1] << 8;
        if (i + 2 < n) v |= s[i + 2];
        char q[4] = {digits[v >> 18], digits[(v >> 12) & 63],
                     (char)(i + 1 < n ? digits[(v >> 6) & 63] : '='),
                     (char)(i + 2 < n ? digits[v & 63] : '=')};
        cw_buf_append(b, q, 4);
    }
}

void cw_buf_put_int64(cw_buf *b, int64_t v)
{
    if (v < 0) {
        cw_buf_putc(b, '-');
        cw_buf_put_uint64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        cw_buf_put_uint64(b, (uint64_t)v);
    }
}

char *cw_buf_take(cw_buf *b, size_t *len)
{
    if (b->oom || cw_buf_reserve(b, 0) < 0) {
        cw_buf_free(b);
        return NULL;
    }
    char *d = b->data;
    if (len) *len = b->len;
    cw_buf_init(b);
    return d;
}

int cw_buf_give(cw_buf *b, int rc, char **out, size_t *len, cwork_error *err)
{
    if (rc) {
        cw_buf_free(b);
        return rc;
    }
    char *s = cw_buf_take(b, len);
    if (!s) return cw_error(err, CWORK_ENOMEM, "out of memory");
    *out = s;
    return 0;
}

/* ---------------------------------------------------------------- time, randomness */

int64_t cw_now(void)
{
    return (int64_t)time(NULL);
}

int64_t cw_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t cw_monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t cw_monotonic_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void cw_deadline_after_ms(struct timespec *ts, int64_t ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

int cw_random_bytes(void *p, size_t n)
{
    unsigned char *out = p;
    while (n > 0) {
        ssize_t got = getrandom(out, n, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        out += got;
        n -= (size_t)got;
    }
    return 0;
}

/* Ids come from a per-thread buffer of OS randomness, refilled every 40 ids, so that an
 * enqueue costs no system call. A forked child must never repeat its parent's ids: the
 * atfork handler bumps a generation that makes every thread's buffer stale. */
#define ID_POOL_BYTES 480
static atomic_uint id_generation;
static pthread_once_t id_once = PTHREAD_ONCE_INIT;
static _Thread_local struct {
    unsigned char bytes[ID_POOL_BYTES];
    size_t used;
    unsigned generation;
    int filled;
} id_pool;

static void id_after_fork(void)
{
    atomic_fetch_add(&id_generation, 1);
}

static void id_register_atfork(void)
{
    pthread_atfork(NULL, NULL, id_after_fork);
}

int cw_make_id(char out[25])
{
    static const char hex[] = "0123456789abcdef";
    pthread_once(&id_once, id_register_atfork);
    unsigned gen = atomic_load(&id_generation);
    if (!id_pool.filled || id_pool.generation != gen || id_pool.used + 12 > ID_POOL_BYTES) {
        if (cw_random_bytes(id_pool.bytes, ID_POOL_BYTES) < 0) return -1;
        id_pool.used = 0;
        id_pool.generation = gen;
        id_pool.filled = 1;
    }
    const unsigned char *raw = id_pool.bytes + id_pool.used;
    for (size_t i = 0; i < 12; i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    /* Used bytes are wiped so that nothing later can read them back. */
    memset(id_pool.bytes + id_pool.used, 0, 12);
    id_pool.used += 12;
    out[24] = '\0';
    return 0;
}

int cw_parse_int64(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (len > 0 && s[0] == '-') {
        neg = 1;
        i = 1;
    }
    if (i == len) return -1;
    uint64_t v = 0;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (limit - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

void cw_block_sigpipe_thread(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int cw_check_duration_ms(const char *what, int64_t ms, cwork_error *err)
{
    if (ms < 0 || ms > CW_MAX_DURATION_MS)
        return cw_error(err, CWORK_EINVAL, "%s must be between 0 and %lld ms, not %lld", what,
                        (long long)CW_MAX_DURATION_MS, (long long)ms);
    return 0;
}

void cw_block_async_signals(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    /* Signals a thread raises itself must stay deliverable (blocking them is undefined). */
    static const int synchronous[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT};
    for (size_t i = 0; i < sizeof synchronous / sizeof synchronous[0]; i++)
        sigdelset(&all, synchronous[i]);
    pthread_sigmask(SIG_BLOCK, &all, old);
}

int cw_thread_create(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t old;
    cw_block_async_signals(&old);
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
