/* --shard N for the commands outside the admin table (doctor, result, succeeded, batch):
 * shard N of a sharded namespace alone, through the client's per-shard view
 * (cwork_client_shard; PROTOCOL §27). Without it they see the whole namespace. */
#include "cli.h"
#include "opt.h"

#include <stdio.h>
#include <string.h>

int cli_set_shard(void *opts, const char *value, const cli_opt_ctx *ctx)
{
    uint64_t v = 0;
    if (cli_opt_uint(ctx, value, 0, 1023, "a shard number from 0 to 1023", &v) != 0) return -1;
    *(long *)((char *)opts + ctx->opt->field) = (long)v;
    return 0;
}

cwork_client *cli_shard_view(cwork_client *client, long shard, cwork_error *err)
{
    if (!client || shard < 0) return client;
    return cwork_client_shard(client, (unsigned)shard, err);
}

void cli_shard_ns(const char *ns, unsigned i, char *out, size_t size)
{
    size_t len = strlen(ns);
    if (i == 0)
        snprintf(out, size, "%s", ns);
    else if (len >= 2 && ns[0] == '{' && ns[len - 1] == '}')
        snprintf(out, size, "{%.*s.%u}", (int)(len - 2), ns + 1, i);
    else
        snprintf(out, size, "{%s.%u}", ns, i);
}
