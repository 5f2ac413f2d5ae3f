/* The upstream fixtures (upstream_testutil.h) against Go's own encoder: every string,
 * args object and unique-key suffix in them is what `$CWORK_GO_ORACLE json` answers
 * (json.Unmarshal into map[string]interface{}, json.Marshal, json.Encoder.Encode with
 * its trailing newline), put together in the field order of upstream's Job struct; and
 * cwork's second escape spelling of a guard key is the one a Go before 1.22 writes (the
 * oracle is built with Go 1.19).
 *
 * Fails when the oracle cannot run (tl_oracle). */
#include "testlib.h"
#include "upstream_testutil.h"

#include "gojson.h"
#include "keys.h"

#include <stdlib.h>
#include <unistd.h>

static const char *oracle_path;

/* One oracle answer: [compact, unique-key suffix] of an args line, as two strings. */
typedef struct go_answer {
    char *compact;
    char *suffix;
} go_answer;

/* Runs the oracle over lines; answers[i] for lines[i]. 0 or -1. */
static int ask_go(const char *const *lines, size_t n, go_answer *answers)
{
    char in_path[] = "/tmp/cwork-upstream-in-XXXXXX", out_path[] = "/tmp/cwork-upstream-out-XXXXXX";
    int in_fd = mkstemp(in_path), out_fd = mkstemp(out_path);
    if (in_fd < 0 || out_fd < 0) return -1;
    for (size_t i = 0; i < n; i++) {
        if (write(in_fd, lines[i], strlen(lines[i])) < 0 || write(in_fd, "\n", 1) != 1) return -1;
    }
    close(in_fd);
    close(out_fd);
    int rc = tl_run_oracle(oracle_path, "json", in_path, out_path);
    size_t len = 0;
    char *out = rc == 0 ? tl_read_file(out_path, &len) : NULL;
    unlink(in_path);
    unlink(out_path);
    if (!out) return -1;
    size_t pos = 0, i = 0;
    for (; i < n && pos < len; i++) {
        char *nl = memchr(out + pos, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - (out + pos)) : len - pos;
        gj_value *pair = NULL;
        if (cw_gj_parse(out + pos, l, &pair, NULL) != 0 || pair->type != GJ_ARRAY ||
            pair->as.arr.len != 2) {
            tl_fail(__FILE__, __LINE__, "oracle answered %.*s", (int)l, out + pos);
            cw_gj_free(pair);
            free(out);
            return -1;
        }
        answers[i].compact = strdup(pair->as.arr.items[0]->as.s.ptr);
        answers[i].suffix = strdup(pair->as.arr.items[1]->as.s.ptr);
        cw_gj_free(pair);
        pos += l + 1;
    }
    free(out);
    return i == n ? 0 : -1;
}

/* The input line {"k":<s>} whose compact answer holds Go's escaping of s. */
static char *string_line(const char *s)
{
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_puts(&b, "{\"k\":");
    cw_gj_encode_string(&b, s, strlen(s));
    cw_buf_putc(&b, '}');
    char *line = strdup(b.data);
    cw_buf_free(&b);
    return line;
}

/* Go's escaping of a string from a {"k":…} answer: the text between {"k": and }. */
static char *go_string(const go_answer *a)
{
    size_t n = strlen(a->compact);
    if (n < 6 || strncmp(a->compact, "{\"k\":", 5) != 0) return strdup("?");
    return strndup(a->compact + 5, n - 6);
}

/* A job in the field order of upstream's Job, from Go-made pieces. */
static void upstream_job(char *out, size_t size, const char *name_esc, const char *id, long t,
                         const char *args, const char *unique_key_esc, long fails,
                         const char *err_esc, long failed_at)
{
    int n = snprintf(out, size, "{\"name\":%s,\"id\":\"%s\",\"t\":%ld,\"args\":%s", name_esc, id, t,
                     args);
    if (unique_key_esc)
        n += snprintf(out + n, size - (size_t)n, ",\"unique\":true,\"unique_key\":%s",
                      unique_key_esc);
    if (fails)
        n += snprintf(out + n, size - (size_t)n, ",\"fails\":%ld,\"err\":%s,\"failed_at\":%ld",
                      fails, err_esc, failed_at);
    snprintf(out + n, size - (size_t)n, "}");
}

static void fixtures_are_what_go_writes(void)
{
    /* Args objects, then the strings to escape (filled in below). */
    enum {
        A_OBJ,
        A_FIRST,
        A_SECOND,
        A_ACCT,
        A_EMAIL,
        S_CLEAR,
        S_SYNC,
        S_SEND,
        S_CALC,
        S_BOOM,
        S_KEY_CLEAR,
        S_KEY_SYNC,
        S_PERIODIC_ID,
        N
    };
    const char *first[] = {"{\"object_id_\":\"123\"}", "{\"v\":\"first\"}", "{\"v\":\"second\"}",
                           "{\"acct\":7}",
                           ("{\"address\":\"test@example.com\",\"subject\":\"hello world\","
                            "\"customer_id\":4}")};
    go_answer a[N];
    memset(a, 0, sizeof a);
    if (ask_go(first, S_CLEAR, a) != 0) {
        tl_fail(__FILE__, __LINE__, "the oracle failed");
        return;
    }
    /* The guard keys as redisKeyUniqueJob builds them: prefix + json.Encoder output. */
    char key_clear[256], key_sync[256];
    snprintf(key_clear, sizeof key_clear, "work:unique:clear_cache:%s", a[A_OBJ].suffix);
    snprintf(key_sync, sizeof key_sync, "work:unique:sync:%s", a[A_ACCT].suffix);
    char *lines[N - S_CLEAR] = {
        string_line("clear_cache"), string_line("sync"),
        string_line("send_email"),  string_line("calc"),
        string_line("boom"),        string_line(key_clear),
        string_line(key_sync),      string_line("periodic:calc:0 * * * * *:1700000040")};
    CHECK_INT(ask_go((const char *const *)lines, N - S_CLEAR, a + S_CLEAR), 0);
    char *esc[N] = {0};
    for (int i = S_CLEAR; i < N; i++)
        esc[i] = a[i].compact ? go_string(&a[i]) : strdup("?");

    char go[1024], want[1024];
    upstream_job(go, sizeof go, esc[S_SEND], UP_ID, 1700000000, a[A_EMAIL].compact, NULL, 0, NULL,
                 0);
    CHECK_STR(go, UP_ENQUEUE);

    upstream_job(go, sizeof go, esc[S_CLEAR], UP_ID, 1700000000, a[A_OBJ].compact, esc[S_KEY_CLEAR],
                 0, NULL, 0);
    UP_FMT(want, UP_UNIQUE, "work");
    CHECK_STR(go, want);
    UP_FMT(want, UP_UNIQUE_GUARD, "work");
    CHECK_STR(key_clear, want);

    upstream_job(go, sizeof go, esc[S_CLEAR], UP_ID, 1700000000, a[A_OBJ].compact, esc[S_KEY_CLEAR],
                 1, esc[S_BOOM], 1700000010);
    UP_FMT(want, UP_RETRY, "work");
    CHECK_STR(go, want);
    upstream_job(go, sizeof go, esc[S_CLEAR], UP_ID, 1700000000, a[A_OBJ].compact, esc[S_KEY_CLEAR],
                 4, esc[S_BOOM], 1700000100);
    UP_FMT(want, UP_DEAD, "work");
    CHECK_STR(go, want);

    upstream_job(go, sizeof go, esc[S_SYNC], UP_ID, 1700000000, a[A_FIRST].compact, esc[S_KEY_SYNC],
                 0, NULL, 0);
    UP_FMT(want, UP_BYKEY_PLACEHOLDER, "work");
    CHECK_STR(go, want);
    upstream_job(go, sizeof go, esc[S_SYNC], UP_ID2, 1700000005, a[A_SECOND].compact,
                 esc[S_KEY_SYNC], 0, NULL, 0);
    UP_FMT(want, UP_BYKEY_GUARD_JOB, "work");
    CHECK_STR(go, want);
    UP_FMT(want, UP_BYKEY_GUARD, "work");
    CHECK_STR(key_sync, want);

    /* makeUniquePeriodicID is fmt.Sprintf("periodic:%s:%s:%d"); the id is written as a
     * JSON string like any other. */
    snprintf(go, sizeof go, "{\"name\":%s,\"id\":%s,\"t\":1700000040,\"args\":null}", esc[S_CALC],
             esc[S_PERIODIC_ID]);
    CHECK_STR(go, UP_PERIODIC);

    for (int i = 0; i < N; i++) {
        free(a[i].compact);
        free(a[i].suffix);
        free(esc[i]);
    }
    for (int i = 0; i < N - S_CLEAR; i++)
        free(lines[i]);
}

/* cw_key_unique_spellings: the first key is Go 1.22's (and the oracle's with \u0008 and
 * \u000c mapped to \b and \f), the second the oracle's own (Go 1.19). */
static void second_spelling_is_old_go(void)
{
    const char *lines[] = {"{\"s\":\"a\\bb\",\"t\":\"\\f\\\\b\",\"u\":\"<\\u0008>\"}",
                           "{\"plain\":\"no control \\\\b here\"}"};
    go_answer a[2];
    memset(a, 0, sizeof a);
    CHECK_INT(ask_go(lines, 2, a), 0);
    cw_keys k;
    CHECK_INT(cw_keys_init(&k, "work"), 0);
    for (int i = 0; i < 2; i++) {
        gj_value *args = NULL;
        CHECK_INT(cw_gj_parse(lines[i], strlen(lines[i]), &args, NULL), 0);
        cw_buf b;
        cw_buf_init(&b);
        size_t lens[2];
        int n = cw_key_unique_spellings(&k, &b, "ctl", args, lens, NULL);
        char old[256];
        snprintf(old, sizeof old, "work:unique:ctl:%s", a[i].suffix ? a[i].suffix : "?");
        if (i == 0) {
            CHECK_INT(n, 2);
            CHECK_MEM(b.data + lens[0], lens[1], old, strlen(old));
            CHECK_STR(old, "work:unique:ctl:{\"s\":\"a\\u0008b\",\"t\":\"\\u000c\\\\b\","
                           "\"u\":\"\\u003c\\u0008\\u003e\"}\n");
            const char *new_ = "work:unique:ctl:{\"s\":\"a\\bb\",\"t\":\"\\f\\\\b\","
                               "\"u\":\"\\u003c\\b\\u003e\"}\n";
            CHECK_MEM(b.data, lens[0], new_, strlen(new_));
        } else {
            /* an escaped backslash before a b is no \b escape: one spelling */
            CHECK_INT(n, 1);
            CHECK_INT(lens[1], 0);
            CHECK_MEM(b.data, lens[0], old, strlen(old));
        }
        cw_buf_free(&b);
        cw_gj_free(args);
        free(a[i].compact);
        free(a[i].suffix);
    }
    cw_keys_clear(&k);
}

/* The go1.21 setting (cwork_go_json): the recorded bytes of a Go before 1.22
 * (OLDGO_UP_CTL, OLDGO_CTL, OLDGO_CTL_GUARD) are Go 1.19's own, and cw_key_unique_prefer
 * puts that Go's guard first, as the enqueuer writes it. */
static void go121_fixtures_and_first_key_are_go119s(void)
{
    const char *args_line[] = {"{\"s\":\"a\\bb\"}"};
    go_answer a[3];
    memset(a, 0, sizeof a);
    char *lines[2] = {NULL, NULL}, *name_esc = NULL, *key_esc = NULL;
    char key[256];
    if (ask_go(args_line, 1, a) != 0 || !a[0].compact || !a[0].suffix) {
        tl_fail(__FILE__, __LINE__, "the oracle failed");
        goto done;
    }
    snprintf(key, sizeof key, "work:unique:ctl:%s", a[0].suffix);
    char fx[256];
    snprintf(fx, sizeof fx, OLDGO_CTL_GUARD, "work");
    CHECK_STR(key, fx);
    lines[0] = string_line("ctl");
    lines[1] = string_line(key);
    if (ask_go((const char *const *)lines, 2, a + 1) != 0 || !a[1].compact || !a[2].compact) {
        tl_fail(__FILE__, __LINE__, "the oracle failed");
        goto done;
    }
    name_esc = go_string(&a[1]);
    key_esc = go_string(&a[2]);
    char go[1024], want[1024];
    upstream_job(go, sizeof go, name_esc, UP_ID, 1700000000, a[0].compact, key_esc, 0, NULL, 0);
    snprintf(want, sizeof want, OLDGO_UP_CTL, "work");
    CHECK_STR(go, want);
    /* the fork's: no unique_key, "unique":true last */
    upstream_job(go, sizeof go, name_esc, UP_ID, 1700000000, a[0].compact, NULL, 0, NULL, 0);
    go[strlen(go) - 1] = '\0';
    snprintf(want, sizeof want, "%s,\"unique\":true}", go);
    CHECK_STR(want, OLDGO_CTL);

    cw_keys k;
    CHECK_INT(cw_keys_init(&k, "work"), 0);
    gj_value *args = NULL;
    CHECK_INT(cw_gj_parse(args_line[0], strlen(args_line[0]), &args, NULL), 0);
    cw_buf b;
    cw_buf_init(&b);
    size_t lens[2];
    CHECK_INT(cw_key_unique_spellings(&k, &b, "ctl", args, lens, NULL), 2);
    cw_key_unique_prefer(&b, 0, lens, CWORK_GO_JSON_121);
    CHECK_MEM(b.data, lens[0], key, strlen(key));
    char newer[256];
    snprintf(newer, sizeof newer, NEWGO_CTL_GUARD, "work");
    CHECK_MEM(b.data + lens[0], lens[1], newer, strlen(newer));
    cw_buf_free(&b);
    cw_gj_free(args);
    cw_keys_clear(&k);
done:
    free(name_esc);
    free(key_esc);
    for (int i = 0; i < 3; i++) {
        free(a[i].compact);
        free(a[i].suffix);
    }
    for (int i = 0; i < 2; i++)
        free(lines[i]);
}

int main(void)
{
    if (!(oracle_path = tl_oracle())) return 1; /* fails, never skips: see tl_oracle */
    RUN(fixtures_are_what_go_writes);
    RUN(second_spelling_is_old_go);
    RUN(go121_fixtures_and_first_key_are_go119s);
    return tl_finish();
}
