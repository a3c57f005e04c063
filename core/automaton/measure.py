"""What the NFA knows of a regex tree before it builds a state: the fewest bytes each node
matches, in the generator's automaton or the one accepting every text, and a bound on the
fewest bytes from any point inside a node to its end. Measured once per node and kept on it (a
node never changes), so a tree shared by compilations is measured once per process.
"""

from __future__ import annotations

import functools
import heapq
import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from .escapes import escape_lengths, without_escaped
from .regex import Alt, AnyOrder, Chars, Counted, Either, Lit, Machine, Node, Repeat, Seq, children

try:  # compiled at install where a C compiler is found (setup.py); else the same work in Python
    from . import _product
except ImportError:  # pragma: no cover - an install without a compiler
    _product = None  # type: ignore[assignment]
from .utf8 import utf8_sequences


def most_to_finish(tree: Node) -> int:
    """A bound on the fewest bytes from any point inside `tree` to its end, in the generator's
    automaton (see NFA.most_to_finish): inside a part of a sequence, that part's bound and the
    shortest of the parts after it; inside a copy of a repeat, the copy's bound and the
    shortest of the copies still required after it. Kept on the nodes; iterative."""
    stack: list[tuple[Node, bool]] = [(tree, False)]
    while stack:
        node, children_done = stack.pop()
        if _MOST in node.__dict__:
            continue
        inside = children(node)
        if not children_done and inside:
            stack.append((node, True))
            stack.extend((child, False) for child in inside if _MOST not in child.__dict__)
            continue
        node.__dict__[_MOST] = _node_most(node)
    found: int = tree.__dict__[_MOST]
    return found


def _node_most(node: Node) -> int:
    """most_to_finish of `node`, its children's kept already."""
    if isinstance(node, Lit):
        return len(node.data)
    if isinstance(node, Seq):
        most, after = 0, 0
        for part in reversed(node.parts):
            most = max(most, part.__dict__[_MOST] + after)
            after += GENERATED.measure(part) or 0
        return most
    if isinstance(node, Alt):
        return max((option.__dict__[_MOST] for option in node.options), default=0)
    if isinstance(node, Either):
        generated: int = node.generated.__dict__[_MOST]
        return generated
    if isinstance(node, Repeat):
        item = GENERATED.measure(node.item) or 0
        return max(node.low * item, node.item.__dict__[_MOST] + max(node.low - 1, 0) * item)
    if isinstance(node, Machine):
        return _LONGEST_CHARACTER + max((d for d in ShortestMatch.machine(node) if d is not None), default=0)
    if isinstance(node, Counted):  # no pair needs more than its fewest over some count of characters
        table = _counted_table(node)
        return _LONGEST_CHARACTER + int(table[table < _UNREACHED].max(initial=0))
    return _LONGEST_CHARACTER  # a character (Chars), and any node no generated text holds (AnyOrder)


# The most bytes one character may take as JSON writes it: a surrogate pair of `\u` escapes.
_LONGEST_CHARACTER = 12
_MOST = "most_to_finish"


def shortest_generated(node: Node) -> int | None:
    """The fewest bytes of the texts the generator writes for `node` (None: it matches
    nothing). Kept on the node, where the generator's NFA finds it: measuring a tree before
    its NFA is built (the schema's floors) costs the NFA nothing more."""
    return GENERATED.measure(node)


def keep_shortest_generated(node: Node, fewest: int) -> None:
    """Keep `fewest` as the fewest bytes the generator writes for `node`, known from how it
    was built (an object's required members and separators): the generator's measure reads it
    as measured, and what lies inside is measured only when a walk names it."""
    node.__dict__.setdefault(_SHORTEST, fewest)


class ShortestMatch:
    """Fewest bytes each node matches (None: it matches nothing), over a DAG, for one of the
    two automata (the generator's, through each Either's `generated`, or the one accepting
    every text), so the generator's never measures what only the other reads. Kept on the
    nodes themselves (a node never changes), one entry per automaton: a tree shared by
    compilations (a format's, a string character's) is measured once per process."""

    def __init__(self, accepting_all: bool) -> None:
        self._accepting_all = accepting_all
        self._key = _SHORTEST_ALL if accepting_all else _SHORTEST
        self._depth = 0  # measures under way, one inside another

    @staticmethod
    def machine(node: Machine) -> list[int | None]:
        """The fewest bytes from each of the machine's states to acceptance (kept on the node)."""
        kept = node.__dict__
        if _DISTANCES not in kept:
            kept[_DISTANCES] = _machine_distances(node)
        found: list[int | None] = kept[_DISTANCES]
        return found

    def any_order(self, node: AnyOrder, written: int, wrote: bool, separated: bool = False) -> int | None:
        """Fewest bytes to finish members in any order, `written` (bits) written so far:
        each required member not yet written, `", "` before each but a first; `separated`:
        just after a `", "`, where a member must come (the shortest of those left where no
        required one is)."""
        missing = [self.measure(node.members[index]) for index in node.required if not written >> index & 1]
        total = _sum(missing)
        if separated and not missing:
            left = [member for index, member in enumerate(node.members) if not written >> index & 1]
            return _least(self._parts((*left, node.undeclared) if node.undeclared is not None else tuple(left)))
        if total is None or not missing:
            return total
        return total + 2 * len(missing) - (0 if wrote and not separated else 2)

    def missing_required(self, node: AnyOrder, written: int) -> tuple[int | None, int]:
        """The fewest bytes of the required members not in `written` (bits), together (None:
        one of them matches nothing), and how many they are."""
        missing = [self.measure(node.members[index]) for index in node.required if not written >> index & 1]
        return _sum(missing), len(missing)

    def measure(self, node: Node) -> int | None:
        """The node's fewest bytes, measured on first asking (a node AnyOrder makes later too).
        Recursive, and past _DEEPEST measures one inside another (an object of thousands of
        members, its fewest bytes kept as built, measured inside only when a walk names it), by
        a stack of its own: well before the interpreter's recursion limit, where anything run
        meanwhile (a finalizer the cyclic collector calls) would fail for want of stack."""
        kept = node.__dict__
        found: int | None = kept.get(self._key, _UNMEASURED)
        if found is _UNMEASURED:
            if self._depth >= _DEEPEST:
                return self._measure_by_stack(node)
            self._depth += 1
            try:
                found = kept[self._key] = self._measure(node)
            except RecursionError:  # called deep already: the stack's way, from here
                found = self._measure_by_stack(node)
            finally:
                self._depth -= 1
        return found

    def _measure_by_stack(self, root: Node) -> int | None:
        """measure(root) with an explicit stack: each node measured once every node its own
        measure reads is (what was kept before the recursion ran out stays: each was whole)."""
        key = self._key
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, ready = stack.pop()
            if key in node.__dict__:
                continue
            if not ready:
                below = [child for child in self._read_by(node) if key not in child.__dict__]
                if below:
                    stack.append((node, True))
                    stack.extend((child, False) for child in below)
                    continue
            node.__dict__[key] = self._measure(node)  # (what it reads is kept: no recursion)
        found: int | None = root.__dict__[key]
        return found

    def _read_by(self, node: Node) -> tuple[Node, ...]:
        """The nodes whose measures `_measure(node)` reads."""
        if isinstance(node, Seq):
            return node.parts
        if isinstance(node, Alt):
            return node.options
        if isinstance(node, Either):
            return (node.accepted if self._accepting_all else node.generated,)
        if isinstance(node, AnyOrder):
            return tuple(node.members[index] for index in node.required)
        if isinstance(node, Repeat):
            return (node.item,)
        return ()

    def _parts(self, parts: tuple[Node, ...]) -> list[int | None]:
        """measure() of each part, a kept value read without a call (trees share most of
        their nodes: keys, separators, a string's characters)."""
        key, found = self._key, []
        for part in parts:
            value = part.__dict__.get(key, _UNMEASURED)
            found.append(self.measure(part) if value is _UNMEASURED else value)
        return found

    def _measure(self, node: Node) -> int | None:
        if isinstance(node, Seq):
            return _sum(self._parts(node.parts))  # every part: each may be named later
        if isinstance(node, Alt):
            return _least(self._parts(node.options))
        if isinstance(node, Lit):
            return len(node.data)
        if isinstance(node, Chars):
            return _fewest_character_bytes(node.ranges)
        if isinstance(node, Machine):
            return self.machine(node)[node.start]
        if isinstance(node, Counted):
            return counted_distance(node, node.machine.start, 0)
        if isinstance(node, Either):
            return self.measure(node.accepted if self._accepting_all else node.generated)
        if isinstance(node, AnyOrder):  # the members left out are measured when the NFA names them
            return self.any_order(node, 0, False)
        item = self.measure(node.item)
        if node.low == 0:
            return 0
        return None if item is None else node.low * item


def counted_distance(node: Counted, position: int, count: int) -> int | None:
    """Fewest bytes from `position` of a Counted's machine, `count` characters read, to its
    end (None: no string of a length the bounds allow ends from there)."""
    table = _counted_table(node)
    fewest = max(node.low - count, 0)
    most = len(table) - 1 if node.high is None else min(node.high - count, len(table) - 1)
    if fewest > most:
        return None
    found = int(table[fewest : most + 1, position].min())
    return None if found >= _UNREACHED else found


def counted_cells(low: int, high: int | None, states: int) -> int:
    """How many cells the table of a Counted of these bounds over a machine of `states` holds
    (see _counted_table): what measuring it costs."""
    return (_last_count(low, high, states) + 1) * states


def _last_count(low: int, high: int | None, states: int) -> int:
    """The most characters a Counted's table counts to (see _counted_table)."""
    return low + states if high is None else min(high, low + states)


def _counted_table(node: Counted) -> npt.NDArray[np.int32]:
    """By count k and position, the fewest bytes of a string of exactly k characters from the
    position to acceptance; kept on the node. k need not pass `low` plus the machine's states
    (or `high`): a cheapest string longer than the fewest characters it must have plus that
    repeats a position past them, and cut there it is shorter and still long enough. One
    array step per count, each over the machine's edges (the cheapest per pair of states)."""
    kept = node.__dict__
    found: npt.NDArray[np.int32] | None = kept.get(_COUNTED)
    if found is not None:
        return found
    machine, size = node.machine, len(node.machine.edges)
    last = _last_count(node.low, node.high, size)
    sources: list[int] = []
    targets: list[int] = []
    costs: list[int] = []
    for source, row in enumerate(machine.edges):
        cheapest: dict[int, int] = {}
        for low, high, target in row:
            cost = _edge_bytes(low, high)
            if cost is not None and cost < cheapest.get(target, cost + 1):
                cheapest[target] = cost
        sources.extend(itertools.repeat(source, len(cheapest)))
        targets.extend(cheapest)
        costs.extend(cheapest.values())
    table = np.full((last + 1, size), _UNREACHED, dtype=np.int32)
    table[0, sorted(machine.accepts)] = 0
    # Unreached stays at or above _UNREACHED: a count adds at most 12 bytes a step, and no table
    # counts past 4,096 (the most minLength) plus 40,000 (a machine's most states).
    if sources:
        ordered = np.array(sources)
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        rows, into, cost_of = ordered[starts], np.array(targets), np.array(costs, dtype=np.int32)
        for count in range(1, last + 1):
            table[count, rows] = np.minimum.reduceat(cost_of + table[count - 1, into], starts)
    kept[_COUNTED] = table
    return table


def _sum(values: Iterable[int | None]) -> int | None:
    total = 0
    for value in values:
        if value is None:
            return None
        total += value
    return total


def _least(values: Iterable[int | None]) -> int | None:
    return min((value for value in values if value is not None), default=None)


# Where a node keeps its measurements (frozen dataclasses: written to __dict__ directly).
_SHORTEST = "_shortest_bytes"
_SHORTEST_ALL = "_shortest_bytes_accepting_all"
_DISTANCES = "_machine_distances"
_COUNTED = "_counted_table"
_UNREACHED = 1 << 30  # in a Counted's table: no string ends from there with that count
GENERATED = ShortestMatch(accepting_all=False)
_UNMEASURED: Any = object()
# Measures one inside another before the rest go by a stack: each is three frames (measure,
# _measure, _parts), so 150 stay well inside the interpreter's default limit of 1,000.
_DEEPEST = 150


@functools.lru_cache(maxsize=4096)
def _fewest_character_bytes(ranges: tuple[tuple[int, int], ...]) -> int | None:
    """_fewest_bytes of a character class. Cached: classes of hundreds of ranges (a negated
    class, \\w) come back in node after node."""
    return _fewest_bytes(ranges)


def _fewest_bytes(ranges: tuple[tuple[int, int], ...] | list[tuple[int, int]]) -> int | None:
    lengths = [len(sequence) for low, high in ranges for sequence in utf8_sequences(low, high)]
    return min(lengths) if lengths else None


def fewest_character_bytes(low: int, high: int) -> int | None:
    """Fewest bytes one character in [low, high] takes inside a JSON string (None: none can)."""
    return _edge_bytes(low, high)


@functools.cache
def _edge_bytes(low: int, high: int) -> int | None:
    """Fewest bytes one character in [low, high] takes inside a JSON string. Cached: a
    character automaton repeats the same few ranges on edge after edge."""
    escaped = escape_lengths(low, high)
    plain = _fewest_bytes(without_escaped(low, high))
    costs = [cost for cost in (plain, None if escaped is None else escaped[0]) if cost is not None]
    return min(costs) if costs else None


def keep_distances_near_acceptance(node: Machine, unaccepted: Iterable[int]) -> bool:
    """Where each position the machine does not accept (`unaccepted`, all of them) has a
    character of one byte to one it accepts (the trie of the words a name must not be), its
    distances are that: 0 and 1, kept on the node without a search (exact: a position not
    accepting needs a byte at least). False, with nothing kept, where some position has none."""
    accepts, distances = node.accepts, [0] * len(node.edges)
    for position in unaccepted:
        if not any(target in accepts and _edge_bytes(low, high) == 1 for low, high, target in node.edges[position]):
            return False
        distances[position] = 1
    node.__dict__[_DISTANCES] = distances
    return True


def machine_distances(node: Machine) -> list[int | None]:
    """The fewest bytes from each of the machine's states to acceptance (None: it cannot
    finish from there), kept on the node."""
    return ShortestMatch.machine(node)


def keep_distances_after_copy(node: Machine, copied: Machine) -> None:
    """Keep on `node`, a product whose first states are `copied`'s own (the same rows, leading
    nowhere else) and whose others lead into them or among themselves, the fewest bytes from
    each state to acceptance: the copy's are `copied`'s, and a search from them, on the
    others' reversed edges, finds the rest (entering the copy costs the edge and its state's)."""
    own = machine_distances(copied)
    node.__dict__[_DISTANCES] = _distances_to_acceptance(node.edges, node.accepts, len(own), own)


def _machine_distances(node: Machine) -> list[int | None]:
    """Fewest bytes from each machine state to an accepting one."""
    return _distances_to_acceptance(node.edges, node.accepts, 0, [])


def _distances_to_acceptance(
    edges: tuple[tuple[tuple[int, int, int], ...], ...], accepts: Iterable[int], first: int, known: list[int | None]
) -> list[int | None]:
    """The fewest bytes from each state to an accepting one (None: none is reached), by
    Dijkstra's search on reversed edges, an edge costing its characters' fewest bytes. The
    first `first` states' are `known` already (a copied machine's): an edge into one costs the
    edge and its. In C where setup.py built core/automaton/_product.c, else here."""
    if _product is not None:
        return _product.fewest_bytes(edges, accepts, _edge_bytes, first, known)
    distance: list[int | None] = [*known, *([None] * (len(edges) - first))]
    reverse: dict[int, list[tuple[int, int]]] = {}
    queue = [(0, state) for state in accepts if state >= first]
    for source in range(first, len(edges)):
        cheapest: dict[int, int] = {}  # by target: a row's many ranges lead to few states
        for low, high, target in edges[source]:
            cost = _edge_bytes(low, high)
            if cost is not None and cost < cheapest.get(target, cost + 1):
                cheapest[target] = cost
        for target, cost in cheapest.items():
            if target >= first:
                reverse.setdefault(target, []).append((source, cost))
            elif (entered := known[target]) is not None:
                queue.append((cost + entered, source))
    heapq.heapify(queue)
    while queue:
        cost, state = heapq.heappop(queue)
        if distance[state] is not None:
            continue
        distance[state] = cost
        for source, step in reverse.get(state, ()):
            if distance[source] is None:
                heapq.heappush(queue, (cost + step, source))
    return distance
