/* gj_value trees (construction, copy, release) and their encoding, byte-identical to
 * Go's json.Marshal of the corresponding map[string]interface{} / []interface{} /
 * string / float64 / int64 / uint64 / bool / nil values.
 *
 * Trees can be as deep as the input allows, and pools run handlers on threads with
 * small stacks, so release, copy and encoding walk with an explicit stack on the heap
 * instead of recursion. Parsing is in gojson_parse.c, numbers in gojson_float.c, object
 * operations (which use the member order defined here) in gojson_object.c. */
#include "gojson.h"
#include "utf8.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- constructors */

static gj_value *new_value(gj_type t)
{
    gj_value *v = cw_calloc(1, sizeof *v);
    if (v) v->type = t;
    return v;
}

gj_value *cw_gj_new_null(void)
{
    return new_value(GJ_NULL);
}

gj_value *cw_gj_new_bool(bool b)
{
    gj_value *v = new_value(GJ_BOOL);
    if (v) v->as.b = b;
    return v;
}

gj_value *cw_gj_new_float(double f)
{
    gj_value *v = new_value(GJ_FLOAT);
    if (v) v->as.f = f;
    return v;
}

gj_value *cw_gj_new_int(int64_t i)
{
    gj_value *v = new_value(GJ_INT);
    if (v) v->as.i = i;
    return v;
}

gj_value *cw_gj_new_uint(uint64_t u)
{
    gj_value *v = new_value(GJ_UINT);
    if (v) v->as.u = u;
    return v;
}

gj_value *cw_gj_new_string(const char *s, size_t len)
{
    gj_value *v = new_value(GJ_STRING);
    if (!v) return NULL;
    v->as.s.ptr = cw_strndup(s, len);
    if (!v->as.s.ptr) {
        cw_free(v);
        return NULL;
    }
    v->as.s.len = len;
    return v;
}

gj_value *cw_gj_new_array(void)
{
    return new_value(GJ_ARRAY);
}

gj_value *cw_gj_new_object(void)
{
    return new_value(GJ_OBJECT);
}

/* ---------------------------------------------------------------- walking */

static int is_container(const gj_value *v)
{
    return v->type == GJ_ARRAY || v->type == GJ_OBJECT;
}

static size_t child_count(const gj_value *v)
{
    return v->type == GJ_ARRAY ? v->as.arr.len : v->as.obj.len;
}

/* A stack of (value, next child) pairs: 64 entries in place, then on the heap. */
typedef struct walk_entry {
    const gj_value *v;
    gj_value *copy; /* cw_gj_dup's destination */
    size_t next;
    size_t order_base; /* cw_gj_encode: where this object's sorted members start */
} walk_entry;

typedef struct walk {
    walk_entry inline_entries[64];
    walk_entry *e;
    size_t n, cap;
} walk;

static void walk_init(walk *w)
{
    w->e = w->inline_entries;
    w->n = 0;
    w->cap = 64;
}

static void walk_done(walk *w)
{
    if (w->e != w->inline_entries) cw_free(w->e);
}

static walk_entry *walk_push(walk *w, const gj_value *v)
{
    if (w->n == w->cap) {
        walk_entry *bigger = cw_malloc(w->cap * 2 * sizeof *bigger);
        if (!bigger) return NULL;
        memcpy(bigger, w->e, w->n * sizeof *bigger);
        if (w->e != w->inline_entries) cw_free(w->e);
        w->e = bigger;
        w->cap *= 2;
    }
    walk_entry *e = &w->e[w->n++];
    memset(e, 0, sizeof *e);
    e->v = v;
    return e;
}

/* ---------------------------------------------------------------- release */

static void free_shallow(gj_value *v)
{
    if (v->type == GJ_STRING)
        cw_free(v->as.s.ptr);
    else if (v->type == GJ_ARRAY)
        cw_free(v->as.arr.items);
    else if (v->type == GJ_OBJECT)
        cw_free(v->as.obj.items);
    cw_free(v);
}

/* Only used when the explicit stack cannot grow (out of memory and nested beyond 64
 * levels): recursion is then the lesser evil compared with leaking. */
static void free_recursive(gj_value *v)
{
    for (size_t i = 0; i < child_count(v); i++) {
        gj_value *c;
        if (v->type == GJ_ARRAY) {
            c = v->as.arr.items[i];
        } else {
            cw_free(v->as.obj.items[i].key.ptr);
            c = v->as.obj.items[i].value;
        }
        if (is_container(c))
            free_recursive(c);
        else
            free_shallow(c);
    }
    free_shallow(v);
}

void cw_gj_free(gj_value *v)
{
    if (!v) return;
    if (!is_container(v)) {
        free_shallow(v);
        return;
    }
    walk w;
    walk_init(&w);
    walk_push(&w, v);
    while (w.n > 0) {
        walk_entry *top = &w.e[w.n - 1];
        gj_value *cur = (gj_value *)top->v;
        if (top->next == child_count(cur)) {
            free_shallow(cur);
            w.n--;
            continue;
        }
        size_t i = top->next++;
        gj_value *c;
        if (cur->type == GJ_ARRAY) {
            c = cur->as.arr.items[i];
        } else {
            cw_free(cur->as.obj.items[i].key.ptr);
            c = cur->as.obj.items[i].value;
        }
        if (!is_container(c))
            free_shallow(c);
        else if (!walk_push(&w, c))
            free_recursive(c);
    }
    walk_done(&w);
}

/* ---------------------------------------------------------------- copy */

static gj_value *dup_shallow(const gj_value *v)
{
    gj_value *c;
    switch (v->type) {
    case GJ_STRING:
        return cw_gj_new_string(v->as.s.ptr, v->as.s.len);
    case GJ_ARRAY:
        c = new_value(GJ_ARRAY);
        if (c && v->as.arr.len) {
            c->as.arr.items = cw_malloc(v->as.arr.len * sizeof *c->as.arr.items);
            if (!c->as.arr.items) {
                cw_free(c);
                return NULL;
            }
            c->as.arr.cap = v->as.arr.len;
        }
        return c;
    case GJ_OBJECT:
        c = new_value(GJ_OBJECT);
        if (c && v->as.obj.len) {
            c->as.obj.items = cw_malloc(v->as.obj.len * sizeof *c->as.obj.items);
            if (!c->as.obj.items) {
                cw_free(c);
                return NULL;
            }
            c->as.obj.cap = v->as.obj.len;
        }
        return c;
    default:
        c = new_value(v->type);
        if (c) c->as = v->as;
        return c;
    }
}

gj_value *cw_gj_dup(const gj_value *v)
{
    if (!v) return NULL;
    gj_value *root = dup_shallow(v);
    if (!root || !is_container(v)) return root;
    walk w;
    walk_init(&w);
    walk_push(&w, v)->copy = root;
    while (w.n > 0) {
        walk_entry *top = &w.e[w.n - 1];
        const gj_value *src = top->v;
        gj_value *dst = top->copy;
        if (top->next == child_count(src)) {
            w.n--;
            continue;
        }
        size_t i = top->next++;
        const gj_value *sc =
            src->type == GJ_ARRAY ? src->as.arr.items[i] : src->as.obj.items[i].value;
        gj_value *dc = dup_shallow(sc);
        if (!dc) goto fail;
        /* The copy's arrays were sized up front, so appending cannot fail. */
        if (src->type == GJ_ARRAY) {
            dst->as.arr.items[dst->as.arr.len++] = dc;
        } else {
            const gj_str *k = &src->as.obj.items[i].key;
            char *key = cw_strndup(k->ptr, k->len);
            if (!key) {
                cw_gj_free(dc);
                goto fail;
            }
            gj_member *m = &dst->as.obj.items[dst->as.obj.len++];
            m->key.ptr = key;
            m->key.len = k->len;
            m->value = dc;
        }
        if (is_container(sc) && child_count(sc) > 0) {
            walk_entry *e = walk_push(&w, sc);
            if (!e) goto fail;
            e->copy = dc;
        }
    }
    walk_done(&w);
    return root;
fail:
    walk_done(&w);
    cw_gj_free(root);
    return NULL;
}

/* ---------------------------------------------------------------- encoding */

/* Go writes a map's keys in byte order. */
static int member_cmp(const gj_member *a, const gj_member *b)
{
    size_t n = a->key.len < b->key.len ? a->key.len : b->key.len;
    int c = memcmp(a->key.ptr, b->key.ptr, n);
    if (c) return c;
    return a->key.len < b->key.len ? -1 : a->key.len > b->key.len;
}

static int member_ptr_cmp(const void *a, const void *b)
{
    const gj_member *ma = *(const gj_member *const *)a, *mb = *(const gj_member *const *)b;
    int c = member_cmp(ma, mb);
    if (c) return c;
    return ma < mb ? -1 : ma > mb; /* equal keys keep document order (for dedup) */
}

void cw_gj_sort_members(const gj_member *items, size_t n, const gj_member **order)
{
    for (size_t i = 0; i < n; i++)
        order[i] = &items[i];
    if (n > 16) {
        qsort(order, n, sizeof *order, member_ptr_cmp);
        return;
    }
    for (size_t i = 1; i < n; i++) { /* insertion sort: objects are usually small */
        const gj_member *m = order[i];
        size_t j = i;
        while (j > 0 && member_ptr_cmp(&order[j - 1], &m) > 0) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = m;
    }
}

/* Per byte below 0x80: 0 = written as is, 1 = needs an escape. */
static const unsigned char needs_escape[128] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

void cw_gj_encode_string(cw_buf *out, const char *str, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    if (cw_buf_reserve(out, 2) < 0) return;
    out->data[out->len++] = '"';
    while (i < len) {
        /* Reserve for a chunk at a time: every input byte yields at most 6 output
         * bytes (\u00XX, \ufffd; U+2028's 3 bytes become 6). */
        size_t chunk = len - i < 4096 ? len - i : 4096;
        if (cw_buf_reserve(out, chunk * 6 + 8) < 0) return;
        unsigned char *o = (unsigned char *)out->data + out->len;
        size_t stop = i + chunk;
        while (i < stop) {
            unsigned char b = s[i];
            if (b < 0x80) {
                if (!needs_escape[b]) {
                    *o++ = b;
                    i++;
                    continue;
                }
                *o++ = '\\';
                switch (b) {
                case '"':
                    *o++ = '"';
                    break;
                case '\\':
                    *o++ = '\\';
                    break;
                case '\n':
                    *o++ = 'n';
                    break;
                case '\r':
                    *o++ = 'r';
                    break;
                case '\t':
                    *o++ = 't';
                    break;
                case '\b':
                    *o++ = 'b';
                    break; /* Go >= 1.22; PROTOCOL §3.2, §16.1 */
                case '\f':
                    *o++ = 'f';
                    break;
                default: /* other controls and the HTML-sensitive < > & */
                    memcpy(o, "u00", 3);
                    o[3] = (unsigned char)hex[b >> 4];
                    o[4] = (unsigned char)hex[b & 15];
                    o += 5;
                }
                i++;
                continue;
            }
            size_t n = cw_utf8_decode(s + i, len - i, NULL);
            if (n == 0) {
                memcpy(o, "\\ufffd", 6);
                o += 6;
                i++;
            } else if (n == 3 && b == 0xE2 && s[i + 1] == 0x80 && (s[i + 2] & 0xFE) == 0xA8) {
                /* U+2028 and U+2029 end lines in JavaScript. */
                memcpy(o, "\\u202", 5);
                o[5] = s[i + 2] == 0xA8 ? '8' : '9';
                o += 6;
                i += 3;
            } else {
                memcpy(o, s + i, n);
                o += n;
                i += n;
            }
        }
        out->len = (size_t)((char *)o - out->data);
    }
    out->data[out->len++] = '"';
    out->data[out->len] = '\0';
}

static int encode_scalar(cw_buf *out, const gj_value *v, cwork_error *err)
{
    switch (v->type) {
    case GJ_NULL:
        cw_buf_append(out, "null", 4);
        break;
    case GJ_BOOL:
        v->as.b ? cw_buf_append(out, "true", 4) : cw_buf_append(out, "false", 5);
        break;
    case GJ_INT:
        cw_buf_put_int64(out, v->as.i);
        break;
    case GJ_UINT:
        cw_buf_put_uint64(out, v->as.u);
        break;
    case GJ_STRING:
        cw_gj_encode_string(out, v->as.s.ptr, v->as.s.len);
        break;
    case GJ_FLOAT:
        if (!isfinite(v->as.f))
            return cw_error(err, CWORK_EJSON, "json: unsupported value: %s",
                            isnan(v->as.f) ? "NaN"
                            : v->as.f > 0  ? "+Inf"
                                           : "-Inf");
        cw_gj_format_float(out, v->as.f);
        break;
    default:
        break;
    }
    return 0;
}

/* The sorted member pointers of every object on the path being written, in one
 * growing array used as a stack. */
typedef struct order_stack {
    const gj_member **p;
    size_t len, cap;
} order_stack;

static int order_push(order_stack *os, const gj_value *obj, size_t *base)
{
    size_t n = obj->as.obj.len;
    if (os->len + n > os->cap) {
        size_t cap = os->cap ? os->cap : 64;
        while (cap < os->len + n)
            cap *= 2;
        const gj_member **p = cw_realloc(os->p, cap * sizeof *p);
        if (!p) return -1;
        os->p = p;
        os->cap = cap;
    }
    *base = os->len;
    cw_gj_sort_members(obj->as.obj.items, n, os->p + os->len);
    os->len += n;
    return 0;
}

int cw_gj_encode(cw_buf *out, const gj_value *v, cwork_error *err)
{
    if (!is_container(v)) return encode_scalar(out, v, err);
    walk w;
    walk_init(&w);
    order_stack os = {NULL, 0, 0};
    int rc = 0;
    const gj_value *next = v;
    for (;;) {
        if (next) {
            /* Open next: scalars are written at once, containers pushed. */
            if (!is_container(next)) {
                if ((rc = encode_scalar(out, next, err)) != 0) break;
            } else if (child_count(next) == 0) {
                cw_buf_append(out, next->type == GJ_ARRAY ? "[]" : "{}", 2);
            } else {
                walk_entry *e = walk_push(&w, next);
                if (!e || (next->type == GJ_OBJECT && order_push(&os, next, &e->order_base))) {
                    out->oom = 1;
                    break;
                }
                cw_buf_putc(out, next->type == GJ_ARRAY ? '[' : '{');
            }
            next = NULL;
        }
        if (w.n == 0) break;
        walk_entry *top = &w.e[w.n - 1];
        const gj_value *cur = top->v;
        if (top->next == child_count(cur)) {
            cw_buf_putc(out, cur->type == GJ_ARRAY ? ']' : '}');
            if (cur->type == GJ_OBJECT) os.len = top->order_base;
            w.n--;
            continue;
        }
        if (top->next > 0) cw_buf_putc(out, ',');
        size_t i = top->next++;
        if (cur->type == GJ_ARRAY) {
            next = cur->as.arr.items[i];
        } else {
            const gj_member *m = os.p[top->order_base + i];
            cw_gj_encode_string(out, m->key.ptr, m->key.len);
            cw_buf_putc(out, ':');
            next = m->value;
        }
    }
    walk_done(&w);
    cw_free(os.p);
    return rc;
}

/* Go before 1.22 escapes U+0008 and U+000C as \u0008 and \u000c, Go 1.22 and cwork as
 * \b and \f. In Go's output every backslash starts an escape, so the two spellings map
 * escape by escape: a \b is never the second half of a \\. */
int cw_gj_append_go121(cw_buf *out, const char *json, size_t len)
{
    int changed = 0;
    for (size_t i = 0; i < len; i++) {
        if (json[i] == '\\' && i + 1 < len && (json[i + 1] == 'b' || json[i + 1] == 'f')) {
            cw_buf_append(out, json[i + 1] == 'b' ? "\\u0008" : "\\u000c", 6);
            changed = 1;
            i++;
            continue;
        }
        cw_buf_putc(out, json[i]);
        if (json[i] == '\\' && i + 1 < len) cw_buf_putc(out, json[++i]);
    }
    return changed;
}

void cw_gj_respell_go121(cw_buf *out, size_t from)
{
    if (out->oom || from >= out->len || !memchr(out->data + from, '\\', out->len - from)) return;
    char *copy = cw_strndup(out->data + from, out->len - from);
    if (!copy) {
        out->oom = 1;
        return;
    }
    size_t len = out->len - from;
    out->len = from;
    cw_gj_append_go121(out, copy, len);
    cw_free(copy);
}
