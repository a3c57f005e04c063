"""Strings written with ASCII output get through the public Guide wherever their characters may
be: property names, listed values, pattern and length-bounded strings as well as free text.
Serializers with ASCII output (Python's json.dumps by default) write every character from
U+007F up as a `\\u` escape, and one beyond U+FFFF as a surrogate pair; a sampler driving the
Guide through such a text must be able to write it and end, exactly when jsonschema says the
value is valid. Printable ASCII written as an escape (`\\u0041`, `\\/`) is accepted only in free
text: the departures of docs/schema-support.md."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import compile_for
from test_guide_numbers import valid, walks

from gguf_extract.core.automaton.escapes import SHORT_ESCAPES, escape_hex_sequences, escape_lengths, must_escape
from gguf_extract.core.vocab.token_table import Vocabulary

CAFE = {"type": "object", "properties": {"café": {"type": "integer"}}, "required": ["café"], "additionalProperties": False}
LISTED = {"enum": ["naïve", "😀", "plain", {"nested": ["ü"]}]}
PATTERN = {"type": "string", "pattern": "^[a-zé]+(😀)?$", "maxLength": 4}
BOUNDED = {"type": "string", "minLength": 1, "maxLength": 2}
UNIQUE = {"type": "array", "items": {"enum": ["ä", "b"]}, "uniqueItems": True}
NAMES = {"type": "object", "propertyNames": {"enum": ["ß", "x"]}, "additionalProperties": {"type": "null"}}

VALUES: list[tuple[Any, list[Any]]] = [
    (CAFE, [{"café": 1}, {"cafe": 1}, {"café": "1"}]),
    (LISTED, ["naïve", "😀", "plain", {"nested": ["ü"]}, "naive", {"nested": ["u"]}]),
    (PATTERN, ["é", "aé😀", "ééé😀", "éééé😀", "A", "😀"]),
    (BOUNDED, ["😀", "😀é", "\x7f", "\u2028", "😀😀😀", ""]),
    (UNIQUE, [["ä", "b"], ["b"], ["ä", "ä"]]),
    (NAMES, [{"ß": None}, {"x": None, "ß": None}, {"ss": None}]),
]


@pytest.mark.parametrize(("schema", "values"), VALUES, ids=[json.dumps(s)[:40] for s, _ in VALUES])
@pytest.mark.parametrize("ascii_output", [True, False], ids=["ascii", "utf8"])
def test_a_string_is_accepted_in_both_serializations_exactly_when_valid(
    schema: Any, values: list[Any], ascii_output: bool, vocab: Vocabulary
) -> None:
    compiled = compile_for(schema, vocab)
    for value in values:
        text = json.dumps(value, ensure_ascii=ascii_output)
        if isinstance(value, dict) and schema is NAMES and len(value) > 1:
            continue  # which order the generator writes names in is its own: one name suffices here
        assert walks(compiled, text) == valid(schema, text), text


@pytest.mark.parametrize(
    "text",
    ['"\\u00E9"', '"\\u00e9"', '"a\\uD83D\\uDE00"', '"a\\ud83d\\ude00"', '"a\\u00e9"'],
)
def test_hex_digits_of_either_case_are_accepted(text: str, vocab: Vocabulary) -> None:
    compiled = compile_for(PATTERN, vocab)
    assert valid(PATTERN, text) and walks(compiled, text)


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        (PATTERN, '"\\ud800"'),  # a lone surrogate: no character
        (PATTERN, '"\\ude00\\ud83d"'),  # a pair in the wrong order
        (BOUNDED, '"\\ud83d\\ude00\\ud83d\\ude00\\ud83d\\ude00"'),  # three characters, not six
        (LISTED, '"na\\u00efv\\u00e9"'),
    ],
)
def test_escapes_of_what_is_no_valid_value_are_refused(schema: Any, text: str, vocab: Vocabulary) -> None:
    assert not walks(compile_for(schema, vocab), text)


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        ({"enum": ["A/B"]}, '"A\\/B"'),
        ({"enum": ["A"]}, '"\\u0041"'),
        ({"type": "string", "pattern": "^A+$"}, '"\\u0041"'),
        ({"type": "string", "format": "date"}, '"2024\\u002d01-01"'),
    ],
)
def test_printable_ascii_as_an_escape_is_the_named_departure(schema: Any, text: str, vocab: Vocabulary) -> None:
    """Valid, but refused outside free text (the departures of docs/schema-support.md): a printable ASCII
    character is written as itself there, so a literal stays forced text."""
    assert valid(schema, text)
    assert not walks(compile_for(schema, vocab), text)
    assert walks(compile_for({"type": "string"}, vocab), text)


_BOUNDS = (0, 7, 8, 9, 0xA, 0xC, 0xD, 0xE, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7E, 0x7F, 0x80, 0x7FF)
_WIDE_BOUNDS = (0x800, 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000, 0xFFFF, 0x10000, 0x10001, 0x10FFFF)


def _listed_escape_lengths(low: int, high: int) -> tuple[int, int] | None:
    """escape_lengths by listing every escape of the range."""
    lengths = [2 for character in must_escape(low, high) if character in SHORT_ESCAPES]
    lengths += [2 + len(sequence) for sequence in escape_hex_sequences(low, high)]
    return (min(lengths), max(lengths)) if lengths else None


def test_escape_lengths_told_from_bounds_are_those_of_the_escapes_listed() -> None:
    bounds = sorted(_BOUNDS + _WIDE_BOUNDS)
    for at, low in enumerate(bounds):
        for high in bounds[at:]:
            assert escape_lengths(low, high) == _listed_escape_lengths(low, high), (hex(low), hex(high))
