/* Rate limits end to end (PROTOCOL §20): two pools in two processes share one limit.
 * Every handler writes the time it starts (CLOCK_MONOTONIC, one clock for every process
 * of the machine) to a shared file; the windows are judged on those times, so that load
 * can only make the run slower, never make a check of the limit fail.
 *
 * Limit 20/1s schedules starts I = 50 ms apart on Redis' clock, and any 22 of them span
 * at least 21 I − I/2 = 1.025 s (PROTOCOL §20.2). A handler starts a little after its
 * fetch (reply, hand-off, wake-up: d ≥ 0), so a closed window of 1 s of handler times
 * holds at most 21 starts unless one start's d exceeds that of the start 21 places later
 * by more than 25 ms. The run of 400 jobs takes at least 399 I − I/2 = 19.925 s on
 * Redis' clock (less would mean the limit was broken; 50 ms are allowed for d).
 *
 * That the limit holds a type back no more than it should is judged on the gaps
 * between consecutive starts, not on the run's length: a start less than I/2 late keeps
 * the schedule (its gap is under I + I/2, the next one shorter by as much), but one later
 * than that (a dispatcher not scheduled for 25 ms: common under `ctest -j8` on 2 cores)
 * starts a new schedule and lengthens the run by its lateness, as PROTOCOL §20.2 says
 * it must. So the run's length depends on the load; the median gap is under I + I/2 as
 * long as most starts keep the schedule, and a pool that waited for its idle backoff
 * instead of the held-back type's start, or a limiter spacing starts I + I/2 apart or
 * more, moves it above. (The exact schedule, a run of J starts taking (J - 1) I, is
 * test_cycle_rate_limit's, on an injected clock.) */
#include "pool_testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#define LIMITED "lim"
#define PLAIN "plain"

static char starts_path_[128];
static int starts_fd_ = -1;

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The handler: one line per start, "L <µs>" or "P <µs>" (one write: O_APPEND keeps
 * lines of both processes whole). */
static int record(cwork_job *job, void *ctx)
{
    (void)ctx;
    char line[64];
    int n = snprintf(line, sizeof line, "%c %lld\n", cwork_job_name(job)[0] == 'l' ? 'L' : 'P',
                     (long long)mono_us());
    return write(starts_fd_, line, (size_t)n) == n ? 0 : -1;
}

/* A pool process: runs until the parent closes the control pipe, then stops cleanly. */
static void pool_process(int control, int with_option)
{
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(tl_redis_url(), NULL, &err);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 5;
    cwork_pool *p = redis ? cwork_pool_new(redis, ns_, &o, &err) : NULL;
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    if (with_option) {
        jo.rate_limit = 20;
        jo.rate_limit_window_ms = 1000;
    }
    if (!p || cwork_pool_register(p, LIMITED, record, &jo, &err) ||
        cwork_pool_register(p, PLAIN, record, NULL, &err) || cwork_pool_start(p, &err)) {
        fprintf(stderr, "pool process: %s\n", err.message);
        _exit(1);
    }
    char c;
    while (read(control, &c, 1) < 0 && errno == EINTR)
        ;
    int rc = cwork_pool_stop(p, 10000, &err);
    cwork_pool_free(p);
    cwork_redis_free(redis);
    _exit(rc == 0 ? 0 : 2);
}

typedef struct run {
    pid_t pid[2];
    int control[2]; /* write ends */
} run;

/* Both pools register the limited type with the option 20/1s when with_option (as a
 * deployment would: a pool started before the setting exists, without the option, runs
 * the type unlimited until it reads the setting, within a second), else neither does. */
static void start_pools(run *r, int with_option)
{
    snprintf(starts_path_, sizeof starts_path_, "/tmp/cwt-rate-%d", (int)getpid());
    starts_fd_ = open(starts_path_, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
    CHECK(starts_fd_ >= 0);
    fflush(NULL);
    for (int i = 0; i < 2; i++) {
        int fds[2];
        if (pipe(fds) != 0) abort();
        r->pid[i] = fork();
        if (r->pid[i] == 0) {
            close(fds[1]);
            for (int k = 0; k < i; k++) /* the other pool's pipe: its EOF is its stop */
                close(r->control[k]);
            pool_process(fds[0], with_option);
        }
        close(fds[0]);
        r->control[i] = fds[1];
    }
}

static void stop_pools(run *r)
{
    for (int i = 0; i < 2; i++) {
        close(r->control[i]);
        int status = -1;
        waitpid(r->pid[i], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    close(starts_fd_);
}

/* The recorded starts of one kind ('L' or 'P'), sorted; returns how many. */
static size_t read_starts(char kind, int64_t *out, size_t max)
{
    FILE *f = fopen(starts_path_, "r");
    size_t n = 0;
    char k;
    long long us;
    while (f && fscanf(f, " %c %lld", &k, &us) == 2)
        if (k == kind && n < max) out[n++] = us;
    if (f) fclose(f);
    for (size_t i = 1; i < n; i++) /* insertion sort: nearly sorted already */
        for (size_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int64_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

/* The most starts in any closed window of window_us among s[from..n). */
static size_t most_in_window(const int64_t *s, size_t from, size_t n, int64_t window_us)
{
    size_t most = 0;
    for (size_t i = from, j = from; i < n; i++) {
        if (j < i) j = i;
        while (j + 1 < n && s[j + 1] - s[i] <= window_us)
            j++;
        if (j - i + 1 > most) most = j - i + 1;
    }
    return most;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The median of the n - 1 gaps between the sorted starts s[0..n) (n >= 2). */
static int64_t median_gap(const int64_t *s, size_t n)
{
    int64_t *gaps = malloc((n - 1) * sizeof *gaps);
    if (!gaps) abort();
    for (size_t i = 1; i < n; i++)
        gaps[i - 1] = s[i] - s[i - 1];
    qsort(gaps, n - 1, sizeof *gaps, cmp_i64);
    int64_t m = gaps[(n - 1) / 2];
    free(gaps);
    return m;
}

/* LPUSHes count jobs of name in one command, ids <prefix><i>. */
static void push_jobs(const char *name, const char *prefix, int count)
{
    const char **argv = malloc(((size_t)count + 2) * sizeof *argv);
    char(*jobs)[96] = malloc((size_t)count * sizeof *jobs);
    char key[128];
    snprintf(key, sizeof key, "%s:jobs:%s", ns_, name);
    argv[0] = "LPUSH";
    argv[1] = key;
    for (int i = 0; i < count; i++) {
        snprintf(jobs[i], sizeof jobs[i], "{\"name\":\"%s\",\"id\":\"%s%d\",\"t\":1700000000}",
                 name, prefix, i);
        argv[i + 2] = jobs[i];
    }
    redisReply *r = redisCommandArgv(rc_, count + 2, argv, NULL);
    CHECK(r && r->type == REDIS_REPLY_INTEGER);
    if (r) freeReplyObject(r);
    free(argv);
    free(jobs);
}

static void four_hundred_jobs_at_20_per_second_over_two_pools(void)
{
    tl_unique_ns("rl", ns_, sizeof ns_);
    push_jobs(LIMITED, "l", 400);
    push_jobs(PLAIN, "p", 200);
    run r;
    start_pools(&r, 1);
    /* Others are not held back: the plain jobs are all done long before the limited
     * ones (these take 20 s). */
    CHECK_INT(wait_for_int(0, 60000, "LLEN %s:jobs:%s", PLAIN), 0);
    long long limited_left = wait_for_int(-1, 0, "LLEN %s:jobs:%s", LIMITED);
    CHECK(limited_left > 200);
    CHECK_INT(wait_for_int(0, 120000, "LLEN %s:jobs:%s", LIMITED), 0);
    stop_pools(&r);

    static int64_t s[1000];
    CHECK_INT(read_starts('P', s, 1000), 200);
    size_t n = read_starts('L', s, 1000);
    CHECK_INT(n, 400);
    if (n == 400) {
        size_t most = most_in_window(s, 0, n, 1000000);
        if (most > 21) tl_fail(__FILE__, __LINE__, "%zu starts in one window of 1 s", most);
        int64_t span = s[n - 1] - s[0], interval = 1000000 / 20, median = median_gap(s, n);
        fprintf(stderr,
                "  400 starts over %.3f s, at most %zu in a window of 1 s, median gap %.1f ms\n",
                (double)span / 1e6, most, (double)median / 1e3);
        if (span < 399 * interval - interval / 2 - 50000) /* -50 ms: one start's lateness */
            tl_fail(__FILE__, __LINE__, "400 starts over %.3f s, want at least 19.875",
                    (double)span / 1e6);
        if (median >= interval + interval / 2)
            tl_fail(__FILE__, __LINE__, "median gap between starts %.1f ms, want under %.1f",
                    (double)median / 1e3, 1.5 * (double)interval / 1e3);
    }
    /* What is left: the setting, the last start's state (or none once it expired), the
     * daily counts; no job anywhere. */
    tl_take_stat_days(rc_, ns_, 600, 0);
    tl_do(rc_, "DEL %s:cwork:rate_limit:" LIMITED, ns_);
    char *dump = tl_ns_dump(rc_, ns_), want[1024];
    snprintf(want, sizeof want,
             "%s:cwork:rate_limits hash " LIMITED "=20/1s\n"
             "%s:jobs:" LIMITED ":lock string 0\n"
             "%s:jobs:" LIMITED ":max_concurrency string 0\n"
             "%s:jobs:" PLAIN ":lock string 0\n"
             "%s:jobs:" PLAIN ":max_concurrency string 0\n"
             "%s:known_jobs set " LIMITED " | " PLAIN "\n",
             ns_, ns_, ns_, ns_, ns_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    unlink(starts_path_);
    tl_ns_delete(rc_, ns_);
}

/* A limit changed while pools run holds from the type's next start: 20/1s, then 4/1s
 * once 20 jobs started. */
static void a_limit_changed_while_running_holds_within_one_window(void)
{
    tl_unique_ns("rl", ns_, sizeof ns_);
    push_jobs(LIMITED, "l", 60);
    /* The pools have no option: they follow the namespace's setting. */
    cwork_client *client = cwork_client_new(redis_, ns_, NULL);
    CHECK_INT(cwork_client_set_rate_limit(client, LIMITED, 20, 1000, NULL), 0);
    run r;
    start_pools(&r, 0);
    CHECK_INT(wait_for_int(40, 30000, "LLEN %s:jobs:%s", LIMITED), 40);
    CHECK_INT(cwork_client_set_rate_limit(client, LIMITED, 4, 1000, NULL), 0);
    int64_t changed = mono_us();
    cwork_rate_limit_info *l = NULL;
    size_t nl = 0;
    CHECK_INT(cwork_client_rate_limits(client, &l, &nl, NULL), 0);
    CHECK(nl == 1 && !strcmp(l[0].text, "4/1s") && l[0].count == 4 && l[0].window_ms == 1000);
    cwork_rate_limit_infos_free(l, nl);
    tl_sleep_ms(3500);
    CHECK_INT(cwork_client_set_rate_limit(client, LIMITED, 0, 0, NULL), 0); /* off: the rest */
    CHECK_INT(wait_for_int(0, 30000, "LLEN %s:jobs:%s", LIMITED), 0);
    cwork_client_free(client);
    stop_pools(&r);
    static int64_t s[100];
    size_t n = read_starts('L', s, 100);
    CHECK_INT(n, 60);
    /* From one window after the change until the limit went off (3.5 s after it): at
     * most 4 + 1 starts in any window of 1 s. */
    size_t from = 0, to = 0;
    while (from < n && s[from] < changed + 1000000)
        from++;
    while (to < n && s[to] < changed + 3500000)
        to++;
    CHECK(to > from);
    size_t most = most_in_window(s, from, to, 1000000);
    if (most > 5) tl_fail(__FILE__, __LINE__, "%zu starts in a window after the change", most);
    unlink(starts_path_);
    tl_ns_delete(rc_, ns_);
}

static pthread_mutex_t log_mu_ = PTHREAD_MUTEX_INITIALIZER;
static char log_[8192];

static void logger(void *ud, cwork_log_level level, const char *msg, const cwork_log_field *f,
                   size_t n)
{
    (void)ud, (void)level;
    pthread_mutex_lock(&log_mu_);
    size_t len = strlen(log_);
    len += (size_t)snprintf(log_ + len, sizeof log_ - len, "%s", msg);
    for (size_t i = 0; i < n && len < sizeof log_; i++)
        len += (size_t)snprintf(log_ + len, sizeof log_ - len, " %s=%s", f[i].key, f[i].value);
    if (len < sizeof log_ - 1) strcat(log_, "\n");
    pthread_mutex_unlock(&log_mu_);
}

static int logged(const char *needle)
{
    pthread_mutex_lock(&log_mu_);
    int found = strstr(log_, needle) != NULL;
    pthread_mutex_unlock(&log_mu_);
    return found;
}

/* A Go pool (a heartbeat without cwork's `cwork` field) running a limited type is
 * reported once; a cwork pool's heartbeat, or a Go pool of other types, is not. */
static void a_go_pool_running_a_limited_type_is_reported(void)
{
    tl_unique_ns("rl", ns_, sizeof ns_);
    long long now = (long long)time(NULL);
    tl_do(rc_, "HSET %s:cwork:rate_limits " LIMITED " 5/1s", ns_);
    tl_do(rc_,
          "SADD %s:worker_pools aaaa0000aaaa0000aaaa0000 bbbb0000bbbb0000bbbb0000 "
          "cccc0000cccc0000cccc0000",
          ns_);
    tl_do(rc_,
          "HSET %s:worker_pools:aaaa0000aaaa0000aaaa0000 heartbeat_at %lld job_names x," LIMITED,
          ns_, now);
    tl_do(rc_,
          "HSET %s:worker_pools:bbbb0000bbbb0000bbbb0000 heartbeat_at %lld job_names " LIMITED
          " cwork 0.2.0",
          ns_, now);
    tl_do(rc_, "HSET %s:worker_pools:cccc0000cccc0000cccc0000 heartbeat_at %lld job_names x", ns_,
          now);
    log_[0] = '\0';
    cwork_set_logger(logger, NULL, CWORK_LOG_WARN);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 2;
    cwork_pool *p = cwork_pool_new(redis_, ns_, &o, NULL);
    CHECK_INT(cwork_pool_register(p, LIMITED, record, NULL, NULL), 0);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    /* Every fifth read of the setting, a read each second. */
    const char *want = "pool.rate_limit.go_pool pool_id=aaaa0000aaaa0000aaaa0000 job_name=" LIMITED;
    for (int i = 0; i < 300 && !logged(want); i++)
        tl_sleep_ms(50);
    CHECK(logged(want));
    CHECK(!logged("bbbb0000bbbb0000bbbb0000"));
    CHECK(!logged("cccc0000cccc0000cccc0000"));
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    cwork_pool_free(p);
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    RUN(four_hundred_jobs_at_20_per_second_over_two_pools);
    RUN(a_limit_changed_while_running_holds_within_one_window);
    RUN(a_go_pool_running_a_limited_type_is_reported); /* last: threads in this process */
    pool_test_teardown();
    return tl_finish();
}
