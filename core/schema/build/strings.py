"""Strings as regex trees: lengths, patterns, patterns that must not match, a format and
excluded values intersected into one automaton over code points (a product of machines),
written as a JSON string.

Formats are generated from conservative subsets (lexical/formats.py); where a subset, not the schema,
leaves no string, the error names that departure.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from dataclasses import replace
from typing import Any

from ...automaton.charnfa import AutomatonTooLarge, bounded_lengths, built_states, intersect, is_empty, machine_from_tree
from ...automaton.excluded_words import excluding_machine
from ...automaton.measure import counted_cells, shortest_generated
from ...automaton.regex import Counted, Machine, Node, Seq, TextLabel, ValueLabel, length_range, mark, seq
from ...errors import SchemaError, UnsupportedSchema
from ...jsontext import join_pointer
from ..lexical.format_machines import format_machine
from ..lexical.formats import COMPACT_FORMATS, ESCAPED_FORMATS, FORMATS, SUBSETS
from ..lexical.pattern import UnsupportedPattern, pattern_tree, pattern_unmatched
from ..lexical.scalars import QUOTE, string_node
from ..nodes.schema_node import SchemaNode, StringNode
from ..refusals import departure
from ..work_limits import MAX_FLOOR_TEXT
from .protocol import Build


class _Refused(Exception):
    """A keyword of the string was refused (lenient: build again without it)."""

    def __init__(self, string: StringNode) -> None:
        super().__init__()
        self.string = string


# The fields of a StringNode without each keyword (for lenient compilation).
_WITHOUT: dict[str, dict[str, Any]] = {
    "pattern": {"patterns": (), "unmatched": ()},
    "format": {"format": None},
    "minLength": {"min_length": 0},
    "maxLength": {"max_length": None},
}


def string_tree(build: Build, node: SchemaNode) -> Node:
    """The strings `node` allows (its string keywords and excluded values)."""
    string = node.string or StringNode(node.pointer, frozenset())
    excluded = [value for value in node.excluded if isinstance(value, str)]
    return strings(build, string, excluded, TextLabel(node.pointer, node.grounded))


def strings(build: Build, string: StringNode, excluded: list[str], label: TextLabel | None = None) -> Node:
    """A JSON string meeting `string`'s keywords and none of `excluded`; `label` marks a plain
    string value's body for grounding (property names get none). Memoised by those contents
    (a pattern or format written in many places costs one automaton)."""
    # Only a plain string's or a held format's tree holds its label.
    plain = not (string.patterns or string.unmatched or string.format or excluded)
    patterns = tuple(pattern.source for pattern in string.patterns)
    unmatched = tuple(pattern.source for pattern in string.unmatched)
    labelled = plain or string.format in HELD_FORMATS
    key: Hashable = (
        string.min_length,
        string.max_length,
        patterns,
        unmatched,
        string.format,
        tuple(excluded),
        label if labelled else None,
    )
    found = build.strings.get(key)
    if found is None:
        refusals = len(build.document.refusals.found)
        found = _strings(build, string, excluded, label)
        if len(build.document.refusals.found) == refusals:  # so each place lists its own refusals
            build.strings[key] = found
    if label is None or string.format in HELD_FORMATS or not (string.patterns or string.unmatched or string.format):
        return found
    marked_key = ("marked", key, label)  # one node per place, as for a plain string
    marked = build.strings.get(marked_key)
    if marked is None:
        marked = build.strings[marked_key] = _marked(found, label)
    return marked


def _marked(tree: Node, label: TextLabel) -> Node:
    """`tree` (a string with a pattern, or a format not held as a date or a term) with its body's
    start marked for grounding (kind "pattern": held to the document's spans it accepts,
    core.grounding.pattern_spans). The tree itself is shared by every place writing the same
    keywords (its automaton is built once); only the mark is this place's. A tree that is no
    quoted body (the keyword refused, leaving a plain string) is grounded as one already."""
    if isinstance(tree, Seq) and len(tree.parts) > 2 and tree.parts[0] is QUOTE:
        return Seq((QUOTE, mark(ValueLabel(label.pointer, "pattern", label.grounded)), *tree.parts[1:]))
    return tree


def _strings(build: Build, string: StringNode, excluded: list[str], label: TextLabel | None) -> Node:
    while True:
        try:
            tree = _string_node(build, string, excluded, label)
            _check_floor(build, string, tree)
            return tree
        except _Refused as refused:
            string = refused.string


def _refuse(build: Build, string: StringNode, keyword: str, reason: str, pointer: str | None = None, **without: Any) -> None:
    """Refuse `keyword`; when lenient, raise _Refused to build again without it."""
    build.refuse(keyword, pointer or join_pointer(string.pointer, keyword), reason)
    raise _Refused(replace(string, **without))


def _check_floor(build: Build, string: StringNode, tree: Node) -> None:
    problem = build.floor.problem(tree)
    if problem is not None:  # minLength alone is caught before anything is built
        keyword = "pattern" if string.patterns else "format" if string.format is not None else "minLength"
        _refuse(build, string, keyword, f"{problem}; the string is too long to generate", **_WITHOUT[keyword])


def _string_node(build: Build, string: StringNode, excluded: list[str], label: TextLabel | None) -> Node:
    low, high = string.min_length, string.max_length
    if high is not None and low > high:
        raise SchemaError(f"minLength exceeds maxLength at {string.pointer or '/'}")
    if low > MAX_FLOOR_TEXT:
        reason = f"minLength {low} is above the limit of {MAX_FLOOR_TEXT} characters a string may be required to have"
        _refuse(build, string, "minLength", reason, min_length=0)
    bodies = [_pattern_body(build, string, index) for index in range(len(string.patterns))]
    bodies += [_unmatched_body(build, string, index) for index in range(len(string.unmatched))]
    format_body = _format_body(build, string)
    if format_body is not None:
        bodies.append(format_body)
    if excluded:
        bodies.append(excluding_machine(excluded))
    if not bodies:
        return string_node(low, high, label)
    opening = _opening(string, label)
    if _lengths_implied(bodies, low, high):
        if len(bodies) == 1 and format_body is not None:
            return seq(opening, format_body, QUOTE)  # formats are ASCII without quotes or backslashes
        low, high = 0, None
    others = [body for body in bodies if body is not format_body]
    if format_body is not None and not isinstance(format_body, Machine):
        bodies[bodies.index(format_body)] = _format_machine(string.format, format_body)
    try:
        return seq(opening, _string_machine(build, string, bodies, low, high), QUOTE)
    except UnsupportedSchema:
        raise
    except SchemaError:
        _refuse_format_subset(build, string, others, low, high)
        raise


DATE_FORMATS = ("date", "date-time")
# Formats grounding holds to one of the document's terms (core.grounding.document_values):
# values a document writes as they are. Not `time`, `duration`, `regex` or the JSON pointers
# (written otherwise in prose: held, as a pattern is, to the spans of the document their
# automaton accepts, where it writes any).
_ASCII_TERMS = ("email", "hostname", "ipv4", "ipv6", "uri", "uri-reference", "uuid")
TERM_FORMATS = (*_ASCII_TERMS, "idn-email", "idn-hostname", "iri", "iri-reference")
HELD_FORMATS = DATE_FORMATS + TERM_FORMATS


def _opening(string: StringNode, label: TextLabel | None) -> Node:
    """The opening quote, marked (after it) where a date or a term value begins, for grounding."""
    if label is None or string.format not in HELD_FORMATS:
        return QUOTE
    kind = string.format if string.format in DATE_FORMATS else "term"
    return seq(QUOTE, mark(ValueLabel(label.pointer, kind, label.grounded)))


def _pattern_body(build: Build, string: StringNode, index: int) -> Node:
    pattern = string.patterns[index]
    try:
        return pattern_tree(pattern.source)
    except UnsupportedPattern as error:
        kept = tuple(p for p in string.patterns if p is not pattern)
        _refuse(build, string, "pattern", str(error), pattern.pointer, patterns=kept)
        raise AssertionError("unreachable") from None  # _refuse raises


def _unmatched_body(build: Build, string: StringNode, index: int) -> Machine:
    """The strings a pattern the string must not match finds nothing in (see
    lexical/pattern.py's pattern_unmatched: characters from the Basic Multilingual Plane)."""
    pattern = string.unmatched[index]
    try:
        machine = pattern_unmatched(pattern.source)
    except (UnsupportedPattern, AutomatonTooLarge) as error:
        reason = str(error) if isinstance(error, UnsupportedPattern) else f"the strings it does not match need {error}"
        kept = tuple(p for p in string.unmatched if p is not pattern)
        _refuse(build, string, "pattern", reason, pattern.pointer, unmatched=kept)
        raise AssertionError("unreachable") from None  # _refuse raises
    # Each complement may take seconds: counted, so that a schema of many is refused in bounded time.
    build.fuel.burn(pattern.pointer, "state", len(machine.edges))
    return machine


def _format_body(build: Build, string: StringNode) -> Node | None:
    """The format's tree; None without a format (or one JSON Schema does not define)."""
    name = string.format
    if name is None:
        return None
    if name not in FORMATS:
        _refuse(build, string, "format", f"format {name!r} is not supported", format=None)
    if name in ESCAPED_FORMATS:
        return _escaped_format(name)
    body = FORMATS[name]()
    high = string.max_length
    longest = length_range(body)[1]
    if name in COMPACT_FORMATS and high is not None and (longest is None or longest > high):
        compact = COMPACT_FORMATS[name]()
        body = compact if (length_range(compact)[1] or 0) <= high else body
    return body


def _escaped_format(name: str) -> Machine:
    """A format whose text holds characters JSON escapes, as a machine (written with escapes)."""
    return format_machine(name)


def _format_machine(name: str | None, body: Node) -> Machine:
    """A format's body as a machine: the format's own tree's as stored or kept
    (lexical/format_machines.py), a compact variant's (COMPACT_FORMATS) built and kept."""
    if name is not None and body is FORMATS[name]():
        return format_machine(name)
    return _variant_machine(body)


@functools.lru_cache(maxsize=64)
def _variant_machine(body: Node) -> Machine:
    """A format variant's tree (one object for the whole process) as a machine, kept. Only
    formats' trees come here: they are few, a pattern's are not."""
    return machine_from_tree(body)


def _string_machine(build: Build, string: StringNode, bodies: list[Node], low: int, high: int | None) -> Machine | Counted:
    """The characters every body and the length bounds allow at once (a product automaton,
    the length bound in it or counted as read: charnfa.bounded_lengths)."""
    try:
        body = _intersection(bodies, low, high)
        # A counted bound's table (built to measure the string) is paid for here: a state of
        # work per 64 of its cells, so that a schema's tables stay within megabytes (a
        # product's states were each paid for).
        if isinstance(body, Machine):
            build.fuel.burn(string.pointer, "state", built_states(body))
        else:
            states = len(body.machine.edges)
            build.fuel.burn(string.pointer, "state", states + counted_cells(body.low, body.high, states) // 64)
    except AutomatonTooLarge as error:
        keyword = "pattern" if string.patterns else "format" if string.format is not None else "maxLength"
        _refuse(build, string, keyword, f"with these length bounds it needs {error}", **_WITHOUT[keyword])
        raise AssertionError("unreachable") from None  # _refuse raises
    if _matches_nothing(body):
        raise SchemaError(f"no string satisfies pattern, format and length together at {string.pointer or '/'}")
    return body


def _intersection(bodies: list[Node], low: int, high: int | None) -> Machine | Counted:
    """Raises AutomatonTooLarge past the machine's state limit."""
    machines = [body if isinstance(body, Machine) else machine_from_tree(body) for body in bodies]
    machine = machines[0]
    for other in machines[1:]:
        machine = intersect(machine, other)
    if low > 0 or high is not None:
        return bounded_lengths(machine, low, high)
    return machine


def _matches_nothing(body: Machine | Counted) -> bool:
    return is_empty(body) if isinstance(body, Machine) else shortest_generated(body) is None


def _refuse_format_subset(build: Build, string: StringNode, others: list[Node], low: int, high: int | None) -> None:
    """When a format's generated subset, not the schema, leaves no string (the other
    keywords alone allow some), say so, naming that subset."""
    name = string.format
    if name not in SUBSETS:
        return
    try:
        if others and _matches_nothing(_intersection(others, low, high)):
            return  # unsatisfiable without the format too
    except AutomatonTooLarge:
        return
    shortest = length_range(FORMATS[name]())[0]
    maximum = string.max_length
    if maximum is not None and maximum < shortest:
        why = f"its shortest string has {shortest} characters, more than maxLength {maximum}"
    else:
        why = "none of its strings " + ("matches the pattern" if string.patterns else "meets the other keywords")
    raise departure(
        "format",
        join_pointer(string.pointer, "format"),
        f"format {name!r} is generated from a subset ({SUBSETS[name]}), and {why}",
    )


def _lengths_implied(bodies: list[Node], low: int, high: int | None) -> bool:
    """Whether every string the bodies allow together already has a length in [low, high]."""
    ranges = [length_range(body) for body in bodies]
    fewest = max(r[0] for r in ranges)
    most = min((r[1] for r in ranges if r[1] is not None), default=None)
    return fewest >= low and (high is None or (most is not None and most <= high))
