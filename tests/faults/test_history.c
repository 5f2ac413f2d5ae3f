/* The fault suite's history checker on small made-up histories: each case is a log, the
 * enqueues and faults, and the verdicts the checker must reach. */
#include "history.h"
#include "testlib.h"

#include <stdlib.h>

typedef struct hcase {
    const char *what;
    const char *log;
    const char *enqueued; /* "id:status id:status" with status o(k), f(ailed), u(nknown) */
    const char *faults;   /* "K:pool:at S:pool:at:until" */
    size_t lost, ran_not_written, duplicates, unexplained, unrecovered;
    long long longest; /* longest recovery, ms */
    int max_seen, exceeded;
} hcase;

static const hcase cases[] = {
    {"a clean run", "S a fast p1 100\nE a fast p1 150\n", "a:o", "", 0, 0, 0, 0, 0, 0, 0, 0},
    {"written and never run: lost", "", "a:o b:u", "", 1, 0, 0, 0, 0, 0, 0, 0},
    {"started, never ended: lost", "S b fast p1 100\n", "b:u", "", 1, 0, 0, 0, 0, 0, 0, 0},
    {"a failed enqueue that ran", "S a fast p1 100\nE a fast p1 110\n", "a:f", "", 0, 1, 0, 0, 0, 0,
     0, 0},
    {"a rerun without a fault: unexplained",
     "S a fast p1 100\nE a fast p1 110\nS a fast p2 200\nE a fast p2 210\n", "a:o", "", 0, 0, 1, 1,
     0, 0, 0, 0},
    {"a rerun after its pool was killed mid-run",
     "S a fast p1 100\nS a fast p2 9100\nE a fast p2 9150\n", "a:o", "K:p1:500", 0, 0, 1, 0, 0,
     8600, 0, 0},
    {"a command forked just before the kill writes its start just after it",
     "S a fast p1 510\nS a fast p2 9100\nE a fast p2 9150\n", "a:o", "K:p1:500", 0, 0, 1, 0, 0,
     8600, 0, 0},
    {"a rerun after its pool was killed right after the end (uncommitted)",
     "S a fast p1 100\nE a fast p1 110\nS a fast p2 9000\nE a fast p2 9010\n", "a:o", "K:p1:130", 0,
     0, 1, 0, 0, 0, 0, 0},
    {"killed mid-run and never rerun: lost and unrecovered", "S a fast p1 100\n", "a:o", "K:p1:500",
     1, 0, 0, 0, 1, 0, 0, 0},
    {"a stopped pool's job rerun elsewhere, its command ending during the stop",
     "S a fast p1 100\nE a fast p1 3000\nS a fast p2 12000\nE a fast p2 12100\n", "a:o",
     "S:p1:500:20000", 0, 0, 1, 0, 0, 11500, 0, 0},
    {"a stopped pool's job not rerun before SIGCONT: unrecovered",
     "S a fast p1 100\nE a fast p1 3000\n", "a:o", "S:p1:500:20000", 0, 0, 0, 0, 1, 0, 0, 0},
    {"recovery past the bound: unrecovered",
     "S a fast p1 100\nS a fast p2 30600\nE a fast p2 30700\n", "a:o", "K:p1:500", 0, 0, 1, 0, 1,
     30100, 0, 0},
    {"three limited runs at once: exceeded",
     "S a lim p1 100\nS b lim p2 110\nS c lim p3 120\nE a lim p1 200\nE b lim p2 200\n"
     "E c lim p3 200\n",
     "a:o b:o c:o", "", 0, 0, 0, 0, 0, 0, 3, 1},
    {"back to back at one millisecond: two at most",
     "S a lim p1 100\nS b lim p2 110\nE a lim p1 200\nS c lim p3 200\nE b lim p2 300\n"
     "E c lim p3 300\n",
     "a:o b:o c:o", "", 0, 0, 0, 0, 0, 0, 2, 0},
    {"a stopped pool's prefetched job: the put-back copy runs first, its own command when "
     "let go",
     "S a lim p2 15000\nE a lim p2 15100\nS a lim p1 20100\nE a lim p1 20200\n", "a:o",
     "S:p1:1000:20000", 0, 0, 1, 0, 0, 14000, 1, 0},
    {"two reruns after one fault: one unexplained",
     "S a fast p1 100\nS a fast p2 9100\nE a fast p2 9150\nS a fast p3 9200\nE a fast p3 9250\n",
     "a:o", "K:p1:500", 0, 0, 2, 1, 0, 8600, 0, 0},
    {"an orphaned command of a stopped pool does not count past the stop",
     "S a lim p1 100\nS b lim p2 110\nS a lim p3 15000\nE a lim p1 16000\nE b lim p2 16000\n"
     "E a lim p3 16100\n",
     "a:o b:o", "S:p1:1000:30000", 0, 0, 1, 0, 0, 14000, 2, 0},
    {"a run its pool stopped on losing its lease, taken up again by that pool: the end is "
     "the second run's, the first never ended",
     "S a lim p1 100\nS a lim p1 1100\nE a lim p1 1150\nS b lim p2 1200\nS c lim p3 1300\n"
     "E b lim p2 1400\nE c lim p3 1500\n",
     "a:o b:o c:o", "L:p1:80", 0, 0, 1, 0, 0, 1020, 2, 0},
    {"a run in flight at a failover runs again on the promoted replica",
     "S a fast p1 100\nE a fast p1 300\nS a fast p2 3000\nE a fast p2 3050\n", "a:o",
     "R:p1:200 R:p2:200", 0, 0, 1, 0, 0, 2800, 0, 0},
    {"a run long finished before a failover runs again: unexplained",
     "S a fast p1 100\nE a fast p1 110\nS a fast p2 6000\nE a fast p2 6010\n", "a:o",
     "R:p1:4000 R:p2:4000", 0, 0, 1, 1, 0, 0, 0, 0},
};

static size_t parse_enqueued(const char *s, fh_enqueue *out)
{
    size_t n = 0;
    while (*s) {
        fh_enqueue *e = &out[n++];
        memset(e, 0, sizeof *e);
        size_t len = strcspn(s, ":");
        memcpy(e->id, s, len);
        s += len + 1;
        e->status = *s == 'o' ? FH_ENQ_OK : *s == 'f' ? FH_ENQ_FAILED : FH_ENQ_UNKNOWN;
        strcpy(e->name, "x");
        s++;
        while (*s == ' ')
            s++;
    }
    return n;
}

static size_t parse_faults(const char *s, fh_fault *out)
{
    size_t n = 0;
    while (*s) {
        fh_fault *f = &out[n++];
        memset(f, 0, sizeof *f);
        char pool[16];
        long long at = 0, until = 0;
        int used = 0;
        if (sscanf(s, "%c:%15[^:]:%lld%n", &f->kind, pool, &at, &used) < 3) abort();
        s += used;
        if (*s == ':') {
            sscanf(s + 1, "%lld%n", &until, &used);
            s += 1 + used;
        }
        strcpy(f->pool, pool);
        f->at_ms = at;
        f->until_ms = until;
        while (*s == ' ')
            s++;
    }
    return n;
}

static void verdicts_of_small_histories(void)
{
    static const fh_limit limits[] = {{"lim", 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const hcase *c = &cases[i];
        fh_enqueue enq[8];
        fh_fault faults[8];
        size_t nenq = parse_enqueued(c->enqueued, enq), nf = parse_faults(c->faults, faults);
        fh_event *ev = NULL;
        size_t nev = 0, bad = 0;
        CHECK_INT(fh_parse_log(c->log, strlen(c->log), &ev, &nev, &bad), 0);
        CHECK_INT(bad, 0);
        fh_report r;
        fh_check(enq, nenq, ev, nev, faults, nf, limits, 1, 15000, &r);
        if (r.lost != c->lost || r.ran_not_written != c->ran_not_written ||
            r.duplicates != c->duplicates || r.unexplained != c->unexplained ||
            r.unrecovered != c->unrecovered || r.longest_recovery_ms != c->longest ||
            r.max_seen != c->max_seen || r.max_exceeded != c->exceeded)
            tl_fail(__FILE__, __LINE__,
                    "%s: lost %zu, not written %zu, dups %zu, unexplained %zu, unrecovered %zu, "
                    "longest %lld, max %d, exceeded %d",
                    c->what, r.lost, r.ran_not_written, r.duplicates, r.unexplained, r.unrecovered,
                    r.longest_recovery_ms, r.max_seen, r.max_exceeded);
        free(ev);
    }
}

static void malformed_lines_are_counted(void)
{
    const char log[] = "S a fast p1 100\nX nonsense\nS a fast\nE a fast p1 1 extra\nE a fast p1 5";
    fh_event *ev = NULL;
    size_t n = 0, bad = 0;
    CHECK_INT(fh_parse_log(log, strlen(log), &ev, &n, &bad), 0);
    CHECK_INT(n, 1);
    CHECK_INT(bad, 4);
    free(ev);
}

int main(void)
{
    RUN(verdicts_of_small_histories);
    RUN(malformed_lines_are_counted);
    return tl_finish();
}
