/* The web routes with one key of a whole namespace damaged in turn (damage_testutil.h):
 * every GET route the UI reads answers 200 with what it could read; those that read the
 * damaged key name it (its type and the type expected) once in the X-Cwork-Damaged
 * header and, for object bodies, in a "damaged" member; the namespace switcher's list
 * stays in /summary; nothing in the namespace changes. A damaged batch key leaves the
 * batch page nothing to show: 409 naming it. */
#include "damage_testutil.h"
#include "web_testutil.h"

#include "cwork.h"

/* Occurrences of needle in hay. */
static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void every_route_answers_and_names_the_damaged_key(void)
{
    char ns[64], other[80];
    tl_unique_ns("dmgweb", ns, sizeof ns);
    snprintf(other, sizeof other, "%s-other", ns);
    redisContext *c = tl_redis_connect();
    cwork_redis *r = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cwork_web_options o;
    cwork_web_options_init(&o);
    o.listen = "127.0.0.1:0";
    const char *more[] = {other};
    o.namespaces = more;
    o.n_namespaces = 1;
    cwork_error err = {0};
    cwork_web *web = cwork_web_start(r, ns, &o, &err);
    if (!web) tl_fail(__FILE__, __LINE__, "cwork_web_start: %s", err.message);
    int port = web ? cwork_web_port(web) : 0;
    static const struct {
        const char *path; /* "/job/" is followed by the case's find */
        unsigned reads;   /* DMG_V_* of the damage it must name */
    } routes[] = {
        {"/job/", DMG_V_JOB | DMG_V_STORY},
        {"/batch?id=" DMG_BATCH, DMG_V_BATCH},
        {"/summary", DMG_V_QUEUES | DMG_V_POOLS | DMG_V_BUSY},
        {"/queues", DMG_V_QUEUES},
        {"/worker_pools", DMG_V_POOLS},
        {"/busy_workers", DMG_V_BUSY},
        {"/retry_jobs", DMG_V_RETRY},
        {"/scheduled_jobs", DMG_V_SCHEDULED},
        {"/dead_jobs", DMG_V_DEAD},
        {"/dashboard", 0},
        {"/rate_limits", DMG_V_LIMITS},
        {"/queue_jobs?name=a", 0},
        {"/search?set=dead&q=a", 0},
        {"/metrics", 0},
    };
    for (size_t i = 0; web && i < DMG_NCASES; i++) {
        const dmg_case *k = &dmg_cases[i];
        char key[256], json_key[300];
        dmg_key(ns, k, key, sizeof key);
        snprintf(json_key, sizeof json_key, "\"key\":\"%s\"", key);
        dmg_fixture(c, ns);
        dmg_apply(c, ns, k);
        char *before = tl_ns_dump(c, ns);
        for (size_t j = 0; j < sizeof routes / sizeof routes[0]; j++) {
            http_res res;
            char path[160];
            snprintf(path, sizeof path, "%s%s", routes[j].path,
                     strcmp(routes[j].path, "/job/") ? "" : k->find);
            CHECK_INT(wt_http(port, "GET", path, NULL, NULL, &res), 0);
            if (res.status != 200)
                tl_fail(__FILE__, __LINE__, "%s with %s damaged: %d %s", routes[j].path, key,
                        res.status, res.body);
            const char *h = wt_header(&res, "X-Cwork-Damaged");
            char encoded[300]; /* keys of letters, digits, '-' and ':' stay as they are */
            snprintf(encoded, sizeof encoded, "%%22%s%%22", key);
            int named = h && strstr(h, encoded) != NULL;
            if ((routes[j].reads & k->named_by) && !named)
                tl_fail(__FILE__, __LINE__, "%s does not name %s: %s", routes[j].path, key,
                        h ? h : "(no header)");
            if (named && res.body[0] == '{') { /* an object names it in its body, once */
                CHECK_INT(count_of(res.body, json_key), 1);
                char want[160];
                snprintf(want, sizeof want, "\"type\":\"%s\",\"expected\":\"%s\"", k->type,
                         k->expected);
                CHECK(strstr(res.body, want) != NULL);
            }
            if (strcmp(routes[j].path, "/summary") == 0) { /* the switcher's list */
                char want[200];
                snprintf(want, sizeof want, "\"%s\",\n\t\t\"%s\"\n\t]", ns, other);
                const char *list = strstr(res.body, "\"namespaces\": [");
                if (!list || !strstr(list, want))
                    tl_fail(__FILE__, __LINE__, "summary: %s", res.body);
            }
        }
        http_res res;
        char path[80];
        snprintf(path, sizeof path, "/job/%s", k->find);
        CHECK_INT(wt_http(port, "GET", path, NULL, NULL, &res), 0);
        CHECK_INT(res.status, 200);
        char *after = tl_ns_dump(c, ns);
        CHECK_STR(after, before);
        free(before);
        free(after);
    }
    cwork_web_free(web);
    tl_ns_delete(c, ns);
    cwork_redis_free(r);
    redisFree(c);
}

static void a_damaged_batch_key_answers_409_naming_it(void)
{
    char ns[64];
    tl_unique_ns("dmgwebbatch", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    dmg_fixture(c, ns);
    tl_do(c, "DEL %s:cwork:batch:" DMG_BATCH, ns);
    tl_do(c, "RPUSH %s:cwork:batch:" DMG_BATCH " x", ns);
    char *before = tl_ns_dump(c, ns);
    cwork_redis *r = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cwork_web_options o;
    cwork_web_options_init(&o);
    o.listen = "127.0.0.1:0";
    cwork_error err = {0};
    cwork_web *web = cwork_web_start(r, ns, &o, &err);
    if (!web) tl_fail(__FILE__, __LINE__, "cwork_web_start: %s", err.message);
    http_res res;
    if (web) {
        CHECK_INT(wt_http(cwork_web_port(web), "GET", "/batch?id=" DMG_BATCH, NULL, NULL, &res), 0);
        CHECK_INT(res.status, 409);
        char want[300];
        snprintf(want, sizeof want,
                 "%s:cwork:batch:" DMG_BATCH " is a list, expected a hash (a batch)", ns);
        if (!strstr(res.body, want)) tl_fail(__FILE__, __LINE__, "body: %s", res.body);
        const char *h = wt_header(&res, "X-Cwork-Damaged");
        snprintf(want, sizeof want, "%%22%s:cwork:batch:" DMG_BATCH "%%22", ns);
        if (!h || !strstr(h, want)) tl_fail(__FILE__, __LINE__, "header: %s", h ? h : "(none)");
    }
    char *after = tl_ns_dump(c, ns);
    CHECK_STR(after, before);
    free(before);
    free(after);
    cwork_web_free(web);
    tl_ns_delete(c, ns);
    cwork_redis_free(r);
    redisFree(c);
}

int main(void)
{
    RUN(every_route_answers_and_names_the_damaged_key);
    RUN(a_damaged_batch_key_answers_409_naming_it);
    return tl_finish();
}
