/* The walk of tokens through the lazy DFA's row table, token by token and byte by byte, in C.

The token index walks candidate tokens from a state to find those the automaton allows and
where each ends (core.index.mask_walks). In numpy that is a handful of array operations per
byte position, whose fixed cost dominates when the candidates are few (the tokens with a quote
inside a name, a key's first bytes); here each byte is one read of the table. Where a row is
not built yet (UNKNOWN), the DFA builds it in Python (`dfa.row(state)`), which may replace the
table as it grows, so the table is read again after each such call.

Here too, for a state's mask (core.index.bitmasks): the words and bits of a bitmask setting a
list of token ids (`pack`), which a mask is kept as: a read and an OR per id, where numpy's sort
and reduction cost several times a short list's walk; token ids' bits set in a bitmask (`add`);
and a kept mask written into a caller's bitmask (`fill`: its row copied and its words ORed, where
numpy's fancy indexing costs three calls).

Built at install where a C compiler is found (setup.py); without it, the numpy walk serves. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define DEAD 0
#define UNKNOWN (-1)

typedef struct {
    Py_buffer view;
    int held;
} Held;

static void release(Held *held) {
    if (held->held) {
        PyBuffer_Release(&held->view);
        held->held = 0;
    }
}

/* A read-only buffer of `ndim` dimensions of items of `itemsize` bytes, strides given. */
static int hold(PyObject *object, int ndim, Py_ssize_t itemsize, int writable, Held *held, const char *what) {
    int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object, &held->view, flags) < 0) {
        return -1;
    }
    held->held = 1;
    /* integers only: int32 (numpy's "i", or "l" where a long is 4 bytes) or uint8 ("B") */
    const char *format = held->view.format == NULL ? "B" : held->view.format;
    if (*format == '<' || *format == '=' || *format == '@') {
        format++;
    }
    int integers = itemsize == 1 ? strcmp(format, "B") == 0 : strcmp(format, "i") == 0 || strcmp(format, "l") == 0;
    if (held->view.ndim != ndim || held->view.itemsize != itemsize || !integers) {
        PyErr_Format(PyExc_ValueError, "%s: %d dimensions of %zd-byte integers expected", what, ndim, itemsize);
        release(held);
        return -1;
    }
    return 0;
}

/* Attribute names, interned once (a lookup by C string makes a new str every time). */
static PyObject *name_table, *name_row;

/* The DFA's table as it is now: rows of 256 int32 successors, C-contiguous. */
static int hold_table(PyObject *dfa, Held *held) {
    PyObject *table = PyObject_GetAttr(dfa, name_table);
    if (table == NULL) {
        return -1;
    }
    int failed = hold(table, 2, 4, 0, held, "the DFA's table");
    Py_DECREF(table);
    if (failed) {
        return -1;
    }
    if (held->view.shape[1] != 256 || held->view.strides[1] != 4 || held->view.strides[0] != 256 * 4) {
        PyErr_SetString(PyExc_ValueError, "the DFA's table must be C-contiguous rows of 256 int32");
        release(held);
        return -1;
    }
    return 0;
}

#define ITEM(held, type, index) (*(type *)((char *)(held).view.buf + (index) * (held).view.strides[0]))

static PyObject *walk(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *dfa, *token_bytes, *lengths, *ids, *states, *positions, *out_ids, *out_states;
    if (!PyArg_ParseTuple(args, "OOOOOOOO", &dfa, &token_bytes, &lengths, &ids, &states, &positions, &out_ids, &out_states)) {
        return NULL;
    }
    Held table = {0}, bytes = {0}, length = {0}, id = {0}, state = {0}, position = {0}, kept_id = {0}, kept_state = {0};
    Py_ssize_t kept = -1;
    /* A state or a position may be one int for every token (no array made for it). */
    int one_state = PyLong_Check(states), one_position = PyLong_Check(positions);
    long every_state = one_state ? PyLong_AsLong(states) : 0, every_position = one_position ? PyLong_AsLong(positions) : 0;
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (every_state != (int32_t)every_state || every_position != (int32_t)every_position) {
        PyErr_SetString(PyExc_ValueError, "a state or a position given for every token must fit in 32 bits");
        return NULL;
    }
    if (hold_table(dfa, &table) || hold(token_bytes, 2, 1, 0, &bytes, "token bytes") ||
        hold(lengths, 1, 4, 0, &length, "token lengths") || hold(ids, 1, 4, 0, &id, "ids") ||
        (!one_state && hold(states, 1, 4, 0, &state, "states")) ||
        (!one_position && hold(positions, 1, 4, 0, &position, "positions")) ||
        hold(out_ids, 1, 4, 1, &kept_id, "kept ids") || hold(out_states, 1, 4, 1, &kept_state, "kept states")) {
        goto done;
    }
    Py_ssize_t count = id.view.shape[0];
    if ((!one_state && state.view.shape[0] != count) || (!one_position && position.view.shape[0] != count) ||
        kept_id.view.shape[0] < count || kept_state.view.shape[0] < count) {
        PyErr_SetString(PyExc_ValueError, "ids, states and positions must have one entry per token, and room to keep them");
        goto done;
    }
    Py_ssize_t tokens = bytes.view.shape[0], width = bytes.view.shape[1];
    Py_ssize_t token_stride = bytes.view.strides[0], byte_stride = bytes.view.strides[1];
    kept = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        int32_t token = ITEM(id, int32_t, i);
        if (token < 0 || token >= tokens || token >= length.view.shape[0]) {
            PyErr_Format(PyExc_ValueError, "token id %d is outside the vocabulary", (int)token);
            kept = -1;
            goto done;
        }
        int32_t current = one_state ? (int32_t)every_state : ITEM(state, int32_t, i);
        Py_ssize_t at = one_position ? every_position : ITEM(position, int32_t, i), end = ITEM(length, int32_t, token);
        if (end > width || at < 0) {
            PyErr_SetString(PyExc_ValueError, "a token is longer than the byte table is wide, or a position is negative");
            kept = -1;
            goto done;
        }
        const char *piece = (const char *)bytes.view.buf + token * token_stride;
        for (; at < end && current != DEAD; at++) {
            uint8_t byte = *(const uint8_t *)(piece + at * byte_stride);
            if (current < 0 || current >= table.view.shape[0]) {
                PyErr_Format(PyExc_ValueError, "state %d is outside the DFA's table", (int)current);
                kept = -1;
                goto done;
            }
            int32_t following = ((const int32_t *)table.view.buf)[(Py_ssize_t)current * 256 + byte];
            if (following == UNKNOWN) {
                release(&table);  /* the row is built in Python, which may replace the table */
                PyObject *number = PyLong_FromLong(current);
                PyObject *row = number == NULL ? NULL : PyObject_CallMethodOneArg(dfa, name_row, number);
                Py_XDECREF(number);
                if (row == NULL) {
                    kept = -1;
                    goto done;
                }
                Py_DECREF(row);
                if (hold_table(dfa, &table)) {
                    kept = -1;
                    goto done;
                }
                following = ((const int32_t *)table.view.buf)[(Py_ssize_t)current * 256 + byte];
                if (following == UNKNOWN) {
                    PyErr_Format(PyExc_RuntimeError, "the DFA built no row for state %d", (int)current);
                    kept = -1;
                    goto done;
                }
            }
            current = following;
        }
        if (current != DEAD) {
            ITEM(kept_id, int32_t, kept) = token;
            ITEM(kept_state, int32_t, kept) = current;
            kept++;
        }
    }
done:
    release(&table);
    release(&bytes);
    release(&length);
    release(&id);
    release(&state);
    release(&position);
    release(&kept_id);
    release(&kept_state);
    if (kept < 0) {
        return NULL;
    }
    return PyLong_FromSsize_t(kept);
}

/* No vocabulary holds this many tokens: an id beyond is refused, so the scratch words below stay
   within 2 MB whatever a caller passes. */
#define MOST_TOKENS ((int64_t)1 << 24)

/* Words of a bitmask for `pack` (zero between calls: each call clears those it set), grown to
   the largest id asked. */
static uint32_t *scratch = NULL;
static Py_ssize_t scratch_words = 0;

static int scratch_holds(int64_t word) {
    if (word < scratch_words) {
        return 0;
    }
    Py_ssize_t grown = scratch_words ? scratch_words : 1024;
    while (grown <= word) {
        grown *= 2;
    }
    uint32_t *bigger = PyMem_Realloc(scratch, (size_t)grown * sizeof(uint32_t));
    if (bigger == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(bigger + scratch_words, 0, (size_t)(grown - scratch_words) * sizeof(uint32_t));
    scratch = bigger;
    scratch_words = grown;
    return 0;
}

static PyObject *pack(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *ids, *out_words, *out_bits;
    if (!PyArg_ParseTuple(args, "OOO", &ids, &out_words, &out_bits)) {
        return NULL;
    }
    Held id = {0}, word = {0}, bit = {0};
    int32_t *tokens = NULL;
    Py_ssize_t count = -1;
    int listed = PyList_Check(ids);
    if ((!listed && hold(ids, 1, 4, 0, &id, "ids")) || hold(out_words, 1, 4, 1, &word, "words") ||
        hold(out_bits, 1, 4, 1, &bit, "bits")) {
        goto done;
    }
    Py_ssize_t total = listed ? PyList_GET_SIZE(ids) : id.view.shape[0];
    if (word.view.shape[0] < total || bit.view.shape[0] < total) {
        PyErr_SetString(PyExc_ValueError, "words and bits need room for one entry per id");
        goto done;
    }
    /* Every id read and checked first: reading a list's items may run other code, and the
       scratch words are shared, so they are touched only once nothing else can run. */
    tokens = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    if (tokens == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t most = -1;
    for (Py_ssize_t i = 0; i < total; i++) {
        int64_t token = listed ? PyLong_AsLongLong(PyList_GET_ITEM(ids, i)) : ITEM(id, int32_t, i);
        if (token == -1 && PyErr_Occurred()) {
            goto done;
        }
        if (token < 0 || token >= MOST_TOKENS) {
            PyErr_Format(PyExc_ValueError, "token id %lld is not a vocabulary's", (long long)token);
            goto done;
        }
        tokens[i] = (int32_t)token;
        most = token > most ? token : most;
    }
    if (most >= 0 && scratch_holds(most >> 5)) {
        goto done;
    }
    Py_ssize_t kept = 0;
    for (Py_ssize_t i = 0; i < total; i++) {
        int32_t at = tokens[i] >> 5;
        if (scratch[at] == 0) {
            ITEM(word, int32_t, kept) = at;
            kept++;
        }
        scratch[at] |= (uint32_t)1 << (tokens[i] & 31);
    }
    for (Py_ssize_t i = 0; i < kept; i++) {  /* the bits out, and the scratch words back to zero */
        int32_t at = ITEM(word, int32_t, i);
        ITEM(bit, int32_t, i) = (int32_t)scratch[at];
        scratch[at] = 0;
    }
    count = kept;
done:
    PyMem_Free(tokens);
    release(&id);
    release(&word);
    release(&bit);
    if (count < 0) {
        return NULL;
    }
    return PyLong_FromSsize_t(count);
}

/* A state's mask written out: its row copied (or zeros), then its own bits ORed into their words. */
static PyObject *fill(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *out, *base, *words, *bits;
    if (!PyArg_ParseTuple(args, "OOOO", &out, &base, &words, &bits)) {
        return NULL;
    }
    Held mask = {0}, row = {0}, word = {0}, bit = {0};
    int failed = 1;
    if (hold(out, 1, 4, 1, &mask, "bitmask") || (base != Py_None && hold(base, 1, 4, 0, &row, "row")) ||
        hold(words, 1, 4, 0, &word, "words") || hold(bits, 1, 4, 0, &bit, "bits")) {
        goto done;
    }
    Py_ssize_t size = mask.view.shape[0], count = word.view.shape[0];
    if ((base != Py_None && row.view.shape[0] != size) || bit.view.shape[0] != count) {
        PyErr_SetString(PyExc_ValueError, "the row must be as long as the bitmask, and bits as long as words");
        goto done;
    }
    for (Py_ssize_t i = 0; i < size; i++) {
        ITEM(mask, int32_t, i) = base == Py_None ? 0 : ITEM(row, int32_t, i);
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        int32_t at = ITEM(word, int32_t, i);
        if (at < 0 || at >= size) {
            PyErr_Format(PyExc_ValueError, "word %d is outside the bitmask", (int)at);
            goto done;
        }
        ITEM(mask, uint32_t, at) |= (uint32_t)ITEM(bit, int32_t, i);
    }
    failed = 0;
done:
    release(&mask);
    release(&row);
    release(&word);
    release(&bit);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* The bits of token ids ORed into a bitmask. */
static PyObject *add(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *out, *ids;
    if (!PyArg_ParseTuple(args, "OO", &out, &ids)) {
        return NULL;
    }
    Held mask = {0}, id = {0};
    int failed = 1;
    if (hold(out, 1, 4, 1, &mask, "bitmask") || hold(ids, 1, 4, 0, &id, "ids")) {
        goto done;
    }
    Py_ssize_t bits = mask.view.shape[0] * 32, count = id.view.shape[0];
    for (Py_ssize_t i = 0; i < count; i++) {
        int32_t token = ITEM(id, int32_t, i);
        if (token < 0 || token >= bits) {
            PyErr_Format(PyExc_ValueError, "token id %d is outside the bitmask", (int)token);
            goto done;
        }
        ITEM(mask, uint32_t, token >> 5) |= (uint32_t)1 << (token & 31);
    }
    failed = 0;
done:
    release(&mask);
    release(&id);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS,
     "walk(dfa, token_bytes, lengths, ids, states, positions, kept_ids, kept_states) -> count\n\n"
     "Walk each token ids[i] from byte positions[i] on, from DFA state states[i] (either may be\n"
     "one int for all); write the ids of\n"
     "those the DFA takes to their end, and the states they end at, to the front of kept_ids and\n"
     "kept_states, in the order given; return how many."},
    {"pack", pack, METH_VARARGS,
     "pack(ids, words, bits) -> count\n\n"
     "The bitmask words the token ids (a list of ints, or int32 array; an id may come twice) set,\n"
     "and their bits (bit t % 32 of word t // 32), written to the front of words and bits\n"
     "(int32 arrays with room for one entry per id), in the order each word is first set;\n"
     "return how many."},
    {"add", add, METH_VARARGS,
     "add(bitmask, ids) -> None\n\nSet the bit of each token id (an int32 array) in bitmask."},
    {"fill", fill, METH_VARARGS,
     "fill(bitmask, row, words, bits) -> None\n\n"
     "Write row (an int32 array as long as bitmask, or None for zeros) into bitmask, then OR\n"
     "bits[i] into word words[i] of it, for every i."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_walks", "Token walks through the lazy DFA, in C.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__walks(void) {
    name_table = PyUnicode_InternFromString("table");
    name_row = PyUnicode_InternFromString("row");
    if (name_table == NULL || name_row == NULL) {
        return NULL;
    }
    return PyModule_Create(&module);
}
