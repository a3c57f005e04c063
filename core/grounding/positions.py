"""Picking a set of tokens out of a list of candidate ids, in the list's order, cheaply when the
same list comes back.

Inside a grounded string body the decoder offers the grounding filter the same list of
candidates (tens of thousands of ids) at every character, while the document lets only a
handful of tokens continue the string. Picking those out by a mask
indexed with every candidate costs a pass over the whole list (about 40 us for 49k ids);
knowing where each token stands in the list makes it one look-up per token. Whether a list
is one already met is told by identity where the list comes as the same read-only array
(the index hands out one per state), else by comparing the arrays (7 us for 49k ids,
memory-bound, more once they have left the CPU's caches).

A list met for the first time is filtered by the mask; met again, it is indexed (once, a few
passes over it), unless it holds a token twice. A large set of tokens (all those occurring
in the document, at the start of a string) is still picked by the mask, looking up thousands
of tokens costing more. Answers are kept per list under the caller's key.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..vocab.token_table import IdArray

Indices = npt.NDArray[np.intp]  # indices into an array of candidates

# Lists remembered (a string of each length bound, or each property, may have its own).
_LISTS_KEPT = 4
# Above one token in this many candidates, a mask over the list (a few nanoseconds a
# candidate) beats looking each token up (about a hundred a token, in Python).
_MASK_FROM_ONE_IN = 32


@dataclass
class _Known:
    """A list of candidates met before: a copy, where each token stands in it (once met
    again), and the answers given for it."""

    ids: IdArray
    given: IdArray | None = None  # the read-only array it came as: the same one again is the same list
    where: IdArray | None = None  # over the vocabulary: index in `ids`, or -1
    repeated: bool = False  # met again: `where` built, or found impossible (a token twice)
    answers: dict[Hashable, IdArray] = field(default_factory=dict)  # read-only: shared


class CandidatePositions:
    """The lists of candidates met lately, for one vocabulary."""

    def __init__(self, vocabulary_size: int) -> None:
        self._size = vocabulary_size
        self._known: list[_Known] = []  # latest first
        self._mark = np.zeros(vocabulary_size, dtype=bool)

    def kept(self, ids: IdArray, tokens: IdArray, key: Hashable) -> IdArray:
        """The candidates in `ids` that are among `tokens` (which may repeat, or name tokens
        `ids` lacks), in the order of `ids`, as a read-only array (it is kept and given again).
        `key` names `tokens` (the same key, the same tokens): the answer for a list is kept
        under it. Costs a compare of `ids` with the lists met lately, then, for a list met
        again, a look-up per token, else a pass."""
        known = self._find(ids)
        found = known.answers.get(key)
        if found is None:
            found = known.ids.take(self._pick(known, tokens))
            found.flags.writeable = False
            known.answers[key] = found
        return found

    def _find(self, ids: IdArray) -> _Known:
        for index, known in enumerate(self._known):
            if known.given is ids or (len(known.ids) == len(ids) and bool((known.ids == ids).all())):
                if not known.repeated:
                    known.repeated, known.where = True, _where_each(known.ids, self._size)
                if index:
                    self._known.insert(0, self._known.pop(index))
                return known
        # A read-only array cannot change behind this copy: held, it is recognised by identity.
        known = _Known(ids.copy(), given=None if ids.flags.writeable else ids)
        self._known = [known, *self._known[: _LISTS_KEPT - 1]]
        return known

    def _pick(self, known: _Known, tokens: IdArray) -> Indices:
        if known.where is not None and len(tokens) * _MASK_FROM_ONE_IN <= len(known.ids):
            return _ascending_once(known.where.take(tokens))
        self._mark[tokens] = True
        found = np.flatnonzero(self._mark.take(known.ids))
        self._mark[tokens] = False
        return found


def _where_each(ids: IdArray, size: int) -> IdArray | None:
    """Over the vocabulary, each token's index in `ids` (-1 where absent); None where `ids`
    holds a token twice (one index per token could not say so)."""
    where = np.full(size, -1, dtype=np.int32)
    where[ids.astype(np.intp)] = np.arange(len(ids), dtype=np.int32)  # numpy indexes by intp: converting first is faster
    if np.count_nonzero(where >= 0) != len(ids):  # fewer distinct tokens than candidates
        return None
    return where


def _ascending_once(found: IdArray) -> Indices:
    """The indices in `found` (-1: none), ascending, each once. In Python: for a few dozen,
    fewer calls than numpy's (each call costs microseconds between two model evaluations, with
    the caches cold), and numpy's `unique` is slower still."""
    return np.array(sorted({index for index in found.tolist() if index >= 0}), dtype=np.intp)
