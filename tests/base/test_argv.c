/* cw_argv (src/base/argv.c): copies that never move while more are added, borrowed
 * arguments, numbers, replacing one argument, sorting as Go's sort.Strings, reuse after
 * reset, and every allocation failure reported through oom. */
#include "argv.h"

#include "testlib.h"

#include <stdlib.h>

static void copies_stay_put(void)
{
    cw_argv a = {0};
    /* Enough arguments, some large, to need several blocks and argv growths; the first
     * pointers must stay valid throughout (ASan reports a read of freed memory). */
    const char *first = NULL;
    char big[3000];
    memset(big, 'x', sizeof big);
    for (int i = 0; i < 2000; i++) {
        char s[32];
        int len = snprintf(s, sizeof s, "arg-%d", i);
        if (i % 500 == 7)
            cw_argv_add(&a, big, sizeof big);
        else
            cw_argv_add(&a, s, (size_t)len);
        if (i == 0) first = a.argv[0];
    }
    CHECK_INT(cw_argv_check(&a, NULL), 0);
    CHECK_INT(a.n, 2000);
    CHECK(a.argv[0] == first);
    CHECK_MEM(a.argv[0], a.lens[0], "arg-0", 5);
    CHECK_MEM(a.argv[1999], a.lens[1999], "arg-1999", 8);
    CHECK_INT(a.lens[7], sizeof big);
    CHECK(memcmp(a.argv[7], big, sizeof big) == 0);
    for (size_t i = 0; i < a.n; i++)
        CHECK(a.argv[i][a.lens[i]] == '\0'); /* copies are NUL-terminated */
    cw_argv_free(&a);
    CHECK(a.argv == NULL && a.n == 0);
}

static void kinds_of_argument(void)
{
    cw_argv a;
    cw_argv_init(&a);
    const char borrowed[] = "borrowed";
    cw_argv_add_ref(&a, borrowed, 8);
    cw_argv_add(&a, "a\0b", 3); /* binary-safe */
    cw_argv_add_str(&a, "str");
    cw_argv_add_int(&a, INT64_MIN);
    cw_argv_add_int(&a, 0);
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_puts(&b, "from a buf");
    cw_argv_add_buf(&a, &b);
    cw_buf_free(&b);              /* the argument was copied */
    cw_argv_add_ref(&a, NULL, 0); /* an empty argument */
    CHECK_INT(cw_argv_check(&a, NULL), 0);
    CHECK_INT(a.n, 7);
    CHECK(a.argv[0] == borrowed);
    CHECK_MEM(a.argv[1], a.lens[1], "a\0b", 3);
    CHECK_MEM(a.argv[2], a.lens[2], "str", 3);
    CHECK_STR(a.argv[3], "-9223372036854775808");
    CHECK_STR(a.argv[4], "0");
    CHECK_STR(a.argv[5], "from a buf");
    CHECK(a.argv[6] != NULL && a.lens[6] == 0);

    /* Another vector borrowing a's arguments, and one argument replaced. */
    cw_argv all = {0};
    cw_argv_add_str(&all, "EVAL");
    cw_argv_add_refs(&all, &a);
    CHECK_INT(all.n, 8);
    CHECK(all.argv[1] == borrowed && all.argv[2] == a.argv[1]);
    cw_argv_set_int(&all, 5, 1234567);
    CHECK_STR(all.argv[5], "1234567");
    CHECK_STR(a.argv[4], "0"); /* the borrowed original is untouched */
    cw_argv_free(&all);

    /* A failed cw_buf makes the vector fail. */
    cw_buf_init(&b);
    b.oom = 1;
    cw_argv_add_buf(&a, &b);
    cwork_error err = {0};
    CHECK_INT(cw_argv_check(&a, &err), CWORK_ENOMEM);
    CHECK_INT(err.code, CWORK_ENOMEM);
    cw_argv_free(&a);
}

static void sorted_like_go(void)
{
    cw_argv a = {0};
    static const char *const in[] = {"b", "a", "ab", "", "B", "a\xc3\xa9", "aa", "a"};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        cw_argv_add_str(&a, in[i]);
    cw_argv_sort(&a);
    static const char *const want[] = {"", "B", "a", "a", "aa", "ab", "a\xc3\xa9", "b"};
    CHECK_INT(a.n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < a.n; i++)
        CHECK_STR(a.argv[i], want[i]);
    CHECK_INT(cw_argv_find(&a, "aa", 2), 4);
    CHECK_INT(cw_argv_find(&a, "", 0), 0);
    CHECK_INT(cw_argv_find(&a, "c", 1), -1);
    CHECK_INT(cw_argv_find(&a, "a", 1), 2); /* the first of equal ones */
    char *dup = cw_argv_dup(&a, 6);
    CHECK_STR(dup, "a\xc3\xa9");
    cw_free(dup);
    CHECK(cw_argv_dup(&a, 99) == NULL);
    cw_argv_free(&a);
}

static void reset_keeps_memory(void)
{
    cw_argv a = {0};
    for (int i = 0; i < 100; i++)
        cw_argv_add_int(&a, i);
    const char **argv = a.argv;
    cw_argv_block *blocks = a.blocks;
    cw_argv_reset(&a);
    CHECK_INT(a.n, 0);
    for (int i = 0; i < 100; i++)
        cw_argv_add_int(&a, 1000 + i);
    CHECK(a.argv == argv && a.blocks == blocks); /* nothing allocated again */
    CHECK_STR(a.argv[99], "1099");
    cw_argv_free(&a);
    cw_argv_free(&a); /* freeing twice is harmless: the vector is empty */
}

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

/* Builds a vector that needs a dozen allocations; 1 when it is complete, 0 when it
 * reported oom. Either way what it holds must be readable and freeable. */
static int oom_scenario(void)
{
    cw_argv a = {0};
    char big[1500];
    memset(big, 'y', sizeof big);
    for (int i = 0; i < 100; i++) {
        cw_argv_add_int(&a, i);
        if (i % 20 == 0) cw_argv_add(&a, big, sizeof big);
    }
    cw_argv_set_int(&a, 3, 77);
    cw_argv_sort(&a);
    size_t total = 0;
    for (size_t i = 0; i < a.n; i++)
        total += a.lens[i] + (a.argv[i][0] != 0);
    int ok = cw_argv_check(&a, NULL) == 0;
    if (ok && a.n != 105) tl_fail(__FILE__, __LINE__, "complete but %zu arguments", a.n);
    cw_argv_free(&a);
    return ok && total > 0;
}

static void out_of_memory(void)
{
    cwork_set_allocator(limited_malloc, limited_realloc, free);
    long budget = 0;
    for (; budget < 1000; budget++) {
        alloc_budget = budget;
        int ok = oom_scenario();
        alloc_budget = -1;
        if (ok) break;
    }
    cwork_set_allocator(NULL, NULL, NULL);
    CHECK(budget > 5 && budget < 1000);
}

int main(void)
{
    RUN(copies_stay_put);
    RUN(kinds_of_argument);
    RUN(sorted_like_go);
    RUN(reset_keeps_memory);
    RUN(out_of_memory);
    return tl_finish();
}
