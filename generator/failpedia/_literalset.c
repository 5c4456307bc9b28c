/* Find every occurrence of many long literals in a block of bytes, sampling the block.
 *
 * The block is looked at only every `stride` bytes: the 8-byte window there is hashed
 * and tested against a bitmap of the literals' windows; a window that passes is looked
 * up in a hash table that names the literals (and offsets) it came from, and each of
 * them is compared in full.
 *
 * Why that finds every occurrence: each literal contributes the `stride` windows that
 * start at offsets first .. first + stride - 1 in it (first + stride + 7 <= its length).
 * An occurrence starting at S holds the positions S + first .. S + first + stride - 1,
 * exactly one of which is a multiple of stride: the window sampled there is one of the
 * literal's, inside the occurrence. So each occurrence is found exactly once. The stride
 * is at most the shortest literal's length - 7.
 *
 * `first` is chosen per literal where the literal is longer than it must be: at the run
 * of windows that the fewest other literals share (literals that start alike, "CUDA
 * error: ...", then do not all land on the same windows, each of which would have to be
 * compared wherever the log holds it). The choices can be read back (`firsts`) and given
 * again, which skips choosing; `max_shared` tells how crowded the busiest window is.
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
/* A shorter stride than the longest possible finds the same, so the tables are kept to
 * at most MAX_WINDOWS windows (about 40 MiB in all) by shortening it for huge sets. */
#define MAX_STRIDE 64
#define MAX_WINDOWS (1 << 20)
/* Choosing first counts every window of every literal; past this many it stays 0. */
#define MAX_COUNTED (1 << 22)

/* One distinct window value and where its (literal, offset) pairs lie in `samples`. */
typedef struct {
    uint64_t window;
    uint32_t start;
    uint32_t count; /* 0: a free place */
} Place;

typedef struct {
    uint32_t literal;
    uint32_t offset; /* where the window starts in the literal */
} Sample;

typedef struct {
    PyObject_HEAD
    Py_ssize_t stride;
    Py_ssize_t count;
    Py_ssize_t max_shared; /* the most samples one window value has */
    unsigned bits;         /* the bitmap holds 2**bits bits */
    uint64_t *bitmap;      /* two bits set per window */
    Place *table;          /* open addressing, at most half full */
    uint64_t table_mask;
    Sample *samples;       /* grouped by window value */
    unsigned char *text;   /* the literals, one after another */
    Py_ssize_t *starts;    /* where each literal starts in text */
    Py_ssize_t *lengths;
    Py_ssize_t *firsts;    /* the offset of each literal's first sampled window */
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

/* The place of `window` in an open-addressing table of 2**k places: where it is, or the
 * free place where it goes. The table is never full. */
static inline Place *
place_of(Place *table, uint64_t mask, uint64_t window)
{
    uint64_t place = table_start(mix(window), mask);
    while (table[place].count != 0 && table[place].window != window)
        place = (place + 1) & mask;
    return &table[place];
}

static uint64_t
table_size_for(uint64_t entries)
{
    uint64_t size = 2;
    while (size < 2 * entries)
        size <<= 1;
    return size;
}

static void
literalset_dealloc(LiteralSet *self)
{
    PyMem_Free(self->bitmap);
    PyMem_Free(self->table);
    PyMem_Free(self->samples);
    PyMem_Free(self->text);
    PyMem_Free(self->starts);
    PyMem_Free(self->lengths);
    PyMem_Free(self->firsts);
    if (self->ids) {
        for (Py_ssize_t i = 0; i < self->count; i++)
            Py_XDECREF(self->ids[i]);
        PyMem_Free(self->ids);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Read the (bytes, id[, first]) items into self; firsts[i] is -1 where not given. */
static int
read_literals(LiteralSet *self, PyObject *items)
{
    Py_ssize_t count = PySequence_Fast_GET_SIZE(items), total = 0;
    PyObject **item = PySequence_Fast_ITEMS(items);
    if (count >= (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "LiteralSet: too many literals");
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *entry = item[i];
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) < 2 || PyTuple_GET_SIZE(entry) > 3
                || !PyBytes_Check(PyTuple_GET_ITEM(entry, 0))) {
            PyErr_SetString(PyExc_TypeError, "LiteralSet takes (bytes, id[, first]) tuples");
            return -1;
        }
        Py_ssize_t length = PyBytes_GET_SIZE(PyTuple_GET_ITEM(entry, 0));
        if (length < WINDOW) {
            PyErr_Format(PyExc_ValueError, "LiteralSet: literal %zd is shorter than %d bytes",
                         i, WINDOW);
            return -1;
        }
        total += length;
    }
    self->text = PyMem_Malloc(total ? total : 1);
    self->starts = PyMem_Calloc(count ? count : 1, sizeof(Py_ssize_t));
    self->lengths = PyMem_Calloc(count ? count : 1, sizeof(Py_ssize_t));
    self->firsts = PyMem_Calloc(count ? count : 1, sizeof(Py_ssize_t));
    self->ids = PyMem_Calloc(count ? count : 1, sizeof(PyObject *));
    if (!self->text || !self->starts || !self->lengths || !self->firsts || !self->ids) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *literal = PyTuple_GET_ITEM(item[i], 0);
        Py_ssize_t length = PyBytes_GET_SIZE(literal), first = -1;
        if (PyTuple_GET_SIZE(item[i]) == 3) {
            first = PyLong_AsSsize_t(PyTuple_GET_ITEM(item[i], 2));
            if (first == -1 && PyErr_Occurred())
                return -1;
            if (first < 0 || first + WINDOW > length) {
                PyErr_Format(PyExc_ValueError, "LiteralSet: literal %zd has no window at %zd",
                             i, first);
                return -1;
            }
        }
        memcpy(self->text + at, PyBytes_AS_STRING(literal), length);
        self->starts[i] = at;
        self->lengths[i] = length;
        self->firsts[i] = first;
        self->ids[i] = Py_NewRef(PyTuple_GET_ITEM(item[i], 1));
        self->count = i + 1;
        at += length;
    }
    return 0;
}

/* The stride: every literal must hold `stride` windows from its first (0 where it is
 * still to be chosen), within the caps. */
static Py_ssize_t
choose_stride(const LiteralSet *self)
{
    Py_ssize_t stride = MAX_STRIDE;
    for (Py_ssize_t i = 0; i < self->count; i++) {
        Py_ssize_t room = self->lengths[i] - (self->firsts[i] < 0 ? 0 : self->firsts[i])
                          - WINDOW + 1;
        if (room < stride)
            stride = room;
    }
    if (self->count > 0 && stride > MAX_WINDOWS / self->count)
        stride = MAX_WINDOWS / self->count;
    return stride > 1 ? stride : 1;
}

/* For each literal whose first is not given: the run of `stride` windows whose values
 * the literals share least (summed over all their windows), earliest on a tie. */
static int
choose_firsts(LiteralSet *self)
{
    uint64_t total = 0;
    int needed = 0;
    for (Py_ssize_t i = 0; i < self->count; i++) {
        total += (uint64_t)(self->lengths[i] - WINDOW + 1);
        needed |= self->firsts[i] < 0;
    }
    if (!needed)
        return 0;
    Place *counts = NULL;
    uint64_t mask = 0;
    if (total <= MAX_COUNTED) {
        uint64_t size = table_size_for(total);
        counts = PyMem_Calloc(size, sizeof(Place));
        if (!counts) {
            PyErr_NoMemory();
            return -1;
        }
        mask = size - 1;
        for (Py_ssize_t i = 0; i < self->count; i++) {
            const unsigned char *literal = self->text + self->starts[i];
            for (Py_ssize_t offset = 0; offset + WINDOW <= self->lengths[i]; offset++) {
                uint64_t window = load_window(literal + offset);
                Place *place = place_of(counts, mask, window);
                place->window = window;
                place->count++;
            }
        }
    }
    for (Py_ssize_t i = 0; i < self->count; i++) {
        if (self->firsts[i] >= 0)
            continue;
        self->firsts[i] = 0;
        Py_ssize_t last = self->lengths[i] - WINDOW - self->stride + 1; /* the latest first */
        if (!counts || last <= 0)
            continue;
        const unsigned char *literal = self->text + self->starts[i];
        uint64_t sum = 0, best = 0;
        for (Py_ssize_t offset = 0; offset < self->stride + last; offset++) {
            sum += place_of(counts, mask, load_window(literal + offset))->count;
            if (offset >= self->stride)
                sum -= place_of(counts, mask, load_window(literal + offset - self->stride))->count;
            Py_ssize_t first = offset - self->stride + 1;
            if (first >= 0 && (first == 0 || sum < best)) {
                best = sum;
                self->firsts[i] = first;
            }
        }
    }
    PyMem_Free(counts);
    return 0;
}

/* The bitmap, and the table of distinct windows with their samples grouped. */
static int
build_tables(LiteralSet *self)
{
    uint64_t windows = (uint64_t)self->count * (uint64_t)self->stride;
    /* About 64 bitmap bits per window, two set: one window in ~1,000 passes by chance
     * (fewer bits leave more to the table, which is slower to look in than the bitmap is). */
    unsigned bits = 10;
    while (bits < 24 && (UINT64_C(1) << bits) < 64 * windows)
        bits++;
    self->bits = bits;
    uint64_t size = table_size_for(windows);
    self->table_mask = size - 1;
    self->bitmap = PyMem_Calloc((UINT64_C(1) << bits) / 64, sizeof(uint64_t));
    self->table = PyMem_Calloc(size, sizeof(Place));
    self->samples = PyMem_Malloc((windows ? windows : 1) * sizeof(Sample));
    if (!self->bitmap || !self->table || !self->samples) {
        PyErr_NoMemory();
        return -1;
    }
    /* Count each distinct window, give each its stretch of samples, then fill them. */
    for (int pass = 0; pass < 2; pass++) {
        for (Py_ssize_t literal = 0; literal < self->count; literal++) {
            const unsigned char *at = self->text + self->starts[literal] + self->firsts[literal];
            for (Py_ssize_t step = 0; step < self->stride; step++) {
                uint64_t window = load_window(at + step);
                Place *place = place_of(self->table, self->table_mask, window);
                if (pass == 0) {
                    uint64_t hash = mix(window), first = first_bit(hash, bits);
                    uint64_t second = second_bit(hash, bits);
                    self->bitmap[first >> 6] |= UINT64_C(1) << (first & 63);
                    self->bitmap[second >> 6] |= UINT64_C(1) << (second & 63);
                    place->window = window;
                    place->count++;
                }
                else {
                    self->samples[place->start++] = (Sample){
                        (uint32_t)literal, (uint32_t)(self->firsts[literal] + step)};
                }
            }
        }
        if (pass == 0) { /* start: where each window's samples end, once filled */
            uint32_t end = 0;
            self->max_shared = 0;
            for (uint64_t i = 0; i < size; i++) {
                if (self->table[i].count == 0)
                    continue;
                self->table[i].start = end;
                end += self->table[i].count;
                if (self->table[i].count > self->max_shared)
                    self->max_shared = self->table[i].count;
            }
        }
    }
    for (uint64_t i = 0; i < size; i++) /* back to where each window's samples begin */
        self->table[i].start -= self->table[i].count;
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
    PyObject *items = PySequence_Fast(literals, "LiteralSet takes a sequence of tuples");
    if (!items)
        return -1;
    int failed = read_literals(self, items);
    Py_DECREF(items);
    if (failed)
        return -1;
    self->stride = choose_stride(self);
    if (choose_firsts(self) < 0)
        return -1;
    return build_tables(self);
}

typedef struct {
    Py_ssize_t end; /* the position of the occurrence's last byte */
    uint32_t literal;
} Occurrence;

/* Every occurrence in data[0:size]: stops after limit + 1 of them, or after budget + 1
 * full comparisons (either < 0: no limit). Returns how many, or -1 when it stopped for
 * the budget; *found is a PyMem_Raw buffer the caller frees, or NULL out of memory. */
static Py_ssize_t
find_occurrences(const LiteralSet *self, const unsigned char *data, Py_ssize_t size,
                 Py_ssize_t limit, Py_ssize_t budget, Occurrence **found)
{
    Py_ssize_t count = 0, capacity = 64, compared = 0;
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
        const Place *place = place_of(self->table, self->table_mask, window);
        compared += place->count;
        if (budget >= 0 && compared > budget) {
            *found = result;
            return -1;
        }
        for (uint32_t i = 0; i < place->count; i++) {
            const Sample *sample = &self->samples[place->start + i];
            Py_ssize_t start = p - (Py_ssize_t)sample->offset;
            Py_ssize_t length = self->lengths[sample->literal];
            if (start < 0 || start + length > size
                    || memcmp(data + start, self->text + self->starts[sample->literal],
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
            result[count++] = (Occurrence){start + length - 1, sample->literal};
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
"find(data, limit=-1, budget=-1) -> list[tuple[int, id]] | None\n\n"
"Every occurrence of a literal in data (a bytes-like object), as (position of its last\n"
"byte, the literal's id) pairs, in the order their sampled windows lie in data; None as\n"
"soon as more than limit are found, or more than budget literals were compared in full\n"
"(a log that holds, again and again, a window many literals share): either < 0, no\n"
"limit. Releases the GIL while it reads.");

static PyObject *
literalset_find(LiteralSet *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 3) {
        PyErr_SetString(PyExc_TypeError, "find(data, limit=-1, budget=-1) takes one to three "
                        "arguments");
        return NULL;
    }
    Py_ssize_t limit = -1, budget = -1;
    if (nargs >= 2) {
        limit = PyLong_AsSsize_t(args[1]);
        if (limit == -1 && PyErr_Occurred())
            return NULL;
    }
    if (nargs == 3) {
        budget = PyLong_AsSsize_t(args[2]);
        if (budget == -1 && PyErr_Occurred())
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
    count = find_occurrences(self, view.buf, view.len, limit, budget, &found);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (!found)
        return PyErr_NoMemory();
    if (count < 0 || (limit >= 0 && count > limit)) {
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

static PyObject *
literalset_max_shared(LiteralSet *self, void *closure)
{
    return PyLong_FromSsize_t(self->max_shared);
}

static PyObject *
literalset_firsts(LiteralSet *self, void *closure)
{
    PyObject *result = PyList_New(self->count);
    for (Py_ssize_t i = 0; result && i < self->count; i++) {
        PyObject *first = PyLong_FromSsize_t(self->firsts[i]);
        if (!first) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, i, first);
    }
    return result;
}

static PyMethodDef literalset_methods[] = {
    {"find", (PyCFunction)(void (*)(void))literalset_find, METH_FASTCALL, find_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef literalset_getset[] = {
    {"stride", (getter)literalset_stride, NULL,
     "How many bytes apart the sampled windows are.", NULL},
    {"max_shared", (getter)literalset_max_shared, NULL,
     "The most (literal, offset) pairs that one window value stands for: what a sampled\n"
     "window of the log that holds it costs, in full comparisons.", NULL},
    {"firsts", (getter)literalset_firsts, NULL,
     "Each literal's first sampled window, in order: give them again to skip choosing.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(literalset_doc,
"LiteralSet(literals)\n\n"
"Literals to find in blocks of bytes: a sequence of (bytes, id) or (bytes, id, first)\n"
"tuples, each literal at least 8 bytes long; first (chosen where not given) is where its\n"
"sampled windows start. The same literal may come with several ids; find reports each.");

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
