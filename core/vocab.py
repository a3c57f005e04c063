"""A model's vocabulary as bytes, and the array layout the token index walks.

`Vocabulary` is plain data read from a GGUF file by the model adapter: each token's bytes
(empty for control and unused tokens, which never enter a mask) and the end-of-generation
ids. `TokenTable` lays the pieces out for vectorised walks: a padded byte matrix, token ids
grouped by first byte, and a lexicographic order for prefix look-ups.
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

IdArray = npt.NDArray[np.int32]

# Printable ASCII except quote and backslash: what JSON strings hold without escapes.
PLAIN_BYTES = np.array([b for b in range(0x20, 0x7F) if b not in (0x22, 0x5C)], dtype=np.uint8)


@dataclass(frozen=True)
class Vocabulary:
    pieces: tuple[bytes, ...]
    eog_ids: tuple[int, ...]
    fingerprint: str = field(default="")

    @staticmethod
    def from_pieces(pieces: list[bytes] | tuple[bytes, ...], eog_ids: tuple[int, ...]) -> Vocabulary:
        digest = hashlib.sha256()
        for piece in pieces:
            digest.update(len(piece).to_bytes(4, "little"))
            digest.update(piece)
        digest.update(repr(eog_ids).encode())
        return Vocabulary(tuple(pieces), eog_ids, digest.hexdigest()[:16])

    @property
    def size(self) -> int:
        return len(self.pieces)


class TokenTable:
    """Array views of a vocabulary for the token index. Built once per vocabulary."""

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        lengths = np.fromiter(map(len, vocab.pieces), dtype=np.int32, count=vocab.size)
        self.lengths = lengths
        width = max(int(lengths.max()) if vocab.size else 1, 1)
        self.bytes = _padded_matrix(b"".join(vocab.pieces), lengths, width)
        walkable = np.flatnonzero(lengths > 0).astype(np.int32)
        self.walkable = walkable
        first = self.bytes[walkable, 0]
        order = np.argsort(first, kind="stable")
        sorted_first = first[order]
        bounds = np.searchsorted(sorted_first, np.arange(257))
        self.by_first_byte: list[IdArray] = [walkable[order[bounds[b] : bounds[b + 1]]] for b in range(256)]
        self.first_byte_counts = np.diff(bounds).astype(np.int32)
        # Walkable tokens longest first, bytes stored column by column: a walk over the whole
        # vocabulary then touches, at byte position p, just the first longer_than[p] tokens.
        by_length = walkable[np.argsort(-lengths[walkable], kind="stable")]
        self.by_length = by_length
        self.columns = np.asfortranarray(self.bytes[by_length])
        at_least = np.cumsum(np.bincount(lengths[walkable], minlength=width + 1)[::-1])[::-1]
        self.longer_than = at_least[1 : width + 1].astype(np.int64)  # tokens longer than p bytes
        self._lay_out_plain_slice(walkable, first, width)
        ordered = sorted(walkable.tolist(), key=vocab.pieces.__getitem__)  # stable: ties by id
        self._sorted_ids = np.asarray(ordered, dtype=np.int32)
        self._sorted_pieces = [vocab.pieces[i] for i in ordered]

    def _lay_out_plain_slice(self, walkable: IdArray, first: npt.NDArray[np.uint8], width: int) -> None:
        """Split the vocabulary into the plain slice (tokens of printable ASCII other than quote
        and backslash: text inside a JSON string) and the rest. A state that lets any run of
        plain characters through allows a whole length group of the slice without a walk."""
        padded = self.bytes[walkable]
        positions = np.arange(width)[None, :] < self.lengths[walkable][:, None]
        plain_byte = np.zeros(256, dtype=bool)
        plain_byte[PLAIN_BYTES] = True
        is_plain = (plain_byte[padded] | ~positions).all(axis=1)
        plain = walkable[is_plain]
        order = np.argsort(self.lengths[plain], kind="stable")
        self.plain_ids: IdArray = plain[order]
        self.plain_lengths = self.lengths[self.plain_ids]
        rest = walkable[~is_plain]
        rest_first = first[~is_plain]
        rest_order = np.argsort(rest_first, kind="stable")
        bounds = np.searchsorted(rest_first[rest_order], np.arange(257))
        self.rest_by_first_byte: list[IdArray] = [rest[rest_order[bounds[b] : bounds[b + 1]]] for b in range(256)]

    def plain_up_to(self, length: int) -> IdArray:
        """Plain-slice token ids of at most `length` bytes."""
        return self.plain_ids[: int(np.searchsorted(self.plain_lengths, length, side="right"))]

    def plain_longer_than(self, length: int) -> IdArray:
        return self.plain_ids[int(np.searchsorted(self.plain_lengths, length, side="right")) :]

    def with_prefix(self, prefix: bytes) -> IdArray:
        """Ids of every token whose bytes start with `prefix`, ascending."""
        low = bisect.bisect_left(self._sorted_pieces, prefix)
        high = bisect.bisect_left(self._sorted_pieces, _prefix_upper_bound(prefix), lo=low)
        return np.sort(self._sorted_ids[low:high])


def _padded_matrix(blob: bytes, lengths: npt.NDArray[np.int32], width: int) -> npt.NDArray[np.uint8]:
    """One row per token: its bytes, then zeros up to `width`."""
    matrix = np.zeros((len(lengths), width), dtype=np.uint8)
    rows = np.repeat(np.arange(len(lengths)), lengths)
    starts = np.cumsum(lengths) - lengths
    columns = np.arange(len(blob)) - np.repeat(starts, lengths)
    matrix[rows, columns] = np.frombuffer(blob, dtype=np.uint8)
    return matrix


def _prefix_upper_bound(prefix: bytes) -> bytes:
    """The smallest byte string greater than every string that starts with `prefix`."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return b"\xff" * (len(prefix) + 1024)
    return stripped[:-1] + bytes([stripped[-1] + 1])
