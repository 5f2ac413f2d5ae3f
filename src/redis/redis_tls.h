/* TLS for the transport, through OpenSSL: one SSL_CTX per cwork_redis (CA, client
 * certificate, verification), one SSL per connection over a BIO of our own that writes
 * with MSG_NOSIGNAL. Errors say what failed: an unknown CA, a name mismatch, an expired
 * certificate, a server that does not speak TLS, a missing client certificate. */
#ifndef CWORK_REDIS_TLS_H
#define CWORK_REDIS_TLS_H

#include "redis_net.h"

#include <sys/types.h>

/* What a pool's TLS connections share, made from the URL's parameters. */
typedef struct cw_tls_config {
    SSL_CTX *ctx;
    char *sni;  /* sni=: the name sent and verified instead of the dialled host */
    int verify; /* 0: no verification at all (verify=0) */
} cw_tls_config;

/* Loads the CA (ca_file, else the system's store) and the client certificate (both
 * cert_file and key_file, or neither). Errors name the file and what is wrong with it.
 * 0 or CWORK_EINVAL/CWORK_ENOMEM. */
int cw_tls_config_init(cw_tls_config *t, const char *ca_file, const char *cert_file,
                       const char *key_file, const char *sni, int verify, cwork_error *err);
void cw_tls_config_clear(cw_tls_config *t);

/* The TLS handshake on n's connected socket, within connect_ms. host is what was
 * dialled (a name or an IP address): the certificate must be for it (or for sni=).
 * 0, or -1 with n->err = CW_NET_ETLS and errstr saying what failed. */
int cw_tls_connect(cw_net *n, const cw_tls_config *t, const char *host, int connect_ms);

/* redis_net.c's raw I/O for TLS connections: >0 bytes, 0 (wait for *want), -1. */
ssize_t cw_tls_read(cw_net *n, char *p, size_t len, short *want);
ssize_t cw_tls_write(cw_net *n, const char *p, size_t len, short *want);
/* n was moved (struct copy): the SSL's back pointer follows. */
void cw_tls_moved(cw_net *n);
/* Non-zero while OpenSSL holds bytes read from the socket that were not returned yet
 * (decrypted or not). */
int cw_tls_pending(cw_net *n);
/* cw_net_idle_ok for a readable TLS socket: 1 if only records without data arrived. */
int cw_tls_idle_ok(cw_net *n);
/* Sends close_notify when the connection is healthy, frees the SSL. */
void cw_tls_close(cw_net *n);

#endif
