/* redis+sentinel://: the pool's connections go to the master the sentinels name.
 *
 * Every dial asks the sentinels in turn (starting with the last one that answered, so
 * that sentinels that are down are rotated past) for the master's address, connects to
 * it and checks with ROLE that it really is the master (right after a failover a
 * sentinel may still name the old one). A failover is followed without a restart:
 *  - connection loss: the connection is broken, the next dial asks the sentinels again;
 *  - a READONLY reply (the old master came back as a replica): the same;
 *  - +switch-master, which a watcher thread subscribes to on one sentinel: the pool's
 *    epoch moves on, and connections of an older epoch are closed instead of reused.
 * The sentinels' own credentials are sentinel_user= and sentinel_password= (or
 * cwork_redis_options.sentinel_password / CWORK_REDIS_SENTINEL_PASSWORD). */
#ifndef CWORK_REDIS_SENTINEL_H
#define CWORK_REDIS_SENTINEL_H

#include "redis_impl.h"

/* Sets up r->sentinel for r->addr (kind CW_REDIS_SENTINEL). 0 or CWORK_ENOMEM. */
int cw_sentinel_new(cwork_redis *r, cwork_error *err);
/* Stops the watcher and frees r->sentinel. NULL is ignored. */
void cw_sentinel_free(cwork_redis *r);
/* redis.c's dial for a sentinel URL. */
int cw_sentinel_dial(cwork_redis *r, int probe, cw_conn **out, int *transient, cwork_error *err);

/* Parses a +switch-master message ("NAME OLD_IP OLD_PORT NEW_IP NEW_PORT"): 1 with the
 * new address in host/port when it is about master_name, else 0. Pure, for tests. */
int cw_sentinel_parse_switch(const char *msg, size_t len, const char *master_name, char *host,
                             size_t host_size, int *port);

#endif
