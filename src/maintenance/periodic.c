/* The periodic enqueuer's pass (PROTOCOL §10.2, §10.3): the window check on
 * <p>last_periodic_enqueue, then every instance of every registered periodic job with a
 * fire time in [now, now + 240 s), written to <p>scheduled byte for byte as Go writes
 * it, then the key set to now. Also the publishing of a pool's periodic jobs for
 * dashboards (<p>cwork:periodic, cwork's own key): Go pools publish nothing, so a
 * dashboard would otherwise only learn of a schedule from the instances written a few
 * minutes ahead of their fire time. */
#include "periodic.h"

#include "argv.h"
#include "flavor.h"
#include "gojson.h"
#include "job.h"
#include "log.h"
#include "scripts.h"
#include "tzfile.h"

#include <stdio.h>
#include <string.h>

/* What Go writes as `d` when the following fire time is robfig's zero time
 * (time.Time{}.Unix(), 0001-01-01 UTC). */
#define GO_ZERO_TIME_UNIX INT64_C(-62135596800)

typedef struct periodic_job {
    char *name;
    char *spec;
    cw_cron *schedule;
} periodic_job;

struct cw_periodic {
    periodic_job *jobs;
    size_t n, cap;
    cwork_go_flavor flavor;
    cwork_go_json go_json;
    atomic_int warned; /* mixed-namespace warning given (flavor.h) */
};

cw_periodic *cw_periodic_new(void)
{
    return cw_calloc(1, sizeof(cw_periodic));
}

void cw_periodic_free(cw_periodic *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) {
        cw_free(p->jobs[i].name);
        cw_free(p->jobs[i].spec);
        cw_cron_free(p->jobs[i].schedule);
    }
    cw_free(p->jobs);
    cw_free(p);
}

int cw_periodic_add(cw_periodic *p, const char *spec, const char *name, cwork_error *err)
{
    if (!p || !spec || !name) return cw_error(err, CWORK_EINVAL, "periodic: NULL argument");
    cw_cron *c = NULL;
    int rc = cw_cron_parse(spec, &c, err);
    if (rc) return rc;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 4;
        periodic_job *jobs = cw_realloc(p->jobs, cap * sizeof *jobs);
        if (!jobs) {
            cw_cron_free(c);
            return cw_error(err, CWORK_ENOMEM, "out of memory");
        }
        p->jobs = jobs;
        p->cap = cap;
    }
    periodic_job *j = &p->jobs[p->n];
    j->name = cw_strdup(name);
    j->spec = cw_strdup(spec);
    j->schedule = c;
    if (!j->name || !j->spec) {
        cw_free(j->name);
        cw_free(j->spec);
        cw_cron_free(c);
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    p->n++;
    return 0;
}

void cw_periodic_set_flavor(cw_periodic *p, cwork_go_flavor flavor)
{
    if (p) p->flavor = flavor;
}

void cw_periodic_set_go_json(cw_periodic *p, cwork_go_json spelling)
{
    if (p) p->go_json = spelling;
}

/* Adds an instance's bytes as the namespace's Go spells them: a name or spec holding
 * U+0008/U+000C is \u0008/\u000c in a Go 1.21 instance, and the members of one fire
 * time must be byte-identical to be one (PROTOCOL §10.3). */
static void add_member(cw_argv *z, cw_buf *member, cwork_go_json spelling)
{
    if (spelling != CWORK_GO_JSON_121 || member->oom || !memchr(member->data, '\\', member->len)) {
        cw_argv_add_buf(z, member);
        return;
    }
    cw_buf old;
    cw_buf_init(&old);
    cw_gj_append_go121(&old, member->data, member->len);
    if (old.oom)
        z->oom = 1;
    else
        cw_argv_add_buf(z, &old);
    cw_buf_free(&old);
}

size_t cw_periodic_count(const cw_periodic *p)
{
    return p ? p->n : 0;
}

const char *cw_periodic_name(const cw_periodic *p, size_t i)
{
    return p->jobs[i].name;
}

const char *cw_periodic_spec(const cw_periodic *p, size_t i)
{
    return p->jobs[i].spec;
}

const cw_cron *cw_periodic_schedule(const cw_periodic *p, size_t i)
{
    return p->jobs[i].schedule;
}

void cw_periodic_instance(cw_buf *out, const char *name, const char *spec, int64_t fire,
                          int64_t next)
{
    cw_periodic_instance_as(out, CWORK_GO_FORK, name, spec, fire, next);
}

void cw_periodic_instance_as(cw_buf *out, cwork_go_flavor flavor, const char *name,
                             const char *spec, int64_t fire, int64_t next)
{
    cw_buf id;
    cw_buf_init(&id);
    cw_buf_puts(&id, "periodic:");
    cw_buf_puts(&id, name);
    cw_buf_putc(&id, ':');
    cw_buf_puts(&id, spec);
    cw_buf_putc(&id, ':');
    cw_buf_put_int64(&id, fire);
    if (id.oom) {
        out->oom = 1;
        return;
    }
    cwork_job j;
    memset(&j, 0, sizeof j);
    j.name.ptr = (char *)name;
    j.name.len = strlen(name);
    j.id.ptr = id.data;
    j.id.len = id.len;
    j.err.ptr = (char *)"";
    j.t = fire;
    if (flavor == CWORK_GO_FORK) /* upstream's Job has no `d` */
        j.d = next != 0 ? next : GO_ZERO_TIME_UNIX;
    cw_job_encode(out, &j, NULL); /* cannot fail: no args */
    cw_buf_free(&id);
}

/* redigo's Int64 on a bulk string: strconv.ParseInt(s, 10, 64). */
static int parse_go_int64(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (n > 0 && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == n) return -1;
    uint64_t v = 0, lim = neg ? UINT64_C(1) << 63 : (UINT64_C(1) << 63) - 1;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (lim - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* GET <p>last_periodic_enqueue: whether this pass should schedule (PROTOCOL §10.2). */
static int should_enqueue(cw_conn *c, const cw_keys *keys, int64_t now)
{
    cw_buf key;
    cw_buf_init(&key);
    cw_key_last_periodic_enqueue(keys, &key);
    if (key.oom) {
        cw_log(CWORK_LOG_ERROR, "periodic_enqueuer.should_enqueue", "error", "out of memory", NULL);
        return 1;
    }
    const char *argv[] = {"GET", key.data};
    const size_t lens[] = {3, key.len};
    cwork_error e = {0};
    redisReply *r = NULL;
    int rc = cw_conn_command(c, 2, argv, lens, &r, &e);
    cw_buf_free(&key);
    if (rc) {
        cw_log(CWORK_LOG_ERROR, "periodic_enqueuer.should_enqueue", "error", e.message, NULL);
        return 1;
    }
    int yes = 1;
    int64_t last;
    const char *s;
    size_t len;
    if (cw_reply_is_nil(r)) {
        yes = 1;
    } else if ((cw_reply_str(r, &s, &len, NULL, NULL) == 0 && parse_go_int64(s, len, &last) == 0) ||
               cw_reply_int(r, &last, NULL, NULL) == 0) {
        yes = last < now - CW_PERIODIC_WINDOW;
    } else {
        char msg[160];
        snprintf(msg, sizeof msg, "strconv.ParseInt: parsing \"%.100s\": invalid syntax",
                 cw_reply_is_str(r) ? cw_reply_text(r) : "");
        cw_log(CWORK_LOG_ERROR, "periodic_enqueuer.should_enqueue", "error", msg, NULL);
    }
    cw_reply_free(r);
    return yes;
}

/* Every instance of job j in [now, horizon): Next(now), Next(Next(now)), … — each as a
 * triplet of the schedule script: score, this flavour's member, the other flavour's. */
static int add_instances(const periodic_job *j, cwork_go_flavor flavor, cwork_go_json spelling,
                         int64_t now, int64_t horizon, cw_argv *z)
{
    cwork_go_flavor other = flavor == CWORK_GO_FORK ? CWORK_GO_UPSTREAM : CWORK_GO_FORK;
    cw_buf member;
    cw_buf_init(&member);
    int64_t t = cw_cron_next(j->schedule, now);
    while (t != 0 && t < horizon) {
        int64_t next = cw_cron_next(j->schedule, t);
        cw_argv_add_int(z, t);
        cw_buf_reset(&member);
        cw_periodic_instance_as(&member, flavor, j->name, j->spec, t, next);
        add_member(z, &member, spelling);
        cw_buf_reset(&member);
        cw_periodic_instance_as(&member, other, j->name, j->spec, t, next);
        add_member(z, &member, spelling);
        if (z->oom) break;
        if (cw_log_enabled(CWORK_LOG_DEBUG)) {
            char when[40];
            cw_tz_format_utc(t, when);
            /* the id sits inside the member: "…","id":"<id>","t":… — rebuild it plainly */
            cw_buf id;
            cw_buf_init(&id);
            cw_buf_printf(&id, "periodic:%s:%s:%lld", j->name, j->spec, (long long)t);
            cw_log(CWORK_LOG_DEBUG, "periodic_enqueuer.enqueue", "job_scheduled_time", when,
                   "job_name", j->name, "job_id", id.oom ? "" : id.data, NULL);
            cw_buf_free(&id);
        }
        if (next != 0 && next <= t)
            break; /* never happens with robfig's Next; guards the loop all the same */
        t = next;
    }
    cw_buf_free(&member);
    return z->oom ? -1 : 0;
}

void cw_periodic_publish(cw_periodic *p, cw_conn *c, const cw_keys *keys, int64_t now)
{
    size_t n = cw_periodic_count(p);
    if (n == 0) return;
    /* HSET key, then field and value of each job. */
    cw_argv a = {0};
    cw_argv_add_str(&a, "HSET");
    cw_buf b;
    cw_buf_init(&b);
    cw_key_periodic_published(keys, &b);
    cw_argv_add_buf(&a, &b);
    for (size_t i = 0; i < n; i++) {
        const char *name = cw_periodic_name(p, i), *spec = cw_periodic_spec(p, i);
        cw_buf_reset(&b);
        cw_buf_putc(&b, '[');
        cw_gj_encode_string(&b, name, strlen(name));
        cw_buf_putc(&b, ',');
        cw_gj_encode_string(&b, spec, strlen(spec));
        cw_buf_puts(&b, "]");
        cw_argv_add_buf(&a, &b);
        cw_buf_reset(&b);
        cw_buf_printf(&b, "{\"next_at\":%lld,\"seen_at\":%lld}",
                      (long long)cw_cron_next(cw_periodic_schedule(p, i), now), (long long)now);
        cw_argv_add_buf(&a, &b);
    }
    cwork_error err = {0};
    int rc = cw_argv_check(&a, &err);
    if (rc == 0) {
        /* The EXPIRE only after the HSET worked: on a key of another type (someone
         * else's) it would set a TTL on their data. */
        rc = cw_conn_command(c, (int)a.n, a.argv, a.lens, NULL, &err);
        char ttl[16];
        snprintf(ttl, sizeof ttl, "%d", CW_PERIODIC_PUBLISHED_TTL);
        const char *expire[] = {"EXPIRE", a.argv[1], ttl};
        size_t expire_lens[] = {6, a.lens[1], strlen(ttl)};
        if (rc == 0) rc = cw_conn_command(c, 3, expire, expire_lens, NULL, &err);
    }
    if (rc) cw_log(CWORK_LOG_WARN, "periodic_enqueuer.publish", "error", err.message, NULL);
    cw_argv_free(&a);
    cw_buf_free(&b);
}

int cw_periodic_run(cw_periodic *p, cwork_redis *redis, const cw_keys *keys, int64_t now,
                    size_t *scheduled, cwork_error *err)
{
    if (scheduled) *scheduled = 0;
    if (!p || p->n == 0)
        return 0; /* pools without periodic jobs do not claim the window (§16.12) */
    cwork_error local = {0};
    if (!err) err = &local;
    cw_conn *c = NULL;
    int rc = cw_redis_checkout(redis, &c, err);
    if (rc) {
        cw_log(CWORK_LOG_ERROR, "periodic_enqueuer.loop.enqueue", "error", err->message, NULL);
        return rc;
    }
    cw_periodic_publish(p, c, keys, now);
    int yes = should_enqueue(c, keys, now);
    if (cw_log_enabled(CWORK_LOG_DEBUG)) {
        char when[40];
        cw_tz_format_utc(now, when);
        cw_log(CWORK_LOG_DEBUG, "periodic_enqueuer.loop", "enqueue_time", when, "should_enqueue",
               yes ? "true" : "false", NULL);
    }
    if (!yes) {
        cw_redis_checkin(redis, c);
        return 0;
    }

    /* KEYS[1] = the scheduled set; ARGV: per instance score, member, the other flavour's
     * member. */
    cw_argv z = {0};
    cw_buf keys_buf;
    cw_buf_init(&keys_buf);
    cw_key_scheduled(keys, &keys_buf);
    cw_argv_add_buf(&z, &keys_buf);
    cw_buf_reset(&keys_buf);
    cw_key_last_periodic_enqueue(keys, &keys_buf);
    int64_t horizon = now + CW_PERIODIC_HORIZON;
    for (size_t i = 0; i < p->n && rc == 0; i++)
        if (add_instances(&p->jobs[i], p->flavor, p->go_json, now, horizon, &z))
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0 && keys_buf.oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0) rc = cw_argv_check(&z, err);
    size_t ninst = z.n > 0 ? (z.n - 1) / 3 : 0, nskipped = 0;
    if (rc == 0 && ninst > 0) { /* one script call with every member */
        redisReply *r = NULL;
        rc = cw_conn_eval(c, &cw_script_periodic_schedule, 1, (int)(z.n - 1), z.argv, z.lens, &r,
                          err);
        if (rc == 0) rc = cw_reply_array(r, 0, &nskipped, "periodic_schedule script", err);
        cw_reply_free(r);
    }
    if (nskipped) {
        char detail[200];
        snprintf(detail, sizeof detail,
                 "%zu periodic fire time(s) already scheduled in the %s flavour's bytes "
                 "(cwork wrote no second instance, which would run again)",
                 nskipped, p->flavor == CWORK_GO_FORK ? "upstream" : "fork");
        cw_go_flavor_warn_mixed(&p->warned, CW_MIXED_PERIODIC, p->flavor, detail);
    }
    /* The SET only after the instances were written: a failed pass leaves the window open for
     * the next pass (of any pool), as Go's sequential commands do. */
    if (rc == 0) {
        char num[24];
        int len = snprintf(num, sizeof num, "%lld", (long long)now);
        const char *sargv[] = {"SET", keys_buf.data, num};
        const size_t slens[] = {3, keys_buf.len, (size_t)len};
        rc = cw_conn_command(c, 3, sargv, slens, NULL, err);
    }
    cw_redis_checkin(redis, c);
    if (rc != 0)
        cw_log(CWORK_LOG_ERROR, "periodic_enqueuer.loop.enqueue", "error", err->message, NULL);
    else if (scheduled)
        *scheduled = ninst - nskipped;
    cw_argv_free(&z);
    cw_buf_free(&keys_buf);
    return rc;
}
