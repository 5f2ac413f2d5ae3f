/* cwork_args_get_json: any value of a parsed or built argument object, in Go's
 * encoding, null included; errors leave *out alone. */
#include "testlib.h"

#include <stdlib.h>

static void check_json(const cwork_args *a, const char *key, const char *want)
{
    char *out = NULL;
    size_t len = 0;
    cwork_error err = {0};
    int rc = cwork_args_get_json(a, key, &out, &len, &err);
    if (rc != 0) {
        tl_fail(__FILE__, __LINE__, "key %s: %d %s", key, rc, err.message);
        return;
    }
    CHECK_STR(out, want);
    CHECK_INT(len, strlen(want));
    cwork_free(out);
}

static void every_type_of_a_parsed_object(void)
{
    const char *in = "{\"s\":\"a \\\"b\\\" <c> \\u00e9\",\"n\":1,\"f\":-2.5,\"big\":1e21,"
                     "\"t\":true,\"z\":null,\"arr\":[1,\"x\",{\"k\":[]}],"
                     "\"obj\":{\"b\":2,\"a\":{\"c\":null}},\"nul\":\"a\\u0000b\"}";
    cwork_args *a = NULL;
    CHECK_INT(cwork_args_parse(in, strlen(in), &a, NULL), 0);
    check_json(a, "s", "\"a \\\"b\\\" \\u003cc\\u003e \xc3\xa9\""); /* Go's HTML-safe */
    check_json(a, "n", "1");
    check_json(a, "f", "-2.5");
    check_json(a, "big", "1e+21"); /* Go's float64 format */
    check_json(a, "t", "true");
    check_json(a, "z", "null"); /* present, unlike for the typed getters */
    check_json(a, "arr", "[1,\"x\",{\"k\":[]}]");
    check_json(a, "obj", "{\"a\":{\"c\":null},\"b\":2}"); /* sorted, as Go */
    check_json(a, "nul", "\"a\\u0000b\"");
    const char *s = NULL;
    CHECK_INT(cwork_args_get_string(a, "z", &s), CWORK_ENOTFOUND);

    char *out = (char *)"untouched";
    cwork_error err = {0};
    CHECK_INT(cwork_args_get_json(a, "missing", &out, NULL, &err), CWORK_ENOTFOUND);
    CHECK_STR(out, "untouched");
    CHECK(strstr(err.message, "missing") != NULL);
    CHECK_INT(cwork_args_get_json(NULL, "s", &out, NULL, &err), CWORK_EINVAL);
    CHECK_INT(cwork_args_get_json(a, NULL, &out, NULL, &err), CWORK_EINVAL);
    CHECK_INT(cwork_args_get_json(a, "s", NULL, NULL, &err), CWORK_EINVAL);
    CHECK_INT(cwork_args_get_json(a, "s", &out, NULL, NULL), 0); /* err and len optional */
    CHECK_STR(out, "\"a \\\"b\\\" \\u003cc\\u003e \xc3\xa9\"");
    cwork_free(out);
    cwork_args_free(a);
}

static void values_set_by_the_caller_keep_their_type(void)
{
    cwork_args *a = cwork_args_new();
    CHECK(a != NULL);
    CHECK_INT(cwork_args_set_int64(a, "i", -9007199254740993LL), 0);
    CHECK_INT(cwork_args_set_uint64(a, "u", UINT64_MAX), 0);
    CHECK_INT(cwork_args_set_float64(a, "f", 3.0), 0);
    CHECK_INT(cwork_args_set_bool(a, "b", false), 0);
    CHECK_INT(cwork_args_set_null(a, "n"), 0);
    CHECK_INT(cwork_args_set_json(a, "j", "[ 1 , 2 ]", 9, NULL), 0);
    check_json(a, "i", "-9007199254740993");
    check_json(a, "u", "18446744073709551615");
    check_json(a, "f", "3");
    check_json(a, "b", "false");
    check_json(a, "n", "null");
    check_json(a, "j", "[1,2]");
    cwork_args_free(a);
}

int main(void)
{
    RUN(every_type_of_a_parsed_object);
    RUN(values_set_by_the_caller_keep_their_type);
    return tl_finish();
}
