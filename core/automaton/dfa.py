"""Lazy byte-level DFA over an NFA: states and rows are built when first reached.

A DFA state is a set of NFA states (subset construction): the targets of one byte from an
earlier state, closed under epsilon edges only when its own row is built. Rows live in one
growable numpy table so the token index can walk the whole vocabulary with array gathers;
a row not yet built reads as UNKNOWN and is filled on demand. State 0 is the dead state.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from .nfa import NFA
from .regex import Node, TextLabel

try:  # compiled at install where a C compiler is found (setup.py); else the same work in Python
    from . import _rows
except ImportError:  # pragma: no cover - an install without a compiler
    _rows = None  # type: ignore[assignment]

DEAD = 0
UNKNOWN = -1
# Bytes a JSON string holds unescaped (no quote, backslash or control character).
_PLAIN_TEXT = re.compile(rb'[^\x00-\x1f"\\]+')
# Walks of text kept (by state and text) at most, then forgotten; and the longest run of text
# taken whole (a token's: a document's span goes byte by byte, through cells kept, as a walk of
# characters over a wide string automaton costs more per character than a cell read).
_TEXT_WALKS_KEPT = 65_536
_TEXT_WALK_BYTES = 64


class LazyDFA:
    """Deterministic byte automaton; cheap to create, grows as it is explored."""

    def __init__(self, nfa: NFA) -> None:
        self._nfa = nfa
        # Tuples, not frozensets (an NFA state's closure; a state's NFA states, ascending): one is
        # kept for every state, and a tuple of numbers drops out of the cyclic collector's scans
        # where a frozenset is scanned at every full collection.
        self._closures: dict[int, tuple[int, ...]] = {}
        self._sets: list[tuple[int, ...]] = [()]
        self._ids: dict[tuple[int, ...], int] = {(): DEAD}
        self.distance_array: npt.NDArray[np.int32] = np.full(0, -1, dtype=np.int32)
        self._forced: dict[int, bytes] = {}
        self._singles: dict[int, int] = {}
        self._text_walks: dict[tuple[int, bytes], int] = {}  # see walk
        self._covers: dict[int, tuple[int | None, int, int]] = {}
        self._escape_kinds: dict[int, frozenset[str] | None] = {}
        self._singles_after: dict[int, tuple[int, int] | None] = {}
        self.table: npt.NDArray[np.int32] = np.full((0, 256), UNKNOWN, dtype=np.int32)
        self._reserve(64)
        self.table[DEAD] = DEAD
        self.start = self.state_for(frozenset({nfa.start}))

    @property
    def state_count(self) -> int:
        return len(self._sets)

    def __getstate__(self) -> dict[str, Any]:
        """Only the rows of states that exist (the table grows in doublings)."""
        state = self.__dict__.copy()
        state["table"] = self.table[: self.state_count].copy()
        state["distance_array"] = self.distance_array[: self.state_count].copy()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reserve(max(64, 1 << (self.state_count - 1).bit_length()))

    def _reserve(self, capacity: int) -> None:
        """Grow the row table and the distances to `capacity` states (new rows UNKNOWN)."""
        # Each byte written once (the rows kept, then the new ones): a large table is megabytes.
        table = np.empty((capacity, 256), dtype=np.int32)
        table[: len(self.table)] = self.table
        table[len(self.table) :] = UNKNOWN
        distances = np.full(capacity, -1, dtype=np.int32)
        distances[: len(self.distance_array)] = self.distance_array
        self.table, self.distance_array = table, distances

    @property
    def nfa(self) -> NFA:
        return self._nfa

    def most_to_finish(self, state: int) -> int | None:
        """A bound on the distance of every state reachable from `state` (see
        NFA.most_to_finish); None where there is none."""
        if self._nfa.accepting_all:
            return None
        return max((self._nfa.most_to_finish(member) or 0 for member in self._sets[state]), default=0)

    @property
    def tree(self) -> Node:
        """The regular expression tree the automaton stands for."""
        return self._nfa.tree

    def nfa_states(self, state: int) -> tuple[int, ...]:
        """The NFA states `state` stands for, before epsilon closure."""
        return self._sets[state]

    @property
    def nfa_state_count(self) -> int:
        """NFA states built so far (the NFA grows lazily with the DFA)."""
        return self._nfa.size

    def is_accepting(self, state: int) -> bool:
        """Distance 0: acceptance is reachable by epsilon edges alone."""
        return self.distance_array.item(state) == 0  # (item: a Python int, not a numpy scalar)

    def distance(self, state: int) -> int:
        """Fewest bytes from `state` to an accepting state; -1 for the dead state.

        `distance_array[state]` holds the same for every state built so far."""
        return self.distance_array.item(state)  # type: ignore[no-any-return]

    def row(self, state: int) -> npt.NDArray[np.int32]:
        """The 256 successors of `state` (DEAD where a byte is not allowed)."""
        if self.table.item(state, 0) == UNKNOWN:
            self._build_row(state)
        return self.table[state]

    def step(self, state: int, byte: int) -> int:
        """The state after `byte` from `state` (DEAD where it is not allowed). Where the row of
        `state` is not built yet, only this byte's successor is worked out, and kept in the
        row (a token's walk needs one byte of each state it passes; byte 0's cell stays
        UNKNOWN until the whole row is built, so `row` still builds it when asked)."""
        found: int = self.table.item(state, byte)
        if found != UNKNOWN:
            return found
        if byte == 0:
            return int(self.row(state)[0])
        members = self._closure_of(self._sets[state])
        targets = frozenset(t for m in members for low, high, t in self._nfa.edges_of(m) if low <= byte <= high)
        found = self.state_for(targets) if targets else DEAD
        self.table[state, byte] = found
        return found

    def walk(self, state: int, data: bytes) -> int:
        """The state after `data` from `state` (DEAD where it is not allowed): through the
        cells built, and from the first cell that is not, as `_walk_on` says."""
        for at, byte in enumerate(data):
            following: int = self.table.item(state, byte)
            if following == UNKNOWN:
                return self._walk_on(state, data, at)
            if following == DEAD:
                return DEAD
            state = following
        return state

    def _walk_on(self, state: int, data: bytes, at: int) -> int:
        """`walk` from byte `at` on: where a cell is not built, the rest of a run of plain text
        inside a string, up to a token's length, is taken whole without naming the states
        between where the NFA tells where it leads (see `_after_plain_text`), else one byte's
        step (after which the NFA may tell). A longer run (a document's span, which grounding
        walks) goes byte by byte through cells kept: a walk's time stays in proportion to
        `data`."""
        long_run_to = 0
        while at < len(data):
            byte = data[at]
            following: int = self.table.item(state, byte)  # the table is replaced as it grows
            if following == UNKNOWN:
                run = _PLAIN_TEXT.match(data, at) if at >= long_run_to else None
                if run is not None and run.end() - at > _TEXT_WALK_BYTES:
                    long_run_to = run.end()
                elif run is not None:
                    found = self._text_walk(state, data[at : run.end()])
                    if found is not None:
                        if found == DEAD:
                            return DEAD
                        state, at = found, run.end()
                        continue
                following = self.step(state, byte)
            if following == DEAD:
                return DEAD
            state = following
            at += 1
        return state

    def _text_walk(self, state: int, text: bytes) -> int | None:
        """`_after_plain_text`, kept by state and text."""
        found = self._text_walks.get((state, text))
        if found is None:
            found = self._after_plain_text(state, text)
            if found is not None:
                if len(self._text_walks) >= _TEXT_WALKS_KEPT:
                    self._text_walks.clear()
                self._text_walks[state, text] = found
        return found

    def _after_plain_text(self, state: int, data: bytes) -> int | None:
        """`walk` for `data` of text characters only, where every NFA state of `state` tells
        where that text leads (see NFA.after_plain_text): inside a string a token of text then
        names no state and builds no row per byte. None where some NFA state does not tell."""
        try:
            text = data.decode()
        except UnicodeDecodeError:
            return None
        following: set[int] = set()
        for member in self._sets[state]:
            after = self._nfa.after_plain_text(member, data, text)
            if after is None:
                return None
            following.update(after)
        distance = self._nfa.distance
        live = frozenset(member for member in following if distance[member] >= 0)
        return self.state_for(live) if live else DEAD

    # -- strings of free text: what the NFA knows of a state standing for one NFA state ------

    def text_run(self, state: int) -> tuple[int, int] | None:
        """For a state inside the body of a JSON string of free text: the characters still
        required and the further ones allowed (-1: any number); None for any other state
        (see NFA.text_run)."""
        member = self._single_member(state)
        return None if member is None else self._nfa.text_run(member)

    def text_end(self, state: int) -> int:
        """The state where the closing quote of the string body text-run `state` lies in is read."""
        member = self._single_member(state)
        assert member is not None, "not a text-run state"
        return self.state_of(self._nfa.text_end(member))

    def after_text(self, state: int, most: int) -> list[int]:
        """The states 0, 1, ..., `most` text characters after text-run `state`."""
        member = self._single_member(state)
        assert member is not None, "not a text-run state"
        return [self.state_of(following) for following in self._nfa.after_text(member, most)]

    def text_label(self, state: int) -> TextLabel | None:
        """The label of the plain string value whose body `state` lies in (None elsewhere)."""
        member = self._single_member(state)
        return None if member is None else self._nfa.text_label(member)

    def starts_text(self, state: int) -> bool:
        """Whether `state` is the start of a string body of free text (no character yet)."""
        member = self._single_member(state)
        return member is not None and self._nfa.starts_text(member)

    def closure(self, state: int) -> frozenset[int]:
        """The NFA states with byte edges `state` reaches by epsilon edges: its row is theirs."""
        return self._closure_of(self._sets[state])

    def single_byte(self, member: int) -> tuple[int, int] | None:
        """The one byte NFA state `member` allows next and the NFA state after it, where it
        allows no choice (its closure is one state with one edge of one byte); None where it
        does. A walk along a literal (a property name, `": `, `true`) needs no row of the DFA
        states between. Cached."""
        if member in self._singles_after:
            return self._singles_after[member]
        found = None
        closure = self._closure(member)
        if len(closure) == 1:
            edges = self._nfa.edges_of(next(iter(closure)))
            if len(edges) == 1 and edges[0][0] == edges[0][1]:
                found = (edges[0][0], edges[0][2])
        self._singles_after[member] = found
        return found

    def literal_rest(self, member: int) -> tuple[bytes, int] | None:
        """Where NFA state `member`, or the one state its closure holds, lies inside a literal:
        the literal's bytes from there on and that NFA state (see NFA.literal_rest; where the
        bytes lead, `after_literal` names); None elsewhere. Of the many keys an object may take
        next, each is then read as bytes, without building the states along it for every set
        of members already written."""
        found = self._nfa.literal_rest(member)
        if found is not None:
            return found, member
        closure = self._closure(member)
        if len(closure) == 1:
            (only,) = closure
            found = self._nfa.literal_rest(only)
            if found is not None:
                return found, only
        return None

    def after_literal(self, member: int) -> int:
        """The NFA state after the literal `literal_rest` found in NFA state `member`."""
        return self._nfa.after_literal(member)

    def text_cover(self, state: int) -> tuple[int | None, int, int]:
        """What the NFA states `state` stands for tell of text (see NFA.text_reach): the most
        characters of text such that some of them takes every string of up to that many and
        none of them takes a longer one (-1: any number; None where none tells), the state of
        those that tell and the state of the others (DEAD: none; `state` itself where none
        tells). The tokens `state` allows are then the text tokens of up to that many
        characters, those of no text (quotes, escapes, partial characters) the first of the two
        states allows, and those the second allows. Cached."""
        found = self._covers.get(state)
        if found is None:
            reach: int | None = None
            telling, others = [], []
            for member in self._sets[state]:
                taken = self._nfa.text_reach(member)
                if taken is None:
                    others.append(member)
                else:
                    telling.append(member)
                    reach = taken if reach is None else -1 if min(reach, taken) < 0 else max(reach, taken)
            if reach is None:
                found = (None, DEAD, state)
            else:
                found = (reach, self.state_for(frozenset(telling)), self.state_for(frozenset(others)))
            self._covers[state] = found
        return found

    def escapes_taken(self, state: int) -> frozenset[str] | None:
        """The kinds of the NFA states `state` stands for where each takes every escape as any
        other of its kind does (see NFA.escapes_taken); None where one does not. Cached."""
        if state in self._escape_kinds:
            return self._escape_kinds[state]
        kinds = [self._nfa.escapes_taken(member) for member in self._sets[state]]
        found = None if None in kinds else frozenset(kind for kind in kinds if kind is not None)
        self._escape_kinds[state] = found
        return found

    def _single_member(self, state: int) -> int | None:
        members = self._sets[state]
        if len(members) != 1:
            return None
        (member,) = members
        return member

    def state_of(self, nfa_state: int) -> int:
        """The state standing for one NFA state (`state_for` of it alone, cached: a text run, a
        walk along literals name the same ones again)."""
        found = self._singles.get(nfa_state)
        if found is None:
            found = self._singles[nfa_state] = self.state_for(frozenset((nfa_state,)))
        return found

    def is_final(self, state: int) -> bool:
        """Accepting with no way to continue: generation must stop here."""
        return self.is_accepting(state) and not self.row(state).any()

    def forced_bytes(self, state: int) -> bytes:
        """The longest byte string the automaton allows from `state` without any choice.

        Stops at the first accepting state or the first state with two or more bytes.
        """
        found = self._forced.get(state)
        if found is None:
            found = self._follow_forced(state)
            self._forced[state] = found
        return found

    def _follow_forced(self, state: int) -> bytes:
        out = bytearray()
        while not self.is_accepting(state):
            allowed = np.flatnonzero(self.row(state))
            if len(allowed) != 1:
                break
            out.append(int(allowed[0]))
            state = int(self.table[state, allowed[0]])
        return bytes(out)

    def ensure_rows(self, states: set[int]) -> None:
        for state in states:
            if self.table[state, 0] == UNKNOWN:
                self._build_row(state)

    def _build_row(self, state: int) -> None:
        """Successors for all 256 bytes at once. Edges over the same bytes go together; where
        those byte ranges do not overlap (most rows: a literal's byte, a class's ranges), each
        is one slice of the row; else the byte axis is cut where any edge starts or ends, and
        each piece (one set of NFA targets) becomes one slice. In C where it was compiled
        (core/automaton/_rows.c: the same rows, each piece's targets gathered in an array)."""
        if _rows is not None:
            _rows.build_row(self, self._nfa, state)
            return
        members = self._closure_of(self._sets[state])
        by_range: dict[tuple[int, int], set[int]] = {}
        for nfa_state in members:
            for low, high, target in self._nfa.edges_of(nfa_state):
                found = by_range.get((low, high))
                if found is None:
                    by_range[low, high] = {target}
                else:
                    found.add(target)
        ranges = sorted(by_range)
        if all(earlier[1] < later[0] for earlier, later in itertools.pairwise(ranges)):
            pieces = [(low, high + 1, frozenset(by_range[low, high])) for low, high in ranges]
        else:
            pieces = self._cut(by_range)
        by_targets: dict[frozenset[int], int] = {}
        slices = []
        for low, end, key in pieces:
            successor = by_targets.get(key)
            if successor is None:
                successor = by_targets[key] = self.state_for(key)
            slices.append((low, end, successor))
        row = self.table[state]  # after state_for, which may have replaced the table
        row[:] = DEAD
        for low, end, successor in slices:
            row[low:end] = successor

    @staticmethod
    def _cut(by_range: dict[tuple[int, int], set[int]]) -> list[tuple[int, int, frozenset[int]]]:
        """The byte axis cut where any of the ranges starts or ends, with the targets of the
        ranges covering each piece (pieces no range covers left out)."""
        cuts = sorted({low for low, _ in by_range} | {high + 1 for _, high in by_range})
        pieces = []
        for low, end in itertools.pairwise(cuts):
            covering = (targets for (first, last), targets in by_range.items() if first <= low and end - 1 <= last)
            key = frozenset(target for targets in covering for target in targets)
            if key:
                pieces.append((low, end, key))
        return pieces

    def _closure_of(self, states: Iterable[int]) -> frozenset[int]:
        result: set[int] = set()
        for state in states:
            result.update(self._closure(state))
        return frozenset(result)

    def _closure(self, state: int) -> tuple[int, ...]:
        found = self._closures.get(state)
        if found is None:
            found = self._closures[state] = self._nfa.closure(state)
        return found

    def state_for(self, nfa_states: frozenset[int]) -> int:
        """The DFA state standing for `nfa_states` (targets of byte edges, not yet closed under
        epsilon edges: the closure waits until the state's row is needed). Every NFA state knows
        its distance to acceptance, so liveness, distance and acceptance are known without the
        closure."""
        distance = self._nfa.distance
        if len(nfa_states) == 1:  # most: a walk's next state along a literal, a text run's
            (only,) = nfa_states
            live: tuple[int, ...] = (only,) if distance[only] >= 0 else ()
        else:
            live = tuple(sorted([member for member in nfa_states if distance[member] >= 0]))
        found = self._ids.get(live)
        if found is not None:
            return found
        new_id = len(self._sets)
        self._sets.append(live)
        self._ids[live] = new_id
        if new_id >= len(self.table):
            self._reserve(2 * len(self.table))
        self.distance_array[new_id] = min([distance[member] for member in live])  # live is never empty: that is DEAD
        return new_id
