/* Arrays and objects of gj_value: appending, lookup, replacing a key, Go's map key
 * order, and the duplicate-key rule of decoding (the first position keeps the last
 * value). */
#include "gojson.h"

#include <string.h>

int cw_gj_array_push(gj_value *arr, gj_value *item)
{
    if (arr->as.arr.len == arr->as.arr.cap) {
        size_t cap = arr->as.arr.cap ? arr->as.arr.cap * 2 : 4;
        gj_value **items = cw_realloc(arr->as.arr.items, cap * sizeof *items);
        if (!items) {
            cw_gj_free(item);
            return CWORK_ENOMEM;
        }
        arr->as.arr.items = items;
        arr->as.arr.cap = cap;
    }
    arr->as.arr.items[arr->as.arr.len++] = item;
    return 0;
}

static int key_eq(const gj_str *k, const char *key, size_t len)
{
    return k->len == len && memcmp(k->ptr, key, len) == 0;
}

gj_value *cw_gj_object_get(const gj_value *obj, const char *key, size_t key_len)
{
    if (!obj || obj->type != GJ_OBJECT) return NULL;
    for (size_t i = 0; i < obj->as.obj.len; i++)
        if (key_eq(&obj->as.obj.items[i].key, key, key_len)) return obj->as.obj.items[i].value;
    return NULL;
}

static int obj_reserve(gj_value *obj, size_t extra)
{
    size_t need = obj->as.obj.len + extra;
    if (need <= obj->as.obj.cap) return 0;
    size_t cap = obj->as.obj.cap ? obj->as.obj.cap : 4;
    while (cap < need)
        cap *= 2;
    gj_member *items = cw_realloc(obj->as.obj.items, cap * sizeof *items);
    if (!items) return CWORK_ENOMEM;
    obj->as.obj.items = items;
    obj->as.obj.cap = cap;
    return 0;
}

int cw_gj_object_set(gj_value *obj, const char *key, size_t key_len, gj_value *value)
{
    for (size_t i = 0; i < obj->as.obj.len; i++) {
        gj_member *m = &obj->as.obj.items[i];
        if (key_eq(&m->key, key, key_len)) {
            cw_gj_free(m->value);
            m->value = value;
            return 0;
        }
    }
    char *k = cw_strndup(key, key_len);
    if (!k || obj_reserve(obj, 1) != 0) {
        cw_free(k);
        cw_gj_free(value);
        return CWORK_ENOMEM;
    }
    gj_member *m = &obj->as.obj.items[obj->as.obj.len++];
    m->key.ptr = k;
    m->key.len = key_len;
    m->value = value;
    return 0;
}

int cw_gj_object_dedup(gj_value *obj)
{
    size_t n = obj->as.obj.len;
    gj_member *items = obj->as.obj.items;
    if (n < 2) return 0;
    if (n <= 8) {
        size_t w = 0;
        for (size_t i = 0; i < n; i++) {
            size_t j = 0;
            while (j < w && !key_eq(&items[j].key, items[i].key.ptr, items[i].key.len))
                j++;
            if (j < w) {
                cw_gj_free(items[j].value);
                items[j].value = items[i].value;
                cw_free(items[i].key.ptr);
            } else {
                items[w++] = items[i];
            }
        }
        obj->as.obj.len = w;
        return 0;
    }
    /* Large objects: sort pointers by (key, position) so that duplicates are adjacent,
     * in document order. */
    const gj_member **order = cw_malloc(n * sizeof *order);
    if (!order) return CWORK_ENOMEM;
    cw_gj_sort_members(items, n, order);
    int any = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && key_eq(&order[j]->key, order[i]->key.ptr, order[i]->key.len))
            j++;
        if (j - i > 1) {
            /* The first occurrence takes the last value; the others are dropped and
             * marked with a NULL value. */
            gj_member *first = (gj_member *)order[i], *last = (gj_member *)order[j - 1];
            cw_gj_free(first->value);
            first->value = last->value;
            for (size_t k = i + 1; k < j; k++) {
                gj_member *m = (gj_member *)order[k];
                if (m != last) cw_gj_free(m->value);
                cw_free(m->key.ptr);
                m->value = NULL;
            }
            any = 1;
        }
        i = j;
    }
    cw_free(order);
    if (any) {
        size_t w = 0;
        for (size_t i = 0; i < n; i++)
            if (items[i].value) items[w++] = items[i];
        obj->as.obj.len = w;
    }
    return 0;
}

int cw_gj_object_merge(gj_value *dst, gj_value *src)
{
    size_t n = src->as.obj.len;
    if (obj_reserve(dst, n) != 0) {
        cw_gj_free(src);
        return CWORK_ENOMEM;
    }
    if (n)
        memcpy(dst->as.obj.items + dst->as.obj.len, src->as.obj.items,
               n * sizeof *src->as.obj.items);
    dst->as.obj.len += n;
    src->as.obj.len = 0;
    cw_gj_free(src);
    int rc = cw_gj_object_dedup(dst);
    if (rc) {
        /* Cannot sort: settle duplicates one by one (quadratic, but only under OOM). */
        size_t keep = dst->as.obj.len - n;
        gj_member *items = dst->as.obj.items;
        for (size_t i = keep; i < dst->as.obj.len; i++) {
            size_t j = 0;
            while (j < keep && !key_eq(&items[j].key, items[i].key.ptr, items[i].key.len))
                j++;
            if (j < keep) {
                cw_gj_free(items[j].value);
                items[j].value = items[i].value;
                cw_free(items[i].key.ptr);
            } else {
                items[keep++] = items[i];
            }
        }
        dst->as.obj.len = keep;
    }
    return 0;
}
