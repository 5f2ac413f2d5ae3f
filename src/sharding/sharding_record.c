/* The shard record <ns>:cwork:shards (sharding.h, PROTOCOL §27.1). */
#include "sharding.h"

#include "keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The hash function's name in the record: a process that shards another way is refused
 * rather than sending jobs where the others do not look. */
#define SHARDING_HASH_NAME "fnv1a64-jump"

/* HSETNX key field value. */
static int set_if_absent(cwork_redis *r, const char *key, const char *field, const char *value,
                         cwork_error *err)
{
    const char *argv[] = {"HSETNX", key, field, value};
    return cw_redis_command(r, 4, argv, NULL, NULL, err);
}

/* Writes the record of a namespace declared with count shards, field by field (HSETNX:
 * the first process to write the count decides it; a crash between the fields leaves
 * a record that still reads as complete, the others having defaults). */
static int write_record(cwork_redis *r, const char *key, unsigned count, cwork_error *err)
{
    char text[24];
    snprintf(text, sizeof text, "%u", count);
    int rc = set_if_absent(r, key, "count", text, err);
    if (!rc) rc = set_if_absent(r, key, "hash", SHARDING_HASH_NAME, err);
    if (!rc) {
        snprintf(text, sizeof text, "%lld", (long long)cw_now());
        rc = set_if_absent(r, key, "created", text, err);
    }
    return rc;
}

/* Reads count and hash; *count 0 when there is no record. */
static int read_record(cwork_redis *r, const char *key, unsigned *count, cwork_error *err)
{
    const char *argv[] = {"HMGET", key, "count", "hash"};
    redisReply *rep = NULL;
    int rc = cw_redis_command(r, 4, argv, NULL, &rep, err);
    if (rc) {
        if (err && strstr(err->message, "WRONGTYPE"))
            return cw_error(err, CWORK_EINVAL,
                            "%s is damaged: it is not a hash (the shard record, PROTOCOL §27.1)",
                            key);
        return rc;
    }
    const char *c = NULL, *h = NULL;
    size_t clen = 0, hlen = 0;
    rc = cw_reply_at_str_or_nil(rep, 0, &c, &clen, key, err);
    if (!rc) rc = cw_reply_at_str_or_nil(rep, 1, &h, &hlen, key, err);
    *count = 0;
    if (!rc && c) {
        char buf[24];
        char *end = NULL;
        snprintf(buf, sizeof buf, "%.*s", (int)(clen < sizeof buf ? clen : sizeof buf - 1), c);
        unsigned long v = strtoul(buf, &end, 10);
        if (clen == 0 || clen >= sizeof buf || *end || buf[0] == '-' || v < 1 ||
            v > CW_SHARDING_MAX)
            rc = cw_error(err, CWORK_EINVAL,
                          "%s is damaged: its count \"%.*s\" is not a number of shards (1 to %d)",
                          key, (int)(clen > 40 ? 40 : clen), c, CW_SHARDING_MAX);
        else
            *count = (unsigned)v;
    }
    if (!rc && c && h &&
        (hlen != strlen(SHARDING_HASH_NAME) || memcmp(h, SHARDING_HASH_NAME, hlen)))
        rc = cw_error(err, CWORK_EINVAL,
                      "%s: its shards are chosen by \"%.*s\", which this cwork does not know "
                      "(it uses %s)",
                      key, (int)(hlen > 40 ? 40 : hlen), h, SHARDING_HASH_NAME);
    freeReplyObject(rep);
    return rc;
}

int cw_sharding_record_sync(cwork_redis *r, const char *ns, unsigned declared, unsigned *count,
                            cwork_error *err)
{
    if (declared > CW_SHARDING_MAX)
        return cw_error(err, CWORK_EINVAL, "%u shards: at most %d", declared, CW_SHARDING_MAX);
    if (declared > 1) {
        int rc = cw_sharding_check_ns(ns, err);
        if (rc) return rc;
    }
    cw_keys keys;
    if (cw_keys_init(&keys, ns)) return cw_error(err, CWORK_ENOMEM, "out of memory");
    cw_buf key = {0};
    cw_key_shards(&keys, &key);
    cw_keys_clear(&keys);
    if (key.oom) {
        cw_buf_free(&key);
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    unsigned recorded = 0;
    int rc = read_record(r, key.data, &recorded, err);
    if (!rc && recorded == 0 && declared != 0) {
        rc = write_record(r, key.data, declared, err);
        if (!rc) rc = read_record(r, key.data, &recorded, err); /* another may have won */
    }
    if (!rc && declared != 0 && recorded != declared)
        rc = cw_error(err, CWORK_EINVAL,
                      "namespace \"%s\" has %u shard%s (%s), this process was told %u: every "
                      "process of a namespace must agree (declare none to follow the record; "
                      "`cwork shards` shows and changes it)",
                      ns, recorded, recorded == 1 ? "" : "s", key.data, declared);
    if (!rc) *count = recorded ? recorded : 1;
    cw_buf_free(&key);
    return rc;
}
