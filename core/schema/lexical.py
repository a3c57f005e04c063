"""Regex trees for JSON's lexical pieces: string characters, numbers, integer ranges.

Numbers are written in a shortest form: no leading zeros, no trailing zeros in a fraction, no
`+`, no `-0`, so a model cannot pad a value with digits that do not change it. Digit counts
are bounded (see the README's departures) so a model can never spin digits forever; the
bounds are far beyond values found in documents. A model that writes a zero the shortest form
forbids at the end of a fraction (`559.40`) is not forced into another digit: the decoder holds
such zeros back and drops them when the number ends (core.held_zeros).
"""

from __future__ import annotations

import json
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

from ..automaton.regex import (
    EMPTY,
    Node,
    Repeat,
    Text,
    TextLabel,
    alt,
    chars,
    lit,
    optional,
    seq,
)

MAX_INTEGER_DIGITS = 19
MAX_FRACTION_DIGITS = 17
MAX_EXPONENT_DIGITS = 2

DIGIT = chars((0x30, 0x39))
NONZERO_DIGIT = chars((0x31, 0x39))
QUOTE = lit('"')


def json_text(value: Any) -> str:
    """`value` as compact JSON text, characters written as themselves; a value holding a lone
    surrogate (`"\\ud800"`, which UTF-8 cannot encode) is written with `\\u` escapes instead,
    which every JSON parser reads back as the same string."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value)
    return text


def string_node(min_length: int = 0, max_length: int | None = None, label: TextLabel | None = None) -> Node:
    """A JSON string literal whose decoded length lies in [min_length, max_length]; `label`
    marks a plain string value's body (see TextLabel)."""
    return seq(QUOTE, Text(min_length, max_length, label), QUOTE)


def unsigned_digits() -> Node:
    """0 or a positive integer without leading zeros, at most MAX_INTEGER_DIGITS digits."""
    return alt(lit("0"), seq(NONZERO_DIGIT, Repeat(DIGIT, 0, MAX_INTEGER_DIGITS - 1)))


def integer_node() -> Node:
    return alt(lit("0"), seq(optional(lit("-")), NONZERO_DIGIT, Repeat(DIGIT, 0, MAX_INTEGER_DIGITS - 1)))


def number_node() -> Node:
    """JSON numbers in a shortest form, so that no digit can be added without changing the
    value: `0`, or an optional `-` and either a plain decimal (`12`, `10.5`, `0.25`; no
    leading zeros, a fraction ends in a nonzero digit) or scientific notation with one nonzero
    digit before the point (`1e5`, `2.5e-7`; a lower-case `e`, an exponent without `+`, leading
    zeros or the value 0). No `-0`, `1.50`, `007`, `1E+05` or `10e1`."""
    fraction = seq(lit("."), Repeat(DIGIT, 0, MAX_FRACTION_DIGITS - 1), NONZERO_DIGIT)
    whole = seq(NONZERO_DIGIT, Repeat(DIGIT, 0, MAX_INTEGER_DIGITS - 1))
    plain = alt(seq(whole, optional(fraction)), seq(lit("0"), fraction))
    exponent = seq(lit("e"), optional(lit("-")), NONZERO_DIGIT, Repeat(DIGIT, 0, MAX_EXPONENT_DIGITS - 1))
    scientific = seq(NONZERO_DIGIT, optional(fraction), exponent)
    return alt(lit("0"), seq(optional(lit("-")), alt(plain, scientific)))


def generated_integers(low: int | None, high: int | None) -> tuple[int, int]:
    """The integers generated within [low, high] (None: unbounded), as an inclusive range:
    those of at most MAX_INTEGER_DIGITS digits; where none of those lies within the bounds
    (`minimum: 1e20`), those with as many digits as the bound nearest zero."""
    limit = 10**MAX_INTEGER_DIGITS - 1
    if low is not None and low > limit:
        limit = 10 ** len(str(low)) - 1
    elif high is not None and high < -limit:
        limit = 10 ** len(str(-high)) - 1
    return (-limit if low is None else max(low, -limit)), (limit if high is None else min(high, limit))


def integer_range(low: int | None, high: int | None) -> Node:
    """Integers n with low <= n <= high (None: unbounded), in canonical decimal form; see
    generated_integers for the digits written."""
    low, high = generated_integers(low, high)
    options: list[Node] = []
    if low < 0:
        options.append(seq(lit("-"), _positive_range(max(1, -high), -low)))
    if low <= 0 <= high:
        options.append(lit("0"))
    if high > 0:
        options.append(_positive_range(max(1, low), high))
    return alt(*options) if options else alt()


def _positive_range(low: int, high: int) -> Node:
    """Positive integers in [low, high], split into runs of equal digit count."""
    if low > high:
        return alt()
    options: list[Node] = []
    while low <= high:
        width = len(str(low))
        top = min(high, 10**width - 1)
        options.append(_same_width_range(str(low), str(top)))
        low = top + 1
    return alt(*options)


def _same_width_range(low: str, high: str) -> Node:
    """Digit strings d with low <= d <= high, all of the same width."""
    if len(low) == 1:
        return chars((ord(low), ord(high)))
    if low[0] == high[0]:
        return seq(lit(low[0]), _same_width_range(low[1:], high[1:]))
    rest = len(low) - 1
    options: list[Node] = []
    low_full = low[1:] == "0" * rest
    high_full = high[1:] == "9" * rest
    first_full = low[0] if low_full else chr(ord(low[0]) + 1)
    last_full = high[0] if high_full else chr(ord(high[0]) - 1)
    if not low_full:
        options.append(seq(lit(low[0]), _same_width_range(low[1:], "9" * rest)))
    if first_full <= last_full:
        options.append(seq(chars((ord(first_full), ord(last_full))), Repeat(DIGIT, rest, rest)))
    if not high_full:
        options.append(seq(lit(high[0]), _same_width_range("0" * rest, high[1:])))
    return alt(*options)


# Bounded numbers keep at most 15 significant digits, so parsing them as doubles preserves
# their order against integer bounds (DBL_DIG is 15): the validator then agrees with the automaton.
BOUNDED_INTEGER_DIGITS = 10
BOUNDED_FRACTION_DIGITS = 5


def number_range(low: Decimal | None, high: Decimal | None, low_exclusive: bool, high_exclusive: bool) -> Node:
    """Decimal numbers x within the bounds, e.g. 0 <= x < 99.95, written without exponent and
    without trailing zeros in a fraction (`10.5`, never `10.50` or `10.0`).

    Bounds with more than BOUNDED_FRACTION_DIGITS fraction digits are rounded inward (a
    subset of the allowed numbers); the others are exact. Bounds beyond the generated digits
    (`maximum: 1e308`) do not restrict; an empty tree means no number with these digits fits."""
    beyond = Decimal(10**BOUNDED_INTEGER_DIGITS)  # no generated magnitude reaches it
    if (low is not None and low >= beyond) or (high is not None and high <= -beyond):
        return alt()
    high = None if high is not None and high >= beyond else high
    low = None if low is not None and low <= -beyond else low
    if low is not None:
        low, low_exclusive = _rounded(low, low_exclusive, up=True)
    if high is not None:
        high, high_exclusive = _rounded(high, high_exclusive, up=False)
    limit = BOUNDED_LIMIT
    options: list[Node] = []
    if high is None or high > 0 or (high == 0 and not high_exclusive):
        # x >= 0: magnitude in [max(low, 0), high]; "0" itself only where 0 is allowed.
        start, start_exclusive = (Decimal(0), False) if low is None or low < 0 else (low, low_exclusive)
        options.append(_magnitude_range(start, start_exclusive, limit if high is None else min(high, limit), high_exclusive))
    if low is None or low < 0:
        # x = -m < 0: m in (max(-high, 0), -low], never zero.
        floor, floor_exclusive = (Decimal(0), True) if high is None or high >= 0 else (-high, high_exclusive)
        top = limit if low is None else min(-low, limit)
        options.append(seq(lit("-"), _magnitude_range(floor, floor_exclusive, top, low_exclusive)))
    return alt(*options)


_SCALE = 10**BOUNDED_FRACTION_DIGITS
BOUNDED_LIMIT = Decimal(10**BOUNDED_INTEGER_DIGITS - 1)  # the integer part's largest value


def _rounded(bound: Decimal, exclusive: bool, up: bool) -> tuple[Decimal, bool]:
    """`bound` on the grid of BOUNDED_FRACTION_DIGITS digits, moved inward if it is off it."""
    on_grid = bound.quantize(Decimal(1) / _SCALE, rounding=ROUND_CEILING if up else ROUND_FLOOR)
    return (on_grid, exclusive) if on_grid == bound else (on_grid, False)


def _magnitude_range(low: Decimal, low_exclusive: bool, high: Decimal, high_exclusive: bool) -> Node:
    """Unsigned decimals m = I[.F] with low (<|<=) m (<|<=) high, I and F digit-bounded.

    Works on the integer part first: parts strictly inside take any fraction, and the
    fraction of a part equal to a bound's is compared digit-wise with that bound's."""
    low_int, high_int = int(low), int(high)  # both non-negative: int() truncates to the floor
    low_frac, high_frac = int((low - low_int) * _SCALE), int((high - high_int) * _SCALE)
    top = _SCALE - 1
    options: list[Node | None] = []
    if low_int + 1 <= high_int - 1:
        options.append(_with_fraction(low_int + 1, _fraction_between(0, top), high_int - 1))
    if low_int < high_int:
        options.append(_with_fraction(low_int, _fraction_between(low_frac + low_exclusive, top)))
        options.append(_with_fraction(high_int, _fraction_between(0, high_frac - high_exclusive)))
    elif low_int == high_int:
        options.append(_with_fraction(low_int, _fraction_between(low_frac + low_exclusive, high_frac - high_exclusive)))
    return alt(*(o for o in options if o is not None))


def _with_fraction(whole: int, fraction: Node | None, last_whole: int | None = None) -> Node | None:
    """Integer parts from `whole` to `last_whole` (default: just `whole`), then `fraction`."""
    return None if fraction is None else seq(integer_range(whole, whole if last_whole is None else last_whole), fraction)


def _fraction_between(low: int, high: int) -> Node | None:
    """An optional `.digits` part (1 to BOUNDED_FRACTION_DIGITS digits, the last one nonzero,
    so no fraction is padded with zeros) whose value, scaled to BOUNDED_FRACTION_DIGITS
    digits, lies in [low, high]; None when there is none. Each value has one spelling: no
    fraction for 0, else the digits without their trailing zeros."""
    if low > high:
        return None
    options: list[Node] = [EMPTY] if low <= 0 else []
    for width in range(1, BOUNDED_FRACTION_DIGITS + 1):
        step = 10 ** (BOUNDED_FRACTION_DIGITS - width)
        first, last = -(-low // step), high // step  # digits F with low <= F * step <= high
        digits = _nonzero_ending_range(first, last, width)
        if digits is not None:
            options.append(seq(lit("."), digits))
    return alt(*options) if options else None


def _nonzero_ending_range(first: int, last: int, width: int) -> Node | None:
    """The `width`-digit strings (zero-filled) of the numbers in [first, last] that do not end
    in 0; None when there are none."""
    if first > last:
        return None
    head_first, digit_first = divmod(first, 10)
    head_last, digit_last = divmod(last, 10)
    digit_first = max(digit_first, 1)

    def ending(head_low: int, head_high: int, low: int, high: int) -> Node | None:
        if head_low > head_high or low > high:
            return None
        last_digit = chars((ord(str(low)), ord(str(high))))
        if width == 1:
            return last_digit
        return seq(_same_width_range(str(head_low).zfill(width - 1), str(head_high).zfill(width - 1)), last_digit)

    if head_first == head_last:
        parts = [ending(head_first, head_first, digit_first, digit_last)]
    else:
        parts = [
            ending(head_first, head_first, digit_first, 9),
            ending(head_first + 1, head_last - 1, 1, 9),
            ending(head_last, head_last, 1, digit_last),
        ]
    kept = [part for part in parts if part is not None]
    return alt(*kept) if kept else None
