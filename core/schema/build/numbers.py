"""Integers and numbers within bounds, and multiples of a divisor, as regex trees.

Bounds are exact where the generated digits reach them (see lexical/scalars.py), and do not restrict
beyond them (`maximum: 1e308`). Where the digits generated for a type cannot meet the bounds
at all, the refusal names that departure, never "no value satisfies": `minimum: 1e20` on
integers widens the digits instead; on numbers, whole numbers outside the decimal digits are
generated. Multiples of a whole divisor come from a remainder automaton (one state per
remainder, after the divisor's factors of 10), or are listed one by one when the bounds hold
few; 1/n divisors (0.01) divide every integer, and where no integer fits the bounds the
decimal multiples the validator itself accepts are listed.

Integers, multiples and exclusions are computed on canonical texts (`12`), and the other forms
of each value are added after (lexical/scalars.py's whole_spellings: `-0`, `12.0`), so a value excluded or
refused is so in every form. Whether `12.0` is an integer depends on the draft: jsonschema's
draft 4 type checker says no, later ones yes (whole_floats_are_integers).
"""

from __future__ import annotations

import json
import math
import weakref
from collections.abc import Callable, Hashable
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from typing import Any

import jsonschema
from jsonschema.validators import validator_for

from ...automaton.charnfa import AutomatonTooLarge, intersect, is_empty, machine_from_tree, multiple_machine
from ...automaton.excluded_words import excluding_machine
from ...automaton.regex import Alt, Chars, Machine, Node, Repeat, Seq, ValueLabel, alt, lit, mark, seq
from ...errors import SchemaError, UnsupportedSchema
from ...jsontext import join_pointer
from ..lexical.scalars import (
    BOUNDED_FRACTION_DIGITS,
    BOUNDED_INTEGER_DIGITS,
    decimal_spellings,
    generated_integers,
    integer_node,
    integer_range,
    number_node,
    number_range,
    range_spellings,
    whole_number_node,
    whole_spellings,
)
from ..nodes.schema_document import SchemaDocument
from ..nodes.schema_node import NumberNode, SchemaNode
from ..refusals import departure
from ..work_limits import MAX_DIVISOR_STATES, MAX_LISTED_MULTIPLES
from .protocol import Build

Accepts = Callable[[Any], bool]


def integer_tree(build: Build, node: SchemaNode) -> Node:
    """The integers `node` allows, without its excluded values, in every form the validator
    reads as an integer: `1.0` too after draft 4, whose type checker takes whole floats."""
    number = node.number or NumberNode(node.pointer, frozenset())
    if number.fraction:
        raise SchemaError(f"`not` at {node.pointer or '/'} excludes every integer the schema allows")
    banned = [json.dumps(int(value)) for value in node.excluded if _is_whole(value)]
    fractions = whole_floats_are_integers(build.document)
    key = ("integer", bounds(number), _typed(number.multiple_of), fractions, tuple(banned))
    tree = _kept(
        build, key, lambda: _relaxed(build, number, lambda current: integer_values(current, node.pointer, fractions, banned))
    )
    return seq(mark(ValueLabel(node.pointer, "integer", node.grounded)), tree)  # where grounding holds it


def number_tree(build: Build, node: SchemaNode) -> Node:
    """The numbers `node` allows (excluded numbers are refused before this is called)."""
    number = node.number or NumberNode(node.pointer, frozenset())
    asked: list[Any] = []  # the values the validator was asked of: a tree listing them is this node's own

    def accepts(value: Any) -> bool:
        asked.append(value)
        return bool(build.accepts(node, value))

    key = ("number", bounds(number), _typed(number.multiple_of), number.fraction)
    return seq(
        mark(ValueLabel(node.pointer, "number", node.grounded)),  # where grounding holds it
        _kept(build, key, lambda: _numbers(build, node, number, accepts), keep=lambda: not asked),
    )


def _numbers(build: Build, node: SchemaNode, number: NumberNode, accepts: Accepts) -> Node:
    """number_tree's values, without the mark."""
    tree = _relaxed(build, number, lambda current: number_values(current, node.pointer, accepts))
    if number.fraction:
        whole_multiples = number.multiple_of is not None and not float(number.multiple_of).is_integer()
        try:
            tree = _non_integral(tree, node.pointer)
        except SchemaError:
            if not whole_multiples:
                raise
            # A fractional multipleOf is generated as its whole multiples (a subset): none is
            # left that is no integer, though the schema allows some. Refused by name.
            reason = "numbers that are no integer beside a fractional multipleOf (written as its whole multiples)"
            build.refuse("not", node.pointer, reason)
    return tree


def _kept(build: Build, key: Hashable, make: Callable[[], Node], keep: Callable[[], bool] = lambda: True) -> Node:
    """`make()`, memoised by `key` (the contents of a number's keywords: a bound or multipleOf
    written in many places costs one automaton), unless it refused a keyword (so each place
    lists its own refusals) or `keep()` says the tree is this place's own."""
    found = build.numbers.get(key)
    if found is None:
        refusals = len(build.document.refusals.found)
        found = make()
        if len(build.document.refusals.found) == refusals and keep():
            build.numbers[key] = found
    return found


def _typed(value: int | float | None) -> tuple[str, int | float | None]:
    """A keyword's number with its type: 12 and 12.0 may be read apart (1 == 1.0 as keys)."""
    return type(value).__name__, value


# Numbers that are no integer, written without exponent: a nonzero digit after the point.
_FRACTION = seq(
    alt(lit("-"), Seq(())),
    alt(lit("0"), seq(Chars(((0x31, 0x39),)), Repeat(Chars(((0x30, 0x39),)), 0, None))),
    lit("."),
    Repeat(Chars(((0x30, 0x39),)), 0, None),
    Chars(((0x31, 0x39),)),
    Repeat(Chars(((0x30, 0x39),)), 0, None),
)


def _non_integral(tree: Node, pointer: str) -> Node:
    """The texts of `tree` that are no integer, without exponent (a subset of the non-integral
    numbers: `1.5e1` is left out with `1.5e-1`)."""
    try:
        found = intersect(machine_from_tree(tree), machine_from_tree(_FRACTION))
    except AutomatonTooLarge:
        raise SchemaError(f"the numbers that are no integer at {pointer or '/'} need too large an automaton") from None
    if is_empty(found):
        raise SchemaError(f"`not` at {pointer or '/'} excludes every number the schema allows")
    return found


_WHOLE_FLOATS: weakref.WeakKeyDictionary[SchemaDocument, bool] = weakref.WeakKeyDictionary()


def whole_floats_are_integers(document: SchemaDocument) -> bool:
    """Whether every validator of the schema reads `1.0` as an integer: the drafts after 4 do,
    draft 4's type checker does not. A subschema declaring its own `$schema` is validated
    under that draft, so one naming draft 3 or 4 anywhere keeps integers to `1` (found once
    per document)."""
    known = _WHOLE_FLOATS.get(document)
    if known is None:
        known = _WHOLE_FLOATS[document] = not document.draft4 and not _declares_draft4(document.root)
    return known


def integer_readings_agree(document: SchemaDocument) -> bool:
    """Whether the root's validator reads `1.0` as an integer exactly where the validator of
    each subschema does: all after draft 4, or a draft 4 root (whose stricter reading keeps
    `1.0` out wherever it decides, so a later draft inside only accepts more)."""
    return document.draft4 or whole_floats_are_integers(document)


def _declares_draft4(root: Any) -> bool:
    """Whether any object in `root` has a `$schema` naming draft 3 or 4 (iterative)."""
    stack = [root]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            declared = value.get("$schema")
            if isinstance(declared, str) and validator_for(value, default=jsonschema.Draft202012Validator) in _NO_WHOLE_FLOATS:
                return True
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


_NO_WHOLE_FLOATS = (jsonschema.Draft3Validator, jsonschema.Draft4Validator)


def _relaxed(build: Build, number: NumberNode, values: Callable[[NumberNode], Node]) -> Node:
    """`values(number)`; a refused multipleOf (the only keyword refused here) is refused by
    name, and when lenient left out."""
    try:
        return values(number)
    except UnsupportedSchema as refusal:
        build.document.refusals.refuse(refusal)
        return values(replace(number, multiple_of=None))


def _is_whole(value: Any) -> bool:
    """A JSON number equal to an integer (1 and 1.0 alike), not a boolean."""
    return isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer()


def integer_values(number: NumberNode, pointer: str, fractions: bool, banned: list[str] | None = None) -> Node:
    """The integers `number`'s bounds and multipleOf allow, but the canonical texts `banned`,
    in every form (see whole_spellings; `fractions`: a zero fraction too). Unbounded, they
    take an exponent as well where `fractions` (`1e2`)."""
    low, high = integer_bounds(number)
    if low is not None and high is not None and low > high:
        raise SchemaError(f"no integer satisfies the bounds at {pointer or '/'}")
    plain = low is None and high is None
    if number.multiple_of is None and plain and fractions and not banned:
        return whole_number_node()
    if number.multiple_of is None and not banned:
        return range_spellings(low, high, fractions)
    if number.multiple_of is not None:
        canonical = _multiples(low, high, number.multiple_of, join_pointer(pointer, "multipleOf"))
    else:
        canonical = integer_node() if plain else integer_range(low, high)
    if banned:
        canonical = intersect(
            canonical if isinstance(canonical, Machine) else machine_from_tree(canonical), excluding_machine(banned)
        )
        if is_empty(canonical):
            raise SchemaError(f"`not` at {pointer or '/'} excludes every value the schema allows")
    return whole_spellings(canonical, fractions)


def number_values(number: NumberNode, pointer: str, accepts: Accepts) -> Node:
    """The numbers `number`'s bounds and multipleOf allow. `accepts` is the validator's
    verdict on a value (for listed decimal multiples)."""
    low, low_exclusive, high, high_exclusive = bounds(number)
    if low is not None and high is not None and (low > high or (low == high and (low_exclusive or high_exclusive))):
        raise SchemaError(f"no number satisfies the bounds at {pointer or '/'}")
    if number.multiple_of is not None:
        return _number_multiples(number, pointer, accepts)
    if low is None and high is None:
        return number_node()
    node = number_range(_decimal(low), _decimal(high), low_exclusive, high_exclusive)
    if not _matches_nothing(node):
        return node
    whole_low, whole_high = integer_bounds(number)
    if whole_low is None or whole_high is None or whole_low <= whole_high:
        # Beyond the decimal digits (minimum 12345678901.5): whole numbers, without exponent.
        return range_spellings(whole_low, whole_high, fractions=True)
    bound = number.minimum or number.maximum
    assert bound is not None  # both exist: no whole number lies between them
    raise departure(
        bound.keyword,
        bound.pointer,
        f"numbers with bounds are generated with at most {BOUNDED_INTEGER_DIGITS} integer and"
        f" {BOUNDED_FRACTION_DIGITS} fraction digits, and none of those lies {_interval(number)}",
    )


def _number_multiples(number: NumberNode, pointer: str, accepts: Accepts) -> Node:
    """Whole multiples (see integer_values); for a fractional divisor with no whole number
    within the bounds, the decimal multiples there that the validator accepts."""
    divisor = number.multiple_of
    low, high = integer_bounds(number)
    whole_fits = low is None or high is None or low <= high
    if whole_fits or not isinstance(divisor, float) or divisor.is_integer():
        return integer_values(number, pointer, fractions=True)
    texts = _decimal_multiples(number, Decimal(repr(divisor)), join_pointer(pointer, "multipleOf"))
    kept = [text for text in texts if accepts(json.loads(text))]
    if not kept:
        raise departure(
            "multipleOf",
            join_pointer(pointer, "multipleOf"),
            f"multipleOf {divisor!r} on numbers is generated as whole numbers, or as decimals the validator's float"
            f" division accepts; none of those lies {_interval(number)}",
        )
    return alt(*(decimal_spellings(text) for text in kept))


def _decimal_multiples(number: NumberNode, step: Decimal, pointer: str) -> list[str]:
    """Texts of the multiples k * step within the (finite) bounds, refused beyond
    MAX_LISTED_MULTIPLES of them."""
    low, low_exclusive, high, high_exclusive = bounds(number)
    assert low is not None and high is not None  # no whole number fits, so both bounds exist
    first = math.ceil(Fraction(repr(low)) / Fraction(step))
    last = math.floor(Fraction(repr(high)) / Fraction(step))
    count = last - first + 1
    if count > MAX_LISTED_MULTIPLES:
        raise departure(
            "multipleOf",
            pointer,
            f"no whole number lies {_interval(number)}, and the {count} decimal multiples there are more than the"
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


def integer_bounds(number: NumberNode) -> tuple[int | None, int | None]:
    """Inclusive integer bounds: the nearest integers inside (possibly fractional) limits."""
    low, low_exclusive, high, high_exclusive = bounds(number)
    whole_low = whole_high = None
    if low is not None:
        whole_low = math.floor(low) + 1 if low_exclusive else math.ceil(low)
    if high is not None:
        whole_high = math.ceil(high) - 1 if high_exclusive else math.floor(high)
    return whole_low, whole_high


def bounds(number: NumberNode) -> tuple[float | None, bool, float | None, bool]:
    """(low, low exclusive, high, high exclusive)."""
    low, high = number.minimum, number.maximum
    return (
        None if low is None else low.value,
        low is not None and low.exclusive,
        None if high is None else high.value,
        high is not None and high.exclusive,
    )


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


def _interval(number: NumberNode) -> str:
    """The bounds as an interval: `in (0, 1)`, `in [12345678901.5, ...)`."""
    low, low_exclusive, high, high_exclusive = bounds(number)
    left = "(" if low is None or low_exclusive else "["
    right = ")" if high is None or high_exclusive else "]"
    return f"in {left}{'...' if low is None else repr(low)}, {'...' if high is None else repr(high)}{right}"
