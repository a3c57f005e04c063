/* The pairs of intersect's product of two character machines, in C (core/automaton/charnfa.py
says what the product is; this walks the same pairs, in the same order, and gives the same rows,
without the interpreter's cost per pair and per edge: a uri's machine of thousands of states
met by a pattern makes thousands of pairs of a few edges each).

The pairs are numbered in the order they are met, breadth first from the pair of starts. Each
edge of the first machine's row is met with each edge of the second's that shares a character,
the first's edge by the first's edge. Where an edge leads into a state from which its machine's
partner accepts every string (an open end), the product goes on as the other machine alone:
its states are given a block of numbers, on first need, whose rows charnfa.py fills in.

Built at install where a C compiler is found (setup.py); without it, the same work runs in
Python (product_pairs.py). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A machine's rows, flat: row `state` is edges offsets[state] .. offsets[state + 1]. */
typedef struct {
    Py_ssize_t states;
    Py_ssize_t *offsets;
    int32_t *lows, *highs, *targets;
    char *open; /* per state: an open end (accepts every string from there on) */
} Rows;

static void rows_free(Rows *rows) {
    PyMem_Free(rows->offsets);
    PyMem_Free(rows->lows);
    PyMem_Free(rows->highs);
    PyMem_Free(rows->targets);
    PyMem_Free(rows->open);
    memset(rows, 0, sizeof(*rows));
}

static int int_item(PyObject *tuple, Py_ssize_t index, int32_t *out) {
    long value = PyLong_AsLong(PyTuple_GET_ITEM(tuple, index));
    if (value == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = (int32_t)value;
    return 0;
}

/* Mark in `marks` each state `iterable` names (numbers outside [0, states) are left out). */
static int read_states(PyObject *iterable, Py_ssize_t states, char *marks) {
    PyObject *iterator = PyObject_GetIter(iterable);
    if (iterator == NULL) {
        return -1;
    }
    PyObject *item;
    while ((item = PyIter_Next(iterator)) != NULL) {
        Py_ssize_t state = PyLong_AsSsize_t(item);
        Py_DECREF(item);
        if (state == -1 && PyErr_Occurred()) {
            break;
        }
        if (state >= 0 && state < states) {
            marks[state] = 1;
        }
    }
    Py_DECREF(iterator);
    return PyErr_Occurred() ? -1 : 0;
}

/* Read `edges` (a tuple of tuples of (low, high, target)) and `open` (a frozenset of states). */
static int rows_read(Rows *rows, PyObject *edges, PyObject *open) {
    memset(rows, 0, sizeof(*rows));
    if (!PyTuple_Check(edges)) {
        PyErr_SetString(PyExc_TypeError, "a machine's edges must be a tuple of tuples");
        return -1;
    }
    Py_ssize_t states = PyTuple_GET_SIZE(edges), total = 0;
    for (Py_ssize_t state = 0; state < states; state++) {
        PyObject *row = PyTuple_GET_ITEM(edges, state);
        if (!PyTuple_Check(row)) {
            PyErr_SetString(PyExc_TypeError, "a machine's row must be a tuple");
            return -1;
        }
        total += PyTuple_GET_SIZE(row);
    }
    rows->states = states;
    rows->offsets = PyMem_Malloc((size_t)(states + 1) * sizeof(Py_ssize_t));
    rows->lows = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    rows->highs = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    rows->targets = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    rows->open = PyMem_Calloc((size_t)(states ? states : 1), 1);
    if (!rows->offsets || !rows->lows || !rows->highs || !rows->targets || !rows->open) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t at = 0;
    for (Py_ssize_t state = 0; state < states; state++) {
        PyObject *row = PyTuple_GET_ITEM(edges, state);
        rows->offsets[state] = at;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(row); i++, at++) {
            PyObject *edge = PyTuple_GET_ITEM(row, i);
            if (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 3) {
                PyErr_SetString(PyExc_TypeError, "an edge must be a (low, high, target) tuple");
                return -1;
            }
            if (int_item(edge, 0, &rows->lows[at]) || int_item(edge, 1, &rows->highs[at]) ||
                int_item(edge, 2, &rows->targets[at])) {
                return -1;
            }
            if (rows->targets[at] < 0 || rows->targets[at] >= states) {
                PyErr_SetString(PyExc_ValueError, "an edge leads to no state of its machine");
                return -1;
            }
        }
    }
    rows->offsets[states] = at;
    return read_states(open, states, rows->open);
}

/* Pair numbers by (first's state, second's state): open addressing, keys kept plus one (0: free). */
typedef struct {
    uint64_t *keys;
    int32_t *values;
    size_t capacity, size;
} Table;

static size_t table_slot(const Table *table, uint64_t key) {
    uint64_t hash = key * 0x9E3779B97F4A7C15ULL;
    size_t slot = (size_t)(hash >> 17) & (table->capacity - 1);
    while (table->keys[slot] != 0 && table->keys[slot] != key) {
        slot = (slot + 1) & (table->capacity - 1);
    }
    return slot;
}

static int table_grow(Table *table) {
    Table grown = {PyMem_Calloc(table->capacity * 2, sizeof(uint64_t)), PyMem_Malloc(table->capacity * 2 * sizeof(int32_t)),
                   table->capacity * 2, table->size};
    if (grown.keys == NULL || grown.values == NULL) {
        PyMem_Free(grown.keys);
        PyMem_Free(grown.values);
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < table->capacity; i++) {
        if (table->keys[i] != 0) {
            size_t slot = table_slot(&grown, table->keys[i]);
            grown.keys[slot] = table->keys[i];
            grown.values[slot] = table->values[i];
        }
    }
    PyMem_Free(table->keys);
    PyMem_Free(table->values);
    *table = grown;
    return 0;
}

static int append_pair(PyObject *pairs, long first, long second) {
    PyObject *pair = Py_BuildValue("(ll)", first, second);
    if (pair == NULL) {
        return -1;
    }
    int failed = PyList_Append(pairs, pair);
    Py_DECREF(pair);
    return failed;
}

/* Room for `needed` pairs' states in `left` and `right` (grown together, doubling). */
static int pairs_room(int32_t **left, int32_t **right, Py_ssize_t *capacity, Py_ssize_t needed) {
    if (needed <= *capacity) {
        return 0;
    }
    Py_ssize_t grown_to = *capacity ? *capacity : 1024;
    while (grown_to < needed) {
        grown_to *= 2;
    }
    int32_t **sides[2] = {left, right};
    for (int side = 0; side < 2; side++) {
        int32_t *grown = PyMem_Realloc(*sides[side], (size_t)grown_to * sizeof(int32_t));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        *sides[side] = grown;
    }
    *capacity = grown_to;
    return 0;
}

static PyObject *product_pairs(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *first_edges, *second_edges, *first_open, *second_open;
    long first_start, second_start;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "OlOlOOn", &first_edges, &first_start, &second_edges, &second_start, &first_open,
                          &second_open, &limit)) {
        return NULL;
    }
    Rows sides[2];
    Table table = {PyMem_Calloc(1024, sizeof(uint64_t)), PyMem_Malloc(1024 * sizeof(int32_t)), 1024, 0};
    PyObject *rows = PyList_New(0), *pairs = PyList_New(0), *bases = PyDict_New(), *result = NULL;
    PyObject *row = NULL;
    Py_ssize_t base[2] = {-1, -1};
    int32_t *left = NULL, *right = NULL; /* each pair's states, by number (-1: a copied state) */
    Py_ssize_t count = 0, capacity = 0;
    memset(sides, 0, sizeof(sides));
    if (table.keys == NULL || table.values == NULL || rows == NULL || pairs == NULL || bases == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (rows_read(&sides[0], first_edges, first_open) || rows_read(&sides[1], second_edges, second_open)) {
        goto done;
    }
    if (first_start < 0 || first_start >= sides[0].states || second_start < 0 || second_start >= sides[1].states) {
        PyErr_SetString(PyExc_ValueError, "a start that is no state of its machine");
        goto done;
    }
    if (pairs_room(&left, &right, &capacity, 1)) {
        goto done;
    }
    left[0] = (int32_t)first_start;
    right[0] = (int32_t)second_start;
    count = 1;
    uint64_t start_key = (((uint64_t)first_start << 32) | (uint64_t)second_start) + 1;
    size_t start_slot = table_slot(&table, start_key);
    table.keys[start_slot] = start_key;
    table.values[start_slot] = 0;
    table.size = 1;
    if (append_pair(pairs, first_start, second_start)) {
        goto done;
    }
    for (Py_ssize_t pair = 0; pair < count; pair++) {
        if (left[pair] < 0) {
            row = PyList_New(0); /* a copied state: its row is the machine's, filled in by charnfa.py */
            if (row == NULL || PyList_Append(rows, row)) {
                goto done;
            }
            Py_CLEAR(row);
            continue;
        }
        row = PyList_New(0);
        if (row == NULL) {
            goto done;
        }
        const Rows *a = &sides[0], *b = &sides[1];
        for (Py_ssize_t i = a->offsets[left[pair]]; i < a->offsets[left[pair] + 1]; i++) {
            for (Py_ssize_t j = b->offsets[right[pair]]; j < b->offsets[right[pair] + 1]; j++) {
                int32_t low = a->lows[i] > b->lows[j] ? a->lows[i] : b->lows[j];
                int32_t high = a->highs[i] < b->highs[j] ? a->highs[i] : b->highs[j];
                if (low > high) {
                    continue;
                }
                int32_t target_a = a->targets[i], target_b = b->targets[j];
                Py_ssize_t target;
                if (b->open[target_b] || a->open[target_a]) {
                    int side = b->open[target_b] ? 0 : 1;
                    if (base[side] < 0) {
                        Py_ssize_t size = sides[side].states;
                        base[side] = count;
                        if (pairs_room(&left, &right, &capacity, count + size)) {
                            goto done;
                        }
                        for (Py_ssize_t k = 0; k < size; k++) {
                            left[count + k] = right[count + k] = -1;
                            if (append_pair(pairs, -1, -1)) {
                                goto done;
                            }
                        }
                        count += size;
                        PyObject *key = PyLong_FromLong(side), *value = PyLong_FromSsize_t(base[side]);
                        int failed = key == NULL || value == NULL || PyDict_SetItem(bases, key, value);
                        Py_XDECREF(key);
                        Py_XDECREF(value);
                        if (failed) {
                            goto done;
                        }
                        if (count > limit) {
                            result = Py_NewRef(Py_None);
                            goto done;
                        }
                    }
                    target = base[side] + (side == 0 ? target_a : target_b);
                } else {
                    uint64_t key = (((uint64_t)target_a << 32) | (uint64_t)target_b) + 1;
                    size_t slot = table_slot(&table, key);
                    if (table.keys[slot] == key) {
                        target = table.values[slot];
                    } else {
                        if (count >= limit) {
                            result = Py_NewRef(Py_None);
                            goto done;
                        }
                        if (pairs_room(&left, &right, &capacity, count + 1)) {
                            goto done;
                        }
                        left[count] = target_a;
                        right[count] = target_b;
                        target = count++;
                        if (append_pair(pairs, target_a, target_b)) {
                            goto done;
                        }
                        table.keys[slot] = key;
                        table.values[slot] = (int32_t)target;
                        if (++table.size * 2 > table.capacity && table_grow(&table)) {
                            goto done;
                        }
                    }
                }
                PyObject *edge = Py_BuildValue("(iin)", low, high, target);
                if (edge == NULL || PyList_Append(row, edge)) {
                    Py_XDECREF(edge);
                    goto done;
                }
                Py_DECREF(edge);
            }
        }
        if (PyList_Append(rows, row)) {
            goto done;
        }
        Py_CLEAR(row);
    }
    result = Py_BuildValue("(OOO)", rows, pairs, bases);
done:
    Py_XDECREF(row);
    Py_XDECREF(rows);
    Py_XDECREF(pairs);
    Py_XDECREF(bases);
    PyMem_Free(left);
    PyMem_Free(right);
    PyMem_Free(table.keys);
    PyMem_Free(table.values);
    rows_free(&sides[0]);
    rows_free(&sides[1]);
    return result;
}

/* -- the pairs that can finish, after a copy ------------------------------------------ */

typedef struct {
    int32_t low, high, target;
} Edge;

static int compare_edges(const void *a, const void *b) {
    const Edge *x = a, *y = b;
    if (x->low != y->low) {
        return (x->low > y->low) - (x->low < y->low);
    }
    if (x->high != y->high) {
        return (x->high > y->high) - (x->high < y->high);
    }
    return (x->target > y->target) - (x->target < y->target);
}

static PyObject *finished_pairs(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *rows, *accepts;
    Py_ssize_t base, size;
    if (!PyArg_ParseTuple(args, "O!Onn", &PyList_Type, &rows, &accepts, &base, &size)) {
        return NULL;
    }
    Py_ssize_t states = PyList_GET_SIZE(rows), total = 0;
    if (base < 0 || size < 0 || base + size > states) {
        PyErr_SetString(PyExc_ValueError, "a copied block outside the product's states");
        return NULL;
    }
    for (Py_ssize_t state = 0; state < states; state++) {
        PyObject *row = PyList_GET_ITEM(rows, state);
        if (!PyList_Check(row)) {
            PyErr_SetString(PyExc_TypeError, "a product's row must be a list");
            return NULL;
        }
        total += PyList_GET_SIZE(row);
    }
    Py_ssize_t *offsets = PyMem_Malloc((size_t)(states + 1) * sizeof(Py_ssize_t));
    Edge *edges = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(Edge));
    Py_ssize_t *reverse_offsets = PyMem_Calloc((size_t)(states + 1), sizeof(Py_ssize_t));
    int32_t *reverse = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    int32_t *number = PyMem_Malloc((size_t)(states ? states : 1) * sizeof(int32_t));
    int32_t *stack = PyMem_Malloc((size_t)(states ? states : 1) * sizeof(int32_t));
    char *useful = PyMem_Calloc((size_t)(states ? states : 1), 1);
    char *accepting = PyMem_Calloc((size_t)(states ? states : 1), 1);
    Edge *scratch = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(Edge));
    PyObject *result = NULL, *kept = NULL, *accepted = NULL, *row_out = NULL;
    if (!offsets || !edges || !reverse_offsets || !reverse || !number || !stack || !useful || !accepting || !scratch) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t at = 0;
    for (Py_ssize_t state = 0; state < states; state++) {
        PyObject *row = PyList_GET_ITEM(rows, state);
        offsets[state] = at;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(row); i++, at++) {
            PyObject *edge = PyList_GET_ITEM(row, i);
            if (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 3) {
                PyErr_SetString(PyExc_TypeError, "an edge must be a (low, high, target) tuple");
                goto done;
            }
            if (int_item(edge, 0, &edges[at].low) || int_item(edge, 1, &edges[at].high) || int_item(edge, 2, &edges[at].target)) {
                goto done;
            }
            if (edges[at].target < 0 || edges[at].target >= states) {
                PyErr_SetString(PyExc_ValueError, "an edge leads to no state of the product");
                goto done;
            }
        }
    }
    offsets[states] = at;
    if (read_states(accepts, states, accepting)) {
        goto done;
    }
    memset(accepting + base, 0, (size_t)size); /* the copy's accepting states are its machine's */
    /* Which pairs can finish: those accepting, those entering the copy (every state of it can
    finish), and those leading to either, found on the pairs' reversed edges. */
    Py_ssize_t depth = 0;
    for (Py_ssize_t state = 0; state < states; state++) {
        if (state >= base && state < base + size) {
            continue;
        }
        for (Py_ssize_t i = offsets[state]; i < offsets[state + 1]; i++) {
            int32_t target = edges[i].target;
            if (target >= base && target < base + size) {
                accepting[state] |= 2;
            } else {
                reverse_offsets[target + 1]++;
            }
        }
        if (accepting[state]) {
            useful[state] = 1;
            stack[depth++] = (int32_t)state;
        }
    }
    for (Py_ssize_t state = 0; state < states; state++) {
        reverse_offsets[state + 1] += reverse_offsets[state];
    }
    Py_ssize_t *fill = PyMem_Malloc((size_t)(states ? states : 1) * sizeof(Py_ssize_t));
    if (fill == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(fill, reverse_offsets, (size_t)states * sizeof(Py_ssize_t));
    for (Py_ssize_t state = 0; state < states; state++) {
        if (state >= base && state < base + size) {
            continue;
        }
        for (Py_ssize_t i = offsets[state]; i < offsets[state + 1]; i++) {
            int32_t target = edges[i].target;
            if (!(target >= base && target < base + size)) {
                reverse[fill[target]++] = (int32_t)state;
            }
        }
    }
    PyMem_Free(fill);
    while (depth > 0) {
        int32_t state = stack[--depth];
        for (Py_ssize_t i = reverse_offsets[state]; i < reverse_offsets[state + 1]; i++) {
            if (!useful[reverse[i]]) {
                useful[reverse[i]] = 1;
                stack[depth++] = reverse[i];
            }
        }
    }
    if (!useful[0]) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    Py_ssize_t count = 0;
    for (Py_ssize_t state = 0; state < states; state++) {
        if (state >= base && state < base + size) {
            number[state] = (int32_t)(state - base);
        } else {
            number[state] = useful[state] ? (int32_t)(size + count++) : -1;
        }
    }
    kept = PyTuple_New(count);
    accepted = PyList_New(0);
    if (kept == NULL || accepted == NULL) {
        goto done;
    }
    Py_ssize_t index = 0;
    for (Py_ssize_t state = 0; state < states; state++) {
        if (number[state] < 0 || (state >= base && state < base + size)) {
            continue;
        }
        Py_ssize_t length = 0;
        for (Py_ssize_t i = offsets[state]; i < offsets[state + 1]; i++) {
            if (number[edges[i].target] >= 0) {
                scratch[length] = edges[i];
                scratch[length++].target = number[edges[i].target];
            }
        }
        qsort(scratch, (size_t)length, sizeof(Edge), compare_edges);
        /* Duplicates dropped and ranges to one target joined where the one before reaches them
        (sorted: an edge never starts before the one it may join), as charnfa._merged does. */
        Py_ssize_t joined = 0;
        for (Py_ssize_t i = 0; i < length; i++) {
            if (joined > 0 && scratch[joined - 1].target == scratch[i].target && (int64_t)scratch[joined - 1].high + 1 >= scratch[i].low) {
                if (scratch[i].high > scratch[joined - 1].high) {
                    scratch[joined - 1].high = scratch[i].high;
                }
            } else {
                scratch[joined++] = scratch[i];
            }
        }
        row_out = PyTuple_New(joined);
        if (row_out == NULL) {
            goto done;
        }
        for (Py_ssize_t i = 0; i < joined; i++) {
            PyObject *edge = Py_BuildValue("(iii)", scratch[i].low, scratch[i].high, scratch[i].target);
            if (edge == NULL) {
                goto done;
            }
            PyTuple_SET_ITEM(row_out, i, edge);
        }
        PyTuple_SET_ITEM(kept, index++, row_out);
        row_out = NULL;
        if (accepting[state] & 1) {
            PyObject *accepted_number = PyLong_FromLong(number[state]);
            if (accepted_number == NULL || PyList_Append(accepted, accepted_number)) {
                Py_XDECREF(accepted_number);
                goto done;
            }
            Py_DECREF(accepted_number);
        }
    }
    result = Py_BuildValue("(OiO)", kept, number[0], accepted);
done:
    Py_XDECREF(row_out);
    Py_XDECREF(kept);
    Py_XDECREF(accepted);
    PyMem_Free(offsets);
    PyMem_Free(edges);
    PyMem_Free(reverse_offsets);
    PyMem_Free(reverse);
    PyMem_Free(number);
    PyMem_Free(stack);
    PyMem_Free(useful);
    PyMem_Free(accepting);
    PyMem_Free(scratch);
    return result;
}

/* -- the fewest bytes from each state to acceptance ------------------------------------ */

typedef struct {
    int64_t cost;
    int32_t state;
} Entry;

typedef struct {
    Entry *items;
    Py_ssize_t size, capacity;
} Heap;

static int heap_push(Heap *heap, int64_t cost, int32_t state) {
    if (heap->size == heap->capacity) {
        Py_ssize_t capacity = heap->capacity ? 2 * heap->capacity : 256;
        Entry *grown = PyMem_Realloc(heap->items, (size_t)capacity * sizeof(Entry));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        heap->items = grown;
        heap->capacity = capacity;
    }
    Py_ssize_t at = heap->size++;
    while (at > 0) {
        Py_ssize_t parent = (at - 1) / 2;
        if (heap->items[parent].cost <= cost) {
            break;
        }
        heap->items[at] = heap->items[parent];
        at = parent;
    }
    heap->items[at].cost = cost;
    heap->items[at].state = state;
    return 0;
}

static Entry heap_pop(Heap *heap) {
    Entry top = heap->items[0], last = heap->items[--heap->size];
    Py_ssize_t at = 0;
    for (;;) {
        Py_ssize_t child = 2 * at + 1;
        if (child >= heap->size) {
            break;
        }
        if (child + 1 < heap->size && heap->items[child + 1].cost < heap->items[child].cost) {
            child++;
        }
        if (heap->items[child].cost >= last.cost) {
            break;
        }
        heap->items[at] = heap->items[child];
        at = child;
    }
    if (heap->size > 0) {
        heap->items[at] = last;
    }
    return top;
}

/* The cost of an edge's characters, asked of `cost_of` once per range (a machine repeats the
same few ranges on edge after edge): -1 where no character of it can be written. */
typedef struct {
    uint64_t *keys;
    int32_t *values;
    size_t capacity, size;
    PyObject *cost_of;
} Costs;

static int costs_get(Costs *costs, int32_t low, int32_t high, int32_t *out) {
    uint64_t key = (((uint64_t)(uint32_t)low << 32) | (uint64_t)(uint32_t)high) + 1;
    Table view = {costs->keys, costs->values, costs->capacity, costs->size};
    size_t slot = table_slot(&view, key);
    if (costs->keys[slot] == key) {
        *out = costs->values[slot];
        return 0;
    }
    PyObject *found = PyObject_CallFunction(costs->cost_of, "ii", low, high);
    if (found == NULL) {
        return -1;
    }
    int32_t value = -1;
    if (found != Py_None) {
        long number = PyLong_AsLong(found);
        if (number == -1 && PyErr_Occurred()) {
            Py_DECREF(found);
            return -1;
        }
        value = (int32_t)number;
    }
    Py_DECREF(found);
    costs->keys[slot] = key;
    costs->values[slot] = value;
    *out = value;
    if (++costs->size * 2 > costs->capacity) {
        view.keys = costs->keys;
        view.values = costs->values;
        view.size = costs->size;
        if (table_grow(&view)) {
            return -1;
        }
        costs->keys = view.keys;
        costs->values = view.values;
        costs->capacity = view.capacity;
    }
    return 0;
}

static PyObject *fewest_bytes(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *edges, *accepts, *cost_of, *known;
    Py_ssize_t first;
    if (!PyArg_ParseTuple(args, "O!OOnO", &PyTuple_Type, &edges, &accepts, &cost_of, &first, &known)) {
        return NULL;
    }
    Py_ssize_t states = PyTuple_GET_SIZE(edges);
    if (first < 0 || first > states || (first > 0 && (!PyList_Check(known) || PyList_GET_SIZE(known) != first))) {
        PyErr_SetString(PyExc_ValueError, "the known distances must be a list of the first states'");
        return NULL;
    }
    int64_t *distance = PyMem_Malloc((size_t)(states ? states : 1) * sizeof(int64_t));
    Py_ssize_t *reverse_offsets = PyMem_Calloc((size_t)states + 1, sizeof(Py_ssize_t));
    Py_ssize_t total = 0;
    for (Py_ssize_t state = first; state < states; state++) {
        PyObject *row = PyTuple_GET_ITEM(edges, state);
        if (!PyTuple_Check(row)) {
            PyMem_Free(distance);
            PyMem_Free(reverse_offsets);
            PyErr_SetString(PyExc_TypeError, "a machine's row must be a tuple");
            return NULL;
        }
        total += PyTuple_GET_SIZE(row);
    }
    int32_t *sources = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    int32_t *steps = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    int32_t *edge_target = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    int32_t *edge_cost = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    int32_t *edge_source = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(int32_t));
    Costs costs = {PyMem_Calloc(256, sizeof(uint64_t)), PyMem_Malloc(256 * sizeof(int32_t)), 256, 0, cost_of};
    Heap heap = {NULL, 0, 0};
    char *accepting = NULL;
    PyObject *result = NULL;
    if (!distance || !reverse_offsets || !sources || !steps || !edge_target || !edge_cost || !edge_source || !costs.keys ||
        !costs.values) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t state = 0; state < states; state++) {
        distance[state] = -1;
    }
    for (Py_ssize_t state = 0; state < first; state++) {
        PyObject *value = PyList_GET_ITEM(known, state);
        if (value != Py_None) {
            distance[state] = PyLong_AsLongLong(value);
            if (distance[state] == -1 && PyErr_Occurred()) {
                goto done;
            }
        }
    }
    /* Every edge of the states searched, with its cost; those into a known state seed the
    search with what entering it costs, the others are kept reversed. */
    Py_ssize_t at = 0;
    for (Py_ssize_t state = first; state < states; state++) {
        PyObject *row = PyTuple_GET_ITEM(edges, state);
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(row); i++) {
            PyObject *edge = PyTuple_GET_ITEM(row, i);
            int32_t low, high, target, cost;
            if (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 3) {
                PyErr_SetString(PyExc_TypeError, "an edge must be a (low, high, target) tuple");
                goto done;
            }
            if (int_item(edge, 0, &low) || int_item(edge, 1, &high) || int_item(edge, 2, &target)) {
                goto done;
            }
            if (target < 0 || target >= states) {
                PyErr_SetString(PyExc_ValueError, "an edge leads to no state of its machine");
                goto done;
            }
            if (costs_get(&costs, low, high, &cost)) {
                goto done;
            }
            if (cost < 0) {
                continue;
            }
            if (target < first) {
                if (distance[target] >= 0 && heap_push(&heap, distance[target] + cost, (int32_t)state)) {
                    goto done;
                }
                continue;
            }
            edge_source[at] = (int32_t)state;
            edge_target[at] = target;
            edge_cost[at++] = cost;
            reverse_offsets[target + 1]++;
        }
    }
    for (Py_ssize_t state = 0; state < states; state++) {
        reverse_offsets[state + 1] += reverse_offsets[state];
    }
    for (Py_ssize_t i = 0; i < at; i++) { /* placed by target, kept in the order met */
        Py_ssize_t slot = reverse_offsets[edge_target[i]]++;
        sources[slot] = edge_source[i];
        steps[slot] = edge_cost[i];
    }
    for (Py_ssize_t state = states; state > 0; state--) {
        reverse_offsets[state] = reverse_offsets[state - 1];
    }
    reverse_offsets[0] = 0;
    accepting = PyMem_Calloc((size_t)(states ? states : 1), 1);
    if (accepting == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (read_states(accepts, states, accepting)) {
        goto done;
    }
    for (Py_ssize_t state = first; state < states; state++) {
        if (accepting[state] && heap_push(&heap, 0, (int32_t)state)) {
            goto done;
        }
    }
    while (heap.size > 0) {
        Entry entry = heap_pop(&heap);
        if (distance[entry.state] >= 0) {
            continue;
        }
        distance[entry.state] = entry.cost;
        for (Py_ssize_t i = reverse_offsets[entry.state]; i < reverse_offsets[entry.state + 1]; i++) {
            if (distance[sources[i]] < 0 && heap_push(&heap, entry.cost + steps[i], sources[i])) {
                goto done;
            }
        }
    }
    result = PyList_New(states);
    if (result == NULL) {
        goto done;
    }
    for (Py_ssize_t state = 0; state < states; state++) {
        PyObject *value = distance[state] < 0 ? Py_NewRef(Py_None) : PyLong_FromLongLong(distance[state]);
        if (value == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, state, value);
    }
done:
    PyMem_Free(distance);
    PyMem_Free(reverse_offsets);
    PyMem_Free(sources);
    PyMem_Free(steps);
    PyMem_Free(edge_target);
    PyMem_Free(edge_cost);
    PyMem_Free(edge_source);
    PyMem_Free(costs.keys);
    PyMem_Free(costs.values);
    PyMem_Free(heap.items);
    PyMem_Free(accepting);
    return result;
}

static PyMethodDef methods[] = {
    {"product_pairs", product_pairs, METH_VARARGS,
     "product_pairs(first_edges, first_start, second_edges, second_start, first_open, second_open, limit)\n"
     "-> (rows, pairs, bases) or None\n\n"
     "product_pairs.product_pairs: the product's rows (a copied state's empty), its pairs by number ((-1, -1)\n"
     "for a copied state) and where each copied machine's block begins, by side; None past `limit` states."},
    {"finished_pairs", finished_pairs, METH_VARARGS,
     "finished_pairs(rows, accepts, base, size) -> (rows, start, accepts) or None\n\n"
     "product_pairs.finished_pairs: the rows of the pairs that can finish, renumbered after the copy's `size`\n"
     "states, sorted and joined; the start's number; the accepting pairs' numbers. None where the start cannot finish."},
    {"fewest_bytes", fewest_bytes, METH_VARARGS,
     "fewest_bytes(edges, accepts, cost_of, first, known) -> list\n\n"
     "measure's distances: the fewest bytes from each state of a machine to an accepting one (None where none\n"
     "is reached), by Dijkstra's search on reversed edges, an edge costing cost_of(low, high) (None: unusable).\n"
     "The first `first` states' are `known` already (a copied machine's), and an edge into one costs the edge and its."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_product", "The pairs of a product of two character machines, in C.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__product(void) { return PyModule_Create(&module); }
