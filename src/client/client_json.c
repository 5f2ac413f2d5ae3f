/* The bodies of Go's workwebui (PROTOCOL §12.1, §17.8): the client's results rendered as Go's
 * json.MarshalIndent(v, "", "\t") renders Go's client types — Go's compact encoding
 * (field order and names of PROTOCOL §12.1, HTML-safe escaping, Go floats, sorted map keys)
 * re-indented exactly as json.Indent does it. */
#include "client.h"

#include <string.h>

/* json.Indent with prefix "" and indent "\t" over compact JSON (ours has no white space
 * outside strings): a newline and depth tabs after '{', '[' and ',', a space after ':',
 * and empty objects and arrays kept as {} and []. */
static void indent(cw_buf *out, const char *src, size_t len)
{
    int depth = 0, need_indent = 0, in_string = 0, escaped = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = src[i];
        if (in_string) {
            cw_buf_putc(out, ch);
            if (escaped)
                escaped = 0;
            else if (ch == '\\')
                escaped = 1;
            else if (ch == '"')
                in_string = 0;
            continue;
        }
        if (need_indent && ch != '}' && ch != ']') {
            need_indent = 0;
            depth++;
            cw_buf_putc(out, '\n');
            for (int d = 0; d < depth; d++)
                cw_buf_putc(out, '\t');
        }
        switch (ch) {
        case '"':
            in_string = 1;
            cw_buf_putc(out, ch);
            break;
        case '{':
        case '[':
            need_indent = 1; /* delayed, so that {} and [] stay as they are */
            cw_buf_putc(out, ch);
            break;
        case ',':
            cw_buf_putc(out, ch);
            cw_buf_putc(out, '\n');
            for (int d = 0; d < depth; d++)
                cw_buf_putc(out, '\t');
            break;
        case ':':
            cw_buf_putc(out, ch);
            cw_buf_putc(out, ' ');
            break;
        case '}':
        case ']':
            if (need_indent) {
                need_indent = 0;
            } else {
                depth--;
                cw_buf_putc(out, '\n');
                for (int d = 0; d < depth; d++)
                    cw_buf_putc(out, '\t');
            }
            cw_buf_putc(out, ch);
            break;
        default:
            cw_buf_putc(out, ch);
        }
    }
}

/* Ends a renderer: indents the compact text in `compact` into *out. */
static int finish(cw_buf *compact, int rc, char **out, size_t *len, cwork_error *err)
{
    cw_buf pretty;
    cw_buf_init(&pretty);
    if (rc == 0 && compact->oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0) indent(&pretty, compact->data, compact->len);
    cw_buf_free(compact);
    return cw_buf_give(&pretty, rc, out, len, err);
}

static void put_key(cw_buf *b, const char *key)
{
    cw_buf_putc(b, '"');
    cw_buf_puts(b, key);
    cw_buf_append(b, "\":", 2);
}

static void put_str(cw_buf *b, const char *key, const char *value)
{
    put_key(b, key);
    cw_gj_encode_string(b, value ? value : "", value ? strlen(value) : 0);
}

static void put_int(cw_buf *b, const char *key, int64_t value)
{
    put_key(b, key);
    cw_buf_put_int64(b, value);
}

/* A []string: null when absent (nil in Go), else the strings in order. */
static void put_strings(cw_buf *b, const char *key, char **items, size_t n)
{
    put_key(b, key);
    if (!items) {
        cw_buf_append(b, "null", 4);
        return;
    }
    cw_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) cw_buf_putc(b, ',');
        cw_gj_encode_string(b, items[i], strlen(items[i]));
    }
    cw_buf_putc(b, ']');
}

/* []*Queue: {"job_name", "count", "latency"} — Go's three fields, without `paused`. */
int cwork_client_queues_json(cwork_client *client, char **out, size_t *len, cwork_error *err)
{
    if (!out) return cw_error(err, CWORK_EINVAL, "cwork_client_queues_json: NULL argument");
    cwork_queue_info *q;
    size_t n;
    int rc = cwork_client_queues(client, &q, &n, err);
    if (rc) return rc;
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_putc(&b, '[');
    for (size_t i = 0; i < n; i++) {
        cw_buf_puts(&b, i ? ",{" : "{");
        put_str(&b, "job_name", q[i].job_name);
        cw_buf_putc(&b, ',');
        put_int(&b, "count", q[i].count);
        cw_buf_putc(&b, ',');
        put_int(&b, "latency", q[i].latency);
        cw_buf_putc(&b, '}');
    }
    cw_buf_putc(&b, ']');
    cwork_queue_infos_free(q, n);
    return finish(&b, 0, out, len, err);
}

/* []*WorkerPoolHeartbeat. */
int cwork_client_pools_json(cwork_client *client, char **out, size_t *len, cwork_error *err)
{
    if (!out) return cw_error(err, CWORK_EINVAL, "cwork_client_pools_json: NULL argument");
    cwork_pool_heartbeat *p;
    size_t n;
    int rc = cwork_client_pools(client, &p, &n, err);
    if (rc) return rc;
    cw_buf b;
    cw_buf_init(&b);
    cw_buf_putc(&b, '[');
    for (size_t i = 0; i < n; i++) {
        cw_buf_puts(&b, i ? ",{" : "{");
        put_str(&b, "worker_pool_id", p[i].worker_pool_id);
        cw_buf_putc(&b, ',');
        put_int(&b, "started_at", p[i].started_at);
        cw_buf_putc(&b, ',');
        put_int(&b, "heartbeat_at", p[i].heartbeat_at);
        cw_buf_putc(&b, ',');
        put_strings(&b, "job_names", p[i].job_names, p[i].n_job_names);
        cw_buf_putc(&b, ',');
        put_int(&b, "concurrency", p[i].concurrency);
        cw_buf_putc(&b, ',');
        put_str(&b, "host", p[i].host);
        cw_buf_putc(&b, ',');
        put_int(&b, "pid", p[i].pid);
        cw_buf_putc(&b, ',');
        put_strings(&b, "worker_ids", p[i].worker_ids, p[i].n_worker_ids);
        if (p[i].damaged) { /* (cwork's own field; Go's listing fails instead) */
            cw_buf_putc(&b, ',');
            put_str(&b, "damaged", p[i].damaged);
        }
        cw_buf_putc(&b, '}');
    }
    cw_buf_putc(&b, ']');
    cwork_pool_heartbeats_free(p, n);
    return finish(&b, 0, out, len, err);
}

/* []*WorkerObservation of the busy workers only; null (a nil slice) when none is. */
int cwork_client_busy_workers_json(cwork_client *client, char **out, size_t *len, cwork_error *err)
{
    if (!out) return cw_error(err, CWORK_EINVAL, "cwork_client_busy_workers_json: NULL argument");
    cwork_worker_observation *w;
    size_t n;
    int rc = cwork_client_workers(client, &w, &n, err);
    if (rc) return rc;
    cw_buf b;
    cw_buf_init(&b);
    size_t busy = 0;
    for (size_t i = 0; i < n; i++) {
        if (!w[i].is_busy) continue;
        cw_buf_puts(&b, busy++ ? ",{" : "[{");
        put_str(&b, "worker_id", w[i].worker_id);
        cw_buf_append(&b, ",\"is_busy\":true,", 16);
        put_str(&b, "job_name", w[i].job_name);
        cw_buf_putc(&b, ',');
        put_str(&b, "job_id", w[i].job_id);
        cw_buf_putc(&b, ',');
        put_int(&b, "started_at", w[i].started_at);
        cw_buf_putc(&b, ',');
        put_str(&b, "args_json", w[i].args_json);
        cw_buf_putc(&b, ',');
        put_str(&b, "checkin", w[i].checkin);
        cw_buf_putc(&b, ',');
        put_int(&b, "checkin_at", w[i].checkin_at);
        cw_buf_putc(&b, '}');
    }
    cw_buf_puts(&b, busy ? "]" : "null");
    cwork_worker_observations_free(w, n);
    return finish(&b, 0, out, len, err);
}

/* {"count": N, "jobs": [...]}, each job being Go's RetryJob / ScheduledJob / DeadJob: the
 * score's field, then the embedded Job's fields in Go's order and omit rules — the fields
 * the flavour's Job has: under the fork no unique_key, under upstream no d or trace (each
 * workwebui re-encodes jobs through its own struct). */
int cwork_client_list_json(cwork_client *client, cwork_job_set set, unsigned page, const char *name,
                           char **out, size_t *len, cwork_error *err)
{
    cwork_list_query q = {page, CWORK_PAGE_SIZE, name, false};
    return cwork_client_list_page_json(client, set, &q, out, len, err);
}

int cwork_client_list_page_json(cwork_client *client, cwork_job_set set, const cwork_list_query *q,
                                char **out, size_t *len, cwork_error *err)
{
    return cwork_client_list_filtered_json(client, set, q, 0, out, len, err);
}

int cwork_client_list_filtered_json(cwork_client *client, cwork_job_set set,
                                    const cwork_list_query *q, unsigned filters, char **out,
                                    size_t *len, cwork_error *err)
{
    if (!out) return cw_error(err, CWORK_EINVAL, "cwork_client_list_json: NULL argument");
    const char *at_key = set == CWORK_SET_RETRY       ? "retry_at"
                         : set == CWORK_SET_SCHEDULED ? "run_at"
                                                      : "died_at";
    cwork_listed_job *jobs;
    size_t n;
    int64_t total;
    int rc = cwork_client_list_filtered(client, set, q, filters, &jobs, &n, &total, err);
    if (rc) return rc;
    cw_job_fields fields =
        cw_job_fields_of(atomic_load_explicit(&client->flavor, memory_order_relaxed));
    cw_buf b, job;
    cw_buf_init(&b);
    cw_buf_init(&job);
    cw_buf_putc(&b, '{');
    put_int(&b, "count", total);
    cw_buf_append(&b, ",\"jobs\":[", 9);
    for (size_t i = 0; i < n && rc == 0; i++) {
        cw_buf_reset(&job);
        if ((rc = cw_job_encode_fields(&job, jobs[i].job, fields, err)) != 0) break;
        if (job.oom) {
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
            break;
        }
        cw_buf_puts(&b, i ? ",{" : "{");
        put_int(&b, at_key, jobs[i].at);
        cw_buf_putc(&b, ',');
        if (job.len > 1)
            cw_buf_append(&b, job.data + 1, job.len - 1); /* the job's fields and '}' */
    }
    cw_buf_append(&b, "]}", 2);
    cw_buf_free(&job);
    cwork_listed_jobs_free(jobs, n);
    return finish(&b, rc, out, len, err);
}

const char *cwork_job_place_name(cwork_job_place place)
{
    switch (place) {
    case CWORK_PLACE_QUEUE:
        return "queue";
    case CWORK_PLACE_IN_PROGRESS:
        return "in_progress";
    case CWORK_PLACE_RETRY:
        return "retry";
    case CWORK_PLACE_SCHEDULED:
        return "scheduled";
    case CWORK_PLACE_DEAD:
        return "dead";
    }
    return "unknown";
}
