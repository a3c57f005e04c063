"""Draft tokens for speculative decoding, looked up in text the model has already seen.

Extraction copies: values come from the document, and a small model repeats its own
structure (the same keys, often the same values, item after item). So the tokens that
followed the latest earlier occurrence of the last few tokens are a cheap, often right,
guess of what comes next ("prompt lookup decoding"). The decoder evaluates the guess in one
batch with the next token and keeps the prefix the model itself would have chosen, so the
output never depends on the guess, only the number of model calls does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..vocab.token_table import IdArray

# The longest key is tried first. Keys of one or two tokens (a quote, `": "`) match
# everywhere: on the bundled model and the e2e documents, two-token keys wasted four times as
# many evaluated tokens on rejected guesses for the same number of accepted ones.
_LONGEST_KEY = 4
_SHORTEST_KEY = 3


class TokenHistory:
    """The tokens the model has seen (the document, then the output so far), searchable."""

    def __init__(self, seen: Sequence[int], capacity: int) -> None:
        self._tokens: IdArray = np.zeros(max(capacity, len(seen)) + 1, dtype=np.int32)
        self._tokens[: len(seen)] = seen
        self._length = len(seen)

    def __len__(self) -> int:
        return self._length

    def extend(self, tokens: Sequence[int]) -> None:
        end = self._length + len(tokens)
        if end > len(self._tokens):
            grown = np.zeros(2 * end, dtype=np.int32)
            grown[: self._length] = self._tokens[: self._length]
            self._tokens = grown
        self._tokens[self._length : end] = tokens
        self._length = end

    def truncate(self, length: int) -> None:
        self._length = min(self._length, length)

    def snapshot(self) -> int:
        return self._length

    def restore(self, snapshot: int) -> None:
        """Back to the history at `snapshot` (the tokens before it are never overwritten:
        tokens are only added at the end)."""
        self.truncate(snapshot)

    def continuation(self, most: int, then: Sequence[int] = ()) -> list[int]:
        """Up to `most` tokens that followed the latest earlier occurrence of the longest
        suffix (of 4, else 3 tokens) of the history followed by `then`; empty when none."""
        length = self._length
        self.extend(then)
        try:
            return self._continuation(most)
        finally:
            self._length = length

    def _continuation(self, most: int) -> list[int]:
        seen = self._tokens[: self._length]
        for size in range(_LONGEST_KEY, _SHORTEST_KEY - 1, -1):
            if self._length <= size:
                continue
            start = self._latest_match(seen, size)
            if start >= 0:
                follow = start + size
                return [int(t) for t in seen[follow : follow + most]]
        return []

    @staticmethod
    def _latest_match(seen: IdArray, size: int) -> int:
        """The start of the latest occurrence of the last `size` tokens before the suffix itself."""
        key = seen[-size:]
        body = seen[:-1]  # an occurrence must be followed by at least one token
        hits = np.flatnonzero(body[: len(body) - size + 1] == key[0]) if len(body) >= size else np.empty(0, np.int64)
        for offset in range(1, size):
            if len(hits) == 0:
                return -1
            hits = hits[body[hits + offset] == key[offset]]
        return int(hits[-1]) if len(hits) else -1
