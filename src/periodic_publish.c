/* Publishing a pool's periodic jobs for dashboards (<p>cwork:periodic, cwork's own
 * key): Go pools publish nothing, so a dashboard would otherwise only learn of a
 * schedule from the instances written a few minutes ahead of their fire time. */
#include "periodic.h"

#include "argv.h"
#include "gojson.h"
#include "log.h"

#include <stdio.h>
#include <string.h>

void cw_periodic_publish(cw_periodic *p, cw_conn *c, const cw_keys *keys, int64_t now)
{
    size_t n = cw_periodic_count(p);
    if (n == 0) return;
    /* HSET key, then field and value of each job. */
    cw_argv a = {0};
    cw_argv_add_str(&a, "HSET");
    cw_buf b;
    cw_buf_init(&b);
    cw_key_periodic_published(keys, &b);
    cw_argv_add_buf(&a, &b);
    for (size_t i = 0; i < n; i++) {
        const char *name = cw_periodic_name(p, i), *spec = cw_periodic_spec(p, i);
        cw_buf_reset(&b);
        cw_buf_putc(&b, '[');
        cw_gj_encode_string(&b, name, strlen(name));
        cw_buf_putc(&b, ',');
        cw_gj_encode_string(&b, spec, strlen(spec));
        cw_buf_puts(&b, "]");
        cw_argv_add_buf(&a, &b);
        cw_buf_reset(&b);
        cw_buf_printf(&b, "{\"next_at\":%lld,\"seen_at\":%lld}",
                      (long long)cw_cron_next(cw_periodic_schedule(p, i), now), (long long)now);
        cw_argv_add_buf(&a, &b);
    }
    cwork_error err = {0};
    int rc = cw_argv_check(&a, &err);
    if (rc == 0) {
        /* The EXPIRE only after the HSET worked: on a key of another type (someone
         * else's) it would set a TTL on their data. */
        rc = cw_conn_command(c, (int)a.n, a.argv, a.lens, NULL, &err);
        char ttl[16];
        snprintf(ttl, sizeof ttl, "%d", CW_PERIODIC_PUBLISHED_TTL);
        const char *expire[] = {"EXPIRE", a.argv[1], ttl};
        size_t expire_lens[] = {6, a.lens[1], strlen(ttl)};
        if (rc == 0) rc = cw_conn_command(c, 3, expire, expire_lens, NULL, &err);
    }
    if (rc) cw_log(CWORK_LOG_WARN, "periodic_enqueuer.publish", "error", err.message, NULL);
    cw_argv_free(&a);
    cw_buf_free(&b);
}
