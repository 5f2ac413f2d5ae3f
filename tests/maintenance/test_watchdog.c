/* The watchdog (src/maintenance/watchdog.c, PROTOCOL §10.4): planning on ticks, pickups counted as
 * processed, expected times older than the timeout counted as skipped, several specs
 * sharing a name, the log records, and concurrent use. */
#include "testlib.h"

#include "watchdog.h"

#include <pthread.h>
#include <stdlib.h>

static cw_cron *cron(const char *spec)
{
    cw_cron *c = NULL;
    cwork_error err = {0};
    if (cw_cron_parse(spec, &c, &err) != 0)
        tl_fail(__FILE__, __LINE__, "%s: %s", spec, err.message);
    return c;
}

static void stat_of(cw_watchdog *w, const char *name, int64_t *processed, int64_t *skipped)
{
    cw_watchdog_stat *s = NULL;
    size_t n = 0;
    CHECK_INT(cw_watchdog_stats(w, &s, &n), 0);
    *processed = *skipped = -1;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(s[i].name, name)) {
            *processed = s[i].processed;
            *skipped = s[i].skipped;
        }
    }
    cw_free(s);
}

/* 1700000000 = 2023-11-14 22:13:20 UTC; "0 * * * * *" fires at …40, …100, …160. */
static void planning_processing_and_skipping(void)
{
    cw_cron *every_minute = cron("TZ=UTC 0 * * * * *");
    cw_watchdog *w = cw_watchdog_new(0); /* the default, 60 s */
    CHECK_INT(cw_watchdog_track(w, "calc", every_minute), 0);
    tl_capture_logs();

    cw_watchdog_tick(w, 1700000000);
    cw_watchdog_tick(w, 1700000001); /* the same Next: planned once */
    CHECK_INT(tl_nlogs, 1);
    CHECK_STR(tl_logs[0].message, "Watchdog: planning job");
    CHECK(tl_logs[0].level == CWORK_LOG_DEBUG);
    CHECK_STR(tl_logs[0].fields,
              "job_name=calc job_next_time=2023-11-14T22:14:00Z jobs_total_planned=1");

    /* a pickup enqueued before the fire time does not count */
    cw_watchdog_picked(w, "calc", 1700000039);
    int64_t processed, skipped;
    stat_of(w, "calc", &processed, &skipped);
    CHECK_INT(processed, 0);
    /* the requeuer rewrites t to the move time: at or after the fire time counts */
    cw_watchdog_picked(w, "calc", 1700000041);
    stat_of(w, "calc", &processed, &skipped);
    CHECK_INT(processed, 1);
    CHECK_INT(skipped, 0);
    CHECK_STR(tl_logs[1].message, "Watchdog: successfully processed job");
    CHECK_STR(tl_logs[1].fields,
              "job_name=calc job_next_time=2023-11-14T22:14:00Z jobs_processed=1");

    /* …100 is planned at tick 1700000041 and missed: skipped once older than 60 s */
    cw_watchdog_tick(w, 1700000041);
    cw_watchdog_tick(w, 1700000160); /* 100 + 60 is not before 160 */
    stat_of(w, "calc", &processed, &skipped);
    CHECK_INT(skipped, 0);
    cw_watchdog_tick(w, 1700000161);
    stat_of(w, "calc", &processed, &skipped);
    CHECK_INT(skipped, 1);
    CHECK_INT(processed, 1);
    const tl_log *skip = NULL;
    for (int i = 0; i < tl_nlogs; i++)
        if (!strcmp(tl_logs[i].message, "Watchdog: skipped job")) skip = &tl_logs[i];
    CHECK(skip != NULL && skip->level == CWORK_LOG_WARN);
    CHECK(skip && !strcmp(skip->fields, "job_name=calc job_next_time=2023-11-14T22:15:00Z "
                                        "jobs_skipped=1"));
    cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);

    /* one pickup clears every expected time up to its t (…160 was never planned: no
     * tick between …100 and …159 asked for it) */
    cw_watchdog_tick(w, 1700000221); /* …220 is known since tick 161; plans …280 */
    cw_watchdog_picked(w, "calc", 1700000500);
    stat_of(w, "calc", &processed, &skipped);
    CHECK_INT(processed, 3);                    /* 1 earlier, then …220 and …280 */
    cw_watchdog_picked(w, "other", 1700000500); /* untracked: ignored */
    cw_watchdog_free(w);
    cw_cron_free(every_minute);
}

static void several_specs_share_a_name(void)
{
    cw_cron *a = cron("TZ=UTC 0 * * * * *"), *b = cron("TZ=UTC 30 * * * * *"),
            *c = cron("TZ=UTC 0 */1 * * * *"), *d = cron("TZ=UTC @hourly");
    cw_watchdog *w = cw_watchdog_new(5);
    CHECK_INT(cw_watchdog_track(w, "job", a), 0);
    CHECK_INT(cw_watchdog_track(w, "job", b), 0);
    CHECK_INT(cw_watchdog_track(w, "job", c), 0); /* the same times as a */
    CHECK_INT(cw_watchdog_track(w, "hourly", d), 0);
    tl_capture_logs();
    cw_watchdog_tick(w, 1700000000); /* plans …10 and …40 for job, …1600 for hourly */
    cwork_set_logger(NULL, NULL, CWORK_LOG_INFO);
    CHECK_INT(tl_nlogs, 3);
    CHECK_STR(tl_logs[1].fields,
              "job_name=job job_next_time=2023-11-14T22:13:30Z jobs_total_planned=2");
    cw_watchdog_stat *s = NULL;
    size_t n = 0;
    CHECK_INT(cw_watchdog_stats(w, &s, &n), 0);
    CHECK_INT(n, 2);
    CHECK(n == 2 && !strcmp(s[0].name, "job") && !strcmp(s[1].name, "hourly"));
    cw_free(s);
    cw_watchdog_tick(w, 1700000016); /* 10 + 5 < 16: skipped; plans …40 again (known) */
    int64_t processed, skipped;
    stat_of(w, "job", &processed, &skipped);
    CHECK_INT(skipped, 1);
    cw_watchdog_picked(w, "job", 1700000040);
    stat_of(w, "job", &processed, &skipped);
    CHECK_INT(processed, 1);
    stat_of(w, "hourly", &processed, &skipped);
    CHECK_INT(processed, 0);
    CHECK_INT(skipped, 0);
    cw_watchdog_free(w);
    cw_cron_free(a);
    cw_cron_free(b);
    cw_cron_free(c);
    cw_cron_free(d);
}

static void empty_and_null(void)
{
    cw_watchdog *w = cw_watchdog_new(60);
    cw_watchdog_stat *s = (cw_watchdog_stat *)1;
    size_t n = 9;
    CHECK_INT(cw_watchdog_stats(w, &s, &n), 0);
    CHECK(s == NULL && n == 0);
    cw_watchdog_tick(w, 1700000000);
    cw_watchdog_picked(w, "x", 1);
    CHECK_INT(cw_watchdog_track(w, NULL, NULL), CWORK_EINVAL);
    cw_watchdog_free(w);
    cw_watchdog_free(NULL);
    cw_watchdog_tick(NULL, 1);
    cw_watchdog_picked(NULL, "x", 1);
}

static cw_watchdog *shared;

static void *picker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20000; i++)
        cw_watchdog_picked(shared, "calc", 1700000000 + i);
    return NULL;
}

static void concurrent_ticks_and_pickups(void)
{
    cw_cron *c = cron("TZ=UTC * * * * * *");
    shared = cw_watchdog_new(3);
    CHECK_INT(cw_watchdog_track(shared, "calc", c), 0);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK_INT(pthread_create(&t[i], NULL, picker, NULL), 0);
    for (int i = 0; i < 20000; i++)
        cw_watchdog_tick(shared, 1700000000 + i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    int64_t processed, skipped;
    stat_of(shared, "calc", &processed, &skipped);
    CHECK(processed + skipped <= 20000 && processed + skipped >= 19990);
    cw_watchdog_free(shared);
    cw_cron_free(c);
}

int main(void)
{
    RUN(planning_processing_and_skipping);
    RUN(several_specs_share_a_name);
    RUN(empty_and_null);
    RUN(concurrent_ticks_and_pickups);
    return tl_finish();
}
