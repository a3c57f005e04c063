"""Character automata for string contents that must satisfy several constraints at once.

A regex tree cannot express "matches this pattern AND has 3 to 12 characters AND is a
date", so a string body with more than one constraint is built here instead: each
constraint becomes an epsilon-free NFA over Unicode code points, the NFAs are intersected
by a product construction, and the result is embedded in the byte NFA as one `Machine`
node (the byte layer adds JSON escaping). Sizes are bounded: a product that would exceed
`state_limit` raises AutomatonTooLarge instead of growing without bound.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from .excluded_words import ANY_CHAR
from .measure import counted_cells, keep_distances_after_copy, machine_distances
from .product_pairs import able_to_reach, finished_pairs, merged_row, product_pairs
from .regex import Alt, Chars, Counted, Lit, Machine, Node, Repeat, Seq, Text

MACHINE_STATE_LIMIT = 40_000


class AutomatonTooLarge(Exception):
    """A product automaton would exceed its state budget."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit} automaton states")
        self.limit = limit


Edge = tuple[int, int, int]


class _Builder:
    """Thompson construction over code points: fragments with one entry and one exit."""

    def __init__(self, state_limit: int) -> None:
        self.edges: list[list[Edge]] = []
        self.epsilons: list[list[int]] = []
        self.limit = state_limit

    def state(self) -> int:
        if len(self.edges) >= self.limit:
            raise AutomatonTooLarge(self.limit)
        self.edges.append([])
        self.epsilons.append([])
        return len(self.edges) - 1

    def build(self, node: Node, exit_state: int) -> int:
        """The entry state of `node`, which ends in `exit_state`."""
        if isinstance(node, Lit):
            for char in reversed(node.data.decode("utf-8")):
                entry = self.state()
                self.edges[entry].append((ord(char), ord(char), exit_state))
                exit_state = entry
            return exit_state
        if isinstance(node, Chars):
            entry = self.state()
            self.edges[entry].extend((low, high, exit_state) for low, high in node.ranges)
            return entry
        if isinstance(node, Seq):
            for part in reversed(node.parts):
                exit_state = self.build(part, exit_state)
            return exit_state
        if isinstance(node, Alt):
            entry = self.state()
            self.epsilons[entry].extend(self.build(option, exit_state) for option in node.options)
            return entry
        if isinstance(node, Repeat) and not isinstance(node, Text):  # a Text is written in bytes, escapes and all
            return self._repeat(node, exit_state)
        if isinstance(node, Counted):  # (the strings of a schema come here built, never through a tree)
            node = within_lengths(node.machine, node.low, node.high)
        if isinstance(node, Machine):  # a machine already over characters (a number's digits, bounds)
            states = [self.state() for _ in node.edges]
            for position, row in enumerate(node.edges):
                self.edges[states[position]].extend((low, high, states[target]) for low, high, target in row)
            for position in node.accepts:
                self.epsilons[states[position]].append(exit_state)
            return states[node.start]
        raise TypeError(f"a string body cannot contain {type(node).__name__}")

    def _repeat(self, node: Repeat, exit_state: int) -> int:
        if node.high is None:
            loop = self.state()
            self.epsilons[loop].extend((self.build(node.item, loop), exit_state))
            tail = loop
        else:
            tail = exit_state
            for _ in range(node.high - node.low):
                split = self.state()
                self.epsilons[split].extend((self.build(node.item, tail), exit_state))
                tail = split
        for _ in range(node.low):
            tail = self.build(node.item, tail)
        return tail

    def closure(self, state: int) -> set[int]:
        seen = {state}
        stack = [state]
        while stack:
            for target in self.epsilons[stack.pop()]:
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        return seen


def machine_from_tree(node: Node, state_limit: int = MACHINE_STATE_LIMIT) -> Machine:
    """The characters `node` matches, as an epsilon-free machine (trimmed to useful states)."""
    builder = _Builder(state_limit)
    accept = builder.state()
    start = builder.build(node, accept)
    # Only the start and the states a character leads to are the machine's: the others (an
    # alternation's split, a repeat's loop) are passed through by their closures.
    entered = {start} | {target for row in builder.edges for _, _, target in row}
    edges: list[list[Edge]] = [[] for _ in builder.edges]
    accepts = set()
    for state in entered:
        closure = builder.closure(state)
        edges[state] = [edge for member in closure for edge in builder.edges[member]]
        if accept in closure:
            accepts.add(state)
    return _trimmed(edges, start, accepts)


def length_machine(low: int, high: int | None) -> Machine:
    """Any characters, between `low` and `high` of them (no upper bound when None)."""
    last = low if high is None else high
    edges: list[list[Edge]] = [[(a, b, state + 1) for a, b in ANY_CHAR] if state < last else [] for state in range(last + 1)]
    if high is None:
        edges[last] = [(a, b, last) for a, b in ANY_CHAR]
    return _trimmed(edges, 0, set(range(low, last + 1)))


def multiple_machine(divisor: int, zeros: int = 0) -> Machine:
    """Decimal integers (optionally negative) divisible by `divisor` * 10**zeros: one state
    per remainder of `divisor`, read digit by digit, then `zeros` zero digits (and 0 itself).
    Intersect with an integer syntax to forbid leading zeros."""
    sign, first, zero = divisor, divisor + 1, divisor + 2  # state ids past the remainders 0..divisor-1
    tail = list(range(divisor + 3, divisor + 3 + zeros))  # the i-th state has read i + 1 final zeros
    edges: list[list[Edge]] = [[] for _ in range(divisor + 3 + zeros)]
    for remainder in range(divisor):
        edges[remainder] = [(0x30 + d, 0x30 + d, (remainder * 10 + d) % divisor) for d in range(10)]
    edges[first] = [(0x2D, 0x2D, sign), (0x30, 0x30, zero), *((0x30 + d, 0x30 + d, d % divisor) for d in range(10))]
    edges[sign] = [(0x30 + d, 0x30 + d, d % divisor) for d in range(10)]
    if tail:
        edges[0].append((0x30, 0x30, tail[0]))  # a multiple of `divisor`, then the zeros
        for state, following in itertools.pairwise(tail):
            edges[state] = [(0x30, 0x30, following)]
    return _trimmed(edges, first, {tail[-1] if tail else 0, zero})


def intersect(first: Machine, second: Machine, state_limit: int = MACHINE_STATE_LIMIT) -> Machine:
    """The characters both machines match: a product over the reachable pairs of states.

    Where one machine's state accepts every string from there on (a pattern's open end:
    `^https?://` then anything), the product goes on as the other machine alone: that machine
    is copied whole, once, rather than paired state by state (a uri's machine of thousands of
    states meets such patterns in schema after schema)."""
    machines = (first, second)
    found = product_pairs(first, second, (_open_ends(first), _open_ends(second)), state_limit)
    if found is None:
        raise AutomatonTooLarge(state_limit)
    edges, pairs, bases = found
    first_accepts, second_accepts = first.accepts, second.accepts
    accepts = {i for i, (a, b) in enumerate(pairs) if a in first_accepts and b in second_accepts}
    if not bases:  # pairs alone, each reached: those that can finish, as _trimmed keeps them
        kept = finished_pairs(edges, accepts, len(edges), 0)
        return Machine(((),), 0, frozenset()) if kept is None else Machine(kept[0], kept[1], frozenset(kept[2]))
    if len(bases) == 1:
        ((side, base),) = bases.items()
        if all(distance is not None for distance in machine_distances(machines[side])):
            return _after_copy(edges, accepts, machines[side], base)
    copied = []
    for side, base in bases.items():
        machine = machines[side]
        for state, machine_row in enumerate(machine.edges):
            edges[base + state] = [(low, high, base + target) for low, high, target in _within_any_char(machine_row)]
        accepts.update(base + state for state in machine.accepts)
        copied.append(range(base, base + len(machine.edges)))
    return _trimmed(edges, 0, accepts, merged=copied)


def _after_copy(edges: list[list[Edge]], accepts: set[int], machine: Machine, base: int) -> Machine:
    """intersect's product where one machine was copied (its states `base` on, every one of
    them able to finish): the copy keeps the machine's own numbering and rows, first, and the
    pairs that can finish follow. So the copy costs nothing per edge (a uri's machine has
    thousands of states and tens of thousands of edges), and its distances are the machine's
    own, kept on it: only the pairs' are searched (see keep_distances_after_copy)."""
    size = len(machine.edges)
    found = finished_pairs(edges, accepts, base, size)
    if found is None:
        return Machine(((),), 0, frozenset())
    rows, start, accepting = found
    product = Machine(_rows_within_any_char(machine) + rows, start, frozenset(machine.accepts).union(accepting))
    keep_distances_after_copy(product, machine)
    product.__dict__[_COPIED_STATES] = size
    return product


def built_states(machine: Machine) -> int:
    """The states building `machine` made: a product's copy of a machine is that machine's own
    rows, made once, and states of it the product never enters cost nothing."""
    copied: int = machine.__dict__.get(_COPIED_STATES, 0)
    return len(machine.edges) - copied


_COPIED_STATES = "_copied_states"  # how many of a product's first states are a copied machine's


def _rows_within_any_char(machine: Machine) -> tuple[tuple[Edge, ...], ...]:
    """The machine's rows cut to ANY_CHAR, kept on it (a format's machine is copied into
    product after product)."""
    kept = machine.__dict__
    found: tuple[tuple[Edge, ...], ...] | None = kept.get(_ROWS_WITHIN_ANY_CHAR)
    if found is None:
        found = kept[_ROWS_WITHIN_ANY_CHAR] = tuple(
            row if isinstance(row, tuple) else tuple(row) for row in map(_within_any_char, machine.edges)
        )
    return found


_ROWS_WITHIN_ANY_CHAR = "_rows_within_any_char"  # where a machine keeps them (frozen: written to __dict__)


def _within_any_char(row: tuple[Edge, ...]) -> tuple[Edge, ...] | list[Edge]:
    """The row's edges cut to ANY_CHAR (most rows hold no surrogate: as they are)."""
    if all(high < 0xD800 or low > 0xDFFF for low, high, _ in row):
        return row
    return _without_surrogates(row)


def _open_ends(machine: Machine) -> frozenset[int]:
    """The machine's accepting states that read exactly the strings of ANY_CHAR from there on:
    each character of ANY_CHAR back into the state, and no surrogate on any edge. Kept on the
    machine (a format's machine meets pattern after pattern)."""
    kept: frozenset[int] | None = machine.__dict__.get(_OPEN_ENDS)
    if kept is None:
        kept = machine.__dict__[_OPEN_ENDS] = _find_open_ends(machine)
    return kept


_OPEN_ENDS = "_open_ends"  # where a machine keeps them (frozen: written to __dict__)


def _find_open_ends(machine: Machine) -> frozenset[int]:
    found = []
    for state in machine.accepts:
        row = machine.edges[state]
        if any(low <= 0xDFFF and high >= 0xD800 for low, high, _ in row):
            continue
        covered = -1  # every code point up to this one is read back into the state, surrogates aside
        for low, high, target in sorted(row):
            if target == state and (low <= covered + 1 or (covered == 0xD7FF and low == 0xE000)):
                covered = max(covered, high)
        if covered >= 0x10FFFF:
            found.append(state)
    return frozenset(found)


# Past this many pairs of a state and a count, a length bound is read by counting as the
# automaton is walked (Counted), not built whole as a product at compile time; up to this many
# cells of the table of what each pair still needs (core.automaton.measure).
COUNTED_PAIRS = 256
COUNTED_CELLS = 2_000_000


def bounded_lengths(machine: Machine, low: int, high: int | None) -> Machine | Counted:
    """The strings of `machine` with `low` to `high` characters: within_lengths' product where
    it is small, or too large to measure; counted as read (Counted) in between."""
    if _COPIED_STATES in machine.__dict__:  # a count's work is per state: a copy's never entered go first
        machine = _trimmed(list(machine.edges), machine.start, set(machine.accepts), merged=[range(len(machine.edges))])
    size = len(machine.edges)
    if size * ((low if high is None else high) + 1) <= COUNTED_PAIRS or counted_cells(low, high, size) > COUNTED_CELLS:
        return within_lengths(machine, low, high)
    return counted(machine, low, high)


def counted(machine: Machine, low: int, high: int | None) -> Counted:
    """The strings of `machine` with `low` to `high` characters, counted as read (its rows cut
    to ANY_CHAR, as within_lengths cuts them)."""
    return Counted(Machine(tuple(map(tuple, map(_within_any_char, machine.edges))), machine.start, machine.accepts), low, high)


def within_lengths(machine: Machine, low: int, high: int | None, state_limit: int = MACHINE_STATE_LIMIT) -> Machine:
    """`intersect(machine, length_machine(low, high))`, the same machine, built without the
    general product: a pair is a state of `machine` and the characters read so far (staying at
    `low` past it when nothing bounds them above), each edge of the state leads to the next
    count over its characters less the surrogates (ANY_CHAR's gap), and pairs are numbered in
    the order the product meets them."""
    last = low if high is None else high
    width = last + 1
    pieces = [_within_any_char(row) for row in machine.edges]
    ids = {machine.start * width: 0}  # a pair (state, count) as state * width + count
    pairs = [(machine.start, 0)]
    edges: list[list[Edge]] = []
    for state, count in pairs:  # grows while read: the product's breadth-first order
        if count == last and high is not None:
            edges.append([])
            continue
        following = count + 1 if count < last else last
        row: list[Edge] = []
        for low_char, high_char, target in pieces[state]:
            key = target * width + following
            found = ids.get(key)
            if found is None:
                if len(pairs) >= state_limit:
                    raise AutomatonTooLarge(state_limit)
                found = ids[key] = len(pairs)
                pairs.append((target, following))
            row.append((low_char, high_char, found))
        edges.append(row)
    accepts = {i for i, (state, count) in enumerate(pairs) if count >= low and state in machine.accepts}
    return _trimmed(edges, 0, accepts, reached=True)


def _without_surrogates(row: tuple[Edge, ...]) -> list[Edge]:
    """The row's edges cut to ANY_CHAR, in the order intersect meets them."""
    return [
        (max(low, first), min(high, last), target)
        for low, high, target in row
        for first, last in ANY_CHAR
        if max(low, first) <= min(high, last)
    ]


def is_empty(machine: Machine) -> bool:
    """True when the machine matches no string at all."""
    return not machine.accepts


def _trimmed(
    edges: Sequence[Sequence[Edge]], start: int, accepts: set[int], reached: bool = False, merged: Iterable[range] = ()
) -> Machine:
    """Keep the states reachable from `start` that can still reach acceptance, renumbered.
    `reached`: every state is known to be reachable (a product, built by walking from `start`);
    `merged`: states whose rows are merged already (copied from a machine), only renumbered."""
    reachable = set(range(len(edges))) if reached else _reachable(edges, start)
    useful = able_to_reach(edges, reachable, accepts & reachable)
    if start not in useful:
        return Machine(((),), 0, frozenset())
    order = [start, *sorted(useful - {start})]
    number = {state: i for i, state in enumerate(order)}
    as_they_are = {state for states in merged for state in states}
    rows = tuple(
        tuple((low, high, number[t]) for low, high, t in edges[s] if t in useful)  # (merged rows stay merged without an edge)
        if s in as_they_are
        else tuple(merged_row((low, high, number[t]) for low, high, t in edges[s] if t in useful))
        for s in order
    )
    return Machine(rows, 0, frozenset(number[s] for s in accepts if s in useful))


def _reachable(edges: Sequence[Sequence[Edge]], start: int) -> set[int]:
    seen = {start}
    stack = [start]
    while stack:
        for _, _, target in edges[stack.pop()]:
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def complement(machine: Machine, alphabet: tuple[tuple[int, int], ...], state_limit: int = MACHINE_STATE_LIMIT) -> Machine:
    """Every string of `alphabet`'s code points that `machine` does not match: its subset
    automaton (one state per set of the machine's states a string reaches, the empty set a sink
    that takes any character), accepting where no state of the set accepts."""
    ids: dict[frozenset[int], int] = {}
    sets: list[frozenset[int]] = []

    def number(states: frozenset[int]) -> int:
        if states not in ids:
            if len(sets) >= state_limit:
                raise AutomatonTooLarge(state_limit)
            ids[states] = len(sets)
            sets.append(states)
        return ids[states]

    number(frozenset({machine.start}))
    edges: list[list[Edge]] = []
    while len(edges) < len(sets):  # each set numbered is explored in turn, once
        edges.append([(low, high, number(targets)) for low, high, targets in _moves(machine, sets[len(edges)], alphabet)])
    accepts = {i for i, states in enumerate(sets) if not states & machine.accepts}
    return _trimmed(edges, 0, accepts)


def _moves(
    machine: Machine, states: frozenset[int], alphabet: tuple[tuple[int, int], ...]
) -> list[tuple[int, int, frozenset[int]]]:
    """The alphabet cut into ranges, each with the set of states its characters lead to from
    `states` (adjacent ranges leading to one set joined)."""
    ranges = [edge for state in states for edge in machine.edges[state]]
    bounds = [*alphabet, *((low, high) for low, high, _ in ranges)]
    cuts = sorted({low for low, _ in bounds} | {high + 1 for _, high in bounds})
    moves: list[tuple[int, int, frozenset[int]]] = []
    allowed = iter(alphabet)
    span = next(allowed, None)
    for low, following in itertools.pairwise(cuts):
        high = following - 1
        while span is not None and span[1] < low:
            span = next(allowed, None)
        if span is None or span[0] > low:
            continue  # outside the alphabet (cuts fall on its bounds, so a piece is wholly in or out)
        targets = frozenset(target for start, end, target in ranges if start <= low and high <= end)
        if moves and moves[-1][2] == targets and moves[-1][1] + 1 == low:
            moves[-1] = (moves[-1][0], high, targets)
        else:
            moves.append((low, high, targets))
    return moves
