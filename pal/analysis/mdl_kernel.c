/*
 * pal.analysis.mdl_kernel: the MDL search loop of pal.analysis.mdl, in C (a CPython extension
 * built at install by setup.py with -O2 -fno-fast-math -ffp-contract=off -fno-strict-aliasing).
 *
 * Why compiled: the NumPy search pays ~25 us of interpreter overhead per run, which dominates the
 * short series (180 runs) the daily job recomputes for every test. Why a module of its own:
 * pal.analysis.mdl loads it only when a search runs (never at import; when it was not built, the
 * NumPy path runs).
 *
 * Exactness (the results must equal jumpavg's bit for bit):
 *
 * - every float operation that reaches a result is the one mdl.group_bits /
 *   MdlState._extend_open does, in the same order; no fast-math, and no contraction of a*b+c
 *   into a fused multiply-add (-ffp-contract=off); a division by zero gives inf (IEEE), which the
 *   finiteness checks turn into a failure, instead of a check on every division;
 * - math.log is the C library's log, the function CPython's math.log calls; math.log(x, 2) is
 *   written log(x) / log(2) as CPython computes it;
 * - what CPython computes with its own code (math.lgamma) or depends only on the sample count
 *   comes in as tables computed by CPython (mdl._exact_tables);
 * - the exact bits are only ever computed in scalar code (log is never vectorised); the loops
 *   that run on several candidates per instruction (SSE2, AVX2 or AVX-512 intrinsics, see "The
 *   same two loops on 2, 4 or 8 candidates") compute the Welford merge (+-* / and sqrt, correctly rounded in
 *   any width) and the screen's lower bounds, each lane with the scalar loop's operations and bits.
 *
 * A run whose numbers leave the finite range (or hit a log domain error, where CPython raises)
 * makes the kernel return a failure; the caller then redoes the series on the NumPy path, which
 * behaves exactly as jumpavg does there.
 *
 * Only the CPython C API and the buffer protocol: arrays come in as C-contiguous 1-D buffers
 * (float64 'd', int64 'l'/'q') and the state arrays are updated in place. Public: run_steps, rebuild; for
 * the tests: _bits, _extend_open (the scalar and vector helpers) and _simd (the vector level).
 *
 * This replaces a Numba kernel with the same functions; it was compared with it bit for bit
 * (results, state arrays, failures) on random and edge inputs at every vector level.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* math.log(2), as CPython computes it (set at module init). */
static double LN2;
/* Upper bound of log2(x) - lin_log2(x) for x >= 1 (max of log2(1+f) - f on [0, 1]). */
#define LIN_GAP 0.0861
#define ONE_BITS ((int64_t)0x3FF0000000000000LL)
#define MANTISSA 4503599627370496.0 /* 2**52 */

#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE static inline
#endif

/* ------------------------------------------------------------------------------------------ */
/* The numeric helpers (the Numba kernel's _restat, _bits, _extend_open, _lin_log2)            */
/* ------------------------------------------------------------------------------------------ */

/* jumpavg re-entering (n, avg, sd) into its Welford merge: (avg, sd) of the copy. */
static inline void
restat(int64_t n, double avg, double sd, double *out_avg, double *out_sd)
{
    double nf = (double)n;
    double m = sd * sd * nf;
    *out_avg = avg * nf / nf;
    *out_sd = sqrt(m / nf);
}

/* mdl.group_bits of the re-entered stats (n, avg, sd); NaN where CPython would raise.
 * n indexes the tables: the caller guarantees 0 <= n < their length. */
static double
group_bits(int64_t n, double avg, double sd, int has_prev, double prev_avg, double top, double unit,
           double first_bits, double stdev_bits, const double *t_size, const double *t_area,
           const double *t_logn)
{
    restat(n, avg, sd, &avg, &sd);
    double bits = 0.0;
    double mean = avg / unit;
    bits += t_size[n];
    if (!has_prev) {
        bits += first_bits;
    }
    else {
        double prev = prev_avg / unit;
        double z = prev * prev;
        z -= (prev - 1.0) * top;
        z += top * top / 2.0;
        double arg = (fabs(mean - prev) + 1.0) / z;
        if (!(arg > 0.0))
            return NAN;
        bits -= log(arg) / LN2;
    }
    if (n < 2)
        return bits;
    double dev = sd / unit;
    bits += log((dev + 1.0) * (dev + 2.0)) / LN2;
    bits += stdev_bits;
    double area = t_area[n];
    area += log(dev + 1.0) * (double)(n - 2);
    area += t_logn[n];
    bits += area / LN2;
    return bits;
}

/* A lower bound of log2(x) for normal x >= 1 (exponent plus the mantissa read linearly). */
static inline double
lin_log2(double x)
{
    int64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return (double)(bits - ONE_BITS) / MANTISSA;
}

/* Candidate i's Welford merge with the new run (the first half of the Numba kernel's loop body in
 * _extend_open). plain and single are constants in each loop (see merge_loop), so that every
 * loop is branch-free. */
ALWAYS_INLINE void
merge_one(int64_t i, int plain, int single, int64_t rn, double rnf, double ravg, double extra, int64_t *c_n,
          double *c_nf, double *c_avg, double *c_sd)
{
    double nf = c_nf[i];
    double a1 = c_avg[i] * nf;
    a1 /= nf;
    double sd = c_sd[i];
    double m = sd * sd;
    m *= nf;
    double delta = ravg - a1;
    double total = nf + rnf;
    double avg;
    if (plain) {
        avg = a1 + delta / total;
    }
    else {
        double step = delta * rnf;
        step /= total;
        m += extra;
        avg = a1 + step;
    }
    double d2 = delta * delta;
    d2 *= nf;
    if (!single)
        d2 *= rnf;
    d2 /= total;
    m += d2;
    m /= total;
    sd = sqrt(m);
    c_avg[i] = avg;
    c_sd[i] = sd;
    c_nf[i] = total;
    c_n[i] += rn;
}

/* Candidate i's lower bound (the second half of that loop body), from its merged stats. */
ALWAYS_INLINE void
bound_one(int64_t i, int64_t j, const double *c_nf, const double *c_avg, const double *c_sd, const double *c_prev,
          const double *c_base, const double *c_lognorm, const double *size_low, double inv, double *bound)
{
    double avg = c_avg[i];
    double sd = c_sd[i];
    double total = c_nf[i];
    double gap = fabs(avg - c_prev[i]) * inv + 1.0;
    double dev = sd * inv + 1.0;
    double low = size_low[j + 1 - i] + c_lognorm[i] + c_base[i] - (lin_log2(gap) + LIN_GAP);
    low += lin_log2(dev) * (total - 1.0) + 1.0;
    bound[i] = low - 1e-6 * (1.0 + fabs(low));
}

/* ------------------------------------------------------------------------------------------ */
/* The same two loops on 2 (SSE2), 4 (AVX2) or 8 (AVX-512) candidates per instruction (x86-64) */
/* ------------------------------------------------------------------------------------------ */
/*
 * The divisions and the square root of the merge bound the kernel's time: several candidates per
 * instruction divide it (Numba vectorised the loop the same way, for the CPU it ran on). Each
 * lane does the operations merge_one / bound_one do, in their order, and each is correctly
 * rounded in any width: the intrinsics are the operations (no reassociation, no fused
 * multiply-add), and the int64 -> double conversion of lin_log2 rounds as the scalar cast does
 * (int64_to_double_2/_4; vcvtqq2pd on AVX-512). So every level gives the scalar loops' bits; the
 * tests compare them (_simd).
 *
 * SSE2 is part of x86-64; AVX2 runs when the CPU has it, AVX-512 when it has AVX-512F and
 * AVX-512DQ (checked at import; each form is compiled for its own target by function attributes).
 * Levels above what the CPU has are never used. The AVX-512 form runs the two loops as one (the
 * bound of eight candidates right after their merge, from the registers: measured 15-20 % faster
 * than the AVX2 loops on an AVX-512 Xeon, where two separate 8-lane loops were not, the divider
 * being no wider for 8 lanes than for 4) and takes the last j % 8 candidates under a lane mask;
 * the narrower ones leave theirs to the next narrower loop, then the scalar one.
 */

enum { SIMD_SCALAR = 0, SIMD_SSE2 = 1, SIMD_AVX2 = 2, SIMD_AVX512 = 3 };
/* The level in use: the CPU's best at import; _simd() can lower it (tests). */
static int simd_level = SIMD_SCALAR;
static int simd_best = SIMD_SCALAR;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_X86_SIMD 1
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* (double)v of two int64 lanes, correctly rounded as cvtsi2sd rounds (SSE2 and AVX2 have no packed
 * int64 -> double): v = hi * 2**32 + lo, both parts exact doubles built in the exponent field
 * (2**84 + 2**63 + hi * 2**32 and 2**52 + lo, less their offsets, exactly), so that their sum is
 * rounded once. */
ALWAYS_INLINE __m128d
int64_to_double_2(__m128i v)
{
    const __m128i lo_mask = _mm_set1_epi64x(0xFFFFFFFFLL);
    const __m128i lo_exp = _mm_set1_epi64x(0x4330000000000000LL); /* 2**52 */
    const __m128i hi_exp = _mm_set1_epi64x(0x4530000080000000LL); /* 2**84, and hi's sign bit flipped */
    const __m128d offset = _mm_set1_pd(0x1.00000801p+84);        /* 2**84 + 2**63 + 2**52 */
    __m128d lo = _mm_castsi128_pd(_mm_or_si128(_mm_and_si128(v, lo_mask), lo_exp));
    __m128d hi = _mm_castsi128_pd(_mm_xor_si128(_mm_srli_epi64(v, 32), hi_exp));
    return _mm_add_pd(_mm_sub_pd(hi, offset), lo);
}

ALWAYS_INLINE __m128d
lin_log2_2(__m128d x)
{
    __m128i bits = _mm_sub_epi64(_mm_castpd_si128(x), _mm_set1_epi64x(ONE_BITS));
    return _mm_div_pd(int64_to_double_2(bits), _mm_set1_pd(MANTISSA));
}

/* merge_one on candidates i, i + 1, ... two at a time while both are below j; returns the first
 * candidate left. */
ALWAYS_INLINE int64_t
merge_sse2(int64_t i, int64_t j, int plain, int single, int64_t rn, double rnf, double ravg, double extra,
           int64_t *c_n, double *c_nf, double *c_avg, double *c_sd)
{
    const __m128d vrnf = _mm_set1_pd(rnf), vravg = _mm_set1_pd(ravg), vextra = _mm_set1_pd(extra);
    const __m128i vrn = _mm_set1_epi64x(rn);
    for (; i + 2 <= j; i += 2) {
        __m128d nf = _mm_loadu_pd(c_nf + i);
        __m128d a1 = _mm_mul_pd(_mm_loadu_pd(c_avg + i), nf);
        a1 = _mm_div_pd(a1, nf);
        __m128d sd = _mm_loadu_pd(c_sd + i);
        __m128d m = _mm_mul_pd(sd, sd);
        m = _mm_mul_pd(m, nf);
        __m128d delta = _mm_sub_pd(vravg, a1);
        __m128d total = _mm_add_pd(nf, vrnf);
        __m128d avg;
        if (plain) {
            avg = _mm_add_pd(a1, _mm_div_pd(delta, total));
        }
        else {
            __m128d step = _mm_mul_pd(delta, vrnf);
            step = _mm_div_pd(step, total);
            m = _mm_add_pd(m, vextra);
            avg = _mm_add_pd(a1, step);
        }
        __m128d d2 = _mm_mul_pd(delta, delta);
        d2 = _mm_mul_pd(d2, nf);
        if (!single)
            d2 = _mm_mul_pd(d2, vrnf);
        d2 = _mm_div_pd(d2, total);
        m = _mm_add_pd(m, d2);
        m = _mm_div_pd(m, total);
        sd = _mm_sqrt_pd(m);
        _mm_storeu_pd(c_avg + i, avg);
        _mm_storeu_pd(c_sd + i, sd);
        _mm_storeu_pd(c_nf + i, total);
        __m128i n = _mm_loadu_si128((const __m128i *)(c_n + i));
        _mm_storeu_si128((__m128i *)(c_n + i), _mm_add_epi64(n, vrn));
    }
    return i;
}

/* bound_one on candidates i, i + 1, ... two at a time while both are below j. */
ALWAYS_INLINE int64_t
bound_sse2(int64_t i, int64_t j, const double *c_nf, const double *c_avg, const double *c_sd,
           const double *c_prev, const double *c_base, const double *c_lognorm, const double *size_low, double inv,
           double *bound)
{
    const __m128d vinv = _mm_set1_pd(inv), one = _mm_set1_pd(1.0), sign = _mm_set1_pd(-0.0);
    const __m128d vgap = _mm_set1_pd(LIN_GAP), margin = _mm_set1_pd(1e-6);
    for (; i + 2 <= j; i += 2) {
        /* fabs: the sign bit cleared */
        __m128d gap = _mm_andnot_pd(sign, _mm_sub_pd(_mm_loadu_pd(c_avg + i), _mm_loadu_pd(c_prev + i)));
        gap = _mm_add_pd(_mm_mul_pd(gap, vinv), one);
        __m128d dev = _mm_add_pd(_mm_mul_pd(_mm_loadu_pd(c_sd + i), vinv), one);
        /* size_low[j + 1 - i] for candidate i, size_low[j - i] for i + 1: neighbours, swapped */
        __m128d sl = _mm_loadu_pd(size_low + (j - i));
        sl = _mm_shuffle_pd(sl, sl, 1);
        __m128d low = _mm_add_pd(sl, _mm_loadu_pd(c_lognorm + i));
        low = _mm_add_pd(low, _mm_loadu_pd(c_base + i));
        low = _mm_sub_pd(low, _mm_add_pd(lin_log2_2(gap), vgap));
        __m128d total = _mm_loadu_pd(c_nf + i);
        low = _mm_add_pd(low, _mm_add_pd(_mm_mul_pd(lin_log2_2(dev), _mm_sub_pd(total, one)), one));
        __m128d slack = _mm_mul_pd(margin, _mm_add_pd(one, _mm_andnot_pd(sign, low)));
        _mm_storeu_pd(bound + i, _mm_sub_pd(low, slack));
    }
    return i;
}

/* The same on four lanes (AVX2). */
ALWAYS_INLINE AVX2 __m256d
int64_to_double_4(__m256i v)
{
    const __m256i lo_mask = _mm256_set1_epi64x(0xFFFFFFFFLL);
    const __m256i lo_exp = _mm256_set1_epi64x(0x4330000000000000LL);
    const __m256i hi_exp = _mm256_set1_epi64x(0x4530000080000000LL);
    const __m256d offset = _mm256_set1_pd(0x1.00000801p+84);
    __m256d lo = _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(v, lo_mask), lo_exp));
    __m256d hi = _mm256_castsi256_pd(_mm256_xor_si256(_mm256_srli_epi64(v, 32), hi_exp));
    return _mm256_add_pd(_mm256_sub_pd(hi, offset), lo);
}

ALWAYS_INLINE AVX2 __m256d
lin_log2_4(__m256d x)
{
    __m256i bits = _mm256_sub_epi64(_mm256_castpd_si256(x), _mm256_set1_epi64x(ONE_BITS));
    return _mm256_div_pd(int64_to_double_4(bits), _mm256_set1_pd(MANTISSA));
}

ALWAYS_INLINE AVX2 int64_t
merge_avx2_loop(int64_t j, int plain, int single, int64_t rn, double rnf, double ravg, double extra, int64_t *c_n,
                double *c_nf, double *c_avg, double *c_sd)
{
    const __m256d vrnf = _mm256_set1_pd(rnf), vravg = _mm256_set1_pd(ravg), vextra = _mm256_set1_pd(extra);
    const __m256i vrn = _mm256_set1_epi64x(rn);
    int64_t i = 0;
    for (; i + 4 <= j; i += 4) {
        __m256d nf = _mm256_loadu_pd(c_nf + i);
        __m256d a1 = _mm256_mul_pd(_mm256_loadu_pd(c_avg + i), nf);
        a1 = _mm256_div_pd(a1, nf);
        __m256d sd = _mm256_loadu_pd(c_sd + i);
        __m256d m = _mm256_mul_pd(sd, sd);
        m = _mm256_mul_pd(m, nf);
        __m256d delta = _mm256_sub_pd(vravg, a1);
        __m256d total = _mm256_add_pd(nf, vrnf);
        __m256d avg;
        if (plain) {
            avg = _mm256_add_pd(a1, _mm256_div_pd(delta, total));
        }
        else {
            __m256d step = _mm256_mul_pd(delta, vrnf);
            step = _mm256_div_pd(step, total);
            m = _mm256_add_pd(m, vextra);
            avg = _mm256_add_pd(a1, step);
        }
        __m256d d2 = _mm256_mul_pd(delta, delta);
        d2 = _mm256_mul_pd(d2, nf);
        if (!single)
            d2 = _mm256_mul_pd(d2, vrnf);
        d2 = _mm256_div_pd(d2, total);
        m = _mm256_add_pd(m, d2);
        m = _mm256_div_pd(m, total);
        sd = _mm256_sqrt_pd(m);
        _mm256_storeu_pd(c_avg + i, avg);
        _mm256_storeu_pd(c_sd + i, sd);
        _mm256_storeu_pd(c_nf + i, total);
        __m256i n = _mm256_loadu_si256((const __m256i *)(c_n + i));
        _mm256_storeu_si256((__m256i *)(c_n + i), _mm256_add_epi64(n, vrn));
    }
    return i;
}

/* merge_one on candidates 0, 1, ... four at a time while all four are below j; returns the first
 * candidate left. */
static AVX2 int64_t
merge_avx2(int64_t j, int plain, int single, int64_t rn, double rnf, double ravg, double extra, int64_t *c_n,
           double *c_nf, double *c_avg, double *c_sd)
{
    if (plain)
        return merge_avx2_loop(j, 1, 1, rn, rnf, ravg, extra, c_n, c_nf, c_avg, c_sd);
    if (single)
        return merge_avx2_loop(j, 0, 1, rn, rnf, ravg, extra, c_n, c_nf, c_avg, c_sd);
    return merge_avx2_loop(j, 0, 0, rn, rnf, ravg, extra, c_n, c_nf, c_avg, c_sd);
}

/* bound_one on candidates 0, 1, ... four at a time while all four are below j. */
static AVX2 int64_t
bound_avx2(int64_t j, const double *c_nf, const double *c_avg, const double *c_sd, const double *c_prev,
           const double *c_base, const double *c_lognorm, const double *size_low, double inv, double *bound)
{
    const __m256d vinv = _mm256_set1_pd(inv), one = _mm256_set1_pd(1.0), sign = _mm256_set1_pd(-0.0);
    const __m256d vgap = _mm256_set1_pd(LIN_GAP), margin = _mm256_set1_pd(1e-6);
    int64_t i = 0;
    for (; i + 4 <= j; i += 4) {
        __m256d gap = _mm256_andnot_pd(sign, _mm256_sub_pd(_mm256_loadu_pd(c_avg + i), _mm256_loadu_pd(c_prev + i)));
        gap = _mm256_add_pd(_mm256_mul_pd(gap, vinv), one);
        __m256d dev = _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(c_sd + i), vinv), one);
        /* size_low[j + 1 - i - k] for candidate i + k: four neighbours, reversed */
        __m256d sl = _mm256_loadu_pd(size_low + (j - 2 - i));
        sl = _mm256_permute4x64_pd(sl, 0x1B);
        __m256d low = _mm256_add_pd(sl, _mm256_loadu_pd(c_lognorm + i));
        low = _mm256_add_pd(low, _mm256_loadu_pd(c_base + i));
        low = _mm256_sub_pd(low, _mm256_add_pd(lin_log2_4(gap), vgap));
        __m256d total = _mm256_loadu_pd(c_nf + i);
        low = _mm256_add_pd(low, _mm256_add_pd(_mm256_mul_pd(lin_log2_4(dev), _mm256_sub_pd(total, one)), one));
        __m256d slack = _mm256_mul_pd(margin, _mm256_add_pd(one, _mm256_andnot_pd(sign, low)));
        _mm256_storeu_pd(bound + i, _mm256_sub_pd(low, slack));
    }
    return i;
}

/* The same on eight lanes (AVX-512F, and AVX-512DQ for the packed int64 -> double and the
 * and-not of the fabs), the merge and the bound of each eight candidates in one pass (see
 * extend_avx512_loop). The last j % 8 candidates take one more pass with a lane mask: the masked
 * loads give the lanes past j ones (never read memory there), and the masked stores leave them
 * unwritten, so every candidate below j gets merge_one's / bound_one's bits. */
#define AVX512 __attribute__((target("avx512f,avx512dq")))

/* vcvtqq2pd: (double)v of eight int64 lanes, rounded per MXCSR as cvtsi2sd rounds the scalar cast. */
ALWAYS_INLINE AVX512 __m512d
lin_log2_8(__m512d x)
{
    __m512i bits = _mm512_sub_epi64(_mm512_castpd_si512(x), _mm512_set1_epi64(ONE_BITS));
    return _mm512_div_pd(_mm512_cvtepi64_pd(bits), _mm512_set1_pd(MANTISSA));
}

/* merge_one on candidates i..i+7, those of mask k (all eight, or the first j - i); hands back the
 * merged average, stdev and count (total) for the bound. */
ALWAYS_INLINE AVX512 void
merge_avx512_step(int64_t i, __mmask8 k, int full, int plain, int single, __m512i vrn, __m512d vrnf,
                  __m512d vravg, __m512d vextra, int64_t *c_n, double *c_nf, double *c_avg, double *c_sd,
                  __m512d *out_avg, __m512d *out_sd, __m512d *out_total)
{
    const __m512d one = _mm512_set1_pd(1.0);
    __m512d nf = full ? _mm512_loadu_pd(c_nf + i) : _mm512_mask_loadu_pd(one, k, c_nf + i);
    __m512d a1 = _mm512_mul_pd(full ? _mm512_loadu_pd(c_avg + i) : _mm512_mask_loadu_pd(one, k, c_avg + i), nf);
    a1 = _mm512_div_pd(a1, nf);
    __m512d sd = full ? _mm512_loadu_pd(c_sd + i) : _mm512_mask_loadu_pd(one, k, c_sd + i);
    __m512d m = _mm512_mul_pd(sd, sd);
    m = _mm512_mul_pd(m, nf);
    __m512d delta = _mm512_sub_pd(vravg, a1);
    __m512d total = _mm512_add_pd(nf, vrnf);
    __m512d avg;
    if (plain) {
        avg = _mm512_add_pd(a1, _mm512_div_pd(delta, total));
    }
    else {
        __m512d step = _mm512_mul_pd(delta, vrnf);
        step = _mm512_div_pd(step, total);
        m = _mm512_add_pd(m, vextra);
        avg = _mm512_add_pd(a1, step);
    }
    __m512d d2 = _mm512_mul_pd(delta, delta);
    d2 = _mm512_mul_pd(d2, nf);
    if (!single)
        d2 = _mm512_mul_pd(d2, vrnf);
    d2 = _mm512_div_pd(d2, total);
    m = _mm512_add_pd(m, d2);
    m = _mm512_div_pd(m, total);
    sd = _mm512_sqrt_pd(m);
    if (full) {
        _mm512_storeu_pd(c_avg + i, avg);
        _mm512_storeu_pd(c_sd + i, sd);
        _mm512_storeu_pd(c_nf + i, total);
        __m512i n = _mm512_loadu_si512((const void *)(c_n + i));
        _mm512_storeu_si512((void *)(c_n + i), _mm512_add_epi64(n, vrn));
    }
    else {
        _mm512_mask_storeu_pd(c_avg + i, k, avg);
        _mm512_mask_storeu_pd(c_sd + i, k, sd);
        _mm512_mask_storeu_pd(c_nf + i, k, total);
        __m512i n = _mm512_maskz_loadu_epi64(k, c_n + i);
        _mm512_mask_storeu_epi64(c_n + i, k, _mm512_add_epi64(n, vrn));
    }
    *out_avg = avg;
    *out_sd = sd;
    *out_total = total;
}

/* bound_one on candidates i..i+7, those of mask k; sl holds size_low[j + 1 - i - l] in lane l. */
ALWAYS_INLINE AVX512 void
bound_avx512_step(int64_t i, __mmask8 k, int full, __m512d sl, __m512d avg, __m512d sd, __m512d total,
                  const double *c_prev, const double *c_base, const double *c_lognorm, __m512d vinv, double *bound)
{
    const __m512d one = _mm512_set1_pd(1.0), sign = _mm512_set1_pd(-0.0);
    const __m512d vgap = _mm512_set1_pd(LIN_GAP), margin = _mm512_set1_pd(1e-6);
#define LOAD8(p) (full ? _mm512_loadu_pd((p) + i) : _mm512_mask_loadu_pd(one, k, (p) + i))
    __m512d gap = _mm512_andnot_pd(sign, _mm512_sub_pd(avg, LOAD8(c_prev)));
    gap = _mm512_add_pd(_mm512_mul_pd(gap, vinv), one);
    __m512d dev = _mm512_add_pd(_mm512_mul_pd(sd, vinv), one);
    __m512d low = _mm512_add_pd(sl, LOAD8(c_lognorm));
    low = _mm512_add_pd(low, LOAD8(c_base));
    low = _mm512_sub_pd(low, _mm512_add_pd(lin_log2_8(gap), vgap));
#undef LOAD8
    low = _mm512_add_pd(low, _mm512_add_pd(_mm512_mul_pd(lin_log2_8(dev), _mm512_sub_pd(total, one)), one));
    __m512d slack = _mm512_mul_pd(margin, _mm512_add_pd(one, _mm512_andnot_pd(sign, low)));
    if (full)
        _mm512_storeu_pd(bound + i, _mm512_sub_pd(low, slack));
    else
        _mm512_mask_storeu_pd(bound + i, k, _mm512_sub_pd(low, slack));
}

/* merge_one then bound_one on candidates 0..j-1, eight at a time, the last j % 8 under a mask: the
 * two loops in one pass (as the Numba kernel's loop), so that the bound's additions and
 * conversions run while the divider works on the merge; the bound takes the merged average,
 * stdev and count from the registers, the values merge_one stores and bound_one reads back. */
ALWAYS_INLINE AVX512 void
extend_avx512_loop(int64_t j, int plain, int single, int64_t rn, double rnf, double ravg, double extra,
                   int64_t *c_n, double *c_nf, double *c_avg, double *c_sd, const double *c_prev,
                   const double *c_base, const double *c_lognorm, const double *size_low, double inv, double *bound)
{
    const __m512d vrnf = _mm512_set1_pd(rnf), vravg = _mm512_set1_pd(ravg), vextra = _mm512_set1_pd(extra);
    const __m512i vrn = _mm512_set1_epi64(rn);
    const __m512d vinv = _mm512_set1_pd(inv), one = _mm512_set1_pd(1.0);
    const __m512i reverse = _mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    __m512d avg, sd, total;
    int64_t i = 0;
    for (; i + 8 <= j; i += 8) {
        merge_avx512_step(i, 0xFF, 1, plain, single, vrn, vrnf, vravg, vextra, c_n, c_nf, c_avg, c_sd, &avg, &sd,
                          &total);
        /* size_low[j + 1 - i - l] for candidate i + l: eight neighbours, reversed */
        __m512d sl = _mm512_permutexvar_pd(reverse, _mm512_loadu_pd(size_low + (j - 6 - i)));
        bound_avx512_step(i, 0xFF, 1, sl, avg, sd, total, c_prev, c_base, c_lognorm, vinv, bound);
    }
    if (i < j) {
        /* r = j - i candidates left: candidate i + l reads size_low[r + 1 - l], lane r - 1 - l of the
         * r entries from size_low + 2 (the lanes past r are not used) */
        int64_t r = j - i;
        __mmask8 k = (__mmask8)((1u << r) - 1);
        merge_avx512_step(i, k, 0, plain, single, vrn, vrnf, vravg, vextra, c_n, c_nf, c_avg, c_sd, &avg, &sd, &total);
        __m512i idx = _mm512_sub_epi64(_mm512_set1_epi64(r - 1), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
        __m512d sl = _mm512_permutexvar_pd(idx, _mm512_mask_loadu_pd(one, k, size_low + 2));
        bound_avx512_step(i, k, 0, sl, avg, sd, total, c_prev, c_base, c_lognorm, vinv, bound);
    }
}

/* extend_open's two loops on candidates 0..j-1 at the AVX-512 level (plain and single as in
 * merge_loop). */
static AVX512 void
extend_avx512(int64_t j, int plain, int single, int64_t rn, double rnf, double ravg, double extra, int64_t *c_n,
              double *c_nf, double *c_avg, double *c_sd, const double *c_prev, const double *c_base,
              const double *c_lognorm, const double *size_low, double inv, double *bound)
{
    if (plain)
        extend_avx512_loop(j, 1, 1, rn, rnf, ravg, extra, c_n, c_nf, c_avg, c_sd, c_prev, c_base, c_lognorm,
                           size_low, inv, bound);
    else if (single)
        extend_avx512_loop(j, 0, 1, rn, rnf, ravg, extra, c_n, c_nf, c_avg, c_sd, c_prev, c_base, c_lognorm,
                           size_low, inv, bound);
    else
        extend_avx512_loop(j, 0, 0, rn, rnf, ravg, extra, c_n, c_nf, c_avg, c_sd, c_prev, c_base, c_lognorm,
                           size_low, inv, bound);
}
#endif /* HAVE_X86_SIMD */

/* The merges of candidates 0..j-1, widest first, the rest one by one. */
ALWAYS_INLINE void
merge_loop(int64_t j, int plain, int single, int64_t rn, double rnf, double ravg, double extra, int64_t *c_n,
           double *c_nf, double *c_avg, double *c_sd)
{
    int64_t i = 0;
#ifdef HAVE_X86_SIMD
    if (simd_level >= SIMD_AVX2)
        i = merge_avx2(j, plain, single, rn, rnf, ravg, extra, c_n, c_nf, c_avg, c_sd);
    if (simd_level >= SIMD_SSE2)
        i = merge_sse2(i, j, plain, single, rn, rnf, ravg, extra, c_n, c_nf, c_avg, c_sd);
#endif
    for (; i < j; i++)
        merge_one(i, plain, single, rn, rnf, ravg, extra, c_n, c_nf, c_avg, c_sd);
}

/* Add run j to candidates 0..j-1 (mdl.MdlState._extend_open, element by element), then give
 * bound[i] a lower bound of candidate i's approximate total: the size-only bits are at least
 * size_low[j + 1 - i] (i..j holds at least j + 1 - i samples), log2 is bounded from the float's
 * exponent and mantissa bits, and log2(stdev + 2) >= 1.
 *
 * The Numba kernel computed both in one loop; here the merge and the bound are two loops (each
 * keeps its constants in registers), with the same values: the bound reads the merged average,
 * stdev and count back. The AVX-512 form (extend_avx512) is one loop again, with the same
 * values. */
static void
extend_open(int64_t j, int64_t rn, double ravg, double rsd, int64_t *c_n, double *c_nf, double *c_avg,
            double *c_sd, const double *c_prev, const double *c_base, const double *c_lognorm,
            const double *size_low, double inv, double *bound)
{
    double rnf = (double)rn;
    double extra = rsd * rsd * rnf;
#ifdef HAVE_X86_SIMD
    if (simd_level >= SIMD_AVX512) {
        extend_avx512(j, rn == 1 && rsd == 0.0, rn == 1, rn, rnf, ravg, extra, c_n, c_nf, c_avg, c_sd, c_prev, c_base,
                      c_lognorm, size_low, inv, bound);
        return;
    }
#endif
    if (rn == 1 && rsd == 0.0)
        merge_loop(j, 1, 1, rn, rnf, ravg, extra, c_n, c_nf, c_avg, c_sd);
    else if (rn == 1)
        merge_loop(j, 0, 1, rn, rnf, ravg, extra, c_n, c_nf, c_avg, c_sd);
    else
        merge_loop(j, 0, 0, rn, rnf, ravg, extra, c_n, c_nf, c_avg, c_sd);
    int64_t i = 0;
#ifdef HAVE_X86_SIMD
    if (simd_level >= SIMD_AVX2)
        i = bound_avx2(j, c_nf, c_avg, c_sd, c_prev, c_base, c_lognorm, size_low, inv, bound);
    if (simd_level >= SIMD_SSE2)
        i = bound_sse2(i, j, c_nf, c_avg, c_sd, c_prev, c_base, c_lognorm, size_low, inv, bound);
#endif
    for (; i < j; i++)
        bound_one(i, j, c_nf, c_avg, c_sd, c_prev, c_base, c_lognorm, size_low, inv, bound);
}

/* ------------------------------------------------------------------------------------------ */
/* The search                                                                                  */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    int64_t j0, j1;
    const int64_t *r_n;
    const double *r_avg, *r_sd;
    double max_value, unit, first_bits, stdev_bits;
    const double *t_size, *t_area, *t_logn;
    Py_ssize_t t_len;
    int64_t *c_n;
    double *c_nf, *c_avg, *c_sd, *c_prev, *c_base, *c_lognorm;
    int64_t *win;
    double *best, *gbits;
    int64_t *w_n;
    double *w_avg, *w_sd;
} Search;

enum { SEARCH_NOMEM = -1, SEARCH_BADSTATE = -2 };

/* mdl_kernel.run_steps on validated arrays, without the GIL: 0 when done, the failing run + 1,
 * SEARCH_NOMEM when an allocation failed, SEARCH_BADSTATE when the sample counts would index
 * past the tables. */
static int64_t
search(const Search *s)
{
    const int64_t j0 = s->j0, j1 = s->j1;
    const int64_t *r_n = s->r_n;
    const double *r_avg = s->r_avg, *r_sd = s->r_sd;
    const double unit = s->unit, first_bits = s->first_bits, stdev_bits = s->stdev_bits;
    const double *t_size = s->t_size, *t_area = s->t_area, *t_logn = s->t_logn;
    int64_t *c_n = s->c_n, *win = s->win, *w_n = s->w_n;
    double *c_nf = s->c_nf, *c_avg = s->c_avg, *c_sd = s->c_sd, *c_prev = s->c_prev, *c_base = s->c_base;
    double *c_lognorm = s->c_lognorm, *best = s->best, *gbits = s->gbits, *w_avg = s->w_avg, *w_sd = s->w_sd;

    const double top = s->max_value / unit;
    const double inv = 1.0 / unit;
    /* Every sample within 1e150 units keeps every intermediate finite (the screen relies on it);
     * anything else goes to the NumPy path. */
    for (int64_t j = 0; j < j1; j++) {
        if (!((fabs(r_avg[j]) + r_sd[j] * (double)r_n[j]) * inv < 1e150))
            return 1;
    }
    /* Approximate size-only bits per sample count (as MdlState._size_table). Every run holds at
     * least one sample (checked by the caller), so n_max >= j1. */
    int64_t n_max = 0;
    for (int64_t j = 0; j < j1; j++) {
        if (r_n[j] > INT64_MAX - n_max)
            return SEARCH_BADSTATE;
        n_max += r_n[j];
    }
    if (n_max >= (int64_t)s->t_len)
        return SEARCH_BADSTATE;
    /* Candidates left from an earlier call hold the samples of runs i..j0-1 and grow by those of
     * j0..j1-1: within [1, n_max] for a consistent state; refuse any other (no read past a table). */
    int64_t added = 0;
    for (int64_t j = j0; j < j1; j++)
        added += r_n[j];
    if (j0 < j1) {
        for (int64_t i = 0; i < j0; i++) {
            if (c_n[i] < 1 || c_n[i] > n_max - added)
                return SEARCH_BADSTATE;
        }
        if (j0 == 1 && (w_n[0] < 0 || w_n[0] > n_max))
            return SEARCH_BADSTATE;
    }

    size_t count = (size_t)n_max + 1;
    double *approx_tab = malloc(count * sizeof(double));
    double *size_low = malloc(count * sizeof(double));
    double *scratch = malloc((j1 > 0 ? (size_t)j1 : 1) * sizeof(double));
    if (approx_tab == NULL || size_low == NULL || scratch == NULL) {
        free(approx_tab);
        free(size_low);
        free(scratch);
        return SEARCH_NOMEM;
    }
    int64_t result = 0;
    approx_tab[0] = NAN;
    for (int64_t n = 1; n <= n_max; n++) {
        if (n >= 2)
            approx_tab[n] = t_size[n] + stdev_bits + (t_area[n] + t_logn[n]) / LN2;
        else
            approx_tab[n] = t_size[n] - 1.0;
    }
    /* size_low[m]: the least size-only bits of a group of m or more samples. */
    memcpy(size_low, approx_tab, count * sizeof(double));
    for (int64_t n = n_max - 1; n > 0; n--) {
        /* Python's min(a, b): b only when b < a. */
        if (size_low[n + 1] < size_low[n])
            size_low[n] = size_low[n + 1];
    }
    for (int64_t j = j0; j < j1; j++) {
        int64_t rn = r_n[j];
        double ravg = r_avg[j];
        double rsd = r_sd[j];
        double prev = NAN;
        double base = 0.0;
        if (j > 0) {
            double fa, fs;
            restat(w_n[j - 1], w_avg[j - 1], w_sd[j - 1], &fa, &fs);
            prev = fa;
            if (j == 1)
                base = group_bits(w_n[0], fa, fs, 0, 0.0, top, unit, first_bits, stdev_bits, t_size, t_area,
                                  t_logn);
            else
                base = best[j - 1];
            extend_open(j, rn, ravg, rsd, c_n, c_nf, c_avg, c_sd, c_prev, c_base, c_lognorm, size_low, inv,
                        scratch);
        }
        double na, ns;
        restat(rn, ravg, rsd, &na, &ns);
        c_n[j] = rn;
        c_nf[j] = (double)rn;
        c_avg[j] = na;
        c_sd[j] = ns;
        c_prev[j] = prev;
        c_base[j] = base;
        if (j > 0) {
            double p = prev / unit;
            c_lognorm[j] = log2(p * p - (p - 1.0) * top + top * top / 2.0);
        }
        double g0 = group_bits(c_n[0], c_avg[0], c_sd[0], 0, 0.0, top, unit, first_bits, stdev_bits, t_size,
                               t_area, t_logn);
        if (!isfinite(g0)) {
            result = j + 1;
            goto done;
        }
        int64_t record;
        double record_total, record_bits;
        if (j == 0) {
            record = 0;
            record_total = g0;
            record_bits = g0;
        }
        else {
            /* Screen: the approximate totals only of candidates whose lower bound (computed with
             * the merge) is not above the threshold, newest start first (usually the best, so the
             * threshold is tight early). A skipped candidate cannot be near the minimum. */
            scratch[j] = -INFINITY;
            double low = g0;
            scratch[0] = g0;
            double limit = low + 1e-9 * (1.0 + fabs(low));
            for (int64_t i = j; i > 0; i--) {
                if (scratch[i] > limit) {
                    scratch[i] = INFINITY;
                    continue;
                }
                double gap = fabs(c_avg[i] - c_prev[i]) * inv + 1.0;
                double dev = c_sd[i] * inv + 1.0;
                double head = approx_tab[c_n[i]] + c_lognorm[i] + c_base[i];
                double approx = head - log2(gap) + log2(dev) * (c_nf[i] - 1.0) + log2(dev + 1.0);
                if (!isfinite(approx)) {
                    result = j + 1;
                    goto done;
                }
                scratch[i] = approx;
                if (approx < low) {
                    low = approx;
                    limit = low + 1e-9 * (1.0 + fabs(low));
                }
            }
            record = -1;
            record_total = 0.0;
            record_bits = 0.0;
            if (scratch[j] <= limit) {
                record = j;
                record_bits = group_bits(c_n[j], c_avg[j], c_sd[j], 1, c_prev[j], top, unit, first_bits,
                                         stdev_bits, t_size, t_area, t_logn);
                record_total = c_base[j] + record_bits;
                if (!isfinite(record_bits)) {
                    result = j + 1;
                    goto done;
                }
            }
            for (int64_t i = 0; i < j; i++) {
                if (!(scratch[i] <= limit))
                    continue;
                double b;
                if (i == 0) {
                    b = g0;
                }
                else {
                    b = group_bits(c_n[i], c_avg[i], c_sd[i], 1, c_prev[i], top, unit, first_bits, stdev_bits,
                                   t_size, t_area, t_logn);
                    if (!isfinite(b)) {
                        result = j + 1;
                        goto done;
                    }
                }
                double total = c_base[i] + b;
                if (record < 0 || total < record_total) {
                    record = i;
                    record_total = total;
                    record_bits = b;
                }
            }
            if (record < 0) { /* cannot happen (the least approximate total passes the screen) */
                result = j + 1;
                goto done;
            }
        }
        win[j] = record;
        best[j] = record_total;
        gbits[j] = record_bits;
        w_n[j] = c_n[record];
        w_avg[j] = c_avg[record];
        w_sd[j] = c_sd[record];
    }
done:
    free(approx_tab);
    free(size_low);
    free(scratch);
    return result;
}

/* ------------------------------------------------------------------------------------------ */
/* The rebuild of a saved state                                                                */
/* ------------------------------------------------------------------------------------------ */

/* mdl_kernel.rebuild on validated arrays: the state search() leaves after runs 0..j1-1, from the
 * runs, each run's winning start (win) and the open candidates' final average and stdev (c_avg,
 * c_sd), which is all mdl.MdlState.saved keeps. Everything else is what search() computed from
 * those, recomputed with its operations in its order:
 *
 * - c_n, c_nf: the samples of runs i..j1-1 (search adds each run's count in order; the float sums
 *   of whole numbers below 2**53 are exact);
 * - w_n, w_avg, w_sd at run j: candidate win[j] merged up to run j. Each distinct start is merged
 *   once from its opening (restat of its run) through the last run it won, with merge_one (the
 *   vector loops give its bits), so this costs the runs those groups span, not the O(N^2) merges
 *   of the search;
 * - c_prev, c_base, c_lognorm, gbits, best: as search() sets them from those.
 *
 * 0 when done; SEARCH_NOMEM; SEARCH_BADSTATE when win is not a state's (a start after its run) or
 * the tables are too short; j + 1 when run j's bits are not finite or the last run's winner does
 * not end with the given c_avg/c_sd (not the state these arrays were saved from). */
static int64_t
rebuild(const Search *s)
{
    const int64_t count = s->j1;
    const int64_t *r_n = s->r_n;
    const double *r_avg = s->r_avg, *r_sd = s->r_sd;
    const double unit = s->unit, first_bits = s->first_bits, stdev_bits = s->stdev_bits;
    const double *t_size = s->t_size, *t_area = s->t_area, *t_logn = s->t_logn;
    int64_t *c_n = s->c_n, *win = s->win, *w_n = s->w_n;
    double *c_nf = s->c_nf, *c_avg = s->c_avg, *c_sd = s->c_sd, *c_prev = s->c_prev, *c_base = s->c_base;
    double *c_lognorm = s->c_lognorm, *best = s->best, *gbits = s->gbits, *w_avg = s->w_avg, *w_sd = s->w_sd;
    const double top = s->max_value / unit;

    if (s->j0 != 0)
        return SEARCH_BADSTATE;
    if (count <= 0)
        return 0;
    int64_t n_max = 0;
    for (int64_t j = 0; j < count; j++) {
        if (r_n[j] > INT64_MAX - n_max || win[j] < 0 || win[j] > j)
            return SEARCH_BADSTATE;
        n_max += r_n[j];
    }
    if (n_max >= (int64_t)s->t_len)
        return SEARCH_BADSTATE;
    int64_t *last = malloc((size_t)count * sizeof(int64_t));
    if (last == NULL)
        return SEARCH_NOMEM;
    for (int64_t j = 0; j < count; j++)
        last[j] = -1;
    for (int64_t j = 0; j < count; j++)
        last[win[j]] = j;
    int64_t acc = 0;
    for (int64_t i = count - 1; i >= 0; i--) {
        acc += r_n[i];
        c_n[i] = acc;
        c_nf[i] = (double)acc;
    }
    /* The winners' stats, one merge pass per distinct start. */
    for (int64_t start = 0; start < count; start++) {
        if (last[start] < 0)
            continue;
        int64_t n[1] = {r_n[start]};
        double nf[1] = {(double)r_n[start]}, avg[1], sd[1];
        restat(r_n[start], r_avg[start], r_sd[start], &avg[0], &sd[0]);
        for (int64_t k = start; k <= last[start]; k++) {
            if (k > start) {
                int64_t rn = r_n[k];
                double rnf = (double)rn, rsd = r_sd[k];
                merge_one(0, rn == 1 && rsd == 0.0, rn == 1, rn, rnf, r_avg[k], rsd * rsd * rnf, n, nf, avg, sd);
            }
            if (win[k] == start) {
                w_n[k] = n[0];
                w_avg[k] = avg[0];
                w_sd[k] = sd[0];
            }
        }
    }
    free(last);
    /* The last winner is an open candidate: its merged stats are the ones given. */
    int64_t tail = win[count - 1];
    if (w_n[count - 1] != c_n[tail] || memcmp(&w_avg[count - 1], &c_avg[tail], sizeof(double)) != 0 ||
        memcmp(&w_sd[count - 1], &c_sd[tail], sizeof(double)) != 0)
        return count;
    for (int64_t j = 0; j < count; j++) {
        double prev = NAN, base = 0.0;
        if (j > 0) {
            double fa, fs;
            restat(w_n[j - 1], w_avg[j - 1], w_sd[j - 1], &fa, &fs);
            prev = fa;
            if (j == 1)
                base = group_bits(w_n[0], fa, fs, 0, 0.0, top, unit, first_bits, stdev_bits, t_size, t_area, t_logn);
            else
                base = best[j - 1];
            double p = prev / unit;
            c_lognorm[j] = log2(p * p - (p - 1.0) * top + top * top / 2.0);
        }
        c_prev[j] = prev;
        c_base[j] = base;
        int64_t start = win[j];
        double bits = start == 0 ? group_bits(w_n[j], w_avg[j], w_sd[j], 0, 0.0, top, unit, first_bits, stdev_bits,
                                              t_size, t_area, t_logn)
                                 : group_bits(w_n[j], w_avg[j], w_sd[j], 1, c_prev[start], top, unit, first_bits,
                                              stdev_bits, t_size, t_area, t_logn);
        if (!isfinite(bits))
            return j + 1;
        gbits[j] = bits;
        best[j] = j == 0 ? bits : c_base[start] + bits;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Arguments                                                                                   */
/* ------------------------------------------------------------------------------------------ */

enum { F64, I64 };

/* The buffer of a C-contiguous 1-D array of float64 (kind F64) or int64 (I64), at least min_len
 * long; 0 on success (release it), -1 with an exception set (nothing to release). */
static int
get_array(PyObject *obj, Py_buffer *view, int kind, int writable, Py_ssize_t min_len, const char *name)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous%s %s array", name, writable ? " writable" : "",
                     kind == F64 ? "float64" : "int64");
        return -1;
    }
    const char *fmt = view->format ? view->format : "B";
    if (fmt[0] == '@' || fmt[0] == '=' || fmt[0] == '<')
        fmt++;
    int ok_format = kind == F64 ? strcmp(fmt, "d") == 0
                                : (strcmp(fmt, "l") == 0 || strcmp(fmt, "q") == 0);
    if (view->ndim != 1 || view->itemsize != 8 || !ok_format) {
        PyErr_Format(PyExc_TypeError, "%s must be a 1-D %s array (got format '%s', %d dimensions)", name,
                     kind == F64 ? "float64" : "int64", view->format ? view->format : "B", view->ndim);
        PyBuffer_Release(view);
        return -1;
    }
    if (view->shape[0] < min_len) {
        PyErr_Format(PyExc_ValueError, "%s has %zd entries, at least %zd needed", name, view->shape[0],
                     min_len);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* -1 with ValueError when an array written overlaps another array (the loops read and write
 * element by element, several at a time: each array must be its own memory), else 0. */
static int
check_overlaps(const Py_buffer *views, const int *writable, const char *const *names, int count)
{
    for (int a = 0; a < count; a++) {
        const char *a0 = views[a].buf, *a1 = a0 + views[a].len;
        for (int b = a + 1; b < count; b++) {
            const char *b0 = views[b].buf, *b1 = b0 + views[b].len;
            if ((writable[a] || writable[b]) && a0 < b1 && b0 < a1 && views[a].len && views[b].len) {
                PyErr_Format(PyExc_ValueError, "%s and %s share memory: the kernel needs separate arrays",
                             names[a], names[b]);
                return -1;
            }
        }
    }
    return 0;
}

static int
get_int(PyObject *obj, int64_t *out, const char *name)
{
    long long v = PyLong_AsLongLong(obj);
    if (v == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s must be an int", name);
        }
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

static int
get_float(PyObject *obj, double *out, const char *name)
{
    double v = PyFloat_AsDouble(obj);
    if (v == -1.0 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s must be a float", name);
        }
        return -1;
    }
    *out = v;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* run_steps                                                                                   */
/* ------------------------------------------------------------------------------------------ */

#define N_ARRAYS 19

PyDoc_STRVAR(run_steps_doc,
"run_steps(j0, j1, r_n, r_avg, r_sd, max_value, unit, first_bits, stdev_bits, t_size, t_area, t_logn,\n"
"          c_n, c_nf, c_avg, c_sd, c_prev, c_base, c_lognorm, win, best, gbits, w_n, w_avg, w_sd)\n"
"--\n\n"
"Consume runs j0..j1-1 (mdl.MdlState._step for each); 0 when done, else the failing run + 1.\n\n"
"The arrays are those of the MdlState, updated in place (int64: r_n, c_n, win, w_n; the others\n"
"float64; the tables longer than the total sample count of runs 0..j1-1). The selection screens\n"
"candidates with the approximate bits (as the NumPy path does, with a cheaper lower bound in\n"
"front: a candidate whose bound is above the screen's threshold cannot be near the minimum) and\n"
"recomputes the near ones exactly, compared in jumpavg's order.");

/* Candidate merges (the sum of j over the runs searched) above which a search releases the GIL:
 * about 0.1 ms of work. Below it the GIL is kept: taking it back can wait a switch interval (5 ms)
 * whenever another thread of the process runs Python meanwhile (measured: a one-run resume took
 * 30 ms instead of 0.2 with a busy thread beside it), far longer than the work. */
#define RELEASE_WORK 50000

/* run_steps and rebuild: the same arguments, validated, then fn (search or rebuild); the GIL
 * released for a long search (RELEASE_WORK), never for a rebuild (linear in the runs). */
static PyObject *
call_search(PyObject *const *args, Py_ssize_t nargs, const char *name, int64_t (*fn)(const Search *))
{
    if (nargs != 25) {
        PyErr_Format(PyExc_TypeError, "%s() takes 25 arguments (%zd given)", name, nargs);
        return NULL;
    }
    Search s;
    if (get_int(args[0], &s.j0, "j0") < 0 || get_int(args[1], &s.j1, "j1") < 0)
        return NULL;
    if (s.j0 < 0 || s.j1 < 0) {
        PyErr_SetString(PyExc_ValueError, "j0 and j1 must not be negative");
        return NULL;
    }
    if (get_float(args[5], &s.max_value, "max_value") < 0 || get_float(args[6], &s.unit, "unit") < 0 ||
        get_float(args[7], &s.first_bits, "first_bits") < 0 || get_float(args[8], &s.stdev_bits, "stdev_bits") < 0)
        return NULL;

    /* Argument index, name, kind, writable, entries needed. */
    static const struct {
        int index;
        const char *name;
        int kind;
        int writable;
        int tables;
    } spec[N_ARRAYS] = {
        {2, "r_n", I64, 0, 0},      {3, "r_avg", F64, 0, 0},   {4, "r_sd", F64, 0, 0},
        {9, "t_size", F64, 0, 1},   {10, "t_area", F64, 0, 1}, {11, "t_logn", F64, 0, 1},
        {12, "c_n", I64, 1, 0},     {13, "c_nf", F64, 1, 0},   {14, "c_avg", F64, 1, 0},
        {15, "c_sd", F64, 1, 0},    {16, "c_prev", F64, 1, 0}, {17, "c_base", F64, 1, 0},
        {18, "c_lognorm", F64, 1, 0}, {19, "win", I64, 1, 0},  {20, "best", F64, 1, 0},
        {21, "gbits", F64, 1, 0},   {22, "w_n", I64, 1, 0},    {23, "w_avg", F64, 1, 0},
        {24, "w_sd", F64, 1, 0},
    };
    Py_buffer views[N_ARRAYS];
    int got = 0;
    for (; got < N_ARRAYS; got++) {
        /* The tables need one entry past the total sample count, checked once it is known. */
        Py_ssize_t need = spec[got].tables ? 1 : (Py_ssize_t)s.j1;
        if (get_array(args[spec[got].index], &views[got], spec[got].kind, spec[got].writable, need,
                      spec[got].name) < 0)
            goto release;
    }
    s.r_n = views[0].buf;
    s.r_avg = views[1].buf;
    s.r_sd = views[2].buf;
    s.t_size = views[3].buf;
    s.t_area = views[4].buf;
    s.t_logn = views[5].buf;
    s.t_len = views[3].shape[0];
    if (views[4].shape[0] < s.t_len)
        s.t_len = views[4].shape[0];
    if (views[5].shape[0] < s.t_len)
        s.t_len = views[5].shape[0];
    s.c_n = views[6].buf;
    s.c_nf = views[7].buf;
    s.c_avg = views[8].buf;
    s.c_sd = views[9].buf;
    s.c_prev = views[10].buf;
    s.c_base = views[11].buf;
    s.c_lognorm = views[12].buf;
    s.win = views[13].buf;
    s.best = views[14].buf;
    s.gbits = views[15].buf;
    s.w_n = views[16].buf;
    s.w_avg = views[17].buf;
    s.w_sd = views[18].buf;
    {
        int writable[N_ARRAYS];
        const char *names[N_ARRAYS];
        for (int k = 0; k < N_ARRAYS; k++) {
            writable[k] = spec[k].writable;
            names[k] = spec[k].name;
        }
        if (check_overlaps(views, writable, names, N_ARRAYS) < 0)
            goto release;
    }
    for (int64_t j = 0; j < s.j1; j++) {
        if (s.r_n[j] < 1) {
            PyErr_Format(PyExc_ValueError, "r_n[%lld] is %lld: every run holds at least one sample", (long long)j,
                         (long long)s.r_n[j]);
            goto release;
        }
    }

    int64_t result;
    double work = ((double)s.j1 * (double)s.j1 - (double)s.j0 * (double)s.j0) / 2.0;
    if (fn == search && work > RELEASE_WORK) {
        Py_BEGIN_ALLOW_THREADS
        result = fn(&s);
        Py_END_ALLOW_THREADS
    }
    else {
        result = fn(&s);
    }
    if (result == SEARCH_NOMEM) {
        PyErr_NoMemory();
        goto release;
    }
    if (result == SEARCH_BADSTATE) {
        PyErr_SetString(PyExc_ValueError,
                        "the tables are shorter than the total sample count + 1, or the state arrays (c_n, "
                        "w_n; win for rebuild, which starts at 0) do not match the runs");
        goto release;
    }
    for (int k = 0; k < N_ARRAYS; k++)
        PyBuffer_Release(&views[k]);
    return PyLong_FromLongLong((long long)result);

release:
    for (int k = 0; k < got; k++)
        PyBuffer_Release(&views[k]);
    return NULL;
}

static PyObject *
run_steps(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    return call_search(args, nargs, "run_steps", search);
}

PyDoc_STRVAR(rebuild_doc,
"rebuild(0, count, r_n, r_avg, r_sd, max_value, unit, first_bits, stdev_bits, t_size, t_area, t_logn,\n"
"        c_n, c_nf, c_avg, c_sd, c_prev, c_base, c_lognorm, win, best, gbits, w_n, w_avg, w_sd)\n"
"--\n\n"
"The state run_steps(0, count, ...) leaves, from the runs, win and c_avg/c_sd as it left them\n"
"(mdl.MdlState.saved); 0 when done, else a positive number (those arrays are not such a state's).\n\n"
"Reads r_*, the tables, win, c_avg and c_sd; writes the other state arrays. Merges each winning\n"
"group once instead of every candidate at every run.");

static PyObject *
rebuild_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    return call_search(args, nargs, "rebuild", rebuild);
}

/* ------------------------------------------------------------------------------------------ */
/* _bits (the scalar group bits, for the tests)                                                */
/* ------------------------------------------------------------------------------------------ */

PyDoc_STRVAR(bits_doc,
"_bits(n, avg, sd, has_prev, prev_avg, top, unit, first_bits, stdev_bits, t_size, t_area, t_logn)\n"
"--\n\n"
"mdl.group_bits of the re-entered stats (n, avg, sd); NaN where CPython would raise.\n\n"
"The kernel's scalar helper, exposed for the tests (run_steps calls it in C).");

static PyObject *
bits_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 12) {
        PyErr_Format(PyExc_TypeError, "_bits() takes 12 arguments (%zd given)", nargs);
        return NULL;
    }
    int64_t n;
    double avg, sd, prev_avg, top, unit, first_bits, stdev_bits;
    if (get_int(args[0], &n, "n") < 0 || get_float(args[1], &avg, "avg") < 0 || get_float(args[2], &sd, "sd") < 0)
        return NULL;
    int has_prev = PyObject_IsTrue(args[3]);
    if (has_prev < 0)
        return NULL;
    if (get_float(args[4], &prev_avg, "prev_avg") < 0 || get_float(args[5], &top, "top") < 0 ||
        get_float(args[6], &unit, "unit") < 0 || get_float(args[7], &first_bits, "first_bits") < 0 ||
        get_float(args[8], &stdev_bits, "stdev_bits") < 0)
        return NULL;
    Py_buffer views[3];
    static const char *names[3] = {"t_size", "t_area", "t_logn"};
    int got = 0;
    for (; got < 3; got++) {
        if (get_array(args[9 + got], &views[got], F64, 0, 1, names[got]) < 0)
            goto release;
        if (n < 0 || n >= views[got].shape[0]) {
            PyErr_Format(PyExc_ValueError, "n = %lld is outside %s (%zd entries)", (long long)n, names[got],
                         views[got].shape[0]);
            got++;
            goto release;
        }
    }
    double bits = group_bits(n, avg, sd, has_prev, prev_avg, top, unit, first_bits, stdev_bits, views[0].buf,
                             views[1].buf, views[2].buf);
    for (int k = 0; k < 3; k++)
        PyBuffer_Release(&views[k]);
    return PyFloat_FromDouble(bits);

release:
    for (int k = 0; k < got; k++)
        PyBuffer_Release(&views[k]);
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* _extend_open (the merge and bound loops, for the tests)                                     */
/* ------------------------------------------------------------------------------------------ */

PyDoc_STRVAR(extend_open_doc,
"_extend_open(j, rn, ravg, rsd, c_n, c_nf, c_avg, c_sd, c_prev, c_base, c_lognorm, size_low, inv, bound)\n"
"--\n\n"
"Add run j (rn samples, average ravg, stdev rsd) to candidates 0..j-1 and write their lower bounds\n"
"into bound (the arrays updated in place), at the vector level of _simd().\n\n"
"The kernel's loops, exposed for the tests (run_steps calls them in C).");

static PyObject *
extend_open_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 14) {
        PyErr_Format(PyExc_TypeError, "_extend_open() takes 14 arguments (%zd given)", nargs);
        return NULL;
    }
    int64_t j, rn;
    double ravg, rsd, inv;
    if (get_int(args[0], &j, "j") < 0 || get_int(args[1], &rn, "rn") < 0 || get_float(args[2], &ravg, "ravg") < 0 ||
        get_float(args[3], &rsd, "rsd") < 0 || get_float(args[12], &inv, "inv") < 0)
        return NULL;
    if (j < 0) {
        PyErr_SetString(PyExc_ValueError, "j must not be negative");
        return NULL;
    }
    static const struct {
        int index;
        const char *name;
        int kind;
        int writable;
    } spec[9] = {
        {4, "c_n", I64, 1},       {5, "c_nf", F64, 1},       {6, "c_avg", F64, 1},     {7, "c_sd", F64, 1},
        {8, "c_prev", F64, 0},    {9, "c_base", F64, 0},     {10, "c_lognorm", F64, 0}, {11, "size_low", F64, 0},
        {13, "bound", F64, 1},
    };
    Py_buffer views[9];
    int got = 0;
    for (; got < 9; got++) {
        /* size_low is read up to index j + 1 */
        Py_ssize_t need = spec[got].index == 11 ? (Py_ssize_t)j + 2 : (Py_ssize_t)j;
        if (get_array(args[spec[got].index], &views[got], spec[got].kind, spec[got].writable, need,
                      spec[got].name) < 0)
            goto release;
    }
    {
        int writable[9];
        const char *names[9];
        for (int k = 0; k < 9; k++) {
            writable[k] = spec[k].writable;
            names[k] = spec[k].name;
        }
        if (check_overlaps(views, writable, names, 9) < 0)
            goto release;
    }
    extend_open(j, rn, ravg, rsd, views[0].buf, views[1].buf, views[2].buf, views[3].buf, views[4].buf,
                views[5].buf, views[6].buf, views[7].buf, inv, views[8].buf);
    for (int k = 0; k < 9; k++)
        PyBuffer_Release(&views[k]);
    Py_RETURN_NONE;

release:
    for (int k = 0; k < got; k++)
        PyBuffer_Release(&views[k]);
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* _simd (the vector level, for the tests)                                                     */
/* ------------------------------------------------------------------------------------------ */

static const char *const simd_names[] = {"scalar", "sse2", "avx2", "avx512"};

PyDoc_STRVAR(simd_doc,
"_simd(level=None)\n"
"--\n\n"
"The vector level extend_open runs at: 'avx512', 'avx2', 'sse2' or 'scalar' (the CPU's best at\n"
"import).\n\n"
"With a level, sets it first (for the tests: every level gives the same bits); a level above the\n"
"CPU's best raises ValueError. Not for use while another thread runs the kernel.");

static PyObject *
simd_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "_simd() takes at most 1 argument (%zd given)", nargs);
        return NULL;
    }
    if (nargs == 1 && args[0] != Py_None) {
        const char *name = PyUnicode_Check(args[0]) ? PyUnicode_AsUTF8(args[0]) : NULL;
        if (name == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "_simd() level must be a str");
            return NULL;
        }
        int level = -1;
        for (int k = 0; k <= SIMD_AVX512; k++) {
            if (strcmp(name, simd_names[k]) == 0)
                level = k;
        }
        if (level < 0 || level > simd_best) {
            PyErr_Format(PyExc_ValueError, "level %R is not one of this CPU's ('%s' at most)", args[0],
                         simd_names[simd_best]);
            return NULL;
        }
        simd_level = level;
    }
    return PyUnicode_FromString(simd_names[simd_level]);
}

/* ------------------------------------------------------------------------------------------ */

static PyMethodDef methods[] = {
    {"run_steps", (PyCFunction)(void (*)(void))run_steps, METH_FASTCALL, run_steps_doc},
    {"rebuild", (PyCFunction)(void (*)(void))rebuild_py, METH_FASTCALL, rebuild_doc},
    {"_bits", (PyCFunction)(void (*)(void))bits_py, METH_FASTCALL, bits_doc},
    {"_extend_open", (PyCFunction)(void (*)(void))extend_open_py, METH_FASTCALL, extend_open_doc},
    {"_simd", (PyCFunction)(void (*)(void))simd_py, METH_FASTCALL, simd_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "pal.analysis.mdl_kernel",
    "The MDL search loop of pal.analysis.mdl, in C (built at install; see the source's top comment).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit_mdl_kernel(void)
{
    LN2 = log(2.0);
#ifdef HAVE_X86_SIMD
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"))
        simd_best = SIMD_AVX512;
    else if (__builtin_cpu_supports("avx2"))
        simd_best = SIMD_AVX2;
    else
        simd_best = SIMD_SSE2;
#endif
    simd_level = simd_best;
    return PyModule_Create(&module_def);
}
