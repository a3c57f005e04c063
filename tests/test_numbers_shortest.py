"""Numbers are generated in a shortest form: a model cannot pad a value with digits.

Property tests: hypothesis walks the automata of unbounded numbers (`number_node`) and of
bounded ones (`number_range`), and every text must be in shortest form (checked by
`is_shortest`, written here independently of the trees) and, for bounds, within them; and
every value that has a shortest form within the digit limits must stay reachable in it.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, localcontext
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_formats_strict import accepted_text

from gguf_extract.core.automaton.dfa import DEAD, LazyDFA
from gguf_extract.core.automaton.nfa import build_nfa
from gguf_extract.core.automaton.regex import Node
from gguf_extract.core.schema.lexical import (
    BOUNDED_FRACTION_DIGITS,
    BOUNDED_INTEGER_DIGITS,
    MAX_EXPONENT_DIGITS,
    MAX_FRACTION_DIGITS,
    MAX_INTEGER_DIGITS,
    number_node,
    number_range,
)

NUMBER = re.compile(r"(-?)([0-9]+)(?:\.([0-9]+))?(?:e(-?)([0-9]+))?", re.ASCII)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def is_shortest(text: str) -> bool:
    """No digit of `text` can be dropped without changing its value or its notation: no
    leading zeros, no trailing zeros in a fraction, no `-0`, an exponent (lower-case `e`, no
    `+`) only after a single nonzero digit and itself without leading zeros or the value 0."""
    match = NUMBER.fullmatch(text)
    if match is None:
        return False
    _, whole, fraction, _, exponent = match.groups()
    if (len(whole) > 1 and whole[0] == "0") or (fraction is not None and fraction.endswith("0")):
        return False
    if Decimal(text) == 0:
        return text == "0"
    if exponent is not None:
        return len(whole) == 1 and whole != "0" and exponent[0] != "0"
    return True


def _dfa(node: Node) -> LazyDFA:
    return LazyDFA(build_nfa(node))


@cache
def _unbounded() -> LazyDFA:
    return _dfa(number_node())


def _accepts(dfa: LazyDFA, text: str) -> bool:
    state = dfa.walk(dfa.start, text.encode())
    return state != DEAD and dfa.is_accepting(state)


def _plain(value: Decimal) -> str:
    """The shortest plain (no exponent) text of `value`."""
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if Decimal(text) == 0 else text


def _scientific(value: Decimal) -> str:
    """`value` as d[.ddd]eX with a nonzero X (for values not between 1 and 10)."""
    with localcontext() as context:
        context.prec = 100  # normalize() rounds to the context's precision
        sign, digits, exponent = value.normalize().as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, digits))
    power = exponent + len(digits) - 1
    head = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
    return ("-" if sign else "") + f"{head}e{power}"


PADDED = ["1.50", "10.00000000000000000", "10.0", "007", "01", "-0", "-0.0", "0.0", "00", "1E5", "1e+5", "1e05", "1e0"]
PADDED += ["10e1", "0e5", "0.5e1", "12e3", "-1.0e5", "+1"]
SHORTEST = ["0", "10.5", "0.25", "1e5", "-2.5e-7", "100", "-0.5", "1.5e17", "-3", "0.001", "9.87654321e-99"]


def test_checker_is_live() -> None:
    assert [text for text in PADDED if is_shortest(text)] == []
    assert [text for text in SHORTEST if not is_shortest(text)] == []


def test_padded_numbers_are_never_written() -> None:
    dfa = _unbounded()
    assert [text for text in PADDED if _accepts(dfa, text)] == []
    assert [text for text in SHORTEST if not _accepts(dfa, text)] == []


@SETTINGS
@given(accepted_text(_unbounded()))
def test_every_number_written_is_shortest(text: str) -> None:
    assert is_shortest(text), text
    assert json.loads(text) == json.loads(text)  # a finite number


digit_strings = st.text("0123456789", min_size=1)


@SETTINGS
@given(
    negative=st.booleans(),
    whole=st.integers(0, 10**MAX_INTEGER_DIGITS - 1),
    fraction=st.text("0123456789", max_size=MAX_FRACTION_DIGITS),
)
def test_every_plain_value_is_reachable(negative: bool, whole: int, fraction: str) -> None:
    value = Decimal(f"{'-' if negative else ''}{whole}.{fraction or '0'}")
    text = _plain(value)
    assert is_shortest(text) and Decimal(text) == value
    assert _accepts(_unbounded(), text), text


@SETTINGS
@given(
    negative=st.booleans(),
    digits=st.text("0123456789", min_size=1, max_size=MAX_FRACTION_DIGITS + 1).filter(lambda d: d[0] != "0"),
    power=st.integers(-(10**MAX_EXPONENT_DIGITS - 1), 10**MAX_EXPONENT_DIGITS - 1).filter(bool),
)
def test_every_scientific_value_is_reachable(negative: bool, digits: str, power: int) -> None:
    value = Decimal(f"{'-' if negative else ''}{digits[0]}.{digits[1:] or '0'}e{power}")
    text = _scientific(value)
    assert is_shortest(text) and Decimal(text) == value, text
    assert _accepts(_unbounded(), text), text


# --- bounded numbers -------------------------------------------------------------------------

_SCALE = Decimal(10) ** -BOUNDED_FRACTION_DIGITS
grid_values = st.integers(-(10**7), 10**7).map(lambda n: n * _SCALE)
bounds = st.tuples(st.one_of(st.none(), grid_values), st.booleans(), st.one_of(st.none(), grid_values), st.booleans())


def _within(value: Decimal, low: Decimal | None, low_open: bool, high: Decimal | None, high_open: bool) -> bool:
    above = low is None or value > low or (value == low and not low_open)
    below = high is None or value < high or (value == high and not high_open)
    return above and below


@SETTINGS
@given(bounds, st.data())
def test_bounded_numbers_are_shortest_and_within(
    limits: tuple[Decimal | None, bool, Decimal | None, bool], data: st.DataObject
) -> None:
    low, low_open, high, high_open = limits
    node = number_range(low, high, low_open, high_open)
    dfa = _dfa(node)
    if dfa.distance(dfa.start) < 0:
        return  # no number fits (checked below: then no grid value lies within either)
    text = data.draw(accepted_text(dfa))
    assert is_shortest(text), text
    assert _within(Decimal(text), low, low_open, high, high_open), text


@SETTINGS
@given(bounds, grid_values)
def test_bounded_values_are_reachable_in_shortest_form(
    limits: tuple[Decimal | None, bool, Decimal | None, bool], value: Decimal
) -> None:
    low, low_open, high, high_open = limits
    dfa = _dfa(number_range(low, high, low_open, high_open))
    text = _plain(value)
    assert _accepts(dfa, text) == _within(value, low, low_open, high, high_open), text


@pytest.mark.parametrize(
    ("bounds", "written", "never"),
    [
        ((Decimal(0), False, Decimal(100), False), ["10.5", "0.25", "0", "100", "99.99999"], ["10.50", "1.0", "0.0", "010"]),
        ((Decimal(0), True, Decimal(1), False), ["0.5", "1", "0.00001"], ["0", "0.50", "1.0", "-0"]),
        ((Decimal(-1), False, Decimal(0), False), ["-1", "-0.5", "0"], ["-0", "-0.0", "-0.50", "-1.0"]),
        ((Decimal("0.09001"), False, Decimal("0.09001"), False), ["0.09001"], ["0.01", "0.09", "0.1", "0.090010"]),
    ],
)
def test_bounded_number_texts(bounds: tuple[Decimal, bool, Decimal, bool], written: list[str], never: list[str]) -> None:
    low, low_open, high, high_open = bounds
    dfa = _dfa(number_range(low, high, low_open, high_open))
    assert [text for text in written if not _accepts(dfa, text)] == []
    assert [text for text in never if _accepts(dfa, text)] == []


def test_digit_limits_are_what_the_readme_says() -> None:
    assert (MAX_INTEGER_DIGITS, MAX_FRACTION_DIGITS, MAX_EXPONENT_DIGITS) == (19, 17, 2)
    assert (BOUNDED_INTEGER_DIGITS, BOUNDED_FRACTION_DIGITS) == (10, 5)
