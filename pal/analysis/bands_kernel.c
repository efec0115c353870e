/*
 * The MM / TMA / TMSD statistics of pal.analysis.bands, as a C extension module (compiled at
 * install by setup.py with -O2 -fno-fast-math -ffp-contract=off -fno-strict-aliasing).
 *
 * Why compiled: every drill-down's static graph draws the rolling bands of its series, and the
 * NumPy form (a sorted sliding-window matrix, a dozen array calls, the short prefixes in Python)
 * was a sixth of a page's cost, for some 170 windows of 14 values. Here one loop per window, into
 * buffers allocated once per series; each window's sorted values are the previous window's with
 * one value taken out and one put in (slide), not sorted again; bands_at does the wrapper's steps
 * too (a call per series instead of a dozen NumPy calls).
 *
 * Exactness (the bands must be the NumPy form's bit for bit, which the tests compare): the
 * quartiles are numpy's "linear" quantile with its _lerp; sums are numpy's pairwise order for up
 * to bands._PAIRWISE_BLOCK (128) values (8 accumulators; fewer than 8 values left to right from
 * 0.0); a full window sums all its values with the outliers as 0.0 (as the NumPy form masks
 * them), a short prefix only the kept values, in their order. Every float operation is the one
 * written here, in this order: no fast-math, and no contraction of a*b+c into a fused
 * multiply-add (-ffp-contract=off). Division by zero gives inf/nan silently, as numpy's does.
 *
 * Python API (arrays through the buffer protocol: C-contiguous float64; outputs preallocated by
 * the caller, e.g. np.empty, and written whole):
 *   bands_at(x, window, first, sigma, out) -> None
 *       out: (5, len(x)), rows MM, TMA, TMA - sigma*TMSD, TMA + sigma*TMSD, TMSD.
 *   rolling_stats(valid, window, first, stop, stats) -> None
 *       stats: (3, len(valid) + 1), rows MM, TMA, TMSD by history length.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

/* np.nan: the positive quiet NaN 0x7ff8000000000000 (numpy's np.full(..., np.nan)). */
static inline double
quiet_nan(void)
{
    const uint64_t bits = UINT64_C(0x7ff8000000000000);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* np.sum(a[:n]) for n <= 128, in numpy's order (bands._numpy_sum). */
static inline double
sum_(const double *a, Py_ssize_t n)
{
    double total;
    Py_ssize_t i;
    if (n < 8) {
        total = 0.0;
        for (i = 0; i < n; i++)
            total += a[i];
        return total;
    }
    double r0 = a[0], r1 = a[1], r2 = a[2], r3 = a[3], r4 = a[4], r5 = a[5], r6 = a[6], r7 = a[7];
    const Py_ssize_t blocked = n - n % 8; /* n >= 8: C's % is Python's here */
    i = 8;
    while (i < blocked) {
        r0 += a[i];
        r1 += a[i + 1];
        r2 += a[i + 2];
        r3 += a[i + 3];
        r4 += a[i + 4];
        r5 += a[i + 5];
        r6 += a[i + 6];
        r7 += a[i + 7];
        i += 8;
    }
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    while (i < n) {
        total += a[i];
        i++;
    }
    return total;
}

/* v into the sorted ordered[:n], after the values equal to it (the later of equal values goes
 * last): the stable sort of the values and v, n + 1 long. */
static inline void
insert_(double *ordered, Py_ssize_t n, double v)
{
    Py_ssize_t j = n;
    while (j > 0 && ordered[j - 1] > v) {
        ordered[j] = ordered[j - 1];
        j--;
    }
    ordered[j] = v;
}

/* w[:len] sorted into ordered[:len] (insertion sort: a window is a dozen values). */
static inline void
sorted_into(double *ordered, const double *w, Py_ssize_t len)
{
    for (Py_ssize_t i = 0; i < len; i++)
        insert_(ordered, i, w[i]);
}

/* The stable sort of a window moved on by one (ordered[:n] that of the window before): its
 * oldest value old out, the newest new in. old is the first of the values equal to it (the sort
 * is stable and it is the oldest), so the first equal one is taken out. 0, ordered untouched, if
 * old is not there (never, for valid runs: the caller then sorts the window itself). */
static inline int
slide_(double *ordered, Py_ssize_t n, double old, double new_)
{
    Py_ssize_t j = 0;
    while (j < n && ordered[j] != old)
        j++;
    if (j == n)
        return 0;
    for (Py_ssize_t i = j; i < n - 1; i++)
        ordered[i] = ordered[i + 1];
    insert_(ordered, n - 1, new_);
    return 1;
}

/* numpy's "linear" quantile q of the n (>= 1) sorted values, with its _lerp. */
static inline double
quantile_(const double *ordered, Py_ssize_t n, double q)
{
    const double virtual_ = (double)(n - 1) * q;
    const Py_ssize_t below = (Py_ssize_t)virtual_; /* floor: virtual_ >= 0 */
    const Py_ssize_t above = below + 1 < n - 1 ? below + 1 : n - 1;
    const double t = virtual_ - (double)below;
    const double a = ordered[below], b = ordered[above];
    return t >= 0.5 ? b - (b - a) * (1.0 - t) : a + (b - a) * t;
}

/* (median, low fence, high fence) of the n sorted values. */
static inline void
fences_(const double *ordered, Py_ssize_t n, double *q2, double *low, double *high)
{
    const double q1 = quantile_(ordered, n, 0.25);
    const double med = quantile_(ordered, n, 0.5);
    const double q3 = quantile_(ordered, n, 0.75);
    const double iqr = q3 - q1;
    *q2 = med;
    *low = q1 - 1.5 * iqr;
    *high = q3 + 1.5 * iqr;
}

/* a + b, with a's NaN when both are NaN (the first operand's, as numba's code and numpy's add
 * give it): the compiler may swap the operands of +, and x86 returns the first one's NaN. The
 * same float otherwise (b's NaN when only b is). */
static inline double
add_first_nan(double a, double b)
{
    return isnan(a) ? a : a + b;
}

/* MM, TMA, TMSD by history length h (columns 0 .. m of stats, rows of m + 1): the full windows
 * valid[h - window : h] for h >= window, the prefixes valid[:h] for h in [first, stop); NaN
 * elsewhere. Needs window >= 1 and, if first < stop, 1 <= first and stop <= min(window, m) + 1;
 * buf and ordered hold max(min(window, m), 1) values. */
static void
rolling_stats_impl(const double *valid, Py_ssize_t m, Py_ssize_t window, Py_ssize_t first,
                   Py_ssize_t stop, double *stats, double *buf, double *ordered)
{
    const Py_ssize_t cols = m + 1;
    double *mm = stats, *tma = stats + cols, *tmsd = stats + 2 * cols;
    const double nan = quiet_nan();
    Py_ssize_t h, i;
    for (i = 0; i < 3 * cols; i++)
        stats[i] = nan;
    for (h = first; h < stop; h++) { /* short prefixes: the kept values only, in their order */
        const double *w = valid;
        double q2, low, high, mean;
        Py_ssize_t k = 0;
        if (h == first)
            sorted_into(ordered, w, h);
        else /* one more value than the prefix before: inserted, not the prefix sorted again */
            insert_(ordered, h - 1, w[h - 1]);
        fences_(ordered, h, &q2, &low, &high);
        for (i = 0; i < h; i++) {
            const double v = w[i];
            if (low <= v && v <= high)
                buf[k++] = v;
        }
        mean = sum_(buf, k) / (double)k;
        for (i = 0; i < k; i++) {
            const double d = buf[i] - mean;
            buf[i] = d * d;
        }
        mm[h] = q2;
        tma[h] = mean;
        tmsd[h] = k > 1 ? sqrt(sum_(buf, k) / (double)(k - 1)) : 0.0;
    }
    for (h = window; h <= m; h++) { /* full windows: every value, the outliers as 0.0 */
        const double *w = valid + (h - window);
        double q2, low, high, mean;
        Py_ssize_t cnt = 0;
        /* the window before, moved on by one value */
        if (h == window || !slide_(ordered, window, valid[h - window - 1], w[window - 1]))
            sorted_into(ordered, w, window);
        fences_(ordered, window, &q2, &low, &high);
        for (i = 0; i < window; i++) {
            const int keep = w[i] >= low && w[i] <= high;
            buf[i] = keep ? w[i] : 0.0;
            cnt += keep;
        }
        mean = sum_(buf, window) / (double)cnt;
        for (i = 0; i < window; i++) {
            const double d = w[i] >= low && w[i] <= high ? w[i] - mean : 0.0;
            buf[i] = d * d;
        }
        mm[h] = q2;
        tma[h] = mean;
        tmsd[h] = cnt > 1 ? sqrt(sum_(buf, window) / (double)(cnt - 1 > 1 ? cnt - 1 : 1)) : 0.0;
    }
}

/* bands.rolling_bands in one call: the valid runs of x (n values, NaN a missing run), their
 * rolling statistics, and per sample the columns of the valid runs before it with the band edges.
 * valid holds n values, stats 3 * (n + 1), buf and ordered max(min(window, n), 1). */
static void
bands_at_impl(const double *x, Py_ssize_t n, Py_ssize_t window, Py_ssize_t first, double sigma,
              double *out, double *valid, double *stats, double *buf, double *ordered)
{
    Py_ssize_t m = 0, h = 0, i;
    for (i = 0; i < n; i++) {
        if (!isnan(x[i]))
            valid[m++] = x[i];
    }
    rolling_stats_impl(valid, m, window, first, window < m + 1 ? window : m + 1, stats, buf, ordered);
    const Py_ssize_t cols = m + 1;
    for (i = 0; i < n; i++) {
        const double tma = stats[cols + h];
        const double tmsd = stats[2 * cols + h];
        out[i] = stats[h];
        out[n + i] = tma;
        out[2 * n + i] = tma - sigma * tmsd;
        out[3 * n + i] = add_first_nan(tma, sigma * tmsd);
        out[4 * n + i] = tmsd;
        if (!isnan(x[i]))
            h++;
    }
}

/* ---- argument handling ---- */

/* A native float64 format: "d", optionally after '@' or '=' (or '<' on a little-endian host). */
static int
is_float64(const Py_buffer *view)
{
    const char *f = view->format;
    if (view->itemsize != 8 || f == NULL)
        return 0;
    if (f[0] == '@' || f[0] == '=')
        f++;
#if PY_LITTLE_ENDIAN
    else if (f[0] == '<')
        f++;
#else
    else if (f[0] == '>' || f[0] == '!')
        f++;
#endif
    return f[0] == 'd' && f[1] == '\0';
}

/* obj's buffer, C-contiguous float64 (writable if asked); -1 with an exception set. */
static int
get_float64(PyObject *obj, Py_buffer *view, int writable, const char *name)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous%s float64 array", name,
                     writable ? ", writable" : "");
        return -1;
    }
    if (!is_float64(view)) {
        PyErr_Format(PyExc_TypeError, "%s must be a float64 array (got format '%s', itemsize %zd)",
                     name, view->format ? view->format : "B", view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* A 1-D input's length; -1 with an exception set if it is not 1-D. */
static Py_ssize_t
length_1d(const Py_buffer *view, const char *name)
{
    if (view->ndim != 1) {
        PyErr_Format(PyExc_ValueError, "%s must be 1-D (got %d dimensions)", name, view->ndim);
        return -1;
    }
    return view->shape[0];
}

/* 0 if the output is (rows, cols); -1 with a ValueError set otherwise. */
static int
check_shape_2d(const Py_buffer *view, Py_ssize_t rows, Py_ssize_t cols, const char *name)
{
    if (view->ndim != 2 || view->shape[0] != rows || view->shape[1] != cols) {
        PyErr_Format(PyExc_ValueError, "%s must have shape (%zd, %zd)", name, rows, cols);
        return -1;
    }
    return 0;
}

/* 1 if the two buffers share memory. */
static int
overlap(const Py_buffer *a, const Py_buffer *b)
{
    const char *a0 = (const char *)a->buf, *b0 = (const char *)b->buf;
    return a->len > 0 && b->len > 0 && a0 < b0 + b->len && b0 < a0 + a->len;
}

static int
get_ssize(PyObject *obj, Py_ssize_t *value, const char *name)
{
    *value = PyNumber_AsSsize_t(obj, PyExc_OverflowError);
    if (*value == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s must be an integer", name);
        }
        return -1;
    }
    return 0;
}

/* The work buffers of one call: valid (n_valid), stats (n_stats), buf and ordered (n_win each). */
static double *
alloc_work(Py_ssize_t n_valid, Py_ssize_t n_stats, Py_ssize_t n_win)
{
    const Py_ssize_t total = n_valid + n_stats + 2 * n_win;
    if (total > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(double)) {
        PyErr_NoMemory();
        return NULL;
    }
    double *work = PyMem_Malloc((size_t)total * sizeof(double));
    if (work == NULL)
        PyErr_NoMemory();
    return work;
}

PyDoc_STRVAR(bands_at_doc,
"bands_at($module, x, window, first, sigma, out, /)\n--\n\n"
"Rows MM, TMA, TMA - sigma*TMSD, TMA + sigma*TMSD, TMSD per sample of x (NaN: a missing run)\n"
"written into out, a C-contiguous float64 array of shape (5, len(x)); each from the valid runs\n"
"before the sample: bands.rolling_bands in one call. window >= 1, first >= 1 (the shortest\n"
"history judged); numpy's sums for window <= 128.");

static PyObject *
bands_at(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer xv, ov;
    Py_ssize_t window, first, n, n_win;
    double sigma, *work;
    (void)self;
    if (nargs != 5) {
        PyErr_Format(PyExc_TypeError, "bands_at() takes 5 arguments (x, window, first, sigma, out), got %zd",
                     nargs);
        return NULL;
    }
    if (get_ssize(args[1], &window, "window") < 0 || get_ssize(args[2], &first, "first") < 0)
        return NULL;
    sigma = PyFloat_AsDouble(args[3]);
    if (sigma == -1.0 && PyErr_Occurred())
        return NULL;
    if (window < 1 || first < 1) {
        PyErr_Format(PyExc_ValueError, "window and first must be >= 1 (got %zd, %zd)", window, first);
        return NULL;
    }
    if (get_float64(args[0], &xv, 0, "x") < 0)
        return NULL;
    if ((n = length_1d(&xv, "x")) < 0) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    if (get_float64(args[4], &ov, 1, "out") < 0) {
        PyBuffer_Release(&xv);
        return NULL;
    }
    if (check_shape_2d(&ov, 5, n, "out") < 0)
        goto fail;
    if (overlap(&xv, &ov)) {
        PyErr_SetString(PyExc_ValueError, "out must not share memory with x");
        goto fail;
    }
    n_win = window < n ? window : (n > 1 ? n : 1);
    work = alloc_work(n, 3 * (n + 1), n_win);
    if (work == NULL)
        goto fail;
    Py_BEGIN_ALLOW_THREADS
    bands_at_impl((const double *)xv.buf, n, window, first, sigma, (double *)ov.buf,
                  work, work + n, work + n + 3 * (n + 1), work + n + 3 * (n + 1) + n_win);
    Py_END_ALLOW_THREADS
    PyMem_Free(work);
    PyBuffer_Release(&ov);
    PyBuffer_Release(&xv);
    Py_RETURN_NONE;
fail:
    PyBuffer_Release(&ov);
    PyBuffer_Release(&xv);
    return NULL;
}

PyDoc_STRVAR(rolling_stats_doc,
"rolling_stats($module, valid, window, first, stop, stats, /)\n--\n\n"
"MM, TMA, TMSD by history length h written into stats, a C-contiguous float64 array of shape\n"
"(3, len(valid) + 1): the full windows valid[h - window : h] for h >= window, the prefixes\n"
"valid[:h] for h in [first, stop); NaN elsewhere. window >= 1; if first < stop, first >= 1 and\n"
"stop <= min(window, len(valid)) + 1. numpy's sums for window <= 128.");

static PyObject *
rolling_stats(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer vv, sv;
    Py_ssize_t window, first, stop, m, n_win;
    double *work;
    (void)self;
    if (nargs != 5) {
        PyErr_Format(PyExc_TypeError,
                     "rolling_stats() takes 5 arguments (valid, window, first, stop, stats), got %zd", nargs);
        return NULL;
    }
    if (get_ssize(args[1], &window, "window") < 0 || get_ssize(args[2], &first, "first") < 0
        || get_ssize(args[3], &stop, "stop") < 0)
        return NULL;
    if (get_float64(args[0], &vv, 0, "valid") < 0)
        return NULL;
    if ((m = length_1d(&vv, "valid")) < 0) {
        PyBuffer_Release(&vv);
        return NULL;
    }
    if (get_float64(args[4], &sv, 1, "stats") < 0) {
        PyBuffer_Release(&vv);
        return NULL;
    }
    if (check_shape_2d(&sv, 3, m + 1, "stats") < 0)
        goto fail;
    if (overlap(&vv, &sv)) {
        PyErr_SetString(PyExc_ValueError, "stats must not share memory with valid");
        goto fail;
    }
    n_win = window < m ? window : (m > 1 ? m : 1);
    if (window < 1 || (first < stop && (first < 1 || stop > n_win + 1 || stop > m + 1))) {
        PyErr_Format(PyExc_ValueError,
                     "need window >= 1 and, for prefixes, 1 <= first and stop <= min(window, len(valid)) + 1 "
                     "(got window %zd, first %zd, stop %zd, len(valid) %zd)", window, first, stop, m);
        goto fail;
    }
    work = alloc_work(0, 0, n_win);
    if (work == NULL)
        goto fail;
    Py_BEGIN_ALLOW_THREADS
    rolling_stats_impl((const double *)vv.buf, m, window, first, stop, (double *)sv.buf, work, work + n_win);
    Py_END_ALLOW_THREADS
    PyMem_Free(work);
    PyBuffer_Release(&sv);
    PyBuffer_Release(&vv);
    Py_RETURN_NONE;
fail:
    PyBuffer_Release(&sv);
    PyBuffer_Release(&vv);
    return NULL;
}

static PyMethodDef methods[] = {
    {"bands_at", (PyCFunction)(void (*)(void))bands_at, METH_FASTCALL, bands_at_doc},
    {"rolling_stats", (PyCFunction)(void (*)(void))rolling_stats, METH_FASTCALL, rolling_stats_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(module_doc,
"The MM / TMA / TMSD statistics of pal.analysis.bands, compiled (C, built at install).\n\n"
"One loop per window into buffers allocated once per series, each window's sorted values the\n"
"previous window's with one value out and one in; numpy's linear quantile and pairwise sums\n"
"written out, so the bands are the NumPy form's bit for bit.");

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "bands_kernel", module_doc, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit_bands_kernel(void)
{
    return PyModule_Create(&module);
}
