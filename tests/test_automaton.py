"""The automaton layer without any schema: UTF-8 ranges, integer ranges, formats."""

from __future__ import annotations

import datetime
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_extract.core.automaton.charnfa import machine_from_tree
from gguf_extract.core.automaton.dfa import DEAD, LazyDFA
from gguf_extract.core.automaton.nfa import build_nfa
from gguf_extract.core.automaton.regex import Chars, Node, Text, length_range, lit, seq
from gguf_extract.core.schema.lexical.formats import date_node, date_time_node
from gguf_extract.core.schema.lexical.scalars import integer_range, string_node


def matcher(node: Node) -> LazyDFA:
    return LazyDFA(build_nfa(node))


def matches(dfa: LazyDFA, data: bytes) -> bool:
    state = dfa.walk(dfa.start, data)
    return state != DEAD and dfa.is_accepting(state)


@given(st.integers(0, 0x10FFFF), st.integers(0, 0x10FFFF), st.integers(0, 0x10FFFF))
def test_char_range_matches_exactly_its_code_points(a: int, b: int, probe: int) -> None:
    low, high = min(a, b), max(a, b)
    dfa = matcher(Chars(((low, high),)))
    if 0xD800 <= probe <= 0xDFFF:
        return
    assert matches(dfa, chr(probe).encode("utf-8")) == (low <= probe <= high)


def test_char_range_never_accepts_invalid_utf8() -> None:
    dfa = matcher(Chars(((0, 0x10FFFF),)))
    assert not matches(dfa, b"\xed\xa0\x80")  # an encoded surrogate
    assert not matches(dfa, b"\xc0\xaf")  # overlong
    assert not matches(dfa, b"\xf4\x90\x80\x80")  # above U+10FFFF


@pytest.mark.parametrize(("low", "high"), [(0, 0), (-5, 5), (1, 130), (7, 1234), (-1000, -37), (99, 100), (None, 20), (-3, None)])
def test_integer_range_is_exact(low: int | None, high: int | None) -> None:
    dfa = matcher(integer_range(low, high))
    for n in range(-1200, 1300):
        inside = (low is None or n >= low) and (high is None or n <= high)
        assert matches(dfa, str(n).encode()) == inside, n
    assert not matches(dfa, b"-0")
    assert not matches(dfa, b"007")


def test_date_accepts_exactly_real_dates() -> None:
    dfa = matcher(date_node())
    day = datetime.date(1, 1, 1)
    rng = random.Random(1)
    for _ in range(3000):
        candidate = f"{rng.randint(0, 9999):04d}-{rng.randint(0, 13):02d}-{rng.randint(0, 32):02d}"
        try:
            datetime.date.fromisoformat(candidate)
            real = True
        except ValueError:
            real = False
        assert matches(dfa, candidate.encode()) == real, candidate
    assert matches(dfa, b"2024-02-29") and not matches(dfa, b"2023-02-29")
    assert matches(dfa, b"2000-02-29") and not matches(dfa, b"1900-02-29")
    assert matches(dfa, day.isoformat().encode())


def test_date_time_shape() -> None:
    dfa = matcher(date_time_node())
    assert matches(dfa, b"2024-06-14T09:30:00+02:00")
    assert matches(dfa, b"2024-06-14T09:30:00.125Z")
    assert not matches(dfa, b"2024-06-14T24:00:00Z")
    assert not matches(dfa, b"2024-06-14 09:30:00Z")


def test_string_length_counts_characters_not_bytes() -> None:
    dfa = matcher(string_node(2, 3))
    assert matches(dfa, '"日本"'.encode())
    assert matches(dfa, b'"a\\nb"')
    assert not matches(dfa, '"日本語人"'.encode())
    assert not matches(dfa, b'"a"')


@settings(max_examples=300)
@given(st.text(max_size=8), st.integers(0, 6), st.one_of(st.none(), st.integers(0, 6)), st.booleans())
def test_text_holds_exactly_the_json_strings_of_its_length(text: str, low: int, extra: int | None, ascii_output: bool) -> None:
    """A Text between low and high characters: any string of that length, written as JSON
    writes it, with characters as themselves or as the \\u escapes of ASCII output (a
    surrogate pair for a character beyond U+FFFF, one character)."""
    high = None if extra is None else low + extra
    dfa = matcher(seq(lit('"'), Text(low, high), lit('"')))
    fits = low <= len(text) and (high is None or len(text) <= high)
    assert matches(dfa, json.dumps(text, ensure_ascii=ascii_output).encode()) == fits


def test_text_takes_every_escape_json_allows() -> None:
    free, bounded = matcher(seq(lit('"'), Text(1, None), lit('"'))), matcher(seq(lit('"'), Text(1, 1), lit('"')))
    escapes = (b'\\"', b"\\\\", b"\\/", b"\\b", b"\\f", b"\\n", b"\\r", b"\\t", b"\\u00e9", b"\\u00E9", b"\\u0041")
    for escape in (*escapes, b"\\ud83d\\ude00"):
        assert matches(free, b'"' + escape + b'"') and matches(bounded, b'"' + escape + b'"'), escape
    assert not matches(bounded, b'"\\ud83d\\ude00\\ud83d\\ude00"')  # two characters
    assert not matches(free, b'"\\udc00\\ud800"')  # surrogates in the wrong order are no character
    assert not matches(free, b'"\\ud800"')  # a surrogate is not one character
    assert not matches(free, b'"\\x"') and not matches(free, b'"\n"')


def test_text_is_measured_in_characters_and_is_no_pattern_body() -> None:
    assert length_range(Text(2, 5)) == (2, 5)
    assert length_range(Text(3, None)) == (3, None)
    with pytest.raises(TypeError, match="Text"):
        machine_from_tree(Text(0, 3))


def test_forced_bytes_stop_at_a_choice() -> None:
    from gguf_extract.core.automaton.regex import alt, lit

    dfa = matcher(seq(lit('{"name": '), alt(lit("1"), lit("2")), lit("}")))
    assert dfa.forced_bytes(dfa.start) == b'{"name": '
    after = dfa.walk(dfa.start, b'{"name": 1')
    assert dfa.forced_bytes(after) == b"}"
    assert dfa.is_final(dfa.walk(after, b"}"))
    assert dfa.distance(dfa.start) == len('{"name": 1}')
