/* The executor budget shared by the inner pools of a sharded namespace's pool (see
 * pool_nsshards_budget.h for the rules). */
#include "pool_nsshards_budget.h"

#include <limits.h>

struct cw_nsshards_budget {
    cw_mutex mu; /* a leaf: taken under a shard mu, takes none */
    size_t total, used, peak;
    size_t nasking, nheld_back;
    size_t forced;          /* units taken over the total (a reclaim's jobs): 0 unless one came */
    cw_budget_seat **seats; /* every seat, for the fairness scan and wake-ups */
    size_t nseats;
    cw_budget_seat **blocks; /* each joined pool's seats (its `seats`), to free */
    size_t nblocks;
};

cw_nsshards_budget *cw_nsshards_budget_new(size_t total)
{
    cw_nsshards_budget *b = cw_calloc(1, sizeof *b);
    if (!b) return NULL;
    cw_mutex_init(&b->mu);
    b->total = total;
    return b;
}

void cw_nsshards_budget_free(cw_nsshards_budget *b)
{
    if (!b) return;
    for (size_t i = 0; i < b->nblocks; i++)
        cw_free(b->blocks[i]);
    cw_free(b->blocks);
    cw_free(b->seats);
    cw_mutex_destroy(&b->mu);
    cw_free(b);
}

int cw_nsshards_budget_join(cw_nsshards_budget *b, cwork_pool *q, cwork_error *err)
{
    cw_mutex_lock(&b->mu);
    cw_budget_seat *block = cw_calloc(q->nshards, sizeof *block);
    cw_budget_seat **seats = cw_realloc(b->seats, (b->nseats + q->nshards) * sizeof *seats);
    if (seats) b->seats = seats;
    cw_budget_seat **blocks = cw_realloc(b->blocks, (b->nblocks + 1) * sizeof *blocks);
    if (blocks) b->blocks = blocks;
    int rc = block && seats && blocks ? 0 : CWORK_ENOMEM;
    if (rc == 0) {
        b->blocks[b->nblocks++] = block;
        for (size_t i = 0; i < q->nshards; i++) {
            block[i].budget = b;
            block[i].shard = &q->shards[i];
            b->seats[b->nseats++] = &block[i];
        }
        q->seats = block;
    } else {
        cw_free(block);
    }
    cw_mutex_unlock(&b->mu);
    return rc ? cw_error(err, rc, "out of memory") : 0;
}

unsigned cw_nsshards_executors(unsigned n, unsigned s)
{
    if (s <= 1) return n;
    unsigned split = n / s + (n % s != 0);
    unsigned e = 4 * split;
    if (e < CW_NSSHARD_THREADS / s) e = CW_NSSHARD_THREADS / s;
    return e < n ? e : n;
}

void cw_nsshards_budget_usage(cw_nsshards_budget *b, size_t *used, size_t *peak)
{
    cw_mutex_lock(&b->mu);
    *used = b->used;
    *peak = b->peak;
    cw_mutex_unlock(&b->mu);
}

/* ---------------------------------------------------------------- the rules */

static void set_asking(cw_budget_seat *s, bool asking)
{
    cw_nsshards_budget *b = s->budget;
    if (s->asking == asking) return;
    s->asking = asking;
    if (asking) {
        b->nasking++;
    } else {
        b->nasking--;
        s->owes_wake = true;
    }
}

static void set_held_back(cw_budget_seat *s, bool held_back)
{
    if (s->held_back == held_back) return;
    s->held_back = held_back;
    if (held_back)
        s->budget->nheld_back++;
    else
        s->budget->nheld_back--;
}

/* How many units s may take now (caller holds b->mu): its equal share of the total
 * among the asking seats (itself counted), less what it holds, within what is free. */
static size_t room_of(const cw_budget_seat *s, int64_t now_us)
{
    const cw_nsshards_budget *b = s->budget;
    size_t free = b->total > b->used ? b->total - b->used : 0;
    if (free == 0) return 0;
    size_t asking = b->nasking + !s->asking;
    size_t share = b->total / asking;
    if (share < 1) share = 1;
    if (s->held < share) return share - s->held < free ? share - s->held : free;
    /* Capped by its share while units are free: the asking seats whose round trip is
     * stuck (a master slow or gone) do not count. Only this case pays for the scan. */
    size_t stalled = 0;
    for (size_t i = 0; i < b->nseats; i++) {
        const cw_budget_seat *o = b->seats[i];
        if (o != s && o->asking && o->trip_since_us &&
            now_us - o->trip_since_us > CW_BUDGET_STALL_US)
            stalled++;
    }
    if (stalled == 0) return 0;
    share = b->total / (asking - stalled);
    if (share < 1) share = 1;
    if (s->held >= share) return 0;
    return share - s->held < free ? share - s->held : free;
}

size_t cw_budget_sync(cw_budget_seat *s, size_t taken, int64_t now_us, bool *wake_others)
{
    cw_nsshards_budget *b = s->budget;
    cw_mutex_assert_held(&s->shard->mu);
    cw_mutex_lock(&b->mu);
    bool released = false;
    if (s->held > taken) {
        b->used -= s->held - taken;
        released = true;
    } else if (s->held < taken) {
        /* Jobs no fetch reserved: a reclaim took up what a lost reply left in
         * in-progress. They are this pool's to run; the budget is overdrawn until they
         * finish. */
        b->forced += taken - s->held;
        b->used += taken - s->held;
        if (b->used > b->peak) b->peak = b->used;
    }
    s->held = taken;
    CW_ASSERT(b->used <= b->total || b->forced > 0);
    *wake_others = b->nheld_back > s->held_back && (released || s->owes_wake);
    s->owes_wake = false;
    size_t room = room_of(s, now_us);
    cw_mutex_unlock(&b->mu);
    return room;
}

size_t cw_budget_reserve(cw_budget_seat *s, size_t want, int64_t now_us)
{
    cw_nsshards_budget *b = s->budget;
    cw_mutex_assert_held(&s->shard->mu);
    cw_mutex_lock(&b->mu);
    size_t room = room_of(s, now_us);
    size_t got = want < room ? want : room;
    s->held += got;
    b->used += got;
    if (b->used > b->peak) b->peak = b->used;
    CW_ASSERT(b->used <= b->total || b->forced > 0); /* the invariant: at most N */
    if (got) {
        s->trip_since_us = now_us ? now_us : 1;
        set_held_back(s, false);
    }
    cw_mutex_unlock(&b->mu);
    return got;
}

void cw_budget_after(cw_budget_seat *s, size_t fetch, size_t got, bool ok)
{
    cw_nsshards_budget *b = s->budget;
    cw_mutex_assert_held(&s->shard->mu);
    if (!fetch) return; /* a commit alone says nothing of the queues */
    cw_mutex_lock(&b->mu);
    s->trip_since_us = 0;
    /* A failed fetch asks for nothing: its master is not answering, and the others may
     * have its share meanwhile. Its reservation goes back at the next sync. */
    set_asking(s, ok && got >= fetch);
    cw_mutex_unlock(&b->mu);
}

bool cw_budget_held_back(cw_budget_seat *s, int64_t now_us)
{
    cw_nsshards_budget *b = s->budget;
    cw_mutex_assert_held(&s->shard->mu);
    cw_mutex_lock(&b->mu);
    set_asking(s, true);
    s->owes_wake = false; /* (it only started asking) */
    bool room = room_of(s, now_us) > 0;
    set_held_back(s, !room);
    cw_mutex_unlock(&b->mu);
    return room;
}

void cw_budget_leave(cw_budget_seat *s, bool *wake_others)
{
    cw_nsshards_budget *b = s->budget;
    cw_mutex_lock(&b->mu);
    b->used -= s->held;
    *wake_others = s->held > 0 || s->asking;
    s->held = 0;
    s->trip_since_us = 0;
    set_asking(s, false);
    set_held_back(s, false);
    s->owes_wake = false;
    *wake_others = *wake_others && b->nheld_back > 0;
    cw_mutex_unlock(&b->mu);
}

void cw_budget_wake(cw_budget_seat *s)
{
    cw_nsshards_budget *b = s->budget;
    /* The seats are never freed while a dispatcher runs, and the array only grows under
     * b->mu: copy the held-back ones out, then wake them without it. */
    cw_shard *wake[64];
    size_t from = 0;
    for (;;) {
        size_t n = 0;
        cw_mutex_lock(&b->mu);
        for (; from < b->nseats && n < sizeof wake / sizeof *wake; from++)
            if (b->seats[from] != s && b->seats[from]->held_back) wake[n++] = b->seats[from]->shard;
        bool more = from < b->nseats;
        cw_mutex_unlock(&b->mu);
        for (size_t i = 0; i < n; i++) {
            cw_mutex_lock(&wake[i]->mu);
            if (wake[i]->dispatcher_waiting) pthread_cond_signal(&wake[i]->disp_cond);
            cw_mutex_unlock(&wake[i]->mu);
        }
        if (!more) return;
    }
}
