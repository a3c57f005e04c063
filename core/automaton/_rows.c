/* The lazy DFA's rows and the NFA's closures, in C (core/automaton/dfa.py and nfa.py say what
they are; this builds the same ones, on the same Python tables, without the interpreter's cost
per edge and per state).

A DFA state's row is made of the byte edges of the NFA states its members reach by epsilon
edges: for each byte, the set of targets of the edges covering it names the successor (a new
DFA state where the set is new). Of the first visit to a state, most of the time in Python went
to the loops over edges and the bookkeeping of the sets; here the byte axis is cut where an
edge starts or ends, and each piece's targets are gathered in a small array. What only the NFA
can do stays in Python: expanding a state (its node says what
its edges are), which is called back where a state is reached unexpanded. The NFA's tables
may grow during such a call, so every read goes through the lists again.

Built at install where a C compiler is found (setup.py); without it, the same work runs in
Python (LazyDFA._build_row, NFA.closure). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEAD 0

/* -- growable arrays of state numbers, and a set of them ------------------------------- */

typedef struct {
    int32_t *items;
    Py_ssize_t size, capacity;
} Ints;

static int ints_push(Ints *ints, int32_t value) {
    if (ints->size == ints->capacity) {
        Py_ssize_t capacity = ints->capacity ? 2 * ints->capacity : 16;
        int32_t *grown = PyMem_Realloc(ints->items, (size_t)capacity * sizeof(int32_t));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        ints->items = grown;
        ints->capacity = capacity;
    }
    ints->items[ints->size++] = value;
    return 0;
}

static void ints_free(Ints *ints) {
    PyMem_Free(ints->items);
    ints->items = NULL;
    ints->size = ints->capacity = 0;
}

static int compare_ints(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Sort ascending and drop repeats. */
static void ints_sort_unique(Ints *ints) {
    if (ints->size < 2) {
        return;
    }
    qsort(ints->items, (size_t)ints->size, sizeof(int32_t), compare_ints);
    Py_ssize_t kept = 1;
    for (Py_ssize_t i = 1; i < ints->size; i++) {
        if (ints->items[i] != ints->items[kept - 1]) {
            ints->items[kept++] = ints->items[i];
        }
    }
    ints->size = kept;
}

/* Open addressing over non-negative numbers (-1: an empty slot). */
typedef struct {
    int32_t *slots;
    Py_ssize_t capacity, size;
} IntSet;

static int set_init(IntSet *set, Py_ssize_t expected) {
    Py_ssize_t capacity = 32;
    while (capacity < 2 * expected) {
        capacity *= 2;
    }
    set->slots = PyMem_Malloc((size_t)capacity * sizeof(int32_t));
    if (set->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(set->slots, 0xFF, (size_t)capacity * sizeof(int32_t));
    set->capacity = capacity;
    set->size = 0;
    return 0;
}

static void set_free(IntSet *set) {
    PyMem_Free(set->slots);
    set->slots = NULL;
}

static Py_ssize_t slot_of(const IntSet *set, int32_t value) {
    Py_ssize_t mask = set->capacity - 1, at = ((uint32_t)value * 2654435761u) & mask;
    while (set->slots[at] != -1 && set->slots[at] != value) {
        at = (at + 1) & mask;
    }
    return at;
}

/* 1 where `value` was added, 0 where it was there already, -1 on failure. */
static int set_add(IntSet *set, int32_t value) {
    Py_ssize_t at = slot_of(set, value);
    if (set->slots[at] == value) {
        return 0;
    }
    set->slots[at] = value;
    set->size++;
    if (2 * set->size > set->capacity) {
        IntSet grown;
        if (set_init(&grown, set->size)) {
            return -1;
        }
        for (Py_ssize_t i = 0; i < set->capacity; i++) {
            if (set->slots[i] != -1) {
                grown.slots[slot_of(&grown, set->slots[i])] = set->slots[i];
                grown.size++;
            }
        }
        set_free(set);
        *set = grown;
    }
    return 1;
}

/* -- attribute names, interned once (a lookup by C string makes a new str every time) ------- */

static PyObject *name_edges, *name_epsilons, *name_reads, *name_distance, *name_expand, *name_table,
    *name_distance_array, *name_sets, *name_ids, *name_closures;

static int intern_names(void) {
    struct { PyObject **name; const char *text; } names[] = {
        {&name_edges, "_edges"}, {&name_epsilons, "_epsilons"}, {&name_reads, "_reads"}, {&name_distance, "distance"},
        {&name_expand, "_expand"}, {&name_table, "table"}, {&name_distance_array, "distance_array"},
        {&name_sets, "_sets"}, {&name_ids, "_ids"}, {&name_closures, "_closures"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        *names[i].name = PyUnicode_InternFromString(names[i].text);
        if (*names[i].name == NULL) {
            return -1;
        }
    }
    return 0;
}

/* -- the NFA's tables (nfa.py): lists indexed by state ------------------------------------ */

typedef struct {
    PyObject *nfa, *edges, *epsilons, *reads, *distance;
} Nfa;

static int nfa_open(PyObject *nfa, Nfa *view) {
    view->nfa = nfa;
    view->edges = PyObject_GetAttr(nfa, name_edges);
    view->epsilons = PyObject_GetAttr(nfa, name_epsilons);
    view->reads = PyObject_GetAttr(nfa, name_reads);
    view->distance = PyObject_GetAttr(nfa, name_distance);
    if (view->edges == NULL || view->epsilons == NULL || view->reads == NULL || view->distance == NULL) {
        return -1;
    }
    if (!PyList_Check(view->edges) || !PyList_Check(view->epsilons) || !PyList_Check(view->reads) ||
        !PyList_Check(view->distance)) {
        PyErr_SetString(PyExc_TypeError, "the NFA's tables must be lists");
        return -1;
    }
    return 0;
}

static void nfa_close(Nfa *view) {
    Py_CLEAR(view->edges);
    Py_CLEAR(view->epsilons);
    Py_CLEAR(view->reads);
    Py_CLEAR(view->distance);
}

static int in_table(const Nfa *view, int32_t state) {
    if (state < 0 || state >= PyList_GET_SIZE(view->distance) || state >= PyList_GET_SIZE(view->edges) ||
        state >= PyList_GET_SIZE(view->epsilons) || state >= PyList_GET_SIZE(view->reads)) {
        PyErr_Format(PyExc_ValueError, "NFA state %d is outside the NFA's tables", (int)state);
        return 0;
    }
    return 1;
}

/* The state's distance to acceptance (-1: none); -2 on failure. */
static long distance_of(const Nfa *view, int32_t state) {
    long distance = PyLong_AsLong(PyList_GET_ITEM(view->distance, state));
    if (distance == -1 && PyErr_Occurred()) {
        return -2;
    }
    return distance;
}

static int expand(const Nfa *view, int32_t state) {
    PyObject *number = PyLong_FromLong(state);
    if (number == NULL) {
        return -1;
    }
    PyObject *done = PyObject_CallMethodOneArg(view->nfa, name_expand, number);
    Py_DECREF(number);
    if (done == NULL) {
        return -1;
    }
    Py_DECREF(done);
    return 0;
}

static int32_t as_state(PyObject *number) {
    long value = PyLong_AsLong(number);
    if (value == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (value < 0 || value > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "a state number out of range");
        return -1;
    }
    return (int32_t)value;
}

/* NFA.closure: the states `state` reaches by epsilon edges (itself included) that read a byte
and can still reach acceptance, ascending, into `out`. An unexpanded state is expanded unless
it reads a byte and has no epsilon edge by its node alone (NFA._reads). */
static int closure_into(const Nfa *view, int32_t state, Ints *out) {
    IntSet seen = {0};
    Ints stack = {0};
    int failed = -1;
    if (!in_table(view, state) || set_init(&seen, 16) || set_add(&seen, state) < 0 || ints_push(&stack, state)) {
        goto done;
    }
    while (stack.size) {
        int32_t current = stack.items[--stack.size];
        if (!in_table(view, current)) {
            goto done;
        }
        if (PyList_GET_ITEM(view->edges, current) == Py_None && PyList_GET_ITEM(view->reads, current) != Py_True &&
            expand(view, current)) {
            goto done;
        }
        PyObject *epsilons = PyList_GET_ITEM(view->epsilons, current);
        if (!PyTuple_Check(epsilons)) {
            PyErr_SetString(PyExc_TypeError, "an NFA state's epsilon edges must be a tuple");
            goto done;
        }
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(epsilons); i++) {
            int32_t target = as_state(PyTuple_GET_ITEM(epsilons, i));
            if (target < 0) {
                goto done;
            }
            int added = set_add(&seen, target);
            if (added < 0 || (added && ints_push(&stack, target))) {
                goto done;
            }
        }
    }
    for (Py_ssize_t i = 0; i < seen.capacity; i++) {
        int32_t member = seen.slots[i];
        if (member == -1) {
            continue;
        }
        if (!in_table(view, member)) {
            goto done;
        }
        long distance = distance_of(view, member);
        if (distance == -2) {
            goto done;
        }
        PyObject *edges = PyList_GET_ITEM(view->edges, member);
        int reads = edges == Py_None ? PyList_GET_ITEM(view->reads, member) == Py_True
                                     : PyTuple_Check(edges) && PyTuple_GET_SIZE(edges) > 0;
        if (distance >= 0 && reads && ints_push(out, member)) {
            goto done;
        }
    }
    ints_sort_unique(out);
    failed = 0;
done:
    set_free(&seen);
    ints_free(&stack);
    return failed;
}

static PyObject *ints_tuple(const Ints *ints) {
    PyObject *tuple = PyTuple_New(ints->size);
    if (tuple == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < ints->size; i++) {
        PyObject *number = PyLong_FromLong(ints->items[i]);
        if (number == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, i, number);
    }
    return tuple;
}

static PyObject *closure(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *nfa;
    int state;
    if (!PyArg_ParseTuple(args, "Oi", &nfa, &state)) {
        return NULL;
    }
    Nfa view = {0};
    Ints members = {0};
    PyObject *found = NULL;
    if (!nfa_open(nfa, &view) && !closure_into(&view, (int32_t)state, &members)) {
        found = ints_tuple(&members);
    }
    nfa_close(&view);
    ints_free(&members);
    return found;
}

/* -- the DFA's tables (dfa.py) ---------------------------------------------------------- */

typedef struct {
    PyObject *dfa, *sets, *ids, *closures;
    Py_buffer table, distances;
    int held;
} Dfa;

static void dfa_release(Dfa *view) {
    if (view->held) {
        PyBuffer_Release(&view->table);
        PyBuffer_Release(&view->distances);
        view->held = 0;
    }
}

/* The row table and the distances as they are now (LazyDFA._reserve replaces both). */
static int dfa_hold(Dfa *view) {
    PyObject *table = PyObject_GetAttr(view->dfa, name_table);
    if (table == NULL) {
        return -1;
    }
    int failed = PyObject_GetBuffer(table, &view->table, PyBUF_STRIDES | PyBUF_FORMAT | PyBUF_WRITABLE);
    Py_DECREF(table);
    if (failed) {
        return -1;
    }
    PyObject *distances = PyObject_GetAttr(view->dfa, name_distance_array);
    if (distances == NULL) {
        PyBuffer_Release(&view->table);
        return -1;
    }
    failed = PyObject_GetBuffer(distances, &view->distances, PyBUF_STRIDES | PyBUF_FORMAT | PyBUF_WRITABLE);
    Py_DECREF(distances);
    if (failed) {
        PyBuffer_Release(&view->table);
        return -1;
    }
    view->held = 1;
    const char *format = view->table.format, *other = view->distances.format;
    /* int32: numpy's "i" (or "l" where a long is 4 bytes), after any byte order mark */
    int int32 = view->table.itemsize == 4 && view->distances.itemsize == 4 && format != NULL && other != NULL &&
                *format != '\0' && *other != '\0' && strchr("il", format[strlen(format) - 1]) != NULL &&
                strchr("il", other[strlen(other) - 1]) != NULL;
    if (!int32 || view->table.ndim != 2 || view->table.shape[1] != 256 || view->table.strides[1] != 4 ||
        view->table.strides[0] != 256 * 4 || view->distances.ndim != 1 || view->distances.strides[0] != 4 ||
        view->distances.shape[0] < view->table.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "the DFA's table must be C-contiguous rows of 256 int32, with an int32 distance each");
        dfa_release(view);
        return -1;
    }
    return 0;
}

static int dfa_open(PyObject *dfa, Dfa *view) {
    view->dfa = dfa;
    view->sets = PyObject_GetAttr(dfa, name_sets);
    view->ids = PyObject_GetAttr(dfa, name_ids);
    view->closures = PyObject_GetAttr(dfa, name_closures);
    if (view->sets == NULL || view->ids == NULL || view->closures == NULL) {
        return -1;
    }
    if (!PyList_Check(view->sets) || !PyDict_Check(view->ids) || !PyDict_Check(view->closures)) {
        PyErr_SetString(PyExc_TypeError, "the DFA's sets must be a list, its ids and closures dicts");
        return -1;
    }
    return dfa_hold(view);
}

static void dfa_close(Dfa *view) {
    dfa_release(view);
    Py_CLEAR(view->sets);
    Py_CLEAR(view->ids);
    Py_CLEAR(view->closures);
}

/* LazyDFA.state_for, for `live` (ascending NFA states, every one live): the DFA state standing
for them, made where new (the table grown where it is full). -1 on failure. */
static int32_t state_for(Dfa *dfa, const Nfa *nfa, const Ints *live) {
    if (live->size == 0) {
        return DEAD;
    }
    PyObject *key = ints_tuple(live);
    if (key == NULL) {
        return -1;
    }
    PyObject *found = PyDict_GetItemWithError(dfa->ids, key);
    if (found != NULL) {
        Py_DECREF(key);
        return as_state(found);
    }
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return -1;
    }
    Py_ssize_t made = PyList_GET_SIZE(dfa->sets);
    PyObject *number = PyLong_FromSsize_t(made);
    if (number == NULL || PyList_Append(dfa->sets, key) || PyDict_SetItem(dfa->ids, key, number)) {
        Py_XDECREF(number);
        Py_DECREF(key);
        return -1;
    }
    Py_DECREF(number);
    Py_DECREF(key);
    if (made >= dfa->table.shape[0]) {
        Py_ssize_t capacity = 2 * dfa->table.shape[0];
        dfa_release(dfa);
        PyObject *done = PyObject_CallMethod(dfa->dfa, "_reserve", "n", capacity);
        if (done == NULL) {
            return -1;
        }
        Py_DECREF(done);
        if (dfa_hold(dfa)) {
            return -1;
        }
        if (made >= dfa->table.shape[0]) {
            PyErr_SetString(PyExc_RuntimeError, "the DFA's table did not grow");
            return -1;
        }
    }
    long fewest = -1;
    for (Py_ssize_t i = 0; i < live->size; i++) {
        long distance = distance_of(nfa, live->items[i]);
        if (distance == -2) {
            return -1;
        }
        if (fewest < 0 || distance < fewest) {
            fewest = distance;
        }
    }
    ((int32_t *)dfa->distances.buf)[made] = (int32_t)fewest;
    return (int32_t)made;
}

/* The closure of NFA state `member`, kept in the DFA's `_closures` (a tuple, as Python keeps
it), added to `members`. */
static int add_closure(Dfa *dfa, const Nfa *nfa, PyObject *member, IntSet *seen, Ints *members) {
    PyObject *kept = PyDict_GetItemWithError(dfa->closures, member);
    Ints made = {0};
    int failed = -1;
    if (kept == NULL) {
        if (PyErr_Occurred()) {
            goto done;
        }
        int32_t state = as_state(member);
        if (state < 0 || closure_into(nfa, state, &made)) {
            goto done;
        }
        PyObject *tuple = ints_tuple(&made);
        if (tuple == NULL) {
            goto done;
        }
        int stored = PyDict_SetItem(dfa->closures, member, tuple);
        Py_DECREF(tuple);
        if (stored) {
            goto done;
        }
    } else {
        if (!PyTuple_Check(kept)) {
            PyErr_SetString(PyExc_TypeError, "a kept closure must be a tuple");
            goto done;
        }
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kept); i++) {
            int32_t state = as_state(PyTuple_GET_ITEM(kept, i));
            if (state < 0 || ints_push(&made, state)) {
                goto done;
            }
        }
    }
    for (Py_ssize_t i = 0; i < made.size; i++) {
        int added = set_add(seen, made.items[i]);
        if (added < 0 || (added && ints_push(members, made.items[i]))) {
            goto done;
        }
    }
    failed = 0;
done:
    ints_free(&made);
    return failed;
}

/* LazyDFA._build_row: the successors of DFA state `state` for all 256 bytes, written into its
row (DEAD where no edge covers a byte). The byte axis is cut where any edge starts or ends; each
piece's successor stands for the live targets of the edges covering it. Successors are named in
ascending order of the first byte leading to each, as Python names them. */
static PyObject *build_row(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *dfa_object, *nfa_object;
    int state;
    if (!PyArg_ParseTuple(args, "OOi", &dfa_object, &nfa_object, &state)) {
        return NULL;
    }
    Dfa dfa = {0};
    Nfa nfa = {0};
    IntSet seen = {0};
    Ints members = {0}, lows = {0}, highs = {0}, targets = {0}, live = {0}, previous = {0};
    int32_t successors[256];
    char cut[257];
    memset(cut, 0, sizeof(cut));
    PyObject *result = NULL;
    if (dfa_open(dfa_object, &dfa) || nfa_open(nfa_object, &nfa) || set_init(&seen, 64)) {
        goto done;
    }
    if (state < 0 || state >= PyList_GET_SIZE(dfa.sets) || state >= dfa.table.shape[0]) {
        PyErr_Format(PyExc_ValueError, "DFA state %d does not exist", state);
        goto done;
    }
    PyObject *set = PyList_GET_ITEM(dfa.sets, state);
    if (!PyTuple_Check(set)) {
        PyErr_SetString(PyExc_TypeError, "a DFA state's NFA states must be a tuple");
        goto done;
    }
    Py_INCREF(set);  /* the list may be reallocated while closures expand states */
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(set); i++) {
        if (add_closure(&dfa, &nfa, PyTuple_GET_ITEM(set, i), &seen, &members)) {
            Py_DECREF(set);
            goto done;
        }
    }
    Py_DECREF(set);
    for (Py_ssize_t i = 0; i < members.size; i++) {
        int32_t member = members.items[i];
        if (!in_table(&nfa, member)) {
            goto done;
        }
        if (PyList_GET_ITEM(nfa.edges, member) == Py_None && expand(&nfa, member)) {
            goto done;
        }
        PyObject *edges = PyList_GET_ITEM(nfa.edges, member);
        if (!PyTuple_Check(edges)) {
            PyErr_SetString(PyExc_TypeError, "an NFA state's edges must be a tuple");
            goto done;
        }
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(edges); j++) {
            PyObject *edge = PyTuple_GET_ITEM(edges, j);
            if (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 3) {
                PyErr_SetString(PyExc_TypeError, "an NFA edge must be a (low, high, target) tuple");
                goto done;
            }
            long low = PyLong_AsLong(PyTuple_GET_ITEM(edge, 0)), high = PyLong_AsLong(PyTuple_GET_ITEM(edge, 1));
            int32_t target = as_state(PyTuple_GET_ITEM(edge, 2));
            if (target < 0 || PyErr_Occurred()) {
                goto done;
            }
            if (low < 0 || high > 255 || low > high) {
                PyErr_SetString(PyExc_ValueError, "an NFA edge's bytes must lie within 0..255");
                goto done;
            }
            if (!in_table(&nfa, target)) {
                goto done;
            }
            long distance = distance_of(&nfa, target);
            if (distance == -2) {
                goto done;
            }
            if (distance < 0) {  /* a target that cannot reach acceptance is no successor */
                continue;
            }
            if (ints_push(&lows, (int32_t)low) || ints_push(&highs, (int32_t)high) || ints_push(&targets, target)) {
                goto done;
            }
            cut[low] = cut[high + 1] = 1;
        }
    }
    int32_t successor = DEAD;
    int have_previous = 0;
    for (int low = 0; low < 256;) {
        int end = low + 1;
        while (end < 256 && !cut[end]) {
            end++;
        }
        live.size = 0;
        for (Py_ssize_t i = 0; i < targets.size; i++) {
            if (lows.items[i] <= low && end - 1 <= highs.items[i] && ints_push(&live, targets.items[i])) {
                goto done;
            }
        }
        ints_sort_unique(&live);
        if (!have_previous || live.size != previous.size ||
            memcmp(live.items, previous.items, (size_t)live.size * sizeof(int32_t)) != 0) {
            successor = state_for(&dfa, &nfa, &live);
            if (successor < 0) {
                goto done;
            }
            previous.size = 0;
            for (Py_ssize_t i = 0; i < live.size; i++) {
                if (ints_push(&previous, live.items[i])) {
                    goto done;
                }
            }
            have_previous = 1;
        }
        for (int byte = low; byte < end; byte++) {
            successors[byte] = successor;
        }
        low = end;
    }
    memcpy((int32_t *)dfa.table.buf + (Py_ssize_t)state * 256, successors, sizeof(successors));
    result = Py_NewRef(Py_None);
done:
    ints_free(&members);
    ints_free(&lows);
    ints_free(&highs);
    ints_free(&targets);
    ints_free(&live);
    ints_free(&previous);
    set_free(&seen);
    nfa_close(&nfa);
    dfa_close(&dfa);
    return result;
}

static PyMethodDef methods[] = {
    {"closure", closure, METH_VARARGS,
     "closure(nfa, state) -> tuple\n\n"
     "NFA.closure: the states `state` reaches by epsilon edges, itself included, that read a byte\n"
     "and can still reach acceptance, ascending (unexpanded states expanded through the NFA)."},
    {"build_row", build_row, METH_VARARGS,
     "build_row(dfa, nfa, state) -> None\n\n"
     "LazyDFA._build_row: write the successors of DFA state `state` for all 256 bytes into its row,\n"
     "naming new DFA states as LazyDFA.state_for does."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rows", "The lazy DFA's rows and the NFA's closures, in C.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__rows(void) {
    if (intern_names()) {
        return NULL;
    }
    return PyModule_Create(&module);
}
