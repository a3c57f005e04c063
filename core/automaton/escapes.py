"""Code-point ranges to the bytes of JSON's `\\u` escapes for them.

JSON may write any character of a string as `\\u` and four hex digits (either case), and a
character beyond U+FFFF as a surrogate pair (`\\ud83d\\ude00`). Serializers with ASCII output
do so for every character from U+007F up (Python's `json.dumps` by default), so a text they
wrote holds such escapes wherever the characters are. As for UTF-8 (core.automaton.utf8), a
range of code points becomes a few sequences of byte positions, each position a set of byte
ranges (a hex digit is `0-9`, `a-f` or `A-F`).
"""

from __future__ import annotations

from functools import lru_cache
from math import prod

from ..jsontext import MUST_ESCAPE, UNESCAPED_RANGES

# One byte position: the byte ranges allowed there.
BytePosition = tuple[tuple[int, int], ...]
# Code points a serializer with ASCII output writes as escapes: DEL and everything above.
FIRST_WIDE_ESCAPED = 0x7F

_SURROGATES = (0xD800, 0xDFFF)
_BMP_END = 0xFFFF
_LAST = 0x10FFFF
# A character beyond U+FFFF, less 0x10000, is 20 bits: the high surrogate carries the top 10
# (D800 + them: the hex digits `d`, 8 + 2 bits, 4 bits, 4 bits), the low surrogate the rest
# (DC00 + them: `d`, C + 2 bits, 4 bits, 4 bits).
_PAIR_RADICES = (4, 16, 16, 4, 16, 16)
_BACKSLASH_U: tuple[BytePosition, BytePosition] = (((0x5C, 0x5C),), ((0x75, 0x75),))
_LETTER_D: BytePosition = ((0x44, 0x44), (0x64, 0x64))


@lru_cache(maxsize=4096)
def hex_escape_sequences(low: int, high: int) -> tuple[tuple[BytePosition, ...], ...]:
    """The byte positions after `\\u` of every escape of a code point in [low, high]: four hex
    digits for a character up to U+FFFF (surrogates themselves left out: alone they are no
    character), a surrogate pair beyond (`d83d\\ude00`, the second `\\u` included). Cached: a
    character class comes back on edge after edge."""
    found: list[tuple[BytePosition, ...]] = []
    for part_low, part_high in ((low, min(high, _SURROGATES[0] - 1)), (max(low, _SURROGATES[1] + 1), min(high, _BMP_END))):
        if part_low <= part_high:
            for digits in digit_ranges(part_low, part_high, (16, 16, 16, 16)):
                found.append(tuple(_hex_position(first, last) for first, last in digits))
    if high > _BMP_END:
        pair_low, pair_high = max(low, _BMP_END + 1) - 0x10000, min(high, _LAST) - 0x10000
        if pair_low <= pair_high:
            for digits in digit_ranges(pair_low, pair_high, _PAIR_RADICES):
                (a, b), (c, d), (e, f), (g, h), (i, j), (k, m) = digits
                found.append(
                    (
                        _LETTER_D,
                        _hex_position(8 + a, 8 + b),
                        _hex_position(c, d),
                        _hex_position(e, f),
                        *_BACKSLASH_U,
                        _LETTER_D,
                        _hex_position(12 + g, 12 + h),
                        _hex_position(i, j),
                        _hex_position(k, m),
                    )
                )
    return tuple(found)


def digit_ranges(low: int, high: int, radices: tuple[int, ...]) -> list[list[tuple[int, int]]]:
    """[low, high] as sequences of per-digit ranges in the mixed radix `radices` (most
    significant first): every number in the range matches exactly one sequence."""
    if len(radices) == 1:
        return [[(low, high)]]
    rest = radices[1:]
    unit = prod(rest)
    first, last = low // unit, high // unit
    if first == last:
        return [[(first, first), *tail] for tail in digit_ranges(low % unit, high % unit, rest)]
    found: list[list[tuple[int, int]]] = []
    if low % unit:
        found += [[(first, first), *tail] for tail in digit_ranges(low % unit, unit - 1, rest)]
        first += 1
    ending: list[list[tuple[int, int]]] = []
    if high % unit != unit - 1:
        ending = [[(last, last), *tail] for tail in digit_ranges(0, high % unit, rest)]
        last -= 1
    if first <= last:
        found.append([(first, last), *((0, radix - 1) for radix in rest)])
    return found + ending


def _hex_position(first: int, last: int) -> BytePosition:
    """The bytes of a hex digit in [first, last]: `0-9`, and `A-F` and `a-f` (both cases)."""
    ranges: list[tuple[int, int]] = []
    if first <= 9:
        ranges.append((0x30 + first, 0x30 + min(last, 9)))
    if last >= 10:
        letter_low, letter_high = max(first, 10) - 10, last - 10
        ranges += [(0x41 + letter_low, 0x41 + letter_high), (0x61 + letter_low, 0x61 + letter_high)]
    return tuple(ranges)


SHORT_ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\", 0x08: b"\\b", 0x0C: b"\\f", 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t"}


def must_escape(low: int, high: int) -> list[int]:
    """The characters in [low, high] JSON must escape, ascending."""
    return [c for c in MUST_ESCAPE if low <= c <= high]


def escape_hex_sequences(low: int, high: int) -> list[tuple[BytePosition, ...]]:
    """The byte positions after `\\u` of every `\\u` escape of a character in [low, high]:
    those JSON must escape, and those from U+007F up (as serializers with ASCII output write)."""
    code_points = code_point_runs(must_escape(low, high))
    if high >= FIRST_WIDE_ESCAPED:
        code_points.append((max(low, FIRST_WIDE_ESCAPED), high))
    return [sequence for first, last in code_points for sequence in hex_escape_sequences(first, last)]


def escape_lengths(low: int, high: int) -> tuple[int, int] | None:
    """The fewest and the most bytes an escape of a character in [low, high] takes, backslash
    included (`\\n` 2, `\\u00e9` 6, a surrogate pair 12); None where none has one. Told from
    the range's bounds, without listing the escapes: each range of a key's name automaton asks
    it once per automaton."""
    short = any(low <= character <= high for character in SHORT_ESCAPES)
    # A `\\u` and four digits: a character JSON must escape, or one up to U+FFFF from U+007F up
    # but a surrogate (alone, no character); two of them: a character beyond U+FFFF.
    wide_low, wide_high = max(low, FIRST_WIDE_ESCAPED), min(high, _BMP_END)
    four = (
        any(first <= high and low <= last for first, last in _MUST_ESCAPE_RUNS)
        or wide_low <= min(wide_high, _SURROGATES[0] - 1)
        or max(wide_low, _SURROGATES[1] + 1) <= wide_high
    )
    pair = max(low, _BMP_END + 1) <= min(high, _LAST)
    if not (short or four or pair):
        return None
    return (2 if short else 6 if four else 12), (12 if pair else 6 if four else 2)


def code_point_runs(code_points: list[int]) -> list[tuple[int, int]]:
    """Sorted code points as ranges of consecutive ones."""
    runs: list[tuple[int, int]] = []
    for code_point in code_points:
        if runs and runs[-1][1] == code_point - 1:
            runs[-1] = (runs[-1][0], code_point)
        else:
            runs.append((code_point, code_point))
    return runs


# The characters JSON must escape, as ranges (escape_lengths tells a range's escapes by them).
_MUST_ESCAPE_RUNS = code_point_runs(sorted(MUST_ESCAPE))


def without_escaped(low: int, high: int) -> list[tuple[int, int]]:
    """[low, high] minus the characters JSON must escape, as ranges."""
    ranges: list[tuple[int, int]] = []
    for gap_low, gap_high in UNESCAPED_RANGES:
        if max(low, gap_low) <= min(high, gap_high):
            ranges.append((max(low, gap_low), min(high, gap_high)))
    return ranges
