/* What a pool tells its operators through the logger: a handler that runs past its
 * type's timeout ("job.overrun", with the job), a Redis that may evict jobs
 * ("pool.maxmemory_policy" at start), and a key someone damaged that the cycle script
 * works around ("worker.cycle", naming the type). */
#include "cwork.h"
#include "testlib.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
static char seen_[4096];

static void logger(void *ud, cwork_log_level level, const char *msg, const cwork_log_field *f,
                   size_t n)
{
    (void)ud;
    pthread_mutex_lock(&mu_);
    size_t len = strlen(seen_);
    len += (size_t)snprintf(seen_ + len, sizeof seen_ - len, "%d %s", (int)level, msg);
    for (size_t i = 0; i < n && len < sizeof seen_; i++)
        len += (size_t)snprintf(seen_ + len, sizeof seen_ - len, " %s=%s", f[i].key, f[i].value);
    if (len < sizeof seen_ - 1) strcat(seen_, "\n");
    pthread_mutex_unlock(&mu_);
}

static int seen(const char *needle)
{
    pthread_mutex_lock(&mu_);
    int found = strstr(seen_, needle) != NULL;
    pthread_mutex_unlock(&mu_);
    return found;
}

static int slow(cwork_job *job, void *ctx)
{
    (void)ctx;
    int64_t deadline = cwork_job_timeout_at_ms(job);
    struct timespec ts = {0, 300 * 1000000L};
    nanosleep(&ts, NULL);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    CHECK(deadline > 0 && (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 > deadline);
    return 0;
}

static void overrun_and_eviction_policy_are_reported(void)
{
    tl_server s;
    if (tl_server_start(&s, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    const char *url = s.url;
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", s.port, tv);
    freeReplyObject(tl_cmd(c, "CONFIG SET maxmemory-policy allkeys-lru"));
    freeReplyObject(
        tl_cmd(c, "LPUSH warn:jobs:slow {\"name\":\"slow\",\"id\":\"o1\",\"t\":1,\"args\":null}"));
    seen_[0] = '\0';
    cwork_set_logger(logger, NULL, CWORK_LOG_DEBUG);
    cwork_redis *redis = cwork_redis_new(url, NULL, NULL);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 2;
    cwork_pool *p = cwork_pool_new(redis, "warn", &o, NULL);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.timeout_ms = 50;
    cwork_pool_register(p, "slow", slow, &jo, NULL);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    CHECK(seen("pool.maxmemory_policy policy=allkeys-lru"));
    CHECK_INT(cwork_pool_drain(p, 5000, NULL), 0);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    /* Logged once, while it still ran (maintenance) or when it ended (executor). */
    CHECK(seen("job.overrun job_name=slow job_id=o1"));
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    cwork_pool_free(p);
    cwork_redis_free(redis);

    /* noeviction: no warning. */
    freeReplyObject(tl_cmd(c, "CONFIG SET maxmemory-policy noeviction"));
    seen_[0] = '\0';
    cwork_set_logger(logger, NULL, CWORK_LOG_DEBUG);
    redis = cwork_redis_new(url, NULL, NULL);
    p = cwork_pool_new(redis, "warn", &o, NULL);
    cwork_pool_register(p, "slow", slow, &jo, NULL);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    CHECK(!seen("maxmemory"));
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    cwork_pool_free(p);
    cwork_redis_free(redis);
    redisFree(c);
    tl_server_destroy(&s);
}

static atomic_int ran_b_;

static int count_b(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    atomic_fetch_add(&ran_b_, 1);
    return 0;
}

static int never(cwork_job *job, void *ctx)
{
    (void)job, (void)ctx;
    CHECK(!"a job of the type whose lock counter is damaged ran");
    return 0;
}

static void damaged_lock_counter_is_reported_by_type(void)
{
    /* Type a's lock counter is a hash: the cycle script fetches none of its jobs (they
     * stay waiting) and says why in its reply; type b, after it in the same reply, runs. */
    char ns[64];
    tl_unique_ns("dmg", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    tl_do(c, "HSET %s:jobs:a:lock x 1", ns);
    tl_do(c, "LPUSH %s:jobs:a {\"name\":\"a\",\"id\":\"a1\",\"t\":1,\"args\":null}", ns);
    tl_do(c, "LPUSH %s:jobs:b {\"name\":\"b\",\"id\":\"b1\",\"t\":1,\"args\":null}", ns);
    seen_[0] = '\0';
    cwork_set_logger(logger, NULL, CWORK_LOG_DEBUG);
    cwork_redis *redis = cwork_redis_new(tl_redis_url(), NULL, NULL);
    cwork_pool_options o;
    cwork_pool_options_init(&o);
    o.concurrency = 2;
    cwork_pool *p = cwork_pool_new(redis, ns, &o, NULL);
    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.max_concurrency = 1;
    cwork_pool_register(p, "a", never, &jo, NULL);
    cwork_pool_register(p, "b", count_b, NULL, NULL);
    CHECK_INT(cwork_pool_start(p, NULL), 0);
    for (int i = 0; i < 500 && !(atomic_load(&ran_b_) && seen("worker.cycle")); i++)
        tl_sleep_ms(10);
    CHECK_INT(cwork_pool_stop(p, 5000, NULL), 0);
    CHECK_INT(atomic_load(&ran_b_), 1);
    CHECK(seen("worker.cycle job_name=a error=lock: WRONGTYPE"));
    CHECK(!seen("job_name=b error="));
    cwork_set_logger(NULL, NULL, CWORK_LOG_ERROR);
    cwork_pool_free(p);
    cwork_redis_free(redis);
    /* Nothing lost: a's job still waits, the damaged counter is as it was. */
    redisReply *r = tl_cmd(c, "LRANGE %s:jobs:a 0 -1", ns);
    CHECK(r && r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
          strstr(r->element[0]->str, "\"id\":\"a1\""));
    freeReplyObject(r);
    r = tl_cmd(c, "TYPE %s:jobs:a:lock", ns);
    CHECK(r && r->str && strcmp(r->str, "hash") == 0);
    freeReplyObject(r);
    tl_ns_delete(c, ns);
    redisFree(c);
}

int main(void)
{
    RUN(overrun_and_eviction_policy_are_reported);
    RUN(damaged_lock_counter_is_reported_by_type);
    return tl_finish();
}
