"""Sets of code points one position of a `pattern` may take, sound under both engines it is read by
(ECMA-262 without the `u` flag, and Python's `re`; see pattern.py): inclusive ranges and their
set operations, the class escapes `\\d \\w \\s` and their negations, and `.`.

Every set for one pattern position stays inside the Basic Multilingual Plane (BMP), surrogates
excluded: without the `u` flag ECMA-262 matches UTF-16 code units (pattern.py says why).
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from dataclasses import dataclass

from ...automaton.regex import Chars, Node, Repeat

Ranges = tuple[tuple[int, int], ...]

MAX_CODE_POINT = 0x10FFFF
UNIVERSE: Ranges = ((0, 0xD7FF), (0xE000, MAX_CODE_POINT))  # every code point except surrogates
BMP: Ranges = ((0, 0xD7FF), (0xE000, 0xFFFF))  # one UTF-16 code unit, surrogates excluded


# --- code point range sets ---------------------------------------------------------------


def normalize(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sort and merge overlapping or adjacent inclusive ranges."""
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return tuple(merged)


def intersect(a: Ranges, b: Ranges) -> Ranges:
    """Intersection of two normalized range sets."""
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        low, high = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if low <= high:
            out.append((low, high))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def complement(ranges: Ranges) -> Ranges:
    """All code points (surrogates excluded) outside a normalized range set."""
    gaps: list[tuple[int, int]] = []
    start = 0
    for low, high in ranges:
        if low > start:
            gaps.append((start, low - 1))
        start = high + 1
    if start <= MAX_CODE_POINT:
        gaps.append((start, MAX_CODE_POINT))
    return intersect(tuple(gaps), UNIVERSE)


def points(text: str) -> Ranges:
    return normalize((ord(c), ord(c)) for c in text)


# --- class escapes -------------------------------------------------------------------------


@dataclass(frozen=True)
class ClassSet:
    """What a class member matches: `sure` under both engines, `maybe` under at least one.

    A positive class uses the union of `sure` sets; a negated class the complement of the union
    of `maybe` sets. Both are then sound for either engine."""

    sure: Ranges
    maybe: Ranges


def exact(ranges: Ranges) -> ClassSet:
    return ClassSet(ranges, ranges)


def _escape_pair(sure: Ranges, maybe: Ranges) -> tuple[ClassSet, ClassSet]:
    """A class escape and its negation (\\d and \\D): negating swaps and complements the sets."""
    return ClassSet(sure, maybe), ClassSet(complement(maybe), complement(sure))


# ECMA-262 \d is [0-9]; Python's \d is every Unicode decimal digit, the first non-ASCII one
# being U+0660, so anything from there on may be a digit.
_DIGIT_SURE = points(string.digits)
_DIGIT_MAYBE = normalize((*_DIGIT_SURE, (0x660, MAX_CODE_POINT)))
# ECMA-262 \w is [A-Za-z0-9_]; Python adds every Unicode alphanumeric (all above U+007F).
_WORD_SURE = points(string.ascii_letters + string.digits + "_")
_WORD_MAYBE = normalize((*_WORD_SURE, (0x80, MAX_CODE_POINT)))
# ECMA-262 whitespace and line terminators; Python's str.isspace() adds the information
# separators U+001C..U+001F and NEL U+0085 but lacks the byte order mark U+FEFF.
_SPACE_COMMON = [(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029)]
_SPACE_COMMON += [(0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)]
ECMA_SPACE = normalize([*_SPACE_COMMON, (0xFEFF, 0xFEFF)])
PYTHON_SPACE = normalize([*_SPACE_COMMON, (0x1C, 0x1F), (0x85, 0x85)])

_d, _D = _escape_pair(_DIGIT_SURE, _DIGIT_MAYBE)
_w, _W = _escape_pair(_WORD_SURE, _WORD_MAYBE)
_s, _S = _escape_pair(intersect(ECMA_SPACE, PYTHON_SPACE), normalize((*ECMA_SPACE, *PYTHON_SPACE)))
CLASS_ESCAPES: dict[str, ClassSet] = {"d": _d, "D": _D, "w": _w, "W": _W, "s": _s, "S": _S}

_LINE_TERMINATORS = points("\n\r\u2028\u2029")  # ECMA-262's `.` skips these; Python's only \n
DOT = Chars(intersect(complement(_LINE_TERMINATORS), BMP))
WIDE_DOT = Chars(intersect(complement(points("\n")), BMP))  # what either engine's `.` may match
ANY_STAR: Node = Repeat(Chars(UNIVERSE), 0, None)
