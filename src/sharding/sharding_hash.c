/* Which shard a routing key belongs to (sharding.h, PROTOCOL §27.2). */
#include "sharding.h"

#include "invariant.h"

uint64_t cw_sharding_hash(const void *key, size_t len)
{
    const unsigned char *p = key;
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64: offset basis */
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL; /* FNV prime */
    }
    return h;
}

/* Lamping and Veach's jump consistent hash: a key's shard under S+1 shards is either its
 * shard under S or the new one, S, with probability 1/(S+1). */
unsigned cw_sharding_pick(uint64_t h, unsigned shards)
{
    CW_ASSERT(shards >= 1);
    int64_t b = 0, j = 0;
    while (j < (int64_t)shards) {
        b = j;
        h = h * 2862933555777941757ULL + 1;
        j = (int64_t)((double)(b + 1) * ((double)(1LL << 31) / (double)((h >> 33) + 1)));
    }
    return (unsigned)b;
}

unsigned cw_sharding_of(const char *key, size_t len, unsigned shards)
{
    return cw_sharding_pick(cw_sharding_hash(key, len), shards);
}
