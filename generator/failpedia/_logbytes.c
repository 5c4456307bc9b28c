/* The two passes `failpedia diagnose` makes over every byte of a log, in C.
 *
 * Removing ANSI escape sequences and counting newlines are each a full pass over the
 * data; in Python they cost more than the Hyperscan scan itself. Both functions release
 * the GIL while they run, so a reader thread can prepare the next block while the main
 * thread scans the current one.
 *
 * strip_ansi must remove exactly what logline.ANSI matches, scanned left to right the way
 * re.sub does:
 *
 *     \x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)|[@-Z\\-_])
 *
 * tests/test_logbytes.py checks the two against each other on generated input.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

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

/* Copy data[0:size] to out without escape sequences; returns the bytes written. */
static Py_ssize_t
strip_into(const unsigned char *data, Py_ssize_t size, unsigned char *out)
{
    const unsigned char *p = data, *end = data + size;
    unsigned char *w = out;
    while (p < end) {
        const unsigned char *esc = memchr(p, ESC, (size_t)(end - p));
        if (esc == NULL) {
            memcpy(w, p, (size_t)(end - p));
            w += end - p;
            break;
        }
        memcpy(w, p, (size_t)(esc - p));
        w += esc - p;
        Py_ssize_t length = sequence_length(esc, end);
        if (length == 0) {
            *w++ = ESC;
            p = esc + 1;
        }
        else {
            p = esc + length;
        }
    }
    return w - out;
}

PyDoc_STRVAR(strip_ansi_doc,
"strip_ansi(data, out) -> int\n\n"
"Write data without its ANSI escape sequences into out (a writable buffer at least as\n"
"long as data) and return the length written; return -1, writing nothing, when data\n"
"holds no ESC byte at all. The caller owns and reuses out: a fresh buffer per block\n"
"would cost a page fault per 4 KiB.");

static PyObject *
strip_ansi(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "strip_ansi(data, out) takes two arguments");
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
        PyErr_SetString(PyExc_ValueError, "strip_ansi: out is shorter than data");
        return NULL;
    }
    const unsigned char *data = view.buf;
    unsigned char *out = target.buf;
    Py_ssize_t written = -1;
    Py_BEGIN_ALLOW_THREADS
    const unsigned char *first = memchr(data, ESC, (size_t)view.len);
    if (first != NULL) {
        Py_ssize_t prefix = first - data;
        memcpy(out, data, (size_t)prefix);
        written = prefix + strip_into(first, view.len - prefix, out + prefix);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    PyBuffer_Release(&target);
    return PyLong_FromSsize_t(written);
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

static PyMethodDef methods[] = {
    {"strip_ansi", (PyCFunction)(void (*)(void))strip_ansi, METH_FASTCALL, strip_ansi_doc},
    {"count_newlines", count_newlines, METH_O, count_newlines_doc},
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
    return PyModule_Create(&module);
}
