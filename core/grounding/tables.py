"""The tables grounding reads: a document as the bytes of a JSON string body, what each token
of the vocabulary holds of a body (indexed by prefix, once per vocabulary), and which tokens
each position of a document allows (per document, built lazily).

What each token holds of a string body is read escape-aware (core.json_reader, `body_part`):
the bytes before its first unescaped quote.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..json_reader import body_part
from ..vocab.token_table import IdArray, Vocabulary

_WHITESPACE_RUN = re.compile(r"\s+")
# Characters no grounded value may hold, by Unicode category: controls, Cc (whitespace aside:
# it is collapsed before); format characters, Cf (zero-width spaces and joiners, bidi
# controls, the byte-order mark, the soft hyphen); lone surrogates, Cs. None is text a reader
# sees as such, and a bidi control in a value reorders what is shown after it. Deleting them
# instead would join the words on either side (`Maria\x01Gonzales` read as `MariaGonzales`).
_UNSEEN = frozenset({"Cc", "Cf", "Cs"})
# Each run of them is laid out as this: a JSON string body cannot hold it raw, so no value is
# written across it, and word edges take it as a space.
BARRIER = "\x00"


def collapse_whitespace(text: str) -> str:
    """`text` with every run of whitespace written as one space (how grounded strings may
    write a value broken across lines)."""
    return _WHITESPACE_RUN.sub(" ", text)


# Where a line break is: a run of whitespace holding one joins the lines of a value.
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
# A gap between columns: within a line, a tab or a run of this many whitespace characters or
# more (a manual page's header and footer, `GNU grep 3.8      2019-12-29      GREP(1)`, a table
# laid out with spaces). Two are a sentence's end (`defined.  Consider`).
_COLUMN_GAP = 3


def _laid_out_run(run: str) -> str:
    """A run of whitespace as grounding lays it out: a gap between columns a BARRIER (no
    value spans two cells), any other run one space."""
    if ("\t" in run or len(run) >= _COLUMN_GAP) and _LINE_BREAKS.isdisjoint(run):
        return BARRIER
    return " "


def lay_out_whitespace(text: str) -> str:
    """`text` with every run of whitespace one space, or one BARRIER where it is a gap
    between columns (see _laid_out_run)."""
    return _WHITESPACE_RUN.sub(lambda match: _laid_out_run(match.group()), text)


@dataclass(frozen=True)
class GroundingText:
    """A document as the bytes of a JSON string body: whitespace runs as one space, each run of
    unseen characters (controls, format characters) and each gap between columns (three spaces
    or more, or a tab, within a line) as one BARRIER (neither at either end),
    quote and backslash escaped. `boundaries[i]` says whether a
    character starts at byte i (continuation bytes and the second byte of escapes do not);
    `starts[i]` and `ends[i]` whether a grounded value may start or end there (see
    `word_edges`); `piece_starts` and `piece_ends` the same where `.` and `-` join no words, for
    what a pattern names (`2019` of `2019-2024`: the pattern says what the value is)."""

    escaped: bytes
    boundaries: npt.NDArray[np.bool_]
    starts: npt.NDArray[np.bool_]
    ends: npt.NDArray[np.bool_]
    piece_starts: npt.NDArray[np.bool_]
    piece_ends: npt.NDArray[np.bool_]

    @staticmethod
    def of(document: str) -> GroundingText:
        # Without the space at either end: no value starts or ends with one, and a value
        # written into a trailing space could never end.
        text = separate_unseen(lay_out_whitespace(document)).strip(" " + BARRIER)
        escaped = text.replace("\\", "\\\\").replace('"', '\\"').encode("utf-8")
        data = np.frombuffer(escaped, dtype=np.uint8)
        boundaries = np.ones(len(escaped) + 1, dtype=bool)
        boundaries[:-1] = (data & 0xC0) != 0x80
        for match in re.finditer(rb"\\.", escaped):  # only \\ and \" occur
            boundaries[match.start() + 1] = False
        offsets = np.flatnonzero(boundaries)
        starts, ends = word_edges(text, offsets)
        piece_starts, piece_ends = word_edges(text, offsets, joiners="")
        return GroundingText(escaped, boundaries, starts, ends, piece_starts, piece_ends)

    def occurrences(self, content: bytes) -> list[int]:
        """Byte offsets just after each occurrence of `content` that starts where a value may."""
        found: list[int] = []
        start = self.escaped.find(content)
        while start >= 0:
            if self.starts[start]:
                found.append(start + len(content))
            start = self.escaped.find(content, start + 1)
        return found

    def occurs(self, content: bytes, whole: bool = False) -> bool:
        """Whether `content` occurs where a value may start (`whole`: and may end after it)."""
        start = self.escaped.find(content)
        while start >= 0:
            if self.starts[start] and (not whole or self.ends[start + len(content)]):
                return True
            start = self.escaped.find(content, start + 1)
        return False


def byte_origins(document: str) -> npt.NDArray[np.intp]:
    """Where each byte of `GroundingText.of(document).escaped` comes from: the offset in
    `document` of the character it lays out (for a whitespace run written as one space, or a
    run of unseen characters written as one BARRIER, the run's first character; both bytes of
    an escape, the escaped character). A span of those bytes that starts and ends where a
    value may is then the document span from its first byte's origin to its last byte's
    origin plus one. Costs a few passes over the document; built only for evidence."""
    text, origins = document, list(range(len(document)))
    text, origins = _substituted(text, origins, _WHITESPACE_RUN, lambda match: _laid_out_run(match.group()))
    unseen = unseen_in(text)
    if unseen:
        text, origins = _substituted(text, origins, _unseen_runs(unseen), lambda _: BARRIER)
    head = len(text) - len(text.lstrip(" " + BARRIER))
    kept = len(text.rstrip(" " + BARRIER))
    text, origins = text[head:kept], origins[head:kept]
    text, origins = _substituted(text, origins, _ESCAPED, lambda match: "\\" + match.group())
    lengths = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    widths = 1 + (lengths >= 0x80) + (lengths >= 0x800) + (lengths >= 0x10000)
    found: npt.NDArray[np.intp] = np.repeat(np.asarray(origins, dtype=np.intp), widths)
    return found


_ESCAPED = re.compile(r'[\\"]')


def _substituted(
    text: str, origins: list[int], pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str]
) -> tuple[str, list[int]]:
    """`text` with each match of `pattern` replaced, and each character's origin (a
    replacement's characters all take the origin of the match's first character)."""
    parts: list[str] = []
    moved: list[int] = []
    last = 0
    for match in pattern.finditer(text):
        replacement = replace(match)
        parts += [text[last : match.start()], replacement]
        moved += origins[last : match.start()]
        moved += [origins[match.start()]] * len(replacement)
        last = match.end()
    parts.append(text[last:])
    moved += origins[last:]
    return "".join(parts), moved


def unseen_in(text: str) -> str:
    """The characters of `text` no grounded value may hold (controls, format characters, lone
    surrogates), each once, in order."""
    return "".join(sorted(char for char in set(text) if unicodedata.category(char) in _UNSEEN))


def _unseen_runs(unseen: str) -> re.Pattern[str]:
    # Spaces beside a run are taken in: a value written up to a space there could neither go
    # on (nothing is written across a BARRIER) nor end (no value ends with a space).
    return re.compile(f" ?[{re.escape(unseen)}][ {re.escape(unseen)}]*")


def separate_unseen(text: str) -> str:
    """`text` (whitespace runs collapsed) with each run of characters no grounded value may hold,
    with the spaces between and beside them, written as one BARRIER."""
    unseen = unseen_in(text)
    return _unseen_runs(unseen).sub(BARRIER, text) if unseen else text


# Scripts written without spaces between words (or, for Hangul, with particles joined to
# words): each character is a word of its own there, so a value may start or end at any of
# them (`北京` inside `我住在北京市`).
_UNSPACED = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK ideographs (extension A)
    (0x4E00, 0x9FFF),  # CJK ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x3FFFF),  # CJK ideographs (extensions B on)
)


def _unspaced(code: int) -> bool:
    return any(low <= code <= high for low, high in _UNSPACED)


def _code_points(text: str) -> npt.NDArray[np.uint32]:
    if not text:
        return np.zeros(0, np.uint32)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)  # a lone surrogate is a point too


def word_cuts(text: str, joiners: str = ".-") -> npt.NDArray[np.bool_]:
    """Where a span of `text` would cut a word in two: `cut[k]` for the edge before character
    k (k = 0..len(text)), true where characters k-1 and k are of one word. A word is letters,
    digits and `_`, with one of `joiners` between two of them (by default `.` or `-`: `3.10`,
    `rfc3339-validator`); in scripts written without spaces, each character is a word. Grounded
    values and evidence spans both start and end only where this is false."""
    size = len(text)
    points = _code_points(text)
    word = np.zeros(size + 2, dtype=bool)  # padded: no word before the first character or after the last
    ascii_word = np.zeros(128, dtype=bool)
    ascii_word[[ord(c) for c in "0123456789_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"]] = True
    wide = points >= 128
    word[1:-1][~wide] = ascii_word[points[~wide]]
    if wide.any():
        wide_word = {code for code in set(points[wide].tolist()) if chr(code).isalnum() and not _unspaced(code)}
        word[1:-1][wide] = np.isin(points[wide], list(wide_word))
    joiner = np.isin(points, [ord(character) for character in joiners])
    word[1:-1] |= joiner & word[:-2] & word[2:]
    cut: npt.NDArray[np.bool_] = word[:-1] & word[1:]
    return cut


def word_edges(
    text: str, offsets: npt.NDArray[np.intp], joiners: str = ".-"
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Where in `text` (laid out as GroundingText bytes; `offsets[k]`: the byte offset of
    character k, and of the end last) a grounded value may start, and where it may end, as
    two arrays over those bytes. A value never cuts a word in two (`word_cuts`), and never
    starts or ends with a space or a BARRIER: such a span is never what a field holds, and the
    model, stopping a token early or late, would otherwise write one (`"Captur"`, `"1.4"` of
    `0.1.4`, `"2011 "`). `joiners`: as for `word_cuts`."""
    cut = word_cuts(text, joiners)
    space = np.zeros(len(text) + 2, dtype=bool)  # padded as `cut` is
    space[1:-1] = np.isin(_code_points(text), [ord(" "), ord(BARRIER)])
    starts = np.zeros(int(offsets[-1]) + 1, dtype=bool)
    ends = np.zeros(int(offsets[-1]) + 1, dtype=bool)
    starts[offsets] = ~cut & ~space[1:]
    ends[offsets] = ~cut & ~space[:-1]
    starts[offsets[-1]] = False  # nothing starts at the end
    ends[0] = False  # a value that ends at the start is empty, which needs no edge
    return starts, ends


@dataclass
class VocabularyBodies:
    """Every token's body part (read from the start of a body), indexed by its prefixes:
    `prefixes` maps each prefix of an open token's bytes (no unescaped quote) to the ids of
    the tokens it is whole (none for a mere prefix); `closing` maps the body part of each
    token with an unescaped quote to those tokens, and `closing_prefixes` holds every prefix
    of those body parts. (Two tokens may have the same bytes.)"""

    prefixes: dict[bytes, tuple[int, ...]]
    closing: dict[bytes, list[int]]
    closing_prefixes: frozenset[bytes]
    longest: int
    longest_closing: int  # the longest body part of a token with a quote
    # Each token's body part as a fixed-width bytes key, and the key after every string that
    # starts with it (0xFF never occurs in UTF-8), for finding all tokens in a document at once.
    key_ids: IdArray
    keys_from: npt.NDArray[np.bytes_]
    keys_to: npt.NDArray[np.bytes_]
    quoted: npt.NDArray[np.bool_]  # over the vocabulary: tokens holding a quote byte

    @staticmethod
    def of(vocab: Vocabulary) -> VocabularyBodies:
        prefixes: dict[bytes, tuple[int, ...]] = {}
        closing: dict[bytes, list[int]] = {}
        closing_prefixes: set[bytes] = set()
        for token, piece in enumerate(vocab.pieces):
            if not piece or token in vocab.eog_ids:
                continue
            part, closed, _ = body_part(piece)
            if closed:
                closing.setdefault(part, []).append(token)
                closing_prefixes.update(part[:n] for n in range(len(part) + 1))
                continue
            prefixes[piece] = (*prefixes.get(piece, ()), token)
            for n in range(1, len(piece)):
                prefixes.setdefault(piece[:n], ())
        longest = max((len(p) for p in prefixes), default=0)
        keyed = [(token, piece) for piece, tokens in prefixes.items() for token in tokens]
        keyed += [(token, part) for part, tokens in closing.items() if part for token in tokens]
        width = 1 + max([longest, *(len(part) for part in closing)], default=0)  # room for one 0xFF after any key
        key_ids = np.array([token for token, _ in keyed], dtype=np.int32)
        keys_from = np.array([key for _, key in keyed], dtype=f"S{width}")
        keys_to = np.array([key + b"\xff" * (width - len(key)) for _, key in keyed], dtype=f"S{width}")
        quoted = np.array([b'"' in piece for piece in vocab.pieces], dtype=bool)
        longest_closing = max((len(part) for part in closing), default=0)
        return VocabularyBodies(
            prefixes, closing, frozenset(closing_prefixes), longest, longest_closing, key_ids, keys_from, keys_to, quoted
        )


_BODIES: dict[str, VocabularyBodies] = {}


def vocabulary_bodies(vocab: Vocabulary) -> VocabularyBodies:
    """The body tables of `vocab`, built once per process and vocabulary."""
    found = _BODIES.get(vocab.fingerprint)
    if found is None:
        found = VocabularyBodies.of(vocab)
        _BODIES[vocab.fingerprint] = found
    return found


@dataclass
class DocumentTokens:
    """Which tokens a grounded body may take at each byte of one document: those whose body
    part continues the document's bytes there."""

    text: GroundingText
    bodies: VocabularyBodies
    vocabulary_size: int
    _at: dict[int, IdArray] = field(default_factory=dict)
    _anywhere: npt.NDArray[np.bool_] | None = None
    _anywhere_ids: IdArray | None = None

    def at(self, offset: int) -> IdArray:
        """Tokens whose body part is a prefix of the document's bytes from `offset` (open ones,
        and closing ones whose body part is, where a value may end after it)."""
        found = self._at.get(offset)
        if found is None:
            found = np.asarray(self._walk(offset), dtype=np.int32)
            self._at[offset] = found
        return found

    def _walk(self, offset: int) -> list[int]:
        data, bodies, ends = self.text.escaped, self.bodies, self.text.ends
        tokens: list[int] = list(bodies.closing.get(b"", [])) if ends[offset] else []
        length = 1
        while offset + length <= len(data):
            head = data[offset : offset + length]
            whole = bodies.prefixes.get(head)
            in_closing = head in bodies.closing_prefixes
            if whole is None and not in_closing:
                break
            if whole:
                tokens.extend(whole)
            if in_closing and ends[offset + length]:
                tokens.extend(bodies.closing.get(head, []))
            length += 1
        return tokens

    def anywhere(self) -> npt.NDArray[np.bool_]:
        """Over the vocabulary: tokens whose body part occurs in the document where a value
        may start (and, for a token that closes the value, end): what the first token of a
        grounded body may be. The document's windows from
        each character start are sorted once; a token occurs where some window lies between
        its key and the key after every string starting with it."""
        if self._anywhere is None:
            bodies, data = self.bodies, self.text.escaped
            width = bodies.keys_from.dtype.itemsize
            padded = np.frombuffer(data + bytes(width), dtype=np.uint8)
            windows = np.lib.stride_tricks.sliding_window_view(padded, width)[: len(data)][self.text.starts[:-1]]
            keys = np.sort(np.ascontiguousarray(windows).view(f"S{width}").ravel())
            found = np.searchsorted(keys, bodies.keys_to) > np.searchsorted(keys, bodies.keys_from)
            mask = np.zeros(self.vocabulary_size, dtype=bool)
            mask[bodies.key_ids[found]] = True
            # A token that closes the value must also end it where a value may end.
            for part, tokens in bodies.closing.items():
                if part and mask[tokens[0]] and not self.text.occurs(part, whole=True):
                    mask[tokens] = False
            mask[bodies.closing.get(b"", [])] = True
            self._anywhere = mask
        return self._anywhere

    def anywhere_ids(self) -> IdArray:
        """The tokens of `anywhere`, as ids."""
        if self._anywhere_ids is None:
            self._anywhere_ids = np.flatnonzero(self.anywhere()).astype(np.int32)
        return self._anywhere_ids
