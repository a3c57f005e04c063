"""Regex trees for JSON's lexical pieces: string characters, numbers, integer ranges.

Every JSON number text is accepted wherever the schema accepts its value: `1.0` and `1.00`
as well as `1`, `-0`, `1E+05`, `2.5e-07` (the form Python's json.dumps writes for 2.5e-7).
Numbers with bounds, and whole numbers listed by a multipleOf, are written without exponent,
and whole numbers there take a zero fraction (`12.0`) only up to EXACT_WHOLE_DIGITS digits,
the integers a double still holds exactly. Digit counts are bounded (see the departures in
docs/schema-support.md) so a model can never spin digits forever: integer digits, fraction digits
(trailing zeros counted) and exponent digits (leading zeros counted); the bounds are far
beyond values found in documents. A short form is the decoder's preference, not the
automaton's (core.decode.held_zeros).
"""

from __future__ import annotations

import functools
import json
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

from ...automaton.charnfa import intersect, is_empty, machine_from_tree
from ...automaton.regex import (
    Machine,
    Node,
    Repeat,
    Text,
    TextLabel,
    alt,
    char_set,
    chars,
    lit,
    optional,
    seq,
)

MAX_INTEGER_DIGITS = 19
MAX_FRACTION_DIGITS = 17
MAX_EXPONENT_DIGITS = 3
# The largest exponent written (either sign): 19 integer digits times 10**288 stay below the
# largest double (1.8e308), so no number written reads as infinity.
MAX_EXPONENT = 288
# Whole numbers within bounds or listed by a multipleOf take a zero fraction (`12.0`) up to
# this many digits: a double holds every integer up to 2**53 (16 digits) exactly, so the
# validator, reading `12.0` as a float, compares and divides the same value as for `12`.
EXACT_WHOLE_DIGITS = 15

DIGIT = chars((0x30, 0x39))
NONZERO_DIGIT = chars((0x31, 0x39))
QUOTE = lit('"')
# A fraction of zeros, which leaves a number's value as it was: `.0`, `.000`.
ZERO_FRACTION = seq(lit("."), Repeat(lit("0"), 1, MAX_FRACTION_DIGITS))
EXPONENT_MARK = char_set("Ee")


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


@functools.cache
def integer_node() -> Node:
    """Integers in canonical form (`0`, `-12`; no `-0`, no leading zeros): what multipleOf
    and exclusions are computed on, before whole_spellings adds the other forms."""
    return alt(lit("0"), seq(optional(lit("-")), NONZERO_DIGIT, Repeat(DIGIT, 0, MAX_INTEGER_DIGITS - 1)))


def _integer_digits() -> Node:
    """0 or digits without a leading zero, at most MAX_INTEGER_DIGITS of them."""
    return alt(lit("0"), seq(NONZERO_DIGIT, Repeat(DIGIT, 0, MAX_INTEGER_DIGITS - 1)))


@functools.cache
def number_node() -> Node:
    """Every JSON number text within the digit limits: an optional `-`, integer digits without
    a leading zero, an optional fraction (trailing zeros allowed), an optional exponent (`e`
    or `E`, an optional sign, leading zeros allowed, up to MAX_EXPONENT): `-0`, `1.50`,
    `1E+05`, `0.0e0`, `9.5e+102`."""
    fraction = seq(lit("."), Repeat(DIGIT, 1, MAX_FRACTION_DIGITS))
    exponent = seq(EXPONENT_MARK, optional(char_set("+-")), _exponent_digits(0, None))
    return seq(optional(lit("-")), _integer_digits(), optional(fraction), optional(exponent))


@functools.cache
def whole_number_node() -> Node:
    """The texts of number_node whose value is whole, an integer in the drafts after 4: `1`,
    `-0`, `1.0`, `1e2`, `2.5e1`, `1.2345678901234567e+19` (a fraction's digits past the
    exponent's value are zeros), `0.0e-7`. A negative exponent is taken only by zero (`0e-5`)
    or with the value 0 (`5e-0`): `100e-2`, whole as well, is not written."""
    sign = optional(lit("-"))
    endings: list[Node] = [optional(ZERO_FRACTION), seq(optional(ZERO_FRACTION), EXPONENT_MARK, lit("-"), _exponent_digits(0, 0))]
    for shift in range(MAX_FRACTION_DIGITS + 1):  # a positive exponent of `shift` (at least, for the last)
        fraction = seq(lit("."), _fraction_zeros_after(shift))
        exponent = _exponent_digits(shift, None if shift == MAX_FRACTION_DIGITS else shift)
        endings.append(seq(optional(fraction), EXPONENT_MARK, optional(lit("+")), exponent))
    zero = seq(lit("0"), optional(ZERO_FRACTION), EXPONENT_MARK, optional(char_set("+-")), _exponent_digits(0, None))
    return seq(sign, alt(seq(_integer_digits(), alt(*endings)), zero))


def _fraction_zeros_after(shift: int) -> Node:
    """1 to MAX_FRACTION_DIGITS fraction digits, those after the first `shift` all zeros."""
    if shift == 0:
        return Repeat(lit("0"), 1, MAX_FRACTION_DIGITS)
    return seq(Repeat(DIGIT, 1, shift), Repeat(lit("0"), 0, MAX_FRACTION_DIGITS - shift))


def _exponent_digits(low: int, high: int | None) -> Node:
    """Exponent digits (at most MAX_EXPONENT_DIGITS, leading zeros allowed) of a value in
    [low, high] (None: up to MAX_EXPONENT)."""
    top = MAX_EXPONENT if high is None else high
    options: list[Node] = []
    for width in range(1, MAX_EXPONENT_DIGITS + 1):
        first, last = max(low, 10 ** (width - 1) if width > 1 else 0), min(top, 10**width - 1)
        if first <= last:
            padding = Repeat(lit("0"), 0, MAX_EXPONENT_DIGITS - width)
            options.append(seq(padding, _same_width_range(str(first), str(last))))
    return alt(*options)


@functools.lru_cache(maxsize=512)
def range_spellings(low: int | None, high: int | None, fractions: bool) -> Node:
    """integer_range(low, high) in every form whole_spellings gives, built as trees (no
    machine products, as for any integer with bounds). Kept per bounds, as number_range."""
    options = [integer_node() if low is None and high is None else integer_range(low, high)]
    exact = 10**EXACT_WHOLE_DIGITS - 1
    short_low, short_high = max(-exact, -exact if low is None else low), min(exact, exact if high is None else high)
    if fractions and short_low <= short_high:
        options.append(seq(integer_range(short_low, short_high), ZERO_FRACTION))
    if (low is None or low <= 0) and (high is None or high >= 0):
        options.append(seq(lit("-0"), optional(ZERO_FRACTION)) if fractions else lit("-0"))
    return alt(*options)


def whole_spellings(canonical: Node, fractions: bool) -> Node:
    """The integers of `canonical` (canonical texts) in every form the validator reads as the
    same value: `-0` where 0 is one of them, and with `fractions` (a drafts-after-4 integer,
    or a number) a zero fraction (`12.0`) on those of at most EXACT_WHOLE_DIGITS digits."""
    machine = canonical if isinstance(canonical, Machine) else machine_from_tree(canonical)
    options = [canonical]
    if fractions:
        exact = intersect(machine, _exact_whole())
        if not is_empty(exact):
            options.append(seq(exact, ZERO_FRACTION))
    if not is_empty(intersect(machine, machine_from_tree(lit("0")))):
        options.append(seq(lit("-0"), optional(ZERO_FRACTION)) if fractions else lit("-0"))
    return alt(*options)


def listed_number(value: float, as_int: bool, as_float: bool) -> Node:
    """A number listed by enum/const, in the forms that read as the same value: its JSON text
    and that text with trailing fraction zeros (`2.50`); a whole value of at most
    EXACT_WHOLE_DIGITS digits as an integer (`2`, `-0` for 0) where `as_int`, and with a zero
    fraction (`2.0`) where `as_float`: where the validator accepts the value as that type."""
    text = json_text(value)
    if not (float(value).is_integer() and abs(value) < 10**EXACT_WHOLE_DIGITS):
        return decimal_spellings(text) if "e" not in text else lit(text)
    digits = str(abs(int(value)))
    options: list[Node] = [lit(text)]
    for signed in [digits, "-" + digits] if value == 0 else [text.split(".")[0]]:
        options += [lit(signed)] if as_int else []
        options += [seq(lit(signed), ZERO_FRACTION)] if as_float else []
    return alt(*options)


def decimal_spellings(text: str) -> Node:
    """A plain decimal `text` (no exponent, no trailing fraction zeros: `2.5`, `3`) and the
    forms with trailing fraction zeros (`2.50`, `3.0`), up to MAX_FRACTION_DIGITS digits."""
    if "." not in text:
        return whole_spellings(lit(text), fractions=True)
    return seq(lit(text), Repeat(lit("0"), 0, MAX_FRACTION_DIGITS - len(text.split(".")[1])))


@functools.cache
def _exact_whole() -> Machine:
    """Integers of at most EXACT_WHOLE_DIGITS digits (built once, on first use)."""
    return machine_from_tree(seq(optional(lit("-")), Repeat(DIGIT, 1, EXACT_WHOLE_DIGITS)))


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


@functools.lru_cache(maxsize=512)
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
# Zeros that may follow a bounded number's significant fraction digits (`0.50`), so that no
# fraction is longer than MAX_FRACTION_DIGITS.
BOUNDED_TRAILING_ZEROS = MAX_FRACTION_DIGITS - BOUNDED_FRACTION_DIGITS


@functools.lru_cache(maxsize=512)
def number_range(low: Decimal | None, high: Decimal | None, low_exclusive: bool, high_exclusive: bool) -> Node:
    """Decimal numbers x within the bounds, e.g. 0 <= x < 99.95, written without exponent, with
    at most BOUNDED_FRACTION_DIGITS fraction digits before the trailing zeros (`10.5`,
    `10.50`, `10.0`, `10`), and `-0` where 0 is within them.

    Bounds with more than BOUNDED_FRACTION_DIGITS fraction digits are rounded inward (a
    subset of the allowed numbers); the others are exact. Bounds beyond the generated digits
    (`maximum: 1e308`) do not restrict; an empty tree means no number with these digits fits.

    Kept per bounds (the tree depends on their values only, and a tree never changes): API
    schemas repeat one range on dozens of properties (`minimum: 0, maximum: 99999999999.99`),
    and a tree shared is also measured once (automaton/measure.py)."""
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
    above = low is None or low < 0 or (low == 0 and not low_exclusive)
    if above and (high is None or high > 0 or (high == 0 and not high_exclusive)):
        options.append(seq(lit("-0"), optional(ZERO_FRACTION)))  # 0, which the magnitudes above write unsigned
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
    """An optional `.digits` part whose value, scaled to BOUNDED_FRACTION_DIGITS digits, lies
    in [low, high]; None when there is none. Its significant digits (1 to
    BOUNDED_FRACTION_DIGITS, the last one nonzero) may be followed by up to
    BOUNDED_TRAILING_ZEROS zeros; a value of 0 is no fraction, or one of zeros."""
    if low > high:
        return None
    options: list[Node] = [optional(ZERO_FRACTION)] if low <= 0 else []
    significant: list[Node] = []
    for width in range(1, BOUNDED_FRACTION_DIGITS + 1):
        step = 10 ** (BOUNDED_FRACTION_DIGITS - width)
        first, last = -(-low // step), high // step  # digits F with low <= F * step <= high
        digits = _nonzero_ending_range(first, last, width)
        if digits is not None:
            significant.append(digits)
    if significant:
        options.append(seq(lit("."), alt(*significant), Repeat(lit("0"), 0, BOUNDED_TRAILING_ZEROS)))
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
