"""The number automata accept every JSON number text within the digit limits, and nothing else.

Property tests: hypothesis walks the automata of unbounded numbers (`number_node`), of whole
numbers (`whole_number_node`) and of bounded ones (`number_range`): every text must be JSON
(checked by `NUMBER`, RFC 8259's grammar written here independently of the trees), within the
limits, of a whole value or within the bounds; and every text within the limits whose value
qualifies (drawn digit by digit: leading, trailing and exponent zeros, `E`, `+`, `-0`) must be
accepted.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_formats_strict import accepted_text

from gguf_extract.core.automaton.dfa import DEAD, LazyDFA
from gguf_extract.core.automaton.nfa import build_nfa
from gguf_extract.core.automaton.regex import Node
from gguf_extract.core.schema.lexical.scalars import (
    BOUNDED_FRACTION_DIGITS,
    BOUNDED_INTEGER_DIGITS,
    BOUNDED_TRAILING_ZEROS,
    EXACT_WHOLE_DIGITS,
    MAX_EXPONENT,
    MAX_EXPONENT_DIGITS,
    MAX_FRACTION_DIGITS,
    MAX_INTEGER_DIGITS,
    number_node,
    number_range,
    whole_number_node,
)

# RFC 8259: int = zero / ( digit1-9 *DIGIT ); frac = "." 1*DIGIT; exp = e [ minus / plus ] 1*DIGIT
NUMBER = re.compile(r"(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?)([0-9]+))?", re.ASCII)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def within_limits(text: str) -> bool:
    """A JSON number with at most the digits the limits allow, its exponent at most MAX_EXPONENT."""
    match = NUMBER.fullmatch(text)
    if match is None:
        return False
    _, whole, fraction, _, exponent = match.groups()
    return (
        len(whole) <= MAX_INTEGER_DIGITS
        and len(fraction or "") <= MAX_FRACTION_DIGITS
        and (exponent is None or (len(exponent) <= MAX_EXPONENT_DIGITS and int(exponent) <= MAX_EXPONENT))
    )


@cache
def _dfa(kind: str) -> LazyDFA:
    return LazyDFA(build_nfa(number_node() if kind == "number" else whole_number_node()))


def _accepts(dfa: LazyDFA, text: str) -> bool:
    state = dfa.walk(dfa.start, text.encode())
    return state != DEAD and dfa.is_accepting(state)


ANY_FORM = ["0", "-0", "-0.0", "1.50", "10.00000000000000000", "1E5", "1e+5", "1e05", "1e0", "0.0e0", "10e1", "0e-5"]
ANY_FORM += ["2.5e-07", "9.538e+102", "-1.0E-288", "1" * 19, "0." + "0" * 16 + "1", "1e+016"]
NEVER = ["007", "01", "+1", "1.", ".5", "1e", "1e+", "--1", "1.e5", "1" * 20, "0." + "0" * 17 + "1", "1e289", "1e0001", ""]


def test_checker_is_live() -> None:
    assert [text for text in ANY_FORM if not within_limits(text)] == []
    assert [text for text in NEVER if within_limits(text)] == []


def test_every_form_is_written_and_nothing_else() -> None:
    dfa = _dfa("number")
    assert [text for text in ANY_FORM if not _accepts(dfa, text)] == []
    assert [text for text in NEVER if _accepts(dfa, text)] == []


@SETTINGS
@given(st.data())
def test_every_number_written_is_json_within_the_limits_and_finite(data: st.DataObject) -> None:
    text = data.draw(accepted_text(_dfa("number")))
    assert within_limits(text), text
    assert math.isfinite(float(text))


@st.composite
def number_texts(draw: st.DrawFn) -> str:
    """Any JSON number text within the limits: each part drawn, zeros as likely as any digit."""
    sign = draw(st.sampled_from(["", "-"]))
    whole = draw(st.sampled_from(["0", ""])) or draw(st.text("123456789", min_size=1, max_size=1)) + draw(
        st.text("0123456789", max_size=MAX_INTEGER_DIGITS - 1)
    )
    fraction = draw(
        st.one_of(st.just(""), st.text("0123456789", min_size=1, max_size=MAX_FRACTION_DIGITS).map(lambda f: "." + f))
    )
    exponent = ""
    if draw(st.booleans()):
        digits = str(draw(st.integers(0, MAX_EXPONENT))).zfill(draw(st.integers(1, MAX_EXPONENT_DIGITS)))
        exponent = draw(st.sampled_from("eE")) + draw(st.sampled_from(["", "+", "-"])) + digits[-MAX_EXPONENT_DIGITS:]
    return sign + whole + fraction + exponent


@SETTINGS
@given(number_texts())
def test_every_number_text_within_the_limits_is_accepted(text: str) -> None:
    assert within_limits(text), text
    assert _accepts(_dfa("number"), text), text


def _whole(text: str) -> bool:
    return Decimal(text) == Decimal(text).to_integral_value()


def _negative_exponent(text: str) -> bool:
    """A nonzero value with an exponent below 0 (`100e-2`): not among the integers written."""
    match = NUMBER.fullmatch(text)
    assert match is not None
    return match.group(4) == "-" and int(match.group(5)) > 0 and Decimal(text) != 0


@SETTINGS
@given(number_texts())
def test_whole_numbers_are_those_of_a_whole_value(text: str) -> None:
    expected = _whole(text) and not _negative_exponent(text)
    assert _accepts(_dfa("whole"), text) == expected, text


@SETTINGS
@given(st.data())
def test_every_whole_number_written_is_whole(data: st.DataObject) -> None:
    text = data.draw(accepted_text(_dfa("whole")))
    assert within_limits(text) and _whole(text), text
    assert float(text).is_integer()  # as jsonschema's type checker reads it after draft 4


# --- bounded numbers -------------------------------------------------------------------------

_SCALE = Decimal(10) ** -BOUNDED_FRACTION_DIGITS
grid_values = st.integers(-(10**7), 10**7).map(lambda n: n * _SCALE)
bounds = st.tuples(st.one_of(st.none(), grid_values), st.booleans(), st.one_of(st.none(), grid_values), st.booleans())


def _within(value: Decimal, low: Decimal | None, low_open: bool, high: Decimal | None, high_open: bool) -> bool:
    above = low is None or value > low or (value == low and not low_open)
    below = high is None or value < high or (value == high and not high_open)
    return above and below


def _bounded_form(text: str) -> bool:
    """No exponent, at most the bounded digits, then at most BOUNDED_TRAILING_ZEROS zeros (a
    whole value: up to MAX_FRACTION_DIGITS)."""
    match = NUMBER.fullmatch(text)
    if match is None or match.group(5) is not None or len(match.group(2)) > BOUNDED_INTEGER_DIGITS:
        return False
    fraction = match.group(3) or ""
    significant = fraction.rstrip("0")
    zeros = len(fraction) - len(significant)
    return len(significant) <= BOUNDED_FRACTION_DIGITS and zeros <= (
        BOUNDED_TRAILING_ZEROS if significant else MAX_FRACTION_DIGITS
    )


@SETTINGS
@given(bounds, st.data())
def test_bounded_numbers_are_within(limits: tuple[Decimal | None, bool, Decimal | None, bool], data: st.DataObject) -> None:
    low, low_open, high, high_open = limits
    dfa = LazyDFA(build_nfa(number_range(low, high, low_open, high_open)))
    if dfa.distance(dfa.start) < 0:
        return  # no number fits
    text = data.draw(accepted_text(dfa))
    assert _bounded_form(text), text
    assert _within(Decimal(text), low, low_open, high, high_open), text


@SETTINGS
@given(bounds, grid_values, st.integers(0, BOUNDED_TRAILING_ZEROS), st.booleans())
def test_bounded_values_are_accepted_in_every_form(
    limits: tuple[Decimal | None, bool, Decimal | None, bool], value: Decimal, zeros: int, signed: bool
) -> None:
    """Every bounded form of a grid value (trailing zeros, `-0`) is accepted exactly when the
    value is within the bounds."""
    low, low_open, high, high_open = limits
    dfa = LazyDFA(build_nfa(number_range(low, high, low_open, high_open)))
    plain = format(value.normalize(), "f")
    text = plain + ("." if "." not in plain and zeros else "") + "0" * zeros
    text = "-" + text if signed and value == 0 else text
    assert _accepts(dfa, text) == _within(value, low, low_open, high, high_open), text


def _node_accepts(node: Node, text: str) -> bool:
    return _accepts(LazyDFA(build_nfa(node)), text)


@pytest.mark.parametrize(
    ("bounds", "written", "never"),
    [
        ((Decimal(0), False, Decimal(100), False), ["10.5", "10.50", "0", "0.0", "-0", "-0.000", "100.00"], ["1e1", "100.01"]),
        ((Decimal(0), True, Decimal(1), False), ["0.5", "0.50", "1", "1.0", "0.00001"], ["0", "0.0", "-0", "1.00001"]),
        ((Decimal(-1), False, Decimal(0), False), ["-1", "-1.0", "-0.5", "0", "-0", "-0.0"], ["0.1", "-1.01"]),
        ((Decimal("0.09001"), False, Decimal("0.09001"), False), ["0.09001", "0.090010"], ["0.09", "0.1"]),
    ],
)
def test_bounded_number_texts(bounds: tuple[Decimal, bool, Decimal, bool], written: list[str], never: list[str]) -> None:
    node = number_range(*[bounds[0], bounds[2], bounds[1], bounds[3]])
    assert [text for text in written if not _node_accepts(node, text)] == []
    assert [text for text in never if _node_accepts(node, text)] == []


def test_digit_limits_are_what_the_departures_say() -> None:
    assert (MAX_INTEGER_DIGITS, MAX_FRACTION_DIGITS, MAX_EXPONENT_DIGITS, MAX_EXPONENT) == (19, 17, 3, 288)
    assert (BOUNDED_INTEGER_DIGITS, BOUNDED_FRACTION_DIGITS, BOUNDED_TRAILING_ZEROS, EXACT_WHOLE_DIGITS) == (10, 5, 12, 15)
