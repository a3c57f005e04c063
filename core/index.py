"""Which tokens each automaton state allows, and where each one leads.

For a state the index walks every candidate token through the lazy DFA at once with numpy
gathers, one byte position per step, dropping tokens as they die. Candidates are the tokens
whose first byte the state allows, so narrow states (a key literal, a digit) touch only a
few hundred tokens. Results are cached per state; DFA rows missing during a walk are built
on the spot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .automaton.dfa import DEAD, UNKNOWN, LazyDFA
from .vocab import PLAIN_BYTES, IdArray, TokenTable

# Above this share of the vocabulary, walk all tokens instead of concatenating groups.
_WIDE_STATE_SHARE = 0.5


@dataclass(frozen=True)
class Transitions:
    """Allowed token ids (in no particular order) and the DFA state each one leads to."""

    token_ids: IdArray
    end_states: IdArray


class TokenIndex:
    def __init__(self, dfa: LazyDFA, table: TokenTable) -> None:
        self.dfa = dfa
        self.table = table
        self._cache: dict[int, Transitions] = {}

    def transitions(self, state: int) -> Transitions:
        """Tokens allowed from `state` (end-of-generation tokens excluded). Cached."""
        found = self._cache.get(state)
        if found is None:
            found = self._walk(state)
            self._cache[state] = found
        return found

    def _candidates(self, state: int) -> IdArray:
        row = self.dfa.row(state)
        first_bytes = np.flatnonzero(row)
        if len(first_bytes) == 0:
            return np.empty(0, dtype=np.int32)
        count = int(self.table.first_byte_counts[first_bytes].sum())
        if count > _WIDE_STATE_SHARE * len(self.table.walkable):
            return self.table.walkable
        return np.concatenate([self.table.by_first_byte[b] for b in first_bytes])

    def _walk(self, state: int) -> Transitions:
        chain = self._plain_chain(state)
        if len(chain) > 1:
            return self._walk_with_plain_slice(state, chain)
        ids = self._candidates(state)
        if ids is self.table.walkable:
            return self._walk_everything(state)
        return self._walk_tokens(state, ids)

    def _plain_chain(self, state: int) -> list[int]:
        """States after 0, 1, 2, ... plain characters, as long as every plain character leads
        to one and the same live state (inside a JSON string whose text is free, up to a
        length bound), and at most as many as the longest plain token."""
        chain = [state]
        longest = int(self.table.plain_lengths[-1]) if len(self.table.plain_lengths) else 0
        while len(chain) <= longest:
            following = self.dfa.row(chain[-1])[PLAIN_BYTES]
            first = following[0]
            if first == DEAD or not (following == first).all():
                break
            chain.append(int(first))
        return chain

    def _walk_with_plain_slice(self, state: int, chain: list[int]) -> Transitions:
        """Plain tokens up to the chain's length are allowed without a walk, and end where the
        chain is after their length; longer plain tokens and all others are walked."""
        table = self.table
        reach = len(chain) - 1
        free = table.plain_up_to(reach)
        free_ends = np.asarray(chain, dtype=np.int32)[table.lengths[free]]
        first_bytes = np.flatnonzero(self.dfa.row(state))
        others = [table.rest_by_first_byte[b] for b in first_bytes]
        walked = self._walk_tokens(state, np.concatenate([table.plain_longer_than(reach), *others]))
        return Transitions(np.concatenate([free, walked.token_ids]), np.concatenate([free_ends, walked.end_states]))

    def _walk_tokens(self, state: int, ids: IdArray) -> Transitions:
        states = np.full(len(ids), state, dtype=np.int32)
        lengths = self.table.lengths[ids]
        done_ids: list[IdArray] = []
        done_states: list[IdArray] = []
        position = 0
        while len(ids):
            column = self.table.bytes[ids, position]
            following = self._gather(states, column)
            alive = following != DEAD
            ids, states, lengths = ids[alive], following[alive], lengths[alive]
            position += 1
            finished = lengths == position
            done_ids.append(ids[finished])
            done_states.append(states[finished])
            going = ~finished
            ids, states, lengths = ids[going], states[going], lengths[going]
        if not done_ids:
            return Transitions(np.empty(0, np.int32), np.empty(0, np.int32))
        return Transitions(np.concatenate(done_ids), np.concatenate(done_states))

    def _walk_everything(self, state: int) -> Transitions:
        """Walk all tokens, longest first: dead tokens stay in the dead state (its row is all
        dead), and a token's state stops changing once the walk passes its length."""
        table = self.table
        states = np.full(len(table.by_length), state, dtype=np.int32)
        for position, count in enumerate(table.longer_than):
            if count == 0:
                break
            states[:count] = self._gather(states[:count], table.columns[:count, position])
        alive = states != DEAD
        return Transitions(table.by_length[alive], states[alive])

    def _gather(self, states: IdArray, column: npt.NDArray[np.uint8]) -> IdArray:
        # One flat gather is several times cheaper than numpy's two-array fancy indexing.
        offsets = states.astype(np.intp) * 256 + column
        following = self.dfa.table.ravel()[offsets]
        unknown = following == UNKNOWN
        if unknown.any():
            self.dfa.ensure_rows(set(states[unknown].tolist()))
            following = self.dfa.table.ravel()[offsets]
        return following
