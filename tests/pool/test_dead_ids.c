/* Dead records can always be acted on: an undecodable job gets a dead record with an id
 * of its own (not "id":"") and its bytes kept exactly (base64 beside a readable form),
 * and every id — "", ".", ".." included — can be found, retried and deleted from the
 * command line (the web routes are in test_web.c). */
#include "job.h"
#include "pool_testutil.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

static char errout_[8192], out_[8192];

static int run_cli(const char *const *args)
{
    const char *cli = getenv("CWORK_CLI");
    if (!cli) {
        fprintf(stderr, "CWORK_CLI is not set (ctest sets it)\n");
        exit(1);
    }
    char out_path[] = "/tmp/cwt-ids-out-XXXXXX", err_path[] = "/tmp/cwt-ids-err-XXXXXX";
    int out = mkstemp(out_path), er = mkstemp(err_path);
    const char *argv[16] = {cli};
    size_t n = 1;
    for (; args[n - 1] && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        dup2(in, 0), dup2(out, 1), dup2(er, 2);
        execv(cli, (char *const *)argv);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    lseek(out, 0, SEEK_SET);
    ssize_t k = read(out, out_, sizeof out_ - 1);
    out_[k > 0 ? k : 0] = '\0';
    lseek(er, 0, SEEK_SET);
    k = read(er, errout_, sizeof errout_ - 1);
    errout_[k > 0 ? k : 0] = '\0';
    close(out), close(er);
    unlink(out_path), unlink(err_path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Decodes standard base64 (test oracle, independent of the library's encoder). */
static size_t unbase64(const char *s, unsigned char *out)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = 0;
    unsigned v = 0;
    int bits = 0;
    for (; *s && *s != '='; s++) {
        const char *p = strchr(digits, *s);
        if (!p) return (size_t)-1;
        v = (v << 6) | (unsigned)(p - digits);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(v >> bits);
        }
    }
    return n;
}

/* The record itself: a valid job, an id of 24 hex digits, the bytes exactly in base64. */
static void check_record(const char *member, size_t member_len, const char *want_name,
                         const unsigned char *bytes, size_t len)
{
    cwork_job *j = NULL;
    CHECK_INT(cwork_job_decode(member, member_len, &j, NULL), 0);
    if (!j) return;
    CHECK_STR(cwork_job_name(j), want_name);
    CHECK_INT(strlen(cwork_job_id(j)), 24);
    CHECK(strspn(cwork_job_id(j), "0123456789abcdef") == 24);
    CHECK_INT(cwork_job_fails(j), 1);
    CHECK(strstr(cwork_job_last_error(j), "raw_job_base64") != NULL);
    const char *b64 = cwork_job_arg_string(j, "raw_job_base64");
    unsigned char back[256];
    size_t n = unbase64(b64, back);
    CHECK_MEM(back, n, bytes, len);
    const char *readable = cwork_job_arg_string(j, "raw_job");
    CHECK(readable && strstr(readable, "not json") != NULL);
    CHECK(cwork_job_arg_error(j) == NULL);
    cwork_job_free(j);
}

static const unsigned char bad_bytes_[] = "\xff\xfe not json \xc3(";

static void the_record_of_undecodable_bytes_has_an_id_and_the_exact_bytes(void)
{
    cw_buf out;
    cw_buf_init(&out);
    CHECK_INT(cw_job_encode_undecodable(&out, "a", (const char *)bad_bytes_, sizeof bad_bytes_ - 1,
                                        "invalid character", 1700000000, NULL),
              0);
    check_record(out.data, out.len, "a", bad_bytes_, sizeof bad_bytes_ - 1);
    /* Go's encoding: invalid UTF-8 is written as \ufffd in the readable form. */
    CHECK(strstr(out.data, "\"raw_job\":\"\\ufffd\\ufffd not json \\ufffd(\"") != NULL);
    cw_buf out2;
    cw_buf_init(&out2);
    cw_job_encode_undecodable(&out2, "a", "x", 1, "r", 1, NULL);
    cw_job_encode_undecodable(&out2, "a", "x", 1, "r", 1, NULL);
    CHECK(memcmp(out2.data, out2.data + out2.len / 2, out2.len / 2) != 0); /* fresh ids */
    cw_buf_free(&out);
    cw_buf_free(&out2);
}

static int noop(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    return 0;
}

/* A pool fetches undecodable bytes: the dead record has its own id, and is addressable. */
static void an_undecodable_job_dies_with_an_id_it_can_be_deleted_by(void)
{
    cwork_pool *p = new_pool("undec", 2);
    CHECK_INT(cwork_pool_register(p, "a", noop, NULL, NULL), 0);
    freeReplyObject(tl_cmd(rc_, "LPUSH %s:jobs:a %b", ns_, bad_bytes_, sizeof bad_bytes_ - 1));
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    CHECK_INT(wait_for_int(1, 10000, "ZCARD %s:dead", NULL), 1);
    CHECK_INT(cwork_pool_stop(p, 10000, NULL), 0);
    cwork_pool_free(p);
    redisReply *r = tl_cmd(rc_, "ZRANGE %s:dead 0 -1", ns_);
    char id[25] = "";
    if (r->elements == 1) {
        check_record(r->element[0]->str, r->element[0]->len, "a", bad_bytes_,
                     sizeof bad_bytes_ - 1);
        const char *p_id = strstr(r->element[0]->str, "\"id\":\"");
        if (p_id) snprintf(id, sizeof id, "%.24s", p_id + 6);
    }
    freeReplyObject(r);
    const char *find[] = {"job", "--redis", tl_redis_url(), "--ns", ns_, id, NULL};
    CHECK_INT(run_cli(find), 0);
    CHECK(strstr(out_, "dead") != NULL);
    const char *del[] = {"dead", "delete", "--redis", tl_redis_url(), "--ns", ns_, id, NULL};
    CHECK_INT(run_cli(del), 0);
    r = tl_cmd(rc_, "EXISTS %s:dead %s:jobs:a", ns_, ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

/* Ids written by others: "", "." and ".." are found, retried and deleted by id. */
static void odd_ids_are_addressable_from_the_command_line(void)
{
    tl_unique_ns("oddid", ns_, sizeof ns_);
    tl_do(rc_, "SADD %s:known_jobs a", ns_);
    static const char *const ids[] = {"", ".", ".."};
    for (int i = 0; i < 3; i++)
        tl_do(rc_, "ZADD %s:dead %d {\"name\":\"a\",\"id\":\"%s\",\"t\":1,\"fails\":4}", ns_,
              1700000000 + i, ids[i]);
    for (int i = 0; i < 3; i++) {
        const char *find[] = {"job", "--redis", tl_redis_url(), "--ns", ns_, ids[i], NULL};
        if (run_cli(find) != 0) tl_fail(__FILE__, __LINE__, "cwork job '%s': %s", ids[i], errout_);
        CHECK(strstr(out_, "dead") != NULL);
    }
    const char *retry[] = {"dead", "retry", "--redis", tl_redis_url(), "--ns", ns_, "..", NULL};
    CHECK_INT(run_cli(retry), 0);
    const char *del_dot[] = {"dead", "delete", "--redis", tl_redis_url(), "--ns", ns_, ".", NULL};
    CHECK_INT(run_cli(del_dot), 0);
    const char *del_empty[] = {"dead", "delete", "--redis", tl_redis_url(), "--ns", ns_, "", NULL};
    if (run_cli(del_empty) != 0) tl_fail(__FILE__, __LINE__, "cwork dead delete '': %s", errout_);
    redisReply *r = tl_cmd(rc_, "EXISTS %s:dead", ns_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    r = tl_cmd(rc_, "LRANGE %s:jobs:a 0 -1", ns_);
    CHECK(r->elements == 1 && strstr(r->element[0]->str, "\"id\":\"..\"") != NULL);
    freeReplyObject(r);
    tl_ns_delete(rc_, ns_);
}

int main(void)
{
    pool_test_setup();
    RUN(the_record_of_undecodable_bytes_has_an_id_and_the_exact_bytes);
    RUN(an_undecodable_job_dies_with_an_id_it_can_be_deleted_by);
    RUN(odd_ids_are_addressable_from_the_command_line);
    pool_test_teardown();
    return tl_finish();
}
