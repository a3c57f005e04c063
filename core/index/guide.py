"""A Guide: one position in a compiled schema's automaton, advanced token by token.

It walks one of the schema's two automata: the texts this library's decoder writes (declared
properties in schema order), or every text the schema allows (members in any order,
undeclared properties too: for checking texts from elsewhere). It answers which tokens may come next (as
ids, or as a bitmask in the layout llguidance and XGrammar use: bit `t % 32` of 32-bit word
`t // 32` is token `t`), moves past a chosen token,
takes tokens back, and says what the schema forces next and how few bytes can still finish
the document. This library's own decoder uses nothing else of a compiled schema.

A guide is cheap: the automaton and its token sets belong to the compiled schema and are
shared by every guide over it (and computed once per state, whoever asks first); a guide
holds only the trail of states it passed through, shared with its copies, so `copy` costs
the same however many tokens were taken. Not thread-safe: the shared automaton grows as
guides explore it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..automaton.dfa import DEAD
from .bitmasks import mask_words
from .token_index import TokenIndex

if TYPE_CHECKING:
    from ..automaton.dfa import LazyDFA
    from ..vocab.token_table import IdArray

# The state after an end-of-generation token: the document is over, nothing may follow.
_STOPPED = -2


def new_bitmask(vocabulary_size: int) -> npt.NDArray[np.int32]:
    """A zeroed bitmask for `fill_mask`, one row of `mask_words(vocabulary_size)` words."""
    return np.zeros(mask_words(vocabulary_size), dtype=np.int32)


@dataclass(frozen=True)
class Allowed:
    """The tokens a guide allows next, for a sampler that wants arrays: `ids` of the tokens
    (end-of-generation tokens left out, in no particular order; ascending when filtered by a
    prefix), `may_end` whether an end-of-generation token is allowed as well, `budget_cut`
    whether the budget left out a token the schema allows here."""

    ids: IdArray
    may_end: bool
    budget_cut: bool = False


class _Trail:
    """A state and the trail before it: guides share the states they have in common. Never
    changed once made (a plain class with slots: made at every token, so it must be cheap)."""

    __slots__ = ("before", "state", "taken")

    def __init__(self, state: int, before: _Trail | None, taken: int) -> None:
        self.state, self.before, self.taken = state, before, taken


class Guide:
    """A position in a compiled schema's automaton (see the module's docstring). Made by
    `CompiledSchema.guide()`, at the automaton's start."""

    def __init__(self, automaton: LazyDFA, token_index: TokenIndex) -> None:
        """At the start of `automaton`, answering with `token_index`, its index for one
        vocabulary (both shared with every guide over them: `CompiledSchema.guide()` picks them)."""
        self._dfa, self._index = automaton, token_index
        self._vocab = token_index.table.vocab
        self._words = mask_words(self._vocab.size)
        self._trail = _Trail(self._dfa.start, None, 0)

    def copy(self) -> Guide:
        """An independent guide at the same position (constant time: the trail is shared)."""
        twin = Guide.__new__(Guide)
        twin.__dict__.update(self.__dict__)
        return twin

    @property
    def state(self) -> int:
        """The automaton state (an opaque number; -2 once an end-of-generation token was taken)."""
        return self._trail.state

    @property
    def vocabulary_size(self) -> int:
        return self._vocab.size

    @property
    def tokens_taken(self) -> int:
        return self._trail.taken

    # -- what may come next --------------------------------------------------------------

    def allowed(self, budget: int | None = None, starting_with: bytes = b"") -> Allowed:
        """The tokens allowed next as arrays (see Allowed). With `budget` (tokens left, this
        one included), only tokens after which the document can still close in time: each
        byte still needed may take a token, as no token is shorter than a byte. With
        `starting_with`, only tokens whose bytes start with it (and no end of generation).
        With neither, ascending, read from the state's mask (see fill_mask). Whole arrays of
        the latest few states are kept, so asking again is cheap."""
        if self.state == _STOPPED:
            return Allowed(np.zeros(0, dtype=np.int32), may_end=False)
        if budget is None and not starting_with:  # the mask's tokens: none need their end states
            return Allowed(self._index.allowed_ids(self.state), may_end=self.is_accepting())
        arrays = self._index.arrays(self.state)
        ids, needed = arrays.ids, arrays.needed
        if starting_with:
            prefixed = self._index.table.with_prefix(starting_with)
            _, keep, _ = np.intersect1d(ids, prefixed, assume_unique=True, return_indices=True)
            ids, needed = ids[keep], needed[keep]
        cut = False
        if budget is not None and arrays.most_needed > budget:
            fits = needed <= budget
            cut = not fits.all()
            ids = ids[fits]
        return Allowed(ids, may_end=not starting_with and self.is_accepting(), budget_cut=cut)

    def allows_among_others(self, token_id: int, budget: int) -> bool:
        """Whether `allowed(budget)` holds `token_id` and some other choice besides (another
        token, or the end of generation), told without listing the allowed tokens: the token's
        own bytes are walked, and the others are counted among the single-byte tokens. False
        where it cannot be told so (an end-of-generation token, fewer such others): the caller
        then lists them. For a sampler that takes the model's first choice where it is allowed."""
        if not self.allows(token_id, budget):
            return False
        if self.is_accepting():
            return True
        targets = self._dfa.row(self.state)[self._index.table.single_byte_bytes]
        targets = targets[targets != DEAD]
        return int(np.count_nonzero(self._dfa.distance_array[targets] < budget)) >= 2

    def allows(self, token_id: int, budget: int) -> bool:
        """Whether `allowed(budget)` holds `token_id` (never an end-of-generation token), told
        by walking its bytes."""
        if self.state == _STOPPED or token_id in self._vocab.eog_ids:
            return False
        following = self._after(token_id)
        return following != DEAD and 1 + int(self._dfa.distance_array[following]) <= budget

    def budget_cuts_nothing(self, budget: int) -> bool:
        """Whether no token allowed here can need more than `budget` tokens (itself included)
        to close the document, so that `allowed(budget)` leaves none out: False where that is
        not known without listing them."""
        if self.state == _STOPPED:
            return True
        most = self._dfa.most_to_finish(self.state)
        return most is not None and 1 + most <= budget

    def allowed_token_ids(self, budget: int | None = None, starting_with: bytes = b"") -> IdArray:
        """Ascending ids of the tokens allowed next (see `allowed`), end-of-generation ids
        included where the text so far is a complete document; empty once one was taken.
        Allocates: `fill_mask` is the fast way to ask at every step."""
        allowed = self.allowed(budget, starting_with)
        if allowed.may_end:
            return np.union1d(allowed.ids, self._eog_ids()).astype(np.int32, copy=False)
        return np.sort(allowed.ids).astype(np.int32, copy=False)

    def fill_mask(self, bitmask: npt.NDArray[np.int32]) -> None:
        """Write the allowed tokens into `bitmask` (int32, `mask_words(vocabulary_size)` words,
        owned by the caller): bit t % 32 of word t // 32 set for each allowed token t, every
        other bit cleared. A copy and a few words where this state's mask was made before
        (kept for good, but for large masks of patterns: for the latest states); the first
        time, the walk its lexeme needs (core.index.bitmasks). Raises ValueError for a bitmask
        of another shape or type."""
        state = self._trail.state
        if bitmask.dtype != np.int32 or bitmask.shape != (self._words,):
            raise ValueError(f"fill_mask needs an int32 array of shape ({self._words},), not {bitmask.dtype} {bitmask.shape}")
        if state == _STOPPED:
            bitmask[:] = 0
            return
        self._index.fill_mask(state, bitmask)
        if self._dfa.is_accepting(state):
            unsigned = bitmask.view(np.uint32)
            for token in self._eog_ids().tolist():
                unsigned[token >> 5] |= np.uint32(1 << (token & 31))

    def is_accepting(self) -> bool:
        """The text so far is a complete document (more may still follow)."""
        return self.state == _STOPPED or self._dfa.is_accepting(self.state)

    def is_finished(self) -> bool:
        """A complete document after which nothing may follow (or an end token was taken)."""
        return self.state == _STOPPED or self._dfa.is_final(self.state)

    def forced_text(self) -> bytes:
        """The bytes the schema allows next without any choice (up to a complete document)."""
        return b"" if self.state == _STOPPED else self._dfa.forced_bytes(self.state)

    def shortest_completion(self) -> int:
        """The fewest bytes that finish the document from here (0 when it is complete), which
        is also the most tokens finishing it can need: no token is shorter than a byte."""
        return 0 if self.state == _STOPPED else self._dfa.distance(self.state)

    # -- moving --------------------------------------------------------------------------

    def advance(self, token_id: int) -> None:
        """Move past `token_id`. Raises ValueError, and stays where it was, when the id is not
        in the vocabulary or the token is not allowed here."""
        following = self._after(token_id)
        if following == DEAD:
            piece = self._vocab.pieces[token_id]
            raise ValueError(f"token {token_id} ({piece!r}) is not allowed in this state")
        self._trail = _Trail(following, self._trail, self._trail.taken + 1)

    def try_advance(self, token_id: int) -> bool:
        """Move past `token_id` if it is allowed here; False (and no move) if not."""
        following = self._after(token_id)
        if following == DEAD:
            return False
        self._trail = _Trail(following, self._trail, self._trail.taken + 1)
        return True

    def rollback(self, count: int) -> None:
        """Take back the last `count` tokens. Raises ValueError for more than were taken."""
        if not 0 <= count <= self._trail.taken:
            raise ValueError(f"cannot roll back {count} tokens: {self._trail.taken} were taken")
        trail = self._trail
        for _ in range(count):
            assert trail.before is not None
            trail = trail.before
        self._trail = trail

    def _after(self, token_id: int) -> int:
        if isinstance(token_id, bool) or not isinstance(token_id, int | np.integer):
            raise ValueError(f"a token id is an integer, not {type(token_id).__name__}")
        if not 0 <= token_id < self.vocabulary_size:
            raise ValueError(f"token id {token_id} is outside the vocabulary (0 to {self.vocabulary_size - 1})")
        if self.state == _STOPPED:
            return DEAD
        if token_id in self._vocab.eog_ids:
            return _STOPPED if self.is_accepting() else DEAD
        piece = self._vocab.pieces[token_id]
        return self._dfa.walk(self.state, piece) if piece else DEAD

    def _eog_ids(self) -> IdArray:
        return np.asarray(self._vocab.eog_ids, dtype=np.int32)
