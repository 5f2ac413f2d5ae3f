/* A test's sharded namespace on the test Redis: the names of its shards (shard 0 is the
 * namespace itself, shard i its tagged name, PROTOCOL §27.1), one dump of all of them
 * (what an operation must leave unchanged, or the whole state after it) and their
 * removal. */
#ifndef CWORK_SHARDS_TESTUTIL_H
#define CWORK_SHARDS_TESTUTIL_H

#include "sharding.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

/* A fresh namespace from tag in ns (size bytes), and the names of its first n shards. */
__attribute__((unused)) static void st_fresh_ns(const char *tag, char *ns, size_t size,
                                                char (*shard)[80], unsigned n)
{
    tl_unique_ns(tag, ns, size);
    for (unsigned i = 0; i < n; i++)
        CHECK_INT(cw_sharding_ns(ns, i, shard[i], sizeof shard[i], NULL), 0);
}

/* Deletes every key of the n shards. */
__attribute__((unused)) static void st_delete(redisContext *rc, char (*shard)[80], unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        tl_ns_delete(rc, shard[i]);
}

/* The n shards' keys and values, shard after shard, one string (free it). */
__attribute__((unused)) static char *st_dump(redisContext *rc, char (*shard)[80], unsigned n)
{
    size_t len = 1, at = 0;
    char **d = malloc(n * sizeof *d);
    for (unsigned i = 0; i < n; i++)
        len += strlen(d[i] = tl_ns_dump(rc, shard[i]));
    char *all = malloc(len);
    for (unsigned i = 0; i < n; i++) {
        memcpy(all + at, d[i], strlen(d[i]));
        at += strlen(d[i]);
        free(d[i]);
    }
    all[at] = 0;
    free(d);
    return all;
}

#endif
