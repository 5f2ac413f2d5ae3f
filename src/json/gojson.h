/* JSON with Go's encoding/json semantics.
 *
 * Decoding follows what Go does when it unmarshals into interface{} values: every
 * number becomes a float64 (GJ_FLOAT), invalid UTF-8 and lone surrogates become
 * U+FFFD, \u0000 is kept, the last duplicate key of an object wins. Encoding is
 * byte-identical to Go's json.Marshal: compact, object keys sorted byte-wise,
 * HTML-safe escaping, Go's float64 format, \b and \f as Go >= 1.22 writes them.
 *
 * Values built in-process may also hold exact integers (GJ_INT, GJ_UINT), which Go
 * would have as int64/uint64 and prints as plain decimals.
 */
#ifndef CWORK_GOJSON_H
#define CWORK_GOJSON_H

#include "util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum gj_type {
    GJ_NULL,
    GJ_BOOL,
    GJ_FLOAT, /* Go float64: every number read from JSON text */
    GJ_INT,   /* Go int64, only from in-process builders */
    GJ_UINT,  /* Go uint64, only from in-process builders */
    GJ_STRING,
    GJ_ARRAY,
    GJ_OBJECT
} gj_type;

typedef struct gj_value gj_value;

/* A string with explicit length: JSON strings may contain NUL. ptr is NUL-terminated. */
typedef struct gj_str {
    char *ptr;
    size_t len;
} gj_str;

typedef struct gj_member {
    gj_str key;
    gj_value *value;
} gj_member;

struct gj_value {
    gj_type type;
    union {
        bool b;
        double f;
        int64_t i;
        uint64_t u;
        gj_str s;
        struct {
            gj_value **items;
            size_t len, cap;
        } arr;
        struct {
            gj_member *items; /* insertion order; the encoder sorts */
            size_t len, cap;
        } obj;
    } as;
};

/* Parses one JSON value filling the whole input (surrounding white space allowed).
 * Returns 0, or CWORK_EJSON (with the byte offset in the message) / CWORK_ENOMEM.
 * Nesting deeper than GJ_MAX_DEPTH is refused (Go's limit is 10000). */
#define GJ_MAX_DEPTH 10000
int cw_gj_parse(const char *text, size_t len, gj_value **out, cwork_error *err);

void cw_gj_free(gj_value *v);
gj_value *cw_gj_dup(const gj_value *v); /* deep copy; NULL on OOM */

/* Constructors; NULL on OOM. String constructors copy (len bytes, may contain NUL). */
gj_value *cw_gj_new_null(void);
gj_value *cw_gj_new_bool(bool b);
gj_value *cw_gj_new_float(double f);
gj_value *cw_gj_new_int(int64_t i);
gj_value *cw_gj_new_uint(uint64_t u);
gj_value *cw_gj_new_string(const char *s, size_t len);
gj_value *cw_gj_new_array(void);
gj_value *cw_gj_new_object(void);

/* Appends to an array, taking ownership of item (freed on failure). 0 or CWORK_ENOMEM. */
int cw_gj_array_push(gj_value *arr, gj_value *item);
/* Sets key in an object, replacing (and freeing) an existing value of that key; takes
 * ownership of value (freed on failure). 0 or CWORK_ENOMEM. */
int cw_gj_object_set(gj_value *obj, const char *key, size_t key_len, gj_value *value);
/* Exact-key lookup; borrowed, NULL when absent. */
gj_value *cw_gj_object_get(const gj_value *obj, const char *key, size_t key_len);

/* Appends Go's compact encoding of v. CWORK_EJSON for NaN/Inf (the buffer's content is
 * then unspecified), else 0; OOM shows in out->oom. */
int cw_gj_encode(cw_buf *out, const gj_value *v, cwork_error *err);
/* Appends a JSON string literal of s with Go's escaping (invalid UTF-8 → \ufffd). */
void cw_gj_encode_string(cw_buf *out, const char *s, size_t len);
/* Appends Go's float64 format (strconv 'f'/'e' choice of encoding/json). The value must
 * be finite. */
void cw_gj_format_float(cw_buf *out, double f);
/* Appends json (Go's output: every backslash starts an escape) with \b and \f written
 * as a Go before 1.22 writes them, \u0008 and \u000c (cwork_go_json, PROTOCOL §3.2).
 * Returns 1 when something was rewritten, else 0. OOM shows in out->oom. */
int cw_gj_append_go121(cw_buf *out, const char *json, size_t len);
/* The same in place, for the JSON that fills out from offset `from` to its end. */
void cw_gj_respell_go121(cw_buf *out, size_t from);

/* ---- internal pieces shared by the gojson_*.c files and job.c ---- */

/* Index of the first byte at or after pos that is not JSON white space. */
size_t cw_gj_skip_ws(const char *text, size_t len, size_t pos);
/* Parses the value starting at *pos (white space first is skipped) that sits inside
 * `depth` enclosing containers, so that the whole document obeys GJ_MAX_DEPTH. On
 * success *pos is just past the value; text after it is not looked at. */
int cw_gj_parse_at(const char *text, size_t len, size_t *pos, int depth, gj_value **out,
                   cwork_error *err);
/* Checks the syntax of the value at *pos and steps over it without building anything.
 * Numbers are not converted: Go skips unknown struct fields this way, so `1e400` there
 * is not an error. */
int cw_gj_skip_at(const char *text, size_t len, size_t *pos, int depth, cwork_error *err);
/* Parses the string literal at *pos (which must be '"') with Go's unquoting into a
 * fresh NUL-terminated buffer (free out->ptr with cw_free). */
int cw_gj_parse_string_at(const char *text, size_t len, size_t *pos, gj_str *out, cwork_error *err);

/* Moves every member of src (an object) into dst (an object), the later value winning
 * for a key present in both, as Go does when it decodes a second object into an
 * existing map. src is freed in every case. 0 or CWORK_ENOMEM (dst is then unchanged
 * or only partly merged, but valid). */
int cw_gj_object_merge(gj_value *dst, gj_value *src);
/* Removes duplicate keys of an object in place: the first occurrence keeps its position
 * and gets the value of the last one. 0 or CWORK_ENOMEM (the object is unchanged). */
int cw_gj_object_dedup(gj_value *obj);
/* Fills order[0..n) with pointers to the members sorted by key bytes (memcmp, a shorter
 * prefix first): Go's map key order for both encoding/json and fmt. */
void cw_gj_sort_members(const gj_member *items, size_t n, const gj_member **order);

/* Converts a number token that passed JSON's grammar to the nearest double, as Go's
 * strconv.ParseFloat does (correctly rounded, whatever the locale). 0, CWORK_EJSON
 * when it overflows (1e400; underflow gives 0 quietly, as in Go) or CWORK_ENOMEM. */
int cw_gj_number_value(const char *tok, size_t len, double *out);

/* The shortest decimal digits that read back as |v| (v finite and non-zero), the one
 * closest to the exact value when several qualify: Go's strconv shortest mode. Writes
 * up to 17 digits (no NUL) and returns their number; |v| = 0.DIGITS x 10^(*dp). */
int cw_gj_float_digits(double v, char digits[24], int *dp);
/* Appends v as Go's fmt %v prints a float64 (strconv 'g' with the shortest digits:
 * exponent form `1.5e+06`, `1e-05` when the decimal exponent is < -4 or >= 6). Used
 * for the typed accessors' error texts; NaN and infinities print as fmt does. */
void cw_gj_format_float_v(cw_buf *out, double v);

#endif
