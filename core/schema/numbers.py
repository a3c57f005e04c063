"""Integers and numbers within bounds, and multiples of a divisor, as regex trees.

Bounds are exact where the generated digits reach them (see lexical.py), and do not restrict
beyond them (`maximum: 1e308`). Where the digits generated for a type cannot meet the bounds
at all, the refusal names that departure, never "no value satisfies": `minimum: 1e20` on
integers widens the digits instead; on numbers, whole numbers outside the decimal digits are
generated. Multiples of a whole divisor come from a remainder automaton (one state per
remainder, after the divisor's factors of 10), or are listed one by one when the bounds hold
few; 1/n divisors (0.01) divide every integer, and where no integer fits the bounds the
decimal multiples the validator itself accepts are listed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

from ..automaton.charnfa import AutomatonTooLarge, intersect, is_empty, machine_from_tree, multiple_machine
from ..automaton.regex import Alt, Chars, Node, Repeat, Seq, alt, lit
from ..errors import SchemaError, UnsupportedSchema
from .json_values import join_pointer
from .lexical import (
    BOUNDED_FRACTION_DIGITS,
    BOUNDED_INTEGER_DIGITS,
    generated_integers,
    integer_node,
    integer_range,
    number_node,
    number_range,
)
from .limits import MAX_DIVISOR_STATES, MAX_LISTED_MULTIPLES

Accepts = Callable[[Any], bool]


def integer_values(schema: dict[str, Any], pointer: str) -> Node:
    """The integers `schema`'s bounds and multipleOf allow, in canonical form."""
    low, high = integer_bounds(schema)
    if low is not None and high is not None and low > high:
        raise SchemaError(f"no integer satisfies the bounds at {pointer or '/'}")
    if "multipleOf" in schema:
        return _multiples(low, high, schema["multipleOf"], join_pointer(pointer, "multipleOf"))
    return integer_node() if low is None and high is None else integer_range(low, high)


def number_values(schema: dict[str, Any], pointer: str, accepts: Accepts) -> Node:
    """The numbers `schema`'s bounds and multipleOf allow. `accepts` is the validator's
    verdict on a value (for listed decimal multiples)."""
    low, low_exclusive, high, high_exclusive = bounds(schema)
    if low is not None and high is not None and (low > high or (low == high and (low_exclusive or high_exclusive))):
        raise SchemaError(f"no number satisfies the bounds at {pointer or '/'}")
    if "multipleOf" in schema:
        return _number_multiples(schema, pointer, accepts)
    if low is None and high is None:
        return number_node()
    node = number_range(_decimal(low), _decimal(high), low_exclusive, high_exclusive)
    if not _matches_nothing(node):
        return node
    whole_low, whole_high = integer_bounds(schema)
    if whole_low is None or whole_high is None or whole_low <= whole_high:
        # Beyond the decimal digits (minimum 12345678901.5): whole numbers, written as integers.
        return integer_range(whole_low, whole_high)
    keyword = _bound_keyword(schema)
    raise departure(
        keyword,
        join_pointer(pointer, keyword),
        f"numbers with bounds are generated with at most {BOUNDED_INTEGER_DIGITS} integer and"
        f" {BOUNDED_FRACTION_DIGITS} fraction digits, and none of those lies {_interval(schema)}",
    )


def _number_multiples(schema: dict[str, Any], pointer: str, accepts: Accepts) -> Node:
    """Whole multiples (see integer_values); for a fractional divisor with no whole number
    within the bounds, the decimal multiples there that the validator accepts."""
    divisor = schema["multipleOf"]
    low, high = integer_bounds(schema)
    whole_fits = low is None or high is None or low <= high
    if whole_fits or not isinstance(divisor, float) or divisor.is_integer():
        return integer_values(schema, pointer)
    texts = _decimal_multiples(schema, Decimal(repr(divisor)), join_pointer(pointer, "multipleOf"))
    kept = [text for text in texts if accepts(json.loads(text))]
    if not kept:
        raise departure(
            "multipleOf",
            join_pointer(pointer, "multipleOf"),
            f"multipleOf {divisor!r} on numbers is generated as whole numbers, or as decimals the validator's float"
            f" division accepts; none of those lies {_interval(schema)}",
        )
    return alt(*(lit(text) for text in kept))


def _decimal_multiples(schema: dict[str, Any], step: Decimal, pointer: str) -> list[str]:
    """Texts of the multiples k * step within the (finite) bounds, refused beyond
    MAX_LISTED_MULTIPLES of them."""
    low, low_exclusive, high, high_exclusive = bounds(schema)
    assert low is not None and high is not None  # no whole number fits, so both bounds exist
    first = math.ceil(Fraction(repr(low)) / Fraction(step))
    last = math.floor(Fraction(repr(high)) / Fraction(step))
    count = last - first + 1
    if count > MAX_LISTED_MULTIPLES:
        raise departure(
            "multipleOf",
            pointer,
            f"no whole number lies {_interval(schema)}, and the {count} decimal multiples there are more than the"
            f" {MAX_LISTED_MULTIPLES} that are listed",
        )
    values = (k * step for k in range(first, last + 1))
    within = [v for v in values if _within(v, _decimal(low), low_exclusive, _decimal(high), high_exclusive)]
    return [_plain(v) for v in within]


def _within(value: Decimal, low: Decimal | None, low_exclusive: bool, high: Decimal | None, high_exclusive: bool) -> bool:
    above = low is None or value > low or (value == low and not low_exclusive)
    below = high is None or value < high or (value == high and not high_exclusive)
    return above and below


def _plain(value: Decimal) -> str:
    """A decimal as JSON writes it: no exponent, no trailing fraction zeros, `0` not `-0`."""
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "0") else text


def departure(keyword: str, pointer: str, why: str) -> SchemaError:
    """The error for a place where the schema has valid values but none of those generated
    (see the README's departures). A SchemaError, as for an unsatisfiable place: where the
    value is optional (a property, an anyOf branch) it is simply not generated."""
    return SchemaError(
        f"'{keyword}' at {pointer}: {why}",
        hint="the schema has valid values here, but none of the ones generated; widen the bounds or drop the keyword",
    )


def _multiples(low: int | None, high: int | None, divisor: Any, pointer: str) -> Node:
    """Integers within the bounds divisible by `divisor`: exact for whole divisors (integer
    arithmetic in the validator too). A divisor 1/m (0.5, 0.01, ...) divides every integer,
    and the validator's float division agrees (see divides_integers); other fractional
    divisors are refused."""
    integers = integer_node() if low is None and high is None else integer_range(low, high)
    if isinstance(divisor, float) and not divisor.is_integer():
        if divides_integers(divisor):
            return integers
        raise UnsupportedSchema("multipleOf", pointer, "only whole divisors or 1/n divisors (0.5, 0.01, ...) are supported")
    divisor = int(divisor)
    if divisor == 1:
        return integers
    listed = _listed_multiples(low, high, divisor)
    if listed is not None:
        if not listed:
            raise SchemaError(f"no integer within the bounds at {pointer} is a multiple of {divisor}")
        return alt(*(lit(str(value)) for value in listed))
    return _multiple_machine(integers, divisor, pointer)


def _listed_multiples(low: int | None, high: int | None, divisor: int) -> list[int] | None:
    """The generated multiples of `divisor` within the bounds, when at most
    MAX_LISTED_MULTIPLES (always so for divisors with more digits than integers have)."""
    first, last = generated_integers(low, high)
    first, last = -(-first // divisor), last // divisor  # the multipliers k with first <= k * divisor <= last
    if last - first + 1 > MAX_LISTED_MULTIPLES:
        return None
    return [k * divisor for k in range(first, last + 1)]


def _multiple_machine(integers: Node, divisor: int, pointer: str) -> Node:
    """The integers of `integers` divisible by `divisor` = core * 10**zeros: `core` remainder
    states, then `zeros` zero digits."""
    core, zeros = divisor, 0
    while core % 10 == 0:
        core, zeros = core // 10, zeros + 1
    if core > MAX_DIVISOR_STATES:
        raise UnsupportedSchema(
            "multipleOf",
            pointer,
            f"divisor {divisor} needs one automaton state per remainder of {core}, above the limit of"
            f" {MAX_DIVISOR_STATES}; bound the value with minimum and maximum so that at most"
            f" {MAX_LISTED_MULTIPLES} multiples lie between them",
        )
    try:
        machine = intersect(machine_from_tree(integers), multiple_machine(core, zeros))
    except AutomatonTooLarge as error:
        raise UnsupportedSchema("multipleOf", pointer, f"divisor {divisor} with these bounds needs {error}") from None
    if is_empty(machine):
        raise SchemaError(f"no integer within the bounds at {pointer} is a multiple of {divisor}")
    return machine


def divides_integers(divisor: float) -> bool:
    """Whether the validator finds every integer n a multiple of `divisor`: it computes the
    float n / divisor and checks that it is whole. With divisor = (1/m)(1 + e) for a whole m,
    the exact quotient is N/(1 + e) for N = n*m, less than N*|e| (or N*|e|/(1 - |e|) when
    e < 0) away from N. While that is under half an ulp of N (|e| <= 2**-54 with e >= 0, or
    |e| < 2**-55), the quotient rounds to N exactly; doubles from 2**53 up are all whole."""
    multiplier = round(1 / Fraction(divisor))  # exact: 1 / 5e-324 overflows a float
    if multiplier < 1:
        return False
    exact = Fraction(1, multiplier)
    error = (Fraction(divisor) - exact) / exact
    return (0 <= error <= Fraction(1, 2**54)) or abs(error) < Fraction(1, 2**55)


def integer_bounds(schema: dict[str, Any]) -> tuple[int | None, int | None]:
    """Inclusive integer bounds: the nearest integers inside (possibly fractional) limits."""
    low, low_exclusive, high, high_exclusive = bounds(schema)
    whole_low = whole_high = None
    if low is not None:
        whole_low = math.floor(low) + 1 if low_exclusive else math.ceil(low)
    if high is not None:
        whole_high = math.ceil(high) - 1 if high_exclusive else math.floor(high)
    return whole_low, whole_high


def bounds(schema: dict[str, Any]) -> tuple[float | None, bool, float | None, bool]:
    """(low, low exclusive, high, high exclusive), the tighter of each pair of keywords, from
    either draft: draft 4 writes `exclusiveMinimum: true` to make `minimum` itself exclusive."""
    low = high = None
    low_exclusive = high_exclusive = False
    if "minimum" in schema:
        low, low_exclusive = schema["minimum"], schema.get("exclusiveMinimum") is True
    if "maximum" in schema:
        high, high_exclusive = schema["maximum"], schema.get("exclusiveMaximum") is True
    exclusive_min, exclusive_max = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if exclusive_min is not None and not isinstance(exclusive_min, bool) and (low is None or exclusive_min >= low):
        low, low_exclusive = exclusive_min, True
    if exclusive_max is not None and not isinstance(exclusive_max, bool) and (high is None or exclusive_max <= high):
        high, high_exclusive = exclusive_max, True
    return low, low_exclusive, high, high_exclusive


def _decimal(bound: float | None) -> Decimal | None:
    """A JSON bound as the decimal it was written as (0.1 stays 0.1, not the nearest double)."""
    return None if bound is None else Decimal(repr(bound))


def _matches_nothing(node: Node) -> bool:
    """Whether a tree without machines matches no string (an empty alternation inside)."""
    if isinstance(node, Alt):
        return all(_matches_nothing(option) for option in node.options)
    if isinstance(node, Seq):
        return any(_matches_nothing(part) for part in node.parts)
    if isinstance(node, Repeat):
        return node.low > 0 and _matches_nothing(node.item)
    return isinstance(node, Chars) and not node.ranges


def _bound_keyword(schema: dict[str, Any]) -> str:
    """The keyword of the lower bound (else the upper), in the numeric form where present."""
    for keyword in ("exclusiveMinimum", "minimum", "exclusiveMaximum", "maximum"):
        if keyword in schema and not isinstance(schema[keyword], bool):
            return keyword
    return "minimum"


def _interval(schema: dict[str, Any]) -> str:
    """The bounds as an interval: `in (0, 1)`, `in [12345678901.5, ...)`."""
    low, low_exclusive, high, high_exclusive = bounds(schema)
    left = "(" if low is None or low_exclusive else "["
    right = ")" if high is None or high_exclusive else "]"
    return f"in {left}{'...' if low is None else repr(low)}, {'...' if high is None else repr(high)}{right}"
