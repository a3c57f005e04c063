"""Labeled values: what a document states under a label that names a schema property.

Documents of records, headers and forms state their values after a label on a line of their
own (`Requires-Python: >=3.9`, `Version: 26.1.0`, `Invoice number: 1042`). Where a grounded
plain string's property is named like such a label, its value is that line's value: the span
filter (core.grounding.follower) holds the string to the labeled values, from their first
character to the end of their line at most, rather than to any span of the document. The
model still chooses among the labeled values and where to close inside one. A property no
label names, or whose labeled values the schema cannot take, is grounded as before.

A label and a property name match when they are equal with case, and every character other
than a letter or a digit, ignored (`Requires-Python` names `requires_python`), each composed
first (NFC: an accent typed as a combining mark is part of its letter). A label is at
most `_LONGEST_LABEL` characters at the start of a line (after indentation, a list mark or a
quote mark, and emphasis marks), then a colon and at least one space or tab; its value is the
rest of the line, without the whitespace at either end, at most `_LONGEST_VALUE` characters;
a label stating more than `_MOST_VALUES_PER_LABEL` values is not read. Markdown emphasis around a label
(`**Version:** 2.0`) is read as part of it.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence

from ..jsontext import unescape_pointer_part

_LONGEST_LABEL = 48
# At most this many labeled lines are read from one document: a bound on the work for a
# document of millions of short lines that each look like one.
_MOST_LABELED_LINES = 20_000
# A label stating more values than this is no record's field but a log's or a table's column:
# it is not read (each of its values would be walked through the schema's automaton).
_MOST_VALUES_PER_LABEL = 256
# A longer line is text, not a value: its label is not read (and the span filter walks no
# more than this of a labeled value through the schema's automaton).
_LONGEST_VALUE = 1000
# What ends a line (as core.grounding.tables lays them out); a line starts only after `\n`.
_BREAKS = "\\n\\r\\v\\f\\x1c-\\x1e\\x85\\u2028\\u2029"
# The value is the line's rest from its first character that is no space (the lookahead: so a
# line whose value does not match is given up in one pass, never by retrying each split of the
# spaces before it), to its last; a `\r` before the line's end is a Windows line end.
_LABELED_LINE = re.compile(
    rf"^[ \t]*(?:[-*+>#][ \t]+)*[*_]{{0,2}}(?P<label>[^\W\d_][^:{_BREAKS}]{{0,{_LONGEST_LABEL - 1}}}?)"
    rf"[*_]{{0,2}}[ \t]*:[*_]{{0,2}}[ \t]+(?![ \t])[*_]{{0,2}}"
    rf"(?P<value>[^{_BREAKS}]*[^\s*_][*_]*|[^\s*_])[ \t]*(?=[{_BREAKS}]|\Z)",
    re.MULTILINE,
)
_NOT_NAME = re.compile(r"[\W_]+")


def normalized_name(name: str) -> str:
    """`name` composed (NFC), case-folded, without the characters that are neither letters nor
    digits. Composed first: macOS and some editors write `é` as `e` and a combining accent,
    which is no letter, so `Référence` so written would otherwise lose its accents and name
    no property `référence`; and again after folding, which decomposes a few letters (`ΐ`)."""
    return _NOT_NAME.sub("", unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold()))


def property_name(pointer: str) -> str | None:
    """The name of the innermost object property a JSON pointer into a schema passes through
    (`/properties/authors/items/properties/name` -> `name`), or None where it passes through
    none (the root, or only array items and subschemas)."""
    parts = [unescape_pointer_part(part) for part in pointer.split("/")[1:]]
    name: str | None = None
    index = 0
    while index < len(parts):
        keyword = parts[index]
        if keyword == "properties" and index + 1 < len(parts):
            name = parts[index + 1]
        elif keyword in _KEYWORDS_OF_UNNAMED_MEMBERS:
            name = None  # a member whose name the schema does not give
        # A keyword followed by a name or an index takes two parts; one holding a schema, one.
        index += 2 if keyword in _KEYWORDS_WITH_KEYS or (index + 1 < len(parts) and parts[index + 1].isdigit()) else 1
    return name


_KEYWORDS_OF_UNNAMED_MEMBERS = frozenset({"additionalProperties", "patternProperties", "unevaluatedProperties", "propertyNames"})
_KEYWORDS_WITH_KEYS = frozenset(
    {
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
        "dependencies",
        "anyOf",
        "oneOf",
        "allOf",
        "prefixItems",
    }
)


def on_lines(spans: Sequence[tuple[int, int]], lines: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Of `spans`, those inside one of `lines` (spans ascending and apart, as the values under a
    label are): a search per span, not a pass over the lines."""
    starts = [start for start, _ in lines]
    found = []
    for span in spans:
        line = bisect.bisect_right(starts, span[0]) - 1
        if line >= 0 and span[1] <= lines[line][1]:
            found.append(span)
    return found


def labeled_values(document: str) -> dict[str, list[tuple[int, int]]]:
    """Per normalized label: the character spans of the values stated under it, in order."""
    found: dict[str, list[tuple[int, int]]] = {}
    for count, match in enumerate(_LABELED_LINE.finditer(document)):
        if count >= _MOST_LABELED_LINES:
            break
        label = normalized_name(match.group("label"))
        start, end = match.span("value")
        if label and end - start <= _LONGEST_VALUE:
            found.setdefault(label, []).append((start, end))
    return {label: spans for label, spans in found.items() if len(spans) <= _MOST_VALUES_PER_LABEL}
