/*
 * The split and window scans of pal.analysis.filters, and its robust noise estimate, in C
 * (a CPython extension compiled at install by setup.py, with -O2 -fno-fast-math
 * -ffp-contract=off -fno-strict-aliasing).
 *
 * Why compiled: the alert filters scan every level of every series for the best split
 * (best_shift), the best short excursion (best_excursion) and the best longer window
 * (best_window); the NumPy forms build a matrix of every (length, start) pair and pay a dozen
 * array calls per scan, which made the filters cost as much as the MDL search itself (0.35 of
 * 0.9 ms per series). Here each scan is one loop with no temporary arrays. run_noise and
 * isolated_runs run three times per series analysed; their NumPy forms pay a dozen array
 * calls each.
 *
 * Exactness (the filters' decisions must not depend on which path ran): every float operation
 * is the NumPy form's, in its order (the cumulative sums are sequential in both; no fast-math,
 * no fused multiply-add); the winner is np.argmax's: the first largest z in row-major
 * (length, start) order, or the first NaN when a z is NaN (a series holding inf). The medians
 * of run_noise are selected with the partitions of the quicksort numba's np.sort ran (median of
 * three, insertion sort under 16 elements, NaN last): the values a sort puts in the middle (a
 * -0.0 may stand for a 0.0, which the noise does not see); the mean of the two middle values of
 * an even count is (a + b) / 2.0, as filters._median has it. The window scans run four starts
 * an instruction where the CPU has AVX2 (scan_windows_avx2: each lane the same operations, the
 * lanes' winners merged in np.argmax's order; _simd() selects the level for the tests). The
 * NumPy forms stay in filters as the fallback when this module is missing and as the tests'
 * reference.
 *
 * Python interface (positional arguments only; x a 1-D C-contiguous float64 array):
 *   best_shift(x, sigma, min_runs, min_after) -> (z: float, k: int)
 *   best_excursion(x, sigma, shortest, longest) -> (z: float, start: int, end: int)
 *   best_window(x, sigma, min_runs, grid) -> (z, start, end); grid: int64 lengths, ascending
 *   run_noise(x) -> (done: bool, noise: float)
 *   isolated_runs(x, k_sigma, out) -> (done: bool, m: int); out: a writable int64 array of at
 *       least max(len(x) - 2, 0) elements, whose first m receive the runs' indices
 *   _simd(level=None) -> 'avx2' or 'scalar': the window scans' vector level (tests)
 * Negative run counts or window lengths (which no caller passes) raise ValueError.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

/* int64 arithmetic wraps, as numba's does (signed overflow is undefined in C). */
static inline int64_t
wsub(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

static inline int64_t
wadd(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* ------------------------------------------------------------------------------------------ */
/* Scratch memory: on the stack for typical series, else on the heap (taken with the GIL held). */

#define STACK_DOUBLES 1024

typedef struct {
    double stack[STACK_DOUBLES];
    void *heap;
} Scratch;

static void *
scratch_get(Scratch *s, size_t bytes)
{
    s->heap = NULL;
    if (bytes <= sizeof(s->stack))
        return s->stack;
    s->heap = PyMem_Malloc(bytes ? bytes : 1);
    if (s->heap == NULL)
        PyErr_NoMemory();
    return s->heap;
}

static void
scratch_free(Scratch *s)
{
    PyMem_Free(s->heap);
    s->heap = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* The scans */

/* 0 followed by the cumulative sums of x (np.cumsum adds left to right too). */
static inline void
prefix(const double *x, Py_ssize_t n, double *cs)
{
    double total = 0.0;
    cs[0] = 0.0;
    for (Py_ssize_t i = 0; i < n; i++) {
        total += x[i];
        cs[i + 1] = total;
    }
}

/* sigma * sqrt(1/length + 1/rest): a row's divisor of |inside - outside| (both scans). */
static inline double
row_scale(double sigma, int64_t length, int64_t rest)
{
    return sigma * sqrt(1.0 / (double)length + 1.0 / (double)rest);
}

/* One window's z (0 when it ends past keep_end), the NumPy form's operations in its order. */
static inline double
window_z(const double *cs, int64_t n, int64_t a, int64_t length, int64_t rest, double scale, int64_t keep_end)
{
    int64_t end = a + length;
    if (end > keep_end)
        return 0.0;
    double inside = (cs[end] - cs[a]) / (double)length;
    double outside = (cs[n] - cs[end] + cs[a]) / (double)rest;
    return fabs(inside - outside) / scale;
}

/* The first largest z of a window against the rest: rows lengths[0 .. count - 1], starts first
 * .. last - 1 for every row; a window counts where its end is at most keep_end (else its z is 0,
 * as np.where has it). Sets (*z, *at, *size). (scan_windows: the AVX2 form where the CPU has it,
 * this loop otherwise and wherever a z is NaN.) */
static void
scan_windows_scalar(const double *cs, int64_t n, double sigma, const int64_t *lengths, Py_ssize_t count,
                    int64_t first, int64_t last, int64_t keep_end, double *z_out, int64_t *at_out,
                    int64_t *size_out)
{
    double best = -INFINITY;
    int64_t at = -1, size = -1;
    for (Py_ssize_t r = 0; r < count; r++) {
        int64_t length = lengths[r];
        int64_t rest = n - length;
        double scale = row_scale(sigma, length, rest);
        for (int64_t a = first; a < last; a++) {
            double z = window_z(cs, n, a, length, rest, scale, keep_end);
            if (isnan(z)) {
                *z_out = z;
                *at_out = a;
                *size_out = length;
                return;
            }
            if (z > best) {
                best = z;
                at = a;
                size = length;
            }
        }
    }
    *z_out = best;
    *at_out = at;
    *size_out = size;
}

/* The same scan, four starts an instruction (AVX2). The three divisions of a window stay
 * divisions, each lane the scalar loop's operations in its order, so every z is the scalar
 * loop's to the bit; they were the scan's cost (a year's daily run spent 2.4 % of its CPU here).
 * Lane j of a row's block holds start a + j; each lane keeps its first largest z (strict >, so
 * within a lane the earliest in row-major order), the starts a block cannot hold whole (the
 * row's last ones, and those whose window ends past keep_end: z 0) go through the scalar steps
 * into a fifth "lane", and the lanes' bests are merged by z, then by (row, start): the first
 * largest z of the whole scan. A NaN z (a series holding inf, or sigma 0) returns 0 and the
 * scalar loop scans again, for np.argmax's first NaN. */
static int use_avx2 = 0; /* set at import where the CPU has AVX2; _simd() can turn it off (tests) */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_X86_SIMD 1
#include <immintrin.h>
#define AVX2 __attribute__((target("avx2")))

static AVX2 int
scan_windows_avx2(const double *cs, int64_t n, double sigma, const int64_t *lengths, Py_ssize_t count,
                  int64_t first, int64_t last, int64_t keep_end, double *z_out, int64_t *at_out,
                  int64_t *size_out)
{
    const __m256d sign = _mm256_set1_pd(-0.0), total = _mm256_set1_pd(cs[n]);
    const __m256i four = _mm256_set1_epi64x(4);
    __m256d best = _mm256_set1_pd(-INFINITY);
    __m256i best_a = _mm256_set1_epi64x(-1), best_r = _mm256_set1_epi64x(-1);
    double tail = -INFINITY;
    int64_t tail_a = -1, tail_r = -1;
    for (Py_ssize_t r = 0; r < count; r++) {
        int64_t length = lengths[r];
        int64_t rest = n - length;
        double scale = row_scale(sigma, length, rest);
        const __m256d vlen = _mm256_set1_pd((double)length), vrest = _mm256_set1_pd((double)rest);
        const __m256d vscale = _mm256_set1_pd(scale);
        const __m256i vr = _mm256_set1_epi64x((int64_t)r);
        __m256i va = _mm256_set_epi64x(first + 3, first + 2, first + 1, first);
        int64_t a = first;
        /* whole blocks: four starts whose windows all end by keep_end */
        for (; a + 4 <= last && a + 3 + length <= keep_end; a += 4) {
            __m256d at = _mm256_loadu_pd(cs + a);
            __m256d end = _mm256_loadu_pd(cs + a + length);
            __m256d inside = _mm256_div_pd(_mm256_sub_pd(end, at), vlen);
            __m256d outside = _mm256_div_pd(_mm256_add_pd(_mm256_sub_pd(total, end), at), vrest);
            __m256d z = _mm256_div_pd(_mm256_andnot_pd(sign, _mm256_sub_pd(inside, outside)), vscale);
            if (_mm256_movemask_pd(_mm256_cmp_pd(z, z, _CMP_UNORD_Q)))
                return 0;
            __m256d gt = _mm256_cmp_pd(z, best, _CMP_GT_OQ);
            best = _mm256_blendv_pd(best, z, gt);
            best_a = _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(best_a), _mm256_castsi256_pd(va), gt));
            best_r = _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(best_r), _mm256_castsi256_pd(vr), gt));
            va = _mm256_add_epi64(va, four);
        }
        for (; a < last; a++) { /* the row's other starts: the scalar loop's steps */
            double z = window_z(cs, n, a, length, rest, scale, keep_end);
            if (isnan(z))
                return 0;
            if (z > tail) {
                tail = z;
                tail_a = a;
                tail_r = (int64_t)r;
            }
        }
    }
    double zs[5];
    int64_t as[5], rs[5];
    _mm256_storeu_pd(zs, best);
    _mm256_storeu_si256((__m256i *)as, best_a);
    _mm256_storeu_si256((__m256i *)rs, best_r);
    zs[4] = tail;
    as[4] = tail_a;
    rs[4] = tail_r;
    int k = 0;
    for (int j = 1; j < 5; j++) {
        if (zs[j] > zs[k] || (zs[j] == zs[k] && rs[j] >= 0 && (rs[k] < 0 || rs[j] < rs[k]
                                                              || (rs[j] == rs[k] && as[j] < as[k]))))
            k = j;
    }
    *z_out = zs[k];
    *at_out = as[k];
    *size_out = rs[k] >= 0 ? lengths[rs[k]] : -1;
    return 1;
}
#endif

static void
scan_windows(const double *cs, int64_t n, double sigma, const int64_t *lengths, Py_ssize_t count,
             int64_t first, int64_t last, int64_t keep_end, double *z_out, int64_t *at_out,
             int64_t *size_out)
{
#ifdef HAVE_X86_SIMD
    if (use_avx2 && scan_windows_avx2(cs, n, sigma, lengths, count, first, last, keep_end, z_out, at_out,
                                      size_out))
        return;
#endif
    scan_windows_scalar(cs, n, sigma, lengths, count, first, last, keep_end, z_out, at_out, size_out);
}

/* ------------------------------------------------------------------------------------------ */
/* The noise: the MAD of first differences, medians in the order of numba's np.sort (NaN last) */

static inline int
lt_float(double a, double b)
{
    return a < b || (isnan(b) && !isnan(a));
}

#define SWAP(A, i, j)                                                                          \
    do {                                                                                       \
        double t_ = (A)[i];                                                                    \
        (A)[i] = (A)[j];                                                                       \
        (A)[j] = t_;                                                                           \
    } while (0)

/* Insertion sort of A[low .. high] (inclusive bounds). */
static inline void
insertion_sort(double *A, Py_ssize_t low, Py_ssize_t high)
{
    if (high <= low)
        return;
    for (Py_ssize_t i = low + 1; i <= high; i++) {
        double v = A[i];
        Py_ssize_t j = i;
        while (j > low && lt_float(v, A[j - 1])) {
            A[j] = A[j - 1];
            j--;
        }
        A[j] = v;
    }
}

/* Partition A[low .. high] around the median of {low, middle, high}; the pivot's index. */
static inline Py_ssize_t
partition(double *A, Py_ssize_t low, Py_ssize_t high)
{
    Py_ssize_t mid = (low + high) >> 1;
    if (lt_float(A[mid], A[low]))
        SWAP(A, low, mid);
    if (lt_float(A[high], A[mid]))
        SWAP(A, high, mid);
    if (lt_float(A[mid], A[low]))
        SWAP(A, low, mid);
    double pivot = A[mid];
    SWAP(A, high, mid);
    Py_ssize_t i = low, j = high - 1;
    for (;;) {
        while (i < high && lt_float(A[i], pivot))
            i++;
        while (j >= low && lt_float(pivot, A[j]))
            j--;
        if (i >= j)
            break;
        SWAP(A, i, j);
        i++;
        j--;
    }
    SWAP(A, i, high);
    return i;
}

/* under this many values a part is finished by insertion sort (numba's quicksort's threshold) */
#define SMALL_QUICKSORT 15

/* A[k] made the value a sort of A[0 .. n-1] (lt_float's order) puts there, none of A[0 .. k-1]
 * after it: quicksort's partitions, into the side that holds k only (Hoare's selection). */
static void
select_kth(double *A, Py_ssize_t n, Py_ssize_t k)
{
    Py_ssize_t low = 0, high = n - 1;
    while (high - low >= SMALL_QUICKSORT) {
        const Py_ssize_t i = partition(A, low, high);
        if (i == k)
            return;
        if (k < i)
            high = i - 1;
        else
            low = i + 1;
    }
    insertion_sort(A, low, high);
}

/* filters._median of x[0 .. n-1] (n >= 1): the middle of its sorted copy, or the mean of the two
 * middle ones; the order statistics selected in s, not the copy sorted (a third of a series'
 * noise estimate was its two sorts). A selection may leave a -0.0 where the sort left a 0.0 (they
 * compare equal): the noise does not see it (|d - med| and the median of those are the same). */
static inline double
median_of(const double *x, Py_ssize_t n, double *s)
{
    memcpy(s, x, (size_t)n * sizeof(double));
    const Py_ssize_t h = n / 2;
    select_kth(s, n, h);
    if (n % 2)
        return s[h];
    double below = s[0]; /* the largest of s[0 .. h-1]: the sort's s[h - 1] */
    for (Py_ssize_t i = 1; i < h; i++)
        if (lt_float(below, s[i]))
            below = s[i];
    return (below + s[h]) / 2.0;
}

/* filters.run_noise of m >= 3 valid, finite values v; d and s: scratch of m - 1 doubles. */
static double
noise(const double *v, Py_ssize_t m, double *d, double *s)
{
    Py_ssize_t k = m - 1;
    for (Py_ssize_t i = 0; i < k; i++)
        d[i] = v[i + 1] - v[i];
    double med = median_of(d, k, s);
    for (Py_ssize_t i = 0; i < k; i++)
        d[i] = fabs(d[i] - med);
    return median_of(d, k, s) / 0.6745 / sqrt(2.0);
}

/* The values of x that are not NaN, in order, into v (and their indices into idx, when given);
 * their count; *finite: whether all of them are finite. */
static Py_ssize_t
valid(const double *x, Py_ssize_t n, double *v, int64_t *idx, int *finite)
{
    Py_ssize_t m = 0;
    int fin = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!isnan(x[i])) {
            v[m] = x[i];
            if (idx)
                idx[m] = i;
            m++;
            fin = fin && !isinf(x[i]);
        }
    }
    *finite = fin;
    return m;
}

/* ------------------------------------------------------------------------------------------ */
/* Arguments */

/* A native format of the type code `code`: optionally after '@' or '=' (or '<' on a
 * little-endian host). */
static int
format_is(const Py_buffer *view, const char *codes)
{
    const char *f = view->format ? view->format : "B";
    if (*f == '@' || *f == '=')
        f++;
#if PY_LITTLE_ENDIAN
    else if (*f == '<')
        f++;
#endif
    return f[0] != '\0' && f[1] == '\0' && strchr(codes, f[0]) != NULL;
}

/* A 1-D C-contiguous array of float64 (codes "d") or int64 (codes "lq"); 0 or -1 (an exception
 * set, nothing held). */
static int
get_array(PyObject *obj, Py_buffer *view, const char *func, const char *name, const char *codes,
          const char *type, int writable)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        PyObject *etype, *evalue, *etb;
        PyErr_Fetch(&etype, &evalue, &etb);
        PyErr_Format(PyExc_TypeError, "%s: %s must be a%s C-contiguous %s array (got %.100s: %S)", func,
                     name, writable ? " writable" : "", type, Py_TYPE(obj)->tp_name,
                     evalue ? evalue : Py_None);
        Py_XDECREF(etype);
        Py_XDECREF(evalue);
        Py_XDECREF(etb);
        return -1;
    }
    if (view->ndim != 1 || view->itemsize != 8 || !format_is(view, codes)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a 1-D %s array (got ndim %d, format '%s', itemsize %zd)",
                     func, name, type, view->ndim, view->format ? view->format : "B", view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static int
get_int(PyObject *obj, int64_t *out, const char *func, const char *name)
{
    long long v = PyLong_AsLongLong(obj);
    if (v == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s: %s must be an int (got %.100s)", func, name,
                         Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

static int
get_double(PyObject *obj, double *out, const char *func, const char *name)
{
    double v = PyFloat_AsDouble(obj);
    if (v == -1.0 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s: %s must be a float (got %.100s)", func, name,
                         Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    *out = v;
    return 0;
}

static int
check_nargs(Py_ssize_t nargs, Py_ssize_t want, const char *func)
{
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd positional arguments (%zd given)", func, want, nargs);
        return -1;
    }
    return 0;
}

static int
non_negative(int64_t v, const char *func, const char *name)
{
    if (v < 0) {
        PyErr_Format(PyExc_ValueError, "%s: %s must be >= 0 (got %lld)", func, name, (long long)v);
        return -1;
    }
    return 0;
}

/* (z, a, b) as (float, int, int) */
static PyObject *
triple(double z, int64_t a, int64_t b)
{
    PyObject *pz = PyFloat_FromDouble(z);
    PyObject *pa = PyLong_FromLongLong(a);
    PyObject *pb = PyLong_FromLongLong(b);
    PyObject *out = NULL;
    if (pz && pa && pb)
        out = PyTuple_Pack(3, pz, pa, pb);
    Py_XDECREF(pz);
    Py_XDECREF(pa);
    Py_XDECREF(pb);
    return out;
}

static PyObject *
pair_float_int(double z, int64_t k)
{
    PyObject *pz = PyFloat_FromDouble(z);
    PyObject *pk = PyLong_FromLongLong(k);
    PyObject *out = NULL;
    if (pz && pk)
        out = PyTuple_Pack(2, pz, pk);
    Py_XDECREF(pz);
    Py_XDECREF(pk);
    return out;
}

/* ------------------------------------------------------------------------------------------ */
/* The module's functions */

PyDoc_STRVAR(best_shift_doc,
"best_shift(x, sigma, min_runs, min_after) -> (z, k)\n\n"
"filters._best_shift: the largest two-sample z of a split of x (float64) and where the 2nd\n"
"part starts, both parts at least min_runs / min_after runs; (0.0, -1) when x is too short.");

static PyObject *
best_shift(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const char *F = "best_shift";
    Py_buffer xv;
    double sigma;
    int64_t min_runs, min_after;
    Scratch sc;
    if (check_nargs(nargs, 4, F) < 0 || get_double(args[1], &sigma, F, "sigma") < 0
        || get_int(args[2], &min_runs, F, "min_runs") < 0 || get_int(args[3], &min_after, F, "min_after") < 0)
        return NULL;
    if (get_array(args[0], &xv, F, "x", "d", "float64", 0) < 0)
        return NULL;
    const double *x = (const double *)xv.buf;
    int64_t n = (int64_t)(xv.len / 8);
    if (n < wadd(min_runs, min_after)) {
        PyBuffer_Release(&xv);
        return pair_float_int(0.0, -1);
    }
    if (non_negative(min_runs, F, "min_runs") < 0 || non_negative(min_after, F, "min_after") < 0) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    double *cs = scratch_get(&sc, (size_t)(n + 1) * sizeof(double));
    if (cs == NULL) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    double best = -INFINITY;
    int64_t at = -1;
    Py_BEGIN_ALLOW_THREADS
    prefix(x, n, cs);
    int64_t stop = n - min_after + 1;
    for (int64_t k = min_runs; k < stop; k++) {
        double left = cs[k] / (double)k;
        double right = (cs[n] - cs[k]) / (double)(n - k);
        double z = fabs(right - left) / (sigma * sqrt(1.0 / (double)k + 1.0 / (double)(n - k)));
        if (isnan(z)) {
            best = z;
            at = k;
            break;
        }
        if (z > best) {
            best = z;
            at = k;
        }
    }
    Py_END_ALLOW_THREADS
    scratch_free(&sc);
    PyBuffer_Release(&xv);
    return pair_float_int(best, at);
}

PyDoc_STRVAR(best_excursion_doc,
"best_excursion(x, sigma, shortest, longest) -> (z, start, end)\n\n"
"filters._best_excursion: the best window of shortest .. longest runs (of the lengths that\n"
"leave at least 2 * longest runs outside) against the rest of x; (0.0, -1, -1) when none.");

static PyObject *
best_excursion(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const char *F = "best_excursion";
    Py_buffer xv;
    double sigma;
    int64_t shortest, longest;
    Scratch sc;
    if (check_nargs(nargs, 4, F) < 0 || get_double(args[1], &sigma, F, "sigma") < 0
        || get_int(args[2], &shortest, F, "shortest") < 0 || get_int(args[3], &longest, F, "longest") < 0)
        return NULL;
    if (get_array(args[0], &xv, F, "x", "d", "float64", 0) < 0)
        return NULL;
    const double *x = (const double *)xv.buf;
    int64_t n = (int64_t)(xv.len / 8);
    int64_t room = wsub(n, (int64_t)((uint64_t)longest * 2u));
    int64_t top = longest < room ? longest : room;
    if (top < shortest) {  /* np.arange(shortest, top + 1) is empty */
        PyBuffer_Release(&xv);
        return triple(0.0, -1, -1);
    }
    if (non_negative(shortest, F, "shortest") < 0) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    Py_ssize_t count = (Py_ssize_t)(top - shortest + 1);
    size_t bytes = (size_t)(n + 1) * sizeof(double) + (size_t)count * sizeof(int64_t);
    double *cs = scratch_get(&sc, bytes);
    if (cs == NULL) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    int64_t *lengths = (int64_t *)(cs + n + 1);
    double z;
    int64_t a, length;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < count; r++)
        lengths[r] = shortest + r;
    prefix(x, n, cs);
    /* a window counts where it starts before n - length: it ends at n - 1 at most */
    scan_windows(cs, n, sigma, lengths, count, 1, n - lengths[0], n - 1, &z, &a, &length);
    Py_END_ALLOW_THREADS
    scratch_free(&sc);
    PyBuffer_Release(&xv);
    if (!(z > 0.0))
        return triple(0.0, -1, -1);
    return triple(z, a, a + length);
}

PyDoc_STRVAR(best_window_doc,
"best_window(x, sigma, min_runs, grid) -> (z, start, end)\n\n"
"filters._best_window: the best window whose length is on grid (int64, ascending) and leaves\n"
"min_runs runs on each side, against the rest of x; (0.0, -1, -1) when no length fits.");

static PyObject *
best_window(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const char *F = "best_window";
    Py_buffer xv, gv;
    double sigma;
    int64_t min_runs;
    Scratch sc;
    if (check_nargs(nargs, 4, F) < 0 || get_double(args[1], &sigma, F, "sigma") < 0
        || get_int(args[2], &min_runs, F, "min_runs") < 0)
        return NULL;
    if (get_array(args[0], &xv, F, "x", "d", "float64", 0) < 0)
        return NULL;
    if (get_array(args[3], &gv, F, "grid", "lq", "int64", 0) < 0) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    const double *x = (const double *)xv.buf;
    const int64_t *grid = (const int64_t *)gv.buf;
    int64_t n = (int64_t)(xv.len / 8);
    Py_ssize_t glen = gv.len / 8;
    int64_t top = wsub(n, (int64_t)((uint64_t)min_runs * 2u));
    Py_ssize_t count = 0;
    while (count < glen && grid[count] <= top)
        count++;
    PyObject *out = NULL;
    if (!count) {
        out = triple(0.0, -1, -1);
        goto done;
    }
    if (non_negative(min_runs, F, "min_runs") < 0)
        goto done;
    for (Py_ssize_t r = 0; r < count; r++) {
        if (grid[r] < 0) {
            PyErr_Format(PyExc_ValueError, "%s: grid lengths must be >= 0 (got %lld)", F, (long long)grid[r]);
            goto done;
        }
    }
    double *cs = scratch_get(&sc, (size_t)(n + 1) * sizeof(double));
    if (cs == NULL)
        goto done;
    double z;
    int64_t a, length;
    Py_BEGIN_ALLOW_THREADS
    prefix(x, n, cs);
    scan_windows(cs, n, sigma, grid, count, min_runs, n - grid[0] - min_runs + 1, n - min_runs, &z, &a,
                 &length);
    Py_END_ALLOW_THREADS
    scratch_free(&sc);
    out = triple(z, a, a + length);
done:
    PyBuffer_Release(&gv);
    PyBuffer_Release(&xv);
    return out;
}

PyDoc_STRVAR(run_noise_doc,
"run_noise(x) -> (done, noise)\n\n"
"filters.run_noise: MAD of the first differences of x's valid runs / 0.6745 / sqrt(2) (NaN\n"
"under three valid runs); not done (False, nan) where a valid value is infinite (the NumPy\n"
"form's NaN ordering decides there).");

static PyObject *
run_noise(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const char *F = "run_noise";
    Py_buffer xv;
    Scratch sc;
    if (check_nargs(nargs, 1, F) < 0 || get_array(args[0], &xv, F, "x", "d", "float64", 0) < 0)
        return NULL;
    const double *x = (const double *)xv.buf;
    Py_ssize_t n = xv.len / 8;
    double *v = scratch_get(&sc, (size_t)(3 * n + 1) * sizeof(double));
    if (v == NULL) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    int done = 1, finite;
    double result = NAN;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t m = valid(x, n, v, NULL, &finite);
    if (!finite)
        done = 0;
    else if (m >= 3)
        result = noise(v, m, v + n, v + 2 * n);
    Py_END_ALLOW_THREADS
    scratch_free(&sc);
    PyBuffer_Release(&xv);
    PyObject *pz = PyFloat_FromDouble(result);
    if (pz == NULL)
        return NULL;
    PyObject *out = PyTuple_Pack(2, done ? Py_True : Py_False, pz);
    Py_DECREF(pz);
    return out;
}

PyDoc_STRVAR(isolated_runs_doc,
"isolated_runs(x, k_sigma, out) -> (done, m)\n\n"
"filters.isolated_runs: the valid runs of x that stand out from both valid neighbours, the\n"
"same way, by more than k_sigma noise (run_noise); their indices are written to out[:m]\n"
"(int64, at least max(len(x) - 2, 0) elements). Not done (False, 0) where a valid value is\n"
"infinite.");

static PyObject *
isolated_runs(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static const char *F = "isolated_runs";
    Py_buffer xv, ov;
    double k_sigma;
    Scratch sc;
    if (check_nargs(nargs, 3, F) < 0 || get_double(args[1], &k_sigma, F, "k_sigma") < 0)
        return NULL;
    if (get_array(args[0], &xv, F, "x", "d", "float64", 0) < 0)
        return NULL;
    if (get_array(args[2], &ov, F, "out", "lq", "int64", 1) < 0) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    const double *x = (const double *)xv.buf;
    int64_t *found = (int64_t *)ov.buf;
    Py_ssize_t n = xv.len / 8;
    PyObject *out = NULL;
    if (ov.len / 8 < (n > 2 ? n - 2 : 0)) {
        PyErr_Format(PyExc_ValueError, "%s: out must hold max(len(x) - 2, 0) = %zd elements (got %zd)", F,
                     n > 2 ? n - 2 : 0, ov.len / 8);
        goto done;
    }
    double *v = scratch_get(&sc, (size_t)(4 * n + 1) * sizeof(double));
    if (v == NULL)
        goto done;
    int64_t *idx = (int64_t *)(v + 3 * n);
    int finished = 1, finite;
    Py_ssize_t count = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t m = valid(x, n, v, idx, &finite);
    if (!finite)
        finished = 0;
    else if (m >= 3) {
        double sigma = noise(v, m, v + n, v + 2 * n);
        if (!(sigma <= 0)) {
            double limit = k_sigma * sigma;
            for (Py_ssize_t j = 1; j < m - 1; j++) {
                double left = v[j] - v[j - 1], right = v[j] - v[j + 1];
                int same = (left > 0 && right > 0) || (left < 0 && right < 0) || (left == 0 && right == 0);
                if (same) {
                    double al = fabs(left), ar = fabs(right);
                    double least = ar < al ? ar : al;
                    if (least > limit)
                        found[count++] = idx[j];
                }
            }
        }
    }
    Py_END_ALLOW_THREADS
    scratch_free(&sc);
    out = PyTuple_New(2);
    if (out != NULL) {
        PyObject *pm = PyLong_FromSsize_t(count);
        if (pm == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyObject *flag = finished ? Py_True : Py_False;
        Py_INCREF(flag);
        PyTuple_SET_ITEM(out, 0, flag);
        PyTuple_SET_ITEM(out, 1, pm);
    }
done:
    PyBuffer_Release(&ov);
    PyBuffer_Release(&xv);
    return out;
}

static int simd_best = 0; /* AVX2 available (set at import) */

PyDoc_STRVAR(simd_doc,
"_simd(level=None)\n"
"--\n\n"
"The vector level the window scans run at: 'avx2' or 'scalar' (the CPU's best at import). With a\n"
"level, sets it first (for the tests: both give the same results); 'avx2' on a CPU without it\n"
"raises ValueError. Not for use while another thread runs the kernel.");

static PyObject *
simd_py(PyObject *module, PyObject *args)
{
    (void)module;
    const char *name = NULL;
    if (!PyArg_ParseTuple(args, "|z:_simd", &name))
        return NULL;
    if (name != NULL) {
        int level = strcmp(name, "avx2") == 0 ? 1 : strcmp(name, "scalar") == 0 ? 0 : -1;
        if (level < 0 || level > simd_best) {
            PyErr_Format(PyExc_ValueError, "level '%s' is not one of this CPU's ('%s' at most)", name,
                         simd_best ? "avx2" : "scalar");
            return NULL;
        }
        use_avx2 = level;
    }
    return PyUnicode_FromString(use_avx2 ? "avx2" : "scalar");
}

static PyMethodDef methods[] = {
    {"best_shift", (PyCFunction)(void (*)(void))best_shift, METH_FASTCALL, best_shift_doc},
    {"best_excursion", (PyCFunction)(void (*)(void))best_excursion, METH_FASTCALL, best_excursion_doc},
    {"best_window", (PyCFunction)(void (*)(void))best_window, METH_FASTCALL, best_window_doc},
    {"run_noise", (PyCFunction)(void (*)(void))run_noise, METH_FASTCALL, run_noise_doc},
    {"isolated_runs", (PyCFunction)(void (*)(void))isolated_runs, METH_FASTCALL, isolated_runs_doc},
    {"_simd", (PyCFunction)simd_py, METH_VARARGS, simd_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(module_doc,
"The split and window scans and the robust noise of pal.analysis.filters, compiled (C, built at\n"
"install): the NumPy forms' exact results, each scan one loop with no temporary arrays.");

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "filters_kernel", module_doc, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit_filters_kernel(void)
{
#ifdef HAVE_X86_SIMD
    __builtin_cpu_init();
    simd_best = __builtin_cpu_supports("avx2") ? 1 : 0;
#endif
    use_avx2 = simd_best;
    return PyModule_Create(&module);
}
