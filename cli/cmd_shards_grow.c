/* cwork shards grow S / cwork shards finish, and the grow's progress shown by cwork
 * shards (PROTOCOL §27.5): what still routes by the old count, and when the grow may end. */
#include "cli.h"
#include "cmd_admin.h"
#include "cmd_shards.h"

#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

int shards_take_positional(void *opts, const char *arg)
{
    admin_opts *o = opts;
    if (!o->arg && (strcmp(arg, "grow") == 0 || strcmp(arg, "finish") == 0)) {
        o->arg = arg;
        return 0;
    }
    if (o->arg && strcmp(o->arg, "grow") == 0 && !o->id) {
        o->id = arg;
        return 0;
    }
    fprintf(stderr, "%s: unexpected argument \"%s\" (grow S, finish, or none)\n", o->label, arg);
    return -1;
}

void shards_print_growth(const cwork_shards_growth *g, int json)
{
    if (json) {
        printf(",\"homes\":%u,\"from\":%u", g->homes, g->from);
        if (g->from)
            printf(",\"grow\":{\"guards\":%" PRId64 ",\"batches\":%" PRId64
                   ",\"wait_seconds\":%" PRId64 ",\"finishable\":%s}",
                   g->guards, g->batches, g->wait_seconds, g->finishable ? "true" : "false");
        return;
    }
    if (!g->from) {
        if (g->grown) printf("Names (pinned types, periodic jobs) route by %u shards.\n", g->homes);
        return;
    }
    if (g->count - g->from == 1)
        printf("\nGrowing from %u to %u shards (shard %u is new: see its POOLS).\n", g->from,
               g->count, g->from);
    else
        printf("\nGrowing from %u to %u shards (shards %u to %u are new: see their POOLS).\n",
               g->from, g->count, g->from, g->count - 1);
    printf("Left in the old shards, still routed there: %" PRId64 " unique guard%s, %" PRId64
           " open batch%s; forwarding window: %" PRId64 " s.\n",
           g->guards, g->guards == 1 ? "" : "s", g->batches, g->batches == 1 ? "" : "es",
           g->wait_seconds);
    printf("%s\n", g->finishable ? "Ready: `cwork shards finish` ends the grow."
                                 : "Not ready to finish yet.");
}

static int grow(const admin_opts *o, cwork_client *client)
{
    unsigned long to = 0;
    char *end = NULL;
    if (!o->id || !*o->id || (to = strtoul(o->id, &end, 10), *end) || o->id[0] == '-') {
        fprintf(stderr, "%s: grow needs a number of shards, got \"%s\"\n", o->label,
                o->id ? o->id : "");
        return CLI_USAGE;
    }
    cwork_error err = {0};
    unsigned before = 0;
    int rc = cwork_client_shards(client, &before, &err);
    if (rc == 0) rc = cwork_client_shards_grow(client, to > 1024 ? 1025 : (unsigned)to, &err);
    if (rc) return admin_fail(o, rc, &err);
    if (before == to)
        printf("%s already has %u shards: nothing changed.\n", o->conn.ns, before);
    else
        printf("%s grown from %u to %lu shards. Running enqueuers, pools and clients follow "
               "within 5 s; `cwork shards` shows the progress, `cwork shards finish` ends it.\n",
               o->conn.ns, before, to);
    return CLI_OK;
}

static int finish(const admin_opts *o, cwork_client *client)
{
    cwork_error err = {0};
    cwork_shards_growth g;
    int rc = cwork_client_shards_finish(client, &g, &err);
    if (rc) return admin_fail(o, rc, &err);
    if (g.count && !g.from && !g.grown)
        printf("%s: no grow in progress.\n", o->conn.ns);
    else
        printf("%s: the grow is finished (%u shards).\n", o->conn.ns, g.count);
    return CLI_OK;
}

int shards_action(const admin_opts *o, cwork_client *client)
{
    return strcmp(o->arg, "grow") == 0 ? grow(o, client) : finish(o, client);
}
