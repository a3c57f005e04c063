"""JSON text read as it is written: its strings and their escapes, its containers, and its
leaves with their JSON pointers and byte ranges. The one reader of the output's JSON text.

- `body_part`: what of some bytes stays inside a string body (a token's bytes, read from where
  a body stands), and whether they close it (core.grounding's tables, the runaway guard).
- `JsonReader`: fed bytes in any cuts, as they are written, it marks the bytes where something
  opens or closes (`MarkedByte`: quotes, brackets, commas, where a number, true, false or null
  starts and ends), and knows whether the text so far ends inside a string or an escape. The
  output's followers read with one as the text streams: the runaway guard's scanner
  (core.decode.repetition) and the indented layout (core.results.indent).
- `LeafReader`: on a JsonReader's marks, the leaves (`Leaf`) and array items (`Item`) of the
  text, with their pointers and byte ranges; `read_leaves` reads a finished text once, after
  which `pointer_at` finds the value at any offset without reading it again (evidence,
  core.results).

The decoder feeds its scanner every token it writes, and tries many more on copies: string
bodies are passed over a run at a time (a search for the next quote), and what a short piece
reads as from where the text stands is looked up once read. The reader trusts its input to be
JSON text or a prefix of one (the automaton guarantees it) and checks nothing. It imports only
core.jsontext (JSON-pointer escaping).
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from typing import Any, Final

from .jsontext import join_pointer

# What a marked byte is (a `MarkedByte`'s kind): one bit each, so that a reader may be asked for
# some kinds only (`JsonReader(marked=...)`) and a kind tested against several at once.
QUOTE: Final = 1  # a string's opening quote
END_QUOTE: Final = 2  # its closing quote
OBJECT: Final = 4  # `{`
ARRAY: Final = 8  # `[`
END_OBJECT: Final = 16  # `}`
END_ARRAY: Final = 32  # `]`
COMMA: Final = 64
SCALAR: Final = 128  # the first byte of a number, true, false or null
SCALAR_END: Final = 256  # where a number, true, false or null has ended: at the byte after it
EVERY_MARK: Final = 511
_UNMARKED = 0  # whitespace and colons between tokens: nothing opens or closes there

MarkedByte = tuple[int, int]  # (kind, offset of the byte in the bytes fed)


def _kinds() -> bytes:
    """By byte outside strings: its kind (SCALAR for a byte of a number or literal)."""
    kinds = bytearray([SCALAR]) * 256
    for byte in b" \t\n\r:":
        kinds[byte] = _UNMARKED
    for byte, kind in zip(b'"{[}],', (QUOTE, OBJECT, ARRAY, END_OBJECT, END_ARRAY, COMMA), strict=True):
        kinds[byte] = kind
    return bytes(kinds)


_KIND_OF: Final = _kinds()
_QUOTE_BYTE = 0x22
_BACKSLASH = 0x5C
# What short pieces read as, by where the text stood: a model writes the same few tokens again
# and again (`", "`, `": "`, `"}`), and a lookup costs less than reading them. Cleared when it
# grows past a bound.
_SHORT = 16
_MOST_READ = 1 << 14
_READ: dict[tuple[bytes, bool, bool, bool, int], tuple[tuple[MarkedByte, ...], bool, bool, bool]] = {}
# A string body's bytes up to its closing quote, escapes included (any byte after a backslash);
# it stops short of a backslash that ends the data.
_BODY = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)


def _escaped_body_end(data: bytes, at: int, escaped: bool) -> tuple[int, bool, bool]:
    """Where the string body that `data` holds from `at` stops (the offset of its closing quote,
    else len(data)), whether it closes there, and whether `data` ends inside an escape, where
    `data` holds a backslash (else its next quote ends the body). `escaped`: the body before
    `at` ends inside an escape."""
    size = len(data)
    if escaped:
        if at >= size:
            return at, False, True
        at += 1
    found = _BODY.match(data, at)  # always: it matches the empty string
    end = found.end() if found is not None else at
    if end == size:
        return end, False, False
    if data[end] == _QUOTE_BYTE:
        return end, True, False
    return size, False, True  # a backslash ends the data


def body_part(data: bytes, escaped: bool = False) -> tuple[bytes, bool, bool]:
    """The bytes of `data` that stay inside a string body (those before its first unescaped
    quote), whether `data` closes the body, and whether the part ends inside an escape (a
    backslash whose escaped character is still to come). `escaped`: the body so far ends so."""
    if not escaped and _BACKSLASH not in data:  # no escape: the first quote closes the body
        quote = data.find(_QUOTE_BYTE)
        return (data, False, False) if quote < 0 else (data[:quote], True, False)
    end, closed, escaped = _escaped_body_end(data, 0, escaped)
    return data[:end], closed, escaped


class JsonReader:
    """Reads JSON text fed in any cuts: `feed` returns the marks of the bytes fed (see the
    module's docstring), of the kinds `marked` (the sum of those asked for: a reader that
    follows brackets only is spared the rest); `in_string` and `escaped` say where the text
    so far ends. Cheap to copy: four fields."""

    __slots__ = ("escaped", "in_scalar", "in_string", "marked")

    def __init__(self, marked: int = EVERY_MARK) -> None:
        self.marked = marked
        self.in_string = False
        self.escaped = False  # inside a string, after a backslash
        self.in_scalar = False  # a number, true, false or null may go on

    def copy(self) -> JsonReader:
        twin = JsonReader.__new__(JsonReader)
        twin.marked, twin.in_string, twin.escaped, twin.in_scalar = self.marked, self.in_string, self.escaped, self.in_scalar
        return twin

    def feed(self, data: bytes) -> tuple[MarkedByte, ...]:
        """The marks of `data`, the bytes that follow those fed before, in order: outside
        strings, each quote, bracket and comma, and the first byte of each number, true, false
        or null; inside a string, its closing quote. A scalar's end is marked (SCALAR_END) at
        the byte after it, before that byte's own mark; a scalar at the very end of the text,
        by `finish`. Whitespace and colons are not marked. What a short piece reads as is
        looked up where it was read before from where the text stands."""
        in_string, escaped = self.in_string, self.escaped
        if in_string and _QUOTE_BYTE not in data and _BACKSLASH not in data and not escaped:
            return ()  # all of it inside a string body: most of what is written
        if len(data) <= _SHORT and type(data) is bytes:  # hashable
            key = (data, in_string, escaped, self.in_scalar, self.marked)
            known = _READ.get(key)
            if known is None:
                known = _READ[key] = self._read(data)  # it depends on nothing else
                if len(_READ) > _MOST_READ:
                    _READ.clear()
            marks, self.in_string, self.escaped, self.in_scalar = known
            return marks
        marks, self.in_string, self.escaped, self.in_scalar = self._read(data)
        return marks

    def _read(self, data: bytes) -> tuple[tuple[MarkedByte, ...], bool, bool, bool]:
        """The marks of `data` and where the text ends after it (in a string, in an escape, in
        a scalar), from where it ends now; changes nothing."""
        in_string, escaped = self.in_string, self.escaped
        plain = _BACKSLASH not in data  # no escape: each body in it ends at its next quote
        marks: list[MarkedByte] = []
        append = marks.append
        at, size, scalar, kinds, marked = 0, len(data), self.in_scalar, _KIND_OF, self.marked
        while at < size:
            if in_string:
                if plain and not escaped:
                    end = data.find(_QUOTE_BYTE, at)
                    closed = end >= 0
                else:
                    end, closed, escaped = _escaped_body_end(data, at, escaped)
                if not closed:
                    break
                if marked & END_QUOTE:
                    append((END_QUOTE, end))
                at, in_string = end + 1, False
                continue
            kind = kinds[data[at]]
            if scalar:
                if kind == SCALAR:
                    at += 1
                    continue
                scalar = False
                if marked & SCALAR_END:
                    append((SCALAR_END, at))
            if kind:
                if kind & marked:
                    append((kind, at))
                in_string, scalar = kind == QUOTE, kind == SCALAR
            at += 1
        return tuple(marks), in_string, escaped, scalar

    def finish(self) -> tuple[MarkedByte, ...]:
        """The marks the end of the text makes (offsets after the last byte fed, counted from
        there): a scalar's end, where the text ends in one."""
        if not self.in_scalar:
            return ()
        self.in_scalar = False
        return ((SCALAR_END, 0),) if self.marked & SCALAR_END else ()


@dataclass(frozen=True)
class Leaf:
    """A leaf value of JSON text (a string, number, boolean or null), its pointer, and its
    text's byte range there (quotes included)."""

    pointer: str
    value: Any
    start: int
    end: int


@dataclass(frozen=True)
class Item:
    """An array item of JSON text: the array's pointer, the item's index there, and its text's
    byte range (an object's or array's from its bracket to its closing one)."""

    array: str
    index: int
    start: int
    end: int

    @property
    def pointer(self) -> str:
        return f"{self.array}/{self.index}"


class _Container:
    """An open object or array: its pointer, and where its reading stands (the latest member's
    name, whether a name comes next; the open item's index and start)."""

    __slots__ = ("array", "index", "item_start", "key", "pointer", "wants_key")

    def __init__(self, pointer: str, array: bool) -> None:
        self.pointer = pointer
        self.array = array
        self.key = ""
        self.wants_key = not array
        self.index = 0
        self.item_start = 0

    def member(self) -> str:
        """The pointer of the value that starts here now."""
        return f"{self.pointer}/{self.index}" if self.array else join_pointer(self.pointer, self.key)


class LeafReader:
    """The leaves and array items of JSON text fed in any cuts (`feed`, then `finish` once the
    text is whole): `leaves` in order, `items` at any depth, each after the items it holds."""

    def __init__(self) -> None:
        self._reader = JsonReader()
        self._text = bytearray()
        self._open: list[_Container] = []
        self._started = 0  # where the string, number or literal being read starts
        self._key = False  # the string being read is a member's name
        self._pointer = ""  # the pointer of the string, number or literal being read
        self.leaves: list[Leaf] = []
        self.items: list[Item] = []
        self._starts: list[int] = []  # the leaves' starts, for `pointer_at`

    def feed(self, data: bytes) -> None:
        base = len(self._text)
        self._text += data
        for kind, at in self._reader.feed(data):
            self._mark(kind, base + at)

    def finish(self) -> LeafReader:
        """The text is whole: a number or literal that ends it is read. Returns the reader."""
        for kind, at in self._reader.finish():
            self._mark(kind, len(self._text) + at)
        return self

    def pointer_at(self, offset: int) -> str:
        """The pointer of the innermost value whose text holds byte `offset` (the value being
        written there, for an unfinished one: the nearest leaf before it); "" before any leaf.
        A binary search of the leaves read."""
        found = bisect.bisect_right(self._starts, offset)
        return self.leaves[found - 1].pointer if found else ""

    def _mark(self, kind: int, at: int) -> None:
        if kind & (END_QUOTE | SCALAR_END):
            end = at + 1 if kind == END_QUOTE else at
            value = json.loads(self._text[self._started : end].decode("utf-8", "surrogatepass"))  # as json.loads reads bytes
            if self._key:
                self._open[-1].key, self._open[-1].wants_key, self._key = value, False, False
                return
            self.leaves.append(Leaf(self._pointer, value, self._started, end))
            self._starts.append(self._started)
            self._ended(end)
        elif kind & (QUOTE | SCALAR):
            self._started = at
            if kind == QUOTE and self._open and self._open[-1].wants_key:
                self._key = True
                return
            self._pointer = self._begins(at)
        elif kind & (OBJECT | ARRAY):
            self._open.append(_Container(self._begins(at), kind == ARRAY))
        elif kind & (END_OBJECT | END_ARRAY):
            self._open.pop()
            self._ended(at + 1)
        elif kind == COMMA:
            container = self._open[-1]
            if container.array:
                container.index += 1
            else:
                container.wants_key = True

    def _begins(self, at: int) -> str:
        """A value starts at `at`: its pointer."""
        if not self._open:
            return ""
        container = self._open[-1]
        container.item_start = at
        return container.member()

    def _ended(self, end: int) -> None:
        """A value ended before `end`: an item, where its container is an array."""
        if self._open and self._open[-1].array:
            container = self._open[-1]
            self.items.append(Item(container.pointer, container.index, container.item_start, end))


def read_leaves(data: bytes) -> LeafReader:
    """The leaves and array items of the whole JSON text `data`, read once."""
    reader = LeafReader()
    reader.feed(data)
    return reader.finish()
