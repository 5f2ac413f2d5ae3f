/* Go's float64 text: the shortest digits that read back as the same double, written in
 * the layout encoding/json (and fmt's %v) chooses.
 *
 * The digits come from the exact free-format algorithm of Steele & White as refined by
 * Burger & Dybvig ("Printing Floating-Point Numbers Quickly and Accurately", 1996),
 * with a small bignum. Go uses Ryu, which computes the same thing faster: the shortest
 * decimal inside the rounding interval of the double, the interval's ends included
 * only when the mantissa is even (strconv parses halfway cases to even), and among
 * the shortest the one nearest the exact value. Both are exact, so they agree on every
 * double; the oracle test compares thousands of them with real Go.
 *
 * Reading numbers is here too: exact cases directly, the rest through strtod in the "C"
 * locale. Nothing depends on setlocale. */
#include "gojson.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- bignum */

/* Unsigned big integers in 32-bit limbs, least significant first. The largest value
 * the algorithm builds is about 2^1135 (5e-324 scaled by 10^324 and shifted), so 40
 * limbs (1280 bits) are enough. */
#define BN_LIMBS 40

typedef struct bn {
    int n; /* limbs in use; 0 means the value 0 */
    uint32_t d[BN_LIMBS];
} bn;

static void bn_set_u64(bn *a, uint64_t v)
{
    a->n = 0;
    while (v) {
        a->d[a->n++] = (uint32_t)v;
        v >>= 32;
    }
}

static void bn_mul_small(bn *a, uint32_t m)
{
    uint64_t carry = 0;
    for (int i = 0; i < a->n; i++) {
        uint64_t t = (uint64_t)a->d[i] * m + carry;
        a->d[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry) a->d[a->n++] = (uint32_t)carry;
}

static void bn_shl(bn *a, int bits)
{
    if (a->n == 0 || bits == 0) return;
    int limbs = bits / 32, rem = bits % 32;
    if (rem) {
        uint32_t carry = 0;
        for (int i = 0; i < a->n; i++) {
            uint32_t v = a->d[i];
            a->d[i] = (v << rem) | carry;
            carry = v >> (32 - rem);
        }
        if (carry) a->d[a->n++] = carry;
    }
    if (limbs) {
        memmove(a->d + limbs, a->d, (size_t)a->n * sizeof a->d[0]);
        memset(a->d, 0, (size_t)limbs * sizeof a->d[0]);
        a->n += limbs;
    }
}

static void bn_mul_pow10(bn *a, int k)
{
    /* 10^9 is the largest power of ten that fits a limb multiplier. */
    static const uint32_t p10[] = {1,      10,      100,      1000,      10000,
                                   100000, 1000000, 10000000, 100000000, 1000000000};
    while (k >= 9) {
        bn_mul_small(a, p10[9]);
        k -= 9;
    }
    if (k > 0) bn_mul_small(a, p10[k]);
}

static int bn_cmp(const bn *a, const bn *b)
{
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    for (int i = a->n - 1; i >= 0; i--)
        if (a->d[i] != b->d[i]) return a->d[i] < b->d[i] ? -1 : 1;
    return 0;
}

static void bn_add(bn *out, const bn *a, const bn *b)
{
    const bn *big = a->n >= b->n ? a : b, *small = a->n >= b->n ? b : a;
    uint64_t carry = 0;
    int i;
    for (i = 0; i < big->n; i++) {
        uint64_t t = (uint64_t)big->d[i] + (i < small->n ? small->d[i] : 0) + carry;
        out->d[i] = (uint32_t)t;
        carry = t >> 32;
    }
    out->n = big->n;
    if (carry) out->d[out->n++] = (uint32_t)carry;
}

/* a -= b; requires a >= b. */
static void bn_sub(bn *a, const bn *b)
{
    int64_t borrow = 0;
    for (int i = 0; i < a->n; i++) {
        int64_t t = (int64_t)a->d[i] - (i < b->n ? b->d[i] : 0) - borrow;
        borrow = t < 0;
        a->d[i] = (uint32_t)(t + (borrow ? ((int64_t)1 << 32) : 0));
    }
    while (a->n > 0 && a->d[a->n - 1] == 0)
        a->n--;
}

/* ---------------------------------------------------------------- shortest digits */

static int digits_of_u64(uint64_t v, char *digits, int *dp)
{
    char tmp[24];
    int n = 0;
    while (v) {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    }
    *dp = n;
    int start = 0;
    while (start < n && tmp[start] == '0') /* trailing zeros of the integer */
        start++;
    int out = 0;
    for (int i = n - 1; i >= start; i--)
        digits[out++] = tmp[i];
    return out;
}

/* The shortest-digits search (Steele & White's free-format algorithm, as Go's
 * strconv does it with big numbers): r/s = v, m_plus/s and m_minus/s = the distances to
 * the midpoints between v and its neighbours. even: the ends of that interval count
 * (the mantissa is even, and a decimal exactly halfway parses to the even double). */
typedef struct shortest {
    bn r, s, m_plus, m_minus;
    int even;
} shortest;

static void shortest_init(shortest *st, uint64_t f, int e, int be)
{
    /* At a power of two (f == 2^52, not the smallest exponent) the neighbour below is
     * twice as close as the one above. */
    int boundary = f == (UINT64_C(1) << 52) && be > 1;
    bn_set_u64(&st->r, f);
    if (e >= 0) {
        bn_shl(&st->r, e + (boundary ? 2 : 1));
        bn_set_u64(&st->s, boundary ? 4 : 2);
        bn_set_u64(&st->m_plus, 1);
        bn_shl(&st->m_plus, e + (boundary ? 1 : 0));
        bn_set_u64(&st->m_minus, 1);
        bn_shl(&st->m_minus, e);
    } else {
        bn_shl(&st->r, boundary ? 2 : 1);
        bn_set_u64(&st->s, 1);
        bn_shl(&st->s, (boundary ? 2 : 1) - e);
        bn_set_u64(&st->m_plus, boundary ? 2 : 1);
        bn_set_u64(&st->m_minus, 1);
    }
    st->even = (f & 1) == 0;
}

/* Scales r/s by 10^-k so that the first digit comes next; returns k, the position of the
 * decimal point. k = ceil(log10(v)) is estimated from the bit length: exact or one too
 * small, which the comparison corrects. */
static int shortest_scale(shortest *st, uint64_t f, int e)
{
    int bitlen = 64;
    while (!(f >> (bitlen - 1)))
        bitlen--;
    int k = (int)ceil((double)(e + bitlen - 1) * 0.30102999566398114 - 1e-10);
    if (k >= 0) {
        bn_mul_pow10(&st->s, k);
    } else {
        bn_mul_pow10(&st->r, -k);
        bn_mul_pow10(&st->m_plus, -k);
        bn_mul_pow10(&st->m_minus, -k);
    }
    bn tmp;
    bn_add(&tmp, &st->r, &st->m_plus);
    int c = bn_cmp(&tmp, &st->s);
    if (st->even ? c >= 0 : c > 0) {
        bn_mul_small(&st->s, 10);
        k++;
    }
    return k;
}

/* Appends the last digit d, rounded up when high (and, when low too, when r is past half
 * of s); a 10 carries into the digits before it. Returns the new count. */
static int last_digit(const shortest *st, int d, int low, int high, char *digits, int n, int *dp)
{
    if (low && high) {
        /* Both candidates qualify: take the nearer (2r vs s). An exact tie cannot happen
         * for binary doubles; it would round to even like Go. */
        bn tmp;
        bn_add(&tmp, &st->r, &st->r);
        int t = bn_cmp(&tmp, &st->s);
        if (t > 0 || (t == 0 && (d & 1))) d++;
    } else if (high) {
        d++;
    }
    if (d < 10) {
        digits[n++] = (char)('0' + d);
        return n;
    }
    /* A carry into earlier digits (defensive: the algorithm's invariants rule it out). */
    int i = n - 1;
    while (i >= 0 && digits[i] == '9')
        i--;
    if (i < 0) {
        digits[0] = '1';
        (*dp)++;
        return 1;
    }
    digits[i]++;
    return i + 1;
}

/* Generates digits until one more ends the shortest decimal that reads back as v. */
static int shortest_digits(shortest *st, char *digits, int *dp)
{
    /* s..9s, so that each digit is found by comparisons and one subtraction. */
    bn mult[10], tmp;
    mult[0].n = 0;
    mult[1] = st->s;
    for (int i = 2; i < 10; i++)
        bn_add(&mult[i], &mult[i - 1], &st->s);
    int n = 0;
    for (;;) {
        bn_mul_small(&st->r, 10);
        bn_mul_small(&st->m_plus, 10);
        bn_mul_small(&st->m_minus, 10);
        int d = 9;
        while (d > 0 && bn_cmp(&st->r, &mult[d]) < 0)
            d--;
        bn_sub(&st->r, &mult[d]);
        int lc = bn_cmp(&st->r, &st->m_minus);
        int low = st->even ? lc <= 0 : lc < 0; /* truncating here stays in the interval */
        bn_add(&tmp, &st->r, &st->m_plus);
        int hc = bn_cmp(&tmp, &st->s);
        int high = st->even ? hc >= 0 : hc > 0; /* rounding up here stays in the interval */
        if (low || high) return last_digit(st, d, low, high, digits, n, dp);
        digits[n++] = (char)('0' + d);
        if (n >= 17) /* cannot happen for a double; a guard for the buffer */
            return n;
    }
}

int cw_gj_float_digits(double v, char digits[24], int *dp)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint64_t f = bits & ((UINT64_C(1) << 52) - 1);
    int be = (int)((bits >> 52) & 0x7ff);
    int e;
    if (be == 0) {
        e = -1074; /* subnormal: no hidden bit, the smallest exponent */
    } else {
        f |= UINT64_C(1) << 52;
        e = be - 1075;
    }
    /* An integer below 2^53 is its own shortest form (its neighbours are integers too,
     * no shorter decimal lies within half a unit): Go takes this path as well. */
    if (e <= 0 && e > -64 && (f & ((UINT64_C(1) << -e) - 1)) == 0)
        return digits_of_u64(f >> -e, digits, dp);
    shortest st;
    shortest_init(&st, f, e, be);
    *dp = shortest_scale(&st, f, e);
    int n = shortest_digits(&st, digits, dp);
    while (n > 1 && digits[n - 1] == '0')
        n--;
    return n;
}

/* ---------------------------------------------------------------- reading */

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale; /* set once by pthread_once, then only read */

static void make_c_locale(void)
{
    c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

/* strtod reads the decimal point of the thread's locale; JSON always uses '.'. */
static double strtod_c(const char *s)
{
    pthread_once(&c_locale_once, make_c_locale);
    if (c_locale == (locale_t)0) return strtod(s, NULL);
    locale_t old = uselocale(c_locale);
    double d = strtod(s, NULL);
    uselocale(old);
    return d;
}

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

int cw_gj_number_value(const char *tok, size_t len, double *out)
{
    size_t i = 0;
    int neg = tok[0] == '-';
    uint64_t mant = 0;
    int sig = 0;    /* significant digits (from the first non-zero one) */
    long scale = 0; /* mant x 10^scale, before the explicit exponent */
    long exp = 0;
    int point = 0;
    for (i = neg; i < len && tok[i] != 'e' && tok[i] != 'E'; i++) {
        if (tok[i] == '.') {
            point = 1;
            continue;
        }
        int d = tok[i] - '0';
        if (sig == 0 && d == 0) {
            scale -= point; /* a leading zero after the point */
            continue;
        }
        if (sig < 19) {
            mant = mant * 10 + (uint64_t)d;
            scale -= point;
        } else {
            scale += !point; /* a dropped digit before the point still counts */
        }
        sig++;
    }
    if (i < len) { /* exponent, saturated: its sign and size are all that matter */
        int eneg = 0;
        i++;
        if (tok[i] == '+' || tok[i] == '-') eneg = tok[i++] == '-';
        for (; i < len; i++)
            if (exp < 100000000) exp = exp * 10 + (tok[i] - '0');
        if (eneg) exp = -exp;
    }
    if (sig == 0) {
        *out = neg ? -0.0 : 0.0;
        return 0;
    }
#if FLT_EVAL_METHOD == 0
    /* Clinger's fast path: a mantissa below 2^53 and a power of ten up to 1e22 are both
     * exact doubles, so one IEEE multiplication or division is correctly rounded.
     * Needs double arithmetic without excess precision. */
    long e10 = scale + exp;
    if (sig <= 19 && mant < (UINT64_C(1) << 53) && e10 >= -22 && e10 <= 22) {
        double d = (double)mant;
        d = e10 < 0 ? d / pow10_exact[-e10] : d * pow10_exact[e10];
        *out = neg ? -d : d;
        return 0;
    }
#endif
    /* Everything else: the C library's correctly rounded strtod (glibc, musl). */
    char small[128];
    char *buf = len < sizeof small ? small : cw_malloc(len + 1);
    if (!buf) return CWORK_ENOMEM;
    memcpy(buf, tok, len);
    buf[len] = '\0';
    double d = strtod_c(buf);
    if (buf != small) cw_free(buf);
    if (isinf(d)) /* strconv.ParseFloat's range error */
        return CWORK_EJSON;
    *out = d;
    return 0;
}

/* ---------------------------------------------------------------- layouts */

static char *put_exp(char *p, int exp, int min_digits)
{
    *p++ = 'e';
    if (exp < 0) {
        *p++ = '-';
        exp = -exp;
    } else {
        *p++ = '+';
    }
    char tmp[8];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + exp % 10);
        exp /= 10;
    } while (exp);
    while (n < min_digits)
        tmp[n++] = '0';
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* d.ddd then the exponent. */
static char *put_e(char *p, const char *digits, int n, int dp, int neg_exp_digits)
{
    *p++ = digits[0];
    if (n > 1) {
        *p++ = '.';
        memcpy(p, digits + 1, (size_t)(n - 1));
        p += n - 1;
    }
    int exp = dp - 1;
    return put_exp(p, exp, exp < 0 ? neg_exp_digits : 2);
}

/* Positional notation: 0.000ddd, dd.ddd or ddd000. */
static char *put_f(char *p, const char *digits, int n, int dp)
{
    if (dp <= 0) {
        *p++ = '0';
        *p++ = '.';
        memset(p, '0', (size_t)-dp);
        p += -dp;
        memcpy(p, digits, (size_t)n);
        return p + n;
    }
    if (dp >= n) {
        memcpy(p, digits, (size_t)n);
        p += n;
        memset(p, '0', (size_t)(dp - n));
        return p + (dp - n);
    }
    memcpy(p, digits, (size_t)dp);
    p += dp;
    *p++ = '.';
    memcpy(p, digits + dp, (size_t)(n - dp));
    return p + (n - dp);
}

/* Integral values of magnitude up to 2^53 are their own shortest form and by far the
 * most common numbers in job arguments; they skip the digit search. */
static int put_small_integer(cw_buf *out, double f)
{
    if (!(fabs(f) <= 9007199254740992.0)) return 0;
    int64_t i = (int64_t)f;
    if ((double)i != f) return 0;
    if (i == 0 && signbit(f))
        cw_buf_append(out, "-0", 2);
    else
        cw_buf_put_int64(out, i);
    return 1;
}

void cw_gj_format_float(cw_buf *out, double f)
{
    if (put_small_integer(out, f)) return;
    char digits[24];
    int dp;
    int n = cw_gj_float_digits(f, digits, &dp);
    /* Longest output: "-0.000001" + 17 digits, or "-d.ddddddddddddddde-324". */
    char text[48], *p = text;
    if (signbit(f)) *p++ = '-';
    double abs = fabs(f);
    /* encoding/json's choice between strconv's 'e' and 'f' layouts; it then drops the
     * leading zero of a one-digit negative exponent (e-07 -> e-7) but keeps two
     * digits for positive ones (e+21). */
    if (abs < 1e-6 || abs >= 1e21)
        p = put_e(p, digits, n, dp, 1);
    else
        p = put_f(p, digits, n, dp);
    cw_buf_append(out, text, (size_t)(p - text));
}

void cw_gj_format_float_v(cw_buf *out, double f)
{
    if (!isfinite(f)) { /* not from JSON, but an in-process value could be one */
        cw_buf_puts(out, isnan(f) ? "NaN" : f > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (f == 0) {
        cw_buf_puts(out, signbit(f) ? "-0" : "0");
        return;
    }
    char digits[24];
    int dp;
    int n = cw_gj_float_digits(f, digits, &dp);
    char text[48], *p = text;
    if (signbit(f)) *p++ = '-';
    /* strconv 'g' with shortest digits decides with a precision of 6; exponents keep
     * two digits both ways here (fmt prints 1e-05). */
    int exp = dp - 1;
    if (exp < -4 || exp >= 6)
        p = put_e(p, digits, n, dp, 2);
    else
        p = put_f(p, digits, n, dp);
    cw_buf_append(out, text, (size_t)(p - text));
}
