/* Shared by the gojson tests: encode a value, and parse-then-encode with the expected
 * bytes checked. */
#ifndef CWORK_GOJSON_TESTUTIL_H
#define CWORK_GOJSON_TESTUTIL_H

#include "gojson.h"
#include "testlib.h"

__attribute__((unused)) static char *encode_value(const gj_value *v)
{
    cw_buf b;
    cw_buf_init(&b);
    cwork_error err = {0};
    int rc = cw_gj_encode(&b, v, &err);
    CHECK_INT(rc, 0);
    CHECK(!b.oom);
    if (rc) {
        cw_buf_free(&b);
        return NULL;
    }
    return cw_buf_take(&b, NULL);
}

/* Parses in (len bytes) and checks the encoding. */
#define ROUNDTRIP(in, want) roundtrip(__FILE__, __LINE__, in, sizeof(in) - 1, want)
__attribute__((unused)) static void roundtrip(const char *file, int line, const char *in,
                                              size_t len, const char *want)
{
    gj_value *v = NULL;
    cwork_error err = {0};
    int rc = cw_gj_parse(in, len, &v, &err);
    if (rc != 0) {
        tl_fail(file, line, "parse failed (%s): %s", err.message, in);
        return;
    }
    char *got = encode_value(v);
    if (got) tl_check_mem(file, line, in, got, strlen(got), want, strlen(want));
    cw_free(got);
    cw_gj_free(v);
}

#endif
