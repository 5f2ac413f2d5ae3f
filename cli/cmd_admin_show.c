/* What the admin commands show: queues, pools, busy workers, a page of the retry,
 * scheduled or dead set, and one job found by id. Tables for people; with --json the
 * bodies Go's workwebui answers (cwork_client_*_json), or one compact JSON line. */
#include "cmd_admin.h"
#include "table.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Widest cells of job text before they are cut with an ellipsis. */
enum { MAX_NAME = 32, MAX_ID = 64, MAX_ERROR = 40, MAX_ARGS = 48, MAX_HOST = 32, MAX_JOBS = 48 };

/* Prints a body made by a cwork_client_*_json function, then a newline. */
static int print_body(const admin_opts *o, int rc, char *body, size_t len, const cwork_error *err)
{
    if (rc != 0) return admin_fail(o, rc, err);
    cli_print_json_body(body, len);
    putchar('\n');
    cwork_free(body);
    return CLI_OK;
}

/* Prints the table, or says out of memory. */
static int print_table(const admin_opts *o, table *t, int oom)
{
    int status = CLI_OK;
    if (!t || oom) {
        fprintf(stderr, "%s: out of memory\n", o->label);
        status = CLI_FAILURE;
    } else {
        table_print(t, stdout);
    }
    table_free(t);
    return status;
}

/* ---------------------------------------------------------------- queues */

static int show_queues(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    char *body = NULL;
    size_t len = 0;
    if (o->seen & OPT_JSON) {
        int rc = cwork_client_queues_json(client, &body, &len, &err);
        return print_body(o, rc, body, len, &err);
    }
    cwork_queue_info *q = NULL;
    size_t n = 0;
    int rc = cwork_client_queues(client, &q, &n, &err);
    if (rc != 0) return admin_fail(o, rc, &err);
    if (n == 0) {
        cwork_queue_infos_free(q, n);
        printf("No queues: known_jobs is empty.\n");
        return CLI_OK;
    }
    static const char *const headers[] = {"NAME", "JOBS", "LATENCY", "PAUSED"};
    table *t = table_new(4, headers);
    int oom = 0;
    if (t) {
        table_set_max_width(t, 0, MAX_NAME * 2);
        table_set_right(t, 1);
        table_set_right(t, 2);
        for (size_t i = 0; i < n; i++) {
            char latency[32] = "-";
            if (q[i].count > 0) fmt_duration(latency, sizeof latency, q[i].latency);
            oom = oom || table_cell(t, q[i].job_name) || table_cellf(t, "%" PRId64, q[i].count) ||
                  table_cell(t, latency) || table_cell(t, q[i].paused ? "paused" : "-");
        }
    }
    cwork_queue_infos_free(q, n);
    return print_table(o, t, oom);
}

int admin_queues(const admin_opts *o)
{
    return admin_run(o, show_queues);
}

/* ---------------------------------------------------------------- pools */

static int show_pools(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    char *body = NULL;
    size_t len = 0;
    if (o->seen & OPT_JSON) {
        int rc = cwork_client_pools_json(client, &body, &len, &err);
        return print_body(o, rc, body, len, &err);
    }
    cwork_pool_heartbeat *p = NULL;
    size_t n = 0;
    int rc = cwork_client_pools(client, &p, &n, &err);
    if (rc != 0) return admin_fail(o, rc, &err);
    if (n == 0) {
        cwork_pool_heartbeats_free(p, n);
        printf("No worker pools.\n");
        return CLI_OK;
    }
    static const char *const headers[] = {"POOL",    "HOST",    "PID",       "CONCURRENCY",
                                          "WORKERS", "STARTED", "HEARTBEAT", "JOBS"};
    table *t = table_new(8, headers);
    int64_t now = (int64_t)time(NULL);
    int oom = 0;
    if (t) {
        table_set_max_width(t, 0, MAX_ID);
        table_set_max_width(t, 1, MAX_HOST);
        table_set_max_width(t, 7, MAX_JOBS);
        for (size_t col = 2; col <= 4; col++)
            table_set_right(t, col);
    }
    for (size_t i = 0; t && i < n; i++) {
        char started[64], beat[64], *jobs = NULL;
        size_t jobs_len = 0;
        for (size_t j = 0; j < p[i].n_job_names; j++)
            jobs_len += strlen(p[i].job_names[j]) + 1;
        jobs = calloc(1, jobs_len + 1);
        for (size_t j = 0; jobs && j < p[i].n_job_names; j++) {
            if (j) strcat(jobs, ",");
            strcat(jobs, p[i].job_names[j]);
        }
        fmt_when(started, sizeof started, p[i].started_at, now);
        fmt_when(beat, sizeof beat, p[i].heartbeat_at, now);
        /* || adds the cells in order and stops at the first failure */
        oom = oom || !jobs || table_cell(t, p[i].worker_pool_id) ||
              table_cell(t, p[i].host && *p[i].host ? p[i].host : "-") ||
              (p[i].pid ? table_cellf(t, "%d", p[i].pid) : table_cell(t, "-")) ||
              table_cellf(t, "%u", p[i].concurrency) || table_cellf(t, "%zu", p[i].n_worker_ids) ||
              table_cell(t, started) || table_cell(t, beat) || table_cell(t, *jobs ? jobs : "-");
        free(jobs);
    }
    int status = print_table(o, t, oom);
    for (size_t i = 0; i < n; i++) /* listed with what could be read; said why here */
        if (p[i].damaged)
            fprintf(stderr, "cwork pools: pool %s is damaged: %s\n", p[i].worker_pool_id,
                    p[i].damaged);
    cwork_pool_heartbeats_free(p, n);
    return status;
}

int admin_pools(const admin_opts *o)
{
    return admin_run(o, show_pools);
}

/* ---------------------------------------------------------------- busy workers */

static int show_busy(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    char *body = NULL;
    size_t len = 0;
    if (o->seen & OPT_JSON) {
        int rc = cwork_client_busy_workers_json(client, &body, &len, &err);
        /* Go's body is null for none (a nil slice); a list reader wants [], as every
         * other --json list gives (and cwork web's /busy_workers). */
        if (rc == 0 && len == 4 && memcmp(body, "null", 4) == 0) {
            memcpy(body, "[]", 3);
            len = 2;
        }
        return print_body(o, rc, body, len, &err);
    }
    cwork_worker_observation *w = NULL;
    size_t n = 0;
    int rc = cwork_client_workers(client, &w, &n, &err);
    if (rc != 0) return admin_fail(o, rc, &err);
    static const char *const headers[] = {"WORKER", "NAME", "ID", "STARTED", "CHECKIN", "ARGS"};
    table *t = table_new(6, headers);
    int64_t now = (int64_t)time(NULL);
    int oom = 0;
    if (t) {
        table_set_max_width(t, 1, MAX_NAME);
        table_set_max_width(t, 2, MAX_ID);
        table_set_max_width(t, 4, MAX_ERROR);
        table_set_max_width(t, 5, MAX_ARGS);
    }
    for (size_t i = 0; t && i < n; i++) {
        if (!w[i].is_busy) continue;
        char started[64], ago[32];
        fmt_when(started, sizeof started, w[i].started_at, now);
        fmt_duration(ago, sizeof ago, now - w[i].checkin_at);
        int checkin = w[i].checkin_at && w[i].checkin && *w[i].checkin;
        oom = oom || table_cell(t, w[i].worker_id) || table_cell(t, w[i].job_name) ||
              table_cell(t, w[i].job_id) || table_cell(t, started) ||
              (checkin ? table_cellf(t, "%s ago: %s", ago, w[i].checkin) : table_cell(t, "-")) ||
              table_cell(t, w[i].args_json && *w[i].args_json ? w[i].args_json : "-");
    }
    cwork_worker_observations_free(w, n);
    if (t && !oom && table_rows(t) == 0) {
        table_free(t);
        printf("No busy workers.\n");
        return CLI_OK;
    }
    return print_table(o, t, oom);
}

int admin_busy(const admin_opts *o)
{
    return admin_run(o, show_busy);
}

/* ---------------------------------------------------------------- retry, scheduled, dead */

/* The sentence above a page: "Dead jobs called x: 57 (page 1 of 3)". */
static void print_page_title(const admin_opts *o, cwork_client *client, cwork_job_set set,
                             int64_t total, unsigned page)
{
    static const char *const titles[] = {[CWORK_SET_RETRY] = "Jobs to retry",
                                         [CWORK_SET_SCHEDULED] = "Scheduled jobs",
                                         [CWORK_SET_DEAD] = "Dead jobs"};
    char *name = o->name ? text_clean(o->name, strlen(o->name), MAX_NAME * 2, NULL) : NULL;
    int64_t pages = (total + CWORK_PAGE_SIZE - 1) / CWORK_PAGE_SIZE;
    char near[256];
    if (total == 0 && name && cli_near_job_name(client, o->name, near, sizeof near)) {
        char *shown = text_clean(near, strlen(near), MAX_NAME * 2, NULL);
        printf("No %s jobs called %s; did you mean %s?\n", admin_set_title(set), name,
               shown ? shown : near);
        free(shown);
    } else if (total == 0 && name)
        printf("No %s jobs called %s.\n", admin_set_title(set), name);
    else if (total == 0)
        printf("The %s set is empty.\n", admin_set_title(set));
    else if (page > pages)
        printf("%s%s%s: %" PRId64 " on %" PRId64 " page%s; page %u is past the end.\n", titles[set],
               name ? " called " : "", name ? name : "", total, pages, pages == 1 ? "" : "s", page);
    else
        printf("%s%s%s: %" PRId64 " (page %u of %" PRId64 ")\n", titles[set],
               name ? " called " : "", name ? name : "", total, page, pages);
    free(name);
}

static int show_list(const admin_opts *o, cwork_client *client)
{
    cwork_job_set set = admin_set(o->cmd);
    unsigned page = o->page ? o->page : 1;
    cwork_error err = {0};
    char *body = NULL;
    size_t len = 0;
    if (o->seen & OPT_GREP) return admin_search(o, client);
    /* The web UI's order unless --order says otherwise (admin_main), and its filters. */
    cwork_list_query q = {page, CWORK_PAGE_SIZE, o->name, o->newest_first != 0};
    unsigned filters = o->seen & OPT_NO_PERIODIC ? CWORK_LIST_SKIP_PERIODIC : 0u;
    if (o->seen & OPT_JSON) {
        /* The body of Go's route: its order (lowest score first) unless --order says */
        if (!(o->seen & OPT_ORDER)) q.newest_first = false;
        int rc = cwork_client_list_filtered_json(client, set, &q, filters, &body, &len, &err);
        return print_body(o, rc, body, len, &err);
    }
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    int64_t total = 0;
    int rc = cwork_client_list_filtered(client, set, &q, filters, &jobs, &n, &total, &err);
    if (rc != 0) return admin_fail(o, rc, &err);
    print_page_title(o, client, set, total, page);
    int status = n ? admin_print_jobs(o, set, jobs, n) : CLI_OK;
    cwork_listed_jobs_free(jobs, n);
    if (status == CLI_OK && (int64_t)page * CWORK_PAGE_SIZE < total)
        printf("Next page: --page %u\n", page + 1);
    return status;
}

int admin_print_jobs(const admin_opts *o, cwork_job_set set, const cwork_listed_job *jobs, size_t n)
{
    int failures = set != CWORK_SET_SCHEDULED;
    const char *at_title = set == CWORK_SET_RETRY  ? "RETRY AT"
                           : set == CWORK_SET_DEAD ? "DIED"
                                                   : "RUN AT";
    const char *const with_failures[] = {at_title, "ID", "NAME", "FAILS", "ERROR", "ARGS"};
    const char *const without[] = {at_title, "ID", "NAME", "ARGS"};
    table *t = failures ? table_new(6, with_failures) : table_new(4, without);
    int64_t now = (int64_t)time(NULL);
    int oom = 0;
    if (t) {
        table_set_max_width(t, 1, MAX_ID);
        table_set_max_width(t, 2, MAX_NAME);
        table_set_max_width(t, failures ? 5 : 3, MAX_ARGS);
        if (failures) {
            table_set_right(t, 3);
            table_set_max_width(t, 4, MAX_ERROR);
        }
    }
    for (size_t i = 0; t && i < n; i++) {
        const cwork_job *job = jobs[i].job;
        char when[64], *args = cwork_job_args_json(job);
        fmt_when(when, sizeof when, jobs[i].at, now);
        const char *e = cwork_job_last_error(job);
        oom = oom || !args || table_cell(t, when) || table_cell(t, cwork_job_id(job)) ||
              table_cell(t, cwork_job_name(job)) ||
              (failures &&
               (table_cellf(t, "%" PRId64, cwork_job_fails(job)) || table_cell(t, *e ? e : "-"))) ||
              table_cell(t, args);
        cwork_free(args);
    }
    return print_table(o, t, oom);
}

int admin_list(const admin_opts *o)
{
    return admin_run(o, show_list);
}

/* ---------------------------------------------------------------- one job by id */

static void print_field(const char *label, const char *value)
{
    char *clean = text_clean(value, strlen(value), 0, NULL);
    printf("%-10s %s\n", label, clean ? clean : "?");
    free(clean);
}

/* One compact JSON object: the members of the story, sorted by name; "job" is Go's
 * encoding in the chosen flavour; "damaged" (cli_json_damaged) only when a key is. */
static int print_job_json(const admin_opts *o, const cwork_job_story *st)
{
    cwork_error err = {0};
    char *enc = NULL;
    size_t len = 0;
    int rc = cwork_job_encode_flavor(st->job, o->flavor, &enc, &len, &err);
    if (rc != 0) return admin_fail(o, rc, &err);
    printf("{\"at\":%" PRId64 ",\"checkin\":", st->at);
    admin_json_string(st->checkin, strlen(st->checkin));
    printf(",\"checkin_at\":%" PRId64, st->checkin_at);
    if (cwork_client_damage(NULL) > 0) { /* e.g. a damaged failure list, read as none */
        fputs(",\"damaged\":", stdout);
        cli_json_damaged();
    }
    fputs(",\"failures\":[", stdout);
    for (size_t i = 0; i < st->n_failures; i++) {
        const cwork_job_failure *f = &st->failures[i];
        printf("%s{\"enqueued_at\":%" PRId64 ",\"err\":", i ? "," : "", f->enqueued_at);
        admin_json_string(f->err, strlen(f->err));
        printf(",\"failed_at\":%" PRId64 ",\"fails\":%" PRId64 ",\"ran_at_ms\":%" PRId64
               ",\"retry_at\":%" PRId64 ",\"took_us\":%" PRId64 "}",
               f->failed_at, f->fails, f->ran_at_ms, f->retry_at, f->took_us);
    }
    printf("],\"first_enqueued_at\":%" PRId64 ",\"job\":", st->first_enqueued_at);
    fwrite(enc, 1, len, stdout);
    printf(",\"last_requeued_at\":%" PRId64 ",\"phases\":[", st->last_requeued_at);
    for (size_t i = 0; i < st->n_phases; i++)
        printf("%s{\"from\":%" PRId64 ",\"state\":\"%s\",\"until\":%" PRId64 "}", i ? "," : "",
               st->phases[i].from, st->phases[i].state, st->phases[i].until);
    printf("],\"place\":\"%s\",\"pool\":", cwork_job_place_name(st->place));
    admin_json_string(st->pool_id, strlen(st->pool_id));
    printf(",\"pool_host\":");
    admin_json_string(st->pool_host, strlen(st->pool_host));
    printf(",\"pool_pid\":%d,\"started_at\":%" PRId64 ",\"worker\":", st->pool_pid, st->started_at);
    admin_json_string(st->worker_id, strlen(st->worker_id));
    printf("}\n");
    cwork_free(enc);
    return CLI_OK;
}

/* "waiting 3s, running 1s, retry 16s, dead 2m (so far)": the time in each state. */
static void print_phases(const cwork_job_story *st)
{
    if (!st->n_phases) return;
    char line[1024] = "", d[32];
    size_t used = 0;
    for (size_t i = 0; i < st->n_phases && used < sizeof line; i++) {
        const cwork_job_phase *ph = &st->phases[i];
        int64_t until = ph->until ? ph->until : st->now;
        fmt_duration(d, sizeof d, until > ph->from ? until - ph->from : 0);
        int w = snprintf(line + used, sizeof line - used, "%s%s %s%s", i ? ", " : "", ph->state, d,
                         ph->until ? "" : " (so far)");
        if (w > 0) used += (size_t)w;
    }
    print_field("states", line);
}

/* The failures kept (newest first): when, after how long, and the message. */
static void print_failures(const cwork_job_story *st)
{
    for (size_t i = 0; i < st->n_failures; i++) {
        const cwork_job_failure *f = &st->failures[i];
        char when[64], took[32], line[160];
        fmt_iso_time(when, sizeof when, f->failed_at);
        if (f->took_us < 1000000) /* most runs: a short duration in ms */
            snprintf(took, sizeof took, "%" PRId64 "ms", f->took_us / 1000);
        else
            fmt_duration(took, sizeof took, f->took_us / 1000000);
        snprintf(line, sizeof line, "#%" PRId64 " %s ran %s%s: ", f->fails, when, took,
                 f->retry_at ? ", retried" : ", dead");
        size_t n = strlen(line) + strlen(f->err) + 1;
        char *all = malloc(n);
        if (all) snprintf(all, n, "%s%s", line, f->err);
        print_field(i ? "" : "failures", all ? all : "?");
        free(all);
    }
}

static void print_job_text(const cwork_job_story *st)
{
    const cwork_job *job = st->job;
    cwork_job_place place = st->place;
    int64_t now = st->now;
    char buf[160], when[64];
    switch (place) {
    case CWORK_PLACE_QUEUE:
        snprintf(buf, sizeof buf, "queue (waiting in jobs:%s)", cwork_job_name(job));
        break;
    case CWORK_PLACE_IN_PROGRESS:
        snprintf(buf, sizeof buf, "in progress (a worker pool has taken it)");
        break;
    default:
        snprintf(buf, sizeof buf, "%s set", cwork_job_place_name(place));
        break;
    }
    print_field("place", buf);
    if (st->at) {
        fmt_when(when, sizeof when, st->at, now);
        snprintf(buf, sizeof buf, "%s = %" PRId64, when, st->at);
        print_field(place == CWORK_PLACE_RETRY       ? "retry at"
                    : place == CWORK_PLACE_SCHEDULED ? "run at"
                                                     : "died at",
                    buf);
    }
    print_field("name", cwork_job_name(job));
    print_field("id", cwork_job_id(job));
    fmt_when(when, sizeof when, st->first_enqueued_at, now);
    print_field("enqueued", when);
    if (st->last_requeued_at) {
        fmt_when(when, sizeof when, st->last_requeued_at, now);
        print_field("requeued", when);
    }
    if (*st->pool_id) {
        if (*st->pool_host)
            snprintf(buf, sizeof buf, "%s (%s, pid %d)", st->pool_id, st->pool_host, st->pool_pid);
        else
            snprintf(buf, sizeof buf, "%s (no heartbeat)", st->pool_id);
        print_field("pool", buf);
    }
    if (*st->worker_id) print_field("worker", st->worker_id);
    if (st->started_at) {
        fmt_when(when, sizeof when, st->started_at, now);
        print_field("started", when);
    }
    if (*st->checkin || st->checkin_at) {
        fmt_when(when, sizeof when, st->checkin_at, now);
        size_t n = strlen(st->checkin) + strlen(when) + 4;
        char *line = malloc(n);
        if (line) snprintf(line, n, "%s (%s)", st->checkin, when);
        print_field("check-in", line ? line : "?");
        free(line);
    }
    if (cwork_job_unique(job)) print_field("unique", "yes");
    if (*cwork_job_unique_key(job)) print_field("unique key", cwork_job_unique_key(job));
    if (cwork_job_fails(job)) {
        snprintf(buf, sizeof buf, "%" PRId64, cwork_job_fails(job));
        print_field("fails", buf);
    }
    if (*cwork_job_last_error(job)) print_field("error", cwork_job_last_error(job));
    if (cwork_job_failed_at(job)) {
        fmt_when(when, sizeof when, cwork_job_failed_at(job), now);
        print_field("failed at", when);
    }
    if (cwork_job_periodic_deadline(job)) {
        fmt_when(when, sizeof when, cwork_job_periodic_deadline(job), now);
        print_field("deadline", when);
    }
    print_failures(st);
    print_phases(st);
    size_t len = 0;
    const char *raw = cwork_job_raw(job, &len);
    char *clean = text_clean(raw, len, 0, NULL);
    printf("%-10s %s\n", "json", clean ? clean : "?");
    free(clean);
}

static int show_job(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    cwork_job_story story;
    int rc = cwork_client_job_story(client, o->arg, &story, &err);
    if (rc != 0) return admin_fail(o, rc, &err);
    int status = CLI_OK;
    if (o->seen & OPT_JSON)
        status = print_job_json(o, &story);
    else
        print_job_text(&story);
    cwork_job_story_free(&story);
    return status;
}

int admin_job(const admin_opts *o)
{
    return admin_run(o, show_job);
}
