/* The fault suite's history checker (see history.h). */
#include "history.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the log */

static int field(const char **p, const char *end, char *out, size_t cap)
{
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    size_t n = 0;
    while (s + n < end && s[n] != ' ' && s[n] != '\n')
        n++;
    if (n == 0 || n >= cap) return -1;
    memcpy(out, s, n);
    out[n] = '\0';
    *p = s + n;
    return 0;
}

int fh_parse_log(const char *text, size_t len, fh_event **events, size_t *n, size_t *bad)
{
    size_t cap = 1;
    for (size_t i = 0; i < len; i++)
        cap += text[i] == '\n';
    *events = malloc(cap * sizeof **events);
    *n = 0;
    *bad = 0;
    if (!*events) return -1;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) { /* a torn last line: a job killed mid-write cannot do that (one write) */
            (*bad)++;
            break;
        }
        fh_event e;
        memset(&e, 0, sizeof e);
        char t[32];
        const char *q = p + 1;
        if ((*p == 'S' || *p == 'E') && field(&q, eol, e.id, sizeof e.id) == 0 &&
            field(&q, eol, e.name, sizeof e.name) == 0 &&
            field(&q, eol, e.pool, sizeof e.pool) == 0 && field(&q, eol, t, sizeof t) == 0 &&
            q == eol) {
            e.kind = *p;
            e.t_ms = atoll(t);
            (*events)[(*n)++] = e;
        } else {
            (*bad)++;
        }
        p = eol + 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- sorting */

static const fh_event *sort_events_base;

static int by_time(const void *a, const void *b)
{
    const fh_event *x = a, *y = b;
    if (x->t_ms != y->t_ms) return x->t_ms < y->t_ms ? -1 : 1;
    return (x->kind == 'S') - (y->kind == 'S'); /* ends first at one millisecond */
}

static int by_id_then_index(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = strcmp(sort_events_base[i].id, sort_events_base[j].id);
    return c ? c : (i > j) - (i < j);
}

static int enq_by_id(const void *a, const void *b)
{
    return strcmp(((const fh_enqueue *)a)->id, ((const fh_enqueue *)b)->id);
}

/* ---------------------------------------------------------------- runs */

typedef struct run {
    const fh_event *s, *e; /* e NULL: never ended */
    int cut;               /* index of the fault that hit it while its command ran, or -1 */
    int unsure;            /* index of a fault soon after it ended (maybe uncommitted), or -1 */
} run;

/* The first fault of the run's pool that its command lived through: the command started
 * before the fault ended (a stopped pool starts, when it is let go, the commands of jobs
 * it had fetched before) and had not ended when the fault began. -1 when none. */
static int fault_during(const fh_fault *f, size_t nf, const fh_event *s, const fh_event *e)
{
    int best = -1;
    for (size_t i = 0; i < nf; i++) {
        long long until =
            f[i].kind == 'S' && f[i].until_ms > f[i].at_ms ? f[i].until_ms : f[i].at_ms;
        if (!strcmp(f[i].pool, s->pool) && s->t_ms <= until + FH_START_SLACK_MS &&
            (!e || e->t_ms >= f[i].at_ms) && (best < 0 || f[i].at_ms < f[best].at_ms))
            best = (int)i;
    }
    return best;
}

/* A fault of the run's pool soon after its command ended, before the pool may have
 * committed it. -1 when none. */
static int fault_soon_after(const fh_fault *f, size_t nf, const fh_event *s, const fh_event *e)
{
    for (size_t i = 0; i < nf; i++)
        if (!strcmp(f[i].pool, s->pool) && f[i].at_ms >= e->t_ms &&
            f[i].at_ms <= e->t_ms + FH_COMMIT_SLACK_MS)
            return (int)i;
    return -1;
}

static void keep_id(char ids[FH_SHOWN][FH_ID], size_t count, const char *id)
{
    if (count < FH_SHOWN) {
        size_t n = strnlen(id, FH_ID - 1);
        memcpy(ids[count], id, n);
        ids[count][n] = '\0';
    }
}

/* Runs of one job (its events in time order). Returns the number of runs. A start's end
 * is the next end on its pool, unless the job starts on that pool again first: then the
 * run never ended (its command was killed, as when the pool lost its lease; the pool
 * took the job up again), and the end is the later run's. */
static size_t make_runs(const fh_event *const *ev, size_t n, const fh_fault *f, size_t nf,
                        run *runs)
{
    size_t nr = 0;
    unsigned char *used = calloc(n ? n : 1, 1);
    for (size_t i = 0; i < n; i++) {
        if (ev[i]->kind != 'S') continue;
        run r = {ev[i], NULL, -1, -1};
        for (size_t j = i + 1; j < n && used; j++) {
            if (strcmp(ev[j]->pool, ev[i]->pool) != 0 || used[j]) continue;
            if (ev[j]->kind == 'S') break;
            used[j] = 1;
            r.e = ev[j];
            break;
        }
        r.cut = fault_during(f, nf, r.s, r.e);
        if (r.cut < 0 && r.e) r.unsure = fault_soon_after(f, nf, r.s, r.e);
        runs[nr++] = r;
    }
    free(used);
    return nr;
}

/* ---------------------------------------------------------------- concurrency */

typedef struct edge {
    long long t;
    int delta;
} edge;

static int by_edge(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->delta - y->delta; /* ends (-1) before starts (+1) */
}

static int max_overlap(edge *e, size_t n)
{
    qsort(e, n, sizeof *e, by_edge);
    int cur = 0, best = 0;
    for (size_t i = 0; i < n; i++) {
        cur += e[i].delta;
        if (cur > best) best = cur;
    }
    return best;
}

/* ---------------------------------------------------------------- the check */

void fh_check(const fh_enqueue *enq_in, size_t nenq, fh_event *events, size_t nev,
              const fh_fault *faults, size_t nfaults, const fh_limit *limits, size_t nlimits,
              long long recovery_bound_ms, fh_report *out)
{
    memset(out, 0, sizeof *out);
    qsort(events, nev, sizeof *events, by_time);
    fh_enqueue *enq = malloc((nenq ? nenq : 1) * sizeof *enq);
    size_t *order = malloc((nev ? nev : 1) * sizeof *order);
    const fh_event **group = malloc((nev ? nev : 1) * sizeof *group);
    run *runs = malloc((nev ? nev : 1) * sizeof *runs);
    size_t per = 2 * nev + 1, nl = nlimits ? nlimits : 1;
    edge *edges = malloc(nl * per * sizeof *edges), *orphans = malloc(nl * per * sizeof *orphans);
    size_t *nedge = calloc(nl, sizeof *nedge), *norphan = calloc(nl, sizeof *norphan);
    if (!enq || !order || !group || !runs || !edges || !orphans || !nedge || !norphan) abort();
    memcpy(enq, enq_in, nenq * sizeof *enq);
    qsort(enq, nenq, sizeof *enq, enq_by_id);
    for (size_t i = 0; i < nenq; i++) {
        out->enqueued_ok += enq[i].status == FH_ENQ_OK;
        out->enqueued_failed += enq[i].status == FH_ENQ_FAILED;
        out->enqueued_unknown += enq[i].status == FH_ENQ_UNKNOWN;
    }
    for (size_t i = 0; i < nev; i++)
        order[i] = i;
    sort_events_base = events;
    qsort(order, nev, sizeof *order, by_id_then_index); /* stable within an id: by time */

    size_t k = 0; /* walks the enqueues, also sorted by id */
    for (size_t i = 0; i < nev || k < nenq;) {
        /* The next id: the smaller of the next event's and the next enqueue's. */
        const char *id;
        if (i < nev && (k >= nenq || strcmp(events[order[i]].id, enq[k].id) <= 0))
            id = events[order[i]].id;
        else
            id = enq[k].id;
        size_t n = 0;
        while (i < nev && !strcmp(events[order[i]].id, id))
            group[n++] = &events[order[i++]];
        const fh_enqueue *e = NULL;
        while (k < nenq && strcmp(enq[k].id, id) <= 0) {
            if (!strcmp(enq[k].id, id)) e = &enq[k];
            k++;
        }
        size_t nr = make_runs(group, n, faults, nfaults, runs);
        size_t ends = 0;
        for (size_t r = 0; r < nr; r++)
            ends += runs[r].e != NULL;
        out->runs += nr;
        out->jobs_run += nr > 0;
        if (ends == 0 && (nr > 0 || (e && e->status == FH_ENQ_OK)))
            keep_id(out->lost_ids, out->lost++, id);
        if (e && e->status == FH_ENQ_FAILED && nr > 0)
            keep_id(out->not_written_ids, out->ran_not_written++, id);
        /* Each run that a fault of its pool cut (or caught before its commit) lets a
         * reaper put the job back once: one extra start explained per such run. (The
         * extra start can come first: a stopped pool's own command may start only when
         * it is let go, after the put-back copy ran elsewhere.) */
        size_t affected = 0;
        for (size_t r = 0; r < nr; r++)
            affected += runs[r].cut >= 0 || runs[r].unsure >= 0;
        size_t dups = nr > 1 ? nr - 1 : 0, why = dups < affected ? dups : affected;
        out->duplicates += dups;
        out->explained += why;
        if (dups > why) keep_id(out->unexplained_ids, out->unexplained, id);
        out->unexplained += dups - why;
        /* Recovery of every run cut by a fault: the job's next start anywhere. */
        for (size_t r = 0; r < nr; r++) {
            if (runs[r].cut < 0) continue;
            out->interrupted++;
            const fh_fault *f = &faults[runs[r].cut];
            long long next = -1;
            for (size_t q = 0; q < nr && next < 0; q++)
                if (q != r && runs[q].s->t_ms >= f->at_ms) next = runs[q].s->t_ms;
            int in_time = next >= 0 && (f->kind != 'S' || next <= f->until_ms) &&
                          next - f->at_ms <= recovery_bound_ms;
            if (next >= 0) {
                out->recoveries++;
                if (next - f->at_ms > out->longest_recovery_ms)
                    out->longest_recovery_ms = next - f->at_ms;
            }
            if (!in_time) out->unrecovered++;
        }
        /* Concurrency edges for limited types. */
        for (size_t l = 0; l < nlimits && nr > 0; l++) {
            if (strcmp(runs[0].s->name, limits[l].name)) continue;
            for (size_t r = 0; r < nr; r++) {
                long long end = runs[r].e ? runs[r].e->t_ms : LLONG_MAX;
                long long cut = runs[r].cut >= 0 ? faults[runs[r].cut].at_ms : LLONG_MAX;
                /* (a run started after the fault began holds no slot at all) */
                long long held = end < cut ? end : cut;
                edge *ed = edges + l * per;
                ed[nedge[l]++] = (edge){runs[r].s->t_ms, 1};
                ed[nedge[l]++] = (edge){held > runs[r].s->t_ms ? held : runs[r].s->t_ms, -1};
                /* an orphaned command: a killed pool's died with it, a stopped pool's ran on */
                long long real = runs[r].e                                             ? end
                                 : runs[r].cut >= 0 && faults[runs[r].cut].kind == 'K' ? cut
                                                                                       : LLONG_MAX;
                edge *od = orphans + l * per;
                od[norphan[l]++] = (edge){runs[r].s->t_ms, 1};
                od[norphan[l]++] = (edge){real, -1};
            }
        }
    }
    for (size_t l = 0; l < nlimits; l++) {
        int seen = max_overlap(edges + l * per, nedge[l]);
        int orphan = max_overlap(orphans + l * per, norphan[l]);
        if (seen > out->max_seen) out->max_seen = seen;
        if (orphan > out->orphan_overlap) out->orphan_overlap = orphan;
        if (seen > limits[l].max) out->max_exceeded = 1;
    }
    free(nedge);
    free(norphan);
    free(enq);
    free(order);
    free(group);
    free(runs);
    free(edges);
    free(orphans);
}
