/* The typed reply readers (src/redis/reply.c) on replies hiredis' own reader makes from RESP
 * bytes: each reader against each shape, and the one wording of a mismatch. */
#include "reply.h"

#include "testlib.h"

/* The reply RESP bytes stand for (abort on a malformed table entry). */
static redisReply *parse_n(const char *resp, size_t len)
{
    redisReader *rd = redisReaderCreate();
    void *out = NULL;
    if (!rd || redisReaderFeed(rd, resp, len) != REDIS_OK ||
        redisReaderGetReply(rd, &out) != REDIS_OK || !out) {
        fprintf(stderr, "bad RESP in the table: %s\n", resp);
        abort();
    }
    redisReaderFree(rd);
    return out;
}

static redisReply *parse(const char *resp)
{
    return parse_n(resp, strlen(resp));
}

static void type_names_and_tests(void)
{
    static const struct {
        const char *resp, *name;
        int is_nil, is_int, is_str, is_array;
    } cases[] = {
        {":42\r\n", "an integer", 0, 1, 0, 0},   {"$3\r\nabc\r\n", "a string", 0, 0, 1, 0},
        {"$-1\r\n", "nil", 1, 0, 0, 0},          {"*-1\r\n", "nil", 1, 0, 0, 0},
        {"*0\r\n", "an array", 0, 0, 0, 1},      {"+OK\r\n", "a status", 0, 0, 0, 0},
        {"-ERR no\r\n", "an error", 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        redisReply *r = parse(cases[i].resp);
        CHECK_STR(cw_reply_type_name(r), cases[i].name);
        CHECK_INT(cw_reply_is_nil(r), cases[i].is_nil);
        CHECK_INT(cw_reply_is_int(r), cases[i].is_int);
        CHECK_INT(cw_reply_is_str(r), cases[i].is_str);
        CHECK_INT(cw_reply_is_array(r), cases[i].is_array);
        cw_reply_free(r);
    }
    CHECK_STR(cw_reply_type_name(NULL), "no reply");
    CHECK(!cw_reply_is_int(NULL) && !cw_reply_is_array(NULL));
    redisReply *e = parse("-WRONGTYPE Operation against a key\r\n");
    CHECK_STR(cw_reply_error(e), "WRONGTYPE Operation against a key");
    CHECK_STR(cw_reply_text(e), "WRONGTYPE Operation against a key");
    cw_reply_free(e);
    redisReply *n = parse(":7\r\n");
    CHECK(cw_reply_error(n) == NULL);
    CHECK_STR(cw_reply_text(n), "");
    CHECK_INT(cw_reply_len(n), 0);
    cw_reply_free(n);
    cw_reply_free(NULL);
}

typedef enum { R_INT, R_STR, R_STR_NIL, R_STATUS_OK, R_ARRAY2, R_INTS3 } reader;

static int run_reader(reader k, const redisReply *r, cwork_error *err)
{
    int64_t v[3];
    const char *s;
    size_t len, n;
    switch (k) {
    case R_INT:
        return cw_reply_int(r, v, "CMD", err);
    case R_STR:
        return cw_reply_str(r, &s, &len, "CMD", err);
    case R_STR_NIL:
        return cw_reply_str_or_nil(r, &s, &len, "CMD", err);
    case R_STATUS_OK:
        return cw_reply_status(r, "OK", "CMD", err);
    case R_ARRAY2:
        return cw_reply_array(r, 2, &n, "CMD", err);
    case R_INTS3:
        return cw_reply_ints(r, v, 3, "CMD", err);
    }
    return -100;
}

static void readers_accept_and_refuse(void)
{
    static const struct {
        reader k;
        const char *resp;
        const char *msg; /* NULL: accepted */
    } cases[] = {
        {R_INT, ":-5\r\n", NULL},
        {R_INT, "$1\r\n5\r\n", "CMD: expected an integer, got a string"},
        {R_INT, "$-1\r\n", "CMD: expected an integer, got nil"},
        {R_STR, "$0\r\n\r\n", NULL},
        {R_STR, "$-1\r\n", "CMD: expected a string, got nil"},
        {R_STR, "+OK\r\n", "CMD: expected a string, got a status"},
        {R_STR_NIL, "$-1\r\n", NULL},
        {R_STR_NIL, "$2\r\nab\r\n", NULL},
        {R_STR_NIL, ":1\r\n", "CMD: expected a string or nil, got an integer"},
        {R_STATUS_OK, "+OK\r\n", NULL},
        {R_STATUS_OK, "+QUEUED\r\n", "CMD: expected OK, got QUEUED"},
        {R_STATUS_OK, "$2\r\nOK\r\n", "CMD: expected the status OK, got a string"},
        {R_ARRAY2, "*2\r\n:1\r\n:2\r\n", NULL},
        {R_ARRAY2, "*3\r\n:1\r\n:2\r\n:3\r\n", NULL},
        {R_ARRAY2, "*1\r\n:1\r\n", "CMD: expected an array of at least 2, got 1"},
        {R_ARRAY2, ":2\r\n", "CMD: expected an array, got an integer"},
        {R_INTS3, "*3\r\n:1\r\n:2\r\n:3\r\n", NULL},
        {R_INTS3, "*4\r\n:1\r\n:2\r\n:3\r\n$1\r\nx\r\n", NULL},
        {R_INTS3, "*3\r\n:1\r\n$1\r\n2\r\n:3\r\n",
         "CMD: element 2: expected an integer, got a string"},
        {R_INTS3, "*2\r\n:1\r\n:2\r\n", "CMD: expected an array of at least 3, got 2"},
        {R_INTS3, ":1\r\n", "CMD: expected an array, got an integer"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        redisReply *r = parse(cases[i].resp);
        cwork_error err = {0};
        int rc = run_reader(cases[i].k, r, &err);
        if (!cases[i].msg) {
            if (rc != 0) tl_fail(__FILE__, __LINE__, "case %zu refused: %s", i, err.message);
        } else {
            if (rc != CWORK_EPROTO) tl_fail(__FILE__, __LINE__, "case %zu: rc %d", i, rc);
            CHECK_STR(err.message, cases[i].msg);
            /* the code without an error to fill */
            CHECK_INT(run_reader(cases[i].k, r, NULL), CWORK_EPROTO);
        }
        cw_reply_free(r);
    }
    cwork_error err = {0};
    int64_t v;
    CHECK_INT(cw_reply_int(NULL, &v, "GET", &err), CWORK_EPROTO);
    CHECK_STR(err.message, "GET: expected an integer, got no reply");
}

static void values_and_elements(void)
{
    static const char resp[] = "*5\r\n:7\r\n$5\r\nh\0llo\r\n$-1\r\n*1\r\n:9\r\n+OK\r\n";
    redisReply *r = parse_n(resp, sizeof resp - 1);
    int64_t v = 0;
    const char *s = NULL;
    size_t len = 0, n = 0;
    cwork_error err = {0};
    CHECK_INT(cw_reply_array(r, 0, &n, "X", &err), 0);
    CHECK_INT(n, 5);
    CHECK_INT(cw_reply_at_int(r, 0, &v, "X", &err), 0);
    CHECK_INT(v, 7);
    CHECK_INT(cw_reply_at_str(r, 1, &s, &len, "X", &err), 0);
    CHECK_MEM(s, len, "h\0llo", 5);
    CHECK_INT(cw_reply_at_str_or_nil(r, 2, &s, &len, "X", &err), 0);
    CHECK(s == NULL && len == 0);
    CHECK_INT(cw_reply_at_array(r, 3, 1, &n, "X", &err), 0);
    CHECK_INT(n, 1);
    CHECK_INT(cw_reply_int(cw_reply_at(cw_reply_at(r, 3), 0), &v, "X", &err), 0);
    CHECK_INT(v, 9);
    CHECK_INT(cw_reply_status(cw_reply_at(r, 4), "OK", "X", &err), 0);
    CHECK(cw_reply_at(r, 5) == NULL);
    CHECK_INT(cw_reply_at_int(r, 5, &v, "X", &err), CWORK_EPROTO);
    CHECK_STR(err.message, "X: expected an array of at least 6, got 5");
    CHECK_INT(cw_reply_at_int(r, 1, &v, "X", &err), CWORK_EPROTO);
    CHECK_STR(err.message, "X: element 2: expected an integer, got a string");
    CHECK_INT(cw_reply_at_str(r, 2, &s, &len, "X", &err), CWORK_EPROTO);
    CHECK_STR(err.message, "X: element 3: expected a string, got nil");
    CHECK_INT(cw_reply_at_array(r, 3, 2, &n, "X", &err), CWORK_EPROTO);
    CHECK_STR(err.message, "X: element 4: expected an array of at least 2, got 1");
    CHECK(cw_reply_at(cw_reply_at(r, 0), 0) == NULL); /* an integer has no elements */
    cw_reply_free(r);
}

int main(void)
{
    RUN(type_names_and_tests);
    RUN(readers_accept_and_refuse);
    RUN(values_and_elements);
    return tl_finish();
}
