/* The pass `failpedia diagnose` makes over every byte of a log before scanning it, in C.
 *
 * Removing ANSI escape sequences and counting newlines are done together, in one pass
 * over the block (64 bytes at a time where the CPU has AVX2, else 16 where SSE2 is
 * available), because reading the block again costs about as much as the work. In
 * Python they cost more than the whole scan for signatures. The functions release the
 * GIL while they run, so several threads prepare blocks at once.
 *
 * strip_and_count must remove exactly what signatures.line_rules.ANSI matches, scanned left to right
 * the way re.sub does:
 *
 *     \x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)|[@-Z\\-_])
 *
 * tests/test_logbytes.py checks the two against each other on generated input.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define AVX2_PATH 1
static int has_avx2; /* set once the module is loaded: the CPU's, not the compiler's */
#endif

#define ESC 0x1B

/* Length of the escape sequence that starts at p (which holds ESC), or 0 if the regex
 * would not match there. Each alternative is deterministic: its character classes are
 * disjoint from what follows them, so backtracking never finds a different match. */
static Py_ssize_t
sequence_length(const unsigned char *p, const unsigned char *end)
{
    if (p + 1 >= end)
        return 0;
    unsigned char kind = p[1];
    const unsigned char *q = p + 2;
    if (kind == '[') { /* CSI: parameters, intermediates, one final byte */
        while (q < end && *q >= 0x30 && *q <= 0x3F)
            q++;
        while (q < end && *q >= 0x20 && *q <= 0x2F)
            q++;
        if (q < end && *q >= 0x40 && *q <= 0x7E)
            return q + 1 - p;
        return 0; /* '[' is not in the one-character class below */
    }
    if (kind == ']') { /* OSC: text up to BEL or ESC backslash */
        while (q < end && *q != 0x07 && *q != ESC && *q != '\n')
            q++;
        if (q < end && *q == 0x07)
            return q + 1 - p;
        if (q + 1 < end && q[0] == ESC && q[1] == '\\')
            return q + 2 - p;
        return 2; /* unterminated: ']' is in the one-character class */
    }
    if ((kind >= 0x40 && kind <= 0x5A) || (kind >= 0x5C && kind <= 0x5F))
        return 2;
    return 0;
}

#if defined(AVX2_PATH)
/* The plain run that scan_to_escape starts with, 64 bytes at a time: up to the 64 bytes
 * that hold an ESC, or fewer than 64 left, which scan_to_escape then goes through. */
__attribute__((target("avx2"))) static const unsigned char *
plain_run_avx2(const unsigned char *p, const unsigned char *end, unsigned char **out,
               Py_ssize_t *count)
{
    const __m256i line_end = _mm256_set1_epi8('\n'), escape = _mm256_set1_epi8(ESC);
    const __m256i zero = _mm256_setzero_si256();
    unsigned char *w = out ? *out : NULL;
    Py_ssize_t total = 0;
    int found = 0;
    while (!found && end - p >= 64) {
        /* Per-byte counters, two added per round: summed before one can overflow. */
        __m256i counters = zero;
        for (int round = 0; round < 127 && end - p >= 64; round++) {
            __m256i low = _mm256_loadu_si256((const __m256i *)p);
            __m256i high = _mm256_loadu_si256((const __m256i *)(p + 32));
            __m256i escapes = _mm256_or_si256(_mm256_cmpeq_epi8(low, escape),
                                              _mm256_cmpeq_epi8(high, escape));
            if (_mm256_movemask_epi8(escapes)) {
                found = 1;
                break;
            }
            counters = _mm256_sub_epi8(counters, _mm256_cmpeq_epi8(low, line_end));
            counters = _mm256_sub_epi8(counters, _mm256_cmpeq_epi8(high, line_end));
            if (w) {
                _mm256_storeu_si256((__m256i *)w, low);
                _mm256_storeu_si256((__m256i *)(w + 32), high);
                w += 64;
            }
            p += 64;
        }
        __m256i sums = _mm256_sad_epu8(counters, zero);
        total += _mm256_extract_epi64(sums, 0) + _mm256_extract_epi64(sums, 1)
                 + _mm256_extract_epi64(sums, 2) + _mm256_extract_epi64(sums, 3);
    }
    if (out)
        *out = w;
    *count += total;
    return p;
}
#endif

/* Count the '\n' bytes from p up to the first ESC (or end), adding them to *newlines,
 * and return where the ESC is (or end). With out != NULL, copy those bytes to *out and
 * advance it. */
static const unsigned char *
scan_to_escape(const unsigned char *p, const unsigned char *end, unsigned char **out,
               Py_ssize_t *newlines)
{
    Py_ssize_t count = 0;
#if defined(AVX2_PATH)
    if (has_avx2)
        p = plain_run_avx2(p, end, out, &count);
#endif
    unsigned char *w = out ? *out : NULL;
#if defined(__SSE2__)
    const __m128i line_end = _mm_set1_epi8('\n'), escape = _mm_set1_epi8(ESC);
    const __m128i zero = _mm_setzero_si128();
    int found = 0;
    while (!found && end - p >= 16) {
        /* Per-byte counters, summed before one can overflow (255 rounds). */
        __m128i counters = zero;
        for (int round = 0; round < 255 && end - p >= 16; round++) {
            __m128i chunk = _mm_loadu_si128((const __m128i *)p);
            if (_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, escape))) {
                found = 1;
                break;
            }
            counters = _mm_sub_epi8(counters, _mm_cmpeq_epi8(chunk, line_end));
            if (w) {
                _mm_storeu_si128((__m128i *)w, chunk);
                w += 16;
            }
            p += 16;
        }
        __m128i sums = _mm_sad_epu8(counters, zero);
        count += _mm_cvtsi128_si32(sums) + _mm_extract_epi16(sums, 4);
    }
#endif
    while (p < end && *p != ESC) {
        count += *p == '\n';
        if (w)
            *w++ = *p;
        p++;
    }
    if (out)
        *out = w;
    *newlines += count;
    return p;
}

PyDoc_STRVAR(strip_and_count_doc,
"strip_and_count(data, out) -> (int, int)\n\n"
"Write data without its ANSI escape sequences into out (a writable buffer at least as\n"
"long as data, or data itself) and return the length written, with the number of\n"
"b'\\n' bytes. The length is -1, and nothing is written, when data holds no ESC byte\n"
"at all. Escape sequences never hold a b'\\n', so data and its stripped copy count the\n"
"same. The caller owns and reuses out: a fresh buffer per block would cost a page fault\n"
"per 4 KiB.");

static PyObject *
strip_and_count(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "strip_and_count(data, out) takes two arguments");
        return NULL;
    }
    Py_buffer view, target;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (PyObject_GetBuffer(args[1], &target, PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    if (target.len < view.len) {
        PyBuffer_Release(&view);
        PyBuffer_Release(&target);
        PyErr_SetString(PyExc_ValueError, "strip_and_count: out is shorter than data");
        return NULL;
    }
    const unsigned char *data = view.buf, *end = data + view.len;
    Py_ssize_t written = -1, newlines = 0;
    Py_BEGIN_ALLOW_THREADS
    const unsigned char *p = scan_to_escape(data, end, NULL, &newlines);
    if (p < end) {
        unsigned char *w = target.buf;
        if (w != data) /* out may be data itself: writing never overtakes reading */
            memmove(w, data, (size_t)(p - data));
        w += p - data;
        while (p < end) { /* p holds ESC */
            Py_ssize_t length = sequence_length(p, end);
            if (length == 0) {
                *w++ = ESC;
                p++;
            }
            else {
                p += length;
            }
            p = scan_to_escape(p, end, &w, &newlines);
        }
        written = w - (unsigned char *)target.buf;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    PyBuffer_Release(&target);
    return Py_BuildValue("(nn)", written, newlines);
}

PyDoc_STRVAR(count_newlines_doc,
"count_newlines(data) -> int\n\n"
"How many b'\\n' bytes data holds (what bytes.count(b'\\n') returns, several times faster).");

static PyObject *
count_newlines(PyObject *module, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *data = view.buf;
    Py_ssize_t size = view.len, count = 0;
    Py_BEGIN_ALLOW_THREADS
    /* Chunks small enough that an 8-bit counter per lane cannot overflow, so the
     * compiler can vectorise the inner loop. */
    Py_ssize_t position = 0;
    while (position < size) {
        Py_ssize_t stop = size - position < 255 ? size : position + 255;
        unsigned char lanes = 0;
        for (Py_ssize_t i = position; i < stop; i++)
            lanes += data[i] == '\n';
        count += lanes;
        position = stop;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(count);
}

PyDoc_STRVAR(use_avx2_doc,
"use_avx2(enabled) -> bool\n\n"
"Whether the 64-byte AVX2 loop is used from now on: enabled where the CPU has AVX2, else\n"
"never. The results are the same either way; the tests run both loops on one machine.");

static PyObject *
use_avx2(PyObject *module, PyObject *arg)
{
    int enabled = PyObject_IsTrue(arg);
    if (enabled < 0)
        return NULL;
#if defined(AVX2_PATH)
    has_avx2 = enabled && __builtin_cpu_supports("avx2");
    return PyBool_FromLong(has_avx2);
#else
    Py_RETURN_FALSE;
#endif
}

static PyMethodDef methods[] = {
    {"strip_and_count", (PyCFunction)(void (*)(void))strip_and_count, METH_FASTCALL,
     strip_and_count_doc},
    {"count_newlines", count_newlines, METH_O, count_newlines_doc},
    {"use_avx2", use_avx2, METH_O, use_avx2_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_logbytes",
    "Removing ANSI escapes and counting newlines in log blocks, without the GIL.",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__logbytes(void)
{
#if defined(AVX2_PATH)
    has_avx2 = __builtin_cpu_supports("avx2");
#endif
    return PyModule_Create(&module);
}
