/* The namespace of three shards that the CLI's sharded tests (test_cli_shards,
 * test_cli_shards_views) build by hand on the test Redis: its names (shard 0 is the
 * namespace itself, shards 1 and 2 their tagged names, PROTOCOL §27.1), a dump of all
 * three (what a read-only command must leave unchanged) and their removal. Each test
 * writes the record and its own jobs. */
#ifndef CWORK_CLI_SHARDS_TESTUTIL_H
#define CWORK_CLI_SHARDS_TESTUTIL_H

#include "cli_testutil.h"

static redisContext *rc_;
static char ns_[64], shard1_[80], shard2_[80];

#define IN_NS(...) cli_run_in_ns(ns_, NULL, (const char *const[]){__VA_ARGS__, NULL})

/* A fresh namespace from tag, and the names of its shards 1 and 2. */
__attribute__((unused)) static void cs_names(const char *tag)
{
    tl_unique_ns(tag, ns_, sizeof ns_);
    snprintf(shard1_, sizeof shard1_, "{%s.1}", ns_);
    snprintf(shard2_, sizeof shard2_, "{%s.2}", ns_);
}

/* The three shards' keys and values, one string (free it). */
__attribute__((unused)) static char *dump_all(void)
{
    char *a = tl_ns_dump(rc_, ns_), *b = tl_ns_dump(rc_, shard1_), *c = tl_ns_dump(rc_, shard2_);
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *all = malloc(n);
    snprintf(all, n, "%s%s%s", a, b, c);
    free(a);
    free(b);
    free(c);
    return all;
}

__attribute__((unused)) static void cleanup(void)
{
    tl_ns_delete(rc_, ns_);
    tl_ns_delete(rc_, shard1_);
    tl_ns_delete(rc_, shard2_);
}

#endif
