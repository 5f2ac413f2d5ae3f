/* The priority sampler of PROTOCOL §5.3: before each draw, the job types are reordered by
 * weighted random selection without replacement (the first type is i with probability
 * p_i / sum), the permutation carried over to the next draw. */
#ifndef CWORK_SAMPLER_H
#define CWORK_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

typedef struct cw_sampler {
    size_t n;
    size_t *order;      /* indices into the pool's types, current permutation */
    uint32_t *priority; /* by type index */
    uint64_t rng[2];    /* xorshift128+ state */
} cw_sampler;

/* 0 or -1 (out of memory). */
int cw_sampler_init(cw_sampler *s, const unsigned *priorities, size_t n);
void cw_sampler_clear(cw_sampler *s);
/* Reorders s->order for one draw (the result is s->order). */
void cw_sampler_draw(cw_sampler *s);

#endif
