/* What the admin commands change: dead jobs retried, deleted or trimmed, retry and
 * scheduled entries run now or deleted, queues paused, unpaused and cleared, single
 * waiting jobs deleted. */
#include "cmd_admin.h"
#include "table.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static cwork_job_place set_place(cwork_job_set set)
{
    return set == CWORK_SET_RETRY       ? CWORK_PLACE_RETRY
           : set == CWORK_SET_SCHEDULED ? CWORK_PLACE_SCHEDULED
                                        : CWORK_PLACE_DEAD;
}

/* Writes text from the command line or from Redis, cleaned of control characters. */
static void put(FILE *f, const char *s)
{
    char *clean = text_clean(s, strlen(s), 0, NULL);
    fputs(clean ? clean : "?", f);
    free(clean);
}

/* After the find missed o->arg: when set's key is damaged (the find read it as empty,
 * so the job may be in it), says so, naming the key, and returns 1; else 0. The set's
 * first entry is read again with the thread's list cleared, so that what is listed then
 * is the set's key alone (on this failure path the find's warnings are not printed). */
static int set_damaged(const admin_opts *o, cwork_client *client, cwork_job_set set)
{
    cwork_client_damage_clear();
    cwork_list_query first = {1, 1, NULL, false};
    cwork_listed_job *jobs = NULL;
    size_t n = 0;
    if (cwork_client_list_page(client, set, &first, &jobs, &n, NULL, NULL) != 0) return 0;
    cwork_listed_jobs_free(jobs, n);
    const cwork_damaged_key *d = NULL;
    if (cwork_client_damage(&d) == 0) return 0;
    fprintf(stderr, "%s: %s is a %s, expected a %s (%s): job ", o->label, d->key, d->type,
            d->expected, d->what);
    put(stderr, o->arg);
    fprintf(stderr, " may be in it; nothing was changed — cwork doctor --ns %s can repair it\n",
            o->conn.ns);
    return 1;
}

/* The score of entry o->arg in set: --at when given, else where cwork_client_find sees
 * it. Returns CLI_OK or the exit status of a failure (reported). */
static int locate(const admin_opts *o, cwork_client *client, cwork_job_set set, int64_t *at)
{
    if (o->seen & OPT_AT) {
        *at = o->at;
        return CLI_OK;
    }
    cwork_error err = {0};
    cwork_job_place place;
    cwork_listed_job found = {0};
    int rc = cwork_client_find(client, o->arg, &place, &found, &err);
    if (rc == CWORK_ENOTFOUND && set_damaged(o, client, set)) return CLI_FAILURE;
    if (rc == CWORK_ENOTFOUND) {
        fprintf(stderr, "%s: no job has the id ", o->label);
        put(stderr, o->arg);
        fputc('\n', stderr);
        return CLI_NOT_FOUND;
    }
    if (rc != 0) return admin_fail(o, rc, &err);
    cwork_job_free(found.job);
    if (place != set_place(set)) {
        fprintf(stderr, "%s: job ", o->label);
        put(stderr, o->arg);
        fprintf(stderr, " is not in the %s set but %s (see cwork job ID)\n", admin_set_title(set),
                place == CWORK_PLACE_QUEUE         ? "in its queue"
                : place == CWORK_PLACE_IN_PROGRESS ? "in progress"
                : place == CWORK_PLACE_RETRY       ? "in the retry set"
                : place == CWORK_PLACE_SCHEDULED   ? "in the scheduled set"
                                                   : "in the dead set");
        return CLI_NOT_FOUND;
    }
    *at = found.at;
    return CLI_OK;
}

/* Reports a count: {"verb":N} (with "at" and "id" for one job) or a sentence that
 * starts with sentence_verb. */
static void report(const admin_opts *o, const char *verb, const char *sentence_verb, int64_t count,
                   int64_t at)
{
    cwork_job_set set = admin_set(o->cmd);
    if (o->seen & OPT_JSON) {
        if (o->arg) {
            printf("{\"at\":%" PRId64 ",\"id\":", at);
            admin_json_string(o->arg, strlen(o->arg));
            printf(",\"%s\":%" PRId64 "}\n", verb, count);
        } else {
            printf("{\"%s\":%" PRId64 "}\n", verb, count);
        }
        return;
    }
    printf("%s ", sentence_verb);
    if (o->arg) {
        printf("%s job ", admin_set_title(set));
        put(stdout, o->arg);
        printf(" (at %" PRId64 ").\n", at);
        return;
    }
    printf("%" PRId64 " %s job%s", count, admin_set_title(set), count == 1 ? "" : "s");
    if (o->name) {
        printf(" called ");
        put(stdout, o->name);
    }
    printf(".\n");
}

/* ---------------------------------------------------------------- dead retry */

static int do_retry_dead(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    int64_t count = 0, at = 0;
    int rc, status;
    if (o->seen & OPT_ALL) {
        rc = cwork_client_retry_all_dead(client, o->name, &count, &err);
        if (rc != 0) return admin_fail(o, rc, &err);
        report(o, "retried", "Retried", count, 0);
        return CLI_OK;
    }
    if ((status = locate(o, client, CWORK_SET_DEAD, &at)) != CLI_OK) return status;
    rc = cwork_client_retry_dead(client, at, o->arg, &err);
    if (rc != 0) /* also "nothing retried" when the name is not in known_jobs */
        return admin_fail(o, rc, &err);
    report(o, "retried", "Retried", 1, at);
    return CLI_OK;
}

int admin_retry_dead(const admin_opts *o)
{
    return admin_run(o, do_retry_dead);
}

/* ---------------------------------------------------------------- delete */

static int do_delete(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    int64_t count = 0, at = 0;
    int rc, status;
    if (o->seen & OPT_ALL) {
        rc = cwork_client_delete_all_dead(client, o->name, &count, &err);
        if (rc != 0) return admin_fail(o, rc, &err);
        report(o, "deleted", "Deleted", count, 0);
        return CLI_OK;
    }
    cwork_job_set set = admin_set(o->cmd);
    if ((status = locate(o, client, set, &at)) != CLI_OK) return status;
    rc = cwork_client_delete(client, set, at, o->arg, &err);
    if (rc != 0) return admin_fail(o, rc, &err);
    report(o, "deleted", "Deleted", 1, at);
    return CLI_OK;
}

int admin_delete(const admin_opts *o)
{
    return admin_run(o, do_delete);
}

/* ---------------------------------------------------------------- dead trim */

/* Trims shard after shard of a sharded namespace (each its older_than and keep), a line
 * each: how many of its dead jobs went. */
static int trim_shards(const admin_opts *o, cwork_client *client, unsigned count, int64_t before,
                       int64_t keep)
{
    cwork_error err = {0};
    int64_t sum = 0;
    if (o->seen & OPT_JSON) printf("{\"shards\":[");
    for (unsigned i = 0; i < count; i++) {
        int64_t removed = 0;
        cwork_client *shard = cwork_client_shard(client, i, &err);
        int rc = shard ? cwork_client_trim_dead(shard, before, keep, &removed, &err) : err.code;
        if (rc != 0) {
            if (o->seen & OPT_JSON) printf("]}\n"); /* the lines so far stay valid JSON */
            return admin_fail(o, rc, &err);
        }
        sum += removed;
        char ns[160];
        cli_shard_ns(o->conn.ns, i, ns, sizeof ns);
        if (o->seen & OPT_JSON) {
            printf("%s{\"shard\":%u,\"ns\":", i ? "," : "", i);
            admin_json_string(ns, strlen(ns));
            printf(",\"removed\":%" PRId64 "}", removed);
        } else {
            printf("Shard %u (%s): removed %" PRId64 " dead job%s.\n", i, ns, removed,
                   removed == 1 ? "" : "s");
        }
    }
    if (o->seen & OPT_JSON)
        printf("],\"removed\":%" PRId64 "}\n", sum);
    else
        printf("Removed %" PRId64 " dead job%s in %u shards.\n", sum, sum == 1 ? "" : "s", count);
    return CLI_OK;
}

static int do_trim(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    int64_t removed = 0, before = 0;
    if (o->seen & OPT_OLDER) {
        before = (int64_t)time(NULL) - o->older_than;
        if (before < 1) before = 1; /* 0 would mean no age limit; nothing died before 1970 */
    }
    int64_t keep = (o->seen & OPT_KEEP) ? o->keep : -1;
    unsigned count = 1;
    /* the whole namespace (no --shard): shard by shard, each reported */
    if (!(o->seen & OPT_SHARD) && cwork_client_shards(client, &count, &err) != 0)
        return admin_fail(o, err.code, &err);
    if (count > 1) return trim_shards(o, client, count, before, keep);
    int rc = cwork_client_trim_dead(client, before, keep, &removed, &err);
    if (rc != 0) return admin_fail(o, rc, &err);
    if (o->seen & OPT_JSON)
        printf("{\"removed\":%" PRId64 "}\n", removed);
    else
        printf("Removed %" PRId64 " dead job%s.\n", removed, removed == 1 ? "" : "s");
    return CLI_OK;
}

int admin_trim(const admin_opts *o)
{
    return admin_run(o, do_trim);
}

/* ---------------------------------------------------------------- pause, unpause */

/* Warns on stderr when name is not in known_jobs (a typo?), naming the closest known
 * name; says nothing when it is, or when the lookup fails. */
static void warn_unknown_name(const admin_opts *o, cwork_client *client, const char *name,
                              const char *what_happened)
{
    cwork_queue_info *q = NULL;
    size_t n = 0;
    if (cwork_client_queues(client, &q, &n, NULL) != 0) return;
    const char **names = calloc(n + 1, sizeof *names);
    int known = 0;
    for (size_t i = 0; i < n; i++) {
        known |= strcmp(q[i].job_name, name) == 0;
        if (names) names[i] = q[i].job_name;
    }
    if (!known) {
        const char *near = names ? cli_suggest(name, names) : NULL;
        fprintf(stderr, "%s: warning: \"", o->label);
        put(stderr, name);
        fprintf(stderr, "\" is not in known_jobs (a typo?%s", near ? " did you mean " : "");
        if (near) put(stderr, near);
        fprintf(stderr, "%s); %s\n", near ? "?" : "", what_happened);
    }
    free(names);
    cwork_queue_infos_free(q, n);
}

static int do_pause(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    int pause = o->cmd == ADM_PAUSE;
    int rc = pause ? cwork_client_pause(client, o->arg, &err)
                   : cwork_client_unpause(client, o->arg, &err);
    if (rc != 0) return admin_fail(o, rc, &err);
    if (pause) warn_unknown_name(o, client, o->arg, "paused anyway");
    if (o->seen & OPT_JSON) {
        printf("{\"name\":");
        admin_json_string(o->arg, strlen(o->arg));
        printf(",\"paused\":%s}\n", pause ? "true" : "false");
    } else if (pause) {
        printf("Paused ");
        put(stdout, o->arg);
        printf(": no worker pool takes its jobs until it is unpaused.\n");
    } else {
        printf("Unpaused ");
        put(stdout, o->arg);
        printf(".\n");
    }
    return CLI_OK;
}

int admin_pause(const admin_opts *o)
{
    return admin_run(o, do_pause);
}

/* ---------------------------------------------------------------- retry run, scheduled run */

static int do_run_now(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    cwork_job_set set = admin_set(o->cmd);
    int64_t count = 0, stayed = 0, at = 0;
    int rc, status;
    if (o->seen & OPT_ALL) {
        rc = cwork_client_run_all_now(client, set, o->name, &count, &stayed, &err);
        if (rc != 0) return admin_fail(o, rc, &err);
        if (o->seen & OPT_JSON) {
            printf("{\"run\":%" PRId64 ",\"stayed\":%" PRId64 "}\n", count, stayed);
            return CLI_OK;
        }
        report(o, "run", "Queued", count, 0);
        if (stayed > 0)
            printf("%" PRId64 " stayed in the %s set: their names are not in known_jobs, or "
                   "their queue key holds something else (see cwork queues).\n",
                   stayed, admin_set_title(set));
        return CLI_OK;
    }
    if ((status = locate(o, client, set, &at)) != CLI_OK) return status;
    rc = cwork_client_run_now(client, set, at, o->arg, &err);
    if (rc != 0) return admin_fail(o, rc, &err);
    report(o, "run", "Queued", 1, at);
    return CLI_OK;
}

int admin_run_now(const admin_opts *o)
{
    return admin_run(o, do_run_now);
}

/* ---------------------------------------------------------------- queue clear */

static int do_clear_queue(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    int64_t count = 0;
    int rc = cwork_client_clear_queue(client, o->arg, &count, &err);
    if (rc != 0) return admin_fail(o, rc, &err);
    if (count == 0) warn_unknown_name(o, client, o->arg, "nothing to clear");
    if (o->seen & OPT_JSON) {
        printf("{\"deleted\":%" PRId64 ",\"name\":", count);
        admin_json_string(o->arg, strlen(o->arg));
        printf("}\n");
    } else {
        printf("Deleted %" PRId64 " waiting job%s from queue ", count, count == 1 ? "" : "s");
        put(stdout, o->arg);
        printf(".\n");
    }
    return CLI_OK;
}

int admin_clear_queue(const admin_opts *o)
{
    return admin_run(o, do_clear_queue);
}

/* ---------------------------------------------------------------- queue delete */

static int do_delete_waiting(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    cwork_waiting_ref job = {o->id, -1};
    int rc = cwork_client_delete_waiting(client, o->arg, &job, 1, NULL, NULL, &err);
    if (rc != 0) return admin_fail(o, rc, &err);
    if (o->seen & OPT_JSON) {
        printf("{\"deleted\":1,\"id\":");
        admin_json_string(o->id, strlen(o->id));
        printf(",\"name\":");
        admin_json_string(o->arg, strlen(o->arg));
        printf("}\n");
    } else {
        printf("Deleted waiting job ");
        put(stdout, o->id);
        printf(" from queue ");
        put(stdout, o->arg);
        printf(".\n");
    }
    return CLI_OK;
}

int admin_delete_waiting(const admin_opts *o)
{
    return admin_run(o, do_delete_waiting);
}

/* ---------------------------------------------------------------- cancel */

static int cancel_job(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    cwork_cancel_result res;
    int rc = cwork_client_cancel(client, o->arg, &res, &err);
    if (rc == CWORK_EUNSUPPORTED) {
        admin_fail(o, rc, &err);
        return CLI_NOT_CANCELLABLE;
    }
    if (rc != 0) return admin_fail(o, rc, &err);
    const char *place = cwork_job_place_name(res.place);
    if (o->seen & OPT_JSON) {
        fputs("{\"cancelled\":true,\"id\":", stdout);
        admin_json_string(o->arg, strlen(o->arg));
        printf(",\"place\":\"%s\",\"pool\":\"%s\"}\n", place, res.pool_id);
    } else if (res.place == CWORK_PLACE_IN_PROGRESS) {
        printf("cancelled: job %s runs in pool %s, which stops it and moves it to the dead "
               "set\n",
               o->arg, res.pool_id);
    } else {
        printf("cancelled: job %s moved from the %s%s to the dead set\n", o->arg, place,
               res.place == CWORK_PLACE_QUEUE ? "" : " set");
    }
    return CLI_OK;
}

int admin_cancel(const admin_opts *o)
{
    return admin_run(o, cancel_job);
}

/* ---------------------------------------------------------------- retry kill, scheduled kill */

static int do_kill(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    cwork_job_set set = admin_set(o->cmd);
    int64_t count = 0, at = 0;
    int rc, status;
    if (o->seen & OPT_ALL) {
        rc = cwork_client_kill_all(client, set, o->name, &count, &err);
        if (rc != 0) return admin_fail(o, rc, &err);
        report(o, "killed", "Killed", count, 0);
        return CLI_OK;
    }
    if ((status = locate(o, client, set, &at)) != CLI_OK) return status;
    rc = cwork_client_kill(client, set, at, o->arg, &err);
    if (rc != 0) return admin_fail(o, rc, &err);
    report(o, "killed", "Killed", 1, at);
    return CLI_OK;
}

int admin_kill(const admin_opts *o)
{
    return admin_run(o, do_kill);
}
