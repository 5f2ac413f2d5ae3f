/* What the focused fault tests (fault_freeze.c, fault_partition.c) share: verdicts, one
 * job's runs read back from the history log, and an enqueue the checker knows of. */
#include "faults.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fr_failures;

void fr_verdict(int ok, const char *what, long long v)
{
    printf("  [%s] %s (%lld)\n", ok ? "ok" : "FAIL", what, v);
    if (!ok) fr_failures++;
}

size_t fr_read_runs(world *w, const char *key, fr_run *runs, size_t cap)
{
    size_t len = 0, nev = 0, bad = 0, n = 0;
    char *text = tl_read_file(w->log_path, &len);
    fh_event *ev = NULL;
    if (!text || fh_parse_log(text, len, &ev, &nev, &bad) != 0) {
        free(text);
        return 0;
    }
    for (size_t i = 0; i < nev; i++) {
        if (strcmp(ev[i].id, key) != 0) continue;
        if (ev[i].kind == 'S' && n < cap) {
            snprintf(runs[n].pool, sizeof runs[n].pool, "%s", ev[i].pool);
            runs[n].start = ev[i].t_ms, runs[n++].end = -1;
        } else if (ev[i].kind == 'E') {
            for (size_t k = 0; k < n; k++)
                if (!strcmp(runs[k].pool, ev[i].pool) && runs[k].end < 0) {
                    runs[k].end = ev[i].t_ms;
                    break;
                }
        }
    }
    free(ev);
    free(text);
    return n;
}

void fr_enqueue(world *w, const char *key, long ms)
{
    char job[256];
    snprintf(job, sizeof job,
             "{\"name\":\"limited\",\"id\":\"%s\",\"t\":%lld,\"args\":{\"key\":\"%s\",\"ms\":%ld}}",
             key, fw_now_ms() / 1000, key, ms);
    redisReply *r = fw_cmd(w, "LPUSH %s:jobs:limited %s", w->ns, job);
    if (r) freeReplyObject(r);
    pthread_mutex_lock(&w->mu); /* the checker's record of what was written */
    if (w->nenq == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 16;
        w->enq = realloc(w->enq, w->cap * sizeof *w->enq);
    }
    fh_enqueue *e = &w->enq[w->nenq++];
    memset(e, 0, sizeof *e);
    snprintf(e->id, sizeof e->id, "%s", key);
    snprintf(e->name, sizeof e->name, "limited");
    e->status = r ? FH_ENQ_OK : FH_ENQ_UNKNOWN;
    e->at_ms = fw_now_ms();
    pthread_mutex_unlock(&w->mu);
}
