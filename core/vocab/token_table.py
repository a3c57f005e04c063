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

from ..automaton.utf8 import utf8_sequences

IdArray = npt.NDArray[np.int32]

# The byte ranges of each encoding of a character beyond ASCII.
_NON_ASCII = utf8_sequences(0x80, 0x10FFFF)
# The ASCII characters a JSON string holds without escapes (all but controls, quote, backslash).
TEXT_ASCII = np.array([b for b in range(0x20, 0x80) if b not in (0x22, 0x5C)], dtype=np.uint8)


@dataclass(frozen=True)
class TokenLayout:
    """Per-token facts that take a pass over every piece in Python, kept with a cached vocabulary
    so that a run does not redo them: each token's length in characters when it is text a JSON
    string holds unescaped (else 0), whether it is ASCII, and the token ids in byte order."""

    characters: IdArray
    ascii: npt.NDArray[np.bool_]
    sorted_ids: IdArray

    @staticmethod
    def of(pieces: tuple[bytes, ...]) -> TokenLayout:
        characters = np.fromiter(map(_text_length, pieces), dtype=np.int32, count=len(pieces))
        ascii_only = np.fromiter(map(bytes.isascii, pieces), dtype=bool, count=len(pieces))
        walkable = [i for i, piece in enumerate(pieces) if piece]
        ordered = sorted(walkable, key=pieces.__getitem__)  # stable: ties by id
        return TokenLayout(characters, ascii_only, np.asarray(ordered, dtype=np.int32))

    def fits(self, size: int) -> bool:
        """Whether these arrays can describe a vocabulary of `size` tokens."""
        ids = self.sorted_ids
        return len(self.characters) == size and len(self.ascii) == size and bool(((ids >= 0) & (ids < size)).all())


@dataclass(frozen=True)
class Vocabulary:
    pieces: tuple[bytes, ...]
    eog_ids: tuple[int, ...]
    fingerprint: str = field(default="")
    layout: TokenLayout | None = field(default=None, compare=False, repr=False)

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


@dataclass(frozen=True)
class Closing:
    """Tokens of text then a quote: their ids, the characters of text before the quote and
    the byte where it is."""

    ids: IdArray
    characters: IdArray
    quote_at: IdArray


class TextSlice:
    """Token ids ordered by their length in characters."""

    def __init__(self, ids: IdArray, lengths: IdArray) -> None:
        """`ids` already ordered by their `lengths`."""
        self.ids = ids
        self.lengths = lengths
        self.longest = int(lengths[-1]) if len(lengths) else 0
        # Where the tokens of up to 0, 1, ..., `longest` characters end: `split` is asked for every
        # new state a walk of text meets, and a search each time costs numpy's call.
        self._cuts: list[int] = np.searchsorted(lengths, np.arange(self.longest + 1), side="right").tolist()

    @staticmethod
    def by_length(ids: IdArray, characters: IdArray) -> TextSlice:
        order = np.argsort(characters, kind="stable")
        return TextSlice(ids[order], characters[order])

    def where(self, keep: npt.NDArray[np.bool_]) -> TextSlice:
        """The tokens where `keep`, still ordered by length."""
        return TextSlice(self.ids[keep], self.lengths[keep])

    def split(self, characters: int) -> tuple[IdArray, IdArray, IdArray]:
        """(ids of at most `characters` characters, their lengths, ids of longer ones)."""
        cut = len(self.ids) if characters >= self.longest else 0 if characters < 0 else self._cuts[characters]
        return self.ids[:cut], self.lengths[:cut], self.ids[cut:]


class TokenTable:
    """Array views of a vocabulary for the token index. Built once per vocabulary."""

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        lengths = np.fromiter(map(len, vocab.pieces), dtype=np.int32, count=vocab.size)
        self.lengths = lengths
        width = max(int(lengths.max()) if vocab.size else 1, 1)
        # Column-major: a walk gathers one byte position of many tokens at a time, which is
        # several times cheaper from a contiguous column.
        self.bytes = np.asfortranarray(_padded_matrix(b"".join(vocab.pieces), lengths, width))
        walkable = np.flatnonzero(lengths > 0).astype(np.int32)
        self.walkable = walkable
        first = self.bytes[:, 0][walkable]
        self.by_first_byte = _groups(*_ordered_by(walkable, first))
        self._lay_out_second_bytes()
        self._lay_out_byte_sets()
        layout = vocab.layout or TokenLayout.of(vocab.pieces)
        self._lay_out_text_slices(layout, walkable, first)
        self._sorted_ids = layout.sorted_ids
        self._sorted_pieces = [vocab.pieces[i] for i in layout.sorted_ids.tolist()]
        self._text_masks: npt.NDArray[np.int32] | None = None

    def _lay_out_byte_sets(self) -> None:
        """Each token's set of ASCII bytes as a 128-bit mask (two words); other bytes are left
        out (the index judges a text token's other characters apart)."""
        low = np.zeros(self.vocab.size, dtype=np.uint64)
        high = np.zeros(self.vocab.size, dtype=np.uint64)
        for position in range(self.bytes.shape[1]):
            column = self.bytes[:, position].astype(np.uint64)
            present = self.lengths > position
            low |= np.where(present & (column < 64), np.uint64(1) << (column & np.uint64(63)), np.uint64(0))
            high |= np.where(present & (column >= 64) & (column < 128), np.uint64(1) << (column & np.uint64(63)), np.uint64(0))
        self.ascii_low, self.ascii_high = low, high

    def ascii_within(self, allowed: npt.NDArray[np.bool_], ids: IdArray) -> npt.NDArray[np.bool_]:
        """Which of the tokens `ids` hold no ASCII byte outside `allowed` (a 128-entry mask),
        whatever their other bytes."""
        bits = np.flatnonzero(allowed).astype(np.uint64)
        low_set = np.bitwise_or.reduce(np.uint64(1) << bits[bits < 64], initial=np.uint64(0))
        high_set = np.bitwise_or.reduce(np.uint64(1) << (bits[bits >= 64] - np.uint64(64)), initial=np.uint64(0))
        result: npt.NDArray[np.bool_] = ((self.ascii_low[ids] & ~low_set) | (self.ascii_high[ids] & ~high_set)) == 0
        return result

    def _lay_out_second_bytes(self) -> None:
        """Within each first-byte group, one-byte tokens apart and the rest ordered by second
        byte, so the tokens behind a two-byte prefix are one slice."""
        self.one_byte: list[IdArray] = []
        self._by_second: list[IdArray] = []
        self._second_bounds: list[npt.NDArray[np.intp]] = []
        for group in self.by_first_byte:
            longer = group[self.lengths[group] > 1]
            ordered, bounds = _ordered_by(longer, self.bytes[:, 1][longer])
            self.one_byte.append(group[self.lengths[group] == 1])
            self._by_second.append(ordered)
            self._second_bounds.append(bounds)
        self.single_byte_bytes = np.array([b for b in range(256) if len(self.one_byte[b])], dtype=np.intp)  # a token each

    def starting_with(self, first: int, seconds: npt.NDArray[np.intp]) -> IdArray:
        """Tokens of two bytes or more that start with byte `first`, then one of `seconds`."""
        bounds, ordered = self._second_bounds[first], self._by_second[first]
        parts = [ordered[bounds[c] : bounds[c + 1]] for c in seconds.tolist()]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.int32)

    def _lay_out_text_slices(self, layout: TokenLayout, walkable: IdArray, first: npt.NDArray[np.uint8]) -> None:
        """Split off the text slices: tokens of whole UTF-8 characters, none of them a quote,
        backslash or control character (text inside a JSON string), each ordered by length in
        characters: ASCII ones, those with characters of two or three bytes (the Basic
        Multilingual Plane), and those with a character of four bytes (patterns may treat
        those apart). A state from which every such character
        leads to one live state allows a whole length group without a walk."""
        characters = layout.characters[walkable]
        ascii_only = layout.ascii[walkable]
        astral: npt.NDArray[np.bool_] = np.asarray((self.bytes >= 0xF0).any(axis=1))[walkable]
        text = characters > 0
        self.ascii_text = TextSlice.by_length(walkable[text & ascii_only], characters[text & ascii_only])
        self.wide_text = TextSlice.by_length(walkable[text & ~ascii_only & ~astral], characters[text & ~ascii_only & ~astral])
        self.astral_text = TextSlice.by_length(walkable[text & astral], characters[text & astral])
        self.rest_by_first_byte = _groups(*_ordered_by(walkable[characters == 0], first[characters == 0]))
        self._lay_out_string_tails(walkable[characters == 0])

    def _lay_out_string_tails(self, rest: IdArray) -> None:
        """Sort the tokens that are not text by what a string body of free text makes of them:
        text then a partial character (a prefix of text one character longer: `partial`, with
        that length), text then a quote or backslash (`quoted`: where the string may close or
        an escape begin; those with a quote first are also `closing`, with the characters and
        bytes before it, and those with a backslash first are `escaping`), and the others (text
        then a control character or a byte no UTF-8 text holds there), which no string body
        takes."""
        partial: list[tuple[int, int]] = []
        quoted: list[int] = []
        closing: list[tuple[int, int, int]] = []
        for token in rest.tolist():
            piece = self.vocab.pieces[token]
            end, characters = _text_prefix(piece)
            if end < len(piece) and piece[end] in b'"\\':
                quoted.append(token)
                if piece[end] == 0x22:
                    closing.append((token, characters, end))
            elif end < len(piece) and _is_partial_character(piece[end:]):
                partial.append((token, characters + 1))
        ids = np.asarray(quoted, dtype=np.int32)
        self.quoted = self._with_first_bytes(ids)
        self.partial = np.asarray([token for token, _ in partial], dtype=np.int32)
        self.partial_lengths = np.asarray([length for _, length in partial], dtype=np.int32)
        columns = np.asarray(closing, dtype=np.int32).reshape(-1, 3)
        self.closing = Closing(columns[:, 0].copy(), columns[:, 1].copy(), columns[:, 2].copy())
        escaping = np.setdiff1d(ids, self.closing.ids).astype(np.int32)
        self.escaping = self._with_first_bytes(escaping)
        # Those of text and escapes that close no string (a quote they hold is escaped): where
        # every escape goes on, they are taken alike from every position (see mask_walks.quoted).
        inside = [token for token in escaping.tolist() if not closes_a_string(self.vocab.pieces[token])]
        self.escaping_inside = np.asarray(inside, dtype=np.int32)
        self.quoted_closing = self._with_first_bytes(np.setdiff1d(ids, self.escaping_inside).astype(np.int32))
        self.escaping_closing = self._with_first_bytes(np.setdiff1d(escaping, self.escaping_inside).astype(np.int32))

    def _with_first_bytes(self, ids: IdArray) -> tuple[IdArray, npt.NDArray[np.uint8]]:
        """`ids` in the order of their first bytes, and those bytes: the ones a state allows are
        then taken with one gather of its row, not a run per byte joined."""
        ordered, _ = _ordered_by(ids, self.bytes[:, 0][ids])
        return ordered, self.bytes[:, 0][ordered]

    def text_mask(self, characters: int) -> npt.NDArray[np.int32]:
        """The tokens that begin a text of at most `characters` characters (-1: of any length):
        the text tokens (of all three slices) of at most that many, and the `partial` ones one
        character shorter, as a bitmask: bit t % 32 of 32-bit word t // 32 for token t.
        Read-only; the masks of every length are laid out together on first use (a row per
        length, 82 rows of 6 KB for 49k tokens, of 32 KB for 262k)."""
        if self._text_masks is None:
            self._text_masks = self._lay_out_text_masks()
        longest = len(self._text_masks) - 1
        return self._text_masks[longest if characters < 0 else min(characters, longest)]

    def _lay_out_text_masks(self) -> npt.NDArray[np.int32]:
        slices = (self.ascii_text, self.wide_text, self.astral_text)
        ids = np.concatenate([every.ids for every in slices] + [self.partial]).astype(np.int64)
        lengths = np.concatenate([every.lengths for every in slices] + [self.partial_lengths]).astype(np.int64)
        longest = int(lengths.max(initial=0))
        words = np.zeros((longest + 1, -(-self.vocab.size // 32)), dtype=np.uint32)
        np.bitwise_or.at(words, (lengths, ids >> 5), np.left_shift(1, ids & 31).astype(np.uint32))
        masks = np.bitwise_or.accumulate(words, axis=0).view(np.int32)
        masks.flags.writeable = False
        return masks

    def narrowed(self, prefix: bytes, span: tuple[int, int]) -> tuple[list[int], tuple[int, int]]:
        """Ids of the tokens whose bytes are `prefix`, and where the longer tokens that start with
        it lie in byte order (see `in_order`); `span`: where those starting with `prefix` less its
        last byte lie (`everything()` for a prefix of one byte). A trie's step down."""
        pieces = self._sorted_pieces
        low = bisect.bisect_left(pieces, prefix, *span)
        high = bisect.bisect_left(pieces, _prefix_upper_bound(prefix), low, span[1])
        found: list[int] = []
        while low < high and pieces[low] == prefix:
            found.append(int(self._sorted_ids[low]))
            low += 1
        return found, (low, high)

    def everything(self) -> tuple[int, int]:
        """Where every token lies in byte order: the trie's root for `narrowed`."""
        return 0, len(self._sorted_pieces)

    def in_order(self, data: bytes, span: tuple[int, int], following: list[int] | None = None) -> IdArray:
        """The tokens in `span` (a range in byte order of tokens that start with `data` and are
        longer, see `narrowed`) whose next byte is one of `following` (ascending; None:
        any)."""
        low, high = span
        if following is None:
            return self._sorted_ids[low:high]
        pieces = self._sorted_pieces
        parts: list[IdArray] = []
        for byte in following:
            start = bisect.bisect_left(pieces, data + bytes((byte,)), low, high)
            low = high if byte == 255 else bisect.bisect_left(pieces, data + bytes((byte + 1,)), start, high)
            if low > start:
                parts.append(self._sorted_ids[start:low])
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.int32)

    def with_prefix(self, prefix: bytes) -> IdArray:
        """Ids of every token whose bytes start with `prefix`, ascending."""
        low = bisect.bisect_left(self._sorted_pieces, prefix)
        high = bisect.bisect_left(self._sorted_pieces, _prefix_upper_bound(prefix), lo=low)
        return np.sort(self._sorted_ids[low:high])


def _ordered_by(ids: IdArray, keys: npt.NDArray[np.uint8]) -> tuple[IdArray, npt.NDArray[np.intp]]:
    """`ids` ordered by their byte `keys` (ties in order), and where each key value's run starts
    (257 bounds: value b spans bounds[b]:bounds[b + 1])."""
    order = np.argsort(keys, kind="stable")
    return ids[order], np.searchsorted(keys[order], np.arange(257))


def _groups(ordered: IdArray, bounds: npt.NDArray[np.intp]) -> list[IdArray]:
    """The 256 runs of `_ordered_by`, one per byte value."""
    return [ordered[bounds[b] : bounds[b + 1]] for b in range(256)]


def _text_length(piece: bytes) -> int:
    """Characters in `piece` when it is whole UTF-8 text a JSON string holds unescaped, else 0."""
    try:
        text = piece.decode("utf-8")
    except UnicodeDecodeError:
        return 0
    if any(c < " " or c in '"\\' for c in text):
        return 0
    return len(text)


def closes_a_string(piece: bytes) -> bool:
    """Whether `piece`, read inside a string body, holds a quote no backslash escapes (it would
    close the string)."""
    at = 0
    while at < len(piece):
        if piece[at] == 0x5C:  # a backslash and the byte it escapes
            at += 2
        elif piece[at] == 0x22:
            return True
        else:
            at += 1
    return False


def _text_prefix(piece: bytes) -> tuple[int, int]:
    """How many bytes of `piece`, and characters, its longest prefix of whole text characters
    (those a JSON string holds unescaped) takes."""
    end = characters = 0
    while end < len(piece):
        lead = piece[end]
        size = 1 if lead < 0x80 else 2 if lead >> 5 == 0b110 else 3 if lead >> 4 == 0b1110 else 4
        if _text_length(piece[end : end + size]) != 1:
            break
        end += size
        characters += 1
    return end, characters


def _is_partial_character(tail: bytes) -> bool:
    """Whether `tail` is the beginning of the UTF-8 encoding of a character, not all of it."""
    return any(
        len(sequence) > len(tail) and all(low <= byte <= high for byte, (low, high) in zip(tail, sequence, strict=False))
        for sequence in _NON_ASCII
    )


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
