/* The shard record <ns>:cwork:shards (sharding.h, PROTOCOL §27.1). */
#include "sharding.h"

#include "keys.h"
#include "util.h"

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

/* A field of the record that must be a count of shards (1 to CW_SHARDING_MAX) into *v;
 * *v 0 when the field is absent. */
static int parse_count(const char *key, const char *field, const char *c, size_t clen, unsigned *v,
                       cwork_error *err)
{
    *v = 0;
    if (!c) return 0;
    char buf[24];
    char *end = NULL;
    snprintf(buf, sizeof buf, "%.*s", (int)(clen < sizeof buf ? clen : sizeof buf - 1), c);
    unsigned long n = strtoul(buf, &end, 10);
    if (clen == 0 || clen >= sizeof buf || *end || buf[0] == '-' || n < 1 || n > CW_SHARDING_MAX)
        return cw_error(err, CWORK_EINVAL,
                        "%s is damaged: its %s \"%.*s\" is not a number of shards (1 to %d)", key,
                        field, (int)(clen > 40 ? 40 : clen), c, CW_SHARDING_MAX);
    *v = (unsigned)n;
    return 0;
}

/* Reads the record into *st; st->count 0 when there is no record. */
static int read_record(cwork_redis *r, const char *key, cw_sharding_state *st, cwork_error *err)
{
    const char *argv[] = {"HMGET", key, "count", "hash", "homes", "from", "grown"};
    redisReply *rep = NULL;
    memset(st, 0, sizeof *st);
    int rc = cw_redis_command(r, 7, argv, NULL, &rep, err);
    if (rc) {
        if (err && strstr(err->message, "WRONGTYPE"))
            return cw_error(err, CWORK_EINVAL,
                            "%s is damaged: it is not a hash (the shard record, PROTOCOL §27.1)",
                            key);
        return rc;
    }
    const char *v[5] = {0};
    size_t len[5] = {0};
    for (size_t i = 0; i < 5 && rc == 0; i++)
        rc = cw_reply_at_str_or_nil(rep, i, &v[i], &len[i], key, err);
    if (rc == 0) rc = parse_count(key, "count", v[0], len[0], &st->count, err);
    if (rc == 0) rc = parse_count(key, "homes", v[2], len[2], &st->homes, err);
    if (rc == 0) rc = parse_count(key, "from", v[3], len[3], &st->from, err);
    if (rc == 0 && v[4] && cw_parse_int64(v[4], len[4], &st->grown))
        rc = cw_error(err, CWORK_EINVAL, "%s is damaged: its grown \"%.*s\" is not a time", key,
                      (int)(len[4] > 40 ? 40 : len[4]), v[4]);
    if (rc == 0 && st->count &&
        ((st->homes && st->homes > st->count) || (st->from && st->from >= st->count)))
        rc = cw_error(err, CWORK_EINVAL,
                      "%s is damaged: homes %u and from %u must be below count %u", key, st->homes,
                      st->from, st->count);
    const char *h = v[1];
    size_t hlen = len[1];
    if (!rc && v[0] && h &&
        (hlen != strlen(SHARDING_HASH_NAME) || memcmp(h, SHARDING_HASH_NAME, hlen)))
        rc = cw_error(err, CWORK_EINVAL,
                      "%s: its shards are chosen by \"%.*s\", which this cwork does not know "
                      "(it uses %s)",
                      key, (int)(hlen > 40 ? 40 : hlen), h, SHARDING_HASH_NAME);
    if (!rc && st->count && !st->homes) st->homes = st->count; /* never grown */
    freeReplyObject(rep);
    return rc;
}

int cw_sharding_record_state(cwork_redis *r, const char *ns, unsigned declared, bool follow,
                             cw_sharding_state *st, cwork_error *err)
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
    int rc = read_record(r, key.data, st, err);
    if (!rc && st->count == 0 && declared != 0) {
        rc = write_record(r, key.data, declared, err);
        if (!rc) rc = read_record(r, key.data, st, err); /* another may have won */
    }
    unsigned recorded = st->count;
    if (!rc && declared != 0 && recorded != declared && !(follow && recorded > declared)) {
        if (recorded > declared && st->grown)
            rc = cw_error(err, CWORK_EINVAL,
                          "namespace \"%s\" was grown to %u shards (%s), this process was told "
                          "%u: declare %u, or none to follow the record",
                          ns, recorded, key.data, declared, recorded);
        else
            rc = cw_error(err, CWORK_EINVAL,
                          "namespace \"%s\" has %u shard%s (%s), this process was told %u: "
                          "every process of a namespace must agree (declare none to follow the "
                          "record; `cwork shards` shows and changes it)",
                          ns, recorded, recorded == 1 ? "" : "s", key.data, declared);
    }
    if (!rc && !recorded) st->count = st->homes = 1;
    cw_buf_free(&key);
    return rc;
}

int cw_sharding_record_sync(cwork_redis *r, const char *ns, unsigned declared, unsigned *count,
                            cwork_error *err)
{
    cw_sharding_state st;
    int rc = cw_sharding_record_state(r, ns, declared, false, &st, err);
    if (!rc) *count = st.count;
    return rc;
}

unsigned cw_sharding_home(const cw_sharding_state *st, const char *name, size_t len)
{
    return cw_sharding_of(name, len, st->homes ? st->homes : st->count);
}
