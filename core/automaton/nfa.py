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

from collections.abc import Callable
from typing import Any

from .char_states import CharacterStates
from .escapes import BytePosition
from .keys import Keys, KeyStates
from .measure import GENERATED, ShortestMatch, counted_distance, most_to_finish
from .pending import COPIES, NEXT, NODE, POSITION, SPARE, Escaped, Helper, Hex, Pending, Tail, first_bytes
from .regex import Alt, AnyOrder, Chars, Counted, Either, Lit, Machine, Node, Repeat, Seq, leading_literal
from .text_states import TextStates

try:  # compiled at install where a C compiler is found (setup.py); else the same work in Python
    from . import _rows
except ImportError:  # pragma: no cover - an install without a compiler
    _rows = None  # type: ignore[assignment]

Edge = tuple[int, int, int]  # low byte, high byte, target state


class NFA(CharacterStates, TextStates, KeyStates):
    """States are integers. `distance[q]` is the fewest bytes from q to acceptance (-1:
    acceptance is unreachable). Read edges through `edges_of` / `epsilons_of`, which expand
    a state on first use."""

    def __init__(self, tree: Node, accepting_all: bool = False) -> None:
        """`accepting_all`: take the `accepted` side of each Either in `tree` (every text the schema
        allows, for checking what a sampler wrote); without it, only what the generator writes."""
        self.accepting_all = accepting_all
        # Tuples, not lists: a tuple of numbers only is left out of the cyclic collector's
        # scans, and a large schema names hundreds of thousands of states.
        self._edges: list[tuple[Edge, ...] | None] = []
        self._epsilons: list[tuple[int, ...]] = []
        self._pending: list[Pending | None] = []
        self._nodes: list[Node | Helper] = []  # what states stand for, by a Pending's NODE
        self._node_indices: dict[int, int] = {}  # by id (`_nodes` keeps each alive: no id is reused)
        # By a node's index: its fewest bytes from its start where a state's distance is that,
        # less the state's position, plus its continuation's (-1: it matches nothing; None: a
        # repeat, machine or members in any order, whose position says more); and whether a
        # state naming it reads a byte and has no epsilon edge (see _reads_a_byte).
        self._node_shortest: list[int | None] = []
        self._node_reads: list[bool] = []
        self._reads: list[bool] = []  # by state: its node's, until it is expanded
        self.distance: list[int] = []
        self._memo: dict[tuple[int, int, int, int, int], int] = {}
        self._text_runs: dict[int, tuple[int, int] | None] = {}
        self._escaped: dict[tuple[int, int], Escaped | None] = {}  # by character range
        self._tails: dict[tuple[tuple[int, int], ...], Tail] = {}
        self._hexes: dict[tuple[tuple[BytePosition, ...], ...], Hex] = {}
        self._shortest = ShortestMatch(accepting_all)
        self._shortest.measure(tree)
        self._tree = tree
        self._most: dict[int, int] = {}  # most_to_finish, by state, as asked
        self._rests: dict[int, tuple[list[tuple[int | None, int | None]], int | None]] = {}  # see _keys_rests
        self._keys: dict[int, Keys | None] = {}  # by the id of members in any order (see _keys_of)
        self._missing: dict[tuple[int, int], tuple[int | None, int]] = {}  # see _missing_required
        self.accept = self._new_state(0)
        self._edges[self.accept] = ()
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
            return [pending[NEXT]]
        edges = self._edges[state] or ()
        return [target for _, _, target in edges] + list(self._epsilons[state])

    def _own_most(self, state: int, following: list[int]) -> int:
        after = max((self._most[target] for target in following), default=0)
        pending = self._pending[state]
        if pending is None or self.distance[pending[NEXT]] < 0:
            return max(self.distance[state], after)
        node = self._nodes[pending[NODE]]
        if isinstance(node, Escaped):
            own = node.longest - pending[POSITION]
        elif isinstance(node, Tail):
            own = len(node.ranges)
        elif isinstance(node, Hex):
            own = node.longest
        elif isinstance(node, Lit):
            own = len(node.data) - pending[POSITION]
        elif isinstance(node, Repeat) and pending[POSITION] == 1:
            item = GENERATED.measure(node.item) or 0
            inside = most_to_finish(node.item)
            count = pending[COPIES]
            own = max(count * item, inside + (count - 1) * item) if count > 0 else inside if pending[SPARE] != 0 else 0
        else:
            assert not isinstance(node, Keys), "only the automaton accepting every text reads a key as one"
            own = most_to_finish(node)
        return max(own + self.distance[pending[NEXT]], after, self.distance[state])

    @property
    def size(self) -> int:
        """States created so far."""
        return len(self.distance)

    # -- pickling: the dictionaries keyed by node ids are made again ---------------------------

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_node_indices"]
        del state["_keys"]
        state["_rests"] = {}  # (by node id too: worked out again on asking)
        state["_missing"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)  # the nodes come back with their measurements
        self._node_indices = {id(node): index for index, node in enumerate(self._nodes)}
        # The keys read as one already named, by their members' ids (those not read yet: anew).
        self._keys = {id(node.order): node for node in self._nodes if isinstance(node, Keys)}

    def node_of(self, state: int) -> Node | Helper | None:
        """What `state` stands for: a piece of the tree or a helper (None: the accepting state)."""
        pending = self._pending[state]
        return None if pending is None else self._nodes[pending[NODE]]

    def edges_of(self, state: int) -> tuple[Edge, ...]:
        edges = self._edges[state]
        if edges is None:
            self._expand(state)
            edges = self._edges[state]
            assert edges is not None
        return edges

    def epsilons_of(self, state: int) -> tuple[int, ...]:
        if self._edges[state] is None and not self._reads[state]:
            self._expand(state)
        return self._epsilons[state]

    def closure(self, state: int) -> tuple[int, ...]:
        """The states reached from `state` by epsilon edges (itself included) that read a byte
        and can still reach acceptance: what a DFA state's row is made of. A state that reads a
        byte and has no epsilon edge by its node alone is kept without expanding it: of the
        many keys an object may take next, or the characters a pattern allows, a walk reads
        few, and those it does not read are never expanded. In C where it was compiled
        (core/automaton/_rows.c), ascending."""
        if _rows is not None:
            return _rows.closure(self, state)
        edges, epsilons, reads, distance = self._edges, self._epsilons, self._reads, self.distance
        seen = {state}
        stack = [state]
        while stack:
            current = stack.pop()
            if edges[current] is None and not reads[current]:
                self._expand(current)
            for target in epsilons[current]:
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        return tuple(
            member
            for member in seen
            if distance[member] >= 0 and (reads[member] if edges[member] is None else bool(edges[member]))
        )

    @staticmethod
    def _reads_a_byte(node: Node | Helper) -> bool:
        """Whether a state naming `node` has byte edges and no epsilon edge, by its node alone
        (a sequence opening with a literal reads that literal's first byte itself: of the many
        members an object may take next, a walk reads few, and the parts of those it does not
        read are never named)."""
        if isinstance(node, Lit | Chars):  # (a class of surrogates alone reads none, but is dead)
            return bool(node.data if isinstance(node, Lit) else node.ranges)
        if isinstance(node, Seq):
            return leading_literal(node) is not None
        return isinstance(node, Tail | Hex | Escaped)

    def _shortest_of(self, node: Node | Helper) -> int | None:
        """See `_node_shortest`."""
        if isinstance(node, Repeat | Machine | Counted | AnyOrder | Keys):
            return None
        if isinstance(node, Escaped | Hex):
            return node.shortest
        if isinstance(node, Tail):
            return len(node.ranges)
        shortest = self._shortest.measure(node)
        return -1 if shortest is None else shortest

    # -- naming ----------------------------------------------------------------------------

    def named(self, node: Node, next_state: int) -> int:
        """The state matching `node` then continuing at `next_state`, created unexpanded on
        first use."""
        start = node.start if isinstance(node, Machine) else node.machine.start if isinstance(node, Counted) else 0
        return self._state(node, next_state, position=start)

    def _state(self, node: Node | Helper, next_state: int, count: int = 0, spare: int = 0, position: int = 0) -> int:
        index = self._node_indices.get(id(node))
        if index is None:
            index = self._node_indices[id(node)] = len(self._nodes)
            self._nodes.append(node)
            self._node_shortest.append(self._shortest_of(node))
            self._node_reads.append(self._reads_a_byte(node))
        key = (index, next_state, count, spare, position)
        found = self._memo.get(key)
        if found is not None:
            return found
        # Most states are named on the way to the few a walk reads: their distance is worked
        # out here without a call where the node's own shortest match tells it.
        shortest, after = self._node_shortest[index], self.distance[next_state]
        if shortest is None:
            distance = self._distance_of(node, next_state, count, position)
        else:
            distance = -1 if after < 0 or shortest < 0 else shortest - position + after
        state = self._new_state(distance, key, self._node_reads[index])
        self._memo[key] = state
        return state

    def after_parts(self, node: Seq, first: int, next_state: int) -> int:
        """The state matching the sequence's parts from `first` on, then continuing at `next_state`."""
        for part in reversed(node.parts[first:]):
            next_state = self.named(part, next_state)
        return next_state

    def _named_repeat(self, node: Repeat, next_state: int, count: int, spare: int) -> int:
        """Copies of `node.item` still to match: `count` required, then `spare` optional."""
        if count == 0 and spare == 0:
            return next_state
        return self._state(node, next_state, count, spare, position=1)

    def _distance_of(self, node: Node | Helper, next_state: int, count: int, position: int) -> int:
        """The distance of a state naming a repeat, a machine or members in any order, whose
        position tells where inside it the state is (see `_node_shortest` for the others)."""
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
            inside = self._shortest.any_order(node, position >> 2, bool(position & 2), bool(position & 1))
            return -1 if inside is None else inside + after
        if isinstance(node, Keys):
            inside = self._keys_distance(node, count, position)
            return -1 if inside is None else inside + after
        if isinstance(node, Counted):
            inside = counted_distance(node, position, count)
            return -1 if inside is None else inside + after
        assert isinstance(node, Repeat)  # at its entry
        shortest = self._shortest.measure(node)
        return -1 if shortest is None else shortest + after

    def _new_state(self, distance: int, pending: Pending | None = None, reads: bool = False) -> int:
        """A state unexpanded, standing for `pending` (None: the accepting state, expanded by hand)."""
        self._edges.append(None)
        self._epsilons.append(())
        self._pending.append(pending)
        self._reads.append(reads)
        self.distance.append(distance)
        return len(self.distance) - 1

    # -- expansion -------------------------------------------------------------------------

    def _expand(self, state: int) -> None:
        pending = self._pending[state]
        edges: list[Edge] = []
        epsilons: list[int] = []
        if pending is not None:
            self._expand_into(pending, edges, epsilons)
        self._edges[state] = tuple(edges)
        self._epsilons[state] = tuple(epsilons)
        self._reads[state] = False

    def _expand_into(self, pending: Pending, edges: list[Edge], epsilons: list[int]) -> None:
        node, nxt = self._nodes[pending[NODE]], pending[NEXT]
        if isinstance(node, Tail):
            first, last = node.ranges[0]
            edges.append((first, last, self._tail_state(node.ranges[1:], nxt)))
        elif isinstance(node, Hex):
            self._hex_edges(node, nxt, edges)
        elif isinstance(node, Escaped):  # after the backslash (the machine state reads that)
            edges.extend(self._after_backslash(node, nxt))
        elif isinstance(node, Lit):
            self._literal(node, pending[POSITION], nxt, edges, epsilons)
        elif isinstance(node, Chars):
            self._chars(node.ranges, nxt, edges)
        elif isinstance(node, Seq):
            opening = leading_literal(node)
            if opening is not None:  # read here, byte by byte (see _reads_a_byte)
                self._opening(node, opening.data, pending[POSITION], nxt, edges)
            else:
                epsilons.append(self.named(node.parts[0], self.after_parts(node, 1, nxt)) if node.parts else nxt)
        elif isinstance(node, Alt):
            epsilons.extend(self.named(option, nxt) for option in node.options)
        elif isinstance(node, Machine | Counted):
            self._machine_state(node, pending[COPIES], pending[POSITION], nxt, edges, epsilons)
        elif isinstance(node, Either):
            epsilons.append(self.named(node.accepted if self.accepting_all else node.generated, nxt))
        elif isinstance(node, AnyOrder):
            self._any_order(node, pending, nxt, epsilons)
        elif isinstance(node, Keys):
            self._key(node, pending[COPIES], pending[POSITION], nxt, edges, epsilons)
        elif pending[POSITION] == 0:
            low, high = node.low, node.high
            epsilons.append(self._named_repeat(node, nxt, low, -1 if high is None else high - low))
        else:
            self._repeat_step(node, nxt, pending[COPIES], pending[SPARE], epsilons)

    def _literal(self, node: Lit, position: int, nxt: int, edges: list[Edge], epsilons: list[int]) -> None:
        """The literal's byte at `position`, then the state of the next one (named, built when
        reached: of many keys that may come next, a walk reads only the first bytes)."""
        data = node.data
        if not data:
            epsilons.append(nxt)
            return
        following = nxt if position + 1 == len(data) else self._state(node, nxt, position=position + 1)
        edges.append((data[position], data[position], following))

    def _opening(self, node: Seq, data: bytes, position: int, nxt: int, edges: list[Edge]) -> None:
        """The byte at `position` of the literal opening the sequence, then the state of the next
        one, the sequence's own (its other parts are named when the literal is read through)."""
        last = position + 1 == len(data)
        following = self.after_parts(node, 1, nxt) if last else self._state(node, nxt, position=position + 1)
        edges.append((data[position], data[position], following))

    def _chars(self, ranges: tuple[tuple[int, int], ...], nxt: int, edges: list[Edge]) -> None:
        """Edges for the first byte of each character's UTF-8 encoding; the bytes after it are
        a state named by their ranges (see Tail), expanded only when a walk goes there."""
        for first_low, first_high, tail in first_bytes(ranges):
            edges.append((first_low, first_high, self._tail_state(tail, nxt)))

    def _tail_state(self, ranges: tuple[tuple[int, int], ...], nxt: int) -> int:
        """The state reading one byte from each of `ranges` in turn, then going on to `nxt`."""
        if not ranges:
            return nxt
        tail = self._tails.get(ranges)
        if tail is None:
            tail = self._tails[ranges] = Tail(ranges)
        return self._state(tail, nxt)

    def _repeat_step(self, node: Repeat, nxt: int, count: int, spare: int, epsilons: list[int]) -> None:
        if count > 0:
            epsilons.append(self.named(node.item, self._named_repeat(node, nxt, count - 1, spare)))
            return
        if spare != 0:
            again = self._named_repeat(node, nxt, 0, spare - 1 if spare > 0 else -1)
            epsilons.append(self.named(node.item, again))
        epsilons.append(nxt)

    def _any_order(self, node: AnyOrder, pending: Pending, nxt: int, epsilons: list[int]) -> None:
        """One state of members in any order: the position's bits above the lowest two say
        which members were written, the second whether anything was, the lowest whether the
        `", "` after it was (a member must come). After a member, one state reads `", "` for
        all that may come next: a state after a value, whose walks read the separator and
        rarely more, names no state per member."""
        position = pending[POSITION]
        written, wrote, separated = position >> 2, position & 2, position & 1
        keys = None if wrote and not separated else self._keys_of(node)
        if wrote and not separated:
            epsilons.append(self.named(node.separator, self._state(node, nxt, position=position | 1)))
        elif keys is not None:  # the key read as one: one state whatever the members left
            epsilons.append(self._key_opening(keys, written, nxt))
        else:
            after_member = self._after_member(node, pending[NODE], written, nxt)
            for index, form in enumerate(node.written_first):
                if index < len(node.members):
                    if written >> index & 1:
                        continue
                    following = after_member(index)
                else:  # an undeclared member: any number of them
                    following = self._state(node, nxt, position=written << 2 | 2)
                epsilons.append(self.named(form, following))
        if not separated and all(written >> index & 1 for index in node.required):
            epsilons.append(nxt)

    def _after_member(self, node: AnyOrder, node_index: int, written: int, nxt: int) -> Callable[[int], int]:
        """Names the state after member `index` is written too (`written`: those before it). Its
        distance is the required members then missing with a `", "` each (ShortestMatch.any_order),
        worked out from those missing now: measured per member, an object of many members would
        cost the square of their number at every state choosing the next one."""
        missing, count = self._missing_required(node, written)
        after = self.distance[nxt]
        memo, required = self._memo, node.required

        def following(index: int) -> int:
            position = (written | 1 << index) << 2 | 2
            key = (node_index, nxt, 0, 0, position)
            found = memo.get(key)
            if found is not None:
                return found
            left, left_count = missing, count
            if index in required:
                measured = self._shortest.measure(node.members[index])
                if left is None or measured is None:  # some member matches nothing: as measured
                    return self._state(node, nxt, position=position)
                left, left_count = left - measured, left_count - 1
            inside = left if left is None or left_count == 0 else left + 2 * left_count
            state = memo[key] = self._new_state(-1 if after < 0 or inside is None else inside + after, key)
            return state

        return following

    def _machine_state(
        self, node: Machine | Counted, count: int, position: int, nxt: int, edges: list[Edge], epsilons: list[int]
    ) -> None:
        """One machine state: each character edge written the way JSON requires (escapes
        for quote, backslash and control characters), or as the `\\u` escape a serializer
        with ASCII output writes for characters from U+007F up. In a Counted, `count`
        characters were read (at most `low` where nothing bounds them above)."""
        machine, low, high = (node, 0, None) if isinstance(node, Machine) else (node.machine, node.low, node.high)
        following = count + 1 if high is not None or count < low else count
        if high is None or count < high:
            self._character_edges(machine, position, lambda target: self._state(node, nxt, following, position=target), edges)
        if position in machine.accepts and count >= low:
            epsilons.append(nxt)


def build_nfa(tree: Node, accepting_all: bool = False) -> NFA:
    """The lazy NFA of `tree` (only the tree's shortest matches are computed now); see NFA
    for `accepting_all`."""
    return NFA(tree, accepting_all)
