/* What cwork.h promises about threads (also run under ThreadSanitizer): the threads the
 * library starts — executors running handlers, the maintenance thread, the web
 * server's — have every asynchronous signal blocked and leave the caller's mask alone;
 * the logger is swapped whole while other threads log; an enqueuer's and a client's
 * settings change while other threads use them. */
#include "cwork_web.h"
#include "log.h"
#include "pool_testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

/* Signals an application handles or waits for: library threads must not receive them. */
static const int async_signals_[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGUSR1,
                                     SIGUSR2, SIGCHLD, SIGPIPE, SIGALRM, SIGWINCH};
/* Signals a thread raises itself: blocking them is undefined, so they stay open. */
static const int sync_signals_[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};

#define NSIG_ASYNC (sizeof async_signals_ / sizeof async_signals_[0])
#define NSIG_SYNC (sizeof sync_signals_ / sizeof sync_signals_[0])

/* 1 when mask blocks exactly what library threads must block; else a message. */
static int mask_is_library_mask(const sigset_t *mask, char *why, size_t size)
{
    for (size_t i = 0; i < NSIG_ASYNC; i++)
        if (!sigismember(mask, async_signals_[i])) {
            snprintf(why, size, "signal %d is not blocked", async_signals_[i]);
            return 0;
        }
    for (size_t i = 0; i < NSIG_SYNC; i++)
        if (sigismember(mask, sync_signals_[i])) {
            snprintf(why, size, "signal %d is blocked", sync_signals_[i]);
            return 0;
        }
    return 1;
}

/* ---------------------------------------------------------------- signal masks */

static pthread_mutex_t masks_mu_ = PTHREAD_MUTEX_INITIALIZER;
static int handler_runs_, handler_masks_ok_, handler_fail_rc_;
static int logs_off_main_, logs_off_main_ok_, web_request_logs_;
static char mask_problem_[128];
static pthread_t main_thread_;

static void note_mask(int *ok_counter)
{
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    char why[128];
    int ok = mask_is_library_mask(&now, why, sizeof why);
    if (ok)
        (*ok_counter)++;
    else
        snprintf(mask_problem_, sizeof mask_problem_, "%s", why);
}

static int mask_handler(cwork_job *job, void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&masks_mu_);
    handler_runs_++;
    note_mask(&handler_masks_ok_);
    pthread_mutex_unlock(&masks_mu_);
    int rc = cwork_job_fail(job, "failed on purpose");
    pthread_mutex_lock(&masks_mu_);
    handler_fail_rc_ = rc;
    pthread_mutex_unlock(&masks_mu_);
    return rc;
}

static void mask_logger(void *ud, cwork_log_level level, const char *message,
                        const cwork_log_field *fields, size_t n)
{
    (void)ud, (void)level, (void)fields, (void)n;
    if (pthread_equal(pthread_self(), main_thread_)) return;
    pthread_mutex_lock(&masks_mu_);
    logs_off_main_++;
    note_mask(&logs_off_main_ok_);
    web_request_logs_ += strcmp(message, "web.request") == 0;
    pthread_mutex_unlock(&masks_mu_);
}

static int get_queues(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    char req[128];
    int n = snprintf(req, sizeof req, "GET /queues HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n\r\n", port);
    char buf[512];
    ssize_t got =
        send(fd, req, (size_t)n, MSG_NOSIGNAL) == n ? recv(fd, buf, sizeof buf - 1, 0) : -1;
    close(fd);
    if (got < 0) return -1;
    buf[got] = '\0';
    return strncmp(buf, "HTTP/1.", 7) == 0 && strncmp(buf + 8, " 200", 4) == 0 ? 0 : -1;
}

static void library_threads_block_async_signals_and_leave_ours_alone(void)
{
    main_thread_ = pthread_self();
    sigset_t none, before, after;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, &before);
    cwork_set_logger(mask_logger, NULL, CWORK_LOG_DEBUG);

    cwork_pool *p = new_pool("mask", 2);
    CHECK_INT(cwork_pool_register(p, "mask", mask_handler, NULL, NULL), 0);
    cwork_enqueuer *enq = cwork_enqueuer_new(redis_, ns_, NULL);
    CHECK_INT(cwork_enqueue(enq, "mask", NULL, NULL, NULL), 0);
    cwork_error err = {0};
    CHECK_INT(cwork_pool_start(p, &err), 0);
    CHECK_INT(cwork_pool_drain(p, 10000, &err), 0);
    cwork_web_options wo;
    cwork_web_options_init(&wo);
    wo.listen = "127.0.0.1:0";
    cwork_web *web = cwork_web_start(redis_, ns_, &wo, &err);
    CHECK(web != NULL);
    if (web) CHECK_INT(get_queues(cwork_web_port(web)), 0);
    cwork_web_free(web);
    CHECK_INT(cwork_pool_stop(p, 5000, &err), 0);
    pthread_sigmask(SIG_SETMASK, NULL, &after);
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);

    pthread_mutex_lock(&masks_mu_);
    CHECK_INT(handler_runs_, 1);
    CHECK_INT(handler_masks_ok_, 1);
    CHECK_INT(handler_fail_rc_, CWORK_EJOBFAILED);
    CHECK(logs_off_main_ > 0);
    CHECK(web_request_logs_ > 0); /* logged on a web server thread */
    CHECK_INT(logs_off_main_ok_, logs_off_main_);
    if (mask_problem_[0]) tl_fail(__FILE__, __LINE__, "%s", mask_problem_);
    pthread_mutex_unlock(&masks_mu_);
    /* Starting threads did not change the caller's mask. */
    for (size_t i = 0; i < NSIG_ASYNC; i++)
        CHECK(!sigismember(&after, async_signals_[i]));

    /* The failure is the handler's message, in the retry set. */
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:retry 0 -1", ns_);
    CHECK_INT(r->elements, 1);
    if (r->elements == 1) CHECK(strstr(r->element[0]->str, "\"err\":\"failed on purpose\""));
    freeReplyObject(r);
    tl_do(rc_, "DEL %s:retry", ns_);
    tl_take_stat_days(rc_, ns_, 1, 1);
    CHECK_INT(take_failure_histories(), 1);
    char want[512];
    snprintf(want, sizeof want,
             "%s:jobs:mask:lock string 0\n"
             "%s:jobs:mask:max_concurrency string 0\n"
             "%s:known_jobs set mask\n",
             ns_, ns_, ns_);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, want);
    free(dump);
    cwork_enqueuer_free(enq);
    cwork_pool_free(p);
    tl_ns_delete(rc_, ns_);
    pthread_sigmask(SIG_SETMASK, &before, NULL);
}

/* ---------------------------------------------------------------- the logger */

#define LOG_THREADS 4
static char tag_a_, tag_b_;
static atomic_int mismatched_, seen_a_, seen_b_;
static atomic_int logging_done_;

static void logger_a(void *ud, cwork_log_level l, const char *m, const cwork_log_field *f, size_t n)
{
    (void)l, (void)m, (void)f, (void)n;
    atomic_fetch_add(ud == &tag_a_ ? &seen_a_ : &mismatched_, 1);
}

static void logger_b(void *ud, cwork_log_level l, const char *m, const cwork_log_field *f, size_t n)
{
    (void)m, (void)f, (void)n;
    /* B is installed at WARN: an INFO record reaching it would be half a swap. */
    atomic_fetch_add(ud == &tag_b_ && l >= CWORK_LOG_WARN ? &seen_b_ : &mismatched_, 1);
}

static void *log_loop(void *arg)
{
    (void)arg;
    while (!atomic_load(&logging_done_)) {
        cw_log(CWORK_LOG_INFO, "contract.info", "k", "v", NULL);
        cw_log(CWORK_LOG_WARN, "contract.warn", NULL);
    }
    return NULL;
}

static void logger_is_swapped_whole_while_threads_log(void)
{
    atomic_store(&logging_done_, 0);
    pthread_t th[LOG_THREADS];
    for (int i = 0; i < LOG_THREADS; i++)
        pthread_create(&th[i], NULL, log_loop, NULL);
    /* Swap at least 20000 times, and until both loggers have been reached (a loaded
     * machine may run the loggers late), for at most 60 s. */
    long long t0 = tl_now_ms();
    for (int i = 0; i < 20000 || ((atomic_load(&seen_a_) == 0 || atomic_load(&seen_b_) == 0) &&
                                  tl_now_ms() - t0 < 60000);
         i++) {
        switch (i % 3) {
        case 0:
            CHECK_INT(cwork_set_logger(logger_a, &tag_a_, CWORK_LOG_DEBUG), 0);
            break;
        case 1:
            CHECK_INT(cwork_set_logger(logger_b, &tag_b_, CWORK_LOG_WARN), 0);
            break;
        default:
            CHECK_INT(cwork_set_logger(NULL, NULL, CWORK_LOG_DEBUG), 0);
            break;
        }
    }
    atomic_store(&logging_done_, 1);
    for (int i = 0; i < LOG_THREADS; i++)
        pthread_join(th[i], NULL);
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    CHECK_INT(atomic_load(&mismatched_), 0);
    CHECK(atomic_load(&seen_a_) > 0 && atomic_load(&seen_b_) > 0);
}

/* ---------------------------------------------------------------- settings in use */

#define ENQ_THREADS 4
#define ENQ_PER_THREAD 150
static cwork_enqueuer *shared_enq_;
static atomic_int enq_plain_ok_, enq_unique_ok_, enq_too_big_, enq_other_, enq_done_;

static void *enqueue_loop(void *arg)
{
    (void)arg;
    cwork_args *args = cwork_args_new();
    cwork_args_set_string(args, "pad", "a value long enough to pass a small limit");
    for (int i = 0; i < ENQ_PER_THREAD; i++) {
        int plain = i % 2;
        int rc = plain ? cwork_enqueue(shared_enq_, "settings", args, NULL, NULL)
                       : cwork_enqueue_unique(shared_enq_, "settings_u", args, NULL, NULL);
        atomic_fetch_add(rc == 0 && plain                   ? &enq_plain_ok_
                         : rc == 0 || rc == CWORK_DUPLICATE ? &enq_unique_ok_
                         : rc == CWORK_ETOOBIG              ? &enq_too_big_
                                                            : &enq_other_,
                         1);
    }
    cwork_args_free(args);
    atomic_fetch_add(&enq_done_, 1);
    return NULL;
}

static void enqueuer_and_client_settings_change_while_in_use(void)
{
    tl_unique_ns("settings", ns_, sizeof ns_);
    shared_enq_ = cwork_enqueuer_new(redis_, ns_, NULL);
    cwork_client *client = cwork_client_new(redis_, ns_, NULL);
    pthread_t th[ENQ_THREADS];
    for (int i = 0; i < ENQ_THREADS; i++)
        pthread_create(&th[i], NULL, enqueue_loop, NULL);
    /* Flip the settings until every thread is done: each enqueue meets some flip. */
    for (int i = 0; i < 400 || atomic_load(&enq_done_) < ENQ_THREADS; i++) {
        cwork_enqueuer_set_max_job_bytes(shared_enq_, i % 2 ? 16 : CWORK_DEFAULT_MAX_JOB_BYTES);
        CHECK_INT(
            cwork_enqueuer_set_go_flavor(shared_enq_, i % 2 ? CWORK_GO_UPSTREAM : CWORK_GO_FORK),
            0);
        CHECK_INT(cwork_client_set_go_flavor(client, i % 2 ? CWORK_GO_UPSTREAM : CWORK_GO_FORK), 0);
        char *json = NULL;
        size_t len = 0;
        CHECK_INT(cwork_client_list_json(client, CWORK_SET_SCHEDULED, 1, NULL, &json, &len, NULL),
                  0);
        cwork_free(json);
    }
    for (int i = 0; i < ENQ_THREADS; i++)
        pthread_join(th[i], NULL);
    CHECK_INT(atomic_load(&enq_other_), 0);
    CHECK_INT(atomic_load(&enq_plain_ok_) + atomic_load(&enq_unique_ok_) +
                  atomic_load(&enq_too_big_),
              ENQ_THREADS * ENQ_PER_THREAD);
    /* What went through is in Redis, nothing else: each plain job written once, the
     * unique one once (later ones were duplicates) with its guard. */
    redisReply *r = tl_cmd(rc_, "LLEN %s:jobs:settings", ns_);
    long long plain = r->integer;
    freeReplyObject(r);
    r = tl_cmd(rc_, "LLEN %s:jobs:settings_u", ns_);
    long long unique = r->integer;
    freeReplyObject(r);
    CHECK_INT(plain, atomic_load(&enq_plain_ok_));
    CHECK_INT(unique, atomic_load(&enq_unique_ok_) > 0 ? 1 : 0);
    tl_do(rc_, "DEL %s:jobs:settings %s:jobs:settings_u %s:known_jobs", ns_, ns_, ns_);
    char *left = tl_ns_dump(rc_, ns_);
    /* Only the guard of the waiting unique job may remain (its value is "1"). */
    size_t lines = 0;
    for (const char *c = left; *c; c++)
        lines += *c == '\n';
    CHECK_INT(lines, unique);
    if (unique) CHECK(strstr(left, ":unique:settings_u:") && strstr(left, " string "));
    free(left);
    cwork_client_free(client);
    cwork_enqueuer_free(shared_enq_);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    RUN(library_threads_block_async_signals_and_leave_ours_alone);
    RUN(logger_is_swapped_whole_while_threads_log);
    RUN(enqueuer_and_client_settings_change_while_in_use);
    pool_test_teardown();
    return tl_finish();
}
