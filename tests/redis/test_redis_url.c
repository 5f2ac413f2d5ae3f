/* Redis URL parsing, redaction, and the pool's choice of URL (no server needed). */
#include "redis.h"
#include "testlib.h"

#include <stdlib.h>

#define SECRET "s3cr3t"

typedef struct ok_case {
    const char *url;
    const char *host; /* NULL for unix sockets */
    int port;
    const char *unix_path;
    int db;
    const char *user;
    const char *password;
} ok_case;

static const ok_case ok_cases[] = {
    {"redis://localhost:6379", "localhost", 6379, NULL, 0, NULL, NULL},
    {"redis://127.0.0.1", "127.0.0.1", 6379, NULL, 0, NULL, NULL},
    {"redis://", "localhost", 6379, NULL, 0, NULL, NULL},
    {"redis://:6380", "localhost", 6380, NULL, 0, NULL, NULL},
    {"redis://h:", "h", 6379, NULL, 0, NULL, NULL},
    {"redis://h:6380/3", "h", 6380, NULL, 3, NULL, NULL},
    {"redis://h/", "h", 6379, NULL, 0, NULL, NULL},
    {"redis://h/0", "h", 6379, NULL, 0, NULL, NULL},
    {"redis://h/15", "h", 6379, NULL, 15, NULL, NULL},
    {"REDIS://Host.Example:1", "Host.Example", 1, NULL, 0, NULL, NULL},
    {"redis://h:65535", "h", 65535, NULL, 0, NULL, NULL},
    /* user-info: lone = password, ":pw" = password only, "user:pw" = ACL user */
    {"redis://" SECRET "@h", "h", 6379, NULL, 0, NULL, SECRET},
    {"redis://:" SECRET "@h:1/2", "h", 1, NULL, 2, NULL, SECRET},
    {"redis://alice:" SECRET "@h", "h", 6379, NULL, 0, "alice", SECRET},
    {"redis://alice:@h", "h", 6379, NULL, 0, "alice", NULL},
    {"redis://@h", "h", 6379, NULL, 0, NULL, NULL},
    {"redis://al%69ce:p%40ss%3Aw%2Frd%23@h", "h", 6379, NULL, 0, "alice", "p@ss:w/rd#"},
    {"redis://u:p@ss@h", "h", 6379, NULL, 0, "u", "p@ss"},
    {"redis://u:a:b@h", "h", 6379, NULL, 0, "u", "a:b"},
    /* IPv6 */
    {"redis://[::1]:6390/1", "::1", 6390, NULL, 1, NULL, NULL},
    {"redis://[::1]", "::1", 6379, NULL, 0, NULL, NULL},
    {"redis://:pw@[2001:db8::7]:7000", "2001:db8::7", 7000, NULL, 0, NULL, "pw"},
    {"redis://[fe80::1%25eth0]:7000", "fe80::1%eth0", 7000, NULL, 0, NULL, NULL},
    /* the query and fragment of redis:// are ignored, as in Go */
    {"redis://h:6379/4?foo=bar&db=9#frag", "h", 6379, NULL, 4, NULL, NULL},
    {"redis://h:6379?db=9", "h", 6379, NULL, 0, NULL, NULL},
    {"redis://h/%33", "h", 6379, NULL, 3, NULL, NULL},
    /* Go's workenqueue form */
    {"localhost:6390", "localhost", 6390, NULL, 0, NULL, NULL},
    {":6390", "localhost", 6390, NULL, 0, NULL, NULL},
    {"myhost", "myhost", 6379, NULL, 0, NULL, NULL},
    {"[::1]:6390", "::1", 6390, NULL, 0, NULL, NULL},
    /* unix sockets */
    {"unix:///tmp/redis.sock", NULL, 0, "/tmp/redis.sock", 0, NULL, NULL},
    {"unix:///tmp/redis.sock?db=5", NULL, 0, "/tmp/redis.sock", 5, NULL, NULL},
    {"unix:/tmp/redis.sock?x=1&db=2", NULL, 0, "/tmp/redis.sock", 2, NULL, NULL},
    {"UNIX://localhost/tmp/r.sock", NULL, 0, "/tmp/r.sock", 0, NULL, NULL},
    {"unix://:" SECRET "@/tmp/r.sock?db=1", NULL, 0, "/tmp/r.sock", 1, NULL, SECRET},
    {"unix://bob:" SECRET "@/tmp/r.sock", NULL, 0, "/tmp/r.sock", 0, "bob", SECRET},
    {"unix:///tmp/with%20space.sock#x", NULL, 0, "/tmp/with space.sock", 0, NULL, NULL},
};

static void check_str_or_null(const char *url, const char *what, const char *got, const char *want)
{
    if ((got == NULL) != (want == NULL) || (got && strcmp(got, want) != 0))
        tl_fail(__FILE__, __LINE__, "%s: %s = %s, want %s", url, what, got ? got : "(null)",
                want ? want : "(null)");
}

static void parse_ok(void)
{
    for (size_t i = 0; i < sizeof ok_cases / sizeof ok_cases[0]; i++) {
        const ok_case *t = &ok_cases[i];
        cw_redis_addr a;
        cwork_error err = {0};
        int rc = cw_redis_addr_parse(t->url, &a, &err);
        if (rc != 0) {
            tl_fail(__FILE__, __LINE__, "%s: rc %d (%s)", t->url, rc, err.message);
            continue;
        }
        check_str_or_null(t->url, "host", a.host, t->host);
        check_str_or_null(t->url, "unix_path", a.unix_path, t->unix_path);
        check_str_or_null(t->url, "user", a.user, t->user);
        check_str_or_null(t->url, "password", a.password, t->password);
        if (t->host && a.port != t->port)
            tl_fail(__FILE__, __LINE__, "%s: port %d, want %d", t->url, a.port, t->port);
        if (a.db != t->db) tl_fail(__FILE__, __LINE__, "%s: db %d, want %d", t->url, a.db, t->db);
        cw_redis_addr_clear(&a);
        CHECK(a.host == NULL && a.password == NULL);
    }
}

typedef struct err_case {
    const char *url;
    int code;
    const char *needle; /* a word the message must contain */
} err_case;

static const err_case err_cases[] = {
    {"", CWORK_EINVAL, "empty"},
    /* query parameters */
    {"redis://h?ca=/x.crt", CWORK_EINVAL, "use rediss://"},
    {"redis://h?verify=0", CWORK_EINVAL, "use rediss://"},
    {"rediss://h?verify=maybe", CWORK_EINVAL, "verify= must be 0 or 1"},
    {"rediss://h?cert=/c.crt", CWORK_EINVAL, "cert= and key="},
    {"rediss://h?key=/c.key", CWORK_EINVAL, "cert= and key="},
    {"rediss://h?ca=", CWORK_EINVAL, "ca= needs a value"},
    {"rediss://h?ca", CWORK_EINVAL, "ca= needs a value"},
    {"rediss://h?vrify=0", CWORK_EINVAL, "unknown parameter \"vrify\""},
    {"rediss://h?db=2", CWORK_EINVAL, "the database is the path"},
    {"rediss://:" SECRET "@h?sentinel_password=" SECRET, CWORK_EINVAL, "redis+sentinel://"},
    {"redis://h?min_replicas=x", CWORK_EINVAL, "min_replicas="},
    {"redis://h?min_replicas=1001", CWORK_EINVAL, "min_replicas="},
    {"redis://h?min_replicas_timeout_ms=0", CWORK_EINVAL, "min_replicas_timeout_ms="},
    {"redis://h?shards=0", CWORK_EINVAL, "shards= must be a number of shards (1 to 1024)"},
    {"redis+cluster://h?shards=1025", CWORK_EINVAL, "shards= must be"},
    {"redis://h?shards=x", CWORK_EINVAL, "shards= must be"},
    /* sentinel and cluster */
    {"redis+sentinel://h1:26379,h2:26380", CWORK_EINVAL, "names the master"},
    {"redis+sentinel://h1:26379,h2:26380/", CWORK_EINVAL, "names the master"},
    {"redis+sentinel://h1,,h2/m", CWORK_EINVAL, "empty host"},
    {"redis+sentinel://h1:x/m", CWORK_EINVAL, "port"},
    {"redis+sentinel://h/m/x", CWORK_EINVAL, "database"},
    {"redis+sentinel://h/m?sentinel_password=" SECRET "&bogus=1", CWORK_EINVAL,
     "unknown parameter"},
    {"redis+cluster://h1:7000,h2:7001/3", CWORK_EINVAL, "only database 0"},
    {"redis+cluster://h1:7000,h2:7001?foo=1", CWORK_EINVAL, "unknown parameter \"foo\""},
    {"rediss+cluster://h1:7000?verify=2", CWORK_EINVAL, "verify="},
    {"redis://h:abc", CWORK_EINVAL, "port"},
    {"redis://:" SECRET "@h:99999", CWORK_EINVAL, "port"},
    {"redis://:" SECRET "@h:0", CWORK_EINVAL, "port"},
    {"redis://:" SECRET "@h:-1", CWORK_EINVAL, "port"},
    {"redis://:" SECRET "@h:+1", CWORK_EINVAL, "port"},
    {"redis://:" SECRET "@h/abc", CWORK_EINVAL, "database"},
    {"redis://:" SECRET "@h/1/2", CWORK_EINVAL, "database"},
    {"redis://:" SECRET "@h/-1", CWORK_EINVAL, "database"},
    {"redis://:" SECRET "@h/99999999999", CWORK_EINVAL, "database"},
    {"http://:" SECRET "@h", CWORK_EINVAL, "scheme"},
    {"redis://:s3/cr3t@h", CWORK_EINVAL, "'@'"},
    {"redis://:s3?cr3t@h", CWORK_EINVAL, "'@'"},
    {"redis://:s3#cr3t@h", CWORK_EINVAL, "'@'"},
    {"redis://:s3%zzcr3t@h", CWORK_EINVAL, "percent"},
    {"redis://:s3cr3t%@h", CWORK_EINVAL, "percent"},
    {"redis://:s3cr3t%00@h", CWORK_EINVAL, "percent"},
    {"redis://:" SECRET "@[::1", CWORK_EINVAL, "]"},
    {"redis://:" SECRET "@[::1]x", CWORK_EINVAL, "]"},
    {"redis://:" SECRET "@::1:6379", CWORK_EINVAL, "colons"},
    {"redis://:" SECRET "@h x", CWORK_EINVAL, "host"},
    {"redis://:s3cr\n3t@h", CWORK_EINVAL, "control"},
    {"unix://:" SECRET "@host/tmp/s", CWORK_EINVAL, "host"},
    {"unix:relative.sock", CWORK_EINVAL, "absolute"},
    {"unix://", CWORK_EINVAL, "absolute"},
    {"unix:///tmp/s?db=x", CWORK_EINVAL, "db="},
    {"unix:///tmp/s?db=", CWORK_EINVAL, "db="},
    {SECRET "@h:6379", CWORK_EINVAL, "redis://"},
    {"user:" SECRET "@h:6379", CWORK_EINVAL, "redis://"},
    {"h:6379/0", CWORK_EINVAL, "path"},
    {"h:port", CWORK_EINVAL, "port"},
};

static void parse_errors(void)
{
    for (size_t i = 0; i < sizeof err_cases / sizeof err_cases[0]; i++) {
        const err_case *t = &err_cases[i];
        cw_redis_addr a;
        cwork_error err = {0};
        int rc = cw_redis_addr_parse(t->url, &a, &err);
        if (rc != t->code)
            tl_fail(__FILE__, __LINE__, "%s: rc %d, want %d (%s)", t->url, rc, t->code,
                    err.message);
        if (err.code != t->code) tl_fail(__FILE__, __LINE__, "%s: err.code %d", t->url, err.code);
        if (!strstr(err.message, t->needle))
            tl_fail(__FILE__, __LINE__, "%s: message \"%s\" lacks \"%s\"", t->url, err.message,
                    t->needle);
        /* No password, and no recognisable piece of one, in any message. */
        if (strstr(err.message, "cr3t") || strstr(err.message, "s3cr"))
            tl_fail(__FILE__, __LINE__, "%s: password in \"%s\"", t->url, err.message);
        CHECK(a.host == NULL && a.password == NULL && a.user == NULL && a.unix_path == NULL);
    }
    cwork_error err;
    CHECK_INT(cw_redis_addr_parse(NULL, &(cw_redis_addr){0}, &err), CWORK_EINVAL);
    cw_redis_addr a;
    CHECK_INT(cw_redis_addr_parse("redis://h:x", &a, NULL), CWORK_EINVAL); /* err optional */
}

static const char *redact_cases[][2] = {
    {"redis://:" SECRET "@h:1/2", "redis://:xxxxx@h:1/2"},
    {"redis://alice:" SECRET "@h", "redis://alice:xxxxx@h"},
    {"redis://" SECRET "@h", "redis://xxxxx@h"},
    {"redis://alice:@h", "redis://alice:xxxxx@h"},
    {"redis://@h", "redis://@h"},
    {"redis://h:6379/0", "redis://h:6379/0"},
    {"redis://[::1]:6379/0?db=1", "redis://[::1]:6379/0?db=1"},
    {"localhost:6379", "localhost:6379"},
    {":6379", ":6379"},
    {"unix:///tmp/r.sock?db=1", "unix:///tmp/r.sock?db=1"},
    {"unix://:" SECRET "@/tmp/r.sock", "unix://:xxxxx@/tmp/r.sock"},
    {"rediss://:" SECRET "@h", "rediss://:xxxxx@h"},
    {"rediss://:" SECRET "@h?ca=/etc/ca.crt&verify=0", "rediss://:xxxxx@h?ca=/etc/ca.crt&verify=0"},
    {"redis+sentinel://u:" SECRET "@h1,h2/m?sentinel_password=" SECRET "&min_replicas=1",
     "redis+sentinel://u:xxxxx@h1,h2/m?sentinel_password=xxxxx&min_replicas=1"},
    {"redis+sentinel://h/m?sentinel_password=" SECRET "#f",
     "redis+sentinel://h/m?sentinel_password=xxxxx#f"},
    {"redis+sentinel://h/m?SENTINEL_PASSWORD=" SECRET,
     "redis+sentinel://h/m?SENTINEL_PASSWORD=xxxxx"},
    {"redis+cluster://:" SECRET "@h1:7000,h2:7001", "redis+cluster://:xxxxx@h1:7000,h2:7001"},
    {"redis://u:p@ss@h", "redis://u:xxxxx@h"},
    /* malformed: the password may hold '/', '?', '#' or ':' */
    {"redis://:s3/cr3t@h/1", "redis://:xxxxx@h/1"},
    {"redis://:s3cr3t#x@h", "redis://:xxxxx@h"},
    {"redis://u:s3:cr3t@h", "redis://u:xxxxx@h"},
    {"alice:" SECRET "@h:6379", "alice:xxxxx@h:6379"},
    {SECRET "@h", "xxxxx@h"},
    {"user:" SECRET "@host//path", "user:xxxxx@host//path"},
    {"http://u:" SECRET "@h/", "http://u:xxxxx@h/"},
    {"", ""},
};

static void redaction(void)
{
    for (size_t i = 0; i < sizeof redact_cases / sizeof redact_cases[0]; i++) {
        char *got = cwork_redact_url(redact_cases[i][0]);
        CHECK_STR(got, redact_cases[i][1]);
        cwork_free(got);
    }
    char *got = cwork_redact_url(NULL);
    CHECK_STR(got, "");
    cwork_free(got);
}

/* The parts of the forms beyond one host: TLS parameters, sentinels, cluster seeds. */
static void parse_tls_sentinel_cluster(void)
{
    cw_redis_addr a;
    cwork_error err = {0};
    CHECK_INT(cw_redis_addr_parse("rediss://u:" SECRET "@h:6380/2?ca=/etc/c%20a.crt&cert=/c.crt"
                                  "&key=/c.key&sni=redis.example&verify=0&min_replicas=2"
                                  "&min_replicas_timeout_ms=250",
                                  &a, &err),
              0);
    CHECK_INT(a.kind, CW_REDIS_DIRECT);
    CHECK_INT(a.tls, 1);
    CHECK_STR(a.host, "h");
    CHECK_INT(a.port, 6380);
    CHECK_INT(a.db, 2);
    CHECK_STR(a.tls_ca, "/etc/c a.crt");
    CHECK_STR(a.tls_cert, "/c.crt");
    CHECK_STR(a.tls_key, "/c.key");
    CHECK_STR(a.tls_sni, "redis.example");
    CHECK_INT(a.tls_verify, 0);
    CHECK_INT(a.min_replicas, 2);
    CHECK_INT(a.min_replicas_timeout_ms, 250);
    cw_redis_addr_clear(&a);

    CHECK_INT(cw_redis_addr_parse("rediss://h", &a, &err), 0);
    CHECK_INT(a.tls, 1);
    CHECK_INT(a.tls_verify, 1);
    CHECK_INT(a.port, 6379);
    CHECK_INT(a.min_replicas, 0);
    CHECK_INT(a.min_replicas_timeout_ms, CW_MIN_REPLICAS_DEFAULT_TIMEOUT_MS);
    cw_redis_addr_clear(&a);

    CHECK_INT(cw_redis_addr_parse("redis+sentinel://app:" SECRET
                                  "@s1,s2:26380,[::1]:26381/my%20master/3"
                                  "?sentinel_user=sen&sentinel_password=" SECRET "2",
                                  &a, &err),
              0);
    CHECK_INT(a.kind, CW_REDIS_SENTINEL);
    CHECK_INT(a.tls, 0);
    CHECK(a.host == NULL);
    CHECK_INT(a.nnodes, 3);
    if (a.nnodes == 3) {
        CHECK_STR(a.nodes[0].host, "s1");
        CHECK_INT(a.nodes[0].port, 26379);
        CHECK_STR(a.nodes[1].host, "s2");
        CHECK_INT(a.nodes[1].port, 26380);
        CHECK_STR(a.nodes[2].host, "::1");
        CHECK_INT(a.nodes[2].port, 26381);
    }
    CHECK_STR(a.master_name, "my master");
    CHECK_INT(a.db, 3);
    CHECK_STR(a.user, "app");
    CHECK_STR(a.password, SECRET);
    CHECK_STR(a.sentinel_user, "sen");
    CHECK_STR(a.sentinel_password, SECRET "2");
    cw_redis_addr_clear(&a);

    CHECK_INT(cw_redis_addr_parse("rediss+sentinel://s1/m?ca=/ca.crt", &a, &err), 0);
    CHECK_INT(a.kind, CW_REDIS_SENTINEL);
    CHECK_INT(a.tls, 1);
    CHECK_STR(a.tls_ca, "/ca.crt");
    CHECK_INT(a.db, 0);
    cw_redis_addr_clear(&a);

    CHECK_INT(cw_redis_addr_parse("REDIS+CLUSTER://:" SECRET "@n1:7000,n2:7001,n3?min_replicas=1",
                                  &a, &err),
              0);
    CHECK_INT(a.kind, CW_REDIS_CLUSTER);
    CHECK_INT(a.nnodes, 3);
    if (a.nnodes == 3) {
        CHECK_STR(a.nodes[2].host, "n3");
        CHECK_INT(a.nodes[2].port, 6379);
    }
    CHECK(a.user == NULL);
    CHECK_STR(a.password, SECRET);
    CHECK_INT(a.min_replicas, 1);
    CHECK_INT(a.shards, 0);
    cw_redis_addr_clear(&a);

    /* shards= (PROTOCOL §27.1) on every scheme: the count everything made on the pool
     * declares. */
    CHECK_INT(cw_redis_addr_parse("redis+cluster://n1:7000?shards=16&min_replicas=1", &a, &err), 0);
    CHECK_INT(a.shards, 16);
    cw_redis_addr_clear(&a);
    CHECK_INT(cw_redis_addr_parse("redis://h/2?shards=1024", &a, &err), 0);
    CHECK_INT(a.shards, 1024);
    cw_redis_addr_clear(&a);

    CHECK_INT(cw_redis_addr_parse("rediss+cluster://n1:7000/0?sni=x", &a, &err), 0);
    CHECK_INT(a.kind, CW_REDIS_CLUSTER);
    CHECK_INT(a.tls, 1);
    CHECK_STR(a.tls_sni, "x");
    cw_redis_addr_clear(&a);

    /* db= still belongs to unix sockets, and redis:// still ignores what it does not know. */
    CHECK_INT(cw_redis_addr_parse("unix:///tmp/s.sock?db=4&min_replicas=1", &a, &err), 0);
    CHECK_INT(a.db, 4);
    CHECK_INT(a.min_replicas, 1);
    cw_redis_addr_clear(&a);
}

static void pool_validates_at_creation(void)
{
    cwork_error err = {0};
    CHECK(cwork_redis_new("redis://:" SECRET "@h:notaport", NULL, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    CHECK(strstr(err.message, SECRET) == NULL);

    /* A valid URL does not connect yet: port 1 has no Redis, and that is fine here. */
    cwork_redis *r = cwork_redis_new("redis://:" SECRET "@127.0.0.1:1/2", NULL, &err);
    CHECK(r != NULL);
    if (r) CHECK_STR(cw_redis_url_redacted(r), "redis://:xxxxx@127.0.0.1:1/2");
    if (r) CHECK_INT(cw_redis_declared_shards(r), 0);
    cwork_redis_free(r);
    r = cwork_redis_new("redis://127.0.0.1:1?shards=3", NULL, &err);
    CHECK(r != NULL);
    cwork_redis *c = r ? cw_redis_clone(r, &err) : NULL; /* a shard's pool declares it too */
    if (c) CHECK_INT(cw_redis_declared_shards(c), 3);
    cwork_redis_free(c);
    cwork_redis_free(r);

    cwork_redis_options o;
    cwork_redis_options_init(&o);
    CHECK_INT(o.connect_timeout_ms, 5000);
    CHECK_INT(o.command_timeout_ms, 5000);
    CHECK_INT(o.max_connections, 16);
    CHECK_INT(o.checkout_timeout_ms, 5000);
    CHECK(o.password == NULL);
    o.max_connections = -1;
    CHECK(cwork_redis_new("redis://h", &o, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    /* All zero is valid (docs/ABI.md): connect_timeout_ms and max_connections take their
     * defaults. */
    cwork_redis_options zero = {0};
    r = cwork_redis_new("redis://h", &zero, &err);
    CHECK(r != NULL);
    cwork_redis_free(r);
    cwork_redis_options_init(&o);
    o.checkout_timeout_ms = -1;
    CHECK(cwork_redis_new("redis://h", &o, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    cwork_redis_free(NULL);
}

/* NULL is the default address; the library reads no environment (CWORK_REDIS_URL is
 * the cwork command's: test_cli_messages). */
static void null_is_the_default_whatever_the_environment(void)
{
    cwork_error err = {0};
    setenv("CWORK_REDIS_URL", "redis://:" SECRET "@envhost:7000/2", 1);
    cwork_redis *r = cwork_redis_new(NULL, NULL, &err);
    CHECK(r != NULL);
    if (r) CHECK_STR(cw_redis_url_redacted(r), "redis://127.0.0.1:6379");
    cwork_redis_free(r);

    /* A URL whose TLS file is missing fails at creation, naming the file and no secret. */
    CHECK(cwork_redis_new("rediss://:" SECRET "@h?ca=/nonexistent/ca.crt", NULL, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    CHECK(strstr(err.message, "/nonexistent/ca.crt") != NULL);
    CHECK(strstr(err.message, SECRET) == NULL);

    /* A bad value cannot fail a call that does not read it. */
    setenv("CWORK_REDIS_URL", "redis://h:bad", 1);
    r = cwork_redis_new(NULL, NULL, &err);
    CHECK(r != NULL);
    cwork_redis_free(r);
    unsetenv("CWORK_REDIS_URL");
}

int main(void)
{
    RUN(parse_ok);
    RUN(parse_errors);
    RUN(redaction);
    RUN(parse_tls_sentinel_cluster);
    RUN(pool_validates_at_creation);
    RUN(null_is_the_default_whatever_the_environment);
    return tl_finish();
}
