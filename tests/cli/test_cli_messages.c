/* What the cwork command says when something is wrong, end to end: an unreachable
 * Redis (one line, a hint, under 2 s), NOAUTH and WRONGPASS (the password options),
 * mistyped commands, actions and options ("did you mean"), and durations where seconds
 * are taken. Each case checks the exit status, stdout, stderr and the namespace. */
#include "cli_testutil.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

static redisContext *rc_;
static char ns_[64];

#define cmd(...) tl_do(rc_, __VA_ARGS__)

/* Whether something accepts connections on 127.0.0.1:port. */
static int listening(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    close(fd);
    return ok;
}

/* The run failed with exit 1, one line on stderr starting with want_start and holding
 * every string of want (NULL-terminated), nothing on stdout, in under 2 s. */
static void check_one_line(int line, int rc, const char *want_start, const char *const *want)
{
    if (rc != 1 || cli_out_[0] || cli_lines(cli_err_) != 1 ||
        strncmp(cli_err_, want_start, strlen(want_start)) != 0)
        tl_fail(__FILE__, line, "exit %d, stdout \"%s\", stderr \"%s\"", rc, cli_out_, cli_err_);
    for (size_t i = 0; want && want[i]; i++)
        if (!strstr(cli_err_, want[i]))
            tl_fail(__FILE__, line, "stderr lacks \"%s\": %s", want[i], cli_err_);
    if (cli_ms_ >= 2000) tl_fail(__FILE__, line, "took %lld ms", cli_ms_);
}

/* ---------------------------------------------------------------- unreachable Redis */

static void unreachable_redis_fails_in_one_line_within_2_s(void)
{
    static const char *const commands[][4] = {
        {"queues"},
        {"dead"},
        {"retry", "run", "--all"},
        {"queue", "clear", "x"},
        {"job", "x"},
        {"enqueue", "send_email"},
    };
    static const char *const hint[] = {"cannot connect to redis 127.0.0.1:1: Connection refused",
                                       "is redis-server running at ",
                                       "--redis URL or CWORK_REDIS_URL", NULL};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const char *argv[8];
        size_t n = 0;
        for (; n < 4 && commands[i][n]; n++)
            argv[n] = commands[i][n];
        argv[n++] = "--redis";
        argv[n++] = "redis://user:s3cr3tpw@127.0.0.1:1";
        argv[n] = NULL;
        int rc = cli_run(NULL, NULL, argv);
        check_one_line(__LINE__, rc, "cwork: cannot connect", hint);
        CHECK(strstr(cli_err_, "redis://user:xxxxx@127.0.0.1:1 (given with --redis)") != NULL);
        CHECK(strstr(cli_err_, "s3cr3tpw") == NULL);
    }
    /* The URL from the environment, and the default. */
    const char *env[] = {"CWORK_REDIS_URL=redis://127.0.0.1:1", NULL};
    int rc = cli_run(env, NULL, (const char *const[]){"queues", NULL});
    check_one_line(__LINE__, rc, "cwork: cannot connect", hint);
    CHECK(strstr(cli_err_, "redis://127.0.0.1:1 (from CWORK_REDIS_URL)") != NULL);
    /* A URL from the environment that cannot be used says where it came from. */
    const char *bad_env[] = {"CWORK_REDIS_URL=redis://:s3cr3tpw@h:bad", NULL};
    rc = cli_run(bad_env, NULL, (const char *const[]){"queues", NULL});
    CHECK_INT(rc, 2);
    CHECK_INT((long long)cli_lines(cli_err_), 1);
    CHECK(strncmp(cli_err_, "cwork: CWORK_REDIS_URL: ", 24) == 0);
    CHECK(strstr(cli_err_, "s3cr3tpw") == NULL);
    if (!listening(6379)) {
        const char *unset[] = {"CWORK_REDIS_URL", NULL};
        rc = cli_run(unset, NULL, (const char *const[]){"pools", NULL});
        check_one_line(__LINE__, rc, "cwork: cannot connect", NULL);
        CHECK(strstr(cli_err_, "redis://127.0.0.1:6379 (the default)") != NULL);
    }
    /* A server that accepts connections but does not answer (stopped). */
    tl_server s;
    if (tl_server_start(&s, 0) == 0) {
        kill(s.pid, SIGSTOP);
        rc = CLI_RUN("queues", "--redis", s.url);
        kill(s.pid, SIGCONT);
        check_one_line(__LINE__, rc, "cwork: ",
                       (const char *const[]){"timed out", "is redis-server running", NULL});
        tl_server_destroy(&s);
    }
    /* A database the server does not have: the hint is about the index, not the server. */
    char url[256];
    snprintf(url, sizeof url, "%s/99", tl_redis_url());
    rc = CLI_RUN("queues", "--redis", url);
    CHECK_INT(rc, 1);
    CHECK_INT(cli_lines(cli_err_), 1);
    CHECK(strncmp(cli_err_, "cwork: Redis at ", 16) == 0);
    CHECK(strstr(cli_err_, "has no database of that number") != NULL);
    CHECK(strstr(cli_err_, "is redis-server running") == NULL);
    /* A Unix socket that is not there. */
    rc = CLI_RUN("busy", "--redis", "unix:///nonexistent/redis.sock");
    check_one_line(__LINE__, rc, "cwork: cannot connect to redis unix:/nonexistent/redis.sock",
                   (const char *const[]){"is redis-server running", NULL});
}

/* ---------------------------------------------------------------- not Redis */

/* A tiny HTTP server in a child: each connection gets, after its first bytes, a 400
 * status line and is closed, as most HTTP servers answer a line they cannot parse.
 * Returns the child's pid and writes the port. */
static pid_t http_listener(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0)
        abort();
    *port = ntohs(sa.sin_port);
    pid_t pid = fork();
    if (pid == 0) {
        static const char answer[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
                                     "Connection: close\r\n\r\n";
        for (;;) {
            int c = accept(fd, NULL, NULL);
            if (c < 0) continue;
            char buf[4096];
            if (read(c, buf, sizeof buf) > 0 && write(c, answer, sizeof answer - 1) < 0) _exit(1);
            close(c);
        }
    }
    close(fd);
    return pid;
}

/* `cwork web`'s port (libmicrohttpd, which closes a connection whose request line it
 * cannot parse, without a word); its pid, or -1 when it would not start. */
static pid_t web_listener(int *port)
{
    int out[2];
    if (pipe(out) != 0) abort();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        const char *cli = getenv("CWORK_CLI");
        if (!cli) _exit(127);
        execl(cli, "cwork", "web", "--redis", tl_redis_url(), "--ns", ns_, "--listen",
              "127.0.0.1:0", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    char line[256] = "";
    ssize_t n = read(out[0], line, sizeof line - 1);
    close(out[0]);
    line[n > 0 ? n : 0] = '\0';
    if (sscanf(line, "http://127.0.0.1:%d/", port) != 1) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

/* A port that speaks HTTP gets a hint about HTTP: not TLS, not "is redis-server
 * running"; over rediss:// too (its error page is no TLS record). */
static void an_http_port_is_named_as_one(void)
{
    tl_unique_ns("msh", ns_, sizeof ns_);
    int ports[2];
    pid_t pids[2] = {http_listener(&ports[0]), web_listener(&ports[1])};
    CHECK(pids[1] > 0);
    static const char *const want[] = {"answered like an HTTP server, not Redis",
                                       "--redis URL or CWORK_REDIS_URL", NULL};
    for (size_t i = 0; i < 2; i++) {
        if (pids[i] <= 0) continue;
        for (int tls = 0; tls < 2; tls++) {
            char url[64];
            snprintf(url, sizeof url, "%s://127.0.0.1:%d", tls ? "rediss" : "redis", ports[i]);
            int rc = CLI_RUN("queues", "--redis", url);
            /* one line, exit 1; how long it takes is unreachable_redis_...'s business
             * (a TLS handshake under ASan on a loaded machine is slow) */
            CHECK_INT(rc, 1);
            CHECK_STR(cli_out_, "");
            CHECK_INT(cli_lines(cli_err_), 1);
            CHECK(strncmp(cli_err_, "cwork: the port of ", 19) == 0);
            for (size_t k = 0; want[k]; k++)
                CHECK(strstr(cli_err_, want[k]) != NULL);
            CHECK(strstr(cli_err_, url) != NULL);
            CHECK(strstr(cli_err_, "speaks TLS") == NULL &&
                  strstr(cli_err_, "redis:// port") == NULL);
            CHECK(strstr(cli_err_, "is redis-server running") == NULL);
        }
        kill(pids[i], SIGTERM);
        waitpid(pids[i], NULL, 0);
    }
    char *d = tl_ns_dump(rc_, ns_); /* nothing written: cwork web only reads */
    CHECK_STR(d, "");
    free(d);
}

/* ---------------------------------------------------------------- passwords */

/* /proc/PID/cmdline with its NULs as spaces, once it is cwork's (after the exec) and no
 * longer holds `secret`, or after 5 s; "" when it cannot be read. */
static void cmdline_without(pid_t pid, const char *secret, char *out, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    for (int i = 0; i < 500; i++) {
        out[0] = '\0';
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(out, 1, size - 1, f) : 0;
        if (f) fclose(f);
        for (size_t k = 0; k < n; k++)
            if (out[k] == '\0') out[k] = ' ';
        out[n] = '\0';
        if (n && strstr(out, " work ") && !strstr(out, secret)) return;
        tl_sleep_ms(10);
    }
}

/* A password given with --redis (the URL's, and a sentinel's in the query) leaves the
 * command line that ps shows while cwork keeps using it. */
static void passwords_leave_the_command_line(void)
{
    tl_server s;
    if (tl_server_start(&s, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start redis-server");
        return;
    }
    tl_unique_ns("msgps", ns_, sizeof ns_);
    redisContext *c = redisConnect("127.0.0.1", s.port);
    tl_do(c, "CONFIG SET requirepass Pa55word");
    char url[128];
    snprintf(url, sizeof url, "redis://:Pa55word@127.0.0.1:%d/0?x=1", s.port);
    const char *cli = getenv("CWORK_CLI");
    if (!cli) {
        tl_fail(__FILE__, __LINE__, "CWORK_CLI is not set (ctest sets it)");
        redisFree(c);
        tl_server_destroy(&s);
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0), dup2(null, 1), dup2(null, 2);
        execl(cli, cli, "work", "--redis", url, "--ns", ns_, "--job", "ps_job=true", (char *)NULL);
        _exit(127);
    }
    char line[1024];
    cmdline_without(pid, "Pa55word", line, sizeof line);
    if (!strstr(line, " --redis redis://:xxxxx@127.0.0.1:") || strstr(line, "Pa55word"))
        tl_fail(__FILE__, __LINE__, "cmdline: %s", line);
    /* And it still works with the password it was given: a job runs. */
    tl_do(c, "AUTH Pa55word");
    tl_do(c, "LPUSH %s:jobs:ps_job {\"name\":\"ps_job\",\"id\":\"ps1\",\"t\":1}", ns_);
    long long left = 1;
    for (int i = 0; i < 500 && left; i++) {
        redisReply *r = tl_cmd(c, "EXISTS %s:jobs:ps_job", ns_);
        left = r->integer;
        freeReplyObject(r);
        if (left) tl_sleep_ms(10);
    }
    CHECK_INT(left, 0);
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    redisFree(c);
    tl_server_destroy(&s);
}

static void auth_failures_name_the_password_options(void)
{
    tl_server s;
    if (tl_server_start(&s, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start redis-server");
        return;
    }
    char url[128], wrong[128];
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", s.port, tv);
    redisReply *r = c ? redisCommand(c, "CONFIG SET requirepass Pa55word") : NULL;
    CHECK(r && r->type == REDIS_REPLY_STATUS);
    if (r) freeReplyObject(r);
    if (c) redisFree(c);

    /* No password: NOAUTH. */
    int rc = CLI_RUN("queues", "--redis", s.url);
    check_one_line(__LINE__, rc, "cwork: Redis at ",
                   (const char *const[]){"wants a password (NOAUTH)", "redis://:PASSWORD@HOST:PORT",
                                         "--redis or CWORK_REDIS_URL", "CWORK_REDIS_PASSWORD",
                                         NULL});
    /* A wrong one, in the URL and in CWORK_REDIS_PASSWORD: WRONGPASS, never printed. */
    snprintf(wrong, sizeof wrong, "redis://:N0tThat0ne@127.0.0.1:%d", s.port);
    rc = CLI_RUN("dead", "--redis", wrong);
    static const char *const wrongpass[] = {"refused the user name or password (WRONGPASS)",
                                            "CWORK_REDIS_URL", "CWORK_REDIS_PASSWORD", NULL};
    check_one_line(__LINE__, rc, "cwork: Redis at ", wrongpass);
    CHECK(strstr(cli_err_, "N0tThat0ne") == NULL);
    const char *env[] = {"CWORK_REDIS_PASSWORD=N0tThat0ne", NULL};
    rc = cli_run(env, NULL, (const char *const[]){"enqueue", "--redis", s.url, "x", NULL});
    check_one_line(__LINE__, rc, "cwork: Redis at ", wrongpass);
    CHECK(strstr(cli_err_, "N0tThat0ne") == NULL);
    /* The right one works: in the URL, or in CWORK_REDIS_PASSWORD (which the command
     * reads and passes on; the URL's wins). */
    snprintf(url, sizeof url, "redis://:Pa55word@127.0.0.1:%d", s.port);
    CHECK_INT(CLI_RUN("queues", "--redis", url), 0);
    const char *right[] = {"CWORK_REDIS_PASSWORD=Pa55word", NULL};
    CHECK_INT(cli_run(right, NULL, (const char *const[]){"queues", "--redis", s.url, NULL}), 0);
    CHECK_INT(cli_run(right, NULL, (const char *const[]){"queues", "--redis", wrong, NULL}), 1);
    CHECK(strstr(cli_err_, "WRONGPASS") != NULL);
    const char *right_url[] = {"CWORK_REDIS_PASSWORD=Pa55word", NULL, NULL};
    char url_env[160];
    snprintf(url_env, sizeof url_env, "CWORK_REDIS_URL=%s", s.url);
    right_url[1] = url_env;
    CHECK_INT(cli_run(right_url, NULL, (const char *const[]){"queues", NULL}), 0);
    tl_server_destroy(&s);

    /* A password for a server without one. */
    snprintf(url, sizeof url, "redis://:Extra@%s", tl_redis_url() + strlen("redis://"));
    rc = CLI_RUN("queues", "--redis", url);
    check_one_line(__LINE__, rc, "cwork: Redis at ",
                   (const char *const[]){"has no password, but one was given", NULL});
    CHECK(strstr(cli_err_, "Extra") == NULL);
}

/* ---------------------------------------------------------------- usage errors */

#define CASE_WORDS 8

/* Each case: the words of a command line, NULL, then the start of what it must print on
 * stderr (one line). Run with --redis and --ns added (a mistyped command is reported
 * before its options are read), it must exit 2, print nothing on stdout and write
 * nothing to the namespace. */
static void check_usage_cases(int line, const char *const cases[][CASE_WORDS], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *argv[CASE_WORDS + 5];
        size_t k = 0;
        for (; cases[i][k]; k++)
            argv[k] = cases[i][k];
        const char *want = cases[i][k + 1];
        argv[k++] = "--redis";
        argv[k++] = tl_redis_url();
        argv[k++] = "--ns";
        argv[k++] = ns_;
        argv[k] = NULL;
        int rc = cli_run(NULL, NULL, argv);
        if (rc != 2 || cli_out_[0] || strncmp(cli_err_, want, strlen(want)) != 0 ||
            cli_lines(cli_err_) != 1)
            tl_fail(__FILE__, line, "case %zu (%s): exit %d, stdout \"%s\", stderr \"%s\"", i,
                    argv[0], rc, cli_out_, cli_err_);
    }
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, "");
    free(dump);
}

/* ---------------------------------------------------------------- did you mean */

static void typos_get_a_suggestion_and_exit_2(void)
{
    tl_unique_ns("msg", ns_, sizeof ns_);
    static const char *const cases[][CASE_WORDS] = {
        /* argv..., then the message expected on stderr */
        {"retyr", NULL,
         "cwork: unknown command \"retyr\"; did you mean retry? (see cwork --help)\n"},
        {"enqeue", NULL, "cwork: unknown command \"enqeue\"; did you mean enqueue?"},
        {"--hepl", NULL, "cwork: unknown command \"--hepl\"; did you mean --help?"},
        {"frobnicate", NULL, "cwork: unknown command \"frobnicate\" (see cwork --help)\n"},
        {"dead", "--jsno", NULL,
         "cwork dead: unknown option --jsno; did you mean --json? (see cwork dead --help)\n"},
        {"dead", "retyr", "x", NULL,
         "cwork dead: unexpected argument \"retyr\"; did you mean retry? (see cwork dead "
         "--help)\n"},
        {"scheduled", "rnu", "x", NULL,
         "cwork scheduled: unexpected argument \"rnu\"; did you mean run?"},
        {"queue", "clera", "x", NULL,
         "cwork queue: unexpected argument \"clera\"; did you mean clear?"},
        {"queue", "delte", "x", "y", NULL,
         "cwork queue: unexpected argument \"delte\"; did you mean delete?"},
        {"queue", NULL,
         "cwork queue: what should happen to the queue? (cwork queue clear NAME, cwork queue "
         "delete NAME ID)"},
        {"retry", "run", "--al", NULL, "cwork retry run: unknown option --al; did you mean --all?"},
        {"queues", "--redsi", "x", NULL,
         "cwork queues: unknown option --redsi; did you mean --redis?"},
        {"enqueue", "--bluk", NULL,
         "cwork enqueue: unknown option --bluk; did you mean --bulk? (see cwork enqueue --help)\n"},
        {"enqueue", "--quiet", "x", NULL, "cwork enqueue: --quiet goes with --bulk"},
        {"work", "--job", "a=true", "--timout", "5", NULL,
         "cwork work: unknown option --timout; did you mean --timeout?"},
        {"web", "--lisen", "x", NULL, "cwork web: unknown option --lisen; did you mean --listen?"},
        {"demo", "--durration", "5", NULL,
         "cwork demo: unknown option --durration; did you mean --duration?"},
        {"demo", "--colour", NULL, "cwork demo: unknown option --colour (see cwork demo --help)\n"},
    };
    check_usage_cases(__LINE__, cases, sizeof cases / sizeof cases[0]);
}

/* A job name that is not in known_jobs: a warning with the closest known one. */
static void unknown_job_names_get_a_suggestion(void)
{
    tl_unique_ns("msgn", ns_, sizeof ns_);
    cmd("SADD %s:known_jobs send_email resize_image", ns_);
    int rc = CLI_RUN("pause", "--redis", tl_redis_url(), "--ns", ns_, "sned_email");
    CHECK_INT(rc, 0);
    CHECK_STR(cli_err_, "cwork pause: warning: \"sned_email\" is not in known_jobs (a typo? did "
                        "you mean send_email?); paused anyway\n");
    rc = CLI_RUN("queue", "clear", "--redis", tl_redis_url(), "--ns", ns_, "zzz");
    CHECK_INT(rc, 0);
    CHECK_STR(cli_out_, "Deleted 0 waiting jobs from queue zzz.\n");
    CHECK_STR(cli_err_, "cwork queue clear: warning: \"zzz\" is not in known_jobs (a typo?); "
                        "nothing to clear\n");
    char *dump = tl_ns_dump(rc_, ns_);
    snprintf(cli_out_, sizeof cli_out_,
             "%s:jobs:sned_email:paused string 1\n%s:known_jobs set resize_image | send_email\n",
             ns_, ns_);
    CHECK_STR(dump, cli_out_);
    free(dump);
    tl_ns_delete(rc_, ns_);
}

/* ---------------------------------------------------------------- durations */

static long long zscore_of_only_member(const char *suffix)
{
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:%s 0 -1 WITHSCORES", ns_, suffix);
    long long v = r->elements == 2 ? atoll(r->element[1]->str) : -1;
    CHECK_INT(r->elements, 2);
    freeReplyObject(r);
    return v;
}

static void durations_are_taken_where_seconds_are(void)
{
    tl_unique_ns("msgd", ns_, sizeof ns_);
    const char *r = tl_redis_url();
    long long before = (long long)time(NULL);
    CHECK_INT(CLI_RUN("enqueue", "--redis", r, "--ns", ns_, "--in", "1h30m", "report"), 0);
    long long at = zscore_of_only_member("scheduled");
    CHECK(at >= before + 5400 && at <= (long long)time(NULL) + 5400);
    tl_ns_delete(rc_, ns_);
    CHECK_INT(CLI_RUN("enqueue", "--redis", r, "--ns", ns_, "--in", "90", "report"), 0);
    at = zscore_of_only_member("scheduled");
    CHECK(at >= before + 90 && at <= (long long)time(NULL) + 90);
    tl_ns_delete(rc_, ns_);

    /* dead trim --older-than 1h30m: only the job that died two hours ago goes */
    long long now = (long long)time(NULL);
    cmd("ZADD %s:dead %lld {\"name\":\"a\",\"id\":\"old\",\"t\":1}", ns_, now - 7200);
    cmd("ZADD %s:dead %lld {\"name\":\"a\",\"id\":\"new\",\"t\":1}", ns_, now - 3600);
    CHECK_INT(CLI_RUN("dead", "trim", "--redis", r, "--ns", ns_, "--older-than", "1h30m"), 0);
    CHECK_STR(cli_out_, "Removed 1 dead job.\n");
    char *dump = tl_ns_dump(rc_, ns_);
    snprintf(cli_out_, sizeof cli_out_,
             "%s:dead zset {\"name\":\"a\",\"id\":\"new\",\"t\":1}=%lld\n", ns_, now - 3600);
    CHECK_STR(dump, cli_out_);
    free(dump);
    tl_ns_delete(rc_, ns_);

    /* Refused durations: exit 2, nothing written. */
    static const char *const bad[][CASE_WORDS] = {
        {"enqueue", "--in", "1.5s", "x", NULL,
         "cwork enqueue: --in needs whole seconds or a duration"},
        {"enqueue", "--in", "soon", "x", NULL,
         "cwork enqueue: --in needs whole seconds or a duration"},
        {"enqueue", "--in", "-5", "x", NULL,
         "cwork enqueue: --in needs whole seconds or a duration like 90s, 15m, 1h or 7d (not "
         "negative"},
        {"dead", "--page", "0", NULL, "cwork dead: --page needs a page number counted from 1"},
        {"dead", "trim", "--older-than", "1h30", NULL, "cwork dead trim: --older-than needs"},
        {"work", "--job", "a=true", "--timeout", "-5", NULL,
         "cwork work: --timeout needs a positive duration"},
        {"work", "--grace", "forever", "--job", "a=true", NULL,
         "cwork work: --grace needs a duration"},
        {"work", "--dead-check", "2d", "--job", "a=true", NULL,
         "cwork work: --dead-check needs whole seconds from 1 to 86400"},
        {"demo", "--duration", "0", NULL, "cwork demo: --duration needs"},
    };
    check_usage_cases(__LINE__, bad, sizeof bad / sizeof bad[0]);
}

/* Negative durations and page 0 in the admin commands and cwork stats: exit 2, one line
 * that names the option and echoes the value, nothing written. */
static void negative_durations_and_page_zero_name_the_option(void)
{
    tl_unique_ns("msgneg", ns_, sizeof ns_);
#define PAGE_MSG(cmd, v)                                                                           \
    "cwork " cmd ": --page needs a page number counted from 1 (1, 2, ...), not \"" v "\"\n"
#define OLDER_MSG(v)                                                                               \
    "cwork dead trim: --older-than needs seconds or a duration like 7d or 12h (not negative), "    \
    "not \"" v "\"\n"
#define WATCH_MSG(v)                                                                               \
    "cwork stats: --watch takes a duration of at least 0.1s (2, 5s, 1m; not negative), not \"" v   \
    "\"\n"
    static const char *const bad[][CASE_WORDS] = {
        {"dead", "--page", "0", NULL, PAGE_MSG("dead", "0")},
        {"dead", "--page", "-1", NULL, PAGE_MSG("dead", "-1")},
        {"retry", "--page=0", NULL, PAGE_MSG("retry", "0")},
        {"scheduled", "--page", "0", "--no-periodic", NULL, PAGE_MSG("scheduled", "0")},
        {"dead", "--grep", "x", "--page", "0", NULL, PAGE_MSG("dead", "0")},
        {"dead", "trim", "--older-than", "-5", NULL, OLDER_MSG("-5")},
        {"dead", "trim", "--older-than=-1d", NULL, OLDER_MSG("-1d")},
        {"dead", "trim", "--older-than", "-1h30m", "--keep", "3", NULL, OLDER_MSG("-1h30m")},
        {"dead", "trim", "--keep", "-1", NULL,
         "cwork dead trim: --keep needs a number of jobs (0 or more), not \"-1\"\n"},
        {"stats", "--watch", "-1", NULL, WATCH_MSG("-1")},
        {"stats", "--watch=-2s", NULL, WATCH_MSG("-2s")},
        {"stats", "--json", "--watch", "-5m", NULL, WATCH_MSG("-5m")},
        {"stats", "--days", "-1", NULL,
         "cwork stats: --days takes a whole number from 1 to 366, not \"-1\"\n"},
        {"stats", "--days", "0", NULL,
         "cwork stats: --days takes a whole number from 1 to 366, not \"0\"\n"},
        {"stats", "--sample", "-3", NULL,
         "cwork stats: --sample takes a whole number from 1 to 1000000, not \"-3\"\n"},
    };
#undef PAGE_MSG
#undef OLDER_MSG
#undef WATCH_MSG
    check_usage_cases(__LINE__, bad, sizeof bad / sizeof bad[0]);
}

/* cwork work and cwork demo take durations too: a demo of 2s stops by itself. */
static void demo_duration_in_seconds_suffix(void)
{
    tl_unique_ns("msgdemo", ns_, sizeof ns_);
    long long t0 = tl_now_ms();
    int rc = CLI_RUN("demo", "--redis", tl_redis_url(), "--ns", ns_, "--duration", "2s", "--no-web",
                     "--rate", "20");
    CHECK_INT(rc, 0);
    CHECK(tl_now_ms() - t0 >= 2000);
    CHECK(strstr(cli_err_, "jobs done") != NULL);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(unreachable_redis_fails_in_one_line_within_2_s);
    RUN(an_http_port_is_named_as_one);
    RUN(auth_failures_name_the_password_options);
    RUN(passwords_leave_the_command_line);
    RUN(typos_get_a_suggestion_and_exit_2);
    RUN(unknown_job_names_get_a_suggestion);
    RUN(durations_are_taken_where_seconds_are);
    RUN(negative_durations_and_page_zero_name_the_option);
    RUN(demo_duration_in_seconds_suffix);
    redisFree(rc_);
    return tl_finish();
}
