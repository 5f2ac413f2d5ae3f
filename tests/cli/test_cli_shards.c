/* cwork shards and cwork stats --shard (PROTOCOL §27) against a real Redis: a namespace of
 * three shards built by hand (the record, Go's JSON jobs written into each shard's keys)
 * is shown per shard with a total, as text and --json; the admin commands see the
 * namespace as one, and one shard with --shard N; an unsharded namespace shows one shard and gets
 * no key; bad input exits 2. Nothing is written by any of them (every shard dumped after). */
#include "cli_shards_testutil.h"

static void three_shards(const char *tag)
{
    cs_names(tag);
    tl_do(rc_, "HSET %s:cwork:shards count 3 hash fnv1a64-jump created 1700000000", ns_);
    tl_do(rc_, "SADD %s:known_jobs a", ns_);
    tl_do(rc_, "SADD %s:known_jobs a", shard2_);
    tl_do(rc_, "LPUSH %s:jobs:a %s %s", shard2_,
          "{\"name\":\"a\",\"id\":\"q1\",\"t\":1,\"args\":{}}",
          "{\"name\":\"a\",\"id\":\"q2\",\"t\":1,\"args\":{}}");
    tl_do(rc_, "LPUSH %s:jobs:a %s", ns_, "{\"name\":\"a\",\"id\":\"q3\",\"t\":1,\"args\":{}}");
    tl_do(rc_, "ZADD %s:dead 5 %s", shard1_,
          "{\"name\":\"a\",\"id\":\"d1\",\"t\":1,\"args\":{},\"err\":\"boom\",\"failed_at\":5}");
    tl_do(rc_, "ZADD %s:dead 7 %s", ns_,
          "{\"name\":\"a\",\"id\":\"d2\",\"t\":1,\"args\":{},\"err\":\"bang\",\"failed_at\":7}");
    tl_do(rc_, "ZADD %s:retry 9 %s", shard2_,
          "{\"name\":\"a\",\"id\":\"r1\",\"t\":1,\"args\":{},\"err\":\"x\",\"failed_at\":8}");
    tl_do(rc_, "SADD %s:worker_pools p1", shard1_);
    tl_do(rc_, "HSET %s:worker_pools:p1 heartbeat_at 5 started_at 1 concurrency 2", shard1_);
}

static void shards_shows_each_shard_and_the_total(void)
{
    three_shards("cs");
    char *before = dump_all();
    CHECK_INT(IN_NS("shards"), 0);
    char want[2048];
    snprintf(want, sizeof want,
             "3 shards, recorded 2023-11-14T22:13:20Z.\n"
             "\n"
             "SHARD  NAMESPACE%*s  QUEUED  RUNNING  RETRY  SCHEDULED  DEAD  POOLS\n"
             "0      %-*s       1        0      0          0     1      0\n"
             "1      %-*s       0        0      0          0     1      1\n"
             "2      %-*s       2        0      1          0     0      0\n"
             "total  %-*s       3        0      1          0     2      1\n",
             (int)strlen(shard1_) - 9, "", (int)strlen(shard1_), ns_, (int)strlen(shard1_), shard1_,
             (int)strlen(shard1_), shard2_, (int)strlen(shard1_), "");
    CHECK_STR(cli_out_, want);
    CHECK_INT(IN_NS("shards", "--json"), 0);
    snprintf(want, sizeof want,
             "{\"count\":3,\"created\":1700000000,\"homes\":3,\"from\":0,\"shards\":["
             "{\"shard\":0,\"ns\":\"%s\",\"queued\":1,\"running\":0,\"retry\":0,\"scheduled\":0,"
             "\"dead\":1,\"pools\":0},"
             "{\"shard\":1,\"ns\":\"%s\",\"queued\":0,\"running\":0,\"retry\":0,\"scheduled\":0,"
             "\"dead\":1,\"pools\":1},"
             "{\"shard\":2,\"ns\":\"%s\",\"queued\":2,\"running\":0,\"retry\":1,\"scheduled\":0,"
             "\"dead\":0,\"pools\":0}],"
             "\"total\":{\"queued\":3,\"running\":0,\"retry\":1,\"scheduled\":0,\"dead\":2,"
             "\"pools\":1}}\n",
             ns_, shard1_, shard2_);
    CHECK_STR(cli_out_, want);

    /* the admin views: the namespace as one, oldest death first across shards */
    CHECK_INT(IN_NS("dead", "--json"), 0);
    CHECK(strstr(cli_out_, "\"count\": 2") != NULL);
    const char *d1 = strstr(cli_out_, "\"d1\""), *d2 = strstr(cli_out_, "\"d2\"");
    CHECK(d1 && d2 && d1 < d2);
    CHECK_INT(IN_NS("queues"), 0);
    CHECK(strstr(cli_out_, "a        3") != NULL);
    CHECK_INT(IN_NS("job", "r1"), 0);
    CHECK(strstr(cli_out_, "retry") != NULL);
    /* --shard N: one shard alone, for every admin command */
    CHECK_INT(IN_NS("dead", "--json", "--shard", "1"), 0);
    CHECK(strstr(cli_out_, "\"count\": 1") != NULL && strstr(cli_out_, "\"d1\"") != NULL);
    CHECK_INT(IN_NS("job", "r1", "--shard", "0"), 4);
    CHECK_INT(IN_NS("job", "r1", "--shard", "2"), 0);
    CHECK_INT(IN_NS("queues", "--shard", "3"), 2);
    CHECK(strstr(cli_err_, "has 3 shards") != NULL);
    CHECK_INT(IN_NS("stats", "--json", "--days", "1"), 0);
    CHECK(strstr(cli_out_, "\"waiting\":3") != NULL);
    CHECK(strstr(cli_out_, "\"dead\":2") != NULL);
    CHECK_INT(IN_NS("stats", "--json", "--days", "1", "--shard", "1"), 0);
    CHECK(strstr(cli_out_, "\"waiting\":0") != NULL);
    CHECK(strstr(cli_out_, "\"dead\":1") != NULL);
    CHECK_INT(IN_NS("stats", "--shard", "3"), 2);
    CHECK(strstr(cli_err_, "shard 3: namespace ") != NULL && strstr(cli_err_, "has 3 shards"));
    CHECK_INT(IN_NS("stats", "--shard", "x"), 2);
    CHECK_INT(IN_NS("shards", "extra"), 2);
    char *after = dump_all();
    CHECK_STR(after, before);
    free(after);
    free(before);
    cleanup();
}

static void an_unsharded_namespace_has_one_shard_and_no_new_key(void)
{
    tl_unique_ns("cu", ns_, sizeof ns_);
    snprintf(shard1_, sizeof shard1_, "{%s.1}", ns_);
    snprintf(shard2_, sizeof shard2_, "{%s.2}", ns_);
    tl_do(rc_, "SADD %s:known_jobs a", ns_);
    char *before = dump_all();
    CHECK_INT(IN_NS("shards"), 0);
    char want[1024];
    snprintf(want, sizeof want,
             "1 shard (no record: the namespace is not sharded).\n"
             "\n"
             "SHARD  NAMESPACE%*s  QUEUED  RUNNING  RETRY  SCHEDULED  DEAD  POOLS\n"
             "0      %s       0        0      0          0     0      0\n"
             "total  %*s       0        0      0          0     0      0\n",
             (int)strlen(ns_) - 9, "", ns_, (int)strlen(ns_), "");
    CHECK_STR(cli_out_, want);
    CHECK_INT(IN_NS("stats", "--shard", "0", "--days", "1", "--json"), 0);
    CHECK_INT(IN_NS("stats", "--shard", "1"), 2);
    char *after = dump_all();
    CHECK_STR(after, before);
    free(after);
    free(before);
    cleanup();
}

/* A damaged record is named, with exit status 2, and left as it is. */
static void a_damaged_record_is_named(void)
{
    tl_unique_ns("cx", ns_, sizeof ns_);
    snprintf(shard1_, sizeof shard1_, "{%s.1}", ns_);
    snprintf(shard2_, sizeof shard2_, "{%s.2}", ns_);
    tl_do(rc_, "HSET %s:cwork:shards count 0", ns_);
    CHECK_INT(IN_NS("shards"), 2);
    CHECK(strstr(cli_err_, ":cwork:shards is damaged: its count \"0\"") != NULL);
    CHECK_INT(IN_NS("queues"), 2);
    char *after = dump_all();
    char want[256];
    snprintf(want, sizeof want, "%s:cwork:shards hash count=0\n", ns_);
    CHECK_STR(after, want);
    free(after);
    cleanup();
}

/* cwork shards grow S and finish (§27.5): the record changed once, the grow's progress
 * shown, the end refused until the forwarding window has passed (its start set back by
 * hand rather than waited for), bad counts refused with exit status 2. */
static void grow_and_finish(void)
{
    tl_unique_ns("cg", ns_, sizeof ns_);
    snprintf(shard1_, sizeof shard1_, "{%s.1}", ns_);
    snprintf(shard2_, sizeof shard2_, "{%s.2}", ns_);
    tl_do(rc_, "HSET %s:cwork:shards count 2 hash fnv1a64-jump created 1700000000", ns_);
    CHECK_INT(IN_NS("shards", "grow", "3"), 0);
    CHECK(strstr(cli_out_, "grown from 2 to 3 shards") != NULL);
    redisReply *r = tl_cmd(rc_, "HMGET %s:cwork:shards count from homes", ns_);
    CHECK(r->elements == 3 && r->element[0]->str && r->element[1]->str && r->element[2]->str);
    if (r->elements == 3 && r->element[2]->str) {
        CHECK_STR(r->element[0]->str, "3");
        CHECK_STR(r->element[1]->str, "2");
        CHECK_STR(r->element[2]->str, "2");
    }
    freeReplyObject(r);
    CHECK_INT(IN_NS("shards", "grow", "3"), 0);
    CHECK(strstr(cli_out_, "already has 3 shards: nothing changed") != NULL);
    CHECK_INT(IN_NS("shards", "grow", "2"), 2);
    CHECK(strstr(cli_err_, "cannot shrink") != NULL);
    CHECK_INT(IN_NS("shards", "grow", "x"), 2);
    CHECK_INT(IN_NS("shards", "grow"), 2);
    CHECK_INT(IN_NS("shards", "grow", "5000"), 2);
    CHECK_INT(IN_NS("shards", "shrink"), 2);
    CHECK_INT(IN_NS("shards"), 0);
    CHECK(strstr(cli_out_, "Growing from 2 to 3 shards (shard 2 is new: see its POOLS)") != NULL);
    CHECK(strstr(cli_out_, "0 unique guards, 0 open batches") != NULL);
    CHECK(strstr(cli_out_, "Not ready to finish yet.") != NULL);
    CHECK_INT(IN_NS("shards", "--json"), 0);
    CHECK(strstr(cli_out_, "\"homes\":2,\"from\":2,\"grow\":{\"guards\":0,\"batches\":0,") != NULL);
    CHECK(strstr(cli_out_, "\"finishable\":false}") != NULL);
    CHECK_INT(IN_NS("shards", "finish"), 2);
    CHECK(strstr(cli_err_, "cannot end yet") != NULL);
    tl_do(rc_, "HSET %s:cwork:shards grown 1700000000", ns_); /* the window has passed */
    CHECK_INT(IN_NS("shards", "finish"), 0);
    CHECK(strstr(cli_out_, "the grow is finished (3 shards)") != NULL);
    char *after = dump_all();
    char want[512];
    snprintf(want, sizeof want,
             "%s:cwork:shards hash count=3 | created=1700000000 | grown=1700000000 | "
             "hash=fnv1a64-jump | homes=2\n",
             ns_);
    CHECK_STR(after, want);
    free(after);
    CHECK_INT(IN_NS("shards"), 0);
    CHECK(strstr(cli_out_, "Names (pinned types, periodic jobs) route by 2 shards.") != NULL);
    cleanup();
}

int main(void)
{
    rc_ = tl_redis_connect();
    RUN(shards_shows_each_shard_and_the_total);
    RUN(an_unsharded_namespace_has_one_shard_and_no_new_key);
    RUN(a_damaged_record_is_named);
    RUN(grow_and_finish);
    redisFree(rc_);
    return tl_finish();
}
