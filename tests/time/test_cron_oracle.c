/* Differential test against real Go: random cron specs (fields with ranges, steps,
 * lists, names in any case, lenient numbers, '?', descriptors, @every durations,
 * TZ=/CRON_TZ= prefixes over zones chosen for their daylight-saving oddities, some
 * malformed) at random instants between 1900 and 2038 and at instants right around
 * the zones' transitions go through `$CWORK_GO_ORACLE cron` (robfig/cron v3.0.1 with
 * Go's time package) and through cw_cron_parse / cw_cron_next. Both must give the same
 * five successive fire times, or the same error text.
 *
 * The one allowed difference: specs that can never fire are refused by cwork (PROTOCOL
 * §16.12); Go accepts them and answers "never".
 *
 * The process's local zone (used by specs without TZ=) is picked from a list by the
 * seed and exported as TZ before anything reads it, so the oracle runs in the same
 * zone. Fails when the oracle cannot run (tl_oracle). CWORK_CRON_SEED replays a run;
 * the seed is printed. */
#include "testlib.h"

#include "cron.h"
#include "tzfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SPECS 8000
#define TIMES_PER_SPEC 3
#define FIRES 5

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12; /* xorshift64* */
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * UINT64_C(2685821657736338717);
}

static int below(int n)
{
    return (int)(rnd() % (uint64_t)n);
}

static int64_t between(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* Zones with gaps and overlaps at odd hours: midnight (Sao Paulo until 2019, Beirut,
 * Havana, Santiago, Amman, Gaza), 30-minute shifts (Lord Howe), negative DST (Dublin,
 * Casablanca), non-whole-minute offsets (Monrovia until 1972), a skipped day (Apia
 * 2011), a two-hour DST (Troll), 45-minute offsets (Chatham, Kathmandu). */
static const char *const zones[] = {"UTC",
                                    "America/New_York",
                                    "Europe/Berlin",
                                    "Australia/Lord_Howe",
                                    "America/Sao_Paulo",
                                    "Asia/Beirut",
                                    "America/Havana",
                                    "America/Santiago",
                                    "Asia/Amman",
                                    "Asia/Gaza",
                                    "Pacific/Chatham",
                                    "Pacific/Apia",
                                    "Africa/Casablanca",
                                    "Europe/Dublin",
                                    "Africa/Monrovia",
                                    "Antarctica/Troll",
                                    "Asia/Kathmandu",
                                    "America/St_Johns",
                                    "Asia/Tehran",
                                    "Europe/London",
                                    "EST5EDT",
                                    "Etc/GMT+5",
                                    "Local",
                                    ""};
#define NZONES (sizeof zones / sizeof zones[0])
static const char *const bad_zones[] = {"Nowhere/Zone",       "Europe",         "../etc/passwd",
                                        "America/New_York/x", "/etc/localtime", "zone.tab",
                                        "europe/berlin"};
static const char *const local_zones[] = {
    "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Sao_Paulo",
    "Asia/Beirut",      "UTC",           "Pacific/Chatham"};

static const char *const months[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                     "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const dows[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

typedef struct bnd {
    int min, max;
    const char *const *names;
} bnd;
static const bnd b_sec = {0, 59, NULL}, b_min = {0, 59, NULL}, b_hour = {0, 23, NULL},
                 b_dom = {1, 31, NULL}, b_mon = {1, 12, months}, b_dow = {0, 6, dows};

static void put_num(cw_buf *b, int v)
{
    int k = below(20);
    if (k == 0)
        cw_buf_putc(b, '+');
    else if (k == 1)
        cw_buf_putc(b, '0');
    cw_buf_printf(b, "%d", v);
}

static void put_value(cw_buf *b, const bnd *r, int v)
{
    if (r->names && v >= r->min && v <= r->max && below(3) == 0) {
        const char *nm = r->names[v - r->min];
        for (int i = 0; i < 3; i++) {
            char c = nm[i];
            if (below(3) == 0) c = (char)(c - 'a' + 'A');
            cw_buf_putc(b, c);
        }
        return;
    }
    put_num(b, v);
}

static int pick(const bnd *r)
{
    if (below(200) == 0) /* out of range now and then */
        return below(2) ? r->max + 1 + below(3) : r->min - 1;
    return (int)between(r->min, r->max);
}

static void gen_item(cw_buf *b, const bnd *r)
{
    int a = pick(r), c = pick(r);
    if (a < 0) a = 0;
    if (c < 0) c = 0;
    if (a > c && below(30) != 0) {
        int t = a;
        a = c;
        c = t;
    }
    int step = below(60) == 0 ? below(2) : 1 + below(r->max / 2 + 2);
    switch (below(9)) {
    case 0:
        cw_buf_putc(b, '*');
        break;
    case 1:
        cw_buf_putc(b, below(4) ? '*' : '?');
        break;
    case 2:
        cw_buf_printf(b, "*/%d", step);
        break;
    case 3:
    case 4:
        put_value(b, r, a);
        break;
    case 5:
        put_value(b, r, a), cw_buf_putc(b, '-'), put_value(b, r, c);
        break;
    case 6:
        put_value(b, r, a), cw_buf_putc(b, '-'), put_value(b, r, c);
        cw_buf_printf(b, "/%d", step);
        break;
    case 7:
        put_value(b, r, a), cw_buf_printf(b, "/%d", step);
        break;
    default:
        cw_buf_printf(b, "%c/%d", below(2) ? '*' : '?', below(40) ? 1 + below(3) : 0);
        break;
    }
}

static void gen_field(cw_buf *b, const bnd *r)
{
    if (below(150) == 0) { /* junk */
        static const char junk[] = "*?/-,0123456789abcxyzJAN";
        int n = 1 + below(5);
        for (int i = 0; i < n; i++)
            cw_buf_putc(b, junk[below((int)sizeof junk - 1)]);
        cw_buf_putc(b, 'x'); /* never only commas: an empty field makes Go search for
                                minutes (cwork refuses it at once, see test_cron) */
        return;
    }
    int items = below(4) == 0 ? 2 + below(2) : 1;
    for (int i = 0; i < items; i++) {
        if (i) cw_buf_puts(b, below(20) ? "," : ",,");
        gen_item(b, r);
    }
}

static void put_sep(cw_buf *b)
{
    static const char *const seps[] = {" ", " ", " ", "  ", "\v", "\xc2\xa0", "\xe3\x80\x80"};
    cw_buf_puts(b, seps[below(20) == 0 ? below(7) : 0]);
}

/* A spec aimed at the hours where clocks change. */
static void gen_dst_spec(cw_buf *b)
{
    static const char *const secs[] = {"0", "0", "*/20", "30", "0,59"};
    static const char *const mins[] = {"0", "30", "15", "45", "*/30", "*", "0,30", "59"};
    static const char *const hours[] = {"0", "1", "2", "3", "23", "0-3", "*/2", "*", "1,2"};
    static const char *const doms[] = {"*", "*", "1", "*/2", "10-20", "?"};
    static const char *const dowstr[] = {"*", "*", "0", "sun", "1-5", "?", "*/3"};
    cw_buf_printf(b, "%s %s %s %s * %s", secs[below(5)], mins[below(8)], hours[below(9)],
                  doms[below(6)], dowstr[below(7)]);
}

static void gen_every(cw_buf *b)
{
    static const char *const d[] = {
        "1h30m", "1.5s", "300ms", "90s",      "2h",       "-5s",           ".5m",  "1\xc2\xb5s",
        "0",     "45m",  "1h",    "10s",      "1.25h",    "3m7s",          "1d",   "",
        "5",     "1e3s", "+7m",   "2562047h", "2562048h", "0.0000000001s", "1..5s"};
    cw_buf_printf(b, "@every %s", d[below((int)(sizeof d / sizeof d[0]))]);
}

static const char *gen_spec(cw_buf *b)
{
    const char *zone = NULL;
    int p = below(100);
    if (p < 45) {
        zone = below(60) == 0 ? bad_zones[below((int)(sizeof bad_zones / sizeof bad_zones[0]))]
                              : zones[below((int)NZONES)];
        cw_buf_printf(b, "%s%s ", p < 35 ? "TZ=" : "CRON_TZ=", zone);
        if (below(10) == 0) cw_buf_putc(b, ' ');
    }
    int k = below(100);
    if (k < 6) {
        static const char *const desc[] = {"@yearly", "@annually", "@monthly",
                                           "@weekly", "@daily",    "@midnight",
                                           "@hourly", "@often",    "@Daily"};
        cw_buf_puts(b, desc[below(9)]);
    } else if (k < 9) {
        gen_every(b);
    } else if (k < 35) {
        gen_dst_spec(b);
    } else {
        int nf = below(60) == 0 ? (below(2) ? 4 : 7) : 5 + below(2);
        const bnd *six[6] = {&b_sec, &b_min, &b_hour, &b_dom, &b_mon, &b_dow};
        for (int i = 0; i < nf; i++) {
            if (i) put_sep(b);
            int which = nf == 5 ? i + 1 : i;
            gen_field(b, six[which < 6 ? which : 5]);
        }
    }
    return zone;
}

/* An instant: anywhere 1900–2038, or within hours of a change of the zone's offset.
 * Not before 2012 in Apia: robfig loops forever when its day search meets the day
 * Samoa skipped (30 December 2011), so Go would never answer (cwork gives up, see
 * test_cron). */
static int64_t gen_time(const cw_tz *z, const char *zone)
{
    int64_t t = below(20) == 0 ? between(-2208988800LL, 0) : between(0, 2145916799LL);
    if (zone && strcmp(zone, "Pacific/Apia") == 0) t = between(1325376000LL, 2145916799LL);
    if (z && below(2) == 0) {
        int64_t start, end;
        cw_tz_lookup(z, t, &start, &end);
        if (end != INT64_MAX && end > -4000000000LL && end < 4000000000LL &&
            (!zone || strcmp(zone, "Pacific/Apia") != 0 || end > 1325376000LL + 4 * 3600))
            t = end + between(-4 * 3600, 4 * 3600);
    }
    return t;
}

/* Our answer in the oracle's format. Returns 1 when the spec was refused as never
 * firing. */
static int answer(const char *spec, int64_t t, cw_buf *out)
{
    cw_cron *c = NULL;
    cwork_error err = {0};
    if (cw_cron_parse(spec, &c, &err) != 0) {
        cw_buf_printf(out, "error: %s", err.message);
        return strstr(err.message, "never fires") != NULL;
    }
    for (int i = 0; i < FIRES; i++) {
        int64_t n = cw_cron_next(c, t);
        if (i) cw_buf_putc(out, ' ');
        if (n == 0) {
            cw_buf_puts(out, "never");
            break;
        }
        cw_buf_printf(out, "%lld", (long long)n);
        t = n;
    }
    cw_cron_free(c);
    return 0;
}

/* cw_cron_next answers 0 for "no time", so a fire time of exactly 1970-01-01
 * 00:00:00 UTC reads as "never": ours "A B never" matches Go's "A B 0 …". */
static int epoch_zero(const char *ours, size_t olen, const char *theirs, size_t tlen)
{
    if (olen < 5 || memcmp(ours + olen - 5, "never", 5) != 0) return 0;
    size_t keep = olen - 5; /* the common prefix, with its trailing space */
    return tlen >= keep + 1 && memcmp(ours, theirs, keep) == 0 && theirs[keep] == '0' &&
           (tlen == keep + 1 || theirs[keep + 1] == ' ');
}

static const char *oracle_path;
static uint64_t seed;

/* cwork refuses a spec that fires nowhere within five years of a few instants of
 * 2024-2026 (src/time/cron.c). Go agrees when its answer is "never" — also when it first
 * lists fire times from an earlier instant but then stops, all of them before 2024:
 * a synthetic zone whose rules changed since can make a date fire in 1956 and never
 * again (its midnight fallen into a daylight saving gap). */
static int go_stops_before_today(const char *theirs, size_t l)
{
    if (l < 5 || memcmp(theirs + l - 5, "never", 5) != 0) return 0;
    const char *p = theirs, *end = theirs + l - 5;
    while (p < end) {
        char *next;
        long long t = strtoll(p, &next, 10);
        if (next == p || t >= 1704067200LL) /* 2024-01-01, the first of cron.c's instants */
            return 0;
        p = next + strspn(next, " ");
    }
    return 1;
}

/* Runs the oracle on (specs[i], times[i], FIRES) and compares every line. */
static void compare_with_oracle(char **specs, const int64_t *times, size_t nlines)
{
    cw_buf all, ours;
    cw_buf_init(&all);
    cw_buf_init(&ours);
    for (size_t i = 0; i < nlines; i++)
        cw_buf_printf(&all, "%s\t%lld\t%d\n", specs[i], (long long)times[i], FIRES);
    CHECK(!all.oom);

    char in_path[] = "/tmp/cwork-cron-in-XXXXXX", out_path[] = "/tmp/cwork-cron-out-XXXXXX";
    int in_fd = mkstemp(in_path), out_fd = mkstemp(out_path);
    CHECK(in_fd >= 0 && out_fd >= 0);
    CHECK_INT(write(in_fd, all.data, all.len), all.len);
    close(in_fd);
    close(out_fd);
    CHECK_INT(tl_run_oracle(oracle_path, "cron", in_path, out_path), 0);

    size_t go_len = 0;
    char *go = tl_read_file(out_path, &go_len);
    CHECK(go != NULL);
    int same_times = 0, same_errors = 0, never = 0, mismatches = 0;
    size_t pos = 0, i = 0;
    for (; go && i < nlines && pos < go_len; i++) {
        char *nl = memchr(go + pos, '\n', go_len - pos);
        size_t l = nl ? (size_t)(nl - (go + pos)) : go_len - pos;
        cw_buf_reset(&ours);
        int refused = answer(specs[i], times[i], &ours);
        const char *theirs = go + pos;
        if (ours.len == l && memcmp(ours.data, theirs, l) == 0) {
            if (l >= 6 && memcmp(theirs, "error:", 6) == 0)
                same_errors++;
            else
                same_times++;
        } else if (refused && go_stops_before_today(theirs, l)) {
            never++;
        } else if (epoch_zero(ours.data, ours.len, theirs, l)) {
            same_times++;
        } else {
            if (mismatches++ < 25)
                tl_fail(__FILE__, __LINE__, "spec \"%s\" at %lld\n   got: %s\n  want: %.*s",
                        specs[i], (long long)times[i], ours.data, (int)l, theirs);
        }
        pos += l + 1;
    }
    CHECK_INT(i, nlines);
    printf("  %zu lines: %d with the same %d fire times, %d with the same error, %d never "
           "firing (refused by cwork, \"never\" in Go), %d mismatches\n",
           i, same_times, FIRES, same_errors, never, mismatches);
    free(go);
    unlink(in_path);
    unlink(out_path);
    cw_buf_free(&all);
    cw_buf_free(&ours);
}

static void oracle_agrees(void)
{
    cw_buf spec;
    cw_buf_init(&spec);
    size_t nlines = SPECS * TIMES_PER_SPEC;
    char **specs = calloc(nlines, sizeof *specs);
    int64_t *times = calloc(nlines, sizeof *times);
    for (size_t i = 0; i < nlines; i += TIMES_PER_SPEC) {
        cw_buf_reset(&spec);
        const char *zone = gen_spec(&spec);
        const cw_tz *z = NULL;
        cwork_error e = {0};
        if (!zone)
            z = cw_tz_local();
        else if (cw_tz_load(zone, strlen(zone), &z, &e) != 0)
            z = NULL;
        for (size_t k = 0; k < TIMES_PER_SPEC; k++) {
            specs[i + k] = strdup(spec.data);
            times[i + k] = gen_time(z, zone);
        }
        cw_tz_release(z);
    }
    compare_with_oracle(specs, times, nlines);
    for (size_t k = 0; k < nlines; k++)
        free(specs[k]);
    free(specs);
    free(times);
    cw_buf_free(&spec);
}

/* ---------------------------------------------------------------- synthetic zones */

/* Zones written as TZif files into $ZONEINFO (which Go, and cwork, search first):
 * random transitions and offsets (seconds included), and random POSIX TZ footers —
 * Julian and zero-based day rules, week 5, transition times past 24 h or negative,
 * southern-hemisphere order, the default rules, odd names, and malformed strings that
 * Go ignores. They reach the footer code that real zones only use after 2037. */
#define SYNTH_ZONES 60
#define SYNTH_LINES 6000
static char synth_dir[64];

static void put_be(cw_buf *b, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--)
        cw_buf_putc(b, (char)(v >> (8 * i)));
}

/* A POSIX offset (west of UTC, [+-]h[:mm[:ss]]) for east_seconds. */
static void put_posix_offset(cw_buf *b, int64_t east)
{
    int64_t w = -east;
    if (w < 0) {
        cw_buf_putc(b, '-');
        w = -w;
    } else if (below(5) == 0) {
        cw_buf_putc(b, '+');
    }
    cw_buf_printf(b, "%lld", (long long)(w / 3600));
    if (w % 3600 || below(6) == 0) cw_buf_printf(b, ":%02lld", (long long)(w % 3600 / 60));
    if (w % 60) cw_buf_printf(b, ":%02lld", (long long)(w % 60));
}

static void gen_posix_rule(cw_buf *b)
{
    switch (below(6)) {
    case 0:
        cw_buf_printf(b, "J%d", 1 + below(365));
        break;
    case 1:
        cw_buf_printf(b, "%d", below(366));
        break;
    default:
        cw_buf_printf(b, "M%d.%d.%d", 1 + below(12), 1 + below(5), below(7));
        break;
    }
    if (below(2)) {
        cw_buf_putc(b, '/');
        int k = below(8);
        if (k == 0)
            cw_buf_printf(b, "-%d", below(5));
        else if (k == 1)
            cw_buf_printf(b, "%d", 24 + below(145)); /* up to 168 h */
        else
            cw_buf_printf(b, "%d:%02d", below(24), below(4) * 15);
    }
}

/* Offsets stay within two hours of the zone's last one: a jump of a day or more makes
 * robfig loop forever (see the Apia note above), and Go would never answer. */
static void gen_posix_tz(cw_buf *b, int64_t base)
{
    static const char *const names[] = {"ABC", "XYZT", "<+0530>", "<-03>", "<A>", "AB", "EST"};
    static const int64_t shifts[] = {0, 0, 0, 1800, -3600, 3600};
    int64_t std = base + shifts[below(6)];
    cw_buf_puts(b, names[below(7)]);
    if (below(40) == 0)
        cw_buf_printf(b, "%d", 169 + below(50)); /* out of range: Go ignores the footer */
    else
        put_posix_offset(b, std);
    if (below(5) == 0) return; /* no daylight saving time */
    cw_buf_puts(b, names[below(7)]);
    if (below(3)) {
        static const int64_t dst[] = {3600, 3600, -3600, 1800, 7200};
        put_posix_offset(b, std + dst[below(5)]);
    }
    if (below(6) == 0) return; /* the default rules */
    cw_buf_putc(b, below(15) ? ',' : ';');
    gen_posix_rule(b);
    if (below(30)) cw_buf_putc(b, ',');
    gen_posix_rule(b);
    if (below(30) == 0) cw_buf_puts(b, "x");
}

static int write_synth_zone(const char *path)
{
    cw_buf b;
    cw_buf_init(&b);
    int ntypes = 1 + below(3), ntx = below(5);
    int version = below(8) == 0 ? 1 : 2;
    int64_t tx[5];
    for (int i = 0; i < ntx; i++)
        tx[i] = between(-1000000000LL, 1600000000LL);
    for (int i = 1; i < ntx; i++) /* sorted */
        for (int k = i; k > 0 && tx[k] < tx[k - 1]; k--) {
            int64_t t = tx[k];
            tx[k] = tx[k - 1];
            tx[k - 1] = t;
        }
    int64_t base = between(-48, 56) * 900;
    int32_t off[3];
    int dst[3];
    for (int i = 0; i < ntypes; i++) {
        static const int64_t shifts[] = {-7200, -3600, -1800, 1800, 3600, 7200};
        off[i] = (int32_t)(i == 0 ? base : base + shifts[below(6)]);
        if (below(6) == 0) off[i] += (int32_t)between(-900, 900); /* local mean time */
        dst[i] = below(2);
    }
    int idx[5];
    for (int i = 0; i < ntx; i++)
        idx[i] = below(ntypes);
    /* header and data block; version 1 files carry 32-bit data only */
    for (int pass = 0; pass < (version == 1 ? 1 : 2); pass++) {
        int wide = version > 1 && pass == 1;
        int counts = version == 1 || wide; /* the v2 file's first block is left empty */
        cw_buf_puts(&b, "TZif");
        cw_buf_putc(&b, version == 1 ? '\0' : '2');
        for (int i = 0; i < 15; i++)
            cw_buf_putc(&b, '\0');
        uint32_t n[6] = {
            0, 0, 0, counts ? (uint32_t)ntx : 0, counts ? (uint32_t)ntypes : 0, counts ? 4 : 0};
        for (int i = 0; i < 6; i++)
            put_be(&b, n[i], 4);
        if (!counts) continue;
        for (int i = 0; i < ntx; i++)
            put_be(&b, (uint64_t)tx[i], wide ? 8 : 4);
        for (int i = 0; i < ntx; i++)
            cw_buf_putc(&b, (char)idx[i]);
        for (int i = 0; i < ntypes; i++) {
            put_be(&b, (uint32_t)off[i], 4);
            cw_buf_putc(&b, (char)dst[i]);
            cw_buf_putc(&b, (char)below(4));
        }
        cw_buf_append(&b, "ABC", 4);
    }
    if (version > 1) {
        cw_buf_putc(&b, '\n');
        gen_posix_tz(&b, ntx ? off[idx[ntx - 1]] - off[idx[ntx - 1]] % 900 : base);
        cw_buf_putc(&b, '\n');
    }
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(b.data, 1, b.len, f) == b.len;
    if (f) fclose(f);
    cw_buf_free(&b);
    return ok ? 0 : -1;
}

static void synthetic_zones_agree(void)
{
    char path[128];
    for (int i = 0; i < SYNTH_ZONES; i++) {
        snprintf(path, sizeof path, "%s/Synth%d", synth_dir, i);
        CHECK_INT(write_synth_zone(path), 0);
    }
    static const char *const specs6[] = {
        "0 0 0 * * *",   "0 30 2 * * *", "0 0 * * * *",      "0 */15 * * * *", "0 0 1 * * *",
        "0 0 0 1 * *",   "@daily",       "@hourly",          "0 30 0 * * *",   "0 59 23 * * *",
        "0 0 2-3 * * *", "0 0 0 29 2 *", "*/30 * 0-3 * * *", "0 0 0 * * 0",    "@weekly"};
    char **specs = calloc(SYNTH_LINES, sizeof *specs);
    int64_t *times = calloc(SYNTH_LINES, sizeof *times);
    char line[256];
    for (int i = 0; i < SYNTH_LINES; i++) {
        int zi = below(SYNTH_ZONES);
        snprintf(line, sizeof line, "TZ=Synth%d %s", zi, specs6[below(15)]);
        specs[i] = strdup(line);
        times[i] = between(-1500000000LL, 4200000000LL);
        const cw_tz *z;
        snprintf(path, sizeof path, "Synth%d", zi);
        if (below(2) && cw_tz_load(path, strlen(path), &z, NULL) == 0) {
            int64_t start, end;
            cw_tz_lookup(z, times[i], &start, &end);
            if (end > -3000000000LL && end < 4300000000LL)
                times[i] = end + between(-3 * 3600, 3 * 3600);
            cw_tz_release(z);
        }
    }
    compare_with_oracle(specs, times, SYNTH_LINES);
    for (int i = 0; i < SYNTH_LINES; i++)
        free(specs[i]);
    free(specs);
    free(times);
    for (int i = 0; i < SYNTH_ZONES; i++) {
        snprintf(path, sizeof path, "%s/Synth%d", synth_dir, i);
        unlink(path);
    }
}

int main(void)
{
    if (!(oracle_path = tl_oracle())) return 1; /* fails, never skips: see tl_oracle */
    const char *seed_env = getenv("CWORK_CRON_SEED");
    seed =
        seed_env ? strtoull(seed_env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    if (seed == 0) seed = 1;
    rng_state = seed;
    /* The local zone is read once, on first use: set it before anything looks. */
    const char *local = local_zones[below((int)(sizeof local_zones / sizeof local_zones[0]))];
    setenv("TZ", local, 1);
    snprintf(synth_dir, sizeof synth_dir, "/tmp/cwork-zoneinfo-XXXXXX");
    if (!mkdtemp(synth_dir)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("ZONEINFO", synth_dir, 1);
    printf("  seed %llu (CWORK_CRON_SEED=%llu replays this run), local zone %s\n",
           (unsigned long long)seed, (unsigned long long)seed, local);
    RUN(oracle_agrees);
    RUN(synthetic_zones_agree);
    rmdir(synth_dir);
    return tl_finish();
}
