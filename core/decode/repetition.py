"""Runaway values: a string whose tail repeats itself, an array filled with copies of an item.

A small model, once it has written something twice, tends to write it again until the budget
or `maxItems` stops it: `"2019-12-29, 2019-12-29, 2019-12-29, ..."`, `["grep", "egrep",
"grep", "grep", ...]`. The output stays valid; it is just wrong and slow. The decoder follows
its output with a `RepetitionGuard` (fed every byte written), which its choice policy
(core.decode.repetition_policy) asks at each choice, these ways:

- inside a string, a token is ruled out when it would make the string's tail repeat a
  period of at most `LONGEST_PERIOD` bytes a third time (`LEAST_RUN` bytes at least): the next
  best token is taken instead (`avoid`), never the last one left, so the schema stays
  satisfiable;
- where the model's token would start another item of an array and a token that closes the
  array is allowed, the decoder previews the item the model would write (greedy, then taken
  back); when it comes out a copy of earlier items of the same array (core.decode.item_copies:
  the same JSON value, however spaced or ordered; an object each of whose fields equals the
  same field of one earlier item: `{"name": "john", "email": "john"}` again, or with fewer
  fields; or an item still copying one when the preview's choices run out), the array is
  closed there instead. Where one token ends the open item and starts the next (`"}, {"`)
  and none ends the array at once, the best token on the way to the item's end (`"}`) is
  taken, and the array closes at its next chance without another preview. Arrays nested in
  items are watched alike, each against its own items. Only strings, objects and arrays
  count as repeated items: numbers, booleans and null repeat legitimately (`[1, 1, 2]`).
  Where the array may not end there (`minItems`), the item is written otherwise: a token that
  would end it as a copy is passed over for the next choice (never the last one left);
- a string that has had `RUNAWAY_STOPS` loops ruled out and whose last `RUNAWAY_WINDOW` bytes
  are near-repeats (they compress to at most `RUNAWAY_RATIO` of their size: `KDE/KDE/KDF/KDE`,
  `S.S.S.T.S.S`, which no exact period catches) is closed, where the schema allows a closing
  quote there, with the best such token (`runaway`): the value stays short and its
  confidence says how little the model wanted to end it.

The scanner trusts its input to be a prefix of a JSON document (the automaton guarantees it)
and checks nothing.
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass, field

from ..json_reader import ARRAY, COMMA, END_ARRAY, END_OBJECT, END_QUOTE, OBJECT, QUOTE, SCALAR_END, JsonReader, body_part
from .item_copies import MISSING, closed_item, copies_fields, copies_items, parsed, same_value, written_fields

LONGEST_PERIOD = 20  # bytes; the bench's definition of a looping value (bench/accuracy_scoring.py)
REPEATS = 3
LEAST_RUN = 12  # bytes: below this, a repeat is more likely the value itself ("1.1.1", "aaa")
# Near-repeats: measured on 15,400 windows of 128 bytes of the development set's documents and
# the system's licence texts, 0.1% compress to 0.43 of their size or less (the lowest were runs of
# spaces and rules); five runaways of the shapes the bundled model wrote (`KDE/KDE/KDF/...`,
# `A.1.1.2.2...`, written out to 128 bytes) compress to 0.16 to 0.37. A string must also have had
# loops ruled out, so ordinary text is never cut.
RUNAWAY_WINDOW = 128  # bytes
RUNAWAY_RATIO = 0.4
RUNAWAY_STOPS = 3
_REPEATABLE = b'"{['  # first bytes of the items a copy of which is a runaway


def loops(text: bytes) -> bool:
    """Whether `text` ends in `REPEATS` copies (and `LEAST_RUN` bytes) of a period of at most
    `LONGEST_PERIOD` bytes: its last max(REPEATS * p, LEAST_RUN) bytes repeat with period p."""
    for period in range(1, LONGEST_PERIOD + 1):
        run = max(REPEATS * period, LEAST_RUN)
        if len(text) < run:
            break
        if text[-run:-period] == text[-run + period :]:
            return True
    return False


def near_repeats(text: bytes) -> bool:
    """Whether the last `RUNAWAY_WINDOW` bytes of `text` (it must have that many) compress to at
    most `RUNAWAY_RATIO` of their size: text made of a few pieces written again and again."""
    window = text[-RUNAWAY_WINDOW:]
    return len(window) == RUNAWAY_WINDOW and len(zlib.compress(window, 9)) <= RUNAWAY_RATIO * RUNAWAY_WINDOW


@dataclass
class _Array:
    """An open array: its items so far (their JSON text) and where its open item starts and
    ends in the output (None: not started, or not ended)."""

    id: int
    items: list[bytes] = field(default_factory=list)
    start: int | None = None
    end: int | None = None
    # The next item was previewed as a copy where no token could close the array at once
    # (the item's end and the next item's start came in one token): the array is to close at
    # its next chance, without another preview. Cleared when an item starts after all.
    closing: bool = False
    # The number of the item that is not to come out a copy (the array could not close where
    # the model would have copied one: `minItems`); None: no such item.
    unlike: int | None = None

    def copy(self) -> _Array:
        return _Array(self.id, list(self.items), self.start, self.end, self.closing, self.unlike)


class JsonScanner:
    """Follows a JSON document as it is written: which containers are open, whether a string
    is, and for each open array the text of its items. What each byte is, is read by a
    core.json_reader.JsonReader."""

    def __init__(self) -> None:
        self.output = bytearray()
        self.stack: list[_Array | None] = []  # None: an object
        self.reader = JsonReader()
        # Where the output ends, as the reader says after each feed: inside a string, after a backslash.
        self.in_string = self.escaped = False
        self.body_start = 0  # where the open string's body starts in the output
        self.stops_in_string = 0  # loops ruled out in the open string (RepetitionGuard.note_stop)
        self._arrays = 0
        self.closed: dict[int, _Array] = {}  # the arrays closed so far, by id (never changed again)

    def copy(self) -> JsonScanner:
        twin = JsonScanner.__new__(JsonScanner)
        twin.__dict__.update(self.__dict__)
        twin.output = bytearray(self.output)
        twin.reader = self.reader.copy()
        twin.stack = [frame.copy() if frame is not None else None for frame in self.stack]
        twin.closed = dict(self.closed)
        return twin

    def array(self, id: int) -> _Array | None:
        """The open array `id`, if it is still open."""
        return next((frame for frame in self.stack if frame is not None and frame.id == id), None)

    def feed(self, data: bytes) -> None:
        base = len(self.output)
        self.output += data
        for kind, at in self.reader.feed(data):
            at += base
            if kind == END_QUOTE:
                self._value_ends(at + 1)
            elif kind == SCALAR_END:
                self._value_ends(at)
            elif kind == COMMA:
                self._next_item(at)
            elif kind & (END_ARRAY | END_OBJECT):
                self._container_ends(kind, at)
            else:  # a value starts: a string, an object, an array, or a number or literal
                self._value_starts(at)
                if kind == QUOTE:
                    self.body_start, self.stops_in_string = at + 1, 0
                elif kind == OBJECT:
                    self.stack.append(None)
                elif kind == ARRAY:
                    self._arrays += 1
                    self.stack.append(_Array(self._arrays))
        self.in_string, self.escaped = self.reader.in_string, self.reader.escaped

    def _container_ends(self, kind: int, at: int) -> None:
        if kind == END_ARRAY:
            self._next_item(at)
        closed = self.stack.pop()
        if closed is not None:
            self.closed[closed.id] = closed
        self._value_ends(at + 1)

    def _top_array(self) -> _Array | None:
        return self.stack[-1] if self.stack else None

    def _value_starts(self, at: int) -> None:
        top = self._top_array()
        if top is not None and top.start is None:
            top.start = at

    def _value_ends(self, at: int) -> None:
        top = self._top_array()
        if top is not None and top.start is not None and top.end is None:
            top.end = at

    def _next_item(self, at: int) -> None:
        top = self._top_array()
        if top is not None and top.start is not None:
            top.items.append(bytes(self.output[top.start : top.end if top.end is not None else at]))
            top.start = top.end = None
            top.closing = False


class RepetitionGuard:
    """What the decoder asks about the output so far (see the module's docstring). Feed it
    every byte written, in order."""

    def __init__(self, scanner: JsonScanner | None = None) -> None:
        self.scanner = scanner or JsonScanner()

    def feed(self, data: bytes) -> None:
        self.scanner.feed(data)

    def snapshot(self) -> JsonScanner:
        return self.scanner.copy()

    def restore(self, snapshot: JsonScanner) -> None:
        self.scanner = snapshot.copy()

    def loops(self, new: bytes) -> bool:
        """Whether writing `new` next would make the open string's tail loop (see `loops`);
        False outside strings and for bytes that only close the string."""
        scanner = self.scanner
        if not scanner.in_string:
            return False
        part = body_part(new, scanner.escaped)[0]
        if not part:
            return False
        body = scanner.output[max(scanner.body_start, len(scanner.output) - REPEATS * LONGEST_PERIOD) :]
        return loops(bytes(body) + part)

    def note_stop(self) -> None:
        """A token that made the open string loop was ruled out."""
        self.scanner.stops_in_string += 1

    def runaway(self) -> bool:
        """Whether the open string is a runaway: `RUNAWAY_STOPS` loops ruled out in it, and its
        tail near-repeats (see `near_repeats`)."""
        scanner = self.scanner
        if not scanner.in_string or scanner.stops_in_string < RUNAWAY_STOPS:
            return False
        return near_repeats(bytes(scanner.output[max(scanner.body_start, len(scanner.output) - RUNAWAY_WINDOW) :]))

    def closes_string(self, new: bytes) -> bool:
        """Whether writing `new` next ends the open string."""
        return self.scanner.in_string and body_part(new, self.scanner.escaped)[1]

    def continued_array(self, new: bytes) -> int | None:
        """The id of the open array in which `new` would start another item, where that
        array already has an item a copy of which would be a runaway (a string, object or
        array); else None."""
        if b"," not in new:  # another item always starts after a comma
            return None
        after = self.scanner.copy()
        after.feed(new)
        for frame in reversed(self.scanner.stack):
            if frame is None:
                continue
            now = after.array(frame.id)
            if now is not None and len(now.items) > len(frame.items) and any(i[:1] in _REPEATABLE for i in now.items if i):
                return frame.id
        return None

    def closes(self, new: bytes, array: int) -> bool:
        """Whether writing `new` next closes the open array `array`."""
        after = self.scanner.copy()
        after.feed(new)
        return after.array(array) is None

    def item_end(self, new: bytes, array: int) -> bytes:
        """What of `new` (which starts another item of the open array `array`) comes before the
        comma that starts that item: the end of the item now open (`"}` of `"}, `)."""
        frame = self.scanner.array(array)
        assert frame is not None
        before = len(frame.items)
        after = self.scanner.copy()
        for at in range(len(new)):
            after.feed(new[at : at + 1])
            now = after.array(array)
            if now is None or len(now.items) > before:
                return new[:at]
        return new

    def close_later(self, array: int) -> None:
        """The open array `array` is to close at its next chance (`_Array.closing`)."""
        frame = self.scanner.array(array)
        if frame is not None:
            frame.closing = True

    def closing(self, array: int) -> bool:
        """Whether the open array `array` was marked to close at its next chance."""
        frame = self.scanner.array(array)
        return frame is not None and frame.closing

    def forbid_copy(self, array: int) -> None:
        """The next item of the open array `array` is not to come out a copy of earlier ones
        (see `completes_copy`): the array cannot close before it."""
        frame = self.scanner.array(array)
        if frame is not None:
            frame.unlike = len(frame.items) + (frame.start is not None)

    def completes_copy(self, new: bytes) -> bool:
        """Whether writing `new` next ends an item that is not to be a copy (`forbid_copy`) as a
        copy of earlier items of its array."""
        frames = [frame for frame in self.scanner.stack if frame is not None and frame.unlike is not None]
        if not frames:
            return False
        after = self.scanner.copy()
        after.feed(new)
        for frame in frames:
            now = after.array(frame.id) or after.closed.get(frame.id)
            assert now is not None and frame.unlike is not None
            earlier = [parsed(text) for text in now.items[: frame.unlike] if text[:1] in _REPEATABLE]
            if len(now.items) > frame.unlike:
                item = now.items[frame.unlike]
            elif len(now.items) == frame.unlike and now.start is not None:
                item = bytes(after.output[now.start : now.end if now.end is not None else len(after.output)])
                if now.end is None:
                    # An object item whose last string `new` closes: what follows may only close
                    # the item (`}` the one token left), so a copy is judged here, where there is
                    # a choice, and the string is written otherwise. (Not a nested array's `]`:
                    # kept open, it would fill up with items of the model's own.)
                    closed = closed_item(item) if self.closes_string(new) else MISSING
                    if closed is not MISSING and any(same_value(closed, other) for other in earlier):
                        return True
                    continue
            else:
                continue
            if item[:1] in _REPEATABLE and (item in now.items[: frame.unlike] or copies_items(parsed(item), earlier)):
                return True
        return False

    def forbids_copies(self) -> bool:
        """Whether an item not to be a copy is open or to come (`forbid_copy`)."""
        return any(
            frame is not None and frame.unlike is not None and frame.unlike >= len(frame.items) for frame in self.scanner.stack
        )

    def watch(self, array: int) -> ItemWatch:
        """A watch over the next item of `array`, to be fed what the model would write."""
        return ItemWatch(RepetitionGuard(self.scanner.copy()), array)


class ItemWatch:
    """Follows a preview of the next item of one array: whether it is still on its way to
    being a copy of an earlier item, and whether it came out as one."""

    def __init__(self, guard: RepetitionGuard, array: int) -> None:
        self.guard = guard
        self._array = array
        frame = guard.scanner.array(array)
        # The items before the watched one: those so far, and the open one, which the comma
        # that starts the watched item completes.
        self._earlier = len(frame.items) + (frame.start is not None) if frame is not None else 0

    def feed(self, data: bytes) -> None:
        self.guard.feed(data)

    def snapshot(self) -> JsonScanner:
        return self.guard.snapshot()

    def restore(self, snapshot: JsonScanner) -> None:
        self.guard.restore(snapshot)

    def _frame(self) -> _Array | None:
        scanner = self.guard.scanner
        return scanner.array(self._array) or scanner.closed.get(self._array)

    def _item(self) -> tuple[bytes | None, bool]:
        """The watched item's text so far (None: not started) and whether it is complete
        (the array may have closed after it)."""
        scanner, frame = self.guard.scanner, self._frame()
        if frame is None:
            return None, False
        if len(frame.items) > self._earlier:
            return frame.items[self._earlier], True
        if len(frame.items) < self._earlier or frame.start is None or scanner.array(self._array) is None:
            return None, False  # the comma before the item is still to come, or the array closed
        return bytes(
            scanner.output[frame.start : frame.end if frame.end is not None else len(scanner.output)]
        ), frame.end is not None

    def _copies(self) -> list[bytes]:
        frame = self._frame()
        return [item for item in frame.items[: self._earlier] if item[:1] in _REPEATABLE] if frame is not None else []

    @functools.cached_property
    def _copied_values(self) -> list[object]:
        """The JSON values of `_copies`, read once: the earlier items stay as they are while the
        watched item is written."""
        return [parsed(item) for item in self._copies()]

    @property
    def wants_more(self) -> bool:
        """Whether the item is still to start, or so far on its way to copying earlier items: a
        prefix of one, or an object whose fields written so far each copy an earlier one's."""
        if self.guard.scanner.array(self._array) is None:
            return False
        text, complete = self._item()
        if text is None:
            return True
        if complete:
            return False
        copies = self._copies()
        if any(earlier.startswith(text) for earlier in copies):
            return True
        fields = written_fields(text)
        return bool(fields) and copies_fields(fields, self._copied_values)

    @property
    def copying(self) -> bool:
        """Whether the item has begun and is so far on its way to copying earlier items."""
        return self._item()[0] is not None and self.wants_more

    @property
    def repeats(self) -> bool:
        """Whether the item came out complete and a copy of earlier items of its array (see
        `copies_items`)."""
        text, complete = self._item()
        if not complete or text is None or text[:1] not in _REPEATABLE:
            return False
        copies = self._copies()
        return text in copies or copies_items(parsed(text), self._copied_values)
