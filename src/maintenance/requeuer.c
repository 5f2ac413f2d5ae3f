/* Requeuers for the scheduled and retry sets (PROTOCOL §8). */
#include "requeuer.h"

#include "argv.h"
#include "clock.h"
#include "log.h"
#include "scripts.h"

#include <stdio.h>
#include <string.h>

/* Appends the queue key of name to queues. */
static void add_queue(cw_argv *queues, const cw_keys *keys, const char *name)
{
    cw_buf key;
    cw_buf_init(&key);
    cw_key_queue(keys, &key, name);
    cw_argv_add_buf(queues, &key);
    cw_buf_free(&key);
}

/* Logs what one script call reports: the reasons jobs went to dead (with counts) and
 * the errors of jobs it had to leave in place. The first error goes into err. */
static int report(const redisReply *reasons, const redisReply *errors, cwork_error *err)
{
    for (size_t i = 0; cw_reply_at(reasons, i + 1); i += 2) {
        const char *why;
        int64_t count;
        if (cw_reply_at_str(reasons, i, &why, NULL, NULL, NULL) != 0 ||
            cw_reply_at_int(reasons, i + 1, &count, NULL, NULL) != 0)
            continue;
        char n[24];
        snprintf(n, sizeof n, "%lld", (long long)count);
        cw_log(CWORK_LOG_ERROR, "requeuer.process.dead", "error", why, "jobs", n, NULL);
    }
    int rc = 0;
    for (size_t i = 0; cw_reply_at(errors, i); i++) {
        const char *e;
        if (cw_reply_at_str(errors, i, &e, NULL, NULL, NULL) != 0) continue;
        cw_log(CWORK_LOG_ERROR, "requeuer.process", "error", e, NULL);
        if (rc == 0) rc = cw_error(err, CWORK_EREDIS, "redis: %s", e);
    }
    return rc;
}

/* Logs the periodic instances that were due past their deadline d: the fork's script
 * discards them, upstream's (which knows no d) requeues them like any job. */
static void report_past_deadline(const cw_buf *zset, int64_t n, const char *action)
{
    if (n <= 0) return;
    char count[24];
    snprintf(count, sizeof count, "%lld", (long long)n);
    cw_log(CWORK_LOG_INFO, "requeuer.past_deadline", "action", action, "jobs", count, "key",
           zset->data, NULL);
}

static int requeue_zset(cw_conn *c, const cw_buf *zset, const cw_buf *dead, const cw_buf *prefix,
                        const cw_argv *queues, cwork_go_flavor flavor, size_t *moved,
                        cwork_error *err)
{
    char seed[25];
    if (cw_make_id(seed) != 0)
        return cw_error(err, CWORK_EINVAL, "cannot read the OS random source");
    cw_argv a = {0};
    cw_argv_add_ref(&a, zset->data, zset->len);
    cw_argv_add_ref(&a, dead->data, dead->len);
    cw_argv_add_refs(&a, queues);
    size_t nkeys = a.n;
    cw_argv_add_ref(&a, prefix->data, prefix->len);
    cw_argv_add_int(&a, cw_clock_now());
    cw_argv_add_int(&a, CW_REQUEUE_BATCH);
    size_t skip_at = a.n;
    cw_argv_add_int(&a, 0); /* how many due jobs to step over, set below */
    cw_argv_add_ref(&a, seed, 24);
    cw_argv_add(&a, flavor == CWORK_GO_UPSTREAM ? "0" : "1", 1); /* the fork's d rules */
    cw_argv_add_int(&a, CW_BATCH_TTL_SECONDS); /* a batch member sent to dead counts (§23) */
    long long left = 0;
    int rc = 0;
    for (;;) {
        cw_argv_set_int(&a, skip_at, left);
        if (a.oom) {
            rc = cw_argv_check(&a, err);
            break;
        }
        redisReply *r = NULL;
        int erc = cw_conn_eval(c, &cw_script_requeue, (int)nkeys, (int)(a.n - nkeys), a.argv,
                               a.lens, &r, err);
        if (erc) {
            rc = erc;
            cw_log(CWORK_LOG_ERROR, "requeuer.process", "error", err->message, NULL);
            break;
        }
        /* {moved, to dead, discarded past d, stepped over, dead reasons, errors, moved
         * past d} */
        int64_t n[4] = {0, 0, 0, 0};
        int64_t late = 0;
        if ((erc = cw_reply_ints(r, n, 4, "requeue script", err)) == 0)
            erc = cw_reply_array(r, 7, NULL, "requeue script", err);
        if (erc == 0) erc = cw_reply_at_int(r, 6, &late, "requeue script", err);
        if (erc) {
            cw_reply_free(r);
            rc = erc;
            cw_log(CWORK_LOG_ERROR, "requeuer.process", "error", err->message, NULL);
            break;
        }
        int e = report(cw_reply_at(r, 4), cw_reply_at(r, 5), err);
        report_past_deadline(zset, n[2], "discarded");
        report_past_deadline(zset, late, "requeued");
        if (rc == 0) rc = e;
        cw_reply_free(r);
        *moved += (size_t)n[0];
        left += n[3];
        if (n[0] + n[1] + n[2] + n[3] < CW_REQUEUE_BATCH) break; /* nothing more is due */
    }
    cw_argv_free(&a);
    return rc;
}

int cw_requeue_due(cwork_redis *redis, const cw_keys *keys, cwork_go_flavor flavor,
                   const char *const *known_names, size_t nknown, size_t *moved, cwork_error *err)
{
    *moved = 0;
    cwork_error local = {0};
    if (!err) err = &local; /* the message is logged either way */
    cw_conn *c;
    int rc = cw_redis_checkout(redis, &c, err);
    if (rc) return rc;
    cw_buf known_key, zset, dead, prefix;
    cw_buf_init(&known_key);
    cw_buf_init(&zset);
    cw_buf_init(&dead);
    cw_buf_init(&prefix);
    cw_key_known_jobs(keys, &known_key);
    cw_key_dead(keys, &dead);
    cw_key_jobs_prefix(keys, &prefix);
    cw_argv queues = {0};
    redisReply *members = NULL;
    const char *smembers[] = {"SMEMBERS", known_key.data};
    size_t smembers_lens[] = {8, known_key.len};
    rc = known_key.oom ? cw_error(err, CWORK_ENOMEM, "out of memory")
                       : cw_conn_command(c, 2, smembers, smembers_lens, &members, err);
    if (rc && (known_key.oom || c->broken)) {
        cw_log(CWORK_LOG_ERROR, "requeuer.process", "error", err->message, NULL);
        goto done;
    }
    if (rc) {
        /* An error reply (a damaged known_jobs): the registered names' jobs still move;
         * the others wait (their own pools move them), and the error is reported. */
        cw_log(CWORK_LOG_ERROR, "requeuer.process", "error", err->message, "key", known_key.data,
               NULL);
    }
    for (size_t i = 0; i < nknown; i++)
        add_queue(&queues, keys, known_names[i]);
    cw_argv known = {0};
    if (cw_reply_is_array(members)) cw_reply_strings(members, &known, "SMEMBERS", NULL);
    for (size_t i = 0; i < known.n; i++)
        add_queue(&queues, keys, known.argv[i]);
    if (known.oom) queues.oom = 1;
    cw_argv_free(&known);
    if (queues.oom || dead.oom || prefix.oom) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        goto done;
    }
    /* Both sets, whatever happened to the first: a damaged key in one must not stop
     * the other. Jobs left in place were logged by report(); a failed call is here. */
    for (int set = 0; set < 2; set++) {
        cw_buf_reset(&zset);
        if (set == 0)
            cw_key_scheduled(keys, &zset);
        else
            cw_key_retry(keys, &zset);
        cwork_error e = {0};
        int src = zset.oom ? cw_error(&e, CWORK_ENOMEM, "out of memory")
                           : requeue_zset(c, &zset, &dead, &prefix, &queues, flavor, moved, &e);
        if (src && rc == 0)
            rc = cw_error(err, src, "%s", e.message[0] ? e.message : cwork_strerror(src));
    }
done:
    if (members) cw_reply_free(members);
    cw_redis_checkin(redis, c);
    cw_argv_free(&queues);
    cw_buf_free(&known_key);
    cw_buf_free(&zset);
    cw_buf_free(&dead);
    cw_buf_free(&prefix);
    return rc;
}
