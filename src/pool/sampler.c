/* Weighted reordering of job types before every fetch draw (PROTOCOL §5.3). */
#include "sampler.h"

#include "util.h"

#include <string.h>

int cw_sampler_init(cw_sampler *s, const unsigned *priorities, size_t n)
{
    memset(s, 0, sizeof *s);
    s->order = cw_calloc(n ? n : 1, sizeof *s->order);
    s->priority = cw_calloc(n ? n : 1, sizeof *s->priority);
    if (!s->order || !s->priority) {
        cw_sampler_clear(s);
        return -1;
    }
    s->n = n;
    for (size_t i = 0; i < n; i++) {
        s->order[i] = i;
        s->priority[i] = priorities[i];
    }
    if (cw_random_bytes(s->rng, sizeof s->rng) != 0 || (s->rng[0] | s->rng[1]) == 0) {
        s->rng[0] = 0x9e3779b97f4a7c15ull;
        s->rng[1] = (uint64_t)cw_now_ms() | 1;
    }
    return 0;
}

void cw_sampler_clear(cw_sampler *s)
{
    cw_free(s->order);
    cw_free(s->priority);
    memset(s, 0, sizeof *s);
}

static uint32_t next_u32(cw_sampler *s)
{
    uint64_t x = s->rng[0], y = s->rng[1];
    s->rng[0] = y;
    x ^= x << 23;
    s->rng[1] = x ^ y ^ (x >> 17) ^ (y >> 26);
    return (uint32_t)((s->rng[1] + y) >> 32);
}

void cw_sampler_draw(cw_sampler *s)
{
    uint64_t remaining = 0;
    for (size_t i = 0; i < s->n; i++)
        remaining += s->priority[i];
    for (size_t start = 0; start + 1 < s->n; start++) {
        uint64_t r = next_u32(s) % remaining;
        /* Walk the unplaced entries from the last one down, as Go does. */
        uint64_t sum = 0;
        size_t chosen = start;
        for (size_t i = s->n; i-- > start;) {
            sum += s->priority[s->order[i]];
            if (sum > r) {
                chosen = i;
                break;
            }
        }
        size_t tmp = s->order[start];
        s->order[start] = s->order[chosen];
        s->order[chosen] = tmp;
        remaining -= s->priority[s->order[start]];
    }
}
