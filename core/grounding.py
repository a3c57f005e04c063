"""Grounded strings: plain string values held to verbatim spans of the document.

The schema's automaton is shared by every document; grounding is a per-document filter on
top of it, applied by the decoder where a grounded string's body is being written. The
document is laid out once as the bytes a JSON string body would hold for it (`GroundingText`:
every run of whitespace one space, quote and backslash escaped, other control characters
left out), and a string being written is allowed to continue only along an occurrence of
what it holds so far in those bytes, starting at a character boundary. So the value, once
closed, is a span of the document up to whitespace runs, by construction.

Where no allowed token continues any occurrence (a minLength the document's tail cannot
reach, a budget too small for the occurrence's bytes), the string is released from
grounding rather than leaving the decoder without a way to finish: validity comes first,
and the evidence then says the value is not grounded.

What each token holds of a string body is read escape-aware: the bytes before its first
unescaped quote. Tables over the vocabulary (every prefix of every token's body part) are
built once per vocabulary; per document only the list of tokens met at each position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .automaton.dfa import LazyDFA
from .automaton.regex import Alt, Node, Repeat, Seq, TextLabel
from .vocab import IdArray, Vocabulary

_WHITESPACE_RUN = re.compile(r"\s+")
# Characters a string body cannot hold raw and that grounding does not write as escapes.
_CONTROL = re.compile("[\x00-\x1f\ud800-\udfff]")
_QUOTE = ord('"')
_BACKSLASH = ord("\\")


def collapse_whitespace(text: str) -> str:
    """`text` with every run of whitespace written as one space (how grounded strings may
    write a value broken across lines)."""
    return _WHITESPACE_RUN.sub(" ", text)


@dataclass(frozen=True)
class GroundingText:
    """A document as the bytes of a JSON string body: whitespace runs as one space, quote and
    backslash escaped, other control characters left out. `boundaries[i]` says whether a
    character starts at byte i (continuation bytes and the second byte of escapes do not)."""

    escaped: bytes
    boundaries: npt.NDArray[np.bool_]

    @staticmethod
    def of(document: str) -> GroundingText:
        text = _CONTROL.sub("", collapse_whitespace(document))
        escaped = text.replace("\\", "\\\\").replace('"', '\\"').encode("utf-8")
        data = np.frombuffer(escaped, dtype=np.uint8)
        boundaries = np.ones(len(escaped) + 1, dtype=bool)
        boundaries[:-1] = (data & 0xC0) != 0x80
        for match in re.finditer(rb"\\.", escaped):  # only \\ and \" occur
            boundaries[match.start() + 1] = False
        return GroundingText(escaped, boundaries)

    def occurrences(self, content: bytes) -> list[int]:
        """Byte offsets just after each occurrence of `content` that starts at a character."""
        found: list[int] = []
        start = self.escaped.find(content)
        while start >= 0:
            if self.boundaries[start]:
                found.append(start + len(content))
            start = self.escaped.find(content, start + 1)
        return found

    def occurs(self, content: bytes) -> bool:
        start = self.escaped.find(content)
        while start >= 0:
            if self.boundaries[start]:
                return True
            start = self.escaped.find(content, start + 1)
        return False


def body_part(data: bytes, escaped: bool = False) -> tuple[bytes, bool, bool]:
    """The bytes of `data` that stay inside a string body (those before its first unescaped
    quote), whether `data` closes the body, and whether the part ends inside an escape (a
    backslash whose escaped character is still to come). `escaped`: the body so far ends so."""
    for index, byte in enumerate(data):
        if escaped:
            escaped = False
        elif byte == _BACKSLASH:
            escaped = True
        elif byte == _QUOTE:
            return data[:index], True, False
    return data, False, escaped


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
        return VocabularyBodies(prefixes, closing, frozenset(closing_prefixes), longest, key_ids, keys_from, keys_to, quoted)


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

    def at(self, offset: int) -> IdArray:
        """Tokens whose body part is a prefix of the document's bytes from `offset` (open ones,
        and closing ones whose body part is)."""
        found = self._at.get(offset)
        if found is None:
            found = np.asarray(self._walk(offset), dtype=np.int32)
            self._at[offset] = found
        return found

    def _walk(self, offset: int) -> list[int]:
        data, bodies = self.text.escaped, self.bodies
        tokens: list[int] = list(bodies.closing.get(b"", []))
        length = 1
        while offset + length <= len(data):
            head = data[offset : offset + length]
            whole = bodies.prefixes.get(head)
            in_closing = head in bodies.closing_prefixes
            if whole is None and not in_closing:
                break
            if whole:
                tokens.extend(whole)
            if in_closing:
                tokens.extend(bodies.closing.get(head, []))
            length += 1
        return tokens

    def anywhere(self) -> npt.NDArray[np.bool_]:
        """Over the vocabulary: tokens whose body part occurs in the document at a character
        start (what the first token of a grounded body may be). The document's windows from
        each character start are sorted once; a token occurs where some window lies between
        its key and the key after every string starting with it."""
        if self._anywhere is None:
            bodies, data = self.bodies, self.text.escaped
            width = bodies.keys_from.dtype.itemsize
            padded = np.frombuffer(data + bytes(width), dtype=np.uint8)
            windows = np.lib.stride_tricks.sliding_window_view(padded, width)[: len(data)][self.text.boundaries[:-1]]
            keys = np.sort(np.ascontiguousarray(windows).view(f"S{width}").ravel())
            found = np.searchsorted(keys, bodies.keys_to) > np.searchsorted(keys, bodies.keys_from)
            mask = np.zeros(self.vocabulary_size, dtype=bool)
            mask[bodies.key_ids[found]] = True
            mask[bodies.closing.get(b"", [])] = True
            self._anywhere = mask
        return self._anywhere


def grounds(label: TextLabel | None, default: bool) -> bool:
    """Whether the string body `label` marks is grounded: its `x-grounded`, else `default`."""
    if label is None:
        return False
    return label.grounded if label.grounded is not None else default


def text_labels(tree: Node) -> list[TextLabel]:
    """The labels of the plain string values in `tree`, each once, in order."""
    found: dict[TextLabel, None] = {}
    seen: set[int] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Repeat):
            if node.label is not None:
                found[node.label] = None
            stack.append(node.item)
        elif isinstance(node, Seq):
            stack.extend(reversed(node.parts))
        elif isinstance(node, Alt):
            stack.extend(reversed(node.options))
    return list(found)


class Grounding:
    """Follows one generation's output and filters the tokens allowed inside grounded string
    bodies. `feed` every byte written, in order; `restrict` the candidates at each choice."""

    def __init__(self, dfa: LazyDFA, vocab: Vocabulary, document: str, default: bool) -> None:
        self._dfa = dfa
        self._pieces = vocab.pieces
        self._tokens = DocumentTokens(GroundingText.of(document), vocabulary_bodies(vocab), vocab.size)
        self._default = default
        self._state = dfa.start
        self._written = 0
        self._body_start: int | None = None  # output offset where the open grounded body began
        self._escaped = False  # the open body ends inside an escape
        self._ends: list[int] | None = None  # None: the body is empty, any start is open
        self._released = False
        self._mark = np.zeros(vocab.size, dtype=bool)
        # Per (state, pending): what each quoted token would write into a body it opens.
        self._opened: dict[tuple[int, bytes], dict[int, bytes | None]] = {}
        self._occurring: dict[bytes, bool] = {}
        self._continuing: dict[tuple[int, ...], IdArray] = {}
        self.bodies: list[tuple[int, int, bool]] = []  # output byte range of each body, and grounded or not

    @property
    def text(self) -> GroundingText:
        return self._tokens.text

    @property
    def inside_body(self) -> bool:
        """Whether a grounded string's body is open at the end of the output so far."""
        return self._body_start is not None

    def applies(self, label: TextLabel | None) -> bool:
        return grounds(label, self._default)

    # -- following the output ----------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Take in bytes just written to the output."""
        while data:
            if self._body_start is not None:
                data = self._feed_body(data)
                continue
            byte, data = data[0], data[1:]
            self._state = self._dfa.step(self._state, byte)
            self._written += 1
            self._enter_if_grounded()

    def _feed_body(self, data: bytes) -> bytes:
        part, closed, self._escaped = body_part(data, self._escaped)
        if part:
            self._extend(part)
        for byte in part:
            self._state = self._dfa.step(self._state, byte)
        self._written += len(part)
        if closed:
            assert self._body_start is not None
            self.bodies.append((self._body_start, self._written, not self._released))
            self._body_start = None
        return data[len(part) :]

    def _extend(self, part: bytes) -> None:
        if self._released:
            return
        text = self._tokens.text
        if self._ends is None:
            self._ends = text.occurrences(part)
        else:
            escaped = text.escaped
            self._ends = [end + len(part) for end in self._ends if escaped.startswith(part, end)]
        if not self._ends:
            self._released = True

    def _enter_if_grounded(self) -> None:
        if self._dfa.starts_text(self._state) and self.applies(self._dfa.text_label(self._state)):
            self._body_start, self._escaped, self._ends, self._released = self._written, False, None, False

    # -- filtering -----------------------------------------------------------------------

    def restrict(self, pending: bytes, ids: IdArray) -> IdArray:
        """The candidates (each starting with `pending`, already fed) that keep a grounded body
        on a span of the document: inside one, those continuing an occurrence; outside, those
        that open one and write in it only what the document holds. All of them where none
        would (the body is then released)."""
        inside = self._body_start is not None
        if len(ids) == 0 or (inside and self._released):
            return ids
        keep = self._keep_inside(pending, ids) if self._body_start is not None else self._keep_outside(pending, ids)
        if keep is None:
            return ids
        if not keep.any():
            self._released = self._body_start is not None
            return ids
        return ids[keep]

    def _keep_inside(self, pending: bytes, ids: IdArray) -> npt.NDArray[np.bool_]:
        if pending or self._escaped:
            return self._keep_one_by_one(pending, ids)
        if self._ends is None:
            return self._tokens.anywhere()[ids]
        allowed = self._after(tuple(self._ends))
        self._mark[allowed] = True
        keep = self._mark[ids]
        self._mark[allowed] = False
        return keep

    def _after(self, ends: tuple[int, ...]) -> IdArray:
        """The tokens that continue the document at one of `ends` (a repeated value meets the
        same occurrences again: kept)."""
        found = self._continuing.get(ends)
        if found is None:
            found = np.concatenate([self._tokens.at(end) for end in ends]) if ends else np.zeros(0, np.int32)
            self._continuing[ends] = found
        return found

    def _keep_one_by_one(self, pending: bytes, ids: IdArray) -> npt.NDArray[np.bool_]:
        text = self._tokens.text
        keep = np.zeros(len(ids), dtype=bool)
        for index, token in enumerate(ids.tolist()):
            part, _, _ = body_part(self._pieces[token][len(pending) :], self._escaped)
            if self._ends is None:
                keep[index] = not part or text.occurs(part)
            else:
                keep[index] = any(text.escaped.startswith(part, end) for end in self._ends)
        return keep

    def _keep_outside(self, pending: bytes, ids: IdArray) -> npt.NDArray[np.bool_] | None:
        """Outside a body, only tokens with a quote may open one; each is walked to see."""
        with_quote = np.flatnonzero(self._tokens.bodies.quoted[ids])
        quoted = [int(i) for i in with_quote if b'"' in self._pieces[int(ids[i])][len(pending) :]]
        if not quoted:
            return None
        opened = self._opened.setdefault((self._state, pending), {})
        keep = np.ones(len(ids), dtype=bool)
        for index in quoted:
            token = int(ids[index])
            if token not in opened:
                opened[token] = self._opened_body(self._pieces[token][len(pending) :])
            part = opened[token]
            keep[index] = not part or self._occurs(part)
        return keep

    def _occurs(self, part: bytes) -> bool:
        found = self._occurring.get(part)
        if found is None:
            found = self._occurring[part] = self._tokens.text.occurs(part)
        return found

    def _opened_body(self, data: bytes) -> bytes | None:
        """What `data`, written from here, puts into a grounded body it opens (None: it opens
        none)."""
        state, dfa = self._state, self._dfa
        for index, byte in enumerate(data):
            state = dfa.step(state, byte)
            if dfa.starts_text(state) and self.applies(dfa.text_label(state)):
                return body_part(data[index + 1 :])[0]
        return None
