/* Key names of PROTOCOL §17.1, the prefix rule of §2.1, and job-name validation. */
#include "args.h"
#include "keys.h"
#include "testlib.h"

#define POOL "0123456789abcdef01234567"
#define WORKER "89abcdef0123456789abcdef"

static char got[512];

typedef void (*key_fn)(const cw_keys *, cw_buf *);

/* Renders one key function's output for namespace ns (static storage). */
static const char *KEY(const char *ns, key_fn fn)
{
    cw_keys k;
    cw_buf b;
    cw_keys_init(&k, ns);
    cw_buf_init(&b);
    fn(&k, &b);
    snprintf(got, sizeof got, "%s", b.data ? b.data : "");
    cw_buf_free(&b);
    cw_keys_clear(&k);
    return got;
}

static void QUEUE(const cw_keys *k, cw_buf *b)
{
    cw_key_queue(k, b, "send_email");
}
static void INPROGRESS(const cw_keys *k, cw_buf *b)
{
    cw_key_inprogress(k, b, "send_email", POOL);
}
static void PAUSED(const cw_keys *k, cw_buf *b)
{
    cw_key_paused(k, b, "send_email");
}
static void LOCK(const cw_keys *k, cw_buf *b)
{
    cw_key_lock(k, b, "send_email");
}
static void LOCK_INFO(const cw_keys *k, cw_buf *b)
{
    cw_key_lock_info(k, b, "send_email");
}
static void MAXC(const cw_keys *k, cw_buf *b)
{
    cw_key_max_concurrency(k, b, "send_email");
}
static void WORKER_KEY(const cw_keys *k, cw_buf *b)
{
    cw_key_worker(k, b, WORKER);
}
static void POOL_KEY(const cw_keys *k, cw_buf *b)
{
    cw_key_worker_pool(k, b, POOL);
}

static void keys_of_spec_18_1(void)
{
    CHECK_STR(KEY("work", cw_key_known_jobs), "work:known_jobs");
    CHECK_STR(KEY("work", QUEUE), "work:jobs:send_email");
    CHECK_STR(KEY("work", INPROGRESS), "work:jobs:send_email:" POOL ":inprogress");
    CHECK_STR(KEY("work", PAUSED), "work:jobs:send_email:paused");
    CHECK_STR(KEY("work", LOCK), "work:jobs:send_email:lock");
    CHECK_STR(KEY("work", LOCK_INFO), "work:jobs:send_email:lock_info");
    CHECK_STR(KEY("work", MAXC), "work:jobs:send_email:max_concurrency");
    CHECK_STR(KEY("work", cw_key_retry), "work:retry");
    CHECK_STR(KEY("work", cw_key_dead), "work:dead");
    CHECK_STR(KEY("work", cw_key_scheduled), "work:scheduled");
    CHECK_STR(KEY("work", WORKER_KEY), "work:worker:" WORKER);
    CHECK_STR(KEY("work", cw_key_worker_pools), "work:worker_pools");
    CHECK_STR(KEY("work", POOL_KEY), "work:worker_pools:" POOL);
    CHECK_STR(KEY("work", cw_key_last_periodic_enqueue), "work:last_periodic_enqueue");
    CHECK_STR(KEY("work", cw_key_reaper_lock), "work:reaper_lock");
    CHECK_STR(KEY("work", cw_key_jobs_prefix), "work:jobs:");
}

static void prefix_rule(void)
{
    CHECK_STR(KEY("work:", QUEUE), "work:jobs:send_email");
    CHECK_STR(KEY("", QUEUE), "jobs:send_email");
    CHECK_STR(KEY("", cw_key_known_jobs), "known_jobs");
    CHECK_STR(KEY("{app}", QUEUE), "{app}:jobs:send_email");
    CHECK_STR(KEY("work::", QUEUE), "work::jobs:send_email");
}

static void unique_keys_of_spec_18_3(void)
{
    cw_keys k;
    cw_keys_init(&k, "work");
    cw_buf b;
    cw_buf_init(&b);
    cwork_args *args = NULL;
    CHECK_INT(cwork_args_parse("{\"object_id_\":\"123\"}", 20, &args, NULL), 0);
    CHECK_INT(cw_key_unique(&k, &b, "clear_cache", cw_args_object(args), NULL), 0);
    CHECK_MEM(b.data, b.len, "work:unique:clear_cache:{\"object_id_\":\"123\"}\n", 45);
    cwork_args_free(args);

    cw_buf_reset(&b);
    CHECK_INT(cw_key_unique(&k, &b, "clear_cache", NULL, NULL), 0);
    CHECK_STR(b.data, "work:unique:clear_cache:");

    cw_buf_reset(&b);
    args = cwork_args_new();
    CHECK_INT(cw_key_unique(&k, &b, "clear_cache", cw_args_object(args), NULL), 0);
    CHECK_STR(b.data, "work:unique:clear_cache:{}\n");

    cw_buf_reset(&b);
    cwork_args_set_int64(args, "b", 2);
    cwork_args_set_string(args, "a", "<&>");
    cwork_args_set_json(args, "c", "[1,\"z\"]", 7, NULL);
    CHECK_INT(cw_key_unique(&k, &b, "x", cw_args_object(args), NULL), 0);
    CHECK_STR(b.data, "work:unique:x:{\"a\":\"\\u003c\\u0026\\u003e\",\"b\":2,\"c\":[1,\"z\"]}\n");
    cwork_args_free(args);
    cw_buf_free(&b);
    cw_keys_clear(&k);
}

static void job_names_that_collide_are_rejected(void)
{
    static const char *const bad[] = {
        "",
        "a,b",
        "x:lock",
        "x:lock_info",
        "x:paused",
        "x:max_concurrency",
        "x:0123456789abcdef01234567:inprogress",
        "bad\xffutf8",
        "over\xc0\xaflong",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cwork_error err = {0};
        if (cwork_validate_job_name(bad[i], &err) != CWORK_EINVAL)
            tl_fail(__FILE__, __LINE__, "name \"%s\" was accepted", bad[i]);
        CHECK(err.message[0] != '\0');
    }
    static const char *const good[] = {
        "send_email",        "a:b",   "lock",       "x:locked", "x:inprogress",
        "x:0123:inprogress", "émail", "with space", "{app}job",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (cwork_validate_job_name(good[i], NULL) != 0)
            tl_fail(__FILE__, __LINE__, "name \"%s\" was refused", good[i]);
    CHECK_INT(cwork_validate_job_name(NULL, NULL), CWORK_EINVAL);
}

int main(void)
{
    RUN(keys_of_spec_18_1);
    RUN(prefix_rule);
    RUN(unique_keys_of_spec_18_3);
    RUN(job_names_that_collide_are_rejected);
    return tl_finish();
}
