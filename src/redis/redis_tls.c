/* TLS over the transport's socket with OpenSSL. See redis_tls.h.
 *
 * OpenSSL's own socket BIO writes with write(), which raises SIGPIPE when the peer has
 * gone; ours writes with send(MSG_NOSIGNAL), so that no thread of the application ever
 * needs SIGPIPE blocked for cwork's sake. */
#include "redis_tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

/* How long a failed handshake waits to learn whether the port is an HTTP server's. */
enum { TLS_PROBE_MS = 1000 };

/* ---------------------------------------------------------------- the socket BIO */

static BIO_METHOD *bio_method;
static pthread_once_t bio_once = PTHREAD_ONCE_INIT;

/* The BIO's data is the cw_net it serves (cw_tls_moved follows a move). */
static int bio_fd(BIO *b)
{
    const cw_net *n = BIO_get_data(b);
    return n ? n->fd : -1;
}

static int bio_write(BIO *b, const char *p, int len)
{
    BIO_clear_retry_flags(b);
    ssize_t w;
    while ((w = send(bio_fd(b), p, (size_t)len, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_write(b);
    return (int)w;
}

static int bio_read(BIO *b, char *p, int len)
{
    BIO_clear_retry_flags(b);
    ssize_t r;
    while ((r = recv(bio_fd(b), p, (size_t)len, 0)) < 0 && errno == EINTR) {
    }
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_read(b);
    return (int)r;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b, (void)num, (void)ptr;
    return cmd == BIO_CTRL_FLUSH; /* nothing is buffered here */
}

static int bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

/* Made once and kept for the life of the process (OpenSSL keeps no reference to free). */
static void make_bio_method(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "cwork socket");
    if (m && BIO_meth_set_write(m, bio_write) && BIO_meth_set_read(m, bio_read) &&
        BIO_meth_set_ctrl(m, bio_ctrl) && BIO_meth_set_create(m, bio_create))
        bio_method = m;
    else if (m)
        BIO_meth_free(m);
}

/* ---------------------------------------------------------------- errors */

/* The reason of OpenSSL's last error, and the queue cleared. */
static const char *ssl_reason(unsigned long *code)
{
    unsigned long e = ERR_peek_last_error();
    if (code) *code = e;
    /* A file that cannot be opened is a system error: its reason is an errno. */
    const char *s = !e                    ? NULL
                    : ERR_SYSTEM_ERROR(e) ? strerror(ERR_GET_REASON(e))
                                          : ERR_reason_error_string(e);
    ERR_clear_error();
    return s ? s : "unknown error";
}

/* The certificate check failed: say which part. */
static int verify_failed(cw_net *n, long v, const char *name)
{
    switch (v) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
        return cw_net_fail(n, CW_NET_ETLS, "TLS: the server's certificate is not for \"%.60s\"",
                           name);
    case X509_V_ERR_CERT_HAS_EXPIRED:
        return cw_net_fail(n, CW_NET_ETLS, "TLS: the server's certificate has expired");
    case X509_V_ERR_CERT_NOT_YET_VALID:
        return cw_net_fail(n, CW_NET_ETLS, "TLS: the server's certificate is not valid yet");
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_CERT_UNTRUSTED:
        return cw_net_fail(n, CW_NET_ETLS,
                           "TLS: the server's certificate is signed by an unknown CA (name the "
                           "CA file with ca=)");
    default:
        return cw_net_fail(n, CW_NET_ETLS, "TLS: certificate verification failed: %s",
                           X509_verify_cert_error_string(v));
    }
}

/* The server closed the connection right after a handshake in which it asked for a
 * client certificate: with TLS 1.3 that is how a refused (or missing) one shows, the
 * alert saying so often lost to the reset that follows it. */
static int closed_after_cert_request(cw_net *n)
{
    if (SSL_get_certificate(n->ssl) == NULL)
        return cw_net_fail(n, CW_NET_ETLS,
                           "TLS: the server requires a client certificate (cert= and key=)");
    return cw_net_fail(n, CW_NET_ETLS,
                       "TLS: the server refused the client certificate (it closed the connection)");
}

/* An SSL call failed with e (SSL_get_error); saved_errno is errno right after it. */
static int ssl_failed(cw_net *n, int e, int saved_errno, int handshake)
{
    unsigned long code = 0;
    const char *why = ssl_reason(&code);
    int reason = ERR_GET_REASON(code);
    int closed = e == SSL_ERROR_ZERO_RETURN || reason == SSL_R_UNEXPECTED_EOF_WHILE_READING ||
                 (e == SSL_ERROR_SYSCALL &&
                  (saved_errno == 0 || saved_errno == ECONNRESET || saved_errno == EPIPE));
    if (closed && !handshake && !n->received && n->tls_cert_requested)
        return closed_after_cert_request(n);
    if (closed && (e != SSL_ERROR_SYSCALL || saved_errno == 0))
        return cw_net_fail(n, CW_NET_EIO, "%s",
                           handshake ? "TLS: the server closed the connection during the handshake"
                                     : "Server closed the connection");
    if (e == SSL_ERROR_SYSCALL) return cw_net_fail(n, CW_NET_EIO, "%s", strerror(saved_errno));
    switch (reason) {
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_UNKNOWN_PROTOCOL:
    case SSL_R_HTTP_REQUEST:
        /* An HTTP server's error page is not a TLS record either: tell it from Redis. */
        if (handshake && cw_net_peer_answers_http(n, TLS_PROBE_MS))
            return cw_net_fail(n, CW_NET_ENOTREDIS, "TLS: " CW_NET_HTTP_MESSAGE);
        return cw_net_fail(n, CW_NET_ETLS,
                           "TLS: the server does not speak TLS (a plain redis:// port?)");
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
        return cw_net_fail(n, CW_NET_ETLS,
                           "TLS: the server requires a client certificate (cert= and key=)");
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
        return cw_net_fail(n, CW_NET_ETLS, "TLS: the server refused the client certificate (%s)",
                           why);
    default:
        return cw_net_fail(n, CW_NET_ETLS, "TLS: %s", why);
    }
}

/* Notes a CertificateRequest from the server (see closed_after_cert_request). */
static void watch_handshake(int write_p, int version, int content_type, const void *buf, size_t len,
                            SSL *ssl, void *arg)
{
    (void)version, (void)arg;
    if (!write_p && content_type == SSL3_RT_HANDSHAKE && len > 0 &&
        ((const unsigned char *)buf)[0] == SSL3_MT_CERTIFICATE_REQUEST) {
        cw_net *n = SSL_get_app_data(ssl);
        if (n) n->tls_cert_requested = 1;
    }
}

/* ---------------------------------------------------------------- configuration */

/* Never prompt on a terminal for a key's pass phrase: an encrypted key is an error. */
static int no_passphrase(char *buf, int size, int rwflag, void *ud)
{
    (void)buf, (void)size, (void)rwflag, (void)ud;
    return -1;
}

static int load_key(SSL_CTX *ctx, const char *key_file, cwork_error *err)
{
    unsigned long code = 0;
    int loaded = SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) == 1;
    const char *why = loaded ? NULL : ssl_reason(&code);
    int reason = ERR_GET_REASON(code);
    if (loaded && SSL_CTX_check_private_key(ctx) != 1) {
        ERR_clear_error();
        reason = X509_R_KEY_VALUES_MISMATCH;
    }
    if (!why && reason == 0) return 0;
    if (ERR_GET_LIB(code) != ERR_LIB_SYS &&
        (reason == X509_R_KEY_VALUES_MISMATCH || reason == X509_R_KEY_TYPE_MISMATCH))
        return cw_error(err, CWORK_EINVAL, "TLS: the key \"%.80s\" does not match the certificate",
                        key_file);
    return cw_error(err, CWORK_EINVAL,
                    "TLS: cannot load the key \"%.80s\" (it must be PEM, not encrypted): %s",
                    key_file, why);
}

int cw_tls_config_init(cw_tls_config *t, const char *ca_file, const char *cert_file,
                       const char *key_file, const char *sni, int verify, cwork_error *err)
{
    memset(t, 0, sizeof *t);
    t->verify = verify;
    ERR_clear_error();
    t->ctx = SSL_CTX_new(TLS_client_method());
    if (!t->ctx)
        return cw_error(err, CWORK_ENOMEM, "TLS: cannot create a context: %s", ssl_reason(NULL));
    SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    /* One read() takes in whatever arrived instead of a record header and then its
     * body; cw_tls_pending (SSL_has_pending) keeps counting what is buffered. */
    SSL_CTX_set_read_ahead(t->ctx, 1);
    SSL_CTX_set_verify(t->ctx, verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_default_passwd_cb(t->ctx, no_passphrase);
    int rc = 0;
    if (ca_file) {
        if (SSL_CTX_load_verify_locations(t->ctx, ca_file, NULL) != 1)
            rc = cw_error(err, CWORK_EINVAL, "TLS: cannot load the CA file \"%.80s\": %s", ca_file,
                          ssl_reason(NULL));
    } else if (SSL_CTX_set_default_verify_paths(t->ctx) != 1) {
        rc = cw_error(err, CWORK_EINVAL, "TLS: cannot load the system's CA store: %s",
                      ssl_reason(NULL));
    }
    if (rc == 0 && cert_file && SSL_CTX_use_certificate_chain_file(t->ctx, cert_file) != 1)
        rc = cw_error(err, CWORK_EINVAL, "TLS: cannot load the certificate \"%.80s\": %s",
                      cert_file, ssl_reason(NULL));
    if (rc == 0 && key_file) rc = load_key(t->ctx, key_file, err);
    if (rc == 0 && sni && !(t->sni = cw_strdup(sni)))
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    if (rc) cw_tls_config_clear(t);
    ERR_clear_error();
    return rc;
}

void cw_tls_config_clear(cw_tls_config *t)
{
    if (t->ctx) SSL_CTX_free(t->ctx);
    cw_free(t->sni);
    memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------- connections */

static int is_ip_literal(const char *s)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

int cw_tls_connect(cw_net *n, const cw_tls_config *t, const char *host, int connect_ms)
{
    pthread_once(&bio_once, make_bio_method);
    ERR_clear_error();
    SSL *ssl = bio_method ? SSL_new(t->ctx) : NULL;
    BIO *bio = ssl ? BIO_new(bio_method) : NULL;
    if (!bio) {
        if (ssl) SSL_free(ssl);
        ERR_clear_error();
        return cw_net_fail(n, CW_NET_ENOMEM, "out of memory");
    }
    BIO_set_data(bio, n);
    SSL_set_bio(ssl, bio, bio);
    SSL_set_app_data(ssl, n);
    SSL_set_msg_callback(ssl, watch_handshake);
    n->ssl = ssl;
    const char *name = t->sni ? t->sni : host;
    int ip = is_ip_literal(name);
    /* SNI carries host names only (RFC 6066); an IP address is checked against the
     * certificate's IP entries. */
    int ok = ip || SSL_set_tlsext_host_name(ssl, name) == 1;
    if (ok && t->verify) {
        X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name) == 1 : SSL_set1_host(ssl, name) == 1;
    }
    if (!ok) return cw_net_fail(n, CW_NET_ETLS, "TLS: cannot use the name \"%.60s\"", name);
    int64_t deadline = cw_net_deadline(connect_ms);
    for (;;) {
        ERR_clear_error();
        int rc = SSL_connect(ssl);
        if (rc == 1) {
            /* The CertificateRequest, if any, has been seen. */
            SSL_set_msg_callback(ssl, NULL);
            return 0;
        }
        int saved_errno = errno;
        int e = SSL_get_error(ssl, rc);
        short want = 0;
        if (e == SSL_ERROR_WANT_READ)
            want = POLLIN;
        else if (e == SSL_ERROR_WANT_WRITE)
            want = POLLOUT;
        if (!want) {
            long v = SSL_get_verify_result(ssl);
            if (t->verify && v != X509_V_OK) {
                ERR_clear_error();
                return verify_failed(n, v, name);
            }
            return ssl_failed(n, e, saved_errno, 1);
        }
        int ready = cw_net_wait(n->fd, want, deadline);
        if (ready < 0) return cw_net_fail(n, CW_NET_EIO, "poll: %s", strerror(errno));
        /* A plain Redis reads the ClientHello as an inline command and waits for its
         * end of line, so the handshake just hangs. */
        if (ready == 0)
            return cw_net_fail(n, CW_NET_ETLS,
                               "TLS: no answer to the handshake within %d ms (a plain redis:// "
                               "port?)",
                               connect_ms);
    }
}

ssize_t cw_tls_read(cw_net *n, char *p, size_t len, short *want)
{
    ERR_clear_error();
    int r = SSL_read(n->ssl, p, len > INT_MAX ? INT_MAX : (int)len);
    if (r > 0) return r;
    int saved_errno = errno;
    int e = SSL_get_error(n->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        *want = POLLOUT;
        if (e == SSL_ERROR_WANT_READ) *want = POLLIN;
        return 0;
    }
    return ssl_failed(n, e, saved_errno, 0);
}

ssize_t cw_tls_write(cw_net *n, const char *p, size_t len, short *want)
{
    ERR_clear_error();
    int w = SSL_write(n->ssl, p, len > INT_MAX ? INT_MAX : (int)len);
    if (w > 0) return w;
    int saved_errno = errno;
    int e = SSL_get_error(n->ssl, w);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        *want = POLLOUT;
        if (e == SSL_ERROR_WANT_READ) *want = POLLIN;
        return 0;
    }
    return ssl_failed(n, e, saved_errno, 0);
}

void cw_tls_moved(cw_net *n)
{
    SSL_set_app_data(n->ssl, n);
    BIO *bio = SSL_get_rbio(n->ssl); /* read and write are the same BIO */
    if (bio) BIO_set_data(bio, n);
}

int cw_tls_pending(cw_net *n)
{
    /* Records read ahead but not yet decrypted count too, not only SSL_pending's. */
    return SSL_has_pending(n->ssl);
}

int cw_tls_idle_ok(cw_net *n)
{
    char c;
    ERR_clear_error();
    int r = SSL_read(n->ssl, &c, 1);
    int e = r > 0 ? SSL_ERROR_NONE : SSL_get_error(n->ssl, r);
    ERR_clear_error();
    return r <= 0 && (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE);
}

void cw_tls_close(cw_net *n)
{
    ERR_clear_error();
    if (!n->err) SSL_shutdown(n->ssl); /* one non-blocking try at close_notify */
    SSL_free(n->ssl);
    n->ssl = NULL;
    ERR_clear_error();
}
