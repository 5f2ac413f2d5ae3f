/* The throughput history for dashboards (the web UI's graph, `cwork stats --history`):
 * the per-minute counts cwork pools add to one hash per UTC hour (PROTOCOL §14.2), read
 * for the last minutes up to a day and filled with zeros where no job finished. */
#include "client.h"

#include "clock.h"
#include "log.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAX_MINUTES (24 * 60)

/* Adds one HGETALL reply of the hour starting at hour_start to the minutes of the window
 * [first, first + n minutes); fields other than "MM:processed"/"MM:failed" with a whole
 * number are counted as damage and skipped. */
static void add_hour(const redisReply *r, int64_t hour_start, int64_t first, cwork_minute_stats *m,
                     size_t n, int *damaged)
{
    size_t nfields = 0;
    if (cw_reply_array(r, 0, &nfields, NULL, NULL) != 0) {
        *damaged = 1; /* WRONGTYPE: a key someone else wrote */
        return;
    }
    for (size_t i = 0; i + 1 < nfields; i += 2) {
        const char *f, *v;
        size_t flen, vlen;
        int64_t count = 0;
        if (cw_reply_at_str(r, i, &f, &flen, NULL, NULL) != 0 ||
            cw_reply_at_str(r, i + 1, &v, &vlen, NULL, NULL) != 0 || flen < 4 || f[2] != ':' ||
            f[0] < '0' || f[0] > '5' || f[1] < '0' || f[1] > '9' ||
            cw_parse_int64(v, vlen, &count) != 0 || count < 0) {
            *damaged = 1;
            continue;
        }
        int failed = flen == 9 && memcmp(f + 3, "failed", 6) == 0;
        if (!failed && !(flen == 12 && memcmp(f + 3, "processed", 9) == 0)) {
            *damaged = 1;
            continue;
        }
        int64_t minute = hour_start + ((f[0] - '0') * 10 + (f[1] - '0')) * 60;
        if (minute < first || (minute - first) / 60 >= (int64_t)n) continue;
        cwork_minute_stats *s = &m[(minute - first) / 60];
        if (failed)
            s->failed += count;
        else
            s->processed += count;
    }
}

int cwork_client_throughput(cwork_client *client, unsigned minutes, cwork_minute_stats **out,
                            size_t *n, cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    if (!client || !out || !n)
        return cw_error(err, CWORK_EINVAL, "cwork_client_throughput: NULL argument");
    *out = NULL;
    *n = 0;
    if (minutes < 1 || minutes > MAX_MINUTES)
        return cw_error(err, CWORK_EINVAL, "minutes must be from 1 to %d, not %u", MAX_MINUTES,
                        minutes);
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards
                          : cw_shards_throughput(client, (unsigned)shards, minutes, out, n, err);
    cwork_minute_stats *m = cw_calloc(minutes, sizeof *m);
    if (!m) return cw_error(err, CWORK_ENOMEM, "out of memory");
    /* The pools' clock (the system's outside tests), the one their writes follow. */
    int64_t now = cw_clock_now();
    int64_t first = (now / 60 - (int64_t)minutes + 1) * 60;
    for (unsigned i = 0; i < minutes; i++)
        m[i].minute = first + (int64_t)i * 60;
    int64_t first_hour = first / 3600 * 3600;
    size_t hours = (size_t)((now / 3600 * 3600 - first_hour) / 3600 + 1);
    cw_conn *c = NULL;
    int rc = cw_redis_checkout(client->redis, &c, err);
    cw_buf key;
    cw_buf_init(&key);
    for (size_t h = 0; rc == 0 && h < hours; h++) {
        time_t t = (time_t)(first_hour + (int64_t)h * 3600);
        struct tm tm;
        char hour[24];
        gmtime_r(&t, &tm);
        strftime(hour, sizeof hour, "%Y-%m-%dT%H", &tm);
        cw_buf_reset(&key);
        cw_key_stat_hour(&client->keys, &key, hour);
        const char *argv[] = {"HGETALL", key.data};
        size_t lens[] = {7, key.len};
        rc = key.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                     : cw_conn_append(c, 2, argv, lens, err);
    }
    cw_buf_free(&key);
    int damaged = 0;
    for (size_t h = 0; rc == 0 && h < hours; h++) {
        redisReply *r = NULL;
        if ((rc = cw_conn_read(c, &r, err)) != 0) break;
        add_hour(r, first_hour + (int64_t)h * 3600, first, m, minutes, &damaged);
        cw_reply_free(r);
    }
    if (c) cw_redis_checkin(client->redis, c);
    if (rc) {
        cw_free(m);
        return cw_client_fail("client.throughput", rc, err);
    }
    if (damaged)
        cw_log(CWORK_LOG_WARN, "client.throughput.damaged", "error",
               "a per-minute stats key is not a hash of MM:processed/MM:failed counts; "
               "what is not was read as 0",
               NULL);
    *out = m;
    *n = minutes;
    return 0;
}
