/* The cycle call's layout with and without the section of results and kept successes
 * (PROTOCOL §22): a commit without them is laid out exactly as before — the same KEYS,
 * ARGV[2] the bare single-step flag, nothing after the commit's arguments — and one
 * with them puts its keys after the dead set, their number after the flag, and its
 * arguments last; a reset forgets them. */
#include "cycle_call.h"
#include "testlib.h"

#include <string.h>

static const char *key(const void *ud, size_t type, cw_cycle_key kind, size_t *len)
{
    static char buf[CW_CYCLE_KEY_KINDS * 2][16];
    (void)ud;
    char *k = buf[(size_t)kind * 2 + type];
    snprintf(k, sizeof buf[0], "k%d.%zu", (int)kind, type);
    *len = strlen(k);
    return k;
}

/* Argument i of the call as a string (they are all printable here). */
static const char *arg(const cw_cycle_call *c, int i)
{
    static char s[64];
    snprintf(s, sizeof s, "%.*s", (int)c->args.lens[i], c->args.argv[i]);
    return s;
}

static void plain_and_extended_layouts(void)
{
    cw_cycle_keys keys = {.ntypes = 2,
                          .key = key,
                          .retry = "p:retry",
                          .dead = "p:dead",
                          .retry_len = 7,
                          .dead_len = 6,
                          .cancelled = "p:cwork:cancelled",
                          .cancelled_len = 17};
    cw_argv commit = {0}, xkeys = {0}, xargs = {0};
    cw_argv_add_str(&commit, "groups");
    cw_argv_add_str(&commit, "job-bytes");
    cw_argv_add_str(&xkeys, "p:cwork:result:j1");
    cw_argv_add_str(&xkeys, "p:cwork:succeeded:a");
    for (int i = 0; i < 5; i++)
        cw_argv_add_int(&xargs, i);
    cw_cycle_call c;
    cw_cycle_call_init(&c, 2);
    size_t order[2] = {1, 0};
    cw_cycle_call_add_draw(&c, order);

    /* Plain: 6 kinds × 2 types + retry, dead, cancelled; pool, "0", draws, width, the
     * commit. */
    CHECK_INT(cw_cycle_call_finish(&c, &keys, "pool", false, &commit), 0);
    CHECK_INT(c.nkeys, 15);
    CHECK_INT(c.nargs, 6);
    CHECK_STR(arg(&c, 13), "p:dead");
    CHECK_STR(arg(&c, 14), "p:cwork:cancelled");
    CHECK_STR(arg(&c, 16), "0");
    CHECK_STR(arg(&c, 20), "job-bytes");
    /* Empty extras are none. */
    cw_cycle_call_reset(&c);
    cw_argv empty = {0};
    cw_cycle_call_set_extras(&c, &empty, &xargs);
    CHECK_INT(cw_cycle_call_finish(&c, &keys, "pool", true, &commit), 0);
    CHECK_INT(c.nkeys, 15);
    CHECK_INT(c.nargs, 6);
    CHECK_STR(arg(&c, 16), "1");

    /* With extras: their keys after cancelled, "<flag> x<their number> b0", their args
     * after the commit. */
    cw_cycle_call_reset(&c);
    cw_cycle_call_add_draw(&c, order);
    cw_cycle_call_set_extras(&c, &xkeys, &xargs);
    CHECK_INT(cw_cycle_call_finish(&c, &keys, "pool", true, &commit), 0);
    CHECK_INT(c.nkeys, 17);
    CHECK_INT(c.nargs, 11);
    CHECK_STR(arg(&c, 14), "p:cwork:cancelled");
    CHECK_STR(arg(&c, 15), "p:cwork:result:j1");
    CHECK_STR(arg(&c, 16), "p:cwork:succeeded:a");
    CHECK_STR(arg(&c, 17), "pool");
    CHECK_STR(arg(&c, 18), "1 x2 b0");
    CHECK_STR(arg(&c, 22), "job-bytes");
    CHECK_STR(arg(&c, 23), "0");
    CHECK_STR(arg(&c, 27), "4");

    /* A batch section (the commit's last arguments) is counted in the mode. */
    cw_cycle_call_reset(&c);
    cw_cycle_call_set_batch(&c, 1);
    CHECK_INT(cw_cycle_call_finish(&c, &keys, "pool", false, &commit), 0);
    CHECK_INT(c.nkeys, 15);
    CHECK_STR(arg(&c, 16), "0 x0 b1");

    /* Without a commit there is nothing to attach them to; a reset forgets them. */
    cw_cycle_call_reset(&c);
    cw_cycle_call_set_extras(&c, &xkeys, &xargs);
    cw_cycle_call_set_batch(&c, 1);
    CHECK_INT(cw_cycle_call_finish(&c, &keys, "pool", false, NULL), 0);
    CHECK_INT(c.nkeys, 15);
    CHECK_INT(c.nargs, 5);
    CHECK_STR(arg(&c, 16), "0");
    cw_cycle_call_reset(&c);
    CHECK_INT(cw_cycle_call_finish(&c, &keys, "pool", false, &commit), 0);
    CHECK_INT(c.nkeys, 15);
    CHECK_INT(c.nargs, 6);
    CHECK_STR(arg(&c, 16), "0");

    cw_cycle_call_clear(&c);
    cw_argv_free(&commit);
    cw_argv_free(&xkeys);
    cw_argv_free(&xargs);
}

int main(void)
{
    RUN(plain_and_extended_layouts);
    return tl_finish();
}
