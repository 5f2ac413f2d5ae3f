/* The programs in examples/ run against the test Redis and have the effect they claim:
 * example_enqueue writes 101 send_email jobs and one scheduled unique job;
 * example_worker runs them, and the one for customer 13 lands in the retry set. */
#include "testlib.h"

#include <stdlib.h>
#include <sys/wait.h>

static int run(const char *program, const char *ns, char *out, size_t size)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/%s' '%s' '%s' 2>&1", getenv("CWORK_BINARY_DIR"), program,
             tl_redis_url(), ns);
    FILE *f = popen(cmd, "r");
    size_t n = f ? fread(out, 1, size - 1, f) : 0;
    out[n] = '\0';
    int status = f ? pclose(f) : -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void enqueue_then_work(void)
{
    char ns[64], out[65536];
    tl_unique_ns("examples", ns, sizeof ns);
    redisContext *c = tl_redis_connect();
    CHECK_INT(run("example_enqueue", ns, out, sizeof out), 0);
    CHECK(strstr(out, "enqueued 100 more jobs") != NULL);
    redisReply *r = tl_cmd(c, "LLEN %s:jobs:send_email", ns);
    CHECK_INT(r->integer, 101);
    freeReplyObject(r);
    r = tl_cmd(c, "ZCARD %s:scheduled", ns);
    CHECK_INT(r->integer, 1);
    freeReplyObject(r);

    CHECK_INT(run("example_worker", ns, out, sizeof out), 0);
    CHECK(strstr(out, "processed 101, failed 1") != NULL);
    CHECK(strstr(out, "from noreply@example.com to test@example.com") != NULL);
    r = tl_cmd(c, "ZRANGE %s:retry 0 -1", ns);
    CHECK(r->elements == 1 && strstr(r->element[0]->str, "\"customer_id\":13") &&
          strstr(r->element[0]->str, "mailbox of customer 13 is full"));
    freeReplyObject(r);
    r = tl_cmd(c, "EXISTS %s:jobs:send_email %s:worker_pools", ns, ns);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    tl_ns_delete(c, ns);
    redisFree(c);
}

int main(void)
{
    RUN(enqueue_then_work);
    return tl_finish();
}
