/* A small aligned-table printer for the admin commands, and the cell text they share.
 *
 * Everything put into a cell is cleaned first: control characters, invalid UTF-8 and
 * characters that reorder or break lines (U+2028, bidi overrides) are replaced, so no
 * job text read from Redis can break a row or the terminal. Widths are counted in
 * terminal columns (wide East Asian characters as two), not bytes. */
#ifndef CWORK_CLI_TABLE_H
#define CWORK_CLI_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct table table;

/* A table with ncols columns titled by headers (copied). NULL when out of memory. */
table *table_new(size_t ncols, const char *const *headers);
void table_free(table *t);

/* Cells of column col wider than max columns are cut and end with "…" (0: no limit). */
void table_set_max_width(table *t, size_t col, size_t max);
/* Right-aligns column col (for numbers). */
void table_set_right(table *t, size_t col);

/* Appends a cell to the current row; a row is complete after ncols cells. NULL text is
 * an empty cell. 0, or -1 when out of memory. */
int table_cell(table *t, const char *text);
int table_cellf(table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Complete rows so far (the header not counted). */
size_t table_rows(const table *t);

/* Writes the header and the rows: columns two spaces apart, no trailing blanks. */
void table_print(const table *t, FILE *out);

/* A cleaned copy of len bytes of s (see above): tab, CR and LF become spaces, other
 * replaced characters '?'; cut to max columns with "…" (0: no limit). *width (if not
 * NULL) receives its width in columns. NULL when out of memory. */
char *text_clean(const char *s, size_t len, size_t max, size_t *width);

/* Decodes one UTF-8 character of the n bytes at s into *cp; returns its length, or 0
 * when the bytes there are no valid UTF-8 (overlong, surrogate, truncated, …). */
size_t text_utf8_decode(const char *s, size_t n, uint32_t *cp);

/* "2023-11-14T22:13:20Z" (ISO-8601, UTC); "-" for 0. */
void fmt_iso_time(char *buf, size_t size, int64_t t);
/* A short duration: "45s", "3m", "2h5m", "3d4h". Negative is taken as its magnitude. */
void fmt_duration(char *buf, size_t size, int64_t seconds);
/* "2023-11-14T22:13:20Z (3m ago)", "… (in 20s)", "… (now)"; "-" for 0. */
void fmt_when(char *buf, size_t size, int64_t t, int64_t now);

#endif
