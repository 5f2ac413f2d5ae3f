/* Enqueue a few jobs that a Go worker (gocraft/work) or a cwork pool will run.
 *
 *   example_enqueue [REDIS_URL [NAMESPACE]]
 */
#include <cwork.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    cwork_error err = {0};
    cwork_redis *redis = cwork_redis_new(argc > 1 ? argv[1] : NULL, NULL, &err);
    if (!redis) {
        fprintf(stderr, "redis: %s\n", err.message);
        return 1;
    }
    cwork_enqueuer *enq = cwork_enqueuer_new(redis, argc > 2 ? argv[2] : "my_app_namespace", &err);

    /* Like Go's enqueuer.Enqueue("send_email", work.Q{"address": …}) */
    cwork_args *args = cwork_args_new();
    cwork_args_set_string(args, "address", "test@example.com");
    cwork_args_set_string(args, "subject", "hello world");
    cwork_args_set_int64(args, "customer_id", 4);
    cwork_job *job = NULL;
    if (cwork_enqueue(enq, "send_email", args, &job, &err) != CWORK_OK) {
        fprintf(stderr, "enqueue: %s\n", err.message);
        return 1;
    }
    printf("enqueued send_email %s\n", cwork_job_id(job));
    cwork_job_free(job);

    /* In an hour, and only once while one is waiting. */
    int rc = cwork_enqueue_unique_in(enq, "clear_cache", 3600, args, NULL, &err);
    if (rc == CWORK_DUPLICATE)
        printf("clear_cache is already scheduled\n");
    else if (rc != CWORK_OK)
        fprintf(stderr, "enqueue: %s\n", err.message);

    /* Many jobs in one round trip. */
    cwork_batch *batch = cwork_batch_new(enq);
    for (int i = 0; i < 100; i++) {
        cwork_args_set_int64(args, "customer_id", i);
        cwork_batch_add(batch, "send_email", args, 0, 0, NULL);
    }
    if (cwork_enqueue_batch(batch, &err) != CWORK_OK)
        fprintf(stderr, "batch: %s\n", err.message);
    else
        printf("enqueued %zu more jobs\n", cwork_batch_count(batch));

    cwork_batch_free(batch);
    cwork_args_free(args);
    cwork_enqueuer_free(enq);
    cwork_redis_free(redis);
    return 0;
}
