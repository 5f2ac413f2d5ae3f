/* The process-wide logger: the one piece of global mutable state besides the
 * allocator. Records are formatted into fields and handed to the user's callback.
 *
 * The configuration (callback, userdata, level) is one immutable object behind one
 * atomic pointer, so a record sees a whole configuration, old or new, never a callback
 * of one with the userdata of another, and cwork_set_logger is safe from any thread at
 * any time. A replaced object is never freed — a thread may be about to call through
 * it — but kept on a list and reused when the same configuration is set again (the
 * cwork command silences the logger around its connection check and restores it), so
 * memory grows only with the number of distinct configurations. */
#include "log.h"

#include "util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

typedef struct log_config {
    cwork_logger_fn fn;
    void *userdata;
    cwork_log_level min_level;
    struct log_config *next_kept; /* every configuration ever installed */
} log_config;

static _Atomic(log_config *) log_current; /* NULL: silent */
static pthread_mutex_t log_kept_mu = PTHREAD_MUTEX_INITIALIZER;
static log_config *log_kept;

int cwork_set_logger(cwork_logger_fn fn, void *userdata, cwork_log_level min_level)
{
    if (!fn) {
        atomic_store_explicit(&log_current, NULL, memory_order_release);
        return 0;
    }
    pthread_mutex_lock(&log_kept_mu); /* serialises setters; records never take it */
    log_config *c = log_kept;
    while (c && !(c->fn == fn && c->userdata == userdata && c->min_level == min_level))
        c = c->next_kept;
    if (!c && (c = cw_malloc(sizeof *c)) != NULL) {
        *c = (log_config){fn, userdata, min_level, log_kept};
        log_kept = c;
    }
    if (c) atomic_store_explicit(&log_current, c, memory_order_release);
    pthread_mutex_unlock(&log_kept_mu);
    return c ? 0 : CWORK_ENOMEM;
}

static const log_config *current_if_enabled(cwork_log_level level)
{
    const log_config *c = atomic_load_explicit(&log_current, memory_order_acquire);
    return c && level >= c->min_level ? c : NULL;
}

int cw_log_enabled(cwork_log_level level)
{
    return current_if_enabled(level) != NULL;
}

#define CW_LOG_MAX_FIELDS 16

void cw_log(cwork_log_level level, const char *message, ...)
{
    const log_config *c = current_if_enabled(level);
    if (!c) return;
    cwork_log_field fields[CW_LOG_MAX_FIELDS];
    size_t n = 0;
    va_list ap;
    va_start(ap, message);
    for (;;) {
        const char *key = va_arg(ap, const char *);
        if (!key) break;
        const char *value = va_arg(ap, const char *);
        if (n < CW_LOG_MAX_FIELDS) {
            fields[n].key = key;
            fields[n].value = value ? value : "";
            n++;
        }
    }
    va_end(ap);
    c->fn(c->userdata, level, message, fields, n);
}

static const char *level_name(cwork_log_level level)
{
    switch (level) {
    case CWORK_LOG_DEBUG:
        return "debug";
    case CWORK_LOG_INFO:
        return "info";
    case CWORK_LOG_WARN:
        return "warn";
    default:
        return "error";
    }
}

/* Values with spaces, quotes, '=' or control bytes are quoted so that lines stay
 * machine-readable; control bytes (which values from Redis may carry: a terminal escape
 * in a job name) are written as \xNN, never raw to an operator's terminal. */
static void put_value(FILE *f, const char *v)
{
    int plain = *v != '\0';
    for (const unsigned char *p = (const unsigned char *)v; *p && plain; p++)
        plain = *p > 0x20 && *p != 0x7f && *p != '"' && *p != '=' && *p != '\\';
    if (plain) {
        fputs(v, f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void cwork_stderr_logger(void *userdata, cwork_log_level level, const char *message,
                         const cwork_log_field *fields, size_t nfields)
{
    (void)userdata;
    flockfile(stderr);
    fprintf(stderr, "level=%s msg=", level_name(level));
    put_value(stderr, message);
    for (size_t i = 0; i < nfields; i++) {
        fprintf(stderr, " %s=", fields[i].key);
        put_value(stderr, fields[i].value);
    }
    fputc('\n', stderr);
    funlockfile(stderr);
}
