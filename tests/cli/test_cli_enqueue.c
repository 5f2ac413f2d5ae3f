/* The `cwork enqueue` command end to end: stdout, stderr, exit codes and what it wrote
 * to Redis (or that it wrote nothing). */
#include "cwork.h"
#include "testlib.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static redisContext *rc_;
static char ns_[64];
static char out_[65536], errout_[65536];

/* Runs the CLI with argv (NULL-terminated) and stdin_text; captures stdout/stderr. */
static int run_cli(const char *stdin_text, const char *const *argv)
{
    const char *cli = getenv("CWORK_CLI");
    if (!cli) {
        fprintf(stderr, "CWORK_CLI is not set (ctest sets it)\n");
        exit(1);
    }
    char in_path[] = "/tmp/cwt-cli-in-XXXXXX", out_path[] = "/tmp/cwt-cli-out-XXXXXX",
         err_path[] = "/tmp/cwt-cli-err-XXXXXX";
    int in = mkstemp(in_path), out = mkstemp(out_path), er = mkstemp(err_path);
    if (stdin_text && write(in, stdin_text, strlen(stdin_text)) < 0) abort();
    lseek(in, 0, SEEK_SET);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in, 0);
        dup2(out, 1);
        dup2(er, 2);
        const char *args[32];
        size_t n = 0;
        args[n++] = cli;
        for (; argv[n - 1] && n < 31; n++)
            args[n] = argv[n - 1];
        args[n] = NULL;
        execv(cli, (char *const *)args);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    ssize_t k;
    lseek(out, 0, SEEK_SET);
    k = read(out, out_, sizeof out_ - 1);
    out_[k > 0 ? k : 0] = '\0';
    lseek(er, 0, SEEK_SET);
    k = read(er, errout_, sizeof errout_ - 1);
    errout_[k > 0 ? k : 0] = '\0';
    close(in), close(out), close(er);
    unlink(in_path), unlink(out_path), unlink(err_path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void single_job_prints_its_id(void)
{
    tl_unique_ns("cli", ns_, sizeof ns_);
    const char *argv[] = {"enqueue",
                          "--redis",
                          tl_redis_url(),
                          "--ns",
                          ns_,
                          "send_email",
                          "{\"to\":\"a@b.c\",\"n\":3}",
                          NULL};
    CHECK_INT(run_cli(NULL, argv), 0);
    CHECK_INT(strlen(out_), 25); /* 24 hex + newline */
    redisReply *r = tl_cmd(rc_, "LINDEX %s:jobs:send_email 0", ns_);
    CHECK(r->type == REDIS_REPLY_STRING && strstr(r->str, "\"args\":{\"n\":3,\"to\":\"a@b.c\"}"));
    out_[24] = '\0';
    CHECK(strstr(r->str, out_) != NULL);
    freeReplyObject(r);
    /* Go's single-dash spelling, default args {} */
    const char *go_style[] = {"enqueue", "-redis", tl_redis_url(), "-ns", ns_, "noargs", NULL};
    CHECK_INT(run_cli(NULL, go_style), 0);
    r = tl_cmd(rc_, "LINDEX %s:jobs:noargs 0", ns_);
    CHECK(r->type == REDIS_REPLY_STRING && strstr(r->str, "\"args\":{}") != NULL);
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

/* A job no pool has registered is enqueued (exit 0, its id on stdout) with a warning on
 * stderr, naming the closest registered name when one is near; a served name gets none.
 * The pools are what their heartbeats list (PROTOCOL §6), written here as a pool would. */
static void a_type_no_pool_runs_is_enqueued_with_a_warning(void)
{
    tl_unique_ns("clih", ns_, sizeof ns_);
    const char *typo[] = {"enqueue", "--redis", tl_redis_url(), "--ns", ns_, "slwo", "{}", NULL};
    CHECK_INT(run_cli(NULL, typo), 0);
    CHECK_INT(strlen(out_), 25);
    CHECK(strstr(errout_, "warning: no worker pool runs in namespace") != NULL);

    tl_do(rc_, "SADD %s:worker_pools 0123456789abcdef01234567", ns_);
    tl_do(rc_,
          "HSET %s:worker_pools:0123456789abcdef01234567 heartbeat_at %lld job_names mail,slow "
          "concurrency 10",
          ns_, (long long)time(NULL));
    CHECK_INT(run_cli(NULL, typo), 0);
    CHECK_INT(strlen(out_), 25);
    CHECK_STR(errout_, "cwork enqueue: warning: no worker pool has registered slwo; did you mean "
                       "slow? (the job waits until a pool registers slwo)\n");
    const char *far[] = {"enqueue", "--redis", tl_redis_url(), "--ns", ns_, "report", "{}", NULL};
    CHECK_INT(run_cli(NULL, far), 0);
    CHECK(strstr(errout_, "no worker pool has registered report: the job waits") != NULL);
    const char *served[] = {"enqueue", "--redis", tl_redis_url(), "--ns", ns_, "slow", "{}", NULL};
    CHECK_INT(run_cli(NULL, served), 0);
    CHECK_STR(errout_, "");
    /* every job was written all the same */
    redisReply *r = tl_cmd(rc_, "LLEN %s:jobs:slwo", ns_);
    CHECK_INT(r->integer, 2);
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

static void unique_duplicate_exits_3_and_delayed_goes_to_scheduled(void)
{
    tl_unique_ns("cliu", ns_, sizeof ns_);
    const char *argv[] = {"enqueue", "--redis", tl_redis_url(), "--ns", ns_, "--unique", "--in",
                          "60",      "u",       "{\"k\":1}",    NULL};
    CHECK_INT(run_cli(NULL, argv), 0);
    CHECK_INT(run_cli(NULL, argv), 3);
    CHECK_STR(out_, "");
    CHECK(strstr(errout_, "already") != NULL);
    redisReply *r = tl_cmd(rc_, "ZCARD %s:scheduled", ns_);
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

/* A namespace dump with TTLs left out: the CLI runs take seconds, in which TTLs tick. */
static char *dump_without_ttls(void)
{
    char *d = tl_ns_dump(rc_, ns_), *o = d;
    for (const char *p = d; *p;) {
        if (strncmp(p, " ttl=", 5) == 0) {
            p += 5;
            while (*p >= '0' && *p <= '9')
                p++;
            continue;
        }
        *o++ = *p++;
    }
    *o = '\0';
    return d;
}

/* The one line of <ns>:<suffix> (list element 0 or string value) as a string. */
static char *read_key(const char *cmd_fmt, const char *suffix)
{
    char k[256];
    snprintf(k, sizeof k, "%s:%s", ns_, suffix);
    redisReply *r = tl_cmd(rc_, cmd_fmt, k, strlen(k));
    char *v = strdup(r->type == REDIS_REPLY_STRING ? r->str : "");
    freeReplyObject(r);
    return v;
}

/* --go-flavor / CWORK_GO_FLAVOR decide whether unique jobs carry unique_key; --unique-key
 * is upstream's EnqueueUniqueByKey: a duplicate replaces the waiting job's args. */
static void go_flavor_and_unique_key(void)
{
    tl_unique_ns("cliflv", ns_, sizeof ns_);
    const char *up[] = {"enqueue",     "--redis",  tl_redis_url(), "--ns", ns_,
                        "--go-flavor", "upstream", "--unique",     "a",    "{\"k\":1}",
                        NULL};
    CHECK_INT(run_cli(NULL, up), 0);
    char *job = read_key("LINDEX %b 0", "jobs:a");
    char want[512];
    snprintf(want, sizeof want, "\"unique\":true,\"unique_key\":\"%s:unique:a:{\\\"k\\\":1}\\n\"}",
             ns_);
    CHECK(strstr(job, want) != NULL);
    free(job);
    setenv("CWORK_GO_FLAVOR", "upstream", 1);
    const char *env_up[] = {"enqueue", "--redis", tl_redis_url(), "--ns", ns_, "--unique",
                            "b",       NULL};
    CHECK_INT(run_cli(NULL, env_up), 0);
    job = read_key("LINDEX %b 0", "jobs:b");
    CHECK(strstr(job, "\"unique_key\"") != NULL);
    free(job);
    const char *opt_fork[] = {"enqueue",     "--redis", tl_redis_url(), "--ns", ns_,
                              "--go-flavor", "fork",    "--unique",     "c",    NULL};
    CHECK_INT(run_cli(NULL, opt_fork), 0); /* the option wins over the environment */
    job = read_key("LINDEX %b 0", "jobs:c");
    CHECK(strstr(job, "\"unique_key\"") == NULL && strstr(job, "\"unique\":true") != NULL);
    free(job);
    setenv("CWORK_GO_FLAVOR", "Upstream", 1);
    CHECK_INT(run_cli(NULL, env_up), 2);
    CHECK(strstr(errout_, "CWORK_GO_FLAVOR") != NULL);
    unsetenv("CWORK_GO_FLAVOR");
    const char *bad[] = {"enqueue", "--redis", tl_redis_url(), "--ns", ns_, "--go-flavor", "old",
                         "d",       NULL};
    CHECK_INT(run_cli(NULL, bad), 2);
    CHECK(strstr(errout_, "fork or upstream") != NULL);

    /* ByKey: the second enqueue prints the id that will run and exits 3. */
    const char *first[] = {
        "enqueue",      "--redis", tl_redis_url(),      "--ns", ns_, "--unique-key",
        "{\"acct\":7}", "sync",    "{\"v\":\"first\"}", NULL};
    const char *second[] = {
        "enqueue",      "--redis", tl_redis_url(),       "--ns", ns_, "--unique-key",
        "{\"acct\":7}", "sync",    "{\"v\":\"second\"}", NULL};
    CHECK_INT(run_cli(NULL, first), 0);
    char id1[32];
    snprintf(id1, sizeof id1, "%.24s", out_);
    CHECK_INT(run_cli(NULL, second), 3);
    CHECK_INT(strlen(out_), 25);
    char id2[32];
    snprintf(id2, sizeof id2, "%.24s", out_);
    CHECK(strcmp(id1, id2) != 0);
    CHECK(strstr(errout_, "will run") != NULL);
    char guard_suffix[64];
    snprintf(guard_suffix, sizeof guard_suffix, "unique:sync:{\"acct\":7}\n");
    char *guard = read_key("GET %b", guard_suffix);
    CHECK(strstr(guard, id2) && strstr(guard, "\"args\":{\"v\":\"second\"}"));
    free(guard);
    job = read_key("LINDEX %b 0", "jobs:sync");
    CHECK(strstr(job, id1) && strstr(job, "\"args\":{\"v\":\"first\"}"));
    free(job);

    /* Refused: both uniqueness options, a key that is no object, --bulk with a key. */
    char *before = dump_without_ttls();
    const char *both[] = {"enqueue",  "--redis",      tl_redis_url(), "--ns", ns_,
                          "--unique", "--unique-key", "{}",           "x",    NULL};
    const char *notobj[] = {
        "enqueue", "--redis", tl_redis_url(), "--ns", ns_, "--unique-key", "[1]", "x", NULL};
    const char *bulk[] = {"enqueue", "--redis",      tl_redis_url(), "--ns", ns_,
                          "--bulk",  "--unique-key", "{}",           NULL};
    CHECK_INT(run_cli(NULL, both), 2);
    CHECK_INT(run_cli(NULL, notobj), 2);
    CHECK(strstr(errout_, "--unique-key") != NULL);
    CHECK_INT(run_cli("", bulk), 2);
    char *after = dump_without_ttls();
    CHECK_STR(after, before);
    free(before);
    free(after);
    tl_ns_delete(rc_, ns_);
}

/* --go-json / CWORK_GO_JSON: the guard a Go before 1.22 looks for (\u0008), so that a
 * second enqueue of the same args from such a Go, or from cwork, is a duplicate. */
static void go_json_spells_the_guard(void)
{
    tl_unique_ns("cligj", ns_, sizeof ns_);
    const char *old_go[] = {"enqueue",   "--redis", tl_redis_url(), "--ns", ns_,
                            "--go-json", "go1.21",  "--unique",     "ctl",  "{\"s\":\"a\\bb\"}",
                            NULL};
    CHECK_INT(run_cli(NULL, old_go), 0);
    char guard[160];
    snprintf(guard, sizeof guard, "%s:unique:ctl:{\"s\":\"a\\u0008b\"}\n", ns_);
    redisReply *r = tl_cmd(rc_, "GET %b", guard, strlen(guard));
    CHECK(r->type == REDIS_REPLY_STRING && strcmp(r->str, "1") == 0);
    freeReplyObject(r);
    char *job = read_key("LINDEX %b 0", "jobs:ctl");
    CHECK(strstr(job, "\"args\":{\"s\":\"a\\u0008b\"},\"unique\":true}") != NULL);
    free(job);
    /* the default spelling (go1.22) finds it too: exit 3, nothing written */
    const char *plain[] = {"enqueue",  "--redis", tl_redis_url(),      "--ns", ns_,
                           "--unique", "ctl",     "{\"s\":\"a\\bb\"}", NULL};
    CHECK_INT(run_cli(NULL, plain), 3);
    r = tl_cmd(rc_, "LLEN %s:jobs:ctl", ns_);
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);
    /* from the environment; a bad value is refused, naming where it came from */
    tl_ns_delete(rc_, ns_);
    setenv("CWORK_GO_JSON", "go1.21", 1);
    CHECK_INT(run_cli(NULL, plain), 0);
    r = tl_cmd(rc_, "EXISTS %b", guard, strlen(guard));
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);
    setenv("CWORK_GO_JSON", "1.21", 1);
    CHECK_INT(run_cli(NULL, plain), 2);
    CHECK(strstr(errout_, "CWORK_GO_JSON") != NULL);
    unsetenv("CWORK_GO_JSON");
    const char *bad[] = {"enqueue",   "--redis", tl_redis_url(), "--ns", ns_,
                         "--go-json", "go1.20",  "ctl",          NULL};
    CHECK_INT(run_cli(NULL, bad), 2);
    CHECK(strstr(errout_, "go1.22 or go1.21") != NULL);
    /* the whole namespace: the one job (Go 1.21's bytes), its name, its guard */
    job = read_key("LINDEX %b 0", "jobs:ctl");
    CHECK(strstr(job, "\"args\":{\"s\":\"a\\u0008b\"},\"unique\":true}") != NULL);
    char job_shown[512], guard_shown[256], want[1024];
    size_t o = 0;
    for (const char *p = job; *p && o + 5 < sizeof job_shown; p++)
        o += (size_t)(*p == '\\' ? snprintf(job_shown + o, 5, "\\x5c") : (job_shown[o] = *p, 1));
    job_shown[o] = '\0';
    snprintf(guard_shown, sizeof guard_shown, "%s:unique:ctl:{\"s\":\"a\\x5cu0008b\"}\\x0a", ns_);
    snprintf(want, sizeof want, "%s:jobs:ctl list %s\n%s:known_jobs set ctl\n%s string 1\n", ns_,
             job_shown, ns_, guard_shown);
    char *d = dump_without_ttls();
    CHECK_STR(d, want);
    free(d);
    free(job);
    tl_ns_delete(rc_, ns_);
}

static void bad_input_exits_2_and_writes_nothing(void)
{
    tl_unique_ns("clibad", ns_, sizeof ns_);
    const char *cases[][2] = {
        {"ok", "{bad json"}, {"ok", "[1,2]"}, {"ok", "null"}, {"bad,name", "{}"}, {"x:lock", "{}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[] = {"enqueue", "--redis",   tl_redis_url(), "--ns",
                              ns_,       cases[i][0], cases[i][1],    NULL};
        if (run_cli(NULL, argv) != 2)
            tl_fail(__FILE__, __LINE__, "case %zu did not exit 2: %s", i, errout_);
        CHECK(errout_[0] != '\0');
    }
    const char *unknown[] = {"enqueue", "--bogus", "x", NULL};
    CHECK_INT(run_cli(NULL, unknown), 2);
    /* Go's flag package reads -unique=false as false: refuse rather than enable it. */
    const char *valued[] = {"enqueue",        "--redis", tl_redis_url(), "--ns", ns_,
                            "--unique=false", "ok",      "{}",           NULL};
    CHECK_INT(run_cli(NULL, valued), 2);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, "");
    free(dump);
}

/* One bad line anywhere: every bad line is reported and nothing is written, exit 2 (the
 * help's "bad input, nothing written"), so that a fixed file can be sent again without
 * duplicating the good lines. Without the bad lines, everything is written. */
static void bulk_reads_ndjson_and_reports_bad_lines(void)
{
    tl_unique_ns("clibulk", ns_, sizeof ns_);
    const char *good = "{\"name\":\"a\",\"args\":{\"i\":1}}\n"
                       "{\"name\":\"a\"}\n"
                       "\n"
                       "{\"name\":\"b\",\"in\":30}\n"
                       "{\"name\":\"c\",\"unique\":true,\"args\":{\"x\":\"y\"}}\n"
                       "{\"name\":\"c\",\"unique\":true,\"args\":{\"x\":\"y\"}}\n";
    const char *bad = "not json\n"
                      "{\"args\":{}}\n"
                      "{\"name\":\"d\",\"args\":[1]}\n"
                      "{\"name\":\"bad,name\"}\n"
                      "{\"name\":\"e\",\"in\":1.5}\n"
                      "{\"name\":\"e\",\"extra\":1}\n";
    char input[2048];
    snprintf(input, sizeof input, "%s%s", good, bad);
    const char *argv[] = {
        "enqueue", "--redis", tl_redis_url(), "--ns", ns_, "--bulk", "--batch-size", "2", NULL};
    CHECK_INT(run_cli(input, argv), 2);
    static const char *const bad_lines[] = {
        "line 7:", "line 8:", "line 9:", "line 10:", "line 11:", "line 12:"};
    for (size_t i = 0; i < sizeof bad_lines / sizeof bad_lines[0]; i++)
        if (!strstr(errout_, bad_lines[i]))
            tl_fail(__FILE__, __LINE__, "stderr lacks \"%s\": %s", bad_lines[i], errout_);
    CHECK(strstr(errout_, "6 bad lines; nothing written") != NULL);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, "");
    free(dump);
    /* A bad line after a full batch: still nothing written. */
    snprintf(input, sizeof input, "%snot json\n", good);
    CHECK_INT(run_cli(input, argv), 2);
    dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, "");
    free(dump);

    CHECK_INT(run_cli(good, argv), 0);
    CHECK(strstr(errout_, "4 jobs written, 1 duplicates") != NULL);
    redisReply *r = tl_cmd(rc_, "LLEN %s:jobs:a", ns_);
    CHECK_INT(r->integer, 2);
    freeReplyObject(r);
    r = tl_cmd(rc_, "ZCARD %s:scheduled", ns_);
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);
    r = tl_cmd(rc_, "LLEN %s:jobs:c", ns_);
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);
    r = tl_cmd(rc_, "EXISTS %s:jobs:d %s:jobs:e", ns_, ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

/* An ACL user without MULTI: `cwork enqueue` and `--bulk` succeed and write each job
 * once (before: exit 1 with the job written, "0 jobs written" after writing them). */
static void a_user_without_multi_enqueues_from_the_command_line(void)
{
    tl_unique_ns("cliacl", ns_, sizeof ns_);
    char user[80], url[256];
    snprintf(user, sizeof user, "%s-user", ns_);
    tl_do(rc_, "ACL SETUSER %s on >secret ~* &* +@all -multi -exec", user);
    const char *host = strstr(tl_redis_url(), "://") + 3;
    snprintf(url, sizeof url, "redis://%s:secret@%s", user, host);
    const char *one[] = {"enqueue", "--redis", url, "--ns", ns_, "single", NULL};
    CHECK_INT(run_cli(NULL, one), 0);
    const char *bulk[] = {"enqueue", "--redis", url, "--ns", ns_, "--bulk", NULL};
    CHECK_INT(run_cli("{\"name\":\"b1\"}\n{\"name\":\"b2\",\"in\":60}\n", bulk), 0);
    CHECK(strstr(errout_, "2 jobs written") != NULL);
    char *dump = tl_ns_dump(rc_, ns_);
    int lines = 0;
    for (const char *p = dump; *p; p++)
        lines += *p == '\n';
    CHECK_INT(lines, 4); /* jobs:single, jobs:b1, known_jobs, scheduled */
    CHECK(strstr(dump, ":known_jobs set b1 | b2 | single\n") != NULL);
    free(dump);
    tl_do(rc_, "ACL DELUSER %s", user);
    tl_ns_delete(rc_, ns_);
}

/* A URL that cannot be used is a usage error (2); a server that does not answer a
 * runtime failure (1). */
static void bad_redis_url_exits_2_and_unreachable_redis_1(void)
{
    const char *bad[] = {"enqueue", "--redis", "redis://a:b:c", "x", NULL};
    CHECK_INT(run_cli(NULL, bad), 2);
    CHECK(strstr(errout_, "invalid Redis URL") != NULL);
    const char *bulk[] = {"enqueue", "--redis", "nope://x", "--bulk", NULL};
    CHECK_INT(run_cli("{\"name\":\"a\"}\n", bulk), 2);
    const char *down[] = {"enqueue", "--redis", "redis://127.0.0.1:1", "x", NULL};
    CHECK_INT(run_cli(NULL, down), 1);
}

/* Issue 21: a negative delay is refused, named, whether a bare number or a duration,
 * from the command line or from a --bulk line; exit 2 and nothing in Redis (a delay
 * taken as it came would schedule the job in the past, where it runs at once). */
static void negative_delays_are_refused_and_nothing_is_written(void)
{
    tl_unique_ns("clineg", ns_, sizeof ns_);
    static const char *const cases[][2] = {
        /* --in's value and how the option is spelled ("--in=": one word) */
        {"-5", "--in"},    {"-5", "--in="},  {"-5s", "--in"},
        {"-1h30m", "-in"}, {"-0.5", "--in"}, {"-7d", "--in="},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[10] = {"enqueue", "--redis", tl_redis_url(), "--ns", ns_};
        size_t n = 5;
        char inline_opt[64];
        if (strcmp(cases[i][1], "--in=") == 0) {
            snprintf(inline_opt, sizeof inline_opt, "--in=%s", cases[i][0]);
            argv[n++] = inline_opt;
        } else {
            argv[n++] = cases[i][1];
            argv[n++] = cases[i][0];
        }
        argv[n++] = "report";
        argv[n] = NULL;
        char want[256];
        snprintf(want, sizeof want,
                 "cwork enqueue: --in needs whole seconds or a duration like 90s, 15m, 1h or 7d "
                 "(not negative: 0 is now); \"%s\" is negative\n",
                 cases[i][0]);
        int rc = run_cli(NULL, argv);
        if (rc != 2 || out_[0] || strcmp(errout_, want) != 0)
            tl_fail(__FILE__, __LINE__, "case %zu: exit %d, stdout \"%s\", stderr \"%s\"", i, rc,
                    out_, errout_);
    }
    const char *bulk[] = {"enqueue", "--redis", tl_redis_url(), "--ns", ns_, "--bulk", NULL};
    CHECK_INT(run_cli("{\"name\":\"a\"}\n{\"name\":\"b\",\"in\":-5}\n", bulk), 2);
    CHECK_STR(errout_, "cwork enqueue: line 2: \"in\" must be whole seconds, 0 or more\n"
                       "cwork enqueue: 1 bad line; nothing written\n");
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, "");
    free(dump);
    /* The same command with 0 is taken: the refusals above were of the sign alone. */
    const char *now[] = {"enqueue", "--redis", tl_redis_url(), "--ns", ns_,
                         "--in",    "0",       "report",       NULL};
    CHECK_INT(run_cli(NULL, now), 0);
    redisReply *r = tl_cmd(rc_, "ZCARD %s:scheduled", ns_);
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

static void help_and_version(void)
{
    const char *help[] = {"--help", NULL};
    CHECK_INT(run_cli(NULL, help), 0);
    CHECK(strstr(out_, "enqueue") != NULL);
    const char *ehelp[] = {"enqueue", "--help", NULL};
    CHECK_INT(run_cli(NULL, ehelp), 0);
    CHECK(strstr(out_, "--bulk") != NULL && strstr(out_, "--unique") != NULL);
    const char *version[] = {"--version", NULL};
    CHECK_INT(run_cli(NULL, version), 0);
    CHECK(strstr(out_, cwork_version()) != NULL);
}

static void password_never_printed(void)
{
    const char *argv[] = {"enqueue", "--redis", "redis://user:s3cr3tpw@127.0.0.1:1", "x", NULL};
    CHECK_INT(run_cli(NULL, argv), 1);
    CHECK(strstr(errout_, "s3cr3tpw") == NULL);
    CHECK(errout_[0] != '\0');
}

/* A name that is not valid UTF-8 is refused from --bulk as it is from argv (the JSON
 * reader would otherwise hand it on as U+FFFD, a different name); a name that holds
 * U+FFFD itself, in a valid line, is a valid name. */
static void bulk_refuses_an_invalid_utf8_name_as_argv_does(void)
{
    tl_unique_ns("cliutf8", ns_, sizeof ns_);
    const char *argv1[] = {"enqueue", "--redis", tl_redis_url(), "--ns", ns_, "bad\xff", NULL};
    CHECK_INT(run_cli(NULL, argv1), 2);
    const char *argv[] = {"enqueue", "--redis", tl_redis_url(), "--ns", ns_, "--bulk", NULL};
    CHECK_INT(run_cli("{\"name\":\"ok\"}\n{\"name\":\"bad\xff\"}\n", argv), 2);
    if (!strstr(errout_, "line 2: \"name\" is not valid UTF-8"))
        tl_fail(__FILE__, __LINE__, "stderr: %s", errout_);
    char *dump = tl_ns_dump(rc_, ns_);
    CHECK_STR(dump, "");
    free(dump);
    CHECK_INT(run_cli("{\"name\":\"ok\xef\xbf\xbd\"}\n", argv), 0);
    redisReply *r = tl_cmd(rc_, "LLEN %s:jobs:ok\xef\xbf\xbd", ns_);
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(single_job_prints_its_id);
    RUN(a_type_no_pool_runs_is_enqueued_with_a_warning);
    RUN(unique_duplicate_exits_3_and_delayed_goes_to_scheduled);
    RUN(go_flavor_and_unique_key);
    RUN(go_json_spells_the_guard);
    RUN(bad_input_exits_2_and_writes_nothing);
    RUN(bulk_reads_ndjson_and_reports_bad_lines);
    RUN(bulk_refuses_an_invalid_utf8_name_as_argv_does);
    RUN(a_user_without_multi_enqueues_from_the_command_line);
    RUN(bad_redis_url_exits_2_and_unreachable_redis_1);
    RUN(negative_delays_are_refused_and_nothing_is_written);
    RUN(help_and_version);
    RUN(password_never_printed);
    redisFree(rc_);
    return tl_finish();
}
