/* Test harness and Redis helpers; see testlib.h. */
#include "testlib.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int tl_case_failed;
static int cases_passed, cases_failed;

void tl_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    tl_case_failed = 1;
}

static void put_escaped(FILE *f, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
            fputc(p[i], f);
        else
            fprintf(f, "\\x%02x", p[i]);
    }
}

void tl_check_mem(const char *file, int line, const char *what, const void *a, size_t alen,
                  const void *b, size_t blen)
{
    if (a && b && alen == blen && memcmp(a, b, alen) == 0) return;
    fprintf(stderr, "  %s:%d: %s differs\n   got: ", file, line, what);
    if (a) put_escaped(stderr, a, alen);
    fputs("\n  want: ", stderr);
    if (b) put_escaped(stderr, b, blen);
    fputc('\n', stderr);
    tl_case_failed = 1;
}

void tl_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

long long tl_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *tl_oracle(void)
{
    const char *oracle = getenv("CWORK_GO_ORACLE");
    const char *why = NULL;
    if (!oracle || !*oracle)
        why = "CWORK_GO_ORACLE is not set (CTest sets it to tests/oracle/run)";
    else if (access(oracle, X_OK) != 0)
        why = "CWORK_GO_ORACLE does not name an executable file";
    else if (!tl_on_path("go"))
        why = "`go` is not on PATH";
    if (!why) return oracle;
    printf("FAILED: the Go oracle cannot run: %s (CWORK_GO_ORACLE=%s). It needs Debian's "
           "golang-go and golang-github-robfig-cron-dev, which scripts/test.sh installs; a "
           "differential test that cannot compare with Go fails rather than skips.\n",
           why, oracle ? oracle : "unset");
    fflush(stdout);
    return NULL;
}

int tl_run_oracle(const char *oracle, const char *mode, const char *in_path, const char *out_path)
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int in = open(in_path, O_RDONLY), out = open(out_path, O_WRONLY | O_TRUNC);
        if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0) _exit(126);
        execl(oracle, oracle, mode, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

char *tl_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 65536, n = 0, got;
    char *data = malloc(cap + 1);
    while (data && (got = fread(data + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *bigger = realloc(data, 2 * cap + 1);
            if (!bigger) {
                free(data);
                data = NULL;
                break;
            }
            data = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (data) {
        data[n] = '\0';
        if (len) *len = n;
    }
    return data;
}

int tl_on_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (!path) return 0;
    char candidate[4096];
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(candidate, sizeof candidate, "%.*s/%s", (int)n, path, prog);
        if (n && access(candidate, X_OK) == 0) return 1;
        path += n + (path[n] == ':');
    }
    return 0;
}

tl_log tl_logs[TL_MAX_LOGS];
int tl_nlogs;
static pthread_mutex_t logs_mu = PTHREAD_MUTEX_INITIALIZER;

static void record_log(void *ud, cwork_log_level level, const char *message,
                       const cwork_log_field *fields, size_t n)
{
    (void)ud;
    pthread_mutex_lock(&logs_mu);
    if (tl_nlogs < TL_MAX_LOGS) {
        tl_log *r = &tl_logs[tl_nlogs++];
        r->level = level;
        snprintf(r->message, sizeof r->message, "%s", message);
        size_t used = 0;
        r->fields[0] = '\0';
        for (size_t i = 0; i < n && used < sizeof r->fields; i++)
            used += (size_t)snprintf(r->fields + used, sizeof r->fields - used, "%s%s=%s",
                                     i ? " " : "", fields[i].key, fields[i].value);
    }
    pthread_mutex_unlock(&logs_mu);
}

void tl_capture_logs(void)
{
    pthread_mutex_lock(&logs_mu);
    tl_nlogs = 0;
    pthread_mutex_unlock(&logs_mu);
    cwork_set_logger(record_log, NULL, CWORK_LOG_DEBUG);
}

/* (A record below tl_nlogs is never written again until the next capture: the one
 * returned may be read after the lock is let go.) */
const tl_log *tl_find_log(const char *message)
{
    const tl_log *found = NULL;
    pthread_mutex_lock(&logs_mu);
    for (int i = 0; i < tl_nlogs && !found; i++)
        if (strcmp(tl_logs[i].message, message) == 0) found = &tl_logs[i];
    pthread_mutex_unlock(&logs_mu);
    return found;
}

int tl_count_logs(const char *message)
{
    int n = 0;
    pthread_mutex_lock(&logs_mu);
    for (int i = 0; i < tl_nlogs; i++)
        n += strcmp(tl_logs[i].message, message) == 0;
    pthread_mutex_unlock(&logs_mu);
    return n;
}

void tl_run(const char *name, void (*fn)(void))
{
    tl_case_failed = 0;
    fn();
    if (tl_case_failed) {
        cases_failed++;
        printf("FAIL %s\n", name);
    } else {
        cases_passed++;
        printf("ok   %s\n", name);
    }
    fflush(stdout);
}

int tl_finish(void)
{
    printf("%d passed, %d failed\n", cases_passed, cases_failed);
    return cases_failed ? 1 : 0;
}

/* ---------------------------------------------------------------- Redis helpers */

/* CWORK_TEST_REDIS_URL, else the URL the CTest fixture wrote (tests/redis_fixture.sh) to
 * CWORK_TEST_REDIS_FILE, a path CMake compiles in. */
static char redis_url_from_file[256];

static void read_redis_url_file(void)
{
    FILE *f = fopen(CWORK_TEST_REDIS_FILE, "r");
    if (!f) return;
    if (!fgets(redis_url_from_file, sizeof redis_url_from_file, f)) redis_url_from_file[0] = '\0';
    fclose(f);
    redis_url_from_file[strcspn(redis_url_from_file, "\r\n")] = '\0';
}

const char *tl_redis_url(void)
{
    const char *url = getenv("CWORK_TEST_REDIS_URL");
    if (url && *url) return url;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, read_redis_url_file);
    if (!redis_url_from_file[0]) {
        fprintf(stderr,
                "CWORK_TEST_REDIS_URL is not set and %s holds no URL: run the tests "
                "with ctest (its redis fixture starts a private redis-server) or "
                "scripts/test.sh\n",
                CWORK_TEST_REDIS_FILE);
        exit(1);
    }
    return redis_url_from_file;
}

/* Only the forms the test script produces: redis://host:port[/db]. */
static void parse_test_url(const char *url, char *host, size_t hsize, int *port)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    const char *colon = strrchr(p, ':');
    if (!colon || (size_t)(colon - p) >= hsize) {
        fprintf(stderr, "unsupported CWORK_TEST_REDIS_URL: %s\n", url);
        exit(1);
    }
    memcpy(host, p, (size_t)(colon - p));
    host[colon - p] = '\0';
    *port = atoi(colon + 1);
}

redisContext *tl_redis_connect(void)
{
    char host[128];
    int port;
    parse_test_url(tl_redis_url(), host, sizeof host, &port);
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout(host, port, tv);
    if (!c || c->err) {
        fprintf(stderr, "cannot connect to test redis %s:%d: %s\n", host, port,
                c ? c->errstr : "alloc");
        exit(1);
    }
    redisSetTimeout(c, tv);
    return c;
}

redisReply *tl_cmd(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (!r) {
        fprintf(stderr, "test redis I/O error: %s\n", c->errstr);
        exit(1);
    }
    return r;
}

void tl_do(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (!r || r->type == REDIS_REPLY_ERROR) {
        fprintf(stderr, "test redis command failed: %s\n", r ? r->str : c->errstr);
        exit(1);
    }
    freeReplyObject(r);
}

const char *tl_unique_ns(const char *tag, char *buf, size_t size)
{
    unsigned char r[6];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) memset(r, 7, sizeof r);
    snprintf(buf, size, "cwt-%s-%02x%02x%02x%02x%02x%02x", tag, r[0], r[1], r[2], r[3], r[4], r[5]);
    return buf;
}

/* A growable string for dumps. */
typedef struct {
    char *p;
    size_t len, cap;
} tl_str;

static void str_add(tl_str *s, const char *p, size_t n)
{
    if (s->len + n + 1 > s->cap) {
        s->cap = (s->len + n + 1) * 2;
        s->p = realloc(s->p, s->cap);
        if (!s->p) abort();
    }
    memcpy(s->p + s->len, p, n);
    s->len += n;
    s->p[s->len] = '\0';
}

static void str_addz(tl_str *s, const char *p)
{
    str_add(s, p, strlen(p));
}

static void str_add_escaped(tl_str *s, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
            str_add(s, p + i, 1);
        } else {
            char tmp[8];
            snprintf(tmp, sizeof tmp, "\\x%02x", ch);
            str_addz(s, tmp);
        }
    }
}

static int cmp_str(const void *a, const void *b)
{
    const redisReply *x = *(redisReply *const *)a, *y = *(redisReply *const *)b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->str, y->str, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int cmp_pair(const void *a, const void *b)
{
    return cmp_str(a, b);
}

/* KEYS with the prefix glob-escaped: every key that starts with it. */
static redisReply *keys_with_prefix(redisContext *c, const char *prefix)
{
    char pattern[512];
    size_t j = 0;
    for (const char *p = prefix; *p && j + 3 < sizeof pattern; p++) {
        if (strchr("*?[]\\", *p)) pattern[j++] = '\\';
        pattern[j++] = *p;
    }
    pattern[j++] = '*';
    pattern[j] = '\0';
    return tl_cmd(c, "KEYS %s", pattern);
}

char *tl_ns_dump(redisContext *c, const char *prefix)
{
    redisReply *keys = keys_with_prefix(c, prefix);
    if (keys->elements > 1) qsort(keys->element, keys->elements, sizeof keys->element[0], cmp_str);
    tl_str out = {0};
    str_addz(&out, "");
    for (size_t k = 0; k < keys->elements; k++) {
        redisReply *key = keys->element[k];
        redisReply *type = tl_cmd(c, "TYPE %b", key->str, key->len);
        redisReply *pttl = tl_cmd(c, "PTTL %b", key->str, key->len);
        str_add_escaped(&out, key->str, key->len);
        str_addz(&out, " ");
        str_addz(&out, type->str);
        if (pttl->integer >= 0) {
            char tmp[48];
            snprintf(tmp, sizeof tmp, " ttl=%lld", (pttl->integer + 999) / 1000);
            str_addz(&out, tmp);
        }
        redisReply *v = NULL;
        if (!strcmp(type->str, "string")) {
            v = tl_cmd(c, "GET %b", key->str, key->len);
            str_addz(&out, " ");
            str_add_escaped(&out, v->str, v->len);
        } else if (!strcmp(type->str, "list")) {
            v = tl_cmd(c, "LRANGE %b 0 -1", key->str, key->len);
            for (size_t i = 0; i < v->elements; i++) {
                str_addz(&out, i ? " | " : " ");
                str_add_escaped(&out, v->element[i]->str, v->element[i]->len);
            }
        } else if (!strcmp(type->str, "set")) {
            v = tl_cmd(c, "SMEMBERS %b", key->str, key->len);
            if (v->elements > 1) qsort(v->element, v->elements, sizeof v->element[0], cmp_str);
            for (size_t i = 0; i < v->elements; i++) {
                str_addz(&out, i ? " | " : " ");
                str_add_escaped(&out, v->element[i]->str, v->element[i]->len);
            }
        } else if (!strcmp(type->str, "zset")) {
            v = tl_cmd(c, "ZRANGE %b 0 -1 WITHSCORES", key->str, key->len);
            for (size_t i = 0; i + 1 < v->elements; i += 2) {
                str_addz(&out, i ? " | " : " ");
                str_add_escaped(&out, v->element[i]->str, v->element[i]->len);
                str_addz(&out, "=");
                str_add_escaped(&out, v->element[i + 1]->str, v->element[i + 1]->len);
            }
        } else if (!strcmp(type->str, "hash")) {
            v = tl_cmd(c, "HGETALL %b", key->str, key->len);
            /* sort field/value pairs by field: view them as pairs of replies */
            size_t n = v->elements / 2;
            redisReply **pairs = malloc(sizeof *pairs * (n ? n : 1) * 2);
            if (!pairs) abort();
            memcpy(pairs, v->element, sizeof *pairs * n * 2);
            qsort(pairs, n, 2 * sizeof *pairs, cmp_pair);
            for (size_t i = 0; i < n; i++) {
                str_addz(&out, i ? " | " : " ");
                str_add_escaped(&out, pairs[2 * i]->str, pairs[2 * i]->len);
                str_addz(&out, "=");
                str_add_escaped(&out, pairs[2 * i + 1]->str, pairs[2 * i + 1]->len);
            }
            free(pairs);
        }
        str_addz(&out, "\n");
        if (v) freeReplyObject(v);
        freeReplyObject(type);
        freeReplyObject(pttl);
    }
    freeReplyObject(keys);
    return out.p;
}

void tl_ns_delete(redisContext *c, const char *prefix)
{
    redisReply *keys = keys_with_prefix(c, prefix);
    for (size_t k = 0; k < keys->elements; k++)
        freeReplyObject(tl_cmd(c, "DEL %b", keys->element[k]->str, keys->element[k]->len));
    freeReplyObject(keys);
}

/* One hour's per-minute hash "<hour>" (YYYY-MM-DDTHH): fields MM:processed and MM:failed
 * only, a TTL of about 25 h; adds its counts to *p and *f. */
static void take_stat_hour(redisContext *c, const char *key, const char *hour, long long *p,
                           long long *f)
{
    if (strlen(hour) != 13 || hour[4] != '-' || hour[7] != '-' || hour[10] != 'T')
        tl_fail(__FILE__, __LINE__, "%s: not a date and hour", key);
    redisReply *h = tl_cmd(c, "HGETALL %s", key);
    if (h->type != REDIS_REPLY_ARRAY || h->elements == 0)
        tl_fail(__FILE__, __LINE__, "%s: not a hash with fields", key);
    for (size_t i = 0; h->type == REDIS_REPLY_ARRAY && i + 1 < h->elements; i += 2) {
        const char *field = h->element[i]->str;
        int minute = atoi(field);
        if (strlen(field) < 4 || field[2] != ':' || minute < 0 || minute > 59 ||
            !isdigit((unsigned char)field[0]) || !isdigit((unsigned char)field[1]))
            tl_fail(__FILE__, __LINE__, "%s: unexpected field %s", key, field);
        else if (!strcmp(field + 3, "processed"))
            *p += atoll(h->element[i + 1]->str);
        else if (!strcmp(field + 3, "failed"))
            *f += atoll(h->element[i + 1]->str);
        else
            tl_fail(__FILE__, __LINE__, "%s: unexpected field %s", key, field);
    }
    freeReplyObject(h);
    redisReply *ttl = tl_cmd(c, "TTL %s", key);
    if (ttl->integer < 24 * 3600 || ttl->integer > 25 * 3600)
        tl_fail(__FILE__, __LINE__, "%s: TTL %lld, want about 25 h", key, ttl->integer);
    freeReplyObject(ttl);
}

long long tl_take_failure_histories(redisContext *c, const char *ns)
{
    redisReply *keys = tl_cmd(c, "KEYS %s:cwork:failures:*", ns);
    long long n = (long long)keys->elements;
    for (size_t i = 0; i < keys->elements; i++) {
        const char *key = keys->element[i]->str;
        redisReply *r = tl_cmd(c, "LRANGE %s 0 -1", key);
        CHECK(r->type == REDIS_REPLY_ARRAY && r->elements >= 1 && r->elements <= 10);
        for (size_t j = 0; r->type == REDIS_REPLY_ARRAY && j < r->elements; j++)
            CHECK(strstr(r->element[j]->str, ",\"first_t\":") != NULL &&
                  r->element[j]->str[r->element[j]->len - 1] == '}');
        freeReplyObject(r);
        r = tl_cmd(c, "TTL %s", key);
        CHECK(r->integer > 2592000 - 120);
        freeReplyObject(r);
        freeReplyObject(tl_cmd(c, "DEL %s", key));
    }
    freeReplyObject(keys);
    return n;
}

/* A killed pool's <ns>:cwork:stats_sent:<id> (PROTOCOL §14.2): its totals are part of
 * what the days hold, its TTL the hour's. */
static void take_stats_sent(redisContext *c, const char *ns, long long days_p, long long days_f)
{
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s:cwork:stats_sent:", ns);
    redisReply *keys = keys_with_prefix(c, prefix);
    for (size_t k = 0; k < keys->elements; k++) {
        const char *key = keys->element[k]->str;
        redisReply *h = tl_cmd(c, "HMGET %s processed failed", key);
        if (h->type != REDIS_REPLY_ARRAY || h->elements != 2 || !h->element[0]->str ||
            !h->element[1]->str || atoll(h->element[0]->str) > days_p ||
            atoll(h->element[1]->str) > days_f)
            tl_fail(__FILE__, __LINE__, "%s: not totals within the days' counts", key);
        freeReplyObject(h);
        redisReply *ttl = tl_cmd(c, "TTL %s", key);
        if (ttl->integer < 24 * 3600 || ttl->integer > 25 * 3600)
            tl_fail(__FILE__, __LINE__, "%s: TTL %lld, want about 25 h", key, ttl->integer);
        freeReplyObject(ttl);
        freeReplyObject(tl_cmd(c, "DEL %s", key));
    }
    freeReplyObject(keys);
}

void tl_take_stat_days(redisContext *c, const char *ns, long long processed, long long failed)
{
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s:cwork:stat:", ns);
    redisReply *keys = keys_with_prefix(c, prefix);
    long long got_p = 0, got_f = 0, minutes_p = 0, minutes_f = 0;
    for (size_t k = 0; k < keys->elements; k++) {
        const char *key = keys->element[k]->str;
        const char *date = key + strlen(prefix);
        if (strchr(date, 'T')) {
            take_stat_hour(c, key, date, &minutes_p, &minutes_f);
            freeReplyObject(tl_cmd(c, "DEL %s", key));
            continue;
        }
        redisReply *h = tl_cmd(c, "HGETALL %s", key);
        for (size_t i = 0; h->type == REDIS_REPLY_ARRAY && i + 1 < h->elements; i += 2) {
            if (!strcmp(h->element[i]->str, "processed"))
                got_p += atoll(h->element[i + 1]->str);
            else if (!strcmp(h->element[i]->str, "failed"))
                got_f += atoll(h->element[i + 1]->str);
            else
                tl_fail(__FILE__, __LINE__, "%s: unexpected field %s", key, h->element[i]->str);
        }
        freeReplyObject(h);
        redisReply *ttl = tl_cmd(c, "TTL %s", key);
        if (ttl->integer < 39 * 24 * 3600 || ttl->integer > 40 * 24 * 3600)
            tl_fail(__FILE__, __LINE__, "%s: TTL %lld, want about 40 days", key, ttl->integer);
        freeReplyObject(ttl);
        /* YYYY-MM-DD */
        if (strlen(date) != 10 || date[4] != '-' || date[7] != '-')
            tl_fail(__FILE__, __LINE__, "%s: not a date", key);
        freeReplyObject(tl_cmd(c, "DEL %s", key));
    }
    freeReplyObject(keys);
    take_stats_sent(c, ns, got_p, got_f);
    if (got_p != processed || got_f != failed)
        tl_fail(__FILE__, __LINE__,
                "daily stats of %s: processed %lld failed %lld, want %lld and %lld", ns, got_p,
                got_f, processed, failed);
    /* The per-minute counts are written with the day's, in one script (PROTOCOL §14.2). */
    if (minutes_p != got_p || minutes_f != got_f)
        tl_fail(__FILE__, __LINE__,
                "per-minute stats of %s: processed %lld failed %lld, the days say %lld and %lld",
                ns, minutes_p, minutes_f, got_p, got_f);
}

/* ---------------------------------------------------------------- private servers */

static int port_is_free(int port)
{
    struct timeval tv = {0, 200000};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    int free_ = !c || c->err;
    if (c) redisFree(c);
    return free_;
}

static int spawn_server(tl_server *s, int aof)
{
    char port[16];
    snprintf(port, sizeof port, "%d", s->port);
    snprintf(s->url, sizeof s->url, "redis://127.0.0.1:%d", s->port);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        execlp("redis-server", "redis-server", "--port", port, "--bind", "127.0.0.1", "--dir",
               s->dir, "--save", "", "--appendonly", aof ? "yes" : "no", "--appendfsync", "always",
               "--daemonize", "no", (char *)NULL);
        _exit(127);
    }
    s->pid = pid;
    for (int i = 0; i < 200; i++) { /* up to ~10 s for the server to answer */
        struct timeval tv = {1, 0};
        redisContext *c = redisConnectWithTimeout("127.0.0.1", s->port, tv);
        if (c && !c->err) {
            redisReply *r = redisCommand(c, "PING");
            int ok = r && r->type == REDIS_REPLY_STATUS;
            if (r) freeReplyObject(r);
            redisFree(c);
            if (ok) return 0;
        } else if (c) {
            redisFree(c);
        }
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            s->pid = 0;
            return -1;
        }
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

int tl_server_start(tl_server *s, int aof)
{
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "/tmp/cwork-test-redis-XXXXXX");
    if (!mkdtemp(s->dir)) return -1;
    for (int attempt = 0; attempt < 50; attempt++) {
        unsigned r;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            r = (unsigned)getpid() + (unsigned)attempt;
        s->port = 20000 + (int)(r % 30000);
        if (port_is_free(s->port) && spawn_server(s, aof) == 0) return 0;
    }
    return -1;
}

void tl_server_stop(tl_server *s, int sig)
{
    if (s->pid > 0) {
        kill(s->pid, sig);
        int status;
        while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {
        }
        s->pid = 0;
    }
}

int tl_server_restart(tl_server *s, int aof)
{
    tl_server_stop(s, SIGKILL);
    return spawn_server(s, aof);
}

void tl_server_destroy(tl_server *s)
{
    tl_server_stop(s, SIGKILL);
    if (s->dir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", s->dir);
        s->dir[0] = '\0';
    }
}
