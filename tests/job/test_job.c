/* The job record: Go's decoding rules for the Job struct (PROTOCOL §3.3), the canonical
 * encoding (§3.1, §17.2, §17.5), cjson-shaped input (§17.6), and the typed argument
 * accessors with Go's error texts (§3.7). */
#include "testlib.h"

#include "args.h"
#include "job.h"

#include <math.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- helpers */

static cwork_job *decode(const char *s)
{
    cwork_job *job = NULL;
    cwork_error err = {0};
    int rc = cwork_job_decode(s, strlen(s), &job, &err);
    if (rc != 0) fprintf(stderr, "  decode failed (%s): %s\n", err.message, s);
    return job;
}

static char *encode(const cwork_job *job)
{
    char *out = NULL;
    size_t len = 0;
    CHECK_INT(cwork_job_encode(job, &out, &len, NULL), 0);
    if (out) CHECK_INT(strlen(out), len);
    return out;
}

/* Decodes in and checks the canonical encoding. */
#define REENCODE(in, want) reencode(__FILE__, __LINE__, in, want)
static void reencode(const char *file, int line, const char *in, const char *want)
{
    cwork_job *job = NULL;
    cwork_error err = {0};
    if (cwork_job_decode(in, strlen(in), &job, &err) != 0) {
        tl_fail(file, line, "decode failed (%s): %s", err.message, in);
        return;
    }
    char *got = encode(job);
    if (got) tl_check_mem(file, line, in, got, strlen(got), want, strlen(want));
    cw_free(got);
    cwork_job_free(job);
}

#define REJECT(in) reject(__FILE__, __LINE__, in)
static void reject(const char *file, int line, const char *in)
{
    cwork_job *job = (cwork_job *)(uintptr_t)1;
    cwork_error err = {0};
    int rc = cwork_job_decode(in, strlen(in), &job, &err);
    if (rc != CWORK_EJSON)
        tl_fail(file, line, "decode returned %d, expected CWORK_EJSON: %s", rc, in);
    else if (job != (cwork_job *)(uintptr_t)1)
        tl_fail(file, line, "*out was written on failure: %s", in);
    else if (strncmp(err.message, "json: ", 6) != 0)
        tl_fail(file, line, "unexpected message \"%s\" for %s", err.message, in);
    if (rc == 0) cwork_job_free(job);
}

/* -------------------------------------------------------------- worked vectors */

static const char *const canonical_jobs[] = {
    /* jobs, laid out as in §17.2 */
    "{\"name\":\"send_email\",\"id\":\"0123456789abcdef01234567\",\"t\":1700000000,\"args\":{"
    "\"address\":\"test@example.com\",\"customer_id\":4,\"subject\":\"hello world\"}}",
    "{\"name\":\"noargs\",\"id\":\"0123456789abcdef01234567\",\"t\":1700000000,\"args\":null}",
    "{\"name\":\"emptyargs\",\"id\":\"0123456789abcdef01234567\",\"t\":1700000000,\"args\":{}}",
    "{\"name\":\"clear_cache\",\"id\":\"0123456789abcdef01234567\",\"t\":1700000000,\"args\":{"
    "\"object_id_\":\"123\"},\"unique\":true}",
    "{\"name\":\"send_email\",\"id\":\"0123456789abcdef01234567\",\"t\":1700000000,\"args\":{"
    "\"address\":\"test@example.com\"},\"fails\":1,\"err\":\"smtp: 550 \\u003crejected\\u003e\","
    "\"failed_at\":1700000005}",
    "{\"name\":\"traced\",\"id\":\"0123456789abcdef01234567\",\"t\":1700000000,\"args\":{\"a\":"
    "\"b\"},\"trace\":{\"traceparent\":\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-"
    "01\"}}",
    /* periodic instances, laid out as in §17.5 */
    "{\"name\":\"calc\",\"id\":\"periodic:calc:0 * * * * *:1700000040\",\"t\":1700000040,"
    "\"args\":null,\"d\":1700000100}",
    "{\"name\":\"bar\",\"id\":\"periodic:bar:3/49 * * * * *:1468359472\",\"t\":1468359472,"
    "\"args\":null,\"d\":1468359483}",
    /* every field at once */
    "{\"name\":\"x\",\"id\":\"y\",\"t\":-1,\"args\":{\"a\":[1,{\"b\":null}]},\"unique\":true,"
    "\"fails\":9223372036854775807,\"err\":\"e\",\"failed_at\":-9223372036854775808,\"d\":1,"
    "\"trace\":{\"traceparent\":\"p\",\"tracestate\":\"s\"}}",
};

static void spec_vectors_are_fixed_points(void)
{
    for (size_t i = 0; i < sizeof canonical_jobs / sizeof canonical_jobs[0]; i++) {
        REENCODE(canonical_jobs[i], canonical_jobs[i]);
        cwork_job *job = decode(canonical_jobs[i]);
        size_t len = 0;
        const char *raw = cwork_job_raw(job, &len);
        CHECK_MEM(raw, len, canonical_jobs[i], strlen(canonical_jobs[i]));
        cwork_job_free(job);
    }
}

static void failed_job_vector(void)
{
    cwork_job *job = decode("{\"name\":\"send_email\",\"id\":\"0123456789abcdef01234567\","
                            "\"t\":1700000000,\"args\":{\"address\":\"test@example.com\"}}");
    CHECK(job != NULL);
    if (!job) return;
    job->fails++;
    CHECK_INT(cw_job_set_str(&job->err, "smtp: 550 <rejected>", 20), 0);
    job->failed_at = 1700000005;
    char *got = encode(job);
    CHECK_STR(got, canonical_jobs[4]);
    cw_free(got);
    CHECK_STR(cwork_job_last_error(job), "smtp: 550 <rejected>");
    CHECK_INT(cwork_job_fails(job), 1);
    CHECK_INT(cwork_job_failed_at(job), 1700000005);
    cwork_job_free(job);
}

static void field_accessors(void)
{
    cwork_job *job = decode(canonical_jobs[8]);
    CHECK_STR(cwork_job_name(job), "x");
    CHECK_STR(cwork_job_id(job), "y");
    CHECK_INT(cwork_job_enqueued_at(job), -1);
    CHECK(cwork_job_unique(job));
    CHECK_INT(cwork_job_fails(job), INT64_MAX);
    CHECK_STR(cwork_job_last_error(job), "e");
    CHECK(cwork_job_failed_at(job) == INT64_MIN);
    CHECK_INT(cwork_job_periodic_deadline(job), 1);
    CHECK_INT(cwork_job_run_at(job), 0);
    char *args = cwork_job_args_json(job);
    CHECK_STR(args, "{\"a\":[1,{\"b\":null}]}");
    cw_free(args);
    cwork_job_free(job);

    /* A new job: every string is "", args null. */
    job = cw_job_new();
    CHECK_STR(cwork_job_name(job), "");
    CHECK_STR(cwork_job_last_error(job), "");
    char *got = encode(job);
    CHECK_STR(got, "{\"id\":\"\",\"t\":0,\"args\":null}");
    cw_free(got);
    args = cwork_job_args_json(job);
    CHECK_STR(args, "null");
    cw_free(args);
    size_t len = 99;
    CHECK_STR(cwork_job_raw(job, &len), "");
    CHECK_INT(len, 0);
    cwork_job_free(job);
}

static void cjson_shapes(void)
{
    /* §17.6: what Redis' cjson writes back (key order arbitrary, \/ escapes, %.14g
     * numbers, {} for empty arrays, raw HTML characters and U+2028). */
    REENCODE("{\"name\":\"bar\",\"args\":null,\"id\":\"periodic:bar:3\\/49 * * * * "
             "*:1468359472\",\"t\":1468359472,\"d\":1468359483}",
             "{\"name\":\"bar\",\"id\":\"periodic:bar:3/49 * * * * *:1468359472\",\"t\":"
             "1468359472,\"args\":null,\"d\":1468359483}");
    REENCODE("{\"args\":{\"s\":\"<& \xc3\xa9 \xe2\x80\xa8\",\"list\":{},\"e\":1e+21,\"f\":0.1,"
             "\"obj\":{},\"big\":1.2345678901235e+16}}",
             "{\"id\":\"\",\"t\":0,\"args\":{\"big\":12345678901235000,\"e\":1e+21,\"f\":0.1,"
             "\"list\":{},\"obj\":{},\"s\":\"\\u003c\\u0026 \xc3\xa9 \\u2028\"}}");
    REENCODE("{\"id\":\"x\",\"t\":1700000000,\"name\":\"a\",\"args\":{}}",
             "{\"name\":\"a\",\"id\":\"x\",\"t\":1700000000,\"args\":{}}");
    /* null inside args is kept; white space anywhere. */
    REENCODE(" {\n\t\"args\" : { \"n\" : null } , \"t\" : 5 }\r\n",
             "{\"id\":\"\",\"t\":5,\"args\":{\"n\":null}}");
}

/* ---------------------------------------------------------------- decoding rules */

static void unknown_fields_dropped(void)
{
    /* Unknown fields disappear; their values are only checked for syntax, so a number
     * Go could not hold does no harm there. Upstream's unique_key is a field (it names
     * the job's guard) and is kept, in upstream's place after unique. */
    REENCODE("{\"name\":\"a\",\"id\":\"x\",\"t\":1,\"args\":null,\"unique_key\":\"k\\n\","
             "\"extra\":[1,{\"z\":1e400}],\"run_at\":5}",
             "{\"name\":\"a\",\"id\":\"x\",\"t\":1,\"args\":null,\"unique_key\":\"k\\n\"}");
    REJECT("{\"extra\":[1,}");
    REJECT("{\"extra\":01}");
}

static void case_insensitive_names(void)
{
    REENCODE("{\"NAME\":\"a\",\"Id\":\"x\",\"T\":5,\"ARGS\":{\"k\":1},\"Unique\":true,"
             "\"FAILS\":2,\"Err\":\"e\",\"FAILED_AT\":3,\"D\":4,\"TRACE\":{\"tp\":\"v\"}}",
             "{\"name\":\"a\",\"id\":\"x\",\"t\":5,\"args\":{\"k\":1},\"unique\":true,"
             "\"fails\":2,\"err\":\"e\",\"failed_at\":3,\"d\":4,\"trace\":{\"tp\":\"v\"}}");
    /* Go folds U+017F LATIN SMALL LETTER LONG S to 's' (and U+212A KELVIN SIGN to 'k';
     * none of the names has a k). Escaped names match too. */
    REENCODE("{\"ARG\xc5\xbf\":{\"k\":1},\"fail\xc5\xbf\":3,\"n\\u0061me\":\"q\"}",
             "{\"name\":\"q\",\"id\":\"\",\"t\":0,\"args\":{\"k\":1},\"fails\":3}");
    /* unique_key folds like the others (U+212A KELVIN SIGN for its k); a non-string is
     * Go's type error; null leaves it empty. */
    REENCODE("{\"UNIQUE_\xe2\x84\xaa"
             "EY\":\"g\",\"unique\":true,\"d\":9,\"fails\":1}",
             "{\"id\":\"\",\"t\":0,\"args\":null,\"unique\":true,\"unique_key\":\"g\","
             "\"fails\":1,\"d\":9}");
    REJECT("{\"unique_key\":1}");
    REENCODE("{\"unique_key\":null}", "{\"id\":\"\",\"t\":0,\"args\":null}");
    /* Near misses are unknown fields. */
    REENCODE("{\"nam\xc3\xa9\":\"a\",\"name \":\"b\",\"failedat\":1,\"failed-at\":2,\"i\":3,"
             "\"\xe2\x84\xaa"
             "ey\":1,\"\":0}",
             "{\"id\":\"\",\"t\":0,\"args\":null}");
}

static void duplicate_fields(void)
{
    REENCODE("{\"name\":\"a\",\"name\":\"b\"}",
             "{\"name\":\"b\",\"id\":\"\",\"t\":0,\"args\":null}");
    REENCODE("{\"t\":1,\"T\":2}", "{\"id\":\"\",\"t\":2,\"args\":null}");
    /* null leaves strings, integers and booleans as they were */
    REENCODE("{\"t\":5,\"t\":null,\"name\":\"n\",\"name\":null,\"unique\":true,\"unique\":null}",
             "{\"name\":\"n\",\"id\":\"\",\"t\":5,\"args\":null,\"unique\":true}");
    /* A second object for a map field adds to the first (Go reuses the map); null
     * resets it. */
    REENCODE("{\"args\":{\"a\":1,\"b\":2},\"args\":{\"b\":3,\"c\":4}}",
             "{\"id\":\"\",\"t\":0,\"args\":{\"a\":1,\"b\":3,\"c\":4}}");
    REENCODE("{\"args\":{\"a\":1},\"args\":null}", "{\"id\":\"\",\"t\":0,\"args\":null}");
    REENCODE("{\"args\":null,\"Args\":{\"a\":1}}", "{\"id\":\"\",\"t\":0,\"args\":{\"a\":1}}");
    REENCODE("{\"trace\":{\"a\":\"1\"},\"trace\":{\"b\":\"2\"}}",
             "{\"id\":\"\",\"t\":0,\"args\":null,\"trace\":{\"a\":\"1\",\"b\":\"2\"}}");
    /* Inside args the last duplicate wins. */
    REENCODE("{\"args\":{\"a\":1,\"a\":{\"x\":2}}}",
             "{\"id\":\"\",\"t\":0,\"args\":{\"a\":{\"x\":2}}}");
}

static void integer_fields(void)
{
    const char *fields[] = {"t", "fails", "failed_at", "d"};
    for (int f = 0; f < 4; f++) {
        char in[128], want[128];
        const char *ok[][2] = {{"-0", "0"},
                               {"9223372036854775807", "9223372036854775807"},
                               {"-9223372036854775808", "-9223372036854775808"},
                               {"null", "0"},
                               {"17", "17"}};
        for (int i = 0; i < 5; i++) {
            snprintf(in, sizeof in, "{\"%s\":%s}", fields[f], ok[i][0]);
            cwork_job *job = decode(in);
            CHECK(job != NULL);
            if (!job) continue;
            int64_t v = f == 0 ? job->t : f == 1 ? job->fails : f == 2 ? job->failed_at : job->d;
            snprintf(want, sizeof want, "%lld", (long long)v);
            CHECK_STR(want, ok[i][1]);
            cwork_job_free(job);
        }
        const char *bad[] = {"1e3",
                             "1.0",
                             "\"5\"",
                             "9223372036854775808",
                             "-9223372036854775809",
                             "true",
                             "[]",
                             "{}",
                             "1e400",
                             "0.5",
                             "-1E2"};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            snprintf(in, sizeof in, "{\"%s\":%s}", fields[f], bad[i]);
            REJECT(in);
        }
    }
    cwork_error err = {0};
    cwork_job *job = NULL;
    CHECK_INT(cwork_job_decode("{\"t\":1e3}", 9, &job, &err), CWORK_EJSON);
    CHECK_STR(err.message, "json: cannot unmarshal number 1e3 into Go struct field Job.t of "
                           "type int64");
}

static void typed_fields(void)
{
    REJECT("{\"name\":5}");
    REJECT("{\"id\":true}");
    REJECT("{\"err\":{}}");
    REJECT("{\"unique\":\"true\"}");
    REJECT("{\"unique\":1}");
    REJECT("{\"args\":[]}");
    REJECT("{\"args\":\"x\"}");
    REJECT("{\"args\":5}");
    REJECT("{\"args\":{\"a\":1e400}}");
    REJECT("{\"trace\":[]}");
    REJECT("{\"trace\":{\"a\":1}}");
    REJECT("{\"trace\":{\"a\":{}}}");
    /* trace is a map of strings: null gives "" as in Go */
    REENCODE("{\"trace\":{\"a\":null}}",
             "{\"id\":\"\",\"t\":0,\"args\":null,\"trace\":{\"a\":\"\"}}");
    REENCODE("{\"trace\":{}}", "{\"id\":\"\",\"t\":0,\"args\":null}");
    REENCODE("{\"trace\":null,\"unique\":false,\"fails\":0,\"err\":\"\",\"d\":0}",
             "{\"id\":\"\",\"t\":0,\"args\":null}");
}

static void top_level(void)
{
    REJECT("null");
    REJECT("[]");
    REJECT("\"x\"");
    REJECT("5");
    REJECT("true");
    REJECT("");
    REJECT("   ");
    REJECT("{} x");
    REJECT("{}{}");
    REJECT("{");
    REJECT("{\"name\":\"a\"");
    REJECT("{\"name\":\"a\",}");
    REJECT("{,}");
    REJECT("{\"name\" \"a\"}");
    REJECT("{name:\"a\"}");
    REJECT("{\"name\":\"a\" \"id\":\"b\"}");
    REENCODE("{}", "{\"id\":\"\",\"t\":0,\"args\":null}");
    REENCODE(" { } ", "{\"id\":\"\",\"t\":0,\"args\":null}");
    /* Raw bytes are kept exactly, including the white space. */
    const char in[] = " {\"name\":\"\xff\"} \n";
    cwork_job *job = NULL;
    CHECK_INT(cwork_job_decode(in, sizeof in - 1, &job, NULL), 0);
    size_t len = 0;
    const char *raw = cwork_job_raw(job, &len);
    CHECK_MEM(raw, len, in, sizeof in - 1);
    CHECK_STR(cwork_job_name(job), "\xef\xbf\xbd");
    cwork_job_free(job);
    CHECK_INT(cwork_job_decode(NULL, 0, &job, NULL), CWORK_EJSON);
    CHECK_INT(cwork_job_decode("{}", 2, NULL, NULL), CWORK_EINVAL);
}

/* ---------------------------------------------------------------- typed accessors */

static void typed_accessors(void)
{
    cwork_job *job = decode(
        "{\"args\":{\"s\":\"str\",\"i\":5,\"f\":1.5,\"b\":true,\"n\":null,"
        "\"big\":9007199254740892,\"big2\":9007199254740893,\"neg\":-9007199254740892,"
        "\"neg2\":-9007199254740893,\"o\":{\"z\":[1,\"x y\",null,true,{\"k\":2}],\"a\":\"q\"},"
        "\"l\":[],\"e\":1234567,\"tiny\":0.00001,\"huge\":1e300,\"m\":-0}}");
    CHECK(job != NULL);
    if (!job) return;
    CHECK(cwork_job_arg_error(job) == NULL);
    CHECK_STR(cwork_job_arg_string(job, "s"), "str");
    CHECK_INT(cwork_job_arg_int64(job, "i"), 5);
    CHECK_INT(cwork_job_arg_int64(job, "big"), 9007199254740892);
    CHECK_INT(cwork_job_arg_int64(job, "neg"), -9007199254740892);
    CHECK_INT(cwork_job_arg_int64(job, "m"), 0);
    CHECK(cwork_job_arg_float64(job, "f") == 1.5);
    CHECK(cwork_job_arg_float64(job, "i") == 5.0);
    CHECK(cwork_job_arg_bool(job, "b"));
    CHECK(cwork_job_arg_error(job) == NULL);

    struct {
        int kind; /* 0 string, 1 int64, 2 float64, 3 bool */
        const char *key, *want;
    } cases[] = {
        {1, "big2",
         "looking for a int64 in job.Arg[big2] but value wasn't right type: "
         "float64(9.007199254740893e+15)"},
        {1, "neg2",
         "looking for a int64 in job.Arg[neg2] but value wasn't right type: "
         "float64(-9.007199254740893e+15)"},
        {1, "f", "looking for a int64 in job.Arg[f] but value wasn't right type: float64(1.5)"},
        {1, "huge",
         "looking for a int64 in job.Arg[huge] but value wasn't right type: "
         "float64(1e+300)"},
        {1, "nope", "looking for a int64 in job.Arg[nope] but key wasn't found"},
        {0, "i", "looking for a string in job.Arg[i] but value wasn't right type: float64(5)"},
        {0, "e",
         "looking for a string in job.Arg[e] but value wasn't right type: "
         "float64(1.234567e+06)"},
        {0, "tiny",
         "looking for a string in job.Arg[tiny] but value wasn't right type: "
         "float64(1e-05)"},
        {0, "m", "looking for a string in job.Arg[m] but value wasn't right type: float64(-0)"},
        {2, "s", "looking for a float64 in job.Arg[s] but value wasn't right type: string(str)"},
        {2, "b", "looking for a float64 in job.Arg[b] but value wasn't right type: bool(true)"},
        {3, "n", "looking for a bool in job.Arg[n] but value wasn't right type: <nil>(<nil>)"},
        {3, "o",
         "looking for a bool in job.Arg[o] but value wasn't right type: "
         "map[string]interface {}(map[a:q z:[1 x y <nil> true map[k:2]]])"},
        {3, "l",
         "looking for a bool in job.Arg[l] but value wasn't right type: "
         "[]interface {}([])"},
        {3, "nope", "looking for a bool in job.Arg[nope] but key wasn't found"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        switch (cases[i].kind) {
        case 0:
            CHECK_STR(cwork_job_arg_string(job, cases[i].key), "");
            break;
        case 1:
            CHECK_INT(cwork_job_arg_int64(job, cases[i].key), 0);
            break;
        case 2:
            CHECK(cwork_job_arg_float64(job, cases[i].key) == 0.0);
            break;
        default:
            CHECK(!cwork_job_arg_bool(job, cases[i].key));
            break;
        }
        CHECK_STR(cwork_job_arg_error(job), cases[i].want);
        /* Sticky: a later success keeps the error. */
        CHECK_STR(cwork_job_arg_string(job, "s"), "str");
        CHECK_STR(cwork_job_arg_error(job), cases[i].want);
    }
    cwork_job_free(job);

    /* No args at all. */
    job = decode("{\"args\":null}");
    CHECK_STR(cwork_job_arg_string(job, "a"), "");
    CHECK_STR(cwork_job_arg_error(job), "looking for a string in job.Arg[a] but key wasn't found");
    cwork_job_free(job);

    /* In-process values keep their Go kind: int64 and uint64. */
    cwork_args *a = cwork_args_new();
    cwork_args_set_int64(a, "i", INT64_MIN);
    cwork_args_set_uint64(a, "u", UINT64_MAX);
    cwork_args_set_uint64(a, "u2", (uint64_t)INT64_MAX);
    job = cw_job_new();
    job->args = cw_gj_dup(cw_args_object(a));
    cwork_args_free(a);
    CHECK(cwork_job_arg_int64(job, "i") == INT64_MIN);
    CHECK_INT(cwork_job_arg_int64(job, "u2"), INT64_MAX);
    CHECK(cwork_job_arg_float64(job, "u") == 18446744073709551615.0);
    CHECK(cwork_job_arg_error(job) == NULL);
    CHECK_INT(cwork_job_arg_int64(job, "u"), 0);
    CHECK_STR(cwork_job_arg_error(job), "looking for a int64 in job.Arg[u] but value wasn't "
                                        "right type: uint64(18446744073709551615)");
    CHECK_STR(cwork_job_arg_string(job, "i"), "");
    CHECK_STR(cwork_job_arg_error(job), "looking for a string in job.Arg[i] but value wasn't "
                                        "right type: int64(-9223372036854775808)");
    char *got = encode(job);
    CHECK_STR(got, "{\"id\":\"\",\"t\":0,\"args\":{\"i\":-9223372036854775808,"
                   "\"u\":18446744073709551615,\"u2\":9223372036854775807}}");
    cw_free(got);
    cwork_job_free(job);
}

/* ---------------------------------------------------------------- big and odd jobs */

static void large_job(void)
{
    /* About 1 MiB: many keys, long strings with escapes and invalid bytes, numbers. */
    cw_buf in;
    cw_buf_init(&in);
    cw_buf_puts(&in, "{\"name\":\"big\",\"id\":\"x\",\"t\":1,\"args\":{");
    for (int i = 0; i < 6000; i++) {
        cw_buf_printf(&in, "%s\"key%05d\":", i ? "," : "", 5999 - i);
        if (i % 3 == 0) {
            cw_buf_putc(&in, '"');
            for (int k = 0; k < 500; k++)
                cw_buf_puts(&in, k % 50 == 0 ? "<\\n\xff" : "a");
            cw_buf_putc(&in, '"');
        } else if (i % 3 == 1) {
            cw_buf_printf(&in, "[%d.25,%de-3,{\"k\":\"\\u00e9\"}]", i, i);
        } else {
            cw_buf_printf(&in, "%d", i * 7919);
        }
    }
    cw_buf_puts(&in, "}}");
    CHECK(in.len > 300000);

    cwork_job *job = NULL;
    CHECK_INT(cwork_job_decode(in.data, in.len, &job, NULL), 0);
    char *first = job ? encode(job) : NULL;
    CHECK(first != NULL);
    cwork_job *again = NULL;
    if (first) CHECK_INT(cwork_job_decode(first, strlen(first), &again, NULL), 0);
    char *second = again ? encode(again) : NULL;
    CHECK(first && second && strcmp(first, second) == 0);
    /* Keys are written sorted: key00000 first. */
    const char *prefix = "{\"name\":\"big\",\"id\":\"x\",\"t\":1,\"args\":{\"key00000\":";
    CHECK(first && strncmp(first, prefix, strlen(prefix)) == 0);
    CHECK(first && strlen(first) > 1000000);
    cw_free(first);
    cw_free(second);
    cwork_job_free(job);
    cwork_job_free(again);
    cw_buf_free(&in);
}

static void trace_round_trip(void)
{
    cwork_job *job = decode("{\"trace\":{\"tracestate\":\"k=v\",\"traceparent\":\"00-ab-cd-01\"},"
                            "\"name\":\"n\"}");
    char *got = encode(job);
    CHECK_STR(got, "{\"name\":\"n\",\"id\":\"\",\"t\":0,\"args\":null,\"trace\":{\"traceparent\":"
                   "\"00-ab-cd-01\",\"tracestate\":\"k=v\"}}");
    cw_free(got);
    cwork_job_free(job);
}

static void unique_suffix_of_decoded_args(void)
{
    cwork_job *job = decode("{\"args\":{\"n\":9007199254740993,\"u\":12345678901234567890,"
                            "\"f\":1.0,\"e\":1e3}}");
    cw_buf b;
    cw_buf_init(&b);
    CHECK_INT(cw_job_unique_args_suffix(&b, job->args, NULL), 0);
    CHECK_STR(b.data, "{\"e\":1000,\"f\":1,\"n\":9007199254740992,\"u\":12345678901234567000}\n");
    cw_buf_free(&b);
    cwork_job_free(job);
}

static void non_finite_args_refused(void)
{
    cwork_job *job = cw_job_new();
    job->args = cw_gj_new_object();
    cw_gj_object_set(job->args, "x", 1, cw_gj_new_float(NAN));
    char *out = NULL;
    cwork_error err = {0};
    CHECK_INT(cwork_job_encode(job, &out, NULL, &err), CWORK_EJSON);
    CHECK(out == NULL);
    CHECK(cwork_job_args_json(job) == NULL);
    cwork_job_free(job);
}

/* ---------------------------------------------------------------- out of memory */

static long alloc_budget = -1; /* allocations left before failing; -1: no limit */

static void *limited_malloc(size_t n)
{
    if (alloc_budget == 0) return NULL;
    if (alloc_budget > 0) alloc_budget--;
    return malloc(n);
}

static void *limited_realloc(void *p, size_t n)
{
    if (alloc_budget == 0) return NULL;
    if (alloc_budget > 0) alloc_budget--;
    return realloc(p, n);
}

/* One pass over the decoding, encoding and accessor paths. Returns 1 when everything
 * succeeded, 0 when something ran out of memory; any other outcome is a failure. */
static int oom_scenario(void)
{
    cw_buf deep;
    cw_buf_init(&deep);
    cw_buf_puts(&deep, "{\"name\":\"n\",\"t\":1,\"args\":{\"d\":");
    for (int i = 0; i < 100; i++) /* deeper than the walkers' inline stacks */
        cw_buf_putc(&deep, '[');
    for (int i = 0; i < 100; i++)
        cw_buf_putc(&deep, ']');
    for (int i = 0; i < 12; i++) /* enough duplicates for the sorting path */
        cw_buf_printf(&deep, ",\"k%d\":\"\\u00e9\xff\",\"k%d\":{\"m\":[1.5,null]}", i % 5, i % 3);
    cw_buf_puts(&deep, "},\"args\":{\"z\":true},\"trace\":{\"a\":null},\"err\":\"<e>\"}");
    if (deep.oom) {
        cw_buf_free(&deep);
        return 0;
    }
    int ok = 1;
    cwork_job *job = NULL;
    int rc = cwork_job_decode(deep.data, deep.len, &job, NULL);
    cw_buf_free(&deep);
    if (rc != 0) {
        CHECK_INT(rc, CWORK_ENOMEM);
        return 0;
    }
    char *out = NULL;
    rc = cwork_job_encode(job, &out, NULL, NULL);
    if (rc != 0) {
        CHECK_INT(rc, CWORK_ENOMEM);
        ok = 0;
    }
    cw_free(out);
    char *args = cwork_job_args_json(job);
    ok &= args != NULL;
    cw_free(args);
    gj_value *copy = cw_gj_dup(job->args);
    ok &= copy != NULL;
    cw_gj_free(copy);
    (void)cwork_job_arg_bool(job, "k2"); /* renders a map for the error text */
    ok &= cwork_job_arg_error(job) != NULL;
    ok &= strstr(cwork_job_arg_error(job), "map[m:[1.5 <nil>]]") != NULL;
    cwork_job_free(job);

    cwork_args *a = NULL;
    const char *text = "{\"a\":[1,{\"b\":2}]}";
    rc = cwork_args_parse(text, strlen(text), &a, NULL);
    if (rc != 0) {
        CHECK_INT(rc, CWORK_ENOMEM);
        return 0;
    }
    rc = cwork_args_set_string(a, "s", "x");
    rc = rc ? rc : cwork_args_set_json(a, "j", "[[[]]]", 6, NULL);
    rc = rc ? rc : cwork_args_set_float64(a, "f", 0.5);
    if (rc != 0) {
        CHECK_INT(rc, CWORK_ENOMEM);
        ok = 0;
    }
    rc = cwork_args_to_json(a, &out, NULL, NULL);
    if (rc != 0) {
        CHECK_INT(rc, CWORK_ENOMEM);
        ok = 0;
    } else {
        cw_free(out);
    }
    cwork_args_free(a);
    return ok;
}

static void out_of_memory(void)
{
    cwork_set_allocator(limited_malloc, limited_realloc, free);
    long budget = 0;
    for (; budget < 100000; budget++) {
        alloc_budget = budget;
        int ok = oom_scenario();
        alloc_budget = -1;
        if (ok) break;
    }
    cwork_set_allocator(NULL, NULL, NULL);
    CHECK(budget > 50 && budget < 100000); /* every earlier failure point was survived */
    printf("  %ld allocation failure points survived\n", budget);
}

int main(void)
{
    RUN(spec_vectors_are_fixed_points);
    RUN(failed_job_vector);
    RUN(field_accessors);
    RUN(cjson_shapes);
    RUN(unknown_fields_dropped);
    RUN(case_insensitive_names);
    RUN(duplicate_fields);
    RUN(integer_fields);
    RUN(typed_fields);
    RUN(top_level);
    RUN(typed_accessors);
    RUN(large_job);
    RUN(trace_round_trip);
    RUN(unique_suffix_of_decoded_args);
    RUN(non_finite_args_refused);
    RUN(out_of_memory);
    return tl_finish();
}
