/* gojson, decoding side: what Go's encoding/json accepts and rejects, how it repairs
 * strings (invalid UTF-8, lone surrogates), numbers at the edges of float64, the
 * last-duplicate-wins rule, the nesting limit, and the cwork_args parsing API. */
#include "gojson_testutil.h"

#include "args.h"
#include "gojson.h"

#include <stdlib.h>

/* ---------------------------------------------------------------- helpers */
#define REJECT(in) reject(__FILE__, __LINE__, in, sizeof(in) - 1)
static void reject(const char *file, int line, const char *in, size_t len)
{
    gj_value *v = NULL;
    cwork_error err = {0};
    int rc = cw_gj_parse(in, len, &v, &err);
    if (rc != CWORK_EJSON) {
        tl_fail(file, line, "accepted (rc %d), expected CWORK_EJSON: %.*s", rc, (int)len, in);
        cw_gj_free(v);
        return;
    }
    if (err.code != CWORK_EJSON || strncmp(err.message, "json: ", 6) != 0)
        tl_fail(file, line, "bad error message for %.*s: %s", (int)len, in, err.message);
}
static char *args_json(const cwork_args *a)
{
    char *out = NULL;
    size_t len = 0;
    cwork_error err = {0};
    CHECK_INT(cwork_args_to_json(a, &out, &len, &err), 0);
    if (out) CHECK_INT(strlen(out), len);
    return out;
}

/* ---------------------------------------------------------------- decoder */

static void decode_rejections(void)
{
    REJECT("");
    REJECT("   ");
    REJECT("01");
    REJECT("-01");
    REJECT("00");
    REJECT("+1");
    REJECT(".5");
    REJECT("1.");
    REJECT("1.e5");
    REJECT("1e");
    REJECT("1e+");
    REJECT("1E-");
    REJECT("-");
    REJECT("[-]");
    REJECT("0x10");
    REJECT("NaN");
    REJECT("Infinity");
    REJECT("-Infinity");
    REJECT("[1,]");
    REJECT("{\"a\":1,}");
    REJECT("[,1]");
    REJECT("{,}");
    REJECT("{\"a\"}");
    REJECT("{\"a\" 1}");
    REJECT("{a:1}");
    REJECT("{'a':1}");
    REJECT("[1 2]");
    REJECT("{\"a\":1 \"b\":2}");
    REJECT("\"\x01\"");
    REJECT("\"a\tb\"");
    REJECT("\"\x1f\"");
    REJECT("\"\\x\"");
    REJECT("\"\\U0041\"");
    REJECT("\"\\u12\"");
    REJECT("\"\\u12g4\"");
    REJECT("\"\\");
    REJECT("\"abc");
    REJECT("[");
    REJECT("{");
    REJECT("{\"a\":");
    REJECT("[1");
    REJECT("nul");
    REJECT("tru");
    REJECT("falsey");
    REJECT("nulll");
    REJECT("[1] x");
    REJECT("{} {}");
    REJECT("\xef\xbb\xbf{}"); /* a byte order mark is not white space */
    REJECT("\v1");
    REJECT("1\f");
    REJECT("[1]\0");
    REJECT("1e400");
    REJECT("-1e400");
    REJECT("[1.7976931348623159e308]");
    REJECT("{\"a\":[{\"b\":1e99999}]}");
}

static void decode_acceptances(void)
{
    ROUNDTRIP(" \t\r\n{ \"a\" : [ 1 , 2 ] }\r\n ", "{\"a\":[1,2]}");
    ROUNDTRIP("-0", "-0");
    ROUNDTRIP("-0.0e5", "-0");
    ROUNDTRIP("0e999999999999", "0");
    ROUNDTRIP("1e-400", "0");
    ROUNDTRIP("-1e-400", "-0");
    ROUNDTRIP("1e-99999999999999999999", "0");
    ROUNDTRIP("1E5", "100000");
    ROUNDTRIP("1e+5", "100000");
    ROUNDTRIP("1.50", "1.5");
    ROUNDTRIP("0.000001234", "0.000001234");
    ROUNDTRIP("123456789012345678901234567890", "1.2345678901234568e+29");
    ROUNDTRIP("0.1000000000000000055511151231257827021181583404541015625", "0.1");
    ROUNDTRIP("1.7976931348623157e308", "1.7976931348623157e+308");
    ROUNDTRIP("1.7976931348623158e308", "1.7976931348623157e+308");
    ROUNDTRIP("2.4703282292062328e-324", "5e-324"); /* just above half the minimum */
    ROUNDTRIP("2.4703282292062327e-324", "0");
    ROUNDTRIP("9007199254740993", "9007199254740992");
    ROUNDTRIP("9007199254740995", "9007199254740996");
    ROUNDTRIP("18446744073709551615", "18446744073709552000");
    ROUNDTRIP("-9223372036854775808", "-9223372036854776000");
    ROUNDTRIP("1.2345678901235e+16", "12345678901235000");
    ROUNDTRIP("[1e22,1e23,1.5e-22,123e-20]", "[1e+22,1e+23,1.5e-22,1.23e-18]");
}

static void decode_strings(void)
{
    static const struct {
        const char *in, *want;
        size_t want_len;
    } cases[] = {
        {"\"\xff\"", "\xef\xbf\xbd", 3},
        {"\"\xc3\"", "\xef\xbf\xbd", 3},
        {"\"\xe2\x82\xac\"", "\xe2\x82\xac", 3},
        {"\"\xed\xa0\x80\"", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 9},
        {"\"\xc0\xaf\"", "\xef\xbf\xbd\xef\xbf\xbd", 6},
        {"\"\xf0\x9f\x98\x80\"", "\xf0\x9f\x98\x80", 4},
        {"\"\xf0\x9f\x98\"", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 9},
        {"\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4},
        {"\"\\uD83D\\uDE00\"", "\xf0\x9f\x98\x80", 4},
        {"\"\\ud800\"", "\xef\xbf\xbd", 3},
        {"\"\\udc00\"", "\xef\xbf\xbd", 3},
        {"\"\\ud800\\u0041\"",
         "\xef\xbf\xbd"
         "A",
         4},
        {"\"\\ud800\\ud800\\udc00\"", "\xef\xbf\xbd\xf0\x90\x80\x80", 7},
        {"\"\\udc00\\ud800\"", "\xef\xbf\xbd\xef\xbf\xbd", 6},
        {"\"\\ud800x\"", "\xef\xbf\xbdx", 4},
        {"\"\\u0000\"", "\0", 1},
        {"\"a\\u0000b\"", "a\0b", 3},
        {"\"\\u00e9\\u20AC\"", "\xc3\xa9\xe2\x82\xac", 5},
        {"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\b\f\n\r\t", 8},
        {"\"\x7f\"", "\x7f", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gj_value *v = NULL;
        CHECK_INT(cw_gj_parse(cases[i].in, strlen(cases[i].in), &v, NULL), 0);
        if (!v) continue;
        CHECK_INT(v->type, GJ_STRING);
        CHECK_MEM(v->as.s.ptr, v->as.s.len, cases[i].want, cases[i].want_len);
        cw_gj_free(v);
    }
    /* Keys are repaired too, and keys that become equal collapse (the last wins). */
    ROUNDTRIP("{\"\xff\":1,\"\xfe\":2}", "{\"\xef\xbf\xbd\":2}");
}

static void duplicate_keys(void)
{
    const char *in = "{\"a\":1,\"b\":2,\"a\":{\"x\":1},\"c\":3,\"a\":3}";
    gj_value *v = NULL;
    CHECK_INT(cw_gj_parse(in, strlen(in), &v, NULL), 0);
    CHECK_INT(v->as.obj.len, 3);
    CHECK_STR(v->as.obj.items[0].key.ptr, "a"); /* first position, last value */
    CHECK(v->as.obj.items[0].value->as.f == 3);
    CHECK_STR(v->as.obj.items[2].key.ptr, "c");
    cw_gj_free(v);
    /* Same for a large object, which settles duplicates by sorting. */
    char big[2048];
    size_t n = (size_t)snprintf(big, sizeof big, "{");
    for (int i = 0; i < 50; i++)
        n += (size_t)snprintf(big + n, sizeof big - n, "\"k%d\":%d,", i, i);
    snprintf(big + n, sizeof big - n, "\"k5\":\"x\",\"k40\":[],\"k5\":\"y\"}");
    CHECK_INT(cw_gj_parse(big, strlen(big), &v, NULL), 0);
    CHECK_INT(v->as.obj.len, 50);
    CHECK_STR(v->as.obj.items[5].key.ptr, "k5");
    CHECK_STR(v->as.obj.items[5].value->as.s.ptr, "y");
    CHECK_INT(v->as.obj.items[40].value->type, GJ_ARRAY);
    CHECK_STR(v->as.obj.items[49].key.ptr, "k49");
    cw_gj_free(v);
}

static void merge_objects(void)
{
    gj_value *a = NULL, *b = NULL;
    CHECK_INT(cw_gj_parse("{\"a\":1,\"b\":2}", 13, &a, NULL), 0);
    CHECK_INT(cw_gj_parse("{\"b\":3,\"c\":4}", 13, &b, NULL), 0);
    CHECK_INT(cw_gj_object_merge(a, b), 0);
    char *got = encode_value(a);
    CHECK_STR(got, "{\"a\":1,\"b\":3,\"c\":4}");
    CHECK_STR(a->as.obj.items[1].key.ptr, "b");
    cw_free(got);
    cw_gj_free(a);
}

/* depth containers: open x depth, inner, close x depth. */
static char *nested3(const char *open, const char *inner, const char *close, int depth)
{
    size_t lo = strlen(open), li = strlen(inner), lc = strlen(close);
    char *s = malloc((lo + lc) * (size_t)depth + li + 1), *p = s;
    for (int i = 0; i < depth; i++, p += lo)
        memcpy(p, open, lo);
    memcpy(p, inner, li);
    p += li;
    for (int i = 0; i < depth; i++, p += lc)
        memcpy(p, close, lc);
    *p = '\0';
    return s;
}

static char *nested(const char *open, const char *close, int depth)
{
    return nested3(open, "", close, depth);
}

static void deep_nesting(void)
{
    const char *opens[] = {"[", "{\"a\":"}, *closes[] = {"]", "}"}, *inner[] = {"", "null"};
    for (int k = 0; k < 2; k++) {
        char *ok = nested3(opens[k], inner[k], closes[k], GJ_MAX_DEPTH);
        gj_value *v = NULL;
        CHECK_INT(cw_gj_parse(ok, strlen(ok), &v, NULL), 0);
        char *got = v ? encode_value(v) : NULL;
        CHECK(got && strcmp(got, ok) == 0);
        gj_value *d = cw_gj_dup(v);
        char *got2 = d ? encode_value(d) : NULL;
        CHECK(got2 && strcmp(got2, ok) == 0);
        cw_free(got);
        cw_free(got2);
        cw_gj_free(d);
        cw_gj_free(v);
        /* The skip path (unknown job fields) has the same limit. */
        size_t pos = 0;
        CHECK_INT(cw_gj_skip_at(ok, strlen(ok), &pos, 0, NULL), 0);
        CHECK_INT(pos, strlen(ok));
        pos = 0;
        CHECK_INT(cw_gj_skip_at(ok, strlen(ok), &pos, 1, NULL), CWORK_EJSON);
        free(ok);

        char *deep = nested3(opens[k], inner[k], closes[k], GJ_MAX_DEPTH + 1);
        cwork_error err = {0};
        CHECK_INT(cw_gj_parse(deep, strlen(deep), &v, &err), CWORK_EJSON);
        CHECK(strstr(err.message, "max depth") != NULL);
        free(deep);
    }
    /* Far deeper trees built in process are released, copied and encoded without
     * recursion. */
    gj_value *root = cw_gj_new_array(), *cur = root;
    for (int i = 0; i < 200000; i++) {
        gj_value *next = cw_gj_new_array();
        CHECK_INT(cw_gj_array_push(cur, next), 0);
        cur = next;
    }
    cw_buf b;
    cw_buf_init(&b);
    CHECK_INT(cw_gj_encode(&b, root, NULL), 0);
    CHECK_INT(b.len, 2 * 200001);
    cw_buf_free(&b);
    gj_value *copy = cw_gj_dup(root);
    CHECK(copy != NULL);
    cw_gj_free(copy);
    cw_gj_free(root);
    /* Unterminated deep input fails cleanly. */
    char *open_only = nested("[", "", 5000);
    CHECK_INT(cw_gj_parse(open_only, strlen(open_only), &root, NULL), CWORK_EJSON);
    free(open_only);
}

/* ---------------------------------------------------------------- args API */

static void args_parse_rules(void)
{
    cwork_args *a = (cwork_args *)(uintptr_t)1; /* must stay untouched on failure */
    const char *bad[] = {"null", "[]", "\"x\"", "1", "true", "{", "{} x", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cwork_error err = {0};
        CHECK_INT(cwork_args_parse(bad[i], strlen(bad[i]), &a, &err), CWORK_EJSON);
        CHECK(a == (cwork_args *)(uintptr_t)1);
        CHECK(err.message[0] != '\0');
    }
    cwork_error err = {0};
    CHECK_INT(cwork_args_parse("[]", 2, &a, &err), CWORK_EJSON);
    CHECK_STR(err.message, "args must be a JSON object");

    CHECK_INT(cwork_args_parse(" {\"b\":1,\"a\":\"x\"} ", 17, &a, NULL), 0);
    CHECK_INT(cwork_args_set_json(a, "c", "{\"z\":[1.0,null]}", 16, NULL), 0);
    CHECK_INT(cwork_args_set_json(a, "d", "[1,", 3, &err), CWORK_EJSON);
    char *got = args_json(a);
    CHECK_STR(got, "{\"a\":\"x\",\"b\":1,\"c\":{\"z\":[1,null]}}");
    cw_free(got);
    cwork_args_free(a);

    got = args_json(NULL);
    CHECK_STR(got, "null");
    cw_free(got);

    /* Depth is counted inside a job: job (1) > args (2) > values, so that Go can read
     * back whatever we enqueue. */
    char *deep = nested("[", "]", GJ_MAX_DEPTH - 2);
    a = cwork_args_new();
    CHECK_INT(cwork_args_set_json(a, "k", deep, strlen(deep), NULL), 0);
    free(deep);
    deep = nested("[", "]", GJ_MAX_DEPTH - 1);
    CHECK_INT(cwork_args_set_json(a, "k", deep, strlen(deep), NULL), CWORK_EJSON);
    free(deep);
    cwork_args_free(a);
}

int main(void)
{
    RUN(decode_rejections);
    RUN(decode_acceptances);
    RUN(decode_strings);
    RUN(duplicate_keys);
    RUN(merge_objects);
    RUN(deep_nesting);
    RUN(args_parse_rules);
    return tl_finish();
}
