/* Enqueueing into a sharded namespace (PROTOCOL §27) against a real Redis, every shard's
 * whole namespace checked after each case: an unsharded namespace is written exactly as
 * before (no record, one HMGET of it per refresh period); with 4 shards (all on the one
 * server) each job lands in the shard its routing key picks, unique and ByKey guards are
 * one per namespace, pinned names go by name, a batch is split per shard with its
 * statuses in order, a tracked batch stays in its shard; disagreements and damage are
 * refused naming the key, with nothing written. */
#include "clock.h"
#include "cwork.h"
#include "sharding.h"
#include "testlib.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define S 4

static redisContext *rc_;
static cwork_redis *redis_;
static char ns_[64];

/* ---------------------------------------------------------------- expected dumps */

/* The expected dump of each shard: lines "key type [ttl=N] value", sorted when read. */
typedef struct want {
    char *line[S][128];
    size_t n[S];
} want;

/* A formatted string, malloc'd. */
static char *vfmt(const char *f, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, f, ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!s) abort();
    vsnprintf(s, (size_t)n + 1, f, again);
    va_end(again);
    return s;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = vfmt(f, ap);
    va_end(ap);
    return s;
}

static void want_add(want *w, unsigned shard, const char *f, ...)
    __attribute__((format(printf, 3, 4)));
static void want_add(want *w, unsigned shard, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = vfmt(f, ap);
    va_end(ap);
    CHECK(w->n[shard] < 128);
    w->line[shard][w->n[shard]++] = s;
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ZRANGE's order of "member=score" strings: by score, then by the member's bytes. */
static int cmp_zentry(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    const char *ex = strrchr(x, '='), *ey = strrchr(y, '=');
    long long sx = atoll(ex + 1), sy = atoll(ey + 1);
    if (sx != sy) return sx < sy ? -1 : 1;
    size_t lx = (size_t)(ex - x), ly = (size_t)(ey - y);
    int c = memcmp(x, y, lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

static void shard_ns(unsigned i, char *out, size_t size)
{
    cwork_error err = {0};
    CHECK_INT(cw_sharding_ns(ns_, i, out, size, &err), 0);
}

/* Checks every shard's whole namespace against w (and frees w's lines). */
static void check_shards(want *w, const char *file, int line)
{
    for (unsigned i = 0; i < S; i++) {
        qsort(w->line[i], w->n[i], sizeof w->line[i][0], cmp_line);
        size_t len = 1;
        for (size_t k = 0; k < w->n[i]; k++)
            len += strlen(w->line[i][k]) + 1;
        char *text = calloc(1, len);
        for (size_t k = 0; k < w->n[i]; k++) {
            strcat(text, w->line[i][k]);
            strcat(text, "\n");
            free(w->line[i][k]);
        }
        w->n[i] = 0;
        char name[80];
        shard_ns(i, name, sizeof name);
        char *got = tl_ns_dump(rc_, name);
        if (strcmp(got, text) != 0)
            tl_fail(file, line, "shard %u (%s):\n--- got\n%s--- want\n%s", i, name, got, text);
        free(got);
        free(text);
    }
}
#define CHECK_SHARDS(w) check_shards((w), __FILE__, __LINE__)

static void delete_shards(void)
{
    for (unsigned i = 0; i < S; i++) {
        char name[80];
        shard_ns(i, name, sizeof name);
        tl_ns_delete(rc_, name);
    }
}

/* The record line of a namespace declared with S shards (its `created` read back). */
static void want_record(want *w)
{
    redisReply *r = tl_cmd(rc_, "HGET %s:cwork:shards created", ns_);
    CHECK(r->type == REDIS_REPLY_STRING);
    want_add(w, 0, "%s:cwork:shards hash count=%d | created=%s | hash=fnv1a64-jump", ns_, S,
             r->type == REDIS_REPLY_STRING ? r->str : "?");
    freeReplyObject(r);
}

/* A list line: elements newest first (LPUSH), raws given oldest first. */
static void want_list(want *w, unsigned shard, const char *key, char **raws, size_t n)
{
    if (n == 0) return;
    size_t len = strlen(key) + 8;
    for (size_t k = 0; k < n; k++)
        len += strlen(raws[k]) + 3;
    char *s = calloc(1, len);
    strcat(s, key);
    strcat(s, " list");
    for (size_t k = n; k-- > 0;) {
        strcat(s, k == n - 1 ? " " : " | ");
        strcat(s, raws[k]);
    }
    want_add(w, shard, "%s", s);
    free(s);
}

/* A job's JSON as tl_ns_dump shows it (a backslash or a byte outside printable ASCII
 * as \xNN). */
static char *raw_of(const cwork_job *job)
{
    size_t len = 0;
    const char *raw = cwork_job_raw(job, &len);
    char *out = malloc(4 * len + 1), *o = out;
    if (!out) abort();
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)raw[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '\\')
            *o++ = (char)ch;
        else
            o += sprintf(o, "\\x%02x", ch);
    }
    *o = '\0';
    return out;
}

static unsigned shard_of_str(const char *key)
{
    return cw_sharding_of(key, strlen(key), S);
}

static cwork_enqueuer *enqueuer(unsigned declare)
{
    cwork_error err = {0};
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, &err);
    CHECK(enq != NULL);
    if (declare) CHECK_INT(cwork_enqueuer_set_shards(enq, declare, &err), 0);
    return enq;
}

static cwork_args *int_args(const char *key, int64_t v)
{
    cwork_args *a = cwork_args_new();
    cwork_args_set_int64(a, key, v);
    return a;
}

/* ---------------------------------------------------------------- unsharded */

/* Declaring nothing or 1: the namespace gets exactly what it always got, no record,
 * nothing in any other shard's name. */
static void unsharded_namespace_is_written_as_before(void)
{
    for (unsigned declare = 0; declare <= 1; declare++) {
        tl_unique_ns("shq1", ns_, sizeof ns_);
        cwork_enqueuer *enq = enqueuer(declare);
        cwork_job *a = NULL, *u = NULL, *d = NULL;
        cwork_args *args = int_args("n", 1);
        cwork_error err = {0};
        CHECK_INT(cwork_enqueue(enq, "a", NULL, &a, &err), 0);
        CHECK_INT(cwork_enqueue_unique(enq, "u", args, &u, &err), 0);
        CHECK_INT(cwork_enqueue_unique(enq, "u", args, NULL, &err), CWORK_DUPLICATE);
        CHECK_INT(cwork_enqueue_in(enq, "d", 60, NULL, &d, &err), 0);
        want w = {0};
        char *ra = raw_of(a), *ru = raw_of(u), *rd = raw_of(d);
        want_add(&w, 0, "%s:jobs:a list %s", ns_, ra);
        want_add(&w, 0, "%s:jobs:u list %s", ns_, ru);
        want_add(&w, 0, "%s:known_jobs set a | d | u", ns_);
        want_add(&w, 0, "%s:scheduled zset %s=%lld", ns_, rd, (long long)cwork_job_run_at(d));
        want_add(&w, 0, "%s:unique:u:{\"n\":1}\\x0a string ttl=86400 1", ns_);
        CHECK_SHARDS(&w);
        free(ra), free(ru), free(rd);
        cwork_job_free(a), cwork_job_free(u), cwork_job_free(d);
        cwork_args_free(args);
        delete_shards();
        cwork_enqueuer_free(enq);
    }
}

static long long hmget_calls(redisContext *c)
{
    redisReply *r = tl_cmd(c, "INFO commandstats");
    const char *p = r->str ? strstr(r->str, "cmdstat_hmget:calls=") : NULL;
    long long n = p ? atoll(p + strlen("cmdstat_hmget:calls=")) : 0;
    freeReplyObject(r);
    return n;
}

/* On a server of its own (so that no other test's commands count): an enqueuer that
 * declares nothing reads the record once before its first enqueue and again only when
 * ENQ_SHARDS_REFRESH_MS have passed on the (manual) monotonic clock, and follows a
 * namespace sharded meanwhile. */
static void record_is_read_once_per_period_and_followed(void)
{
    tl_server srv;
    CHECK_INT(tl_server_start(&srv, 0), 0);
    redisContext *c = redisConnect("127.0.0.1", srv.port);
    CHECK(c && !c->err);
    cwork_error err = {0};
    cwork_redis *r = cwork_redis_new(srv.url, NULL, &err);
    CHECK(r != NULL);
    tl_unique_ns("shq2", ns_, sizeof ns_);
    cw_clock_manual(tl_now_ms());
    cwork_enqueuer *enq = cwork_enqueuer_new(r, ns_, &err);
    freeReplyObject(tl_cmd(c, "CONFIG RESETSTAT"));
    for (int i = 0; i < 50; i++)
        CHECK_INT(cwork_enqueue(enq, "a", NULL, NULL, &err), 0);
    CHECK_INT(hmget_calls(c), 1);
    cw_clock_advance_ms(4999);
    CHECK_INT(cwork_enqueue(enq, "a", NULL, NULL, &err), 0);
    CHECK_INT(hmget_calls(c), 1);
    /* another process shards the namespace: followed from the next read on */
    cwork_enqueuer *other = cwork_enqueuer_new(r, ns_, &err);
    CHECK_INT(cwork_enqueuer_set_shards(other, S, &err), 0);
    CHECK_INT(hmget_calls(c), 3); /* its read, and its read after writing the record */
    cw_clock_advance_ms(1);
    int in_other_shards = 0;
    for (int i = 0; i < 40; i++) {
        cwork_job *job = NULL;
        CHECK_INT(cwork_enqueue(enq, "b", NULL, &job, &err), 0);
        in_other_shards += shard_of_str(cwork_job_id(job)) != 0;
        cwork_job_free(job);
    }
    CHECK_INT(hmget_calls(c), 4);
    redisReply *len0 = tl_cmd(c, "LLEN %s:jobs:b", ns_);
    CHECK_INT(len0->integer, 40 - in_other_shards);
    CHECK(in_other_shards > 0);
    freeReplyObject(len0);
    cw_clock_system();
    cwork_enqueuer_free(other);
    cwork_enqueuer_free(enq);
    cwork_redis_free(r);
    redisFree(c);
    tl_server_destroy(&srv);
}

/* Threads enqueueing through one enqueuer that declares nothing while another process
 * shards the namespace and the refresh period passes (under TSan, a race between the
 * reads of the record, the routing and the shards' enqueuers being made): every job is
 * written once, in shard 0 (routed before the refresh) or in its own shard, and once
 * the period has passed every job goes to its own. */
typedef struct {
    cwork_enqueuer *enq;
    char ids[100][25];
} racer;

static void *race_main(void *arg)
{
    racer *r = arg;
    for (int i = 0; i < 100; i++) {
        cwork_job *job = NULL;
        cwork_error err = {0};
        CHECK_INT(cwork_enqueue(r->enq, "race", NULL, &job, &err), 0);
        snprintf(r->ids[i], sizeof r->ids[i], "%s", job ? cwork_job_id(job) : "");
        cwork_job_free(job);
    }
    return NULL;
}

static void threads_follow_a_namespace_sharded_meanwhile(void)
{
    enum { T = 4 };
    tl_unique_ns("shq11", ns_, sizeof ns_);
    cw_clock_manual(tl_now_ms());
    cwork_enqueuer *enq = enqueuer(0), *other = enqueuer(0);
    racer r[T];
    pthread_t th[T];
    for (int round = 0; round < 2; round++) {
        for (int t = 0; t < T; t++) {
            r[t].enq = enq;
            CHECK_INT(pthread_create(&th[t], NULL, race_main, &r[t]), 0);
        }
        if (round == 0) {
            cwork_error err = {0};
            CHECK_INT(cwork_enqueuer_set_shards(other, S, &err), 0);
            cw_clock_advance_ms(5000);
        }
        for (int t = 0; t < T; t++)
            pthread_join(th[t], NULL);
        long long total = 0;
        for (unsigned s = 0; s < S; s++) {
            char name[80];
            shard_ns(s, name, sizeof name);
            redisReply *len = tl_cmd(rc_, "LLEN %s:jobs:race", name);
            total += len->integer;
            freeReplyObject(len);
            redisReply *all = tl_cmd(rc_, "LRANGE %s:jobs:race 0 -1", name);
            for (size_t k = 0; k < all->elements; k++) {
                const char *id = strstr(all->element[k]->str, "\"id\":\"");
                CHECK(id != NULL);
                unsigned own = id ? cw_sharding_of(id + 6, 24, S) : 0;
                if (own != s && (s != 0 || round == 1))
                    tl_fail(__FILE__, __LINE__, "round %d: job %.24s in shard %u, not %u", round,
                            id ? id + 6 : "?", s, own);
            }
            freeReplyObject(all);
            tl_ns_delete(rc_, name);
        }
        CHECK_INT(total, T * 100);
        tl_do(rc_, "HSET %s:cwork:shards count %d hash fnv1a64-jump", ns_, S); /* (deleted) */
    }
    cw_clock_system();
    delete_shards();
    cwork_enqueuer_free(other);
    cwork_enqueuer_free(enq);
}

/* ---------------------------------------------------------------- four shards */

/* Plain and delayed jobs go to the shard of their id, each shard a complete namespace
 * (its own known_jobs), the record in shard 0; the enqueuer's settings hold in every
 * shard. */
static void plain_jobs_land_in_the_shard_of_their_id(void)
{
    tl_unique_ns("shq3", ns_, sizeof ns_);
    cwork_enqueuer *enq = enqueuer(S);
    enum { N = 24 };
    char *raws[S][N], *sched[S][N];
    size_t n[S] = {0}, nd[S] = {0};
    cwork_error err = {0};
    for (int i = 0; i < 2 * N; i++) {
        cwork_job *job = NULL;
        cwork_args *args = int_args("i", i);
        int delayed = i % 2;
        CHECK_INT(delayed ? cwork_enqueue_in(enq, "d", 100 + i, args, &job, &err)
                          : cwork_enqueue(enq, "a", args, &job, &err),
                  0);
        unsigned s = shard_of_str(cwork_job_id(job));
        char *raw = raw_of(job);
        if (delayed) {
            sched[s][nd[s]++] = fmt("%s=%lld", raw, (long long)cwork_job_run_at(job));
            free(raw);
        } else {
            raws[s][n[s]++] = raw;
        }
        cwork_job_free(job);
        cwork_args_free(args);
    }
    want w = {0};
    want_record(&w);
    int used = 0;
    for (unsigned s = 0; s < S; s++) {
        char name[80], key[128];
        shard_ns(s, name, sizeof name);
        snprintf(key, sizeof key, "%s:jobs:a", name);
        want_list(&w, s, key, raws[s], n[s]);
        if (nd[s]) {
            qsort(sched[s], nd[s], sizeof sched[s][0], cmp_zentry);
            char line[8192] = "";
            for (size_t k = 0; k < nd[s]; k++) {
                strcat(line, k ? " | " : " ");
                strcat(line, sched[s][k]);
                free(sched[s][k]);
            }
            want_add(&w, s, "%s:scheduled zset%s", name, line);
        }
        if (n[s] || nd[s])
            want_add(&w, s, "%s:known_jobs set %s", name,
                     n[s] && nd[s] ? "a | d"
                     : n[s]        ? "a"
                                   : "d");
        for (size_t k = 0; k < n[s]; k++)
            free(raws[s][k]);
        used += n[s] + nd[s] > 0;
    }
    CHECK(used > 1);
    CHECK_SHARDS(&w);
    /* settings reach every shard's enqueuer: a job over the limit is refused in any,
     * nothing written */
    char *before[S];
    for (unsigned i = 0; i < S; i++) {
        char name[80];
        shard_ns(i, name, sizeof name);
        before[i] = tl_ns_dump(rc_, name);
    }
    cwork_enqueuer_set_max_job_bytes(enq, 40);
    for (int i = 0; i < 16; i++)
        CHECK_INT(cwork_enqueue(enq, "a-rather-long-job-name", NULL, NULL, &err), CWORK_ETOOBIG);
    for (unsigned i = 0; i < S; i++) {
        char name[80];
        shard_ns(i, name, sizeof name);
        char *after = tl_ns_dump(rc_, name);
        CHECK_STR(after, before[i]);
        free(after);
        free(before[i]);
    }
    delete_shards();
    cwork_enqueuer_free(enq);
}

/* A unique job's guard is in the shard of "<name>:<args JSON>": the second enqueue of
 * the same name and args is a duplicate, through this or another enqueuer (one that
 * follows the record), whatever the count. */
static void unique_duplicates_are_caught_across_the_namespace(void)
{
    for (unsigned count = 1; count <= S; count += S - 1) {
        tl_unique_ns("shq4", ns_, sizeof ns_);
        cwork_enqueuer *enq = enqueuer(count == 1 ? 0 : count);
        cwork_enqueuer *follower = enqueuer(0);
        want w = {0};
        if (count > 1) want_record(&w);
        int in_shard[S] = {0};
        for (int i = 0; i < 12; i++) {
            cwork_args *args = int_args("n", i);
            cwork_job *job = NULL;
            cwork_error err = {0};
            CHECK_INT(cwork_enqueue_unique(enq, "u", args, &job, &err), 0);
            CHECK_INT(cwork_enqueue_unique(follower, "u", args, NULL, &err), CWORK_DUPLICATE);
            CHECK_INT(cwork_enqueue_unique(enq, "u", args, NULL, &err), CWORK_DUPLICATE);
            char route[64], name[80];
            snprintf(route, sizeof route, "u:{\"n\":%d}", i);
            unsigned s = cw_sharding_of(route, strlen(route), count);
            shard_ns(s, name, sizeof name);
            char *raw = raw_of(job);
            want_add(&w, s, "%s:jobs:u list %s", name, raw); /* (merged below) */
            want_add(&w, s, "%s:unique:u:{\"n\":%d}\\x0a string ttl=86400 1", name, i);
            in_shard[s]++;
            free(raw);
            cwork_job_free(job);
            cwork_args_free(args);
        }
        /* one list per shard: merge that shard's "jobs:u" lines, newest first */
        for (unsigned s = 0; s < S; s++) {
            char *items[16];
            size_t k = 0, keep = 0;
            char prefix[128];
            char name[80];
            shard_ns(s, name, sizeof name);
            snprintf(prefix, sizeof prefix, "%s:jobs:u list ", name);
            for (size_t m = 0; m < w.n[s]; m++) {
                if (strncmp(w.line[s][m], prefix, strlen(prefix)) == 0)
                    items[k++] = w.line[s][m];
                else
                    w.line[s][keep++] = w.line[s][m];
            }
            w.n[s] = keep;
            char key[128];
            snprintf(key, sizeof key, "%s:jobs:u", name);
            for (size_t m = 0; m < k; m++)
                memmove(items[m], items[m] + strlen(prefix), strlen(items[m] + strlen(prefix)) + 1);
            want_list(&w, s, key, items, k);
            for (size_t m = 0; m < k; m++)
                free(items[m]);
            if (in_shard[s]) want_add(&w, s, "%s:known_jobs set u", name);
        }
        if (count > 1) {
            int used = 0;
            for (unsigned s = 0; s < S; s++)
                used += in_shard[s] > 0;
            CHECK(used > 1);
        }
        CHECK_SHARDS(&w);
        delete_shards();
        cwork_enqueuer_free(follower);
        cwork_enqueuer_free(enq);
    }
}

/* ByKey: the guard in the shard of "<name>:<key JSON>"; a second enqueue with the same
 * key is a duplicate that puts its job in the guard (the one that will run), there. */
static void by_key_replaces_in_its_shard(void)
{
    tl_unique_ns("shq5", ns_, sizeof ns_);
    cwork_enqueuer *enq = enqueuer(S);
    want w = {0};
    want_record(&w);
    char *zs[S][8];
    size_t nz[S] = {0};
    for (int i = 0; i < 8; i++) {
        cwork_args *key = int_args("k", i), *a1 = int_args("v", 1), *a2 = int_args("v", 2);
        cwork_job *j1 = NULL, *j2 = NULL;
        cwork_error err = {0};
        CHECK_INT(cwork_enqueue_unique_in_by_key(enq, "bk", 60, a1, key, &j1, &err), 0);
        CHECK_INT(cwork_enqueue_unique_in_by_key(enq, "bk", 60, a2, key, &j2, &err),
                  CWORK_DUPLICATE);
        CHECK(j2 != NULL);
        char route[64], name[80];
        snprintf(route, sizeof route, "bk:{\"k\":%d}", i);
        unsigned s = shard_of_str(route);
        shard_ns(s, name, sizeof name);
        char *r1 = raw_of(j1), *r2 = raw_of(j2);
        zs[s][nz[s]++] = fmt("%s=%lld", r1, (long long)cwork_job_run_at(j1));
        want_add(&w, s, "%s:unique:bk:{\"k\":%d}\\x0a string ttl=86400 %s", name, i, r2);
        free(r1), free(r2);
        cwork_job_free(j1), cwork_job_free(j2);
        cwork_args_free(key), cwork_args_free(a1), cwork_args_free(a2);
    }
    for (unsigned s = 0; s < S; s++) {
        if (!nz[s]) continue;
        char name[80];
        shard_ns(s, name, sizeof name);
        qsort(zs[s], nz[s], sizeof zs[s][0], cmp_zentry);
        char line[8192] = "";
        for (size_t k = 0; k < nz[s]; k++) {
            strcat(line, k ? " | " : " ");
            strcat(line, zs[s][k]);
            free(zs[s][k]);
        }
        want_add(&w, s, "%s:scheduled zset%s", name, line);
        want_add(&w, s, "%s:known_jobs set bk", name);
    }
    CHECK_SHARDS(&w);
    delete_shards();
    cwork_enqueuer_free(enq);
}

/* Names in <p>cwork:shard_pinned go to the shard of their name (plain, unique and batch
 * entries alike); a name pinned later is followed after the refresh period. */
static void pinned_names_go_to_the_shard_of_their_name(void)
{
    tl_unique_ns("shq6", ns_, sizeof ns_);
    /* names whose shard is not 0, so that landing there is not an accident */
    const char *lim = "throttled", *later = "slow_later"; /* shards 2 and 1 of 4 */
    CHECK(shard_of_str(lim) != 0 && shard_of_str(later) != 0);
    tl_do(rc_, "SADD %s:cwork:shard_pinned %s", ns_, lim);
    cw_clock_manual(tl_now_ms());
    cwork_enqueuer *enq = enqueuer(S);
    cwork_error err = {0};
    char *raws[16];
    size_t n = 0;
    for (int i = 0; i < 6; i++) {
        cwork_job *job = NULL;
        CHECK_INT(cwork_enqueue(enq, lim, NULL, &job, &err), 0);
        raws[n++] = raw_of(job);
        cwork_job_free(job);
    }
    cwork_args *args = int_args("n", 7);
    cwork_job *job = NULL;
    CHECK_INT(cwork_enqueue_unique(enq, lim, args, &job, &err), 0);
    raws[n++] = raw_of(job);
    cwork_job_free(job);
    cwork_batch *b = cwork_batch_new(enq);
    CHECK_INT(cwork_batch_add(b, lim, NULL, 0, 0, &err), 0);
    CHECK_INT(cwork_enqueue_batch(b, &err), 0);
    const char *bid = NULL;
    CHECK_INT(cwork_batch_status(b, 0, &bid), 0);
    char bid_copy[25];
    snprintf(bid_copy, sizeof bid_copy, "%s", bid);
    cwork_batch_free(b);
    /* pinned later: jobs go by id until the next read, then by name */
    tl_do(rc_, "SADD %s:cwork:shard_pinned %s", ns_, later);
    cw_clock_advance_ms(5000);
    char *lraws[8];
    for (int i = 0; i < 8; i++) {
        CHECK_INT(cwork_enqueue(enq, later, NULL, &job, &err), 0);
        lraws[i] = raw_of(job);
        cwork_job_free(job);
    }
    cw_clock_system();

    want w = {0};
    want_record(&w);
    want_add(&w, 0, "%s:cwork:shard_pinned set %s | %s", ns_, later, lim); /* sorted */
    char name[80], key[128];
    unsigned s = shard_of_str(lim);
    shard_ns(s, name, sizeof name);
    snprintf(key, sizeof key, "%s:jobs:%s", name, lim);
    /* the batch's job: its raw is the last pushed; rebuilt from the list itself, since the
     * batch does not hand back its JSON (its id is checked) */
    redisReply *head = tl_cmd(rc_, "LINDEX %s 0", key);
    CHECK(head->type == REDIS_REPLY_STRING && strstr(head->str, bid_copy) != NULL);
    raws[n++] = strdup(head->type == REDIS_REPLY_STRING ? head->str : "");
    freeReplyObject(head);
    want_list(&w, s, key, raws, n);
    want_add(&w, s, "%s:unique:%s:{\"n\":7}\\x0a string ttl=86400 1", name, lim);
    unsigned ls = shard_of_str(later);
    char lname[80], lkey[128];
    shard_ns(ls, lname, sizeof lname);
    snprintf(lkey, sizeof lkey, "%s:jobs:%s", lname, later);
    want_list(&w, ls, lkey, lraws, 8);
    if (ls == s) {
        want_add(&w, s, "%s:known_jobs set %s | %s", name, lim, later);
    } else {
        want_add(&w, s, "%s:known_jobs set %s", name, lim);
        want_add(&w, ls, "%s:known_jobs set %s", lname, later);
    }
    CHECK_SHARDS(&w);
    for (size_t k = 0; k < n; k++)
        free(raws[k]);
    for (int i = 0; i < 8; i++)
        free(lraws[i]);
    cwork_args_free(args);
    delete_shards();
    cwork_enqueuer_free(enq);
}

/* The `"t":` of the job with this id, read from the shard it is in (a batch hands back
 * ids, not JSON: the rest of each job's JSON is checked against what it must be). */
static long long t_of(const char *key, const char *id, int zset)
{
    redisReply *r = tl_cmd(rc_, zset ? "ZRANGE %s 0 -1" : "LRANGE %s 0 -1", key);
    long long t = -1;
    for (size_t i = 0; i < r->elements; i++) {
        const char *p = strstr(r->element[i]->str, id);
        if (p && (p = strstr(p, "\"t\":")) != NULL) t = atoll(p + 4);
    }
    freeReplyObject(r);
    CHECK(t > 0);
    return t;
}

/* A batch of plain, delayed and unique entries: each written to its shard (one call per
 * shard), statuses in the caller's order (a duplicate where it was added). */
static void batch_is_split_by_shard_with_statuses_in_order(void)
{
    tl_unique_ns("shq7", ns_, sizeof ns_);
    cwork_enqueuer *enq = enqueuer(S);
    cwork_error err = {0};
    cwork_args *dup_args = int_args("n", 3);
    cwork_job *first = NULL;
    CHECK_INT(cwork_enqueue_unique(enq, "u", dup_args, &first, &err), 0);
    cwork_batch *b = cwork_batch_new(enq);
    enum { N = 24 };
    for (int i = 0; i < N; i++) {
        cwork_args *args = int_args("n", i);
        int kind = i % 3; /* 0 plain, 1 delayed, 2 unique (n = 2, 5, …; and 3: a duplicate) */
        int rc = kind == 0   ? cwork_batch_add(b, "a", args, 0, 0, &err)
                 : kind == 1 ? cwork_batch_add(b, "d", args, 50, CWORK_BATCH_IN, &err)
                             : cwork_batch_add(b, "u", args, 0, CWORK_BATCH_UNIQUE, &err);
        CHECK_INT(rc, 0);
        cwork_args_free(args);
    }
    CHECK_INT(cwork_batch_add(b, "u", dup_args, 0, CWORK_BATCH_UNIQUE, &err), 0);
    CHECK_INT(cwork_enqueue_batch(b, &err), 0);
    CHECK_INT(cwork_batch_count(b), N + 1);
    for (size_t i = 0; i < N + 1; i++)
        CHECK_INT(cwork_batch_status(b, i, NULL), i == N ? CWORK_DUPLICATE : CWORK_OK);

    want w = {0};
    want_record(&w);
    char *la[S][N], *lu[S][N], *zd[S][N];
    size_t na[S] = {0}, nu[S] = {0}, nd[S] = {0};
    int names[S][3] = {{0}};
    char *r0 = raw_of(first);
    char name0[80];
    unsigned s0 = shard_of_str("u:{\"n\":3}");
    shard_ns(s0, name0, sizeof name0);
    lu[s0][nu[s0]++] = r0;
    want_add(&w, s0, "%s:unique:u:{\"n\":3}\\x0a string ttl=86400 1", name0);
    names[s0][2] = 1;
    for (int i = 0; i < N; i++) {
        const char *id = NULL;
        cwork_batch_status(b, (size_t)i, &id);
        int kind = i % 3;
        unsigned s;
        char route[64], name[80], key[128];
        if (kind == 2) {
            snprintf(route, sizeof route, "u:{\"n\":%d}", i);
            s = shard_of_str(route);
        } else {
            s = shard_of_str(id);
        }
        shard_ns(s, name, sizeof name);
        snprintf(key, sizeof key, "%s:%s", name,
                 kind == 0   ? "jobs:a"
                 : kind == 1 ? "scheduled"
                             : "jobs:u");
        long long t = t_of(key, id, kind == 1);
        char *json = fmt("{\"name\":\"%s\",\"id\":\"%s\",\"t\":%lld,\"args\":{\"n\":%d}%s}",
                         kind == 0   ? "a"
                         : kind == 1 ? "d"
                                     : "u",
                         id, t, i, kind == 2 ? ",\"unique\":true" : "");
        if (kind == 0) la[s][na[s]++] = json;
        if (kind == 2) {
            lu[s][nu[s]++] = json;
            want_add(&w, s, "%s:unique:u:{\"n\":%d}\\x0a string ttl=86400 1", name, i);
        }
        if (kind == 1) {
            zd[s][nd[s]++] = fmt("%s=%lld", json, t + 50);
            free(json);
        }
        names[s][kind] = 1;
    }
    int used = 0;
    for (unsigned s = 0; s < S; s++) {
        char name[80], key[128];
        shard_ns(s, name, sizeof name);
        snprintf(key, sizeof key, "%s:jobs:a", name);
        want_list(&w, s, key, la[s], na[s]);
        snprintf(key, sizeof key, "%s:jobs:u", name);
        want_list(&w, s, key, lu[s], nu[s]);
        if (nd[s]) {
            qsort(zd[s], nd[s], sizeof zd[s][0], cmp_zentry);
            char line[16384] = "";
            for (size_t k = 0; k < nd[s]; k++) {
                strcat(line, k ? " | " : " ");
                strcat(line, zd[s][k]);
            }
            want_add(&w, s, "%s:scheduled zset%s", name, line);
        }
        char set[32] = "";
        const char *nm[] = {"a", "d", "u"};
        for (int k = 0; k < 3; k++)
            if (names[s][k]) {
                strcat(set, set[0] ? " | " : "");
                strcat(set, nm[k]);
            }
        if (set[0]) want_add(&w, s, "%s:known_jobs set %s", name, set);
        used += set[0] != 0;
        for (size_t k = 0; k < na[s]; k++)
            free(la[s][k]);
        for (size_t k = 0; k < nu[s]; k++)
            free(lu[s][k]);
        for (size_t k = 0; k < nd[s]; k++)
            free(zd[s][k]);
    }
    CHECK(used > 1);
    CHECK_SHARDS(&w);
    cwork_batch_free(b);
    cwork_job_free(first);
    cwork_args_free(dup_args);
    delete_shards();
    cwork_enqueuer_free(enq);
}

/* A tracked batch and all its members live in the shard of the batch's id; sealing and
 * reading find it there. */
static void tracked_batch_stays_in_its_shard(void)
{
    tl_unique_ns("shq8", ns_, sizeof ns_);
    cwork_enqueuer *enq = enqueuer(S);
    cwork_error err = {0};
    /* batch ids are random: open until one lands outside shard 0 (each does with p = 3/4) */
    char id[25];
    for (int tries = 0;; tries++) {
        CHECK(tries < 64);
        CHECK_INT(cwork_batch_open(enq, CWORK_BATCH_ON_COMPLETE, "done", NULL, id, &err), 0);
        if (shard_of_str(id) != 0) break;
        tl_do(rc_, "DEL %s:cwork:batch:%s", ns_, id);
    }
    unsigned s = shard_of_str(id);
    cwork_batch *b = cwork_batch_new(enq);
    CHECK_INT(cwork_batch_join(b, id, &err), 0);
    for (int i = 0; i < 10; i++)
        CHECK_INT(cwork_batch_add(b, i % 2 ? "m" : "n", NULL, i % 2 ? 0 : 30,
                                  i % 2 ? 0 : CWORK_BATCH_IN, &err),
                  0);
    CHECK_INT(cwork_enqueue_batch(b, &err), 0);
    cwork_batch_info info;
    CHECK_INT(cwork_batch_read(enq, id, &info, &err), 0);
    CHECK_INT(info.total, 10);
    CHECK_INT(cwork_batch_seal(enq, id, &err), 0);
    CHECK_INT(cwork_batch_read(enq, id, &info, &err), 0);
    CHECK(info.sealed);
    /* the batch's shard holds the batch, its members (each naming it) and nothing else;
     * every other shard nothing (shard 0: the record) */
    char name[80];
    shard_ns(s, name, sizeof name);
    char *got = tl_ns_dump(rc_, name);
    char keys[2048] = "";
    for (char *line = got; *line;) { /* "key type" of each line */
        char *nl = strchr(line, '\n');
        char *sp = strchr(line, ' ');
        char *sp2 = strchr(sp + 1, ' ');
        strncat(keys, line, (size_t)((sp2 && sp2 < nl ? sp2 : nl) - line));
        strcat(keys, "\n");
        line = nl + 1;
    }
    char want_keys[2048];
    snprintf(want_keys, sizeof want_keys,
             "%s:cwork:batch:%s hash\n%s:jobs:m list\n%s:known_jobs set\n%s:scheduled zset\n", name,
             id, name, name, name);
    CHECK_STR(keys, want_keys);
    free(got);
    redisReply *m = tl_cmd(rc_, "LRANGE %s:jobs:m 0 -1", name);
    redisReply *z = tl_cmd(rc_, "ZRANGE %s:scheduled 0 -1", name);
    CHECK_INT(m->elements, 5);
    CHECK_INT(z->elements, 5);
    char member[64];
    snprintf(member, sizeof member, "\"cwork_batch\":\"%s\"}", id);
    for (size_t i = 0; i < m->elements; i++)
        CHECK(strstr(m->element[i]->str, member) != NULL);
    for (size_t i = 0; i < z->elements; i++)
        CHECK(strstr(z->element[i]->str, member) != NULL);
    freeReplyObject(m);
    freeReplyObject(z);
    for (unsigned i = 0; i < S; i++) {
        char other[80];
        shard_ns(i, other, sizeof other);
        if (i == s) continue;
        char *dump = tl_ns_dump(rc_, other);
        if (i == 0) { /* the record only */
            CHECK(strncmp(dump, ns_, strlen(ns_)) == 0 && strstr(dump, ":cwork:shards hash") &&
                  strchr(dump, '\n') == dump + strlen(dump) - 1);
        } else {
            CHECK_STR(dump, "");
        }
        free(dump);
    }
    /* A pinned type cannot join it: its home and the batch's shard may differ (§27.2). */
    tl_do(rc_, "SADD %s:cwork:shard_pinned p", ns_);
    cwork_enqueuer *fresh = enqueuer(S); /* (reads the set before its first enqueue) */
    cwork_batch *pb = cwork_batch_new(fresh);
    CHECK_INT(cwork_batch_join(pb, id, &err), 0);
    CHECK_INT(cwork_batch_add(pb, "p", NULL, 0, 0, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "job p:") && strstr(err.message, "cannot join a tracked batch"));
    CHECK_INT(cwork_batch_count(pb), 0);
    CHECK_INT(cwork_batch_add(pb, "m", NULL, 0, 0, &err), 0); /* the others still can */
    cwork_batch_free(pb);
    cwork_enqueuer_free(fresh);
    cwork_batch_free(b);
    delete_shards();
    cwork_enqueuer_free(enq);
}

/* ---------------------------------------------------------------- refusals */

static void disagreement_and_damage_are_refused_naming_the_key(void)
{
    tl_unique_ns("shq9", ns_, sizeof ns_);
    cwork_enqueuer *a = enqueuer(S), *b = enqueuer(0);
    cwork_error err = {0};
    char key[128];
    snprintf(key, sizeof key, "%s:cwork:shards", ns_);
    CHECK_INT(cwork_enqueuer_set_shards(b, 2, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, key) != NULL);
    CHECK(strstr(err.message, "has 4 shards") != NULL && strstr(err.message, "told 2") != NULL);
    CHECK_INT(cwork_enqueuer_set_shards(b, 1, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, key) != NULL && strstr(err.message, "told 1") != NULL);
    CHECK_INT(cwork_enqueuer_set_shards(b, 1025, &err), CWORK_EINVAL);
    want w = {0};
    want_record(&w);
    CHECK_SHARDS(&w);
    cwork_enqueuer_free(b);
    cwork_enqueuer_free(a);
    delete_shards();

    /* a damaged record: refused to a declaring enqueuer and to every enqueue of a
     * following one (single, batch, tracked batch), nothing written */
    tl_unique_ns("shq10", ns_, sizeof ns_);
    snprintf(key, sizeof key, "%s:cwork:shards", ns_);
    tl_do(rc_, "SET %s x", key);
    cwork_enqueuer *c = cwork_enqueuer_new(redis_, ns_, &err);
    CHECK_INT(cwork_enqueuer_set_shards(c, S, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, key) != NULL && strstr(err.message, "damaged") != NULL);
    memset(&err, 0, sizeof err);
    CHECK_INT(cwork_enqueue(c, "a", NULL, NULL, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, key) != NULL);
    cwork_batch *batch = cwork_batch_new(c);
    memset(&err, 0, sizeof err);
    CHECK_INT(cwork_batch_add(batch, "a", NULL, 0, 0, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, key) != NULL);
    CHECK_INT(cwork_batch_count(batch), 0);
    char bid[25];
    CHECK_INT(cwork_batch_open(c, CWORK_BATCH_ON_SUCCESS, "cb", NULL, bid, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, key) != NULL);
    want_add(&w, 0, "%s string x", key);
    CHECK_SHARDS(&w);
    tl_do(rc_, "DEL %s", key);
    tl_do(rc_, "HSET %s count 0", key);
    memset(&err, 0, sizeof err);
    CHECK_INT(cwork_enqueue(c, "a", NULL, NULL, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, key) != NULL && strstr(err.message, "\"0\"") != NULL);
    want_add(&w, 0, "%s hash count=0", key);
    CHECK_SHARDS(&w);
    /* a damaged pinned set in a sharded namespace: named too */
    tl_do(rc_, "DEL %s", key);
    tl_do(rc_, "HSET %s count 4", key);
    tl_do(rc_, "SET %s:cwork:shard_pinned x", ns_);
    memset(&err, 0, sizeof err);
    CHECK_INT(cwork_enqueue(c, "a", NULL, NULL, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "cwork:shard_pinned") != NULL &&
          strstr(err.message, "damaged") != NULL);
    want_add(&w, 0, "%s hash count=4", key);
    want_add(&w, 0, "%s:cwork:shard_pinned string x", ns_);
    CHECK_SHARDS(&w);
    cwork_batch_free(batch);
    cwork_enqueuer_free(c);
    delete_shards();
}

int main(void)
{
    rc_ = tl_redis_connect();
    cwork_error err = {0};
    redis_ = cwork_redis_new(tl_redis_url(), NULL, &err);
    if (!redis_) {
        fprintf(stderr, "cwork_redis_new: %s\n", err.message);
        return 1;
    }
    RUN(unsharded_namespace_is_written_as_before);
    RUN(record_is_read_once_per_period_and_followed);
    RUN(threads_follow_a_namespace_sharded_meanwhile);
    RUN(plain_jobs_land_in_the_shard_of_their_id);
    RUN(unique_duplicates_are_caught_across_the_namespace);
    RUN(by_key_replaces_in_its_shard);
    RUN(pinned_names_go_to_the_shard_of_their_name);
    RUN(batch_is_split_by_shard_with_statuses_in_order);
    RUN(tracked_batch_stays_in_its_shard);
    RUN(disagreement_and_damage_are_refused_naming_the_key);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
