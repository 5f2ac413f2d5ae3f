/* Which Redis server holds a shard, for GET /shards and the UI's Shards panel: the
 * address of the server one of the shard's connections is open to ("host:port",
 * "[v6]:port" or "unix:PATH"). In a Redis Cluster a shard's handle talks to the master
 * of its slot, so this names the master that holds the shard now. It costs no round
 * trip: the connection is one the shard's views use anyway. */
#include "web.h"

#include "client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

static void peer_name(int fd, char *out, size_t size)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    memset(&ss, 0, sizeof ss);
    if (fd < 0 || getpeername(fd, (struct sockaddr *)&ss, &len) != 0) return;
    char host[INET6_ADDRSTRLEN] = "";
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
        if (inet_ntop(AF_INET, &a->sin_addr, host, sizeof host))
            snprintf(out, size, "%s:%u", host, (unsigned)ntohs(a->sin_port));
    } else if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
        if (inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host))
            snprintf(out, size, "[%s]:%u", host, (unsigned)ntohs(a->sin6_port));
    } else if (ss.ss_family == AF_UNIX) {
        const struct sockaddr_un *a = (const struct sockaddr_un *)&ss;
        snprintf(out, size, "unix:%.*s", (int)sizeof a->sun_path, a->sun_path);
    }
}

void cw_web_shard_node(cwork_client *shard, char *out, size_t size)
{
    out[0] = '\0';
    cw_conn *c = NULL;
    cwork_error err = {0};
    if (!shard || cw_redis_checkout(shard->redis, &c, &err) != 0) return; /* unknown: "" */
    peer_name(cw_conn_fd(c), out, size);
    cw_redis_checkin(shard->redis, c);
}
