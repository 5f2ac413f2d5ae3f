/* The connection pool against a real Redis: threads, checkout timeouts, re-dialling,
 * scripts, pipelining, AUTH, SELECT, READONLY. Runs under TSan too. */
#include "redis.h"
#include "testlib.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static cw_redis_addr shared; /* the server of CWORK_TEST_REDIS_URL */

/* A pool on host:port with optional user-info, path and options' password. */
static cwork_redis *pool_at(const char *host, int port, const char *userinfo, const char *path,
                            int max, int checkout_ms, const char *password)
{
    char url[512];
    snprintf(url, sizeof url, "redis://%s%s%s:%d%s", userinfo ? userinfo : "", userinfo ? "@" : "",
             host, port, path ? path : "");
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.max_connections = max;
    o.checkout_timeout_ms = checkout_ms;
    o.password = password;
    cwork_error err = {0};
    cwork_redis *r = cwork_redis_new(url, &o, &err);
    if (!r) tl_fail(__FILE__, __LINE__, "cwork_redis_new(%s): %s", url, err.message);
    return r;
}

#define shared_pool(userinfo, path, max, checkout_ms, password)                                    \
    pool_at(shared.host, shared.port, userinfo, path, max, checkout_ms, password)
#define port_pool(port, userinfo, max, password)                                                   \
    pool_at("127.0.0.1", port, userinfo, NULL, max, 3000, password)

static long long conn_client_id(cw_conn *c)
{
    cwork_error err = {0};
    redisReply *r = NULL;
    cw_conn_commandf(c, &r, &err, "CLIENT ID");
    if (!r || r->type != REDIS_REPLY_INTEGER) {
        tl_fail(__FILE__, __LINE__, "CLIENT ID: %s", r ? "not an integer" : err.message);
        if (r) freeReplyObject(r);
        return -1;
    }
    long long id = r->integer;
    freeReplyObject(r);
    return id;
}

static redisContext *connect_port(int port)
{
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c || c->err) {
        fprintf(stderr, "cannot connect to 127.0.0.1:%d\n", port);
        exit(1);
    }
    return c;
}

/* ---------------------------------------------------------------- threads */

#define THREADS 8
#define ROUNDS 1500
#define MAX_IDS 64

typedef struct worker {
    cwork_redis *r;
    const char *key;
    int mode; /* 0: cw_redis_command, 1: checkout + command + checkin */
    int failures;
    char first_error[256];
    long long ids[MAX_IDS]; /* CLIENT IDs seen while holding a connection */
    int nids;
} worker;

static void *incr_worker(void *p)
{
    worker *w = p;
    const char *argv[] = {"INCR", w->key};
    size_t lens[] = {4, strlen(w->key)};
    for (int i = 0; i < ROUNDS; i++) {
        cwork_error err = {0};
        redisReply *reply = NULL;
        if (w->mode == 0) {
            cw_redis_command(w->r, 2, argv, lens, &reply, &err);
        } else {
            cw_conn *c;
            if (cw_redis_checkout(w->r, &c, &err) == 0) {
                cw_conn_command(c, 2, argv, lens, &reply, &err);
                if (i % 100 == 0 && w->nids < MAX_IDS) {
                    redisReply *id = NULL;
                    cw_conn_commandf(c, &id, &err, "CLIENT ID");
                    if (id && id->type == REDIS_REPLY_INTEGER) w->ids[w->nids++] = id->integer;
                    if (id) freeReplyObject(id);
                }
                cw_redis_checkin(w->r, c);
            }
        }
        if (!reply || reply->type != REDIS_REPLY_INTEGER) {
            if (!w->failures++) snprintf(w->first_error, sizeof w->first_error, "%s", err.message);
        }
        if (reply) freeReplyObject(reply);
    }
    return NULL;
}

static void threads_share_a_small_pool(void)
{
    char key[64];
    tl_unique_ns("pool", key, sizeof key);
    cwork_redis *r = shared_pool(NULL, NULL, 3, 30000, NULL);
    if (!r) return;
    pthread_t t[THREADS];
    worker w[THREADS];
    memset(w, 0, sizeof w);
    for (int i = 0; i < THREADS; i++) {
        w[i].r = r;
        w[i].key = key;
        w[i].mode = i % 2;
        CHECK_INT(pthread_create(&t[i], NULL, incr_worker, &w[i]), 0);
    }
    long long ids[THREADS * MAX_IDS];
    int nids = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        if (w[i].failures)
            tl_fail(__FILE__, __LINE__, "thread %d: %d failures, first: %s", i, w[i].failures,
                    w[i].first_error);
        for (int k = 0; k < w[i].nids; k++) {
            int seen = 0;
            for (int j = 0; j < nids; j++)
                seen |= ids[j] == w[i].ids[k];
            if (!seen) ids[nids++] = w[i].ids[k];
        }
    }
    CHECK(nids >= 1 && nids <= 3); /* never more connections than max_connections */
    redisContext *raw = tl_redis_connect();
    redisReply *v = tl_cmd(raw, "GET %s", key);
    CHECK(v->type == REDIS_REPLY_STRING);
    if (v->type == REDIS_REPLY_STRING) CHECK_INT(atoll(v->str), THREADS * ROUNDS);
    freeReplyObject(v);
    freeReplyObject(tl_cmd(raw, "DEL %s", key));
    redisFree(raw);
    cwork_redis_free(r);
}

/* ---------------------------------------------------------------- checkout timeout */

typedef struct waiter {
    cwork_redis *r;
    int rc;
} waiter;

static void *checkout_waiter(void *p)
{
    waiter *w = p;
    cw_conn *c;
    cwork_error err;
    w->rc = cw_redis_checkout(w->r, &c, &err);
    if (w->rc == 0) cw_redis_checkin(w->r, c);
    return NULL;
}

static void checkout_times_out_when_all_are_held(void)
{
    cwork_redis *r = shared_pool(NULL, NULL, 2, 300, NULL);
    if (!r) return;
    cw_conn *a, *b, *c;
    cwork_error err = {0};
    CHECK_INT(cw_redis_checkout(r, &a, &err), 0);
    CHECK_INT(cw_redis_checkout(r, &b, &err), 0);
    long long t0 = tl_now_ms();
    CHECK_INT(cw_redis_checkout(r, &c, &err), CWORK_ETIMEOUT);
    long long waited = tl_now_ms() - t0;
    CHECK(waited >= 200 && waited < 10000); /* ~300 ms; loosely */
    CHECK_INT(err.code, CWORK_ETIMEOUT);
    CHECK(strstr(err.message, "no free connection") != NULL);
    /* A command call says so too, with or without an error to fill. */
    const char *ping[] = {"PING"};
    redisReply *none = NULL;
    CHECK_INT(cw_redis_command(r, 1, ping, NULL, &none, NULL), CWORK_ETIMEOUT);
    CHECK(none == NULL);

    /* A connection given back goes to the next checkout (LIFO: the same one). */
    cw_redis_checkin(r, a);
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    CHECK(c == a);

    /* A waiter is woken by a checkin, not by its deadline. */
    cwork_redis *slow = shared_pool(NULL, NULL, 1, 20000, NULL);
    cw_conn *held;
    CHECK_INT(cw_redis_checkout(slow, &held, &err), 0);
    waiter w = {slow, -99};
    pthread_t t;
    t0 = tl_now_ms();
    pthread_create(&t, NULL, checkout_waiter, &w);
    tl_sleep_ms(100);
    cw_redis_checkin(slow, held);
    pthread_join(t, NULL);
    CHECK_INT(w.rc, 0);
    CHECK(tl_now_ms() - t0 < 15000);
    cwork_redis_free(slow);

    cw_redis_checkin(r, b);
    cw_redis_checkin(r, c);
    cwork_redis_free(r);
}

/* ---------------------------------------------------------------- killed connections */

static void kill_client(long long id)
{
    redisContext *raw = tl_redis_connect();
    redisReply *k = tl_cmd(raw, "CLIENT KILL ID %lld", id);
    CHECK(k->type == REDIS_REPLY_INTEGER && k->integer == 1);
    freeReplyObject(k);
    redisFree(raw);
}

static void killed_connection_is_redialled(void)
{
    cwork_redis *r = shared_pool(NULL, NULL, 1, 3000, NULL);
    if (!r) return;
    cw_conn *c;
    cwork_error err = {0};
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    long long id1 = conn_client_id(c);
    cw_redis_checkin(r, c);

    /* Killed while idle: the next checkout notices and dials, the caller sees nothing. */
    kill_client(id1);
    CHECK_INT(cwork_redis_ping(r, &err), 0);
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    long long id2 = conn_client_id(c);
    CHECK(id2 > 0 && id2 != id1);

    /* Killed while checked out: the command fails, the connection is dropped at checkin. */
    kill_client(id2);
    redisReply *rep = NULL;
    CHECK_INT(cw_conn_commandf(c, &rep, &err, "PING"), CWORK_EREDIS);
    CHECK(rep == NULL);
    CHECK_INT(err.code, CWORK_EREDIS);
    CHECK(c->broken);
    cw_redis_checkin(r, c);
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    long long id3 = conn_client_id(c);
    CHECK(id3 > 0 && id3 != id2);
    cw_redis_checkin(r, c);
    cwork_redis_free(r);
}

/* ---------------------------------------------------------------- scripts */

/* A test-only cw_script whose SHA1 the server computes (SCRIPT LOAD). */
static cw_script make_script(redisContext *raw, const char *body, char sha[41])
{
    redisReply *load = tl_cmd(raw, "SCRIPT LOAD %s", body);
    sha[0] = '\0';
    if (load->type == REDIS_REPLY_STRING && load->len == 40) memcpy(sha, load->str, 41);
    freeReplyObject(load);
    return (cw_script){"test", body, strlen(body), sha};
}

static void eval_falls_back_on_noscript(void)
{
    tl_server s;
    if (tl_server_start(&s, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    redisContext *raw = connect_port(s.port);
    const char *body = "-- cwork test script\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])";
    char sha[41], esha[41];
    cw_script sc = make_script(raw, body, sha);
    cw_script esc = make_script(raw, "return redis.call('NOSUCHCOMMAND')", esha);
    freeReplyObject(tl_cmd(raw, "SCRIPT FLUSH"));

    cwork_redis *r = port_pool(s.port, NULL, 1, NULL);
    cw_conn *c;
    cwork_error err = {0};
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    const char *argv[] = {"k", "5"};
    size_t lens[] = {1, 1};
    redisReply *rep = NULL;
    CHECK_INT(cw_conn_eval(c, &sc, 1, 1, argv, lens, &rep, &err), 0);
    CHECK(rep && rep->type == REDIS_REPLY_INTEGER && rep->integer == 5);
    if (rep) freeReplyObject(rep);
    redisReply *ex = tl_cmd(raw, "SCRIPT EXISTS %s", sha);
    CHECK(ex->elements == 1 && ex->element[0]->integer == 1); /* EVAL cached it */
    freeReplyObject(ex);

    freeReplyObject(tl_cmd(raw, "SCRIPT FLUSH"));
    CHECK_INT(cw_conn_eval(c, &sc, 1, 1, argv, lens, &rep, &err), 0);
    CHECK(rep && rep->type == REDIS_REPLY_INTEGER && rep->integer == 10);
    if (rep) freeReplyObject(rep);

    /* SCRIPT LOAD is remembered per connection: a second call sends nothing. */
    freeReplyObject(tl_cmd(raw, "SCRIPT FLUSH"));
    c->nscripts = 0; /* forget what the EVALs taught it */
    CHECK_INT(cw_conn_load_script(c, &sc, &err), 0);
    ex = tl_cmd(raw, "SCRIPT EXISTS %s", sha);
    CHECK(ex->elements == 1 && ex->element[0]->integer == 1);
    freeReplyObject(ex);
    freeReplyObject(tl_cmd(raw, "SCRIPT FLUSH"));
    CHECK_INT(cw_conn_load_script(c, &sc, &err), 0);
    ex = tl_cmd(raw, "SCRIPT EXISTS %s", sha);
    CHECK(ex->elements == 1 && ex->element[0]->integer == 0);
    freeReplyObject(ex);

    /* A wrong embedded SHA is caught at load time. */
    cw_script bad = {"bad", body, strlen(body), "0000000000000000000000000000000000000000"};
    CHECK_INT(cw_conn_load_script(c, &bad, &err), CWORK_EPROTO);

    /* A script error is an error reply, not a broken connection. */
    rep = (redisReply *)&rep; /* not NULL: the call must clear it */
    CHECK_INT(cw_conn_eval(c, &esc, 0, 0, NULL, NULL, &rep, &err), CWORK_EREDIS);
    CHECK(rep == NULL);
    CHECK_INT(err.code, CWORK_EREDIS);
    CHECK_INT(cw_conn_eval(c, &esc, 0, 0, NULL, NULL, NULL, NULL), CWORK_EREDIS);
    CHECK(!c->broken);
    cw_redis_checkin(r, c);
    cwork_redis_free(r);

    /* A fresh connection pipelines a script it never loaded: the first append sends EVAL
     * (which loads it), the rest EVALSHA. */
    freeReplyObject(tl_cmd(raw, "SCRIPT FLUSH"));
    r = port_pool(s.port, NULL, 1, NULL);
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    const char *argv1[] = {"p", "1"};
    for (int i = 0; i < 10; i++)
        CHECK_INT(cw_conn_append_eval(c, &sc, 1, 1, argv1, lens, &err), 0);
    for (int i = 0; i < 10; i++) {
        redisReply *x = NULL;
        CHECK_INT(cw_conn_read(c, &x, &err), 0);
        CHECK(x && x->type == REDIS_REPLY_INTEGER && x->integer == i + 1);
        if (x) freeReplyObject(x);
    }
    cw_redis_checkin(r, c);
    cwork_redis_free(r);
    redisFree(raw);
    tl_server_destroy(&s);
}

/* ---------------------------------------------------------------- pipelining */

static void pipeline_of_1000(void)
{
    char key[64];
    tl_unique_ns("pipe", key, sizeof key);
    cwork_redis *r = shared_pool(NULL, NULL, 1, 3000, NULL);
    if (!r) return;
    cw_conn *c;
    cwork_error err = {0};
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    long long id1 = conn_client_id(c);
    const char *argv[] = {"INCR", key};
    size_t lens[] = {4, strlen(key)};
    for (int i = 0; i < 1000; i++)
        CHECK_INT(cw_conn_append(c, 2, argv, lens, &err), 0);
    CHECK_INT(c->pending, 1000);
    int in_order = 1;
    for (int i = 0; i < 1000; i++) {
        redisReply *x = NULL;
        CHECK_INT(cw_conn_read(c, &x, &err), 0);
        in_order &= x && x->type == REDIS_REPLY_INTEGER && x->integer == i + 1;
        if (x) freeReplyObject(x);
    }
    CHECK(in_order);
    CHECK_INT(c->pending, 0);
    CHECK(!c->broken);
    redisReply *x = NULL;
    CHECK_INT(cw_conn_read(c, &x, &err), CWORK_EINVAL); /* nothing pending */

    /* An error reply is a reply: the pipeline goes on. */
    const char *bad[] = {"NOSUCHCOMMAND"};
    CHECK_INT(cw_conn_append(c, 1, bad, NULL, &err), 0);
    CHECK_INT(cw_conn_read(c, &x, &err), 0);
    CHECK(x && x->type == REDIS_REPLY_ERROR);
    if (x) freeReplyObject(x);
    CHECK(!c->broken);
    cw_redis_checkin(r, c);
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    CHECK(conn_client_id(c) == id1); /* reused */

    /* Unread replies at checkin: the connection is closed, never handed out again. */
    const char *ping[] = {"PING"};
    for (int i = 0; i < 3; i++)
        CHECK_INT(cw_conn_append(c, 1, ping, NULL, &err), 0);
    CHECK_INT(cw_conn_read(c, &x, &err), 0);
    freeReplyObject(x);
    redisReply *no = NULL;
    CHECK_INT(cw_conn_commandf(c, &no, &err, "PING"),
              CWORK_EINVAL); /* would read a pipelined reply */
    CHECK(no == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    /* The code is the same without an error to fill. */
    CHECK_INT(cw_conn_commandf(c, NULL, NULL, "PING"), CWORK_EINVAL);
    cw_redis_checkin(r, c);
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    long long id2 = conn_client_id(c);
    CHECK(id2 > 0 && id2 != id1);
    cw_redis_checkin(r, c);
    cwork_redis_free(r);

    redisContext *raw = tl_redis_connect();
    freeReplyObject(tl_cmd(raw, "DEL %s", key));
    redisFree(raw);
}

/* ---------------------------------------------------------------- AUTH */

static void auth_with_acl_user(void)
{
    char user[64], pw[64], info[160];
    tl_unique_ns("user", user, sizeof user);
    tl_unique_ns("pw", pw, sizeof pw);
    redisContext *raw = tl_redis_connect();
    redisReply *set = tl_cmd(raw, "ACL SETUSER %s on >%s ~* +@all", user, pw);
    CHECK(set->type == REDIS_REPLY_STATUS);
    freeReplyObject(set);

    snprintf(info, sizeof info, "%s:%s", user, pw);
    cwork_redis *r = shared_pool(info, NULL, 2, 3000, NULL);
    cwork_error err = {0};
    const char *whoami[] = {"ACL", "WHOAMI"};
    redisReply *who = NULL;
    if (r) cw_redis_command(r, 2, whoami, NULL, &who, &err);
    CHECK(who && who->type == REDIS_REPLY_STRING);
    if (who && who->type == REDIS_REPLY_STRING) CHECK_STR(who->str, user);
    if (who) freeReplyObject(who);
    cwork_redis_free(r);

    /* A wrong password is refused at once (no re-dialling), and never shown. */
    snprintf(info, sizeof info, "%s:wrong-s3cr3t", user);
    r = shared_pool(info, NULL, 2, 30000, NULL);
    long long t0 = tl_now_ms();
    CHECK_INT(cwork_redis_ping(r, &err), CWORK_EREDIS);
    CHECK(tl_now_ms() - t0 < 15000);
    CHECK(strstr(err.message, "AUTH") != NULL);
    CHECK(strstr(err.message, "wrong-s3cr3t") == NULL);
    cwork_redis_free(r);

    /* The options' password stands in for a URL without one ("user:"); the URL's user
     * stays. */
    snprintf(info, sizeof info, "%s:", user);
    r = shared_pool(info, NULL, 2, 3000, pw);
    CHECK_INT(cwork_redis_ping(r, &err), 0);
    cwork_redis_free(r);

    freeReplyObject(tl_cmd(raw, "ACL DELUSER %s", user));
    redisFree(raw);
}

static void auth_with_password(void)
{
    tl_server s;
    if (tl_server_start(&s, 0) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a private redis-server");
        return;
    }
    const char *pw = "pw-s3cr3t";
    redisContext *raw = connect_port(s.port);
    freeReplyObject(tl_cmd(raw, "CONFIG SET requirepass %s", pw));
    redisFree(raw);
    cwork_error err = {0};

    cwork_redis *r = port_pool(s.port, ":pw-s3cr3t", 1, NULL);
    CHECK_INT(cwork_redis_ping(r, &err), 0);
    cwork_redis_free(r);
    r = port_pool(s.port, "pw-s3cr3t", 1, NULL); /* a lone user-info is the password */
    CHECK_INT(cwork_redis_ping(r, &err), 0);
    cwork_redis_free(r);

    r = port_pool(s.port, NULL, 1, NULL);
    CHECK_INT(cwork_redis_ping(r, &err), CWORK_EREDIS);
    CHECK(strstr(err.message, "NOAUTH") != NULL);
    cwork_redis_free(r);

    r = port_pool(s.port, ":wrong-s3cr3t", 1, NULL);
    CHECK_INT(cwork_redis_ping(r, &err), CWORK_EREDIS);
    CHECK(strstr(err.message, "wrong-s3cr3t") == NULL);
    CHECK(strstr(err.message, "AUTH") != NULL);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", s.port);
    CHECK(strstr(err.message, addr) != NULL);
    cwork_redis_free(r);

    /* The URL's password wins; the option's stands in when the URL has none. The
     * environment is not read (CWORK_REDIS_PASSWORD is the cwork command's). */
    setenv("CWORK_REDIS_PASSWORD", pw, 1);
    r = port_pool(s.port, NULL, 1, NULL);
    CHECK_INT(cwork_redis_ping(r, &err), CWORK_EREDIS);
    CHECK(strstr(err.message, "NOAUTH") != NULL);
    cwork_redis_free(r);
    unsetenv("CWORK_REDIS_PASSWORD");
    r = port_pool(s.port, NULL, 1, pw);
    CHECK_INT(cwork_redis_ping(r, &err), 0);
    cwork_redis_free(r);
    r = port_pool(s.port, ":pw-s3cr3t", 1, "wrong-s3cr3t");
    CHECK_INT(cwork_redis_ping(r, &err), 0);
    cwork_redis_free(r);
    r = port_pool(s.port, ":wrong-s3cr3t", 1, pw);
    CHECK_INT(cwork_redis_ping(r, &err), CWORK_EREDIS);
    CHECK(strstr(err.message, "wrong-s3cr3t") == NULL);
    cwork_redis_free(r);
    r = port_pool(s.port, NULL, 1, ""); /* "": none */
    CHECK_INT(cwork_redis_ping(r, &err), CWORK_EREDIS);
    CHECK(strstr(err.message, "NOAUTH") != NULL);
    cwork_redis_free(r);
    tl_server_destroy(&s);
}

/* ---------------------------------------------------------------- SELECT */

static void select_db(void)
{
    char key[64];
    tl_unique_ns("db3", key, sizeof key);
    cwork_redis *r = shared_pool(NULL, "/3", 2, 3000, NULL);
    if (!r) return;
    cwork_error err = {0};
    const char *argv[] = {"SET", key, "in-three"};
    CHECK_INT(cw_redis_command(r, 3, argv, NULL, NULL, &err), 0);
    cwork_redis_free(r);

    redisContext *raw = tl_redis_connect();
    freeReplyObject(tl_cmd(raw, "SELECT 0"));
    redisReply *v = tl_cmd(raw, "EXISTS %s", key);
    CHECK_INT(v->integer, 0);
    freeReplyObject(v);
    freeReplyObject(tl_cmd(raw, "SELECT 3"));
    v = tl_cmd(raw, "GET %s", key);
    CHECK(v->type == REDIS_REPLY_STRING);
    if (v->type == REDIS_REPLY_STRING) CHECK_STR(v->str, "in-three");
    freeReplyObject(v);
    freeReplyObject(tl_cmd(raw, "DEL %s", key));
    redisFree(raw);

    /* A database the server does not have is refused at once. */
    r = shared_pool(NULL, "/100000", 2, 30000, NULL);
    long long t0 = tl_now_ms();
    CHECK_INT(cwork_redis_ping(r, &err), CWORK_EREDIS);
    CHECK(tl_now_ms() - t0 < 15000);
    CHECK(strstr(err.message, "SELECT") != NULL);
    cwork_redis_free(r);
}

/* ---------------------------------------------------------------- READONLY */

static void readonly_reply_marks_broken(void)
{
    cwork_redis *r = shared_pool(NULL, NULL, 1, 3000, NULL);
    if (!r) return;
    const char *ro_script =
        "return redis.error_reply(\"READONLY You can't write against a read only replica.\")";
    const char *ro[] = {"EVAL", ro_script, "0"};
    const char *other[] = {"EVAL", "return redis.error_reply('ERR something else')", "0"};
    cw_conn *c;
    cwork_error err = {0};
    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    long long id1 = conn_client_id(c);
    CHECK_INT(cw_conn_command(c, 3, other, NULL, NULL, &err), CWORK_EREDIS);
    CHECK(!c->broken); /* other errors keep the connection */
    CHECK_INT(cw_conn_command(c, 3, ro, NULL, NULL, &err), CWORK_EREDIS);
    CHECK_INT(err.code, CWORK_EREDIS);
    CHECK(strstr(err.message, "READONLY") != NULL);
    CHECK(c->broken);
    cw_redis_checkin(r, c);

    CHECK_INT(cw_redis_checkout(r, &c, &err), 0);
    long long id2 = conn_client_id(c);
    CHECK(id2 > 0 && id2 != id1); /* re-dialled */
    CHECK_INT(cw_conn_append(c, 3, ro, NULL, &err), 0);
    redisReply *x = NULL;
    CHECK_INT(cw_conn_read(c, &x, &err), 0);
    CHECK(x && x->type == REDIS_REPLY_ERROR);
    if (x) freeReplyObject(x);
    CHECK(c->broken);
    cw_redis_checkin(r, c);
    cwork_redis_free(r);
}

int main(void)
{
    cwork_error err = {0};
    if (cw_redis_addr_parse(tl_redis_url(), &shared, &err) != 0 || !shared.host) {
        fprintf(stderr, "bad CWORK_TEST_REDIS_URL: %s\n", err.message);
        return 1;
    }
    RUN(threads_share_a_small_pool);
    RUN(checkout_times_out_when_all_are_held);
    RUN(killed_connection_is_redialled);
    RUN(eval_falls_back_on_noscript);
    RUN(pipeline_of_1000);
    RUN(auth_with_acl_user);
    RUN(auth_with_password);
    RUN(select_db);
    RUN(readonly_reply_marks_broken);
    cw_redis_addr_clear(&shared);
    return tl_finish();
}
