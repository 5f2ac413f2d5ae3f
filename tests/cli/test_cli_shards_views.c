/* The rest of the CLI's views of a sharded namespace (PROTOCOL §27) against a real
 * Redis: a namespace of three shards built by hand (the record, Go's JSON written into
 * each shard's keys). `dead --grep` lists the namespace as one, `queue delete`, `result`,
 * `succeeded` and `batch` find what a shard holds, `dead trim` and `doctor` act shard by
 * shard and report each; `--shard N` shows one shard; what only reads writes nothing
 * (every shard dumped after). */
#include "cli_shards_testutil.h"

static void three_shards(const char *tag)
{
    cs_names(tag);
    tl_do(rc_, "HSET %s:cwork:shards count 3 hash fnv1a64-jump created 1700000000", ns_);
    tl_do(rc_, "SADD %s:known_jobs a", ns_);
    tl_do(rc_, "SADD %s:known_jobs a", shard2_);
    tl_do(rc_, "LPUSH %s:jobs:a %s %s", shard2_,
          "{\"name\":\"a\",\"id\":\"q1\",\"t\":20,\"args\":{}}",
          "{\"name\":\"a\",\"id\":\"q2\",\"t\":40,\"args\":{}}");
    tl_do(rc_, "LPUSH %s:jobs:a %s", ns_, "{\"name\":\"a\",\"id\":\"q3\",\"t\":30,\"args\":{}}");
    tl_do(rc_, "ZADD %s:dead 5 %s", shard1_,
          "{\"name\":\"a\",\"id\":\"d1\",\"t\":1,\"args\":{},\"err\":\"boom\",\"failed_at\":5}");
    tl_do(
        rc_, "ZADD %s:dead 7 %s", ns_,
        "{\"name\":\"a\",\"id\":\"d2\",\"t\":1,\"args\":{},\"err\":\"boom too\",\"failed_at\":7}");
}

/* Whether a appears in s before b. */
static int before_in(const char *s, const char *a, const char *b)
{
    const char *x = strstr(s, a), *y = strstr(s, b);
    return x && y && x < y;
}

static void lists_and_finds_read_the_whole_namespace(void)
{
    three_shards("cv");
    tl_do(rc_, "SET %s:cwork:result:q1 hello", shard2_);
    tl_do(rc_,
          "HSET %s:cwork:batch:00112233445566778899aabb id 00112233445566778899aabb "
          "total 2 succeeded 1 dead 0 retrying 0 sealed 1 when complete callback waiting "
          "created_at 1700000000",
          shard1_);
    char *before = dump_all();
    /* the search: both shards' matches, newest first */
    CHECK_INT(IN_NS("dead", "--grep", "boom", "--json"), 0);
    CHECK(before_in(cli_out_, "\"d2\"", "\"d1\""));
    CHECK_INT(IN_NS("dead", "--grep", "boom", "--shard", "1", "--json"), 0);
    CHECK(strstr(cli_out_, "\"d1\"") && !strstr(cli_out_, "\"d2\""));
    /* a result and a batch in whichever shard holds them */
    CHECK_INT(IN_NS("result", "q1"), 0);
    CHECK_STR(cli_out_, "hello");
    CHECK_INT(IN_NS("result", "q1", "--shard", "0"), 4);
    CHECK_INT(IN_NS("batch", "00112233445566778899aabb", "--json"), 0);
    CHECK(strstr(cli_out_, "\"total\":2") != NULL);
    CHECK_INT(IN_NS("batch", "00112233445566778899aabb", "--shard", "5"), 2);
    CHECK(strstr(cli_err_, "3 shards") != NULL);
    CHECK_INT(IN_NS("succeeded", "--json"), 0);
    char *after = dump_all();
    CHECK_STR(after, before);
    free(after);
    free(before);
    /* a waiting job deleted in the shard that holds it (q1: shard 2) */
    CHECK_INT(IN_NS("queue", "delete", "a", "q1", "--shard", "0"), 4);
    CHECK_INT(IN_NS("queue", "delete", "a", "q1"), 0);
    char want[256];
    snprintf(want, sizeof want,
             "%s:jobs:a list {\"name\":\"a\",\"id\":\"q2\",\"t\":40,\"args\":{}}", shard2_);
    after = tl_ns_dump(rc_, shard2_);
    CHECK(strstr(after, want) != NULL);
    free(after);
    cleanup();
}

static void trim_and_the_doctor_report_each_shard(void)
{
    three_shards("ct");
    tl_do(rc_, "SET %s:known_jobs x", shard1_); /* a string where a set belongs */
    CHECK_INT(IN_NS("doctor"), 1);
    char want[512];
    snprintf(want, sizeof want, "Shard 0 (%s): clean.\nShard 1 (%s): 1 finding(s)\n", ns_, shard1_);
    CHECK(strncmp(cli_out_, want, strlen(want)) == 0);
    snprintf(want, sizeof want, "Shard 2 (%s): clean.\n1 finding(s);", shard2_);
    CHECK(strstr(cli_out_, want) != NULL);
    CHECK_INT(IN_NS("doctor", "--json"), 1);
    CHECK(strstr(cli_out_, "{\"shard\":1,\"kind\":\"wrong_type\"") != NULL);
    CHECK_INT(IN_NS("doctor", "--shard", "2"), 0);
    CHECK(strstr(cli_out_, "Clean") != NULL);
    tl_do(rc_, "DEL %s:known_jobs", shard1_);
    /* trim: each shard's count, then the sum */
    CHECK_INT(IN_NS("dead", "trim", "--keep", "0"), 0);
    snprintf(want, sizeof want,
             "Shard 0 (%s): removed 1 dead job.\n"
             "Shard 1 (%s): removed 1 dead job.\n"
             "Shard 2 (%s): removed 0 dead jobs.\n"
             "Removed 2 dead jobs in 3 shards.\n",
             ns_, shard1_, shard2_);
    CHECK_STR(cli_out_, want);
    redisReply *r = tl_cmd(rc_, "EXISTS %s:dead %s:dead", ns_, shard1_);
    CHECK_INT(r->integer, 0);
    freeReplyObject(r);
    CHECK_INT(IN_NS("dead", "trim", "--keep", "0", "--json"), 0);
    snprintf(want, sizeof want,
             "{\"shards\":[{\"shard\":0,\"ns\":\"%s\",\"removed\":0},{\"shard\":1,\"ns\":\"%s\","
             "\"removed\":0},{\"shard\":2,\"ns\":\"%s\",\"removed\":0}],\"removed\":0}\n",
             ns_, shard1_, shard2_);
    CHECK_STR(cli_out_, want);
    CHECK_INT(IN_NS("dead", "trim", "--keep", "0", "--shard", "1"), 0);
    CHECK_STR(cli_out_, "Removed 0 dead jobs.\n");
    cleanup();
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(lists_and_finds_read_the_whole_namespace);
    RUN(trim_and_the_doctor_report_each_shard);
    redisFree(rc_);
    return tl_finish();
}
