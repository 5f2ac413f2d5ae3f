/* rediss:// against real TLS servers started here, with a CA and certificates made by
 * openssl in the test: every role over TLS, verification by name and by IP address,
 * sni=, client certificates, and the clear errors of each way it can go wrong (unknown
 * CA, wrong name, expired, plain port, TLS port, bad files); and rediss+sentinel:// and
 * rediss+cluster:// against a TLS-only sentinel and a TLS-only cluster. */
#include "redis.h"
#include "transport_testutil.h"

#include <netdb.h>

static char dir[64];
static tt_proc main_srv, mtls_srv, expired_srv;
static int plain_port, tls_port, mtls_port, expired_port;

/* Two CAs, a server certificate for localhost and 127.0.0.1 (and an expired twin),
 * client certificates from each CA. EC keys: quick to make. */
static int make_certs(void)
{
    return tt_sh(
        "(cd '%s' && K='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes' && "
        "openssl req -x509 $K -keyout ca.key -out ca.crt -days 30 -subj '/CN=cwork test CA' && "
        "openssl req -x509 $K -keyout other-ca.key -out other-ca.crt -days 30 -subj '/CN=another "
        "CA' && "
        "openssl req $K -keyout server.key -out server.csr -subj '/CN=localhost' && "
        "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > san.ext && "
        "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt "
        "-days 30 -extfile san.ext && "
        "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out "
        "expired.crt -days -1 -extfile san.ext && "
        "openssl req $K -keyout client.key -out client.csr -subj '/CN=cwork client' && "
        "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt "
        "-days 30 && "
        "openssl x509 -req -in client.csr -CA other-ca.crt -CAkey other-ca.key -CAcreateserial "
        "-out stranger.crt -days 30"
        ") >/dev/null 2>&1",
        dir);
}

/* redis-server with a TLS port (and a plain one when plain > 0, for the test's checks). */
static int start_tls_server(tt_proc *p, int plain, int tls, const char *cert,
                            const char *auth_clients)
{
    char plain_s[16], tls_s[16], cert_p[128], key_p[128], ca_p[128], log[128];
    snprintf(plain_s, sizeof plain_s, "%d", plain);
    snprintf(tls_s, sizeof tls_s, "%d", tls);
    snprintf(cert_p, sizeof cert_p, "%s/%s", dir, cert);
    snprintf(key_p, sizeof key_p, "%s/server.key", dir);
    snprintf(ca_p, sizeof ca_p, "%s/ca.crt", dir);
    snprintf(log, sizeof log, "%s/redis-%d.log", dir, tls);
    const char *argv[] = {"redis-server",
                          "--port",
                          plain_s,
                          "--tls-port",
                          tls_s,
                          "--bind",
                          "127.0.0.1",
                          "--tls-cert-file",
                          cert_p,
                          "--tls-key-file",
                          key_p,
                          "--tls-ca-cert-file",
                          ca_p,
                          "--tls-auth-clients",
                          auth_clients,
                          "--save",
                          "",
                          "--appendonly",
                          "no",
                          "--dir",
                          dir,
                          NULL};
    return tt_spawn(p, tls, log, argv);
}

/* Whether the name "localhost" resolves: not in a chroot without /etc/hosts (a fresh
 * debootstrap), where the URLs below dial 127.0.0.1 instead (the server's certificate
 * names both, and names_addresses_and_sni checks a name given by sni=). */
static int localhost_resolves_ = 1;

static void check_localhost(void)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    localhost_resolves_ = getaddrinfo("localhost", "6379", &hints, &res) == 0;
    if (res) freeaddrinfo(res);
    if (!localhost_resolves_)
        fprintf(stderr, "  (\"localhost\" does not resolve here: dialling 127.0.0.1)\n");
}

/* fmt with the port and the certificates' directory (up to three times). */
static void format_url(char *url, size_t size, const char *fmt, int port)
{
    snprintf(url, size, fmt, port, dir, dir, dir);
    const char *name = strstr(url, "://localhost:");
    if (!localhost_resolves_ && name) {
        char rest[512];
        snprintf(rest, sizeof rest, "%s", name + strlen("://localhost"));
        snprintf(url + (name - url), size - (size_t)(name - url), "://127.0.0.1%s", rest);
    }
}

static cwork_redis *pool_for(const char *fmt, int port, int checkout_ms, cwork_error *err)
{
    char url[512];
    format_url(url, sizeof url, fmt, port);
    cwork_redis_options o;
    cwork_redis_options_init(&o);
    o.connect_timeout_ms = 2000;
    o.checkout_timeout_ms = checkout_ms;
    return cwork_redis_new(url, &o, err);
}

/* PING through a fresh pool on the URL; 0 or the error code, err filled. */
static int ping_url(const char *fmt, int port, cwork_error *err)
{
    cwork_redis *r = pool_for(fmt, port, 10000, err);
    if (!r) return err->code;
    int rc = cwork_redis_ping(r, err);
    cwork_redis_free(r);
    return rc;
}

static void expect_error(const char *fmt, int port, const char *needle)
{
    cwork_error err = {0};
    long long t0 = tl_now_ms();
    int rc = ping_url(fmt, port, &err);
    long long took = tl_now_ms() - t0;
    if (rc == 0 || !strstr(err.message, needle))
        tl_fail(__FILE__, __LINE__, "%s: rc %d, \"%s\", want \"%s\"", fmt, rc, err.message, needle);
    /* A refusal that dialling again cannot fix fails at once, not at the checkout
     * timeout (10 s). */
    if (took > 5000) tl_fail(__FILE__, __LINE__, "%s: took %lld ms", fmt, took);
}

static void every_role_over_tls(void)
{
    cwork_error err = {0};
    cwork_redis *r = pool_for("rediss://localhost:%d?ca=%s/ca.crt", tls_port, 10000, &err);
    if (!r) {
        tl_fail(__FILE__, __LINE__, "cwork_redis_new: %s", err.message);
        return;
    }
    char ns[64];
    tl_unique_ns("tls", ns, sizeof ns);
    CHECK_INT(tt_every_role(r, ns, 300), 300);
    cwork_redis_free(r);
    char url[256];
    format_url(url, sizeof url, "rediss://localhost:%d?ca=%s/ca.crt", tls_port);
    tt_cli_roles(url, ns);

    /* The namespace as the plain port sees it: the queue is empty, nothing in flight. */
    redisContext *raw = redisConnect("127.0.0.1", plain_port);
    CHECK(raw && !raw->err);
    char *dump = tl_ns_dump(raw, ns);
    char want[128];
    /* cli_job came from `cwork enqueue` (the demo runs only its own jobs) */
    snprintf(want, sizeof want, "%s:known_jobs set ", ns);
    CHECK(strstr(dump, want) != NULL && strstr(strstr(dump, want), " tt_job"));
    snprintf(want, sizeof want, "%s:jobs:cli_job list {\"name\":\"cli_job\"", ns);
    CHECK(strstr(dump, want) != NULL);
    CHECK(strstr(dump, ":jobs:tt_job ") == NULL);
    CHECK(strstr(dump, ":inprogress") == NULL);
    free(dump);
    tl_ns_delete(raw, ns);
    redisFree(raw);
}

static void names_addresses_and_sni(void)
{
    cwork_error err = {0};
    CHECK_INT(ping_url("rediss://127.0.0.1:%d?ca=%s/ca.crt", tls_port, &err), 0);
    CHECK_INT(ping_url("rediss://127.0.0.1:%d?ca=%s/ca.crt&sni=localhost", tls_port, &err), 0);
    CHECK_INT(ping_url("rediss://[::1]:%d?ca=%s/ca.crt&sni=localhost", tls_port, &err) == 0 ||
                  strstr(err.message, "connect") != NULL, /* a host without IPv6 */
              1);
    expect_error("rediss://127.0.0.1:%d?ca=%s/ca.crt&sni=wrong.example", tls_port,
                 "certificate is not for \"wrong.example\"");
}

static void unknown_ca(void)
{
    expect_error("rediss://localhost:%d?ca=%s/other-ca.crt", tls_port, "unknown CA");
    /* The system's store does not know a test CA either. */
    expect_error("rediss://localhost:%d", tls_port, "unknown CA");
}

static void expired_certificate(void)
{
    expect_error("rediss://localhost:%d?ca=%s/ca.crt", expired_port, "has expired");
}

static void plain_and_tls_ports_mixed_up(void)
{
    expect_error("rediss://localhost:%d?ca=%s/ca.crt", plain_port, "plain redis:// port");
    expect_error("redis://localhost:%d", tls_port, "the server speaks TLS: use rediss://");
}

static void client_certificates(void)
{
    cwork_error err = {0};
    expect_error("rediss://localhost:%d?ca=%s/ca.crt", mtls_port, "requires a client certificate");
    CHECK_INT(ping_url("rediss://localhost:%d?ca=%s/ca.crt&cert=%s/client.crt&key=%s/client.key",
                       mtls_port, &err),
              0);
    if (err.message[0]) fprintf(stderr, "  (%s)\n", err.message);
    expect_error("rediss://localhost:%d?ca=%s/ca.crt&cert=%s/stranger.crt&key=%s/client.key",
                 mtls_port, "refused the client certificate");
}

static void verification_off_warns_once(void)
{
    tl_capture_logs();
    cwork_error err = {0};
    cwork_redis *r =
        pool_for("rediss://localhost:%d?ca=%s/other-ca.crt&verify=0", tls_port, 5000, &err);
    CHECK(r != NULL);
    for (int i = 0; r && i < 3; i++)
        CHECK_INT(cwork_redis_ping(r, &err), 0);
    cwork_redis_free(r);
    CHECK_INT(tl_count_logs("redis.tls.verify_off"), 1);
    cwork_set_logger(NULL, NULL, CWORK_LOG_DEBUG);
}

static void bad_files_fail_at_creation(void)
{
    cwork_error err = {0};
    CHECK(pool_for("rediss://localhost:%d?ca=%s/nonexistent.crt", tls_port, 1000, &err) == NULL);
    CHECK_INT(err.code, CWORK_EINVAL);
    CHECK(strstr(err.message, "nonexistent.crt") != NULL);
    CHECK(pool_for("rediss://localhost:%d?ca=%s/ca.crt&cert=%s/client.crt&key=%s/server.key",
                   tls_port, 1000, &err) == NULL);
    CHECK(strstr(err.message, "does not match") != NULL);
    CHECK(pool_for("rediss://localhost:%d?ca=%s/ca.crt&cert=%s/client.crt", tls_port, 1000, &err) ==
          NULL);
    CHECK(strstr(err.message, "cert= and key=") != NULL);
    CHECK(pool_for("rediss://localhost:%d?ca=%s/ca.crt&verify=maybe", tls_port, 1000, &err) ==
          NULL);
    CHECK(strstr(err.message, "verify=") != NULL);
}

/* Megabytes both ways and a pipeline of them: TLS records split and joined at will. */
static void big_values_over_tls(void)
{
    cwork_error err = {0};
    cwork_redis *r = pool_for("rediss://localhost:%d?ca=%s/ca.crt", tls_port, 10000, &err);
    cw_conn *c = NULL;
    CHECK(r && cw_redis_checkout(r, &c, &err) == 0);
    if (!c) {
        cwork_redis_free(r);
        return;
    }
    size_t n = 3u << 20;
    char *v = malloc(n);
    for (size_t i = 0; i < n; i++)
        v[i] = (char)('A' + i % 29);
    const char *set[] = {"SET", "cwt-tls-big", v};
    size_t set_lens[] = {3, 11, n};
    for (int i = 0; i < 3; i++)
        CHECK_INT(cw_conn_append(c, 3, set, set_lens, &err), 0);
    const char *get[] = {"GET", "cwt-tls-big"};
    for (int i = 0; i < 3; i++)
        CHECK_INT(cw_conn_append(c, 2, get, NULL, &err), 0);
    for (int i = 0; i < 6; i++) {
        redisReply *x = NULL;
        CHECK_INT(cw_conn_read(c, &x, &err), 0);
        if (i >= 3)
            CHECK(x && x->type == REDIS_REPLY_STRING && x->len == n && !memcmp(x->str, v, n));
        if (x) freeReplyObject(x);
    }
    CHECK_INT(cw_conn_commandf(c, NULL, &err, "DEL cwt-tls-big"), 0);
    cw_redis_checkin(r, c);
    cwork_redis_free(r);
    free(v);
}

/* Redis killed under a TLS connection: writes fail with an error, never SIGPIPE (whose
 * default action would end this process), and the pool dials again once it is back. */
static void dead_peer_over_tls(void)
{
    signal(SIGPIPE, SIG_DFL);
    tt_proc p = {0};
    int port = tt_free_port();
    if (start_tls_server(&p, 0, port, "server.crt", "no") != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a TLS redis-server");
        return;
    }
    cwork_error err = {0};
    cwork_redis *r = pool_for("rediss://localhost:%d?ca=%s/ca.crt", port, 3000, &err);
    cw_conn *c = NULL;
    CHECK(r && cw_redis_checkout(r, &c, &err) == 0);
    tt_kill(&p, SIGKILL);
    if (c) {
        size_t n = 8u << 20;
        char *v = calloc(1, n);
        const char *set[] = {"SET", "k", v};
        size_t lens[] = {3, 1, n};
        CHECK(cw_conn_command(c, 3, set, lens, NULL, &err) != 0);
        CHECK(c->broken);
        free(v);
        cw_redis_checkin(r, c);
    }
    CHECK(start_tls_server(&p, 0, port, "server.crt", "no") == 0);
    CHECK_INT(cwork_redis_ping(r, &err), 0);
    cwork_redis_free(r);
    tt_kill(&p, SIGTERM);
}
/* ---------------------------------------------------------------- sentinel, cluster */

/* A TLS-only redis-server: no plain port, replication over TLS too. extra: more
 * arguments, NULL-terminated. */
static int start_tls_only(tt_proc *p, int port, const char *const *extra)
{
    char port_s[16], cert_p[128], key_p[128], ca_p[128], log[128];
    snprintf(port_s, sizeof port_s, "%d", port);
    snprintf(cert_p, sizeof cert_p, "%s/server.crt", dir);
    snprintf(key_p, sizeof key_p, "%s/server.key", dir);
    snprintf(ca_p, sizeof ca_p, "%s/ca.crt", dir);
    snprintf(log, sizeof log, "%s/node-%d.log", dir, port);
    const char *argv[48] = {"redis-server",
                            "--port",
                            "0",
                            "--tls-port",
                            port_s,
                            "--bind",
                            "127.0.0.1",
                            "--tls-cert-file",
                            cert_p,
                            "--tls-key-file",
                            key_p,
                            "--tls-ca-cert-file",
                            ca_p,
                            "--tls-auth-clients",
                            "no",
                            "--tls-replication",
                            "yes",
                            "--dir",
                            dir};
    int argc = 19;
    for (size_t i = 0; extra && extra[i] && argc < 47; i++)
        argv[argc++] = extra[i];
    argv[argc] = NULL;
    return tt_spawn(p, port, log, argv);
}

static void sentinel_over_tls(void)
{
    /* One sentinel (quorum 1) watching the TLS server: it names it, cwork checks its
     * role and runs every role there, all over TLS; the sentinel has a password of its
     * own, from the URL. */
    tt_proc sentinel = {0};
    char conf[128];
    int port = tt_free_port();
    snprintf(conf, sizeof conf, "%s/sentinel-%d.conf", dir, port);
    FILE *f = fopen(conf, "w");
    if (f) {
        fprintf(f,
                "port 0\ntls-port %d\nbind 127.0.0.1\ndir %s\n"
                "tls-cert-file %s/server.crt\ntls-key-file %s/server.key\n"
                "tls-ca-cert-file %s/ca.crt\ntls-auth-clients no\ntls-replication yes\n"
                "requirepass sent-s3cr3t\nsentinel monitor tlsmaster 127.0.0.1 %d 1\n",
                port, dir, dir, dir, dir, tls_port);
        fclose(f);
    }
    const char *argv[] = {"redis-sentinel", conf, NULL};
    if (!f || tt_spawn(&sentinel, port, NULL, argv) != 0) {
        tl_fail(__FILE__, __LINE__, "cannot start a TLS sentinel");
        return;
    }
    char ns[64];
    tl_unique_ns("tls-sentinel", ns, sizeof ns);
    cwork_error err = {0};
    cwork_redis *r = pool_for("rediss+sentinel://127.0.0.1:%d/tlsmaster?ca=%s/ca.crt"
                              "&sentinel_password=sent-s3cr3t",
                              port, 10000, &err);
    if (!r) tl_fail(__FILE__, __LINE__, "cwork_redis_new: %s", err.message);
    if (r) CHECK_INT(tt_every_role(r, ns, 50), 50);
    cwork_redis_free(r);
    /* The sentinel's certificate is checked as the data node's is. */
    expect_error("rediss+sentinel://127.0.0.1:%d/tlsmaster?ca=%s/other-ca.crt"
                 "&sentinel_password=sent-s3cr3t",
                 port, "unknown CA");
    tt_kill(&sentinel, SIGKILL);
}

static int cluster_ok(int port)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "redis-cli --tls --cacert '%s/ca.crt' -p %d cluster info | grep -q cluster_state:ok",
             dir, port);
    for (int i = 0; i < 200; i++) {
        if (tt_sh("%s", cmd) == 0) return 0;
        tl_sleep_ms(100);
    }
    return -1;
}

/* A TLS cluster node on a port whose bus port is free too; a few tries, since a port
 * found free may be taken by a parallel test before the node binds it. */
static int start_cluster_node(tt_proc *node)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        int port = tt_free_cluster_port();
        char conf[64];
        snprintf(conf, sizeof conf, "nodes-%d.conf", port);
        const char *extra[] = {"--cluster-enabled",
                               "yes",
                               "--cluster-config-file",
                               conf,
                               "--tls-cluster",
                               "yes",
                               "--save",
                               "",
                               "--appendonly",
                               "no",
                               NULL};
        if (port > 0 && start_tls_only(node, port, extra) == 0) return 0;
    }
    return -1;
}

static void cluster_over_tls(void)
{
    /* Three masters, no replicas: the slot map, the bus and every command over TLS. */
    tt_proc node[3] = {{0}};
    char hosts[128] = "";
    for (int i = 0; i < 3; i++) {
        if (start_cluster_node(&node[i]) != 0) {
            tt_sh("tail -n 5 '%s'/node-*.log >&2", dir);
            tl_fail(__FILE__, __LINE__, "cannot start TLS cluster node %d (logs above)", i);
            goto out;
        }
        size_t len = strlen(hosts);
        snprintf(hosts + len, sizeof hosts - len, " 127.0.0.1:%d", node[i].port);
    }
    if (tt_sh("redis-cli --tls --cacert '%s/ca.crt' --cluster create%s --cluster-yes "
              ">'%s/create.log' 2>&1",
              dir, hosts, dir) != 0) {
        tt_sh("cat '%s/create.log' >&2", dir);
        tl_fail(__FILE__, __LINE__, "redis-cli --cluster create failed (above)");
        goto out;
    }
    for (int i = 0; i < 3; i++) { /* each node sees the state ok in its own time */
        if (cluster_ok(node[i].port) != 0) {
            tl_fail(__FILE__, __LINE__, "TLS cluster node %d never reached cluster_state:ok", i);
            goto out;
        }
    }
    cwork_error err = {0};
    cwork_redis *r =
        pool_for("rediss+cluster://127.0.0.1:%d?ca=%s/ca.crt", node[1].port, 10000, &err);
    if (!r) tl_fail(__FILE__, __LINE__, "cwork_redis_new: %s", err.message);
    char ns[64], tagged[80];
    tl_unique_ns("tls-cluster", ns, sizeof ns);
    snprintf(tagged, sizeof tagged, "{%s}", ns);
    if (r) CHECK_INT(tt_every_role(r, tagged, 50), 50);
    cwork_redis_free(r);
out:
    for (int i = 0; i < 3; i++)
        tt_kill(&node[i], SIGKILL);
}

int main(void)
{
    if (!tl_on_path("openssl") || !tl_on_path("redis-server")) {
        fprintf(stderr, "openssl and redis-server are needed (scripts/test.sh installs them)\n");
        return 1;
    }
    if (tt_tmpdir(dir, sizeof dir, "tls") != 0 || make_certs() != 0) {
        fprintf(stderr, "cannot make test certificates in %s\n", dir);
        return 1;
    }
    check_localhost();
    plain_port = tt_free_port();
    tls_port = tt_free_port();
    mtls_port = tt_free_port();
    expired_port = tt_free_port();
    if (start_tls_server(&main_srv, plain_port, tls_port, "server.crt", "no") != 0 ||
        start_tls_server(&mtls_srv, 0, mtls_port, "server.crt", "yes") != 0 ||
        start_tls_server(&expired_srv, 0, expired_port, "expired.crt", "no") != 0) {
        fprintf(stderr, "cannot start TLS redis-servers (is redis-server built with TLS?)\n");
        tt_kill(&main_srv, SIGKILL);
        tt_kill(&mtls_srv, SIGKILL);
        tt_kill(&expired_srv, SIGKILL);
        tt_rmdir(dir);
        return 1;
    }
    RUN(every_role_over_tls);
    RUN(names_addresses_and_sni);
    RUN(unknown_ca);
    RUN(expired_certificate);
    RUN(plain_and_tls_ports_mixed_up);
    RUN(client_certificates);
    RUN(verification_off_warns_once);
    RUN(bad_files_fail_at_creation);
    RUN(big_values_over_tls);
    RUN(dead_peer_over_tls);
    RUN(sentinel_over_tls);
    RUN(cluster_over_tls);
    tt_kill(&main_srv, SIGTERM);
    tt_kill(&mtls_srv, SIGTERM);
    tt_kill(&expired_srv, SIGTERM);
    tt_rmdir(dir);
    return tl_finish();
}
