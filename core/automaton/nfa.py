"""Byte-level NFA built from a regex tree in continuation-passing style.

`_build(node, next_state)` returns the state from which `node` is matched and then control
goes to `next_state`. Memoising on (node, next_state) lets a shared sub-tree with the same
continuation compile once, so DAG-shaped trees (objects with optional properties) stay
linear in size.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .regex import Alt, Chars, Lit, Machine, Node, Repeat, Seq
from .utf8 import utf8_sequences


class AutomatonTooLarge(Exception):
    """The NFA would exceed its state budget."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit} automaton states")
        self.limit = limit


@dataclass
class NFA:
    """States are integers; `edges[q]` holds (low_byte, high_byte, target) triples."""

    edges: list[list[tuple[int, int, int]]] = field(default_factory=list)
    epsilons: list[list[int]] = field(default_factory=list)
    start: int = 0
    accept: int = 0

    def new_state(self) -> int:
        self.edges.append([])
        self.epsilons.append([])
        return len(self.edges) - 1

    @property
    def size(self) -> int:
        return len(self.edges)


DEFAULT_STATE_LIMIT = 2_000_000


def build_nfa(tree: Node, state_limit: int = DEFAULT_STATE_LIMIT, deadline: float | None = None) -> NFA:
    """The NFA of `tree`. Raises AutomatonTooLarge past `state_limit` states or, when given,
    past the `time.monotonic()` instant `deadline`."""
    builder = _Builder(state_limit, deadline)
    nfa = builder.nfa
    nfa.accept = nfa.new_state()
    nfa.start = builder.build(tree, nfa.accept)
    return nfa


class _Builder:
    def __init__(self, state_limit: int, deadline: float | None) -> None:
        self.nfa = NFA()
        self.limit = state_limit
        self.deadline = deadline
        self.memo: dict[tuple[int, int], int] = {}
        self.keep_alive: list[Node] = []  # ids in memo must not be reused

    def new_state(self) -> int:
        size = self.nfa.size
        if size >= self.limit or (size & 0x1FFF == 0 and self.deadline is not None and time.monotonic() > self.deadline):
            raise AutomatonTooLarge(self.limit if size >= self.limit else size)
        return self.nfa.new_state()

    def build(self, node: Node, nxt: int) -> int:
        key = (id(node), nxt)
        found = self.memo.get(key)
        if found is None:
            found = self._build_uncached(node, nxt)
            self.memo[key] = found
            self.keep_alive.append(node)
        return found

    def _build_uncached(self, node: Node, nxt: int) -> int:
        if isinstance(node, Lit):
            return self._literal(node.data, nxt)
        if isinstance(node, Chars):
            return self._chars(node, nxt)
        if isinstance(node, Seq):
            for part in reversed(node.parts):
                nxt = self.build(part, nxt)
            return nxt
        if isinstance(node, Alt):
            split = self.new_state()
            self.nfa.epsilons[split].extend(self.build(o, nxt) for o in node.options)
            return split
        if isinstance(node, Machine):
            return self._machine(node, nxt)
        return self._repeat(node, nxt)

    def _literal(self, data: bytes, nxt: int) -> int:
        for byte in reversed(data):
            state = self.new_state()
            self.nfa.edges[state].append((byte, byte, nxt))
            nxt = state
        return nxt

    def _chars(self, node: Chars, nxt: int) -> int:
        entry = self.new_state()
        # Sequences share their tails ([80-BF] then nxt, ...): one state per distinct tail.
        tails: dict[tuple[int, int, int], int] = {}
        for low, high in node.ranges:
            for sequence in utf8_sequences(low, high):
                target = nxt
                for byte_low, byte_high in reversed(sequence[1:]):
                    key = (byte_low, byte_high, target)
                    state = tails.get(key, -1)
                    if state < 0:
                        state = self.new_state()
                        self.nfa.edges[state].append((byte_low, byte_high, target))
                        tails[key] = state
                    target = state
                first_low, first_high = sequence[0]
                self.nfa.edges[entry].append((first_low, first_high, target))
        return entry

    def _machine(self, node: Machine, nxt: int) -> int:
        """One byte state per machine state; characters JSON must escape become escapes."""
        states = [self.new_state() for _ in node.edges]
        for source, row in enumerate(node.edges):
            for low, high, target in row:
                plain = _without_escaped(low, high)
                if plain:
                    entry = self._chars(Chars(tuple(plain)), states[target])
                    self.nfa.epsilons[states[source]].append(entry)
                escaped = [c for c in _MUST_ESCAPE if low <= c <= high]
                if escaped:
                    self.nfa.epsilons[states[source]].append(self._escapes(escaped, states[target]))
            if source in node.accepts:
                self.nfa.epsilons[states[source]].append(nxt)
        return states[node.start]

    def _escapes(self, characters: list[int], nxt: int) -> int:
        """A trie of escapes: `\\` then a short letter, or `u00` and two hex digits."""
        entry, after = self.new_state(), self.new_state()
        self.nfa.edges[entry].append((0x5C, 0x5C, after))
        by_high: dict[int, list[int]] = {}
        for character in characters:
            short = _SHORT_ESCAPES.get(character)
            if short:
                self.nfa.edges[after].append((short[1], short[1], nxt))
            else:
                by_high.setdefault(character >> 4, []).append(character)
        if by_high:
            u00 = self.new_state()
            self.nfa.epsilons[after].append(self._literal(b"u00", u00))
            for high, group in by_high.items():
                nibble = self.new_state()
                self.nfa.edges[u00].append((_HEX[high], _HEX[high], nibble))
                self.nfa.edges[nibble].extend((_HEX[c & 15], _HEX[c & 15], nxt) for c in group)
        return entry

    def _repeat(self, node: Repeat, nxt: int) -> int:
        # Each copy has its own continuation, so the memo never merges two copies.
        if node.high is None:
            loop = self.new_state()
            self.nfa.epsilons[loop].extend((self.build(node.item, loop), nxt))
            tail = loop
        else:
            tail = nxt
            for _ in range(node.high - node.low):
                split = self.new_state()
                self.nfa.epsilons[split].extend((self.build(node.item, tail), nxt))
                tail = split
        for _ in range(node.low):
            tail = self.build(node.item, tail)
        return tail


# Characters a JSON string cannot hold unescaped: controls, quote and backslash.
_MUST_ESCAPE = (*range(0x20), 0x22, 0x5C)
_SHORT_ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\", 0x08: b"\\b", 0x0C: b"\\f", 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t"}


_HEX = b"0123456789abcdef"


def _without_escaped(low: int, high: int) -> list[tuple[int, int]]:
    """[low, high] minus the characters JSON must escape, as ranges."""
    ranges: list[tuple[int, int]] = []
    for gap_low, gap_high in ((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF)):
        if max(low, gap_low) <= min(high, gap_high):
            ranges.append((max(low, gap_low), min(high, gap_high)))
    return ranges


def shortest_distances(nfa: NFA) -> list[int]:
    """Fewest bytes from each NFA state to acceptance (-1 where acceptance is unreachable).

    A 0-1 breadth-first search over reversed edges: epsilon edges cost 0, byte edges 1.
    """
    reverse: list[list[tuple[int, int]]] = [[] for _ in range(nfa.size)]
    for state in range(nfa.size):
        for _, _, target in nfa.edges[state]:
            reverse[target].append((state, 1))
        for target in nfa.epsilons[state]:
            reverse[target].append((state, 0))
    distance = [-1] * nfa.size
    distance[nfa.accept] = 0
    frontier = [nfa.accept]
    while frontier:
        following: list[int] = []
        index = 0
        while index < len(frontier):
            state = frontier[index]
            index += 1
            for source, cost in reverse[state]:
                candidate = distance[state] + cost
                if distance[source] == -1 or candidate < distance[source]:
                    distance[source] = candidate
                    (frontier if cost == 0 else following).append(source)
        frontier = following
    return distance
