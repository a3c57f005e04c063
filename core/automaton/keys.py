"""The key of the next member of an object whose members come in any order, read as one.

Members in any order (regex.AnyOrder) choose the next member at every key. Read each by its own
key, a key position holds a state per member still to write, named again for every set of
members written, and the name no member declares is read beside them. Read as one, the key is
the name automaton the undeclared member already has (the trie of the declared names, any
other name going to a state taking any name: charnfa.excluding_machine): a state per position
of it, whatever the members, and where the name may end, the member it names (one not written
yet) or the undeclared member goes on with its closing quote. The automaton is the same but
for one thing: a declared name is read however JSON may write its characters, as other names
are, not only as the schema's text spells it.
"""

from __future__ import annotations

import bisect
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from .excluded_words import Trie, trie_of
from .measure import ShortestMatch, fewest_character_bytes
from .regex import AnyOrder, Lit, Machine, Node, Seq, lit

Edge = tuple[int, int, int]  # low byte, high byte, target state (as the NFA's)


@dataclass(frozen=True, eq=False)
class Keys:
    """The key read as one for `order`: `machine` reads the name's characters (the undeclared
    member's own automaton), `ends` tells the member whose name ends at a position of it. A
    state naming it holds the members written (its COPIES, as bits) and the machine's position;
    the opening quote is read before it (a literal: the same for every set of members written)."""

    order: AnyOrder
    machine: Machine
    ends: dict[int, int]
    sink: int  # the position of any name no member declares, after its last character
    rests: tuple[int, ...]  # by member: the first of its parts after its name's literal
    trie: Trie | None  # the trie the machine was made of (excluded_words), where it was
    _below: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    # By position: the members below it with the fewest bytes through each, cheapest first
    # (KeyStates._key_options; kept here, as the NFA that measured them keeps this node).
    options: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)

    def names_below(self, position: int) -> tuple[tuple[int, int], ...]:
        """Each member whose name goes on from `position` (through the trie), with the fewest
        bytes from there to its end. Kept per position, each made from its children's: the
        names below every position of a long name cost that name's length, not its square.
        Read from the trie where the machine keeps it."""
        if self.trie is not None:
            found = self._below.get(position)
            if found is None:
                ends, under = self.ends, self.trie.below[position]
                found = self._below[position] = tuple((ends[end], spent) for end, spent in under if end in ends)
            return found
        stack = [(position, False)]
        while stack:
            at, ready = stack.pop()
            if at in self._below:
                continue
            children = [(low, target) for low, high, target in self.machine.edges[at] if low == high and target != self.sink]
            if not ready:
                stack.append((at, True))
                stack.extend((target, False) for _, target in children if target not in self._below)
                continue
            below = [(self.ends[at], 0)] if at in self.ends else []
            for character, target in children:
                step = fewest_character_bytes(character, character) or 0
                below.extend((member, spent + step) for member, spent in self._below[target])
            self._below[at] = tuple(below)
        return self._below[position]


def keys_of(order: AnyOrder) -> Keys | None:
    """The key of `order` read as one, where its members are an object's and any other name
    is an undeclared member's: each member's tree opens with its name's literal (a quote first),
    and its undeclared member is a quote, a name automaton of a trie and a sink, then the rest.
    None elsewhere (an array's distinct values, names found by patterns): read member by member.
    Made anew on each call (the NFA keeps it: kept on the node, it would make a cycle)."""
    undeclared = order.undeclared
    if order.names is None or not isinstance(undeclared, Seq) or len(undeclared.parts) < 3:
        return None
    machine = undeclared.parts[1]
    if not isinstance(machine, Machine):
        return None
    sink = len(machine.edges) - 1
    if any(target != sink for _, _, target in machine.edges[sink]):
        return None
    ends: dict[int, int] = {}
    lows: dict[int, list[int]] = {}  # by position, its row's first characters (each row read once)
    trie = trie_of(machine)
    for index, (form, (name, parts)) in enumerate(zip(order.members, order.names, strict=True)):
        opening = form.parts[0] if isinstance(form, Seq) and len(form.parts) > parts else None
        if not isinstance(opening, Lit) or opening.data[:1] != b'"' or (parts == 1 and _decoded(opening.data) != name):
            return None
        position = None if trie is None else trie.ends.get(name)  # where the trie has the name, it ends there
        if position is None:
            position = machine.start
            for character in map(ord, name):
                position = _trie_step(machine, lows, position, character)
                if position is None or position == sink:
                    return None
        if position is None or position in machine.accepts or position in ends:
            return None  # a name the machine takes as any other: not the trie of these names
        ends[position] = index
    return Keys(order, machine, ends, sink, tuple(parts for _, parts in order.names), trie)


def _trie_step(machine: Machine, lows: dict[int, list[int]], position: int | None, character: int) -> int | None:
    """The one position `character` leads to from `position` of a trie's rows (sorted ranges
    that do not overlap; None where none, or where the row is not such): a search, so that the
    names of a wide object cost their length, not their number times the row's."""
    if position is None:
        return None
    row = machine.edges[position]
    found = lows.get(position)
    if found is None:
        if any(earlier[1] >= later[0] for earlier, later in itertools.pairwise(row)):
            return None
        found = lows[position] = [low for low, _, _ in row]
    at = bisect.bisect_right(found, character) - 1
    if at < 0 or row[at][1] < character:
        return None
    return row[at][2]


def _decoded(data: bytes) -> object:
    """The JSON value `data` is (None where it is not one: a piece of a name's literal)."""
    try:
        found: object = json.loads(data)
    except ValueError:
        return None
    return found


class KeyStates:
    """The NFA's states of keys read as one (see the module): their expansion and distances.
    Mixed into the NFA, whose naming it calls."""

    _shortest: ShortestMatch
    _node_indices: dict[int, int]
    _rests: dict[int, tuple[list[tuple[int | None, int | None]], int | None]]
    _keys: dict[int, Keys | None]
    _missing: dict[tuple[int, int], tuple[int | None, int]]

    def _state(self, node: Keys | Node, next_state: int, count: int = 0, spare: int = 0, position: int = 0) -> int:
        raise NotImplementedError  # the NFA names states

    def named(self, node: Node, next_state: int) -> int:
        raise NotImplementedError  # the NFA names states

    def after_parts(self, node: Seq, first: int, next_state: int) -> int:
        raise NotImplementedError  # the NFA names states

    def _after_member(self, node: AnyOrder, node_index: int, written: int, nxt: int) -> Callable[[int], int]:
        raise NotImplementedError  # the NFA names states

    def _character_edges(self, node: Machine, position: int, following_of: Callable[[int], int], edges: list[Edge]) -> None:
        raise NotImplementedError  # the NFA names states

    def _key_opening(self, node: Keys, written: int, nxt: int) -> int:
        """The state reading a key's opening quote, then the key read as one: a literal, the same
        whatever members were written, before the name automaton's start."""
        return self.named(_QUOTE, self._state(node, nxt, count=written, position=node.machine.start))

    def _key(self, node: Keys, written: int, position: int, nxt: int, edges: list[Edge], epsilons: list[int]) -> None:
        """One position of a key read as one (core.automaton.keys), past its opening quote: the
        name's characters as the machine reads them, and where a name may end, the closing
        quote and the rest of the member it names (one not written yet), or of the undeclared
        member where no member's name ends."""
        machine, order, at = node.machine, node.order, position
        self._character_edges(machine, at, lambda target: self._state(node, nxt, count=written, position=target), edges)
        member = node.ends.get(at)
        if member is not None:
            if not written >> member & 1:
                after = self._after_member(order, self._node_indices[id(order)], written, nxt)(member)
                epsilons.append(self.named(_QUOTE, self.after_parts(_seq(order.members[member]), node.rests[member], after)))
        elif at in machine.accepts:
            undeclared = _seq(order.undeclared)
            epsilons.append(self.after_parts(undeclared, 2, self._state(order, nxt, position=written << 2 | 2)))

    def _keys_of(self, node: AnyOrder) -> Keys | None:
        """keys_of(node), kept by the node's identity."""
        if id(node) not in self._keys:
            self._keys[id(node)] = keys_of(node)
        return self._keys[id(node)]

    def _keys_distance(self, node: Keys, written: int, position: int) -> int | None:
        """The fewest bytes from a position of a key read as one to the end of the members in
        any order (its continuation's distance left out): through the end of the name of a
        member not written yet below it in the trie, that member's rest and the required
        members still missing, or through the end of any other name, the undeclared member's
        rest and those missing. Each key position names a state per set of members written, so
        what does not depend on them is worked out once per position (see _key_options)."""
        missing, count = self._missing_required(node.order, written)
        if missing is None:
            return None  # a required member matches nothing
        left = missing + 2 * count  # the required members still missing, with a `", "` each
        best: int | None = None
        name = self._shortest.machine(node.machine)[position]
        undeclared_rest = self._keys_rests(node)[1]
        if name is not None and undeclared_rest is not None:
            best = name + undeclared_rest + left
        for through, member in self._key_options(node, position):
            if not written >> member & 1:  # the cheapest of those not written yet
                return through + left if best is None else min(best, through + left)
        return best

    def _key_options(self, node: Keys, position: int) -> tuple[tuple[int, int], ...]:
        """The members whose names go on from `position`, each with the fewest bytes from there
        through its name and rest, less what it takes off the required members still missing
        (its own bytes and `", "`, where it is one of them): the distance through it is that
        plus the missing members' bytes and separators, whatever was written. Cheapest first;
        kept per position."""
        found = node.options.get(position)
        if found is None:
            rests = self._keys_rests(node)[0]
            options = []
            for member, length in node.names_below(position):
                rest, measured = rests[member]
                if rest is not None:
                    options.append((length + rest - (0 if measured is None else measured + 2), member))
            found = node.options[position] = tuple(sorted(options))
        return found

    def _missing_required(self, order: AnyOrder, written: int) -> tuple[int | None, int]:
        """ShortestMatch.missing_required, kept by members and those written (each child of a
        key position asks it again for the same)."""
        key = (id(order), written)
        found = self._missing.get(key)
        if found is None:
            found = self._missing[key] = self._shortest.missing_required(order, written)
        return found

    def _keys_rests(self, node: Keys) -> tuple[list[tuple[int | None, int | None]], int | None]:
        """For each member of a key read as one, the fewest bytes after its name (closing quote
        included; None: none) and, for a required one, its own fewest; and the undeclared
        member's after its name. Kept per node."""
        found = self._rests.get(id(node))
        if found is None:
            order, shortest = node.order, self._shortest
            rests: list[tuple[int | None, int | None]] = []
            for index, member in enumerate(order.members):
                after = _parts_shortest(shortest, _seq(member).parts[node.rests[index] :])  # then + 1: the closing quote
                own = shortest.measure(member) if index in order.required else None
                rests.append((None if after is None else after + 1, own))
            found = self._rests[id(node)] = (rests, _parts_shortest(shortest, _seq(order.undeclared).parts[2:]))
        return found


_QUOTE = lit('"')


def _seq(node: Node | None) -> Seq:
    """`node`, a sequence (as core.automaton.keys found the trees a key read as one reads)."""
    assert isinstance(node, Seq)
    return node


def _parts_shortest(shortest: ShortestMatch, parts: tuple[Node, ...]) -> int | None:
    """The fewest bytes of `parts` one after another (None: one of them matches nothing)."""
    total = 0
    for part in parts:
        measured = shortest.measure(part)
        if measured is None:
            return None
        total += measured
    return total
