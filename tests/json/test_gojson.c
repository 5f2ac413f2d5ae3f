/* gojson, encoding side: Go's json.Marshal bytes (PROTOCOL §3.2, §17.3, §17.4) for args
 * built in C and parsed from text, Go's float64 format, every escape class, and
 * independence from the C locale. Expected bytes come from PROTOCOL §3.2 or were printed by
 * Go; the one deliberate difference from the Go 1.19 oracle is \b / \f for 0x08 / 0x0C
 * (Go >= 1.22). Decoding is tested in test_gojson_decode.c. */
#include "gojson_testutil.h"

#include "args.h"
#include "gojson.h"
#include "job.h"

#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */
static void check_float(const char *file, int line, double d, const char *want)
{
    cw_buf b;
    cw_buf_init(&b);
    cw_gj_format_float(&b, d);
    tl_check_mem(file, line, want, b.data, b.len, want, strlen(want));
    cw_buf_free(&b);
}
#define FLOAT(d, want) check_float(__FILE__, __LINE__, d, want)

static char *args_json(const cwork_args *a)
{
    char *out = NULL;
    size_t len = 0;
    cwork_error err = {0};
    CHECK_INT(cwork_args_to_json(a, &out, &len, &err), 0);
    if (out) CHECK_INT(strlen(out), len);
    return out;
}

static char *suffix_of(const gj_value *args)
{
    cw_buf b;
    cw_buf_init(&b);
    CHECK_INT(cw_job_unique_args_suffix(&b, args, NULL), 0);
    cw_buf_putc(&b, '\0'); /* so that an empty suffix still gives a string */
    return cw_buf_take(&b, NULL);
}

/* -------------------------------------------------------------- worked vectors */

static void spec_18_2_numbers_from_setters(void)
{
    cwork_args *a = cwork_args_new();
    CHECK(a != NULL);
    CHECK_INT(cwork_args_set_float64(a, "whole", 3), 0);
    CHECK_INT(cwork_args_set_uint64(a, "u", UINT64_C(12345678901234567890)), 0);
    CHECK_INT(cwork_args_set_float64(a, "tiny", 1e-7), 0);
    CHECK_INT(cwork_args_set_bool(a, "t", true), 0);
    CHECK_INT(cwork_args_set_float64(a, "small", 0.000001), 0);
    CHECK_INT(cwork_args_set_null(a, "n"), 0);
    CHECK_INT(cwork_args_set_int64(a, "i", 1), 0);
    CHECK_INT(cwork_args_set_float64(a, "f", 1.5), 0);
    CHECK_INT(cwork_args_set_float64(a, "big", 1e21), 0);
    CHECK_INT(cwork_args_set_float64(a, "b20", 1e20), 0);
    char *got = args_json(a);
    CHECK_STR(got, "{\"b20\":100000000000000000000,\"big\":1e+21,\"f\":1.5,\"i\":1,\"n\":null,"
                   "\"small\":0.000001,\"t\":true,\"tiny\":1e-7,\"u\":12345678901234567890,"
                   "\"whole\":3}");
    cw_free(got);
    /* Setting a key again replaces it in place. */
    CHECK_INT(cwork_args_set_int64(a, "whole", 4), 0);
    CHECK_INT(cw_args_object(a)->as.obj.len, 10);
    CHECK_INT(cwork_args_set_float64(a, "x", NAN), CWORK_EJSON);
    CHECK_INT(cwork_args_set_float64(a, "x", INFINITY), CWORK_EJSON);
    CHECK_INT(cwork_args_set_float64(a, "x", -INFINITY), CWORK_EJSON);
    CHECK(cw_gj_object_get(cw_args_object(a), "x", 1) == NULL);
    cwork_args_free(a);
}

static void spec_18_2_numbers_from_text(void)
{
    /* As text every number is a float64, so the uint64 turns into its float form. */
    ROUNDTRIP("{\"whole\":3,\"u\":12345678901234567890,\"tiny\":1e-7,\"t\":true,"
              "\"small\":0.000001,\"n\":null,\"i\":1,\"f\":1.5,\"big\":1e21,\"b20\":1e20}",
              "{\"b20\":100000000000000000000,\"big\":1e+21,\"f\":1.5,\"i\":1,\"n\":null,"
              "\"small\":0.000001,\"t\":true,\"tiny\":1e-7,\"u\":12345678901234567000,"
              "\"whole\":3}");
}

static const char spec_s[] = "tab\there \"q\" back\\slash nl\n ctl\x01 bs\x08 ff\x0c del\x7f"
                             " u2028\xe2\x80\xa8 \xc3\xa9 /slash <>&";
/* Every escape class (PROTOCOL §3.2, §17.4), with \b and \f where Go 1.19 wrote \u0008 and
 * \u000c. */
static const char spec_s_json[] =
    "{\"bad\":\"\\ufffd\",\"s\":\"tab\\there \\\"q\\\" back\\\\slash nl\\n ctl\\u0001 bs\\b "
    "ff\\f del\x7f u2028\\u2028 \xc3\xa9 /slash \\u003c\\u003e\\u0026\"}";

static void spec_18_2_string_escaping(void)
{
    cwork_args *a = cwork_args_new();
    CHECK_INT(cwork_args_set_string(a, "s", spec_s), 0);
    CHECK_INT(cwork_args_set_string(a, "bad", "\xff"), 0);
    char *got = args_json(a);
    CHECK_STR(got, spec_s_json);
    cw_free(got);
    cwork_args_free(a);
    /* Parsed back, the same except that the escaped U+FFFD is now a valid character,
     * which Go writes raw. */
    gj_value *v = NULL;
    CHECK_INT(cw_gj_parse(spec_s_json, strlen(spec_s_json), &v, NULL), 0);
    got = encode_value(v);
    CHECK_STR(got + 11, spec_s_json + 14);
    CHECK_MEM(got, 11, "{\"bad\":\"\xef\xbf\xbd", 11);
    gj_value *s = cw_gj_object_get(v, "s", 1);
    CHECK(s && s->type == GJ_STRING);
    if (s) CHECK_MEM(s->as.s.ptr, s->as.s.len, spec_s, sizeof spec_s - 1);
    cw_free(got);
    cw_gj_free(v);
}

static void spec_18_3_unique_suffixes(void)
{
    cwork_args *a = cwork_args_new();
    CHECK_INT(cwork_args_set_string(a, "object_id_", "123"), 0);
    char *s = suffix_of(cw_args_object(a));
    CHECK_STR(s, "{\"object_id_\":\"123\"}\n");
    cw_free(s);
    cwork_args_free(a);

    s = suffix_of(NULL);
    CHECK_STR(s, "");
    cw_free(s);

    a = cwork_args_new();
    s = suffix_of(cw_args_object(a));
    CHECK_STR(s, "{}\n");
    cw_free(s);
    CHECK_INT(cwork_args_set_int64(a, "b", 2), 0);
    CHECK_INT(cwork_args_set_string(a, "a", "<&>"), 0);
    CHECK_INT(cwork_args_set_json(a, "c", "[1,\"z\"]", 7, NULL), 0);
    s = suffix_of(cw_args_object(a));
    CHECK_STR(s, "{\"a\":\"\\u003c\\u0026\\u003e\",\"b\":2,\"c\":[1,\"z\"]}\n");
    cw_free(s);
    cwork_args_free(a);

    const char *in = "{\"n\":9007199254740993,\"u\":12345678901234567890,\"f\":1.0,\"e\":1e3}";
    CHECK_INT(cwork_args_parse(in, strlen(in), &a, NULL), 0);
    s = suffix_of(cw_args_object(a));
    CHECK_STR(s, "{\"e\":1000,\"f\":1,\"n\":9007199254740992,\"u\":12345678901234567000}\n");
    cw_free(s);
    cwork_args_free(a);
}

/* ---------------------------------------------------------------- encoder */

static void float_format(void)
{
    FLOAT(1e21, "1e+21");
    FLOAT(1e20, "100000000000000000000");
    FLOAT(1e-7, "1e-7");
    FLOAT(0.000001, "0.000001");
    FLOAT(5e-324, "5e-324");
    FLOAT(1.7976931348623157e308, "1.7976931348623157e+308");
    FLOAT(-1.7976931348623157e308, "-1.7976931348623157e+308");
    FLOAT(-0.0, "-0");
    FLOAT(0.0, "0");
    FLOAT(0.1, "0.1");
    FLOAT(-0.1, "-0.1");
    FLOAT(1.5e-7, "1.5e-7");
    FLOAT(1.2345e+30, "1.2345e+30");
    FLOAT(123456789012345680000.0, "123456789012345680000");
    FLOAT(9007199254740993.0, "9007199254740992"); /* the literal rounds to 2^53 */
    FLOAT(12345678901234567890.0, "12345678901234567000");
    FLOAT(9007199254740994.0, "9007199254740994");
    FLOAT(-9007199254740991.0, "-9007199254740991");
    FLOAT(1e-6, "0.000001");
    FLOAT(9.99e-7, "9.99e-7");
    FLOAT(1.1e-6, "0.0000011");
    FLOAT(1e-5, "0.00001");
    FLOAT(9.999999999999999e20, "999999999999999900000");
    FLOAT(1e23, "1e+23");
    FLOAT(8.41e21, "8.41e+21");
    FLOAT(2.0 / 3, "0.6666666666666666");
    FLOAT(123.456, "123.456");
    FLOAT(4.35, "4.35");
    FLOAT(0.3, "0.3");
    FLOAT(1e15, "1000000000000000");
    FLOAT(1e17, "100000000000000000");
    FLOAT(1.5e300, "1.5e+300");
    FLOAT(5e-310, "5e-310");
    FLOAT(1e-323, "1e-323");
    FLOAT(1.5e-323, "1.5e-323");
    FLOAT(1.0000000000000002, "1.0000000000000002");
    FLOAT(0.9999999999999999, "0.9999999999999999");
    FLOAT(2.225073858507201e-308, "2.225073858507201e-308");
    /* Powers of two: the neighbour below is twice as close as the one above; the
     * expected texts were printed by Go. */
    FLOAT(ldexp(1, -44), "5.684341886080802e-14");
    FLOAT(ldexp(1, -1022), "2.2250738585072014e-308");
    FLOAT(ldexp(1, 1023), "8.98846567431158e+307");
    FLOAT(ldexp(1, 60), "1152921504606847000");
    FLOAT(ldexp(1, 63), "9223372036854776000");
    FLOAT(ldexp(1, 64), "18446744073709552000");
    FLOAT(ldexp(1, 80), "1.2089258196146292e+24");
    FLOAT(ldexp(1, 100), "1.2676506002282294e+30");
    FLOAT(ldexp(1, -100), "7.888609052210118e-31");
    FLOAT(ldexp(1, -20), "9.5367431640625e-7");
    FLOAT(ldexp(1, 976), "6.386688990511104e+293");
}

static void float_round_trips(void)
{
    /* Every printed value reads back as the same double, across the whole range. */
    uint64_t x = 0x9E3779B97F4A7C15u;
    int bad = 0;
    for (int i = 0; i < 20000 && bad < 5; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d;
        memcpy(&d, &x, sizeof d);
        if (!isfinite(d)) continue;
        cw_buf b;
        cw_buf_init(&b);
        cw_gj_format_float(&b, d);
        gj_value *v = NULL;
        if (cw_gj_parse(b.data, b.len, &v, NULL) != 0 || v->type != GJ_FLOAT ||
            memcmp(&v->as.f, &d, sizeof d) != 0) {
            tl_fail(__FILE__, __LINE__, "%a printed as %s does not read back", d, b.data);
            bad++;
        }
        cw_gj_free(v);
        cw_buf_free(&b);
    }
}

static void non_finite_refused(void)
{
    double bad[] = {NAN, INFINITY, -INFINITY};
    for (int i = 0; i < 3; i++) {
        gj_value *obj = cw_gj_new_object();
        CHECK_INT(cw_gj_object_set(obj, "x", 1, cw_gj_new_float(bad[i])), 0);
        cw_buf b;
        cw_buf_init(&b);
        cwork_error err = {0};
        CHECK_INT(cw_gj_encode(&b, obj, &err), CWORK_EJSON);
        CHECK(strstr(err.message, "unsupported value") != NULL);
        cw_buf_free(&b);
        cw_gj_free(obj);
    }
}

static void escape_every_ascii_byte(void)
{
    for (int c = 0; c < 128; c++) {
        char in = (char)c, want[16];
        switch (c) {
        case '"':
            strcpy(want, "\"\\\"\"");
            break;
        case '\\':
            strcpy(want, "\"\\\\\"");
            break;
        case '\n':
            strcpy(want, "\"\\n\"");
            break;
        case '\r':
            strcpy(want, "\"\\r\"");
            break;
        case '\t':
            strcpy(want, "\"\\t\"");
            break;
        case '\b':
            strcpy(want, "\"\\b\"");
            break;
        case '\f':
            strcpy(want, "\"\\f\"");
            break;
        case '<':
        case '>':
        case '&':
            snprintf(want, sizeof want, "\"\\u00%02x\"", c);
            break;
        default:
            if (c < 0x20)
                snprintf(want, sizeof want, "\"\\u00%02x\"", c);
            else
                snprintf(want, sizeof want, "\"%c\"", c);
        }
        cw_buf b;
        cw_buf_init(&b);
        cw_gj_encode_string(&b, &in, 1);
        CHECK_MEM(b.data, b.len, want, strlen(want));
        cw_buf_free(&b);
    }
}

static void escape_utf8(void)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"\xc3\xa9", "\"\xc3\xa9\""},
        {"\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""},             /* 4 bytes, raw */
        {"\xef\xbf\xbd", "\"\xef\xbf\xbd\""},                     /* a real U+FFFD stays raw */
        {"\xe2\x80\xa8\xe2\x80\xa9", "\"\\u2028\\u2029\""},       /* JS line ends */
        {"\xe2\x80\xaa", "\"\xe2\x80\xaa\""},                     /* U+202A is not special */
        {"\x80", "\"\\ufffd\""},                                  /* lone continuation */
        {"\xc0\xaf", "\"\\ufffd\\ufffd\""},                       /* overlong '/' */
        {"\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\""},            /* overlong */
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},            /* UTF-8 surrogate */
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* > U+10FFFF */
        {"\xf5\x80", "\"\\ufffd\\ufffd\""},
        {"\xe2\x82", "\"\\ufffd\\ufffd\""}, /* truncated at the end */
        {"\xe2\x82"
         "A",
         "\"\\ufffd\\ufffdA\""},
        {"a\xff"
         "b\xfe",
         "\"a\\ufffdb\\ufffd\""},
        {"\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\""}, /* U+10FFFF */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cw_buf b;
        cw_buf_init(&b);
        cw_gj_encode_string(&b, cases[i].in, strlen(cases[i].in));
        CHECK_MEM(b.data, b.len, cases[i].want, strlen(cases[i].want));
        cw_buf_free(&b);
    }
    /* NUL inside a string. */
    cw_buf b;
    cw_buf_init(&b);
    cw_gj_encode_string(&b, "a\0b", 3);
    CHECK_STR(b.data, "\"a\\u0000b\"");
    cw_buf_free(&b);
}

static void long_string_escaping(void)
{
    /* Long enough to cross the encoder's 4096-byte chunks with escapes everywhere. */
    size_t n = 20000;
    char *s = malloc(n);
    for (size_t i = 0; i < n; i++)
        s[i] = (char)(i % 3 == 0 ? '<' : i % 3 == 1 ? '\xff' : 'a');
    cw_buf b;
    cw_buf_init(&b);
    cw_gj_encode_string(&b, s, n);
    CHECK(!b.oom);
    CHECK_INT(b.len, 2 + (n / 3) * (6 + 6 + 1) + (n % 3 >= 1 ? 6 : 0) + (n % 3 >= 2 ? 6 : 0));
    /* Three-byte sequences straddling a chunk border. */
    for (size_t i = 0; i + 3 <= n; i += 3)
        memcpy(s + i, "\xe2\x80\xa8", 3);
    cw_buf_reset(&b);
    cw_gj_encode_string(&b, s, n - n % 3);
    CHECK_INT(b.len, 2 + (n / 3) * 6);
    cw_buf_free(&b);
    free(s);
}

static void nested_values_and_sorting(void)
{
    ROUNDTRIP("{}", "{}");
    ROUNDTRIP("[]", "[]");
    ROUNDTRIP("null", "null");
    ROUNDTRIP(" true ", "true");
    ROUNDTRIP("\"\\/\"", "\"/\"");
    ROUNDTRIP("{\"z\":[1,[2,{}],[],{\"b\":null,\"a\":[true,false]}],\"a\":{\"y\":{},\"x\":[]}}",
              "{\"a\":{\"x\":[],\"y\":{}},\"z\":[1,[2,{}],[],{\"a\":[true,false],\"b\":null}]}");
    /* Byte-wise order, a shorter prefix first; keys are escaped after sorting. */
    ROUNDTRIP("{\"\xc3\xa9\":1,\"ab\":2,\"a\\u0000\":3,\"a\":4,\"B\":5,\"\":6,\"<\":7}",
              "{\"\":6,\"\\u003c\":7,\"B\":5,\"a\":4,\"a\\u0000\":3,\"ab\":2,\"\xc3\xa9\":1}");
    /* Large object (sorted with qsort). */
    char in[4096], want[4096];
    size_t a = 0, b = 0;
    a += (size_t)snprintf(in + a, sizeof in - a, "{");
    b += (size_t)snprintf(want + b, sizeof want - b, "{");
    for (int i = 99; i >= 0; i--)
        a += (size_t)snprintf(in + a, sizeof in - a, "%s\"k%02d\":%d", i == 99 ? "" : ",", i, i);
    for (int i = 0; i < 100; i++)
        b += (size_t)snprintf(want + b, sizeof want - b, "%s\"k%02d\":%d", i ? "," : "", i, i);
    snprintf(in + a, sizeof in - a, "}");
    snprintf(want + b, sizeof want - b, "}");
    gj_value *v = NULL;
    CHECK_INT(cw_gj_parse(in, strlen(in), &v, NULL), 0);
    char *got = encode_value(v);
    CHECK_STR(got, want);
    cw_free(got);
    gj_value *d = cw_gj_dup(v);
    got = encode_value(d);
    CHECK_STR(got, want);
    cw_free(got);
    cw_gj_free(d);
    cw_gj_free(v);
}

/* ---------------------------------------------------------------- locale */

/* Tries to switch LC_ALL to a locale whose decimal point is ','. A system without
 * de_DE gets one built with localedef into a temporary directory (LOCPATH). */
static int use_comma_locale(char *dir, size_t size)
{
    dir[0] = '\0';
    if (setlocale(LC_ALL, "de_DE.UTF-8") || setlocale(LC_ALL, "de_DE.utf8")) return 1;
    snprintf(dir, size, "/tmp/cwork-locale-XXXXXX");
    if (!mkdtemp(dir)) return 0;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", dir);
    if (system(cmd) != 0) return 0;
    setenv("LOCPATH", dir, 1);
    return setlocale(LC_ALL, "de_DE.UTF-8") != NULL;
}

static void independent_of_locale(void)
{
    char dir[64];
    if (!use_comma_locale(dir, sizeof dir)) {
        printf("  (no comma-decimal locale available; locale case not exercised)\n");
    } else {
        char probe[16];
        snprintf(probe, sizeof probe, "%.1f", 1.5);
        CHECK_STR(probe, "1,5"); /* the locale is really active */
        /* The slow path of the parser (strtod) and the formatter. */
        ROUNDTRIP("[1.5,0.1,1.2345678901234567e-300,123456789012345678901234567890,1e21]",
                  "[1.5,0.1,1.2345678901234568e-300,1.2345678901234568e+29,1e+21]");
        FLOAT(2.5e-8, "2.5e-8");
        setlocale(LC_ALL, "C");
    }
    if (dir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK_INT(system(cmd), 0);
        unsetenv("LOCPATH");
    }
}

/* ---------------------------------------------------------------- speed (informative) */

static void encode_speed(void)
{
    cwork_args *a = cwork_args_new();
    cwork_args_set_float64(a, "i", 5);
    cwork_args_set_string(a, "s", "hello world");
    cwork_args_set_float64(a, "f", 1.5);
    cwork_args_set_int64(a, "n", 1234567);
    cw_buf b;
    cw_buf_init(&b);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int n = 200000;
    for (int i = 0; i < n; i++) {
        cw_buf_reset(&b);
        cw_gj_encode(&b, cw_args_object(a), NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("  encode: %.0f args objects/s (%s)\n", n / s, b.data);
    cw_buf_free(&b);
    cwork_args_free(a);
}

int main(void)
{
    RUN(spec_18_2_numbers_from_setters);
    RUN(spec_18_2_numbers_from_text);
    RUN(spec_18_2_string_escaping);
    RUN(spec_18_3_unique_suffixes);
    RUN(float_format);
    RUN(float_round_trips);
    RUN(non_finite_refused);
    RUN(escape_every_ascii_byte);
    RUN(escape_utf8);
    RUN(long_string_escaping);
    RUN(nested_values_and_sorting);
    RUN(independent_of_locale);
    RUN(encode_speed);
    return tl_finish();
}
