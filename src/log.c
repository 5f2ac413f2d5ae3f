/* The process-wide logger: the one piece of global mutable state besides the
 * allocator. Records are formatted into fields and handed to the user's callback. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static cwork_logger_fn log_fn;
static void *log_userdata;
static cwork_log_level log_min = CWORK_LOG_INFO;

void cwork_set_logger(cwork_logger_fn fn, void *userdata, cwork_log_level min_level)
{
    log_fn = fn;
    log_userdata = userdata;
    log_min = min_level;
}

int cw_log_enabled(cwork_log_level level)
{
    return log_fn != NULL && level >= log_min;
}

#define CW_LOG_MAX_FIELDS 16

void cw_log(cwork_log_level level, const char *message, ...)
{
    if (!cw_log_enabled(level))
        return;
    cwork_log_field fields[CW_LOG_MAX_FIELDS];
    size_t n = 0;
    va_list ap;
    va_start(ap, message);
    for (;;) {
        const char *key = va_arg(ap, const char *);
        if (!key)
            break;
        const char *value = va_arg(ap, const char *);
        if (n < CW_LOG_MAX_FIELDS) {
            fields[n].key = key;
            fields[n].value = value ? value : "";
            n++;
        }
    }
    va_end(ap);
    log_fn(log_userdata, level, message, fields, n);
}

static const char *level_name(cwork_log_level level)
{
    switch (level) {
    case CWORK_LOG_DEBUG: return "debug";
    case CWORK_LOG_INFO: return "info";
    case CWORK_LOG_WARN: return "warn";
    default: return "error";
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
