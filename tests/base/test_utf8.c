/* The library's UTF-8 decoder (src/base/utf8.c) against the cases Go's utf8.DecodeRune
 * defines: valid boundaries, overlongs, surrogates, values past U+10FFFF, stray and
 * missing continuation bytes, truncated sequences; and against a decoder written the
 * other way round (value first, limits after) over every lead and second byte. */
#include "utf8.h"

#include "testlib.h"

typedef struct utf8_case {
    const char *in;
    size_t in_len;
    size_t want_len; /* 0: invalid (Go: U+FFFD, width 1) */
    uint32_t want_cp;
    const char *why;
} utf8_case;

#define C(s, len, cp, why)                                                                         \
    {                                                                                              \
        s, sizeof(s) - 1, len, cp, why                                                             \
    }

static const utf8_case cases[] = {
    C("\x00", 1, 0x00, "NUL"),
    C("\x7f", 1, 0x7f, "last ASCII"),
    C("\xc2\x80", 2, 0x80, "first 2-byte"),
    C("\xdf\xbf", 2, 0x7ff, "last 2-byte"),
    C("\xe0\xa0\x80", 3, 0x800, "first 3-byte"),
    C("\xed\x9f\xbf", 3, 0xd7ff, "just below the surrogates"),
    C("\xee\x80\x80", 3, 0xe000, "just above the surrogates"),
    C("\xef\xbf\xbd", 3, 0xfffd, "U+FFFD itself"),
    C("\xef\xbf\xbf", 3, 0xffff, "last 3-byte"),
    C("\xf0\x90\x80\x80", 4, 0x10000, "first 4-byte"),
    C("\xf4\x8f\xbf\xbf", 4, 0x10ffff, "U+10FFFF"),
    C("\xe2\x82\xac", 3, 0x20ac, "euro sign"),
    C("\xc3\xa9"
      "x",
      2, 0xe9, "followed by more"),
    /* overlongs */
    C("\xc0\x80", 0, 0, "overlong NUL (C0)"),
    C("\xc1\xbf", 0, 0, "overlong 2-byte (C1)"),
    C("\xe0\x80\x80", 0, 0, "overlong 3-byte NUL"),
    C("\xe0\x9f\xbf", 0, 0, "overlong U+07FF"),
    C("\xf0\x80\x80\x80", 0, 0, "overlong 4-byte NUL"),
    C("\xf0\x8f\xbf\xbf", 0, 0, "overlong U+FFFF"),
    /* surrogates */
    C("\xed\xa0\x80", 0, 0, "U+D800"),
    C("\xed\xbf\xbf", 0, 0, "U+DFFF"),
    C("\xed\xa0\x80\xed\xb0\x80", 0, 0, "CESU-8 pair"),
    /* past U+10FFFF */
    C("\xf4\x90\x80\x80", 0, 0, "U+110000"),
    C("\xf5\x80\x80\x80", 0, 0, "lead F5"),
    C("\xf7\xbf\xbf\xbf", 0, 0, "lead F7"),
    C("\xf8\x88\x80\x80\x80", 0, 0, "5-byte form"),
    C("\xfc\x84\x80\x80\x80\x80", 0, 0, "6-byte form"),
    C("\xfe", 0, 0, "FE"),
    C("\xff", 0, 0, "FF"),
    /* continuation bytes where a lead belongs, and missing ones */
    C("\x80", 0, 0, "stray 80"),
    C("\xbf", 0, 0, "stray BF"),
    C("\xc2\x41", 0, 0, "ASCII after a 2-byte lead"),
    C("\xc2\xc0", 0, 0, "lead after a 2-byte lead"),
    C("\xe2\x28\xa1", 0, 0, "bad second of three"),
    C("\xe2\x82\x28", 0, 0, "bad third of three"),
    C("\xf0\x90\x28\xbc", 0, 0, "bad third of four"),
    C("\xf0\x90\x80\x28", 0, 0, "bad fourth of four"),
    /* truncated */
    C("\xc2", 0, 0, "2-byte cut after 1"),
    C("\xe0\xa0", 0, 0, "3-byte cut after 2"),
    C("\xe2", 0, 0, "3-byte cut after 1"),
    C("\xf0\x90\x80", 0, 0, "4-byte cut after 3"),
    C("\xf4\x8f", 0, 0, "4-byte cut after 2"),
};

static void go_decode_rune_cases(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const utf8_case *t = &cases[i];
        uint32_t cp = 0xdeadbeef;
        size_t n = cw_utf8_decode((const unsigned char *)t->in, t->in_len, &cp);
        if (n != t->want_len || (n && cp != t->want_cp))
            tl_fail(__FILE__, __LINE__, "%s: length %zu, U+%04X; want %zu, U+%04X", t->why, n,
                    (unsigned)cp, t->want_len, (unsigned)t->want_cp);
        CHECK_INT(cw_utf8_decode((const unsigned char *)t->in, t->in_len, NULL), t->want_len);
        /* A valid sequence alone is valid text; an invalid one makes any text invalid. */
        if (t->want_len == t->in_len) CHECK(cw_utf8_valid(t->in, t->in_len));
        if (t->want_len == 0) CHECK(!cw_utf8_valid(t->in, t->in_len));
    }
}

static void avail_bounds_the_read(void)
{
    /* A valid sequence that avail cuts short is invalid, whatever follows in memory. */
    const unsigned char euro[] = {0xe2, 0x82, 0xac};
    CHECK_INT(cw_utf8_decode(euro, 3, NULL), 3);
    CHECK_INT(cw_utf8_decode(euro, 2, NULL), 0);
    CHECK_INT(cw_utf8_decode(euro, 1, NULL), 0);
    CHECK_INT(cw_utf8_decode(euro, 0, NULL), 0);
    CHECK(cw_utf8_valid("", 0));
    CHECK(cw_utf8_valid("plain ascii", 11));
    CHECK(cw_utf8_valid("\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80", 10));
    CHECK(!cw_utf8_valid("ok\xff", 3));
    CHECK(!cw_utf8_valid("ok\xe2\x82", 4));
    /* NUL is a character like any other. */
    CHECK(cw_utf8_valid("a\0b", 3));
}

/* The other way round: assemble the value from the bits, then apply the limits. */
static size_t reference_decode(const unsigned char *p, size_t avail, uint32_t *cp)
{
    if (avail == 0) return 0;
    if (p[0] < 0x80) return *cp = p[0], 1;
    size_t n = (p[0] & 0xe0) == 0xc0   ? 2
               : (p[0] & 0xf0) == 0xe0 ? 3
               : (p[0] & 0xf8) == 0xf0 ? 4
                                       : 0;
    if (n == 0 || avail < n) return 0;
    uint32_t v = p[0] & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        v = v << 6 | (p[i] & 0x3fu);
    }
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    return *cp = v, n;
}

static void agrees_with_a_reference_decoder(void)
{
    /* Every lead and second byte, with the later bytes drawn from the edges of the
     * continuation range and just outside it. */
    static const unsigned char tail[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90,
                                         0x9f, 0xa0, 0xbf, 0xc0, 0xf4, 0xff};
    const size_t nt = sizeof tail;
    long mismatches = 0, valid = 0;
    for (unsigned b0 = 0; b0 < 256; b0++)
        for (unsigned b1 = 0; b1 < 256; b1++)
            for (size_t i = 0; i < nt; i++)
                for (size_t j = 0; j < nt; j++) {
                    unsigned char p[4] = {(unsigned char)b0, (unsigned char)b1, tail[i], tail[j]};
                    for (size_t avail = 1; avail <= 4; avail++) {
                        uint32_t a = 0, b = 0;
                        size_t na = cw_utf8_decode(p, avail, &a);
                        size_t nb = reference_decode(p, avail, &b);
                        valid += na > 0;
                        if (na != nb || (na && a != b)) {
                            if (mismatches++ < 5)
                                tl_fail(__FILE__, __LINE__,
                                        "%02x %02x %02x %02x (avail %zu): %zu U+%04X, reference "
                                        "%zu U+%04X",
                                        p[0], p[1], p[2], p[3], avail, na, (unsigned)a, nb,
                                        (unsigned)b);
                        }
                    }
                }
    CHECK_INT(mismatches, 0);
    CHECK(valid > 0);
}

int main(void)
{
    RUN(go_decode_rune_cases);
    RUN(avail_bounds_the_read);
    RUN(agrees_with_a_reference_decoder);
    return tl_finish();
}
