/* A vector of byte strings (argv.h). */
#include "argv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies are carved out of blocks; a full block is left as it is (its copies must not
 * move) and the next one is used or allocated. */
struct cw_argv_block {
    cw_argv_block *next;
    size_t cap, used;
    char data[];
};

enum { MIN_BLOCK = 512 };

void cw_argv_init(cw_argv *a)
{
    memset(a, 0, sizeof *a);
}

void cw_argv_reserve(cw_argv *a, size_t n)
{
    if (a->oom || a->cap - a->n >= n) return;
    size_t cap = a->cap ? a->cap : 8;
    while (cap - a->n < n) {
        if (cap > SIZE_MAX / 2 / sizeof *a->lens) {
            a->oom = 1;
            return;
        }
        cap *= 2;
    }
    const char **argv = cw_realloc(a->argv, cap * sizeof *argv);
    if (!argv) {
        a->oom = 1;
        return;
    }
    a->argv = argv;
    size_t *lens = cw_realloc(a->lens, cap * sizeof *lens);
    if (!lens) {
        a->oom = 1;
        return;
    }
    a->lens = lens;
    a->cap = cap;
}

/* Room for len bytes and a NUL among the copies, or NULL (oom set). */
static char *room(cw_argv *a, size_t len)
{
    if (len >= SIZE_MAX / 2) {
        a->oom = 1;
        return NULL;
    }
    size_t need = len + 1;
    cw_argv_block *b = a->cur;
    while (b && b->cap - b->used < need)
        b = b->next;
    if (!b) {
        /* Each new block at least doubles the last, so that many small copies cost few
         * allocations. */
        size_t last = 0;
        cw_argv_block **tail = &a->blocks;
        while (*tail) {
            last = (*tail)->cap;
            tail = &(*tail)->next;
        }
        size_t cap = last ? 2 * last : MIN_BLOCK;
        if (cap < need) cap = need;
        b = cw_malloc(sizeof *b + cap);
        if (!b) {
            a->oom = 1;
            return NULL;
        }
        b->next = NULL;
        b->cap = cap;
        b->used = 0;
        *tail = b;
    }
    a->cur = b;
    char *p = b->data + b->used;
    b->used += need;
    return p;
}

void cw_argv_add_ref(cw_argv *a, const void *p, size_t len)
{
    cw_argv_reserve(a, 1);
    if (a->oom) return;
    a->argv[a->n] = len ? p : "";
    a->lens[a->n++] = len;
}

void cw_argv_add(cw_argv *a, const void *p, size_t len)
{
    cw_argv_reserve(a, 1);
    char *copy = a->oom ? NULL : room(a, len);
    if (!copy) return;
    if (len) memcpy(copy, p, len);
    copy[len] = '\0';
    cw_argv_add_ref(a, copy, len);
}

void cw_argv_add_str(cw_argv *a, const char *s)
{
    cw_argv_add(a, s, strlen(s));
}

void cw_argv_add_buf(cw_argv *a, const cw_buf *b)
{
    if (b->oom) {
        a->oom = 1;
        return;
    }
    cw_argv_add(a, b->data, b->len);
}

/* v in decimal into out[24]; its length. */
static size_t format_int(char out[24], int64_t v)
{
    return (size_t)snprintf(out, 24, "%lld", (long long)v);
}

void cw_argv_add_int(cw_argv *a, int64_t v)
{
    char s[24];
    cw_argv_add(a, s, format_int(s, v));
}

void cw_argv_add_refs(cw_argv *a, const cw_argv *src)
{
    cw_argv_reserve(a, src->n);
    for (size_t i = 0; i < src->n && !a->oom; i++)
        cw_argv_add_ref(a, src->argv[i], src->lens[i]);
}

void cw_argv_set_int(cw_argv *a, size_t i, int64_t v)
{
    char s[24];
    size_t len = format_int(s, v);
    char *copy = i < a->n ? room(a, len) : NULL;
    if (!copy) {
        a->oom = 1;
        return;
    }
    memcpy(copy, s, len + 1);
    a->argv[i] = copy;
    a->lens[i] = len;
}

int cw_argv_check(const cw_argv *a, cwork_error *err)
{
    return a->oom ? cw_error(err, CWORK_ENOMEM, "out of memory") : 0;
}

/* Sorting moves (pointer, length) pairs, then writes them back to argv and lens. */
typedef struct sort_item {
    const char *p;
    size_t len;
} sort_item;

static int cmp_bytes(const void *x, const void *y)
{
    const sort_item *a = x, *b = y;
    int c = memcmp(a->p, b->p, a->len < b->len ? a->len : b->len);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

void cw_argv_sort(cw_argv *a)
{
    if (a->n < 2) return;
    sort_item *items = cw_malloc(a->n * sizeof *items);
    if (!items) {
        a->oom = 1;
        return;
    }
    for (size_t i = 0; i < a->n; i++)
        items[i] = (sort_item){a->argv[i], a->lens[i]};
    qsort(items, a->n, sizeof *items, cmp_bytes);
    for (size_t i = 0; i < a->n; i++) {
        a->argv[i] = items[i].p;
        a->lens[i] = items[i].len;
    }
    cw_free(items);
}

long cw_argv_find(const cw_argv *a, const char *s, size_t len)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->lens[i] == len && (len == 0 || memcmp(a->argv[i], s, len) == 0)) return (long)i;
    return -1;
}

char *cw_argv_dup(const cw_argv *a, size_t i)
{
    return i < a->n ? cw_strndup(a->argv[i], a->lens[i]) : NULL;
}

void cw_argv_reset(cw_argv *a)
{
    for (cw_argv_block *b = a->blocks; b; b = b->next)
        b->used = 0;
    a->cur = a->blocks;
    a->n = 0;
    a->oom = 0;
}

void cw_argv_free(cw_argv *a)
{
    cw_argv_block *b = a->blocks;
    while (b) {
        cw_argv_block *next = b->next;
        cw_free(b);
        b = next;
    }
    cw_free(a->argv);
    cw_free(a->lens);
    memset(a, 0, sizeof *a);
}
