/* A vector of byte strings: the one way the library builds the arguments of a Redis
 * command or script call (argv/lens, as cw_conn_command and cw_conn_eval take them), and
 * its list of strings (job names, pool ids).
 *
 * An argument is either copied into storage owned by the vector (cw_argv_add and the
 * number appenders; the copy is NUL-terminated) or borrowed (cw_argv_add_ref: the
 * caller keeps the bytes alive while the vector is used). Copies live in blocks that
 * never move, so argv[] is valid after every append, and pointers taken from it stay
 * valid until cw_argv_reset or cw_argv_free. Appends never fail loudly: out of memory
 * sets `oom` (the failed argument is not added), checked once with cw_argv_check. A
 * zeroed cw_argv is an empty one. Not thread-safe: one vector belongs to one thread. */
#ifndef CWORK_ARGV_H
#define CWORK_ARGV_H

#include "util.h"

#include <stddef.h>
#include <stdint.h>

typedef struct cw_argv_block cw_argv_block;

typedef struct cw_argv {
    const char **argv; /* argv[0..n) */
    size_t *lens;
    size_t n, cap;
    cw_argv_block *blocks, *cur; /* the copies: every block, and the one being filled */
    int oom;
} cw_argv;

void cw_argv_init(cw_argv *a);

/* Copies: p[0..len) (may hold NULs), a NUL-terminated string, a cw_buf (its oom
 * becomes the vector's), a decimal number. */
void cw_argv_add(cw_argv *a, const void *p, size_t len);
void cw_argv_add_str(cw_argv *a, const char *s);
void cw_argv_add_buf(cw_argv *a, const cw_buf *b);
void cw_argv_add_int(cw_argv *a, int64_t v);
/* Borrows p[0..len): nothing is copied. */
void cw_argv_add_ref(cw_argv *a, const void *p, size_t len);
/* Borrows every argument of src (which must outlive a's use). */
void cw_argv_add_refs(cw_argv *a, const cw_argv *src);

/* Replaces argument i (< n) with a copy of v: an argument that changes between calls
 * of the same command (an offset, a rank). */
void cw_argv_set_int(cw_argv *a, size_t i, int64_t v);

/* Makes room for n more arguments at once (one allocation instead of several). */
void cw_argv_reserve(cw_argv *a, size_t n);

/* 0, or CWORK_ENOMEM when an append failed since the last reset. */
int cw_argv_check(const cw_argv *a, cwork_error *err);

/* Byte-wise order (memcmp, a prefix first), as Go's sort.Strings. */
void cw_argv_sort(cw_argv *a);
/* The index of the first argument equal to s[0..len), or -1. */
long cw_argv_find(const cw_argv *a, const char *s, size_t len);
/* Argument i as a NUL-terminated string of its own (cw_free), or NULL when out of
 * memory. */
char *cw_argv_dup(const cw_argv *a, size_t i);

/* Forgets every argument (n = 0, oom cleared), keeping the memory for the next ones. */
void cw_argv_reset(cw_argv *a);
void cw_argv_free(cw_argv *a);

#endif
