/* libFuzzer target for cron specs and TZif data (build: see tests/CMakeLists.txt; links
 * src/cron*.c src/time/tzfile.c src/base/util.c src/base/log.c only).
 *
 * Input: a spec up to the first newline, optionally followed by a decimal Unix time.
 * Parsing must never crash and must finish in bounded time; for a spec that parses,
 * Next must move forward (Next(t) > t) or answer 0, from a few fixed instants and from
 * the given one. An input starting with "TZif" is also read as a zone file, and the
 * zone's lookups, wall-clock fields and time.Date must hold together. */
#include "cron.h"
#include "tzfile.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_next(const cw_cron *c, int64_t t)
{
    for (int i = 0; i < 3; i++) {
        int64_t n = cw_cron_next(c, t);
        if (n == 0) return;
        if (n <= t) abort(); /* Next went backwards */
        t = n;
    }
}

static void fuzz_tzif(const uint8_t *data, size_t size)
{
    const cw_tz *z = NULL;
    if (cw_tz_from_tzif("fuzz", data, size, &z, NULL) != 0) return;
    static const int64_t instants[] = {
        INT64_MIN / 4, -2208988800LL, -1,           0,
        1700000000,    2145916800LL,  4102444800LL, INT64_C(1) << 40};
    for (size_t i = 0; i < sizeof instants / sizeof instants[0]; i++) {
        int64_t start, end;
        int32_t off = cw_tz_lookup(z, instants[i], &start, &end);
        (void)off;
        if (instants[i] > -(INT64_C(1) << 45) && instants[i] < (INT64_C(1) << 45)) {
            cw_civil c;
            cw_tz_civil(z, instants[i], &c);
            if (c.month < 1 || c.month > 12 || c.day < 1 || c.day > 31 || c.hour < 0 ||
                c.hour > 23 || c.min < 0 || c.min > 59 || c.sec < 0 || c.sec > 59)
                abort();
            (void)cw_tz_date(z, c.year, c.month, c.day, c.hour, c.min, c.sec);
        }
    }
    cw_tz_release(z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    if (size >= 4 && memcmp(data, "TZif", 4) == 0) fuzz_tzif(data, size);
    size_t len = 0;
    while (len < size && data[len] != '\n' && data[len] != '\0')
        len++;
    char *spec = malloc(len + 1);
    if (!spec) return 0;
    memcpy(spec, data, len);
    spec[len] = '\0';
    int64_t t = 0;
    int have_t = 0;
    if (len < size && data[len] == '\n') {
        size_t i = len + 1;
        int neg = i < size && data[i] == '-';
        i += (size_t)neg;
        for (; i < size && data[i] >= '0' && data[i] <= '9' && t < INT64_C(100000000000000);
             i++, have_t = 1)
            t = t * 10 + (data[i] - '0');
        if (neg) t = -t;
    }
    cw_cron *c = NULL;
    cwork_error err = {0};
    if (cw_cron_parse(spec, &c, &err) == 0) {
        static const int64_t from[] = {-1, 0, 951782400 /* 2000-02-29 */, 1700000000, 4102444799LL};
        for (size_t i = 0; i < sizeof from / sizeof from[0]; i++)
            check_next(c, from[i]);
        if (have_t) check_next(c, t);
        cw_cron_free(c);
    } else if (err.message[0] == '\0') {
        abort(); /* every refusal says why */
    }
    free(spec);
    return 0;
}
