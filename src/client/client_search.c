/* The admin client's substring search in the retry, scheduled and dead sets (the lists'
 * search box, `cwork dead --grep`; PROTOCOL §24.2).
 *
 * Why the client scans and not a script: a script that read and decoded 10,000 jobs
 * would hold Redis for its whole run (tens of milliseconds on big jobs), stalling every
 * pool's fetch and commit meanwhile. Chunks of CW_CLIENT_BATCH members (ZREVRANGE …
 * WITHSCORES, O(log N + 1000) each) keep every Redis call as short as a list page, and
 * the matching, the costly part, runs in the client's process. A search changes
 * nothing, so it needs no atomicity; what it costs is that a member moving while the
 * chunks are read may be seen twice or missed, exactly as when paging a list. The scan
 * is bounded (cwork_search_query.max_scan, newest first) so that one request costs the
 * same on a dead set of millions, and the reply says when the bound was hit. */
#include "client.h"

#include "gojson.h"
#include "log.h"

#include <stdio.h>
#include <string.h>

#define SEARCH_MAX_TEXT 256

static int lower(int ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch;
}

/* Whether hay[0..n) holds needle (m bytes), ASCII letters in any case. */
static int contains_nocase(const char *hay, size_t n, const char *needle, size_t m)
{
    for (size_t i = 0; m <= n && i <= n - m; i++) {
        size_t j = 0;
        while (j < m && lower((unsigned char)hay[i + j]) == lower((unsigned char)needle[j]))
            j++;
        if (j == m) return 1;
    }
    return 0;
}

typedef struct search {
    const char *text;
    size_t text_len;
    uint64_t skip; /* matches before the page */
    size_t size;   /* jobs per page */
    cwork_listed_job *jobs;
    size_t n;
    int64_t matches;
    cw_buf args; /* scratch: the args' JSON */
    /* the text as Go's encoder writes it inside a string (<, > and & as \u003c, \u003e,
     * \u0026: the args' JSON spells them so), or empty when the text has none of them */
    cw_buf go_text;
} search;

/* s->go_text from s->text (see above). */
static void spell_as_go(search *s)
{
    if (!memchr(s->text, '<', s->text_len) && !memchr(s->text, '>', s->text_len) &&
        !memchr(s->text, '&', s->text_len))
        return;
    for (size_t i = 0; i < s->text_len; i++) {
        char c = s->text[i];
        if (c == '<' || c == '>' || c == '&')
            cw_buf_puts(&s->go_text, c == '<' ? "\\u003c" : c == '>' ? "\\u003e" : "\\u0026");
        else
            cw_buf_putc(&s->go_text, c);
    }
}

/* 1 when the decoded job's args (as JSON text) or err hold the text, 0 when not, or
 * CWORK_ENOMEM. */
static int job_matches(search *s, const cwork_job *job, cwork_error *err)
{
    if (job->err.len && contains_nocase(job->err.ptr, job->err.len, s->text, s->text_len)) return 1;
    if (!job->args) return 0;
    cw_buf_reset(&s->args);
    cwork_error e = {0};
    if (cw_gj_encode(&s->args, job->args, &e) != 0) return 0; /* args JSON cannot hold */
    if (s->args.oom) return cw_error(err, CWORK_ENOMEM, "out of memory");
    return contains_nocase(s->args.data, s->args.len, s->text, s->text_len) ||
           (s->go_text.len &&
            contains_nocase(s->args.data, s->args.len, s->go_text.data, s->go_text.len));
}

/* Looks at one member: the raw bytes first (a member whose bytes do not hold the text
 * cannot match, unless JSON escapes hide it), then the decoded job. 0 or an error. */
static int look_at(search *s, const redisReply *member, const redisReply *score, cwork_error *err)
{
    const char *bytes;
    size_t len;
    int64_t at = 0;
    if (cw_reply_str(member, &bytes, &len, NULL, NULL) != 0 || cw_client_score(score, &at) != 0)
        return 0;
    if (!memchr(bytes, '\\', len) && !contains_nocase(bytes, len, s->text, s->text_len)) return 0;
    cwork_job *job = NULL;
    cwork_error e = {0};
    int rc = cw_job_decode(bytes, len, &job, &e);
    if (rc == CWORK_ENOMEM) return cw_error(err, rc, "out of memory");
    if (rc) return 0; /* not a job: skipped, as the lists skip it */
    rc = job_matches(s, job, err);
    if (rc == 1 && (uint64_t)s->matches >= s->skip && s->n < s->size) {
        s->jobs[s->n].at = at;
        s->jobs[s->n++].job = job;
        job = NULL;
    }
    if (rc == 1) s->matches++;
    cwork_job_free(job);
    return rc < 0 ? rc : 0;
}

/* ZCARD (the key's type checked by it), then chunks newest first until the bound. */
static int scan_newest(cw_conn *c, const cw_buf *key, search *s, size_t bound,
                       cwork_search_info *info, cwork_error *err)
{
    int rc = cw_client_command_ints(c, 2, (const char *[]){"ZCARD", key->data},
                                    (const size_t[]){5, key->len}, &info->total, 1, err);
    if (rc == CWORK_EREDIS && strstr(err->message, "WRONGTYPE")) {
        /* a damaged set: nothing found there, and the key is named */
        info->total = 0;
        return cw_damage_note(key->data, key->len) ? cw_error(err, CWORK_ENOMEM, "out of memory")
                                                   : 0;
    }
    for (size_t from = 0; rc == 0 && from < bound;) {
        size_t want = bound - from < CW_CLIENT_BATCH ? bound - from : CW_CLIENT_BATCH;
        char start[24], stop[24];
        snprintf(start, sizeof start, "%zu", from);
        snprintf(stop, sizeof stop, "%zu", from + want - 1);
        const char *argv[] = {"ZREVRANGE", key->data, start, stop, "WITHSCORES"};
        size_t lens[] = {9, key->len, strlen(start), strlen(stop), 10};
        redisReply *r = NULL;
        size_t n = 0;
        rc = cw_conn_command(c, 5, argv, lens, &r, err);
        if (rc == 0) rc = cw_reply_array(r, 0, &n, "ZREVRANGE", err);
        for (size_t i = 0; rc == 0 && i + 2 <= n; i += 2)
            rc = look_at(s, cw_reply_at(r, i), cw_reply_at(r, i + 1), err);
        cw_reply_free(r);
        from += n / 2;
        info->scanned = (int64_t)from;
        if (n / 2 < want) return rc; /* the set's end */
    }
    /* the bound reached: bounded unless the set ended exactly there */
    if (rc == 0 && info->scanned < info->total) info->bounded = true;
    return rc;
}

int cwork_client_search(cwork_client *client, cwork_job_set set, const cwork_search_query *q,
                        cwork_listed_job **out, size_t *n, cwork_search_info *info,
                        cwork_error *err)
{
    cwork_error local = {0};
    err = CW_CLIENT_ERR(err, &local);
    cwork_search_info scanned = {0, 0, 0, false};
    if (info) *info = scanned;
    if (!client || !q || !q->text || !out || !n)
        return cw_error(err, CWORK_EINVAL, "cwork_client_search: NULL argument");
    *out = NULL;
    *n = 0;
    size_t text_len = strlen(q->text);
    if (text_len == 0 || text_len > SEARCH_MAX_TEXT)
        return cw_error(err, CWORK_EINVAL, "search text: %zu bytes; give 1 to %d", text_len,
                        SEARCH_MAX_TEXT);
    if (q->page_size > CW_CLIENT_MAX_PAGE_SIZE)
        return cw_error(err, CWORK_EINVAL, "page size %u is more than %d", q->page_size,
                        CW_CLIENT_MAX_PAGE_SIZE);
    if (q->max_scan > CWORK_SEARCH_MAX_SCAN_MAX)
        return cw_error(err, CWORK_EINVAL, "max_scan %zu is more than %d", q->max_scan,
                        CWORK_SEARCH_MAX_SCAN_MAX);
    int shards = cw_client_shard_count(client, err);
    if (shards != 1)
        return shards < 0 ? shards
                          : cw_shards_search(client, (unsigned)shards, set, q, out, n, info, err);
    size_t size = q->page_size ? q->page_size : CWORK_PAGE_SIZE;
    search s = {q->text, text_len, ((uint64_t)(q->page ? q->page : 1) - 1) * size, size, NULL, 0, 0,
                {0},     {0}};
    cw_buf_init(&s.args);
    cw_buf_init(&s.go_text);
    spell_as_go(&s);
    cw_buf key;
    cw_buf_init(&key);
    int rc = cw_client_set_key(&client->keys, set, &key, err);
    if (rc == 0 && key.oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc == 0 && !(s.jobs = cw_calloc(size, sizeof *s.jobs)))
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    cw_conn *c = NULL;
    if (rc == 0 && (rc = cw_redis_checkout(client->redis, &c, err)) == 0) {
        rc = scan_newest(c, &key, &s, q->max_scan ? q->max_scan : CWORK_SEARCH_MAX_SCAN, &scanned,
                         err);
        if (rc == 0) cw_damage_resolve(c, &client->keys);
        cw_redis_checkin(client->redis, c);
    }
    cw_buf_free(&key);
    cw_buf_free(&s.args);
    if (rc == 0 && s.go_text.oom) rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    cw_buf_free(&s.go_text);
    if (rc) {
        cwork_listed_jobs_free(s.jobs, s.n);
        return rc == CWORK_EINVAL || rc == CWORK_ETYPE ? rc
                                                       : cw_client_fail("client.search", rc, err);
    }
    scanned.matches = s.matches;
    if (info) *info = scanned;
    *out = s.jobs;
    *n = s.n;
    return 0;
}
