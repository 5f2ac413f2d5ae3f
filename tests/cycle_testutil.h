/* Shared by the cycle script tests (test_cycle_fetch.c, test_cycle_commit.c): the
 * script (src/scripts/cycle.lua) run directly with EVAL against a real Redis, with
 * helpers to build its KEYS/ARGV, read its flat reply and compare the whole namespace.
 * Types are one letter each, "a" = index 1, "b" = 2, "c" = 3; in templates '@' is the
 * namespace and "<a3>" the job {"name":"a","id":"a3"}. */
#ifndef CWORK_CYCLE_TESTUTIL_H
#define CWORK_CYCLE_TESTUTIL_H

#include "commit_layout.h"
#include "cycle_call.h"
#include "scripts.h"
#include "testlib.h"

#include <stdarg.h>
#include <stdlib.h>

#define POOL "0123456789abcdef01234567"
#define MAXT 3
#define BIG 8192

static redisContext *rc_;
static char ns_[64];

/* ---------------------------------------------------------------- helpers */

__attribute__((format(printf, 3, 4))) static inline void app(char *buf, size_t size,
                                                             const char *fmt, ...)
{
    size_t len = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

/* Expands a template (malloc'd): '@' → the namespace, "<a3>" → {"name":"a","id":"a3"}. */
static inline char *expand(const char *t)
{
    char *out = malloc(strlen(t) * (sizeof ns_ + 24) + 1), *o = out;
    if (!out) abort();
    for (; *t; t++) {
        const char *end = *t == '<' ? strchr(t, '>') : NULL;
        if (*t == '@') {
            o += sprintf(o, "%s", ns_);
        } else if (end) {
            o += sprintf(o, "{\"name\":\"%c\",\"id\":\"%.*s\"}", t[1], (int)(end - t - 1), t + 1);
            t = end;
        } else {
            *o++ = *t;
        }
    }
    *o = '\0';
    return out;
}

/* Appends "<c first> | … | <c last>", counting up or down. */
static inline void seq(char *buf, size_t size, char c, int first, int last)
{
    int step = first <= last ? 1 : -1;
    for (int i = first;; i += step) {
        app(buf, size, "%s<%c%d>", i == first ? "" : " | ", c, i);
        if (i == last) break;
    }
}

static inline void fresh(void)
{
    tl_unique_ns("cy", ns_, sizeof ns_);
}

static inline void done(redisReply *r)
{
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

#define cmd(...) tl_do(rc_, __VA_ARGS__)

/* LPUSHes jobs <c from> … <c to> to type c's queue: <c from> is the oldest. */
static inline void push(char c, int from, int to)
{
    for (int i = from; i <= to; i++) {
        char tmpl[16];
        snprintf(tmpl, sizeof tmpl, "<%c%d>", c, i);
        char *job = expand(tmpl);
        cmd("LPUSH %s:jobs:%b %s", ns_, &c, (size_t)1, job);
        free(job);
    }
}

/* SETs <ns>:jobs:<c><suffix>. */
static inline void set(char c, const char *suffix, const char *value)
{
    cmd("SET %s:jobs:%b%s %s", ns_, &c, (size_t)1, suffix, value);
}

/* Draws: orders of 0-based type indices, one after the other (n per draw), and the
 * width the call packs them with (2 forces two bytes per index below 256 types). */
typedef struct drawbuf {
    size_t idx[256];
    size_t len;
    int width;
} drawbuf;

/* count times the draws of orders ("ab ba": [a,b] then [b,a]). */
static inline drawbuf draws(int width, const char *orders, int count)
{
    drawbuf d = {.width = width};
    for (int k = 0; k < count; k++)
        for (const char *p = orders; *p; p++)
            if (*p != ' ') d.idx[d.len++] = (size_t)(*p - 'a');
    return d;
}

/* The commit arguments: ARGV[5] (the groups) and what follows it. */
typedef struct commit {
    unsigned char groups[CW_COMMIT_GROUP_BYTES * MAXT];
    size_t glen;
    const char *args[32];
    int nargs;
    char store[2048]; /* the expanded arguments */
    size_t used;
} commit;

/* A group of type t (1-based), laid out as the pool's commit lays it (commit_layout.h). */
static inline void group(commit *c, int t, int ok, int failed)
{
    cw_commit_put_group(c->groups + c->glen, (size_t)t, (size_t)ok, (size_t)failed);
    c->glen += CW_COMMIT_GROUP_BYTES;
}

/* Appends arguments (templates, NULL-terminated) after the groups. */
static inline void args(commit *c, ...)
{
    va_list ap;
    va_start(ap, c);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL;) {
        char *x = expand(a);
        c->args[c->nargs++] = strcpy(c->store + c->used, x);
        c->used += strlen(x) + 1;
        free(x);
    }
    va_end(ap);
}

/* The keys of cycle_eval's types, laid out by the library's encoder (cycle_call.c). */
typedef struct test_keys {
    int n;
    char (*keys)[128]; /* [kind * n + type] */
} test_keys;

/* Rate limits (test_cycle_rate_limit.c): the 0-based types cycle_eval passes as limited,
 * and the time it passes for them (µs); none by default. */
static const size_t *cycle_limited_;
static size_t cycle_nlimited_;
static int64_t cycle_now_us_ = -1;

static inline const char *test_key(const void *ud, size_t type, cw_cycle_key kind, size_t *len)
{
    const test_keys *k = ud;
    /* A name, then a rate limit key, per type after the six kinds. */
    size_t row = kind == CW_CYCLE_NAME         ? CW_CYCLE_KEY_KINDS
                 : kind == CW_CYCLE_RATE_LIMIT ? CW_CYCLE_KEY_KINDS + 1
                                               : (size_t)kind;
    const char *key = k->keys[row * (size_t)k->n + type];
    *len = strlen(key);
    return key;
}

/* One EVAL of the cycle script for n types, type t (0-based) named name(t), built by the
 * library's encoder: the draws (ndraws orders of n indices each; width 2 forces two
 * bytes per index), the commit groups and the nargs arguments after them. Exits on an
 * I/O error. */
static inline redisReply *cycle_eval(int n, const char *(*name)(int t), int single,
                                     const size_t *orders, size_t ndraws, int width,
                                     const unsigned char *groups, size_t glen,
                                     const char *const *args, int nargs)
{
    static const char *const suffix[CW_CYCLE_KEY_KINDS] = {
        [CW_CYCLE_PAUSED] = ":paused",
        [CW_CYCLE_LOCK] = ":lock",
        [CW_CYCLE_MAX_CONCURRENCY] = ":max_concurrency",
        [CW_CYCLE_QUEUE] = "",
        [CW_CYCLE_INPROGRESS] = ":" POOL ":inprogress",
        [CW_CYCLE_LOCK_INFO] = ":lock_info"};
    test_keys tk = {n, malloc((size_t)n * (CW_CYCLE_KEY_KINDS + 2) * 128)};
    cw_argv commit_args = {0};
    if (!tk.keys) abort();
    for (int kind = 0; kind < CW_CYCLE_KEY_KINDS; kind++)
        for (int t = 0; t < n; t++)
            snprintf(tk.keys[kind * n + t], 128, "%s:jobs:%s%s", ns_, name(t), suffix[kind]);
    for (int t = 0; t < n; t++) {
        snprintf(tk.keys[CW_CYCLE_KEY_KINDS * n + t], 128, "%s", name(t));
        snprintf(tk.keys[(CW_CYCLE_KEY_KINDS + 1) * n + t], 128, "%s:cwork:rate_limit:%s", ns_,
                 name(t));
    }
    char retry[96], dead[96], limits[96], cancelled[96];
    snprintf(retry, sizeof retry, "%s:retry", ns_);
    snprintf(dead, sizeof dead, "%s:dead", ns_);
    snprintf(limits, sizeof limits, "%s:cwork:rate_limits", ns_);
    snprintf(cancelled, sizeof cancelled, "%s:cwork:cancelled", ns_);
    cw_cycle_keys keys = {.ntypes = (size_t)n,
                          .key = test_key,
                          .ud = &tk,
                          .retry = retry,
                          .dead = dead,
                          .retry_len = strlen(retry),
                          .dead_len = strlen(dead),
                          .rate_limits = limits,
                          .rate_limits_len = strlen(limits),
                          .cancelled = cancelled,
                          .cancelled_len = strlen(cancelled)};
    cw_cycle_call call;
    cw_cycle_call_init(&call, (size_t)n);
    if (width == 2) call.width = 2;
    for (size_t d = 0; d < ndraws; d++)
        cw_cycle_call_add_draw(&call, orders + d * (size_t)n);
    if (groups) {
        cw_argv_add_ref(&commit_args, groups, glen);
        for (int i = 0; i < nargs; i++)
            cw_argv_add_str(&commit_args, args[i]);
    }
    if (cw_argv_check(&commit_args, NULL) ||
        cw_cycle_call_finish_limited(&call, &keys, POOL, single, &commit_args, cycle_limited_,
                                     cycle_nlimited_, cycle_now_us_))
        abort();
    int argc = 3 + call.nkeys + call.nargs;
    const char **argv = malloc((size_t)argc * sizeof *argv);
    size_t *lens = malloc((size_t)argc * sizeof *lens);
    char count[16];
    if (!argv || !lens) abort();
    snprintf(count, sizeof count, "%d", call.nkeys);
    argv[0] = "EVAL", lens[0] = 4;
    argv[1] = cw_script_cycle.body, lens[1] = cw_script_cycle.body_len;
    argv[2] = count, lens[2] = strlen(count);
    memcpy(argv + 3, call.args.argv, (size_t)(argc - 3) * sizeof *argv);
    memcpy(lens + 3, call.args.lens, (size_t)(argc - 3) * sizeof *lens);
    redisReply *r = redisCommandArgv(rc_, argc, argv, lens);
    cw_cycle_call_clear(&call);
    free(tk.keys);
    cw_argv_free(&commit_args);
    free(argv);
    free(lens);
    if (!r) {
        fprintf(stderr, "test redis I/O error: %s\n", rc_->errstr);
        exit(1);
    }
    return r;
}

/* The one-letter type names of cycle(). */
static const char *cycle_types_;
static inline const char *letter_name(int t)
{
    static char buf[2];
    buf[0] = cycle_types_[t];
    return buf;
}

/* One EVAL of the cycle script for types (letters in index order); d NULL: no draws,
 * c NULL: nothing to commit. */
static inline redisReply *cycle(const char *types, int single, const drawbuf *d, const commit *c)
{
    cycle_types_ = types;
    size_t n = strlen(types);
    return cycle_eval((int)n, letter_name, single, d ? d->idx : NULL, d && n ? d->len / n : 0,
                      d ? d->width : 1, c ? c->groups : NULL, c ? c->glen : 0, c ? c->args : NULL,
                      c ? c->nargs : 0);
}

/* The jobs of type t (0: every type) in a cycle reply, over all its groups in reply order,
 * joined with " | " into buf; -1 when the reply is not {removed, groups…}, else their
 * number. */
static inline int fetched(const redisReply *r, int t, char *buf, size_t size)
{
    buf[0] = '\0';
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
        r->element[0]->type != REDIS_REPLY_INTEGER)
        return -1;
    int count = 0;
    for (size_t i = 1; i < r->elements;) {
        if (i + 1 >= r->elements || r->element[i]->type != REDIS_REPLY_INTEGER ||
            r->element[i + 1]->type != REDIS_REPLY_INTEGER || r->element[i + 1]->integer < 1 ||
            (size_t)r->element[i + 1]->integer > r->elements - i - 2)
            return -1;
        long long type = r->element[i]->integer, m = r->element[i + 1]->integer;
        if (type <= 0) { /* lock write errors, cancelled jobs, a rate limit's wait: not jobs */
            i += 2 + (size_t)m;
            continue;
        }
        for (i += 2; m > 0; m--, i++) {
            if (r->element[i]->type != REDIS_REPLY_STRING) return -1;
            if (type == t || t == 0) {
                app(buf, size, "%s%s", count ? " | " : "", r->element[i]->str);
                count++;
            }
        }
    }
    return count;
}

#define CHECK_GOT(r, t, tmpl) check_got(__LINE__, r, t, tmpl)
static inline void check_got(int line, const redisReply *r, int t, const char *tmpl)
{
    char got[BIG];
    char *want = expand(tmpl);
    if (fetched(r, t, got, sizeof got) < 0)
        tl_fail(__FILE__, line, "malformed cycle reply (type %d, %s)", r->type,
                r->type == REDIS_REPLY_ERROR ? r->str : "-");
    else if (strcmp(got, want) != 0)
        tl_fail(__FILE__, line, "jobs of type %d\n   got: %s\n  want: %s", t, got, want);
    free(want);
}

#define CHECK_REMOVED(r, n) check_removed(__LINE__, r, n)
static inline void check_removed(int line, const redisReply *r, long long n)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
        r->element[0]->type != REDIS_REPLY_INTEGER || r->element[0]->integer != n)
        tl_fail(__FILE__, line, "reply's removed count is not %lld (type %d, %s)", n, r->type,
                r->type == REDIS_REPLY_ERROR ? r->str : "-");
}

/* The reply's first element when some committed jobs were not removed: {n, positions of
 * their bytes in the commit's arguments}, positions given as "1 10". */
#define CHECK_NOT_REMOVED(r, n, positions) check_not_removed(__LINE__, r, n, positions)
static inline void check_not_removed(int line, const redisReply *r, long long n,
                                     const char *positions)
{
    char got[256] = "";
    const redisReply *f = r->type == REDIS_REPLY_ARRAY && r->elements ? r->element[0] : NULL;
    if (!f || f->type != REDIS_REPLY_ARRAY || f->elements < 1 ||
        f->element[0]->type != REDIS_REPLY_INTEGER || f->element[0]->integer != n) {
        tl_fail(__FILE__, line, "reply's first element is not {%lld, %s}", n, positions);
        return;
    }
    for (size_t i = 1; i < f->elements; i++) {
        size_t len = strlen(got);
        snprintf(got + len, sizeof got - len, "%s%lld", i > 1 ? " " : "", f->element[i]->integer);
    }
    if (strcmp(got, positions) != 0)
        tl_fail(__FILE__, line, "jobs not removed at \"%s\", expected \"%s\"", got, positions);
}

#define CHECK_NS(tmpl) check_ns(__LINE__, tmpl)
static inline void check_ns(int line, const char *tmpl)
{
    char *got = tl_ns_dump(rc_, ns_), *want = expand(tmpl);
    if (strcmp(got, want) != 0)
        tl_fail(__FILE__, line, "namespace\n--- got:\n%s--- want:\n%s---", got, want);
    free(got);
    free(want);
}

#endif
