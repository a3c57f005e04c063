"""The walks of tokens through the automaton that make a state's bitmask (core.index.bitmasks),
none of which lists where a token leads.

- literals (a property name, `": `, `true`, the keys an object may take next): each is
  followed down the vocabulary's sorted pieces as down a trie, a search per byte, left as soon
  as no token goes on; no DFA row is built for the states along it;
- string bodies that take any text: only the tokens of text then a quote or backslash are
  walked (the text tokens are a precomputed row);
- the rest: the tokens a state's first bytes allow, walked through the lazy DFA's table
  (`walk_through_table`: in C, core/index/_walks.c, where a compiler built it at install;
  else in numpy, a byte position of every token at a time, whose fixed cost per position the
  C walk does not pay: most walks are of a few hundred tokens or fewer).
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from ..automaton.charnfa import length_machine
from ..automaton.dfa import DEAD, UNKNOWN, LazyDFA
from ..automaton.nfa import build_nfa
from ..automaton.regex import Text, lit, seq
from ..vocab.token_table import IdArray, TokenTable, closes_a_string

try:  # compiled at install where a C compiler is found (setup.py); else the numpy walk below
    from . import _walks
except ImportError:  # pragma: no cover - an install without a compiler
    _walks = None  # type: ignore[assignment]

# Where the state after a run allows at most this many bytes, the tokens going on past the run
# are taken by those bytes (a search each); else all are walked.
_FEW_FOLLOWING = 16


def gather(dfa: LazyDFA, states: IdArray, column: npt.NDArray[np.uint8]) -> IdArray:
    """The state after byte `column[i]` from `states[i]`, for every i; rows missing are built."""
    # One flat gather is several times cheaper than numpy's two-array fancy indexing.
    offsets = states.astype(np.intp) * 256 + column
    following = dfa.table.ravel()[offsets]
    unknown = following == UNKNOWN
    if unknown.any():
        dfa.ensure_rows(set(states[unknown].tolist()))
        following = dfa.table.ravel()[offsets]
    return following


def walk_through_table(
    dfa: LazyDFA, table: TokenTable, ids: IdArray, states: IdArray | int, positions: IdArray | int
) -> tuple[IdArray, IdArray]:
    """Of tokens `ids`, each from byte `positions[i]` on and at state `states[i]` (either may be
    one int for all), those `dfa` takes to their end, and the states they end at. In C where the
    walk was compiled (a read of the table per byte), else in numpy (a few array operations per
    byte position)."""
    if _walks is not None:  # it reads int32 arrays (the casts copy nothing where they are)
        ids = ids.astype(np.int32, copy=False)
        states, positions = (_one_or_int32(value) for value in (states, positions))
        kept_ids, kept_states = np.empty(len(ids), dtype=np.int32), np.empty(len(ids), dtype=np.int32)
        kept = _walks.walk(dfa, table.bytes, table.lengths, ids, states, positions, kept_ids, kept_states)
        return kept_ids[:kept], kept_states[:kept]
    states, positions = (
        np.full(len(ids), value, dtype=np.int32) if isinstance(value, int | np.integer) else value
        for value in (states, positions)
    )
    return numpy_walk_through_table(dfa, table, ids, states, positions)


def _one_or_int32(value: IdArray | int) -> IdArray | int:
    """One int for every token as a Python int, else the array as int32 (copied only where not)."""
    return int(value) if isinstance(value, int | np.integer) else value.astype(np.int32, copy=False)


def numpy_walk_through_table(
    dfa: LazyDFA, table: TokenTable, ids: IdArray, states: IdArray, positions: IdArray
) -> tuple[IdArray, IdArray]:
    """`walk_through_table` in numpy: every token at once, a byte position at a time, dropping
    tokens as they die (rows missing are built for all the states a position reaches together)."""
    lengths = table.lengths[ids]
    finished = lengths == positions
    done_ids: list[IdArray] = [ids[finished]]
    done_states: list[IdArray] = [states[finished]]
    going = ~finished
    ids, states, lengths, positions = ids[going], states[going], lengths[going], positions[going]
    while len(ids):
        following = gather(dfa, states, table.bytes[ids, positions])
        positions = positions + 1
        live = following != DEAD
        finished = live & (lengths == positions)
        done_ids.append(ids[finished])
        done_states.append(following[finished])
        going = live ^ finished
        ids, states, lengths, positions = ids[going], following[going], lengths[going], positions[going]
    return np.concatenate(done_ids), np.concatenate(done_states)


def alive(dfa: LazyDFA, table: TokenTable, state: int, ids: IdArray, position: int = 0) -> IdArray:
    """The tokens among `ids` (each longer than `position` bytes) whose bytes from `position`
    on `dfa` takes from `state`."""
    return walk_through_table(dfa, table, ids, state, position)[0]


def alive_from(dfa: LazyDFA, table: TokenTable, state: int, ids: IdArray, positions: IdArray) -> IdArray:
    """`alive`, each token from a position of its own (`positions`, in bytes)."""
    return walk_through_table(dfa, table, ids, state, positions.astype(np.int32, copy=False))[0]


# What the vocabulary takes along a literal from a prefix (see `_along_literal`), by prefix and
# literal: the keys an object may take next come again for every set of members written.
LiteralWalks = dict[tuple[bytes, bytes], tuple[list[int], tuple[int, int]]]
# Strings whose closings are kept (the latest ones reached: a schema may hold very many strings).
_CLOSINGS_KEPT = 4_096
# Walks kept at most (a bound on memory for a schema of very many names); then forgotten.
_LITERAL_WALKS_KEPT = 65_536


def literal(dfa: LazyDFA, table: TokenTable, state: int, walks: LiteralWalks) -> list[int] | None:
    """The tokens `state` allows where every NFA state of its closure allows one byte only
    (literals: property names, `": `, `true`), else None. Each literal is followed through the
    vocabulary's sorted pieces as down a trie, a search per byte, until no token goes on: no
    row is built for the states along it, and a branch no token takes is left at once.
    `walks` keeps each literal's walk from each prefix."""
    return _going_on(dfa, table, state, b"", table.everything(), walks)


def _going_on(
    dfa: LazyDFA, table: TokenTable, state: int, start: bytes, span: tuple[int, int], walks: LiteralWalks
) -> list[int] | None:
    """The tokens of `span` (those starting with `start`, longer) whose rest `state` allows
    (None at the root where some NFA state of `state`'s closure allows a choice: a string's
    characters, a number's digits are better walked as a row)."""
    closure = dfa.closure(state)
    rests = [dfa.literal_rest(member) for member in closure]  # (each handed on: asked once)
    if all(rest is not None or dfa.single_byte(member) is not None for member, rest in zip(closure, rests, strict=True)):
        return [
            token
            for member, rest in zip(closure, rests, strict=True)
            for token in _along(dfa, table, member, start, span, walks, rest)
        ]
    if not start:
        return None
    reach, telling, others = dfa.text_cover(state)
    kinds = dfa.escapes_taken(telling) if reach == -1 and others == DEAD else None
    if kinds is not None:  # a string taking any text (a name no member declares): only closings are walked
        alike, closing = _taken_alike(table, start, span, kinds)
        return alike + (alive(dfa, table, state, closing, len(start)).tolist() if len(closing) else [])
    following = np.flatnonzero(dfa.row(state)).tolist()
    candidates = table.in_order(start, span, following if len(following) <= _FEW_FOLLOWING else None)
    return alive(dfa, table, state, candidates, len(start)).tolist() if len(candidates) else []


def _along(
    dfa: LazyDFA,
    table: TokenTable,
    member: int,
    start: bytes,
    span: tuple[int, int],
    walks: LiteralWalks,
    rest: tuple[bytes, int] | None,
) -> list[int]:
    """The tokens of `span` (those starting with `start`, longer) that NFA state `member`
    allows after `start`: down the trie along literals and while it allows one byte at a
    time, then as the DFA state of where it got to allows. `rest`: `dfa.literal_rest(member)`."""
    found: list[int] = []
    current = member
    while True:
        if rest is not None:
            data, holder = rest
            ending, span = _along_literal(table, start, span, data, walks)
            found += ending
            start += data
            if span[0] == span[1]:
                return found  # before naming what follows: no token goes past the literal
            current = dfa.after_literal(holder)
        else:
            step = dfa.single_byte(current)
            if step is None:
                break
            byte, current = step
            start += bytes((byte,))
            ending, span = table.narrowed(start, span)
            found += ending
        if span[0] == span[1]:
            return found
        rest = dfa.literal_rest(current)
    return found + (_going_on(dfa, table, dfa.state_of(current), start, span, walks) or [])


def _along_literal(
    table: TokenTable, start: bytes, span: tuple[int, int], data: bytes, walks: LiteralWalks
) -> tuple[list[int], tuple[int, int]]:
    """The tokens that are `start` then part of `data` (`span`: where those starting with
    `start`, longer, lie), and where those starting with `start` and all of `data`, longer, lie
    (empty where none does). Kept in `walks` by `start` and `data` alone: every caller passes
    as `span` the whole run of the tokens starting with `start`, longer, which `start` decides."""
    key = (start, data)
    found = walks.get(key)
    if found is None:
        ending: list[int] = []
        for byte in data:
            start += bytes((byte,))
            taken, span = table.narrowed(start, span)
            ending += taken
            if span[0] == span[1]:
                break
        if len(walks) >= _LITERAL_WALKS_KEPT:
            walks.clear()
        found = walks[key] = (ending, span)
    return found


def quoted(dfa: LazyDFA, table: TokenTable, state: int, closings: OrderedDict[int, tuple[IdArray, IdArray]]) -> IdArray:
    """Of the tokens of text then a quote or backslash, those `state` allows, where `state`
    stands for NFA states inside a string body that take any text (see LazyDFA.text_cover):
    the text tokens they take are a precomputed row (TokenTable.text_mask), and text then a
    control character, or a byte no UTF-8 text holds there, no string body takes. Inside a
    string of free text, text then a quote closes it where the text fits the characters still
    required and allowed, and then goes on as the state after the body allows: that much is
    worked out once per string (`closings`, by that state), for all its positions (a string
    with bounds passes through a state per character); the rest, and every token elsewhere,
    is walked from the tokens whose first byte `state` allows."""
    run = dfa.text_run(state)
    if run is not None and run[0] == 0 and run[1] < 0:
        run = None  # a string of any length: one state for all its positions, walked once
    if dfa.escapes_taken(state) is None:
        ids, first_bytes = table.quoted if run is None else table.escaping
    else:  # the tokens of text and escapes closing no string: in `text_and_escapes` instead
        ids, first_bytes = table.quoted_closing if run is None else table.escaping_closing
    candidates = ids[dfa.row(state)[first_bytes] != DEAD]
    walked = alive(dfa, table, state, candidates)
    if run is None:
        return walked
    end = dfa.text_end(state)
    ids, characters = latest_kept(closings, end, _CLOSINGS_KEPT, lambda: _closing(dfa, table, end))
    count, spare = run
    fits = characters >= count
    if spare >= 0:
        fits &= characters <= count + spare
    return np.concatenate([walked, ids[fits]])


# By vocabulary, and kinds of string (see text_and_escapes): worked out once per vocabulary.
_TEXT_AND_ESCAPES: weakref.WeakKeyDictionary[TokenTable, dict[frozenset[str], npt.NDArray[np.int32]]] = (
    weakref.WeakKeyDictionary()
)


def text_and_escapes(table: TokenTable, kinds: frozenset[str]) -> npt.NDArray[np.int32]:
    """The text tokens (TokenTable.text_mask, of any length) and those of text and escapes
    closing no string (TokenTable.escaping_inside) that a string body takes where every escape
    of each of `kinds` goes on (LazyDFA.escapes_taken), as a read-only bitmask. The second are
    walked once, from a string taking any characters written as that kind writes them (a Text,
    or a string automaton taking any characters): from every such state the same go on. Else
    each new such state (the name of an undeclared member, in every set of members written)
    would build the states after a backslash again for its few tokens."""
    by_kinds = _TEXT_AND_ESCAPES.setdefault(table, {})
    found = by_kinds.get(kinds)
    if found is None:
        found = table.text_mask(-1).copy()
        for kind in kinds:
            dfa, opened = _any_string(kind)
            taken = alive(dfa, table, opened, table.escaping_inside)
            np.bitwise_or.at(found, taken >> 5, np.left_shift(1, taken & 31).astype(np.uint32).view(np.int32))
        found.flags.writeable = False
        by_kinds[kinds] = found
    return found


def _any_string(kind: str) -> tuple[LazyDFA, int]:
    """An automaton of the strings of any characters written as `kind` writes them (see
    LazyDFA.escapes_taken), and its state after the opening quote. Built for each use: it is
    small, and a shared one would grow under callers in several threads."""
    body = Text(0, None) if kind == "text" else length_machine(0, None)
    dfa = LazyDFA(build_nfa(seq(lit('"'), body, lit('"'))))
    return dfa, dfa.step(dfa.start, 0x22)


# By vocabulary, then by the bytes before and the kinds of string (see _taken_alike).
_ALIKE: weakref.WeakKeyDictionary[TokenTable, dict[tuple[bytes, frozenset[str]], tuple[list[int], IdArray]]] = (
    weakref.WeakKeyDictionary()
)
# Starts kept per vocabulary at most (a bound on memory; then forgotten).
_ALIKE_KEPT = 4_096


def _taken_alike(
    table: TokenTable, start: bytes, span: tuple[int, int], kinds: frozenset[str]
) -> tuple[list[int], IdArray]:
    """Of the tokens of `span` (those starting with `start`, longer; `start` decides it), those
    whose rest every state taking any text and every escape of `kinds` takes alike (text and
    escapes closing no string, see text_and_escapes), and those whose rest would close the
    string, which only a walk from the state itself tells. Worked out once per vocabulary."""
    by_start = _ALIKE.setdefault(table, {})
    found = by_start.get((start, kinds))
    if found is None:
        candidates = table.in_order(start, span)
        rests = (table.vocab.pieces[token][len(start) :] for token in candidates.tolist())
        closes = np.fromiter(map(closes_a_string, rests), dtype=bool, count=len(candidates))
        taken: set[int] = set()
        for kind in kinds:
            dfa, opened = _any_string(kind)
            taken.update(alive(dfa, table, opened, candidates[~closes], len(start)).tolist())
        if len(by_start) >= _ALIKE_KEPT:
            by_start.clear()
        found = by_start[(start, kinds)] = (sorted(taken), candidates[closes])
    return found


def _closing(dfa: LazyDFA, table: TokenTable, end: int) -> tuple[IdArray, IdArray]:
    """The tokens of text then a quote whose quote and rest `end` takes (where a string's
    closing quote is read), with the characters of text before the quote."""
    closing = table.closing
    taken = np.isin(closing.ids, alive_from(dfa, table, end, closing.ids, closing.quote_at))
    return closing.ids[taken], closing.characters[taken]


_K = TypeVar("_K")
_V = TypeVar("_V")


def latest_kept(cache: OrderedDict[_K, _V], key: _K, limit: int, build: Callable[[], _V]) -> _V:
    """`cache[key]`, built where missing; the `limit` latest used are kept."""
    found = cache.get(key)
    if found is None:
        found = cache[key] = build()
        if len(cache) > limit:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return found
