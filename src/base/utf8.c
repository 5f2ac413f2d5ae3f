/* UTF-8 by Go's rules (utf8.h). */
#include "utf8.h"

size_t cw_utf8_decode(const unsigned char *p, size_t avail, uint32_t *cp)
{
    if (avail == 0) return 0;
    unsigned char b0 = p[0];
    if (b0 < 0x80) {
        if (cp) *cp = b0;
        return 1;
    }
    /* The lead byte gives the length; the accepted range of the second byte depends on
     * it (Unicode's table 3-7), which is what rules out overlongs, surrogates and values
     * past U+10FFFF. Every other continuation byte is 80..BF. */
    size_t n;
    uint32_t v;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        n = 2, v = b0 & 0x1Fu;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        n = 3, v = b0 & 0x0Fu;
        if (b0 == 0xE0)
            lo = 0xA0; /* below: overlong */
        else if (b0 == 0xED)
            hi = 0x9F; /* above: U+D800..DFFF */
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        n = 4, v = b0 & 0x07u;
        if (b0 == 0xF0)
            lo = 0x90; /* below: overlong */
        else if (b0 == 0xF4)
            hi = 0x8F; /* above: past U+10FFFF */
    } else {
        return 0; /* a continuation byte, C0/C1 (always overlong) or F5..FF */
    }
    if (avail < n || p[1] < lo || p[1] > hi) return 0;
    v = v << 6 | (p[1] & 0x3Fu);
    for (size_t i = 2; i < n; i++) {
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
        v = v << 6 | (p[i] & 0x3Fu);
    }
    if (cp) *cp = v;
    return n;
}

int cw_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = cw_utf8_decode(p + i, n - i, NULL);
        if (k == 0) return 0;
        i += k;
    }
    return 1;
}
