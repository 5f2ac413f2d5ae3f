/* After `cwork enqueue`: a job whose type no worker pool has registered sits waiting
 * without a word — a typo ("slwo") creates a queue nobody serves. The pools' heartbeats
 * list what they run (PROTOCOL §6), so the command says so on stderr, with the closest
 * registered name when one is near. A warning only: enqueueing before the pools start is
 * normal, and the exit status stays what the enqueue gave. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every job name the namespace's pools list, deduplicated (NULL-terminated, the caller
 * frees the array; the strings belong to pools), and how many pools there are. */
static const char **served_names(cwork_pool_heartbeat *pools, size_t npools)
{
    size_t total = 0;
    for (size_t i = 0; i < npools; i++)
        total += pools[i].n_job_names;
    const char **names = calloc(total + 1, sizeof *names);
    size_t n = 0;
    for (size_t i = 0; names && i < npools; i++)
        for (size_t j = 0; j < pools[i].n_job_names; j++) {
            const char *name = pools[i].job_names[j];
            size_t k = 0;
            while (k < n && strcmp(names[k], name) != 0)
                k++;
            if (k == n) names[n++] = name;
        }
    return names;
}

void cli_warn_unserved(cwork_redis *redis, const char *ns, const char *const *names, size_t n)
{
    cwork_client *client = cwork_client_new(redis, ns, NULL);
    cwork_pool_heartbeat *pools = NULL;
    size_t npools = 0;
    if (!client || cwork_client_pools(client, &pools, &npools, NULL) != 0) {
        cwork_client_free(client); /* no hint rather than a second error */
        return;
    }
    const char **served = served_names(pools, npools);
    for (size_t i = 0; served && i < n; i++) {
        size_t k = 0;
        while (served[k] && strcmp(served[k], names[i]) != 0)
            k++;
        if (served[k]) continue;
        const char *near = cli_suggest(names[i], served);
        if (npools == 0)
            fprintf(stderr,
                    "cwork enqueue: warning: no worker pool runs in namespace %s: the %s job "
                    "waits until a pool that registers %s starts\n",
                    ns, names[i], names[i]);
        else if (near)
            fprintf(stderr,
                    "cwork enqueue: warning: no worker pool has registered %s; did you mean "
                    "%s? (the job waits until a pool registers %s)\n",
                    names[i], near, names[i]);
        else
            fprintf(stderr,
                    "cwork enqueue: warning: no worker pool has registered %s: the job waits "
                    "until one does (see cwork pools)\n",
                    names[i]);
    }
    free(served);
    cwork_pool_heartbeats_free(pools, npools);
    cwork_client_free(client);
}

int cli_near_job_name(cwork_client *client, const char *name, char *out, size_t size)
{
    /* The names the namespace knows: known_jobs and those of waiting, retry and dead
     * jobs (a sample), and those the pools register. */
    cwork_job_types types;
    cwork_pool_heartbeat *pools = NULL;
    size_t npools = 0;
    int found = 0;
    if (cwork_client_job_types(client, 1000, &types, NULL) != 0) return 0;
    if (cwork_client_pools(client, &pools, &npools, NULL) != 0) npools = 0;
    const char **served = served_names(pools, npools);
    size_t nserved = 0;
    while (served && served[nserved])
        nserved++;
    const char **names = calloc(types.n + nserved + 1, sizeof *names);
    if (names) {
        for (size_t i = 0; i < types.n; i++)
            names[i] = types.types[i].job_name;
        for (size_t i = 0; i < nserved; i++)
            names[types.n + i] = served[i];
        const char *near = cli_suggest(name, names);
        if (near && strlen(near) < size) {
            memcpy(out, near, strlen(near) + 1);
            found = 1;
        }
    }
    free(names);
    free(served);
    cwork_pool_heartbeats_free(pools, npools);
    cwork_job_types_free(&types);
    return found;
}
