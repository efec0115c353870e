/*
 * pal.render.text_kernel: the number texts of the drill-downs, a C extension compiled at install
 * by setup.py (-O2 -fno-fast-math -ffp-contract=off -fno-strict-aliasing: every float operation
 * is the one written here, in the order written, none fused into a multiply-add).
 *
 * Why compiled: every drill-down writes about 1,500 numbers (its graph data with fixed decimals,
 * its static graph's coordinates in tenths of a pixel), and Python's "%" formatting of them, with
 * the dozen array calls a line's runs and level stretches took, was a third of a page's cost.
 * Here one loop writes the ASCII text of a whole array, or a whole line, into a buffer (a uint8
 * array the caller passes, written in place; the GIL is released while the loops run).
 *
 * Exactness (the texts are those of the Python forms, byte for byte, which the tests compare):
 *
 * - fixed_list is "%.{d}f" of each value, which rounds the value's exact binary expansion half
 *   to even. The loop rounds y = |x| * 10**d (one float rounding, 10**d exact for d <= 22), which
 *   gives the same digits whenever the fraction of y is farther from one half than the product's
 *   rounding error: beyond that (a tie, or within a few units in the last place of one), and for
 *   y >= 2**52, it writes glibc's printf("%.*f"), which rounds the exact value to nearest, ties to
 *   even, as Python's "%f" (dtoa's mode 3) does; it gives up (returns -1) for |x| >= 1e16 only,
 *   and the caller formats the array in Python. (Measured values with three decimals, shown with
 *   six in Mpps, put a near tie in a third of a year's series: each sent its whole array to Python.)
 * - tenths_pairs, polylines and polygons write coordinates as the lookup of svg._texts does:
 *   rint(v * 10) tenths (rint: half to even, the default rounding mode) for coordinates in
 *   [0, 1000.04); they give up (-1) on anything else (svg formats those with "%.1f"). The two
 *   latter draw a whole line or band (its runs, the ends of its level stretches) as svg._draw
 *   does, from the same pixel arrays.
 * - drawn_items draws several lines, bands and sample paths over one x array in one call: their
 *   pixel heights are py's (c - (v - y0) * sy, the same two float operations in the same order),
 *   then the loops above.
 *
 * Arrays are taken through the buffer protocol (C-contiguous; float64, int64, and one-byte items
 * for the texts, the masks and the output). An output buffer too small for what a call writes
 * raises ValueError (the callers size theirs for the worst case); a refusal to write is -1.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

/* drawn_items' kinds of row: a line, a band (this row its lower edge, the next its upper),
 * samples (a path of round-capped dots), the upper edge of the band before */
enum { LINE = 0, BAND = 1, SAMPLES = 2, UPPER = 3 };

/* the loops' results below zero: a refusal (returned to Python as -1), or an error */
#define GIVE_UP ((Py_ssize_t)-1)
#define TOO_SMALL ((Py_ssize_t)-2)
#define NO_UPPER ((Py_ssize_t)-3)
#define NO_MEMORY ((Py_ssize_t)-4)

/* 10**k, exact as doubles for k <= 22 */
static const double POW10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};
/* fixed_list's decimals: 10**digits must be an int64 (the unit of the rounded value) */
#define MAX_DIGITS 18
/* 2**52: from here on a double has no fraction to round */
static const double NO_FRACTION = 4503599627370496.0;
/* below this, fixed_list writes what it cannot round itself with printf: at most 16 digits before
 * the point, inside the room its callers give a value (digits + 22 bytes) */
static const double PRINTED_LIMIT = 1e16;
/* the relative rounding error of one float multiplication, twice over (a margin): 2**-51 */
static const double PRODUCT_ERROR = 0x1p-51;

/* ------------------------------------------------------------------------------------------ */
/* the loops (no Python object is touched: they run without the GIL)                          */

/* The number of decimal digits of v >= 0. */
static inline Py_ssize_t
natural_len(int64_t v)
{
    Py_ssize_t n = 1;
    int64_t t = v / 10;
    while (t > 0) {
        n += 1;
        t /= 10;
    }
    return n;
}

/* The n decimal digits of v >= 0 at out[at:]; returns the end. */
static inline Py_ssize_t
put_natural(uint8_t *out, Py_ssize_t at, int64_t v, Py_ssize_t n)
{
    Py_ssize_t end = at + n, p = end - 1;
    for (;;) {
        out[p] = (uint8_t)(48 + v % 10);
        v /= 10;
        p -= 1;
        if (p < at)
            break;
    }
    return end;
}

/* text[0:len] at out[at:]; the end, or TOO_SMALL. */
static inline Py_ssize_t
put_text(uint8_t *out, Py_ssize_t cap, Py_ssize_t at, const uint8_t *text, Py_ssize_t len)
{
    if (len > cap - at)
        return TOO_SMALL;
    if (len)
        memcpy(out + at, text, (size_t)len);
    return at + len;
}

/* printf's text of the arguments at out[at:]; the end, or TOO_SMALL. */
static Py_ssize_t
put_format(uint8_t *out, Py_ssize_t cap, Py_ssize_t at, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    const int len = vsnprintf((char *)out + at, (size_t)(cap - at), format, args);
    va_end(args);
    if (len < 0 || (Py_ssize_t)len >= cap - at)
        return TOO_SMALL;
    return at + len;
}

/* "%.{digits}f" of v at out[at:] by printf; the end, TOO_SMALL, or GIVE_UP when printf wrote
 * anything but a sign, digits and a point (a process whose LC_NUMERIC has a decimal comma). */
static Py_ssize_t
put_fixed(uint8_t *out, Py_ssize_t cap, Py_ssize_t at, int digits, double v)
{
    const Py_ssize_t end = put_format(out, cap, at, "%.*f", digits, v);
    for (Py_ssize_t i = at; i < end; i++)
        if (!((out[i] >= 48 && out[i] <= 57) || out[i] == 46 || out[i] == 45))
            return GIVE_UP;
    return end;
}

/* "00" to "99": two digits a step */
static const char DIGIT_PAIRS[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* The digits decimal digits of v (0 <= v < 10**digits, leading zeros written) at out[at:]. */
static inline Py_ssize_t
put_padded(uint8_t *out, Py_ssize_t at, int64_t v, int digits)
{
    Py_ssize_t p = at + digits;
    while (p - at >= 2) {
        const int64_t q = v / 100;
        const int pair = (int)(v - q * 100);
        p -= 2;
        out[p] = (uint8_t)DIGIT_PAIRS[2 * pair];
        out[p + 1] = (uint8_t)DIGIT_PAIRS[2 * pair + 1];
        v = q;
    }
    if (p > at)
        out[at] = (uint8_t)(48 + v);
    return at + digits;
}

/* fixed_list_loop's body for one ``digits``: inlined into a copy per common value (the
 * division by 10**digits then becomes a multiplication: two thirds of the loop's time were that
 * division, stop 57) and into the general loop for the others. */
static inline __attribute__((always_inline)) Py_ssize_t
fixed_list_body(const double *values, Py_ssize_t n, const int digits, uint8_t *out, Py_ssize_t cap)
{
    const double scale = POW10[digits];
    const int64_t unit = (int64_t)scale; /* exact: digits <= 18 */
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i) {
            if (at >= cap)
                return TOO_SMALL;
            out[at++] = 44; /* , */
        }
        const double x = values[i];
        if (!isfinite(x)) {
            if (4 > cap - at)
                return TOO_SMALL;
            out[at] = 110; /* null */
            out[at + 1] = 117;
            out[at + 2] = 108;
            out[at + 3] = 108;
            at += 4;
            continue;
        }
        const double y = fabs(x) * scale;
        const double whole = floor(y);
        if (!(y < NO_FRACTION) || fabs((y - whole) - 0.5) <= y * PRODUCT_ERROR) {
            /* no fraction left to round, a tie, or too near one to tell which side the exact
             * product is on: printf's text, which rounds the exact value as "%f" does */
            if (!(fabs(x) < PRINTED_LIMIT))
                return GIVE_UP;
            if ((at = put_fixed(out, cap, at, digits, x)) < 0)
                return at;
            continue;
        }
        const int64_t r = (int64_t)whole + (y - whole > 0.5 ? 1 : 0);
        const int minus = copysign(1.0, x) < 0.0; /* as "%f" writes it, for -0.0 and values rounding to zero too */
        const int64_t units = r / unit;           /* r >= 0: C's division is the floor division */
        const Py_ssize_t nd = natural_len(units);
        if (minus + nd + (digits ? 1 + digits : 0) > cap - at)
            return TOO_SMALL;
        if (minus)
            out[at++] = 45; /* - */
        at = put_natural(out, at, units, nd);
        if (digits) {
            out[at++] = 46; /* . */
            at = put_padded(out, at, r - units * unit, digits);
        }
    }
    return at;
}

static Py_ssize_t
fixed_list_loop(const double *values, Py_ssize_t n, int digits, uint8_t *out, Py_ssize_t cap)
{
    switch (digits) { /* the decimals pal writes: a page's data (2-8), its tables (0-6) */
    case 0: return fixed_list_body(values, n, 0, out, cap);
    case 1: return fixed_list_body(values, n, 1, out, cap);
    case 2: return fixed_list_body(values, n, 2, out, cap);
    case 3: return fixed_list_body(values, n, 3, out, cap);
    case 4: return fixed_list_body(values, n, 4, out, cap);
    case 5: return fixed_list_body(values, n, 5, out, cap);
    case 6: return fixed_list_body(values, n, 6, out, cap);
    case 7: return fixed_list_body(values, n, 7, out, cap);
    case 8: return fixed_list_body(values, n, 8, out, cap);
    default: return fixed_list_body(values, n, digits, out, cap);
    }
}

/* v in tenths (svg._texts) at out[at:]; the end, GIVE_UP outside [0, 1000.04), or TOO_SMALL. */
static inline Py_ssize_t
put_tenths(uint8_t *out, Py_ssize_t cap, Py_ssize_t at, double v)
{
    if (!(v >= 0.0 && v < 1000.04))
        return GIVE_UP;
    const int64_t t = (int64_t)rint(v * 10.0);
    const int64_t whole = t / 10; /* 0 ... 1000: its digits written without counting them first */
    const Py_ssize_t len = (whole >= 1000 ? 4 : whole >= 100 ? 3 : whole >= 10 ? 2 : 1) + 2;
    if (len > cap - at)
        return TOO_SMALL;
    if (whole >= 100) {
        if (whole >= 1000)
            out[at++] = (uint8_t)(48 + whole / 1000);
        out[at++] = (uint8_t)(48 + whole / 100 % 10);
    }
    if (whole >= 10)
        out[at++] = (uint8_t)(48 + whole / 10 % 10);
    out[at] = (uint8_t)(48 + whole % 10);
    out[at + 1] = 46; /* . */
    out[at + 2] = (uint8_t)(48 + t % 10);
    return at + 3;
}

/* A piece of markup: len bytes at p. */
typedef struct {
    const uint8_t *p;
    Py_ssize_t len;
} Text;

/* pre x mid y post (the numbers in tenths) at out[at:]; the end, or below zero. */
static inline Py_ssize_t
put_pair(uint8_t *out, Py_ssize_t cap, Py_ssize_t at, Text pre, double x, Text mid, double y, Text post)
{
    if ((at = put_text(out, cap, at, pre.p, pre.len)) < 0 || (at = put_tenths(out, cap, at, x)) < 0
        || (at = put_text(out, cap, at, mid.p, mid.len)) < 0 || (at = put_tenths(out, cap, at, y)) < 0)
        return at;
    return put_text(out, cap, at, post.p, post.len);
}

static Py_ssize_t
tenths_pairs_loop(const double *flat, Py_ssize_t n, Text pre, Text mid, Text post, Text between,
                  uint8_t *out, Py_ssize_t cap)
{
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n - 1; i += 2) {
        if (i && (at = put_text(out, cap, at, between.p, between.len)) < 0)
            return at;
        if ((at = put_pair(out, cap, at, pre, flat[i], mid, flat[i + 1], post)) < 0)
            return at;
    }
    return at;
}

/* The first run of true in ok[i:n]: its start in *a, its end (exclusive) returned; equal at the end. */
static inline Py_ssize_t
next_run(const uint8_t *ok, Py_ssize_t n, Py_ssize_t i, Py_ssize_t *a)
{
    while (i < n && !ok[i])
        i++;
    *a = i;
    while (i < n && ok[i])
        i++;
    return i;
}

/* " x,y" (no blank before the first point) at out[at:]; the end, or below zero. */
static inline Py_ssize_t
put_point(uint8_t *out, Py_ssize_t cap, Py_ssize_t at, int first, double x, double y)
{
    if (!first) {
        if (at >= cap)
            return TOO_SMALL;
        out[at++] = 32; /* blank */
    }
    if ((at = put_tenths(out, cap, at, x)) < 0)
        return at;
    if (at >= cap)
        return TOO_SMALL;
    out[at] = 44; /* , */
    return put_tenths(out, cap, at + 1, y);
}

/* svg._draw of a Line: each run of ok longer than one point as head + its points (inside a level
 * stretch only its ends: svg._corners) + tail. */
static Py_ssize_t
polylines_loop(const double *xs, const double *ys, const uint8_t *ok, Py_ssize_t n, Text head, Text tail,
               uint8_t *out, Py_ssize_t cap)
{
    Py_ssize_t at = 0, a, i;
    i = next_run(ok, n, 0, &a);
    while (a < i) {
        if (i - a == 1) {
            i = next_run(ok, n, i, &a);
            continue; /* a lone sample is drawn by its dot */
        }
        if ((at = put_text(out, cap, at, head.p, head.len)) < 0)
            return at;
        for (Py_ssize_t k = a; k < i; k++) {
            if (a < k && k < i - 1) {
                const double t = rint(ys[k] * 10.0);
                if (t == rint(ys[k - 1] * 10.0) && t == rint(ys[k + 1] * 10.0))
                    continue;
            }
            if ((at = put_point(out, cap, at, k == a, xs[k], ys[k])) < 0)
                return at;
        }
        if ((at = put_text(out, cap, at, tail.p, tail.len)) < 0)
            return at;
        i = next_run(ok, n, i, &a);
    }
    return at;
}

/* svg._draw of a Band: each run of ok as head + its outline (the upper edge left to right, the
 * lower edge back) + tail. */
static Py_ssize_t
polygons_loop(const double *xs, const double *lo, const double *hi, const uint8_t *ok, Py_ssize_t n,
              Text head, Text tail, uint8_t *out, Py_ssize_t cap)
{
    Py_ssize_t at = 0, a, i;
    i = next_run(ok, n, 0, &a);
    while (a < i) {
        if ((at = put_text(out, cap, at, head.p, head.len)) < 0)
            return at;
        for (Py_ssize_t k = a; k < i; k++)
            if ((at = put_point(out, cap, at, k == a, xs[k], hi[k])) < 0)
                return at;
        for (Py_ssize_t k = i - 1; k > a - 1; k--)
            if ((at = put_point(out, cap, at, 0, xs[k], lo[k])) < 0)
                return at;
        if ((at = put_text(out, cap, at, tail.p, tail.len)) < 0)
            return at;
        i = next_run(ok, n, i, &a);
    }
    return at;
}

/* text[start:stop] as Python (and Numba) slice it: negative bounds from the end, clamped. */
static inline Text
slice_of(const uint8_t *text, Py_ssize_t len, int64_t start, int64_t stop)
{
    if (start < 0) {
        start += len;
        if (start < 0)
            start = 0;
    }
    else if (start > len)
        start = len;
    if (stop < 0) {
        stop += len;
        if (stop < 0)
            stop = 0;
    }
    else if (stop > len)
        stop = len;
    Text t = {text + start, stop > start ? (Py_ssize_t)(stop - start) : 0};
    return t;
}

static Py_ssize_t
drawn_items_loop(const double *xs, const uint8_t *okx, Py_ssize_t n, const double *ys, Py_ssize_t rows,
                 const int64_t *kinds, double c, double y0, double sy, const uint8_t *texts,
                 Py_ssize_t texts_len, const int64_t *bounds, uint8_t *out, Py_ssize_t cap)
{
    double *lo = PyMem_RawMalloc(sizeof(double) * (size_t)(2 * n + 1));
    uint8_t *ok = PyMem_RawMalloc((size_t)n + 1);
    Py_ssize_t at = 0;
    if (lo == NULL || ok == NULL) {
        at = NO_MEMORY;
        goto done;
    }
    double *hi = lo + n;
    for (Py_ssize_t r = 0; r < rows; r++) {
        const int64_t kind = kinds[r];
        if (kind == UPPER)
            continue;
        if (kind == BAND && r + 1 >= rows) {
            at = NO_UPPER;
            goto done;
        }
        const double *row = ys + r * n;
        Py_ssize_t valid = 0;
        for (Py_ssize_t k = 0; k < n; k++) {
            const double v = row[k];
            lo[k] = c - (v - y0) * sy;
            ok[k] = okx[k] && isfinite(v);
            if (kind == BAND) {
                const double w = row[n + k];
                hi[k] = c - (w - y0) * sy;
                ok[k] = ok[k] && isfinite(w);
            }
            valid += ok[k];
        }
        const int64_t *b = bounds + 4 * r;
        const Text head = slice_of(texts, texts_len, b[0], b[1]);
        const Text tail = slice_of(texts, texts_len, b[2], b[3]);
        Py_ssize_t got;
        if (kind == LINE)
            got = polylines_loop(xs, lo, ok, n, head, tail, out + at, cap - at);
        else if (kind == BAND)
            got = polygons_loop(xs, lo, hi, ok, n, head, tail, out + at, cap - at);
        else if (valid == 0)
            continue; /* no sample to draw: no path */
        else { /* "M x yh0" a point (svg._draw's pairs), between the head and the tail */
            Py_ssize_t p = put_text(out, cap, at, head.p, head.len);
            for (Py_ssize_t k = 0; k < n && p >= 0; k++) {
                if (!ok[k])
                    continue;
                if (p >= cap) {
                    p = TOO_SMALL;
                    break;
                }
                out[p] = 77; /* M */
                if ((p = put_tenths(out, cap, p + 1, xs[k])) < 0)
                    break;
                if (p >= cap) {
                    p = TOO_SMALL;
                    break;
                }
                out[p] = 32; /* blank */
                if ((p = put_tenths(out, cap, p + 1, lo[k])) < 0)
                    break;
                if (2 > cap - p) {
                    p = TOO_SMALL;
                    break;
                }
                out[p] = 104; /* h0 */
                out[p + 1] = 48;
                p += 2;
            }
            if (p >= 0)
                p = put_text(out, cap, p, tail.p, tail.len);
            got = p < 0 ? p : p - at;
        }
        if (got < 0) {
            at = got;
            goto done;
        }
        at += got;
    }
done:
    PyMem_RawFree(lo);
    PyMem_RawFree(ok);
    return at;
}

/* ------------------------------------------------------------------------------------------ */
/* a whole chart: svg.render_svg's frame, grid and items in one call                          */

/* the most ticks nice_ticks_loop makes (svg.nice_ticks makes about five) */
#define MAX_TICKS 64
/* beyond this magnitude a tick's arithmetic is left to Python (its ints are exact, these doubles
 * only below 2**53) */
static const double TICK_LIMIT = 1e12;

/* Python's round(v, 12): correctly rounded to 12 decimals, ties to even, as "%.12f" writes it
 * (glibc's printf rounds the exact binary value to nearest, ties to even, as dtoa's mode 3 does)
 * and read back (strtod, correctly rounded as Python's). */
static double
round12(double v)
{
    char text[64];
    const int len = snprintf(text, sizeof text, "%.12f", v);
    if (len < 0 || len >= (int)sizeof text || strchr(text, '.') == NULL)
        return NAN; /* (no point: a decimal comma's locale; the caller gives up) */
    return strtod(text, NULL);
}

/* svg.nice_ticks(lo, hi) (target 5) into ticks; their count, or -1 where Python must decide
 * (extreme magnitudes, more than cap ticks). Its floats are Python's: 10 ** k is an int for k >= 0
 * (exact here too, POW10) and pow(10.0, k) below; a step of 1, 2, 5 or 10 times such an int stays
 * an int in Python, whose ticks are not rounded (round of an int is the int): the same values here
 * as long as they are below TICK_LIMIT. */
static int
nice_ticks_loop(double lo, double hi, double *ticks, int cap)
{
    if (!(isfinite(lo) && isfinite(hi)))
        return 0;
    if (hi <= lo)
        hi = lo + (fabs(lo) != 0.0 ? fabs(lo) : 1.0);
    if (!(fabs(lo) < TICK_LIMIT && fabs(hi) < TICK_LIMIT))
        return -1;
    const double raw = (hi - lo) / 5.0;
    if (!(raw > 0.0))
        return -1;
    const double k = floor(log10(raw));
    if (!(k >= -300.0 && k <= 15.0))
        return -1;
    const int whole = k >= 0.0;
    const double mag = whole ? POW10[(int)k] : pow(10.0, k);
    static const double STEPS[5] = {1.0, 2.0, 2.5, 5.0, 10.0};
    double step = 0.0;
    int exact = 0;
    for (int i = 0; i < 5; i++) {
        const double s = STEPS[i] * mag;
        if (s >= raw) {
            step = s;
            exact = whole && i != 2;
            break;
        }
    }
    if (!(step > 0.0))
        return -1;
    const double limit = hi + step * 1e-9;
    double first = ceil(lo / step - 1e-9);
    if (first == 0.0)
        first = 0.0; /* Python's math.ceil gives an int: no -0, whose ticks would read "-0" */
    int count = 0;
    for (double v = first * step; v <= limit; v += step) {
        if (count >= cap)
            return -1;
        ticks[count] = exact ? v : round12(v);
        if (isnan(ticks[count++]))
            return -1;
    }
    return count;
}

/* [*lo, *hi] widened to the finite values of v[0 .. n-1]. */
static void
widen(const double *v, Py_ssize_t n, double *lo, double *hi)
{
    for (Py_ssize_t i = 0; i < n; i++)
        if (isfinite(v[i])) {
            if (v[i] < *lo)
                *lo = v[i];
            if (v[i] > *hi)
                *hi = v[i];
        }
}

/* The chart's layout and x axis (svg._x_frame): its plot's left, top, width and height in pixels,
 * the x value at its left edge and the pixels per x unit, the finite x values' range. */
typedef struct {
    int left, top, pw, ph;
    double x0, sx, xmin, xmax;
} Frame;

/* svg.render_svg of a chart whose items are lines, bands and sample paths over one x array (the
 * rows of ys, heights in data units, drawn over the pixel x positions xs as drawn_items_loop
 * draws them), then anomaly rings (each of the nrings groups: its count of (rx, ry), x in data
 * units, and its markup before, between and after the two numbers): fixed[:head] (the document's
 * head up to the plot's frame), the grid and its labels, fixed[head:head + middle] (the time axis
 * and the y title), the items, the rings, the rest of fixed (the legend and the end). */
static Py_ssize_t
chart_loop(const uint8_t *fixed, Py_ssize_t fixed_len, Py_ssize_t head, Py_ssize_t middle, const double *xs,
           const uint8_t *okx, Py_ssize_t n, const double *ys, Py_ssize_t rows, const int64_t *kinds,
           const uint8_t *texts, Py_ssize_t texts_len, const int64_t *bounds, const double *rx, const double *ry,
           const int64_t *rings, Py_ssize_t nrings, const uint8_t *rtexts, Py_ssize_t rtexts_len, Frame f,
           uint8_t *out, Py_ssize_t cap)
{
    /* the heights' range: every finite value drawn, the rings' too (render_svg's ycat) */
    double lo = INFINITY, hi = -INFINITY;
    widen(ys, rows * n, &lo, &hi);
    Py_ssize_t m = 0;
    for (Py_ssize_t r = 0; r < nrings; r++)
        m += rings[5 * r];
    for (Py_ssize_t j = 0; j < m; j++)
        if (isfinite(rx[j]) && !(f.xmin <= rx[j] && rx[j] <= f.xmax))
            return GIVE_UP; /* a ring beyond the x array's range would widen the axis: Python draws it */
    widen(ry, m, &lo, &hi);
    if (!(lo <= hi))
        return GIVE_UP; /* nothing finite to draw: "no data" */
    double pad = (hi - lo) * 0.08;
    if (pad == 0.0)
        pad = fabs(hi) * 0.05;
    if (pad == 0.0)
        pad = 1.0;
    double y0 = lo - pad, y1 = hi + pad;
    double ticks[MAX_TICKS];
    const int nt = nice_ticks_loop(y0, y1, ticks, MAX_TICKS);
    if (nt < 0 || !(isfinite(y0) && isfinite(y1)))
        return GIVE_UP;
    if (nt) { /* Python's min(y0, first) and max(y1, last): the first argument unless the second is beyond */
        if (ticks[0] < y0)
            y0 = ticks[0];
        if (ticks[nt - 1] > y1)
            y1 = ticks[nt - 1];
    }
    const double sy = (double)f.ph / (y1 - y0);
    const double c = (double)(f.top + f.ph);
    Py_ssize_t at = put_text(out, cap, 0, fixed, head);
    if (at < 0)
        return at;
    /* the grid and its labels (svg._tick_digits' decimals) */
    const double step = nt > 1 ? ticks[1] - ticks[0] : 1.0;
    int digits = 0;
    if (step > 0.0) {
        const double d = -floor(log10(step));
        digits = d <= 0.0 ? 0 : d >= 6.0 ? 6 : (int)d;
    }
    for (int t = 0; t < nt; t++) {
        const double y = c - (ticks[t] - y0) * sy;
        if ((at = put_format(out, cap, at, "<line x1=\"%d\" y1=\"", f.left)) < 0
            || (at = put_fixed(out, cap, at, 1, y)) < 0
            || (at = put_format(out, cap, at, "\" x2=\"%d\" y2=\"", f.left + f.pw)) < 0
            || (at = put_fixed(out, cap, at, 1, y)) < 0
            || (at = put_format(out, cap, at, "\" stroke=\"#e5e5e5\"/><text x=\"%d\" y=\"", f.left - 4)) < 0
            || (at = put_fixed(out, cap, at, 1, y + 4.0)) < 0
            || (at = put_format(out, cap, at, "\" text-anchor=\"end\">")) < 0
            || (at = put_fixed(out, cap, at, digits, ticks[t])) < 0
            || (at = put_format(out, cap, at, "</text>")) < 0)
            return at;
    }
    if ((at = put_text(out, cap, at, fixed + head, middle)) < 0)
        return at;
    const Py_ssize_t got = drawn_items_loop(xs, okx, n, ys, rows, kinds, c, y0, sy, texts, texts_len, bounds,
                                            out + at, cap - at);
    if (got < 0)
        return got;
    at += got;
    Py_ssize_t j = 0;
    for (Py_ssize_t r = 0; r < nrings; r++) {
        const int64_t *g = rings + 5 * r;
        const Text pre = slice_of(rtexts, rtexts_len, g[1], g[2]);
        const Text mid = slice_of(rtexts, rtexts_len, g[2], g[3]);
        const Text post = slice_of(rtexts, rtexts_len, g[3], g[4]);
        for (int64_t k = 0; k < g[0]; k++, j++) {
            const double x = rx[j], v = ry[j];
            if (!(isfinite(x) && isfinite(v)))
                continue;
            if ((at = put_pair(out, cap, at, pre, (double)f.left + (x - f.x0) * f.sx, mid, c - (v - y0) * sy,
                               post)) < 0)
                return at;
        }
    }
    return put_text(out, cap, at, fixed + head + middle, fixed_len - head - middle);
}

/* ------------------------------------------------------------------------------------------ */
/* the Python functions: arguments, buffers, errors                                           */

enum { F64, I64, BYTES };

/* obj's buffer in *view (C-contiguous, of ndim dimensions, its items of the kind), or -1 with an
 * exception set (and nothing held). */
static int
get_array(PyObject *obj, Py_buffer *view, const char *func, const char *name, int kind, int ndim, int writable)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_Format(PyExc_TypeError, "%s: %s must be a C-contiguous%s array (%S)", func, name,
                     writable ? " writable" : "", value ? value : Py_None);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return -1;
    }
    const char *f = view->format ? view->format : "B";
    if (*f == '@' || *f == '=')
        f++;
#if PY_LITTLE_ENDIAN
    else if (*f == '<' && (f[1] == 'd' || f[1] == 'q'))
        f++;
#endif
    int ok;
    const char *what;
    switch (kind) {
    case F64:
        ok = view->itemsize == 8 && strcmp(f, "d") == 0;
        what = "a float64";
        break;
    case I64:
        ok = view->itemsize == 8 && (strcmp(f, "l") == 0 || strcmp(f, "q") == 0);
        what = "an int64";
        break;
    default:
        ok = view->itemsize == 1 && f[0] != 0 && f[1] == 0 && strchr("Bb?c", f[0]) != NULL;
        what = "a uint8 (or bool)";
        break;
    }
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be %s array, not of format '%s' (item size %zd)",
                     func, name, what, view->format ? view->format : "B", view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    if (view->ndim != ndim) {
        PyErr_Format(PyExc_ValueError, "%s: %s must have %d dimension%s, not %d", func, name, ndim,
                     ndim == 1 ? "" : "s", view->ndim);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* Up to 16 buffers held by one call, all released at its end. */
typedef struct {
    Py_buffer views[16];
    int held;
} Held;

static Py_buffer *
hold(Held *h, PyObject *obj, const char *func, const char *name, int kind, int ndim, int writable)
{
    Py_buffer *view = &h->views[h->held];
    if (get_array(obj, view, func, name, kind, ndim, writable) < 0)
        return NULL;
    h->held++;
    return view;
}

static void
release(Held *h)
{
    while (h->held > 0)
        PyBuffer_Release(&h->views[--h->held]);
}

static Py_ssize_t
length(Py_buffer *view)
{
    return view->shape ? view->shape[0] : view->len / view->itemsize;
}

static int
check_args(const char *func, Py_ssize_t nargs, Py_ssize_t want)
{
    if (nargs == want)
        return 0;
    PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", func, want, nargs);
    return -1;
}

static int
at_least(const char *func, const char *name, Py_buffer *view, Py_ssize_t n, const char *of)
{
    if (length(view) >= n)
        return 0;
    PyErr_Format(PyExc_ValueError, "%s: %s has %zd items, fewer than %s (%zd)", func, name, length(view), of, n);
    return -1;
}

/* The rows drawn over xs (drawn_items, chart): ys one column per x, okx as long as xs, a kind
 * and four bounds per row; 0, or -1 with ValueError set. */
static int
check_rows(const char *func, Py_buffer *xs, Py_buffer *okx, Py_buffer *ys, Py_buffer *kinds, Py_buffer *bounds)
{
    const Py_ssize_t n = length(xs), rows = ys->shape[0];
    if (ys->shape[1] != n) {
        PyErr_Format(PyExc_ValueError, "%s: ys has %zd columns, not len(xs) (%zd)", func, ys->shape[1], n);
        return -1;
    }
    if (bounds->shape[1] != 4) {
        PyErr_Format(PyExc_ValueError, "%s: bounds has %zd columns, not 4", func, bounds->shape[1]);
        return -1;
    }
    if (at_least(func, "okx", okx, n, "xs") < 0 || at_least(func, "kinds", kinds, rows, "the rows of ys") < 0
        || at_least(func, "bounds", bounds, rows, "the rows of ys") < 0)
        return -1;
    return 0;
}

/* An integer argument into *v; 0, or -1 with an exception set. */
static int
get_ssize(PyObject *arg, Py_ssize_t *v)
{
    *v = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
    return *v == -1 && PyErr_Occurred() ? -1 : 0;
}

/* The loop's result as Python's: its length, -1 (a refusal), or an exception. */
static PyObject *
result(const char *func, Py_ssize_t got)
{
    if (got >= 0 || got == GIVE_UP)
        return PyLong_FromSsize_t(got);
    if (got == TOO_SMALL)
        return PyErr_Format(PyExc_ValueError, "%s: out is too small for the text", func);
    if (got == NO_UPPER)
        return PyErr_Format(PyExc_ValueError, "%s: the last row is a BAND without its UPPER row", func);
    return PyErr_NoMemory();
}

static Text
text_of(Py_buffer *view)
{
    Text t = {(const uint8_t *)view->buf, view->len};
    return t;
}

PyDoc_STRVAR(fixed_list_doc,
"fixed_list(values, digits, out)\n--\n\n"
"``\",\".join(\"%.{digits}f\" % v)`` of the float64 ``values`` (``null`` where not finite) into the\n"
"uint8 array ``out`` (``len(values) * (digits + 22)`` bytes suffice); its length, or -1 when some\n"
"value is 1e16 or more in size (a value whose rounding the loop cannot be sure of, a tie or near\n"
"one, is written by printf, which rounds as Python does). ``digits``: 0 to 18.");

static PyObject *
fixed_list(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const char *func = "fixed_list";
    if (check_args(func, nargs, 3) < 0)
        return NULL;
    Py_ssize_t digits;
    if (get_ssize(args[1], &digits) < 0)
        return NULL;
    if (digits < 0 || digits > MAX_DIGITS)
        return PyErr_Format(PyExc_ValueError, "%s: digits must be 0 to %d, not %zd", func, MAX_DIGITS, digits);
    Held h = {.held = 0};
    Py_buffer *values, *out;
    if (!(values = hold(&h, args[0], func, "values", F64, 1, 0))
        || !(out = hold(&h, args[2], func, "out", BYTES, 1, 1))) {
        release(&h);
        return NULL;
    }
    Py_ssize_t got;
    Py_BEGIN_ALLOW_THREADS
    got = fixed_list_loop((const double *)values->buf, length(values), (int)digits, (uint8_t *)out->buf, out->len);
    Py_END_ALLOW_THREADS
    release(&h);
    return result(func, got);
}

PyDoc_STRVAR(tenths_pairs_doc,
"tenths_pairs(flat, pre, mid, post, between, out)\n--\n\n"
"Each pair (x, y) of the float64 ``flat`` as ``pre x mid y post``, the pairs joined by ``between``\n"
"(uint8 arrays), the numbers in tenths (``svg._texts``). Returns the length written into ``out``,\n"
"or -1 when a number is outside [0, 1000.04) or not finite.");

static PyObject *
tenths_pairs(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const char *func = "tenths_pairs";
    if (check_args(func, nargs, 6) < 0)
        return NULL;
    Held h = {.held = 0};
    Py_buffer *flat, *pre, *mid, *post, *between, *out;
    if (!(flat = hold(&h, args[0], func, "flat", F64, 1, 0)) || !(pre = hold(&h, args[1], func, "pre", BYTES, 1, 0))
        || !(mid = hold(&h, args[2], func, "mid", BYTES, 1, 0))
        || !(post = hold(&h, args[3], func, "post", BYTES, 1, 0))
        || !(between = hold(&h, args[4], func, "between", BYTES, 1, 0))
        || !(out = hold(&h, args[5], func, "out", BYTES, 1, 1))) {
        release(&h);
        return NULL;
    }
    Py_ssize_t got;
    Py_BEGIN_ALLOW_THREADS
    got = tenths_pairs_loop((const double *)flat->buf, length(flat), text_of(pre), text_of(mid), text_of(post),
                            text_of(between), (uint8_t *)out->buf, out->len);
    Py_END_ALLOW_THREADS
    release(&h);
    return result(func, got);
}

PyDoc_STRVAR(polylines_doc,
"polylines(xs, ys, ok, head, tail, out)\n--\n\n"
"``svg._draw`` of a Line: each run of ``ok`` longer than one point as ``head`` + its points\n"
"(``x,y`` in tenths, blank-separated; inside a level stretch only its ends: ``svg._corners``)\n"
"+ ``tail``. The length written into ``out``, or -1 when a point is outside [0, 1000.04).");

static PyObject *
polylines(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const char *func = "polylines";
    if (check_args(func, nargs, 6) < 0)
        return NULL;
    Held h = {.held = 0};
    Py_buffer *xs, *ys, *ok, *head, *tail, *out;
    if (!(xs = hold(&h, args[0], func, "xs", F64, 1, 0)) || !(ys = hold(&h, args[1], func, "ys", F64, 1, 0))
        || !(ok = hold(&h, args[2], func, "ok", BYTES, 1, 0)) || !(head = hold(&h, args[3], func, "head", BYTES, 1, 0))
        || !(tail = hold(&h, args[4], func, "tail", BYTES, 1, 0))
        || !(out = hold(&h, args[5], func, "out", BYTES, 1, 1))
        || at_least(func, "xs", xs, length(ok), "ok") < 0 || at_least(func, "ys", ys, length(ok), "ok") < 0) {
        release(&h);
        return NULL;
    }
    Py_ssize_t got;
    Py_BEGIN_ALLOW_THREADS
    got = polylines_loop((const double *)xs->buf, (const double *)ys->buf, (const uint8_t *)ok->buf, length(ok),
                         text_of(head), text_of(tail), (uint8_t *)out->buf, out->len);
    Py_END_ALLOW_THREADS
    release(&h);
    return result(func, got);
}

PyDoc_STRVAR(polygons_doc,
"polygons(xs, lo, hi, ok, head, tail, out)\n--\n\n"
"``svg._draw`` of a Band: each run of ``ok`` as ``head`` + its outline (the upper edge left to\n"
"right, the lower edge back) + ``tail``. The length written, or -1 as ``polylines``.");

static PyObject *
polygons(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const char *func = "polygons";
    if (check_args(func, nargs, 7) < 0)
        return NULL;
    Held h = {.held = 0};
    Py_buffer *xs, *lo, *hi, *ok, *head, *tail, *out;
    if (!(xs = hold(&h, args[0], func, "xs", F64, 1, 0)) || !(lo = hold(&h, args[1], func, "lo", F64, 1, 0))
        || !(hi = hold(&h, args[2], func, "hi", F64, 1, 0)) || !(ok = hold(&h, args[3], func, "ok", BYTES, 1, 0))
        || !(head = hold(&h, args[4], func, "head", BYTES, 1, 0))
        || !(tail = hold(&h, args[5], func, "tail", BYTES, 1, 0))
        || !(out = hold(&h, args[6], func, "out", BYTES, 1, 1))
        || at_least(func, "xs", xs, length(ok), "ok") < 0 || at_least(func, "lo", lo, length(ok), "ok") < 0
        || at_least(func, "hi", hi, length(ok), "ok") < 0) {
        release(&h);
        return NULL;
    }
    Py_ssize_t got;
    Py_BEGIN_ALLOW_THREADS
    got = polygons_loop((const double *)xs->buf, (const double *)lo->buf, (const double *)hi->buf,
                        (const uint8_t *)ok->buf, length(ok), text_of(head), text_of(tail), (uint8_t *)out->buf,
                        out->len);
    Py_END_ALLOW_THREADS
    release(&h);
    return result(func, got);
}

PyDoc_STRVAR(drawn_items_doc,
"drawn_items(xs, okx, ys, kinds, c, y0, sy, texts, bounds, out)\n--\n\n"
"``svg._draw`` of each row of ``ys`` (values in data units over the pixel x positions ``xs``,\n"
"finite where ``okx``) as its kind says (``LINE``, ``BAND`` + ``UPPER``, ``SAMPLES``), into\n"
"``out``, in order; a row's height in pixels is ``c - (v - y0) * sy``. A row's markup is\n"
"``texts[bounds[r, 0]:bounds[r, 1]]`` (its head), its points, ``texts[bounds[r, 2]:bounds[r, 3]]``\n"
"(its tail); a sample path without a valid point is not written. The length written, or -1 when\n"
"a point is outside [0, 1000.04) (the caller then draws the items one by one).");

static PyObject *
drawn_items(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const char *func = "drawn_items";
    if (check_args(func, nargs, 10) < 0)
        return NULL;
    const double c = PyFloat_AsDouble(args[4]);
    if (c == -1.0 && PyErr_Occurred())
        return NULL;
    const double y0 = PyFloat_AsDouble(args[5]);
    if (y0 == -1.0 && PyErr_Occurred())
        return NULL;
    const double sy = PyFloat_AsDouble(args[6]);
    if (sy == -1.0 && PyErr_Occurred())
        return NULL;
    Held h = {.held = 0};
    Py_buffer *xs, *okx, *ys, *kinds, *texts, *bounds, *out;
    if (!(xs = hold(&h, args[0], func, "xs", F64, 1, 0)) || !(okx = hold(&h, args[1], func, "okx", BYTES, 1, 0))
        || !(ys = hold(&h, args[2], func, "ys", F64, 2, 0)) || !(kinds = hold(&h, args[3], func, "kinds", I64, 1, 0))
        || !(texts = hold(&h, args[7], func, "texts", BYTES, 1, 0))
        || !(bounds = hold(&h, args[8], func, "bounds", I64, 2, 0))
        || !(out = hold(&h, args[9], func, "out", BYTES, 1, 1))) {
        release(&h);
        return NULL;
    }
    const Py_ssize_t n = length(xs), rows = ys->shape[0];
    if (check_rows(func, xs, okx, ys, kinds, bounds) < 0)
        goto fail;
    Py_ssize_t got;
    Py_BEGIN_ALLOW_THREADS
    got = drawn_items_loop((const double *)xs->buf, (const uint8_t *)okx->buf, n, (const double *)ys->buf, rows,
                           (const int64_t *)kinds->buf, c, y0, sy, (const uint8_t *)texts->buf, texts->len,
                           (const int64_t *)bounds->buf, (uint8_t *)out->buf, out->len);
    Py_END_ALLOW_THREADS
    release(&h);
    return result(func, got);
fail:
    release(&h);
    return NULL;
}

PyDoc_STRVAR(chart_doc,
"chart(fixed, head, middle, xs, okx, ys, kinds, texts, bounds, rx, ry, rings, rtexts, frame, out)\n--\n\n"
"``svg.render_svg`` of a chart whose items are lines, bands and sample paths over one x array,\n"
"then anomaly rings: ``fixed[:head]`` (the head up to the plot's frame), the y grid and its labels\n"
"(``nice_ticks`` of the heights' range with its margin), ``fixed[head:head + middle]`` (the time\n"
"axis and the y title), the rows of ``ys`` as ``drawn_items`` draws them, each group of rings\n"
"(``rings[g]``: its count of ``(rx, ry)`` pairs, x in data units, and the bounds in ``rtexts`` of its\n"
"markup before, between and after the numbers), the rest of ``fixed``. ``frame``: left, top, width\n"
"and height of the plot in pixels, the x value at its left edge, pixels per x unit, and the range of\n"
"the finite x values. The length written into ``out``, or -1 where Python draws the chart (no finite\n"
"height, a point off the canvas, extreme magnitudes).");

static PyObject *
chart(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const char *func = "chart";
    if (check_args(func, nargs, 15) < 0)
        return NULL;
    Py_ssize_t head, middle;
    if (get_ssize(args[1], &head) < 0 || get_ssize(args[2], &middle) < 0)
        return NULL;
    Held h = {.held = 0};
    Py_buffer *fixed, *xs, *okx, *ys, *kinds, *texts, *bounds, *rx, *ry, *rings, *rtexts, *frame, *out;
    if (!(fixed = hold(&h, args[0], func, "fixed", BYTES, 1, 0)) || !(xs = hold(&h, args[3], func, "xs", F64, 1, 0))
        || !(okx = hold(&h, args[4], func, "okx", BYTES, 1, 0)) || !(ys = hold(&h, args[5], func, "ys", F64, 2, 0))
        || !(kinds = hold(&h, args[6], func, "kinds", I64, 1, 0))
        || !(texts = hold(&h, args[7], func, "texts", BYTES, 1, 0))
        || !(bounds = hold(&h, args[8], func, "bounds", I64, 2, 0))
        || !(rx = hold(&h, args[9], func, "rx", F64, 1, 0)) || !(ry = hold(&h, args[10], func, "ry", F64, 1, 0))
        || !(rings = hold(&h, args[11], func, "rings", I64, 2, 0))
        || !(rtexts = hold(&h, args[12], func, "rtexts", BYTES, 1, 0))
        || !(frame = hold(&h, args[13], func, "frame", F64, 1, 0))
        || !(out = hold(&h, args[14], func, "out", BYTES, 1, 1))) {
        release(&h);
        return NULL;
    }
    const Py_ssize_t n = length(xs), rows = ys->shape[0], nrings = rings->shape[0];
    if (head < 0 || middle < 0 || head + middle > fixed->len) {
        PyErr_Format(PyExc_ValueError, "%s: head (%zd) and middle (%zd) must lie inside fixed (%zd bytes)", func,
                     head, middle, fixed->len);
        goto fail;
    }
    if (rings->shape[1] != 5) {
        PyErr_Format(PyExc_ValueError, "%s: rings has %zd columns, not 5", func, rings->shape[1]);
        goto fail;
    }
    if (check_rows(func, xs, okx, ys, kinds, bounds) < 0 || at_least(func, "frame", frame, 8, "its eight numbers") < 0)
        goto fail;
    Py_ssize_t m = 0;
    for (Py_ssize_t r = 0; r < nrings; r++) {
        const int64_t count = ((const int64_t *)rings->buf)[5 * r];
        if (count < 0) {
            PyErr_Format(PyExc_ValueError, "%s: a group of rings has a negative count", func);
            goto fail;
        }
        m += (Py_ssize_t)count;
    }
    if (at_least(func, "rx", rx, m, "the rings' counts") < 0 || at_least(func, "ry", ry, m, "the rings' counts") < 0)
        goto fail;
    const double *fr = (const double *)frame->buf;
    for (int i = 0; i < 4; i++)
        if (!(fr[i] == floor(fr[i]) && fabs(fr[i]) < 1e6)) {
            PyErr_Format(PyExc_ValueError, "%s: the frame's left, top, width and height must be whole pixels", func);
            goto fail;
        }
    const Frame f = {(int)fr[0], (int)fr[1], (int)fr[2], (int)fr[3], fr[4], fr[5], fr[6], fr[7]};
    Py_ssize_t got;
    Py_BEGIN_ALLOW_THREADS
    got = chart_loop((const uint8_t *)fixed->buf, fixed->len, head, middle, (const double *)xs->buf,
                     (const uint8_t *)okx->buf, n, (const double *)ys->buf, rows, (const int64_t *)kinds->buf,
                     (const uint8_t *)texts->buf, texts->len, (const int64_t *)bounds->buf, (const double *)rx->buf,
                     (const double *)ry->buf, (const int64_t *)rings->buf, nrings, (const uint8_t *)rtexts->buf,
                     rtexts->len, f, (uint8_t *)out->buf, out->len);
    Py_END_ALLOW_THREADS
    release(&h);
    return result(func, got);
fail:
    release(&h);
    return NULL;
}

static PyMethodDef methods[] = {
    {"fixed_list", (PyCFunction)(void (*)(void))fixed_list, METH_FASTCALL, fixed_list_doc},
    {"tenths_pairs", (PyCFunction)(void (*)(void))tenths_pairs, METH_FASTCALL, tenths_pairs_doc},
    {"polylines", (PyCFunction)(void (*)(void))polylines, METH_FASTCALL, polylines_doc},
    {"polygons", (PyCFunction)(void (*)(void))polygons, METH_FASTCALL, polygons_doc},
    {"drawn_items", (PyCFunction)(void (*)(void))drawn_items, METH_FASTCALL, drawn_items_doc},
    {"chart", (PyCFunction)(void (*)(void))chart, METH_FASTCALL, chart_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(module_doc,
"The number texts of the drill-downs, compiled (C, built at install): ``\"%.{d}f\"`` of float arrays\n"
"(``fixed_list``) and SVG coordinates in tenths of a pixel (``tenths_pairs``, ``polylines``,\n"
"``polygons``, ``drawn_items``; a whole chart: ``chart``), written into uint8 arrays byte for byte as the Python forms write\n"
"them, or -1 where a loop cannot be sure of that (the caller then runs the Python form).");

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "text_kernel", module_doc, 0, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit_text_kernel(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "LINE", LINE) < 0 || PyModule_AddIntConstant(m, "BAND", BAND) < 0
        || PyModule_AddIntConstant(m, "SAMPLES", SAMPLES) < 0 || PyModule_AddIntConstant(m, "UPPER", UPPER) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
