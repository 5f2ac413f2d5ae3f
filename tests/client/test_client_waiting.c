/* The admin client's deleting of single waiting jobs (cwork_client_delete_waiting),
 * against a real Redis: the namespace is written by hand (Go's bytes, cjson's bytes,
 * damaged entries), the queue moves as pools and producers would move it between the
 * listing and the delete, and the whole namespace is checked afterwards: exactly the
 * jobs asked for are gone, every other byte is as it was. */
#include "client_testutil.h"

/* ---------------------------------------------------------------- expected dumps */

/* dump with element `index` (0 = leftmost) of the list on the line starting with
 * "<ns>:<suffix> list " removed (the line goes when it was the only one). The test
 * data never holds " | " inside an element. malloc'd. */
static char *without_element(const char *dump, const char *suffix, size_t index)
{
    char head[128];
    snprintf(head, sizeof head, "%s:%s list ", ns_, suffix);
    const char *line = strstr(dump, head);
    CHECK(line != NULL && (line == dump || line[-1] == '\n'));
    if (!line) return strdup(dump);
    const char *end = strchr(line, '\n');
    const char *p = line + strlen(head);
    /* find element `index`: [from, to) */
    const char *from = p;
    for (size_t i = 0; i < index && from; i++) {
        const char *sep = strstr(from, " | ");
        from = sep && sep < end ? sep + 3 : NULL;
    }
    CHECK(from != NULL);
    if (!from) return strdup(dump);
    const char *sep = strstr(from, " | ");
    const char *to = sep && sep < end ? sep : end;
    char *out = malloc(strlen(dump) + 1);
    size_t n = 0;
    if (from == p && to == end) { /* the only element: the key goes */
        memcpy(out, dump, (size_t)(line - dump));
        n = (size_t)(line - dump);
        strcpy(out + n, end + 1);
        return out;
    }
    if (to == end) { /* the last: its separator before it goes */
        n = (size_t)(from - 3 - dump);
        memcpy(out, dump, n);
    } else { /* the one after goes with it */
        n = (size_t)(from - dump);
        memcpy(out, dump, n);
        to += 3;
    }
    strcpy(out + n, to);
    return out;
}

/* dump without the line that starts with "<ns>:<prefix>". malloc'd. */
static char *without_line(const char *dump, const char *prefix)
{
    char head[256];
    snprintf(head, sizeof head, "%s:%s", ns_, prefix);
    const char *line = strstr(dump, head);
    CHECK(line != NULL && (line == dump || line[-1] == '\n'));
    if (!line) return strdup(dump);
    const char *end = strchr(line, '\n');
    char *out = malloc(strlen(dump) + 1);
    memcpy(out, dump, (size_t)(line - dump));
    strcpy(out + (line - dump), end + 1);
    return out;
}

/* Takes over want (frees it) and compares the namespace's dump with it. */
static void check_now_at(int line, char *want)
{
    char *got = dump_now();
    if (strcmp(got, want) != 0)
        tl_fail(__FILE__, line, "namespace dump\n   got:\n%s  want:\n%s", got, want);
    free(got);
    free(want);
}
#define CHECK_NOW(want) check_now_at(__LINE__, want)

/* One listed job. */
static cwork_waiting_ref at_place(const char *id, int64_t place)
{
    return (cwork_waiting_ref){id, place};
}

/* LPUSH of many elements in one command: "<fmt with %d>" for i in [from, to). */
static void push_many(const char *suffix, int from, int to, const char *fmt)
{
    size_t n = (size_t)(to - from) + 2;
    const char **argv = malloc(n * sizeof *argv);
    size_t *lens = malloc(n * sizeof *lens);
    char **bufs = malloc(n * sizeof *bufs);
    char key[128];
    snprintf(key, sizeof key, "%s:%s", ns_, suffix);
    argv[0] = "LPUSH";
    argv[1] = key;
    for (int i = from; i < to; i++) {
        size_t k = (size_t)(i - from) + 2;
        bufs[k] = malloc(256);
        snprintf(bufs[k], 256, fmt, i, i);
        argv[k] = bufs[k];
    }
    for (size_t k = 0; k < n; k++)
        lens[k] = strlen(argv[k]);
    redisReply *r = redisCommandArgv(rc_, (int)n, argv, lens);
    CHECK(r && r->type == REDIS_REPLY_INTEGER);
    if (r) freeReplyObject(r);
    for (size_t k = 2; k < n; k++)
        free(bufs[k]);
    free(bufs);
    free(argv);
    free(lens);
}

/* ---------------------------------------------------------------- one job */

/* The queue of x, left (newest) to right (next to run), and what shares the namespace. */
static void seed_x(void)
{
    cmd("SADD %s:known_jobs x y", ns_);
    cmd("RPUSH %s:jobs:x %s", ns_, "{\"name\":\"x\",\"id\":\"j5\",\"t\":5,\"args\":{\"n\":5}}");
    cmd("RPUSH %s:jobs:x %s", ns_, "not json \"id\":\"j3\"");
    /* cjson's bytes (a requeued job), a unique one */
    cmd("RPUSH %s:jobs:x %s", ns_,
        "{\"unique\":true,\"args\":{\"object_id_\":\"123\"},\"id\":\"j4\",\"name\":\"x\",\"t\":4}");
    cmd("RPUSH %s:jobs:x %s", ns_,
        "{\"name\":\"x\",\"id\":\"j3\",\"t\":3,\"args\":{\"id\":\"j2\"}}"); /* j2 in its args */
    cmd("RPUSH %s:jobs:x %s", ns_, "{\"name\":\"x\",\"id\":\"j2\",\"t\":2,\"args\":{}}");
    cmd("RPUSH %s:jobs:x %s", ns_, "{\"name\":\"x\",\"id\":\"j1\",\"t\":1,\"args\":{}}");
    cmd("LPUSH %s:jobs:y %s", ns_, "{\"name\":\"y\",\"id\":\"j2\",\"t\":2,\"args\":{}}");
    /* (no TTL: one running down would make the dumps differ) */
    cmd("SET %s:unique:x:%s 1", ns_, "{\"object_id_\":\"123\"}\n");
    cmd("ZADD %s:retry 100 %s", ns_, "{\"name\":\"x\",\"id\":\"j2\",\"t\":1}");
    cmd("ZADD %s:dead 100 %s", ns_, "{\"name\":\"x\",\"id\":\"j3\",\"t\":1}");
}

static void delete_one_takes_exactly_that_entry(void)
{
    cwork_client *cl = fresh("dw1");
    seed_x();
    char *before = dump_now();
    cwork_waiting_ref j2 = at_place("j2", 1); /* listed second: the next to run is j1 */
    size_t deleted = 9, unchanged = 9;
    CHECK_INT(cwork_client_delete_waiting(cl, "x", &j2, 1, &deleted, &unchanged, NULL), 0);
    CHECK_INT(deleted, 1);
    CHECK_INT(unchanged, 0);
    /* j2 of queue x only: not the job whose args name j2, not y's j2, nor the retry one */
    char *want = without_element(before, "jobs:x", 4);
    CHECK_NOW(strdup(want));
    /* again: gone, and nothing else changes */
    cwork_error err = {0};
    CHECK_INT(cwork_client_delete_waiting(cl, "x", &j2, 1, &deleted, &unchanged, &err),
              CWORK_ENOTFOUND);
    CHECK_INT(deleted, 0);
    CHECK_INT(unchanged, 1);
    CHECK_STR(err.message,
              "job j2 is no longer waiting in queue x near where it was listed: a pool may have "
              "taken it to run");
    CHECK_NOW(strdup(want));
    /* the unique one: its guard goes with it; of unknown place, the whole queue is searched */
    cwork_waiting_ref j4 = at_place("j4", -1);
    CHECK_INT(cwork_client_delete_waiting(cl, "x", &j4, 1, &deleted, NULL, NULL), 0);
    char *w2 = without_element(want, "jobs:x", 2);
    CHECK_NOW(without_line(w2, "unique:x:"));
    CHECK_INT(cwork_client_delete_waiting(cl, "x", &j4, 1, NULL, NULL, &err), CWORK_ENOTFOUND);
    CHECK_STR(err.message, "no job j4 is waiting in queue x");
    /* the undecodable entry that mentions j3 stays; the job j3 goes */
    cwork_waiting_ref j3 = at_place("j3", 1);
    CHECK_INT(cwork_client_delete_waiting(cl, "x", &j3, 1, NULL, NULL, NULL), 0);
    char *w3 = without_element(w2, "jobs:x", 2);
    CHECK_NOW(without_line(w3, "unique:x:"));
    free(before);
    free(want);
    free(w2);
    free(w3);
    done(cl);
}

/* Between the listing and the delete, pools take jobs from the front and producers add
 * some at the back: the job is found where it moved to, and the one a pool took is
 * reported, never another removed in its place. */
static void the_queue_moves_between_listing_and_delete(void)
{
    cwork_client *cl = fresh("dwm");
    /* left to right m39 … m0: m0 runs next (place 0), mK is at place K */
    push_many("jobs:m", 0, 40, "{\"name\":\"m\",\"id\":\"m%d\",\"t\":%d,\"args\":{}}");
    /* listed: m9 at place 9, m1 at 1, m19 at 19; then a pool takes m0, m1 and m2 ... */
    for (int i = 0; i < 3; i++)
        cmd("RPOPLPUSH %s:jobs:m %s:jobs:m:a1b2:inprogress", ns_, ns_);
    /* ... and producers add m40 … m44 */
    push_many("jobs:m", 40, 45, "{\"name\":\"m\",\"id\":\"m%d\",\"t\":%d,\"args\":{}}");
    char *before = dump_now();
    cwork_waiting_ref refs[] = {at_place("m9", 9), at_place("m1", 1), at_place("m19", 19)};
    size_t deleted = 0, unchanged = 0;
    cwork_error err = {0};
    CHECK_INT(cwork_client_delete_waiting(cl, "m", refs, 3, &deleted, &unchanged, &err),
              CWORK_ENOTFOUND);
    CHECK_INT(deleted, 2);
    CHECK_INT(unchanged, 1);
    CHECK(strstr(err.message, "job m1 is no longer waiting in queue m near") == err.message);
    /* left to right now m44 … m40 (indices 0–4), then mK at 5 + 39 - K; the in-progress
     * list as the pool left it */
    char *w = without_element(before, "jobs:m", 5 + 39 - 9);
    CHECK_NOW(without_element(w, "jobs:m", 5 + 39 - 19));
    free(w);
    free(before);
    done(cl);
}

/* Two entries with one id: the one nearest the listed place goes. */
static void of_two_entries_with_one_id_the_nearest_to_the_listed_place_goes(void)
{
    cwork_client *cl = fresh("dwd");
    push_many("jobs:d", 0, 10, "{\"name\":\"d\",\"id\":\"d%d\",\"t\":%d}");
    cmd("LINSERT %s:jobs:d BEFORE %s %s", ns_, "{\"name\":\"d\",\"id\":\"d7\",\"t\":7}",
        "{\"name\":\"d\",\"id\":\"d1\",\"t\":100}");
    /* left to right: d9 d8 [d1 t=100] d7 d6 d5 d4 d3 d2 d1 d0; places from the right */
    char *before = dump_now();
    cwork_waiting_ref near = at_place("d1", 1); /* the one seen last from the left */
    CHECK_INT(cwork_client_delete_waiting(cl, "d", &near, 1, NULL, NULL, NULL), 0);
    char *w = without_element(before, "jobs:d", 9);
    CHECK_NOW(strdup(w));
    cwork_waiting_ref far = at_place("d1", 7);
    CHECK_INT(cwork_client_delete_waiting(cl, "d", &far, 1, NULL, NULL, NULL), 0);
    CHECK_NOW(without_element(w, "jobs:d", 2));
    free(w);
    free(before);
    done(cl);
}

/* Ids a text search cannot find as they are (cjson's "\/", quotes, non-ASCII, empty):
 * every entry is decoded then. */
static void ids_of_every_spelling(void)
{
    cwork_client *cl = fresh("dws");
    cmd("RPUSH %s:jobs:s %s", ns_, "{\"name\":\"s\",\"id\":\"p:s:*\\/5 * * * *:1\",\"t\":1}");
    cmd("RPUSH %s:jobs:s %s", ns_, "{\"name\":\"s\",\"id\":\"q\\\"uote\",\"t\":1}");
    cmd("RPUSH %s:jobs:s %s", ns_, "{\"name\":\"s\",\"id\":\"caf\\u00e9\",\"t\":1}");
    cmd("RPUSH %s:jobs:s %s", ns_, "{\"name\":\"s\",\"id\":\"\",\"t\":1}");
    cmd("RPUSH %s:jobs:s %s", ns_, "{\"name\" : \"s\", \"id\" : \"spaced\", \"t\" : 1}");
    cmd("RPUSH %s:jobs:s %s", ns_, "{\"name\":\"s\",\"id\":\"last\",\"t\":1}");
    char *d0 = dump_now();
    cwork_waiting_ref slash = at_place("p:s:*/5 * * * *:1", 5);
    CHECK_INT(cwork_client_delete_waiting(cl, "s", &slash, 1, NULL, NULL, NULL), 0);
    char *d1 = without_element(d0, "jobs:s", 0);
    CHECK_NOW(strdup(d1));
    cwork_waiting_ref spaced = at_place("spaced", 1); /* a producer's "id" : "…" */
    CHECK_INT(cwork_client_delete_waiting(cl, "s", &spaced, 1, NULL, NULL, NULL), 0);
    CHECK_NOW(without_element(d1, "jobs:s", 3));
    cwork_waiting_ref more[] = {at_place("", 1), at_place("caf\xc3\xa9", 2),
                                at_place("q\"uote", 3)};
    size_t deleted = 0;
    CHECK_INT(cwork_client_delete_waiting(cl, "s", more, 3, &deleted, NULL, NULL), 0);
    CHECK_INT(deleted, 3);
    CHECK_DUMP("NS:jobs:s list {\"name\":\"s\",\"id\":\"last\",\"t\":1}\n");
    free(d0);
    free(d1);
    done(cl);
}

/* ---------------------------------------------------------------- long queues */

/* A job deep in a long queue: found by a walk of 1000-entry parts; a listed job that
 * moved further than the look-back is out of reach, and nothing changes. */
static void long_queues_are_searched_in_bounded_parts(void)
{
    cwork_client *cl = fresh("dwl");
    push_many("jobs:l", 0, 2500, "{\"name\":\"l\",\"id\":\"l%d\",\"t\":%d}");
    char *before = dump_now();
    /* l5 is at index 2494 from the left; l2400 at 99; l1234 at 1265 */
    cwork_waiting_ref refs[] = {at_place("l5", -1), at_place("l2400", -1), at_place("l1234", -1),
                                at_place("nope", -1)};
    size_t deleted = 0, unchanged = 0;
    CHECK_INT(cwork_client_delete_waiting(cl, "l", refs, 4, &deleted, &unchanged, NULL),
              CWORK_ENOTFOUND);
    CHECK_INT(deleted, 3);
    CHECK_INT(unchanged, 1);
    char *a = without_element(before, "jobs:l", 2494);
    char *b = without_element(a, "jobs:l", 1265);
    CHECK_NOW(without_element(b, "jobs:l", 99));
    free(a);
    free(b);
    free(before);
    done(cl);

    cl = fresh("dwr");
    push_many("jobs:r", 0, CWORK_WAITING_LOOK_BACK + 1500,
              "{\"name\":\"r\",\"id\":\"r%d\",\"t\":%d}");
    char *d0 = dump_now();
    /* r0 is next to run (place 0) but listed beyond the look-back: out of reach */
    cwork_waiting_ref far = at_place("r0", CWORK_WAITING_LOOK_BACK + 1);
    CHECK_INT(cwork_client_delete_waiting(cl, "r", &far, 1, NULL, NULL, NULL), CWORK_ENOTFOUND);
    CHECK_NOW(strdup(d0));
    /* listed where it is: found */
    cwork_waiting_ref here = at_place("r0", 0);
    CHECK_INT(cwork_client_delete_waiting(cl, "r", &here, 1, NULL, NULL, NULL), 0);
    CHECK_NOW(without_element(d0, "jobs:r", CWORK_WAITING_LOOK_BACK + 1499));
    free(d0);
    done(cl);
}

/* ---------------------------------------------------------------- damaged and bad input */

static void a_queue_key_of_another_type_is_left_alone(void)
{
    cwork_client *cl = fresh("dwt");
    cmd("HSET %s:jobs:h id j1", ns_);
    cmd("SET %s:jobs:s %s", ns_, "{\"name\":\"s\",\"id\":\"j1\",\"t\":1}");
    char *before = dump_now();
    cwork_waiting_ref j1 = at_place("j1", 0), j1_anywhere = at_place("j1", -1);
    cwork_error err = {0};
    size_t deleted = 9, unchanged = 9;
    CHECK_INT(cwork_client_delete_waiting(cl, "h", &j1, 1, &deleted, &unchanged, &err),
              CWORK_ETYPE);
    CHECK(strstr(err.message, ":jobs:h holds a hash, not a queue: left as it is") != NULL);
    CHECK_INT(deleted, 0);
    CHECK_INT(unchanged, 0);
    CHECK_INT(cwork_client_delete_waiting(cl, "s", &j1_anywhere, 1, NULL, NULL, &err), CWORK_ETYPE);
    CHECK(strstr(err.message, ":jobs:s holds a string, not a queue: left as it is") != NULL);
    /* a missing queue: nothing there */
    CHECK_INT(cwork_client_delete_waiting(cl, "none", &j1, 1, NULL, NULL, &err), CWORK_ENOTFOUND);
    CHECK_NOW(strdup(before));
    CHECK_INT(cwork_client_delete_waiting(cl, NULL, &j1, 1, NULL, NULL, &err), CWORK_EINVAL);
    CHECK_INT(cwork_client_delete_waiting(cl, "h", NULL, 1, NULL, NULL, &err), CWORK_EINVAL);
    cwork_waiting_ref no_id = at_place(NULL, 0);
    CHECK_INT(cwork_client_delete_waiting(cl, "h", &no_id, 1, NULL, NULL, &err), CWORK_EINVAL);
    CHECK_INT(cwork_client_delete_waiting(cl, "h", NULL, 0, &deleted, NULL, &err), 0);
    CHECK_INT(deleted, 0);
    CHECK_NOW(before);
    done(cl);
}

static void unreachable_redis_is_an_error_value(void)
{
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.connect_timeout_ms = 200;
    o.checkout_timeout_ms = 200;
    cwork_redis *dead = cwork_redis_new("redis://127.0.0.1:1", &o, NULL);
    cwork_client *cl = cwork_client_new(dead, "x", NULL);
    cwork_error err = {0};
    cwork_waiting_ref j = at_place("j", 0);
    size_t deleted = 7;
    CHECK(cwork_client_delete_waiting(cl, "x", &j, 1, &deleted, NULL, &err) < 0);
    CHECK_INT(deleted, 0);
    cwork_client_free(cl);
    cwork_redis_free(dead);
}

int main(void)
{
    rc_ = tl_redis_connect();
    redis_ = cwork_redis_new(tl_redis_url(), NULL, NULL);
    RUN(delete_one_takes_exactly_that_entry);
    RUN(the_queue_moves_between_listing_and_delete);
    RUN(of_two_entries_with_one_id_the_nearest_to_the_listed_place_goes);
    RUN(ids_of_every_spelling);
    RUN(long_queues_are_searched_in_bounded_parts);
    RUN(a_queue_key_of_another_type_is_left_alone);
    RUN(unreachable_redis_is_an_error_value);
    cwork_redis_free(redis_);
    redisFree(rc_);
    return tl_finish();
}
