/* Builds the cycle script's KEYS and ARGV (layout in cycle_call.h and cycle.lua). */
#include "cycle_call.h"

#include <stdio.h>
#include <string.h>

void cw_cycle_call_init(cw_cycle_call *c, size_t ntypes)
{
    memset(c, 0, sizeof *c);
    c->ntypes = ntypes;
    c->width = ntypes <= 255 ? 1 : 2;
    cw_buf_init(&c->draws);
    cw_buf_init(&c->width_arg);
}

void cw_cycle_call_add_draw(cw_cycle_call *c, const size_t *order)
{
    for (size_t i = 0; i < c->ntypes; i++) {
        size_t t = order[i] + 1; /* the script's indices are 1-based */
        if (c->width == 2) cw_buf_putc(&c->draws, (char)(unsigned char)(t >> 8));
        cw_buf_putc(&c->draws, (char)(unsigned char)(t & 0xff));
    }
}

int cw_cycle_call_finish(cw_cycle_call *c, const cw_cycle_keys *keys, const char *pool_id,
                         bool single, const cw_argv *commit)
{
    return cw_cycle_call_finish_limited(c, keys, pool_id, single, commit, NULL, 0, -1);
}

/* ARGV[4]: the width alone, or "<width> <now|-> <t1> … <tL>" (1-based indices). */
static void put_width_arg(cw_cycle_call *c, const size_t *limited, size_t nlimited, int64_t now_us)
{
    cw_buf *b = &c->width_arg;
    cw_buf_reset(b);
    cw_buf_putc(b, c->width == 2 ? '2' : '1');
    if (!nlimited) return;
    char num[32];
    if (now_us < 0)
        cw_buf_puts(b, " -");
    else {
        snprintf(num, sizeof num, " %lld", (long long)now_us);
        cw_buf_puts(b, num);
    }
    for (size_t i = 0; i < nlimited; i++) {
        snprintf(num, sizeof num, " %zu", limited[i] + 1);
        cw_buf_puts(b, num);
    }
}

int cw_cycle_call_finish_limited(cw_cycle_call *c, const cw_cycle_keys *keys, const char *pool_id,
                                 bool single, const cw_argv *commit, const size_t *limited,
                                 size_t nlimited, int64_t now_us)
{
    size_t commit_n = commit ? commit->n : 0;
    size_t extra = nlimited ? nlimited + 1 : 0;
    size_t nx = c->extra_keys && commit_n ? c->extra_keys->n : 0;
    size_t nkeys = CW_CYCLE_KEY_KINDS * c->ntypes + 3 + extra + nx,
           nargs = 4 + (commit_n ? commit_n : 1) + (nx ? c->extra_args->n : 0) + nlimited;
    cw_argv *a = &c->args;
    cw_argv_reset(a);
    cw_argv_reserve(a, nkeys + nargs);
    put_width_arg(c, limited, nlimited, now_us);
    if (a->oom || c->draws.oom || c->width_arg.oom) return CWORK_ENOMEM;
    for (int kind = 0; kind < CW_CYCLE_KEY_KINDS; kind++) {
        for (size_t t = 0; t < c->ntypes; t++) {
            size_t len;
            const char *key = keys->key(keys->ud, t, (cw_cycle_key)kind, &len);
            cw_argv_add_ref(a, key, len);
        }
    }
    cw_argv_add_ref(a, keys->retry, keys->retry_len);
    cw_argv_add_ref(a, keys->dead, keys->dead_len);
    cw_argv_add_ref(a, keys->cancelled, keys->cancelled_len);
    if (nlimited) cw_argv_add_ref(a, keys->rate_limits, keys->rate_limits_len);
    for (size_t i = 0; i < nlimited; i++) {
        size_t len;
        const char *key = keys->key(keys->ud, limited[i], CW_CYCLE_RATE_LIMIT, &len);
        cw_argv_add_ref(a, key, len);
    }
    if (nx) cw_argv_add_refs(a, c->extra_keys);
    cw_argv_add_ref(a, pool_id, strlen(pool_id));
    size_t nb = commit_n ? c->batch_nargs : 0;
    if (nx || nb) { /* "<single> x<extra keys> b<batch arguments>": the script finds the
                     * types' keys before the extra keys, and each section after the last */
        snprintf(c->mode, sizeof c->mode, "%c x%zu b%zu", single ? '1' : '0', nx, nb);
        cw_argv_add_ref(a, c->mode, strlen(c->mode));
    } else {
        cw_argv_add_ref(a, single ? "1" : "0", 1);
    }
    cw_argv_add_ref(a, c->draws.data, c->draws.len); /* empty: no fetch */
    cw_argv_add_ref(a, c->width_arg.data, c->width_arg.len);
    if (commit_n)
        cw_argv_add_refs(a, commit);
    else
        cw_argv_add_ref(a, "", 0); /* no groups: nothing to commit */
    if (nx) cw_argv_add_refs(a, c->extra_args);
    for (size_t i = 0; i < nlimited; i++) { /* the last L arguments */
        size_t len;
        const char *name = keys->key(keys->ud, limited[i], CW_CYCLE_NAME, &len);
        cw_argv_add_ref(a, name, len);
    }
    if (a->oom) return CWORK_ENOMEM;
    c->nkeys = (int)nkeys;
    c->nargs = (int)(a->n - nkeys);
    return 0;
}

void cw_cycle_call_set_extras(cw_cycle_call *c, const cw_argv *keys, const cw_argv *args)
{
    c->extra_keys = keys && keys->n ? keys : NULL;
    c->extra_args = c->extra_keys ? args : NULL;
}

void cw_cycle_call_set_batch(cw_cycle_call *c, size_t nargs)
{
    c->batch_nargs = nargs;
}

void cw_cycle_call_reset(cw_cycle_call *c)
{
    c->extra_keys = c->extra_args = NULL;
    c->batch_nargs = 0;
    cw_buf_reset(&c->draws);
    cw_argv_reset(&c->args);
    c->nkeys = c->nargs = 0;
}

void cw_cycle_call_clear(cw_cycle_call *c)
{
    cw_buf_free(&c->draws);
    cw_buf_free(&c->width_arg);
    cw_argv_free(&c->args);
    memset(c, 0, sizeof *c);
}
