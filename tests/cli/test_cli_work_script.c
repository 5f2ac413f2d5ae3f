/* `cwork work` for scripts, end to end (the binary from $CWORK_CLI against the test
 * Redis): one line per job outcome and --quiet, exit status 100 sending a job to dead
 * at once, the stderr tail kept as the job's error (bounded) while stderr still passes
 * through, CWORK_ARG_ variables, and --metrics-listen's /metrics and /healthz over
 * HTTP, healthy and not. Commands take real time where the lines report it. */
#define _GNU_SOURCE
#include "cli_work_testutil.h"
#include "web_testutil.h"

#include <sys/socket.h>

#define ID_OK "00000000000000000000000a"
#define ID_BAD "00000000000000000000000b"
#define ID_LAST "00000000000000000000000c"
#define ID_DROP "00000000000000000000000d"
#define ID_AGAIN "00000000000000000000000e"

static void push(const char *name, const char *id, const char *rest)
{
    redis_int("LPUSH %s:jobs:%s {\"name\":\"%s\",\"id\":\"%s\",\"t\":1,\"args\":{}%s}", ns_, name,
              name, id, rest);
}

/* The line of text that starts with prefix (NUL-terminated copy in line), or NULL. */
static const char *find_line(const char *text, const char *prefix, char *line, size_t size)
{
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len >= strlen(prefix) && strncmp(p, prefix, strlen(prefix)) == 0) {
            snprintf(line, size, "%.*s", (int)len, p);
            return p;
        }
        p = nl ? nl + 1 : NULL;
    }
    return NULL;
}

/* The score of the member of zset <ns>:which whose id is id, minus its failed_at; its
 * bytes in member. -1 when there is none. */
static long long score_after_failure(const char *which, const char *id, char *member, size_t size)
{
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:%s 0 -1 WITHSCORES", ns_, which);
    long long d = -1;
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        cwork_job *j = NULL;
        if (cwork_job_decode(r->element[i]->str, r->element[i]->len, &j, NULL) == 0 &&
            strcmp(cwork_job_id(j), id) == 0) {
            d = atoll(r->element[i + 1]->str) - cwork_job_failed_at(j);
            if (member) snprintf(member, size, "%s", r->element[i]->str);
        }
        cwork_job_free(j);
    }
    freeReplyObject(r);
    return d;
}

/* ---------------------------------------------------------------- outcome lines */

static const char *const outcome_names[] = {"ok", "bad", "last", "drop", "again", NULL};

static void start_outcome_jobs(int quiet)
{
    push("ok", ID_OK, "");
    push("bad", ID_BAD, "");
    push("last", ID_LAST, ",\"fails\":3,\"err\":\"before\",\"failed_at\":1"); /* its 4th */
    push("drop", ID_DROP, "");
    push("again", ID_AGAIN, ",\"fails\":1,\"err\":\"before\",\"failed_at\":1");
    const char *args[] = {"--job",       "ok=sleep 0.1; echo out",
                          "--job",       "bad=sleep 0.1; echo boom >&2; exit 3",
                          "--job",       "last=echo never again >&2; exit 3",
                          "--job",       "drop=exit 5",
                          "--skip-dead", "--job",
                          "again=true",  quiet ? "--quiet" : NULL,
                          NULL};
    start_work(args);
    WAIT_UNTIL(settled(outcome_names) && redis_int("ZCARD %s:retry", ns_) == 1 &&
                   redis_int("ZCARD %s:dead", ns_) == 1,
               15000);
    CHECK(settled(outcome_names));
    CHECK_INT(stop_work(SIGTERM, 10000), 0);
    read_outputs();
}

static void outcome_lines_say_what_became_of_each_job(void)
{
    setup("work-lines");
    start_outcome_jobs(0);
    char line[512];
    static const char *const started[] = {"cwork work: [ok " ID_OK "] started",
                                          "cwork work: [bad " ID_BAD "] started",
                                          "cwork work: [last " ID_LAST "] started (retry 3)",
                                          "cwork work: [drop " ID_DROP "] started",
                                          "cwork work: [again " ID_AGAIN "] started (retry 1)"};
    const char *at_start[5];
    for (int i = 0; i < 5; i++) {
        at_start[i] = find_line(err_, started[i], line, sizeof line);
        if (!at_start[i])
            tl_fail(__FILE__, __LINE__, "no line \"%s\" in:\n%s", started[i], err_);
        else
            CHECK_STR(line, started[i]); /* nothing after it */
    }

    /* done in T, T at least the command's 100 ms */
    const char *p = find_line(err_, "cwork work: [ok " ID_OK "] done in ", line, sizeof line);
    CHECK(p && at_start[0] && p > at_start[0]);
    double took = p ? atof(line + strlen("cwork work: [ok " ID_OK "] done in ")) : 0;
    CHECK(took >= 0.1 && took < 10);
    CHECK(p && strcmp(line + strlen(line) - 2, " s") == 0);

    /* failed in T: ERROR -> retry in N s, N what the pool then used */
    p = find_line(err_, "cwork work: [bad " ID_BAD "] failed in ", line, sizeof line);
    CHECK(p && at_start[1] && p > at_start[1]);
    const char *colon = p ? strstr(line, " s: boom -> retry in ") : NULL;
    CHECK(colon != NULL);
    if (colon) {
        took = atof(line + strlen("cwork work: [bad " ID_BAD "] failed in "));
        CHECK(took >= 0.1 && took < 10);
        long long said = atoll(colon + strlen(" s: boom -> retry in "));
        CHECK(strcmp(line + strlen(line) - 2, " s") == 0);
        CHECK_INT(said, score_after_failure("retry", ID_BAD, NULL, 0));
        CHECK(said >= 16 && said <= 16 + 29 * 2); /* Go's first backoff */
    }
    p = find_line(err_, "cwork work: [last " ID_LAST "] failed in ", line, sizeof line);
    CHECK(p && strstr(line, " s: never again -> dead") &&
          strcmp(strstr(line, " -> "), " -> dead") == 0);
    CHECK(score_after_failure("dead", ID_LAST, NULL, 0) == 0);
    p = find_line(err_, "cwork work: [drop " ID_DROP "] failed in ", line, sizeof line);
    CHECK(p && strstr(line, " s: exit status 5 -> dropped (--skip-dead)") &&
          strcmp(strstr(line, " -> "), " -> dropped (--skip-dead)") == 0);
    CHECK(find_line(err_, "cwork work: [again " ID_AGAIN "] done in ", line, sizeof line));

    /* one outcome per job, and none of it on stdout */
    int outcomes = 0;
    for (const char *q = err_; (q = strstr(q, "] done in ")) != NULL; q++)
        outcomes++;
    for (const char *q = err_; (q = strstr(q, "] failed in ")) != NULL; q++)
        outcomes++;
    CHECK_INT(outcomes, 5);
    CHECK(strstr(out_, "cwork work:") == NULL);
    CHECK(strstr(out_, "[ok " ID_OK "] out\n") != NULL);
    CHECK(strstr(err_, "[bad " ID_BAD "] boom\n") != NULL);
    cleanup();
}

static void quiet_leaves_the_commands_output(void)
{
    setup("work-quiet");
    start_outcome_jobs(1);
    CHECK(strstr(err_, "] started") == NULL);
    CHECK(strstr(err_, "] done in") == NULL);
    CHECK(strstr(err_, "] failed in") == NULL);
    CHECK(strstr(out_, "[ok " ID_OK "] out\n") != NULL); /* the commands' own lines */
    CHECK(strstr(err_, "[bad " ID_BAD "] boom\n") != NULL);
    CHECK(strstr(err_, "cwork work: pool ") != NULL); /* and cwork's start and stop */
    CHECK(strstr(err_, "cwork work: stopped; 5 processed, 3 failed") != NULL);
    CHECK_INT(redis_int("ZCARD %s:retry", ns_), 1); /* the jobs fared the same */
    CHECK_INT(redis_int("ZCARD %s:dead", ns_), 1);
    cleanup();
}

/* ---------------------------------------------------------------- exit status 100 */

static void exit_100_sends_the_job_to_dead_at_once(void)
{
    setup("work-noretry");
    push("nr", ID_OK, ""); /* max-fails 4: three retries left */
    push("nrdrop", ID_DROP, "");
    push("other", ID_BAD, ""); /* 99: an ordinary failure */
    const char *args[] = {
        "--job",         "nr=sleep 0.1; echo 'bad input: no such file' >&2; exit 100",
        "--job",         "nrdrop=exit 100",
        "--skip-dead",   "--job",
        "other=exit 99", NULL};
    start_work(args);
    const char *names[] = {"nr", "nrdrop", "other", NULL};
    WAIT_UNTIL(settled(names) && redis_int("ZCARD %s:dead", ns_) == 1 &&
                   redis_int("ZCARD %s:retry", ns_) == 1,
               15000);
    CHECK_INT(stop_work(SIGTERM, 10000), 0);
    read_outputs();
    char line[512], dead[1024], retry[1024];
    CHECK(find_line(err_, "cwork work: [nr " ID_OK "] failed in ", line, sizeof line) &&
          strstr(line, " s: bad input: no such file -> dead (no retry: exit status 100)"));
    CHECK(find_line(err_, "cwork work: [nrdrop " ID_DROP "] failed in ", line, sizeof line) &&
          strstr(line, " s: exit status 100 -> dropped (no retry: exit status 100)"));
    CHECK(find_line(err_, "cwork work: [other " ID_BAD "] failed in ", line, sizeof line) &&
          strstr(line, " s: exit status 99 -> retry in "));

    /* The whole namespace: the dead job with fails 1, the retried one, the pool's keys. */
    CHECK_INT(score_after_failure("dead", ID_OK, dead, sizeof dead), 0);
    long long delay = score_after_failure("retry", ID_BAD, retry, sizeof retry);
    CHECK(delay >= 16 && delay <= 74);
    cwork_job *dj = NULL, *rj = NULL;
    CHECK_INT(cwork_job_decode(dead, strlen(dead), &dj, NULL), 0);
    CHECK_INT(cwork_job_decode(retry, strlen(retry), &rj, NULL), 0);
    long long dfa = dj ? cwork_job_failed_at(dj) : 0, rfa = rj ? cwork_job_failed_at(rj) : 0;
    cwork_job_free(dj);
    cwork_job_free(rj);
    char want[4096];
    snprintf(want, sizeof want,
             "{\"name\":\"nr\",\"id\":\"" ID_OK "\",\"t\":1,\"args\":{},\"fails\":1,"
             "\"err\":\"bad input: no such file\",\"failed_at\":%lld}",
             dfa);
    CHECK_STR(dead, want);
    tl_take_stat_days(rc_, ns_, 3, 3);
    CHECK_INT(tl_take_failure_histories(rc_, ns_), 2); /* dead and retry; the dropped none */
    char *dump = tl_ns_dump(rc_, ns_);
    snprintf(want, sizeof want,
             "%s:dead zset {\"name\":\"nr\",\"id\":\"" ID_OK "\",\"t\":1,\"args\":{},\"fails\":1,"
             "\"err\":\"bad input: no such file\",\"failed_at\":%lld}=%lld\n"
             "%s:jobs:nr:lock string 0\n"
             "%s:jobs:nr:max_concurrency string 0\n"
             "%s:jobs:nrdrop:lock string 0\n"
             "%s:jobs:nrdrop:max_concurrency string 0\n"
             "%s:jobs:other:lock string 0\n"
             "%s:jobs:other:max_concurrency string 0\n"
             "%s:known_jobs set nr | nrdrop | other\n"
             "%s:retry zset {\"name\":\"other\",\"id\":\"" ID_BAD "\",\"t\":1,\"args\":{},"
             "\"fails\":1,\"err\":\"exit status 99\",\"failed_at\":%lld}=%lld\n",
             ns_, dfa, dfa, ns_, ns_, ns_, ns_, ns_, ns_, ns_, ns_, rfa, rfa + delay);
    CHECK_STR(dump, want);
    free(dump);
    cleanup();
}

/* ---------------------------------------------------------------- stderr tails */

static void stderr_tail_is_kept_bounded_and_passed_through(void)
{
    setup("work-tail");
    push("many", ID_OK, "");
    push("wide", ID_BAD, "");
    push("long", ID_LAST, "");
    push("slow", ID_DROP, "");
    char wide[128], slow[128];
    /* 20 lines of 200 bytes: 10 would be 2 KiB, over the 1 KiB bound */
    snprintf(wide, sizeof wide,
             "wide=for i in $(seq 10 29); do printf \"$i%%0198d\\n\" 0 >&2; done; exit 1");
    snprintf(slow, sizeof slow, "slow=echo before the end >&2; sleep 30");
    const char *args[] = {
        "--job",       "many=for i in $(seq 1 30); do echo line $i >&2; done; exit 1",
        "--max-fails", "1",
        "--job",       wide,
        "--max-fails", "1",
        "--job",       "long=head -c 3000 /dev/zero | tr '\\0' y >&2; exit 1",
        "--max-fails", "1",
        "--job",       slow,
        "--max-fails", "1",
        "--timeout",   "1",
        NULL};
    start_work(args);
    const char *names[] = {"many", "wide", "long", "slow", NULL};
    WAIT_UNTIL(settled(names) && redis_int("ZCARD %s:dead", ns_) == 4, 15000);
    CHECK_INT(redis_int("ZCARD %s:dead", ns_), 4);
    CHECK_INT(stop_work(SIGTERM, 10000), 0);
    read_outputs();

    char member[4096];
    cwork_job *j = NULL;
    /* the last 10 lines */
    score_after_failure("dead", ID_OK, member, sizeof member);
    CHECK_INT(cwork_job_decode(member, strlen(member), &j, NULL), 0);
    CHECK_STR(j ? cwork_job_last_error(j) : "", "line 21\nline 22\nline 23\nline 24\nline 25\n"
                                                "line 26\nline 27\nline 28\nline 29\nline 30");
    cwork_job_free(j);
    /* whole lines within 1 KiB: the last 5 of 200 bytes */
    score_after_failure("dead", ID_BAD, member, sizeof member);
    CHECK_INT(cwork_job_decode(member, strlen(member), &j, NULL), 0);
    const char *e = j ? cwork_job_last_error(j) : "";
    CHECK_INT(strlen(e), 5 * 200 + 4);
    CHECK(strncmp(e, "25000", 5) == 0 && strstr(e, "\n29000") != NULL);
    cwork_job_free(j);
    /* one line over the bound: its first 1023 bytes */
    score_after_failure("dead", ID_LAST, member, sizeof member);
    CHECK_INT(cwork_job_decode(member, strlen(member), &j, NULL), 0);
    e = j ? cwork_job_last_error(j) : "";
    CHECK_INT(strlen(e), 1023);
    CHECK_INT(strspn(e, "y"), 1023);
    cwork_job_free(j);
    /* a timeout: what it said, then why it ended */
    score_after_failure("dead", ID_DROP, member, sizeof member);
    CHECK_INT(cwork_job_decode(member, strlen(member), &j, NULL), 0);
    CHECK_STR(j ? cwork_job_last_error(j) : "", "before the end\ntimed out after 1 s");
    cwork_job_free(j);

    /* every line still went through to cwork's stderr */
    char want[300];
    for (int i = 1; i <= 30; i++) {
        snprintf(want, sizeof want, "[many " ID_OK "] line %d\n", i);
        if (!strstr(err_, want)) tl_fail(__FILE__, __LINE__, "not passed through: %s", want);
    }
    for (int i = 10; i <= 29; i++) {
        snprintf(want, sizeof want, "[wide " ID_BAD "] %d%0198d\n", i, 0);
        if (!strstr(err_, want)) tl_fail(__FILE__, __LINE__, "not passed through: line %d", i);
    }
    char line[512];
    CHECK(find_line(err_, "cwork work: [slow " ID_DROP "] failed in ", line, sizeof line) &&
          strstr(line, ": timed out after 1 s -> dead"));
    cleanup();
}

/* ---------------------------------------------------------------- CWORK_ARG_ variables */

static void args_become_environment_variables(void)
{
    setup("work-argenv");
    redis_int("LPUSH %s:jobs:env %s", ns_,
              "{\"name\":\"env\",\"id\":\"" ID_OK "\",\"t\":1,\"args\":{"
              "\"s\":\"a b\",\"n\":1.5,\"i\":3,\"big\":1e21,\"t\":true,\"z\":null,"
              "\"arr\":[1,\"x\"],\"obj\":{\"b\":2,\"a\":{\"c\":[]}},\"user-id\":\"dash\","
              "\"User_ID\":\"under\",\"caf\\u00e9\":\"acc\",\"nl\":\"l1\\nl2\",\"empty\":\"\","
              "\"html\":\"<a&b>\",\"nul\":\"a\\u0000b\",\"q\":\"it's \\\"quoted\\\"\"}}");
    /* args over 64 KiB: no CWORK_ARG_ variables at all (nor CWORK_JOB_ARGS) */
    static char big[80 * 1024];
    int n = snprintf(big, sizeof big,
                     "{\"name\":\"env\",\"id\":\"" ID_BAD "\",\"t\":1,\"args\":{\"small\":\"s\","
                     "\"b\":\"");
    memset(big + n, 'x', 70000);
    strcpy(big + n + 70000, "\"}}");
    redis_int("LPUSH %s:jobs:env %s", ns_, big);
    char cmd[512];
    snprintf(
        cmd, sizeof cmd,
        "env=sleep 0.1; env -0 | LC_ALL=C grep -z '^CWORK_\\(ARG\\|JOB\\)_' | LC_ALL=C sort -z > "
        "%s/env-$CWORK_JOB_ID.tmp && mv %s/env-$CWORK_JOB_ID.tmp %s/env-$CWORK_JOB_ID",
        dir_, dir_, dir_);
    const char *args[] = {"--job", cmd, NULL};
    start_work(args);
    WAIT_UNTIL(file_exists("env-" ID_OK) && file_exists("env-" ID_BAD), 15000);
    CHECK_INT(stop_work(SIGTERM, 10000), 0);

    static const char want[] =
        "CWORK_ARG_ARR=[1,\"x\"]\0"
        "CWORK_ARG_BIG=1e+21\0"
        "CWORK_ARG_CAF_=acc\0"
        "CWORK_ARG_EMPTY=\0"
        "CWORK_ARG_HTML=<a&b>\0"
        "CWORK_ARG_I=3\0"
        "CWORK_ARG_N=1.5\0"
        "CWORK_ARG_NL=l1\nl2\0"
        "CWORK_ARG_NUL=\"a\\u0000b\"\0"
        "CWORK_ARG_OBJ={\"a\":{\"c\":[]},\"b\":2}\0"
        "CWORK_ARG_Q=it's \"quoted\"\0"
        "CWORK_ARG_S=a b\0"
        "CWORK_ARG_T=true\0"
        "CWORK_ARG_USER_ID=under\0" /* "User_ID" sorts before "user-id" */
        "CWORK_ARG_Z=null\0"
        "CWORK_JOB_ARGS={\"User_ID\":\"under\",\"arr\":[1,\"x\"],\"big\":1e+21,\"caf\xc3\xa9\":"
        "\"acc\",\"empty\":\"\",\"html\":\"\\u003ca\\u0026b\\u003e\",\"i\":3,\"n\":1.5,"
        "\"nl\":\"l1\\nl2\",\"nul\":\"a\\u0000b\",\"obj\":{\"a\":{\"c\":[]},\"b\":2},"
        "\"q\":\"it's \\\"quoted\\\"\",\"s\":\"a b\",\"t\":true,\"user-id\":\"dash\","
        "\"z\":null}\0"
        "CWORK_JOB_FAILS=0\0"
        "CWORK_JOB_ID=" ID_OK "\0"
        "CWORK_JOB_NAME=env\0";
    char got[4096];
    size_t len = read_file("env-" ID_OK, got, sizeof got);
    CHECK_MEM(got, len, want, sizeof want - 1);
    static const char want_big[] = "CWORK_JOB_FAILS=0\0"
                                   "CWORK_JOB_ID=" ID_BAD "\0"
                                   "CWORK_JOB_NAME=env\0";
    len = read_file("env-" ID_BAD, got, sizeof got);
    CHECK_MEM(got, len, want_big, sizeof want_big - 1);
    cleanup();
}

/* ---------------------------------------------------------------- /metrics and /healthz */

/* One request to 127.0.0.1:port; the whole response in out. Returns the status, or -1. */
static int http(int port, const char *method, const char *path, char *out, size_t size)
{
    out[0] = '\0';
    int fd = wt_connect(port);
    if (fd < 0) return -1;
    struct timeval tv = {5, 0}; /* a stuck server fails the test sooner */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char *req = NULL;
    int n = asprintf(&req, "%s %s HTTP/1.1\r\nHost: test\r\n\r\n", method, path);
    if (n < 0 || write(fd, req, (size_t)n) != n) {
        free(req);
        close(fd);
        return -1;
    }
    free(req);
    size_t got = 0;
    ssize_t k;
    while (got < size - 1 && (k = read(fd, out + got, size - 1 - got)) > 0)
        got += (size_t)k;
    out[got] = '\0';
    close(fd);
    int status = -1;
    if (sscanf(out, "HTTP/1.1 %d", &status) != 1) return -1;
    return status;
}

static const char *body_of(const char *response)
{
    const char *b = strstr(response, "\r\n\r\n");
    return b ? b + 4 : "";
}

/* The port from "metrics on http://127.0.0.1:PORT/metrics" in cwork's stderr. */
static int metrics_port(void)
{
    int port = 0;
    WAIT_UNTIL((read_outputs(), strstr(err_, "metrics on http://127.0.0.1:") != NULL), 10000);
    const char *p = strstr(err_, "metrics on http://127.0.0.1:");
    if (p) port = atoi(p + strlen("metrics on http://127.0.0.1:"));
    CHECK(port > 0);
    CHECK(p && strstr(err_, "/metrics, health on http://127.0.0.1:") != NULL);
    return port;
}

static int threads_of(pid_t pid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *t = strstr(buf, "\nThreads:");
    return t ? atoi(t + 9) : -1;
}

static int metric_is(const char *body, const char *sample, long long want)
{
    char line[256];
    snprintf(line, sizeof line, "\n%s %lld\n", sample, want);
    return strstr(body, line) != NULL;
}

static void metrics_and_healthz_over_http(void)
{
    setup("work-metrics");
    static char resp[1 << 16];
    for (int i = 0; i < 3; i++) {
        char id[32];
        snprintf(id, sizeof id, "%024d", i + 1);
        push("ok", id, "");
    }
    push("bad", ID_BAD, "");
    push("nr", ID_LAST, "");
    push("slow", ID_DROP, "");
    char slow[160];
    snprintf(slow, sizeof slow, "slow=touch %s/slow-started; sleep 30", dir_);
    const char *args[] = {"--metrics-listen",
                          "127.0.0.1:0",
                          "--job",
                          "ok=sleep 0.1",
                          "--job",
                          "bad=exit 3",
                          "--job",
                          "nr=exit 100",
                          "--job",
                          slow,
                          "--job",
                          "we\"ird\\name=true",
                          NULL};
    start_work(args);
    int port = metrics_port();
    /* 503 until the first health check after the start (a moment) */
    int status = http(port, "GET", "/healthz", resp, sizeof resp);
    CHECK(status == 200 || (status == 503 && strstr(resp, "\r\n\r\nunhealthy: starting: ")));
    WAIT_UNTIL((status = http(port, "GET", "/healthz", resp, sizeof resp)) == 200, 10000);
    CHECK_INT(status, 200);
    WAIT_UNTIL(file_exists("slow-started") && redis_int("ZCARD %s:retry", ns_) == 1 &&
                   redis_int("ZCARD %s:dead", ns_) == 1 && redis_int("LLEN %s:jobs:ok", ns_) == 0,
               15000);
    int ok_done = 0;
    WAIT_UNTIL(
        (http(port, "GET", "/metrics", resp, sizeof resp),
         ok_done = metric_is(body_of(resp), "cwork_work_jobs_processed_total{job_name=\"ok\"}", 3)),
        10000);
    CHECK(ok_done);

    CHECK_INT(http(port, "GET", "/metrics", resp, sizeof resp), 200);
    CHECK(strstr(resp, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n") != NULL);
    const char *b = body_of(resp);
    static const struct {
        const char *sample;
        long long v;
    } want[] = {
        {"cwork_work_jobs_processed_total{job_name=\"ok\"}", 3},
        {"cwork_work_jobs_failed_total{job_name=\"ok\"}", 0},
        {"cwork_work_jobs_processed_total{job_name=\"bad\"}", 1},
        {"cwork_work_jobs_failed_total{job_name=\"bad\"}", 1},
        {"cwork_work_jobs_retried_total{job_name=\"bad\"}", 1},
        {"cwork_work_jobs_dead_total{job_name=\"bad\"}", 0},
        {"cwork_work_jobs_failed_total{job_name=\"nr\"}", 1},
        {"cwork_work_jobs_dead_total{job_name=\"nr\"}", 1},
        {"cwork_work_jobs_retried_total{job_name=\"nr\"}", 0},
        {"cwork_work_jobs_dropped_total{job_name=\"nr\"}", 0},
        {"cwork_work_jobs_running{job_name=\"slow\"}", 1},
        {"cwork_work_jobs_running{job_name=\"ok\"}", 0},
        {"cwork_work_jobs_processed_total{job_name=\"slow\"}", 0},
        {"cwork_work_jobs_processed_total{job_name=\"we\\\"ird\\\\name\"}", 0}, /* escaped */
        {"cwork_work_concurrency", 10},
        {"cwork_work_healthy", 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!metric_is(b, want[i].sample, want[i].v))
            tl_fail(__FILE__, __LINE__, "no \"%s %lld\" in:\n%s", want[i].sample, want[i].v, b);
    CHECK(strstr(b, "# TYPE cwork_work_jobs_processed_total counter\n") != NULL);
    CHECK(strstr(b, "# TYPE cwork_work_jobs_running gauge\n") != NULL);
    const char *up = strstr(b, "\ncwork_work_uptime_seconds ");
    CHECK(up && atof(up + strlen("\ncwork_work_uptime_seconds ")) > 0.1);
    redisReply *r = tl_cmd(rc_, "SMEMBERS %s:worker_pools", ns_);
    CHECK_INT(r->elements, 1);
    if (r->elements == 1) {
        char info[256];
        snprintf(info, sizeof info, "\ncwork_work_pool_info{namespace=\"%s\",pool_id=\"%s\"} 1\n",
                 ns_, r->element[0]->str);
        CHECK(strstr(b, info) != NULL);
    }
    freeReplyObject(r);

    if (http(port, "GET", "/healthz", resp, sizeof resp) != 200)
        tl_fail(__FILE__, __LINE__, "/healthz: %s", resp);
    CHECK(strncmp(body_of(resp), "ok: pool ", 9) == 0 && strstr(resp, "s ago\n"));
    CHECK_INT(http(port, "GET", "/healthz?verbose=1", resp, sizeof resp), 200);
    CHECK_INT(http(port, "GET", "/nope", resp, sizeof resp), 404);
    CHECK_INT(http(port, "POST", "/metrics", resp, sizeof resp), 405);
    CHECK(strstr(resp, "\r\nAllow: GET, HEAD\r\n") != NULL);
    CHECK_INT(http(port, "GET", "metrics", resp, sizeof resp), 400);
    CHECK_INT(http(port, "HEAD", "/metrics", resp, sizeof resp), 200);
    CHECK_STR(body_of(resp), "");
    CHECK(strstr(resp, "\r\nContent-Length: ") && !strstr(resp, "\r\nContent-Length: 0\r\n"));

    /* Idle connections cost no thread and cannot lock a scraper out. */
    int threads = threads_of(work_pid_);
    CHECK(threads > 0);
    enum { IDLE = 150 };
    int idle[IDLE];
    for (int i = 0; i < IDLE; i++) {
        idle[i] = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (connect(idle[i], (struct sockaddr *)&a, sizeof a) != 0) CHECK(!"connect");
        if (write(idle[i], "GET /metrics HTTP/1.1\r\n", 23) != 23) CHECK(!"write");
    }
    tl_sleep_ms(300);
    long long t0 = tl_now_ms();
    CHECK_INT(http(port, "GET", "/healthz", resp, sizeof resp), 200);
    CHECK(tl_now_ms() - t0 < 3000);
    CHECK_INT(threads_of(work_pid_), threads);
    for (int i = 0; i < IDLE; i++)
        close(idle[i]);
    /* a head that never ends is refused, not buffered */
    static char huge[12000];
    memset(huge, 'a', sizeof huge - 1);
    CHECK_INT(http(port, "GET", huge, resp, sizeof resp), 431);

    CHECK_INT(stop_work(SIGINT, 5000) == -1, 1); /* slow still runs: a second signal */
    CHECK_INT(stop_work(SIGINT, 10000), 1);
    cleanup();
}

/* A private Redis: its writes paused (the heartbeat goes stale while reads still
 * answer), then killed (nothing answers). /healthz follows both ways. */
static void healthz_follows_the_heartbeat_and_redis(void)
{
    tl_server srv;
    if (tl_server_start(&srv, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    setup("work-health");
    redisContext *priv = redisConnect("127.0.0.1", srv.port);
    CHECK(priv && !priv->err);
    static char resp[1 << 16];
    const char *cli = getenv("CWORK_CLI");
    char out_path[256], err_path[256];
    snprintf(out_path, sizeof out_path, "%s/work.out", dir_);
    snprintf(err_path, sizeof err_path, "%s/work.err", dir_);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int er = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(out, 1), dup2(er, 2);
        if (!cli) _exit(127);
        execl(cli, cli, "work", "--redis", srv.url, "--ns", ns_, "--metrics-listen", "127.0.0.1:0",
              "--job", "x=true", (char *)NULL);
        _exit(127);
    }
    work_pid_ = pid;
    int port = metrics_port();
    int status = 0;
    WAIT_UNTIL((status = http(port, "GET", "/healthz", resp, sizeof resp)) == 200, 10000);
    CHECK_INT(status, 200);

    /* Writes paused for 16 s: the heartbeat ages past 10 s while reads still answer. */
    freeReplyObject(redisCommand(priv, "CLIENT PAUSE 16000 WRITE"));
    long long t0 = tl_now_ms();
    WAIT_UNTIL((status = http(port, "GET", "/healthz", resp, sizeof resp)) == 503, 16000);
    CHECK_INT(status, 503);
    CHECK(tl_now_ms() - t0 >= 4000); /* not at once: a beat was at most 5 s old */
    CHECK(strncmp(body_of(resp), "unhealthy: pool ", 16) == 0 && strstr(resp, "heartbeat"));
    CHECK_INT(http(port, "GET", "/metrics", resp, sizeof resp), 200);
    CHECK(strstr(body_of(resp), "\ncwork_work_healthy 0\n") != NULL);
    WAIT_UNTIL((status = http(port, "GET", "/healthz", resp, sizeof resp)) == 200, 20000);
    CHECK_INT(status, 200); /* fresh again once the pause ends */

    tl_server_stop(&srv, SIGKILL);
    WAIT_UNTIL((status = http(port, "GET", "/healthz", resp, sizeof resp)) == 503, 20000);
    CHECK_INT(status, 503);
    CHECK(strncmp(body_of(resp), "unhealthy: ", 11) == 0 && strstr(resp, "Redis"));
    redisFree(priv);
    cleanup(); /* kills cwork (SIGKILL): it cannot stop cleanly without its Redis */
    tl_server_destroy(&srv);
}

static void bad_metrics_addresses(void)
{
    setup("work-metrics-usage");
    const char *bad[] = {"--metrics-listen", "nope:http", "--job", "x=true", NULL};
    start_work(bad);
    CHECK_INT(wait_work(5000), 2);
    read_outputs();
    CHECK(strstr(err_, "--metrics-listen needs PORT, HOST:PORT or [V6]:PORT") != NULL);
    /* a port in use: exit 1 before the pool wrote anything */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    CHECK_INT(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    CHECK_INT(listen(fd, 1), 0);
    getsockname(fd, (struct sockaddr *)&a, &al);
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", ntohs(a.sin_port));
    const char *busy[] = {"--metrics-listen", addr, "--job", "x=true", NULL};
    start_work(busy);
    CHECK_INT(wait_work(10000), 1);
    read_outputs();
    CHECK(strstr(err_, "cannot listen on") && strstr(err_, "Address already in use"));
    close(fd);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, "");
    free(dump);
    const char *help[] = {"--help", NULL};
    start_work(help);
    CHECK_INT(wait_work(5000), 0);
    read_outputs();
    CHECK(strstr(out_, "100 means \"failed, do not retry\"") && strstr(out_, "CWORK_ARG_") &&
          strstr(out_, "--metrics-listen ADDR") && strstr(out_, "--quiet") &&
          strstr(out_, "/healthz"));
    cleanup();
}

int main(void)
{
    rc_ = tl_redis_connect();
    signal(SIGPIPE, SIG_IGN);
    RUN(outcome_lines_say_what_became_of_each_job);
    RUN(quiet_leaves_the_commands_output);
    RUN(exit_100_sends_the_job_to_dead_at_once);
    RUN(stderr_tail_is_kept_bounded_and_passed_through);
    RUN(args_become_environment_variables);
    RUN(metrics_and_healthz_over_http);
    RUN(healthz_follows_the_heartbeat_and_redis);
    RUN(bad_metrics_addresses);
    redisFree(rc_);
    return tl_finish();
}
