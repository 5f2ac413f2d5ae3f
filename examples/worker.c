/* A worker pool: a handler, a middleware, a per-job context and a check-in.
 *
 *   example_worker [REDIS_URL [NAMESPACE]]
 *
 * Runs the send_email jobs that example_enqueue (or a Go enqueuer) put into the queue,
 * and exits once the queue is empty. A real service would instead run until SIGTERM and
 * then call cwork_pool_stop. */
#include <cwork.h>
#include <stdio.h>
#include <string.h>

/* Made fresh for every job, like the context struct of Go's work.NewWorkerPool. */
typedef struct {
    long customer_id;
    char trace[32];
} email_ctx;

/* Application state shared by all jobs: cwork_pool_options.userdata. */
typedef struct {
    const char *sender;
} app;

static int ctx_init(void *ctx, void *userdata)
{
    (void)userdata;
    snprintf(((email_ctx *)ctx)->trace, sizeof((email_ctx *)ctx)->trace, "new");
    return 0;
}

/* Middleware: find the customer before the handler runs; skip jobs without one. */
static int find_customer(cwork_job *job, void *ctx, cwork_next *next)
{
    email_ctx *c = ctx;
    c->customer_id = (long)cwork_job_arg_int64(job, "customer_id");
    if (cwork_job_arg_error(job))
        return cwork_job_fail(job, "no customer: %s", cwork_job_arg_error(job));
    return cwork_next_call(next);
}

static int send_email(cwork_job *job, void *ctx)
{
    email_ctx *c = ctx;
    const app *a = cwork_job_userdata(job);
    const char *addr = cwork_job_arg_string(job, "address");
    const char *subject = cwork_job_arg_string(job, "subject");
    if (cwork_job_arg_error(job)) return cwork_job_fail(job, "%s", cwork_job_arg_error(job));
    cwork_job_checkin(job, "sending");
    if (c->customer_id == 13) /* some jobs fail: they go to the retry set */
        return cwork_job_fail(job, "mailbox of customer 13 is full");
    printf("from %s to %s: %s (customer %ld)\n", a->sender, addr, subject, c->customer_id);
    return 0;
}

int main(int argc, char **argv)
{
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(argc > 1 ? argv[1] : NULL, NULL, &err);
    if (!redis) {
        fprintf(stderr, "redis: %s\n", err.message);
        return 1;
    }
    app state = {"noreply@example.com"};
    cwork_pool_options opts;
    cwork_pool_options_init(&opts);
    opts.concurrency = 10;
    opts.context_size = sizeof(email_ctx);
    opts.context_init = ctx_init;
    opts.userdata = &state;
    const char *ns = argc > 2 ? argv[2] : "my_app_namespace";
    cwork_pool *pool = cwork_pool_new(redis, ns, &opts, &err);

    cwork_job_options jo;
    cwork_job_options_init(&jo);
    jo.max_fails = 3;
    jo.timeout_ms = 10000;
    if (!pool || cwork_pool_use(pool, find_customer, &err) != 0 ||
        cwork_pool_register(pool, "send_email", send_email, &jo, &err) != 0 ||
        cwork_pool_start(pool, &err) != 0) {
        fprintf(stderr, "pool: %s\n", err.message);
        return 1;
    }
    if (cwork_pool_drain(pool, 60000, &err) != 0) fprintf(stderr, "drain: %s\n", err.message);
    cwork_pool_stats st;
    cwork_pool_get_stats(pool, &st);
    printf("processed %llu, failed %llu\n", (unsigned long long)st.succeeded + st.failed,
           (unsigned long long)st.failed);
    int rc = cwork_pool_stop(pool, 30000, &err);
    cwork_pool_free(pool);
    cwork_redis_free(redis);
    return rc == 0 ? 0 : 1;
}
