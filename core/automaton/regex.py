"""Regular-expression trees: the common language between the schema compiler and the automaton.

A schema compiles to a tree of these nodes rather than to a regex string, so no escaping or
re-parsing happens between the two layers. Nodes may be shared (the tree is a DAG): the NFA
builder compiles a shared node once per continuation, which keeps optional-property objects
linear in size.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..schema.json_values import UNESCAPED_RANGES


@dataclass(frozen=True, eq=False)
class Lit:
    """A literal byte string (already UTF-8 encoded)."""

    data: bytes


@dataclass(frozen=True, eq=False)
class Chars:
    """One Unicode code point from a set of inclusive ranges (surrogates are never produced)."""

    ranges: tuple[tuple[int, int], ...]


@dataclass(frozen=True, eq=False)
class Seq:
    parts: tuple[Node, ...]


@dataclass(frozen=True, eq=False)
class Alt:
    options: tuple[Node, ...]


@dataclass(frozen=True)
class TextLabel:
    """Marks the body of a plain JSON string value (no format, pattern, enum or const): the
    JSON pointer of its schema, and the schema's `x-grounded` annotation (None: unset). The
    automaton ignores it; grounding (core.grounding) reads it to know which strings may be
    held to spans of the document."""

    pointer: str
    grounded: bool | None = None


@dataclass(frozen=True, eq=False)
class Repeat:
    """`item` repeated between `low` and `high` times; `high=None` means unbounded. `label`
    marks a plain string value's body (see TextLabel)."""

    item: Node
    low: int
    high: int | None
    label: TextLabel | None = None


@dataclass(frozen=True, eq=False)
class Machine:
    """The characters of a JSON string body, as an explicit automaton over code points.

    `edges[state]` holds (low, high, target) code point ranges; the byte layer writes each
    character the way JSON requires (escapes for quote, backslash and control characters).
    Built by `charnfa` when constraints must be intersected."""

    edges: tuple[tuple[tuple[int, int, int], ...], ...]
    start: int
    accepts: frozenset[int]


Node = Lit | Chars | Seq | Alt | Repeat | Machine

EMPTY: Node = Seq(())

# Every character a JSON string holds without an escape: all but controls, quote, backslash.
TEXT_CHARACTER = Chars(UNESCAPED_RANGES)


def is_text_character(node: Node) -> bool:
    """A JSON string character: TEXT_CHARACTER, or else escapes that begin with a backslash.
    Then every text character takes it in exactly one way, to the same place."""
    if not isinstance(node, Alt) or not node.options or node.options[0] is not TEXT_CHARACTER:
        return False
    return all(_starts_with_backslash(option) for option in node.options[1:])


def _starts_with_backslash(node: Node) -> bool:
    if isinstance(node, Lit):
        return node.data[:1] == b"\\"
    if isinstance(node, Seq):
        return bool(node.parts) and _starts_with_backslash(node.parts[0])
    return False


def lit(text: str) -> Lit:
    return Lit(text.encode("utf-8"))


def seq(*parts: Node) -> Node:
    flat: list[Node] = []
    for part in parts:
        if isinstance(part, Seq):
            flat.extend(part.parts)
        else:
            flat.append(part)
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def alt(*options: Node) -> Node:
    return options[0] if len(options) == 1 else Alt(tuple(options))


def optional(item: Node) -> Node:
    return Repeat(item, 0, 1)


def chars(*ranges: tuple[int, int]) -> Chars:
    return Chars(tuple(ranges))


def char_set(text: str) -> Chars:
    """A set of single characters, e.g. char_set("+-")."""
    return Chars(tuple((ord(c), ord(c)) for c in text))


def length_range(node: Node) -> tuple[int, int | None]:
    """(fewest, most) characters `node` matches; most is None when unbounded. Machines are
    not measured (0, None)."""
    if isinstance(node, Lit):
        count = len(node.data.decode("utf-8"))
        return count, count
    if isinstance(node, Chars):
        return 1, 1
    if isinstance(node, Seq):
        parts = [length_range(part) for part in node.parts]
        highs = [high for _, high in parts]
        return sum(low for low, _ in parts), None if None in highs else sum(h for h in highs if h is not None)
    if isinstance(node, Alt):
        options = [length_range(option) for option in node.options]
        highs = [high for _, high in options]
        return min((low for low, _ in options), default=0), None if None in highs else max(
            (h for h in highs if h is not None), default=0
        )
    if isinstance(node, Repeat):
        low, high = length_range(node.item)
        return low * node.low, None if high is None or node.high is None else high * node.high
    return 0, None
