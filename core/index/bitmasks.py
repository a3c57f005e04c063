"""A state's allowed tokens as a bitmask (bit `t % 32` of 32-bit word `t // 32` for token `t`),
made without listing where each token leads.

The Guide's `fill_mask` needs only which tokens a state allows. Where some of the NFA states a
DFA state stands for take any text (a string body of free text, a string searched for a pattern,
a property name other than the declared ones; see LazyDFA.text_cover), the text tokens they
take are one precomputed mask of the vocabulary (every text token of up to so many characters,
core.vocab.token_table), and only the few hundred tokens holding no text (quotes, escapes,
partial characters) are walked, with no DFA state built for where the text tokens end. This
is llguidance's slicer: a slice of the vocabulary wholly inside what the lexeme allows is
added as a block, never walked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..automaton.dfa import DEAD, UNKNOWN, LazyDFA
from ..vocab.token_table import IdArray, TokenTable

PackedMask = npt.NDArray[np.int32]
# Where the state after a run allows at most this many bytes, the tokens going on past the run
# are taken by those bytes (a search each); else all are walked.
_FEW_FOLLOWING = 16


def mask_words(vocabulary_size: int) -> int:
    """How many 32-bit words a bitmask over a vocabulary of this size needs."""
    return -(-vocabulary_size // 32)


@dataclass(frozen=True)
class StateMask:
    """A state's bitmask, kept small: a row shared by many states (the text tokens of up to so
    many characters) or none, and the words in which the state's mask has more bits set, with
    those bits. Filling a bitmask from it costs a copy and a scatter of a few words."""

    base: PackedMask | None
    words: IdArray
    bits: PackedMask

    @staticmethod
    def of(mask: PackedMask, base: PackedMask | None, most_words: int) -> StateMask | None:
        """`mask` (which holds `base`) kept as what it adds to `base`; None where that is more
        than `most_words` words."""
        added = mask if base is None else mask & ~base
        words = np.flatnonzero(added)
        if len(words) > most_words:
            return None
        return StateMask(base, words.astype(np.int32), added[words])

    def fill(self, bitmask: PackedMask) -> None:
        """Write this mask into `bitmask` (every bit, set or cleared)."""
        if self.base is None:
            bitmask[:] = 0
        else:
            bitmask[:] = self.base
        bitmask[self.words] |= self.bits


def packed(id_arrays: Iterable[IdArray], vocabulary_size: int) -> PackedMask:
    """A new bitmask with the bits of every id in `id_arrays` set (an id may come twice)."""
    bits = np.zeros(mask_words(vocabulary_size) * 32, dtype=bool)
    for ids in id_arrays:
        bits[ids] = True
    return np.packbits(bits, bitorder="little").view("<i4").astype(np.int32)


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


def alive(dfa: LazyDFA, table: TokenTable, state: int, ids: IdArray, position: int = 0) -> IdArray:
    """The tokens among `ids` (each longer than `position` bytes) whose bytes from `position`
    on `dfa` takes from `state`."""
    lengths = table.lengths[ids]
    states = np.full(len(ids), state, dtype=np.int32)
    kept: list[IdArray] = []
    while len(ids):
        states = gather(dfa, states, table.bytes[:, position][ids])
        position += 1
        live = states != DEAD
        kept.append(ids[live & (lengths == position)])
        going = live & (lengths > position)
        ids, states, lengths = ids[going], states[going], lengths[going]
    return np.concatenate(kept) if kept else np.empty(0, dtype=np.int32)


def literal(dfa: LazyDFA, table: TokenTable, state: int) -> list[int] | None:
    """The tokens `state` allows where every NFA state of its closure allows one byte only
    (literals: property names, `": `, `true`), else None. Each literal is followed through the
    vocabulary's sorted pieces as down a trie, a search per byte, until no token goes on: no
    row is built for the states along it, and a branch no token takes is left at once."""
    return _going_on(dfa, table, state, b"", table.everything())


def _going_on(dfa: LazyDFA, table: TokenTable, state: int, start: bytes, span: tuple[int, int]) -> list[int] | None:
    """The tokens of `span` (those starting with `start`, longer) whose rest `state` allows
    (None at the root where some NFA state of `state`'s closure allows a choice: a string's
    characters, a number's digits are better walked as a row)."""
    closure = dfa.closure(state)
    if all(dfa.single_byte(member) is not None for member in closure):
        return [token for member in closure for token in _along(dfa, table, member, start, span)]
    if not start:
        return None
    following = np.flatnonzero(dfa.row(state)).tolist()
    candidates = table.in_order(start, span, following if len(following) <= _FEW_FOLLOWING else None)
    return alive(dfa, table, state, candidates, len(start)).tolist() if len(candidates) else []


def _along(dfa: LazyDFA, table: TokenTable, member: int, start: bytes, span: tuple[int, int]) -> list[int]:
    """The tokens of `span` (those starting with `start`, longer) that NFA state `member`
    allows after `start`: down the trie while it allows one byte at a time, then as the DFA
    state of where it got to allows."""
    found: list[int] = []
    current = member
    while (step := dfa.single_byte(current)) is not None:
        byte, current = step
        start += bytes((byte,))
        ending, span = table.narrowed(start, span)
        found += ending
        if span[0] == span[1]:
            return found
    return found + (_going_on(dfa, table, dfa.state_for(frozenset((current,))), start, span) or [])


def text_covered(dfa: LazyDFA, table: TokenTable, state: int, reach: int) -> PackedMask:
    """The tokens allowed by `state`, the state of NFA states that take any text of up to
    `reach` characters and no longer (see LazyDFA.text_cover): every token beginning a text of
    up to `reach` characters (a precomputed row), and those of text then a quote or backslash
    whose bytes it takes (a walk of those its first bytes allow). Text then a control
    character, or a byte no UTF-8 text holds there, no string body takes."""
    first_bytes = np.flatnonzero(dfa.row(state)).tolist()
    candidates = [table.quoted_by_first_byte[b] for b in first_bytes]
    walked = alive(dfa, table, state, np.concatenate([np.empty(0, dtype=np.int32), *candidates]))
    mask = packed([walked], table.vocab.size)
    mask |= table.text_mask(reach)
    return mask
