"""Lazy byte-level NFA over a regex tree, in continuation-passing style.

A state is named by a piece of the tree and the state that follows it: `(node, next)`. Naming
is O(1) and builds nothing; a state's byte edges and epsilon edges are expanded the first
time the DFA reads them. So a schema costs only what decoding visits: a string with
`maxLength` 500 or a recursive `$ref` unrolled three levels creates states for the
positions actually reached, not for every copy up front.

Every state knows at birth the fewest bytes from it to acceptance: the shortest match of
its node (computed once over the tree) plus its continuation's distance. Keying the memo on
(node, next) lets a shared sub-tree with the same continuation exist once, so DAG-shaped
trees (objects with optional properties) stay linear.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..jsontext import MUST_ESCAPE, UNESCAPED_RANGES
from .escapes import FIRST_WIDE_ESCAPED, Position, hex_escape_sequences
from .regex import Alt, AnyOrder, Chars, Either, Lit, Machine, Mark, Node, Repeat, Seq, Text, TextLabel, ValueLabel
from .utf8 import utf8_sequences

Edge = tuple[int, int, int]  # low byte, high byte, target state


@dataclass(frozen=True)
class _Pending:
    """What a named state stands for until it is expanded. For a repeat, position 0 is its
    entry and position 1 a point between copies, with `count` copies still required and
    `spare` still optional (-1: unbounded); for a machine, position is the machine's state."""

    node: Node
    next_state: int
    count: int = 0
    spare: int = 0
    position: int = 0


class NFA:
    """States are integers. `distance[q]` is the fewest bytes from q to acceptance (-1:
    acceptance is unreachable). Read edges through `edges_of` / `epsilons_of`, which expand
    a state on first use."""

    def __init__(self, tree: Node, accepting_all: bool = False) -> None:
        """`accepting_all`: take the `accepted` side of each Either in `tree` (every text the schema
        allows, for checking what a sampler wrote); without it, only what the generator writes."""
        self.accepting_all = accepting_all
        self._edges: list[list[Edge] | None] = []
        self._epsilons: list[list[int]] = []
        self._pending: list[_Pending | None] = []
        self.distance: list[int] = []
        self._memo: dict[tuple[int, int, int, int, int], int] = {}
        self._text_runs: dict[int, tuple[int, int] | None] = {}
        self._shortest = _ShortestMatch(accepting_all)
        self._shortest.measure(tree)
        self._tree = tree  # keeps every node alive, so ids in the memo stay unique
        self._most: dict[int, int] = {}  # most_to_finish, by state, as asked
        self.accept = self._new_state(0)
        self._edges[self.accept] = []
        self.start = self.named(tree, self.accept)

    @property
    def tree(self) -> Node:
        """The regex tree this automaton matches."""
        return self._tree

    def most_to_finish(self, state: int) -> int | None:
        """A bound on the distance of every state reachable from `state` (itself included): none
        needs more bytes to reach acceptance. None for the automaton accepting every text
        (members in any order are not bounded here). Reckoned on first asking, along the
        state's continuation: the most its own node may still need (a bound per node, kept on
        the tree) before its continuation's distance, or what the continuation itself bounds."""
        if self.accepting_all:
            return None
        found = self._most.get(state)
        if found is not None:
            return found
        stack = [(state, False)]  # iterative: a continuation may be thousands of states long
        while stack:
            current, ready = stack.pop()
            if current in self._most:
                continue
            following = self._followers(current)
            if not ready:
                stack.append((current, True))
                stack.extend((target, False) for target in following if target not in self._most)
                continue
            self._most[current] = self._own_most(current, following)
        return self._most[state]

    def _followers(self, state: int) -> list[int]:
        """The states whose bounds bound `state`'s: its continuation, or a helper state's targets."""
        pending = self._pending[state]
        if pending is not None:
            return [pending.next_state]
        edges = self._edges[state] or []
        return [target for _, _, target in edges] + self._epsilons[state]

    def _own_most(self, state: int, following: list[int]) -> int:
        after = max((self._most[target] for target in following), default=0)
        pending = self._pending[state]
        if pending is None or self.distance[pending.next_state] < 0:
            return max(self.distance[state], after)
        node = pending.node
        if isinstance(node, Repeat) and pending.position == 1:
            item = _GENERATED.measure(node.item) or 0
            inside = _most_to_finish(node.item)
            count = pending.count
            own = max(count * item, inside + (count - 1) * item) if count > 0 else inside if pending.spare != 0 else 0
        else:
            own = _most_to_finish(node)
        return max(own + self.distance[pending.next_state], after, self.distance[state])

    @property
    def size(self) -> int:
        """States created so far."""
        return len(self.distance)

    # -- pickling: dictionaries keyed by node ids are stored keyed by the nodes themselves ------

    def __getstate__(self) -> dict[str, Any]:
        nodes = {id(node): node for node in _all_nodes(self._tree)}
        state = self.__dict__.copy()
        state["_memo"] = [(nodes[key[0]], *key[1:], found) for key, found in self._memo.items()]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        memo = state.pop("_memo")
        self.__dict__.update(state)  # the nodes come back with their measurements
        self._memo = {(id(node), *rest[:-1]): rest[-1] for node, *rest in memo}

    def edges_of(self, state: int) -> list[Edge]:
        edges = self._edges[state]
        if edges is None:
            self._expand(state)
            edges = self._edges[state]
            assert edges is not None
        return edges

    def epsilons_of(self, state: int) -> list[int]:
        if self._edges[state] is None:
            self._expand(state)
        return self._epsilons[state]

    # -- text runs -------------------------------------------------------------------------

    def text_run(self, state: int) -> tuple[int, int] | None:
        """For a state inside the body of a JSON string whose characters are free (a Text, then
        the closing quote): the characters still required and the further ones allowed (-1: any
        number). Every text character leads from here to `after_text(state, 1)`, and nothing
        else the string holds is text. None for any other state."""
        if state not in self._text_runs:
            self._text_runs[state] = self._find_text_run(state)
        return self._text_runs[state]

    def text_label(self, state: int) -> TextLabel | None:
        """The label of the plain string value whose body text-run `state` lies in (None for
        other states and unlabelled strings)."""
        if self.text_run(state) is None:
            return None
        pending = self._pending[state]
        assert pending is not None and isinstance(pending.node, Text)
        return pending.node.label

    def value_label(self, state: int) -> ValueLabel | None:
        """The label of the date or number value that begins at `state` (see Mark), if any."""
        pending = self._pending[state]
        return pending.node.label if pending is not None and isinstance(pending.node, Mark) else None

    def starts_text(self, state: int) -> bool:
        """Whether text-run `state` is the start of its string's body (no character yet)."""
        pending = self._pending[state]
        return self.text_run(state) is not None and pending is not None and pending.position == 0

    def _find_text_run(self, state: int) -> tuple[int, int] | None:
        pending = self._pending[state]
        if pending is None or not isinstance(pending.node, Text):
            return None
        # Text never closes the string, so no text continues past the body: where something
        # other than the closing quote followed, it could, and there is no run.
        closing = self._pending[pending.next_state]
        if closing is None or not isinstance(closing.node, Lit) or closing.node.data[:1] != b'"':
            return None
        if pending.position == 0:
            node = pending.node
            return node.low, -1 if node.high is None else node.high - node.low
        return pending.count, pending.spare

    def after_text(self, state: int, most: int) -> list[int]:
        """The states 0, 1, ..., `most` text characters after text-run `state` (`most` at most
        as many as it allows)."""
        run = self.text_run(state)
        pending = self._pending[state]
        assert run is not None and pending is not None and isinstance(pending.node, Text)
        count, spare = run
        assert spare < 0 or most <= count + spare, "more characters than the string allows"
        node, nxt = pending.node, pending.next_state
        states = [state]
        for characters in range(1, most + 1):
            over = max(characters - count, 0)
            states.append(self._named_repeat(node, nxt, max(count - characters, 0), spare if spare < 0 else spare - over))
        return states

    # -- naming ----------------------------------------------------------------------------

    def named(self, node: Node, next_state: int) -> int:
        """The state matching `node` then continuing at `next_state`, created unexpanded on
        first use."""
        return self._state(node, next_state, position=node.start if isinstance(node, Machine) else 0)

    def _state(self, node: Node, next_state: int, count: int = 0, spare: int = 0, position: int = 0) -> int:
        key = (id(node), next_state, count, spare, position)
        found = self._memo.get(key)
        if found is not None:
            return found
        state = self._new_state(self._distance_of(node, next_state, count, position))
        self._pending[state] = _Pending(node, next_state, count, spare, position)
        self._memo[key] = state
        return state

    def _named_repeat(self, node: Repeat, next_state: int, count: int, spare: int) -> int:
        """Copies of `node.item` still to match: `count` required, then `spare` optional."""
        if count == 0 and spare == 0:
            return next_state
        return self._state(node, next_state, count, spare, position=1)

    def _distance_of(self, node: Node, next_state: int, count: int, position: int) -> int:
        after = self.distance[next_state]
        if after < 0:
            return -1
        if isinstance(node, Repeat) and position == 1:
            item = self._shortest.measure(node.item)
            if count == 0:
                return after
            return -1 if item is None else count * item + after
        if isinstance(node, Machine):
            inside = self._shortest.machine(node)[position]
            return -1 if inside is None else inside + after
        if isinstance(node, AnyOrder):
            inside = self._shortest.any_order(node, position >> 1, bool(position & 1))
            return -1 if inside is None else inside + after
        shortest = self._shortest.measure(node)
        return -1 if shortest is None else shortest + after

    def _new_state(self, distance: int) -> int:
        self._edges.append(None)
        self._epsilons.append([])
        self._pending.append(None)
        self.distance.append(distance)
        return len(self.distance) - 1

    def _built_state(self, edges: list[Edge]) -> int:
        """A helper state created expanded, with only byte edges to states that exist."""
        reachable = [self.distance[target] for _, _, target in edges if self.distance[target] >= 0]
        state = self._new_state(1 + min(reachable) if reachable else -1)
        self._edges[state] = edges
        return state

    # -- expansion -------------------------------------------------------------------------

    def _expand(self, state: int) -> None:
        pending = self._pending[state]
        edges: list[Edge] = []
        epsilons: list[int] = []
        if pending is not None:
            self._expand_into(pending, edges, epsilons)
        self._edges[state] = edges
        self._epsilons[state] = epsilons

    def _expand_into(self, pending: _Pending, edges: list[Edge], epsilons: list[int]) -> None:
        node, nxt = pending.node, pending.next_state
        if isinstance(node, Lit):
            self._literal(node.data, nxt, edges, epsilons)
        elif isinstance(node, Chars):
            self._chars(node.ranges, nxt, edges)
        elif isinstance(node, Seq):
            for part in reversed(node.parts[1:]):
                nxt = self.named(part, nxt)
            epsilons.append(self.named(node.parts[0], nxt) if node.parts else nxt)
        elif isinstance(node, Alt):
            epsilons.extend(self.named(option, nxt) for option in node.options)
        elif isinstance(node, Machine):
            self._machine_state(node, pending.position, nxt, edges, epsilons)
        elif isinstance(node, Either):
            epsilons.append(self.named(node.accepted if self.accepting_all else node.generated, nxt))
        elif isinstance(node, AnyOrder):
            self._any_order(node, pending.position, nxt, epsilons)
        elif pending.position == 0:
            low, high = node.low, node.high
            epsilons.append(self._named_repeat(node, nxt, low, -1 if high is None else high - low))
        else:
            self._repeat_step(node, nxt, pending.count, pending.spare, epsilons)

    def _literal(self, data: bytes, nxt: int, edges: list[Edge], epsilons: list[int]) -> None:
        if not data:
            epsilons.append(nxt)
            return
        for byte in reversed(data[1:]):
            nxt = self._built_state([(byte, byte, nxt)])
        edges.append((data[0], data[0], nxt))

    def _chars(self, ranges: tuple[tuple[int, int], ...], nxt: int, edges: list[Edge]) -> None:
        # Sequences share their tails ([80-BF] then nxt, ...): one state per distinct tail.
        tails: dict[Edge, int] = {}
        for low, high in ranges:
            for sequence in utf8_sequences(low, high):
                target = nxt
                for byte_low, byte_high in reversed(sequence[1:]):
                    key = (byte_low, byte_high, target)
                    state = tails.get(key)
                    if state is None:
                        state = self._built_state([key])
                        tails[key] = state
                    target = state
                first_low, first_high = sequence[0]
                edges.append((first_low, first_high, target))

    def _repeat_step(self, node: Repeat, nxt: int, count: int, spare: int, epsilons: list[int]) -> None:
        if count > 0:
            epsilons.append(self.named(node.item, self._named_repeat(node, nxt, count - 1, spare)))
            return
        if spare != 0:
            again = self._named_repeat(node, nxt, 0, spare - 1 if spare > 0 else -1)
            epsilons.append(self.named(node.item, again))
        epsilons.append(nxt)

    def _any_order(self, node: AnyOrder, position: int, nxt: int, epsilons: list[int]) -> None:
        """One state of members in any order: the position's bits above the lowest say which
        members were written, the lowest whether anything was (so `", "` comes first)."""
        written, wrote = position >> 1, position & 1
        forms = node.later if wrote else node.written_first
        for index, form in enumerate(forms):
            if index < len(node.members):
                if written >> index & 1:
                    continue
                following = self._state(node, nxt, position=((written | 1 << index) << 1) | 1)
            else:  # an undeclared member: any number of them
                following = self._state(node, nxt, position=(written << 1) | 1)
            epsilons.append(self.named(form, following))
        if all(written >> index & 1 for index in node.required):
            epsilons.append(nxt)

    def _machine_state(self, node: Machine, position: int, nxt: int, edges: list[Edge], epsilons: list[int]) -> None:
        """One machine state: each character edge written the way JSON requires (escapes
        for quote, backslash and control characters), or as the `\\u` escape a serializer
        with ASCII output writes for characters from U+007F up."""
        for low, high, target in node.edges[position]:
            following = self._state(node, nxt, position=target)
            plain = _without_escaped(low, high)
            if plain:
                entry: list[Edge] = []
                self._chars(tuple(plain), following, entry)
                epsilons.append(self._built_state(entry))
            escapes = self._escapes(low, high, following)
            if escapes is not None:
                epsilons.append(escapes)
        if position in node.accepts:
            epsilons.append(nxt)

    def _escapes(self, low: int, high: int, nxt: int) -> int | None:
        """The escapes of the characters in [low, high] as a trie from the backslash: a short
        letter where one exists, and `u` with four hex digits (either case; a surrogate pair
        beyond U+FFFF) for the characters JSON must escape and those from U+007F up. None
        when no character there has an escape here."""
        after: list[Edge] = []
        escaped = [c for c in MUST_ESCAPE if low <= c <= high]
        for character in escaped:
            short = _SHORT_ESCAPES.get(character)
            if short:
                after.append((short[1], short[1], nxt))
        code_points = _runs(escaped)
        if high >= FIRST_WIDE_ESCAPED:
            code_points.append((max(low, FIRST_WIDE_ESCAPED), high))
        sequences = [sequence for first, last in code_points for sequence in hex_escape_sequences(first, last)]
        if sequences:
            after.append((0x75, 0x75, self._positions_trie(sequences, nxt)))
        if not after:
            return None
        return self._built_state([(0x5C, 0x5C, self._built_state(after))])

    def _positions_trie(self, sequences: list[tuple[Position, ...]], nxt: int) -> int:
        """A state matching any of `sequences` (byte positions) then going on to `nxt`;
        sequences share their tails (one state per distinct position and target)."""
        tails: dict[tuple[Position, int], int] = {}
        entry: list[Edge] = []
        for sequence in sequences:
            target = nxt
            for position in reversed(sequence[1:]):
                state = tails.get((position, target))
                if state is None:
                    state = tails[(position, target)] = self._built_state([(low, high, target) for low, high in position])
                target = state
            entry += [(low, high, target) for low, high in sequence[0]]
        return self._built_state(entry)


def _all_nodes(tree: Node) -> list[Node]:
    """Every node of the DAG once."""
    seen: dict[int, Node] = {}
    stack = [tree]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        if isinstance(node, Seq):
            stack.extend(node.parts)
        elif isinstance(node, Alt):
            stack.extend(node.options)
        elif isinstance(node, Repeat):
            stack.append(node.item)
        elif isinstance(node, Either):
            stack.extend((node.generated, node.accepted))
        elif isinstance(node, AnyOrder):  # and the nodes it made, only where it made them
            made = node.__dict__
            stack.extend(node.members)
            if made.get("undeclared") is not None:
                stack.append(made["undeclared"])
            stack.extend(made.get("later", ()))
    return list(seen.values())


def _most_to_finish(tree: Node) -> int:
    """A bound on the fewest bytes from any point inside `tree` to its end, in the generator's
    automaton (see NFA.most_to_finish): inside a part of a sequence, that part's bound and the
    shortest of the parts after it; inside a copy of a repeat, the copy's bound and the
    shortest of the copies still required after it. Kept on the nodes; iterative."""
    stack: list[tuple[Node, bool]] = [(tree, False)]
    while stack:
        node, children_done = stack.pop()
        if _MOST in node.__dict__:
            continue
        children = _generated_children(node)
        if not children_done and children:
            stack.append((node, True))
            stack.extend((child, False) for child in children if _MOST not in child.__dict__)
            continue
        node.__dict__[_MOST] = _node_most(node)
    found: int = tree.__dict__[_MOST]
    return found


def _generated_children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Seq):
        return node.parts
    if isinstance(node, Alt):
        return node.options
    if isinstance(node, Either):
        return (node.generated,)
    if isinstance(node, Repeat):
        return (node.item,)
    return ()


def _node_most(node: Node) -> int:
    """_most_to_finish of `node`, its children's kept already."""
    if isinstance(node, Lit):
        return len(node.data)
    if isinstance(node, Seq):
        most, after = 0, 0
        for part in reversed(node.parts):
            most = max(most, part.__dict__[_MOST] + after)
            after += _GENERATED.measure(part) or 0
        return most
    if isinstance(node, Alt):
        return max((option.__dict__[_MOST] for option in node.options), default=0)
    if isinstance(node, Either):
        generated: int = node.generated.__dict__[_MOST]
        return generated
    if isinstance(node, Repeat):
        item = _GENERATED.measure(node.item) or 0
        return max(node.low * item, node.item.__dict__[_MOST] + max(node.low - 1, 0) * item)
    if isinstance(node, Machine):
        return _LONGEST_CHARACTER + max((d for d in _ShortestMatch.machine(node) if d is not None), default=0)
    return _LONGEST_CHARACTER  # a character (Chars), and any node no generated text holds (AnyOrder)


# The most bytes one character may take as JSON writes it: a surrogate pair of `\u` escapes.
_LONGEST_CHARACTER = 12
_MOST = "_most_to_finish"


def shortest_generated(node: Node) -> int | None:
    """The fewest bytes of the texts the generator writes for `node` (None: it matches
    nothing). Kept on the node, where the generator's NFA finds it: measuring a tree before
    its NFA is built (the schema's floors) costs the NFA nothing more."""
    return _GENERATED.measure(node)


def build_nfa(tree: Node, accepting_all: bool = False) -> NFA:
    """The lazy NFA of `tree` (only the tree's shortest matches are computed now); see NFA
    for `accepting_all`."""
    return NFA(tree, accepting_all)


class _ShortestMatch:
    """Fewest bytes each node matches (None: it matches nothing), over a DAG, for one of the
    two automata (the generator's, through each Either's `generated`, or the one accepting
    every text), so the generator's never measures what only the other reads. Kept on the
    nodes themselves (a node never changes), one entry per automaton: a tree shared by
    compilations (a format's, a string character's) is measured once per process."""

    def __init__(self, accepting_all: bool) -> None:
        self._accepting_all = accepting_all
        self._key = _SHORTEST_ALL if accepting_all else _SHORTEST

    @staticmethod
    def machine(node: Machine) -> list[int | None]:
        """The fewest bytes from each of the machine's states to acceptance (kept on the node)."""
        kept = node.__dict__
        if _DISTANCES not in kept:
            kept[_DISTANCES] = _machine_distances(node)
        found: list[int | None] = kept[_DISTANCES]
        return found

    def any_order(self, node: AnyOrder, written: int, wrote: bool) -> int | None:
        """Fewest bytes to finish members in any order, `written` (bits) written so far:
        each required member not yet written, `", "` before each but a first."""
        missing = [self.measure(node.members[index]) for index in node.required if not written >> index & 1]
        total = _sum(missing)
        if total is None or not missing:
            return total
        return total + 2 * len(missing) - (0 if wrote else 2)

    def measure(self, node: Node) -> int | None:
        """The node's fewest bytes, measured on first asking (a node AnyOrder makes later too)."""
        kept = node.__dict__
        if self._key in kept:
            found: int | None = kept[self._key]
            return found
        result = kept[self._key] = self._measure(node)
        return result

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
            return _fewest_bytes(node.ranges)
        if isinstance(node, Machine):
            return self.machine(node)[node.start]
        if isinstance(node, Either):
            return self.measure(node.accepted if self._accepting_all else node.generated)
        if isinstance(node, AnyOrder):
            for member in node.written_first:
                self.measure(member)
            return self.any_order(node, 0, False)
        item = self.measure(node.item)
        if node.low == 0:
            return 0
        return None if item is None else node.low * item


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
_GENERATED = _ShortestMatch(accepting_all=False)
_UNMEASURED: Any = object()


def _fewest_bytes(ranges: tuple[tuple[int, int], ...] | list[tuple[int, int]]) -> int | None:
    lengths = [len(sequence) for low, high in ranges for sequence in utf8_sequences(low, high)]
    return min(lengths) if lengths else None


@functools.cache
def _edge_bytes(low: int, high: int) -> int | None:
    """Fewest bytes one character in [low, high] takes inside a JSON string. Cached: a
    character automaton repeats the same few ranges on edge after edge."""
    costs: list[int] = []
    plain = _fewest_bytes(_without_escaped(low, high))
    if plain is not None:
        costs.append(plain)
    escaped = [c for c in MUST_ESCAPE if low <= c <= high]
    if escaped:
        costs.append(2 if any(c in _SHORT_ESCAPES for c in escaped) else 6)
    return min(costs) if costs else None


def _machine_distances(node: Machine) -> list[int | None]:
    """Fewest bytes from each machine state to an accepting one (Dijkstra on reversed edges)."""
    reverse: list[list[tuple[int, int]]] = [[] for _ in node.edges]
    for source, row in enumerate(node.edges):
        for low, high, target in row:
            cost = _edge_bytes(low, high)
            if cost is not None:
                reverse[target].append((source, cost))
    distance: list[int | None] = [None] * len(node.edges)
    queue = [(0, state) for state in node.accepts]
    heapq.heapify(queue)
    while queue:
        cost, state = heapq.heappop(queue)
        if distance[state] is not None:
            continue
        distance[state] = cost
        for source, step in reverse[state]:
            if distance[source] is None:
                heapq.heappush(queue, (cost + step, source))
    return distance


_SHORT_ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\", 0x08: b"\\b", 0x0C: b"\\f", 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t"}


def _runs(code_points: list[int]) -> list[tuple[int, int]]:
    """Sorted code points as ranges of consecutive ones."""
    runs: list[tuple[int, int]] = []
    for code_point in code_points:
        if runs and runs[-1][1] == code_point - 1:
            runs[-1] = (runs[-1][0], code_point)
        else:
            runs.append((code_point, code_point))
    return runs


def _without_escaped(low: int, high: int) -> list[tuple[int, int]]:
    """[low, high] minus the characters JSON must escape, as ranges."""
    ranges: list[tuple[int, int]] = []
    for gap_low, gap_high in UNESCAPED_RANGES:
        if max(low, gap_low) <= min(high, gap_high):
            ranges.append((max(low, gap_low), min(high, gap_high)))
    return ranges
