/* Builds the cycle script's KEYS and ARGV (layout in cycle_call.h and cycle.lua). */
#include "cycle_call.h"

#include <string.h>

void cw_cycle_call_init(cw_cycle_call *c, size_t ntypes)
{
    memset(c, 0, sizeof *c);
    c->ntypes = ntypes;
    c->width = ntypes <= 255 ? 1 : 2;
    cw_buf_init(&c->draws);
}

void cw_cycle_call_add_draw(cw_cycle_call *c, const size_t *order)
{
    for (size_t i = 0; i < c->ntypes; i++) {
        size_t t = order[i] + 1; /* the script's indices are 1-based */
        if (c->width == 2)
            cw_buf_putc(&c->draws, (char)(unsigned char)(t >> 8));
        cw_buf_putc(&c->draws, (char)(unsigned char)(t & 0xff));
    }
}

int cw_cycle_call_finish(cw_cycle_call *c, const cw_cycle_keys *keys, const char *pool_id,
                         bool single, const char *const *commit_argv, const size_t *commit_lens,
                         size_t commit_n)
{
    size_t nkeys = CW_CYCLE_KEY_KINDS * c->ntypes + 2, nargs = 4 + (commit_n ? commit_n : 1);
    cw_free(c->argv);
    cw_free(c->lens);
    c->argv = cw_malloc((nkeys + nargs) * sizeof *c->argv);
    c->lens = cw_malloc((nkeys + nargs) * sizeof *c->lens);
    if (!c->argv || !c->lens || c->draws.oom)
        return CWORK_ENOMEM;
    size_t a = 0;
    for (int kind = 0; kind < CW_CYCLE_KEY_KINDS; kind++)
        for (size_t t = 0; t < c->ntypes; t++, a++)
            c->argv[a] = keys->key(keys->ud, t, (cw_cycle_key)kind, &c->lens[a]);
    c->argv[a] = keys->retry, c->lens[a++] = keys->retry_len;
    c->argv[a] = keys->dead, c->lens[a++] = keys->dead_len;
    c->argv[a] = pool_id, c->lens[a++] = strlen(pool_id);
    c->argv[a] = single ? "1" : "0", c->lens[a++] = 1;
    /* An empty draws buffer may have no data yet: "" then (no fetch). */
    c->argv[a] = c->draws.len ? c->draws.data : "", c->lens[a++] = c->draws.len;
    c->argv[a] = c->width == 2 ? "2" : "1", c->lens[a++] = 1;
    if (commit_n) {
        for (size_t i = 0; i < commit_n; i++)
            c->argv[a] = commit_argv[i], c->lens[a++] = commit_lens[i];
    } else {
        c->argv[a] = "", c->lens[a++] = 0; /* no groups: nothing to commit */
    }
    c->nkeys = (int)nkeys;
    c->nargs = (int)(a - nkeys);
    return 0;
}

void cw_cycle_call_reset(cw_cycle_call *c)
{
    cw_buf_reset(&c->draws);
    c->nkeys = c->nargs = 0;
}

void cw_cycle_call_clear(cw_cycle_call *c)
{
    cw_buf_free(&c->draws);
    cw_free(c->argv);
    cw_free(c->lens);
    memset(c, 0, sizeof *c);
}
