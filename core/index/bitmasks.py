"""A state's allowed tokens as a bitmask (bit `t % 32` of 32-bit word `t // 32` for token `t`),
made once per state without listing where each token leads, and kept small.

The Guide's `fill_mask` needs only which tokens a state allows, not the states they lead to
(the token index lists those, for the decoder's budget). So a state's mask is made by the
cheapest walk its NFA states allow (core.index.mask_walks): where some of them take any text
(a string body of free text, a string searched for a pattern, a property name other than the
declared ones; see LazyDFA.text_cover), the text tokens they take are one precomputed row of
the vocabulary, as llguidance's slicer adds a slice wholly inside a lexeme as a block; where
all are literals, the vocabulary is walked as a trie; else the token index's walk serves.

A small mask is kept as a shared row (or none) and the few words it adds, a copy and a scatter
to write out, for the latest many thousand states (within a budget of words); the few large
ones (a pattern's class over most of the vocabulary) for the latest few hundred.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..automaton.dfa import DEAD, LazyDFA
from ..vocab.token_table import IdArray, TokenTable
from .mask_walks import LiteralWalks, latest_kept, literal, quoted, text_and_escapes

try:  # compiled at install where a C compiler is found (setup.py); else numpy and Python below
    from ._walks import add as add_ids
    from ._walks import fill as fill_words
    from ._walks import pack
except ImportError:  # pragma: no cover - an install without a compiler
    pack = None  # type: ignore[assignment]
    fill_words = add_ids = None  # type: ignore[assignment]

PackedMask = npt.NDArray[np.int32]
# Masks adding more than a quarter of their words to their row are kept for the latest states
# only (6 KB each for 49k tokens, 32 KB for 262k: a bounded string of a pattern passes through
# a new state at every character).
_LARGE_MASKS_KEPT = 256
# Lists of a state's tokens are kept for this many of the latest states (inside a string of
# free text the same state comes back token after token).
_IDS_KEPT = 4
# Masks that add a quarter of their words or fewer to their row are kept for this many states,
# and while the words they add come to no more than this (a schema is untrusted: a pattern's
# states are many, and a mask over Gemma 3's 262k tokens may add 2,048 words).
_SMALL_MASKS_KEPT = 65_536
_SMALL_MASK_WORDS_KEPT = 4_000_000
# Up to this many tokens are set bit by bit in Python (numpy's fixed cost is higher).
_FEW_IDS = 64
# The latest states' masks are kept written out whole, in this many words together at most
# (a copy writes one out: a mask's words scattered over its row cost several times that, and
# a walk comes back to the states of its last few tokens again and again).
_WHOLE_MASK_WORDS_KEPT = 1_000_000


def mask_words(vocabulary_size: int) -> int:
    """How many 32-bit words a bitmask over a vocabulary of this size needs."""
    return -(-vocabulary_size // 32)


@dataclass(slots=True)
class StateMask:
    """A state's bitmask: a row (shared by many states, such as the text tokens of up to so
    many characters; the state's own where `large`) or none, and the words in which the
    state's mask has more bits set, with those bits. Never changed once made (not frozen: one
    is made for every state reached, and a frozen dataclass's __init__ costs a call per field)."""

    base: PackedMask | None
    words: IdArray
    bits: PackedMask
    large: bool = False

    @staticmethod
    def of_ids(ids: Iterable[int], base: PackedMask | None = None) -> StateMask:
        """The mask of `base` and the tokens `ids` (an id may come twice)."""
        if pack is not None and isinstance(ids, list | np.ndarray):
            if isinstance(ids, np.ndarray):
                ids = ids.astype(np.int32, copy=False)
            words, bits = np.empty(len(ids), dtype=np.int32), np.empty(len(ids), dtype=np.int32)
            count = pack(ids, words, bits)
            return StateMask(base, words[:count], bits[:count])
        if isinstance(ids, np.ndarray) and len(ids) > _FEW_IDS:
            return StateMask._of_many(ids, base)
        listed = ids.tolist() if isinstance(ids, np.ndarray) else list(ids)
        if len(listed) > _FEW_IDS:
            return StateMask._of_many(np.asarray(listed, dtype=np.int32), base)
        found: dict[int, int] = {}
        for token in listed:
            found[token >> 5] = found.get(token >> 5, 0) | 1 << (token & 31)
        words_array = np.fromiter(found, dtype=np.int32, count=len(found))
        bits_array = np.fromiter(found.values(), dtype=np.uint32, count=len(found)).view(np.int32)
        return StateMask(base, words_array, bits_array)

    @staticmethod
    def _of_many(ids: IdArray, base: PackedMask | None) -> StateMask:
        """`of_ids` for many ids: sorted, so each word's bits are one run to OR together."""
        ordered = np.sort(ids.astype(np.int32, copy=False))
        words = ordered >> 5
        bits = np.left_shift(np.uint32(1), (ordered & 31).astype(np.uint32))
        starts = np.flatnonzero(np.concatenate(([True], words[1:] != words[:-1])))
        return StateMask(base, words[starts], np.bitwise_or.reduceat(bits, starts).view(np.int32))

    @staticmethod
    def of_packed(mask: PackedMask, base: PackedMask | None = None) -> StateMask:
        """`mask` (which holds `base`) as what it adds to `base` where that is a quarter of its
        words or fewer, else as a row of its own (`large`)."""
        added = mask if base is None else mask & ~base
        words = np.flatnonzero(added)
        if len(words) > len(mask) // 4:
            mask.flags.writeable = False
            return StateMask(mask, np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32), large=True)
        return StateMask(base, words.astype(np.int32), added[words])

    def ids(self, words: int) -> IdArray:
        """The tokens of this mask, ascending (`words`: the words of a whole mask)."""
        if self.base is None:  # a few words: only those are read
            rows, bits = np.nonzero(np.unpackbits(self.bits.view(np.uint8), bitorder="little").reshape(-1, 32))
            return np.sort(self.words[rows] * 32 + bits.astype(np.int32))
        whole = np.empty(words, dtype=np.int32)
        self.fill(whole)
        return np.flatnonzero(np.unpackbits(whole.view(np.uint8), bitorder="little")).astype(np.int32)

    def fill(self, bitmask: PackedMask) -> None:
        """Write this mask into `bitmask` (every bit, set or cleared)."""
        if fill_words is not None and bitmask.flags.c_contiguous:
            fill_words(bitmask, self.base, self.words, self.bits)
            return
        if self.base is None:
            bitmask[:] = 0
        else:
            bitmask[:] = self.base
        bitmask[self.words] |= self.bits


def packed(id_arrays: Iterable[IdArray], vocabulary_size: int) -> PackedMask:
    """A new bitmask with the bits of every id in `id_arrays` set (an id may come twice)."""
    if add_ids is not None:
        mask = np.zeros(mask_words(vocabulary_size), dtype=np.int32)
        for ids in id_arrays:
            add_ids(mask, ids.astype(np.int32, copy=False))
        return mask
    bits = np.zeros(mask_words(vocabulary_size) * 32, dtype=bool)
    for ids in id_arrays:
        bits[ids] = True
    return np.packbits(bits, bitorder="little").view("<i4").astype(np.int32)


# A state's tokens listed in parts by the token index's walk, for states no cheaper walk serves.
Walked = Callable[[int], Iterable[IdArray]]


class StateMasks:
    """Each state's mask, made on first asking and kept (see the module). The token index's
    walk (`walked`) is handed in with each call, not held: holding it would hold the index,
    which holds these masks, and a cycle would keep a dropped schema's automata alive until
    the cyclic collector found them."""

    def __init__(self, dfa: LazyDFA, table: TokenTable) -> None:
        self.dfa, self.table = dfa, table
        self._words = mask_words(table.vocab.size)
        self._small: OrderedDict[int, StateMask] = OrderedDict()
        self._small_words = 0  # the words the small masks kept add to their rows, together
        self._large: OrderedDict[int, StateMask] = OrderedDict()
        self._closings: OrderedDict[int, tuple[IdArray, IdArray]] = OrderedDict()
        self._literal_walks: LiteralWalks = {}
        self._ids: OrderedDict[int, IdArray] = OrderedDict()
        self._whole: OrderedDict[int, PackedMask] = OrderedDict()
        self._whole_kept = max(16, _WHOLE_MASK_WORDS_KEPT // self._words)

    def fill(self, state: int, bitmask: PackedMask, walked: Walked) -> None:
        """Write the tokens `state` allows into `bitmask` (every bit, set or cleared): a copy
        where it was written out for one of the latest states."""
        whole = self._whole.get(state)
        if whole is not None:
            self._whole.move_to_end(state)
            np.copyto(bitmask, whole)
            return
        again = state in self._small or state in self._large
        self.mask(state, walked).fill(bitmask)
        if again:  # a state come back to: likely to again (not one passed through once)
            self._whole[state] = bitmask.copy()
            if len(self._whole) > self._whole_kept:
                self._whole.popitem(last=False)

    def packed(self, state: int, walked: Walked) -> PackedMask:
        """The tokens `state` allows as a new bitmask."""
        mask = np.empty(self._words, dtype=np.int32)
        self.mask(state, walked).fill(mask)
        return mask

    def ids(self, state: int, walked: Walked) -> IdArray:
        """The tokens `state` allows, ascending. Read-only; kept for the latest few states."""

        def listed() -> IdArray:
            found = self.mask(state, walked).ids(self._words)
            found.flags.writeable = False
            return found

        return latest_kept(self._ids, state, _IDS_KEPT, listed)

    def mask(self, state: int, walked: Walked) -> StateMask:
        """The tokens `state` allows (end-of-generation tokens left out)."""
        found = self._small.get(state)
        if found is not None:
            self._small.move_to_end(state)
            return found
        found = self._large.get(state)
        if found is not None:
            self._large.move_to_end(state)
            return found
        found = self._made(state, walked)
        if found.large:
            self._large[state] = found
            if len(self._large) > _LARGE_MASKS_KEPT:
                self._large.popitem(last=False)
            return found
        self._small[state] = found
        self._small_words += len(found.words)
        while len(self._small) > _SMALL_MASKS_KEPT or self._small_words > _SMALL_MASK_WORDS_KEPT:
            _, dropped = self._small.popitem(last=False)
            self._small_words -= len(dropped.words)
        return found

    def _made(self, state: int, walked: Walked) -> StateMask:
        reach, telling, others = self.dfa.text_cover(state)
        if reach is not None:
            kinds = self.dfa.escapes_taken(telling)  # then reach is -1, and quoted leaves out what this holds
            base = self.table.text_mask(reach) if kinds is None else text_and_escapes(self.table, kinds)
            string_tokens = quoted(self.dfa, self.table, telling, self._closings)
            if others == DEAD:
                return StateMask.of_ids(string_tokens, base)
            along = literal(self.dfa, self.table, others, self._literal_walks)
            if along is not None:  # a key's declared names beside the others: their tokens, listed
                return StateMask.of_ids(np.concatenate([string_tokens, np.asarray(along, dtype=np.int32)]), base)
            mask = self.packed(others, walked)
            mask |= base
            added = StateMask.of_ids(string_tokens)
            mask[added.words] |= added.bits
            return StateMask.of_packed(mask, base)
        found = literal(self.dfa, self.table, state, self._literal_walks)
        if found is not None:
            return StateMask.of_ids(found)
        return StateMask.of_packed(packed(walked(state), self.table.vocab.size))
