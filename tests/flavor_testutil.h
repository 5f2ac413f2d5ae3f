/* Shared by the Go-flavour tests: building expected namespace dumps around upstream's
 * fixtures (upstream_testutil.h) and the bytes cwork wrote with random ids. */
#ifndef CWORK_FLAVOR_TESTUTIL_H
#define CWORK_FLAVOR_TESTUTIL_H

#include "testlib.h"
#include "upstream_testutil.h"

#include <stdarg.h>
#include <stdlib.h>

/* s as tl_ns_dump writes it: printable ASCII except '\' as is, every other byte \xNN.
 * Static storage, a ring of eight. */
__attribute__((unused)) static const char *dumped(const char *s)
{
    static char ring[8][4096];
    static int next;
    char *out = ring[next++ % 8], *o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p && o < out + sizeof ring[0] - 5;
         p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '\\')
            *o++ = (char)*p;
        else
            o += sprintf(o, "\\x%02x", *p);
    }
    *o = '\0';
    return out;
}

/* A fixture template with the namespace filled in and its stand-in id and time replaced
 * by what cwork drew: UP_ID by id, UP_ID2 by id2, 1700000000 by t and 1700000005 by t2
 * (NULL / 0: left as they are). Static storage, a ring of eight. */
__attribute__((unused)) static const char *fixture(const char *tmpl, const char *ns, const char *id,
                                                   long long t, const char *id2, long long t2)
{
    static char ring[8][4096];
    static int next;
    char filled[4096];
    snprintf(filled, sizeof filled, tmpl, ns);
    char *out = ring[next++ % 8], *o = out;
    char ts[24], ts2[24];
    snprintf(ts, sizeof ts, "%lld", t);
    snprintf(ts2, sizeof ts2, "%lld", t2);
    for (const char *p = filled; *p && o < out + sizeof ring[0] - 32;) {
        if (id && strncmp(p, UP_ID, 24) == 0) {
            o += sprintf(o, "%s", id);
            p += 24;
        } else if (id2 && strncmp(p, UP_ID2, 24) == 0) {
            o += sprintf(o, "%s", id2);
            p += 24;
        } else if (t && strncmp(p, "1700000000", 10) == 0) {
            o += sprintf(o, "%s", ts);
            p += 10;
        } else if (t2 && strncmp(p, "1700000005", 10) == 0) {
            o += sprintf(o, "%s", ts2);
            p += 10;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return out;
}

/* Removes the daily stats hashes a pool run leaves (<ns>:cwork:stat:<date>, and a killed
 * pool's <ns>:cwork:stats_sent:<id>), so that the
 * whole-namespace dump shows the rest. Their counts are test_pool's subject, not checked
 * here: the pool's baseline for them is taken by its maintenance thread, which a job
 * finished before that thread started escapes (counted 0 at times). */
__attribute__((unused)) static void drop_stat_days(redisContext *c, const char *ns)
{
    for (int k = 0; k < 2; k++) {
        redisReply *r = tl_cmd(c, "KEYS %s:cwork:stat%s*", ns, k ? "s_sent:" : ":");
        for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
            freeReplyObject(tl_cmd(c, "DEL %b", r->element[i]->str, r->element[i]->len));
        freeReplyObject(r);
    }
}

/* Compares the dump of the namespace ns with want (printf-style). */
__attribute__((unused)) static void check_ns_dump(redisContext *c, const char *ns, const char *file,
                                                  int line, const char *fmt, ...)
{
    char want[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(want, sizeof want, fmt, ap);
    va_end(ap);
    char *got = tl_ns_dump(c, ns);
    if (strcmp(got, want) != 0)
        tl_fail(file, line, "namespace dump\n   got:\n%s  want:\n%s", got, want);
    free(got);
}

#endif
