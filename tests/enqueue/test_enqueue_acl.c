/* All or nothing under every ACL: an enqueuer whose Redis user lacks one permission of
 * README.md's enqueuer line gets an error naming the command and finds the namespace
 * exactly as it was, on every enqueue path: single, delayed, unique, unique delayed,
 * ByKey, a batch (plain, delayed and unique entries), a tracked batch (open, join, seal)
 * and `cwork enqueue --bulk`, which reports exactly the lines it wrote. The scripts ask
 * the ACL before their first write (src/scripts/acl_lib.lua). */
#include "cli_testutil.h"
#include "cwork.h"

#include <ctype.h>

static tl_server srv;
static redisContext *admin;
static char enqueuer_line[2048];

/* README.md's "ACL SETUSER cwork-enqueuer …" line. */
static int load_enqueuer_line(void)
{
    const char *src = getenv("CWORK_SOURCE_DIR");
    char path[512];
    snprintf(path, sizeof path, "%s/README.md", src ? src : ".");
    char *readme = tl_read_file(path, NULL);
    if (!readme) return -1;
    const char *p = strstr(readme, "\nACL SETUSER cwork-enqueuer ");
    int rc = -1;
    if (p) {
        size_t n = strcspn(++p, "\n");
        if (n < sizeof enqueuer_line) {
            memcpy(enqueuer_line, p, n);
            enqueuer_line[n] = '\0';
            rc = 0;
        }
    }
    free(readme);
    return rc;
}

/* The user "acl-test" as README's line says, for namespace ns, without `drop`. */
static void set_user(const char *ns, const char *drop)
{
    char line[4096];
    snprintf(line, sizeof line, "%s", enqueuer_line);
    const char *argv[256];
    static char words[256][128];
    int argc = 0;
    for (char *tok = strtok(line, " "); tok && argc < 256; tok = strtok(NULL, " ")) {
        if (strcmp(tok, drop) == 0) continue;
        char *w = words[argc];
        const char *m = strstr(tok, "myapp");
        if (m)
            snprintf(w, 128, "%.*s%s%s", (int)(m - tok), tok, ns, m + 5);
        else if (strcmp(tok, ">CHANGE-ME") == 0)
            snprintf(w, 128, ">pw");
        else if (strcmp(tok, "cwork-enqueuer") == 0)
            snprintf(w, 128, "acl-test");
        else
            snprintf(w, 128, "%s", tok);
        argv[argc++] = w;
    }
    freeReplyObject(tl_cmd(admin, "ACL DELUSER acl-test"));
    redisReply *r = redisCommandArgv(admin, argc, argv, NULL);
    if (!r || r->type == REDIS_REPLY_ERROR)
        tl_fail(__FILE__, __LINE__, "ACL SETUSER: %s", r ? r->str : "I/O error");
    freeReplyObject(r);
}

static char user_url[128];

static cwork_redis *as_user(void)
{
    snprintf(user_url, sizeof user_url, "redis://acl-test:pw@127.0.0.1:%d", srv.port);
    cwork_error err = {0};
    cwork_redis *r = cwork_redis_new(user_url, NULL, &err);
    if (!r) tl_fail(__FILE__, __LINE__, "cwork_redis_new: %s", err.message);
    return r;
}

/* The command a permission allows: "+lpush" → "lpush". */
static const char *command_of(const char *perm)
{
    return perm + 1;
}

/* One enqueue path, on a fresh enqueuer (its known_jobs cache cold, so the paths that
 * register the name run their script). */
typedef int (*path_fn)(cwork_enqueuer *enq, cwork_error *err);

static cwork_args *some_args(int i)
{
    cwork_args *a = cwork_args_new();
    cwork_args_set_int64(a, "i", i);
    return a;
}

#define SIMPLE_PATH(fname, call)                                                                   \
    static int fname(cwork_enqueuer *enq, cwork_error *err)                                        \
    {                                                                                              \
        cwork_args *args = some_args(1), *key = some_args(2);                                      \
        (void)key;                                                                                 \
        int rc = call;                                                                             \
        cwork_args_free(args);                                                                     \
        cwork_args_free(key);                                                                      \
        return rc;                                                                                 \
    }
SIMPLE_PATH(path_enqueue, cwork_enqueue(enq, "plain", args, NULL, err))
SIMPLE_PATH(path_enqueue_in, cwork_enqueue_in(enq, "later", 60, args, NULL, err))
SIMPLE_PATH(path_unique, cwork_enqueue_unique(enq, "once", args, NULL, err))
SIMPLE_PATH(path_unique_in, cwork_enqueue_unique_in(enq, "once", 60, args, NULL, err))
SIMPLE_PATH(path_by_key, cwork_enqueue_unique_by_key(enq, "bykey", args, key, NULL, err))
SIMPLE_PATH(path_by_key_in, cwork_enqueue_unique_in_by_key(enq, "bykey", 60, args, key, NULL, err))

static int path_batch(cwork_enqueuer *enq, cwork_error *err)
{
    cwork_batch *b = cwork_batch_new(enq);
    for (int i = 0; i < 4; i++) {
        cwork_args *a = some_args(i);
        int flags = (i == 1 ? CWORK_BATCH_IN : 0) | (i == 2 ? CWORK_BATCH_UNIQUE : 0);
        /* (the first add reads the namespace's shard record, PROTOCOL §27.3: without the
         * permission that takes, the add is the refusal) */
        int rc = cwork_batch_add(b, i == 3 ? "other" : "plain", a, i == 1 ? 60 : 0, flags, err);
        cwork_args_free(a);
        if (rc) {
            cwork_batch_free(b);
            return rc;
        }
    }
    int rc = cwork_enqueue_batch(b, err);
    cwork_batch_free(b);
    return rc;
}

/* A tracked batch, step by step: each step that fails must leave the namespace as the
 * step before left it. */
static int path_tracked(cwork_enqueuer *enq, const char *ns, cwork_error *err)
{
    char id[25];
    int rc = cwork_batch_open(enq, CWORK_BATCH_ON_COMPLETE, "tick", NULL, id, err);
    if (rc < 0) return rc;
    char *before = tl_ns_dump(admin, ns);
    cwork_batch *b = cwork_batch_new(enq);
    CHECK_INT(cwork_batch_join(b, id, err), 0);
    CHECK_INT(cwork_batch_add(b, "member", NULL, 0, 0, err), 0);
    CHECK_INT(cwork_batch_add(b, "member", NULL, 30, CWORK_BATCH_IN, err), 0);
    rc = cwork_enqueue_batch(b, err);
    cwork_batch_free(b);
    if (rc == 0) {
        free(before);
        before = tl_ns_dump(admin, ns);
        rc = cwork_batch_seal(enq, id, err);
    }
    if (rc < 0) {
        char *after = tl_ns_dump(admin, ns);
        CHECK_STR(after, before);
        free(after);
    }
    free(before);
    return rc;
}

static const struct {
    const char *name;
    path_fn fn;
} paths[] = {
    {"enqueue", path_enqueue},      {"enqueue_in", path_enqueue_in},
    {"unique", path_unique},        {"unique_in", path_unique_in},
    {"unique_by_key", path_by_key}, {"unique_in_by_key", path_by_key_in},
    {"batch", path_batch},
};

/* Whether path (an index into paths, or -1 for the tracked batch) must fail without
 * permission perm: what the test knows each path writes. */
static int must_fail(const char *path, const char *perm)
{
    int delayed = strstr(path, "_in") != NULL;
    int unique = strncmp(path, "unique", 6) == 0;
    if (!strcmp(perm, "+sadd") || !strcmp(perm, "+type") || !strcmp(perm, "+evalsha"))
        return 1; /* a cold cache registers every name, through a script */
    if (!strcmp(perm, "+lpush")) return !delayed;
    if (!strcmp(perm, "+zadd")) return delayed || !strcmp(path, "batch");
    if (!strcmp(perm, "+set")) return unique;
    if (!strcmp(perm, "+hset") || !strcmp(perm, "+hincrby") || !strcmp(perm, "+hget") ||
        !strcmp(perm, "+expire") || !strcmp(perm, "+hmget"))
        return !strcmp(path, "tracked");
    return 0;
}

static void each_permission_on_every_path(void)
{
    char line[2048];
    snprintf(line, sizeof line, "%s", enqueuer_line);
    char perms[64][32];
    int nperms = 0;
    for (char *tok = strtok(line, " "); tok && nperms < 64; tok = strtok(NULL, " "))
        if (tok[0] == '+') snprintf(perms[nperms++], 32, "%s", tok);
    CHECK(nperms > 10);
    int refusals = 0;
    for (int p = 0; p < nperms; p++) {
        char ns[64];
        tl_unique_ns("acl-all", ns, sizeof ns);
        set_user(ns, perms[p]);
        cwork_redis *r = as_user();
        /* something already there, so that "as it was" is not merely "empty" */
        tl_do(admin, "LPUSH %s:jobs:seed {\"name\":\"seed\",\"id\":\"x\",\"t\":1}", ns);
        tl_do(admin, "SADD %s:known_jobs seed", ns);
        size_t n = sizeof paths / sizeof *paths;
        for (size_t i = 0; i <= n; i++) {
            const char *name = i < n ? paths[i].name : "tracked";
            cwork_error err = {0};
            cwork_enqueuer *enq = cwork_enqueuer_new(r, ns, &err);
            CHECK(enq != NULL);
            char *before = tl_ns_dump(admin, ns);
            int rc = i < n ? paths[i].fn(enq, &err) : path_tracked(enq, ns, &err);
            char *after = tl_ns_dump(admin, ns);
            if (rc < 0) {
                refusals++;
                if (i < n && strcmp(after, before) != 0)
                    tl_fail(__FILE__, __LINE__, "without %s, %s wrote:\nbefore:\n%s\nafter:\n%s",
                            perms[p], name, before, after);
                char quoted[40];
                snprintf(quoted, sizeof quoted, "'%s'", command_of(perms[p]));
                if (!strstr(err.message, quoted))
                    tl_fail(__FILE__, __LINE__, "without %s, %s: message names no %s: %s", perms[p],
                            name, quoted, err.message);
            } else if (must_fail(name, perms[p])) {
                tl_fail(__FILE__, __LINE__, "without %s, %s succeeded (%d)", perms[p], name, rc);
            }
            free(before);
            free(after);
            cwork_enqueuer_free(enq);
        }
        cwork_redis_free(r);
        tl_ns_delete(admin, ns);
    }
    CHECK(refusals > 20);
}

/* `cwork enqueue --bulk`: a refused round trip writes nothing of itself, and the summary
 * says exactly which lines were written. */
static void bulk_reports_what_it_wrote(void)
{
    char ns[64];
    tl_unique_ns("acl-bulk", ns, sizeof ns);
    set_user(ns, "+zadd");
    cwork_redis_free(as_user()); /* (sets user_url) */
    tl_do(admin, "SADD %s:known_jobs plain", ns);
    char *before = tl_ns_dump(admin, ns);
    const char *mixed = "{\"name\":\"plain\"}\n{\"name\":\"plain\",\"in\":60}\n";
    int st = cli_run(NULL, mixed,
                     (const char *const[]){"enqueue", "--bulk", "--redis", user_url, "--ns", ns,
                                           "--quiet", NULL});
    CHECK(st != 0);
    char *after = tl_ns_dump(admin, ns);
    CHECK_STR(after, before);
    if (!strstr(cli_err_, "'zadd'") || !strstr(cli_err_, "0 jobs written") ||
        !strstr(cli_err_, "nothing was written"))
        tl_fail(__FILE__, __LINE__, "stderr: %s", cli_err_);
    free(before);
    free(after);

    /* Without +set, one job per round trip: the two plain lines are written, the unique
     * third is refused, and the summary says lines 1-2. */
    set_user(ns, "+set");
    const char *three =
        "{\"name\":\"plain\"}\n{\"name\":\"plain\"}\n{\"name\":\"plain\",\"unique\":true}\n";
    st = cli_run(NULL, three,
                 (const char *const[]){"enqueue", "--bulk", "--batch-size", "1", "--redis",
                                       user_url, "--ns", ns, "--quiet", NULL});
    CHECK(st != 0);
    if (!strstr(cli_err_, "'set'") || !strstr(cli_err_, "2 jobs written") ||
        !strstr(cli_err_, "lines 1-2 were written"))
        tl_fail(__FILE__, __LINE__, "stderr: %s", cli_err_);
    redisReply *r = tl_cmd(admin, "LLEN %s:jobs:plain", ns);
    CHECK_INT(r->integer, 2);
    freeReplyObject(r);
    r = tl_cmd(admin, "KEYS %s:unique:*", ns);
    CHECK_INT(r->elements, 0);
    freeReplyObject(r);
    tl_ns_delete(admin, ns);
}

int main(void)
{
    if (load_enqueuer_line() != 0) {
        fprintf(stderr, "README.md has no \"ACL SETUSER cwork-enqueuer\" line\n");
        return 1;
    }
    if (tl_server_start(&srv, 0) != 0) {
        fprintf(stderr, "cannot start a private redis-server\n");
        return 1;
    }
    admin = redisConnect("127.0.0.1", srv.port);
    redisReply *v = tl_cmd(admin, "EVAL %s 0", "return redis.acl_check_cmd and 1 or 0");
    int can_ask = v->type == REDIS_REPLY_INTEGER && v->integer == 1;
    freeReplyObject(v);
    if (!can_ask) {
        fprintf(stderr, "SKIP: this redis-server (before 7) cannot be asked about ACLs in a "
                        "script\n");
        redisFree(admin);
        tl_server_destroy(&srv);
        return TL_SKIP;
    }
    RUN(each_permission_on_every_path);
    RUN(bulk_reports_what_it_wrote);
    redisFree(admin);
    tl_server_destroy(&srv);
    return tl_finish();
}
