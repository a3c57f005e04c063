"""A Guide: one position in a compiled schema's automaton, advanced token by token.

It answers which tokens may come next (as ids, or as a bitmask in the layout llguidance and
XGrammar use: bit `t % 32` of 32-bit word `t // 32` is token `t`), moves past a chosen token,
takes tokens back, and says what the schema forces next and how few bytes can still finish
the document. A guide is cheap: the automaton and its token sets belong to the compiled
schema and are shared by every guide over it (and computed once per state, whoever asks
first); a guide holds only the states it passed through. Not thread-safe: the shared
automaton grows as guides explore it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .automaton.dfa import DEAD
from .index import mask_words

if TYPE_CHECKING:
    from .compiled import CompiledSchema
    from .vocab import IdArray

# The state after an end-of-generation token: the document is over, nothing may follow.
_STOPPED = -2


def new_bitmask(vocabulary_size: int) -> npt.NDArray[np.int32]:
    """A zeroed bitmask for `fill_mask`, one row of `mask_words(vocabulary_size)` words."""
    return np.zeros(mask_words(vocabulary_size), dtype=np.int32)


class Guide:
    """A position in `compiled`'s automaton (see the module's docstring)."""

    def __init__(self, compiled: CompiledSchema) -> None:
        self._compiled = compiled
        self._states = [compiled.dfa.start]

    def copy(self) -> Guide:
        """An independent guide at the same position (copies a list of states, nothing more)."""
        twin = Guide.__new__(Guide)
        twin._compiled, twin._states = self._compiled, list(self._states)
        return twin

    @property
    def state(self) -> int:
        """The automaton state (an opaque number; -2 once an end-of-generation token was taken)."""
        return self._states[-1]

    @property
    def vocabulary_size(self) -> int:
        return self._compiled.vocab.size

    def allowed_token_ids(self, budget: int | None = None) -> IdArray:
        """Ascending ids of the tokens allowed next, end-of-generation ids only where the text
        so far is a complete document; empty once one was taken. With `budget` (tokens left,
        this one included), only tokens after which the document can still close in time:
        each byte still needed may take a token, as no token is shorter than a byte.
        Allocates: `fill_mask` is the fast way to ask at every step."""
        if self.state == _STOPPED:
            return np.zeros(0, dtype=np.int32)
        transitions = self._compiled.index.transitions(self.state)
        ids = transitions.token_ids
        if budget is not None:
            ids = ids[1 + self._compiled.dfa.distance_array[transitions.end_states] <= budget]
        if self.is_accepting():
            return np.union1d(ids, self._eog_ids()).astype(np.int32)
        return np.sort(ids).astype(np.int32)

    def fill_mask(self, bitmask: npt.NDArray[np.int32]) -> None:
        """Write the allowed tokens into `bitmask` (int32, `mask_words(vocabulary_size)` words,
        owned by the caller): bit t % 32 of word t // 32 set for each allowed token t, every
        other bit cleared. About a microsecond where this state's mask was packed before;
        the first time, a pass over the state's token set. Raises ValueError for a bitmask of
        another shape or type."""
        words = mask_words(self.vocabulary_size)
        if bitmask.dtype != np.int32 or bitmask.shape != (words,):
            raise ValueError(f"fill_mask needs an int32 array of shape ({words},), not {bitmask.dtype} {bitmask.shape}")
        if self.state == _STOPPED:
            bitmask[:] = 0
            return
        bitmask[:] = self._compiled.index.packed_mask(self.state)
        if self.is_accepting():
            unsigned = bitmask.view(np.uint32)
            for token in self._eog_ids().tolist():
                unsigned[token >> 5] |= np.uint32(1 << (token & 31))

    def advance(self, token_id: int) -> None:
        """Move past `token_id`. Raises ValueError, and stays where it was, when the id is not
        in the vocabulary or the token is not allowed here."""
        following = self._after(token_id)
        if following == DEAD:
            piece = self._compiled.vocab.pieces[token_id]
            raise ValueError(f"token {token_id} ({piece!r}) is not allowed in this state")
        self._states.append(following)

    def try_advance(self, token_id: int) -> bool:
        """Move past `token_id` if it is allowed here; False (and no move) if not."""
        following = self._after(token_id)
        if following == DEAD:
            return False
        self._states.append(following)
        return True

    def rollback(self, count: int) -> None:
        """Take back the last `count` tokens. Raises ValueError for more than were taken."""
        if not 0 <= count < len(self._states):
            raise ValueError(f"cannot roll back {count} tokens: {len(self._states) - 1} were taken")
        del self._states[len(self._states) - count :]

    @property
    def tokens_taken(self) -> int:
        return len(self._states) - 1

    def is_accepting(self) -> bool:
        """The text so far is a complete document (more may still follow)."""
        return self.state == _STOPPED or self._compiled.dfa.is_accepting(self.state)

    def is_finished(self) -> bool:
        """A complete document after which nothing may follow (or an end token was taken)."""
        return self.state == _STOPPED or self._compiled.dfa.is_final(self.state)

    def forced_text(self) -> bytes:
        """The bytes the schema allows next without any choice (up to a complete document)."""
        return b"" if self.state == _STOPPED else self._compiled.dfa.forced_bytes(self.state)

    def shortest_completion(self) -> int:
        """The fewest bytes that finish the document from here (0 when it is complete), which
        is also the most tokens finishing it can need: no token is shorter than a byte."""
        return 0 if self.state == _STOPPED else self._compiled.dfa.distance(self.state)

    def _after(self, token_id: int) -> int:
        if isinstance(token_id, bool) or not isinstance(token_id, int | np.integer):
            raise ValueError(f"a token id is an integer, not {type(token_id).__name__}")
        if not 0 <= token_id < self.vocabulary_size:
            raise ValueError(f"token id {token_id} is outside the vocabulary (0 to {self.vocabulary_size - 1})")
        if self.state == _STOPPED:
            return DEAD
        if token_id in self._compiled.vocab.eog_ids:
            return _STOPPED if self.is_accepting() else DEAD
        piece = self._compiled.vocab.pieces[token_id]
        return self._compiled.dfa.walk(self.state, piece) if piece else DEAD

    def _eog_ids(self) -> IdArray:
        return np.asarray(self._compiled.vocab.eog_ids, dtype=np.int32)
