/* JSON text to gj_value with the rules of Go's encoding/json decoding into interface{}.
 *
 * What Go accepts and how it reads it:
 *  - the grammar of RFC 8259 and nothing more: no leading zeros, `+1`, `.5`, `1.`,
 *    trailing commas, comments, NaN or Infinity; white space is space, tab, CR, LF;
 *  - raw bytes below 0x20 are refused inside strings; escapes are \" \\ \/ \b \f \n \r
 *    \t and \uXXXX; a surrogate pair combines, any other surrogate escape becomes
 *    U+FFFD (a high one followed by a non-low escape leaves that escape to be read on
 *    its own); \u0000 is an ordinary character;
 *  - every byte that does not start a valid UTF-8 sequence becomes one U+FFFD, as
 *    utf8.DecodeRune reads it (overlongs, encoded surrogates and > U+10FFFF included);
 *  - every number is a float64 from a correctly rounded conversion; one that overflows
 *    (1e400) fails, as strconv.ParseFloat's range error fails json.Unmarshal, while
 *    underflow quietly gives 0 or a subnormal;
 *  - at most 10000 nested arrays and objects (Go's scanner limit).
 *
 * The parser is iterative, so deep input costs heap, never C stack. */
#include "gojson.h"
#include "utf8.h"

#include <string.h>

typedef struct frame {
    gj_value *container; /* NULL when only checking syntax */
    int is_object;
    gj_str key; /* the object member whose value is being read */
} frame;

typedef struct pctx {
    const unsigned char *s;
    size_t len;
    size_t pos;
    cwork_error *err;
    int build; /* 0: syntax check only (Go's skip of unknown fields) */
} pctx;

/* ---------------------------------------------------------------- errors */

static int syntax_error(pctx *c, const char *what)
{
    if (c->pos >= c->len)
        return cw_error(c->err, CWORK_EJSON, "json: unexpected end of JSON input");
    unsigned char ch = c->s[c->pos];
    if (ch >= 0x20 && ch < 0x7f)
        return cw_error(c->err, CWORK_EJSON, "json: invalid character '%c' %s at offset %zu", ch,
                        what, c->pos);
    return cw_error(c->err, CWORK_EJSON, "json: invalid character 0x%02x %s at offset %zu", ch,
                    what, c->pos);
}

static int oom(pctx *c)
{
    return cw_error(c->err, CWORK_ENOMEM, "out of memory while parsing JSON");
}

/* ---------------------------------------------------------------- white space */

size_t cw_gj_skip_ws(const char *text, size_t len, size_t pos)
{
    while (pos < len) {
        char ch = text[pos];
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') break;
        pos++;
    }
    return pos;
}

static void skip_ws(pctx *c)
{
    c->pos = cw_gj_skip_ws((const char *)c->s, c->len, c->pos);
}

/* ---------------------------------------------------------------- strings */

static int hex4(const unsigned char *p, size_t avail, unsigned *out)
{
    if (avail < 4) return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char h = p[i];
        v <<= 4;
        if (h >= '0' && h <= '9')
            v |= (unsigned)(h - '0');
        else if (h >= 'a' && h <= 'f')
            v |= (unsigned)(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F')
            v |= (unsigned)(h - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(unsigned char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Reads the \u escape at p (p[0] == '\\', p[1] == 'u', four hex digits checked by the
 * caller) and, for a high surrogate, a following low one. Returns the code point
 * (U+FFFD for a lone surrogate) and the number of input bytes used. */
static unsigned read_u_escape(const unsigned char *p, size_t avail, size_t *used)
{
    unsigned cp = 0xFFFD, lo = 0;
    hex4(p + 2, avail - 2, &cp);
    *used = 6;
    if (cp < 0xD800 || cp > 0xDFFF) return cp;
    if (cp <= 0xDBFF && avail >= 12 && p[6] == '\\' && p[7] == 'u' &&
        hex4(p + 8, avail - 8, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
        *used = 12;
        return 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    return 0xFFFD;
}

/* Bytes that end the fast run inside a string: controls, '"', '\\', non-ASCII. */
static int plain_byte(unsigned char b)
{
    return b >= 0x20 && b < 0x80 && b != '"' && b != '\\';
}

/* First pass over the literal whose opening quote is at c->pos: checks it, finds its
 * end and the decoded length, and whether the bytes can be copied as they are. */
static int scan_string(pctx *c, size_t *end, size_t *out_len, int *verbatim)
{
    const unsigned char *s = c->s;
    size_t i = c->pos + 1, n = 0;
    *verbatim = 1;
    for (;;) {
        size_t run = i;
        while (i < c->len && plain_byte(s[i]))
            i++;
        n += i - run;
        if (i >= c->len) {
            c->pos = i;
            return syntax_error(c, "in string literal");
        }
        unsigned char b = s[i];
        if (b == '"') break;
        if (b == '\\') {
            *verbatim = 0;
            if (i + 1 >= c->len) {
                c->pos = i + 1;
                return syntax_error(c, "in string escape code");
            }
            switch (s[i + 1]) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
                n += 1;
                i += 2;
                break;
            case 'u': {
                unsigned cp;
                if (hex4(s + i + 2, c->len - i - 2, &cp) < 0) {
                    c->pos = i + 2;
                    return syntax_error(c, "in \\u hexadecimal character escape");
                }
                size_t used;
                unsigned char tmp[4];
                n += put_utf8(tmp, read_u_escape(s + i, c->len - i, &used));
                i += used;
                break;
            }
            default:
                c->pos = i + 1;
                return syntax_error(c, "in string escape code");
            }
        } else if (b < 0x20) {
            c->pos = i;
            return syntax_error(c, "in string literal");
        } else {
            size_t u = cw_utf8_decode(s + i, c->len - i, NULL);
            if (u) {
                n += u;
                i += u;
            } else {
                *verbatim = 0;
                n += 3; /* U+FFFD */
                i++;
            }
        }
    }
    *end = i;
    *out_len = n;
    return 0;
}

/* Second pass: decodes s[from..to) (checked by scan_string) into out. */
static void decode_string(const unsigned char *s, size_t from, size_t to, unsigned char *out)
{
    size_t i = from;
    while (i < to) {
        unsigned char b = s[i];
        if (plain_byte(b)) {
            *out++ = b;
            i++;
        } else if (b == '\\') {
            unsigned char e = s[i + 1];
            switch (e) {
            case 'b':
                *out++ = '\b';
                break;
            case 'f':
                *out++ = '\f';
                break;
            case 'n':
                *out++ = '\n';
                break;
            case 'r':
                *out++ = '\r';
                break;
            case 't':
                *out++ = '\t';
                break;
            case 'u': {
                size_t used;
                out += put_utf8(out, read_u_escape(s + i, to - i, &used));
                i += used;
                continue;
            }
            default:
                *out++ = e;
                break; /* " \ / */
            }
            i += 2;
        } else {
            size_t u = cw_utf8_decode(s + i, to - i, NULL);
            if (u) {
                memcpy(out, s + i, u);
                out += u;
                i += u;
            } else {
                memcpy(out, "\xEF\xBF\xBD", 3);
                out += 3;
                i++;
            }
        }
    }
}

/* Reads the literal at c->pos; with out == NULL only checks it. */
static int read_string(pctx *c, gj_str *out)
{
    size_t end = 0, n = 0;
    int verbatim;
    int rc = scan_string(c, &end, &n, &verbatim);
    if (rc) return rc;
    if (out) {
        char *p = cw_malloc(n + 1);
        if (!p) return oom(c);
        if (verbatim)
            memcpy(p, c->s + c->pos + 1, n);
        else
            decode_string(c->s, c->pos + 1, end, (unsigned char *)p);
        p[n] = '\0';
        out->ptr = p;
        out->len = n;
    }
    c->pos = end + 1;
    return 0;
}

int cw_gj_parse_string_at(const char *text, size_t len, size_t *pos, gj_str *out, cwork_error *err)
{
    pctx c = {(const unsigned char *)text, len, *pos, err, 1};
    if (c.pos >= len || text[c.pos] != '"')
        return syntax_error(&c, "looking for beginning of object key string");
    int rc = read_string(&c, out);
    if (rc == 0) *pos = c.pos;
    return rc;
}

/* ---------------------------------------------------------------- numbers */

/* Steps over a number checking Go's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
 * ("01" stops after the 0 and then fails as a stray character), and converts it when
 * asked. */
static int read_number(pctx *c, double *out)
{
    const unsigned char *s = c->s;
    size_t start = c->pos, i = c->pos;
    if (s[i] == '-') i++;
    if (i >= c->len || s[i] < '0' || s[i] > '9') {
        c->pos = i;
        return syntax_error(c, "in numeric literal");
    }
    if (s[i] == '0')
        i++;
    else
        while (i < c->len && s[i] >= '0' && s[i] <= '9')
            i++;
    if (i < c->len && s[i] == '.') {
        i++;
        if (i >= c->len || s[i] < '0' || s[i] > '9') {
            c->pos = i;
            return syntax_error(c, "after decimal point in numeric literal");
        }
        while (i < c->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < c->len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < c->len && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= c->len || s[i] < '0' || s[i] > '9') {
            c->pos = i;
            return syntax_error(c, "in exponent of numeric literal");
        }
        while (i < c->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    c->pos = i;
    if (!out) return 0;
    int rc = cw_gj_number_value((const char *)s + start, i - start, out);
    if (rc == CWORK_ENOMEM) return oom(c);
    if (rc) {
        c->pos = start;
        return cw_error(c->err, CWORK_EJSON,
                        "json: cannot unmarshal number %.*s%s into Go value of type float64 "
                        "(offset %zu)",
                        (int)(i - start > 40 ? 40 : i - start), (const char *)s + start,
                        i - start > 40 ? "..." : "", start);
    }
    return 0;
}

/* ---------------------------------------------------------------- values */

static int read_literal(pctx *c, const char *word, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (c->pos + i >= c->len || c->s[c->pos + i] != (unsigned char)word[i]) {
            c->pos += i;
            return syntax_error(c, "in literal (expecting a keyword)");
        }
    }
    c->pos += n;
    return 0;
}

static gj_value *new_value(gj_type t)
{
    gj_value *v = cw_calloc(1, sizeof *v);
    if (v) v->type = t;
    return v;
}

/* Adds v to the container of f (object members are appended; duplicates are settled
 * when the object closes). Takes ownership of v. */
static int attach(pctx *c, frame *f, gj_value *v)
{
    gj_value *o = f->container;
    if (f->is_object) {
        if (o->as.obj.len == o->as.obj.cap) {
            size_t cap = o->as.obj.cap ? o->as.obj.cap * 2 : 4;
            gj_member *m = cw_realloc(o->as.obj.items, cap * sizeof *m);
            if (!m) {
                cw_gj_free(v);
                return oom(c);
            }
            o->as.obj.items = m;
            o->as.obj.cap = cap;
        }
        o->as.obj.items[o->as.obj.len].key = f->key;
        o->as.obj.items[o->as.obj.len].value = v;
        o->as.obj.len++;
        f->key.ptr = NULL;
        return 0;
    }
    int rc = cw_gj_array_push(o, v);
    return rc ? oom(c) : 0;
}

/* Reads `"key" :` into the top frame. */
static int read_key(pctx *c, frame *f)
{
    skip_ws(c);
    if (c->pos >= c->len || c->s[c->pos] != '"')
        return syntax_error(c, "looking for beginning of object key string");
    int rc = read_string(c, c->build ? &f->key : NULL);
    if (rc) return rc;
    skip_ws(c);
    if (c->pos >= c->len || c->s[c->pos] != ':') return syntax_error(c, "after object key");
    c->pos++;
    return 0;
}

/* Reads one scalar at c->pos into *out (NULL when only checking). */
static int read_scalar(pctx *c, gj_value **out)
{
    unsigned char ch = c->s[c->pos];
    gj_value *v = NULL;
    int rc;
    if (ch == '"') {
        gj_str str = {NULL, 0};
        rc = read_string(c, c->build ? &str : NULL);
        if (rc == 0 && c->build) {
            v = new_value(GJ_STRING);
            if (!v) {
                cw_free(str.ptr);
                return oom(c);
            }
            v->as.s = str;
        }
    } else if (ch == 't' || ch == 'f') {
        rc = ch == 't' ? read_literal(c, "true", 4) : read_literal(c, "false", 5);
        if (rc == 0 && c->build && !(v = cw_gj_new_bool(ch == 't'))) return oom(c);
    } else if (ch == 'n') {
        rc = read_literal(c, "null", 4);
        if (rc == 0 && c->build && !(v = cw_gj_new_null())) return oom(c);
    } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
        double d = 0;
        rc = read_number(c, c->build ? &d : NULL);
        if (rc == 0 && c->build && !(v = cw_gj_new_float(d))) return oom(c);
    } else {
        return syntax_error(c, "looking for beginning of value");
    }
    if (rc == 0) *out = v;
    return rc;
}

/* The containers open around the value being read, innermost last; the first 32 need no
 * allocation. */
typedef struct frame_stack {
    frame inline_frames[32];
    frame *st;
    size_t cap, n;
} frame_stack;

static int push_frame(pctx *c, frame_stack *s, gj_value *container, int is_object)
{
    if (s->n == s->cap) {
        frame *bigger = cw_malloc(s->cap * 2 * sizeof *bigger);
        if (!bigger) return oom(c);
        memcpy(bigger, s->st, s->n * sizeof *s->st);
        if (s->st != s->inline_frames) cw_free(s->st);
        s->st = bigger;
        s->cap *= 2;
    }
    frame *f = &s->st[s->n++];
    f->container = container;
    f->is_object = is_object;
    f->key.ptr = NULL;
    return 0;
}

/* Reads the start of the value at c->pos, levels containers deep: a scalar whole, or the
 * bracket of a container (*opens is then '{' or '['; else 0). */
static int begin_value(pctx *c, size_t levels, gj_value **v, int *opens)
{
    skip_ws(c);
    if (c->pos >= c->len) return syntax_error(c, "looking for beginning of value");
    unsigned char ch = c->s[c->pos];
    *opens = ch == '{' || ch == '[' ? ch : 0;
    if (!*opens) return read_scalar(c, v);
    if (levels + 1 > GJ_MAX_DEPTH)
        return cw_error(c->err, CWORK_EJSON, "json: exceeded max depth at offset %zu", c->pos);
    c->pos++;
    if (c->build && !(*v = ch == '{' ? cw_gj_new_object() : cw_gj_new_array())) return oom(c);
    return 0;
}

/* Enters the container v just opened by bracket: *empty when it closes at once, else
 * ready for its first member (an object's key read). */
static int open_container(pctx *c, frame_stack *s, gj_value *v, int bracket, int *empty)
{
    int rc = push_frame(c, s, v, bracket == '{');
    if (rc != 0) return rc;
    skip_ws(c);
    *empty = c->pos < c->len && c->s[c->pos] == (bracket == '{' ? '}' : ']');
    if (*empty) {
        c->pos++;
        s->n--;
        return 0;
    }
    return bracket == '{' ? read_key(c, &s->st[s->n - 1]) : 0;
}

/* A value just ended: closes the containers it ends, or moves past the comma (and the
 * key) to the next member of the innermost one. */
static int end_value(pctx *c, frame_stack *s)
{
    while (s->n > 0) {
        frame *f = &s->st[s->n - 1];
        skip_ws(c);
        if (c->pos >= c->len) return syntax_error(c, "");
        unsigned char ch = c->s[c->pos];
        if (ch == ',') {
            c->pos++;
            return f->is_object ? read_key(c, f) : 0;
        }
        if (ch != (f->is_object ? '}' : ']'))
            return syntax_error(c, f->is_object ? "after object key:value pair"
                                                : "after array element");
        c->pos++;
        if (f->is_object && c->build && cw_gj_object_dedup(f->container) != 0) return oom(c);
        s->n--;
    }
    return 0;
}

/* Without recursion, so that the depth limit is the only bound on nesting. */
static int parse_value(pctx *c, int depth, gj_value **out)
{
    frame_stack s;
    s.st = s.inline_frames;
    s.cap = sizeof s.inline_frames / sizeof s.inline_frames[0];
    s.n = 0;
    gj_value *root = NULL;
    int rc;
    do {
        gj_value *v = NULL;
        int opens = 0, empty = 0;
        rc = begin_value(c, (size_t)depth + s.n, &v, &opens);
        if (rc == 0 && c->build) {
            if (s.n == 0)
                root = v;
            else
                rc = attach(c, &s.st[s.n - 1], v);
        }
        if (rc == 0 && opens) {
            rc = open_container(c, &s, v, opens, &empty);
            if (rc == 0 && !empty) continue; /* its first member is next */
        }
        if (rc == 0) rc = end_value(c, &s);
    } while (rc == 0 && s.n > 0);
    if (rc != 0) {
        for (size_t i = 0; i < s.n; i++)
            cw_free(s.st[i].key.ptr);
        cw_gj_free(root);
    } else if (out) {
        *out = root;
    }
    if (s.st != s.inline_frames) cw_free(s.st);
    return rc;
}

int cw_gj_parse_at(const char *text, size_t len, size_t *pos, int depth, gj_value **out,
                   cwork_error *err)
{
    pctx c = {(const unsigned char *)text, len, *pos, err, 1};
    gj_value *v = NULL;
    int rc = parse_value(&c, depth, &v);
    if (rc == 0) {
        *pos = c.pos;
        *out = v;
    }
    return rc;
}

int cw_gj_skip_at(const char *text, size_t len, size_t *pos, int depth, cwork_error *err)
{
    pctx c = {(const unsigned char *)text, len, *pos, err, 0};
    int rc = parse_value(&c, depth, NULL);
    if (rc == 0) *pos = c.pos;
    return rc;
}

int cw_gj_parse(const char *text, size_t len, gj_value **out, cwork_error *err)
{
    size_t pos = 0;
    gj_value *v = NULL;
    int rc = cw_gj_parse_at(text, len, &pos, 0, &v, err);
    if (rc) return rc;
    pos = cw_gj_skip_ws(text, len, pos);
    if (pos < len) {
        pctx c = {(const unsigned char *)text, len, pos, err, 0};
        cw_gj_free(v);
        return syntax_error(&c, "after top-level value");
    }
    *out = v;
    return 0;
}
