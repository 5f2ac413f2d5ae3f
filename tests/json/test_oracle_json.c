/* Differential test against real Go: random args objects written as JSON text in every
 * style (escapes, invalid UTF-8, number spellings across the whole float64 range,
 * duplicate keys, odd white space, plus mutated copies that may or may not be valid)
 * go through `$CWORK_GO_ORACLE json` (json.Unmarshal into map[string]interface{}, then
 * json.Marshal and json.Encoder.Encode) and through cw_gj_parse / cw_gj_encode /
 * cw_job_unique_args_suffix. Both sides must accept the same lines and produce the same
 * bytes for the encoding and the unique-key suffix.
 *
 * The one allowed difference: the oracle is built with Go 1.19, which writes 0x08 and
 * 0x0C as \u0008 and \u000c; cwork writes \b and \f as Go >= 1.22 does (PROTOCOL
 * §16.1). Our output is mapped escape by escape before comparing.
 *
 * Fails when the oracle cannot run (tl_oracle). CWORK_ORACLE_SEED replays a run; the
 * seed is printed. */
#include "testlib.h"

#include "gojson.h"
#include "job.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RANDOM_LINES 5000 /* plus a mutated copy of every fourth */
#define FLOAT_LINES 1500  /* 20 doubles each */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * UINT64_C(2685821657736338717);
}

static unsigned below(unsigned n)
{
    return (unsigned)(rnd() % n);
}

/* ---------------------------------------------------------------- generator */

static void gen_ws(cw_buf *b)
{
    static const char *ws[] = {" ", "\t", "\r", "  ", " \t"};
    if (below(8) == 0) cw_buf_puts(b, ws[below(5)]);
}

static void put_utf8(cw_buf *b, unsigned cp)
{
    char t[4];
    size_t n;
    if (cp < 0x80) {
        t[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        t[0] = (char)(0xC0 | (cp >> 6));
        t[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        t[0] = (char)(0xE0 | (cp >> 12));
        t[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        t[0] = (char)(0xF0 | (cp >> 18));
        t[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        t[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    cw_buf_append(b, t, n);
}

static void put_u_escape(cw_buf *b, unsigned v)
{
    cw_buf_printf(b, below(2) ? "\\u%04x" : "\\u%04X", v);
}

static void gen_string(cw_buf *b)
{
    static const char *simple[] = {"\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"};
    static const char *raw_valid[] = {"\xc3\xa9",     "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                      "\xe2\x80\xa8", "\xe2\x80\xa9", "\xef\xbf\xbd",
                                      "\x7f",         "\xe4\xb8\xad", "\xf4\x8f\xbf\xbf"};
    static const char *raw_invalid[] = {"\xc0\xaf",     "\xed\xa0\x80",         "\xf4\x90\x80\x80",
                                        "\xe2\x82",     "\xf0\x9f\x98",         "\xc3",
                                        "\xe0\x80\x80", "\xf8\x88\x80\x80\x80", "\xbf"};
    cw_buf_putc(b, '"');
    unsigned pieces = below(9);
    for (unsigned i = 0; i < pieces; i++) {
        switch (below(9)) {
        case 0:
        case 1: {
            unsigned n = 1 + below(5);
            for (unsigned k = 0; k < n; k++) {
                char c = (char)(0x20 + below(0x5f));
                if (c == '"' || c == '\\') c = '/';
                cw_buf_putc(b, c);
            }
            break;
        }
        case 2:
            cw_buf_puts(b, simple[below(8)]);
            break;
        case 3:
            put_u_escape(b, below(4) ? below(0x20) : (unsigned)"<>&\x7f/\"'"[below(7)]);
            break;
        case 4: {
            unsigned cp = below(3) ? 0x80 + below(0xFF80) : (below(2) ? 0x2028 : 0x2029);
            if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
            put_u_escape(b, cp);
            break;
        }
        case 5: { /* surrogates, paired or not */
            unsigned hi = 0xD800 + below(0x400), lo = 0xDC00 + below(0x400);
            switch (below(5)) {
            case 0:
                put_u_escape(b, hi);
                put_u_escape(b, lo);
                break;
            case 1:
                put_u_escape(b, hi);
                break;
            case 2:
                put_u_escape(b, lo);
                break;
            case 3:
                put_u_escape(b, hi);
                put_u_escape(b, hi);
                put_u_escape(b, lo);
                break;
            default:
                put_u_escape(b, lo);
                put_u_escape(b, hi);
                cw_buf_putc(b, 'x');
                break;
            }
            break;
        }
        case 6:
            if (below(2))
                cw_buf_puts(b, raw_valid[below(9)]);
            else
                put_utf8(b, 0x80 + below(0x10FF80) % 0xD780 + (below(2) ? 0 : 0x10000));
            break;
        case 7:
            if (below(2))
                cw_buf_puts(b, raw_invalid[below(9)]);
            else
                cw_buf_putc(b, (char)(0x80 + below(0x80)));
            break;
        default:
            cw_buf_puts(b, below(2) ? "<>&" : "</script>");
            break;
        }
    }
    cw_buf_putc(b, '"');
}

static double random_double(int subnormal)
{
    for (;;) {
        uint64_t bits = rnd();
        if (subnormal) bits &= UINT64_C(0x800FFFFFFFFFFFFF);
        double d;
        memcpy(&d, &bits, sizeof d);
        if (isfinite(d)) return d;
    }
}

static void put_digits(cw_buf *b, unsigned n, int first_nonzero)
{
    for (unsigned i = 0; i < n; i++)
        cw_buf_putc(b, (char)('0' + (i == 0 && first_nonzero ? 1 + below(9) : below(10))));
}

static void gen_number(cw_buf *b)
{
    static const char *zeros[] = {"0", "-0", "0.0", "-0.0", "0e5", "0E-5", "-0e+00", "0.000"};
    static const char *edges[] = {"1e21",
                                  "1e+21",
                                  "999999999999999999999",
                                  "1e-6",
                                  "0.000001",
                                  "0.00000099999999999999995",
                                  "1e-7",
                                  "9.999999999999999e20",
                                  "1e20",
                                  "2.2250738585072014e-308",
                                  "2.225073858507201e-308",
                                  "5e-324",
                                  "4.9e-324",
                                  "1.7976931348623157e308",
                                  "0.1",
                                  "0.2",
                                  "0.3",
                                  "1e23",
                                  "8.41e21",
                                  "9007199254740993",
                                  "-9007199254740993",
                                  "9007199254740995",
                                  "1e-5"};
    switch (below(12)) {
    case 0:
        cw_buf_printf(b, "%s%u", below(3) ? "" : "-", below(2) ? below(10) : below(1000000));
        break;
    case 1:
        cw_buf_printf(b, "%s%llu", below(3) ? "" : "-",
                      (unsigned long long)(UINT64_C(9007199254740992) + below(16) - 8));
        break;
    case 2:
        cw_buf_printf(b, "%s%llu", below(3) ? "" : "-",
                      (unsigned long long)(UINT64_C(9223372036854775808) + below(4096) - 2048));
        break;
    case 3:
        if (below(2))
            cw_buf_printf(b, "%llu", (unsigned long long)(UINT64_MAX - below(4096)));
        else
            put_digits(b, 20 + below(20), 1);
        break;
    case 4:
        cw_buf_printf(b, "%.17g", random_double(below(8) == 0));
        break;
    case 5:
        if (below(2))
            cw_buf_printf(b, "%.*e", (int)below(17), random_double(below(8) == 0));
        else
            cw_buf_printf(b, "%.*E", (int)below(17), random_double(below(8) == 0));
        break;
    case 6:
        cw_buf_printf(b, "%.*g", 1 + (int)below(17), random_double(below(3) == 0));
        break;
    case 7: /* free-form decimal text */
        if (below(3) == 0) cw_buf_putc(b, '-');
        if (below(4) == 0)
            cw_buf_putc(b, '0');
        else
            put_digits(b, 1 + below(20), 1);
        if (below(2)) {
            cw_buf_putc(b, '.');
            put_digits(b, 1 + below(20), 0);
        }
        if (below(2)) {
            cw_buf_putc(b, below(2) ? 'e' : 'E');
            if (below(2)) cw_buf_putc(b, below(2) ? '+' : '-');
            cw_buf_printf(b, below(5) ? "%u" : "00%u", below(330));
        }
        break;
    case 8:
        cw_buf_puts(b, below(2) ? "0." : "-0.");
        for (unsigned z = below(9); z > 0; z--)
            cw_buf_putc(b, '0');
        put_digits(b, 1 + below(18), 1);
        break;
    case 9:
        cw_buf_puts(b, zeros[below(8)]);
        break;
    case 10:
        cw_buf_puts(b, edges[below(sizeof edges / sizeof edges[0])]);
        break;
    default:
        put_digits(b, 1, 1);
        if (below(2)) {
            cw_buf_putc(b, '.');
            put_digits(b, 1 + below(16), 0);
        }
        cw_buf_printf(b, "e%d", (int)below(709) - 400); /* up to e308 */
        break;
    }
}

static void gen_value(cw_buf *b, int depth);

static void gen_object(cw_buf *b, int depth)
{
    cw_buf_putc(b, '{');
    gen_ws(b);
    unsigned n = below(7);
    size_t last_key = 0, last_key_len = 0;
    for (unsigned i = 0; i < n; i++) {
        if (i) {
            cw_buf_putc(b, ',');
            gen_ws(b);
        }
        size_t start = b->len;
        if (i && below(8) == 0 && last_key_len) { /* a duplicate key */
            char *copy = cw_strndup(b->data + last_key, last_key_len);
            cw_buf_append(b, copy, last_key_len);
            cw_free(copy);
        } else {
            gen_string(b);
        }
        last_key = start;
        last_key_len = b->len - start;
        gen_ws(b);
        cw_buf_putc(b, ':');
        gen_ws(b);
        gen_value(b, depth + 1);
        gen_ws(b);
    }
    cw_buf_putc(b, '}');
}

static void gen_value(cw_buf *b, int depth)
{
    unsigned r = below(100);
    if (depth >= 4 && r >= 70) r = below(70);
    if (r < 30) {
        gen_string(b);
    } else if (r < 62) {
        gen_number(b);
    } else if (r < 67) {
        cw_buf_puts(b, below(2) ? "true" : "false");
    } else if (r < 70) {
        cw_buf_puts(b, "null");
    } else if (r < 85) {
        gen_object(b, depth);
    } else {
        cw_buf_putc(b, '[');
        gen_ws(b);
        unsigned n = below(6);
        for (unsigned i = 0; i < n; i++) {
            if (i) {
                cw_buf_putc(b, ',');
                gen_ws(b);
            }
            gen_value(b, depth + 1);
            gen_ws(b);
        }
        cw_buf_putc(b, ']');
    }
}

/* An object of 20 doubles from random bit patterns (so every exponent is about equally
 * likely), with powers of two and integers near 2^53 mixed in: the float formatter's
 * hard cases, written with 17 significant digits so that they read back exactly. */
static void gen_float_line(cw_buf *b)
{
    cw_buf_putc(b, '{');
    for (int i = 0; i < 20; i++) {
        double d;
        switch (below(6)) {
        case 0:
            d = ldexp(1.0, (int)below(2098) - 1074);
            break;
        case 1:
            d = (double)(UINT64_C(9007199254740992) - 64 + below(128)) * (below(2) ? 1 : 0.5);
            break;
        case 2:
            d = random_double(1);
            break;
        default:
            d = random_double(0);
            break;
        }
        if (below(4) == 0) d = -d;
        cw_buf_printf(b, "%s\"f%d\":%.17g", i ? "," : "", i, d);
    }
    cw_buf_putc(b, '}');
}

/* A copy with one byte inserted or removed after the opening brace: valid or not,
 * both decoders must agree. */
static void mutate(cw_buf *b)
{
    static const char inserts[] = ",0\\\"}]e.-+\x01\x00\xff:{[ ";
    if (b->len < 3) return;
    size_t pos = 1 + below((unsigned)(b->len - 2));
    if (below(2)) {
        memmove(b->data + pos, b->data + pos + 1, b->len - pos - 1);
        b->len--;
    } else {
        cw_buf_putc(b, ' ');
        memmove(b->data + pos + 1, b->data + pos, b->len - pos - 1);
        b->data[pos] = inserts[below(sizeof inserts - 1)];
    }
}

/* Lines with a known verdict around the edges of the number range and the grammar. */
static const char *const fixed_lines[] = {
    "{\"a\":1e400}",
    "{\"a\":-1e400}",
    "{\"a\":1.7976931348623158e308}",
    "{\"a\":1.7976931348623159e308}",
    /* 2^1024 - 2^970: exactly halfway between the largest double and 2^1024 */
    "{\"a\":17976931348623158079372897140530341507993413271003782693617377898044496829276475"
    "0946649017977587207096330286416692887910946555547851940402630657488671505820681908902"
    "0007083836762738548458177115317644757302700698555713669596228429148198608349364752927"
    "19074168444365510704342711559699508093042880177904174497792}",
    "{\"a\":17976931348623158079372897140530341507993413271003782693617377898044496829276475"
    "0946649017977587207096330286416692887910946555547851940402630657488671505820681908902"
    "0007083836762738548458177115317644757302700698555713669596228429148198608349364752927"
    "19074168444365510704342711559699508093042880177904174497791}",
    "{\"a\":2.4703282292062327208828439643411068618252990130716238221279284125033775363510437"
    "593264991818081799618989828234772285886546332835517796989819938739800539093906315035659"
    "515570226392290858392449105184435931802849936536152500319370457678249219365623669863658"
    "480757001585769269903706311928279558551332927834338409351978015531246597263579574622766"
    "465272827220056374006485499977096599470454020828166226237857393450736339007967761930577"
    "506740176324673600968951340535537458516661134223766678604162159680461914467291840300530"
    "057530849048765391711386591646239524912623653881879636239373280423891018672348497668235"
    "089863388587925628302755995657524455507255189313690836254779186948667994968324049705821"
    "028513185451396213837722826145437693412532098591327667236328125e-324}",
    "{\"a\":2.4703282292062327208828439643411068618252990130716238221279284125033775363510437"
    "5932649918180817996189898282347722858865463328355177969898199387398005390939063150356596"
    "e-324}",
    "{\"a\":1e-400,\"b\":-0,\"c\":0e999999999,\"d\":1E+2,\"e\":1e-0,\"f\":1.0e+00}",
    "{\"\":{\"\":[]},\"\\u0000\":\"\\u0000\"}",
    "{\"a\":01}",
    "{\"a\":1,}",
    "{\"a\":.5}",
    "{\"a\":+1}",
    "{\"a\":1.}",
    "{\"a\":NaN}",
    "{\"a\":\"\x01\"}",
    "{\"a\":\"\\q\"}",
    "{\"a\":\"\\u12\"}",
    "{\"a\":[1,]}",
    "{\"a\" 1}",
    "{\"a\":1}x",
    "{\"a\":tru}",
    "{\"a\":\"x\"}{}",
    "{\"k\":\"\\ud800\\ud800\\udc00\",\"k\":\"last\",\"\xff\":1,\"\xfe\":2}",
};

/* ---------------------------------------------------------------- comparison */

/* Our \b and \f become Go 1.19's \u0008 and \u000c; every other escape is copied. */
static char *to_go119(const char *s, size_t len, size_t *out_len)
{
    cw_buf b;
    cw_buf_init(&b);
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\' && i + 1 < len) {
            if (s[i + 1] == 'b')
                cw_buf_puts(&b, "\\u0008");
            else if (s[i + 1] == 'f')
                cw_buf_puts(&b, "\\u000c");
            else
                cw_buf_append(&b, s + i, 2);
            i++;
        } else {
            cw_buf_putc(&b, s[i]);
        }
    }
    cw_buf_reserve(&b, 0);
    return cw_buf_take(&b, out_len);
}

static void put_visible(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f)
            fputc(c, f);
        else
            fprintf(f, "\\x%02x", c);
    }
    fputc('\n', f);
}

static int mismatches, both_rejected, both_accepted;

static void report(const char *what, const char *in, size_t in_len, const char *ours,
                   size_t ours_len, const char *go, size_t go_len)
{
    if (++mismatches > 10) return;
    tl_fail(__FILE__, __LINE__, "%s", what);
    fprintf(stderr, "  input: ");
    put_visible(stderr, in, in_len);
    fprintf(stderr, "   ours: ");
    put_visible(stderr, ours, ours_len);
    fprintf(stderr, "     go: ");
    put_visible(stderr, go, go_len);
}

static void compare_line(const char *in, size_t in_len, const char *go, size_t go_len)
{
    int go_error = go_len >= 7 && memcmp(go, "error: ", 7) == 0;
    gj_value *v = NULL;
    cwork_error err = {0};
    int rc = cw_gj_parse(in, in_len, &v, &err);
    if (rc == 0 && v->type != GJ_OBJECT) { /* Go decodes into a map */
        rc = CWORK_EJSON;
        snprintf(err.message, sizeof err.message, "not an object");
    }
    if (rc != 0 || go_error) {
        if ((rc != 0) == go_error)
            both_rejected++;
        else
            report(rc ? "we reject, Go accepts" : "we accept, Go rejects", in, in_len, err.message,
                   strlen(err.message), go, go_len);
        cw_gj_free(v);
        return;
    }
    gj_value *pair = NULL;
    if (cw_gj_parse(go, go_len, &pair, NULL) != 0 || pair->type != GJ_ARRAY ||
        pair->as.arr.len != 2) {
        report("unreadable oracle line", in, in_len, "", 0, go, go_len);
        cw_gj_free(pair);
        cw_gj_free(v);
        return;
    }
    both_accepted++;
    const gj_str *go_plain = &pair->as.arr.items[0]->as.s;
    const gj_str *go_suffix = &pair->as.arr.items[1]->as.s;

    cw_buf plain, suffix;
    cw_buf_init(&plain);
    cw_buf_init(&suffix);
    CHECK_INT(cw_gj_encode(&plain, v, NULL), 0);
    CHECK_INT(cw_job_unique_args_suffix(&suffix, v, NULL), 0);
    size_t pl, sl;
    char *p = to_go119(plain.data, plain.len, &pl);
    char *s = to_go119(suffix.data, suffix.len, &sl);
    if (pl != go_plain->len || memcmp(p, go_plain->ptr, pl) != 0)
        report("encoding differs", in, in_len, p, pl, go_plain->ptr, go_plain->len);
    else if (sl != go_suffix->len || memcmp(s, go_suffix->ptr, sl) != 0)
        report("unique suffix differs", in, in_len, s, sl, go_suffix->ptr, go_suffix->len);
    cw_free(p);
    cw_free(s);
    cw_buf_free(&plain);
    cw_buf_free(&suffix);
    cw_gj_free(pair);
    cw_gj_free(v);
}

/* ---------------------------------------------------------------- running Go */

static const char *oracle_path;

static void oracle_agrees(void)
{
    const char *seed_env = getenv("CWORK_ORACLE_SEED");
    uint64_t seed =
        seed_env ? strtoull(seed_env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    if (seed == 0) seed = 1;
    rng_state = seed;
    printf("  seed %llu (CWORK_ORACLE_SEED=%llu replays this run)\n", (unsigned long long)seed,
           (unsigned long long)seed);

    /* Lines as (offset, length) in one buffer. */
    size_t nfixed = sizeof fixed_lines / sizeof fixed_lines[0];
    size_t nlines = nfixed + FLOAT_LINES + RANDOM_LINES + RANDOM_LINES / 4;
    size_t *off = calloc(nlines, sizeof *off), *len = calloc(nlines, sizeof *len);
    cw_buf all, line;
    cw_buf_init(&all);
    cw_buf_init(&line);
    size_t count = 0;
    for (size_t i = 0; i < nfixed; i++) {
        off[count] = all.len;
        len[count++] = strlen(fixed_lines[i]);
        cw_buf_puts(&all, fixed_lines[i]);
        cw_buf_putc(&all, '\n');
    }
    for (int i = 0; i < FLOAT_LINES; i++) {
        cw_buf_reset(&line);
        gen_float_line(&line);
        off[count] = all.len;
        len[count++] = line.len;
        cw_buf_append(&all, line.data, line.len);
        cw_buf_putc(&all, '\n');
    }
    for (int i = 0; i < RANDOM_LINES; i++) {
        for (int copy = 0; copy < (i % 4 == 0 ? 2 : 1); copy++) {
            if (copy == 0) {
                cw_buf_reset(&line);
                gen_ws(&line);
                gen_object(&line, 1);
                if (below(4) == 0)
                    cw_buf_puts(&line, " \t"); /* never a trailing \r: Go's line reader
                                                  would drop it */
            } else {
                mutate(&line);
            }
            /* The oracle skips blank lines; a mutation cannot produce one, but keep
             * the line count aligned whatever happens. */
            int blank = 1;
            for (size_t k = 0; k < line.len; k++)
                if (!strchr(" \t\r\v\f", line.data[k])) blank = 0;
            if (blank) continue;
            off[count] = all.len;
            len[count++] = line.len;
            cw_buf_append(&all, line.data, line.len);
            cw_buf_putc(&all, '\n');
        }
    }
    CHECK(!all.oom);

    char in_path[] = "/tmp/cwork-oracle-in-XXXXXX", out_path[] = "/tmp/cwork-oracle-out-XXXXXX";
    int in_fd = mkstemp(in_path), out_fd = mkstemp(out_path);
    CHECK(in_fd >= 0 && out_fd >= 0);
    CHECK_INT(write(in_fd, all.data, all.len), all.len);
    close(in_fd);
    close(out_fd);
    int status = tl_run_oracle(oracle_path, "json", in_path, out_path);
    CHECK_INT(status, 0);

    size_t go_len = 0;
    char *go = tl_read_file(out_path, &go_len);
    CHECK(go != NULL);
    size_t pos = 0, i = 0;
    for (; go && i < count && pos < go_len; i++) {
        char *nl = memchr(go + pos, '\n', go_len - pos);
        size_t l = nl ? (size_t)(nl - (go + pos)) : go_len - pos;
        compare_line(all.data + off[i], len[i], go + pos, l);
        pos += l + 1;
    }
    CHECK_INT(i, count); /* one answer per line */
    printf("  %zu lines compared: %d encoded alike, %d rejected by both, %d mismatches\n", i,
           both_accepted, both_rejected, mismatches);

    free(go);
    unlink(in_path);
    unlink(out_path);
    cw_buf_free(&all);
    cw_buf_free(&line);
    free(off);
    free(len);
}

int main(void)
{
    if (!(oracle_path = tl_oracle())) return 1; /* fails, never skips: see tl_oracle */
    RUN(oracle_agrees);
    return tl_finish();
}
