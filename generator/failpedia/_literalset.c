/* Find every occurrence of many long literals in a block of bytes, sampling the block.
 *
 * When every literal is at least `shortest` bytes long, an occurrence always covers a
 * whole 8-byte window that starts at a multiple of stride = shortest - 7: the stride
 * consecutive starts S .. S + stride - 1 hold exactly one multiple p of it, and
 * p + 8 <= S + shortest. So the block is looked at only every stride bytes: the window
 * there is hashed and tested against a bitmap of every literal's windows at offsets
 * 0 .. stride - 1; a window that passes is looked up in a hash table that names the
 * literal and offset it came from, and the literal is compared in full. Each occurrence
 * is found exactly once, at its one sampled window.
 *
 * For thousands of literals some tens of bytes long this reads a block about twice as
 * fast as Hyperscan's literal matcher on the benchmark machine, because it looks at one
 * position in twenty or more instead of every byte. Short literals make the stride short
 * and the advantage goes: matcher.py uses it only for long ones.
 *
 * tests/test_literalset.py compares it with bytes.find on generated literals and blocks.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define WINDOW 8
#define MAX_STRIDE 64 /* a longer stride finds the same; it only grows the tables */
#define EMPTY UINT32_MAX

typedef struct {
    uint64_t window;
    uint32_t literal; /* EMPTY: a free place */
    uint32_t offset;  /* where the window starts in the literal */
} Place;

typedef struct {
    PyObject_HEAD
    Py_ssize_t stride;
    Py_ssize_t count;
    unsigned bits;         /* the bitmap holds 2**bits bits */
    uint64_t *bitmap;      /* two bits set per window */
    Place *table;          /* open addressing, at most half full */
    uint64_t table_mask;
    unsigned char *text;   /* the literals, one after another */
    Py_ssize_t *starts;    /* where each literal starts in text */
    Py_ssize_t *lengths;
    PyObject **ids;        /* what find reports for each literal */
} LiteralSet;

static inline uint64_t
load_window(const unsigned char *p)
{
    uint64_t value;
    memcpy(&value, p, WINDOW);
    return value;
}

static inline uint64_t
mix(uint64_t window)
{
    return window * 0x9E3779B97F4A7C15ull;
}

/* The two bitmap positions of a window's hash: its top bits and the bits below them. */
static inline uint64_t
first_bit(uint64_t hash, unsigned bits)
{
    return hash >> (64 - bits);
}

static inline uint64_t
second_bit(uint64_t hash, unsigned bits)
{
    return (hash >> (64 - 2 * bits)) & ((UINT64_C(1) << bits) - 1);
}

static inline uint64_t
table_start(uint64_t hash, uint64_t mask)
{
    return (hash ^ (hash >> 31)) & mask;
}

static inline int
bit_is_set(const uint64_t *bitmap, uint64_t bit)
{
    return (bitmap[bit >> 6] >> (bit & 63)) & 1;
}

static void
literalset_dealloc(LiteralSet *self)
{
    PyMem_Free(self->bitmap);
    PyMem_Free(self->table);
    PyMem_Free(self->text);
    PyMem_Free(self->starts);
    PyMem_Free(self->lengths);
    if (self->ids) {
        for (Py_ssize_t i = 0; i < self->count; i++)
            Py_XDECREF(self->ids[i]);
        PyMem_Free(self->ids);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Read the (bytes, id) pairs into self: text, starts, lengths, ids; the shortest length. */
static int
read_literals(LiteralSet *self, PyObject *items, Py_ssize_t *shortest)
{
    Py_ssize_t count = PySequence_Fast_GET_SIZE(items), total = 0;
    PyObject **pairs = PySequence_Fast_ITEMS(items);
    if (count >= (Py_ssize_t)EMPTY) {
        PyErr_SetString(PyExc_ValueError, "LiteralSet: too many literals");
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *pair = pairs[i];
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2
                || !PyBytes_Check(PyTuple_GET_ITEM(pair, 0))) {
            PyErr_SetString(PyExc_TypeError, "LiteralSet takes (bytes, id) pairs");
            return -1;
        }
        Py_ssize_t length = PyBytes_GET_SIZE(PyTuple_GET_ITEM(pair, 0));
        if (length < WINDOW) {
            PyErr_Format(PyExc_ValueError, "LiteralSet: literal %zd is shorter than %d bytes",
                         i, WINDOW);
            return -1;
        }
        total += length;
        *shortest = i == 0 || length < *shortest ? length : *shortest;
    }
    self->text = PyMem_Malloc(total ? total : 1);
    self->starts = PyMem_Calloc(count ? count : 1, sizeof(Py_ssize_t));
    self->lengths = PyMem_Calloc(count ? count : 1, sizeof(Py_ssize_t));
    self->ids = PyMem_Calloc(count ? count : 1, sizeof(PyObject *));
    if (!self->text || !self->starts || !self->lengths || !self->ids) {
        PyErr_NoMemory();
        return -1;
    }
    self->count = count;
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *literal = PyTuple_GET_ITEM(pairs[i], 0);
        Py_ssize_t length = PyBytes_GET_SIZE(literal);
        memcpy(self->text + at, PyBytes_AS_STRING(literal), length);
        self->starts[i] = at;
        self->lengths[i] = length;
        self->ids[i] = Py_NewRef(PyTuple_GET_ITEM(pairs[i], 1));
        at += length;
    }
    return 0;
}

static int
literalset_init(LiteralSet *self, PyObject *args, PyObject *kwargs)
{
    PyObject *literals;
    static char *keywords[] = {"literals", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:LiteralSet", keywords, &literals))
        return -1;
    if (self->text) {
        PyErr_SetString(PyExc_TypeError, "LiteralSet is initialised once");
        return -1;
    }
    PyObject *items = PySequence_Fast(literals, "LiteralSet takes a sequence of pairs");
    if (!items)
        return -1;
    Py_ssize_t shortest = WINDOW;
    int failed = read_literals(self, items, &shortest);
    Py_DECREF(items);
    if (failed)
        return -1;

    Py_ssize_t stride = shortest - WINDOW + 1;
    self->stride = stride < MAX_STRIDE ? stride : MAX_STRIDE;
    uint64_t windows = (uint64_t)self->count * (uint64_t)self->stride;
    /* About 64 bitmap bits per window, two set: one window in ~1,000 passes by chance
     * (fewer bits leave more to the table, which is slower to look in than the bitmap is). */
    unsigned bits = 10;
    while (bits < 24 && (UINT64_C(1) << bits) < 64 * windows)
        bits++;
    self->bits = bits;
    uint64_t table_size = 2;
    while (table_size < 2 * windows)
        table_size <<= 1;
    self->table_mask = table_size - 1;
    self->bitmap = PyMem_Calloc((UINT64_C(1) << bits) / 64, sizeof(uint64_t));
    self->table = PyMem_Malloc(table_size * sizeof(Place));
    if (!self->bitmap || !self->table) {
        PyErr_NoMemory();
        return -1;
    }
    for (uint64_t i = 0; i < table_size; i++)
        self->table[i].literal = EMPTY;
    for (Py_ssize_t literal = 0; literal < self->count; literal++) {
        for (Py_ssize_t offset = 0; offset < self->stride; offset++) {
            uint64_t window = load_window(self->text + self->starts[literal] + offset);
            uint64_t hash = mix(window), first = first_bit(hash, bits);
            uint64_t second = second_bit(hash, bits);
            self->bitmap[first >> 6] |= UINT64_C(1) << (first & 63);
            self->bitmap[second >> 6] |= UINT64_C(1) << (second & 63);
            uint64_t place = table_start(hash, self->table_mask);
            while (self->table[place].literal != EMPTY)
                place = (place + 1) & self->table_mask;
            self->table[place] = (Place){window, (uint32_t)literal, (uint32_t)offset};
        }
    }
    return 0;
}

typedef struct {
    Py_ssize_t end; /* the position of the occurrence's last byte */
    uint32_t literal;
} Occurrence;

/* Every occurrence in data[0:size], at most limit + 1 of them (limit < 0: no limit).
 * Returns how many; *found is a PyMem buffer the caller frees, or NULL out of memory. */
static Py_ssize_t
find_occurrences(const LiteralSet *self, const unsigned char *data, Py_ssize_t size,
                 Py_ssize_t limit, Occurrence **found)
{
    Py_ssize_t count = 0, capacity = 64;
    Occurrence *result = PyMem_RawMalloc(capacity * sizeof(Occurrence));
    if (!result) {
        *found = NULL;
        return 0;
    }
    const unsigned bits = self->bits;
    const uint64_t *bitmap = self->bitmap;
    for (Py_ssize_t p = 0; p + WINDOW <= size; p += self->stride) {
        uint64_t window = load_window(data + p), hash = mix(window);
        if (!bit_is_set(bitmap, first_bit(hash, bits))
                || !bit_is_set(bitmap, second_bit(hash, bits)))
            continue;
        for (uint64_t place = table_start(hash, self->table_mask);
             self->table[place].literal != EMPTY; place = (place + 1) & self->table_mask) {
            const Place *entry = &self->table[place];
            if (entry->window != window)
                continue;
            Py_ssize_t start = p - (Py_ssize_t)entry->offset;
            Py_ssize_t length = self->lengths[entry->literal];
            if (start < 0 || start + length > size
                    || memcmp(data + start, self->text + self->starts[entry->literal],
                              (size_t)length) != 0)
                continue;
            if (count == capacity) {
                Occurrence *grown = PyMem_RawRealloc(result, 2 * capacity * sizeof(Occurrence));
                if (!grown) {
                    PyMem_RawFree(result);
                    *found = NULL;
                    return 0;
                }
                result = grown;
                capacity *= 2;
            }
            result[count++] = (Occurrence){start + length - 1, entry->literal};
            if (limit >= 0 && count > limit) {
                *found = result;
                return count;
            }
        }
    }
    *found = result;
    return count;
}

PyDoc_STRVAR(find_doc,
"find(data, limit=-1) -> list[tuple[int, id]] | None\n\n"
"Every occurrence of a literal in data (a bytes-like object), as (position of its last\n"
"byte, the literal's id) pairs, in the order their sampled windows lie in data; None as\n"
"soon as more than limit are found (limit < 0: no limit). Releases the GIL while it\n"
"reads.");

static PyObject *
literalset_find(LiteralSet *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "find(data, limit=-1) takes one or two arguments");
        return NULL;
    }
    Py_ssize_t limit = -1;
    if (nargs == 2) {
        limit = PyLong_AsSsize_t(args[1]);
        if (limit == -1 && PyErr_Occurred())
            return NULL;
    }
    if (!self->table) {
        PyErr_SetString(PyExc_TypeError, "LiteralSet was not initialised");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Occurrence *found;
    Py_ssize_t count;
    Py_BEGIN_ALLOW_THREADS
    count = find_occurrences(self, view.buf, view.len, limit, &found);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (!found)
        return PyErr_NoMemory();
    if (limit >= 0 && count > limit) {
        PyMem_RawFree(found);
        Py_RETURN_NONE;
    }
    PyObject *result = PyList_New(count);
    for (Py_ssize_t i = 0; result && i < count; i++) {
        PyObject *pair = Py_BuildValue("(nO)", found[i].end, self->ids[found[i].literal]);
        if (!pair) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, i, pair);
    }
    PyMem_RawFree(found);
    return result;
}

static PyObject *
literalset_stride(LiteralSet *self, void *closure)
{
    return PyLong_FromSsize_t(self->stride);
}

static PyMethodDef literalset_methods[] = {
    {"find", (PyCFunction)(void (*)(void))literalset_find, METH_FASTCALL, find_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef literalset_getset[] = {
    {"stride", (getter)literalset_stride, NULL,
     "How many bytes apart the sampled windows are.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(literalset_doc,
"LiteralSet(literals)\n\n"
"Literals to find in blocks of bytes: a sequence of (bytes, id) pairs, each literal at\n"
"least 8 bytes long. The same literal may come with several ids; find reports each.");

static PyTypeObject LiteralSetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "failpedia._literalset.LiteralSet",
    .tp_basicsize = sizeof(LiteralSet),
    .tp_dealloc = (destructor)literalset_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = literalset_doc,
    .tp_methods = literalset_methods,
    .tp_getset = literalset_getset,
    .tp_init = (initproc)literalset_init,
    .tp_new = PyType_GenericNew,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_literalset",
    "Finding many long literals in blocks of bytes by sampling them, without the GIL.",
    -1, NULL,
};

PyMODINIT_FUNC
PyInit__literalset(void)
{
    if (PyType_Ready(&LiteralSetType) < 0)
        return NULL;
    PyObject *created = PyModule_Create(&module);
    if (!created)
        return NULL;
    if (PyModule_AddObjectRef(created, "LiteralSet", (PyObject *)&LiteralSetType) < 0) {
        Py_DECREF(created);
        return NULL;
    }
    return created;
}
