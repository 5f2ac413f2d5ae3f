/* UTF-8 decoding by Go's rules, the library's only decoder: JSON's escaping
 * (gojson.c), job-name validation (keys.c), strconv.Quote (cron_parse.c) and the web
 * server's metric labels all decide alike what is valid. */
#ifndef CWORK_UTF8_H
#define CWORK_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The UTF-8 sequence that starts at p (avail bytes may be read) as Go's
 * utf8.DecodeRune reads it: its length (1..4) with the code point in *cp (cp may be
 * NULL), or 0 when it is not valid — an overlong form, a surrogate (U+D800..DFFF), a
 * value above U+10FFFF, a stray continuation byte, or a sequence cut short by avail —
 * where Go yields U+FFFD for one byte. avail 0 gives 0. */
size_t cw_utf8_decode(const unsigned char *p, size_t avail, uint32_t *cp);

/* Whether s[0..n) is valid UTF-8 throughout (cw_utf8_decode accepts every sequence). */
int cw_utf8_valid(const char *s, size_t n);

#endif
