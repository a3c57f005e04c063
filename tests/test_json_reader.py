"""The one reader of the output's JSON text (core/json_reader.py): string bodies and their
escapes, the marks of structure fed in any cuts, and the leaves and array items with their
pointers and byte ranges, checked against `json.loads`."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.json_reader import (
    ARRAY,
    COMMA,
    END_ARRAY,
    END_OBJECT,
    END_QUOTE,
    OBJECT,
    QUOTE,
    SCALAR,
    SCALAR_END,
    JsonReader,
    LeafReader,
    MarkedByte,
    body_part,
    read_leaves,
)
from gguf_extract.core.jsontext import join_pointer, json_leaves

# -- string bodies ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "escaped", "expected"),
    [
        (b"abc", False, (b"abc", False, False)),
        (b'ab"c', False, (b"ab", True, False)),
        (b'a\\"b"', False, (b'a\\"b', True, False)),  # an escaped quote stays inside
        (b'a\\\\"b', False, (b"a\\\\", True, False)),  # an escaped backslash: the quote closes
        (b"a\\", False, (b"a\\", False, True)),  # ends inside an escape
        (b'"x', True, (b'"x', False, False)),  # the quote is the escaped character
        (b"", True, (b"", False, True)),
        (b'\\u00e9"', False, (b"\\u00e9", True, False)),
        ('é"'.encode(), False, ("é".encode(), True, False)),
    ],
)
def test_a_body_part_stops_at_the_first_unescaped_quote(data: bytes, escaped: bool, expected: tuple[bytes, bool, bool]) -> None:
    assert body_part(data, escaped) == expected


def _body_part_byte_by_byte(data: bytes, escaped: bool) -> tuple[bytes, bool, bool]:
    """The rule spelled out, one byte at a time (the reader's oracle)."""
    for index, byte in enumerate(data):
        if escaped:
            escaped = False
        elif byte == 0x5C:
            escaped = True
        elif byte == 0x22:
            return data[:index], True, False
    return data, False, escaped


@given(st.lists(st.sampled_from([b'"', b"\\", b"a", b"u", "é".encode(), b"\n"]), max_size=12).map(b"".join), st.booleans())
def test_a_body_part_is_what_a_byte_by_byte_reading_gives(data: bytes, escaped: bool) -> None:
    assert body_part(data, escaped) == _body_part_byte_by_byte(data, escaped)


# -- marks --------------------------------------------------------------------------------------


def marks_of(data: bytes, cuts: list[int] | None = None, marked: int | None = None) -> list[MarkedByte]:
    """The marks of `data` fed in pieces cut at `cuts` (None: byte by byte), with offsets in
    the whole of `data`."""
    reader = JsonReader() if marked is None else JsonReader(marked)
    found: list[MarkedByte] = []
    points = list(range(len(data) + 1)) if cuts is None else [0, *sorted({c % (len(data) + 1) for c in cuts}), len(data)]
    for start, end in itertools.pairwise(points):
        found += [(kind, start + at) for kind, at in reader.feed(data[start:end])]
    found += [(kind, len(data) + at) for kind, at in reader.finish()]
    return found


def test_the_marks_of_a_document() -> None:
    data = b'{"a": [1, "x\\"]"], "b": true}'
    assert marks_of(data, [len(data)]) == [
        (OBJECT, 0),
        (QUOTE, 1),
        (END_QUOTE, 3),
        (ARRAY, 6),
        (SCALAR, 7),
        (SCALAR_END, 8),
        (COMMA, 8),
        (QUOTE, 10),
        (END_QUOTE, 15),  # `\"` and `]` inside the string are not marked
        (END_ARRAY, 16),
        (COMMA, 17),
        (QUOTE, 19),
        (END_QUOTE, 21),
        (SCALAR, 24),
        (SCALAR_END, 28),
        (END_OBJECT, 28),
    ]


def test_a_scalar_that_ends_the_text_ends_with_finish() -> None:
    reader = JsonReader()
    assert reader.feed(b"-12.5") == ((SCALAR, 0),)
    assert reader.feed(b"e3") == ()
    assert reader.finish() == ((SCALAR_END, 0),)
    assert reader.finish() == ()


def test_a_reader_marks_only_the_kinds_asked_for() -> None:
    data = b'[{"k": "v"}, 1]'
    brackets = OBJECT | ARRAY | END_OBJECT | END_ARRAY | COMMA
    every = marks_of(data, [])  # first: read with a cache keyed without the kinds, both would be these
    assert marks_of(data, [], brackets) == [mark for mark in every if mark[0] & brackets]


def test_where_the_text_ends_is_told_and_copied() -> None:
    reader = JsonReader()
    reader.feed(b'{"a": "x\\')
    assert reader.in_string and reader.escaped
    twin = reader.copy()
    assert reader.feed(b'"') == () and reader.in_string and not reader.escaped  # the escaped quote
    assert twin.feed(b'""') == ((END_QUOTE, 1),) and not twin.in_string


# -- leaves and items ---------------------------------------------------------------------------


def test_leaves_carry_pointers_values_and_byte_ranges() -> None:
    data = '{"a/b": [1, "é\\u00e9"], "m~n": {"": null}, "t": "x\\\\"}'.encode()
    read = read_leaves(data)
    assert [(leaf.pointer, leaf.value) for leaf in read.leaves] == [
        ("/a~1b/0", 1),
        ("/a~1b/1", "éé"),
        ("/m~0n/", None),
        ("/t", "x\\"),
    ]
    for leaf in read.leaves:  # offsets in bytes: `é` is two
        assert json.loads(data[leaf.start : leaf.end]) == leaf.value
    assert (read.leaves[1].start, read.leaves[1].end) == (data.index('"é'.encode()), data.index(b'"], ') + 1)
    assert [(item.pointer, data[item.start : item.end]) for item in read.items] == [
        ("/a~1b/0", b"1"),
        ("/a~1b/1", '"é\\u00e9"'.encode()),
    ]


def test_items_come_after_the_items_they_hold() -> None:
    data = b'[[1, [2]], {"k": [3]}, []]'
    read = read_leaves(data)
    assert [item.pointer for item in read.items] == ["/0/0", "/0/1/0", "/0/1", "/0", "/1/k/0", "/1", "/2"]
    assert [data[item.start : item.end] for item in read.items] == [b"1", b"2", b"[2]", b"[1, [2]]", b"3", b'{"k": [3]}', b"[]"]


def test_a_bare_value_is_one_leaf_at_the_root() -> None:
    assert [(leaf.pointer, leaf.value, leaf.start, leaf.end) for leaf in read_leaves(b" 42").leaves] == [("", 42, 1, 3)]
    assert [(leaf.pointer, leaf.value) for leaf in read_leaves(b'"s"').leaves] == [("", "s")]
    assert read_leaves(b"{}").leaves == [] and read_leaves(b"[]").items == []


def test_the_pointer_at_an_offset_is_that_of_the_nearest_leaf_before_it() -> None:
    data = b'{"a": "xy", "b": [true, 3]}'
    read = read_leaves(data)
    assert read.pointer_at(0) == ""  # before any leaf
    assert read.pointer_at(data.index(b'"xy"')) == "/a"
    assert read.pointer_at(data.index(b"true") + 2) == "/b/0"
    assert read.pointer_at(data.index(b"3")) == "/b/1"
    assert read.pointer_at(len(data)) == "/b/1"


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=25,
)
LAYOUTS = st.sampled_from([{}, {"separators": (",", ":")}, {"indent": 2}, {"ensure_ascii": False}])


@settings(max_examples=400, deadline=None)
@given(VALUES, LAYOUTS, st.lists(st.integers(0, 10**4), max_size=12))
def test_leaves_are_those_json_loads_reads_whatever_the_cuts(value: Any, layout: dict[str, Any], cuts: list[int]) -> None:
    data = json.dumps(value, **layout).encode()
    whole = read_leaves(data)
    assert [(leaf.pointer, leaf.value) for leaf in whole.leaves] == list(json_leaves(json.loads(data)))
    for leaf in whole.leaves:
        assert json.loads(data[leaf.start : leaf.end]) == leaf.value
    pieces = LeafReader()
    points = [0, *sorted({c % (len(data) + 1) for c in cuts}), len(data)]
    for start, end in itertools.pairwise(points):
        pieces.feed(data[start:end])
    pieces.finish()
    assert pieces.leaves == whole.leaves and pieces.items == whole.items
    assert marks_of(data, cuts) == marks_of(data) == marks_of(data, [])


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_items_are_the_array_items_json_loads_reads(value: Any) -> None:
    data = json.dumps(value, ensure_ascii=False).encode()
    arrays = {pointer: item for pointer, item in _containers(json.loads(data)) if isinstance(item, list)}
    read = read_leaves(data)
    assert sorted(item.pointer for item in read.items) == sorted(f"{p}/{i}" for p, a in arrays.items() for i in range(len(a)))
    for item in read.items:
        assert json.loads(data[item.start : item.end]) == arrays[item.array][item.index]


def _containers(value: Any, pointer: str = "") -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    if isinstance(value, dict | list):
        found.append((pointer, value))
        for key, item in value.items() if isinstance(value, dict) else enumerate(value):
            found += _containers(item, join_pointer(pointer, key))
    return found
